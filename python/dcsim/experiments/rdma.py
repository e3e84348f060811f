"""Reproductions of the RDMA papers (issue 28): PFC's congestion spreading
and deadlock, DCQCN's fairness; runners return measured rows
{metric, condition..., value} and draw the figures."""

from __future__ import annotations

import copy
import functools
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


# ---- dcqcn-incast -------------------------------------------------------------------------------


def _measure_incast_port(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The receiver's switch port: its wire bytes so far and its queue samples."""
    port = next(p for p in r.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] == spec["receiver"])
    q = r.queues
    kb = [b / 1e3 for p, b in zip(q["port"].to_pylist(), q["bytes"].to_pylist()) if p == port["port"]]
    return [{"metric": "port", "value": None, "tx_bytes": port["tx_bytes"], "queue_kb": kb}]


def dcqcn_incast(spec: dict[str, Any], folder: Path) -> Rows:
    """Each condition runs to the queue sampling's start and to the end
    (deterministic: the first is the second's beginning), so the link's
    throughput is measured over the same second half as the queue."""
    base = _base(folder, spec)
    end = units.parse(base["run"]["duration"])
    start = units.parse(base["output"]["queue_sample_start"])
    conditions = [("DCQCN", k) for k in spec["senders"]] + [(name, spec["fig19_senders"]) for name in spec["schemes"]]
    jobs: list[Job] = []
    for name, k in conditions:
        scheme = spec["schemes"][name]
        for until in (start, end):
            s = copy.deepcopy(base)
            s["run"]["duration"] = f"{round(until * 1e12)}ps"
            for key in scheme.get("drop", []):
                table, *rest = key.split(".")
                if rest:
                    del s[table][rest[0]]
                else:
                    del s[table]
            s["workload"] = [{"type": "bulk", "src": f"0..{k}", "dst": spec["receiver"], "size": "inf"}]
            jobs.append(({"scheme": name, "senders": k}, s, scheme.get("preset"), scheme.get("set", {})))
    runs = _run_jobs(jobs, _measure_incast_port, spec)
    rows: Rows = []
    for early, full in zip(runs[0::2], runs[1::2]):
        condition = {"scheme": full["scheme"], "senders": full["senders"]}
        rows += _incast_rows(condition, (full["tx_bytes"] - early["tx_bytes"]) * 8 / (end - start) / 1e9, full["queue_kb"])
    # The paper's fluid model (§5.1) on the same conditions and window: a
    # second reference, shown beside dcsim's (figure, docs), never compared.
    flows = spec["senders"] + [spec["fig19_senders"]]
    fluid = _dcqcn_fluid(tuple(flows), spec["fluid_packet_bytes"], end)
    window = fluid["time"] > start
    every = round(units.parse(base["output"]["queue_sample_interval"]) / fluid["time"][0])  # as the switch samples
    for k, q, link in zip(flows, fluid["queue_bytes"], fluid["link_bps"]):
        rows += _incast_rows({"scheme": "fluid model", "senders": k}, link[window].mean() / 1e9, list(q[window][::every] / 1e3))
    return rows


def _incast_rows(condition: dict[str, Any], link_gbps: float, queue_kb: list[float]) -> Rows:
    """The receiver's link and the queue samples' statistics."""
    from ..analysis import percentile

    q = sorted(queue_kb)
    return [
        condition | {"metric": "link_gbps", "value": link_gbps},
        condition | {"metric": "queue_max_kb", "value": q[-1] if q else None},
        condition | {"metric": "queue_p95_kb", "value": percentile(q, 95) if q else None},
        condition | {"metric": "queue_mean_kb", "value": sum(q) / len(q) if q else None},
        # The CDF's percentiles 0-100 (the figure's curve) rather than every sample.
        condition | {"metric": "queue_kb", "value": None, "percentiles": [percentile(q, p) for p in range(101)] if q else []},
    ]


@functools.lru_cache(maxsize=4)
def _dcqcn_fluid(flows: tuple[int, ...], packet_bytes: float, duration: float) -> dict[str, Any]:
    """DCQCN's fluid model with the paper's parameters (deterministic: one
    integration serves every replica)."""
    from ..analysis.dcqcn_fluid import DcqcnFluid, integrate

    return integrate(DcqcnFluid(packet_bytes=packet_bytes), flows, duration)


def dcqcn_incast_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, metric, limit, label in [(axes[0], "link_gbps", 39, "receiver's link (Gb/s)"), (axes[1], "queue_max_kb", 100, "largest queue sample (KB)")]:
        for scheme, style, name in (("DCQCN", "o-", "DCQCN"), ("fluid model", "x--", "the paper's fluid model (§5.1)")):
            pts = sorted((r["senders"], r["value"]) for r in rows if r["scheme"] == scheme and r["metric"] == metric and r["senders"] in spec["senders"])
            ax.plot([k for k, _ in pts], [v for _, v in pts], style, label=name)
        ax.axhline(limit, color="grey", lw=0.8, ls="--", label=f"paper: {limit}")
        ax.set(xlabel="senders (K:1)", ylabel=label, title="K:1 incast (§6.1)")
    for r in rows:
        if r["metric"] == "queue_kb" and r["senders"] == spec["fig19_senders"]:
            q = r["percentiles"]
            axes[2].plot(q, [p / 100 for p in range(len(q))], label=r["scheme"])
    axes[2].set(xlabel="queue (KB)", ylabel="CDF", title=f"{spec['fig19_senders']}:1 incast queue (Fig. 19)")
    return _finish(fig, axes)


# ---- hpcc-fct ----------------------------------------------------------------------------------


def _incast_flows(spec: dict[str, Any], hosts: int, until_s: float) -> list[dict[str, Any]]:
    """Incast events at Poisson times over [0, until_s): each picks one
    receiver and `fanin` other hosts that each send `bytes` to it at once,
    drawn from the replica's own seed (the same list for every scheme)."""
    import random

    from ._common import replica_seed

    inc = spec["incast"]
    rng = random.Random(replica_seed(spec, inc["seed"]))
    mean_gap = inc["fanin"] * inc["bytes"] * 8 / (inc["share"] * hosts * spec["host_gbps"] * 1e9)
    flows, t = [], rng.expovariate(1 / mean_gap)
    while t < until_s:
        dst = rng.randrange(hosts)
        for src in rng.sample([h for h in range(hosts) if h != dst], inc["fanin"]):
            flows.append({"src": src, "dst": dst, "size": f"{inc['bytes']}B", "start": f"{round(t * 1e12)}ps"})
        t += rng.expovariate(1 / mean_gap)
    return flows


def _size_buckets(flows: list[tuple[int, float]], spec: dict[str, Any]) -> dict[str, list[float]]:
    """The paper's buckets: flows sorted by size, cut at fractions of their count."""
    flows = sorted(flows)
    n = len(flows)
    return {name: sorted(s for _, s in flows[round(lo * n):round(hi * n)]) for name, (lo, hi) in spec["buckets"].items()}


def _measure_fct(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """The 95th-percentile slowdown per size bucket of the background flows
    (incast flows apart), the switches' queues, PFC's pauses."""
    from ..analysis import percentile

    f = r.flows
    rows: Rows = []
    sizes, slowdowns, workloads = f["bytes"].to_pylist(), f["slowdown"].to_pylist(), f["workload"].to_pylist()
    background = [(b, s) for b, s, w in zip(sizes, slowdowns, workloads) if w == 0 and s is not None]
    p = spec["percentile"]
    for bucket, values in _size_buckets(background, spec).items():
        rows.append({"bucket": bucket, "metric": f"slowdown_p{p}", "value": percentile(values, p) if values else None})
    incast = sorted(s for s, w in zip(slowdowns, workloads) if w == 1 and s is not None)
    if incast:
        rows.append({"bucket": "incast", "metric": f"slowdown_p{p}", "value": percentile(incast, p)})
    q = sorted(r.queues["bytes"].to_pylist())
    paused = sum(r.pfc["paused_time"].to_pylist()) if r.pfc.num_rows else 0.0
    rows += [
        {"bucket": "all", "metric": "unfinished", "value": sum(1 for e in f["end"].to_pylist() if e is None)},
        {"bucket": "all", "metric": "queue_p99_kb", "value": percentile(q, 99) / 1e3 if q else None},
        {"bucket": "all", "metric": "pause_frames", "value": _pause_frames(r)},
        {"bucket": "all", "metric": "paused_fraction", "value": paused / (r.ports.num_rows * r.summary["sim_seconds"])},
        {"bucket": "all", "metric": "slowdowns", "value": None, "points": sorted(background)},
    ]
    return rows


def hpcc_fct(spec: dict[str, Any], folder: Path) -> Rows:
    base = _base(folder, spec)
    topo = base["topology"] | spec["fabric"]
    base["topology"] = topo
    hosts = topo["pods"] * topo["k"] // 2 * topo["hosts_per_edge"]
    arrivals = units.parse(spec["arrivals"])
    schemes = spec["schemes"] | {"DCTCP": spec["dctcp"][spec["dctcp_over"]]}
    jobs: list[Job] = []
    for case in spec["cases"]:
        for name in case.get("schemes", schemes):
            scheme = schemes[name]
            s = copy.deepcopy(base)
            s["run"] = {"duration": f"{round((arrivals + units.parse(spec['drain'])) * 1e12)}ps", "stop_when_done": True}
            s["workload"] = [{"type": "poisson", "size": {"cdf": case["workload"]}, "load": case["load"], "load_reference": "host",
                              "pattern": "all_to_all", "stop": spec["arrivals"], "dscp": spec["data_dscp"]}]
            if case.get("incast"):
                incast = [f | {"dscp": spec["data_dscp"]} for f in _incast_flows(spec, hosts, arrivals)]
                s["workload"].append({"type": "flows", "flows": incast})
            for key, value in scheme.items():
                s[key] = copy.deepcopy(value) if not isinstance(value, dict) else s.get(key, {}) | copy.deepcopy(value)
            if "rdma" in s:
                s["rdma"]["completion"] = spec["completion"]
            jobs.append(({"case": case["name"], "scheme": name}, s, None, {}))
    return _run_jobs(jobs, _measure_fct, spec)


def hpcc_fct_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    """Per case: the 95th-percentile slowdown against flow size (in size
    percentile bins, as HPCC's Figs. 9-10), a line per scheme."""
    from ..analysis import percentile
    from ..plot import _mpl

    plt = _mpl()
    cases = list(dict.fromkeys(r["case"] for r in rows))
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 3.8), squeeze=False)
    for ax, case in zip(axes[0], cases):
        for r in rows:
            if r["case"] != case or r["metric"] != "slowdowns" or not r["points"]:
                continue
            pts = r["points"]
            bins = [pts[i * len(pts) // 20:(i + 1) * len(pts) // 20] for i in range(20)]
            xs = [b[-1][0] for b in bins if b]
            ys = [percentile(sorted(s for _, s in b), 95) for b in bins if b]
            ax.plot(xs, ys, marker=".", label=r["scheme"])
        ax.set(xscale="log", yscale="log", xlabel="flow size (B)", ylabel="95th-percentile slowdown", title=case)
    return _finish(fig, list(axes[0]))


# ---- timely-incast -----------------------------------------------------------------------------


def _measure_timely(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """Each flow's delivered bytes (by flow id) and, from `warmup_s` on, the
    server links' queue samples as RTTs (base + queue / 10 Gb/s)."""
    servers = [p for p in r.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] >= spec["clients"]]
    ids = {p["port"]: p["rate_bps"] for p in servers}
    q = r.queues
    rtts = [spec["base_rtt_us"] + b * 8 / ids[p] * 1e6
            for t, p, b in zip(q["time"].to_pylist(), q["port"].to_pylist(), q["bytes"].to_pylist()) if p in ids and t >= spec["warmup_s"]]
    return [{"metric": "delivered", "value": None, "bytes": r.flows["delivered"].to_pylist(), "rtts": rtts}]


def timely_incast(spec: dict[str, Any], folder: Path) -> Rows:
    """Like dcqcn-fairness: each scheme runs to `warmup_s` and to the end
    (the first run is the second's prefix), so throughput and shares are
    measured over the second part. The flows start at times drawn from the
    replica's seed over `start_spread` (the same for every scheme)."""
    import random

    from ._common import replica_seed

    base = _base(folder, spec)
    end = units.parse(base["run"]["duration"])
    rng = random.Random(replica_seed(spec, spec["seed"]))
    spread = units.parse(spec["start_spread"])
    flows = [{"src": c, "dst": spec["clients"] + k % 2, "size": "inf", "start": f"{round(rng.uniform(0, spread) * 1e12)}ps"}
             for c in range(spec["clients"]) for k in range(spec["connections"])]
    jobs: list[Job] = []
    for name, cc in spec["schemes"].items():
        for until in (spec["warmup_s"], end):
            s = copy.deepcopy(base)
            s["run"]["duration"] = f"{round(until * 1e12)}ps"
            s["rdma"] = s.get("rdma", {}) | {"cc": cc}
            s["workload"] = [{"type": "flows", "flows": flows}]
            jobs.append(({"scheme": name}, s, None, {}))
    from ..analysis import percentile

    runs = _run_jobs(jobs, _measure_timely, spec)
    rows: Rows = []
    for early, full in zip(runs[0::2], runs[1::2]):
        got = [b - a for a, b in zip(early["bytes"], full["bytes"])]
        span = end - spec["warmup_s"]
        rtts = sorted(full["rtts"])
        condition = {"scheme": full["scheme"]}
        rows += [
            condition | {"metric": "throughput_gbps", "value": sum(got) * 8 / span / 1e9},
            condition | {"metric": "jain", "value": sum(got) ** 2 / (len(got) * sum(g * g for g in got)) if any(got) else None},
            condition | {"metric": "rtt_mean_us", "value": sum(rtts) / len(rtts) if rtts else None},
            condition | {"metric": "rtt_p99_us", "value": percentile(rtts, 99) if rtts else None},
            condition | {"metric": "flow_gbps", "value": None, "rates": sorted(g * 8 / span / 1e9 for g in got)},
        ]
    return rows


def timely_incast_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for r in rows:
        if r["metric"] == "flow_gbps":
            ax.plot(range(1, len(r["rates"]) + 1), r["rates"], marker=".", label=r["scheme"])
    ax.axhline(0.5, color="grey", lw=0.8, label="fair share (500 Mb/s)")
    ax.set(xlabel="flow (sorted)", ylabel="goodput (Gb/s)", title="40 flows, 2 x 10 Gb/s (Fig. 13)")
    return _finish(fig, [ax])


RUNNERS = {
    "pfc-spreading": (pfc_spreading, pfc_spreading_figure),
    "pfc-deadlock": (pfc_deadlock, pfc_deadlock_figure),
    "dcqcn-fairness": (dcqcn_fairness, dcqcn_fairness_figure),
    "dcqcn-incast": (dcqcn_incast, dcqcn_incast_figure),
    "hpcc-fct": (hpcc_fct, hpcc_fct_figure),
    "timely-incast": (timely_incast, timely_incast_figure),
}
