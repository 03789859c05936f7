"""Bad arguments and impossible models are refused with the argument or item named (issue 12)."""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
import kynemapy.io
from kynemapy.model.builder import ModelError

PARAMS = kp.StepParameters(h=0.01)


def one_body() -> kp.ModelBuilder:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(position=(1.0, 0.0, 0.0))
    b.add_mass(n, mass=2.0, inertia=(0.1, 0.2, 0.3))
    b.add_spherical_joint(n, point=(0.0, 0.0, 0.0))
    return b


def hinged_rod() -> tuple[kp.Simulation, int, int]:
    """A rod hanging from the ground by a hinge joint: (simulation, its node, the joint)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    rod = b.add_node(position=(0.0, 0.0, -0.5))
    b.add_mass(rod, mass=1.0, inertia=(0.1, 0.1, 0.01))
    hinge = b.add_hinge_joint(kp.GROUND, rod, point=(0, 0, 0), axis=(0, 1, 0))
    return kp.Simulation(b.build(), PARAMS), rod, hinge


def test_simulation_arguments_are_named() -> None:
    sim = kp.Simulation(one_body().build(), PARAMS)
    with pytest.raises(ValueError, match=r"advance: n_steps must be an integer >= 0, got -5"):
        sim.advance(-5)
    nc = sim.model.n_constraints
    with pytest.raises(IndexError, match=rf"multipliers: unknown constraint id 99 \(the model has {nc} constraints\)"):
        sim.multipliers(99)
    with pytest.raises(IndexError, match=r"multipliers: unknown constraint id -1"):
        sim.multipliers(-1)  # numpy would have answered with the last constraint's multipliers
    with pytest.raises(TypeError, match=r"multipliers: cid must be a constraint id"):
        sim.multipliers("joint")
    assert sim.multipliers(0).shape == (int(sim.model.constraint_n_rows[0]),)


@pytest.mark.parametrize("mass", ["heavy", None, [1.0, 2.0], True])
def test_add_mass_names_a_bad_mass(mass: object) -> None:
    b = kp.ModelBuilder()
    n = b.add_node()
    with pytest.raises(ModelError, match=r"mass 0: .*mass"):
        b.add_mass(n, mass=mass, inertia=(1.0, 1.0, 1.0))  # type: ignore[arg-type]


def test_add_mass_names_a_bad_inertia_or_matrix() -> None:
    b = kp.ModelBuilder()
    n = b.add_node()
    with pytest.raises(ModelError, match=r"mass 0: inertia must be .* got 'big'"):
        b.add_mass(n, mass=1.0, inertia="big")
    with pytest.raises(ModelError, match=r"mass 0: mass_matrix must be a 6×6 array of numbers"):
        b.add_mass(n, mass_matrix=[["a"] * 6] * 6)


def test_inertia_that_no_rigid_body_has_is_refused() -> None:
    b = kp.ModelBuilder()
    n = b.add_node()
    with pytest.raises(ModelError, match=r"mass 0: no rigid body has the principal moments .*I1 \+ I2 >= I3"):
        b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 5.0))
    m_star = np.diag([1.0, 1.0, 1.0, 5.0, 1.0, 1.0])
    with pytest.raises(ModelError, match=r"I1 \+ I2 >= I3"):
        b.add_mass(n, mass_matrix=m_star)
    assert b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 2.0)) == 0  # a thin disc: the limit itself is a body
    j = np.array([[2.0, 0.3, 0.0], [0.3, 1.5, 0.1], [0.0, 0.1, 1.0]])  # a full, valid tensor
    assert b.add_mass(n, mass=1.0, inertia=j) == 1


def test_a_load_on_a_node_with_nothing_attached_is_refused_by_name() -> None:
    b = one_body()
    lone = b.add_node(position=(5.0, 0.0, 0.0))  # no mass, spring or constraint: no unknowns
    sim = kp.Simulation(b.build(), PARAMS)
    with pytest.raises(ValueError, match=rf"load on node {lone}: the node has nothing attached"):
        sim.set_load(lone, force=(1.0, 0.0, 0.0))  # it used to be ignored without a word
    assert not np.any(sim.inputs.f)


def test_a_node_held_by_springs_only_is_refused_in_dynamics_by_name() -> None:
    b = one_body()
    c = b.add_node(position=(2.0, 0.0, 0.0))
    b.add_spring(0, c, stiffness=100.0, undeformed_length=1.0)
    model = b.build()
    with pytest.raises(ModelError, match=rf"node {c} has no mass and no constraint \(only springs\)"):
        kp.Simulation(model, PARAMS)


def test_a_simulation_names_a_model_that_is_not_one_or_has_no_unknowns() -> None:
    with pytest.raises(TypeError, match=r"model must be a kynemapy Model .*got NoneType"):
        kp.Simulation(None, PARAMS)  # type: ignore[arg-type]
    b = kp.ModelBuilder()
    b.add_node()
    b.add_node(position=(1.0, 0.0, 0.0))
    sim = kp.Simulation(b.build(), PARAMS)  # its initial state can be looked at (Kynema's model tests)
    for stepping in (sim.step, lambda: sim.advance(3), lambda: sim.run(n_steps=3)):
        with pytest.raises(ModelError, match=r"the model has no unknowns: none of its 2 node\(s\) has a mass"):
            stepping()  # it reported "the iteration produced NaN"
    assert sim.step_count == 0 and sim.time == 0.0


def test_inputs_name_a_bad_node_constraint_or_value() -> None:
    sim, rod, hinge = hinged_rod()
    with pytest.raises(ValueError, match=r"constraint 0 torque must be a finite number, got 'x'"):
        sim.set_torque(hinge, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"torque input: cid must be a constraint id \(int\), got 0.5"):
        sim.set_torque(0.5, 1.0)  # type: ignore[arg-type]
    with pytest.raises(IndexError, match=r"unknown node id 99"):
        sim.set_load(99, force=(1.0, 0.0, 0.0))  # was: "force and moment must be 3 numbers" with 9 of them
    with pytest.raises(TypeError, match=r"node must be a node id \(int\), got 0.0"):
        sim.set_load(0.0, force=(1.0, 0.0, 0.0))  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"load on node 0: the force \[N\] must be 3 finite numbers, got \(1, 0, 0, 0, 0, 0\)"
    ):
        sim.set_load(rod, force=(1, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match=r"the moment \[N m\] must be 3 finite numbers, got 'big'"):
        sim.set_load(rod, moment="big")  # type: ignore[arg-type]
    sim.set_load(rod, force=(1.0, 0.0, 0.0), moment=(0.0, 0.0, 2.0))
    np.testing.assert_array_equal(sim.inputs.f[rod, :6], [1.0, 0.0, 0.0, 0.0, 0.0, 2.0])


def test_numbers_written_as_text_or_booleans_are_refused_not_parsed() -> None:
    sim, rod, hinge = hinged_rod()
    for value in ("0.5", b"0.5", True, np.bool_(True)):
        with pytest.raises(ValueError, match=r"constraint 0 torque must be a finite number, got "):
            sim.set_torque(hinge, value)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"load on node 0: the force \[N\] must be 3 finite numbers, got \('1', 0, 0\)"
    ):
        sim.set_load(rod, force=("1", 0, 0))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"the moment \[N m\] must be 3 finite numbers, got \[True, False, False\]"):
        sim.set_load(rod, moment=[True, False, False])
    assert not sim.inputs.f.any() and sim.inputs.constraint_input[hinge, 0] == 0.0  # nothing was taken
    sim.set_torque(hinge, np.float32(0.25))  # numbers of every numeric type still are
    sim.set_load(rod, force=np.array([1, 2, 3], dtype=np.int32), moment=[0.5, 0, np.float64(1)])
    assert sim.inputs.constraint_input[hinge, 0] == 0.25
    np.testing.assert_array_equal(sim.inputs.f[rod, :6], [1.0, 2.0, 3.0, 0.5, 0.0, 1.0])
    b = kp.ModelBuilder()
    node = b.add_node()
    for value in ("1.0", np.bool_(True)):  # the builder's rule is the same one (np.True_ was taken as 1 kg)
        with pytest.raises(ModelError, match=r"mass must be a finite number > 0 kg, got "):
            b.add_mass(node, mass=value, inertia=(1.0, 1.0, 1.0))  # type: ignore[arg-type]
    b.add_mass(node, mass=np.float32(1.0), inertia=(1.0, 1.0, 1.0))
    bc = b.add_prescribed_bc(node)
    pinned = kp.Simulation(b.build(), PARAMS)
    with pytest.raises(ValueError, match=r"constraint 0: prescribed displacement must be 3 \+ 4 finite numbers"):
        pinned.set_prescribed_displacement(bc, ("0.1", 0, 0))  # type: ignore[arg-type]
    pinned.set_prescribed_displacement(bc, (0.1, 0, 0))
    np.testing.assert_array_equal(pinned.inputs.constraint_input[bc, :7], [0.1, 0, 0, 1, 0, 0, 0])


def test_the_functional_step_refuses_a_model_with_nothing_to_step() -> None:
    b = kp.ModelBuilder()
    b.add_node()
    model = b.build()
    state, inputs, params = kp.new_state(model), kp.new_inputs(model), kp.StepParameters(h=0.01)
    with pytest.raises(ModelError, match=r"the model has no unknowns: none of its 1 node\(s\) has a mass"):
        kp.step(model, state, inputs, kp.new_workspace(model, params.max_iter), params)  # it reported status 2 (NaN)
    assert state.step[0] == 0 and state.time[0] == 0.0


def test_numbers_and_paths_of_the_wrong_type_are_named() -> None:
    with pytest.raises(ValueError, match=r"time step h must be a finite number > 0 s, got True"):
        kp.StepParameters(h=True)  # was taken as h = 1 s
    with pytest.raises(ValueError, match=r"rho_inf must lie in \[0, 1\], got False"):
        kp.StepParameters(h=0.01, rho_inf=False)
    b = kp.ModelBuilder()
    a, c = b.add_node(), b.add_node(position=(1.0, 0.0, 0.0))
    with pytest.raises(ModelError, match=r"spring 0: stiffness must be a finite number >= 0 N/m, got 'k'"):
        b.add_spring(a, c, "k", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=r"spring 0: undeformed_length must be a finite number >= 0 m, got None"):
        b.add_spring(a, c, 1.0, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"read: path must be a file path \(str or os.PathLike\), got int 5"):
        kp.io.read(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"read: path must be a file path"):
        kp.Simulation.restart(5)  # type: ignore[arg-type]
    sim = kp.Simulation(one_body().build(), PARAMS)
    with pytest.raises(TypeError, match=r"run: output must be a file path \(str or os.PathLike\), got int 3"):
        sim.run(n_steps=2, output=3)  # type: ignore[arg-type]
    assert sim.step_count == 0


def test_outputs_and_angle_inputs_name_a_bad_constraint_or_value() -> None:
    sim, _, hinge = hinged_rod()
    for call in (sim.joint_output, sim.reaction):
        with pytest.raises(TypeError, match=r"cid must be a constraint id \(int\), got 0.5"):
            call(0.5)  # type: ignore[arg-type]  # was taken as constraint 0
        with pytest.raises(IndexError, match=r"unknown constraint id 1 \(the model has 1 constraints\)"):
            call(hinge + 1)
    c = kp.ModelBuilder()
    base, top = c.add_node(), c.add_node(position=(0.0, 0.0, 1.0))
    c.add_mass(top, mass=1.0, inertia=(0.1, 0.1, 0.1))
    c.add_fixed_bc(base)
    control = c.add_rotation_control(base, top, axis=(0.0, 0.0, 1.0))
    controlled = kp.Simulation(c.build(), PARAMS)
    with pytest.raises(ValueError, match=r"constraint 1 angle must be finite, got nan"):
        controlled.set_angle(control, float("nan"))  # was stored and stepped
    controlled.set_angle(control, 0.25)
    assert controlled.inputs.constraint_input[control, 0] == 0.25
