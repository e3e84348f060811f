"""NDP (issue 29): through the Python API, and its reproductions' quick
versions (docs/models/ndp.md, docs/reproduce.md)."""

from __future__ import annotations

import pytest

import dcsim
from conftest import reproduce_quick


def incast(senders: int, ndp: dict, **switch) -> dict:
    """`senders` hosts of a k = 4 fat-tree send 90 KB each to host 0."""
    return {
        "run": {"duration": "50ms", "stop_when_done": True},
        "topology": {"type": "fattree", "k": 4, "link_rate": "10Gbps", "host_delay": "1us", "edge_agg_delay": "1us",
                     "agg_core_delay": "1us"},
        "link": {"mtu": 9046},
        "switch": {"routing": "path", "buffer": "200000B",
                   "scheduler": {"type": "strict_priority", "classes": 2, "full": "trim", "class_buffer": "6pkt"}} | switch,
        "ndp": ndp,
        "workload": [{"type": "bulk", "src": f"{16 - senders}..16", "dst": 0, "size": "90000B"}],
    }


def test_ndp_is_repeatable_and_its_parameters_are_in_the_resolved_scenario():
    a, b = dcsim.run(incast(15, {})), dcsim.run(incast(15, {}))
    assert a.flows["fct"].to_pylist() == b.flows["fct"].to_pylist(), "same scenario and seed, same result"
    assert a.scenario["ndp"]["iw"] == 23 and a.scenario["ndp"]["bounce"] is True, "defaults are in the output's metadata"
    assert sum(a.ports["trims"].to_pylist()) > 0, "15 first windows of 23 overflow 6-packet queues"
    assert sum(a.flows["timeouts"].to_pylist()) == 0


def test_an_incast_is_paced_at_the_receivers_line_rate():
    # 15 x 10 frames of 9,064 B on the receiver's 10 Gb/s link take 108.8 µs
    # at least; the pulls keep it busy to within 5 % of that (after the
    # first frame's ~44 µs through the fabric).
    r = dcsim.run(incast(15, {}))
    last = max(r.flows["end"].to_pylist())
    floor = 150 * 9064 * 8 / 10e9
    assert floor < last < 1.05 * floor + 50e-6, last


def test_without_trimming_switches_ndp_still_completes_on_its_timer():
    # Drop-tail switches (one FIFO of 6 frames): no header, no NACK; the
    # backstop timer resends what was lost.
    s = incast(15, {"rto": "200us"})
    s["switch"] = {"buffer": "6pkt"}
    r = dcsim.run(s)
    assert all(e == e for e in r.flows["end"].to_pylist()), "every flow completes"
    assert sum(r.flows["timeouts"].to_pylist()) > 0
    assert "trims" not in r.ports.column_names, "no trimming port, no trims column"


@pytest.mark.parametrize(("ndp", "path"), [({"iw": 0}, r"ndp\.iw"), ({"pull_rate": 0}, r"ndp\.pull_rate"),
                                           ({"payload": "9001B"}, r"ndp\.payload"), ({"paths": 0}, r"ndp\.paths")])
def test_bad_ndp_settings_are_named(ndp, path):
    with pytest.raises(dcsim.ScenarioError, match=path):
        dcsim.run(incast(2, ndp))


def test_ndp_refuses_tcp_only_workloads_with_the_key():
    s = incast(2, {})
    s["workload"] = [{"type": "incast", "querier": 0, "responders": [1, 2], "response_size": "10KB", "rounds": 1}]
    with pytest.raises(dcsim.ScenarioError, match=r"workload\[0\]\.type"):
        dcsim.run(s)


def test_ndp_incast_quick(tmp_path):
    rows = reproduce_quick("ndp-incast", tmp_path)
    ndp = [r for r in rows if r["metric"] != "claim"]
    assert ndp and all(r["verdict"] == "holds" for r in ndp), [r for r in ndp if r["verdict"] != "holds"]


def test_ndp_permutation_quick(tmp_path):
    rows = reproduce_quick("ndp-permutation", tmp_path)
    # The mean flow's share misses ">95 %" on the 432-host fat-tree, as in
    # htsim's own NDP (0.919 of the payload rate on the same fabric and
    # settings; docs/validation-receiver.md): it must stay near that.
    mean = next(r for r in rows if r["metric"] == "mean_throughput")
    assert 0.90 <= float(mean["dcsim"]) <= 0.94, mean
    rest = [r for r in rows if r is not mean]
    assert len(rest) == 3 and all(r["verdict"] == "holds" for r in rest), rest
