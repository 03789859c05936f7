"""Kynema's joints at system level, against closed-form motions.

* revolute joint driven by its torque input: a body spun up from rest about a fixed
  axis has ω̇ = −τ/I (Kynema's brake sign), ω = −τt/I, angle −τt²/(2I); generalized-α
  integrates constant acceleration exactly, so the match is to Newton tolerance;
* rotation control: a body welded to the ground with a commanded angle θ(t) about an
  axis has rotation exp(θ(t) axis) at every step;
* prescribed BC: the node follows the prescribed displacement and rotation;
* add_spherical_joint builds the same heavy top as Kynema's explicit pattern.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp

TIGHT = {"atol": 1e-10, "rtol": 1e-10}


def quat_about(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def same_rotation(q1: np.ndarray, q2: np.ndarray) -> float:
    """Distance between two unit quaternions modulo sign."""
    return float(min(np.abs(q1 - q2).max(), np.abs(q1 + q2).max()))


@pytest.mark.parametrize("rho_inf", [0.0, 0.9, 1.0])
def test_revolute_joint_torque_spins_the_body_up_as_I_omega_dot_equals_minus_tau(rho_inf: float) -> None:
    inertia = np.array([1.0, 2.0, 3.0])
    tau = 2.0
    b = kp.ModelBuilder()
    ground = b.add_node(position=(0, 0, 0))
    body = b.add_node(position=(0, 0, 0))
    b.add_mass(body, mass=5.0, inertia=inertia)
    b.add_fixed_bc(ground)
    hinge = b.add_revolute_joint(ground, body, axis=(0, 0, 1), brake_torque=tau)
    h, n = 0.01, 200
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=rho_inf, **TIGHT))
    alpha = -tau / inertia[2]
    np.testing.assert_allclose(sim.state.vd[body], [0, 0, 0, 0, 0, alpha], atol=1e-12)
    for i in range(1, n + 1):
        sim.step()
        t = i * h
        theta = 0.5 * alpha * t * t
        azimuth, speed, accel = sim.joint_output(hinge)
        assert abs(speed - alpha * t) < 1e-9
        assert abs(accel - alpha) < 1e-9
        assert abs(azimuth - theta) < 1e-9
    assert same_rotation(sim.state.q[body, 3:], quat_about((0, 0, 1), 0.5 * alpha * (n * h) ** 2)) < 1e-9
    np.testing.assert_allclose(sim.state.q[body, :3], 0.0, atol=1e-12)
    # the joint's reaction moment holds the body on its axis: no motion about x or y
    np.testing.assert_allclose(sim.state.v[body, 3:5], 0.0, atol=1e-9)


def test_rotation_control_follows_the_commanded_angle() -> None:
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    ground = b.add_node(position=(0, 0, 0))
    body = b.add_node(position=(0.5, 0, 0))
    b.add_mass(body, mass=2.0, inertia=(0.1, 0.2, 0.3))
    b.add_fixed_bc(ground)
    control = b.add_rotation_control(ground, body, axis=axis, angle=0.0)
    h = 0.005
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.5, **TIGHT))
    for i in range(1, 201):
        theta = 0.8 * np.sin(2.0 * i * h)
        sim.set_angle(control, theta)
        sim.step()
        assert same_rotation(sim.state.q[body, 3:], quat_about(axis, theta)) < 1e-10
        np.testing.assert_allclose(sim.state.q[body, :3], 0.0, atol=1e-10)


def test_prescribed_bc_moves_the_node_as_prescribed() -> None:
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    node = b.add_node(position=(1, 2, 3))
    b.add_mass(node, mass=3.0, inertia=(1.0, 1.0, 1.0))
    bc = b.add_prescribed_bc(node)
    h = 0.01
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.0, **TIGHT))
    for i in range(1, 101):
        t = i * h
        u = np.array([np.sin(t), t * t, -t])
        r = quat_about((0, 1, 0), 0.3 * t)
        sim.set_prescribed_displacement(bc, u, r)
        sim.step()
        np.testing.assert_allclose(sim.state.q[node, :3], u, atol=1e-10)
        assert same_rotation(sim.state.q[node, 3:], r) < 1e-10
    np.testing.assert_allclose(sim.state.x[node, :3], np.array([1, 2, 3]) + u, atol=1e-10)


def test_spherical_joint_builder_gives_kynemas_heavy_top() -> None:
    """add_spherical_joint (fixed 3-DOF pin) reproduces R1 (Kynema pins with a prescribed 3-DOF BC)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(
        position=(0, 1, 0),
        velocity=(4.61538, 0, 0, 0, 150, -4.61538),
        acceleration=(0, -21.3017325444, -30.9608307692308, 661.3461692307692, 0, 0),
    )
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    joint = b.add_spherical_joint(top, point=(0, 0, 0))
    model = b.build()
    assert model.n_dofs == 15 and model.node_dofs[joint.pin] == 3
    sim = kp.Simulation(model, kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10))
    sim.advance(400)
    expected = [
        -0.42217802273894345,
        -0.09458263530050703,
        -0.04455460488952848,
        -0.17919607435565366,
        0.21677896640311572,
        -0.9594776960853596,
        -0.017268392381761217,
    ]
    np.testing.assert_allclose(sim.state.q[top], expected, rtol=0, atol=1e-10)
    # the massless pin is in equilibrium: the joint's and the BC's multipliers cancel
    lam_joint, lam_bc = sim.multipliers(joint.joint), sim.multipliers(joint.bc)
    assert np.abs(lam_joint).max() > 1.0
    np.testing.assert_allclose(lam_joint + lam_bc, 0.0, atol=1e-9 * np.abs(lam_joint).max())
