"""Reproductions of seed 000 (HULL in ns-2) and seed 001 (phantom queues in
Mininet): runners that return measured rows {metric, condition..., value}
and the figures. The schemes are the presets in data/presets/hull.toml.

Every run of an experiment is independent: they go to a process pool
(experiments/_common.py)."""

from __future__ import annotations

import statistics
import tomllib
from pathlib import Path
from typing import Any

from ._common import Job, Rows, _finish, _mean, _pct, _port_towards, _queue_latency_us, _run_jobs, _samples

def _goodput_mbps(result: Any) -> float:
    """Payload delivered by all flows over the run."""
    return sum(result.flows["delivered"].to_pylist()) * 8 / result.summary["sim_seconds"] / 1e6


def _scheme(spec: dict[str, Any], scheme: str) -> tuple[str, dict[str, Any]]:
    """A scheme's preset and the experiment's changes to it (e.g. the static
    runs' 900 Mb/s PQ drain); a variant names its preset in `scheme_preset`."""
    preset = spec.get("scheme_preset", {}).get(scheme, scheme)
    return f"hull/{preset}", dict(spec.get("scheme_overrides", {}).get(scheme, {}))


# ---- hull-static: Fig. 1b / 1c -------------------------------------------------------


def _measure_static(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    port = _port_towards(r, 0)
    warmup = spec["warmup_s"]
    lat = _queue_latency_us(r, port, warmup)
    return [{"metric": "queue_latency_mean_us", "value": _mean(lat)},
            {"metric": "queue_latency_p99_us", "value": _pct(lat, 99)},
            {"metric": "goodput_mbps", "value": _goodput_mbps(r)}]


def hull_static(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = []
    for delay in spec["delays"]:
        for n in spec["flows"]:
            for scheme in spec["schemes"]:
                ov = {"topology.link_delay": delay, "workload[0].src": f"1..{n + 1}", "run.duration": spec["duration"]}
                preset, changes = _scheme(spec, scheme)
                jobs.append(({"delay": delay, "flows": n, "scheme": scheme}, scenario, preset, ov | changes))
    return _run_jobs(jobs, _measure_static, spec)


def hull_static_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    delays = sorted({r["delay"] for r in rows}, key=lambda d: float(d.rstrip("us")))
    fig, axes = plt.subplots(len(delays), 2, figsize=(10, 3.6 * len(delays)), squeeze=False)
    for i, delay in enumerate(delays):
        for scheme in spec["schemes"]:
            pts = sorted((r["flows"], r["value"]) for r in rows if r["delay"] == delay and r["scheme"] == scheme and r["metric"] == "queue_latency_mean_us")
            p99 = sorted((r["flows"], r["value"]) for r in rows if r["delay"] == delay and r["scheme"] == scheme and r["metric"] == "queue_latency_p99_us")
            if not pts:
                continue
            (line,) = axes[i][0].plot([p[0] for p in pts], [max(p[1], 0.01) for p in pts], marker="o", label=scheme)
            axes[i][0].scatter([p[0] for p in p99], [max(p[1], 0.01) for p in p99], marker="_", s=120, color=line.get_color())
            thr = sorted((r["flows"], r["value"]) for r in rows if r["delay"] == delay and r["scheme"] == scheme and r["metric"] == "goodput_mbps")
            axes[i][1].plot([p[0] for p in thr], [p[1] for p in thr], marker="o", label=scheme)
        axes[i][0].set(yscale="log", xlabel="flows", ylabel="queueing latency (µs), mean and 99th", title=f"links {delay}")
        axes[i][1].set(xlabel="flows", ylabel="aggregate goodput (Mb/s)", title=f"links {delay}")
        for ax in axes[i]:
            ax.grid(alpha=0.3)
        axes[i][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


# ---- hull-dynamic: Table II ----------------------------------------------------------


def _client_port_stats(r: Any, spec: dict[str, Any]) -> Rows:
    lat = _queue_latency_us(r, _port_towards(r, 0), spec["warmup_s"])
    return [{"metric": "switch_latency_mean_us", "value": _mean(lat)}, {"metric": "switch_latency_p99_us", "value": _pct(lat, 99)}]


def _measure_dynamic(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    flows = [f for f in r.flows.to_pylist() if f["fct"] is not None and f["start"] >= spec["warmup_s"]]
    small = [f["fct"] * 1e6 for f in flows if f["bytes"] == spec["small_bytes"]]
    large = [f["fct"] * 1e3 for f in flows if f["bytes"] == spec["large_bytes"]]
    return _client_port_stats(r, spec) + [
        {"metric": "small_fct_mean_us", "value": _mean(small)}, {"metric": "small_fct_p99_us", "value": _pct(small, 99)},
        {"metric": "large_fct_mean_ms", "value": _mean(large)}, {"metric": "large_fct_p99_ms", "value": _pct(large, 99)},
        {"metric": "small_flows", "value": len(small)}, {"metric": "large_flows", "value": len(large)},
    ]


def _large_flow_cost(rows: Rows, key: str) -> Rows:
    """HULL's 10 MB FCT over the other schemes', per condition (Table II's
    "FCT of the large flows increased by ...")."""
    out = []
    for r in rows:
        if r["metric"] == "large_fct_mean_ms" and r["scheme"] == "DCTCP-PQ950-Pacer":
            for base in ("TCP-Drop-tail", "DCTCP-30K"):
                other = next((x["value"] for x in rows if x["metric"] == "large_fct_mean_ms" and x["scheme"] == base and x[key] == r[key]), None)
                if other and r["value"] is not None:
                    out.append({key: r[key], "scheme": f"DCTCP-PQ950-Pacer/{base}", "metric": "large_fct_cost", "value": r["value"] / other})
    return out


def _dynamic_requests(first: int, load: float, spec: dict[str, Any]) -> dict[str, Any]:
    """Overrides for §III-A's requests as the seed's driver issues them: two
    streams, the 10 MB one in workload `first` and the 900 B one after it,
    sharing `load` of the client's link so that small_per_large 900 B
    requests go with each 10 MB one."""
    large = spec["large_bytes"]
    small = spec["small_per_large"] * spec["small_bytes"]
    return {f"workload[{first}].load": load * large / (large + small), f"workload[{first + 1}].load": load * small / (large + small),
            f"workload[{first}].stop": spec["stop"], f"workload[{first + 1}].stop": spec["stop"]}


def hull_dynamic(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = []
    for load in spec["loads"]:
        for scheme in spec["schemes"]:
            preset, changes = _scheme(spec, scheme)
            jobs.append(({"load": load, "scheme": scheme}, scenario, preset, _dynamic_requests(0, load, spec) | changes))
    rows = _run_jobs(jobs, _measure_dynamic, spec)
    return rows + _large_flow_cost(rows, "load")


def _bars(rows: Rows, spec: dict[str, Any], key: str, metrics: list[tuple[str, str]], reference: bool) -> Any:
    """One panel per metric: bars per scheme grouped by `key`, with the
    paper's values as black ticks where the experiment file has them."""
    from ..plot import _mpl

    plt = _mpl()
    conds = sorted({r[key] for r in rows})
    schemes = spec["schemes"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.8), squeeze=False)
    width = 0.8 / len(schemes)
    for ax, (metric, label) in zip(axes[0], metrics):
        for j, scheme in enumerate(schemes):
            xs, ys, ref = [], [], []
            for i, c in enumerate(conds):
                v = next((r["value"] for r in rows if r["metric"] == metric and r["scheme"] == scheme and r[key] == c), None)
                if v is None:
                    continue
                xs.append(i + j * width)
                ys.append(max(v, 1e-3))
                paper = next((x["paper"] for x in spec.get("reference", []) if x["metric"] == metric and x["condition"] == {key: c, "scheme": scheme}), None)
                ref.append(paper)
            ax.bar(xs, ys, width=width, label=scheme)
            if reference:
                ax.scatter([x for x, p in zip(xs, ref) if p], [p for p in ref if p], marker="_", s=200, color="black", zorder=3)
        ax.set(xticks=[i + 0.4 - width / 2 for i in range(len(conds))], xticklabels=[str(c) for c in conds], xlabel=key, title=label, yscale="log")
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def hull_dynamic_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    return _bars(rows, spec, "load", [("switch_latency_p99_us", "99th switch latency (µs)"), ("small_fct_p99_us", "99th 900 B FCT (µs)"),
                                      ("large_fct_mean_ms", "mean 10 MB FCT (ms)")], reference=True)


# ---- hull-search and hull-search-lowlatency: Figs. 4 and 5 ---------------------------


def _measure_search(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    warmup = spec["warmup_s"]
    queries = [q for q in r.queries.to_pylist() if q["start"] >= warmup]
    qct = [q["completion_time"] * 1e3 for q in queries]
    within = [q["within_deadline"] for q in queries]
    # Mean response time per query: its responses are the flows of workload 0 with its round.
    per_round: dict[int, list[float]] = {}
    for f in r.flows.to_pylist():
        if f["workload"] == 0 and f["fct"] is not None and f["start"] >= warmup:
            per_round.setdefault(f["round"], []).append(f["fct"] * 1e3)
    mean_response = [statistics.fmean(v) for v in per_round.values()]
    lat = _queue_latency_us(r, _port_towards(r, 0), warmup)
    rows = [
        {"metric": "qct_p99_ms", "value": _pct(qct, 99)},
        {"metric": "qct_mean_ms", "value": _mean(qct)},
        {"metric": "mean_response_p99_ms", "value": _pct(mean_response, 99)},
        # "99th percentile of the number of servers that respond within the deadline (worst cases)".
        {"metric": "within_deadline_worst1pct", "value": _pct(within, 1)},
        {"metric": "queue_latency_p99_us", "value": _pct(lat, 99)},
        {"metric": "queries", "value": len(queries)},
    ]
    # Pacer association statistics of one server (host 1), per workload (seed
    # 000 §III-B): the search responses and the 10 MB background requests,
    # the seed's "background flow" (its driver's one connection per server).
    if r.pacer.num_rows:
        for wl, name in ((0, "search"), (1, "background")):
            sel = [p for p in r.pacer.to_pylist() if p["host"] == spec["pacer_host"] and p["workload"] == wl]
            packets = sum(p["packets"] for p in sel)
            assoc = sum(p["associations"] for p in sel)
            released = sum(p["releases"] for p in sel)
            rows += [{"metric": f"pacer_assoc_per_packet_{name}", "value": assoc / packets if packets else None},
                     {"metric": f"pacer_release_per_assoc_{name}", "value": released / assoc if assoc else None},
                     {"metric": f"pacer_packets_{name}", "value": packets}]
    return rows


def _reduction(rows: Rows, metric: str, better: str, base: str, over: list[Any]) -> Rows:
    """Mean over background loads of 1 - better/base (seed 000 §III-B's
    "reduces the 99th percentile ... by N% compared to ...")."""
    fracs = []
    for bg in over:
        a = next((r["value"] for r in rows if r["metric"] == metric and r["scheme"] == better and r["background_mbps"] == bg), None)
        b = next((r["value"] for r in rows if r["metric"] == metric and r["scheme"] == base and r["background_mbps"] == bg), None)
        if a is not None and b:
            fracs.append(1 - a / b)
    if not fracs:
        return []
    return [{"metric": f"{metric}_reduction", "scheme": f"{better} vs {base}", "background_mbps": "with background", "value": statistics.fmean(fracs)}]


def hull_search(spec: dict[str, Any], folder: Path) -> Rows:
    path = folder / spec["scenario"]
    with_background = tomllib.loads(path.read_text(encoding="utf-8"))
    alone = with_background | {"workload": with_background["workload"][:1]}
    stop = spec["stop"]
    jobs: list[Job] = []
    for bg in spec["background_mbps"]:
        for scheme in spec["schemes"]:
            preset, changes = _scheme(spec, scheme)
            ov = {"workload[0].stop": stop}
            if bg > 0:
                ov |= _dynamic_requests(1, bg / 1000, spec)
            jobs.append(({"background_mbps": bg, "scheme": scheme}, with_background if bg > 0 else alone, preset, ov | changes))
    rows = _run_jobs(jobs, _measure_search, spec)
    with_bg = [bg for bg in spec["background_mbps"] if bg > 0]
    for base in ("TCP-Drop-tail", "DCTCP-30K"):
        rows += _reduction(rows, "qct_p99_ms", "DCTCP-PQ950-Pacer", base, with_bg)
    return rows


def hull_search_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    return _bars([r for r in rows if isinstance(r["background_mbps"], int)], spec, "background_mbps",
                 [("qct_p99_ms", "99th query completion (ms)"), ("mean_response_p99_ms", "99th mean response time (ms)"),
                  ("within_deadline_worst1pct", "responders within deadline (worst 1%)"), ("queue_latency_p99_us", "99th queueing latency (µs)")],
                 reference=False)


# ---- hull-mininet: seed 001 ----------------------------------------------------------


def _measure_mininet(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    packets = _samples(r, _port_towards(r, 0), "packets", spec["warmup_s"])
    return [{"metric": "goodput_mbps", "value": _goodput_mbps(r)},
            {"metric": "queue_packets_mean", "value": _mean(packets)},
            {"metric": "queue_packets_p99", "value": _pct(packets, 99)},
            {"metric": "queue_at_most_2_packets", "value": sum(1 for n in packets if n <= 2) / len(packets) if packets else None}]


def hull_mininet(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = []
    for n in spec["hosts"]:
        for scheme, overrides in spec["scheme"].items():
            ov = {"topology.hosts": n, "workload[0].src": f"1..{n}", "run.duration": spec["duration"]}
            jobs.append(({"hosts": n, "scheme": scheme}, scenario, None, ov | overrides))
    return _run_jobs(jobs, _measure_mininet, spec)


def hull_mininet_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for scheme in spec["scheme"]:
        for ax, metric in zip(axes, ("goodput_mbps", "queue_packets_mean")):
            pts = sorted((r["hosts"], r["value"]) for r in rows if r["scheme"] == scheme and r["metric"] == metric)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=scheme)
    axes[0].set(xlabel="hosts (n - 1 senders)", ylabel="goodput (Mb/s)", title="throughput")
    axes[1].set(xlabel="hosts (n - 1 senders)", ylabel="mean queue (packets)", yscale="log", title="queue occupancy")
    return _finish(fig, axes)


RUNNERS = {
    "hull-static": (hull_static, hull_static_figure),
    "hull-dynamic": (hull_dynamic, hull_dynamic_figure),
    "hull-search": (hull_search, hull_search_figure),
    "hull-search-lowlatency": (hull_search, hull_search_figure),
    "hull-mininet": (hull_mininet, hull_mininet_figure),
}
