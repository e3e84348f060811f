"""Sweeps: a base scenario, a grid / zip / list of overrides over dotted keys,
and replicas over seeds; run on local processes; results appended to Parquet
datasets, one file per run, so an interrupted sweep resumes where it stopped.

SWEEP.toml:

    base = "scenario.toml"          # or an inline [base] table
    replicas = 3                    # seeds run.seed, run.seed + 1, ... (or seeds = [1, 7])
    tables = ["flows", "queries"]   # which result tables to store (default: all)
    batch = 4                       # runs per task (default: chosen from the sweep size)
    [grid]                          # every combination
    "switch.buffer" = ["50pkt", "100pkt"]
    [zip]                           # lists of equal length, taken together
    "workload[0].responders" = ["1..3", "1..5"]
    "workload[0].response_size" = ["100KB", "50KB"]
    [[points]]                      # explicit points
    "tcp.min_rto" = "1ms"

The key "preset" names a preset (e.g. "hull/DCTCP-30K", see dcsim.presets)
applied before the point's other overrides, so schemes can be an axis.

Output directory:

    runs/<key>.parquet      one row per run: key, scenario_hash, seed, the swept
                            keys, status ("ok" or "error"), error, summary numbers
    <table>/<key>.parquet   that run's table with key, scenario_hash, seed and
                            the swept keys as leading columns

The key is "<scenario hash>-<seed>"; a point already in runs/ is skipped. Each
file is written to a temporary name and renamed, so a killed run leaves no
partial file; the same sweep gives the same rows on any executor.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from .results import TABLES, write_file_atomic
from .scenario import _error, load_scenario, resolve

SUMMARY_KEYS = ("events", "sim_seconds", "wall_seconds", "flows", "flows_completed", "queries_completed", "packets_dropped", "stopped_by")


@dataclass(frozen=True)
class Point:
    key: str
    scenario_hash: str
    seed: int
    params: dict[str, Any]
    scenario: dict[str, Any] | None  # resolved; None if the point is invalid
    error: str | None = None


@dataclass
class Sweep:
    base: dict[str, Any]
    base_dir: Path
    params: list[dict[str, Any]]
    seeds: list[int]
    tables: list[str]
    batch: int | None


def load_sweep(path: str | Path) -> Sweep:
    path = Path(path)
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise _error("", f"cannot read sweep file {str(path)!r}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise _error("", f"{path} is not valid TOML: {e}") from None
    allowed = {"base", "replicas", "seeds", "tables", "batch", "grid", "zip", "points"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise _error(unknown[0], f"unknown sweep key: allowed {', '.join(sorted(allowed))}")
    if "base" not in spec:
        raise _error("base", "a sweep needs a base scenario: a file name or a [base] table")
    base_src = spec["base"]
    if isinstance(base_src, str):
        base, base_dir = load_scenario(path.parent / base_src)
    elif isinstance(base_src, dict):
        base, base_dir = base_src, path.parent
    else:
        raise _error("base", "expected a scenario file name or a table")
    grid = spec.get("grid", {})
    zipped = spec.get("zip", {})
    listed = spec.get("points", [])
    for name, table in (("grid", grid), ("zip", zipped)):
        if not isinstance(table, dict) or not all(isinstance(v, list) and v for v in table.values()):
            raise _error(name, "expected a table of dotted keys to non-empty lists of values")
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        raise _error("zip", f"all lists must have the same length, got lengths {sorted(lengths)}")
    if not isinstance(listed, list) or not all(isinstance(p, dict) for p in listed):
        raise _error("points", "expected an array of tables ([[points]])")
    grid_points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())] if grid else [{}]
    zip_points = [dict(zip(zipped, row)) for row in zip(*zipped.values())] if zipped else [{}]
    params = [g | z for g in grid_points for z in zip_points]
    if listed:
        params = [p | q for p in params for q in listed]
    base_seed = base.get("run", {}).get("seed", 1) if isinstance(base.get("run"), dict) else 1
    if "seeds" in spec:
        seeds = spec["seeds"]
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
            raise _error("seeds", "expected a non-empty list of non-negative integers")
    else:
        replicas = spec.get("replicas", 1)
        if not isinstance(replicas, int) or replicas < 1:
            raise _error("replicas", f"expected a positive integer, got {replicas!r}")
        seeds = [base_seed + i for i in range(replicas)]
    tables = spec.get("tables", list(TABLES))
    if not isinstance(tables, list):
        raise _error("tables", f"expected a list of table names, got {tables!r}: allowed {', '.join(TABLES)}")
    bad = [t for t in tables if t not in TABLES]
    if bad:
        raise _error("tables", f"unknown table {bad[0]!r}: allowed {', '.join(TABLES)}")
    batch = spec.get("batch")
    if batch is not None and (not isinstance(batch, int) or batch < 1):
        raise _error("batch", f"expected a positive integer, got {batch!r}")
    return Sweep(base, base_dir, params, seeds, tables, batch)


def points(sweep: Sweep) -> Iterator[Point]:
    """Every (parameters, seed) of the sweep, resolved and keyed."""
    for params in sweep.params:
        for seed in sweep.seeds:
            overrides = {k: v for k, v in params.items() if k != "preset"}
            try:
                scenario, digest = resolve(sweep.base, overrides, seed, params.get("preset"))
                yield Point(f"{digest}-{seed}", digest, seed, params, scenario)
            except ValueError as e:  # ScenarioError: recorded, the sweep goes on
                digest = "invalid-" + hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]
                yield Point(f"{digest}-{seed}", digest, seed, params, None, str(e))


def _atomic_write(table: pa.Table, path: Path) -> None:
    write_file_atomic(path, lambda tmp: pq.write_table(table, tmp))


def _with_keys(table: pa.Table, p: Point) -> pa.Table:
    cols = {"key": p.key, "scenario_hash": p.scenario_hash, "seed": p.seed} | p.params
    for i, (name, value) in enumerate(cols.items()):
        value = json.dumps(value) if isinstance(value, (dict, list)) else value
        table = table.add_column(i, name, pa.array([value] * table.num_rows))
    return table


def run_point(p: Point, out: Path, tables: list[str]) -> str:
    """Run one point and store it; returns "ok" or "error"."""
    from . import _core
    from .results import Result

    row: dict[str, Any] = {"status": "ok", "error": None}
    if p.scenario is None:
        row = {"status": "error", "error": p.error}
    else:
        try:
            raw = _core.Simulation(json.dumps(p.scenario)).run()
            result = Result.from_core(raw, p.scenario)
            for t in tables:
                (out / t).mkdir(exist_ok=True)
                _atomic_write(_with_keys(result.tables[t], p), out / t / f"{p.key}.parquet")
            row |= {k: result.summary[k] for k in SUMMARY_KEYS}
        except Exception as e:  # recorded, the sweep goes on
            row = {"status": "error", "error": f"{type(e).__name__}: {e}"}
    runs = pa.Table.from_pylist([row])
    _atomic_write(_with_keys(runs, p), out / "runs" / f"{p.key}.parquet")
    return row["status"]


def _run_batch(batch: list[Point], out: str, tables: list[str]) -> list[str]:
    return [run_point(p, Path(out), tables) for p in batch]


def done_keys(out: Path) -> set[str]:
    runs = out / "runs"
    return {f.stem for f in runs.glob("*.parquet")} if runs.exists() else set()


def run_sweep(
    path: str | Path, out: str | Path, jobs: int | None = None, progress: bool = True, dask: Any = None
) -> dict[str, int]:
    """Run every point not yet stored in `out`. Returns counts of ok, error and
    skipped. `dask`: a distributed.Client (or a scheduler address) to run the
    batches on instead of local processes; a batch whose worker dies is
    retried elsewhere, and since every run writes its own files atomically
    under its key, a retry neither loses nor duplicates rows."""
    sweep = load_sweep(path)
    out = Path(out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    _remove_stale(out)
    done = done_keys(out)
    todo = [p for p in points(sweep) if p.key not in done]
    skipped = len(sweep.params) * len(sweep.seeds) - len(todo)
    jobs = jobs or os.cpu_count() or 1
    # Batches amortise the per-task cost: about 8 tasks per worker, at most 64 runs each.
    size = sweep.batch or max(1, min(64, math.ceil(len(todo) / (jobs * 8))))
    batches = [todo[i : i + size] for i in range(0, len(todo), size)]
    counts = {"ok": 0, "error": 0, "skipped": skipped}
    t0 = time.monotonic()
    show = progress and sys.stderr.isatty()
    if dask is not None:
        from distributed import Client, as_completed as dask_completed

        client = dask if isinstance(dask, Client) else Client(dask)
        futures = [client.submit(_run_batch, b, str(out), sweep.tables, pure=False, retries=3) for b in batches]
        _collect((f.result() for f in dask_completed(futures)), counts, len(todo), t0, show)
    elif jobs == 1:
        results = (_run_batch(b, str(out), sweep.tables) for b in batches)
        _collect(results, counts, len(todo), t0, show)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_run_batch, b, str(out), sweep.tables) for b in batches]
            _collect((f.result() for f in as_completed(futures)), counts, len(todo), t0, show)
    if show:
        sys.stderr.write("\n")
    _remove_stale(out)  # a worker killed mid-write (and retried) leaves its temporary file
    return counts


def _remove_stale(out: Path) -> None:
    """Remove temporary files left by a process killed while writing. Only
    between runs: during a sweep they may be live writes."""
    for stale in out.glob("*/.*.tmp"):
        stale.unlink(missing_ok=True)


def _collect(results: Iterator[list[str]], counts: dict[str, int], total: int, t0: float, show: bool) -> None:
    for statuses in results:
        for s in statuses:
            counts[s] += 1
        if show:
            n = counts["ok"] + counts["error"]
            rate = n / max(time.monotonic() - t0, 1e-9)
            eta = (total - n) / rate if rate > 0 else math.inf
            sys.stderr.write(f"\r{n}/{total} runs, {counts['error']} failed, {rate:.1f} runs/s, ETA {eta:.0f}s   ")
            sys.stderr.flush()


def load(out: str | Path, table: str = "runs") -> pa.Table:
    """One table of a sweep's output, all runs together, in key order."""
    files = sorted(Path(out, table).glob("*.parquet"))
    if not files:
        return pa.table({})
    return pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")
