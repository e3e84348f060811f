"""Profile-guided optimisation (PGO) of the pure-Rust runner `dcsim-rs`,
for the side-by-side benchmarks (bench/compare_ns3.py times it by default).

    python bench/pgo.py             # target/pgo/release/dcsim-rs, built with a profile

The Python extension that `pip install .` builds is profile-guided already
(backend/dcsim_build.py). A profile only fits the artifact it was measured
on (the same crate built into another artifact has other symbol hashes), so
this script trains `dcsim-rs` itself, on the same training set, which is
deliberately not the benchmark set:

1. builds an instrumented `dcsim-rs` (-Cprofile-generate) in target/pgo-gen;
2. runs it on backend/dcsim_build.py's TRAINING;
3. merges the profile (named by its hash, so that cargo rebuilds when it
   changes) and builds `dcsim-rs` with it (-Cprofile-use) in target/pgo.

Results do not change: only the machine code's layout does (the golden
tests pass against a PGO build).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "backend"))
from dcsim_build import PgoUnavailable, cargo_env, llvm_profdata, merge_profile, training_files  # noqa: E402


def cargo_build(target_dir: Path, rustflags: str) -> Path:
    print(f"[pgo] cargo build --release -p dcsim-cli ({rustflags})", file=sys.stderr, flush=True)
    with cargo_env(rustflags, target_dir):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "dcsim-cli"], cwd=ROOT, check=True)
    return target_dir / "release" / "dcsim-rs"


def build() -> Path:
    """Steps 1-3; the profile-guided dcsim-rs. Raises PgoUnavailable."""
    profdata = llvm_profdata()
    raw = ROOT / "target" / "pgo-profiles"
    shutil.rmtree(raw, ignore_errors=True)
    gen = cargo_build(ROOT / "target" / "pgo-gen", f"-Cprofile-generate={raw}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in training_files(Path(tmp)):
            print(f"[pgo] training on {path.stem}", file=sys.stderr, flush=True)
            subprocess.run([str(gen), str(path)], check=True, stdout=subprocess.DEVNULL)
    merged = merge_profile(profdata, raw, ROOT / "target" / "pgo")
    return cargo_build(ROOT / "target" / "pgo", f"-Cprofile-use={merged}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args()
    try:
        exe = build()
    except PgoUnavailable as e:
        raise SystemExit(f"pgo: {e}") from None
    print(f"[pgo] {exe}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
