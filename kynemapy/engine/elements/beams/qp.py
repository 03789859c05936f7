"""Per-quadrature-point physics of Kynema's geometrically exact beam (compiled kernels).

Notation (all in the inertial frame; one quadrature point at arc length s):

* ``x0′`` (3,) the unit reference tangent dx0/ds [1]; ``u′`` (3,) [1] and ``r′`` (4,) [1/m] the
  arc-length derivatives of the displacement and of its rotation quaternion ``r`` (w, x, y, z);
* strain ``e = (ε, κ)`` (6,): ``ε = x0′ + u′ − R(r) x0′`` [1], ``κ = 2 E(r) r′`` [1/m] with
  ``E(r)`` the 3×4 quaternion-derivative matrix;
* ``C = diag(R, R) C* diag(R, R)ᵀ`` (6, 6) the sectional stiffness [N, N m, N m²] rotated from
  the material frame by the *current* orientation ``R = R(r ⊗ r0)`` (r0: reference orientation
  of the point); likewise the mass matrix ``M`` [kg, kg m, kg m²] per unit length;
* ``x̃ = (x0′ + u′)~`` (Kynema's ``x0pupSS``), ``Ñ = (F_C[0:3])~``, ``M̃ = (F_C[3:6])~``.

Elastic terms: ``F_C = C e`` [N, N m] (the term multiplied by dφ/ds in the residual),
``F_D = (0, x̃ᵀ F_C[0:3])`` (multiplied by φ), and the stiffness blocks ``O``, ``P``, ``Q``
(elastic and geometric).  Structural damping (``mu`` (6,), stiffness proportional,
``D* = diag(mu) C*``): ``F_D1 = D ė``, ``F_D2 = (0, x̃ᵀ (D11 ε̇ + D12 κ̇))`` and the matrices
``D_D1, D_D2, G_D1, G_D2, P_D2, K_D1, K_D2``.  Inertial terms reuse the rigid-body kernels of
:mod:`kynemapy.engine.elements.masses` with the section's mass matrix per unit length.

Each kernel mirrors one of Kynema-FMB's ``src/system/beams/*.hpp`` files (operation order
included) and, like them, takes the "tilde" matrices and quaternions as given (the unit tests
feed non-skew matrices and non-unit quaternions).  Nothing allocates: scratch arrays are passed
in (``s3`` (k, 3), ``s33`` (k, 3, 3), ``s4`` (k, 4), ``s6`` (k, 6), ``s66`` (k, 6, 6)).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.elements.beams.interpolate import (
    ROTATION,
    TRANSLATION,
    interp_rotation,
    interp_vector,
    interp_vector_deriv,
)
from kynemapy.engine.elements.masses import rigid_inertia, rotate_by_matrix_call, rotate_section_matrix_call
from kynemapy.math.quaternion import quat_compose, quat_to_matrix, rot
from kynemapy.math.so3 import matmul3, tilde

# ---------------------------------------------------------------------------
# small helpers (3×3 blocks of 6×6 matrices are passed as array views)


@njit
def zero66(out):
    """Set the (6, 6) array ``out`` to zero."""
    for i in range(6):
        for j in range(6):
            out[i, j] = 0.0


@njit
def matTmat3(a, b, out):
    """``out = aᵀ b`` for (3, 3) matrices; each entry ``a[0,i] b[0,j] + a[1,i] b[1,j] + a[2,i] b[2,j]``."""
    for i in range(3):
        a0, a1, a2 = a[0, i], a[1, i], a[2, i]
        for j in range(3):
            out[i, j] = a0 * b[0, j] + a1 * b[1, j] + a2 * b[2, j]


@njit
def matvec6(a, v, out):
    """``out = a v`` for a (6, 6) matrix and a (6,) vector, each entry summed left to right."""
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += a[i, j] * v[j]
        out[i] = s


# ---------------------------------------------------------------------------
# elastic terms (calculate_strain, calculate_temporary_variables, calculate_force_FC/FD,
# calculate_Ouu/Puu/Quu)


@njit
def strain(x0_prime, u_prime, r, r_prime, out):
    """Strain (6,): ``ε = x0′ + u′ − R(r) x0′`` [1], ``κ = 2 E(r) r′`` [1/m].

    ``R(r)`` is Kynema's unnormalised rotation formula; ``E(r)`` rows are
    ``(−x, w, −z, y)``, ``(−y, z, w, −x)``, ``(−z, −y, x, w)``.
    """
    a0, a1, a2 = rot(r, x0_prime)
    a0 = (a0 - u_prime[0]) - x0_prime[0]
    a1 = (a1 - u_prime[1]) - x0_prime[1]
    a2 = (a2 - u_prime[2]) - x0_prime[2]
    out[0] = -a0
    out[1] = -a1
    out[2] = -a2
    w, x, y, z = r[0], r[1], r[2], r[3]
    p0, p1, p2, p3 = r_prime[0], r_prime[1], r_prime[2], r_prime[3]
    out[3] = 2.0 * ((-x) * p0 + w * p1 + (-z) * p2 + y * p3)
    out[4] = 2.0 * ((-y) * p0 + z * p1 + w * p2 + (-x) * p3)
    out[5] = 2.0 * ((-z) * p0 + (-y) * p1 + x * p2 + w * p3)


@njit
def x0pup_tilde(x0_prime, u_prime, v, out):
    """``out = (x0′ + u′)~`` (3, 3); ``v`` (3,) scratch receives ``x0′ + u′``."""
    for k in range(3):
        v[k] = x0_prime[k] + u_prime[k]
    tilde(v, out)


@njit
def elastic_force_fc(cuu, e, out):
    """``F_C = C e`` (6,) [N, N m]."""
    matvec6(cuu, e, out)


@njit
def elastic_force_fd(x0pup_ss, fc, out):
    """``F_D = (0, x̃ᵀ F_C[0:3])`` (6,) [N, N m]."""
    for k in range(3):
        out[k] = 0.0
    for i in range(3):
        out[3 + i] = x0pup_ss[0, i] * fc[0] + x0pup_ss[1, i] * fc[1] + x0pup_ss[2, i] * fc[2]


@njit
def ouu(cuu, x0pup_ss, m_tilde, n_tilde, out):
    """``O`` (6, 6): ``O12 = C11 x̃ − Ñ``, ``O22 = C21 x̃ − M̃``, other blocks zero."""
    zero66(out)
    for i in range(3):
        for j in range(3):
            s12 = cuu[i, 0] * x0pup_ss[0, j] + cuu[i, 1] * x0pup_ss[1, j] + cuu[i, 2] * x0pup_ss[2, j]
            s22 = cuu[3 + i, 0] * x0pup_ss[0, j] + cuu[3 + i, 1] * x0pup_ss[1, j] + cuu[3 + i, 2] * x0pup_ss[2, j]
            out[i, 3 + j] = -n_tilde[i, j] + s12
            out[3 + i, 3 + j] = -m_tilde[i, j] + s22


@njit
def puu(cuu, x0pup_ss, n_tilde, out):
    """``P`` (6, 6): ``P21 = Ñ + x̃ᵀ C11``, ``P22 = x̃ᵀ C12``, other blocks zero."""
    zero66(out)
    for i in range(3):
        a0, a1, a2 = x0pup_ss[0, i], x0pup_ss[1, i], x0pup_ss[2, i]
        for j in range(3):
            out[3 + i, j] = n_tilde[i, j] + (a0 * cuu[0, j] + a1 * cuu[1, j] + a2 * cuu[2, j])
            out[3 + i, 3 + j] = a0 * cuu[0, 3 + j] + a1 * cuu[1, 3 + j] + a2 * cuu[2, 3 + j]


@njit
def quu(cuu, x0pup_ss, n_tilde, m1, out):
    """``Q`` (6, 6): ``Q22 = x̃ᵀ (C11 x̃ − Ñ)``, other blocks zero; ``m1`` (3, 3) scratch."""
    zero66(out)
    for i in range(3):
        for j in range(3):
            s = cuu[i, 0] * x0pup_ss[0, j] + cuu[i, 1] * x0pup_ss[1, j] + cuu[i, 2] * x0pup_ss[2, j]
            m1[i, j] = -n_tilde[i, j] + s
    matTmat3(x0pup_ss, m1, out[3:6, 3:6])


# ---------------------------------------------------------------------------
# structural damping (calculate_strain_dot, calculate_force_FD1/FD2, calculate_D_D1 ... K_D2)


@njit
def strain_dot(kappa, r, omega, u_dot_prime, omega_prime, x0_prime, out):
    """Strain rate (6,): ``ε̇ = u̇′ − ω̃ R(r) x0′`` [1/s], ``κ̇ = ω′ + ω̃ κ`` [1/(m s)]."""
    a = rot(r, x0_prime)
    w0, w1, w2 = omega[0], omega[1], omega[2]
    # ω̃ a and ω̃ κ with ω̃ = [[0, −w2, w1], [w2, 0, −w0], [−w1, w0, 0]], summed left to right
    c0 = 0.0 * a[0] + (-w2) * a[1] + w1 * a[2]
    c1 = w2 * a[0] + 0.0 * a[1] + (-w0) * a[2]
    c2 = (-w1) * a[0] + w0 * a[1] + 0.0 * a[2]
    out[0] = u_dot_prime[0] + -1.0 * c0
    out[1] = u_dot_prime[1] + -1.0 * c1
    out[2] = u_dot_prime[2] + -1.0 * c2
    k0, k1, k2 = kappa[0], kappa[1], kappa[2]
    out[3] = omega_prime[0] + (0.0 * k0 + (-w2) * k1 + w1 * k2)
    out[4] = omega_prime[1] + (w2 * k0 + 0.0 * k1 + (-w0) * k2)
    out[5] = omega_prime[2] + ((-w1) * k0 + w0 * k1 + 0.0 * k2)


@njit
def damping_force_fd1(d, e_dot, out):
    """``F_D1 = D ė`` (6,) [N, N m]."""
    matvec6(d, e_dot, out)


@njit
def damping_force_fd2(d, x0_prime, u_prime, e_dot, out):
    """``F_D2 = (0, x̃ᵀ (D11 ε̇ + D12 κ̇))`` (6,) [N, N m] with ``x̃ = (x0′ + u′)~``."""
    for k in range(3):
        out[k] = 0.0
    s0 = d[0, 0] * e_dot[0] + d[0, 1] * e_dot[1] + d[0, 2] * e_dot[2]
    s1 = d[1, 0] * e_dot[0] + d[1, 1] * e_dot[1] + d[1, 2] * e_dot[2]
    s2 = d[2, 0] * e_dot[0] + d[2, 1] * e_dot[1] + d[2, 2] * e_dot[2]
    s0 += d[0, 3] * e_dot[3] + d[0, 4] * e_dot[4] + d[0, 5] * e_dot[5]
    s1 += d[1, 3] * e_dot[3] + d[1, 4] * e_dot[4] + d[1, 5] * e_dot[5]
    s2 += d[2, 3] * e_dot[3] + d[2, 4] * e_dot[4] + d[2, 5] * e_dot[5]
    s = (s0, s1, s2)
    x0, x1, x2 = x0_prime[0] + u_prime[0], x0_prime[1] + u_prime[1], x0_prime[2] + u_prime[2]
    # x̃ᵀ s, x̃ = [[0, −x2, x1], [x2, 0, −x0], [−x1, x0, 0]]: row i of x̃ᵀ is column i of x̃
    out[3] = 0.0 * s[0] + x2 * s[1] + (-x1) * s[2]
    out[4] = (-x2) * s[0] + 0.0 * s[1] + x0 * s[2]
    out[5] = x1 * s[0] + (-x0) * s[1] + 0.0 * s[2]


@njit
def dd1(omega, d, w_tilde, out):
    """``D_D1`` (6, 6): ``[[0, D12 ω̃], [0, D22 ω̃]]``; ``w_tilde`` (3, 3) scratch."""
    zero66(out)
    tilde(omega, w_tilde)
    matmul3(d[0:3, 3:6], w_tilde, out[0:3, 3:6])
    matmul3(d[3:6, 3:6], w_tilde, out[3:6, 3:6])


@njit
def dd2(x0_prime, u_prime, d, v, x_tilde, out):
    """``D_D2`` (6, 6): ``[[0, 0], [x̃ᵀ D11, x̃ᵀ D12]]``; scratch ``v`` (3,), ``x_tilde`` (3, 3)."""
    zero66(out)
    x0pup_tilde(x0_prime, u_prime, v, x_tilde)
    matTmat3(x_tilde, d[0:3, 0:3], out[3:6, 0:3])
    matTmat3(x_tilde, d[0:3, 3:6], out[3:6, 3:6])


@njit
def _d_rx_minus_d_kappa(d_a, d_b, rx_tilde, kappa_tilde, m1, out):
    """``out = d_a R̃x − d_b κ̃`` (3, 3) for (3, 3) blocks ``d_a``, ``d_b``; ``m1`` scratch."""
    matmul3(d_a, rx_tilde, out)
    matmul3(d_b, kappa_tilde, m1)
    for i in range(3):
        for j in range(3):
            out[i, j] += -1.0 * m1[i, j]


@njit
def gd1(r, x0_prime, kappa, d, v, s33, out):
    """``G_D1`` (6, 6): ``G12 = D11 (R x0′)~ − D12 κ̃``, ``G22 = D21 (R x0′)~ − D22 κ̃``.

    Scratch ``v`` (3,), ``s33`` (>= 3, 3, 3).
    """
    zero66(out)
    v[0], v[1], v[2] = rot(r, x0_prime)
    tilde(v, s33[0])
    tilde(kappa, s33[1])
    _d_rx_minus_d_kappa(d[0:3, 0:3], d[0:3, 3:6], s33[0], s33[1], s33[2], out[0:3, 3:6])
    _d_rx_minus_d_kappa(d[3:6, 0:3], d[3:6, 3:6], s33[0], s33[1], s33[2], out[3:6, 3:6])


@njit
def gd2(r, x0_prime, u_prime, kappa, d, v, s33, out):
    """``G_D2`` (6, 6): ``G22 = x̃ᵀ (D11 (R x0′)~ − D12 κ̃)``, other blocks zero.

    Scratch ``v`` (3,), ``s33`` (>= 5, 3, 3).
    """
    zero66(out)
    v[0], v[1], v[2] = rot(r, x0_prime)
    tilde(v, s33[0])
    tilde(kappa, s33[1])
    _d_rx_minus_d_kappa(d[0:3, 0:3], d[0:3, 3:6], s33[0], s33[1], s33[2], s33[3])
    x0pup_tilde(x0_prime, u_prime, v, s33[4])
    matTmat3(s33[4], s33[3], out[3:6, 3:6])


@njit
def pd2(x0_prime, u_prime, omega, eps_dot, kappa_dot, d, v, s33, out):
    """``P_D2`` (6, 6): ``P21 = −(D11 ε̇)~ − (D12 κ̇)~``, ``P22 = x̃ᵀ (D12 ω̃)``.

    Scratch ``v`` (3,), ``s33`` (>= 4, 3, 3).
    """
    zero66(out)
    for i in range(3):
        v[i] = d[i, 0] * eps_dot[0] + d[i, 1] * eps_dot[1] + d[i, 2] * eps_dot[2]
    tilde(v, s33[0])
    for i in range(3):
        v[i] = d[i, 3] * kappa_dot[0] + d[i, 4] * kappa_dot[1] + d[i, 5] * kappa_dot[2]
    tilde(v, s33[1])
    for i in range(3):
        for j in range(3):
            out[3 + i, j] = -s33[0, i, j] - s33[1, i, j]
    tilde(omega, s33[0])
    matmul3(d[0:3, 3:6], s33[0], s33[1])
    x0pup_tilde(x0_prime, u_prime, v, s33[2])
    matTmat3(s33[2], s33[1], out[3:6, 3:6])


@njit
def _add_rate_commutator(d, rate, v, m1, m2, m3, out):
    """``out += −(d rate)~ + d rate~`` (3, 3), in Kynema's order; scratch ``v`` (3,), ``m1``–``m3`` (3, 3)."""
    for i in range(3):
        v[i] = d[i, 0] * rate[0] + d[i, 1] * rate[1] + d[i, 2] * rate[2]
    tilde(v, m1)
    tilde(rate, m3)
    matmul3(d, m3, m2)
    for i in range(3):
        for j in range(3):
            out[i, j] += -1.0 * m1[i, j]
    for i in range(3):
        for j in range(3):
            out[i, j] += m2[i, j]


@njit
def _kd_block(d_a, d_b, rx_tilde, w_tilde, kappa_tilde, eps_dot, kappa_dot, v, s33, out):
    """``(d_a ω̃)(R x0′)~ − (d_b ω̃) κ̃ − (d_a ε̇)~ + d_a ε̇~ − (d_b κ̇)~ + d_b κ̇~`` into ``out`` (3, 3).

    Scratch ``v`` (3,), ``s33`` (>= 3, 3, 3); Kynema's order of terms.
    """
    m1 = s33[0]
    m2 = s33[1]
    m3 = s33[2]
    matmul3(d_a, w_tilde, m1)
    matmul3(m1, rx_tilde, out)
    matmul3(d_b, w_tilde, m1)
    matmul3(m1, kappa_tilde, m2)
    for i in range(3):
        for j in range(3):
            out[i, j] += -1.0 * m2[i, j]
    _add_rate_commutator(d_a, eps_dot, v, m1, m2, m3, out)  # − (d_a ε̇)~ + d_a ε̇~
    _add_rate_commutator(d_b, kappa_dot, v, m1, m2, m3, out)  # − (d_b κ̇)~ + d_b κ̇~


@njit
def _kd_tildes(r, x0_prime, omega, kappa, v, s33):
    """``s33[3] = (R(r) x0′)~``, ``s33[4] = ω̃``, ``s33[5] = κ̃``."""
    v[0], v[1], v[2] = rot(r, x0_prime)
    tilde(v, s33[3])
    tilde(omega, s33[4])
    tilde(kappa, s33[5])


@njit
def kd1(r, x0_prime, omega, kappa, eps_dot, kappa_dot, d, v, s33, out):
    """``K_D1`` (6, 6): the rows of ``[D11 D12]`` give block 12, those of ``[D21 D22]`` block 22.

    Block ``(D_a ω̃)(R x0′)~ − (D_b ω̃) κ̃ − (D_a ε̇)~ + D_a ε̇~ − (D_b κ̇)~ + D_b κ̇~``.  Scratch
    ``v`` (3,), ``s33`` (>= 6, 3, 3).
    """
    zero66(out)
    _kd_tildes(r, x0_prime, omega, kappa, v, s33)
    _kd_block(d[0:3, 0:3], d[0:3, 3:6], s33[3], s33[4], s33[5], eps_dot, kappa_dot, v, s33, out[0:3, 3:6])
    _kd_block(d[3:6, 0:3], d[3:6, 3:6], s33[3], s33[4], s33[5], eps_dot, kappa_dot, v, s33, out[3:6, 3:6])


@njit
def kd2(r, x0_prime, omega, kappa, eps_dot, kappa_dot, d, v, s33, out):
    """``K_D2`` (6, 6): block 22 is the block 12 of :func:`kd1` (built from D11, D12, with no
    ``x̃ᵀ`` factor: Kynema's kernel, reproduced as is), other blocks zero."""
    zero66(out)
    _kd_tildes(r, x0_prime, omega, kappa, v, s33)
    _kd_block(d[0:3, 0:3], d[0:3, 3:6], s33[3], s33[4], s33[5], eps_dot, kappa_dot, v, s33, out[3:6, 3:6])


# ---------------------------------------------------------------------------
# one quadrature point (calculate_quadrature_point_{inertial,stiffness,damping}_values)


@njit
def qp_inertial_values(
    shape_interp, qp, r0, m_star, node_u, node_v, node_vd, gravity, s3, s33, s4, s66, fi, fg, muu, gi, ki
):
    """Inertial force, gravity force, mass, gyroscopic and inertial-stiffness matrices at a point.

    Parameters
    ----------
    shape_interp : (>= nodes, >= qps) φ; ``qp`` the point.
    r0 : (4,) reference orientation of the point.
    m_star : (6, 6) sectional mass matrix per unit length, material frame [kg/m, kg, kg m].
    node_u, node_v, node_vd : (nodes, 7), (nodes, 6), (nodes, 6) node displacement, velocity,
        acceleration.
    gravity : (3,) [m/s²].
    s3 : (>= 3, 3), s33 : (>= 7, 3, 3), s4 : (>= 2, 4), s66 : (>= 1, 6, 6) scratch.
    fi, fg : (6,) out, inertial force ``F_I`` and gravity force ``F_g`` per unit length.
    muu, gi, ki : (6, 6) out, ``M`` (rotated by the current orientation), gyroscopic ``G_I``,
        inertial stiffness ``K_I``.
    """
    r = s4[0]
    xr = s4[1]
    rr = s33[6]
    interp_rotation(shape_interp, qp, node_u, r)
    quat_compose(r, r0, xr)
    quat_to_matrix(xr, rr)
    qp_inertial_at(shape_interp, qp, rr, m_star, node_v, node_vd, gravity, s3, s33, s66, fi, fg, muu, gi, ki)


@njit
def qp_inertial_at(shape_interp, qp, rr, m_star, node_v, node_vd, gravity, s3, s33, s66, fi, fg, muu, gi, ki):
    """:func:`qp_inertial_values` given the point's current orientation as the rotation matrix
    ``rr`` (3, 3) of ``r ⊗ r0`` (the element kernel forms it once for this and
    :func:`qp_stiffness_at`); scratch ``s33`` (>= 3, 3, 3), ``s3`` (>= 3, 3), ``s66`` (>= 1, 6, 6)."""
    u_ddot = s3[0]
    omega = s3[1]
    omega_dot = s3[2]
    interp_vector(shape_interp, qp, node_vd, TRANSLATION, u_ddot)
    interp_vector(shape_interp, qp, node_v, ROTATION, omega)
    interp_vector(shape_interp, qp, node_vd, ROTATION, omega_dot)
    rotate_by_matrix_call(rr, m_star, s66[0], muu)
    for i in range(6):  # G and K vanish in the left column blocks
        for j in range(3):
            gi[i, j] = 0.0
            ki[i, j] = 0.0
    rigid_inertia(
        muu, omega[0], omega[1], omega[2], u_ddot[0], u_ddot[1], u_ddot[2], omega_dot[0], omega_dot[1],
        omega_dot[2], gravity, False, s33[0], s33[1], s33[2], fi, fg, gi[0:3, 3:6], gi[3:6, 3:6], ki[0:3, 3:6],
        ki[3:6, 3:6],
    )  # fmt: skip


@njit
def qp_stiffness_values(
    jacobian, shape_interp, shape_deriv, qp, r0, x0_prime, c_star, node_u, s3, s33, s4, s6, s66, fc, fd, cuu, o, p, q
):
    """Elastic forces and stiffness blocks at a point.

    Parameters
    ----------
    jacobian : J = |dx0/dξ| [m] at the point.
    shape_interp, shape_deriv : (>= nodes, >= qps) φ and dφ/dξ; ``qp`` the point.
    r0 : (4,) reference orientation; x0_prime : (3,) unit reference tangent.
    c_star : (6, 6) sectional stiffness, material frame [N, N m, N m²].
    node_u : (nodes, 7) node displacement and rotation.
    s3 : (>= 1, 3), s33 : (>= 4, 3, 3), s4 : (>= 3, 4), s6 : (>= 1, 6), s66 : (>= 1, 6, 6) scratch.
    fc, fd : (6,) out, ``F_C`` and ``F_D``.
    cuu, o, p, q : (6, 6) out, rotated stiffness ``C`` and the blocks ``O``, ``P``, ``Q``.
    """
    r = s4[0]
    xr = s4[2]
    rr = s33[3]
    interp_rotation(shape_interp, qp, node_u, r)
    quat_compose(r, r0, xr)
    quat_to_matrix(xr, rr)
    qp_stiffness_at(
        jacobian, shape_interp, shape_deriv, qp, r, rr, x0_prime, c_star, node_u, s3, s4, s6, s66, fc, fd, cuu, o, p, q
    )


@njit
def qp_stiffness_at(
    jacobian, shape_interp, shape_deriv, qp, r, rr, x0_prime, c_star, node_u, s3, s4, s6, s66, fc, fd, cuu, o, p, q
):
    """:func:`qp_stiffness_values` given the point's interpolated rotation ``r`` (4,) and the
    rotation matrix ``rr`` (3, 3) of ``r ⊗ r0`` (formed once per point by the element kernel);
    scratch ``s3`` (>= 1, 3), ``s4`` (>= 2, 4) (its row 0 not used: it may hold ``r``),
    ``s6`` (>= 1, 6), ``s66`` (>= 1, 6, 6)."""
    u_prime = s3[0]
    r_prime = s4[1]
    e = s6[0]
    interp_vector_deriv(shape_deriv, qp, jacobian, node_u, TRANSLATION, u_prime)
    interp_vector_deriv(shape_deriv, qp, jacobian, node_u, ROTATION, r_prime)
    rotate_by_matrix_call(rr, c_star, s66[0], cuu)
    strain(x0_prime, u_prime, r, r_prime, e)
    elastic_force_fc(cuu, e, fc)
    # x̃ = (x0′ + u′)~, Ñ = F_C[0:3]~, M̃ = F_C[3:6]~ as locals; the products below are those of
    # elastic_force_fd, ouu, puu and quu without the tilde matrices' zero terms (each non-zero
    # result bit-identical to theirs)
    v0, v1, v2 = x0_prime[0] + u_prime[0], x0_prime[1] + u_prime[1], x0_prime[2] + u_prime[2]
    n0, n1, n2 = fc[0], fc[1], fc[2]
    fd[0] = 0.0
    fd[1] = 0.0
    fd[2] = 0.0
    fd[3] = v2 * n1 + (-v1) * n2
    fd[4] = (-v2) * n0 + v0 * n2
    fd[5] = v1 * n0 + (-v0) * n1
    zero66(o)
    zero66(p)
    zero66(q)
    for blk in range(2):  # O12 = C11 x̃ − Ñ, O22 = C21 x̃ − M̃
        a0, a1, a2 = (n0, n1, n2) if blk == 0 else (fc[3], fc[4], fc[5])
        for i in range(3):
            ci0, ci1, ci2 = cuu[3 * blk + i, 0], cuu[3 * blk + i, 1], cuu[3 * blk + i, 2]
            if i == 0:
                t0, t1, t2 = 0.0, -a2, a1
            elif i == 1:
                t0, t1, t2 = a2, 0.0, -a0
            else:
                t0, t1, t2 = -a1, a0, 0.0
            o[3 * blk + i, 3] = -t0 + (ci1 * v2 + ci2 * (-v1))
            o[3 * blk + i, 4] = -t1 + (ci0 * (-v2) + ci2 * v0)
            o[3 * blk + i, 5] = -t2 + (ci0 * v1 + ci1 * (-v0))
    for j in range(6):  # P21 = Ñ + x̃ᵀ C11, P22 = x̃ᵀ C12
        c0j, c1j, c2j = cuu[0, j], cuu[1, j], cuu[2, j]
        x0 = v2 * c1j + (-v1) * c2j
        x1 = (-v2) * c0j + v0 * c2j
        x2 = v1 * c0j + (-v0) * c1j
        if j == 0:
            p[3, 0], p[4, 0], p[5, 0] = 0.0 + x0, n2 + x1, -n1 + x2
        elif j == 1:
            p[3, 1], p[4, 1], p[5, 1] = -n2 + x0, 0.0 + x1, n0 + x2
        elif j == 2:
            p[3, 2], p[4, 2], p[5, 2] = n1 + x0, -n0 + x1, 0.0 + x2
        else:
            p[3, j], p[4, j], p[5, j] = x0, x1, x2
    for j in range(3):  # Q22 = x̃ᵀ (C11 x̃ − Ñ) = x̃ᵀ O12
        m0j, m1j, m2j = o[0, 3 + j], o[1, 3 + j], o[2, 3 + j]
        q[3, 3 + j] = v2 * m1j + (-v1) * m2j
        q[4, 3 + j] = (-v2) * m0j + v0 * m2j
        q[5, 3 + j] = v1 * m0j + (-v0) * m1j


@njit
def qp_damping_values(
    mu, jacobian, shape_interp, shape_deriv, qp, r0, x0_prime, c_star, node_u, node_v,
    s3, s33, s4, s6, s66, fd1, fd2, duu, d_d1, d_d2, g_d1, g_d2, p_d2, k_d1, k_d2,
):  # fmt: skip
    """Structural-damping forces and matrices at a point (all zero when ``mu`` is zero).

    Parameters
    ----------
    mu : (6,) damping coefficients [s]: ``D* = diag(mu) C*`` in the material frame.
    jacobian, shape_interp, shape_deriv, qp, r0, x0_prime, c_star, node_u : as in
        :func:`qp_stiffness_values`.
    node_v : (nodes, 6) node velocity (u̇ [m/s], ω [rad/s]).
    s3 : (>= 5, 3), s33 : (>= 6, 3, 3), s4 : (>= 3, 4), s6 : (>= 2, 6), s66 : (>= 3, 6, 6) scratch.
    fd1, fd2 : (6,) out, ``F_D1`` and ``F_D2``.
    duu, d_d1, d_d2, g_d1, g_d2, p_d2, k_d1, k_d2 : (6, 6) out, ``D`` (rotated by the current
        orientation) and the damping matrices.
    """
    if mu[0] == 0.0 and mu[1] == 0.0 and mu[2] == 0.0 and mu[3] == 0.0 and mu[4] == 0.0 and mu[5] == 0.0:
        for k in range(6):
            fd1[k] = 0.0
            fd2[k] = 0.0
        zero66(duu)
        zero66(d_d1)
        zero66(d_d2)
        zero66(g_d1)
        zero66(g_d2)
        zero66(p_d2)
        zero66(k_d1)
        zero66(k_d2)
        return
    d_star = s66[1]
    cuu = s66[2]
    for i in range(6):
        for j in range(6):
            d_star[i, j] = mu[i] * c_star[i, j]
    u_prime = s3[0]
    omega = s3[1]
    u_dot_prime = s3[2]
    omega_prime = s3[3]
    v = s3[4]
    r = s4[0]
    r_prime = s4[1]
    xr = s4[2]
    e = s6[0]
    e_dot = s6[1]
    interp_vector_deriv(shape_deriv, qp, jacobian, node_u, TRANSLATION, u_prime)
    interp_rotation(shape_interp, qp, node_u, r)
    interp_vector_deriv(shape_deriv, qp, jacobian, node_u, ROTATION, r_prime)
    interp_vector(shape_interp, qp, node_v, ROTATION, omega)
    interp_vector_deriv(shape_deriv, qp, jacobian, node_v, TRANSLATION, u_dot_prime)
    interp_vector_deriv(shape_deriv, qp, jacobian, node_v, ROTATION, omega_prime)
    quat_compose(r, r0, xr)
    rotate_section_matrix_call(xr, c_star, s33[0], s66[0], cuu)
    rotate_section_matrix_call(xr, d_star, s33[0], s66[0], duu)
    strain(x0_prime, u_prime, r, r_prime, e)
    kappa = e[3:6]
    strain_dot(kappa, r, omega, u_dot_prime, omega_prime, x0_prime, e_dot)
    eps_dot = e_dot[0:3]
    kappa_dot = e_dot[3:6]
    damping_force_fd1(duu, e_dot, fd1)
    damping_force_fd2(duu, x0_prime, u_prime, e_dot, fd2)
    dd1(omega, duu, s33[0], d_d1)
    dd2(x0_prime, u_prime, duu, v, s33[0], d_d2)
    gd1(r, x0_prime, kappa, duu, v, s33, g_d1)
    gd2(r, x0_prime, u_prime, kappa, duu, v, s33, g_d2)
    pd2(x0_prime, u_prime, omega, eps_dot, kappa_dot, duu, v, s33, p_d2)
    kd1(r, x0_prime, omega, kappa, eps_dot, kappa_dot, duu, v, s33, k_d1)
    kd2(r, x0_prime, omega, kappa, eps_dot, kappa_dot, duu, v, s33, k_d2)
