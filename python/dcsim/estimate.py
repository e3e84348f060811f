"""What a run will hold, estimated from the resolved scenario before it runs.

A scenario can ask for more than any machine holds: a star of 100,000
hosts with `src = dst = "0..100000"` is 10^10 flows, queue sampling every
nanosecond of a long run is 10^9 rows per port. The core would start
building them and the machine would swap or kill it. `check` estimates the
rows each table will get and the memory and output they need, refuses a run
whose memory estimate exceeds the limit (the machine's available memory, or
DCSIM_MEMORY_LIMIT) with a message naming the key, and returns warnings for
one that is merely large (above DCSIM_WARN_ABOVE, 4 GB by default).

The estimates are orders of magnitude, not predictions: per flow about
3 KB while the run lasts (measured: 2.6 KB for 90,000 flows), per queue
sample or trace row 64 B, a pcap the captured bytes. Flows and queue
samples are counted from the scenario (open-loop arrivals as rate x active
time) and may refuse a run; TCP trace rows and pcaps are bounded by line
rate, far above what most runs send, so they only warn.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from . import units

FLOW_BYTES = 3000
ROW_BYTES = 64
WARN_ABOVE = 4e9

class LargeRunWarning(UserWarning):
    """A run that fits, but needs more memory or output than DCSIM_WARN_ABOVE."""


def _value(text: Any, default: float = 0.0) -> float:
    """A resolved quantity ("10Gbps", "2us", "64000B") in base units."""
    if isinstance(text, (int, float)):
        return float(text)
    base = units.parse(text) if isinstance(text, str) else None
    return default if base is None else base


def _mean_size(size: Any) -> float:
    """Mean flow size in bytes of a resolved size spec."""
    if isinstance(size, dict) and "points" in size:
        pts = size["points"]
        return sum((p1 - p0) * (b0 + b1) / 2 for (b0, p0), (b1, p1) in zip(pts, pts[1:])) or 1.0
    if isinstance(size, dict) and "mix" in size:
        total = sum(w for _, w in size["mix"]) or 1.0
        return sum(_value(s) * w for s, w in size["mix"]) / total or 1.0
    return _value(size, 1.0) or 1.0


def _mean_service(st: dict[str, Any]) -> float:
    """Mean seconds of a resolved service time (as ServiceTime::mean_seconds)."""
    kind = st.get("type")
    if kind == "constant":
        mean = _value(st.get("value"))
    elif kind == "exponential":
        mean = _value(st.get("mean"))
    else:
        mean = st.get("shape", 0) * st.get("scale", 0) * _value(st.get("unit")) + _value(st.get("offset"))
    return mean or math.inf


def _hosts_and_switch_ports(topo: dict[str, Any]) -> tuple[int, int, float]:
    """(hosts, switch ports, host link rate in b/s) of a resolved topology."""
    kind = topo.get("type")
    if kind == "star":
        return topo["hosts"], topo["hosts"], _value(topo.get("link_rate"))
    if kind == "dumbbell":
        n = topo["senders"] + topo["receivers"]
        return n, n + 2, _value(topo.get("access_rate"))
    if kind == "leafspine":
        leaves, spines, per = topo["leaves"], topo["spines"], topo["hosts_per_leaf"]
        return leaves * per, leaves * (per + spines) + spines * leaves, _value(topo.get("host_rate"))
    if kind == "ring":
        n, per = topo["switches"], topo["hosts_per_switch"]
        return n * per, n * (per + 2), _value(topo.get("link_rate"))
    if kind == "fattree":
        k = topo["k"]
        pods, per = topo.get("pods") or k, topo.get("hosts_per_edge") or k // 2
        hosts = pods * k // 2 * per
        return hosts, hosts + pods * k**2, _value(topo.get("link_rate") or topo.get("host_rate"))
    hosts = int(topo.get("hosts", 0) or 0)
    return hosts, hosts, _value(topo.get("link_rate") or topo.get("host_rate"))


@dataclass
class Estimate:
    flows: float = 0.0
    rows: dict[str, float] = field(default_factory=dict)
    memory: float = 0.0
    output: float = 0.0
    # The memory of what is counted, not bounded: what a refusal rests on.
    counted_memory: float = 0.0
    # (bytes, key, what, counted) of each contribution, largest first after `estimate`.
    parts: list[tuple[float, str, str, bool]] = field(default_factory=list)

    def add(self, key: str, what: str, memory: float, output: float = 0.0, counted: bool = True) -> None:
        self.memory += memory
        self.output += output
        self.counted_memory += memory if counted else 0.0
        self.parts.append((memory + output, key, what, counted))


def _count(n: float) -> str:
    return f"{n:.1e}" if n >= 1e7 else units.count(n)


def estimate(s: dict[str, Any]) -> Estimate:
    """Rows, memory and output of the resolved scenario `s`."""
    e = Estimate()
    hosts, switch_ports, host_rate = _hosts_and_switch_ports(s.get("topology", {}))
    duration = _value(s.get("run", {}).get("duration"), 0.0)
    for i, w in enumerate(s.get("workload", [])):
        key, kind = f"workload[{i}]", w.get("type")
        start = _value(w.get("start"))
        stop = min(_value(w["stop"]) if w.get("stop") else math.inf, duration or math.inf)
        active = max(0.0, stop - start) if stop < math.inf else 0.0
        if kind == "bulk":
            src, dst = w.get("src", []), w.get("dst", [])
            n = min(len(src), len(dst)) if w.get("pairing") == "zip" else len(src) * len(dst) - len(set(src) & set(dst))
            what = f"{_count(n)} flows ({units.count(len(src))} sources x {units.count(len(dst))} destinations)"
        elif kind == "flows":
            n, what = len(w.get("flows", [])), "flows listed"
            what = f"{_count(n)} {what}"
        elif kind == "incast":
            n = w.get("rounds", 1) * len(w.get("responders", [])) * w.get("connections_per_responder", 1)
            what = f"{_count(n)} responses ({units.count(w.get('rounds', 1))} rounds)"
        elif kind == "poisson":
            senders = len(w["hosts"]) if w.get("hosts") else hosts
            n = w.get("load", 0) * host_rate * senders * active / (8 * _mean_size(w.get("size")))
            what = f"about {_count(n)} Poisson arrivals (load x host rate x {units.count(senders)} hosts x {units.time(active)} / mean size)"
        elif kind == "search":
            rate = w.get("query_rate") or (w.get("server_load") or 0.0) / _mean_service(w.get("service_time", {}))
            n = rate * active * max(1, len(w.get("servers", [])))
            what = f"about {_count(n)} responses ({units.count(rate)} queries/s for {units.time(active)})"
        elif kind == "requests":
            servers = max(1, len(w.get("servers", [])))
            if w.get("count") is not None:
                n = w["count"] * servers
            elif w.get("load") is not None:
                n = w["load"] * host_rate * active / (8 * _mean_size(w.get("response")))
            else:
                n = servers  # closed loop until the run ends: bounded by the run, not estimated here
            what = f"about {_count(n)} requests"
        else:
            continue
        e.flows += n
        e.add(key, what, n * FLOW_BYTES, n * ROW_BYTES)
    out = s.get("output", {})
    interval = _value(out.get("queue_sample_interval"))
    if interval > 0:
        ports = out.get("queue_sample_ports")
        n_ports = len(ports) if isinstance(ports, list) else switch_ports if ports in (None, "switches") else switch_ports + hosts
        stop = _value(out["queue_sample_stop"]) if out.get("queue_sample_stop") else duration
        rows = n_ports * max(0.0, stop - _value(out.get("queue_sample_start"))) / interval
        e.rows["queues"] = rows
        e.add("output.queue_sample_interval", f"{_count(rows)} queue samples ({units.count(n_ports)} ports every {units.time(interval)})",
              rows * ROW_BYTES, rows * ROW_BYTES)
    if out.get("tcp_trace"):
        rows = hosts * host_rate * duration / (8 * 1448)  # an ACK per segment at line rate, every host
        e.rows["tcp_trace"] = rows
        e.add("output.tcp_trace", f"up to {_count(rows)} trace rows (an ACK per segment at line rate)", rows * ROW_BYTES, rows * ROW_BYTES,
              counted=False)
    for j, cap in enumerate(out.get("pcap", [])):
        snap = min(1.0, _value(cap.get("snaplen", 1500)) / 1500) if isinstance(cap, dict) else 1.0
        size = 2 * host_rate * duration / 8 * snap
        e.add(f"output.pcap[{j}]", f"up to {units.size(size)} of capture", 0.0, size, counted=False)
    e.parts.sort(reverse=True)
    return e


def _env_size(name: str, text: str) -> float:
    from .scenario import _error

    size = float(text) if text.replace(".", "", 1).isdigit() else _value(text, -1.0)
    if size <= 0:
        raise _error(name, f"{text!r} is not a size (bytes, or with a unit: 8GB)")
    return size


def available_memory() -> float:
    """Bytes the machine can give a run: DCSIM_MEMORY_LIMIT if set, else
    MemAvailable (Linux), else all physical memory, else no limit."""
    limit = os.environ.get("DCSIM_MEMORY_LIMIT")
    if limit:
        return _env_size("DCSIM_MEMORY_LIMIT", limit)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return math.inf


def check(s: dict[str, Any], threads: int = 1) -> list[str]:
    """Refuse (ScenarioError, naming the largest contributor's key) a run
    that cannot fit in memory; return warnings for one above
    DCSIM_WARN_ABOVE (bytes of memory or output). A run on several
    threads holds one whole world per thread (docs/design.md)."""
    from .scenario import _error

    e = estimate(s)
    limit = available_memory()
    if e.counted_memory * threads > limit:
        _, key, what, _ = next(p for p in e.parts if p[3])
        per_thread = f" on each of {threads} threads" if threads > 1 else ""
        raise _error(key, f"{what} need about {units.size(e.counted_memory)} of memory{per_thread}; "
                          f"this machine has {units.size(limit)} available (DCSIM_MEMORY_LIMIT to change it)")
    warn_env = os.environ.get("DCSIM_WARN_ABOVE")
    warn_above = _env_size("DCSIM_WARN_ABOVE", warn_env) if warn_env else WARN_ABOVE
    warnings = []
    if e.memory * threads > warn_above or e.output > warn_above:
        _, key, what, _ = e.parts[0]
        warnings.append(f"{key}: {what}: about {units.size(e.memory * threads)} of memory and {units.size(e.output)} of output")
    return warnings
