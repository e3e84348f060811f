"""The single-run core's instruction counts (callgrind) for the two dumbbell
benchmarks stay within 3 % of bench/callgrind-baseline.json (issue 10).

valgrind (a Debian package) is installed by this test when it is missing and
the machine allows it (root with apt-get); otherwise the test is skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ensure_valgrind() -> None:
    if shutil.which("valgrind"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-qq", "valgrind"], env=env, capture_output=True, timeout=900)
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed and cannot be installed here")


def test_instruction_counts_stay_within_3_percent_of_the_baseline():
    _ensure_valgrind()
    sys.path.insert(0, str(ROOT / "bench"))
    import callgrind as cg
    rows = cg.compare(cg.measure(), json.loads(cg.BASELINE.read_text()))
    assert len(rows) == 2
    for scenario, base, now, change in rows:
        print(f"{scenario}: baseline {base:,}, now {now:,} ({change:+.2%})")
    worse = [r for r in rows if r[3] > cg.TOLERANCE]
    assert not worse, f"instruction count regression over 3 % (python bench/callgrind.py; --update if deliberate): {worse}"
