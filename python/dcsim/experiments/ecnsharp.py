"""Reproductions of seed 003 (ECN#): runners that return measured rows
{metric, condition..., value} and the figures."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

from ._common import Job, Rows, _finish, _mean, _pct, _port_towards, _run_jobs, replica_seed

# ---- ecnsharp-dwrr: Fig. 20 ------------------------------------------------------------------


def _short_flows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The mq example's short flows, drawn once from the experiment's own seed
    (the same list for every scheme)."""
    rng = random.Random(replica_seed(spec, spec["short_seed"]))
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


def ecnsharp_dwrr(spec: dict[str, Any], folder: Path) -> Rows:
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


# ---- ecnsharp-queue and ecnsharp-senders: Figs. 16-17 (queue-track) ------------------------

LINK_EXTRA_US = [0, 10, 25, 40, 80]  # queue-track: sender i's link is 10 + this[i mod 5] us


def _burst_times(end_time: float) -> list[float]:
    """queue-track's incast times: every end_time/10, from one period on,
    while before end_time (accumulated as the example does)."""
    period, t, times = end_time / 10, end_time / 10, []
    while t < end_time:
        times.append(t)
        t += period
    return times


def _queue_track(spec: dict[str, Any], folder: Path, senders: int, end_time: float) -> dict[str, Any]:
    """The queue-track scenario for `senders` senders (the receiver is host
    `senders`) with its incast flows."""
    base = tomllib.loads((folder / spec["scenario"]).read_text(encoding="utf-8"))
    base["topology"]["hosts"] = senders + 1
    base["output"]["queue_sample_ports"] = [2 * senders + 1]  # star: the switch's port toward host h is 2h + 1
    # The receiver's link has 5 us, which is link_delay; senders get 5 us more plus their class.
    base["host"]["rtt_variation"]["delays"] = [f"{5 + LINK_EXTRA_US[i % 5]}us" for i in range(senders)] + ["0us"]
    background = base["workload"][0]
    background.update({"target": senders, "hosts": f"0..{senders + 1}", "stop": f"{end_time}s"})
    base["run"]["duration"] = f"{end_time + 0.5}s"
    rng = random.Random(replica_seed(spec, spec["flow_seed"]))
    flows = [{"src": i, "dst": senders, "size": f"{round(spec['flow_min_bytes'] + (spec['flow_max_bytes'] - spec['flow_min_bytes']) * rng.random())}B",
              "start": f"{round(t * 1e9)}ns"} for t in _burst_times(end_time) for i in range(senders)]
    base["workload"] = [background, {"type": "flows", "flows": flows}]
    return base


def _measure_queue_track(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    senders, times = condition["senders"], _burst_times(condition["end_time_s"])
    port = _port_towards(r, senders)
    assert port["port"] == 2 * senders + 1, "the sampled port is the bottleneck"
    samples = list(zip(r.queues["time"].to_pylist(), r.queues["packets"].to_pylist()))
    length, burst = spec["window_s"], times[-1]

    def window(start: float) -> list[tuple[float, int]]:
        return [(t, n) for t, n in samples if start <= t <= start + length]

    burst_window = window(burst)
    in_bursts = [n for b in times for _, n in window(b)]
    # Background: outside the burst windows, after the first 0.1 s, while flows still start.
    background = [n for t, n in samples if 0.1 <= t < condition["end_time_s"] and not any(b <= t <= b + length for b in times)]
    incast = [f for f in r.flows.to_pylist() if f["workload"] == 1]
    fct = [f["fct"] * 1e3 for f in incast if f["fct"] is not None]
    # A query: the flows of one burst; it completes with its last flow.
    qct = []
    for t in times:
        mine = [f for f in incast if abs(f["start"] - t) < 1e-9]
        if mine and all(f["fct"] is not None for f in mine):
            qct.append(max(f["fct"] for f in mine) * 1e3)
    bg_flows = [f for f in r.flows.to_pylist() if f["workload"] == 0]
    return [
        {"metric": "burst_peak_pkts", "value": max(in_bursts, default=None)},
        {"metric": "last_burst_peak_pkts", "value": max((n for _, n in burst_window), default=None)},
        {"metric": "background_mean_pkts", "value": _mean(background)},
        {"metric": "background_p99_pkts", "value": _pct(background, 99)},
        {"metric": "max_queue_pkts", "value": port["max_queue_packets"]},
        {"metric": "drops", "value": port["drops"]},
        {"metric": "marks", "value": port["ecn_marks"]},
        {"metric": "incast_flows_done", "value": len(fct)},
        {"metric": "incast_flows", "value": len(incast)},
        {"metric": "fct_mean_ms", "value": _mean(fct)},
        {"metric": "fct_p99_ms", "value": _pct(fct, 99)},
        {"metric": "qct_mean_ms", "value": _mean(qct)},
        {"metric": "qct_max_ms", "value": max(qct, default=None)},
        {"metric": "background_flows_done", "value": sum(f["fct"] is not None for f in bg_flows)},
        {"metric": "background_flows", "value": len(bg_flows)},
        {"metric": "queue_trace", "value": None, "burst": burst, "trace": [(t - burst, n) for t, n in burst_window]},
    ]


def ecnsharp_queue_track(spec: dict[str, Any], folder: Path) -> Rows:
    """ecnsharp-queue (one sender count) and ecnsharp-senders (a list)."""
    senders = spec["senders"]
    end_time = spec["end_time_s"]
    jobs: list[Job] = []
    for n in senders if isinstance(senders, list) else [senders]:
        base = _queue_track(spec, folder, n, end_time)
        for name, aqm in spec["aqm"].items():
            jobs.append(({"scheme": name, "senders": n, "end_time_s": end_time}, base, None, {"switch.aqm": aqm}))
    return _run_jobs(jobs, _measure_queue_track, spec)


def ecnsharp_queue_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for r in (r for r in rows if r["metric"] == "queue_trace"):
        ax.plot([t * 1e3 for t, _ in r["trace"]], [n for _, n in r["trace"]], label=r["scheme"])
    # The seed plots this window (4.05-4.055 s) with its axis shifted to read 4.000-4.005 s.
    ax.set(xlabel="time from the last burst at 4.05 s (ms)", ylabel="bottleneck queue (packets)", title="Fig. 16: the last incast burst")
    ax.axhline(600, color="grey", ls=":", lw=1)
    return _finish(fig, [ax])


def ecnsharp_senders_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        for ax, metric in zip(axes, ["fct_mean_ms", "fct_p99_ms"]):
            pts = sorted((r["senders"], r["value"]) for r in rows if r["scheme"] == scheme and r["metric"] == metric and r["value"] is not None)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=scheme)
    axes[0].set(xlabel="concurrent senders", ylabel="incast flow FCT (ms)", title="Fig. 17: mean")
    axes[1].set(xlabel="concurrent senders", ylabel="incast flow FCT (ms)", title="Fig. 17: 99th percentile")
    return _finish(fig, axes)


# ---- ecnsharp-leafspine and ecnsharp-fattree: Figs. 13-14 and the seed's extension ----------

# fct_parser.py's buckets: small below 100 KB, large above 10 MB (dcsim counts payload bytes).
SMALL_BYTES, LARGE_BYTES = 100_000, 10_000_000


def _measure_fabric(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    flows = [f for f in r.flows.to_pylist()]
    done = [f for f in flows if f["fct"] is not None]
    small = [f["fct"] * 1e3 for f in done if f["bytes"] < SMALL_BYTES]
    large = [f["fct"] * 1e3 for f in done if f["bytes"] > LARGE_BYTES]
    return [
        {"metric": "fct_mean_ms", "value": _mean([f["fct"] * 1e3 for f in done])},
        {"metric": "large_goodput_gbps", "value": _mean([f["bytes"] * 8 / f["fct"] / 1e9 for f in done if f["bytes"] > LARGE_BYTES])},
        {"metric": "small_fct_mean_ms", "value": _mean(small)},
        {"metric": "small_fct_p99_ms", "value": _pct(small, 99)},
        {"metric": "large_fct_mean_ms", "value": _mean(large)},
        {"metric": "flows", "value": len(flows)},
        {"metric": "unfinished", "value": len(flows) - len(done)},
        {"metric": "timeouts", "value": sum(f["timeouts"] for f in flows)},
        {"metric": "drops", "value": sum(p["drops"] for p in r.ports.to_pylist())},
    ]


def _loads(spec: dict[str, Any], topology: str, workload: str) -> list[float]:
    """The loads to run: spec["loads"], or with "compared" (quick versions)
    only those a claim compares on this topology and workload."""
    if spec["loads"] != "compared":
        return spec["loads"]
    sides = [claim[side] for claim in spec["claim"] for side in ("left", "right")]
    return sorted({s["load"] for s in sides if (s["topology"], s["workload"]) == (topology, workload)})


def _fabric_jobs(spec: dict[str, Any], folder: Path) -> list[Job]:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = []
    for topo in spec["topologies"]:
        for workload in spec["workloads"]:
            for load in _loads(spec, topo, workload):
                for scheme, aqm in spec["aqm"].items():
                    # One launch period, or one per topology; `stop_by_load` gives some loads their own.
                    stop = spec.get("stop_by_load", {}).get(str(load), spec["stop"])
                    overrides = {f"topology.{k}": v for k, v in spec["topology"][topo].items()} | {
                        "switch.aqm": aqm, "workload[0].size": {"cdf": spec["workload"][workload]}, "workload[0].load": load,
                        "workload[0].stop": stop[topo] if isinstance(stop, dict) else stop}
                    jobs.append(({"topology": topo, "workload": workload, "load": load, "scheme": scheme}, scenario, None, overrides))
    return jobs


def ecnsharp_fabric(spec: dict[str, Any], folder: Path) -> Rows:
    return _run_jobs(_fabric_jobs(spec, folder), _measure_fabric, spec)


FABRIC_METRICS = [("fct_mean_ms", "all flows: mean"), ("small_fct_mean_ms", "(0, 100KB]: mean"),
                  ("small_fct_p99_ms", "(0, 100KB]: 99th"), ("large_fct_mean_ms", "(10MB, inf): mean")]


def ecnsharp_fabric_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    """FCT of the first scheme normalised to the second's, against load: a
    row of panels per workload, a line per topology."""
    from ..plot import _mpl

    plt = _mpl()
    schemes = list(spec["aqm"])
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    fig, axes = plt.subplots(len(workloads), 4, figsize=(14, 3.4 * len(workloads)), squeeze=False)
    value = {(r["topology"], r["workload"], r["load"], r["scheme"], r["metric"]): r["value"] for r in rows}
    for i, workload in enumerate(workloads):
        for ax, (metric, title) in zip(axes[i], FABRIC_METRICS):
            for topo in dict.fromkeys(r["topology"] for r in rows):
                pts = [(load, value.get((topo, workload, load, schemes[0], metric)), value.get((topo, workload, load, schemes[1], metric)))
                       for load in sorted({r["load"] for r in rows})]
                pts = [(x, a / b) for x, a, b in pts if a is not None and b]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=topo)
            ax.axhline(1.0, color="grey", ls=":", lw=1)
            ax.set(xlabel="load", ylabel=f"{schemes[0]} / {schemes[1]}", title=f"{workload}, {title}")
    return _finish(fig, axes.flat)


# ---- ecnsharp-tradeoff: Fig. 2 ------------------------------------------------------------


def ecnsharp_tradeoff(spec: dict[str, Any], folder: Path) -> Rows:
    jobs: list[Job] = []
    for setting, file in spec["settings"].items():
        for kb in spec["thresholds_kb"]:
            us = kb * 8e3 / spec["line_rate_bps"] * 1e6  # the seed's conversion at 10 Gb/s
            overrides = {"switch.aqm": {"type": "tcn", "threshold": f"{round(us * 1000)}ns"}, "workload[0].stop": spec["stop"]}
            jobs.append(({"setting": setting, "threshold_kb": kb}, str(folder / file), None, overrides))
    return _run_jobs(jobs, _measure_fabric, spec)


def ecnsharp_tradeoff_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    panels = [("large_goodput_gbps", "large-flow goodput (Gb/s)", "Fig. 2a: throughput"), ("fct_mean_ms", "mean FCT, all flows (ms)", "all flows"),
              ("small_fct_p99_ms", "(0, 100KB] 99th FCT (ms)", "Fig. 2b: short-flow tail")]
    for setting in spec["settings"]:
        for ax, (metric, ylabel, title) in zip(axes, panels):
            pts = sorted((r["threshold_kb"], r["value"]) for r in rows if r["setting"] == setting and r["metric"] == metric and r["value"] is not None)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=setting)
            ax.set(xlabel="marking threshold (KB at 10 Gb/s)", ylabel=ylabel, title=title)
    return _finish(fig, axes)


RUNNERS = {
    "ecnsharp-tradeoff": (ecnsharp_tradeoff, ecnsharp_tradeoff_figure),
    "ecnsharp-leafspine": (ecnsharp_fabric, ecnsharp_fabric_figure),
    "ecnsharp-fattree": (ecnsharp_fabric, ecnsharp_fabric_figure),
    "ecnsharp-dwrr": (ecnsharp_dwrr, ecnsharp_dwrr_figure),
    "ecnsharp-queue": (ecnsharp_queue_track, ecnsharp_queue_figure),
    "ecnsharp-senders": (ecnsharp_queue_track, ecnsharp_senders_figure),
}
