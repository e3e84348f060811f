"""dcsim's build backend: maturin, with a profile-guided release build.

`pip install .` (a wheel) builds the Rust core with profile-guided
optimisation (PGO), which takes 8-25 % off a run's wall time with identical
results (docs/benchmarks.md, 2026-11-23): only the machine code's layout
changes. Three steps:

1. instrumented (-Cprofile-generate), in target/pgo-ext-gen;
2. runs it on TRAINING, a set deliberately not the benchmark set (a Reno
   dumbbell, a DCTCP incast, a leaf-spine with heavy-tailed Poisson flows,
   a VOQ incast with SACK losses), so a benchmark does not grade its own
   training, and merges the profile with rustup's llvm-profdata;
3. builds the wheel with the profile (-Cprofile-use), in target/pgo-ext.
   The profile's file is named by its hash, so cargo, which tracks
   RUSTFLAGS but not the files they name, rebuilds when it changes.

If llvm-profdata cannot be had (`rustup component add llvm-tools` is tried)
or the instrumented build fails, the wheel is built without a profile and
the reason is printed. `DCSIM_PGO=0` skips PGO. Editable installs
(`pip install -e .`, the test command) are never profile-guided: they are
for changing the code, and a profile goes stale with every change.

The profile must come from the extension itself: the same crate built into
another artifact (the `dcsim-rs` runner) has other symbol hashes, so its
profile would not match (bench/pgo.py trains dcsim-rs on the same set for
the side-by-side benchmarks).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  the hooks dcsim does not change
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parent.parent

# A heavy-tailed flow-size table (bytes, cumulative probability) for the
# leaf-spine training run: training needs the code paths of short and long
# flows, not a particular published distribution.
HEAVY_TAIL = [[1460, 0.0], [2920, 0.2], [14600, 0.5], [146000, 0.7], [1460000, 0.9], [14600000, 1.0]]

# The benchmarks' tick clock (docs/benchmarks.md) and, in the incast, the
# default Linux clock: both paths are trained.
TRAINING = {
    "dumbbell-reno-16": {
        "run": {"duration": "100ms"},
        "topology": {"type": "dumbbell", "senders": 16, "receivers": 2, "access_rate": "10Gbps", "access_delay": "5us",
                     "bottleneck_rate": "10Gbps", "bottleneck_delay": "5us"},
        "switch": {"buffer": "200pkt"},
        "tcp": {"cc": "newreno", "min_rto": "1ms", "rtt_clock": "ticks", "rto_formula": "rfc6298"},
        "output": {"queue_sample_interval": "0s"},
        "workload": [{"type": "bulk", "src": "0..16", "dst": 16, "size": "inf"}],
    },
    "incast-dctcp-32": {
        "topology": {"type": "star", "hosts": 33, "link_rate": "10Gbps", "link_delay": "2us"},
        "switch": {"buffer": "120pkt", "aqm": {"type": "dctcp", "k": "30pkt"}},
        "tcp": {"cc": "dctcp", "min_rto": "1ms"},
        "output": {"queue_sample_interval": "0s"},
        "workload": [{"type": "incast", "querier": 0, "responders": "1..33", "query_size": "500B",
                      "response_size": "32KB", "rounds": 50}],
    },
    # 384 ports: large enough for the event loop's prefetching (world/mod.rs
    # PREFETCH_MIN_PORTS), which a profile without it would lay out as cold.
    "leafspine-heavytail": {
        "run": {"duration": "5ms"},
        "topology": {"type": "leafspine", "leaves": 8, "spines": 4, "hosts_per_leaf": 20, "host_rate": "10Gbps",
                     "uplink_rate": "40Gbps", "host_delay": "2us", "uplink_delay": "2us"},
        "switch": {"buffer": "300pkt", "aqm": {"type": "dctcp", "k": "65pkt"}},
        "tcp": {"cc": "dctcp", "min_rto": "1ms", "rtt_clock": "ticks", "rtt_granularity": "1us", "rto_formula": "rfc6298"},
        "output": {"queue_sample_interval": "0s"},
        "workload": [{"type": "poisson", "size": {"points": HEAVY_TAIL}, "load": 0.6, "load_reference": "host",
                      "pattern": "all_to_all"}],
    },
    "voq-incast-sack": {
        "topology": {"type": "star", "hosts": 9, "link_rate": "10Gbps", "link_delay": "134ns"},
        "switch": {"voq": {"ingress_cells": 120}},
        "tcp": {"min_rto": "0s", "rtt_clock": "ticks", "rto_formula": "bsd", "arrear": {"clock": "1ns"}, "bad_rexmit_undo": True},
        "output": {"queue_sample_interval": "0s"},
        "workload": [{"type": "incast", "querier": 0, "responders": "1..9", "query_size": "500B",
                      "response_size": "100KB", "rounds": 20}],
    },
}

# Runs the training scenarios on an extension module file, without the
# dcsim package around it (the build environment has no pyarrow).
TRAIN = """
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.ExtensionFileLoader("dcsim._core", sys.argv[1])
core = importlib.util.module_from_spec(importlib.util.spec_from_loader("dcsim._core", loader))
loader.exec_module(core)
for path in sys.argv[2:]:
    core.Simulation(open(path).read()).run()
"""


class PgoUnavailable(Exception):
    pass


def log(message: str) -> None:
    print(f"[dcsim build] {message}", file=sys.stderr, flush=True)


def llvm_profdata() -> str:
    """The llvm-profdata that matches rustc's LLVM (rustup's llvm-tools)."""
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise PgoUnavailable(f"rustc --print sysroot failed: {e}") from None
    pattern = f"{sysroot}/lib/rustlib/*/bin/llvm-profdata"
    if not glob.glob(pattern):
        log("rustup component add llvm-tools (for llvm-profdata)")
        try:
            # A bounded wait: offline, the install goes on without a profile.
            subprocess.run(["rustup", "component", "add", "llvm-tools"], check=True, stdout=sys.stderr, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            raise PgoUnavailable(f"llvm-profdata is missing and rustup could not add llvm-tools: {e}") from None
    found = glob.glob(pattern)
    if not found:
        raise PgoUnavailable(f"no llvm-profdata at {pattern} after adding llvm-tools")
    return found[0]


@contextlib.contextmanager
def cargo_env(rustflags: str, target_dir: Path, **extra: str):
    """os.environ with `rustflags` added to RUSTFLAGS, a target dir of its
    own (a change of RUSTFLAGS rebuilds everything in a target dir) and the
    `extra` variables."""
    saved = {k: os.environ.get(k) for k in ("RUSTFLAGS", "CARGO_TARGET_DIR", *extra)}
    os.environ["RUSTFLAGS"] = f"{saved['RUSTFLAGS'] or ''} {rustflags}".strip()
    os.environ["CARGO_TARGET_DIR"] = str(target_dir)
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def train_profile(config_settings) -> Path:
    """Steps 1 and 2: the merged profile of the extension on TRAINING."""
    profdata = llvm_profdata()
    target = ROOT / "target"
    raw = target / "pgo-ext-raw"
    shutil.rmtree(raw, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log("PGO 1/3: instrumented build (target/pgo-ext-gen)")
        with cargo_env(f"-Cprofile-generate={raw}", target / "pgo-ext-gen"):
            try:
                wheel = maturin.build_wheel(str(tmp), config_settings)
            except SystemExit:
                raise PgoUnavailable("the instrumented build failed") from None
        with zipfile.ZipFile(tmp / wheel) as z:
            name = next(n for n in z.namelist() if n.startswith("dcsim/_core") and n.endswith((".so", ".pyd")))
            module = Path(z.extract(name, tmp))
        log(f"PGO 2/3: training on {', '.join(TRAINING)}")
        run_step("training", [sys.executable, "-c", TRAIN, str(module), *map(str, training_files(tmp))])
    return merge_profile(profdata, raw, target / "pgo-ext")


def training_files(folder: Path) -> list[Path]:
    """TRAINING written to `folder`, one JSON scenario per file."""
    files = []
    for name, scenario in TRAINING.items():
        files.append(folder / f"{name}.json")
        files[-1].write_text(json.dumps(scenario))
    return files


def merge_profile(profdata: str, raw: Path, stem: Path) -> Path:
    """Merge the raw profiles into `stem`-<hash>.profdata (replacing older ones)."""
    merged = stem.with_suffix(".profdata")
    run_step("llvm-profdata merge", [profdata, "merge", "-o", str(merged), str(raw)])
    for old in stem.parent.glob(f"{stem.name}-{'?' * 16}.profdata"):
        old.unlink()
    named = stem.with_name(f"{stem.name}-{hashlib.sha256(merged.read_bytes()).hexdigest()[:16]}.profdata")
    merged.replace(named)
    return named


def run_step(what: str, cmd: list[str]) -> None:
    try:
        subprocess.run(cmd, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise PgoUnavailable(f"{what} failed: {e}") from None


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.environ.get("DCSIM_PGO", "1") == "0":
        log("DCSIM_PGO=0: building without a profile")
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    try:
        profile = train_profile(config_settings)
    except PgoUnavailable as e:
        log(f"building without a profile: {e}")
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    log("PGO 3/3: the wheel, built with the profile (target/pgo-ext)")
    # The extension reports its profile (dcsim._core.build_profile(), shown by `dcsim bench`).
    with cargo_env(f"-Cprofile-use={profile}", ROOT / "target" / "pgo-ext", DCSIM_PGO_PROFILE=profile.name):
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
