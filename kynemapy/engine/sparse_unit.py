"""The engine's sparse-solver unit: the sparse LU of :mod:`kynemapy.linalg.sparse_lu` on a
:class:`~kynemapy.engine.solvers.Solver` (compiled on its own, the first time a model has the
sparse solver, and called through its address; imported only then: a process that steps small
models never loads the sparse LU's kernels).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.solvers import FACTOR_REFERENCE
from kynemapy.linalg.dense import SOLVE_CAPACITY, SOLVE_OK, SOLVE_SINGULAR
from kynemapy.linalg.sparse_lu import LU_CAPACITY, LU_OK, lu_factor, lu_refactor, lu_solve


@njit
def sparse_phase(what, s, indptr, indices, vals, x):
    """The engine's sparse-solver unit (:mod:`kynemapy.engine.unit_call`: compiled on its own
    the first time a model has the sparse solver, called through its address): ``what``
    :data:`~kynemapy.engine.solvers.SOLVE`, ``A x = rhs`` in place (a ``SOLVE_*`` status);
    :data:`~kynemapy.engine.solvers.FACTOR_REFERENCE`, the reference LU of ``s`` factored from
    ``vals`` (a ``LU_*`` status)."""
    if what == FACTOR_REFERENCE:
        return lu_factor(s.ri, s.rf, vals)
    return _sparse_solve(s, indptr, indices, vals, x)


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
