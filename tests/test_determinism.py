"""Same scenario and seed: the same Parquet bytes. Another seed: other results
where randomness plays a part (RED)."""

from __future__ import annotations

import dcsim

TABLES = ("flows", "queries", "queues", "ports", "tcp_trace", "captures")


def red(star):
    star["switch"]["aqm"] = {"type": "red", "min_th": "5pkt", "max_th": "15pkt", "max_p": 0.2, "weight": 0.2}
    star["tcp"] = {"cc": "newreno", "ecn": True, "min_rto": "1ms"}
    star["output"] = {"tcp_trace": True}
    return star


def test_same_seed_same_parquet_bytes(tmp_path, star):
    s = red(star)
    a = dcsim.run(s, seed=5, out=tmp_path / "a")
    b = dcsim.run(s, seed=5, out=tmp_path / "b")
    for t in TABLES:
        assert (tmp_path / "a" / f"{t}.parquet").read_bytes() == (tmp_path / "b" / f"{t}.parquet").read_bytes(), t
    assert (tmp_path / "a" / "scenario.json").read_bytes() == (tmp_path / "b" / "scenario.json").read_bytes()
    assert a.summary["events"] == b.summary["events"]


def test_another_seed_changes_random_outcomes(star):
    s = red(star)
    a = dcsim.run(s, seed=5)
    c = dcsim.run(s, seed=6)
    assert a.summary["scenario_hash"] != c.summary["scenario_hash"]
    assert not a.tcp_trace.equals(c.tcp_trace)
