"""A step-controlled run written into a result file: :meth:`Simulation.run` with ``control``.

The control (:meth:`Simulation.advance_to`, either scheme of :class:`~kynemapy.StepControl`)
chooses the steps; the file keeps a regular time grid.  Its rows lie at ``t0 + k · every · h``
(``h`` the simulation's ``params.h``, ``t0`` the time at the start of the run) and at ``t_end``.
The run goes in calls of :meth:`Simulation.advance_to` of ``unit = block // 2`` rows (the
file's chunk), each ending exactly on its last row, so that the state after a call is the
restart state of that row and a continued file (:meth:`Simulation.restart`) goes on from it.
Inside a call the rows come from the scheme's own dense output (cubic Hermite interpolation
of q and v within a step of generalized-α, or between the extrapolated grid points).

Per row, besides the usual fields:

* ``vd`` and ``lam``: consistent with the row's q and v (the constrained equations of motion
  solved there, with the inputs of the row's time), and ``a = vd``; at the last row of each
  call the integrator's own state.  Where those equations are singular (a singular position of
  a mechanism), NaN.
* ``constraint_output``: computed from the row's state (hinge and slider angles/displacements,
  rates, accelerations); Kynema's revolute-joint output is only computed by a step, so it is NaN
  at interpolated rows (exact at the last row of each call).
* ``iterations`` and ``error`` (Newton): 0 (a row is no step).
* ``/step_control``: ``step_size`` [s] and ``estimated_error`` of the accepted step that reaches
  the row's time (0 at the run's first row), and ``accepted``/``rejected``: the steps accepted,
  and the attempts (generalized-α) or calls (extrapolated) rejected, since the row before.

The tolerance of ``scheme="extrapolated"`` (a global error per call) and of ``scope="run"`` (the
local errors of a call add up to it) is the whole run's: each call gets the share
``(its span) / (t_end − t0)`` of ``rtol`` and ``atol``, so that the calls' errors add up to it
(before the problem's own growth of errors); ``scope="step"`` bounds each step's local error
whatever the calls.

The next call starts with the last full step size of the call before (generalized-α) or with
twice the last call's step (extrapolated, whose h does not grow within a call), within
``h_max``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time as _time
from typing import Any

import numpy as np

from kynemapy.engine.api import ConvergenceError, task
from kynemapy.engine.entry import START
from kynemapy.model.kinds import REVOLUTE_JOINT
from kynemapy.run import extrapolation
from kynemapy.run.progress import ProgressBar
from kynemapy.run.stepcontrol import StepControl, quat_product, within_roundoff


def output_grid(t0: float, t_end: float, spacing: float) -> np.ndarray:
    """The row times of a controlled run after ``t0``: ``t0 + k · spacing`` up to ``t_end``, and ``t_end``.

    Parameters
    ----------
    t0 : float
        The start [s].
    t_end : float
        The end [s] (> t0).
    spacing : float
        The spacing of the rows [s] (> 0).

    Returns
    -------
    (K,) ndarray of float
        The times [s], increasing, the last one ``t_end`` (a grid time within 1e-9 of a spacing
        before ``t_end`` is left out, not written as a sliver).
    """
    n = math.floor((t_end - t0) / spacing * (1.0 + 1e-12) + 1e-9)
    times = t0 + spacing * np.arange(1, n + 1)
    times = times[times < t_end - 1e-9 * spacing]
    return np.append(times, t_end)


#: the extrapolated scheme in a run of several calls: the velocity error a call hands to the next
#: grows into position error; each call but the last also bounds (its estimated error of the
#: velocities at its end) × (the time after it, at most this many times its own span), weighed as
#: a position error (docs/step-control.md, "Into a result file": without it, calls of 2-64 rows
#: ended 17-27 × the tolerance off on the pendulum; with one span 0.08-0.38 ×, with the whole
#: rest of the run 0.007-0.19 × at up to 3 × the steps)
HORIZON_SPANS = 1.0


def control_settings(control: Any) -> str:
    """The settings of a :class:`~kynemapy.StepControl` as a JSON object (keys sorted): the root
    attribute ``step_control`` of a file it writes, which ``kynemapy run --resume`` compares."""
    return json.dumps(dataclasses.asdict(control), sort_keys=True)


def _revolute_rows(sim: Any) -> np.ndarray:
    """Bool (C,): the constraints whose output only a step computes (Kynema's revolute azimuth)."""
    return np.asarray(sim.model.constraint_kind) == REVOLUTE_JOINT


def _interpolated_fields(
    sim: Any, times: np.ndarray, q: np.ndarray, v: np.ndarray, loads: Any, revolute: np.ndarray
) -> dict[str, np.ndarray]:
    """``vd``, ``a``, ``lam``, ``constraint_output`` consistent with each row's q and v (the
    simulation's state and inputs are restored after)."""
    n = times.size
    state = sim.state
    out = {
        "vd": np.full((n, *state.vd.shape), np.nan),
        "a": np.full((n, *state.a.shape), np.nan),
        "lam": np.full((n, *state.lam.shape), np.nan),
        "constraint_output": np.full((n, *state.constraint_output.shape), np.nan),
    }
    if n == 0:
        return out
    saved = sim.save_state()
    inputs = [np.array(a) for a in sim.inputs] if loads is not None else None
    x0 = np.asarray(sim.model.x0)
    try:
        for i in range(n):
            state.q[...] = q[i]
            state.q_prev[...] = q[i]
            state.v[...] = v[i]
            state.x[:, :3] = x0[:, :3] + q[i, :, :3]
            state.x[:, 3:] = quat_product(q[i, :, 3:], x0[:, 3:])
            state.time[0] = times[i]
            if loads is not None:
                loads(sim, float(times[i]))
            try:
                sim.compute_consistent_accelerations()
            except ConvergenceError:
                continue  # singular there: NaN
            task(sim.data, sim.coefficients, START)  # a := vd, x, the joints' outputs
            out["vd"][i] = state.vd
            out["a"][i] = state.vd
            out["lam"][i] = state.lam
            co = np.array(state.constraint_output)
            co[revolute] = np.nan
            out["constraint_output"][i] = co
    finally:
        sim.restore_state(saved)
        if inputs is not None:
            for target, value in zip(sim.inputs, inputs, strict=True):
                target[...] = value
    return out


def _state_row(sim: Any) -> dict[str, np.ndarray]:
    """The fields of one row from the simulation's own state."""
    s = sim.state
    return {
        "time": np.array([float(s.time[0])]),
        "step": np.array([int(s.step[0])], dtype=np.int64),
        "q": s.q[None].copy(),
        "v": s.v[None].copy(),
        "vd": s.vd[None].copy(),
        "a": s.a[None].copy(),
        "lam": s.lam[None].copy(),
        "constraint_output": s.constraint_output[None].copy(),
    }


def chunk_rows(
    sim: Any,
    run: Any,
    times: np.ndarray,
    step_before: int,
    loads: Any,
    revolute: np.ndarray,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The rows and ``/step_control`` columns of one call of the control (see the module docstring).

    Parameters
    ----------
    sim : Simulation
        The simulation, at the end of the call (at ``times[-1]``).
    run : kynemapy.ControlledRun
        What the call did (its dense output at ``times``).
    times : (K,) ndarray of float
        The row times of the call [s], the last one its end.
    step_before : int
        The step counter at the start of the call.
    loads : callable or None
        ``loads(sim, t)`` (the inputs of each row's consistent accelerations).
    revolute : (C,) ndarray of bool
        The constraints whose output only a step computes.

    Returns
    -------
    rows : dict of str to ndarray
        The row fields (without the energies, computed by the writer), K rows each.
    columns : dict of str to ndarray
        ``step_size`` [s], ``accepted``, ``rejected``, ``estimated_error``, (K,) each.
    """
    k = times.size
    ends = np.asarray(run.time)
    span = max(abs(times[-1]), 1.0)
    # the accepted step that reaches each row's time: the first one ending at or after it
    index = np.searchsorted(ends, times - 1e-12 * span, side="left")
    index = np.minimum(index, ends.size - 1)
    index[-1] = ends.size - 1
    rejections = np.asarray(run.rejections, dtype=np.int64)
    cumulative = np.concatenate([[0], np.cumsum(rejections)])
    previous = np.concatenate([[-1], index[:-1]])
    columns = {
        "step_size": np.asarray(run.h)[index],
        "accepted": (index - previous).astype(np.int64),
        "rejected": (cumulative[index + 1] - cumulative[previous + 1]).astype(np.int64),
        "estimated_error": np.asarray(run.error)[index],
    }
    fields = _interpolated_fields(sim, times[:-1], run.q[:-1], run.v[:-1], loads, revolute)
    last = _state_row(sim)
    rows = {
        "time": times.copy(),
        "step": (step_before + index + 1).astype(np.int64),
        "q": np.concatenate([run.q[:-1], last["q"]]),
        "v": np.concatenate([run.v[:-1], last["v"]]),
        "iterations": np.zeros(k, dtype=np.int64),
        "error": np.zeros(k),
    }
    for name in ("vd", "a", "lam", "constraint_output"):
        rows[name] = np.concatenate([fields[name], last[name]])
    rows["step"][-1] = int(sim.state.step[0])
    return rows, columns


def _first_row(sim: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rows = _state_row(sim)
    rows["iterations"] = np.zeros(1, dtype=np.int64)
    rows["error"] = np.zeros(1)
    columns = {
        "step_size": np.zeros(1),
        "accepted": np.zeros(1, dtype=np.int64),
        "rejected": np.zeros(1, dtype=np.int64),
        "estimated_error": np.zeros(1),
    }
    return rows, columns


def _joined(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def run(
    sim: Any,
    *,
    t_end: float,
    control: StepControl,
    output: str | os.PathLike[str] | None = None,
    every: int | None = None,
    block: int | None = None,
    progress: bool = False,
    loads: Any = None,
    throw: bool = True,
    attrs: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> Any:
    """:meth:`kynemapy.Simulation.run` with ``control`` (see the module docstring).

    Parameters
    ----------
    sim : Simulation
        The simulation (dynamic).
    t_end : float
        The end time [s] (>= the current time), reached exactly.
    control : kynemapy.StepControl
        The tolerances and the scheme.
    output : str or os.PathLike or None, default None
        The result file, as for :meth:`~kynemapy.Simulation.run` (None: nothing written; the
        control still runs in calls of ``block // 2`` rows).
    every : int or None, default None
        The rows' spacing in units of ``params.h`` (None: 1, or a continued file's own).
    block : int or None, default None
        Twice the rows of one call of the control and of one chunk of the file (None: as for
        fixed steps).
    progress : bool, default False
        Draw a progress bar (per call).
    loads : callable or None, default None
        ``loads(sim, t)``: called before each step (generalized-α: each attempt) with the time at
        its end, where generalized-α evaluates its equilibrium.
    throw : bool, default True
        Raise :class:`~kynemapy.ConvergenceError` when the control stops; False: return with
        ``converged=False`` (the rows of the calls before are in the file; the state is that of
        the last accepted step).
    attrs : dict of str to Any or None, default None
        Extra root attributes of a new file (which also gets ``step_control``: the control's
        settings, :func:`control_settings`).
    overwrite : bool, default False
        Replace an existing file (the file this simulation continues,
        :meth:`Simulation.restart`, is continued).

    Returns
    -------
    RunInfo
        ``steps``: accepted steps; ``rejected``: rejected attempts (generalized-α) or calls
        (extrapolated), and 1 for a call that stopped the run; ``min_step``: the smallest
        accepted step size [s]; ``iterations_mean`` and ``iterations_max`` are 0 (not counted by
        the control).  A run that stopped keeps in the file the rows of the calls before; its
        state is that of the last accepted step (after the last row): restart from the file.
    """
    from kynemapy.run.loop import RunInfo, auto_block, open_writer
    from kynemapy.run.writer import unit_rows

    if not isinstance(control, StepControl):
        raise TypeError(f"run: control must be a kynemapy.StepControl, got {type(control).__name__}")
    resuming = (
        output is not None
        and sim.resume_path is not None
        and os.path.abspath(os.fspath(output)) == os.path.abspath(sim.resume_path)
    )
    if every is None:
        every = sim.resume_every if resuming and sim.resume_every is not None else 1
    if block is None:
        block = auto_block(sim.workspace.row_layout.width)
    for name, value in (("every", every), ("block", block)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"run: {name} must be an integer >= 1, got {value!r}")
    t_end = float(t_end)
    t0 = float(sim.time)
    if not math.isfinite(t_end) or t_end < t0:
        raise ValueError(f"run: t_end must be finite and >= the current time {t0} s, got {t_end!r}")
    if loads is not None and not callable(loads):
        raise TypeError(f"run: loads must be a callable loads(sim, t), got {type(loads).__name__}")
    if not sim.params.dynamic:
        raise ValueError("run: step-size control needs a dynamic simulation (StepParameters(dynamic=True))")
    unit = unit_rows(block)
    spacing = every * float(sim.params.h)
    # a t_end within round-off of the current time (a restart's sum of steps) leaves nothing to do,
    # as in advance_to
    times = np.zeros(0) if within_roundoff(t_end, t0) else output_grid(t0, t_end, spacing)
    writer = None
    if output is not None:
        attrs = {**(attrs or {}), "step_control": control_settings(control)}
        writer = open_writer(sim, output, every, unit, resuming, overwrite, attrs, step_control=True)
    committed_before = writer.committed if writer is not None else 0
    revolute = _revolute_rows(sim)
    bar = ProgressBar(max(1, times.size), spacing, unit="row") if progress else None
    start = _time.perf_counter()
    accepted = rejected = 0
    smallest = math.inf
    failure: ConvergenceError | None = None
    current = control
    finished = False
    try:
        pending: list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = []
        if writer is not None and writer.committed == 0:
            pending.append(_first_row(sim))
        # the state and inputs of the last row: the restart data of rows written after a failure
        row_state = sim.save_state(), tuple(np.array(a) for a in sim.inputs)
        done = 0
        while done < times.size:
            chunk = times[done : done + unit - (1 if pending else 0)]
            step_before = int(sim.step_count)
            share = (float(chunk[-1]) - float(sim.time)) / (t_end - t0)
            if control.scheme == "extrapolated" or control.scope == "run":
                # a tolerance for the whole run: each call gets its share of it
                current = dataclasses.replace(current, rtol=control.rtol * share, atol=control.atol * share)
            try:
                if control.scheme == "extrapolated":  # the velocities handed to the next call count too
                    horizon = min(t_end - float(chunk[-1]), HORIZON_SPANS * (float(chunk[-1]) - float(sim.time)))
                    result = extrapolation.advance_to(
                        sim, float(chunk[-1]), current, output_times=chunk, loads=loads, horizon=horizon
                    )
                else:
                    result = sim.advance_to(float(chunk[-1]), current, output_times=chunk, loads=loads)
            except ConvergenceError as error:
                failure = error
                break
            rows, columns = chunk_rows(sim, result, chunk, step_before, loads, revolute)
            sim.state.time[0] = chunk[-1]  # exactly on the grid (a sum of step sizes may be off by rounding)
            rows["time"][-1] = chunk[-1]
            accepted += int(result.accepted)
            rejected += int(result.rejected)
            if result.accepted:
                smallest = min(smallest, float(np.min(result.h)))
                current = dataclasses.replace(current, h_initial=_next_h(current, result))
            if writer is not None:
                pending.append((rows, columns))
                writer.append(
                    _joined([p[0] for p in pending]),
                    state=sim.state.copy(),
                    inputs=sim.inputs,
                    step_control=_joined([p[1] for p in pending]),
                )
                pending = []
            row_state = sim.save_state(), tuple(np.array(a) for a in sim.inputs)
            done += chunk.size
            if bar is not None:
                bar.update(done, sim.time)
        if writer is not None and pending:  # the first row of a run of no other (or that stopped in its first call)
            writer.append(
                _joined([p[0] for p in pending]),
                state=row_state[0],
                inputs=type(sim.inputs)(*row_state[1]),
                step_control=_joined([p[1] for p in pending]),
            )
        finished = True
    finally:
        if writer is not None:
            if finished:
                writer.close()
            else:
                try:
                    writer.close()
                except Exception:  # already raising
                    pass
        if bar is not None:
            bar.close(sim.time)
    info = RunInfo(
        steps=accepted,
        time=sim.time,
        rows=(writer.committed - committed_before) if writer is not None else 0,
        iterations_mean=0.0,
        iterations_max=0,
        substepped=0,
        wall_time=_time.perf_counter() - start,
        output=None if output is None else os.fspath(output),
        converged=failure is None,
        rejected=rejected + (1 if failure is not None else 0),
        min_step=smallest if smallest < math.inf else 0.0,
    )
    if failure is not None and throw:
        where = f"; {writer.committed} rows are in {writer.path!r}" if writer is not None else ""
        raise ConvergenceError(
            f"run: {failure}{where}", failure.time, failure.step, failure.errors, failure.status
        ) from failure
    return info


def _next_h(control: StepControl, run: Any) -> float:
    """The first step size of the next call [s]: the last full step of generalized-α (the last
    step of a call is cut to reach its end), twice the last call's step for the extrapolated
    scheme (its h does not grow within a call); within ``h_max``."""
    h = np.asarray(run.h)
    if control.scheme == "extrapolated":
        nxt = 2.0 * float(h[-1])
    else:
        nxt = float(h[-2]) if h.size >= 2 else float(h[-1])
    if control.h_max is not None:
        nxt = min(nxt, float(control.h_max))
    return nxt


__all__ = ["chunk_rows", "control_settings", "output_grid", "run"]
