"""Discrete Moser–Veselov algorithm / Lie-group variational integrator with torque kicks.

Moser & Veselov (1991); Lewis & Simo (1994); with a potential, Lee, Leok & McClamroch (2005).
With the non-standard inertia ``J_d = ½ tr(J) I − J`` and the relative rotation ``F``:

    Π⁺ = Πₙ + ½h T(tₙ, Rₙ)
    solve  (h Π⁺)^ = F J_d − J_d Fᵀ  for F ∈ SO(3),     Rₙ₊₁ = Rₙ F
    Πₙ₊₁ = Fᵀ Π⁺ + ½h T(tₙ₊₁, Rₙ₊₁)

``F`` is sought as the Cayley transform ``F = cay(f)``.  Since ``f̂ J_d + J_d f̂ = (J f)^`` and
``f̂f̂ J_d − J_d f̂f̂ = (f × J f)^``, the matrix equation is the 3-vector equation

    J f + f × J f = ½h (1 + |f|²) Π⁺

solved by Newton's method (Jacobian ``J + f̂J − (Jf)^ − h Π⁺ fᵀ``) from ``f = ½h J⁻¹Π⁺``.
The free part conserves ``R Π`` exactly (Rₙ₊₁ Fᵀ Π⁺ = Rₙ Π⁺).
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.integrators.rig_schemes import NEWTON_MAX_ITER
from kynemapy.integrators.torques import body_torque
from kynemapy.math.so3 import cayley_so3, matmul3_into_first, matTvec3, solve3


@njit
def solve_dmv_cayley(h, inertia, P, f, jac, vwork):
    """Solve ``J f + f × J f = ½h (1 + |f|²) P`` for ``f`` (3,), Newton from the guess in ``f``.

    ``P`` (3,) [kg m²/s], ``J = diag(inertia)``, ``jac`` (3, 3) and ``vwork`` (≥ 2, 3) scratch.
    Returns the iteration count, or −1 (no convergence or singular Jacobian: step too large).
    """
    r = vwork[0]
    df = vwork[1]
    hh = 0.5 * h
    previous = math.inf
    for it in range(1, NEWTON_MAX_ITER + 1):
        f0, f1, f2 = f[0], f[1], f[2]
        j0, j1, j2 = inertia[0] * f0, inertia[1] * f1, inertia[2] * f2
        q = hh * (1.0 + f0 * f0 + f1 * f1 + f2 * f2)
        r[0] = j0 + (f1 * j2 - f2 * j1) - q * P[0]
        r[1] = j1 + (f2 * j0 - f0 * j2) - q * P[1]
        r[2] = j2 + (f0 * j1 - f1 * j0) - q * P[2]
        # J + f̂ J − (J f)^ − h P fᵀ
        jac[0, 0] = inertia[0]
        jac[0, 1] = -f2 * inertia[1] + j2
        jac[0, 2] = f1 * inertia[2] - j1
        jac[1, 0] = f2 * inertia[0] - j2
        jac[1, 1] = inertia[1]
        jac[1, 2] = -f0 * inertia[2] + j0
        jac[2, 0] = -f1 * inertia[0] + j1
        jac[2, 1] = f0 * inertia[1] - j0
        jac[2, 2] = inertia[2]
        for i in range(3):
            for j in range(3):
                jac[i, j] -= h * P[i] * f[j]
        if not solve3(jac, r, df):
            return -1
        f[0] = f0 - df[0]
        f[1] = f1 - df[1]
        f[2] = f2 - df[2]
        size = max(abs(df[0]), abs(df[1]), abs(df[2]))
        scale = max(abs(f[0]), abs(f[1]), abs(f[2]))
        if not math.isfinite(size):
            return -1
        if size <= 4.0e-16 * scale or (size <= 1.0e-11 * scale and size >= 0.5 * previous):
            return it
        previous = size
    return -1


@njit(inline=True)
def step_dmv(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork):
    """One DMV step with torque kicks; ``T`` holds the body torque at ``(t, R)`` on entry and at the end on exit."""
    hh = 0.5 * h
    for i in range(3):
        Pi[i] += hh * T[i]
    f = vwork[3]
    for i in range(3):
        f[i] = hh * Pi[i] / inertia[i]
    iterations = solve_dmv_cayley(h, inertia, Pi, f, work[1], vwork[0:3])
    if iterations < 0:
        return -1
    F = work[2]
    cayley_so3(f, F)
    matmul3_into_first(R, F, work[3])
    matTvec3(F, Pi, vwork[4])
    body_torque(torque_fn, torque_params, force_params, t + h, R, T, vwork[5])
    for i in range(3):
        Pi[i] = vwork[4][i] + hh * T[i]
        W[i] = Pi[i] / inertia[i]
    return iterations
