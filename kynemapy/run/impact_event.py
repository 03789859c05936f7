"""Impact-time location for the hard joint limits and the points against hard ground planes.

The decoupled nonsmooth step (:mod:`kynemapy.run.joint_stops`) finds an impact at the end of the
step in which a point crossed its plane (a joint passed its stop) and applies Newton's law with the
normal velocity at the start of that step: first order at the impact (the velocity is off by up to
``a h``, the impact up to h late).  Here, when after a converged smooth step from ``(q_n, v_n)`` a
point (a stop) that was open at the start (gap > 1e-12 m, or 1e-12 rad relative) is closed or crossed
at the end, and no point or stop was closed at the start (the clean case; bodies already touching
keep the step as it was):

1. the impact time is estimated from the gaps and their rates at both ends of the step: the first
   root of the cubic Hermite interpolant ``g(t_n + s h)`` shifted by a small target penetration
   (:data:`PENETRATION`, so that the sub-step surely closes the point; exact for free flight, where
   the gap is a quadratic in time and the smooth scheme is exact), ``θ = s`` clipped to
   ``[THETA_MIN, 1]``, the earliest over the crossing points and stops;
2. the state is put back to the step's start and a smooth step of ``θ h`` taken; the correction
   there applies Newton's law with the velocity at the end of that sub-step, the velocity at the
   impact;
3. a smooth step of the remaining ``h − θ h`` and the usual correction (Newton's law with the
   velocity after the impact) end the step on the original time grid: the time is set to the one
   step of h gives (``next_time(t_n, h)``), the step counter to one more than at the start.

A sub-step that still leaves an open point crossing is located again in the rest of the step (at
most :data:`MAX_CUTS` cuts a step).  A sub-step whose Newton solve fails puts back the whole
step's smooth result and corrects it as before.  The impulses reported for a split step are the
sums over its corrections.  The generalized-α algorithmic acceleration ``a`` is the smooth
scheme's, carried through the sub-steps unchanged (it is the same for a free flight: ``a = v̇``
under constant loads).

Not applied (the step is corrected as before): models with hard contact between bodies
(:mod:`kynemapy.run.hard_bodies`), statics, models with prescribed displacements or rotation
controls (their inputs are positions at the step's end, not to be reached within θ h), steps that
start with a point or a stop closed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq

from kynemapy._jit import njit
from kynemapy.engine.entry import ADVANCE
from kynemapy.engine.params import (
    P_ALPHA_F,
    P_ALPHA_M,
    P_BETA,
    P_BETA_PRIME,
    P_CONDITIONER,
    P_DYNAMIC,
    P_GAMMA,
    P_GAMMA_PRIME,
    P_H,
)
from kynemapy.engine.step import CONVERGED, next_time
from kynemapy.model import kinds
from kynemapy.run.hard_contact import contact_geometry

#: the smallest fraction of a step (of what is left of it) a sub-step may take [-]
THETA_MIN = 1.0e-6
#: the penetration the first sub-step aims at [m, or rad relative to max(1, |limit|)], so that the
#: point surely closes in it (round-off or the sub-step's own error would otherwise leave it a
#: hair open); the position correction takes it back: its effect on Newton's law is ``a η / v*``
PENETRATION = 1.0e-12
#: the most cuts of one step (a point still open after its sub-step is located again)
MAX_CUTS = 3
#: the closed-gap tolerance of the start [m, or rad relative] (joint_stops.GAP_TOLERANCE)
OPEN_TOLERANCE = 1.0e-12


@njit
def stop_passed(output: np.ndarray, cid: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> bool:
    """Whether a joint is at or past one of its hard limits.

    Parameters
    ----------
    output : (C, 3) ndarray of float
        The state's constraint outputs (angle [rad] or travel [m] first).
    cid : (K,) ndarray of int64
        The limited joints' constraint ids.
    lower, upper : (K,) ndarray of float
        Their limits [rad or m].

    Returns
    -------
    bool
        True when ``output[cid[i], 0] <= lower[i]`` or ``>= upper[i]`` for some i.
    """
    for i in range(cid.shape[0]):
        value = output[cid[i], 0]
        if value <= lower[i] or value >= upper[i]:
            return True
    return False


def sub_coefficients(p: np.ndarray, h: float) -> np.ndarray:
    """The coefficient vector of a step of size ``h`` [s] with the scheme and Newton settings of ``p``
    (the entries that depend on h as :attr:`StepParameters.coefficients` computes them).

    Parameters
    ----------
    p : (P_SIZE,) ndarray of float
        The coefficient vector of the full step (dynamic).
    h : float
        The sub-step's size [s].

    Returns
    -------
    (P_SIZE,) ndarray of float
        A new vector.
    """
    out = p.copy()
    alpha_m, alpha_f, gamma, beta = p[P_ALPHA_M], p[P_ALPHA_F], p[P_GAMMA], p[P_BETA]
    out[P_H] = h
    out[P_GAMMA_PRIME] = gamma / (h * beta)
    out[P_BETA_PRIME] = (1.0 - alpha_m) / (h * h * beta * (1.0 - alpha_f))
    out[P_CONDITIONER] = beta * h * h
    return out


def hermite_root(g0: float, d0: float, g1: float, d1: float, h: float, target: float) -> float:
    """The first s in [0, 1] where the cubic Hermite interpolant of a gap reaches ``target``.

    Parameters
    ----------
    g0, g1 : float
        The gap at the start and at the end of the interval [m or rad]; ``g0 > target``.
    d0, d1 : float
        Its rates there [m/s or rad/s].
    h : float
        The interval's length [s].
    target : float
        The value sought [m or rad] (a small negative penetration).

    Returns
    -------
    float
        s (1.0 when the interpolant stays above ``target`` on [0, 1]).
    """
    c0 = g0 - target
    c1 = h * d0
    c2 = -3.0 * g0 - 2.0 * h * d0 + 3.0 * g1 - h * d1
    c3 = 2.0 * g0 + h * d0 - 2.0 * g1 + h * d1

    def cubic(s: float) -> float:
        return ((c3 * s + c2) * s + c1) * s + c0

    # the first sign change on a grid of eight, then Brent's method to round-off
    left = 0.0
    for k in range(1, 9):
        right = k / 8.0
        if cubic(right) <= 0.0:
            if cubic(left) <= 0.0:
                return left
            return float(brentq(cubic, left, right, xtol=1e-16, rtol=4.0 * np.finfo(float).eps))
        left = right
    return 1.0


class ImpactEvents:
    """Splits a step at the first impact of an open point or stop (see the module's text).

    Parameters
    ----------
    sim : kynemapy.Simulation
        The simulation.
    stops : kynemapy.run.joint_stops.JointStops
        Its hard limits and contact points.
    smooth_run : callable
        The engine's run entry bound to the simulation's data (``run(p, task, n, every, rows,
        max_rows, iterations, out)``).
    no_rows : ndarray
        The empty rows array of a call that records none.
    iters1 : (1,) ndarray of int64
        The iteration counter of one step.
    out : ndarray of float
        The entry's output scratch.

    Attributes
    ----------
    enabled : bool
        Whether the model's steps are located at all (False: bodies' hard contact, prescribed
        displacements or rotation controls).
    cuts : int
        The cuts of the last step (0: not split; its other attributes are then those of the last
        split step).
    theta : float
        The fraction of the step before the last impact [-] (nan before any).
    impact_time : float
        The time of the last impact located [s] (nan before any).
    v_before, v_after : (N, 6) ndarray of float
        The velocities just before and just after the last impact's correction [m/s, rad/s].
    rate_before, rate_after : (K,) ndarray of float
        The stops' joint rates just before and just after it [rad/s or m/s].
    """

    def __init__(self, sim: Any, stops: Any, smooth_run: Any, no_rows: np.ndarray, iters1: np.ndarray, out: Any):
        self.sim, self.stops, self.smooth_run = sim, stops, smooth_run
        self.no_rows, self.iters1, self.out = no_rows, iters1, out
        kind = np.asarray(sim.model.constraint_kind)
        driven = bool(np.any((kind == kinds.PRESCRIBED_BC) | (kind == kinds.ROTATION_CONTROL)))
        self.enabled = stops.bodies is None and not driven
        self.cuts = 0
        self.theta = float("nan")
        self.impact_time = float("nan")
        state = sim.state
        n_nodes, k_stops = state.v.shape[0], stops.cid.size
        self.v_before, self.v_after = np.zeros((n_nodes, 6)), np.zeros((n_nodes, 6))
        self.rate_before, self.rate_after = np.zeros(k_stops), np.zeros(k_stops)
        stops.events = self
        self._start = state.copy()  # the step's start
        self._end = state.copy()  # the full step's smooth result
        self._segment = state.copy()  # the start of the present segment (after an impact)
        con = stops.contacts
        k = 0 if con is None else con.size
        self._gap, self._point, self._arm = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
        self._gap0, self._point0, self._arm0 = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
        # the arenas of the state and of its copy at the step's start (begin copies them whole)
        self._state_f, self._state_i = state.f, state.i
        self._start_f, self._start_i = self._start.f, self._start.i
        #: contact points without stops, through the joint stops' early-out (bodies' law: not)
        self._points_only = con is not None and stops.cid.size == 0 and stops.bodies is None
        # the closed-stop tolerances of each side [rad or m] (relative to max(1, |limit|), as the stops')
        self._low_scale = OPEN_TOLERANCE * np.maximum(1.0, np.abs(stops.lower))
        self._high_scale = OPEN_TOLERANCE * np.maximum(1.0, np.abs(stops.upper))

    # ------------------------------------------------------------ the step
    def begin(self) -> None:
        """Keep the step's start (before the smooth step)."""
        self._start_f[...] = self._state_f
        self._start_i[...] = self._state_i

    @property
    def start(self) -> Any:
        """The state at the step's start (kept by :meth:`begin`)."""
        return self._start

    def correct(self, p: np.ndarray) -> None:
        """After a converged smooth step of ``p`` from :attr:`start`: correct it (the joint stops'
        :meth:`~kynemapy.run.joint_stops.JointStops.correct`), split at the first impact when the
        clean case holds."""
        stops, start = self.stops, self._start
        self.cuts = 0
        if self._points_only:  # the common case first: every point clear after the smooth step
            if self._smallest() > 0.0:
                stops.all_clear()
                return
        if not self.enabled or p[P_DYNAMIC] == 0.0:
            stops.correct(start.v, start.q)
            return
        theta = self._locate(start, float(p[P_H]))
        if theta is None:
            stops.correct(start.v, start.q)
            return
        self._split(p, theta)

    # ------------------------------------------------------------ pieces
    def _smallest(self) -> float:
        """The smallest gap of the contact points at the present state [m] (the scratch filled)."""
        con = self.stops.contacts
        smallest = contact_geometry(
            con.x0, self.sim.state.q, con.node, con.offset, con.radius, con.normal, con.offset_d,
            self._gap, self._point, self._arm,
        )  # fmt: skip
        return smallest

    def _locate(self, begin: Any, h: float) -> float | None:
        """The fraction θ of the step of size h from ``begin`` to the present state at which the
        first open point or stop closes; None when none crosses or one was closed at ``begin``."""
        stops, state = self.stops, self.sim.state
        con, cid = stops.contacts, stops.cid
        crossing = con is not None and self._smallest() <= 0.0  # the end's gaps and arms in the scratch
        if cid.size and not crossing:
            crossing = stop_passed(state.constraint_output, cid, stops.lower, stops.upper)
        if not crossing:
            return None
        # the clean case only: every point and stop open at the start (a resting body returns here)
        if con is not None:
            smallest = contact_geometry(
                con.x0, begin.q, con.node, con.offset, con.radius, con.normal, con.offset_d,
                self._gap0, self._point0, self._arm0,
            )  # fmt: skip
            if smallest <= OPEN_TOLERANCE:
                return None
        if cid.size:
            theta0 = begin.constraint_output[cid, 0]
            low0, high0 = theta0 - stops.lower, stops.upper - theta0
            if np.any(low0 <= self._low_scale) or np.any(high0 <= self._high_scale):
                return None
        best = 1.0
        target = -PENETRATION
        if cid.size:
            theta1 = state.constraint_output[cid, 0]
            low1, high1 = theta1 <= stops.lower, theta1 >= stops.upper
            rate0, rate1 = begin.constraint_output[cid, 1], state.constraint_output[cid, 1]
            low_target, high_target = (
                target * self._low_scale / OPEN_TOLERANCE,
                target * self._high_scale / OPEN_TOLERANCE,
            )
            for i in np.flatnonzero(low1):
                s = hermite_root(low0[i], rate0[i], theta1[i] - stops.lower[i], rate1[i], h, low_target[i])
                best = min(best, s)
            for i in np.flatnonzero(high1):
                s = hermite_root(high0[i], -rate0[i], stops.upper[i] - theta1[i], -rate1[i], h, high_target[i])
                best = min(best, s)
        if con is not None:
            gap0, gap1 = self._gap0, self._gap
            which = np.flatnonzero(gap1 <= 0.0)
            if which.size:
                n, node, comp = stops.n, stops.dof_node, stops.dof_component
                rate0 = con.rows(which, self._arm0, n)[0::3] @ begin.v[node, comp]
                rate1 = con.rows(which, self._arm, n)[0::3] @ state.v[node, comp]
                for j, i in enumerate(which):
                    best = min(best, hermite_root(gap0[i], rate0[j], gap1[i], rate1[j], h, target))
        return best

    def _split(self, p: np.ndarray, theta: float) -> None:
        """The step split at θ (and again where a sub-step leaves a point crossing)."""
        sim, stops = self.sim, self.stops
        state, start, end, segment = sim.state, self._start, self._end, self._segment
        h = float(p[P_H])
        end.assign(state)
        segment.assign(start)
        left = h  # what is left of the step [s]
        sums = self._Sums(stops)
        while True:
            if theta >= 1.0 - THETA_MIN:  # at the segment's end: Newton's law with the velocity there
                self._before()
                stops.correct(state.v.copy(), segment.q)
                self._after()
                sums.add()
                self.cuts += 1
                self.theta = 1.0
                self.impact_time = float(start.time[0]) + h
                break
            theta = max(theta, THETA_MIN)
            first = theta * left
            state.assign(segment)
            if self._smooth(p, first) != CONVERGED:
                self._undo()
                return
            self._before()
            stops.correct(state.v.copy(), segment.q)  # Newton's law with the velocity at the impact
            self._after()
            sums.add()
            self.cuts += 1
            self.theta = (h - left + first) / h
            self.impact_time = float(start.time[0]) + (h - left + first)
            segment.assign(state)
            left = left - first
            if self._smooth(p, left) != CONVERGED:
                self._undo()
                return
            located = self._locate(segment, left) if self.cuts < MAX_CUTS else None
            if located is None:
                stops.correct(segment.v, segment.q)
                sums.add()
                break
            theta = located
        sums.write()
        state.time[0] = next_time(float(start.time[0]), h)
        state.step[0] = start.step[0] + 1

    def _before(self) -> None:
        """Keep the velocities and the stops' rates before an impact's correction."""
        state = self.sim.state
        self.v_before = state.v.copy()
        self.rate_before = state.constraint_output[self.stops.cid, 1].copy()

    def _after(self) -> None:
        """Keep the velocities and the stops' rates after an impact's correction."""
        state = self.sim.state
        self.v_after = state.v.copy()
        self.rate_after = state.constraint_output[self.stops.cid, 1].copy()

    def _smooth(self, p: np.ndarray, h: float) -> int:
        """One smooth step of size h [s] from the present state; the engine's status."""
        return int(self.smooth_run(sub_coefficients(p, h), ADVANCE, 1, 0, self.no_rows, 0, self.iters1, self.out)[2])

    def _undo(self) -> None:
        """A sub-step failed: the full step's smooth result, corrected as without location."""
        self.sim.state.assign(self._end)
        self.cuts = 0
        self.theta = self.impact_time = float("nan")
        self.stops.correct(self._start.v, self._start.q)

    class _Sums:
        """The impulses of a split step's corrections, summed."""

        def __init__(self, stops: Any) -> None:
            self.stops = stops
            con = stops.contacts
            self.impulse = np.zeros_like(stops.impulse)
            self.position_impulse = np.zeros_like(stops.position_impulse)
            self.contact = None
            if con is not None:
                self.contact = (
                    np.zeros_like(con.normal_impulse),
                    np.zeros_like(con.friction_impulse),
                    np.zeros_like(con.position_impulse),
                    np.zeros_like(con.active),
                )

        def add(self) -> None:
            stops = self.stops
            self.impulse += stops.impulse
            self.position_impulse += stops.position_impulse
            if self.contact is not None:
                con = stops.contacts
                normal, friction, position, active = self.contact
                normal += con.normal_impulse
                friction += con.friction_impulse
                position += con.position_impulse
                active |= con.active

        def write(self) -> None:
            stops = self.stops
            stops.impulse[:] = self.impulse
            stops.position_impulse[:] = self.position_impulse
            if self.contact is not None:
                con = stops.contacts
                normal, friction, position, active = self.contact
                con.normal_impulse[:] = normal
                con.friction_impulse[:] = friction
                con.position_impulse[:] = position
                con.active[:] = active
                stops._dirty = True
