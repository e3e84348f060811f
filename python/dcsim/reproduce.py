"""`dcsim reproduce`: run a seed paper's experiment and compare with the
paper. Writes OUT/NAME/comparison.csv (experiment, metric, condition, paper,
dcsim, ratio, tolerance, holds, note, source), OUT/NAME/measurements.json,
OUT/NAME/figures/ and OUT/NAME/report.html. A row is a reference number
(within a relative tolerance of the paper's), a claim (a ratio of two
conditions below a bound) or a bound (a value within absolute limits); its
source is the paper's figure, table or text it comes from. Misses stay
visible: a row that does not hold says so.

Metric names end in their unit (`_us`, `_ms`, `_gbps`, `_pkts`, ...), which
the report and the terminal print beside every value."""

from __future__ import annotations

import csv
import datetime
import io
import json
import sys
import tomllib
from pathlib import Path
from typing import Any, Callable

from . import units
from .experiments import ROOT, RUNNERS
from .results import write_file_atomic

FIELDS = ["experiment", "metric", "condition", "paper", "dcsim", "ratio", "tolerance", "holds", "note", "source"]

# A metric's last word names its unit; ratios, fractions, counts have none.
METRIC_UNITS = {"s": "s", "ms": "ms", "us": "µs", "ns": "ns", "gbps": "Gb/s", "mbps": "Mb/s", "pkts": "packets",
                "packets": "packets", "cells": "cells", "bytes": "B", "kb": "KB"}
DIMENSIONLESS = ("reduction", "fraction", "vs_default", "cost", "stretch_max", "ratio", "share", "jain")


def metric_unit(metric: str) -> str:
    """The unit of a metric's values, from its name ("" when dimensionless)."""
    if metric.endswith(DIMENSIONLESS):
        return ""
    return METRIC_UNITS.get(metric.rsplit("_", 1)[-1], "")


# Units that read best scaled by magnitude: (factor to base units, formatter).
SCALED = {"s": (1.0, units.time), "ms": (1e-3, units.time), "µs": (1e-6, units.time), "ns": (1e-9, units.time),
          "Gb/s": (1e9, units.rate), "Mb/s": (1e6, units.rate), "B": (1.0, units.size), "KB": (1e3, units.size)}


def metric_formatter(metric: str) -> Callable[[Any], str]:
    """Values of `metric` as a reader reads them: times, sizes and rates in
    the unit their magnitude calls for, counts of packets or cells with
    theirs, ratios bare."""
    unit = metric_unit(metric)

    def fmt(v: Any) -> str:
        if v is None or isinstance(v, str):
            return units.MISSING if v in (None, "") else v
        if isinstance(v, bool):
            return str(v).lower()
        if not isinstance(v, (int, float)):  # a list or table of parameters
            return str(v)
        if unit in SCALED:
            factor, scaled = SCALED[unit]
            return scaled(v * factor)
        text = units.number(v)
        return f"{text} {unit}" if unit and text != units.MISSING else text

    return fmt


def _parameter(key: str, value: Any) -> str:
    """A measurement's parameter as a reader reads it: "10 Gb/s" for the
    scenario's "10Gbps", "100 µs" for resolution_us = 100."""
    return units.as_read(value) if isinstance(value, str) else metric_formatter(key)(value)


def _write_text(path: Path, text: str) -> None:
    write_file_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def available() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir() if (p / "experiment.toml").exists())


def _find(rows: list[dict[str, Any]], metric: str, condition: dict[str, Any]) -> float | None:
    for r in rows:
        if r["metric"] == metric and all(r.get(k) == v for k, v in condition.items()):
            return r["value"]
    return None


def compare(name: str, spec: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    default_source = spec.get("source", "")

    def ran(condition: dict[str, Any]) -> bool:
        """Whether any measurement was taken under this condition (the quick
        version runs only some of them)."""
        return any(all(r.get(k) == v for k, v in condition.items()) for r in rows)

    for ref in spec.get("reference", []):
        if not ran(ref["condition"]):
            continue  # not part of the --quick version
        v = _find(rows, ref["metric"], ref["condition"])
        ratio = v / ref["paper"] if v is not None else None
        holds = ratio is not None and abs(ratio - 1) <= ref["tolerance"]
        out.append({"experiment": name, "metric": ref["metric"], "condition": json.dumps(ref["condition"]), "paper": ref["paper"],
                    "dcsim": v, "ratio": ratio, "tolerance": ref["tolerance"], "holds": holds, "note": ref.get("note", ""),
                    "source": ref.get("source", default_source)})
    for claim in spec.get("claim", []):
        if not (ran(claim["left"]) and ran(claim["right"])):
            continue
        left = _find(rows, claim.get("metric", "completion_us"), claim["left"])
        right = _find(rows, claim.get("metric", "completion_us"), claim["right"])
        ratio = left / right if left is not None and right else None
        holds = ratio is not None and ratio < claim["below"]
        out.append({"experiment": name, "metric": "claim", "condition": json.dumps({"left": claim["left"], "right": claim["right"]}),
                    "paper": None, "dcsim": ratio, "ratio": ratio, "tolerance": f"< {claim['below']}", "holds": holds, "note": claim["text"],
                    "source": claim.get("source", default_source)})
    for bound in spec.get("bound", []):
        if not ran(bound["condition"]):
            continue
        v = _find(rows, bound["metric"], bound["condition"])
        lo, hi = bound.get("at_least"), bound.get("at_most")
        holds = v is not None and (lo is None or v >= lo) and (hi is None or v <= hi)
        limits = " and ".join(t for t in (lo is not None and f">= {lo}", hi is not None and f"<= {hi}") if t)
        out.append({"experiment": name, "metric": bound["metric"], "condition": json.dumps(bound["condition"]), "paper": bound.get("paper"),
                    "dcsim": v, "ratio": None, "tolerance": limits, "holds": holds, "note": bound["text"],
                    "source": bound.get("source", default_source)})
    return out


def run(name: str, out: Path, quick: bool) -> list[dict[str, Any]]:
    folder = ROOT / name
    spec = tomllib.loads((folder / "experiment.toml").read_text(encoding="utf-8"))
    runner, figure = RUNNERS[name]
    rows = runner(spec, folder, quick)
    comparison = compare(name, spec, rows)
    dest = out / name
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS)
    w.writeheader()
    w.writerows(comparison)
    _write_text(dest / "comparison.csv", buf.getvalue())
    _write_text(dest / "measurements.json", json.dumps(rows, indent=2) + "\n")
    from .plot import save

    fig_path = save(figure(rows, spec), dest / "figures" / f"{name}.png")
    _write_text(dest / "report.html", report_page(spec, comparison, rows, fig_path, quick))
    return comparison


def _what(row: dict[str, Any]) -> str:
    """A comparison row in words: a claim's text, or the metric under its condition."""
    if row["metric"] == "claim":
        return row["note"]
    condition = ", ".join(f"{k} {_parameter(k, v)}" for k, v in json.loads(row["condition"]).items())
    return f"{row['metric']} ({condition})" if condition else row["metric"]


def _tolerance(row: dict[str, Any]) -> str:
    tol = row["tolerance"]
    return f"± {units.percent(tol, 3)}" if isinstance(tol, (int, float)) else str(tol)


def _verdict(row: dict[str, Any]) -> str:
    return "holds" if row["holds"] else "misses"


def report_page(spec: dict[str, Any], comparison: list[dict[str, Any]], rows: list[dict[str, Any]], fig: Path, quick: bool) -> str:
    """The reproduction's report: a summary, dcsim's figure beside the
    paper's numbers grouped by the figure or table they come from, every
    comparison row and every measurement."""
    import base64

    from .report import cell, render

    def comparison_rows(subset: list[dict[str, Any]], full: bool) -> dict[str, Any]:
        """Every column (full), or what fits beside the figure."""
        headings = ["source", "what", "paper", "dcsim", "ratio", "tolerance", "verdict", "note"] if full else ["what", "paper", "dcsim", "tolerance", "verdict"]
        table_rows = []
        for r in subset:
            value = metric_formatter(r["metric"] if r["metric"] != "claim" else "ratio")
            every = {"source": cell(r["source"]), "what": cell(_what(r)), "paper": cell(value(r["paper"]), r["paper"], True),
                     "dcsim": cell(value(r["dcsim"]), r["dcsim"], True), "ratio": cell(units.ratio(r["ratio"]), r["ratio"], True),
                     "tolerance": cell(_tolerance(r)), "verdict": {"text": _verdict(r), "v": None, "css": "verdict"},
                     "note": cell(r["note"] if r["metric"] != "claim" else "")}
            table_rows.append({"css": _verdict(r), "cells": [every[h] for h in headings]})
        return {"headings": headings, "rows": table_rows, "note": ""}

    sources = list(dict.fromkeys(r["source"] for r in comparison))
    groups = [{"source": src or "the paper", "table": comparison_rows([r for r in comparison if r["source"] == src], full=False)} for src in sources]
    keys = sorted({k for r in rows for k in r} - {"metric", "value"})
    measurements = {"headings": ["metric", *keys, "value"], "note": "", "rows": [
        {"css": "", "cells": [cell(r["metric"]), *(cell(_parameter(k, r.get(k))) for k in keys),
                              cell(metric_formatter(r["metric"])(r["value"]), r["value"], True)]} for r in rows]}
    misses = [{"source": r["source"], "what": _what(r), "paper": metric_formatter(r["metric"])(r["paper"]),
               "dcsim": metric_formatter(r["metric"] if r["metric"] != "claim" else "ratio")(r["dcsim"]), "tolerance": _tolerance(r)}
              for r in comparison if not r["holds"]]
    figure = {"caption": f"dcsim: {spec['title']}", "png": base64.b64encode(fig.read_bytes()).decode(), "missing": None}
    return render(
        "reproduction.html.j2",
        title=spec["title"], paper=spec["paper"], source=spec.get("source", "the paper"), description=spec.get("description", ""),
        mode="Quick version (reduced scale, as CI runs it)" if quick else "Full version",
        date=datetime.date.today().isoformat(), held=sum(1 for r in comparison if r["holds"]), total=len(comparison), misses=misses,
        figures=[figure], groups=groups, comparison=comparison_rows(comparison, full=True), measurements=measurements,
    )


def main(name: str | None, out: Path, quick: bool, list_only: bool) -> int:
    names = available()
    if list_only or name is None:
        width = max(map(len, names))
        for n in names:
            spec = tomllib.loads((ROOT / n / "experiment.toml").read_text(encoding="utf-8"))
            print(f"{n:<{width}}  {spec['title']}\n{'':<{width}}  {spec['paper']}")
        return 0
    if name not in names:
        print(f"dcsim: error: unknown experiment {name!r}: expected one of {', '.join(names)}", file=sys.stderr)
        return 2
    comparison = run(name, out, quick)
    held = sum(1 for r in comparison if r["holds"])
    for r in comparison:
        mark = "ok  " if r["holds"] else "MISS"
        value = metric_formatter(r["metric"] if r["metric"] != "claim" else "ratio")
        paper = f"paper {value(r['paper'])}, " if r["paper"] is not None else ""
        source = f"[{r['source']}] " if r["source"] else ""
        print(f"{mark} {source}{_what(r)}: {paper}dcsim {value(r['dcsim'])} ({_tolerance(r)})")
    print(f"{held}/{len(comparison)} rows hold; {out / name}/report.html")
    return 0
