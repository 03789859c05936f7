"""The two Newton solvers as data types, so each simulation compiles only the one it uses.

``Data.solver`` is a :class:`DenseSolver` or a :class:`SparseSolver` (the same four arenas,
two NamedTuple classes).  :func:`solve_system` and :func:`factor_reference` are resolved by
the *type* of the solver when numba compiles (``numba.extending.overload``): a dense model's
entry point holds no sparse LU code and a sparse model's no elimination program, which
takes a few seconds off the first compilation.  Called from Python (or with
``KYNEMAPY_DISABLE_JIT=1``) they dispatch on the class at run time, to the same kernels.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.extending import overload

from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.linalg.dense import SOLVE_CAPACITY, SOLVE_OK, SOLVE_SINGULAR, csc_to_dense, dense_solve, program_solve
from kynemapy.linalg.sparse_lu import LU_CAPACITY, LU_OK, lu_factor, lu_refactor, lu_solve


class DenseSolver(NamedTuple):
    """Dense solver: the elimination program of the reference factorization (``ri`` int64,
    ``rf`` float64, :class:`~kynemapy.linalg.dense.Program`); when it refuses, partial pivoting
    on a copy of the matrix (``fi`` (n,) int64 row swaps, ``ff`` (n·n,) float64)."""

    ri: np.ndarray
    rf: np.ndarray
    fi: np.ndarray
    ff: np.ndarray


class SparseSolver(NamedTuple):
    """Sparse solver: the reference LU (``ri``, ``rf``) refactored along its pivots; when refused,
    a fresh factorization in the fallback LU (``fi``, ``ff``); both
    :class:`~kynemapy.linalg.sparse_lu.LUWorkspace` arenas."""

    ri: np.ndarray
    rf: np.ndarray
    fi: np.ndarray
    ff: np.ndarray


@njit(inline=True)
def _dense_solve(s, indptr, indices, vals, x):
    if program_solve(s.ri, s.rf, vals, x) == SOLVE_OK:
        return SOLVE_OK
    n = x.shape[0]
    a = s.ff[: n * n].reshape((n, n))
    csc_to_dense(indptr, indices, vals, a)
    return dense_solve(a, s.fi, x)


@njit(inline=True)
def _sparse_solve(s, indptr, indices, vals, x):
    if lu_refactor(s.ri, s.rf, vals) == LU_OK:
        lu_solve(s.ri, s.rf, x)
        return SOLVE_OK
    status = lu_factor(s.fi, s.ff, vals)
    if status == LU_OK:
        lu_solve(s.fi, s.ff, x)
        return SOLVE_OK
    if status == LU_CAPACITY:
        return SOLVE_CAPACITY
    return SOLVE_SINGULAR


@njit(inline=True)
def _dense_factor(s, vals):
    return 0


@njit(inline=True)
def _sparse_factor(s, vals):
    return lu_factor(s.ri, s.rf, vals)


def solve_system(solver, indptr, indices, vals, x):
    """Solve ``A x = rhs`` in place (``x`` (n,) holds the right-hand side on entry); ``vals``
    are A's values in the CSC order of ``indptr``, ``indices``.

    Dense: the elimination program, or partial pivoting when it refuses.  Sparse: refactor
    along the reference LU's pivots, or factor afresh in the fallback LU when refused.  Either
    way the result depends on the current matrix alone, never on earlier solves.  Returns
    ``SOLVE_OK``, ``SOLVE_SINGULAR`` or ``SOLVE_CAPACITY`` (the fallback LU's arrays are too small).
    """
    if isinstance(solver, DenseSolver):
        return _dense_solve(solver, indptr, indices, vals, x)
    return _sparse_solve(solver, indptr, indices, vals, x)


def factor_reference(solver, vals):
    """Sparse: factor the reference LU from ``vals`` (a ``LU_*`` status); dense: nothing (0) —
    its program is built in Python (:func:`kynemapy.linalg.dense.build_program`)."""
    if isinstance(solver, DenseSolver):
        return _dense_factor(solver, vals)
    return _sparse_factor(solver, vals)


def _is_dense(solver) -> bool:
    return getattr(solver, "instance_class", None) is DenseSolver


if not JIT_DISABLED:

    @overload(solve_system, inline="always")
    def _solve_system_typed(solver, indptr, indices, vals, x):
        if _is_dense(solver):
            return lambda solver, indptr, indices, vals, x: _dense_solve(solver, indptr, indices, vals, x)
        return lambda solver, indptr, indices, vals, x: _sparse_solve(solver, indptr, indices, vals, x)

    @overload(factor_reference, inline="always")
    def _factor_reference_typed(solver, vals):
        if _is_dense(solver):
            return lambda solver, vals: _dense_factor(solver, vals)
        return lambda solver, vals: _sparse_factor(solver, vals)
