"""HSCC's fluid model (seed 002 §4) in dcsim.analysis.hscc."""

from __future__ import annotations

import pytest

from dcsim.analysis import hscc


def test_the_printed_examples_follow_tau0_over_w0_not_the_formula():
    # Eq. 20: w0 = 10, P0 = 0.5, tau0 = 1e-4, C = 1e9, N = 25, kappa = 0.2.
    printed = hscc.linearised(10, 0.5, 1e-4, 1e9, 25, 0.2, printed=True)
    assert sum(printed.matrix, []) == pytest.approx([-10000.1, -500, 125000, -10000])
    l1, l2 = printed.eigenvalues
    assert (l1.real, abs(l1.imag)) == pytest.approx((-10000.05, 7905.69), abs=0.01)
    # Eq. 21: w0 = 2, N = 1.
    printed = hscc.linearised(2, 0.5, 1e-4, 1e9, 1, 0.2, printed=True)
    assert sum(printed.matrix, []) == pytest.approx([-2000.5, -500, 5000, -10000])
    assert sorted(l.real for l in printed.eigenvalues) == pytest.approx([-9674.21, -2326.29], abs=0.01)
    # The formula as written gives C1 = 1.001e7 and 5.0002e7 instead: still stable.
    formula = hscc.linearised(10, 0.5, 1e-4, 1e9, 25, 0.2)
    assert formula.c1 == pytest.approx(1.001e7)
    assert hscc.linearised(2, 0.5, 1e-4, 1e9, 1, 0.2).c1 == pytest.approx(5.0002e7)
    assert formula.stable and printed.stable


def test_equilibrium_solves_both_equations_and_the_examples_are_not_equilibria():
    w0, p0 = hscc.equilibrium(1e9, 25, 1e-4, 0.2)
    assert 0 < p0 < 1
    assert p0 == pytest.approx(hscc.p0_at(w0, 1e-4, 0.2))
    assert w0 == pytest.approx((1e9 * 1e-4 / 25 - p0) / (1 - p0))
    # Eq. 9 at the examples' w0 = 10 gives P0 = 1.11, not 0.5.
    assert hscc.p0_at(10, 1e-4, 0.2) == pytest.approx(1.111, abs=1e-3)
    with pytest.raises(ValueError, match="C tau0 / N"):
        hscc.equilibrium(1e4, 25, 1e-4, 0.2)
    assert hscc.kappa(100, 0.5, 25) == 2.0


def test_the_switched_fluid_system_cycles_between_the_thresholds():
    c = 1e9 / 8 / 1518  # packets per second
    with_hscc = hscc.integrate(c=c, n=12, base_rtt=100e-6, buffer=100, duration=0.1)
    without = hscc.integrate(c=c, n=12, base_rtt=100e-6, buffer=100, low=2.0, high=2.0, duration=0.1)
    assert all(0 <= q <= 100 for q in with_hscc.queue)
    second_half = slice(len(with_hscc.queue) // 2, None)
    assert any(with_hscc.cbr[second_half]) and not all(with_hscc.cbr[second_half])
    assert not any(without.cbr)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    assert mean(with_hscc.queue[second_half]) < mean(without.queue[second_half])
