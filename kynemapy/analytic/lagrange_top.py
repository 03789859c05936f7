"""Lagrange's top: a heavy symmetric body about a fixed point, in closed form.

Euler angles (Goldstein's z-x-z): θ the inclination of the figure axis from the vertical, φ its
azimuth, ψ the spin; the figure axis is n = (sin θ sin φ, −sin θ cos φ, cos θ).  With I₁ (about
the pivot, transverse), I₃ (axial), M g l and ω₃ = ψ̇ + φ̇ cos θ (constant), the integrals of
motion give, for u = cos θ (Goldstein §5.7; Macmillan 1936):

    u̇² = f(u) = (1 − u²)(α − βu) − (b − a u)²,     φ̇ = (b − a u)/(1 − u²),

with a = I₃ω₃/I₁, b = L_z/I₁ (L_z the vertical angular momentum), α = 2E′/I₁ (E′ the energy less
½I₃ω₃²) and β = 2Mgl/I₁.  f is a cubic β(u − u₁)(u − u₂)(u − u₃) with −1 ≤ u₁ ≤ u₂ ≤ 1 < u₃; u
oscillates between the turning values u₁ and u₂:

    u(t) = u₁ + (u₂ − u₁) sn²(σt + τ₀ | m),   m = (u₂ − u₁)/(u₃ − u₁),   σ = ½√(β(u₃ − u₁)),

(substitute: u̇² = 4σ²(u₂ − u₁)² sn² cn² dn² = β(u − u₁)(u₂ − u)(u₃ − u)), nutation period
2K(m)/σ, and τ₀ from u(0) and u̇(0).  φ(t) is the quadrature of φ̇ along this u(t)
(an elliptic integral of the third kind, evaluated here by adaptive quadrature of the closed-form
integrand); its mean rate over one nutation period gives the mean precession period.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, special


@dataclass(frozen=True)
class LagrangeTop:
    """The closed-form motion of one Lagrange top; build it with :meth:`from_initial_state`.

    Attributes
    ----------
    I1 : float
        Transverse moment of inertia about the pivot [kg m²].
    I3 : float
        Axial moment of inertia [kg m²].
    mgl : float
        M g l: mass times gravity times the pivot-to-centre-of-mass distance [N m].
    omega3 : float
        Axial angular velocity ω₃ = ψ̇ + φ̇ cos θ [rad/s] (constant).
    a : float
        a = I₃ω₃/I₁ [rad/s] (the module's constant).
    b : float
        b = L_z/I₁ [rad/s], L_z the vertical angular momentum.
    alpha : float
        α = 2E′/I₁ [1/s²], E′ the energy less ½I₃ω₃².
    beta : float
        β = 2Mgl/I₁ [1/s²].
    u1 : float
        The smallest root of the cubic f(u), the lower turning value of u = cos θ [-].
    u2 : float
        The middle root, the upper turning value of u (u₁ ≤ u₂ ≤ 1) [-].
    u3 : float
        The largest root (> 1) [-].
    m : float
        The elliptic parameter (u₂ − u₁)/(u₃ − u₁) [-].
    sigma : float
        σ = ½√(β(u₃ − u₁)) [1/s].
    tau0 : float
        The phase τ₀ of sn at t = 0 [-].
    phi0 : float
        The azimuth φ at t = 0 [rad].
    """

    I1: float
    I3: float
    mgl: float
    omega3: float
    a: float
    b: float
    alpha: float
    beta: float
    u1: float
    u2: float
    u3: float
    m: float
    sigma: float
    tau0: float
    phi0: float

    @classmethod
    def from_initial_state(cls, I1: float, I3: float, mgl: float, R0: ArrayLike, omega0: ArrayLike) -> LagrangeTop:
        """The top in a given initial state; gravity along −z, centre of mass on +e₃.

        Parameters
        ----------
        I1 : float
            Transverse moment of inertia about the pivot [kg m²].
        I3 : float
            Axial moment of inertia [kg m²].
        mgl : float
            Mass times gravity times the pivot-to-centre-of-mass distance [N m].
        R0 : (3, 3) array_like of float
            Body-to-world rotation matrix at t = 0 (body e₃ = figure axis, not vertical).
        omega0 : (3,) array_like of float
            World angular velocity [rad/s] at t = 0.

        Returns
        -------
        LagrangeTop
            The top's closed-form motion.

        Raises
        ------
        ValueError
            The figure axis is vertical (θ = 0, a singular point of the Euler angles).
        """
        R0 = np.asarray(R0, dtype=float)
        w = np.asarray(omega0, dtype=float)
        n = R0[:, 2]
        u0 = float(n[2])
        sin2 = n[0] ** 2 + n[1] ** 2
        if sin2 < 1e-24:
            raise ValueError("the figure axis is vertical: θ = 0 is a singular point of the Euler angles")
        omega3 = float(w @ n)
        w_perp = w - omega3 * n
        n_dot = np.cross(w, n)
        u_dot0 = float(n_dot[2])
        a = I3 * omega3 / I1
        L = I1 * w_perp + I3 * omega3 * n  # world angular momentum about the pivot
        b = float(L[2]) / I1
        alpha = float(w_perp @ w_perp) + 2.0 * mgl * u0 / I1  # 2E′/I₁ (E′ = ½I₁|ω⊥|² + M g l u)
        beta = 2.0 * mgl / I1
        # f(u) = βu³ − (α + a²)u² + (2ab − β)u + (α − b²)
        coefficients = np.array([beta, -(alpha + a * a), 2 * a * b - beta, alpha - b * b])
        roots = np.sort(np.roots(coefficients).real)
        roots = np.array([_polish(coefficients, r) for r in roots])
        u1, u2, u3 = (float(r) for r in np.sort(roots))
        m = (u2 - u1) / (u3 - u1)
        sigma = 0.5 * math.sqrt(beta * (u3 - u1))
        K = float(special.ellipk(m))
        tau0 = 0.0
        if u2 > u1:
            # phase: τ₀ = F(A | m) with sn(τ₀) = sin A.  u0 alone gives sin²A = (u0 − u1)/(u2 − u1),
            # which fixes A only to the square root of the roots' rounding near a turning point
            # (1e-14 → 1e-7); with u̇0 = 2σ(u2 − u1) sn cn dn also sin 2A = 2 sn cn is known, and
            # atan2(sin 2A, cos 2A = 1 − 2 sin²A) is well conditioned for every A in [0, π)
            s2 = min(max((u0 - u1) / (u2 - u1), 0.0), 1.0)
            sin_2a = u_dot0 / (sigma * (u2 - u1) * math.sqrt(1.0 - m * s2))
            amplitude = (0.5 * math.atan2(sin_2a, 1.0 - 2.0 * s2)) % math.pi
            if amplitude <= 0.5 * math.pi:
                tau0 = float(special.ellipkinc(amplitude, m))
            else:  # u decreasing: the second quarter of the nutation period
                tau0 = 2.0 * K - float(special.ellipkinc(math.pi - amplitude, m))
        phi0 = math.atan2(n[0], -n[1])
        return cls(I1, I3, mgl, omega3, a, b, alpha, beta, u1, u2, u3, m, sigma, tau0, phi0)

    # ------------------------------------------------------------------ closed forms
    def u(self, t: ArrayLike) -> np.ndarray:
        """The cosine of the nutation angle, u = cos θ(t).

        Parameters
        ----------
        t : float or (n,) array_like of float
            Times [s].

        Returns
        -------
        float or (n,) ndarray of float
            cos θ at the times ``t`` [-].
        """
        sn, _, _, _ = special.ellipj(self.sigma * np.asarray(t, dtype=float) + self.tau0, self.m)
        return self.u1 + (self.u2 - self.u1) * sn * sn

    def theta(self, t: ArrayLike) -> np.ndarray:
        """Nutation angle θ(t) (first Euler angle: inclination of the figure axis).

        Parameters
        ----------
        t : float or (n,) array_like of float
            Times [s].

        Returns
        -------
        float or (n,) ndarray of float
            θ at the times ``t`` [rad].
        """
        return np.arccos(np.clip(self.u(t), -1.0, 1.0))

    def phi_dot(self, t: ArrayLike) -> np.ndarray:
        """Precession rate φ̇(t).

        Parameters
        ----------
        t : float or (n,) array_like of float
            Times [s].

        Returns
        -------
        float or (n,) ndarray of float
            φ̇ at the times ``t`` [rad/s].
        """
        u = self.u(t)
        return (self.b - self.a * u) / (1.0 - u * u)

    def phi(self, t: ArrayLike) -> np.ndarray:
        """Azimuth φ(t) (continuous, not wrapped): φ₀ + ∫₀ᵗ φ̇ (adaptive quadrature at 1e-13).

        Parameters
        ----------
        t : float or (n,) array_like of float
            Times [s], >= 0.

        Returns
        -------
        (n,) ndarray of float
            φ at the times ``t`` [rad].
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        t_end = float(t.max()) if t.size else 0.0
        if t_end <= 0.0:
            return np.full_like(t, self.phi0)
        sol = integrate.solve_ivp(
            lambda s, _y: [float(self.phi_dot(s))],
            (0.0, t_end),
            [self.phi0],
            method="DOP853",
            rtol=1e-13,
            atol=1e-13,
            dense_output=True,
        )
        return sol.sol(t)[0]

    def figure_axis(self, t: ArrayLike) -> np.ndarray:
        """Figure axis n(t) = (sin θ sin φ, −sin θ cos φ, cos θ), world frame.

        Parameters
        ----------
        t : (n,) array_like of float
            Times [s], >= 0.

        Returns
        -------
        (n, 3) ndarray of float
            Unit figure axis at the times ``t`` [-].
        """
        u = self.u(t)
        s = np.sqrt(np.maximum(1.0 - u * u, 0.0))
        phi = self.phi(t)
        return np.stack([s * np.sin(phi), -s * np.cos(phi), u], 1)

    @property
    def turning_angles(self) -> tuple[float, float]:
        """The nutation limits (θ_min, θ_max) [rad]: arccos u₂ and arccos u₁."""
        return math.acos(self.u2), math.acos(self.u1)

    @property
    def nutation_period(self) -> float:
        """The nutation period 2K(m)/σ [s]: the period of θ(t)."""
        return 2.0 * float(special.ellipk(self.m)) / self.sigma

    @property
    def mean_precession_rate(self) -> float:
        """Mean of φ̇ over one nutation period [rad/s] (adaptive quadrature)."""
        T = self.nutation_period
        value, _ = integrate.quad(lambda s: float(self.phi_dot(s)), 0.0, T, epsabs=1e-14, epsrel=1e-13, limit=200)
        return value / T

    @property
    def precession_period(self) -> float:
        """The precession period 2π / mean precession rate [s]: one revolution of the figure axis about the vertical."""
        return 2.0 * math.pi / self.mean_precession_rate

    @property
    def fast_top_precession_period(self) -> float:
        """The fast-top precession period 2π I₃ω₃/(M g l) [s]: the approximation quoted by ABAQUS."""
        return 2.0 * math.pi * self.I3 * self.omega3 / self.mgl


def _polish(c: np.ndarray, r: float) -> float:
    """A few Newton steps on the cubic ``c`` from the root estimate ``r``."""
    for _ in range(4):
        f = ((c[0] * r + c[1]) * r + c[2]) * r + c[3]
        df = (3 * c[0] * r + 2 * c[1]) * r + c[2]
        if df == 0.0:
            break
        step = f / df
        r -= step
        if abs(step) <= 1e-17 * max(1.0, abs(r)):
            break
    return float(r)
