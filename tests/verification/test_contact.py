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


def colliding_spheres(hunt_crossley: bool) -> tuple[kp.Model, kp.Model]:
    """Three bodies, each with an off-centre sphere, the spheres overlapping pairwise by 2, 3 and
    2.5 mm, and a fourth with a capsule pressed 2 mm into sphere 0 along its axis, all sliding
    and spinning against each other (μ = 0.5, v_s = 0.3 m/s); and the same bodies without
    contact."""

    def build(contact: bool) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        specs = [
            ((0.0, 0.0, 0.0), (0.5, 0.2, -0.1, 1.0, -2.0, 0.5), (0.02, 0.01, 0.0), 0.1),
            ((0.19, 0.03, 0.02), (-0.4, 0.3, 0.2, -1.5, 0.7, 2.0), (0.19518, 0.02752, 0.02628), 0.08),
            ((0.1, 0.17, -0.01), (0.1, -0.6, 0.3, 0.3, 1.1, -0.8), (0.1158, 0.14643, -0.01), 0.07),
        ]
        for position, velocity, center, radius in specs:
            n = b.add_node(position=position, velocity=velocity)
            b.add_mass(n, mass=1.0 + radius, inertia=(0.01, 0.02, 0.015))
            b.add_sphere(n, radius, center=center)
        # a capsule along y whose axis passes 0.128 m from sphere 0's centre (2 mm deep, mid-axis)
        n = b.add_node(position=(-0.11, 0.02, 0.01), velocity=(0.3, 0.2, -0.1, 0.5, -1.2, 0.9))
        b.add_mass(n, mass=0.8, inertia=(0.01, 0.004, 0.01))
        b.add_capsule(n, 0.03, (-0.108, -0.1, 0.0), (-0.108, 0.12, 0.0))
        if contact:
            if hunt_crossley:
                b.set_body_contact(
                    stiffness=1e6, exponent=1.5, damping=2e5, damping_model="hunt_crossley", friction=0.5,
                    slip_velocity=0.3,
                )  # fmt: skip
            else:
                b.set_body_contact(stiffness=3e4, damping=50.0, friction=0.5, slip_velocity=0.3)
        return b.build()

    return build(True), build(False)


@pytest.mark.parametrize("hunt_crossley", [False, True])
def test_iteration_matrix_with_sphere_pairs_is_the_derivative_of_the_residual(hunt_crossley: bool) -> None:
    """Sphere–sphere and sphere–capsule contact between bodies (four pairs in contact, off-centre
    spheres, the capsule touched inside its axis, sliding and spinning): the contact's share of
    the matrix (12×12 blocks on two nodes) against central differences.  What remains is the
    differences' own ε² error: it falls by 4 when ε halves (measured, linear law: 1.0, 0.25 at
    ε = 2.5e-7, 1.25e-7 of a largest entry 8.9e5)."""
    from kynemapy.model.geometry import contact_shapes

    model, bare = colliding_spheres(hunt_crossley)
    assert model.n_pairs == 6  # three sphere pairs, three sphere–capsule pairs
    assert [s.kind for s in contact_shapes(model)] == ["sphere", "sphere", "sphere", "capsule"]  # as drawn
    errors = []
    for eps in (2.5e-7, 1.25e-7):
        a1, fd1, state = matrix_and_differences(model, _params(0.001), steps=2, projected=False, eps=eps)
        a0, fd0, _ = matrix_and_differences(bare, _params(0.001), state, projected=False, eps=eps)
        part, part_fd = a1 - a0, fd1 - fd0
        errors.append(np.abs(part - part_fd).max() / np.abs(part_fd).max())
    sim = kp.Simulation(model, _params(0.001))
    sim.state.assign(state)
    pairs = sim.contact_pairs()
    assert pairs.shape.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]  # shape 3: the capsule
    assert pairs.active.tolist() == [True, True, True, True, False, False]
    assert np.abs(part_fd).max() > 1e4
    assert errors[1] < 1e-6
    assert 3.0 < errors[0] / errors[1] < 5.0  # ε²: the tangent itself is exact


def contact_state(sim: kp.Simulation) -> np.ndarray:
    """The contact points' state (n, 6) from :meth:`Simulation.contacts`: gap, normal force,
    friction (3), slip speed."""
    c = sim.contacts()
    return np.column_stack([c.gap, c.normal_force, c.friction_force, c.slip_speed])


# ------------------------------------------------------------------------- ball at rest
@pytest.mark.parametrize("law", ["linear", "hunt_crossley"])
def test_ball_resting_on_the_ground_sinks_by_the_static_penetration(law: str) -> None:
    """A 2 kg ball (r = 0.1 m) dropped from contact onto k = 1e5: at rest (after 1 s, the
    contact oscillation damped) it sinks by δ = m g / k (linear, e = 1) or (m g / k)^(2/3)
    (Hertz exponent e = 1.5, k = 1e7 N/m^1.5, Hunt–Crossley c = 1e8 N s/m^2.5) and the normal
    force is m g: a static equilibrium, so to roundoff (asserted to 1e-9 relative)."""
    m, r = 2.0, 0.1
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, r))
    b.add_mass(n, mass=m, inertia=(0.4 * m * r * r,) * 3)
    b.add_sphere(n, r)
    if law == "linear":
        k = 1e5
        b.add_ground_plane(stiffness=k, damping=math.sqrt(k * m))
        delta = m * G / k
    else:
        k = 1e7
        b.add_ground_plane(stiffness=k, exponent=1.5, damping=1e8, damping_model="hunt_crossley")
        delta = (m * G / k) ** (2.0 / 3.0)
    sim = kp.Simulation(b.build(), _params(1e-3))
    sim.advance(1000)
    assert abs(-float(sim.state.q[0, 2]) - delta) < 1e-9 * delta
    out = contact_state(sim)[0]
    assert abs(out[0] + delta) < 1e-9 * delta
    assert abs(out[1] - m * G) < 1e-9 * m * G
    assert np.abs(sim.state.v[0]).max() < 1e-9


# ------------------------------------------------------------------------- box on an incline
def box_on_incline(theta: float, mu: float, v0: float = 0.0, slip: float = 1e-3) -> kp.Simulation:
    """A 1 kg box (0.2 × 0.2 × 0.1 m) on the plane z = 0 with gravity tilted by ``theta`` (the
    incline's slope along +x), corners k = 1e6 N/m, c = 500 N s/m (ζ = 0.5 per corner),
    friction ``mu``, v_s = ``slip``; it starts with the static penetration m g cos θ / (4 k)
    and velocity ``v0`` down the slope."""
    m, k = 1.0, 1e6
    b = kp.ModelBuilder(gravity=(G * math.sin(theta), 0.0, -G * math.cos(theta)))
    z = 0.05 - m * G * math.cos(theta) / (4 * k)
    n = b.add_node(position=(0.0, 0.0, z), velocity=(v0, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(n, mass=m, inertia=(m * 0.05 / 12, m * 0.05 / 12, m * 0.08 / 12))
    b.add_box(n, (0.1, 0.1, 0.05))
    b.add_ground_plane(stiffness=k, damping=500.0, friction=mu, slip_velocity=slip)
    return kp.Simulation(b.build(), _params(1e-3))


def test_box_on_an_incline_below_the_friction_angle_sticks() -> None:
    """tan θ = 0.3 < μ = 0.5: the box sticks; the regularized friction lets it creep at the
    speed where μ (Σ f_n) s / √(s² + v_s²) = m g sin θ, s = v_s tan θ / √(μ² − tan² θ)
    = 7.5e-4 m/s for v_s = 1e-3 m/s (the regularization's bound on the drift: 0.75 mm/s); the
    speed after 1 s against it: relative error below 1e-6 (a steady state; measured 6e-13)."""
    theta, mu, vs = math.atan(0.3), 0.5, 1e-3
    sim = box_on_incline(theta, mu, slip=vs)
    sim.advance(1000)
    creep = vs * math.tan(theta) / math.sqrt(mu * mu - math.tan(theta) ** 2)
    assert abs(float(sim.state.v[0, 0]) - creep) < 1e-6 * creep
    x1 = float(sim.state.q[0, 0])
    sim.advance(1000)
    assert abs(float(sim.state.q[0, 0]) - x1 - creep * 1.0) < 1e-6 * creep
    contacts = sim.contacts()
    assert list(contacts.active) == [True, False] * 4  # the four bottom corners (z = −h) press
    assert list(contacts.node) == [0] * 8 and list(contacts.shape) == [0] * 8
    assert abs(contacts.normal_force.sum() - G * math.cos(theta)) < 1e-9 * G
    friction = contacts.friction_force.sum(axis=0)  # holds the box against g sin θ down the slope
    np.testing.assert_allclose(friction, [-G * math.sin(theta), 0.0, 0.0], rtol=0.0, atol=1e-9)


def test_box_on_an_incline_above_the_friction_angle_slides_at_the_closed_form_acceleration() -> None:
    """tan θ = 0.7 > μ = 0.5: the box slides with a = g (sin θ − μ cos θ) = 1.6073 m/s²; from
    1 m/s down the slope, the speed gained between t = 0.5 and 1.5 s against a · 1 s: the
    regularization (v_s = 1e-3 m/s) takes μ f_n v_s² / (2 s²) ≤ 2e-6 N of a 1 kg box's friction at
    s ≥ 1 m/s, so the relative error is below 2e-6 (measured 2.0e-7)."""
    theta, mu = math.atan(0.7), 0.5
    sim = box_on_incline(theta, mu, v0=1.0)
    sim.advance(500)
    v1 = float(sim.state.v[0, 0])
    sim.advance(1000)
    a = G * (math.sin(theta) - mu * math.cos(theta))
    assert abs(float(sim.state.v[0, 0]) - v1 - a) < 2e-6 * a
    assert abs(float(sim.state.v[0, 2])) < 1e-9


# ------------------------------------------------------------------------- rolling balls
def ball(gravity: tuple[float, float, float], mu: float, v0: float = 0.0, k: float = 1e6) -> kp.Simulation:
    """A solid 1 kg ball (r = 0.1 m, I = 2/5 m r²) on the plane z = 0 (k, ζ = 0.5, μ, v_s =
    1e-3 m/s), starting at its static penetration with velocity ``v0`` along x and no spin.
    (With v_s = 1e-4 m/s and h = 1e-3 s the friction's slope μ f_n / v_s is 30× m / h and Newton
    cycles at the transition to rolling; 1e-3 m/s: at most 8 iterations.)"""
    m, r = 1.0, 0.1
    b = kp.ModelBuilder(gravity=gravity)
    n = b.add_node(position=(0.0, 0.0, r + m * gravity[2] / k), velocity=(v0, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(n, mass=m, inertia=(0.4 * m * r * r,) * 3)
    b.add_sphere(n, r)
    b.add_ground_plane(stiffness=k, damping=math.sqrt(k * m), friction=mu, slip_velocity=1e-3)
    return kp.Simulation(b.build(), _params(1e-3))


def test_ball_thrown_sliding_without_spin_rolls_at_five_sevenths_of_its_speed() -> None:
    """v₀ = 3 m/s, μ = 0.3: it slides with v = v₀ − μ g t, ω r = 5/2 μ g t until the slip
    v₀ − 7/2 μ g t vanishes at t* = 2 v₀ / (7 μ g) = 0.2912 s, then rolls at 5/7 v₀.  The speed at
    0.2 s (sliding; the regularization changes the friction by μ g v_s²/(2 s²) < 2e-6 m/s²) and
    at 1 s (rolling) to 1e-6 relative (measured 3.5e-8 and 3e-15); the slip falls below 0.01 m/s
    within a step of the closed form's time for it."""
    v0, mu, r = 3.0, 0.3, 0.1
    sim = ball((0.0, 0.0, -G), mu, v0)
    slip_times = []
    for i in range(1, 1001):
        sim.step()
        slip = float(sim.state.v[0, 0] - sim.state.v[0, 4] * r)  # ω_y r: rolling along +x
        if slip < 0.01 and not slip_times:
            slip_times.append(i * 1e-3)
        if i == 200:
            assert abs(float(sim.state.v[0, 0]) - (v0 - mu * G * 0.2)) < 1e-6 * v0
            assert abs(float(sim.state.v[0, 4]) * r - 2.5 * mu * G * 0.2) < 1e-6 * v0
    assert abs(float(sim.state.v[0, 0]) - 5.0 / 7.0 * v0) < 1e-6 * v0
    assert abs(float(sim.state.v[0, 4]) * r - 5.0 / 7.0 * v0) < 1e-6 * v0
    t_slip = (v0 - 0.01) / (3.5 * mu * G)
    assert t_slip <= slip_times[0] < t_slip + 1e-3


def test_ball_rolls_down_an_incline_at_five_sevenths_of_g_sin_theta() -> None:
    """θ = 20°, μ = 0.5 > 2/7 tan θ: it rolls without slip at a = 5/7 g sin θ = 2.3966 m/s²
    (the speed gained between 0.5 and 1.5 s, to 1e-6 relative; measured 1e-14: a constant
    acceleration, which the scheme integrates exactly); the regularized friction keeps the
    constant creep slip s = v_s t / √(1 − t²) with t = 2/7 tan θ / μ (2.13e-4 m/s), to 1e-6."""
    theta = math.radians(20.0)
    sim = ball((G * math.sin(theta), 0.0, -G * math.cos(theta)), 0.5)
    sim.advance(500)
    v1 = float(sim.state.v[0, 0])
    sim.advance(1000)
    a = 5.0 / 7.0 * G * math.sin(theta)
    assert abs(float(sim.state.v[0, 0]) - v1 - a) < 1e-6 * a
    ratio = 2.0 / 7.0 * math.tan(theta) / 0.5
    creep = 1e-3 * ratio / math.sqrt(1.0 - ratio * ratio)
    assert abs(float(sim.state.v[0, 0] - sim.state.v[0, 4] * 0.1) - creep) < 1e-6 * creep


# ------------------------------------------------------------------------- bouncing ball
def restitution(k: float, c: float, m: float) -> float:
    """Coefficient of restitution of a mass m on a linear spring-damper (k, c) whose force
    k δ + c δ̇ is cut at zero: δ = (v/ω_d) e^(−σt) sin ω_d t (σ = c/2m) until the force vanishes,
    at ω_d t = π − atan(c ω_d / (k − c²/2m)) (before the half period π), e = −δ̇/v there."""
    sigma = c / (2.0 * m)
    wd = math.sqrt(k / m - sigma * sigma)
    t = (math.pi - math.atan2(c * wd, k - c * c / (2.0 * m))) / wd
    return -math.exp(-sigma * t) * (math.cos(wd * t) - sigma / wd * math.sin(wd * t))


def bounce(h: float, m: float = 1.0, k: float = 1e5, c: float = 60.0, v: float = 2.0) -> float:
    """The speed ratio after a ball (m, r = 0.1 m) thrown at ``v`` onto k, c (no gravity) has
    left the ground; it starts 1e-12 m deep, so that the damper's force c v acts from t = 0 on (a
    force jump inside a step would cost an error of order h)."""
    b = kp.ModelBuilder()
    n = b.add_node(position=(0.0, 0.0, 0.1 - 1e-12), velocity=(0.0, 0.0, -v, 0.0, 0.0, 0.0))
    b.add_mass(n, mass=m, inertia=(0.004,) * 3)
    b.add_sphere(n, 0.1)
    b.add_ground_plane(stiffness=k, damping=c)
    sim = kp.Simulation(b.build(), _params(h))
    assert sim.advance(round(0.015 / h)).max() <= 2  # 15 ms: the contact lasts 9.3 ms
    assert contact_state(sim)[0, 0] > 0.0  # apart
    return float(sim.state.v[0, 2]) / v


def test_bouncing_ball_leaves_with_the_damped_oscillators_restitution() -> None:
    """A 1 kg ball thrown at 2 m/s onto k = 1e5 N/m, c = 60 N s/m (ζ = 0.095), no gravity: it
    leaves with e = 0.75482 (where the force k δ + c δ̇ vanishes, before the half period; the
    half period's exp(−ζπ/√(1−ζ²)) = 0.74127 is the restitution of a law that pulls).  Measured
    relative error of e 2.7e-5, 5.1e-6, 1.7e-6 at h = 4e-5, 2e-5, 1e-5 s (second order; the
    kink where the force vanishes lies inside a step)."""
    e = restitution(1e5, 60.0, 1.0)
    assert abs(e - 0.75482) < 1e-5
    coarse = abs(bounce(4e-5) / e - 1.0)
    fine = abs(bounce(1e-5) / e - 1.0)
    assert fine < 3e-6
    assert coarse > 8.0 * fine


# ------------------------------------------------------------------------- shapes, filter, input
BALLS_TOML = """
[model]
gravity = [0.0, 0.0, -9.81]

[[node]]
name = "ball"
position = [0.0, 0.0, 0.1]

[[node]]
name = "brick"
position = [1.0, 0.0, 0.05]

[[mass]]
node = "ball"
mass = 2.0
inertia = [0.008, 0.008, 0.008]

[[mass]]
node = "brick"
mass = 1.0
inertia = [0.01, 0.01, 0.02]

[[shape]]
kind = "sphere"
node = "ball"
radius = 0.1

[[shape]]
kind = "box"
node = "brick"
half_extents = [0.1, 0.2, 0.05]
group = 2

[[shape]]
kind = "capsule"
node = "brick"
radius = 0.02
point_a = [0.9, 0.0, 0.05]
point_b = [1.1, 0.0, 0.05]
mask = 2

[[ground]]
stiffness = 1e5
damping = 400.0
friction = 0.5
slip_velocity = 0.002
mask = 1

[step]
h = 0.001
rho_inf = 0.9
"""


def balls_builder(box_axes: np.ndarray | None = None) -> kp.Model:
    """BALLS_TOML with the builder."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    ball_node = b.add_node(position=(0.0, 0.0, 0.1))
    brick = b.add_node(position=(1.0, 0.0, 0.05))
    b.add_mass(ball_node, mass=2.0, inertia=(0.008, 0.008, 0.008))
    b.add_mass(brick, mass=1.0, inertia=(0.01, 0.01, 0.02))
    assert b.add_sphere(ball_node, 0.1) == 0
    assert b.add_box(brick, (0.1, 0.2, 0.05), axes=box_axes, group=2) == 1
    assert b.add_capsule(brick, 0.02, (0.9, 0.0, 0.05), (1.1, 0.0, 0.05), mask=2) == 2
    assert b.add_ground_plane(stiffness=1e5, damping=400.0, friction=0.5, slip_velocity=0.002, mask=1) == 0
    return b.build()


def test_model_file_shapes_and_ground_build_the_builders_model_and_the_filter_keeps_its_pairs() -> None:
    """The [[shape]] and [[ground]] tables make the builder's model; the filter (ground group 1,
    mask 1) keeps the sphere (group 1: 1 point), drops the box (group 2 & mask 1 = 0) and the
    capsule (its mask 2 & the ground's group 1 = 0)."""
    from kynemapy.model.file import parse_model_file

    mf = parse_model_file(BALLS_TOML)
    model = balls_builder()
    for name in ("n_contacts", *(f for f in kp.Model._fields if f.startswith("contact_"))):
        np.testing.assert_array_equal(getattr(mf.model, name), getattr(model, name), err_msg=name)
    assert model.n_contacts == 1 and mf.model.n_pairs == 0  # no [body_contact]: no pairs
    assert list(model.contact_shape) == [0]
    np.testing.assert_array_equal(model.contact_param[0], [1e5, 1.0, 400.0, 0.0, 0.5, 0.002])


def test_body_contact_pairs_spheres_on_different_unjoined_bodies() -> None:
    """[body_contact] (or set_body_contact) makes the candidate pairs of a sphere and a sphere,
    capsule or box, and of a capsule's end spheres and a box: not two shapes of one body, not
    bodies joined by a joint, not an excluded
    pair, not a pair the filter refuses."""
    from kynemapy.model.file import parse_model_file

    text = BALLS_TOML.replace("[step]", "[body_contact]\nstiffness = 2e5\ndamping = 30.0\n\n[step]")
    assert parse_model_file(text).model.n_pairs == 1  # the sphere and the other body's box
    b = kp.ModelBuilder()
    nodes = [b.add_node(position=(0.3 * i, 0.0, 0.0)) for i in range(5)]
    for n in nodes:
        b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    spheres = [b.add_sphere(n, 0.1) for n in nodes]
    b.add_sphere(nodes[0], 0.05, center=(0.0, 0.1, 0.0))  # a second sphere on body 0
    b.add_capsule(nodes[1], 0.05, (0.3, 0.0, 0.0), (0.3, 0.2, 0.0))  # shape 6: pairs with spheres
    b.add_box(nodes[3], (0.1, 0.1, 0.1))  # shape 7: pairs with the spheres of other bodies
    b.add_sphere(nodes[4], 0.1, group=2, mask=2)  # shape 8: the filter keeps it from groups 1
    b.add_hinge_joint(nodes[1], nodes[2], (0.45, 0.0, 0.0), (0, 0, 1))
    b.exclude_contact(spheres[3], spheres[0])
    with pytest.raises(ModelError, match="exclude_contact: unknown shape id 99"):
        b.exclude_contact(0, 99)
    assert b.build().n_pairs == 0  # no law yet
    b.set_body_contact(stiffness=1e5, friction=0.4)
    model = b.build()
    pairs = {tuple(p) for p in model.pair_shape.tolist()}
    spheres_only = {(0, 1), (0, 2), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4), (1, 5), (2, 5), (3, 5), (4, 5)}
    # the capsule on body 1 with the spheres of bodies 0 (two), 3 and 4; not body 2's (joined)
    with_box = {(0, 7), (1, 7), (2, 7), (4, 7), (5, 7)}  # not sphere 3 (its body), not shape 8
    # the capsule's two end spheres against body 3's box: two rows of the pair (6, 7)
    assert pairs == spheres_only | {(0, 6), (5, 6), (3, 6), (4, 6)} | with_box | {(6, 7)}
    assert model.n_pairs == 23
    np.testing.assert_array_equal(model.pair_param[0], [1e5, 1.0, 0.0, 0.0, 0.4, 1e-3])


def test_box_corners_follow_its_axes_and_the_filter_default_keeps_every_pair() -> None:
    """A box turned 90° about z swaps its x and y half extents at the corners; with the default
    filter (group 1, mask all) every shape meets the ground: 1 + 8 + 2 points."""
    b = kp.ModelBuilder()
    n = b.add_node(position=(1.0, 2.0, 3.0))
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_box(n, (0.1, 0.2, 0.3), center=(1.0, 2.0, 3.5), axes=_rotation((0.0, 0.0, 1.0), math.pi / 2))
    b.add_sphere(n, 0.1)
    b.add_capsule(n, 0.05, (1.0, 2.0, 3.0), (1.0, 2.0, 4.0))
    b.add_ground_plane((0.0, 0.0, 2.0), 0.5, stiffness=1.0)
    model = b.build()
    assert model.n_contacts == 11
    corners = model.contact_offset[:8]
    np.testing.assert_allclose(np.abs(corners).max(axis=0), [0.2, 0.1, 0.8], atol=1e-15)
    np.testing.assert_allclose(corners[:, 2].min(), 0.2, atol=1e-15)
    np.testing.assert_allclose(model.contact_plane, [[0.0, 0.0, 1.0, 0.5]] * 11)
    np.testing.assert_allclose(model.contact_offset[9:], [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def test_bad_shapes_and_planes_are_refused_with_what_is_wrong() -> None:
    b = kp.ModelBuilder()
    n = b.add_node()
    bare = b.add_node(position=(1.0, 0.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    cases = [
        (lambda: b.add_sphere(n, -0.1), r"sphere \(shape 0\) radius \[m\] must be > 0"),
        (lambda: b.add_sphere(7, 0.1), r"sphere \(shape 0\): unknown node id 7"),
        (lambda: b.add_sphere(n, float("nan")), r"radius \[m\] must be finite"),
        (lambda: b.add_capsule(n, 0.1, (0, 0, 0), (0, 0, 0)), "point_a and point_b coincide"),
        (lambda: b.add_box(n, (0.1, 0.0, 0.1)), r"half_extents must be > 0"),
        (lambda: b.add_box(n, (0.1, 0.1, 0.1), axes=2 * np.eye(3)), "axes must be a rotation matrix"),
        (lambda: b.add_sphere(n, 0.1, group=1.5), "group must be an integer bit mask"),
        (lambda: b.add_ground_plane((0, 0, 0), stiffness=1.0), "normal must not be zero"),
        (lambda: b.add_ground_plane(stiffness=0.0), r"stiffness \[N/m\^exponent\] must be > 0"),
        (lambda: b.add_ground_plane(stiffness=1.0, damping=-1.0), "damping must be >= 0"),
        (lambda: b.add_ground_plane(stiffness=1.0, friction=-0.1), "friction"),
        (lambda: b.add_ground_plane(stiffness=1.0, exponent=0.5), "exponent must be >= 1"),
        (lambda: b.add_ground_plane(stiffness=1.0, slip_velocity=0.0), r"slip_velocity \[m/s\] must be > 0"),
        (lambda: b.add_ground_plane(stiffness=1.0, damping_model="hertz"), "damping_model must be one of"),
    ]
    for call, message in cases:
        with pytest.raises(ModelError, match=message):
            call()
    b.add_sphere(bare, 0.1)
    with pytest.raises(ModelError, match=r"sphere \(shape 0\) is on node 1, which carries no mass or beam"):
        b.build()


def test_model_file_contact_errors_name_the_table_and_line() -> None:
    from kynemapy.model.file import ModelFileError, parse_model_file

    with pytest.raises(ModelFileError, match=r"line 26.*shape #1 \(sphere\): radius \[m\] must be > 0"):
        parse_model_file(BALLS_TOML.replace("radius = 0.1", "radius = -0.1"))
    with pytest.raises(ModelFileError, match=r"line 44.*ground #1: damping must be >= 0"):
        parse_model_file(BALLS_TOML.replace("damping = 400.0", "damping = -400.0"))
    with pytest.raises(ModelFileError, match=r"unknown shape kind 'cone'"):
        parse_model_file(BALLS_TOML.replace('kind = "sphere"', 'kind = "cone"'))
    with pytest.raises(ModelFileError, match=r"unknown key 'radius' in a box \[\[shape\]\]"):
        parse_model_file(BALLS_TOML.replace("group = 2", "group = 2\nradius = 0.1"))
    with pytest.raises(ModelFileError, match=r"missing required key 'stiffness'"):
        parse_model_file(BALLS_TOML.replace("stiffness = 1e5", ""))
    body = BALLS_TOML.replace("[step]", "[body_contact]\nstiffness = 2e5\nfriction = -0.2\n\n[step]")
    with pytest.raises(ModelFileError, match=r"line 5\d.*\[body_contact\]: friction \(coefficient\) must be >= 0"):
        parse_model_file(body)


def test_contact_model_runs_from_a_model_file_and_its_result_file_keeps_the_contacts(tmp_path) -> None:
    """The model file's ball settles at the static penetration m g / k = 1.962e-4 m, and the
    result file's model has its contact points."""
    from kynemapy.model.file import parse_model_file

    mf = parse_model_file(BALLS_TOML)
    sim = kp.Simulation(mf.model, mf.params)
    sim.advance(1000)
    assert abs(float(sim.state.q[0, 2]) + 2.0 * G / 1e5) < 1e-9
    path = tmp_path / "balls.h5"
    sim.run(n_steps=10, output=path)
    result = kp.io.read(path)
    for name in ("n_contacts", *(f for f in kp.Model._fields if f.startswith("contact_"))):
        np.testing.assert_array_equal(getattr(result.model, name), getattr(mf.model, name), err_msg=name)


def test_contacts_of_a_model_without_contact_are_empty() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node()
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_sphere(n, 0.1)  # a shape without a plane: no contact points
    sim = kp.Simulation(b.build(), _params(1e-3))
    sim.step()
    contacts = sim.contacts()
    assert sim.model.n_contacts == 0
    assert contacts.gap.shape == (0,) and contacts.friction_force.shape == (0, 3)


def test_two_balls_collide_head_on_with_the_restitution_of_the_reduced_mass() -> None:
    """Ball A (1 kg, r = 0.1 m) at 2 m/s hits ball B (1 kg, at rest) head on, no gravity, linear
    law k = 1e5 N/m, c = 60 N s/m between bodies: the relative motion is the damped oscillator of
    the reduced mass m/2, so e = restitution(k, c, m/2) and A leaves at v (1 − e)/2, B at
    v (1 + e)/2 (e = 0.67780); the momentum m v is kept to roundoff.  h = 1e-5 s: both speeds
    within 3e-6 v (measured 1.8e-6 m/s and 1.7e-6 m/s; at h = 4e-5 s 1.9e-5 m/s: second order)."""
    m, k, c, v = 1.0, 1e5, 60.0, 2.0
    b = kp.ModelBuilder()
    a = b.add_node(position=(0.0, 0.0, 0.0), velocity=(v, 0.0, 0.0, 0.0, 0.0, 0.0))
    bb = b.add_node(position=(0.2 - 1e-12, 0.0, 0.0))
    for n in (a, bb):
        b.add_mass(n, mass=m, inertia=(0.004,) * 3)
        b.add_sphere(n, 0.1)
    b.set_body_contact(stiffness=k, damping=c)
    sim = kp.Simulation(b.build(), _params(1e-5))
    assert sim.advance(1500).max() <= 3  # contact lasts 6.6 ms
    e = restitution(k, c, m / 2)
    assert sim.contacts().gap.shape == (0,)  # pairs are not plane contacts
    pair = sim.contact_pairs()
    assert pair.node.tolist() == [[0, 1]] and pair.shape.tolist() == [[0, 1]]
    assert pair.gap[0] > 0.0 and not pair.active[0]  # apart again
    va, vb = float(sim.state.v[0, 0]), float(sim.state.v[1, 0])
    assert abs(va - v * (1 - e) / 2) < 3e-6 * v
    assert abs(vb - v * (1 + e) / 2) < 3e-6 * v
    assert abs(va + vb - v) < 1e-12


def test_ball_resting_on_a_fixed_capsule_sinks_by_the_static_penetration() -> None:
    """A 1 kg ball (r = 0.1 m) on a horizontal capsule (r = 0.05 m, axis along x, its body held
    by a fixed boundary condition), 0.3 m from the axis' middle, body contact k = 1e5 N/m: at
    rest (after 1 s) the centre is δ = m g / k below r₁ + r₂ above the axis, straight above its
    touching point, and the contact carries m g (to 1e-9 relative: a static equilibrium)."""
    m, k = 1.0, 1e5
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    bar = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(bar, mass=5.0, inertia=(0.1, 0.5, 0.5))
    b.add_capsule(bar, 0.05, (-1.0, 0.0, 0.0), (1.0, 0.0, 0.0))
    b.add_fixed_bc(bar)
    ball_node = b.add_node(position=(0.3, 0.0, 0.15))
    b.add_mass(ball_node, mass=m, inertia=(0.004,) * 3)
    b.add_sphere(ball_node, 0.1)
    b.set_body_contact(stiffness=k, damping=2.0 * math.sqrt(k * m))
    sim = kp.Simulation(b.build(), _params(1e-3))
    sim.advance(1000)
    delta = m * G / k
    np.testing.assert_allclose(sim.state.q[1, :3], [0.0, 0.0, -delta], rtol=0.0, atol=1e-9 * delta)
    pairs = sim.contact_pairs()
    assert pairs.shape.tolist() == [[1, 0]]  # the sphere first
    assert abs(pairs.normal_force[0] - m * G) < 1e-9 * m * G
    assert abs(pairs.gap[0] + delta) < 1e-9 * delta


# ------------------------------------------------------------------------- sphere against a box
def _rotation(axis: tuple[float, float, float], angle: float) -> np.ndarray:
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def spheres_on_a_box() -> tuple[kp.Model, kp.Model]:
    """A free tumbling box (centre off its node, turned axes) touched by three off-centre spheres:
    one on a face, one on an edge, one on a corner, each 2 mm deep; with and without contact."""
    center = np.array([0.02, -0.01, 0.03])
    half = np.array([0.2, 0.15, 0.1])
    r_box = _rotation((0.3, -0.5, 0.8), 0.4)
    local = []
    for radius, direction, base in (
        (0.05, (0.0, 0.0, 1.0), (0.05, 0.02, 0.1)),  # face +z
        (0.06, (1.0, 0.0, 1.0), (0.2, 0.03, 0.1)),  # edge (+x, +z)
        (0.07, (1.0, 1.0, -1.0), (0.2, 0.15, -0.1)),  # corner (+x, +y, −z)
    ):
        d = np.asarray(direction) / np.linalg.norm(direction)
        local.append((radius, np.asarray(base) + (radius - 0.002) * d))

    def build(contact: bool) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        box = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0.2, -0.1, 0.3, 0.8, -0.5, 1.1))
        b.add_mass(box, mass=2.0, inertia=(0.02, 0.03, 0.04))
        b.add_box(box, half, center=center, axes=r_box)
        offsets = [(0.01, -0.02, 0.015), (-0.02, 0.01, 0.0), (0.0, 0.015, -0.01)]
        velocities = [
            (-0.3, 0.2, -0.4, 1.0, -2.0, 0.5),
            (0.4, -0.3, 0.1, -1.5, 0.7, 2.0),
            (0.1, 0.5, 0.3, 0.3, 1.1, -0.8),
        ]
        for (radius, at), offset, velocity in zip(local, offsets, velocities, strict=True):
            c = center + r_box @ at  # the sphere's centre in the world
            n = b.add_node(position=tuple(c - np.asarray(offset)), velocity=velocity)
            b.add_mass(n, mass=0.5 + radius, inertia=(0.01, 0.02, 0.015))
            b.add_sphere(n, radius, center=tuple(c))
        if contact:
            b.set_body_contact(stiffness=3e4, damping=50.0, friction=0.5, slip_velocity=0.3)
        return b.build()

    return build(True), build(False)


def test_iteration_matrix_with_sphere_box_pairs_is_the_derivative_of_the_residual() -> None:
    """A sphere on a box's face (two coordinates free), edge (one free) and corner (none free),
    the box tumbling and its centre off its node, the spheres off-centre, sliding and spinning:
    the contact's share of the matrix against central differences, with the differences' own ε²
    error left (it falls by 4 when ε halves)."""
    model, bare = spheres_on_a_box()
    assert model.n_pairs == 6  # three sphere–box pairs, three sphere–sphere pairs (apart)
    errors = []
    for eps in (2.5e-7, 1.25e-7):
        a1, fd1, state = matrix_and_differences(model, _params(0.001), steps=2, projected=False, eps=eps)
        a0, fd0, _ = matrix_and_differences(bare, _params(0.001), state, projected=False, eps=eps)
        part, part_fd = a1 - a0, fd1 - fd0
        errors.append(np.abs(part - part_fd).max() / np.abs(part_fd).max())
    sim = kp.Simulation(model, _params(0.001))
    sim.state.assign(state)
    pairs = sim.contact_pairs()
    box_pairs = [i for i, (a, b) in enumerate(pairs.shape.tolist()) if b == 0]
    assert len(box_pairs) == 3 and pairs.active[box_pairs].all()
    assert not pairs.active[[i for i in range(6) if i not in box_pairs]].any()
    assert np.abs(part_fd).max() > 1e3
    assert errors[1] < 1e-6
    assert 3.0 < errors[0] / errors[1] < 5.0  # ε²: the tangent itself is exact


@pytest.mark.parametrize("where", ["middle", "near an edge"])
def test_ball_resting_on_a_fixed_box_sinks_by_the_static_penetration(where: str) -> None:
    """A 1 kg ball (r = 0.1 m) on the top face of a box (half extents 0.5, 0.3, 0.1 m, turned
    0.5 rad about the vertical, its centre 0.2 m off its node, its body held by a fixed boundary
    condition), k = 1e5 N/m: at rest the ball's centre is δ = m g / k below r + 0.1 m above the
    face, where it was put, and the contact carries m g (to 1e-9 relative: a static
    equilibrium)."""
    m, k = 1.0, 1e5
    r_box = _rotation((0.0, 0.0, 1.0), 0.5)
    center = np.array([0.2, 0.0, -0.1])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    slab = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(slab, mass=5.0, inertia=(0.1, 0.5, 0.5))
    b.add_box(slab, (0.5, 0.3, 0.1), center=tuple(center), axes=r_box)
    b.add_fixed_bc(slab)
    on_face = np.array([0.1, -0.05, 0.0]) if where == "middle" else np.array([0.49, 0.29, 0.0])
    top = center + r_box @ on_face + np.array([0.0, 0.0, 0.1 + 0.1])  # the ball's centre, just touching
    ball = b.add_node(position=tuple(top))
    b.add_mass(ball, mass=m, inertia=(0.004,) * 3)
    b.add_sphere(ball, 0.1)
    b.set_body_contact(stiffness=k, damping=2.0 * math.sqrt(k * m))
    sim = kp.Simulation(b.build(), _params(1e-3))
    sim.advance(1000)
    delta = m * G / k
    np.testing.assert_allclose(sim.state.q[1, :3], [0.0, 0.0, -delta], rtol=0.0, atol=1e-9 * delta)
    pairs = sim.contact_pairs()
    assert pairs.shape.tolist() == [[1, 0]]  # the sphere first
    assert abs(pairs.normal_force[0] - m * G) < 1e-9 * m * G
    assert abs(pairs.gap[0] + delta) < 1e-9 * delta


def test_a_sphere_whose_centre_entered_a_box_is_pushed_out_through_the_nearest_face() -> None:
    """A ball (r = 0.1 m) whose centre is 5 mm below a box's top face and farther from every
    other face: the distance is measured to that face, signed negative (δ = r + 5 mm), and the
    normal points into the box: f_n = k δ upward on the ball, in the state as given."""
    k = 1e5
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    slab = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(slab, mass=5.0, inertia=(0.1, 0.5, 0.5))
    b.add_box(slab, (0.5, 0.3, 0.1), axes=_rotation((0.0, 0.0, 1.0), 0.3))
    ball = b.add_node(position=(0.1, -0.05, 0.095))
    b.add_mass(ball, mass=1.0, inertia=(0.004,) * 3)
    b.add_sphere(ball, 0.1)
    b.set_body_contact(stiffness=k)
    sim = kp.Simulation(b.build(), _params(1e-3))
    pairs = sim.contact_pairs()
    assert pairs.active[0]
    assert abs(pairs.gap[0] + 0.105) < 1e-12
    assert abs(pairs.normal_force[0] - k * 0.105) < 1e-9 * k * 0.105


def test_a_box_resting_on_a_box_stands_on_its_four_corners() -> None:
    """A 1 kg box (half extents 0.1, 0.08, 0.05 m) face-on on a larger fixed box, turned 0.3 rad
    about the vertical and off its centre, box–box contact by corners (k = 1e5 N/m each): at rest
    it has sunk δ = m g / (4 k), each of its four lower corners carries m g / 4 (a static
    equilibrium, to 1e-9), and no corner of the lower box touches it."""
    m, k = 1.0, 1e5
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    base = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(base, mass=5.0, inertia=(0.1, 0.5, 0.5))
    b.add_box(base, (0.5, 0.3, 0.1))
    b.add_fixed_bc(base)
    top = b.add_node(position=(0.12, -0.05, 0.15))
    b.add_mass(top, mass=m, inertia=(0.003, 0.004, 0.005))
    b.add_box(top, (0.1, 0.08, 0.05), axes=_rotation((0.0, 0.0, 1.0), 0.3))
    b.set_body_contact(stiffness=k, damping=2.0 * math.sqrt(k * m))
    model = b.build()
    assert model.n_pairs == 16  # each box's eight corners against the other
    sim = kp.Simulation(model, _params(1e-3))
    sim.advance(1000)
    delta = m * G / (4 * k)
    assert abs(sim.state.q[1, 2] + delta) < 1e-9 * delta
    # without friction its place on the face is neutral: it stays where it was put, to round-off
    assert np.abs(sim.state.q[1, :2]).max() < 1e-10
    pairs = sim.contact_pairs()
    on_top = pairs.active & (pairs.node[:, 0] == top)
    assert on_top.sum() == 4 and not (pairs.active & (pairs.node[:, 0] == base)).any()
    np.testing.assert_allclose(pairs.normal_force[on_top], m * G / 4, rtol=1e-9)
    np.testing.assert_allclose(pairs.gap[on_top], -delta, rtol=1e-9)


def boxes_and_a_sphere_in_a_box() -> tuple[kp.Model, kp.Model]:
    """A free tumbling box B; a box A above it, turned so that one corner dips 2 mm into B's top
    face; a heavy sphere whose centre is 10 mm inside B's side face: with and without contact."""
    half_b = np.array([0.3, 0.2, 0.1])
    r_a = _rotation((1.0, 1.0, 0.0), 0.6)
    half_a = np.array([0.06, 0.05, 0.04])
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half_a @ r_a.T
    lowest = corners[np.argmin(corners[:, 2])]

    def build(contact: bool) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        nb = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0.2, -0.1, 0.3, 0.8, -0.5, 1.1))
        b.add_mass(nb, mass=3.0, inertia=(0.05, 0.06, 0.08))
        b.add_box(nb, half_b, center=(0.01, 0.02, -0.01))
        na = b.add_node(position=(0.05 - lowest[0], 0.03 - lowest[1], 0.09 - 0.002 - lowest[2]),
                        velocity=(-0.3, 0.2, -0.4, 1.0, -2.0, 0.5))  # fmt: skip
        b.add_mass(na, mass=0.7, inertia=(0.002, 0.003, 0.004))
        b.add_box(na, half_a, axes=r_a)
        nc = b.add_node(position=(0.31 - 0.01, -0.05, 0.0), velocity=(0.4, -0.3, 0.1, -1.5, 0.7, 2.0))
        b.add_mass(nc, mass=5.0, inertia=(0.01, 0.02, 0.015))
        b.add_sphere(nc, 0.05)
        if contact:
            b.set_body_contact(stiffness=3e4, damping=50.0, friction=0.5, slip_velocity=0.3)
        return b.build()

    return build(True), build(False)


def test_iteration_matrix_with_corners_and_a_centre_inside_a_box_is_the_derivative() -> None:
    """Box–box contact by corners (one corner of a turned box inside another box's top face) and
    a sphere whose centre is inside a box, both boxes tumbling: the contact's share of the matrix
    against central differences, the differences' ε² error left."""
    model, bare = boxes_and_a_sphere_in_a_box()
    errors = []
    for eps in (2.5e-7, 1.25e-7):
        a1, fd1, state = matrix_and_differences(model, _params(0.001), steps=2, projected=False, eps=eps)
        a0, fd0, _ = matrix_and_differences(bare, _params(0.001), state, projected=False, eps=eps)
        part, part_fd = a1 - a0, fd1 - fd0
        errors.append(np.abs(part - part_fd).max() / np.abs(part_fd).max())
    sim = kp.Simulation(model, _params(0.001))
    sim.state.assign(state)
    pairs = sim.contact_pairs()
    corner_in = pairs.active & (pairs.node[:, 0] == 1) & (pairs.node[:, 1] == 0)
    sphere_in = pairs.active & (pairs.node[:, 0] == 2) & (pairs.node[:, 1] == 0)
    assert corner_in.sum() == 1 and sphere_in.sum() == 1
    assert pairs.gap[sphere_in][0] < -0.05  # the centre is still inside: δ > r
    assert np.abs(part_fd).max() > 1e3
    assert errors[1] < 1e-6
    assert 3.0 < errors[0] / errors[1] < 5.0  # ε²: the tangent itself is exact


# ------------------------------------------------------------------------- contact energy
@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_the_rows_strain_energy_holds_the_contact_springs_energy_at_rest(law: str) -> None:
    """A ball at rest on the ground (δ = m g / k, or (m g / k)^(1/e) for f = k δ^e) and one at
    rest on a box (body contact): the rows' ``strain_energy`` is the springs' ``k δ^(e+1)/(e+1)``
    (to 1e-9 relative), in the run's rows and from :func:`kynemapy.engine.energies.row_invariants`
    at the same state."""
    from kynemapy.engine.energies import row_invariants

    m, k = 1.0, 1e5 if law == "linear" else 3e6
    ex = 1.0 if law == "linear" else 1.5
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    ball = b.add_node(position=(0.0, 0.0, 0.1))
    b.add_mass(ball, mass=m, inertia=(0.004,) * 3)
    b.add_sphere(ball, 0.1)
    b.add_ground_plane(stiffness=k, exponent=ex, damping=2.0 * math.sqrt(k * m))
    slab = b.add_node(position=(1.0, 0.0, 0.0))
    b.add_mass(slab, mass=5.0, inertia=(0.1, 0.5, 0.5))
    b.add_box(slab, (0.3, 0.3, 0.1), group=2, mask=2)  # kept off the ground plane (group 1)
    b.add_fixed_bc(slab)
    other = b.add_node(position=(1.0, 0.0, 0.2))
    b.add_mass(other, mass=m, inertia=(0.004,) * 3)
    b.add_sphere(other, 0.1, group=2, mask=2)
    b.set_body_contact(stiffness=k, exponent=ex, damping=2.0 * math.sqrt(k * m))
    sim = kp.Simulation(b.build(), _params(1e-3))
    rows = sim.rollout(1500)
    delta = (m * G / k) ** (1.0 / ex)
    expected = 2 * k * delta ** (ex + 1.0) / (ex + 1.0)  # the ball on the ground, the ball on the box
    assert abs(rows["strain_energy"][-1] - expected) < 1e-9 * expected
    again = row_invariants(sim.model, rows["q"][-1], rows["v"][-1])["strain_energy"]
    assert abs(float(again) - expected) < 1e-9 * expected


def test_an_undamped_bouncing_balls_energy_is_kept_in_the_contact_spring() -> None:
    """A ball dropped from 0.2 m onto an undamped ground spring (k = 1e5 N/m, no numerical
    damping): kinetic + gravity + the spring's k δ²/2 stays the energy it started with while
    the spring holds up to two thirds of it, within 2e-3 relative at h = 0.2 ms, and that error
    falls with h at about second order (measured 4.6e-3, 1.8e-3, 3.9e-4 J at h = 0.4, 0.2, 0.1
    ms; the kink of the force at first touch keeps the halvings unequal)."""
    errors = []
    for h in (4e-4, 2e-4, 1e-4):
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        n = b.add_node(position=(0.0, 0.0, 0.3))
        b.add_mass(n, mass=1.0, inertia=(0.004,) * 3)
        b.add_sphere(n, 0.1)
        b.add_ground_plane(stiffness=1e5)
        sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=1.0, atol=1e-12, rtol=1e-12))
        rows = sim.rollout(round(0.6 / h))
        energy = rows["kinetic_energy"] + rows["potential_energy"] + rows["strain_energy"]
        assert rows["strain_energy"].max() > 0.6 * energy[0]  # the spring did hold the energy
        errors.append(float(np.abs(energy - energy[0]).max()))
    assert errors[1] < 2e-3 * (1.0 * G * 0.3)  # of the energy it started with [J]
    assert errors[0] / errors[2] > 8.0  # two halvings: order about two
