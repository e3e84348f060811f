"""`dcsim analyze OUT_DIR`: the analysis tables of a results directory, every
quantity with its unit.

The tables are defined once here, as columns (key, heading, formatter), and
shown by `dcsim analyze` as text and by `dcsim report` as HTML, so the two
never disagree. `--json` prints the raw numbers in SI base units (seconds,
bytes, bits per second).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

from . import analysis, units
from .results import Result

Column = tuple[str, str, Callable[[Any], str]]

FCT_COLUMNS: list[Column] = [
    ("bucket", "flow size", str),
    ("flows", "flows", units.count),
    ("fct_mean", "FCT mean", units.time),
    ("fct_p50", "FCT p50", units.time),
    ("fct_p99", "FCT p99", units.time),
    ("fct_p99.9", "FCT p99.9", units.time),
    ("slowdown_mean", "slowdown mean", units.ratio),
    ("slowdown_p50", "slowdown p50", units.ratio),
    ("slowdown_p99", "slowdown p99", units.ratio),
]
QUERY_COLUMNS: list[Column] = [
    ("rounds", "rounds", units.count),
    ("mean", "completion mean", units.time),
    ("p50", "completion p50", units.time),
    ("p99", "completion p99", units.time),
    ("p99.9", "completion p99.9", units.time),
    ("rounds_with_rto", "rounds with a timeout", units.count),
]
PORT_COLUMNS: list[Column] = [
    ("name", "port", str),
    ("rate_bps", "link rate", units.rate),
    ("utilisation", "utilisation", units.percent),
    ("tx_bytes", "sent", units.size),
    ("max_queue_bytes", "largest queue", units.size),
    ("max_queue_packets", "largest queue (packets)", units.count),
    ("drops", "drops", units.count),
    ("ecn_marks", "ECN marks", units.count),
]
FLOW_COLUMNS: list[Column] = [
    ("id", "flow", str),
    ("kind", "kind", str),
    ("src", "src", lambda h: f"host{h}"),
    ("dst", "dst", lambda h: f"host{h}"),
    ("bytes", "size", lambda b: "unbounded" if b is None else units.size(b)),
    ("start", "start", units.time),
    ("fct", "FCT", units.time),
    ("slowdown", "slowdown", units.ratio),
    ("retransmits", "retransmits", units.count),
    ("timeouts", "timeouts", units.count),
    ("min_rtt", "min RTT", units.time),
]


def cells(rows: list[dict[str, Any]], columns: list[Column]) -> tuple[list[str], list[list[str]]]:
    """(headings, formatted rows) of `rows` under `columns`."""
    return [h for _, h, _ in columns], [[fmt(r[key]) for key, _, fmt in columns] for r in rows]


def text_table(rows: list[dict[str, Any]], columns: list[Column]) -> str:
    """A table for the terminal: the first column left-aligned, numbers right."""
    head, body = cells(rows, columns)
    width = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(head)]
    align = lambda i, text: text.ljust(width[i]) if i == 0 else text.rjust(width[i])
    return "\n".join("  ".join(align(i, t) for i, t in enumerate(line)).rstrip() for line in [head, *body])


def tables(result: Result, buckets: list[tuple[float, float]], deadline: float | None) -> dict[str, Any]:
    """The analysis of one run as plain numbers (SI base units)."""
    report: dict[str, Any] = {"fct_by_size": analysis.fct_by_size(result, buckets)}
    if result.queries.num_rows:
        report["queries"] = analysis.query_completion(result, deadline)
    goodput = analysis.goodput(result)
    if goodput:
        report["goodput"] = goodput
        report["jain_goodput"] = analysis.jain([g["goodput_bps"] for g in goodput])
    report["ports"] = analysis.port_stats(result)
    return report


def _buckets(specs: list[str]) -> list[tuple[float, float]]:
    parsed = []
    for b in specs:
        lo, sep, hi = b.partition(":")
        try:
            low, high = float(lo), float(hi)
            if not sep or not 0 <= low < high:
                raise ValueError
            parsed.append((low, high))
        except ValueError:
            raise ValueError(f"--bucket {b!r}: expected LO:HI in bytes with 0 <= LO < HI, e.g. 0:100e3 or 10e6:inf") from None
    return parsed or analysis.DEFAULT_BUCKETS


def main(out_dir: Path, buckets: list[str], deadline: float | None, as_json: bool) -> int:
    try:
        if deadline is not None and not 0 < deadline < float("inf"):
            raise ValueError(f"--deadline {deadline}: expected a time in seconds above 0, e.g. 0.01")
        result = Result.load(out_dir)
        report = tables(result, _buckets(buckets), deadline)
    except (FileNotFoundError, ValueError) as e:
        print(f"dcsim: error: {e}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    print("FCT and slowdown by flow size (completed flows; slowdown = FCT / FCT on an empty network):")
    print(text_table(report["fct_by_size"], FCT_COLUMNS))
    if "queries" in report:
        q = report["queries"]
        print("\nQuery (incast) rounds:")
        print(text_table([q], QUERY_COLUMNS))
        if deadline is not None:
            print(f"missed the {units.time(deadline)} deadline: {units.count(q['missed_deadline'])} of {units.count(q['rounds'])}")
    if "goodput" in report:
        bps = [g["goodput_bps"] for g in report["goodput"]]
        print(f"\nBulk-flow goodput: {units.rate(min(bps))} to {units.rate(max(bps))} per flow over {len(bps)} flows; "
              f"Jain's fairness index {units.ratio(report['jain_goodput'])}")
    ports = report["ports"]
    if ports:
        shown = ports[:10]
        more = f" (the {len(shown)} busiest of {len(ports)})" if len(ports) > len(shown) else ""
        print(f"\nSwitch ports{more}:")
        print(text_table(shown, PORT_COLUMNS))
    return 0
