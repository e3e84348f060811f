"""`dcsim bench`: fixed scenarios, each run in its own process so that peak
RSS is that scenario's alone. Prints wall seconds, events, events/s,
packets/s and peak RSS; `--json` prints one JSON object per line."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

BENCH_DIR = Path(str(resources.files("dcsim") / "data" / "bench"))


def scenarios(large: bool = False) -> list[Path]:
    """The default set; with `large`, also the scenarios in bench/large/
    (minutes each, such as the k = 16 fat-tree), run only when named."""
    return sorted(BENCH_DIR.glob("*.toml")) + (sorted((BENCH_DIR / "large").glob("*.toml")) if large else [])


def _measure(path: Path, threads: int | None = None) -> dict[str, object]:
    """Run one scenario in this process and report (called in a child).
    With `threads`, in the canonical event order on that many threads."""
    import resource
    import time

    from .scenario import resolve
    from . import _core

    resolved, _ = resolve(path, {"run.event_order": "canonical"} if threads else None)
    sim = _core.Simulation(json.dumps(resolved))
    t0 = time.perf_counter()
    raw = sim.run(threads)
    wall = time.perf_counter() - t0
    summary = json.loads(raw["summary"])
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {
        "name": path.stem + (f"@{threads}t" if threads else ""),
        "threads": threads,
        "wall_s": round(wall, 4),
        "events": summary["events"],
        "events_per_s": round(summary["events"] / wall) if wall > 0 else 0,
        "packets": summary["packets_created"],
        "packets_per_s": round(summary["packets_created"] / wall) if wall > 0 else 0,
        "sim_seconds": summary["sim_seconds"],
        "peak_rss_mb": round(rss_mb, 1),
        "build": build(),
    }


def build() -> str:
    """How the extension was built: "pgo <profile>" (`pip install .`) or "plain"."""
    from . import _core

    profile = _core.build_profile()
    return f"pgo {profile}" if profile else "plain"


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def soak(events: int, json_lines: bool = False) -> int:
    """Run dumbbell-dctcp-8 long enough for `events` events, sampling the
    event rate and resident memory every few seconds: both must stay flat."""
    import threading
    import time

    from . import _core
    from .scenario import resolve

    path = BENCH_DIR / "dumbbell-dctcp-8.toml"
    per_sim_second = 6.0e6  # events per simulated second of this scenario
    sim_s = max(0.01, events / per_sim_second)
    resolved, _ = resolve(path, {"run.duration": f"{round(sim_s * 1e6)}us"})
    sim = _core.Simulation(json.dumps(resolved))
    box: dict[str, object] = {}
    worker = threading.Thread(target=lambda: box.update(raw=sim.run()))
    t0 = time.perf_counter()
    worker.start()
    samples = []
    last = (t0, 0)
    while worker.is_alive():
        worker.join(5.0)
        now = time.perf_counter()
        sim_now, ev, _ = sim.progress()
        rate = (ev - last[1]) / (now - last[0]) if now > last[0] else 0.0
        last = (now, ev)
        row = {"wall_s": round(now - t0, 1), "sim_s": round(sim_now, 3), "events": ev, "events_per_s": round(rate), "rss_mb": round(_rss_mb(), 1)}
        samples.append(row)
        print(json.dumps(row) if json_lines else
              f"{row['wall_s']:>7.1f} s  sim {row['sim_s']:>8.3f} s  {ev:>14,} events  {rate / 1e6:6.2f} M ev/s  RSS {row['rss_mb']:7.1f} MB", flush=True)
    summary = json.loads(box["raw"]["summary"])  # type: ignore[index]
    result = {
        "name": "soak-dumbbell-dctcp-8",
        "events": summary["events"],
        "wall_s": round(time.perf_counter() - t0, 1),
        "rss_start_mb": samples[0]["rss_mb"] if samples else _rss_mb(),
        "rss_end_mb": _rss_mb(),
        "events_per_s_first": samples[0]["events_per_s"] if samples else 0,
        "events_per_s_last": samples[-2]["events_per_s"] if len(samples) > 1 else 0,
    }
    print(json.dumps(result))
    return 0


def main(json_lines: bool = False, only: list[str] | None = None, threads: list[int] | None = None, repeat: int = 1) -> int:
    """Each scenario (and, with `threads`, each thread count in the
    canonical order: "NAME@2t"), one after another; the whole set `repeat`
    times, so that runs to be compared alternate."""
    paths = [p for p in scenarios(large=bool(only)) if not only or p.stem in only]
    if not paths:
        names = ", ".join(p.stem for p in scenarios(large=True))
        print(f"dcsim bench: no scenario matches {only}; allowed: {names}", file=sys.stderr)
        return 2
    if not only:
        large = ", ".join(p.stem for p in sorted((BENCH_DIR / "large").glob("*.toml")))
        print(f"(not run by default, minutes each: {large}; name one with --only)", file=sys.stderr)
    if not json_lines:
        print(f"build: {build()}")
        print(f"{'scenario':<26} {'wall s':>8} {'events':>12} {'events/s':>12} {'packets/s':>12} {'peak RSS MB':>12}")
    runs = [(p, [str(t)] if t else []) for _ in range(max(1, repeat)) for p in paths for t in (threads or [None])]
    for p, extra in runs:
        proc = subprocess.run([sys.executable, "-m", "dcsim.bench", str(p), *extra], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"dcsim bench: {p.stem} failed:\n{proc.stderr}", file=sys.stderr)
            return 1
        r = json.loads(proc.stdout)
        if json_lines:
            print(json.dumps(r), flush=True)
        else:
            print(f"{r['name']:<26} {r['wall_s']:>8.3f} {r['events']:>12,} {r['events_per_s']:>12,} {r['packets_per_s']:>12,} {r['peak_rss_mb']:>12.1f}", flush=True)
    return 0


if __name__ == "__main__":
    print(json.dumps(_measure(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None)))
