"""The compiled generalized-α step: predictor, Newton loop, updates, rollback.

Order of operations is Kynema-FMB's ``SolveStep`` (see docs/algorithm.md):
predict; λ := 0; then per Newton iteration: tangent operator, element terms,
residual and matrix assembly, constraint terms, conditioned solve, convergence
error (from the increment, with pre-update values), state and λ update; stop
when the error is <= 1.  After convergence: algorithmic acceleration, global
position, revolute outputs.  Unlike Kynema, a step that fails (no convergence,
NaN, singular matrix) restores the state to what it was before the step.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.assembly import (
    add_constraint_forces,
    add_constraint_rows,
    add_external_loads,
    add_node_block,
    add_rotation_block,
    zero_system,
)
from kynemapy.constraints.dispatch import constraint_terms
from kynemapy.constraints.kinds import REVOLUTE_JOINT
from kynemapy.constraints.revolute_joint import revolute_output, revolute_torque
from kynemapy.elements.masses import mass_element_terms
from kynemapy.elements.springs import spring_element_terms
from kynemapy.linalg import SOLVE_OK, dense_solve
from kynemapy.math.quaternion import quat_compose, rotvec_to_quat
from kynemapy.math.so3 import tangent_operator_rot

#: step status codes returned by :func:`step_kernel`
CONVERGED = 0
NOT_CONVERGED = 1
NOT_FINITE = 2
SINGULAR = 3


@njit
def copy_array(src, dst):
    """Element-wise copy of same-shape C-contiguous arrays (any rank)."""
    a = src.ravel()
    b = dst.ravel()
    for i in range(a.shape[0]):
        b[i] = a[i]


@njit(inline=True)
def copy_state(src, dst):
    """Copy every array of State ``src`` into State ``dst``."""
    copy_array(src.q, dst.q)
    copy_array(src.q_prev, dst.q_prev)
    copy_array(src.q_delta, dst.q_delta)
    copy_array(src.v, dst.v)
    copy_array(src.vd, dst.vd)
    copy_array(src.a, dst.a)
    copy_array(src.x, dst.x)
    copy_array(src.lam, dst.lam)
    copy_array(src.constraint_output, dst.constraint_output)
    dst.time[0] = src.time[0]
    dst.step[0] = src.step[0]


@njit
def all_finite(a):
    """True when the C-contiguous array ``a`` holds no NaN or inf."""
    f = a.ravel()
    for i in range(f.shape[0]):
        if not math.isfinite(f[i]):
            return False
    return True


@njit
def next_state(h, alpha_m, alpha_f, beta, gamma, v, vd, a, q_delta):
    """Generalized-α predictor for all nodes and components (writes v, vd, a, q_delta)."""
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


@njit
def displacement(h, q_delta, q_prev, q, s3, s4):
    """``q = q_prev ⊕ h Δq``: ``u = u_prev + h Δu``, ``r = exp(h Δθ) ⊗ r_prev`` (left, spatial)."""
    rv = s3[0]
    dq = s4[0]
    for n in range(q.shape[0]):
        for k in range(3):
            q[n, k] = q_prev[n, k] + h * q_delta[n, k]
        for k in range(3):
            rv[k] = h * q_delta[n, 3 + k]
        rotvec_to_quat(rv, dq)
        quat_compose(dq, q_prev[n, 3:7], q[n, 3:7])


@njit
def global_position(x0, q, x):
    """``x = (X + u, r ⊗ r0)``."""
    for n in range(q.shape[0]):
        for k in range(3):
            x[n, k] = x0[n, k] + q[n, k]
        quat_compose(q[n, 3:7], x0[n, 3:7], x[n, 3:7])


@njit
def update_tangent(h, q_delta, tangent, s3):
    """Rotation block of 𝒯 for every node from the current Δq."""
    psi = s3[0]
    for n in range(q_delta.shape[0]):
        for k in range(3):
            psi[k] = h * q_delta[n, 3 + k]
        tangent_operator_rot(psi, tangent[n])


@njit(inline=True)
def assemble(model, state, inputs, ws, p):
    """Element and constraint terms, scattered into ``ws.A`` and ``ws.b`` (unconditioned residual)."""
    A = ws.A
    b = ws.b
    c = p.conditioner
    exact = p.geometric_stiffness
    node_dofs = model.node_dofs
    node_map = model.node_map
    zero_system(A, b)
    update_tangent(p.h, state.q_delta, ws.tangent, ws.s3)
    add_external_loads(node_dofs, node_map, inputs.f, b)
    # masses
    for e in range(model.n_masses):
        n = model.mass_node[e]
        mass_element_terms(
            model.mass_m_star[e],
            model.x0[n, 3:7],
            state.q[n, 3:7],
            state.v[n],
            state.vd[n],
            ws.tangent[n],
            model.gravity,
            p.beta_prime,
            p.gamma_prime,
            exact,
            ws.s33,
            ws.s3,
            ws.s4,
            ws.s66,
            ws.mass_res[e],
            ws.mass_mat[e],
        )
    for e in range(model.n_masses):
        n = model.mass_node[e]
        m = node_map[n]
        for k in range(6):
            b[m + k] += ws.mass_res[e, k]
        add_node_block(node_map, node_dofs, n, n, c, ws.mass_mat[e], A)
    # springs (Kynema assembles the negative of the true Jacobian)
    sign = -1.0 if exact else 1.0
    for e in range(model.n_springs):
        n1 = model.spring_node[e, 0]
        n2 = model.spring_node[e, 1]
        spring_element_terms(
            model.spring_x0[e],
            state.q[n1, 0:3],
            state.q[n2, 0:3],
            model.spring_k[e],
            model.spring_l_ref[e],
            ws.spring_r[e],
            ws.spring_res[e],
            ws.spring_mat[e],
        )
    for e in range(model.n_springs):
        n1 = model.spring_node[e, 0]
        n2 = model.spring_node[e, 1]
        m1 = node_map[n1]
        m2 = node_map[n2]
        for k in range(3):
            b[m1 + k] += ws.spring_res[e, k]
            b[m2 + k] -= ws.spring_res[e, k]
        blk = ws.spring_mat[e]
        for i in range(3):
            for j in range(3):
                A[m1 + i, m1 + j] += c * (sign * blk[i, j])
                A[m1 + i, m2 + j] += c * (-sign * blk[i, j])
                A[m2 + i, m1 + j] += c * (-sign * blk[i, j])
                A[m2 + i, m2 + j] += c * (sign * blk[i, j])
    # constraints
    nsys = model.n_system_dofs
    for ic in range(model.n_constraints):
        kind = model.constraint_kind[ic]
        nb = model.constraint_node[ic, 0]
        nt = model.constraint_node[ic, 1]
        qb = state.q[nt] if nb < 0 else state.q[nb]
        constraint_terms(
            kind,
            model.constraint_X0[ic],
            model.constraint_axes[ic],
            inputs.constraint_input[ic],
            qb,
            state.q[nt],
            state.lam[ic],
            exact,
            ws.con_phi[ic],
            ws.con_bb[ic],
            ws.con_bt[ic],
            ws.con_k[ic],
            ws.s3,
            ws.s4,
            ws.s33,
        )
    for ic in range(model.n_constraints):
        nb = model.constraint_node[ic, 0]
        nt = model.constraint_node[ic, 1]
        rows = model.constraint_n_rows[ic]
        row = nsys + model.constraint_row[ic]
        if nb >= 0:
            add_constraint_rows(node_map, node_dofs, nb, row, rows, ws.con_bb[ic], ws.tangent[nb], A)
        add_constraint_rows(node_map, node_dofs, nt, row, rows, ws.con_bt[ic], ws.tangent[nt], A)
        if exact:
            if node_dofs[nt] == 6:
                add_rotation_block(node_map, nt, nt, c, ws.con_k[ic, 1, 1], ws.tangent[nt], A)
            if nb >= 0 and node_dofs[nb] == 6:
                add_rotation_block(node_map, nb, nb, c, ws.con_k[ic, 0, 0], ws.tangent[nb], A)
                if node_dofs[nt] == 6:
                    add_rotation_block(node_map, nb, nt, c, ws.con_k[ic, 0, 1], ws.tangent[nt], A)
                    add_rotation_block(node_map, nt, nb, c, ws.con_k[ic, 1, 0], ws.tangent[nb], A)
    for ic in range(model.n_constraints):
        if model.constraint_kind[ic] == REVOLUTE_JOINT:
            nt = model.constraint_node[ic, 1]
            f = ws.con_force[ic]
            revolute_torque(model.constraint_axes[ic], state.q[nt], inputs.constraint_input[ic, 0], f)
            m = node_map[nt]
            for k in range(3):
                b[m + 3 + k] += f[k]
    for ic in range(model.n_constraints):
        nb = model.constraint_node[ic, 0]
        nt = model.constraint_node[ic, 1]
        rows = model.constraint_n_rows[ic]
        if nb >= 0:
            add_constraint_forces(node_map, node_dofs, nb, rows, ws.con_bb[ic], state.lam[ic], b)
        add_constraint_forces(node_map, node_dofs, nt, rows, ws.con_bt[ic], state.lam[ic], b)
        row = nsys + model.constraint_row[ic]
        for i in range(rows):
            b[row + i] = ws.con_phi[ic, i]


@njit(inline=True)
def convergence_error(model, state, dx, p):
    """Weighted RMS of the increment (Arnold & Hante), with pre-update Δq and λ."""
    s = 0.0
    for n in range(model.n_nodes):
        m = model.node_map[n]
        for k in range(model.node_dofs[n]):
            w = dx[m + k] / (p.atol + p.rtol * abs(p.h * state.q_delta[n, k]))
            s += w * w
    nsys = model.n_system_dofs
    for ic in range(model.n_constraints):
        row = nsys + model.constraint_row[ic]
        for i in range(model.constraint_n_rows[ic]):
            w = dx[row + i] / (p.atol + p.rtol * abs(state.lam[ic, i]))
            s += w * w
    return math.sqrt(s / model.n_dofs)


@njit(inline=True)
def update_prediction(model, state, dx, p, ws):
    """Apply the increment: Δq += Δx/h (and v += γ′Δx, v̇ += β′Δx if dynamic), q from q_prev, λ += Δλ."""
    for n in range(model.n_nodes):
        m = model.node_map[n]
        for k in range(model.node_dofs[n]):
            d = dx[m + k]
            state.q_delta[n, k] += d / p.h
            if p.is_dynamic:
                state.v[n, k] += p.gamma_prime * d
                state.vd[n, k] += p.beta_prime * d
    displacement(p.h, state.q_delta, state.q_prev, state.q, ws.s3, ws.s4)
    nsys = model.n_system_dofs
    for ic in range(model.n_constraints):
        row = nsys + model.constraint_row[ic]
        for i in range(model.constraint_n_rows[ic]):
            state.lam[ic, i] += dx[row + i]


@njit(inline=True)
def solve_conditioned(model, ws, p):
    """Condition (system rows × c), negate, solve, uncondition (λ part ÷ c); the result is in ``ws.dx``."""
    nsys = model.n_system_dofs
    n = model.n_dofs
    c = p.conditioner
    for i in range(nsys):
        ws.b[i] *= c
    for i in range(n):
        ws.dx[i] = -ws.b[i]
    status = dense_solve(ws.A, ws.piv, ws.dx)
    for i in range(nsys, n):
        ws.dx[i] /= c
    return status


@njit(inline=True)
def constraint_outputs(model, state, ws):
    """Revolute outputs (azimuth, speed, acceleration) after a converged step."""
    for ic in range(model.n_constraints):
        if model.constraint_kind[ic] == REVOLUTE_JOINT:
            nt = model.constraint_node[ic, 1]
            revolute_output(
                model.constraint_axes[ic], state.q[nt], state.v[nt], state.vd[nt], ws.s3, state.constraint_output[ic]
            )


@njit(inline=True)
def solve_step(model, state, inputs, ws, p):
    """One Newton solve from the predictor; returns ``(status, n_iter)`` (state not restored)."""
    next_state(p.h, p.alpha_m, p.alpha_f, p.beta, p.gamma, state.v, state.vd, state.a, state.q_delta)
    state.q_prev[:] = state.q
    displacement(p.h, state.q_delta, state.q_prev, state.q, ws.s3, ws.s4)
    state.lam[:] = 0.0
    err = 1000.0
    n_iter = 0
    status = NOT_CONVERGED
    while n_iter < p.max_iter:
        assemble(model, state, inputs, ws, p)
        if solve_conditioned(model, ws, p) != SOLVE_OK:
            status = SINGULAR
            break
        err = convergence_error(model, state, ws.dx, p)
        ws.errors[n_iter] = err
        n_iter += 1
        update_prediction(model, state, ws.dx, p, ws)
        if not math.isfinite(err):
            status = NOT_FINITE
            break
        if err <= 1.0:
            status = CONVERGED
            break
    ws.n_iter[0] = n_iter
    if status != CONVERGED:
        return status, n_iter
    r = (1.0 - p.alpha_f) / (1.0 - p.alpha_m)
    for n in range(model.n_nodes):
        for k in range(6):
            state.a[n, k] += r * state.vd[n, k]
    global_position(model.x0, state.q, state.x)
    constraint_outputs(model, state, ws)
    return CONVERGED, n_iter


@njit(inline=True)
def state_is_finite(state):
    """True when q, v, vd, a and λ hold no NaN or inf."""
    return (
        all_finite(state.q)
        and all_finite(state.v)
        and all_finite(state.vd)
        and all_finite(state.a)
        and all_finite(state.lam)
    )


@njit(inline=True)
def step_kernel(model, state, inputs, ws, p):
    """Advance one step of size ``p.h``; on failure the state is restored exactly.

    Returns ``(status, n_iter)``; the Newton errors are in ``ws.errors[:n_iter]``.
    The ``time`` and ``step`` counters advance only on success.
    """
    copy_state(state, ws.saved)
    if p.is_dynamic:
        status, n_iter = solve_step(model, state, inputs, ws, p)
    else:
        status, n_iter = static_step(model, state, inputs, ws, p)
    if status == CONVERGED and not state_is_finite(state):
        status = NOT_FINITE
    if status != CONVERGED:
        copy_state(ws.saved, state)
        return status, n_iter
    state.time[0] += p.h
    state.step[0] += 1
    return status, n_iter


@njit(inline=True)
def static_step(model, state, inputs, ws, p):
    """Static step (β′ = γ′ = 0): one Newton solve at the full load.

    Kynema's load bisection is not implemented yet; a failed static step is
    reported and rolled back like a dynamic one.
    """
    status, n_iter = solve_step(model, state, inputs, ws, p)
    return status, n_iter


@njit
def advance_kernel(model, state, inputs, ws, p, n_steps, iterations):
    """Up to ``n_steps`` steps with constant inputs; ``iterations[i]`` Newton iterations of step i.

    Returns ``(steps_done, status)``; stops at the first failed step (state restored).
    """
    for i in range(n_steps):
        status, n_iter = step_kernel(model, state, inputs, ws, p)
        iterations[i] = n_iter
        if status != CONVERGED:
            return i, status
    return n_steps, CONVERGED
