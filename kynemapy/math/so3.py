"""SO(3) matrix helpers: tilde, axial vector, Kynema's AX operator, tangent operator.

All functions write into ``out`` and allocate nothing.  ``tilde(v) a = v × a``.
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
    """``out = a @ b`` for (3, 3) matrices (``out`` may not alias)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@njit
def matvec3(a, v, out):
    """``out = a @ v`` for a (3, 3) matrix and a (3,) vector."""
    for i in range(3):
        out[i] = a[i, 0] * v[0] + a[i, 1] * v[1] + a[i, 2] * v[2]


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
