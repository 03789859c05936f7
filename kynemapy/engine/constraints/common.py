"""Pieces shared by the constraint kernels."""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.math.quaternion import quat_compose, quat_to_matrix, rotate_vector
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
def rotation_gradients(c, a33, bb, bt, with_base, exact):
    """Rotation blocks of the gradient of ``Φ[3:6] = axial(C)``.

    Kynema (``exact`` False): ``B_t = AX(C)ᵀ``, ``B_b = −AX(C)``, the exact
    derivatives only on the constraint manifold (C symmetric, i.e. Φ = 0).
    Exact (spatial increments, ``δC = δθ_t~ C − C δθ_b~``): ``B_t = AX(C)``,
    ``B_b = −AX(C)ᵀ``.
    """
    ax_matrix(c, a33)
    for i in range(3):
        for j in range(3):
            if exact:
                bt[3 + i, 3 + j] = a33[i, j]
                if with_base:
                    bb[3 + i, 3 + j] = -a33[j, i]
            else:
                bt[3 + i, 3 + j] = a33[j, i]
                if with_base:
                    bb[3 + i, 3 + j] = -a33[i, j]


@njit
def rotation_geometric_stiffness(c, lam, with_base, v1, v2, m1, k):
    """K^Φ: derivative of the rotation rows of ``[B_b; B_t]ᵀ λ`` for the exact gradients.

    With ``a = axial(C)`` and ``λ = λ[3:6]`` (``B_tᵀλ = AX(C)ᵀλ``, ``B_bᵀλ = −AX(C)λ``):
    ``K_tt = −λ aᵀ − ½ Cᵀ λ~``, ``K_tb = λ aᵀ + ½ (Cᵀλ)~``,
    ``K_bt = λ aᵀ − ½ (Cλ)~``, ``K_bb = −λ aᵀ + ½ C λ~`` (added to ``k``).
    """
    axial(c, v1)
    lx, ly, lz = lam[3], lam[4], lam[5]
    for i in range(3):
        d0, d1, d2 = c[0, i], c[1, i], c[2, i]  # row i of Cᵀ
        # row i of Cᵀ λ~
        k[1, 1, i, 0] += -lam[3 + i] * v1[0] - 0.5 * (d1 * lz - d2 * ly)
        k[1, 1, i, 1] += -lam[3 + i] * v1[1] - 0.5 * (-d0 * lz + d2 * lx)
        k[1, 1, i, 2] += -lam[3 + i] * v1[2] - 0.5 * (d0 * ly - d1 * lx)
    if not with_base:
        return
    for i in range(3):
        v2[i] = c[0, i] * lx + c[1, i] * ly + c[2, i] * lz  # Cᵀ λ
    tilde(v2, m1)
    for i in range(3):
        for j in range(3):
            k[1, 0, i, j] += lam[3 + i] * v1[j] + 0.5 * m1[i, j]
    for i in range(3):
        v2[i] = c[i, 0] * lx + c[i, 1] * ly + c[i, 2] * lz  # C λ
    tilde(v2, m1)
    for i in range(3):
        for j in range(3):
            k[0, 1, i, j] += lam[3 + i] * v1[j] - 0.5 * m1[i, j]
    for i in range(3):
        c0, c1, c2 = c[i, 0], c[i, 1], c[i, 2]
        # row i of C λ~
        k[0, 0, i, 0] += -lam[3 + i] * v1[0] + 0.5 * (c1 * lz - c2 * ly)
        k[0, 0, i, 1] += -lam[3 + i] * v1[1] + 0.5 * (-c0 * lz + c2 * lx)
        k[0, 0, i, 2] += -lam[3 + i] * v1[2] + 0.5 * (c0 * ly - c1 * lx)


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
