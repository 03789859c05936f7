"""Simulation.body_frame and Simulation.body_point against closed form: a free body translating
uniformly and spinning at a constant rate about a principal axis (the Lie-group step keeps
that motion exactly, so the match is to round-off)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    n = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k


# reference orientation: 0.7 rad about (1, 1, 0); the body spins about its own z axis
R0 = rotation(np.array([1.0, 1.0, 0.0]), 0.7)
Q0 = np.array([math.cos(0.35), *(math.sin(0.35) * np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0))])
X = np.array([1.0, -2.0, 0.5])
V = np.array([0.3, 0.1, -0.2])
RATE = 3.0
AXIS = R0[:, 2]  # body z in the world
S = np.array([0.2, -0.1, 0.4])  # a body point, body frame [m]


def spinning_body() -> kp.Simulation:
    b = kp.ModelBuilder()
    n = b.add_node(position=X, orientation=Q0, velocity=(*V, *(RATE * AXIS)))
    b.add_mass(n, mass=2.0, inertia=(0.3, 0.4, 0.5))  # z principal: a steady spin
    return kp.Simulation(b.build(), kp.StepParameters(h=0.01, atol=1e-12, rtol=1e-12))


def test_body_frame_and_point_of_a_steadily_spinning_body() -> None:
    sim = spinning_body()
    for i in range(1, 101):
        sim.step()
        t = 0.01 * i
        r = rotation(AXIS, RATE * t) @ R0
        origin, rot = sim.body_frame(0)
        np.testing.assert_allclose(origin, X + V * t, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rot, r, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sim.state.x[0, :3], origin, rtol=0, atol=1e-14)  # the state's world pose
        rho = r @ S
        w = RATE * AXIS
        pos, vel, acc = sim.body_point(0, S)
        np.testing.assert_allclose(pos, X + V * t + rho, rtol=0, atol=1e-12)
        np.testing.assert_allclose(vel, V + np.cross(w, rho), rtol=0, atol=1e-11)
        np.testing.assert_allclose(acc, np.cross(w, np.cross(w, rho)), rtol=0, atol=1e-10)
        # the same point given where it was in the world at the reference configuration
        pos_ref, vel_ref, acc_ref = sim.body_point(0, X + R0 @ S, frame="reference")
        np.testing.assert_allclose(pos_ref, pos, rtol=0, atol=1e-12)
        np.testing.assert_allclose(vel_ref, vel, rtol=0, atol=1e-12)
        np.testing.assert_allclose(acc_ref, acc, rtol=0, atol=1e-12)
    # several points at once: (k, 3) in, (k, 3) out
    pts = np.array([S, -S, np.zeros(3)])
    pos, vel, acc = sim.body_point(0, pts)
    assert pos.shape == vel.shape == acc.shape == (3, 3)
    np.testing.assert_allclose(pos[2], sim.body_frame(0)[0], atol=1e-15)
    np.testing.assert_allclose(vel[2], sim.state.v[0, :3], atol=1e-15)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: s.body_point(0, (1.0, 2.0)), r"body_point: point must be 3 finite numbers .* got shape \(2,\)"),
        (lambda s: s.body_point(0, np.zeros((2, 2, 3))), r"body_point: point .* got shape \(2, 2, 3\)"),
        (lambda s: s.body_point(0, (0, np.nan, 0)), "body_point: point must be 3 finite numbers"),
        (lambda s: s.body_point(0, "abc"), "body_point: point must be"),
        (lambda s: s.body_point(0, S, frame="world"), r"body_point: frame must be 'body' or 'reference', got 'world'"),
        (lambda s: s.body_point(3, S), r"body_point: unknown node id 3 \(the model has 1 nodes\)"),
        (lambda s: s.body_frame(-1), r"body_frame: unknown node id -1"),
        (lambda s: s.body_frame(1.0), r"body_frame: node must be a node id"),
    ],
)
def test_body_point_refuses_bad_arguments(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call(spinning_body())
