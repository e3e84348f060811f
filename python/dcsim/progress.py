"""A one-line progress bar on stderr: simulated time, events/s, ETA.

It only appears for runs longer than about a second, and only when stderr is
a terminal (the caller also turns it off with --quiet)."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, duration_s: float | None, delay_s: float = 1.0) -> None:
        self.duration_s = duration_s
        self.start = time.monotonic()
        self.delay_s = delay_s
        self.enabled = sys.stderr.isatty()
        self.drawn = False

    def update(self, sim_s: float, events: int, fraction: float) -> None:
        elapsed = time.monotonic() - self.start
        if not self.enabled or elapsed < self.delay_s:
            return
        rate = events / elapsed if elapsed > 0 else 0.0
        fraction = min(max(fraction, 0.0), 1.0)
        eta = f"ETA {elapsed * (1 - fraction) / fraction:6.1f}s" if fraction > 0.001 else "ETA     ?"
        width = 24
        filled = int(width * fraction)
        bar = "#" * filled + "-" * (width - filled)
        total = f"/{self.duration_s * 1e3:.1f} ms" if self.duration_s else " ms"
        line = f"\r[{bar}] {fraction * 100:5.1f}%  sim {sim_s * 1e3:.3f}{total}  {rate / 1e6:6.2f} M events/s  {eta}"
        sys.stderr.write(line)
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
