"""Reproductions of the seed papers' experiments (`dcsim reproduce`).

Each experiment is a folder here: experiment.toml (the paper, the reference
numbers and claims with their tolerances) and its scenario files, plus a
runner function in this package that returns measured rows
{metric, condition..., value}.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Callable

from .clues import RUNNERS as _CLUES
from .ecnsharp import RUNNERS as _ECNSHARP
from .homa import RUNNERS as _HOMA
from .hscc import RUNNERS as _HSCC
from .hull import RUNNERS as _HULL
from .ndp import RUNNERS as _NDP
from .rdma import RUNNERS as _RDMA
from .swift import RUNNERS as _SWIFT

ROOT = Path(str(resources.files("dcsim") / "experiments"))

RUNNERS: dict[str, tuple[Callable[..., list[dict[str, Any]]], Callable[..., Any]]] = {
    **_CLUES,
    **_HULL,
    **_HSCC,
    **_ECNSHARP,
    **_RDMA,
    **_HOMA,
    **_SWIFT,
    **_NDP,
}
