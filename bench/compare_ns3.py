"""dcsim and ns-3 3.44 side by side on the benchmark scenarios: wall time,
events, peak RSS and the ratio, one process at a time on one core, the two
simulators alternating.

    pip install ns3==3.44.post0
    python bench/compare_ns3.py                     # every scenario below
    python bench/compare_ns3.py --only incast-64 --repeat 3
    python bench/compare_ns3.py --only fattree-k8-websearch --only leafspine-144-datamining

dcsim runs python/dcsim/data/bench/<scenario>.toml with the pure-Rust runner
`dcsim-rs` (the same core as the Python extension), built here
profile-guided as `pip install .` builds the extension (bench/pgo.py:
target/pgo/release/dcsim-rs; `--plain` times target/release/dcsim-rs, and
it is the fallback, said so, when no profile can be made). ns-3 runs validation/ns3/{dumbbell,incast,fabric}.cc (dumbbell and
incast are the programs the agreement checks of docs/validation-ns3.md use),
compiled against the PyPI package's libraries (optimised build). Both sides
simulate the same topology, rates, delays, buffers, marking threshold,
workload and duration, with timestamps, SACK, IW 10 and a 1 ms clock (1 us on
the fabric scenarios, whose files set tcp.rtt_granularity = 1us). Wall time
is the whole process (setup included); dcsim's core-only time is shown beside
it. Results go in docs/benchmarks.md with date and machine.

The fabric scenarios (fattree-k8-websearch, leafspine-144-datamining,
fattree-k16-websearch) carry Poisson flows with sizes from a CDF. ns-3 does
not sample them itself: dcsim (the Python package, `import dcsim`) resolves
the scenario (the named CDF becomes its points; dcsim-rs reads that resolved
scenario) and runs it once untimed; its flows table (source, destination,
bytes, start of every flow) goes to a CSV that fabric.cc replays, one BulkSend
and PacketSink per flow, so both simulators carry the same flows. fabric.cc
routes with per-flow ECMP (a 5-tuple hash at each switch, as dcsim; its own
small routing protocol, since ns-3 3.44's global routing only has per-packet
RandomEcmpRouting); the hash differs from dcsim's, so individual flows take
other paths. Scenarios in HORIZON are measured over a shorter simulated time
than their file's, the same for both simulators: the row says so, and nothing
is extrapolated. Under the table, per fabric scenario: flows started and
completed on each side and the median FCT of the flows both completed.
"""

from __future__ import annotations

import argparse
import functools
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
# The fabric scenarios' files set DCTCP (K = 65 packets, 250-packet buffers), min RTO 1 ms and a 1 us RTT clock.
FABRIC = {"cc": "dctcp", "mark": 65, "buffer": 250, "minRto": "1ms", "clockGranularity": "1us"}
FATTREE = FABRIC | {"topo": "fattree", "gbps": 10, "hostDelay": "1us", "edgeAggDelay": "1us", "aggCoreDelay": "1us"}
LEAFSPINE = FABRIC | {"topo": "leafspine", "leaves": 9, "spines": 4, "hostsPerLeaf": 16, "gbps": 10, "uplinkGbps": 40,
                      "hostDelay": "10us", "uplinkDelay": "10us"}
SCENARIOS = {
    "dumbbell-dctcp-8": ("dumbbell", DUMBBELL | {"n": 8, "cc": "dctcp", "k": 65, "buffer": 250}, "dumbbell-dctcp-8", {}),
    "dumbbell-dctcp-64": ("dumbbell", DUMBBELL | {"n": 64, "cc": "dctcp", "k": 65, "buffer": 250}, "dumbbell-dctcp-64", {}),
    "dumbbell-reno-64": ("dumbbell", DUMBBELL | {"n": 64, "cc": "newreno", "k": 0, "buffer": 250}, "dumbbell-reno-64", {}),
    "incast-16 (min RTO 1 ms)": ("incast", INCAST | {"n": 16, "minRto": "1ms"}, "incast-16", {}),
    "incast-16 (min RTO 10 ms)": ("incast", INCAST | {"n": 16, "minRto": "10ms"}, "incast-16", {'min_rto = "1ms"': 'min_rto = "10ms"'}),
    "incast-64 (min RTO 1 ms)": ("incast", INCAST | {"n": 64, "minRto": "1ms"}, "incast-64", {}),
    "incast-64 (min RTO 10 ms)": ("incast", INCAST | {"n": 64, "minRto": "10ms"}, "incast-64", {'min_rto = "1ms"': 'min_rto = "10ms"'}),
    "fattree-k8-websearch": ("fabric", FATTREE | {"k": 8}, "fattree-k8-websearch", {}),
    "leafspine-144-datamining": ("fabric", LEAFSPINE, "leafspine-144-datamining", {}),
    "fattree-k16-websearch": ("fabric", FATTREE | {"k": 16}, "large/fattree-k16-websearch", {}),
}
# Simulated time for scenarios measured over less than their file's duration
# (both simulators): ns-3 would take many hours for the k = 16 fat-tree's 100 ms.
HORIZON = {"fattree-k16-websearch": "5ms"}
NS3_TCP = {"timestamps": "true", "clockGranularity": "1ms", "recovery": "classic", "initialCwnd": 10}


def _pgo():
    """bench/pgo.py, which builds the profile-guided dcsim-rs."""
    spec = importlib.util.spec_from_file_location("dcsim_bench_pgo", ROOT / "bench" / "pgo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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
    return run_dcsim_text(exe, text)


def run_dcsim_text(exe: Path, text: str) -> dict[str, float]:
    """Time dcsim-rs on a scenario given as TOML text: wall, core, events, peak RSS."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(text)
        f.flush()
        out, wall, rss = timed([str(exe), f.name])
    summary = json.loads(out.strip().splitlines()[-1])
    return {"wall": wall, "core": summary["wall_seconds"], "events": summary["events"], "rss": rss}


def run_ns3(exe: Path, args: dict[str, object]) -> dict[str, float]:
    out, wall, rss = timed([str(exe), *[f"--{k}={v}" for k, v in args.items()]])
    return {"wall": wall, "events": json.loads(out)["events"], "rss": rss}


def _toml(v: object) -> str:
    """A resolved scenario value as TOML (inline tables; None means "not set")."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items() if x is not None) + "}"
    raise TypeError(f"cannot write {v!r} as TOML")


@functools.lru_cache(maxsize=None)
def fabric_workload(toml: str, horizon: str | None) -> tuple[str, str, dict[str, object]]:
    """Resolve a fabric scenario with dcsim (named CDFs become points) and run
    it once through the Python package for its flows. Returns (the resolved
    scenario as TOML for dcsim-rs, the flows as CSV for fabric.cc, facts)."""
    import dcsim

    overrides = {"run.duration": horizon} if horizon else {}
    scenario, _ = dcsim.resolve(BENCH / f"{toml}.toml", overrides=overrides)
    text = "\n".join(f"{k} = {_toml(v)}" for k, v in scenario.items() if v is not None) + "\n"
    r = dcsim.run(scenario)
    flows = r.flows
    lines = ["src,dst,bytes,start_ps"]
    for src, dst, nbytes, start in zip(*(flows.column(c).to_pylist() for c in ("src", "dst", "bytes", "start"))):
        lines.append(f"{src},{dst},{nbytes},{round(start * 1e12)}")
    return text, "\n".join(lines) + "\n", {"duration": scenario["run"]["duration"], "flows": flows.num_rows,
                                           "events": r.summary["events"], "fct": flows.column("fct").to_pylist()}


def run_fabric(dcsim_exe: Path, ns3_exe: Path, name: str, ns3_args: dict[str, object], toml: str) -> tuple[dict, dict, dict]:
    """One dcsim-rs run and one fabric.cc run of a fabric scenario on the same flows."""
    text, csv, facts = fabric_workload(toml, HORIZON.get(name))
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as t, tempfile.NamedTemporaryFile("w", suffix=".csv") as c:
        t.write(text)
        t.flush()
        c.write(csv)
        c.flush()
        out, wall, rss = timed([str(dcsim_exe), t.name])
        summary = json.loads(out.strip().splitlines()[-1])
        if summary["events"] != facts["events"]:
            raise RuntimeError(f"{name}: dcsim-rs ran {summary['events']} events, the Python run {facts['events']}: "
                               "the flows given to ns-3 would not be the ones dcsim-rs simulated")
        d = {"wall": wall, "core": summary["wall_seconds"], "events": summary["events"], "rss": rss,
             "flows_completed": summary["flows_completed"]}
        out, wall, rss = timed([str(ns3_exe), *[f"--{k}={v}" for k, v in (NS3_TCP | ns3_args).items()],
                                f"--flows={c.name}", f"--duration={facts['duration']}"])
    res = json.loads(out)
    n = {"wall": wall, "events": res["events"], "rss": rss, "flows_completed": res["flows_completed"],
         "timeouts": res["timeouts"], "retransmits": res["retransmits"], "drops": res["drops"] + res["device_drops"]}
    both = [(a, b) for a, b in zip(facts["fct"], res["fct"]) if a is not None and a == a and b is not None]
    info = {"duration": facts["duration"], "flows": facts["flows"], "flows_started": res["flows_started"],
            "both_completed": len(both),
            "fct_median_us": [_median([a for a, _ in both]) * 1e6, _median([b for _, b in both]) * 1e6] if both else None}
    return d, n, info


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="a scenario name (repeatable)")
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs per scenario; the fastest of each is kept")
    ap.add_argument("--json", action="store_true", help="one JSON line per scenario instead of the table")
    ap.add_argument("--plain", action="store_true", help="time the plain release build (target/release/dcsim-rs) "
                    "instead of the profile-guided one users install")
    ap.add_argument("--dcsim-exe", type=Path, help="a dcsim-rs to time instead of building one")
    ap.add_argument("--dry-run", action="store_true", help="list the scenarios that would run, then stop")
    args = ap.parse_args()
    # A name, or its first word ("incast-64" for both of its min RTOs).
    chosen = lambda only, name: name == only or name.startswith(only + " ")
    unknown = [o for o in args.only or [] if not any(chosen(o, n) for n in SCENARIOS)]
    if unknown:  # before the builds, which take minutes
        print(f"unknown scenario(s) {unknown}; allowed: {list(SCENARIOS)}", file=sys.stderr)
        return 2
    names = [n for n in SCENARIOS if not args.only or any(chosen(o, n) for o in args.only)]
    if args.dry_run:
        print("\n".join(names))
        return 0
    dcsim_exe, build = args.dcsim_exe, "given"
    if dcsim_exe is None and not args.plain:
        pgo = _pgo()
        try:
            dcsim_exe, build = pgo.build(), "pgo"
        except pgo.PgoUnavailable as e:
            print(f"compare_ns3: no profile-guided build ({e}); timing the plain one", file=sys.stderr)
    if dcsim_exe is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "dcsim-cli"], cwd=ROOT, check=True)
        dcsim_exe, build = ROOT / "target" / "release" / "dcsim-rs", "plain"
    ns3_bins = _validation().build()
    if not args.json:
        print(f"dcsim-rs build: {build} ({dcsim_exe})")
        print(f"| scenario | dcsim wall s (core) | ns-3 wall s | ns-3 / dcsim | events dcsim / ns-3 | peak RSS MB dcsim / ns-3 |")
        print("|---|---:|---:|---:|---:|---:|")
    notes = []
    for name in names:
        prog, ns3_args, toml, replace = SCENARIOS[name]
        d_runs, n_runs = [], []
        info = None
        for _ in range(args.repeat):
            if prog == "fabric":
                dr, nr, info = run_fabric(dcsim_exe, ns3_bins[prog], name, ns3_args, toml)
                d_runs.append(dr)
                n_runs.append(nr)
            else:
                d_runs.append(run_dcsim(dcsim_exe, toml, replace))
                n_runs.append(run_ns3(ns3_bins[prog], NS3_TCP | ns3_args))
        d, n = min(d_runs, key=lambda r: r["wall"]), min(n_runs, key=lambda r: r["wall"])
        label = name
        if name in HORIZON:
            label = f"{name} (SHORTENED: {HORIZON[name]} simulated, not the file's duration)"
        row = {"scenario": name, "dcsim_build": build, "dcsim": d, "ns3": n, "ratio": n["wall"] / d["wall"]}
        if info is not None:
            row["fabric"] = info
            row["simulated"] = info["duration"]
            row["shortened"] = name in HORIZON
            fm = info["fct_median_us"]
            notes.append(f"* {name}: {info['duration']} simulated; {info['flows']:,} flows, {info['flows_started']:,} "
                         f"started before the end; completed dcsim {d['flows_completed']:,} / ns-3 "
                         f"{n['flows_completed']:,}; median FCT of the {info['both_completed']:,} flows both "
                         f"completed: dcsim {fm[0]:.1f} us / ns-3 {fm[1]:.1f} us; ns-3 RTOs {n['timeouts']:,}, "
                         f"retransmits {n['retransmits']:,}, drops {n['drops']:,}" if fm else
                         f"* {name}: {info['duration']} simulated; no flow completed on both sides")
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"| {label} | {d['wall']:.3f} ({d['core']:.3f}) | {n['wall']:.1f} | {row['ratio']:.0f}x | "
                  f"{d['events']:,} / {n['events']:,} | {d['rss']:.1f} / {n['rss']:.1f} |", flush=True)
    if notes and not args.json:
        print()
        print("\n".join(notes))
        for name in names:
            if name in HORIZON:
                print(f"* {name} was measured over {HORIZON[name]} of simulated time on BOTH sides, not its "
                      "file's duration; the times above are for that shortened run (no extrapolation).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
