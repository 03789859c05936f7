"""The torque-free rigid body in closed form: Jacobi elliptic functions for the body momentum and an
elliptic integral of the third kind for the rotation (Jacobi 1849; Celledoni, Fassò, Säfström &
Zanna, SIAM J. Sci. Comput. 30, 2008).  The package's one Jacobi solution: the integrators' scheme
``"exact"`` is :func:`free_body_flow`, and :func:`free_body_momentum` is its body momentum.

Vectorised numpy, evaluated at every requested time directly from the initial state (no error
accumulates from step to step).  Conventions: ``R`` body to world, ``W`` body angular velocity,
``Π = J W`` body angular momentum, ``J = diag(I)`` with any positive principal moments, in any
order.

Body momentum.  With ``d = 1/I``, ``L² = |Π|²`` and ``2E = Σ dᵢΠᵢ²``, ``Π`` circulates about the
axis ``x`` of largest inertia when ``d_b L² > 2E`` (``b`` the middle axis), else about the axis of
smallest inertia; ``z`` is the remaining extreme axis.  Then

    Π_z = A_z cn(u, m),  Π_b = A_b sn(u, m),  Π_x = s_x A_x dn(u, m),  u = u₀ + ω_u t

with ``A_z² = Π_z² + r Π_b²``, ``A_b² = A_z²/r``, ``A_x² = Π_x² + (1 − r) Π_b²`` at t = 0,
``r = (d_b − d_x)/(d_z − d_x)``, ``m = P (d_z − d_b)/(Q (d_b − d_x))``, ``P = Σ(dᵢ − d_x)Πᵢ²``,
``Q = Σ(d_z − dᵢ)Πᵢ²`` (sums written without cancellation) and
``ω_u = ε s_x sgn(d_z − d_x) √(Q (d_b − d_x))``, ``ε = +1`` when ``(b, x, z)`` is a cyclic order.
At rest, or in a steady rotation about a principal axis (``W ∥ Π``), ``Π`` is constant.

Rotation (the construction of Celledoni et al.).  The spatial momentum ``π = RΠ`` is constant, so
``R(t) = R₀ Γ(n₀)ᵀ rot_e3(ψ(t)) Γ(n(t))`` with ``n = Π/L`` and ``Γ(n)`` the rotation with rows
``((a − (a·n)n)/s, (n × a)/s, n)``, ``a = e_z``, ``s = |n × a|`` (never zero: ``Π_z² ≤ A_z² < L²``).
Differentiating gives ``ψ̇ = L (2E − d_z Π_z²)/(L² − Π_z²) = L d_z − (L Q / C)/(1 − ν sn²u)`` with
``C = L² − A_z²``, ``ν = −A_z²/C``, hence

    ψ(t) = L d_z t − L Q/(C ω_u) [Π(ν; am u(t) | m) − Π(ν; am u₀ | m)]

with Π the incomplete elliptic integral of the third kind, evaluated by Carlson's symmetric forms
(``scipy.special.elliprf``/``elliprj``; ``ν < 0`` so every argument is positive) after reducing
the amplitude to [−π/2, π/2] by the complete integral.  ``u`` is reduced modulo ``4K`` before
``scipy.special.ellipj`` (which loses digits for large arguments); on the separatrix (m = 1)
there is no period and ``u`` is used as it is.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ellipj, ellipk, ellipkinc, elliprf, elliprj

FloatArray = NDArray[np.float64]


class _EllipticMomentum(NamedTuple):
    """The body momentum of a tumbling body and the constants of its elliptic solution that the
    rotation needs (names as in the module docstring)."""

    Pi: FloatArray  #: (n, 3) body angular momentum [kg m²/s]
    z: int  #: the extreme axis of the cn component
    am: FloatArray  #: (n,) Jacobi amplitude am u(t) [rad], not reduced
    phi0: float  #: am u₀ [rad]
    m: float  #: the parameter of the elliptic functions
    nu: float  #: the characteristic ν = −A_z²/C of the integral of the third kind
    L: float  #: |Π| [kg m²/s]
    dz: float  #: 1/I_z [1/(kg m²)]
    Q: float  #: Σ(d_z − dᵢ)Πᵢ² [kg m²/s²]
    C: float  #: L² − A_z² [(kg m²/s)²]
    omega_u: float  #: du/dt [1/s]


def _inputs(inertia: ArrayLike, t: ArrayLike) -> tuple[FloatArray, FloatArray]:
    inertia = np.asarray(inertia, dtype=float)
    if inertia.shape != (3,) or not np.all(inertia > 0.0) or not np.all(np.isfinite(inertia)):
        raise ValueError(f"inertia must be three positive finite principal moments, got {inertia}")
    return inertia, np.atleast_1d(np.asarray(t, dtype=float))


def _steady(Pi0: FloatArray, W0: FloatArray) -> bool:
    """At rest, or a steady rotation about a principal axis (``W ∥ Π``): ``Π`` and ``W`` constant."""
    L2 = float(Pi0 @ Pi0)
    cross = np.cross(Pi0, W0)
    return L2 == 0.0 or np.linalg.norm(cross) <= 1e-14 * np.sqrt(L2) * np.linalg.norm(W0)


def _elliptic_momentum(inertia: FloatArray, Pi0: FloatArray, t: FloatArray) -> _EllipticMomentum:
    """Π(t) by Jacobi elliptic functions (a tumbling body: not :func:`_steady`)."""
    L2 = float(Pi0 @ Pi0)
    d = 1.0 / inertia
    o, b, c = (int(i) for i in np.argsort(inertia, kind="stable"))
    two_E = float(d @ (Pi0 * Pi0))
    x, z = (c, o) if d[b] * L2 > two_E else (o, c)
    dx, db, dz = d[x], d[b], d[z]
    px, pb, pz = Pi0[x], Pi0[b], Pi0[z]
    P = (dz - dx) * pz * pz + (db - dx) * pb * pb
    Q = (dz - db) * pb * pb + (dz - dx) * px * px
    r = (db - dx) / (dz - dx)
    Az2 = pz * pz + r * pb * pb
    Ab2 = (pz * pz) / r + pb * pb
    Ax2 = px * px + (1.0 - r) * pb * pb
    m = min(P * (dz - db) / (Q * (db - dx)), 1.0)
    Az, Ab, Ax = np.sqrt(Az2), np.sqrt(Ab2), np.sqrt(Ax2)
    sx = 1.0 if px >= 0.0 else -1.0
    eps = 1.0 if x == (b + 1) % 3 else -1.0
    omega_u = eps * sx * np.sign(dz - dx) * np.sqrt(Q * (db - dx))

    phi0 = float(np.arctan2(pb / Ab, pz / Az))
    u0 = float(ellipkinc(phi0, m))
    u = u0 + omega_u * t
    K = float(ellipk(m))
    if np.isfinite(K):
        turns = np.rint(u / (4.0 * K))
        sn, cn, dn, am = ellipj(u - 4.0 * K * turns, m)
        am = am + 2.0 * np.pi * turns
    else:  # separatrix (m = 1): no period
        sn, cn, dn, am = ellipj(u, m)
    Pi = np.empty((t.size, 3))
    Pi[:, z] = Az * cn
    Pi[:, b] = Ab * sn
    Pi[:, x] = sx * Ax * dn

    L = np.sqrt(L2)
    C = px * px + (1.0 - r) * pb * pb  # = L² − A_z², written without cancellation
    nu = -Az2 / C
    return _EllipticMomentum(Pi, z, am, phi0, m, nu, L, dz, Q, C, omega_u)


def _rodrigues(w: FloatArray) -> FloatArray:
    """exp(hat(w)) for w of shape (..., 3)."""
    phi = np.linalg.norm(w, axis=-1)
    small = phi < 1e-6
    safe = np.where(small, 1.0, phi)
    a = np.where(small, 1.0 - phi**2 / 6.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - phi**2 / 24.0, 2.0 * (np.sin(0.5 * safe) / safe) ** 2)
    K = np.zeros((*w.shape[:-1], 3, 3))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    K[..., 1, 0], K[..., 2, 0], K[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return np.eye(3) + a[..., None, None] * K + b[..., None, None] * (K @ K)


def _legendre_pi(nu: float, phi: FloatArray, m: float) -> FloatArray:
    """Incomplete elliptic integral of the third kind ``∫₀^φ dθ / ((1 − ν sin²θ) √(1 − m sin²θ))``, ν ≤ 0."""
    j = np.rint(phi / np.pi)
    phi_r = phi - j * np.pi  # in [−π/2, π/2]
    s = np.sin(phi_r)
    c2 = np.cos(phi_r) ** 2
    d2 = 1.0 - m * s * s
    value = s * elliprf(c2, d2, 1.0) + (nu / 3.0) * s**3 * elliprj(c2, d2, 1.0, 1.0 - nu * s * s)
    if np.any(j != 0):
        complete = elliprf(0.0, 1.0 - m, 1.0) + (nu / 3.0) * elliprj(0.0, 1.0 - m, 1.0, 1.0 - nu)
        value = value + 2.0 * j * complete
    return value


def _gamma(Pi: FloatArray, z: int) -> FloatArray:
    """Γ(n) (..., 3, 3) with rows ((a − (a·n)n)/s, (n × a)/s, n), n = Π/|Π|, a = e_z."""
    L = np.linalg.norm(Pi, axis=-1)
    n = Pi / L[..., None]
    a = np.zeros(3)
    a[z] = 1.0
    others = [i for i in range(3) if i != z]
    s = np.sqrt(Pi[..., others[0]] ** 2 + Pi[..., others[1]] ** 2) / L
    G = np.empty((*Pi.shape[:-1], 3, 3))
    G[..., 0, :] = (a - n[..., z, None] * n) / s[..., None]
    G[..., 1, :] = np.cross(n, a) / s[..., None]
    G[..., 2, :] = n
    return G


def free_body_flow(inertia: ArrayLike, R0: ArrayLike, W0: ArrayLike, t: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Exact motion of a torque-free rigid body at the times ``t``.

    Parameters
    ----------
    inertia : (3,) array_like of float [kg m²]
        Principal moments of inertia (positive, any order).
    R0 : (3, 3) array_like of float
        Initial body-to-world rotation matrix.
    W0 : (3,) array_like of float [rad/s]
        Initial body angular velocity, body frame.
    t : (n,) array_like of float [s]
        Times measured from the initial state.

    Returns
    -------
    R : (n, 3, 3) ndarray of float64
        Body-to-world rotation matrices at the times ``t``.
    W : (n, 3) ndarray of float64
        Body angular velocities [rad/s], body frame.

    Raises
    ------
    ValueError
        ``inertia`` is not three positive finite moments.
    """
    inertia, t = _inputs(inertia, t)
    R0 = np.asarray(R0, dtype=float)
    W0 = np.asarray(W0, dtype=float)
    Pi0 = inertia * W0
    if _steady(Pi0, W0):
        R = R0 @ _rodrigues(t[:, None] * W0)
        return R, np.broadcast_to(W0, (t.size, 3)).copy()

    e = _elliptic_momentum(inertia, Pi0, t)
    third = _legendre_pi(e.nu, e.am, e.m) - _legendre_pi(e.nu, np.array([e.phi0]), e.m)[0]
    psi = e.L * e.dz * t - (e.L * e.Q / (e.C * e.omega_u)) * third
    cps, sps = np.cos(psi), np.sin(psi)
    Rz = np.zeros((t.size, 3, 3))
    Rz[:, 0, 0], Rz[:, 0, 1], Rz[:, 1, 0], Rz[:, 1, 1], Rz[:, 2, 2] = cps, -sps, sps, cps, 1.0
    R = (R0 @ _gamma(Pi0, e.z).T) @ Rz @ _gamma(e.Pi, e.z)
    return R, e.Pi / inertia


def free_body_momentum(inertia: ArrayLike, y0: ArrayLike, t: ArrayLike) -> FloatArray:
    """Body angular momentum y(t) of a torque-free body: Euler's equations ``ẏ = y × J⁻¹y``.

    The momentum part of :func:`free_body_flow` (without the rotation).

    Parameters
    ----------
    inertia : (3,) array_like of float [kg m²]
        Principal moments of inertia (positive, any order).
    y0 : (3,) array_like of float [kg m²/s]
        Initial body angular momentum ``J W₀``, body frame.
    t : (n,) array_like of float [s]
        Times measured from the initial state.

    Returns
    -------
    (n, 3) ndarray of float64
        Body angular momentum y(t) [kg m²/s], body frame.

    Raises
    ------
    ValueError
        ``inertia`` is not three positive finite moments.
    """
    inertia, t = _inputs(inertia, t)
    y0 = np.asarray(y0, dtype=float)
    if _steady(y0, y0 / inertia):
        return np.broadcast_to(y0, (t.size, 3)).copy()
    return _elliptic_momentum(inertia, y0, t).Pi
