"""Run results: pyarrow tables, a summary dict, and atomic output directories.

Columns and units are documented in docs/outputs.md.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TABLES = ("flows", "queries", "queues", "ports", "tcp_trace", "captures", "pacer", "voq")

_DTYPES = {"f64": pa.float64(), "i64": pa.int64(), "u64": pa.uint64(), "u32": pa.uint32()}
# Integer columns where -1 means "no value" (written as null).
_NULL_IF_NEGATIVE = {("flows", "bytes"), ("flows", "conn"), ("flows", "round"), ("queries", "within_deadline")}


def _column(table: str, name: str, dtype: str, data: Any) -> pa.Array:
    if dtype == "str":
        return pa.array(data, type=pa.string())
    typ = _DTYPES[dtype]
    n = len(data) // typ.byte_width
    arr = pa.Array.from_buffers(typ, n, [None, pa.py_buffer(data)])
    if dtype == "f64":
        # NaN marks a missing value (an unfinished flow has no end time).
        arr = pc.if_else(pc.is_nan(arr), pa.scalar(None, typ), arr)
    elif (table, name) in _NULL_IF_NEGATIVE:
        arr = pc.if_else(pc.less(arr, 0), pa.scalar(None, typ), arr)
    return arr


def write_file_atomic(path: str | Path, write: Callable[[Path], Any]) -> Path:
    """Call write(tmp) on a temporary file beside `path`, then rename it into
    place: a reader never sees a half-written file, and an error leaves none."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


class Result:
    """The outcome of one run.

    Attributes: ``flows``, ``queries``, ``queues``, ``ports``, ``tcp_trace``,
    ``captures``, ``pacer`` (pyarrow Tables), ``pcaps`` (capture name -> pcap file
    bytes), ``summary`` (dict) and ``scenario`` (the resolved scenario, every
    default filled in)."""

    flows: pa.Table
    queries: pa.Table
    queues: pa.Table
    ports: pa.Table
    tcp_trace: pa.Table
    captures: pa.Table
    pacer: pa.Table
    voq: pa.Table

    def __init__(
        self, tables: dict[str, pa.Table], summary: dict[str, Any], scenario: dict[str, Any], pcaps: dict[str, bytes] | None = None
    ) -> None:
        self._tables = dict(tables)
        self._columns: dict[str, Any] = {}
        self.summary = summary
        self.scenario = scenario
        self.pcaps = pcaps or {}

    @classmethod
    def from_core(cls, raw: dict[str, Any], scenario: dict[str, Any]) -> "Result":
        result = cls({}, json.loads(raw["summary"]), scenario, dict(raw.get("pcaps", {})))
        # Tables are built from the core's columns when first read: a sweep
        # that reads one table of each small run does not pay for eight.
        result._columns = dict(raw["tables"])
        return result

    def table(self, name: str) -> pa.Table:
        if name not in self._tables:
            cols = self._columns.pop(name)
            self._tables[name] = pa.Table.from_arrays([_column(name, col, dtype, data) for col, dtype, data in cols], names=[c[0] for c in cols])
        return self._tables[name]

    @property
    def tables(self) -> dict[str, pa.Table]:
        return {name: self.table(name) for name in TABLES}

    def __getattr__(self, name: str) -> pa.Table:
        # Only called for attributes not found otherwise: the table names.
        if name in TABLES:
            return self.table(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def write(self, out: str | Path) -> Path:
        """Write every table as Parquet, plus summary.json and scenario.json,
        into `out`. The files go to a temporary directory first, which is then
        renamed, so an interrupted write leaves nothing half-written."""
        out = Path(out).resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        try:
            for name in TABLES:
                pq.write_table(self.tables[name], tmp / f"{name}.parquet")
            for name, data in self.pcaps.items():
                (tmp / f"{name}.pcap").write_bytes(data)
            (tmp / "summary.json").write_text(json.dumps(self.summary, indent=2, sort_keys=True) + "\n")
            (tmp / "scenario.json").write_text(json.dumps(self.scenario, indent=2, sort_keys=True) + "\n")
            old = None
            if out.exists():
                old = out.parent / f".{out.name}.old-{os.getpid()}"
                out.rename(old)
            tmp.rename(out)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out

    # ---- analysis (see dcsim.analysis) -------------------------------------------------

    def fct_by_size(self, buckets: Any = None, kind: str | None = None) -> list[dict[str, Any]]:
        from . import analysis

        return analysis.fct_by_size(self, buckets or analysis.DEFAULT_BUCKETS, kind)

    def query_completion(self, deadline: float | None = None) -> dict[str, Any]:
        from . import analysis

        return analysis.query_completion(self, deadline)

    def goodput(self, kind: str | None = "bulk") -> list[dict[str, Any]]:
        from . import analysis

        return analysis.goodput(self, kind)

    def jain(self, kind: str | None = "bulk") -> float:
        from . import analysis

        return analysis.jain([g["goodput_bps"] for g in analysis.goodput(self, kind)])

    def loss_cycles(self) -> list[dict[str, Any]]:
        from . import analysis

        return analysis.loss_cycles(self)

    # ---- a human summary -------------------------------------------------------------

    def summary_text(self) -> str:
        s = self.summary
        lines = [
            f"dcsim {s['dcsim_version']}  scenario {s['scenario_hash'][:12]}  seed {s['seed']}",
            f"simulated {s['sim_seconds'] * 1e3:.3f} ms in {s['wall_seconds']:.3f} s wall "
            f"({s['events']:,} events, {s['events_per_s'] / 1e6:.2f} M events/s), stopped by {s['stopped_by']}",
        ]
        rows: list[tuple[str, str]] = []
        flows = self.flows
        bulk = flows.filter(pc.equal(flows["kind"], "bulk"))
        if bulk.num_rows:
            done = bulk.filter(pc.is_valid(bulk["fct"]))
            rows.append(("bulk flows", f"{bulk.num_rows} ({done.num_rows} completed)"))
            if done.num_rows:
                fct = sorted(done["fct"].to_pylist())
                rows.append(("  FCT mean / p99", f"{_ms(sum(fct) / len(fct))} / {_ms(_pct(fct, 99))}"))
                sd = sorted(x for x in done["slowdown"].to_pylist() if x is not None)
                if sd:
                    rows.append(("  slowdown mean / p99", f"{sum(sd) / len(sd):.2f} / {_pct(sd, 99):.2f}"))
            long_lived = bulk.filter(pc.is_null(bulk["bytes"]))
            if long_lived.num_rows and s["sim_seconds"] > 0:
                gbps = [d * 8 / s["sim_seconds"] / 1e9 for d in long_lived["delivered"].to_pylist()]
                rows.append(("  long-lived goodput", f"total {sum(gbps):.3f} Gb/s, per flow {min(gbps):.3f}..{max(gbps):.3f} Gb/s"))
        q = self.queries
        if q.num_rows:
            ct = sorted(q["completion_time"].to_pylist())
            rows.append(("incast rounds", f"{q.num_rows}, with an RTO: {sum(1 for t in q['timeouts'].to_pylist() if t)}"))
            rows.append(("  completion mean / p50 / p99", f"{_ms(sum(ct) / len(ct))} / {_ms(_pct(ct, 50))} / {_ms(_pct(ct, 99))}"))
        p = self.ports.filter(pc.equal(self.ports["node_kind"], "switch"))
        if p.num_rows:
            rows.append(("switch ports", f"drops {sum(p['drops'].to_pylist()):,}, ECN marks {sum(p['ecn_marks'].to_pylist()):,}, "
                         f"max queue {max(p['max_queue_packets'].to_pylist())} pkts"))
        width = max((len(k) for k, _ in rows), default=0)
        lines += [f"  {k:<{width}}  {v}" for k, v in rows]
        return "\n".join(lines)


def _pct(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    k = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[k]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"
