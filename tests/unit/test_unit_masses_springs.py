"""Unit tier: rigid-body (mass) building blocks and spring kernels.

Inputs and expected numbers are those of Kynema-FMB's unit tests
(``tests/unit_tests/system/masses`` and ``system/springs``, tolerance 1e-15; reference
§7.3); formulas in reference §3 and §4.1.  The building blocks are fed the same
arbitrary, non-skew "tilde" matrices as Kynema's tests.  Additional checks compare
with formulas evaluated independently in NumPy here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kynemapy.engine.elements.masses import (
    gravity_force,
    gyroscopic_matrix,
    inertia_stiffness_matrix,
    inertial_force,
    mass_element_terms,
    mass_matrix_components,
    rigid_inertia,
    rotate_section_matrix,
)
from kynemapy.engine.elements.springs import spring_coefficients, spring_element_terms, spring_stiffness_block

TOL = 1e-15


def m33(first: float) -> np.ndarray:
    """Row-major 3×3 matrix first, first+1, ..., first+8 (Kynema's test inputs)."""
    return np.arange(first, first + 9.0).reshape(3, 3)


def skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rot_literal(q) -> np.ndarray:
    """Rotation matrix of a possibly non-unit quaternion, written with squares (no normalisation)."""
    w, x, y, z = (float(c) for c in q)
    return np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )


def blockdiag2(r: np.ndarray) -> np.ndarray:
    out = np.zeros((6, 6))
    out[:3, :3] = r
    out[3:, 3:] = r
    return out


# ---------------------------------------------------------------------------
# Masses (tests/unit_tests/system/masses)
# ---------------------------------------------------------------------------


def test_calculate_gravity_force() -> None:
    out = np.zeros(6)
    gravity_force(1.0, np.array([46.0, 47.0, 48.0]), m33(37.0), out)
    np.testing.assert_allclose(out, [46.0, 47.0, 48.0, 5360.0, 5783.0, 6206.0], rtol=0.0, atol=TOL)
    # independent: [m g ; η̃ (m g)]
    g = np.array([46.0, 47.0, 48.0])
    np.testing.assert_allclose(np.concatenate([g, m33(37.0) @ g]), out, rtol=0.0, atol=TOL)


def test_calculate_inertial_forces() -> None:
    m = 1.0
    u_ddot = np.array([37.0, 38.0, 39.0])
    omega = np.array([40.0, 41.0, 42.0])
    omega_dot = np.array([43.0, 44.0, 45.0])
    eta_tilde = m33(46.0)
    rho = m33(55.0)
    eta = np.array([64.0, 65.0, 66.0])
    omega_tilde = np.array([[0.0, -42.0, 41.0], [42.0, 0.0, -40.0], [-41.0, 40.0, 0.0]])
    omega_dot_tilde = np.array([[0.0, -45.0, 44.0], [45.0, 0.0, -43.0], [-44.0, 43.0, 0.0]])
    out = np.zeros(6)
    inertial_force(
        m, u_ddot, omega, omega_dot, eta, eta_tilde, rho, omega_tilde, omega_dot_tilde,
        np.zeros((3, 3)), np.zeros(3), out,
    )  # fmt: skip
    expected = [-2984.0, 32.0, 2922.0, 20624.0, -2248.0, 22100.0]
    np.testing.assert_allclose(out, expected, rtol=0.0, atol=TOL)
    # independent: F_I = [m ü + (m ω̃ω̃ + m ω̇̃) η ; η̃ (m ü) + ρ ω̇ + (ω̃ ρ) ω]
    f_u = m * u_ddot + (m * omega_tilde @ omega_tilde + m * omega_dot_tilde) @ eta
    f_r = eta_tilde @ (m * u_ddot) + rho @ omega_dot + (omega_tilde @ rho) @ omega
    np.testing.assert_allclose(np.concatenate([f_u, f_r]), expected, rtol=0.0, atol=TOL)


def test_calculate_gyroscopic_matrix() -> None:
    m = 1.0
    omega = np.array([40.0, 41.0, 42.0])
    omega_tilde = m33(46.0)  # deliberately not skew, as in Kynema's test
    rho = m33(55.0)
    eta = np.array([64.0, 65.0, 66.0])
    out = np.full((6, 6), np.nan)
    gyroscopic_matrix(m, omega, eta, rho, omega_tilde, np.zeros((3, 3)), np.zeros(3), np.zeros(3), out)
    expected = np.array(
        [
            [0, 0, 0, 18, 10301, -9734],
            [0, 0, 0, -10322, -30, 9182],
            [0, 0, 0, 9764, -9191, 12],
            [0, 0, 0, 8184, 15953, 1207],
            [0, 0, 0, 1078, 8856, 15896],
            [0, 0, 0, 16487, 2497, 9546],
        ],
        dtype=float,
    )
    np.testing.assert_allclose(out, expected, rtol=0.0, atol=TOL)
    # independent: G12 = ((ω̃ mη)~)ᵀ + ω̃ (m η̃)ᵀ, G22 = ω̃ ρ − (ρ ω)~
    g12 = skew(omega_tilde @ (m * eta)).T + omega_tilde @ skew(m * eta).T
    g22 = omega_tilde @ rho - skew(rho @ omega)
    np.testing.assert_allclose(g12, expected[:3, 3:], rtol=0.0, atol=TOL)
    np.testing.assert_allclose(g22, expected[3:, 3:], rtol=0.0, atol=TOL)


def test_calculate_inertia_stiffness_matrix() -> None:
    m = 1.0
    u_ddot = np.array([37.0, 38.0, 39.0])
    omega = np.array([40.0, 41.0, 42.0])
    omega_dot = np.array([43.0, 44.0, 45.0])
    omega_tilde = m33(46.0)
    omega_dot_tilde = m33(55.0)
    rho = m33(64.0)
    eta = np.array([73.0, 74.0, 75.0])
    out = np.full((6, 6), np.nan)
    inertia_stiffness_matrix(
        m, u_ddot, omega, omega_dot, eta, rho, omega_tilde, omega_dot_tilde,
        np.zeros((3, 3)), np.zeros((3, 3)), np.zeros(3), out,
    )  # fmt: skip
    expected = np.array(
        [
            [0, 0, 0, 3396, -6792, 3396],
            [0, 0, 0, 3609, -7218, 3609],
            [0, 0, 0, 3822, -7644, 3822],
            [0, 0, 0, 1407766, 1481559, 1465326],
            [0, 0, 0, 1496300, 1558384, 1576048],
            [0, 0, 0, 1604122, 1652877, 1652190],
        ],
        dtype=float,
    )
    np.testing.assert_allclose(out, expected, rtol=0.0, atol=TOL)
    # independent: K12 = (ω̇̃ + ω̃ω̃)(m η̃)ᵀ ; K22 = ρ ω̇̃ + ü~ (m η̃) − (ρ ω̇)~ + ω̃ (ρ ω̃ − (ρω)~)
    k12 = (omega_dot_tilde + omega_tilde @ omega_tilde) @ skew(m * eta).T
    k22 = (
        rho @ omega_dot_tilde
        + skew(u_ddot) @ skew(m * eta)
        - skew(rho @ omega_dot)
        + omega_tilde @ (rho @ omega_tilde - skew(rho @ omega))
    )
    np.testing.assert_allclose(k12, expected[:3, 3:], rtol=0.0, atol=TOL)
    np.testing.assert_allclose(k22, expected[3:, 3:], rtol=0.0, atol=TOL)


def test_calculate_mass_matrix_components() -> None:
    muu = np.arange(1.0, 37.0).reshape(6, 6)
    eta = np.zeros(3)
    rho = np.zeros((3, 3))
    mass_matrix_components(muu, eta, rho)
    np.testing.assert_allclose(eta, [32.0, -31.0, 25.0], rtol=0.0, atol=TOL)
    np.testing.assert_allclose(rho, [[22, 23, 24], [28, 29, 30], [34, 35, 36]], rtol=0.0, atol=TOL)


ROTATE_SECTION_EXPECTED = np.array(
    [
        [2052.0, 9000.0, 12564.0, 2160.0, 9540.0, 13320.0],
        [2700.0, 7200.0, 9900.0, 3240.0, 9900.0, 13680.0],
        [3564.0, 9000.0, 12348.0, 4320.0, 12780.0, 17640.0],
        [2700.0, 12240.0, 17100.0, 2808.0, 12780.0, 17856.0],
        [5940.0, 23400.0, 32580.0, 6480.0, 26100.0, 36360.0],
        [8100.0, 31680.0, 44100.0, 8856.0, 35460.0, 49392.0],
    ]
)


def test_rotate_section_matrix() -> None:
    """Kynema RotateSectionMatrixMassesTests.OneNode: xr = (1,2,3,4) (non-unit), C* = [[1..36]]."""
    xr = np.array([1.0, 2.0, 3.0, 4.0])
    c_star = np.arange(1.0, 37.0).reshape(6, 6)
    out = np.zeros((6, 6))
    rotate_section_matrix(xr, c_star, np.zeros((3, 3)), np.zeros((6, 6)), out)
    np.testing.assert_allclose(out, ROTATE_SECTION_EXPECTED, rtol=0.0, atol=TOL)
    # independent: diag(R,R) C* diag(R,R)ᵀ with R from the literal, non-normalised formula
    big_r = blockdiag2(rot_literal(xr))
    ref = big_r @ c_star @ big_r.T
    np.testing.assert_allclose(ref[0], [2052.0, 9000.0, 12564.0, 2160.0, 9540.0, 13320.0], rtol=0.0, atol=TOL)
    np.testing.assert_allclose(ref, ROTATE_SECTION_EXPECTED, rtol=0.0, atol=TOL)


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ((1.0, 0.0, 0.0, 0.0), np.arange(1.0, 37.0).reshape(6, 6)),
        (
            (0.0, 1.0, 0.0, 0.0),
            np.array(
                [
                    [1, -2, -3, 4, -5, -6],
                    [-7, 8, 9, -10, 11, 12],
                    [-13, 14, 15, -16, 17, 18],
                    [19, -20, -21, 22, -23, -24],
                    [-25, 26, 27, -28, 29, 30],
                    [-31, 32, 33, -34, 35, 36],
                ],
                dtype=float,
            ),
        ),
        (
            (math.cos(math.pi / 8), 0.0, math.sin(math.pi / 8), 0.0),
            np.array(
                [
                    [16.0, 11.313708498984761, 1.9999999999999982, 22.000000000000004, 15.556349186104047,
                     1.9999999999999987],
                    [11.313708498984759, 8.0, math.sqrt(2.0), 15.556349186104045, 11.0, math.sqrt(2.0)],
                    [11.999999999999998, 8.4852813742385695, -1.0638139115010993e-15, 11.999999999999998,
                     8.4852813742385695, -2.3198878784481192e-15],
                    [52.000000000000007, 36.76955262170047, 1.999999999999996, 58.0, 41.012193308819761,
                     1.9999999999999949],
                    [36.76955262170047, 26.0, math.sqrt(2.0), 41.012193308819754, 29.0, math.sqrt(2.0)],
                    [11.999999999999996, 8.4852813742385678, -5.4353103904786874e-16, 11.999999999999995,
                     8.4852813742385678, -1.7996050059948887e-15],
                ]
            ),
        ),
    ],
    ids=["identity", "pi_about_x", "quarter_pi_about_y"],
)  # fmt: skip
def test_rotate_section_matrix_unit_quaternions(q, expected) -> None:
    """Same operation as Kynema's math::RotateMatrix6 (test_matrix_operations.cpp, tolerance 1e-12)."""
    out = np.zeros((6, 6))
    rotate_section_matrix(np.array(q), np.arange(1.0, 37.0).reshape(6, 6), np.zeros((3, 3)), np.zeros((6, 6)), out)
    np.testing.assert_allclose(out, expected, rtol=0.0, atol=1e-12)


def test_mass_element_terms_free_body_consistency() -> None:
    """Assembled rigid-body terms for a CM-at-node body equal the §3 expressions evaluated in NumPy."""
    m = 2.5
    j = np.array([[1.2, 0.1, -0.05], [0.1, 0.9, 0.02], [-0.05, 0.02, 1.7]])
    m_star = np.zeros((6, 6))
    m_star[:3, :3] = m * np.eye(3)
    m_star[3:, 3:] = j
    r0 = np.array([math.cos(0.2), math.sin(0.2), 0.0, 0.0])
    r = np.array([math.cos(0.35), 0.0, 0.0, math.sin(0.35)])
    v = np.array([0.1, -0.2, 0.3, 0.5, -1.5, 2.0])
    vd = np.array([1.0, 2.0, -0.5, 0.7, 0.3, -0.4])
    t_rot = np.array([[1.0, 0.02, -0.01], [-0.02, 1.0, 0.03], [0.01, -0.03, 1.0]])
    gravity = np.array([0.0, 0.0, -9.81])
    beta_prime, gamma_prime = 7.0, 3.0
    res = np.zeros(6)
    mat = np.zeros((6, 6))
    mass_element_terms(
        m_star, r0, r, v, vd, t_rot, gravity, beta_prime, gamma_prime, 1.0, False,
        np.zeros((8, 3, 3)), np.zeros((6, 3)), np.zeros((1, 4)), np.zeros((4, 6, 6)), res, mat,
    )  # fmt: skip
    # independent evaluation
    w0, x0_, y0, z0 = r0
    a = r
    xr = np.array([
        a[0] * w0 - a[1] * x0_ - a[2] * y0 - a[3] * z0,
        a[0] * x0_ + a[1] * w0 + a[2] * z0 - a[3] * y0,
        a[0] * y0 - a[1] * z0 + a[2] * w0 + a[3] * x0_,
        a[0] * z0 + a[1] * y0 - a[2] * x0_ + a[3] * w0,
    ])  # fmt: skip
    big_r = blockdiag2(rot_literal(xr))
    mm = big_r @ m_star @ big_r.T
    rho = mm[3:, 3:]
    omega, omega_dot, u_ddot = v[3:], vd[3:], vd[:3]
    w_t, wd_t = skew(omega), skew(omega_dot)
    f_i = np.concatenate([m * u_ddot, rho @ omega_dot + w_t @ rho @ omega])
    f_g = np.concatenate([m * gravity, np.zeros(3)])
    np.testing.assert_allclose(res, f_i - f_g, rtol=0.0, atol=1e-12)
    g_mat = np.zeros((6, 6))
    g_mat[3:, 3:] = w_t @ rho - skew(rho @ omega)
    k_mat = np.zeros((6, 6))
    k_mat[3:, 3:] = rho @ wd_t - skew(rho @ omega_dot) + w_t @ (rho @ w_t - skew(rho @ omega))
    tangent = np.eye(6)
    tangent[3:, 3:] = t_rot
    np.testing.assert_allclose(mat, beta_prime * mm + gamma_prime * g_mat + k_mat @ tangent, rtol=0.0, atol=1e-12)
    # κ weighs the inertial stiffness K only (κ = 0: the initial accelerations' matrix β′ M + γ′ G)
    for kappa in (0.0, 0.5):
        res_k = np.zeros(6)
        mat_k = np.zeros((6, 6))
        mass_element_terms(
            m_star, r0, r, v, vd, t_rot, gravity, beta_prime, gamma_prime, kappa, False,
            np.zeros((8, 3, 3)), np.zeros((6, 3)), np.zeros((1, 4)), np.zeros((4, 6, 6)), res_k, mat_k,
        )  # fmt: skip
        np.testing.assert_array_equal(res_k, res)
        expected = beta_prime * mm + gamma_prime * g_mat + kappa * k_mat @ tangent
        np.testing.assert_allclose(mat_k, expected, rtol=0.0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rigid_inertia_is_bit_identical_to_the_building_blocks(seed: int) -> None:
    """The fused kernel of the rigid bodies and the beams' points (:func:`rigid_inertia`) gives
    every entry of F_I, F_g, G and K bit for bit as Kynema's building blocks do
    (:func:`inertial_force`, :func:`gravity_force`, :func:`gyroscopic_matrix`,
    :func:`inertia_stiffness_matrix`), here with the centre of mass off the node."""
    rng = np.random.default_rng(seed)
    m = 3.7
    eta = rng.standard_normal(3) * 0.3
    j = rng.standard_normal((3, 3))
    m_star = np.zeros((6, 6))
    m_star[:3, :3] = m * np.eye(3)
    m_star[:3, 3:] = m * skew(eta).T
    m_star[3:, :3] = m * skew(eta)
    m_star[3:, 3:] = j @ j.T + np.eye(3)
    q = rng.standard_normal(4)
    muu = np.zeros((6, 6))
    rotate_section_matrix(q / np.linalg.norm(q), m_star, np.zeros((3, 3)), np.zeros((6, 6)), muu)
    omega, omega_dot, u_ddot, gravity = rng.standard_normal((4, 3))
    fi, fg = np.zeros(6), np.zeros(6)
    blocks = np.zeros((4, 3, 3))
    rigid_inertia(
        muu, *omega, *u_ddot, *omega_dot, gravity, False, np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)),
        fi, fg, blocks[0], blocks[1], blocks[2], blocks[3],
    )  # fmt: skip
    mass = muu[0, 0]
    e, rho = np.zeros(3), np.zeros((3, 3))
    mass_matrix_components(muu, e, rho)
    e_t, w_t, wd_t = skew(e), skew(omega), skew(omega_dot)
    s33, v1, v2 = np.zeros((3, 3)), np.zeros(3), np.zeros(3)
    fi_ref, fg_ref, g_ref, k_ref = np.zeros(6), np.zeros(6), np.zeros((6, 6)), np.zeros((6, 6))
    inertial_force(mass, u_ddot, omega, omega_dot, e, e_t, rho, w_t, wd_t, s33, v1, fi_ref)
    gravity_force(mass, gravity, e_t, fg_ref)
    gyroscopic_matrix(mass, omega, e, rho, w_t, s33, v1, v2, g_ref)
    inertia_stiffness_matrix(mass, u_ddot, omega, omega_dot, e, rho, w_t, wd_t, s33, np.zeros((3, 3)), v1, k_ref)
    np.testing.assert_array_equal(fi, fi_ref)
    np.testing.assert_array_equal(fg, fg_ref)
    np.testing.assert_array_equal(blocks[0], g_ref[:3, 3:])
    np.testing.assert_array_equal(blocks[1], g_ref[3:, 3:])
    np.testing.assert_array_equal(blocks[2], k_ref[:3, 3:])
    np.testing.assert_array_equal(blocks[3], k_ref[3:, 3:])
    assert not g_ref[:, :3].any() and not k_ref[:, :3].any()


# ---------------------------------------------------------------------------
# Springs (tests/unit_tests/system/springs)
# ---------------------------------------------------------------------------


def _spring(x0, u1, u2, k, l_ref):
    r = np.zeros(3)
    res = np.zeros(3)
    mat = np.zeros((3, 3))
    length = spring_element_terms(
        np.asarray(x0, dtype=float), np.asarray(u1, dtype=float), np.asarray(u2, dtype=float), k, l_ref, r, res, mat
    )
    return length, r, res, mat


def test_calculate_distance_components() -> None:
    _, r, _, _ = _spring([1.0, 2.0, 3.0], [0.1, 0.2, 0.3], [0.4, 0.5, 0.6], 1.0, 1.0)
    np.testing.assert_allclose(r, [1.3, 2.3, 3.3], rtol=0.0, atol=TOL)


@pytest.mark.parametrize(
    ("k", "l_ref", "length", "c1", "c2"),
    [(100.0, 1.0, 2.0, -50.0, 12.5), (200.0, 5.0, 4.0, 50.0, 15.625), (300.0, 3.0, 6.0, -150.0, 25.0 / 6.0)],
)
def test_calculate_force_coefficients(k, l_ref, length, c1, c2) -> None:
    got1, got2 = spring_coefficients(k, l_ref, length)
    assert got1 == pytest.approx(c1, abs=TOL, rel=0.0)
    assert got2 == pytest.approx(c2, abs=TOL, rel=0.0)


def test_force_coefficients_zero_reference_length() -> None:
    """§4.1: l_ref = 0 → c1 = −k, c2 = 0."""
    assert spring_coefficients(10.0, 0.0, 2.0) == (-10.0, 0.0)


@pytest.mark.parametrize(
    ("r", "c1", "expected"),
    [((1.0, 2.0, 3.0), 2.0, (2.0, 4.0, 6.0)), ((4.0, 5.0, 6.0), -1.0, (-4.0, -5.0, -6.0)),
     ((7.0, 8.0, 9.0), 0.5, (3.5, 4.0, 4.5))],
    ids=["c1_2", "c1_neg1", "c1_half"],
)  # fmt: skip
def test_calculate_force_vectors(r, c1, expected) -> None:
    """f = c1 r.  kynemapy computes c1 inside ``spring_element_terms``; k and l_ref are chosen so
    that c1 = k (l_ref/l − 1) is exactly the tested value (l_ref = 2l gives l_ref/l = 2 exactly)."""
    length = math.sqrt(sum(c * c for c in r))
    if c1 == -1.0:
        k, l_ref = 1.0, 0.0  # c1 = −k
    else:
        k, l_ref = c1, 2.0 * length  # c1 = k (2 − 1)
    got_length, got_r, res, _ = _spring(r, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], k, l_ref)
    np.testing.assert_array_equal(got_r, r)
    assert got_length == length
    np.testing.assert_allclose(res, expected, rtol=0.0, atol=TOL)


@pytest.mark.parametrize(("r", "length"), [((1.0, 0.0, 0.0), 1.0), ((3.0, 4.0, 0.0), 5.0), ((1.0, 2.0, 2.0), 3.0)])
def test_calculate_length(r, length) -> None:
    got, _, _, _ = _spring(r, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 1.0, 1.0)
    assert got == pytest.approx(length, abs=1e-16, rel=0.0)


def test_calculate_stiffness_matrix() -> None:
    out = np.zeros((3, 3))
    spring_stiffness_block(2.0, 1.0, np.array([1.0, 2.0, 3.0]), 1.0, out)
    expected = np.array([[14.0, -2.0, -3.0], [-2.0, 11.0, -6.0], [-3.0, -6.0, 6.0]])
    np.testing.assert_allclose(out, expected, rtol=0.0, atol=TOL)
    # independent: (c1 − c2 l²) I − c2 r̃ r̃
    r = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose((2.0 - 1.0) * np.eye(3) - skew(r) @ skew(r), expected, rtol=0.0, atol=TOL)


def test_spring_element_terms_physical() -> None:
    """Force and block of a stretched spring vs. §4.1 evaluated in NumPy (A = c1 I − c2 r rᵀ)."""
    x0 = np.array([2.0, 0.5, -1.0])
    u1 = np.array([0.1, -0.2, 0.05])
    u2 = np.array([-0.3, 0.4, 0.2])
    k, l_ref = 48.9e3, 1.7
    length, r, res, mat = _spring(x0, u1, u2, k, l_ref)
    r_ref = x0 + u2 - u1
    l_ref_len = np.linalg.norm(r_ref)
    c1 = k * (l_ref / l_ref_len - 1.0)
    c2 = k * l_ref / l_ref_len**3
    assert length == pytest.approx(l_ref_len, rel=1e-15)
    np.testing.assert_allclose(r, r_ref, rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(res, c1 * r_ref, rtol=1e-13, atol=0.0)
    np.testing.assert_allclose(mat, c1 * np.eye(3) - c2 * np.outer(r_ref, r_ref), rtol=0.0, atol=1e-9)
    # A = c1 I − c2 r rᵀ is ∂f/∂u2 = −∂f/∂u1 of the node-1 force f = c1 r (central differences).
    # The true Jacobian of the residual (+f on node 1, −f on node 2) is therefore [[−A, A], [A, −A]];
    # Kynema assembles [[A, −A], [−A, A]] (reference §4.1), which is the stepper's business, not this kernel's.
    eps = 1e-6
    jac = np.zeros((3, 3))
    for j in range(3):
        du = np.zeros(3)
        du[j] = eps
        _, _, fp, _ = _spring(x0, u1, u2 + du, k, l_ref)
        _, _, fm, _ = _spring(x0, u1, u2 - du, k, l_ref)
        jac[:, j] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(jac, mat, rtol=0.0, atol=1e-6 * np.abs(mat).max())
