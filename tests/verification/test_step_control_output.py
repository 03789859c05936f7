"""Step-controlled runs written into result files (``Simulation.run(..., control=...)``,
kynemapy/run/controlled.py): rows on the regular grid by the scheme's own dense output, against
independent references, the ``/step_control`` columns against the counts, resume and checksums."""

from __future__ import annotations

import dataclasses
import math

import h5py
import numpy as np
import pytest
from references import heavy_top_reference
from test_extrapolation import hinge_pendulum, hinge_pendulum_reference

import kynemapy as kp
from kynemapy.io.errors import ResultFileError


def heavy_top() -> tuple[kp.Model, int]:
    """Kynema's heavy top (examples/heavy_top.py)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538))
    pin = b.add_node(position=(0, 0, 0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    b.add_rigid_joint_6dof_to_3dof(top, pin)
    b.add_prescribed_bc_3dof(pin)
    return b.build(), top


def _params(h: float) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, max_iter=20)


def _check_columns(result: kp.io.Result, steps: int, rejected: int, min_step: float, h: float, every: int) -> None:
    """Rows on t = k · every · h (to rounding); the step counter's increments are the accepted counts;
    the counts add up to the run's; the step sizes and estimates are those of accepted steps."""
    n = result.committed
    assert np.allclose(result.time, every * h * np.arange(n), rtol=0, atol=1e-12)
    sc = result.step_control
    assert sc is not None and set(sc) == {"step_size", "accepted", "rejected", "estimated_error"}
    assert all(column.shape == (n,) for column in sc.values())
    assert np.array_equal(np.diff(result.step), sc["accepted"][1:])
    assert int(sc["accepted"].sum()) == steps == int(result.step[-1])
    assert int(sc["rejected"].sum()) == rejected
    assert sc["step_size"][0] == 0.0 and np.all(sc["step_size"][1:] >= min_step)
    assert np.all(sc["step_size"][1:] <= every * h * 10)
    assert np.all(sc["estimated_error"] <= 1.0) and np.all(sc["estimated_error"][1:] > 0.0)
    # a row's step: at least as long as it took to cross the rows before, if it was the only one
    single = sc["accepted"][1:] == 1
    assert np.all(sc["step_size"][1:][single] >= every * h * (1 - 1e-9))


@pytest.mark.parametrize("fast", [False, True], ids=["defaults", "fast-newton"])
def test_extrapolated_rows_on_the_grid_against_the_reference(tmp_path, fast: bool) -> None:
    """Heavy top, 1 s, ``StepControl(rtol=atol=1e-5, scheme="extrapolated")``, rows every 50 ms
    (every = 5 of h = 10 ms), in calls of 4 rows (block = 8): 21 rows exactly on the grid, each
    centre of mass within 2× the tolerance of DOP853 of Euler's equations about the pivot
    (measured 0.10×; 3.9× before each call bounded the velocity error it hands to the next, which
    the top's 150 rad/s spin grew; a single call: 2×, test_extrapolation.py); the rows' vd and lam
    are consistent (the pivot's reaction balances gravity and the centre's acceleration).  The
    same with the "fast Newton" settings (``predictor="last"``, the exact tangent, Newton
    atol = 1e-3, rtol = 0.1; docs/step-control.md)."""
    model, top = heavy_top()
    tol = 1e-5
    fast_newton = {"predictor": "last", "geometric_stiffness": True, "atol": 1e-3, "rtol": 0.1} if fast else {}
    sim = kp.Simulation(model, dataclasses.replace(_params(1e-2), **fast_newton))
    path = tmp_path / "top.h5"
    info = sim.run(
        t_end=1.0, output=path, every=5, block=8, control=kp.StepControl(rtol=tol, atol=tol, scheme="extrapolated")
    )
    assert info.converged and info.rows == 21 and sim.time == 1.0
    result = kp.io.read(path)
    _check_columns(result, info.steps, info.rejected, info.min_step, 1e-2, 5)
    u_ref, _ = heavy_top_reference(result.time)
    error = np.linalg.norm(result.q[:, top, :3] - u_ref, axis=1)
    assert error[1:].min() > 0.0  # the scheme's error, not a copy of the reference
    assert error.max() <= 2.0 * tol, error.max() / tol
    # Newton's second law of the top: m (ü − g) = the pivot's force on the top (the lam rows are
    # the joint's reaction on the two nodes, equal and opposite)
    force = 15.0 * (result.vd[:, top, :3] - np.array([0.0, 0.0, -9.81]))
    assert np.allclose(force, result.lam[:, 0, :3], rtol=0.0, atol=1e-6)
    assert np.allclose(result.a, result.vd)


def test_generalized_alpha_rows_on_the_grid_against_the_reference(tmp_path) -> None:
    """Planar double pendulum of two hinges, 1 s, generalized-α with ``scope="run"`` at
    1e-6, rows every 20 ms (every = 2 of h = 10 ms), default block (one call): 51 rows on the
    grid, both bodies within 10× the tolerance of DOP853 of the Lagrange equations at 1 s (the
    issue's factor; measured 9.5×, the single pendulum of docs/step-control.md 7.6×)."""
    model, n1, n2 = hinge_pendulum()
    tol = 1e-6
    sim = kp.Simulation(model, _params(1e-2))
    path = tmp_path / "pendulum.h5"
    info = sim.run(t_end=1.0, output=path, every=2, control=kp.StepControl(rtol=tol, atol=tol, scope="run"))
    result = kp.io.read(path)
    assert result.committed == 51
    _check_columns(result, info.steps, info.rejected, info.min_step, 1e-2, 2)
    x0 = np.asarray(model.x0)
    x1, x2 = hinge_pendulum_reference(1.0)
    p1 = (x0[n1, :3] + result.q[-1, n1, :3])[[0, 2]]
    p2 = (x0[n2, :3] + result.q[-1, n2, :3])[[0, 2]]
    error = max(float(np.linalg.norm(p1 - x1)), float(np.linalg.norm(p2 - x2)))
    assert 0.0 < error <= 10.0 * tol, error / tol
    # an interpolated row: the hinge's output angle (from the row's state) against the reference
    k = 25  # t = 0.5 s, inside a step
    assert 0.0 < result.time[k] < 1.0
    x1k, _ = hinge_pendulum_reference(float(result.time[k]))
    angle = math.atan2(x1k[0], -x1k[1]) - 1.0  # the hinge's angle from its start [rad]
    assert abs(abs(result.constraint_output[k, 0, 0]) - abs(angle)) <= 1e-4


def test_a_continued_file_stays_on_the_grid_and_checksummed(tmp_path) -> None:
    """Run to 0.5 s, continue the file to 1 s (Simulation.restart): one grid, the columns
    continued and every block's checksum good; the continued run is refused without control, a
    file of fixed steps is refused with control, and a changed column fails its checksum."""
    model, top = heavy_top()
    control = kp.StepControl(rtol=1e-5, atol=1e-5, scheme="extrapolated")
    path = tmp_path / "top.h5"
    first = kp.Simulation(model, _params(1e-2)).run(t_end=0.5, output=path, every=5, block=8, control=control)
    with pytest.raises(ValueError, match="step-controlled run"):
        kp.Simulation.restart(path).run(t_end=1.0, output=path)
    sim = kp.Simulation.restart(path)
    assert sim.resume_step_control and sim.time == 0.5
    second = sim.run(t_end=1.0, output=path, block=8, control=control)
    result = kp.io.read(path)
    assert result.committed == 21 and first.rows == 11 and second.rows == 10
    _check_columns(
        result,
        first.steps + second.steps,
        first.rejected + second.rejected,
        min(first.min_step, second.min_step),
        1e-2,
        5,
    )
    u_ref, _ = heavy_top_reference(result.time)
    # two runs, each holding its own tolerance (the bound of one run, twice; measured 10.2×)
    assert np.linalg.norm(result.q[:, top, :3] - u_ref, axis=1).max() <= 2 * 8.0 * 1e-5
    fixed = tmp_path / "fixed.h5"
    kp.Simulation(model, _params(1e-2)).run(t_end=0.1, output=fixed)
    with pytest.raises(ValueError, match="fixed steps"):
        kp.Simulation.restart(fixed).run(t_end=0.2, output=fixed, control=control)
    with h5py.File(path, "r+") as f:
        f["step_control/step_size"][3] *= 2.0
    with pytest.raises(ResultFileError, match="step_control/step_size"):
        kp.io.read(path)


def test_bad_settings_are_refused(tmp_path) -> None:
    model, _ = heavy_top()
    sim = kp.Simulation(model, _params(1e-2))
    control = kp.StepControl(scheme="extrapolated")
    with pytest.raises(ValueError, match="give t_end"):
        sim.run(n_steps=10, control=control)
    with pytest.raises(ValueError, match="adaptive"):
        sim.run(t_end=0.1, control=control, adaptive=True)
    with pytest.raises(TypeError, match="StepControl"):
        sim.run(t_end=0.1, control="tight")
    with pytest.raises(TypeError, match="loads must be a callable"):
        sim.run(t_end=0.1, control=control, loads=1.0)
    with pytest.raises(ValueError, match="every must be"):
        sim.run(t_end=0.1, control=control, every=0)
    assert sim.time == 0.0


def test_the_command_line_runs_a_model_file_with_step_control(tmp_path, capsys) -> None:
    """examples/heavy_top.toml with ``[run] t_end = 0.5`` and a ``[step_control]`` table
    (extrapolated, 1e-6), ``[output] every = 10`` of h = 2 ms: ``kynemapy run`` writes 26 rows on
    the 20 ms grid, within 8× the tolerance of DOP853 (the bound of the test above); a bad value
    (a negative rtol, an unknown ``newton`` mode) is a message naming the table, not a traceback."""
    from pathlib import Path

    from kynemapy.cli import main

    text = (Path(__file__).parents[2] / "examples" / "heavy_top.toml").read_text()
    text = text.replace("n_steps = 400                                      # 0.8 s", "t_end = 0.5")
    text = text.replace("every = 1", "every = 10")
    model_file = tmp_path / "top.toml"
    model_file.write_text(text + '\n[step_control]\nrtol = 1e-6\natol = 1e-6\nscheme = "extrapolated"\n')
    out = tmp_path / "top.h5"
    assert main(["run", str(model_file), "-o", str(out), "--no-progress"]) == 0
    assert "accepted steps" in capsys.readouterr().out
    result = kp.io.read(out)
    assert result.committed == 26 and result.step_control is not None
    assert np.allclose(result.time, 0.02 * np.arange(26), rtol=0, atol=1e-12)
    u_ref, _ = heavy_top_reference(result.time)
    top = 0  # the first [[node]]
    assert np.linalg.norm(result.q[:, top, :3] - u_ref, axis=1).max() <= 8.0 * 1e-6
    assert main(["info", str(out)]) == 0
    assert "step control      " in capsys.readouterr().out
    model_file.write_text(text + "\n[step_control]\nrtol = -1\n")
    assert main(["run", str(model_file), "-o", str(tmp_path / "bad.h5"), "--no-progress"]) != 0
    assert "[step_control]: rtol must be" in capsys.readouterr().err
    model_file.write_text(text + '\n[step_control]\nscheme = "extrapolated"\nnewton = "fast"\n')
    assert main(["run", str(model_file), "-o", str(tmp_path / "bad.h5"), "--no-progress"]) != 0
    assert "[step_control]: newton must be one of 'auto', 'params'" in capsys.readouterr().err


def test_consistent_accelerations_through_the_stored_call_are_the_workspace_paths() -> None:
    """``Simulation.compute_consistent_accelerations`` goes through the simulation's stored call
    (0.26 → 0.03 ms a row of a controlled file): the same compiled task as
    ``api.consistent_accelerations`` on the workspace, so vd and lam agree bit for bit (the double
    pendulum of hinges, moved and with a load)."""
    from kynemapy.engine import api

    model, _, n2 = hinge_pendulum()
    sim = kp.Simulation(model, _params(1e-2))
    sim.advance(7)
    sim.set_load(n2, force=(1.5, 0.0, -0.3))
    sim.state.v[...] *= 1.3  # no longer the step's: accelerations of the new state
    sim.compute_consistent_accelerations()
    state, inputs = sim.state.copy(), (np.array(sim.inputs.f), np.array(sim.inputs.constraint_input))
    sim.state.vd[...] = 0.0
    sim.state.lam[...] = 0.0
    assert api.consistent_accelerations(sim.workspace, sim.state, sim.inputs) == 0
    assert np.array_equal(sim.state.vd, state.vd) and np.array_equal(sim.state.lam, state.lam)
    assert np.any(state.vd != 0.0) and np.array_equal(inputs[0], sim.inputs.f)


def test_a_run_the_control_cannot_finish_keeps_the_rows_before(tmp_path) -> None:
    """Generalized-α at an unreachable tolerance (1e-13 with h_min = 1 ms) stops in its first
    call: ``throw=False`` returns ``converged=False`` with the first row (and its restart data) in
    the file; ``throw=True`` raises ConvergenceError naming the file's rows."""
    model, _ = heavy_top()
    control = kp.StepControl(rtol=1e-13, atol=1e-13, h_min=1e-3, scope="run")
    path = tmp_path / "stopped.h5"
    info = kp.Simulation(model, _params(1e-2)).run(t_end=0.2, output=path, every=5, control=control, throw=False)
    assert not info.converged and info.rows == 1 and info.rejected >= 1
    result = kp.io.read(path)
    assert result.committed == 1 and result.restart is not None and result.time[0] == 0.0
    assert int(result.restart["step"][0]) == 0
    with pytest.raises(kp.ConvergenceError, match="rows are in"):
        kp.Simulation(model, _params(1e-2)).run(t_end=0.2, output=path, overwrite=True, control=control)


@pytest.mark.parametrize("scheme", ["generalized-alpha", "extrapolated"])
def test_a_load_varying_in_time_in_the_rows(tmp_path, scheme: str) -> None:
    """A free body (2 kg) from rest under F = 3 sin(5t) N along x, ``loads(sim, t)``, rows every
    50 ms in calls of 4 rows: each interpolated row's vd is F(t)/m at the row's own time to
    rounding (the consistent accelerations with the inputs there); the calls' last rows too (the
    extrapolated scheme's end state's consistent accelerations; generalized-α's last step, with
    the load at its end time), and u the closed form ``F0/(m ω²)(ωt − sin ωt)`` within 20× the
    tolerance (measured 0.40× extrapolated on 2026-11-30, 9.6× in an earlier note; generalized-α
    with scope="run" 9.7×, 1045× when it held each load from its step's start)."""
    mass, f0, w = 2.0, 3.0, 5.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    node = b.add_node(position=(0, 0, 0))
    b.add_mass(node, mass=mass, inertia=(0.5, 0.5, 0.5))
    model = b.build()

    def loads(sim: kp.Simulation, t: float) -> None:
        sim.set_load(node, force=(f0 * math.sin(w * t), 0.0, 0.0))

    tol = 1e-6
    sim = kp.Simulation(model, _params(1e-2))
    path = tmp_path / "forced.h5"
    control = kp.StepControl(rtol=tol, atol=tol, scheme=scheme, scope="run" if scheme != "extrapolated" else "step")
    sim.run(t_end=1.0, output=path, every=5, block=8, control=control, loads=loads)
    r = kp.io.read(path)
    assert r.committed == 21
    ends = np.zeros(21, dtype=bool)
    ends[[3, 7, 11, 15, 19, 20]] = True  # the calls' last rows (3 rows after the first, then 4 a call)
    accel = f0 * np.sin(w * r.time) / mass
    assert np.allclose(r.vd[~ends, node, 0], accel[~ends], rtol=0.0, atol=1e-12)
    assert np.allclose(r.vd[ends, node, 0], accel[ends], rtol=0.0, atol=1e-12)
    u = f0 / (mass * w * w) * (w * r.time - np.sin(w * r.time))
    error = np.abs(r.q[:, node, 0] - u).max()
    assert 0.0 < error <= 20.0 * tol, error / tol
