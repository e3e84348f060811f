"""Reproductions of seed 004 (the CLUES thesis): runners that return
measured rows {metric, condition..., value} and the figures."""

from __future__ import annotations

import math
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..scenario import set_path
from ._common import Job, Rows, _finish, _run_jobs, replica_seed, seeded, shared_pool, show_progress


def _rto_case_cells(scenario: Path, base: dict[str, Any], lossless: float, tiers: list[int]) -> dict[int, int]:
    """The thesis' rule (§5.3.3), for each number of non-parallel RTOs: the
    largest ingress buffer (scanning down from 400 cells) at which the
    transaction completes that many 1 ms RTOs above lossless."""
    import dcsim

    found: dict[int, int] = {}
    for c in range(400, 5, -1):
        t = dcsim.run(scenario, overrides=base | {"switch.voq.ingress_cells": c}).queries["completion_time"].to_pylist()[0]
        found.setdefault(round((t - lossless) / 1e-3), c)
        if all(n in found for n in tiers):
            return {n: found[n] for n in tiers}
    raise RuntimeError(f"clues-rtt at {base['topology.link_rate']}: no ingress buffer from 400 down to 6 cells gives "
                       f"{[n for n in tiers if n not in found]} non-parallel RTOs")


def clues_rtt(spec: dict[str, Any], folder: Path) -> list[dict[str, Any]]:
    """Seed 004 Fig. 21: completion time against RTT measurement resolution,
    for transactions with one and with two non-parallel RTOs."""
    import dcsim

    scenario = folder / spec["scenario"]
    cases = {"single": 1, "double": 2}
    rows = []
    for rate in spec["rates"]:
        base = seeded({"topology.link_rate": rate}, spec)
        lossless = dcsim.run(scenario, overrides=base | {"switch.voq.ingress_cells": 100_000}).queries["completion_time"].to_pylist()[0]
        rows.append({"metric": "lossless_us", "rate": rate, "resolution_us": None, "clock": None, "value": lossless * 1e6, "cells": None})
        cells = _rto_case_cells(scenario, base, lossless, list(cases.values()))
        arrear_us = spec["arrear_clock_ns"] / 1000
        clocks = [({"tcp.rtt_granularity": f"{us}us"}, "ticks", us) for us in spec["resolutions_us"]]
        clocks.append(({"tcp.arrear": {"clock": f"{spec['arrear_clock_ns']}ns"}}, "ARREAR", arrear_us))
        for case, tiers in cases.items():
            completion = {}
            for clock, kind, us in clocks:
                r = dcsim.run(scenario, overrides=base | clock | {"switch.voq.ingress_cells": cells[tiers], "output.tcp_trace": True})
                q = r.queries.to_pylist()[0]
                key = {"rate": rate, "rto_case": case, "resolution_us": us, "clock": kind, "cells": cells[tiers]}
                rows.append(key | {"metric": "completion_us", "value": q["completion_time"] * 1e6, "timeouts": q["timeouts"]})
                rows.append(key | {"metric": "rto_us", "value": _stalled_rto_us(r)})
                completion[(kind, us)] = q["completion_time"] * 1e6
            coarse, fine = max(spec["resolutions_us"]), min(spec["resolutions_us"])
            if ("ticks", coarse) in completion and ("ticks", fine) in completion:
                # What each RTO gains from the finest clock (Fig. 21: "the same
                # amount of improvement ... for dual RTO scenarios").
                rows.append({"metric": "saving_per_rto_us", "rate": rate, "rto_case": case, "cells": cells[tiers],
                             "value": (completion[("ticks", coarse)] - completion[("ticks", fine)]) / tiers})
    return rows


def _stalled_rto_us(r: Any) -> float | None:
    """The RTO interval the sender waited out: the one armed by the last ACK
    before the longest silence in the trace of the connection that timed out.
    The silence may last until the flow ends: the run stops when the
    transaction completes, before the last ACK reaches the sender."""
    t = r.tcp_trace.to_pylist()
    flow = next((f for f in r.flows.to_pylist() if f["timeouts"]), None)
    if flow is None:
        return None
    rows = sorted((x["time"], x["rto"]) for x in t if x["conn"] == flow["conn"] and x["side"] == 1)
    gaps = [(b[0] - a[0], a[1]) for a, b in zip(rows, rows[1:] + [(flow["end"], None)])]
    return max(gaps, key=lambda g: g[0])[1] * 1e6 if gaps else None


def clues_rtt_figure(rows: list[dict[str, Any]], spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for rate in sorted({r["rate"] for r in rows}):
        color = None
        for case, style in (("single", "-"), ("double", "--")):
            mine = [r for r in rows if r["rate"] == rate and r.get("rto_case") == case and r["metric"] == "completion_us"]
            pts = sorted((r["resolution_us"], r["value"]) for r in mine if r["clock"] == "ticks")
            (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", color=color, label=f"dcsim {rate}, {case} RTO")
            color = line.get_color()
            arrear = [(r["resolution_us"], r["value"]) for r in mine if r["clock"] == "ARREAR"]
            ax.scatter([p[0] for p in arrear], [p[1] for p in arrear], marker="*", s=120, color=color, label=f"dcsim {rate}, {case}, ARREAR")
        ref = [(x["condition"]["resolution_us"], x["paper"]) for x in spec["reference"]
               if x["metric"] == "completion_us" and x["condition"]["rate"] == rate]
        ax.scatter([p[0] for p in ref], [p[1] for p in ref], marker="x", s=80, color=color, label=f"thesis {rate}, single RTO")
    ax.set(xscale="log", xlabel="RTT measurement resolution (µs)", ylabel="transaction completion time (µs)", title="Fig. 21")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
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


def clues_occupancy(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs = [_transaction({"figure": "11", "rate": rate, "responders": 2}, scenario, rate, 2, spec["cells"]) for rate in spec["rates"]]
    jobs += [_transaction({"figure": "12", "rate": "10Gbps", "responders": n}, scenario, "10Gbps", n, spec["cells"]) for n in spec["responders"]]
    return _run_jobs(jobs, _measure_transaction, spec)


def _plot_occupancy(ax: Any, rows: Rows, label: Any) -> None:
    """Each run's aggregate VOQ occupancy, with its completion time marked
    on the axis (the thesis' "lollipops")."""
    for r in (r for r in rows if r["metric"] == "occupancy"):
        condition = {k: v for k, v in r.items() if k not in ("metric", "value", "series")}
        done = next(x["value"] for x in rows if x["metric"] == "completion_us" and all(x.get(k) == v for k, v in condition.items()))
        (line,) = ax.plot([t * 1e6 for t, _ in r["series"]], [c for _, c in r["series"]], lw=1, label=label(r))
        ax.plot([done], [0], marker="o", color=line.get_color())


def clues_occupancy_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    _plot_occupancy(axes[0], [r for r in rows if r["figure"] == "11"], lambda r: r["rate"])
    _plot_occupancy(axes[1], [r for r in rows if r["figure"] == "12"], lambda r: f"nrsp = {r['responders']}")
    axes[0].set(xlabel="time since the query (µs)", ylabel="aggregate VOQ occupancy (cells)", title="Fig. 11: 2 responders, 200 kB", xscale="log")
    axes[1].set(xlabel="time since the query (µs)", title="Fig. 12: 10 Gb/s, 200 kB split over nrsp")
    return _finish(fig, axes)


def clues_loss_recovery(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs = []
    for c in spec["cells"]:
        condition, sc, preset, overrides = _transaction({"cells": c}, scenario, "10Gbps", 2, c)
        # Captures at the switch ports facing the two responders (ports 3 and
        # 5 of the star: each host's NIC, then the switch port facing it).
        jobs.append((condition, sc, preset, overrides | {"output.pcap": [{"port": 2 * h + 1, "name": f"responder{h}"} for h in (1, 2)]}))
    return _run_jobs(jobs, _measure_with_sequence, spec)


def _measure_with_sequence(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The transaction's rows and the segments of the responder that
    retransmitted most, as captured at its switch port (Figs. 14-15)."""
    from ..analysis import tcp_segments

    flow = max(r.flows.to_pylist(), key=lambda f: f["retransmits"])
    h = flow["src"]
    port = next(p for p in r.ports.to_pylist() if p["port"] == 2 * h + 1)
    assert port["node_kind"] == "switch" and port["peer"] == h, port
    segments = tcp_segments(r.pcaps[f"responder{h}"])
    return _measure_transaction(r, condition, spec) + [
        {"metric": "sequence", "value": None, "sender": f"10.0.0.{h + 1}:5001", "segments": segments, "t0": r.queries["start"].to_pylist()[0]}
    ]


def clues_loss_recovery_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl, sequence_diagram

    plt = _mpl()
    sequences = [r for r in rows if r["metric"] == "sequence" and r["cells"] in (198, 179)]
    fig, axes = plt.subplots(1, 1 + len(sequences), figsize=(6 * (1 + len(sequences)), 4), squeeze=False)
    _plot_occupancy(axes[0][0], rows, lambda r: f"rxq = {r['cells']}")
    axes[0][0].set(xlabel="time since the query (µs)", ylabel="aggregate VOQ occupancy (cells)", title="Fig. 13", xscale="log")
    for ax, r in zip(axes[0][1:], sequences):
        sequence_diagram(r["segments"], r["sender"], ax=ax, t0=r["t0"])
        figure = "14: tail loss, RTO" if r["cells"] == 198 else "15: SACK fast recovery"
        ax.set(title=f"Fig. {figure} (rxq = {r['cells']}, at the responder's switch port)", xlabel="time since the query (µs)")
    return _finish(fig, axes.flat)


def clues_nagle(spec: dict[str, Any], folder: Path) -> Rows:
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
    _plot_occupancy(ax, rows, lambda r: f"nagle = {int(r['nagle'])}")
    ax.set(xlabel="time since the query (µs)", ylabel="aggregate VOQ occupancy (cells)", title="Fig. 19: the remainder waits an RTT")
    return _finish(fig, [ax])


# ---- clues-sweep and clues-arrear: Figs. 20, 22-23 ---------------------------------------


def _axis(r: list[int]) -> list[int]:
    start, end, step = r
    return list(range(start, end + 1, step))


def _sweep_points(spec: dict[str, Any]) -> tuple[list[tuple[int, int, int]], int]:
    """The §5.3.6 grid (rsplen, nrsp, rxq) after the selection criteria, and
    the grid's size. dcsim's queue projection (documented in the experiment
    file): a responder's data beyond its fair share of the egress queues,
    rsplen (1 - 1/nrsp), in full frames of cells."""
    rsplens = [x for r in spec["rsplen"] for x in _axis(r)]
    frame = spec["frame_cells"]
    kept = []
    for rsplen in rsplens:
        data = math.ceil(rsplen / spec["mss"]) * frame
        for nrsp in _axis(spec["nrsp"]):
            hwm = math.ceil(rsplen * (1 - 1 / nrsp) / spec["mss"]) * frame
            for rxq in _axis(spec["rxq"]):
                room = rxq - frame  # the buffer less one full-sized frame
                if data <= room or hwm < room or hwm > 2 * room:
                    continue
                kept.append((rsplen, nrsp, rxq))
    return kept, len(rsplens) * len(_axis(spec["nrsp"])) * len(_axis(spec["rxq"]))  # per link speed


def _sweep_chunk(base: dict[str, Any], rate: str, arrear: bool, points: list[tuple[int, int, int]]) -> list[tuple[Any, ...]]:
    """Run one chunk of the sweep in a worker: one transaction per point."""
    import dcsim

    out = []
    for rsplen, nrsp, rxq in points:
        overrides = {"topology.hosts": nrsp + 1, "topology.link_rate": rate, "switch.voq.ingress_cells": rxq,
                     "workload[0].responders": f"1..{nrsp + 1}", "workload[0].response_size": f"{rsplen}B"}
        if arrear:
            overrides["tcp.arrear"] = {"clock": "1ns"}
        r = dcsim.run(base, overrides=overrides)
        q = r.queries.to_pylist()[0]
        out.append((rate, arrear, rsplen, nrsp, rxq, q["completion_time"] * 1e6, q["timeouts"], r.summary["packets_dropped"]))
    return out


def _run_sweep(spec: dict[str, Any], folder: Path, arrear_runs: list[bool]) -> tuple[list[tuple[Any, ...]], int, int, float]:
    points, grid = _sweep_points(spec)
    kept, grid = len(points) * len(spec["rates"]), grid * len(spec["rates"])
    points = points[:: spec.get("stride", 1)]  # the quick version runs every stride-th point
    base = tomllib.loads((folder / spec["scenario"]).read_text(encoding="utf-8"))
    for key, value in spec.get("variant_set", {}).items():
        set_path(base, key, value)
    base["output"] = {"queue_sample_interval": "0s"}
    run = base.setdefault("run", {})
    run["seed"] = replica_seed(spec, run.get("seed", 1))
    tasks = [(rate, a, points[i:i + spec["chunk"]]) for rate in spec["rates"] for a in arrear_runs for i in range(0, len(points), spec["chunk"])]
    t0, results = time.time(), []
    with shared_pool() as pool:
        futures = [pool.submit(_sweep_chunk, base, rate, a, chunk) for rate, a, chunk in tasks]
        total = sum(len(c) for _, _, c in tasks)
        for f in futures:
            results.extend(f.result())
            show_progress(spec, len(results), total)
    return results, kept, grid, time.time() - t0


def _baseline_us(rsplen: int, nrsp: int, rate: str, spec: dict[str, Any]) -> float:
    """A lossless transaction's floor: the responses' frames serialised at
    line rate, plus a fixed round trip (Fig. 20's baseline)."""
    bps = float(rate.removesuffix("Gbps")) * 1e9
    frames = math.ceil(rsplen / spec["mss"]) * nrsp
    return (rsplen * nrsp + frames * (spec["frame_overhead_bytes"])) * 8 / bps * 1e6 + spec["baseline_rtt_us"]


def _tier_rows(results: list[tuple[Any, ...]], spec: dict[str, Any]) -> Rows:
    """Fig. 20's stratification: how much the completion time exceeds the
    lossless floor, in units of the 1 ms RTO floor."""
    rows: Rows = []
    for rate in spec["rates"]:
        excess_ms = [(c - _baseline_us(rsplen, nrsp, rate, spec)) / 1000 for r, a, rsplen, nrsp, rxq, c, to, d in results if r == rate and not a]
        near = [x for x in excess_ms if abs(x - round(x)) <= spec["tier_halfwidth_ms"]]
        tiers = defaultdict(int)
        for x in near:
            tiers[round(x)] += 1
        rows.append({"rate": rate, "metric": "tiered_fraction", "value": len(near) / len(excess_ms) if excess_ms else None})
        rows.append({"rate": rate, "metric": "rto_tiers", "value": sum(1 for k, n in tiers.items() if k >= 1 and n >= 0.005 * len(excess_ms)),
                     "tier_counts": dict(sorted(tiers.items()))})
    return rows


def _points_row(results: list[tuple[Any, ...]]) -> dict[str, Any]:
    cols = ("rate", "arrear", "rsplen", "nrsp", "rxq", "completion_us", "timeouts", "drops")
    return {"metric": "points", "value": None, "columns": {c: [r[i] for r in results] for i, c in enumerate(cols)}}


def clues_sweep(spec: dict[str, Any], folder: Path) -> Rows:
    results, kept, grid, wall = _run_sweep(spec, folder, [False])
    return [{"metric": "grid", "value": grid}, {"metric": "kept", "value": kept}, {"metric": "runs", "value": len(results)},
            {"metric": "wall_s", "value": wall}] + _tier_rows(results, spec) + [_points_row(results)]


def clues_arrear(spec: dict[str, Any], folder: Path) -> Rows:
    results, kept, grid, wall = _run_sweep(spec, folder, [False, True])
    rows: Rows = [{"metric": "kept", "value": kept}, {"metric": "runs", "value": len(results)}, {"metric": "wall_s", "value": wall}]
    by_point = {(r[0], r[1], r[2], r[3], r[4]): r for r in results}
    for rate in spec["rates"]:
        pairs = [(by_point[(rate, False, *p)], by_point[(rate, True, *p)]) for p in {(r[2], r[3], r[4]) for r in results if r[0] == rate}]
        shorter = sum(b[5] < a[5] for a, b in pairs)
        longer = sum(b[5] > a[5] for a, b in pairs)
        equal = len(pairs) - shorter - longer
        rto = [(a, b) for a, b in pairs if a[6] > 0]
        for name, n in (("shorter", shorter), ("longer", longer), ("equal", equal)):
            rows.append({"rate": rate, "metric": f"{name}_fraction", "value": n / len(pairs) if pairs else None, "count": n})
        rows.append({"rate": rate, "metric": "rto_pairs_shorter_fraction", "value": sum(b[5] < a[5] for a, b in rto) / len(rto) if rto else None,
                     "count": len(rto)})
    return rows + [_points_row(results)]


def _sweep_axes(rows: Rows, spec: dict[str, Any], arrear: bool | None) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    cols = next(r["columns"] for r in rows if r["metric"] == "points")
    fig, axes = plt.subplots(1, len(spec["rates"]), figsize=(6 * len(spec["rates"]), 4.2), squeeze=False)
    for ax, rate in zip(axes[0], spec["rates"]):
        for flag, colour, label in ((False, "tab:blue", "1 ms clock"), (True, "tab:orange", "ARREAR")):
            if arrear is False and flag:
                continue
            idx = [i for i, (r, a) in enumerate(zip(cols["rate"], cols["arrear"])) if r == rate and a == flag]
            if not idx:
                continue
            total_mb = [cols["rsplen"][i] * cols["nrsp"][i] / 1e6 for i in idx]
            ax.scatter(total_mb, [cols["completion_us"][i] / 1e3 for i in idx], s=1, alpha=0.3, color=colour, label=label)
        ax.set(xlabel="total response length (MB)", ylabel="transaction completion time (ms)", title=f"{rate}", yscale="log")
    return fig, axes[0]


def clues_sweep_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    fig, axes = _sweep_axes(rows, spec, False)
    return _finish(fig, axes)


def clues_arrear_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    fig, axes = _sweep_axes(rows, spec, True)
    return _finish(fig, axes)


# ---- clues-latency: Figs. 26-28, Table 5 --------------------------------------------------


def _srtt_box(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The responders' SRTT after every ACK plus their handshake samples
    (each responder's smallest sample): a box of five numbers, in ns."""
    flows = sorted(r.flows.to_pylist(), key=lambda f: f["src"])
    mins = [f["min_rtt"] * 1e9 for f in flows]
    t = r.tcp_trace
    srtt = sorted(mins + [s * 1e9 for s, side in zip(t["srtt"].to_pylist(), t["side"].to_pylist()) if side == 1])
    box = {"min": srtt[0], "q1": _quantile(srtt, 0.25), "median": _quantile(srtt, 0.5), "q3": _quantile(srtt, 0.75), "max": srtt[-1]}
    return [
        # Table 5: the first responder's handshake sample (docs/reproduce.md
        # says why), and the smaller of all the responders'.
        {"metric": "min_rtt_ns", "value": mins[0], "per_responder": mins},
        {"metric": "min_rtt_any_ns", "value": min(mins)},
        # How far the handshake's sample sits below the bulk: (q1 - min) / q1.
        {"metric": "min_gap_fraction", "value": (box["q1"] - box["min"]) / box["q1"]},
        {"metric": "drops", "value": sum(r.ports["ingress_drops"].to_pylist())},
        {"metric": "srtt_ns", "value": None, "box": box},
    ]


def _quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    i = q * (len(xs) - 1)
    lo = int(i)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (i - lo)


def clues_latency(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs = []
    for d in spec["distances_m"]:
        for fwd in spec["forwarding"]:
            for medium in spec["media_ns_per_m"]:
                for rate in spec["rates"]:
                    delay_ps = round(d * medium * 1000)
                    condition = {"distance_m": d, "forwarding": fwd, "medium": medium, "rate": rate}
                    jobs.append((condition, scenario, None, {"topology.link_rate": rate, "topology.link_delay": f"{delay_ps}ps",
                                                             "switch.voq.backplane_latency": fwd}))
    return _run_jobs(jobs, _srtt_box, spec)


def clues_latency_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    distances, rates = spec["distances_m"], spec["rates"]
    fig, axes = plt.subplots(len(distances), len(rates), figsize=(4.5 * len(rates), 3.2 * len(distances)), squeeze=False)
    boxes = [r for r in rows if r["metric"] == "srtt_ns"]
    for i, d in enumerate(distances):
        for j, rate in enumerate(rates):
            ax = axes[i][j]
            here = [r for r in boxes if r["distance_m"] == d and r["rate"] == rate]
            stats = [{"label": f"{r['forwarding']}\n{r['medium']}", "whislo": r["box"]["min"], "q1": r["box"]["q1"], "med": r["box"]["median"],
                      "q3": r["box"]["q3"], "whishi": r["box"]["max"], "fliers": []} for r in here]
            if stats:
                ax.bxp(stats, showfliers=False)
            ax.set(yscale="log", title=f"Fig. {26 + i}: {d:g} m, {rate}", ylabel="SRTT (ns)" if j == 0 else None)
            ax.tick_params(axis="x", labelsize=6, rotation=90)
            ax.plot([], [], " ", label="forwarding / ns per m")
    return _finish(fig, axes.flat)


# ---- clues-cases: the worked examples of Figs. 24-25 -------------------------------------


def _case_job(c: dict[str, Any], scenario: str, spec: dict[str, Any], arrear: bool, cells: int) -> Job:
    n = c["responders"]
    overrides = {"topology.link_rate": spec["rate"], "topology.hosts": n + 1, "switch.voq.ingress_cells": cells,
                 "workload[0].responders": list(range(1, n + 1)), "workload[0].response_size": f"{c['response']}B",
                 "output.pcap": [{"host": 0, "name": "querier"}, {"host": n, "name": "labelled"}], "output.queue_sample_interval": "0s"}
    if arrear:
        overrides["tcp.arrear"] = {"clock": "1ns"}
    return ({"case": c["name"], "arrear": arrear, "cells": cells}, scenario, None, overrides)


def _measure_case(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The transaction, and its last responder as the thesis' figures show it."""
    from ..analysis import tcp_segments

    flow = max(r.flows.to_pylist(), key=lambda f: f["src"])
    n = flow["src"]
    addr = f"10.0.0.{n + 1}:"
    # Data segments of the labelled responder: (time, seq) as it sent them and as the querier got them.
    sent = [(s["time"], s["seq"]) for s in tcp_segments(r.pcaps["labelled"]) if s["src"].startswith(addr) and s["payload"] > 0]
    got = [(s["time"], s["seq"]) for s in tcp_segments(r.pcaps["querier"]) if s["src"].startswith(addr) and s["payload"] > 0]
    sent_count, got_count = Counter(q for _, q in sent), Counter(q for _, q in got)
    seqs = sorted(sent_count)
    lost = [q for q in seqs if sent_count[q] > got_count[q]]
    q = r.queries.to_pylist()[0]
    return [
        {"metric": "completion_us", "value": q["completion_time"] * 1e6},
        {"metric": "drops", "value": r.summary["packets_dropped"]},
        {"metric": "timeouts", "value": flow["timeouts"]},
        {"metric": "spurious_timeouts", "value": flow["spurious_timeouts"]},
        {"metric": "first_data_us", "value": (got[0][0] - sent[0][0]) * 1e6},
        # Which of its segments was lost first, counted from the end (1: the last).
        {"metric": "dropped_segment_from_end", "value": len(seqs) - seqs.index(lost[0]) if lost else None},
    ]


def clues_cases(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs = [_case_job(c, scenario, spec, a, c["cells"]) for c in spec["case"] for a in (False, True)]
    jobs += [_case_job(c, scenario, spec, False, spec["lossless_cells"]) for c in spec["case"]]
    rows = _run_jobs(jobs, _measure_case, spec)
    value = {(r["case"], r["arrear"], r["cells"], r["metric"]): r["value"] for r in rows}
    out = [r for r in rows if r["cells"] != spec["lossless_cells"]]
    for c in spec["case"]:
        name, cells = c["name"], c["cells"]
        one_ms, arrear = (value[(name, a, cells, "completion_us")] for a in (False, True))
        lossless = value[(name, False, spec["lossless_cells"], "completion_us")]
        out.append({"case": name, "arrear": False, "cells": cells, "metric": "rto_tiers", "value": round((one_ms - lossless) / 1000)})
        out.append({"case": name, "arrear": True, "cells": cells, "metric": "arrear_extra_us", "value": arrear - one_ms})
    return out


def clues_cases_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, 4))
    names = [c["name"] for c in spec["case"]]
    for k, (arrear, label) in enumerate(((False, "1 ms clock"), (True, "ARREAR"))):
        ys = [next(r["value"] for r in rows if r["case"] == n and r["arrear"] is arrear and r["metric"] == "completion_us") for n in names]
        ax.bar([i + 0.4 * k for i in range(len(names))], ys, width=0.4, label=label)
    ax.set_xticks([i + 0.2 for i in range(len(names))], [f"{c['name']}: {c['responders']} x {c['response']} B, {c['cells']} cells" for c in spec["case"]], fontsize=7)
    ax.set(yscale="log", ylabel="transaction completion (µs)", title="Figs. 24-25: the thesis' worked examples")
    return _finish(fig, [ax])


RUNNERS = {
    "clues-rtt": (clues_rtt, clues_rtt_figure),
    "clues-occupancy": (clues_occupancy, clues_occupancy_figure),
    "clues-loss-recovery": (clues_loss_recovery, clues_loss_recovery_figure),
    "clues-nagle": (clues_nagle, clues_nagle_figure),
    "clues-sweep": (clues_sweep, clues_sweep_figure),
    "clues-arrear": (clues_arrear, clues_arrear_figure),
    "clues-latency": (clues_latency, clues_latency_figure),
    "clues-cases": (clues_cases, clues_cases_figure),
}
