"""Seed 002's Fig. 8 dumbbell in ns-2.35 and in dcsim, side by side: who
starves, by buffer size and by start times (docs/reproduce.md,
hscc-dumbbell).

    apt-get install ns2                # Debian's ns-2.35, outside the repository
    python validation/ns2_dumbbell.py [--quick] [--out table.md]

Twelve long-lived NewReno senders without SACK (the seed's framework runs
Agent/TCP/FullTcp/Newreno) share one 10 Gb/s drop-tail port, 50 us per hop,
for 5 s. Two sets: every sender started at 0 s with the buffer from 80 to
110 packets, and the scenario's 84 packets with each sender starting up to
1 ms late, seeds 1-8 (ns-2's RNG and dcsim's are different draws: the two
columns compare distributions, not runs). Prints Jain's index over the
senders' goodputs, the smallest goodput and the timeouts, for ns-2
(validation/ns2/dumbbell.tcl) and for dcsim (the hscc-dumbbell scenario with
and without HSCC).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import dcsim

HERE = Path(__file__).parent
TCL = HERE / "ns2" / "dumbbell.tcl"
SCENARIO = Path(dcsim.__file__).parent / "experiments" / "hscc-dumbbell" / "scenario.toml"
SENDERS, SECONDS = 12, 5.0


def jain(x: list[float]) -> float:
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


def summary(goodputs: list[float], timeouts: int) -> str:
    return f"{jain(goodputs):.3f} / {min(goodputs):.2f} / {timeouts}"


def ns2(buffer: int, spread_s: float, seed: int) -> str:
    args = ["ns", str(TCL), str(SECONDS), str(SENDERS), str(buffer), "10Gb", "50us", "0.2", str(spread_s), str(seed), "10"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines() if line.startswith("flow ")]
    return summary([float(r[3]) for r in rows], sum(int(r[5]) for r in rows))


def dcsim_run(preset: str, buffer: int, jitter: str, seed: int) -> str:
    o = {"tcp.sack": False, "switch.buffer": f"{buffer}pkt", "workload[0].start_jitter": jitter}
    f = dcsim.run(SCENARIO, preset=f"hscc/{preset}", seed=seed, overrides=o).flows
    goodputs = [b * 8 / SECONDS / 1e9 for b in f.column("delivered").to_pylist()]
    return summary(goodputs, sum(f.column("timeouts").to_pylist()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="buffers 84 and 100, seeds 1-2")
    ap.add_argument("--out", type=Path, help="also write the Markdown table here")
    a = ap.parse_args()
    if shutil.which("ns") is None:
        print("ns-2 not found: install it (Debian: apt-get install ns2) and run again", file=sys.stderr)
        return 2
    buffers = [84, 100] if a.quick else list(range(80, 111, 2))
    seeds = [1, 2] if a.quick else list(range(1, 9))
    cases = [(f"{b} pkts, all at 0 s", b, 0.0, "0s", 1) for b in buffers]
    cases += [(f"84 pkts, up to 1 ms late, seed {s}", 84, 0.001, "1ms", s) for s in seeds]
    lines = ["| case | ns-2 FullTcp/Newreno | dcsim Reno | dcsim Reno-HSCC |", "|---|---|---|---|"]
    print("Jain's index / smallest goodput (Gb/s) / timeouts, 12 senders, 5 s", file=sys.stderr)
    for name, b, spread, jitter, seed in cases:
        row = f"| {name} | {ns2(b, spread, seed)} | {dcsim_run('Reno', b, jitter, seed)} | {dcsim_run('Reno-HSCC', b, jitter, seed)} |"
        print(row, flush=True)
        lines.append(row)
    if a.out:
        a.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
