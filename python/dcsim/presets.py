"""Presets: named bundles of overrides, shipped in data/presets/<group>.toml
and named "<group>/<name>" (``dcsim run S --preset hull/DCTCP-30K``).

A preset is applied after the scenario file and before explicit overrides,
so the resolved scenario (and every output's metadata) holds its values."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

ROOT = Path(str(resources.files("dcsim") / "data" / "presets"))


def _groups() -> dict[str, dict[str, dict[str, Any]]]:
    return {p.stem: tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("*.toml"))}


def available() -> list[str]:
    return [f"{group}/{name}" for group, presets in _groups().items() for name in presets]


def overrides(name: str) -> dict[str, Any]:
    """The overrides of preset `name`; KeyError with the allowed names if unknown."""
    group, _, preset = name.partition("/")
    groups = _groups()
    found = groups.get(group, {}).get(preset)
    if found is None:
        # Name the presets of the same group when the group exists, else all.
        names = [f"{group}/{n}" for n in groups[group]] if group in groups else available()
        raise KeyError(f"unknown preset {name!r}: expected one of {', '.join(names)}")
    return dict(found)
