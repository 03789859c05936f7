"""SO(3) point kernels for the rigid-body schemes (numba; write into ``out``, allocate nothing).

Conventions: ``R`` maps body to world coordinates, ``hat(w) a = w × a``, vectors are (3,)
float64 arrays and matrices (3, 3) float64 arrays.  ``out`` may not alias an input unless a
docstring says so.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit


@njit
def exp_so3(wx, wy, wz, out):
    """``out = exp(hat(w))`` (3, 3), Rodrigues' formula with cancellation-free coefficients.

    ``sin φ / φ`` and ``(1 − cos φ)/φ² = 2 (sin(φ/2)/φ)²`` (φ = |w| [rad]); a two-term
    series below φ = 1e-6, where the truncation error is below 1e-25.
    """
    phi2 = wx * wx + wy * wy + wz * wz
    if phi2 < 1.0e-12:
        a = 1.0 - phi2 / 6.0
        b = 0.5 - phi2 / 24.0
    else:
        phi = math.sqrt(phi2)
        a = math.sin(phi) / phi
        s = math.sin(0.5 * phi) / phi
        b = 2.0 * s * s
    # exp = I + a ŵ + b ŵŵ, ŵŵ = w wᵀ − φ² I
    out[0, 0] = 1.0 + b * (wx * wx - phi2)
    out[1, 1] = 1.0 + b * (wy * wy - phi2)
    out[2, 2] = 1.0 + b * (wz * wz - phi2)
    bxy = b * wx * wy
    bxz = b * wx * wz
    byz = b * wy * wz
    out[0, 1] = bxy - a * wz
    out[1, 0] = bxy + a * wz
    out[0, 2] = bxz + a * wy
    out[2, 0] = bxz - a * wy
    out[1, 2] = byz - a * wx
    out[2, 1] = byz + a * wx


@njit
def right_jacobian_so3(wx, wy, wz, out):
    """Right Jacobian of exp (3, 3): ``exp(hat(w + δ)) ≈ exp(hat(w)) exp(hat(Jr(w) δ))``.

    ``Jr(w) = I − (1 − cos φ)/φ² ŵ + (φ − sin φ)/φ³ ŵŵ``; series below φ = 1e-3.
    """
    phi2 = wx * wx + wy * wy + wz * wz
    if phi2 < 1.0e-6:
        b = 0.5 - phi2 / 24.0
        c = 1.0 / 6.0 - phi2 / 120.0
    else:
        phi = math.sqrt(phi2)
        s = math.sin(0.5 * phi) / phi
        b = 2.0 * s * s
        c = (phi - math.sin(phi)) / (phi2 * phi)
    out[0, 0] = 1.0 + c * (wx * wx - phi2)
    out[1, 1] = 1.0 + c * (wy * wy - phi2)
    out[2, 2] = 1.0 + c * (wz * wz - phi2)
    cxy = c * wx * wy
    cxz = c * wx * wz
    cyz = c * wy * wz
    out[0, 1] = cxy + b * wz
    out[1, 0] = cxy - b * wz
    out[0, 2] = cxz - b * wy
    out[2, 0] = cxz + b * wy
    out[1, 2] = cyz + b * wx
    out[2, 1] = cyz - b * wx


@njit
def cayley_so3(f, out):
    """``out = cay(f) = (I + f̂)(I − f̂)⁻¹ = I + 2/(1 + |f|²) (f̂ + f̂f̂)`` (3, 3).

    The rotation angle is ``2 atan |f|`` about ``f``.
    """
    fx, fy, fz = f[0], f[1], f[2]
    f2 = fx * fx + fy * fy + fz * fz
    a = 2.0 / (1.0 + f2)
    out[0, 0] = 1.0 + a * (fx * fx - f2)
    out[1, 1] = 1.0 + a * (fy * fy - f2)
    out[2, 2] = 1.0 + a * (fz * fz - f2)
    out[0, 1] = a * (fx * fy - fz)
    out[1, 0] = a * (fx * fy + fz)
    out[0, 2] = a * (fx * fz + fy)
    out[2, 0] = a * (fx * fz - fy)
    out[1, 2] = a * (fy * fz - fx)
    out[2, 1] = a * (fy * fz + fx)


@njit
def matmul3(a, b, out):
    """``out = a @ b`` for (3, 3) matrices."""
    for i in range(3):
        a0, a1, a2 = a[i, 0], a[i, 1], a[i, 2]
        for j in range(3):
            out[i, j] = a0 * b[0, j] + a1 * b[1, j] + a2 * b[2, j]


@njit
def matmul3_into_first(a, b, tmp):
    """``a ← a @ b`` for (3, 3) matrices, through the (3, 3) scratch ``tmp``."""
    matmul3(a, b, tmp)
    for i in range(3):
        for j in range(3):
            a[i, j] = tmp[i, j]


@njit
def matvec3(a, v, out):
    """``out = a @ v``."""
    for i in range(3):
        out[i] = a[i, 0] * v[0] + a[i, 1] * v[1] + a[i, 2] * v[2]


@njit
def matTvec3(a, v, out):
    """``out = aᵀ @ v``."""
    for i in range(3):
        out[i] = a[0, i] * v[0] + a[1, i] * v[1] + a[2, i] * v[2]


@njit
def cross3(a, b, out):
    """``out = a × b``."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit
def solve3(a, b, out):
    """Solve ``a x = b`` for a (3, 3) matrix by Cramer's rule; returns False if ``a`` is singular."""
    c00 = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]
    c01 = a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]
    c02 = a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]
    det = a[0, 0] * c00 + a[0, 1] * c01 + a[0, 2] * c02
    if not (det != 0.0 and math.isfinite(det)):
        return False
    c10 = a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2]
    c11 = a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]
    c12 = a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1]
    c20 = a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]
    c21 = a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]
    c22 = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = (c00 * b0 + c10 * b1 + c20 * b2) / det
    out[1] = (c01 * b0 + c11 * b1 + c21 * b2) / det
    out[2] = (c02 * b0 + c12 * b1 + c22 * b2) / det
    return True


@njit
def rotate_about_body_axis(axis, angle, R, v):
    """``R ← R rot_axis(angle)``, ``v ← rot_axis(angle)ᵀ v`` in place (axis 0, 1 or 2; angle [rad]).

    The exact flow of the free-rotation piece ``H_i = Π_i²/(2 I_i)`` for ``angle = τ Π_i / I_i``.
    """
    j = (axis + 1) % 3
    k = (axis + 2) % 3
    c = math.cos(angle)
    s = math.sin(angle)
    for r in range(3):
        rj = R[r, j]
        rk = R[r, k]
        R[r, j] = c * rj + s * rk
        R[r, k] = c * rk - s * rj
    vj = v[j]
    vk = v[k]
    v[j] = c * vj + s * vk
    v[k] = c * vk - s * vj
