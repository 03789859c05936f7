"""Compliant contact: a ball thrown sliding along the ground starts to roll, a box dropped
tumbling onto an incline comes to rest on it (docs/contact.md).

* The ball (r = 0.1 m, solid) leaves the hand at v₀ = 3 m/s without spin onto ground with
  μ = 0.3: friction slows it and spins it up until it rolls, at t* = 2 v₀ / (7 μ g) with
  v = 5/7 v₀ (closed form); printed against the simulation.
* The box (0.3 × 0.2 × 0.1 m, 2 kg) is dropped from 0.3 m, turned, onto a 15° incline with
  μ = 0.6 > tan 15°: it bounces, tumbles and sticks; at rest its contact forces carry its weight
  (normal forces sum to m g cos θ, friction to m g sin θ) and it creeps at the friction
  regularization's closed-form speed v_s tan θ / √(μ² − tan² θ).

Run:  python examples/contact_ball_and_box.py  (exit status 1 when a check fails)
"""

from __future__ import annotations

import math

import numpy as np

import kynemapy as kp

G = 9.81


def rotation(axis: tuple[float, float, float], angle: float) -> np.ndarray:
    """Rotation matrix about ``axis`` by ``angle`` [rad]."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * kx + (1.0 - math.cos(angle)) * kx @ kx


def quaternion(m: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z) of a rotation matrix (its trace is > −1 here)."""
    w = math.sqrt(max(1.0 + np.trace(m), 0.0)) / 2.0
    return (w, (m[2, 1] - m[1, 2]) / (4 * w), (m[0, 2] - m[2, 0]) / (4 * w), (m[1, 0] - m[0, 1]) / (4 * w))


def sliding_ball(v0: float = 3.0, mu: float = 0.3, h: float = 1e-3) -> bool:
    m, r, k = 1.0, 0.1, 1e6
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    ball = b.add_node(position=(0.0, 0.0, r - m * G / k), velocity=(v0, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(ball, mass=m, inertia=(0.4 * m * r * r,) * 3)
    b.add_sphere(ball, r)
    b.add_ground_plane(stiffness=k, damping=2.0 * math.sqrt(k * m), friction=mu, slip_velocity=1e-3)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.9, atol=1e-10, rtol=1e-10))
    t_roll = None
    for i in range(1, 1001):
        sim.step()
        slip = sim.state.v[0, 0] - sim.state.v[0, 4] * r
        if t_roll is None and slip < 1e-2:
            t_roll = i * h
    t_star = 2.0 * v0 / (7.0 * mu * G)
    v = float(sim.state.v[0, 0])
    print("ball thrown sliding without spin (v0 = 3 m/s, mu = 0.3)")
    print(f"  rolls from t = {t_roll:.4f} s (slip < 1 cm/s; closed form {(v0 - 1e-2) / (3.5 * mu * G):.4f} s,")
    print(f"  slip 0 at t* = 2 v0/(7 mu g) = {t_star:.4f} s)")
    print(f"  speed at 1 s {v:.9f} m/s, 5/7 v0 = {5 / 7 * v0:.9f} m/s")
    ok = abs(v - 5 / 7 * v0) < 1e-6 * v0 and t_roll is not None and abs(t_roll - (v0 - 1e-2) / (3.5 * mu * G)) < h
    print("  ok" if ok else "  FAIL")
    return ok


def tumbling_box(theta_deg: float = 15.0, mu: float = 0.6, h: float = 1e-3) -> bool:
    theta = math.radians(theta_deg)
    # v_s = 1 cm/s: at a corner's impact the friction's slope μ f_n / v_s is so steep that Newton
    # cycles across the stick region unless the step is small (docs/contact.md): the adaptive run
    # halves the impact steps (16 rejected attempts, smallest step 31 µs)
    m, k, vs = 2.0, 1e7, 1e-2
    half = np.array([0.15, 0.1, 0.05])
    inertia = (
        m / 3.0 * np.array([half[1] ** 2 + half[2] ** 2, half[0] ** 2 + half[2] ** 2, half[0] ** 2 + half[1] ** 2])
    )
    turn = rotation((1.0, 2.0, 0.5), 0.7)
    b = kp.ModelBuilder(gravity=(G * math.sin(theta), 0.0, -G * math.cos(theta)))  # the incline's frame
    box = b.add_node(position=(0.0, 0.0, 0.3), orientation=quaternion(turn), velocity=(0.5, 0.0, 0.0, 0.0, 2.0, 0.0))
    b.add_mass(box, mass=m, inertia=tuple(inertia))
    b.add_box(box, tuple(half), axes=turn)
    # Hunt–Crossley (Hertz exponent 1.5, damping 3/2 α k with α = 2 s/m): its damping force
    # c δ^1.5 δ̇ starts at zero when a corner touches, where a linear damper's c δ̇ would jump to
    # c v and leave the implicit step without a solution at the touch
    b.add_ground_plane(
        stiffness=k, exponent=1.5, damping=1.5 * 2.0 * k, damping_model="hunt_crossley", friction=mu, slip_velocity=vs
    )
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.9, atol=1e-10, rtol=1e-10))
    info = sim.run(t_end=3.0, adaptive=True)
    contacts = sim.contacts()
    creep = vs * math.tan(theta) / math.sqrt(mu * mu - math.tan(theta) ** 2)
    speed = float(np.linalg.norm(sim.state.v[0, :3]))
    normal = float(contacts.normal_force.sum())
    friction = contacts.friction_force.sum(axis=0)
    print(f"box dropped tumbling onto a {theta_deg:g} deg incline (mu = {mu}): after 3 s")
    print(
        f"  {int(contacts.active.sum())} corners pressed; {info.rejected} step attempts rejected, "
        f"smallest step {info.min_step:.3g} s"
    )
    print(f"  sum of normal forces {normal:.9f} N, m g cos(theta) = {m * G * math.cos(theta):.9f} N")
    print(f"  friction along the slope {friction[0]:.9f} N, -m g sin(theta) = {-m * G * math.sin(theta):.9f} N")
    print(f"  creep speed {speed:.3e} m/s, closed form v_s tan/sqrt(mu^2 - tan^2) = {creep:.3e} m/s")
    ok = (
        abs(normal - m * G * math.cos(theta)) < 1e-6 * m * G
        and abs(friction[0] + m * G * math.sin(theta)) < 1e-6 * m * G
        and abs(speed - creep) < 1e-3 * creep
    )
    print("  ok" if ok else "  FAIL")
    return ok


def main() -> int:
    ok = sliding_ball()
    ok = tumbling_box() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
