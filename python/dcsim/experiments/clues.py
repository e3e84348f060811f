"""Reproductions of seed 004 (the CLUES thesis): runners that return
measured rows {metric, condition..., value} and the figures."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from ._common import Job, Rows, _finish, _run_jobs


def clues_rtt(spec: dict[str, Any], folder: Path, quick: bool) -> list[dict[str, Any]]:
    """Seed 004 Fig. 21: completion time against RTT measurement resolution."""
    import dcsim

    scenario = folder / spec["scenario"]
    rows = []
    for rate in spec["quick_rates" if quick else "rates"]:
        base = {"topology.link_rate": rate}
        # The thesis' rule (§5.3.3): one cell short of lossless, the largest
        # ingress buffer at which the transaction needs an RTO.
        cells = next(
            (c for c in range(400, 5, -1)
             if dcsim.run(scenario, overrides=base | {"switch.voq.ingress_cells": c}).queries["timeouts"].to_pylist()[0] > 0),
            None,
        )
        if cells is None:
            raise RuntimeError(f"clues-rtt at {rate}: no ingress buffer from 400 down to 6 cells makes the transaction time out")
        lossless = dcsim.run(scenario, overrides=base | {"switch.voq.ingress_cells": 100_000}).queries["completion_time"].to_pylist()[0]
        rows.append({"metric": "lossless_us", "rate": rate, "resolution_us": None, "clock": None, "value": lossless * 1e6, "cells": None})
        arrear_us = spec["arrear_clock_ns"] / 1000
        clocks = [({"tcp.rtt_granularity": f"{us}us"}, "ticks", us) for us in spec["quick_resolutions_us" if quick else "resolutions_us"]]
        clocks.append(({"tcp.arrear": {"clock": f"{spec['arrear_clock_ns']}ns"}}, "ARREAR", arrear_us))
        for clock, kind, us in clocks:
            r = dcsim.run(scenario, overrides=base | clock | {"switch.voq.ingress_cells": cells, "output.tcp_trace": True})
            q = r.queries.to_pylist()[0]
            key = {"rate": rate, "resolution_us": us, "clock": kind, "cells": cells}
            rows.append(key | {"metric": "completion_us", "value": q["completion_time"] * 1e6, "timeouts": q["timeouts"]})
            rows.append(key | {"metric": "rto_us", "value": _stalled_rto_us(r)})
    return rows


def _stalled_rto_us(r: Any) -> float | None:
    """The RTO interval the sender waited out: the one armed by the last ACK
    before the longest silence in the trace of the connection that timed out."""
    t = r.tcp_trace.to_pylist()
    conn = next((f["conn"] for f in r.flows.to_pylist() if f["timeouts"]), None)
    rows = sorted((x["time"], x["rto"]) for x in t if x["conn"] == conn and x["side"] == 1)
    gaps = [(b[0] - a[0], a[1]) for a, b in zip(rows, rows[1:])]
    return max(gaps)[1] * 1e6 if gaps else None


def clues_rtt_figure(rows: list[dict[str, Any]], spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for rate in sorted({r["rate"] for r in rows}):
        mine = [r for r in rows if r["rate"] == rate and r["metric"] == "completion_us"]
        pts = sorted((r["resolution_us"], r["value"]) for r in mine if r["clock"] == "ticks")
        (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"dcsim {rate}")
        arrear = [(r["resolution_us"], r["value"]) for r in mine if r["clock"] == "ARREAR"]
        ax.scatter([p[0] for p in arrear], [p[1] for p in arrear], marker="*", s=120, color=line.get_color(), label=f"dcsim {rate}, ARREAR")
        ref = [(x["condition"]["resolution_us"], x["paper"]) for x in spec["reference"]
               if x["metric"] == "completion_us" and x["condition"]["rate"] == rate]
        ax.scatter([p[0] for p in ref], [p[1] for p in ref], marker="x", s=80, color=line.get_color(), label=f"thesis {rate}")
    ax.set(xscale="log", xlabel="RTT measurement resolution (us)", ylabel="transaction completion time (us)", title="Fig. 21")
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def _aggregate_voq(r: Any) -> list[tuple[float, int]]:
    """The sum of all switch ports' ingress cells at each sample time (the
    thesis' "aggregate VOQ occupancy"), from the transaction's start."""
    total: dict[float, int] = defaultdict(int)
    for t, cells in zip(r.voq["time"].to_pylist(), r.voq["cells"].to_pylist()):
        total[t] += cells
    start = r.queries["start"].to_pylist()[0]
    return [(t - start, c) for t, c in sorted(total.items())]


def _measure_transaction(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    q = r.queries.to_pylist()[0]
    series = _aggregate_voq(r)
    busy = [c for _, c in series]
    first = next((i for i, c in enumerate(busy) if c), 0)
    last = max((i for i, c in enumerate(busy) if c), default=0)
    return [
        {"metric": "peak_cells", "value": max(busy, default=0)},
        # 1 if the queue emptied between the first and the last cell queued (between windows).
        {"metric": "drains_between_windows", "value": int(any(c == 0 for c in busy[first:last]))},
        {"metric": "completion_us", "value": q["completion_time"] * 1e6},
        {"metric": "drops", "value": sum(r.ports["ingress_drops"].to_pylist())},
        {"metric": "timeouts", "value": q["timeouts"]},
        {"metric": "retransmits", "value": q["retransmits"]},
        {"metric": "occupancy", "value": None, "series": series},
    ]


def _transaction(condition: dict[str, Any], scenario: str, rate: str, responders: int, cells: int) -> Job:
    total = 200_000
    return (condition, scenario, None, {"topology.link_rate": rate, "topology.hosts": responders + 1, "switch.voq.ingress_cells": cells,
                                        "workload[0].responders": list(range(1, responders + 1)),
                                        "workload[0].response_size": f"{total // responders}B"})


def clues_occupancy(spec: dict[str, Any], folder: Path, quick: bool) -> Rows:
    q = "quick_" if quick else ""
    scenario = str(folder / spec["scenario"])
    jobs = [_transaction({"figure": "11", "rate": rate, "responders": 2}, scenario, rate, 2, spec["cells"]) for rate in spec[q + "rates"]]
    jobs += [_transaction({"figure": "12", "rate": "10Gbps", "responders": n}, scenario, "10Gbps", n, spec["cells"]) for n in spec[q + "responders"]]
    return _run_jobs(jobs, _measure_transaction, spec)


def _plot_occupancy(ax: Any, rows: Rows, key: str, label: Any) -> None:
    for r in rows:
        if r["metric"] == "occupancy" and key in r:
            done = next(x["value"] for x in rows if x["metric"] == "completion_us" and all(x.get(k) == r.get(k) for k in ("figure", "rate", "responders", "cells", "nagle")))
            (line,) = ax.plot([t * 1e6 for t, _ in r["series"]], [c for _, c in r["series"]], lw=1, label=label(r))
            ax.plot([done], [0], marker="o", color=line.get_color())  # the thesis' "lollipop": completion


def clues_occupancy_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    _plot_occupancy(axes[0], [r for r in rows if r["figure"] == "11"], "series", lambda r: r["rate"])
    _plot_occupancy(axes[1], [r for r in rows if r["figure"] == "12"], "series", lambda r: f"nrsp = {r['responders']}")
    axes[0].set(xlabel="time since the query (us)", ylabel="aggregate VOQ occupancy (cells)", title="Fig. 11: 2 responders, 200 kB", xscale="log")
    axes[1].set(xlabel="time since the query (us)", title="Fig. 12: 10 Gb/s, 200 kB split over nrsp")
    return _finish(fig, axes)


def clues_loss_recovery(spec: dict[str, Any], folder: Path, quick: bool) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs = [_transaction({"cells": c}, scenario, "10Gbps", 2, c) for c in spec["cells"]]
    return _run_jobs(jobs, _measure_transaction, spec)


def clues_loss_recovery_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, 4))
    _plot_occupancy(ax, rows, "series", lambda r: f"rxq = {r['cells']}")
    ax.set(xlabel="time since the query (us)", ylabel="aggregate VOQ occupancy (cells)", title="Fig. 13", xscale="log")
    return _finish(fig, [ax])


def clues_nagle(spec: dict[str, Any], folder: Path, quick: bool) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs = []
    for nagle in (False, True):
        condition, sc, preset, overrides = _transaction({"nagle": nagle}, scenario, "10Gbps", 2, spec["cells"])
        jobs.append((condition, sc, preset, overrides | {"tcp.nagle": nagle}))
    rows = _run_jobs(jobs, _measure_transaction, spec)
    base, nagle = (next(r["value"] for r in rows if r["metric"] == "completion_us" and r["nagle"] == n) for n in (False, True))
    return rows + [{"nagle": True, "metric": "nagle_extra_us", "value": nagle - base}]


def clues_nagle_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, 4))
    _plot_occupancy(ax, rows, "series", lambda r: f"nagle = {int(r['nagle'])}")
    ax.set(xlabel="time since the query (us)", ylabel="aggregate VOQ occupancy (cells)", title="Fig. 19: the remainder waits an RTT")
    return _finish(fig, [ax])


RUNNERS = {
    "clues-rtt": (clues_rtt, clues_rtt_figure),
    "clues-occupancy": (clues_occupancy, clues_occupancy_figure),
    "clues-loss-recovery": (clues_loss_recovery, clues_loss_recovery_figure),
    "clues-nagle": (clues_nagle, clues_nagle_figure),
}
