"""What every reproduction runner shares: running a list of jobs in a
process pool (one worker per core; rows come back in submission order, so
the output does not depend on the number of workers), each replica's seed,
and reading a run's ports, queue samples and percentiles."""

from __future__ import annotations

import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

from ..analysis import percentile

Rows = list[dict[str, Any]]
# (condition, scenario (path or dict), preset, overrides)
Job = tuple[dict[str, Any], str | dict[str, Any], str | None, dict[str, Any]]


def _run_jobs(jobs: list[Job], measure: Callable[[Any, dict[str, Any], dict[str, Any]], Rows], spec: dict[str, Any]) -> Rows:
    """Run every job (in parallel) and measure each result in its worker."""
    rows: Rows = []
    workers = min(len(jobs), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_one, job, measure, spec) for job in jobs]
        for k, f in enumerate(futures, 1):
            rows.extend(f.result())
            print(f"\r  run {k}/{len(jobs)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
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
        # Re-raised as a plain error: the extension's exception does not cross processes.
        raise ValueError(f"{condition}: {e}") from None
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
