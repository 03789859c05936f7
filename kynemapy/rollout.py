"""N steps inside one compiled call, recording every k-th state into caller buffers.

The recording buffers are a :class:`Record` of arrays with a leading row axis;
``advance_kernel`` copies the state into one row after every ``every``-th converged
step (step counter divisible by ``every``) and never allocates.  With ``every = 0``
nothing is recorded (the buffers may then have zero rows).  The energy and momentum
columns are filled afterwards by :func:`fill_invariants` (the run driver does it in its
writer thread, off the stepping thread).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.invariants import system_invariants
from kynemapy.model import Model
from kynemapy.step import CONVERGED, step_kernel


class Record(NamedTuple):
    """Output rows (leading axis = row): time (R,) [s], step (R,) int64, q (R, N, 7), v, vd, a
    (R, N, 6), lam (R, C, 6), constraint_output (R, C, 3), iterations (R,) int64, error (R,)
    (final Newton error of the step), kinetic_energy, potential_energy (R,) [J],
    linear_momentum (R, 3) [kg m/s], angular_momentum (R, 3) [kg m²/s] (world origin)."""

    time: np.ndarray
    step: np.ndarray
    q: np.ndarray
    v: np.ndarray
    vd: np.ndarray
    a: np.ndarray
    lam: np.ndarray
    constraint_output: np.ndarray
    iterations: np.ndarray
    error: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray


def new_record(model: Model, rows: int) -> Record:
    """Zeroed buffers for ``rows`` output rows."""
    n, c = model.n_nodes, model.n_constraints
    return Record(
        time=np.zeros(rows),
        step=np.zeros(rows, dtype=np.int64),
        q=np.zeros((rows, n, 7)),
        v=np.zeros((rows, n, 6)),
        vd=np.zeros((rows, n, 6)),
        a=np.zeros((rows, n, 6)),
        lam=np.zeros((rows, c, 6)),
        constraint_output=np.zeros((rows, c, 3)),
        iterations=np.zeros(rows, dtype=np.int64),
        error=np.zeros(rows),
        kinetic_energy=np.zeros(rows),
        potential_energy=np.zeros(rows),
        linear_momentum=np.zeros((rows, 3)),
        angular_momentum=np.zeros((rows, 3)),
    )


@njit
def _copy_rows(src, dst):
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit
def fill_invariants(mass_node, mass_m_star, x0, gravity, rec, start, stop, s4, s33, out):
    """Energy and momentum of rows ``start`` to ``stop - 1`` of ``rec`` from their ``q`` and ``v``.

    Scratch ``s4`` (1, 4), ``s33`` (1, 3, 3), ``out`` (8,) of the caller's own: the run
    driver's writer thread calls this on a buffer while the stepping goes on.
    """
    for row in range(start, stop):
        system_invariants(mass_node, mass_m_star, x0, gravity, rec.q[row], rec.v[row], s4, s33, out)
        rec.kinetic_energy[row] = out[0]
        rec.potential_energy[row] = out[1]
        for k in range(3):
            rec.linear_momentum[row, k] = out[2 + k]
            rec.angular_momentum[row, k] = out[5 + k]


@njit(inline=True)
def record_row(state, ws, n_iter, rec, row):
    """Copy the current state into row ``row`` of ``rec`` (energy and momentum: :func:`fill_invariants`)."""
    rec.time[row] = state.time[0]
    rec.step[row] = state.step[0]
    _copy_rows(state.q, rec.q[row])
    _copy_rows(state.v, rec.v[row])
    _copy_rows(state.vd, rec.vd[row])
    _copy_rows(state.a, rec.a[row])
    _copy_rows(state.lam, rec.lam[row])
    _copy_rows(state.constraint_output, rec.constraint_output[row])
    rec.iterations[row] = n_iter
    rec.error[row] = ws.errors[n_iter - 1] if n_iter > 0 else 0.0


@njit
def advance_kernel(model, state, inputs, ws, p, n_steps, every, iterations, rec, max_rows):
    """Up to ``n_steps`` steps with constant inputs.

    ``iterations[i]`` receives the Newton iterations of step i (``iterations`` may be
    shorter than ``n_steps``: then only the first entries are kept).  After each
    converged step whose counter is a multiple of ``every`` (> 0), one row is recorded
    into ``rec``; at most ``max_rows`` rows.  Stops at the first failed step (state
    restored) or when ``rec`` is full.  Returns ``(steps_done, rows_recorded, status)``.
    """
    rows = 0
    n_keep = iterations.shape[0]
    for i in range(n_steps):
        status, n_iter = step_kernel(model, state, inputs, ws, p)
        if i < n_keep:
            iterations[i] = n_iter
        if status != CONVERGED:
            return i, rows, status
        if every > 0 and state.step[0] % every == 0:
            record_row(state, ws, n_iter, rec, rows)
            rows += 1
            if rows >= max_rows:
                return i + 1, rows, CONVERGED
    return n_steps, rows, CONVERGED
