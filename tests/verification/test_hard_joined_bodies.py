"""The hard body law between bodies with joints (issue 28: "a gripper closes on a part"), against
closed forms: the contacts' response through the joints (kynemapy.run.body_coupled).

* A pendulum (2 kg bob, a sphere of 0.1 m at 1 m from its hinge) held at θ = 0.3 rad by a fixed
  wall (a box on a node with a fixed boundary condition: the bilateral constraints couple both
  sides of the contact): the wall's normal force balances gravity's moment about the hinge,
  ``N L cos θ = m g L sin θ``, so the contact impulse a step at rest is ``m g tan θ h``.  The
  bob stays where it is.  The impulse's error is the smooth step's drift along the arc, which
  the correction undoes along the contact normal: second order in h (measured −1.87e-5,
  −4.68e-6, −1.17e-6 relative at h = 2, 1, 0.5 ms).
* Newton's cradle of two pendulums (equal balls on hinges, 1 mm apart, e = 1): the first,
  released from 0.3 rad, hits the second at rest; equal masses and e = 1 exchange the
  velocities (the first stops, the second leaves at the first's speed v* = √(2 g L (cos θ_hit −
  cos θ₀)), θ_hit = −asin(1 mm / L) where the balls meet), and the second rises to the height
  the first fell from, ``L (1 − cos θ₀)``, less the 1 mm offset's share.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp

M, L, R, G = 2.0, 1.0, 0.1, 9.81


def pendulum_on_wall(theta: float, h: float) -> tuple[kp.Simulation, int]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    x, z = L * math.sin(theta), -L * math.cos(theta)
    bob = b.add_node(position=(x, 0.0, z))
    b.add_mass(bob, mass=M, inertia=(1e-3, 1e-3, 1e-3))
    b.add_sphere(bob, R)
    b.add_hinge_joint(kp.GROUND, bob, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    half = 0.05
    wall = b.add_node(position=(x - R - half, 0.0, z))  # its face touches the bob on its −x side
    b.add_mass(wall, mass=5.0, inertia=(0.1, 0.1, 0.1))
    b.add_box(wall, (half, 0.3, 0.3))
    b.add_fixed_bc(wall)
    b.set_body_contact(law="hard")
    return kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.9, max_iter=20)), bob


def test_a_pendulum_held_by_a_wall() -> None:
    theta = 0.3
    errors = []
    for h in (2e-3, 1e-3):
        sim, bob = pendulum_on_wall(theta, h)
        q0 = sim.state.q.copy()
        for _ in range(round(0.2 / h)):
            sim.step()
            c = sim.body_impulses()
            assert c["normal_impulse"].size == 1 and c["gap"][0] >= -1e-12
        assert np.abs(sim.state.q[bob] - q0[bob]).max() <= 1e-12
        np.testing.assert_allclose(c["normal"][0], (-1.0, 0.0, 0.0), atol=1e-12)  # from A (the bob) to the wall
        errors.append(c["normal_impulse"][0] / (M * G * math.tan(theta) * h) - 1.0)
    assert abs(errors[1]) <= 1e-5, errors
    assert 3.5 <= errors[0] / errors[1] <= 4.5, errors  # second order in h


@pytest.mark.parametrize("h", [1e-3, 1e-4])
def test_newtons_cradle_of_two_pendulums(h: float) -> None:
    theta0, gap0, m, r = 0.3, 1e-3, 1.0, 0.05
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    d = 2 * r + gap0
    first = b.add_node(
        position=(-L * math.sin(theta0), 0.0, -L * math.cos(theta0)),
        orientation=(math.cos(theta0 / 2), 0.0, -math.sin(theta0 / 2), 0.0),
    )
    second = b.add_node(position=(d, 0.0, -L))
    for n in (first, second):
        b.add_mass(n, mass=m, inertia=(1e-4, 1e-4, 1e-4))
        b.add_sphere(n, r)
    b.add_hinge_joint(kp.GROUND, first, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    b.add_hinge_joint(kp.GROUND, second, (d, 0.0, 0.0), (0.0, 1.0, 0.0))
    b.set_body_contact(law="hard", restitution=1.0)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.9, max_iter=20))
    z0 = float(np.asarray(sim.model.x0)[second, 2])
    after = None
    highest = -np.inf
    for _ in range(round(1.5 / h)):
        sim.step()
        if after is None and sim.body_impulses()["normal_impulse"].size:
            after = sim.state.v[[first, second], :3].copy()
        highest = max(highest, z0 + float(sim.state.q[second, 2]))
    assert after is not None
    v_star = math.sqrt(2.0 * G * L * (math.cos(math.asin(gap0 / L)) - math.cos(theta0)))
    assert np.linalg.norm(after[0]) <= 1e-5 * v_star, after  # the first ball stops
    assert abs(np.linalg.norm(after[1]) / v_star - 1.0) <= 1e-4, (after, v_star)  # measured 5e-6
    rise = highest + L
    assert abs(rise / (L * (1.0 - math.cos(theta0))) - 1.0) <= 1e-4, rise  # measured −1.1e-5
