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
the cancellation holds to the order of the expansion), all grid points and nodes in one compiled
call (:func:`combine_kernel`; the numpy form took 0.86 of 3.3 ms on the heavy top at h = 6.6 ms,
the kernel 0.04 ms).  The levels run with the simulation's ``StepParameters``; with
``predictor="last"`` (the controller's choice from a tolerance of 1e-4 up,
:func:`newton_parameters`) their steps take fewer Newton iterations (docs/step-control.md).
This is *global* (passive) extrapolation: the three integrations never restart from a combined
state, because every restart excites the spurious roots of generalized-α, whose transients do
not follow the h-expansion (measured on the heavy top: windows of 25 steps fell to order
2.8-2.9).  The estimate of the error is
the difference between T and the two-level combination ``(4 y_{h/2} − y_h)/3`` of the two finer
solutions (it eliminates h² only): a global error estimate at every multiple of h.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.api import ConvergenceError
from kynemapy.engine.entry import ADVANCE
from kynemapy.engine.params import with_step
from kynemapy.engine.step import CONVERGED, RESUMABLE
from kynemapy.math.quaternion import quat_exp
from kynemapy.math.quaternion import quat_product as hamilton_product
from kynemapy.run.failure import failure_text
from kynemapy.run.stepcontrol import (
    ControlledRun,
    StepControl,
    checked_arguments,
    dof_mask,
    hermite,
    quat_product,
    stopped_error,
    within_roundoff,
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
#: a call redone after a Newton failure integrates again from its start, at twice the cost of
#: the last: after this many failures in a row near the same time (within the first failed
#: call's coarse step) the run stops with a ConvergenceError (h divided by 2**8 = 256 there;
#: a load of 1e300 N made the halvings run for hours before)
MAX_NEWTON_FAILURES = 8
#: the first h of a controlled call (h_initial None): the pilot's coarse steps, the share of the
#: interval they may cover at most (1/PILOT_SHARE), and the largest growth of h it may give
PILOT_STEPS = 4
PILOT_SHARE = 8
PILOT_MAX_GROWTH = 8.0
#: a first h that the pilot grew and whose Newton iteration fails goes back towards the pilot's
#: own h (whose steps converged) by geometric means, ``√(h · h_pilot)``, and to h_pilot itself
#: once that is within this factor of it; only below h_pilot do failures halve h (and count
#: towards MAX_NEWTON_FAILURES).  Halving instead took the heavy top from 10 ms at tol 1e-2
#: back to 10 ms (20 ms failed) and at tol 1e-1 to 8.85 ms (35.4 and 17.7 ms failed): a looser
#: tolerance cost more than a tighter one
PILOT_BACKOFF = 1.25
#: ``StepControl(newton="auto")``: from this tolerance up the levels start each Newton iteration
#: from the last step's v̇ and λ (predictor="last"); below it the Newton error that the start
#: leaves is amplified by the extrapolation (docs/step-control.md)
LAST_PREDICTOR_FROM = 1e-4
#: why a call of this scheme is rejected (its estimate is of the global error, not a local one)
GLOBAL_ESTIMATE_CAUSE = "the estimated global error exceeds the tolerance"


def newton_parameters(params: Any, control: StepControl) -> Any:
    """The ``StepParameters`` the extrapolated scheme's levels step with.

    ``control.newton == "params"``, or tol (the smaller of ``control.atol`` and
    ``control.rtol``) below 1e-4: ``params`` unchanged.  ``"auto"`` from tol = 1e-4 up: the
    last step's v̇ and λ start each Newton iteration (``predictor="last"``); the Newton
    tolerances and the tangent stay the simulation's.  Measured (docs/step-control.md,
    "Newton settings from the tolerance"): the heavy top at tol 1e-3 in 1.75 instead of 2.23
    Newton iterations a step, the same error; the double four-bar's errors unchanged.  Looser
    Newton tolerances as well were tried and not kept: with Kynema's inexact tangent the
    double four-bar then ended 4.8 and 8.4 × the tolerance off at 3e-3 and 1e-4.

    Parameters
    ----------
    params : StepParameters
        The simulation's settings.
    control : kynemapy.StepControl
        The tolerances and the ``newton`` mode.

    Returns
    -------
    StepParameters
        ``params`` itself when nothing changes, else a copy with ``predictor="last"``.
    """
    tol = min(float(control.atol), float(control.rtol))
    if control.newton == "params" or tol < LAST_PREDICTOR_FROM or params.predictor == "last":
        return params
    return dataclasses.replace(params, predictor="last")


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
    if len(divisions) != len(powers) + 1:
        raise ValueError(
            f"extrapolation_weights: {len(divisions)} levels need {len(divisions) - 1} powers, got {len(powers)}"
        )
    return _weights(tuple(float(n) for n in divisions), tuple(float(p) for p in powers)).copy()


@functools.lru_cache(maxsize=32)
def _weights(divisions: tuple[float, ...], powers: tuple[float, ...]) -> np.ndarray:
    """:func:`extrapolation_weights`, solved once per sequence (0.06 ms a solve, two per call)."""
    n = np.asarray(divisions, dtype=np.float64)
    matrix = np.vstack([np.ones_like(n), *[n ** (-p) for p in powers]])
    rhs = np.zeros(n.size)
    rhs[0] = 1.0
    return np.linalg.solve(matrix, rhs)


@njit(inline=True)
def _log(w, x, y, z):
    """Log map of a unit quaternion: its rotation vector [rad] (angle in [0, π]; q and −q alike)."""
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    w = min(w, 1.0)
    s = math.sqrt(x * x + y * y + z * z)
    scale = 2.0 * math.atan2(s, w) / s if s > 1e-12 else 2.0
    return x * scale, y * scale, z * scale


@njit
def combine_kernel(qs, vs, weights, q, v):
    """``Σ w_j`` of L states on the Lie group, in the chart of the last level's rotations, into
    ``q`` and ``v``.

    Parameters
    ----------
    qs : (L, P, 7) ndarray of float
        The node states ``(u [m], r)`` of the L levels at P points (grid points × nodes).
    vs : (L, P, 6) ndarray of float
        Their velocities [m/s, rad/s].
    weights : (L,) ndarray of float
        The weights (summing to 1).
    q : (P, 7) ndarray of float
        Out: the combined states (unit quaternions).
    v : (P, 6) ndarray of float
        Out: the combined velocities.
    """
    n_levels = qs.shape[0]
    last = n_levels - 1
    for i in range(qs.shape[1]):
        for k in range(3):
            u = 0.0
            for j in range(n_levels):
                u += weights[j] * qs[j, i, k]
            q[i, k] = u
        for k in range(6):
            rate = 0.0
            for j in range(n_levels):
                rate += weights[j] * vs[j, i, k]
            v[i, k] = rate
        rw, rx, ry, rz = qs[last, i, 3], qs[last, i, 4], qs[last, i, 5], qs[last, i, 6]
        p0 = p1 = p2 = 0.0
        for j in range(last):
            # r_j ⊗ r_ref⁻¹, its log, weighted
            dw, dx, dy, dz = hamilton_product(qs[j, i, 3], qs[j, i, 4], qs[j, i, 5], qs[j, i, 6], rw, -rx, -ry, -rz)
            l0, l1, l2 = _log(dw, dx, dy, dz)
            p0 += weights[j] * l0
            p1 += weights[j] * l1
            p2 += weights[j] * l2
        ew, ex, ey, ez = quat_exp(p0, p1, p2)
        q[i, 3], q[i, 4], q[i, 5], q[i, 6] = hamilton_product(ew, ex, ey, ez, rw, rx, ry, rz)


@njit
def difference_kernel(q, q2, out):
    """The difference of two sets of node states per node DOF: ``u − u₂`` [m] and the rotation
    vector of ``r ⊗ r₂⁻¹`` [rad].

    Parameters
    ----------
    q, q2 : (P, 7) ndarray of float
        Node states ``(u, r)``.
    out : (P, 6) ndarray of float
        Out: the differences.
    """
    for i in range(q.shape[0]):
        for k in range(3):
            out[i, k] = q[i, k] - q2[i, k]
        dw, dx, dy, dz = hamilton_product(q[i, 3], q[i, 4], q[i, 5], q[i, 6], q2[i, 3], -q2[i, 4], -q2[i, 5], -q2[i, 6])
        out[i, 3], out[i, 4], out[i, 5] = _log(dw, dx, dy, dz)


def combine(q: np.ndarray, v: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Σ w_j`` of states on the Lie group, in the chart of the last level's rotations.

    Displacements and velocities as vectors; rotations ``r = exp(Σ w_j log(r_j ⊗ r_L⁻¹)) ⊗ r_L``
    (one compiled call, :func:`combine_kernel`).

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
    q = np.ascontiguousarray(q, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    shape = q.shape[1:-1]
    q_out = np.empty((*shape, 7))
    v_out = np.empty((*shape, 6))
    combine_kernel(
        q.reshape(q.shape[0], -1, 7),
        v.reshape(v.shape[0], -1, 6),
        np.ascontiguousarray(weights, dtype=np.float64),
        q_out.reshape(-1, 7),
        v_out.reshape(-1, 6),
    )
    return q_out, v_out


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
    velocity_difference: np.ndarray | None = None


def _level(
    sim: Any,
    coefficients: np.ndarray,
    n_coarse: int,
    division: int,
    loads: Callable[[Any, float], None] | None = None,
    t0: float = 0.0,
    h: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Run ``n_coarse · division`` steps of size ``h / division`` from the current state,
    recording the node states at every ``division``-th step: ``(q (K, N, 7), v (K, N, 6),
    iterations, status)``, K the coarse steps done (``n_coarse`` when all converged).

    Without ``loads``: compiled calls.  With it: one compiled step at a time, ``loads(sim, t)``
    called before each with the time t at the step's end, ``t0 + k h / division`` (the time at
    which generalized-α's equilibrium is evaluated, so that the global error keeps its
    h-expansion)."""
    n_nodes = sim.state.q.shape[0]
    total = n_coarse * division
    sim.state.step[0] = 0
    if loads is not None:
        q = np.zeros((n_coarse, n_nodes, 7))
        v = np.zeros((n_coarse, n_nodes, 6))
        iterations = 0
        status = CONVERGED
        for k in range(1, total + 1):
            loads(sim, t0 + k * (h / division))
            status, its = sim.step_with(coefficients)
            iterations += int(its)
            if status != CONVERGED:
                return q[: (k - 1) // division], v[: (k - 1) // division], iterations, int(status)
            if k % division == 0:
                q[k // division - 1], v[k // division - 1] = sim.state.q, sim.state.v
        return q, v, iterations, int(status)
    layout = sim.workspace.row_layout
    rows = np.zeros((n_coarse, layout.width))
    iters = np.zeros(total, dtype=np.int64)
    done = recorded = 0
    status = CONVERGED
    while done < total:
        steps, got, status = sim._run(
            coefficients,
            ADVANCE,
            total - done,
            division,
            rows[recorded:],
            n_coarse - recorded,
            iters[done:],
            sim._out,
        )
        done += steps
        recorded += got
        if status not in RESUMABLE:
            break
        sim.provide(status)
    q, v = _fields(layout, rows[:recorded], n_nodes)
    return q, v, int(iters[:done].sum()), int(status)


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
    params: Any = None,
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
        ``loads(sim, t)``: sets loads varying in time (:meth:`Simulation.set_load`), called with
        the start time before the consistent accelerations and then before every step of every
        level with the time t [s] at the step's *end*, where generalized-α evaluates its
        equilibrium (the levels then run one compiled step at a time).  A load of time alone
        keeps the fourth order; a load that reads the state sees the state at the step's start
        (an O(h) lag the extrapolation does not remove).
    params : StepParameters or None, default None
        The settings the levels step with (their ``h`` replaced by each level's step), e.g.
        :func:`newton_parameters`; None: the simulation's ``params``.  The consistent
        accelerations at the start use the simulation's own.

    Returns
    -------
    ExtrapolatedRun
        The extrapolated solution on the grid of the coarse steps and the estimate of its error.

    Raises
    ------
    ConvergenceError
        A step of one of the levels failed; the state is then the one at the start (with
        consistent accelerations and ``a = vd``), as after any exception raised inside (by
        ``loads``, or an interrupt).  Its attribute ``failed_at`` [s] is the end of the coarse
        step in which the step failed.
    ValueError
        A static simulation, an h that is not a number > 0, a ``t_end`` not after the
        current time, or ``divisions`` not 2 or 3 increasing integers >= 1.
    TypeError
        ``loads`` is not callable.
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
    if loads is not None and not callable(loads):
        raise TypeError(f"extrapolate: loads must be a callable loads(sim, t), got {type(loads).__name__}")
    span = float(t_end) - t0
    n_coarse = max(1, math.ceil(span / h - 1e-9))
    h = span / n_coarse
    if loads is not None:
        loads(sim, t0)
    sim.compute_consistent_accelerations()
    state = sim.state
    state.a[...] = state.vd
    saved = sim.save_state()  # read back whole only (its arrays' views are not made: 0.1 ms)
    q_start, v_start, step_start = state.q.copy(), state.v.copy(), int(state.step[0])
    n_nodes = q_start.shape[0]
    divisions = tuple(divisions)
    if not (
        len(divisions) in (2, 3)
        and all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in divisions)
        and divisions[0] >= 1
        and all(b > a for a, b in itertools.pairwise(divisions))
    ):
        raise ValueError(f"extrapolate: divisions must be 2 or 3 increasing integers >= 1, got {divisions!r}")
    base = (sim.params if params is None else params).coefficients  # each level's from it: with_step
    qs = np.zeros((len(divisions), n_coarse + 1, n_nodes, 7))
    vs = np.zeros((len(divisions), n_coarse + 1, n_nodes, 6))
    steps = iterations = 0
    for j, division in enumerate(divisions):
        sim.restore_state(saved)
        coefficients = with_step(base, h / division)
        sim.check_coefficients(coefficients)
        try:
            q_level, v_level, its, status = _level(sim, coefficients, n_coarse, division, loads, t0, h)
        except BaseException:  # a loads function that raised, an interrupt: back to the start
            sim.restore_state(saved)
            raise
        steps += q_level.shape[0] * division
        iterations += its
        if status != CONVERGED or q_level.shape[0] != n_coarse:
            n_iter = sim.workspace.n_iter
            errors = tuple(float(e) for e in sim.workspace.errors[:n_iter])
            text = failure_text(sim, status, errors) if status != CONVERGED else "stopped early"
            failed_at = t0 + (q_level.shape[0] + 1) * h
            sim.restore_state(saved)
            error = ConvergenceError(
                f"extrapolated scheme: a step of h = {h / division:.3g} s failed near t = {failed_at:.9g} s: {text}",
                t0,
                step_start,
                errors,
                int(status),
            )
            error.failed_at = failed_at
            raise error
        qs[j, 0], vs[j, 0] = q_start, v_start
        qs[j, 1:], vs[j, 1:] = q_level, v_level
    powers = POWERS[: len(divisions) - 1]
    q, v = combine(qs, vs, extrapolation_weights(divisions, powers))
    q2, v2 = combine(qs[1:], vs[1:], extrapolation_weights(divisions[1:], powers[:-1]))
    difference = np.empty((n_coarse + 1, n_nodes, 6))
    difference_kernel(q.reshape(-1, 7), q2.reshape(-1, 7), difference.reshape(-1, 6))
    sim.state.step[0] = step_start + n_coarse
    return ExtrapolatedRun(
        time=t0 + h * np.arange(n_coarse + 1),
        q=q,
        v=v,
        difference=difference,
        h=h,
        velocity_difference=v[-1] - v2[-1],
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


def estimate_norms(control: Any, node_dofs: np.ndarray, run: ExtrapolatedRun, horizon: float = 0.0) -> np.ndarray:
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

    horizon : float, default 0
        [s] > 0: the run goes on for about this long after ``run`` (another call follows), and
        the velocity error handed on counts too: at the last grid point the norm is the larger
        of the position estimate's and that of ``velocity_difference · horizon``, weighed as
        displacements and rotations.

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
    norms = np.sqrt(np.sum(ratio**2, axis=(1, 2)) / mask.sum())
    if horizon > 0.0 and run.velocity_difference is not None:
        seam = np.where(mask, run.velocity_difference * horizon / w[-1], 0.0)
        norms[-1] = max(norms[-1], float(np.sqrt(np.sum(seam**2) / mask.sum())))
    return norms


def interpolation_norms(control: Any, node_dofs: np.ndarray, run: ExtrapolatedRun, outputs: np.ndarray) -> np.ndarray:
    """The weighted RMS norm of the estimated error of the dense output, per grid interval.

    The cubic Hermite interpolation of :func:`dense_output` errs by at most
    ``h⁴ |y⁗| / 384`` inside an interval (at its middle); ``h³ y⁗`` is estimated by the third
    difference of the velocities at four neighbouring grid points (the interval's own two and one
    on either side, shifted inwards at the ends), so the estimate per node DOF is
    ``h |Δ³v| / 384`` [m, rad], measured as :func:`estimate_norms` measures the global error.

    Parameters
    ----------
    control : kynemapy.StepControl
        The tolerances.
    node_dofs : (N,) ndarray of int
        The DOFs of each node.
    run : ExtrapolatedRun
        The extrapolated run (at least 3 coarse steps; with fewer, zeros).
    outputs : (T,) ndarray of float
        The output times [s].

    Returns
    -------
    (M + 1,) ndarray of float
        Entry k: the norm for the interval that ends at grid point k, where an output time lies
        strictly inside it (0 elsewhere, and at k = 0).
    """
    m = run.time.size - 1
    norms = np.zeros(m + 1)
    mask = dof_mask(node_dofs)
    if m < 3 or outputs.size == 0 or not mask.any():
        return norms
    tol = 1e-9 * run.h
    k = np.floor((outputs - run.time[0]) / run.h).astype(np.int64)
    inside = (k >= 0) & (k < m)
    inside &= np.abs(outputs - (run.time[0] + k * run.h)) > tol
    inside &= np.abs(outputs - (run.time[0] + (k + 1) * run.h)) > tol
    intervals = np.unique(k[inside])
    if intervals.size == 0:
        return norms
    j = np.clip(intervals - 1, 0, m - 3)
    v = run.v
    third = v[j + 3] - 3.0 * v[j + 2] + 3.0 * v[j + 1] - v[j]
    w = np.ones((intervals.size, *run.v.shape[1:]))
    w[..., :3] = np.maximum(np.abs(run.q[intervals, :, :3]), np.abs(run.q[intervals + 1, :, :3]))
    w = control.atol + control.rtol * w
    ratio = np.where(mask, (run.h / 384.0) * np.abs(third) / w, 0.0)
    norms[intervals + 1] = np.sqrt(np.sum(ratio**2, axis=(1, 2)) / mask.sum())
    return norms


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


def pilot_step(
    sim: Any,
    control: StepControl,
    node_dofs: np.ndarray,
    h: float,
    t_end: float,
    params: Any,
    loads: Callable[[Any, float], None] | None = None,
) -> float:
    """The first h of a controlled call whose ``h_initial`` the user left to the control.

    A first h far below what the tolerance needs is never grown by the control (a call within
    the tolerance is accepted): a pilot of :data:`PILOT_STEPS` coarse steps of ``h`` from the
    current state, when they cover at most 1/:data:`PILOT_SHARE` of the interval, estimates the
    error there; grown linearly in time to the interval's end, it predicts the factor
    ``safety · err^(−1/4)`` by which h could grow, and h grows by half that factor, at most
    :data:`PILOT_MAX_GROWTH`, where that is at least 2 (else h is kept: the pilot cost at most
    1/PILOT_SHARE of the call).  A pilot that fails keeps h.  The state is left changed (the
    caller restores it).

    Parameters
    ----------
    sim : Simulation
        The simulation, at the start of the call.
    control : kynemapy.StepControl
        Tolerances and ``safety``.
    node_dofs : (N,) ndarray of int
        Each node's degrees of freedom (the estimate's norm).
    h : float
        The first h [s] (the simulation's ``params.h``).
    t_end : float
        The end of the call [s].
    params : StepParameters
        The levels' settings (:func:`newton_parameters`).
    loads : callable or None, default None
        As for :func:`extrapolate`.

    Returns
    -------
    float
        The first h [s]: ``h`` or larger.
    """
    span = t_end - float(sim.time)
    if span < PILOT_SHARE * PILOT_STEPS * h:
        return h
    try:
        pilot = extrapolate(sim, float(sim.time) + PILOT_STEPS * h, h, loads=loads, params=params)
    except ConvergenceError:
        return h
    err = float(estimate_norms(control, node_dofs, pilot).max()) * span / (PILOT_STEPS * h)
    factor = control.safety * err ** (-1.0 / ESTIMATE_ORDER) if err > 0.0 else math.inf
    growth = min(PILOT_MAX_GROWTH, 0.5 * factor)
    return h * growth if growth >= 2.0 else h


def advance_to(
    sim: Any,
    t_end: float,
    control: StepControl,
    output_times: Sequence[float] | np.ndarray | None = None,
    loads: Callable[[Any, float], None] | None = None,
    horizon: float = 0.0,
) -> ControlledRun:
    """:meth:`kynemapy.Simulation.advance_to` with ``StepControl(scheme="extrapolated")`` (the
    arguments checked as for generalized-α; ``loads`` as :func:`extrapolate` calls it: with the
    time at the end of each step; ``horizon`` [s] as :func:`advance_extrapolated` says)."""
    t_end, outputs = checked_arguments(sim, t_end, control, output_times, loads)
    return advance_extrapolated(sim, t_end, control, outputs, loads, horizon)


def advance_extrapolated(
    sim: Any,
    t_end: float,
    control: StepControl,
    outputs: np.ndarray,
    loads: Callable[[Any, float], None] | None = None,
    horizon: float = 0.0,
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
        ``loads(sim, t)``, called as :func:`extrapolate` says (t at the end of each step).
    horizon : float, default 0
        [s] > 0: another call follows for about this long, and the estimate of the velocities
        handed to it counts too (:func:`estimate_norms`; :func:`kynemapy.run.controlled.run`).

    Returns
    -------
    ControlledRun
        One entry per coarse step (its end time, size and estimated error: the global error
        there, or the interpolation error of an output inside the step, the larger);
        ``rejected`` counts the calls redone with a smaller h.  When the estimate stops falling
        with h (MAX_STALLS calls with a smaller h that do not reduce it by STALL_FACTOR: the
        noise of the Newton solutions, amplified), the call with the smallest estimate is kept
        and ``fallback`` says so (its ``error`` is > 1 at some rows) instead of a
        ConvergenceError.
    """
    t0 = float(sim.time)
    span = t_end - t0
    n_nodes = sim.state.q.shape[0]
    if within_roundoff(t_end, t0):  # nothing to do
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
    h_max = min(control.h_max if control.h_max is not None else math.inf, span)
    if np.any((outputs > t0 + 1e-9 * span) & (outputs < t_end - 1e-9 * span)):
        h_max = min(h_max, span / 3.0)  # outputs inside: 3 coarse steps at least, for the interpolation estimate
    h = min(max(h, h_min), h_max)
    node_dofs = np.asarray(sim.model.node_dofs)
    level_params = newton_parameters(sim.params, control)
    start = sim.save_state()
    try:
        pilot_h = None
        if control.h_initial is None:
            grown = min(pilot_step(sim, control, node_dofs, h, t_end, level_params, loads), h_max)
            sim.restore_state(start)
            if grown > h:
                pilot_h, h = h, grown
        return _controlled_calls(
            sim, t_end, control, outputs, loads, h, h_min, node_dofs, level_params, start, horizon, pilot_h
        )
    except BaseException:  # a loads function that raised, an interrupt: the state at the start
        sim.restore_state(start)
        raise


def _controlled_calls(
    sim: Any,
    t_end: float,
    control: StepControl,
    outputs: np.ndarray,
    loads: Callable[[Any, float], None] | None,
    h: float,
    h_min: float,
    node_dofs: np.ndarray,
    level_params: Any,
    start: Any,
    horizon: float = 0.0,
    pilot_h: float | None = None,
) -> ControlledRun:
    """The calls of :func:`advance_extrapolated` from its first ``h`` on (the state ``start``
    saved at the beginning), until one is accepted; ``pilot_h``: the h the pilot grew the first
    h from (None: not grown), the floor of the back-off after Newton failures
    (:data:`PILOT_BACKOFF`)."""
    t0 = float(start.time[0])
    rejected = newton_failures = 0
    previous: float | None = None  # the estimate of the last call that converged
    stalls = 0
    best: tuple[ExtrapolatedRun, np.ndarray, float] | None = None  # the call with the smallest estimate
    note = ""
    run: ExtrapolatedRun | None = None
    failure: ConvergenceError | None = None
    streak: tuple[int, float, float] | None = None  # Newton failures in a row: (count, first time, its h)
    for _attempt in range(control.max_attempts):
        tried = h
        at_h_min = h <= h_min * (1.0 + 1e-12)
        try:
            run = extrapolate(sim, t_end, h, loads=loads, params=level_params)
        except ConvergenceError as error:
            failure = error
            rejected += 1
            newton_failures += 1
            if pilot_h is not None and h > pilot_h:  # back towards the pilot's h, whose steps converged
                h = math.sqrt(h * pilot_h)
                if h < PILOT_BACKOFF * pilot_h:
                    h = pilot_h
                continue
            failed_at = float(getattr(error, "failed_at", t0))
            if streak is None or failed_at > streak[1] + streak[2]:
                streak = (1, failed_at, h)  # the first failure, or one later than the last ones
            else:
                streak = (streak[0] + 1, streak[1], streak[2])
            if streak[0] >= MAX_NEWTON_FAILURES:
                raise stopped_error(
                    sim,
                    t0,
                    h,
                    failure.status,
                    f"after {streak[0]} calls whose Newton iteration failed near t = {streak[1]:.9g} s, the "
                    f"step size halved each time from {streak[2]:.3g} s",
                ) from None
            h *= NEWTON_FAILURE_FACTOR
        else:
            failure = None
            streak = None
            norms = np.maximum(
                estimate_norms(control, node_dofs, run, horizon), interpolation_norms(control, node_dofs, run, outputs)
            )
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
            if at_h_min:
                raise stopped_error(
                    sim,
                    t0,
                    tried,
                    failure.status if failure is not None else None,
                    "at the smallest step size h_min",
                    cause=None if failure is not None else GLOBAL_ESTIMATE_CAUSE,
                )
            h = h_min  # h_min itself is tried once, as the generalized-α control does
    if run is None:
        raise stopped_error(
            sim,
            t0,
            h,
            failure.status if failure is not None else None,
            f"after {control.max_attempts} attempts (max_attempts)",
            cause=None if failure is not None else GLOBAL_ESTIMATE_CAUSE,
        )
    q_out, v_out = dense_output(run, outputs)
    if loads is not None:
        loads(sim, t_end)  # the consistent accelerations at the end with the load there
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
