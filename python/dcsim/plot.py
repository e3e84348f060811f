"""Figures the field uses, drawn with matplotlib from result tables.

Every function takes one `Result` or a dict {label: Result} (one curve per
scheme), draws on a new figure and returns it; `save(fig, path)` writes PNG
or SVG. `dcsim plot OUT_DIR KIND` and `dcsim report` use them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from . import analysis
from .results import write_file_atomic


def _mpl() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the installation
        raise RuntimeError("plotting needs matplotlib: pip install 'dcsim[plot]'") from None
    return plt


def _series(results: Any) -> Mapping[str, Any]:
    return results if isinstance(results, Mapping) else {"": results}


def _cdf(ax: Any, values: list[float], label: str, scale: float) -> None:
    v = sorted(values)
    if v:
        ax.step([x * scale for x in v], [(i + 1) / len(v) for i in range(len(v))], where="post", label=label or None)


def fct_cdf(results: Any, kind: str | None = None) -> Any:
    """CDF of flow completion times (ms)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, r in _series(results).items():
        flows = r.flows
        fcts = [f for f, k in zip(flows["fct"].to_pylist(), flows["kind"].to_pylist()) if f is not None and (kind is None or k == kind)]
        _cdf(ax, fcts, label, 1e3)
    ax.set(xlabel="flow completion time (ms)", ylabel="CDF", xscale="log")
    ax.grid(alpha=0.3)
    if len(_series(results)) > 1:
        ax.legend()
    return fig


def query_cdf(results: Any) -> Any:
    """CDF of query (incast round / search) completion times (ms)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, r in _series(results).items():
        _cdf(ax, r.queries["completion_time"].to_pylist(), label, 1e3)
    ax.set(xlabel="query completion time (ms)", ylabel="CDF")
    ax.grid(alpha=0.3)
    if len(_series(results)) > 1:
        ax.legend()
    return fig


def slowdown_by_size(results: Any, stat: str = "slowdown_p99", buckets: Any = None) -> Any:
    """A slowdown statistic per size bucket, one bar group per scheme."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    series = _series(results)
    width = 0.8 / max(len(series), 1)
    names: list[str] = []
    for i, (label, r) in enumerate(series.items()):
        rows = [row for row in analysis.fct_by_size(r, buckets or analysis.DEFAULT_BUCKETS) if row["bucket"] != "all"]
        names = [row["bucket"] for row in rows]
        ax.bar([j + i * width for j in range(len(rows))], [row[stat] for row in rows], width, label=label or None)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(names))], names)
    ax.set(xlabel="flow size", ylabel=stat.replace("_", " "))
    ax.grid(alpha=0.3, axis="y")
    if len(series) > 1:
        ax.legend()
    return fig


def percentile_vs_load(points: Mapping[str, Mapping[float, Any]], metric: str = "fct_p99", bucket: str = "(0,100KB]") -> Any:
    """{scheme: {load: Result}}: a statistic of one size bucket against load."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for scheme, by_load in points.items():
        loads = sorted(by_load)
        ys = []
        for load in loads:
            row = next(r for r in analysis.fct_by_size(by_load[load]) if r["bucket"] == bucket)
            ys.append(row[metric] * (1e3 if metric.startswith("fct") else 1))
        ax.plot(loads, ys, marker="o", label=scheme)
    ax.set(xlabel="load", ylabel=f"{bucket} {metric.replace('_', ' ')}" + (" (ms)" if metric.startswith("fct") else ""))
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def queue_over_time(result: Any, port: int | None = None) -> Any:
    """Queue occupancy (packets) over time at one port (default: the busiest)."""
    plt = _mpl()
    q = result.queues
    ports = q["port"].to_pylist()
    if port is None:
        maxq = result.ports["max_queue_packets"].to_pylist()
        port = max(range(len(maxq)), key=lambda p: maxq[p])
    rows = [(t, n) for t, p, n in zip(q["time"].to_pylist(), ports, q["packets"].to_pylist()) if p == port]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot([t * 1e3 for t, _ in rows], [n for _, n in rows], lw=0.8)
    ax.set(xlabel="time (ms)", ylabel=f"queue at port {port} (packets)")
    ax.grid(alpha=0.3)
    return fig


def throughput_over_time(result: Any, bin_seconds: float = 1e-3) -> Any:
    """Goodput per connection over time (Gb/s), from tcp_trace's bytes_acked."""
    plt = _mpl()
    t = result.tcp_trace
    fig, ax = plt.subplots(figsize=(7, 3.5))
    series: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for time, conn, side, acked in zip(t["time"].to_pylist(), t["conn"].to_pylist(), t["side"].to_pylist(), t["bytes_acked"].to_pylist()):
        series.setdefault((conn, side), []).append((time, acked))
    for (conn, side), pts in sorted(series.items()):
        bins: dict[int, int] = {}
        for time, acked in pts:
            bins[int(time / bin_seconds)] = acked
        keys = sorted(bins)
        xs = [k * bin_seconds * 1e3 for k in keys[1:]]
        ys = [(bins[b] - bins[a]) * 8 / ((b - a) * bin_seconds) / 1e9 for a, b in zip(keys, keys[1:])]
        ax.plot(xs, ys, lw=0.8, label=f"conn {conn}" if len(series) <= 10 else None)
    ax.set(xlabel="time (ms)", ylabel="goodput (Gb/s)")
    ax.grid(alpha=0.3)
    if 1 < len(series) <= 10:
        ax.legend(fontsize=7)
    return fig


def sequence_diagram(segments: list[dict[str, Any]], sender: str, ax: Any = None, t0: float | None = None) -> Any:
    """tcptrace-style sequence diagram of one data sender ("10.0.0.2:5001")
    from `dcsim.analysis.tcp_segments`: its data segments (sequence number
    of the last byte, relative to its SYN) and the cumulative ACKs coming
    back, against time in us; retransmissions are marked in red."""
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
    ax.set(xlabel="time (us)", ylabel="relative sequence number")
    return ax


def save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    write_file_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120, bbox_inches="tight"))
    _mpl().close(fig)
    return path


KINDS = {
    "fct_cdf": fct_cdf,
    "query_cdf": query_cdf,
    "slowdown": slowdown_by_size,
    "queue": queue_over_time,
    "throughput": throughput_over_time,
}
