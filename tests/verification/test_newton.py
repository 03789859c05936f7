"""Newton iterations (issue 12): the round-off-floored convergence criterion, time on the step grid,
consistent initial velocities, rejected steps and the minimum step of adaptive runs.

References are independent of the engine: the heavy top against DOP853 on its reduced equations
about the pivot (:func:`kynemapy.validation.kynema_top.reference`), closed forms elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.validation.kynema_top import reference, simulation_model

# ------------------------------------------------------------------ convergence criterion
TOP_T = 0.2  # s: past every stall of Kynema's criterion below (t = 0.0039 ... 0.168 s)
TOP_STEPS = (1e-2, 1e-3, 1e-4, 5e-5, 1e-5, 2e-6, 1e-6)


@pytest.fixture(scope="module")
def top_reference():
    model, node = simulation_model()
    u_ref, _ = reference(np.array([TOP_T]))
    return model, node, u_ref[0]


def _top_error(model, node, u_ref, h, **options):
    sim = kp.Simulation(model, kp.StepParameters(h=h, rho_inf=0.9, max_iter=20, **options))
    iterations = sim.advance(round(TOP_T / h))
    return float(np.abs(sim.state.q[node, :3] - u_ref).max()), iterations


@pytest.mark.parametrize("atol, rtol", [(1e-7, 1e-6), (1e-10, 1e-10)])
def test_roundoff_criterion_converges_at_every_step_size(top_reference, atol, rtol):
    """Kynema's verification tolerances (atol 1e-7, rtol 1e-6) and 1e-10 converge at every h from
    1e-2 to 1e-6 with ``convergence="roundoff"`` (Kynema's criterion stalls at errors 1.3–8 for every
    h <= 5e-5 at 1e-7/1e-6 and for every h <= 1e-3 at 1e-10), and the error against the reduced
    reference is the scheme's: second order, err/h² the same at every h."""
    model, node, u_ref = top_reference
    ratio = []
    for h in TOP_STEPS:
        err, iterations = _top_error(model, node, u_ref, h, atol=atol, rtol=rtol, convergence="roundoff")
        assert iterations.shape == (round(TOP_T / h),)
        ratio.append(err / h**2)
    ratio = np.array(ratio[1:])  # h = 1e-2 is outside the asymptotic range
    assert np.all(np.abs(ratio / ratio[0] - 1.0) < 0.05), ratio


@pytest.mark.parametrize("geometric_stiffness, solver", [(False, "sparse"), (True, "dense"), (True, "sparse")])
def test_roundoff_criterion_either_tangent_either_solver(top_reference, geometric_stiffness, solver):
    model, node, u_ref = top_reference
    for h in (5e-5, 2e-6):
        err, _ = _top_error(
            model, node, u_ref, h, atol=1e-7, rtol=1e-6, convergence="roundoff",
            geometric_stiffness=geometric_stiffness, solver=solver,
        )  # fmt: skip
        assert err < 400.0 * h**2


def test_kynema_criterion_alone_stalls_on_roundoff(top_reference):
    """``convergence="kynema"``: Kynema's criterion alone; at h = 2e-6 it stalls on the multipliers'
    round-off (a failure, as Kynema's)."""
    model, _, _ = top_reference
    params = kp.StepParameters(h=2e-6, rho_inf=0.9, max_iter=20, atol=1e-7, rtol=1e-6, convergence="kynema")
    sim = kp.Simulation(model, params)
    with pytest.raises(kp.ConvergenceError) as excinfo:
        sim.advance(round(TOP_T / 2e-6))
    errors = excinfo.value.errors
    assert len(errors) == 20 and min(errors[1:]) > 1.0


def test_default_criterion_is_kynemas_and_passes_its_roundoff_stalls(top_reference):
    """The default (``"auto"``) is Kynema's criterion wherever it passes (the regression numbers,
    iteration counts included, are unchanged: tests/regression/test_regression.py; here, at
    h = 1e-3, the same iterations and state bit for bit), and where it stalls on round-off (h =
    5e-5 with Kynema's verification tolerances) the step converges on the round-off test of the
    last iteration: the heavy top reaches the independent reference at the scheme's accuracy."""
    assert kp.StepParameters(h=1e-3).convergence == "auto"
    model, node, u_ref = top_reference
    runs = {}
    for criterion in ("auto", "kynema"):
        sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.9, max_iter=20, convergence=criterion))
        runs[criterion] = (sim.advance(round(TOP_T / 1e-3)), sim.state.q.copy())
    assert np.array_equal(runs["auto"][0], runs["kynema"][0])
    assert np.array_equal(runs["auto"][1], runs["kynema"][1])
    h = 5e-5
    err, iterations = _top_error(model, node, u_ref, h, atol=1e-7, rtol=1e-6)
    assert iterations.shape == (round(TOP_T / h),)
    assert iterations.max() == 20  # Kynema's test stalled in some steps: accepted on the round-off test
    err_roundoff, _ = _top_error(model, node, u_ref, h, atol=1e-7, rtol=1e-6, convergence="roundoff")
    assert err < 400.0 * h**2 and err <= 1.5 * err_roundoff + 1e-12


def test_convergence_option_is_checked():
    with pytest.raises(ValueError, match="convergence"):
        kp.StepParameters(h=1e-3, convergence="scaled")


# ------------------------------------------------------------------------------ time
def _falling_mass() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    node = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(node, mass=2.0, inertia=(1.0, 1.0, 1.0))
    return b.build()


H = 0.01


def test_time_is_n_times_h_in_step_advance_and_run(tmp_path):
    """t = n h exactly (it was 2.0000000000000013 after 200 steps of 0.01), in every way of stepping."""
    sim = kp.Simulation(_falling_mass(), kp.StepParameters(h=H))
    for n in range(1, 201):
        sim.step()
        assert sim.time == n * H
    assert sim.time == 2.0
    sim = kp.Simulation(_falling_mass(), kp.StepParameters(h=H))
    sim.advance(37)
    for _ in range(13):
        sim.step()
    seen = []
    sim.run(n_steps=150, loads=lambda s, t: seen.append(t))
    assert seen == [n * H for n in range(50, 200)]
    assert sim.time == 2.0 and sim.step_count == 200
    sim = kp.Simulation(_falling_mass(), kp.StepParameters(h=H))
    sim.run(t_end=1.0, output=tmp_path / "t.h5")
    assert sim.time == 1.0
    again = kp.Simulation.restart(tmp_path / "t.h5")
    again.run(t_end=2.0, output=tmp_path / "t.h5")
    assert again.time == 2.0
    assert again.advance(0).shape == (0,) and kp.io.read(tmp_path / "t.h5").time[-1] == 2.0
    # sub-steps (as adaptive halving takes them) lie on their own grid and land on the main one
    sim = kp.Simulation(_falling_mass(), kp.StepParameters(h=0.1))
    sim.advance(3)
    half = kp.StepParameters(h=0.05).coefficients
    sim.step_with(half)
    assert sim.time == 7 * 0.05
    sim.step_with(half)
    assert sim.time == 0.4 == 4 * 0.1


# ------------------------------------------------------------------ failed steps
def _spinning_body() -> tuple[kp.Model, kp.StepParameters]:
    """A fast spinning free body: with h = 0.1 and max_iter = 3 Newton fails at the third step,
    two steps of h/2 succeed (tests/unit/test_run.py)."""
    b = kp.ModelBuilder()
    body = b.add_node(velocity=(0, 0, 0, 0.1, 8.0, 0.1))
    b.add_mass(body, mass=10.0, inertia=(0.8083, 0.6833, 0.1417))
    return b.build(), kp.StepParameters(h=0.1, rho_inf=1.0, max_iter=3, atol=1e-9, rtol=1e-9)


def test_run_info_counts_rejected_steps_and_the_smallest_step():
    model, params = _spinning_body()
    seen = []
    sim = kp.Simulation(model, params)
    info = sim.run(n_steps=20, adaptive=True, loads=lambda s, t: seen.append(t))
    assert info.converged and info.substepped > 0
    assert info.rejected > info.substepped and info.min_step in (0.05, 0.025)  # some steps need h/4
    assert seen == [n * 0.1 for n in range(20)] and sim.time == 2.0  # the main grid, sub-steps or not
    compiled = kp.Simulation(model, params).run(n_steps=20, adaptive=True)  # compiled calls, the same steps
    assert compiled[:3] + compiled[5:6] + compiled[8:] == info[:3] + info[5:6] + info[8:]
    plain = kp.Simulation(model, params).run(n_steps=2)
    assert plain.rejected == 0 and plain.min_step == 0.1


def test_min_step_stops_the_run_at_the_last_converged_step():
    model, params = _spinning_body()
    sim = kp.Simulation(model, params)
    with pytest.raises(
        kp.ConvergenceError, match=r"smallest step size allowed \(0\.1 s; max_halvings = 6, min_step = 0\.1 s\)"
    ):
        sim.run(n_steps=20, adaptive=True, min_step=0.1)
    assert sim.step_count == 2 and sim.time == 0.2

    def bad_load(s, t):
        if s.step_count >= 5:
            s.inputs.f[0, 0] = np.nan

    sim = kp.Simulation(_falling_mass(), kp.StepParameters(h=0.1))
    info = sim.run(n_steps=20, adaptive=True, loads=bad_load, min_step=0.025, throw=False)
    # a NaN load from step 6 on: h fails, then h/2, then h/4; h/8 is below min_step
    assert not info.converged and info.rejected == 3 and sim.step_count == 5 and sim.time == 0.5
    assert np.all(np.isfinite(sim.state.q))
    with pytest.raises(ValueError, match="min_step"):
        kp.Simulation(model, params).run(n_steps=2, min_step=0.2)


# ------------------------------------------------------------------ singular positions
@pytest.fixture(scope="module")
def four_bar():
    from kynemapy.validation import double_four_bar as case

    return case


@pytest.mark.parametrize("h", [1e-2, 5e-3, 1e-3, 1e-4])
def test_double_four_bar_steps_through_its_singular_positions(four_bar, h):
    """IFToMM's double four-bar (kynemapy.validation.double_four_bar) with atol = rtol = 1e-8 over
    10 s, through its 14 singular passages: with Kynema's criterion h = 5e-3 fails at t = 5.1 s,
    h = 1e-3 at t = 0.707 s, h = 1e-4 at t = 0.26 s (errors stall at 1.2–137; adaptive halving
    does not help); with the round-off criterion every h converges and the crank angle follows
    the reduced reference."""
    model, cranks = four_bar.simulation_model()
    params = kp.StepParameters(h=h, rho_inf=0.9, max_iter=20, atol=1e-8, rtol=1e-8, convergence="roundoff")
    sim = kp.Simulation(model, params)
    rows = sim.rollout(round(10.0 / h), every=max(1, round(0.01 / h)))
    angles = four_bar.crank_angles(rows["q"], cranks)
    err = np.abs(four_bar.wrapped(angles - four_bar.reference(rows["time"])[:, None])).max()
    assert err <= max(four_bar.ORDER_CONSTANT * h * h, four_bar.FINE_BOUND)


def test_double_four_bar_kynema_criterion_stalls_near_the_singular_position(four_bar):
    """Kynema's criterion alone fails at t = 0.707 s; the default (auto) steps through the same
    passage on the last iteration's round-off test and follows the reduced reference."""
    model, cranks = four_bar.simulation_model()
    params = kp.StepParameters(h=1e-3, rho_inf=0.9, max_iter=20, atol=1e-8, rtol=1e-8, convergence="kynema")
    sim = kp.Simulation(model, params)
    with pytest.raises(kp.ConvergenceError) as excinfo:
        sim.advance(1000)
    assert 0.69 < excinfo.value.time < 0.72
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.9, max_iter=20, atol=1e-8, rtol=1e-8))
    rows = sim.rollout(1000, every=10)
    angles = four_bar.crank_angles(rows["q"], cranks)
    err = np.abs(four_bar.wrapped(angles - four_bar.reference(rows["time"])[:, None])).max()
    assert sim.time == pytest.approx(1.0) and err <= max(four_bar.ORDER_CONSTANT * 1e-6, four_bar.FINE_BOUND)


def test_tiny_rotation_increments_are_applied():
    """quat_exp keeps a rotation below 1e-12 rad (Kynema drops it): the couplers of the double
    four-bar, which only translate, made Newton oscillate by ±1e-12 rad for ever at h = 1e-4."""
    from kynemapy.math.quaternion import quat_exp

    w, x, y, z = quat_exp(4e-13, 0.0, -2e-13)
    assert (w, x, y, z) == (1.0, 2e-13, 0.0, -1e-13)


# ------------------------------------------------------------------ initial velocities
def _rod(velocity) -> kp.Model:
    """A body (2 kg) whose centre is 1 m from a ball joint at the origin, along x."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    body = b.add_node(position=(1.0, 0.0, 0.0), velocity=velocity)
    b.add_mass(body, mass=2.0, inertia=(0.1, 0.2, 0.2))
    b.add_ball_joint(body, kp.GROUND, point=(0.0, 0.0, 0.0))
    return b.build()


#: 3 m/s along the rod, plus a consistent swing (v = ω × r, ω = (0, −0.5, 0))
ROD_VELOCITY = (3.0, 0.0, 0.5, 0.0, -0.5, 0.0)


def _radial_speed(sim: kp.Simulation) -> float:
    x = sim.state.x[0, :3]
    return float(sim.state.v[0, :3] @ x / np.linalg.norm(x))


def test_initial_velocities_are_projected_by_default():
    """The radial 3 m/s violates B v = 0; the least kinetic-energy correction removes exactly it
    (a rotation cannot produce velocity along the rod): Δv = (−3, 0, 0), Δω = 0.  With the velocity
    kept as given (Kynema), the body still moves 2.15 m/s along its rod after 10 steps."""
    params = kp.StepParameters(h=0.001, rho_inf=0.9)
    with pytest.warns(UserWarning, match=r"largest change 3 .*ball_joint\): B v = \[3, 0, 0\]"):
        sim = kp.Simulation(_rod(ROD_VELOCITY), params)
    np.testing.assert_allclose(sim.initial_velocity_correction[0], (-3.0, 0, 0, 0, 0, 0), rtol=0, atol=1e-14)
    np.testing.assert_allclose(sim.state.v[0], (0.0, 0.0, 0.5, 0.0, -0.5, 0.0), rtol=0, atol=1e-14)
    sim.advance(10)
    assert abs(_radial_speed(sim)) < 1e-6  # the swing's O(h) radial round-off, not 3 m/s
    kept = kp.Simulation(_rod(ROD_VELOCITY), params, initial_velocities="keep")
    kept.advance(10)
    assert _radial_speed(kept) > 2.0


def test_inconsistent_initial_velocities_can_be_refused():
    with pytest.raises(ValueError, match=r"constraint 0 \(ball_joint\): B v = \[3, 0, 0\]"):
        kp.Simulation(_rod(ROD_VELOCITY), kp.StepParameters(h=0.001), initial_velocities="check")
    with pytest.raises(ValueError, match="initial_velocities"):
        kp.Simulation(_rod(ROD_VELOCITY), kp.StepParameters(h=0.001), initial_velocities="fix")


def test_consistent_velocities_and_prescribed_rates_are_left_as_given(recwarn):
    """A consistent swing is not touched (bit for bit, no warning); a node held by a prescribed BC
    keeps its given velocity (its rate is the user's), a fixed BC's rate is zero."""
    sim = kp.Simulation(_rod((0.0, 0.0, 0.5, 0.0, -0.5, 0.0)), kp.StepParameters(h=0.001), initial_velocities="check")
    assert np.all(sim.initial_velocity_correction == 0.0)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    moving = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 0.5))
    b.add_mass(moving, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_prescribed_bc(moving)
    held = b.add_node(position=(2.0, 0.0, 0.0), velocity=(0.0, 1.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(held, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_fixed_bc(held)
    with pytest.warns(UserWarning, match="constraint 1 \\(fixed_bc\\)"):
        sim = kp.Simulation(b.build(), kp.StepParameters(h=0.001))
    np.testing.assert_array_equal(sim.state.v[moving], (1.0, 0.0, 0.0, 0.0, 0.0, 0.5))
    np.testing.assert_allclose(sim.state.v[held], 0.0, atol=1e-15)
    assert not [w for w in recwarn if "projected" in str(w.message) and "prescribed" in str(w.message)]
