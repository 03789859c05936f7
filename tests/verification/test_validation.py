"""Bad input is caught where it is given, with a message that names the item and the value."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp


def one_node_builder() -> tuple[kp.ModelBuilder, int]:
    b = kp.ModelBuilder()
    return b, b.add_node(position=(0, 0, 0))


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda b, n: b.add_mass(n, mass=0.0, inertia=(1, 1, 1)), ["mass 0", "> 0"]),
        (lambda b, n: b.add_mass(n, mass=-2.0, inertia=(1, 1, 1)), ["mass 0", "-2.0"]),
        (lambda b, n: b.add_mass(n, mass=math.nan, inertia=(1, 1, 1)), ["mass 0", "nan"]),
        (lambda b, n: b.add_mass(n, mass=1.0, inertia=(1, -1, 1)), ["mass 0", "positive definite"]),
        (lambda b, n: b.add_mass(n, mass=1.0, inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), ["mass 0", "symmetric"]),
        (lambda b, n: b.add_mass(n, mass=1.0), ["mass 0", "inertia"]),
        (lambda b, n: b.add_mass(7, mass=1.0, inertia=(1, 1, 1)), ["mass 0", "unknown node id 7"]),
        (lambda b, n: b.add_node(position=(0, math.inf, 0)), ["node 1 position", "finite"]),
        (lambda b, n: b.add_node(orientation=(1, 1, 0, 0)), ["node 1 orientation", "unit length"]),
        (lambda b, n: b.add_node(velocity=(1, 2, 3)), ["node 1 velocity", "6 numbers"]),
        (lambda b, n: b.add_spring(n, n, 10.0, 1.0), ["spring 0", "itself"]),
        (lambda b, n: b.add_spring(n, 3, 10.0, 1.0), ["spring 0", "unknown node id 3"]),
        (lambda b, n: b.add_spring(n, b.add_node(), -1.0, 1.0), ["spring 0", "stiffness"]),
        (lambda b, n: b.add_rigid_joint(n, n), ["constraint 0", "rigid_joint", "itself"]),
        (lambda b, n: b.add_revolute_joint(n, b.add_node()), ["constraint 0", "revolute_joint", "axis"]),
        (lambda b, n: b.add_rotation_control(n, b.add_node(), axis=(0, 0, 0)), ["constraint 0", "axis"]),
        (lambda b, n: b.add_fixed_bc("a"), ["constraint 0", "integer"]),
    ],
)
def test_builder_rejects_bad_items_with_a_message_naming_them(call, words) -> None:
    b, n = one_node_builder()
    with pytest.raises(kp.ModelError) as err:
        call(b, n)
    for word in words:
        assert word in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"h": 0.0}, "h"),
        ({"h": -1e-3}, "h"),
        ({"h": math.nan}, "h"),
        ({"h": 1e-3, "rho_inf": 1.5}, "rho_inf"),
        ({"h": 1e-3, "max_iter": 0}, "max_iter"),
        ({"h": 1e-3, "atol": 0.0}, "atol"),
        ({"h": 1e-3, "rtol": -1.0}, "rtol"),
    ],
)
def test_step_parameters_reject_bad_values(kwargs, word) -> None:
    with pytest.raises(ValueError, match=word):
        kp.StepParameters(**kwargs)


def test_empty_model_and_singular_initial_problem_are_reported() -> None:
    with pytest.raises(kp.ModelError, match="no nodes"):
        kp.ModelBuilder().build()
    b = kp.ModelBuilder()
    a = b.add_node(position=(0, 0, 0))
    c = b.add_node(position=(1, 0, 0))
    b.add_spring(a, c, 10.0, 1.0)  # two massless, unconstrained nodes: no dynamics to solve
    with pytest.raises(kp.ModelError, match=r"node 0 has no mass and no constraint .* singular"):
        kp.Simulation(b.build(), kp.StepParameters(h=1e-3))


def test_inputs_are_checked_by_the_simulation_setters() -> None:
    b = kp.ModelBuilder()
    n = b.add_node()
    b.add_mass(n, mass=1.0, inertia=(1, 1, 1))
    bc = b.add_fixed_bc(n)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3))
    with pytest.raises(ValueError, match="finite"):
        sim.set_load(n, force=(np.nan, 0, 0))
    with pytest.raises(IndexError, match="unknown node id 4"):
        sim.set_load(4, force=(1, 0, 0))
    with pytest.raises(ValueError, match="fixed_bc"):
        sim.set_torque(bc, 1.0)
    with pytest.raises(IndexError, match="unknown constraint id 9"):
        sim.set_angle(9, 1.0)


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda b, n, m: (b.add_fixed_bc(n), b.add_fixed_bc(n)), ["constraint 0 (fixed_bc, node 0)", "constraint 1"]),
        (
            lambda b, n, m: (b.add_fixed_bc(n), b.add_rigid_joint(n, m), b.add_prescribed_bc_3dof(m)),
            ["constraint 1 (rigid_joint, nodes 0 → 1)", "constraint 2 (prescribed_bc_3dof, node 1)"],
        ),
        (
            lambda b, n, m: (b.add_rigid_joint(n, m), b.add_rigid_joint_6dof_to_3dof(n, m)),
            ["constraint 0 (rigid_joint", "constraint 1 (rigid_joint_6dof_to_3dof"],
        ),
    ],
)
def test_redundant_constraints_are_named_before_the_first_step(make, names) -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(0, 0, 0))
    m = b.add_node(position=(1, 0, 0))
    b.add_mass(n, mass=1.0, inertia=(1, 1, 1))
    b.add_mass(m, mass=1.0, inertia=(1, 1, 1))
    make(b, n, m)
    with pytest.raises(kp.ModelError, match="redundant") as err:
        kp.Simulation(b.build(), kp.StepParameters(h=1e-3))
    for name in names:
        assert name in str(err.value), str(err.value)
