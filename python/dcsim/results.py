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

TABLES = ("flows", "queries", "queues", "ports", "tcp_trace", "captures", "pacer", "voq", "pfc")

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


def _read_dir(out_dir: Path) -> tuple[dict[str, pa.Table], dict[str, Any], dict[str, Any]]:
    # "pfc" is younger than results directories written before it.
    missing = [t for t in TABLES if t != "pfc" and not (out_dir / f"{t}.parquet").exists()]
    if missing or not (out_dir / "summary.json").exists():
        raise FileNotFoundError(f"{out_dir} is not a dcsim results directory (missing {', '.join(missing) or 'summary.json'})")
    tables = {t: pq.read_table(out_dir / f"{t}.parquet") for t in TABLES if (out_dir / f"{t}.parquet").exists()}
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    scenario_file = out_dir / "scenario.json"
    scenario = json.loads(scenario_file.read_text(encoding="utf-8")) if scenario_file.exists() else {}
    return tables, summary, scenario


class Result:
    """The outcome of one run.

    Attributes: ``flows``, ``queries``, ``queues``, ``ports``, ``tcp_trace``,
    ``captures``, ``pacer``, ``voq``, ``pfc`` (pyarrow Tables), ``pcaps`` (capture name -> pcap file
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
    pfc: pa.Table

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

    @classmethod
    def load(cls, out_dir: str | Path) -> "Result":
        """The Result of a directory written by `dcsim run` or `Result.write`
        (FileNotFoundError, naming what is missing, for any other directory)."""
        out_dir = Path(out_dir)
        tables, summary, scenario = _read_dir(out_dir)
        result = cls(tables, summary, scenario)
        result.pcaps = {p.stem: p.read_bytes() for p in sorted(out_dir.glob("*.pcap"))}
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
        """What ran and what it found, for the terminal."""
        from .describe import findings, what_ran

        lines = what_ran(self.scenario, self.summary)[-1:] if self.scenario else []
        rows = findings(self)
        width = max((len(k) for k, _ in rows), default=0)
        return "\n".join(lines + [f"  {k:<{width}}  {v}" for k, v in rows])

    def _repr_html_(self) -> str:
        """A notebook's view: what ran, what it found, the FCT table and the tables' sizes."""
        from .report import notebook_html

        return notebook_html(self)

    def __repr__(self) -> str:
        s = self.summary
        from .units import time

        name = f"{s['name']} " if s.get("name") else ""
        return f"<dcsim.Result {name}seed {s['seed']}: {time(s['sim_seconds'])} simulated, {s['flows']:,} flows>"
