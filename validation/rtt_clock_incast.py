"""What the RTT clock does to an incast with a 1 ms minimum RTO
(docs/models/tcp.md, "The RTT clock"; issue 27 deliverable 5).

    python validation/rtt_clock_incast.py [--rounds 200] [--out table.md]

Runs validation/scenarios/incast-16.toml (16/32/64 responders x 64 KB, 10 Gb/s
star, 2 us links, 100-packet drop-tail buffers) with timestamps on and each
stack's clock and RTO, and prints a Markdown table: round completion time
p50/p99 and RTOs per round.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import mean

import numpy as np

import dcsim

SCENARIO = Path(__file__).parent / "scenarios" / "incast-16.toml"

# name -> overrides on top of the aligned incast scenario
CLOCKS = {
    "ticks 1 ms, RFC 6298 (dcsim's default before)": {"tcp.rtt_clock": "ticks", "tcp.rto_formula": "rfc6298", "tcp.rtt_granularity": "1ms"},
    "ticks 1 ms, BSD (FreeBSD)": {"tcp.rtt_clock": "ticks", "tcp.rto_formula": "bsd", "tcp.rtt_granularity": "1ms"},
    "linux, HZ = 1000 (default)": {"tcp.rtt_clock": "linux", "tcp.rto_formula": "linux", "tcp.rtt_granularity": "1ms"},
    "linux, HZ = 250": {"tcp.rtt_clock": "linux", "tcp.rto_formula": "linux", "tcp.rtt_granularity": "4ms"},
    "ns3 (ClockGranularity 1 ms)": {"tcp.rtt_clock": "ns3", "tcp.rto_formula": "rfc6298", "tcp.rtt_granularity": "1ms"},
    "exact (1 ns ticks, RFC 6298)": {"tcp.rtt_clock": "ticks", "tcp.rto_formula": "rfc6298", "tcp.rtt_granularity": "1ns"},
}


def run(n: int, overrides: dict, rounds: int) -> dict[str, float]:
    o = {"tcp.timestamps": True, "tcp.min_rto": "1ms", "topology.hosts": n + 1,
         "workload[0].responders": f"1..{n + 1}", "workload[0].rounds": rounds, **overrides}
    r = dcsim.run(SCENARIO, overrides=o, progress=False)
    rows = r.queries.to_pylist()
    ct = np.array([x["completion_time"] for x in rows]) * 1e3
    return {"p50": float(np.percentile(ct, 50)), "p99": float(np.percentile(ct, 99)),
            "rto": mean(x["timeouts"] for x in rows)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    lines = ["| clock and RTO | N | round p50 (ms) | round p99 (ms) | RTOs/round |", "|---|---|---|---|---|"]
    for name, o in CLOCKS.items():
        for n in (16, 32, 64):
            s = run(n, o, a.rounds)
            lines.append(f"| {name} | {n} | {s['p50']:.3f} | {s['p99']:.3f} | {s['rto']:.2f} |")
            print(lines[-1], file=sys.stderr)
    text = "\n".join(lines) + "\n"
    if a.out:
        a.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
