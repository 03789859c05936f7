"""Constraint gradients B and geometric stiffness K^Φ against finite differences on the Lie group.

B must be the derivative of Φ with respect to the node DOFs as the stepper moves
them: translations u + ε eᵢ, rotations by a spatial (left) increment
``r ← exp(ε eᵢ) ⊗ r``.  The material (right) increment ``r ⊗ exp(ε eᵢ)`` is the
same derivative seen through R(r): ``∂Φ/∂Θ = B_rot R(r)``; both are checked.
K^Φ must be the derivative of ``[B_bᵀλ; B_tᵀλ]`` (rotation rows) with respect to
the rotation increments of each node.  Configurations are random (hypothesis).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kynemapy.builder import revolute_axes
from kynemapy.constraints import kinds
from kynemapy.constraints.dispatch import constraint_terms

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

    def evaluate(self, qb: np.ndarray, qt: np.ndarray, exact: bool = True):
        phi = np.zeros(6)
        bb = np.zeros((6, 6))
        bt = np.zeros((6, 6))
        k = np.zeros((2, 2, 6, 6))
        constraint_terms(
            self.kind,
            self.X0,
            self.axes,
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
    """B_bᵀλ and B_tᵀλ, (2, 6): the generalized constraint forces on the base and target."""
    _, bb, bt, _ = case.evaluate(qb, qt)
    lam = case.lam[: case.rows]
    return np.array([bb.T @ lam, bt.T @ lam])


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
    if kind not in (kinds.REVOLUTE_JOINT,) and case.rows == 6:
        np.testing.assert_allclose(phi_k[3:], 0.0, atol=1e-14)
    np.testing.assert_array_equal(phi_k, phi_e)
    np.testing.assert_allclose(bb_k, bb_e, rtol=0, atol=1e-13)
    np.testing.assert_allclose(bt_k, bt_e, rtol=0, atol=1e-13)


def rc_about_base(rb: np.ndarray, rc: np.ndarray) -> np.ndarray:
    """Target rotation with C = R(r_t ⊗ r_c⁻¹ ⊗ r_b⁻¹) = I, i.e. r_t = r_b ⊗ r_c."""
    return quat_mul(rb, rc)
