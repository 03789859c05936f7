"""Step control at its edges: Newton failing at one time whatever h, a loads function that
raises, ``h_min`` itself, a ``t_end`` within round-off of the current time, the settings a
continued file was written with, sweeps, and argument checks (found by trying the control as a
new user would, 2026-11-30)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.cli import main
from kynemapy.run.extrapolation import MAX_NEWTON_FAILURES

EXAMPLE = Path(__file__).parents[2] / "examples" / "heavy_top.toml"


def rod() -> tuple[kp.Model, int]:
    """The rod of docs/getting-started.md (1 kg, 1 m, hinged at its end), released at rest from 60°."""
    th = math.radians(60.0)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    node = b.add_node(
        position=(-0.5 * math.sin(th), 0.0, -0.5 * math.cos(th)),
        orientation=(math.cos(th / 2), 0.0, math.sin(th / 2), 0.0),
    )
    b.add_mass(node, mass=1.0, inertia=(1 / 12, 1 / 12, 2e-4))
    b.add_hinge_joint(kp.GROUND, node, point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    return b.build(), node


def _sim(h: float = 1e-2) -> kp.Simulation:
    model, _ = rod()
    return kp.Simulation(model, kp.StepParameters(h=h, rho_inf=0.9))


def test_newton_failing_at_one_time_whatever_h_stops_the_extrapolated_control() -> None:
    """A force of 1e300 N from t = 0.2 s on: every call's Newton iteration fails there, and each
    call redone with half the h integrates again from the start at twice the cost.  The control
    stops after MAX_NEWTON_FAILURES such calls (before: it halved on for the 30 attempts, hours)
    with a ConvergenceError naming the time, and leaves the state of the start."""
    model, node = rod()
    sim = kp.Simulation(model, kp.StepParameters(h=1e-2, rho_inf=0.9))
    q0 = sim.state.q.copy()

    def loads(s: kp.Simulation, t: float) -> None:
        s.set_load(node, force=(1e300 if t > 0.2 else 0.0, 0.0, 0.0))

    with pytest.raises(
        kp.ConvergenceError, match=rf"after {MAX_NEWTON_FAILURES} calls whose Newton iteration failed near t = 0\.2"
    ):
        sim.advance_to(0.5, kp.StepControl(rtol=1e-4, atol=1e-4, scheme="extrapolated"), loads=loads)
    assert sim.time == 0.0 and sim.step_count == 0
    assert np.array_equal(sim.state.q, q0)


def test_a_loads_function_that_raises_leaves_the_state_of_the_call_start() -> None:
    """An exception from ``loads`` inside an extrapolated call (here at t > 0.3 s, in the second
    call) propagates, and the simulation is where the call began: t = 0.2 s, its step counter,
    its q and v (before: a coarse level's state at 0.29 s with the counter reset to 9)."""
    sim = _sim()
    control = kp.StepControl(rtol=1e-5, atol=1e-5, scheme="extrapolated")
    sim.advance_to(0.2, control)
    time, steps, q, v = sim.time, sim.step_count, sim.state.q.copy(), sim.state.v.copy()
    assert steps > 0

    def loads(_s: kp.Simulation, t: float) -> None:
        if t > 0.3:
            raise RuntimeError("the user's load table ends at 0.3 s")

    with pytest.raises(RuntimeError, match=r"ends at 0\.3 s"):
        sim.advance_to(0.5, control, loads=loads)
    assert sim.time == time and sim.step_count == steps
    assert np.array_equal(sim.state.q, q) and np.array_equal(sim.state.v, v)


def test_h_min_itself_is_tried_before_the_extrapolated_control_stops() -> None:
    """At tolerance 1e-8 a call with h = 12.5 ms is within the tolerance on this pendulum
    (checked first, h_max = h_initial = 12.5 ms); from h_initial = 0.1 s with h_min = 12.5 ms the
    rejected calls' prediction falls below h_min: h_min is then tried, and accepted (before, the
    run stopped "at h_min" with a step size below it that it never tried)."""
    control = dict(rtol=1e-8, atol=1e-8, scheme="extrapolated")
    at_h_min = _sim().advance_to(1.0, kp.StepControl(**control, h_initial=0.0125, h_max=0.0125))
    assert at_h_min.h[0] == pytest.approx(0.0125) and at_h_min.error.max() <= 1.0
    run = _sim().advance_to(1.0, kp.StepControl(**control, h_initial=0.1, h_min=0.0125))
    assert run.rejected >= 1 and run.h[0] == pytest.approx(0.0125) and run.error.max() <= 1.0
    with pytest.raises(kp.ConvergenceError, match="at the smallest step size h_min: the estimated global error"):
        _sim().advance_to(1.0, kp.StepControl(**control, h_initial=0.1, h_min=0.05))


@pytest.mark.parametrize("scheme", ["generalized-alpha", "extrapolated"])
def test_a_t_end_within_round_off_of_the_current_time_leaves_nothing_to_do(tmp_path, scheme: str) -> None:
    """A controlled file run to 0.3 s and continued to ``0.1 + 0.2`` (0.30000000000000004 s, below
    the controls' round-off threshold): no step and no row, the file as it was (before: an
    IndexError); an output time there is the current state."""
    control = kp.StepControl(rtol=1e-5, atol=1e-5, scheme=scheme, scope="run" if scheme != "extrapolated" else "step")
    path = tmp_path / "rod.h5"
    _sim().run(t_end=0.3, output=path, control=control)
    rows = kp.io.read(path).committed
    sim = kp.Simulation.restart(path)
    info = sim.run(t_end=0.1 + 0.2, output=path, control=control)
    assert info.steps == 0 and info.rows == 0 and kp.io.read(path).committed == rows
    out = sim.advance_to(0.1 + 0.2, control, output_times=[0.1 + 0.2])
    assert out.accepted == 0 and out.q.shape[0] == 1 and np.array_equal(out.q[0], sim.state.q)


def test_argument_checks() -> None:
    """A numpy integer is an integer; ``velocity_error`` must be a bool; ``t_end`` a number."""
    assert kp.StepControl(max_attempts=np.int64(3)).max_attempts == 3
    with pytest.raises(ValueError, match="velocity_error must be True or False"):
        kp.StepControl(velocity_error="no")
    with pytest.raises(ValueError, match="scope applies to scheme='generalized-alpha' only"):
        kp.StepControl(scheme="extrapolated", scope="run")
    sim = _sim()
    for t_end in (None, np.array([0.1])):
        with pytest.raises(ValueError, match="t_end must be a finite number"):
            sim.advance_to(t_end, kp.StepControl())


def _model_file(tmp_path: Path, name: str, control: str) -> Path:
    text = EXAMPLE.read_text().replace("n_steps = 400                                      # 0.8 s", "t_end = 0.1")
    path = tmp_path / name
    path.write_text(text + "\n[step_control]\n" + control)
    return path


def test_a_file_is_continued_only_with_the_step_control_it_was_written_with(tmp_path, capsys) -> None:
    """``kynemapy run --resume`` with another ``[step_control]`` than the file's (recorded in its
    ``step_control`` attribute) is refused naming the differences; the same table continues it;
    ``kynemapy info`` shows the scheme and tolerances."""
    first = _model_file(tmp_path, "a.toml", 'rtol = 1e-5\natol = 1e-5\nscheme = "extrapolated"\n')
    other = _model_file(tmp_path, "b.toml", 'rtol = 1e-2\natol = 1e-2\nscope = "run"\n')
    out = tmp_path / "top.h5"
    assert main(["run", str(first), "-o", str(out), "--no-progress"]) == 0
    rows = kp.io.read(out).committed
    capsys.readouterr()
    assert main(["run", str(other), "-o", str(out), "--resume", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "[step_control]" in err and "scheme = 'generalized-alpha' ('extrapolated' in the file)" in err
    assert kp.io.read(out).committed == rows
    longer = first.read_text().replace("t_end = 0.1", "t_end = 0.2")
    first.write_text(longer)
    assert main(["run", str(first), "-o", str(out), "--resume", "--no-progress"]) == 0
    assert "on to t = 0.2 s under step control" in capsys.readouterr().out
    assert kp.io.read(out).time[-1] == pytest.approx(0.2)
    assert main(["info", str(out)]) == 0
    assert "scheme extrapolated, rtol = 1e-05, atol = 1e-05" in capsys.readouterr().out


def test_a_sweep_refuses_a_model_file_with_step_control(tmp_path) -> None:
    """A sweep's members run fixed steps: a ``[step_control]`` table is refused by name (before,
    it was ignored without a word)."""
    from kynemapy.run.sweep import SweepError, sweep

    path = _model_file(tmp_path, "c.toml", 'rtol = 1e-5\natol = 1e-5\nscheme = "extrapolated"\n')
    with pytest.raises(SweepError, match=r"\[step_control\]: a sweep's members run fixed steps"):
        sweep(path, {"step.rho_inf": [0.9, 0.5]}, tmp_path / "sweep", workers=1)


def _rod_reference(times: np.ndarray) -> np.ndarray:
    """The rod's centre of mass displacement [m] at ``times`` (DOP853 of θ'' = −(3 g / 2 L) sin θ,
    L = 1 m, rtol = atol = 1e-13), from its position at 60°."""
    from scipy.integrate import solve_ivp

    th0 = math.radians(60.0)
    sol = solve_ivp(
        lambda _t, y: [y[1], -1.5 * 9.81 * math.sin(y[0])],
        (0.0, float(times[-1])),
        [th0, 0.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        t_eval=times,
    )
    th = sol.y[0]
    position = np.stack([-0.5 * np.sin(th), 0.0 * th, -0.5 * np.cos(th)], axis=-1)
    return position - np.array([-0.5 * math.sin(th0), 0.0, -0.5 * math.cos(th0)])


@pytest.mark.parametrize("block", [None, 64, 16, 4])
def test_extrapolated_rows_in_many_calls_hold_the_tolerance(tmp_path, block: int | None) -> None:
    """The rod for 1 s at tolerance 1e-7, rows every 10 ms, written in one call or in calls of
    32, 8 and 2 rows: every row within 2 × the tolerance of DOP853.  Before, the velocities a call
    handed to the next were not controlled, and the calls of 32-2 rows ended 17-27 × the
    tolerance off (one call: 1.9 ×)."""
    model, node = rod()
    tol = 1e-7
    sim = kp.Simulation(model, kp.StepParameters(h=1e-2, rho_inf=0.9))
    path = tmp_path / "rod.h5"
    sim.run(t_end=1.0, output=path, block=block, control=kp.StepControl(rtol=tol, atol=tol, scheme="extrapolated"))
    result = kp.io.read(path)
    assert result.committed == 101
    error = np.abs(result.q[:, node, :3] - _rod_reference(result.time)).max()
    assert error <= 2.0 * tol
