"""Small models built with kynemapy's public builder, shared by several test modules (unlike
``references`` and ``sparse_systems``, this helper uses the package: it builds inputs, it
computes no expected values)."""

from __future__ import annotations

import numpy as np

import kynemapy as kp


def pendulum() -> kp.Model:
    """A 2 kg body on a spherical joint 1 m from the origin, started with a sideways and a spin
    velocity, swinging under gravity."""
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    bob = b.add_node(position=(1, 0, 0), velocity=(0, 0.5, 0, 0, 0, 0.5))
    b.add_mass(bob, mass=2.0, inertia=(0.1, 0.1, 0.1))
    b.add_spherical_joint(bob, point=(0, 0, 0))
    return b.build()


def ball_chain(n: int) -> kp.Model:
    """``n`` bodies (1 kg, 0.01 kg m²) 0.1 m apart along x, each hung by a ball joint from the one
    before (the first from the ground), under gravity."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    prev = kp.GROUND
    for i in range(n):
        node = b.add_node(position=(0.1 * (i + 1), 0.0, 0.0))
        b.add_mass(node, mass=1.0, inertia=(0.01, 0.01, 0.01))
        b.add_ball_joint(prev, node, point=(0.1 * i, 0.0, 0.0))
        prev = node
    return b.build()


def beam_with_a_hinge(order: int) -> kp.Model:
    """A 2 m cantilever beam of ``order`` (clamped at the origin, along x, under gravity) with a
    1 kg rod hung from its tip by a hinge about y: beams, a two-body joint and a Kynema
    constraint in one model."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
    c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
    beam = b.add_beam([(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=order, root_acceleration=(0,) * 6)
    b.add_fixed_bc(beam.nodes[0])
    rod = b.add_node(position=(2.0, 0.0, -0.5))
    b.add_mass(rod, mass=1.0, inertia=(1 / 12, 1 / 12, 2e-4))
    b.add_hinge_joint(beam.nodes[-1], rod, point=(2.0, 0.0, 0.0), axis=(0, 1, 0))
    return b.build()
