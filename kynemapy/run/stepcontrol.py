"""Step-size control of the generalized-α scheme: a local error estimate, the step-size
controller behind :meth:`Simulation.advance_to`, and dense output by cubic Hermite
interpolation (docs/step-control.md).

The local position error of one step of size h is estimated from the change of the true
accelerations v̇ over the step (translations and rotation increments alike: the rotations
are updated in the tangent space, ``r = exp(h Δθ) ⊗ r_prev``)::

    e = h² |C| |v̇_{n+1} − v̇_n|,    C = β − γ/2 + 1/12

C is the h³ coefficient of the position update once the algorithmic accelerations ``a`` are
read as v̇ at the shifted time ``t + (α_m − α_f) h`` (``(1 − α_m) a_{n+1} + α_m a_n =
(1 − α_f) v̇_{n+1} + α_f v̇_n``); with α_m = α_f (ρ∞ = 1) it is Zienkiewicz & Xie's
``β − 1/6``.  The error norm is the weighted RMS over the node DOFs (multipliers excluded)
with weights ``atol + rtol |q|``; the controller is ``h_new = h · min(fac_max, max(fac_min,
safety · err^(−1/3)))`` (the local position error is O(h³)).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from kynemapy.engine.api import ConvergenceError
from kynemapy.engine.step import CONVERGED
from kynemapy.run.failure import failure_text


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
        The first step size [s] (None: the simulation's ``params.h``).
    safety : float, default 0.9
        The safety factor of the controller, in (0, 1].
    fac_min : float, default 0.2
        The smallest factor by which one step changes h, in (0, 1).
    fac_max : float, default 2.0
        The largest factor by which one step changes h (> 1); 1 after a rejected step.
    max_attempts : int, default 30
        The most attempts one step may take (rejections and failed Newton solves) before
        the run stops with :class:`ConvergenceError`.
    velocity_error : bool, default False
        Add the velocity error ``h |γ − ½| |v̇_{n+1} − v̇_n|`` (weights ``atol + rtol |v|``)
        to the norm.  The velocity update of generalized-α is second-order accurate
        whatever γ (its local error is O(h³), not the O(h²) this term measures), so this
        only makes the control more conservative.

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
    velocity_error: bool = False

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
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError(f"StepControl: max_attempts must be an integer >= 1, got {self.max_attempts!r}")


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
        The estimated local error of each accepted step, in the weighted RMS norm (<= 1).
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


def error_coefficient(params: Any) -> float:
    """The coefficient C of the local position error ``h² |C| |v̇_{n+1} − v̇_n|``.

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


def local_error(
    h: float,
    coefficient: float,
    vd_start: np.ndarray,
    vd_end: np.ndarray,
) -> np.ndarray:
    """The estimated local position error of one step, per node DOF.

    Parameters
    ----------
    h : float
        The step size [s].
    coefficient : float
        C of :func:`error_coefficient`.
    vd_start, vd_end : (N, 6) ndarray of float
        The accelerations v̇ at the start and at the end of the step [m/s², rad/s²].

    Returns
    -------
    (N, 6) ndarray of float
        ``h² C |v̇_end − v̇_start|`` [m, rad] (rotations: the rotation vector in the
        tangent space at the step's start).
    """
    return (h * h * coefficient) * np.abs(vd_end - vd_start)


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


def _quat_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
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


def _conjugate(q: np.ndarray) -> np.ndarray:
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
    phi1 = rotation_vectors(_quat_product(q1[:, 3:], _conjugate(r0)))
    dphi1 = np.einsum("nij,nj->ni", _left_jacobian(phi1, inverse=True), v1[:, 3:])
    phi = h10 * h * v0[:, 3:] + h01 * phi1 + h11 * h * dphi1
    dphi = d10 * v0[:, 3:] + d01 * phi1 / h + d11 * dphi1
    r = _quat_product(rotation_quaternions(phi), np.broadcast_to(r0, (*phi.shape[:-1], 4)))
    omega = np.einsum("tnij,tnj->tni", _left_jacobian(phi, inverse=False), dphi)
    return np.concatenate([u, r], axis=-1), np.concatenate([du, omega], axis=-1)


def _weights(control: StepControl, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """``atol + rtol |q|`` per node DOF: |u| per displacement component, the rotation angle
    (the larger of the two ends) for the rotation components."""
    w = np.empty((q0.shape[0], 6))
    w[:, :3] = np.maximum(np.abs(q0[:, :3]), np.abs(q1[:, :3]))
    angle0 = np.linalg.norm(rotation_vectors(q0[:, 3:]), axis=1)
    angle = np.maximum(angle0, np.linalg.norm(rotation_vectors(q1[:, 3:]), axis=1))
    w[:, 3:] = angle[:, None]
    return control.atol + control.rtol * w


def _dof_mask(node_dofs: np.ndarray) -> np.ndarray:
    """(N, 6) bool: the DOFs with an equation (the first ``node_dofs[n]`` of node n)."""
    return np.arange(6)[None, :] < np.asarray(node_dofs).reshape(-1, 1)


def error_norm(control: StepControl, node_dofs: np.ndarray, h: float, coefficient: float, gamma: float,
               q0: np.ndarray, q1: np.ndarray, v0: np.ndarray, v1: np.ndarray,
               vd0: np.ndarray, vd1: np.ndarray) -> float:  # fmt: skip
    """The weighted RMS norm of the estimated local error of one step (accepted when <= 1).

    Parameters
    ----------
    control : StepControl
        The tolerances.
    node_dofs : (N,) ndarray of int
        The DOFs of each node (the model's ``node_dofs``); the others are left out.
    h : float
        The step size [s].
    coefficient : float
        C of :func:`error_coefficient`.
    gamma : float
        γ of the scheme (for ``control.velocity_error``).
    q0, q1 : (N, 7) ndarray of float
        The node states at the start and end of the step.
    v0, v1 : (N, 6) ndarray of float
        The velocities at the start and end.
    vd0, vd1 : (N, 6) ndarray of float
        The accelerations at the start and end.

    Returns
    -------
    float
        ``sqrt(mean((e / (atol + rtol |q|))²))`` over the node DOFs (0 when there are none).
    """
    mask = _dof_mask(node_dofs)
    if not mask.any():
        return 0.0
    ratio = local_error(h, coefficient, vd0, vd1) / _weights(control, q0, q1)
    terms = [ratio[mask]]
    if control.velocity_error:
        dv = h * abs(gamma - 0.5) * np.abs(vd1 - vd0)
        terms.append((dv / (control.atol + control.rtol * np.maximum(np.abs(v0), np.abs(v1))))[mask])
    values = np.concatenate(terms)
    return float(np.sqrt(np.mean(values * values)))


def advance_to(
    sim: Any,
    t_end: float,
    control: StepControl,
    output_times: Sequence[float] | np.ndarray | None = None,
    loads: Callable[[Any, float], None] | None = None,
) -> ControlledRun:
    """See :meth:`kynemapy.Simulation.advance_to` (``sim`` is a :class:`kynemapy.Simulation`)."""
    if not isinstance(control, StepControl):
        raise TypeError(f"advance_to: control must be a kynemapy.StepControl, got {type(control).__name__}")
    if not sim.params.dynamic:
        raise ValueError("advance_to: step-size control needs a dynamic simulation (StepParameters(dynamic=True))")
    if loads is not None and not callable(loads):
        raise TypeError(f"advance_to: loads must be a callable loads(sim, t), got {type(loads).__name__}")
    t_end = float(t_end)
    t0 = float(sim.time)
    if not math.isfinite(t_end) or t_end < t0:
        raise ValueError(f"advance_to: t_end must be finite and >= the current time {t0} s, got {t_end!r}")
    outputs = np.zeros(0) if output_times is None else np.asarray(output_times, dtype=np.float64).reshape(-1)
    if outputs.size and (
        not np.all(np.isfinite(outputs)) or np.any(np.diff(outputs) < 0.0) or outputs[0] < t0 or outputs[-1] > t_end
    ):
        raise ValueError(f"advance_to: output_times must be finite, increasing and within [{t0}, {t_end}] s")
    params = sim.params
    coefficient = error_coefficient(params)
    node_dofs = np.asarray(sim.model.node_dofs)
    n_nodes = sim.state.q.shape[0]
    h = float(control.h_initial if control.h_initial is not None else params.h)
    h_min = float(control.h_min if control.h_min is not None else 1e-10 * h)
    h_max = float(control.h_max if control.h_max is not None else math.inf)
    h = min(max(h, h_min), h_max)
    h_last = float(params.h)  # the step size the algorithmic accelerations a belong to
    q_out = np.zeros((outputs.size, n_nodes, 7))
    v_out = np.zeros((outputs.size, n_nodes, 6))
    k_out = 0
    while k_out < outputs.size and outputs[k_out] <= t0:  # at the current time: the state itself
        q_out[k_out], v_out[k_out] = sim.state.q, sim.state.v
        k_out += 1
    times: list[float] = []
    sizes: list[float] = []
    errors: list[float] = []
    rejected = newton_failures = 0
    state = sim.state
    while t_end - float(sim.time) > 1e-12 * max(1.0, abs(t_end)):
        t = float(sim.time)
        saved = sim.save_state()
        after_rejection = False
        for _attempt in range(control.max_attempts):
            remaining = t_end - t
            step = min(h, remaining)
            if remaining - step < 1e-3 * step:  # no sliver of a last step
                step = remaining
            elif remaining < 2.0 * step:  # two even steps instead of a long one and a short one
                step = 0.5 * remaining
            if step != h_last:  # a ≈ v̇(t + (α_m − α_f) h): the shift follows the step size
                state.a[...] = saved.vd + (step / h_last) * (saved.a - saved.vd)
            if loads is not None:
                loads(sim, t)
            p = dataclasses.replace(params, h=step).coefficients
            status, _ = sim.step_with(p)
            if status != CONVERGED:
                failure = status
                sim.restore_state(saved)
                rejected += 1
                newton_failures += 1
                after_rejection = True
                h = step * control.fac_min
            else:
                err = error_norm(control, node_dofs, step, coefficient, params.gamma, saved.q, state.q, saved.v,
                                 state.v, saved.vd, state.vd)  # fmt: skip
                factor = control.safety * (1.0 / err) ** (1.0 / 3.0) if err > 0.0 else control.fac_max
                if err <= 1.0:
                    grow = 1.0 if after_rejection else control.fac_max
                    h = min(h_max, step * min(grow, max(control.fac_min, factor)))
                    break
                sim.restore_state(saved)
                rejected += 1
                after_rejection = True
                h = step * max(control.fac_min, min(factor, 0.9))
                failure = None
            if h < h_min:
                if step > h_min:
                    h = h_min
                else:
                    raise _stopped(sim, t, step, failure, "at the smallest step size h_min")
        else:
            raise _stopped(sim, t, step, failure, f"after {control.max_attempts} attempts (max_attempts)")
        h_last = step
        t1 = float(sim.time)
        times.append(t1)
        sizes.append(step)
        errors.append(err)
        k_end = k_out
        while k_end < outputs.size and outputs[k_end] <= t1 + 1e-12 * max(1.0, abs(t1)):
            k_end += 1
        if k_end > k_out:
            theta = np.clip((outputs[k_out:k_end] - t) / step, 0.0, 1.0)
            q_out[k_out:k_end], v_out[k_out:k_end] = hermite(saved.q, saved.v, state.q, state.v, step, theta)
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
    )


def _stopped(sim: Any, t: float, step: float, status: int | None, why: str) -> ConvergenceError:
    """The error that stops a controlled run (the state is that of the last accepted step)."""
    n_iter = sim.workspace.n_iter
    errors = tuple(float(e) for e in sim.workspace.errors[:n_iter]) if status is not None else ()
    cause = "the estimated local error exceeds the tolerance"
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
