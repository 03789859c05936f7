"""The pieces of the impact-time location (kynemapy.run.impact_event) against closed forms."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.run.impact_event import hermite_root, stop_passed, sub_coefficients


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9, 1.0])
def test_sub_step_coefficients_are_those_of_the_step_parameters_with_that_h(rho: float) -> None:
    params = kp.StepParameters(h=4e-3, rho_inf=rho, atol=1e-9, rtol=1e-7, max_iter=12)
    for h in (4e-3 * 0.3127, 1e-9, 4e-3):
        assert np.array_equal(sub_coefficients(params.coefficients, h), dataclasses.replace(params, h=h).coefficients)


def test_the_hermite_root_of_a_free_fall_is_the_parabolas() -> None:
    """g(t) = g0 + d0 t − ½ a t² over [0, h] is its own cubic Hermite interpolant: the root where it
    reaches −η is ``(d0 + √(d0² + 2 a (g0 + η))) / a`` exactly (to round-off)."""
    g0, d0, a, h, eta = 0.01, -3.0, 9.81, 4e-3, 1e-10
    t_root = (d0 + math.sqrt(d0 * d0 + 2.0 * a * (g0 + eta))) / a
    assert 0.0 < t_root < h
    g1, d1 = g0 + d0 * h - 0.5 * a * h * h, d0 - a * h
    assert hermite_root(g0, d0, g1, d1, h, -eta) == pytest.approx(t_root / h, rel=1e-13)


def test_the_hermite_root_is_the_first_of_a_cubic() -> None:
    """g(s) = (s − 0.2)(s − 0.5)(s − 0.9) over [0, 1] (h = 1): three roots, the first is 0.2; a gap
    that stays above the target gives 1."""

    def g(s: float) -> float:
        return -(s - 0.2) * (s - 0.5) * (s - 0.9)

    def d(s: float) -> float:
        return -((s - 0.5) * (s - 0.9) + (s - 0.2) * (s - 0.9) + (s - 0.2) * (s - 0.5))

    assert g(0.0) > 0.0 and g(1.0) < 0.0
    assert hermite_root(g(0.0), d(0.0), g(1.0), d(1.0), 1.0, 0.0) == pytest.approx(0.2, abs=1e-14)
    assert hermite_root(1.0, 0.0, 1.0, 0.0, 1.0, 0.0) == 1.0


def test_stop_passed() -> None:
    output = np.array([[0.5, 0.0, 0.0], [-0.2, 0.0, 0.0], [1.0, 0.0, 0.0]])
    cid = np.array([0, 2], dtype=np.int64)
    assert not stop_passed(output, cid, np.array([0.0, -1.0]), np.array([0.6, 1.1]))
    assert stop_passed(output, cid, np.array([0.0, -1.0]), np.array([0.6, 1.0]))  # at the upper limit
    assert stop_passed(output, cid, np.array([0.5, -1.0]), np.array([0.6, 1.1]))  # at the lower limit
