"""Benchmark: the per-step cost of hard (nonsmooth) contact against a ground plane.

Three scenes, each stepped with ``Simulation.step()`` at h = 1 ms (generalized-α, ρ∞ = 0.9):

* ``sliding ball``: a solid sphere (r = 0.1 m, 1 kg) on the plane z = 0, thrown at 2 m/s along x
  without spin, μ = 0.3 (the point is closed every step);
* ``resting box``: a box (0.4 × 0.3 × 0.2 m, 3 kg) resting face down on the plane, μ = 0.5 (four
  corners closed every step);
* ``free flight``: the sphere 1 m above the plane, at rest (no point near the plane; the steps
  timed stay far above it).

Each scene runs with the hard law (``add_ground_plane(law="hard")``) and with the compliant law
(k = 1e6 N/m, μ the same, its default slip speed).  Cost: wall time per step [µs]
(``time.perf_counter``), the median over ``--rounds`` interleaved rounds of ``--steps`` steps,
after a warm-up round; the simulations are made before the clock starts.  Not a test.

Run:  python bench/hard_contact.py [--rounds R] [--steps N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp

G = 9.81  # m/s²
H = 1.0e-3  # s


def _plane(b: kp.ModelBuilder, law: str, mu: float) -> None:
    if law == "hard":
        b.add_ground_plane(law="hard", friction=mu)
    else:
        b.add_ground_plane(stiffness=1.0e6, friction=mu)


def sliding_ball(law: str) -> kp.Simulation:
    """The sphere on the plane thrown at 2 m/s, μ = 0.3 (compliant: resting at its static sag)."""
    r, m = 0.1, 1.0
    sag = 0.0 if law == "hard" else m * G / 1.0e6
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, r - sag), velocity=(2.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    i = 0.4 * m * r * r
    b.add_mass(n, mass=m, inertia=(i, i, i))
    b.add_sphere(n, r)
    _plane(b, law, 0.3)
    return kp.Simulation(b.build(), kp.StepParameters(h=H, rho_inf=0.9))


def resting_box(law: str) -> kp.Simulation:
    """The box face down on the plane at rest, μ = 0.5."""
    half, m = (0.2, 0.15, 0.1), 3.0
    sag = 0.0 if law == "hard" else m * G / 4.0e6
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, half[2] - sag))
    b.add_mass(n, mass=m, inertia=(0.05, 0.05, 0.05))
    b.add_box(n, half)
    _plane(b, law, 0.5)
    return kp.Simulation(b.build(), kp.StepParameters(h=H, rho_inf=0.9))


def free_flight(law: str) -> kp.Simulation:
    """The sphere 1 m above the plane (it falls 5 mm in 1 000 steps: never near it)."""
    r, m = 0.1, 1.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, r + 1.0))
    i = 0.4 * m * r * r
    b.add_mass(n, mass=m, inertia=(i, i, i))
    b.add_sphere(n, r)
    _plane(b, law, 0.3)
    return kp.Simulation(b.build(), kp.StepParameters(h=H, rho_inf=0.9))


SCENES: dict[str, Callable[[str], kp.Simulation]] = {
    "sliding ball": sliding_ball,
    "resting box": resting_box,
    "free flight": free_flight,
}


def per_step(sim: kp.Simulation, steps: int) -> float:
    """Wall time per ``sim.step()`` [µs] over ``steps`` steps."""
    step = sim.step
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps * 1.0e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    print(machine())
    print(f"h = {H * 1e3:g} ms, {args.steps} steps per round, median of {args.rounds} interleaved rounds")
    keys = [(name, law) for name in SCENES for law in ("hard", "compliant")]
    times: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
    for rnd in range(args.rounds + 1):  # round 0: the warm-up (compilation, caches)
        for name, law in keys:
            sim = SCENES[name](law)
            t = per_step(sim, args.steps)
            if rnd > 0:
                times[(name, law)].append(t)
    print(f"{'scene':<14} {'hard [us/step]':>15} {'compliant [us/step]':>20}")
    for name in SCENES:
        hard = statistics.median(times[(name, "hard")])
        soft = statistics.median(times[(name, "compliant")])
        print(f"{name:<14} {hard:>15.1f} {soft:>20.1f}")


if __name__ == "__main__":
    main()
