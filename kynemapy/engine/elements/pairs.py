"""Compliant contact between two bodies: a sphere against a sphere, capsule or box; two capsules (docs/contact.md).

One element per candidate pair on two different bodies (the builder's filter,
:mod:`kynemapy.model.contact`): body 1's sphere centre ``p₁ = x₁ + R₁ s₁₀`` [m] against body
2's segment ``a–b`` (a capsule's axis; a sphere's centre twice), whose point closest to p₁ is
``p₂ = a + t (b − a)`` (t clamped to [0, 1]; inside, t moves with the bodies and its derivative
enters the tangent), or body 2's box, whose point closest to p₁ is its centre plus each
half-axis vector times the clamped coordinate of p₁ along it (:func:`pair_terms`);
``d = p₂ − p₁``, normal ``n = d / |d|`` (from body 1 to body 2), penetration
``δ = r₁ + r₂ − |d|`` [m], its rate ``δ̇ = −n · ḋ`` with ḋ the relative velocity of the two
bodies' material points p₂, p₁ (the time derivative of δ where t is inside, since
n ⟂ b − a there); the contact point ``c = (p₁ + p₂)/2 + (r₁ − r₂)/2 n`` (the middle of the
overlap on the line p₁–p₂), the slip ``v_t = (I − n nᵀ) v_rel`` of body 2's point at c relative to
body 1's.  The law is the plane contact's (:mod:`.contacts`): ``f_n = max(0, k δ^e + c w δ̇)``,
``f_t = −μ f_n v_t / √(|v_t|² + v_s²)``; body 2 gets ``F = f_n n + f_t`` at c, body 1 ``−F``.

The iteration matrix is the exact derivative of the residual, built column by column as 3×24
Jacobians with respect to ``(u₁, θ₁, u₂, θ₂ | u̇₁, ω₁, u̇₂, ω₂)`` (kernel scratch, no
allocation) and checked against differences in tests/verification/test_contact.py; the small
helpers below are compiled functions of their own, not inlined: inlined at their twenty call
sites they made the contact unit's first compilation 19.5 s of CPU instead of 9.

A capsule against a capsule (body 1's segment ``a₁–b₁``: ``offset[0]``, ``offset[3]``, which
differ; for every other pair row 3 repeats row 0 and the code above runs as it did): p₁ and p₂
are the closest points of the two segments, ``p₁ = a₁ + s (b₁ − a₁)``, ``p₂ = a₂ + t (b₂ − a₂)``
(:func:`segment_points`), the rest as above; s and t where strictly inside move with the bodies
and their sensitivities (:func:`_segment_rates`) enter ``δp₁`` and ``δp₂`` as t does.  Each pair
is a 12×12 block on its two nodes, in the Newton pattern from the start: the pattern holds every
candidate pair.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.engine.elements.contact_table import N_OUT
from kynemapy.engine.elements.contacts import terms as plane_terms
from kynemapy.engine.elements.table import add_element_block
from kynemapy.engine.params import P_GAMMA_PRIME, P_STIFFNESS
from kynemapy.math.quaternion import rot


@njit
def _cross_rows(a0, a1, a2, j, out, sign):
    """``out += sign · ã j`` for 3×24 ``j``, ``out``."""
    for c in range(24):
        x, y, z = j[0, c], j[1, c], j[2, c]
        out[0, c] += sign * (a1 * z - a2 * y)
        out[1, c] += sign * (a2 * x - a0 * z)
        out[2, c] += sign * (a0 * y - a1 * x)


@njit
def _skew_into(a0, a1, a2, out, col, sign):
    """``out[:, col:col+3] += sign · ã``."""
    out[0, col + 1] += -sign * a2
    out[0, col + 2] += sign * a1
    out[1, col] += sign * a2
    out[1, col + 2] += -sign * a0
    out[2, col] += -sign * a1
    out[2, col + 1] += sign * a0


@njit
def _eye_into(out, col, sign):
    """``out[:, col:col+3] += sign · I``."""
    for i in range(3):
        out[i, col + i] += sign


@njit
def _direction(q2, offset, box, is_box, k):
    """Direction ``k`` of body 2's shape at the current rotation ``q2``: a box's half-axis vector
    ``k``, or a segment's b − a [m]."""
    if is_box:
        return rot(q2, box[1 + k])
    a0, a1, a2 = rot(q2, offset[1])
    b0, b1, b2 = rot(q2, offset[2])
    return b0 - a0, b1 - a1, b2 - a2


@njit
def _is_segment(offset):
    """Whether body 1's shape is a segment (a capsule's axis): its ends ``offset[0]`` and
    ``offset[3]`` differ (a sphere's centre or a box corner: the same point twice)."""
    return offset[3, 0] != offset[0, 0] or offset[3, 1] != offset[0, 1] or offset[3, 2] != offset[0, 2]


@njit
def _axis(q, offset, a, b):
    """A segment's ``b − a`` [m] at the current rotation ``q``: rows ``a``, ``b`` of ``offset``."""
    a0, a1, a2 = rot(q, offset[a])
    b0, b1, b2 = rot(q, offset[b])
    return b0 - a0, b1 - a1, b2 - a2


@njit
def segment_points(q1, q2, x1, x2, offset):
    """The geometry of a capsule–capsule pair, as :func:`closest_points` returns it: the closest
    points ``p₁ = a₁ + s (b₁ − a₁)`` and ``p₂ = a₂ + t (b₂ − a₂)`` of the two segments (body 1's
    ends ``offset[0]``, ``offset[3]``, body 2's ``offset[1]``, ``offset[2]``), s, t clamped to
    [0, 1] (the clamped segment–segment algorithm: s from the two lines' closest points, clamped,
    t from s, and s again where t was clamped).  Parallel segments (sin² of their angle below
    1e-12): s is the middle of the interval of segment 1 that segment 2 overlaps (an end where
    they do not overlap), t from s, clamped.  ``free``: bit 0 t strictly inside (0, 1), bit 1 s
    strictly inside (never for parallel segments: s is held there)."""
    a10, a11, a12 = rot(q1, offset[0])
    e10, e11, e12 = _axis(q1, offset, 0, 3)
    sa0, sa1, sa2 = rot(q2, offset[1])
    e20, e21, e22 = _axis(q2, offset, 1, 2)
    r0 = x1[0] + a10 - x2[0] - sa0
    r1 = x1[1] + a11 - x2[1] - sa1
    r2 = x1[2] + a12 - x2[2] - sa2
    aa = e10 * e10 + e11 * e11 + e12 * e12
    ee = e20 * e20 + e21 * e21 + e22 * e22
    bb = e10 * e20 + e11 * e21 + e12 * e22
    c = e10 * r0 + e11 * r1 + e12 * r2
    f = e20 * r0 + e21 * r1 + e22 * r2
    denom = aa * ee - bb * bb
    parallel = denom <= 1e-12 * aa * ee
    if not parallel:
        s = min(max((bb * f - c * ee) / denom, 0.0), 1.0)
        t = (bb * s + f) / ee
        if t < 0.0:
            t = 0.0
            s = min(max(-c / aa, 0.0), 1.0)
        elif t > 1.0:
            t = 1.0
            s = min(max((bb - c) / aa, 0.0), 1.0)
    else:
        u0 = -c / aa  # segment 2's ends on segment 1's parameter
        u1 = (bb - c) / aa
        lo = max(0.0, min(u0, u1))
        hi = min(1.0, max(u0, u1))
        s = min(max(0.5 * (lo + hi), 0.0), 1.0)
        t = min(max((bb * s + f) / ee, 0.0), 1.0)
    free = 0
    if 0.0 < t < 1.0:
        free |= 1
    if not parallel and 0.0 < s < 1.0:
        free |= 2
    s10, s11, s12 = a10 + s * e10, a11 + s * e11, a12 + s * e12
    s20, s21, s22 = sa0 + t * e20, sa1 + t * e21, sa2 + t * e22
    p10, p11, p12 = x1[0] + s10, x1[1] + s11, x1[2] + s12
    wa0, wa1, wa2 = p10 - x2[0] - sa0, p11 - x2[1] - sa1, p12 - x2[2] - sa2
    d0, d1, d2 = x2[0] + s20 - p10, x2[1] + s21 - p11, x2[2] + s22 - p12
    dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    return (s10, s11, s12, sa0, sa1, sa2, wa0, wa1, wa2, s20, s21, s22, free, False, 1, False, d0, d1, d2, dist)


@njit
def _segment_rates(q1, q2, offset, d0, d1, d2, free, jd, jt, js):
    """The rows δt (``jt``) and δs (``js``) (12 position columns) of a capsule–capsule pair's
    free parameters (:func:`segment_points`), from ``jd`` (3, 24) the variation of
    ``d = p₂ − p₁`` at fixed s, t.  Inside, ``e₁·d = 0`` and ``e₂·d = 0``: with
    ``r₁ = e₁·δd + (e₁ × d)·δθ₁``, ``r₂ = e₂·δd + (e₂ × d)·δθ₂``, ``|e₁|² δs − (e₁·e₂) δt = r₁``
    and ``(e₁·e₂) δs − |e₂|² δt = r₂`` (a held parameter: its variation zero)."""
    e10, e11, e12 = _axis(q1, offset, 0, 3)
    e20, e21, e22 = _axis(q2, offset, 1, 2)
    aa = e10 * e10 + e11 * e11 + e12 * e12
    ee = e20 * e20 + e21 * e21 + e22 * e22
    bb = e10 * e20 + e11 * e21 + e12 * e22
    x1 = (e11 * d2 - e12 * d1, e12 * d0 - e10 * d2, e10 * d1 - e11 * d0)  # e₁ × d
    x2 = (e21 * d2 - e22 * d1, e22 * d0 - e20 * d2, e20 * d1 - e21 * d0)  # e₂ × d
    t_free = free & 1
    s_free = (free >> 1) & 1
    denom = aa * ee - bb * bb
    for cc in range(12):
        g1 = e10 * jd[0, cc] + e11 * jd[1, cc] + e12 * jd[2, cc]
        g2 = e20 * jd[0, cc] + e21 * jd[1, cc] + e22 * jd[2, cc]
        if 3 <= cc < 6:
            g1 += x1[cc - 3]
        if 9 <= cc < 12:
            g2 += x2[cc - 9]
        if t_free and s_free:
            js[cc] = (ee * g1 - bb * g2) / denom
            jt[cc] = (bb * g1 - aa * g2) / denom
        elif t_free:
            jt[cc] = -g2 / ee
        elif s_free:
            js[cc] = g1 / aa


@njit
def closest_points(q1, q2, x1, x2, offset, box):
    """The geometry of one pair (see :func:`pair_terms`; a capsule–capsule pair's from
    :func:`segment_points`): body 1's offset ``s₁`` (3 values), body
    2's centre offset ``s_c`` (3), ``w = p₁ − x₂ − s_c`` (3), body 2's offset ``s₂`` of p₂ (3),
    the bits of the free directions, whether body 2 is a box, how many directions it has,
    whether p₁ is inside the box, ``d = p₂ − p₁`` (3) and the signed distance [m] (negative:
    p₁ inside the box)."""
    if _is_segment(offset):  # capsule–capsule
        return segment_points(q1, q2, x1, x2, offset)
    s10, s11, s12 = rot(q1, offset[0])
    p1 = (x1[0] + s10, x1[1] + s11, x1[2] + s12)
    # body 2's closest point p₂ = x₂ + s_c + Σ ℓ_k e_k: a segment a–b (a sphere: a = b; one
    # direction, ℓ in [0, 1]) or a box (three half-axis directions, ℓ_k in [−1, 1])
    is_box = box[1, 0] != 0.0 or box[1, 1] != 0.0 or box[1, 2] != 0.0
    n_dir = 3 if is_box else 1
    sa0, sa1, sa2 = rot(q2, box[0] if is_box else offset[1])
    wa0, wa1, wa2 = p1[0] - x2[0] - sa0, p1[1] - x2[1] - sa1, p1[2] - x2[2] - sa2
    s20, s21, s22 = sa0, sa1, sa2
    lo = -1.0 if is_box else 0.0
    free = 0  # bit k: direction k strictly inside its range
    for k in range(n_dir):
        e0, e1, e2 = _direction(q2, offset, box, is_box, k)
        ee = e0 * e0 + e1 * e1 + e2 * e2
        tt = (wa0 * e0 + wa1 * e1 + wa2 * e2) / ee if ee > 0.0 else 0.0
        if lo < tt < 1.0:
            free |= 1 << k
        tt = min(max(tt, lo), 1.0)
        s20, s21, s22 = s20 + tt * e0, s21 + tt * e1, s22 + tt * e2
    inside = is_box and free == 7
    if inside:  # p₁ inside the box: p₂ on the nearest face (its coordinate ±1, the others free)
        best = 0
        depth = math.inf
        for k in range(3):
            e0, e1, e2 = _direction(q2, offset, box, is_box, k)
            ee = e0 * e0 + e1 * e1 + e2 * e2
            tt = (wa0 * e0 + wa1 * e1 + wa2 * e2) / ee
            if (1.0 - abs(tt)) * math.sqrt(ee) < depth:
                depth = (1.0 - abs(tt)) * math.sqrt(ee)
                best = k
        free = 7 & ~(1 << best)
        s20, s21, s22 = sa0, sa1, sa2
        for k in range(3):
            e0, e1, e2 = _direction(q2, offset, box, is_box, k)
            tt = (wa0 * e0 + wa1 * e1 + wa2 * e2) / (e0 * e0 + e1 * e1 + e2 * e2)
            if k == best:
                tt = -1.0 if tt < 0.0 else 1.0
            s20, s21, s22 = s20 + tt * e0, s21 + tt * e1, s22 + tt * e2
    p2 = (x2[0] + s20, x2[1] + s21, x2[2] + s22)
    d0, d1, d2 = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if inside:  # signed: d points out of the box, the normal n = d / dist into it
        dist = -dist
    return (s10, s11, s12, sa0, sa1, sa2, wa0, wa1, wa2, s20, s21, s22, free, is_box, n_dir, inside, d0, d1, d2, dist)


@njit
def pair_terms(q1, q2, x1, x2, v1, v2, t1, t2, offset, radius, box, par, gp, kappa, jac, res, mat, out):
    """Residual (12,) and iteration block (12, 12) of one pair; its state into ``out``.
    Returns whether it carries a force.  ``q_i`` (4,) rotation displacements, ``x_i`` (3,) node
    positions [m], ``v_i`` (6,), ``t_i`` (3, 3) rotation blocks of 𝒯; ``offset`` (4, 3) (see
    :class:`~kynemapy.engine.elements.pair_table.PairTable`: rows 0 and 3 differing make it a
    capsule–capsule pair); ``box`` (4, 3) body 2's box (centre offset, half-axis vectors; zeros: a
    segment); scratch ``jac`` (12, 3, 24).

    Body 2's point closest to p₁ is ``p₂ = x₂ + s_c + Σ_k ℓ_k e_k``: for a segment, s_c = s_a and
    one direction e = b − a with ℓ = t; for a box, s_c its centre and its three half-axis
    vectors e_k with ``ℓ_k = e_k·w / |e_k|²`` clamped to [−1, 1] (w = p₁ − x₂ − s_c).  Each ℓ_k
    strictly inside its range moves with the bodies (its row of ``jac[11]``); a clamped one
    does not.  Where p₁ is inside the box (every ℓ_k inside), p₂ is the point of the nearest
    face (that face's ℓ_k at ±1) and the distance is signed negative: the normal still points
    into the box and ``δ = r₁ + r₂ + |p₂ − p₁|`` (a box corner, of radius 0, in another box).
    Sensitivities are those of the outside case with the face's coordinate held.

    Capsule–capsule: p₁ slides along body 1's segment too (:func:`segment_points`); ``jac[11]``
    row 0 holds δt, row 1 δs (:func:`_segment_rates`), and δp₁ gains ``e₁ δs``."""
    for i in range(12):
        res[i] = 0.0
        for j in range(12):
            mat[i, j] = 0.0
    for i in range(N_OUT):
        out[i] = 0.0
    r1, r2 = radius[0], radius[1]
    (
        s10, s11, s12, sa0, sa1, sa2, wa0, wa1, wa2, s20, s21, s22, free, is_box, n_dir, _, d0, d1, d2, dist
    ) = closest_points(q1, q2, x1, x2, offset, box)  # fmt: skip
    p1 = (x1[0] + s10, x1[1] + s11, x1[2] + s12)
    p2 = (x2[0] + s20, x2[1] + s21, x2[2] + s22)
    out[0] = dist - r1 - r2
    if dist >= r1 + r2 or dist == 0.0:
        return False
    n0, n1, n2 = d0 / dist, d1 / dist, d2 / dist
    w10, w11, w12 = v1[3], v1[4], v1[5]
    w20, w21, w22 = v2[3], v2[4], v2[5]
    # ḋ = ṗ₂ − ṗ₁, ṗ_i = u̇_i + ω_i × s_i
    dd0 = (v2[0] + w21 * s22 - w22 * s21) - (v1[0] + w11 * s12 - w12 * s11)
    dd1 = (v2[1] + w22 * s20 - w20 * s22) - (v1[1] + w12 * s10 - w10 * s12)
    dd2 = (v2[2] + w20 * s21 - w21 * s20) - (v1[2] + w10 * s11 - w11 * s10)
    delta = r1 + r2 - dist
    delta_dot = -(n0 * dd0 + n1 * dd1 + n2 * dd2)
    k, ex, cd, mu, vs = par[0], par[1], par[2], par[4], par[5]
    de = delta**ex
    de1 = ex * delta ** (ex - 1.0)
    hc = par[3] != 0.0
    wgt = de if hc else 1.0
    fn = k * de + cd * wgt * delta_dot
    if fn <= 0.0:
        return False
    dfn_d = k * de1 + (cd * de1 * delta_dot if hc else 0.0)
    dfn_dd = cd * wgt
    # contact point, lever arms, relative velocity and slip
    half = 0.5 * (r1 - r2)
    c0 = 0.5 * (p1[0] + p2[0]) + half * n0
    c1 = 0.5 * (p1[1] + p2[1]) + half * n1
    c2 = 0.5 * (p1[2] + p2[2]) + half * n2
    a10, a11, a12 = c0 - x1[0], c1 - x1[1], c2 - x1[2]
    a20, a21, a22 = c0 - x2[0], c1 - x2[1], c2 - x2[2]
    vr0 = (v2[0] + w21 * a22 - w22 * a21) - (v1[0] + w11 * a12 - w12 * a11)
    vr1 = (v2[1] + w22 * a20 - w20 * a22) - (v1[1] + w12 * a10 - w10 * a12)
    vr2 = (v2[2] + w20 * a21 - w21 * a20) - (v1[2] + w10 * a11 - w11 * a10)
    vrn = n0 * vr0 + n1 * vr1 + n2 * vr2
    vt0, vt1, vt2 = vr0 - vrn * n0, vr1 - vrn * n1, vr2 - vrn * n2
    slip2 = vt0 * vt0 + vt1 * vt1 + vt2 * vt2
    rho = math.sqrt(slip2 + vs * vs)
    mur = mu / rho
    ef0, ef1, ef2 = n0 - mur * vt0, n1 - mur * vt1, n2 - mur * vt2
    f0, f1, f2 = fn * ef0, fn * ef1, fn * ef2
    out[1] = fn
    out[2], out[3], out[4] = f0 - fn * n0, f1 - fn * n1, f2 - fn * n2
    out[5] = math.sqrt(slip2)
    # residual: −F₁ = F, −M₁ = a₁ × F, −F₂ = −F, −M₂ = −a₂ × F
    res[0], res[1], res[2] = f0, f1, f2
    res[3], res[4], res[5] = a11 * f2 - a12 * f1, a12 * f0 - a10 * f2, a10 * f1 - a11 * f0
    res[6], res[7], res[8] = -f0, -f1, -f2
    res[9], res[10], res[11] = -(a21 * f2 - a22 * f1), -(a22 * f0 - a20 * f2), -(a20 * f1 - a21 * f0)

    # Jacobians (3, 24) over (u₁, θ₁, u₂, θ₂ | u̇₁, ω₁, u̇₂, ω₂)
    for m in range(jac.shape[0]):
        for i in range(3):
            for cc in range(24):
                jac[m, i, cc] = 0.0
    jd = jac[0]  # δd
    _eye_into(jd, 6, 1.0)
    _skew_into(s20, s21, s22, jd, 9, -1.0)
    _eye_into(jd, 0, -1.0)
    _skew_into(s10, s11, s12, jd, 3, 1.0)
    seg = _is_segment(offset)
    s_free = seg and ((free >> 1) & 1) == 1
    if seg:  # capsule–capsule: δt (row 0 of jac[11]) and δs (row 1) from d at fixed s, t
        _segment_rates(q1, q2, offset, d0, d1, d2, free, jd, jac[11, 0], jac[11, 1])
    for k in range(n_dir):  # δℓ_k of a free direction (row k of jac[11]): δp₂ gains e_k δℓ_k
        if not (free >> k) & 1 or seg:
            continue
        jt = jac[11, k]
        # δℓ = [eᵀ δp₁ − eᵀ δu₂ + (e × s_c − w × e)ᵀ δθ₂] / |e|², w = p₁ − (x₂ + s_c)
        e0, e1, e2 = _direction(q2, offset, box, is_box, k)
        ee = e0 * e0 + e1 * e1 + e2 * e2
        ev = (e0, e1, e2)
        xs = (e1 * s12 - e2 * s11, e2 * s10 - e0 * s12, e0 * s11 - e1 * s10)  # e × s₁
        ea = (e1 * sa2 - e2 * sa1, e2 * sa0 - e0 * sa2, e0 * sa1 - e1 * sa0)  # e × s_c
        we = (wa1 * e2 - wa2 * e1, wa2 * e0 - wa0 * e2, wa0 * e1 - wa1 * e0)  # w × e
        for j in range(3):
            jt[j] = ev[j] / ee
            jt[3 + j] = -xs[j] / ee
            jt[6 + j] = -ev[j] / ee
            jt[9 + j] = (ea[j] - we[j]) / ee
    for k in range(n_dir):
        if not (free >> k) & 1:
            continue
        jt = jac[11, k]
        e0, e1, e2 = _direction(q2, offset, box, is_box, k)
        for cc in range(12):
            jd[0, cc] += e0 * jt[cc]
            jd[1, cc] += e1 * jt[cc]
            jd[2, cc] += e2 * jt[cc]
    if s_free:  # δp₁ gains e₁ δs: δd loses it
        js = jac[11, 1]
        f0_, f1_, f2_ = _axis(q1, offset, 0, 3)
        for cc in range(12):
            jd[0, cc] -= f0_ * js[cc]
            jd[1, cc] -= f1_ * js[cc]
            jd[2, cc] -= f2_ * js[cc]
    jdd = jac[1]  # δḋ: position −ω̃ s̃ per θ, velocity I, −s̃ per (u̇, ω)
    for side in range(2):
        sg = 1.0 if side == 1 else -1.0
        s0, s1, s2 = (s20, s21, s22) if side == 1 else (s10, s11, s12)
        w0, w1, w2 = (w20, w21, w22) if side == 1 else (w10, w11, w12)
        col = 6 * side
        # −ω̃ s̃ column j: −ω × (s × e_j)
        for j in range(3):
            e = (1.0 if j == 0 else 0.0, 1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0)
            x0_, x1_, x2_ = s1 * e[2] - s2 * e[1], s2 * e[0] - s0 * e[2], s0 * e[1] - s1 * e[0]
            jdd[0, col + 3 + j] += -sg * (w1 * x2_ - w2 * x1_)
            jdd[1, col + 3 + j] += -sg * (w2 * x0_ - w0 * x2_)
            jdd[2, col + 3 + j] += -sg * (w0 * x1_ - w1 * x0_)
        _eye_into(jdd, 12 + col, sg)
        _skew_into(s0, s1, s2, jdd, 12 + col + 3, -sg)
    for k in range(n_dir):  # ṗ₂ = u̇₂ + ω₂ × s₂ with s₂ = s_c + Σ ℓ_k e_k: + (ω₂ × e_k) δℓ_k
        if not (free >> k) & 1:
            continue
        jt = jac[11, k]
        e0, e1, e2 = _direction(q2, offset, box, is_box, k)
        we0, we1, we2 = w21 * e2 - w22 * e1, w22 * e0 - w20 * e2, w20 * e1 - w21 * e0
        for cc in range(12):
            jdd[0, cc] += we0 * jt[cc]
            jdd[1, cc] += we1 * jt[cc]
            jdd[2, cc] += we2 * jt[cc]
    if s_free:  # ṗ₁ = u̇₁ + ω₁ × s₁ with s₁ = s_a + s e₁: ḋ loses (ω₁ × e₁) δs
        js = jac[11, 1]
        f0_, f1_, f2_ = _axis(q1, offset, 0, 3)
        we0, we1, we2 = w11 * f2_ - w12 * f1_, w12 * f0_ - w10 * f2_, w10 * f1_ - w11 * f0_
        for cc in range(12):
            jdd[0, cc] -= we0 * js[cc]
            jdd[1, cc] -= we1 * js[cc]
            jdd[2, cc] -= we2 * js[cc]
    jn = jac[2]  # δn = (I − n nᵀ)/|d| δd
    nn = (n0, n1, n2)
    for i in range(3):
        for cc in range(24):
            jn[i, cc] = (jd[i, cc] - nn[i] * (n0 * jd[0, cc] + n1 * jd[1, cc] + n2 * jd[2, cc])) / dist
    jfn = jac[3]  # δf_n in row 0
    for cc in range(24):
        ddelta = -(n0 * jd[0, cc] + n1 * jd[1, cc] + n2 * jd[2, cc])
        ddot = -(dd0 * jn[0, cc] + dd1 * jn[1, cc] + dd2 * jn[2, cc]) - (
            n0 * jdd[0, cc] + n1 * jdd[1, cc] + n2 * jdd[2, cc]
        )
        jfn[0, cc] = dfn_d * ddelta + dfn_dd * ddot
    ja1 = jac[4]  # δa₁ = δc − δu₁; δc = (δp₁ + δp₂)/2 + (r₁ − r₂)/2 δn
    ja2 = jac[5]
    for i in range(3):
        for cc in range(24):
            ja1[i, cc] = half * jn[i, cc]
    _eye_into(ja1, 0, 0.5)
    _skew_into(s10, s11, s12, ja1, 3, -0.5)
    _eye_into(ja1, 6, 0.5)
    _skew_into(s20, s21, s22, ja1, 9, -0.5)
    for k in range(n_dir):
        if not (free >> k) & 1:
            continue
        jt = jac[11, k]
        e0, e1, e2 = _direction(q2, offset, box, is_box, k)
        for cc in range(12):
            ja1[0, cc] += 0.5 * e0 * jt[cc]
            ja1[1, cc] += 0.5 * e1 * jt[cc]
            ja1[2, cc] += 0.5 * e2 * jt[cc]
    if s_free:
        js = jac[11, 1]
        f0_, f1_, f2_ = _axis(q1, offset, 0, 3)
        for cc in range(12):
            ja1[0, cc] += 0.5 * f0_ * js[cc]
            ja1[1, cc] += 0.5 * f1_ * js[cc]
            ja1[2, cc] += 0.5 * f2_ * js[cc]
    for i in range(3):
        for cc in range(24):
            ja2[i, cc] = ja1[i, cc]
    _eye_into(ja1, 0, -1.0)
    _eye_into(ja2, 6, -1.0)
    jvr = jac[6]  # δv_rel
    _eye_into(jvr, 12, -1.0)
    _skew_into(a10, a11, a12, jvr, 15, 1.0)
    _eye_into(jvr, 18, 1.0)
    _skew_into(a20, a21, a22, jvr, 21, -1.0)
    _cross_rows(w20, w21, w22, ja2, jvr, 1.0)
    _cross_rows(w10, w11, w12, ja1, jvr, -1.0)
    jvt = jac[7]  # δv_t = (I − n nᵀ) δv_rel − ((n·v_rel) I + n v_relᵀ) δn
    for cc in range(24):
        pn = n0 * jvr[0, cc] + n1 * jvr[1, cc] + n2 * jvr[2, cc]
        vn = vr0 * jn[0, cc] + vr1 * jn[1, cc] + vr2 * jn[2, cc]
        for i in range(3):
            jvt[i, cc] = jvr[i, cc] - nn[i] * pn - vrn * jn[i, cc] - nn[i] * vn
    jf = jac[8]  # δF = e_f δf_n + f_n δn − μ f_n (I/ρ − v_t v_tᵀ/ρ³) δv_t
    vt = (vt0, vt1, vt2)
    ef = (ef0, ef1, ef2)
    scale = mu * fn
    for cc in range(24):
        tv = vt0 * jvt[0, cc] + vt1 * jvt[1, cc] + vt2 * jvt[2, cc]
        for i in range(3):
            jf[i, cc] = (
                ef[i] * jfn[0, cc] + fn * jn[i, cc] - scale * (jvt[i, cc] / rho - vt[i] * tv / (rho * rho * rho))
            )
    # rows: 0 +δF, 1 δ(a₁ × F) = ã₁ δF − F̃ δa₁, 2 −δF, 3 −(ã₂ δF − F̃ δa₂)
    jm1 = jac[9]
    jm2 = jac[10]
    _cross_rows(a10, a11, a12, jf, jm1, 1.0)
    _cross_rows(f0, f1, f2, ja1, jm1, -1.0)
    _cross_rows(a20, a21, a22, jf, jm2, -1.0)
    _cross_rows(f0, f1, f2, ja2, jm2, 1.0)
    for blk in range(4):
        src = jf if blk == 0 or blk == 2 else (jm1 if blk == 1 else jm2)
        sgn = -1.0 if blk == 2 else 1.0
        for i in range(3):
            row = 3 * blk + i
            for cc in range(12):  # velocity columns: γ′ G
                mat[row, cc] = gp * sgn * src[i, 12 + cc]
            for side in range(2):  # position columns: κ K, rotations through 𝒯
                tr = t1 if side == 0 else t2
                for j in range(3):
                    acc = 0.0
                    for m in range(3):
                        acc += src[i, 6 * side + 3 + m] * tr[m, j]
                    mat[row, 6 * side + j] += kappa * sgn * src[i, 6 * side + j]
                    mat[row, 6 * side + 3 + j] += kappa * sgn * acc
    return True


@njit(inline=True)
def terms(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """Residual and matrix of every candidate pair of the table ``t`` (those in contact added into
    the Newton system); the signature of every table kernel (:mod:`kynemapy.engine.elements`)."""
    gp = p[P_GAMMA_PRIME]
    kappa = p[P_STIFFNESS]
    x1 = s3[6]
    x2 = s3[7]
    for e in range(t.nodes.shape[0]):
        n1 = t.nodes[e, 0]
        n2 = t.nodes[e, 1]
        for i in range(3):
            x1[i] = x0[n1, i] + q[n1, i]
            x2[i] = x0[n2, i] + q[n2, i]
        if pair_terms(
            q[n1, 3:7], q[n2, 3:7], x1, x2, v[n1], v[n2], tangent[n1], tangent[n2], t.offset[e], t.radius[e],
            t.box[e], t.param[e], gp, kappa, t.jac, t.res[e], t.mat[e], t.out[e],
        ):  # fmt: skip
            add_element_block(t, e, c, vals, b)


@njit
def contact_phase(t, tp, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """The plane contacts ``t`` (:func:`.contacts.terms`) and the sphere pairs ``tp``
    (:func:`terms`) as the engine's contact unit (:mod:`kynemapy.engine.unit_call`): compiled on
    its own, the first time a model has contact, and called through its address; returns 0."""
    plane_terms(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b)
    terms(tp, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b)
    return 0
