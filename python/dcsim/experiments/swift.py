"""Reproductions of Swift's claims (issue 29; Kumar et al., SIGCOMM 2020):
an incast of thousands of flows held near the target without loss by
windows below one packet, and the target's scaling with the path's hops and
the flows' windows. Runners return measured rows {metric, condition...,
value} and draw the figures.

Every condition runs twice, to the end of its warm-up and to the end: the
simulation is deterministic, so the shorter run is the longer one's
beginning and differences between the two measure the interval after the
warm-up (drops, bytes sent and delivered)."""

from __future__ import annotations

import copy
import random
import tomllib
from pathlib import Path
from typing import Any

from .. import units
from ..analysis import percentile
from ._common import Job, Rows, _finish, _run_jobs, replica_seed


def _base(folder: Path, spec: dict[str, Any]) -> dict[str, Any]:
    return tomllib.loads((folder / spec["scenario"]).read_text(encoding="utf-8"))


def _scheme(s: dict[str, Any], scheme: dict[str, Any]) -> dict[str, Any]:
    """The scenario with a scheme's tables merged in (`tcp`, `switch`, ...)."""
    for table, keys in scheme.items():
        s.setdefault(table, {}).update(copy.deepcopy(keys))
    return s


def _port_to(r: Any, host: int) -> dict[str, Any]:
    return next(p for p in r.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] == host)


def _measure(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The receiver's port so far (bytes sent, drops, queue samples) and
    each flow's delivered bytes, by source."""
    port = _port_to(r, spec["receiver"])
    q = r.queues
    queue_us = [b * 8 / port["rate_bps"] * 1e6 for p, b in zip(q["port"].to_pylist(), q["bytes"].to_pylist()) if p == port["port"]]
    delivered = dict(zip(r.flows["src"].to_pylist(), r.flows["delivered"].to_pylist()))
    return [{"metric": "port", "value": None, "tx_bytes": port["tx_bytes"], "tx_packets": port["tx_packets"], "drops": port["drops"],
             "queue_us": queue_us, "delivered": delivered, "rate_bps": port["rate_bps"]}]


def _two_points(base: dict[str, Any], warmup: float) -> list[dict[str, Any]]:
    """The scenario run to the warm-up's end and to its own end."""
    runs = []
    for until in (warmup, units.parse(base["run"]["duration"])):
        s = copy.deepcopy(base)
        s["run"]["duration"] = f"{round(until * 1e12)}ps"
        runs.append(s)
    return runs


def _rows(condition: dict[str, Any], early: dict[str, Any], full: dict[str, Any], seconds: float) -> Rows:
    """After the warm-up: the port's utilisation (wire bytes over capacity),
    the fraction of its packets dropped, its queueing delay, and Jain's index
    of the flows' delivered bytes."""
    by_src = {src: full["delivered"][src] - early["delivered"].get(src, 0) for src in full["delivered"]}
    got = list(by_src.values())
    sent = full["tx_packets"] - early["tx_packets"]
    dropped = full["drops"] - early["drops"]
    queue = sorted(full["queue_us"])
    return [
        condition | {"metric": "utilisation_fraction", "value": (full["tx_bytes"] - early["tx_bytes"]) * 8 / seconds / full["rate_bps"]},
        condition | {"metric": "drop_fraction", "value": dropped / (sent + dropped) if sent + dropped else 0.0},
        condition | {"metric": "queue_mean_us", "value": sum(queue) / len(queue) if queue else None},
        condition | {"metric": "queue_p99_us", "value": percentile(queue, 99) if queue else None},
        condition | {"metric": "jain", "value": sum(got) ** 2 / (len(got) * sum(g * g for g in got)) if any(got) else None},
        condition | {"metric": "queue_us", "value": None, "percentiles": [percentile(queue, p) for p in range(101)] if queue else []},
        condition | {"metric": "delivered", "value": None, "by_src": by_src},
    ]


def _run(spec: dict[str, Any], conditions: list[tuple[dict[str, Any], dict[str, Any]]]) -> Rows:
    """Run each (condition, scenario) to the warm-up and to the end; rows
    for the interval between."""
    warmup = units.parse(spec["warmup"])
    jobs: list[Job] = []
    for condition, s in conditions:
        jobs += [(condition, run, None, {}) for run in _two_points(s, warmup)]
    runs = _run_jobs(jobs, _measure, spec)
    rows: Rows = []
    for (condition, s), early, full in zip(conditions, runs[0::2], runs[1::2]):
        rows += _rows(condition, early, full, units.parse(s["run"]["duration"]) - warmup)
    return rows


# ---- swift-incast ------------------------------------------------------------------------------


def swift_incast(spec: dict[str, Any], folder: Path) -> Rows:
    """N senders into one host of a star, each a long flow starting at a
    random time in the first `spread` (drawn from the replica's seed)."""
    base = _base(folder, spec)
    spread = units.parse(spec["spread"])
    conditions = []
    for name, scheme in spec["schemes"].items():
        for n in spec["senders"]:
            if n not in scheme.get("senders", spec["senders"]):
                continue
            rng = random.Random(replica_seed(spec, 1000 + n))
            s = _scheme(copy.deepcopy(base), scheme["set"])
            s["topology"]["hosts"] = n + 1
            s["workload"] = [{"type": "flows", "flows": [{"src": i, "dst": 0, "size": "inf", "start": f"{round(rng.random() * spread * 1e12)}ps"}
                                                          for i in range(1, n + 1)]}]
            conditions.append(({"scheme": name, "senders": n}, s))
    return _run(spec, conditions)


def swift_incast_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        for metric, ax in (("queue_mean_us", axes[0]), ("drop_fraction", axes[1])):
            pts = sorted((r["senders"], r["value"]) for r in rows if r["scheme"] == scheme and r["metric"] == metric)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=scheme)
    axes[0].set(xlabel="senders", ylabel="mean queueing delay (µs)", xscale="log", title="Receiver's port, after the warm-up")
    axes[1].set(xlabel="senders", ylabel="packets dropped (fraction)", xscale="log", yscale="symlog", title="Loss")
    return _finish(fig, axes)


# ---- swift-scaling -----------------------------------------------------------------------------


def swift_scaling(spec: dict[str, Any], folder: Path) -> Rows:
    """Topology scaling: two long flows into host 0 of a leaf-spine, one from
    its own leaf (1 switch) and one from another (3 switches), at each
    per-hop target. Flow scaling: N long flows into host 0 of a star,
    starting at random times over the first `spread`, with and without the
    flow term."""
    conditions = []
    hops = _base(folder, {"scenario": spec["hops_scenario"]})
    for per_hop in spec["per_hop"]:
        s = _scheme(copy.deepcopy(hops), {"tcp": {"swift": {"per_hop": per_hop}}})
        conditions.append(({"case": "hops", "per_hop": per_hop}, s))
    flows = _base(folder, {"scenario": spec["flows_scenario"]})
    spread = units.parse(spec["spread"])
    for fs_range in spec["fs_range"]:
        for n in spec["flows"]:
            rng = random.Random(replica_seed(spec, 2000 + n))
            s = _scheme(copy.deepcopy(flows), {"tcp": {"swift": {"fs_range": fs_range}}})
            s["topology"]["hosts"] = n + 1
            s["workload"] = [{"type": "flows", "flows": [{"src": i, "dst": 0, "size": "inf", "start": f"{round(rng.random() * spread * 1e12)}ps"}
                                                          for i in range(1, n + 1)]}]
            conditions.append(({"case": "flows", "fs_range": fs_range, "flows": n}, s))
    rows = _run(spec, conditions)
    # Topology scaling's measure: the longer path's goodput over the shorter's.
    for r in [r for r in rows if r.get("case") == "hops" and r["metric"] == "delivered"]:
        condition = {"case": "hops", "per_hop": r["per_hop"]}
        rows.append(condition | {"metric": "long_path_share", "value": r["by_src"][spec["long_src"]] / r["by_src"][spec["short_src"]]})
    return rows


def swift_scaling_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    pts = [(units.parse(r["per_hop"]) * 1e6, r["value"]) for r in rows if r.get("case") == "hops" and r["metric"] == "long_path_share"]
    axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="3-switch flow / 1-switch flow")
    axes[0].axhline(1.0, color="grey", lw=0.8, label="equal shares")
    axes[0].set(xlabel="per_hop (µs)", ylabel="goodput ratio", title="Topology scaling")
    for fs in dict.fromkeys(r["fs_range"] for r in rows if r.get("case") == "flows"):
        pts = sorted((r["flows"], r["value"]) for r in rows if r.get("case") == "flows" and r["fs_range"] == fs and r["metric"] == "queue_mean_us")
        axes[1].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"fs_range {fs}")
    axes[1].set(xlabel="flows", ylabel="mean queueing delay (µs)", xscale="log", title="Flow scaling")
    return _finish(fig, axes)


RUNNERS = {
    "swift-incast": (swift_incast, swift_incast_figure),
    "swift-scaling": (swift_scaling, swift_scaling_figure),
}
