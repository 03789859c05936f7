"""Step parameters of the generalized-α scheme (Chung & Hulbert; Arnold & Brüls).

``StepParameters`` is the immutable, validated user object; its
:attr:`~StepParameters.coefficients` is the float64 vector ``p`` the compiled
phases receive (entries ``P_*``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Entries of the coefficient vector ``p`` (float64) that the compiled phases read.
P_H = 0  #: time step h [s]
P_ALPHA_M = 1
P_ALPHA_F = 2
P_GAMMA = 3
P_BETA = 4
P_GAMMA_PRIME = 5  #: γ′ = γ/(hβ) [1/s] (0 in statics)
P_BETA_PRIME = 6  #: β′ = (1−α_m)/(h²β(1−α_f)) [1/s²] (0 in statics)
P_CONDITIONER = 7  #: c = βh² [s²]: node rows and λ scaling of the Newton system
P_ATOL = 8
P_RTOL = 9
P_MAX_ITER = 10
P_DYNAMIC = 11  #: 1: dynamics; 0: statics
P_EXACT = 12  #: 1: exact gradients, K^Φ, true spring Jacobian, gravity-moment stiffness, exact beam stiffness
P_ASSEMBLE_K = 13  #: 1: K^Φ blocks enter the Newton matrix
P_STIFFNESS = 14  #: κ, the weight of the stiffness K in the element matrices (1; 0 for initial accelerations)
P_RHS_BIAS = 15  #: 1: constraint rows get the bias γ of Φ̈ = B v̇ + γ instead of Φ (initial accelerations)
P_STATIC_RETRIES = 16  #: Newton solves a static step may use for load bisection
P_CONVERGENCE = 17  #: convergence criterion: CONVERGENCE_KYNEMA (0), CONVERGENCE_ROUNDOFF (1) or CONVERGENCE_AUTO (2)
P_PREDICTOR = 18  #: predictor: PREDICT_KYNEMA (0: v̇ := 0, λ := 0) or PREDICT_LAST (1: v̇ and λ of the last step)
P_SIZE = 19

#: codes of ``P_CONVERGENCE`` (:attr:`StepParameters.convergence`)
CONVERGENCE_KYNEMA = 0
CONVERGENCE_ROUNDOFF = 1
CONVERGENCE_AUTO = 2
CONVERGENCE_CODES = {"kynema": CONVERGENCE_KYNEMA, "roundoff": CONVERGENCE_ROUNDOFF, "auto": CONVERGENCE_AUTO}
#: codes of ``P_PREDICTOR`` (:attr:`StepParameters.predictor`): Kynema's (v̇ := 0, λ := 0), or the
#: last step's v̇ and λ kept
PREDICT_KYNEMA = 0
PREDICT_LAST = 1
PREDICTOR_CODES = {"kynema": PREDICT_KYNEMA, "last": PREDICT_LAST}


def coefficient_vector(
    h: float,
    alpha_m: float,
    alpha_f: float,
    gamma: float,
    beta: float,
    gamma_prime: float,
    beta_prime: float,
    conditioner: float,
    atol: float,
    rtol: float,
    max_iter: int,
    dynamic: bool,
    exact: bool,
    assemble_k: bool,
    stiffness: float = 1.0,
    rhs_bias: bool = False,
    static_retries: int = 1,
    convergence: int = CONVERGENCE_AUTO,
    predictor: int = PREDICT_KYNEMA,
) -> np.ndarray:
    """The (P_SIZE,) float64 vector ``p`` of the compiled phases (entries ``P_*``)."""
    p = np.zeros(P_SIZE)
    p[[P_H, P_ALPHA_M, P_ALPHA_F, P_GAMMA, P_BETA, P_GAMMA_PRIME, P_BETA_PRIME, P_CONDITIONER]] = (
        h, alpha_m, alpha_f, gamma, beta, gamma_prime, beta_prime, conditioner,
    )  # fmt: skip
    p[P_ATOL], p[P_RTOL], p[P_MAX_ITER] = atol, rtol, max_iter
    p[P_DYNAMIC], p[P_EXACT], p[P_ASSEMBLE_K] = float(dynamic), float(exact), float(assemble_k)
    p[P_STIFFNESS], p[P_RHS_BIAS] = stiffness, float(rhs_bias)
    p[P_STATIC_RETRIES] = static_retries
    p[P_CONVERGENCE] = convergence
    p[P_PREDICTOR] = predictor
    return p


def with_step(p: np.ndarray, h: float) -> np.ndarray:
    """A copy of the coefficient vector ``p`` for the step size ``h`` [s]: ``P_H`` and the
    entries that follow from it, γ′ = γ/(hβ) [1/s], β′ = (1−α_m)/(h²β(1−α_f)) [1/s²] (left as
    they are, 0, in statics) and the conditioner c = βh² [s²].  :attr:`StepParameters.coefficients`
    makes its vector with it too.

    The step-size control changes h at almost every step: this costs a few µs where a new
    ``StepParameters`` and its vector cost about 40 µs.

    Parameters
    ----------
    p : (P_SIZE,) ndarray of float
        A coefficient vector (``StepParameters.coefficients``).
    h : float
        The step size [s] (> 0).

    Returns
    -------
    (P_SIZE,) ndarray of float
        The new vector (``p`` is not changed).
    """
    out = p.copy()
    alpha_m, alpha_f, gamma, beta = p[P_ALPHA_M], p[P_ALPHA_F], p[P_GAMMA], p[P_BETA]
    out[P_H] = h
    if p[P_DYNAMIC] != 0.0:
        out[P_GAMMA_PRIME] = gamma / (h * beta)
        out[P_BETA_PRIME] = (1.0 - alpha_m) / (h * h * beta * (1.0 - alpha_f))
    out[P_CONDITIONER] = beta * h * h
    return out


#: coefficients of the consistent accelerations: M v̇ + Bᵀλ = −r, B v̇ = −γ (β′ = 1, γ′ = 0,
#: κ = 0, no conditioning, exact gradients, no K^Φ); also the exact constraint gradients of a
#: reaction or a constraint check (the task, ``entry.INITIAL_ACCELERATIONS``, is another name)
ACCELERATION_COEFFICIENTS = coefficient_vector(
    1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1, True, True, False, stiffness=0.0, rhs_bias=True
)


def _number(value: object) -> bool:
    """A real number (numpy's included), not a bool (``h=True`` is a mistake, not 1 s)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class StepParameters:
    """Time step and Newton settings.

    Parameters
    ----------
    h : float [s]
        Time step [s], > 0.
    rho_inf : float [-]
        Spectral radius at infinity ρ∞ ∈ [0, 1] (1: no numerical damping).
    max_iter : int
        Maximum number of Newton iterations (linear solves) per step, >= 1.
    atol, rtol : absolute and relative tolerances of the weighted-RMS convergence
        error (Arnold & Hante); a step converges when that error is <= 1.  ``atol`` is in
        the units of the position increments (m, rad).
    convergence : str
        ``"auto"`` (default): Kynema's criterion, and where it has not passed by the
        last iteration allowed (``max_iter``), the round-off criterion below on that iteration:
        Kynema's numbers and iteration counts wherever Kynema's test passes, and a step instead
        of a failure where only round-off keeps Kynema's test from passing (tight tolerances at
        small h, singular positions).  ``"kynema"``: Kynema-FMB's criterion alone, reproduced
        number for number (a step Kynema fails fails here too):
        the position increments against ``atol + rtol|hΔq|``, the multiplier increments Δλ
        against ``atol + rtol|λ|`` (``atol`` read as N, N m), RMS over all unknowns.  Tight
        tolerances can be below round-off: λ carries ≈ m ε|x|/(βh²) (the heavy top with
        atol = 1e-7, rtol = 1e-6 never converges for h <= 5e-5), and near a singular position
        the multipliers in the near-null space of Bᵀ are noise.  ``"roundoff"``: the same
        tolerances with the round-off taken out: a floor of 10 ε L on the position
        increments (L = max(1 m, largest ``|coordinate|``)); the multipliers measured by the
        forces they apply, Bᵀ Δλ per node DOF, against ``atol + rtol Σ|Bᵀλ| + 10 (ε Σ|Bᵀλ|
        + δ S_ii)`` (S_ii the iteration matrix's diagonal, ≈ β′ × mass; δ the position
        round-off ε L, or the size of stalled position increments within tolerance).  It
        converges at any h and through singular positions; see ``docs/algorithm.md``.
    dynamic : bool
        False solves statics (β′ = γ′ = 0) with Kynema's load bisection: a step
        that does not converge at the full external load retries from the last converged
        partial load, halving the load step (gravity is not scaled, as in Kynema).
    geometric_stiffness : bool
        True adds the exact constraint geometric stiffness K^Φ,
        the true spring Jacobian, the gravity-moment stiffness and the beams' exact stiffness
        (an exact Newton tangent: quadratic convergence); False reproduces Kynema-FMB (which
        omits them) number for number.
    predictor : str
        The start of each step's Newton iteration.  ``"kynema"`` (default): Kynema-FMB's
        predictor, v̇ := 0 and λ := 0 (v, a and the position from them), number for number.
        ``"last"``: v̇ and λ of the last step kept (a, v and the position from that v̇): a
        start closer to the solution, so fewer iterations where the Newton tolerance is loose
        against the change of v̇ over a step (the heavy top at ρ∞ = 0.9: 2.4 instead of 3.0 at
        h = 6.6 ms with the default tolerances, 1.7 instead of 2.2 with atol = 1e-3,
        rtol = 0.1).  The converged step differs by the Newton error, which with fewer
        iterations is closer to the tolerance: at tight accuracies (the extrapolated scheme at
        1e-8 and below) the Kynema predictor's extra iterations are worth their cost
        (docs/step-control.md, "The extrapolated scheme").
    static_load_retries : int
        Newton solves a static step may use for its load bisection (>= 1;
        1: no bisection).
    solver : str
        Linear solver of the Newton systems: ``"dense"`` (LU with partial
        pivoting), ``"sparse"`` (sparse LU with a fill-reducing ordering, factors
        reused across iterations and steps; cost linear in the number of bodies for
        chains and independent bodies) or ``"auto"`` (dense up to 20 unknowns, and up to 40
        for a Newton matrix less than half full, as mechanisms of two to four bodies give; up
        to 600 with LU and partial pivoting at every solve for a Newton matrix at least half
        full, as beam elements of a few nodes give; sparse otherwise).
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
    convergence: str = "auto"
    predictor: str = "kynema"

    def __post_init__(self) -> None:
        if not (_number(self.h) and math.isfinite(self.h) and self.h > 0.0):
            raise ValueError(f"StepParameters: time step h must be a finite number > 0 s, got {self.h!r}")
        if not (_number(self.rho_inf) and 0.0 <= self.rho_inf <= 1.0):
            raise ValueError(f"StepParameters: rho_inf must lie in [0, 1], got {self.rho_inf!r}")
        if not (isinstance(self.max_iter, int) and not isinstance(self.max_iter, bool) and self.max_iter >= 1):
            raise ValueError(f"StepParameters: max_iter must be an integer >= 1, got {self.max_iter!r}")
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if not (_number(value) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"StepParameters: {name} must be a finite number > 0, got {value!r}")
        if self.solver not in ("auto", "dense", "sparse"):
            raise ValueError(f"StepParameters: solver must be 'auto', 'dense' or 'sparse', got {self.solver!r}")
        if self.convergence not in CONVERGENCE_CODES:
            raise ValueError(
                f"StepParameters: convergence must be 'auto', 'kynema' or 'roundoff', got {self.convergence!r}"
            )
        if self.predictor not in PREDICTOR_CODES:
            raise ValueError(f"StepParameters: predictor must be 'kynema' or 'last', got {self.predictor!r}")
        if not (
            isinstance(self.static_load_retries, int)
            and not isinstance(self.static_load_retries, bool)
            and self.static_load_retries >= 1
        ):
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
    def coefficients(self) -> np.ndarray:
        """The compiled phases' vector ``p`` (entries ``P_*``): γ′ = γ/(hβ) [1/s],
        β′ = (1−α_m)/(h²β(1−α_f)) [1/s²], c = βh² [s²] (γ′ = β′ = 0 in statics)."""
        h = float(self.h)
        exact = bool(self.geometric_stiffness)
        p = coefficient_vector(
            h, self.alpha_m, self.alpha_f, self.gamma, self.beta, 0.0, 0.0, 0.0,
            float(self.atol), float(self.rtol), int(self.max_iter), bool(self.dynamic), exact, exact,
            static_retries=int(self.static_load_retries), convergence=CONVERGENCE_CODES[self.convergence],
            predictor=PREDICTOR_CODES[self.predictor],
        )  # fmt: skip
        return with_step(p, h)  # γ′, β′ and c from h: one place for their formulas
