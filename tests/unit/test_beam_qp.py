"""Unit tier: the beam's per-quadrature-point kernels (strain, elastic and damping forces and
matrices), with the inputs and expected numbers of Kynema-FMB's unit tests
``tests/unit_tests/system/beams/test_calculate_*.cpp`` (tolerance 1e-15, Kynema's
``kTolerance``; all expected values are integers).  As in Kynema's tests, the "tilde" inputs are
arbitrary non-skew matrices and the quaternions are not unit.  The last tests are checks of our
own: the strain rate against its formula, and a whole quadrature point of a straight beam.
"""

from __future__ import annotations

import numpy as np

from kynemapy.engine.elements.beams import qp as k
from kynemapy.engine.elements.beams.integrate import element_scratch

TOL = 1e-15
C36 = np.arange(1.0, 37.0).reshape(6, 6)  # Kynema's Cuu / Duu input 1 … 36


def m33(first: float) -> np.ndarray:
    return np.arange(first, first + 9.0).reshape(3, 3)


def v(*values: float) -> np.ndarray:
    return np.array(values, dtype=float)


def check(got: np.ndarray, expected) -> None:
    np.testing.assert_allclose(got, np.asarray(expected, dtype=float).reshape(got.shape), rtol=0, atol=TOL)


def s33() -> np.ndarray:
    return np.zeros((6, 3, 3))


def test_strain() -> None:
    """Kynema ``test_calculate_strain.cpp``, ``CalculateStrainTests.OneNode`` (1e-15)."""
    out = np.zeros(6)
    k.strain(v(1, 2, 3), v(4, 5, 6), v(7, 8, 9, 10), v(11, 12, 13, 14), out)
    check(out, [-793.0, -413.0, -621.0, -16.0, 0.0, -32.0])


def test_temporary_variables() -> None:
    """Kynema ``test_calculate_temporary_variables.cpp``, ``CalculateTemporaryVariablesTests.OneNode`` (1e-15)."""
    out = np.zeros((3, 3))
    k.x0pup_tilde(v(1, 2, 3), v(4, 5, 6), np.zeros(3), out)
    check(out, [0.0, -9.0, 7.0, 9.0, 0.0, -5.0, -7.0, 5.0, 0.0])


def test_force_fc() -> None:
    """Kynema ``test_calculate_force_FC.cpp``, ``CalculateForceFCTests.OneNode`` (1e-15)."""
    out = np.zeros(6)
    k.elastic_force_fc(C36, v(37, 38, 39, 40, 41, 42), out)
    check(out, [847.0, 2269.0, 3691.0, 5113.0, 6535.0, 7957.0])


def test_force_fd() -> None:
    """Kynema ``test_calculate_force_FD.cpp``, ``CalculateForceFDTests.OneNode`` (1e-15)."""
    out = np.zeros(6)
    k.elastic_force_fd(m33(1.0), v(10, 11, 12, 13, 14, 15), out)
    check(out, [0.0, 0.0, 0.0, 138.0, 171.0, 204.0])


def test_ouu() -> None:
    """Kynema ``test_calculate_Ouu.cpp``, ``CalculateOuuTests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.ouu(C36, m33(37.0), m33(46.0), m33(55.0), out)
    expected = np.zeros((6, 6))
    expected[:, 3:] = [
        [191, 196, 201],
        [908, 931, 954],
        [1625, 1666, 1707],
        [2360, 2419, 2478],
        [3077, 3154, 3231],
        [3794, 3889, 3984],
    ]
    check(out, expected)


def test_puu() -> None:
    """Kynema ``test_calculate_Puu.cpp``, ``CalculatePuuTests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.puu(C36, m33(37.0), m33(55.0), out)
    check(
        out,
        [0.0] * 18
        + [931, 1052, 1173, 1236, 1356, 1476, 955, 1079, 1203, 1266, 1389, 1512, 979, 1106, 1233, 1296, 1422, 1548],
    )


def test_quu() -> None:
    """Kynema ``test_calculate_Quu.cpp``, ``CalculateQuuTests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.quu(C36, m33(37.0), m33(55.0), np.zeros((3, 3)), out)
    check(
        out,
        [0.0] * 18
        + [0, 0, 0, 113262, 116130, 118998, 0, 0, 0, 115986, 118923, 121860, 0, 0, 0, 118710, 121716, 124722],
    )


def test_force_fd1() -> None:
    """Kynema ``test_calculate_force_FD1.cpp``, ``CalculateForceFD1Tests.OneNode`` (1e-15)."""
    out = np.zeros(6)
    k.damping_force_fd1(C36, v(37, 38, 39, 40, 41, 42), out)
    check(out, [847.0, 2269.0, 3691.0, 5113.0, 6535.0, 7957.0])


def test_force_fd2() -> None:
    """Kynema ``test_calculate_force_FD2.cpp``, ``CalculateForceFD2Tests.OneNode`` (1e-15)."""
    out = np.zeros(6)
    k.damping_force_fd2(C36, v(37, 38, 39), v(40, 41, 42), v(43, 44, 45, 46, 47, 48), out)
    check(out, [0.0, 0.0, 0.0, -124180.0, 248360.0, -124180.0])


def test_d_d1() -> None:
    """Kynema ``test_calculate_DD1.cpp``, ``CalculateD_D1Tests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.dd1(v(47, 48, 49), C36, np.zeros((3, 3)), out)
    expected = np.zeros((6, 6))
    expected[:, 3:] = [[-43, 86, -43], [-37, 74, -37], [-31, 62, -31], [-25, 50, -25], [-19, 38, -19], [-13, 26, -13]]
    check(out, expected)


def test_d_d2() -> None:
    """Kynema ``test_calculate_DD2.cpp``, ``CalculateD_D2Tests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.dd2(v(62, 63, 64), v(65, 66, 67), C36, np.zeros(3), np.zeros((3, 3)), out)
    expected = np.zeros((6, 6))
    expected[3] = [-760, -758, -756, -754, -752, -750]
    expected[4] = [1520, 1516, 1512, 1508, 1504, 1500]
    expected[5] = [-760, -758, -756, -754, -752, -750]
    check(out, expected)


def test_g_d1() -> None:
    """Kynema ``test_calculate_GD1.cpp``, ``CalculateG_D1Tests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.gd1(v(40, 41, 42, 43), v(62, 63, 64), v(53, 54, 55), C36, np.zeros(3), s33(), out)
    expected = np.zeros((6, 6))
    expected[:, 3:] = [
        [-423257, 816274, -403097],
        [-380387, 670054, -299747],
        [-337517, 523834, -196397],
        [-294647, 377614, -93047],
        [-251777, 231394, 10303],
        [-208907, 85174, 113653],
    ]
    check(out, expected)


def test_g_d2() -> None:
    """Kynema ``test_calculate_GD2.cpp``, ``CalculateG_D2Tests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.gd2(v(40, 41, 42, 43), v(62, 63, 64), v(65, 66, 67), v(53, 54, 55), C36, np.zeros(3), s33(), out)
    expected = np.zeros((6, 6))
    expected[3:, 3:] = [
        [-6291004, 20202488, -13931644],
        [12582008, -40404976, 27863288],
        [-6291004, 20202488, -13931644],
    ]
    check(out, expected)


def test_p_d2() -> None:
    """Kynema ``test_calculate_PD2.cpp``, ``CalculateP_D2Tests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    k.pd2(v(62, 63, 64), v(65, 66, 67), v(47, 48, 49), v(56, 57, 58), v(59, 60, 61), C36, np.zeros(3), s33(), out)
    expected = np.zeros((6, 6))
    expected[3:] = [
        [-0.0, 5458, -3352, -848, 1696, -848],
        [-5458, -0.0, 1246, 1696, -3392, 1696],
        [3352, -1246, -0.0, -848, 1696, -848],
    ]
    check(out, expected)


KD1_EXPECTED = [
    [61038794, 1126704, -58800314],
    [53071816, 975002, -51126612],
    [45119106, 827512, -43458754],
    [37154234, 694290, -35799320],
    [29180938, 536270, -28112982],
    [21240864, 382462, -20451442],
]


def test_k_d1() -> None:
    """Kynema ``test_calculate_KD1.cpp``, ``CalculateK_D1Tests.OneNode`` (1e-15)."""
    out = np.zeros((6, 6))
    args = (v(40, 41, 42, 43), v(62, 63, 64), v(47, 48, 49), v(53, 54, 55), v(56, 57, 58), v(59, 60, 61))
    k.kd1(*args, C36, np.zeros(3), s33(), out)
    expected = np.zeros((6, 6))
    expected[:, 3:] = KD1_EXPECTED
    check(out, expected)


def test_k_d2() -> None:
    """Kynema ``test_calculate_KD2.cpp``, ``CalculateK_D2Tests.OneNode`` (1e-15): block 22 equals
    block 12 of K_D1 (Kynema's kernel has no x̃ᵀ factor here)."""
    out = np.zeros((6, 6))
    args = (v(40, 41, 42, 43), v(62, 63, 64), v(47, 48, 49), v(53, 54, 55), v(56, 57, 58), v(59, 60, 61))
    k.kd2(*args, C36, np.zeros(3), s33(), out)
    expected = np.zeros((6, 6))
    expected[3:, 3:] = KD1_EXPECTED[:3]
    check(out, expected)


# ---------------------------------------------------------------------------
# checks of our own


def skew(a) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def rot_literal(q) -> np.ndarray:
    w, x, y, z = q
    return np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )


def test_strain_dot_matches_its_formula() -> None:
    """``ε̇ = u̇′ − ω̃ R(r) x0′``, ``κ̇ = ω′ + ω̃ κ`` (Kynema's ``calculate_strain_dot.hpp``, no unit
    test there) against the formula evaluated with numpy (1e-12 relative)."""
    rng = np.random.default_rng(3)
    kappa, omega, u_dot_prime, omega_prime, x0p = (rng.normal(size=3) for _ in range(5))
    r = rng.normal(size=4)
    r /= np.linalg.norm(r)
    out = np.zeros(6)
    k.strain_dot(kappa, r, omega, u_dot_prime, omega_prime, x0p, out)
    np.testing.assert_allclose(out[:3], u_dot_prime - skew(omega) @ rot_literal(r) @ x0p, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out[3:], omega_prime + skew(omega) @ kappa, rtol=1e-12, atol=1e-14)


def test_strain_of_rigid_rotation_is_zero() -> None:
    """A rigid rotation r (constant along the beam, r′ = 0) with u′ = (R − I) x0′ has zero strain."""
    r = np.array([0.9, 0.1, -0.3, 0.2])
    r /= np.linalg.norm(r)
    x0p = np.array([0.6, 0.8, 0.0])
    out = np.zeros(6)
    k.strain(x0p, (rot_literal(r) - np.eye(3)) @ x0p, r, np.zeros(4), out)
    np.testing.assert_allclose(out, 0.0, rtol=0, atol=1e-15)


def test_quadrature_point_of_stretched_straight_beam() -> None:
    """Straight beam along x, uniform stretch u′ = (e, 0, 0): strain (e, 0, …), F_C = C* e (no
    rotation), F_D = 0, and O, P, Q from their formulas with Ñ = (F_C)~ (quadrature-point driver
    :func:`qp_stiffness_values` against hand-built inputs to the block kernels)."""
    e = 1e-3
    node_u = np.zeros((2, 7))
    node_u[:, 3] = 1.0
    node_u[1, 0] = 2.0 * e  # element of length 2 (J = 1), ξ = ±1
    shape_interp = np.array([[0.5], [0.5]])
    shape_deriv = np.array([[-0.5], [0.5]])
    c_star = np.diag([10.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    c_star[0, 4] = c_star[4, 0] = 0.5  # coupling
    w = element_scratch(2, 1)
    fc, fd = np.zeros(6), np.zeros(6)
    cuu, o, p, q = (np.zeros((6, 6)) for _ in range(4))
    k.qp_stiffness_values(
        1.0, shape_interp, shape_deriv, 0, np.array([1.0, 0, 0, 0]), np.array([1.0, 0, 0]), c_star, node_u,
        w.s3, w.s33, w.s4, w.s6, w.s66, fc, fd, cuu, o, p, q,
    )  # fmt: skip
    strain = np.array([e, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(cuu, c_star, rtol=0, atol=0)
    np.testing.assert_allclose(fc, c_star @ strain, rtol=1e-15, atol=1e-18)
    x_tilde = skew([1.0 + e, 0.0, 0.0])
    np.testing.assert_allclose(fd[3:], x_tilde.T @ fc[:3], rtol=1e-15, atol=1e-18)
    n_tilde, m_tilde = skew(fc[:3]), skew(fc[3:])
    np.testing.assert_allclose(o[:3, 3:], c_star[:3, :3] @ x_tilde - n_tilde, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(o[3:, 3:], c_star[3:, :3] @ x_tilde - m_tilde, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(p[3:, :3], n_tilde + x_tilde.T @ c_star[:3, :3], rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(p[3:, 3:], x_tilde.T @ c_star[:3, 3:], rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(q[3:, 3:], x_tilde.T @ (c_star[:3, :3] @ x_tilde - n_tilde), rtol=1e-14, atol=1e-16)


def test_quadrature_point_driver_is_bit_identical_to_the_block_kernels() -> None:
    """:func:`qp_stiffness_values` forms F_D, O, P and Q inline (without the tilde matrices'
    zero terms); at a general point (three nodes displaced and rotated, a full C*) every entry
    equals, bit for bit, what Kynema's block kernels (:func:`elastic_force_fd`, :func:`ouu`,
    :func:`puu`, :func:`quu`) give from the same C, F_C and x0′ + u′."""
    rng = np.random.default_rng(3)
    node_u = rng.standard_normal((3, 7)) * 0.1
    node_u[:, 3] += 1.0
    shape_interp = rng.standard_normal((3, 2))
    shape_deriv = rng.standard_normal((3, 2))
    a = rng.standard_normal((6, 6))
    c_star = a @ a.T
    r0 = rng.standard_normal(4)
    r0 /= np.linalg.norm(r0)
    x0p = rng.standard_normal(3)
    x0p /= np.linalg.norm(x0p)
    w = element_scratch(3, 2)
    fc, fd = np.zeros(6), np.zeros(6)
    cuu, o, p, q = (np.full((6, 6), np.nan) for _ in range(4))
    k.qp_stiffness_values(
        1.3, shape_interp, shape_deriv, 1, r0, x0p, c_star, node_u, w.s3, w.s33, w.s4, w.s6, w.s66, fc, fd, cuu, o, p, q
    )
    u_prime = np.zeros(3)
    for j in range(3):  # the point's u′ as the driver sums it (node order, dφ/dξ / J)
        u_prime += node_u[j, :3] * (shape_deriv[j, 1] / 1.3)
    x_tilde, v = np.zeros((3, 3)), np.zeros(3)
    k.x0pup_tilde(x0p, u_prime, v, x_tilde)
    n_tilde, m_tilde = skew(fc[:3]), skew(fc[3:])
    fd_ref, o_ref, p_ref, q_ref = np.zeros(6), np.zeros((6, 6)), np.zeros((6, 6)), np.zeros((6, 6))
    k.elastic_force_fd(x_tilde, fc, fd_ref)
    k.ouu(cuu, x_tilde, m_tilde, n_tilde, o_ref)
    k.puu(cuu, x_tilde, n_tilde, p_ref)
    k.quu(cuu, x_tilde, n_tilde, np.zeros((3, 3)), q_ref)
    np.testing.assert_array_equal(fd, fd_ref)
    np.testing.assert_array_equal(o, o_ref)
    np.testing.assert_array_equal(p, p_ref)
    np.testing.assert_array_equal(q, q_ref)
