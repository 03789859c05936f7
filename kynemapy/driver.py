"""The run driver behind :meth:`Simulation.run` and :func:`simulate`.

Steps in blocks: without time-dependent loads the steps of a block run inside one
compiled call (:func:`kynemapy.rollout.advance_kernel`) that fills the record
buffers; with a ``loads(sim, t)`` callback the loop is in Python, one compiled step
at a time.  Each full block of rows is appended to the HDF5 file with the restart
state, so a killed run loses at most one block.  The initial state is row 0 of a
new file, then every ``every``-th step, and the last step of the run.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time as _time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kynemapy.invariants import system_invariants
from kynemapy.progress import ProgressBar
from kynemapy.rollout import Record, advance_kernel, new_record
from kynemapy.step import CONVERGED, NEEDS_MEMORY

if TYPE_CHECKING:
    from kynemapy.simulation import Simulation

LoadFunction = Callable[["Simulation", float], None]


class RunInfo(NamedTuple):
    """Summary of one :meth:`Simulation.run`.

    steps : steps taken; time : simulated time at the end [s]; rows : rows written to
    the file in this run; iterations_mean, iterations_max : Newton iterations per step;
    substepped : steps that needed adaptive sub-stepping; wall_time [s]; output : file path
    (or None); converged : False when the run stopped at a failed step (``throw=False``).
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


#: target size of one block of output rows [bytes]: large blocks amortise HDF5's per-write cost
BLOCK_BYTES = 8 * 1024 * 1024


def auto_block(model: Any) -> int:
    """Rows per output block: about :data:`BLOCK_BYTES` of rows, between 64 and 16384."""
    row_bytes = 8 * (6 + 27 * model.n_nodes + 9 * model.n_constraints + 8)
    return int(max(64, min(16384, BLOCK_BYTES // row_bytes)))


def steps_to(sim: Simulation, t_end: float | None, n_steps: int | None) -> int:
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


def _record_python(sim: Simulation, n_iter: int, rec: Record, row: int) -> None:
    s = sim.state
    rec.time[row] = s.time[0]
    rec.step[row] = s.step[0]
    rec.q[row] = s.q
    rec.v[row] = s.v
    rec.vd[row] = s.vd
    rec.a[row] = s.a
    rec.lam[row] = s.lam
    rec.constraint_output[row] = s.constraint_output
    rec.iterations[row] = n_iter
    rec.error[row] = sim.workspace.errors[n_iter - 1] if n_iter > 0 else 0.0
    m, ws = sim.model, sim.workspace
    system_invariants(m.mass_node, m.mass_m_star, m.x0, m.gravity, s.q, s.v, ws.s4, ws.s33, ws.s66, ws.inv)
    rec.kinetic_energy[row] = ws.inv[0]
    rec.potential_energy[row] = ws.inv[1]
    rec.linear_momentum[row] = ws.inv[2:5]
    rec.angular_momentum[row] = ws.inv[5:8]


def _rows(rec: Record, n: int) -> dict[str, np.ndarray]:
    return {name: arr[:n] for name, arr in zip(Record._fields, rec, strict=True)}


class _Stepper:
    """One macro step of size h, with optional adaptive halving on failure."""

    def __init__(self, sim: Simulation, adaptive: bool, max_halvings: int) -> None:
        self.sim = sim
        self.adaptive = adaptive
        self.max_halvings = max_halvings
        self.substepped = 0
        self._coefficients: dict[int, Any] = {}

    def coefficients(self, level: int) -> Any:
        if level not in self._coefficients:
            params = self.sim.params
            self._coefficients[level] = dataclasses.replace(params, h=params.h / 2**level).coefficients
        return self._coefficients[level]

    def step(self) -> tuple[int, int]:
        """Take one step of size h; returns ``(status, n_iter)`` (state restored on failure)."""
        status, n_iter = self.sim._raw_step(self.sim._coefficients)
        if status == CONVERGED or not self.adaptive:
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
        self.sim.state.time[0] = t0 + self.sim.params.h
        return status, n_iter

    def _halves(self, level: int) -> tuple[int, int]:
        p = self.coefficients(level)
        total = 0
        status = CONVERGED
        for _ in range(2):
            status, n_iter = self.sim._raw_step(p)
            total += n_iter
            if status != CONVERGED:
                if level >= self.max_halvings:
                    return status, total
                status, n_iter = self._halves(level + 1)
                total += n_iter
                if status != CONVERGED:
                    return status, total
        return status, total


def run(
    sim: Simulation,
    *,
    t_end: float | None = None,
    n_steps: int | None = None,
    output: str | os.PathLike[str] | None = None,
    every: int = 1,
    block: int | None = None,
    progress: bool = False,
    loads: LoadFunction | None = None,
    adaptive: bool = False,
    max_halvings: int = 6,
    throw: bool = True,
    attrs: dict[str, Any] | None = None,
) -> RunInfo:
    """See :meth:`kynemapy.Simulation.run`."""
    from kynemapy.io.hdf5 import ResultWriter
    from kynemapy.simulation import ConvergenceError, status_text

    n_total = steps_to(sim, t_end, n_steps)
    if block is None:
        block = auto_block(sim.model)
    for name, value in (("every", every), ("block", block), ("max_halvings", max_halvings)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"run: {name} must be an integer >= 1, got {value!r}")
    if loads is not None and not callable(loads):
        raise TypeError(f"run: loads must be a callable loads(sim, t), got {type(loads).__name__}")

    writer = None
    if output is not None:
        path = os.fspath(output)
        try:
            if sim.resume_path is not None and os.path.abspath(path) == os.path.abspath(sim.resume_path):
                writer = ResultWriter.reopen(path, sim.model, sim.params, block=block)
            else:
                writer = ResultWriter(path, sim.model, sim.params, block=block, attrs=attrs)
        except OSError as exc:
            raise OSError(f"run: cannot write the output file {path!r}: {exc}") from exc
    start = _time.perf_counter()
    rec = new_record(sim.model, block if writer is not None else 0)
    chunk_cap = block * every if writer is not None else 65536
    iter_buf = np.zeros(chunk_cap, dtype=np.int64)
    stepper = _Stepper(sim, adaptive, max_halvings)
    bar = ProgressBar(n_total, sim.params.h) if progress else None
    done = 0
    rows_written = 0
    it_sum = 0
    it_max = 0
    failure: tuple[int, tuple[float, ...]] | None = None
    n_rows = 0
    try:
        if writer is not None and writer.committed == 0:
            _record_python(sim, 0, rec, 0)
            writer.append(_rows(rec, 1), state=sim.state, inputs=sim.inputs)
            rows_written += 1
        while done < n_total:
            n_rows = 0
            # rows until the file's next chunk boundary: every full append then fills
            # exactly one HDF5 chunk per dataset (no partial chunk read back and rewritten)
            row_cap = block - writer.committed % block if writer is not None else 0
            if loads is None and sim.jit_enabled:
                # compiled chunk: up to the chunk boundary in rows, or up to the next multiple of `every`
                chunk = min(n_total - done, row_cap * every if writer is not None else chunk_cap)
                steps, n_rows, status = advance_kernel(
                    sim.model,
                    sim.state,
                    sim.inputs,
                    sim.workspace,
                    sim._coefficients,
                    chunk,
                    every if writer is not None else 0,
                    iter_buf,
                    rec,
                    max(row_cap, 1),
                )
                it_sum += int(iter_buf[:steps].sum())
                it_max = max(it_max, int(iter_buf[:steps].max(initial=0)))
                done += steps
                if status == NEEDS_MEMORY:
                    sim._grow_lu()  # the sparse factors outgrew their arrays; the step is redone next round
                elif status != CONVERGED:
                    status, n_iter = stepper.step() if adaptive else (status, int(sim.workspace.n_iter[0]))
                    if status != CONVERGED:
                        failure = (status, tuple(float(e) for e in sim.workspace.errors[:n_iter]))
                    else:
                        done += 1
                        it_sum += n_iter
                        it_max = max(it_max, n_iter)
                        if writer is not None and sim.step_count % every == 0:
                            _record_python(sim, n_iter, rec, n_rows)
                            n_rows += 1
            else:
                # Python loop: loads(sim, t) before every step
                limit = min(n_total - done, row_cap * every if writer is not None else chunk_cap)
                for _ in range(limit):
                    if loads is not None:
                        loads(sim, sim.time)
                    status, n_iter = stepper.step()
                    if status != CONVERGED:
                        failure = (status, tuple(float(e) for e in sim.workspace.errors[:n_iter]))
                        break
                    done += 1
                    it_sum += n_iter
                    it_max = max(it_max, n_iter)
                    if writer is not None and sim.step_count % every == 0:
                        _record_python(sim, n_iter, rec, n_rows)
                        n_rows += 1
                        if n_rows == row_cap:
                            break
            last_row_step = int(rec.step[n_rows - 1]) if n_rows else -1
            if writer is not None and (failure is not None or done == n_total) and sim.step_count != last_row_step:
                # the run ends (or stops) off the output cadence: its last state is a row too
                if n_rows == row_cap:
                    writer.append(_rows(rec, n_rows), state=sim.state, inputs=sim.inputs)
                    rows_written += n_rows
                    n_rows = 0
                if sim.step_count != (int(rec.step[n_rows - 1]) if n_rows else -1) and done > 0:
                    _record_python(sim, int(sim.workspace.n_iter[0]), rec, n_rows)
                    n_rows += 1
            if writer is not None and n_rows:
                writer.append(_rows(rec, n_rows), state=sim.state, inputs=sim.inputs)
                rows_written += n_rows
            if bar is not None:
                bar.update(done, sim.time)
            if failure is not None:
                break
    finally:
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close(sim.time)
    wall = _time.perf_counter() - start
    info = RunInfo(
        steps=done,
        time=sim.time,
        rows=rows_written,
        iterations_mean=it_sum / done if done else 0.0,
        iterations_max=it_max,
        substepped=stepper.substepped,
        wall_time=wall,
        output=None if output is None else os.fspath(output),
        converged=failure is None,
    )
    if failure is not None and throw:
        status, errors = failure
        raise ConvergenceError(
            f"run stopped at step {sim.step_count + 1} (t = {sim.time:.9g} s → {sim.time + sim.params.h:.9g} s): "
            f"{status_text(status)}; Newton errors {', '.join(f'{e:.3g}' for e in errors)}; "
            f"the state is that of the last converged step"
            + (f"; {writer.committed} rows are in {os.fspath(output)!r}" if writer is not None else ""),
            sim.time,
            sim.step_count,
            errors,
            status,
        )
    return info
