"""Running a scenario: one crossing into the Rust core, with progress."""

from __future__ import annotations

import json
import multiprocessing
import threading
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import _core, estimate
from .progress import ProgressBar
from .results import Result
from .scenario import _error, resolve


def _overrides_from_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    # tcp__min_rto="1ms" -> {"tcp.min_rto": "1ms"}
    return {k.replace("__", "."): v for k, v in kwargs.items()}


def run(
    scenario: str | Path | Mapping[str, Any],
    *,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    preset: str | Sequence[str] | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    threads: int | None = None,
    **kwargs: Any,
) -> Result:
    """Run a scenario (a TOML path or a dict of the same structure).

    Overrides are dotted key paths, given as ``overrides={"tcp.cc": "dctcp"}``
    or as keyword arguments with ``__`` for the dots (``tcp__cc="dctcp"``).
    ``preset`` ("hull/DCTCP-30K", see dcsim.presets; or a list, applied in
    order) applies named bundles of overrides before ``overrides``. ``seed`` sets ``run.seed``. With ``out``, the tables and summary are also
    written (atomically) to that directory. The GIL is released while the
    simulation runs. ``threads`` splits a scenario with
    ``run.event_order = "canonical"`` over that many threads: the results
    are the same for every thread count (docs/design.md, "Parallel runs").
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 64):
        raise _error("", f"threads = {threads!r}: allowed 1..=64")
    merged = dict(overrides or {})
    merged.update(_overrides_from_kwargs(kwargs))
    resolved, digest = resolve(scenario, merged, seed, preset)
    for message in estimate.check(resolved, threads or 1):  # refuses what cannot fit before the core builds it
        warnings.warn(message, estimate.LargeRunWarning, stacklevel=2)
    sim = _core.Simulation(json.dumps(resolved))
    raw = _run_with_progress(sim, show=progress, threads=threads)
    result = Result.from_core(raw, resolved)
    if out is not None:
        result.write(out)
    return result


def _run_with_progress(sim: Any, show: bool, threads: int | None = None) -> dict[str, Any]:
    """Run `sim` in a worker thread (the core releases the GIL) while this
    thread draws progress and listens for Ctrl-C, which cancels the run."""
    if not show and multiprocessing.parent_process() is not None:
        # A worker process of a sweep: its parent handles Ctrl-C, and a
        # thread would cost more than a small run (about 0.15 ms).
        return sim.run(threads)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["raw"] = sim.run(threads)
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    worker = threading.Thread(target=work, name="dcsim-run", daemon=True)
    bar = ProgressBar(sim.duration_s) if show else None
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
            if bar is not None:
                bar.update(*sim.progress())
    except KeyboardInterrupt:
        sim.cancel()
        worker.join()
        raise
    finally:
        if bar is not None:
            bar.close()
    if "error" in box:
        raise box["error"]
    return box["raw"]
