"""Step-size control of the generalized-α scheme: a local error estimate, the step-size
controller behind :meth:`Simulation.advance_to`, and dense output by cubic Hermite
interpolation (docs/step-control.md).

The local position error of one step of size h is estimated from the change of the
algorithmic accelerations ``a`` over the step (translations and rotation increments alike:
the rotations are updated in the tangent space, ``r = exp(h Δθ) ⊗ r_prev``)::

    e = h² |C| |a_{n+1} − a_n|,    C = β − γ/2 + 1/12

``a`` is v̇ at the shifted time ``t + (α_m − α_f) h`` (``(1 − α_m) a_{n+1} + α_m a_n =
(1 − α_f) v̇_{n+1} + α_f v̇_n``), so ``a_{n+1} − a_n ≈ h v⃛`` and C is the h³ coefficient of
the position update ``Δq = v + h (½ − β) a_n + h β a_{n+1}``; with α_m = α_f (ρ∞ = 1) it is
Zienkiewicz & Xie's ``β − 1/6``.  ``a`` rather than v̇: it is what the position update uses,
and it filters out the alternating oscillation of v̇ that index-3 constraints and gyroscopic
terms excite at ρ∞ near 1 (the heavy top at ρ∞ = 0.9).  The part of ``a_{n+1} − a_n``
along ``M⁻¹ Bᵀ`` (the multipliers' transient after each change of h) is projected out
(:class:`ConstraintProjector`).  The error norm is the weighted RMS over the node DOFs
(multipliers excluded) with weights ``atol + rtol |u|`` (1 rad for the rotations); the
controller is ``h_new = h · min(fac_max, max(fac_min, safety · err^(−1/3)))`` (the local
position error is O(h³)), or with the exponent 1/2 when the tolerance is per unit step
(``scope="run"``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from kynemapy.engine.api import ConvergenceError, task
from kynemapy.engine.entry import LINEARIZE
from kynemapy.engine.params import ACCELERATION_COEFFICIENTS, with_step
from kynemapy.engine.step import CONVERGED
from kynemapy.linalg.dense import SOLVE_SINGULAR
from kynemapy.run.failure import failure_text
from kynemapy.run.local_error import error_rms, project_dense


@dataclasses.dataclass(frozen=True)
class StepControl:
    """Tolerances and limits of the step-size control of :meth:`Simulation.advance_to`.

    Parameters
    ----------
    rtol : float, default 1e-4
        Relative tolerance of the local position error [-] (> 0).
    atol : float, default 1e-6
        Absolute tolerance of the local position error [m for displacements, rad for
        rotations] (> 0).
    h_min : float or None, default None
        The smallest step size [s]; a step rejected at it stops the run with
        :class:`ConvergenceError` (None: 1e-10 × the first step size).
    h_max : float or None, default None
        The largest step size [s] (None: no limit but the end time).
    h_initial : float or None, default None
        The first step size [s] (None: the simulation's ``params.h``; with
        ``scheme="extrapolated"`` grown up to 8× where a pilot of 4 coarse steps shows it far
        below what the tolerance needs: :func:`kynemapy.run.extrapolation.pilot_step`).
    safety : float, default 0.9
        The safety factor of the controller, in (0, 1].
    fac_min : float, default 0.2
        The smallest factor by which one step changes h, in (0, 1).
    fac_max : float, default 2.0
        The largest factor by which one step changes h (> 1); 1 after a rejected step.
    max_attempts : int, default 30
        The most attempts one step may take (rejections and failed Newton solves) before
        the run stops with :class:`ConvergenceError`.
    scope : {"step", "run"}, default "step"
        ``"step"``: the estimated local error of each step is held below the tolerance
        (the usual control; the global error is then the sum of the local errors, grown
        by the problem's error amplification: thousands of times the tolerance over a
        second of the heavy top at 1e-7, docs/step-control.md).  ``"run"``: each step gets
        the share ``h / (t_end − t_start)`` of the tolerance (error per unit step), so that
        the local errors of the whole :meth:`~Simulation.advance_to` call add up to at most
        the tolerance; the controller's exponent is then 1/2 instead of 1/3.
    velocity_error : bool, default False
        Add the local velocity error ``h³ |C_v| |v⃜|`` (:func:`velocity_coefficient`, v⃜
        from the changes of ``a`` over two steps) to the norm, against ``atol + rtol |v|``
        (read in m/s, rad/s).  Experimental, and only with ``scope="step"``: every change
        of h excites the spurious roots of generalized-α a little, and the second
        difference of ``a`` that v⃜ needs amplifies that noise by 1/h
        (docs/step-control.md has the measurements).
    scheme : {"generalized-alpha", "extrapolated"}, default "generalized-alpha"
        ``"generalized-alpha"``: Kynema's step with the step size chosen step by step (above).
        ``"extrapolated"``: the fourth-order Richardson extrapolation of it
        (:mod:`kynemapy.run.extrapolation`): three integrations of the whole interval with
        the steps h, h/2, h/4 combined at the multiples of h, with a global error estimate at
        each of them; h is constant within a call and chosen from ``rtol``/``atol`` (a call
        whose estimate exceeds the tolerance anywhere is redone from its start with a smaller
        h; when the estimate stops falling with h, the Newton noise amplified, the call with
        the smallest estimate is kept and :attr:`ControlledRun.fallback` says so).  ``scope``
        and ``velocity_error`` do not apply to it (a value other than their default is
        refused); a ``loads`` function is called with the time at the end of each step
        (:func:`kynemapy.run.extrapolation.extrapolate`; the steps then run one at a time from
        Python).
    newton : {"auto", "params"}, default "auto"
        The Newton settings of the extrapolated scheme's levels.  ``"auto"``: from a tolerance
        of 1e-4 up (the smaller of ``atol`` and ``rtol``), each Newton iteration starts from
        the last step's v̇ and λ (``predictor="last"``: fewer iterations, the same error);
        below it, and for the Newton tolerances and the tangent always, the simulation's
        ``StepParameters`` (:func:`kynemapy.run.extrapolation.newton_parameters`).
        ``"params"``: the simulation's ``StepParameters`` as they are.  The generalized-α
        scheme always steps with the simulation's own settings.

    Raises
    ------
    ValueError
        A value outside its range.
    """

    rtol: float = 1e-4
    atol: float = 1e-6
    h_min: float | None = None
    h_max: float | None = None
    h_initial: float | None = None
    safety: float = 0.9
    fac_min: float = 0.2
    fac_max: float = 2.0
    max_attempts: int = 30
    scope: str = "step"
    velocity_error: bool = False
    scheme: str = "generalized-alpha"
    newton: str = "auto"

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not (_real(value) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"StepControl: {name} must be a finite number > 0, got {value!r}")
        for name in ("h_min", "h_max", "h_initial"):
            value = getattr(self, name)
            if value is not None and not (_real(value) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"StepControl: {name} must be None or a finite number > 0 s, got {value!r}")
        if self.h_min is not None and self.h_max is not None and self.h_min > self.h_max:
            raise ValueError(f"StepControl: h_min = {self.h_min} s exceeds h_max = {self.h_max} s")
        if not (_real(self.safety) and 0.0 < self.safety <= 1.0):
            raise ValueError(f"StepControl: safety must lie in (0, 1], got {self.safety!r}")
        if not (_real(self.fac_min) and 0.0 < self.fac_min < 1.0):
            raise ValueError(f"StepControl: fac_min must lie in (0, 1), got {self.fac_min!r}")
        if not (_real(self.fac_max) and math.isfinite(self.fac_max) and self.fac_max > 1.0):
            raise ValueError(f"StepControl: fac_max must be a finite number > 1, got {self.fac_max!r}")
        if self.scope not in SCOPES:
            raise ValueError(f"StepControl: scope must be 'step' or 'run', got {self.scope!r}")
        if self.velocity_error and self.scope == "run":
            raise ValueError(
                "StepControl: velocity_error is not available with scope='run' (the noise a change of h leaves in "
                "the second difference of a does not shrink with h there, and h collapses to h_min)"
            )
        if self.scheme not in STEP_SCHEMES:
            raise ValueError(
                f"StepControl: scheme must be one of {', '.join(map(repr, STEP_SCHEMES))}, got {self.scheme!r}"
            )
        if self.newton not in NEWTON_MODES:
            raise ValueError(
                f"StepControl: newton must be one of {', '.join(map(repr, NEWTON_MODES))}, got {self.newton!r}"
            )
        if self.scheme == "extrapolated" and self.velocity_error:
            raise ValueError("StepControl: velocity_error applies to scheme='generalized-alpha' only")
        if self.scheme == "extrapolated" and self.scope != "step":
            raise ValueError(
                "StepControl: scope applies to scheme='generalized-alpha' only (the extrapolated scheme's "
                "tolerance is of the global error over the whole call already): leave it out"
            )
        if (
            isinstance(self.max_attempts, (bool, np.bool_))
            or not isinstance(self.max_attempts, (int, np.integer))
            or self.max_attempts < 1
        ):
            raise ValueError(f"StepControl: max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        object.__setattr__(self, "max_attempts", int(self.max_attempts))  # a numpy integer as a Python int
        if not isinstance(self.velocity_error, (bool, np.bool_)):
            raise ValueError(f"StepControl: velocity_error must be True or False, got {self.velocity_error!r}")


def within_roundoff(t: float, t_ref: float) -> bool:
    """True when the time ``t`` [s] is at or before ``t_ref`` up to the round-off of a sum of
    step sizes (1e-12 of the larger, absolute below 1 s): a controlled run whose end is within
    it of the current time has nothing left to do, and an output time within it of a step's
    end is that end."""
    return t - t_ref <= 1e-12 * max(1.0, abs(t), abs(t_ref))


#: an increase of h by less than this factor is not taken: every change of h excites the
#: spurious roots of generalized-α a little, and holding h removes most rejections
#: (the heavy top at ρ∞ = 0.9, tolerance 1e-5: 35 rejections in 315 steps, 65 in 323 without)
HOLD_FACTOR = 1.5
#: the scopes of the tolerance (:attr:`StepControl.scope`)
SCOPES = ("step", "run")
#: the schemes of :attr:`StepControl.scheme`
STEP_SCHEMES = ("generalized-alpha", "extrapolated")
#: the Newton settings of the extrapolated scheme's levels (:attr:`StepControl.newton`)
NEWTON_MODES = ("auto", "params")


def _real(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


class ControlledRun(NamedTuple):
    """What :meth:`Simulation.advance_to` did.

    Attributes
    ----------
    time : (S,) ndarray of float
        The end time of each accepted step [s].
    h : (S,) ndarray of float
        The size of each accepted step [s].
    error : (S,) ndarray of float
        The estimated local error of each accepted step, in the weighted RMS norm (<= 1);
        ``scheme="extrapolated"``: the larger of the estimated global error at the row's time and,
        where output times lie inside the interval that ends there, the estimated error of the
        dense output's interpolation (:func:`kynemapy.run.extrapolation.interpolation_norms`).
    accepted : int
        Accepted steps (S).
    rejected : int
        Rejected attempts: an estimated error > 1, or a Newton solve that failed.
    newton_failures : int
        Of those, the attempts whose Newton iteration failed.
    output_times : (T,) ndarray of float
        The requested output times reached [s].
    q : (T, N, 7) ndarray of float
        The dense output: displacement [m] and rotation quaternion ``(w, x, y, z)`` of each
        node at ``output_times`` (cubic Hermite interpolation within each step).
    v : (T, N, 6) ndarray of float
        The velocities [m/s, rad/s] at ``output_times`` (the derivative of that
        interpolation).
    scheme : (S,) ndarray of str
        The scheme that produced each accepted step: ``"generalized-alpha"`` or
        ``"extrapolated"``.
    fallback : str
        Empty, or (``scheme="extrapolated"``) why the run was kept with an estimate above the
        tolerance: the estimate stopped falling with h (the noise of the Newton solutions,
        amplified), and the call with the smallest estimate was kept instead of stopping;
        ``error`` is then > 1 at some rows.
    rejections : (S,) ndarray of int or None
        The rejected attempts before each accepted step (``scheme="extrapolated"``: the calls
        redone, all before the first step); they add up to ``rejected``.
    """

    time: np.ndarray
    h: np.ndarray
    error: np.ndarray
    accepted: int
    rejected: int
    newton_failures: int
    output_times: np.ndarray
    q: np.ndarray
    v: np.ndarray
    scheme: np.ndarray | None = None
    fallback: str = ""
    rejections: np.ndarray | None = None


def error_coefficient(params: Any) -> float:
    """The coefficient C of the local position error ``h² |C| |a_{n+1} − a_n|``.

    Parameters
    ----------
    params : StepParameters
        The step parameters (their β, γ from ρ∞).

    Returns
    -------
    float
        ``|β − γ/2 + 1/12|`` [-]: 1/12 at ρ∞ = 1, 1/3 at ρ∞ = 0.
    """
    return abs(params.beta - 0.5 * params.gamma + 1.0 / 12.0)


def velocity_coefficient(params: Any) -> float:
    """The coefficient C_v of the local velocity error ``h³ |C_v| |v⃜|`` (v⃜ = d²v̇/dt²).

    With ``a_n = v̇ + δ h v⃛ + c₂ h² v⃜`` (δ = α_m − α_f; ``c₂ = (1 − α_f)/2 − (1 − α_m)(½ + δ)``
    from the recursion of a), the velocity update ``v + h ((1 − γ) a_n + γ a_{n+1})`` has the
    h³ error ``c₂ + γ (½ + δ) − 1/6``.

    Parameters
    ----------
    params : StepParameters
        The step parameters.

    Returns
    -------
    float
        ``|C_v|`` [-]: 1/12 at ρ∞ = 1 (the trapezoidal rule's), 0.085 at ρ∞ = 0.9, 0.58 at ρ∞ = 0.
    """
    delta = params.alpha_m - params.alpha_f
    c2 = 0.5 * (1.0 - params.alpha_f) - (1.0 - params.alpha_m) * (0.5 + delta)
    return abs(c2 + params.gamma * (0.5 + delta) - 1.0 / 6.0)


def local_errors(
    params: Any,
    h: float,
    change: np.ndarray,
    h_previous: float | None = None,
    change_previous: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The estimated local position and velocity errors of one step, per node DOF.

    Parameters
    ----------
    params : StepParameters or tuple of float
        The step parameters (β, γ, α_m, α_f), or the pair ``(C, C_v)`` of
        :func:`error_coefficient` and :func:`velocity_coefficient` already computed from them (a
        controller's every step: the two cost 15 µs of Python).
    h : float
        The step size [s].
    change : (N, 6) ndarray of float
        ``a_{n+1} − a_n`` over the step [m/s², rad/s²] (projected: :class:`ConstraintProjector`).
    h_previous : float or None, default None
        The size of the step before [s] (None: no velocity error).
    change_previous : (N, 6) ndarray of float or None, default None
        Its change of ``a``.

    Returns
    -------
    position : (N, 6) ndarray of float
        ``h² C |Δa|`` [m, rad] (:func:`error_coefficient`; rotations: the rotation vector in
        the tangent space at the step's start).
    velocity : (N, 6) ndarray of float or None
        ``h³ C_v |v⃜|`` [m/s, rad/s] (:func:`velocity_coefficient`) with v⃜ from the two
        changes, ``(Δa/h − Δa_prev/h_prev) / ((h + h_prev)/2)``; None without a step before.
    """
    given = isinstance(params, tuple)
    position = (h * h * (params[0] if given else error_coefficient(params))) * np.abs(change)
    if h_previous is None or change_previous is None:
        return position, None
    snap = (change / h - change_previous / h_previous) / (0.5 * (h + h_previous))
    return position, (h**3 * (params[1] if given else velocity_coefficient(params))) * np.abs(snap)


def rotation_vectors(quaternions: np.ndarray) -> np.ndarray:
    """Log map of unit quaternions ``(..., 4)`` ``(w, x, y, z)``: rotation vectors ``(..., 3)`` [rad].

    The quaternion and its negative give the same vector (the angle lies in [0, π]).

    Parameters
    ----------
    quaternions : (..., 4) ndarray of float
        Unit quaternions.

    Returns
    -------
    (..., 3) ndarray of float
        The rotation vectors.
    """
    q = np.asarray(quaternions, dtype=np.float64)
    sign = np.where(q[..., :1] < 0.0, -1.0, 1.0)
    w = np.clip(q[..., 0:1] * sign, -1.0, 1.0)
    xyz = q[..., 1:] * sign
    s = np.linalg.norm(xyz, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, w)
    scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0)
    return xyz * scale


def rotation_quaternions(phi: np.ndarray) -> np.ndarray:
    """Exponential map: rotation vectors ``(..., 3)`` [rad] to unit quaternions ``(..., 4)``.

    Parameters
    ----------
    phi : (..., 3) ndarray of float
        Rotation vectors.

    Returns
    -------
    (..., 4) ndarray of float
        The quaternions ``(w, x, y, z)``.
    """
    phi = np.asarray(phi, dtype=np.float64)
    angle = np.linalg.norm(phi, axis=-1, keepdims=True)
    small = angle < 1e-8
    s = np.where(small, 0.5 - angle * angle / 48.0, np.sin(0.5 * angle) / np.where(small, 1.0, angle))
    return np.concatenate([np.cos(0.5 * angle), phi * s], axis=-1)


def quat_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of quaternions ``(..., 4)`` ``(w, x, y, z)`` (broadcast).

    Parameters
    ----------
    a, b : (..., 4) ndarray of float
        Quaternions.

    Returns
    -------
    (..., 4) ndarray of float
        The product.
    """
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def conjugate(q: np.ndarray) -> np.ndarray:
    """The conjugate ``(w, −x, −y, −z)`` of quaternions ``(..., 4)`` (the inverse of a unit one).

    Parameters
    ----------
    q : (..., 4) ndarray of float
        Quaternions.

    Returns
    -------
    (..., 4) ndarray of float
        Their conjugates.
    """
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def _left_jacobian(phi: np.ndarray, inverse: bool) -> np.ndarray:
    """SO(3)'s left Jacobian J(φ) (``ω = J(φ) φ̇`` for ``r = exp(φ) ⊗ r0``, spatial ω), or its inverse; (..., 3, 3)."""
    angle = np.linalg.norm(phi, axis=-1)[..., None, None]
    k = np.zeros((*phi.shape[:-1], 3, 3))
    k[..., 0, 1], k[..., 0, 2], k[..., 1, 2] = -phi[..., 2], phi[..., 1], -phi[..., 0]
    k[..., 1, 0], k[..., 2, 0], k[..., 2, 1] = phi[..., 2], -phi[..., 1], phi[..., 0]
    k2 = k @ k
    small = angle < 1e-4
    t = np.where(small, 1.0, angle)
    if inverse:
        c2 = np.where(small, 1.0 / 12.0 + angle**2 / 720.0, 1.0 / t**2 - (1.0 + np.cos(t)) / (2.0 * t * np.sin(t)))
        return np.eye(3) - 0.5 * k + c2 * k2
    c1 = np.where(small, 0.5 - angle**2 / 24.0, (1.0 - np.cos(t)) / t**2)
    c2 = np.where(small, 1.0 / 6.0 - angle**2 / 120.0, (t - np.sin(t)) / t**3)
    return np.eye(3) + c1 * k + c2 * k2


def hermite(
    q0: np.ndarray,
    v0: np.ndarray,
    q1: np.ndarray,
    v1: np.ndarray,
    h: float,
    theta: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Cubic Hermite interpolation of node positions and rotations within one step.

    Displacements: the cubic through ``(u0, u̇0)`` and ``(u1, u̇1)``.  Rotations: the cubic
    φ(s) in the tangent space of the start rotation, ``r(s) = exp(φ(s)) ⊗ r0``, with
    ``φ(0) = 0``, ``φ̇(0) = ω0``, ``φ(h) = log(r1 ⊗ r0⁻¹)``, ``φ̇(h) = J⁻¹(φ(h)) ω1``
    (J the left Jacobian of SO(3), ω spatial).

    Parameters
    ----------
    q0, q1 : (N, 7) ndarray of float
        The node states ``(u, r)`` at the start and end of the step.
    v0, v1 : (N, 6) ndarray of float
        The velocities ``(u̇, ω)`` at the start and end [m/s, rad/s].
    h : float
        The step size [s].
    theta : (T,) ndarray of float
        The fractions of the step, in [0, 1], at which to interpolate.

    Returns
    -------
    q : (T, N, 7) ndarray of float
        The interpolated states.
    v : (T, N, 6) ndarray of float
        Their velocities (the derivative of the interpolation).
    """
    s = np.asarray(theta, dtype=np.float64)[:, None, None]
    h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
    d00, d10, d01, d11 = 6 * s**2 - 6 * s, 3 * s**2 - 4 * s + 1, -6 * s**2 + 6 * s, 3 * s**2 - 2 * s
    u = h00 * q0[:, :3] + h10 * h * v0[:, :3] + h01 * q1[:, :3] + h11 * h * v1[:, :3]
    du = (d00 * q0[:, :3] + d01 * q1[:, :3]) / h + d10 * v0[:, :3] + d11 * v1[:, :3]
    r0 = q0[:, 3:]
    phi1 = rotation_vectors(quat_product(q1[:, 3:], conjugate(r0)))
    dphi1 = np.einsum("nij,nj->ni", _left_jacobian(phi1, inverse=True), v1[:, 3:])
    phi = h10 * h * v0[:, 3:] + h01 * phi1 + h11 * h * dphi1
    dphi = d10 * v0[:, 3:] + d01 * phi1 / h + d11 * dphi1
    r = quat_product(rotation_quaternions(phi), np.broadcast_to(r0, (*phi.shape[:-1], 4)))
    omega = np.einsum("tnij,tnj->tni", _left_jacobian(phi, inverse=False), dphi)
    return np.concatenate([u, r], axis=-1), np.concatenate([du, omega], axis=-1)


def dof_mask(node_dofs: np.ndarray) -> np.ndarray:
    """The DOFs with an equation: the first ``node_dofs[n]`` of node n.

    Parameters
    ----------
    node_dofs : (N,) ndarray of int
        The DOFs of each node.

    Returns
    -------
    (N, 6) ndarray of bool
        True where a node DOF has an equation.
    """
    return np.arange(6)[None, :] < np.asarray(node_dofs).reshape(-1, 1)


class ConstraintProjector:
    """Removes from per-DOF error vectors their part along ``M⁻¹ Bᵀ`` (the accelerations that
    constraint forces cause), leaving the part in the null space of B.

    Index-3 constraints hold the positions on the constraint manifold at every step, and the
    multipliers adjust to each step size with a transient (the spurious roots of
    generalized-α, decaying like (−ρ∞)ⁿ) that the accelerations carry along ``M⁻¹ Bᵀ``: a
    50 % step-size increase of the heavy top at ρ∞ = 0.5 changes ``a_{n+1} − a_n`` fivefold
    for several steps.  That is no position error, but it would dominate the estimate after
    every change of h.  The projection is the least kinetic-energy one,
    ``[M Bᵀ; B 0] [Δ; μ] = [0; −B e]``, ``e ← e + Δ`` (as for the initial velocities),
    assembled by the compiled linearization.  Up to :data:`DENSE_LIMIT` unknowns it is solved
    as a dense matrix by LAPACK (numpy), above by scipy's sparse LU; a singular matrix
    (redundant constraints) by least squares.  The dense path is the step-size control's
    common case: scipy's sparse matrices cost 0.6 ms of Python a step, 60 % of a controlled
    step of the heavy top.

    Parameters
    ----------
    sim : Simulation
        The simulation (its workspace, data and state).
    """

    #: the most unknowns (node DOFs and multipliers) solved as a dense matrix (ball chains,
    #: median µs a projection dense/sparse: 131/284 at 90 unknowns, 524/526 at 180, 997/939 at
    #: 270, 12541/833 at 450)
    DENSE_LIMIT = 160

    def __init__(self, sim: Any) -> None:
        model = sim.model
        self._sim = sim
        self.n = int(model.n_dofs)
        self.nsys = int(model.n_system_dofs)
        node_dofs = np.asarray(model.node_dofs)
        node_map = np.asarray(model.node_map)
        rows: list[int] = []
        cols: list[int] = []
        for node in range(int(model.n_nodes)):
            for k in range(int(node_dofs[node])):
                rows.append(node * 6 + k)
                cols.append(int(node_map[node]) + k)
        self._flat = np.array(rows, dtype=np.int64)  # (N·6) index of each system DOF
        self._system = np.array(cols, dtype=np.int64)
        self._pattern: tuple[np.ndarray, ...] | None = None  # the matrix's pattern, as last read
        n = self.n if self.n <= self.DENSE_LIMIT else 0  # project_dense's scratch
        self._scratch = (np.zeros((n, n)), np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n))

    def _entries(self, indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(indptr, rows, cols, B's entries, flat dense index)`` of the Newton matrix's CSC
        pattern: made again when the pattern differs from the last one read."""
        n = self.n
        nnz = int(indptr[n])
        kept = self._pattern
        if kept is not None and np.array_equal(kept[0], indptr[: n + 1]) and np.array_equal(kept[1], indices[:nnz]):
            return kept
        rows = indices[:nnz].copy()
        cols = np.repeat(np.arange(n), np.diff(indptr[: n + 1]))
        coupling = np.flatnonzero((rows >= self.nsys) & (cols < self.nsys))  # the entries of B
        self._pattern = (indptr[: n + 1].copy(), rows, cols, coupling, rows * n + cols)
        return self._pattern

    def project(self, e: np.ndarray) -> np.ndarray:
        """``e + Δ`` with ``[M Bᵀ; B 0] [Δ; μ] = [0; −B e]`` at the current state.

        Parameters
        ----------
        e : (N, 6) ndarray of float
            The error per node DOF [m, rad].

        Returns
        -------
        (N, 6) ndarray of float
            Its part that satisfies ``B e = 0``.
        """
        n, nsys = self.n, self.nsys
        if n == nsys:
            return e
        sim = self._sim
        q_delta = sim.state.q_delta
        kept = q_delta.copy()
        q_delta[...] = 0.0  # the rotation tangent at the identity: the plain mass matrix
        try:
            task(sim.data, ACCELERATION_COEFFICIENTS, LINEARIZE)
        finally:
            q_delta[...] = kept
        w = sim.workspace
        if n <= self.DENSE_LIMIT and n == self._scratch[0].shape[0]:  # one compiled call
            out = np.array(e, dtype=np.float64, order="C")
            status = project_dense(
                w.indptr, w.indices, w.vals, nsys, self._flat, self._system, out.reshape(-1), *self._scratch
            )
            if status != SOLVE_SINGULAR:
                return out
        indptr, rows, cols, coupling, flat = self._entries(np.asarray(w.indptr), np.asarray(w.indices))
        vals = np.asarray(w.vals)[: rows.size]
        x = np.zeros(n)
        x[self._system] = e.reshape(-1)[self._flat]
        rhs = -np.bincount(rows[coupling], weights=vals[coupling] * x[cols[coupling]], minlength=n)
        delta = self._solve(n, rows, flat, vals, indptr, rhs)
        if not np.all(np.isfinite(delta)):
            return e
        out = e.copy().reshape(-1)
        out[self._flat] += delta[self._system]
        return out.reshape(e.shape)

    def _solve(
        self, n: int, rows: np.ndarray, flat: np.ndarray, vals: np.ndarray, indptr: np.ndarray, rhs: np.ndarray
    ) -> np.ndarray:
        """The solution of the (n, n) matrix of CSC entries ``vals`` (rows ``rows``, columns
        by ``indptr``; ``flat`` their row-major index, duplicates summed) with ``rhs``: above
        :data:`DENSE_LIMIT` unknowns scipy's sparse LU; least squares where the matrix is
        singular, and up to DENSE_LIMIT, where :meth:`project` comes here only when
        :func:`~kynemapy.run.local_error.project_dense` met a zero pivot (redundant
        constraints)."""
        if n <= self.DENSE_LIMIT:
            matrix = np.bincount(flat, weights=vals, minlength=n * n).reshape(n, n)
            return np.linalg.lstsq(matrix, rhs, rcond=None)[0]
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla

        matrix = sp.csc_matrix((vals.copy(), rows.copy(), indptr.copy()), shape=(n, n))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return spla.splu(matrix).solve(rhs)
        except RuntimeError:  # singular (redundant constraints): least squares
            return np.linalg.lstsq(matrix.toarray(), rhs, rcond=None)[0]


def error_norm(
    control: StepControl,
    node_dofs: np.ndarray,
    q0: np.ndarray,
    q1: np.ndarray,
    v0: np.ndarray,
    v1: np.ndarray,
    position: np.ndarray,
    velocity: np.ndarray | None,
    mask: np.ndarray | None = None,
) -> float:
    """The weighted RMS norm of the estimated local error of one step (accepted when <= 1).

    ``sqrt(mean((e_q / w_q)²) + mean((e_v / w_v)²))`` over the node DOFs, with ``w_q = atol +
    rtol |u|`` for a displacement (``|u|`` the larger of the two ends) [m] and ``atol + rtol · 1 rad``
    for a rotation (a rotation's angle is no scale: it cycles through [0, π] on a spinning body,
    and the tolerance would cycle with it), and ``w_v = atol + rtol |v|`` (atol and rtol read in
    m/s, rad/s); one compiled call (:func:`kynemapy.run.local_error.error_rms`).  With
    ``scope="run"`` the caller divides the norm by the step's share ``h / span`` of the run.

    Parameters
    ----------
    control : StepControl
        The tolerances.
    node_dofs : (N,) ndarray of int
        The DOFs of each node (the model's ``node_dofs``); the others are left out.
    q0, q1 : (N, 7) ndarray of float
        The node states at the start and end of the step.
    v0, v1 : (N, 6) ndarray of float
        The velocities at the start and end.
    position, velocity : (N, 6) ndarray of float
        The estimated local errors (:func:`local_errors`; velocity None: left out).
    mask : (N, 6) ndarray of bool or None, default None
        Not read (the DOFs come from ``node_dofs``); accepted for the callers that pass
        ``dof_mask(node_dofs)``.

    Returns
    -------
    float
        The norm (0 when no node has DOFs).
    """
    node_dofs = np.asarray(node_dofs, dtype=np.int64)
    use_velocity = bool(control.velocity_error and velocity is not None)
    return float(
        error_rms(
            position, velocity if use_velocity else position, q0, q1, v0, v1, node_dofs,
            float(control.atol), float(control.rtol), use_velocity,
        )
    )  # fmt: skip


def checked_arguments(
    sim: Any,
    t_end: float,
    control: StepControl,
    output_times: Sequence[float] | np.ndarray | None,
    loads: Callable[[Any, float], None] | None,
) -> tuple[float, np.ndarray]:
    """The checked arguments of :meth:`kynemapy.Simulation.advance_to`: ``(t_end, output times)``.

    Parameters
    ----------
    sim : Simulation
        The simulation.
    t_end : float
        The end time [s].
    control : StepControl
        The tolerances and the scheme.
    output_times : (T,) array_like of float or None
        The output times [s].
    loads : callable or None
        ``loads(sim, t)``.

    Returns
    -------
    t_end : float
        The end time [s].
    outputs : (T,) ndarray of float
        The output times [s] (empty for None).

    Raises
    ------
    TypeError, ValueError
        As :meth:`kynemapy.Simulation.advance_to` says.
    """
    if not isinstance(control, StepControl):
        raise TypeError(f"advance_to: control must be a kynemapy.StepControl, got {type(control).__name__}")
    if not sim.params.dynamic:
        raise ValueError("advance_to: step-size control needs a dynamic simulation (StepParameters(dynamic=True))")
    if loads is not None and not callable(loads):
        raise TypeError(f"advance_to: loads must be a callable loads(sim, t), got {type(loads).__name__}")
    t0 = float(sim.time)
    if not _real(t_end) or not math.isfinite(t_end) or t_end < t0:
        raise ValueError(f"advance_to: t_end must be a finite number >= the current time {t0} s, got {t_end!r}")
    t_end = float(t_end)
    outputs = np.zeros(0) if output_times is None else np.asarray(output_times, dtype=np.float64).reshape(-1)
    if outputs.size and (
        not np.all(np.isfinite(outputs)) or np.any(np.diff(outputs) < 0.0) or outputs[0] < t0 or outputs[-1] > t_end
    ):
        raise ValueError(f"advance_to: output_times must be finite, increasing and within [{t0}, {t_end}] s")
    return t_end, outputs


def advance_to(
    sim: Any,
    t_end: float,
    control: StepControl,
    output_times: Sequence[float] | np.ndarray | None = None,
    loads: Callable[[Any, float], None] | None = None,
) -> ControlledRun:
    """See :meth:`kynemapy.Simulation.advance_to` (``sim`` is a :class:`kynemapy.Simulation`);
    generalized-α only: ``scheme="extrapolated"`` runs in :func:`kynemapy.run.extrapolation.advance_to`."""
    t_end, outputs = checked_arguments(sim, t_end, control, output_times, loads)
    if control.scheme != "generalized-alpha":
        raise ValueError("stepcontrol.advance_to: scheme='extrapolated' runs in kynemapy.run.extrapolation.advance_to")
    t0 = float(sim.time)
    params = sim.params
    node_dofs = np.asarray(sim.model.node_dofs, dtype=np.int64)
    n_nodes = sim.state.q.shape[0]
    h = float(control.h_initial if control.h_initial is not None else params.h)
    h_min = float(control.h_min if control.h_min is not None else 1e-10 * h)
    h_max = float(control.h_max if control.h_max is not None else math.inf)
    h = min(max(h, h_min), h_max)
    h_last = float(params.h)  # the step size the algorithmic accelerations a belong to
    q_out = np.zeros((outputs.size, n_nodes, 7))
    v_out = np.zeros((outputs.size, n_nodes, 6))
    k_out = 0
    while k_out < outputs.size and within_roundoff(outputs[k_out], t0):  # at the current time: the state
        q_out[k_out], v_out[k_out] = sim.state.q, sim.state.v
        k_out += 1
    times: list[float] = []
    sizes: list[float] = []
    errors: list[float] = []
    rejections: list[int] = []
    rejected = newton_failures = 0
    state = sim.state
    projector = ConstraintProjector(sim)
    span = max(t_end - t0, 1e-300)
    exponent = 1.0 / 3.0 if control.scope == "step" else 0.5  # the local error is O(h³): O(h²) per unit step
    delta = params.alpha_m - params.alpha_f  # a ≈ v̇(t + δh)
    a_prev: np.ndarray | None = None  # a at the start of the last accepted step
    change_prev: np.ndarray | None = None  # its (projected) change of a
    h_prev: float | None = None
    mask = dof_mask(node_dofs)
    base = params.coefficients
    coefficients = (error_coefficient(params), velocity_coefficient(params))  # local_errors' C and C_v
    while not within_roundoff(t_end, float(sim.time)):  # until t_end is reached
        t = float(sim.time)
        saved = sim.save_state()  # read back whole only (its arrays' views are not made)
        q0, v0, a0 = state.q.copy(), state.v.copy(), state.a.copy()
        rejected_before = rejected
        after_rejection = False
        failure: int | None = None
        err = 0.0
        for _attempt in range(control.max_attempts):
            remaining = t_end - t
            step = min(h, remaining)
            if remaining - step < 1e-3 * step:  # no sliver of a last step
                step = remaining
            elif remaining < 2.0 * step:  # two even steps instead of a long one and a short one
                step = 0.5 * remaining
            if step != h_last and a_prev is not None:
                # a ≈ v̇(t + δh) follows the new step size: a += δ (h_new − h_old) v⃛, v⃛ from a's own slope
                state.a[...] = a0 + (delta * (step - h_last) / (h_prev or h_last)) * (a0 - a_prev)
            a_start = state.a.copy()
            if loads is not None:
                loads(sim, t + step)  # the step's end, where generalized-α's equilibrium is evaluated
            status, _ = sim.step_with(with_step(base, step))
            if status != CONVERGED:
                failure = status
                sim.restore_state(saved)
                rejected += 1
                newton_failures += 1
                after_rejection = True
                h = step * control.fac_min
            else:
                failure = None
                change = projector.project(np.where(mask, state.a - a_start, 0.0))
                if control.velocity_error:
                    position, velocity = local_errors(coefficients, step, change, h_prev, change_prev)
                else:
                    position, velocity = local_errors(coefficients, step, change)
                err = error_norm(control, node_dofs, q0, state.q, v0, state.v, position, velocity)
                if control.scope == "run":
                    err *= span / step
                factor = control.safety * (1.0 / err) ** exponent if err > 0.0 else control.fac_max
                if err <= 1.0:
                    grow = 1.0 if after_rejection else control.fac_max
                    if 1.0 <= factor < HOLD_FACTOR:
                        factor = 1.0
                    h = min(h_max, step * min(grow, max(control.fac_min, factor)))
                    break
                sim.restore_state(saved)
                rejected += 1
                after_rejection = True
                h = step * max(control.fac_min, min(factor, 0.9))
            if h < h_min:
                if step > h_min:
                    h = h_min
                else:
                    raise stopped_error(sim, t, step, failure, "at the smallest step size h_min")
        else:
            raise stopped_error(sim, t, step, failure, f"after {control.max_attempts} attempts (max_attempts)")
        a_prev, h_prev, h_last, change_prev = a_start, step, step, change
        t1 = float(sim.time)
        times.append(t1)
        sizes.append(step)
        errors.append(err)
        rejections.append(rejected - rejected_before)
        k_end = k_out
        while k_end < outputs.size and within_roundoff(outputs[k_end], t1):
            k_end += 1
        if k_end > k_out:
            theta = np.clip((outputs[k_out:k_end] - t) / step, 0.0, 1.0)
            q_out[k_out:k_end], v_out[k_out:k_end] = hermite(q0, v0, state.q, state.v, step, theta)
            k_out = k_end
    return ControlledRun(
        time=np.array(times),
        h=np.array(sizes),
        error=np.array(errors),
        accepted=len(times),
        rejected=rejected,
        newton_failures=newton_failures,
        output_times=outputs[:k_out].copy(),
        q=q_out[:k_out],
        v=v_out[:k_out],
        scheme=np.full(len(times), "generalized-alpha"),
        rejections=np.array(rejections, dtype=np.int64),
    )


def stopped_error(
    sim: Any, t: float, step: float, status: int | None, why: str, cause: str | None = None
) -> ConvergenceError:
    """The error that stops a controlled run (the state is that of the last accepted step).

    Parameters
    ----------
    sim : Simulation
        The simulation (its last Newton errors).
    t : float
        The time of the last accepted state [s].
    step : float
        The step size tried [s].
    status : int or None
        The engine's status of the failed Newton solve (None: a rejected estimate).
    why : str
        Why the run stops.
    cause : str or None, default None
        What was wrong with the last attempt when its Newton iteration converged (None: the
        generalized-α control's "the estimated local error exceeds the tolerance").

    Returns
    -------
    ConvergenceError
        The error to raise.
    """
    n_iter = sim.workspace.n_iter
    errors = tuple(float(e) for e in sim.workspace.errors[:n_iter]) if status is not None else ()
    cause = cause or "the estimated local error exceeds the tolerance"
    if status is not None:
        cause = failure_text(sim, status, errors)
    return ConvergenceError(
        f"advance_to stopped at t = {t:.9g} s (step size {step:.3g} s) {why}: {cause}; the state is that of "
        "the last accepted step",
        t,
        int(sim.step_count),
        errors,
        int(status) if status is not None else -1,
    )
