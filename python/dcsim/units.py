"""Quantities as people read them: each number with its unit, the unit
chosen by the number's magnitude (1.23 ms, 850 µs; 64 KB; 9.41 Gb/s).
Dimensionless ratios (slowdown, Jain's index, utilisation) get none.

Sizes and rates are decimal (1 KB = 1000 B, 1 Gb/s = 10^9 b/s), as the
scenario keys and the flow-size CDFs are. Every table, plot axis and report
of dcsim formats through these functions, so a unit is never left to the
reader's guess.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

MISSING = "–"

# (largest magnitude the unit covers, factor, name), ascending.
TIME_UNITS = [(1e-9, 1e-12, "ps"), (1e-6, 1e-9, "ns"), (1e-3, 1e-6, "µs"), (1.0, 1e-3, "ms"), (math.inf, 1.0, "s")]
SIZE_UNITS = [(1e3, 1.0, "B"), (1e6, 1e3, "KB"), (1e9, 1e6, "MB"), (1e12, 1e9, "GB"), (math.inf, 1e12, "TB")]
RATE_UNITS = [(1e3, 1.0, "b/s"), (1e6, 1e3, "Kb/s"), (1e9, 1e6, "Mb/s"), (1e12, 1e9, "Gb/s"), (math.inf, 1e12, "Tb/s")]


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def number(v: float, digits: int = 4) -> str:
    """`digits` significant digits (all of the integer part from 1000 on,
    thousands separated), never in exponent form above 10^-3."""
    if _missing(v):
        return MISSING
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if v != 0 and abs(v) < 1e-3:
        return f"{v:.{digits - 1}e}"
    text = f"{v:.{digits}g}"
    # More integer digits than `digits`: whole, "100" rather than "1e+02".
    return f"{v:,.0f}" if "e+" in text else text


def unit_for(value: float, units: list[tuple[float, float, str]]) -> tuple[float, str]:
    """(factor, name) of the unit in which |value| reads between 1 and 1000."""
    a = abs(value)
    for limit, factor, name in units:
        if a < limit * (1 - 5e-5):  # 999.97 µs reads as 1 ms, not "1000 µs"
            return factor, name
    return units[-1][1], units[-1][2]


def _scaled(units: list[tuple[float, float, str]]) -> Callable[..., str]:
    base = next(name for _, factor, name in units if factor == 1.0)

    def fmt(v: Any, digits: int = 4) -> str:
        if _missing(v):
            return MISSING
        if v == 0:
            return f"0 {base}"
        factor, name = unit_for(v, units)
        return f"{number(v / factor, digits)} {name}"

    return fmt


time = _scaled(TIME_UNITS)  # seconds
size = _scaled(SIZE_UNITS)  # bytes
rate = _scaled(RATE_UNITS)  # bits per second


def ratio(v: Any, digits: int = 4) -> str:
    """A dimensionless quantity: slowdown, Jain's index, a fraction."""
    return number(v, digits)


def percent(v: Any, digits: int = 3) -> str:
    """A fraction in [0, 1] as a percentage."""
    return MISSING if _missing(v) else f"{number(v * 100, digits)} %"


def count(v: Any) -> str:
    return MISSING if _missing(v) else f"{int(v):,}"


# The scenario's spelling of a unit ("10Gbps", "2us"): its factor to base
# units (s, B, b/s) and the formatter that reads it out.
SCENARIO_UNITS = {"ps": (1e-12, time), "ns": (1e-9, time), "us": (1e-6, time), "ms": (1e-3, time), "s": (1.0, time),
                  "B": (1.0, size), "KB": (1e3, size), "MB": (1e6, size), "GB": (1e9, size), "TB": (1e12, size),
                  "KiB": (1024.0, size), "MiB": (1024.0**2, size), "GiB": (1024.0**3, size),
                  "bps": (1.0, rate), "Kbps": (1e3, rate), "Mbps": (1e6, rate), "Gbps": (1e9, rate), "Tbps": (1e12, rate)}
_QUANTITY = re.compile(r"(-?\d+(?:\.\d+)?)\s*([A-Za-z]+)")


def parse(value: str) -> float | None:
    """A quantity as the scenario writes it ("10Gbps") in base units
    (1e10), or None if it is not one."""
    m = _QUANTITY.fullmatch(value)
    return float(m[1]) * SCENARIO_UNITS[m[2]][0] if m and m[2] in SCENARIO_UNITS else None


def as_read(value: str) -> str:
    """A quantity as the scenario writes it ("10Gbps", "200000B") as a
    reader reads it ("10 Gb/s", "200 KB"); any other text unchanged."""
    m = _QUANTITY.fullmatch(value)
    if m and m[2] == "pkt":
        return f"{m[1]} packets"
    if not m or m[2] not in SCENARIO_UNITS:
        return value
    factor, fmt = SCENARIO_UNITS[m[2]]
    return fmt(float(m[1]) * factor)


def port_name(node_name: str, peer_name: str) -> str:
    """A port by its link's endpoints: the node that sends on it and the
    node at the other end."""
    return f"{node_name} → {peer_name}"
