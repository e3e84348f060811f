#!/usr/bin/env python3
"""Run matched scenarios in dcsim and ns-3 3.44 and print one comparison table.

    python validation/compare_ns3.py [--quick] [--out DIR]

The ns-3 side is small C++ programs (validation/ns3/*.cc) compiled with g++
against the headers and shared libraries of the PyPI package ``ns3==3.44.post0``
into a cache directory outside the repository (~/.cache/dcsim-ns3 or
$DCSIM_NS3_CACHE), keyed by a hash of the sources and flags. The dcsim side is
validation/scenarios/*.toml, run through the Python API. ns-3 runs one at a
time (one core). See docs/validation-ns3.md for the settings and the results.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NS3_SRC = HERE / "ns3"
SCEN = HERE / "scenarios"
NS3_VERSION = "3.44"
NS3_LIBS = ["point-to-point", "internet", "traffic-control", "applications", "network", "core"]
CXXFLAGS = ["-std=c++20", "-O2", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE", "-DNS3_BUILD_PROFILE_RELEASE"]



@dataclass(frozen=True)
class Tolerance:
    """Agreement target: |dcsim - ns3| <= max(rel * |ns3|, slack)."""

    rel: float
    slack: float = 0.0  # absolute, for counts: with fewer than 25 events one event is over 4 %

    def holds(self, dcsim: float, ns3: float) -> bool:
        return abs(dcsim - ns3) <= max(self.rel * abs(ns3), self.slack)

    def __str__(self) -> str:
        return f"±{self.rel * 100:g}%" + (f" or ±{self.slack:g}" if self.slack else "")


# Agreement targets, written before the runs they judge (docs/validation-ns3.md
# says why each is what it is). Metrics without one are information.
TARGETS = {
    "goodput": Tolerance(0.01),
    "queue_mean": Tolerance(0.10),
    "round_p50": Tolerance(0.05),
    "round_p99": Tolerance(0.10),
    "drops": Tolerance(0.20, 5),
    "timeouts": Tolerance(0.20, 5),
    "rto_total": Tolerance(0.20, 5),
}


# --------------------------------------------------------------------------- ns-3 build


def ns3_dirs() -> tuple[Path, Path]:
    """Include and library directories of the installed `ns3` PyPI package."""
    import importlib.metadata as md

    roots = []
    try:
        roots.append(Path(str(md.distribution("ns3").locate_file("ns3"))))
    except md.PackageNotFoundError:
        pass
    # validation/ns3 (the C++ sources) shadows nothing here: look in sys.path too.
    roots += [Path(p) / "ns3" for p in sys.path if p and Path(p).resolve() != HERE]
    for root in roots:
        inc = root / "include"
        for lib in (root / "lib64", root / "lib"):
            if (inc / "ns3" / "core-module.h").is_file() and (lib / f"libns{NS3_VERSION}-core.so").is_file():
                return inc, lib
    raise RuntimeError(f"no ns-{NS3_VERSION} headers/libraries found: pip install ns3==3.44.post0")


def build(cache: Path | None = None) -> dict[str, Path]:
    """Compile validation/ns3/{dumbbell,incast,fabric}.cc on demand; return the binaries.
    (fabric.cc is used by bench/compare_ns3.py only.)"""
    inc, lib = ns3_dirs()
    cache = cache or Path(os.environ.get("DCSIM_NS3_CACHE", Path.home() / ".cache" / "dcsim-ns3"))
    h = hashlib.sha256()
    for f in sorted(NS3_SRC.glob("*")):
        h.update(f.name.encode() + f.read_bytes())
    h.update(" ".join(CXXFLAGS + [str(inc), str(lib)]).encode())
    out = cache / h.hexdigest()[:16]
    out.mkdir(parents=True, exist_ok=True)
    bins = {}
    for prog in ("dumbbell", "incast", "fabric"):
        exe = out / prog
        if not exe.exists():
            tmp = out / f".{prog}.tmp"
            cmd = ["g++", *CXXFLAGS, f"-I{inc}", str(NS3_SRC / f"{prog}.cc"), "-o", str(tmp),
                   f"-L{lib}", f"-Wl,-rpath,{lib}", *[f"-lns{NS3_VERSION}-{m}" for m in NS3_LIBS]]
            print(f"[build] g++ {prog}.cc -> {exe}", file=sys.stderr, flush=True)
            subprocess.run(cmd, check=True)
            tmp.rename(exe)
        bins[prog] = exe
    return bins


_ns3_runs: dict[tuple[str, ...], tuple[dict[str, Any], float]] = {}


def run_ns3(exe: Path, args: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Run one ns-3 program; the same command twice in one comparison runs once."""
    cmd = [str(exe), *[f"--{k}={v}" for k, v in args.items()]]
    if tuple(cmd) not in _ns3_runs:
        _ns3_runs[tuple(cmd)] = _run_ns3(cmd)
    return _ns3_runs[tuple(cmd)]


def _run_ns3(cmd: list[str]) -> tuple[dict[str, Any], float]:
    t = time.perf_counter()
    # One ns-3 process at a time, pinned to one core when possible.
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    else:
        p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads(p.stdout), wall


# --------------------------------------------------------------------------- statistics


def percentile(xs: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    kind: str  # dumbbell | incast
    toml: str
    n: int
    # "aligned": the scenario sets dcsim's knobs to ns-3's behaviour (timestamps off, 1 ns
    # clock, ...); "defaults": dcsim's packaged defaults against the closest ns-3 configuration.
    group: str = "aligned"
    cc: str = "newreno"
    k: int = 0  # DCTCP marking threshold (0 = drop-tail)
    buffer: int = 250
    duration_ms: float = 500
    warmup_ms: float = 100
    rounds: int = 100
    min_rto: str = "1ms"
    dcsim_set: dict[str, Any] = field(default_factory=dict)  # overrides of the scenario file
    ns3_extra: dict[str, Any] = field(default_factory=dict)


# Classic ECN with RED (Floyd & Jacobson), the same parameters on both sides.
RED = {"type": "red", "min_th": "30pkt", "max_th": "90pkt", "max_p": 0.1, "weight": 0.002, "gentle": True,
       "action": "mark"}
NS3_RED = {"redMinTh": 30, "redMaxTh": 90, "redMaxP": 0.1, "redWeight": 0.002, "redGentle": "true"}
DELAYED_ACK = {"enabled": True, "count": 2, "timeout": "40ms"}
NS3_DELAYED_ACK = {"delAckCount": 2, "delAckTimeout": "40ms"}


def cases(quick: bool) -> list[Case]:
    if quick:
        d, w, r = 50, 10, 20
        return [
            Case("dumbbell-dctcp-8", "dumbbell", "dumbbell-dctcp-8.toml", 8, cc="dctcp", k=65, duration_ms=d, warmup_ms=w),
            Case("dumbbell-reno-8", "dumbbell", "dumbbell-reno-8.toml", 8, duration_ms=d, warmup_ms=w),
            Case("incast-16 (minRTO 1ms)", "incast", "incast-16.toml", 16, buffer=100, rounds=r),
            # Not the defaults' incast-16: over 20 rounds 8 (dcsim) and 10 (ns-3) take a
            # 200 ms RTO, so the median is a coin toss between the two kinds of round.
            Case("defaults: dumbbell-dctcp-8", "dumbbell", "defaults-dumbbell-dctcp-8.toml", 8, group="defaults",
                 cc="dctcp", k=65, min_rto="200ms", duration_ms=d, warmup_ms=w),
        ]
    out = []
    for n in (8, 64):
        out.append(Case(f"dumbbell-dctcp-{n}", "dumbbell", f"dumbbell-dctcp-{n}.toml", n, cc="dctcp", k=65))
    for n in (8, 64):
        out.append(Case(f"dumbbell-reno-{n}", "dumbbell", f"dumbbell-reno-{n}.toml", n))
    for n in (16, 64):
        for rto in ("1ms", "10ms"):
            out.append(Case(f"incast-{n} (minRTO {rto})", "incast", f"incast-{n}.toml", n, buffer=100, min_rto=rto))
    # One mechanism at a time on top of the aligned scenarios.
    out += [
        Case("dumbbell-reno-8, delayed ACK", "dumbbell", "dumbbell-reno-8.toml", 8,
             dcsim_set={"tcp.delayed_ack": DELAYED_ACK}, ns3_extra=NS3_DELAYED_ACK),
        Case("dumbbell-dctcp-8, delayed ACK", "dumbbell", "dumbbell-dctcp-8.toml", 8, cc="dctcp", k=65,
             dcsim_set={"tcp.delayed_ack": DELAYED_ACK}, ns3_extra=NS3_DELAYED_ACK),
        Case("dumbbell-dctcp-8, timestamps", "dumbbell", "dumbbell-dctcp-8.toml", 8, cc="dctcp", k=65,
             dcsim_set={"tcp.timestamps": True}, ns3_extra={"timestamps": "true"}),
        Case("incast-16, timestamps", "incast", "incast-16.toml", 16, buffer=100,
             dcsim_set={"tcp.timestamps": True}, ns3_extra={"timestamps": "true"}),
        # ns-3's TcpCubic takes beta times cwnd (Linux's bictcp_recalc_ssthresh): ssthresh_basis "cwnd".
        Case("dumbbell-cubic-8", "dumbbell", "dumbbell-reno-8.toml", 8, cc="cubic",
             dcsim_set={"tcp.cc": "cubic", "tcp.ssthresh_basis": "cwnd"}),
        Case("dumbbell-reno-8, ECN with RED", "dumbbell", "dumbbell-reno-8.toml", 8,
             dcsim_set={"switch.aqm": RED, "tcp.ecn": True}, ns3_extra={"ecn": "true", **NS3_RED}),
    ]
    for rto in ("1ms", "10ms"):
        out.append(Case(f"incast-16 two-hop (minRTO {rto})", "incast", "incast-16-two-hop.toml", 16, buffer=100,
                        min_rto=rto, ns3_extra={"switches": 2}))
    # dcsim as shipped.
    out += [
        Case("defaults: dumbbell-reno-8", "dumbbell", "defaults-dumbbell-reno-8.toml", 8, group="defaults",
             min_rto="200ms"),
        Case("defaults: dumbbell-dctcp-8", "dumbbell", "defaults-dumbbell-dctcp-8.toml", 8, group="defaults",
             cc="dctcp", k=65, min_rto="200ms"),
        Case("defaults: dumbbell-dctcp-64", "dumbbell", "defaults-dumbbell-dctcp-64.toml", 64, group="defaults",
             cc="dctcp", k=65, min_rto="200ms"),
        Case("defaults: incast-16", "incast", "defaults-incast-16.toml", 16, group="defaults", buffer=100,
             min_rto="200ms"),
        Case("defaults: incast-64", "incast", "defaults-incast-64.toml", 64, group="defaults", buffer=100,
             min_rto="200ms"),
    ]
    # The defaults with one key set to ns-3's behaviour, against the same ns-3 run: shows
    # which default a "defaults" row's difference comes from (docs/validation-ns3.md).
    by_name = {c.name: c for c in out}
    ns3_clock = {"tcp.rtt_clock": "ns3", "tcp.rto_formula": "rfc6298"}
    for name, keys in [("defaults: dumbbell-reno-8", {"tcp.ssthresh_basis": "pipe"}),
                       ("defaults: dumbbell-dctcp-64", {"tcp.dctcp_min_cwnd": 0}),
                       ("defaults: incast-16", {"tcp.ssthresh_basis": "pipe"}),
                       ("defaults: incast-16", ns3_clock),
                       ("defaults: incast-64", ns3_clock)]:
        label = ", ".join(f"{k.split('.')[1]} = {v}" for k, v in keys.items())
        out.append(replace(by_name[name], name=f"{name}, {label}", dcsim_set=keys))
    return out


# --------------------------------------------------------------------------- dcsim side


def dcsim_dumbbell(c: Case) -> tuple[dict[str, float], float]:
    import dcsim
    import pyarrow.compute as pc

    path = SCEN / c.toml
    dur, warm = c.duration_ms / 1e3, c.warmup_ms / 1e3
    t = time.perf_counter()
    full = dcsim.run(path, overrides={**c.dcsim_set, "run.duration": f"{c.duration_ms}ms"})
    wall = time.perf_counter() - t
    # Same seed, same events: the warm-up run is an exact prefix of the full run.
    pre = dcsim.run(path, overrides={**c.dcsim_set, "run.duration": f"{c.warmup_ms}ms",
                                     "output.queue_sample_interval": "0s"})
    left, right = c.n + 1, c.n + 2  # hosts 0..n (n senders + 1 receiver), then the two switches
    ports = [p for p in full.ports.to_pylist() if p["node"] == left and p["peer"] == right]
    bn = ports[0]["port"]
    pre_bn = [p for p in pre.ports.to_pylist() if p["port"] == bn][0]
    q = full.queues
    sel = pc.and_(pc.equal(q["port"], bn), pc.and_(pc.greater_equal(q["time"], warm - 1e-12), pc.less(q["time"], dur - 1e-12)))
    samples = q.filter(sel).column("packets").to_pylist()
    delivered = sum(full.flows.column("delivered").to_pylist()) - sum(pre.flows.column("delivered").to_pylist())
    win = dur - warm
    return {
        "goodput": delivered * 8 / win,
        "queue_mean": mean(samples),
        "queue_p99": percentile(samples, 99),
        "marks_per_s": (ports[0]["ecn_marks"] - pre_bn["ecn_marks"]) / win,
        "drops": ports[0]["drops"] - pre_bn["drops"],
        "timeouts": sum(full.flows.column("timeouts").to_pylist()) - sum(pre.flows.column("timeouts").to_pylist()),
        "samples": len(samples),
    }, wall


def dcsim_incast(c: Case) -> tuple[dict[str, float], float]:
    import dcsim

    t = time.perf_counter()
    overrides = {**c.dcsim_set, "workload[0].rounds": c.rounds}
    if c.group == "aligned":
        overrides["tcp.min_rto"] = c.min_rto
    r = dcsim.run(SCEN / c.toml, overrides=overrides)
    wall = time.perf_counter() - t
    rows = r.queries.to_pylist()
    return incast_stats(rows), wall


def incast_stats(rows: list[dict[str, Any]]) -> dict[str, float]:
    ct = [x["completion_time"] for x in rows]
    return {
        "rounds": len(rows),
        "round_mean": mean(ct),
        "round_p50": percentile(ct, 50),
        "round_p99": percentile(ct, 99),
        "rto_total": sum(x["timeouts"] for x in rows),
        "rounds_with_rto": sum(1 for x in rows if x["timeouts"] > 0),
        "retx_per_round": mean([x["retransmits"] for x in rows]),
        # Median of the rounds that had no RTO: separates transfer dynamics from RTO counts.
        "round_p50_no_rto": percentile([x["completion_time"] for x in rows if x["timeouts"] == 0], 50),
    }


# --------------------------------------------------------------------------- ns-3 side


def ns3_tcp_args(c: Case) -> dict[str, Any]:
    # Closest to dcsim's defaults: timestamps with a 1 ms clock (ns-3's TSval counts
    # milliseconds), cwnd = ssthresh on entering recovery as dcsim (ns-3's default is PRR).
    clock = {"timestamps": "false", "clockGranularity": "1ns"} if c.group == "aligned" else \
        {"timestamps": "true", "clockGranularity": "1ms"}
    return {"cc": c.cc, **clock, "minRto": c.min_rto, "recovery": "classic", "initialCwnd": 10, **c.ns3_extra}


def ns3_dumbbell(c: Case, exe: Path) -> tuple[dict[str, float], float]:
    d, wall = run_ns3(exe, {**ns3_tcp_args(c), "n": c.n, "buffer": c.buffer, "k": c.k,
                            "duration": f"{c.duration_ms}ms", "warmup": f"{c.warmup_ms}ms", "sample": "10us"})
    s = d["queue_samples"]
    return {
        "goodput": d["goodput_bps"],
        "queue_mean": mean(s),
        "queue_p99": percentile(s, 99),
        "marks_per_s": d["ecn_marks"] / d["window_s"],
        "drops": d["drops"] + d["device_drops"],
        "timeouts": d["timeouts"],
        "sub_segment_cwnd": d["sub_segment_cwnd"],
        "samples": len(s),
    }, wall


def ns3_incast(c: Case, exe: Path) -> tuple[dict[str, float], float]:
    d, wall = run_ns3(exe, {**ns3_tcp_args(c), "n": c.n, "buffer": c.buffer, "rounds": c.rounds,
                            "querySize": 500, "responseSize": 64000})
    return incast_stats(d["rounds"]), wall


# --------------------------------------------------------------------------- table

METRICS = {
    "dumbbell": [("goodput", "goodput (Gb/s)", 1e-9), ("queue_mean", "queue mean (pkt)", 1),
                 ("queue_p99", "queue p99 (pkt)", 1), ("marks_per_s", "ECN marks/s", 1), ("drops", "drops", 1),
                 ("timeouts", "RTOs", 1)],
    "incast": [("round_mean", "round mean (ms)", 1e3), ("round_p50", "round p50 (ms)", 1e3),
               ("round_p99", "round p99 (ms)", 1e3), ("rto_total", "RTOs (total)", 1),
               ("rounds_with_rto", "rounds with an RTO", 1), ("retx_per_round", "retransmits/round", 1),
               ("round_p50_no_rto", "p50 of rounds w/o RTO (ms)", 1e3)],
}


def rel(a: float, b: float) -> float | None:
    """(dcsim - ns3) / ns3."""
    if a != a or b != b:  # NaN: no such rounds
        return None
    if b == 0:
        return 0.0 if a == 0 else None
    return (a - b) / b


def compare(quick: bool, out: Path | None = None, only: list[str] | None = None) -> list[dict[str, Any]]:
    bins = build()
    results = []
    for c in cases(quick):
        if only and not any(o in c.name for o in only):
            continue
        print(f"[run] {c.name}", file=sys.stderr, flush=True)
        if c.kind == "dumbbell":
            dm, dw = dcsim_dumbbell(c)
            nm, nw = ns3_dumbbell(c, bins["dumbbell"])
        else:
            dm, dw = dcsim_incast(c)
            nm, nw = ns3_incast(c, bins["incast"])
        rows = []
        for key, label, scale in METRICS[c.kind]:
            r = rel(dm[key], nm[key])
            tgt = TARGETS.get(key)
            status = "info" if tgt is None else ("pass" if tgt.holds(dm[key], nm[key]) else "FAIL")
            rows.append({"metric": key, "label": label, "dcsim": dm[key], "ns3": nm[key], "scale": scale,
                         "rel": r, "target": None if tgt is None else str(tgt), "status": status})
        results.append({"case": c.name, "group": c.group, "kind": c.kind, "n": c.n, "min_rto": c.min_rto,
                        "dcsim_set": c.dcsim_set, "ns3_args": ns3_tcp_args(c),
                        "duration_ms": c.duration_ms if c.kind == "dumbbell" else None,
                        "warmup_ms": c.warmup_ms if c.kind == "dumbbell" else None,
                        "rounds": c.rounds if c.kind == "incast" else None,
                        "wall_dcsim_s": dw, "wall_ns3_s": nw, "rows": rows, "dcsim": dm, "ns3": nm})
    table = render(results)
    print(table)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "ns3-comparison.json").write_text(json.dumps(results, indent=1))
        (out / "ns3-comparison.md").write_text(table + "\n")
    return results


def fmt(v: float, scale: float) -> str:
    x = v * scale
    if x != x:
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}" if x != int(x) else f"{int(x)}"


def render(results: list[dict[str, Any]]) -> str:
    lines = ["| scenario | metric | dcsim | ns-3 | (dcsim-ns3)/ns3 | target | status | wall dcsim / ns-3 (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for i, row in enumerate(r["rows"]):
            rd = "n/a" if row["rel"] is None else f"{row['rel'] * 100:+.2f}%"
            tgt = row["target"] or "–"
            wall = f"{r['wall_dcsim_s']:.2f} / {r['wall_ns3_s']:.2f}" if i == 0 else ""
            name = r["case"] if i == 0 else ""
            lines.append(f"| {name} | {row['label']} | {fmt(row['dcsim'], row['scale'])} | "
                         f"{fmt(row['ns3'], row['scale'])} | {rd} | {tgt} | {row['status']} | {wall} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short runs for CI (N=8 dumbbells, 50 ms; incast N=16, 20 rounds)")
    ap.add_argument("--out", type=Path, help="also write ns3-comparison.{json,md} here")
    ap.add_argument("--only", action="append", help="run only the cases whose name contains this (repeatable)")
    a = ap.parse_args()
    t = time.perf_counter()
    compare(a.quick, a.out, a.only)
    print(f"\ntotal wall time {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
