"""Unit tier: one whole beam element (:func:`beam_element_terms`), checks of our own.

Kynema has no unit test of a whole element; these check the element against closed forms and
against finite differences of its own residual:

* a uniformly stretched straight beam carries the axial force EA·e at its ends, nothing inside;
* a rigid motion (translation plus rotation of the whole element) strains nothing;
* the mass (β′) and gyroscopic/damping (γ′) parts of the iteration matrix are the exact
  derivatives of the residual with respect to the node accelerations and velocities;
* the stiffness part (tangent operators = identity) is the exact derivative with respect to node
  displacements and spatial rotation increments ``r ← exp(δθ) ⊗ r`` when the nodes share one
  rotation (elastic, geometric and inertial terms of a curved, twisted, displaced element).
  With relative rotations between nodes Kynema's tangent is approximate (error ∝ relative
  rotation; it neglects the variation of the normalised quaternion interpolation), and the
  damping terms ``P_D2`` (lower-left block: sign) and ``K_D2`` (no ``x̃ᵀ`` factor) of Kynema's
  kernels, reproduced as they are, are not the derivatives of the damping forces.
"""

from __future__ import annotations

import numpy as np
import pytest
from references import quat_multiply, quat_to_rotation_matrix, random_beam_state, section_mass

from kynemapy.engine.elements.beams.integrate import beam_element_terms, element_scratch
from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points
from kynemapy.engine.elements.beams.sections import element_tables
from kynemapy.math.quaternion import quat_exp


class Element:
    """A 3rd-order element (4 GLL nodes, 6 Gauss points) of a curved, twisted reference line
    with fully coupled sections varying along the span, evaluated through the compiled kernel."""

    def __init__(self, order: int = 3, straight: bool = False) -> None:
        rng = np.random.default_rng(11)
        self.nn = order + 1
        s = (gll_points(order) + 1.0) / 2.0
        x0 = np.zeros((self.nn, 7))
        x0[:, 0] = 4.0 * s
        if not straight:
            x0[:, 1] = 0.3 * np.sin(2.0 * s)
            x0[:, 2] = 0.2 * s**2
        for i in range(self.nn):
            x0[i, 3:7] = (1.0, 0.0, 0.0, 0.0) if straight else quat_exp(0.1 * i, 0.2, 0.3 * s[i])
        a = rng.normal(size=(6, 6))
        c_star = 1e3 * (a @ a.T + 6.0 * np.eye(6))
        b = rng.normal(size=(3, 3))
        m_star = section_mass(2.5, [0.0, 0.1, -0.05], b @ b.T + np.eye(3))
        self.quad = gauss_quadrature(6)
        self.t = element_tables(
            x0, s, self.quad, [0.0, 1.0], np.array([m_star, 1.2 * m_star]), np.array([c_star, 0.8 * c_star])
        )
        self.x0 = x0
        self.w = element_scratch(self.nn, 6)

    def terms(self, q, v, vd, *, beta_prime=0.0, gamma_prime=0.0, kappa=1.0, mu=None, gravity=None, c_star=None):
        t = self.t
        res = np.zeros(6 * self.nn)
        mat = np.zeros((6 * self.nn, 6 * self.nn))
        beam_element_terms(
            np.arange(self.nn), q, v, vd, np.tile(np.eye(3), (self.nn, 1, 1)),
            np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float),
            beta_prime, gamma_prime, kappa, np.zeros(6) if mu is None else np.asarray(mu, dtype=float),
            t.qp_weight, t.qp_jacobian, t.shape_interp, t.shape_deriv, t.qp_r0, t.qp_x0_prime, t.qp_m_star,
            t.qp_c_star if c_star is None else c_star, np.zeros((self.nn, 6)), np.zeros((t.qp_weight.size, 6)),
            self.w, res, mat, False,
        )  # fmt: skip
        return res, mat


def displaced_state(el: Element, relative_rotation: float, seed: int = 5):
    return random_beam_state(el.nn, relative_rotation, seed)


def finite_difference(fn, n: int, h: float = 1e-6) -> np.ndarray:
    """Central differences of fn(k, ±h) (the residual after perturbing coordinate k) over k < n."""
    return np.column_stack([(fn(k, h) - fn(k, -h)) / (2.0 * h) for k in range(n)])


def test_uniform_stretch_of_a_straight_beam() -> None:
    """Straight beam along x, u = e·x: node residuals −EA e (first node), +EA e (last), 0 inside,
    for a diagonal section (EA = C*[0, 0])."""
    el = Element(straight=True)
    e = 1e-3
    c_star = np.tile(np.diag([7.0e6, 1.0e6, 1.0e6, 2.0e3, 3.0e3, 4.0e3]), (el.t.qp_weight.size, 1, 1))
    q = np.zeros((el.nn, 7))
    q[:, 0] = e * el.x0[:, 0]
    q[:, 3] = 1.0
    zero = np.zeros((el.nn, 6))
    res, _ = el.terms(q, zero, zero, c_star=c_star)
    expected = np.zeros((el.nn, 6))
    expected[0, 0], expected[-1, 0] = -7.0e6 * e, 7.0e6 * e
    np.testing.assert_allclose(res.reshape(el.nn, 6), expected, rtol=0, atol=1e-7)


def test_rigid_motion_strains_nothing() -> None:
    """A rigid translation c and rotation R of the whole element (u = (R − I) x0 + c, every node
    rotated by R): zero residual without inertia and gravity."""
    el = Element()
    r = np.array(quat_exp(0.4, -0.7, 0.2))
    q = np.zeros((el.nn, 7))
    q[:, :3] = el.x0[:, :3] @ (quat_to_rotation_matrix(r) - np.eye(3)).T
    q[:, :3] += [0.3, -1.0, 2.0]
    q[:, 3:7] = r
    zero = np.zeros((el.nn, 6))
    res, _ = el.terms(q, zero, zero)
    assert np.abs(res).max() < 1e-9 * np.abs(el.t.qp_c_star).max()


@pytest.mark.parametrize("mu", [None, [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]], ids=["undamped", "damped"])
def test_mass_and_gyroscopic_parts_are_exact_derivatives(mu) -> None:
    """β′ part = ∂R/∂(ü, ω̇) and γ′ part = ∂R/∂(u̇, ω) (gyroscopic and damping), to 1e-6."""
    el = Element()
    q, v, vd = displaced_state(el, 0.2)
    n = 6 * el.nn

    def perturbed(which):
        def fn(k, h):
            vv, aa = v.copy(), vd.copy()
            (vv if which == "v" else aa)[k // 6, k % 6] += h
            return el.terms(q, vv, aa, mu=mu)[0]

        return fn

    _, m = el.terms(q, v, vd, beta_prime=1.0, kappa=0.0, mu=mu)
    _, g = el.terms(q, v, vd, gamma_prime=1.0, kappa=0.0, mu=mu)
    d_acc = finite_difference(perturbed("vd"), n)
    d_vel = finite_difference(perturbed("v"), n)
    assert np.abs(m - d_acc).max() < 1e-6 * np.abs(d_acc).max()
    assert np.abs(g - d_vel).max() < 1e-6 * np.abs(d_vel).max()


def stiffness_error(el: Element, q, v, vd, **kw) -> float:
    def fn(k, h):
        qq = q.copy()
        node, c = divmod(k, 6)
        if c < 3:
            qq[node, c] += h
        else:
            d = np.zeros(3)
            d[c - 3] = h
            qq[node, 3:7] = quat_multiply(np.array(quat_exp(*d)), q[node, 3:7])
        return el.terms(qq, v, vd, **kw)[0]

    _, s = el.terms(q, v, vd, **kw)
    fd = finite_difference(fn, 6 * el.nn)
    return float(np.abs(s - fd).max() / np.abs(fd).max())


def test_stiffness_is_the_exact_derivative_without_relative_rotation() -> None:
    """Elastic + geometric + inertial stiffness against central differences (rel. 1e-8): nodes
    displaced and rotated by one common rotation, in motion, curved twisted reference line."""
    el = Element()
    q, v, vd = displaced_state(el, 0.0)
    assert stiffness_error(el, q, v, vd) < 1e-8


def test_stiffness_error_with_relative_rotation_is_first_order() -> None:
    """With relative node rotations of size θ Kynema's tangent is off by O(θ) (quaternion
    interpolation not linearised): the error falls about linearly with θ."""
    el = Element()
    zero = np.zeros((el.nn, 6))
    errors = [stiffness_error(el, displaced_state(el, theta)[0], zero, zero) for theta in (0.04, 0.01)]
    assert errors[1] < errors[0] / 2.5
    assert errors[0] < 0.05


def test_the_plain_variant_is_kynemas_element_without_the_damping_code() -> None:
    """``exact=None`` (the plain beam unit, compiled without the damping and exact-stiffness
    code) gives bit for bit what Kynema's mode (``exact=False``, verified against Kynema's
    regressions) gives for an undamped element, moving, with every coefficient; a damped
    element given to it fails loudly (a NaN residual) instead of losing its damping."""
    el = Element()
    q, v, vd = displaced_state(el, 0.3)
    t = el.t

    def terms(exact, mu):
        res = np.zeros(6 * el.nn)
        mat = np.zeros((6 * el.nn, 6 * el.nn))
        beam_element_terms(
            np.arange(el.nn), q, v, vd, np.tile(np.eye(3), (el.nn, 1, 1)), np.array([0.0, 0.0, -9.81]),
            2.0, 1.5, 0.7, np.asarray(mu, dtype=float), t.qp_weight, t.qp_jacobian, t.shape_interp, t.shape_deriv,
            t.qp_r0, t.qp_x0_prime, t.qp_m_star, t.qp_c_star, np.zeros((el.nn, 6)), np.zeros((t.qp_weight.size, 6)),
            el.w, res, mat, exact,
        )  # fmt: skip
        return res, mat

    res_kynema, mat_kynema = terms(False, np.zeros(6))
    res_plain, mat_plain = terms(None, np.zeros(6))
    assert np.abs(res_kynema).max() > 1.0 and np.abs(mat_kynema).max() > 1.0
    np.testing.assert_array_equal(res_plain, res_kynema)
    np.testing.assert_array_equal(mat_plain, mat_kynema)
    res_damped, _ = terms(None, [0.01] * 6)
    assert np.isnan(res_damped).all()
