"""Instruction counts of the single-run core (callgrind), against a stored
baseline. Instruction counts are repeatable on a noisy machine, unlike wall
time: the same binary and input give the same count.

    python bench/callgrind.py            # measure and compare with the baseline
    python bench/callgrind.py --update   # measure and store the new baseline

It builds the pure-Rust runner (`cargo build --release -p dcsim-cli`, the same
fat-LTO profile as the Python extension) and runs each scenario of
BASELINE under `valgrind --tool=callgrind`. tests/test_callgrind.py fails when
a count grows by more than 3 %; a change that is worth its instructions
updates the baseline in the same commit and says why.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "bench" / "callgrind-baseline.json"
SCENARIOS = ["dumbbell-dctcp-8", "dumbbell-dctcp-64"]
TOLERANCE = 0.03


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "dcsim-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "dcsim-rs"


def instructions(exe: Path, scenario: str) -> int:
    toml = ROOT / "python" / "dcsim" / "data" / "bench" / f"{scenario}.toml"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(exe), str(toml)],
                           capture_output=True, text=True, check=True)
        m = re.search(r"Collected : (\d+)", p.stderr)
        if not m:
            raise RuntimeError(f"callgrind printed no count for {scenario}:\n{p.stderr[-2000:]}")
        return int(m.group(1))


def measure() -> dict[str, int]:
    exe = build()
    return {s: instructions(exe, s) for s in SCENARIOS}


def compare(counts: dict[str, int], baseline: dict[str, int]) -> list[tuple[str, int, int, float]]:
    """(scenario, baseline, now, change) for every scenario."""
    return [(s, baseline[s], n, n / baseline[s] - 1) for s, n in counts.items()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="store the counts as the new baseline")
    args = ap.parse_args()
    counts = measure()
    if args.update:
        BASELINE.write_text(json.dumps(counts, indent=1) + "\n")
        print(f"stored {counts} in {BASELINE.relative_to(ROOT)}")
        return 0
    worse = False
    for s, base, now, change in compare(counts, json.loads(BASELINE.read_text())):
        flag = "REGRESSION" if change > TOLERANCE else "ok"
        worse |= change > TOLERANCE
        print(f"{flag:10} {s:20} baseline {base:>14,}  now {now:>14,}  {change:+.2%}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
