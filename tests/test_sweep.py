"""Sweeps: grid, zip and points over dotted keys, replicas, a Parquet store
keyed by scenario hash and seed, failures recorded, resume."""

from __future__ import annotations

import subprocess
import sys

import pyarrow.compute as pc

from dcsim import sweep

BASE = """
[topology]
type = "star"
hosts = 5
link_rate = "10Gbps"
link_delay = "2us"
[tcp]
min_rto = "1ms"
[[workload]]
type = "incast"
querier = 0
responders = "1..5"
response_size = "20KB"
rounds = 3
"""

SWEEP = """
base = "base.toml"
replicas = 2
tables = ["queries", "flows"]
[grid]
"switch.buffer" = ["8pkt", "100pkt"]
"tcp.rtt_granularity" = ["1ms", "1us"]
"""


def write(tmp_path, sweep_text=SWEEP):
    (tmp_path / "base.toml").write_text(BASE)
    (tmp_path / "sweep.toml").write_text(sweep_text)
    return tmp_path / "sweep.toml"


def test_grid_with_replicas_stores_every_run_with_its_parameters(tmp_path):
    counts = sweep.run_sweep(write(tmp_path), tmp_path / "out", jobs=2, progress=False)
    assert counts == {"ok": 8, "error": 0, "skipped": 0}
    runs = sweep.load(tmp_path / "out")
    assert runs.num_rows == 8
    assert sorted(set(runs["switch.buffer"].to_pylist())) == ["100pkt", "8pkt"]
    assert sorted(set(runs["seed"].to_pylist())) == [1, 2]
    q = sweep.load(tmp_path / "out", "queries")
    assert q.num_rows == 8 * 3
    assert q.column_names[:5] == ["key", "scenario_hash", "seed", "switch.buffer", "tcp.rtt_granularity"]
    # The small buffer causes losses; the coarse RTT clock makes them cost more.
    small = q.filter(pc.equal(q["switch.buffer"], "8pkt"))
    assert sum(small["timeouts"].to_pylist()) > 0


def test_resume_skips_stored_points_and_reruns_missing_ones(tmp_path):
    path = write(tmp_path)
    sweep.run_sweep(path, tmp_path / "out", jobs=1, progress=False)
    before = {f.name: f.read_bytes() for f in (tmp_path / "out" / "queries").iterdir()}
    assert sweep.run_sweep(path, tmp_path / "out", jobs=2, progress=False) == {"ok": 0, "error": 0, "skipped": 8}
    # Lose two runs (as if the sweep had been killed before them): only those run again.
    gone = sorted((tmp_path / "out" / "runs").iterdir())[:2]
    for f in gone:
        f.unlink()
        (tmp_path / "out" / "queries" / f.name).unlink()
    assert sweep.run_sweep(path, tmp_path / "out", jobs=2, progress=False) == {"ok": 2, "error": 0, "skipped": 6}
    after = {f.name: f.read_bytes() for f in (tmp_path / "out" / "queries").iterdir()}
    assert after == before, "the same rows, byte for byte, whichever executor and order"
    assert not [f for f in (tmp_path / "out").rglob(".*")], "no temporary files left"


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    path = write(tmp_path, SWEEP.replace('["8pkt", "100pkt"]', '["8pkt", "0pkt"]'))
    counts = sweep.run_sweep(path, tmp_path / "out", jobs=2, progress=False)
    assert counts == {"ok": 4, "error": 4, "skipped": 0}
    runs = sweep.load(tmp_path / "out")
    errors = runs.filter(pc.equal(runs["status"], "error"))
    assert all("switch.buffer" in e for e in errors["error"].to_pylist())


def test_zip_points_and_cli(tmp_path):
    text = """
base = "base.toml"
[zip]
"workload[0].responders" = ["1..3", "1..5"]
"workload[0].response_size" = ["40KB", "20KB"]
[[points]]
"tcp.initial_cwnd" = 4
[[points]]
"tcp.initial_cwnd" = 10
"""
    path = write(tmp_path, text)
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "2"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "4 runs ok, 0 failed, 0 already stored" in p.stdout
    runs = sweep.load(tmp_path / "out")
    assert sorted(zip(runs["workload[0].responders"].to_pylist(), runs["tcp.initial_cwnd"].to_pylist())) == [
        ("1..3", 4), ("1..3", 10), ("1..5", 4), ("1..5", 10)]
    bad = tmp_path / "bad.toml"
    for text, message in [('[zip]\n"a.b" = [1, 2]\n"c.d" = [1]\n', "zip: all lists must have the same length"),
                          ('tables = "flows"\n', "tables: expected a list of table names, got 'flows'"),
                          ("replicas = 0\n", "replicas: expected a positive integer, got 0")]:
        bad.write_text('base = "base.toml"\n' + text)
        p = subprocess.run([sys.executable, "-m", "dcsim.cli", "sweep", str(bad)], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, p.stderr


def _many(tmp_path):
    text = SWEEP.replace('replicas = 2', 'replicas = 5').replace('tables = ["queries", "flows"]', 'tables = ["queries"]\nbatch = 2')
    path = write(tmp_path, text)
    (tmp_path / "base.toml").write_text(BASE.replace("rounds = 3", "rounds = 200"))  # runs long enough to kill mid-sweep
    return path


def test_dask_local_cluster_gives_the_same_rows_and_survives_a_killed_worker(tmp_path):
    import os
    import threading

    from distributed import Client, LocalCluster

    path = _many(tmp_path)
    sweep.run_sweep(path, tmp_path / "local", jobs=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        killed = threading.Event()
        stored_at_kill: list[int] = []

        def kill_one_worker_when_runs_appear() -> None:
            runs = tmp_path / "dask" / "runs"
            while not killed.is_set():
                if runs.exists() and any(runs.iterdir()):
                    pids = list(client.run(os.getpid).values())
                    stored_at_kill.append(len(list(runs.iterdir())))
                    os.kill(pids[0], 9)
                    killed.set()
                    return
                threading.Event().wait(0.002)

        t = threading.Thread(target=kill_one_worker_when_runs_appear, daemon=True)
        t.start()
        counts = sweep.run_sweep(path, tmp_path / "dask", progress=False, dask=client)
        killed.set()
        t.join()
    assert stored_at_kill and stored_at_kill[0] < 20, "a worker was killed in the middle of the sweep"
    assert counts["error"] == 0 and counts["ok"] + counts["skipped"] == 20
    local = {f.name: f.read_bytes() for f in (tmp_path / "local" / "queries").iterdir()}
    dask = {f.name: f.read_bytes() for f in (tmp_path / "dask" / "queries").iterdir()}
    assert dask == local, "identical rows on local processes and on Dask, none lost or doubled (and no temporary file left by the killed worker)"


def test_ctrl_c_then_resume_completes_without_duplicates(tmp_path):
    import signal
    import time

    path = _many(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "dcsim.cli", "sweep", str(path), "--out", str(out), "--jobs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # SIGINT is inherited as ignored when the tests run from a background job
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "runs").glob("*.parquet")) if (out / "runs").exists() else []) < 3:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    stored = len(list((out / "runs").glob("*.parquet")))
    assert 3 <= stored < 20, "interrupted in the middle"
    counts = sweep.run_sweep(path, out, jobs=2, progress=False)
    assert counts["skipped"] == stored and counts["ok"] == 20 - stored
    assert len(list((out / "runs").glob("*.parquet"))) == 20
    assert not [f for f in out.rglob(".*")], "no temporary files left"
    keys = sweep.load(out)["key"].to_pylist()
    assert len(keys) == len(set(keys)) == 20


def test_presets_are_a_sweep_axis(tmp_path):
    text = 'base = "base.toml"\ntables = ["ports"]\n[grid]\npreset = ["hull/TCP-Drop-tail", "hull/DCTCP-30K", "hull/nope"]\n'
    counts = sweep.run_sweep(write(tmp_path, text), tmp_path / "out", jobs=1, progress=False)
    assert counts == {"ok": 2, "error": 1, "skipped": 0}
    runs = sweep.load(tmp_path / "out")
    bad = runs.filter(pc.equal(runs["preset"], "hull/nope")).to_pylist()[0]
    assert bad["status"] == "error" and "unknown preset 'hull/nope'" in bad["error"]
    ports = sweep.load(tmp_path / "out", "ports")
    marks = {p: sum(ports.filter(pc.equal(ports["preset"], p))["ecn_marks"].to_pylist()) for p in ("hull/TCP-Drop-tail", "hull/DCTCP-30K")}
    assert marks["hull/TCP-Drop-tail"] == 0 and marks["hull/DCTCP-30K"] > 0
