"""dcsim reproduce: the framework and its first full example, clues-rtt."""

from __future__ import annotations

import csv
import subprocess
import sys

from dcsim.reproduce import metric_formatter, metric_unit


def test_a_metric_names_its_unit():
    assert metric_unit("small_fct_mean_us") == "µs" and metric_unit("large_fct_p99_ms") == "ms"
    assert metric_unit("goodput_gbps") == "Gb/s" and metric_unit("min_rtt_ns") == "ns"
    # Ratios, fractions and counts have none, whatever they measure.
    assert metric_unit("small_fct_mean_ms_reduction") == metric_unit("all_fct_mean_vs_default") == ""
    assert metric_unit("timeouts") == metric_unit("jain") == metric_unit("rto_pairs_shorter_fraction") == ""
    assert metric_formatter("small_fct_mean_us")(141.7) == "141.7 µs"
    # The unit the magnitude calls for, not the one in the name.
    assert metric_formatter("switch_latency_p99_us")(2284.4) == "2.284 ms"
    assert metric_formatter("goodput_gbps")(0.6) == "600 Mb/s" and metric_formatter("buffer_pkts")(120) == "120 packets"
    assert metric_formatter("timeouts")(3) == "3" and metric_formatter("x_us")(None) == "–"
    assert metric_formatter("senders")([8, 16]) == "[8, 16]", "a parameter that is a list"


def test_list_and_quick_reproduction(tmp_path):
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "--list"], capture_output=True, text=True)
    assert p.returncode == 0 and "clues-rtt" in p.stdout and "Fig. 21" in p.stdout
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "clues-rtt", "--quick", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "clues-rtt"
    with (out / "comparison.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["experiment", "metric", "condition", "paper", "dcsim", "ratio", "tolerance", "holds", "note", "source"]
    assert all(r["source"] for r in rows), "every row names the paper's figure, table or text it comes from"
    # The quick version runs 10 Gb/s only: the single RTO case's two
    # completion times, two RTO intervals (1 ms clock, ARREAR) and three
    # claims; the double case's claim and the two on the saving per RTO.
    assert len(rows) == 10
    assert all(r["holds"] == "True" for r in rows), rows
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1
    assert "10 of 10" in page and "Quick version" in page and "Fig. 21" in page
    # Values carry a unit chosen by their magnitude: the 1 ms clock's RTO case.
    assert "1.251 ms" in page and "1.189 ms" in page
    assert "paper 1.251 ms, dcsim 1.189 ms" in p.stdout
    assert (out / "figures" / "clues-rtt.png").stat().st_size > 1000
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "nope"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown experiment 'nope'" in p.stderr
