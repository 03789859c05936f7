"""SO(3) and 3-vector point kernels: skew matrices, exponential map and its right Jacobian,
Cayley transform, Kynema's AX and tangent operators, 3×3 products and solves.

Conventions: ``R`` maps body to world coordinates, ``tilde(w) a = hat(w) a = w × a``; vectors
are (3,) float64 arrays, matrices (3, 3) float64 arrays, rotation vectors in radians.  Every
function writes into ``out`` and allocates nothing; ``out`` may not alias an input unless the
docstring says so.  The 3-tuple forms (``dot``, ``cross`` on local scalars) are in
:mod:`kynemapy.math.vectors`.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit


@njit
def tilde(v, out):
    """Skew matrix (3, 3) of the (3,) vector ``v``."""
    out[0, 0] = 0.0
    out[0, 1] = -v[2]
    out[0, 2] = v[1]
    out[1, 0] = v[2]
    out[1, 1] = 0.0
    out[1, 2] = -v[0]
    out[2, 0] = -v[1]
    out[2, 1] = v[0]
    out[2, 2] = 0.0


@njit
def axial(c, out):
    """Axial vector ``½(C21 − C12, C02 − C20, C10 − C01)`` of a (3, 3) matrix."""
    out[0] = 0.5 * (c[2, 1] - c[1, 2])
    out[1] = 0.5 * (c[0, 2] - c[2, 0])
    out[2] = 0.5 * (c[1, 0] - c[0, 1])


@njit
def ax_matrix(c, out):
    """Kynema's ``AX(C) = ½ tr(C) I − ½ C`` (3, 3)."""
    half_trace = 0.5 * (c[0, 0] + c[1, 1] + c[2, 2])
    for i in range(3):
        for j in range(3):
            out[i, j] = -0.5 * c[i, j]
        out[i, i] += half_trace


@njit
def cross(a, b, out):
    """``out = a × b`` for (3,) vectors (``out`` may not alias)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit
def matmul3(a, b, out):
    """``out = a @ b`` for (3, 3) matrices.

    ``out`` may alias ``a`` (each row of ``a`` is read before that row of ``out`` is written),
    not ``b``.  Each entry is ``a[i, 0] b[0, j] + a[i, 1] b[1, j] + a[i, 2] b[2, j]``, summed
    left to right.
    """
    for i in range(3):
        a0, a1, a2 = a[i, 0], a[i, 1], a[i, 2]
        for j in range(3):
            out[i, j] = a0 * b[0, j] + a1 * b[1, j] + a2 * b[2, j]


@njit
def matmul3_into_first(a, b, tmp):
    """``a ← a @ b`` for (3, 3) matrices, through the (3, 3) scratch ``tmp`` (same sums as :func:`matmul3`)."""
    matmul3(a, b, tmp)
    for i in range(3):
        for j in range(3):
            a[i, j] = tmp[i, j]


@njit
def matvec3(a, v, out):
    """``out = a @ v`` for a (3, 3) matrix and a (3,) vector (``out`` may not alias ``v``)."""
    for i in range(3):
        out[i] = a[i, 0] * v[0] + a[i, 1] * v[1] + a[i, 2] * v[2]


@njit
def matTvec3(a, v, out):
    """``out = aᵀ @ v`` for a (3, 3) matrix and a (3,) vector (``out`` may not alias ``v``)."""
    for i in range(3):
        out[i] = a[0, i] * v[0] + a[1, i] * v[1] + a[2, i] * v[2]


@njit
def solve3(a, b, out):
    """Solve ``a x = b`` by Cramer's rule.

    Parameters
    ----------
    a : (3, 3) float64, the matrix.
    b : (3,) float64, the right-hand side.
    out : (3,) float64, receives ``x`` (may alias ``b``); untouched when ``a`` is singular.

    Returns
    -------
    bool
        False if ``det(a)`` is zero or not finite, else True.
    """
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
def exp_so3(wx, wy, wz, out):
    """Rotation matrix ``out = exp(hat(w))`` (3, 3) of the rotation vector ``w = (wx, wy, wz)`` [rad].

    Rodrigues' formula ``I + a ŵ + b ŵŵ`` with the cancellation-free coefficients
    ``a = sin φ / φ`` and ``b = (1 − cos φ)/φ² = 2 (sin(φ/2)/φ)²`` (φ = |w|); a two-term
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
    """Right Jacobian (3, 3) of exp at ``w = (wx, wy, wz)`` [rad]: ``exp(hat(w + δ)) ≈ exp(hat(w)) exp(hat(Jr(w) δ))``.

    ``Jr(w) = I − (1 − cos φ)/φ² ŵ + (φ − sin φ)/φ³ ŵŵ`` (φ = |w|); a two-term series below
    φ = 1e-3.  (The same operator as Kynema's :func:`tangent_operator_rot`, which is evaluated
    with Kynema's literal coefficients and returns its transpose.)
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
    """Cayley transform ``out = cay(f) = (I + f̂)(I − f̂)⁻¹ = I + 2/(1 + |f|²) (f̂ + f̂f̂)`` (3, 3).

    ``f`` (3,) is the Cayley vector (dimensionless); the rotation angle is ``2 atan |f|`` about ``f``.
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
def tangent_operator_rot(psi, out):
    """Rotation block (3, 3) of Kynema's nodal tangent operator 𝒯, already transposed.

    ``T(ψ) = I + (cos φ − 1)/φ² ψ̃ + (1 − sin φ/φ)/φ² ψ̃ψ̃`` with φ = |ψ| and both
    coefficients zero for φ <= 1e-16; ``out = T(ψ)ᵀ``.  ``psi`` is the
    rotation increment h·Δq_rot [rad] of shape (3,).
    """
    phi = math.sqrt(psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2])
    t1 = 0.0
    t2 = 0.0
    if phi > 1.0e-16:
        t1 = (math.cos(phi) - 1.0) / (phi * phi)
        t2 = (1.0 - math.sin(phi) / phi) / (phi * phi)
    p0, p1, p2 = psi[0], psi[1], psi[2]
    # ψ̃ψ̃ = ψψᵀ − |ψ|² I (computed element-wise as the product of the two skews)
    s00 = -p2 * p2 - p1 * p1
    s01 = p0 * p1
    s02 = p0 * p2
    s11 = -p2 * p2 - p0 * p0
    s12 = p1 * p2
    s22 = -p1 * p1 - p0 * p0
    # T = I + t1 ψ̃ + t2 ψ̃ψ̃ ; store Tᵀ
    t00 = 1.0 + t2 * s00
    t01 = t1 * (-p2) + t2 * s01
    t02 = t1 * p1 + t2 * s02
    t10 = t1 * p2 + t2 * s01
    t11 = 1.0 + t2 * s11
    t12 = t1 * (-p0) + t2 * s12
    t20 = t1 * (-p1) + t2 * s02
    t21 = t1 * p0 + t2 * s12
    t22 = 1.0 + t2 * s22
    out[0, 0] = t00
    out[0, 1] = t10
    out[0, 2] = t20
    out[1, 0] = t01
    out[1, 1] = t11
    out[1, 2] = t21
    out[2, 0] = t02
    out[2, 1] = t12
    out[2, 2] = t22
