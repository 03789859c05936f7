"""Beam case: the first three bending frequencies of a uniform cantilever against Euler–Bernoulli.

A modal solve of the engine's own linearization: the Newton matrix at the reference state with
the coefficients chosen to give the mass matrix (β′ = 1, κ = 0) and the stiffness matrix
(β′ = 0, κ = 1), the root node's rows and columns removed (clamped), then the generalized
symmetric eigenproblem K φ = ω² M φ (scipy).
"""

from __future__ import annotations

import time

import numpy as np

from kynemapy.analytic.beams import (
    cantilever_beta_l,
    euler_bernoulli_frequencies,
    shear_frequency_factor,
    timoshenko_frequencies_first_order,
)
from kynemapy.validation.common import CaseResult, Table, check

LENGTH = 1.0
EI = 1.0
MASS = 1.0
#: shear and axial stiffness in units of EI/L²: large, so that the shear correction is small
SLENDERNESS_FULL = (1e5, 1e6, 1e7)
SLENDERNESS_QUICK = (1e6,)
N_ELEMENTS, ORDER = 4, 8
EB_BOUND = 1e-4  # raw relative deviation from Euler–Bernoulli at GA = 1e6 EI/L² (the shear effect)
FIRST_ORDER_BOUND = 1e-8  # relative deviation from EB + first-order shear correction at GA = 1e6 EI/L²
ORDERS_FULL = (4, 6, 8, 10, 12)

DESCRIPTION = """\
A uniform cantilever, L = 1 m, EI₂ = EI₃ = 1 N m², m = 1 kg/m, no rotary inertia (M* =
diag(m, m, m, 0, 0, 0): Euler–Bernoulli has none), EA = GA₂ = GA₃ = γ EI/L² with γ = 1e5, 1e6,
1e7 (shear stiff), GJ = 1 N m²; 4 elements of order 8 (33 nodes).  Reference: ω_n = (β_nL)²
√(EI/(mL⁴)) with β_nL the roots of 1 + cos βL cosh βL = 0 (computed by Newton's method:
1.87510407, 4.69409113, 7.85475744).

Method: a modal solve rather than free vibration.  The engine's Newton matrix at the reference
state is ``c(β′M + γ′G + κK) + …``; linearizing with β′ = 1, κ = 0 (and the conditioning c = 1)
gives M, with β′ = 0, κ = 1 gives K (``kynemapy.engine.api.task(..., LINEARIZE)``, the same
kernels a step uses).  Removing the root node's six rows and columns clamps it, and
``scipy.linalg.eigh(M, K)`` gives 1/ω² (M is singular without rotary inertia; K is positive
definite).  This measures the spatial discretization and the element's linearization exactly,
with no time-integration error (period elongation of generalized-α) and no FFT resolution
limit; free vibration would only add those.

Shear: with finite GA the beam is a Timoshenko beam and its frequencies sit below
Euler–Bernoulli by δω/ω ≈ −½ r_n EI/(κGA), r_n = ∫φ″′²/∫φ″² of the EB mode (Rayleigh quotient
with the shear compliance; ``shear_frequency_factor``: r_n L² = 4.648, 32.42, 77.30).  The
measured deviation follows that prediction to second order in EI/(κGA L²), so the check at
GA = 1e6 EI/L² is made twice: raw against EB (≤ 1e-4: the shear effect, 2e-6 to 4e-5), and
against EB with the first-order shear correction (≤ 1e-8).  Both bending planes give the same
frequencies (isotropic section): each ω_n is a pair of eigenvalues.
"""


def stiffness_and_mass(gamma: float, n_elements: int, order: int) -> tuple[np.ndarray, np.ndarray]:
    """(K, M) of the clamped cantilever (root DOFs removed), from the engine's linearization."""
    import kynemapy as kp
    from kynemapy.engine import entry
    from kynemapy.engine.api import task
    from kynemapy.engine.params import coefficient_vector
    from kynemapy.validation.beam_model import isotropic_section, straight_beam

    ga = gamma * EI / LENGTH**2
    m_star, c_star = isotropic_section(ga, ga, 1.0, EI, EI, m=MASS, j=(0.0, 0.0, 0.0))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    straight_beam(b, LENGTH, m_star, c_star, n_elements=n_elements, order=order, acceleration=True)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1.0))

    def matrix(beta_prime: float, kappa: float) -> np.ndarray:
        # h, α_m, α_f, γ, β, γ′, β′, c, atol, rtol, max_iter, dynamic, exact, K^Φ, κ
        p = coefficient_vector(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, beta_prime, 1.0, 1.0, 1.0, 1, True, False, False, kappa)
        task(sim.data, p, entry.LINEARIZE)
        return sim.workspace.matrix()[6:, 6:].copy()

    return matrix(0.0, 1.0), matrix(1.0, 0.0)


def frequencies(gamma: float, n_elements: int = N_ELEMENTS, order: int = ORDER, n_modes: int = 3) -> np.ndarray:
    """The first ``n_modes`` bending frequencies ω [rad/s] (each the mean of its pair)."""
    import scipy.linalg

    K, M = stiffness_and_mass(gamma, n_elements, order)
    mu = scipy.linalg.eigh(M, K, eigvals_only=True)  # 1/ω², ascending
    w = np.sort(1.0 / np.sqrt(mu[mu > 0.0]))
    return 0.5 * (w[0 : 2 * n_modes : 2] + w[1 : 2 * n_modes : 2])


def run(quick: bool = False) -> CaseResult:
    """Frequencies against EB at several shear stiffnesses; convergence in element order."""
    start = time.perf_counter()
    result = CaseResult(
        name="beam_frequencies",
        title="Beam frequencies: cantilever bending modes against Euler–Bernoulli",
        seed="Euler–Bernoulli cantilever",
        description=DESCRIPTION,
        quick=quick,
    )
    w_eb = euler_bernoulli_frequencies(LENGTH, EI, MASS, 3)
    r = shear_frequency_factor(LENGTH, 3)
    rows = []
    at_1e6 = None
    for gamma in SLENDERNESS_QUICK if quick else SLENDERNESS_FULL:
        w = frequencies(gamma)
        w_t = timoshenko_frequencies_first_order(LENGTH, EI, gamma * EI / LENGTH**2, MASS, 3)
        dev_eb = (w - w_eb) / w_eb
        dev_t = (w - w_t) / w_t
        coeff = -dev_eb / (EI / (gamma * EI))  # measured −(δω/ω) κGA L²/EI
        for n in range(3):
            rows.append(
                [f"{gamma:g}", n + 1, f"{w[n]:.10f}", f"{w_eb[n]:.10f}", dev_eb[n], dev_t[n], coeff[n], 0.5 * r[n]]
            )
        if gamma == 1e6:
            at_1e6 = (dev_eb, dev_t)
    result.tables.append(
        Table(
            f"Bending frequencies, {N_ELEMENTS} elements of order {ORDER}",
            [
                "κGA L²/EI",
                "mode",
                "ω [rad/s]",
                "ω_EB [rad/s]",
                "(ω − ω_EB)/ω_EB",
                "vs EB + shear (1st order)",
                "measured −(δω/ω)κGAL²/EI",
                "predicted ½ r_n L²",
            ],
            rows,
        )
    )
    bl = cantilever_beta_l(3)
    result.tables.append(
        Table(
            "Roots of 1 + cos βL cosh βL = 0",
            ["mode", "β_nL (computed)", "tabulated"],
            [[n + 1, f"{bl[n]:.10f}", t] for n, t in enumerate(("1.87510407", "4.69409113", "7.85475744"))],
        )
    )
    conv_rows = []
    if not quick:
        for p in ORDERS_FULL:
            w = frequencies(1e6, n_elements=1, order=p)
            w_t = timoshenko_frequencies_first_order(LENGTH, EI, 1e6 * EI / LENGTH**2, MASS, 3)
            conv_rows.append([p, *[abs(w[n] - w_t[n]) / w_t[n] for n in range(3)]])
        result.tables.append(
            Table(
                "Convergence in element order (one element, κGA L²/EI = 1e6): relative error vs EB + shear",
                ["p", "mode 1", "mode 2", "mode 3"],
                conv_rows,
            )
        )
    dev_eb, dev_t = at_1e6
    tabulated = np.array([1.87510407, 4.69409113, 7.85475744])
    result.checks += [
        check("βL roots against the tabulated values (8 decimals)", float(np.abs(bl - tabulated).max()), 5e-9),
    ]
    for n in range(3):
        result.checks.append(
            check(f"mode {n + 1}: |ω − ω_EB|/ω_EB (shear effect, κGA = 1e6 EI/L²)", abs(dev_eb[n]), EB_BOUND)
        )
    for n in range(3):
        result.checks.append(
            check(f"mode {n + 1}: |ω − ω_EB(1 − ½ r_n EI/κGA)|/ω (κGA = 1e6 EI/L²)", abs(dev_t[n]), FIRST_ORDER_BOUND)
        )
    if conv_rows:
        errs = np.array([row[1:] for row in conv_rows])
        result.checks.append(
            check("order 12, one element: largest relative frequency error vs EB + shear", float(errs[-1].max()), 1e-7)
        )
        result.figures["convergence"] = (np.array(ORDERS_FULL), errs)
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """Frequency error against element order (full run only)."""
    if "convergence" not in result.figures:
        return []
    import matplotlib.pyplot as plt

    orders, errs = result.figures["convergence"]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for n in range(errs.shape[1]):
        ax.semilogy(orders, errs[:, n], "o-", label=f"mode {n + 1}")
    ax.set(xlabel="element order p (one element)", ylabel="relative frequency error", title="Cantilever frequencies")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    name = "beam_frequencies_convergence.png"
    fig.savefig(f"{directory}/{name}", dpi=90)
    plt.close(fig)
    return [(name, "Relative error of the first three bending frequencies against element order.")]
