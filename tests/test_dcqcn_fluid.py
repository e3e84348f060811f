"""DCQCN's fluid model (Zhu et al. 2015, §5.1; dcsim.analysis.dcqcn_fluid)."""

from __future__ import annotations

import math

import numpy as np

from dcsim.analysis.dcqcn_fluid import DcqcnFluid, integrate


def fixed_point_queue(model: DcqcnFluid, flows: int) -> float:
    """The queue (bytes) where Eqs. (7)-(9) are at rest with R_C = C/N:
    solved on its own, by bisection on the marking probability."""
    m, pkt = model, model.packet_bytes
    rc, rai, b = m.capacity_bps / 8 / pkt / flows, m.rate_ai_bps / 8 / pkt, m.byte_counter / pkt

    def d_rc(p: float) -> float:
        keep = lambda x: (1 - p) ** x  # noqa: E731
        runs = lambda x: p / ((1 - p) ** -x - 1)  # noqa: E731
        cut, alpha = 1 - keep(m.cnp_interval * rc), 1 - keep(m.alpha_interval * rc)
        # Eq. 8 at rest gives the gap R_T - R_C; Eq. 9 at rest is then zero.
        gap = m.cnp_interval / cut * rai * rc * (keep(m.fast_recovery * b) * runs(b) + keep(m.fast_recovery * m.timer * rc) * runs(m.timer * rc))
        return -rc * alpha / (2 * m.cnp_interval) * cut + gap / 2 * rc * (runs(b) + runs(m.timer * rc))

    lo, hi = 1e-7, m.p_max
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if d_rc(mid) > 0 else (lo, mid)
    return m.k_min + lo / m.p_max * (m.k_max - m.k_min)


def test_few_flows_settle_at_the_models_fixed_point_and_many_oscillate():
    model = DcqcnFluid()
    out = integrate(model, [4, 16], 0.15)
    late = out["time"] > 0.1
    four, sixteen = out["queue_bytes"][0][late], out["queue_bytes"][1][late]
    want = fixed_point_queue(model, 4)
    assert 30e3 < want < 60e3, want
    assert abs(four.mean() - want) < 0.02 * want and four.max() - four.min() < 0.01 * want, (four.mean(), want)
    assert np.all(out["link_bps"][0][late] > 0.999 * model.capacity_bps)
    # 16:1 is past the fixed point's stability: a cycle from an empty queue to above Kmax.
    assert sixteen.min() == 0 and sixteen.max() > model.k_max
    assert out["link_bps"][1][late].mean() < 0.98 * model.capacity_bps
