"""Constraint gradients B and geometric stiffness K^Φ against finite differences on the Lie group.

B must be the derivative of Φ with respect to the node DOFs as the stepper moves
them: translations u + ε eᵢ, rotations by a spatial (left) increment
``r ← exp(ε eᵢ) ⊗ r``.  The material (right) increment ``r ⊗ exp(ε eᵢ)`` is the
same derivative seen through R(r): ``∂Φ/∂Θ = B_rot R(r)``; both are checked.
K^Φ must be the derivative of the generalized constraint forces ``[B_bᵀλ; B_tᵀλ]``
(plus the residual of a joint's torque or force input) with respect to every (u, θ)
DOF of each node.  Configurations are random (hypothesis); every Kynema kind and
every two-body joint (ball ... distance, point on a line or plane, generic joints with a random
choice of locked directions, each also with its sides exchanged as a joint to the ground is
stored, universal joints at any angle) is covered.  For the two-body joints Φ is
also checked against an independent numpy twin, and the velocity terms γ of
Φ̈ = B v̇ + γ (consistent initial accelerations) and the hinge/slider outputs against
finite differences along a trajectory.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kynemapy.engine.constraints import dispatch
from kynemapy.engine.constraints.body_joints import body_joint_output, input_load
from kynemapy.engine.constraints.revolute_joint import revolute_torque
from kynemapy.model import kinds
from kynemapy.model.builder import revolute_axes

EPS = 1e-6
KINDS = [
    kinds.FIXED_BC,
    kinds.FIXED_BC_3DOF,
    kinds.PRESCRIBED_BC,
    kinds.PRESCRIBED_BC_3DOF,
    kinds.RIGID_JOINT,
    kinds.RIGID_JOINT_6DOF_TO_3DOF,
    kinds.ROTATION_CONTROL,
    kinds.REVOLUTE_JOINT,
    *kinds.BODY_JOINTS,
]


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product (w, x, y, z), written independently of kynemapy."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def quat_exp(phi: np.ndarray) -> np.ndarray:
    theta = np.linalg.norm(phi)
    if theta == 0.0:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * phi / theta])


def rotation_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


class Case:
    """One constraint in a random configuration; evaluates Φ, B, K^Φ and Bᵀλ."""

    def __init__(self, kind: int, rng: np.random.Generator) -> None:
        self.kind = kind
        self.rows = int(kinds.N_ROWS[kind])
        self.spec = None
        if kind >= kinds.LISTED_ROWS:  # rows listed per constraint: a random choice, maybe mirrored
            if kind == kinds.POINT_ON_LINE_JOINT:
                locked = (False, True, True, False, False, False)
            elif kind == kinds.POINT_ON_PLANE_JOINT:
                locked = (True, False, False, False, False, False)
            else:
                locked = tuple(bool(x) for x in rng.integers(0, 2, size=6))
                if not any(locked):
                    locked = (False, False, False, False, False, True)
            self.spec = kinds.generic_rows(locked)
            if rng.integers(0, 2):
                self.spec = kinds.mirrored_rows(self.spec)
            self.rows = kinds.count_rows(self.spec)
        self.two_node = kinds.N_NODES[kind] == 2
        self.X0 = rng.normal(size=3)
        self.axes = np.zeros((3, 3))
        axis = rng.normal(size=3)
        if kind == kinds.REVOLUTE_JOINT:
            self.axes = revolute_axes(axis)
        elif kind == kinds.ROTATION_CONTROL:
            self.axes[0] = axis / np.linalg.norm(axis)
        self.inputs = np.zeros(7)
        self.inputs[0] = rng.uniform(-3, 3)
        if kind in (kinds.PRESCRIBED_BC, kinds.PRESCRIBED_BC_3DOF):
            self.inputs[:3] = rng.normal(size=3)
            self.inputs[3:] = quat_exp(rng.normal(size=3))
        self.qb = np.concatenate([rng.normal(size=3), quat_exp(rng.normal(size=3))])
        self.qt = np.concatenate([rng.normal(size=3), quat_exp(rng.normal(size=3))])
        self.lam = np.zeros(6)
        self.lam[: self.rows] = rng.normal(size=self.rows) * 10.0
        # two-body joints: joint point offsets and (random, orthonormal) axes per side, rod length
        self.geom = np.zeros((2, 4, 3))
        self.param = 0.0
        if kind in kinds.BODY_JOINTS:
            for side in range(2):
                self.geom[side, 0] = rng.normal(size=3)
                self.geom[side, 1:] = revolute_axes(rng.normal(size=3))
            self.param = rng.uniform(0.5, 2.0) if kind != kinds.UNIVERSAL_JOINT else rng.uniform(-0.9, 0.9)
        if self.spec is not None:
            self.axes = kinds.encode_rows(self.spec)

    def evaluate(self, qb: np.ndarray, qt: np.ndarray, exact: bool = True):
        phi = np.zeros(6)
        bb = np.zeros((6, 6))
        bt = np.zeros((6, 6))
        k = np.zeros((2, 2, 6, 6))
        dispatch.evaluate(
            self.kind,
            self.X0,
            self.axes,
            self.geom,
            self.param,
            self.inputs,
            qb,
            qt,
            self.lam,
            exact,
            phi,
            bb,
            bt,
            k,
            np.zeros((8, 3)),
            np.zeros((6, 4)),
            np.zeros((8, 3, 3)),
        )
        return phi[: self.rows], bb[: self.rows], bt[: self.rows], k

    def nodes(self):
        """(index, q) of the nodes the constraint acts on: 0 base, 1 target."""
        return ([(0, self.qb)] if self.two_node else []) + [(1, self.qt)]

    def perturbed(self, node: int, dof: int, eps: float, material: bool = False):
        qb, qt = self.qb.copy(), self.qt.copy()
        q = qb if node == 0 else qt
        if dof < 3:
            q[dof] += eps
        else:
            inc = quat_exp(eps * np.eye(3)[dof - 3])
            q[3:] = quat_mul(q[3:], inc) if material else quat_mul(inc, q[3:])
        return qb, qt


def constraint_force(case: Case, qb: np.ndarray, qt: np.ndarray) -> np.ndarray:
    """B_bᵀλ and B_tᵀλ, (2, 6): the generalized constraint forces on the base and target, plus
    the residual terms of a revolute/hinge torque or slider force input (K^Φ includes their derivative)."""
    _, bb, bt, _ = case.evaluate(qb, qt)
    lam = case.lam[: case.rows]
    force = np.array([bb.T @ lam, bt.T @ lam])
    if case.kind == kinds.REVOLUTE_JOINT:
        f = np.zeros(3)
        revolute_torque(case.axes, qt, case.inputs[0], f)
        force[1, 3:] += f
    elif case.kind in kinds.BODY_JOINTS:
        load = np.zeros((2, 6))
        input_load(case.kind, case.X0, case.geom, case.inputs[0], qb, qt, load)
        force += load
    return force


def node_dofs(case: Case, node: int) -> int:
    if node == 1 and kinds.TARGET_DOFS[case.kind] == 3:
        return 3
    return 6


@pytest.mark.parametrize("kind", KINDS, ids=[kinds.KIND_NAMES[k] for k in KINDS])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_exact_gradient_matches_lie_group_finite_difference(kind: int, seed: int) -> None:
    case = Case(kind, np.random.default_rng(seed))
    _, bb, bt, _ = case.evaluate(case.qb, case.qt)
    for node, q in case.nodes():
        b = bb if node == 0 else bt
        scale = max(1.0, np.abs(b).max())
        for dof in range(node_dofs(case, node)):
            plus = case.evaluate(*case.perturbed(node, dof, EPS))[0]
            minus = case.evaluate(*case.perturbed(node, dof, -EPS))[0]
            fd = (plus - minus) / (2 * EPS)
            np.testing.assert_allclose(b[:, dof], fd, rtol=0, atol=1e-6 * scale)
        if node_dofs(case, node) == 6:
            # material increments: ∂Φ/∂Θ = B_rot R(r)
            mat = np.zeros((case.rows, 3))
            for i in range(3):
                plus = case.evaluate(*case.perturbed(node, 3 + i, EPS, material=True))[0]
                minus = case.evaluate(*case.perturbed(node, 3 + i, -EPS, material=True))[0]
                mat[:, i] = (plus - minus) / (2 * EPS)
            expected = b[:, 3:] @ rotation_matrix(q[3:])
            np.testing.assert_allclose(expected, mat, rtol=0, atol=1e-6 * scale)


@pytest.mark.parametrize("kind", KINDS, ids=[kinds.KIND_NAMES[k] for k in KINDS])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_geometric_stiffness_matches_finite_difference(kind: int, seed: int) -> None:
    case = Case(kind, np.random.default_rng(seed))
    _, _, _, k = case.evaluate(case.qb, case.qt)
    force = constraint_force(case, case.qb, case.qt)
    scale = max(1.0, np.abs(force).max())
    # every (u, θ) column of every node, every active row: K^Φ = ∂(Bᵀλ)/∂q
    for col_node, _ in case.nodes():
        for dof in range(node_dofs(case, col_node)):
            plus = constraint_force(case, *case.perturbed(col_node, dof, EPS))
            minus = constraint_force(case, *case.perturbed(col_node, dof, -EPS))
            fd = (plus - minus) / (2 * EPS)
            for row_node, _ in case.nodes():
                rows = node_dofs(case, row_node)
                np.testing.assert_allclose(
                    k[row_node, col_node, :rows, dof], fd[row_node, :rows], rtol=0, atol=1e-6 * scale
                )


def test_geometric_stiffness_of_the_heavy_top_joint_is_lambda_tilde_times_lever() -> None:
    """6→3 joint: K^Φ_bb = −λ~ (R X0)~ = λ~ (R xʳ)~ with xʳ = −X0 the body point (seed heavy-top formulation)."""
    rng = np.random.default_rng(1)
    case = Case(kinds.RIGID_JOINT_6DOF_TO_3DOF, rng)
    _, _, _, k = case.evaluate(case.qb, case.qt)

    def skew(v: np.ndarray) -> np.ndarray:
        return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])

    xr = -case.X0
    expected = skew(case.lam[:3]) @ skew(rotation_matrix(case.qb[3:]) @ xr)
    np.testing.assert_allclose(k[0, 0, 3:, 3:], expected, rtol=1e-13, atol=1e-12)
    assert np.all(k[0, 0, :3] == 0.0) and np.all(k[0, 0, :, :3] == 0.0)
    assert np.all(k[1] == 0.0) and np.all(k[0, 1] == 0.0)


@pytest.mark.parametrize("kind", KINDS, ids=[kinds.KIND_NAMES[k] for k in KINDS])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_kynema_gradient_is_exact_on_the_constraint_manifold(kind: int, seed: int) -> None:
    """Kynema's rotation gradients (AX(C)ᵀ, −AX(C)) are the transposes of the exact ones; they agree where
    the rotation constraint holds (C = I).  Off the manifold they differ (a quasi-Newton tangent)."""
    case = Case(kind, np.random.default_rng(seed))
    if kind in (kinds.RIGID_JOINT, kinds.ROTATION_CONTROL):
        rc = quat_exp(case.axes[0] * case.inputs[0]) if kind == kinds.ROTATION_CONTROL else np.array([1.0, 0, 0, 0])
        case.qt[3:] = rc_about_base(case.qb[3:], rc)
    elif kind == kinds.FIXED_BC:
        case.qt[3:] = [1.0, 0.0, 0.0, 0.0]
    elif kind == kinds.PRESCRIBED_BC:
        case.qt[3:] = case.inputs[3:]
    if kind == kinds.REVOLUTE_JOINT:
        case.X0[:] = 0.0  # Kynema's revolute gradient is exact for coincident nodes
    phi_k, bb_k, bt_k, _ = case.evaluate(case.qb, case.qt, exact=False)
    phi_e, bb_e, bt_e, _ = case.evaluate(case.qb, case.qt, exact=True)
    if kind not in (kinds.REVOLUTE_JOINT, *kinds.BODY_JOINTS) and case.rows == 6:
        np.testing.assert_allclose(phi_k[3:], 0.0, atol=1e-14)
    np.testing.assert_array_equal(phi_k, phi_e)
    np.testing.assert_allclose(bb_k, bb_e, rtol=0, atol=1e-13)
    np.testing.assert_allclose(bt_k, bt_e, rtol=0, atol=1e-13)


def rc_about_base(rb: np.ndarray, rc: np.ndarray) -> np.ndarray:
    """Target rotation with C = R(r_t ⊗ r_c⁻¹ ⊗ r_b⁻¹) = I, i.e. r_t = r_b ⊗ r_c."""
    return quat_mul(rb, rc)


# ------------------------------------------------------------------------------------------------
# two-body joints: Φ against a numpy twin, γ and outputs against derivatives along a trajectory


def phi_twin(kind: int, X0, geom, param, qb, qt, spec=None) -> np.ndarray:
    """Φ of a two-body joint written from its definition (docs/joints.md), independently of the kernels;
    ``spec``: the row list of a point-on-line, point-on-plane or generic joint."""
    ra, rt = rotation_matrix(qb[3:]), rotation_matrix(qt[3:])
    delta = X0 + qt[:3] + rt @ geom[1, 0] - qb[:3] - ra @ geom[0, 0]
    a = [None, *(ra @ geom[0, i] for i in (1, 2, 3))]
    b = [None, *(rt @ geom[1, i] for i in (1, 2, 3))]
    if spec is not None:
        listed: list[float] = []
        for typ, i, j in spec:
            if typ == kinds.ROW_POINT:
                listed += [*delta]
            elif typ == kinds.ROW_PERPENDICULAR:
                listed.append(a[i] @ b[j])
            elif typ == kinds.ROW_LINE:
                listed.append(delta @ a[i])
            else:  # ROW_LINE_ON_TARGET: a's point on b's plane
                listed.append((-delta) @ b[j])
        return np.array(listed)
    rows = {
        kinds.BALL_JOINT: [*delta],
        kinds.HINGE_JOINT: [*delta, a[1] @ b[2], a[1] @ b[3]],
        kinds.SLIDER_JOINT: [delta @ a[2], delta @ a[3], a[1] @ b[2], a[1] @ b[3], a[2] @ b[3]],
        kinds.CYLINDRICAL_JOINT: [delta @ a[2], delta @ a[3], a[1] @ b[2], a[1] @ b[3]],
        kinds.UNIVERSAL_JOINT: [*delta, a[1] @ b[1] - param],
        kinds.PLANAR_JOINT: [delta @ a[1], a[1] @ b[2], a[1] @ b[3]],
        kinds.WELD_JOINT: [*delta, a[1] @ b[2], a[1] @ b[3], a[2] @ b[3]],
        kinds.DISTANCE_CONSTRAINT: [np.linalg.norm(delta) - param],
    }
    return np.array(rows[kind])


@pytest.mark.parametrize("kind", kinds.BODY_JOINTS, ids=[kinds.KIND_NAMES[k] for k in kinds.BODY_JOINTS])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_body_joint_residual_matches_its_definition_and_needs_no_kynema_variant(kind: int, seed: int) -> None:
    case = Case(kind, np.random.default_rng(seed))
    phi, bb, bt, _ = case.evaluate(case.qb, case.qt)
    expected = phi_twin(kind, case.X0, case.geom, case.param, case.qb, case.qt, case.spec)
    np.testing.assert_allclose(phi, expected, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(expected).max()))
    phi_k, bb_k, bt_k, _ = case.evaluate(case.qb, case.qt, exact=False)
    np.testing.assert_array_equal(phi_k, phi)
    np.testing.assert_array_equal(bb_k, bb)
    np.testing.assert_array_equal(bt_k, bt)


def moved(q: np.ndarray, v: np.ndarray, a: np.ndarray, t: float) -> np.ndarray:
    """q at time t along u(t) = u + t u̇ + t²/2 ü, r(t) = exp(t ω + t²/2 ω̇) ⊗ r: velocity v, acceleration a at t = 0."""
    out = q.copy()
    out[:3] = q[:3] + t * v[:3] + 0.5 * t * t * a[:3]
    out[3:] = quat_mul(quat_exp(t * v[3:] + 0.5 * t * t * a[3:]), q[3:])
    return out


@pytest.mark.parametrize("kind", kinds.BODY_JOINTS, ids=[kinds.KIND_NAMES[k] for k in kinds.BODY_JOINTS])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_body_joint_velocity_terms_give_the_second_derivative_of_phi(kind: int, seed: int) -> None:
    """Φ̈ = B v̇ + γ along a trajectory through a random configuration (consistent initial accelerations)."""
    rng = np.random.default_rng(seed)
    case = Case(kind, rng)
    vb, vt, ab, at = (rng.normal(size=6) for _ in range(4))
    gamma = np.zeros(6)
    dispatch.bias(
        kind, case.X0, case.axes, case.geom, case.param, case.inputs, case.qb, case.qt, vb, vt,
        np.zeros((8, 3)), np.zeros((6, 4)), np.zeros((8, 3, 3)), gamma,
    )  # fmt: skip
    _, bb, bt, _ = case.evaluate(case.qb, case.qt)
    h = 1e-4

    def phi_at(t: float) -> np.ndarray:
        return case.evaluate(moved(case.qb, vb, ab, t), moved(case.qt, vt, at, t))[0]

    fd = (phi_at(h) - 2.0 * phi_at(0.0) + phi_at(-h)) / (h * h)
    expected = bb @ ab + bt @ at + gamma[: case.rows]
    np.testing.assert_allclose(expected, fd, rtol=0, atol=1e-5 * max(1.0, np.abs(fd).max()))
    np.testing.assert_array_equal(gamma[case.rows :], 0.0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_slider_output_is_the_displacement_along_the_axis_and_its_derivatives(seed: int) -> None:
    rng = np.random.default_rng(seed)
    case = Case(kinds.SLIDER_JOINT, rng)
    vb, vt, ab, at = (rng.normal(size=6) for _ in range(4))

    def s_at(t: float) -> float:
        qb, qt = moved(case.qb, vb, ab, t), moved(case.qt, vt, at, t)
        delta = case.X0 + qt[:3] + rotation_matrix(qt[3:]) @ case.geom[1, 0] - qb[:3]
        delta -= rotation_matrix(qb[3:]) @ case.geom[0, 0]
        return float(delta @ (rotation_matrix(qb[3:]) @ case.geom[0, 1]))

    out = np.zeros(3)
    body_joint_output(kinds.SLIDER_JOINT, case.X0, case.geom, case.qb, case.qt, vb, vt, ab, at, out)
    h = 1e-4
    rate = (s_at(h) - s_at(-h)) / (2 * h)
    accel = (s_at(h) - 2 * s_at(0.0) + s_at(-h)) / (h * h)
    scale = max(1.0, abs(accel), abs(rate))
    np.testing.assert_allclose(out, [s_at(0.0), rate, accel], rtol=0, atol=1e-5 * scale)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_hinge_output_is_the_relative_angle_about_the_axis_and_its_derivatives(seed: int) -> None:
    """On the joint manifold R_b = R_a Rot(e₁, θ): output (θ, θ̇, θ̈), the angle continued across ±π."""
    rng = np.random.default_rng(seed)
    frame = revolute_axes(rng.normal(size=3))
    geom = np.zeros((2, 4, 3))
    geom[:, 1:] = frame
    ra = quat_exp(rng.normal(size=3))
    theta, rate, accel = rng.uniform(-3.0, 3.0), rng.normal(), rng.normal()
    wa, alpha_a = rng.normal(size=3), rng.normal(size=3)
    rb = quat_mul(ra, quat_exp(theta * frame[0]))  # R_a Rot(e₁, θ) = Rot(R_a e₁, θ) R_a
    n = rotation_matrix(ra) @ frame[0]
    wb = wa + rate * n
    alpha_b = alpha_a + accel * n + rate * np.cross(wa, n)
    qb = np.concatenate([rng.normal(size=3), ra])
    qt = np.concatenate([rng.normal(size=3), rb])
    vb = np.concatenate([rng.normal(size=3), wa])
    vt = np.concatenate([rng.normal(size=3), wb])
    ab = np.concatenate([rng.normal(size=3), alpha_a])
    at = np.concatenate([rng.normal(size=3), alpha_b])
    out = np.zeros(3)
    body_joint_output(kinds.HINGE_JOINT, np.zeros(3), geom, qb, qt, vb, vt, ab, at, out)
    np.testing.assert_allclose(out, [theta, rate, accel], rtol=0, atol=1e-12)
    # continued from the previous value: 2π further on after a full turn
    out[0] = theta + 2 * np.pi + 0.1
    body_joint_output(kinds.HINGE_JOINT, np.zeros(3), geom, qb, qt, vb, vt, ab, at, out)
    assert abs(out[0] - (theta + 2 * np.pi)) < 1e-12


def test_input_loads_are_the_applied_torque_and_force() -> None:
    """Residual = minus the applied load: hinge torque τ on b about the axis, −τ on a; slider force F on b
    along the axis at b's joint point, −F on a at the same point (no net moment)."""
    rng = np.random.default_rng(7)
    case = Case(kinds.HINGE_JOINT, rng)
    n = rotation_matrix(case.qb[3:]) @ case.geom[0, 1]
    load = np.zeros((2, 6))
    input_load(kinds.HINGE_JOINT, case.X0, case.geom, 2.5, case.qb, case.qt, load)
    np.testing.assert_allclose(load, [[0, 0, 0, *(2.5 * n)], [0, 0, 0, *(-2.5 * n)]], atol=1e-14)
    case = Case(kinds.SLIDER_JOINT, rng)
    rb = rotation_matrix(case.qt[3:])
    n = rotation_matrix(case.qb[3:]) @ case.geom[0, 1]
    pb = case.X0 + case.qt[:3] + rb @ case.geom[1, 0]  # joint point of b (world, node a at X_a = 0)
    input_load(kinds.SLIDER_JOINT, case.X0, case.geom, 4.0, case.qb, case.qt, load)
    np.testing.assert_allclose(load[1, :3], -4.0 * n, atol=1e-13)
    np.testing.assert_allclose(load[1, 3:], -np.cross(rb @ case.geom[1, 0], 4.0 * n), atol=1e-12)
    np.testing.assert_allclose(load[0, :3], 4.0 * n, atol=1e-13)
    np.testing.assert_allclose(load[0, 3:], np.cross(pb - case.qb[:3], 4.0 * n), atol=1e-12)
