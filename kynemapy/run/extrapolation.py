"""Richardson extrapolation of the generalized-α scheme: a fourth-order scheme for every model the
engine steps, with a global error estimate (docs/step-control.md, "The extrapolated scheme").

The same consistent state is integrated over the whole interval ``[t0, t_end]`` by Kynema's
generalized-α step three times, with the step sizes h, h/2 and h/4 (each one compiled call of
the engine, unchanged, recording the state at the multiples of h), and the three solutions are
combined at each multiple of h so that the h² and h³ terms of the global error cancel::

    T = w₁ y_h + w₂ y_{h/2} + w₄ y_{h/4},   (w₁, w₂, w₄) = (1, −12, 32)/21

(``Σ w = 1``, ``Σ w (h/n)² = 0``, ``Σ w (h/n)³ = 0``).  Displacements and velocities are combined
as vectors; rotations in the tangent space of the finest solution's rotation,
``r = exp(Σ w_n log(r_n ⊗ r_{h/4}⁻¹)) ⊗ r_{h/4}`` (the combination is linear in the chart, so
the cancellation holds to the order of the expansion).  This is *global* (passive) extrapolation:
the three integrations never restart from a combined state, because every restart excites the
spurious roots of generalized-α, whose transients do not follow the h-expansion (measured on the
heavy top: windows of 25 steps fell to order 2.8-2.9).  The estimate of the error is
the difference between T and the two-level combination ``(4 y_{h/2} − y_h)/3`` of the two finer
solutions (it eliminates h² only): a global error estimate at every multiple of h.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from kynemapy.engine.api import ConvergenceError
from kynemapy.engine.entry import ADVANCE
from kynemapy.engine.step import CONVERGED, NEEDS_MEMORY
from kynemapy.run.failure import failure_text
from kynemapy.run.stepcontrol import (
    ControlledRun,
    StepControl,
    checked_arguments,
    conjugate,
    dof_mask,
    hermite,
    quat_product,
    rotation_quaternions,
    rotation_vectors,
    stopped_error,
)

#: the step sizes of the levels, as divisions of the coarse step h
DIVISIONS = (1, 2, 4)
#: the powers of h whose terms the combination removes
POWERS = (2, 3)
#: the order in h of the error estimate, for the step-size prediction after a rejected call
ESTIMATE_ORDER = 4.0
#: the factor on h after a call whose Newton iteration failed somewhere
NEWTON_FAILURE_FACTOR = 0.5
#: a call with a smaller h whose estimate is above this fraction of the last one's has stalled
#: (the truncation error falls by (h_new/h_old)⁴ < 0.66); after MAX_STALLS of them the call with
#: the smallest estimate is kept (ControlledRun.fallback says so)
STALL_FACTOR = 0.5
MAX_STALLS = 2


def extrapolation_weights(divisions: Sequence[int], powers: Sequence[int]) -> np.ndarray:
    """The weights w that remove the given powers of h from ``Σ w_j y(h / n_j)``.

    Parameters
    ----------
    divisions : sequence of int
        The divisions n_j of the coarse step (step sizes h / n_j), one more than ``powers``.
    powers : sequence of int
        The powers of h to remove.

    Returns
    -------
    (L,) ndarray of float
        The weights (``Σ w = 1``, ``Σ w n_j^−p = 0`` for each p in ``powers``).
    """
    n = np.asarray(divisions, dtype=np.float64)
    if n.size != len(powers) + 1:
        raise ValueError(f"extrapolation_weights: {n.size} levels need {n.size - 1} powers, got {len(powers)}")
    matrix = np.vstack([np.ones_like(n), *[n ** (-float(p)) for p in powers]])
    rhs = np.zeros(n.size)
    rhs[0] = 1.0
    return np.linalg.solve(matrix, rhs)


def combine(q: np.ndarray, v: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Σ w_j`` of states on the Lie group, in the chart of the last level's rotations.

    Parameters
    ----------
    q : (L, ..., 7) ndarray of float
        The node states ``(u, r)`` of the L levels (any leading shape after L).
    v : (L, ..., 6) ndarray of float
        Their velocities [m/s, rad/s].
    weights : (L,) ndarray of float
        The weights (summing to 1).

    Returns
    -------
    q : (..., 7) ndarray of float
        The combined states (unit quaternions).
    v : (..., 6) ndarray of float
        The combined velocities.
    """
    w = np.asarray(weights, dtype=np.float64)
    shape = (-1,) + (1,) * (q.ndim - 1)
    u = np.sum(w.reshape(shape) * q[..., :3], axis=0)
    ref = q[-1, ..., 3:]
    phi = np.sum(w[:-1].reshape(shape) * rotation_vectors(quat_product(q[:-1, ..., 3:], conjugate(ref))), axis=0)
    r = quat_product(rotation_quaternions(phi), ref)
    return np.concatenate([u, r], axis=-1), np.sum(w.reshape(shape) * v, axis=0)


class ExtrapolatedRun(NamedTuple):
    """The solution of :func:`extrapolate` at the multiples of its step size.

    Attributes
    ----------
    time : (M + 1,) ndarray of float
        The grid ``t0 + k h`` [s], ``k = 0 … M``.
    q : (M + 1, N, 7) ndarray of float
        The extrapolated node states (displacement [m], rotation quaternion) on the grid.
    v : (M + 1, N, 6) ndarray of float
        The extrapolated velocities [m/s, rad/s].
    difference : (M + 1, N, 6) ndarray of float
        The estimate of the error: the extrapolated state minus the two-level combination of the
        two finer levels, per node DOF [m, rad] (rotations: the rotation vector).
    h : float
        The coarse step size [s].
    steps : int
        The generalized-α steps taken (7 M).
    iterations : int
        Their Newton iterations.
    """

    time: np.ndarray
    q: np.ndarray
    v: np.ndarray
    difference: np.ndarray
    h: float
    steps: int
    iterations: int


def _level(
    sim: Any, coefficients: np.ndarray, n_coarse: int, division: int, loads: Any = None, h: float = 0.0
) -> tuple[np.ndarray, int, int]:
    """Run ``n_coarse · division`` steps from the current state in compiled calls, recording the
    state at every ``division``-th step: ``(rows (n_coarse, width), iterations, status)``.  With
    ``loads(sim, t)``: one step at a time, ``loads`` called before each with the time at its end
    (``h`` the coarse step [s]; only q and v are recorded then)."""
    layout = sim.workspace.row_layout
    rows = np.zeros((n_coarse, layout.width))
    total = n_coarse * division
    iterations = np.zeros(total, dtype=np.int64)
    sim.state.step[0] = 0
    done = recorded = 0
    status = CONVERGED
    if loads is not None:
        t0 = float(sim.time)
        n_nodes = sim.state.q.shape[0]
        oq, ov = layout.offsets["q"], layout.offsets["v"]
        for k in range(total):
            # the time at the step's end: where generalized-α enforces the equations of motion,
            # so that the level's global error keeps the smooth expansion in h that extrapolation needs
            loads(sim, t0 + (k + 1) * (h / division))
            status, n_iter = sim.step_with(coefficients)
            iterations[k] = n_iter
            if status != CONVERGED:
                return rows[:recorded], int(iterations[:k].sum()), int(status)
            if (k + 1) % division == 0:
                rows[recorded, oq : oq + 7 * n_nodes] = sim.state.q.reshape(-1)
                rows[recorded, ov : ov + 6 * n_nodes] = sim.state.v.reshape(-1)
                recorded += 1
        return rows, int(iterations.sum()), int(status)
    while done < total:
        steps, got, status = sim._run(
            coefficients,
            ADVANCE,
            total - done,
            division,
            rows[recorded:],
            n_coarse - recorded,
            iterations[done:],
            sim._out,
        )
        done += steps
        recorded += got
        if status != NEEDS_MEMORY:
            break
        sim.grow_solver()
    return rows[:recorded], int(iterations[:done].sum()), int(status)


def _fields(layout: Any, rows: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    oq, ov = layout.offsets["q"], layout.offsets["v"]
    return rows[:, oq : oq + 7 * n_nodes].reshape(-1, n_nodes, 7), rows[:, ov : ov + 6 * n_nodes].reshape(
        -1, n_nodes, 6
    )


def extrapolate(
    sim: Any,
    t_end: float,
    h: float,
    divisions: Sequence[int] = DIVISIONS,
    loads: Callable[[Any, float], None] | None = None,
) -> ExtrapolatedRun:
    """Integrate from the current state to ``t_end`` with the extrapolated scheme (step h).

    The simulation is left in the finest level's final state; :func:`set_state` puts the
    extrapolated one in.  The algorithmic accelerations of each level start from consistent
    accelerations at the current state (:meth:`Simulation.compute_consistent_accelerations`).

    Parameters
    ----------
    sim : Simulation
        The simulation (dynamic; its ``params`` give ρ∞ and the Newton settings).
    t_end : float
        The end time [s] (> the current time).
    h : float
        The largest step size [s]: the coarse level's step, shortened so that a whole number M
        of steps reaches ``t_end``.
    divisions : sequence of int, default (1, 2, 4)
        The levels' step divisions: (1, 2, 4) integrates with h, h/2 and h/4 (order 4, the error
        estimate from the two finer levels); (1, 2) with h and h/2 (order 3 at least, 3 steps
        per h, its estimate far above the true error).  2 or 3 increasing integers >= 1.
    loads : callable or None, default None
        ``loads(sim, t)``: sets the inputs for the step that ends at t [s] (called before each
        step of each level with the time at its end, and at the start for the consistent
        accelerations).  The steps then run one at a time from Python (about 2 µs more each on the
        heavy top, plus what ``loads`` costs).

    Returns
    -------
    ExtrapolatedRun
        The extrapolated solution on the grid of the coarse steps and the estimate of its error.

    Raises
    ------
    ConvergenceError
        A step of one of the levels failed; the state is then the one at the start (with
        consistent accelerations and ``a = vd``).
    ValueError
        A static simulation, an h that is not a number > 0, a ``t_end`` not after the
        current time, or ``divisions`` not 2 or 3 increasing integers >= 1.
    """
    t0 = float(sim.time)
    if not sim.params.dynamic:
        raise ValueError(
            "extrapolate: the extrapolated scheme needs a dynamic simulation (StepParameters(dynamic=True))"
        )
    if (
        isinstance(h, bool)
        or not isinstance(h, (int, float, np.integer, np.floating))
        or not math.isfinite(h)
        or h <= 0
    ):
        raise ValueError(f"extrapolate: h must be a finite number > 0 s, got {h!r}")
    if not math.isfinite(float(t_end)) or float(t_end) <= t0:
        raise ValueError(f"extrapolate: t_end must be finite and after the current time {t0} s, got {t_end!r}")
    span = float(t_end) - t0
    n_coarse = max(1, math.ceil(span / h - 1e-9))
    h = span / n_coarse
    if loads is not None:
        loads(sim, t0)
    sim.compute_consistent_accelerations()
    sim.state.a[...] = sim.state.vd
    saved = sim.save_state()
    n_nodes = sim.state.q.shape[0]
    layout = sim.workspace.row_layout
    divisions = tuple(divisions)
    if not (
        len(divisions) in (2, 3)
        and all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in divisions)
        and divisions[0] >= 1
        and all(b > a for a, b in itertools.pairwise(divisions))
    ):
        raise ValueError(f"extrapolate: divisions must be 2 or 3 increasing integers >= 1, got {divisions!r}")
    qs = np.zeros((len(divisions), n_coarse + 1, n_nodes, 7))
    vs = np.zeros((len(divisions), n_coarse + 1, n_nodes, 6))
    steps = iterations = 0
    for j, division in enumerate(divisions):
        sim.restore_state(saved)
        coefficients = dataclasses.replace(sim.params, h=h / division).coefficients
        rows, its, status = _level(sim, coefficients, n_coarse, division, loads, h)
        steps += rows.shape[0] * division
        iterations += its
        if status != CONVERGED or rows.shape[0] != n_coarse:
            n_iter = sim.workspace.n_iter
            errors = tuple(float(e) for e in sim.workspace.errors[:n_iter])
            text = failure_text(sim, status, errors) if status != CONVERGED else "stopped early"
            failed_at = t0 + (rows.shape[0] + 1) * h
            sim.restore_state(saved)
            if loads is not None:
                loads(sim, t0)
            raise ConvergenceError(
                f"extrapolated scheme: a step of h = {h / division:.3g} s failed near t = {failed_at:.9g} s: {text}",
                t0,
                int(saved.step[0]),
                errors,
                int(status),
            )
        qs[j, 0], vs[j, 0] = saved.q, saved.v
        qs[j, 1:], vs[j, 1:] = _fields(layout, rows, n_nodes)
    powers = POWERS[: len(divisions) - 1]
    q, v = combine(qs, vs, extrapolation_weights(divisions, powers))
    q2, _ = combine(qs[1:], vs[1:], extrapolation_weights(divisions[1:], powers[:-1]))
    difference = np.concatenate(
        [q[..., :3] - q2[..., :3], rotation_vectors(quat_product(q[..., 3:], conjugate(q2[..., 3:])))], axis=-1
    )
    sim.state.step[0] = saved.step[0] + n_coarse
    return ExtrapolatedRun(
        time=t0 + h * np.arange(n_coarse + 1),
        q=q,
        v=v,
        difference=difference,
        h=h,
        steps=steps,
        iterations=iterations,
    )


def set_state(sim: Any, q: np.ndarray, v: np.ndarray, time: float) -> None:
    """Put an extrapolated state into the simulation: q, v (and x, q_prev) at ``time`` [s], then
    consistent accelerations and multipliers, and ``a = vd``.

    Parameters
    ----------
    sim : Simulation
        The simulation.
    q : (N, 7) ndarray of float
        Node states.
    v : (N, 6) ndarray of float
        Velocities [m/s, rad/s].
    time : float
        The time [s].
    """
    state = sim.state
    x0 = np.asarray(sim.model.x0)
    state.q[...] = q
    state.q_prev[...] = q
    state.v[...] = v
    state.x[:, :3] = x0[:, :3] + q[:, :3]
    state.x[:, 3:] = quat_product(q[:, 3:], x0[:, 3:])
    state.time[0] = time
    sim.compute_consistent_accelerations()
    state.a[...] = state.vd


def estimate_norms(control: Any, node_dofs: np.ndarray, run: ExtrapolatedRun) -> np.ndarray:
    """The weighted RMS norm of the estimated error at each grid point of ``run``.

    ``sqrt(mean((d / w)²))`` over the node DOFs (multipliers excluded), ``d`` the
    :attr:`ExtrapolatedRun.difference`, ``w = atol + rtol |u|`` for the displacements [m] and
    ``atol + rtol · 1 rad`` for the rotations (as :func:`kynemapy.run.stepcontrol.error_norm`).

    Parameters
    ----------
    control : kynemapy.StepControl
        The tolerances.
    node_dofs : (N,) ndarray of int
        The DOFs of each node.
    run : ExtrapolatedRun
        The extrapolated run.

    Returns
    -------
    (M + 1,) ndarray of float
        The norm at each grid point (0 where no node has DOFs).
    """
    mask = dof_mask(node_dofs)
    if not mask.any():
        return np.zeros(run.time.size)
    w = np.ones(run.difference.shape)
    w[..., :3] = np.abs(run.q[..., :3])
    w = control.atol + control.rtol * w
    ratio = np.where(mask, run.difference / w, 0.0)
    return np.sqrt(np.sum(ratio**2, axis=(1, 2)) / mask.sum())


def dense_output(run: ExtrapolatedRun, outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The extrapolated solution at ``outputs`` [s] by cubic Hermite interpolation between grid points.

    Parameters
    ----------
    run : ExtrapolatedRun
        The extrapolated run.
    outputs : (T,) ndarray of float
        Increasing times within ``run.time`` [s].

    Returns
    -------
    q : (T, N, 7) ndarray of float
        Node states at ``outputs``.
    v : (T, N, 6) ndarray of float
        Velocities at ``outputs``.
    """
    n_nodes = run.q.shape[1]
    q_out = np.zeros((outputs.size, n_nodes, 7))
    v_out = np.zeros((outputs.size, n_nodes, 6))
    t0, h, m = float(run.time[0]), run.h, run.time.size - 1
    k = np.clip(np.floor((outputs - t0) / h).astype(np.int64), 0, max(m - 1, 0))
    for interval in np.unique(k):
        pick = np.nonzero(k == interval)[0]
        if m == 0:
            q_out[pick], v_out[pick] = run.q[0], run.v[0]
            continue
        theta = np.clip((outputs[pick] - run.time[interval]) / h, 0.0, 1.0)
        q_out[pick], v_out[pick] = hermite(
            run.q[interval], run.v[interval], run.q[interval + 1], run.v[interval + 1], h, theta
        )
    return q_out, v_out


def advance_to(
    sim: Any,
    t_end: float,
    control: StepControl,
    output_times: Sequence[float] | np.ndarray | None = None,
    loads: Callable[[Any, float], None] | None = None,
) -> ControlledRun:
    """:meth:`kynemapy.Simulation.advance_to` with ``StepControl(scheme="extrapolated")`` (the
    arguments checked as for generalized-α; ``loads(sim, t)`` is called before each step with the
    time at its end: :func:`extrapolate`)."""
    t_end, outputs = checked_arguments(sim, t_end, control, output_times, loads)
    return advance_extrapolated(sim, t_end, control, outputs, loads)


def advance_extrapolated(
    sim: Any,
    t_end: float,
    control: StepControl,
    outputs: np.ndarray,
    loads: Callable[[Any, float], None] | None = None,
) -> ControlledRun:
    """:meth:`Simulation.advance_to` with ``StepControl(scheme="extrapolated")``.

    Parameters
    ----------
    sim : Simulation
        The simulation.
    t_end : float
        The end time [s].
    control : kynemapy.StepControl
        Tolerances and limits (``h_initial``, ``h_min``, ``h_max``, ``safety``, ``fac_min``,
        ``max_attempts``).
    outputs : (T,) ndarray of float
        The output times [s] (checked by the caller).
    loads : callable or None, default None
        ``loads(sim, t)``, as :func:`extrapolate` calls it.

    Returns
    -------
    ControlledRun
        One entry per coarse step (its end time, size and estimated global error there);
        ``rejected`` counts the calls redone with a smaller h.  When the estimate stops falling
        with h (MAX_STALLS calls with a smaller h that do not reduce it by STALL_FACTOR: the
        noise of the Newton solutions, amplified), the call with the smallest estimate is kept
        and ``fallback`` says so (its ``error`` is > 1 at some rows) instead of a
        ConvergenceError.
    """
    t0 = float(sim.time)
    span = t_end - t0
    n_nodes = sim.state.q.shape[0]
    if span <= 1e-12 * max(1.0, abs(t_end)):
        q_out = np.broadcast_to(sim.state.q, (outputs.size, n_nodes, 7)).copy()
        v_out = np.broadcast_to(sim.state.v, (outputs.size, n_nodes, 6)).copy()
        empty = np.zeros(0)
        return ControlledRun(
            empty,
            empty,
            empty,
            0,
            0,
            0,
            outputs.copy(),
            q_out,
            v_out,
            np.zeros(0, dtype="<U17"),
            rejections=np.zeros(0, dtype=np.int64),
        )
    h = float(control.h_initial if control.h_initial is not None else sim.params.h)
    h_min = float(control.h_min if control.h_min is not None else 1e-10 * h)
    h = min(max(h, h_min), control.h_max if control.h_max is not None else math.inf, span)
    node_dofs = np.asarray(sim.model.node_dofs)
    rejected = newton_failures = 0
    start = sim.save_state()
    previous: float | None = None  # the estimate of the last call that converged
    stalls = 0
    best: tuple[ExtrapolatedRun, np.ndarray, float] | None = None  # the call with the smallest estimate
    note = ""
    run: ExtrapolatedRun | None = None
    failure: ConvergenceError | None = None
    for _attempt in range(control.max_attempts):
        try:
            run = extrapolate(sim, t_end, h, loads=loads)
        except ConvergenceError as error:
            failure = error
            rejected += 1
            newton_failures += 1
            h *= NEWTON_FAILURE_FACTOR
        else:
            norms = estimate_norms(control, node_dofs, run)
            err = float(norms.max())
            if err <= 1.0:
                break
            rejected += 1
            if best is None or err < best[2]:
                best = (run, norms, err)
            if previous is not None and err > STALL_FACTOR * previous:
                stalls += 1  # a smaller h and no smaller estimate: noise, not truncation error
                if stalls >= MAX_STALLS:
                    run, norms, err = best
                    rejected -= 1  # the kept call was counted as redone
                    note = (
                        f"the estimated error stopped falling with h ({stalls} calls with a smaller h did not "
                        "halve it): it is the noise of the Newton solutions (StepParameters atol/rtol) or "
                        "round-off, which extrapolation amplifies, not the truncation error; the call with the "
                        f"smallest estimate is kept: h = {run.h:.3g} s, {err:.3g} × the tolerance at most "
                        f"(largest at t = {float(run.time[int(np.argmax(norms))]):.6g} s), above the tolerance at "
                        f"{int(np.sum(norms > 1.0))} of {run.time.size - 1} grid points (ControlledRun.error > 1 there)"
                    )
                    break
            previous = err
            # the estimate (the two-level combination's error) falls like h⁴ on the heavy top and the
            # hinged double pendulum (ρ∞ = 0.9; its h³ term is small there): exponent 1/4
            h = run.h * max(control.fac_min, min(0.9, control.safety * err ** (-1.0 / ESTIMATE_ORDER)))
            sim.restore_state(start)
            run = None
        if h < h_min:
            raise stopped_error(
                sim, t0, h, failure.status if failure is not None else None, "at the smallest step size h_min"
            )
    if run is None:
        raise stopped_error(
            sim,
            t0,
            h,
            failure.status if failure is not None else None,
            f"after {control.max_attempts} attempts (max_attempts)",
        )
    q_out, v_out = dense_output(run, outputs)
    if loads is not None:
        loads(sim, t_end)  # the inputs at the end: the consistent accelerations there
    set_state(sim, run.q[-1], run.v[-1], t_end)
    m = run.time.size - 1
    sim.state.step[0] = start.step[0] + m
    return ControlledRun(
        time=run.time[1:].copy(),
        h=np.full(m, run.h),
        error=norms[1:].copy(),
        accepted=m,
        rejected=rejected,
        newton_failures=newton_failures,
        output_times=outputs.copy(),
        q=q_out,
        v=v_out,
        scheme=np.full(m, "extrapolated"),
        fallback=note,
        rejections=np.concatenate([[rejected], np.zeros(m - 1, dtype=np.int64)]).astype(np.int64),
    )
