"""Solfec's rigid-body schemes RIG_POS, RIG_NEG and RIG_IMP (Koziara & Bićanić, IJNME 81, 2009).

Source: Solfec ``bod.c`` (``BODY_Dynamic_Step_Begin/End``, ``SOLVE``; github:parmes/solfec-1.0) and
the summary in the seed notes (NEW1/2/3 of the paper).  With ``D = exp(½h Ŵₙ)``:

    R½ = Rₙ D,   T = T(t + ½h, R½)                           (body torque at the half step)
    W½ = J⁻¹[Dᵀ J Wₙ + ½h T],   W* = Wₙ + h J⁻¹(T − W½ × J W½),   A = Dᵀ J Wₙ + h T

* RIG_POS (explicit, energy drifts up):  Wₙ₊₁ = W*,  Rₙ₊₁ = R½ exp(½h Ŵₙ₊₁).
* RIG_NEG (explicit, Solfec's default; exact spatial momentum balance, energy drifts down):
  D₁ = exp(½h Ŵ*),  Rₙ₊₁ = R½ D₁,  Wₙ₊₁ = J⁻¹ D₁ᵀ A.
* RIG_IMP (exact momentum balance, no drift): solve exp(½h Ŵ) J W = A for W = Wₙ₊₁ by Newton
  from W*, then Rₙ₊₁ = R½ exp(½h Ŵₙ₊₁).

The spatial momentum balance of RIG_NEG/IMP: Rₙ₊₁ J Wₙ₊₁ = R½ A = Rₙ J Wₙ + h R½ T.

Every step function shares the signature of :mod:`kynemapy.integrators.drive`:
``step(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork) -> int``
(Newton iterations, −1 if the iteration failed), updating ``R`` (3, 3), ``W`` (3,) [rad/s] and
``Pi = J W`` (3,) [kg m²/s] in place; ``work`` (≥ 6, 3, 3) and ``vwork`` (≥ 8, 3) are scratch.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.integrators.torques import body_torque
from kynemapy.math.so3 import exp_so3, matmul3, matmul3_into_first, matTvec3, right_jacobian_so3, solve3

NEWTON_MAX_ITER = 50


@njit
def solve_exp_momentum(c, inertia, A, W, E, work, vwork):
    """Solve ``exp(c Ŵ) J W = A`` for ``W`` (3,) by Newton's method from the guess in ``W``.

    ``J = diag(inertia)``, ``c`` [s], ``A`` (3,) [kg m²/s].  On return ``E = exp(c Ŵ)`` (3, 3) at
    the solution.  Jacobian: ``exp(cŴ)[J − c (JW)^ Jr(cW)]`` (Jr: right Jacobian of exp).  Stops
    when the Newton correction reaches rounding level.  Returns the iteration count, or −1
    after ``NEWTON_MAX_ITER`` iterations or on a singular Jacobian (step too large).
    ``work`` (≥ 2, 3, 3) and ``vwork`` (≥ 3, 3) are scratch.
    """
    jr = work[0]
    jac = work[1]
    r = vwork[0]
    rb = vwork[1]
    dw = vwork[2]
    previous = math.inf
    for it in range(1, NEWTON_MAX_ITER + 1):
        w0, w1, w2 = W[0], W[1], W[2]
        exp_so3(c * w0, c * w1, c * w2, E)
        p0, p1, p2 = inertia[0] * w0, inertia[1] * w1, inertia[2] * w2
        for i in range(3):
            r[i] = E[i, 0] * p0 + E[i, 1] * p1 + E[i, 2] * p2 - A[i]
        matTvec3(E, r, rb)  # Eᵀ r: the equation pulled back, J − c (JW)^ Jr is then the Jacobian
        right_jacobian_so3(c * w0, c * w1, c * w2, jr)
        for j in range(3):
            # (JW)^ Jr, column j: p × Jr[:, j]
            a0, a1, a2 = jr[0, j], jr[1, j], jr[2, j]
            jac[0, j] = -c * (p1 * a2 - p2 * a1)
            jac[1, j] = -c * (p2 * a0 - p0 * a2)
            jac[2, j] = -c * (p0 * a1 - p1 * a0)
            jac[j, j] += inertia[j]
        if not solve3(jac, rb, dw):
            return -1
        W[0] = w0 - dw[0]
        W[1] = w1 - dw[1]
        W[2] = w2 - dw[2]
        size = max(abs(dw[0]), abs(dw[1]), abs(dw[2]))
        scale = max(abs(W[0]), abs(W[1]), abs(W[2]))
        if not math.isfinite(size):
            return -1
        # converged: correction at rounding level, or stalled there (rounding floor reached)
        if size <= 4.0e-16 * scale or (size <= 1.0e-11 * scale and size >= 0.5 * previous):
            exp_so3(c * W[0], c * W[1], c * W[2], E)
            return it
        previous = size
    return -1


@njit(inline=True)
def _rig_first_half(torque_fn, torque_params, force_params, inertia, t, h, R, W, work, vwork):
    """Common part: work[2] = R½, vwork[3] = W*, vwork[4] = A, vwork[5] = T(t + ½h, R½)."""
    D = work[1]
    Rh = work[2]
    T = vwork[5]
    hh = 0.5 * h
    exp_so3(hh * W[0], hh * W[1], hh * W[2], D)
    matmul3(R, D, Rh)
    body_torque(torque_fn, torque_params, force_params, t + hh, Rh, T, vwork[6])
    jw = vwork[0]
    for i in range(3):
        jw[i] = inertia[i] * W[i]
    djw = vwork[1]
    matTvec3(D, jw, djw)  # Dᵀ J Wₙ
    wh = vwork[2]
    for i in range(3):
        wh[i] = (djw[i] + hh * T[i]) / inertia[i]
    j0, j1, j2 = inertia[0] * wh[0], inertia[1] * wh[1], inertia[2] * wh[2]
    g0 = wh[1] * j2 - wh[2] * j1  # W½ × J W½
    g1 = wh[2] * j0 - wh[0] * j2
    g2 = wh[0] * j1 - wh[1] * j0
    ws = vwork[3]
    ws[0] = W[0] + h * (T[0] - g0) / inertia[0]
    ws[1] = W[1] + h * (T[1] - g1) / inertia[1]
    ws[2] = W[2] + h * (T[2] - g2) / inertia[2]
    A = vwork[4]
    for i in range(3):
        A[i] = djw[i] + h * T[i]


@njit(inline=True)
def step_rig_pos(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork):
    """One RIG_POS step (explicit; energy drifts up).  See the module docstring."""
    _rig_first_half(torque_fn, torque_params, force_params, inertia, t, h, R, W, work, vwork)
    ws = vwork[3]
    hh = 0.5 * h
    for i in range(3):
        W[i] = ws[i]
        Pi[i] = inertia[i] * ws[i]
        for j in range(3):
            R[i, j] = work[2][i, j]
    exp_so3(hh * W[0], hh * W[1], hh * W[2], work[1])
    matmul3_into_first(R, work[1], work[3])
    return 0


@njit(inline=True)
def step_rig_neg(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork):
    """One RIG_NEG step (explicit; exact momentum balance; energy drifts down)."""
    _rig_first_half(torque_fn, torque_params, force_params, inertia, t, h, R, W, work, vwork)
    ws = vwork[3]
    A = vwork[4]
    D1 = work[1]
    hh = 0.5 * h
    exp_so3(hh * ws[0], hh * ws[1], hh * ws[2], D1)
    matmul3(work[2], D1, R)
    matTvec3(D1, A, Pi)
    for i in range(3):
        W[i] = Pi[i] / inertia[i]
    return 0


@njit(inline=True)
def step_rig_imp(torque_fn, torque_params, force_params, inertia, iopts, t, h, R, W, Pi, T, work, vwork):
    """One RIG_IMP step (implicit 3×3 Newton; exact momentum balance; no energy drift)."""
    _rig_first_half(torque_fn, torque_params, force_params, inertia, t, h, R, W, work, vwork)
    ws = vwork[3]
    A = vwork[4]
    for i in range(3):
        W[i] = ws[i]
    iterations = solve_exp_momentum(0.5 * h, inertia, A, W, work[1], work[3:], vwork[0:3])
    if iterations < 0:
        return -1
    matmul3(work[2], work[1], R)
    for i in range(3):
        Pi[i] = inertia[i] * W[i]
    return iterations
