"""The Python cost of one `dcsim.run` around a run the core finishes in
microseconds: a 2-host star with one 1 KB flow, reading one table, in this
process and in a worker process (as a sweep runs).

    python bench/overhead.py        # median milliseconds per call
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import dcsim

SCENARIO = {
    "topology": {"type": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "1us"},
    "output": {"queue_sample_interval": "0s"},
    "workload": [{"type": "flows", "flows": [{"src": 0, "dst": 1, "size": "1KB", "start": "0s"}]}],
}


def measure(runs: int = 300) -> tuple[float, float]:
    """Median wall time per call and median core time, in ms."""
    calls, core = [], []
    for _ in range(runs):
        t = time.perf_counter()
        r = dcsim.run(SCENARIO)
        r.flows.num_rows  # noqa: B018 (read one table, as a sweep does)
        calls.append(time.perf_counter() - t)
        core.append(r.summary["wall_seconds"])
    return statistics.median(calls) * 1e3, statistics.median(core) * 1e3


if __name__ == "__main__":
    measure(50)  # warm up
    print("main process:   %.3f ms per call, core %.3f ms" % measure())
    with ProcessPoolExecutor(1) as pool:
        pool.submit(measure, 50).result()
        print("worker process: %.3f ms per call, core %.3f ms" % pool.submit(measure).result())
