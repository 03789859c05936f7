"""The generalized-α step as named phases over the packed data (Kynema-FMB's ``SolveStep``).

Each phase is a compiled kernel of ``(d, p)``: ``d`` the :class:`~kynemapy.engine.fields.Data`
arenas, ``p`` the coefficient vector (:mod:`kynemapy.engine.params`)::

    predict                       generalized-α predictor, q from q_prev, λ := 0
    repeat (Newton iteration):
        update_tangent            rotation block of 𝒯 per node, from h Δq
        begin_system              zeros, external loads
        element_terms             each element's residual and matrix, added into the system
        constraint_terms          Φ, B, K^Φ, input loads of every constraint
        assemble                  constraint rows, columns and forces into the system
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
from kynemapy.engine.assemble import assemble, begin_system
from kynemapy.engine.constraints.phase import constraint_outputs, constraint_terms
from kynemapy.engine.elements import element_terms
from kynemapy.engine.params import (
    CONVERGENCE_AUTO,
    CONVERGENCE_ROUNDOFF,
    P_ALPHA_F,
    P_ALPHA_M,
    P_ASSEMBLE_K,
    P_ATOL,
    P_BETA,
    P_BETA_PRIME,
    P_CONDITIONER,
    P_CONVERGENCE,
    P_DYNAMIC,
    P_EXACT,
    P_GAMMA,
    P_GAMMA_PRIME,
    P_H,
    P_MAX_ITER,
    P_RHS_BIAS,
    P_RTOL,
    P_STATIC_RETRIES,
    P_STIFFNESS,
)
from kynemapy.engine.rows import ROW_ERROR, ROW_ITERATIONS, ROW_STEP
from kynemapy.engine.solvers import solve_system
from kynemapy.linalg.dense import SOLVE_CAPACITY, SOLVE_OK
from kynemapy.math.quaternion import quat_exp, quat_product
from kynemapy.math.so3 import tangent_operator_rot

#: step status codes
CONVERGED = 0
NOT_CONVERGED = 1
NOT_FINITE = 2
SINGULAR = 3
#: the sparse LU needs larger arrays: the caller grows them and repeats the step
NEEDS_MEMORY = 4
#: the compiled step raised an error (numba's C-ABI wrapper reported it on stderr and returned
#: zeros; a batch member's call says so with this status, engine.batch)
RAISED = 5


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
# Each phase takes the arrays it uses (the fields of Data, kynemapy.engine.fields) and the
# coefficient vector ``p``: inlined into the Newton loop, a phase then copies a few array
# descriptors instead of the whole Data (numba's compile time grows with both).


@njit(inline=True)
def predict(p, v, vd, a, q_delta, q_prev, q, lam):
    """Generalized-α predictor of v, v̇, a and Δq for every node; ``q_prev := q``,
    ``q := q_prev ⊕ h Δq``; λ := 0."""
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


@njit(inline=True)
def update_tangent(h, q_delta, tangent, psi):
    """Rotation block of 𝒯 (transposed, Kynema's layout) for every node from ψ = h Δq_rot;
    ``psi`` (3,) scratch."""
    for n in range(q_delta.shape[0]):
        for k in range(3):
            psi[k] = h * q_delta[n, 3 + k]
        tangent_operator_rot(psi, tangent[n])


@njit(inline=True)
def solve(units, solver, indptr, indices, vals, b, dx, nsys, c):
    """Condition (node rows × c), negate, solve, uncondition (λ rows ÷ c): Δx in ``dx``."""
    n = dx.shape[0]
    for i in range(nsys):
        b[i] *= c
    for i in range(n):
        dx[i] = -b[i]
    status = solve_system(units, solver, indptr, indices, vals, dx)
    for i in range(nsys, n):
        dx[i] /= c
    return status


#: the round-off floor of :func:`convergence_error` (``P_CONVERGENCE`` round-off): this many
#: times the unit round-off of the positions, ε L, and of the forces, ε (Σ|Bᵀλ| + L S_ii)
ROUNDOFF_FACTOR = 10.0
EPS = 2.220446049250313e-16
#: position increments that shrink by less than this factor from one iteration to the next,
#: while within tolerance, are taken as round-off (the stalled iterations of an ill-conditioned
#: matrix near a singular position)
STALL_RATIO = 0.5


@njit(inline=True)
def convergence_error(
    roundoff,
    parts,
    p,
    node_map,
    node_dofs,
    crow,
    n_rows,
    q_delta,
    lam,
    dx,
    nsys,
    x,
    indptr,
    indices,
    vals,
    fs,
    prev_norm,
):
    """Weighted RMS of the increment (Arnold & Hante), with the pre-update Δq and λ; returns
    ``(error, max |Δx|)`` (the largest node increment, ``prev_norm`` of the next iteration; < 0
    in the first one).

    ``roundoff`` False (Kynema's criterion): the node increments ``Δx/(atol + rtol|hΔq|)`` and the multiplier
    increments ``Δλ/(atol + rtol|λ|)``, RMS over the n unknowns.

    ``roundoff`` True: the node increments against ``atol + rtol|hΔq| + κεL``, and the multipliers
    measured by the forces they apply, ``f = Bᵀ Δλ`` per node DOF (a multiplier change that
    moves no force, in the null space of Bᵀ — redundant rows, or near-redundant ones near a
    singular position — is not an error of the solution), against ``atol + rtol a + κ(ε a +
    δ S_ii)``, RMS over the 2 n_sys terms: ``a = Σ_j |Bᵀ_ij λ_j|`` the size of the constraint
    forces on that DOF, ``S_ii`` the diagonal of the unconditioned iteration matrix (≈ β′ ×
    mass), δ the round-off of the positions: ε L, or, when the node increments are within
    tolerance and stopped shrinking (the largest of this iteration and of the previous one
    within a factor 1/:data:`STALL_RATIO` of each other), the larger of the two: the force
    that this position noise makes through the matrix is round-off too.  With ``parts`` (the
    last-iteration test of ``P_CONVERGENCE`` auto), the larger of the two RMS, node increments
    and forces, each over the n_sys node DOFs, instead of their joint RMS over 2 n_sys: the
    positions are then held to Kynema's own test (a free body's error is Kynema's, not 1/√2 of it).  κ =
    :data:`ROUNDOFF_FACTOR`, L = max(1, largest |coordinate| of ``x``) [m].
    ``fs`` (2, n) scratch; ``vals`` the conditioned matrix of this iteration (c S, Bᵀ)."""
    atol = p[P_ATOL]
    rtol = p[P_RTOL]
    h = p[P_H]
    length = 1.0
    if roundoff:
        for n in range(x.shape[0]):
            for k in range(3):
                length = max(length, abs(x[n, k]))
    floor = ROUNDOFF_FACTOR * EPS * length if roundoff else 0.0
    s = 0.0
    norm = 0.0
    for n in range(node_map.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            w = dx[m + k] / (atol + floor + rtol * abs(h * q_delta[n, k]))
            s += w * w
            norm = max(norm, abs(dx[m + k]))
    if not roundoff:
        for ic in range(crow.shape[0]):
            row = nsys + crow[ic]
            for i in range(n_rows[ic]):
                w = dx[row + i] / (atol + rtol * abs(lam[ic, i]))
                s += w * w
        return math.sqrt(s / dx.shape[0]), norm
    # round-off mode: the round-off δ of the positions
    s_force = 0.0
    delta = EPS * length
    if prev_norm >= 0.0 and s <= nsys and STALL_RATIO * prev_norm <= norm <= prev_norm / STALL_RATIO:
        delta = max(delta, norm, prev_norm)
    # forces of the multiplier increments, f = Bᵀ Δλ, and their scale a
    for i in range(nsys):
        fs[0, i] = 0.0
        fs[1, i] = 0.0
    for ic in range(crow.shape[0]):
        row = nsys + crow[ic]
        for r in range(n_rows[ic]):
            j = row + r
            for k in range(indptr[j], indptr[j + 1]):
                i = indices[k]
                if i < nsys:
                    fs[0, i] += vals[k] * dx[j]
                    fs[1, i] += abs(vals[k] * lam[ic, r])
    c = p[P_CONDITIONER]
    for j in range(nsys):
        diagonal = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            if indices[k] == j:
                diagonal = abs(vals[k]) / c
        a = fs[1, j]
        w = fs[0, j] / (atol + rtol * a + ROUNDOFF_FACTOR * (EPS * a + delta * diagonal))
        s_force += w * w
    if parts:  # each part on its own: the positions as strictly as Kynema's test
        return math.sqrt(max(s, s_force) / nsys), norm
    return math.sqrt((s + s_force) / (2 * nsys)), norm


@njit(inline=True)
def update(p, node_map, node_dofs, crow, n_rows, q_delta, v, vd, q_prev, q, lam, dx, nsys):
    """Apply the increment: Δq += Δx/h (and v += γ′Δx, v̇ += β′Δx if dynamic), q from q_prev, λ += Δλ."""
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
    displacement(h, q_delta, q_prev, q)
    for ic in range(crow.shape[0]):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            lam[ic, i] += dx[row + i]


@njit(inline=True)
def next_time(t, h):
    """The time after a step of ``h`` from ``t`` [s]: ``(k + 1) h`` when ``t`` is ``k h`` exactly
    (the step grid through t = 0: no round-off accumulates, ``t = n h`` after n steps whatever
    the calls), else ``t + h`` (a time set off the grid, or a step size changed mid-run)."""
    k = round(t / h)
    if k * h == t:
        return (k + 1.0) * h
    return t + h


@njit(inline=True)
def algorithmic_acceleration(p, vd, a):
    """After convergence: a += (1 − α_f)/(1 − α_m) v̇."""
    r = (1.0 - p[P_ALPHA_F]) / (1.0 - p[P_ALPHA_M])
    for n in range(a.shape[0]):
        for k in range(6):
            a[n, k] += r * vd[n, k]


@njit(inline=True)
def state_is_finite(q, v, vd, a, lam):
    """True when q, v, vd, a and λ hold no NaN or inf."""
    finite = True
    for arr in (v, vd, a, lam):
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                if not math.isfinite(arr[i, j]):
                    finite = False
    for i in range(q.shape[0]):
        for j in range(7):
            if not math.isfinite(q[i, j]):
                finite = False
    return finite


@njit
def record_row(o, time, step, state, errors, n_iter, row):
    """Record the state into the output ``row`` (width,): the first ``o[ROW_STEP]`` floats of
    the state arena ``state`` (``sf``), which hold the row's recorded fields in the row's order
    (:data:`kynemapy.engine.rows.RECORDED`; ``time``, the (1,) view of ``sf[0]``, first), then
    ``step``, ``n_iter`` and the last Newton error at the offsets ``o`` (``Data.row_offsets``).
    Energy and momentum come later (:func:`kynemapy.engine.invariants.pack_rows`, in the
    run's writer thread).

    One contiguous copy: a copy per field, with twelve array arguments, cost 0.2 µs a heavy-top
    step (6 %); this one costs about 0.01 µs.  The argument list is the one measured best for
    the Newton loop it is called from (heavy top, no output: within 2 % of the copy per field,
    where ``(o, state, step, errors, n_iter, row)`` measured 2 % slower); see
    docs/performance.md."""
    n = o[ROW_STEP]
    row[0] = time[0]
    for k in range(1, n):
        row[k] = state[k]
    row[n] = step[0]
    row[o[ROW_ITERATIONS]] = n_iter
    row[o[ROW_ERROR]] = errors[n_iter - 1] if n_iter > 0 else 0.0


#: what :func:`advance` does (its ``mode``)
MODE_STEPS = 0  #: up to ``n_steps`` time steps
MODE_LINEARIZE = 1  #: only the Newton system at the current state (``vals``, ``b``)
MODE_ACCELERATIONS = 2  #: consistent v̇ and λ at the current q, v (``p``: params.ACCELERATION_COEFFICIENTS)


@njit(inline=True)
def advance(d, p, mode, n_steps, every, rows, max_rows, iterations):
    """The Newton loop: up to ``n_steps`` steps with constant inputs, recording output rows.

    Per step (Kynema's ``SolveStep``): save the state; :func:`predict`; then per Newton
    iteration :func:`update_tangent`, ``begin_system``, ``element_terms``, ``constraint_terms``, ``assemble``,
    :func:`solve`, :func:`convergence_error`, :func:`update`, until the error is <= 1 (``P_CONVERGENCE``
    auto: Kynema's error, and in the last iteration allowed, if that still exceeds 1, the round-off
    error instead: Kynema's result wherever Kynema's test passes); the
    algorithmic acceleration, global position and joint outputs.  A failed step (no
    convergence, NaN, singular matrix) restores the state exactly and stops.  A static step
    (``P_DYNAMIC`` 0: β′ = γ′ = 0) that does not converge at the full load bisects the external
    loads (Kynema's ``Step``): up to ``P_STATIC_RETRIES`` Newton solves, each from the last
    converged partial load, until the full load converges.  ``iterations[i]`` gets the Newton
    iterations of step i (``iterations`` may be shorter than ``n_steps``).  After each converged
    step whose counter is a multiple of ``every`` (> 0), one row is recorded into ``rows``
    (R, width), at most ``max_rows``.

    ``mode`` ``MODE_LINEARIZE`` stops after the first assembly (the reference factorization's
    matrix); ``MODE_ACCELERATIONS`` solves the first linearization for v̇ and λ instead of
    an increment, with 𝒯 = 0 in the element blocks (their matrix is then M) and 𝒯 = I in the
    constraint rows: the KKT system [M Bᵀ; B 0][v̇; λ] = [−r(v̇ = 0); −γ].  Both are this loop's
    first pass, so every phase is compiled once, here.

    Returns ``(steps_done, rows_recorded, status)`` (status: a step status, or for the two
    other modes a ``SOLVE_*`` status).
    """
    # every field of d in one statement (the Data's order, engine.fields.Data): numba reads a
    # field by loading the whole Data (~730 words) from its stack slot, and LLVM's SROA took
    # 4-6 s of the first compilation splitting those loads when each field was read apart;
    # tests/unit/test_structure.py checks this list against Data's fields
    (
        nsys,
        _n_dofs,
        x0,
        gravity,
        node_dofs,
        node_map,
        _constraint_kind,
        cnode,
        n_rows,
        crow,
        cx0,
        axes,
        geom,
        param,
        has_load,
        has_output,
        indptr,
        indices,
        con_row_slots,
        con_col_slots,
        con_k_slots,
        row_offsets,
        kinds,
        tables,
        state,
        time,
        q,
        q_prev,
        q_delta,
        v,
        vd,
        a,
        x,
        lam,
        con_output,
        step,
        f,
        cin,
        vals,
        b,
        dx,
        force_scratch,
        tangent,
        errors,
        phi,
        bb,
        bt,
        kphi,
        load,
        s3,
        s4,
        s33,
        s66,
        _s6,
        q_ground,
        v_ground,
        saved,
        snapshot,
        f_baseline,
        n_iter_slot,
        saved_step,
        solver,
        units,
    ) = d
    h = p[P_H]
    c = p[P_CONDITIONER]
    exact = p[P_EXACT] != 0.0
    with_k = p[P_ASSEMBLE_K] != 0.0
    with_drives = p[P_STIFFNESS] != 0.0  # driven joints' tangents (not in the KKT system of v̇)
    with_bias = p[P_RHS_BIAS] != 0.0
    max_iter = int(p[P_MAX_ITER])
    criterion = p[P_CONVERGENCE]
    static = mode == MODE_STEPS and p[P_DYNAMIC] == 0.0
    attempts = max(int(p[P_STATIC_RETRIES]), 1) if static else 1
    recorded = 0
    n_keep = iterations.shape[0]
    for i in range(n_steps):
        if mode == MODE_STEPS:
            copy_state(state, saved)
            saved_step[0] = step[0]
        if static:
            begin_load_bisection(f, f_baseline, state, snapshot)
        low = 0.0
        load_factor = 1.0
        high = 1.0
        status = NOT_CONVERGED
        n_iter = 0
        total_iter = 0
        for _ in range(attempts):
            if static:
                scale_loads(f, f_baseline, load_factor)
            if mode == MODE_STEPS:
                predict(p, v, vd, a, q_delta, q_prev, q, lam)
            elif mode == MODE_ACCELERATIONS:
                zero_accelerations(vd, lam)
            n_iter = 0
            dx_norm = -1.0  # largest node increment of the previous iteration (none yet)
            status = NOT_CONVERGED
            while n_iter < max_iter:
                if mode == MODE_ACCELERATIONS:
                    set_tangent(tangent, 0.0)
                else:
                    update_tangent(h, q_delta, tangent, s3[0])
                begin_system(node_dofs, node_map, f, vals, b)
                element_terms(units, tables, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b)
                if mode == MODE_ACCELERATIONS:
                    set_tangent(tangent, 1.0)
                constraint_terms(
                    units, kinds, has_load, cnode, cx0, axes, geom, param, cin, q, v, lam, q_ground, v_ground,
                    phi, bb, bt, kphi, load, s3, s4, s33, exact, with_bias, con_output, tangent, p[P_GAMMA_PRIME],
                )  # fmt: skip
                assemble(
                    node_dofs, node_map, cnode, n_rows, crow, con_row_slots, con_col_slots, con_k_slots,
                    has_load, tangent, lam, phi, bb, bt, kphi, load, vals, b, nsys, c, with_k, with_drives,
                )  # fmt: skip
                if mode == MODE_LINEARIZE:
                    return 0, 0, SOLVE_OK
                solved = solve(units, solver, indptr, indices, vals, b, dx, nsys, c)
                if mode == MODE_ACCELERATIONS:
                    if solved == SOLVE_OK:
                        accelerations_from_solution(node_map, node_dofs, crow, n_rows, dx, vd, lam, nsys)
                    return 0, 0, solved
                if solved != SOLVE_OK:
                    status = NEEDS_MEMORY if solved == SOLVE_CAPACITY else SINGULAR
                    break
                # Kynema's test, or the round-off one (P_CONVERGENCE roundoff); with auto, Kynema's
                # test and, in the last iteration allowed if it still fails, the round-off test
                # (a step that fails both reports Kynema's error)
                use_roundoff = criterion == CONVERGENCE_ROUNDOFF
                kynema_err = -1.0
                while True:
                    err, norm = convergence_error(
                        use_roundoff, criterion == CONVERGENCE_AUTO, p, node_map, node_dofs, crow, n_rows, q_delta,
                        lam, dx, nsys, x, indptr, indices, vals, force_scratch, dx_norm,
                    )  # fmt: skip
                    if use_roundoff or criterion != CONVERGENCE_AUTO or err <= 1.0 or n_iter + 1 < max_iter:
                        break
                    kynema_err = err
                    use_roundoff = True
                if kynema_err >= 0.0 and not err <= 1.0:
                    err = kynema_err
                dx_norm = norm
                errors[n_iter] = err
                n_iter += 1
                update(p, node_map, node_dofs, crow, n_rows, q_delta, v, vd, q_prev, q, lam, dx, nsys)
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
                if abs(load_factor - 1.0) < 1e-10:
                    break
                copy_state(state, snapshot)
                low = load_factor
                load_factor = 1.0
            else:
                copy_state(snapshot, state)
                high = load_factor
                load_factor = 0.5 * (low + high)
        if static:
            scale_loads(f, f_baseline, 1.0)
            if status == CONVERGED and abs(load_factor - 1.0) >= 1e-10:
                status = NOT_CONVERGED
        n_iter_slot[0] = n_iter
        if status == CONVERGED:
            algorithmic_acceleration(p, vd, a)
            global_position(x0, q, x)
            # initial = h < 0 (False, but not a literal: one compiled version)
            constraint_outputs(
                units, kinds, has_output, cnode, cx0, axes, geom, q, v, vd, q_ground, v_ground, s3, con_output,
                h < 0.0, has_load, param, cin, lam, phi, bb, bt, kphi, load, tangent,
            )  # fmt: skip
            if not state_is_finite(q, v, vd, a, lam):
                status = NOT_FINITE
        if i < n_keep:
            iterations[i] = total_iter
        if status != CONVERGED:
            copy_state(saved, state)
            step[0] = saved_step[0]
            return i, recorded, status
        time[0] = next_time(time[0], h)
        step[0] += 1
        if every > 0 and step[0] % every == 0:
            record_row(row_offsets, time, step, state, errors, n_iter, rows[recorded])
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
def begin_load_bisection(f, f_baseline, state, snapshot):
    """A static step's start: the loads as given (``f_baseline``), the state as the last
    converged one (``snapshot``)."""
    for n in range(f.shape[0]):
        for k in range(6):
            f_baseline[n, k] = f[n, k]
    copy_state(state, snapshot)


@njit
def scale_loads(f, f_baseline, load):
    """External loads := ``load`` × the given ones (Kynema scales ``f`` only, not gravity)."""
    for n in range(f.shape[0]):
        for k in range(6):
            f[n, k] = f_baseline[n, k] * load


@njit
def zero_accelerations(vd, lam):
    """v̇ := 0 and λ := 0 (the initial accelerations' residual is r(v̇ = 0), and λ is solved for)."""
    for n in range(vd.shape[0]):
        for k in range(6):
            vd[n, k] = 0.0
    for c in range(lam.shape[0]):
        for k in range(6):
            lam[c, k] = 0.0


@njit
def set_tangent(tangent, diagonal):
    """𝒯 := ``diagonal`` · I for every node."""
    for n in range(tangent.shape[0]):
        for i in range(3):
            for j in range(3):
                tangent[n, i, j] = diagonal if i == j else 0.0


@njit
def accelerations_from_solution(node_map, node_dofs, crow, n_rows, dx, vd, lam, nsys):
    """v̇ and λ from the solution ``dx`` of the initial-accelerations system."""
    for n in range(vd.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            vd[n, k] = dx[m + k]
    for c in range(lam.shape[0]):
        row = nsys + crow[c]
        for i in range(n_rows[c]):
            lam[c, i] = dx[row + i]


@njit(inline=True)
def start(d):
    """The state at t = 0 once v̇ is known: a := v̇ (Kynema's start), x := (X + u, r ⊗ r0), and the
    hinge and slider outputs (Kynema's revolute output stays zero until the first step)."""
    a = d.a
    vd = d.vd
    for n in range(a.shape[0]):
        for k in range(6):
            a[n, k] = vd[n, k]
    global_position(d.x0, d.q, d.x)
    constraint_outputs(
        d.units,
        d.kinds,
        d.constraint_has_output,
        d.constraint_node,
        d.constraint_X0,
        d.constraint_axes,
        d.constraint_geometry,
        d.q,
        d.v,
        d.vd,
        d.q_ground,
        d.v_ground,
        d.s3,
        d.constraint_output,
        a.shape[0] >= 0,
        d.constraint_has_load,
        d.constraint_param,
        d.constraint_input,
        d.lam,
        d.con_phi,
        d.con_bb,
        d.con_bt,
        d.con_k,
        d.con_load,
        d.tangent,
    )  # initial = True, but not a literal
