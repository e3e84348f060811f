"""`dcsim report OUT_DIR`: one self-contained HTML page for a results
directory: the summary, the analysis tables, the figures (embedded PNG), the
resolved scenario and the seed."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any

from . import analysis, plot
from .analyze import load
from .results import write_file_atomic


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plot._mpl().close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.6g}"
    return html.escape(str(v))


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(r[c])}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def build(out_dir: Path) -> str:
    r = load(out_dir)
    s = r.summary
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>dcsim report</title><style>",
        "body{font-family:sans-serif;max-width:1000px;margin:2em auto}table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}",
        "</style></head><body>",
        f"<h1>dcsim report: {html.escape(s.get('name') or str(out_dir))}</h1>",
        f"<p>dcsim {html.escape(s['dcsim_version'])}, seed {s['seed']}, scenario hash <code>{s['scenario_hash']}</code>; "
        f"{s['sim_seconds'] * 1e3:.3f} ms simulated in {s['wall_seconds']:.3f} s ({s['events']:,} events), stopped by {html.escape(s['stopped_by'])}.</p>",
        "<h2>Flow completion times by size</h2>", _table(analysis.fct_by_size(r)),
    ]
    if r.flows.num_rows:
        parts.append(f"<img src='data:image/png;base64,{_png(plot.fct_cdf(r))}'>")
        parts.append(f"<img src='data:image/png;base64,{_png(plot.slowdown_by_size(r))}'>")
    if r.queries.num_rows:
        parts += ["<h2>Queries</h2>", _table([analysis.query_completion(r)]), f"<img src='data:image/png;base64,{_png(plot.query_cdf(r))}'>"]
    if r.queues.num_rows:
        parts += ["<h2>Queue occupancy</h2>", f"<img src='data:image/png;base64,{_png(plot.queue_over_time(r))}'>"]
    if r.tcp_trace.num_rows:
        parts += ["<h2>Goodput over time</h2>", f"<img src='data:image/png;base64,{_png(plot.throughput_over_time(r))}'>"]
    ports = [p for p in r.ports.to_pylist() if p["node_kind"] == "switch" and p["tx_packets"]]
    parts += ["<h2>Switch ports</h2>", _table([{k: p[k] for k in ("port", "node_name", "peer_name", "tx_packets", "drops", "ecn_marks", "max_queue_packets")} for p in ports])]
    parts += ["<h2>Scenario (resolved)</h2>", f"<pre>{html.escape(json.dumps(r.scenario, indent=2, sort_keys=True))}</pre>", "</body></html>"]
    return "\n".join(parts)


def main(out_dir: Path) -> int:
    import sys

    try:
        page = build(out_dir)
    except (FileNotFoundError, RuntimeError) as e:
        print(f"dcsim: error: {e}", file=sys.stderr)
        return 2
    path = write_file_atomic(out_dir / "report.html", lambda tmp: tmp.write_text(page, encoding="utf-8"))
    print(f"report written to {path}")
    return 0
