"""ECN# (seed 003): the reproductions' quick versions. The mechanisms
(TCN, ECN#, CoDel, DWRR) have their unit and dynamics tests in Rust."""

from __future__ import annotations

import json

from conftest import reproduce_quick


def test_ecnsharp_dwrr_shares_the_bottleneck_2_1_1_and_beats_tcn_on_short_flows(tmp_path):
    rows = reproduce_quick("ecnsharp-dwrr", tmp_path)
    # The acceptance: DWRR goodput shares within 5 % of 2:1:1 (and
    # 2:1 with two classes); the paper's goodputs within 5 %; ECN#'s short
    # flows faster than TCN's.
    shares = [r for r in rows if r["metric"] == "share"]
    assert len(shares) == 4 and all(r["holds"] == "True" for r in shares), shares
    assert all(r["holds"] == "True" for r in rows), [r for r in rows if r["holds"] != "True"]


def test_ecnsharp_queue_burst_that_fits_ecn_sharp_absorbs_without_drops_and_codel_fills_the_buffer(tmp_path):
    # The quick version: 40 senders, whose first windows (about 380 packets)
    # fit the 600-packet buffer. ECN# drops nothing, CoDel (150 us
    # interval) reaches the buffer, and outside the bursts ECN# keeps a
    # shorter queue than DCTCP-RED-Tail.
    rows = reproduce_quick("ecnsharp-queue", tmp_path)
    burst = [r for r in rows if r["metric"] in ("claim", "drops", "burst_peak_pkts")]
    assert len(burst) == 5 and all(r["holds"] == "True" for r in burst), burst


def test_ecnsharp_senders_incast_flows_slow_down_as_senders_grow(tmp_path):
    reproduce_quick("ecnsharp-senders", tmp_path)
    rows = json.loads((tmp_path / "ecnsharp-senders" / "measurements.json").read_text())
    mean = {(r["scheme"], r["senders"]): r["value"] for r in rows if r["metric"] == "fct_mean_ms"}
    assert len(mean) == 6
    for scheme in ("ECN#", "CoDel", "DCTCP-RED-Tail"):
        assert mean[(scheme, 50)] > mean[(scheme, 25)], mean
    done = [r for r in rows if r["metric"] == "incast_flows_done"]
    total = {(r["scheme"], r["senders"]): r["value"] for r in rows if r["metric"] == "incast_flows"}
    assert all(r["value"] == total[(r["scheme"], r["senders"])] for r in done), "every incast flow completes"


def test_ecnsharp_tradeoff_a_higher_marking_threshold_lengthens_the_short_flow_tail(tmp_path):
    # Quick version: 50 and 250 KB on both settings. The tail grows with the
    # threshold (Fig. 2b); the throughput side is checked by the full run.
    rows = reproduce_quick("ecnsharp-tradeoff", tmp_path)
    tail = [r for r in rows if r["metric"] == "claim" and "99th" in r["note"]]
    assert len(tail) == 2 and all(r["holds"] == "True" for r in tail), tail


def test_ecnsharp_fabrics_persistent_marking_shortens_short_flows(tmp_path):
    # Quick versions: web search at load 0.8 on the 4x4x8 leaf-spine (ECN#
    # against DCTCP-RED) and on the k = 4 fat-tree (against TCN).
    for name in ("ecnsharp-leafspine", "ecnsharp-fattree"):
        rows = reproduce_quick(name, tmp_path)
        assert len(rows) == 1 and rows[0]["holds"] == "True", rows
