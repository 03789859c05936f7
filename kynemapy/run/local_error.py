"""The compiled arithmetic of the generalized-α step-size control (:mod:`kynemapy.run.stepcontrol`):
the projection of an error vector onto the constraints' null space, and the weighted RMS norm of
the local errors.

One call each per attempted step instead of about thirty numpy operations: the controller's
Python cost an attempt was 150 µs around a 5-9 µs compiled step on the heavy top (2026-12-02,
docs/step-control.md, "Cost"), 100 of them in these two.  Both are allocation-free
(``kynemapy._jit.njit``); the caller holds the scratch arrays.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.linalg.dense import SOLVE_OK, csc_to_dense, dense_solve

#: :func:`project_dense`: the solution had a non-finite entry (the error vector is left as it was)
NOT_FINITE = -1


@njit
def project_dense(indptr, indices, vals, nsys, flat, system, e, matrix, piv, rhs, x):
    """``e ← e + Δ`` with ``[M Bᵀ; B 0] [Δ; μ] = [0; −B e]``, the matrix given as CSC entries.

    The matrix (n unknowns: the ``nsys`` system DOFs, then the multipliers) is made dense and
    solved by :func:`kynemapy.linalg.dense.dense_solve` (partial pivoting); ``−B e`` is summed
    in the order of the CSC entries.

    Parameters
    ----------
    indptr : (>= n + 1,) ndarray of int64
        The column starts of the CSC pattern.
    indices : (>= nnz,) ndarray of int64
        The row of each entry.
    vals : (>= nnz,) ndarray of float
        The entries (duplicates are summed): the mass matrix M [kg, kg m²] in the system block,
        the constraint gradients B and Bᵀ beside it.
    nsys : int
        The system DOFs (the rows of M); the rows from ``nsys`` on are B's.
    flat, system : (D,) ndarray of int64
        For each system DOF its index in ``e`` (flattened (N, 6)) and in the system vector.
    e : (N·6,) ndarray of float
        In: the error per node DOF [m, rad] (zero where a node has no DOF); out: its
        projection (unchanged unless the status is ``SOLVE_OK``).
    matrix : (n, n) ndarray of float
        Scratch: the dense matrix, then its LU factors.
    piv : (n,) ndarray of int64
        Scratch: the row swaps.
    rhs, x : (n,) ndarray of float
        Scratch: the right-hand side (then Δ and μ), and ``e`` in the system's order.

    Returns
    -------
    int
        ``SOLVE_OK`` (0), ``SOLVE_SINGULAR`` (a zero pivot: the caller solves by least squares)
        or :data:`NOT_FINITE` (an entry or the solution not finite).
    """
    n = matrix.shape[0]
    for k in range(indptr[n]):
        if not math.isfinite(vals[k]):
            return NOT_FINITE
    for i in range(n):
        x[i] = 0.0
        rhs[i] = 0.0
    for k in range(flat.size):
        x[system[k]] = e[flat[k]]
    for c in range(nsys):
        xc = x[c]
        for k in range(indptr[c], indptr[c + 1]):
            r = indices[k]
            if r >= nsys:
                rhs[r] -= vals[k] * xc
    csc_to_dense(indptr, indices, vals, matrix)
    status = dense_solve(matrix, piv, rhs)
    if status != SOLVE_OK:
        return status
    for i in range(n):
        if not math.isfinite(rhs[i]):
            return NOT_FINITE
    for k in range(flat.size):
        e[flat[k]] += rhs[system[k]]
    return SOLVE_OK


@njit
def error_rms(position, velocity, q0, q1, v0, v1, node_dofs, atol, rtol, use_velocity):
    """The weighted RMS norm of a step's estimated local errors over the node DOFs.

    ``sqrt(Σ (e_q / w_q)² / D + Σ (e_v / w_v)² / D)`` over the D node DOFs (the first
    ``node_dofs[i]`` of node i), ``w_q = atol + rtol · max(|q0|, |q1|)`` for a displacement
    [m], ``atol + rtol · 1 rad`` for a rotation, ``w_v = atol + rtol · max(|v0|, |v1|)``.

    Parameters
    ----------
    position : (N, 6) ndarray of float
        The local position errors [m, rad].
    velocity : (N, 6) ndarray of float
        The local velocity errors [m/s, rad/s] (read only with ``use_velocity``).
    q0, q1 : (N, 7) ndarray of float
        The node states at the start and end of the step.
    v0, v1 : (N, 6) ndarray of float
        The velocities at the start and end [m/s, rad/s].
    node_dofs : (N,) ndarray of int64
        The DOFs of each node.
    atol, rtol : float
        The tolerances.
    use_velocity : bool
        Whether the velocity errors count.

    Returns
    -------
    float
        The norm (0 when no node has DOFs).
    """
    count = 0
    total_q = 0.0
    total_v = 0.0
    for i in range(position.shape[0]):
        for k in range(node_dofs[i]):
            scale = max(abs(q0[i, k]), abs(q1[i, k])) if k < 3 else 1.0
            ratio = position[i, k] / (atol + rtol * scale)
            total_q += ratio * ratio
            if use_velocity:
                ratio = velocity[i, k] / (atol + rtol * max(abs(v0[i, k]), abs(v1[i, k])))
                total_v += ratio * ratio
            count += 1
    if count == 0:
        return 0.0
    return math.sqrt(total_q / count + total_v / count)
