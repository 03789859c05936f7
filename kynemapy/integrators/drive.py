"""Compiled time loops: n steps of one scheme, writing every ``every``-th state into caller buffers.

Every step function has the signature
``step(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork) -> int``
and is inlined (numba IR) into the loop that calls it.  One loop, :func:`run_scheme`, for every
scheme (chosen by its code) and every torque function: the torque is a first-class function
(:func:`kynemapy.integrators.torques.first_class`), typed by its signature alone, so the loop is
compiled once and cached on disk like every kynemapy kernel, and a user's torque function costs
its own compilation only.  (Until 2026-12-02 a user's torque, a numba dispatcher whose type is
that function's, compiled the loop again in every process, about 1.5 s, and added an entry to
the cache each time.)

Return codes: 0 done; −1 a Newton iteration failed at step ``counters[0]``; −2 the state became
non-finite at step ``counters[0]``.  ``counters[1]`` accumulates Newton iterations.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.integrators.dmv import step_dmv
from kynemapy.integrators.liemid import step_liemid
from kynemapy.integrators.rig_schemes import step_rig_imp, step_rig_neg, step_rig_pos
from kynemapy.integrators.splitting import step_splitting
from kynemapy.integrators.torques import body_torque

DONE = 0
NEWTON_FAILED = -1
NOT_FINITE = -2


@njit(inline=True)
def _drive(
    step,
    torque_fn,
    torque_params,
    force_params,
    inertia,
    iopts,
    t0,
    h,
    n_steps,
    every,
    R_out,
    W_out,
    state,
    work,
    vwork,
    counters,
):
    """The loop shared by every scheme.  ``state`` (4, 3): W, Pi, T, torque scratch."""
    R = work[0]
    W = state[0]
    Pi = state[1]
    T = state[2]
    for i in range(3):
        W[i] = W_out[0, i]
        Pi[i] = inertia[i] * W[i]
        for j in range(3):
            R[i, j] = R_out[0, i, j]
    body_torque(torque_fn, torque_params, force_params, t0, R, T, state[3])
    row = 1
    for k in range(n_steps):
        t = t0 + k * h
        iterations = step(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work[1:], vwork)
        if iterations < 0:
            counters[0] = k
            return NEWTON_FAILED
        counters[1] += iterations
        if not (
            math.isfinite(W[0])
            and math.isfinite(W[1])
            and math.isfinite(W[2])
            and math.isfinite(R[0, 0] + R[1, 1] + R[2, 2] + R[0, 1] + R[1, 2] + R[2, 0])
        ):
            counters[0] = k
            return NOT_FINITE
        if (k + 1) % every == 0:
            for i in range(3):
                W_out[row, i] = W[i]
                for j in range(3):
                    R_out[row, i, j] = R[i, j]
            row += 1
    return DONE


#: the schemes in the order of their codes, the ``scheme`` argument of :func:`run_scheme`
SCHEMES = ("rig_pos", "rig_neg", "rig_imp", "liemid", "splitting", "dmv")


# fmt: off
@njit
def run_scheme(
    scheme, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work,
    vwork, counters,
):
    """The loop of scheme ``SCHEMES[scheme]`` (see :func:`_drive`): one compiled function for every
    scheme, a branch per scheme with its step inlined, and for every torque function.

    ``torque_fn``: None (the point force of ``force_params`` alone: this variant compiles no
    torque call), or a user's torque as a first-class function of
    :data:`~kynemapy.integrators.torques.TORQUE_SIGNATURE`
    (:func:`~kynemapy.integrators.torques.first_class`), called through its address with
    ``torque_params``: its numba type is the signature, the same for every function and
    process, so that variant too is compiled once and cached, whatever the torque."""
    if scheme == 0:
        return _drive(step_rig_pos, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work, vwork, counters)  # noqa: E501
    if scheme == 1:
        return _drive(step_rig_neg, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work, vwork, counters)  # noqa: E501
    if scheme == 2:
        return _drive(step_rig_imp, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work, vwork, counters)  # noqa: E501
    if scheme == 3:
        return _drive(step_liemid, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work, vwork, counters)  # noqa: E501
    if scheme == 4:
        return _drive(step_splitting, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work, vwork, counters)  # noqa: E501
    return _drive(step_dmv, torque_fn, torque_params, force_params, inertia, iopts, t0, h, n_steps, every, R_out, W_out, state, work, vwork, counters)  # noqa: E501
# fmt: on
