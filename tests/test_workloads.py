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
    # Homa's W1-W5: step CDFs, their means those of the authors' files.
    "homa_w1": 187.51, "homa_w2": 440.79, "homa_w3": 2_927.35, "homa_w4": 127_796.6, "homa_w5": 2_564_715,
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


def _search(service, **extra):
    s = {
        "run": {"duration": "400ms"},
        "topology": {"type": "star", "hosts": 11, "link_rate": "1Gbps", "link_delay": "5us"},
        "switch": {"buffer": "500pkt"},
        "tcp": {"min_rto": "10ms", "rtt_granularity": "1us"},
        "workload": [{"type": "search", "client": 0, "servers": "1..11", "query_size": "3500B", "response_size": "2800B",
                      "service_time": service, "stop": "300ms"} | extra],
    }
    return dcsim.run(s)


def test_search_fan_out_fan_in_with_deadlines():
    # Constant 1 ms service at 20 queries/s: every query completes a little
    # after 1 ms (query and response transfers at 1 Gb/s, ~0.6 ms here).
    r = _search({"type": "constant", "value": "1ms"}, query_rate=20.0, deadline="1.5ms")
    q = r.queries.to_pylist()
    n = len(q)
    assert abs(n - 20 * 0.3) <= 4 * (20 * 0.3) ** 0.5 + 1, n  # Poisson count
    assert all(1e-3 < row["completion_time"] < 2.5e-3 for row in q)
    assert all(row["responders"] == 10 for row in q)
    within = [row["within_deadline"] for row in q]
    tight = [row["within_deadline"] for row in _search({"type": "constant", "value": "1ms"}, query_rate=20.0, deadline="0.5ms").queries.to_pylist()]
    assert all(w == 10 for w in within) and all(w == 0 for w in tight)
    # One response flow per server per query.
    assert r.flows.num_rows == 10 * n and r.summary["flows_completed"] == 10 * n


def test_search_gamma_service_and_server_load():
    # Seed 000's service time, 180 ns * Gamma(0.7, 20000) + 10 us (mean 2.53 ms),
    # at 30% server occupancy: ~118.6 queries/s; the query waits for its slowest server.
    gamma = {"type": "gamma", "shape": 0.7, "scale": 20000, "unit": "180ns", "offset": "10us"}
    r = _search(gamma, server_load=0.3)
    q = r.queries.to_pylist()
    expected = 0.3 / 2.53e-3 * 0.3
    assert abs(len(q) - expected) <= 4 * expected**0.5, len(q)
    ct = sorted(row["completion_time"] for row in q)
    # The slowest of 10 servers: the mean completion exceeds the mean service time.
    assert sum(ct) / len(ct) > 2.53e-3
    assert r.queries["within_deadline"].to_pylist() == [None] * len(q)


REQ_BASE = {
    "topology": {"type": "star", "hosts": 10, "link_rate": "1Gbps", "link_delay": "5us"},
    "switch": {"buffer": "500pkt"},
    "tcp": {"min_rto": "10ms", "rtt_granularity": "1us"},
}


def test_closed_loop_requests_keep_the_client_link_busy():
    # Seed 000's static flows: the client fetches the same file from 4 servers
    # over and over; the client's link carries ~line rate of payload.
    s = REQ_BASE | {"run": {"duration": "100ms"},
                    "workload": [{"type": "requests", "client": 0, "servers": "1..5", "response": "1MB", "arrival": "closed_loop"}]}
    r = dcsim.run(s)
    flows = r.flows.to_pylist()
    goodput = sum(f["delivered"] for f in flows) * 8 / 0.1
    assert goodput > 0.9e9 * 1448 / 1518, goodput
    assert {f["src"] for f in flows} == {1, 2, 3, 4}
    done = [f for f in flows if f["fct"] is not None]
    assert len(done) >= 8 and all(f["bytes"] == 1_000_000 for f in flows)


def test_poisson_requests_rate_mix_and_connection_pool():
    # 900 B and 100 KB responses 4:1 at 30% of the 1 Gb/s client link:
    # rate = 0.3e9 / (8 * (0.8 * 900 + 0.2 * 1e5)) = 1810 requests/s.
    s = REQ_BASE | {"run": {"duration": "1s"},
                    "workload": [{"type": "requests", "client": 0, "servers": "1..10", "response": {"mix": [["900B", 4], ["100KB", 1]]},
                                  "arrival": "poisson", "load": 0.3, "stop": "1s"}]}
    r = dcsim.run(s)
    flows = r.flows.to_pylist()
    rate = 0.3e9 / (8 * (0.8 * 900 + 0.2 * 1e5))
    assert abs(len(flows) - rate) < 4 * rate**0.5, len(flows)
    small = sum(1 for f in flows if f["bytes"] == 900)
    assert abs(small / len(flows) - 0.8) < 0.05
    # Servers in round robin.
    counts = [sum(1 for f in flows if f["src"] == h) for h in range(1, 10)]
    assert max(counts) - min(counts) <= 1
    # All but the last few (still in flight at the end) complete.
    assert r.summary["flows_completed"] >= len(flows) - 20


def test_request_responses_can_follow_a_named_cdf():
    s = REQ_BASE | {"run": {"duration": "2s"},
                    "workload": [{"type": "requests", "client": 0, "servers": "1..10", "response": {"cdf": "websearch_tracks"},
                                  "arrival": "poisson", "load": 0.3, "stop": "2s"}]}
    sizes = [f["bytes"] for f in dcsim.run(s).flows.to_pylist()]
    # Web search: most responses are small, a few are megabytes.
    assert len(set(sizes)) > 20 and min(sizes) < 100_000 and max(sizes) > 1_000_000


def test_closed_loop_requests_with_a_count_stop_when_all_are_answered():
    # ab -n 6 -c 2 against servers 1 and 2: each listed twice, 3 requests per entry.
    s = REQ_BASE | {"run": {"duration": "10s", "stop_when_done": True},
                    "workload": [{"type": "requests", "client": 0, "servers": [1, 1, 2, 2], "response": "20KB",
                                  "arrival": "closed_loop", "count": 3}]}
    r = dcsim.run(s)
    flows = r.flows.to_pylist()
    assert len(flows) == 12 and all(f["fct"] is not None for f in flows)
    assert r.summary["stopped_by"] == "workload done" and r.summary["sim_seconds"] < 0.1
    # Two connections per server, each carrying its three requests one after another.
    by_conn = {}
    for f in flows:
        by_conn.setdefault(f["conn"], []).append(f)
    assert sorted(len(v) for v in by_conn.values()) == [3, 3, 3, 3]
    assert all(a["end"] <= b["start"] for v in by_conn.values() for a, b in zip(v, v[1:]))


def test_closed_loop_send_jitter_delays_each_request_by_a_seeded_uniform_draw():
    def run(jitter, seed):
        s = REQ_BASE | {"run": {"duration": "10s", "stop_when_done": True, "seed": seed},
                        "workload": [{"type": "requests", "client": 0, "servers": [1, 1, 2, 2], "response": "20KB",
                                      "arrival": "closed_loop", "count": 3, "send_jitter": jitter}]}
        return dcsim.run(s).flows.to_pylist()

    plain = run("0s", 1)
    assert sorted({f["start"] for f in plain if f["start"] < 1e-9}) == [0.0], "without jitter all four leave at once"
    jittered = run("50us", 1)
    assert len(jittered) == 12 and all(f["fct"] is not None for f in jittered), "the count still completes"
    first = sorted(f["start"] for f in jittered)[:4]
    assert len(set(first)) == 4 and all(0 <= t < 50e-6 for t in first), first
    # Each later request leaves within the jitter after the previous one on its connection ended.
    by_conn = {}
    for f in jittered:
        by_conn.setdefault(f["conn"], []).append(f)
    assert all(0 <= b["start"] - a["end"] < 50e-6 for v in by_conn.values() for a, b in zip(v, v[1:]))
    assert run("50us", 1) == jittered, "same seed, same draws"
    assert [f["start"] for f in run("50us", 2)] != [f["start"] for f in jittered], "another seed, other draws"


def test_per_flow_requests_open_a_connection_per_request_and_close_it():
    def run(connections):
        s = REQ_BASE | {"run": {"duration": "10s", "stop_when_done": True},
                        "workload": [{"type": "requests", "client": 0, "servers": [1, 1, 2, 2], "response": "20KB",
                                      "arrival": "closed_loop", "count": 3, "connections": connections}],
                        "output": {"pcap": [{"host": 0, "name": "client"}]}}
        r = dcsim.run(s)
        return r.flows.to_pylist(), fins(r.pcaps["client"])

    def fins(pcap: bytes) -> int:
        """Segments with FIN in a capture (Ethernet, IPv4, TCP)."""
        n, at = 0, 24
        while at < len(pcap):
            caplen = int.from_bytes(pcap[at + 8:at + 12], "little")
            frame = pcap[at + 16:at + 16 + caplen]
            tcp = 14 + (frame[14] & 0x0F) * 4
            n += frame[tcp + 13] & 0x01
            at += 16 + caplen
        return n

    pooled, pooled_fins = run("persistent")
    fresh, fresh_fins = run("per_flow")
    assert len(fresh) == len(pooled) == 12 and all(f["fct"] is not None for f in fresh)
    assert len({f["conn"] for f in pooled}) == 4 and pooled_fins == 0, "two connections per server, reused, never closed"
    assert len({f["conn"] for f in fresh}) == 12, "one connection per request"
    assert fresh_fins == 24, "the server closes after its response, then the client"
    # A later request on a fresh connection waits for a handshake; a reused one does not.
    assert min(f["fct"] for f in fresh if f["start"] > 0) > min(f["fct"] for f in pooled if f["start"] > 0)
