"""The generalized-α step as named phases over the packed data (Kynema-FMB's ``SolveStep``).

Each phase is a compiled kernel of ``(d, p)``: ``d`` the :class:`~kynemapy.engine.fields.Data`
arenas, ``p`` the coefficient vector (:mod:`kynemapy.engine.params`)::

    predict                       generalized-α predictor, q from q_prev, λ := 0
    repeat (Newton iteration):
        update_tangent            rotation block of 𝒯 per node, from h Δq
        element_terms             each element table's residual and matrix
        constraint_terms          Φ, B, K^Φ, input loads of every constraint
        assemble                  scatter into the Newton system
        solve                     condition, solve, uncondition
        convergence_error         weighted RMS of the increment (pre-update values)
        update                    Δq, v, v̇, q, λ from the increment
    until the error is <= 1
    finish                        algorithmic acceleration, global position, joint outputs

:func:`step` adds the rollback of a failed step (Kynema leaves the state as it was at the
failure; kynemapy restores it exactly), :func:`advance` runs many steps and records output
rows.  Both are one compiled code path: ``Simulation.step()`` is ``advance`` of one step.
"""

from __future__ import annotations

import math

import numpy as np

from kynemapy._arena import v1, v2, v3
from kynemapy._jit import njit
from kynemapy.engine import fields as fd
from kynemapy.engine.assemble import assemble
from kynemapy.engine.constraints.phase import constraint_outputs, constraint_terms
from kynemapy.engine.elements import element_terms
from kynemapy.engine.params import (
    P_ALPHA_F,
    P_ALPHA_M,
    P_ATOL,
    P_BETA,
    P_BETA_PRIME,
    P_CONDITIONER,
    P_DYNAMIC,
    P_GAMMA,
    P_GAMMA_PRIME,
    P_H,
    P_MAX_ITER,
    P_RTOL,
)
from kynemapy.linalg.dense import SOLVE_CAPACITY, SOLVE_OK, SOLVE_SINGULAR, csc_to_dense, dense_solve, program_solve
from kynemapy.linalg.sparse_lu import LU_CAPACITY, LU_OK, lu_factor, lu_refactor, lu_solve
from kynemapy.math.quaternion import quat_exp, quat_product
from kynemapy.math.so3 import tangent_operator_rot

#: step status codes
CONVERGED = 0
NOT_CONVERGED = 1
NOT_FINITE = 2
SINGULAR = 3
#: the sparse LU needs larger arrays: the caller grows them and repeats the step
NEEDS_MEMORY = 4


# ---------------------------------------------------------------- node kinematics
@njit
def displacement(h, q_delta, q_prev, q):
    """``q = q_prev ⊕ h Δq``: ``u = u_prev + h Δu``, ``r = exp(h Δθ) ⊗ r_prev`` (left, spatial)."""
    for n in range(q.shape[0]):
        for k in range(3):
            q[n, k] = q_prev[n, k] + h * q_delta[n, k]
        dw, dx, dy, dz = quat_exp(h * q_delta[n, 3], h * q_delta[n, 4], h * q_delta[n, 5])
        q[n, 3], q[n, 4], q[n, 5], q[n, 6] = quat_product(
            dw, dx, dy, dz, q_prev[n, 3], q_prev[n, 4], q_prev[n, 5], q_prev[n, 6]
        )


@njit
def global_position(x0, q, x):
    """``x = (X + u, r ⊗ r0)``."""
    for n in range(q.shape[0]):
        for k in range(3):
            x[n, k] = x0[n, k] + q[n, k]
        x[n, 3], x[n, 4], x[n, 5], x[n, 6] = quat_product(
            q[n, 3], q[n, 4], q[n, 5], q[n, 6], x0[n, 3], x0[n, 4], x0[n, 5], x0[n, 6]
        )


# ---------------------------------------------------------------- phases
@njit
def predict(d, p):
    """Generalized-α predictor of v, v̇, a and Δq for every node; ``q_prev := q``,
    ``q := q_prev ⊕ h Δq``; λ := 0."""
    h_ = d.mi
    v = v2(d.sf, h_, fd.V)
    vd = v2(d.sf, h_, fd.VD)
    a = v2(d.sf, h_, fd.A)
    q_delta = v2(d.sf, h_, fd.Q_DELTA)
    q = v2(d.sf, h_, fd.Q)
    q_prev = v2(d.sf, h_, fd.Q_PREV)
    lam = v2(d.sf, h_, fd.LAM)
    h = p[P_H]
    alpha_m = p[P_ALPHA_M]
    alpha_f = p[P_ALPHA_F]
    beta = p[P_BETA]
    gamma = p[P_GAMMA]
    for n in range(v.shape[0]):
        for k in range(6):
            vd_p = vd[n, k]
            a_p = a[n, k]
            v_p = v[n, k]
            vd[n, k] = 0.0
            a_new = (alpha_f * vd_p - alpha_m * a_p) / (1.0 - alpha_m)
            a[n, k] = a_new
            v[n, k] = v_p + h * (1.0 - gamma) * a_p + gamma * h * a_new
            q_delta[n, k] = v_p + (0.5 - beta) * h * a_p + beta * h * a_new
    for n in range(q.shape[0]):
        for k in range(7):
            q_prev[n, k] = q[n, k]
    displacement(h, q_delta, q_prev, q)
    for i in range(lam.shape[0]):
        for j in range(6):
            lam[i, j] = 0.0


@njit
def update_tangent(d, p):
    """Rotation block of 𝒯 (transposed, Kynema's layout) for every node from ψ = h Δq_rot."""
    h_ = d.mi
    q_delta = v2(d.sf, h_, fd.Q_DELTA)
    tangent = v3(d.wf, h_, fd.TANGENT)
    psi = v2(d.wf, h_, fd.S3)[0]
    h = p[P_H]
    for n in range(q_delta.shape[0]):
        for k in range(3):
            psi[k] = h * q_delta[n, 3 + k]
        tangent_operator_rot(psi, tangent[n])


@njit(inline=True)
def solve_system(d, x):
    """Solve ``A x = rhs`` in place (``x`` (n,) holds the right-hand side on entry).

    Dense solver: the elimination program of the reference factorization (``ri``, ``rf``),
    or, when it refuses, partial pivoting on a copy of the matrix (``ff`` (n, n), ``fi``
    the row swaps).  Sparse solver: refactor with the reference LU's pivot sequence, or
    when refused factor afresh in the fallback LU (``fi``, ``ff``).  Either way the result
    depends on the current matrix alone, never on earlier solves.  Returns ``SOLVE_OK``,
    ``SOLVE_SINGULAR`` or ``SOLVE_CAPACITY`` (the fallback LU's arrays are too small).
    """
    h = d.mi
    vals = v1(d.wf, h, fd.VALS)
    if h[fd.SPARSE] == 0:
        if program_solve(d.ri, d.rf, vals, x) == SOLVE_OK:
            return SOLVE_OK
        n = x.shape[0]
        a = d.ff[: n * n].reshape((n, n))
        csc_to_dense(v1(h, h, fd.INDPTR), v1(h, h, fd.INDICES), vals, a)
        return dense_solve(a, d.fi, x)
    if lu_refactor(d.ri, d.rf, vals) == LU_OK:
        lu_solve(d.ri, d.rf, x)
        return SOLVE_OK
    status = lu_factor(d.fi, d.ff, vals)
    if status == LU_OK:
        lu_solve(d.fi, d.ff, x)
        return SOLVE_OK
    if status == LU_CAPACITY:
        return SOLVE_CAPACITY
    return SOLVE_SINGULAR


@njit(inline=True)
def solve(d, p):
    """Condition (node rows × c), negate, solve, uncondition (λ rows ÷ c): Δx in ``DX``."""
    h = d.mi
    nsys = h[fd.N_SYSTEM_DOFS]
    n = h[fd.N_DOFS]
    c = p[P_CONDITIONER]
    b = v1(d.wf, h, fd.B)
    dx = v1(d.wf, h, fd.DX)
    for i in range(nsys):
        b[i] *= c
    for i in range(n):
        dx[i] = -b[i]
    status = solve_system(d, dx)
    for i in range(nsys, n):
        dx[i] /= c
    return status


@njit
def convergence_error(d, p):
    """Weighted RMS of the increment (Arnold & Hante), with the pre-update Δq and λ."""
    h_ = d.mi
    node_map = v1(h_, h_, fd.NODE_MAP)
    node_dofs = v1(h_, h_, fd.NODE_DOFS)
    crow = v1(h_, h_, fd.CON_ROW)
    n_rows = v1(h_, h_, fd.CON_N_ROWS)
    q_delta = v2(d.sf, h_, fd.Q_DELTA)
    lam = v2(d.sf, h_, fd.LAM)
    dx = v1(d.wf, h_, fd.DX)
    atol = p[P_ATOL]
    rtol = p[P_RTOL]
    h = p[P_H]
    s = 0.0
    for n in range(node_map.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            w = dx[m + k] / (atol + rtol * abs(h * q_delta[n, k]))
            s += w * w
    nsys = h_[fd.N_SYSTEM_DOFS]
    for ic in range(crow.shape[0]):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            w = dx[row + i] / (atol + rtol * abs(lam[ic, i]))
            s += w * w
    return math.sqrt(s / h_[fd.N_DOFS])


@njit
def update(d, p):
    """Apply the increment: Δq += Δx/h (and v += γ′Δx, v̇ += β′Δx if dynamic), q from q_prev, λ += Δλ."""
    h_ = d.mi
    node_map = v1(h_, h_, fd.NODE_MAP)
    node_dofs = v1(h_, h_, fd.NODE_DOFS)
    crow = v1(h_, h_, fd.CON_ROW)
    n_rows = v1(h_, h_, fd.CON_N_ROWS)
    q_delta = v2(d.sf, h_, fd.Q_DELTA)
    v = v2(d.sf, h_, fd.V)
    vd = v2(d.sf, h_, fd.VD)
    lam = v2(d.sf, h_, fd.LAM)
    dx = v1(d.wf, h_, fd.DX)
    h = p[P_H]
    gamma_prime = p[P_GAMMA_PRIME]
    beta_prime = p[P_BETA_PRIME]
    dynamic = p[P_DYNAMIC] != 0.0
    for n in range(node_map.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            dd = dx[m + k]
            q_delta[n, k] += dd / h
            if dynamic:
                v[n, k] += gamma_prime * dd
                vd[n, k] += beta_prime * dd
    displacement(h, q_delta, v2(d.sf, h_, fd.Q_PREV), v2(d.sf, h_, fd.Q))
    nsys = h_[fd.N_SYSTEM_DOFS]
    for ic in range(crow.shape[0]):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            lam[ic, i] += dx[row + i]


@njit(inline=True)
def finish(d, p):
    """After convergence: a += (1 − α_f)/(1 − α_m) v̇, x = (X + u, r ⊗ r0), joint outputs."""
    h_ = d.mi
    a = v2(d.sf, h_, fd.A)
    vd = v2(d.sf, h_, fd.VD)
    r = (1.0 - p[P_ALPHA_F]) / (1.0 - p[P_ALPHA_M])
    for n in range(a.shape[0]):
        for k in range(6):
            a[n, k] += r * vd[n, k]
    global_position(v2(d.mf, h_, fd.X0), v2(d.sf, h_, fd.Q), v2(d.sf, h_, fd.X))
    constraint_outputs(d, p[P_H] < 0.0)  # False, but not a literal: one compiled version


@njit(inline=True)
def linearize(d, p):
    """The Newton system at the current iterate: tangent, element and constraint terms, assembly."""
    update_tangent(d, p)
    element_terms(d, p)
    constraint_terms(d, p)
    assemble(d, p)


@njit(inline=True)
def newton_iteration(d, p):
    """:func:`linearize` and :func:`solve`; returns a ``SOLVE_*`` status."""
    linearize(d, p)
    return solve(d, p)


@njit(inline=True)
def solve_step(d, p):
    """One Newton solve from the predictor; returns ``(status, n_iter)`` (state not restored)."""
    predict(d, p)
    errors = v1(d.wf, d.mi, fd.ERRORS)
    max_iter = int(p[P_MAX_ITER])
    n_iter = 0
    status = NOT_CONVERGED
    while n_iter < max_iter:
        solved = newton_iteration(d, p)
        if solved != SOLVE_OK:
            status = NEEDS_MEMORY if solved == SOLVE_CAPACITY else SINGULAR
            break
        err = convergence_error(d, p)
        errors[n_iter] = err
        n_iter += 1
        update(d, p)
        if not math.isfinite(err):
            status = NOT_FINITE
            break
        if err <= 1.0:
            status = CONVERGED
            break
    d.wi[d.mi[fd.N_ITER]] = n_iter
    if status == CONVERGED:
        finish(d, p)
    return status, n_iter


@njit(inline=True)
def state_is_finite(d):
    """True when q, v, vd, a and λ hold no NaN or inf."""
    h = d.mi
    finite = True
    for w in (fd.Q, fd.V, fd.VD, fd.A, fd.LAM):
        start = h[w]
        for i in range(start, start + h[w + 1] * h[w + 2]):
            if not math.isfinite(d.sf[i]):
                finite = False
    return finite


@njit(inline=True)
def save_state(d):
    """Copy the state arena (and step counter) into the workspace (``SAVED``)."""
    saved = v1(d.wf, d.mi, fd.SAVED)
    for i in range(saved.shape[0]):
        saved[i] = d.sf[i]
    d.wi[d.mi[fd.SAVED_STEP]] = d.si[0]


@njit(inline=True)
def restore_state(d):
    """Put the state saved by :func:`save_state` back."""
    saved = v1(d.wf, d.mi, fd.SAVED)
    for i in range(saved.shape[0]):
        d.sf[i] = saved[i]
    d.si[0] = d.wi[d.mi[fd.SAVED_STEP]]


@njit(inline=True)
def step(d, p):
    """Advance one step of size ``p[P_H]``; on failure the state is restored exactly.

    A static step (``P_DYNAMIC`` 0, β′ = γ′ = 0) is one Newton solve at the full load.
    Returns ``(status, n_iter)``; the Newton errors are in ``ERRORS[:n_iter]``.  The time
    and the step counter advance only on success.
    """
    save_state(d)
    status, n_iter = solve_step(d, p)
    if status == CONVERGED and not state_is_finite(d):
        status = NOT_FINITE
    if status != CONVERGED:
        restore_state(d)
        return status, n_iter
    d.sf[d.mi[fd.TIME]] += p[P_H]
    d.si[0] += 1
    return status, n_iter


@njit
def record_row(d, n_iter, rows, r):
    """Copy the state into output row ``r`` of ``rows`` (R, width); the energy and momentum
    columns are filled later (:func:`kynemapy.engine.invariants.fill_invariants`)."""
    h = d.mi
    row = rows[r]
    row[h[fd.ROW_TIME]] = d.sf[h[fd.TIME]]
    row[h[fd.ROW_STEP]] = d.si[0]
    for w, o in ((fd.Q, fd.ROW_Q), (fd.V, fd.ROW_V), (fd.VD, fd.ROW_VD), (fd.A, fd.ROW_A)):
        src = h[w]
        dst = h[o]
        for i in range(h[w + 1] * h[w + 2]):
            row[dst + i] = d.sf[src + i]
    for w, o in ((fd.LAM, fd.ROW_LAM), (fd.CON_OUTPUT, fd.ROW_CON_OUTPUT)):
        src = h[w]
        dst = h[o]
        for i in range(h[w + 1] * h[w + 2]):
            row[dst + i] = d.sf[src + i]
    row[h[fd.ROW_ITERATIONS]] = n_iter
    errors = v1(d.wf, h, fd.ERRORS)
    row[h[fd.ROW_ERROR]] = errors[n_iter - 1] if n_iter > 0 else 0.0


@njit(inline=True)
def advance(d, p, n_steps, every, rows, max_rows, iterations):
    """Up to ``n_steps`` steps with constant inputs, recording output rows.

    ``iterations[i]`` receives the Newton iterations of step i (``iterations`` may be shorter
    than ``n_steps``: then only the first entries are kept).  After each converged step whose
    counter is a multiple of ``every`` (> 0), one row is recorded into ``rows`` (R, width); at
    most ``max_rows`` rows.  Stops at the first failed step (state restored) or when ``rows``
    is full.  Returns ``(steps_done, rows_recorded, status)``.
    """
    recorded = np.int64(0)  # not a literal: record_row compiles once
    n_keep = iterations.shape[0]
    for i in range(n_steps):
        status, n_iter = step(d, p)
        if i < n_keep:
            iterations[i] = n_iter
        if status != CONVERGED:
            return i, recorded, status
        if every > 0 and d.si[0] % every == 0:
            record_row(d, n_iter, rows, recorded)
            recorded += 1
            if recorded >= max_rows:
                return i + 1, recorded, CONVERGED
    return n_steps, recorded, CONVERGED

