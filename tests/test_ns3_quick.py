"""Quick dcsim vs ns-3 3.44 comparison (validation/compare_ns3.py --quick).

Installs the PyPI package ns3==3.44.post0 if it is missing (skips only if that
fails or there is no g++), compiles the two ns-3 programs into
~/.cache/dcsim-ns3 and checks the agreement targets of docs/validation-ns3.md.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ensure_ns3() -> None:
    import importlib.metadata as md

    try:
        if md.version("ns3").startswith("3.44"):
            return
    except md.PackageNotFoundError:
        pass
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "ns3==3.44.post0"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot install ns3==3.44.post0 with pip: {p.stderr.strip()[-300:]}")


def _load_compare() -> Any:
    spec = importlib.util.spec_from_file_location("compare_ns3", ROOT / "validation" / "compare_ns3.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compare_ns3"] = mod  # dataclasses look the module up by name
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Any]]:
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to compile the ns-3 programs")
    _ensure_ns3()
    cmp = _load_compare()
    return {r["case"]: r for r in cmp.compare(quick=True)}


def _rel(r: dict[str, Any], key: str) -> float:
    a, b = r["dcsim"][key], r["ns3"][key]
    return (a - b) / b


def test_dumbbell_goodput_within_1_percent(results: dict[str, dict[str, Any]]) -> None:
    for case in ("dumbbell-dctcp-8", "dumbbell-reno-8"):
        assert abs(_rel(results[case], "goodput")) <= 0.01, case


def test_dumbbell_mean_queue_within_10_percent(results: dict[str, dict[str, Any]]) -> None:
    for case in ("dumbbell-dctcp-8", "dumbbell-reno-8"):
        assert abs(_rel(results[case], "queue_mean")) <= 0.10, case


def test_dctcp_marks_same_order(results: dict[str, dict[str, Any]]) -> None:
    # Not a target; documented: within 15 % (marks differ by ~8 %, see docs).
    assert abs(_rel(results["dumbbell-dctcp-8"], "marks_per_s")) <= 0.15


def test_incast_p50_within_5_percent(results: dict[str, dict[str, Any]]) -> None:
    r = results["incast-16 (minRTO 1ms)"]
    assert abs(_rel(r, "round_p50")) <= 0.05
    # The rounds that need no RTO agree even closer.
    assert abs(_rel(r, "round_p50_no_rto")) <= 0.02



def test_packaged_defaults_dctcp_within_targets(results: dict[str, dict[str, Any]]) -> None:
    # dcsim as shipped (timestamps, 200 ms min RTO, Linux's DCTCP floor, byte counting)
    # against the closest ns-3 configuration (docs/validation-ns3.md, "Packaged defaults").
    r = results["defaults: dumbbell-dctcp-8"]
    assert r["group"] == "defaults" and r["ns3_args"]["timestamps"] == "true"
    assert abs(_rel(r, "goodput")) <= 0.01
    assert abs(_rel(r, "queue_mean")) <= 0.10
