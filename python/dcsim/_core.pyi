"""Typed stubs of the compiled core (dcsim._core)."""

from typing import Any

class ScenarioError(ValueError):
    """A scenario was rejected before running. str(e) is "key.path: message"."""

    path: str
    message: str

class Cancelled(RuntimeError):
    """A run was cancelled."""

def version() -> str: ...
def validate(scenario_json: str) -> tuple[str, str]:
    """Validate a scenario (JSON text): (resolved scenario JSON, SHA-256 hash)."""

def cdf_sample_means(points: list[list[float]], n: int, seed: int) -> tuple[float, float, float]:
    """The simulator's CDF sampler: (mean of n random draws, mean at n stratified quantiles, mean of the linear CDF)."""

class Simulation:
    def __init__(self, scenario_json: str) -> None: ...
    @property
    def resolved_json(self) -> str: ...
    @property
    def scenario_hash(self) -> str: ...
    @property
    def duration_s(self) -> float | None: ...
    def run(self) -> dict[str, Any]:
        """Run (GIL released). {"summary": json text, "tables": {name: [(column, dtype, data)]}, "pcaps": {name: bytes}}."""
    def progress(self) -> tuple[float, int, float]:
        """(simulated seconds, events executed, fraction done)."""
    def cancel(self) -> None: ...
