"""DCQCN's fluid model: Zhu et al., "Congestion Control for Large-Scale RDMA
Deployments", SIGCOMM 2015, §5.1, Equations (5)-(9).

N greedy flows share one bottleneck of capacity C; every flow has the same
current rate R_C, target rate R_T and alpha; the switch marks with RED's
probability p(q) on the instantaneous queue (Eq. 5); the queue integrates
N R_C - C (Eq. 6); alpha, R_T and R_C follow Eqs. (7)-(9), whose feedback
arrives tau* after the marking that caused it. The paper uses it to pick
DCQCN's parameters (§5.2) and says it "matches the implementation quite
well" (Fig. 10); dcsim uses it as a second reference beside the testbed's
numbers (docs/models/dcqcn.md).

Rates are in packets per second and sizes in packets, as in the paper.
Integrated by forward Euler with a fixed step (2.5 us by default, a
twentieth of the feedback delay: halving it moves the 16:1 queue's mean
and link rate by under 0.5 %); every condition (a value of N) is one element of
numpy arrays, so a sweep costs one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class DcqcnFluid:
    """The parameters of the paper's Table 2 and Fig. 14 (its defaults)."""

    capacity_bps: float = 40e9
    packet_bytes: float = 1000.0
    k_min: float = 5e3  # bytes
    k_max: float = 200e3
    p_max: float = 0.01
    g: float = 1 / 256
    rate_ai_bps: float = 40e6
    byte_counter: float = 10e6  # bytes (B)
    timer: float = 55e-6  # T
    fast_recovery: int = 5  # F
    cnp_interval: float = 50e-6  # tau (Eq. 8-9: one cut per CNP interval at most)
    alpha_interval: float = 55e-6  # tau'
    feedback_delay: float = 50e-6  # tau*, "the maximum possible delay of CNP generation"


def _keep(p: np.ndarray, x: np.ndarray | float) -> np.ndarray:
    """(1 - p)^x: the chance that x packets pass unmarked."""
    with np.errstate(divide="ignore"):
        return np.where(p >= 1, 0.0, np.exp(x * np.log1p(-np.minimum(p, 1 - 1e-12))))


def _event_rate(p: np.ndarray, x: np.ndarray | float) -> np.ndarray:
    """p / ((1 - p)^-x - 1): per packet, the rate of completing a run of x
    unmarked packets (1/x as p -> 0; 0 when every packet is marked)."""
    safe = np.clip(p, 1e-15, 1 - 1e-12)
    with np.errstate(over="ignore"):  # a long run at a high p: the rate is 0
        run = p / np.expm1(-x * np.log1p(-safe))
    return np.where(p <= 0, 1.0 / x, np.where(p >= 1, 0.0, run))


def integrate(model: DcqcnFluid, flows: Sequence[int], duration: float, step: float = 2.5e-6) -> dict[str, np.ndarray]:
    """Queue (bytes) and link rate (b/s) over time for each number of flows,
    all starting at line rate with alpha = 1 and an empty queue (DCQCN
    starts a flow at line rate, §3.1). Returns `time` (n) and `queue_bytes`
    and `link_bps` (len(flows) x n)."""
    m = model
    pkt = m.packet_bytes
    n_flows = np.asarray(flows, dtype=float)
    c = m.capacity_bps / 8 / pkt
    rai, b = m.rate_ai_bps / 8 / pkt, m.byte_counter / pkt
    kmin, kmax = m.k_min / pkt, m.k_max / pkt
    steps, lag = int(round(duration / step)), int(round(m.feedback_delay / step))
    # Ring buffers of p and R_C, tau* deep: the feedback the senders see now.
    p_past = np.zeros((lag, len(flows)))
    rc_past = np.full((lag, len(flows)), c)
    rc, rt, alpha, q = np.full(len(flows), c), np.full(len(flows), c), np.ones(len(flows)), np.zeros(len(flows))
    queue = np.empty((len(flows), steps))
    link = np.empty((len(flows), steps))
    for i in range(steps):
        p = np.where(q <= kmin, 0.0, np.where(q <= kmax, (q - kmin) / (kmax - kmin) * m.p_max, 1.0))  # Eq. 5
        slot = i % lag
        pd, rcd = p_past[slot].copy(), rc_past[slot].copy()
        p_past[slot], rc_past[slot] = p, rc
        cut = 1 - _keep(pd, m.cnp_interval * rcd)
        by_bytes, by_timer = _event_rate(pd, b), _event_rate(pd, m.timer * rcd)
        d_alpha = m.g / m.alpha_interval * ((1 - _keep(pd, m.alpha_interval * rcd)) - alpha)  # Eq. 7
        d_rt = (  # Eq. 8
            -(rt - rc) / m.cnp_interval * cut
            + rai * rcd * _keep(pd, m.fast_recovery * b) * by_bytes
            + rai * rcd * _keep(pd, m.fast_recovery * m.timer * rcd) * by_timer
        )
        d_rc = -rc * alpha / (2 * m.cnp_interval) * cut + (rt - rc) / 2 * rcd * (by_bytes + by_timer)  # Eq. 9
        arriving = n_flows * rc
        link[:, i] = np.where(q > 0, c, np.minimum(arriving, c)) * 8 * pkt
        q = np.maximum(q + (arriving - c) * step, 0.0)  # Eq. 6
        alpha = alpha + d_alpha * step
        rt = np.clip(rt + d_rt * step, 0.0, c)
        rc = np.clip(rc + d_rc * step, 0.0, c)
        queue[:, i] = q * pkt
    return {"time": np.arange(1, steps + 1) * step, "queue_bytes": queue, "link_bps": link}
