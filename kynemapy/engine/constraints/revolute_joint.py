"""Kynema's revolute joint (5 rows), its torque input and its outputs.

``Φ[0:3] = u_t + X0 − u_b − R(r_b) X0``; with ``x = R(r_b) a0``, ``y = R(r_t) a1``,
``z = R(r_t) a2`` (rows of the joint ``axes``): ``Φ[3] = z·x``, ``Φ[4] = y·x``.
``B_t`` rows 3, 4: ``[0, −(x×z)ᵀ]``, ``[0, −(x×y)ᵀ]``; ``B_b = −B_t`` except the
translational block, which in Kynema's mode lacks the ``(R(r_b) X0)~`` term (exact
only for coincident nodes); the exact mode adds it.  Torque τ [N m] enters the target
residual as ``+τ R(r_t) a0`` (a brake convention: positive τ decelerates a positive
rotation).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.common import lever_geometric_stiffness, translation_residual
from kynemapy.math.quaternion import quat_to_rotvec, rotate_vector
from kynemapy.math.so3 import cross, tilde


@njit(inline=True)
def revolute_joint(X0, axes, qb, qt, lam, with_k, phi, bb, bt, k, s3, s33):
    """Φ (5 rows), ``B_b``, ``B_t`` (and K^Φ) of a revolute joint.

    ``with_k``: exact gradient (with the lever-arm term) plus K^Φ.
    Scratch ``s3`` (>= 6, 3), ``s33`` (3, 3).
    """
    r1x0 = s3[0]
    x = s3[1]
    y = s3[2]
    z = s3[3]
    xcy = s3[4]
    xcz = s3[5]
    translation_residual(X0, qb[0:3], qb[3:7], qt[0:3], r1x0, phi)
    rotate_vector(qb[3:7], axes[0], x)
    rotate_vector(qt[3:7], axes[1], y)
    rotate_vector(qt[3:7], axes[2], z)
    phi[3] = z[0] * x[0] + z[1] * x[1] + z[2] * x[2]
    phi[4] = y[0] * x[0] + y[1] * x[1] + y[2] * x[2]
    for i in range(3):
        bt[i, i] = 1.0
        bb[i, i] = -1.0
    if with_k:
        # exact gradient: the lever-arm term Kynema omits, and its geometric stiffness
        tilde(r1x0, s33)
        for i in range(3):
            for j in range(3):
                bb[i, 3 + j] = s33[i, j]
        lever_geometric_stiffness(lam, r1x0, k)
    cross(x, z, xcz)
    cross(x, y, xcy)
    for i in range(3):
        bt[3, 3 + i] = -xcz[i]
        bt[4, 3 + i] = -xcy[i]
        bb[3, 3 + i] = xcz[i]
        bb[4, 3 + i] = xcy[i]
    if with_k:
        # d(x×w)/dθ_b = w~ x~ ,  d(x×w)/dθ_t = −x~ w~   (w = z, y)
        l3 = lam[3]
        l4 = lam[4]
        for i in range(3):
            for j in range(3):
                d = 1.0 if i == j else 0.0
                zx = x[i] * z[j] - (z[0] * x[0] + z[1] * x[1] + z[2] * x[2]) * d  # z~ x~
                yx = x[i] * y[j] - (y[0] * x[0] + y[1] * x[1] + y[2] * x[2]) * d  # y~ x~
                xz = z[i] * x[j] - (z[0] * x[0] + z[1] * x[1] + z[2] * x[2]) * d  # x~ z~
                xy = y[i] * x[j] - (y[0] * x[0] + y[1] * x[1] + y[2] * x[2]) * d  # x~ y~
                k[1, 1, i, j] += l3 * xz + l4 * xy
                k[1, 0, i, j] += -l3 * zx - l4 * yx
                k[0, 1, i, j] += -l3 * xz - l4 * xy
                k[0, 0, i, j] += l3 * zx + l4 * yx


@njit
def revolute_torque(axes, qt, torque, out):
    """Target-node residual moment ``τ R(r_t) a0`` (3,) [N m]."""
    rotate_vector(qt[3:7], axes[0], out)
    for i in range(3):
        out[i] = out[i] * torque


@njit
def revolute_output(axes, qt, vt, vdt, s3, out):
    """Azimuth [rad], speed [rad/s] and acceleration [rad/s²] about the joint axis.

    ``a = R(r_t) a0``: ``(a·log(r_t), a·ω_t, a·ω̇_t)`` into ``out`` (3,).
    """
    a = s3[0]
    rv = s3[1]
    rotate_vector(qt[3:7], axes[0], a)
    quat_to_rotvec(qt[3:7], rv)
    out[0] = a[0] * rv[0] + a[1] * rv[1] + a[2] * rv[2]
    out[1] = a[0] * vt[3] + a[1] * vt[4] + a[2] * vt[5]
    out[2] = a[0] * vdt[3] + a[1] * vdt[4] + a[2] * vdt[5]
