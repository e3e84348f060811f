"""CLUES (seed 004): the VOQ switch's reproductions, quick versions. The
switch model has its unit and integration tests in Rust (voq.rs, tests/voq.rs)."""

from __future__ import annotations

from conftest import reproduce_quick


def test_clues_occupancy_incast_queues_build_in_the_voqs_and_drain_at_100g(tmp_path):
    rows = reproduce_quick("clues-occupancy", tmp_path)
    # The quick version: 10 and 100 Gb/s with two responders, 1 and 16
    # responders at 10 Gb/s. Every claim it covers holds (the 16-against-2
    # completion claim is not part of it).
    assert len(rows) >= 5 and all(r["holds"] == "True" for r in rows), [r for r in rows if r["holds"] != "True"]


def test_clues_loss_recovery_one_cell_short_costs_an_rto_and_179_cells_recover_by_sack(tmp_path):
    rows = reproduce_quick("clues-loss-recovery", tmp_path)
    # The thesis' three cases exactly: 0 losses; 1 loss and 1 RTO; 7 losses and no RTO.
    assert len(rows) == 7 and all(r["holds"] == "True" for r in rows), [r for r in rows if r["holds"] != "True"]


def test_clues_nagle_holds_back_the_last_small_segment_for_a_round_trip(tmp_path):
    rows = reproduce_quick("clues-nagle", tmp_path)
    assert len(rows) == 2 and all(r["holds"] == "True" for r in rows), rows
