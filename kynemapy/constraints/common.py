"""Pieces shared by the constraint kernels."""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.math.quaternion import quat_compose, quat_inverse, quat_to_matrix, rotate_vector
from kynemapy.math.so3 import ax_matrix, axial, tilde


@njit
def translation_residual(X0, ub, rb, ut, r1x0, phi):
    """``Φ[0:3] = u_t + X0 − u_b − R(r_b) X0`` (literal order); writes ``R(r_b) X0`` to ``r1x0``."""
    rotate_vector(rb, X0, r1x0)
    for i in range(3):
        phi[i] = ut[i] + X0[i] - ub[i] - r1x0[i]


@njit
def relative_rotation(rt, rb_inv, tmp4, c, phi):
    """``C = R(r_t ⊗ r_b⁻¹)`` (3, 3) and ``Φ[3:6] = axial(C)``."""
    quat_compose(rt, rb_inv, tmp4)
    quat_to_matrix(tmp4, c)
    axial(c, phi[3:6])


@njit
def rotation_gradients(c, a33, bb, bt, with_base):
    """``B_t[3:6,3:6] = AX(C)ᵀ`` and (two-node) ``B_b[3:6,3:6] = −AX(C)``."""
    ax_matrix(c, a33)
    for i in range(3):
        for j in range(3):
            bt[3 + i, 3 + j] = a33[j, i]
            if with_base:
                bb[3 + i, 3 + j] = -a33[i, j]


@njit
def rotation_geometric_stiffness(c, lam, with_base, v1, v2, m1, k):
    """K^Φ of the rotation rows ``[B_b; B_t]ᵀ λ`` of the axial-vector residual.

    With ``a = axial(C)``, ``λ = λ[3:6]`` and spatial increments (``δC = δθ_t~ C − C δθ_b~``):
    ``K_tt = −λ aᵀ + ½ (Cλ)~``, ``K_tb = λ aᵀ − ½ C λ~``,
    ``K_bt = λ aᵀ + ½ Cᵀ λ~``, ``K_bb = −λ aᵀ − ½ (Cᵀλ)~`` (added to ``k``).
    """
    axial(c, v1)
    for i in range(3):
        v2[i] = c[i, 0] * lam[3] + c[i, 1] * lam[4] + c[i, 2] * lam[5]
    tilde(v2, m1)
    for i in range(3):
        for j in range(3):
            k[1, 1, i, j] += -lam[3 + i] * v1[j] + 0.5 * m1[i, j]
    if not with_base:
        return
    # λ~ (columns of C λ~ and Cᵀ λ~)
    lx, ly, lz = lam[3], lam[4], lam[5]
    for i in range(3):
        # row i of C λ~ : (C[i,:]) · λ~[:, j]
        c0, c1, c2 = c[i, 0], c[i, 1], c[i, 2]
        clt0 = c1 * lz - c2 * ly
        clt1 = -c0 * lz + c2 * lx
        clt2 = c0 * ly - c1 * lx
        k[1, 0, i, 0] += lam[3 + i] * v1[0] - 0.5 * clt0
        k[1, 0, i, 1] += lam[3 + i] * v1[1] - 0.5 * clt1
        k[1, 0, i, 2] += lam[3 + i] * v1[2] - 0.5 * clt2
        d0, d1, d2 = c[0, i], c[1, i], c[2, i]  # row i of Cᵀ
        ctl0 = d1 * lz - d2 * ly
        ctl1 = -d0 * lz + d2 * lx
        ctl2 = d0 * ly - d1 * lx
        k[0, 1, i, 0] += lam[3 + i] * v1[0] + 0.5 * ctl0
        k[0, 1, i, 1] += lam[3 + i] * v1[1] + 0.5 * ctl1
        k[0, 1, i, 2] += lam[3 + i] * v1[2] + 0.5 * ctl2
    for i in range(3):
        v2[i] = c[0, i] * lam[3] + c[1, i] * lam[4] + c[2, i] * lam[5]
    tilde(v2, m1)
    for i in range(3):
        for j in range(3):
            k[0, 0, i, j] += -lam[3 + i] * v1[j] - 0.5 * m1[i, j]


@njit
def lever_geometric_stiffness(lam, r1x0, k):
    """K^Φ of ``(R_b X0)~ᵀ λ_u`` on the base rotation rows: ``K_bb += −λ_u~ (R_b X0)~``."""
    l0, l1, l2 = lam[0], lam[1], lam[2]
    x0, x1, x2 = r1x0[0], r1x0[1], r1x0[2]
    # λ~ x~ = x λᵀ − (λ·x) I
    dot = l0 * x0 + l1 * x1 + l2 * x2
    k[0, 0, 0, 0] -= x0 * l0 - dot
    k[0, 0, 0, 1] -= x0 * l1
    k[0, 0, 0, 2] -= x0 * l2
    k[0, 0, 1, 0] -= x1 * l0
    k[0, 0, 1, 1] -= x1 * l1 - dot
    k[0, 0, 1, 2] -= x1 * l2
    k[0, 0, 2, 0] -= x2 * l0
    k[0, 0, 2, 1] -= x2 * l1
    k[0, 0, 2, 2] -= x2 * l2 - dot


@njit
def inverse_of(r, out):
    """``out = r⁻¹`` (alias of :func:`quat_inverse` for readability)."""
    quat_inverse(r, out)
