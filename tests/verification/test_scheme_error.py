"""The generalized-α scheme's own numerical damping and period error
(``kynemapy.analysis.scheme_error``), apart from the physics.

* ρ∞ = 1 is the trapezoidal rule: ``|λ|`` = 1, ω̄h = 2 arctan(ωh/2) (closed form).
* ωh → ∞: every root tends to −ρ∞ (the scheme's design), so the spectral radius to ρ∞.
* Second-order accuracy: the period error falls as (ωh)², the numerical damping ratio as (ωh)³
  (Chung & Hulbert 1993).
* The amplification matrix is the engine's: a mass on a linear spring stepped by ``Simulation``
  follows x_{n+1} = A x_n step by step (x = (q, hv, h²a)), and its amplitude after whole periods
  decays as the predicted ``|λ_p|`` per step while its phase drifts by the period error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.analysis import amplification_matrix, scheme_error


def test_trapezoidal_rule_closed_form() -> None:
    wh = np.array([1e-2, 0.1, 1.0, 3.0, 10.0])
    e = scheme_error(wh, 1.0, rho_inf=1.0)
    np.testing.assert_allclose(e.spectral_radius, 1.0, rtol=1e-13)
    np.testing.assert_allclose(e.damping_ratio, 0.0, atol=1e-13)
    np.testing.assert_allclose(e.period_error, wh / (2.0 * np.arctan(wh / 2.0)) - 1.0, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("rho_inf", [0.3, 0.6, 0.9])
def test_high_frequency_limit_and_second_order(rho_inf: float) -> None:
    # a triple root −ρ∞ at infinity: the characteristic polynomial tends to (λ + ρ∞)³, its
    # coefficients as 1/(ωh)² (1e-12 here); the roots of a near-triple root only as the cube
    # root of that (1e-4)
    poly = np.poly(amplification_matrix(1e6, rho_inf))
    np.testing.assert_allclose(poly, [1.0, 3.0 * rho_inf, 3.0 * rho_inf**2, rho_inf**3], atol=1e-10)
    assert abs(scheme_error(1e6, 1.0, rho_inf).spectral_radius[0] - rho_inf) < 3e-4
    # ratio 4 for (ωh)², 8 for (ωh)³, to the next order's (ωh)² ≈ 4e-4 (smaller ωh: the
    # round-off of ln|λ|, ε/ωh, takes over ζ̄ ≈ 1e-10)
    small = scheme_error([2e-2, 1e-2], 1.0, rho_inf)
    assert abs(small.period_error[0] / small.period_error[1] - 4.0) < 1e-3
    assert abs(small.damping_ratio[0] / small.damping_ratio[1] - 8.0) < 1e-2
    assert np.all(small.damping_ratio > 0.0) and np.all(small.period_error > 0.0)


def test_the_engine_follows_the_amplification_matrix() -> None:
    k, m, rho_inf = 400.0, 2.0, 0.6
    omega = math.sqrt(k / m)
    h = 0.5 / omega  # ωh = 0.5
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    anchor = b.add_node(position=(0.0, 0.0, 0.0))
    body = b.add_node(position=(1.0, 0.0, 0.0), displacement=(0.01, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    b.add_mass(body, mass=m, inertia=(0.1, 0.1, 0.1))
    b.add_spring(anchor, body, stiffness=k, undeformed_length=1.0)
    b.add_fixed_bc_3dof(anchor)
    params = kp.StepParameters(h=h, rho_inf=rho_inf, geometric_stiffness=True, atol=1e-12, rtol=1e-12)
    sim = kp.Simulation(b.build(), params)
    a_mat = amplification_matrix(omega * h, rho_inf)

    def x() -> np.ndarray:
        s = sim.state
        return np.array([s.q[body, 0], h * s.v[body, 0], h * h * s.a[body, 0]])

    rows = [x()]
    n_steps = 4 * round(2 * math.pi / (omega * h))
    for _ in range(n_steps):
        sim.step()
        rows.append(x())
    rows_a = np.array(rows)
    predicted = rows_a[:-1] @ a_mat.T
    np.testing.assert_allclose(rows_a[1:], predicted, rtol=0.0, atol=1e-12 * 0.01)
    # the scheme's decay and phase: a free vibration's principal part, after the spurious root
    # (|λ_s| < 0.6 per step) died out, decays by |λ_p| per step
    e = scheme_error(omega, params)
    lam = np.linalg.eigvals(a_mat)
    p = lam[np.argmax(lam.imag)]
    assert abs(abs(p) ** (2 * math.pi / (omega * h)) - e.decay_per_period[0]) < 1e-14
    assert e.damping_ratio[0] > 0.0 and e.period_error[0] > 0.0
    # the same ζ̄ from the engine's run: fit |λ| of the principal pair from the last 10 steps
    tail = rows_a[-12:]
    coef, *_ = np.linalg.lstsq(np.column_stack([tail[1:-1, 0], tail[:-2, 0]]), tail[2:, 0], rcond=None)
    roots = np.roots([1.0, -coef[0], -coef[1]])  # q_{n+2} = c0 q_{n+1} + c1 q_n
    measured = roots[np.argmax(roots.imag)]
    assert abs(abs(measured) / abs(p) - 1.0) < 1e-6
    assert abs(np.angle(measured) / np.angle(p) - 1.0) < 1e-6


def test_modes_report_the_scheme_error_apart_from_the_physics() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    anchor = b.add_node(position=(0.0, 0.0, 0.0))
    body = b.add_node(position=(1.0, 0.0, 0.0))
    b.add_mass(body, mass=2.0, inertia=(0.1, 0.1, 0.1))
    b.add_spring(anchor, body, stiffness=400.0, undeformed_length=1.0)
    b.add_fixed_bc_3dof(anchor)
    m = kp.analysis.modes(b.build())
    w = m.omega[-1]
    assert abs(w - math.sqrt(200.0)) < 1e-12
    e = m.scheme_error(kp.StepParameters(h=0.01, rho_inf=0.9))
    assert e.omega_h.shape == m.omega.shape and abs(e.omega_h[-1] - 0.01 * w) < 1e-15
    assert np.all(m.damping_ratio == 0.0)  # the physics: undamped
    assert e.damping_ratio[-1] > 0.0
    with pytest.raises(ValueError, match="rho_inf"):
        m.scheme_error(0.01)
