"""Structural checks with messages that name the items at fault.

:func:`check_constraints` finds redundant or conflicting constraints: it evaluates the
constraint gradient B (rows: constraint equations, columns: node DOFs) at the initial
configuration; a rank-deficient B makes every Newton matrix singular, and the left
null space of B says which constraints repeat each other.

Up to :data:`DENSE_CHECK_ROWS` constraint rows the rank comes from a dense SVD of B
(exact naming of every constraint in a redundant set); above, from a sparse LU of
B Bᵀ (SuperLU, fill-reducing ordering; linear cost for chains), whose vanishing
pivots name the constraint rows that depend on others.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kynemapy.engine.api import task
from kynemapy.engine.data import Workspace
from kynemapy.engine.entry import CONSTRAINT_TERMS
from kynemapy.engine.fields import Data
from kynemapy.engine.params import ACCELERATION_COEFFICIENTS
from kynemapy.model import Model, kinds
from kynemapy.model.builder import ModelError

#: up to this many constraint rows: dense SVD of B; above: sparse LU of B Bᵀ
DENSE_CHECK_ROWS = 600


def describe_constraint(model: Model, c: int) -> str:
    """``constraint 3 (revolute_joint, nodes 1 → 2)``."""
    kind = kinds.KIND_NAMES[int(model.constraint_kind[c])]
    base, target = (int(x) for x in model.constraint_node[c])
    if base < 0:
        where = f"ground → node {target}" if int(model.constraint_kind[c]) in kinds.BODY_JOINTS else f"node {target}"
    else:
        where = f"nodes {base} → {target}"
    return f"constraint {c} ({kind}, {where})"


def evaluate_constraints(d: Data) -> None:
    """Φ, B_b, B_t and K^Φ of every constraint, exact gradients, at the state of ``d``, into
    ``con_phi``, ``con_bb``, ``con_bt``, ``con_k``: the engine's constraint phase alone, through
    the engine already loaded (its own compiled code would be one more cache load, 17 ms, in
    every new process; a whole linearization would cost as much as a Newton iteration, for a
    beam rotor far more than the constraints)."""
    task(d, ACCELERATION_COEFFICIENTS, CONSTRAINT_TERMS)


def constraint_gradient(workspace: Workspace, data: Data, sparse: bool = False) -> Any:
    """Exact constraint gradient B, (constraint rows, n_system_dofs), at the state of ``data``
    (the constraint phase with exact gradients; it overwrites the workspace's constraint blocks).

    A dense array, or with ``sparse`` a ``scipy.sparse.csr_matrix`` (scipy is imported only
    then: a small model's checks do not import ``scipy.sparse``, about 10 ms of every process).
    """
    model = workspace.model
    evaluate_constraints(data)
    bb, bt = workspace.views["con_bb"], workspace.views["con_bt"]
    nsys = int(model.n_system_dofs)
    rows = int(np.sum(model.constraint_n_rows))
    entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for c in range(model.n_constraints):
        base, target = (int(x) for x in model.constraint_node[c])
        r0 = int(model.constraint_row[c])
        n = int(model.constraint_n_rows[c])
        for node, grad in ((base, bb[c]), (target, bt[c])):
            if node < 0:
                continue
            m, d = int(model.node_map[node]), int(model.node_dofs[node])
            r, col = np.meshgrid(np.arange(r0, r0 + n), np.arange(m, m + d), indexing="ij")
            entries.append((r.ravel(), col.ravel(), grad[:n, :d].ravel().copy()))
    if entries:
        r, col, v = (np.concatenate(x) for x in zip(*entries, strict=True))
    else:
        r = col = np.zeros(0, dtype=np.int64)
        v = np.zeros(0)
    if not sparse:
        B = np.zeros((rows, nsys))
        np.add.at(B, (r, col), v)  # duplicates summed
        return B
    import scipy.sparse as sp

    return sp.csr_matrix((v, (r, col)), shape=(rows, nsys))  # duplicates summed


def check_constraints(workspace: Workspace, data: Data) -> None:
    """Raise :class:`ModelError` naming the constraints when B (at the state of ``data``) is rank-deficient."""
    model = workspace.model
    rows = int(np.sum(model.constraint_n_rows))
    if rows == 0:
        return
    if rows > DENSE_CHECK_ROWS:
        _check_sparse(workspace, data, rows)
        return
    B = constraint_gradient(workspace, data)
    if not np.all(np.isfinite(B)):
        raise ModelError("the constraint gradient at the initial configuration is not finite")
    # singular values only: the full SVD's (n × n) right factor ran threaded BLAS, whose idle
    # threads then spin for about 0.1 s, doubling the process's CPU time of the first steps
    s = np.linalg.svd(B, compute_uv=False)
    tol = max(B.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0) * 10.0
    rank = int(np.sum(s > tol))
    if rank == rows:
        return
    u, s, _ = np.linalg.svd(B, full_matrices=True)
    null = u[:, rank:]  # left null space: combinations of constraint rows that vanish
    owners = np.repeat(np.arange(model.n_constraints), model.constraint_n_rows)
    weight = np.zeros(model.n_constraints)
    np.maximum.at(weight, owners, np.abs(null).max(axis=1))
    involved = [c for c in range(model.n_constraints) if weight[c] > 1e-6]
    _raise_redundant(model, rows, rows - rank, involved)


def _check_sparse(workspace: Workspace, data: Data, rows: int) -> None:
    """Rank test of a large B through a sparse LU of G = B Bᵀ (shifted by 1e-12 of its scale).

    G is singular exactly when B is rank-deficient.  The shifted factorization has about
    as many pivots below 1e-9·scale as G has null directions; two steps of inverse
    iteration then give a null vector (a combination of constraint rows that vanishes),
    whose non-zero entries name the constraints involved.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    model = workspace.model
    B = constraint_gradient(workspace, data, sparse=True)
    if not np.all(np.isfinite(B.data)):
        raise ModelError("the constraint gradient at the initial configuration is not finite")
    G = (B @ B.T).tocsc()
    scale = float(np.abs(G.diagonal()).max())
    if scale == 0.0:
        _raise_redundant(model, rows, rows, list(range(model.n_constraints)))
    shift = 1e-12 * scale
    lu = spla.splu((G + shift * sp.identity(rows, format="csc")).tocsc(), permc_spec="COLAMD")
    n_small = int(np.sum(np.abs(lu.U.diagonal()) <= 1e-9 * scale))
    z = np.random.default_rng(0).standard_normal(rows)
    for _ in range(3):
        z = lu.solve(z)
        z /= np.linalg.norm(z)
    lam_min = float(z @ (G @ z))
    if lam_min > 1e-10 * scale and n_small == 0:
        return
    owners = np.repeat(np.arange(model.n_constraints), model.constraint_n_rows)
    involved = sorted({int(owners[r]) for r in np.flatnonzero(np.abs(z) > 1e-3 * np.abs(z).max())})
    _raise_redundant(model, rows, max(n_small, 1), involved)


def _raise_redundant(model: Model, rows: int, n_redundant: int, involved: list[int]) -> None:
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
        f"redundant or conflicting constraints: {n_redundant} of the {rows} constraint equations repeat others, "
        f"so every Newton matrix is singular. Involved: {names}. {hint}"
    )


def free_massless_nodes(workspace: Workspace, data: Data) -> list[tuple[int, str]]:
    """Nodes without mass that the constraints leave free to move, at the state of ``data``.

    A node with degrees of freedom but neither a mass element nor a beam has no inertia; the
    iteration matrix is singular when some motion d of such nodes alone (zero on every node with
    mass) keeps every constraint, B d = 0: the null space of B's columns of those nodes.

    Returns
    -------
    list of (node, what)
        the nodes that move in that null space, with ``what`` in words: ``"free to rotate about
        (0, 0, 1)"``, ``"free to translate"``, ...  (directions in the world frame, for a node
        free in one direction only).  Empty when every node has mass or is held.
    """
    model = workspace.model
    dofs = np.asarray(model.node_dofs, dtype=np.int64)
    has_mass = np.zeros(model.n_nodes, dtype=bool)
    has_mass[np.asarray(model.mass_node, dtype=np.int64)] = True
    if model.n_beams:
        beam_nodes = np.asarray(model.beam_node, dtype=np.int64)
        has_mass[beam_nodes[beam_nodes >= 0]] = True
    massless = [i for i in range(model.n_nodes) if dofs[i] > 0 and not has_mass[i]]
    if not massless:
        return []
    start = np.asarray(model.node_map, dtype=np.int64)
    columns = np.concatenate([np.arange(start[i], start[i] + dofs[i]) for i in massless])
    rows = int(np.sum(model.constraint_n_rows))
    bz = constraint_gradient(workspace, data)[:, columns] if rows else np.zeros((0, columns.size))
    if not np.all(np.isfinite(bz)):
        return []
    _, s, vt = np.linalg.svd(bz, full_matrices=True)
    tol = max(bz.shape) * np.finfo(float).eps * (s[0] if s.size else 1.0) * 10.0
    null = vt[int(np.sum(s > tol)) :]  # motions of the massless nodes that keep every constraint
    out = []
    offset = 0
    for i in massless:
        block = null[:, offset : offset + dofs[i]]
        offset += dofs[i]
        _, sv, w = np.linalg.svd(block) if block.size else (None, np.zeros(0), None)
        rank = int(np.sum(sv > 1e-6))
        if rank == 0:
            continue
        moves = [np.abs(w[:rank, part]).max() > 1e-6 for part in (slice(0, 3), slice(3, dofs[i]))]
        if rank == 1 and moves[0] != moves[1]:
            axis = w[0, 0:3] if moves[0] else w[0, 3:6]
            axis = axis / axis[np.argmax(np.abs(axis))] + 0.0  # largest component 1
            what = "translate along" if moves[0] else "rotate about"
            out.append((i, f"free to {what} ({', '.join(f'{a:.3g}' for a in axis)})"))
        else:
            what = {(True, False): "translating", (False, True): "rotating"}.get(
                tuple(moves), "rotating and translating"
            )
            out.append((i, f"free to move in {rank} direction{'s' if rank > 1 else ''} ({what})"))
    return out
