"""Flow-size distributions and open-loop workloads."""

from __future__ import annotations

import pytest

import dcsim
from dcsim import _core
from dcsim.workloads import NAMED, DATA, load_cdf

# Means of the linear CDFs as listed in data/workloads/README.md.
LISTED_MEAN = {
    "websearch": 1_711_250, "websearch_pias": 1_665_831, "websearch_tracks": 1_712_000,
    "datamining_vl2": 12_658_199, "datamining_pias": 7_470_236, "datamining_tracks": 12_658_208,
    "fb_hadoop": 120_421, "ali_storage": 40_870, "google_rpc": 2_892,
}


def _std(points: list[list[float]]) -> float:
    """Standard deviation of the linear CDF: uniform within each segment."""
    m1 = m2 = 0.0
    prev = (0.0, 0.0)
    for x, p in points:
        w = p - prev[1]
        m1 += w * (prev[0] + x) / 2
        m2 += w * (prev[0] ** 2 + prev[0] * x + x**2) / 3
        prev = (x, p)
    return (m2 - m1**2) ** 0.5


@pytest.mark.parametrize("name", sorted(NAMED))
def test_sampling_matches_each_file_mean(name):
    fname, pkt, _ = NAMED[name]
    points = load_cdf(DATA / fname, pkt)
    n = 1_000_000
    random, stratified, linear = _core.cdf_sample_means(points, n, 11)
    assert abs(linear - LISTED_MEAN[name]) / LISTED_MEAN[name] < 0.001, (linear, LISTED_MEAN[name])
    # The sampler's arithmetic: quantiles at 10^6 stratified points average to
    # the file's mean within 1% (rounding up to whole bytes adds < 1 B).
    assert abs(stratified - linear) / linear < 0.01, (stratified, linear)
    # 10^6 random draws: within 1%, or within 4 standard errors where the tail
    # makes 1% unreachable at this sample size (google_rpc: SE 2.3%).
    se = _std(points) / n**0.5
    assert abs(random - linear) < max(0.01 * linear, 4 * se), (random, linear, se)


def test_percent_and_ns2_formats_give_the_same_distribution():
    a = load_cdf(DATA / "websearch_ns3ecnsharp_DCTCP_CDF.txt")
    b = load_cdf(DATA / "hpcc_WebSearch_distribution.txt")
    assert a == b


def test_poisson_workload_runs_and_records_its_cdf(tmp_path):
    s = {
        "run": {"duration": "5ms"},
        "topology": {"type": "leafspine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4, "host_rate": "10Gbps",
                     "oversubscription": 1.0, "host_delay": "1us", "uplink_delay": "1us"},
        "tcp": {"min_rto": "1ms"},
        "workload": [{"type": "poisson", "size": {"cdf": "google_rpc"}, "load": 0.3, "load_reference": "uplink_share",
                      "pattern": "all_to_all", "other_racks_only": True}],
    }
    r = dcsim.run(s)
    flows = r.flows.to_pylist()
    assert len(flows) > 100
    assert all((f["src"] // 4) != (f["dst"] // 4) for f in flows)
    assert r.scenario["workload"][0]["size"]["points"][0] == [0.0, 0.0]
    with pytest.raises(dcsim.ScenarioError, match=r"workload\[0\].size.cdf: unknown distribution 'nope'"):
        dcsim.run(s, overrides={"workload[0].size": {"cdf": "nope"}})
    bad = tmp_path / "bad.txt"
    bad.write_text("100 0.5\n50 1.0\n")
    with pytest.raises(dcsim.ScenarioError, match=r"workload\[0\].size.points\[1\]: \[50, 1\] goes back"):
        dcsim.run(s, overrides={"workload[0].size": {"cdf_file": str(bad)}})
