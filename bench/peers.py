"""Benchmark: Kynema's heavy top, kynemapy against MuJoCo (RK4), measured in the same run.

The heavy top: 15 kg, centre of mass at (0, 1, 0) m, 1 m from a fixed pivot at the
origin, principal inertia about the centre of mass (0.234375, 0.46875, 0.234375) kg m²,
gravity (0, 0, −9.81) m/s², initial angular velocity (0, 150, −4.61538) rad/s (inertial;
the centre of mass moves at ω × r = (4.61538, 0, 0) m/s), h = 2 ms.

* kynemapy: ``build_heavy_top()`` of ``examples/heavy_top.py`` (a rigid body node at the
  centre of mass, a 6→3 rigid joint to a pinned node), generalized-α, ρ∞ = 0.9, at most
  10 Newton iterations, Kynema-compatible tangent and the exact one
  (``geometric_stiffness=True``).
* MuJoCo: one body on a ball joint at the pivot, inertial frame at (0, 1, 0), RK4,
  timestep 2 ms (the same physics, another integrator).

After a warm-up (kynemapy's first call, numba compilation or cache load, reported apart),
the medians over ``--runs`` interleaved rounds (kynemapy, MuJoCo, kynemapy, ... so that
both see the same machine load) of ``--steps`` steps each:

* kynemapy ``Simulation.advance(N)`` (one compiled call) and ``Simulation.step()`` in a
  Python loop, µs per step;
* MuJoCo ``mujoco.rollout.rollout`` (its native loop, output array allocated beforehand)
  and ``mujoco.mj_step`` in a Python loop, µs per step;

then the ratios MuJoCo / kynemapy (rollout vs advance, mj_step loop vs step loop) and the
``sim.step()`` overhead (step-loop µs − advance µs).  Both engines' centre of mass after
0.8 s (400 steps) are compared with each other and with MuJoCo RK4 at h = 0.1 ms (a
reference close to the exact motion).  MuJoCo is optional: without it, kynemapy's figures
alone are printed.

Run:  python bench/peers.py [--steps N] [--runs R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp

try:
    import mujoco
    from mujoco import rollout
except ImportError:  # MuJoCo is optional
    mujoco = None

H = 0.002
OMEGA0 = (0.0, 150.0, -4.61538)  # rad/s, inertial (= body frame at the identity start)
CHECK_STEPS = 400  # 0.8 s, Kynema's regression run

MJCF = """<mujoco>
  <option timestep="{h}" integrator="RK4" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="top" pos="0 0 0">
      <joint type="ball" pos="0 0 0"/>
      <inertial pos="0 1 0" mass="15" diaginertia="0.234375 0.46875 0.234375"/>
    </body>
  </worldbody>
</mujoco>"""


# --- kynemapy -------------------------------------------------------------------------


def kp_params(exact: bool) -> kp.StepParameters:
    return kp.StepParameters(h=H, rho_inf=0.9, max_iter=10, geometric_stiffness=exact)


def kp_advance(model: kp.Model, params: kp.StepParameters, n: int) -> float:
    """µs per step of one ``advance(n)`` (the Simulation is made before the clock starts)."""
    sim = kp.Simulation(model, params)
    t = time.perf_counter()
    sim.advance(n)
    return (time.perf_counter() - t) / n * 1e6


def kp_step_loop(model: kp.Model, params: kp.StepParameters, n: int) -> float:
    """µs per step of ``sim.step()`` called n times from Python."""
    sim = kp.Simulation(model, params)
    step = sim.step
    t = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - t) / n * 1e6


def kp_cm_position(model: kp.Model, top: int, n: int) -> np.ndarray:
    """Centre of mass of the top after n steps, Kynema-compatible tangent [m]."""
    sim = kp.Simulation(model, kp_params(exact=False))
    sim.advance(n)
    state = sim.state
    if hasattr(state, "x"):
        return np.array(state.x[top, :3])
    return np.asarray(model.x0)[top, :3] + np.asarray(state.q)[top, :3]


# --- MuJoCo ---------------------------------------------------------------------------


def mj_model(h: float = H):
    m = mujoco.MjModel.from_xml_string(MJCF.format(h=h))
    d = mujoco.MjData(m)
    return m, d


def mj_reset(m, d) -> None:
    mujoco.mj_resetData(m, d)
    d.qvel[:] = OMEGA0  # ball joint: body-frame angular velocity; body frame = world at the start


def mj_initial_state(m, d) -> np.ndarray:
    mj_reset(m, d)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, state, spec)
    return state


def mj_rollout(m, d, initial_state: np.ndarray, out: np.ndarray, n: int) -> float:
    """µs per step of one native rollout of n steps into a preallocated output array."""
    t = time.perf_counter()
    rollout.rollout(m, d, initial_state, nstep=n, state=out)
    return (time.perf_counter() - t) / n * 1e6


def mj_step_loop(m, d, n: int) -> float:
    """µs per step of ``mujoco.mj_step(m, d)`` called n times from Python."""
    mj_reset(m, d)
    step = mujoco.mj_step
    t = time.perf_counter()
    for _ in range(n):
        step(m, d)
    return (time.perf_counter() - t) / n * 1e6


def mj_cm_position(h: float, t_end: float) -> np.ndarray:
    """Centre of mass of the top at t_end, MuJoCo RK4 with timestep h [m]."""
    m, d = mj_model(h)
    mj_reset(m, d)
    for _ in range(round(t_end / h)):
        mujoco.mj_step(m, d)
    mujoco.mj_kinematics(m, d)  # xipos of the final qpos (mj_step leaves those of the step's start)
    return np.array(d.xipos[1])


# --- report ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000, help="steps per timed run (default 10 000)")
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds, at least 5 (default 7)")
    args = parser.parse_args()
    n, runs = args.steps, max(5, args.runs)

    print(f"machine: {machine()}")
    print(f"MuJoCo {mujoco.__version__}" if mujoco is not None else "MuJoCo: not importable, kynemapy only")
    print(f"heavy top, h = 2 ms, median of {runs} interleaved rounds of {n} steps")

    model, top = build_heavy_top()
    modes = {"Kynema-compatible": kp_params(exact=False), "exact tangent (K^Φ)": kp_params(exact=True)}

    # warm-up: kynemapy's first call compiles or loads numba's cache
    for name, params in modes.items():
        t = time.perf_counter()
        kp.Simulation(model, params).advance(2)
        kp.Simulation(model, params).step()
        print(f"kynemapy first call ({name}): {time.perf_counter() - t:.2f} s (compilation or cache load)")
        kp_advance(model, params, n // 10)
        kp_step_loop(model, params, n // 10)

    compat, exact = modes.values()
    tasks: list[tuple[str, Callable[[], float]]] = [
        ("kynemapy advance, Kynema-compatible", lambda: kp_advance(model, compat, n)),
        ("kynemapy step loop, Kynema-compatible", lambda: kp_step_loop(model, compat, n)),
        ("kynemapy advance, exact tangent (K^Φ)", lambda: kp_advance(model, exact, n)),
        ("kynemapy step loop, exact tangent (K^Φ)", lambda: kp_step_loop(model, exact, n)),
    ]
    if mujoco is not None:
        m, d = mj_model()
        initial = mj_initial_state(m, d)
        out = np.empty((1, n, initial.size))
        mj_rollout(m, d, initial, out, n)  # warm-up
        mj_step_loop(m, d, n // 10)
        # interleave: kynemapy, MuJoCo, kynemapy, MuJoCo, kynemapy, kynemapy
        tasks.insert(1, ("MuJoCo rollout", lambda: mj_rollout(m, d, initial, out, n)))
        tasks.insert(3, ("MuJoCo mj_step loop", lambda: mj_step_loop(m, d, n)))

    times: dict[str, list[float]] = {label: [] for label, _ in tasks}
    for _ in range(runs):
        for label, fn in tasks:
            times[label].append(fn())
    med = {label: statistics.median(v) for label, v in times.items()}

    print()
    for label, v in times.items():
        print(f"  {label:42s} {med[label]:8.2f} µs/step  (min {min(v):.2f}, max {max(v):.2f})")

    print()
    for name in modes:
        adv, loop = med[f"kynemapy advance, {name}"], med[f"kynemapy step loop, {name}"]
        print(f"{name}: sim.step() overhead = {loop - adv:.2f} µs/step (step loop − advance)")
        if mujoco is not None:
            print(
                f"  MuJoCo RK4 / kynemapy: rollout / advance = {med['MuJoCo rollout'] / adv:.2f}×, "
                f"mj_step loop / step loop = {med['MuJoCo mj_step loop'] / loop:.2f}×  (> 1: kynemapy faster)"
            )

    print()
    t_end = CHECK_STEPS * H
    x_kp = kp_cm_position(model, top, CHECK_STEPS)
    print(f"centre of mass at t = {t_end:.1f} s ({CHECK_STEPS} steps of 2 ms):")
    print(f"  kynemapy (Kynema-compatible)  {np.array2string(x_kp, precision=6)} m")
    if mujoco is None:
        print("  MuJoCo: not importable, no comparison")
        return
    x_mj = mj_cm_position(H, t_end)
    x_ref = mj_cm_position(1e-4, t_end)
    print(f"  MuJoCo RK4, h = 2 ms          {np.array2string(x_mj, precision=6)} m")
    print(f"  MuJoCo RK4, h = 0.1 ms (ref.) {np.array2string(x_ref, precision=6)} m")
    print(f"  |kynemapy − MuJoCo|  = {np.linalg.norm(x_kp - x_mj) * 1e3:.3f} mm")
    print(
        f"  |kynemapy − ref.| = {np.linalg.norm(x_kp - x_ref) * 1e3:.3f} mm, "
        f"|MuJoCo − ref.| = {np.linalg.norm(x_mj - x_ref) * 1e3:.3f} mm"
    )


if __name__ == "__main__":
    main()
