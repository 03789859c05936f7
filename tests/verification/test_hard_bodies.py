"""Hard (nonsmooth) contact between bodies (docs/contact.md, "Hard contact between bodies"):
``set_body_contact(law="hard")``, the decoupled nonsmooth generalized-α step of the hard planes on
the contact points that the collision module finds between shapes, solved by projected
Gauss–Seidel over the contacts' blocks (:mod:`kynemapy.run.hard_bodies`).

Every number is checked against a closed form: Newton's cradle (equal balls, e = 1: each impact
swaps the two balls' velocities, so the last ball leaves at v₀ and the others stop), a two-ball
impact with restitution e (``v₁ = (1 − e) v/2``, ``v₂ = (1 + e) v/2``), momentum and energy
bounds at simultaneous impacts, stacks at rest carrying their weights (impulse m g h per step).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.model.errors import ModelError

G = 9.81
R, M = 0.05, 0.5  # m, kg: the balls
BALL_I = 0.4 * M * R**2  # kg m²


def _params(h: float) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def row_of_balls(n: int, gap: float, v0: float, e: float, h: float = 1e-4, mu: float = 0.0) -> kp.Simulation:
    """``n`` equal free balls on the x axis, ``gap`` [m] apart, the first moving at ``v0`` towards the
    others, no gravity, the hard body law with restitution ``e``."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for i in range(n):
        node = b.add_node(position=(i * (2 * R + gap), 0.0, 0.0), velocity=(v0 if i == 0 else 0.0, 0, 0, 0, 0, 0))
        b.add_mass(node, mass=M, inertia=(BALL_I, BALL_I, BALL_I))
        b.add_sphere(node, R)
    b.set_body_contact(law="hard", restitution=e, friction=mu)
    return kp.Simulation(b.build(), _params(h))


def kinetic(sim: kp.Simulation, inertia: float) -> float:
    v = sim.state.v
    return float(0.5 * M * np.sum(v[:, :3] ** 2) + 0.5 * inertia * np.sum(v[:, 3:] ** 2))


def test_newtons_cradle_passes_the_momentum_down_the_row() -> None:
    """Five balls 1 mm apart, the first at 1 m/s, e = 1: four impacts in turn, each between two
    neighbours (in that order), each swapping their velocities; at the end the last ball moves at
    1 m/s and the others are at rest (1e-12 m/s); momentum m v₀ every step, kinetic energy never
    above ½ m v₀² (1e-12 J); no two balls ever overlap by more than 1e-12 m."""
    sim = row_of_balls(5, 1e-3, 1.0, 1.0)
    impacts = []
    for _ in range(1200):
        sim.step()
        c = sim.body_impulses()
        for a, b, lam in zip(c["shape_a"], c["shape_b"], c["normal_impulse"], strict=True):
            if lam > 0.0:
                impacts.append((int(a), int(b)))
        assert abs(M * np.sum(sim.state.v[:, 0]) - M * 1.0) <= 1e-12
        assert np.all(np.abs(sim.state.v[:, 1:]) <= 1e-12)
        assert kinetic(sim, BALL_I) <= 0.5 * M + 1e-12
        x = sim.model.x0[:, 0] + sim.state.q[:, 0]
        assert np.all(np.diff(x) - 2 * R >= -1e-12)
    assert impacts == [(0, 1), (1, 2), (2, 3), (3, 4)]
    np.testing.assert_allclose(sim.state.v[:, 0], [0, 0, 0, 0, 1.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_two_balls_meet_by_newtons_law(e: float) -> None:
    """A ball at 2 m/s hits an equal ball at rest head on: ``v₁ = (1 − e) v/2``, ``v₂ = (1 + e) v/2``
    (1e-12); friction (μ = 0.3) gives no tangential impulse on a head-on impact; the normal impulse
    is ``m (1 + e) v/2`` [N s]."""
    sim = row_of_balls(2, 1e-3, 2.0, e, mu=0.3)
    lam = 0.0
    for _ in range(100):
        sim.step()
        c = sim.body_impulses()
        if c["normal_impulse"].size and c["normal_impulse"][0] > 1e-9:
            lam = float(c["normal_impulse"][0])
            np.testing.assert_allclose(c["friction_impulse"][0], 0.0, atol=1e-15)
            np.testing.assert_allclose(c["normal"][0], [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(sim.state.v[:, 0], [(1 - e), (1 + e)], rtol=0, atol=1e-12)
    assert lam == pytest.approx(M * (1 + e), rel=1e-12)


def test_a_touching_row_keeps_momentum_and_never_gains_energy() -> None:
    """Four balls touching (gap 0) hit by a fifth at 1 m/s, e = 1: the impacts are simultaneous (one
    problem on the whole row, whose answer is not the cradle's sequence: Newton's law at every
    contact at once); momentum m v₀ (1e-12) and kinetic energy never above the start's (1e-12 J);
    afterwards the row separates (no ball faster than the one ahead) and the last ball moves on."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    xs = [0.0, 2 * R + 2e-3, 4 * R + 2e-3, 6 * R + 2e-3, 8 * R + 2e-3]
    for i, x in enumerate(xs):
        node = b.add_node(position=(x, 0.0, 0.0), velocity=(1.0 if i == 0 else 0.0, 0, 0, 0, 0, 0))
        b.add_mass(node, mass=M, inertia=(BALL_I, BALL_I, BALL_I))
        b.add_sphere(node, R)
    b.set_body_contact(law="hard", restitution=1.0)
    sim = kp.Simulation(b.build(), _params(1e-4))
    for _ in range(400):
        sim.step()
        assert abs(M * np.sum(sim.state.v[:, 0]) - M) <= 1e-12
        assert kinetic(sim, BALL_I) <= 0.5 * M + 1e-12
    v = sim.state.v[:, 0]
    assert np.all(np.diff(v) >= -1e-12)  # the row separates: no ball faster than the one ahead
    assert v[-1] > 0.0


def stack(offset: float = 0.03, mu: float = 0.5) -> tuple[kp.Simulation, float, float]:
    """Box A (2 kg, half extents 0.2 × 0.15 × 0.1 m) on a hard floor and box B (1 kg, 0.1 × 0.1 ×
    0.05 m) on A, shifted by ``offset`` along x; touching, at rest."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    ma, mb = 2.0, 1.0
    a = b.add_node(position=(0.0, 0.0, 0.1))
    b.add_mass(a, mass=ma, inertia=(0.02, 0.03, 0.04))
    b.add_box(a, (0.2, 0.15, 0.1), center=(0.0, 0.0, 0.1))
    c = b.add_node(position=(offset, 0.0, 0.25))
    b.add_mass(c, mass=mb, inertia=(0.004, 0.004, 0.006))
    b.add_box(c, (0.1, 0.1, 0.05), center=(offset, 0.0, 0.25))
    b.add_ground_plane(law="hard", friction=mu)
    b.set_body_contact(law="hard", friction=mu)
    return kp.Simulation(b.build(), _params(1e-3)), ma, mb


@pytest.mark.slow
def test_a_stack_rests_without_drift_and_carries_its_weight() -> None:
    """Box on box on the floor, at rest: over 2 s neither box moves by more than 1e-12 m (no drift,
    no creep); every step the floor's impulses sum to the whole weight ``(m_A + m_B) g h`` and
    B's four corners on A to ``m_B g h`` (1e-9 relative); no gap below −1e-12 m."""
    sim, ma, mb = stack()
    h = 1e-3
    q0 = sim.state.q.copy()
    for _ in range(2000):
        sim.step()
        floor = sim.contact_impulses()
        assert np.sum(floor.normal_impulse) == pytest.approx((ma + mb) * G * h, rel=1e-9)
        c = sim.body_impulses()
        assert np.all(c["gap"] >= -1e-12)
        assert np.sum(c["normal_impulse"]) == pytest.approx(mb * G * h, rel=1e-9)
        np.testing.assert_array_equal(c["shape_a"], 0)
    np.testing.assert_allclose(sim.state.q, q0, rtol=0, atol=1e-12)


def test_a_tumbling_box_never_enters_the_floor_nor_gains_energy() -> None:
    """A tilted cube (1 kg, 0.2 m) dropped 0.1 m onto a hard floor with friction (μ = 0.5, e = 0), with
    the hard body law on (so the floor's points are solved with the body contacts): no corner ever
    below −1e-12 m, the energy never rises (1e-9 J per step), and it comes to rest flat on a face
    (centre at 0.1 m to 1e-12, speed below 1e-12)."""
    from scipy.spatial.transform import Rotation

    a, mass = 0.1, 1.0
    inertia = mass * (2 * a) ** 2 / 6
    axes = Rotation.from_rotvec([0.3, 0.2, 0.1]).as_matrix()
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    node = b.add_node(position=(0.0, 0.0, 0.3))
    b.add_mass(node, mass=mass, inertia=(inertia, inertia, inertia))
    b.add_box(node, (a, a, a), axes=axes)
    b.add_ground_plane(law="hard", friction=0.5)
    b.set_body_contact(law="hard", friction=0.5)
    sim = kp.Simulation(b.build(), _params(1e-3))
    corners = np.array([[sx, sy, sz] for sx in (-a, a) for sy in (-a, a) for sz in (-a, a)]) @ axes.T

    def energy() -> float:
        v = sim.state.v[0]
        return float(0.5 * mass * v[:3] @ v[:3] + 0.5 * inertia * v[3:] @ v[3:] + mass * G * (0.3 + sim.state.q[0, 2]))

    from kynemapy.math.rotations import rotation_matrices

    before = energy()
    for _ in range(1500):
        sim.step()
        now = energy()
        assert now <= before + 1e-9
        before = now
        rot = rotation_matrices(sim.state.q[:, 3:7])[0]
        z = 0.3 + sim.state.q[0, 2] + (corners @ rot.T)[:, 2]
        assert z.min() >= -1e-12
    assert 0.3 + sim.state.q[0, 2] == pytest.approx(0.1, abs=1e-12)
    assert np.abs(sim.state.v).max() <= 1e-12


def test_refusals_name_what_is_wrong() -> None:
    """The hard body law refuses the compliant law's parameters, a restitution outside [0, 1],
    hard joint limits and beams in the model (joints are taken: test_hard_joined_bodies.py) and a
    start with two shapes overlapping; the compliant law refuses a restitution and needs a
    stiffness."""
    b = kp.ModelBuilder()
    with pytest.raises(ModelError, match="body contact: stiffness is a parameter of the compliant law"):
        b.set_body_contact(law="hard", stiffness=1e6)
    with pytest.raises(ModelError, match=r"restitution .* must be <= 1"):
        b.set_body_contact(law="hard", restitution=1.5)
    with pytest.raises(ModelError, match="body contact law must be one of"):
        b.set_body_contact(law="soft")
    with pytest.raises(ModelError, match="restitution applies to law='hard' only"):
        b.set_body_contact(stiffness=1e6, restitution=0.5)
    with pytest.raises(ModelError, match="stiffness is required"):
        b.set_body_contact()
    b = kp.ModelBuilder()
    n1, n2 = b.add_node(position=(0, 0, 0)), b.add_node(position=(0.3, 0, 0))
    for n in (n1, n2):
        b.add_mass(n, mass=1.0, inertia=(0.01, 0.01, 0.01))
        b.add_sphere(n, 0.1)
    b.add_hinge_joint(n1, n2, (0.15, 0, 0), (0, 0, 1), limits=(-0.5, 0.5), limit_restitution=0.0)
    b.set_body_contact(law="hard")
    with pytest.raises(ModelError, match=r"built for rigid bodies, free or joined; this model has hard joint limits"):
        b.build()
    b = kp.ModelBuilder()
    b.add_beam([[0, 0, 0], [1, 0, 0]], [0.0, 1.0], [np.eye(6)] * 2, [1e6 * np.eye(6)] * 2, order=2)
    ball = b.add_node(position=(0, 1, 0))
    b.add_mass(ball, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(ball, 0.1)
    b.set_body_contact(law="hard")
    with pytest.raises(ModelError, match="this model has beams"):
        b.build()
    with pytest.raises(ModelError, match=r"shapes 0 \(node 0\) and 1 \(node 1\) start overlapping by 0.01 m"):
        row_of_balls(2, -0.01, 0.0, 0.0)


def test_step_control_and_batch_refuse_the_hard_body_law() -> None:
    """advance_to, run(control=...) and Batch name the hard body law among what they do not support."""
    sim = row_of_balls(2, 1e-3, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"advance_to .* set_body_contact\(law='hard'\)"):
        sim.advance_to(0.01, kp.StepControl(rtol=1e-6))
    with pytest.raises(ValueError, match=r"run\(control=\.\.\.\) .* set_body_contact\(law='hard'\)"):
        sim.run(t_end=0.01, control=kp.StepControl(rtol=1e-6))
    with pytest.raises(ValueError, match=r"Batch: member 0's model has .*set_body_contact\(law='hard'\)"):
        kp.Batch([sim])


BODY_TOML = """
[[node]]
name = "a"
position = [0.0, 0.0, 0.0]
velocity = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]

[[node]]
name = "b"
position = [0.2, 0.0, 0.0]

[[mass]]
node = "a"
mass = 0.5
inertia = [5e-4, 5e-4, 5e-4]

[[mass]]
node = "b"
mass = 0.5
inertia = [5e-4, 5e-4, 5e-4]

[[shape]]
kind = "sphere"
node = "a"
radius = 0.05

[[shape]]
kind = "sphere"
node = "b"
radius = 0.05

[body_contact]
law = "hard"
restitution = 1.0

[step]
h = 0.001
"""


def test_model_file_and_result_file_keep_the_hard_body_law(tmp_path) -> None:
    """``[body_contact]`` with ``law = "hard"`` makes the builder's law (its errors carry the file's
    line); a run written to a result file and restarted from it keeps the shapes and steps the same
    states as one run, bit for bit: the two balls swap their velocities (e = 1)."""
    from kynemapy.model.file import parse_model_file

    parsed = parse_model_file(BODY_TOML)
    model = parsed.model
    assert model.hard_shapes.shape == (2, 16) and model.n_pairs == 0
    np.testing.assert_array_equal(model.hard_shapes[:, 14:], [[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ModelError, match=r"line \d+.*stiffness is a parameter of the compliant law"):
        parse_model_file(BODY_TOML.replace('law = "hard"', 'law = "hard"\nstiffness = 1e5'))
    params = kp.StepParameters(h=1e-3, rho_inf=0.9)
    whole = kp.Simulation(model, params)
    whole.run(n_steps=200)
    path = tmp_path / "balls.h5"
    first = kp.Simulation(model, params)
    first.run(n_steps=120, output=path, every=40)
    again = kp.Simulation.restart(path)
    assert np.array_equal(again.model.hard_shapes, model.hard_shapes)
    again.run(n_steps=80, output=path)
    assert np.array_equal(again.state.q, whole.state.q)
    assert np.array_equal(again.state.v, whole.state.v)
    np.testing.assert_allclose(whole.state.v[:, 0], [0.0, 1.0], atol=1e-12)
    assert math.isclose(float(np.sum(whole.state.v[:, 0])), 1.0, abs_tol=1e-12)


def test_the_contacts_groups_are_numbered_as_their_rows_sort() -> None:
    """``_groups`` numbers each contact's group (plane or not, shape A, shape B) by one integer
    key: the numbers of the rows' own lexicographic ``np.unique(..., axis=0)`` (which it
    replaced, for its time), over random sets of contacts between shapes and with planes."""
    from types import SimpleNamespace

    from kynemapy.run.hard_bodies import _groups

    rng = np.random.default_rng(7)
    for _ in range(300):
        c = int(rng.integers(0, 25))
        con = SimpleNamespace(na=rng.integers(-1, 4, c), shape_a=rng.integers(0, 7, c), shape_b=rng.integers(0, 11, c))
        rows = np.column_stack([con.na < 0, con.shape_a, con.shape_b])
        expected = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
        np.testing.assert_array_equal(_groups(con), expected)
