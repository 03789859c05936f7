"""Compliant contact element table: a point (a sphere of radius r) of a body against a ground plane.

Each element is one contact point of one shape against one half-space (docs/contact.md): a
sphere is one point, a capsule its two end spheres, a box its eight corners (radius 0).  The
builder (:mod:`kynemapy.model.contact`) makes the elements of every shape–plane pair its filter
keeps; the kernel evaluates each of them at every Newton iteration, so the Newton system's
pattern is the node's own 6×6 block, which the body's mass already has.

Notation (inertial frame, SI): node position ``x = X + u`` [m], rotation displacement
``R = R(q_r)``, point offset ``s = R s₀`` [m] (``s₀`` the offset from the node at the reference
configuration), plane ``n · y = d`` with unit normal ``n`` pointing out of the ground,
penetration ``δ = d + r − n · (x + s)`` [m] and its rate ``δ̇ = −n · (u̇ + ω × s)`` [m/s].

* normal force ``f_n = max(0, k δ^e + c w δ̇)`` [N], ``w = 1`` (linear spring-damper,
  ``c`` [N s/m]) or ``w = δ^e`` (Hunt–Crossley, ``c`` [N s/m^(1+e)]); ``k`` [N/m^e];
* friction ``f_t = −μ f_n v_t / √(|v_t|² + v_s²)`` [N] (regularized Coulomb: the slip speed
  ``|v_t|`` at the contact point ``a = s − r n`` is ``v_s`` [m/s] times ``tan / √(μ² − tan²)``
  of the force ratio while it sticks);
* force on the body ``F = f_n n + f_t``, moment about the node ``a × F``; residual ``−(F, a × F)``.

The iteration matrix is the exact derivative of that residual: ``γ′ G + κ K 𝒯`` with ``G`` the
derivative with respect to ``(u̇, ω)`` and ``K`` with respect to ``(u, θ)`` (spatial rotation
increment, ``δs = δθ × s``), checked against differences in tests/verification/test_contact.py.
A point apart from its plane (or pulled by the damper) adds nothing.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.engine.elements.table import add_element_block
from kynemapy.engine.params import P_GAMMA_PRIME, P_STIFFNESS
from kynemapy.math.quaternion import rot


@njit(inline=True)
def _skew(a0, a1, a2, out):
    """``out = ã`` (3, 3), ``ã x = a × x``."""
    out[0, 0], out[0, 1], out[0, 2] = 0.0, -a2, a1
    out[1, 0], out[1, 1], out[1, 2] = a2, 0.0, -a0
    out[2, 0], out[2, 1], out[2, 2] = -a1, a0, 0.0


@njit(inline=True)
def _mul33(a, b, out):
    """``out = a b`` (3, 3); ``out`` must not alias ``a`` or ``b``."""
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@njit(inline=True)
def contact_point_terms(x, qr, v, t_rot, offset, radius, plane, par, gp, kappa, s33, s3, res, mat, out):
    """Residual (6,) and iteration block (6, 6) ``γ′ G + κ K 𝒯`` of one contact point into
    ``res``, ``mat``; its state (6,) into ``out``.  Returns whether it carries a force.

    ``x`` (3,) node position [m], ``qr`` (4,) rotation displacement, ``v`` (6,) (u̇, ω),
    ``t_rot`` (3, 3) rotation block of 𝒯, ``offset`` (3,) s₀ [m], ``radius`` [m], ``plane`` (4,),
    ``par`` (6,); scratch ``s33`` (>= 8, 3, 3), ``s3`` (>= 4, 3)."""
    n0, n1, n2 = plane[0], plane[1], plane[2]
    s0, s1, s2 = rot(qr, offset)
    gap = n0 * (x[0] + s0) + n1 * (x[1] + s1) + n2 * (x[2] + s2) - plane[3] - radius
    for i in range(6):
        res[i] = 0.0
        out[i] = 0.0
        for j in range(6):
            mat[i, j] = 0.0
    out[0] = gap
    if gap >= 0.0:
        return False
    delta = -gap
    w0, w1, w2 = v[3], v[4], v[5]
    # s × n and δ̇ = −n·u̇ − ω·(s × n)
    sn0, sn1, sn2 = s1 * n2 - s2 * n1, s2 * n0 - s0 * n2, s0 * n1 - s1 * n0
    delta_dot = -(n0 * v[0] + n1 * v[1] + n2 * v[2]) - (w0 * sn0 + w1 * sn1 + w2 * sn2)
    k, ex, cd, mu, vs = par[0], par[1], par[2], par[4], par[5]
    de = delta**ex
    de1 = ex * delta ** (ex - 1.0)  # d(δ^e)/dδ
    hc = par[3] != 0.0
    wgt = de if hc else 1.0
    fn = k * de + cd * wgt * delta_dot
    if fn <= 0.0:
        return False
    dfn_d = k * de1 + (cd * de1 * delta_dot if hc else 0.0)  # ∂f_n/∂δ
    dfn_dd = cd * wgt  # ∂f_n/∂δ̇
    ws = w0 * s0 + w1 * s1 + w2 * s2
    ns = n0 * s0 + n1 * s1 + n2 * s2
    # gradients of f_n: position (u, θ) and velocity (u̇, ω)
    gq = s3[0]  # ∂f_n/∂θ
    gq[0] = -dfn_d * sn0 - dfn_dd * (ws * n0 - ns * w0)
    gq[1] = -dfn_d * sn1 - dfn_dd * (ws * n1 - ns * w1)
    gq[2] = -dfn_d * sn2 - dfn_dd * (ws * n2 - ns * w2)
    # contact point a = s − r n, its velocity and the slip v_t = (I − n nᵀ) v_c
    a0, a1, a2 = s0 - radius * n0, s1 - radius * n1, s2 - radius * n2
    vc0 = v[0] + w1 * a2 - w2 * a1
    vc1 = v[1] + w2 * a0 - w0 * a2
    vc2 = v[2] + w0 * a1 - w1 * a0
    vn = n0 * vc0 + n1 * vc1 + n2 * vc2
    vt0, vt1, vt2 = vc0 - vn * n0, vc1 - vn * n1, vc2 - vn * n2
    slip2 = vt0 * vt0 + vt1 * vt1 + vt2 * vt2
    rho = math.sqrt(slip2 + vs * vs)
    mur = mu / rho
    ef = s3[1]  # F = f_n e_f
    ef[0], ef[1], ef[2] = n0 - mur * vt0, n1 - mur * vt1, n2 - mur * vt2
    f0, f1, f2 = fn * ef[0], fn * ef[1], fn * ef[2]
    res[0], res[1], res[2] = -f0, -f1, -f2
    res[3], res[4], res[5] = -(a1 * f2 - a2 * f1), -(a2 * f0 - a0 * f2), -(a0 * f1 - a1 * f0)
    out[1] = fn
    out[2], out[3], out[4] = fn * (ef[0] - n0), fn * (ef[1] - n1), fn * (ef[2] - n2)
    out[5] = math.sqrt(slip2)
    # D = ∂(v_t/ρ)/∂v_c = (I − n nᵀ)/ρ − v_t v_tᵀ/ρ³, times μ f_n
    dm = s33[0]
    nn = (n0, n1, n2)
    vt = (vt0, vt1, vt2)
    scale = mu * fn
    for i in range(3):
        for j in range(3):
            dm[i, j] = scale * (((1.0 if i == j else 0.0) - nn[i] * nn[j]) / rho - vt[i] * vt[j] / (rho * rho * rho))
    am = s33[1]
    sm = s33[2]
    wm = s33[3]
    tmp = s33[4]
    _skew(a0, a1, a2, am)
    _skew(s0, s1, s2, sm)
    _skew(w0, w1, w2, wm)
    # ∂F/∂(u, θ) (3, 6) and ∂F/∂(u̇, ω) (3, 6)
    fq = s33[5]  # ∂F/∂θ
    fv = s33[6]  # ∂F/∂u̇
    fw = s33[7]  # ∂F/∂ω
    _mul33(wm, sm, tmp)  # ω̃ s̃
    _mul33(dm, tmp, fq)  # μ f_n D ω̃ s̃
    nd = (n0, n1, n2)
    snv = (sn0, sn1, sn2)
    for i in range(3):
        for j in range(3):
            fq[i, j] += ef[i] * gq[j]
            fv[i, j] = -ef[i] * dfn_dd * nd[j] - dm[i, j]
    _mul33(dm, am, fw)  # μ f_n D ã
    for i in range(3):
        for j in range(3):
            fw[i, j] += -ef[i] * dfn_dd * snv[j]
    # mat rows 0..2: −∂F, rows 3..5: −(ã ∂F + [0, F̃ s̃]); position columns times κ (rotation: 𝒯)
    _skew(f0, f1, f2, tmp)
    kt = s33[3]  # reuse: ω̃ is no longer needed
    _mul33(tmp, sm, kt)  # F̃ s̃
    for i in range(3):
        for j in range(3):
            kt[i, j] += am[i, 0] * fq[0, j] + am[i, 1] * fq[1, j] + am[i, 2] * fq[2, j]
    # kt = ∂M/∂θ; ∂M/∂u = ã (e_f ⊗ ∂f_n/∂u) with ∂f_n/∂u = −(∂f_n/∂δ) n
    for i in range(3):
        ae = (am[i, 0] * ef[0]) + (am[i, 1] * ef[1]) + (am[i, 2] * ef[2])
        for j in range(3):
            fu = -dfn_d * nd[j]
            mat[i, j] = -kappa * (ef[i] * fu) - gp * fv[i, j]
            mat[3 + i, j] = -kappa * (ae * fu) - gp * (am[i, 0] * fv[0, j] + am[i, 1] * fv[1, j] + am[i, 2] * fv[2, j])
            mat[i, 3 + j] = -kappa * (fq[i, 0] * t_rot[0, j] + fq[i, 1] * t_rot[1, j] + fq[i, 2] * t_rot[2, j])
            mat[i, 3 + j] -= gp * fw[i, j]
            mat[3 + i, 3 + j] = -kappa * (kt[i, 0] * t_rot[0, j] + kt[i, 1] * t_rot[1, j] + kt[i, 2] * t_rot[2, j])
            mat[3 + i, 3 + j] -= gp * (am[i, 0] * fw[0, j] + am[i, 1] * fw[1, j] + am[i, 2] * fw[2, j])
    return True


@njit(inline=True)
def terms(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """Residual and matrix of every contact point of the table ``t`` (those in contact added
    into the Newton system by :func:`~kynemapy.engine.elements.table.add_element_block`); the
    signature of every table kernel (:mod:`kynemapy.engine.elements`)."""
    gp = p[P_GAMMA_PRIME]
    kappa = p[P_STIFFNESS]
    x = s3[7]
    for e in range(t.nodes.shape[0]):
        n = t.nodes[e, 0]
        for i in range(3):
            x[i] = x0[n, i] + q[n, i]
        if contact_point_terms(
            x, q[n, 3:7], v[n], tangent[n], t.offset[e], t.radius[e], t.plane[e], t.param[e], gp, kappa,
            s33, s3, t.res[e], t.mat[e], t.out[e],
        ):  # fmt: skip
            add_element_block(t, e, c, vals, b)
