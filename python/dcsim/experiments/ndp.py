"""Reproductions of NDP's claims (issue 29; Handley et al., SIGCOMM 2017):
an incast that finishes in near-optimal time at any number of senders
(Fig. 16), and a permutation that fills a fat-tree where per-flow ECMP
cannot (Fig. 14). Runners return measured rows {metric, condition...,
value} and draw the figures."""

from __future__ import annotations

import copy
import random
import statistics
from pathlib import Path
from typing import Any

from .. import units
from ._common import Job, Rows, _finish, _run_jobs, replica_seed
from .swift import _base, _scheme


def _fabric(base: dict[str, Any], spec: dict[str, Any], scheme: dict[str, Any]) -> dict[str, Any]:
    """The k-ary fat-tree of the spec (`k`) with a scheme's settings."""
    s = _scheme(copy.deepcopy(base), scheme["set"])
    s["topology"]["k"] = spec["k"]
    return s


def _hosts(spec: dict[str, Any]) -> int:
    return spec["k"] ** 3 // 4


# ---- ndp-incast --------------------------------------------------------------------------------


def _measure_incast(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The flows' completion times, against the optimum: one flow's ideal
    (its first frame's way through the fabric, then its frames at line
    rate) plus every other sender's frames back to back on the receiver's
    link."""
    flows = r.flows.to_pylist()
    ends = [f["end"] for f in flows]
    done = [e for e in ends if e is not None and e == e]  # None or NaN: never completed
    frames = spec["frame_bytes"] * -(-spec["size_bytes"] // spec["payload_bytes"])
    optimum = max(f["ideal_fct"] for f in flows) + (condition["senders"] - 1) * frames * 8 / units.parse(spec["link_rate"])
    # A flow still running at the end of the run finishes after it: the
    # last completion is then at least the run's length (a lower bound,
    # which only understates how late it is).
    last = max(done) if len(done) == len(ends) else r.summary["sim_seconds"]
    first = min(done) if done else last
    return [
        {"metric": "completion_over_optimal", "value": last / optimum},
        {"metric": "last_completion_ms", "value": last * 1e3},
        {"metric": "completed_fraction", "value": len(done) / len(ends)},
        {"metric": "first_over_last", "value": first / last},
        {"metric": "timeouts", "value": float(sum(f["timeouts"] for f in flows))},
        {"metric": "completions", "value": None, "ends_ms": sorted(e * 1e3 for e in done)},
    ]


def ndp_incast(spec: dict[str, Any], folder: Path) -> Rows:
    """N senders, the fabric's last N hosts, each send `size` to host 0,
    all at time 0 (htsim's `setIncast`), under each scheme."""
    base = _base(folder, spec)
    hosts = _hosts(spec)
    jobs: list[Job] = []
    for name, scheme in spec["schemes"].items():
        for n in spec["senders"]:
            s = _fabric(base, spec, scheme)
            s["workload"] = [{"type": "bulk", "src": f"{hosts - n}..{hosts}", "dst": 0, "size": spec["size"]}]
            jobs.append(({"scheme": name, "senders": n}, s, None, {}))
    return _run_jobs(jobs, _measure_incast, spec)


def ndp_incast_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        done = sorted((r["senders"], r["ends_ms"]) for r in rows if r["scheme"] == scheme and r["metric"] == "completions" and r["ends_ms"])
        axes[0].plot([d[0] for d in done], [d[1][-1] for d in done], marker="o", label=f"{scheme}: last")
        axes[0].plot([d[0] for d in done], [d[1][0] for d in done], ls="--", label=f"{scheme}: first")
        pts = sorted((r["senders"], r["value"]) for r in rows if r["scheme"] == scheme and r["metric"] == "completion_over_optimal" and r["value"])
        axes[1].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=scheme)
    axes[0].set(xlabel="senders", ylabel="completion time (ms)", title="Incast of 450 KB per sender (Fig. 16)")
    axes[1].set(xlabel="senders", ylabel="last completion / optimum", yscale="log", title="Against the receiver link's optimum")
    return _finish(fig, axes)


# ---- ndp-permutation ---------------------------------------------------------------------------


def _derangement(n: int, rng: random.Random) -> list[int]:
    """A random permutation with no fixed point: every host sends to one other."""
    while True:
        p = list(range(n))
        rng.shuffle(p)
        if all(i != d for i, d in enumerate(p)):
            return p


def _measure_permutation(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """Each flow's goodput over the run, as a fraction of the payload rate
    a 10 Gb/s link carries in full frames."""
    seconds = units.parse(spec["duration"])
    line = units.parse(spec["link_rate"]) * spec["payload_bytes"] / spec["frame_bytes"]
    share = sorted(f["delivered"] * 8 / seconds / line for f in r.flows.to_pylist())
    return [
        {"metric": "mean_throughput", "value": statistics.fmean(share)},
        {"metric": "p10_throughput", "value": share[len(share) // 10]},
        {"metric": "min_over_mean", "value": share[0] / statistics.fmean(share)},
        {"metric": "throughputs", "value": None, "sorted": share},
    ]


def ndp_permutation(spec: dict[str, Any], folder: Path) -> Rows:
    """Every host of the fat-tree sends a long flow to one other (a random
    derangement drawn from the replica's seed), all from time 0."""
    base = _base(folder, spec)
    hosts = _hosts(spec)
    dst = _derangement(hosts, random.Random(replica_seed(spec, 14)))
    jobs: list[Job] = []
    for name, scheme in spec["schemes"].items():
        s = _fabric(base, spec, scheme)
        s["run"]["duration"] = spec["duration"]
        s["workload"] = [{"type": "flows", "flows": [{"src": i, "dst": d, "size": "inf"} for i, d in enumerate(dst)]}]
        jobs.append(({"scheme": name}, s, None, {}))
    return _run_jobs(jobs, _measure_permutation, spec)


def ndp_permutation_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 1, figsize=(6, 3.6))
    for r in rows:
        if r["metric"] == "throughputs":
            axes.plot(range(1, len(r["sorted"]) + 1), r["sorted"], label=r["scheme"])
    axes.set(xlabel="flow (rank)", ylabel="goodput / link's payload rate", ylim=(0, 1.05), title=f"Permutation on a k = {spec['k']} fat-tree (Fig. 14)")
    return _finish(fig, [axes])


RUNNERS = {
    "ndp-incast": (ndp_incast, ndp_incast_figure),
    "ndp-permutation": (ndp_permutation, ndp_permutation_figure),
}
