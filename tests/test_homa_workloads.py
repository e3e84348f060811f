"""The Homa paper's workloads W1-W5 (data/workloads/homa_W*.txt).

Each file is a HomaSimulation size distribution written as a step CDF (see
data/workloads/README.md). The reference numbers below come from the raw
source files, not from the converted ones:
* `header`: the source file's first line, the authors' own mean message size
  (W5's is in packets; the file converts at 1470 B per packet);
* `rows`: the source's rows with positive probability;
* `step_mean`: sum of size * (p - p_prev) over the source rows, computed from
  the raw source (W5 in bytes).
"""

from __future__ import annotations

import pytest

import dcsim
from dcsim import _core
from dcsim.workloads import DATA, load_cdf

HOMA = {
    "W1": {"file": "homa_W1_FacebookKeyValue.txt", "header": 187.77, "rows": 315, "step_mean": 187.5107146},
    "W2": {"file": "homa_W2_GoogleSearchRPC.txt", "header": 440.7907, "rows": 155, "step_mean": 440.7907027},
    "W3": {"file": "homa_W3_GoogleAllRPC.txt", "header": 2927.354, "rows": 842, "step_mean": 2927.354389},
    "W4": {"file": "homa_W4_FacebookHadoop.txt", "header": 127796.6, "rows": 460, "step_mean": 127796.6437},
    "W5": {"file": "homa_W5_DCTCP_WebSearch.txt", "header": 1744.70 * 1470, "rows": 400, "step_mean": 2_564_714.968},
}
# W1's header is 0.14 % above its own table's step mean; the others agree to
# the header's printed digits.
HEADER_TOL = {"W1": 0.002}


def _points(w: str) -> list[list[float]]:
    return load_cdf(DATA / HOMA[w]["file"])


@pytest.mark.parametrize("w", sorted(HOMA))
def test_file_is_the_source_step_cdf(w):
    pts = _points(w)
    assert pts[-1][1] == 1.0
    # Every segment from (0, 0) is vertical (a size's probability) or flat
    # (no sizes in between): dcsim draws only the source's sizes.
    prev = [0.0, 0.0]
    jumps = 0
    for x, p in pts:
        assert x == prev[0] or p == prev[1], (prev, [x, p])
        jumps += x == prev[0] and p > prev[1]
        prev = [x, p]
    assert jumps == HOMA[w]["rows"]


@pytest.mark.parametrize("w", sorted(HOMA))
def test_the_distributions_mean_is_the_sources(w):
    # The step mean of the raw source, and the authors' stated mean (header
    # line). How dcsim's sampler draws from it is test_workloads.py's
    # (every named distribution, homa_w1..homa_w5 included).
    ref = HOMA[w]
    linear = _core.cdf_sample_means(_points(w), 1000, 5)[2]
    assert abs(linear - ref["step_mean"]) / ref["step_mean"] < 1e-6, (linear, ref["step_mean"])
    assert abs(linear - ref["header"]) / ref["header"] < HEADER_TOL.get(w, 1e-4), (linear, ref["header"])


def test_means_increase_from_w1_to_w5():
    # Ordering of the source headers: W1 smallest, W5 largest.
    means = [_core.cdf_sample_means(_points(w), 1000, 1)[2] for w in sorted(HOMA)]
    assert means == sorted(means) and len(set(means)) == 5, means
    assert [HOMA[w]["header"] for w in sorted(HOMA)] == sorted(HOMA[w]["header"] for w in HOMA)


@pytest.mark.parametrize("w,duration", [("W1", "1ms"), ("W2", "1ms"), ("W3", "2ms"), ("W4", "5ms"), ("W5", "5ms")])
def test_scenario_draws_only_source_sizes(w, duration):
    s = {
        "run": {"duration": duration},
        "topology": {"type": "leafspine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4, "host_rate": "10Gbps",
                     "oversubscription": 1.0, "host_delay": "1us", "uplink_delay": "1us"},
        "tcp": {"min_rto": "1ms"},
        "workload": [{"type": "poisson", "size": {"cdf_file": str(DATA / HOMA[w]["file"])}, "load": 0.3,
                      "load_reference": "uplink_share", "pattern": "all_to_all"}],
    }
    r = dcsim.run(s)
    sizes = {x for x, _ in _points(w)}
    drawn = r.flows["bytes"].to_pylist()
    assert len(drawn) >= 5
    assert set(drawn) <= sizes, sorted(set(drawn) - sizes)[:5]
