"""What RACK-TLP does to an incast (docs/models/rack-tlp.md; issue 29
deliverable 4).

    python validation/rack_tlp_incast.py [--rounds 200] [--out table.md]

Runs validation/scenarios/incast-16.toml (16/32/64 responders x 64 KB, 10 Gb/s
star, 2 us links, 100-packet drop-tail buffers, NewReno with SACK and
timestamps, the Linux RTT clock) with DupThresh, with RACK-TLP (and DSACK) as
RFC 8985 has it, and with Linux's probe timeout (two jiffies more), at minimum
RTOs of 1 ms and 200 ms (Linux's), and prints a Markdown table: round
completion time p50/p99, RTOs and tail loss probes per round.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import mean

import numpy as np

import dcsim

SCENARIO = Path(__file__).parent / "scenarios" / "incast-16.toml"


# name -> loss detection overrides
DETECTIONS = {
    "dupthresh": {"tcp.loss_detection": "dupthresh"},
    "rack_tlp": {"tcp.loss_detection": "rack_tlp", "tcp.dsack": True},
    "rack_tlp, Linux's PTO": {"tcp.loss_detection": "rack_tlp", "tcp.dsack": True, "tcp.tlp_slack": "2ms"},
}


def run(n: int, detection: dict, min_rto: str, rounds: int) -> dict[str, float]:
    o = {"tcp.timestamps": True, "tcp.min_rto": min_rto, "tcp.rtt_clock": "linux", "tcp.rto_formula": "linux", **detection,
         "topology.hosts": n + 1, "workload[0].responders": f"1..{n + 1}", "workload[0].rounds": rounds}
    r = dcsim.run(SCENARIO, overrides=o, progress=False)
    rows = r.queries.to_pylist()
    flows = r.flows.to_pandas()
    ct = np.array([x["completion_time"] for x in rows]) * 1e3
    return {"p50": float(np.percentile(ct, 50)), "p99": float(np.percentile(ct, 99)),
            "rto": mean(x["timeouts"] for x in rows), "tlp": float(flows["tail_loss_probes"].sum()) / len(rows)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    lines = ["| min RTO | loss detection | N | round p50 (ms) | round p99 (ms) | RTOs/round | probes/round |",
             "|---|---|---|---|---|---|---|"]
    for min_rto in ("1ms", "200ms"):
        for name, detection in DETECTIONS.items():
            for n in (16, 32, 64):
                s = run(n, detection, min_rto, a.rounds)
                lines.append(f"| {min_rto} | {name} | {n} | {s['p50']:.3f} | {s['p99']:.3f} | {s['rto']:.2f} | {s['tlp']:.2f} |")
                print(lines[-1], file=sys.stderr)
    text = "\n".join(lines) + "\n"
    if a.out:
        a.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
