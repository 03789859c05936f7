"""Rigid-body ("mass") element: residual ``F_I − F_g`` and iteration block.

Notation (inertial frame): ``M`` the 6×6 mass matrix ``diag(R,R) M* diag(R,R)ᵀ``
[kg, kg m, kg m²], ``m`` the mass [kg], ``η`` the centre-of-mass offset from the
node [m], ``ρ`` the 3×3 inertia about the node [kg m²], ``ω`` [rad/s],
``ω̇`` [rad/s²], ``ü`` [m/s²], gravity ``g`` [m/s²].  The building blocks take the
"tilde" matrices as separate arguments, exactly as Kynema's kernels do (its unit
tests feed non-skew matrices to them).  Scratch arrays are passed in: nothing
here allocates.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.math.quaternion import quat_compose, quat_to_matrix
from kynemapy.math.so3 import tilde


@njit
def rotate_section_matrix(xr, c_star, rr0, c_tmp, out):
    """``out = diag(R,R) C* diag(R,R)ᵀ`` with ``R = R(xr)`` (6, 6); scratch ``rr0`` (3,3), ``c_tmp`` (6,6)."""
    quat_to_matrix(xr, rr0)
    for blk in range(2):
        o = 3 * blk
        for i in range(3):
            for j in range(6):
                c_tmp[o + i, j] = rr0[i, 0] * c_star[o, j] + rr0[i, 1] * c_star[o + 1, j] + rr0[i, 2] * c_star[o + 2, j]
    for blk in range(2):
        o = 3 * blk
        for i in range(6):
            for j in range(3):
                out[i, o + j] = c_tmp[i, o] * rr0[j, 0] + c_tmp[i, o + 1] * rr0[j, 1] + c_tmp[i, o + 2] * rr0[j, 2]


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


@njit
def mass_element_terms(
    m_star, r0, r, v, vd, t_rot, gravity, beta_prime, gamma_prime, exact, s33, s3, s4, s66, res, mat
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
    exact : add the derivative of the gravity moment ``−(m g)~ η̃`` (zero when the
        centre of mass is at the node), missing in Kynema.
    s33 : (>= 8, 3, 3), s3 : (>= 6, 3), s4 : (>= 1, 4), s66 : (>= 4, 6, 6) scratch.
    res : (6,) out, ``F_I − F_g`` [N, N m].
    mat : (6, 6) out, ``β′ M + γ′ G + K 𝒯``.
    """
    xr = s4[0]
    muu = s66[0]
    g_mat = s66[1]
    k_mat = s66[2]
    c_tmp = s66[3]
    eta = s3[0]
    u_ddot = s3[1]
    omega = s3[2]
    omega_dot = s3[3]
    v1 = s3[4]
    v2 = s3[5]
    rho = s33[0]
    omega_tilde = s33[1]
    omega_dot_tilde = s33[2]
    eta_tilde = s33[3]
    m1 = s33[4]
    m2 = s33[5]
    rr0 = s33[6]
    for i in range(3):
        u_ddot[i] = vd[i]
        omega_dot[i] = vd[3 + i]
        omega[i] = v[3 + i]
    quat_compose(r, r0, xr)
    tilde(omega, omega_tilde)
    tilde(omega_dot, omega_dot_tilde)
    rotate_section_matrix(xr, m_star, rr0, c_tmp, muu)
    mass_matrix_components(muu, eta, rho)
    m = muu[0, 0]
    tilde(eta, eta_tilde)
    fg = v2
    # residual = F_I − F_g (F_g built component-wise to keep scratch small)
    inertial_force(m, u_ddot, omega, omega_dot, eta, eta_tilde, rho, omega_tilde, omega_dot_tilde, m1, v1, res)
    for i in range(3):
        fg[i] = m * gravity[i]
    for i in range(3):
        res[i] -= fg[i]
    for i in range(3):
        res[3 + i] -= eta_tilde[i, 0] * fg[0] + eta_tilde[i, 1] * fg[1] + eta_tilde[i, 2] * fg[2]
    gyroscopic_matrix(m, omega, eta, rho, omega_tilde, m1, v1, v2, g_mat)
    inertia_stiffness_matrix(m, u_ddot, omega, omega_dot, eta, rho, omega_tilde, omega_dot_tilde, m1, m2, v1, k_mat)
    if exact:
        # d(−η̃ m g)/dθ = −(m g)~ η̃  (spatial rotation perturbation)
        for i in range(3):
            v1[i] = m * gravity[i]
        tilde(v1, m1)
        for i in range(3):
            for j in range(3):
                k_mat[3 + i, 3 + j] -= (
                    m1[i, 0] * eta_tilde[0, j] + m1[i, 1] * eta_tilde[1, j] + m1[i, 2] * eta_tilde[2, j]
                )
    for i in range(6):
        for j in range(6):
            mat[i, j] = beta_prime * muu[i, j] + gamma_prime * g_mat[i, j]
    # K 𝒯 : 𝒯 = blockdiag(I, t_rot)
    for i in range(6):
        for j in range(3):
            mat[i, j] += k_mat[i, j]
        for j in range(3):
            mat[i, 3 + j] += k_mat[i, 3] * t_rot[0, j] + k_mat[i, 4] * t_rot[1, j] + k_mat[i, 5] * t_rot[2, j]
