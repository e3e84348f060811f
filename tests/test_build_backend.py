"""The build backend (backend/dcsim_build.py): its PGO training set is made
of valid scenarios, and a wheel still builds, without a profile, when PGO
cannot be had."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

import dcsim

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "backend"))
import dcsim_build  # noqa: E402


@pytest.mark.parametrize("name", sorted(dcsim_build.TRAINING))
def test_training_scenarios_are_valid_and_run(name):
    # A training scenario the core rejected would silently leave the wheel
    # without a profile; each must also carry traffic to train on.
    scenario = dict(dcsim_build.TRAINING[name])
    scenario["run"] = {**scenario.get("run", {}), "duration": "1ms"}
    r = dcsim.run(scenario)
    assert r.summary["packets_created"] > 0


def test_a_wheel_builds_without_a_profile_when_pgo_is_unavailable(monkeypatch):
    calls = []

    def fake_build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
        calls.append(os.environ.get("RUSTFLAGS", ""))
        return "dcsim.whl"

    def no_profdata():
        raise dcsim_build.PgoUnavailable("no llvm-profdata here")

    monkeypatch.setattr(dcsim_build.maturin, "build_wheel", fake_build_wheel)
    monkeypatch.setattr(dcsim_build, "llvm_profdata", no_profdata)
    monkeypatch.delenv("DCSIM_PGO", raising=False)
    monkeypatch.setenv("RUSTFLAGS", "-Cdebuginfo=1")
    assert dcsim_build.build_wheel("unused") == "dcsim.whl"
    assert calls == ["-Cdebuginfo=1"]


def test_the_profiled_build_has_its_own_target_dir_tells_the_extension_its_profile_and_restores_the_env(monkeypatch, tmp_path):
    seen = []

    def fake_build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
        seen.append((os.environ["RUSTFLAGS"], os.environ["CARGO_TARGET_DIR"], os.environ["DCSIM_PGO_PROFILE"]))
        return "dcsim.whl"

    profile = tmp_path / "pgo-ext-0123.profdata"
    monkeypatch.setattr(dcsim_build.maturin, "build_wheel", fake_build_wheel)
    monkeypatch.setattr(dcsim_build, "train_profile", lambda config_settings: profile)
    monkeypatch.delenv("DCSIM_PGO", raising=False)
    monkeypatch.delenv("RUSTFLAGS", raising=False)
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    monkeypatch.delenv("DCSIM_PGO_PROFILE", raising=False)
    dcsim_build.build_wheel("unused")
    assert seen == [(f"-Cprofile-use={profile}", str(dcsim_build.ROOT / "target" / "pgo-ext"), profile.name)]
    assert not {"RUSTFLAGS", "CARGO_TARGET_DIR", "DCSIM_PGO_PROFILE"} & set(os.environ)


def test_dcsim_pgo_0_skips_training(monkeypatch):
    def must_not_train(config_settings):
        raise AssertionError("trained although DCSIM_PGO=0")

    monkeypatch.setattr(dcsim_build.maturin, "build_wheel", lambda *a, **k: "dcsim.whl")
    monkeypatch.setattr(dcsim_build, "train_profile", must_not_train)
    monkeypatch.setenv("DCSIM_PGO", "0")
    assert dcsim_build.build_wheel("unused") == "dcsim.whl"


def test_a_failed_instrumented_build_falls_back_to_a_plain_one(monkeypatch):
    calls = []

    def fake_build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
        calls.append(os.environ.get("RUSTFLAGS", ""))
        if len(calls) == 1:
            raise SystemExit(1)  # what maturin's hook does when cargo fails
        return "dcsim.whl"

    monkeypatch.setattr(dcsim_build.maturin, "build_wheel", fake_build_wheel)
    monkeypatch.setattr(dcsim_build, "llvm_profdata", lambda: "llvm-profdata")
    monkeypatch.delenv("DCSIM_PGO", raising=False)
    monkeypatch.delenv("RUSTFLAGS", raising=False)
    assert dcsim_build.build_wheel("unused") == "dcsim.whl"
    assert calls[0].startswith("-Cprofile-generate=") and calls[1] == ""


def test_a_merged_profile_is_named_by_its_hash_and_replaces_older_ones(monkeypatch, tmp_path):
    # cargo tracks RUSTFLAGS, not the file they name: a new profile needs a new name.
    def fake_merge(what, cmd):
        Path(cmd[cmd.index("-o") + 1]).write_bytes(b"profile v2")

    monkeypatch.setattr(dcsim_build, "run_step", fake_merge)
    (tmp_path / "pgo-0123456789abcdef.profdata").write_bytes(b"profile v1")
    (tmp_path / "pgo-ext-0123456789abcdef.profdata").write_bytes(b"another stem's")
    named = dcsim_build.merge_profile("llvm-profdata", tmp_path / "raw", tmp_path / "pgo")
    digest = hashlib.sha256(b"profile v2").hexdigest()[:16]
    assert named == tmp_path / f"pgo-{digest}.profdata" and named.read_bytes() == b"profile v2"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([named.name, "pgo-ext-0123456789abcdef.profdata"])
