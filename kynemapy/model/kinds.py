"""Constraint kind codes (Kynema's enum values 1-8, then kynemapy's two-body joints) and their sizes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FIXED_BC = 1
PRESCRIBED_BC = 2
RIGID_JOINT = 3
REVOLUTE_JOINT = 4
ROTATION_CONTROL = 5
FIXED_BC_3DOF = 6
PRESCRIBED_BC_3DOF = 7
RIGID_JOINT_6DOF_TO_3DOF = 8
# two-body joints (not in Kynema; see docs/joints.md and constraints/body_joints.py)
BALL_JOINT = 9
HINGE_JOINT = 10
SLIDER_JOINT = 11
CYLINDRICAL_JOINT = 12
UNIVERSAL_JOINT = 13
PLANAR_JOINT = 14
WELD_JOINT = 15
DISTANCE_CONSTRAINT = 16
# two-body joints whose rows are listed per constraint in ``Model.constraint_axes`` (see joint_rows)
POINT_ON_LINE_JOINT = 17
POINT_ON_PLANE_JOINT = 18
GENERIC_JOINT = 19
#: the first kind whose rows are listed per constraint (:func:`encode_rows`), not per kind
LISTED_ROWS = POINT_ON_LINE_JOINT

KIND_NAMES = {
    FIXED_BC: "fixed_bc",
    PRESCRIBED_BC: "prescribed_bc",
    RIGID_JOINT: "rigid_joint",
    REVOLUTE_JOINT: "revolute_joint",
    ROTATION_CONTROL: "rotation_control",
    FIXED_BC_3DOF: "fixed_bc_3dof",
    PRESCRIBED_BC_3DOF: "prescribed_bc_3dof",
    RIGID_JOINT_6DOF_TO_3DOF: "rigid_joint_6dof_to_3dof",
    BALL_JOINT: "ball_joint",
    HINGE_JOINT: "hinge_joint",
    SLIDER_JOINT: "slider_joint",
    CYLINDRICAL_JOINT: "cylindrical_joint",
    UNIVERSAL_JOINT: "universal_joint",
    PLANAR_JOINT: "planar_joint",
    WELD_JOINT: "weld_joint",
    DISTANCE_CONSTRAINT: "distance_constraint",
    POINT_ON_LINE_JOINT: "point_on_line_joint",
    POINT_ON_PLANE_JOINT: "point_on_plane_joint",
    GENERIC_JOINT: "generic_joint",
}

#: the two-body joints (each side a body or the ground; geometry in ``Model.constraint_geometry``)
BODY_JOINTS = (
    BALL_JOINT,
    HINGE_JOINT,
    SLIDER_JOINT,
    CYLINDRICAL_JOINT,
    UNIVERSAL_JOINT,
    PLANAR_JOINT,
    WELD_JOINT,
    DISTANCE_CONSTRAINT,
    POINT_ON_LINE_JOINT,
    POINT_ON_PLANE_JOINT,
    GENERIC_JOINT,
)

#: rows of the constraint, indexed by kind code (a generic joint: at most 6, its own count is
#: that of its row list, ``Model.constraint_n_rows``)
N_ROWS = np.array([6, 6, 6, 6, 5, 6, 3, 3, 3, 3, 5, 5, 4, 4, 3, 6, 1, 2, 1, 6], dtype=np.int64)
#: 1 for one-node constraints (boundary conditions), 2 for joints
N_NODES = np.array([1, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], dtype=np.int64)
#: DOFs the constraint needs on its target node (6 = all, 3 = position)
TARGET_DOFS = np.array([6, 6, 6, 6, 6, 6, 3, 3, 3, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6], dtype=np.int64)
#: 1 for the kinds whose input (torque, force) enters the residual: revolute, hinge, slider
HAS_INPUT_LOAD = np.zeros(len(N_ROWS), dtype=np.int64)
HAS_INPUT_LOAD[[REVOLUTE_JOINT, HINGE_JOINT, SLIDER_JOINT]] = 1

#: the kinds that take each input (and the Kynema revolute joint's output), for input checks
ACCEPTS = {
    "prescribed displacement": (PRESCRIBED_BC, PRESCRIBED_BC_3DOF),
    "torque input": (REVOLUTE_JOINT, HINGE_JOINT),  # revolute: deprecated, see Simulation.set_torque
    "brake torque input": (REVOLUTE_JOINT,),
    "force input": (SLIDER_JOINT,),
    "angle input": (ROTATION_CONTROL,),
    "servo": (HINGE_JOINT, SLIDER_JOINT),  # and the other drive quantities (Simulation.joint_effort)
    "revolute output": (REVOLUTE_JOINT,),
}
#: 1 for the kinds with outputs (angle or displacement, rate, acceleration): revolute, hinge, slider
HAS_OUTPUT = HAS_INPUT_LOAD.copy()
#: ``constraint_has_load`` of a hinge or slider built with a drive (spring, damper, friction or servo,
#: docs/joints.md): its load's tangent enters the Newton matrix in both tangent modes
DRIVEN_LOAD = 2


def driven(kind: np.ndarray, axes: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """(C,) bool: the hinges and sliders with a drive in the model's ``constraint_axes`` (C, 3, 3)
    (spring, damper, Coulomb friction, compliant limits) or a servo in the constraint inputs (C, 7) (kp, kd or
    feed-forward non-zero), and the ball joints with a cone limit."""
    kind = np.asarray(kind)
    axes = np.asarray(axes).reshape(-1, 3, 3)
    inputs = np.asarray(inputs).reshape(-1, 7)
    passive = (axes[:, 0, 0] != 0) | (axes[:, 0, 2] != 0) | (axes[:, 1, 0] != 0) | (axes[:, 2, 2] != 0)
    drive = passive | np.any(inputs[:, [1, 2, 5]] != 0, axis=1)
    cone = (kind == BALL_JOINT) & (axes[:, 2, 2] != 0)  # a ball joint's cone limit
    return (((kind == HINGE_JOINT) | (kind == SLIDER_JOINT)) & drive) | cone


# ---------------------------------------------------------------- rows of the two-body joints
# A two-body joint is a list of primitive rows (engine/constraints/primitives.py), each
# ``(type, axis i of side a, axis j of side b)`` with the sides as stored (a = the base).
ROW_POINT = 1  #: three rows Δ = p_b − p_a (the joint points coincide)
ROW_PERPENDICULAR = 2  #: one row aᵢ·bⱼ (minus cos of a universal joint's angle)
ROW_LINE = 3  #: one row Δ·aᵢ (b's point stays on a plane of a with normal aᵢ)
ROW_DISTANCE = 4  #: one row |Δ| − L
ROW_LINE_ON_TARGET = 5  #: one row (p_a − p_b)·bⱼ (a's point on a plane of b: a mirrored LINE row)


def generic_rows(locked: Sequence[bool]) -> list[tuple[int, int, int]]:
    """Rows of a generic joint (sides as the user gave them, frame axes 1..3 on both sides).

    ``locked`` = (x, y, z translations, x, y, z rotations) of the joint frame.  Translations:
    all three locked: ``Δ`` (a point row); else ``Δ·aᵢ`` per locked axis i.  Rotations: all three
    locked: ``a₁·b₂, a₁·b₃, a₂·b₃`` (a weld); two locked, axis f free: ``a_f·b_j, a_f·b_k`` (a hinge
    about f); one locked, axis k: ``aᵢ·bⱼ`` with (i, j, k) cyclic.  So the hinge, slider, weld,
    cylindrical, planar and ball joints are the special cases with exactly their own rows.
    """
    rows: list[tuple[int, int, int]] = []
    t = [i + 1 for i in range(3) if locked[i]]
    r = [i + 1 for i in range(3) if locked[3 + i]]
    if len(t) == 3:
        rows.append((ROW_POINT, 0, 0))
    else:
        rows += [(ROW_LINE, i, 0) for i in t]
    if len(r) == 3:
        rows += [(ROW_PERPENDICULAR, 1, 2), (ROW_PERPENDICULAR, 1, 3), (ROW_PERPENDICULAR, 2, 3)]
    elif len(r) == 2:
        (f,) = {1, 2, 3} - set(r)
        rows += [(ROW_PERPENDICULAR, f, j) for j in (1, 2, 3) if j != f]
    elif len(r) == 1:
        k = r[0]
        rows.append((ROW_PERPENDICULAR, k % 3 + 1, (k + 1) % 3 + 1))
    return rows


def mirrored_rows(rows: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The same rows with the sides exchanged (a joint to the ground stored with the ground as its
    base): ``aᵢ·bⱼ`` becomes ``bⱼ·aᵢ`` and a LINE row a row on the target's plane."""
    out = []
    for typ, i, j in rows:
        if typ == ROW_PERPENDICULAR:
            out.append((typ, j, i))
        elif typ == ROW_LINE:
            out.append((ROW_LINE_ON_TARGET, 0, i))
        elif typ == ROW_LINE_ON_TARGET:
            out.append((ROW_LINE, j, 0))
        else:
            out.append((typ, i, j))
    return out


def count_rows(rows: Sequence[tuple[int, int, int]]) -> int:
    """Constraint rows of a row list (a point row counts 3)."""
    return sum(3 if typ == ROW_POINT else 1 for typ, _, _ in rows)


def encode_rows(rows: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """The row list as ``Model.constraint_axes[c]`` (3, 3) holds it for kinds >= LISTED_ROWS: entry
    ``s`` (row-major) is ``16 type + 4 i + j`` for primitive s (at most 6), 0 after the last."""
    out = np.zeros(9)
    for s, (typ, i, j) in enumerate(rows):
        out[s] = 16 * typ + 4 * i + j
    return out.reshape(3, 3)
