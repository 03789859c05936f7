"""Many simulations stepped in one compiled call.

Every member is a complete simulation with its own state, inputs, workspace and solver
arenas.  :func:`advance_members` steps the members of a range one after the other, each
through its own stored call (:class:`~kynemapy.engine.stored_call.StoredCall`: the member's
Data kept in native form in an int64 *blob*, and the address of the engine's one entry point,
:func:`~kynemapy.engine.entry.run_task`).  The members' arrays are used where they are: nothing
is copied in or out, and no member's Data is rebuilt in compiled code.  Calling ``run_task``
through its address also means it is not linked and optimized into this function again: the
batch entry compiles in about a second, not the engine's minute.

The call holds no GIL, so several Python threads run it at once on disjoint ranges of
members (:class:`kynemapy.run.batch.Batch`).  A member's computation is exactly the one its
:class:`~kynemapy.Simulation` runs: the result is bit for bit the same, whatever the number of
threads.  (Why threads and not ``numba.prange``: a parallel loop's body becomes a gufunc whose
arguments must be arrays or scalars.)
"""

from __future__ import annotations

from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.engine.native import call_stored_data as _call_stored_data
from kynemapy.engine.step import CONVERGED, RAISED

if JIT_DISABLED:  # plain Python: the member's own compiled-call stand-in

    def call_stored_data(run, args_ref, *arguments):
        """``run(*arguments)``: the member's stored call (compiled: through its blob)."""
        return run(*arguments)

else:
    call_stored_data = _call_stored_data


@njit
def advance_members(blobs, args_ref, ps, task, n_steps, every, rows, max_rows, iterations, out, first, last, result):
    """Up to ``n_steps`` steps of members ``first`` to ``last − 1``, one after the other.

    ``blobs`` (M, W) int64: member m's stored call (:class:`~kynemapy.engine.stored_call.StoredCall`
    ``.blob``), all of the argument types ``args_ref``; ``ps`` (M, k) the members' coefficient
    vectors; ``task`` (``ADVANCE``), ``every`` (0), ``rows`` (0, 1), ``max_rows`` (0) and
    ``iterations`` (0,): ``run_task``'s other arguments, of the stored types; ``out`` (M, 6)
    scratch.  ``result[m]`` := (steps done, rows recorded, status) of member m: a member whose
    step fails stops there, its state restored to its last converged step, while the others
    go on.  A member whose compiled step raised (numba's wrapper then reports the error on
    stderr and returns zeros, which would read as converged) gets the status ``RAISED``.
    """
    for m in range(first, last):
        steps, recorded, status = call_stored_data(
            blobs[m], args_ref, ps[m], task, n_steps, every, rows, max_rows, iterations, out[m]
        )
        result[m, 0] = steps
        result[m, 1] = recorded
        result[m, 2] = RAISED if n_steps > 0 and steps == 0 and status == CONVERGED else status
