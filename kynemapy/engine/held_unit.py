"""The engine's held-node solver unit: the dense solve with the nodes held by one-node
constraints eliminated first (``Solver.dense`` 3, :func:`kynemapy.linalg.dense.condensed_solve`),
compiled on its own the first time a model has such a node (a beam's root under a prescribed or
fixed boundary condition) and called through its address.  Every other model's first
compilation leaves it out (about 2.8 s of CPU, docs/performance.md).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.linalg.dense import CONDENSE_REFUSED, SOLVE_OK, condensed_solve, csc_to_dense, dense_solve


@njit
def held_solve(s, indptr, indices, vals, x):
    """The engine's held-node solver unit (:mod:`kynemapy.engine.unit_call`, ``HELD``):
    ``A x = rhs`` in place for a :class:`~kynemapy.engine.solvers.Solver` of ``dense`` 3
    (``x`` (n,) holds the right-hand side on entry; ``vals`` are A's values in the CSC order of
    ``indptr``, ``indices``): A copied into ``s.ff[: n²]``, the held nodes eliminated first along
    the plan ``s.fi`` with the scratch ``s.ff[n² :]``, the whole matrix factored (partial
    pivoting) where the plan's elimination refuses.  Returns ``SOLVE_OK`` or ``SOLVE_SINGULAR``."""
    n = x.shape[0]
    a = s.ff[: n * n].reshape((n, n))
    csc_to_dense(indptr, indices, vals, a)
    if condensed_solve(a, x, s.fi, s.ff[n * n :]) != CONDENSE_REFUSED:
        return SOLVE_OK
    return dense_solve(a, s.fi, x)
