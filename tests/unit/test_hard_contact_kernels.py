"""The compiled geometry kernels of hard contact (kynemapy.run.hard_contact) against independent
computations: scipy's rotations and numpy, on random poses."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from kynemapy.run.hard_contact import contact_geometry, contact_rows, contact_slip, tangents


def _scene(rng: np.random.Generator, n_nodes: int = 3, k: int = 7) -> dict[str, np.ndarray]:
    node = rng.integers(0, n_nodes, size=k).astype(np.int64)
    normal = rng.normal(size=(k, 3))
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    quat = Rotation.random(n_nodes, random_state=1).as_quat()  # (x, y, z, w)
    q = np.zeros((n_nodes, 7))
    q[:, :3] = rng.normal(size=(n_nodes, 3))
    q[:, 3] = quat[:, 3]
    q[:, 4:7] = quat[:, :3]
    return {
        "node": node,
        "normal": normal,
        "tangent": np.array([tangents(n) for n in normal]),
        "offset": rng.normal(size=(k, 3)),
        "radius": rng.uniform(0.0, 0.3, size=k),
        "offset_d": rng.normal(size=k),
        "x0": rng.normal(size=(k, 3)),
        "q": q,
    }


def _rot(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.column_stack([q[:, 4:7], q[:, 3]]))


def test_contact_geometry_matches_scipy_rotations() -> None:
    s = _scene(np.random.default_rng(0))
    k = s["node"].size
    gap, point, arm = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
    smallest = contact_geometry(
        s["x0"], s["q"], s["node"], s["offset"], s["radius"], s["normal"], s["offset_d"], gap, point, arm
    )
    x = s["x0"] + s["q"][s["node"], :3]
    centre = x + _rot(s["q"][s["node"]]).apply(s["offset"])
    expect_gap = np.sum(s["normal"] * centre, axis=1) - s["radius"] - s["offset_d"]
    expect_point = centre - s["radius"][:, None] * s["normal"]
    np.testing.assert_allclose(gap, expect_gap, rtol=0, atol=1e-14)
    np.testing.assert_allclose(point, expect_point, rtol=0, atol=1e-14)
    np.testing.assert_allclose(arm, expect_point - x, rtol=0, atol=1e-14)
    assert smallest == np.min(gap)


def test_contact_slip_matches_the_rotation_vector_of_scipy() -> None:
    rng = np.random.default_rng(1)
    s = _scene(rng)
    q_start = s["q"].copy()
    q_start[:, :3] -= rng.normal(size=q_start[:, :3].shape) * 0.01
    turn = Rotation.from_rotvec(rng.normal(size=(q_start.shape[0], 3)) * 0.3)
    q = s["q"].copy()
    moved = (turn * _rot(q_start)).as_quat()
    q[:, 3], q[:, 4:7] = moved[:, 3], moved[:, :3]
    out = np.empty((s["node"].size, 2))
    contact_slip(q, q_start, s["node"], s["offset"], s["radius"], s["normal"], s["tangent"], out)
    nodes = s["node"]
    displacement = (
        q[nodes, :3] - q_start[nodes, :3] + _rot(q[nodes]).apply(s["offset"]) - _rot(q_start[nodes]).apply(s["offset"])
    )
    phi = (_rot(q[nodes]) * _rot(q_start[nodes]).inv()).as_rotvec()
    slip = displacement - s["radius"][:, None] * np.cross(phi, s["normal"])
    expect = np.einsum("kij,kj->ki", s["tangent"], slip)
    np.testing.assert_allclose(out, expect, rtol=0, atol=1e-14)


def test_contact_rows_give_the_contact_point_velocity() -> None:
    rng = np.random.default_rng(2)
    s = _scene(rng, n_nodes=2, k=4)
    first = np.array([0, 6], dtype=np.int64)[s["node"]]
    rotates = np.ones(4, dtype=bool)
    arm = rng.normal(size=(4, 3))
    which = np.array([3, 0, 2], dtype=np.int64)
    out = np.full((2 + 3 * which.size, 12), np.nan)
    contact_rows(which, arm, s["normal"], s["tangent"], first, rotates, out, 2)
    v = rng.normal(size=12)
    for j, i in enumerate(which):
        node = s["node"][i]
        lin, ang = v[6 * node : 6 * node + 3], v[6 * node + 3 : 6 * node + 6]
        velocity = lin + np.cross(ang, arm[i])  # the contact point's velocity
        frame = np.vstack([s["normal"][i], s["tangent"][i]])
        np.testing.assert_allclose(out[2 + 3 * j : 5 + 3 * j] @ v, frame @ velocity, rtol=0, atol=1e-14)
    assert np.all(np.isnan(out[:2]))
    # a node without rotations: the translational DOFs alone
    out2 = np.empty((3, 12))
    contact_rows(which[:1], arm, s["normal"], s["tangent"], first, np.zeros(4, dtype=bool), out2, 0)
    f = first[which[0]]
    expect = np.zeros((3, 12))
    expect[:, f : f + 3] = np.vstack([s["normal"][which[0]], s["tangent"][which[0]]])
    np.testing.assert_array_equal(out2, expect)


def test_csc_to_dense_matches_scipy_sparse() -> None:
    import scipy.sparse

    from kynemapy.run.joint_stops import csc_to_dense

    rng = np.random.default_rng(3)
    a = scipy.sparse.random(6, 6, density=0.4, format="csc", random_state=4)
    out = np.full((6, 6), np.nan)
    vals = np.concatenate([a.data, [99.0]])  # a workspace's values may run past nnz
    csc_to_dense(a.indptr.astype(np.int64), a.indices.astype(np.int64), vals, out)
    np.testing.assert_array_equal(out, a.toarray())
    # repeated entries are added
    indptr = np.array([0, 2, 2], dtype=np.int64)
    indices = np.array([1, 1], dtype=np.int64)
    out2 = rng.normal(size=(2, 2))
    csc_to_dense(indptr, indices, np.array([0.5, 0.25]), out2)
    np.testing.assert_array_equal(out2, [[0.0, 0.0], [0.75, 0.0]])


def test_apply_position_adds_translations_and_turns_by_the_exponential() -> None:
    from kynemapy.run.joint_stops import apply_position

    rng = np.random.default_rng(5)
    # node 0 with 6 DOFs, node 1 with 3 (translations only), node 2 with 6 and a zero rotation increment
    dof_node = np.array([0] * 6 + [1] * 3 + [2] * 6, dtype=np.int64)
    dof_component = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5], dtype=np.int64)
    rotating = np.array([0, 2], dtype=np.int64)
    rot_first = np.array([0, 9], dtype=np.int64)
    quat = Rotation.random(3, random_state=6).as_quat()
    q = np.zeros((3, 7))
    q[:, :3] = rng.normal(size=(3, 3))
    q[:, 3], q[:, 4:7] = quat[:, 3], quat[:, :3]
    q[1, 3:7] = [1.0, 0.0, 0.0, 0.0]
    u = rng.normal(size=15) * 0.2
    u[12:15] = 0.0
    before = q.copy()
    apply_position(q, u, dof_node, dof_component, rotating, rot_first)
    np.testing.assert_allclose(q[0, :3], before[0, :3] + u[0:3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(q[1, :3], before[1, :3] + u[6:9], rtol=0, atol=1e-15)
    np.testing.assert_allclose(q[2, :3], before[2, :3] + u[9:12], rtol=0, atol=1e-15)
    turned = (Rotation.from_rotvec(u[3:6]) * Rotation.from_quat(np.r_[before[0, 4:7], before[0, 3]])).as_quat()
    expect = np.r_[turned[3], turned[:3]]
    np.testing.assert_allclose(q[0, 3:7] * np.sign(q[0, 3] * expect[0]), expect, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(q[1, 3:7], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(q[2, 3:7], before[2, 3:7])


def test_lu_factor_and_solve_match_numpy() -> None:
    from kynemapy.run.hard_contact import lu_factor, lu_solve

    rng = np.random.default_rng(7)
    for a in (rng.normal(size=(6, 6)), np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 3.0], [4.0, 1.0, 0.0]])):
        n = a.shape[0]
        lu, piv, x = np.empty((n, n)), np.empty(n, dtype=np.int64), np.empty(n)
        lu_factor(a, lu, piv)
        b = rng.normal(size=n)
        lu_solve(lu, piv, b, x)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12, atol=1e-12)


def _scenes() -> list:
    import kynemapy as kp

    def ball(speed: float, spin: float, height: float, e: float, mu: float) -> kp.Simulation:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        n = b.add_node(position=(0.0, 0.0, 0.1 + height), velocity=(speed, 0.0, -1.0 * (height > 0), 0.0, spin, 0.0))
        b.add_mass(n, mass=1.0, inertia=(0.004, 0.004, 0.004))
        b.add_sphere(n, 0.1)
        b.add_ground_plane(law="hard", restitution=e, friction=mu)
        return kp.Simulation(b.build(), kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-12, rtol=1e-12))

    def box(angle: float, mu: float, spin: float) -> kp.Simulation:
        c, s = np.cos(angle), np.sin(angle)
        axes = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        centre = 0.1 * axes[:, 2]
        n = b.add_node(position=tuple(centre), velocity=(*(0.5 * axes[:, 0]), 0.0, 0.0, spin))
        b.add_mass(n, mass=3.0, inertia=(0.05, 0.06, 0.07))
        b.add_box(n, (0.2, 0.15, 0.1), center=tuple(centre), axes=axes)
        b.add_ground_plane(normal=tuple(axes[:, 2]), offset=0.0, law="hard", friction=mu, restitution=0.3)
        return kp.Simulation(b.build(), kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-12, rtol=1e-12))

    def two_bodies() -> kp.Simulation:  # a ball sliding beside a box spinning (n = 12 DOFs)
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        n = b.add_node(position=(0.0, 0.0, 0.1), velocity=(1.5, 0.5, 0.0, 0.0, 0.0, 3.0))
        b.add_mass(n, mass=1.0, inertia=(0.004, 0.004, 0.004))
        b.add_sphere(n, 0.1)
        m = b.add_node(position=(1.0, 0.0, 0.1), velocity=(0.0, -0.4, 0.0, 0.0, 0.0, 1.0))
        b.add_mass(m, mass=3.0, inertia=(0.05, 0.06, 0.07))
        b.add_box(m, (0.2, 0.15, 0.1))
        b.add_ground_plane(law="hard", friction=0.3)
        return kp.Simulation(b.build(), kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-12, rtol=1e-12))

    return [
        two_bodies,
        lambda: ball(2.0, 0.0, 0.0, 0.0, 0.3),
        lambda: ball(1.0, 15.0, 0.01, 0.5, 0.4),
        lambda: box(0.3, 0.2, 0.0),
        lambda: box(0.0, 0.5, 2.0),
    ]


def test_the_compiled_contact_path_matches_the_general_one() -> None:
    """The compiled path (free nodes, no stops) against the general numpy path of the same scheme
    (``_correct_with_contacts`` with stops and constraints, verified by the closed forms of
    tests/verification/test_hard_contact.py): the same states and impulses to round-off.  No scene
    grazes the plane (a gap within round-off of 0 may open in one path and close in the other:
    the LU of M is the kernel's own, not LAPACK's)."""
    for make in _scenes():
        fast, slow = make(), make()
        assert fast.joint_stops is not None and fast.joint_stops._compiled
        slow.joint_stops._compiled = False
        touched = 0
        for _ in range(150):
            fast.step()
            slow.step()
            np.testing.assert_allclose(fast.state.q, slow.state.q, rtol=0, atol=1e-12)
            np.testing.assert_allclose(fast.state.v, slow.state.v, rtol=0, atol=1e-10)
            a, b = fast.joint_stops.contacts, slow.joint_stops.contacts
            np.testing.assert_array_equal(a.active, b.active)
            np.testing.assert_allclose(a.normal_impulse, b.normal_impulse, rtol=0, atol=1e-12)
            np.testing.assert_allclose(a.friction_impulse, b.friction_impulse, rtol=0, atol=1e-12)
            np.testing.assert_allclose(a.position_impulse, b.position_impulse, rtol=0, atol=1e-15)
            assert fast.joint_stops.iterations == slow.joint_stops.iterations
            touched += int(np.any(a.active))
        assert touched >= 2  # the bouncing ball touches twice in 0.15 s, the others every step


def test_touched_pairs_finds_the_points_near_a_touching_point_of_their_pair() -> None:
    """``body_query.touched_pairs`` against the rule written out in numpy: a point of a shape pair
    is touched where its pair had a point at the step's start within the distance of it, in body
    B's frame or in body A's; a point whose pair had none keeps its value (here, True and False
    alike); the decision at the distance itself is ``<=``."""
    from kynemapy.run.body_query import touched_pairs

    rng = np.random.default_rng(7)
    distance = 0.0625  # a power of two: the point placed at it below is at it exactly
    keys = rng.integers(0, 5, size=40).astype(np.int64)
    local_b = rng.uniform(-0.1, 0.1, size=(40, 3))
    local_a = rng.uniform(-0.1, 0.1, size=(40, 3))
    before_keys = rng.integers(0, 4, size=25).astype(np.int64)  # pair 4 had no point: kept as given
    before_b = rng.uniform(-0.1, 0.1, size=(25, 3))
    before_a = rng.uniform(-0.1, 0.1, size=(25, 3))
    local_b[0] = 0.0
    before_b[0] = (distance, 0.0, 0.0)  # exactly at the distance in body B's frame
    local_a[0] = (1.0, 1.0, 1.0)  # far in body A's
    before_keys[0] = keys[0]
    given = rng.random(40) < 0.5
    out = given.copy()
    touched_pairs(keys, local_b, local_a, before_keys, before_b, before_a, distance, out)
    for i in range(40):
        same = before_keys == keys[i]
        if not same.any():
            assert out[i] == given[i]
            continue
        gaps = np.concatenate(
            [np.linalg.norm(local_b[i] - before_b[same], axis=1), np.linalg.norm(local_a[i] - before_a[same], axis=1)]
        )
        assert out[i] == (gaps.min() <= distance), i
    assert out[0]  # at the distance: touched
    assert 0 < out[keys != 4].sum() < (keys != 4).sum()  # both outcomes occur


def _random_states(rng: np.random.Generator, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference positions x0 (N, 7) and states q (N, 7) with unit quaternions."""
    x0 = np.zeros((n_nodes, 7))
    x0[:, :3] = rng.uniform(-1.0, 1.0, size=(n_nodes, 3))
    x0[:, 3] = 1.0
    q = np.zeros((n_nodes, 7))
    q[:, :3] = rng.uniform(-0.2, 0.2, size=(n_nodes, 3))
    quat = rng.standard_normal((n_nodes, 4))
    q[:, 3:] = quat / np.linalg.norm(quat, axis=1)[:, None]
    return x0, q


def test_material_rows_carry_body_points_and_normals_to_the_world() -> None:
    """``body_query.material_rows`` against scipy's rotations: each point ``x0 + u + R(q) l`` on
    its body, the normal ``R_B(q) n_l`` made unit, the gap ``n · (p_B − p_A)``."""
    from kynemapy.run.body_query import material_rows

    rng = np.random.default_rng(11)
    x0, q = _random_states(rng, 4)
    c = 30
    node_a = rng.integers(0, 4, size=c).astype(np.int64)
    node_b = (node_a + rng.integers(1, 4, size=c)) % 4
    local_a, local_b = rng.uniform(-0.3, 0.3, size=(c, 3)), rng.uniform(-0.3, 0.3, size=(c, 3))
    local_n = rng.standard_normal((c, 3)) * 1.7  # not unit: the kernel normalizes
    out = np.full((c, 10), np.nan)
    material_rows(x0, q, node_a, node_b, local_a, local_b, local_n, out)
    pa = x0[node_a, :3] + q[node_a, :3] + _rot(q[node_a]).apply(local_a)
    pb = x0[node_b, :3] + q[node_b, :3] + _rot(q[node_b]).apply(local_b)
    n = _rot(q[node_b]).apply(local_n)
    n /= np.linalg.norm(n, axis=1)[:, None]
    np.testing.assert_allclose(out[:, 0:3], pa, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out[:, 3:6], pb, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out[:, 6:9], n, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out[:, 9], np.sum(n * (pb - pa), axis=1), rtol=0, atol=1e-15)


def test_pair_geometry_gives_frames_arms_and_the_slip_over_the_step() -> None:
    """``body_query.pair_geometry`` against scipy's rotations: the frame's rows are n and the
    tangents ``t₁ = e × n / |e × n|`` (e the axis least aligned with n, the first on a tie),
    ``t₂ = n × t₁``; the arms are the points less their nodes' positions; the slip is the motion
    along the tangents over the step of B's material point at the middle of the two points,
    relative to A's (each carried back to the start through its body's frame)."""
    from kynemapy.run.body_query import pair_geometry

    rng = np.random.default_rng(12)
    x0, q = _random_states(rng, 5)
    _, q_start = _random_states(rng, 5)
    c = 25
    node_a = rng.integers(0, 5, size=c).astype(np.int64)
    node_b = (node_a + rng.integers(1, 5, size=c)) % 5
    normal = rng.standard_normal((c, 3))
    normal[:4] = [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.6, 0.0, 0.8)]  # ties of the least axis
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    rows = np.zeros((c, 10))
    rows[:, 0:3] = rng.uniform(-1.0, 1.0, size=(c, 3))
    rows[:, 3:6] = rows[:, 0:3] + 1e-3 * rng.standard_normal((c, 3))
    rows[:, 6:9] = normal
    frame, slip = np.empty((c, 3, 3)), np.empty((c, 2))
    arm_a, arm_b, mid, apart = (np.empty((c, 3)) for _ in range(4))
    pair_geometry(x0, q, q_start, node_a, node_b, rows, frame, arm_a, arm_b, slip, mid, apart)

    least = [0, 1, 0, 1]  # of the four normals set above: x (a tie of x, y), y (of y, z), x (of x, z), y
    axis = np.argmin(np.abs(normal), axis=1)
    np.testing.assert_array_equal(axis[:4], least)
    e = np.eye(3)[axis]
    t1 = np.cross(e, normal)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(normal, t1)
    np.testing.assert_array_equal(frame[:, 0], normal)
    np.testing.assert_allclose(frame[:, 1], t1, rtol=0, atol=1e-15)
    np.testing.assert_allclose(frame[:, 2], t2, rtol=0, atol=1e-15)
    middle = 0.5 * (rows[:, 0:3] + rows[:, 3:6])
    np.testing.assert_allclose(mid, middle, rtol=0, atol=1e-16)
    np.testing.assert_allclose(apart, rows[:, 3:6] - rows[:, 0:3], rtol=0, atol=1e-16)
    moved = np.zeros((c, 3))
    for nodes, arm, sign in ((node_a, arm_a, -1.0), (node_b, arm_b, 1.0)):
        x = x0[nodes, :3] + q[nodes, :3]
        np.testing.assert_allclose(arm, rows[:, 0:3] - x if sign < 0 else rows[:, 3:6] - x, rtol=0, atol=1e-15)
        local = _rot(q[nodes]).inv().apply(middle - x)
        start = x0[nodes, :3] + q_start[nodes, :3] + _rot(q_start[nodes]).apply(local)
        moved += sign * (middle - start)
    np.testing.assert_allclose(slip, np.einsum("csi,ci->cs", np.stack([t1, t2], axis=1), moved), rtol=0, atol=1e-14)
    assert np.abs(slip).max() > 0.1  # the states differ: the slips are not trivially zero


def test_in_body_frames_turns_world_vectors_into_the_bodies_frames() -> None:
    """``body_query.in_body_frames`` against scipy's inverse rotations, and carried back to the
    world by ``material_rows`` (a point at its node's position plus the vector)."""
    from kynemapy.run.body_query import in_body_frames, material_rows

    rng = np.random.default_rng(13)
    x0, q = _random_states(rng, 3)
    nodes = rng.integers(0, 3, size=20).astype(np.int64)
    vectors = rng.uniform(-2.0, 2.0, size=(20, 3))
    out = np.full((20, 3), np.nan)
    in_body_frames(q, nodes, vectors, out)
    np.testing.assert_allclose(out, _rot(q[nodes]).inv().apply(vectors), rtol=0, atol=1e-15)
    rows = np.empty((20, 10))
    material_rows(x0, q, nodes, nodes, out, out, out, rows)
    np.testing.assert_allclose(rows[:, 0:3] - (x0[nodes, :3] + q[nodes, :3]), vectors, rtol=0, atol=1e-14)


def test_dof_rows_place_each_nodes_block_at_its_dofs() -> None:
    """``body_query.dof_rows``: each contact's 3 × 6 blocks on nodes A and B (a rigid body's six
    DOFs, a point mass's first three; a node −1, a plane, none) summed into its three rows at the
    nodes' DOFs, against the rows written entry by entry."""
    from kynemapy.run.body_query import dof_rows

    rng = np.random.default_rng(14)
    dofs = np.array([6, 3, 6, 6], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(dofs)[:-1]]).astype(np.int64)
    node_a = np.array([0, -1, 1, 2, 3], dtype=np.int64)
    node_b = np.array([2, 3, 0, 2, 1], dtype=np.int64)  # contact 3: both blocks on node 2 add up
    rows_a, rows_b = rng.standard_normal((5, 3, 6)), rng.standard_normal((5, 3, 6))
    out = np.zeros((15, int(dofs.sum())))
    dof_rows(node_a, node_b, rows_a, rows_b, first, dofs, out)
    expected = np.zeros_like(out)
    for c in range(5):
        for node, rows in ((node_a[c], rows_a[c]), (node_b[c], rows_b[c])):
            if node >= 0:
                for s in range(3):
                    for k in range(dofs[node]):
                        expected[3 * c + s, first[node] + k] += rows[s, k]
    np.testing.assert_array_equal(out, expected)
    # the plane's contact: B's block alone (node 3's columns), A's none
    np.testing.assert_array_equal(out[3:6, 15:21], rows_b[1])
    assert np.count_nonzero(out[3:6]) == 18
    np.testing.assert_array_equal(out[9:12, 9:15], rows_a[3] + rows_b[3])


def test_jacobian_rows_and_contact_rates_give_the_contact_points_relative_velocity() -> None:
    """``body_query.jacobian_rows``' row s applied to a body's (v, ω) is ``s · (v + ω × arm)``, the
    velocity along s of the body's point at the arm; with ``apart`` the normal row gains
    ``ω · (n × apart)``.  ``contact_rates`` sums both bodies' rows on their nodes' velocities
    (a node −1 and the columns a point mass lacks counting as zeros)."""
    from kynemapy.run.body_query import contact_rates, jacobian_rows

    rng = np.random.default_rng(15)
    c, n_nodes = 12, 4
    frames = Rotation.random(c, random_state=16).as_matrix().transpose(0, 2, 1)  # rows: n, t₁, t₂
    arm_a, arm_b, apart = (rng.uniform(-0.5, 0.5, size=(c, 3)) for _ in range(3))
    ja, jb = -jacobian_rows(frames, arm_a), jacobian_rows(frames, arm_b, apart)
    y = rng.standard_normal((n_nodes, 6))
    node_a = rng.integers(-1, n_nodes, size=c).astype(np.int64)
    node_a[0] = -1
    node_b = rng.integers(0, n_nodes, size=c).astype(np.int64)
    out = np.full((c, 3), np.nan)
    contact_rates(node_a, node_b, ja, jb, y, out)
    for i in range(c):
        vb = y[node_b[i], :3] + np.cross(y[node_b[i], 3:], arm_b[i])
        va = np.zeros(3) if node_a[i] < 0 else y[node_a[i], :3] + np.cross(y[node_a[i], 3:], arm_a[i])
        expected = frames[i] @ (vb - va)
        expected[0] += y[node_b[i], 3:] @ np.cross(frames[i, 0], apart[i])
        np.testing.assert_allclose(out[i], expected, rtol=0, atol=1e-14)
    points = np.zeros((n_nodes, 3))  # point masses: three components, no rotation
    points[:] = y[:, :3]
    contact_rates(node_a, node_b, ja, jb, points, out)
    for i in range(c):
        va = np.zeros(3) if node_a[i] < 0 else points[node_a[i]]
        np.testing.assert_allclose(out[i], frames[i] @ (points[node_b[i]] - va), rtol=0, atol=1e-14)
