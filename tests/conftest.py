from __future__ import annotations

import copy
import csv
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from dcsim.experiments import ROOT

STAR: dict[str, Any] = {
    "topology": {"type": "star", "hosts": 4, "link_rate": "10Gbps", "link_delay": "2us"},
    "switch": {"buffer": "100pkt", "aqm": {"type": "dctcp", "k": "20pkt"}},
    "tcp": {"cc": "dctcp", "min_rto": "1ms"},
    "workload": [
        {"type": "bulk", "src": [1, 2], "dst": 0, "size": "200KB"},
        {"type": "incast", "querier": 0, "responders": [1, 2, 3], "response_size": "30KB", "rounds": 5},
    ],
}


@pytest.fixture
def star() -> dict[str, Any]:
    return copy.deepcopy(STAR)


def reproduce_quick(name: str, out: Path) -> list[dict[str, str]]:
    """Run `dcsim reproduce NAME --quick` (its default seeds); return its
    comparison rows after checking that it wrote its figure and compared
    every row of the full version (issue 27: quick mode keeps every claim)."""
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", name, "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    with (out / name / "comparison.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert (out / name / "figures" / f"{name}.png").stat().st_size > 1000
    spec = tomllib.loads((ROOT / name / "experiment.toml").read_text(encoding="utf-8"))
    assert len(rows) == sum(len(spec.get(kind, [])) for kind in ("reference", "claim", "bound")), "a row of the full version is missing"
    return rows
