"""Capsule–capsule and capsule–box contact between bodies (docs/contact.md): the exact tangent of
the segment–segment pair against central differences (both parameters inside, one end on a
segment from either side, end on end) and closed-form rest loads (a capsule crossed over a fixed
capsule, two parallel capsules, a capsule on a box on its two end spheres)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from newton_differences import matrix_and_differences

import kynemapy as kp
from kynemapy.engine.elements.pairs import segment_points

G = 9.81


def _params(h: float) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-10, rtol=1e-10, geometric_stiffness=True)


def _unit(v: tuple[float, float, float]) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / np.linalg.norm(a)


# ------------------------------------------------------------------------- exact tangent
#: capsule A along x through (0, 0, 0), r = 0.05, ends ±0.2 m; capsule B (r = 0.04) 2 mm into it:
#: its ends (a, b) for each case, and which parameters are inside (bit 0: t on B, bit 1: s on A)
R_A, R_B, DEPTH = 0.05, 0.04, 0.002
_D = R_A + R_B - DEPTH
_U = _unit((0.3, 0.2, 1.0))  # B's axis leaving A's middle (end on segment)
_V = _unit((1.0, 0.3, 0.5))  # B's axis leaving A's end b (end on end)
CASES = {
    # B crossing above A, its axis tilted: s, t both inside
    "crossing": (((0.03, -0.15, _D - 0.004), (0.05, 0.2, _D + 0.004)), 3),
    # B's end a on A's middle, B leaving upward: s inside, t = 0
    "end on segment": (((0.05, 0.0, _D), tuple(np.array([0.05, 0.0, _D]) + 0.3 * _U)), 2),
    # end on end: A's end b (s = 1) against B's end a (t = 0)
    "end on end": ((tuple(np.array([0.2, 0.0, 0.0]) + _D * _V), tuple(np.array([0.2, 0.0, 0.0]) + (_D + 0.3) * _V)), 0),
}


def crossing_capsules(case: str, b_first: bool) -> tuple[kp.Model, kp.Model]:
    """Capsules A and B (:data:`CASES`) on two tumbling bodies whose nodes are off the capsules'
    middles, sliding and spinning (μ = 0.5, v_s = 0.3 m/s); ``b_first``: B is shape 0 (body 1 of
    the pair), which turns "s inside" into "t inside"; and the same bodies without contact."""
    (pa, pb), _ = CASES[case]

    def build(contact: bool) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        specs = [
            ("A", (0.01, 0.02, -0.01), (0.3, -0.2, 0.1, 1.0, -2.0, 0.5), 1.2, R_A, (-0.2, 0.0, 0.0), (0.2, 0.0, 0.0)),
            ("B", (0.04, -0.01, 0.1), (-0.4, 0.3, -0.2, -1.5, 0.7, 2.0), 0.8, R_B, pa, pb),
        ]
        if b_first:
            specs.reverse()
        for _, position, velocity, mass, radius, a, e in specs:
            n = b.add_node(position=position, velocity=velocity)
            b.add_mass(n, mass=mass, inertia=(0.01, 0.02, 0.015))
            b.add_capsule(n, radius, a, e)
        if contact:
            b.set_body_contact(stiffness=3e4, damping=50.0, friction=0.5, slip_velocity=0.3)
        return b.build()

    return build(True), build(False)


@pytest.mark.parametrize(
    ("case", "b_first"),
    [("crossing", False), ("end on segment", False), ("end on segment", True), ("end on end", False)],
)
def test_iteration_matrix_with_capsule_capsule_pairs_is_the_derivative_of_the_residual(
    case: str, b_first: bool
) -> None:
    """Two capsules on tumbling bodies, 2 mm deep, crossing (s and t inside), one's end on the
    other's middle (s inside, t held; with B first, t inside, s held) and end on end (both held):
    the contact's share of the matrix against central differences; what remains is the
    differences' own ε² error, which falls by 4 when ε halves."""
    from kynemapy.model.geometry import contact_shapes

    model, bare = crossing_capsules(case, b_first)
    assert model.n_pairs == 1
    assert model.pair_shape.tolist() == [[0, 1]]
    assert [s.kind for s in contact_shapes(model)] == ["capsule", "capsule"]
    errors = []
    for eps in (2.5e-7, 1.25e-7):
        a1, fd1, state = matrix_and_differences(model, _params(0.001), steps=2, projected=False, eps=eps)
        a0, fd0, _ = matrix_and_differences(bare, _params(0.001), state, projected=False, eps=eps)
        part, part_fd = a1 - a0, fd1 - fd0
        errors.append(np.abs(part - part_fd).max() / np.abs(part_fd).max())
    sim = kp.Simulation(model, _params(0.001))
    sim.state.assign(state)
    pairs = sim.contact_pairs()
    assert pairs.active[0] and -3e-3 < pairs.gap[0] < -1e-3
    # the case still holds at the state the matrix was taken at
    q = sim.state.q
    x1 = np.ascontiguousarray(model.x0[0, :3] + q[0, :3])
    x2 = np.ascontiguousarray(model.x0[1, :3] + q[1, :3])
    quats = np.ascontiguousarray(q[:, 3:7])
    free = segment_points(quats[0], quats[1], x1, x2, np.ascontiguousarray(model.pair_offset[0]))[12]
    expected = CASES[case][1]
    if b_first:  # the parameters swap roles
        expected = ((expected & 1) << 1) | (expected >> 1)
    assert free == expected
    assert np.abs(part_fd).max() > 1e3
    assert errors[1] < 1e-6
    assert 3.0 < errors[0] / errors[1] < 5.0  # ε²: the tangent itself is exact


# ------------------------------------------------------------------------- at rest
def _resting(upper: tuple, lower: tuple, node: tuple, m: float, k: float) -> kp.Simulation:
    """A fixed body with the shape ``lower`` ("capsule", r, a, b or "box", half extents) and a
    free one of mass ``m`` [kg] at ``node`` with the capsule ``upper`` (r, a, b), body contact of
    stiffness ``k`` [N/m] (linear law, critically damped on m), advanced 1 s."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    base = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(base, mass=5.0, inertia=(0.1, 0.5, 0.5))
    if lower[0] == "capsule":
        b.add_capsule(base, *lower[1:])
    else:
        b.add_box(base, lower[1])
    b.add_fixed_bc(base)
    top = b.add_node(position=node)
    b.add_mass(top, mass=m, inertia=(0.004, 0.003, 0.005))
    b.add_capsule(top, *upper)
    b.set_body_contact(stiffness=k, damping=2.0 * math.sqrt(k * m))
    sim = kp.Simulation(b.build(), _params(1e-3))
    sim.advance(1000)
    return sim


def test_a_capsule_crossed_over_a_fixed_capsule_sinks_by_the_static_penetration() -> None:
    """A 1 kg capsule (r = 0.04 m, axis along y, 0.4 m long, its node at its middle) lying across
    a fixed capsule (r = 0.05 m, axis along x) at 90°, just touching, k = 1e5 N/m: at rest it has
    sunk δ = m g / k straight down, the one pair carries m g and its gap is −δ (to 1e-9: a static
    equilibrium; both parameters inside), and the rows' strain energy is k δ² / 2."""
    m, k = 1.0, 1e5
    h = 0.05 + 0.04
    sim = _resting((0.04, (0.25, -0.2, h), (0.25, 0.2, h)), ("capsule", 0.05, (-1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
                   (0.25, 0.0, h), m, k)  # fmt: skip
    delta = m * G / k
    np.testing.assert_allclose(sim.state.q[1, :3], [0.0, 0.0, -delta], rtol=0.0, atol=1e-9 * delta)
    pairs = sim.contact_pairs()
    assert pairs.shape.tolist() == [[0, 1]]
    assert abs(pairs.normal_force[0] - m * G) < 1e-9 * m * G
    assert abs(pairs.gap[0] + delta) < 1e-9 * delta
    # the rows' strain energy holds the pair's spring: k δ² / 2
    from kynemapy.engine.energies import row_invariants

    energy = float(row_invariants(sim.model, sim.state.q, sim.state.v)["strain_energy"])
    assert abs(energy - k * delta**2 / 2) < 1e-9 * k * delta**2 / 2


def test_two_parallel_capsules_touch_at_the_middle_of_their_overlap_and_rest_on_it() -> None:
    """A 1 kg capsule (r = 0.04 m, 0.25 m long along x, its node at its middle x = 0.25 m) lying
    parallel on a fixed capsule (r = 0.05 m, axis −0.5 to 0.5 m along x): the closest points of
    parallel axes are not unique; the pair takes the middle of the overlap (x = 0.25 m, under the
    upper capsule's middle), the same in every run, so the capsule rests level: sunk δ = m g / k,
    the pair carrying m g (to 1e-9), its rotation still zero."""
    m, k = 1.0, 1e5
    h = 0.05 + 0.04
    upper = (0.04, (0.125, 0.0, h), (0.375, 0.0, h))
    lower = ("capsule", 0.05, (-0.5, 0.0, 0.0), (0.5, 0.0, 0.0))
    runs = [_resting(upper, lower, (0.25, 0.0, h), m, k) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].state.q, runs[1].state.q)  # deterministic
    sim = runs[0]
    delta = m * G / k
    np.testing.assert_allclose(sim.state.q[1, :3], [0.0, 0.0, -delta], rtol=0.0, atol=1e-9 * delta)
    assert np.abs(sim.state.q[1, 4:7]).max() < 1e-12  # level: no turn about any axis
    pairs = sim.contact_pairs()
    assert abs(pairs.normal_force[0] - m * G) < 1e-9 * m * G
    assert abs(pairs.gap[0] + delta) < 1e-9 * delta


def test_a_capsule_lying_on_a_box_carries_half_its_weight_on_each_end_sphere() -> None:
    """A 1 kg capsule (r = 0.05 m, axis along x from −0.2 to 0.2 m, its node at its middle, 0.05
    m off the box's centre in y) lying on a fixed box (half extents 0.5, 0.3, 0.1 m), both end
    spheres touching the top face, k = 1e5 N/m: at rest it has sunk δ = m g / (2 k) and each of
    its two end-sphere pairs carries m g / 2 (to 1e-9: a static equilibrium)."""
    m, k = 1.0, 1e5
    h = 0.1 + 0.05
    sim = _resting((0.05, (-0.2, 0.05, h), (0.2, 0.05, h)), ("box", (0.5, 0.3, 0.1)), (0.0, 0.05, h), m, k)
    model = sim.model
    assert model.n_pairs == 2 and model.pair_shape.tolist() == [[1, 0], [1, 0]]  # the capsule first
    delta = m * G / (2 * k)
    np.testing.assert_allclose(sim.state.q[1, :3], [0.0, 0.0, -delta], rtol=0.0, atol=1e-9 * delta)
    pairs = sim.contact_pairs()
    np.testing.assert_allclose(pairs.normal_force, m * G / 2, rtol=1e-9)
    np.testing.assert_allclose(pairs.gap, -delta, rtol=1e-9)


# ------------------------------------------------------------------------- candidates
def test_capsule_pairs_are_built_for_capsules_and_boxes_on_different_unjoined_bodies() -> None:
    """Two capsules on different bodies make one pair (the lower id first) whose offsets hold both
    axes (body 1's ends in rows 0 and 3); a capsule and a box make two pairs, its end spheres (row
    3 repeating row 0); not on one body, not joined bodies, not excluded, not filtered."""
    b = kp.ModelBuilder()
    nodes = [b.add_node(position=(0.5 * i, 0.0, 0.0)) for i in range(5)]
    for n in nodes:
        b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    c0 = b.add_capsule(nodes[0], 0.05, (0.0, -0.1, 0.0), (0.0, 0.1, 0.0))
    c1 = b.add_capsule(nodes[1], 0.04, (0.5, 0.0, -0.1), (0.5, 0.0, 0.2))
    b.add_capsule(nodes[1], 0.04, (0.4, 0.0, 0.0), (0.6, 0.0, 0.0))  # shape 2: body 1 again
    box = b.add_box(nodes[2], (0.1, 0.1, 0.1))
    c4 = b.add_capsule(nodes[3], 0.03, (1.5, 0.0, 0.0), (1.6, 0.0, 0.0))  # joined to body 1
    b.add_capsule(nodes[4], 0.03, (2.0, 0.0, 0.0), (2.1, 0.0, 0.0), group=2, mask=2)  # shape 5: filtered
    b.add_ball_joint(nodes[1], nodes[3], (1.0, 0.0, 0.0))
    b.exclude_contact(c4, c0)
    b.set_body_contact(stiffness=1e5)
    model = b.build()
    rows = {tuple(p) for p in model.pair_shape.tolist()}
    assert rows == {(c0, c1), (c0, 2), (c0, box), (c1, box), (2, box), (c4, box)}
    assert model.n_pairs == 2 + 4 * 2  # two capsule–capsule pairs, four capsules' two end spheres
    k = model.pair_shape.tolist().index([c0, c1])
    np.testing.assert_array_equal(
        model.pair_offset[k], [[0.0, -0.1, 0.0], [0.0, 0.0, -0.1], [0.0, 0.0, 0.2], [0.0, 0.1, 0.0]]
    )
    np.testing.assert_array_equal(model.pair_radius[k], [0.05, 0.04])
    ends = [i for i, p in enumerate(model.pair_shape.tolist()) if p == [c0, box]]
    np.testing.assert_array_equal(model.pair_offset[ends, 0], [[0.0, -0.1, 0.0], [0.0, 0.1, 0.0]])
    np.testing.assert_array_equal(model.pair_offset[ends, 3], model.pair_offset[ends, 0])


def test_a_result_file_with_the_older_three_row_pair_offsets_reads_as_four_rows(tmp_path) -> None:
    """A result file written before capsule–capsule pairs holds ``pair_offset`` (n, 3, 3): read,
    row 3 is body 1's point again (row 0), so its pairs are the sphere pairs they were; this
    file's capsule–capsule pair is kept with its four rows."""
    import h5py

    from kynemapy.io.checksums import crc32_of

    model, _ = crossing_capsules("crossing", False)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(n, 0.1)
    m = b.add_node(position=(0.3, 0.0, 0.0))
    b.add_mass(m, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(m, 0.1, center=(0.3, 0.0, 0.05))
    b.set_body_contact(stiffness=1e5)
    spheres = b.build()
    for mdl, name in ((model, "caps.h5"), (spheres, "balls.h5")):
        kp.Simulation(mdl, _params(1e-3)).run(n_steps=2, output=tmp_path / name)
    with h5py.File(tmp_path / "balls.h5", "r+") as f:  # as an older writer left it
        old = np.ascontiguousarray(f["model/pair_offset"][()][:, :3])
        del f["model/pair_offset"]
        ds = f["model"].create_dataset("pair_offset", data=old)
        ds.attrs["crc32"] = crc32_of(old)
    got = kp.io.read(tmp_path / "balls.h5").model.pair_offset
    assert got.shape == (1, 4, 3)
    np.testing.assert_array_equal(got, spheres.pair_offset)
    np.testing.assert_array_equal(got[0, 3], [0.0, 0.0, 0.0])  # the first sphere's centre, twice
    np.testing.assert_array_equal(kp.io.read(tmp_path / "caps.h5").model.pair_offset, model.pair_offset)


@pytest.mark.parametrize("swap", [False, True])
def test_parallel_axes_meet_at_the_middle_of_their_overlap_and_apart_at_the_nearest_ends(swap: bool) -> None:
    """Parallel axes along x, 0.09 m apart in z: axis 1 from −0.5 to 0.5 m, axis 2 from 0.375 to
    0.75 m overlap on [0.375, 0.5]: both closest points at x = 0.4375 m, distance 0.09 m (s held,
    t inside: free); axis 2 moved to [0.625, 1.0]: no overlap, the
    nearest ends x = 0.5 and 0.625 (both held).  The same points with the two capsules swapped."""
    ident = np.array([1.0, 0.0, 0.0, 0.0])
    h = 0.09
    for (x2a, x2b), (xp1, xp2), free in (((0.375, 0.75), (0.4375, 0.4375), 1), ((0.625, 1.0), (0.5, 0.625), 0)):
        seg1 = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]])
        seg2 = np.array([[x2a, 0.0, h], [x2b, 0.0, h]])
        if swap:
            seg1, seg2 = seg2, seg1
            xp1, xp2 = xp2, xp1  # overlapping: t on the long axis (0.9375) is inside, free as before
        offset = np.array([seg1[0], seg2[0], seg2[1], seg1[1]])  # the nodes at the origin
        g = segment_points(ident, ident, np.zeros(3), np.zeros(3), offset)
        s1, s2, got_free, d, dist = np.array(g[0:3]), np.array(g[9:12]), g[12], np.array(g[16:19]), g[19]
        z1, z2 = (h, 0.0) if swap else (0.0, h)
        np.testing.assert_allclose(s1, [xp1, 0.0, z1], rtol=0.0, atol=1e-15)
        np.testing.assert_allclose(s2, [xp2, 0.0, z2], rtol=0.0, atol=1e-15)
        np.testing.assert_allclose(d, s2 - s1, rtol=0.0, atol=1e-15)
        assert abs(dist - math.hypot(xp2 - xp1, h)) < 1e-15
        assert got_free == free


def test_model_file_capsules_make_capsule_pairs_with_body_contact() -> None:
    """A model file's two capsules on two bodies and a box on a third, with [body_contact]: one
    capsule–capsule pair and each capsule's two end spheres against the box, as the builder makes
    them."""
    from kynemapy.model.file import parse_model_file

    text = """
[model]
gravity = [0.0, 0.0, -9.81]

[[node]]
name = "a"
position = [0.0, 0.0, 0.0]

[[node]]
name = "b"
position = [0.0, 0.0, 0.2]

[[node]]
name = "c"
position = [0.5, 0.0, 0.0]

[[mass]]
node = "a"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[mass]]
node = "b"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[mass]]
node = "c"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[shape]]
kind = "capsule"
node = "a"
radius = 0.05
point_a = [-0.1, 0.0, 0.0]
point_b = [0.1, 0.0, 0.0]

[[shape]]
kind = "capsule"
node = "b"
radius = 0.05
point_a = [0.0, -0.1, 0.2]
point_b = [0.0, 0.1, 0.2]

[[shape]]
kind = "box"
node = "c"
half_extents = [0.1, 0.1, 0.1]

[body_contact]
stiffness = 1e5
damping = 30.0

[step]
h = 0.001
"""
    model = parse_model_file(text).model
    assert model.pair_shape.tolist() == [[0, 1], [0, 2], [0, 2], [1, 2], [1, 2]]
    np.testing.assert_array_equal(model.pair_offset[0, [0, 3]], [[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0]])
    np.testing.assert_array_equal(model.pair_offset[0, 1:3], [[0.0, -0.1, 0.0], [0.0, 0.1, 0.0]])
