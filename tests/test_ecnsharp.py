"""ECN# (seed 003): the reproductions' quick versions. The mechanisms
(TCN, ECN#, CoDel, DWRR) have their unit and dynamics tests in Rust."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import dcsim.experiments.ecnsharp as ecnsharp
from conftest import reproduce_quick
from dcsim.reproduce import quick_spec


def test_ecnsharp_dwrr_shares_the_bottleneck_2_1_1_and_beats_tcn_on_short_flows(tmp_path):
    rows = reproduce_quick("ecnsharp-dwrr", tmp_path)
    # The acceptance: DWRR goodput shares within 5 % of 2:1:1 (and
    # 2:1 with two classes); the paper's goodputs within 5 %; ECN#'s short
    # flows faster than TCN's.
    shares = [r for r in rows if r["metric"] == "share"]
    assert len(shares) == 4 and all(r["holds"] == "True" for r in shares), shares
    assert all(r["holds"] == "True" for r in rows), [r for r in rows if r["holds"] != "True"]


def test_ecnsharp_queue_ecn_sharp_keeps_a_shorter_queue_and_drops_less_than_codel(tmp_path):
    # The full scale (100 senders, 4.5 s), twenty seeds, with the seed's ns-3
    # fork's two segments per ACK (tcp.max_burst): ECN# drops fewer packets
    # than CoDel, keeps a shorter queue outside the bursts, CoDel reaches the
    # buffer, and ECN#'s last burst peaks near the seed's 318 packets, below
    # the buffer. (The other rows: docs/reproduce.md.)
    rows = reproduce_quick("ecnsharp-queue", tmp_path)
    held = [r for r in rows if r["metric"] in ("claim", "burst_peak_pkts", "last_burst_peak_pkts") and r["verdict"] == "holds"]
    assert {r["note"] for r in held} >= {
        "ECN# drops fewer packets than CoDel",
        "outside the bursts, ECN# keeps a shorter queue than DCTCP-RED-Tail",
        "in the burst, CoDel's queue reaches the 600-packet buffer",
    }, held
    ecn_peak = [r for r in held if r["metric"] == "last_burst_peak_pkts" and json.loads(r["condition"]) == {"scheme": "ECN#"}]
    assert len(ecn_peak) == 1 and float(ecn_peak[0]["dcsim_hi"]) < 600, ecn_peak


def test_ecnsharp_senders_incast_flows_slow_down_as_senders_grow(tmp_path):
    reproduce_quick("ecnsharp-senders", tmp_path)
    rows = json.loads((tmp_path / "ecnsharp-senders" / "measurements.json").read_text())
    mean = {(r["seed"], r["scheme"], r["senders"]): r["value"] for r in rows if r["metric"] == "fct_mean_ms"}
    assert len(mean) == 5 * 3 * 3  # seeds x schemes x sender counts
    for seed, scheme, senders in mean:
        if senders == 150:
            assert mean[(seed, scheme, 150)] > mean[(seed, scheme, 25)], mean
    done = [r for r in rows if r["metric"] == "incast_flows_done"]
    total = {(r["seed"], r["scheme"], r["senders"]): r["value"] for r in rows if r["metric"] == "incast_flows"}
    assert all(r["value"] == total[(r["seed"], r["scheme"], r["senders"])] for r in done), "every incast flow completes"


def test_ecnsharp_tradeoff_a_higher_marking_threshold_lengthens_the_short_flow_tail(tmp_path):
    # 50, 100 and 250 KB on both settings: the tail grows with the threshold
    # (Fig. 2b) on both.
    rows = reproduce_quick("ecnsharp-tradeoff", tmp_path)
    tail = [r for r in rows if r["metric"] == "claim" and "99th" in r["note"]]
    assert len(tail) == 2 and all(r["verdict"] == "holds" for r in tail), tail


def test_ecnsharp_fabrics_persistent_marking_shortens_short_flows(tmp_path):
    # Web search at load 0.8 on the 4x4x8 leaf-spine (ECN# against
    # DCTCP-RED) and on the k = 4 fat-tree (against TCN): the short flows'
    # mean FCT, over five seeds.
    for name, topology in (("ecnsharp-leafspine", "4x4x8"), ("ecnsharp-fattree", "k=4")):
        rows = [r for r in reproduce_quick(name, tmp_path) if r["metric"] == "claim" and "mean FCT is at most" in r["note"]
                and json.loads(r["condition"])["left"] | {"scheme": None} == {"topology": topology, "workload": "web search", "load": 0.8, "scheme": None}]
        assert len(rows) == 1 and rows[0]["verdict"] == "holds", rows


def test_a_quick_fabric_run_keeps_the_launch_period_its_load_is_given():
    # ecnsharp-leafspine's quick version: load 0.2 (few large flows) keeps
    # full mode's 200 ms, the other compared loads run 50 ms.
    folder = Path(ecnsharp.__file__).parent / "ecnsharp-leafspine"
    spec = quick_spec(tomllib.loads((folder / "experiment.toml").read_text(encoding="utf-8")))
    stops = {(c["load"], ov["workload[0].stop"]) for c, _, _, ov in ecnsharp._fabric_jobs(spec, folder)}
    assert {s for load, s in stops if load == 0.2} == {"200ms"}
    assert {s for load, s in stops if load != 0.2} == {"50ms"}
