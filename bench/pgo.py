"""Profile-guided optimisation (PGO) of dcsim's core, for long campaigns.

    python bench/pgo.py             # target/pgo/release/dcsim-rs, built with a profile
    python bench/pgo.py --install   # and reinstall the Python extension with it

The default build (`pip install -e .`) is not profile-guided: its numbers
are the ones docs/benchmarks.md reports first. This script

1. installs rustup's `llvm-tools` component if `llvm-profdata` is missing;
2. builds an instrumented `dcsim-rs` (-Cprofile-generate) in target/pgo-gen;
3. runs it on a training set that is deliberately not the benchmark set
   (a Reno dumbbell, a DCTCP incast, a leaf-spine with web-search flows, a
   VOQ incast with SACK losses), so a benchmark does not grade its own
   training;
4. merges the profile and builds `dcsim-rs` with it (-Cprofile-use) in
   target/pgo; with --install, `pip install -e .` with the same profile.

Results do not change: only the machine code's layout does (the golden
tests pass against a PGO build).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TRAINING = {
    "dumbbell-reno-16": {
        "run": {"duration": "100ms"},
        "topology": {"type": "dumbbell", "senders": 16, "receivers": 2, "access_rate": "10Gbps", "access_delay": "5us",
                     "bottleneck_rate": "10Gbps", "bottleneck_delay": "5us"},
        "switch": {"buffer": "200pkt"},
        "tcp": {"cc": "newreno", "min_rto": "1ms"},
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
    "leafspine-websearch": {
        "run": {"duration": "20ms"},
        "topology": {"type": "leafspine", "leaves": 4, "spines": 2, "hosts_per_leaf": 8, "host_rate": "10Gbps",
                     "uplink_rate": "40Gbps", "host_delay": "2us", "uplink_delay": "2us"},
        "switch": {"buffer": "300pkt", "aqm": {"type": "dctcp", "k": "65pkt"}},
        "tcp": {"cc": "dctcp", "min_rto": "1ms", "rtt_granularity": "1us"},
        "output": {"queue_sample_interval": "0s"},
        "workload": [{"type": "poisson", "size": {"cdf": "websearch"}, "load": 0.6, "load_reference": "host", "pattern": "all_to_all"}],
    },
    "voq-incast-sack": {
        "topology": {"type": "star", "hosts": 9, "link_rate": "10Gbps", "link_delay": "134ns"},
        "switch": {"voq": {"ingress_cells": 120}},
        "tcp": {"min_rto": "0s", "rto_formula": "bsd", "arrear": {"clock": "1ns"}, "bad_rexmit_undo": True},
        "output": {"queue_sample_interval": "0s"},
        "workload": [{"type": "incast", "querier": 0, "responders": "1..9", "query_size": "500B",
                      "response_size": "100KB", "rounds": 20}],
    },
}


def llvm_profdata() -> str:
    """The llvm-profdata that matches rustc's LLVM (rustup's llvm-tools)."""
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    found = glob.glob(f"{sysroot}/lib/rustlib/*/bin/llvm-profdata")
    if not found:
        print("[pgo] rustup component add llvm-tools", file=sys.stderr, flush=True)
        subprocess.run(["rustup", "component", "add", "llvm-tools"], check=True)
        found = glob.glob(f"{sysroot}/lib/rustlib/*/bin/llvm-profdata")
    if not found:
        raise SystemExit("pgo: llvm-profdata not found after installing llvm-tools")
    return found[0]


def cargo_build(target_dir: Path, rustflags: str) -> Path:
    env = os.environ | {"RUSTFLAGS": rustflags, "CARGO_TARGET_DIR": str(target_dir)}
    print(f"[pgo] cargo build --release -p dcsim-cli ({rustflags})", file=sys.stderr, flush=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "dcsim-cli"], cwd=ROOT, env=env, check=True)
    return target_dir / "release" / "dcsim-rs"


def training_files(folder: Path) -> list[Path]:
    """The training scenarios, resolved (named CDFs become points) for dcsim-rs."""
    from dcsim.scenario import resolve

    out = []
    for name, scenario in TRAINING.items():
        resolved, _ = resolve(scenario)
        path = folder / f"{name}.json"
        path.write_text(json.dumps(resolved))
        out.append(path)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--install", action="store_true", help="also pip install -e . with the profile")
    args = ap.parse_args()
    profdata = llvm_profdata()
    raw = ROOT / "target" / "pgo-profiles"
    shutil.rmtree(raw, ignore_errors=True)
    gen = cargo_build(ROOT / "target" / "pgo-gen", f"-Cprofile-generate={raw}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in training_files(Path(tmp)):
            print(f"[pgo] training on {path.stem}", file=sys.stderr, flush=True)
            subprocess.run([str(gen), str(path)], check=True, stdout=subprocess.DEVNULL)
    merged = ROOT / "target" / "pgo.profdata"
    subprocess.run([profdata, "merge", "-o", str(merged), str(raw)], check=True)
    use = f"-Cprofile-use={merged}"
    exe = cargo_build(ROOT / "target" / "pgo", use)
    print(f"[pgo] {exe}", flush=True)
    if args.install:
        env = os.environ | {"RUSTFLAGS": use, "CARGO_TARGET_DIR": str(ROOT / "target" / "pgo")}
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", str(ROOT)], env=env, check=True)
        print("[pgo] the Python extension is now the profile-guided build", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
