"""Benchmark: one free-floating rigid body (Gazebo "Boxes", complex scenario), µs per step.

Box 0.1 × 0.4 × 0.9 m, 10 kg, g = (0, 0, −9.8) m/s², ċ0 = (−2, 2, 8) m/s,
ω0 = (0.1, 5, 0.1) rad/s, h = 1 ms, ρ∞ = 1, 10 000 steps (10 s), median of 5 runs
after a warm-up.  Gazebo's published timings are for other engines and machines;
here we report kynemapy alone, with the real-time factor.

Run:  python bench/free_bodies.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp

N_STEPS = 10_000
H = 1e-3


def build() -> kp.Model:
    m = 10.0
    a, b, c = 0.1, 0.4, 0.9
    inertia = m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    builder = kp.ModelBuilder(gravity=(0.0, 0.0, -9.8))
    box = builder.add_node(position=(0, 0, 0), velocity=(-2, 2, 8, 0.1, 5, 0.1))
    builder.add_mass(box, mass=m, inertia=inertia)
    return builder.build()


def main() -> None:
    print(f"machine: {machine()}")
    model = build()
    for tol in (1e-5, 1e-10):
        params = kp.StepParameters(h=H, rho_inf=1.0, max_iter=10, atol=tol, rtol=tol)
        t0 = time.perf_counter()
        kp.Simulation(model, params).advance(2)
        first = time.perf_counter() - t0
        times = []
        for _ in range(5):
            sim = kp.Simulation(model, params)
            t = time.perf_counter()
            iters = sim.advance(N_STEPS)
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        print(
            f"atol = rtol = {tol:g}: {med / N_STEPS * 1e6:.2f} µs/step, Newton iterations/step {np.mean(iters):.2f}, "
            f"real-time factor {N_STEPS * H / med:.0f}× (first call {first:.2f} s)"
        )


if __name__ == "__main__":
    main()
