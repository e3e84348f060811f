"""The catalogue of bad scenarios (tests/bad_scenarios/*.toml): each file's
first line gives the exact error it must produce. `dcsim run` must exit 2,
print that error, and write nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dcsim

HERE = Path(__file__).parent / "bad_scenarios"
FILES = sorted(HERE.glob("*.toml"))


def expected(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# error: "), f"{path.name}: first line must be '# error: <message>'"
    return first[len("# error: "):].replace("{dir}", str(HERE.resolve()))


def test_the_catalogue_is_large_enough():
    assert len(FILES) >= 50


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_bad_scenario_is_rejected_with_its_message(path, tmp_path):
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "run", path.name, "--out", str(out)],
                       cwd=HERE, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == f"dcsim: error: {expected(path)}"
    assert p.stdout == ""
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_the_python_api_raises_the_same_message(path):
    if path.stem == "not_toml":
        pytest.skip("the CLI names the file as given; the API gets an absolute path")
    with pytest.raises(dcsim.ScenarioError) as e:
        dcsim.run(path)
    assert str(e.value) == expected(path)
