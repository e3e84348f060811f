"""Reproductions of seed 002 (HSCC): runners that return measured rows
{metric, condition..., value} and the figures. The schemes are the presets
in data/presets/hscc.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._common import Job, Rows, _finish, _mean, _pct, _run_jobs, _samples

SMALL_BYTES = 100 * 1024  # "[0-100] KB" (PIAS's result.py: < 100 * 1024)


def _jain(xs: list[float]) -> float | None:
    """Jain's fairness index (seed 002 §5.1)."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else None


def _fct_rows(flows: list[dict[str, Any]]) -> Rows:
    """Small-flow mean, median, max and 99th FCT, all-flow mean FCT (ms),
    timeouts and unfinished flows."""
    done = [f for f in flows if f["fct"] is not None]
    small = [f["fct"] * 1e3 for f in done if f["bytes"] <= SMALL_BYTES]
    return [
        {"metric": "small_fct_mean_ms", "value": _mean(small)},
        {"metric": "small_fct_median_ms", "value": _pct(small, 50)},
        {"metric": "small_fct_p99_ms", "value": _pct(small, 99)},
        {"metric": "small_fct_max_ms", "value": max(small, default=None)},
        {"metric": "all_fct_mean_ms", "value": _mean([f["fct"] * 1e3 for f in done])},
        {"metric": "timeouts", "value": sum(f["timeouts"] for f in flows)},
        {"metric": "unfinished", "value": len(flows) - len(done)},
        {"metric": "flows", "value": len(flows)},
    ]


def _ratio_rows(rows: Rows, metric: str, key: str, base: dict[str, Any], name: str) -> Rows:
    """`metric` of every condition over the same-`key` row of `base`."""
    out = []
    for r in rows:
        if r["metric"] != metric:
            continue
        ref = next((x["value"] for x in rows if x["metric"] == metric and x[key] == r[key] and all(x.get(k) == v for k, v in base.items())), None)
        if ref and r["value"] is not None:
            out.append({k: v for k, v in r.items() if k not in ("metric", "value")} | {"metric": name, "value": r["value"] / ref})
    return out


def _reductions(rows: Rows, metrics: tuple[str, ...]) -> Rows:
    """HSCC's reduction against the same TCP in the same case, as the seed
    reports it: METRIC_reduction = 1 - X-HSCC / X."""
    out = []
    for r in rows:
        if r["metric"] in metrics and r["scheme"].endswith("-HSCC") and r["value"] is not None:
            base = next((x["value"] for x in rows if x["metric"] == r["metric"] and x["case"] == r["case"] and x["scheme"] == r["scheme"].removesuffix("-HSCC")), None)
            if base:
                out.append({"case": r["case"], "scheme": r["scheme"], "metric": f"{r['metric']}_reduction", "value": 1 - r["value"] / base})
    return out


# ---- hscc-leafspine-*: Figs. 9 and 10 ------------------------------------------------


def _measure_leafspine(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    return _fct_rows(r.flows.to_pylist())


def _hscc_set(spec: dict[str, Any], preset: str) -> dict[str, Any]:
    """A variant's switch.hscc keys (`hscc_set`), for the presets that run HSCC."""
    if preset != "HSCC" and not preset.endswith("-HSCC"):
        return {}
    return {f"switch.hscc.{key}": value for key, value in spec.get("hscc_set", {}).items()}


def _leafspine_jobs(spec: dict[str, Any], folder: Path, schemes: list[tuple[str, str, dict[str, Any]]]) -> list[Job]:
    """One job per (scheme, load): arrivals for `stop`, then `drain` more
    seconds for the flows in progress; flows still running then are unfinished."""
    scenario = str((folder / spec["scenario"]).resolve())
    stop = spec["stop"]
    jobs: list[Job] = []
    for load in spec["loads"]:
        for label, preset, changes in schemes:
            ov = {"workload[0].size": {"cdf": spec["cdf"]}, "workload[0].load": load, "workload[0].stop": stop,
                  "run.duration": spec["duration"]}
            jobs.append(({"load": load, "scheme": label}, scenario, f"hscc/{preset}", ov | _hscc_set(spec, preset) | changes))
    return jobs


def hscc_leafspine(spec: dict[str, Any], folder: Path) -> Rows:
    # A variant's keys for one scheme (`scheme_set`), e.g. its thresholds in bytes.
    schemes = [(s, s, spec.get("scheme_set", {}).get(s, {})) for s in spec["schemes"]]
    rows = _run_jobs(_leafspine_jobs(spec, folder, schemes), _measure_leafspine, spec)
    # PIAS's unfinished flows over all loads (the seed counts 25 in web search).
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        rows.append({"scheme": scheme, "load": "all", "metric": "unfinished_total",
                     "value": sum(r["value"] for r in rows if r["scheme"] == scheme and r["metric"] == "unfinished")})
    return rows


def _lines(rows: Rows, panels: list[tuple[str, str]], key: str, series: str, title: str, log: tuple[str, ...] = ()) -> Any:
    """One panel per metric: a line per `series` value against `key`."""
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False)
    names = list(dict.fromkeys(r[series] for r in rows))
    for ax, (metric, label) in zip(axes[0], panels):
        for name in names:
            pts = sorted((r[key], r["value"]) for r in rows if r["metric"] == metric and r[series] == name and r["value"] is not None and r[key] != "all")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=str(name))
        ax.set(xlabel=key, ylabel=label, yscale="log" if metric in log else "linear")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


LEAFSPINE_PANELS = [("small_fct_mean_ms", "small flows: mean FCT (ms)"), ("small_fct_max_ms", "small flows: max FCT (ms)"),
                    ("all_fct_mean_ms", "all flows: mean FCT (ms)"), ("timeouts", "timeouts"), ("unfinished", "unfinished flows")]


def hscc_leafspine_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    return _lines(rows, LEAFSPINE_PANELS, "load", "scheme", spec["title"], log=("small_fct_mean_ms", "small_fct_max_ms"))


# ---- hscc-thresholds: Fig. 11 ----------------------------------------------------------


def hscc_thresholds(spec: dict[str, Any], folder: Path) -> Rows:
    pairs = spec["pairs"]
    schemes = [(f"{lo}-{hi}", "HSCC", {"switch.hscc.low": lo, "switch.hscc.high": hi}) for lo, hi in pairs]
    rows = _run_jobs(_leafspine_jobs(spec, folder, schemes), _measure_leafspine, spec)
    base = {"scheme": spec["default_pair"]}
    return rows + _ratio_rows(rows, "small_fct_mean_ms", "load", base, "small_fct_mean_vs_default") \
        + _ratio_rows(rows, "all_fct_mean_ms", "load", base, "all_fct_mean_vs_default")


def hscc_thresholds_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    return _lines(rows, [("small_fct_mean_ms", "small flows: mean FCT (ms)"), ("all_fct_mean_ms", "all flows: mean FCT (ms)")],
                  "load", "scheme", spec["title"])


# ---- hscc-dumbbell: Fig. 8 -----------------------------------------------------------------


def _measure_dumbbell(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    """Per sender: goodput and mean loss-cycle length (time between loss
    episodes: fast retransmits and timeouts); Jain's index over goodputs."""
    seconds = r.summary["sim_seconds"]
    flows = sorted(r.flows.to_pylist(), key=lambda f: f["src"])
    goodput = [f["delivered"] * 8 / seconds / 1e9 for f in flows]
    rows: Rows = []
    for f, g in zip(flows, goodput):
        losses = f["fast_retransmits"] + f["timeouts"]
        rows.append({"sender": f["src"], "metric": "goodput_gbps", "value": g})
        rows.append({"sender": f["src"], "metric": "loss_cycle_ms", "value": seconds / losses * 1e3 if losses else None})
        rows.append({"sender": f["src"], "metric": "timeouts", "value": f["timeouts"]})
    port = max((p for p in r.ports.to_pylist() if p["node_kind"] == "switch"), key=lambda p: p["drops"])  # the bottleneck
    queue = _samples(r, port, "packets", spec["warmup_s"])
    cycles = [x["value"] for x in rows if x["metric"] == "loss_cycle_ms" and x["value"] is not None]
    rows += [{"sender": "all", "metric": "jain", "value": _jain(goodput)},
             {"sender": "all", "metric": "goodput_total_gbps", "value": sum(goodput)},
             {"sender": "all", "metric": "loss_cycle_mean_ms", "value": _mean(cycles)},
             {"sender": "all", "metric": "timeouts_total", "value": sum(f["timeouts"] for f in flows)},
             {"sender": "all", "metric": "drops", "value": port["drops"]},
             {"sender": "all", "metric": "queue_mean_pkt", "value": _mean(queue)}]
    if condition["scheme"].endswith("HSCC"):
        t, p, q = (r.queues[c].to_pylist() for c in ("time", "port", "packets"))
        trace = [(a, b) for a, c, b in zip(t, p, q) if c == port["port"] and spec["trace_from_s"] <= a < spec["trace_from_s"] + spec["trace_s"]]
        rows.append({"sender": "all", "metric": "queue_trace", "value": None, "trace": trace})
    return rows


def hscc_dumbbell(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = [({"scheme": s}, scenario, f"hscc/{s}", {"run.duration": spec["duration"]}) for s in spec["schemes"]]
    rows = _run_jobs(jobs, _measure_dumbbell, spec)
    stretch = _ratio_rows(rows, "loss_cycle_ms", "sender", {"scheme": spec["schemes"][0]}, "loss_cycle_stretch")
    rows += [r for r in stretch if r["scheme"] != spec["schemes"][0]]
    values = [r["value"] for r in stretch if r["scheme"] != spec["schemes"][0] and r["sender"] != "all"]
    rows.append({"scheme": spec["schemes"][1], "sender": "all", "metric": "loss_cycle_stretch_max", "value": max(values, default=None)})
    return rows


def hscc_dumbbell_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    """Fig. 8a/8b per sender, and the congested port's queue next to the
    fluid model's (§4) for the same C, N, RTT and buffer."""
    from ..analysis.hscc import integrate
    from ..plot import _mpl

    plt = _mpl()
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    schemes = spec["schemes"]
    width = 0.4
    for j, scheme in enumerate(schemes):
        for ax, metric in zip(axes[:2], ("loss_cycle_ms", "goodput_gbps")):
            pts = sorted((r["sender"], r["value"] or 0.0) for r in rows if r["scheme"] == scheme and r["metric"] == metric and r["sender"] != "all")
            jain = next((r["value"] for r in rows if r["scheme"] == scheme and r["metric"] == "jain"), None)
            label = scheme if metric == "loss_cycle_ms" or jain is None else f"{scheme} (Jain {jain:.3f})"
            ax.bar([p[0] + j * width for p in pts], [p[1] for p in pts], width=width, label=label)
    axes[0].set(xlabel="sender", ylabel="mean loss-cycle length (ms)", title="Fig. 8a")
    axes[1].set(xlabel="sender", ylabel="goodput (Gb/s)", title="Fig. 8b")
    trace = next((r["trace"] for r in rows if r["metric"] == "queue_trace"), [])
    if trace:
        t0 = trace[0][0]
        axes[2].plot([(a - t0) * 1e3 for a, _ in trace], [b for _, b in trace], lw=0.8, label="dcsim (packets)")
    f = spec["fluid"]
    traj = integrate(c=f["capacity_pps"], n=f["flows"], base_rtt=f["base_rtt_s"], buffer=f["buffer_pkt"], duration=spec["trace_s"], dt=1e-6)
    axes[2].plot([t * 1e3 for t in traj.time], traj.queue, lw=0.8, label="fluid model (§4)")
    axes[2].set(xlabel="time (ms)", ylabel="queue (packets)", title="HSCC: queue, packet level and fluid")
    return _finish(fig, axes)


# ---- hscc-incast: Figs. 13-16 (the testbed, simulated) ------------------------------------


def _incast_workloads(spec: dict[str, Any], case: dict[str, Any]) -> list[dict[str, Any]]:
    """ApacheBench as each client runs it against each server (`ab -n N -c c`):
    c connections per server, each asking for the next 11.5 KB object as
    soon as the last one arrived, N / c times; once per epoch. With
    background, one long-lived flow from each server into rack 4."""
    servers, clients, c = spec["servers"], spec["clients"], case["connections"]
    rack = spec["hosts_per_rack"]
    out: list[dict[str, Any]] = []
    for start in case["epochs_s"]:
        for k, client in enumerate(clients):
            # The testbed's script (ahmedcs/HSCC scripts/incast.sh) skips, in
            # every server rack, the host with the client's own index: that
            # machine is the client itself (126 pairs, not 147).
            mine = [s for s in servers if not (spec.get("skip_own_index") and s % rack == k)]
            w = {"type": "requests", "client": client, "servers": [s for s in mine for _ in range(c)], "request_size": "100B",
                 "response": f"{spec['object_bytes']}B", "arrival": "closed_loop", "count": case["requests"] // c,
                 "start": f"{round((start + k * spec.get('client_stagger_s', 0)) * 1e6)}us"}
            for key in ("send_jitter", "connections"):  # set by variants
                if key in spec:
                    w[key] = spec[key]
            out.append(w)
    if case["background"]:
        out.append({"type": "bulk", "src": servers, "dst": [clients[i % len(clients)] for i in range(len(servers))], "pairing": "zip", "size": "inf"})
    return out


def _measure_incast(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    flows = r.flows.to_pylist()
    mice = [f["fct"] * 1e3 for f in flows if f["kind"] == "response" and f["fct"] is not None]  # request sent -> object received
    elephants = [f for f in flows if f["kind"] == "bulk"]
    seconds = r.summary["sim_seconds"]
    mean = _mean(mice)
    std = (sum((x - mean) ** 2 for x in mice) / len(mice)) ** 0.5 if mice else None
    rows = [{"metric": "mice_fct_mean_ms", "value": mean}, {"metric": "mice_fct_std_ms", "value": std},
            {"metric": "mice_fct_p90_ms", "value": _pct(mice, 90)}, {"metric": "mice_fct_p99_ms", "value": _pct(mice, 99)},
            {"metric": "mice_fct_max_ms", "value": max(mice, default=None)},
            {"metric": "mice_unfinished", "value": sum(1 for f in flows if f["kind"] == "response" and f["fct"] is None)},
            {"metric": "drops", "value": sum(p["drops"] for p in r.ports.to_pylist() if _counts_drops(p, spec))}]
    if elephants:
        rows.append({"metric": "elephant_goodput_mbps", "value": sum(f["delivered"] for f in elephants) * 8 / seconds / 1e6})
    return rows


def _counts_drops(port: dict[str, Any], spec: dict[str, Any]) -> bool:
    """Whether the drops of `port` are counted: at every port, or only at
    the switches a variant names (`drops_at`, e.g. the testbed's core,
    whose counters are the only ones the seed could read)."""
    return "drops_at" not in spec or port["node_name"] in spec["drops_at"]


def _scheme_overrides(spec: dict[str, Any], scheme: str) -> dict[str, Any]:
    """The testbed runs' keys for `scheme`: its TCP's (`scheme_overrides`),
    and for an HSCC scheme a variant's switch.hscc keys (`hscc_set`)."""
    return spec.get("scheme_overrides", {}).get(scheme.removesuffix("-HSCC"), {}) | _hscc_set(spec, scheme)


def hscc_incast(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = []
    for name in spec["cases"]:
        case = spec["case"][name]
        for scheme in spec["schemes"]:
            ov = {"workload": _incast_workloads(spec, case), "run.duration": case["duration"], "run.stop_when_done": not case["background"],
                  "output.queue_sample_interval": "0s"}  # no figure reads the queues
            jobs.append(({"case": name, "scheme": scheme}, scenario, f"hscc/{scheme}", ov | _scheme_overrides(spec, scheme)))
    rows = _run_jobs(jobs, _measure_incast, spec)
    return rows + _reductions(rows, ("drops",))  # the seed: ~96 % mild, ~86 % heavy


def _bar_grid(rows: Rows, metrics: list[tuple[str, str]], log: tuple[str, ...] = ()) -> Any:
    """A row of panels per case, a bar per scheme (HSCC variants in orange)."""
    from ..plot import _mpl

    plt = _mpl()
    cases = list(dict.fromkeys(r["case"] for r in rows))
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    fig, axes = plt.subplots(len(cases), len(metrics), figsize=(3.5 * len(metrics), 3.0 * len(cases)), squeeze=False)
    for i, case in enumerate(cases):
        for ax, (metric, label) in zip(axes[i], metrics):
            vals = [next((r["value"] for r in rows if r["case"] == case and r["scheme"] == s and r["metric"] == metric), None) for s in schemes]
            ax.bar(range(len(schemes)), [v or 0 for v in vals], color=["C1" if s.endswith("HSCC") else "C0" for s in schemes])
            ax.set_xticks(range(len(schemes)), schemes, rotation=60, fontsize=7)
            ax.set_title(f"{case}: {label}", fontsize=9)
            ax.grid(alpha=0.3, axis="y")
            if metric in log and any(vals):
                ax.set_yscale("log")
    fig.tight_layout()
    return fig


def hscc_incast_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    return _bar_grid(rows, [("mice_fct_mean_ms", "mice FCT mean (ms)"), ("mice_fct_std_ms", "mice FCT std (ms)"), ("mice_fct_max_ms", "mice FCT max (ms)"),
                            ("drops", "drops"), ("elephant_goodput_mbps", "elephant goodput (Mb/s)")], log=("mice_fct_std_ms", "mice_fct_max_ms", "drops"))


# ---- hscc-one-to-all: Figs. 17-19 ------------------------------------------------------------


def _one_to_all_workloads(spec: dict[str, Any], case: dict[str, Any]) -> list[dict[str, Any]]:
    """Every client in rack 4 requests responses from the CDF from random
    servers of the other racks at Poisson times; optionally all-to-all
    long-lived background flows."""
    out: list[dict[str, Any]] = [
        {"type": "requests", "client": c, "servers": spec["servers"], "request_size": "100B", "response": {"cdf": case["cdf"]},
         "arrival": "poisson", "load": spec["client_load"], "stop": case["stop"]}
        for c in spec["clients"]]
    if case["background"]:
        hosts = spec["servers"] + spec["clients"]
        out.append({"type": "bulk", "src": hosts, "dst": hosts, "size": "inf"})
    return out


def _measure_one_to_all(r: Any, condition: dict[str, Any], spec: dict[str, Any]) -> Rows:
    flows = [f for f in r.flows.to_pylist() if f["kind"] == "response"]
    small = [f["fct"] * 1e3 for f in flows if f["fct"] is not None and f["bytes"] <= SMALL_BYTES]
    deadline = spec["deadline_ms"]
    return [{"metric": "small_fct_mean_ms", "value": _mean(small)}, {"metric": "small_fct_median_ms", "value": _pct(small, 50)},
            {"metric": "small_fct_max_ms", "value": max(small, default=None)},
            {"metric": "missed_deadlines", "value": sum(1 for x in small if x > deadline)
             + sum(1 for f in flows if f["fct"] is None and f["bytes"] <= SMALL_BYTES)},
            {"metric": "small_flows", "value": sum(1 for f in flows if f["bytes"] <= SMALL_BYTES)},
            {"metric": "requests", "value": len(flows)}]


def hscc_one_to_all(spec: dict[str, Any], folder: Path) -> Rows:
    scenario = str(folder / spec["scenario"])
    jobs: list[Job] = []
    for name in spec["cases"]:
        case = spec["case"][name]
        for scheme in spec["schemes"]:
            ov = {"workload": _one_to_all_workloads(spec, case), "run.duration": case["duration"], "run.stop_when_done": not case["background"],
                  "output.queue_sample_interval": "0s"}  # no figure reads the queues; 100 us samples of 36 ports fill GBs
            jobs.append(({"case": name, "scheme": scheme}, scenario, f"hscc/{scheme}", ov | _scheme_overrides(spec, scheme)))
    rows = _run_jobs(jobs, _measure_one_to_all, spec)
    return rows + _reductions(rows, ("small_fct_mean_ms", "small_fct_median_ms", "small_fct_max_ms", "missed_deadlines"))


def hscc_one_to_all_figure(rows: Rows, spec: dict[str, Any]) -> Any:
    return _bar_grid(rows, [("small_fct_mean_ms", "small flows, mean (ms)"), ("small_fct_median_ms", "small flows, median (ms)"),
                            ("small_fct_max_ms", "small flows, max (ms)"), ("missed_deadlines", "missed 200 ms deadlines")])


RUNNERS = {
    "hscc-dumbbell": (hscc_dumbbell, hscc_dumbbell_figure),
    "hscc-leafspine-websearch": (hscc_leafspine, hscc_leafspine_figure),
    "hscc-leafspine-datamining": (hscc_leafspine, hscc_leafspine_figure),
    "hscc-thresholds": (hscc_thresholds, hscc_thresholds_figure),
    "hscc-incast": (hscc_incast, hscc_incast_figure),
    "hscc-one-to-all": (hscc_one_to_all, hscc_one_to_all_figure),
}
