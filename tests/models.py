"""Small models built with kynemapy's public builder, shared by several test modules (unlike
``references`` and ``sparse_systems``, this helper uses the package: it builds inputs, it
computes no expected values)."""

from __future__ import annotations

import kynemapy as kp


def pendulum() -> kp.Model:
    """A 2 kg body on a spherical joint 1 m from the origin, started with a sideways and a spin
    velocity, swinging under gravity."""
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    bob = b.add_node(position=(1, 0, 0), velocity=(0, 0.5, 0, 0, 0, 0.5))
    b.add_mass(bob, mass=2.0, inertia=(0.1, 0.1, 0.1))
    b.add_spherical_joint(bob, point=(0, 0, 0))
    return b.build()
