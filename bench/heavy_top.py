"""Benchmark: Kynema's heavy top (15-DOF constrained system), µs per step.

Prints, after a warm-up (first-call time reported apart: compilation, or loading
from numba's cache), the median µs per step over 5 runs of 10 000 steps inside
one compiled call (``Simulation.advance``) and through the Python loop
(``Simulation.step``), Newton iterations per step, the cost of making a
``Simulation`` (median of 20, after the warm-up: packing the model, the reference
factorization, the initial-velocity check), both in Kynema-compatible mode and with
the exact Newton tangent, and the 400-step regression run as a fresh process
(imports + cache load + run).  No Kynema figure here: ``bench/kynema.py`` times Kynema-FMB
built on this machine (``KYNEMA_BUILD``) beside kynemapy on the same model, interleaved, and
prints the ratios (this script printed one against a fixed 20 µs a step, a figure reported
elsewhere, until 2026-12-02; Kynema's build here takes 31-42 µs).

Run:  python bench/heavy_top.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp

N_STEPS = 10_000
N_RUNS = 5


def run(exact: bool) -> None:
    model, _ = build_heavy_top()
    params = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, geometric_stiffness=exact)
    t0 = time.perf_counter()
    kp.Simulation(model, params).advance(2)
    kp.Simulation(model, params).step()
    first = time.perf_counter() - t0
    setup = []
    for _ in range(20):
        t = time.perf_counter()
        kp.Simulation(model, params)
        setup.append((time.perf_counter() - t) * 1e3)
    compiled, python_loop, iters = [], [], None
    for _ in range(N_RUNS):
        sim = kp.Simulation(model, params)
        t = time.perf_counter()
        iters = sim.advance(N_STEPS)
        compiled.append((time.perf_counter() - t) / N_STEPS * 1e6)
    for _ in range(N_RUNS):
        sim = kp.Simulation(model, params)
        t = time.perf_counter()
        for _ in range(N_STEPS // 5):
            sim.step()
        python_loop.append((time.perf_counter() - t) / (N_STEPS // 5) * 1e6)
    sim = kp.Simulation(model, params)
    errors = np.array([sim.step().errors for _ in range(3)][-1])
    med = statistics.median(compiled)
    mode = "exact tangent (K^Φ)" if exact else "Kynema-compatible  "
    print(
        f"{mode}: {med:6.2f} µs/step compiled (advance), {statistics.median(python_loop):6.2f} µs/step via "
        f"sim.step(); Newton iterations/step {np.mean(iters):.3f}; "
        f"first call {first:.2f} s; Simulation() {statistics.median(setup):.2f} ms"
    )
    print(f"    Newton errors of step 3: {', '.join(f'{e:.3g}' for e in errors)}")


def regression_wall_time() -> float:
    """Fresh interpreter: import, cache load, 400 steps (the heavy-top regression run)."""
    code = (
        "import kynemapy as kp\n"
        "b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))\n"
        "top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538),"
        " acceleration=(0, -21.3017325444, -30.9608307692308, 661.3461692307692, 0, 0))\n"
        "pin = b.add_node(position=(0, 0, 0))\n"
        "b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))\n"
        "b.add_rigid_joint_6dof_to_3dof(top, pin)\n"
        "b.add_prescribed_bc_3dof(pin)\n"
        "sim = kp.Simulation(b.build(), kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10))\n"
        "for _ in range(400):\n    sim.step()\n"
    )
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t


def main() -> None:
    print(f"machine: {machine()}")
    print(f"heavy top, h = 2 ms, ρ∞ = 0.9, median of {N_RUNS} runs of {N_STEPS} steps")
    run(exact=False)
    run(exact=True)
    print(
        f"400-step regression run in a fresh process (import + numba cache load + run): {regression_wall_time():.2f} s"
    )


if __name__ == "__main__":
    main()
