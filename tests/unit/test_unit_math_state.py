"""Unit tier: quaternion/SO(3) primitives, state kernels, model state and DOF tables.

Every expected number is either taken from Kynema-FMB's own unit tests
(``tests/unit_tests/math``, ``state``, ``model``, ``dof_management``; see
``docs``/reference §7.3, §0.2, §0.3, §2.2, §2.4, §2.8) or computed independently
in NumPy inside this file.  Kynema's tolerances are used where it states them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.engine import entry
from kynemapy.engine.api import task
from kynemapy.engine.data import new_inputs, new_state, new_workspace
from kynemapy.engine.params import coefficient_vector
from kynemapy.engine.step import (
    CONVERGED,
    algorithmic_acceleration,
    displacement,
    global_position,
    predict,
    update,
)
from kynemapy.math.quaternion import (
    quat_compose,
    quat_inverse,
    quat_to_matrix,
    quat_to_rotvec,
    rotate_vector,
    rotvec_to_quat,
)
from kynemapy.math.so3 import ax_matrix, axial, cross, matmul3, matvec3, tangent_operator_rot, tilde
from kynemapy.model import dof_map

INV_SQRT2 = 1.0 / math.sqrt(2.0)


# ---------------------------------------------------------------------------
# Independent NumPy reference implementations (not taken from kynemapy)
# ---------------------------------------------------------------------------


def np_quat_mul(a, b) -> np.ndarray:
    """Hamilton product via the scalar/vector form (w1w2 − v1·v2, w1v2 + w2v1 + v1×v2)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    w = a[0] * b[0] - a[1:] @ b[1:]
    v = a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])
    return np.concatenate([[w], v])


def np_exp(phi) -> np.ndarray:
    """Unit quaternion of the rotation vector ``phi``."""
    phi = np.asarray(phi, dtype=float)
    theta = np.linalg.norm(phi)
    if theta == 0.0:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * phi / theta])


def np_log(q) -> np.ndarray:
    """Rotation vector of a unit quaternion (atan2 form, robust for small angles)."""
    q = np.asarray(q, dtype=float)
    s = np.linalg.norm(q[1:])
    if s == 0.0:
        return np.zeros(3)
    return 2.0 * math.atan2(s, q[0]) * q[1:] / s


def np_conj(q) -> np.ndarray:
    return np.array([q[0], -q[1], -q[2], -q[3]], dtype=float)


def np_skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def np_rot_literal(q) -> np.ndarray:
    """Rotation matrix of a possibly non-unit quaternion: R = (w² − v·v) I + 2 v vᵀ + 2 w ṽ (no normalisation)."""
    q = np.asarray(q, dtype=float)
    w, v = q[0], q[1:]
    return (w * w - v @ v) * np.eye(3) + 2.0 * np.outer(v, v) + 2.0 * w * np_skew(v)


def np_tangent_T(psi) -> np.ndarray:
    """T(ψ) = I + (cos φ − 1)/φ² ψ̃ + (1 − sin φ/φ)/φ² ψ̃ψ̃ (reference §2.4), not transposed."""
    psi = np.asarray(psi, dtype=float)
    phi = np.linalg.norm(psi)
    if phi <= 1e-16:
        return np.eye(3)
    p = np_skew(psi)
    return np.eye(3) + (np.cos(phi) - 1.0) / phi**2 * p + (1.0 - np.sin(phi) / phi) / phi**2 * (p @ p)


# ---------------------------------------------------------------------------
# Kernel wrappers (allocate the out arguments)
# ---------------------------------------------------------------------------


def k_compose(a, b) -> np.ndarray:
    out = np.zeros(4)
    quat_compose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), out)
    return out


def k_inverse(q) -> np.ndarray:
    out = np.zeros(4)
    quat_inverse(np.asarray(q, dtype=float), out)
    return out


def k_matrix(q) -> np.ndarray:
    out = np.zeros((3, 3))
    quat_to_matrix(np.asarray(q, dtype=float), out)
    return out


def k_rotate(q, v) -> np.ndarray:
    out = np.zeros(3)
    rotate_vector(np.asarray(q, dtype=float), np.asarray(v, dtype=float), out)
    return out


def k_exp(phi) -> np.ndarray:
    out = np.zeros(4)
    rotvec_to_quat(np.asarray(phi, dtype=float), out)
    return out


def k_log(q) -> np.ndarray:
    out = np.zeros(3)
    quat_to_rotvec(np.asarray(q, dtype=float), out)
    return out


def k_tangent(psi) -> np.ndarray:
    out = np.zeros((3, 3))
    tangent_operator_rot(np.asarray(psi, dtype=float), out)
    return out


# ---------------------------------------------------------------------------
# Quaternion primitives (Kynema tests/unit_tests/math/test_quaternion_operations.cpp)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ((INV_SQRT2, INV_SQRT2, 0.0, 0.0), [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),
        ((INV_SQRT2, 0.0, INV_SQRT2, 0.0), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
        ((INV_SQRT2, 0.0, 0.0, INV_SQRT2), [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
    ],
    ids=["90deg_x", "90deg_y", "90deg_z"],
)
def test_quaternion_to_rotation_matrix(q, expected) -> None:
    np.testing.assert_allclose(k_matrix(q), np.array(expected, dtype=float), rtol=0.0, atol=1e-15)


def test_quaternion_to_rotation_matrix_non_unit_is_not_normalised() -> None:
    """§0.2: the matrix is written with squares and never normalised (non-unit q → scaled matrix)."""
    for q in ([1.0, 2.0, 3.0, 4.0], [14.0, 15.0, 16.0, 17.0], [0.3, -1.2, 0.7, 2.5]):
        np.testing.assert_allclose(k_matrix(q), np_rot_literal(q), rtol=0.0, atol=1e-12)
    # (w² + |v|²) R is orthogonal up to the factor |q|⁴
    q = np.array([1.0, 2.0, 3.0, 4.0])
    r = k_matrix(q)
    np.testing.assert_allclose(r @ r.T, (q @ q) ** 2 * np.eye(3), rtol=0.0, atol=1e-12)


@pytest.mark.parametrize(
    ("q", "v", "expected"),
    [
        ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0)),
        ((INV_SQRT2, 0.0, INV_SQRT2, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, -1.0)),
        ((INV_SQRT2, INV_SQRT2, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, -1.0, 0.0)),
        ((math.cos(math.pi / 8), 0.0, 0.0, math.sin(math.pi / 8)), (1.0, 0.0, 0.0), (INV_SQRT2, INV_SQRT2, 0.0)),
        ((math.cos(math.pi / 8), 0.0, 0.0, -math.sin(math.pi / 8)), (1.0, 0.0, 0.0), (INV_SQRT2, -INV_SQRT2, 0.0)),
    ],
    ids=["identity_y", "x_90deg_about_y", "z_90deg_about_x", "x_45deg_about_z", "x_neg45deg_about_z"],
)
def test_rotate_vector_by_quaternion(q, v, expected) -> None:
    np.testing.assert_allclose(k_rotate(q, v), expected, rtol=0.0, atol=1e-15)


def test_rotate_vector_equals_matrix_product_for_non_unit_quaternion() -> None:
    q = np.array([14.0, 15.0, 16.0, 17.0])
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(k_rotate(q, v), np_rot_literal(q) @ v, rtol=0.0, atol=1e-12)


def test_quaternion_inverse_unit() -> None:
    c = math.sqrt(30.0)
    q = np.array([1.0, 2.0, 3.0, 4.0]) / c
    np.testing.assert_allclose(k_inverse(q), [1.0 / c, -2.0 / c, -3.0 / c, -4.0 / c], rtol=0.0, atol=1e-15)


def test_quaternion_inverse_divides_by_norm_not_norm_squared() -> None:
    """§0.2: QuaternionInverse(q) = (w, −x, −y, −z)/‖q‖."""
    q = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(k_inverse(q), np_conj(q) / math.sqrt(30.0), rtol=0.0, atol=1e-15)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((3.0, 1.0, -2.0, 1.0), (2.0, -1.0, 2.0, 3.0), (8.0, -9.0, -2.0, 11.0)),
        ((1.0, 2.0, 3.0, 4.0), (5.0, 6.0, 7.0, 8.0), (-60.0, 12.0, 30.0, 24.0)),
    ],
    ids=["set1", "set2"],
)
def test_quaternion_compose(a, b, expected) -> None:
    np.testing.assert_allclose(k_compose(a, b), expected, rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(np_quat_mul(a, b), expected, rtol=0.0, atol=1e-15)


def test_quaternion_compose_matches_matrix_product() -> None:
    """R(a ⊗ b) = R(a) R(b) (Hamilton product, active rotation matrices)."""
    a = np_exp([0.3, -0.2, 0.9])
    b = np_exp([-1.1, 0.4, 0.25])
    np.testing.assert_allclose(k_matrix(k_compose(a, b)), np_rot_literal(a) @ np_rot_literal(b), rtol=0.0, atol=1e-14)


@pytest.mark.parametrize(
    ("phi", "expected"),
    [
        ((math.pi / 2, 0.0, 0.0), (INV_SQRT2, INV_SQRT2, 0.0, 0.0)),
        ((0.0, math.pi / 2, 0.0), (INV_SQRT2, 0.0, INV_SQRT2, 0.0)),
        ((0.0, 0.0, math.pi / 2), (INV_SQRT2, 0.0, 0.0, INV_SQRT2)),
    ],
    ids=["set0", "set1", "set2"],
)
def test_rotation_vector_to_quaternion(phi, expected) -> None:
    np.testing.assert_allclose(k_exp(phi), expected, rtol=0.0, atol=1e-15)


def test_rotation_vector_to_quaternion_general_and_tiny() -> None:
    phi = np.array([0.3, -1.7, 2.2])
    np.testing.assert_allclose(k_exp(phi), np_exp(phi), rtol=0.0, atol=1e-15)
    # below θ = 1e-12 Kynema (§0.2) makes the vector part zero, so a Newton correction of that size
    # is lost; kynemapy keeps it: sin(θ/2)/θ = 1/2 to double precision (issue 12)
    np.testing.assert_array_equal(k_exp([1e-13, 0.0, 0.0]), [1.0, 5e-14, 0.0, 0.0])
    np.testing.assert_array_equal(k_exp([0.0, 0.0, 0.0]), [1.0, 0.0, 0.0, 0.0])


def test_quaternion_to_rotation_vector_round_trip() -> None:
    """Kynema QuaternionToRotationVector_1: i·π/100 about x, i = 0..99, tolerance 1e-14."""
    n = 100
    for i in range(n):
        rot = np.array([i * math.pi / n, 0.0, 0.0])
        np.testing.assert_allclose(k_log(k_exp(rot)), rot, rtol=0.0, atol=1e-14)


def test_quaternion_to_rotation_vector_general_and_degenerate() -> None:
    phi = np.array([0.4, -0.9, 1.3])
    np.testing.assert_allclose(k_log(np_exp(phi)), phi, rtol=0.0, atol=1e-14)
    # §0.2 / §7.3: identity and non-unit quaternions with |w| >= 1 give the zero vector
    np.testing.assert_array_equal(k_log([1.0, 0.0, 0.0, 0.0]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(k_log([21.0, 22.0, 23.0, 24.0]), [0.0, 0.0, 0.0])


# ---------------------------------------------------------------------------
# Matrix / vector helpers (test_matrix_operations.cpp, test_vector_operations.cpp)
# ---------------------------------------------------------------------------


def test_vec_tilde() -> None:
    out = np.zeros((3, 3))
    tilde(np.array([1.0, 2.0, 3.0]), out)
    np.testing.assert_allclose(out, [[0, -3, 2], [3, 0, -1], [-2, 1, 0]], rtol=0.0, atol=1e-15)
    a = np.array([-0.5, 4.0, 2.5])
    np.testing.assert_allclose(out @ a, np.cross([1.0, 2.0, 3.0], a), rtol=0.0, atol=1e-15)


def test_axial_vector_of_matrix() -> None:
    out = np.zeros(3)
    axial(np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), out)
    np.testing.assert_allclose(out, [0.0, 0.0, 1.0], rtol=0.0, atol=1e-15)
    # general (non-skew) matrix: ½(C21 − C12, C02 − C20, C10 − C01)
    c = np.arange(1.0, 10.0).reshape(3, 3) ** 1.5
    axial(c, out)
    expected = 0.5 * np.array([c[2, 1] - c[1, 2], c[0, 2] - c[2, 0], c[1, 0] - c[0, 1]])
    np.testing.assert_allclose(out, expected, rtol=0.0, atol=1e-14)


def test_ax_matrix() -> None:
    out = np.zeros((3, 3))
    ax_matrix(np.arange(1.0, 10.0).reshape(3, 3), out)
    np.testing.assert_allclose(out, [[7, -1, -1.5], [-2, 5, -3], [-3.5, -4, 3]], rtol=0.0, atol=1e-15)


def test_cross_matmul_matvec() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=3), rng.normal(size=3)
    m1, m2 = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    out3 = np.zeros(3)
    cross(a, b, out3)
    np.testing.assert_allclose(out3, np.cross(a, b), rtol=0.0, atol=1e-15)
    matvec3(m1, a, out3)
    np.testing.assert_allclose(out3, m1 @ a, rtol=0.0, atol=1e-14)
    out33 = np.zeros((3, 3))
    matmul3(m1, m2, out33)
    np.testing.assert_allclose(out33, m1 @ m2, rtol=0.0, atol=1e-14)


# ---------------------------------------------------------------------------
# Tangent operator (§2.4) and the derivative of the exponential map
# ---------------------------------------------------------------------------

PSI_SAMPLES = [
    (0.3, -0.2, 0.5),
    (1.2, 0.7, -2.1),
    (-0.004, 0.002, 0.001),
    (2.5, -1.0, 1.5),
    (0.0, 0.0, 3.0),
]


@pytest.mark.parametrize("psi", PSI_SAMPLES)
def test_tangent_operator_is_transpose_of_T(psi) -> None:
    t_ref = np_tangent_T(psi)
    np.testing.assert_allclose(k_tangent(psi), t_ref.T, rtol=0.0, atol=1e-14)


def test_tangent_operator_below_cutoff_is_identity() -> None:
    np.testing.assert_array_equal(k_tangent([0.0, 0.0, 0.0]), np.eye(3))
    np.testing.assert_array_equal(k_tangent([1e-17, 0.0, 0.0]), np.eye(3))


def _fd_left(psi: np.ndarray, i: int, eps: float) -> np.ndarray:
    """Central difference of δ ↦ log(exp(ψ + δ e_i) ⊗ exp(ψ)⁻¹) at δ = 0 (spatial/left increment)."""
    q0_inv = np_conj(np_exp(psi))
    e = np.zeros(3)
    e[i] = eps
    lp = np_log(np_quat_mul(np_exp(psi + e), q0_inv))
    lm = np_log(np_quat_mul(np_exp(psi - e), q0_inv))
    return (lp - lm) / (2.0 * eps)


def _fd_right(psi: np.ndarray, i: int, eps: float) -> np.ndarray:
    """Central difference of δ ↦ log(exp(ψ)⁻¹ ⊗ exp(ψ + δ e_i)) at δ = 0 (material/right increment)."""
    q0_inv = np_conj(np_exp(psi))
    e = np.zeros(3)
    e[i] = eps
    lp = np_log(np_quat_mul(q0_inv, np_exp(psi + e)))
    lm = np_log(np_quat_mul(q0_inv, np_exp(psi - e)))
    return (lp - lm) / (2.0 * eps)


@pytest.mark.parametrize("psi", PSI_SAMPLES)
def test_exponential_map_derivative_left_composition(psi) -> None:
    """exp(ψ + ε e_i) ⊗ exp(ψ)⁻¹ ≈ exp(ε Tᵀ(ψ) e_i): the stored 𝒯 = Tᵀ is the left (spatial) Jacobian.

    Derivation: T(ψ) = I − (1−cos φ)/φ² ψ̃ + (φ − sin φ)/φ³ ψ̃² is the right Jacobian J_r of
    SO(3); the left Jacobian is J_l(ψ) = J_r(−ψ) = J_r(ψ)ᵀ, and exp(ψ + dψ) = exp(J_l dψ) exp(ψ).
    Kynema composes increments on the left, so its tangent operator is Tᵀ.
    """
    psi = np.asarray(psi, dtype=float)
    tangent = k_tangent(psi)
    fd = np.column_stack([_fd_left(psi, i, 1e-5) for i in range(3)])
    np.testing.assert_allclose(tangent, fd, rtol=0.0, atol=1e-7)


@pytest.mark.parametrize("psi", PSI_SAMPLES)
def test_exponential_map_derivative_right_composition(psi) -> None:
    """exp(ψ)⁻¹ ⊗ exp(ψ + ε e_i) ≈ exp(ε T(ψ) e_i): the non-transposed T is the right Jacobian."""
    psi = np.asarray(psi, dtype=float)
    fd = np.column_stack([_fd_right(psi, i, 1e-5) for i in range(3)])
    np.testing.assert_allclose(k_tangent(psi).T, fd, rtol=0.0, atol=1e-7)
    # and T differs from Tᵀ here, so the two checks really distinguish the conventions
    assert np.max(np.abs(np_tangent_T(psi) - np_tangent_T(psi).T)) > 1e-4


# ---------------------------------------------------------------------------
# State kernels (tests/unit_tests/state)
# ---------------------------------------------------------------------------


def _data(model, max_iter: int = 1):
    """A fresh state and inputs of ``model`` and the Data of a workspace over them (the views the
    phases take: ``d.q`` is ``state.q``)."""
    state = new_state(model)
    inputs = new_inputs(model)
    ws = new_workspace(model, max_iter)
    return state, inputs, ws, ws.data(state, inputs)


def _coefficients(
    h, *, alpha_m=0.0, alpha_f=0.0, gamma=0.5, beta=0.25, gamma_prime=0.0, beta_prime=0.0,
    conditioner=1.0, atol=1e-5, rtol=1e-3, max_iter=5, dynamic=True,
) -> np.ndarray:  # fmt: skip
    """The phases' coefficient vector ``p`` with the given entries (Kynema's test values need not
    be those of a ρ∞)."""
    return coefficient_vector(
        h, alpha_m, alpha_f, gamma, beta, gamma_prime, beta_prime, conditioner, atol, rtol, max_iter,
        dynamic, False, False,
    )  # fmt: skip


def _update(d, p) -> None:
    """The Newton update phase (Kynema's UpdateDynamicPrediction / UpdateStaticPrediction) on the
    increment in ``d.dx``."""
    update(
        p, d.node_map, d.node_dofs, d.constraint_row, d.constraint_n_rows, d.q_delta, d.v, d.vd, d.q_prev, d.q,
        d.lam, d.dx, d.n_system_dofs,
    )  # fmt: skip


def test_calculate_next_state() -> None:
    """Kynema CalculateNextState (h 2, α_f 3, α_m 4, β 5, γ 6) through the predictor phase, which also
    sets q_prev := q, q := q_prev ⊕ h Δq and λ := 0."""
    model = _mass_model(1)
    state, _, _, d = _data(model)
    d.v[0] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    d.vd[0] = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]
    d.a[0] = [13.0, 14.0, 15.0, 16.0, 17.0, 18.0]
    d.q_delta[0] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # overwritten by the predictor
    q_start = np.array([0.1, 0.2, 0.3, math.cos(0.2), 0.0, math.sin(0.2), 0.0])
    d.q[0] = q_start
    d.lam[...] = 5.0
    p = _coefficients(2.0, alpha_m=4.0, alpha_f=3.0, beta=5.0, gamma=6.0)
    predict(p, d.v, d.vd, d.a, d.q_delta, d.q_prev, d.q, d.lam)
    tol = 1e-14
    np.testing.assert_allclose(
        state.q_delta[0],
        [-12.666666666666661, -17.333333333333339, -22.0, -26.666666666666661, -31.333333333333339, -36.0],
        rtol=0.0,
        atol=tol,
    )
    np.testing.assert_allclose(
        state.v[0],
        [-4.9999999999999929, -10.000000000000007, -15.0, -19.999999999999993, -25.000000000000007, -30.0],
        rtol=0.0,
        atol=tol,
    )
    np.testing.assert_allclose(state.vd[0], np.zeros(6), rtol=0.0, atol=tol)
    np.testing.assert_allclose(
        state.a[0],
        [10.333333333333334, 10.666666666666666, 11.0, 11.333333333333334, 11.666666666666666, 12.0],
        rtol=0.0,
        atol=tol,
    )
    # q_prev := q; q = q_prev ⊕ h Δq (the displacement kernel, tested below); λ := 0
    np.testing.assert_array_equal(state.q_prev[0], q_start)
    expected_q = np.zeros((1, 7))
    displacement(2.0, state.q_delta, state.q_prev, expected_q)
    np.testing.assert_array_equal(state.q, expected_q)
    np.testing.assert_array_equal(state.lam, 0.0)


def test_the_last_step_predictor() -> None:
    """``StepParameters(predictor="last")``: v̇ and λ are kept, and a, v and Δq follow the
    generalized-α relations with v̇_{n+1} = v̇_n, written out here:
    ``(1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) v̇_{n+1} + α_f v̇_n``, ``v = v_n + h(1 − γ) a_n + hγ a_{n+1}``,
    ``Δq = v_n + h(½ − β) a_n + hβ a_{n+1}``; the stored a is a_{n+1} without its
    ``(1 − α_f)/(1 − α_m) v̇_{n+1}`` part, which the step adds after convergence (as for Kynema's)."""
    model = _mass_model(1)
    state, _, _, d = _data(model)
    v0 = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    vd0 = np.array([7.0, -8.0, 9.0, 10.0, -11.0, 12.0])
    a0 = np.array([13.0, 14.0, -15.0, 16.0, 17.0, 18.0])
    d.v[0], d.vd[0], d.a[0] = v0, vd0, a0
    q_start = np.array([0.1, 0.2, 0.3, math.cos(0.2), 0.0, math.sin(0.2), 0.0])
    d.q[0] = q_start
    d.lam[...] = 5.0
    params = kp.StepParameters(h=0.01, rho_inf=0.9, predictor="last")
    h, alpha_m, alpha_f, beta, gamma = 0.01, params.alpha_m, params.alpha_f, params.beta, params.gamma
    predict(params.coefficients, d.v, d.vd, d.a, d.q_delta, d.q_prev, d.q, d.lam)
    a_next = ((1.0 - alpha_f) * vd0 + alpha_f * vd0 - alpha_m * a0) / (1.0 - alpha_m)
    r = (1.0 - alpha_f) / (1.0 - alpha_m)
    np.testing.assert_array_equal(state.vd[0], vd0)
    np.testing.assert_allclose(state.a[0] + r * state.vd[0], a_next, rtol=1e-14, atol=0.0)
    np.testing.assert_allclose(state.v[0], v0 + h * (1.0 - gamma) * a0 + h * gamma * a_next, rtol=1e-14)
    np.testing.assert_allclose(state.q_delta[0], v0 + h * (0.5 - beta) * a0 + h * beta * a_next, rtol=1e-14)
    np.testing.assert_array_equal(state.q_prev[0], q_start)
    expected_q = np.zeros((1, 7))
    displacement(h, state.q_delta, state.q_prev, expected_q)
    np.testing.assert_array_equal(state.q, expected_q)
    np.testing.assert_array_equal(state.lam, 5.0)


def test_calculate_displacement() -> None:
    h = 2.0
    q_delta = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    q_prev = np.array([[7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0]])
    q = np.zeros((1, 7))
    displacement(h, q_delta, q_prev, q)
    expected = [9.0, 12.0, 15.0, -20.510952969318009, -6.4827969278626361, -5.141528734877415, -6.696180594260384]
    np.testing.assert_allclose(q[0], expected, rtol=0.0, atol=1e-14)
    # independent: r = exp(h Δθ) ⊗ r_prev (left composition, no renormalisation)
    r_ref = np_quat_mul(np_exp(2.0 * np.array([4.0, 5.0, 6.0])), [10.0, 11.0, 12.0, 13.0])
    np.testing.assert_allclose(r_ref, expected[3:], rtol=0.0, atol=1e-13)


def test_update_global_position() -> None:
    q = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])
    x0 = np.array([[8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0]])
    x = np.zeros((1, 7))
    global_position(x0, q, x)
    np.testing.assert_allclose(x[0], [9.0, 11.0, 13.0, -192.0, 96.0, 132.0, 126.0], rtol=0.0, atol=1e-14)


def _mass_model(n_bodies: int):
    b = kp.ModelBuilder()
    for i in range(n_bodies):
        node = b.add_node(position=(float(i), 0.0, 0.0))
        b.add_mass(node, mass_matrix=np.eye(6))
    return b.build()


def test_update_dynamic_prediction() -> None:
    """Kynema UpdateDynamicPrediction: h 0.5, β′ 2, γ′ 3, Δx = (1..6) on one ALL node."""
    model = _mass_model(1)
    state, _, _, d = _data(model)
    p = _coefficients(0.5, beta_prime=2.0, gamma_prime=3.0, dynamic=True)
    d.dx[...] = np.arange(1.0, 7.0)
    _update(d, p)
    np.testing.assert_allclose(state.q_delta[0], [2, 4, 6, 8, 10, 12], rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.v[0], [3, 6, 9, 12, 15, 18], rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.vd[0], [2, 4, 6, 8, 10, 12], rtol=0.0, atol=1e-14)
    # q is recomputed from q_prev (§2.8): u = h Δq_u, r = exp(h Δq_θ) ⊗ r_prev
    np.testing.assert_allclose(state.q[0, :3], [1.0, 2.0, 3.0], rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.q[0, 3:], np_exp(0.5 * np.array([8.0, 10.0, 12.0])), rtol=0.0, atol=1e-14)


def test_update_static_prediction() -> None:
    """Kynema UpdateStaticPrediction: h 2, Δx = (2, 4, ..., 24) over two ALL nodes → Δq = (1..12)."""
    model = _mass_model(2)
    np.testing.assert_array_equal(model.node_map, [0, 6])
    state, _, _, d = _data(model)
    p = _coefficients(2.0, beta_prime=2.0, gamma_prime=3.0, dynamic=False)
    d.dx[...] = np.arange(2.0, 25.0, 2.0)
    _update(d, p)
    np.testing.assert_allclose(state.q_delta.ravel(), np.arange(1.0, 13.0), rtol=0.0, atol=1e-14)
    # static: v and vd untouched
    np.testing.assert_array_equal(state.v, np.zeros((2, 6)))
    np.testing.assert_array_equal(state.vd, np.zeros((2, 6)))


def test_update_prediction_position_only_node_updates_translations_only() -> None:
    """§2.8: a 3-DOF node only updates components 0..2 (heavy-top layout: 6-DOF body + 3-DOF pin)."""
    b = kp.ModelBuilder()
    body = b.add_node(position=(0.0, 1.0, 0.0))
    b.add_mass(body, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    b.add_spherical_joint(body, point=(0.0, 0.0, 0.0))
    model = b.build()
    np.testing.assert_array_equal(model.node_dofs, [6, 3])
    state, _, _, d = _data(model)
    p = _coefficients(0.5, beta_prime=2.0, gamma_prime=3.0, dynamic=True)
    d.dx[...] = 0.0
    d.dx[: model.n_system_dofs] = np.arange(1.0, 10.0)
    _update(d, p)
    np.testing.assert_allclose(state.q_delta[0], np.arange(1.0, 7.0) / 0.5, rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.q_delta[1], [14.0, 16.0, 18.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.v[1], [21.0, 24.0, 27.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.vd[1], [14.0, 16.0, 18.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-14)


def test_update_algorithmic_acceleration() -> None:
    """Kynema UpdateAlgorithmicAcceleration: α_f 0.5, α_m 0.75, vd = (7..12), a = 0 → a = (14, 16, ..., 24).

    First the phase itself, then through the compiled step (the engine's ADVANCE task): a free
    body with M* = I at rest, loaded by f = (7..12), with β′ = c = 1 and a loose absolute
    tolerance, converges in one Newton iteration with vd = f exactly (A = c β′ I, b = −c f); the
    predictor gives a = 0 (vd = a = 0 before the step), so afterwards a = 2 vd exactly.
    """
    p = _coefficients(1.0, alpha_m=0.75, alpha_f=0.5, beta_prime=1.0, gamma_prime=1.0, conditioner=1.0, atol=1e3)
    vd = np.arange(7.0, 13.0).reshape(1, 6)
    a = np.zeros((1, 6))
    algorithmic_acceleration(p, vd, a)
    np.testing.assert_array_equal(a[0], [14.0, 16.0, 18.0, 20.0, 22.0, 24.0])

    model = _mass_model(1)
    state, inputs, ws, d = _data(model, max_iter=5)
    inputs.f[0] = np.arange(7.0, 13.0)
    iterations = np.zeros(1, dtype=np.int64)
    steps, _, status = task(d, p, entry.ADVANCE, 1, iterations=iterations)
    assert (steps, status) == (1, CONVERGED)
    assert iterations[0] == 1 and ws.n_iter == 1
    np.testing.assert_array_equal(state.vd[0], np.arange(7.0, 13.0))
    np.testing.assert_array_equal(state.a[0], [14.0, 16.0, 18.0, 20.0, 22.0, 24.0])


def test_model_create_state() -> None:
    """Kynema ModelTest.ModelCreateState: x0 rotation R1 (1 rad about x), displacement R2 (1 rad about y)
    → x = (X + u, R2 ⊗ R1); also a = vd at creation (§0.1)."""
    r1 = np.array([math.cos(0.5), math.sin(0.5), 0.0, 0.0])
    r2 = np.array([math.cos(0.5), 0.0, math.sin(0.5), 0.0])
    b = kp.ModelBuilder()
    b.add_node(
        position=(1.0, 2.0, 3.0),
        orientation=r1,
        displacement=np.concatenate([[3.0, 2.0, 1.0], r2]),
        velocity=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
        acceleration=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0),
    )
    model = b.build()
    sim = kp.Simulation(model, kp.StepParameters(h=0.01), consistent_initial_accelerations=False)
    np.testing.assert_allclose(model.x0[0], np.concatenate([[1.0, 2.0, 3.0], r1]), rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(sim.state.q[0], np.concatenate([[3.0, 2.0, 1.0], r2]), rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(sim.state.q_prev[0], np.concatenate([[3.0, 2.0, 1.0], r2]), rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(
        sim.state.x[0], np.concatenate([[4.0, 4.0, 4.0], np_quat_mul(r2, r1)]), rtol=0.0, atol=1e-15
    )
    np.testing.assert_array_equal(sim.state.v[0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    np.testing.assert_array_equal(sim.state.vd[0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(sim.state.a[0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


# ---------------------------------------------------------------------------
# DOF tables (tests/unit_tests/dof_management, reference §0.3)
# ---------------------------------------------------------------------------


def test_node_freedom_map_table_one_node() -> None:
    np.testing.assert_array_equal(dof_map(np.array([6])), [0])


def test_node_freedom_map_table_four_nodes() -> None:
    """AllComponents, JustPosition, JustRotation, NoComponents → (0, 6, 9, 12)."""
    np.testing.assert_array_equal(dof_map(np.array([6, 3, 3, 0])), [0, 6, 9, 12])


def test_freedom_signatures_spring_and_mass() -> None:
    """Spring nodes → JustPosition (3), mass nodes → AllComponents (6), untouched nodes → 0."""
    b = kp.ModelBuilder()
    n0 = b.add_node(position=(0.0, 0.0, 0.0))
    n1 = b.add_node(position=(1.0, 0.0, 0.0))
    n2 = b.add_node(position=(2.0, 0.0, 0.0))
    b.add_node(position=(3.0, 0.0, 0.0))
    b.add_spring(n0, n1, 10.0, 1.0)
    b.add_mass(n2, mass_matrix=np.eye(6))
    model = b.build()
    np.testing.assert_array_equal(model.node_dofs, [3, 3, 6, 0])
    np.testing.assert_array_equal(model.node_map, [0, 3, 6, 12])
    assert model.n_system_dofs == 12
    assert model.n_dofs == 12


def test_heavy_top_dofs() -> None:
    """Heavy top: 6 (body) + 3 (ground pin) + 3 (6→3 joint rows) + 3 (prescribed 3-DOF BC rows) = 15."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(position=(0.0, 1.0, 0.0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    ground = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_rigid_joint_6dof_to_3dof(top, ground)
    b.add_prescribed_bc_3dof(ground)
    model = b.build()
    np.testing.assert_array_equal(model.node_dofs, [6, 3])
    np.testing.assert_array_equal(model.node_map, [0, 6])
    assert model.n_system_dofs == 9
    assert model.n_dofs == 15
    np.testing.assert_array_equal(model.constraint_n_rows, [3, 3])
    np.testing.assert_array_equal(model.constraint_row, [0, 3])
    # X0 = X_target − X_base (§5.1)
    np.testing.assert_array_equal(model.constraint_X0[0], [0.0, -1.0, 0.0])
    np.testing.assert_array_equal(model.constraint_X0[1], [0.0, 0.0, 0.0])


def test_heavy_top_dofs_with_spherical_joint_helper() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(position=(0.0, 1.0, 0.0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    b.add_spherical_joint(top, point=(0.0, 0.0, 0.0))
    assert b.build().n_dofs == 15


def test_spring_mass_dofs() -> None:
    """FixedBC node 0 (ALL) + mass node 1 + spring: 6 + 6 + 6 = 18."""
    b = kp.ModelBuilder()
    n0 = b.add_node(position=(0.0, 0.0, 0.0))
    n1 = b.add_node(position=(2.0, 0.0, 0.0))
    b.add_mass(n1, mass_matrix=np.eye(6))
    b.add_spring(n0, n1, 10.0, 0.0)
    b.add_fixed_bc(n0)
    model = b.build()
    np.testing.assert_array_equal(model.node_dofs, [6, 6])
    assert model.n_system_dofs == 12
    assert model.n_dofs == 18


def test_floating_platform_dofs() -> None:
    """Platform (6) + 3 × (fairlead 3 + anchor 3) + 3 × (6→3 joint 3 + 3-DOF fixed BC 3) = 42."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.8124))
    platform = b.add_node(position=(0.0, 0.0, -7.53))
    b.add_mass(
        platform,
        mass_matrix=np.diag([1.419625e7, 1.419625e7, 1.419625e7, 1.2898e10, 1.2851e10, 1.4189e10]),
    )
    fairleads = [(-40.87, 0.0, -14.0), (20.43, -35.39, -14.0), (20.43, 35.39, -14.0)]
    anchors = [(-105.47, 0.0, -58.4), (52.73, -91.34, -58.4), (52.73, 91.34, -58.4)]
    for fp, ap in zip(fairleads, anchors, strict=True):
        fairlead = b.add_node(position=fp)
        anchor = b.add_node(position=ap)
        b.add_fixed_bc_3dof(anchor)
        b.add_rigid_joint_6dof_to_3dof(platform, fairlead)
        b.add_spring(fairlead, anchor, 48.9e3, 55.432)
    model = b.build()
    np.testing.assert_array_equal(model.node_dofs, [6, 3, 3, 3, 3, 3, 3])
    assert model.n_system_dofs == 24
    assert model.n_dofs == 42
