"""Benchmark: what a controller scripted in Python pays per call, beside the step itself.

The README's pendulum (a rod on a hinge joint, h = 1 ms) stepped from Python, as a controller
does: read the time and the joint's angle, set a torque and a load, step; read a body's frame,
a marker point and the joint's reaction.  Prints the median µs per call of each (5 rounds of
100 000 calls after a warm-up that compiles or loads the kernels, reported apart), and one
controller loop (read, set, step) against ``sim.step()`` alone.

Run:  python bench/controller.py
"""

from __future__ import annotations

import statistics
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp

N_CALLS = 100_000
N_ROUNDS = 5


def pendulum() -> tuple[kp.Simulation, int, int]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    rod = b.add_node(position=(0.0, 0.0, -0.5))
    b.add_mass(rod, mass=1.0, inertia=(1 / 12, 1 / 12, 2e-4))
    hinge = b.add_hinge_joint(kp.GROUND, rod, point=(0, 0, 0), axis=(0, 1, 0))
    return kp.Simulation(b.build(), kp.StepParameters(h=1e-3, rho_inf=0.9)), rod, hinge


def main() -> None:
    print(machine())
    t0 = time.perf_counter()
    sim, rod, hinge = pendulum()
    sim.step()
    sim.body_frame(rod)
    sim.body_point(rod, (0.0, 0.0, -0.5))
    sim.reaction(hinge)
    print(f"first calls (compilation or cache load): {time.perf_counter() - t0:.2f} s")

    def controller_step() -> None:
        angle = sim.joint_output(hinge)[0]
        sim.set_torque(hinge, -2.0 * angle + 0.01 * sim.time)
        sim.step()

    names = {"sim": sim, "rod": rod, "hinge": hinge, "controller_step": controller_step}
    calls = [
        ("sim.time", "sim.time"),
        ("sim.state.v[rod]", "sim.state.v[rod]"),
        ("sim.joint_output(hinge)", "sim.joint_output(hinge)"),
        ("sim.set_torque(hinge, 0.5)", "sim.set_torque(hinge, 0.5)"),
        ("sim.set_load(rod, (1, 0, 0))", "sim.set_load(rod, (1.0, 0.0, 0.0))"),
        ("sim.body_frame(rod)", "sim.body_frame(rod)"),
        ("sim.body_point(rod, p)", "sim.body_point(rod, (0.0, 0.0, -0.5))"),
        ("sim.reaction(hinge)", "sim.reaction(hinge)"),
        ("sim.step()", "sim.step()"),
        ("read angle, set torque, step", "controller_step()"),
    ]
    print(f"{'call':34s} µs per call (median of {N_ROUNDS} rounds of {N_CALLS} calls)")
    for label, statement in calls:
        rounds = timeit.repeat(statement, globals=names, number=N_CALLS, repeat=N_ROUNDS)
        print(f"{label:34s} {statistics.median(rounds) / N_CALLS * 1e6:7.3f}")


if __name__ == "__main__":
    main()
