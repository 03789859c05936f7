"""A ball joint's compliant cone limit (issue 28: "a cone for ball joints") against closed forms.

* a pendulum on a ball joint, gravity tilted 0.9 rad from its axis, rests on a 0.5 rad cone where
  ``k_l (φ − φ_max) = m g l sin(ψ − φ)`` (solved here by Newton);
* a rotor on a ball joint at its centre of mass, no gravity, turning at ω₀ into an undamped
  cone: it leaves the cone at −ω₀ after half a period π √(I / k_l) of the stop's oscillator,
  having entered it by ω₀ √(I / k_l), with the error of the rebound rate second order in h;
* the iteration matrix against central differences of the residual on the cone, in both tangent
  modes, on the spring-damper and on the clipped branches of the stop's law;
* bad keywords refused, and the model-file keys building the builder's model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from newton_differences import matrix_and_differences

import kynemapy as kp
from kynemapy.model.errors import ModelError

G = 9.81


def _params(h: float, exact: bool = True) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12, geometric_stiffness=exact)


def _angle(q: np.ndarray) -> float:
    """The rotation angle [rad] of a node's displacement quaternion ``q[3:7]``."""
    return 2.0 * math.atan2(float(np.linalg.norm(q[4:7])), float(abs(q[3])))


def test_pendulum_rests_on_the_cone_where_its_torques_balance() -> None:
    """2 kg at 0.8 m below a ball joint, the cone's axis −z (the pendulum's reference), φ_max =
    0.5 rad, k_l = 200 N m/rad, c_l = 50 N m s/rad; gravity 0.9 rad from −z in the x–z plane.
    Started on the cone's edge at rest, in the plane of gravity: at rest after 5 s,
    ``k_l (φ − φ_max) = m g l sin(ψ − φ)``."""
    m, l, psi, phi_max, k_l = 2.0, 0.8, 0.9, 0.5, 200.0
    b = kp.ModelBuilder(gravity=(G * math.sin(psi), 0.0, -G * math.cos(psi)))
    f = phi_max  # the edge: a rotation by φ_max about −y swings the mass toward +x
    start = (l * math.sin(f), 0.0, l - l * math.cos(f), math.cos(f / 2), 0.0, -math.sin(f / 2), 0.0)
    n = b.add_node(position=(0.0, 0.0, -l), displacement=start)
    b.add_mass(n, mass=m, inertia=(1e-3, 1e-3, 1e-3))
    b.add_ball_joint(kp.GROUND, n, (0, 0, 0), cone_axis=(0, 0, -1), cone_angle=phi_max, cone_stiffness=k_l,
                     cone_damping=50.0)  # fmt: skip
    sim = kp.Simulation(b.build(), _params(0.005))
    sim.advance(1000)
    x = phi_max
    for _ in range(50):
        x -= (k_l * (x - phi_max) - m * G * l * math.sin(psi - x)) / (k_l + m * G * l * math.cos(psi - x))
    assert x > phi_max + 0.02  # the cone holds the pendulum well short of ψ
    assert np.abs(sim.state.v[n]).max() < 1e-9
    assert _angle(sim.state.q[n]) == pytest.approx(x, abs=1e-10)
    # without the cone the pendulum would hang along gravity
    free = kp.ModelBuilder(gravity=(G * math.sin(psi), 0.0, -G * math.cos(psi)))
    n2 = free.add_node(position=(0.0, 0.0, -l), displacement=start)
    free.add_mass(n2, mass=m, inertia=(1e-3, 1e-3, 1e-3))
    free.add_ball_joint(kp.GROUND, n2, (0, 0, 0))
    sim2 = kp.Simulation(free.build(), _params(0.005))
    sim2.advance(3)
    assert _angle(sim2.state.q[n2]) > phi_max  # it moves on past the edge


INERTIA = 0.5  # kg m², the rotor's about y
OMEGA0 = 2.0  # rad/s
PHI_MAX = 0.3  # rad
K_L = 400.0  # N m/rad


def _rotor_hit(h: float, swapped: bool = False) -> tuple[float, float]:
    """A rotor on a ball joint at its centre of mass (no gravity), turning about y at ω₀ into a
    cone of half-angle 0.3 rad about z, undamped: its rate about y at t = 0.5 s (after the hit)
    and the largest angle it reached.  ``swapped``: the joint declared (rotor, ground)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    n = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0, 0.0, OMEGA0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(1.0, INERTIA, 1.0))
    bodies = (n, kp.GROUND) if swapped else (kp.GROUND, n)
    b.add_ball_joint(*bodies, (0, 0, 0), cone_axis=(0, 0, 2.0), cone_angle=PHI_MAX, cone_stiffness=K_L)
    sim = kp.Simulation(b.build(), _params(h))
    largest = 0.0
    for _ in range(round(0.5 / h)):
        assert sim.step().converged
        largest = max(largest, _angle(sim.state.q[n]))
    return float(sim.state.v[n, 4]), largest


def test_undamped_cone_returns_the_rotor_at_its_rate_second_order_in_h() -> None:
    """Inside the cone the rotor turns freely; on it, ``I φ̈ = −k_l (φ − φ_max)``: it enters by
    ``ω₀ √(I / k_l)`` = 0.0707 rad and leaves at −ω₀.  Measured rebound-rate errors at h = 2, 1,
    0.5, 0.25, 0.125 ms: 7.9e-4, 5.9e-5, 2.5e-5, 1.0e-5, 3.0e-6 rad/s (the ratios vary as the
    step grid falls on the entry and exit, where the law's slope jumps; over the 16× range of h
    they fall 259×: second order, first order would give 16×); the deepest sampled angle within
    6e-6 rad of the closed form at 2 ms, 5e-8 at 0.25 ms."""
    depth = OMEGA0 * math.sqrt(INERTIA / K_L)
    errors = []
    for h in (2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4):
        rate, largest = _rotor_hit(h)
        errors.append(abs(rate + OMEGA0))
        assert largest == pytest.approx(PHI_MAX + depth, abs=1e-5 if h > 3e-4 else 1e-7)
    assert errors[0] < 1e-3
    assert errors[0] / errors[-1] > 100.0, errors
    # declared the other way round (rotor, ground), the cone is the same: the closed form again
    rate_swapped, largest_swapped = _rotor_hit(1e-3, swapped=True)
    assert abs(rate_swapped + OMEGA0) < 1e-4  # 5.9e-5 measured, as declared (ground, rotor)
    assert largest_swapped == pytest.approx(PHI_MAX + depth, abs=1e-5)


def _two_cones(cones: tuple[tuple[float, float], tuple[float, float]] | None) -> kp.Model:
    """Two bodies hanging from ball joints (ground–a, a–b) with cones (angle, damping) or none."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n1 = b.add_node(position=(0.0, 0.0, -1.0), velocity=(0.3, -0.2, 0.0, 0.2, 0.3, 0.5))
    n2 = b.add_node(position=(0.1, 0.0, -2.0), velocity=(0.5, 0.1, 0.0, -0.4, 0.6, 0.2))
    b.add_mass(n1, mass=2.0, inertia=(0.3, 0.2, 0.25))
    b.add_mass(n2, mass=1.5, inertia=(0.2, 0.3, 0.1))
    kw: list[dict[str, object]] = [{}, {}]
    if cones is not None:
        kw = [
            dict(cone_axis=axis, cone_angle=angle, cone_stiffness=300.0, cone_damping=damping)
            for axis, (angle, damping) in zip(((0.1, 0.0, -1.0), (0.2, 0.3, -1.0)), cones, strict=True)
        ]
    b.add_ball_joint(kp.GROUND, n1, (0, 0, 0), **kw[0])
    b.add_ball_joint(n1, n2, (0.05, 0.0, -1.5), **kw[1])
    return b.build()


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("clipped", [False, True])
def test_iteration_matrix_on_the_cone_is_the_derivative_of_the_residual(exact: bool, clipped: bool) -> None:
    """At a moving state (7 steps in, 𝒯 ≠ I) both cones are set to half the current angles
    between their axes, so both joints are past their cones: the cones' share of the matrix (with minus
    without, same state) against central differences, in both tangent modes; damping 1.5 N m s/rad
    (the spring-damper branch) or 1000 (``clipped``: the damper's force clipped to ±k_l δ)."""
    free = _two_cones(None)
    with pytest.warns(UserWarning, match="projected"):
        sim = kp.Simulation(free, _params(0.01, exact))
    sim.advance(7)
    state = sim.state.copy()
    q1, q2 = state.q[0, 3:7], state.q[1, 3:7]
    # relative rotation of b to a: q_a⁻¹ ⊗ q_b in the world frame has the same angle as the axes
    axes = (np.array([0.1, 0.0, -1.0]), np.array([0.2, 0.3, -1.0]))

    def rot(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        w, x = q[0], q[1:]
        return v + 2.0 * np.cross(x, np.cross(x, v) + w * v)

    a1 = axes[0] / np.linalg.norm(axes[0])
    a2 = axes[1] / np.linalg.norm(axes[1])
    phi1 = math.acos(float(np.clip(a1 @ rot(q1, a1), -1, 1)))
    phi2 = math.acos(float(np.clip(rot(q1, a2) @ rot(q2, a2), -1, 1)))
    assert min(phi1, phi2) > 0.02  # both turned away from their references
    damping = 1000.0 if clipped else 1.5
    cones = ((0.5 * phi1, damping), (0.5 * phi2, damping))
    a_on, fd_on, _ = matrix_and_differences(_two_cones(cones), _params(0.01, exact), state)
    a_off, fd_off, _ = matrix_and_differences(free, _params(0.01, exact), state)
    part, part_fd = a_on - a_off, fd_on - fd_off
    assert np.abs(part_fd).max() > 10.0  # the cones' share is large
    assert np.abs(part - part_fd).max() < 2e-7 * np.abs(part_fd).max()
    if exact:
        assert np.abs(a_on - fd_on).max() < 1e-8 * np.abs(fd_on).max()


def test_builder_refuses_bad_cones() -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(0, 0, -1))
    b.add_mass(n, mass=1.0, inertia=(1, 1, 1))
    good = dict(cone_axis=(0, 0, -1), cone_angle=0.4, cone_stiffness=10.0)
    for bad, match in (
        (dict(good, cone_angle=0.0), "cone_angle must be in"),
        (dict(good, cone_angle=4.0), "cone_angle must be in"),
        (dict(good, cone_stiffness=0.0), "cone_stiffness must be > 0"),
        (dict(good, cone_damping=-1.0), "cone_damping must be >= 0"),
        (dict(good, cone_axis=(0, 0, 0)), "cone_axis must be a non-zero vector"),
        ({"cone_angle": 0.4, "cone_stiffness": 10.0}, "needs cone_axis"),
        ({"cone_axis": (0, 0, -1), "cone_angle": 0.4}, "needs cone_stiffness"),
        ({"cone_stiffness": 10.0}, "need cone_angle"),
        (dict(good, cone_angle="wide"), "cone_angle must be a number"),
    ):
        with pytest.raises(ModelError, match=match):
            b.add_ball_joint(kp.GROUND, n, (0, 0, 0), **bad)


def test_model_file_cone_keys_build_the_builders_model() -> None:
    from kynemapy.model.file import ModelFileError, parse_model_file

    text = """
[model]
gravity = [0.0, 0.0, -9.81]
[[node]]
name = "bob"
position = [0.0, 0.0, -1.0]
[[mass]]
node = "bob"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
[[constraint]]
kind = "ball_joint"
body_a = "ground"
body_b = "bob"
point = [0.0, 0.0, 0.0]
cone_axis = [0.0, 0.0, -1.0]
cone_angle = 0.4
cone_stiffness = 50.0
cone_damping = 2.0
[step]
h = 0.01
"""
    model = parse_model_file(text).model
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(position=(0.0, 0.0, -1.0))
    b.add_mass(n, mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.add_ball_joint(kp.GROUND, n, (0, 0, 0), cone_axis=(0, 0, -1), cone_angle=0.4, cone_stiffness=50.0,
                     cone_damping=2.0)  # fmt: skip
    expected = b.build()
    np.testing.assert_array_equal(model.constraint_axes, expected.constraint_axes)
    np.testing.assert_array_equal(model.constraint_geometry, expected.constraint_geometry)
    line = text.splitlines().index("cone_angle = 0.4") + 1
    with pytest.raises(ModelFileError, match=rf"line {line}.*cone_angle must be in|cone_angle must be in.*line {line}"):
        parse_model_file(text.replace("cone_angle = 0.4", "cone_angle = -0.4"))
