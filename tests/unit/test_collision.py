"""Collision geometry: closed forms of every pair, symmetry, rigid motion, broad phase vs brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.collision.broad import aabbs, candidate_pairs
from kynemapy.collision.narrow import BOX, CAPSULE, SPHERE, collide, collide_plane
from kynemapy.collision.query import scene_of

I = np.array([1.0, 0.0, 0.0, 0.0])


def quat(axis, angle):
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    return np.array([math.cos(angle / 2), *(math.sin(angle / 2) * a)])


def qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])  # fmt: skip


def rotm(q):
    w, x, y, z = q
    return np.array([
        [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
    ])  # fmt: skip


def run(ka, pa, qa, da, kb, pb, qb, db, margin=0.0):
    out = np.full((16, 10), np.nan)
    n = collide(ka, np.asarray(pa, float), np.asarray(qa, float), np.asarray(da, float), kb, np.asarray(pb, float),
                np.asarray(qb, float), np.asarray(db, float), margin, out, np.zeros((2, 16, 3)))  # fmt: skip
    return out[:n]


def check_rows(rows):
    """Each row: unit normal, gap = n · (p_B − p_A), p_B − p_A parallel to n."""
    for r in rows:
        n = r[6:9]
        assert abs(np.linalg.norm(n) - 1.0) < 1e-12
        d = r[3:6] - r[0:3]
        assert abs(d @ n - r[9]) < 1e-12
        assert np.linalg.norm(d - (d @ n) * n) < 1e-12


def test_sphere_on_box_face_edge_corner():
    h = np.array([1.0, 2.0, 3.0])
    # face: centre above the +z face by 0.4, radius 0.5
    rows = run(SPHERE, [0.2, -0.3, 3.4], I, [0.5, 0, 0], BOX, [0, 0, 0], I, h)
    assert rows.shape[0] == 1
    np.testing.assert_allclose(rows[0, 9], -0.1, atol=1e-15)
    np.testing.assert_allclose(rows[0, 6:9], [0, 0, -1], atol=1e-15)
    np.testing.assert_allclose(rows[0, 3:6], [0.2, -0.3, 3.0], atol=1e-15)
    # edge x = 1, z = 3: centre at distance 0.3 along (1, 0, 1)/√2
    c = np.array([1.0, 0.5, 3.0]) + 0.3 * np.array([1, 0, 1]) / math.sqrt(2)
    rows = run(SPHERE, c, I, [0.25, 0, 0], BOX, [0, 0, 0], I, h, margin=0.1)
    np.testing.assert_allclose(rows[0, 9], 0.05, atol=1e-14)
    np.testing.assert_allclose(rows[0, 3:6], [1.0, 0.5, 3.0], atol=1e-14)
    # corner (1, 2, 3), box turned and moved: the same numbers in the turned frame
    q = quat([1, 2, 3], 0.7)
    t = np.array([0.3, -1.0, 2.0])
    c = np.array([1.0, 2.0, 3.0]) + 0.2 * np.ones(3) / math.sqrt(3)
    rows = run(SPHERE, t + rotm(q) @ c, I, [0.1, 0, 0], BOX, t, q, h, margin=0.2)
    np.testing.assert_allclose(rows[0, 9], 0.1, atol=1e-14)
    np.testing.assert_allclose(rows[0, 3:6], t + rotm(q) @ [1, 2, 3], atol=1e-14)
    check_rows(rows)


def test_sphere_inside_box_pushed_out_through_nearest_face():
    rows = run(SPHERE, [0.1, 1.7, 0.0], I, [0.2, 0, 0], BOX, [0, 0, 0], I, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(rows[0, 9], -0.3 - 0.2, atol=1e-15)
    np.testing.assert_allclose(rows[0, 6:9], [0, -1, 0], atol=1e-15)  # from the sphere into the box
    np.testing.assert_allclose(rows[0, 3:6], [0.1, 2.0, 0.0], atol=1e-15)


def test_box_face_on_box_four_points_exact_gaps():
    q = quat([0, 0, 1], 0.3)  # both turned about the normal: the top box turned further
    rows = run(BOX, [0.1, 0.2, 1.5 - 0.004], qmul(quat([0, 0, 1], 0.5), q), [0.5, 0.4, 0.5], BOX, [0, 0, 0], q,
               [2.0, 2.0, 1.0])  # fmt: skip
    assert rows.shape[0] == 4
    np.testing.assert_allclose(rows[:, 9], -0.004, atol=1e-14)
    np.testing.assert_allclose(rows[:, 6:9], np.tile([0, 0, -1.0], (4, 1)), atol=1e-14)
    # the four points on the top box are its bottom corners
    r = rotm(qmul(quat([0, 0, 1], 0.5), q))
    corners = [np.array([0.1, 0.2, 1.5 - 0.004]) + r @ [sx * 0.5, sy * 0.4, -0.5] for sx in (-1, 1) for sy in (-1, 1)]
    got = sorted(map(tuple, np.round(rows[:, 0:3], 12)))
    assert got == sorted(map(tuple, np.round(corners, 12)))
    check_rows(rows)


def test_equal_boxes_crossed_give_the_octagon():
    # equal boxes face-on, the top one turned 45°: the clipped square is an octagon
    rows = run(BOX, [0, 0, 2.0 - 0.01], quat([0, 0, 1], math.pi / 4), [1, 1, 1], BOX, [0, 0, 0], I, [1, 1, 1])
    assert rows.shape[0] == 8
    np.testing.assert_allclose(rows[:, 9], -0.01, atol=1e-14)
    # all on the top face's boundary of the lower box
    assert np.max(np.abs(rows[:, 3:5])) <= 1.0 + 1e-14
    np.testing.assert_allclose(np.max(np.abs(rows[:, 3:5]), axis=1), 1.0, atol=1e-14)


def test_box_edge_on_box_edge():
    # two unit cubes, each turned 45° about a horizontal axis, edges crossing at right angles
    qa = quat([1, 0, 0], math.pi / 4)
    qb = quat([0, 1, 0], math.pi / 4)
    s2 = math.sqrt(2)
    rows = run(BOX, [0, 0, s2 + 0.1], qa, [0.5] * 3, BOX, [0, 0, 0], qb, [0.5] * 3, margin=0.2)
    assert rows.shape[0] == 1
    np.testing.assert_allclose(rows[0, 9], 0.1 - s2 + s2, atol=1e-12)  # edges at heights ±√2/2
    np.testing.assert_allclose(rows[0, 0:3], [0, 0, s2 / 2 + 0.1], atol=1e-12)
    np.testing.assert_allclose(rows[0, 3:6], [0, 0, s2 / 2], atol=1e-12)
    np.testing.assert_allclose(rows[0, 6:9], [0, 0, -1], atol=1e-12)


@pytest.mark.parametrize("s", [1e-3, 1e-9, 1e-12, 1e-15, 1e-16, 0.0, -1e-16, -1e-15, -1e-12, -1e-9])
def test_box_edges_touching_keep_their_normal_at_round_off_gaps(s):
    # the crossing edges of test_box_edge_on_box_edge a gap s apart, the pair moved rigidly to
    # random poses: the normal is the edges' common perpendicular from A to B (the closest
    # points of two edges that touch are one point up to round-off, and their difference has
    # no direction: a normal taken from it pointed from B to A on the 100-box pile)
    rng = np.random.default_rng(7)
    s2 = math.sqrt(2)
    for _ in range(40):
        r = quat(rng.normal(size=3), rng.uniform(0, math.pi))
        shift = rng.uniform(-2, 2, size=3)
        rm = rotm(r)
        qa = qmul(r, quat([1, 0, 0], math.pi / 4))
        qb = qmul(r, quat([0, 1, 0], math.pi / 4))
        pa = rm @ [0, 0, s2 + s] + shift
        rows = run(BOX, pa, qa, [0.5] * 3, BOX, shift, qb, [0.5] * 3, margin=0.2)
        assert rows.shape[0] == 1
        assert rows[0, 6:9] @ (rm @ [0, 0, -1]) > 1 - 1e-9
        assert abs(rows[0, 9] - s) <= 1e-14


def test_capsules_crossing_and_parallel():
    qz = I  # axis along z
    qx = quat([0, 1, 0], math.pi / 2)  # local z to world x
    qy = quat([1, 0, 0], -math.pi / 2)  # local z to world y
    rows = run(CAPSULE, [0, 0, 0], qx, [0.2, 1.0, 0], CAPSULE, [0.3, -0.2, 0.5], qy, [0.1, 2.0, 0], margin=1.0)
    assert rows.shape[0] == 1
    np.testing.assert_allclose(rows[0, 9], 0.5 - 0.3, atol=1e-15)
    np.testing.assert_allclose(rows[0, 0:3], [0.3, 0, 0.2], atol=1e-15)
    np.testing.assert_allclose(rows[0, 3:6], [0.3, 0, 0.4], atol=1e-15)
    # parallel, overlapping over x in [0.5, 1]: two points at the overlap's ends
    rows = run(CAPSULE, [0, 0, 0], qx, [0.2, 1.0, 0], CAPSULE, [1.5, 0, 0.35], qx, [0.2, 1.0, 0])
    assert rows.shape[0] == 2
    np.testing.assert_allclose(rows[:, 9], -0.05, atol=1e-15)
    np.testing.assert_allclose(sorted(rows[:, 0]), [0.5, 1.0], atol=1e-15)
    # capsule end on a sphere
    rows = run(SPHERE, [0, 0, 1.6], I, [0.3, 0, 0], CAPSULE, [0, 0, 0], qz, [0.2, 1.0, 0], margin=1.0)
    np.testing.assert_allclose(rows[0, 9], 0.1, atol=1e-15)
    np.testing.assert_allclose(rows[0, 6:9], [0, 0, -1], atol=1e-15)


def test_capsule_lying_on_box_two_points():
    qx = quat([0, 1, 0], math.pi / 2)
    rows = run(CAPSULE, [0.2, 0, 1.25 - 0.01], qx, [0.25, 0.5, 0], BOX, [0, 0, 0], I, [1, 1, 1])
    assert rows.shape[0] == 2
    np.testing.assert_allclose(rows[:, 9], -0.01, atol=1e-14)
    np.testing.assert_allclose(sorted(rows[:, 0]), [-0.3, 0.7], atol=1e-14)
    # crossing an edge of the box: the deepest axis point
    q = quat([0, 1, 0], math.pi / 2 + 0.3)
    rows = run(CAPSULE, [1.0, 0, 1.0 + 0.3], q, [0.1, 2.0, 0], BOX, [0, 0, 0], I, [1, 1, 1], margin=1.0)
    u = rotm(q)[:, 2]
    p = np.array([1.0, 0, 1.3])
    foot = p + ((np.array([1.0, 0, 1.0]) - p) @ u) * u  # the axis point nearest the edge y-line
    d = np.linalg.norm(np.array([1.0, 0, 1.0]) - foot) * 0 + np.linalg.norm((foot - [1, 0, 1])[[0, 2]])
    assert np.min(rows[:, 9]) == pytest.approx(d - 0.1, abs=1e-9)


def test_box_tilted_on_plane():
    q = quat([1, 0, 0], 0.4)
    h = np.array([0.5, 0.3, 0.2])
    c = np.array([1.0, 2.0, 0.25])
    out = np.zeros((8, 10))
    n = collide_plane(BOX, c, q, h, np.array([0, 0, 1.0]), 0.0, 0.0, out)
    r = rotm(q)
    lows = sorted(
        (c + r @ (s * h))[2] for s in np.array([[a, b, d] for a in (-1, 1) for b in (-1, 1) for d in (-1, 1)])
    )
    expected = [z for z in lows if z <= 0.0]
    assert n == len(expected) == 2
    np.testing.assert_allclose(sorted(out[:n, 9]), expected, atol=1e-15)
    np.testing.assert_allclose(out[:n, 6:9], np.tile([0, 0, -1.0], (2, 1)), atol=0)
    np.testing.assert_allclose(out[:n, 5], 0.0, atol=1e-15)
    # capsule: its two end spheres
    n = collide_plane(CAPSULE, np.array([0, 0, 0.3]), quat([0, 1, 0], 0.5), np.array([0.1, 0.4, 0]),
                      np.array([0, 0, 1.0]), 0.0, 1.0, out)  # fmt: skip
    assert n == 2
    np.testing.assert_allclose(sorted(out[:n, 9]), [0.3 - 0.4 * math.cos(0.5) - 0.1, 0.3 + 0.4 * math.cos(0.5) - 0.1])


POSE_CASES = [(SPHERE, [0.3, 0, 0]), (CAPSULE, [0.2, 0.6, 0]), (BOX, [0.4, 0.3, 0.5])]


def random_pose(rng, spread):
    q = rng.normal(size=4)
    return rng.uniform(-spread, spread, 3), q / np.linalg.norm(q)


@pytest.mark.parametrize("ka,da", POSE_CASES)
@pytest.mark.parametrize("kb,db", POSE_CASES)
def test_swap_and_rigid_motion(ka, da, kb, db):
    rng = np.random.default_rng(7 + 3 * ka + kb)
    seen = 0
    for _ in range(200):
        pa, qa = random_pose(rng, 0.6)
        pb, qb = random_pose(rng, 0.6)
        ab = run(ka, pa, qa, da, kb, pb, qb, db, margin=0.5)
        ba = run(kb, pb, qb, db, ka, pa, qa, da, margin=0.5)
        check_rows(ab)
        assert ab.shape == ba.shape
        # the box's signed distance along a capsule's axis can have a flat minimum (a plateau
        # inside the box), any point of which is a deepest point: there only the gaps must agree
        plateau = {ka, kb} == {CAPSULE, BOX}
        key = np.lexsort(ab[:, :3].T)
        keyb = np.lexsort(ba[:, 3:6].T)
        np.testing.assert_allclose(np.sort(ab[:, 9]), np.sort(ba[:, 9]), atol=1e-12)
        if not plateau:
            np.testing.assert_allclose(ab[key, 0:3], ba[keyb, 3:6], atol=1e-9)
            np.testing.assert_allclose(ab[key, 3:6], ba[keyb, 0:3], atol=1e-9)
            np.testing.assert_allclose(ab[key, 6:9], -ba[keyb, 6:9], atol=1e-9)
            np.testing.assert_allclose(ab[key, 9], ba[keyb, 9], atol=1e-12)
        # a rigid motion of both moves the points and normals with it, gaps unchanged
        t, q = random_pose(rng, 3.0)
        r = rotm(q)
        moved = run(ka, t + r @ pa, qmul(q, qa), da, kb, t + r @ pb, qmul(q, qb), db, margin=0.5)
        assert moved.shape == ab.shape
        if ab.shape[0] and plateau:
            np.testing.assert_allclose(np.sort(moved[:, 9]), np.sort(ab[:, 9]), atol=1e-9)
            seen += 1
        elif ab.shape[0]:
            # the same rows in the same order up to round-off (the same branches)
            np.testing.assert_allclose(np.sort(moved[:, 9]), np.sort(ab[:, 9]), atol=1e-9)
            expect = t + ab[:, 0:3] @ r.T
            mk, ek = np.lexsort(np.round(moved[:, 0:3], 6).T), np.lexsort(np.round(expect, 6).T)
            np.testing.assert_allclose(moved[mk, 0:3], expect[ek], atol=1e-9)
            seen += 1
    assert seen > 20


def test_broad_phase_matches_brute_force():
    rng = np.random.default_rng(3)
    s = 400
    kind = rng.integers(0, 3, s)
    dims = rng.uniform(0.05, 0.4, (s, 3))
    pos = rng.uniform(0, 5, (s, 3)) * [1.0, 2.0, 0.5]  # the sweep along y
    quats = rng.normal(size=(s, 4))
    quats /= np.linalg.norm(quats, axis=1)[:, None]
    node = rng.integers(0, 300, s)
    group = rng.integers(1, 4, s)
    mask = rng.integers(1, 4, s)
    lo, hi = np.zeros((s, 3)), np.zeros((s, 3))
    aabbs(kind, dims, pos, quats, 0.05, lo, hi)
    excluded = rng.integers(0, s, (200, 2))
    joined = rng.integers(0, 300, (100, 2))
    got = candidate_pairs(lo, hi, node, group, mask, excluded, joined)
    exc = {tuple(sorted(p)) for p in excluded.tolist()}
    jn = {tuple(sorted(p)) for p in joined.tolist()}
    brute = [
        (a, b)
        for a in range(s)
        for b in range(a + 1, s)
        if np.all(lo[a] <= hi[b]) and np.all(lo[b] <= hi[a]) and node[a] != node[b]
        and group[a] & mask[b] and group[b] & mask[a] and (a, b) not in exc
        and tuple(sorted((node[a], node[b]))) not in jn
    ]  # fmt: skip
    assert len(brute) > 100
    assert [tuple(p) for p in got.tolist()] == brute
    # the incremental order gives the same pairs after a small motion
    ax = int(np.argmax(lo.var(axis=0)))
    order = np.argsort(lo[:, ax]).astype(np.int64)
    pos2 = pos + rng.normal(scale=0.02, size=pos.shape)
    aabbs(kind, dims, pos2, quats, 0.05, lo, hi)
    again = candidate_pairs(lo, hi, node, group, mask, excluded, joined, order=order)
    fresh = candidate_pairs(lo, hi, node, group, mask, excluded, joined)
    assert np.array_equal(again, fresh)
    assert np.all(np.diff(lo[order, ax]) >= 0)


def test_aabb_bounds_each_shape():
    rng = np.random.default_rng(5)
    for k, d in POSE_CASES:
        p, q = random_pose(rng, 1.0)
        lo, hi = np.zeros((1, 3)), np.zeros((1, 3))
        aabbs(np.array([k]), np.array([d], float), p[None], q[None], 0.0, lo, hi)
        # the support point along each world axis reaches the box exactly
        r = rotm(q)
        for c in range(3):
            if k == BOX:
                reach = np.abs(r[c]) @ np.asarray(d)
            else:
                reach = d[0] + (d[1] * abs(r[c, 2]) if k == CAPSULE else 0.0)
            np.testing.assert_allclose([hi[0, c] - p[c], p[c] - lo[0, c]], [reach, reach], atol=1e-15)


def test_scene_of_builder_and_collisions():
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    n1 = b.add_node(position=(0, 0, 0.5))
    b.add_mass(n1, mass=1.0, inertia=(1, 1, 1))
    n2 = b.add_node(position=(0.3, 0, 1.49))
    b.add_mass(n2, mass=1.0, inertia=(1, 1, 1))
    n3 = b.add_node(position=(3, 0, 0.05))
    b.add_mass(n3, mass=1.0, inertia=(1, 1, 1))
    b.add_box(n1, (2, 2, 0.5))
    b.add_box(n2, (0.5, 0.5, 0.5), center=(0.3, 0, 1.49))
    b.add_sphere(n3, 0.1)
    b.add_ground_plane(normal=(0, 0, 1), offset=0.0, stiffness=1e6, damping=1e3, friction=0.3, slip_velocity=1e-3)
    sc = scene_of(b)
    assert sc.table.kind.tolist() == [BOX, BOX, SPHERE]
    m = b.build()
    x = np.asarray(m.x0)[:, :3]
    c = sc.collisions(x, np.tile(I, (3, 1)), margin=0.0)
    pair = c.node_b >= 0
    assert pair.sum() == 4 and np.all(c.node_a[pair] == 0) and np.all(c.node_b[pair] == 1)
    np.testing.assert_allclose(c.gap[pair], -0.01, atol=1e-14)
    ground = ~pair
    assert sorted(c.shape_a[ground].tolist()) == [0, 0, 0, 0, 2]
    np.testing.assert_allclose(c.gap[ground], [0.0, 0.0, 0.0, 0.0, -0.05], atol=1e-15)
    # the upper box turned by its node's rotation about its own centre: still four corners down
    r = np.tile(I, (3, 1))
    r[1] = quat([0, 0, 1], 0.4)
    c = sc.collisions(x, r, margin=0.0)
    assert (c.node_b == 1).sum() == 4
    b.exclude_contact(0, 1)
    assert (scene_of(b).collisions(x, r).node_b == 1).sum() == 0
    with pytest.raises(ValueError, match="margin"):
        sc.collisions(x, r, margin=-1.0)
    with pytest.raises(ValueError, match="rotations"):
        sc.collisions(x, r[:, :3])
