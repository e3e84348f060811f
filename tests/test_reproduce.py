"""dcsim reproduce: the framework and its first full example, clues-rtt."""

from __future__ import annotations

import csv
import subprocess
import sys


def test_list_and_quick_reproduction(tmp_path):
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "--list"], capture_output=True, text=True)
    assert p.returncode == 0 and "clues-rtt" in p.stdout and "Fig. 21" in p.stdout
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "clues-rtt", "--quick", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "clues-rtt"
    with (out / "comparison.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["experiment", "metric", "condition", "paper", "dcsim", "ratio", "tolerance", "holds", "note"]
    # The quick version runs 10 Gb/s only: the single RTO case's two
    # completion times, two RTO intervals (1 ms clock, ARREAR) and three
    # claims; the double case's claim and the two on the saving per RTO.
    assert len(rows) == 10
    assert all(r["holds"] == "True" for r in rows), rows
    assert (out / "report.html").read_text().count("data:image/png;base64,") == 1
    assert (out / "figures" / "clues-rtt.png").stat().st_size > 1000
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "nope"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown experiment 'nope'" in p.stderr
