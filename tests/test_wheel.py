"""The package as README command 1 installs it: a wheel, built from this
tree, installed with its declared dependencies into a fresh virtual
environment, then every subcommand run from a PATH without cargo.

The editable install the other tests use reads python/ from the tree, so it
cannot notice a template, data file or dependency the wheel leaves out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from test_commands import exercise_every_command

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, args))} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel of this tree. Built with the optimised-but-quick `ci` profile
    and without PGO: what is checked is the package's contents, not its speed."""
    out = tmp_path_factory.mktemp("wheel")
    env = {**os.environ, "DCSIM_PGO": "0", "MATURIN_PEP517_ARGS": "--profile ci"}
    _run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-w", str(out)],
         env=env, timeout=1800)
    (built,) = out.glob("dcsim-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and its dependencies; returns its bin/."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheel)], timeout=1800)
    return bin_dir


def _user_env(bin_dir: Path, home: Path) -> dict[str, str]:
    """A shell a new user might have: the venv's bin/ first, no cargo or
    rustc on PATH, no PYTHONPATH pointing into the tree."""
    rust = {str(Path(p).parent) for p in (shutil.which("cargo"), shutil.which("rustc")) if p}
    path = [str(bin_dir)] + [d for d in os.environ["PATH"].split(os.pathsep) if d not in rust and "cargo" not in d]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CARGO", "RUST"))}
    return {**env, "PATH": os.pathsep.join(path), "HOME": str(home), "COLUMNS": "100"}


def test_the_wheel_carries_the_templates_and_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("dcsim/_core") for n in names)
    assert "dcsim/templates/run.html.j2" in names and "dcsim/templates/reproduction.html.j2" in names
    assert any(n.startswith("dcsim/data/workloads/") for n in names)
    assert any(n.startswith("dcsim/experiments/") and n.endswith("experiment.toml") for n in names)
    # One wheel for every CPython from 3.11 on (PyO3's stable ABI).
    assert "-cp311-abi3-" in wheel.name, wheel.name


def test_every_subcommand_of_the_installed_wheel(installed, tmp_path):
    env = _user_env(installed, tmp_path / "home")
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    dcsim = [str(installed / "dcsim")]
    assert shutil.which("cargo", path=env["PATH"]) is None
    # The installed package, not the tree's python/.
    where = _run([str(installed / "python"), "-c", "import dcsim; print(dcsim.__file__)"], cwd=work, env=env).stdout
    assert str(installed.parent) in where, where
    # README command 1's main job, then every subcommand.
    p = _run(dcsim + ["run"], cwd=work, env=env, timeout=900)
    assert "results written" in p.stdout + p.stderr
    failures = exercise_every_command(dcsim, work, env)
    assert not failures, "\n\n".join(failures)
