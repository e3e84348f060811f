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


def scenarios() -> list[Path]:
    return sorted(BENCH_DIR.glob("*.toml"))


def _measure(path: Path) -> dict[str, object]:
    """Run one scenario in this process and report (called in a child)."""
    import resource
    import time

    from .scenario import resolve
    from . import _core

    resolved, _ = resolve(path)
    sim = _core.Simulation(json.dumps(resolved))
    t0 = time.perf_counter()
    raw = sim.run()
    wall = time.perf_counter() - t0
    summary = json.loads(raw["summary"])
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {
        "name": path.stem,
        "wall_s": round(wall, 4),
        "events": summary["events"],
        "events_per_s": round(summary["events"] / wall) if wall > 0 else 0,
        "packets": summary["packets_created"],
        "packets_per_s": round(summary["packets_created"] / wall) if wall > 0 else 0,
        "sim_seconds": summary["sim_seconds"],
        "peak_rss_mb": round(rss_mb, 1),
    }


def main(json_lines: bool = False, only: list[str] | None = None) -> int:
    paths = [p for p in scenarios() if not only or p.stem in only]
    if not paths:
        print(f"dcsim bench: no scenario matches {only}", file=sys.stderr)
        return 2
    if not json_lines:
        print(f"{'scenario':<22} {'wall s':>8} {'events':>12} {'events/s':>12} {'packets/s':>12} {'peak RSS MB':>12}")
    for p in paths:
        proc = subprocess.run([sys.executable, "-m", "dcsim.bench", str(p)], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"dcsim bench: {p.stem} failed:\n{proc.stderr}", file=sys.stderr)
            return 1
        r = json.loads(proc.stdout)
        if json_lines:
            print(json.dumps(r), flush=True)
        else:
            print(f"{r['name']:<22} {r['wall_s']:>8.3f} {r['events']:>12,} {r['events_per_s']:>12,} {r['packets_per_s']:>12,} {r['peak_rss_mb']:>12.1f}", flush=True)
    return 0


if __name__ == "__main__":
    print(json.dumps(_measure(Path(sys.argv[1]))))
