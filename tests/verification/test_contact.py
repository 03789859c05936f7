"""Compliant contact (docs/contact.md): shapes on bodies against ground planes, a spring-damper
normal law and regularized Coulomb friction inside the Newton loop, against closed forms.

* the iteration matrix with contact (box corners, a sphere, a capsule; linear and Hunt–Crossley
  laws; sliding, spinning, penetrating) against central differences of the residual;
* a ball resting on the ground: static penetration m g / k;
* a box on an incline: sticks for tan θ < μ (creeping at the regularization's closed-form
  speed), slides with a = g (sin θ − μ cos θ) otherwise;
* a ball thrown sliding without spin rolls from t = 2 v₀ / (7 μ g) on at v = 5/7 v₀;
* a ball rolling down an incline without slip: a = 5/7 g sin θ;
* a ball bouncing on a damped linear spring: the coefficient of restitution of the damped
  oscillator's half period.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from newton_differences import matrix_and_differences

import kynemapy as kp
from kynemapy.model.errors import ModelError

G = 9.81


def _params(h: float, exact: bool = True, **kw) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-10, rtol=1e-10, geometric_stiffness=exact, **kw)


def _rotation(axis: tuple[float, float, float], angle: float) -> np.ndarray:
    """Rotation matrix (3, 3) about ``axis`` by ``angle`` [rad] (Rodrigues)."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * kx + (1.0 - math.cos(angle)) * kx @ kx


# ------------------------------------------------------------------------- exact tangent
def tumbling_pair(with_planes: bool) -> kp.Model:
    """A box (corners) and a body with a sphere and a capsule, joined by a ball joint, thrown
    into a tilted plane (linear law, μ = 0.6; filtered to the box) and a second one (Hunt–Crossley
    e = 1.5, μ = 0.4; filtered to the sphere and capsule), a few mm deep in both."""
    b = kp.ModelBuilder(gravity=(0.3, -0.2, -G))
    a = b.add_node(position=(0.0, 0.0, 0.03), velocity=(0.8, 0.3, -1.0, 1.5, -2.0, 3.0))
    b.add_mass(a, mass=3.0, inertia=(0.02, 0.05, 0.06))
    b.add_box(a, (0.2, 0.1, 0.05), center=(0.01, 0.0, 0.03), axes=_rotation((1.0, 2.0, 0.5), 0.2), group=1)
    c = b.add_node(position=(0.35, 0.05, 0.06), velocity=(0.8, 0.3, -1.0, -1.0, 0.5, 2.0))
    b.add_mass(c, mass=1.0, inertia=(0.01, 0.01, 0.02))
    b.add_sphere(c, 0.07, center=(0.36, 0.06, 0.05), group=2)
    b.add_capsule(c, 0.03, (0.3, 0.1, 0.02), (0.45, 0.0, 0.0), group=2)
    b.add_ball_joint(a, c, (0.2, 0.03, 0.05))
    if with_planes:
        b.add_ground_plane(
            (0.05, 0.1, 1.0), -0.058, stiffness=3e4, damping=40.0, friction=0.6, slip_velocity=0.3, mask=1
        )
        b.add_ground_plane(
            (0.0, -0.1, 1.0), -0.024, stiffness=2e6, exponent=1.5, damping=5e3, damping_model="hunt_crossley",
            friction=0.4, slip_velocity=0.2, mask=2,
        )  # fmt: skip
    return b.build()


def test_iteration_matrix_with_contact_is_the_derivative_of_the_residual() -> None:
    """The whole matrix against central differences of the residual along the Newton update,
    and the contact's share (with minus without the planes, same state) on its own, two steps
    into the contact (4 of the 11 points pressed, slipping at 1.0-1.4 m/s against v_s = 0.2-0.3
    m/s).  The differences' own error is the central difference's ε² term: the share's largest
    error 1.3, 0.32, 0.081, 0.020 at ε = 2, 1, 0.5, 0.25e-6 (largest entry 4.0e5; measured), so
    ε = 2.5e-7: relative error 5e-8; the whole matrix 1.7e-9."""
    model = tumbling_pair(True)
    a1, fd1, state = matrix_and_differences(model, _params(0.001), steps=2, eps=2.5e-7)
    a0, fd0, _ = matrix_and_differences(tumbling_pair(False), _params(0.001), state, eps=2.5e-7)
    assert np.abs(a1 - fd1).max() < 1e-8 * np.abs(fd1).max()
    part, part_fd = a1 - a0, fd1 - fd0
    assert np.abs(part_fd).max() > 1e5  # the contact's share is large
    assert np.abs(part - part_fd).max() < 2e-7 * np.abs(part_fd).max()
