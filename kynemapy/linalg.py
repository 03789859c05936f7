"""Newton-system solves inside compiled code, in place, no allocation.

Small systems (tens of DOFs) are solved densely (:func:`dense_solve`, LU with
partial pivoting); large ones with the sparse LU of :mod:`kynemapy.sparse_lu`.
The assembly writes the matrix through slots (:mod:`kynemapy.sparsity`), so both
solvers read what the same kernels wrote; :func:`solve_system` picks the one the
workspace was built for.
"""

from __future__ import annotations

import math

import numpy as np

from kynemapy._jit import njit
from kynemapy.sparse_lu import LU_CAPACITY, LU_OK, lu_factor, lu_refactor, lu_solve

SOLVE_OK = 0
SOLVE_SINGULAR = 1
#: the sparse factors outgrew their arrays (grow them in Python and redo the step)
SOLVE_CAPACITY = 2


@njit
def dense_solve(a, piv, b):
    """Solve ``A x = b`` in place: ``a`` (n, n) gets the LU factors, ``piv`` (n,) the row
    swaps, ``b`` (n,) the solution; returns a ``SOLVE_*`` status.

    Gaussian elimination with partial pivoting (L unit lower, U upper, stored in ``a``),
    in one pass and without the work on structural zeros:

    * the forward substitution ``L y = P b`` runs inside the elimination: ``b`` is
      swapped with the rows, and ``b[i] −= l_ik b[k]`` happens at step k, which is the
      order of lu_solve's row sums;
    * a row update stops at the last non-zero column of the pivot row (the entries
      beyond are exact zeros);
    * the back substitution skips zero entries of U.

    Every skipped term is an exact zero, so the result equals a textbook LU factorisation
    followed by forward and back substitution (up to the sign of zero results).

    The indices are unsigned (``np.uint64``): numba then emits no negative-index
    wraparound code, which otherwise is a large part of the instructions of this
    solve (about 0.1 µs per solve of the 15×15 heavy-top system).  All index
    arithmetic below stays non-negative.
    """
    n = np.uint64(a.shape[0])
    one = np.uint64(1)
    for k in range(n):
        p = k
        best = abs(a[k, k])
        for i in range(k + one, n):
            v = abs(a[i, k])
            if v > best:
                best = v
                p = i
        piv[k] = p
        if best == 0.0 or not math.isfinite(best):
            return SOLVE_SINGULAR
        if p != k:
            for j in range(n):
                t = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = t
            t = b[k]
            b[k] = b[p]
            b[p] = t
        last = n - one
        while last > k and a[k, last] == 0.0:
            last -= one
        inv = 1.0 / a[k, k]
        bk = b[k]
        for i in range(k + one, n):
            lik = a[i, k] * inv
            a[i, k] = lik
            if lik != 0.0:
                for j in range(k + one, last + one):
                    a[i, j] -= lik * a[k, j]
                b[i] -= lik * bk
    for r in range(n):
        i = n - one - r  # rows from the last up
        s = b[i]
        for j in range(i + one, n):
            uij = a[i, j]
            if uij != 0.0:
                s -= uij * b[j]
        b[i] = s / a[i, i]
    return SOLVE_OK


@njit(inline=True)
def solve_system(ws, x):
    """Solve ``A x = rhs`` in place (``x`` (n,) holds the right-hand side on entry).

    ``ws`` is the step :class:`~kynemapy.state.Workspace`: with ``ws.scatter.dense``
    the matrix is ``ws.A`` (its values ``ws.vals`` are a flat view of it), else the
    CSC values ``ws.vals``: refactored with the pivot sequence of the reference
    factorization ``ws.lu``, or, when that is refused, factored afresh in
    ``ws.lu_fallback`` (the reference is kept: the result never depends on earlier
    solves).  Returns ``SOLVE_OK``, ``SOLVE_SINGULAR`` or ``SOLVE_CAPACITY`` (the
    fallback's arrays are too small).
    """
    if ws.scatter.dense:
        return dense_solve(ws.A, ws.piv, x)
    if lu_refactor(ws.lu, ws.vals) == LU_OK:
        lu_solve(ws.lu, x)
        return SOLVE_OK
    status = lu_factor(ws.lu_fallback, ws.vals)
    if status == LU_OK:
        lu_solve(ws.lu_fallback, x)
        return SOLVE_OK
    if status == LU_CAPACITY:
        return SOLVE_CAPACITY
    return SOLVE_SINGULAR
