"""HTML reports: `dcsim report OUT_DIR` (a run), the report of a
reproduction, and a Result's view in a notebook.

Each page is one self-contained file that works offline: Jinja2 templates
(dcsim/templates/) fill in tables built from the same column definitions as
`dcsim analyze` (so every number carries its unit) and matplotlib figures
embedded as PNG. Tables that a reader wants to reorder are sortable by
clicking a heading (a few lines of inline JavaScript, sorting by the raw
value in base units).
"""

from __future__ import annotations

import base64
import io
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from . import __version__, analysis, plot
from .analyze import FCT_COLUMNS, FLOW_COLUMNS, PORT_COLUMNS, QUERY_COLUMNS, Column
from .describe import findings, what_ran
from .results import Result, write_file_atomic

# The flow table shows at most this many flows (the slowest by FCT slowdown);
# every flow is in flows.parquet.
MAX_FLOW_ROWS = 2000
MAX_PORT_ROWS = 50


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("dcsim", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(version=__version__, **context)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def cell(text: str, raw: Any = None, numeric: bool = False) -> dict[str, Any]:
    """A table cell: its text, and in a numeric column the raw value that
    sorting orders by ("" for a missing one, which sorts last)."""
    if not numeric:
        return {"text": text, "v": None, "css": ""}
    missing = not _is_number(raw) or (isinstance(raw, float) and math.isnan(raw))
    return {"text": text, "v": "" if missing else repr(raw), "css": "num"}


def table(rows: Iterable[dict[str, Any]], columns: list[Column], note: str = "") -> dict[str, Any]:
    """A template table of `rows` under `columns` (see analyze.py)."""
    rows = list(rows)
    numeric = {key for key, _, _ in columns if any(_is_number(r[key]) for r in rows)}
    return {"headings": [h for _, h, _ in columns], "note": note,
            "rows": [{"css": "", "cells": [cell(fmt(r[key]), r[key], key in numeric) for key, _, fmt in columns]} for r in rows]}


def figure(caption: str, draw: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """A figure embedded as PNG, or the reason it could not be drawn."""
    try:
        fig = draw(*args)
    except plot.NoData as e:
        return {"caption": caption, "png": None, "missing": str(e)}
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plot._mpl().close(fig)
    return {"caption": caption, "png": base64.b64encode(buf.getvalue()).decode(), "missing": None}


def _findings_table(result: Result) -> dict[str, Any]:
    return {"headings": [], "note": "", "rows": [{"css": "", "cells": [cell(k), cell(v)]} for k, v in findings(result)]}


def _flows(result: Result) -> dict[str, Any]:
    flows = result.flows.to_pylist()
    note = ""
    if len(flows) > MAX_FLOW_ROWS:
        # Unfinished flows first: they are the slowest of all.
        flows.sort(key=lambda f: (f["fct"] is not None, -(f["slowdown"] or 0), f["id"]))
        note = f"The {MAX_FLOW_ROWS:,} slowest of {len(flows):,} flows: the unfinished ones, then by slowdown."
        flows = sorted(flows[:MAX_FLOW_ROWS], key=lambda f: f["id"])
    return table(flows, FLOW_COLUMNS, note)


def run_page(result: Result, out_dir: Path | None = None) -> str:
    """The report of one run."""
    s = result.summary
    ports = analysis.port_stats(result)
    figures = [
        figure("FCT slowdown against flow size: p50 and p99 per size bin", plot.slowdown_vs_size, result),
        figure("CDF of flow completion times", plot.fct_cdf, result),
    ]
    if result.queries.num_rows:
        figures.append(figure("CDF of query (incast round) completion times", plot.query_cdf, result))
    figures += [
        figure("Queue length over time at the busiest ports", plot.queue_over_time, result),
        figure("Link utilisation of the busiest switch ports", plot.utilisation, result),
        figure("Drops and ECN marks per switch port", plot.drops_and_marks, result),
    ]
    if result.tcp_trace.num_rows:
        figures.append(figure("Goodput per connection over time", plot.throughput_over_time, result))
    more = f"The {MAX_PORT_ROWS} busiest of {len(ports)} ports that sent anything." if len(ports) > MAX_PORT_ROWS else ""
    return render(
        "run.html.j2",
        title=f"dcsim report: {s.get('name') or (out_dir.name if out_dir else 'run')}",
        description=result.scenario.get("description") or "",
        ran=what_ran(result.scenario, s),
        found=_findings_table(result),
        figures=figures,
        fct=table(analysis.fct_by_size(result), FCT_COLUMNS),
        queries=table([analysis.query_completion(result)], QUERY_COLUMNS) if result.queries.num_rows else None,
        ports=table(ports[:MAX_PORT_ROWS], PORT_COLUMNS, more),
        flows=_flows(result),
        scenario_hash=s["scenario_hash"],
        seed=s["seed"],
        scenario_json=json.dumps(result.scenario, indent=2, sort_keys=True),
    )


def notebook_html(result: Result) -> str:
    """A Result in a notebook: what ran, what it found, FCT by size."""
    return render(
        "notebook.html.j2",
        title=f"dcsim result: {result.summary.get('name') or ''}",
        ran=what_ran(result.scenario, result.summary) if result.scenario else [],
        found=_findings_table(result),
        fct=table(analysis.fct_by_size(result), FCT_COLUMNS),
        tables=", ".join(f"{name} ({result.table(name).num_rows:,} rows)" for name in ("flows", "queries", "queues", "ports", "tcp_trace")),
    )


def main(out_dir: Path) -> int:
    try:
        page = run_page(Result.load(out_dir), out_dir)
    except FileNotFoundError as e:
        print(f"dcsim: error: {e}", file=sys.stderr)
        return 2
    path = write_file_atomic(out_dir / "report.html", lambda tmp: tmp.write_text(page, encoding="utf-8"))
    print(f"report written to {path}")
    return 0
