"""A ball bouncing on a hard floor, and a box that sticks on one incline and slides down another.

Hard (nonsmooth) contact against ground planes (docs/contact.md, "Hard contact against ground
planes"): ``add_ground_plane(law="hard", restitution=e, friction=μ)``.  No point goes through the
plane by more than 1e-12 m, impacts follow Newton's law (normal velocity after = −e × before) and
friction is exact Coulomb: a sticking box does not creep, a sliding one accelerates at exactly
g (sin a − μ cos a).

1. A ball (2 kg, r = 0.1 m) dropped from 0.5 m onto a hard floor with e = 0.8: the step in which
   it reaches the floor is split at the impact, located at t* = √(2 h₀/g) (late by η/v*, η = 1e-12 m
   the penetration the located sub-step aims at), so that Newton's law sees the velocity there; its
   apex after the bounce, z + v_z²/2g, is e² (h₀ + η) to 1e-12 m and the apex on the step grid is
   within its sampling (g h²/8) below it.
2. A box (3 kg) resting face down on a plane tilted by a, μ = 0.5: with a = 0.3 rad (tan a < μ)
   it stays put (less than 1e-9 m over 1 s); with a = 0.6 rad and μ = 0.3 it slides, its velocity
   after 1 s is g (sin a − μ cos a) × 1 s to 1e-6 relative.

Run:  python examples/hard_contact.py
"""

from __future__ import annotations

import math
import sys

import numpy as np

import kynemapy as kp
from kynemapy.run.impact_event import PENETRATION
from kynemapy.validation import contact as contact_case

G = 9.81
H = 1e-3  # s


def params() -> kp.StepParameters:
    return kp.StepParameters(h=H, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def bouncing_ball(e: float = 0.8, h0: float = 0.5) -> bool:
    r = 0.1
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, r + h0))
    b.add_mass(n, mass=2.0, inertia=(0.008, 0.008, 0.008))
    b.add_sphere(n, r)
    b.add_ground_plane(law="hard", restitution=e)
    sim = kp.Simulation(b.build(), params())
    events = sim.joint_stops.events
    gaps, reach = [], []
    t_hit = math.nan  # the first impact's located time [s]
    for _ in range(1000):
        sim.step()
        gap, vz = h0 + float(sim.state.q[0, 2]), float(sim.state.v[0, 2])
        gaps.append(gap)
        if math.isnan(t_hit) and events.cuts:
            t_hit = events.impact_time
        if not math.isnan(t_hit):
            reach.append(gap + vz * vz / (2.0 * G))  # the height it would reach: constant in free flight
    gap = np.array(gaps)
    v_star = math.sqrt(2.0 * G * h0)
    t_star = math.sqrt(2.0 * h0 / G)
    flight = np.array(reach[: int(2.0 * e * v_star / G / H) - 2])  # up to just before the next impact
    first = len(gaps) - len(reach)  # the row ending the impact step
    apex = float(gap[first : first + flight.size].max())
    exact = e * e * (h0 + PENETRATION)
    ok = abs(t_hit - t_star - PENETRATION / v_star) <= 1e-12
    ok = ok and bool(np.all(np.abs(flight - exact) <= 1e-12))
    ok = ok and exact - G * H * H / 8.0 - 1e-12 <= apex <= exact + 1e-12 and gap.min() >= -1e-12
    print(
        f"ball: impact located at {t_hit:.12f} s (t* = {t_star:.12f} s); apex z + v²/2g "
        f"{float(flight.max()):.12f} m after the bounce (e² h₀ = {e * e * h0:.12f} m), on the step grid "
        f"{apex:.9f} m; lowest {gap.min():.3g} m  {'ok' if ok else 'FAIL'}"
    )
    return ok


def box_on_incline(angle: float, mu: float) -> kp.Simulation:
    """The 3 kg box resting face down on a hard plane tilted by ``angle`` (the validation case's)."""
    return contact_case.box_on_incline(angle, mu, H)[0]


def sticking_box() -> bool:
    sim = box_on_incline(0.3, 0.5)
    sim.advance(1000)
    moved = float(np.linalg.norm(sim.state.q[0, :3]))
    c = sim.contact_impulses()
    ok = moved < 1e-9
    print(
        f"box on 0.3 rad, μ = 0.5: moved {moved:.3g} m in 1 s; {int(c.active.sum())} corners carry "
        f"Σ Λ_N / h = {c.normal_impulse.sum() / H:.6f} N (m g cos a = {3.0 * G * math.cos(0.3):.6f})  "
        f"{'ok' if ok else 'FAIL'}"
    )
    return ok


def sliding_box() -> bool:
    angle, mu = 0.6, 0.3
    sim = box_on_incline(angle, mu)
    sim.advance(1000)
    down = -np.array([math.cos(angle), 0.0, math.sin(angle)])
    a = G * (math.sin(angle) - mu * math.cos(angle))
    v = float(sim.state.v[0, :3] @ down)
    ok = abs(v / a - 1.0) <= 1e-6
    print(
        f"box on 0.6 rad, μ = 0.3: v(1 s) = {v:.12f} m/s, g (sin a − μ cos a) × 1 s = {a:.12f}  "
        f"{'ok' if ok else 'FAIL'}"
    )
    return ok


def main() -> int:
    results = [bouncing_ball(), sticking_box(), sliding_box()]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
