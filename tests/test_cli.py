"""The command line: run, validate, show-default, bench, --version; exit
codes, atomic outputs and the progress bar."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pyarrow.parquet as pq

import dcsim

DCSIM = [sys.executable, "-m", "dcsim.cli"]

SMALL = """
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "2us"
[[workload]]
type = "incast"
querier = 0
responders = [1, 2]
response_size = "50KB"
rounds = 3
"""

LONG = """
[run]
duration = "20s"
[topology]
type = "dumbbell"
senders = 32
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "2us"
[output]
queue_sample_interval = "0s"
[[workload]]
type = "bulk"
src = "0..32"
dst = 32
size = "inf"
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DCSIM, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_run_writes_tables_and_summary(tmp_path):
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("run", "s.toml", "--out", "res", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == ""
    out = tmp_path / "res"
    assert sorted(f.name for f in out.iterdir()) == sorted(
        ["flows.parquet", "queries.parquet", "queues.parquet", "ports.parquet", "tcp_trace.parquet", "captures.parquet", "pacer.parquet", "voq.parquet", "pfc.parquet", "summary.json", "scenario.json"]
    )
    assert pq.read_table(out / "queries.parquet").num_rows == 3
    summary = json.loads((out / "summary.json").read_text())
    for key in ("seed", "scenario_hash", "dcsim_version", "events", "sim_seconds", "wall_seconds", "events_per_s"):
        assert key in summary
    # No temporary directories are left behind.
    assert [f.name for f in tmp_path.iterdir() if f.name.startswith(".")] == []


def test_run_prints_a_summary_and_honours_seed_and_set(tmp_path):
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("run", "s.toml", "--out", "res", "--seed", "42", "--set", "tcp.initial_cwnd=4", "--set", "switch.buffer=50pkt", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "incast rounds" in p.stdout and "results written to" in p.stdout
    scenario = json.loads((tmp_path / "res" / "scenario.json").read_text())
    assert scenario["run"]["seed"] == 42
    assert scenario["tcp"]["initial_cwnd"] == 4
    assert scenario["switch"]["buffer"] == "50pkt"


def test_bad_scenario_exits_2_names_the_key_and_writes_nothing(tmp_path):
    (tmp_path / "bad.toml").write_text(SMALL.replace('"10Gbps"', '"10"'))
    for args in (["run", "bad.toml", "--out", "res"], ["validate", "bad.toml"]):
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2
        assert "topology.link_rate" in p.stderr and '"10"' in p.stderr and "Gbps" in p.stderr
        assert "Traceback" not in p.stderr
        assert not (tmp_path / "res").exists()
    (tmp_path / "ok.toml").write_text(SMALL)
    for bad_set in ("tcp.nope=1", "workload[0].responders=[0]", "switch.buffer=0pkt", "nonsense"):
        p = cli("run", "ok.toml", "--out", "res", "--set", bad_set, cwd=tmp_path)
        assert p.returncode == 2, (bad_set, p.stderr)
        assert "dcsim: error:" in p.stderr and "Traceback" not in p.stderr
        assert not (tmp_path / "res").exists()
    p = cli("run", "missing.toml", cwd=tmp_path)
    assert p.returncode == 2 and "cannot read" in p.stderr
    (tmp_path / "broken.toml").write_text("[topology\n")
    p = cli("validate", "broken.toml", cwd=tmp_path)
    assert p.returncode == 2 and "not valid TOML" in p.stderr
    p = cli("run", "--bogus-flag", cwd=tmp_path)
    assert p.returncode == 2


def test_bad_counts_and_ranges_exit_2_before_any_work(tmp_path):
    (tmp_path / "ok.toml").write_text(SMALL)
    (tmp_path / "sweep.toml").write_text('base = "ok.toml"\n[grid]\n"run.seed" = [1, 2]\n')
    cases = [
        (["run", "ok.toml", "--out", "res", "--threads", "1000"], "--threads: '1000': expected a whole number of threads from 1 to 64"),
        (["sweep", "sweep.toml", "--out", "res", "--jobs", "-1"], "--jobs: '-1': expected a whole number of worker processes from 1 to 1,024"),
        (["sweep", "sweep.toml", "--out", "res", "--jobs", "0"], "--jobs: '0': expected a whole number"),
        (["bench", "--repeat", "0"], "--repeat: '0': expected a whole number of repetitions from 1 to 100"),
        (["bench", "--soak", "-5"], "--soak: '-5': expected a whole number of events from 1 to"),
        (["bench", "--soak", "5", "--only", "incast-16"], "--soak runs dumbbell-dctcp-8 once, on one thread: it takes no --only"),
    ]
    for args, message in cases:
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
        assert p.stdout == "" and not (tmp_path / "res").exists(), args
    assert cli("run", "ok.toml", "--out", "res", "--quiet", cwd=tmp_path).returncode == 0
    for args, message in [(["analyze", "res", "--deadline", "-1"], "--deadline -1.0: expected a time in seconds above 0"),
                          (["analyze", "res", "--bucket", "5:1"], "--bucket '5:1': expected LO:HI in bytes with 0 <= LO < HI"),
                          (["plot", "res", "utilisation", "--output", "ok.toml/u.png"], "--output 'ok.toml': cannot write there")]:
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2 and message in p.stderr and p.stdout == "", (args, p.stderr)


def test_validate_show_default_and_version(tmp_path):
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("validate", "s.toml", "--resolved", cwd=tmp_path)
    assert p.returncode == 0 and "valid (scenario hash" in p.stdout
    assert '"initial_cwnd": 10' in p.stdout
    p = cli("show-default")
    assert p.returncode == 0
    default = tomllib.loads(p.stdout)
    assert default["topology"]["link_rate"] == "10Gbps" and default["tcp"]["cc"] == "dctcp"
    assert {w["type"] for w in default["workload"]} == {"bulk", "incast"}
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"dcsim {dcsim.__version__}"


def test_default_run_is_the_main_job(tmp_path):
    p = cli("run", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "dcsim-out"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["name"] == "default" and summary["stopped_by"] == "duration"
    assert summary["queries_completed"] > 50
    assert pq.read_table(out / "queues.parquet").num_rows > 1000


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path):
    (tmp_path / "long.toml").write_text(LONG.replace("20s", "1500ms"))
    p = cli("run", "long.toml", "--out", "res", cwd=tmp_path)
    assert p.returncode == 0
    assert "events/s" not in p.stderr and p.stderr == ""


def test_progress_bar_on_a_terminal_and_ctrl_c_leaves_nothing(tmp_path):
    (tmp_path / "long.toml").write_text(LONG)
    pid, fd = pty.fork()
    if pid == 0:  # child: stderr is the pty
        # A test command started from a background job inherits SIGINT as
        # ignored; Python keeps it ignored, so restore the default first.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.chdir(tmp_path)
        os.execv(sys.executable, [*DCSIM, "run", "long.toml", "--out", "res"])
    output = b""
    deadline = time.monotonic() + 60
    while b"M events/s" not in output and time.monotonic() < deadline:
        try:
            output += os.read(fd, 4096)
        except OSError:
            break
    assert b"M events/s" in output and b"sim " in output and b"ETA" in output, output
    os.kill(pid, signal.SIGINT)
    try:
        while True:
            output += os.read(fd, 4096)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 130
    assert b"interrupted; nothing was written" in output
    assert not (tmp_path / "res").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "long.toml"]


def test_threads_split_a_canonical_run_and_give_the_same_tables(tmp_path):
    (tmp_path / "s.toml").write_text(SMALL.replace("[topology]", "[run]\nevent_order = \"canonical\"\n[topology]"))
    tables = {}
    for threads in ("1", "2"):
        p = cli("run", "s.toml", "--out", f"t{threads}", "--quiet", "--threads", threads, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        out = tmp_path / f"t{threads}"
        assert json.loads((out / "summary.json").read_text())["threads"] == int(threads)
        tables[threads] = {name: pq.read_table(out / f"{name}.parquet") for name in ("flows", "queries", "ports", "queues")}
    assert tables["1"]["queries"].num_rows == 3
    for name, table in tables["1"].items():
        assert table.equals(tables["2"][name]), name
    # The scheduled order cannot split, and a thread count is checked: exit 2, nothing written.
    (tmp_path / "plain.toml").write_text(SMALL)
    for args, words in ((["plain.toml", "--threads", "2"], 'run.event_order = "canonical"'), (["s.toml", "--threads", "0"], "threads from 1 to 64")):
        p = cli("run", *args, "--out", "bad", cwd=tmp_path)
        assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr
        assert not (tmp_path / "bad").exists()
    p = cli("bench", "--threads", "two", cwd=tmp_path)
    assert p.returncode == 2 and "thread counts from 1 to 64" in p.stderr


def test_bench_json_lines():
    p = cli("bench", "--json", "--only", "incast-64")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == 1
    r = rows[0]
    assert r["name"] == "incast-64"
    assert {"name", "wall_s", "events", "events_per_s", "peak_rss_mb"} <= set(r)
    assert r["events"] > 100_000 and r["peak_rss_mb"] > 1
    # A plain build (the editable install of the test command), or the
    # profile a `pip install .` wheel was built with.
    assert r["build"] == "plain" or re.fullmatch(r"pgo pgo-ext-[0-9a-f]{16}\.profdata", r["build"])
    # With thread counts: one row per count, the same events.
    p = cli("bench", "--json", "--only", "incast-16", "--threads", "1,2")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [(r["name"], r["threads"]) for r in rows] == [("incast-16@1t", 1), ("incast-16@2t", 2)]
    assert rows[0]["events"] == rows[1]["events"] > 10_000


def test_a_terminal_that_cannot_show_units_gets_a_question_mark_not_a_crash(tmp_path, star):
    import dcsim

    dcsim.run(star, out=tmp_path / "res")
    p = subprocess.run([*DCSIM, "analyze", str(tmp_path / "res")], capture_output=True,
                       env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert p.returncode == 0, p.stderr
    assert b"FCT and slowdown" in p.stdout and b"?" in p.stdout
