"""Reproduction of Homa's simulation claims (issue 29; Montazeri et al.,
SIGCOMM 2018): short messages' tail slowdown at 80 % load for W1 to W5,
Homa against PIAS, NDP and DCTCP on the authors' fabric. The runner
returns measured rows {metric, workload, scheme, value} and draws the
99th-percentile slowdown against the message-count percentile, as the
authors' step plots do."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from .. import units
from ..analysis import percentile
from ._common import Job, Rows, _finish, _run_jobs
from .swift import _base, _scheme

# Message-count bins of the figure: deciles of the messages sorted by size.
BINS = 10


def _scenario(base: dict[str, Any], spec: dict[str, Any], workload: dict[str, Any], scheme: dict[str, Any]) -> dict[str, Any]:
    """The fabric with a scheme's settings and the workload's Poisson
    messages at the experiment's wire load."""
    s = _scheme(copy.deepcopy(base), scheme["set"])
    s["topology"]["leaves"] = spec["leaves"]
    if "homa" in s:
        s["homa"]["sched_priorities"] = workload["sched_priorities"]
    if scheme.get("tagging") == "pias":
        s.setdefault("host", {})["pias"] = {"thresholds": workload["pias"]}
    stop = units.parse(workload["duration"])
    # Arrivals stop at `duration`; the run ends when every message is in,
    # or at ten times that (what is left then counts as undelivered: a
    # heavy-tailed workload's largest messages from one busy sender need
    # several times the arrival period).
    s["run"]["duration"] = f"{round(10 * stop * 1e9)}ns"
    poisson = {"type": "poisson", "size": {"cdf": workload["cdf"]}, "load": spec["wire_load"] * workload["c"],
               "load_reference": "host", "pattern": "all_to_all", "stop": workload["duration"]}
    if "tcp_connections" in scheme:
        poisson["connections"] = scheme["tcp_connections"]
    s["workload"] = [poisson]
    return s


def _measure(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """Short messages' (the smaller half by count) 99th-percentile
    slowdown, the share of messages delivered, and the 99th percentile per
    message-count decile for the figure. An undelivered message counts with
    the slowdown it has at the end of the run, a lower bound."""
    f = r.flows
    end_of_run = r.summary["sim_seconds"]
    rows = sorted(zip(f["bytes"].to_pylist(), f["start"].to_pylist(), f["end"].to_pylist(), f["ideal_fct"].to_pylist()), key=lambda m: m[0])
    slowdown = [((e if e == e and e is not None else end_of_run) - s) / ideal for _, s, e, ideal in rows]
    delivered = sum(1 for _, _, e, _ in rows if e is not None and e == e)
    n = len(rows)
    median = rows[(n - 1) // 2][0]
    short = sorted(sd for (b, *_), sd in zip(rows, slowdown) if b <= median)
    deciles = [sorted(slowdown[k * n // BINS:(k + 1) * n // BINS]) for k in range(BINS)]
    # Every byte the hosts put on the wire (frames, preamble and gap), over
    # their capacity while arrivals last: the load the scheme's headers,
    # ACKs, grants and pulls make of the same messages.
    nics = [p for p in r.ports.to_pylist() if p["node_kind"] == "host"]
    wire = sum(p["tx_bytes"] + 20 * p["tx_packets"] for p in nics) * 8
    arrivals = units.parse(spec["workloads"][condition["workload"]]["duration"])
    return [
        {"metric": "p99_short", "value": percentile(short, 99)},
        {"metric": "delivered_fraction", "value": delivered / n},
        {"metric": "wire_load", "value": wire / sum(p["rate_bps"] * arrivals for p in nics)},
        {"metric": "messages", "value": float(n)},
        {"metric": "deciles", "value": None, "p99": [percentile(d, 99) for d in deciles],
         "upper_bytes": [rows[min((k + 1) * n // BINS, n) - 1][0] for k in range(BINS)]},
    ]


def homa_slowdown(spec: dict[str, Any], folder: Path) -> Rows:
    """Every workload under every scheme."""
    base = _base(folder, spec)
    jobs: list[Job] = []
    for wname, workload in spec["workloads"].items():
        for name, scheme in spec["schemes"].items():
            if scheme.get("skip"):
                continue
            jobs.append(({"workload": wname, "scheme": name}, _scenario(base, spec, workload, scheme), None, {}))
    return _run_jobs(jobs, _measure, spec)


def homa_slowdown_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    names = list(spec["workloads"])
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3.4), sharey=True)
    for ax, w in zip(axes, names):
        for scheme in spec["schemes"]:
            runs = [r for r in rows if r["workload"] == w and r["scheme"] == scheme and r["metric"] == "deciles"]
            if not runs:
                continue
            # The mean over replicas of each decile's 99th percentile.
            p99 = [sum(r["p99"][k] for r in runs) / len(runs) for k in range(BINS)]
            x = [10 * (k + 1) for k in range(BINS)]
            ax.step(x, p99, where="pre", label=scheme)
        ax.axhline(2.2, color="grey", lw=0.6, ls=":")
        ax.set(xlabel="messages (cumulative %)", title=f"{w} at 80 % load", yscale="log")
    axes[0].set_ylabel("99th-percentile slowdown")
    return _finish(fig, axes)


RUNNERS = {
    "homa-slowdown": (homa_slowdown, homa_slowdown_figure),
}
