"""The generalized-α step as named phases over the packed data (Kynema-FMB's ``SolveStep``).

Each phase is a compiled kernel of ``(d, p)``: ``d`` the :class:`~kynemapy.engine.fields.Data`
arenas, ``p`` the coefficient vector (:mod:`kynemapy.engine.params`)::

    predict                       generalized-α predictor, q from q_prev, λ := 0 (or the last step's)
    repeat (Newton iteration):
        update_tangent            rotation block of 𝒯 per node, from h Δq
        begin_system              zeros, external loads
        element_phase             each element's residual and matrix, added into the system
        constraint_phase          Φ, B, K^Φ, input loads of every constraint
        assembly_phase            constraint rows, columns and forces into the system
        solve                     condition, solve, uncondition
        convergence_error         weighted RMS of the increment (pre-update values)
        update                    Δq, v, v̇, q, λ from the increment
    until the error is <= 1
    finish                        algorithmic acceleration, global position, joint outputs

:func:`kynemapy.engine.entry.run_task_at` runs these phases in its Newton loop, with the
rollback of a failed step (Kynema leaves the state as it was at the failure; kynemapy restores
it exactly), many steps per call and the output rows: ``Simulation.step()`` is a call of one
step, ``advance`` of many; one compiled code path.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.engine.constraints.phase import constraint_outputs
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
    P_PREDICTOR,
    P_RTOL,
)
from kynemapy.engine.rows import ROW_ERROR, ROW_ITERATIONS, ROW_STEP
from kynemapy.engine.solvers import solve_system
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
#: the model's two-body joints got a drive (a servo given between steps) while the simulation
#: holds the joint unit without drives: nothing was done, the caller fills the full unit
#: (:func:`kynemapy.engine.units.fill_missing`) and repeats the call
NEEDS_UNIT = 6
#: the statuses that ask Python for something and repeat the step (no step was lost)
RESUMABLE = (NEEDS_MEMORY, NEEDS_UNIT)


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
    ``q := q_prev ⊕ h Δq``.  ``P_PREDICTOR`` Kynema's (0): v̇ := 0, λ := 0; last (1): v̇ and λ
    kept from the last step, a, v and Δq from that v̇ (``StepParameters.predictor``)."""
    h = p[P_H]
    alpha_m = p[P_ALPHA_M]
    alpha_f = p[P_ALPHA_F]
    beta = p[P_BETA]
    gamma = p[P_GAMMA]
    last = p[P_PREDICTOR] != 0.0
    r = (1.0 - alpha_f) / (1.0 - alpha_m)
    for n in range(v.shape[0]):
        for k in range(6):
            vd_p = vd[n, k]
            a_p = a[n, k]
            v_p = v[n, k]
            a_new = (alpha_f * vd_p - alpha_m * a_p) / (1.0 - alpha_m)
            a[n, k] = a_new
            if last:  # v̇ := v̇ of the last step: a_{n+1} = a_new + r v̇ (a_new alone is stored)
                a_full = a_new + r * vd_p
                v[n, k] = v_p + h * (1.0 - gamma) * a_p + gamma * h * a_full
                q_delta[n, k] = v_p + (0.5 - beta) * h * a_p + beta * h * a_full
            else:
                vd[n, k] = 0.0
                v[n, k] = v_p + h * (1.0 - gamma) * a_p + gamma * h * a_new
                q_delta[n, k] = v_p + (0.5 - beta) * h * a_p + beta * h * a_new
    for n in range(q.shape[0]):
        for k in range(7):
            q_prev[n, k] = q[n, k]
    displacement(h, q_delta, q_prev, q)
    if not last:
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
def start(a, vd, x0, q, x, data_at, data_ref):
    """The state at t = 0 once v̇ is known: a := v̇ (Kynema's start), x := (X + u, r ⊗ r0), and the
    hinge and slider outputs (Kynema's revolute output stays zero until the first step) of the
    Data at ``data_at`` (``data_ref`` its type); its fields by the Newton loop's names
    (:func:`kynemapy.engine.entry.run_task_at`)."""
    for n in range(a.shape[0]):
        for k in range(6):
            a[n, k] = vd[n, k]
    global_position(x0, q, x)
    constraint_outputs(data_at, data_ref, a.shape[0] >= 0)  # initial = True, but not a literal (one compiled version)
