"""The Python API: dcsim.run on dicts and files, overrides, result tables."""

from __future__ import annotations

import re
import threading
import time

import pyarrow as pa
import pytest

import dcsim


def test_run_returns_arrow_tables_and_summary(star):
    r = dcsim.run(star)
    for name in ("flows", "queries", "queues", "ports", "tcp_trace", "captures"):
        assert isinstance(getattr(r, name), pa.Table)
    assert r.summary["stopped_by"] == "workload done"
    assert r.summary["flows_completed"] == r.flows.num_rows == 2 + 3 * 5
    assert r.queries.num_rows == 5
    assert r.queries.column_names == ["workload", "round", "start", "end", "completion_time", "responders", "timeouts", "retransmits", "within_deadline"]
    bulk = r.flows.filter(pa.compute.equal(r.flows["kind"], "bulk"))
    assert bulk["delivered"].to_pylist() == [200_000, 200_000]
    assert all(s >= 1.0 for s in bulk["slowdown"].to_pylist())
    # The resolved scenario carries every default.
    assert r.scenario["tcp"]["initial_cwnd"] == 10
    assert r.summary["scenario_hash"] == dcsim.resolve(star)[1]
    # Tables are built once, when first read, and `tables` holds them all.
    assert r.flows is r.flows and r.tables["flows"] is r.flows
    assert sorted(r.tables) == sorted(("flows", "queries", "queues", "ports", "tcp_trace", "captures", "pacer", "voq", "pfc"))
    with pytest.raises(AttributeError, match="no attribute 'flow'"):
        r.flow  # noqa: B018


def test_overrides_as_kwargs_dict_and_seed(star):
    a = dcsim.run(star, tcp__initial_cwnd=2, seed=9)
    b = dcsim.run(star, overrides={"tcp.initial_cwnd": 2, "run.seed": 9})
    assert a.scenario["tcp"]["initial_cwnd"] == 2 and a.summary["seed"] == 9
    assert a.summary["scenario_hash"] == b.summary["scenario_hash"]
    assert a.flows.equals(b.flows)
    c = dcsim.run(star)
    assert c.summary["scenario_hash"] != a.summary["scenario_hash"]


def test_long_flows_have_null_end_and_bytes(star):
    star["run"] = {"duration": "5ms"}
    star["workload"] = [{"type": "bulk", "src": 1, "dst": 0, "size": "inf"}]
    r = dcsim.run(star)
    assert r.summary["stopped_by"] == "duration"
    assert r.flows["bytes"].to_pylist() == [None]
    assert r.flows["end"].to_pylist() == [None]
    assert r.flows["delivered"].to_pylist()[0] > 4_000_000  # ~9.5 Gb/s for 5 ms


def test_tcp_trace_is_opt_in(star):
    assert dcsim.run(star).tcp_trace.num_rows == 0
    t = dcsim.run(star, output__tcp_trace=True).tcp_trace
    assert t.num_rows > 100
    assert t.column_names == ["time", "conn", "side", "cwnd", "ssthresh", "srtt", "rttvar", "rto", "bytes_in_flight", "snd_wnd", "bytes_acked", "dctcp_alpha"]
    assert min(t["cwnd"].to_pylist()) >= 1448 * 2  # DCTCP never cuts below 2 segments


def test_the_gil_is_released_while_simulating(star):
    # Call the core directly in this thread while another Python thread
    # counts. Were the GIL held during the run, the counter could not advance.
    import json

    from dcsim import _core

    star["run"] = {"duration": "300ms"}
    star["workload"] = [{"type": "bulk", "src": [1, 2, 3], "dst": 0, "size": "inf"}]
    sim = _core.Simulation(json.dumps(dcsim.resolve(star)[0]))
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    before = ticks
    t0 = time.perf_counter()
    sim.run()
    elapsed = time.perf_counter() - t0
    during = ticks - before
    done.set()
    t.join()
    assert elapsed > 0.02, "the run was too short to tell"
    assert during > 10_000, f"only {during} ticks in {elapsed:.3f}s"


def test_bad_scenarios_raise_scenario_error_with_key_path(star):
    with pytest.raises(dcsim.ScenarioError) as e:
        dcsim.run(star, tcp__bogus=1)
    assert e.value.path == "tcp.bogus" and "bogus" in e.value.message
    assert str(e.value).startswith("tcp.bogus: unknown field `bogus`, expected one of `cc`")
    with pytest.raises(dcsim.ScenarioError, match=r"topology.link_rate: invalid rate \"fast\""):
        dcsim.run(star | {"topology": {"type": "star", "hosts": 4, "link_rate": "fast", "link_delay": "2us"}})
    with pytest.raises(dcsim.ScenarioError, match="out of range"):
        dcsim.run(star, overrides={"workload[3].size": "1KB"})
    for threads in (-1, 0, 1000, 2.0, "2"):
        with pytest.raises(dcsim.ScenarioError, match=r"threads = .*: allowed 1\.\.=64"):
            dcsim.run(star, threads=threads)


def test_flow_files_csv_and_parquet(tmp_path, star):
    import pyarrow.parquet as pq

    csv = tmp_path / "flows.csv"
    csv.write_text("src,dst,bytes,start\n1,0,10000,0\n2,3,20000,0.0001\n")
    pq.write_table(pa.table({"src": [1, 2], "dst": [0, 3], "bytes": [10000, 20000], "start": [0.0, 0.0001]}), tmp_path / "flows.parquet")
    for name in ("flows.csv", "flows.parquet"):
        scenario = tmp_path / f"s-{name}.toml"
        scenario.write_text(
            '[topology]\ntype = "star"\nhosts = 4\nlink_rate = "10Gbps"\nlink_delay = "2us"\n'
            f'[[workload]]\ntype = "flows"\nfile = "{name}"\n'
        )
        r = dcsim.run(scenario)
        assert r.flows["bytes"].to_pylist() == [10000, 20000]
        assert r.flows["start"].to_pylist() == [0.0, 0.0001]
        assert r.summary["flows_completed"] == 2
    # An optional dscp column gives each flow's class (flows.dscp, and the packets' DSCP).
    (tmp_path / "dscp.csv").write_text("src,dst,bytes,start,dscp\n1,0,10000,0,2\n2,3,20000,0.0001,\n")
    r = dcsim.run(star | {"workload": [{"type": "flows", "file": str(tmp_path / "dscp.csv")}]})
    assert r.flows["dscp"].to_pylist() == [2, 0]
    (tmp_path / "bad-dscp.csv").write_text("src,dst,bytes,start,dscp\n1,0,10000,0,high\n")
    with pytest.raises(dcsim.ScenarioError, match=r"dscp must be an integer 0..63, got 'high'"):
        dcsim.run(star | {"workload": [{"type": "flows", "file": str(tmp_path / "bad-dscp.csv")}]})
    bad = tmp_path / "bad.csv"
    bad.write_text("src,dst,bytes\n1,0,10\n")
    with pytest.raises(dcsim.ScenarioError, match=r"workload\[0\].file: bad.csv row 1: missing column\(s\) start"):
        dcsim.run(star | {"workload": [{"type": "flows", "file": str(bad)}]})


def test_queue_sampling_can_start_late(star):
    r = dcsim.run(star | {"output": {"queue_sample_interval": "10us", "queue_sample_start": "100us"}})
    times = r.queues["time"].to_pylist()
    assert times and min(times) == pytest.approx(1e-4)
    early = dcsim.run(star | {"output": {"queue_sample_interval": "10us"}}).queues["time"].to_pylist()
    assert min(early) == 0.0 and len(early) > len(times)


def test_a_result_shows_itself_in_a_notebook_and_loads_back(star, tmp_path):
    r = dcsim.run(star, out=tmp_path / "out")
    page = r._repr_html_()
    assert page.count("<table") == 2, "what it found, and FCT by size"
    assert "topology: star" in page and "incast rounds" in page and "(0,100KB]" in page
    assert re.search(r"<td[^>]*>[\d.,]+ (µs|ms)</td>", page), "FCTs with their unit"
    assert "flows (" in page and "rows)" in page
    loaded = dcsim.Result.load(tmp_path / "out")
    assert loaded.flows.equals(r.flows) and loaded.summary == r.summary and loaded._repr_html_() == page
    assert repr(loaded).startswith("<dcsim.Result") and "µs simulated" in repr(loaded)


def test_stack_presets_set_the_same_keys_so_a_later_one_replaces_an_earlier_one(star):
    from dcsim import presets

    stacks = [name for name in presets.available() if name.startswith("stack/")]
    assert stacks == ["stack/linux", "stack/freebsd", "stack/ns3"]
    keys = {name: set(presets.overrides(name)) for name in stacks}
    assert all(k == keys["stack/linux"] for k in keys.values()), keys
    for first in stacks:
        for last in stacks:
            r = dcsim.run(star, preset=[first, last], overrides={"run.duration": "2ms"})
            want = presets.overrides(last)
            got = {key: r.scenario["tcp"][key.split(".")[1]] for key in want}
            alone = dcsim.run(star, preset=last, overrides={"run.duration": "2ms"})
            assert got == {key: alone.scenario["tcp"][key.split(".")[1]] for key in want}, (first, last)
            assert r.summary["events"] == alone.summary["events"], (first, last)


def test_threads_give_the_same_result_in_the_canonical_order(star):
    one = dcsim.run(star, run__event_order="canonical", threads=1)
    two = dcsim.run(star, run__event_order="canonical", threads=2)
    assert two.summary["threads"] == 2 and two.scenario["run"]["event_order"] == "canonical"
    for name in ("flows", "queries", "ports", "queues"):
        assert one.tables[name].equals(two.tables[name]), name
    assert one.summary["stopped_by"] == "workload done" and one.queries.num_rows == 5
    # The scheduled order (the default) cannot split: a ScenarioError that says what to set.
    with pytest.raises(dcsim.ScenarioError, match=r'run.event_order = "canonical"'):
        dcsim.run(star, threads=2)
