"""Evaluate one constraint of any kind (a branch on Kynema's kind code)."""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.constraints.body_joints import body_joint
from kynemapy.constraints.boundary_conditions import boundary_condition
from kynemapy.constraints.kinds import (
    BALL_JOINT,
    FIXED_BC,
    FIXED_BC_3DOF,
    PRESCRIBED_BC,
    PRESCRIBED_BC_3DOF,
    REVOLUTE_JOINT,
    RIGID_JOINT,
    RIGID_JOINT_6DOF_TO_3DOF,
    ROTATION_CONTROL,
)
from kynemapy.constraints.primitives import add_skew, rot
from kynemapy.constraints.revolute_joint import revolute_joint
from kynemapy.constraints.rigid_joint import rigid_joint


@njit(inline=True)
def constraint_terms(kind, X0, axes, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k, s3, s4, s33):
    """Residual Φ (6,), gradients ``B_b``, ``B_t`` (6, 6) and K^Φ blocks ``k`` (2, 2, 6, 6).

    ``k[a, b]`` is ∂(B_aᵀλ)/∂q_b (node 0 the base, 1 the target; rows and columns
    (u, θ) with spatial rotation increments, as the columns of B), plus the derivative
    of the residual of a joint's input (revolute, hinge torque; slider force).  Kynema's
    kinds only have rotation-rotation terms and write ``k[:, :, 3:, 3:]``.

    ``with_k`` True: the exact gradients and K^Φ (``geometric_stiffness`` mode);
    False: Kynema's gradients, no K^Φ (``k`` is then left untouched).  Φ, B and (with
    ``with_k``) K^Φ are zeroed first; unused rows stay zero.  ``qb`` is ignored by
    one-node kinds; for a joint to the ground it is the identity (``ws.q_ground``).
    ``geom`` (2, 4, 3) and ``param`` are the two-body joints' geometry and length
    (:mod:`.body_joints`); the two-body joints have no Kynema variant and use their exact
    gradient in both modes.  Scratch: ``s3`` (>= 6, 3), ``s4`` (>= 5, 4), ``s33`` (>= 3, 3, 3).

    Inlined into its callers, as are the three kind kernels it calls (one call site
    each, with the variant flags computed from ``kind``): a real call would pass
    about a dozen array descriptors, which costs more than a whole joint evaluation.
    """
    for i in range(6):
        phi[i] = 0.0
        for j in range(6):
            bb[i, j] = 0.0
            bt[i, j] = 0.0
    if with_k:
        for a in range(2):
            for b in range(2):
                for i in range(6):
                    for j in range(6):
                        k[a, b, i, j] = 0.0
    k_rot = k[:, :, 3:6, 3:6]
    if kind == FIXED_BC or kind == FIXED_BC_3DOF or kind == PRESCRIBED_BC or kind == PRESCRIBED_BC_3DOF:
        prescribed = kind == PRESCRIBED_BC or kind == PRESCRIBED_BC_3DOF
        six_dof = kind == FIXED_BC or kind == PRESCRIBED_BC
        boundary_condition(X0, inputs, qt, lam, prescribed, six_dof, with_k, phi, bt, k_rot, s3, s4, s33)
    elif kind == RIGID_JOINT or kind == RIGID_JOINT_6DOF_TO_3DOF or kind == ROTATION_CONTROL:
        six_dof = kind != RIGID_JOINT_6DOF_TO_3DOF
        controlled = kind == ROTATION_CONTROL
        rigid_joint(X0, axes, inputs, qb, qt, lam, six_dof, controlled, with_k, phi, bb, bt, k_rot, s3, s4, s33)
    elif kind == REVOLUTE_JOINT:
        revolute_joint(X0, axes, qb, qt, lam, with_k, phi, bb, bt, k_rot, s3, s33[0])
        if with_k and inputs[0] != 0.0:
            # the brake torque's residual τ R(r_t) a0 turns with the target: ∂/∂θ_t = −τ (R(r_t) a0)~
            add_skew(k, 1, 1, 3, 3, -inputs[0], rot(qt[3:7], axes[0]))
    elif kind >= BALL_JOINT:
        body_joint(kind, X0, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k)
