"""The engine's dense-solver unit: the elimination program and partial pivoting of
:mod:`kynemapy.linalg.dense` on a :class:`~kynemapy.engine.solvers.Solver` (compiled on its own,
called through its address, as the sparse-solver unit :mod:`kynemapy.engine.sparse_unit`).

A unit of its own so that a first compilation can give it to the second process while the
first compiles the Newton loop (:func:`kynemapy.engine.units.compile_units`): its kernels were
about 2 s of the loop's 14 s (docs/performance.md, "2026-12-01, third session").
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.unit_call import load_field
from kynemapy.linalg.dense import SOLVE_OK, csc_to_dense, dense_solve, program_solve


@njit
def dense_phase(data_at, data_ref):
    """The engine's dense-solver unit (:mod:`kynemapy.engine.unit_call`), on the
    :class:`~kynemapy.engine.fields.Data` at address ``data_at`` (``data_ref`` its type):
    ``A x = rhs`` in place, ``x`` its ``dx`` (n,) (the right-hand side on entry), A its ``vals``
    (nnz,) in the CSC order of ``indptr``, ``indices``; the elimination program of the
    reference factorization (``solver.dense`` 1), or partial pivoting on a copy of the matrix
    where it refuses or where there is none (``solver.dense`` 2).  Returns a ``SOLVE_*``
    status.  (The Data by its address: two words a call, where the solver's and the four
    arrays' structures passed by value cost about 220 instructions a heavy-top step.)"""
    s = load_field(data_at, data_ref, "solver")
    indptr = load_field(data_at, data_ref, "indptr")
    indices = load_field(data_at, data_ref, "indices")
    vals = load_field(data_at, data_ref, "vals")
    x = load_field(data_at, data_ref, "dx")
    if s.dense == 1 and program_solve(s.ri, s.rf, vals, x) == SOLVE_OK:
        return SOLVE_OK
    n = x.shape[0]
    a = s.ff[: n * n].reshape((n, n))
    csc_to_dense(indptr, indices, vals, a)
    return dense_solve(a, s.fi, x)
