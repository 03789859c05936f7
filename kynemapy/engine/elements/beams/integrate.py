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
``calculate_system_matrix.hpp`` and the driver ``calculate_quadrature_point_values.hpp``.  The
residual and the separate kernels (:func:`integrate_stiffness`, :func:`integrate_inertia`,
:func:`system_matrix`) evaluate the sums in Kynema's order; the element kernel forms the
iteration matrix in one pass instead (:func:`integrate_system`: a product of the shape-function
table with per-node point columns, 4.5× fewer multiply–adds, equal to round-off).  Nothing
allocates: scratch comes in an :class:`ElementScratch` made once by :func:`element_scratch`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements.beams.exact import exact_point_columns, integrate_exact_stiffness
from kynemapy.engine.elements.beams.interpolate import interp_rotation
from kynemapy.engine.elements.beams.qp import qp_damping_values, qp_inertial_at, qp_stiffness_at
from kynemapy.math.quaternion import quat_compose, quat_to_matrix

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
    (2, 6, 9), ``ex_maps`` (2, 3, 3), ``ex_lam`` (2, 4, 3), ``ex_s3`` (10, 3), ``ex_s4`` (2, 4);
    for :func:`integrate_system`: ``pts`` (qps, 8, 36) the per-point matrix sums, ``wm``
    (2, qps, 6, 6 nodes) the point columns of every node.
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
    pts: np.ndarray
    wm: np.ndarray


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
        pts=np.zeros((qps, 8, 36)),
        wm=np.zeros((2, qps, 6, 6 * nodes)),
    )


@njit
def integrate_residual(weight, jacobian, shape_interp, shape_deriv, node_fx, fe1, fe2, fd1, fd2, fi, fe, fg, out):
    """Element residual ``out`` (nodes, 6) [N, N m] (formula in the module docstring).

    Parameters
    ----------
    weight, jacobian : (qps,) quadrature weights and Jacobians J [m].
    shape_interp, shape_deriv : (>= nodes, >= qps) φ and dφ/dξ.
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


# rows of ElementScratch.pts: the inertia (I) and stiffness (S) sums of each point, per product
# of shape functions (a: φ_i φ_j w J, b: φ_i φ′_j w, c: φ′_i φ′_j w / J, d: φ′_i φ_j w)
P_IA, P_SA, P_IB, P_SB, P_IC, P_SC, P_ID, P_SD = range(8)


@njit
def integrate_system(
    weight,
    jacobian,
    shape_interp,
    shape_deriv,
    qm,
    beta_prime,
    gamma_prime,
    kappa,
    tangent,
    nodes,
    damped,
    pts,
    wm,
    out,
):
    """Iteration matrix ``out`` (>= 6 nodes, >= 6 nodes): block (i, j) ``= I_ij + κ S_ij 𝒯_j``.

    The same sums as :func:`integrate_stiffness`, :func:`integrate_inertia` and
    :func:`system_matrix` (Kynema's stiffness), in another order: per point k the eight 6 × 6
    sums ``I_a = β′ M + γ′ (G_I + G_D2)``, ``S_a = κ (K_I + Q + K_D2)``, ``I_b = γ′ D_D2``,
    ``S_b = κ (P + P_D2)``, ``I_c = γ′ D``, ``S_c = κ (C + D_D1)``, ``I_d = γ′ G_D1``,
    ``S_d = κ (O + K_D1)``; per node j and point k the two point columns

    ``W0_jk = w J φ_j (I_a + S_a 𝒯_j) + w φ′_j (I_b + S_b 𝒯_j)``,
    ``W1_jk = (w/J) φ′_j (I_c + S_c 𝒯_j) + w φ_j (I_d + S_d 𝒯_j)``

    (``wm[0, k, a, 6j + b]``, ``wm[1, k, a, 6j + b]``), and the rows of node i
    ``out[6i + a, :] = Σ_k φ_i(k) wm[0, k, a, :] + φ′_i(k) wm[1, k, a, :]``: a product of the
    (nodes, 2 qps) shape-function table and the (2 qps, 36 nodes) point columns, on contiguous
    rows of 6 nodes.  P² Q 72 multiply–adds instead of the P² Q 324 of the three kernels, in
    loops the compiler vectorizes; the result differs from theirs by round-off only.

    Parameters
    ----------
    weight, jacobian : (qps,) quadrature weights and Jacobians J [m].
    shape_interp, shape_deriv : (>= nodes, >= qps) φ and dφ/dξ.
    qm : (15, >= qps, 6, 6) the point matrices (rows ``M_*`` of :class:`ElementScratch`'s ``qp_mat``).
    beta_prime [1/s²], gamma_prime [1/s], kappa : the weights of mass, damping-gyroscopic and
        stiffness terms.
    tangent : (N, 3, 3) rotation block T of every node's tangent operator (as
        :func:`system_matrix`); nodes : (nodes,) int, the element's nodes.
    damped : False when the damping matrices (``D``, ``D_D1`` … ``K_D2``) are zero and the
        others have the point kernels' structure (``K_I``, ``G_I``, ``O`` zero in their left
        column blocks, ``P`` in its top row blocks, ``Q`` outside block 22): the zero terms
        are not read, and the sums without them are the same but for the sign of zeros.  None:
        as False, with the code for True not compiled (the plain beam unit's variant).
    pts : (>= qps, 8, 36), wm : (2, >= qps, 6, >= 6 nodes) scratch.
    out : (>= 6 nodes, >= 6 nodes), C-contiguous rows; the number of nodes is ``nodes.shape[0]``.
    """
    nn = nodes.shape[0]
    nq = weight.shape[0]
    m = 6 * nn
    for k in range(nq):
        p = pts[k]
        mm, gi, gd2, ki, qq, kd2 = qm[M_M, k], qm[M_GI, k], qm[M_GD2, k], qm[M_KI, k], qm[M_Q, k], qm[M_KD2, k]
        dd2, pp, pd2, dd, cc, dd1 = qm[M_DD2, k], qm[M_P, k], qm[M_PD2, k], qm[M_D, k], qm[M_C, k], qm[M_DD1, k]
        gd1, oo, kd1 = qm[M_GD1, k], qm[M_O, k], qm[M_KD1, k]
        if damped is None or not damped:
            for a in range(6):
                for b in range(6):
                    ab = 6 * a + b
                    p[P_IA, ab] = beta_prime * mm[a, b] + gamma_prime * gi[a, b]
                    p[P_SA, ab] = kappa * (ki[a, b] + qq[a, b])
                    p[P_SB, ab] = kappa * pp[a, b]
                    p[P_SC, ab] = kappa * cc[a, b]
                    p[P_SD, ab] = kappa * oo[a, b]
            continue
        for a in range(6):
            for b in range(6):
                ab = 6 * a + b
                p[P_IA, ab] = beta_prime * mm[a, b] + gamma_prime * (gi[a, b] + gd2[a, b])
                p[P_SA, ab] = kappa * (ki[a, b] + qq[a, b] + kd2[a, b])
                p[P_IB, ab] = gamma_prime * dd2[a, b]
                p[P_SB, ab] = kappa * (pp[a, b] + pd2[a, b])
                p[P_IC, ab] = gamma_prime * dd[a, b]
                p[P_SC, ab] = kappa * (cc[a, b] + dd1[a, b])
                p[P_ID, ab] = gamma_prime * gd1[a, b]
                p[P_SD, ab] = kappa * (oo[a, b] + kd1[a, b])
    for k in range(nq):  # a point's sums (8 × 36) stay in the cache while every node uses them
        w = weight[k]
        jac = jacobian[k]
        p = pts[k]
        for j in range(nn):
            t = tangent[nodes[j]]
            t00, t01, t02 = t[0, 0], t[0, 1], t[0, 2]
            t10, t11, t12 = t[1, 0], t[1, 1], t[1, 2]
            t20, t21, t22 = t[2, 0], t[2, 1], t[2, 2]
            col = 6 * j
            phi = shape_interp[j, k]
            dphi = shape_deriv[j, k]
            if damped is None or not damped:  # I_b = I_c = I_d = 0; the structural zeros of the sums are skipped:
                # S_a's left columns (K_I, Q), S_b's top rows (P) and S_d's left columns (O)
                c1, c2 = phi * (w * jac), dphi * w
                i1, s1, s2 = p[P_IA], p[P_SA], p[P_SB]
                for a in range(6):
                    row = wm[0, k, a]
                    o = 6 * a
                    if a < 3:
                        for b in range(3):
                            row[col + b] = c1 * i1[o + b]
                        x3 = c1 * s1[o + 3]
                        x4 = c1 * s1[o + 4]
                        x5 = c1 * s1[o + 5]
                    else:
                        for b in range(3):
                            row[col + b] = c1 * i1[o + b] + c2 * s2[o + b]
                        x3 = c1 * s1[o + 3] + c2 * s2[o + 3]
                        x4 = c1 * s1[o + 4] + c2 * s2[o + 4]
                        x5 = c1 * s1[o + 5] + c2 * s2[o + 5]
                    row[col + 3] = c1 * i1[o + 3] + (x3 * t00 + x4 * t10 + x5 * t20)
                    row[col + 4] = c1 * i1[o + 4] + (x3 * t01 + x4 * t11 + x5 * t21)
                    row[col + 5] = c1 * i1[o + 5] + (x3 * t02 + x4 * t12 + x5 * t22)
                c1, c2 = dphi * (w / jac), phi * w
                s1, s2 = p[P_SC], p[P_SD]
                for a in range(6):
                    row = wm[1, k, a]
                    o = 6 * a
                    for b in range(3):
                        row[col + b] = c1 * s1[o + b]
                    x3 = c1 * s1[o + 3] + c2 * s2[o + 3]
                    x4 = c1 * s1[o + 4] + c2 * s2[o + 4]
                    x5 = c1 * s1[o + 5] + c2 * s2[o + 5]
                    row[col + 3] = x3 * t00 + x4 * t10 + x5 * t20
                    row[col + 4] = x3 * t01 + x4 * t11 + x5 * t21
                    row[col + 5] = x3 * t02 + x4 * t12 + x5 * t22
                continue
            for side in range(2):
                if side == 0:
                    c1, c2 = phi * (w * jac), dphi * w
                    r1, r2 = P_IA, P_IB
                else:
                    c1, c2 = dphi * (w / jac), phi * w
                    r1, r2 = P_IC, P_ID
                i1, s1, i2, s2 = p[r1], p[r1 + 1], p[r2], p[r2 + 1]
                for a in range(6):
                    row = wm[side, k, a]
                    o = 6 * a
                    for b in range(3):
                        row[col + b] = (c1 * i1[o + b] + c2 * i2[o + b]) + (c1 * s1[o + b] + c2 * s2[o + b])
                    x3 = c1 * s1[o + 3] + c2 * s2[o + 3]
                    x4 = c1 * s1[o + 4] + c2 * s2[o + 4]
                    x5 = c1 * s1[o + 5] + c2 * s2[o + 5]
                    row[col + 3] = (c1 * i1[o + 3] + c2 * i2[o + 3]) + (x3 * t00 + x4 * t10 + x5 * t20)
                    row[col + 4] = (c1 * i1[o + 4] + c2 * i2[o + 4]) + (x3 * t01 + x4 * t11 + x5 * t21)
                    row[col + 5] = (c1 * i1[o + 5] + c2 * i2[o + 5]) + (x3 * t02 + x4 * t12 + x5 * t22)
    if 6 * nn == out.shape[0] and m == out.shape[1] and m == wm.shape[3]:
        # the element fills its block and the scratch: the rows 6i … 6i + 5 of ``out`` are one
        # contiguous row of 36 nodes (``g``), and so are the point columns of each point (``wk``)
        g = out.reshape((nn, 6 * m))
        wk = wm.reshape((2, wm.shape[1], 6 * m))
        _product(shape_interp, shape_deriv, wk, nn, nq, g)
    else:
        for a in range(6):
            _product(shape_interp, shape_deriv, wm[:, :, a, :m], nn, nq, out[a::6, :m])


@njit(inline=True)
def _product(shape_interp, shape_deriv, wk, nn, nq, g):
    """``g[i, :] = Σ_k φ_i(k) wk[0, k, :] + φ′_i(k) wk[1, k, :]`` for the ``nn`` rows of ``g``."""
    i = 0
    while i + 3 < nn:  # four rows at a time: each point column is loaded once for the four
        _rows_product(shape_interp, shape_deriv, wk, g.shape[1], nq, g[i], g[i + 1], g[i + 2], g[i + 3], i)
        i += 4
    while i < nn:
        _row_product(shape_interp, shape_deriv, wk, g.shape[1], nq, g[i], i)
        i += 1


@njit(inline=True)
def _rows_product(shape_interp, shape_deriv, wk, m, nq, r0, r1, r2, r3, i):
    """Rows i … i + 3 of :func:`_product`, four points at a time (each row is loaded and stored
    once per four points: a quarter of the memory traffic)."""
    for c in range(m):
        r0[c] = 0.0
        r1[c] = 0.0
        r2[c] = 0.0
        r3[c] = 0.0
    for side in range(2):
        f = shape_interp if side == 0 else shape_deriv
        k = 0
        while k + 3 < nq:
            p0, p1, p2, p3 = f[i, k], f[i, k + 1], f[i, k + 2], f[i, k + 3]
            q0, q1, q2, q3 = f[i + 1, k], f[i + 1, k + 1], f[i + 1, k + 2], f[i + 1, k + 3]
            s0, s1, s2, s3 = f[i + 2, k], f[i + 2, k + 1], f[i + 2, k + 2], f[i + 2, k + 3]
            t0, t1, t2, t3 = f[i + 3, k], f[i + 3, k + 1], f[i + 3, k + 2], f[i + 3, k + 3]
            w0 = wk[side, k]
            w1 = wk[side, k + 1]
            w2 = wk[side, k + 2]
            w3 = wk[side, k + 3]
            for c in range(m):
                x0, x1, x2, x3 = w0[c], w1[c], w2[c], w3[c]
                r0[c] += (p0 * x0 + p1 * x1) + (p2 * x2 + p3 * x3)
                r1[c] += (q0 * x0 + q1 * x1) + (q2 * x2 + q3 * x3)
                r2[c] += (s0 * x0 + s1 * x1) + (s2 * x2 + s3 * x3)
                r3[c] += (t0 * x0 + t1 * x1) + (t2 * x2 + t3 * x3)
            k += 4
        while k < nq:
            p0, q0, s0, t0 = f[i, k], f[i + 1, k], f[i + 2, k], f[i + 3, k]
            w0 = wk[side, k]
            for c in range(m):
                x0 = w0[c]
                r0[c] += p0 * x0
                r1[c] += q0 * x0
                r2[c] += s0 * x0
                r3[c] += t0 * x0
            k += 1


@njit(inline=True)
def _row_product(shape_interp, shape_deriv, wk, m, nq, r0, i):
    """Row i of :func:`_product` (the rows left after the fours)."""
    for c in range(m):
        r0[c] = 0.0
    for side in range(2):
        f = shape_interp if side == 0 else shape_deriv
        k = 0
        while k + 3 < nq:
            p0, p1, p2, p3 = f[i, k], f[i, k + 1], f[i, k + 2], f[i, k + 3]
            w0 = wk[side, k]
            w1 = wk[side, k + 1]
            w2 = wk[side, k + 2]
            w3 = wk[side, k + 3]
            for c in range(m):
                r0[c] += (p0 * w0[c] + p1 * w1[c]) + (p2 * w2[c] + p3 * w3[c])
            k += 4
        while k < nq:
            p0 = f[i, k]
            w0 = wk[side, k]
            for c in range(m):
                r0[c] += p0 * w0[c]
            k += 1


@njit(inline=True)
def beam_element_terms(
    nodes, q, v, vd, tangent, gravity, beta_prime, gamma_prime, kappa, mu,
    qp_weight, qp_jacobian, shape_interp, shape_deriv, qp_r0, qp_x0_prime, qp_m_star, qp_c_star,
    node_fx, qp_fe, w, res, mat, exact,
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
    qp_weight, qp_jacobian : (qps,); shape_interp, shape_deriv : (>= nodes, >= qps), C-contiguous
        (the table's padded rows, not a slice: the interpolations are then compiled for one
        layout, the set-up's).
    qp_r0 : (qps, 4) reference orientation; qp_x0_prime : (qps, 3) unit reference tangent.
    qp_m_star, qp_c_star : (qps, 6, 6) sectional mass and stiffness, material frame.
    node_fx : (nodes, 6) node loads [N, N m]; qp_fe : (qps, 6) distributed loads [N/m, N].
    w : :class:`ElementScratch` for at least this many nodes and points.
    res : (6 nodes,) out; mat : (>= 6 nodes, >= 6 nodes) out, its first 6 nodes rows and columns
        (C-contiguous rows: the compiler vectorizes :func:`integrate_system`'s row loops).
    exact : True: the stiffness is the exact derivative of the residual (:mod:`.exact`);
        False: Kynema's, to the bit; None: Kynema's, for an undamped element (``mu`` zero), with
        neither the damping nor the exact stiffness compiled: numba prunes the branches on
        ``exact is None`` before typing, so the plain variant (the beam unit of every model without
        damping or exact tangent, :mod:`kynemapy.engine.unit_call`) compiles in about 12 s less.
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
    damped = mu[0] != 0.0 or mu[1] != 0.0 or mu[2] != 0.0 or mu[3] != 0.0 or mu[4] != 0.0 or mu[5] != 0.0
    use_exact = False
    if exact is not None:  # (pruned at compile time in the plain variant)
        use_exact = exact
    elif damped:  # the plain variant is never given a damped element: fail the step, loudly
        for i in range(6 * nn):
            res[i] = np.nan
        return
    for k in range(nq):
        # the point's rotation r, r ⊗ r0 and its matrix, once for the inertial and elastic values
        r, xr, rr = w.s4[0], w.s4[2], w.s33[6]
        interp_rotation(shape_interp, k, node_u, r)
        quat_compose(r, qp_r0[k], xr)
        quat_to_matrix(xr, rr)
        qp_inertial_at(
            shape_interp, k, rr, qp_m_star[k], node_v, node_vd, gravity,
            w.s3, w.s33, w.s66, qv[V_FI, k], qv[V_FG, k], qm[M_M, k], qm[M_GI, k], qm[M_KI, k],
        )  # fmt: skip
        qp_stiffness_at(
            qp_jacobian[k], shape_interp, shape_deriv, k, r, rr, qp_x0_prime[k], qp_c_star[k], node_u,
            w.s3, w.s4, w.s6, w.s66, qv[V_FC, k], qv[V_FD, k], qm[M_C, k], qm[M_O, k], qm[M_P, k], qm[M_Q, k],
        )  # fmt: skip
        if exact is None or (not damped and not use_exact):  # F_D1 = F_D2 = 0; the matrices are not read
            for c in range(6):
                qv[V_FD1, k, c] = 0.0
                qv[V_FD2, k, c] = 0.0
            continue
        qp_damping_values(
            mu, qp_jacobian[k], shape_interp, shape_deriv, k, qp_r0[k], qp_x0_prime[k], qp_c_star[k], node_u, node_v,
            w.s3, w.s33, w.s4, w.s6, w.s66, qv[V_FD1, k], qv[V_FD2, k], qm[M_D, k], qm[M_DD1, k], qm[M_DD2, k],
            qm[M_GD1, k], qm[M_GD2, k], qm[M_PD2, k], qm[M_KD1, k], qm[M_KD2, k],
        )  # fmt: skip
        if use_exact:
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
    # the exact tangent: β′ M + γ′ G as in Kynema's mode (κ = 0 there), then its own κ S 𝒯
    if exact is None:  # (the plain variant: integrate_system without its damped sums)
        integrate_system(
            qp_weight, qp_jacobian, shape_interp, shape_deriv, qm, beta_prime, gamma_prime, kappa, tangent, nodes,
            None, w.pts, w.wm, mat,
        )  # fmt: skip
    else:
        integrate_system(
            qp_weight, qp_jacobian, shape_interp, shape_deriv, qm, beta_prime, gamma_prime,
            0.0 if use_exact else kappa, tangent, nodes, damped or use_exact, w.pts, w.wm, mat,
        )  # fmt: skip
    if exact is not None and use_exact:
        stiffness = w.blk[0, :nn, :nn]
        integrate_exact_stiffness(qp_weight, qp_jacobian, shape_interp, shape_deriv, w.ex_cols[:nq, :nn], stiffness)
        add_stiffness(stiffness, tangent, nodes, kappa, mat)
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


@njit
def add_stiffness(stiffness, tangent, nodes, kappa, out):
    """``out`` (>= 6 nodes, >= 6 nodes) block (i, j) ``+= κ S_ij 𝒯_j`` (as :func:`system_matrix`).

    Parameters
    ----------
    stiffness : (nodes, nodes, 6, 6) the blocks S.
    tangent : (N, 3, 3) rotation block T of every node's tangent operator; ``𝒯_j = blockdiag(I, T[nodes[j]])``.
    nodes : (nodes,) int, the element's nodes.
    kappa : weight κ of the stiffness.
    """
    nn = stiffness.shape[0]
    for j in range(nn):
        t = tangent[nodes[j]]
        t00, t01, t02 = t[0, 0], t[0, 1], t[0, 2]
        t10, t11, t12 = t[1, 0], t[1, 1], t[1, 2]
        t20, t21, t22 = t[2, 0], t[2, 1], t[2, 2]
        for i in range(nn):
            s = stiffness[i, j]
            for a in range(6):
                row = out[6 * i + a]
                col = 6 * j
                row[col] += kappa * s[a, 0]
                row[col + 1] += kappa * s[a, 1]
                row[col + 2] += kappa * s[a, 2]
                s3, s4, s5 = s[a, 3], s[a, 4], s[a, 5]
                row[col + 3] += kappa * (s3 * t00 + s4 * t10 + s5 * t20)
                row[col + 4] += kappa * (s3 * t01 + s4 * t11 + s5 * t21)
                row[col + 5] += kappa * (s3 * t02 + s4 * t12 + s5 * t22)
