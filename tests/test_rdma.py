"""RDMA (issue 28): PFC, the RoCE transport and its congestion controls
through the Python API, and their reproductions' quick versions."""

from __future__ import annotations

import json
import statistics

import pytest

import dcsim
from conftest import reproduce_quick


def incast(cc: dict, pfc: bool = True) -> dict:
    s = {
        "run": {"duration": "100ms"},
        "topology": {"type": "star", "hosts": 5, "link_rate": "40Gbps", "link_delay": "1us"},
        "switch": {"buffer": "500pkt", "aqm": {"type": "red", "min_th": "5KB", "max_th": "200KB", "max_p": 0.01, "weight": 1.0,
                                               "gentle": False, "spacing": "independent"}},
        "rdma": {"cc": cc},
        "workload": [{"type": "bulk", "src": "0..4", "dst": 4, "size": "2MB"}],
    }
    if pfc:
        s["switch"]["pfc"] = {"xoff": "400KB"}
    return s


@pytest.mark.parametrize("cc", ["none", "dcqcn", "timely", "hpcc", "dctcp"])
def test_every_scheme_completes_an_incast_losslessly_and_repeatably(cc):
    a, b = dcsim.run(incast({"type": cc})), dcsim.run(incast({"type": cc}))
    assert a.summary["packets_dropped"] == 0
    assert all(t is not None for t in a.flows["fct"].to_pylist())
    assert a.flows["fct"].to_pylist() == b.flows["fct"].to_pylist(), "same scenario and seed, same result"
    assert a.scenario["rdma"]["cc"]["type"] == cc, "the resolved scenario names the scheme and its parameters"


def test_the_pfc_table_and_the_deadlock_report_reach_python():
    r = dcsim.run(incast({"type": "none"}))
    assert r.pfc.num_rows > 0 and sum(r.pfc["pauses_sent"].to_pylist()) > 0
    assert r.summary["pfc_deadlock"] is None
    ring = {
        "run": {"duration": "100ms"},
        "topology": {"type": "ring", "switches": 4, "hosts_per_switch": 1, "link_rate": "10Gbps", "host_delay": "1us", "link_delay": "1us"},
        "switch": {"pfc": {"xoff": "20KB", "deadlock_after": "2ms"}},
        "rdma": {"cc": {"type": "none"}},
        # Four switches: two hops either way are equal-cost; three hops one way is one hop the other.
        "workload": [{"type": "bulk", "src": i, "dst": (i + 2) % 4, "size": "inf"} for i in range(4)],
    }
    r = dcsim.run(ring)
    assert r.summary["stopped_by"] in ("pfc deadlock", "duration")


@pytest.mark.parametrize("cc, message", [
    ({"type": "hpcc", "eta": 1.5}, r"rdma\.cc\.eta: 1\.5 is out of range"),
    ({"type": "timely", "max_cut": 0}, r"rdma\.cc\.max_cut: 0 is out of range: allowed \(0, 1\]"),
])
def test_bad_rdma_settings_are_named(cc, message):
    with pytest.raises(dcsim.ScenarioError, match=message):
        dcsim.run(incast(cc))


def test_pfc_spreading_quick(tmp_path):
    rows = reproduce_quick("pfc-spreading", tmp_path)
    assert all(r["verdict"] == "holds" for r in rows), rows


def test_pfc_deadlock_quick(tmp_path):
    rows = reproduce_quick("pfc-deadlock", tmp_path)
    assert all(r["verdict"] == "holds" for r in rows), rows


def test_dcqcn_fairness_quick(tmp_path):
    rows = reproduce_quick("dcqcn-fairness", tmp_path)
    pauses = [r for r in rows if r["metric"] == "claim"]
    assert pauses and all(r["verdict"] == "holds" for r in pauses), pauses


def test_dcqcn_incast_quick(tmp_path):
    # Every row measured; DCTCP's queue sits near its K = 160 KB (Fig. 19's
    # DCTCP row), and DCQCN keeps 2:1 to 8:1 incasts' link above 39 Gb/s.
    # The queue rows miss, as the paper's own fluid model says they would
    # (docs/reproduce.md): beside it, dcsim's packet model agrees with that
    # model where the model's queue cycles (16:1 and more: mean queue within
    # 15 %, link within 1 %; set after seeing a first run at 2 % and 0.5 %).
    rows = reproduce_quick("dcqcn-incast", tmp_path)
    assert len(rows) == 13 and all(r["dcsim"] not in ("", None) for r in rows), rows
    dctcp = next(r for r in rows if r["metric"] == "queue_p95_kb" and '"DCTCP"' in r["condition"])
    assert dctcp["verdict"] == "holds", dctcp
    for k in (2, 4, 8):
        link = next(r for r in rows if r["metric"] == "link_gbps" and f'"senders": {k}}}' in r["condition"])
        assert link["verdict"] == "holds", link
    measured = json.loads((tmp_path / "dcqcn-incast" / "measurements.json").read_text())
    mean = lambda scheme, k, metric: statistics.mean(  # noqa: E731
        r["value"] for r in measured if r["scheme"] == scheme and r["senders"] == k and r["metric"] == metric)
    for k in (16, 19, 20):
        assert abs(mean("DCQCN", k, "queue_mean_kb") / mean("fluid model", k, "queue_mean_kb") - 1) < 0.15
        assert abs(mean("DCQCN", k, "link_gbps") / mean("fluid model", k, "link_gbps") - 1) < 0.01


def test_hpcc_fct_quick(tmp_path):
    # Every row of HPCC's Fig. 11 and PINT's Fig. 7b at 64 hosts (two pods)
    # and 3 ms of arrivals: HPCC's own rows are the stable ones (its short flows within
    # the paper's tolerance, no PFC pause, far below DCQCN at 50 % load).
    rows = {(r["metric"], r["condition"]): r for r in reproduce_quick("hpcc-fct", tmp_path)}
    hpcc_short = [r for (m, c), r in rows.items() if m == "slowdown_p95" and '"HPCC"' in c and '"short"' in c]
    assert len(hpcc_short) == 2 and all(r["verdict"] == "holds" for r in hpcc_short), hpcc_short
    pause = next(r for (m, c), r in rows.items() if m == "paused_fraction" and '"HPCC"' in c)
    assert pause["verdict"] == "holds", pause
    half = next(r for r in rows.values() if r["note"].startswith("50 %: HPCC's short flows"))
    assert half["verdict"] == "holds", half
    # DCTCP on the RDMA NIC, at line rate from the first packet: the paper's short flows.
    dctcp_short = [r for (m, c), r in rows.items() if m == "slowdown_p95" and '"DCTCP"' in c and '"short"' in c]
    assert len(dctcp_short) == 2 and all(r["verdict"] == "holds" for r in dctcp_short), dctcp_short


def test_timely_incast_quick(tmp_path):
    # TIMELY keeps the RTT far below PFC alone's (Table 1's claims hold);
    # its throughput and fairness rows miss (docs/reproduce.md).
    # PFC alone carries the line rate whenever the flows start (the NICs'
    # 67 ms transport timeout: no go-back-N behind its queue).
    rows = reproduce_quick("timely-incast", tmp_path)
    rtt = [r for r in rows if r["metric"] == "claim" and "RTT" in r["note"]]
    assert len(rtt) == 2 and all(r["verdict"] == "holds" for r in rtt), rtt
    pfc = next(r for r in rows if r["metric"] == "throughput_gbps" and "PFC" in r["condition"])
    assert pfc["verdict"] == "holds" and int(pfc["seeds"]) == 20, pfc


@pytest.mark.parametrize("preset", ["rdma/dcqcn-paper", "rdma/dcqcn-nic"])
def test_the_dcqcn_presets_set_the_reaction_point_and_the_marking(preset):
    from dcsim import presets

    r = dcsim.run(incast({"type": "none"}), preset=preset)
    want = presets.overrides(preset)
    assert r.scenario["rdma"]["cc"]["type"] == "dcqcn"
    assert r.scenario["rdma"]["cc"]["fast_recovery"] == want["rdma.cc"]["fast_recovery"]
    assert r.scenario["switch"]["aqm"]["spacing"] == "independent"
    assert r.summary["packets_dropped"] == 0 and sum(r.flows["ecn_reductions"].to_pylist()) > 0, "the senders cut their rates"
