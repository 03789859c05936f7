"""Getting started: a pendulum on a hinge, stepped from Python, checked against its exact period.

A 1 m, 1 kg rod (radius 2 cm) hangs from the ground by a hinge at its top end and is released
at rest 60° from the vertical.  Its period is known in closed form (a physical pendulum):
``T = 4 √(I_p / (m g d)) K(sin(θ₀/2))`` with ``I_p = m L²/3`` about the pivot, ``d = L/2`` and
``K`` the complete elliptic integral of the first kind.  The script steps the model from a
Python loop for 4 s (h = 1 ms), reads the hinge angle after every step, measures the period
from the turning points and compares it with T; it also checks that the total energy stays
constant and that the hinge's reaction force at release is the closed-form one.

Run:  python examples/getting_started.py [--plot pendulum.png]

``--plot`` draws the hinge angle against time (needs matplotlib: ``pip install -e ".[plot]"``).
This file is the walk-through of ``docs/getting-started.md``.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import ellipk

import kynemapy as kp

L, M, RADIUS, G = 1.0, 1.0, 0.02, 9.81  # m, kg, m, m/s²
THETA0 = np.radians(60.0)  # initial angle from the downward vertical [rad]


def build_pendulum() -> tuple[kp.Model, int, int]:
    """The model, the rod's node id and the hinge's constraint id."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    # the node sits at the rod's centre of mass; the rod's axis is its body z axis, turned
    # by θ₀ about the world y axis (quaternion (w, x, y, z))
    c, s = np.cos(THETA0), np.sin(THETA0)
    rod = b.add_node(
        position=(-0.5 * L * s, 0.0, -0.5 * L * c),
        orientation=(np.cos(THETA0 / 2), 0.0, np.sin(THETA0 / 2), 0.0),
    )
    i_transverse = M * L**2 / 12  # kg m², about the centre of mass
    b.add_mass(rod, mass=M, inertia=(i_transverse, i_transverse, M * RADIUS**2 / 2))
    hinge = b.add_hinge_joint(kp.GROUND, rod, point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    return b.build(), rod, hinge


def exact_period() -> float:
    """Period of the physical pendulum released at rest from θ₀ [s]."""
    i_pivot = M * L**2 / 3
    return 4.0 * np.sqrt(i_pivot / (M * G * 0.5 * L)) * ellipk(np.sin(THETA0 / 2) ** 2)


def turning_times(t: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Times where the angular rate changes sign (linear interpolation between steps) [s]."""
    k = np.flatnonzero(np.sign(rate[:-1]) * np.sign(rate[1:]) < 0)
    return t[k] - rate[k] * (t[k + 1] - t[k]) / (rate[k + 1] - rate[k])


def swing(model: kp.Model, hinge: int, t_end: float = 4.0) -> tuple[kp.Simulation, np.ndarray, np.ndarray]:
    """Step the pendulum from a Python loop to ``t_end`` [s]; returns the simulation, the
    times [s] and the hinge's (angle [rad], rate [rad/s]) after every step, (n, 2)."""
    params = kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-8, rtol=1e-8, geometric_stiffness=True)
    sim = kp.Simulation(model, params)  # solves for consistent accelerations at t = 0
    times, outputs = [0.0], [(0.0, 0.0)]
    while sim.time < t_end - 1e-9:
        sim.step()  # raises kp.ConvergenceError if a step fails
        angle, rate, _ = sim.joint_output(hinge)  # rad (0 at release), rad/s, rad/s²
        times.append(sim.time)
        outputs.append((angle, rate))
    return sim, np.array(times), np.array(outputs)


def energy(sim: kp.Simulation, rod: int) -> float:
    """Kinetic + potential energy of the rod [J] (world-frame velocities)."""
    v = sim.state.v[rod]  # (u̇ [m/s], ω [rad/s])
    height = sim.state.x[rod, 2]  # world z of the centre of mass [m]
    i_cm = M * L**2 / 12  # about the centre of mass; the rod turns about world y
    return 0.5 * M * v[:3] @ v[:3] + 0.5 * i_cm * v[3:] @ v[3:] + M * G * height


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", metavar="PNG", help="draw the hinge angle against time into this file")
    args = ap.parse_args()

    model, rod, hinge = build_pendulum()

    # the hinge force at release (at rest): θ̈ = −m g d sin θ₀ / I_p, the centre of mass
    # accelerates along the tangent d θ̈ (−cos θ₀, 0, sin θ₀), the hinge supplies m (a − g)
    start = kp.Simulation(model, kp.StepParameters(h=1e-3, atol=1e-8, rtol=1e-8, geometric_stiffness=True))
    force, _ = start.reaction(hinge)  # N, on the rod, world frame
    theta_dd = -M * G * 0.5 * L * np.sin(THETA0) / (M * L**2 / 3)
    a_cm = 0.5 * L * theta_dd * np.array([-np.cos(THETA0), 0.0, np.sin(THETA0)])
    force_exact = M * (a_cm - np.array([0.0, 0.0, -G]))
    force_error = float(np.abs(force - force_exact).max())
    print(
        f"hinge force on the rod at release: {np.array2string(force, precision=4)} N "
        f"(closed form {np.array2string(force_exact, precision=4)} N)"
    )

    e0 = energy(start, rod)
    sim, t, out = swing(model, hinge)
    angle, rate = out[:, 0], out[:, 1]
    turns = turning_times(t, rate)
    period = 2.0 * np.mean(np.diff(turns))  # two turning points per period
    exact = exact_period()
    drift = abs(energy(sim, rod) - e0) / (M * G * 0.5 * L)
    print(f"period: {period:.6f} s measured, {exact:.6f} s exact; relative error {abs(period - exact) / exact:.1e}")
    print(f"energy drift over 4 s: {drift:.1e} of m g L/2")

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.plot(t, np.degrees(THETA0 + angle), label="kynemapy, h = 1 ms")
        for k in range(3):
            ax.axvline(k * exact, color="0.6", lw=0.8, ls="--", label="exact period" if k == 0 else None)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("angle from the vertical [°]")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 1.2), ncol=2, frameon=False)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")

    ok = abs(period - exact) / exact < 1e-4 and drift < 1e-4 and len(turns) >= 4 and force_error < 1e-6
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
