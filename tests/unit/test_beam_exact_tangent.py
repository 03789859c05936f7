"""Unit tier: the exact beam tangent (``exact=True`` / ``geometric_stiffness=True``).

The iteration matrix ``β′ M + γ′ G + κ S 𝒯`` of one element against central differences of the
element's own residual, for a curved, twisted reference line with fully coupled sections, nodes
displaced, in motion and with *different* rotations, with and without damping and gravity.
Column k of the matrix is the derivative of the residual along the combined change
``u_j += κ h e_c`` (translation), ``r_j ← exp(κ h T_j e_c) ⊗ r_j`` (rotation),
``v_j += γ′ h e``, ``v̇_j += β′ h e`` (the Newton unknown's effect on the state), with a
tangent operator T_j that is not the identity.  Kynema's mode stays Kynema's (its own tests,
``test_beam_element.py`` and the regressions, are untouched); here it is checked to differ
from the exact one only in the stiffness.  A Newton-level check: the rollup of a coarse
straight beam into a circle converges quadratically with the exact tangent.

Step of the differences: h = 1e-5.  Central differences have truncation error
``h² |R‴| / 6`` and round-off ``ε |R| / h``; with state changes of order one (rotations in
radians, displacements of a 4 m element in metres) both are below 1e-10 of the largest
entry at h ≈ (3ε)^(1/3) ≈ 1e-5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from references import quat_multiply, random_beam_state, section_mass

from kynemapy.engine.elements.beams.integrate import beam_element_terms, element_scratch
from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points
from kynemapy.engine.elements.beams.sections import element_tables
from kynemapy.math.quaternion import quat_exp

H = 1e-5
TOL = 1e-7


class Element:
    """An element of ``order`` (GLL nodes, 6 Gauss points) on a curved, twisted line, coupled
    sections varying along the span; a random tangent operator per node."""

    def __init__(self, order: int = 3) -> None:
        rng = np.random.default_rng(11)
        self.nn = order + 1
        s = (gll_points(order) + 1.0) / 2.0
        x0 = np.zeros((self.nn, 7))
        x0[:, 0] = 4.0 * s
        x0[:, 1] = 0.3 * np.sin(2.0 * s)
        x0[:, 2] = 0.2 * s**2
        for i in range(self.nn):
            x0[i, 3:7] = quat_exp(0.1 * i, 0.2, 0.3 * s[i])
        a = rng.normal(size=(6, 6))
        c_star = 1e3 * (a @ a.T + 6.0 * np.eye(6))
        b = rng.normal(size=(3, 3))
        m_star = section_mass(2.5, [0.0, 0.1, -0.05], b @ b.T + np.eye(3))
        t = element_tables(
            x0, s, gauss_quadrature(6), [0.0, 1.0], np.array([m_star, 1.2 * m_star]), np.array([c_star, 0.8 * c_star])
        )
        self.t = t
        self.w = element_scratch(self.nn, 6)
        self.tangent = np.eye(3) + 0.3 * rng.normal(size=(self.nn, 3, 3))

    def terms(self, q, v, vd, *, exact, beta_prime=0.0, gamma_prime=0.0, kappa=1.0, mu=None, gravity=None):
        t = self.t
        res = np.zeros(6 * self.nn)
        mat = np.zeros((6 * self.nn, 6 * self.nn))
        beam_element_terms(
            np.arange(self.nn), q, v, vd, self.tangent,
            np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float),
            beta_prime, gamma_prime, kappa, np.zeros(6) if mu is None else np.asarray(mu, dtype=float),
            t.qp_weight, t.qp_jacobian, t.shape_interp, t.shape_deriv, t.qp_r0, t.qp_x0_prime, t.qp_m_star,
            t.qp_c_star, np.zeros((self.nn, 6)), np.zeros((t.qp_weight.size, 6)), self.w, res, mat, exact,
        )  # fmt: skip
        return res, mat


def moving_state(el: Element, relative_rotation: float = 0.4, seed: int = 5):
    """Displaced nodes with different rotations (relative rotations of about
    ``relative_rotation`` rad), random velocities and accelerations."""
    return random_beam_state(el.nn, relative_rotation, seed)


def fd_matrix(el: Element, q, v, vd, beta_prime, gamma_prime, kappa, **kw) -> np.ndarray:
    """Central differences of the residual along each Newton unknown's change of the state."""
    cols = []
    for k in range(6 * el.nn):
        node, c = divmod(k, 6)
        diff = []
        for h in (H, -H):
            qq, vv, aa = q.copy(), v.copy(), vd.copy()
            if c < 3:
                qq[node, c] += kappa * h
            else:
                e = np.zeros(3)
                e[c - 3] = 1.0
                qq[node, 3:7] = quat_multiply(np.array(quat_exp(*(kappa * h * (el.tangent[node] @ e)))), q[node, 3:7])
            vv[node, c] += gamma_prime * h
            aa[node, c] += beta_prime * h
            diff.append(el.terms(qq, vv, aa, exact=True, **kw)[0])
        cols.append((diff[0] - diff[1]) / (2.0 * H))
    return np.column_stack(cols)


MU = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
G = [0.3, -9.81, 1.2]
CASES = {
    "elastic": {},
    "damped": {"mu": MU},
    "gravity": {"gravity": G},
    "damped+gravity": {"mu": MU, "gravity": G},
}


def block_errors(el, q, v, vd, coeffs, kw) -> dict[str, float]:
    """Largest error of the translation and rotation columns over max|matrix|."""
    _, mat = el.terms(q, v, vd, exact=True, beta_prime=coeffs[0], gamma_prime=coeffs[1], kappa=coeffs[2], **kw)
    fd = fd_matrix(el, q, v, vd, *coeffs, **kw)
    scale = np.abs(fd).max()
    trans = np.concatenate([np.arange(6 * j, 6 * j + 3) for j in range(el.nn)])
    rot_ = trans + 3
    return {
        "translation": float(np.abs(mat - fd)[:, trans].max() / scale),
        "rotation": float(np.abs(mat - fd)[:, rot_].max() / scale),
    }


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_stiffness_is_exact_with_relative_rotations(case) -> None:
    """κ S 𝒯 (β′ = γ′ = 0) against differences along (u_j, T_j-mapped rotation increments)."""
    el = Element()
    q, v, vd = moving_state(el)
    err = block_errors(el, q, v, vd, (0.0, 0.0, 1.0), CASES[case])
    assert err["translation"] < TOL, err
    assert err["rotation"] < TOL, err


@pytest.mark.parametrize("case", ["damped+gravity"])
def test_full_iteration_matrix_is_exact(case) -> None:
    """β′ M + γ′ G + κ S 𝒯 with generalized-α-like coefficients, order 4, all columns."""
    el = Element(order=4)
    q, v, vd = moving_state(el, seed=7)
    err = block_errors(el, q, v, vd, (2.3, 1.7, 0.8), CASES[case])
    assert err["translation"] < TOL, err
    assert err["rotation"] < TOL, err


def test_kynema_mode_differs_only_in_the_stiffness() -> None:
    """Residual identical to the bit; β′/γ′ parts identical; with equal node rotations and no
    damping or gravity the stiffness agrees with Kynema's to round-off (both exact there)."""
    el = Element()
    q, v, vd = moving_state(el)
    kw = {"mu": MU, "gravity": G}
    r0, m0 = el.terms(q, v, vd, exact=False, beta_prime=2.0, gamma_prime=1.5, kappa=0.0, **kw)
    r1, m1 = el.terms(q, v, vd, exact=True, beta_prime=2.0, gamma_prime=1.5, kappa=0.0, **kw)
    assert np.array_equal(r0, r1) and np.array_equal(m0, m1)
    q, v, vd = moving_state(el, relative_rotation=0.0)
    _, k0 = el.terms(q, v, vd, exact=False)
    _, k1 = el.terms(q, v, vd, exact=True)
    assert np.abs(k0 - k1).max() < 1e-10 * np.abs(k0).max()
    q, v, vd = moving_state(el)
    _, k0 = el.terms(q, v, vd, exact=False)
    _, k1 = el.terms(q, v, vd, exact=True)
    assert np.abs(k0 - k1).max() > 1e-3 * np.abs(k0).max()  # Kynema's is approximate here


# ---------------------------------------------------------------------------
# Newton level: the rollup of one coarse element


def rollup_newton(order: int, exact: bool, fraction: float = 0.5):
    """Static solve of a straight cantilever (L = 10 m, Kynema's rollup section) under the tip
    moment ``fraction`` × 2π EI/L; returns (converged, iterations, residual norms per iteration)."""
    import kynemapy as kp
    from kynemapy.validation.beam_model import straight_beam

    c_star = np.diag([1770.0e3, 1770.0e3, 1770.0e3, 8.16e3, 86.9e3, 215.0e3])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(b, 10.0, np.eye(6), c_star, n_elements=1, order=order, acceleration=True)
    b.add_fixed_bc(beam.root)
    params = kp.StepParameters(
        h=1.0, dynamic=False, max_iter=50, atol=1e-11, rtol=1e-9, rho_inf=1.0, geometric_stiffness=exact
    )
    sim = kp.Simulation(b.build(), params)
    sim.inputs.f[beam.tip] = (0.0, 0.0, 0.0, 0.0, -fraction * 2.0 * math.pi * 86.9e3 / 10.0, 0.0)
    info = sim.step()
    return info, sim.state.q[beam.tip].copy()


def test_rollup_converges_quadratically_with_the_exact_tangent() -> None:
    """Order-6 element, full-circle tip moment, one static Newton solve from the straight beam
    (max 50 iterations, no bisection needed).  Kynema's tangent: 17 iterations, the error falls
    by a roughly constant factor (about 4) per iteration at the end; exact tangent: 9 iterations,
    the last ratios e_{k+1}/e_k fall like the errors themselves (e_{k+1} ≈ C e_k²).  Same solution."""
    info_k, tip_k = rollup_newton(6, exact=False, fraction=1.0)
    info_e, tip_e = rollup_newton(6, exact=True, fraction=1.0)
    assert info_k.converged and info_e.converged
    np.testing.assert_allclose(tip_e, tip_k, rtol=0, atol=1e-7)
    assert info_e.iterations <= info_k.iterations - 6, (info_e.iterations, info_k.iterations)
    ek = np.array(info_k.errors)
    ee = np.array(info_e.errors)
    rk = ek[-4:] / ek[-5:-1]  # Kynema: linear, ratios of about 0.25
    re = ee[-3:] / ee[-4:-1]  # exact: each ratio much smaller than the one before
    assert np.all(rk > 0.1), rk
    assert re[1] < 0.1 * re[0] and re[2] < 0.1 * re[1], re
