"""Bodies at rest under the hard body law (docs/contact.md, "Hard contact between bodies", "A pile
of boxes"): ``set_body_contact(law="hard")`` with a hard floor and friction, where the contact rows
are redundant (a face on a face: four corners on three free directions) and the frictional
projected Gauss–Seidel sweeps alone need not converge.

Closed forms: a body at rest carries its weight (the normal impulses over a step sum to m g h, and
to the weight of what rests on it), and stays where it is (no drift); a box on an incline sticks
where tan a < μ (impulses m g cos a h and m g sin a h) and slides at g (sin a − μ cos a) where
tan a > μ.  The pile of eight boxes is checked against the issue's bounds (no penetration above
1e-6 m; at rest, no box moving by more than 1e-9 m over the last 0.5 s).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp

G = 9.81
H = 1e-3  # s
A = 0.1  # m, the cubes' half edge
MASS = 1.0  # kg
INERTIA = MASS * (2 * A) ** 2 / 6  # kg m², a cube about its centre


def _params() -> kp.StepParameters:
    return kp.StepParameters(h=H, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def _cube(b: kp.ModelBuilder, centre: tuple[float, float, float], axes: np.ndarray | None = None) -> int:
    node = b.add_node(position=centre)
    b.add_mass(node, mass=MASS, inertia=(INERTIA, INERTIA, INERTIA))
    b.add_box(node, (A, A, A), center=centre, axes=np.eye(3) if axes is None else axes)
    return node


def _cubes_on_the_floor(centres: list[tuple[float, float, float]]) -> kp.Simulation:
    """Upright cubes at ``centres`` [m] over a hard floor, the hard body law between them, μ = 0.5."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    for centre in centres:
        _cube(b, centre)
    b.add_ground_plane(law="hard", friction=0.5)
    b.set_body_contact(law="hard", friction=0.5)
    return kp.Simulation(b.build(), _params())


def test_a_cube_on_its_four_corners_with_friction_carries_m_g_h_and_never_moves() -> None:
    """A cube resting face down on a hard floor, μ = 0.5, under the hard body law (a second cube
    rests apart, so that the floor's points are solved with the body contacts): every step the
    normal impulses of each cube's corners sum to m g h (1e-12 relative) with no friction needed
    (|Λ_T| <= 1e-12 m g h), and over 2 s neither cube moves by more than 1e-12 m or turns by more
    than 1e-12 rad."""
    sim = _cubes_on_the_floor([(0.0, 0.0, A), (1.0, 0.3, A)])
    q0 = sim.state.q.copy()
    for _ in range(2000):
        assert sim.step().converged
        c = sim.contact_impulses()
        for node in (0, 1):
            mine = c.node == node
            assert np.sum(c.normal_impulse[mine]) == pytest.approx(MASS * G * H, rel=1e-12)
        assert np.abs(c.friction_impulse).max() <= 1e-12 * MASS * G * H
    np.testing.assert_allclose(sim.state.q, q0, rtol=0, atol=1e-12)
    assert np.abs(sim.state.v).max() <= 1e-12


@pytest.mark.slow
def test_a_cube_bridging_two_cubes_rests_and_shares_its_weight() -> None:
    """Two cubes on a hard floor 0.1 m apart and a third lying across them, centred (μ = 0.5): the
    split of the upper cube's weight between its two supports is statically indeterminate (four
    points on each), its sum is not: every step the upper cube's points sum to m g h, the floor's
    to 3 m g h, and each lower cube's floor points to m g h plus what the upper cube puts on it
    (each body's balance, 1e-9 relative); over 2 s no cube moves by more than 1e-12 m; no gap
    below −1e-12 m."""
    sim = _cubes_on_the_floor([(-0.15, 0.0, A), (0.15, 0.0, A), (0.0, 0.0, 3 * A)])
    q0 = sim.state.q.copy()
    for _ in range(2000):
        assert sim.step().converged
        floor = sim.contact_impulses()
        assert np.sum(floor.normal_impulse) == pytest.approx(3 * MASS * G * H, rel=1e-9)
        c = sim.body_impulses()
        assert np.all(c["gap"] >= -1e-12)
        np.testing.assert_array_equal(c["node_b"], 2)
        assert np.sum(c["normal_impulse"]) == pytest.approx(MASS * G * H, rel=1e-9)
        for node in (0, 1):
            on_top = np.sum(c["normal_impulse"][c["node_a"] == node])
            below = np.sum(floor.normal_impulse[floor.node == node])
            assert below == pytest.approx(MASS * G * H + on_top, rel=1e-9)
    np.testing.assert_allclose(sim.state.q, q0, rtol=0, atol=1e-12)


def _cube_on_incline(angle: float, mu: float) -> tuple[kp.Simulation, np.ndarray]:
    """A cube resting face down on a hard plane through the origin tilted by ``angle`` about y, under
    the hard body law (a ball far away, at rest on the plane, as the law's second body); the
    cube's axes (columns: down the slope is −x, y, the normal)."""
    c, s = math.cos(angle), math.sin(angle)
    axes = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
    normal = axes[:, 2]
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    _cube(b, tuple(A * normal), axes)
    ball = b.add_node(position=tuple(3.0 * axes[:, 1] + 0.05 * normal))
    b.add_mass(ball, mass=0.5, inertia=(5e-4, 5e-4, 5e-4))
    b.add_sphere(ball, 0.05)
    b.add_ground_plane(normal=tuple(normal), offset=0.0, law="hard", friction=mu)
    b.set_body_contact(law="hard", friction=mu)
    return kp.Simulation(b.build(), _params()), axes


def test_a_cube_on_an_incline_sticks_under_the_body_law() -> None:
    """tan a = 0.31 < μ = 0.5: over 1 s the cube moves by less than 1e-12 m, and its impulses add up to
    the weight's: Σ Λ_N = m g cos a h, |Σ Λ_T| = m g sin a h (1e-9 relative), each point within its
    cone."""
    angle, mu = 0.3, 0.5
    sim, _ = _cube_on_incline(angle, mu)
    q0 = sim.state.q[0].copy()
    for _ in range(1000):
        assert sim.step().converged
    assert np.abs(sim.state.q[0, :3] - q0[:3]).max() <= 1e-12
    c = sim.contact_impulses()
    cube = c.node == 0
    assert np.sum(c.normal_impulse[cube]) == pytest.approx(MASS * G * math.cos(angle) * H, rel=1e-9)
    friction = np.einsum("ki,kij->j", c.friction_impulse[cube], c.tangents[cube])
    assert np.linalg.norm(friction) == pytest.approx(MASS * G * math.sin(angle) * H, rel=1e-9)
    assert np.all(np.hypot(*c.friction_impulse.T) <= mu * c.normal_impulse * (1 + 1e-12) + 1e-300)


def test_a_cube_on_an_incline_slides_at_g_sin_minus_mu_cos_under_the_body_law() -> None:
    """tan a = 0.68 > μ = 0.3: after 1 s the cube's velocity down the slope is a t and its travel
    a t²/2, a = g (sin a − μ cos a) (1e-6 relative); it neither lifts (1e-12 m) nor turns (1e-12)."""
    angle, mu = 0.6, 0.3
    sim, axes = _cube_on_incline(angle, mu)
    q0 = sim.state.q[0].copy()
    for _ in range(1000):
        assert sim.step().converged
    a = G * (math.sin(angle) - mu * math.cos(angle))
    down = -axes[:, 0]
    t = 1.0
    assert float(sim.state.v[0, :3] @ down) == pytest.approx(a * t, rel=1e-6)
    assert float((sim.state.q[0, :3] - q0[:3]) @ down) == pytest.approx(0.5 * a * t * t, rel=1e-6)
    assert abs(float((sim.state.q[0, :3] - q0[:3]) @ axes[:, 2])) <= 1e-12
    assert np.abs(sim.state.q[0, 4:7]).max() <= 1e-12


def _tumbling_pile() -> kp.Model:
    """Eight cubes (2 × 2 × 2), each turned by a random rotation (seeded), in staggered layers
    over a hard floor, μ = 0.5, e = 0 (``bench/pile.py``'s pile)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(1)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    for k in range(2):
        for j in range(2):
            for i in range(2):
                centre = (
                    (2.8 * i + (1.4 if k % 2 else 0.0) + rng.uniform(-0.1, 0.1)) * A,
                    (2.8 * j + rng.uniform(-0.1, 0.1)) * A,
                    (1.8 + 3.6 * k) * A + 0.02,
                )
                _cube(b, centre, Rotation.from_rotvec(rng.normal(size=3) * 0.1).as_matrix())
    b.add_ground_plane(law="hard", friction=0.5)
    b.set_body_contact(law="hard", friction=0.5)
    return b.build()


@pytest.mark.slow
def test_a_restarted_run_of_the_tumbling_pile_steps_bit_for_bit(tmp_path) -> None:
    """A run of the tumbling pile killed while its second layer lands on the first (step 250) and
    restarted from its result file (``Simulation.restart``) gives, row by row, the states of the
    run that was never stopped."""
    whole, first = tmp_path / "whole.h5", tmp_path / "first.h5"
    kp.Simulation(_tumbling_pile(), _params()).run(n_steps=400, output=whole, every=1)
    kp.Simulation(_tumbling_pile(), _params()).run(n_steps=250, output=first, every=1)
    kp.Simulation.restart(first).run(n_steps=150, output=first, every=1)
    a, b = kp.io.read(whole), kp.io.read(first)
    assert a.q.shape == b.q.shape == (401, 8, 7)
    moving = np.abs(a.v[250:290]).max()
    assert moving > 0.1  # the restart falls amid the landing (the cubes still moving)
    for name in ("q", "v", "vd"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.slow
def test_a_pile_of_eight_tumbling_cubes_settles_without_penetration_or_drift() -> None:
    """The tumbling pile (:func:`_tumbling_pile`) dropped: no penetration above 1e-6 m after any
    step (the issue's bound), and at rest (the last 0.5 s of 2.5 s) no cube moves by more than
    1e-9 m, no speed above 1e-9 m/s or rad/s."""
    sim = kp.Simulation(_tumbling_pile(), _params())
    bodies, planes = sim.joint_stops.bodies, sim.joint_stops.contacts
    q_rest = None
    for step in range(2500):
        assert sim.step().converged
        rows, _, _ = bodies.query(sim.state.q)
        gap, _, _ = planes.geometry(sim.state.q)
        assert float(np.min(rows[:, 9], initial=0.0)) >= -1e-6
        assert float(np.min(gap)) >= -1e-6
        if step + 1 == 2000:
            q_rest = sim.state.q.copy()
        elif q_rest is not None:
            assert np.abs(sim.state.q[:, :3] - q_rest[:, :3]).max() <= 1e-9
    assert np.abs(sim.state.v).max() <= 1e-9
