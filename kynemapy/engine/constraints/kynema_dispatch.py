"""Kynema's eight constraint kinds, one constraint at a time: the branches on the kind code that
the engine's constraint phase (:mod:`.phase`) compiles for every model.

:func:`evaluate_kynema` (Φ, gradients, K^Φ), :func:`bias_kynema` (velocity part of Φ̈),
:func:`input_load_kynema` (the revolute joint's brake torque) and :func:`output_kynema` (its
azimuth, speed, acceleration).  :mod:`.dispatch` adds the two-body joints for the callers that
take every kind; the two-body joint unit (:mod:`.body_phase`) is the phases' own way to them,
so a model without two-body joints neither compiles nor imports their kernels.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.boundary_conditions import boundary_condition
from kynemapy.engine.constraints.primitives import I1, I3, add_skew
from kynemapy.engine.constraints.revolute_joint import revolute_joint, revolute_output, revolute_torque
from kynemapy.engine.constraints.rigid_joint import rigid_joint
from kynemapy.math.quaternion import quat_compose, quat_inverse, quat_to_matrix, rot, rotate_vector, rotvec_to_quat
from kynemapy.math.so3 import cross, tilde
from kynemapy.model.kinds import (
    FIXED_BC,
    FIXED_BC_3DOF,
    PRESCRIBED_BC,
    PRESCRIBED_BC_3DOF,
    REVOLUTE_JOINT,
    RIGID_JOINT,
    RIGID_JOINT_6DOF_TO_3DOF,
    ROTATION_CONTROL,
)


@njit(inline=True)
def clear(phi, bb, bt, k, with_k):
    """Φ, B_b, B_t := 0 (and K^Φ with ``with_k``)."""
    for i in range(6):
        phi[i] = 0.0
        for j in range(6):
            bb[i, j] = 0.0
            bt[i, j] = 0.0
    if with_k:
        clear_k(k)


@njit(inline=True)
def clear_k(k):
    """K^Φ (2, 2, 6, 6) := 0 (also the two-body joint unit's, for a joint whose K^Φ it skips)."""
    for a in range(2):
        for b in range(2):
            for i in range(6):
                for j in range(6):
                    k[a, b, i, j] = 0.0


@njit(inline=True)
def evaluate_kynema(kind, X0, axes, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k, s3, s4, s33):
    """:func:`evaluate` for Kynema's eight kinds (what a model without two-body joints compiles)."""
    clear(phi, bb, bt, k, with_k)
    k_rot = k[:, :, 3:6, 3:6]
    one_node = kind == FIXED_BC or kind == FIXED_BC_3DOF or kind == PRESCRIBED_BC or kind == PRESCRIBED_BC_3DOF
    if one_node:
        prescribed = kind == PRESCRIBED_BC or kind == PRESCRIBED_BC_3DOF
        six_dof = kind == FIXED_BC or kind == PRESCRIBED_BC
        boundary_condition(X0, inputs, qt, lam, prescribed, six_dof, with_k, not one_node, phi, bt, k_rot, s3, s4, s33)
    elif kind == RIGID_JOINT or kind == RIGID_JOINT_6DOF_TO_3DOF or kind == ROTATION_CONTROL:
        six_dof = kind != RIGID_JOINT_6DOF_TO_3DOF
        controlled = kind == ROTATION_CONTROL
        rigid_joint(
            X0, axes, inputs, qb, qt, lam, six_dof, controlled, with_k, not one_node, phi, bb, bt, k_rot, s3, s4, s33
        )
    elif kind == REVOLUTE_JOINT:
        revolute_joint(X0, axes, qb, qt, lam, with_k, phi, bb, bt, k_rot, s3, s33[0])
        if with_k and inputs[0] != 0.0:
            # the brake torque's residual τ R(r_t) a0 turns with the target: ∂/∂θ_t = −τ (R(r_t) a0)~
            add_skew(k, I1, I1, I3, I3, -inputs[0], rot(qt[3:7], axes[0]))


@njit(inline=True)
def _sides_product(left, y, right, out):
    """``out = left y − y right`` (3, 3), each entry one sum over k of ``left[i, k] y[k, j] −
    y[i, k] right[k, j]`` in index order."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += left[i, k] * y[k, j] - y[i, k] * right[k, j]
            out[i, j] = s


@njit
def bias_kynema(kind, X0, axes, geom, param, inputs, qb, qt, vb, vt, s3, s4, s33, gamma):
    """:func:`bias` for Kynema's eight kinds."""
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
    tilde(wt, wtt)
    tilde(wb, wbt)
    _sides_product(wtt, c, wbt, cd)  # Ċ
    _sides_product(wtt, cd, wbt, dd)
    gamma[3] = 0.5 * (dd[2, 1] - dd[1, 2])
    gamma[4] = 0.5 * (dd[0, 2] - dd[2, 0])
    gamma[5] = 0.5 * (dd[1, 0] - dd[0, 1])


@njit
def input_load_kynema(kind, X0, axes, geom, value, qb, qt, out):
    """:func:`input_load` for Kynema's kinds (the revolute joint's brake torque; others zeros)."""
    for s in range(2):
        for i in range(6):
            out[s, i] = 0.0
    if kind == REVOLUTE_JOINT:
        revolute_torque(axes, qt, value, out[1, 3:6])


@njit
def output_kynema(kind, X0, axes, geom, qb, qt, vb, vt, vdb, vdt, initial, s3, out):
    """:func:`output` for Kynema's kinds (the revolute joint's azimuth, speed, acceleration)."""
    if kind == REVOLUTE_JOINT and not initial:
        revolute_output(axes, qt, vt, vdt, s3, out)
