"""dcsim and ns-3 3.44 side by side on the benchmark scenarios: wall time,
events, peak RSS and the ratio, one process at a time on one core, the two
simulators alternating.

    pip install ns3==3.44.post0
    python bench/compare_ns3.py                     # every scenario below
    python bench/compare_ns3.py --only incast-64 --repeat 3

dcsim runs python/dcsim/data/bench/<scenario>.toml with the pure-Rust runner
(`target/release/dcsim-rs`, built here; the same core as the Python
extension). ns-3 runs validation/ns3/{dumbbell,incast}.cc, the programs the
agreement checks of docs/validation-ns3.md use, compiled against the PyPI
package's libraries (optimised build). Both sides simulate the same topology,
rates, delays, buffers, marking threshold, workload and duration, with
timestamps, SACK, IW 10 and a 1 ms clock. Wall time is the whole process
(setup included); dcsim's core-only time is
shown beside it. Results go in docs/benchmarks.md with date and machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "python" / "dcsim" / "data" / "bench"

# scenario -> (ns-3 program, its arguments, dcsim scenario file, text replacements in it)
DUMBBELL = {"duration": "500ms", "warmup": "0ms", "sample": "10s", "gbps": 10, "delay": "2us"}
INCAST = {"rounds": 100, "querySize": 500, "responseSize": 64000, "buffer": 100, "gbps": 10, "delay": "2us"}
SCENARIOS = {
    "dumbbell-dctcp-8": ("dumbbell", DUMBBELL | {"n": 8, "cc": "dctcp", "k": 65, "buffer": 250}, "dumbbell-dctcp-8", {}),
    "dumbbell-dctcp-64": ("dumbbell", DUMBBELL | {"n": 64, "cc": "dctcp", "k": 65, "buffer": 250}, "dumbbell-dctcp-64", {}),
    "dumbbell-reno-64": ("dumbbell", DUMBBELL | {"n": 64, "cc": "newreno", "k": 0, "buffer": 250}, "dumbbell-reno-64", {}),
    "incast-16 (min RTO 1 ms)": ("incast", INCAST | {"n": 16, "minRto": "1ms"}, "incast-16", {}),
    "incast-16 (min RTO 10 ms)": ("incast", INCAST | {"n": 16, "minRto": "10ms"}, "incast-16", {'min_rto = "1ms"': 'min_rto = "10ms"'}),
    "incast-64 (min RTO 1 ms)": ("incast", INCAST | {"n": 64, "minRto": "1ms"}, "incast-64", {}),
    "incast-64 (min RTO 10 ms)": ("incast", INCAST | {"n": 64, "minRto": "10ms"}, "incast-64", {'min_rto = "1ms"': 'min_rto = "10ms"'}),
}
NS3_TCP = {"timestamps": "true", "clockGranularity": "1ms", "recovery": "classic", "initialCwnd": 10}


def _validation():
    spec = importlib.util.spec_from_file_location("compare_ns3", ROOT / "validation" / "compare_ns3.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compare_ns3"] = mod
    spec.loader.exec_module(mod)
    return mod


def timed(cmd: list[str]) -> tuple[str, float, float]:
    """Run `cmd` pinned to one core: (stdout, wall s, peak RSS MB)."""
    cpu = min(os.sched_getaffinity(0))
    with tempfile.NamedTemporaryFile("r") as t:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", t.name, "-f", "%M", *cmd], capture_output=True, text=True,
                           preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        wall = time.perf_counter() - start
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        rss_kb = t.read().split()[-1]
    return p.stdout, wall, int(rss_kb) / 1024


def run_dcsim(exe: Path, name: str, replace: dict[str, str]) -> dict[str, float]:
    text = (BENCH / f"{name}.toml").read_text()
    for a, b in replace.items():
        assert a in text, (name, a)
        text = text.replace(a, b)
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(text)
        f.flush()
        out, wall, rss = timed([str(exe), f.name])
    summary = json.loads(out.strip().splitlines()[-1])
    return {"wall": wall, "core": summary["wall_seconds"], "events": summary["events"], "rss": rss}


def run_ns3(exe: Path, args: dict[str, object]) -> dict[str, float]:
    out, wall, rss = timed([str(exe), *[f"--{k}={v}" for k, v in args.items()]])
    return {"wall": wall, "events": json.loads(out)["events"], "rss": rss}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="a scenario name (repeatable)")
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs per scenario; the fastest of each is kept")
    ap.add_argument("--json", action="store_true", help="one JSON line per scenario instead of the table")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "dcsim-cli"], cwd=ROOT, check=True)
    dcsim_exe = ROOT / "target" / "release" / "dcsim-rs"
    ns3_bins = _validation().build()
    names = args.only or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s) {unknown}; allowed: {list(SCENARIOS)}", file=sys.stderr)
        return 2
    if not args.json:
        print(f"| scenario | dcsim wall s (core) | ns-3 wall s | ns-3 / dcsim | events dcsim / ns-3 | peak RSS MB dcsim / ns-3 |")
        print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        prog, ns3_args, toml, replace = SCENARIOS[name]
        d_runs, n_runs = [], []
        for _ in range(args.repeat):
            d_runs.append(run_dcsim(dcsim_exe, toml, replace))
            n_runs.append(run_ns3(ns3_bins[prog], NS3_TCP | ns3_args))
        d, n = min(d_runs, key=lambda r: r["wall"]), min(n_runs, key=lambda r: r["wall"])
        row = {"scenario": name, "dcsim": d, "ns3": n, "ratio": n["wall"] / d["wall"]}
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"| {name} | {d['wall']:.3f} ({d['core']:.3f}) | {n['wall']:.1f} | {row['ratio']:.0f}x | "
                  f"{d['events']:,} / {n['events']:,} | {d['rss']:.1f} / {n['rss']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
