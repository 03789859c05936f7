"""One joint family: every ``add_*`` returns an id, one sign rule for inputs, Kynema's names as
aliases (a DeprecationWarning where a documented name changed meaning), ``kp.step`` a function.

The sign rule (docs/joints.md): a positive input acts on body b (the target) positively about
or along the joint axis, relative to body a.  Kynema's revolute joint's input is a brake
torque, the opposite (``set_brake_torque``): a hinge driven by +τ and a revolute joint braked
by −τ spin the same body up identically, ω̇ = τ / I.
"""

from __future__ import annotations

import importlib.util
import pickle
import warnings

import numpy as np
import pytest

import kynemapy as kp

TIGHT = {"atol": 1e-10, "rtol": 1e-10}
INERTIA_Z = 3.0


def spin_up(kind: str, tau: float = 0.0) -> tuple[kp.Simulation, int]:
    """A body spun about z by a hinge's torque ``tau`` or braked by a revolute joint's ``−tau``
    (given at build, so the accelerations at t = 0 include it)."""
    b = kp.ModelBuilder()
    ground = b.add_node()
    body = b.add_node()
    b.add_mass(body, mass=5.0, inertia=(1.0, 2.0, INERTIA_Z))
    if kind == "hinge":
        c = b.add_hinge_joint(kp.GROUND, body, point=(0, 0, 0), axis=(0, 0, 1), torque=tau)
    else:
        b.add_fixed_bc(ground)
        c = b.add_revolute_joint(ground, body, axis=(0, 0, 1), brake_torque=-tau)
    return kp.Simulation(b.build(), kp.StepParameters(h=0.01, rho_inf=0.5, **TIGHT)), c


def test_one_sign_rule_hinge_torque_is_minus_the_kynema_brake_torque() -> None:
    tau = 1.5
    hinge, h = spin_up("hinge", tau)
    revolute, r = spin_up("revolute", tau)
    for i in range(1, 101):
        hinge.step()
        revolute.step()
        t = 0.01 * i
        for sim, c in ((hinge, h), (revolute, r)):
            angle, rate, accel = sim.joint_output(c)
            assert abs(accel - tau / INERTIA_Z) < 1e-9
            assert abs(rate - tau / INERTIA_Z * t) < 1e-9
            assert abs(angle - 0.5 * tau / INERTIA_Z * t * t) < 1e-9
    np.testing.assert_allclose(hinge.state.q[1], revolute.state.q[1], atol=1e-9)
    # the setters follow the same rule: +τ on the hinge = −τ braking the revolute joint
    hinge.set_torque(h, -tau)
    revolute.set_brake_torque(r, tau)
    for _ in range(20):
        hinge.step()
        revolute.step()
    np.testing.assert_allclose(hinge.joint_output(h), revolute.joint_output(r), atol=1e-9)
    assert hinge.joint_output(h)[2] < 0.0


def test_kynema_names_that_changed_warn_and_keep_their_meaning() -> None:
    sim, r = spin_up("revolute")
    with pytest.warns(DeprecationWarning, match="set_torque on constraint 1, a Kynema revolute joint"):
        sim.set_torque(r, 2.0)
    assert sim.inputs.constraint_input[r, 0] == 2.0  # Kynema's brake torque, as before
    with pytest.warns(DeprecationWarning, match="revolute_output is deprecated"):
        out = sim.revolute_output(r)
    np.testing.assert_array_equal(out, sim.joint_output(r))
    with pytest.raises(ValueError, match="hinge_joint, which has no brake torque input"):
        spin_up("hinge")[0].set_brake_torque(0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spin_up("hinge")[0].set_torque(0, 1.0)  # the hinge's torque: no warning

    def revolute(**kw):
        b = kp.ModelBuilder()
        n0, n1 = b.add_node(), b.add_node()
        b.add_revolute_joint(n0, n1, axis=(0, 0, 1), **kw)
        return b.build()

    with pytest.warns(DeprecationWarning, match=r"add_revolute_joint\(torque=...\) is Kynema's brake torque"):
        old = revolute(torque=0.7)
    np.testing.assert_array_equal(old.initial_constraint_input, revolute(brake_torque=0.7).initial_constraint_input)


def test_spherical_joint_returns_an_id_and_the_old_tuple_use_warns() -> None:
    b = kp.ModelBuilder()
    body = b.add_node(position=(0, 1, 0))
    b.add_mass(body, mass=1.0, inertia=(1, 1, 1))
    j = b.add_spherical_joint(body, point=(0, 0, 0))
    assert isinstance(j, int) and j == 0 == j.joint
    assert (j.pin, j.bc) == (1, 1)
    assert repr(j) == "SphericalJoint(pin=1, joint=0, bc=1)"
    with pytest.warns(DeprecationWarning, match=r"unpacking or indexing it as the tuple \(pin, joint, bc\)"):
        pin, joint, bc = j
    assert (pin, joint, bc) == (1, 0, 1)
    with pytest.warns(DeprecationWarning):
        assert j[0] == 1
    copy = pickle.loads(pickle.dumps(j))
    assert copy == 0 and (copy.pin, copy.joint, copy.bc) == (1, 0, 1)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01))
    assert sim.multipliers(j).shape == (3,)  # usable as the constraint id it is


def test_every_add_returns_an_integer_id() -> None:
    b = kp.ModelBuilder()
    n = [b.add_node(position=(i, 0, 0)) for i in range(4)]
    assert n == [0, 1, 2, 3]
    ids = [
        b.add_mass(n[1], mass=1.0, inertia=(1, 1, 1)),
        b.add_spring(n[1], n[2], 1.0, 1.0),
        b.add_fixed_bc(n[0]),
        b.add_fixed_bc_3dof(n[0]),
        b.add_prescribed_bc(n[0]),
        b.add_prescribed_bc_3dof(n[0]),
        b.add_rigid_joint(n[0], n[1]),
        b.add_rigid_joint_6dof_to_3dof(n[0], n[1]),
        b.add_revolute_joint(n[0], n[1], axis=(0, 0, 1)),
        b.add_rotation_control(n[0], n[1], axis=(0, 0, 1)),
        b.add_spherical_joint(n[1], point=(0, 0, 0)),
        b.add_ball_joint(n[1], n[2], (1, 0, 0)),
        b.add_hinge_joint(n[1], n[2], (1, 0, 0), (0, 0, 1)),
        b.add_slider_joint(n[1], n[2], (1, 0, 0), (1, 0, 0)),
        b.add_cylindrical_joint(n[1], n[2], (1, 0, 0), (1, 0, 0)),
        b.add_universal_joint(n[1], n[2], (1, 0, 0), (1, 0, 0), (1, 1, 0)),
        b.add_planar_joint(n[1], n[2], (1, 0, 0), (0, 0, 1)),
        b.add_weld_joint(n[1], n[2], (1, 0, 0)),
        b.add_distance_constraint(n[1], n[2], (1, 0, 0), (2, 0, 0)),
        b.add_point_on_line_joint(n[1], n[2], (1, 0, 0), (1, 0, 0)),
        b.add_point_on_plane_joint(n[1], n[2], (1, 0, 0), (0, 0, 1)),
        b.add_generic_joint(n[1], n[2], (1, 0, 0), locked=(1, 0, 1, 0, 1, 0)),
    ]
    assert all(isinstance(i, int) for i in ids)
    assert ids[2:10] == list(range(8)) and ids[11:] == list(range(10, 21))  # the spherical joint: 8 and 9


def test_kp_step_is_the_function_and_no_module_is_hidden() -> None:
    assert callable(kp.step)
    assert importlib.util.find_spec("kynemapy.step") is None  # nothing named kynemapy.step to shadow
    assert importlib.util.find_spec("kynemapy.engine.step") is not None  # the phases live here
