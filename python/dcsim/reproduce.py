"""`dcsim reproduce`: run a seed paper's experiment and compare with the
paper. Writes OUT/NAME/comparison.csv (experiment, metric, condition, paper,
dcsim, ratio, tolerance, holds, note), OUT/NAME/figures/ and
OUT/NAME/report.html. A row is a reference number (within a relative
tolerance of the paper's), a claim (a ratio of two conditions below a bound)
or a bound (a value within absolute limits). Misses stay visible: a row that does not hold says so."""

from __future__ import annotations

import csv
import html
import io
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from .experiments import ROOT, RUNNERS
from .results import write_file_atomic


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
                    "dcsim": v, "ratio": ratio, "tolerance": ref["tolerance"], "holds": holds, "note": ref.get("note", "")})
    for claim in spec.get("claim", []):
        if not (ran(claim["left"]) and ran(claim["right"])):
            continue
        left = _find(rows, claim.get("metric", "completion_us"), claim["left"])
        right = _find(rows, claim.get("metric", "completion_us"), claim["right"])
        ratio = left / right if left is not None and right else None
        holds = ratio is not None and ratio < claim["below"]
        out.append({"experiment": name, "metric": "claim", "condition": json.dumps({"left": claim["left"], "right": claim["right"]}),
                    "paper": None, "dcsim": ratio, "ratio": ratio, "tolerance": f"< {claim['below']}", "holds": holds, "note": claim["text"]})
    for bound in spec.get("bound", []):
        if not ran(bound["condition"]):
            continue
        v = _find(rows, bound["metric"], bound["condition"])
        lo, hi = bound.get("at_least"), bound.get("at_most")
        holds = v is not None and (lo is None or v >= lo) and (hi is None or v <= hi)
        limits = " and ".join(t for t in (lo is not None and f">= {lo}", hi is not None and f"<= {hi}") if t)
        out.append({"experiment": name, "metric": bound["metric"], "condition": json.dumps(bound["condition"]), "paper": bound.get("paper"),
                    "dcsim": v, "ratio": None, "tolerance": limits, "holds": holds, "note": bound["text"]})
    return out


def run(name: str, out: Path, quick: bool) -> list[dict[str, Any]]:
    folder = ROOT / name
    spec = tomllib.loads((folder / "experiment.toml").read_text(encoding="utf-8"))
    runner, figure = RUNNERS[name]
    rows = runner(spec, folder, quick)
    comparison = compare(name, spec, rows)
    dest = out / name
    (dest / "figures").mkdir(parents=True, exist_ok=True)
    fields = ["experiment", "metric", "condition", "paper", "dcsim", "ratio", "tolerance", "holds", "note"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields)
    w.writeheader()
    w.writerows(comparison)
    _write_text(dest / "comparison.csv", buf.getvalue())
    _write_text(dest / "measurements.json", json.dumps(rows, indent=2) + "\n")
    from .plot import save

    fig_path = save(figure(rows, spec), dest / "figures" / f"{name}.png")
    _report(dest, spec, comparison, rows, fig_path, quick)
    return comparison


def _report(dest: Path, spec: dict[str, Any], comparison: list[dict[str, Any]], rows: list[dict[str, Any]], fig: Path, quick: bool) -> None:
    import base64

    from . import __version__

    def cell(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else html.escape("" if v is None else str(v))

    head = "".join(f"<th>{c}</th>" for c in comparison[0]) if comparison else ""
    body = "".join("<tr style='background:%s'>" % ("#e8f5e9" if r["holds"] else "#ffebee") + "".join(f"<td>{cell(v)}</td>" for v in r.values()) + "</tr>" for r in comparison)
    img = base64.b64encode(fig.read_bytes()).decode()
    page = f"""<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(spec['name'])}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto}}table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ccc;padding:3px 6px}}</style></head><body>
<h1>{html.escape(spec['title'])}</h1><p>{html.escape(spec['paper'])}. dcsim {__version__}{' (quick version)' if quick else ''}.</p>
<p>{html.escape(spec.get('description', ''))}</p>
<h2>Comparison with the paper</h2><table><tr>{head}</tr>{body}</table>
<h2>Figure</h2><img src='data:image/png;base64,{img}'>
<h2>Measurements</h2><pre>{html.escape(json.dumps(rows, indent=1))}</pre></body></html>"""
    _write_text(dest / "report.html", page)


def main(name: str | None, out: Path, quick: bool, list_only: bool) -> int:
    names = available()
    if list_only or name is None:
        for n in names:
            spec = tomllib.loads((ROOT / n / "experiment.toml").read_text(encoding="utf-8"))
            print(f"{n:<16} {spec['title']} — {spec['paper']}")
        return 0
    if name not in names:
        print(f"dcsim: error: unknown experiment {name!r}: expected one of {', '.join(names)}", file=sys.stderr)
        return 2
    comparison = run(name, out, quick)
    held = sum(1 for r in comparison if r["holds"])
    for r in comparison:
        mark = "ok  " if r["holds"] else "MISS"
        value = f"{r['dcsim']:.4g}" if isinstance(r["dcsim"], float) else r["dcsim"]
        print(f"{mark} {r['metric']:<14} {r['condition']:<48} paper {r['paper']}  dcsim {value}  ({r['tolerance']})")
    print(f"{held}/{len(comparison)} rows hold; {out / name}/report.html")
    return 0
