"""Joint drives (docs/joints.md, "Drives, springs, dampers and friction"): hinge and slider
springs, dampers, regularized Coulomb friction and clipped PD servos, against closed forms.

* spring-damper rotor and slider: I ẍ + c ẋ + k (x − x₀) = 0 is linear and 1-DOF; the computed
  x(t) against the closed-form damped oscillation, the error second order in h (ratio ≈ 4 when h
  halves), and the exact tangent's Newton needs 2 iterations (the problem is linear);
* the full iteration matrix (drives on three joints: hinge to ground, hinge between bodies,
  slider between bodies; a clipped servo) against central differences of the residual along
  the Newton update;
* a PD servo holding a pendulum: kp (θ_ref − θ) = m g l sin θ at rest and the joint effort is
  the static torque; a servo clipped below the static torque: the pendulum settles where
  m g l sin θ = limit and the effort is the limit;
* Coulomb friction on an incline: below the threshold the block creeps at the closed-form
  regularization speed v_s atanh(tan α / μ); above, it accelerates at g (sin α − μ cos α).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from newton_differences import matrix_and_differences

import kynemapy as kp
from kynemapy.model.errors import ModelError

G = 9.81


def _params(h: float, exact: bool = True, **kw) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-10, rtol=1e-10, geometric_stiffness=exact, **kw)


def damped_oscillation(t: float, x0: float, rest: float, k: float, c: float, m: float) -> float:
    """x(t) of m ẍ + c ẋ + k (x − rest) = 0, x(0) = x0, ẋ(0) = 0 (underdamped)."""
    wn = math.sqrt(k / m)
    z = c / (2.0 * math.sqrt(k * m))
    wd = wn * math.sqrt(1.0 - z * z)
    return rest + (x0 - rest) * math.exp(-z * wn * t) * (math.cos(wd * t) + z * wn / wd * math.sin(wd * t))


# ------------------------------------------------------------------------- spring-damper, closed form
def rotor(h: float, exact: bool = True) -> tuple[kp.Simulation, int]:
    """A rotor (I = 2 kg m² about x) on a hinge to the ground, torsional spring k = 50 N m/rad
    at rest angle 0.3 rad, damper c = 1.5 N m s/rad, no gravity; starts at θ = 0 at rest."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(2.0, 1.0, 1.0))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), stiffness=50.0, rest=0.3, damping=1.5)
    return kp.Simulation(b.build(), _params(h, exact)), j


def slider_oscillator(h: float) -> tuple[kp.Simulation, int]:
    """A 3 kg block on a slider along (1, 1, 0)/√2 to the ground, spring 120 N/m at rest 0.1 m,
    damper 2 N s/m, no gravity; starts at 0 at rest.  The joint is given with body_b the ground
    (its sides are swapped inside: the spring acts on the same coordinate)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    n = b.add_node(position=(0.2, -0.1, 0.4))
    b.add_mass(n, mass=3.0, inertia=(0.1, 0.2, 0.3))
    j = b.add_slider_joint(n, kp.GROUND, (0.2, -0.1, 0.4), (1, 1, 0), stiffness=120.0, rest=0.1, damping=2.0)
    return kp.Simulation(b.build(), _params(h)), j


def _run(sim: kp.Simulation, j: int, t_end: float, h: float) -> tuple[float, int]:
    iterations = 0
    for _ in range(round(t_end / h)):
        info = sim.step()
        assert info.converged
        iterations = max(iterations, info.iterations)
    return float(sim.joint_output(j)[0]), iterations


def test_hinge_spring_damper_follows_the_damped_oscillation_to_second_order() -> None:
    """θ(2 s) against the closed form at h = 0.01, 0.005, 0.0025 s: errors 1.9e-4, 4.8e-5,
    1.2e-5 rad (measured), ratios 4.0; Newton (exact tangent) 2 iterations a step (linear)."""
    errors = []
    for h in (0.01, 0.005, 0.0025):
        sim, j = rotor(h)
        theta, iterations = _run(sim, j, 2.0, h)
        errors.append(abs(theta - damped_oscillation(2.0, 0.0, 0.3, 50.0, 1.5, 2.0)))
        assert iterations == 2
    assert errors[0] < 3e-4
    for coarse, fine in itertools.pairwise(errors):
        assert 3.7 < coarse / fine < 4.3, errors


def test_slider_spring_damper_follows_the_damped_oscillation_to_second_order() -> None:
    """s(1.5 s) of the slider oscillator against the closed form, second order in h."""
    errors = []
    for h in (0.01, 0.005, 0.0025):
        sim, j = slider_oscillator(h)
        s, iterations = _run(sim, j, 1.5, h)
        errors.append(abs(s - damped_oscillation(1.5, 0.0, 0.1, 120.0, 2.0, 3.0)))
        assert iterations == 2
        # the effort on body_b (the ground here: the joint is stored swapped) keeps the sign rule
        rate = sim.joint_output(j)[1]
        assert sim.joint_effort(j) == pytest.approx(-120.0 * (s - 0.1) - 2.0 * rate, rel=1e-12, abs=1e-12)
    assert errors[0] < 1e-3
    for coarse, fine in itertools.pairwise(errors):
        assert 3.7 < coarse / fine < 4.3, errors


def test_effort_is_the_spring_and_damper_torque() -> None:
    """joint_effort = −k (θ − θ₀) − c θ̇ from the joint outputs, after a few steps."""
    sim, j = rotor(0.01)
    sim.advance(17)
    theta, rate, _ = sim.joint_output(j)
    assert sim.joint_effort(j) == pytest.approx(-50.0 * (theta - 0.3) - 1.5 * rate, rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------------- the exact tangent
def three_drives(drives: bool) -> kp.Model:
    """Three bodies: hinge ground–1, hinge 1–2, slider 2–3 (skew axes), gravity; with
    ``drives`` every joint has a spring, damper and Coulomb friction, and a servo (joint 1–2's
    clipped at 0.5 N m, far below its demand)."""
    b = kp.ModelBuilder(gravity=(0, 0, -G))
    n1 = b.add_node(position=(0.5, 0, 0), velocity=(0, 0, 0.3, 0.2, -0.4, 0.5))
    n2 = b.add_node(position=(1.5, 0, 0.0), velocity=(0.1, 0, 0.2, 0.3, 0.5, -0.2))
    n3 = b.add_node(position=(2.0, 0.3, 0.1), velocity=(0.2, 0.1, -0.1, 0.3, -0.2, 0.4))
    for n in (n1, n2, n3):
        b.add_mass(n, mass=1.3, inertia=(0.1, 0.12, 0.15))
    kw = {"stiffness": 30.0, "rest": 0.2, "damping": 2.0, "friction": 1.5, "friction_rate": 0.3} if drives else {}
    j1 = b.add_hinge_joint(kp.GROUND, n1, (0, 0, 0), (0.2, 1.0, 0.1), **kw)
    j2 = b.add_hinge_joint(n1, n2, (1.0, 0, 0), (0.1, 0.3, 1.0), **kw)
    j3 = b.add_slider_joint(n2, n3, (1.8, 0.1, 0.05), (1.0, 0.4, -0.2), **kw)
    if drives:
        b.set_servo(j1, kp=40.0, kd=3.0, position=0.5, rate=0.1, feedforward=0.7)
        b.set_servo(j2, kp=25.0, kd=1.0, position=-3.0, limit=0.5)
        b.set_servo(j3, kp=60.0, kd=4.0, position=0.05, rate=-0.2, feedforward=1.0)
    return b.build()


def test_iteration_matrix_with_drives_is_the_derivative_of_the_residual() -> None:
    """The whole matrix (masses, gravity, constraints, drives) against central differences:
    measured relative error 6e-10 of the largest entry (4.8e4); the drives' part alone (with
    minus without drives at the same state, largest entry 1.3e3) 2e-8."""
    a1, fd1, state = matrix_and_differences(three_drives(True), _params(0.01))
    a0, fd0, _ = matrix_and_differences(three_drives(False), _params(0.01), state)
    assert np.abs(a1 - fd1).max() < 1e-8 * np.abs(fd1).max()
    part, part_fd = a1 - a0, fd1 - fd0
    assert np.abs(part_fd).max() > 100.0  # the drives' share is large
    assert np.abs(part - part_fd).max() < 2e-7 * np.abs(part_fd).max()


def test_kynema_tangent_mode_has_the_drives_exact_tangent_too() -> None:
    """With ``geometric_stiffness=False`` (Kynema's tangent: no K^Φ, Kynema's mass and gravity
    blocks) the drives' part of the matrix (with minus without drives, same state) is still their
    exact derivative, and the servo arm of examples/servo_arm.py converges at atol = rtol = 1e-10
    (400 steps of 5 ms: 2-5 iterations, mean 3.26; exact tangent 2-4, mean 2.97; without the
    drives' tangent in this mode it did not converge: the first step stalled at a contraction of
    0.77 per iteration)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    import servo_arm

    for exact, most in ((True, 4), (False, 5)):
        model, _, _ = servo_arm.build()
        sim = kp.Simulation(model, _params(0.005, exact))
        assert sim.advance(400).max() <= most
    a1, fd1, state = matrix_and_differences(three_drives(True), _params(0.01, False))
    a0, fd0, _ = matrix_and_differences(three_drives(False), _params(0.01, False), state)
    assert np.abs(a1 - fd1).max() > 1e-4 * np.abs(fd1).max()  # the rest is Kynema's tangent, not exact
    part, part_fd = a1 - a0, fd1 - fd0
    assert np.abs(part_fd).max() > 100.0
    assert np.abs(part - part_fd).max() < 2e-7 * np.abs(part_fd).max()


# ------------------------------------------------------------------------- servos
def pendulum(kp_gain: float, kd: float, target: float, limit: float | None, damping: float = 0.0):
    """A 2 kg point-like mass 0.8 m below a hinge about y at the origin, gravity −z, with a servo."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, -0.8))
    b.add_mass(n, mass=2.0, inertia=(1e-3, 1e-3, 1e-3))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (0, 1, 0), damping=damping)
    b.set_servo(j, kp=kp_gain, kd=kd, position=target, limit=limit)
    return kp.Simulation(b.build(), _params(0.01)), j


def test_pd_servo_holds_the_pendulum_with_the_static_error_and_torque() -> None:
    """At rest: kp (θ_ref − θ) = m g l sin θ (θ, the gravity torque, from the simulation's own
    angle), the effort is the static torque m g l sin θ, and θ solves the static equation."""
    mgl = 2.0 * G * 0.8
    sim, j = pendulum(80.0, 12.0, 0.7, None)
    sim.advance(1500)
    theta, rate, _ = sim.joint_output(j)
    assert abs(rate) < 1e-8
    assert 80.0 * (0.7 - theta) == pytest.approx(mgl * math.sin(theta), rel=1e-7)
    assert sim.joint_effort(j) == pytest.approx(mgl * math.sin(theta), rel=1e-7)
    # the static equation kp (θ_ref − θ) = m g l sin θ solved by bisection
    lo, hi = 0.0, 0.7
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 80.0 * (0.7 - mid) > mgl * math.sin(mid) else (lo, mid)
    assert theta == pytest.approx(lo, abs=1e-8)


def test_clipped_servo_gives_its_limit_and_the_pendulum_settles_where_gravity_balances_it() -> None:
    """Limit 6 N m below the static torque at the target (m g l sin 1.2 = 14.6 N m): the servo
    stays clipped, its effort is the limit, and (a joint damper settles it) the pendulum rests at
    θ* = asin(limit / m g l), short of the target."""
    mgl = 2.0 * G * 0.8
    sim, j = pendulum(500.0, 20.0, 1.2, 6.0, damping=5.0)
    for _ in range(30):
        sim.step()
        theta, rate, _ = sim.joint_output(j)
        assert 500.0 * (1.2 - theta) - 20.0 * rate > 6.0  # clipped
        assert sim.joint_effort(j) == pytest.approx(6.0 - 5.0 * rate, rel=1e-12, abs=1e-12)  # limit + damper
    sim.advance(2000)
    theta, rate, _ = sim.joint_output(j)
    assert abs(rate) < 1e-8
    assert theta == pytest.approx(math.asin(6.0 / mgl), abs=1e-8)
    assert sim.joint_effort(j) == pytest.approx(6.0, abs=1e-7)


def test_servo_target_and_gains_set_between_steps() -> None:
    """set_servo_target moves the rest point; set_servo with zero gains removes the servo."""
    mgl = 2.0 * G * 0.8
    sim, j = pendulum(80.0, 12.0, 0.0, None)
    sim.set_servo_target(j, 0.4)
    sim.advance(1500)
    theta = sim.joint_output(j)[0]
    assert 80.0 * (0.4 - theta) == pytest.approx(mgl * math.sin(theta), rel=1e-7)
    sim.set_servo(j, kp=0.0)
    assert sim.joint_effort(j) == 0.0
    with pytest.raises(ValueError, match="servo kp must be >= 0"):
        sim.set_servo(j, kp=-1.0)
    with pytest.raises(ValueError, match="servo limit must be > 0"):
        sim.set_servo(j, kp=1.0, limit=0.0)


# ------------------------------------------------------------------------- Coulomb friction
def incline(alpha: float, mu: float, rate: float, h: float = 0.005) -> tuple[kp.Simulation, int]:
    """A 1.5 kg block on a slider down an incline of angle α (axis (cos α, 0, −sin α)), gravity
    −z, Coulomb friction F_c = μ m g cos α regularized with ``rate`` [m/s]; starts at rest."""
    m = 1.5
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=m, inertia=(0.01, 0.01, 0.01))
    axis = (math.cos(alpha), 0.0, -math.sin(alpha))
    j = b.add_slider_joint(kp.GROUND, n, (0, 0, 0), axis, friction=mu * m * G * math.cos(alpha), friction_rate=rate)
    return kp.Simulation(b.build(), _params(h)), j


def test_friction_holds_below_the_threshold_up_to_the_regularization_creep() -> None:
    """tan α = 0.3 < μ = 0.5: the block creeps at v_s atanh(tan α / μ) (where the regularized
    friction balances gravity) and moves less than that speed times the time.  h = 1 ms, v_s = 1 mm/s:
    F_c h / (m v_s) = 4.7 (Newton needs it below about 15 in the first steps from rest, docs/joints.md)."""
    alpha, mu, vs = math.atan(0.3), 0.5, 1e-3
    sim, j = incline(alpha, mu, vs, h=1e-3)
    sim.advance(400)
    s, v, a = sim.joint_output(j)
    creep = vs * math.atanh(math.tan(alpha) / mu)
    assert v == pytest.approx(creep, rel=1e-6)
    assert 0.0 < s < creep * 0.4
    assert abs(a) < 1e-6


def test_friction_slides_above_the_threshold_at_the_kinetic_acceleration() -> None:
    """tan α = 0.8 > μ = 0.5: acceleration g (sin α − μ cos α) once the speed is many v_s."""
    alpha, mu, vs = math.atan(0.8), 0.5, 1e-4
    sim, j = incline(alpha, mu, vs)
    sim.advance(100)
    s0, v0, _ = sim.joint_output(j)
    sim.advance(100)
    s1, v1, a1 = sim.joint_output(j)
    expected = G * (math.sin(alpha) - mu * math.cos(alpha))
    assert (v1 - v0) / 0.5 == pytest.approx(expected, rel=1e-10)
    assert a1 == pytest.approx(expected, rel=1e-10)
    assert s1 - s0 == pytest.approx(v0 * 0.5 + 0.5 * expected * 0.25, rel=1e-10)


# ------------------------------------------------------------------------- input checks, no drive
def test_builder_refuses_bad_drive_values() -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(0, 0, 0))
    with pytest.raises(ModelError, match="stiffness must be >= 0"):
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), stiffness=-1.0)
    with pytest.raises(ModelError, match="friction_rate must be > 0"):
        b.add_slider_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), friction=1.0, friction_rate=0.0)
    with pytest.raises(ModelError, match="damping must be finite"):
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), damping=math.inf)
    ball = b.add_ball_joint(kp.GROUND, n, (0, 0, 0))
    with pytest.raises(ModelError, match="a servo drives a hinge or slider"):
        b.set_servo(ball, kp=1.0)
    with pytest.raises(ModelError, match="unknown constraint id"):
        b.set_servo(7, kp=1.0)


def test_a_joint_without_drive_keeps_its_plain_input_torque() -> None:
    """No drive: the hinge torque alone (I θ̈ = τ, θ = τ t² / 2I, exact for the scheme) and the effort is τ."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(2.0, 1.0, 1.0))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), torque=3.0)
    sim = kp.Simulation(b.build(), _params(0.01))
    sim.advance(100)
    assert sim.joint_output(j)[0] == pytest.approx(3.0 / 4.0, rel=1e-9)
    assert sim.joint_effort(j) == pytest.approx(3.0, rel=1e-12)


# ------------------------------------------------------------------------- model files
PENDULUM_TOML = """
[model]
gravity = [0.0, 0.0, -9.81]

[[node]]
name = "bob"
position = [0.0, 0.0, -0.8]

[[mass]]
node = "bob"
mass = 2.0
inertia = [1e-3, 1e-3, 1e-3]

[[constraint]]
kind = "hinge_joint"
name = "shoulder"
body_a = "ground"
body_b = "bob"
point = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
damping = 5.0
friction = 0.2
friction_rate = 0.05
servo_kp = 500.0
servo_kd = 20.0
servo_position = 1.2
servo_limit = 6.0

[step]
h = 0.01
"""


def test_model_file_drive_keys_build_the_builders_model() -> None:
    """The TOML keys give the same model arrays and initial inputs as the builder's keywords and set_servo."""
    from kynemapy.model.file import ModelFileError, parse_model_file

    mf = parse_model_file(PENDULUM_TOML)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, -0.8))
    b.add_mass(n, mass=2.0, inertia=(1e-3, 1e-3, 1e-3))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (0, 1, 0), damping=5.0, friction=0.2, friction_rate=0.05)
    b.set_servo(j, kp=500.0, kd=20.0, position=1.2, limit=6.0)
    model = b.build()
    c = mf.constraints["shoulder"]
    np.testing.assert_array_equal(mf.model.constraint_axes[c], model.constraint_axes[j])
    np.testing.assert_array_equal(mf.model.initial_constraint_input[c], model.initial_constraint_input[j])
    assert model.constraint_axes[j, 0, 2] == 5.0 and model.initial_constraint_input[j, 6] == 6.0
    with pytest.raises(ModelFileError, match=r"line 24.*servo kp must be >= 0"):
        parse_model_file(PENDULUM_TOML.replace("servo_kp = 500.0", "servo_kp = -5.0"))
    with pytest.raises(ModelFileError, match=r"line 21.*damping must be >= 0"):
        parse_model_file(PENDULUM_TOML.replace("damping = 5.0", "damping = -5.0"))


def test_linearization_has_the_drives_stiffness_and_damping() -> None:
    """analysis.linearize of the spring-damper rotor reduced to its one free coordinate: the
    equation I θ̈ + c θ̇ + k θ = 0 (I = 2, c = 1.5, k = 50); with a servo (kp 30, kd 4) added
    between steps, c + kd and k + kp."""
    from kynemapy.analysis import linearize

    sim, j = rotor(0.01)
    for c, k in ((1.5, 50.0), (5.5, 80.0)):
        if c != 1.5:
            sim.set_servo(j, kp=30.0, kd=4.0)
        m_r, c_r, k_r = linearize(sim).reduced()
        assert m_r.shape == (1, 1)
        scale = 2.0 / m_r[0, 0]  # the null-space basis may be scaled
        assert c_r[0, 0] * scale == pytest.approx(c, rel=1e-12)
        assert k_r[0, 0] * scale == pytest.approx(k, rel=1e-12)


# ------------------------------------------------------------------------- a URDF arm
URDF_ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="world"/>
  <joint name="shoulder" type="revolute">
    <parent link="world"/><child link="upper"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="60" velocity="5"/>
    <dynamics damping="0.5" friction="0.1"/>
  </joint>
  <link name="upper">
    <inertial><origin xyz="0.5 0 0"/><mass value="2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.1667" iyz="0" izz="0.1667"/></inertial>
  </link>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/>
    <origin xyz="1 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="20" velocity="5"/>
    <dynamics damping="0.2" friction="0.05"/>
  </joint>
  <link name="fore">
    <inertial><origin xyz="0.4 0 0"/><mass value="1.2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.064" iyz="0" izz="0.064"/></inertial>
  </link>
</robot>
"""


def test_urdf_arm_with_servos_holds_a_pose_with_the_static_torques() -> None:
    """Issue 28's check: a URDF arm (two links, ``<dynamics>`` applied) with servos limited by
    the URDF efforts holds a pose under gravity; at rest each joint torque equals the static
    torque of the pose, by hand: τ₂ = −g m₂ c₂ cos(θ₁ + θ₂), τ₁ = −g (m₁ c₁ cos θ₁ + m₂ (l₁ cos θ₁ +
    c₂ cos(θ₁ + θ₂))) (angles about +y from the horizontal arm, positive down).  The friction is
    regularized, so at rest it is zero: the torques are the servos'."""
    from kynemapy.io.urdf import load_urdf

    robot = load_urdf(URDF_ARM, joint_dynamics=True)
    b = robot.builder
    ids = [robot.joint_id[name] for name in ("shoulder", "elbow")]
    for cid, name, target in zip(ids, ("shoulder", "elbow"), (0.6, -0.9), strict=True):
        b.set_servo(cid, kp=400.0, kd=40.0, position=target, limit=robot.joint_limits[name].effort)
    model = b.build()
    assert model.constraint_axes[ids[0], 0, 2] == 0.5 and model.constraint_axes[ids[1], 1, 0] == 0.05
    sim = kp.Simulation(model, _params(0.005))
    sim.advance(2000)
    t1, t2 = (float(sim.joint_output(c)[0]) for c in ids)
    assert max(abs(sim.joint_output(c)[1]) for c in ids) < 1e-9
    tau2 = -G * 1.2 * 0.4 * math.cos(t1 + t2)
    tau1 = -G * (2.0 * 0.5 * math.cos(t1) + 1.2 * (1.0 * math.cos(t1) + 0.4 * math.cos(t1 + t2)))
    assert sim.joint_effort(ids[0]) == pytest.approx(tau1, rel=1e-7)
    assert sim.joint_effort(ids[1]) == pytest.approx(tau2, rel=1e-7)
    assert 400.0 * (0.6 - t1) == pytest.approx(tau1, rel=1e-6)  # the servo's static error
    # without joint_dynamics the URDF's damping and friction stay parsed only
    plain = load_urdf(URDF_ARM).builder.build()
    assert not plain.constraint_axes[ids].any()


# ------------------------------------------------------------------------- a servo given later
def bare_pendulum(exact: bool = True) -> tuple[kp.Simulation, int]:
    """:func:`pendulum` built without any drive (no damper, no servo): the simulation holds the
    two-body joint unit without drives."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, -0.8))
    b.add_mass(n, mass=2.0, inertia=(1e-3, 1e-3, 1e-3))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (0, 1, 0))
    return kp.Simulation(b.build(), _params(0.01, exact)), j


def static_angle(kp_gain: float, target: float) -> float:
    """θ of kp (θ_ref − θ) = m g l sin θ (the pendulum's static equation), by bisection."""
    mgl = 2.0 * G * 0.8
    lo, hi = 0.0, target
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if kp_gain * (target - mid) > mgl * math.sin(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("entry", ["step", "advance", "rollout", "run", "batch", "step_function"])
@pytest.mark.parametrize("exact", [True, False])
def test_a_servo_given_to_a_model_built_without_drives_holds_it(entry: str, exact: bool, tmp_path) -> None:
    """A pendulum built without drives (the joint unit without drive code) swinging from rest
    at 0; a servo (kp 80, kd 12, target 0.7) given between steps through every way of stepping:
    the engine asks for the unit with drives (``NEEDS_UNIT``), gets it, and the pendulum comes
    to rest at the static angle with the static torque as the joint's effort."""
    from kynemapy.engine.unit_call import BODY_JOINTS, BODY_JOINTS_FULL

    sim, j = bare_pendulum(exact)
    assert sim.data.units[BODY_JOINTS] != 0
    assert sim.data.units[BODY_JOINTS_FULL] == 0 or not sim.jit_enabled  # (plain Python: one function)
    sim.advance(5)
    sim.set_servo(j, kp=80.0, kd=12.0, position=0.7)
    if entry == "step":
        for _ in range(1500):
            assert sim.step().converged
    elif entry == "advance":
        sim.advance(1500)
    elif entry == "rollout":
        rows = sim.rollout(1500, every=500)
        assert rows["q"].shape[0] == 4
    elif entry == "run":
        sim.run(n_steps=1500, output=tmp_path / "servo.h5")
        assert kp.io.read(tmp_path / "servo.h5").q.shape[0] >= 2
    elif entry == "batch":
        other, _ = bare_pendulum(exact)
        other.advance(5)
        kp.Batch([sim, other]).advance(1500)
        assert abs(other.joint_output(j)[0]) < 1e-12  # the other member, undriven, hangs at rest
    else:  # the functional step on the simulation's own state and workspace
        for _ in range(1500):
            assert kp.step(sim.model, sim.state, sim.inputs, sim.workspace, sim.params).converged
    assert sim.data.units[BODY_JOINTS] == sim.data.units[BODY_JOINTS_FULL] != 0
    theta, rate, _ = sim.joint_output(j)
    assert abs(rate) < 1e-8
    assert theta == pytest.approx(static_angle(80.0, 0.7), abs=1e-8)
    assert sim.joint_effort(j) == pytest.approx(2.0 * G * 0.8 * math.sin(theta), rel=1e-7)


def test_a_servo_given_before_anything_but_an_effort_or_a_linearization() -> None:
    """The effort of a servo given to a model built without drives, read before any step, is
    kp (θ_ref − θ) + kd (rate_ref − θ̇) at rest at 0; the linearization has its kp and kd."""
    from kynemapy.analysis import linearize

    sim, j = bare_pendulum()
    sim.set_servo(j, kp=80.0, kd=12.0, position=0.7, rate=0.1)
    assert sim.joint_effort(j) == pytest.approx(80.0 * 0.7 + 12.0 * 0.1, rel=1e-12)
    sim, j = bare_pendulum()
    sim.set_servo(j, kp=30.0, kd=4.0)
    m_r, c_r, k_r = linearize(sim).reduced()
    scale = (2.0 * 0.8**2 + 1e-3) / m_r[0, 0]  # I about the hinge (the null-space basis may be scaled)
    assert c_r[0, 0] * scale == pytest.approx(4.0, rel=1e-9)
    assert k_r[0, 0] * scale == pytest.approx(30.0 + 2.0 * G * 0.8, rel=1e-9)
