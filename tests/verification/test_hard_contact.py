"""Hard (nonsmooth) contact against ground planes (docs/contact.md, "Hard contact"): the decoupled
nonsmooth generalized-α step of the joint stops (Brüls, Acary & Cardona, CMAME 2014) on the points
of spheres and box corners, Newton's restitution law and exact Coulomb friction.

Every number is checked against a closed form: free fall, Newton's law with the velocity at the
located impact, a body at rest (impulse m g h per step), a box on an incline (sticking, or sliding
at g (sin a − μ cos a)), a box or ball sliding on flat ground (μ g).

Where the scheme's error comes from at an impact: a step in which an open point crosses the plane
is split at the impact time located from the gaps and rates at its two ends
(:mod:`kynemapy.run.impact_event`; exact for free flight, where the gap is a quadratic in time and
the smooth scheme is exact), aimed at a penetration η = ``PENETRATION`` (1e-12 m) so that the
sub-step surely closes the point: the impact is late by η/v*, Newton's law sees ``v* + g η / v*``
and the position correction lifts the ball by η, so the rebound apex is ``e² (h₀ + η)``, whatever h.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.model.errors import ModelError
from kynemapy.run.impact_event import PENETRATION

G = 9.81
MASS, RADIUS = 2.0, 0.1  # kg, m
BALL_INERTIA = 0.4 * MASS * RADIUS**2  # kg m², a solid ball
BOX_MASS, HALF = 3.0, (0.2, 0.15, 0.1)  # kg, m


def _params(h: float) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def ball(h: float, e: float, height: float, mu: float = 0.0, speed: float = 0.0) -> kp.Simulation:
    """A solid ball (m = 2 kg, r = 0.1 m) whose lowest point is ``height`` above the hard plane z = 0,
    moving at ``speed`` along x without spin."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, RADIUS + height), velocity=(speed, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(n, mass=MASS, inertia=(BALL_INERTIA, BALL_INERTIA, BALL_INERTIA))
    b.add_sphere(n, RADIUS)
    b.add_ground_plane(law="hard", restitution=e, friction=mu)
    return kp.Simulation(b.build(), _params(h))


def ball_gap(sim: kp.Simulation, height: float) -> float:
    """The ball's gap to z = 0 [m] from its node's displacement (written here: z − r)."""
    return float(RADIUS + height + sim.state.q[0, 2] - RADIUS)


def box_on_incline(angle: float, mu: float, h: float = 1e-3, speed: float = 0.0) -> tuple[kp.Simulation, np.ndarray]:
    """A box (3 kg, half extents 0.2, 0.15, 0.1 m) resting face down on a hard plane through the origin
    tilted by ``angle`` about y, moving at ``speed`` along its local x; returns the simulation and
    the box's axes (columns: local x along the slope, y, the plane's normal)."""
    c, s = math.cos(angle), math.sin(angle)
    axes = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
    normal = axes[:, 2]
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    centre = HALF[2] * normal
    node = b.add_node(position=tuple(centre), velocity=(*(speed * axes[:, 0]), 0.0, 0.0, 0.0))
    b.add_mass(node, mass=BOX_MASS, inertia=(0.05, 0.05, 0.05))
    b.add_box(node, HALF, center=tuple(centre), axes=axes)
    b.add_ground_plane(normal=tuple(normal), offset=0.0, law="hard", friction=mu)
    return kp.Simulation(b.build(), _params(h)), axes


# ----------------------------------------------------------------------- the model
def test_a_hard_plane_adds_no_compiled_contact_point_and_lists_its_points() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 1.0))
    b.add_mass(n, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_box(n, (0.1, 0.2, 0.3))
    b.add_sphere(n, 0.1)
    b.add_ground_plane(normal=(0, 0, 2), offset=-0.5, law="hard", restitution=0.25, friction=0.4)
    model = b.build()
    assert model.n_contacts == 0
    table = model.hard_contacts
    assert table.shape == (9, 13)
    np.testing.assert_array_equal(table[:, 0], 0.0)  # node
    np.testing.assert_array_equal(table[:, 1], [0] * 8 + [1])  # shape
    np.testing.assert_array_equal(table[:, 7:], [[0.0, 0.0, 1.0, -0.5, 0.25, 0.4]] * 9)
    np.testing.assert_array_equal(table[:8, 6], 0.0)
    assert table[8, 6] == 0.1
    np.testing.assert_array_equal(np.sort(table[:8, 5]), [-0.3] * 4 + [0.3] * 4)  # the corners, from the node


def test_the_compliant_law_is_unchanged_and_needs_its_stiffness() -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(0.0, 0.0, 0.1))
    b.add_mass(n, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(n, 0.1)
    b.add_ground_plane(stiffness=1e6, damping=10.0, friction=0.3)
    model = b.build()
    assert model.n_contacts == 1 and model.hard_contacts.shape == (0, 13)
    np.testing.assert_array_equal(model.contact_param[0], [1e6, 1.0, 10.0, 0.0, 0.3, 1e-3])
    with pytest.raises(ModelError, match=r"ground plane 1: stiffness is required with law='compliant'"):
        b.add_ground_plane()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"law": "hard", "stiffness": 1e6}, r"ground plane 0: stiffness is a parameter of the compliant law"),
        ({"law": "hard", "damping": 3.0}, r"ground plane 0: damping is a parameter of the compliant law"),
        ({"law": "hard", "restitution": 1.5}, r"ground plane 0 restitution .* must be <= 1, got 1.5"),
        ({"law": "hard", "restitution": -0.1}, r"ground plane 0 restitution .* must be >= 0, got -0.1"),
        ({"law": "hard", "friction": -0.2}, r"ground plane 0 friction \(coefficient\) must be >= 0, got -0.2"),
        ({"law": "hard", "restitution": float("nan")}, r"ground plane 0 restitution .* must be finite"),
        ({"law": "soft", "stiffness": 1e6}, r"ground plane 0 law must be one of 'compliant', 'hard', got 'soft'"),
        ({"stiffness": 1e6, "restitution": 0.5}, r"ground plane 0: restitution applies to law='hard' only"),
    ],
)
def test_hard_plane_arguments_are_checked(kwargs: dict, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        kp.ModelBuilder().add_ground_plane(**kwargs)


def test_a_start_inside_a_hard_plane_is_refused() -> None:
    with pytest.raises(ModelError, match=r"shape 0 \(node 0\) starts 0.01.* m inside hard ground plane 0"):
        ball(1e-3, 0.0, -0.01)


# ----------------------------------------------------------------------- impacts
def test_a_ball_dropped_with_e_0_comes_to_rest_on_the_plane() -> None:
    """Dropped from 0.5 m with e = 0: the impact is found in the step containing t* = √(2 h₀/g); from
    then on the gap is 0 to 1e-12 m and the normal velocity 0 to 1e-12 m/s; at no step is the ball
    below the plane by more than 1e-12 m."""
    h, h0 = 1e-3, 0.5
    sim = ball(h, 0.0, h0)
    t_star = math.sqrt(2.0 * h0 / G)
    gaps, rates = [], []
    for _ in range(600):
        assert sim.step().converged
        gaps.append(ball_gap(sim, h0))
        rates.append(float(sim.state.v[0, 2]))
    gaps_a = np.array(gaps)
    assert gaps_a.min() >= -1e-12
    first = int(np.flatnonzero(gaps_a <= 1e-12)[0])  # row k: after step k + 1
    assert first * h < t_star <= (first + 1) * h
    assert np.all(np.abs(gaps_a[first:]) <= 1e-12)
    assert np.all(np.abs(np.array(rates[first:])) <= 1e-12)
    assert np.all(gaps_a[:first] > 0.0)


@pytest.mark.parametrize("e", [1.0, 0.5])
def test_the_rebound_apex_is_e_squared_h0(e: float) -> None:
    """Dropped from h₀ = 0.5 m, h = 4, 2, 1, 0.5 ms: the impact step is split at the located impact,
    t* = √(2 h₀/g) late by η/v* (η = 1e-12 m the penetration aimed at, v* = √(2 g h₀)) to within
    the round-off of the time, 1e-12 s; Newton's law there sees ``v_z = −(v* + g η/v*)`` (1e-12 m/s)
    and gives exactly −e times it; from then on the apex of the free flight, ``z + v_z²/2g`` at
    every step until it lands again, is ``e² (h₀ + η)`` (the correction lifts the ball by η) to
    1e-12 m: the error ``e² η`` does not depend on h.  The apex on the step grid is within its
    sampling, g h²/8, below it.  Before the impact location (Newton's law with the velocity at the
    start of the impact step) the error was below e² h₀ by up to ``2 g h / v*`` relative: 1.55e-2,
    6.7e-3, 2.3e-3, 1.05e-4 m for h₀ = 1 m, e = 1 (bench/contact.py's bounce)."""
    h0 = 0.5
    v_star = math.sqrt(2.0 * G * h0)
    t_star = math.sqrt(2.0 * h0 / G)
    for h in (4e-3, 2e-3, 1e-3, 5e-4):
        sim = ball(h, e, h0)
        events = sim.joint_stops.events
        flight = 2.0 * e * v_star / G  # the rebound's flight time
        apexes, gaps, heights = [], [], []
        for _ in range(round((t_star + 0.9 * flight) / h)):
            assert sim.step().converged
            gap, vz = ball_gap(sim, h0), float(sim.state.v[0, 2])
            gaps.append(gap)
            if sim.time > t_star + h:
                apexes.append(gap + vz * vz / (2.0 * G))
                heights.append(gap)
        assert min(gaps) >= -1e-12
        assert sim.step_count == len(gaps) and sim.time == len(gaps) * h  # on the step grid
        assert abs(events.impact_time - (t_star + PENETRATION / v_star)) <= 1e-12
        assert abs(events.v_before[0, 2] + v_star + G * PENETRATION / v_star) <= 1e-12
        assert events.v_after[0, 2] == pytest.approx(-e * events.v_before[0, 2], rel=1e-15)
        exact = e * e * (h0 + PENETRATION)
        assert np.all(np.abs(np.array(apexes) - exact) <= 1e-12)
        assert exact - G * h * h / 8.0 - 1e-12 <= max(heights) <= exact + 1e-12


def test_a_free_flight_is_stepped_as_without_the_plane() -> None:
    """No impact, no change: a ball thrown up and falling 3 m above a hard plane (e = 1) steps the
    same states, bit for bit, as the same ball without any plane (the smooth scheme alone), and no
    step is split."""
    states = []
    for hard in (True, False):
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        n = b.add_node(position=(0.0, 0.0, 3.0 + RADIUS), velocity=(0.5, 0.0, 2.0, 0.1, 0.2, 0.3))
        b.add_mass(n, mass=MASS, inertia=(BALL_INERTIA, BALL_INERTIA, BALL_INERTIA))
        b.add_sphere(n, RADIUS)
        if hard:
            b.add_ground_plane(law="hard", restitution=1.0)
        sim = kp.Simulation(b.build(), _params(1e-3))
        for _ in range(500):
            assert sim.step().converged
        sim.advance(300)
        if hard:
            assert sim.joint_stops.events.cuts == 0 and math.isnan(sim.joint_stops.events.impact_time)
        states.append(sim.state)
    for name in ("q", "v", "vd", "a", "time", "step"):
        assert np.array_equal(getattr(states[0], name), getattr(states[1], name)), name


def test_a_ball_at_rest_gets_m_g_h_per_step() -> None:
    """A ball resting on the plane (e = 0.5: no impact at rest): per step the normal impulse is
    m g h to 1e-9 relative, the gap stays 0 to 1e-12 m and the ball at rest (1e-12 m/s)."""
    h = 1e-3
    sim = ball(h, 0.5, 0.0)
    contacts = sim.joint_stops.contacts
    for _ in range(500):
        assert sim.step().converged
        assert abs(contacts.normal_impulse[0] / (MASS * G * h) - 1.0) <= 1e-9
        assert contacts.active[0]
        assert abs(ball_gap(sim, 0.0)) <= 1e-12
        assert np.all(np.abs(sim.state.v[0]) <= 1e-12)


def test_a_box_resting_on_its_four_corners_stays_at_rest() -> None:
    """A box face down on flat ground (frictionless): over 1 s its displacement stays below 1e-12 m
    and its rotation below 1e-12 rad, four corners are active, and their normal impulses add up to
    m g h per step (to 1e-9 relative)."""
    h = 1e-3
    sim, _ = box_on_incline(0.0, 0.0, h)
    contacts = sim.joint_stops.contacts
    for _ in range(1000):
        assert sim.step().converged
        assert abs(contacts.normal_impulse.sum() / (BOX_MASS * G * h) - 1.0) <= 1e-9
        assert np.count_nonzero(contacts.active) == 4
    assert np.abs(sim.state.q[0, :3]).max() <= 1e-12
    assert np.abs(sim.state.q[0, 4:7]).max() <= 0.5e-12


def test_a_tilted_box_dropped_never_penetrates_and_never_gains_energy() -> None:
    """A box released 5 cm above the plane, tilted by 0.3 rad about x and 0.2 rad about y, e = 0.5,
    frictionless: over 1 s no corner is ever below the plane by more than 1e-12 m (the corners'
    heights written here from the node's pose), and the energy (kinetic + gravity) never rises
    above its start by more than 1e-9 J."""
    h = 1e-3
    ax, ay = 0.3, 0.2
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    axes = rx @ ry
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    corners = (signs * HALF) @ axes.T
    z0 = 0.05 - corners[:, 2].min()
    inertia = 0.05
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    node = b.add_node(position=(0.0, 0.0, z0))
    b.add_mass(node, mass=BOX_MASS, inertia=(inertia, inertia, inertia))
    b.add_box(node, HALF, center=(0.0, 0.0, z0), axes=axes)
    b.add_ground_plane(law="hard", restitution=0.5)
    sim = kp.Simulation(b.build(), _params(h))
    e0 = BOX_MASS * G * z0
    lowest = []
    for _ in range(1000):
        assert sim.step().converged
        q = sim.state.q[0]
        w, x, y, z = q[3:7]
        rot = np.array(
            [
                [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
            ]
        )
        heights = z0 + q[2] + (corners @ rot.T)[:, 2]
        lowest.append(heights.min())
        v = sim.state.v[0]
        energy = 0.5 * BOX_MASS * float(v[:3] @ v[:3]) + 0.5 * inertia * float(v[3:] @ v[3:])
        energy += BOX_MASS * G * (z0 + q[2])
        assert energy <= e0 + 1e-9
    assert min(lowest) >= -1e-12
    assert min(lowest) <= 1e-12  # it did land


# ----------------------------------------------------------------------- friction
def test_a_box_on_an_incline_sticks_when_tan_a_is_below_mu() -> None:
    """tan a = 0.31 < μ = 0.5: over 1 s the box moves by less than 1e-9 m, and the impulses add up
    to the weight's: Σ Λ_N = m g cos a h, |Σ Λ_T| = m g sin a h (1e-9 relative)."""
    angle, mu, h = 0.3, 0.5, 1e-3
    sim, _ = box_on_incline(angle, mu, h)
    contacts = sim.joint_stops.contacts
    for _ in range(1000):
        assert sim.step().converged
    assert np.abs(sim.state.q[0, :3]).max() < 1e-9
    assert abs(contacts.normal_impulse.sum() / (BOX_MASS * G * math.cos(angle) * h) - 1.0) <= 1e-9
    friction = contacts.friction_impulse.sum(axis=0)
    assert abs(np.hypot(*friction) / (BOX_MASS * G * math.sin(angle) * h) - 1.0) <= 1e-9
    assert np.all(np.hypot(*contacts.friction_impulse.T) <= mu * contacts.normal_impulse * (1 + 1e-12))


def test_a_box_on_an_incline_slides_at_g_sin_minus_mu_cos() -> None:
    """tan a = 0.68 > μ = 0.3: after 1 s the box's velocity down the slope is a t and its travel a t²/2
    with a = g (sin a − μ cos a) = 3.1102 m/s² (1e-6 relative; measured 2e-14); it neither lifts
    nor turns."""
    angle, mu, h = 0.6, 0.3, 1e-3
    sim, axes = box_on_incline(angle, mu, h)
    n = 1000
    for _ in range(n):
        assert sim.step().converged
    a = G * (math.sin(angle) - mu * math.cos(angle))
    down = -axes[:, 0]
    t = n * h
    assert abs(float(sim.state.v[0, :3] @ down) / (a * t) - 1.0) <= 1e-6
    assert abs(float(sim.state.q[0, :3] @ down) / (0.5 * a * t * t) - 1.0) <= 1e-6
    assert abs(float(sim.state.q[0, :3] @ axes[:, 2])) <= 1e-12
    assert np.abs(sim.state.q[0, 4:7]).max() <= 1e-12


def test_a_box_sliding_on_flat_ground_decelerates_at_mu_g_and_stops() -> None:
    """Thrown at 2 m/s with μ = 0.4: v = v₀ − μ g t (1e-6 relative at t = 0.4 s), travel v₀ t − μ g t²/2;
    it stops within the step containing t = v₀/(μ g) = 0.5097 s, and stays (1e-12 m/s)."""
    mu, v0, h = 0.4, 2.0, 1e-3
    sim, _ = box_on_incline(0.0, mu, h, speed=v0)
    for _ in range(400):
        assert sim.step().converged
    t = 0.4
    assert abs(sim.state.v[0, 0] / (v0 - mu * G * t) - 1.0) <= 1e-6
    assert abs(sim.state.q[0, 0] / (v0 * t - 0.5 * mu * G * t * t) - 1.0) <= 1e-6
    stop = v0 / (mu * G)
    speeds = []
    for _ in range(400):
        assert sim.step().converged
        speeds.append(float(sim.state.v[0, 0]))
    stopped = 400 + int(np.flatnonzero(np.abs(speeds) <= 1e-12)[0]) + 1  # steps done when it first rests
    assert (stopped - 1) * h < stop <= stopped * h
    assert np.all(np.abs(speeds[stopped - 400 :]) <= 1e-12)


def test_a_ball_thrown_sliding_decelerates_at_mu_g_until_it_rolls() -> None:
    """A ball thrown at 3 m/s without spin, μ = 0.2: it slides with v = v₀ − μ g t and spins up at
    ω = 5 μ g t / (2 r) (1e-6 relative at t = 0.5 s) until t* = 2 v₀ / (7 μ g) = 0.437 s... (here before)."""
    mu, v0, h = 0.2, 3.0, 1e-3
    sim = ball(h, 0.0, 0.0, mu=mu, speed=v0)
    t_star = 2.0 * v0 / (7.0 * mu * G)
    n = int(0.8 * t_star / h)
    for _ in range(n):
        assert sim.step().converged
    t = n * h
    assert abs(sim.state.v[0, 0] / (v0 - mu * G * t) - 1.0) <= 1e-6
    assert abs(sim.state.v[0, 4] / (2.5 * mu * G * t / RADIUS) - 1.0) <= 1e-6  # ω_y: rolling forward
    for _ in range(int(0.4 * t_star / h)):
        assert sim.step().converged
    assert abs(sim.state.v[0, 0] / (5.0 / 7.0 * v0) - 1.0) <= 1e-6  # rolling: v = ω r = 5/7 v₀
    assert abs(sim.state.v[0, 4] * RADIUS / sim.state.v[0, 0] - 1.0) <= 1e-9


# ----------------------------------------------------------------------- with hard joint limits
def test_hard_joint_limits_and_hard_contact_in_one_model() -> None:
    """A pendulum (m = 2 kg, centre 0.8 m from its hinge, I_c = 0.05 kg m²) released from the horizontal
    onto its hard stop at −60° (e = 0), beside a ball resting on a hard plane, in one model: the stop
    is found in the step containing the closed-form impact time t* = 0.42934 s (energy conservation
    and DOP853 in tests/verification/test_hard_joint_limits.py), then the pendulum rests on it (the
    angle at −π/3 to 1e-12 rad, the rate 0 to 1e-12 rad/s) with the stop's impulse per step
    ``m g l cos(60°) h`` (the weight's torque about the hinge) to within the torque's change over the
    smooth step's fall into the stop, ``|tan θ_stop| h² a_max`` relative (a_max = m g l / I = 11.8
    rad/s²: 2.0e-5; measured 5.1e-6, as with the stop alone in test_hard_joint_limits.py), while
    the ball gets ``m g h`` per step (1e-9 relative)."""
    h, mass, length, ic, stop = 1e-3, 2.0, 0.8, 0.05, -math.pi / 3
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    arm = b.add_node(position=(0.0, length, 0.0))
    b.add_mass(arm, mass=mass, inertia=(ic, ic, ic))
    j = b.add_hinge_joint(kp.GROUND, arm, (0, 0, 0), (1, 0, 0), limits=(stop, 1.0), limit_restitution=0.0)
    n = b.add_node(position=(3.0, 0.0, RADIUS - 2.0))
    b.add_mass(n, mass=MASS, inertia=(BALL_INERTIA, BALL_INERTIA, BALL_INERTIA))
    b.add_sphere(n, RADIUS)
    b.add_ground_plane(offset=-2.0, law="hard")
    sim = kp.Simulation(b.build(), _params(h))
    contacts = sim.joint_stops.contacts
    impulses = []
    for _ in range(1500):
        assert sim.step().converged
        impulses.append(sim.stop_impulse(j))
        assert abs(contacts.normal_impulse[0] / (MASS * G * h) - 1.0) <= 1e-9
    first = int(np.flatnonzero(np.array(impulses) > 0.0)[0])  # impulses[k]: step k + 1
    assert first * h < 0.42934 <= (first + 1) * h
    out = sim.joint_output(j)
    assert abs(out[0] - stop) <= 1e-12 and abs(out[1]) <= 1e-12
    a_max = mass * G * length / (mass * length**2 + ic)
    assert abs(impulses[-1] / (mass * G * length * math.cos(stop) * h) - 1.0) <= abs(math.tan(stop)) * h * h * a_max


# ----------------------------------------------------------------------- queries, refusals, model file
def test_contact_impulses_query() -> None:
    """``contact_impulses()``: one row per point; a box resting with friction on a 0.3 rad incline has
    4 active corners (the top ones inactive), Σ Λ_N = m g cos a h, Σ Λ_T = m g sin a h up the slope
    (along the plane's tangents, returned with them), |Λ_T| <= μ Λ_N per point; empty without hard
    planes."""
    angle, mu, h = 0.3, 0.5, 1e-3
    sim, axes = box_on_incline(angle, mu, h)
    before = sim.contact_impulses()
    assert before.normal_impulse.shape == (8,) and not np.any(before.active)
    sim.advance(3)
    c = sim.contact_impulses()
    assert c.friction_impulse.shape == (8, 2) and c.tangents.shape == (8, 2, 3)
    np.testing.assert_array_equal(c.node, 0)
    np.testing.assert_array_equal(c.shape, 0)
    np.testing.assert_array_equal(c.plane, 0)
    assert np.count_nonzero(c.active) == 4
    assert np.all(c.normal_impulse[~c.active] == 0.0)
    assert abs(c.normal_impulse.sum() / (BOX_MASS * G * math.cos(angle) * h) - 1.0) <= 1e-9
    world = np.einsum("ki,kij->j", c.friction_impulse, c.tangents)  # the friction impulses in world
    up_slope = axes[:, 0]
    np.testing.assert_allclose(world, BOX_MASS * G * math.sin(angle) * h * up_slope, rtol=0, atol=1e-12)
    assert np.all(np.hypot(*c.friction_impulse.T) <= mu * c.normal_impulse * (1 + 1e-12))
    for t in c.tangents:  # unit, orthogonal to each other and to the normal
        np.testing.assert_allclose(t @ t.T, np.eye(2), atol=1e-15)
        np.testing.assert_allclose(t @ axes[:, 2], 0.0, atol=1e-15)
    sim.state.v[0, :3] = 5.0 * axes[:, 2]  # thrown off the plane: no point closes in the next step
    sim.step()
    assert not np.any(sim.contact_impulses().active)
    b = kp.ModelBuilder()
    n = b.add_node()
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    empty = kp.Simulation(b.build(), _params(1e-3)).contact_impulses()
    assert empty.normal_impulse.shape == (0,) and empty.friction_impulse.shape == (0, 2)


def test_step_control_and_batch_refuse_hard_contact() -> None:
    sim = ball(1e-3, 0.5, 0.2)
    with pytest.raises(ValueError, match=r"advance_to .* hard contact \(add_ground_plane\(law='hard'\) or .*\) yet"):
        sim.advance_to(0.1)
    with pytest.raises(ValueError, match=r"run\(control=\.\.\.\) .* hard contact \(add_ground_plane\(law='hard'\) or"):
        sim.run(t_end=0.1, control=kp.StepControl())
    with pytest.raises(ValueError, match=r"Batch: member 0's model has .* hard contact"):
        kp.Batch([sim])


HARD_TOML = """
[[node]]
name = "ball"
position = [0.0, 0.0, 0.1]

[[mass]]
node = "ball"
mass = 2.0
inertia = [0.008, 0.008, 0.008]

[[shape]]
kind = "sphere"
node = "ball"
radius = 0.1

[[ground]]
law = "hard"
restitution = 0.5
friction = 0.3

[step]
h = 0.001
"""


def test_model_file_hard_ground() -> None:
    """``[[ground]]`` with ``law = "hard"`` makes the builder's hard plane; its errors carry the file's line."""
    from kynemapy.model.file import parse_model_file

    model = parse_model_file(HARD_TOML).model
    assert model.n_contacts == 0
    np.testing.assert_array_equal(model.hard_contacts, [[0, 0, 0, 0, 0, 0, 0.1, 0, 0, 1, 0, 0.5, 0.3]])
    with pytest.raises(ModelError, match=r"line 1[78].*stiffness is a parameter of the compliant law"):
        parse_model_file(HARD_TOML.replace('law = "hard"', 'law = "hard"\nstiffness = 1e5'))
    with pytest.raises(ModelError, match=r"restitution .* must be <= 1"):
        parse_model_file(HARD_TOML.replace("restitution = 0.5", "restitution = 2.0"))
    with pytest.raises(ModelError, match=r"stiffness"):
        parse_model_file(HARD_TOML.replace('law = "hard"\n', ""))


def test_every_stepping_path_gives_the_same_corrected_states(tmp_path) -> None:
    """A ball thrown sliding and bouncing (e = 0.5, μ = 0.2): step(), advance(), rollout(), run() to a
    file (and restarted from it), run(adaptive=True) and run(loads=...) step the same corrected
    states, bit for bit, the impact steps split at the impact alike; the file's model keeps the
    hard contact points; no recorded row is below the plane by more than 1e-12 m."""
    h, n, height = 1e-3, 500, 0.3

    def make() -> kp.Simulation:
        return ball(h, 0.5, height, mu=0.2, speed=1.0)

    a = make()
    for _ in range(n):
        a.step()
    b = make()
    b.advance(n)
    c = make()
    rows = c.rollout(n, every=1)
    d = make()
    path = tmp_path / "ball.h5"
    d.run(n_steps=300, output=path, every=50)
    e = kp.Simulation.restart(path)
    assert np.array_equal(e.model.hard_contacts, d.model.hard_contacts)
    e.run(n_steps=200, output=path)
    f = make()
    f.run(n_steps=n, adaptive=True)
    g = make()
    g.run(n_steps=n, loads=lambda sim, t: None)
    for sim in (b, c, e, f, g):
        assert np.array_equal(sim.state.q, a.state.q)
        assert np.array_equal(sim.state.v, a.state.v)
    assert rows["q"][-1].tolist() == a.state.q.tolist()
    assert np.all(rows["q"][:, 0, 2] + height >= -1e-12)
    vz = rows["v"][:, 0, 2]
    assert np.any((vz[:-1] < 0.0) & (vz[1:] > 0.0))  # it bounced (at 0.247 s, inside a step: split there)


def test_a_pendulum_bob_comes_to_rest_on_a_hard_floor() -> None:
    """A body on a hinge (m = 2 kg, centre 0.8 m from the axis, I_c = 0.05 kg m²) carrying a sphere
    (r = 0.05 m) at its centre, released from the horizontal onto a hard floor 0.4 m below the axis
    (e = 0): the contact and the hinge's bilateral rows in one problem.  It comes to rest at
    θ_c = −asin((0.4 − r)/l) (1e-12 rad; the rate 1e-12 rad/s, the bob's gap never below −1e-12 m)
    and the floor carries the weight, Λ_N = m g h per step (the contact point is under the centre
    of mass), to within the weight's lever change over the smooth step's fall into the floor,
    ``|tan θ_c| h² a_max`` relative (a_max = m g l / I: 5.7e-6; measured 2.6e-6)."""
    h, mass, length, ic, r, drop = 1e-3, 2.0, 0.8, 0.05, 0.05, 0.4
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    arm = b.add_node(position=(0.0, length, 0.0))
    b.add_mass(arm, mass=mass, inertia=(ic, ic, ic))
    j = b.add_hinge_joint(kp.GROUND, arm, (0, 0, 0), (1, 0, 0))
    b.add_sphere(arm, r)
    b.add_ground_plane(offset=-drop, law="hard")
    sim = kp.Simulation(b.build(), _params(h))
    theta_c = -math.asin((drop - r) / length)
    for _ in range(2000):
        assert sim.step().converged
        assert sim.state.q[0, 2] + drop - r >= -1e-12  # the bob's gap: its centre's z − r − (−drop)
    theta, rate, _ = sim.joint_output(j)
    assert abs(theta - theta_c) <= 1e-12 and abs(rate) <= 1e-12
    a_max = mass * G * length / (mass * length**2 + ic)
    lam = sim.contact_impulses().normal_impulse[0]
    assert abs(lam / (mass * G * h) - 1.0) <= abs(math.tan(theta_c)) * h * h * a_max


def test_a_ball_rolls_down_an_incline_at_five_sevenths_g_sin_a() -> None:
    """A solid ball released on a 0.35 rad incline, μ = 0.3 (rolls without slipping while
    tan a < 7/2 μ): after 1 s its velocity is a t and its travel a t²/2 with a = 5/7 g sin a, and
    ω r = v (1e-9 relative; measured 7e-15 and 4e-15: the position correction's friction holds the
    contact point where rolling puts it, ``Δc − r φ × n = 0``, not the material point's cycloid)."""
    angle, mu, h = 0.35, 0.3, 1e-3
    c, s = math.cos(angle), math.sin(angle)
    axes = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
    normal = axes[:, 2]
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    node = b.add_node(position=tuple(RADIUS * normal))
    b.add_mass(node, mass=MASS, inertia=(BALL_INERTIA, BALL_INERTIA, BALL_INERTIA))
    b.add_sphere(node, RADIUS)
    b.add_ground_plane(normal=tuple(normal), offset=0.0, law="hard", friction=mu)
    sim = kp.Simulation(b.build(), _params(h))
    n = 1000
    for _ in range(n):
        assert sim.step().converged
    a, t = 5.0 / 7.0 * G * s, n * h
    down = -axes[:, 0]
    v = sim.state.v[0]
    assert abs(float(v[:3] @ down) / (a * t) - 1.0) <= 1e-9
    assert abs(float(sim.state.q[0, :3] @ down) / (0.5 * a * t * t) - 1.0) <= 1e-9
    assert abs(-float(v[3:6] @ axes[:, 1]) * RADIUS / float(v[:3] @ down) - 1.0) <= 1e-9
    assert abs(float(sim.state.q[0, :3] @ normal)) <= 1e-12


# ----------------------------------------------------------------------- the solver
def _cone(d: np.ndarray, b: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, int]:
    from kynemapy.run.hard_contact import solve_cone

    lam = np.zeros(b.size)
    sweeps = solve_cone(d, b, mu, lam, np.zeros(mu.size), np.zeros(b.size), 1e-14, 20_000)
    return lam, int(sweeps)


def test_solve_cone_on_one_point_against_closed_forms() -> None:
    """One point, D = diag(2, 1, 1), b = (−1, 0.3, −0.4): Λ_N = 1/2; with μ = 2 it sticks,
    Λ_T = −b_T; with μ = 0.5 it slides, Λ_T = −μ Λ_N b_T/|b_T| = (−0.15, 0.2); with b_N = +1 it
    separates, Λ = 0."""
    d = np.diag([2.0, 1.0, 1.0])
    lam, sweeps = _cone(d, np.array([-1.0, 0.3, -0.4]), np.array([2.0]))
    assert sweeps <= 20_000
    np.testing.assert_allclose(lam, [0.5, -0.3, 0.4], rtol=0, atol=1e-15)
    lam, _ = _cone(d, np.array([-1.0, 0.3, -0.4]), np.array([0.5]))
    np.testing.assert_allclose(lam, [0.5, -0.15, 0.2], rtol=0, atol=1e-15)
    lam, _ = _cone(d, np.array([1.0, 0.3, -0.4]), np.array([0.5]))
    np.testing.assert_array_equal(lam, 0.0)


def test_solve_cone_slides_by_coulombs_law_with_an_anisotropic_tangential_block() -> None:
    """One point sliding with a coupled, anisotropic tangential block D_TT = [[1, 0.5], [0.5, 4]]:
    the solution obeys Coulomb's law itself, ``|Λ_T| = μ Λ_N`` and ``Λ_T = −μ Λ_N u_T/|u_T|`` with
    ``u = D Λ + b`` (to 1e-12), and Signorini ``u_N = 0`` (not the D_TT-weighted projection)."""
    d = np.array([[2.0, 0.1, -0.2], [0.1, 1.0, 0.5], [-0.2, 0.5, 4.0]])
    b = np.array([-1.0, 0.8, -0.6])
    mu = np.array([0.3])
    lam, sweeps = _cone(d, b, mu)
    assert sweeps <= 20_000
    u = d @ lam + b
    assert lam[0] > 0.0 and abs(u[0]) <= 1e-12
    assert abs(np.hypot(lam[1], lam[2]) - mu[0] * lam[0]) <= 1e-12
    np.testing.assert_allclose(lam[1:], -mu[0] * lam[0] * u[1:] / np.hypot(u[1], u[2]), rtol=0, atol=1e-12)


def test_a_capsule_lying_on_the_plane_rests_on_its_two_end_spheres() -> None:
    """A capsule (2 kg, r = 0.05 m, axis 0.4 m long, its centre of mass off the middle of the axis by
    0.1 m) lying on the plane: both end spheres are active, at rest (1e-12 m, 1e-12 m/s), and their
    normal impulses are the lever rule's ``m g h (½ ∓ 0.1/0.4)`` (1e-9 relative)."""
    h, m, r = 1e-3, 2.0, 0.05
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    node = b.add_node(position=(0.1, 0.0, r))
    b.add_mass(node, mass=m, inertia=(0.01, 0.01, 0.01))
    b.add_capsule(node, r, (-0.2, 0.0, r), (0.2, 0.0, r))
    b.add_ground_plane(law="hard", friction=0.5)
    sim = kp.Simulation(b.build(), _params(h))
    for _ in range(500):
        assert sim.step().converged
    c = sim.contact_impulses()
    assert np.all(c.active)
    np.testing.assert_allclose(c.normal_impulse / (m * G * h), [0.25, 0.75], rtol=1e-9, atol=0)
    assert np.abs(sim.state.q[0, :3]).max() <= 1e-12 and np.abs(sim.state.v[0]).max() <= 1e-12


def test_a_spinning_box_first_corner_impact_is_located() -> None:
    """A box (3 kg, half extents 0.2, 0.15, 0.1 m, principal inertias along its edges) dropped from
    its centre 1 m above the plane, spinning at ω = 5 rad/s about its x edge (a principal axis: the
    spin stays constant and the Lie-group step is exact, as is the free fall): corner (y, z) of the
    box has the gap ``z₀ − g t²/2 + y sin ωt + z cos ωt``.  The first corner's impact, the first root
    t* over the corners (Brent's method on that closed form), is located at ``t* + η/|ġ*|`` (η the
    penetration aimed at, ġ* the corner's normal velocity there, ``−g t* + ω (y cos ωt* − z sin ωt*)``
    through the contact rows' ``n · (v + ω × (p − x))``) to within the cubic Hermite interpolant's
    error of the gap over the step, ``h⁴ ω⁴ √(y² + z²) / 384``, divided by |ġ*| (plus 1e-12 s of
    round-off), at h = 4, 2, 1 ms (the step that contains t* split once)."""
    from scipy.optimize import brentq

    mass, inertia, omega, z0, e = 3.0, np.array([0.04, 0.05, 0.065]), 5.0, 1.0, 1.0
    corners = [(y, z) for y in (-HALF[1], HALF[1]) for z in (-HALF[2], HALF[2])]

    def gap(t: float, y: float, z: float) -> float:
        return z0 - 0.5 * G * t * t + y * math.sin(omega * t) + z * math.cos(omega * t)

    roots = []
    for y, z in corners:
        grid = np.linspace(0.0, 1.0, 2001)
        values = [gap(t, y, z) for t in grid]
        k = int(np.flatnonzero(np.array(values) <= 0.0)[0])
        roots.append((brentq(gap, grid[k - 1], grid[k], args=(y, z), xtol=1e-15, rtol=1e-15), y, z))
    t_star, y, z = min(roots)
    rate = -G * t_star + omega * (y * math.cos(omega * t_star) - z * math.sin(omega * t_star))
    for h in (4e-3, 2e-3, 1e-3):
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        node = b.add_node(position=(0.0, 0.0, z0), velocity=(0.0, 0.0, 0.0, omega, 0.0, 0.0))
        b.add_mass(node, mass=mass, inertia=tuple(inertia))
        b.add_box(node, HALF)
        b.add_ground_plane(law="hard", restitution=e)
        sim = kp.Simulation(b.build(), _params(h))
        events = sim.joint_stops.events
        steps = 0
        while math.isnan(events.impact_time):
            assert sim.step().converged
            steps += 1
        assert (steps - 1) * h < t_star <= steps * h
        bound = h**4 * omega**4 * math.hypot(y, z) / 384.0 / abs(rate) + 1e-12
        assert abs(events.impact_time - (t_star + PENETRATION / abs(rate))) <= bound
        assert events.cuts == 1


def test_a_failed_sub_step_falls_back_to_the_step_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """When a sub-step's Newton solve fails (made to here), the whole step's smooth result is put
    back and corrected as without impact location: Newton's law with the velocity at the start of
    the impact step, so the ball (dropped from 0.5 m, e = 0.5, h = 1 ms) leaves the plane at
    ``e g t_n`` (t_n the impact step's start) to 1e-12 m/s, from the plane (gap 0 to 1e-12 m), and
    the step is not reported split."""
    from kynemapy.run import impact_event

    monkeypatch.setattr(impact_event.ImpactEvents, "_smooth", lambda self, p, h: 1)
    h, e, h0 = 1e-3, 0.5, 0.5
    sim = ball(h, e, h0)
    events = sim.joint_stops.events
    while sim.state.v[0, 2] <= 0.0:
        assert sim.step().converged
    t_n = (sim.step_count - 1) * h
    assert abs(sim.state.v[0, 2] - e * G * t_n) <= 1e-12
    assert abs(ball_gap(sim, h0)) <= 1e-12
    assert events.cuts == 0 and math.isnan(events.impact_time)
