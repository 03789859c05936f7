"""The two Newton solvers behind one data type, chosen per simulation at run time.

``Data.solver`` is a :class:`Solver`: a flag (``dense``) and four arenas.  Every model runs
the same compiled code (one compiled engine for every model, docs/engine.md); a branch on the
flag picks the elimination program or the sparse LU (the sparse-solver unit,
:mod:`kynemapy.engine.sparse_unit`, called through its address and imported only when a model
has the sparse solver).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.unit_call import HELD, SPARSE, call_unit
from kynemapy.linalg.dense import SOLVE_OK, csc_to_dense, dense_solve, program_solve


class Solver(NamedTuple):
    """The Newton matrix's solver.

    ``dense`` 1: the elimination program of the reference factorization (``ri`` int64, ``rf``
    float64, :class:`~kynemapy.linalg.dense.Program`); when it refuses, partial pivoting on a
    copy of the matrix (``fi`` (n,) int64 row swaps, ``ff`` (n·n,) float64).  ``dense`` 2:
    partial pivoting at every solve (no program: a full matrix, where its indirection costs
    more than it saves).  ``dense`` 3: as 2, with the nodes held by one-node constraints (a beam's
    root under a prescribed or fixed boundary condition) eliminated first
    (:func:`~kynemapy.linalg.dense.condensed_solve`; ``fi`` its plan, ``ff`` the matrix then the
    scratch), the whole matrix factored where it refuses: the held-node unit
    (:func:`kynemapy.engine.held_unit.held_solve`, called through its address, compiled only
    for a model that has such a node).
    ``dense`` 0: the reference sparse LU (``ri``, ``rf``) refactored along its pivots; when
    refused, a fresh factorization in the fallback LU (``fi``, ``ff``); both
    :class:`~kynemapy.linalg.sparse_lu.LUWorkspace` arenas.
    """

    dense: int
    ri: np.ndarray
    rf: np.ndarray
    fi: np.ndarray
    ff: np.ndarray


@njit(inline=True)
def _dense_solve(s, indptr, indices, vals, x):
    if s.dense == 1 and program_solve(s.ri, s.rf, vals, x) == SOLVE_OK:
        return SOLVE_OK
    n = x.shape[0]
    a = s.ff[: n * n].reshape((n, n))
    csc_to_dense(indptr, indices, vals, a)
    return dense_solve(a, s.fi, x)


#: what :func:`kynemapy.engine.sparse_unit.sparse_phase` does
SOLVE = 0  #: solve the Newton system (refactor along the reference, or a fresh LU)
FACTOR_REFERENCE = 1  #: factor the reference LU


@njit(inline=True)
def solve_system(units, solver, indptr, indices, vals, x):
    """Solve ``A x = rhs`` in place (``x`` (n,) holds the right-hand side on entry); ``vals``
    are A's values in the CSC order of ``indptr``, ``indices``.

    Dense: the elimination program, or partial pivoting when it refuses (with the held nodes
    eliminated first: the held-node unit).  Sparse: refactor along the reference LU's pivots,
    or factor afresh in the fallback LU when refused.  Either way the result depends on the
    current matrix alone, never on earlier solves.  Returns
    ``SOLVE_OK``, ``SOLVE_SINGULAR`` or ``SOLVE_CAPACITY`` (the fallback LU's arrays are too small).
    The sparse LU is the sparse-solver unit (``units``, :func:`kynemapy.engine.sparse_unit.sparse_phase`).
    """
    if solver.dense == 3:
        return call_unit(units, HELD, (solver, indptr, indices, vals, x))
    if solver.dense:
        return _dense_solve(solver, indptr, indices, vals, x)
    return call_unit(units, SPARSE, (SOLVE, solver, indptr, indices, vals, x))


@njit(inline=True)
def factor_reference(units, solver, vals):
    """Sparse: factor the reference LU from ``vals`` (a ``LU_*`` status); dense: nothing (0) —
    its program is built in Python (:func:`kynemapy.linalg.dense.build_program`)."""
    if solver.dense:
        return 0
    return call_unit(units, SPARSE, (FACTOR_REFERENCE, solver, solver.ri, solver.ri, vals, vals))  # (no pattern, no x)
