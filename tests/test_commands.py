"""Every subcommand of the installed `dcsim` command, on good input and on
the bad input a user can be expected to give: the exit status is 0, 2 (bad
input) or 1 (failure), the message is one line, and nothing ends in a
Python traceback.

`exercise_every_command` takes the command to run, so the wheel test runs
the same list against a wheel installed in a fresh venv."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

SWEEP = """
base = "my.toml"
tables = ["queries"]
[grid]
"switch.buffer" = ["100pkt", "300pkt"]
"""

BAD_TOML = "[topology\ntype = 'star'\n"


def exercise_every_command(dcsim: list[str], work: Path, env: dict[str, str] | None = None) -> list[str]:
    """Run each subcommand (help, good input, bad input) in `work`; return
    the failures, described."""
    failures: list[str] = []

    def run(args: list[str], status: int, expect: str = "", stdout_to: str | None = None) -> subprocess.CompletedProcess[str]:
        p = subprocess.run([*dcsim, *args], cwd=work, env=env, capture_output=True, text=True, timeout=900,
                           stdin=subprocess.DEVNULL)
        if stdout_to:
            (work / stdout_to).write_text(p.stdout)
        said = p.stdout + p.stderr
        what = f"dcsim {' '.join(args)}"
        if "Traceback" in said:
            failures.append(f"{what}: a traceback:\n{said[-2000:]}")
        elif p.returncode != status:
            failures.append(f"{what}: exit {p.returncode}, expected {status}:\n{said[-1000:]}")
        elif expect and expect not in said:
            failures.append(f"{what}: {expect!r} not in its output:\n{said[-1000:]}")
        elif status == 2 and len(_message_lines(p.stderr)) != 1:
            failures.append(f"{what}: bad input should get one line on stderr, got:\n{p.stderr}")
        return p

    p = run(["--help"], 0, "usage: dcsim")
    commands = [c.strip() for c in p.stdout.split("{", 1)[1].split("}", 1)[0].split(",")]
    for command in commands:
        run([command, "--help"], 0, f"usage: dcsim {command}")
    run(["--version"], 0, "dcsim ")
    run(["no-such-command"], 2, "invalid choice")

    # show-default, validate
    run(["show-default"], 0, "[topology]", stdout_to="my.toml")
    (work / "bad.toml").write_text(BAD_TOML)
    run(["validate", "my.toml"], 0, "valid")
    run(["validate", "my.toml", "--resolved"], 0, '"topology"')
    run(["validate", "missing.toml"], 2, "missing.toml")
    run(["validate", "bad.toml"], 2, "bad.toml")
    run(["presets"], 0, "hull/DCTCP-PQ950-Pacer")

    # run: good, overridden, with a preset; then bad keys, values, presets, outputs
    run(["run", "my.toml", "--out", "results", "--seed", "7", "--set", "tcp.min_rto=1ms", "--set", "run.duration=20ms"], 0, "results written")
    run(["run", "my.toml", "--out", "paced", "--preset", "hull/DCTCP-PQ950-Pacer", "--set", "run.duration=5ms", "--quiet"], 0)
    run(["run", "my.toml", "--out", "ns3-paced", "--preset", "stack/ns3", "--preset", "hull/DCTCP-PQ950-Pacer",
         "--set", "run.duration=5ms", "--quiet"], 0)
    resolved = json.loads((work / "ns3-paced" / "scenario.json").read_text())
    assert (resolved["tcp"]["rtt_clock"], resolved["tcp"]["min_rto"], resolved["switch"]["aqm"]["type"]) == ("ns3", "1s", "droptail")
    run(["run", "my.toml", "--set", "tcp.nope=1"], 2, "tcp.nope")
    run(["run", "my.toml", "--set", "switch.buffer=lots"], 2, "switch.buffer")
    run(["run", "my.toml", "--set", "oops"], 2, "key.path=value")
    run(["run", "my.toml", "--preset", "hull/nope"], 2, "hull/nope")
    run(["run", "missing.toml"], 2, "missing.toml")
    run(["run", "my.toml", "--out", "my.toml/inside"], 2, "cannot write there")
    # A run in which nothing completes: every reader copes with empty tables.
    run(["run", "my.toml", "--out", "empty", "--set", "run.duration=1us"], 0)

    # analyze, plot, report: on a run, on the empty run, on a directory that is not a run
    for out in ("results", "empty"):
        run(["analyze", out], 0, "FCT and slowdown")
        run(["analyze", out, "--json"], 0, "fct_by_size")
        run(["report", out], 0, "report written")
    run(["analyze", "results", "--bucket", "12"], 2, "LO:HI")
    run(["analyze", "results", "--deadline", "1e-3"], 0, "deadline")
    run(["analyze", "nowhere"], 2, "not a dcsim results directory")
    run(["report", "nowhere"], 2, "not a dcsim results directory")
    plot_help = run(["plot", "--help"], 0).stdout
    kinds = [k.strip() for k in plot_help.split("{", 1)[1].split("}", 1)[0].split(",")]
    for kind in kinds:
        p = subprocess.run([*dcsim, "plot", "results", kind], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        if "Traceback" in p.stderr or p.returncode not in (0, 2) or (p.returncode == 2 and "nothing to plot" not in p.stderr):
            failures.append(f"dcsim plot results {kind}: exit {p.returncode}: {p.stderr[-1000:]}")
        # The empty run's queues were sampled once, at time 0: a flat line.
        run(["plot", "empty", kind], 0 if kind == "queue" else 2, "" if kind == "queue" else "nothing to plot")
    run(["plot", "results", "fct_cdf", "--output", "fct.svg"], 0, "fct.svg")
    run(["plot", "results", "fct_cdf", "--output", "fct.txt"], 2, ".png, .svg or .pdf")
    run(["plot", "nowhere", "fct_cdf"], 2, "not a dcsim results directory")
    (work / "results" / "report.html").unlink()
    (work / "results" / "report.html").mkdir()  # the report cannot be written: a failure, said in one line
    run(["report", "results"], 1, "report.html")

    # sweep
    (work / "sweep.toml").write_text(SWEEP)
    run(["sweep", "sweep.toml", "--out", "sweep-out", "--jobs", "1"], 0, "2 runs ok")
    run(["sweep", "sweep.toml", "--out", "sweep-out", "--jobs", "1"], 0, "2 already stored")
    (work / "badsweep.toml").write_text('base = "my.toml"\n[grid]\n"switch.buffer" = "100pkt"\n')
    run(["sweep", "badsweep.toml"], 2, "grid")
    # A point the core rejects is stored as failed; the sweep goes on, then says so and exits 1.
    (work / "halfbad.toml").write_text('base = "my.toml"\n[grid]\n"switch.buffer" = ["100pkt", "lots"]\n"run.duration" = ["5ms"]\n')
    run(["sweep", "halfbad.toml", "--out", "halfbad", "--jobs", "1"], 1, 'invalid queue size "lots"')
    run(["sweep", "missing-sweep.toml"], 2, "missing-sweep.toml")
    run(["sweep", "sweep.toml", "--out", "my.toml/inside"], 2, "cannot write there")

    # reproduce
    run(["reproduce", "--list"], 0, "clues-rtt")
    run(["reproduce", "clues-rtt", "--quick", "--out", "repro"], 0, "rows hold")
    run(["reproduce", "nope"], 2, "unknown experiment")
    run(["reproduce", "clues-rtt", "--quick", "--out", "my.toml/inside"], 2, "cannot write there")

    # bench: one small scenario (test_cli checks --json; the whole set takes minutes)
    run(["bench", "--only", "incast-16"], 0, "incast-16")
    run(["bench", "--only", "nope"], 2, "nope")
    return failures


def _message_lines(stderr: str) -> list[str]:
    """stderr without argparse's usage lines (its own usage errors print
    the usage first, then one message line)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return [line for line in lines if not line.startswith(("usage:", " "))]


def installed_dcsim() -> list[str]:
    found = shutil.which("dcsim")
    assert found, "the `dcsim` command is not on PATH: install the package (README, command 1 or 2)"
    return [found]


def test_every_subcommand_without_a_traceback(tmp_path):
    failures = exercise_every_command(installed_dcsim(), tmp_path, env={**os.environ, "COLUMNS": "100"})
    assert not failures, "\n\n".join(failures)
