"""Rigid-body ("mass") element table: residual ``F_I − F_g`` and iteration block of each mass.

Notation (inertial frame): ``M`` the 6×6 mass matrix ``diag(R,R) M* diag(R,R)ᵀ``
[kg, kg m, kg m²], ``m`` the mass [kg], ``η`` the centre-of-mass offset from the
node [m], ``ρ`` the 3×3 inertia about the node [kg m²], ``ω`` [rad/s],
``ω̇`` [rad/s²], ``ü`` [m/s²], gravity ``g`` [m/s²].  The building blocks take the
"tilde" matrices as separate arguments, exactly as Kynema's kernels do (its unit
tests feed non-skew matrices to them).  Scratch arrays are passed in: nothing
here allocates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements.table import add_element_block, node_data
from kynemapy.engine.params import P_BETA_PRIME, P_EXACT, P_GAMMA_PRIME, P_STIFFNESS
from kynemapy.engine.unit_call import load_field
from kynemapy.math.quaternion import quat_compose, quat_to_matrix
from kynemapy.math.so3 import tilde


class MassTable(NamedTuple):
    """The masses (n of them): the standard table fields, then ``m_star`` (n, 6, 6), the
    material mass matrix M* about the node [kg, kg m, kg m²]."""

    nodes: np.ndarray
    rows: np.ndarray
    slots: np.ndarray
    res: np.ndarray
    mat: np.ndarray
    m_star: np.ndarray


TABLE = MassTable
#: own fields: (field, arena, trailing shape, Model field)
FIELDS = (("m_star", "mf", (6, 6), "mass_m_star"),)
#: one node per mass, all six DOFs
NODE_DOFS = 6
#: this table's position in :data:`kynemapy.engine.elements.TABLES` and ``Data.tables``
#: (:func:`terms` reads it there; tests/unit/test_structure.py checks it)
POSITION = 1


def nodes(model) -> np.ndarray:
    """(n_masses, 1) node of each mass."""
    return np.asarray(model.mass_node, dtype=np.int64).reshape(-1, 1)


@njit(inline=True)
def rotate_section_matrix(xr, c_star, rr0, c_tmp, out):
    """``out = diag(R,R) C* diag(R,R)ᵀ`` with ``R = R(xr)`` (6, 6); scratch ``rr0`` (3,3), ``c_tmp`` (6,6).

    ``rr0`` receives R (:func:`~kynemapy.math.quaternion.quat_to_matrix`), then
    :func:`rotate_by_matrix`.
    """
    quat_to_matrix(xr, rr0)
    rotate_by_matrix(rr0, c_star, c_tmp, out)


@njit(inline=True)
def rotate_by_matrix(rr0, c_star, c_tmp, out):
    """``out = diag(R,R) C* diag(R,R)ᵀ`` (6, 6) for the rotation matrix ``rr0`` (3, 3); scratch ``c_tmp`` (6, 6).

    Two passes, ``c_tmp = diag(R,R) C*`` then ``out = c_tmp diag(R,R)ᵀ``, each entry a
    three-term sum in index order.  The nine entries of R are read into locals once:
    numba cannot prove the arrays distinct, so entries read inside the loops would be
    reloaded after every store.
    """
    r00, r01, r02 = rr0[0, 0], rr0[0, 1], rr0[0, 2]
    r10, r11, r12 = rr0[1, 0], rr0[1, 1], rr0[1, 2]
    r20, r21, r22 = rr0[2, 0], rr0[2, 1], rr0[2, 2]
    for o in range(0, 6, 3):
        for j in range(6):
            x0, x1, x2 = c_star[o, j], c_star[o + 1, j], c_star[o + 2, j]
            c_tmp[o, j] = r00 * x0 + r01 * x1 + r02 * x2
            c_tmp[o + 1, j] = r10 * x0 + r11 * x1 + r12 * x2
            c_tmp[o + 2, j] = r20 * x0 + r21 * x1 + r22 * x2
    for i in range(6):
        for o in range(0, 6, 3):
            y0, y1, y2 = c_tmp[i, o], c_tmp[i, o + 1], c_tmp[i, o + 2]
            out[i, o] = y0 * r00 + y1 * r01 + y2 * r02
            out[i, o + 1] = y0 * r10 + y1 * r11 + y2 * r12
            out[i, o + 2] = y0 * r20 + y1 * r21 + y2 * r22


@njit
def rotate_by_matrix_call(rr0, c_star, c_tmp, out):
    """:func:`rotate_by_matrix` as a compiled function of its own (the beam kernels call it at
    two sites per point; see :func:`rotate_section_matrix_call`)."""
    rotate_by_matrix(rr0, c_star, c_tmp, out)


@njit
def rotate_section_matrix_call(xr, c_star, rr0, c_tmp, out):
    """:func:`rotate_section_matrix` as a compiled function of its own, for the beam kernels and the
    energy of the output rows, which call it at five sites (inlined at each, their first
    compilation took 5 s longer).  The mass kernel inlines it: a call per body and Newton
    iteration cost 4 % of a heavy-top step."""
    rotate_section_matrix(xr, c_star, rr0, c_tmp, out)


@njit
def mass_matrix_components(muu, eta, rho):
    """Centre-of-mass offset ``η = (M50... )/m`` (3,) and inertia block ``ρ`` (3, 3) of a 6×6 mass matrix."""
    m = muu[0, 0]
    eta[0] = muu[5, 1] / m
    eta[1] = -muu[5, 0] / m
    eta[2] = muu[4, 0] / m
    for i in range(3):
        for j in range(3):
            rho[i, j] = muu[3 + i, 3 + j]


@njit
def gravity_force(m, g, eta_tilde, out):
    """``F_g = [m g ; η̃ m g]`` (6,) [N, N m]."""
    for i in range(3):
        out[i] = m * g[i]
    for i in range(3):
        out[3 + i] = eta_tilde[i, 0] * out[0] + eta_tilde[i, 1] * out[1] + eta_tilde[i, 2] * out[2]


@njit
def inertial_force(m, u_ddot, omega, omega_dot, eta, eta_tilde, rho, omega_tilde, omega_dot_tilde, m1, v1, out):
    """``F_I = [m ü + (m ω̃ω̃ + m ω̇̃) η ; η̃ (m ü) + ρ ω̇ + (ω̃ ρ) ω]`` (6,); scratch ``m1`` (3,3), ``v1`` (3,)."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += omega_tilde[i, k] * omega_tilde[k, j]
            m1[i, j] = m * s + m * omega_dot_tilde[i, j]
    for i in range(3):
        out[i] = m1[i, 0] * eta[0] + m1[i, 1] * eta[1] + m1[i, 2] * eta[2] + m * u_ddot[i]
    for i in range(3):
        v1[i] = m * u_ddot[i]
    for i in range(3):
        out[3 + i] = eta_tilde[i, 0] * v1[0] + eta_tilde[i, 1] * v1[1] + eta_tilde[i, 2] * v1[2]
        out[3 + i] += rho[i, 0] * omega_dot[0] + rho[i, 1] * omega_dot[1] + rho[i, 2] * omega_dot[2]
    for i in range(3):
        for j in range(3):
            m1[i, j] = omega_tilde[i, 0] * rho[0, j] + omega_tilde[i, 1] * rho[1, j] + omega_tilde[i, 2] * rho[2, j]
    for i in range(3):
        out[3 + i] += m1[i, 0] * omega[0] + m1[i, 1] * omega[1] + m1[i, 2] * omega[2]


@njit
def gyroscopic_matrix(m, omega, eta, rho, omega_tilde, m1, v1, v2, out):
    """Gyroscopic matrix ``G`` (6, 6): only the right column blocks are non-zero.

    ``G12 = ((ω̃ mη)~)ᵀ + ω̃ (m η̃)ᵀ``, ``G22 = ω̃ ρ − (ρ ω)~``.
    """
    for i in range(6):
        for j in range(6):
            out[i, j] = 0.0
    for i in range(3):
        v1[i] = m * eta[i]
    for i in range(3):
        v2[i] = omega_tilde[i, 0] * v1[0] + omega_tilde[i, 1] * v1[1] + omega_tilde[i, 2] * v1[2]
    tilde(v2, m1)
    for i in range(3):
        for j in range(3):
            out[i, 3 + j] = m1[j, i]
    tilde(v1, m1)
    for i in range(3):
        for j in range(3):
            out[i, 3 + j] += omega_tilde[i, 0] * m1[j, 0] + omega_tilde[i, 1] * m1[j, 1] + omega_tilde[i, 2] * m1[j, 2]
    for i in range(3):
        v1[i] = rho[i, 0] * omega[0] + rho[i, 1] * omega[1] + rho[i, 2] * omega[2]
    tilde(v1, m1)
    for i in range(3):
        for j in range(3):
            s = omega_tilde[i, 0] * rho[0, j] + omega_tilde[i, 1] * rho[1, j] + omega_tilde[i, 2] * rho[2, j]
            out[3 + i, 3 + j] = s - m1[i, j]


@njit
def inertia_stiffness_matrix(m, u_ddot, omega, omega_dot, eta, rho, omega_tilde, omega_dot_tilde, m1, m2, v1, out):
    """Inertial stiffness ``K`` (6, 6): only the right column blocks are non-zero.

    ``K12 = (ω̇̃ + ω̃ω̃)(m η̃)ᵀ``,
    ``K22 = ρ ω̇̃ + ü~ (m η̃) − (ρ ω̇)~ + ω̃ (ρ ω̃ − (ρ ω)~)``.
    """
    for i in range(6):
        for j in range(6):
            out[i, j] = 0.0
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += omega_tilde[i, k] * omega_tilde[k, j]
            m1[i, j] = omega_dot_tilde[i, j] + s
    for i in range(3):
        v1[i] = m * eta[i]
    tilde(v1, m2)  # m η̃
    for i in range(3):
        for j in range(3):
            out[i, 3 + j] = m1[i, 0] * m2[j, 0] + m1[i, 1] * m2[j, 1] + m1[i, 2] * m2[j, 2]
    tilde(u_ddot, m1)
    for i in range(3):
        for j in range(3):
            s = (
                rho[i, 0] * omega_dot_tilde[0, j]
                + rho[i, 1] * omega_dot_tilde[1, j]
                + rho[i, 2] * omega_dot_tilde[2, j]
            )
            out[3 + i, 3 + j] = s + (m1[i, 0] * m2[0, j] + m1[i, 1] * m2[1, j] + m1[i, 2] * m2[2, j])
    for i in range(3):
        v1[i] = rho[i, 0] * omega_dot[0] + rho[i, 1] * omega_dot[1] + rho[i, 2] * omega_dot[2]
    tilde(v1, m2)
    for i in range(3):
        for j in range(3):
            out[3 + i, 3 + j] -= m2[i, j]
    for i in range(3):
        v1[i] = rho[i, 0] * omega[0] + rho[i, 1] * omega[1] + rho[i, 2] * omega[2]
    tilde(v1, m1)
    for i in range(3):
        for j in range(3):
            s = rho[i, 0] * omega_tilde[0, j] + rho[i, 1] * omega_tilde[1, j] + rho[i, 2] * omega_tilde[2, j]
            m2[i, j] = s - m1[i, j]
    for i in range(3):
        for j in range(3):
            out[3 + i, 3 + j] += (
                omega_tilde[i, 0] * m2[0, j] + omega_tilde[i, 1] * m2[1, j] + omega_tilde[i, 2] * m2[2, j]
            )


@njit(inline=True)
def rigid_inertia(
    muu, w0, w1, w2, u0, u1, u2, d0, d1, d2, gravity, exact, rho, w_rho, y, fi, fg, g12, g22, k12, k22
):  # fmt: skip
    """Inertial force, gravity force and the right column blocks of G and K of a mass matrix.

    Parameters
    ----------
    muu : (6, 6) mass matrix M in the inertial frame [kg, kg m, kg m²].
    w0, w1, w2 : ω [rad/s]; u0, u1, u2 : ü [m/s²]; d0, d1, d2 : ω̇ [rad/s²].
    gravity : (3,) [m/s²].
    exact : add ``−(m g)~ η̃`` to K22 (see :func:`mass_element_terms`).
    rho, w_rho, y : (3, 3) scratch (ρ, ω̃ ρ, ρ ω̃ − (ρ ω)~).
    fi, fg : (6,) out, ``F_I`` and ``F_g`` [N, N m].
    g12, g22, k12, k22 : (3, 3) out, the blocks (rows 0:3 and 3:6, columns 3:6) of G and K.

    Same mathematics as :func:`inertial_force`, :func:`gravity_force`,
    :func:`gyroscopic_matrix` and :func:`inertia_stiffness_matrix`, fused (see
    :func:`mass_element_terms`): every result bit-identical to the building blocks' sums.
    Shared by the rigid bodies and the beams' quadrature points.
    """
    # m, η and ρ (mass_matrix_components)
    m = muu[0, 0]
    e0 = muu[5, 1] / m
    e1 = -muu[5, 0] / m
    e2 = muu[4, 0] / m
    for i in range(3):
        for j in range(3):
            rho[i, j] = muu[3 + i, 3 + j]
    b0, b1, b2 = m * e0, m * e1, m * e2  # m η
    # ω̃ω̃ = ω ωᵀ − |ω|² I (symmetric)
    q00 = -(w1 * w1 + w2 * w2)
    q11 = -(w0 * w0 + w2 * w2)
    q22 = -(w0 * w0 + w1 * w1)
    q01 = w0 * w1
    q02 = w0 * w2
    q12 = w1 * w2
    # ω̃ ρ (column j is ω × ρ[:, j]), ρ ω, ρ ω̇
    for j in range(3):
        w_rho[0, j] = w1 * rho[2, j] - w2 * rho[1, j]
        w_rho[1, j] = w2 * rho[0, j] - w0 * rho[2, j]
        w_rho[2, j] = w0 * rho[1, j] - w1 * rho[0, j]
    pw0 = rho[0, 0] * w0 + rho[0, 1] * w1 + rho[0, 2] * w2
    pw1 = rho[1, 0] * w0 + rho[1, 1] * w1 + rho[1, 2] * w2
    pw2 = rho[2, 0] * w0 + rho[2, 1] * w1 + rho[2, 2] * w2
    pd0 = rho[0, 0] * d0 + rho[0, 1] * d1 + rho[0, 2] * d2
    pd1 = rho[1, 0] * d0 + rho[1, 1] * d1 + rho[1, 2] * d2
    pd2 = rho[2, 0] * d0 + rho[2, 1] * d1 + rho[2, 2] * d2

    # residual F_I − F_g (inertial_force, gravity_force)
    # F_I[0:3] = (m ω̃ω̃ + m ω̇̃) η + m ü
    a01, a02, a12 = m * q01, m * q02, m * q12
    fg0, fg1, fg2 = m * gravity[0], m * gravity[1], m * gravity[2]
    fi[0] = m * q00 * e0 + (a01 - m * d2) * e1 + (a02 + m * d1) * e2 + m * u0
    fi[1] = (a01 + m * d2) * e0 + m * q11 * e1 + (a12 - m * d0) * e2 + m * u1
    fi[2] = (a02 - m * d1) * e0 + (a12 + m * d0) * e1 + m * q22 * e2 + m * u2
    fg[0], fg[1], fg[2] = fg0, fg1, fg2
    # F_I[3:6] = η × (m ü) + ρ ω̇ + (ω̃ ρ) ω ;  F_g[3:6] = η × (m g)
    mu0, mu1, mu2 = m * u0, m * u1, m * u2
    fi[3] = (e1 * mu2 - e2 * mu1) + pd0 + (w_rho[0, 0] * w0 + w_rho[0, 1] * w1 + w_rho[0, 2] * w2)
    fi[4] = (e2 * mu0 - e0 * mu2) + pd1 + (w_rho[1, 0] * w0 + w_rho[1, 1] * w1 + w_rho[1, 2] * w2)
    fi[5] = (e0 * mu1 - e1 * mu0) + pd2 + (w_rho[2, 0] * w0 + w_rho[2, 1] * w1 + w_rho[2, 2] * w2)
    fg[3] = e1 * fg2 - e2 * fg1
    fg[4] = e2 * fg0 - e0 * fg2
    fg[5] = e0 * fg1 - e1 * fg0

    # G12 = ((ω × mη)~)ᵀ + ω̃ (m η̃)ᵀ, with ω̃ (m η̃)ᵀ = (ω·mη) I − (mη) ωᵀ  (gyroscopic_matrix)
    c0 = w1 * b2 - w2 * b1
    c1 = w2 * b0 - w0 * b2
    c2 = w0 * b1 - w1 * b0
    g12[0, 0] = w1 * b1 + w2 * b2
    g12[0, 1] = c2 - w1 * b0
    g12[0, 2] = -c1 - w2 * b0
    g12[1, 0] = -c2 - w0 * b1
    g12[1, 1] = w0 * b0 + w2 * b2
    g12[1, 2] = c0 - w2 * b1
    g12[2, 0] = c1 - w0 * b2
    g12[2, 1] = -c0 - w1 * b2
    g12[2, 2] = w0 * b0 + w1 * b1
    # G22 = ω̃ ρ − (ρ ω)~
    for i in range(3):
        g22[i, i] = w_rho[i, i]
    g22[0, 1] = w_rho[0, 1] + pw2
    g22[0, 2] = w_rho[0, 2] - pw1
    g22[1, 0] = w_rho[1, 0] - pw2
    g22[1, 2] = w_rho[1, 2] + pw0
    g22[2, 0] = w_rho[2, 0] + pw1
    g22[2, 1] = w_rho[2, 1] - pw0

    # K12 = (ω̇̃ + ω̃ω̃)(m η̃)ᵀ: row i is (mη) × row i of D = ω̇̃ + ω̃ω̃  (inertia_stiffness_matrix)
    for i in range(3):
        if i == 0:
            x0, x1, x2 = q00, q01 - d2, q02 + d1
        elif i == 1:
            x0, x1, x2 = q01 + d2, q11, q12 - d0
        else:
            x0, x1, x2 = q02 - d1, q12 + d0, q22
        k12[i, 0] = b1 * x2 - b2 * x1
        k12[i, 1] = b2 * x0 - b0 * x2
        k12[i, 2] = b0 * x1 - b1 * x0
    # K22 = ρ ω̇̃ + ü~ (m η̃) − (ρ ω̇)~ + ω̃ (ρ ω̃ − (ρ ω)~)  [− (m g)~ η̃ if exact]
    # ρ ω̇̃ and ρ ω̃: row i is row i of ρ crossed with ω̇ (ω); ü~ b̃ = b üᵀ − (ü·b) I
    for i in range(3):
        r0_, r1_, r2_ = rho[i, 0], rho[i, 1], rho[i, 2]
        k22[i, 0] = r1_ * d2 - r2_ * d1
        k22[i, 1] = r2_ * d0 - r0_ * d2
        k22[i, 2] = r0_ * d1 - r1_ * d0
        # ρ ω̃ − (ρ ω)~, in the scratch y
        y[i, 0] = r1_ * w2 - r2_ * w1
        y[i, 1] = r2_ * w0 - r0_ * w2
        y[i, 2] = r0_ * w1 - r1_ * w0
    y[0, 1] += pw2
    y[0, 2] -= pw1
    y[1, 0] -= pw2
    y[1, 2] += pw0
    y[2, 0] += pw1
    y[2, 1] -= pw0
    k22[0, 0] += -(u1 * b1 + u2 * b2)
    k22[0, 1] += b0 * u1
    k22[0, 2] += b0 * u2
    k22[1, 0] += b1 * u0
    k22[1, 1] += -(u0 * b0 + u2 * b2)
    k22[1, 2] += b1 * u2
    k22[2, 0] += b2 * u0
    k22[2, 1] += b2 * u1
    k22[2, 2] += -(u0 * b0 + u1 * b1)
    k22[0, 1] += pd2
    k22[0, 2] -= pd1
    k22[1, 0] -= pd2
    k22[1, 2] += pd0
    k22[2, 0] += pd1
    k22[2, 1] -= pd0
    for j in range(3):
        k22[0, j] += w1 * y[2, j] - w2 * y[1, j]
        k22[1, j] += w2 * y[0, j] - w0 * y[2, j]
        k22[2, j] += w0 * y[1, j] - w1 * y[0, j]
    if exact:
        # d(−η̃ m g)/dθ = −(m g)~ η̃ = −(η (m g)ᵀ − (m g·η) I)  (spatial rotation perturbation)
        k22[0, 0] -= -(fg1 * e1 + fg2 * e2)
        k22[0, 1] -= e0 * fg1
        k22[0, 2] -= e0 * fg2
        k22[1, 0] -= e1 * fg0
        k22[1, 1] -= -(fg0 * e0 + fg2 * e2)
        k22[1, 2] -= e1 * fg2
        k22[2, 0] -= e2 * fg0
        k22[2, 1] -= e2 * fg1
        k22[2, 2] -= -(fg0 * e0 + fg1 * e1)


@njit(inline=True)
def mass_element_terms(
    m_star, r0, r, v, vd, t_rot, gravity, beta_prime, gamma_prime, kappa, exact, s33, s3, s4, s66, res, mat
):
    """Residual (6,) and iteration block (6, 6) of one rigid body at its node.

    Parameters
    ----------
    m_star : (6, 6) material mass matrix M* [kg, kg m, kg m²].
    r0, r : (4,) reference orientation and rotation displacement of the node.
    v, vd : (6,) node velocity (u̇, ω) and acceleration (ü, ω̇), inertial frame.
    t_rot : (3, 3) rotation block of the node's tangent operator 𝒯.
    gravity : (3,) [m/s²].
    beta_prime, gamma_prime : generalized-α coefficients β′ [1/s²], γ′ [1/s].
    kappa : weight κ of the inertial stiffness K (1; 0 for the initial accelerations).
    exact : add the derivative of the gravity moment ``−(m g)~ η̃`` (zero when the
        centre of mass is at the node), missing in Kynema.
    s33 : (>= 8, 3, 3), s3 : (>= 6, 3), s4 : (>= 1, 4), s66 : (>= 4, 6, 6) scratch.
    res : (6,) out, ``F_I − F_g`` [N, N m].
    mat : (6, 6) out, ``β′ M + γ′ G + κ K 𝒯``.

    Inlined into the table's kernel (numba ``inline``), with :func:`rotate_section_matrix`:
    called per body and Newton iteration, the two calls cost 8 % of a heavy-top step.

    Same mathematics as :func:`inertial_force`, :func:`gravity_force`,
    :func:`gyroscopic_matrix` and :func:`inertia_stiffness_matrix`, fused into one
    pass: G and K are non-zero only in their right column blocks, so only those are
    formed, and no 6×6 intermediate other than M is built.  Products with a tilde
    matrix are written out without their structurally zero terms (``ã x = a × x``;
    ``ã b̃ = b aᵀ − (a·b) I`` with each diagonal entry minus the sum of the two
    other products), which leaves every non-zero result bit-identical to the
    building blocks' three-term sums.
    """
    xr = s4[0]
    muu = s66[0]
    fi = s66[2, 0]
    fg = s66[2, 1]
    g12 = s33[3]
    g22 = s33[4]
    k12 = s33[5]
    k22 = s33[6]
    quat_compose(r, r0, xr)
    rotate_section_matrix(xr, m_star, s33[0], s66[1], muu)
    rigid_inertia(
        muu, v[3], v[4], v[5], vd[0], vd[1], vd[2], vd[3], vd[4], vd[5], gravity, exact,
        s33[1], s33[2], s33[7], fi, fg, g12, g22, k12, k22,
    )  # fmt: skip
    for c in range(6):
        res[c] = fi[c] - fg[c]

    # mat = β′ M + γ′ G + κ K 𝒯,  𝒯 = blockdiag(I, t_rot); G and K vanish in the left columns
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    for i in range(6):
        for j in range(3):
            mat[i, j] = beta_prime * muu[i, j]
    for i in range(6):
        g = g12 if i < 3 else g22
        k = k12 if i < 3 else k22
        ii = i % 3
        ka, kb, kc = k[ii, 0], k[ii, 1], k[ii, 2]
        mat[i, 3] = beta_prime * muu[i, 3] + gamma_prime * g[ii, 0] + kappa * (ka * t00 + kb * t10 + kc * t20)
        mat[i, 4] = beta_prime * muu[i, 4] + gamma_prime * g[ii, 1] + kappa * (ka * t01 + kb * t11 + kc * t21)
        mat[i, 5] = beta_prime * muu[i, 5] + gamma_prime * g[ii, 2] + kappa * (ka * t02 + kb * t12 + kc * t22)


@njit
def terms(data_at, data_ref, p, c):
    """Residual ``F_I − F_g`` (6,) and matrix ``β′ M + γ′ G + κ K 𝒯`` (6, 6) of every mass of the
    table into its ``res``, ``mat``, each added into the Newton system (``vals`` (nnz,), ``b``
    (n,), conditioner ``c``) as soon as it is computed, on the
    :class:`~kynemapy.engine.fields.Data` at address ``data_at`` (``data_ref`` its type): the
    table ``Data.tables[POSITION]``, node data ``x0`` (N, 7), ``q``, ``v``, ``vd``, ``tangent``
    (N, 3, 3), ``gravity`` (3,), scratch ``s33``, ``s3``, ``s4``, ``s66``; step coefficients
    ``p``.  Returns 0.

    Unlike the other tables' kernels (``terms(t, x0, ..., vals, b)``, numba-inlined into the
    element phase), a compiled function of its own that takes the Data by its address: the
    call passes four scalars, and numba does not copy this loop's IR, with the rigid-body kernel
    inlined into it, into the element phase (numba copies an inlined function's IR block by
    block with its whole scope: 1.3 s of a first compilation, docs/performance.md)."""
    t = load_field(data_at, data_ref, "tables")[POSITION]
    x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, vals, b = node_data(data_at, data_ref)
    beta_prime = p[P_BETA_PRIME]
    gamma_prime = p[P_GAMMA_PRIME]
    kappa = p[P_STIFFNESS]
    exact = p[P_EXACT] != 0.0
    for e in range(t.nodes.shape[0]):
        n = t.nodes[e, 0]
        mass_element_terms(
            t.m_star[e], x0[n, 3:7], q[n, 3:7], v[n], vd[n], tangent[n], gravity,
            beta_prime, gamma_prime, kappa, exact, s33, s3, s4, s66, t.res[e], t.mat[e],
        )  # fmt: skip
        add_element_block(t, e, c, vals, b)
    return 0
