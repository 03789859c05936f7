"""Closed-form references for straight, uniform, isotropic cantilever beams (numpy only).

Conventions: the cantilever is clamped at s = 0 and runs along the x axis to s = L; bending
about the y axis (second material axis, bending stiffness EI₂) moves the beam in the x–z plane.

* :func:`tip_moment_rollup`: a tip moment M about y bends the beam into a circular arc of radius
  ρ = EI/|M| (constant curvature, exact for the geometrically exact beam with no axial–bending
  coupling); M = 2π EI/L closes a full circle.
* :func:`timoshenko_tip_deflection`: small tip load P: δ = PL³/(3EI) + PL/(κGA).
* :func:`cantilever_beta_l`, :func:`euler_bernoulli_frequencies`: roots of the Euler–Bernoulli
  cantilever frequency equation 1 + cos βL cosh βL = 0 and ω_n = (β_nL)² √(EI/(m L⁴)).
* :func:`shear_frequency_factor`: the first-order shear-flexibility correction of those
  frequencies, ω ≈ ω_EB (1 − ½ r_n EI/(κGA)) with r_n = ∫ φ‴² ds / ∫ φ″² ds (Rayleigh quotient
  of the Euler–Bernoulli mode shape φ_n with the shear compliance added).
"""

from __future__ import annotations

import math

import numpy as np


def tip_moment_rollup(length: float, ei: float, moment: float) -> tuple[np.ndarray, np.ndarray]:
    """Tip displacement and rotation of a cantilever under a tip moment about the y axis.

    The curvature κ = M/EI [1/m] is constant, so the section at arc length s is rotated by
    θ(s) = κ s about y and its tangent is R_y(θ) e_x = (cos θ, 0, −sin θ); integrating,

        x(s) = ρ sin θ(s),  z(s) = ρ (cos θ(s) − 1),  ρ = EI/M (signed radius [m]).

    A negative M_y bends the tip towards +z; |M| = 2π EI/L brings the tip back to the root
    (u = (−L, 0, 0), R = I).

    Parameters
    ----------
    length : L [m].
    ei : bending stiffness about y, EI₂ [N m²].
    moment : M_y [N m] (the component of the tip moment along y, inertial frame).

    Returns
    -------
    u : (3,) tip displacement [m] (tip position minus (L, 0, 0)).
    R : (3, 3) tip rotation matrix (section frame to world).
    """
    theta = moment * length / ei  # rotation of the tip section about y [rad]
    if theta == 0.0:
        return np.zeros(3), np.eye(3)
    rho = ei / moment  # signed radius [m]
    # tangent t(s) = R_y(θ(s)) e_x = (cos θ, 0, −sin θ), θ(s) = s/ρ; integrate from 0 to L
    x = rho * math.sin(theta)
    z = rho * (math.cos(theta) - 1.0)
    c, s = math.cos(theta), math.sin(theta)
    R = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    return np.array([x - length, 0.0, z]), R


def timoshenko_tip_deflection(length: float, ei: float, kga: float, load: float) -> float:
    """Tip deflection δ = PL³/(3EI) + PL/(κGA) [m] of a cantilever under a tip load P [N].

    Linear Timoshenko beam theory: bending (EI [N m²]) plus shear (κGA [N], the section's shear
    stiffness, C*₃₃ for a load along z).  Exact for the linearised geometrically exact beam;
    the geometric nonlinearity of the full model enters at relative order (δ/L)².
    """
    return load * length**3 / (3.0 * ei) + load * length / kga


def timoshenko_tip_rotation(length: float, ei: float, load: float) -> float:
    """Tip section rotation PL²/(2EI) [rad] (shear deformation does not rotate the section)."""
    return load * length**2 / (2.0 * ei)


def cantilever_beta_l(n_modes: int = 3) -> np.ndarray:
    """The first ``n_modes`` roots β_nL of 1 + cos βL cosh βL = 0, shape (n_modes,) [1].

    Solved by Newton's method on f(x) = cos x + 1/cosh x (the same roots, well scaled) from
    the asymptotic guess (2n − 1)π/2, to round-off: 1.87510407, 4.69409113, 7.85475744, ...
    """
    roots = np.zeros(n_modes)
    for i in range(n_modes):
        x = (2 * i + 1) * math.pi / 2.0 + (0.3 if i == 0 else 0.0)
        for _ in range(100):
            f = math.cos(x) + 1.0 / math.cosh(x)
            df = -math.sin(x) - math.tanh(x) / math.cosh(x)
            dx = f / df
            x -= dx
            if abs(dx) <= 1e-15 * x:
                break
        roots[i] = x
    return roots


def euler_bernoulli_frequencies(length: float, ei: float, mass_per_length: float, n_modes: int = 3) -> np.ndarray:
    """Circular bending frequencies ω_n = (β_nL)² √(EI/(m L⁴)) [rad/s] of a uniform
    Euler–Bernoulli cantilever (length L [m], EI [N m²], m [kg/m]), shape (n_modes,)."""
    bl = cantilever_beta_l(n_modes)
    return bl**2 * math.sqrt(ei / (mass_per_length * length**4))


def mode_shape_derivatives(beta_l: float, length: float, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Second and third derivatives of the Euler–Bernoulli cantilever mode
    φ(s) = cosh βs − cos βs − σ (sinh βs − sin βs), σ = (cosh βL + cos βL)/(sinh βL + sin βL).

    Returns (φ″ [1/m²], φ‴ [1/m³]) at ``s`` (array [m])."""
    b = beta_l / length
    sigma = (math.cosh(beta_l) + math.cos(beta_l)) / (math.sinh(beta_l) + math.sin(beta_l))
    x = b * np.asarray(s, dtype=float)
    d2 = b**2 * (np.cosh(x) + np.cos(x) - sigma * (np.sinh(x) + np.sin(x)))
    d3 = b**3 * (np.sinh(x) - np.sin(x) - sigma * (np.cosh(x) + np.cos(x)))
    return d2, d3


def shear_frequency_factor(length: float, n_modes: int = 3, points: int = 200) -> np.ndarray:
    """r_n = ∫₀ᴸ φ‴² ds / ∫₀ᴸ φ″² ds [1/m²] of the first ``n_modes`` cantilever modes.

    Adding the shear compliance 1/(κGA) to the Rayleigh quotient of mode n (shear force
    V = EI φ‴, moment EI φ″) lowers its frequency to first order by
    δω/ω = −½ r_n EI/(κGA).  Gauss–Legendre quadrature with ``points`` points (exact to round-off
    for these smooth integrands)."""
    xi, w = np.polynomial.legendre.leggauss(points)
    s = 0.5 * length * (xi + 1.0)
    out = np.zeros(n_modes)
    for i, bl in enumerate(cantilever_beta_l(n_modes)):
        d2, d3 = mode_shape_derivatives(float(bl), length, s)
        out[i] = float(np.sum(w * d3**2) / np.sum(w * d2**2))
    return out


def timoshenko_frequencies_first_order(
    length: float, ei: float, kga: float, mass_per_length: float, n_modes: int = 3
) -> np.ndarray:
    """ω_n ≈ ω_n,EB (1 − ½ r_n EI/(κGA)) [rad/s]: Euler–Bernoulli plus the first-order shear
    correction (no rotary inertia); the neglected terms are O((r_n EI/κGA)²)."""
    w = euler_bernoulli_frequencies(length, ei, mass_per_length, n_modes)
    return w * (1.0 - 0.5 * shear_frequency_factor(length, n_modes) * ei / kga)
