"""The `dcsim` command line (`dcsim --help`, `dcsim COMMAND --help`).

Exit status: 0 done; 2 bad input (a rejected scenario, a missing results
directory, an output directory that cannot be written), with a one-line
message naming what is wrong and nothing written; 1 a failure; 130
interrupted. No command ends in a traceback: an unexpected error is one
line saying so (`DCSIM_DEBUG=1` shows the traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
import tempfile
from pathlib import Path
from typing import Callable

from . import __version__, plot
from ._core import Cancelled, ScenarioError
from .results import Result
from .scenario import default_scenario_path, parse_cli_value, resolve
from .simulate import run


def _overrides(pairs: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ScenarioError(f"--set {pair!r}: expected key.path=value")
        out[key.strip()] = parse_cli_value(value.strip())
    return out


def _fail(message: str) -> int:
    print(f"dcsim: error: {message}", file=sys.stderr)
    return 2


class Unwritable(Exception):
    """An output directory that cannot be written (bad input: exit 2)."""


def _check_writable(out: str | Path, option: str = "--out") -> None:
    """Fail before any long work if `out` cannot be created and written."""
    out = Path(out)
    try:
        existing = next(p for p in [out, *out.parents] if p.exists())
        if existing != out and not existing.is_dir():
            raise NotADirectoryError(f"{existing} is not a directory")
        if existing == out and not out.is_dir():
            raise NotADirectoryError("it exists and is not a directory")
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        raise Unwritable(f"{option} {str(out)!r}: cannot write there: {e.strerror or e}") from None


def cmd_run(args: argparse.Namespace) -> int:
    scenario = Path(args.scenario) if args.scenario else default_scenario_path()
    _check_writable(args.out)
    try:
        overrides = _overrides(args.set)
        result = run(scenario, seed=args.seed, overrides=overrides, preset=args.preset, progress=not args.quiet, threads=args.threads)
    except ScenarioError as e:
        return _fail(str(e))
    except (Cancelled, KeyboardInterrupt):
        print("dcsim: interrupted; nothing was written", file=sys.stderr)
        return 130
    out = result.write(args.out)
    if not args.quiet:
        print(result.summary_text())
        print(f"results written to {out}/")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        resolved, digest = resolve(Path(args.scenario))
    except ScenarioError as e:
        return _fail(str(e))
    print(f"{args.scenario}: valid (scenario hash {digest})")
    if args.resolved:
        print(json.dumps(resolved, indent=2, sort_keys=True))
    return 0


def cmd_presets(_: argparse.Namespace) -> int:
    from . import presets

    for name in presets.available():
        print(name)
        for key, value in presets.overrides(name).items():
            print(f"    {key} = {json.dumps(value)}")
    return 0


def cmd_show_default(_: argparse.Namespace) -> int:
    sys.stdout.write(default_scenario_path().read_text(encoding="utf-8"))
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from .analyze import main as analyze_main

    return analyze_main(Path(args.out_dir), args.bucket, args.deadline, args.json)


def cmd_plot(args: argparse.Namespace) -> int:
    output = Path(args.output or Path(args.out_dir) / f"{args.kind}.png")
    if output.suffix not in (".png", ".svg", ".pdf"):
        return _fail(f"--output {str(output)!r}: expected a .png, .svg or .pdf file")
    _check_writable(output.parent, "--output")
    try:
        result = Result.load(Path(args.out_dir))
        fig = plot.KINDS[args.kind](result)
    except FileNotFoundError as e:
        return _fail(str(e))
    except plot.NoData as e:
        return _fail(f"nothing to plot for {args.kind}: {e}")
    path = plot.save(fig, output)
    print(f"figure written to {path}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import main as report_main

    return report_main(Path(args.out_dir))


def _whole(what: str, lo: int, hi: int) -> Callable[[str], int]:
    """An argument type: a whole number of `what` from `lo` to `hi`."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = lo - 1
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of {what} from {lo:,} to {hi:,}")
        return n

    return parse


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import main as reproduce_main

    if (args.name or args.all) and not args.list:
        _check_writable(args.out)
    if args.all and args.variant:
        return _fail("reproduce: --all runs every variant already; --variant goes with an experiment name")
    return reproduce_main(args.name, Path(args.out), args.quick, args.list, args.seeds, args.all, args.variant)


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import run_sweep

    _check_writable(args.out)
    try:
        dask = None
        if args.dask_slurm is not None:
            try:
                from dask_jobqueue import SLURMCluster  # type: ignore[import-untyped]
                from distributed import Client
            except ImportError:
                return _fail("--dask-slurm needs dask-jobqueue: pip install 'dcsim[dask]'")

            opts = dict(kv.split("=", 1) for kv in args.dask_slurm)
            jobs_n = int(opts.pop("jobs", "1"))
            cluster = SLURMCluster(**opts)
            cluster.scale(jobs=jobs_n)
            dask = Client(cluster)
        elif args.dask:
            dask = args.dask
        counts = run_sweep(args.sweep, args.out, jobs=args.jobs, progress=not args.quiet, dask=dask)
    except ScenarioError as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        print("dcsim: interrupted; finished runs are stored, rerun to resume", file=sys.stderr)
        return 130
    if not args.quiet:
        print(f"{counts['ok']} runs ok, {counts['error']} failed, {counts['skipped']} already stored; results in {args.out}/")
    if counts["error"]:
        from .sweep import load

        runs = load(args.out).to_pylist()
        first = next(r for r in runs if r["status"] == "error")
        print(f"dcsim: {counts['error']} of {counts['ok'] + counts['error']} runs failed (status \"error\" in {args.out}/runs/), the first with: {first['error']}", file=sys.stderr)
        return 1
    return 0


def _thread_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        counts = []
    if not counts or any(not 1 <= n <= 64 for n in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: give thread counts from 1 to 64, separated by commas (e.g. 1,2)")
    return counts


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import main as bench_main
    from .bench import soak

    if args.soak:
        if args.only or args.threads or args.repeat != 1:
            return _fail("--soak runs dumbbell-dctcp-8 once, on one thread: it takes no --only, --threads or --repeat")
        return soak(args.soak, json_lines=args.json)
    return bench_main(json_lines=args.json, only=args.only, threads=args.threads, repeat=args.repeat)


def main(argv: list[str] | None = None) -> int:
    # Units (µs) and port names (→) are not ASCII: on a terminal that cannot
    # show them, a "?" rather than a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    # A large run's warning is one line, as errors are.
    warnings.formatwarning = lambda message, *_args, **_kwargs: f"dcsim: warning: {message}\n"
    parser = argparse.ArgumentParser(prog="dcsim", description="Packet-level datacenter network simulator.")
    parser.add_argument("--version", action="version", version=f"dcsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        # `help` is shown in the list of commands, `description` by the command's own --help.
        return sub.add_parser(name, help=help, description=help)

    p = command("run", help="run a scenario (default: the packaged default scenario)")
    p.add_argument("scenario", nargs="?", help="scenario TOML file")
    p.add_argument("--out", default="dcsim-out", help="output directory (default: ./dcsim-out)")
    p.add_argument("--seed", type=int, help="master seed (overrides run.seed)")
    p.add_argument("--preset", action="append", metavar="NAME",
                   help="apply a named bundle of overrides first, e.g. stack/linux or hull/DCTCP-30K; repeat to apply several in order (see `dcsim presets`)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a key, e.g. --set tcp.min_rto=1ms")
    p.add_argument("--threads", type=_whole("threads", 1, 64), metavar="N",
                   help="split the run over N threads; needs run.event_order = \"canonical\" (same results for every N)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=cmd_run)

    p = command("validate", help="check a scenario without running it")
    p.add_argument("scenario")
    p.add_argument("--resolved", action="store_true", help="print the resolved scenario (all defaults filled in)")
    p.set_defaults(func=cmd_validate)

    p = command("presets", help="list the presets (named bundles of overrides) for `run --preset`")
    p.set_defaults(func=cmd_presets)

    p = command("show-default", help="print the default scenario")
    p.set_defaults(func=cmd_show_default)

    p = command("analyze", help="FCT and slowdown by size, query rounds, fairness and the busiest ports of a results directory")
    p.add_argument("out_dir", help="a directory written by `dcsim run`")
    p.add_argument("--bucket", action="append", default=[], metavar="LO:HI", help="size bucket in bytes, e.g. 0:100e3 (repeatable; default (0,100KB], (100KB,10MB], >10MB)")
    p.add_argument("--deadline", type=float, help="query deadline in seconds: count rounds that miss it")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=cmd_analyze)

    p = command("plot", help="draw a figure from a results directory")
    p.add_argument("out_dir", help="a directory written by `dcsim run`")
    p.add_argument("kind", choices=list(plot.KINDS), help="the figure")
    p.add_argument("--output", help="file to write (.png, .svg or .pdf; default OUT_DIR/KIND.png)")
    p.set_defaults(func=cmd_plot)

    p = command("report", help="write OUT_DIR/report.html, a self-contained page of a results directory")
    p.add_argument("out_dir", help="a directory written by `dcsim run`")
    p.set_defaults(func=cmd_report)

    p = command("reproduce", help="run a seed paper's experiment and compare with the paper")
    p.add_argument("name", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.add_argument("--all", action="store_true",
                   help="run every experiment and then every variant (resumable), then write OUT/summary.csv and OUT/index.html")
    p.add_argument("--variant", metavar="NAME",
                   help="run one of the experiment's named variants (see --list): one modelled difference set otherwise")
    p.add_argument("--quick", action="store_true", help="a reduced version (for CI)")
    p.add_argument("--out", default="dcsim-reproduce", help="output directory (default: ./dcsim-reproduce)")
    p.add_argument("--seeds", type=_whole("seeds", 1, 100), metavar="N",
                   help="replicas, each with its own seed; verdicts judge a 95 %% interval over them (default: the experiment's, 5 unless its file asks for more)")
    p.set_defaults(func=cmd_reproduce)

    p = command("sweep", help="run a parameter sweep (resumable)")
    p.add_argument("sweep", help="sweep TOML file")
    p.add_argument("--out", default="dcsim-sweep", help="output directory (default: ./dcsim-sweep)")
    p.add_argument("--jobs", type=_whole("worker processes", 1, 1024), help="worker processes (default: all cores)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--dask-slurm", nargs="*", metavar="KEY=VALUE",
                   help="start Dask workers through SLURM (dask-jobqueue SLURMCluster options, e.g. cores=8 memory=16GB queue=normal walltime=01:00:00 jobs=4)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_sweep)

    p = command("bench", help="run the fixed benchmark scenarios")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="run only these scenarios")
    p.add_argument("--threads", type=_thread_counts, metavar="N[,N...]",
                   help="run each scenario with run.event_order = \"canonical\" on each of these thread counts, one after another (e.g. 1,2)")
    p.add_argument("--repeat", type=_whole("repetitions", 1, 100), default=1, metavar="R", help="run the whole set R times, alternating (default 1)")
    p.add_argument("--soak", type=_whole("events", 1, 10**15), metavar="EVENTS", help="instead: run one long simulation of about EVENTS events, reporting rate and RSS as it goes")
    p.set_defaults(func=cmd_bench)

    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except Unwritable as e:
        return _fail(str(e))
    except ScenarioError as e:
        return _fail(str(e))
    except (KeyboardInterrupt, Cancelled):
        print("dcsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `dcsim analyze out | head`: the reader left; not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"dcsim: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except Exception as e:
        if os.environ.get("DCSIM_DEBUG"):
            raise
        print(f"dcsim: internal error: {type(e).__name__}: {e} (a bug in dcsim; DCSIM_DEBUG=1 shows where)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
