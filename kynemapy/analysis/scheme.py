"""What the time integrator does to a mode: the generalized-α scheme's own numerical damping and
period error for a linear oscillator at ωh, apart from the physics.

The engine's scheme (Arnold & Brüls 2007; Kynema's) advances, for ``v̇ = −ω² q``,

    q_{n+1} = q_n + h v_n + h²(½ − β) a_n + h²β a_{n+1}
    v_{n+1} = v_n + h(1 − γ) a_n + hγ a_{n+1}
    (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) v̇_{n+1} + α_f v̇_n,   v̇_{n+1} = −ω² q_{n+1},

a linear map ``x_{n+1} = A(ωh) x_n`` of x = (q, hv, h²a) whose matrix depends on ωh and the
parameters (α_m, α_f, γ, β from ρ∞, :class:`kynemapy.StepParameters`) alone.  Its eigenvalues
are a complex pair λ = ``|λ|`` e^{±iω̄h} (the principal roots, while the scheme still
oscillates) and a spurious real root.  From them:

* spectral radius ρ = max ``|λ|`` (→ ρ∞ as ωh → ∞; 1 at ωh = 0);
* numerical damping ratio ζ̄ = −ln ``|λ_p|`` / (ω̄h) of the principal pair (Hilber & Hughes's
  algorithmic damping ratio): a mode's free vibration decays as ``|λ_p|``ⁿ per step;
* relative period error T̄/T − 1 = ωh/ω̄h − 1 (the scheme's period elongation).

For ρ∞ = 1 the scheme is the trapezoidal rule: ``|λ|`` = 1 and ω̄h = 2 arctan(ωh/2) exactly.
A structural mode at ω_n stepped at h oscillates in the engine with the mode's physical
damping ratio plus about ζ̄(ω_n h) and a period longer by the period error (a cantilever's first
mode at rest: to 4e-7 of it).  For a structure turning in the world frame the rotating-frame
mode is not a scalar oscillator of the engine's variables (the sections' rotations turn with
it): there the measured period error was smaller, 0.75 of this one at ΩL²√(m/EI) = 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def _parameters(h: Any, rho_inf: float | None) -> tuple[float, float]:
    if hasattr(h, "rho_inf") and hasattr(h, "h"):
        return float(h.h), float(h.rho_inf if rho_inf is None else rho_inf)
    if rho_inf is None:
        raise ValueError("scheme_error: give rho_inf, or StepParameters for h")
    h = float(h)
    rho_inf = float(rho_inf)
    if not (np.isfinite(h) and h > 0.0):
        raise ValueError(f"scheme_error: the step h must be a number > 0 s, got {h!r}")
    if not 0.0 <= rho_inf <= 1.0:
        raise ValueError(f"scheme_error: rho_inf must lie in [0, 1], got {rho_inf!r}")
    return h, rho_inf


def amplification_matrix(omega_h: float, rho_inf: float) -> np.ndarray:
    """The (3, 3) map ``(q, hv, h²a)_{n+1} = A (q, hv, h²a)_n`` of the engine's generalized-α scheme
    for ``v̇ = −ω² q`` (module docstring).

    Parameters
    ----------
    omega_h : float
        ωh [-] (>= 0).
    rho_inf : float
        The spectral radius at infinity ρ∞ in [0, 1].

    Returns
    -------
    (3, 3) ndarray of float
        A.
    """
    am = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
    af = rho_inf / (rho_inf + 1.0)
    g = 0.5 + af - am
    b = 0.25 * (g + 0.5) ** 2
    w2 = float(omega_h) ** 2
    # unknowns (q, hv, h²a) at n + 1: L x_{n+1} = R x_n
    left = np.array([[1.0, 0.0, -b], [0.0, 1.0, -g], [(1.0 - af) * w2, 0.0, 1.0 - am]])
    right = np.array([[1.0, 1.0, 0.5 - b], [0.0, 1.0, 1.0 - g], [-af * w2, 0.0, -am]])
    return np.linalg.solve(left, right)


@dataclass(frozen=True)
class SchemeError:
    """The scheme's effect on linear oscillators (from :func:`scheme_error`).

    Attributes
    ----------
    omega_h : (k,) ndarray of float
        ωh [-] of each frequency.
    spectral_radius : (k,) ndarray of float
        max ``|λ|`` over the three roots [-].
    damping_ratio : (k,) ndarray of float
        The numerical damping ratio ζ̄ = −ln ``|λ_p|``/(ω̄h) [-] (NaN where the scheme no longer
        oscillates: no complex pair, or ω = 0).
    period_error : (k,) ndarray of float
        T̄/T − 1 = ωh/ω̄h − 1 [-] (NaN as above).
    decay_per_period : (k,) ndarray of float
        The amplitude ratio after one true period T = 2π/ω: ``|λ_p|`` to the power 2π/(ωh) [-].
    h : float
        The step [s].
    rho_inf : float
        ρ∞.
    """

    omega_h: np.ndarray
    spectral_radius: np.ndarray
    damping_ratio: np.ndarray
    period_error: np.ndarray
    decay_per_period: np.ndarray
    h: float
    rho_inf: float


def scheme_error(omega: Any, h: Any, rho_inf: float | None = None) -> SchemeError:
    """The generalized-α scheme's numerical damping and period error at natural frequencies ω.

    Parameters
    ----------
    omega : float or (k,) array_like of float [rad/s]
        Natural circular frequencies (``Modes.omega``; the absolute value is used).
    h : float [s] or StepParameters
        The step, or the step parameters (their h and ρ∞).
    rho_inf : float or None, default None
        ρ∞ in [0, 1]; None: from ``h`` when it is StepParameters.

    Returns
    -------
    SchemeError
        Spectral radius, numerical damping ratio, period error and decay per period.

    Raises
    ------
    ValueError
        A step that is not > 0, a ρ∞ outside [0, 1] or missing.
    """
    h, rho = _parameters(h, rho_inf)
    w = np.abs(np.atleast_1d(np.asarray(omega, dtype=float)))
    wh = w * h
    radius, zeta, period, decay = (np.full(wh.shape, np.nan) for _ in range(4))
    for i, x in enumerate(wh):
        lam = np.linalg.eigvals(amplification_matrix(x, rho))
        radius[i] = float(np.abs(lam).max())
        pair = lam[lam.imag > 1e-14 * max(np.abs(lam).max(), 1e-300)]
        if x > 0.0 and pair.size:
            p = pair[0]
            wbar = float(np.angle(p))
            zeta[i] = -np.log(abs(p)) / wbar
            period[i] = x / wbar - 1.0
            decay[i] = abs(p) ** (2.0 * np.pi / x)
    return SchemeError(wh, radius, zeta, period, decay, h, rho)
