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

ROOT = Path(str(resources.files("dcsim") / "experiments"))


def clues_rtt(spec: dict[str, Any], folder: Path, quick: bool) -> list[dict[str, Any]]:
    """Seed 004 Fig. 21: completion time against RTT measurement resolution."""
    import dcsim

    scenario = folder / spec["scenario"]
    rows = []
    for rate in spec["quick_rates" if quick else "rates"]:
        base = {"topology.link_rate": rate}
        # The thesis' rule: the largest buffer at which the transaction needs an RTO.
        buffer = next(
            (b for b in range(200, 1, -1)
             if dcsim.run(scenario, overrides=base | {"switch.buffer": f"{b}pkt"}).queries["timeouts"].to_pylist()[0] > 0),
            None,
        )
        if buffer is None:
            raise RuntimeError(f"clues-rtt at {rate}: no buffer from 200 down to 2 packets makes the transaction time out")
        lossless = dcsim.run(scenario, overrides=base | {"switch.buffer": "10000pkt"}).queries["completion_time"].to_pylist()[0]
        rows.append({"metric": "lossless_us", "rate": rate, "resolution_us": None, "value": lossless * 1e6, "buffer_pkt": None})
        for us in spec["quick_resolutions_us" if quick else "resolutions_us"]:
            r = dcsim.run(scenario, overrides=base | {"switch.buffer": f"{buffer}pkt", "tcp.rtt_granularity": f"{us}us"})
            q = r.queries.to_pylist()[0]
            rows.append({"metric": "completion_us", "rate": rate, "resolution_us": us, "value": q["completion_time"] * 1e6,
                         "buffer_pkt": buffer, "timeouts": q["timeouts"]})
    return rows


def clues_rtt_figure(rows: list[dict[str, Any]], spec: dict[str, Any]) -> Any:
    from ..plot import _mpl

    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6, 4))
    for rate in sorted({r["rate"] for r in rows}):
        pts = sorted((r["resolution_us"], r["value"]) for r in rows if r["rate"] == rate and r["metric"] == "completion_us")
        (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"dcsim {rate}")
        ref = [(x["condition"]["resolution_us"], x["paper"]) for x in spec["reference"] if x["condition"]["rate"] == rate]
        ax.scatter([p[0] for p in ref], [p[1] for p in ref], marker="x", s=80, color=line.get_color(), label=f"thesis {rate}")
    ax.set(xscale="log", xlabel="RTT measurement resolution (us)", ylabel="transaction completion time (us)", title="Fig. 21")
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


from .ecnsharp import RUNNERS as _ECNSHARP  # noqa: E402
from .hscc import RUNNERS as _HSCC  # noqa: E402
from .hull import RUNNERS as _HULL  # noqa: E402

RUNNERS: dict[str, tuple[Callable[..., list[dict[str, Any]]], Callable[..., Any]]] = {
    "clues-rtt": (clues_rtt, clues_rtt_figure),
    **_HULL,
    **_HSCC,
    **_ECNSHARP,
}
