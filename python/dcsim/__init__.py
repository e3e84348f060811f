"""dcsim: a fast, faithful packet-level simulator for datacenter transport
and queue-management research.

    >>> import dcsim
    >>> result = dcsim.run("scenario.toml", seed=7, tcp__cc="dctcp")
    >>> result.flows            # pyarrow.Table
    >>> result.summary["events"]

The simulation core is Rust (``dcsim._core``); a run crosses into it once, with
the GIL released, and comes back with columnar tables.
"""

from __future__ import annotations

from ._core import Cancelled, ScenarioError
from ._core import version as _core_version
from .results import Result
from .scenario import default_scenario_path, load_scenario, resolve
from .simulate import run

__version__ = _core_version()

# Named by where users import them, so that pickle finds them and they cross
# process pools (a sweep's or a reproduction's worker) as themselves.
ScenarioError.__module__ = Cancelled.__module__ = "dcsim"

__all__ = [
    "Cancelled",
    "Result",
    "ScenarioError",
    "__version__",
    "default_scenario_path",
    "load_scenario",
    "resolve",
    "run",
]
