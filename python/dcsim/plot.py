"""Figures the field uses, drawn with matplotlib from result tables.

Every function takes one `Result` or a dict {label: Result} (one curve per
scheme) where that makes sense, draws on a new figure and returns it;
`save(fig, path)` writes PNG or SVG. `dcsim plot OUT_DIR KIND` and
`dcsim report` use them. Tick labels carry their units (100 µs, 1 ms; 64 KB;
10 Gb/s), chosen by magnitude; ports are named by their link's endpoints.
A figure with nothing to draw raises `NoData`, saying what is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from . import analysis, units
from .results import write_file_atomic


class NoData(ValueError):
    """The result holds nothing this figure could show."""


def _mpl() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Plain tick labels (0.8, 1000) rather than 8×10⁻¹ on log axes, and
    # never an offset above the axis.
    plt.rcParams.update({"axes.formatter.min_exponent": 4, "axes.formatter.useoffset": False})
    return plt


def _series(results: Any) -> Mapping[str, Any]:
    return results if isinstance(results, Mapping) else {"": results}


def _unit_ticks(axis: Any, fmt: Callable[[float], str], log: bool = False) -> None:
    """Tick labels written by `fmt` (units.time, .size, .rate), each with
    its unit. On a log axis spanning less than two decades, the 2s and 5s
    are labelled too."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    label = FuncFormatter(lambda v, _: fmt(v, 3) if v > 0 or not log else "")
    axis.set_major_formatter(label)
    if not log:
        axis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    else:
        lo, hi = sorted(axis.get_view_interval())
        few = lo > 0 and hi / lo < 100
        axis.set_minor_locator(LogLocator(subs=(2.0, 5.0) if few else (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)))
        axis.set_minor_formatter(label if few else NullFormatter())


def _legend(ax: Any, n: int) -> None:
    if n > 1:
        ax.legend(fontsize=8)


def _cdf(ax: Any, values: list[float], label: str) -> None:
    v = sorted(values)
    if v:
        ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", label=label or None)


def fct_cdf(results: Any, kind: str | None = None) -> Any:
    """CDF of flow completion times (log x)."""
    plt = _mpl()
    series = _series(results)
    fig, ax = plt.subplots(figsize=(6, 4))
    drawn = 0
    for label, r in series.items():
        flows = r.flows
        fcts = [f for f, k in zip(flows["fct"].to_pylist(), flows["kind"].to_pylist()) if f is not None and (kind is None or k == kind)]
        _cdf(ax, fcts, label)
        drawn += bool(fcts)
    if not drawn:
        plt.close(fig)
        raise NoData("no completed flows: nothing for an FCT CDF")
    ax.set(xlabel="flow completion time", ylabel="CDF of flows", xscale="log", ylim=(0, 1.02))
    _unit_ticks(ax.xaxis, units.time, log=True)
    ax.grid(alpha=0.3, which="both")
    _legend(ax, len(series))
    return fig


def query_cdf(results: Any) -> Any:
    """CDF of query (incast round, search) completion times."""
    plt = _mpl()
    series = _series(results)
    if not any(r.queries.num_rows for r in series.values()):
        raise NoData("no query or incast rounds completed: nothing for a query CDF")
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, r in series.items():
        _cdf(ax, r.queries["completion_time"].to_pylist(), label)
    ax.set(xlabel="query completion time", ylabel="CDF of queries", ylim=(0, 1.02))
    _unit_ticks(ax.xaxis, units.time)
    ax.grid(alpha=0.3)
    _legend(ax, len(series))
    return fig


def slowdown_vs_size(results: Any, kind: str | None = None) -> Any:
    """FCT slowdown against flow size: the p50 (dashed) and p99 (solid) of
    each log-spaced size bin (analysis.slowdown_by_size), log x, one colour
    per scheme."""
    plt = _mpl()
    series = _series(results)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    drawn = 0
    for i, (label, r) in enumerate(series.items()):
        rows = analysis.slowdown_by_size(r, kind=kind)
        if not rows:
            continue
        drawn += 1
        x = [row["size_median"] for row in rows]
        name = f"{label} " if label else ""
        ax.plot(x, [row["slowdown_p99"] for row in rows], "-o", color=f"C{i}", ms=4, label=f"{name}p99")
        ax.plot(x, [row["slowdown_p50"] for row in rows], "--s", color=f"C{i}", ms=3, label=f"{name}p50")
    if not drawn:
        plt.close(fig)
        raise NoData("no completed flows of known size: nothing for slowdown against flow size")
    ax.set(xlabel="flow size (median of each size bin)", ylabel="FCT slowdown (FCT / FCT on an empty network)", xscale="log")
    lo, hi = ax.get_ylim()
    if lo > 0 and hi / lo > 30:
        ax.set_yscale("log")
    _unit_ticks(ax.xaxis, units.size, log=True)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig


def percentile_vs_load(points: Mapping[str, Mapping[float, Any]], metric: str = "fct_p99", bucket: str = "(0,100KB]") -> Any:
    """{scheme: {load: Result}}: a statistic of one size bucket against load."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for scheme, by_load in points.items():
        loads = sorted(by_load)
        ys = [next(r for r in analysis.fct_by_size(by_load[load]) if r["bucket"] == bucket)[metric] for load in loads]
        ax.plot(loads, ys, marker="o", label=scheme)
    ax.set(xlabel="load", ylabel=f"{metric.replace('_', ' ')} of flows {bucket}")
    ax.xaxis.set_major_formatter(lambda v, _: units.percent(v, 2))
    if metric.startswith("fct"):
        _unit_ticks(ax.yaxis, units.time)
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def _port_names(result: Any) -> dict[int, str]:
    p = result.ports
    return {port: units.port_name(a, b) for port, a, b in zip(p["port"].to_pylist(), p["node_name"].to_pylist(), p["peer_name"].to_pylist())}


def queue_over_time(result: Any, ports: list[int] | None = None, busiest: int = 4) -> Any:
    """Queue length over time at `ports` (default: the `busiest` sampled
    ports by their largest queue), named by their endpoints."""
    plt = _mpl()
    q = result.queues
    if not q.num_rows:
        raise NoData("no queue samples: set output.queue_sample_interval (and output.queue_sample_ports)")
    by_port: dict[int, tuple[list[float], list[int]]] = {}
    for t, p, n in zip(q["time"].to_pylist(), q["port"].to_pylist(), q["packets"].to_pylist()):
        xs, ys = by_port.setdefault(p, ([], []))
        xs.append(t)
        ys.append(n)
    if ports is None:
        ports = sorted(by_port, key=lambda p: (-max(by_port[p][1]), p))[:busiest]
    names = _port_names(result)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for p in ports:
        xs, ys = by_port.get(p, ([], []))
        ax.plot(xs, ys, lw=0.8, label=names.get(p, f"port {p}"))
    ax.set(xlabel="time", ylabel="queue length (packets)")
    ax.set_xlim(left=0)
    _unit_ticks(ax.xaxis, units.time)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, title="egress port" if len(ports) > 1 else None)
    return fig


def _port_bars(result: Any, value: Callable[[dict[str, Any]], float], limit: int) -> list[dict[str, Any]]:
    rows = [p for p in analysis.port_stats(result) if value(p) > 0]
    return sorted(rows, key=lambda p: (-value(p), p["port"]))[:limit]


def utilisation(result: Any, busiest: int = 12) -> Any:
    """Link utilisation of the `busiest` switch ports over the whole run."""
    plt = _mpl()
    rows = _port_bars(result, lambda p: p["utilisation"], busiest)
    if not rows:
        raise NoData("no switch port sent anything: nothing for link utilisation")
    fig, ax = plt.subplots(figsize=(7, 0.8 + 0.28 * len(rows)))
    y = range(len(rows))
    ax.barh(y, [p["utilisation"] for p in rows], color="C0")
    ax.set_yticks(list(y), [f"{p['name']} ({units.rate(p['rate_bps'], 3)})" for p in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="utilisation over the run (bytes sent / link capacity)", xlim=(0, 1))
    ax.xaxis.set_major_formatter(lambda v, _: units.percent(v, 2))
    ax.grid(alpha=0.3, axis="x")
    return fig


def drops_and_marks(result: Any, limit: int = 12) -> Any:
    """Drops and ECN marks at the switch ports that had any."""
    plt = _mpl()
    rows = _port_bars(result, lambda p: p["drops"] + p["ecn_marks"], limit)
    if len(rows) < 2:
        # One bar says no more than the ports table does.
        raise NoData(f"only {rows[0]['name']} dropped or marked packets (see the ports table)" if rows else "no switch port dropped or marked a packet")
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.4 * len(rows)))
    y = list(range(len(rows)))
    ax.barh([v - 0.2 for v in y], [p["drops"] for p in rows], 0.4, color="C3", label="drops")
    ax.barh([v + 0.2 for v in y], [p["ecn_marks"] for p in rows], 0.4, color="C1", label="ECN marks")
    ax.set_yticks(y, [p["name"] for p in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="packets")
    ax.xaxis.set_major_formatter(lambda v, _: units.count(v))
    ax.grid(alpha=0.3, axis="x")
    ax.legend(fontsize=8)
    return fig


def throughput_over_time(result: Any, bin_seconds: float = 1e-3) -> Any:
    """Goodput per connection over time, from tcp_trace's bytes_acked."""
    plt = _mpl()
    t = result.tcp_trace
    if not t.num_rows:
        raise NoData("no tcp_trace rows: set output.tcp_trace = true")
    series: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for time, conn, side, acked in zip(t["time"].to_pylist(), t["conn"].to_pylist(), t["side"].to_pylist(), t["bytes_acked"].to_pylist()):
        series.setdefault((conn, side), []).append((time, acked))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for (conn, side), pts in sorted(series.items()):
        bins: dict[int, int] = {}
        for time, acked in pts:
            bins[int(time / bin_seconds)] = acked
        keys = sorted(bins)
        xs = [k * bin_seconds for k in keys[1:]]
        ys = [(bins[b] - bins[a]) * 8 / ((b - a) * bin_seconds) for a, b in zip(keys, keys[1:])]
        ax.plot(xs, ys, lw=0.8, label=f"conn {conn}" if len(series) <= 10 else None)
    ax.set(xlabel="time", ylabel=f"goodput (per {units.time(bin_seconds)})")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    _unit_ticks(ax.xaxis, units.time)
    _unit_ticks(ax.yaxis, units.rate)
    ax.grid(alpha=0.3)
    if 1 < len(series) <= 10:
        ax.legend(fontsize=7)
    return fig


def sequence_diagram(segments: list[dict[str, Any]], sender: str, ax: Any = None, t0: float | None = None) -> Any:
    """tcptrace-style sequence diagram of one data sender ("10.0.0.2:5001")
    from `dcsim.analysis.tcp_segments`: its data segments (sequence number
    of the last byte, relative to its SYN) and the cumulative ACKs coming
    back, against time in µs; retransmissions are marked in red."""
    if ax is None:
        ax = _mpl().subplots(figsize=(7, 4))[1]
    isn = next(s["seq"] for s in segments if s["src"] == sender and s["flags"] & 0x02)
    t0 = segments[0]["time"] if t0 is None else t0
    rel = lambda n: (n - isn) % 2**32
    data, acks, rexmit, highest = [], [], [], 0
    for s in segments:
        t = (s["time"] - t0) * 1e6
        if s["src"] == sender and s["payload"]:
            end = rel(s["seq"]) + s["payload"]
            (rexmit if end <= highest else data).append((t, end))
            highest = max(highest, end)
        elif s["dst"] == sender and s["flags"] & 0x10:
            acks.append((t, rel(s["ack"])))
    if data:
        ax.plot(*zip(*data), "|", ms=6, color="C0", label=f"data from {sender}")
    if acks:
        ax.step(*zip(*acks), where="post", lw=0.8, color="C1", label="ACK")
    if rexmit:
        ax.plot(*zip(*rexmit), "x", color="C3", label="retransmission")
    ax.set(xlabel="time (µs)", ylabel="relative sequence number (bytes)")
    return ax


def save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    write_file_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120, bbox_inches="tight"))
    _mpl().close(fig)
    return path


KINDS: dict[str, Callable[[Any], Any]] = {
    "fct_cdf": fct_cdf,
    "query_cdf": query_cdf,
    "slowdown": slowdown_vs_size,
    "queue": queue_over_time,
    "utilisation": utilisation,
    "drops": drops_and_marks,
    "throughput": throughput_over_time,
}
