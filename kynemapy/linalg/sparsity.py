"""Sparsity pattern of the Newton matrix and the slots of every block written into it.

The Newton matrix ``A`` (n × n) has a fixed pattern: the block of each element on the DOFs
of its nodes, the rows ``B 𝒯`` and columns ``Bᵀ`` of each constraint on its nodes, the K^Φ
blocks between the nodes of each constraint (exact tangent only), and the whole diagonal.
The values are an array in the pattern's CSC order (``indptr``, ``indices``); every entry
a kernel writes has a *slot*, its position in that array.  The kernels only ever write
``values[slot]``, and both solvers (:mod:`kynemapy.linalg.dense`, :mod:`kynemapy.linalg.sparse_lu`)
read the same array.  Slots of entries that do not exist (a 3-DOF node's rotation, rows
beyond a constraint's count) are −1 and never written.

Everything here works on index arrays: rows of the system (−1 where absent), in numpy,
once per simulation.
"""

from __future__ import annotations

import numpy as np


def node_rows(node_map: np.ndarray, node_dofs: np.ndarray, nodes: np.ndarray, width: int) -> np.ndarray:
    """(..., width) system row of DOF j of each node of ``nodes`` (...); −1 for DOFs the node
    does not have, and for node −1 (the ground)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    node_map = np.asarray(node_map, dtype=np.int64)
    node_dofs = np.asarray(node_dofs, dtype=np.int64)
    dof = np.arange(width)
    safe = np.where(nodes < 0, 0, nodes)
    idx = node_map[safe][..., None] + dof
    ok = (dof < node_dofs[safe][..., None]) & (nodes >= 0)[..., None]
    return np.where(ok, idx, -1)


def block_pairs(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of every entry of the square blocks on ``rows`` (n, m): each (n, m, m)."""
    n, m = rows.shape
    return np.broadcast_to(rows[:, :, None], (n, m, m)), np.broadcast_to(rows[:, None, :], (n, m, m))


def constraint_pairs(
    node_map: np.ndarray,
    node_dofs: np.ndarray,
    n_system_dofs: int,
    constraint_node: np.ndarray,
    constraint_row: np.ndarray,
    constraint_n_rows: np.ndarray,
    with_k: bool | np.ndarray,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(row, column) of every constraint block entry, −1 where absent.

    ``con_row`` (C, 2, 6, 6) [side, row i, node DOF j]: entry (constraint row i, DOF j of the
    base (side 0) or target (side 1) node), the ``B 𝒯`` rows; ``con_col`` (C, 2, 6, 6) [side,
    node DOF j, row i]: the ``Bᵀ`` columns; ``con_k`` (C, 2, 2, 6, 6) [side a, side b, i, j]:
    K^Φ entry (DOF i of node a, DOF j of node b), all −1 without ``with_k`` (a bool, or (C,) bools:
    per constraint).
    """
    nc = int(np.asarray(constraint_node).reshape(-1, 2).shape[0])
    ci = node_rows(node_map, node_dofs, np.asarray(constraint_node).reshape(-1, 2), 6)  # (nc, 2, 6)
    rows = np.arange(6)[None, :] + n_system_dofs + np.asarray(constraint_row, dtype=np.int64)[:, None]
    rows = np.where(np.arange(6)[None, :] < np.asarray(constraint_n_rows)[:, None], rows, -1)  # (nc, 6)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    row_r = np.broadcast_to(rows[:, None, :, None], (nc, 2, 6, 6))
    row_c = np.broadcast_to(ci[:, :, None, :], (nc, 2, 6, 6))
    ok = (row_r >= 0) & (row_c >= 0)
    out["con_row"] = (np.where(ok, row_r, -1), np.where(ok, row_c, -1))
    col_r = np.broadcast_to(ci[:, :, :, None], (nc, 2, 6, 6))
    col_c = np.broadcast_to(rows[:, None, None, :], (nc, 2, 6, 6))
    ok = (col_r >= 0) & (col_c >= 0)
    out["con_col"] = (np.where(ok, col_r, -1), np.where(ok, col_c, -1))
    k_r = np.broadcast_to(ci[:, :, None, :, None], (nc, 2, 2, 6, 6))
    k_c = np.broadcast_to(ci[:, None, :, None, :], (nc, 2, 2, 6, 6))
    ok = (k_r >= 0) & (k_c >= 0) & np.broadcast_to(np.asarray(with_k, dtype=bool), (nc,))[:, None, None, None, None]
    out["con_k"] = (np.where(ok, k_r, -1), np.where(ok, k_c, -1))
    return out


def pattern(n: int, pairs: list[tuple[np.ndarray, np.ndarray]], diagonal: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """CSC pattern ``(indptr (n+1,), indices (nnz,))`` of the entries in ``pairs`` (each a
    (rows, columns) pair of integer arrays of one shape, −1 for no entry) plus the diagonal
    (``diagonal`` False: without it, also where ``pairs`` hold diagonal entries), row indices
    sorted within each column, duplicates merged."""
    keys = [np.arange(n, dtype=np.int64) * (n + 1)] if diagonal else []  # the diagonal: c·n + r with r = c
    for r, c in pairs:
        r = np.asarray(r).reshape(-1)
        c = np.asarray(c).reshape(-1)
        ok = (r >= 0) & (c >= 0) if diagonal else (r >= 0) & (c >= 0) & (r != c)
        keys.append(c[ok] * n + r[ok])
    key = _distinct(np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64), n * n)
    cols = key // n
    indices = np.ascontiguousarray(key - cols * n, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=n), out=indptr[1:])  # (np.add.at: 0.4 ms on the rotor's pattern)
    return indptr, indices


#: the largest n² for which :func:`_distinct` marks the keys in a table of n² flags (4 MiB)
_FLAG_TABLE_MAX = 1 << 22


def _distinct(keys: np.ndarray, bound: int) -> np.ndarray:
    """The distinct values of ``keys`` (int64, each in ``[0, bound)``), sorted: ``np.unique(keys)``
    (a table of flags where ``bound`` is small and not much more than the keys, a sort otherwise;
    np.unique's hashing took 1.3 ms of a 13 500-key pattern, a tenth of the IEA 15 MW rotor's
    ``Simulation()``; the table 0.05 ms, a sort 0.4 ms)."""
    if bound <= _FLAG_TABLE_MAX and bound <= 64 * max(keys.size, 1):
        seen = np.zeros(bound, dtype=bool)
        seen[keys] = True
        return np.flatnonzero(seen).astype(np.int64)
    ordered = np.sort(keys)
    if ordered.size == 0:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def csc_keys(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``c·n + r`` of every entry of the CSC pattern, in its order (sorted: column-major), for :func:`slots`."""
    n = indptr.shape[0] - 1
    cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    return cols * n + indices


def slot_table(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """What :func:`slots` looks the entries up in: a table of every entry's position by its key
    ``c·n + r`` (−1 where none) where n² is at most :data:`_FLAG_TABLE_MAX` and at most 64 times
    the pattern's entries, else the pattern's sorted :func:`csc_keys`, searched."""
    n = indptr.shape[0] - 1
    keys = csc_keys(indptr, indices)
    if n * n > _FLAG_TABLE_MAX or n * n > 64 * max(keys.shape[0], 1):
        return keys
    table = np.full(n * n, -1, dtype=np.int64)
    table[keys] = np.arange(keys.shape[0], dtype=np.int64)
    return table


def slots(
    indptr: np.ndarray, indices: np.ndarray, r: np.ndarray, c: np.ndarray, keys: np.ndarray | None = None
) -> np.ndarray:
    """Position of each entry (r, c) in the CSC values of the pattern; −1 where r or c is −1.

    Every existing entry must be in the pattern (it was built from the same pairs).  ``keys``:
    the pattern's :func:`slot_table` (or its :func:`csc_keys`), where the caller places several
    blocks in one pattern."""
    n = indptr.shape[0] - 1
    known = slot_table(indptr, indices) if keys is None else keys
    ok = (r >= 0) & (c >= 0)
    wanted = np.where(ok, c * n + r, 0)
    if known.shape[0] == n * n:  # a table (or a full pattern's keys, 0 … n²−1: the same lookup)
        s = known[wanted]
    else:
        s = np.searchsorted(known, wanted)
    return np.ascontiguousarray(np.where(ok, s, -1), dtype=np.int64)
