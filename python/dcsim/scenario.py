"""Loading scenarios: TOML files or dicts, dotted-path overrides, flow files.

Everything here only *assembles* the scenario; the schema and all validation
live in the Rust core (``_core.validate``), so a TOML file, a Python dict and
the CLI are checked by exactly the same rules.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

from ._core import ScenarioError
from ._core import validate as _validate

Scenario = dict[str, Any]


def default_scenario_path() -> Path:
    """The default scenario shipped in the package (the main job)."""
    return Path(str(resources.files("dcsim") / "data" / "default.toml"))


def _error(path: str, message: str) -> ScenarioError:
    """A ScenarioError as the core raises them: str() is "path: message"."""
    e = ScenarioError(f"{path}: {message}" if path else message)
    e.path = path  # type: ignore[attr-defined]
    e.message = message  # type: ignore[attr-defined]
    return e


def load_scenario(source: str | Path | Mapping[str, Any]) -> tuple[Scenario, Path]:
    """Read a scenario from a TOML path or a dict. Returns (dict, base dir for
    relative file references)."""
    if isinstance(source, Mapping):
        return copy.deepcopy(dict(source)), Path.cwd()
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise _error("", f"cannot read scenario file {str(path)!r}: {e.strerror or e}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _error("", f"{path} is not valid TOML: {e}") from None
    return data, path.resolve().parent


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def _split_path(key: str) -> list[str | int]:
    """'workload[0].size' or 'workload.0.size' -> ['workload', 0, 'size']."""
    parts: list[str | int] = []
    for seg in key.split("."):
        if seg.isdigit():
            parts.append(int(seg))
            continue
        m = _SEGMENT.match(seg)
        if not m:
            raise _error(key, f"invalid key path {key!r}: use names and indices like workload[0].size")
        parts.append(m.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return parts


def set_path(data: Scenario, key: str, value: Any) -> None:
    """Set data[key] for a dotted key path, creating tables as needed."""
    parts = _split_path(key)
    cur: Any = data
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(part, int):
            if not isinstance(cur, list) or part >= len(cur):
                raise _error(key, f"index {part} is out of range for {key!r}")
            cur = cur[part]
        else:
            if not isinstance(cur, dict):
                raise _error(key, f"{'.'.join(map(str, parts[:i]))} is not a table")
            if part not in cur:
                cur[part] = [] if isinstance(nxt, int) else {}
            cur = cur[part]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(cur, list) or last >= len(cur):
            raise _error(key, f"index {last} is out of range for {key!r}")
        cur[last] = value
    else:
        if not isinstance(cur, dict):
            raise _error(key, f"the parent of {key!r} is not a table")
        cur[last] = value


def parse_cli_value(text: str) -> Any:
    """A --set value: a TOML literal (number, bool, string, array, inline
    table) when it parses as one, else the raw string (so units need no quotes)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _load_flow_file(path: Path, where: str) -> list[dict[str, Any]]:
    """Read an explicit flow list (CSV or Parquet) with columns src, dst,
    bytes and start (seconds), and optionally dscp (the class of its packets)."""
    required = ("src", "dst", "bytes", "start")
    if path.suffix not in (".csv", ".parquet"):
        raise _error(where, f"flow file {str(path)!r}: expected a .csv or .parquet file")
    if not path.exists():
        raise _error(where, f"flow file {str(path)!r} does not exist")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    flows = []
    for i, row in enumerate(rows):
        missing = [c for c in required if c not in row or row[c] in (None, "")]
        if missing:
            raise _error(where, f"{path.name} row {i + 1}: missing column(s) {', '.join(missing)} (needed: {', '.join(required)})")
        try:
            src, dst, nbytes, start = int(row["src"]), int(row["dst"]), int(row["bytes"]), float(row["start"])
        except (TypeError, ValueError):
            raise _error(where, f"{path.name} row {i + 1}: src, dst and bytes must be integers and start a number of seconds, got {dict(row)}") from None
        if nbytes <= 0 or not 0 <= start < math.inf:
            raise _error(where, f"{path.name} row {i + 1}: bytes must be > 0 and start a finite time >= 0, got bytes={nbytes}, start={start}")
        flow = {"src": src, "dst": dst, "size": f"{nbytes}B", "start": f"{round(start * 1e12)}ps"}
        if row.get("dscp") not in (None, ""):
            try:
                flow["dscp"] = int(row["dscp"])
            except (TypeError, ValueError):
                raise _error(where, f"{path.name} row {i + 1}: dscp must be an integer 0..63, got {row['dscp']!r}") from None
        flows.append(flow)
    if not flows:
        raise _error(where, f"flow file {str(path)!r} has no flows (needed: a row per flow with {', '.join(required)})")
    return flows


def _reject_non_finite(value: Any, path: str) -> None:
    """TOML has nan and inf; no scenario value may be either."""
    if isinstance(value, float) and not math.isfinite(value):
        raise _error(path, f"{value} is not a finite number")
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, v in items:
        _reject_non_finite(v, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key)


def _expand_flow_files(data: Scenario, base: Path) -> None:
    from .workloads import CdfError, resolve_size

    workloads = data.get("workload")
    if not isinstance(workloads, list):
        return
    for i, w in enumerate(workloads):
        for key in ("size", "response"):  # poisson flow sizes, request response sizes
            spec = w.get(key) if isinstance(w, dict) else None
            if not (isinstance(spec, dict) and ("cdf" in spec or "cdf_file" in spec)):
                continue
            try:
                w[key] = resolve_size(spec, base, f"workload[{i}].{key}")
            except CdfError as e:
                text = str(e)
                path, _, message = text.partition(": ") if text.startswith("workload[") else (f"workload[{i}].{key}", "", text)
                raise _error(path, message) from None
        if isinstance(w, dict) and w.get("type") == "flows" and "file" in w:
            where = f"workload[{i}].file"
            file = w.pop("file")
            if not isinstance(file, str):
                raise _error(where, f"expected a path to a .csv or .parquet file, got {file!r}")
            if "flows" in w:
                raise _error(where, "give either `file` or `flows`, not both")
            w["flows"] = _load_flow_file((base / file), where)


def resolve(
    source: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    preset: str | Sequence[str] | None = None,
) -> tuple[Scenario, str]:
    """Assemble and validate a scenario: the file, then the presets'
    overrides (in order), then `overrides`, then `seed`. Returns (resolved
    scenario dict with every default filled in, scenario hash). Raises
    ScenarioError."""
    data, base = load_scenario(source)
    if not isinstance(data, dict):
        raise _error("", "a scenario must be a table (a dict)")
    from . import presets

    for name in [preset] if isinstance(preset, str) else preset or []:
        try:
            bundle = presets.overrides(name)
        except KeyError as e:
            raise _error("preset", e.args[0]) from None
        for key, value in bundle.items():
            set_path(data, key, value)
    for key, value in (overrides or {}).items():
        set_path(data, key, value)
    if seed is not None:
        set_path(data, "run.seed", seed)
    _expand_flow_files(data, base)
    _reject_non_finite(data, "")
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise _error("", f"the scenario holds a value that is not plain data: {e}") from None
    resolved, digest = _validate(text)
    return json.loads(resolved), digest
