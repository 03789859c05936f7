"""The run driver behind :meth:`Simulation.run` and :func:`simulate`.

Without time-dependent loads the steps run inside compiled calls
(:meth:`Simulation.advance_rows`, the engine's ``advance``) of about :data:`CALL_SECONDS`
each that record rows into the current output buffer; with a ``loads(sim, t)`` callback
the loop is in Python, one compiled step at a time.  Full buffers of rows (half a block
each) are appended to the HDF5 file, with the restart state, by a background thread
(:mod:`kynemapy.run.writer`) while the stepping goes on, so a killed run loses
fewer than ``block`` rows.  This module owns the run loop; it uses only the public
methods of the simulation it is given.  The rows are the initial state (new file), every
``every``-th step, and the last step of the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import time as _time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from kynemapy.engine.api import ConvergenceError, task
from kynemapy.engine.entry import RECORD
from kynemapy.engine.step import CONVERGED, RESUMABLE
from kynemapy.run.failure import failure_text
from kynemapy.run.hooks import keepers, recorded_groups, recorders
from kynemapy.run.progress import ProgressBar
from kynemapy.run.writer import BackgroundWriter, unit_rows

#: ``loads(sim, t)``: sets the inputs of ``sim`` (a :class:`kynemapy.Simulation`) before the step at time t [s]
LoadFunction = Callable[[Any, float], None]


class RunInfo(NamedTuple):
    """Summary of one :meth:`Simulation.run`.

    Attributes
    ----------
    steps : int
        Steps taken.
    time : float
        Simulated time at the end [s].
    rows : int
        Rows written to the file in this run.
    iterations_mean : float
        Mean Newton iterations per step.
    iterations_max : int
        Most Newton iterations of one step.
    substepped : int
        Steps that needed adaptive sub-stepping.
    wall_time : float
        Wall-clock time of the run [s].
    output : str or None
        The result file's path (None when nothing was recorded).
    converged : bool
        False when the run stopped at a failed step (``throw=False``).
    rejected : int
        Step attempts that failed (a failed step of h, and each failed sub-step), the last
        one of a stopped run included.
    min_step : float
        The smallest step size [s] with which a step or sub-step converged (h when none was
        halved; 0.0 when no step converged).
    """

    steps: int
    time: float
    rows: int
    iterations_mean: float
    iterations_max: int
    substepped: int
    wall_time: float
    output: str | None
    converged: bool
    rejected: int = 0
    min_step: float = 0.0


#: target size of one block of output rows [bytes] (written as two buffers of half a block; a killed
#: run loses less than a block)
BLOCK_BYTES = 4 * 1024 * 1024
#: wall time one compiled call of the run loop aims at [s] (progress bar and Ctrl-C stay responsive)
CALL_SECONDS = 0.25
#: steps of the first compiled call (it measures the cost of a step) and of any call at most
FIRST_CALL_STEPS = 16
MAX_CALL_STEPS = 1 << 16


def auto_block(row_width: int) -> int:
    """Rows per output block: about :data:`BLOCK_BYTES` of rows (``row_width`` floats each), between 64 and 16384."""
    row_bytes = 8 * int(row_width)
    return int(max(64, min(16384, BLOCK_BYTES // row_bytes)))


def steps_to(sim: Any, t_end: float | None, n_steps: int | None) -> int:
    """Number of steps of size h from the current time to ``t_end`` [s], or ``n_steps``."""
    if (t_end is None) == (n_steps is None):
        raise ValueError("run: give exactly one of t_end [s] or n_steps")
    if n_steps is not None:
        if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
            raise ValueError(f"run: n_steps must be an integer >= 0, got {n_steps!r}")
        return int(n_steps)
    t_end = float(t_end)  # type: ignore[arg-type]
    if not math.isfinite(t_end):
        raise ValueError(f"run: t_end must be finite, got {t_end!r}")
    remaining = (t_end - sim.time) / sim.params.h
    if remaining < -1e-9:
        raise ValueError(f"run: t_end = {t_end} s is before the current time {sim.time} s")
    n = round(remaining)
    return int(n) if abs(remaining - n) < 1e-9 * max(1.0, abs(remaining)) else math.ceil(remaining)


def _spacing(k: int) -> str:
    """``every step``, ``every 2nd step``, ``every 5th step``: the recorded steps in words."""
    if k == 1:
        return "every step"
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"every {k}{suffix} step"


def next_time(t: float, h: float) -> float:
    """The time after a step of ``h`` from ``t`` [s], as the compiled step computes it
    (:func:`kynemapy.engine.step.next_time`): ``(k + 1) h`` on the grid ``t = k h``, else ``t + h``."""
    k = float(round(t / h))
    return (k + 1.0) * h if k * h == t else t + h


class _Stepper:
    """One macro step of size h, with optional adaptive halving on failure; counts the rejected
    step attempts and the smallest step size that converged."""

    def __init__(self, sim: Any, adaptive: bool, max_halvings: int, min_step: float) -> None:
        self.sim = sim
        self.adaptive = adaptive
        self.max_halvings = max_halvings
        self.min_step = min_step
        self.substepped = 0
        self.rejected = 0
        self.smallest = math.inf  # smallest step size of a converged step or sub-step [s]
        self.at_min_step = False  # the last failure stopped at the smallest step size allowed
        self.failed_step = 0.0  # that step size [s]
        self.h = sim.params.h
        #: coefficient vectors of the sub-step sizes h / 2**level (level 0, h itself, is the simulation's own)
        self._coefficients: dict[int, Any] = {}

    def coefficients(self, level: int) -> Any:
        if level not in self._coefficients:
            params = self.sim.params
            self._coefficients[level] = dataclasses.replace(params, h=params.h / 2**level).coefficients
        return self._coefficients[level]

    def can_halve(self, level: int) -> bool:
        """May a step of h / 2**level be retried as two of h / 2**(level + 1)?"""
        return level < self.max_halvings and self.sim.params.h / 2 ** (level + 1) >= self.min_step

    def step(self, failed: int = CONVERGED) -> tuple[int, int]:
        """Take one step of size h; returns ``(status, n_iter)`` (state restored on failure).
        ``failed``: the status of that step just tried at h (the compiled loop's); only retry it."""
        if failed == CONVERGED:
            status, n_iter = self.sim.step_with()
            if status == CONVERGED:
                if self.h < self.smallest:
                    self.smallest = self.h
                return status, n_iter
        else:
            status, n_iter = failed, self.sim.workspace.n_iter
        self.rejected += 1
        self.at_min_step = False
        if not self.adaptive:
            return status, n_iter
        if not self.can_halve(0):
            self.at_min_step, self.failed_step = True, self.sim.params.h
            return status, n_iter
        saved = self.sim.state.copy()
        t0, step0 = float(self.sim.state.time[0]), int(self.sim.state.step[0])
        status, n_iter = self._halves(1)
        if status != CONVERGED:
            self.sim.state.assign(saved)
            return status, n_iter
        self.substepped += 1
        # one macro step, whatever the sub-steps: counters as an ordinary step would leave them
        self.sim.state.step[0] = step0 + 1
        self.sim.state.time[0] = next_time(t0, self.sim.params.h)
        return status, n_iter

    def _halves(self, level: int) -> tuple[int, int]:
        p = self.coefficients(level)
        total = 0
        status = CONVERGED
        for _ in range(2):
            status, n_iter = self.sim.step_with(p)
            total += n_iter
            if status == CONVERGED:
                self.smallest = min(self.smallest, self.sim.params.h / 2**level)
                continue
            self.rejected += 1
            if not self.can_halve(level):
                self.at_min_step, self.failed_step = True, self.sim.params.h / 2**level
                return status, total
            status, n_iter = self._halves(level + 1)
            total += n_iter
            if status != CONVERGED:
                return status, total
        return status, total


def open_writer(
    sim: Any,
    output: str | os.PathLike[str],
    every: int,
    unit: int,
    resuming: bool,
    overwrite: bool,
    attrs: dict[str, Any] | None,
    *,
    defer_layout: bool = False,
    step_control: bool = False,
) -> Any:
    """The :class:`kynemapy.io.hdf5.ResultWriter` of a run (new, or the continued file), its lock taken.

    A new file gets the kinds' recorded columns its model has (:func:`kynemapy.run.hooks.recorded_groups`:
    a model with hard contact the ``/hard_contact`` columns, :mod:`kynemapy.run.hard_rows`); a
    continued file keeps what it has (a file written before those columns existed goes on without them).

    Raises ``ValueError`` for a continued file with another spacing or another kind of rows
    (fixed steps or step control), ``FileExistsError`` for an existing file not continued
    without ``overwrite``, and ``OSError`` naming the file when it cannot be written.
    """
    from kynemapy.io.hdf5 import ResultWriter
    from kynemapy.io.lock import FileInUseError, WriterLock
    from kynemapy.io.paths import file_path, output_file

    path = file_path(output, "run: output")
    if resuming and sim.resume_every is not None and every != sim.resume_every:
        raise ValueError(
            f"run: {path} records {_spacing(sim.resume_every)}; continuing it with every = {every} "
            f"would mix two spacings in one file: leave every out (command line: --every) to continue "
            f"with the file's {sim.resume_every}, or write to a new file"
        )
    if resuming and bool(getattr(sim, "resume_step_control", False)) != step_control:
        raise ValueError(
            f"run: {path} holds the rows of a "
            + (
                "step-controlled run (its /step_control columns); continue it with run(..., control=...)"
                if not step_control
                else "run of fixed steps; continuing it with control would mix fixed and step-controlled rows: "
                "continue it without control"
            )
            + ", or write to a new file"
        )
    if not resuming:
        try:
            output_file(path, "output file")  # a folder, or a folder that takes no files: said now
        except OSError as exc:
            raise type(exc)(f"run: {exc}") from None
    try:
        lock = WriterLock(path, "run")  # a file another live process writes: refused here, untouched
    except FileInUseError:
        raise
    except OSError as exc:
        raise OSError(f"run: cannot write the output file {path!r}: {exc}") from exc
    try:
        if not resuming and not overwrite and os.path.lexists(path):
            raise FileExistsError(
                f"run: the output file {path!r} exists; pass overwrite=True (command line: --overwrite) to "
                f"replace it, or continue it: Simulation.restart({path!r}).run(...) (command line: --resume)"
            )
        if resuming:
            return ResultWriter.reopen(path, sim.model, sim.params, block=unit, lock=lock)
        return ResultWriter(
            path,
            sim.model,
            sim.params,
            block=unit,
            attrs=attrs,
            defer_layout=defer_layout,
            every=every,
            lock=lock,
            step_control=step_control,
            **recorded_groups(step_control),  # the kinds' columns (a model without them gets no group)
        )
    except FileExistsError:
        lock.release()
        raise
    except OSError as exc:
        lock.release()
        raise OSError(f"run: cannot write the output file {path!r}: {exc}") from exc
    except BaseException:
        lock.release()
        raise


def run(
    sim: Any,
    *,
    t_end: float | None = None,
    n_steps: int | None = None,
    output: str | os.PathLike[str] | None = None,
    every: int | None = None,
    block: int | None = None,
    progress: bool = False,
    loads: LoadFunction | None = None,
    adaptive: bool = False,
    max_halvings: int = 6,
    min_step: float | None = None,
    throw: bool = True,
    attrs: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> RunInfo:
    """See :meth:`kynemapy.Simulation.run` (``sim`` is a :class:`kynemapy.Simulation`)."""
    n_total = steps_to(sim, t_end, n_steps)
    resuming = (
        output is not None
        and sim.resume_path is not None
        and os.path.abspath(os.fspath(output)) == os.path.abspath(sim.resume_path)
    )
    if every is None:  # a continued file keeps its own spacing
        every = sim.resume_every if resuming and sim.resume_every is not None else 1
    if block is None:
        block = auto_block(sim.workspace.row_layout.width)
    for name, value in (("every", every), ("block", block), ("max_halvings", max_halvings)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"run: {name} must be an integer >= 1, got {value!r}")
    if min_step is None:
        min_step = sim.params.h / 2**max_halvings
    if isinstance(min_step, bool) or not isinstance(min_step, (int, float)) or not (0.0 < min_step <= sim.params.h):
        raise ValueError(f"run: min_step must be a number in (0, h = {sim.params.h}] s, got {min_step!r}")
    if loads is not None and not callable(loads):
        raise TypeError(f"run: loads must be a callable loads(sim, t), got {type(loads).__name__}")

    out: BackgroundWriter | None = None
    if output is not None:
        unit = unit_rows(block)
        writer = open_writer(sim, output, every, unit, resuming, overwrite, attrs, defer_layout=block >= 2)
        try:
            out = BackgroundWriter(
                writer,
                sim.data,
                sim.workspace.row_layout,
                unit,
                threaded=block >= 2,
                recorders=recorders(sim, writer),
                keepers=keepers(sim) if writer.restart else None,
            )
        except BaseException:
            writer.close()
            raise
    committed_before = out.writer.committed if out is not None else 0
    start = _time.perf_counter()
    iter_buf = np.zeros(MAX_CALL_STEPS, dtype=np.int64)
    no_rows = np.zeros((0, 1))
    call_steps = FIRST_CALL_STEPS
    stepper = _Stepper(sim, adaptive, max_halvings, float(min_step))
    bar = ProgressBar(n_total, sim.params.h) if progress else None
    done = 0
    it_sum = 0
    it_max = 0
    failure: tuple[int, tuple[float, ...]] | None = None
    at_boundary = True  # the state is that of a whole converged step (not between sub-steps)
    finished = False

    def record_python(n_iter: int) -> None:
        assert out is not None
        task(sim.data, sim.coefficients, RECORD, n_iter, out.fill, out.buffer)
        out.record_columns(0)
        out.added(1)
        if out.room() == 0:
            out.submit(sim.state, sim.inputs)

    def finish_rows() -> None:
        """The run ends (or stops) off the output cadence: its last state is a row too; submit."""
        assert out is not None
        if done > 0 and sim.step_count != out.last_step:
            record_python(sim.workspace.n_iter)
        out.submit(sim.state, sim.inputs)

    try:
        if out is not None and out.writer.committed == 0:
            record_python(0)  # row 0: the initial state
        while done < n_total and failure is None:
            if loads is None and sim.jit_enabled:
                # compiled call: a number of steps aiming at CALL_SECONDS of wall time, and it
                # stops by itself when the current buffer is full
                chunk = min(n_total - done, call_steps)
                t_call = _time.perf_counter()
                steps, n_rows, status = sim.advance_rows(
                    chunk,
                    every if out is not None else 0,
                    out.view() if out is not None else no_rows,
                    out.room() if out is not None else 0,
                    iter_buf,
                    on_row=out.record_columns if out is not None and out.records_columns else None,
                )
                elapsed = _time.perf_counter() - t_call
                if steps:
                    call_steps = int(min(MAX_CALL_STEPS, max(1.0, CALL_SECONDS * steps / max(elapsed, 1e-9))))
                    it_sum += int(iter_buf[:steps].sum())
                    it_max = max(it_max, int(iter_buf[:steps].max()))
                    stepper.smallest = min(stepper.smallest, sim.params.h)
                done += steps
                if out is not None:
                    out.added(n_rows)
                    if out.room() == 0:
                        out.submit(sim.state, sim.inputs)
                if status in RESUMABLE:
                    sim.provide(status)  # larger sparse factors or the joint unit with drives: redone next round
                elif status != CONVERGED:
                    at_boundary = False
                    status, n_iter = stepper.step(failed=status)
                    at_boundary = True
                    if status != CONVERGED:
                        failure = (status, tuple(float(e) for e in sim.workspace.errors[:n_iter]))
                    else:
                        done += 1
                        it_sum += n_iter
                        it_max = max(it_max, n_iter)
                        if out is not None and sim.step_count % every == 0:
                            record_python(n_iter)
            else:
                # Python loop: loads(sim, t) before every step
                while done < n_total:
                    if loads is not None:
                        loads(sim, sim.time)
                    at_boundary = False
                    status, n_iter = stepper.step()
                    at_boundary = True
                    if status != CONVERGED:
                        failure = (status, tuple(float(e) for e in sim.workspace.errors[:n_iter]))
                        break
                    done += 1
                    it_sum += n_iter
                    it_max = max(it_max, n_iter)
                    if out is not None and sim.step_count % every == 0:
                        record_python(n_iter)
                    if bar is not None:
                        bar.update(done, sim.time)
            if bar is not None:
                bar.update(done, sim.time)
        if out is not None:
            finish_rows()
        finished = True
    except BaseException:
        # interrupted (Ctrl-C, an exception in loads): keep the rows computed so far when the
        # state is a whole step and the current buffer is not in the writer's hands
        if out is not None and at_boundary and out.can_submit():
            with contextlib.suppress(Exception):
                finish_rows()
        raise
    finally:
        if out is not None:
            out.close(raise_errors=finished)
        if bar is not None:
            bar.close(sim.time)
    wall = _time.perf_counter() - start
    info = RunInfo(
        steps=done,
        time=sim.time,
        rows=out.writer.committed - committed_before if out is not None else 0,
        iterations_mean=it_sum / done if done else 0.0,
        iterations_max=it_max,
        substepped=stepper.substepped,
        rejected=stepper.rejected,
        min_step=stepper.smallest if stepper.smallest < math.inf else 0.0,
        wall_time=wall,
        output=None if output is None else os.fspath(output),
        converged=failure is None,
    )
    if failure is not None and throw:
        status, errors = failure
        raise ConvergenceError(
            f"run stopped at step {sim.step_count + 1} (t = {sim.time:.9g} s → {sim.time + sim.params.h:.9g} s): "
            f"{failure_text(sim, status, errors)}; "
            + (
                f"the smallest step size allowed ({stepper.failed_step:.3g} s; max_halvings = {max_halvings}, "
                f"min_step = {min_step:.3g} s) failed too; "
                if adaptive and stepper.at_min_step
                else ""
            )
            + "the state is that of the last converged step"
            + (f"; {out.writer.committed} rows are in {out.writer.path!r}" if out is not None else ""),
            sim.time,
            sim.step_count,
            errors,
            status,
        )
    return info
