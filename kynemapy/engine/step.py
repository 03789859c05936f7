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

from kynemapy._jit import njit
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
    P_STATIC_RETRIES,
)
from kynemapy.engine.rows import (
    ROW_A,
    ROW_CONSTRAINT_OUTPUT,
    ROW_ERROR,
    ROW_ITERATIONS,
    ROW_LAM,
    ROW_Q,
    ROW_STEP,
    ROW_TIME,
    ROW_V,
    ROW_VD,
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
@njit(inline=True)
def displacement(h, q_delta, q_prev, q):
    """``q = q_prev ⊕ h Δq``: ``u = u_prev + h Δu``, ``r = exp(h Δθ) ⊗ r_prev`` (left, spatial)."""
    for n in range(q.shape[0]):
        for k in range(3):
            q[n, k] = q_prev[n, k] + h * q_delta[n, k]
        dw, dx, dy, dz = quat_exp(h * q_delta[n, 3], h * q_delta[n, 4], h * q_delta[n, 5])
        q[n, 3], q[n, 4], q[n, 5], q[n, 6] = quat_product(
            dw, dx, dy, dz, q_prev[n, 3], q_prev[n, 4], q_prev[n, 5], q_prev[n, 6]
        )


@njit(inline=True)
def global_position(x0, q, x):
    """``x = (X + u, r ⊗ r0)``."""
    for n in range(q.shape[0]):
        for k in range(3):
            x[n, k] = x0[n, k] + q[n, k]
        x[n, 3], x[n, 4], x[n, 5], x[n, 6] = quat_product(
            q[n, 3], q[n, 4], q[n, 5], q[n, 6], x0[n, 3], x0[n, 4], x0[n, 5], x0[n, 6]
        )


# ---------------------------------------------------------------- phases
@njit(inline=True)
def predict(d, p):
    """Generalized-α predictor of v, v̇, a and Δq for every node; ``q_prev := q``,
    ``q := q_prev ⊕ h Δq``; λ := 0."""
    v = d.v
    vd = d.vd
    a = d.a
    q_delta = d.q_delta
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
    q = d.q
    q_prev = d.q_prev
    for n in range(q.shape[0]):
        for k in range(7):
            q_prev[n, k] = q[n, k]
    displacement(h, q_delta, q_prev, q)
    lam = d.lam
    for i in range(lam.shape[0]):
        for j in range(6):
            lam[i, j] = 0.0


@njit(inline=True)
def update_tangent(d, p):
    """Rotation block of 𝒯 (transposed, Kynema's layout) for every node from ψ = h Δq_rot."""
    q_delta = d.q_delta
    psi = d.s3[0]
    h = p[P_H]
    for n in range(q_delta.shape[0]):
        for k in range(3):
            psi[k] = h * q_delta[n, 3 + k]
        tangent_operator_rot(psi, d.tangent[n])


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
    vals = d.vals
    if not d.sparse:
        if program_solve(d.ri, d.rf, vals, x) == SOLVE_OK:
            return SOLVE_OK
        n = x.shape[0]
        a = d.ff[: n * n].reshape((n, n))
        csc_to_dense(d.indptr, d.indices, vals, a)
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
    """Condition (node rows × c), negate, solve, uncondition (λ rows ÷ c): Δx in ``dx``."""
    nsys = d.n_system_dofs
    n = d.n_dofs
    c = p[P_CONDITIONER]
    b = d.b
    dx = d.dx
    for i in range(nsys):
        b[i] *= c
    for i in range(n):
        dx[i] = -b[i]
    status = solve_system(d, dx)
    for i in range(nsys, n):
        dx[i] /= c
    return status


@njit(inline=True)
def convergence_error(d, p):
    """Weighted RMS of the increment (Arnold & Hante), with the pre-update Δq and λ."""
    node_map = d.node_map
    node_dofs = d.node_dofs
    crow = d.constraint_row
    n_rows = d.constraint_n_rows
    q_delta = d.q_delta
    lam = d.lam
    dx = d.dx
    atol = p[P_ATOL]
    rtol = p[P_RTOL]
    h = p[P_H]
    s = 0.0
    for n in range(node_map.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            w = dx[m + k] / (atol + rtol * abs(h * q_delta[n, k]))
            s += w * w
    nsys = d.n_system_dofs
    for ic in range(crow.shape[0]):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            w = dx[row + i] / (atol + rtol * abs(lam[ic, i]))
            s += w * w
    return math.sqrt(s / d.n_dofs)


@njit(inline=True)
def update(d, p):
    """Apply the increment: Δq += Δx/h (and v += γ′Δx, v̇ += β′Δx if dynamic), q from q_prev, λ += Δλ."""
    node_map = d.node_map
    node_dofs = d.node_dofs
    crow = d.constraint_row
    n_rows = d.constraint_n_rows
    q_delta = d.q_delta
    v = d.v
    vd = d.vd
    lam = d.lam
    dx = d.dx
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
    displacement(h, q_delta, d.q_prev, d.q)
    nsys = d.n_system_dofs
    for ic in range(crow.shape[0]):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            lam[ic, i] += dx[row + i]


@njit(inline=True)
def finish(d, p):
    """After convergence: a += (1 − α_f)/(1 − α_m) v̇, x = (X + u, r ⊗ r0), joint outputs."""
    a = d.a
    vd = d.vd
    r = (1.0 - p[P_ALPHA_F]) / (1.0 - p[P_ALPHA_M])
    for n in range(a.shape[0]):
        for k in range(6):
            a[n, k] += r * vd[n, k]
    global_position(d.x0, d.q, d.x)
    constraint_outputs(d, p[P_H] < 0.0)  # False, but not a literal: one compiled version


@njit(inline=True)
def state_is_finite(d):
    """True when q, v, vd, a and λ hold no NaN or inf."""
    finite = True
    for arr in (d.v, d.vd, d.a, d.lam):
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                if not math.isfinite(arr[i, j]):
                    finite = False
    q = d.q
    for i in range(q.shape[0]):
        for j in range(7):
            if not math.isfinite(q[i, j]):
                finite = False
    return finite


@njit(inline=True)
def record_row(d, n_iter, rows, r):
    """Copy the state into output row ``r`` of ``rows`` (R, width) at the offsets
    ``d.row_offsets`` (:mod:`kynemapy.engine.rows`); energy and momentum come later
    (:func:`kynemapy.engine.invariants.fill_invariants`)."""
    row = rows[r]
    o = d.row_offsets
    row[o[ROW_TIME]] = d.time[0]
    row[o[ROW_STEP]] = d.step[0]
    for src, k in ((d.q, ROW_Q), (d.v, ROW_V), (d.vd, ROW_VD), (d.a, ROW_A), (d.lam, ROW_LAM)):
        dst = o[k]
        w = src.shape[1]
        for i in range(src.shape[0]):
            for j in range(w):
                row[dst + i * w + j] = src[i, j]
    out = d.constraint_output
    dst = o[ROW_CONSTRAINT_OUTPUT]
    for i in range(out.shape[0]):
        for j in range(3):
            row[dst + 3 * i + j] = out[i, j]
    row[o[ROW_ITERATIONS]] = n_iter
    row[o[ROW_ERROR]] = d.errors[n_iter - 1] if n_iter > 0 else 0.0


#: what :func:`advance` does (its ``mode``)
STEPS = 0  #: up to ``n_steps`` time steps
LINEARIZE = 1  #: only the Newton system at the current state (``vals``, ``b``)
INITIAL_ACCELERATIONS = 2  #: consistent v̇ and λ at the current q, v (``p``: INITIAL_ACCELERATIONS)


@njit(inline=True)
def advance(d, p, mode, n_steps, every, rows, max_rows, iterations):
    """The Newton loop: up to ``n_steps`` steps with constant inputs, recording output rows.

    Per step (Kynema's ``SolveStep``): save the state; :func:`predict`; then per Newton
    iteration :func:`update_tangent`, ``element_terms``, ``constraint_terms``, ``assemble``,
    :func:`solve`, :func:`convergence_error`, :func:`update`, until the error is <= 1;
    :func:`finish`.  A failed step (no convergence, NaN, singular matrix) restores the state
    exactly and stops.  ``iterations[i]`` gets the Newton iterations of step i (``iterations``
    may be shorter than ``n_steps``).  After each converged step whose counter is a multiple
    of ``every`` (> 0), one row is recorded into ``rows`` (R, width), at most ``max_rows``.

    ``mode`` ``LINEARIZE`` stops after the first assembly (the reference factorization's
    matrix); ``INITIAL_ACCELERATIONS`` solves the first linearization for v̇ and λ instead of
    an increment, with 𝒯 = 0 in the element blocks (their matrix is then M) and 𝒯 = I in the
    constraint rows (:mod:`kynemapy.engine.initial`).  Both are this loop's first pass, so
    every phase is compiled once, here.

    Returns ``(steps_done, rows_recorded, status)`` (status: a step status, or for the two
    other modes a ``SOLVE_*`` status).
    """
    recorded = 0
    n_keep = iterations.shape[0]
    max_iter = int(p[P_MAX_ITER])
    static = mode == STEPS and p[P_DYNAMIC] == 0.0
    attempts = max(int(p[P_STATIC_RETRIES]), 1) if static else 1
    for i in range(n_steps):
        if mode == STEPS:
            save_state(d)
        if static:
            begin_load_bisection(d)
        low = 0.0
        load = 1.0
        high = 1.0
        status = NOT_CONVERGED
        n_iter = 0
        total_iter = 0
        for _ in range(attempts):
            if static:
                scale_loads(d, load)
            if mode == STEPS:
                predict(d, p)
            elif mode == INITIAL_ACCELERATIONS:
                zero_accelerations(d)
            n_iter = 0
            status = NOT_CONVERGED
            while n_iter < max_iter:
                if mode == INITIAL_ACCELERATIONS:
                    set_tangent(d, 0.0)
                else:
                    update_tangent(d, p)
                element_terms(d, p)
                if mode == INITIAL_ACCELERATIONS:
                    set_tangent(d, 1.0)
                constraint_terms(d, p)
                assemble(d, p)
                if mode == LINEARIZE:
                    return 0, 0, SOLVE_OK
                solved = solve(d, p)
                if mode == INITIAL_ACCELERATIONS:
                    if solved == SOLVE_OK:
                        accelerations_from_solution(d)
                    return 0, 0, solved
                if solved != SOLVE_OK:
                    status = NEEDS_MEMORY if solved == SOLVE_CAPACITY else SINGULAR
                    break
                err = convergence_error(d, p)
                d.errors[n_iter] = err
                n_iter += 1
                update(d, p)
                if not math.isfinite(err):
                    status = NOT_FINITE
                    break
                if err <= 1.0:
                    status = CONVERGED
                    break
            total_iter += n_iter
            if not static or status == NEEDS_MEMORY:
                break
            # Kynema's load bisection: a converged partial load is kept and the full load tried
            # from it; a failed one is undone and the load halved towards the last converged one
            if status == CONVERGED:
                if abs(load - 1.0) < 1e-10:
                    break
                copy_state(d.state, d.snapshot)
                low = load
                load = 1.0
            else:
                copy_state(d.snapshot, d.state)
                high = load
                load = 0.5 * (low + high)
        if static:
            end_load_bisection(d)
            if status == CONVERGED and abs(load - 1.0) >= 1e-10:
                status = NOT_CONVERGED
        d.n_iter[0] = n_iter
        if status == CONVERGED:
            finish(d, p)
            if not state_is_finite(d):
                status = NOT_FINITE
        if i < n_keep:
            iterations[i] = total_iter
        if status != CONVERGED:
            restore_state(d)
            return i, recorded, status
        d.time[0] += p[P_H]
        d.step[0] += 1
        if every > 0 and d.step[0] % every == 0:
            record_row(d, n_iter, rows, recorded)
            recorded += 1
            if recorded >= max_rows:
                return i + 1, recorded, CONVERGED
    return n_steps, recorded, CONVERGED


@njit
def copy_state(src, dst):
    """``dst := src`` for two state arenas (or a state arena and its copy in the workspace)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit
def begin_load_bisection(d):
    """A static step's start: the loads as given (``f_baseline``), the state as the last
    converged one (``snapshot``)."""
    f = d.f
    base = d.f_baseline
    for n in range(f.shape[0]):
        for k in range(6):
            base[n, k] = f[n, k]
    copy_state(d.state, d.snapshot)


@njit
def scale_loads(d, load):
    """External loads := ``load`` × the given ones (Kynema scales ``f`` only, not gravity)."""
    f = d.f
    base = d.f_baseline
    for n in range(f.shape[0]):
        for k in range(6):
            f[n, k] = base[n, k] * load


@njit
def end_load_bisection(d):
    """The loads as given again."""
    scale_loads(d, 1.0)


@njit
def start(d):
    """The state at t = 0 once v̇ is known: a := v̇ (Kynema's start), x := (X + u, r ⊗ r0), and the
    hinge and slider outputs (Kynema's revolute output stays zero until the first step)."""
    a = d.a
    vd = d.vd
    for n in range(a.shape[0]):
        for k in range(6):
            a[n, k] = vd[n, k]
    global_position(d.x0, d.q, d.x)
    constraint_outputs(d, a.shape[0] >= 0)  # True, not a literal


@njit(inline=True)
def save_state(d):
    """Copy the state arena and the step counter into ``saved``, ``saved_step``."""
    state = d.state
    saved = d.saved
    for i in range(state.shape[0]):
        saved[i] = state[i]
    d.saved_step[0] = d.step[0]


@njit(inline=True)
def restore_state(d):
    """Put the state saved by :func:`save_state` back."""
    state = d.state
    saved = d.saved
    for i in range(state.shape[0]):
        state[i] = saved[i]
    d.step[0] = d.saved_step[0]


@njit
def zero_accelerations(d):
    """v̇ := 0 and λ := 0 (the initial accelerations' residual is r(v̇ = 0), and λ is solved for)."""
    vd = d.vd
    lam = d.lam
    for n in range(vd.shape[0]):
        for k in range(6):
            vd[n, k] = 0.0
    for c in range(lam.shape[0]):
        for k in range(6):
            lam[c, k] = 0.0


@njit
def set_tangent(d, diagonal):
    """𝒯 := ``diagonal`` · I for every node."""
    tangent = d.tangent
    for n in range(tangent.shape[0]):
        for i in range(3):
            for j in range(3):
                tangent[n, i, j] = diagonal if i == j else 0.0


@njit
def accelerations_from_solution(d):
    """v̇ and λ from the solution ``dx`` of the initial-accelerations system."""
    dx = d.dx
    vd = d.vd
    lam = d.lam
    for n in range(vd.shape[0]):
        m = d.node_map[n]
        for k in range(d.node_dofs[n]):
            vd[n, k] = dx[m + k]
    nsys = d.n_system_dofs
    for c in range(lam.shape[0]):
        row = nsys + d.constraint_row[c]
        for i in range(d.constraint_n_rows[c]):
            lam[c, i] = dx[row + i]
