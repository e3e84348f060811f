"""Analysis of run results: FCT and slowdown by size bucket and against flow
size, per-port utilisation, drops and marks, query completion
percentiles and deadlines, per-flow goodput and Jain's fairness index, loss
cycles (time between window reductions), and the TCP segments of a pcap.

Percentiles are nearest-rank: the p-th percentile of n sorted values is the
value at rank ceil(p/100 * n) (PIAS's result.py and ns3-ecn-sharp's
fct_parser.py take sorted[int(p/100 * n)], one rank higher at most).
All functions take pyarrow tables (or a `Result`) and return plain Python.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

INF = float("inf")
DEFAULT_BUCKETS: list[tuple[float, float]] = [(0, 100e3), (100e3, 10e6), (10e6, INF)]
PERCENTILES = (50, 95, 99, 99.9)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending sequence."""
    if not sorted_values:
        return math.nan
    k = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[k]


def _flows(x: Any) -> pa.Table:
    return x.flows if hasattr(x, "flows") else x


def bucket_name(lo: float, hi: float) -> str:
    def size(v: float) -> str:
        if v == 0:
            return "0"
        for unit, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if v >= k and v % k == 0:
                return f"{v / k:g}{unit}"
        return f"{v:g}B"

    return f"({size(lo)},{size(hi)}]" if hi != INF else f">{size(lo)}"


def fct_by_size(result: Any, buckets: Iterable[tuple[float, float]] = DEFAULT_BUCKETS, kind: str | None = None) -> list[dict[str, Any]]:
    """FCT (seconds) and slowdown of completed flows per size bucket (lo, hi]
    in bytes: count, mean, and the PERCENTILES of each. `kind` restricts to
    "bulk" or "response" flows. A last row "all" covers every flow."""
    flows = _flows(result)
    done = flows.filter(pc.is_valid(flows["fct"]))
    if kind is not None:
        done = done.filter(pc.equal(done["kind"], kind))
    sizes = done["bytes"].to_pylist()
    fcts = done["fct"].to_pylist()
    slows = done["slowdown"].to_pylist()
    rows = []
    for name, (lo, hi) in [(bucket_name(lo, hi), (lo, hi)) for lo, hi in buckets] + [("all", (-1, INF))]:
        idx = [i for i, b in enumerate(sizes) if b is not None and lo < b <= hi]
        f = sorted(fcts[i] for i in idx)
        s = sorted(slows[i] for i in idx if slows[i] is not None)
        row: dict[str, Any] = {"bucket": name, "flows": len(idx), "fct_mean": sum(f) / len(f) if f else math.nan}
        for p in PERCENTILES:
            row[f"fct_p{p:g}"] = percentile(f, p)
        row["slowdown_mean"] = sum(s) / len(s) if s else math.nan
        for p in PERCENTILES:
            row[f"slowdown_p{p:g}"] = percentile(s, p)
        rows.append(row)
    return rows


def slowdown_by_size(result: Any, per_decade: int = 3, min_flows: int = 10, kind: str | None = None) -> list[dict[str, Any]]:
    """The field's FCT-slowdown curve: completed flows in log-spaced size
    bins (`per_decade` per factor of ten, merged with the next bin until each
    holds `min_flows`), with each bin's median size, p50 and p99 of the
    slowdown and of the FCT. Flows of one size form one bin."""
    flows = _flows(result)
    done = flows.filter(pc.and_(pc.is_valid(flows["fct"]), pc.is_valid(flows["slowdown"])))
    if kind is not None:
        done = done.filter(pc.equal(done["kind"], kind))
    points = sorted((b, f, s) for b, f, s in zip(done["bytes"].to_pylist(), done["fct"].to_pylist(), done["slowdown"].to_pylist()) if b)
    bins: list[list[tuple[int, float, float]]] = []
    for b, f, s in points:
        edge = math.floor(math.log10(b) * per_decade)
        last = bins[-1] if bins else None
        if last and (b == last[-1][0] or math.floor(math.log10(last[0][0]) * per_decade) == edge or len(last) < min_flows):
            last.append((b, f, s))
        else:
            bins.append([(b, f, s)])
    if len(bins) > 1 and len(bins[-1]) < min_flows:
        last = bins.pop()
        bins[-1] += last
    rows = []
    for members in bins:
        sizes = [m[0] for m in members]
        fcts = sorted(m[1] for m in members)
        slows = sorted(m[2] for m in members)
        rows.append({"size_lo": sizes[0], "size_hi": sizes[-1], "size_median": percentile(sizes, 50), "flows": len(members),
                     "slowdown_p50": percentile(slows, 50), "slowdown_p99": percentile(slows, 99),
                     "fct_p50": percentile(fcts, 50), "fct_p99": percentile(fcts, 99)})
    return rows


def port_stats(result: Any, node_kind: str | None = "switch") -> list[dict[str, Any]]:
    """Per egress port that sent anything: its name by the link's endpoints
    ("leaf3 → spine1"), utilisation (wire bytes sent over the run, as a
    fraction of the link's capacity), bytes and packets sent, largest queue,
    drops and ECN marks; busiest first."""
    from ..units import port_name

    seconds = result.summary["sim_seconds"]
    rows = []
    for p in result.ports.to_pylist():
        if (node_kind is not None and p["node_kind"] != node_kind) or not p["tx_packets"]:
            continue
        capacity = p["rate_bps"] * seconds / 8
        rows.append({"port": p["port"], "name": port_name(p["node_name"], p["peer_name"]), "rate_bps": p["rate_bps"],
                     "utilisation": p["tx_bytes"] / capacity if capacity > 0 else math.nan, "tx_bytes": p["tx_bytes"],
                     "tx_packets": p["tx_packets"], "max_queue_bytes": p["max_queue_bytes"], "max_queue_packets": p["max_queue_packets"],
                     "drops": p["drops"] + p["ingress_drops"], "ecn_marks": p["ecn_marks"]})
    rows.sort(key=lambda r: (-r["utilisation"], r["port"]))
    return rows


def query_completion(result: Any, deadline: float | None = None) -> dict[str, Any]:
    """Incast/query rounds: count, mean and PERCENTILES of completion time
    (seconds); with `deadline` (seconds), how many rounds missed it."""
    q = result.queries if hasattr(result, "queries") else result
    ct = sorted(q["completion_time"].to_pylist())
    out: dict[str, Any] = {"rounds": len(ct), "mean": sum(ct) / len(ct) if ct else math.nan}
    for p in PERCENTILES:
        out[f"p{p:g}"] = percentile(ct, p)
    out["rounds_with_rto"] = sum(1 for t in q["timeouts"].to_pylist() if t)
    if deadline is not None:
        out["deadline"] = deadline
        out["missed_deadline"] = sum(1 for t in ct if t > deadline)
    # Search workloads with a deadline: responses per query within it; the
    # 1st percentile is the worst 1 % of queries (seed 000 Fig. 4c).
    within = sorted(w for w in q["within_deadline"].to_pylist() if w is not None) if "within_deadline" in q.column_names else []
    if within:
        out["responses_within_deadline_mean"] = sum(within) / len(within)
        out["responses_within_deadline_p1"] = percentile(within, 1)
    return out


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index: (sum x)^2 / (n * sum x^2), 1 for equal shares."""
    values = list(values)
    sq = sum(v * v for v in values)
    return (sum(values) ** 2) / (len(values) * sq) if values and sq > 0 else math.nan


def goodput(result: Any, kind: str | None = "bulk") -> list[dict[str, Any]]:
    """Per-flow goodput (bits/s): delivered bytes over the flow's lifetime
    (start to end, or to the end of the run for unfinished flows)."""
    flows = _flows(result)
    sim_end = result.summary["sim_seconds"] if hasattr(result, "summary") else None
    rows = []
    for f in flows.to_pylist():
        if kind is not None and f["kind"] != kind:
            continue
        end = f["end"] if f["end"] is not None else sim_end
        if end is None or end <= f["start"]:
            continue
        rows.append({"id": f["id"], "src": f["src"], "dst": f["dst"], "goodput_bps": f["delivered"] * 8 / (end - f["start"])})
    return rows


def loss_cycles(result: Any) -> list[dict[str, Any]]:
    """Per connection and side, from tcp_trace: the times between successive
    window reductions (cwnd decreases), as HSCC's loss-cycle analysis uses.
    Needs output.tcp_trace = true."""
    t = result.tcp_trace if hasattr(result, "tcp_trace") else result
    last: dict[tuple[int, int], tuple[int, float | None]] = {}
    cycles: dict[tuple[int, int], list[float]] = {}
    for time, conn, side, cwnd in zip(t["time"].to_pylist(), t["conn"].to_pylist(), t["side"].to_pylist(), t["cwnd"].to_pylist()):
        key = (conn, side)
        prev_cwnd, prev_cut = last.get(key, (cwnd, None))
        cut = prev_cut
        if cwnd < prev_cwnd:
            if prev_cut is not None:
                cycles.setdefault(key, []).append(time - prev_cut)
            cut = time
        last[key] = (cwnd, cut)
    rows = []
    for (conn, side), c in sorted(cycles.items()):
        rows.append({"conn": conn, "side": side, "cycles": len(c), "mean_cycle": sum(c) / len(c), "p50_cycle": percentile(sorted(c), 50)})
    return rows


def tcp_segments(pcap: bytes) -> list[dict[str, Any]]:
    """The TCP/IPv4 segments of a pcap capture (``Result.pcaps[name]``, or a
    file's bytes), in capture order: time (s), src and dst ("10.0.0.2:5001"),
    seq, ack, payload length, flags (the TCP flag byte) and the frame's length.
    For sequence diagrams such as seed 004's Figs. 14, 15 and 25."""
    magic = struct.unpack_from("<I", pcap)[0]
    if magic not in (0xA1B23C4D, 0xA1B2C3D4):
        raise ValueError(f"not a little-endian pcap file (magic {magic:#x})")
    frac = 1e-9 if magic == 0xA1B23C4D else 1e-6
    out, off = [], 24
    while off + 16 <= len(pcap):
        sec, sub, incl, orig = struct.unpack_from("<IIII", pcap, off)
        frame = pcap[off + 16 : off + 16 + incl]
        off += 16 + incl
        if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
            continue  # not TCP over IPv4
        ihl = (frame[14] & 0x0F) * 4
        ip_len = struct.unpack_from(">H", frame, 16)[0]
        tcp = 14 + ihl
        sport, dport, seq, ack = struct.unpack_from(">HHII", frame, tcp)
        doff = (frame[tcp + 12] >> 4) * 4
        addr = lambda o, port: ".".join(str(b) for b in frame[o : o + 4]) + f":{port}"
        out.append({"time": sec + sub * frac, "src": addr(26, sport), "dst": addr(30, dport), "seq": seq, "ack": ack,
                    "payload": ip_len - ihl - doff, "flags": frame[tcp + 13], "frame_bytes": orig})
    return out
