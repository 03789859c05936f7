"""Benchmark: cost per step against the number of bodies (sparse assembly and solve).

Two families, N = 10, 100, 1000, 5000 bodies, in one run:

* a spherical pendulum chain: N slender links (1 m, 1 kg) joined end to end by
  ball joints, the first to the ground, started straight out horizontally with a small
  sideways velocity, falling under gravity (h = 1 ms, ρ∞ = 0.9, Kynema-compatible
  tangent; the Newton tolerances are the package defaults);
* N independent boxes in free flight (Gazebo's Boxes body, h = 1 ms).

Prints CPU µs per step and per body-step (median of several runs of compiled steps,
``Simulation.advance``, after a warm-up, each run from the same state; the runs of the sizes of
a family interleaved, a run of each size in turn, so that a spell of the machine's speed touches
every size alike; set-up and first-call times reported apart), Newton iterations per step, the
solver the workspace chose, and the ratio of the per-body cost at N = 5000 to that at N = 100
(of the medians, the target's, and of the minima, each size's fastest run).  Targets (issue 4, 2-core machine):
per-body cost at N = 5000 within 1.5× of N = 100; boxes ≤ 1 µs per body-step at
N = 1000; the chain ≤ 10 µs per body-step at N = 1000.

Run:  python bench/scaling.py [--sizes 10 100 1000 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp

H = 1e-3


def chain(n: int) -> kp.Model:
    """N links of 1 m along +x from the origin, ball joints at the link ends."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m, length, radius = 1.0, 1.0, 0.02
    i_axial = 0.5 * m * radius**2
    i_trans = m * (3 * radius**2 + length**2) / 12.0
    prev = kp.GROUND
    for i in range(n):
        node = b.add_node(position=(i * length + 0.5 * length, 0.0, 0.0), velocity=(0.0, 0.01, 0.0, 0.0, 0.0, 0.0))
        b.add_mass(node, mass=m, inertia=(i_axial, i_trans, i_trans))
        b.add_ball_joint(prev, node, point=(i * length, 0.0, 0.0))
        prev = node
    return b.build()


def boxes(n: int) -> kp.Model:
    """N copies of Gazebo's Boxes body (4 × 1 × 1 m... as in bench/free_bodies.py) in free flight."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.8))
    m = 10.0
    dx, dy, dz = 4.0, 0.4, 0.1  # box dimensions [m]
    inertia = (m * (dy**2 + dz**2) / 12.0, m * (dx**2 + dz**2) / 12.0, m * (dx**2 + dy**2) / 12.0)
    for i in range(n):
        node = b.add_node(position=(0.0, 10.0 * i, 0.0), velocity=(-2.0, 2.0, 8.0, 0.1, 5.0, 0.1))
        b.add_mass(node, mass=m, inertia=inertia)
    return b.build()


def prepare(model: kp.Model) -> tuple[kp.Simulation, float, float, kp.State]:
    """A simulation of ``model`` after a warm-up: (simulation, set-up s, first-call s, the state
    every run starts from)."""
    params = kp.StepParameters(h=H, rho_inf=0.9, max_iter=10)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # the chain's sideways start velocity is projected onto its joints (said once in main)
        warnings.filterwarnings("ignore", message="initial velocities projected")
        sim = kp.Simulation(model, params)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    sim.advance(2)
    return sim, setup, time.perf_counter() - t0, sim.save_state()


def run_once(sim: kp.Simulation, steps: int, start: kp.State) -> tuple[float, float]:
    """One run of ``steps`` compiled steps from the state ``start``: (CPU µs per step, Newton
    iterations per step).  Every run starts from the same state: the chain's motion grows wilder
    with time (at N = 100, 2.0 Newton iterations a step in its first seconds, 2.3 after ten, and
    its steps fail near 14 s), which runs continuing one another would time."""
    sim.restore_state(start)
    t = time.process_time()
    it = sim.advance(steps)
    return (time.process_time() - t) / steps * 1e6, float(it.mean())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    print(f"h = {H} s, CPU time, median of {args.runs} interleaved runs after a warm-up\n")
    for name, build in (("spherical pendulum chain", chain), ("independent boxes", boxes)):
        print(f"{name}")
        if build is chain:
            print("  (each link starts at 0.01 m/s sideways; kynemapy projects that onto the ball joints)")
        print(
            f"  {'N':>6} {'DOFs':>7} {'solver':>6} {'its/step':>8} {'µs/step':>10} {'µs/body-step':>13} "
            f"{'set-up s':>9} {'1st call s':>10}"
        )
        sims = {}
        for n in args.sizes:
            model = build(n)
            sims[n] = (model, *prepare(model))
        times: dict[int, list[float]] = {n: [] for n in args.sizes}
        iters: dict[int, list[float]] = {n: [] for n in args.sizes}
        for _ in range(args.runs):
            for n in args.sizes:  # one run of each size in turn
                us, its = run_once(sims[n][1], max(5, min(2000, 200_000 // n)), sims[n][4])
                times[n].append(us)
                iters[n].append(its)
        per_body, per_body_min = {}, {}
        for n in args.sizes:
            model, sim, setup, first, _ = sims[n]
            us = statistics.median(times[n])
            per_body[n], per_body_min[n] = us / n, min(times[n]) / n
            print(
                f"  {n:>6} {model.n_dofs:>7} {sim.workspace.solver:>6} {float(np.mean(iters[n])):>8.2f} {us:>10.1f} "
                f"{us / n:>13.3f} {setup:>9.2f} {first:>10.2f}"
            )
        if 100 in per_body and 5000 in per_body:
            print(
                f"  per-body cost N = 5000 / N = 100: {per_body[5000] / per_body[100]:.2f}× (target ≤ 1.5×; "
                f"of the minima {per_body_min[5000] / per_body_min[100]:.2f}×)"
            )
        del sims
        print()


if __name__ == "__main__":
    main()
