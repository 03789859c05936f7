"""The one compiled entry point of the engine: :func:`run_task_at`, and :func:`run_task` to store its Data.

Every Python caller (``Simulation.step``, ``advance``, the run loop, the set-up of a
simulation, reactions: :func:`kynemapy.engine.api.task`) goes through :func:`run_task_at`, so
numba compiles and caches one top-level function over the phase kernels: compiling a
top-level function re-optimizes all the code it calls, and each further entry point would pay
that again.  It takes the :class:`~kynemapy.engine.fields.Data` by its address (about 730 words
are never copied), called through its address with the Data and the other arguments stored
once in a blob (:mod:`kynemapy.engine.stored_call`); :func:`run_task`'s task ``STORE`` writes
the Data into the blob.  ``Data.units`` holds ``run_task_at``'s address
(:data:`~kynemapy.engine.unit_call.ENGINE`, :mod:`kynemapy.engine.units`).
"""

from __future__ import annotations

from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.engine import step
from kynemapy.engine.constraints.phase import constraint_reaction
from kynemapy.engine.native import store_native
from kynemapy.engine.solvers import factor_reference
from kynemapy.engine.step import advance, record_row, start
from kynemapy.engine.unit_call import load_data

#: tasks of :func:`run_task`
ADVANCE = 0  #: ``advance``: up to ``n`` steps, rows recorded every ``every`` steps
LINEARIZE = 1  #: the Newton system at the current state (``vals``, ``b``)
INITIAL_ACCELERATIONS = 2  #: consistent v̇ and λ (``p`` = params.ACCELERATION_COEFFICIENTS)
CONSTRAINT_TERMS = 3  #: Φ, B, K^Φ of every constraint (``con_*``), with the rest of a linearization
START = 4  #: at t = 0: a := v̇, x := (X + u, r ⊗ r0), joint outputs
REACTION = 5  #: ``out`` (6,) := reaction of constraint ``n`` after a linearization (``p``: exact gradients)
RECORD = 6  #: record the state into row ``every`` of ``rows``, with ``n`` Newton iterations
LU_FACTOR = 7  #: factor the reference sparse LU (``ri``, ``rf``) from ``vals``; status in the result
STORE = 8  #: write the native value of ``d`` into ``iterations`` from word 1 (if it fits); its bytes in the result


#: ``run_task``'s status for a task it does not run itself (compiled: every task but ``STORE``)
ELSEWHERE = -1


@njit
def run_task(d, p, task, n, every, rows, max_rows, iterations, out):
    """Task ``STORE``: the native value of ``d`` (:class:`~kynemapy.engine.fields.Data`) written
    into ``iterations`` (int64) from word 1, when it fits: ``(bytes, 0, 0)``.

    The one compiled function that takes the Data from Python (numba converts its ~110 arrays
    in the function's wrapper, about 2 s of first compilation for each such function).  Every
    other task runs :func:`run_task_at` on the stored Data through a stored call
    (:class:`~kynemapy.engine.stored_call.StoredCall`, :func:`kynemapy.engine.api.task`); here
    it returns ``(0, 0, ELSEWHERE)``.  Plain Python (``KYNEMAPY_DISABLE_JIT``): every task, on ``d``
    itself."""
    if JIT_DISABLED:
        return run_task_at(d, None, p, task, n, every, rows, max_rows, iterations, out)
    if task == STORE:  # engine.stored_call: here, the Data is already converted from Python
        return store_native(d, iterations, 1), 0, 0
    return 0, 0, ELSEWHERE


@njit
def run_task_at(data_at, data_ref, p, task, n, every, rows, max_rows, iterations, out):
    """Run ``task`` (``ADVANCE``, ``LINEARIZE``, ...) on the :class:`~kynemapy.engine.fields.Data`
    at address ``data_at`` (int64; ``data_ref`` its type) with the coefficients ``p``.

    ``rows`` (R, width) float64, ``iterations`` (k,) int64 and ``out`` (6,) float64 are the
    caller's buffers (empty where the task does not use them).  Returns ``(steps_done,
    rows_recorded, status)``; tasks other than ``ADVANCE`` return ``(0, 0, status)``.  The
    first three tasks are modes of the one Newton loop (:func:`~kynemapy.engine.step.advance`).
    """
    d = load_data(data_at, data_ref)
    if task == START:
        start(d)
        return 0, 0, 0
    if task == RECORD:
        record_row(d.row_offsets, d.time, d.step, d.state, d.errors, n, rows[every])
        return 0, 0, 0
    if task == LU_FACTOR:
        return 0, 0, factor_reference(d.units, d.solver, d.vals)
    # the rest are modes of the one Newton loop (the constraint terms come with a linearization)
    if task == ADVANCE:
        mode = step.MODE_STEPS
    elif task == INITIAL_ACCELERATIONS:
        mode = step.MODE_ACCELERATIONS
    else:
        mode = step.MODE_LINEARIZE
    result = advance(d, p, mode, n if task == ADVANCE else 1, every, rows, max_rows, iterations)
    if task == REACTION:
        constraint_reaction(
            n, d.constraint_node, d.constraint_geometry, d.constraint_n_rows, d.q, d.lam, d.con_bt, d.s3[0], out
        )
    return result
