"""dcsim and htsim side by side on htsim's own fabric program: its DCTCP
permutation on a k = 8 fat-tree (Broadcom/csg-htsim,
sim/datacenter/old_tests/main_dctcp_permutation.cpp). Wall time per simulated
second, events, peak RSS, and the flows' throughput, seed by seed, the two
simulators alternating on one core.

    python bench/compare_htsim.py --htsim DIR
    python bench/compare_htsim.py --htsim DIR --seeds 1 2 3 4 5 --repeat 3 --json
    python bench/compare_htsim.py --htsim DIR --variant reno

htsim is built outside this repository, from a checkout of its public source:

    git clone https://github.com/Broadcom/csg-htsim ~/csg-htsim   # tested at 841d9e7
    python bench/compare_htsim.py --build-htsim ~/csg-htsim      # prints DIR

`--build-htsim` makes the library with htsim's Makefiles and compiles, in
DIR (its sim/datacenter/old_tests), copies of the program with three
changes: its own ntoa/itoa, which the library also defines, are dropped (a
link error otherwise); `-seed N` and `-end S` arguments replace
srand(time(NULL)) and the fixed end; a line per flow at the end, `FLOW src
dst bytes-acknowledged`. One binary per `--variant`:

- `dctcp`: the program as it is;
- `dctcp-rfc`: its DCTCPSrc cuts the window only after a window with marks
  (RFC 8257 §3.3), not after every window while alpha > 0;
- `reno`: plain TcpSrc (NewReno) instead of DCTCPSrc, which ignores the
  marks: drop-tail TCP on the same fabric (dcsim: NewReno, no AQM).

Each seed draws htsim's permutation; dcsim then runs
bench/htsim/fattree-k8-dctcp-permutation.toml with those same (source,
destination) pairs and the same seed. The paths differ: htsim picks one of
the 16 per flow with rand(), dcsim hashes each flow at each switch, so which
flows collide differs and the comparison of throughput is over the
distribution, not flow by flow.

dcsim is timed as the pure-Rust runner `dcsim-rs` (the core of the Python
extension, profile-guided as `pip install .` builds it; bench/pgo.py); each
flow's bytes come from the same scenario run once more through the Python
package, which must count the same events.

Tolerances, fixed before the first run: dcsim's time at most 0.5x htsim's
(issue 30); the mean per-flow goodput, as a fraction of the most a flow can
carry on its 10 Gb/s link (htsim: 9,000 data bytes per 9,000 B packet; dcsim:
8,942 B of payload per 9,000 B frame), within 5 % of htsim's, judged by the
95 % interval of the per-seed difference.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "bench" / "htsim" / "fattree-k8-dctcp-permutation.toml"
HOSTS = 128
DURATION_S = 0.210
LINK_BPS = 10e9
DCSIM_PAYLOAD_SHARE = 8942 / 9000  # payload bytes per wire byte of a full dcsim frame (MTU 8982, no options)

# variant -> (htsim binary in DIR, replacements in dcsim's scenario)
VARIANTS = {
    "dctcp": ("htsim_dctcp_permutation_seeded", {}),
    "dctcp-rfc": ("htsim_dctcp_permutation_rfc", {}),
    "reno": ("htsim_tcp_permutation_seeded", {'cc = "dctcp"': 'cc = "newreno"',
                                              'aqm = { type = "dctcp", k = "130000B", at = "dequeue" }': 'aqm = { type = "droptail" }'}),
}

sys.path.insert(0, str(ROOT / "bench"))
from compare_ns3 import _pgo, run_dcsim_text, timed  # noqa: E402  (same timing rules: one core, /usr/bin/time)


def build_htsim(src: Path) -> Path:
    """Build the patched programs, one per variant, in `src`, a csg-htsim checkout; returns their directory."""
    sim = src / "sim"
    dc = sim / "datacenter"
    objs = ["firstfit", "vl2_topology", "fat_tree_topology", "fat_tree_switch", "bcube_topology", "connection_matrix",
            "oversubscribed_fat_tree_topology", "shortflows", "star_topology", "multihomed_fat_tree_topology"]
    subprocess.run(["make", "-C", str(sim), "-j2", "libhtsim.a"], check=True)
    subprocess.run(["make", "-C", str(dc), "-j2", *(f"{o}.o" for o in objs)], check=True)
    main = (dc / "old_tests" / "main_dctcp_permutation.cpp").read_text()
    edits = [  # (old, new): each must apply exactly once
        (main[main.rindex("string ntoa(double n) {"):], ""),
        ("    int failed_links = 0;", "    int failed_links = 0;\n    unsigned seed = time(NULL);"),
        ('\t} else if (!strcmp(argv[i],"-fail")){',
         '\t} else if (!strcmp(argv[i],"-seed")){\n\t    seed = atoi(argv[i+1]);\n\t    i++;\n'
         '\t} else if (!strcmp(argv[i],"-end")){\n\t    eventlist.setEndtime(timeFromSec(atof(argv[i+1])));\n\t    i++;\n'
         '\t} else if (!strcmp(argv[i],"-fail")){'),
        ("srand(time(NULL));", "srand(seed); srandom(seed);"),
        ("    int tot_subs = 0;", "    vector<pair<pair<int, int>, TcpSink*> > report;\n    int tot_subs = 0;"),
        ("\t    sinkLogger.monitorSink(tcpSnk);", "\t    sinkLogger.monitorSink(tcpSnk);\n\t    report.push_back(make_pair(make_pair(src, dest), tcpSnk));"),
        ('    cout << "Done" << endl;',
         '    cout << "Done" << endl;\n    for (auto& r : report)\n        cout << "FLOW " << r.first.first << " " '
         '<< r.first.second << " " << r.second->cumulative_ack() << endl;'),
    ]
    for old, new in edits:
        if main.count(old) != 1:
            raise RuntimeError(f"{src}: main_dctcp_permutation.cpp is not the version this script knows (841d9e7): "
                               f"{old.strip()[:60]!r} found {main.count(old)} times")
        main = main.replace(old, new)
    out = dc / "old_tests" / "main_dctcp_permutation_seeded.cpp"
    out.write_text(main)
    dctcp = (sim / "dctcp.cpp").read_bytes()
    old = b"        _pkts_seen = 0;\r\n        _pkts_marked = 0;\r\n\r\n        if (_alfa>0){"
    if dctcp.count(old) != 1:
        raise RuntimeError(f"{src}: sim/dctcp.cpp is not the version this script knows (841d9e7)")
    (dc / "old_tests" / "dctcp_rfc.cpp").write_bytes(dctcp.replace(old, b"        bool marked = _pkts_marked > 0;\r\n"
                                                                   b"        _pkts_seen = 0;\r\n        _pkts_marked = 0;\r\n\r\n"
                                                                   b"        if (marked){"))
    reno = dc / "old_tests" / "main_tcp_permutation_seeded.cpp"
    dctcp_src = "tcpSrc = new DCTCPSrc(NULL, NULL, eventlist);"
    assert main.count(dctcp_src) == 1, "main_dctcp_permutation.cpp creates its sources elsewhere"
    reno.write_text(main.replace(dctcp_src, "tcpSrc = new TcpSrc(NULL, NULL, eventlist);"))
    cc = ["g++", "-std=c++11", "-O2", f"-I{sim}", f"-I{dc}"]
    topo = [str(dc / f"{o}.o") for o in objs]
    for program, extra, exe in ((out, [], VARIANTS["dctcp"][0]), (out, [dc / "old_tests" / "dctcp_rfc.cpp"], VARIANTS["dctcp-rfc"][0]),
                                (reno, [], VARIANTS["reno"][0])):
        subprocess.run([*cc, str(program), *map(str, extra), *topo, f"-L{sim}", "-lhtsim", "-o", str(dc / "old_tests" / exe)],
                       check=True)
    return dc / "old_tests"


def run_htsim(exe: Path, seed: int) -> tuple[dict[str, float], dict[int, tuple[int, int]]]:
    """One htsim run: timing and {src: (dst, bytes acknowledged)}."""
    with tempfile.TemporaryDirectory() as d:
        out, wall, rss = timed([str(exe), "-seed", str(seed), "-o", str(Path(d) / "log.dat")])
    flows = {}
    for line in out.splitlines():
        if line.startswith("FLOW "):
            _, src, dst, acked = line.split()
            flows[int(src)] = (int(dst), int(acked))
    if sorted(flows) != list(range(HOSTS)):
        raise RuntimeError(f"htsim printed {len(flows)} FLOW lines, expected one per host ({HOSTS}): is it the patched program?")
    return {"wall": wall, "rss": rss}, flows


def dcsim_scenario(perm: list[int], seed: int, variant: str = "dctcp") -> str:
    text, n = re.subn(r"(?m)^dst = \[.*\]$", f"dst = {perm}", SCENARIO.read_text())
    assert n == 1, "the scenario's workload must have one `dst = [...]` line"
    for old, new in VARIANTS[variant][1].items():
        assert text.count(old) == 1, (variant, old)
        text = text.replace(old, new)
    return text.replace("[run]\n", f"[run]\nseed = {seed}\n", 1)


def dcsim_delivered(text: str) -> tuple[int, dict[int, tuple[int, int]]]:
    """Events and {src: (dst, bytes delivered)} from the Python package."""
    import dcsim

    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(text)
        f.flush()
        r = dcsim.run(f.name)
    cols = [r.flows.column(c).to_pylist() for c in ("src", "dst", "delivered")]
    return r.summary["events"], {s: (d, b) for s, d, b in zip(*cols)}


def goodput_stats(fractions: list[float]) -> dict[str, float]:
    s = sorted(fractions)
    q = lambda p: s[min(len(s) - 1, int(p * len(s)))]
    jain = sum(s) ** 2 / (len(s) * sum(x * x for x in s))
    return {"mean": statistics.fmean(s), "p10": q(0.10), "median": q(0.5), "min": s[0], "max": s[-1], "jain": jain}


def t95(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of a 95 % Student's t interval."""
    from scipy import stats

    n = len(xs)
    if n < 2:
        return statistics.fmean(xs), math.inf
    return statistics.fmean(xs), stats.t.ppf(0.975, n - 1) * statistics.stdev(xs) / math.sqrt(n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--htsim", type=Path, metavar="DIR", help="where --build-htsim put the patched programs")
    ap.add_argument("--variant", choices=list(VARIANTS), default="dctcp")
    ap.add_argument("--build-htsim", type=Path, metavar="CHECKOUT", help="build the patched htsim in a csg-htsim "
                    "checkout (outside this repository), print its path and stop")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--repeat", type=int, default=1, help="alternating timed runs per seed; the fastest of each is kept")
    ap.add_argument("--dcsim-exe", type=Path, help="a dcsim-rs to time instead of building the profile-guided one")
    ap.add_argument("--json", action="store_true", help="one JSON line per seed, then one for the verdicts")
    args = ap.parse_args()
    if args.build_htsim:
        if not (args.build_htsim / "sim" / "datacenter").is_dir():
            print(f"--build-htsim: {args.build_htsim} is not a csg-htsim checkout (no sim/datacenter)", file=sys.stderr)
            return 2
        print(build_htsim(args.build_htsim.resolve()))
        return 0
    htsim = args.htsim / VARIANTS[args.variant][0] if args.htsim else None
    if htsim is None or not htsim.is_file():
        print(f"--htsim: no {VARIANTS[args.variant][0]} in {args.htsim}; build it with --build-htsim CHECKOUT", file=sys.stderr)
        return 2
    exe, build = args.dcsim_exe, "given"
    if exe is None:
        pgo = _pgo()
        try:
            exe, build = pgo.build(), "pgo"
        except pgo.PgoUnavailable as e:
            print(f"compare_htsim: no profile-guided build ({e}); timing the plain one", file=sys.stderr)
            subprocess.run(["cargo", "build", "--release", "-q", "-p", "dcsim-cli"], cwd=ROOT, check=True)
            exe, build = ROOT / "target" / "release" / "dcsim-rs", "plain"
    if not args.json:
        print(f"variant {args.variant}; dcsim-rs build: {build} ({exe}); {DURATION_S * 1e3:.0f} ms simulated per run")
        print("| seed | htsim wall s | dcsim wall s (core) | dcsim / htsim | dcsim events | RSS MB htsim / dcsim "
              "| mean goodput htsim / dcsim | p10 htsim / dcsim | slowest htsim / dcsim | Jain htsim / dcsim |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for seed in args.seeds:
        h_runs, d_runs = [], []
        for _ in range(args.repeat):
            h, h_flows = run_htsim(htsim, seed)
            h_runs.append(h)
            text = dcsim_scenario([h_flows[s][0] for s in range(HOSTS)], seed, args.variant)
            d_runs.append(run_dcsim_text(exe, text))
        h, d = min(h_runs, key=lambda r: r["wall"]), min(d_runs, key=lambda r: r["wall"])
        events, d_flows = dcsim_delivered(text)
        if events != d["events"]:
            raise RuntimeError(f"seed {seed}: dcsim-rs ran {d['events']} events, the Python package {events}")
        if any(d_flows[s][0] != h_flows[s][0] for s in range(HOSTS)):
            raise RuntimeError(f"seed {seed}: dcsim's flows are not htsim's permutation")
        h_g = goodput_stats([h_flows[s][1] * 8 / DURATION_S / LINK_BPS for s in range(HOSTS)])
        d_g = goodput_stats([d_flows[s][1] * 8 / DURATION_S / (LINK_BPS * DCSIM_PAYLOAD_SHARE) for s in range(HOSTS)])
        row = {"seed": seed, "variant": args.variant, "dcsim_build": build, "htsim": h, "dcsim": d, "ratio": d["wall"] / h["wall"],
               "goodput_htsim": h_g, "goodput_dcsim": d_g, "simulated_s": DURATION_S,
               "htsim_runs_s": [r["wall"] for r in h_runs], "dcsim_runs_s": [r["wall"] for r in d_runs]}
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"| {seed} | {h['wall']:.2f} | {d['wall']:.2f} ({d['core']:.2f}) | {row['ratio']:.2f} | "
                  f"{d['events']:,} | {h['rss']:.0f} / {d['rss']:.0f} | {h_g['mean']:.3f} / {d_g['mean']:.3f} | "
                  f"{h_g['p10']:.3f} / {d_g['p10']:.3f} | {h_g['min']:.3f} / {d_g['min']:.3f} | "
                  f"{h_g['jain']:.3f} / {d_g['jain']:.3f} |", flush=True)
    ratio, ratio_hw = t95([r["ratio"] for r in rows])
    diff, diff_hw = t95([r["goodput_dcsim"]["mean"] / r["goodput_htsim"]["mean"] - 1 for r in rows])
    verdict = {
        "time_ratio": ratio, "time_ratio_95": ratio_hw, "time_target": 0.5, "time_met": ratio + ratio_hw <= 0.5,
        "goodput_rel_diff": diff, "goodput_rel_diff_95": diff_hw, "goodput_tolerance": 0.05,
        "goodput_met": abs(diff) + diff_hw <= 0.05,
        "wall_per_simulated_s": {"htsim": statistics.fmean(r["htsim"]["wall"] for r in rows) / DURATION_S,
                                 "dcsim": statistics.fmean(r["dcsim"]["wall"] for r in rows) / DURATION_S},
    }
    if args.json:
        print(json.dumps(verdict))
    else:
        w = verdict["wall_per_simulated_s"]
        print(f"\nwall s per simulated s: htsim {w['htsim']:.1f}, dcsim {w['dcsim']:.1f}")
        print(f"dcsim / htsim time: {ratio:.2f} ± {ratio_hw:.2f} (95 %, {len(rows)} seeds); target <= 0.5: "
              f"{'met' if verdict['time_met'] else 'NOT met'}")
        print(f"mean goodput, dcsim relative to htsim: {diff:+.1%} ± {diff_hw:.1%}; tolerance ±5 %: "
              f"{'met' if verdict['goodput_met'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
