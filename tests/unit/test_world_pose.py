"""Results give the world pose directly (issue 27, item 13): ``Result.position`` and
``Result.orientation`` (MuJoCo's ``xpos``, ``xquat``) and the public :func:`kynemapy.rotation_matrices`.

Checked against closed forms: a hinged rod's pivot stays at the origin (its body-fixed point
rotated by the orientation's matrix, added to the position), a quarter turn about z maps the
x axis onto y; and against the engine's own ``state.x`` at the last row.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from references import quat_to_rotation_matrix

import kynemapy as kp


def test_rotation_matrices_closed_forms() -> None:
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)  # a quarter turn about z: (cos 45°, 0, 0, sin 45°)
    m = kp.rotation_matrices([c, 0.0, 0.0, s])
    np.testing.assert_allclose(m @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(m @ [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], atol=1e-15)
    rng = np.random.default_rng(3)
    r = rng.standard_normal((5, 7, 4))
    r /= np.linalg.norm(r, axis=-1, keepdims=True)
    ms = kp.rotation_matrices(r)
    assert ms.shape == (5, 7, 3, 3)
    np.testing.assert_allclose(ms @ np.swapaxes(ms, -1, -2), np.broadcast_to(np.eye(3), ms.shape), atol=1e-14)
    np.testing.assert_allclose(np.linalg.det(ms), 1.0, atol=1e-14)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 4\), got \(3,\)"):
        kp.rotation_matrices([1.0, 0.0, 0.0])


def test_rotation_matrices_are_the_written_out_formula_and_scipys_and_cross_is_numpys() -> None:
    """``rotation_matrices`` against its entries written out one array operation each (the tests'
    ``references.quat_to_rotation_matrix``: the same IEEE operations, so the same bits, the signs
    of zeros included, on quaternions with zero and negative components), C-contiguous as that
    array is, and against scipy's
    ``Rotation.as_matrix`` (to round-off); ``math.rotations.cross`` against ``numpy.cross`` bit for
    bit and in layout, broadcast as the contact rows use it."""
    from scipy.spatial.transform import Rotation

    from kynemapy.math.rotations import cross

    rng = np.random.default_rng(11)
    r = rng.standard_normal((6, 5, 4))
    r[0, :, 1:] = 0.0  # no rotation
    r[1, :, 0] = 0.0  # half turns
    r[2, :, 2] = -0.0
    written = quat_to_rotation_matrix(r)  # the tests' reference: r normalised, one operation per term
    r /= np.linalg.norm(r, axis=-1, keepdims=True)  # normalised as it does
    ms = kp.rotation_matrices(r)
    assert np.array_equal(ms, written) and np.array_equal(np.signbit(ms), np.signbit(written))
    assert ms.flags.c_contiguous  # as the written-out array: later sums (np.einsum) follow the layout
    flat = r.reshape(-1, 4)
    reference = Rotation.from_quat(np.c_[flat[:, 1:], flat[:, 0]]).as_matrix()
    np.testing.assert_allclose(ms.reshape(-1, 3, 3), reference, atol=1e-15)
    a, b = rng.standard_normal((7, 1, 3)), rng.standard_normal((7, 3, 3))
    a[0] = 0.0
    b[1, 0] = -0.0
    for u, v in ((a, b), (a[:, 0], b[:, 0]), (b[:, 0], a[:, 0])):
        mine, numpys = cross(u, v), np.cross(u, v)
        assert np.array_equal(mine, numpys) and np.array_equal(np.signbit(mine), np.signbit(numpys))
        assert mine.flags.c_contiguous and numpys.flags.c_contiguous


def test_a_result_gives_each_rows_world_pose(tmp_path: Path) -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    rod = b.add_node(position=(0.0, 0.0, -0.5), velocity=(-1.0, 0.0, 0.0, 0.0, 2.0, 0.0))  # ω × r: consistent
    b.add_mass(rod, mass=1.0, inertia=(1 / 12, 1 / 12, 2e-4))
    b.add_hinge_joint(kp.GROUND, rod, point=(0, 0, 0), axis=(0, 1, 0))
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-10, rtol=1e-8))
    path = tmp_path / "rod.h5"
    sim.run(n_steps=300, output=path)
    res = kp.io.read(path)
    position, orientation = res.position, res.orientation
    assert position.shape == (301, 1, 3) and orientation.shape == (301, 1, 4)
    # the rod swings: its centre moves away from the start, while its pivot (0, 0, +0.5) in the
    # body's frame stays at the world origin
    assert np.abs(position[-1, 0] - position[0, 0]).max() > 0.05
    pivot = position[:, 0] + np.einsum("rij,j->ri", kp.rotation_matrices(orientation[:, 0]), [0.0, 0.0, 0.5])
    np.testing.assert_allclose(pivot, 0.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(position[:, 0], axis=-1), 0.5, rtol=1e-9)
    # the last row is the engine's own world pose of the final state
    np.testing.assert_allclose(position[-1], sim.state.x[:, :3], rtol=0, atol=1e-15)
    # world_pose returns unit quaternions; the engine's x carries the step's round-off in its norm
    engine = sim.state.x[:, 3:] / np.linalg.norm(sim.state.x[:, 3:], axis=-1, keepdims=True)
    np.testing.assert_allclose(orientation[-1], engine, rtol=0, atol=4 * np.finfo(float).eps)
