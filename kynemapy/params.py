"""Step parameters of the generalized-α scheme (Chung & Hulbert; Arnold & Brüls).

``StepParameters`` is the immutable, validated user object; its
:attr:`~StepParameters.coefficients` is the NamedTuple of floats the compiled
kernels receive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple


class StepCoefficients(NamedTuple):
    """Scalars read by the compiled step (Kynema's names)."""

    h: float
    alpha_m: float
    alpha_f: float
    gamma: float
    beta: float
    gamma_prime: float
    beta_prime: float
    conditioner: float
    atol: float
    rtol: float
    max_iter: int
    is_dynamic: bool
    geometric_stiffness: bool


@dataclass(frozen=True)
class StepParameters:
    """Time step and Newton settings.

    Parameters
    ----------
    h : time step [s], > 0.
    rho_inf : spectral radius at infinity ρ∞ ∈ [0, 1] (1: no numerical damping).
    max_iter : maximum number of Newton iterations (linear solves) per step, >= 1.
    atol, rtol : absolute and relative tolerances of the weighted-RMS convergence
        error (Arnold & Hante); a step converges when that error is <= 1.
    dynamic : False solves statics (β′ = γ′ = 0) with Kynema's load bisection.
    geometric_stiffness : True adds the exact constraint geometric stiffness K^Φ,
        the true spring Jacobian and the gravity-moment stiffness (an exact Newton
        tangent); False reproduces Kynema-FMB (which omits them) number for number.
    static_load_retries : load-bisection attempts of a static step.
    solver : linear solver of the Newton systems: ``"dense"`` (LU with partial
        pivoting), ``"sparse"`` (sparse LU with a fill-reducing ordering, factors
        reused across iterations and steps; cost linear in the number of bodies for
        chains and independent bodies) or ``"auto"`` (dense up to 20 unknowns).
    """

    h: float
    rho_inf: float = 0.0
    max_iter: int = 10
    atol: float = 1e-5
    rtol: float = 1e-3
    dynamic: bool = True
    geometric_stiffness: bool = False
    static_load_retries: int = 20
    solver: str = "auto"

    def __post_init__(self) -> None:
        if not (isinstance(self.h, (int, float)) and math.isfinite(self.h) and self.h > 0.0):
            raise ValueError(f"StepParameters: time step h must be a finite number > 0 s, got {self.h!r}")
        if not (isinstance(self.rho_inf, (int, float)) and 0.0 <= self.rho_inf <= 1.0):
            raise ValueError(f"StepParameters: rho_inf must lie in [0, 1], got {self.rho_inf!r}")
        if not (isinstance(self.max_iter, int) and not isinstance(self.max_iter, bool) and self.max_iter >= 1):
            raise ValueError(f"StepParameters: max_iter must be an integer >= 1, got {self.max_iter!r}")
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"StepParameters: {name} must be a finite number > 0, got {value!r}")
        if self.solver not in ("auto", "dense", "sparse"):
            raise ValueError(f"StepParameters: solver must be 'auto', 'dense' or 'sparse', got {self.solver!r}")
        if not (isinstance(self.static_load_retries, int) and self.static_load_retries >= 1):
            raise ValueError(
                f"StepParameters: static_load_retries must be an integer >= 1, got {self.static_load_retries!r}"
            )

    @property
    def alpha_m(self) -> float:
        """α_m = (2ρ∞ − 1)/(ρ∞ + 1)."""
        return (2.0 * self.rho_inf - 1.0) / (self.rho_inf + 1.0)

    @property
    def alpha_f(self) -> float:
        """α_f = ρ∞/(ρ∞ + 1)."""
        return self.rho_inf / (self.rho_inf + 1.0)

    @property
    def gamma(self) -> float:
        """γ = ½ + α_f − α_m."""
        return 0.5 + self.alpha_f - self.alpha_m

    @property
    def beta(self) -> float:
        """β = ¼ (γ + ½)²."""
        return 0.25 * (self.gamma + 0.5) * (self.gamma + 0.5)

    @property
    def coefficients(self) -> StepCoefficients:
        """The compiled kernels' view: γ′ = γ/(hβ) [1/s], β′ = (1−α_m)/(h²β(1−α_f)) [1/s²], c = βh² [s²]."""
        h = float(self.h)
        alpha_m, alpha_f, gamma, beta = self.alpha_m, self.alpha_f, self.gamma, self.beta
        if self.dynamic:
            gamma_prime = gamma / (h * beta)
            beta_prime = (1.0 - alpha_m) / (h * h * beta * (1.0 - alpha_f))
        else:
            gamma_prime = 0.0
            beta_prime = 0.0
        return StepCoefficients(
            h=h,
            alpha_m=alpha_m,
            alpha_f=alpha_f,
            gamma=gamma,
            beta=beta,
            gamma_prime=gamma_prime,
            beta_prime=beta_prime,
            conditioner=beta * h * h,
            atol=float(self.atol),
            rtol=float(self.rtol),
            max_iter=int(self.max_iter),
            is_dynamic=bool(self.dynamic),
            geometric_stiffness=bool(self.geometric_stiffness),
        )
