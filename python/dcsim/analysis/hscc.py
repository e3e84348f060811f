"""HSCC's fluid model (seed 002 §4): the equilibrium (eqs. 9-11), the
linearised system (eqs. 16-18) and a numerical integration of the switched
fluid system (eqs. 6-8).

Units: C in packets per second, windows and queues in packets, times in
seconds.

The seed's two numerical examples (eqs. 20, 21) do not follow from its own
C1 = 2 P0 / tau0 (1 / (w0 tau0) + kappa w0 / 2): their printed matrices use
tau0 / w0 in place of 1 / (w0 tau0). `linearised(..., printed=True)`
reproduces the printed matrices; the default follows the formula.
"""

from __future__ import annotations

import cmath
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Linearised:
    c1: float
    c2: float
    c3: float
    c4: float

    @property
    def matrix(self) -> list[list[float]]:
        """A of eq. 17: d/dt (dw, dq) = A (dw, dq) + b dP(t - tau)."""
        return [[-self.c1, -self.c2], [self.c3, -self.c4]]

    @property
    def eigenvalues(self) -> tuple[complex, complex]:
        """Eq. 18."""
        root = cmath.sqrt(self.c1**2 - 2 * self.c1 * self.c4 + self.c4**2 - 4 * self.c2 * self.c3)
        mid = -(self.c1 + self.c4) / 2
        return mid + root / 2, mid - root / 2

    @property
    def stable(self) -> bool:
        """Hurwitz: both eigenvalues in the open left half-plane."""
        return all(l.real < 0 for l in self.eigenvalues)


def linearised(w0: float, p0: float, tau0: float, c: float, n: float, kappa: float, printed: bool = False) -> Linearised:
    """C1..C4 of §4.2 at the operating point. `printed=True` uses the term
    tau0 / w0 that the seed's examples (eqs. 20, 21) evidently used instead
    of its formula's 1 / (w0 tau0)."""
    inner = tau0 / w0 if printed else 1 / (w0 * tau0)
    return Linearised(
        c1=2 * p0 / tau0 * (inner + kappa * w0 / 2),
        c2=p0 / (c * tau0**3),
        c3=(1 - p0) * n / tau0,
        c4=1 / tau0,
    )


def kappa(buffer: float, high: float, n: float) -> float:
    """Passages over the high threshold per overflow: (1 - alpha2) M / N (§4.1)."""
    return (1 - high) * buffer / n


def equilibrium(c: float, n: float, tau0: float, kappa: float) -> tuple[float, float]:
    """(w0, P0) solving eqs. 9-10 together for a given tau0 (eq. 11):
    P0 = (kappa w0 tau0 / 2 - 1 / w0 + 1)^-1 and w0 = (C tau0 / N - P0) / (1 - P0).

    P0 < 1 needs kappa w0 tau0 / 2 > 1 / w0, i.e. w0 > sqrt(2 / (kappa tau0)).
    On that range the second equation's right side falls from +inf and w0
    rises, so there is exactly one solution when C tau0 / N > 1. Note that
    eq. 9 mixes units (w0 tau0 is packets x seconds): with datacenter RTTs it
    puts w0 in the hundreds, far above C tau0 / N. The seed's examples
    (w0 = 10, P0 = 0.5) are not equilibria of eqs. 9-10: eq. 9 gives
    P0 = 1.11 at w0 = 10 (see p0_at)."""
    share = c * tau0 / n
    if share <= 1:
        raise ValueError(f"C tau0 / N = {share:.4g} <= 1: no operating point (§4.2 needs C tau0 >= N)")
    w_min = math.sqrt(2 / (kappa * tau0))

    def gap(w: float) -> float:
        p = p0_at(w, tau0, kappa)
        return w - (share - p) / (1 - p)

    lo, hi = w_min * (1 + 1e-12), max(2 * share, 2 * w_min)
    while gap(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if gap(mid) < 0:
            lo = mid
        else:
            hi = mid
    w0 = (lo + hi) / 2
    return w0, p0_at(w0, tau0, kappa)


def p0_at(w0: float, tau0: float, kappa: float) -> float:
    """Eq. 9: the Rwnd update probability that holds w still at w0."""
    return 1 / (kappa * w0 * tau0 / 2 - 1 / w0 + 1)


@dataclass
class Trajectory:
    time: list[float]
    window: list[float]
    queue: list[float]
    cbr: list[bool]


def integrate(c: float, n: int, base_rtt: float, buffer: float, low: float = 0.25, high: float = 0.5,
              duration: float = 0.05, dt: float = 1e-6, w_init: float = 1.0) -> Trajectory:
    """Euler integration of the switched system (eqs. 6-8) with the relay
    of §3: P_u(t) = 1 while the port is in CBR mode (entered above high x
    buffer, left below low x buffer), else 0; P_l(t) = 1 while the buffer
    is full (a drop-tail overflow), else 0. Both act with the delay tau(t) =
    base_rtt + q / C, as in the model. The queue is kept in [0, buffer].

    One correction to the printed equations: eqs. 6 and 8 multiply the whole
    bracket, additive increase included, by the rate w(t - tau) / tau(t - tau).
    That makes TCP mode grow as dw/dt = w / tau^2, exponentially, and not
    dimensionally a window rate. Misra et al. [24], whom §4 follows, multiply
    only the loss term. So here dw/dt = (1 - P_u) / tau + P_u / (w tau)
    - (w / 2) (w(t - tau) / tau(t - tau)) P_l(t - tau): one segment per RTT
    in TCP mode, 1/w per RTT while the window is clamped. The queue equation
    is as printed."""
    steps = int(duration / dt)
    w, q, cbr = w_init, 0.0, False
    hist_pu: list[float] = []
    hist_pl: list[float] = []
    hist_rate: list[float] = []  # w / tau, for the delayed w(t - tau) / tau(t - tau)
    out = Trajectory([], [], [], [])
    for k in range(steps):
        tau = base_rtt + q / c
        lag = min(k, int(tau / dt))
        pu = hist_pu[k - lag] if lag and hist_pu else 0.0
        pl = hist_pl[k - lag] if lag and hist_pl else 0.0
        rate_lag = hist_rate[k - lag] if lag and hist_rate else w / tau
        dw = (1 - pu) / tau + pu / (w * tau) - w * pl / 2 * rate_lag
        dq = (1 - pu) * n * w / tau + pu * n / tau - c
        w = max(1.0, w + dw * dt)
        q = min(buffer, max(0.0, q + dq * dt))
        if not cbr and q > high * buffer:
            cbr = True
        elif cbr and q < low * buffer:
            cbr = False
        hist_pu.append(1.0 if cbr else 0.0)
        hist_pl.append(1.0 if q >= buffer else 0.0)
        hist_rate.append(w / tau)
        if k % max(1, steps // 5000) == 0:
            out.time.append(k * dt)
            out.window.append(w)
            out.queue.append(q)
            out.cbr.append(cbr)
    return out
