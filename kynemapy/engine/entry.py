"""The one compiled entry point of the engine, :func:`run_task`.

Every Python caller (``Simulation.step``, ``advance``, the run loop, the set-up of a
simulation, reactions) goes through it, so numba compiles and caches one top-level function
over the phase kernels: compiling a top-level function re-optimizes all the code it calls,
and each further entry point would pay that again.  ``step()`` and ``advance()`` share it.
"""

from __future__ import annotations

from kynemapy._arena import v1
from kynemapy._jit import njit
from kynemapy.engine import fields as fd
from kynemapy.engine.constraints.phase import constraint_outputs, constraint_reaction, constraint_terms
from kynemapy.engine.initial import consistent_accelerations
from kynemapy.engine.step import advance, linearize, record_row
from kynemapy.linalg.sparse_lu import lu_factor

#: tasks of :func:`run_task`
ADVANCE = 0  #: ``advance(d, p, n, every, rows, max_rows, iterations)``
LINEARIZE = 1  #: the Newton system at the current state (``VALS``, ``B``)
INITIAL_ACCELERATIONS = 2  #: consistent v̇ and λ (``p`` = params.INITIAL_ACCELERATIONS)
CONSTRAINT_TERMS = 3  #: Φ, B, K^Φ of every constraint (``CON_*``)
INITIAL_OUTPUTS = 4  #: joint outputs at t = 0
REACTION = 5  #: ``out`` (6,) := reaction of constraint ``n`` (``p`` with exact gradients)
RECORD = 6  #: record the state into row ``every`` of ``rows``, with ``n`` Newton iterations
LU_FACTOR = 7  #: factor the reference sparse LU (``ri``, ``rf``) from ``VALS``; status in the result


@njit
def run_task(d, p, task, n, every, rows, max_rows, iterations, out):
    """Run ``task`` (``ADVANCE``, ``LINEARIZE``, ...) on the arenas ``d`` with coefficients ``p``.

    ``rows`` (R, width) float64, ``iterations`` (k,) int64 and ``out`` (6,) float64 are the
    caller's buffers (empty where the task does not use them).  Returns ``(steps_done,
    rows_recorded, status)``; tasks other than ``ADVANCE`` return ``(0, 0, status)``.
    """
    if task == ADVANCE:
        return advance(d, p, n, every, rows, max_rows, iterations)
    status = 0
    if task == LINEARIZE:
        linearize(d, p)
    elif task == INITIAL_ACCELERATIONS:
        status = consistent_accelerations(d, p)
    elif task == CONSTRAINT_TERMS:
        constraint_terms(d, p)
    elif task == INITIAL_OUTPUTS:
        constraint_outputs(d, task == INITIAL_OUTPUTS)
    elif task == REACTION:
        constraint_reaction(d, p, n, out)
    elif task == RECORD:
        record_row(d, n, rows, every)
    elif task == LU_FACTOR:
        status = lu_factor(d.ri, d.rf, v1(d.wf, d.mi, fd.VALS))
    return 0, 0, status
