"""Runaway inputs are refused before they run (dcsim/estimate.py): the
estimate of rows, memory and output, the refusal naming the key, and the
warning for a run that is merely large."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import dcsim
from dcsim import estimate
from dcsim.scenario import resolve

STAR = {
    "run": {"duration": "10ms"},
    "topology": {"type": "star", "hosts": 100, "link_rate": "10Gbps", "link_delay": "1us"},
    "workload": [{"type": "bulk", "src": "0..100", "dst": "0..100", "size": "1KB"}],
}


def resolved(s):
    return resolve(s, {}, None, None)[0]


def test_the_estimate_counts_flows_samples_and_arrivals():
    s = resolved(STAR | {"output": {"queue_sample_interval": "1us"},
                         "workload": STAR["workload"] + [
                             {"type": "incast", "querier": 0, "responders": "1..11", "response_size": "10KB", "rounds": 7},
                             {"type": "poisson", "size": "125KB", "load": 0.5, "load_reference": "host", "pattern": "all_to_all"}]})
    e = estimate.estimate(s)
    bulk = 100 * 99
    incast = 7 * 10
    # 0.5 x 10 Gb/s x 100 hosts x 10 ms / (8 x 125 KB) = 5,000 arrivals
    assert e.flows == pytest.approx(bulk + incast + 5000, rel=1e-6)
    assert e.rows["queues"] == pytest.approx(100 * 10e-3 / 1e-6)  # 100 switch ports
    assert e.memory > bulk * estimate.FLOW_BYTES


def test_a_search_workload_counts_its_responses_from_the_server_load_until_the_run_ends():
    # 0.5 / 100 us = 5,000 queries per second to 10 servers, stopped by the
    # run's 10 ms rather than the workload's 100 s: 500 responses.
    search = {"type": "search", "client": 0, "servers": "1..11", "query_size": "100B", "response_size": "1KB",
              "service_time": {"type": "exponential", "mean": "100us"}, "server_load": 0.5, "stop": "100s"}
    e = estimate.estimate(resolved(STAR | {"workload": [search]}))
    assert e.flows == pytest.approx(500, rel=1e-6)


def test_a_run_that_cannot_fit_is_refused_naming_its_key(monkeypatch):
    # Queue samples every nanosecond for 10 s on 100 ports: 10^12 rows.
    s = STAR | {"run": {"duration": "10s"}, "output": {"queue_sample_interval": "1ns"}}
    with pytest.raises(dcsim.ScenarioError) as e:
        dcsim.run(s)
    assert str(e.value).startswith("output.queue_sample_interval: 1.0e+12 queue samples (100 ports every 1 ns) need about")
    assert "of memory; this machine has" in str(e.value)
    # The limit is the machine's, or DCSIM_MEMORY_LIMIT.
    monkeypatch.setenv("DCSIM_MEMORY_LIMIT", "10MB")
    with pytest.raises(dcsim.ScenarioError, match=r"^workload\[0\]: 9,900 flows \(100 sources x 100 destinations\) need about"):
        dcsim.run(STAR)


def test_a_large_run_warns(monkeypatch):
    monkeypatch.setenv("DCSIM_WARN_ABOVE", "1MB")
    with pytest.warns(estimate.LargeRunWarning, match=r"^workload\[0\]: 9,900 flows"):
        dcsim.run(STAR | {"run": {"duration": "1us"}})
    monkeypatch.delenv("DCSIM_WARN_ABOVE")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dcsim.run(STAR | {"run": {"duration": "1us"}})


def test_the_cli_refuses_with_exit_2_and_warns_in_one_line(tmp_path):
    (tmp_path / "big.toml").write_text(
        '[run]\nduration = "10s"\n[topology]\ntype = "star"\nhosts = 4\nlink_rate = "10Gbps"\nlink_delay = "1us"\n'
        '[output]\nqueue_sample_interval = "1ns"\n[[workload]]\ntype = "bulk"\nsrc = 1\ndst = 0\nsize = "1KB"\n')
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "run", "big.toml", "--out", "o"], cwd=tmp_path, capture_output=True, text=True,
                       env={**__import__("os").environ, "DCSIM_MEMORY_LIMIT": "1GB"})
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("dcsim: error: output.queue_sample_interval: ")
    assert not (tmp_path / "o").exists()
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "run", "big.toml", "--out", "o", "--set", "run.duration=1us", "--quiet"],
                       cwd=tmp_path, capture_output=True, text=True, env={**__import__("os").environ, "DCSIM_WARN_ABOVE": "1KB"})
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("dcsim: warning: ") and p.stderr.count("\n") == 1, p.stderr


def test_all_pairs_of_a_large_star_are_refused_in_a_moment(monkeypatch):
    # 50,000 x 50,000 is under the core's 2^32 flow bound; the estimate
    # (7.5 TB) refuses it before anything is built.
    monkeypatch.setenv("DCSIM_MEMORY_LIMIT", "1TB")
    s = {"topology": {"type": "star", "hosts": 50_000, "link_rate": "10Gbps", "link_delay": "1us"},
         "workload": [{"type": "bulk", "src": "0..50000", "dst": "0..50000", "size": "1KB"}]}
    with pytest.raises(dcsim.ScenarioError) as e:
        dcsim.run(s)
    assert str(e.value) == ("workload[0]: 2.5e+09 flows (50,000 sources x 50,000 destinations) need about 7.5 TB of memory; "
                            "this machine has 1 TB available (DCSIM_MEMORY_LIMIT to change it)")


def test_a_bad_limit_is_an_error_naming_the_variable(monkeypatch):
    monkeypatch.setenv("DCSIM_MEMORY_LIMIT", "lots")
    with pytest.raises(dcsim.ScenarioError, match=r"^DCSIM_MEMORY_LIMIT: 'lots' is not a size"):
        dcsim.run(STAR | {"run": {"duration": "1us"}})


def test_a_fat_tree_counts_its_hosts_and_switch_ports_whole_or_partial():
    fat = {"type": "fattree", "k": 8, "link_rate": "100Gbps", "host_delay": "1us", "edge_agg_delay": "1us", "agg_core_delay": "1us"}
    # Whole: 128 hosts, 5 k^3 / 4 = 640 switch ports (edge down and up, aggregation down and up, core down).
    assert estimate._hosts_and_switch_ports(resolved(STAR | {"topology": fat})["topology"])[:2] == (128, 640)
    # The HPCC authors' partial one: 5 pods, 16 hosts per edge: 320 hosts and 320 + 5 x 64 switch ports.
    part = fat | {"pods": 5, "hosts_per_edge": 16, "fabric_rate": "400Gbps"}
    assert estimate._hosts_and_switch_ports(resolved(STAR | {"topology": part})["topology"])[:2] == (320, 640)
