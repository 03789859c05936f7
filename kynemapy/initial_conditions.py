"""Consistent initial accelerations and multipliers at t = 0.

Solves the constrained equations of motion at the initial position and velocity,

    [ M   Bᵀ ] [ v̇ ]   [ −r(v̇ = 0) ]
    [ B   0  ] [ λ  ] = [ −γ        ]

where ``r`` is the system residual (inertial minus gravity forces, springs,
external loads, revolute torques) and ``γ = Ḃ v`` the velocity-dependent part of
the constraint acceleration Φ̈ = B v̇ + γ.  Prescribed motions are taken as
unaccelerated at t = 0 (γ = 0 for one-node constraints, and control angles and
torques as given).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.assembly import add_constraint_rows, add_external_loads, add_node_block, zero_system
from kynemapy.constraints.body_joints import body_joint_bias, input_load
from kynemapy.constraints.dispatch import constraint_terms
from kynemapy.constraints.kinds import (
    BALL_JOINT,
    HINGE_JOINT,
    REVOLUTE_JOINT,
    RIGID_JOINT,
    RIGID_JOINT_6DOF_TO_3DOF,
    ROTATION_CONTROL,
    SLIDER_JOINT,
)
from kynemapy.constraints.revolute_joint import revolute_torque
from kynemapy.elements.masses import mass_element_terms
from kynemapy.elements.springs import spring_element_terms
from kynemapy.linalg import SOLVE_OK, solve_system
from kynemapy.math.quaternion import quat_compose, quat_inverse, quat_to_matrix, rotate_vector, rotvec_to_quat
from kynemapy.math.so3 import cross


@njit
def _omega_tilde(w, out):
    out[0, 0] = 0.0
    out[0, 1] = -w[2]
    out[0, 2] = w[1]
    out[1, 0] = w[2]
    out[1, 1] = 0.0
    out[1, 2] = -w[0]
    out[2, 0] = -w[1]
    out[2, 1] = w[0]
    out[2, 2] = 0.0


@njit
def constraint_bias(kind, X0, axes, geom, param, inputs, qb, qt, vb, vt, s3, s4, s33, gamma):
    """Velocity part γ (6,) of Φ̈ for a two-node constraint (zero for one-node kinds).

    Two-body joints (``geom``, ``param``: their geometry) take ``qb``, ``vb`` of the ground
    (identity, zero) when their base is the ground.
    """
    if kind >= BALL_JOINT:
        body_joint_bias(kind, X0, geom, param, qb, qt, vb, vt, gamma)
        return
    for i in range(6):
        gamma[i] = 0.0
    if kind != RIGID_JOINT and kind != RIGID_JOINT_6DOF_TO_3DOF and kind != ROTATION_CONTROL and kind != REVOLUTE_JOINT:
        return
    wb = vb[3:6]
    wt = vt[3:6]
    r = s3[0]
    t1 = s3[1]
    t2 = s3[2]
    rotate_vector(qb[3:7], X0, r)
    cross(wb, r, t1)
    cross(wb, t1, t2)
    for i in range(3):
        gamma[i] = -t2[i]
    if kind == REVOLUTE_JOINT:
        x = s3[3]
        y = s3[4]
        z = s3[5]
        rotate_vector(qb[3:7], axes[0], x)
        rotate_vector(qt[3:7], axes[1], y)
        rotate_vector(qt[3:7], axes[2], z)
        cross(wb, x, t1)  # ẋ
        cross(wb, t1, t2)  # ẍ (velocity part)
        for row in range(2):
            w = z if row == 0 else y
            a = s3[6]
            bvec = s3[7]
            cross(wt, w, a)  # ẇ
            cross(wt, a, bvec)  # ẅ (velocity part)
            val = 0.0
            for i in range(3):
                val += bvec[i] * x[i] + 2.0 * a[i] * t1[i] + w[i] * t2[i]
            gamma[3 + row] = val
        return
    if kind == RIGID_JOINT_6DOF_TO_3DOF:
        return
    # C = R(r_t ⊗ r_c⁻¹ ⊗ r_b⁻¹); γ = axial(ω_t~ Ċ − Ċ ω_b~), Ċ = ω_t~ C − C ω_b~
    rb_inv = s4[0]
    tmp = s4[1]
    tmp2 = s4[2]
    quat_inverse(qb[3:7], rb_inv)
    if kind == ROTATION_CONTROL:
        rv = s3[1]
        for i in range(3):
            rv[i] = axes[0, i] * inputs[0]
        rotvec_to_quat(rv, s4[3])
        quat_inverse(s4[3], s4[4])
        quat_compose(qt[3:7], s4[4], tmp2)
        quat_compose(tmp2, rb_inv, tmp)
    else:
        quat_compose(qt[3:7], rb_inv, tmp)
    c = s33[0]
    wtt = s33[1]
    wbt = s33[2]
    cd = s33[3]
    dd = s33[4]
    quat_to_matrix(tmp, c)
    _omega_tilde(wt, wtt)
    _omega_tilde(wb, wbt)
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += wtt[i, k] * c[k, j] - c[i, k] * wbt[k, j]
            cd[i, j] = s
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += wtt[i, k] * cd[k, j] - cd[i, k] * wbt[k, j]
            dd[i, j] = s
    gamma[3] = 0.5 * (dd[2, 1] - dd[1, 2])
    gamma[4] = 0.5 * (dd[0, 2] - dd[2, 0])
    gamma[5] = 0.5 * (dd[1, 0] - dd[0, 1])


@njit
def consistent_accelerations(model, state, inputs, ws):
    """Fill ``state.vd`` and ``state.lam`` with the solution at the current q, v; returns a solve status."""
    vals = ws.vals
    sc = ws.scatter
    b = ws.b
    node_dofs = model.node_dofs
    node_map = model.node_map
    zero_system(vals, b)
    for n in range(model.n_nodes):
        for i in range(3):
            for j in range(3):
                ws.tangent[n, i, j] = 0.0
    zero6 = ws.s6[0]
    for k in range(6):
        zero6[k] = 0.0
    add_external_loads(node_dofs, node_map, inputs.f, b)
    for e in range(model.n_masses):
        n = model.mass_node[e]
        mass_element_terms(
            model.mass_m_star[e],
            model.x0[n, 3:7],
            state.q[n, 3:7],
            state.v[n],
            zero6,
            ws.tangent[n],
            model.gravity,
            1.0,
            0.0,
            False,
            ws.s33,
            ws.s3,
            ws.s4,
            ws.s66,
            ws.mass_res[e],
            ws.mass_mat[e],
        )
        m = node_map[n]
        for k in range(6):
            b[m + k] += ws.mass_res[e, k]
        add_node_block(sc.mass[e], node_dofs[n], node_dofs[n], 1.0, ws.mass_mat[e], vals)
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
        for k in range(3):
            b[node_map[n1] + k] += ws.spring_res[e, k]
            b[node_map[n2] + k] -= ws.spring_res[e, k]
    for n in range(model.n_nodes):
        for i in range(3):
            ws.tangent[n, i, i] = 1.0
    nsys = model.n_system_dofs
    gamma = ws.s6[1]
    for ic in range(model.n_constraints):
        kind = model.constraint_kind[ic]
        nb = model.constraint_node[ic, 0]
        nt = model.constraint_node[ic, 1]
        qb = ws.q_ground if nb < 0 else state.q[nb]
        vb = ws.v_ground if nb < 0 else state.v[nb]
        constraint_terms(
            kind,
            model.constraint_X0[ic],
            model.constraint_axes[ic],
            model.constraint_geometry[ic],
            model.constraint_param[ic],
            inputs.constraint_input[ic],
            qb,
            state.q[nt],
            state.lam[ic],
            True,
            ws.con_phi[ic],
            ws.con_bb[ic],
            ws.con_bt[ic],
            ws.con_k[ic],
            ws.s3,
            ws.s4,
            ws.s33,
        )
        if kind == REVOLUTE_JOINT:
            f = ws.con_force[ic]
            revolute_torque(model.constraint_axes[ic], state.q[nt], inputs.constraint_input[ic, 0], f)
            for k in range(3):
                b[node_map[nt] + 3 + k] += f[k]
        elif kind == HINGE_JOINT or kind == SLIDER_JOINT:
            load = ws.s6
            input_load(
                kind,
                model.constraint_X0[ic],
                model.constraint_geometry[ic],
                inputs.constraint_input[ic, 0],
                qb,
                state.q[nt],
                load,
            )
            for side in range(2):
                n = nt if side == 1 else nb
                if n >= 0:
                    for k in range(node_dofs[n]):
                        b[node_map[n] + k] += load[side, k]
        rows = model.constraint_n_rows[ic]
        row = nsys + model.constraint_row[ic]
        if nb >= 0:
            add_constraint_rows(
                sc.con_row[ic, 0], sc.con_col[ic, 0], node_dofs[nb], rows, ws.con_bb[ic], ws.tangent[nb], vals
            )
        add_constraint_rows(
            sc.con_row[ic, 1], sc.con_col[ic, 1], node_dofs[nt], rows, ws.con_bt[ic], ws.tangent[nt], vals
        )
        constraint_bias(
            kind,
            model.constraint_X0[ic],
            model.constraint_axes[ic],
            model.constraint_geometry[ic],
            model.constraint_param[ic],
            inputs.constraint_input[ic],
            qb,
            state.q[nt],
            vb,
            state.v[nt],
            ws.s3,
            ws.s4,
            ws.s33,
            gamma,
        )
        for i in range(rows):
            b[row + i] = gamma[i]
    for i in range(model.n_dofs):
        ws.dx[i] = -b[i]
    status = solve_system(ws, ws.dx)
    if status != SOLVE_OK:
        return status
    for n in range(model.n_nodes):
        m = node_map[n]
        for k in range(6):
            state.vd[n, k] = ws.dx[m + k] if k < node_dofs[n] else 0.0
    for ic in range(model.n_constraints):
        row = nsys + model.constraint_row[ic]
        for i in range(6):
            state.lam[ic, i] = ws.dx[row + i] if i < model.constraint_n_rows[ic] else 0.0
    return SOLVE_OK
