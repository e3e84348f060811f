"""Analysis functions and `dcsim analyze`."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pyarrow as pa

import dcsim
from dcsim import analysis


def test_percentile_is_nearest_rank():
    v = list(range(1, 101))
    assert analysis.percentile(v, 50) == 50
    assert analysis.percentile(v, 99) == 99
    assert analysis.percentile(v, 99.9) == 100
    assert analysis.percentile([7.0], 99) == 7.0


def test_jain_index():
    assert analysis.jain([1, 1, 1, 1]) == 1.0
    assert abs(analysis.jain([1, 0, 0, 0]) - 0.25) < 1e-12


def test_fct_buckets_and_loss_cycles(star):
    star["workload"] = [{"type": "bulk", "src": [1, 2, 3], "dst": 0, "size": "50KB"},
                        {"type": "bulk", "src": [1, 2], "dst": 0, "size": "2MB", "start": "1ms"}]
    star["output"] = {"tcp_trace": True}
    r = dcsim.run(star)
    rows = {row["bucket"]: row for row in analysis.fct_by_size(r)}
    assert rows["(0,100KB]"]["flows"] == 3 and rows["(100KB,10MB]"]["flows"] == 2 and rows[">10MB"]["flows"] == 0
    assert rows["all"]["flows"] == 5
    assert rows["(0,100KB]"]["fct_p99"] >= rows["(0,100KB]"]["fct_p50"] > 0
    assert rows["(100KB,10MB]"]["slowdown_mean"] >= 1.0
    cycles = analysis.loss_cycles(r)
    assert all(c["mean_cycle"] > 0 for c in cycles)
    gp = analysis.goodput(r)
    assert len(gp) == 5 and 0 < analysis.jain([g["goodput_bps"] for g in gp]) <= 1
    # The same through methods on the result.
    assert r.fct_by_size() == analysis.fct_by_size(r)
    assert r.jain() == analysis.jain([g["goodput_bps"] for g in gp])
    assert r.loss_cycles() == cycles


def _printed_tables(text: str) -> dict[str, list[list[str]]]:
    """The tables `dcsim analyze` prints: title (up to its colon or
    parenthesis) -> rows of cells (split on runs of two or more spaces)."""
    tables: dict[str, list[list[str]]] = {}
    for block in text.strip().split("\n\n"):
        title, *lines = block.splitlines()
        if lines:
            tables[re.split(r"[:(]", title)[0].strip()] = [re.split(r" {2,}", line.strip()) for line in lines]
    return tables


def test_analyze_cli(tmp_path, star):
    dcsim.run(star, out=tmp_path / "out")
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "analyze", str(tmp_path / "out"), "--json", "--deadline", "0.001"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["queries"]["rounds"] == 5 and "missed_deadline" in report["queries"]
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "analyze", str(tmp_path / "out")], capture_output=True, text=True)
    assert p.returncode == 0 and "FCT and slowdown" in p.stdout
    tables = _printed_tables(p.stdout)
    fct = tables["FCT and slowdown by flow size"]
    assert fct[0][:5] == ["flow size", "flows", "FCT mean", "FCT p50", "FCT p99"]
    small = next(r for r in fct if r[0] == "(0,100KB]")
    # Times carry their unit; slowdowns are plain ratios.
    assert all(re.fullmatch(r"[\d.,]+ (µs|ms)", t) for t in small[2:6]), small
    assert all(re.fullmatch(r"\d[\d.,]*", t) for t in small[6:]), small
    queries = tables["Query"]
    assert re.fullmatch(r"[\d.,]+ (µs|ms)", queries[1][1]) and queries[1][0] == "5"
    ports = tables["Switch ports"]
    assert ports[1][0] == "switch → host0", "the busiest port, named by its endpoints"
    assert ports[1][1] == "10 Gb/s" and re.fullmatch(r"[\d.]+ %", ports[1][2]) and re.fullmatch(r"[\d.,]+ (B|KB|MB)", ports[1][3])
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "analyze", str(tmp_path / "nothing")], capture_output=True, text=True)
    assert p.returncode == 2 and "not a dcsim results directory" in p.stderr
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "analyze", str(tmp_path / "out"), "--bucket", "12"], capture_output=True, text=True)
    assert p.returncode == 2 and "LO:HI" in p.stderr


def test_slowdown_by_size_bins_are_log_spaced_and_never_split_one_size():
    # 12 flows of 1 KB, 25 of 30 KB, 12 of 5 MB: the 30 KB flows fill
    # more than one bin's minimum but stay together.
    sizes = [1000] * 12 + [30_000] * 25 + [5_000_000] * 12
    flows = pa.table({"bytes": sizes, "fct": [s * 1e-9 for s in sizes], "slowdown": [1.0 + i % 3 for i in range(len(sizes))],
                      "kind": ["x"] * len(sizes)})
    bins = analysis.slowdown_by_size(flows, min_flows=10)
    assert [(b["size_lo"], b["size_hi"], b["flows"]) for b in bins] == [(1000, 1000, 12), (30_000, 30_000, 25), (5_000_000, 5_000_000, 12)]
    assert all(b["slowdown_p50"] <= b["slowdown_p99"] for b in bins)
