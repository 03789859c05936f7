"""One beam element: quadrature-point values integrated with the node shape functions.

For an element with nodes i, j (shape functions φ, derivatives φ′ = dφ/dξ) and quadrature
points k (weight w_k, Jacobian J_k [m]):

* residual (nodes, 6) [N, N m]:
  ``R_i = Σ_k w φ′_i (F_C + F_D1) + w J φ_i (F_D + F_D2 + F_I − F_e − F_g) − F_X,i``
  (``F_e``: distributed external load per unit length at the points, ``F_X``: node loads);
* stiffness (nodes, nodes, 6, 6):
  ``S_ij = Σ_k (w/J) φ′_i φ′_j (C + D_D1) + w φ′_i φ_j (O + K_D1) + w φ_i φ′_j (P + P_D2)
  + w J φ_i φ_j (K_I + Q + K_D2)``;
* inertia (nodes, nodes, 6, 6): ``I_ij = β′ Σ_k w J φ_i φ_j M + γ′ Σ_k [(w/J) φ′_i φ′_j D
  + w φ′_i φ_j G_D1 + w φ_i φ′_j D_D2 + w J φ_i φ_j (G_I + G_D2)]``;
* iteration matrix (6 nodes, 6 nodes): ``I_ij + κ S_ij 𝒯_j`` with ``𝒯_j = blockdiag(I, T_j)``,
  ``T_j`` the rotation block of node j's tangent operator (Kynema's ``CalculateSystemMatrix``).

Kynema-FMB: ``src/system/beams/integrate_residual_vector.hpp``,
``integrate_stiffness_matrix.hpp``, ``integrate_inertia_matrix.hpp``,
``calculate_system_matrix.hpp`` and the driver ``calculate_quadrature_point_values.hpp``; the
sums are evaluated in Kynema's order.  Nothing allocates: scratch comes in an
:class:`ElementScratch` made once by :func:`element_scratch`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements.beams.exact import exact_point_columns, integrate_exact_stiffness
from kynemapy.engine.elements.beams.qp import qp_damping_values, qp_inertial_values, qp_stiffness_values

# rows of ElementScratch.qp_vec
V_FC, V_FD, V_FD1, V_FD2, V_FI, V_FG = 0, 1, 2, 3, 4, 5
# rows of ElementScratch.qp_mat
M_KI, M_P, M_C, M_O, M_Q, M_M, M_GI, M_D, M_DD1, M_DD2, M_GD1, M_GD2, M_PD2, M_KD1, M_KD2 = range(15)


class ElementScratch(NamedTuple):
    """Scratch of one beam element kernel (sized for at most ``nodes`` nodes and ``qps`` points).

    ``node_u`` (nodes, 7), ``node_v`` (nodes, 6), ``node_vd`` (nodes, 6): the element's node
    states gathered from the global arrays; ``qp_vec`` (6, qps, 6): F_C, F_D, F_D1, F_D2, F_I,
    F_g per point; ``qp_mat`` (15, qps, 6, 6): K_I, P, C, O, Q, M, G_I, D, D_D1, D_D2, G_D1,
    G_D2, P_D2, K_D1, K_D2 per point; ``blk`` (2, nodes, nodes, 6, 6): stiffness and inertia
    blocks; ``sums`` (qps, 5, 36), ``acc`` (36,): the integrations' per-point sums and flat
    block accumulator; ``res`` (nodes, 6) the residual by node; ``s3`` (6, 3), ``s33`` (7, 3, 3),
    ``s4`` (3, 4), ``s6`` (2, 6), ``s66`` (3, 6, 6); for the exact stiffness
    (:mod:`.exact`): ``ex_cols`` (qps, nodes, 2, 6, 6) the point columns, ``ex_grad``
    (2, 6, 9), ``ex_maps`` (2, 3, 3), ``ex_lam`` (2, 4, 3), ``ex_s3`` (10, 3), ``ex_s4`` (2, 4).
    """

    node_u: np.ndarray
    node_v: np.ndarray
    node_vd: np.ndarray
    qp_vec: np.ndarray
    qp_mat: np.ndarray
    blk: np.ndarray
    sums: np.ndarray
    acc: np.ndarray
    res: np.ndarray
    s3: np.ndarray
    s33: np.ndarray
    s4: np.ndarray
    s6: np.ndarray
    s66: np.ndarray
    ex_cols: np.ndarray
    ex_grad: np.ndarray
    ex_maps: np.ndarray
    ex_lam: np.ndarray
    ex_s3: np.ndarray
    ex_s4: np.ndarray


def element_scratch(nodes: int, qps: int) -> ElementScratch:
    """Zeroed scratch for elements of at most ``nodes`` nodes and ``qps`` quadrature points."""
    return ElementScratch(
        node_u=np.zeros((nodes, 7)),
        node_v=np.zeros((nodes, 6)),
        node_vd=np.zeros((nodes, 6)),
        qp_vec=np.zeros((6, qps, 6)),
        qp_mat=np.zeros((15, qps, 6, 6)),
        blk=np.zeros((2, nodes, nodes, 6, 6)),
        sums=np.zeros((qps, 5, 36)),
        acc=np.zeros(36),
        res=np.zeros((nodes, 6)),
        s3=np.zeros((6, 3)),
        s33=np.zeros((7, 3, 3)),
        s4=np.zeros((3, 4)),
        s6=np.zeros((2, 6)),
        s66=np.zeros((3, 6, 6)),
        ex_cols=np.zeros((qps, nodes, 2, 6, 6)),
        ex_grad=np.zeros((2, 6, 9)),
        ex_maps=np.zeros((2, 3, 3)),
        ex_lam=np.zeros((2, 4, 3)),
        ex_s3=np.zeros((10, 3)),
        ex_s4=np.zeros((2, 4)),
    )


@njit
def integrate_residual(weight, jacobian, shape_interp, shape_deriv, node_fx, fe1, fe2, fd1, fd2, fi, fe, fg, out):
    """Element residual ``out`` (nodes, 6) [N, N m] (formula in the module docstring).

    Parameters
    ----------
    weight, jacobian : (qps,) quadrature weights and Jacobians J [m].
    shape_interp, shape_deriv : (>= nodes, qps) φ and dφ/dξ.
    node_fx : (nodes, 6) node loads.
    fe1, fe2, fd1, fd2, fi, fe, fg : (qps, 6) F_C, F_D, F_D1, F_D2, F_I, external and gravity
        forces per unit length at the points.
    out : (nodes, 6); the number of nodes is its first extent.
    """
    for node in range(out.shape[0]):
        acc = out[node]
        for c in range(6):
            acc[c] = 0.0
        for qp in range(weight.shape[0]):
            w = weight[qp]
            coeff_c = w * shape_deriv[node, qp]
            coeff_dig = w * jacobian[qp] * shape_interp[node, qp]
            for c in range(6):
                acc[c] += coeff_c * (fe1[qp, c] + fd1[qp, c]) + coeff_dig * (
                    fe2[qp, c] + fd2[qp, c] + fi[qp, c] - fe[qp, c] - fg[qp, c]
                )
        for c in range(6):
            acc[c] = acc[c] - node_fx[node, c]


@njit
def integrate_stiffness(
    weight, jacobian, shape_interp, shape_deriv, kuu, puu, cuu, ouu, quu, dd1, kd1, kd2, pd2, sums, acc, out
):
    """Element stiffness blocks ``out`` (nodes, nodes, 6, 6) (formula in the module docstring).

    ``kuu`` … ``pd2`` are (qps, 6, 6): K_I, P, C, O, Q, D_D1, K_D1, K_D2, P_D2 at the points;
    the number of nodes is ``out.shape[0]``.  Scratch: ``sums`` (>= qps, >= 4, 36) (the four
    matrix sums of each point, formed once per point instead of once per node pair) and
    ``acc`` (36,) (one block, flat: a loop the compiler vectorizes).  Each entry is the same
    sequence of operations as Kynema's, so the result is the same to the bit.
    """
    nn = out.shape[0]
    nq = weight.shape[0]
    for qp in range(nq):
        s = sums[qp]
        for a in range(6):
            for b in range(6):
                ab = 6 * a + b
                s[0, ab] = cuu[qp, a, b] + dd1[qp, a, b]
                s[1, ab] = ouu[qp, a, b] + kd1[qp, a, b]
                s[2, ab] = puu[qp, a, b] + pd2[qp, a, b]
                s[3, ab] = kuu[qp, a, b] + quu[qp, a, b] + kd2[qp, a, b]
    for i in range(nn):
        for j in range(nn):
            for ab in range(36):
                acc[ab] = 0.0
            for qp in range(nq):
                w = weight[qp]
                jac = jacobian[qp]
                phi_1 = shape_interp[i, qp]
                phi_2 = shape_interp[j, qp]
                dphi_1 = shape_deriv[i, qp]
                dphi_2 = shape_deriv[j, qp]
                ca = (phi_1 * phi_2) * (w * jac)
                cb = (phi_1 * dphi_2) * w
                cc = (dphi_1 * dphi_2) * (w / jac)
                cd = (dphi_1 * phi_2) * w
                s0 = sums[qp, 0]
                s1 = sums[qp, 1]
                s2 = sums[qp, 2]
                s3 = sums[qp, 3]
                for ab in range(36):
                    acc[ab] = acc[ab] + cc * s0[ab] + cd * s1[ab] + cb * s2[ab] + ca * s3[ab]
            blk = out[i, j]
            for a in range(6):
                for b in range(6):
                    blk[a, b] = acc[6 * a + b]


@njit
def integrate_inertia(
    weight, jacobian, shape_interp, shape_deriv, muu, gi, duu, gd1, gd2, dd2, beta_prime, gamma_prime, sums, acc, out
):
    """Element inertia blocks ``out`` (nodes, nodes, 6, 6): β′ (mass) + γ′ (gyroscopic + damping).

    ``muu`` … ``dd2`` are (qps, 6, 6): M, G_I, D, G_D1, G_D2, D_D2 at the points;
    ``beta_prime`` [1/s²], ``gamma_prime`` [1/s]; the number of nodes is ``out.shape[0]``.
    Scratch ``sums`` (>= qps, >= 5, 36), ``acc`` (36,) as for :func:`integrate_stiffness`.
    """
    nn = out.shape[0]
    nq = weight.shape[0]
    for qp in range(nq):
        s = sums[qp]
        for a in range(6):
            for b in range(6):
                ab = 6 * a + b
                s[0, ab] = muu[qp, a, b]
                s[1, ab] = duu[qp, a, b]
                s[2, ab] = gd1[qp, a, b]
                s[3, ab] = dd2[qp, a, b]
                s[4, ab] = gi[qp, a, b] + gd2[qp, a, b]
    for i in range(nn):
        for j in range(nn):
            for ab in range(36):
                acc[ab] = 0.0
            for qp in range(nq):
                w = weight[qp]
                jac = jacobian[qp]
                phi_1 = shape_interp[i, qp]
                phi_2 = shape_interp[j, qp]
                dphi_1 = shape_deriv[i, qp]
                dphi_2 = shape_deriv[j, qp]
                c1 = (dphi_1 * dphi_2) * (w / jac)
                c2 = (dphi_1 * phi_2) * w
                c3 = (phi_1 * dphi_2) * w
                c4 = (phi_1 * phi_2) * (w * jac)
                s0 = sums[qp, 0]
                s1 = sums[qp, 1]
                s2 = sums[qp, 2]
                s3 = sums[qp, 3]
                s4 = sums[qp, 4]
                for ab in range(36):
                    m_ab = c4 * s0[ab]
                    g_ab = c1 * s1[ab] + c2 * s2[ab] + c3 * s3[ab] + c4 * s4[ab]
                    acc[ab] = acc[ab] + (beta_prime * m_ab) + (gamma_prime * g_ab)
            blk = out[i, j]
            for a in range(6):
                for b in range(6):
                    blk[a, b] = acc[6 * a + b]


@njit
def beam_element_terms(
    nodes, q, v, vd, tangent, gravity, beta_prime, gamma_prime, kappa, mu,
    qp_weight, qp_jacobian, shape_interp, shape_deriv, qp_r0, qp_x0_prime, qp_m_star, qp_c_star,
    node_fx, qp_fe, w, res, mat, exact=False,
):  # fmt: skip
    """Residual (6 nodes,) and iteration matrix (6 nodes, 6 nodes) of one beam element.

    Parameters
    ----------
    nodes : (nodes,) int, the element's nodes (rows of the global node arrays).
    q, v, vd : (N, 7), (N, 6), (N, 6) global node displacement (u, rotation quaternion),
        velocity (u̇, ω) and acceleration (ü, ω̇).
    tangent : (N, 3, 3) rotation block of each node's tangent operator.
    gravity : (3,) [m/s²].
    beta_prime, gamma_prime : β′ [1/s²], γ′ [1/s]; kappa : weight κ of the stiffness.
    mu : (6,) structural damping coefficients [s].
    qp_weight, qp_jacobian : (qps,); shape_interp, shape_deriv : (>= nodes, qps).
    qp_r0 : (qps, 4) reference orientation; qp_x0_prime : (qps, 3) unit reference tangent.
    qp_m_star, qp_c_star : (qps, 6, 6) sectional mass and stiffness, material frame.
    node_fx : (nodes, 6) node loads [N, N m]; qp_fe : (qps, 6) distributed loads [N/m, N].
    w : :class:`ElementScratch` for at least this many nodes and points.
    res : (6 nodes,) out; mat : (6 nodes, 6 nodes) out.
    exact : the stiffness is the exact derivative of the residual (:mod:`.exact`) instead of
        Kynema's (the default: Kynema's, to the bit).
    """
    nn = nodes.shape[0]
    nq = qp_weight.shape[0]
    node_u = w.node_u[:nn]
    node_v = w.node_v[:nn]
    node_vd = w.node_vd[:nn]
    for i in range(nn):
        n = nodes[i]
        for c in range(7):
            node_u[i, c] = q[n, c]
        for c in range(6):
            node_v[i, c] = v[n, c]
            node_vd[i, c] = vd[n, c]
    qv = w.qp_vec
    qm = w.qp_mat
    for k in range(nq):
        qp_inertial_values(
            shape_interp, k, qp_r0[k], qp_m_star[k], node_u, node_v, node_vd, gravity,
            w.s3, w.s33, w.s4, w.s66, qv[V_FI, k], qv[V_FG, k], qm[M_M, k], qm[M_GI, k], qm[M_KI, k],
        )  # fmt: skip
        qp_stiffness_values(
            qp_jacobian[k], shape_interp, shape_deriv, k, qp_r0[k], qp_x0_prime[k], qp_c_star[k], node_u,
            w.s3, w.s33, w.s4, w.s6, w.s66, qv[V_FC, k], qv[V_FD, k], qm[M_C, k], qm[M_O, k], qm[M_P, k], qm[M_Q, k],
        )  # fmt: skip
        qp_damping_values(
            mu, qp_jacobian[k], shape_interp, shape_deriv, k, qp_r0[k], qp_x0_prime[k], qp_c_star[k], node_u, node_v,
            w.s3, w.s33, w.s4, w.s6, w.s66, qv[V_FD1, k], qv[V_FD2, k], qm[M_D, k], qm[M_DD1, k], qm[M_DD2, k],
            qm[M_GD1, k], qm[M_GD2, k], qm[M_PD2, k], qm[M_KD1, k], qm[M_KD2, k],
        )  # fmt: skip
        if exact:
            damped = mu[0] != 0.0 or mu[1] != 0.0 or mu[2] != 0.0 or mu[3] != 0.0 or mu[4] != 0.0 or mu[5] != 0.0
            exact_point_columns(
                qp_jacobian[k], shape_interp, shape_deriv, k, qp_x0_prime[k], node_u, node_v,
                qm[M_C, k], qm[M_D, k], qv[V_FC, k], qv[V_FD1, k], qm[M_KI, k], qm[M_M, k], gravity, damped,
                w.ex_s3, w.s33, w.ex_s4, w.ex_lam, w.ex_grad, w.ex_maps, w.ex_cols[k, :nn],
            )  # fmt: skip
    res_blk = w.res[:nn]
    integrate_residual(
        qp_weight, qp_jacobian, shape_interp, shape_deriv, node_fx,
        qv[V_FC, :nq], qv[V_FD, :nq], qv[V_FD1, :nq], qv[V_FD2, :nq], qv[V_FI, :nq], qp_fe, qv[V_FG, :nq], res_blk,
    )  # fmt: skip
    stiffness = w.blk[0, :nn, :nn]
    inertia = w.blk[1, :nn, :nn]
    if exact:
        integrate_exact_stiffness(qp_weight, qp_jacobian, shape_interp, shape_deriv, w.ex_cols[:nq, :nn], stiffness)
    else:
        integrate_stiffness(
            qp_weight, qp_jacobian, shape_interp, shape_deriv,
            qm[M_KI, :nq], qm[M_P, :nq], qm[M_C, :nq], qm[M_O, :nq], qm[M_Q, :nq],
            qm[M_DD1, :nq], qm[M_KD1, :nq], qm[M_KD2, :nq], qm[M_PD2, :nq], w.sums, w.acc, stiffness,
        )  # fmt: skip
    integrate_inertia(
        qp_weight, qp_jacobian, shape_interp, shape_deriv,
        qm[M_M, :nq], qm[M_GI, :nq], qm[M_D, :nq], qm[M_GD1, :nq], qm[M_GD2, :nq], qm[M_DD2, :nq],
        beta_prime, gamma_prime, w.sums, w.acc, inertia,
    )  # fmt: skip
    system_matrix(stiffness, inertia, tangent, nodes, kappa, mat)
    for i in range(nn):
        for c in range(6):
            res[6 * i + c] = res_blk[i, c]


@njit
def system_matrix(stiffness, inertia, tangent, nodes, kappa, out):
    """Iteration matrix ``out`` (6 nodes, 6 nodes): block (i, j) ``= I_ij + κ S_ij 𝒯_j``.

    Parameters
    ----------
    stiffness, inertia : (nodes, nodes, 6, 6) the blocks S and I.
    tangent : (N, 3, 3) rotation block T of every node's tangent operator (Kynema's transposed
        𝒯, as the state stores it); ``𝒯_j = blockdiag(I, T[nodes[j]])``.
    nodes : (nodes,) int, the element's nodes.
    kappa : weight κ of the stiffness (1 in a Newton iteration).
    """
    nn = stiffness.shape[0]
    for j in range(nn):
        t = tangent[nodes[j]]
        for i in range(nn):
            s = stiffness[i, j]
            m = inertia[i, j]
            t00, t01, t02 = t[0, 0], t[0, 1], t[0, 2]
            t10, t11, t12 = t[1, 0], t[1, 1], t[1, 2]
            t20, t21, t22 = t[2, 0], t[2, 1], t[2, 2]
            for a in range(6):
                row = 6 * i + a
                col = 6 * j
                out[row, col] = m[a, 0] + kappa * s[a, 0]
                out[row, col + 1] = m[a, 1] + kappa * s[a, 1]
                out[row, col + 2] = m[a, 2] + kappa * s[a, 2]
                s3, s4, s5 = s[a, 3], s[a, 4], s[a, 5]
                out[row, col + 3] = m[a, 3] + kappa * (s3 * t00 + s4 * t10 + s5 * t20)
                out[row, col + 4] = m[a, 4] + kappa * (s3 * t01 + s4 * t11 + s5 * t21)
                out[row, col + 5] = m[a, 5] + kappa * (s3 * t02 + s4 * t12 + s5 * t22)
