"""One-node constraints: fixed and prescribed boundary conditions (6 and 3 DOF).

The base is the ground: ``u_b = 0, r_b = (1,0,0,0)`` for fixed BCs, and
``u_b = input[0:3]``, ``r_b = input[3:7]`` (the prescribed displacement) for
prescribed BCs.  Formulas are evaluated literally, as Kynema does
(``Φ[0:3] = u_t + X0 − u_b − R(r_b) X0``, ``Φ[3:6] = axial(R(r_t ⊗ r_b⁻¹))``).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.common import (
    relative_rotation,
    rotation_geometric_stiffness,
    rotation_gradients,
    translation_residual,
)
from kynemapy.math.quaternion import quat_inverse


@njit
def _ground(prescribed, inputs, ub, rb):
    if prescribed:
        for i in range(3):
            ub[i] = inputs[i]
        for i in range(4):
            rb[i] = inputs[3 + i]
    else:
        for i in range(3):
            ub[i] = 0.0
        rb[0] = 1.0
        rb[1] = 0.0
        rb[2] = 0.0
        rb[3] = 0.0


@njit(inline=True)
def boundary_condition(X0, inputs, qt, lam, prescribed, six_dof, with_k, with_base, phi, bt, k, s3, s4, s33):
    """Φ, ``B_t`` (and K^Φ) of a fixed/prescribed BC on the target node ``qt`` (7,).

    ``with_k`` selects the exact gradient and adds K^Φ; otherwise Kynema's gradient.

    ``six_dof`` False: only the translational rows (3) exist.  ``with_base`` is False (the base
    is the ground; passed by the caller as a run-time value, so the shared rotation kernels of
    :mod:`.common` compile once for every kind).
    Scratch: ``s3`` (>= 4, 3), ``s4`` (>= 3, 4), ``s33`` (>= 3, 3, 3).
    """
    ub = s3[0]
    r1x0 = s3[1]
    rb = s4[0]
    rb_inv = s4[1]
    tmp4 = s4[2]
    _ground(prescribed, inputs, ub, rb)
    translation_residual(X0, ub, rb, qt[0:3], r1x0, phi)
    for i in range(3):
        bt[i, i] = 1.0
    if not six_dof:
        return
    quat_inverse(rb, rb_inv)
    c = s33[0]
    relative_rotation(qt[3:7], rb_inv, tmp4, c, phi)
    rotation_gradients(c, s33[1], bt, bt, with_base, with_k)
    if with_k:
        rotation_geometric_stiffness(c, lam, with_base, s3[2], s3[3], s33[2], k)
