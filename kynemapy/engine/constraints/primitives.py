"""Constraint rows the two-body joints are made of, with exact gradients and K^Φ.

Notation (side a = the base, node 0 of the K^Φ blocks; side b = the target, node 1):
``R_s`` the rotation of side s's node displacement, ``ρ_s = R_s d_s`` the current lever
from the node to its joint point, ``Δ = p_b − p_a = X0 + u_b + ρ_b − u_a − ρ_a`` the
separation of the two joint points (``X0 = X_b − X_a``), and axes ``n = R_s e`` fixed
in a side.  Increments are node translations δu and spatial rotations δθ
(``R ← exp(δθ~) R``), so ``δ(R e) = δθ × R e = −(R e)~ δθ``.  With ``u~ v~ = v uᵀ − (u·v) I``:

* point coincidence (3 rows) ``Φ = Δ``:  ``B_b = [I, −ρ_b~]``, ``B_a = [−I, ρ_a~]``,
  ``K_bb,θθ = λ~ ρ_b~``, ``K_aa,θθ = −λ~ ρ_a~``;
* perpendicular axes (1 row) ``Φ = x·y``, ``x = R_a e_a``, ``y = R_b e_b``:
  ``B_a,θ = (x×y)ᵀ``, ``B_b,θ = −(x×y)ᵀ``; ``K_aa = λ y~x~``, ``K_ab = −λ x~y~``,
  ``K_ba = −λ y~x~``, ``K_bb = λ x~y~`` (rotation blocks);
* point on a line or plane of a (1 row per direction n = R_a e) ``Φ = Δ·n``:
  ``B_b = [nᵀ, (ρ_b×n)ᵀ]``, ``B_a = [−nᵀ, (n×w)ᵀ]`` with ``w = Δ + ρ_a = p_b − x_a``
  (the force λn acts on both bodies at p_b); K^Φ couples translations and rotations,
  see :func:`line_force_stiffness`;
* distance (1 row) ``Φ = |Δ| − L``: ``B_b = [êᵀ, (ρ_b×ê)ᵀ]``, ``B_a = −[êᵀ, (ρ_a×ê)ᵀ]``,
  ``K_xy = s_x s_y P_x G P_yᵀ`` (+ ``λ ê~ρ_b~`` on bb, ``−λ ê~ρ_a~`` on aa), with
  ``P_s = [I; ρ_s~]``, ``G = λ (I − ê êᵀ)/|Δ|``, ``s_a = −1``, ``s_b = 1``.

Every function works on local scalars (vectors as 3-tuples, with the algebra of
:mod:`kynemapy.math.vectors` and :func:`kynemapy.math.quaternion.rot`) and writes into the
caller's ``phi`` (6,), ``bb``, ``bt`` (6, 6) and ``k`` (2, 2, 6, 6); nothing is allocated.
"""

from __future__ import annotations

import math

import numpy as np

from kynemapy._jit import njit
from kynemapy.math.quaternion import rot
from kynemapy.math.vectors import cross, dot, spin2, tilde_entry

#: K^Φ block sides and row/column offsets as int64 values, not int literals: numba compiles a
#: callee once for each distinct literal argument (add_skew was compiled 7 times, 0.7 s of a
#: first compilation), while LLVM inlines it, constants and all, either way
I0, I1, I3 = np.int64(0), np.int64(1), np.int64(3)


@njit
def joint_points(X0, geom, qb, qt):
    """``(ρ_a, ρ_b, Δ)``: current levers of the two joint points and their separation ``p_b − p_a``."""
    ra = rot(qb[3:7], geom[0, 0])
    rb = rot(qt[3:7], geom[1, 0])
    d = (
        X0[0] + qt[0] + rb[0] - qb[0] - ra[0],
        X0[1] + qt[1] + rb[1] - qb[1] - ra[1],
        X0[2] + qt[2] + rb[2] - qb[2] - ra[2],
    )
    return ra, rb, d


@njit
def add_skew(k, a, b, r0, c0, s, u):
    """``k[a, b, r0:r0+3, c0:c0+3] += s ũ``."""
    for i in range(3):
        for j in range(3):
            k[a, b, r0 + i, c0 + j] += s * tilde_entry(u, i, j)


@njit
def add_skew_skew(k, a, b, r0, c0, s, u, v):
    """``k[a, b, r0:r0+3, c0:c0+3] += s ũ ṽ`` (``ũ ṽ = v uᵀ − (u·v) I``)."""
    uv = dot(u, v)
    for i in range(3):
        for j in range(3):
            e = v[i] * u[j]
            if i == j:
                e -= uv
            k[a, b, r0 + i, c0 + j] += s * e


@njit
def point_rows(row, ra, rb, d, lam, with_k, phi, bb, bt, k):
    """Three rows ``Φ = Δ`` (the two joint points coincide)."""
    for i in range(3):
        phi[row + i] = d[i]
        bt[row + i, i] = 1.0
        bb[row + i, i] = -1.0
        for j in range(3):
            bt[row + i, 3 + j] = -tilde_entry(rb, i, j)
            bb[row + i, 3 + j] = tilde_entry(ra, i, j)
    if with_k:
        lv = (lam[row], lam[row + 1], lam[row + 2])
        add_skew_skew(k, I1, I1, I3, I3, 1.0, lv, rb)
        add_skew_skew(k, I0, I0, I3, I3, -1.0, lv, ra)


@njit
def perpendicular_row(row, x, y, lam, with_k, phi, bb, bt, k):
    """One row ``Φ = x·y`` between an axis ``x`` fixed in a and an axis ``y`` fixed in b."""
    phi[row] = dot(x, y)
    c = cross(x, y)
    for i in range(3):
        bb[row, 3 + i] = c[i]
        bt[row, 3 + i] = -c[i]
    if with_k:
        lr = lam[row]
        add_skew_skew(k, I0, I0, I3, I3, lr, y, x)
        add_skew_skew(k, I0, I1, I3, I3, -lr, x, y)
        add_skew_skew(k, I1, I0, I3, I3, -lr, y, x)
        add_skew_skew(k, I1, I1, I3, I3, lr, x, y)


@njit
def line_force_stiffness(n, rb, w, lr, k):
    """K^Φ of the generalized force pair of a line row: force ``λ n`` (n fixed in a) on b at p_b,
    ``−λ n`` on a at the same point (``w = p_b − x_a``), as derivatives of
    ``F_b = [f; ρ_b × f]``, ``F_a = [−f; −w × f]``, ``f = λ n``."""
    add_skew_skew(k, I1, I1, I3, I3, lr, n, rb)
    add_skew(k, I1, I0, I0, I3, -lr, n)
    add_skew_skew(k, I1, I0, I3, I3, -lr, rb, n)
    add_skew(k, I0, I0, I0, I3, lr, n)
    add_skew(k, I0, I0, I3, I0, -lr, n)
    add_skew_skew(k, I0, I0, I3, I3, lr, w, n)
    add_skew(k, I0, I1, I3, I0, lr, n)
    add_skew_skew(k, I0, I1, I3, I3, -lr, n, rb)


@njit
def line_force(n, rb, w, lr, out):
    """Add the generalized forces ``λ [n; ρ_b × n]`` (b) and ``λ [−n; n × w]`` (a) to ``out`` (2, 6)."""
    c = cross(rb, n)
    e = cross(n, w)
    for i in range(3):
        out[1, i] += lr * n[i]
        out[1, 3 + i] += lr * c[i]
        out[0, i] -= lr * n[i]
        out[0, 3 + i] += lr * e[i]


@njit
def line_row(row, n, ra, rb, d, lam, with_k, phi, bb, bt, k):
    """One row ``Φ = Δ·n``: b's joint point stays on a plane of a with normal ``n = R_a e``."""
    phi[row] = dot(d, n)
    w = (d[0] + ra[0], d[1] + ra[1], d[2] + ra[2])
    c = cross(rb, n)
    e = cross(n, w)
    for i in range(3):
        bt[row, i] = n[i]
        bt[row, 3 + i] = c[i]
        bb[row, i] = -n[i]
        bb[row, 3 + i] = e[i]
    if with_k:
        line_force_stiffness(n, rb, w, lam[row], k)


@njit
def distance_row(row, length, ra, rb, d, lam, with_k, phi, bb, bt, k):
    """One row ``Φ = |Δ| − L`` (a massless rigid rod between the two joint points)."""
    ell = math.sqrt(dot(d, d))
    e = (d[0] / ell, d[1] / ell, d[2] / ell)
    phi[row] = ell - length
    cb = cross(rb, e)
    ca = cross(ra, e)
    for i in range(3):
        bt[row, i] = e[i]
        bt[row, 3 + i] = cb[i]
        bb[row, i] = -e[i]
        bb[row, 3 + i] = -ca[i]
    if not with_k:
        return
    lr = lam[row]
    g = lr / ell
    for x in range(2):
        rx = ra if x == 0 else rb
        for y in range(2):
            ry = ra if y == 0 else rb
            s = g if x == y else -g
            for i in range(6):
                for j in range(6):
                    acc = 0.0
                    for m in range(3):
                        pim = (1.0 if i == m else 0.0) if i < 3 else tilde_entry(rx, i - 3, m)
                        if pim == 0.0:
                            continue
                        for n in range(3):
                            pjn = (1.0 if j == n else 0.0) if j < 3 else tilde_entry(ry, j - 3, n)
                            gmn = (1.0 if m == n else 0.0) - e[m] * e[n]
                            acc += pim * gmn * pjn
                    k[x, y, i, j] += s * acc
    add_skew_skew(k, I1, I1, I3, I3, lr, e, rb)
    add_skew_skew(k, I0, I0, I3, I3, -lr, e, ra)


# ---------------------------------------------------------------- velocity terms of Φ̈
@njit
def point_bias(wa, wb, ra, rb):
    """Velocity part of ``Δ̈``: ``ω_b×(ω_b×ρ_b) − ω_a×(ω_a×ρ_a)``."""
    sb = spin2(wb, rb)
    sa = spin2(wa, ra)
    return (sb[0] - sa[0], sb[1] - sa[1], sb[2] - sa[2])


@njit
def point_rate(va, vb, wa, wb, ra, rb):
    """``Δ̇ = u̇_b + ω_b × ρ_b − u̇_a − ω_a × ρ_a``."""
    cb = cross(wb, rb)
    ca = cross(wa, ra)
    return (vb[0] + cb[0] - va[0] - ca[0], vb[1] + cb[1] - va[1] - ca[1], vb[2] + cb[2] - va[2] - ca[2])


@njit
def perpendicular_bias(wa, wb, x, y):
    """Velocity part of ``d²(x·y)/dt²``: ``(ω_a×(ω_a×x))·y + 2 (ω_a×x)·(ω_b×y) + x·(ω_b×(ω_b×y))``."""
    return dot(spin2(wa, x), y) + 2.0 * dot(cross(wa, x), cross(wb, y)) + dot(x, spin2(wb, y))


@njit
def line_bias(wa, n, d, dd, ddv):
    """Velocity part of ``d²(Δ·n)/dt²`` (n fixed in a): ``Δ̈_v·n + 2 Δ̇·(ω_a×n) + Δ·(ω_a×(ω_a×n))``."""
    return dot(ddv, n) + 2.0 * dot(dd, cross(wa, n)) + dot(d, spin2(wa, n))


@njit
def distance_bias(d, dd, ddv):
    """Velocity part of ``d²|Δ|/dt²``: ``ê·Δ̈_v + (|Δ̇|² − (ê·Δ̇)²)/|Δ|``."""
    ell = math.sqrt(dot(d, d))
    ed = dot(d, dd) / ell
    return dot(d, ddv) / ell + (dot(dd, dd) - ed * ed) / ell
