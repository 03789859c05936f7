"""The one compiled entry point of the engine: :func:`run_task_at`, and :func:`run_task` to call it.

Every Python caller (``Simulation.step``, ``advance``, the run loop, the set-up of a
simulation, reactions) goes through :func:`run_task_at`, so numba compiles and caches one
top-level function over the phase kernels: compiling a top-level function re-optimizes all
the code it calls, and each further entry point would pay that again.  It takes the
:class:`~kynemapy.engine.fields.Data` by its address (about 730 words are never copied):
``step()`` and ``advance()`` call it through its address with the Data and the other
arguments stored once in a blob (:mod:`kynemapy.engine.stored_call`, which task ``STORE``
serves); :func:`run_task`, for the other callers, takes the Data as a value and passes its
address on the stack.  ``Data.units`` holds ``run_task_at``'s address (:data:`ENGINE_UNIT`),
so that :func:`run_task` calls it without linking its code.
"""

from __future__ import annotations

from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.engine import step
from kynemapy.engine.constraints.phase import constraint_reaction
from kynemapy.engine.native import call_with_data, store_native
from kynemapy.engine.native import load_data as _load_data
from kynemapy.engine.solvers import factor_reference
from kynemapy.engine.step import advance, record_row, start
from kynemapy.engine.unit_call import ENGINE as ENGINE_UNIT

if JIT_DISABLED:  # plain Python: the Data itself stands for its address

    def load_data(data_at, data_ref):
        """The Data (plain Python: ``data_at`` is the Data itself)."""
        return data_at

else:
    load_data = _load_data

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


@njit
def run_task(d, p, task, n, every, rows, max_rows, iterations, out):
    """Run ``task`` (``ADVANCE``, ``LINEARIZE``, ...) on ``d`` (:class:`~kynemapy.engine.fields.Data`)
    with the coefficients ``p``: :func:`run_task_at` with ``d``'s address (through the address
    in ``d.units``), or, for ``STORE``, the native value of ``d`` written into ``iterations``
    (int64) from word 1, when it fits: ``(bytes, 0, 0)``."""
    if task == STORE:  # engine.stored_call: here, the Data is already converted from Python
        return store_native(d, iterations, 1), 0, 0
    if JIT_DISABLED:
        return run_task_at(d, None, p, task, n, every, rows, max_rows, iterations, out)
    return call_with_data(d.units[ENGINE_UNIT], d, p, task, n, every, rows, max_rows, iterations, out)


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
