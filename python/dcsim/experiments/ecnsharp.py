"""Reproductions of seed 003 (ECN#): runners that return measured rows
{metric, condition..., value} and the figures."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

from ._common import Job, Rows, _finish, _mean, _pct, _run_jobs

# ---- ecnsharp-dwrr: Fig. 20 ------------------------------------------------------------------


def _short_flows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The mq example's short flows, drawn once from the experiment's own seed
    (the same list for every scheme)."""
    rng = random.Random(spec["short_seed"])
    flows = []
    for _ in range(spec["short_flows"]):
        flows.append({"src": rng.choice(spec["short_senders"]), "dst": spec["receiver"], "size": f"{spec['short_bytes']}B",
                      "start": f"{round(rng.uniform(0, spec['short_until_s']) * 1e9)}ns", "dscp": rng.randrange(3)})
    return flows


def _goodput_by_class(r: Any, spec: dict[str, Any]) -> Rows:
    """Each long flow's goodput (Gb/s) over each phase, from its sender's
    cumulative ACKed bytes in the TCP trace."""
    flows = [f for f in r.flows.to_pylist() if f["bytes"] is None]
    t = r.tcp_trace
    trace = list(zip(t["time"].to_pylist(), t["conn"].to_pylist(), t["side"].to_pylist(), t["bytes_acked"].to_pylist()))
    rows: Rows = []
    for phase, (a, b) in spec["phases"].items():
        for f in flows:
            acked = [(time, x) for time, conn, side, x in trace if conn == f["conn"] and side == 0 and a <= time <= b]
            value = (acked[-1][1] - acked[0][1]) * 8 / (acked[-1][0] - acked[0][0]) / 1e9 if len(acked) > 1 else 0.0
            rows.append({"phase": phase, "class": f["dscp"], "metric": "goodput_gbps", "value": value})
        total = sum(x["value"] for x in rows if x["phase"] == phase)
        for x in [x for x in rows if x["phase"] == phase]:
            rows.append({"phase": phase, "class": x["class"], "metric": "share", "value": x["value"] / total if total else None})
    return rows


def _measure_dwrr(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    short = [f["fct"] * 1e3 for f in r.flows.to_pylist() if f["bytes"] == spec["short_bytes"] and f["fct"] is not None]
    return _goodput_by_class(r, spec) + [
        {"phase": "all", "class": "all", "metric": "short_fct_mean_ms", "value": _mean(short)},
        {"phase": "all", "class": "all", "metric": "short_fct_p99_ms", "value": _pct(short, 99)},
        {"phase": "all", "class": "all", "metric": "short_flows_done", "value": len(short)},
        {"phase": "all", "class": "all", "metric": "short_fcts_ms", "value": None, "fcts": sorted(short)},
    ]


def ecnsharp_dwrr(spec: dict[str, Any], folder: Path, quick: bool) -> Rows:
    scenario = str(folder / spec["scenario"])
    base = tomllib.loads((folder / spec["scenario"]).read_text(encoding="utf-8"))
    flows = base["workload"][0]["flows"] + _short_flows(spec)
    jobs: list[Job] = [({"scheme": name}, scenario, None, {"switch.aqm": aqm, "workload[0].flows": flows}) for name, aqm in spec["aqm"].items()]
    return _run_jobs(jobs, _measure_dwrr, spec)


def ecnsharp_dwrr_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    phases = list(spec["phases"])
    width = 0.8 / 3
    for c in range(3):
        vals = [next((r["value"] for r in rows if r["scheme"] == schemes[0] and r["phase"] == p and r["class"] == c and r["metric"] == "goodput_gbps"), 0) for p in phases]
        axes[0].bar([i + c * width for i in range(len(phases))], vals, width=width, label=f"class {c} ({schemes[0]})")
    axes[0].set_xticks([i + width for i in range(len(phases))], phases)
    axes[0].set(ylabel="goodput (Gb/s)", title="Fig. 20a: long flows per class")
    for s in schemes:
        fcts = next((r["fcts"] for r in rows if r["scheme"] == s and r["metric"] == "short_fcts_ms"), [])
        axes[1].plot(fcts, [(i + 1) / len(fcts) for i in range(len(fcts))], label=s)
    axes[1].set(xlabel="short-flow FCT (ms)", ylabel="CDF", title="Fig. 20b: 28 KB flows")
    return _finish(fig, axes)


RUNNERS = {"ecnsharp-dwrr": (ecnsharp_dwrr, ecnsharp_dwrr_figure)}
