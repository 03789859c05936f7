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

import functools
import math

import numpy as np


@functools.lru_cache(maxsize=8)
def _gauss_legendre(points: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [−1, 1] (``numpy.polynomial.legendre.leggauss``,
    read-only and kept: at 1200 points numpy's eigenvalue solve takes 0.1–1 s, and the rotating
    cantilever reference is called once per speed)."""
    xi, w = np.polynomial.legendre.leggauss(int(points))
    xi.flags.writeable = False
    w.flags.writeable = False
    return xi, w


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


def cantilever_tip_mass_beta_l(mass_ratio: float, n_modes: int = 3) -> np.ndarray:
    """The first ``n_modes`` roots βL of a uniform Euler–Bernoulli cantilever carrying a point
    mass M at its tip (no rotary inertia), shape (n_modes,) [1].

    The frequency equation (clamped root; at the tip zero moment and the shear force balancing
    the mass's inertia, EI w‴ = −M ω² w) is
    ``1 + cos βL cosh βL + μ βL (cos βL sinh βL − sin βL cosh βL) = 0`` with μ = M/(mL),
    solved divided by cosh βL (the same roots, well scaled) by bracketing sign changes on a grid
    of step 0.01 and ``scipy.optimize.brentq`` to round-off; ω_n = (β_nL)² √(EI/(mL⁴)).  μ = 0
    gives :func:`cantilever_beta_l`.

    Parameters
    ----------
    mass_ratio : float
        μ = M/(mL) >= 0 [-].
    n_modes : int, default 3
        The number of roots.

    Returns
    -------
    (n_modes,) ndarray of float
        β_nL, increasing.
    """
    import scipy.optimize

    mu = float(mass_ratio)
    if not mu >= 0.0:
        raise ValueError(f"cantilever_tip_mass_beta_l: the mass ratio must be >= 0, got {mass_ratio!r}")

    def f(x: float) -> float:
        return 1.0 / math.cosh(x) + math.cos(x) + mu * x * (math.cos(x) * math.tanh(x) - math.sin(x))

    roots: list[float] = []
    x0, f0 = 1e-3, f(1e-3)
    while len(roots) < n_modes:
        x1 = x0 + 0.01
        f1 = f(x1)
        if f0 == 0.0:
            roots.append(x0)
        elif f0 * f1 < 0.0:
            roots.append(scipy.optimize.brentq(f, x0, x1, xtol=1e-15, rtol=4 * np.finfo(float).eps))
        x0, f0 = x1, f1
    return np.array(roots[:n_modes])


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
    xi, w = _gauss_legendre(points)
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


def _cantilever_mode_slopes(beta_l: float, length: float, s: np.ndarray) -> np.ndarray:
    """φ′(s) [1/m] of the cantilever mode φ = cosh βs − cos βs − σ(sinh βs − sin βs), written
    without the cancellation of cosh − σ sinh at large βs (σ → 1)."""
    b = beta_l / length
    sigma = (math.cosh(beta_l) + math.cos(beta_l)) / (math.sinh(beta_l) + math.sin(beta_l))
    # 1 − σ = (sin βL − cos βL − e^(−βL)) / (sinh βL + sin βL), exact
    one_minus = (math.sin(beta_l) - math.cos(beta_l) - math.exp(-beta_l)) / (math.sinh(beta_l) + math.sin(beta_l))
    x = b * np.asarray(s, dtype=float)
    # cosh x − σ sinh x = ½(1 + σ) e^(−x) + ½(1 − σ) e^(x); its derivative:
    return b * (-0.5 * (1.0 + sigma) * np.exp(-x) + 0.5 * one_minus * np.exp(x) + np.sin(x) + sigma * np.cos(x))


def rotating_cantilever_frequencies(
    length: float,
    ei: float,
    mass_per_length: float,
    speed: float,
    hub_radius: float = 0.0,
    n_modes: int = 3,
    n_terms: int = 64,
    points: int = 1200,
) -> np.ndarray:
    """Flapwise frequencies [rad/s] of a uniform Euler–Bernoulli cantilever on a hub turning at Ω.

    The beam (length L [m], EI [N m²], m [kg/m]) is clamped at radius R (``hub_radius`` [m])
    and lies along the radius; flap is the bending out of the plane of rotation, governed in the
    rotating frame by ``EI w'''' − (T w')' + m ẅ = 0`` with the centrifugal tension
    ``T(s) = mΩ²[R(L − s) + (L² − s²)/2]``.  Rayleigh–Ritz with the first ``n_terms``
    non-rotating cantilever modes, the tension integrals by Gauss–Legendre with ``points``
    points.  The error falls about as n_terms⁻⁵: at ΩL²√(m/EI) = 12 the first frequency moves by
    2.2e-9 relative from 48 to 64 terms (by 3.5e-6 from 16 to 24), the third by 1.7e-8, so 64
    terms leave about 4e-9 and 1e-8 relative there, less at lower speeds.  For Ω → 0,
    ω₁² ≈ ω₀² + φ₁Ω² with the Southwell coefficient φ₁ = 1.1933 (R = 0).  An independent
    reference for the rotating-frame modes of :func:`kynemapy.analysis.steady_rotation`; the
    in-plane (lead-lag) frequencies of an axially rigid beam are √(ω² − Ω²) of these.

    Parameters
    ----------
    length : float [m]
        L.
    ei : float [N m²]
        The bending stiffness.
    mass_per_length : float [kg/m]
        m.
    speed : float [rad/s]
        Ω.
    hub_radius : float [m], default 0
        R, the radius of the root.
    n_modes : int, default 3
        How many frequencies.
    n_terms : int, default 64
        The Ritz basis size (non-rotating modes).
    points : int, default 1200
        Gauss–Legendre points of the tension integrals.

    Returns
    -------
    (n_modes,) ndarray of float
        ω_1 … ω_n [rad/s], increasing.
    """
    import scipy.linalg

    bl = cantilever_beta_l(n_terms)
    xi, w = _gauss_legendre(points)
    s = 0.5 * length * (xi + 1.0)
    w = 0.5 * length * w
    slopes = np.array([_cantilever_mode_slopes(float(b), length, s) for b in bl])  # (n_terms, points)
    tension = mass_per_length * speed**2 * (hub_radius * (length - s) + 0.5 * (length**2 - s**2))
    # the modes are orthogonal: ∫ m φ_i φ_j = m L δ_ij, ∫ EI φ_i″ φ_j″ = EI β_i⁴ L δ_ij
    k = np.diag(ei * (bl / length) ** 4 * length) + (slopes * (tension * w)) @ slopes.T
    m = mass_per_length * length * np.eye(n_terms)
    w2 = scipy.linalg.eigh(k, m, eigvals_only=True)
    return np.sqrt(w2[:n_modes])
