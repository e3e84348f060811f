"""`dcsim reproduce`: run a seed paper's experiment and compare with the
paper. Writes OUT/NAME/comparison.csv (experiment, metric, condition, paper,
dcsim, ratio, tolerance, holds, note, source, seeds, dcsim_lo, dcsim_hi,
verdict), OUT/NAME/measurements.json, OUT/NAME/figures/ and
OUT/NAME/report.html. A row is a reference number (within a relative
tolerance of the paper's), a claim (a ratio of two conditions below a bound)
or a bound (a value within absolute limits); its source is the paper's
figure, table or text it comes from.

Every experiment runs on several seeds (replicas). A row's dcsim value is the
mean over seeds, with a 95 % Student-t interval of that mean; its verdict is
`holds` when the whole interval meets the row's test, `misses` when the whole
interval fails it, and `inconclusive` otherwise. A claim is judged on the
paired ratio: both conditions of one seed, then the interval over seeds. An
experiment whose second seed repeats its first exactly takes no random input
and runs once (seeds = 1, a point interval).

Metric names end in their unit (`_us`, `_ms`, `_gbps`, `_pkts`, ...), which
the report and the terminal print beside every value."""

from __future__ import annotations

import csv
import datetime
import io
import json
import math
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Callable

from . import units
from .experiments import ROOT, RUNNERS
from .experiments._common import run_replicas, shared_pool
from .results import write_file_atomic

FIELDS = ["experiment", "metric", "condition", "paper", "dcsim", "ratio", "tolerance", "holds", "note", "source",
          "seeds", "dcsim_lo", "dcsim_hi", "verdict"]
# Replicas per experiment unless --seeds says otherwise (issue 27): a verdict
# is an interval over seeds, never one run. Quick versions shrink the runs,
# not the replicas: a 95 % t-interval over 3 seeds is twice as wide as over
# 5 (t = 4.30 against 2.78), and 5 seeds cost 5/3 as much, where halving the
# width with longer runs would cost four times as much. An experiment's file
# may ask for more (`seeds`, and `quick_seeds` for a quick version that
# shrinks the runs; one that does not runs the same seeds):
# docs/reproduce.md, "Seeds and verdicts", says which do and why.
SEEDS = 5

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


def _write_csv(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> None:
    """`rows` under `fields` (other keys left out), written atomically."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    _write_text(path, buf.getvalue())


def available() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir() if (p / "experiment.toml").exists())


def _find(rows: list[dict[str, Any]], metric: str, condition: dict[str, Any]) -> float | None:
    for r in rows:
        if r["metric"] == metric and all(r.get(k) == v for k, v in condition.items()):
            return r["value"]
    return None


def interval(values: list[float], log: bool = False) -> tuple[float, float, float]:
    """The mean over seeds and a 95 % Student-t interval of it; with `log`
    (ratios), of the mean logarithm, returned as the geometric mean and its
    interval, so that a ratio and its inverse get mirrored intervals. Seeds
    that give the same value give a point."""
    from scipy import stats

    if log:
        mean, lo, hi = interval([math.log(v) for v in values])
        return math.exp(mean), math.exp(lo), math.exp(hi)
    mean = statistics.fmean(values)
    if len(values) < 2 or min(values) == max(values):
        return mean, mean, mean
    half = float(stats.t.ppf(0.975, len(values) - 1)) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def verdict(lo: float, hi: float, low: float | None, high: float | None) -> str:
    """Whether the interval [lo, hi] lies inside [low, high] (holds), wholly
    outside it (misses), or across one of its edges (inconclusive)."""
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    if low <= lo and hi <= high:
        return "holds"
    if hi < low or lo > high:
        return "misses"
    return "inconclusive"


def _stats(values: list[float | None]) -> tuple[float | None, float | None, float | None]:
    """The mean over seeds and its interval; no interval (the row misses)
    when a seed lacks the measurement."""
    seen = [v for v in values if v is not None]
    if len(seen) < len(values) or not seen:
        return (statistics.fmean(seen) if seen else None), None, None
    return interval(seen)


def _claim_stats(pairs: list[tuple[float | None, float | None]], below: float) -> tuple[float | None, float | None, float | None]:
    """A claim's paired ratio left / right over seeds: the geometric mean and
    its interval. Where a seed counts zero on one side (no timeouts, no missed
    deadline) there is no logarithm: then the ratio of the means, with the
    t-interval of the paired differences left - below x right divided by the
    mean of right, so that the interval excludes `below` exactly when the
    difference's interval excludes zero."""
    if any(left is None or right is None for left, right in pairs):
        seen = [left / right for left, right in pairs if left is not None and right]
        return (statistics.fmean(seen) if seen else None), None, None
    if all(left > 0 and right > 0 for left, right in pairs):
        return interval([left / right for left, right in pairs], log=True)
    mean_right = statistics.fmean(right for _, right in pairs)
    if mean_right <= 0:  # zero in every seed on the right: the ratio is undefined
        return None, None, None
    _, lo, hi = interval([left - below * right for left, right in pairs])
    return statistics.fmean(left for left, _ in pairs) / mean_right, below + lo / mean_right, below + hi / mean_right


def _row(name: str, claim: bool, metric: str, condition: dict[str, Any], stats: tuple[float | None, float | None, float | None],
         seeds: int, test: tuple[float | None, float | None], paper: float | None, tolerance: Any, note: str,
         source: str) -> dict[str, Any]:
    """One comparison row from its statistic over seeds and its test [low, high]."""
    mean, lo, hi = stats
    judged = "misses" if lo is None or hi is None else verdict(lo, hi, *test)
    ratio = mean if claim else (mean / paper if mean is not None and paper else None)
    return {"experiment": name, "metric": metric, "condition": json.dumps(condition), "paper": paper, "dcsim": mean,
            "ratio": ratio, "tolerance": tolerance, "holds": judged == "holds", "note": note, "source": source,
            "seeds": seeds, "dcsim_lo": lo, "dcsim_hi": hi, "verdict": judged}


def compare(name: str, spec: dict[str, Any], replicas: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Comparison rows from the measurements of every seed (replicas[i]: seed i's rows)."""
    out = []
    default_source = spec.get("source", "")
    first = replicas[0]

    def ran(condition: dict[str, Any]) -> bool:
        """Whether any measurement was taken under this condition (every
        quick version runs every condition a row compares: the tests check
        that no row is left out here)."""
        return any(all(r.get(k) == v for k, v in condition.items()) for r in first)

    for ref in spec.get("reference", []):
        if not ran(ref["condition"]):
            continue
        values = [_find(rows, ref["metric"], ref["condition"]) for rows in replicas]
        paper, tol = ref["paper"], ref["tolerance"]
        low, high = sorted((paper * (1 - tol), paper * (1 + tol)))
        out.append(_row(name, False, ref["metric"], ref["condition"], _stats(values), len(values), (low, high), paper, tol,
                        ref.get("note", ""), ref.get("source", default_source)))
    for claim in spec.get("claim", []):
        if not (ran(claim["left"]) and ran(claim["right"])):
            continue
        metric = claim.get("metric", "completion_us")
        # Paired: both conditions of the same seed, then the interval over seeds.
        pairs = [(_find(rows, metric, claim["left"]), _find(rows, metric, claim["right"])) for rows in replicas]
        below = claim["below"]
        # A ratio at the bound misses, as before: the claim is "below".
        test = (None, math.nextafter(below, -math.inf))
        out.append(_row(name, True, "claim", {"left": claim["left"], "right": claim["right"]}, _claim_stats(pairs, below),
                        len(pairs), test, None, f"< {below}", claim["text"], claim.get("source", default_source)))
    for bound in spec.get("bound", []):
        if not ran(bound["condition"]):
            continue
        values = [_find(rows, bound["metric"], bound["condition"]) for rows in replicas]
        lo, hi = bound.get("at_least"), bound.get("at_most")
        limits = " and ".join(t for t in (lo is not None and f">= {lo}", hi is not None and f"<= {hi}") if t)
        row = _row(name, False, bound["metric"], bound["condition"], _stats(values), len(values), (lo, hi), None, limits, bound["text"],
                   bound.get("source", default_source))
        row["paper"] = bound.get("paper")
        out.append(row)
    return out


def variants(name: str) -> dict[str, dict[str, Any]]:
    """The experiment's named variants ([[variant]] in experiment.toml): the
    same experiment with a few scenario keys (`set`) or runner parameters
    (`spec`) otherwise, to show what one modelled difference does to its
    rows (docs/reproduce.md). A variant given as `like = "other-experiment"`
    is that experiment's variant of the same name, written once there."""
    spec = tomllib.loads((ROOT / name / "experiment.toml").read_text(encoding="utf-8"))
    return {v["name"]: variants(v["like"])[v["name"]] if "like" in v else v for v in spec.get("variant", [])}


def run_name(name: str, variant: str | None) -> str:
    """Where a run's outputs go and what its rows' `experiment` says."""
    return f"{name}--{variant}" if variant else name


def quick_spec(table: dict[str, Any]) -> dict[str, Any]:
    """The quick version's spec: at every level of the experiment file, a
    quick_X key replaces X. It shrinks a run (a shorter stop) or drops a
    condition no row compares, never a row: every row of the full version
    is compared in the quick one too."""
    full = {k: quick_spec(v) if isinstance(v, dict) else v for k, v in table.items() if not k.startswith("quick_")}
    return full | {k.removeprefix("quick_"): v for k, v in table.items() if k.startswith("quick_")}


def replicas_wanted(spec: dict[str, Any], seeds: int | None) -> int:
    """How many seeds a run takes: --seeds, else the experiment file's
    `seeds` (its quick version's `quick_seeds`), else SEEDS."""
    return seeds or spec.get("seeds", SEEDS)


def run(name: str, out: Path, quick: bool, seeds: int | None = None, variant: str | None = None) -> list[dict[str, Any]]:
    """Run the experiment (or one of its variants) on `seeds` replicas
    (default: its file's `seeds`, else SEEDS), compare with the paper and
    write the outputs."""
    folder = ROOT / name
    spec = tomllib.loads((folder / "experiment.toml").read_text(encoding="utf-8"))
    if variant:
        v = variants(name)[variant]
        spec = spec | v.get("spec", {}) | {"variant_set": v.get("set", {}), "title": f"{spec['title']} (variant {variant}: {v['why']})"}
    if quick:
        spec = quick_spec(spec)
    runner, figure = RUNNERS[name]
    n = replicas_wanted(spec, seeds)
    with shared_pool():
        # Seeds 1 and 2 first, to learn whether the seed enters anything the
        # experiment measures; then the rest, side by side.
        replicas = run_replicas(runner, spec, folder, range(min(n, 2)))
        if n > 1 and replicas[1] == replicas[0]:
            # No random input: more seeds would repeat the same run, and one run is exact.
            print("  the second seed repeats the first exactly: the experiment is deterministic", file=sys.stderr)
            replicas.pop()
        elif n > 2:
            replicas += run_replicas(runner, spec, folder, range(2, n))
    comparison = compare(run_name(name, variant), spec, replicas)
    rows = [{"seed": replica + 1} | r for replica, rs in enumerate(replicas) for r in rs]
    dest = out / run_name(name, variant)
    _write_csv(dest / "comparison.csv", FIELDS, comparison)
    _write_text(dest / "measurements.json", json.dumps(rows, indent=2) + "\n")
    from .plot import save

    # The figure shows the first seed's run, as a paper's figure shows one run.
    fig_path = save(figure(replicas[0], spec), dest / "figures" / f"{run_name(name, variant)}.png")
    _write_text(dest / "report.html", report_page(spec, comparison, rows, fig_path, quick, len(replicas), n))
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


def _interval_text(row: dict[str, Any]) -> str:
    """The 95 % interval over seeds, in the row's unit ("–" without one)."""
    if row["dcsim_lo"] is None:
        return units.MISSING
    value = metric_formatter(row["metric"] if row["metric"] != "claim" else "ratio")
    return f"{value(row['dcsim_lo'])} to {value(row['dcsim_hi'])}"


def _runs(seeds: int, requested: int) -> str:
    """How many runs decided the verdicts, in words."""
    if seeds > 1:
        return f"{seeds} seeds"
    return "one run (deterministic: a second seed repeated the first)" if requested > 1 else "one seed"


def report_page(spec: dict[str, Any], comparison: list[dict[str, Any]], rows: list[dict[str, Any]], fig: Path, quick: bool,
                seeds: int, requested: int) -> str:
    """The reproduction's report: a summary, dcsim's figure beside the
    paper's numbers grouped by the figure or table they come from, every
    comparison row and every measurement."""
    import base64

    from .report import cell, render

    def comparison_rows(subset: list[dict[str, Any]], full: bool) -> dict[str, Any]:
        """Every column (full), or what fits beside the figure."""
        headings = (["source", "what", "paper", "dcsim", "interval", "ratio", "tolerance", "verdict", "note"] if full
                    else ["what", "paper", "dcsim", "interval", "tolerance", "verdict"])
        table_rows = []
        for r in subset:
            value = metric_formatter(r["metric"] if r["metric"] != "claim" else "ratio")
            every = {"source": cell(r["source"]), "what": cell(_what(r)), "paper": cell(value(r["paper"]), r["paper"], True),
                     "dcsim": cell(value(r["dcsim"]), r["dcsim"], True), "interval": cell(_interval_text(r), r["dcsim_lo"], True),
                     "ratio": cell(units.ratio(r["ratio"]), r["ratio"], True),
                     "tolerance": cell(_tolerance(r)), "verdict": {"text": r["verdict"], "v": None, "css": "verdict"},
                     "note": cell(r["note"] if r["metric"] != "claim" else "")}
            table_rows.append({"css": r["verdict"], "cells": [every[h] for h in headings]})
        return {"headings": headings, "rows": table_rows, "note": ""}

    sources = list(dict.fromkeys(r["source"] for r in comparison))
    groups = [{"source": src or "the paper", "table": comparison_rows([r for r in comparison if r["source"] == src], full=False)} for src in sources]
    keys = sorted({k for r in rows for k in r} - {"metric", "value"})
    measurements = {"headings": ["metric", *keys, "value"], "note": "", "rows": [
        {"css": "", "cells": [cell(r["metric"]), *(cell(_parameter(k, r.get(k))) for k in keys),
                              cell(metric_formatter(r["metric"])(r["value"]), r["value"], True)]} for r in rows]}
    misses = [{"source": r["source"], "what": _what(r), "paper": metric_formatter(r["metric"])(r["paper"]),
               "dcsim": metric_formatter(r["metric"] if r["metric"] != "claim" else "ratio")(r["dcsim"]),
               "interval": _interval_text(r), "tolerance": _tolerance(r), "verdict": r["verdict"]}
              for r in comparison if r["verdict"] != "holds"]
    figure = {"caption": f"dcsim: {spec['title']}", "png": base64.b64encode(fig.read_bytes()).decode(), "missing": None}
    return render(
        "reproduction.html.j2",
        title=spec["title"], paper=spec["paper"], source=spec.get("source", "the paper"), description=spec.get("description", ""),
        mode=("Quick version (every row, at the scale CI runs)" if quick else "Full version") + f", {_runs(seeds, requested)}",
        date=datetime.date.today().isoformat(), held=sum(1 for r in comparison if r["holds"]), total=len(comparison),
        inconclusive=sum(1 for r in comparison if r["verdict"] == "inconclusive"), misses=misses,
        figures=[figure], groups=groups, comparison=comparison_rows(comparison, full=True), measurements=measurements,
    )


SUMMARY_FIELDS = ["family", "experiment", "mode", "rows", "holds", "misses", "inconclusive", "seeds", "wall_s", "version", "date"]


def _family(name: str) -> str:
    families = {"hull": "HULL", "hscc": "HSCC", "ecnsharp": "ECN#", "clues": "CLUES", "pfc": "PFC", "dcqcn": "DCQCN", "timely": "TIMELY", "hpcc": "HPCC", "swift": "Swift", "ndp": "NDP", "homa": "Homa"}
    return families.get(name.split("-")[0], name.split("-")[0])


def _build() -> str:
    """dcsim's version, and the commit when it runs from a git checkout
    ("-dirty" with uncommitted changes), for the summary's `version`."""
    from . import __version__

    def run_git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)

    try:
        sha = run_git("rev-parse", "--short", "HEAD")
        if sha.returncode != 0:
            return __version__
        dirty = run_git("status", "--porcelain", "--untracked-files=no").stdout.strip()
        return f"{__version__} ({sha.stdout.strip()}{'-dirty' if dirty else ''})"
    except (OSError, subprocess.SubprocessError):
        return __version__


def _fingerprint(name: str) -> str:
    """What a reproduction's results depend on besides mode and seeds: the
    simulator core, the runners and the experiment's own files."""
    import hashlib

    from . import _core

    h = hashlib.sha256(Path(_core.__file__).read_bytes())
    spec = tomllib.loads((ROOT / name / "experiment.toml").read_text(encoding="utf-8"))
    # An experiment may run another's scenario files (scenario = "../x/...")
    # and take another's variants (like = "x").
    folders = sorted({ROOT / name, (ROOT / name / spec.get("scenario", ".")).resolve().parent,
                      *(ROOT / v["like"] for v in spec.get("variant", []) if "like" in v)})
    for f in [Path(__file__), *sorted(Path(ROOT).glob("*.py")), *(g for d in folders for g in sorted(d.rglob("*")))]:
        if f.is_file():
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _finished(dest: Path, quick: bool, requested: int | None, fingerprint: str) -> dict[str, Any] | None:
    """The record of a completed run of this experiment with the same mode,
    seeds and inputs (run.json is written after every other output)."""
    try:
        record = json.loads((dest / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    same = (record.get("quick"), record.get("requested_seeds"), record.get("fingerprint")) == (quick, requested, fingerprint)
    return record if same else None


def run_all(out: Path, quick: bool, seeds: int | None) -> list[dict[str, Any]]:
    """Every experiment, one after another (each runs its jobs on every core);
    resumable: an experiment whose run.json matches is kept. Writes
    OUT/summary.csv (per experiment, per family and in all) and OUT/index.html."""
    build = _build()
    # The experiments, then in full mode their variants (reported apart: they
    # diagnose full-mode misses and do not count toward a family's rows).
    names = available()
    todo = [(n, None) for n in names] + ([] if quick else [(n, v) for n in names for v in variants(n)])
    records = []
    for k, (name, variant) in enumerate(todo, 1):
        label = run_name(name, variant)
        dest = out / label
        fingerprint = _fingerprint(name)
        record = _finished(dest, quick, seeds, fingerprint)
        if record is not None:
            print(f"[{k}/{len(todo)}] {label}: finished before, kept", file=sys.stderr, flush=True)
        else:
            print(f"[{k}/{len(todo)}] {label}", file=sys.stderr, flush=True)
            start = time.perf_counter()
            comparison = run(name, out, quick, seeds, variant)
            verdicts = [r["verdict"] for r in comparison]
            family = _family(name) + (" variants" if variant else "")
            record = {"family": family, "experiment": label, "mode": "quick" if quick else "full", "rows": len(verdicts),
                      "holds": verdicts.count("holds"), "misses": verdicts.count("misses"),
                      "inconclusive": verdicts.count("inconclusive"), "seeds": comparison[0]["seeds"] if comparison else 0,
                      "wall_s": round(time.perf_counter() - start, 1), "version": build,
                      "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                      "quick": quick, "requested_seeds": seeds, "fingerprint": fingerprint}
            _write_text(dest / "run.json", json.dumps(record, indent=1) + "\n")
        records.append(record)
    table = summary_table(records)
    _write_csv(out / "summary.csv", SUMMARY_FIELDS, table)
    from .report import render

    _write_text(out / "index.html", render("reproduce_index.html.j2", title="dcsim reproductions", rows=table,
                                            mode="quick" if quick else "full", seeds=seeds))
    return table


def summary_table(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The experiments' records, then one row per family and one for all."""
    import pandas as pd

    frame = pd.DataFrame(records)
    counts = ["rows", "holds", "misses", "inconclusive", "wall_s"]
    totals = []
    main = frame[~frame["family"].str.endswith(" variants")]
    for family, group in [*frame.groupby("family", sort=False), ("all", main)]:
        row = group[counts].sum().to_dict() | {"family": family, "experiment": "(all)", "mode": group["mode"].iloc[0],
                                               "seeds": "-".join(map(str, sorted({group['seeds'].min(), group['seeds'].max()}))),
                                               "version": group["version"].iloc[0], "date": group["date"].max()}
        totals.append({k: (round(v, 1) if k == "wall_s" else int(v) if k in counts else v) for k, v in row.items()})
    return [dict(r) for r in records] + totals


def main(name: str | None, out: Path, quick: bool, list_only: bool, seeds: int | None = None, every: bool = False,
         variant: str | None = None) -> int:
    if every:
        if name:
            print(f"dcsim: error: reproduce: give an experiment name or --all, not both (got {name!r} and --all)", file=sys.stderr)
            return 2
        table = run_all(out, quick, seeds)
        for r in table:
            if r["experiment"] == "(all)":
                print(f"{r['family']:>6}: {r['holds']}/{r['rows']} rows hold, {r['misses']} miss, {r['inconclusive']} inconclusive "
                      f"({r['wall_s']:.0f} s)")
        print(f"{out / 'summary.csv'}, {out / 'index.html'}")
        return 0
    names = available()
    if list_only or name is None:
        width = max(map(len, names))
        for n in names:
            spec = tomllib.loads((ROOT / n / "experiment.toml").read_text(encoding="utf-8"))
            print(f"{n:<{width}}  {spec['title']}\n{'':<{width}}  {spec['paper']}")
            for v in variants(n).values():
                print(f"{'':<{width}}  --variant {v['name']}: {v['why']}")
        return 0
    if name not in names:
        print(f"dcsim: error: unknown experiment {name!r}: expected one of {', '.join(names)}", file=sys.stderr)
        return 2
    if variant is not None and variant not in variants(name):
        allowed = ", ".join(variants(name)) or "none"
        print(f"dcsim: error: --variant: {name} has no variant {variant!r}: expected one of: {allowed}", file=sys.stderr)
        return 2
    comparison = run(name, out, quick, seeds, variant)
    marks = {"holds": "ok  ", "misses": "MISS", "inconclusive": "??  "}
    for r in comparison:
        value = metric_formatter(r["metric"] if r["metric"] != "claim" else "ratio")
        paper = f"paper {value(r['paper'])}, " if r["paper"] is not None else ""
        source = f"[{r['source']}] " if r["source"] else ""
        spread = f" [{_interval_text(r)}]" if r["dcsim_lo"] is not None and r["dcsim_lo"] != r["dcsim_hi"] else ""
        print(f"{marks[r['verdict']]} {source}{_what(r)}: {paper}dcsim {value(r['dcsim'])}{spread} ({_tolerance(r)})")
    held = sum(1 for r in comparison if r["holds"])
    unsure = sum(1 for r in comparison if r["verdict"] == "inconclusive")
    requested = seeds or SEEDS
    used = comparison[0]["seeds"] if comparison else requested
    print(f"{held}/{len(comparison)} rows hold, {unsure} inconclusive, {_runs(used, requested)}; {out / run_name(name, variant)}/report.html")
    return 0
