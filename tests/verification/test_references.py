"""Checks of the independent reference solutions in ``tests/references.py``.

These tests validate the *oracle* itself (against published numbers and
conservation laws); they do not exercise kynemapy.
"""

from __future__ import annotations

import numpy as np
import pytest
from references import (
    BOXES_COMPLEX,
    BOXES_MASS,
    BOXES_SIMPLE,
    BoxesScenario,
    ballistic_com,
    boxes_inertia,
    free_rigid_body_reference,
    heavy_top_energy,
    heavy_top_pivot_inertia,
    heavy_top_reference,
    heavy_top_solution,
    heavy_top_vertical_angular_momentum,
    quat_multiply,
    quat_to_rotation_matrix,
    rigid_body_invariants,
)

# Kynema heavy-top reference CSV (different formulation, dt = 2e-6 s).
KYNEMA_HEAVY_TOP = {
    1.0: (
        (0.1733440435722807, -0.3599112987333657, -0.7484906793466106),
        (
            0.7329439942283007,
            -0.2782856278135421,
            0.5318246439927058,
            -0.3201761370231893,
        ),
    ),
    2.0: (
        (-0.1504168894608856, -1.7241654846852867, -0.6730223697288009),
        (
            0.1229471344095339,
            -0.4910798717314375,
            0.3504301068655838,
            -0.78798686659287814,
        ),
    ),
}


# ---------------------------------------------------------------------------
# Quaternion helpers
# ---------------------------------------------------------------------------


def test_quaternion_conventions() -> None:
    """Hamilton product and active body -> world rotation matrix."""
    i, j, k = np.eye(4)[1], np.eye(4)[2], np.eye(4)[3]
    np.testing.assert_allclose(quat_multiply(i, j), k, atol=0.0)
    # 90 deg about z maps body x onto world y (active rotation).
    q = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])
    np.testing.assert_allclose(quat_to_rotation_matrix(q) @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-15)
    # R(p q) = R(p) R(q)
    rng = np.random.default_rng(0)
    p, r = rng.normal(size=(2, 4))
    p /= np.linalg.norm(p)
    r /= np.linalg.norm(r)
    np.testing.assert_allclose(
        quat_to_rotation_matrix(quat_multiply(p, r)),
        quat_to_rotation_matrix(p) @ quat_to_rotation_matrix(r),
        atol=1e-14,
    )


# ---------------------------------------------------------------------------
# 1. Heavy top
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def heavy_top_run() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Heavy top sampled every 0.01 s on [0, 2] s: (times, quat, W)."""
    times = np.linspace(0.0, 2.0, 201)
    quat, w = heavy_top_solution(times)
    return times, quat, w


def test_heavy_top_pivot_inertia() -> None:
    """Parallel-axis theorem about the pivot."""
    np.testing.assert_allclose(heavy_top_pivot_inertia(), np.diag([15.234375, 0.46875, 15.234375]))


@pytest.mark.parametrize("t", sorted(KYNEMA_HEAVY_TOP))
def test_heavy_top_matches_kynema_csv(t: float) -> None:
    """Agreement with Kynema's published heavy-top trajectory."""
    u_ref, q_ref = KYNEMA_HEAVY_TOP[t]
    u, quat = heavy_top_reference(np.array([t]))
    # measured: max |du| ~ 1.1e-7 m, max |dq| ~ 9.2e-8 at both times
    np.testing.assert_allclose(u[0], u_ref, rtol=0.0, atol=1e-6)
    np.testing.assert_allclose(quat[0], q_ref, rtol=0.0, atol=1e-6)


def test_heavy_top_output_ordering() -> None:
    """Unsorted / repeated output times give consistent results."""
    u1, q1 = heavy_top_reference(np.array([2.0, 0.0, 1.0, 2.0]))
    u2, q2 = heavy_top_reference(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(u1[[1, 2, 0]], u2, atol=1e-12)
    np.testing.assert_allclose(u1[3], u1[0], atol=0.0)
    np.testing.assert_allclose(q1[[1, 2, 0]], q2, atol=1e-12)
    np.testing.assert_allclose(q2[0], [1.0, 0.0, 0.0, 0.0], atol=0.0)
    np.testing.assert_allclose(u2[0], 0.0, atol=0.0)


def test_heavy_top_initial_state(heavy_top_run: tuple) -> None:
    """Initial conditions are reproduced exactly; outputs are unit quaternions."""
    _, quat, w = heavy_top_run
    np.testing.assert_allclose(quat[0], [1.0, 0.0, 0.0, 0.0], atol=0.0)
    np.testing.assert_allclose(w[0], [0.0, 150.0, -4.61538], atol=0.0)
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0, atol=1e-15)


def test_heavy_top_quaternion_continuous(heavy_top_run: tuple) -> None:
    """No sign flips between output samples (dt = 0.01 s)."""
    _, quat, _ = heavy_top_run
    assert np.all(np.sum(quat[1:] * quat[:-1], axis=1) > 0.0)


def test_heavy_top_conserves_energy(heavy_top_run: tuple) -> None:
    """Total energy is conserved to 1e-10 relative over 2 s."""
    _, quat, w = heavy_top_run
    energy = heavy_top_energy(quat, w)
    assert energy.shape == (quat.shape[0],)
    drift = np.max(np.abs(energy - energy[0])) / abs(energy[0])
    assert drift < 1e-10, drift


def test_heavy_top_conserves_vertical_momentum(heavy_top_run: tuple) -> None:
    """Vertical angular momentum about the pivot is conserved to 1e-10."""
    _, quat, w = heavy_top_run
    lz = heavy_top_vertical_angular_momentum(quat, w)
    assert lz.shape == (quat.shape[0],)
    drift = np.max(np.abs(lz - lz[0])) / abs(lz[0])
    assert drift < 1e-10, drift


def test_heavy_top_converged() -> None:
    """Tightening the tolerance changes the answer by far less than 1e-8."""
    u1, q1 = heavy_top_reference(np.array([2.0]))
    u2, q2 = heavy_top_reference(np.array([2.0]), rtol=1e-11, atol=1e-11)
    assert np.max(np.abs(u1 - u2)) < 1e-8
    assert np.max(np.abs(q1 - q2)) < 1e-8


# ---------------------------------------------------------------------------
# 2. Gazebo Boxes
# ---------------------------------------------------------------------------


def test_boxes_inertia() -> None:
    """Box inertia matches the published Gazebo values."""
    np.testing.assert_allclose(boxes_inertia(), [0.8083333333333333, 0.6833333333333333, 0.1416666666666667])


def test_ballistic_com() -> None:
    """Closed-form ballistic trajectory at a few hand-computed points."""
    t = np.array([0.0, 1.0, 2.0])
    c, v = ballistic_com(t, [1.0, 2.0, 3.0], [-2.0, 2.0, 8.0], [0.0, 0.0, -9.8])
    assert c.shape == (3, 3)
    assert v.shape == (3, 3)
    np.testing.assert_allclose(c[2], [1.0 - 4.0, 2.0 + 4.0, 3.0 + 16.0 - 19.6])
    np.testing.assert_allclose(v[1], [-2.0, 2.0, 8.0 - 9.8])


def _boxes_invariants(scenario: BoxesScenario, n: int = 1001) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sample a Boxes scenario: (times, quat, energy, L)."""
    times = np.linspace(0.0, scenario.duration, n)
    inertia = boxes_inertia()
    quat, w = free_rigid_body_reference(times, inertia, scenario.omega0, q0=scenario.q0)
    c, v = ballistic_com(times, scenario.c0, scenario.v0, scenario.gravity)
    energy, ang = rigid_body_invariants(quat, w, inertia, BOXES_MASS, c, v, scenario.gravity)
    return times, quat, energy, ang


@pytest.mark.parametrize("scenario", [BOXES_COMPLEX, BOXES_SIMPLE], ids=["complex", "simple"])
def test_boxes_conservation(scenario: BoxesScenario) -> None:
    """Energy and world angular momentum about the CM conserved to 1e-11."""
    _, quat, energy, ang = _boxes_invariants(scenario)
    assert energy.shape == (quat.shape[0],)
    assert ang.shape == quat[:, 1:].shape
    e_drift = np.max(np.abs(energy - energy[0])) / abs(energy[0])
    l_drift = np.max(np.linalg.norm(ang - ang[0], axis=1)) / np.linalg.norm(ang[0])
    assert e_drift < 1e-11, e_drift
    assert l_drift < 1e-11, l_drift


def test_boxes_complex_tumbles() -> None:
    """Spin near the intermediate axis is unstable: W_y flips sign in 10 s."""
    times = np.linspace(0.0, BOXES_COMPLEX.duration, 1001)
    _, w = free_rigid_body_reference(times, boxes_inertia(), BOXES_COMPLEX.omega0)
    assert w[:, 1].min() < -4.0
    assert w[:, 1].max() > 4.9


def test_boxes_simple_is_pure_x_rotation() -> None:
    """With W0 = (0.5, 0, 0) the box rotates about x by the angle 0.5 t."""
    times, quat, _, _ = _boxes_invariants(BOXES_SIMPLE)
    half = 0.25 * times
    exact = np.stack(
        [np.cos(half), np.sin(half), np.zeros_like(half), np.zeros_like(half)],
        axis=1,
    )
    np.testing.assert_allclose(quat, exact, rtol=0.0, atol=1e-12)
    _, w = free_rigid_body_reference(times, boxes_inertia(), BOXES_SIMPLE.omega0)
    np.testing.assert_allclose(w, np.tile([0.5, 0.0, 0.0], (times.size, 1)), atol=0)
