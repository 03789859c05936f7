"""Structural checks with messages that name the items at fault.

:func:`check_constraints` finds redundant or conflicting constraints: it evaluates the
constraint gradient B (rows: constraint equations, columns: node DOFs) at the initial
configuration; a rank-deficient B makes every Newton matrix singular, and the left
null space of B says which constraints repeat each other.
"""

from __future__ import annotations

import numpy as np

from kynemapy.builder import ModelError
from kynemapy.constraints import kinds
from kynemapy.constraints.dispatch import constraint_terms
from kynemapy.model import Model
from kynemapy.state import Inputs, State

#: models with more constraint rows than this are not checked (dense SVD cost)
MAX_CHECKED_ROWS = 3000


def describe_constraint(model: Model, c: int) -> str:
    """``constraint 3 (revolute_joint, nodes 1 → 2)``."""
    kind = kinds.KIND_NAMES[int(model.constraint_kind[c])]
    base, target = (int(x) for x in model.constraint_node[c])
    if base < 0:
        where = f"ground → node {target}" if int(model.constraint_kind[c]) in kinds.BODY_JOINTS else f"node {target}"
    else:
        where = f"nodes {base} → {target}"
    return f"constraint {c} ({kind}, {where})"


def constraint_gradient(model: Model, state: State, inputs: Inputs) -> np.ndarray:
    """Exact constraint gradient B, (constraint rows, n_system_dofs), at the given state."""
    nsys = model.n_system_dofs
    rows = int(np.sum(model.constraint_n_rows))
    B = np.zeros((rows, nsys))
    phi, bb, bt = np.zeros(6), np.zeros((6, 6)), np.zeros((6, 6))
    k = np.zeros((2, 2, 6, 6))
    s3, s4, s33 = np.zeros((8, 3)), np.zeros((6, 4)), np.zeros((8, 3, 3))
    ground = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    for c in range(model.n_constraints):
        base, target = (int(x) for x in model.constraint_node[c])
        qb = ground if base < 0 else state.q[base]
        constraint_terms(
            int(model.constraint_kind[c]),
            model.constraint_X0[c],
            model.constraint_axes[c],
            model.constraint_geometry[c],
            float(model.constraint_param[c]),
            inputs.constraint_input[c],
            qb,
            state.q[target],
            state.lam[c],
            True,
            phi,
            bb,
            bt,
            k,
            s3,
            s4,
            s33,
        )
        r0 = int(model.constraint_row[c])
        n = int(model.constraint_n_rows[c])
        for node, grad in ((base, bb), (target, bt)):
            if node < 0:
                continue
            m, d = int(model.node_map[node]), int(model.node_dofs[node])
            B[r0 : r0 + n, m : m + d] += grad[:n, :d]
    return B


def check_constraints(model: Model, state: State, inputs: Inputs) -> None:
    """Raise :class:`ModelError` naming the constraints when B is rank-deficient."""
    rows = int(np.sum(model.constraint_n_rows))
    if rows == 0 or rows > MAX_CHECKED_ROWS:
        return
    B = constraint_gradient(model, state, inputs)
    if not np.all(np.isfinite(B)):
        raise ModelError("the constraint gradient at the initial configuration is not finite")
    u, s, _ = np.linalg.svd(B, full_matrices=True)
    tol = max(B.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0) * 10.0
    rank = int(np.sum(s > tol))
    if rank == rows:
        return
    null = u[:, rank:]  # left null space: combinations of constraint rows that vanish
    owners = np.repeat(np.arange(model.n_constraints), model.constraint_n_rows)
    weight = np.zeros(model.n_constraints)
    np.maximum.at(weight, owners, np.abs(null).max(axis=1))
    involved = [c for c in range(model.n_constraints) if weight[c] > 1e-6]
    names = "; ".join(describe_constraint(model, c) for c in involved)
    hint = "Remove the duplicates or use a constraint with fewer rows (e.g. a 3-DOF BC instead of a 6-DOF one)."
    if any(int(model.constraint_kind[c]) in kinds.BODY_JOINTS for c in involved):
        hint += (
            " A closed loop of joints that all move in one plane (e.g. a four-bar of hinges with parallel axes) "
            "is redundant in 3-D: its out-of-plane equations repeat each other (3 for a loop of hinges). The "
            "standard remedy: replace one hinge of the loop by a ball joint and a neighbouring one by a "
            "cylindrical joint with the same axis, or by a universal joint with axis_a along the hinge axis "
            "and axis_b perpendicular to it; the motion is unchanged (see docs/joints.md)."
        )
    raise ModelError(
        f"redundant or conflicting constraints: {rows - rank} of the {rows} constraint equations repeat others, "
        f"so every Newton matrix is singular. Involved: {names}. {hint}"
    )
