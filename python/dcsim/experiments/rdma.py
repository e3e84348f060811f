"""Reproductions of the RDMA papers (issue 28): PFC's congestion spreading
and deadlock, DCQCN's fairness; runners return measured rows
{metric, condition..., value} and draw the figures."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from .. import units
from ._common import Job, Rows, _finish, _run_jobs


def _base(folder: Path, spec: dict[str, Any]) -> dict[str, Any]:
    return tomllib.loads((folder / spec["scenario"]).read_text(encoding="utf-8"))


def _pause_frames(r: Any) -> int:
    return sum(r.pfc["pauses_sent"].to_pylist()) if r.pfc.num_rows else 0


def _goodput_to(r: Any, dst: int) -> float:
    """Payload goodput (Gb/s) delivered to host `dst` over the whole run."""
    f = r.flows
    got = sum(b for b, d in zip(f["delivered"].to_pylist(), f["dst"].to_pylist()) if d == dst)
    return got * 8 / r.summary["sim_seconds"] / 1e9


# ---- pfc-spreading -----------------------------------------------------------------------------


def _measure_spreading(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    return [
        {"metric": "victim_gbps", "value": _goodput_to(r, spec["victim"])},
        {"metric": "congested_gbps", "value": _goodput_to(r, spec["congested"])},
        {"metric": "pause_frames", "value": _pause_frames(r)},
        {"metric": "drops", "value": r.summary["packets_dropped"]},
    ]


def pfc_spreading(spec: dict[str, Any], folder: Path) -> Rows:
    jobs: list[Job] = []
    for name, scheme in spec["schemes"].items():
        s = _base(folder, spec)
        if not scheme["pfc"]:
            del s["switch"]["pfc"]
        s["rdma"]["cc"] = scheme["cc"]
        jobs.append(({"scheme": name}, s, None, {}))
    return _run_jobs(jobs, _measure_spreading, spec)


def pfc_spreading_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    value = {(r["scheme"], r["metric"]): r["value"] for r in rows}
    x = range(len(schemes))
    axes[0].bar([i - 0.2 for i in x], [value[s, "victim_gbps"] for s in schemes], width=0.4, label="victim (free path)")
    axes[0].bar([i + 0.2 for i in x], [value[s, "congested_gbps"] for s in schemes], width=0.4, label="congested receiver")
    axes[0].set_xticks(list(x), schemes)
    axes[0].set(ylabel="goodput (Gb/s)", title="Goodput by receiver")
    axes[1].bar(list(x), [value[s, "pause_frames"] for s in schemes], label="PAUSE frames sent")
    axes[1].set_xticks(list(x), schemes)
    axes[1].set(ylabel="frames", title="PFC PAUSE frames")
    return _finish(fig, axes)


# ---- pfc-deadlock ------------------------------------------------------------------------------


def _measure_deadlock(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    found = r.summary.get("pfc_deadlock")
    return [
        {"metric": "deadlock", "value": 1 if found else 0},
        {"metric": "deadlock_at_ms", "value": found["at"] * 1e3 if found else None},
        {"metric": "cycle_ports", "value": len(found["ports"]) if found else 0},
        {"metric": "delivered_gbps", "value": sum(r.flows["delivered"].to_pylist()) * 8 / r.summary["sim_seconds"] / 1e9},
    ]


def pfc_deadlock(spec: dict[str, Any], folder: Path) -> Rows:
    jobs: list[Job] = []
    for name, hops in spec["patterns"].items():
        s = _base(folder, spec)
        n = s["topology"]["switches"]
        s["workload"] = [{"type": "bulk", "src": i, "dst": (i + hops) % n, "size": "inf"} for i in range(n)]
        jobs.append(({"pattern": name}, s, None, {}))
    return _run_jobs(jobs, _measure_deadlock, spec)


def pfc_deadlock_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    value = {(r["pattern"], r["metric"]): r["value"] for r in rows}
    ax.bar(patterns, [value[p, "delivered_gbps"] for p in patterns], label="delivered until the run stopped")
    for i, p in enumerate(patterns):
        if value[p, "deadlock"]:
            ax.annotate(f"deadlock at {value[p, 'deadlock_at_ms']:.1f} ms", (i, value[p, "delivered_gbps"]), ha="center", va="bottom")
    ax.set(ylabel="goodput over the run (Gb/s)", title="Five-switch ring under PFC")
    return _finish(fig, [ax])


# ---- dcqcn-fairness ----------------------------------------------------------------------------


def _measure_delivered(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """Each flow's delivered bytes (by source), the port's rate and PAUSE frames so far."""
    port = next(p for p in r.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] == condition["flows"])
    got = dict(zip(r.flows["src"].to_pylist(), r.flows["delivered"].to_pylist()))
    return [{"metric": "delivered", "value": None, "bytes": got, "rate_bps": port["rate_bps"], "pauses": _pause_frames(r)}]


def dcqcn_fairness(spec: dict[str, Any], folder: Path) -> Rows:
    """Each condition runs to half its duration and to the end (the shorter
    run is the longer one's first half: the simulation is deterministic),
    so shares and utilisation are measured over the second half, after
    convergence; PAUSE frames over the whole run."""
    jobs: list[Job] = []
    base = _base(folder, spec)
    end = units.parse(base["run"]["duration"])
    for name, cc in spec["schemes"].items():
        for n in spec["flows"]:
            for until in (end / 2, end):
                s = copy.deepcopy(base)
                s["run"]["duration"] = f"{round(until * 1e12)}ps"
                s["rdma"]["cc"] = cc
                s["workload"] = [{"type": "bulk", "src": f"0..{n}", "dst": n, "size": "inf"}]
                jobs.append(({"scheme": name, "flows": n}, s, None, {}))
    runs = _run_jobs(jobs, _measure_delivered, spec)
    rows: Rows = []
    for half, full in zip(runs[0::2], runs[1::2]):
        got = [full["bytes"][src] - half["bytes"][src] for src in full["bytes"]]
        capacity = full["rate_bps"] * end / 2 / 8 * spec["payload"] / (spec["payload"] + 62)
        condition = {"scheme": full["scheme"], "flows": full["flows"]}
        rows += [
            condition | {"metric": "jain", "value": sum(got) ** 2 / (len(got) * sum(g * g for g in got)) if any(got) else None},
            condition | {"metric": "utilisation_fraction", "value": sum(got) / capacity},
            condition | {"metric": "pause_frames", "value": full["pauses"]},
            condition | {"metric": "flow_gbps", "value": None, "rates": [g * 8 / (end / 2) / 1e9 for g in got]},
        ]
    return rows


def dcqcn_fairness_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        for r in rows:
            if r["scheme"] == scheme and r["metric"] == "flow_gbps":
                axes[0].scatter([r["flows"]] * len(r["rates"]), r["rates"], s=12, label=f"{scheme}, {r['flows']} flows")
        pts = sorted((r["flows"], r["value"]) for r in rows if r["scheme"] == scheme and r["metric"] == "pause_frames")
        axes[1].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=scheme)
    axes[0].set(xlabel="flows", ylabel="per-flow goodput (Gb/s)", title="Shares of a 40 Gb/s port")
    axes[1].set(xlabel="flows", ylabel="PAUSE frames", title="PFC PAUSE frames", yscale="symlog")
    return _finish(fig, axes)


RUNNERS = {
    "pfc-spreading": (pfc_spreading, pfc_spreading_figure),
    "pfc-deadlock": (pfc_deadlock, pfc_deadlock_figure),
    "dcqcn-fairness": (dcqcn_fairness, dcqcn_fairness_figure),
}
