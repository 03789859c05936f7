"""Newton's cradle: five steel balls in a row, the first swung into the others.

Hard (nonsmooth) contact between bodies (docs/contact.md, "Hard contact between bodies"):
``set_body_contact(law="hard", restitution=1.0)``.  The balls hang 1 mm apart (free balls, no
gravity, as the row of a cradle at the bottom of its swing); the first arrives at 1 m/s.  Each
impact is Newton's law between two neighbours (e = 1: they swap their velocities), so the
momentum passes down the row in four impacts and the last ball leaves at 1 m/s while the others
stop.  Checked: the impacts come in that order, the velocities at the end (1e-12 m/s), momentum
at every step (1e-12) and no energy gained at any step.

Run:  python examples/newtons_cradle.py
"""

from __future__ import annotations

import sys

import numpy as np

import kynemapy as kp

N, R, GAP = 5, 0.025, 1e-3  # balls, radius [m], gap between neighbours [m]
MASS = 7850.0 * 4.0 / 3.0 * np.pi * R**3  # kg, steel
INERTIA = 0.4 * MASS * R**2  # kg m²
V0 = 1.0  # m/s


def cradle() -> kp.Simulation:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for i in range(N):
        node = b.add_node(position=(i * (2 * R + GAP), 0.0, 0.0), velocity=(V0 if i == 0 else 0.0, 0, 0, 0, 0, 0))
        b.add_mass(node, mass=MASS, inertia=(INERTIA, INERTIA, INERTIA))
        b.add_sphere(node, R)
    b.set_body_contact(law="hard", restitution=1.0)
    return kp.Simulation(b.build(), kp.StepParameters(h=1e-4, rho_inf=0.9))


def main() -> int:
    sim = cradle()
    impacts = []
    ok = True
    energy0 = 0.5 * MASS * V0**2
    for _ in range(1000):
        sim.step()
        c = sim.body_impulses()
        for a, b, lam in zip(c["shape_a"], c["shape_b"], c["normal_impulse"], strict=True):
            if lam > 0.0:
                impacts.append((int(a), int(b)))
                print(f"t = {float(sim.state.time[0]) * 1e3:6.2f} ms  ball {a} hits ball {b}: impulse {lam:.6f} N s")
        v = sim.state.v[:, 0]
        ok &= abs(MASS * float(np.sum(v)) - MASS * V0) <= 1e-12
        ok &= 0.5 * MASS * float(np.sum(v**2)) <= energy0 + 1e-12
    v = sim.state.v[:, 0]
    print("velocities at the end [m/s]:", np.array2string(v, precision=12))
    ok &= impacts == [(i, i + 1) for i in range(N - 1)]
    ok &= bool(np.allclose(v, [0.0] * (N - 1) + [V0], rtol=0.0, atol=1e-12))
    print("checks:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
