"""What every reproduction runner shares: running a list of jobs in a
process pool (one worker per core, shared by the replicas running side by
side; rows come back in submission order, so the output depends neither on
the number of workers nor on what else the pool runs), each replica's seed,
and reading a run's ports, queue samples and percentiles."""

from __future__ import annotations

import os
import statistics
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ..analysis import percentile

Rows = list[dict[str, Any]]
# (condition, scenario (path or dict), preset, overrides)
Job = tuple[dict[str, Any], str | dict[str, Any], str | None, dict[str, Any]]


# The process pool of the experiment being run (`shared_pool`), and each
# replica's progress: (runs done, runs submitted).
_pool: ProcessPoolExecutor | None = None
_progress: dict[int, tuple[int, int]] = {}
_progress_lock = threading.Lock()


@contextmanager
def shared_pool() -> Iterator[ProcessPoolExecutor]:
    """One worker per core for every run inside, so that replicas run side
    by side (`run_replicas`) and no core waits for the slowest run of one
    replica. The workers are forked here, before any replica's thread
    starts (a forking pool starts all its workers at the first submit)."""
    global _pool
    if _pool is not None:
        yield _pool
        return
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        pool.submit(int).result()
        _pool = pool
        try:
            yield pool
        finally:
            _pool = None


def run_replicas(runner: Callable[[dict[str, Any], Path], Rows], spec: dict[str, Any], folder: Path, replicas: range) -> list[Rows]:
    """An experiment's runner for each replica, side by side on one pool;
    results in replica order. Ends the progress line."""
    _progress.clear()
    with shared_pool(), ThreadPoolExecutor(max_workers=len(replicas)) as threads:
        results = list(threads.map(lambda r: runner(spec | {"replica": r}, folder), replicas))
    print(file=sys.stderr)
    return results


def show_progress(spec: dict[str, Any], done: int, total: int) -> None:
    """One status line for every replica running."""
    with _progress_lock:
        _progress[spec.get("replica", 0)] = (done, total)
        line = ", ".join(f"seed {r + 1}: {d}/{t}" for r, (d, t) in sorted(_progress.items()))
        print(f"\r  runs done: {line}", end="", file=sys.stderr, flush=True)


def _run_jobs(jobs: list[Job], measure: Callable[[Any, dict[str, Any], dict[str, Any]], Rows], spec: dict[str, Any]) -> Rows:
    """Run every job (in parallel) and measure each result in its worker."""
    rows: Rows = []
    with shared_pool() as pool:
        futures = [pool.submit(_one, job, measure, spec) for job in jobs]
        for k, f in enumerate(futures, 1):
            rows.extend(f.result())
            show_progress(spec, k, len(jobs))
    return rows


def replica_seed(spec: dict[str, Any], base: int) -> int:
    """A seed for this replica (`spec["replica"]`, set by `dcsim reproduce`):
    `base` itself for the first, so that one seed reproduces the files as
    written, then values far from any seed a file uses."""
    replica = spec.get("replica", 0)
    return base if replica == 0 else base + 1_000_003 * replica


def seeded(overrides: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """`overrides` plus a variant's keys (`spec["variant_set"]`, set by
    `dcsim reproduce --variant`) and this replica's master seed (none for
    the first)."""
    overrides = overrides | spec.get("variant_set", {})
    return overrides if spec.get("replica", 0) == 0 else overrides | {"run.seed": replica_seed(spec, 0)}


def _one(job: Job, measure: Callable[..., Rows], spec: dict[str, Any]) -> Rows:
    import dcsim

    condition, scenario, preset, overrides = job
    try:
        result = dcsim.run(scenario, preset=preset, overrides=seeded(overrides, spec))
    except dcsim.ScenarioError as e:
        run = ", ".join(f"{key} {value}" for key, value in condition.items())
        raise dcsim.ScenarioError(f"the run with {run}: {e}") from None
    return [condition | row for row in measure(result, condition, spec)]


def _port_towards(result: Any, host: int) -> dict[str, Any]:
    """The switch port whose link leads to `host`."""
    return next(p for p in result.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] == host)


def _samples(result: Any, port: dict[str, Any], column: str, after: float) -> list[float]:
    """`port`'s occupancy samples ("bytes" or "packets") from `after` on, sorted."""
    q = result.queues
    return sorted(v for t, p, v in zip(q["time"].to_pylist(), q["port"].to_pylist(), q[column].to_pylist()) if p == port["port"] and t >= after)


def _queue_latency_us(result: Any, port: dict[str, Any], after: float) -> list[float]:
    """Queueing latency at `port` from its occupancy samples: bytes / line rate."""
    return [b * 8 / port["rate_bps"] * 1e6 for b in _samples(result, port, "bytes", after)]


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _pct(values: list[float], p: float) -> float | None:
    return percentile(sorted(values), p) if values else None


def _finish(fig: Any, axes: Any) -> Any:
    """A figure's common finish: a light grid and a legend on every panel."""
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
