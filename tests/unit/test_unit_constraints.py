"""Unit tier: constraint kernels, kinds table and constraint bookkeeping.

Inputs, expected numbers and tolerances are those of Kynema-FMB's unit tests
(``tests/unit_tests/constraints``; reference §7.3), which deliberately use
non-unit quaternions and a raw (non-orthonormal) axes matrix.  Formulas: reference §5.
The kernels are called through ``kynemapy.engine.constraints.dispatch.evaluate``
with the Kynema kind codes of ``kynemapy.model.kinds``.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.engine.constraints import dispatch
from kynemapy.engine.constraints.revolute_joint import revolute_output, revolute_torque
from kynemapy.model import kinds

X0 = np.array([1.0, 2.0, 3.0])
AXES_RAW = np.arange(1.0, 10.0).reshape(3, 3)  # [[1,2,3],[4,5,6],[7,8,9]], rows used un-normalised
INPUTS = np.arange(4.0, 11.0)  # (4, ..., 10)
BASE_U = np.arange(18.0, 25.0)  # (18, ..., 24)
TARGET_U = np.arange(11.0, 18.0)  # (11, ..., 17)
IDENTITY7 = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def evaluate(kind, X0=X0, axes=None, inputs=None, qb=None, qt=TARGET_U, lam=None):
    """Run ``dispatch.evaluate``; returns (Φ, B_b, B_t).  Outputs are pre-filled with NaN to
    check that the kernel writes (zeroes) every entry."""
    axes = np.zeros((3, 3)) if axes is None else np.asarray(axes, dtype=float)
    inputs = IDENTITY7.copy() if inputs is None else np.asarray(inputs, dtype=float)
    qb = np.zeros(7) if qb is None else np.asarray(qb, dtype=float)
    lam = np.zeros(6) if lam is None else np.asarray(lam, dtype=float)
    phi = np.full(6, np.nan)
    bb = np.full((6, 6), np.nan)
    bt = np.full((6, 6), np.nan)
    k = np.full((2, 2, 6, 6), np.nan)
    dispatch.evaluate(
        kind, np.asarray(X0, dtype=float), axes, np.zeros((2, 4, 3)), 0.0, inputs, qb, np.asarray(qt, dtype=float),
        lam, False,
        phi, bb, bt, k, np.zeros((8, 3)), np.zeros((6, 4)), np.zeros((8, 3, 3)),
    )  # fmt: skip
    return phi, bb, bt


def with_identity_translation(rot: np.ndarray, sign: float = 1.0) -> np.ndarray:
    out = np.zeros((6, 6))
    out[:3, :3] = sign * np.eye(3)
    out[3:, 3:] = rot
    return out


# ---------------------------------------------------------------------------
# Residuals and gradients (Kynema test_calculate_*_constraint.cpp)
# ---------------------------------------------------------------------------


def test_fixed_bc_constraint() -> None:
    phi, _, bt = evaluate(kinds.FIXED_BC)
    np.testing.assert_allclose(phi, [11.0, 12.0, 13.0, 420.0, 448.0, 476.0], rtol=0.0, atol=1e-15)
    expected_bt = with_identity_translation(
        np.array([[-29.0, -478.0, -31.0], [-2.0, -60.0, -482.0], [-479.0, -62.0, -93.0]])
    )
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-15)


def test_prescribed_bc_constraint() -> None:
    phi, _, bt = evaluate(kinds.PRESCRIBED_BC, inputs=INPUTS)
    expected_phi = [-790.0, -411.0, -620.0, -50.666666666666657, -7.1054273576010019e-15, -101.33333333333343]
    np.testing.assert_allclose(phi, expected_phi, rtol=0.0, atol=1e-12)
    expected_bt = with_identity_translation(
        np.array(
            [
                [961.99999999999977, 50.666666666666714, -1.3333333333333379],
                [-50.666666666666714, 962.6666666666664, 25.333333333333329],
                [-1.3333333333333308, -25.333333333333329, 959.99999999999977],
            ]
        )
    )
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-12)


RIGID_BB_TRANSLATION = np.array(
    [
        [-1.0, 0.0, 0.0, 0.0, -4158.0, 2380.0],
        [0.0, -1.0, 0.0, 4158.0, 0.0, -5894.0],
        [0.0, 0.0, -1.0, -2380.0, 5894.0, 0.0],
    ]
)


def test_rigid_joint_constraint() -> None:
    phi, bb, bt = evaluate(kinds.RIGID_JOINT, qb=BASE_U)
    expected_phi = [-5900.0, -2385.0, -4162.0, 19.310344827586249, -6.5558669604115494e-14, 38.620689655172455]
    np.testing.assert_allclose(phi, expected_phi, rtol=0.0, atol=1e-12)
    expected_bb = np.zeros((6, 6))
    expected_bb[:3] = RIGID_BB_TRANSLATION
    expected_bb[3:, 3:] = [
        [-965.42068965517251, -19.310344827586228, 0.1931034482758299],
        [19.310344827586228, -965.51724137931046, -9.6551724137931245],
        [0.19310344827589546, 9.6551724137931245, -965.13103448275876],
    ]
    np.testing.assert_allclose(bb, expected_bb, rtol=0.0, atol=1e-12)
    expected_bt = with_identity_translation(
        np.array(
            [
                [965.42068965517251, -19.310344827586228, -0.19310344827589564],
                [19.310344827586228, 965.51724137931046, -9.6551724137931245],
                [-0.1931034482758299, 9.6551724137931245, 965.13103448275876],
            ]
        )
    )
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-12)


def test_rigid_joint_6dof_to_3dof_constraint() -> None:
    """§5.2 item 6: the translational part of the rigid joint (first 3 rows), other rows zero."""
    phi, bb, bt = evaluate(kinds.RIGID_JOINT_6DOF_TO_3DOF, qb=BASE_U)
    np.testing.assert_allclose(phi, [-5900.0, -2385.0, -4162.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-12)
    expected_bb = np.zeros((6, 6))
    expected_bb[:3] = RIGID_BB_TRANSLATION
    np.testing.assert_allclose(bb, expected_bb, rtol=0.0, atol=1e-12)
    expected_bt = np.zeros((6, 6))
    expected_bt[:3, :3] = np.eye(3)
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-12)


def test_fixed_and_prescribed_bc_3dof_constraints() -> None:
    """§5.2 items 2 and 4: translational rows of FixedBC / PrescribedBC, B_t = [I, 0]."""
    expected_bt = np.zeros((6, 6))
    expected_bt[:3, :3] = np.eye(3)
    phi, _, bt = evaluate(kinds.FIXED_BC_3DOF)
    np.testing.assert_allclose(phi, [11.0, 12.0, 13.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-15)
    # Kynema's 3-DOF prescribed kernel evaluates Φ[0:3] = u2 + X0 − u1 − R(R1) X0 literally, with
    # (u1, R1) = input: with X0 = (1,2,3) this gives the PrescribedBC translational numbers
    phi, _, bt = evaluate(kinds.PRESCRIBED_BC_3DOF, inputs=INPUTS)
    np.testing.assert_allclose(phi, [-790.0, -411.0, -620.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-15)
    # and with the X0 = 0 that the model uses for prescribed BCs (§5.1): Φ = u2 − input[0:3]
    phi, _, _ = evaluate(kinds.PRESCRIBED_BC_3DOF, X0=np.zeros(3), inputs=INPUTS)
    np.testing.assert_allclose(phi, [7.0, 7.0, 7.0, 0.0, 0.0, 0.0], rtol=0.0, atol=1e-15)


def test_rotation_control_constraint() -> None:
    phi, bb, bt = evaluate(kinds.ROTATION_CONTROL, axes=AXES_RAW, inputs=INPUTS, qb=BASE_U)
    expected_phi = [-5900.0, -2385.0, -4162.0, -523.34484186380166, -220.99332358927026, -370.92497523148791]
    np.testing.assert_allclose(phi, expected_phi, rtol=0.0, atol=1e-12)
    expected_bb = np.zeros((6, 6))
    expected_bb[:3] = RIGID_BB_TRANSLATION
    expected_bb[3:, 3:] = [
        [352.78065407508194, 393.20409838557617, 238.18605213460458],
        [22.279123154088261, -51.458926551935804, 408.91100181659226],
        [459.17937572387484, -114.4338400472094, 107.94957687179453],
    ]
    np.testing.assert_allclose(bb, expected_bb, rtol=0.0, atol=1e-12)
    expected_bt = with_identity_translation(
        np.array(
            [
                [-352.78065407508194, -22.279123154088261, -459.17937572387484],
                [-393.20409838557617, 51.458926551935804, 114.4338400472094],
                [-238.18605213460458, -408.91100181659226, -107.94957687179453],
            ]
        )
    )
    np.testing.assert_allclose(bt, expected_bt, rtol=0.0, atol=1e-12)


def test_revolute_joint_constraint() -> None:
    phi, bb, bt = evaluate(kinds.REVOLUTE_JOINT, axes=AXES_RAW, inputs=INPUTS, qb=BASE_U)
    np.testing.assert_allclose(phi, [-5900.0, -2385.0, -4162.0, 97314000.0, 62379744.0, 0.0], rtol=0.0, atol=1e-15)
    expected_bb = np.zeros((6, 6))
    expected_bb[:3, :3] = -np.eye(3)
    expected_bb[3, 3:] = [-10930136.0, -15850520.0, 24566248.0]
    expected_bb[4, 3:] = [-5585804.0, -8091272.0, 12549292.0]
    np.testing.assert_allclose(bb, expected_bb, rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(bt, -expected_bb, rtol=0.0, atol=1e-15)


def test_revolute_joint_force() -> None:
    """Kynema CalculateRevoluteJointForce: system residual (0, 0, 0, 11032, 4816, 8008) = τ R(r_t) axes[0]."""
    out = np.full(3, np.nan)
    revolute_torque(AXES_RAW, TARGET_U, INPUTS[0], out)
    np.testing.assert_allclose(out, [11032.0, 4816.0, 8008.0], rtol=0.0, atol=1e-15)


def test_revolute_joint_output() -> None:
    """Kynema CalculateRevoluteJointOutput: target u = (18..24), u̇ = (25..30), ü = (31..36) → (0, 358792, 433384).

    The azimuth is 0 because the log map of the non-unit quaternion (21, 22, 23, 24) returns 0.
    """
    out = np.full(3, np.nan)
    qt = np.arange(18.0, 25.0)
    vt = np.arange(25.0, 31.0)
    vdt = np.arange(31.0, 37.0)
    revolute_output(AXES_RAW, qt, vt, vdt, np.zeros((8, 3)), out)
    np.testing.assert_allclose(out, [0.0, 358792.0, 433384.0], rtol=0.0, atol=1e-15)


# ---------------------------------------------------------------------------
# Independent NumPy checks of the §5.2 formulas on the same inputs
# ---------------------------------------------------------------------------


def rot_literal(q) -> np.ndarray:
    w, v = float(q[0]), np.asarray(q[1:], dtype=float)
    s = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return (w * w - v @ v) * np.eye(3) + 2.0 * np.outer(v, v) + 2.0 * w * s


def test_revolute_joint_formulas_in_numpy() -> None:
    """x = R(r_b) a0, y = R(r_t) a1, z = R(r_t) a2; Φ[3] = z·x, Φ[4] = y·x; B_t rows −(x×z)ᵀ, −(x×y)ᵀ."""
    rb, rt = rot_literal(BASE_U[3:]), rot_literal(TARGET_U[3:])
    x, y, z = rb @ AXES_RAW[0], rt @ AXES_RAW[1], rt @ AXES_RAW[2]
    assert z @ x == 97314000.0
    assert y @ x == 62379744.0
    np.testing.assert_array_equal(-np.cross(x, z), [10930136.0, 15850520.0, -24566248.0])
    np.testing.assert_array_equal(-np.cross(x, y), [5585804.0, 8091272.0, -12549292.0])
    # torque and output use the target rotation of axes[0]
    np.testing.assert_array_equal(4.0 * rot_literal(TARGET_U[3:]) @ AXES_RAW[0], [11032.0, 4816.0, 8008.0])
    a = rot_literal(np.arange(21.0, 25.0)) @ AXES_RAW[0]
    assert a @ np.arange(28.0, 31.0) == 358792.0
    assert a @ np.arange(34.0, 37.0) == 433384.0


def test_rigid_joint_translation_formula_in_numpy() -> None:
    """Φ[0:3] = u_t + X0 − u_b − R(r_b) X0 and B_b[0:3, 3:6] = (R(r_b) X0)~ (literal, non-unit r_b)."""
    r1x0 = rot_literal(BASE_U[3:]) @ X0
    np.testing.assert_array_equal(TARGET_U[:3] + X0 - BASE_U[:3] - r1x0, [-5900.0, -2385.0, -4162.0])
    tilde = np.array([[0.0, -r1x0[2], r1x0[1]], [r1x0[2], 0.0, -r1x0[0]], [-r1x0[1], r1x0[0], 0.0]])
    np.testing.assert_array_equal(tilde, RIGID_BB_TRANSLATION[:, 3:])


# ---------------------------------------------------------------------------
# Kinds table (Kynema test_constraint_type.cpp, reference §5.1)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "n_nodes", "n_rows", "target_dofs"),
    [
        (0, 1, 6, None),  # None: one node, six rows, never evaluated
        (kinds.FIXED_BC, 1, 6, 6),
        (kinds.PRESCRIBED_BC, 1, 6, 6),
        (kinds.RIGID_JOINT, 2, 6, 6),
        (kinds.REVOLUTE_JOINT, 2, 5, 6),
        (kinds.ROTATION_CONTROL, 2, 6, 6),
        (kinds.FIXED_BC_3DOF, 1, 3, 3),
        (kinds.PRESCRIBED_BC_3DOF, 1, 3, 3),
        (kinds.RIGID_JOINT_6DOF_TO_3DOF, 2, 3, 3),
    ],
)
def test_constraint_type_rows_and_nodes(kind, n_nodes, n_rows, target_dofs) -> None:
    assert kinds.N_NODES[kind] == n_nodes
    assert kinds.N_ROWS[kind] == n_rows
    if target_dofs is not None:
        assert kinds.TARGET_DOFS[kind] == target_dofs


def test_constraint_kind_codes_are_kynema_enum_values() -> None:
    assert (
        kinds.FIXED_BC,
        kinds.PRESCRIBED_BC,
        kinds.RIGID_JOINT,
        kinds.REVOLUTE_JOINT,
        kinds.ROTATION_CONTROL,
        kinds.FIXED_BC_3DOF,
        kinds.PRESCRIBED_BC_3DOF,
        kinds.RIGID_JOINT_6DOF_TO_3DOF,
    ) == (1, 2, 3, 4, 5, 6, 7, 8)


# ---------------------------------------------------------------------------
# Constraint bookkeeping (Kynema test_constraints.cpp)
# ---------------------------------------------------------------------------


def test_constraints_single_fixed_bc() -> None:
    b = kp.ModelBuilder()
    b.add_node(position=(0.0, 0.0, 0.0))
    n1 = b.add_node(position=(1.0, 0.0, 0.0))
    b.add_fixed_bc(n1)
    model = b.build()
    assert model.n_constraints == 1
    assert int(model.constraint_n_rows.sum()) == 6
    assert model.n_dofs - model.n_system_dofs == 6
    assert model.constraint_node[0, 1] == 1
    assert model.constraint_kind[0] == kinds.FIXED_BC
    # one-node constraint: X0 = X_target − axis (axis 0) = X_target (§5.1)
    np.testing.assert_array_equal(model.constraint_X0[0], [1.0, 0.0, 0.0])


def test_constraints_fixed_bc_and_revolute_joint() -> None:
    b = kp.ModelBuilder()
    b.add_node(position=(0.0, 0.0, 0.0))
    n1 = b.add_node(position=(1.0, 0.0, 0.0))
    n2 = b.add_node(position=(2.0, 0.0, 0.0))
    b.add_fixed_bc(n1)
    b.add_revolute_joint(n1, n2, axis=(0.0, 1.0, 0.0))
    model = b.build()
    assert model.n_constraints == 2
    assert int(model.constraint_n_rows.sum()) == 11  # 6 + 5
    assert model.n_dofs - model.n_system_dofs == 11
    np.testing.assert_array_equal(model.constraint_row, [0, 6])
    np.testing.assert_array_equal(model.constraint_node[1], [1, 2])


def test_constraint_revolute_axes_frame() -> None:
    """§5.1: revolute axes = d I + k v vᵀ − ṽ with v = e1 × x̂, d = x̂·e1, k = 1/(1+d): row 0 = x̂,
    rows 1, 2 = images of e2, e3 under the rotation taking e1 to x̂ (checked via Rodrigues in NumPy)."""
    b = kp.ModelBuilder()
    n0 = b.add_node(position=(0.0, 0.0, 0.0))
    n1 = b.add_node(position=(0.0, 0.0, 0.0))
    axis = np.array([0.0, 3.0, 4.0])
    b.add_revolute_joint(n0, n1, axis=axis)
    axes = b.build().constraint_axes[0]
    xh = axis / np.linalg.norm(axis)
    e1 = np.array([1.0, 0.0, 0.0])
    v = np.cross(e1, xh)
    s, c = np.linalg.norm(v), e1 @ xh
    vs = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    rot = np.eye(3) + vs + vs @ vs * (1.0 - c) / s**2  # Rodrigues: rotation taking e1 to x̂
    np.testing.assert_allclose(axes, rot.T, rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(axes[0], xh, rtol=0.0, atol=1e-15)


def test_constraint_control_signal_copied_to_input() -> None:
    """Kynema UpdateViewsWithControlSignal: control 1.5 → input[0] = 1.5 (rotation control angle)."""
    b = kp.ModelBuilder()
    n0 = b.add_node(position=(0.0, 0.0, 0.0))
    n1 = b.add_node(position=(1.0, 0.0, 0.0))
    b.add_mass(n0, mass_matrix=np.eye(6))
    b.add_mass(n1, mass_matrix=np.eye(6))
    cid = b.add_rotation_control(n0, n1, axis=(1.0, 0.0, 0.0), angle=1.5)
    model = b.build()
    assert model.initial_constraint_input[cid, 0] == 1.5
    np.testing.assert_array_equal(model.constraint_axes[cid], [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    sim = kp.Simulation(model, kp.StepParameters(h=0.01), consistent_initial_accelerations=False)
    assert sim.inputs.constraint_input[cid, 0] == 1.5
    sim.set_angle(cid, 0.25)
    assert sim.inputs.constraint_input[cid, 0] == 0.25


def test_constraint_update_displacement_copied_to_input() -> None:
    """Kynema UpdateDisplacementAndUpdateViews: a new prescribed displacement lands in input (7)."""
    b = kp.ModelBuilder()
    n0 = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n0, mass_matrix=np.eye(6))
    cid = b.add_prescribed_bc(n0)
    model = b.build()
    np.testing.assert_array_equal(model.initial_constraint_input[cid], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(model.constraint_X0[cid], [0.0, 0.0, 0.0])  # prescribed BCs: X0 = 0 (§5.1)
    sim = kp.Simulation(model, kp.StepParameters(h=0.01), consistent_initial_accelerations=False)
    sim.set_prescribed_displacement(cid, (0.1, 0.2, 0.3), (1.0, 0.0, 0.0, 0.0))
    np.testing.assert_array_equal(sim.inputs.constraint_input[cid], [0.1, 0.2, 0.3, 1.0, 0.0, 0.0, 0.0])
