"""Kynema's heavy top: a spinning top on a spherical joint under gravity.

A 15 kg top (centre of mass 1 m from the pivot) spins at 150 rad/s; it is
modelled Kynema's way: a rigid body node at the centre of mass, a 6→3 rigid
joint to a position-only pin node, and the pin held by a prescribed (zero)
displacement.  400 steps of h = 2 ms, ρ∞ = 0.9, then the displacement and
rotation of the top are compared with Kynema-FMB's regression numbers.

Run:  python examples/heavy_top.py
"""

from __future__ import annotations

import time

import numpy as np

import kynemapy as kp

#: Kynema-FMB HeavyTopTest.FinalState: q of the top after 400 steps (tolerance 1e-10)
KYNEMA_Q400 = np.array(
    [
        -0.42217802273894345,
        -0.09458263530050703,
        -0.04455460488952848,
        -0.17919607435565366,
        0.21677896640311572,
        -0.9594776960853596,
        -0.017268392381761217,
    ]
)


def build_heavy_top(give_accelerations: bool = True) -> tuple[kp.Model, int]:
    """The heavy top model; without ``give_accelerations`` kynemapy computes consistent ones."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    acceleration = (0, -21.3017325444, -30.9608307692308, 661.3461692307692, 0, 0) if give_accelerations else None
    top = b.add_node(
        position=(0, 1, 0),
        orientation=(1, 0, 0, 0),
        velocity=(4.61538, 0, 0, 0, 150, -4.61538),  # (u̇ [m/s], ω [rad/s]) inertial
        acceleration=acceleration,
    )
    pin = b.add_node(position=(0, 0, 0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))  # kg, kg m² about the CM
    b.add_rigid_joint_6dof_to_3dof(top, pin)
    b.add_prescribed_bc_3dof(pin)
    return b.build(), top


def main() -> int:
    start = time.perf_counter()
    model, top = build_heavy_top()
    for exact in (False, True):
        params = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, atol=1e-5, rtol=1e-3, geometric_stiffness=exact)
        sim = kp.Simulation(model, params)
        iterations = []
        for _ in range(400):
            info = sim.step()  # StepInfo(converged, iterations, errors)
            iterations.append(info.iterations)
        q = sim.state.q[top]  # (7,) displacement u [m] and rotation quaternion (w, x, y, z)
        err = float(np.abs(q - KYNEMA_Q400).max())
        mode = "exact Newton (K^Φ)  " if exact else "Kynema-compatible   "
        print(
            f"{mode} t = {sim.time:.3f} s  mean Newton iterations/step = {np.mean(iterations):.3f}  "
            f"max |q − Kynema| = {err:.2e}"
        )
        if not exact:
            print("  q(top) =", np.array2string(q, precision=12))
            if err > 1e-10:
                print("  MISMATCH with Kynema-FMB (tolerance 1e-10)")
                return 1
    print(f"total wall time {time.perf_counter() - start:.2f} s (including compilation or cache load)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
