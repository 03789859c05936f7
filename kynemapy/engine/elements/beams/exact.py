"""Exact stiffness of a beam element (the ``p[P_EXACT]`` mode; compiled kernels).

The stiffness ``S_ij`` (6, 6) is the derivative of node i's residual with respect to node j's
displacement ``u_j`` and *spatial* rotation increment ``δθ_j`` (the engine's update
``r_j ← exp(δθ_j) ⊗ r_j``), so that ``S 𝒯`` (with ``𝒯_j = blockdiag(I, T_j)``) is the
derivative with respect to the Newton unknowns, as for the masses
(:mod:`kynemapy.engine.elements.masses`).

At a quadrature point every force depends on the node positions and rotations through three
quantities only: the displacement derivative ``u′`` (3,) [1], the orientation of the point's
frame (its spatial rotation increment ``δψ`` (3,) [rad]) and the curvature ``κ`` (3,) [1/m].
:func:`qp_force_gradients` forms the derivatives of the two force groups of the residual,
``F_a = F_C + F_D1`` (multiplied by ``w φ′_i``) and ``F_b = F_D + F_D2 + F_I − F_g`` (multiplied
by ``w J φ_i``), with respect to ``(u′, ψ, κ)``: ``G`` (2, 6, 9).  :func:`node_rotation_maps`
forms, for node j, ``A_j = ∂ψ/∂θ_j`` and ``B_j = ∂κ/∂θ_j`` (3, 3) from the normalised
interpolation ``r = s/|s|``, ``s = Σ φ_j r_j`` and ``r′ = Σ φ′_j r_j / J``:

* ``δr_j = ½ [0; δθ_j] ⊗ r_j = Λ(r_j) δθ_j``, ``Λ(r) = ½ [[−vᵀ], [w I − ṽ]]`` (4, 3);
* ``δr = (I − r rᵀ) δs / |s|``, ``δψ = 2 E(r) δr`` (E(r) r = 0), so ``A_j = 2 φ_j E(r) Λ_j / |s|``;
* ``κ = 2 E(r) r′ = 2 H(r′) r`` with ``H(b) a = E(a) b``, ``H(b) = [b_v, −b_w I − b̃_v]``, so
  ``B_j = 2 φ_j H(r′) (I − r rᵀ) Λ_j / |s| + 2 (φ′_j / J) E(r) Λ_j``.

(When all nodes share one rotation, ``A_j = φ_j I``, ``B_j = (φ′_j/J) I``: Kynema's tangent.)
Then the rotation column of ``S_ij`` at a point is ``G_·[:, ψ] A_j + G_·[:, κ] B_j`` and the
translation column ``G_·[:, u′] φ′_j / J`` (:func:`exact_columns`, :func:`integrate_exact_stiffness`).

Derivatives of the point forces (``x̃ = (x0′ + u′)~``, ``a = R(r) x0′``, ``Ã(f)`` (6, 3) the two
3×3 skew blocks of a 6-vector stacked, ``C = diag(R, R) C* diag(R, R)ᵀ`` so that
``δC f = −Ã(C f) δψ + C Ã(f) δψ``):

* ``F_C = C e``: ``∂/∂u′ = C[:, 0:3]``, ``∂/∂ψ = C[:, 0:3] x̃ + C[:, 3:6] κ̃ − Ã(F_C)``
  (``δε = δu′ + ã δψ``), ``∂/∂κ = C[:, 3:6]``;
* ``F_D1 = D ė``, ``ε̇ = u̇′ − ω̃ a``, ``κ̇ = ω′ + ω̃ κ``: ``∂/∂ψ = D Ã(ė) − Ã(F_D1) + D[:, 0:3] ω̃ ã``
  (``δε̇ = −ω̃ δa = ω̃ ã δψ``, ``δκ̇ = ω̃ δκ``),
  ``∂/∂κ = D[:, 3:6] ω̃``;
* ``F_D + F_D2 = (0, x̃ᵀ n)``, ``n = (F_C + F_D1)[0:3]``: ``∂/∂u′ = (0, ñ + x̃ᵀ ∂n/∂u′)``,
  ``∂/∂(ψ, κ) = (0, x̃ᵀ ∂n/∂(ψ, κ))``;
* ``F_I``: Kynema's inertial stiffness ``K_I`` (exact); ``−F_g``: ``∂/∂ψ = (0, −(m g)~ η̃)``.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.engine.elements.beams.interpolate import ROTATION, TRANSLATION, interp_vector, interp_vector_deriv
from kynemapy.math.quaternion import rot
from kynemapy.math.so3 import tilde


@njit
def half_left(r, out):
    """``out`` (4, 3) ``= Λ(r)``: ``δr = Λ(r) δθ`` for ``r ← exp(δθ) ⊗ r`` (spatial increment)."""
    w, x, y, z = r[0], r[1], r[2], r[3]
    out[0, 0], out[0, 1], out[0, 2] = -0.5 * x, -0.5 * y, -0.5 * z
    out[1, 0], out[1, 1], out[1, 2] = 0.5 * w, 0.5 * z, -0.5 * y
    out[2, 0], out[2, 1], out[2, 2] = -0.5 * z, 0.5 * w, 0.5 * x
    out[3, 0], out[3, 1], out[3, 2] = 0.5 * y, -0.5 * x, 0.5 * w


@njit
def e_times(r, m, out):
    """``out`` (3, 3) ``= E(r) m`` for a (4, 3) ``m``; ``E(r)`` rows ``(−x, w, −z, y)``,
    ``(−y, z, w, −x)``, ``(−z, −y, x, w)``."""
    w, x, y, z = r[0], r[1], r[2], r[3]
    for c in range(3):
        m0, m1, m2, m3 = m[0, c], m[1, c], m[2, c], m[3, c]
        out[0, c] = -x * m0 + w * m1 - z * m2 + y * m3
        out[1, c] = -y * m0 + z * m1 + w * m2 - x * m3
        out[2, c] = -z * m0 - y * m1 + x * m2 + w * m3


@njit
def h_times(b, m, out):
    """``out`` (3, 3) ``= H(b) m`` for a (4, 3) ``m``, ``H(b) a = E(a) b``: rows
    ``(b1, −b0, b3, −b2)``, ``(b2, −b3, −b0, b1)``, ``(b3, b2, −b1, −b0)``."""
    b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
    for c in range(3):
        m0, m1, m2, m3 = m[0, c], m[1, c], m[2, c], m[3, c]
        out[0, c] = b1 * m0 - b0 * m1 + b3 * m2 - b2 * m3
        out[1, c] = b2 * m0 - b3 * m1 - b0 * m2 + b1 * m3
        out[2, c] = b3 * m0 + b2 * m1 - b1 * m2 - b0 * m3


@njit
def node_rotation_maps(phi, dphi_ds, r_node, r, r_prime, norm_s, lam, proj, out):
    """``A_j = ∂ψ/∂θ_j`` into ``out[0]`` and ``B_j = ∂κ/∂θ_j`` [1/m] into ``out[1]`` (3, 3).

    Parameters
    ----------
    phi, dphi_ds : φ_j and φ′_j = (dφ_j/dξ)/J [1/m] of node j at the point.
    r_node : (4,) node j's rotation quaternion; r : (4,) the normalised interpolated one;
    r_prime : (4,) r′ = Σ φ′_j r_j [1/m]; norm_s : |Σ φ_j r_j|.
    lam, proj : (4, 3) scratch (``Λ(r_j)`` and ``(I − r rᵀ) Λ(r_j)``).
    out : (2, 3, 3).
    """
    half_left(r_node, lam)
    for c in range(3):
        d = r[0] * lam[0, c] + r[1] * lam[1, c] + r[2] * lam[2, c] + r[3] * lam[3, c]
        for k in range(4):
            proj[k, c] = lam[k, c] - r[k] * d
    e_times(r, lam, out[0])
    h_times(r_prime, proj, out[1])
    fa = 2.0 * phi / norm_s
    fb = 2.0 * dphi_ds
    for i in range(3):
        for c in range(3):
            er = out[0, i, c]
            out[1, i, c] = fa * out[1, i, c] + fb * er
            out[0, i, c] = fa * er


@njit
def stacked_tilde_add(f, scale, out):
    """``out[i, c] += scale · Ã(f)[i, c]`` for a (6,) ``f`` and (6, >= 3) ``out``."""
    for b in range(2):
        f0, f1, f2 = f[3 * b], f[3 * b + 1], f[3 * b + 2]
        o = 3 * b
        out[o, 1] += -scale * f2
        out[o, 2] += scale * f1
        out[o + 1, 0] += scale * f2
        out[o + 1, 2] += -scale * f0
        out[o + 2, 0] += -scale * f1
        out[o + 2, 1] += scale * f0


@njit
def qp_force_gradients(
    x0_prime, u_prime, r, r_prime, omega, omega_prime, u_dot_prime,
    cuu, duu, fc, fd1, ki, muu, gravity, damped, s3, s33, out,
):  # fmt: skip
    """Derivatives ``out`` (2, 6, 9) of ``F_a = F_C + F_D1`` (``out[0]``) and
    ``F_b = F_D + F_D2 + F_I − F_g`` (``out[1]``) at one point with respect to ``(u′, ψ, κ)``.

    Parameters
    ----------
    x0_prime, u_prime : (3,) unit reference tangent, displacement derivative [1].
    r, r_prime : (4,) normalised interpolated rotation, its arc-length derivative [1/m].
    omega, omega_prime, u_dot_prime : (3,) ω [rad/s], ω′ [rad/(m s)], u̇′ [1/s].
    cuu, duu : (6, 6) rotated stiffness and damping matrices; fc, fd1 : (6,) F_C, F_D1.
    ki : (6, 6) inertial stiffness K_I; muu : (6, 6) rotated mass matrix per unit length.
    gravity : (3,) [m/s²]; damped : whether D is non-zero.
    s3 : (>= 6, 3), s33 : (>= 4, 3, 3) scratch.
    out : (2, 6, 9); columns 0:3 ∂/∂u′ [N], 3:6 ∂/∂ψ [N], 6:9 ∂/∂κ [N m].
    """
    ga = out[0]
    gb = out[1]
    for b in range(2):
        for i in range(6):
            for c in range(9):
                out[b, i, c] = 0.0
    a = s3[0]
    xp = s3[1]
    kap = s3[3]
    a[0], a[1], a[2] = rot(r, x0_prime)
    for k in range(3):
        xp[k] = x0_prime[k] + u_prime[k]
    w, x, y, z = r[0], r[1], r[2], r[3]
    p0, p1, p2, p3 = r_prime[0], r_prime[1], r_prime[2], r_prime[3]
    kap[0] = 2.0 * (-x * p0 + w * p1 - z * p2 + y * p3)
    kap[1] = 2.0 * (-y * p0 + z * p1 + w * p2 - x * p3)
    kap[2] = 2.0 * (-z * p0 - y * p1 + x * p2 + w * p3)
    xt = s33[0]
    kt = s33[1]
    tilde(xp, xt)
    tilde(kap, kt)
    # F_C
    for i in range(6):
        for c in range(3):
            ga[i, c] = cuu[i, c]
            ga[i, 6 + c] = cuu[i, 3 + c]
            s = 0.0
            for k in range(3):
                s += cuu[i, k] * xt[k, c] + cuu[i, 3 + k] * kt[k, c]
            ga[i, 3 + c] = s
    stacked_tilde_add(fc, -1.0, ga[:, 3:6])
    # F_D1
    if damped:
        wt = s33[2]
        m1 = s33[3]
        at = s33[0]  # x̃ is formed again below
        tilde(omega, wt)
        tilde(a, at)
        for i in range(3):
            for c in range(3):
                m1[i, c] = wt[i, 0] * at[0, c] + wt[i, 1] * at[1, c] + wt[i, 2] * at[2, c]
        ed = s3[4]
        kd = s3[5]
        # ε̇ = u̇′ − ω̃ a, κ̇ = ω′ + ω̃ κ
        ed[0] = u_dot_prime[0] - (omega[1] * a[2] - omega[2] * a[1])
        ed[1] = u_dot_prime[1] - (omega[2] * a[0] - omega[0] * a[2])
        ed[2] = u_dot_prime[2] - (omega[0] * a[1] - omega[1] * a[0])
        kd[0] = omega_prime[0] + (omega[1] * kap[2] - omega[2] * kap[1])
        kd[1] = omega_prime[1] + (omega[2] * kap[0] - omega[0] * kap[2])
        kd[2] = omega_prime[2] + (omega[0] * kap[1] - omega[1] * kap[0])
        et = s33[0]
        tilde(ed, et)
        for k in range(3):
            for c in range(3):
                m1[k, c] += et[k, c]
        tilde(kd, at)  # at now holds κ̇~
        for i in range(6):
            for c in range(3):
                s = 0.0
                t = 0.0
                for k in range(3):
                    s += duu[i, k] * m1[k, c] + duu[i, 3 + k] * at[k, c]
                    t += duu[i, 3 + k] * wt[k, c]
                ga[i, 3 + c] += s
                ga[i, 6 + c] += t
        stacked_tilde_add(fd1, -1.0, ga[:, 3:6])
        tilde(xp, xt)
    # F_D + F_D2 = (0, x̃ᵀ n), n = (F_C + F_D1)[0:3]
    for i in range(3):
        for c in range(9):
            gb[3 + i, c] = xt[0, i] * ga[0, c] + xt[1, i] * ga[1, c] + xt[2, i] * ga[2, c]
    n0, n1, n2 = fc[0] + fd1[0], fc[1] + fd1[1], fc[2] + fd1[2]
    gb[3, 1] += -n2
    gb[3, 2] += n1
    gb[4, 0] += n2
    gb[4, 2] += -n0
    gb[5, 0] += -n1
    gb[5, 1] += n0
    # F_I: Kynema's K_I; −F_g: −(m g)~ η̃
    for i in range(6):
        for c in range(3):
            gb[i, 3 + c] += ki[i, 3 + c]
    m = muu[0, 0]
    if m != 0.0:
        e0, e1, e2 = muu[5, 1] / m, -muu[5, 0] / m, muu[4, 0] / m
        g0, g1, g2 = m * gravity[0], m * gravity[1], m * gravity[2]
        dot = g0 * e0 + g1 * e1 + g2 * e2
        eta = (e0, e1, e2)
        fg = (g0, g1, g2)
        for i in range(3):
            for c in range(3):
                v = eta[i] * fg[c]
                if i == c:
                    v -= dot
                gb[3 + i, 3 + c] -= v


@njit
def exact_columns(grad, dphi_ds, maps, out):
    """Point contributions of node j's columns: ``out[g]`` (6, 6) ``= [G_g[:, u′] φ′_j,
    G_g[:, ψ] A_j + G_g[:, κ] B_j]`` for both groups g; ``grad`` (2, 6, 9), ``maps`` (2, 3, 3)."""
    for g in range(2):
        gg = grad[g]
        o = out[g]
        for i in range(6):
            for c in range(3):
                o[i, c] = gg[i, c] * dphi_ds
                s = 0.0
                for k in range(3):
                    s += gg[i, 3 + k] * maps[0, k, c] + gg[i, 6 + k] * maps[1, k, c]
                o[i, 3 + c] = s


@njit
def exact_point_columns(
    jacobian, shape_interp, shape_deriv, qp, x0_prime, node_u, node_v,
    cuu, duu, fc, fd1, ki, muu, gravity, damped, s3, s33, s4, lam, grad, maps, out,
):  # fmt: skip
    """Column contributions ``out`` (nodes, 2, 6, 6) of every node j at point ``qp``
    (:func:`exact_columns`), from the point's matrices and forces (already computed).

    Scratch: ``s3`` (>= 10, 3), ``s33`` (>= 4, 3, 3), ``s4`` (>= 2, 4), ``lam`` (2, 4, 3),
    ``grad`` (2, 6, 9), ``maps`` (2, 3, 3).  Other arguments as for :func:`qp_force_gradients`
    and :func:`~kynemapy.engine.elements.beams.qp.qp_damping_values`.
    """
    u_prime = s3[6]
    omega = s3[7]
    omega_prime = s3[8]
    u_dot_prime = s3[9]
    r = s4[0]
    r_prime = s4[1]
    interp_vector_deriv(shape_deriv, qp, jacobian, node_u, TRANSLATION, u_prime)
    interp_vector(shape_interp, qp, node_u, ROTATION, r)
    norm_s = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    for k in range(4):
        r[k] /= norm_s
    interp_vector_deriv(shape_deriv, qp, jacobian, node_u, ROTATION, r_prime)
    interp_vector(shape_interp, qp, node_v, ROTATION, omega)
    interp_vector_deriv(shape_deriv, qp, jacobian, node_v, TRANSLATION, u_dot_prime)
    interp_vector_deriv(shape_deriv, qp, jacobian, node_v, ROTATION, omega_prime)
    qp_force_gradients(
        x0_prime, u_prime, r, r_prime, omega, omega_prime, u_dot_prime,
        cuu, duu, fc, fd1, ki, muu, gravity, damped, s3, s33, grad,
    )  # fmt: skip
    for j in range(node_u.shape[0]):
        dphi_ds = shape_deriv[j, qp] / jacobian
        node_rotation_maps(shape_interp[j, qp], dphi_ds, node_u[j, 3:7], r, r_prime, norm_s, lam[0], lam[1], maps)
        exact_columns(grad, dphi_ds, maps, out[j])


@njit
def integrate_exact_stiffness(weight, jacobian, shape_interp, shape_deriv, cols, out):
    """Exact stiffness blocks ``out`` (nodes, nodes, 6, 6):
    ``S_ij = Σ_k w φ′_i Y_a,kj + w J φ_i Y_b,kj`` with ``cols`` (qps, nodes, 2, 6, 6) the
    point columns ``Y`` of :func:`exact_point_columns` (φ′_i = dφ_i/dξ, as in the residual)."""
    nn = out.shape[0]
    nq = weight.shape[0]
    for i in range(nn):
        for j in range(nn):
            blk = out[i, j]
            for a in range(6):
                for b in range(6):
                    blk[a, b] = 0.0
            for k in range(nq):
                ca = weight[k] * shape_deriv[i, k]
                cb = weight[k] * jacobian[k] * shape_interp[i, k]
                ya = cols[k, j, 0]
                yb = cols[k, j, 1]
                for a in range(6):
                    for b in range(6):
                        blk[a, b] += ca * ya[a, b] + cb * yb[a, b]
