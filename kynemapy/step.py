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
    add_stiffness_block,
    zero_system,
)
from kynemapy.constraints.body_joints import body_joint_output, input_load
from kynemapy.constraints.dispatch import constraint_terms
from kynemapy.constraints.kinds import HINGE_JOINT, REVOLUTE_JOINT, SLIDER_JOINT
from kynemapy.constraints.revolute_joint import revolute_output, revolute_torque
from kynemapy.elements.masses import mass_element_terms
from kynemapy.elements.springs import spring_element_terms
from kynemapy.linalg import SOLVE_CAPACITY, SOLVE_OK, solve_system
from kynemapy.math.quaternion import quat_exp, quat_product
from kynemapy.math.so3 import tangent_operator_rot
from kynemapy.sparse_lu import lu_factor

#: step status codes returned by :func:`step_kernel`
CONVERGED = 0
NOT_CONVERGED = 1
NOT_FINITE = 2
SINGULAR = 3
#: the sparse LU needs larger arrays: the caller grows them and repeats the step
NEEDS_MEMORY = 4


@njit
def copy_array(src, dst):
    """Element-wise copy of same-shape 2-D arrays."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(inline=True)
def copy_state(src, dst):
    """Copy every array of State ``src`` into State ``dst``.

    One compiled loop over the (source, destination) pairs instead of nine calls
    (the pairs form a homogeneous tuple: every State array is a C-contiguous 2-D
    float64 array, as :func:`kynemapy.state.new_state` makes them).
    """
    pairs = (
        (src.q, dst.q),
        (src.q_prev, dst.q_prev),
        (src.q_delta, dst.q_delta),
        (src.v, dst.v),
        (src.vd, dst.vd),
        (src.a, dst.a),
        (src.x, dst.x),
        (src.lam, dst.lam),
        (src.constraint_output, dst.constraint_output),
    )
    for pair in pairs:
        a = pair[0]
        b = pair[1]
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                b[i, j] = a[i, j]
    dst.time[0] = src.time[0]
    dst.step[0] = src.step[0]


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
def displacement(h, q_delta, q_prev, q):
    """``q = q_prev ⊕ h Δq``: ``u = u_prev + h Δu``, ``r = exp(h Δθ) ⊗ r_prev`` (left, spatial).

    Quaternions are held in locals (:func:`quat_exp`, :func:`quat_product`).
    """
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
    """Element and constraint terms, scattered into ``ws.vals`` (the matrix, through the
    slots of ``ws.scatter``) and ``ws.b`` (unconditioned residual).

    Every tuple field is read into a local once (cheaper loops in numba).
    """
    vals = ws.vals
    sc = ws.scatter
    b = ws.b
    c = p.conditioner
    exact = p.geometric_stiffness
    node_dofs = model.node_dofs
    node_map = model.node_map
    x0 = model.x0
    gravity = model.gravity
    q = state.q
    v = state.v
    vd = state.vd
    lam = state.lam
    tangent = ws.tangent
    s3 = ws.s3
    s4 = ws.s4
    s33 = ws.s33
    s66 = ws.s66
    zero_system(vals, b)
    update_tangent(p.h, state.q_delta, tangent, s3)
    add_external_loads(node_dofs, node_map, inputs.f, b)
    # masses
    mass_node = model.mass_node
    mass_m_star = model.mass_m_star
    mass_res = ws.mass_res
    mass_mat = ws.mass_mat
    mass_slots = sc.mass
    beta_prime = p.beta_prime
    gamma_prime = p.gamma_prime
    for e in range(model.n_masses):
        n = mass_node[e]
        res = mass_res[e]
        mat = mass_mat[e]
        mass_element_terms(
            mass_m_star[e],
            x0[n, 3:7],
            q[n, 3:7],
            v[n],
            vd[n],
            tangent[n],
            gravity,
            beta_prime,
            gamma_prime,
            exact,
            s33,
            s3,
            s4,
            s66,
            res,
            mat,
        )
        m = node_map[n]
        for k in range(6):
            b[m + k] += res[k]
        add_node_block(mass_slots[e], node_dofs[n], node_dofs[n], c, mat, vals)
    # springs (Kynema assembles the negative of the true Jacobian)
    sign = -1.0 if exact else 1.0
    spring_node = model.spring_node
    spring_x0 = model.spring_x0
    spring_k = model.spring_k
    spring_l_ref = model.spring_l_ref
    spring_r = ws.spring_r
    spring_res = ws.spring_res
    spring_mat = ws.spring_mat
    spring_slots = sc.spring
    for e in range(model.n_springs):
        n1 = spring_node[e, 0]
        n2 = spring_node[e, 1]
        res = spring_res[e]
        blk = spring_mat[e]
        spring_element_terms(spring_x0[e], q[n1, 0:3], q[n2, 0:3], spring_k[e], spring_l_ref[e], spring_r[e], res, blk)
        m1 = node_map[n1]
        m2 = node_map[n2]
        for k in range(3):
            b[m1 + k] += res[k]
            b[m2 + k] -= res[k]
        ss = spring_slots[e]
        for i in range(3):
            for j in range(3):
                vals[ss[0, 0, i, j]] += c * (sign * blk[i, j])
                vals[ss[0, 1, i, j]] += c * (-sign * blk[i, j])
                vals[ss[1, 0, i, j]] += c * (-sign * blk[i, j])
                vals[ss[1, 1, i, j]] += c * (sign * blk[i, j])
    # constraints
    nsys = model.n_system_dofs
    kinds = model.constraint_kind
    cnode = model.constraint_node
    n_rows = model.constraint_n_rows
    crow = model.constraint_row
    cX0 = model.constraint_X0
    caxes = model.constraint_axes
    cgeom = model.constraint_geometry
    cparam = model.constraint_param
    cinput = inputs.constraint_input
    phi = ws.con_phi
    bb = ws.con_bb
    bt = ws.con_bt
    kphi = ws.con_k
    q_ground = ws.q_ground
    cforce = ws.con_force
    row_slots = sc.con_row
    col_slots = sc.con_col
    k_slots = sc.con_k
    nc = model.n_constraints
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        qb = q_ground if nb < 0 else q[nb]
        constraint_terms(
            kinds[ic],
            cX0[ic],
            caxes[ic],
            cgeom[ic],
            cparam[ic],
            cinput[ic],
            qb,
            q[nt],
            lam[ic],
            exact,
            phi[ic],
            bb[ic],
            bt[ic],
            kphi[ic],
            s3,
            s4,
            s33,
        )
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        rows = n_rows[ic]
        ndt = node_dofs[nt]
        if nb >= 0:
            add_constraint_rows(row_slots[ic, 0], col_slots[ic, 0], node_dofs[nb], rows, bb[ic], tangent[nb], vals)
        add_constraint_rows(row_slots[ic, 1], col_slots[ic, 1], ndt, rows, bt[ic], tangent[nt], vals)
        if exact:
            ks = k_slots[ic]
            add_stiffness_block(ks[1, 1], ndt, ndt, c, kphi[ic, 1, 1], tangent[nt], vals)
            if nb >= 0:
                ndb = node_dofs[nb]
                add_stiffness_block(ks[0, 0], ndb, ndb, c, kphi[ic, 0, 0], tangent[nb], vals)
                add_stiffness_block(ks[0, 1], ndb, ndt, c, kphi[ic, 0, 1], tangent[nt], vals)
                add_stiffness_block(ks[1, 0], ndt, ndb, c, kphi[ic, 1, 0], tangent[nb], vals)
    for ic in range(nc):
        if kinds[ic] == REVOLUTE_JOINT:
            nt = cnode[ic, 1]
            f = cforce[ic]
            revolute_torque(caxes[ic], q[nt], cinput[ic, 0], f)
            m = node_map[nt]
            for k in range(3):
                b[m + 3 + k] += f[k]
        elif kinds[ic] == HINGE_JOINT or kinds[ic] == SLIDER_JOINT:
            # hinge torque / slider force on both sides (residual = minus the applied load)
            nb = cnode[ic, 0]
            nt = cnode[ic, 1]
            load = ws.s6
            input_load(kinds[ic], cX0[ic], cgeom[ic], cinput[ic, 0], q_ground if nb < 0 else q[nb], q[nt], load)
            for side in range(2):
                n = nt if side == 1 else nb
                if n >= 0:
                    m = node_map[n]
                    for k in range(node_dofs[n]):
                        b[m + k] += load[side, k]
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        rows = n_rows[ic]
        lam_c = lam[ic]
        if nb >= 0:
            add_constraint_forces(node_map, node_dofs, nb, rows, bb[ic], lam_c, b)
        add_constraint_forces(node_map, node_dofs, nt, rows, bt[ic], lam_c, b)
        row = nsys + crow[ic]
        for i in range(rows):
            b[row + i] = phi[ic, i]


@njit(inline=True)
def convergence_error(model, state, dx, p):
    """Weighted RMS of the increment (Arnold & Hante), with pre-update Δq and λ."""
    node_map = model.node_map
    node_dofs = model.node_dofs
    q_delta = state.q_delta
    lam = state.lam
    crow = model.constraint_row
    n_rows = model.constraint_n_rows
    atol = p.atol
    rtol = p.rtol
    h = p.h
    s = 0.0
    for n in range(model.n_nodes):
        m = node_map[n]
        for k in range(node_dofs[n]):
            w = dx[m + k] / (atol + rtol * abs(h * q_delta[n, k]))
            s += w * w
    nsys = model.n_system_dofs
    for ic in range(model.n_constraints):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            w = dx[row + i] / (atol + rtol * abs(lam[ic, i]))
            s += w * w
    return math.sqrt(s / model.n_dofs)


@njit(inline=True)
def update_prediction(model, state, dx, p, ws):
    """Apply the increment: Δq += Δx/h (and v += γ′Δx, v̇ += β′Δx if dynamic), q from q_prev, λ += Δλ."""
    node_map = model.node_map
    node_dofs = model.node_dofs
    q_delta = state.q_delta
    v = state.v
    vd = state.vd
    lam = state.lam
    crow = model.constraint_row
    n_rows = model.constraint_n_rows
    h = p.h
    gamma_prime = p.gamma_prime
    beta_prime = p.beta_prime
    dynamic = p.is_dynamic
    for n in range(model.n_nodes):
        m = node_map[n]
        for k in range(node_dofs[n]):
            d = dx[m + k]
            q_delta[n, k] += d / h
            if dynamic:
                v[n, k] += gamma_prime * d
                vd[n, k] += beta_prime * d
    displacement(h, q_delta, state.q_prev, state.q)
    nsys = model.n_system_dofs
    for ic in range(model.n_constraints):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            lam[ic, i] += dx[row + i]


@njit(inline=True)
def solve_conditioned(model, ws, p):
    """Condition (system rows × c), negate, solve, uncondition (λ part ÷ c); the result is in ``ws.dx``."""
    nsys = model.n_system_dofs
    n = model.n_dofs
    c = p.conditioner
    b = ws.b
    dx = ws.dx
    for i in range(nsys):
        b[i] *= c
    for i in range(n):
        dx[i] = -b[i]
    status = solve_system(ws, dx)
    for i in range(nsys, n):
        dx[i] /= c
    return status


@njit(inline=True)
def joint_output(model, state, ws, ic):
    """Hinge (angle, rate, acceleration) or slider (displacement, rate, acceleration) of constraint ``ic``."""
    nb = model.constraint_node[ic, 0]
    nt = model.constraint_node[ic, 1]
    ground = nb < 0
    body_joint_output(
        model.constraint_kind[ic],
        model.constraint_X0[ic],
        model.constraint_geometry[ic],
        ws.q_ground if ground else state.q[nb],
        state.q[nt],
        ws.v_ground if ground else state.v[nb],
        state.v[nt],
        ws.v_ground if ground else state.vd[nb],
        state.vd[nt],
        state.constraint_output[ic],
    )


@njit(inline=True)
def constraint_outputs(model, state, ws):
    """Revolute outputs (azimuth, speed, acceleration) after a converged step."""
    kinds = model.constraint_kind
    cnode = model.constraint_node
    for ic in range(model.n_constraints):
        if kinds[ic] == REVOLUTE_JOINT:
            nt = cnode[ic, 1]
            revolute_output(
                model.constraint_axes[ic], state.q[nt], state.v[nt], state.vd[nt], ws.s3, state.constraint_output[ic]
            )
        elif kinds[ic] == HINGE_JOINT or kinds[ic] == SLIDER_JOINT:
            joint_output(model, state, ws, ic)


@njit(inline=True)
def solve_step(model, state, inputs, ws, p):
    """One Newton solve from the predictor; returns ``(status, n_iter)`` (state not restored)."""
    next_state(p.h, p.alpha_m, p.alpha_f, p.beta, p.gamma, state.v, state.vd, state.a, state.q_delta)
    copy_array(state.q, state.q_prev)
    displacement(p.h, state.q_delta, state.q_prev, state.q)
    lam = state.lam
    for i in range(lam.shape[0]):
        for j in range(6):
            lam[i, j] = 0.0
    err = 1000.0
    n_iter = 0
    status = NOT_CONVERGED
    while n_iter < p.max_iter:
        assemble(model, state, inputs, ws, p)
        solved = solve_conditioned(model, ws, p)
        if solved != SOLVE_OK:
            status = NEEDS_MEMORY if solved == SOLVE_CAPACITY else SINGULAR
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
    a = state.a
    vd = state.vd
    for n in range(model.n_nodes):
        for k in range(6):
            a[n, k] += r * vd[n, k]
    global_position(model.x0, state.q, state.x)
    constraint_outputs(model, state, ws)
    return CONVERGED, n_iter


@njit(inline=True)
def state_is_finite(state):
    """True when q, v, vd, a and λ hold no NaN or inf (one loop over the five arrays)."""
    finite = True
    for arr in (state.q, state.v, state.vd, state.a, state.lam):
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                if not math.isfinite(arr[i, j]):
                    finite = False
    return finite


@njit(inline=True)
def step_kernel(model, state, inputs, ws, p):
    """Advance one step of size ``p.h``; on failure the state is restored exactly.

    A static step (``p.is_dynamic`` False, β′ = γ′ = 0) is one Newton solve at the
    full load; Kynema's load bisection for statics is not implemented.

    Returns ``(status, n_iter)``; the Newton errors are in ``ws.errors[:n_iter]``.
    The ``time`` and ``step`` counters advance only on success.
    """
    copy_state(state, ws.saved)
    status, n_iter = solve_step(model, state, inputs, ws, p)
    if status == CONVERGED and not state_is_finite(state):
        status = NOT_FINITE
    if status != CONVERGED:
        copy_state(ws.saved, state)
        return status, n_iter
    state.time[0] += p.h
    state.step[0] += 1
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


@njit
def reference_factorization(model, state, inputs, ws, p):
    """Factor ``ws.lu`` (sparse solver) from the Newton matrix at the current state.

    Called once, at the model's initial state, when a simulation is created: every
    later solve reuses this pivot sequence (see :func:`kynemapy.linalg.solve_system`).
    Returns the :mod:`kynemapy.sparse_lu` status.
    """
    assemble(model, state, inputs, ws, p)
    return lu_factor(ws.lu, ws.vals)
