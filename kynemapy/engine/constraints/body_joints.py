"""Two-body joints (ball, hinge, slider, cylindrical, universal, planar, weld, distance, point on a
line, point on a plane, generic).

Each joint is a short list of the primitive rows of :mod:`.primitives`, the classic
composition (see docs/joints.md):

=============== ==== ==========================================================
joint           rows rows
=============== ==== ==========================================================
ball            3    points coincide
hinge           5    points coincide; a₁ ⊥ b₂, a₁ ⊥ b₃
slider          5    b's point on a's line (·a₂, ·a₃); a₁ ⊥ b₂, a₁ ⊥ b₃, a₂ ⊥ b₃
cylindrical     4    b's point on a's line (·a₂, ·a₃); a₁ ⊥ b₂, a₁ ⊥ b₃
universal       4    points coincide; a₁·b₁ = cos α (``param``)
planar          3    b's point in a's plane (·a₁); a₁ ⊥ b₂, a₁ ⊥ b₃
weld            6    points coincide; a₁ ⊥ b₂, a₁ ⊥ b₃, a₂ ⊥ b₃
distance        1    |p_b − p_a| = L
point on line   2    b's point on a's line (·a₂, ·a₃)
point on plane  1    b's point in a's plane (·a₁)
generic         1-6  the rows of the locked directions (kinds.generic_rows)
=============== ==== ==========================================================

``aᵢ = R_a geom[0, i]``, ``bᵢ = R_b geom[1, i]`` are axes fixed in the base (a) and target
(b) sides; ``geom[s, 0]`` is the offset of side s's joint point from its node, all in world
coordinates at the reference configuration (for the ground side: the world point itself).
The table :data:`PRIMITIVES` holds that composition; one generic kernel walks it.  The
point-on-line, point-on-plane and generic joints carry their own list in ``axes``
(:func:`row_spec`), mirrored when the joint was given with ``body_b`` the ground (then a
LINE row becomes LINE_ON_TARGET, the LINE row with the sides exchanged).

The same exact gradient serves both tangent modes (Kynema has no such joints to copy);
``with_k`` adds K^Φ and the stiffness of the input torque (hinge) or force (slider).
"""

from __future__ import annotations

import math

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.constraints.joint_unit import (  # where the drives' parameters live
    SERVO_FEEDFORWARD,
    SERVO_KD,
    SERVO_KP,
    SERVO_LIMIT,
    SERVO_POSITION,
    SERVO_RATE,
)
from kynemapy.engine.constraints.primitives import (
    I0,
    I1,
    I3,
    add_skew,
    distance_bias,
    distance_row,
    joint_points,
    line_bias,
    line_force,
    line_force_stiffness,
    line_row,
    perpendicular_bias,
    perpendicular_row,
    point_bias,
    point_rate,
    point_rows,
)
from kynemapy.math.quaternion import rot
from kynemapy.math.vectors import cross, dot
from kynemapy.model import kinds
from kynemapy.model.kinds import HINGE_JOINT, LISTED_ROWS, SLIDER_JOINT, UNIVERSAL_JOINT

POINT = kinds.ROW_POINT  #: three rows, the joint points coincide
PERPENDICULAR = kinds.ROW_PERPENDICULAR  #: one row, axis i of a ⊥ axis j of b (universal: aᵢ·bⱼ = cos α)
LINE = kinds.ROW_LINE  #: one row, b's point stays on the plane of a with normal axis i
DISTANCE = kinds.ROW_DISTANCE  #: one row, |p_b − p_a| = L
LINE_ON_TARGET = kinds.ROW_LINE_ON_TARGET  #: one row, a's point stays on the plane of b with normal axis j

_SPEC = {
    kinds.BALL_JOINT: [(POINT, 0, 0)],
    kinds.HINGE_JOINT: [(POINT, 0, 0), (PERPENDICULAR, 1, 2), (PERPENDICULAR, 1, 3)],
    kinds.SLIDER_JOINT: [
        (LINE, 2, 0),
        (LINE, 3, 0),
        (PERPENDICULAR, 1, 2),
        (PERPENDICULAR, 1, 3),
        (PERPENDICULAR, 2, 3),
    ],
    kinds.CYLINDRICAL_JOINT: [(LINE, 2, 0), (LINE, 3, 0), (PERPENDICULAR, 1, 2), (PERPENDICULAR, 1, 3)],
    kinds.UNIVERSAL_JOINT: [(POINT, 0, 0), (PERPENDICULAR, 1, 1)],  # a₁·b₁ − cos α
    kinds.PLANAR_JOINT: [(LINE, 1, 0), (PERPENDICULAR, 1, 2), (PERPENDICULAR, 1, 3)],
    kinds.WELD_JOINT: [(POINT, 0, 0), (PERPENDICULAR, 1, 2), (PERPENDICULAR, 1, 3), (PERPENDICULAR, 2, 3)],
    kinds.DISTANCE_CONSTRAINT: [(DISTANCE, 0, 0)],
}

#: (kind, primitive slot, (type, axis of a, axis of b)); type 0 ends the list
PRIMITIVES = np.zeros((len(kinds.N_ROWS), 6, 3), dtype=np.int64)
for _kind, _rows in _SPEC.items():
    PRIMITIVES[_kind, : len(_rows)] = _rows
    assert sum(3 if t == POINT else 1 for t, _, _ in _rows) == kinds.N_ROWS[_kind]
PRIMITIVES.setflags(write=False)


@njit
def row_spec(kind, axes, slot):
    """``(type, axis of a, axis of b)`` of primitive ``slot`` (type 0: no more rows): from the kind's
    table, or for the point-on-line, point-on-plane and generic joints from their own row list in
    ``axes`` (3, 3) (:func:`kynemapy.model.kinds.encode_rows`)."""
    if kind >= LISTED_ROWS:
        code = np.int64(axes[slot // 3, slot % 3])
        return code // 16, (code // 4) % 4, code % 4
    return PRIMITIVES[kind, slot, 0], PRIMITIVES[kind, slot, 1], PRIMITIVES[kind, slot, 2]


@njit
def swap_sides(k):
    """Exchange the node blocks of K^Φ (``k[x, y] ↔ k[1 − x, 1 − y]``)."""
    for x in range(2):
        for i in range(6):
            for j in range(6):
                t = k[0, x, i, j]
                k[0, x, i, j] = k[1, 1 - x, i, j]
                k[1, 1 - x, i, j] = t


@njit
def body_joint(kind, X0, axes, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k):
    """Φ, ``B_b``, ``B_t`` and (``with_k``) K^Φ (2, 2, 6, 6) of a two-body joint.

    ``X0`` (3,) = X_b − X_a [m] (X_a = 0 for the ground); ``axes`` (3, 3) the row list of the
    kinds that have one (:func:`row_spec`); ``geom`` (2, 4, 3) joint point offsets [m] and
    axes; ``param`` the distance constraint's length [m] or cos α of a universal joint's axes;
    ``inputs[0]`` the hinge torque [N m] or slider force [N] (its stiffness enters K^Φ).  The
    arrays are expected zeroed (:func:`~kynemapy.engine.constraints.dispatch.evaluate`
    does it).
    """
    ra, rb, d = joint_points(X0, geom, qb, qt)
    row = np.int64(0)  # not a literal: the row kernels then compile once, for int64
    for slot in range(6):
        typ, ia, ib = row_spec(kind, axes, slot)
        if typ == 0:
            break
        if typ == POINT:
            point_rows(row, ra, rb, d, lam, with_k, phi, bb, bt, k)
            row += 3
        elif typ == PERPENDICULAR:
            x = rot(qb[3:7], geom[0, ia])
            y = rot(qt[3:7], geom[1, ib])
            perpendicular_row(row, x, y, lam, with_k, phi, bb, bt, k)
            if kind == UNIVERSAL_JOINT:
                phi[row] -= param
            row += 1
        elif typ == LINE:
            n = rot(qb[3:7], geom[0, ia])
            line_row(row, n, ra, rb, d, lam, with_k, phi, bb, bt, k)
            row += 1
        elif typ == LINE_ON_TARGET:
            # the LINE row with the sides exchanged: Φ = (p_a − p_b)·n, n fixed in b
            n = rot(qt[3:7], geom[1, ib])
            md = (-d[0], -d[1], -d[2])
            if with_k:
                swap_sides(k)
            line_row(row, n, rb, ra, md, lam, with_k, phi, bt, bb, k)
            if with_k:
                swap_sides(k)
            row += 1
        else:
            distance_row(row, param, ra, rb, d, lam, with_k, phi, bb, bt, k)
            row += 1
    if with_k:
        input_stiffness(kind, geom, inputs[0], qb, ra, rb, d, k)


@njit
def input_stiffness(kind, geom, value, qb, ra, rb, d, k):
    """Derivative of :func:`input_load` (added to K^Φ in the exact tangent)."""
    if value == 0.0:
        return
    n = rot(qb[3:7], geom[0, 1])
    if kind == HINGE_JOINT:
        # residual −τ n on b, +τ n on a, n = R_a a₁:  ∂/∂θ_a
        add_skew(k, I1, I0, I3, I3, value, n)
        add_skew(k, I0, I0, I3, I3, -value, n)
    elif kind == SLIDER_JOINT:
        w = (d[0] + ra[0], d[1] + ra[1], d[2] + ra[2])
        line_force_stiffness(n, rb, w, -value, k)


@njit
def input_load(kind, X0, geom, value, qb, qt, out):
    """Residual contribution (2, 6) of a hinge torque or slider force: ``out[0]`` base, ``out[1]`` target.

    Hinge: torque τ [N m] about ``n = R_a a₁`` on b and −τ on a (residual: ``−τ n`` on b's
    moment rows, ``+τ n`` on a's).  Slider: force F [N] along ``n`` on b at its joint point
    and −F n on a at the same point.  The residual holds minus the applied loads.  Other
    kinds: zeros.
    """
    for s in range(2):
        for i in range(6):
            out[s, i] = 0.0
    if kind != HINGE_JOINT and kind != SLIDER_JOINT:
        return
    n = rot(qb[3:7], geom[0, 1])
    if kind == HINGE_JOINT:
        for i in range(3):
            out[1, 3 + i] = -value * n[i]
            out[0, 3 + i] = value * n[i]
    else:
        ra, rb, d = joint_points(X0, geom, qb, qt)
        w = (d[0] + ra[0], d[1] + ra[1], d[2] + ra[2])
        line_force(n, rb, w, -value, out)


@njit
def body_joint_bias(kind, X0, axes, geom, param, qb, qt, vb, vt, gamma):
    """Velocity part γ (6,) of Φ̈ = B v̇ + γ for a two-body joint (rows beyond n_rows zero)."""
    for i in range(6):
        gamma[i] = 0.0
    wa = (vb[3], vb[4], vb[5])
    wb = (vt[3], vt[4], vt[5])
    ua = (vb[0], vb[1], vb[2])
    ub = (vt[0], vt[1], vt[2])
    ra, rb, d = joint_points(X0, geom, qb, qt)
    dd = point_rate(ua, ub, wa, wb, ra, rb)
    ddv = point_bias(wa, wb, ra, rb)
    row = np.int64(0)  # not a literal: the row kernels then compile once, for int64
    for slot in range(6):
        typ, ia, ib = row_spec(kind, axes, slot)
        if typ == 0:
            break
        if typ == POINT:
            for i in range(3):
                gamma[row + i] = ddv[i]
            row += 3
        elif typ == PERPENDICULAR:
            x = rot(qb[3:7], geom[0, ia])
            y = rot(qt[3:7], geom[1, ib])
            gamma[row] = perpendicular_bias(wa, wb, x, y)
            row += 1
        elif typ == LINE:
            n = rot(qb[3:7], geom[0, ia])
            gamma[row] = line_bias(wa, n, d, dd, ddv)
            row += 1
        elif typ == LINE_ON_TARGET:
            n = rot(qt[3:7], geom[1, ib])
            md = (-d[0], -d[1], -d[2])
            mdd = (-dd[0], -dd[1], -dd[2])
            mddv = (-ddv[0], -ddv[1], -ddv[2])
            gamma[row] = line_bias(wb, n, md, mdd, mddv)
            row += 1
        else:
            gamma[row] = distance_bias(d, dd, ddv)
            row += 1


@njit
def wrap_angle(x):
    """``x`` mapped to [−π, π)."""
    return x - 2.0 * math.pi * math.floor((x + math.pi) / (2.0 * math.pi))


@njit
def body_joint_output(kind, X0, geom, qb, qt, vb, vt, vdb, vdt, out):
    """Hinge: relative angle [rad] (continued from ``out[0]``, so unwrapped), rate [rad/s] and
    acceleration [rad/s²] of b about ``n = R_a a₁``; slider: displacement ``Δ·n`` [m], its rate
    [m/s] and acceleration [m/s²].  Other kinds: left as they are (zeros)."""
    if kind != HINGE_JOINT and kind != SLIDER_JOINT:
        return
    wa = (vb[3], vb[4], vb[5])
    wb = (vt[3], vt[4], vt[5])
    ala = (vdb[3], vdb[4], vdb[5])
    alb = (vdt[3], vdt[4], vdt[5])
    n = rot(qb[3:7], geom[0, 1])
    wan = cross(wa, n)
    if kind == HINGE_JOINT:
        a2 = rot(qb[3:7], geom[0, 2])
        a3 = rot(qb[3:7], geom[0, 3])
        b2 = rot(qt[3:7], geom[1, 2])
        raw = math.atan2(dot(a3, b2), dot(a2, b2))
        out[0] = out[0] + wrap_angle(raw - out[0])
        wr = (wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2])
        out[1] = dot(n, wr)
        out[2] = dot(wan, wr) + dot(n, (alb[0] - ala[0], alb[1] - ala[1], alb[2] - ala[2]))
        return
    ua = (vb[0], vb[1], vb[2])
    ub = (vt[0], vt[1], vt[2])
    aa = (vdb[0], vdb[1], vdb[2])
    ab = (vdt[0], vdt[1], vdt[2])
    ra, rb, d = joint_points(X0, geom, qb, qt)
    dd = point_rate(ua, ub, wa, wb, ra, rb)
    ddv = point_bias(wa, wb, ra, rb)
    cb = cross(alb, rb)
    ca = cross(ala, ra)
    ddd = (
        ab[0] + cb[0] - aa[0] - ca[0] + ddv[0],
        ab[1] + cb[1] - aa[1] - ca[1] + ddv[1],
        ab[2] + cb[2] - aa[2] - ca[2] + ddv[2],
    )
    out[0] = dot(d, n)
    out[1] = dot(dd, n) + dot(d, wan)
    nd2 = cross(ala, n)
    nd2w = cross(wa, wan)
    out[2] = dot(ddd, n) + 2.0 * dot(dd, wan) + dot(d, (nd2[0] + nd2w[0], nd2[1] + nd2w[1], nd2[2] + nd2w[2]))


# ---------------------------------------------------------------- drives (hinge and slider)
@njit
def drive_law(x, rate, axes, inputs):
    """The joint's total torque [N m] (force [N]) ``τ`` at position ``x`` [rad or m] and rate
    ``rate``, and its exact derivatives ``(τ, ∂τ/∂x, ∂τ/∂ẋ)``::

        τ = τ_in − k (x − x₀) − c ẋ + sat(k_p (x_ref − x) + k_d (ẋ_ref − ẋ) + τ_ff) − F_c tanh(ẋ / v_s)
            + τ_lim

    ``sat`` clips to ``±limit`` (no clip for limit 0; on the clipped branch its derivatives are
    zero).  ``τ_lim`` is the compliant travel limit, 0 between the stops and past one
    ``−k_l δ − sat(c_l ẋ)``, δ = x − stop, ``sat`` clipping the damper's force to ``±k_l |δ|``
    (continuous at the stop, so that the step's equation has a root; the stop never pulls, and
    pushes at most ``2 k_l |δ|``); on a clipped branch the damper's derivatives are zero.
    ``axes`` (3, 3) and ``inputs`` (7,) hold the parameters (``DRIVE_*``, ``LIMIT_*``, ``SERVO_*``)."""
    k = axes[0, 0]
    c = axes[0, 2]
    tau = inputs[0] - k * (x - axes[0, 1]) - c * rate
    dx = -k
    dr = -c
    kp = inputs[SERVO_KP]
    kd = inputs[SERVO_KD]
    u = kp * (inputs[SERVO_POSITION] - x) + kd * (inputs[SERVO_RATE] - rate) + inputs[SERVO_FEEDFORWARD]
    limit = inputs[SERVO_LIMIT]
    if limit > 0.0 and abs(u) > limit:
        u = limit if u > 0.0 else -limit
    else:
        dx -= kp
        dr -= kd
    tau += u
    fc = axes[1, 0]
    if fc != 0.0:
        vs = axes[1, 1]
        t = math.tanh(rate / vs)
        tau -= fc * t
        dr -= fc / vs * (1.0 - t * t)
    kl = axes[2, 2]
    if kl != 0.0 and (x > axes[2, 1] or x < axes[2, 0]):
        t_l, dx_l, dr_l = limit_law(x, rate, axes[2, 0], axes[2, 1], kl, axes[1, 2])
        tau += t_l
        dx += dx_l
        dr += dr_l
    return tau, dx, dr


@njit
def limit_law(x, rate, lower, upper, kl, cl):
    """A compliant stop's torque [N m] (force [N]) and its derivatives ``(τ_lim, ∂τ/∂x, ∂τ/∂ẋ)``
    for a position ``x`` past ``upper`` or below ``lower``: ``−k_l δ − sat(c_l ẋ)``, δ = x − stop,
    ``sat`` clipping the damper's force to ``±k_l |δ|`` (on a clipped branch its derivatives are
    zero).  Between the stops: zeros."""
    if not (x > upper or x < lower):
        return 0.0, 0.0, 0.0
    sgn = 1.0 if x > upper else -1.0
    spring = -kl * (x - (upper if sgn > 0.0 else lower))
    damper = -cl * rate
    cap = sgn * -spring  # |spring|: the damper's force is clipped to ±|spring|
    if damper > cap:
        return spring + cap, -kl + sgn * kl, 0.0
    if damper < -cap:
        return spring - cap, -kl - sgn * kl, 0.0
    return spring + damper, -kl, -cl


@njit
def add_drive_block(k, s, load, du, dphi):
    """``k[a, s] += load[a] ⊗ [du; dphi]`` for both sides a (``load`` (2, 6) the residual per unit
    torque, ``du``, ``dphi`` 3-tuples: the derivative of τ by side s's displacement and rotation)."""
    for a in range(2):
        for i in range(6):
            li = load[a, i]
            if li == 0.0:
                continue
            for j in range(3):
                k[a, s, i, j] += li * du[j]
                k[a, s, i, 3 + j] += li * dphi[j]


@njit
def solve_tangent(t, x):
    """``y`` with ``y·t = x`` (``t`` (3, 3) the rotation block of 𝒯 as stored, ``x`` a 3-tuple): the
    row that the assembly's product with 𝒯 turns back into ``x``."""
    a, b, c = t[0, 0], t[0, 1], t[0, 2]
    d, e, f = t[1, 0], t[1, 1], t[1, 2]
    g, h, i = t[2, 0], t[2, 1], t[2, 2]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    # y = x t⁻¹, t⁻¹ = adj(t) / det
    y0 = (x[0] * (e * i - f * h) + x[1] * (f * g - d * i) + x[2] * (d * h - e * g)) / det
    y1 = (x[0] * (c * h - b * i) + x[1] * (a * i - c * g) + x[2] * (b * g - a * h)) / det
    y2 = (x[0] * (b * f - c * e) + x[1] * (c * d - a * f) + x[2] * (a * e - b * d)) / det
    return (y0, y1, y2)


@njit
def drive_load(kind, X0, axes, geom, inputs, qb, qt, vb, vt, last, with_k, exact, tb, tt, gp, load, k):
    """Residual (2, 6) into ``load`` of a hinge's or slider's total torque or force ``τ``
    (:func:`drive_law`: its input, spring, damper, servo and friction) and, with ``with_k``, its
    exact derivative added to ``k`` (2, 2, 6, 6): with ``exact`` to K^Φ, which already holds the
    stiffness of the input torque (:func:`input_stiffness`), else to zeros (Kynema's tangent mode:
    the drive's whole tangent, input included).

    The joint position x (hinge angle continued from ``last``, the last output [rad]; slider
    displacement ``Δ·n``) and rate ẋ as :func:`body_joint_output`; the derivative of the
    residual ``τ L`` (``L`` the residual per unit τ) by the Newton increment is ``τ ∂L/∂q 𝒯 +
    L (∂τ/∂x ∂x/∂q 𝒯 + ∂τ/∂ẋ (∂ẋ/∂q 𝒯 + γ′ ∂ẋ/∂v))``: the K^Φ block is multiplied by 𝒯 in the
    assembly, so the velocity part enters as ``γ′ ∂ẋ/∂v 𝒯⁻¹`` (``tb``, ``tt`` the rotation
    blocks of 𝒯 of the base and target, ``gp`` γ′ [1/s])."""
    input_load(kind, X0, geom, 1.0, qb, qt, load)  # L
    n = rot(qb[3:7], geom[0, 1])
    wa = (vb[3], vb[4], vb[5])
    wb = (vt[3], vt[4], vt[5])
    ua = (vb[0], vb[1], vb[2])
    ub = (vt[0], vt[1], vt[2])
    ra, rb, d = joint_points(X0, geom, qb, qt)
    w = (d[0] + ra[0], d[1] + ra[1], d[2] + ra[2])
    wan = cross(wa, n)
    a2 = rot(qb[3:7], geom[0, 2])
    a3 = rot(qb[3:7], geom[0, 3])
    b2 = rot(qt[3:7], geom[1, 2])
    c2 = dot(a2, b2)
    c3 = dot(a3, b2)
    wr = (wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2])
    if kind == HINGE_JOINT:
        x = last + wrap_angle(math.atan2(c3, c2) - last)
        rate = dot(n, wr)
    else:
        x = dot(d, n)
        rate = dot(point_rate(ua, ub, wa, wb, ra, rb), n) + dot(d, wan)
    tau, tx, tr = drive_law(x, rate, axes, inputs)
    if with_k:
        if kind == HINGE_JOINT:
            # θ = atan2(a₃·b₂, a₂·b₂): ∂θ/∂φ_b = g, ∂θ/∂φ_a = −g; θ̇ = n·(ω_b − ω_a), n = R_a a₁
            p = cross(b2, a3)
            m = cross(b2, a2)
            den = c2 * c2 + c3 * c3
            g = ((c2 * p[0] - c3 * m[0]) / den, (c2 * p[1] - c3 * m[1]) / den, (c2 * p[2] - c3 * m[2]) / den)
            nw = cross(n, wr)
            vtt = solve_tangent(tt, n)
            zero = (0.0, 0.0, 0.0)
            add_drive_block(k, I1, load, zero, (tx * g[0] + tr * gp * vtt[0], tx * g[1] + tr * gp * vtt[1],
                                               tx * g[2] + tr * gp * vtt[2]))  # fmt: skip
            vtb = solve_tangent(tb, n)
            add_drive_block(k, I0, load, zero, (-tx * g[0] + tr * (nw[0] - gp * vtb[0]),
                                               -tx * g[1] + tr * (nw[1] - gp * vtb[1]),
                                               -tx * g[2] + tr * (nw[2] - gp * vtb[2])))  # fmt: skip
        else:
            # x = Δ·n: ∂x/∂(u_b, φ_b) = (n, ρ_b × n), ∂x/∂(u_a, φ_a) = (−n, n × w), w = p_b − x_a;
            # ẋ = n·(u̇_b − u̇_a) + ω_b·(ρ_b × n) + ω_a·(n × w): the same gradient by v, and by q
            # (u_b, φ_b): (ω_a × n, ρ_b × (n × ω_b + ω_a × n)); (u_a, φ_a): (−ω_a × n,
            # n × (u̇_b − u̇_a + ω_b × ρ_b + w × ω_a))
            rn = cross(rb, n)
            nwv = cross(n, w)
            nwb = cross(n, wb)
            rq = cross(rb, (nwb[0] + wan[0], nwb[1] + wan[1], nwb[2] + wan[2]))
            wbr = cross(wb, rb)
            ww = cross(w, wa)
            aq = cross(n, (ub[0] - ua[0] + wbr[0] + ww[0], ub[1] - ua[1] + wbr[1] + ww[1],
                           ub[2] - ua[2] + wbr[2] + ww[2]))  # fmt: skip
            vtt = solve_tangent(tt, rn)
            add_drive_block(
                k, I1, load,
                ((tx + tr * gp) * n[0] + tr * wan[0], (tx + tr * gp) * n[1] + tr * wan[1],
                 (tx + tr * gp) * n[2] + tr * wan[2]),
                (tx * rn[0] + tr * (rq[0] + gp * vtt[0]), tx * rn[1] + tr * (rq[1] + gp * vtt[1]),
                 tx * rn[2] + tr * (rq[2] + gp * vtt[2])),
            )  # fmt: skip
            vtb = solve_tangent(tb, nwv)
            add_drive_block(
                k, I0, load,
                (-(tx + tr * gp) * n[0] - tr * wan[0], -(tx + tr * gp) * n[1] - tr * wan[1],
                 -(tx + tr * gp) * n[2] - tr * wan[2]),
                (tx * nwv[0] + tr * (aq[0] + gp * vtb[0]), tx * nwv[1] + tr * (aq[1] + gp * vtb[1]),
                 tx * nwv[2] + tr * (aq[2] + gp * vtb[2])),
            )  # fmt: skip
        # τ ∂L/∂q (with exact, body_joint added τ_in's part)
        input_stiffness(kind, geom, tau - inputs[0] if exact else tau, qb, ra, rb, d, k)
    for s in range(2):
        for i in range(6):
            load[s, i] *= tau


# ---------------------------------------------------------------- the ball joint's cone limit
@njit
def cone_load(axes, geom, qb, qt, vb, vt, with_k, tb, tt, gp, load, k):
    """Residual (2, 6) into ``load`` of a ball joint's compliant cone limit and, with ``with_k``,
    its exact derivative added to ``k`` (2, 2, 6, 6) (as :func:`drive_load`).

    The cone: the angle φ = acos(a·b) between the axes ``a = R_a a₁`` and ``b = R_b b₁``
    (``geom[0, 1]``, ``geom[1, 1]``) stays below φ_max = ``axes[2, 1]``; past it by δ = φ − φ_max
    the torque ``τ = −k_l δ − sat(c_l φ̇)`` (:func:`limit_law`, ``k_l`` = ``axes[2, 2]``, ``c_l`` =
    ``axes[1, 2]``) acts on b about ``e = a × b / |a × b|`` and −τ e on a (∂φ/∂θ_b = e = −∂φ/∂θ_a,
    φ̇ = e·(ω_b − ω_a)): residual ``−τ e`` on b's moment rows, ``+τ e`` on a's.  Inside the cone
    the load is zero.  With ``s = |a × b|`` and ``c = a·b``::

        ∂e/∂θ_a = (a bᵀ − c I + c e eᵀ) / s,    ∂e/∂θ_b = (c I − b aᵀ − c e eᵀ) / s

    (spatial rotation increments), so the tangent is ``L (∂τ/∂φ ∂φ/∂q + ∂τ/∂φ̇ (∂φ̇/∂q + γ′
    ∂φ̇/∂v 𝒯⁻¹)) + τ ∂L/∂q`` with ``L = (e, −e)`` on the moment rows (``tb``, ``tt`` the rotation
    blocks of 𝒯, ``gp`` γ′ [1/s])."""
    for side in range(2):
        for i in range(6):
            load[side, i] = 0.0
    a = rot(qb[3:7], geom[0, 1])
    b = rot(qt[3:7], geom[1, 1])
    c = dot(a, b)
    x = cross(a, b)
    s = math.sqrt(dot(x, x))
    phi = math.atan2(s, c)
    if not phi > axes[2, 1] or s == 0.0:
        return
    e = (x[0] / s, x[1] / s, x[2] / s)
    wr = (vt[3] - vb[3], vt[4] - vb[4], vt[5] - vb[5])
    rate = dot(e, wr)
    tau, tx, tr = limit_law(phi, rate, axes[2, 0], axes[2, 1], axes[2, 2], axes[1, 2])
    for i in range(3):  # L: the residual per unit τ
        load[0, 3 + i] = e[i]
        load[1, 3 + i] = -e[i]
    if with_k:
        # (∂e/∂θ_a)ᵀ wr and (∂e/∂θ_b)ᵀ wr: ∂φ̇/∂θ at fixed ω
        aw = dot(a, wr)
        bw = dot(b, wr)
        ew = rate
        ga = ((b[0] * aw - c * wr[0] + c * e[0] * ew) / s, (b[1] * aw - c * wr[1] + c * e[1] * ew) / s,
              (b[2] * aw - c * wr[2] + c * e[2] * ew) / s)  # fmt: skip
        gb = ((c * wr[0] - a[0] * bw - c * e[0] * ew) / s, (c * wr[1] - a[1] * bw - c * e[1] * ew) / s,
              (c * wr[2] - a[2] * bw - c * e[2] * ew) / s)  # fmt: skip
        zero = (0.0, 0.0, 0.0)
        vtt = solve_tangent(tt, e)
        add_drive_block(k, I1, load, zero, (tx * e[0] + tr * (gb[0] + gp * vtt[0]),
                                           tx * e[1] + tr * (gb[1] + gp * vtt[1]),
                                           tx * e[2] + tr * (gb[2] + gp * vtt[2])))  # fmt: skip
        vtb = solve_tangent(tb, e)
        add_drive_block(k, I0, load, zero, (-tx * e[0] + tr * (ga[0] - gp * vtb[0]),
                                           -tx * e[1] + tr * (ga[1] - gp * vtb[1]),
                                           -tx * e[2] + tr * (ga[2] - gp * vtb[2])))  # fmt: skip
        # τ ∂L/∂q: L_a = e, L_b = −e
        for i in range(3):
            for j in range(3):
                ci = c if i == j else 0.0
                dea = (a[i] * b[j] - ci + c * e[i] * e[j]) / s
                deb = (ci - b[i] * a[j] - c * e[i] * e[j]) / s
                k[0, 0, 3 + i, 3 + j] += tau * dea
                k[0, 1, 3 + i, 3 + j] += tau * deb
                k[1, 0, 3 + i, 3 + j] -= tau * dea
                k[1, 1, 3 + i, 3 + j] -= tau * deb
    for side in range(2):
        for i in range(6):
            load[side, i] *= tau
