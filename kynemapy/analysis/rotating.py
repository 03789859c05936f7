"""Steady rotation and linearization in a rotating frame.

A structure turning rigidly at a constant angular velocity Ω about a fixed point c (a blade or
rotor whose roots are driven at constant speed, no gravity across the axis, loads that turn with
it) is in *relative equilibrium*: seen from a frame turning with it, nothing moves.  In the
engine's inertial DOF coordinates the linearized equations about that motion have matrices that
turn with the structure, ``M(t) = Q(t) M₀ Q(t)ᵀ`` with ``Q(t) = diag(exp(tΩ~))``: periodic, not
time-invariant.  Written in the rotating frame they are time-invariant, and its modes are the
rotating-frame (Campbell diagram) modes.

Kinematics (the engine's perturbations, world frame, at t = 0 when both frames coincide): a
node's displacement perturbation δu = Q δu_ρ, its rotation perturbation (left increment) δθ = Q
δθ_ρ, with ρ the rotating-frame coordinates.  Then

* δu̇ = Q(δu̇_ρ + Ω~δu_ρ),  δü = Q(δü_ρ + 2Ω~δu̇_ρ + Ω~²δu_ρ);
* δω = Q δθ̇_ρ (the perturbed angular velocity: for ``R = exp(δθ~) R₀``, ω = ω₀ + δθ̇ + δθ × ω₀,
  and ω₀ = Ω), δω̇ = Q(δθ̈_ρ + Ω~δθ̇_ρ).

With W_u (Ω~ on every displacement block) and W_θ (Ω~ on every rotation block), the engine's
linearization ``M δv̇ + C δv + K δq`` (K at fixed velocities v and accelerations v̇) becomes

    M δq̈_ρ + (C + M(2W_u + W_θ)) δq̇_ρ + (K + C W_u + M W_u²) δq_ρ + Bᵀδλ = δf_ρ.

The stiffness of the rotating frame, K + C W_u + M W_u², is also the Jacobian of the residual at
the steadily rotating state (velocities Ω × (x − c), accelerations Ω × (Ω × (x − c))) with
respect to the configuration: :func:`steady_rotation` finds that state by Newton's method with
it.  For a free axisymmetric body spinning about its axis it gives the body-frame nutation
frequency (J₃ − J₁)Ω/J₁ and, at Ω, the rotating-frame image of the inertial zero-frequency tilt.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse

from kynemapy.analysis.frames import rotating_frame_matrices
from kynemapy.analysis.linearize import (
    Assembler,
    copy_inputs,
    copy_state,
    damping_system,
    linearization_coefficients,
    system_parts,
)
from kynemapy.analysis.statics import left_rotate
from kynemapy.engine.api import ConvergenceError
from kynemapy.engine.data import Inputs, State
from kynemapy.model import Model

_M = linearization_coefficients(1.0, 0.0, 0.0, False)
_K = linearization_coefficients(0.0, 0.0, 1.0, True)


@dataclass(frozen=True)
class SteadyRotation:
    """A state of steady rotation (relative equilibrium), from :func:`steady_rotation`.

    :func:`kynemapy.analysis.linearize` and :func:`kynemapy.analysis.modes` given it linearize in
    the frame turning with it (``Linearization.frame_rate``).

    Attributes
    ----------
    model : Model
        The model.
    state : State
        The state at the instant the rotating frame coincides with the world frame: q the
        deformed configuration, v = (Ω × (x − c), Ω), v̇ = (Ω × (Ω × (x − c)), 0) on every node
        with DOFs, λ the constraint forces that hold it.
    inputs : Inputs
        The loads and constraint inputs (the loads are taken to turn with the structure).
    frame_rate : (3,) ndarray of float
        The angular velocity Ω [rad/s] (world frame).
    center : (3,) ndarray of float
        A point c [m] on the rotation axis.
    iterations : int
        Newton iterations.
    residual_norm : float
        ‖r − f + Bᵀλ‖ [N, N m] at the state.
    constraint_violation : float
        ‖Φ‖ [m, rad] at the state.
    """

    model: Model
    state: State
    inputs: Inputs
    frame_rate: np.ndarray
    center: np.ndarray
    iterations: int
    residual_norm: float
    constraint_violation: float

    @property
    def speed(self) -> float:
        """The speed ``|Ω|`` [rad/s]."""
        return float(np.linalg.norm(self.frame_rate))


def _set_kinematics(model: Model, state: State, frame_rate: np.ndarray, center: np.ndarray) -> None:
    """v := (Ω × (x − c), Ω), v̇ := (Ω × (Ω × (x − c)), 0) on the nodes with DOFs."""
    dofs = np.asarray(model.node_dofs)
    moving = dofs > 0
    r = np.asarray(model.x0)[:, :3] + state.q[:, :3] - center
    v = np.cross(frame_rate, r)
    a = np.cross(frame_rate, v)
    state.v[...] = 0.0
    state.vd[...] = 0.0
    state.v[moving, :3] = v[moving]
    state.vd[moving, :3] = a[moving]
    rot = dofs == 6
    state.v[rot, 3:] = frame_rate
    state.a[...] = state.vd


def steady_rotation(
    system: Any,
    frame_rate: Any,
    center: Any = (0.0, 0.0, 0.0),
    state: State | None = None,
    inputs: Inputs | None = None,
    tol: float = 1e-10,
    max_iter: int = 30,
) -> SteadyRotation:
    """The relative equilibrium of a structure turning rigidly at a constant Ω about a point.

    Newton's method on the engine's residual with the velocities and accelerations of rigid
    rotation, ``v = (Ω × (x − c), Ω)``, ``v̇ = (Ω × (Ω × (x − c)), 0)``, updated with the
    configuration; the Jacobian is the rotating frame's stiffness ``K + C W_u + M W_u²``
    (module docstring) with the constraint rows B.  The constraints must allow the rotation
    (roots on prescribed BCs whose input is that of t = 0, a revolute joint turning freely, no
    fixed BC off the axis); the loads are taken to turn with the structure, and gravity must be
    zero or along Ω (across the axis there is no steady state: the motion is periodic).

    Parameters
    ----------
    system : Model, Simulation or Equilibrium
        The model with a starting state and inputs, as :func:`kynemapy.analysis.linearize` takes;
        a previous :class:`SteadyRotation` (continuation in speed) too.
    frame_rate : (3,) array_like of float [rad/s]
        The angular velocity Ω (world frame).
    center : (3,) array_like of float [m], default (0, 0, 0)
        A point on the rotation axis.
    state : State or None, default None
        The starting state instead of the system's (its configuration and λ are the first guess).
    inputs : Inputs or None, default None
        The loads and constraint inputs instead of the system's.
    tol : float, default 1e-10
        Largest Newton increment [m, rad] at convergence, relative to max(1 m, the largest
        displacement).
    max_iter : int, default 30
        The most Newton iterations.

    Returns
    -------
    SteadyRotation
        The state, Ω, c, iterations and residuals.

    Raises
    ------
    ValueError
        Gravity has a component across Ω.
    kynemapy.ConvergenceError
        Newton did not converge.
    """
    model, start, given_inputs = system_parts(system, state, inputs)
    omega = np.asarray(frame_rate, dtype=float).reshape(3)
    c = np.asarray(center, dtype=float).reshape(3)
    g = np.asarray(model.gravity, dtype=float)
    speed = float(np.linalg.norm(omega))
    if speed > 0.0 and np.linalg.norm(np.cross(g, omega / speed)) > 1e-12 * max(np.linalg.norm(g), 1.0):
        raise ValueError(
            f"gravity {tuple(g)} has a component across the rotation axis {tuple(omega / speed)}: "
            "no steady rotation (the linearization is periodic); build the model without it"
        )
    current = copy_state(model, start)
    loads = copy_inputs(model, given_inputs)
    assembler = Assembler(model)
    nsys = int(model.n_system_dofs)
    dofs = np.asarray(model.node_dofs)
    first = np.asarray(model.node_map)
    moving = np.flatnonzero(dofs > 0)
    rotating = np.flatnonzero(dofs == 6)
    u_rows = (first[moving][:, None] + np.arange(3)).ravel()
    r_rows = (first[rotating][:, None] + np.arange(3, 6)).ravel()
    crow = np.asarray(model.constraint_row)
    n_rows = np.asarray(model.constraint_n_rows)
    lam_index = [(k, int(crow[k]), int(n_rows[k])) for k in range(int(model.n_constraints))]

    def assemble() -> tuple[scipy.sparse.csc_matrix, np.ndarray]:
        _set_kinematics(model, current, omega, c)
        k_full, b = assembler.system(current, loads, _K)
        m_full, _ = assembler.system(current, loads, _M)
        c_full = damping_system(assembler, current, loads)
        m, cc, k = (a[:nsys, :nsys] for a in (m_full, c_full, k_full))
        _, k_rot = rotating_frame_matrices(model, m, cc, k, omega)
        if k_full.shape[0] == nsys:
            return k_rot, b
        jac = scipy.sparse.bmat(
            [[k_rot, k_full[:nsys, nsys:]], [k_full[nsys:, :nsys], k_full[nsys:, nsys:]]], format="csc"
        )
        return jac, b

    iterations = 0
    converged = False
    errors: list[float] = []
    for k_iter in range(max_iter):
        iterations = k_iter + 1
        jac, b = assemble()
        if not np.all(np.isfinite(b)):
            break
        # the constraint rows and columns scaled to the size of K (B's entries are 1 or lengths,
        # K's up to 1e11 for a rotor blade): unscaled, LAPACK saw rcond 1e-20 where there is none
        a = jac.toarray()
        scale = max(float(np.abs(a[:nsys, :nsys]).max(initial=0.0)), 1.0)
        a[nsys:, :] *= scale
        a[:, nsys:] *= scale
        rhs = -b.copy()
        rhs[nsys:] *= scale
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                dx = scipy.linalg.solve(a, rhs, check_finite=False)
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
            dx = scipy.linalg.lstsq(a, rhs, check_finite=False)[0]
        dx[nsys:] *= scale
        q = current.q
        q[moving, :3] += dx[u_rows].reshape(-1, 3)
        if rotating.size:
            q[rotating, 3:] = left_rotate(dx[r_rows].reshape(-1, 3), q[rotating, 3:])
        for k, row, n in lam_index:
            current.lam[k, :n] += dx[nsys + row : nsys + row + n]
        step = float(np.abs(dx[:nsys]).max(initial=0.0))
        errors.append(step)
        if step <= tol * max(1.0, float(np.abs(q[:, :3]).max(initial=0.0))):
            converged = True
            break
    _, b = assemble()
    residual, violation = float(np.linalg.norm(b[:nsys])), float(np.linalg.norm(b[nsys:]))
    if not converged:
        raise ConvergenceError(
            f"steady rotation at Ω = {tuple(omega)} rad/s not reached after {iterations} Newton iteration(s) "
            f"(residual {residual:.3g} N, N m)",
            float(start.time[0]), int(start.step[0]), tuple(errors), 1,
        )  # fmt: skip
    return SteadyRotation(model, current, loads, omega, c, iterations, residual, violation)
