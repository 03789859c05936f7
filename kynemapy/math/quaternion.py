"""Quaternion primitives, written exactly as Kynema-FMB evaluates them.

Quaternions are ``(w, x, y, z)`` float64 arrays of shape (4,), Hamilton product.
None of these functions normalise: Kynema's unit tests feed non-unit
quaternions and rely on the literal formulas.  Every function writes into an
``out`` argument and allocates nothing.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit


@njit
def quat_product(aw, ax, ay, az, bw, bx, by, bz):
    """``a ⊗ b`` (Hamilton product) of quaternions given by their components; returns ``(w, x, y, z)``.

    The scalar form of :func:`quat_compose`, for kernels that hold quaternions in locals.
    """
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


@njit
def quat_compose(a, b, out):
    """``out = a ⊗ b`` (Hamilton product). ``out`` may not alias ``a`` or ``b``."""
    out[0], out[1], out[2], out[3] = quat_product(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])


@njit
def quat_inverse(q, out):
    """``out = (w, -x, -y, -z) / |q|`` (Kynema divides by the norm, not its square)."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    out[0] = q[0] / n
    out[1] = -q[1] / n
    out[2] = -q[2] / n
    out[3] = -q[3] / n


@njit
def quat_to_matrix(q, out):
    """Active rotation matrix (3, 3) of ``q``, written with squares, not normalised."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0, 0] = w * w + x * x - y * y - z * z
    out[0, 1] = 2.0 * (x * y - w * z)
    out[0, 2] = 2.0 * (x * z + w * y)
    out[1, 0] = 2.0 * (x * y + w * z)
    out[1, 1] = w * w - x * x + y * y - z * z
    out[1, 2] = 2.0 * (y * z - w * x)
    out[2, 0] = 2.0 * (x * z - w * y)
    out[2, 1] = 2.0 * (y * z + w * x)
    out[2, 2] = w * w - x * x - y * y + z * z


@njit
def rot(q, v):
    """``R(q) v`` as a 3-tuple, for a quaternion ``q`` (4,) and a 3-vector ``v`` (a (3,) array or a 3-tuple).

    Kynema's unnormalised formula (the entries of :func:`quat_to_matrix`); the tuple form of
    :func:`rotate_vector`, for kernels that hold vectors in locals.
    """
    w, x, y, z = q[0], q[1], q[2], q[3]
    v0, v1, v2 = v[0], v[1], v[2]
    return (
        (w * w + x * x - y * y - z * z) * v0 + 2.0 * (x * y - w * z) * v1 + 2.0 * (x * z + w * y) * v2,
        2.0 * (x * y + w * z) * v0 + (w * w - x * x + y * y - z * z) * v1 + 2.0 * (y * z - w * x) * v2,
        2.0 * (x * z - w * y) * v0 + 2.0 * (y * z + w * x) * v1 + (w * w - x * x - y * y + z * z) * v2,
    )


@njit
def rotate_vector(q, v, out):
    """``out = R(q) v`` for a (3,) vector ``v`` (:func:`rot`; ``out`` may alias ``v``)."""
    out[0], out[1], out[2] = rot(q, v)


@njit
def quat_exp(p0, p1, p2):
    """Exponential map of the rotation vector ``(p0, p1, p2)`` [rad]; returns ``(w, x, y, z)``.

    ``(cos(θ/2), sin(θ/2)/θ · phi)`` with θ = |phi|.  Below θ = 1e-12 Kynema makes the
    vector part zero; kynemapy uses sin(θ/2)/θ = 1/2 there (exact in double precision), so
    that a rotation increment is never lost: with Kynema's dead zone a Newton iteration whose
    rotation correction falls inside (0, 1e-12) rad cannot apply it and oscillates by 1e-12 rad
    for ever (the double four-bar at h = 1e-4, whose couplers only translate).  Results for
    θ >= 1e-12 and θ = 0 are bit for bit Kynema's.  The scalar form of :func:`rotvec_to_quat`.
    """
    theta = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    s = 0.5
    if theta >= 1.0e-12:
        s = math.sin(theta / 2.0) / theta
    # cos(0) = 1 exactly: skip the libm call for the zero rotation of position-only nodes
    w = math.cos(theta / 2.0) if theta != 0.0 else 1.0
    return w, p0 * s, p1 * s, p2 * s


@njit
def rotvec_to_quat(phi, out):
    """Exponential map: rotation vector ``phi`` (3,) [rad] -> quaternion (4,) (see :func:`quat_exp`)."""
    out[0], out[1], out[2], out[3] = quat_exp(phi[0], phi[1], phi[2])


@njit
def quat_to_rotvec(q, out):
    """Log map: quaternion -> rotation vector (3,) [rad]; zero when |w| >= 1 (Kynema)."""
    w = q[0]
    if w > 1.0:
        w = 1.0
    elif w < -1.0:
        w = -1.0
    theta = 2.0 * math.acos(w)
    s = math.sqrt(1.0 - w * w)
    if s > 1.0e-12:
        out[0] = theta * q[1] / s
        out[1] = theta * q[2] / s
        out[2] = theta * q[3] / s
    else:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
