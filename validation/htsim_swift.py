"""dcsim's side of the Swift comparison with htsim (docs/validation-receiver.md).

    python validation/htsim_swift.py dumbbell   # htsim's sim/tests/main_dumbell_swift.cpp, matched
    python validation/htsim_swift.py multihop   # htsim's sim/tests/main_multihop_swift.cpp, matched

Prints the metrics the document compares: per-flow goodput, Jain's index and
the bottleneck queue (dumbbell: over 100-200 ms; multihop: the last 20 ms of
each 25 ms phase). htsim's side is built and run outside this repository."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import dcsim

HERE = Path(__file__).parent


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x * x).sum()))


def queue_us(r, port: int, rate: float, since: float, until: float = np.inf) -> np.ndarray:
    q = r.queues.to_pandas()
    q = q[(q.port == port) & (q.time >= since) & (q.time < until)]
    return q.bytes.to_numpy(float) * 8 / rate * 1e6


def dumbbell() -> None:
    """20 flows on 10 Gb/s; goodput over the second 100 ms (the same run to
    100 ms and to 200 ms: runs are deterministic)."""
    path = HERE / "scenarios" / "htsim-swift-dumbbell.toml"
    half, full = (dcsim.run(path, overrides={"run.duration": d}) for d in ("100ms", "200ms"))
    got = (full.flows["delivered"].to_numpy() - half.flows["delivered"].to_numpy()) * 8 / 0.1
    port = next(p for p in full.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] == 20)
    us = queue_us(full, port["port"], port["rate_bps"], 0.1)
    print(f"goodput {got.sum() / 1e9:.3f} Gb/s (per flow {got.min() / 1e9:.4f}-{got.max() / 1e9:.4f}), Jain {jain(got):.4f}")
    print(f"queue mean {us.mean():.2f} us, p99 {np.percentile(us, 99):.2f} us; drops {full.summary['packets_dropped']}, "
          f"timeouts {sum(full.flows['timeouts'].to_pylist())}; events {full.summary['events']}")


# htsim flow -> (dcsim source host, start ms, stop ms): 2, 4 and 6 links into host 0 of a k = 4 fat-tree.
MULTIHOP = {0: (2, 50, 100), 1: (1, 25, 75), 2: (4, 0, 125)}
PHASES = [(0, 25, (2,)), (25, 50, (2, 1)), (50, 75, (2, 1, 0)), (75, 100, (2, 0)), (100, 125, (2,))]


def multihop_scenario(sizes: dict[int, str], ms: float) -> dict:
    swift = {"base_target": "20us", "per_hop": "0us", "fs_range": "100us", "fs_min_cwnd": 0.1, "fs_max_cwnd": 100.0,
             "endpoint_target": "1s", "ai": 1.0, "beta": 0.8, "max_mdf": 0.5, "min_cwnd": 10 / 4000, "max_cwnd": 1000.0, "retx_reset": 5}
    return {
        "run": {"duration": f"{ms}ms", "stop_when_done": False},
        "topology": {"type": "fattree", "k": 4, "link_rate": "200Gbps", "host_delay": "1.25us", "edge_agg_delay": "1.25us",
                     "agg_core_delay": "1.25us"},
        "link": {"mtu": 3982},  # 4000 B frames, htsim's packet size
        "switch": {"buffer": "4000000B"},
        "tcp": {"cc": "swift", "initial_cwnd": 1, "min_rto": "100us", "rto_formula": "bsd", "initial_rto": "1ms", "swift": swift},
        "workload": [{"type": "bulk", "src": src, "dst": 0, "size": sizes.get(f, "inf"), "start": f"{start}ms"}
                     for f, (src, start, _) in sorted(MULTIHOP.items(), reverse=True)],
        "output": {"queue_sample_interval": "2us", "queue_sample_ports": [1], "tcp_trace": True},
    }


def multihop() -> None:
    """htsim stops its flows at set times; dcsim gives each flow the size it
    had delivered at that time (calibrated in stop order), then measures."""
    sizes: dict[int, str] = {}
    for f in sorted(MULTIHOP, key=lambda f: MULTIHOP[f][2]):
        src, _, stop = MULTIHOP[f]
        r = dcsim.run(multihop_scenario(sizes, stop))
        sizes[f] = f"{dict(zip(r.flows['src'].to_pylist(), r.flows['delivered'].to_pylist()))[src]}B"
    r = dcsim.run(multihop_scenario(sizes, 130))
    conn = dict(zip(r.flows["src"].to_pylist(), r.flows["conn"].to_pylist()))
    trace = r.tcp_trace.to_pandas()
    trace = trace[trace.side == 0]
    grid = np.arange(0, 0.1300001, 100e-6)
    acked = {f: np.interp(grid, np.r_[0, trace[trace.conn == conn[src]].time], np.r_[0, trace[trace.conn == conn[src]].bytes_acked])
             for f, (src, _, _) in MULTIHOP.items()}
    for a, e, active in PHASES:
        a2, e = (a + 5) / 1e3, e / 1e3  # the last 20 ms of each phase
        g = {f: (np.interp(e, grid, acked[f]) - np.interp(a2, grid, acked[f])) * 8 / (e - a2) / 1e9 for f in active}
        us = queue_us(r, 1, 200e9, a2, e)
        shares = ", ".join(f"f{f} {g[f]:.2f}" for f in sorted(g))
        print(f"{a:>3}-{e * 1e3:.0f} ms: {shares} Gb/s; Jain {jain(np.array(list(g.values()))):.3f}; "
              f"queue mean {us.mean():.2f} us, p99 {np.percentile(us, 99):.2f} us")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["dumbbell", "multihop"])
    {"dumbbell": dumbbell, "multihop": multihop}[parser.parse_args().scenario]()
