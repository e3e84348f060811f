"""`dcsim analyze OUT_DIR`: the analysis tables of a results directory."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from . import analysis
from .results import TABLES, Result


def load(out_dir: Path) -> Result:
    missing = [t for t in TABLES if not (out_dir / f"{t}.parquet").exists()]
    if missing or not (out_dir / "summary.json").exists():
        raise FileNotFoundError(f"{out_dir} is not a dcsim results directory (missing {', '.join(missing) or 'summary.json'})")
    tables = {t: pq.read_table(out_dir / f"{t}.parquet") for t in TABLES}
    summary = json.loads((out_dir / "summary.json").read_text())
    scenario = json.loads((out_dir / "scenario.json").read_text()) if (out_dir / "scenario.json").exists() else {}
    return Result(tables, summary, scenario)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v * 1e3:.3f}ms" if v < 100 else f"{v:.3g}"
    return str(v)


def _table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    width = {c: max(len(c), *(len(_fmt(r[c])) for r in rows)) for c in cols}
    lines = ["  ".join(c.rjust(width[c]) for c in cols)]
    lines += ["  ".join(_fmt(r[c]).rjust(width[c]) for c in cols) for r in rows]
    return "\n".join(lines)


def main(out_dir: Path, buckets: list[str], deadline: float | None, as_json: bool) -> int:
    try:
        result = load(out_dir)
        parsed = []
        for b in buckets:
            lo, sep, hi = b.partition(":")
            if not sep:
                raise ValueError(f"--bucket {b!r}: expected LO:HI in bytes, e.g. 0:100e3 or 10e6:inf")
            parsed.append((float(lo), float(hi)))
    except (FileNotFoundError, ValueError) as e:
        print(f"dcsim: error: {e}", file=sys.stderr)
        return 2
    fct = analysis.fct_by_size(result, parsed or analysis.DEFAULT_BUCKETS)
    report: dict[str, Any] = {"fct_by_size": fct}
    if result.queries.num_rows:
        report["queries"] = analysis.query_completion(result, deadline)
    gp = analysis.goodput(result)
    if gp:
        report["jain_goodput"] = analysis.jain([g["goodput_bps"] for g in gp])
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    print("FCT and slowdown by flow size (completed flows; times in ms):")
    print(_table(fct, ["bucket", "flows", "fct_mean", "fct_p50", "fct_p99", "fct_p99.9", "slowdown_mean", "slowdown_p99"]))
    if "queries" in report:
        q = report["queries"]
        print("\nquery rounds: " + ", ".join(f"{k} {_fmt(v)}" for k, v in q.items()))
    if "jain_goodput" in report:
        print(f"\nJain's fairness index of bulk-flow goodput: {report['jain_goodput']:.4f} over {len(gp)} flows")
    return 0
