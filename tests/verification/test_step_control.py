"""Step-size control (:meth:`Simulation.advance_to`): the local error estimate against the true
local error of one step, the error at the end against independent references (a DOP853
integration of the pendulum at rtol 1e-12; the heavy top's in ``references``), rejections,
dense output and a beam.  The measured numbers are in docs/step-control.md."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from models import pendulum
from scipy.integrate import solve_ivp

import kynemapy as kp
from kynemapy.run.stepcontrol import (
    ConstraintProjector,
    error_coefficient,
    rotation_quaternions,
    rotation_vectors,
)
from kynemapy.validation.beam_model import isotropic_section, straight_beam

# the pendulum of tests/models.py: a 2 kg body (0.1 kg m² about its centre) on a spherical
# joint at the origin, its centre 1 m along x, spinning at 0.5 rad/s about z, under gravity
MASS, ARM, GRAVITY = 2.0, np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, -9.81])
PIVOT_INERTIA = 0.1 * np.eye(3) + MASS * (ARM @ ARM * np.eye(3) - np.outer(ARM, ARM))
OMEGA0 = np.array([0.0, 0.0, 0.5])


def _matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def pendulum_reference(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u (T, 3) [m], r (T, 4)) of the pendulum: Euler's equations about the pivot in body axes,
    the quaternion integrated directly; DOP853, rtol = atol = 1e-12."""
    inverse = np.linalg.inv(PIVOT_INERTIA)

    def rhs(_t: float, s: np.ndarray) -> np.ndarray:
        (w, x, y, z), big_w = s[:4], s[4:]
        a, b, c = big_w
        torque = np.cross(ARM, _matrix(s[:4]).T @ (MASS * GRAVITY))
        dq = 0.5 * np.array(
            [-x * a - y * b - z * c, w * a + y * c - z * b, w * b + z * a - x * c, w * c + x * b - y * a]
        )
        return np.concatenate([dq, inverse @ (np.cross(PIVOT_INERTIA @ big_w, big_w) + torque)])

    s0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], OMEGA0])
    times = np.asarray(times, dtype=float)
    sol = solve_ivp(rhs, (0.0, float(times.max())), s0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times)
    r = sol.y[:4].T / np.linalg.norm(sol.y[:4].T, axis=1, keepdims=True)
    u = np.array([_matrix(ri) @ ARM - ARM for ri in r])
    return u, r


def _quat_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, av, bw, bv = a[..., 0], a[..., 1:], b[..., 0], b[..., 1:]
    w = aw * bw - np.sum(av * bv, axis=-1)
    v = aw[..., None] * bv + bw[..., None] * av + np.cross(av, bv)
    return np.concatenate([w[..., None], v], axis=-1)


def pose_error(q: np.ndarray, u_ref: np.ndarray, r_ref: np.ndarray) -> float:
    """max(|u − u_ref|_∞ [m], rotation angle between r and r_ref [rad])."""
    conjugate = q[..., 3:] * np.array([1.0, -1.0, -1.0, -1.0])
    angle = np.linalg.norm(rotation_vectors(_quat_product(r_ref, conjugate)), axis=-1)
    return float(max(np.abs(q[..., :3] - u_ref).max(), angle.max()))


def params(h: float, rho_inf: float = 0.9) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=rho_inf, atol=1e-10, rtol=1e-8, max_iter=20)


# ------------------------------------------------------------------ (a) error at the end
T_END = 1.0


@pytest.mark.parametrize("tol", [1e-4, 1e-7])
def test_error_at_the_end_follows_the_tolerance(tol: float) -> None:
    """scope="run" (the local errors of the run add up to at most the tolerance): the true error
    at t = 1 s is 7-8 × the tolerance (measured: 7.0e-4 at 1e-4, 7.6e-7 at 1e-7; the pendulum
    amplifies its local errors, a phase error grows with the time), proportional to it."""
    u_ref, r_ref = pendulum_reference(np.array([T_END]))
    sim = kp.Simulation(pendulum(), params(1e-3))
    sim.advance_to(T_END, kp.StepControl(rtol=tol, atol=tol, scope="run"))
    assert sim.time == pytest.approx(T_END, abs=1e-12)
    error = pose_error(sim.state.q[0], u_ref[0], r_ref[0])
    assert error < 10.0 * tol, (error, tol)
    assert error > 0.5 * tol  # not merely far below: the tolerance means what it says


@pytest.mark.xfail(
    strict=True,
    reason="measured: a fixed step with the controller's step count (accepted and rejected) is more "
    "accurate, 1.5e-4 vs 7.0e-4 at tol 1e-4 (205 steps) and 4.3e-7 vs 7.6e-7 at 1e-7 (3770 steps): the "
    "local-error equidistribution puts large steps where the jerk vanishes (the release from rest), "
    "and the velocity errors made there grow into the error at the end",
)
@pytest.mark.parametrize("tol", [1e-4, 1e-7])
def test_fewer_steps_than_a_fixed_step_for_the_same_error(tol: float) -> None:
    u_ref, r_ref = pendulum_reference(np.array([T_END]))
    sim = kp.Simulation(pendulum(), params(1e-3))
    run = sim.advance_to(T_END, kp.StepControl(rtol=tol, atol=tol, scope="run"))
    n = run.accepted + run.rejected
    fixed = kp.Simulation(pendulum(), params(T_END / n))
    fixed.advance(n)
    error = pose_error(sim.state.q[0], u_ref[0], r_ref[0])
    assert pose_error(fixed.state.q[0], u_ref[0], r_ref[0]) > error


def test_per_step_tolerance_gives_the_local_error_not_the_global_one() -> None:
    """scope="step" holds each step's estimated local error below the tolerance: the error at
    the end is then the sum of the local errors (thousands of times the tolerance here), and
    every accepted step's estimate is <= 1 with few rejections."""
    sim = kp.Simulation(pendulum(), params(1e-3))
    run = sim.advance_to(T_END, kp.StepControl(rtol=1e-6, atol=1e-6))
    assert run.accepted == run.time.size == run.h.size == run.error.size
    assert np.all(run.error <= 1.0) and run.error.max() > 0.3
    assert run.rejected <= 0.2 * run.accepted
    assert np.all(np.diff(run.time) > 0) and run.time[-1] == pytest.approx(T_END, abs=1e-12)
    assert np.allclose(np.diff(np.concatenate([[0.0], run.time])), run.h)


# ------------------------------------------------------------------ (b) the estimate
def _one_step(model: kp.Model, rho_inf: float, h: float, t_start: float) -> tuple[float, float]:
    """(estimated, true) RMS local position error of the step from t_start (reached with steps of
    h) to t_start + h; the true one against 400 steps of h/400 from the same state (a := v̇)."""
    p = params(h, rho_inf)
    sim = kp.Simulation(model, p)
    sim.advance(round(t_start / h))
    saved = sim.save_state()
    sim.step()
    q1, a1 = sim.state.q.copy(), sim.state.a.copy()
    mask = np.arange(6)[None, :] < np.asarray(model.node_dofs)[:, None]
    change = ConstraintProjector(sim).project(np.where(mask, a1 - saved.a, 0.0))
    estimate = h * h * error_coefficient(p) * np.abs(change)
    sim.restore_state(saved)
    sim.state.a[...] = sim.state.vd
    fine = dataclasses.replace(p, h=h / 400).coefficients
    for _ in range(400):
        assert sim.step_with(fine)[0] == 0
    true = np.zeros_like(estimate)
    true[:, :3] = sim.state.q[:, :3] - q1[:, :3]
    true[:, 3:] = rotation_vectors(_quat_product(sim.state.q[:, 3:], q1[:, 3:] * np.array([1.0, -1, -1, -1])))
    rms = lambda x: float(np.sqrt(np.mean(x[mask] ** 2)))  # noqa: E731
    return rms(estimate), rms(true)


@pytest.mark.parametrize("rho_inf", [0.9, 0.0])
def test_the_estimate_tracks_the_true_local_error(rho_inf: float) -> None:
    """Over h from 1e-4 to 3e-2 s (2.5 decades) the estimate is within 0.3-3 × the true local
    error (measured after 0.3 s: 0.98, 0.97, 0.86, 0.68 at ρ∞ = 0.9; 0.99, 0.97, 0.80, 0.53 at
    ρ∞ = 0), and it falls like h³."""
    model = pendulum()
    ratios, truths = [], []
    for h in (1e-4, 1e-3, 1e-2, 3e-2):
        estimate, true = _one_step(model, rho_inf, h, 0.3)
        ratios.append(estimate / true)
        truths.append(true)
    assert all(0.3 < r < 3.0 for r in ratios), ratios
    assert truths[0] < 1e-6 * truths[2]  # h³: 1e-6 for 2 decades


def test_the_estimate_of_the_heavy_top() -> None:
    """The heavy top at ρ∞ = 0.9 (150 rad/s spin), after 0.1 s: the estimate from a without its
    part along the constraint directions is 0.48, 0.48, 0.48, 0.98 × the true local error for
    h = 1e-5, 1e-4, 1e-3, 3e-3 s; from v̇ and unprojected it was 30 × too large at h = 3e-3 (the
    spurious oscillation of v̇ at ρ∞ near 1), from a unprojected 7 ×."""
    from heavy_top import build_heavy_top

    model, _ = build_heavy_top(False)
    for h in (1e-5, 1e-4, 1e-3, 3e-3):
        estimate, true = _one_step(model, 0.9, h, 0.1)
        assert 0.2 < estimate / true < 5.0, (h, estimate, true)


# ------------------------------------------------------------------ (c) rejections
def test_a_too_large_first_step_is_rejected_and_redone() -> None:
    sim = kp.Simulation(pendulum(), params(1e-3))
    run = sim.advance_to(0.5, kp.StepControl(rtol=1e-6, atol=1e-6, h_initial=0.2))
    assert run.rejected >= 1
    assert run.h[0] < 0.2 * 0.5  # redone smaller, from the saved state
    assert run.time[0] == pytest.approx(run.h[0], rel=1e-12)
    assert np.all(run.error <= 1.0)
    assert sim.time == pytest.approx(0.5, abs=1e-12)


def test_the_smallest_step_stops_the_run() -> None:
    sim = kp.Simulation(pendulum(), params(1e-3))
    with pytest.raises(kp.ConvergenceError, match="h_min"):
        sim.advance_to(0.5, kp.StepControl(rtol=1e-12, atol=1e-12, h_min=1e-3, h_initial=1e-3))
    assert sim.time == 0.0  # the state of the last accepted step


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="rtol"):
        kp.StepControl(rtol=0.0)
    with pytest.raises(ValueError, match="scope"):
        kp.StepControl(scope="global")
    with pytest.raises(ValueError, match="h_min"):
        kp.StepControl(h_min=1.0, h_max=0.1)
    with pytest.raises(ValueError, match="velocity_error"):
        kp.StepControl(scope="run", velocity_error=True)
    sim = kp.Simulation(pendulum(), params(1e-3))
    with pytest.raises(TypeError, match="StepControl"):
        sim.advance_to(1.0, control={"rtol": 1e-3})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="output_times"):
        sim.advance_to(1.0, output_times=[0.5, 0.2])


# ------------------------------------------------------------------ (d) dense output
def test_dense_output_between_the_steps() -> None:
    """A regular grid of 101 times in [0, 1] s, 90 of them inside steps: the Hermite interpolation
    adds no error of its own (each grid point's error is within 1.2 × the larger error of its
    step's two ends), and the grid's error is the run's (measured: 1.03e-6 largest on the grid,
    7.6e-7 at the end, tolerance 1e-7 with scope "run")."""
    grid = np.linspace(0.0, T_END, 101)
    control = kp.StepControl(rtol=1e-7, atol=1e-7, scope="run")
    sim = kp.Simulation(pendulum(), params(1e-3))
    run = sim.advance_to(T_END, control, output_times=grid)
    assert run.q.shape == (101, 2, 7) and run.v.shape == (101, 2, 6)  # the bob and the ground's node
    np.testing.assert_array_equal(run.output_times, grid)
    inside = ~np.isin(grid, run.time)
    assert inside.sum() >= 80
    np.testing.assert_allclose(np.linalg.norm(run.q[:, 0, 3:], axis=1), 1.0, atol=1e-12)
    # the same run (the output times do not move the steps) with the step ends as outputs too
    ends = np.concatenate([[0.0], run.time])
    times = np.union1d(grid, ends)
    again = kp.Simulation(pendulum(), params(1e-3)).advance_to(T_END, control, output_times=times)
    np.testing.assert_array_equal(again.time, run.time)
    u_ref, r_ref = pendulum_reference(times)
    errors = np.array([pose_error(again.q[i, 0], u_ref[i], r_ref[i]) for i in range(times.size)])
    at = dict(zip(times.tolist(), errors.tolist(), strict=True))
    for t in grid[inside]:
        k = int(np.searchsorted(ends, t))  # the step (ends[k-1], ends[k]]
        bound = max(at[float(ends[k - 1])], at[float(ends[k])])
        assert at[float(t)] <= 1.2 * bound + 1e-9, (t, at[float(t)], bound)
    assert errors.max() < 20 * 1e-7
    # the velocities: the derivative of the interpolation, against the reference's (central
    # differences of 1e-5 s; measured: 4.3e-6 m/s largest)
    mid = grid[1:-1]
    u_minus, _ = pendulum_reference(mid - 1e-5)
    u_plus, _ = pendulum_reference(mid + 1e-5)
    v_ref = (u_plus - u_minus) / 2e-5
    velocity_error = np.abs(run.v[1:-1, 0, :3] - v_ref).max()
    assert velocity_error < 4e-5


def test_hermite_interpolation_of_a_uniform_rotation() -> None:
    """A body turning at constant ω about a fixed axis: the interpolated rotation is exact."""
    from kynemapy.run.stepcontrol import hermite

    omega = np.array([0.3, -1.2, 2.0])
    h = 0.4
    q0 = np.array([[0.1, 0.2, 0.3, *rotation_quaternions(np.array([0.5, 0.1, -0.2]))]])
    r1 = _quat_product(rotation_quaternions(h * omega), q0[0, 3:])
    v = np.array([[1.0, 0.0, -1.0, *omega]])
    q1 = np.array([[0.1 + h, 0.2, 0.3 - h, *r1]])
    theta = np.linspace(0.0, 1.0, 7)
    q, dq = hermite(q0, v, q1, v, h, theta)
    expected = _quat_product(rotation_quaternions(theta[:, None] * h * omega), q0[0, 3:])
    np.testing.assert_allclose(np.abs(np.sum(q[:, 0, 3:] * expected, axis=1)), 1.0, atol=1e-13)
    np.testing.assert_allclose(q[:, 0, 0], 0.1 + theta * h, atol=1e-14)
    np.testing.assert_allclose(dq[:, 0, 3:], np.tile(omega, (7, 1)), atol=1e-12)


# ------------------------------------------------------------------ (e) a beam
def test_a_cantilever_beam_runs_with_step_control() -> None:
    """A 1 m cantilever (order 4, clamped, sagging from rest under gravity: first bending mode
    111 rad/s, axial 3500 rad/s) under step control: it runs to the end with every accepted
    estimate <= 1 and few rejections, and its tip agrees with a fixed-step run of h = 1e-5 s."""
    m_star, c_star = isotropic_section(1e7, 5e6, 1e3, 2e3, 2e3, m=2.0)

    def build() -> tuple[kp.Model, int]:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        beam = straight_beam(b, 1.0, m_star, c_star, order=4)
        b.add_fixed_bc(beam.root)
        return b.build(), beam.tip

    model, tip = build()
    sim = kp.Simulation(model, params(1e-4, 0.5))
    run = sim.advance_to(0.03, kp.StepControl(rtol=1e-3, atol=1e-6, scope="run"))
    assert sim.time == pytest.approx(0.03, abs=1e-12)
    assert np.all(run.error <= 1.0) and run.rejected <= 0.3 * run.accepted
    fine = kp.Simulation(model, params(1e-5, 0.5))
    fine.advance(3000)
    deflection = abs(fine.state.q[tip, 2])
    assert deflection > 1e-6
    assert abs(sim.state.q[tip, 2] - fine.state.q[tip, 2]) < 0.05 * deflection


# ------------------------------------------------------------------ no constraints, loads
def test_an_unconstrained_body_with_a_load_function() -> None:
    """A free body (no constraint: nothing to project) pushed by a constant force set through
    ``loads(sim, t)``: it is called before every attempt with the time at the attempt's end
    (where generalized-α evaluates its equilibrium), and the displacement follows
    x = F t² / (2 m) to round-off (measured 7e-16).  (A load varying in time:
    tests/verification/test_step_control_output.py.)"""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    node = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0, 0.5, 1.0, 2.0))
    b.add_mass(node, mass=2.0, inertia=(0.1, 0.2, 0.3))
    sim = kp.Simulation(b.build(), params(1e-3, 0.5))
    sim.set_load(node, force=(4.0, 0.0, 0.0))  # the initial accelerations with the load (a := v̇)
    sim.compute_consistent_accelerations()
    sim.state.a[...] = sim.state.vd
    calls: list[float] = []

    def loads(s: kp.Simulation, t: float) -> None:
        calls.append(t)
        s.set_load(node, force=(4.0, 0.0, 0.0))

    run = sim.advance_to(1.0, kp.StepControl(rtol=1e-6, atol=1e-8), loads=loads)
    assert len(calls) == run.accepted + run.rejected
    assert set(run.time.tolist()) <= set(calls) and 0.0 not in calls
    assert sim.state.q[node, 0] == pytest.approx(4.0 / (2.0 * 2.0), abs=1e-12)
    assert run.accepted < 200  # the tumbling body (no torque) sets the steps
