"""The joint examples' models: the exact tangent's quadratic convergence, and the agreement of
two independent reduced references.

Each example (examples/double_pendulum.py, four_bar.py, slider_crank.py, gimbal_gyroscope.py,
pendulum_chain.py, rotor_spin_up.py) checks itself against an independent reference (closed
forms, analytic kinematic relations, reduced-coordinate models integrated by scipy; in
examples/_references.py, which never imports kynemapy); tests/examples/test_examples.py runs
each once (``--quick``), held to its ``BOUNDS``.  The figures below are the full runs':

Measured with the full runs (h = 1 ms unless said; bounds are about 3× these, set from the
second-order behaviour: every dynamic error drops 4× at h/2):

* double pendulum (ρ∞ = 1, 1 s): rod orientation 4.3e-5 rad, centre of mass 9.5e-6 m, energy
  4.9e-5 of the largest kinetic energy, joint gap 7e-15 m; ρ∞ = 0.9, 2 s: 8.2e-5 rad, energy
  2.8e-5, pivot force 9.6e-5 of its maximum after 0.1 s (2.0e-3 in the O(h) start-up transient);
* four-bar (ρ∞ = 0.9, 4 s, 6.3 crank turns): rocker angle − Freudenstein 6e-14 rad, loop
  closure 2e-14 m, crank angle 3.1e-3 rad against the one-DOF reference, energy balance 1.3e-3;
* slider-crank (ρ∞ = 0.9, 2 s, 6.1 turns): piston − r cos θ − sqrt(l² − r² sin² θ) 2e-15 m,
  velocity relation 4.1e-4 m/s, crank angle 8.0e-3 rad, energy balance 1.0e-3;
* gimbal gyroscope (h = 0.5 ms; ρ∞ = 1, 1 s): ψ 4.2e-4 rad, θ 2.9e-4 rad, p_φ 1.0e-8, L_z 4.9e-6,
  energy 2.9e-8, mean precession rate 8.5e-4 from the reference's and 6.4e-4 from m g ℓ / p_φ;
  steady precession θ 2.9e-6 rad, ψ − Ω t 2.0e-4 rad;
* 10-link chain (ρ∞ = 1, 0.3 s): energy 1.8e-4, orientation 4.5e-4 rad, tip 4.6e-6 m, gaps 7e-16 m;
  ρ∞ = 0.9, 1 s: 4.7e-4, 4.2e-3 rad, 4.2e-4 m;
* rotor (balanced, constant torque): angle/rate/acceleration 4e-14, orientation 2e-12 rad, reaction
  force 2e-9 and moment 2e-12 (relative); unbalanced: 7.9e-4, 9.7e-3 rad, reaction force 9.8e-3;
  sinusoidal torque: I ω̇ − τ(t) 6e-15 τ0, ω 1.3e-5, θ 1.4e-5 (relative).

With ρ∞ = 1 the index-3 scheme leaves the multipliers' and accelerations' oscillation (sign
alternating every step) undamped and growing; the examples keep their ρ∞ = 1 runs short and
show why (see examples/double_pendulum.py).

Newton convergence (atol = rtol = 1e-13 so that several iterations stay above round-off; error
e_k = the weighted RMS of update k, e_0 measures λ from 0 and is skipped; pairs with
e_{k+1} < 300, the round-off floor of about 1–60, are skipped; ρ∞ = 0.9, 5 steps): the exact
tangent's ``C = (e_{k+1}/e_k²)/tol`` (≈ the physical ratio) stays below 0.23 (heavy top h = 10 ms:
≤ 9e-5; double pendulum h = 50 ms: 0.12–0.23; four-bar h = 50 ms: ≤ 0.011, the same for
successive pairs of a step), while Kynema's tangent's grows with every iteration (linear
convergence): to 217, 3.6e6 and 1.9e6.  Iterations per step at h = 1 ms, atol = rtol = 1e-9,
ρ∞ = 0.9, 200 steps (printed by this test): exact vs Kynema's tangent 3.00 vs 3.38 (heavy top),
3.00 vs 3.00 (double pendulum, four-bar); the examples print theirs (ρ∞ = 1 double pendulum
3.01 vs 3.48, four-bar 3.00 vs 3.27, slider-crank 3.00 vs 3.47, 10-link chain 3.16 vs 4.17).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def test_ball_chain_reference_reproduces_the_heavy_top_reference() -> None:
    """Two independent reduced references agree: _references.BallChain (N = 1, Kane's equations
    with world angular velocities) and tests/references.py (Euler's equations about the pivot)."""
    ref = importlib.import_module("_references")
    references = importlib.import_module("references")
    top = ref.BallChain(
        pivot=np.zeros(3),
        mass=np.array([references.HEAVY_TOP_MASS]),
        inertia=references.HEAVY_TOP_CENTROIDAL_INERTIA[None],
        com=references.HEAVY_TOP_COM[None],
        link=references.HEAVY_TOP_COM[None],
        gravity=references.HEAVY_TOP_GRAVITY,
    )
    times = np.linspace(0.0, 0.2, 5)
    quats, omegas = top.solve(np.array([[1.0, 0, 0, 0]]), references.HEAVY_TOP_OMEGA0[None], times)
    quat_ref, body_w = references.heavy_top_solution(times)
    assert np.abs(quats[:, 0] - quat_ref).max() < 1e-9
    world_w = np.einsum("tij,tj->ti", ref.quat_matrix(quat_ref), body_w)
    assert np.abs(omegas[:, 0] - world_w).max() < 1e-7 * 150


# ------------------------------------------------------------------------------ Newton convergence
TIGHT = 1e-13
FLOOR = 300.0  # weighted errors below this are round-off (observed stagnation at 1–60 with TIGHT)


def newton_models():
    four_bar = importlib.import_module("four_bar")
    double_pendulum = importlib.import_module("double_pendulum")
    heavy_top = importlib.import_module("heavy_top")
    return {
        "heavy top": (heavy_top.build_heavy_top(give_accelerations=False)[0], 0.01),
        "double pendulum": (double_pendulum.build()[0], 0.05),
        "four-bar": (four_bar.build()[0], 0.05),
    }


def newton_errors(model: kp.Model, h: float, exact: bool, n_steps: int = 5) -> list[tuple[float, ...]]:
    """Newton errors of ``n_steps`` steps at tolerance TIGHT, each from the state a converged
    (atol = rtol = 1e-9) trajectory reaches, so that a step that stalls on round-off costs nothing."""
    loose = kp.Simulation(
        model, kp.StepParameters(h=h, rho_inf=0.9, atol=1e-9, rtol=1e-9, max_iter=20, geometric_stiffness=exact)
    )
    tight = kp.Simulation(
        model, kp.StepParameters(h=h, rho_inf=0.9, atol=TIGHT, rtol=TIGHT, max_iter=7, geometric_stiffness=exact)
    )
    history = []
    for _ in range(n_steps):
        tight.restore_state(loose.save_state())
        tight.inputs.constraint_input[...] = loose.inputs.constraint_input
        history.append(tight.step(throw=False).errors)
        loose.step()
    return history


def quadratic_constants(history: list[tuple[float, ...]]) -> list[list[float]]:
    """Per step, ``C = e_{k+1}/e_k² / tol`` for k >= 1 while e_{k+1} is above the round-off floor
    (weighted errors are about the physical ones over tol, so C is the physical ratio)."""
    return [[e[k + 1] / e[k] ** 2 / TIGHT for k in range(1, len(e) - 1) if e[k + 1] >= FLOOR] for e in history]


@pytest.mark.parametrize("name", ["heavy top", "double pendulum", "four-bar"])
def test_exact_tangent_converges_quadratically(name: str) -> None:
    model, h = newton_models()[name]
    exact = quadratic_constants(newton_errors(model, h, True))
    kynema = quadratic_constants(newton_errors(model, h, False))
    c_exact = max(c for step in exact for c in step)
    c_kynema = max(c for step in kynema for c in step)
    print(f"{name}: C exact {[[float(f'{c:.3g}') for c in s] for s in exact]}")
    print(f"{name}: C Kynema {[[float(f'{c:.3g}') for c in s] for s in kynema]}")
    assert all(step for step in exact), "every step has at least one pair above round-off"
    # quadratic: e_{k+1} <= C e_k² with C bounded (measured <= 0.23) and not growing along a step
    assert c_exact < 1.0
    assert all(max(step) <= 10 * min(step) for step in exact)
    # Kynema's tangent converges linearly: the same ratio grows along the iteration, past 10
    assert c_kynema > 10.0
    assert c_kynema > 100 * c_exact


def test_iterations_per_step_exact_and_kynema_tangents(capsys: pytest.CaptureFixture[str]) -> None:
    """Mean Newton iterations per step with each tangent (h = 1 ms, atol = rtol = 1e-9, 200 steps)."""
    models = newton_models()
    lines = []
    for name, (model, _) in models.items():
        mean = {}
        for exact in (True, False):
            params = kp.StepParameters(
                h=1e-3, rho_inf=0.9, atol=1e-9, rtol=1e-9, max_iter=20, geometric_stiffness=exact
            )
            mean[exact] = float(np.mean(kp.Simulation(model, params).advance(200)))
        lines.append(f"{name}: exact {mean[True]:.2f}, Kynema's {mean[False]:.2f} iterations per step")
        assert mean[True] <= mean[False]
        assert mean[True] <= 4.0
    with capsys.disabled():
        print("\n" + "\n".join(lines))
