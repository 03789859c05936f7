"""Benchmark: cost of a step with Kynema's geometrically exact beams.

Three families, in one run (h = 0.01 s, ρ∞ = 0.9, Kynema's tangent, zero initial
accelerations as Kynema starts; the composite section of Kynema's rotating-beam test):

* **rotating beam**: one 10 m beam of one element of order p (p + 1 GLL nodes, p + 2 Gauss
  points), its root 2 m from the axis driven by a prescribed rotation at 0.1 rad/s about z
  (Kynema's ``RotatingBeamTest``), p = 5, 10, 20;
* **three-blade rotor**: three such blades, each root held by a rigid joint to one hub node
  whose rotation is prescribed, p = 5, 10, 20;
* **long beam**: a 10 m cantilever of E elements of order 5 sharing their end nodes (5E + 1
  nodes), clamped at the root, tip loaded, E = 1, 4, 16, 64: cost per node-step against the
  number of nodes (linear cost means a flat column).

Prints µs per step and per node-step (medians of ``--runs`` runs of ``Simulation.advance``
after a warm-up; compile time reported apart), Newton iterations per step and the solver
chosen.

Kynema: this benchmark times kynemapy alone.  ``python bench/kynema.py`` times Kynema-FMB (a
build named by ``KYNEMA_BUILD``, with its ``KyTiming`` harness) against kynemapy on the same
models: the heavy top, the p = 5 rotating beam and the IEA 15 MW rotor, CPU time per step.

Run:  python bench/beams.py [--orders 5 10 20] [--elements 1 4 16 64] [--steps 200] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp
from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points

M_STAR = np.diag([8.538e-2, 8.538e-2, 8.538e-2, 1.4433e-2, 0.40972e-2, 1.0336e-2])
C_STAR = np.zeros((6, 6))
C_STAR[0, 0], C_STAR[1, 1], C_STAR[2, 2] = 1368.17e3, 88.56e3, 38.78e3
C_STAR[3:, 3:] = [[16.96e3, 17.61e3, -0.351e3], [17.61e3, 59.12e3, -0.37e3], [-0.351e3, -0.37e3, 141.47e3]]
OMEGA = 0.1
H = 0.01


def add_blade(b: kp.ModelBuilder, order: int, azimuth: float, elements: int = 1, spin: bool = True) -> list[int]:
    """A 10 m blade from 2 m to 12 m along the direction ``azimuth`` about z [rad], ``elements``
    elements of ``order``; initial velocity of a rigid spin at OMEGA about z (if ``spin``)."""
    direction = np.array([np.cos(azimuth), np.sin(azimuth), 0.0])
    orientation = (np.cos(azimuth / 2), 0.0, 0.0, np.sin(azimuth / 2))
    xi = (gll_points(order) + 1.0) / 2.0
    nodes: list[int] = []
    for e in range(elements):
        s = (e + xi) / elements
        ids = [] if e == 0 else [nodes[-1]]
        for si in s[(0 if e == 0 else 1) :]:
            x = (2.0 + 10.0 * si) * direction
            v = np.cross((0.0, 0.0, OMEGA), x) if spin else np.zeros(3)
            w = (0.0, 0.0, OMEGA) if spin else (0.0, 0.0, 0.0)
            ids.append(b.add_node(position=x, orientation=orientation, velocity=(*v, *w), acceleration=(0.0,) * 6))
        b.add_beam_element(ids, xi, gauss_quadrature(order + 2), [0.0, 1.0], [M_STAR, M_STAR], [C_STAR, C_STAR])
        nodes.extend(ids if e == 0 else ids[1:])
    return nodes


def rotating_beam(order: int) -> tuple[kp.Model, int, np.ndarray]:
    b = kp.ModelBuilder()
    nodes = add_blade(b, order, 0.0)
    bc = b.add_prescribed_bc(nodes[0])
    return b.build(), bc, np.array([2.0, 0.0, 0.0])


def rotor(order: int) -> tuple[kp.Model, int, np.ndarray]:
    b = kp.ModelBuilder()
    hub = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0, 0, 0, 0, 0, OMEGA), acceleration=(0.0,) * 6)
    for k in range(3):
        nodes = add_blade(b, order, 2.0 * np.pi * k / 3.0)
        b.add_rigid_joint(hub, nodes[0])
    bc = b.add_prescribed_bc(hub)
    return b.build(), bc, np.zeros(3)


def long_beam(elements: int) -> kp.Model:
    b = kp.ModelBuilder()
    nodes = add_blade(b, 5, 0.0, elements=elements, spin=False)
    b.add_fixed_bc(nodes[0])
    return b.build()


def drive(sim: kp.Simulation, bc: int, point: np.ndarray, steps: int) -> None:
    """``steps`` steps, the prescribed rotation of ``bc`` about z through the origin set before each."""
    for _ in range(steps):
        angle = OMEGA * (sim.time + H)
        c, s = np.cos(angle), np.sin(angle)
        u = np.array([c * point[0] - s * point[1], s * point[0] + c * point[1], point[2]]) - point
        sim.inputs.constraint_input[bc] = (*u, np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
        sim.step()


def timed(make, steps: int, runs: int, driven: bool) -> tuple[float, float, float, str]:
    """(µs per step, first-run seconds, Newton iterations per step, solver)."""
    params = kp.StepParameters(h=H, rho_inf=0.9, max_iter=10)
    t0 = time.perf_counter()
    model, *rest = make()
    sim = kp.Simulation(model, params)
    if driven:
        drive(sim, rest[0], rest[1], 2)
    else:
        sim.advance(2)
    first = time.perf_counter() - t0
    times, iterations = [], []
    for _ in range(runs):
        sim = kp.Simulation(model, params)
        if not driven:
            sim.inputs.f[model.n_nodes - 1, 2] = -100.0  # a tip load that bends the beam
        t = time.perf_counter()
        if driven:
            drive(sim, rest[0], rest[1], steps)
        else:
            sim.advance(steps)
        times.append((time.perf_counter() - t) / steps)
        iterations.append(sim.workspace.n_iter)
    return 1e6 * statistics.median(times), first, float(np.mean(iterations)), sim.workspace.solver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--elements", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print("Kynema: not timed here; python bench/kynema.py compares it (KYNEMA_BUILD) on the same models")
    print("driven cases: sim.step() per step with the prescribed rotation set from Python before each")
    heads = f"{'nodes':>5s} {'µs/step':>9s} {'µs/node-step':>12s} {'its/step':>8s} {'solver':>6s} {'first [s]':>9s}"
    print(f"{'case':28s} {heads}")
    for order in args.orders:
        for name, make in (("rotating beam", rotating_beam), ("three-blade rotor", rotor)):
            us, first, its, solver = timed(lambda make=make, order=order: make(order), args.steps, args.runs, True)
            nodes = (order + 1) * (3 if name == "three-blade rotor" else 1) + (1 if name == "three-blade rotor" else 0)
            label = f"{name}, p = {order}"
            print(f"{label:28s} {nodes:5d} {us:9.1f} {us / nodes:12.2f} {its:8.2f} {solver:>6s} {first:9.2f}")
    per_node = []
    for elements in args.elements:
        us, first, its, solver = timed(lambda elements=elements: (long_beam(elements),), args.steps, args.runs, False)
        nodes = 5 * elements + 1
        per_node.append(us / nodes)
        label = f"long beam, {elements} × p = 5"
        print(f"{label:28s} {nodes:5d} {us:9.1f} {us / nodes:12.2f} {its:8.2f} {solver:>6s} {first:9.2f}")
    if len(per_node) > 1:
        print(f"per node-step, largest over smallest beam: {per_node[-1] / per_node[0]:.2f}×")


if __name__ == "__main__":
    main()
