"""Krysl's explicit momentum-conserving Lie midpoint scheme LIEMID[EA] (Krysl, IJNME 63, 2005).

Written as in the seed notes, in body momentum ``Π = J W``:

    Π⁺ = Πₙ + ½h T(tₙ, Rₙ)
    solve J θ₁ = ½h exp(−½θ̂₁) Π⁺,    R½ = Rₙ exp(θ̂₁),   Π½ = exp(θ̂₁)ᵀ Π⁺
    solve J θ₂ = ½h exp(−½θ̂₂) Π½,    Rₙ₊₁ = R½ exp(θ̂₂)
    Πₙ₊₁ = exp(θ̂₂)ᵀ Π½ + ½h T(tₙ₊₁, Rₙ₊₁)

Each half step is the Lie midpoint rule of the free rotation (the body velocity at the middle of
the half step is ``J⁻¹ exp(−½θ̂)Π⁺``).  With ``θ = ½h V`` the equation reads
``exp(¼h V̂) J V = Π⁺``, the equation RIG_IMP solves with ``c = ¼h``; the same Newton solver
is used.  The free rotation keeps ``R Π`` exactly, so the spatial momentum changes only by the
two torque kicks.  The torque at the end of a step is reused at the start of the next (``T``).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.integrators.rig_schemes import solve_exp_momentum
from kynemapy.integrators.torques import body_torque
from kynemapy.math.so3 import matmul3_into_first, matTvec3


@njit(inline=True)
def _half_free_rotation(h, inertia, R, Pi, work, vwork):
    """Lie midpoint over ½h of the free rotation: ``R ← R exp(θ̂)``, ``Π ← exp(θ̂)ᵀ Π``."""
    V = vwork[3]
    for i in range(3):
        V[i] = Pi[i] / inertia[i]
    iterations = solve_exp_momentum(0.25 * h, inertia, Pi, V, work[1], work[2:], vwork[0:3])
    if iterations < 0:
        return -1
    # exp(θ̂) = exp(½h V̂) = (exp(¼h V̂))², exactly the rotation whose half the solver returned
    E = work[1]
    F = work[4]
    for i in range(3):
        for j in range(3):
            F[i, j] = E[i, 0] * E[0, j] + E[i, 1] * E[1, j] + E[i, 2] * E[2, j]
    matmul3_into_first(R, F, work[5])
    matTvec3(F, Pi, vwork[4])
    for i in range(3):
        Pi[i] = vwork[4][i]
    return iterations


@njit(inline=True)
def step_liemid(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork):
    """One LIEMID[EA] step; ``T`` holds the body torque at ``(t, R)`` on entry and at the end on exit."""
    hh = 0.5 * h
    for i in range(3):
        Pi[i] += hh * T[i]
    it1 = _half_free_rotation(h, inertia, R, Pi, work, vwork)
    if it1 < 0:
        return -1
    it2 = _half_free_rotation(h, inertia, R, Pi, work, vwork)
    if it2 < 0:
        return -1
    body_torque(torque_fn, torque_params, force_params, t + h, R, T, vwork[5])
    for i in range(3):
        Pi[i] += hh * T[i]
        W[i] = Pi[i] / inertia[i]
    return it1 + it2
