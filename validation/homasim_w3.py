"""dcsim's side of the Homa comparison with the authors' OMNeT++ simulator
(PlatformLab/HomaSimulation; docs/validation-receiver.md, "Homa").

    python validation/homasim_w3.py 0.8 1 [sim.sca] [--ms 20]   # W3 at wire load 0.8, seed 1

Runs the homa-slowdown experiment's Homa on the authors' 144-host fabric
with W3 arriving for 20 ms (or --ms) and nothing after (the simulator's
`--sim-time-limit`: messages still in flight then are not counted),
and prints, per message-size bin of the simulator's `msgSizeRanges`, the
messages completed and the slowdown's median and 99th percentile, the
slowdown divided by the simulator's own ideal
(`WorkloadSynthesizer::idealMsgEndToEndDelay`, its same-rack assignment
bug included) so that both sides divide by the same thing. The 99th
percentile is given two ways: exact, and as the authors' analysis reads
it off a 100-cell histogram from 0 to the maximum (the lower edge of the
cell where the CDF reaches 0.99). With a simulator .sca file, its bins'
values are printed beside dcsim's."""

from __future__ import annotations

import argparse
import re
import tomllib

import numpy as np

import dcsim
from dcsim.experiments import ROOT
from dcsim.experiments import homa as H

# The simulator's W3 bins (homaTransportConfig.ini, [Config WorkloadGoogleAllRpc]).
BINS = [3, 32, 36, 40, 46, 53, 64, 70, 77, 85, 96, 110, 128, 137, 146, 158, 171, 186, 205, 228, 256, 268, 282, 296,
        313, 331, 352, 375, 402, 433, 469, 512, 531, 573, 597, 623, 683, 717, 755, 796, 843, 956, 1053, 1117, 1189,
        1271, 1317, 1418, 1475, 1603, 1755, 2137, 2341, 2657, 3511, 4535, 5521, 7256, 9078, 10335, 13435, 16861,
        21984, 25170, 30468, 40018, 45220, 50244, 55146, 60293, 65902, 70217, 75137, 80248, 85482, 90049, 95133,
        100825, 110247, 120372, 129632, 140605, 150160, 160275, 170901, 180895, 190944, 200864, 249460, 300435,
        350288, 401080, 450652, 501350, 603313, 701172, 805723, 907174, 1008790, 5114695, 10668901, 20000000]


def simulator_ideal(size: int, same_rack: bool) -> float:
    """The simulator's unloaded one-way time of a `size`-byte message: frames
    of 1,472 B of data (UDP + IP only) at 10 Gb/s with preamble and gap,
    1.5 µs of host overheads, 0.25 µs per switch and one frame's
    store-and-forward per later hop; for a same-rack pair its `=+` keeps
    only the ToR's store-and-forward."""
    full, part = divmod(size, 1472)
    last = 0 if part == 0 else (84 if part < 18 else part + 66)
    total = full * 1538 + last if (full or part) else 84
    first = 1538 if full else (last or 84)
    switches = first * 8 / 10e9 if same_rack else 3 * 0.25e-6 + 2 * first * 8 / 40e9 + first * 8 / 10e9
    return total * 8 / 10e9 + 1.5e-6 + switches


def p99_histogram(x: np.ndarray) -> float:
    width = x[-1] / 100
    cells = np.bincount(np.minimum((x / width).astype(int), 100), minlength=101)
    return float(max(np.argmax(np.cumsum(cells) / len(x) >= 0.99) * width, x[0]))


def simulator_bins(sca: str) -> dict[int, tuple[int, float, float]]:
    """(count, p50, p99) per bin from a simulator .sca file's stretch
    histograms, read as the authors' analysis reads them."""
    out: dict[int, tuple[int, float, float]] = {}
    blocks = re.split(r"^statistic ", open(sca, encoding="utf-8").read(), flags=re.M)
    for block in blocks:
        m = re.match(r"\S+\s+mesg(\d+)Stretch:histogram", block)
        cells = [line.split()[1:] for line in block.splitlines() if line.startswith("bin")]
        if not m or not cells:
            continue
        lo = np.array([float(c[0]) for c in cells])
        n = np.array([float(c[1]) for c in cells])
        cum = np.cumsum(n) / n.sum()
        edge = lambda p: float(lo[max(int(np.argmax(cum >= p)), 1)])  # noqa: E731 (skip the -INF cell)
        out[int(m.group(1))] = (int(n.sum()), edge(0.5), edge(0.99))
    return out


def main(load: float, seed: int, sca: str | None, ms: int) -> None:
    folder = ROOT / "homa-slowdown"
    spec = tomllib.loads((folder / "experiment.toml").read_text(encoding="utf-8")) | {"wire_load": load}
    workload = spec["workloads"]["W3"] | {"duration": f"{ms}ms"}
    s = H._scenario(H._base(folder, spec), spec, workload, spec["schemes"]["Homa"])
    s["run"] = {"duration": f"{ms}ms", "seed": seed}
    r = dcsim.run(s)
    f = r.flows.to_pandas()
    f = f[f.end.notna()]
    hosts_per_rack = s["topology"]["hosts_per_leaf"]
    ideal = np.array([simulator_ideal(int(b), a // hosts_per_rack == d // hosts_per_rack) for b, a, d in zip(f.bytes, f.src, f.dst)])
    stretch = f.fct.to_numpy() / ideal
    nics = r.ports.to_pandas().query("node_kind == 'host'")
    busy = (nics.tx_bytes.sum() + 20 * nics.tx_packets.sum()) * 8 / (len(nics) * 10e9 * ms / 1e3)
    print(f"W3 at {load}, seed {seed}: {len(f)} messages completed of {r.summary['flows']}; host links busy {busy:.3f}; "
          f"{r.summary['events']} events in {r.summary['wall_seconds']:.1f} s")
    sim = simulator_bins(sca) if sca else {}
    which = np.searchsorted(np.array(BINS), f.bytes.to_numpy(), side="left")
    print("| bin (B) | dcsim n | p50 | p99 (hist) | p99 (exact) |" + (" sim n | sim p50 | sim p99 |" if sim else ""))
    for k, upper in enumerate(BINS):
        x = np.sort(stretch[which == k])
        if len(x) == 0:
            continue
        row = f"| {upper} | {len(x)} | {np.percentile(x, 50):.3f} | {p99_histogram(x):.3f} | {np.percentile(x, 99):.3f} |"
        if upper in sim:
            row += " {} | {:.3f} | {:.3f} |".format(*sim[upper])
        print(row)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("load", type=float, help="wire load, as the simulator's rlf (0.8: its run 15)")
    ap.add_argument("seed", type=int, help="dcsim's run.seed")
    ap.add_argument("sca", nargs="?", help="the simulator's .sca file, to print its bins beside")
    ap.add_argument("--ms", type=int, default=20, help="simulated ms (the simulator's --sim-time-limit)")
    a = ap.parse_args()
    main(a.load, a.seed, a.sca, a.ms)
