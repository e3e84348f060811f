"""ECN# (seed 003): the reproductions' quick versions. The mechanisms
(TCN, ECN#, CoDel, DWRR) have their unit and dynamics tests in Rust."""

from __future__ import annotations

from conftest import reproduce_quick


def test_ecnsharp_dwrr_shares_the_bottleneck_2_1_1_and_beats_tcn_on_short_flows(tmp_path):
    rows = reproduce_quick("ecnsharp-dwrr", tmp_path)
    # The acceptance: DWRR goodput shares within 5 % of 2:1:1 (and
    # 2:1 with two classes); the paper's goodputs within 5 %; ECN#'s short
    # flows faster than TCN's.
    shares = [r for r in rows if r["metric"] == "share"]
    assert len(shares) == 4 and all(r["holds"] == "True" for r in shares), shares
    assert all(r["holds"] == "True" for r in rows), [r for r in rows if r["holds"] != "True"]
