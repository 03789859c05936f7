"""Rigid joints: 6-DOF weld between two nodes, and the 6→3 DOF variant (a ball joint
between a body node and a position-only node), and rotation control (a weld whose
relative rotation is driven by an angle input about an axis).

``Φ[0:3] = u_t + X0 − u_b − R(r_b) X0`` with ``X0 = X_t − X_b`` [m];
``Φ[3:6] = axial(C)``, ``C = R(r_t ⊗ r_c⁻¹ ⊗ r_b⁻¹)`` (``r_c = exp(axis·angle)``
for rotation control, identity otherwise).
``B_b = [[−I, (R(r_b) X0)~], [0, −AX(C)]]``, ``B_t = [[I, 0], [0, AX(C)ᵀ]]``.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.common import (
    lever_geometric_stiffness,
    relative_rotation,
    rotation_geometric_stiffness,
    rotation_gradients,
    translation_residual,
)
from kynemapy.math.quaternion import quat_compose, quat_inverse, rotvec_to_quat
from kynemapy.math.so3 import tilde


@njit(inline=True)
def rigid_joint(X0, axes, inputs, qb, qt, lam, six_dof, controlled, with_k, with_base, phi, bb, bt, k, s3, s4, s33):
    """Φ, ``B_b``, ``B_t`` (and K^Φ) of a rigid joint / 6→3 joint / rotation control.

    ``qb``, ``qt`` : (7,) base and target node displacement (u, quaternion).
    ``with_k``: exact rotation gradients plus K^Φ (else Kynema's gradients, exact on
    the constraint manifold).  ``six_dof`` False: translational rows only (6→3 joint).  ``controlled``: rotation
    control with angle ``inputs[0]`` [rad] about ``axes[0]``.  ``with_base`` is True (a run-time
    value from the caller: the shared rotation kernels of :mod:`.common` compile once).
    Scratch: ``s3`` (>= 4, 3), ``s4`` (>= 5, 4), ``s33`` (>= 3, 3, 3).
    """
    r1x0 = s3[0]
    rb_inv = s4[0]
    tmp4 = s4[1]
    translation_residual(X0, qb[0:3], qb[3:7], qt[0:3], r1x0, phi)
    for i in range(3):
        bt[i, i] = 1.0
        bb[i, i] = -1.0
    tilde(r1x0, s33[0])
    for i in range(3):
        for j in range(3):
            bb[i, 3 + j] = s33[0][i, j]
    if with_k:
        lever_geometric_stiffness(lam, r1x0, k)
    if not six_dof:
        return
    quat_inverse(qb[3:7], rb_inv)
    c = s33[0]
    if controlled:
        rv = s3[1]
        rc = s4[2]
        rc_inv = s4[3]
        rt_rc_inv = s4[4]
        for i in range(3):
            rv[i] = axes[0, i] * inputs[0]
        rotvec_to_quat(rv, rc)
        quat_inverse(rc, rc_inv)
        quat_compose(qt[3:7], rc_inv, rt_rc_inv)
        relative_rotation(rt_rc_inv, rb_inv, tmp4, c, phi)
    else:
        relative_rotation(qt[3:7], rb_inv, tmp4, c, phi)
    rotation_gradients(c, s33[1], bb, bt, with_base, with_k)
    if with_k:
        rotation_geometric_stiffness(c, lam, with_base, s3[2], s3[3], s33[2], k)
