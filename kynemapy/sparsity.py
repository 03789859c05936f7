"""Sparsity pattern of the Newton matrix and the scatter maps of every element block.

The Newton matrix ``A`` (n × n, n = ``model.n_dofs``) has a fixed pattern: the
6×6 (or 3×3) block of each mass on its node, the four 3×3 blocks of each spring,
the rows ``B 𝒯`` and columns ``Bᵀ`` of each constraint on its nodes, the K^Φ
blocks between the nodes of each constraint, and the whole diagonal.  Every entry
an element writes has a *slot*, its position in the array of values the solver
reads:

* dense solver: the values are ``A`` itself (row-major), slot = ``r·n + c``;
* sparse solver: the values follow the CSC pattern (``indptr``, ``indices``),
  slot = position of (r, c) in it.

The kernels only ever write ``values[slot]``: the same compiled assembly serves both
solvers.  Slots of entries that do not exist (a 3-DOF node's rotation, rows
beyond a constraint's count) are −1 and never written.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy.model import Model


class Scatter(NamedTuple):
    """Slots of every element block (int64; −1 where the entry does not exist).

    mass : (n_masses, 6, 6) block of the mass on its node.
    spring : (n_springs, 2, 2, 3, 3) block (node a, node b) of each spring, translations.
    con_row : (n_constraints, 2, 6, 6) [side, row i, node DOF j]: entry (constraint row i,
        DOF j of the base (side 0) or target (side 1) node) — the ``B 𝒯`` rows.
    con_col : (n_constraints, 2, 6, 6) [side, node DOF j, row i]: the ``Bᵀ`` columns.
    con_k : (n_constraints, 2, 2, 6, 6) [side a, side b, i, j]: K^Φ entry (DOF i of node a,
        DOF j of node b).
    indptr : (n+1,), indices : (nnz,) the CSC pattern (also kept for the dense solver).
    dense : True when the slots index the row-major dense matrix.
    has_k : False when the K^Φ blocks have no slots (workspace for Kynema-compatible steps).
    """

    mass: np.ndarray
    spring: np.ndarray
    con_row: np.ndarray
    con_col: np.ndarray
    con_k: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    dense: bool
    has_k: bool


def _pairs(model: Model, with_k: bool = True) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(row, column) index arrays of every block entry, −1 where absent, per table.

    ``with_k`` False: no K^Φ blocks (Kynema-compatible tangent), all ``con_k`` entries −1.
    """
    node_map = np.asarray(model.node_map, dtype=np.int64)
    node_dofs = np.asarray(model.node_dofs, dtype=np.int64)
    nsys = int(model.n_system_dofs)
    dof6 = np.arange(6)

    def node_index(nodes: np.ndarray) -> np.ndarray:
        """(..., 6) system row of each DOF of ``nodes`` (..., ), −1 beyond the node's DOFs or for −1 nodes."""
        nodes = np.asarray(nodes, dtype=np.int64)
        safe = np.where(nodes < 0, 0, nodes)
        idx = node_map[safe][..., None] + dof6
        ok = (dof6 < node_dofs[safe][..., None]) & (nodes >= 0)[..., None]
        return np.where(ok, idx, -1)

    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    # masses: (nm, 6, 6)
    mi = node_index(model.mass_node)
    out["mass"] = (
        np.broadcast_to(mi[:, :, None], (len(mi), 6, 6)),
        np.broadcast_to(mi[:, None, :], (len(mi), 6, 6)),
    )
    # springs: (ns, 2, 2, 3, 3), translations only
    si = node_index(np.asarray(model.spring_node).reshape(-1, 2))[:, :, :3]  # (ns, 2, 3)
    out["spring"] = (
        np.broadcast_to(si[:, :, None, :, None], (len(si), 2, 2, 3, 3)),
        np.broadcast_to(si[:, None, :, None, :], (len(si), 2, 2, 3, 3)),
    )
    # constraints
    nc = int(model.n_constraints)
    ci = node_index(np.asarray(model.constraint_node).reshape(-1, 2))  # (nc, 2, 6)
    rows = np.arange(6)[None, :] + nsys + np.asarray(model.constraint_row, dtype=np.int64)[:, None]  # (nc, 6)
    rows = np.where(np.arange(6)[None, :] < np.asarray(model.constraint_n_rows)[:, None], rows, -1)
    r_ok = rows[:, None, :, None] >= 0
    d_ok = ci[:, :, None, :] >= 0
    row_r = np.broadcast_to(rows[:, None, :, None], (nc, 2, 6, 6))
    row_c = np.broadcast_to(ci[:, :, None, :], (nc, 2, 6, 6))
    ok = r_ok & d_ok
    out["con_row"] = (np.where(ok, row_r, -1), np.where(ok, row_c, -1))
    col_r = np.broadcast_to(ci[:, :, :, None], (nc, 2, 6, 6))
    col_c = np.broadcast_to(rows[:, None, None, :], (nc, 2, 6, 6))
    ok = (ci[:, :, :, None] >= 0) & (rows[:, None, None, :] >= 0)
    out["con_col"] = (np.where(ok, col_r, -1), np.where(ok, col_c, -1))
    k_r = np.broadcast_to(ci[:, :, None, :, None], (nc, 2, 2, 6, 6))
    k_c = np.broadcast_to(ci[:, None, :, None, :], (nc, 2, 2, 6, 6))
    ok = (k_r >= 0) & (k_c >= 0) & with_k
    out["con_k"] = (np.where(ok, k_r, -1), np.where(ok, k_c, -1))
    return out


def pattern(model: Model, with_k: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """CSC pattern ``(indptr (n+1,), indices (nnz,))`` of the Newton matrix, sorted row indices.

    ``with_k`` False leaves out the K^Φ blocks between the nodes of each constraint
    (the Kynema-compatible tangent never writes them).
    """
    n = int(model.n_dofs)
    keys = [np.arange(n, dtype=np.int64) * (n + 1)]  # the diagonal: c·n + r with r = c
    for r, c in _pairs(model, with_k).values():
        r = r.reshape(-1)
        c = c.reshape(-1)
        ok = (r >= 0) & (c >= 0)
        keys.append(c[ok] * n + r[ok])
    key = np.unique(np.concatenate(keys))
    cols = key // n
    indices = np.ascontiguousarray(key - cols * n, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, cols + 1, 1)
    return np.cumsum(indptr), indices


def build_scatter(model: Model, dense: bool, with_k: bool = True) -> Scatter:
    """The slots of every block for the dense (row-major ``A``) or the sparse (CSC) solver.

    ``with_k`` False: no slots for K^Φ (only for a step that never assembles it).
    """
    n = int(model.n_dofs)
    indptr, indices = pattern(model, with_k)
    cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    csc_keys = cols * n + indices  # sorted (column-major order)

    def slots(r: np.ndarray, c: np.ndarray) -> np.ndarray:
        ok = (r >= 0) & (c >= 0)
        if dense:
            s = r * n + c
        else:
            s = np.searchsorted(csc_keys, c * n + r)
        return np.ascontiguousarray(np.where(ok, s, -1), dtype=np.int64)

    p = _pairs(model, with_k)
    return Scatter(
        mass=slots(*p["mass"]),
        spring=slots(*p["spring"]),
        con_row=slots(*p["con_row"]),
        con_col=slots(*p["con_col"]),
        con_k=slots(*p["con_k"]),
        indptr=indptr,
        indices=indices,
        dense=bool(dense),
        has_k=bool(with_k),
    )
