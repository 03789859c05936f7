"""Static equilibrium by load stepping, Newton on the engine's static tangent.

:func:`static_equilibrium` applies the node loads ``Inputs.f`` and the joints' torque and force
inputs in ``load_steps`` equal increments.  Each increment is solved by Newton's method on the
engine's static system (β′ = γ′ = 0: the ``LINEARIZE`` task with κ = 1 and the exact tangent,
K^Φ included), updating the configuration on the Lie group (``u += δu``, ``r := exp(δθ) ⊗ r``)
and keeping the multipliers λ from one iteration and increment to the next; an increment that
fails is bisected.  Gravity and prescribed displacements act in full from the first increment,
as in the engine's static steps (``StepParameters(dynamic=False)``).

Why not the engine's static step itself: its predictor sets λ := 0 at the start of every step
(Kynema's), so its first Newton matrix lacks the constraint forces' geometric stiffness; for a
mechanism whose only stiffness is that one (a pendulum under gravity) the matrix is singular.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from kynemapy.analysis.linearize import Assembler, copy_inputs, copy_state, linearization_coefficients, system_parts
from kynemapy.engine.api import ConvergenceError
from kynemapy.engine.data import Inputs, State
from kynemapy.engine.step import NOT_CONVERGED, NOT_FINITE, SINGULAR
from kynemapy.model import Model, kinds

#: the static system's coefficients: β′ = γ′ = 0, κ = 1, K^Φ, exact tangent, conditioner 1
STATIC_COEFFICIENTS = linearization_coefficients(0.0, 0.0, 1.0, True)
#: systems up to this many unknowns are solved dense (LU with partial pivoting), larger ones sparse
DENSE_LIMIT = 1500


class StaticEquilibriumError(ConvergenceError):
    """The static equilibrium was not reached at the full load.

    Attributes
    ----------
    load_fraction : float
        The largest fraction of the loads (0–1) at which equilibrium was reached.
    attempted_fraction : float
        The load fraction whose increment failed.
    residual_norm : float
        The out-of-balance force ‖r − f + Bᵀλ‖ [N, N m] of the last converged state under the
        attempted load.
    state : State
        The last converged state (at ``load_fraction``).
    """

    def __init__(
        self,
        message: str,
        load_fraction: float,
        attempted_fraction: float,
        residual_norm: float,
        state: State,
        errors: tuple[float, ...],
        status: int,
    ) -> None:
        super().__init__(message, float(state.time[0]), int(state.step[0]), errors, status)
        self.load_fraction = load_fraction
        self.attempted_fraction = attempted_fraction
        self.residual_norm = residual_norm
        self.state = state


@dataclass(frozen=True)
class Equilibrium:
    """A static equilibrium (from :func:`static_equilibrium`).

    Attributes
    ----------
    model : Model
        The model.
    state : State
        The equilibrium state: ``q`` (N, 7), ``lam`` (C, 6) [N, N m], zero velocities and
        accelerations; its time and step are those of the source.  Put it into a simulation of
        the same model with ``sim.restore_state(eq.state)``.
    inputs : Inputs
        The full loads and constraint inputs it balances.
    iterations : int
        The Newton iterations of all the load increments.
    residual_norm : float
        ‖r − f + Bᵀλ‖ [N, N m] at the equilibrium (the node rows of the engine's residual).
    constraint_violation : float
        ‖Φ‖ [m, rad] at the equilibrium.
    forces : (C, 3) ndarray of float
        The reaction force [N] of each constraint on its body (world frame, as
        :meth:`kynemapy.Simulation.reaction`).
    torques : (C, 3) ndarray of float
        The reaction torque [N m] of each constraint on its body.
    """

    model: Model
    state: State
    inputs: Inputs
    iterations: int
    residual_norm: float
    constraint_violation: float
    forces: np.ndarray
    torques: np.ndarray

    @property
    def q(self) -> np.ndarray:
        """(N, 7) node displacements [m] and rotation quaternions (w, x, y, z)."""
        return self.state.q

    @property
    def lam(self) -> np.ndarray:
        """(C, 6) Lagrange multipliers [N, N m] (the first ``n_rows`` of each constraint)."""
        return self.state.lam

    @property
    def positions(self) -> np.ndarray:
        """(N, 3) world positions X + u [m] of the nodes."""
        return np.asarray(self.model.x0)[:, :3] + self.state.q[:, :3]


def _load_inputs(model: Model) -> np.ndarray:
    """(C,) bool: the constraints whose first input is a load (torque or force)."""
    return np.asarray(kinds.HAS_INPUT_LOAD)[np.asarray(model.constraint_kind, dtype=np.int64)] != 0


def _residual(assembler: Assembler, state: State, inputs: Inputs) -> tuple[float, float]:
    """(‖node rows‖ [N, N m], ‖constraint rows‖ [m, rad]) of the engine's residual."""
    _, b = assembler.system(state, inputs, STATIC_COEFFICIENTS)
    nsys = int(assembler.model.n_system_dofs)
    return float(np.linalg.norm(b[:nsys])), float(np.linalg.norm(b[nsys:]))


def left_rotate(dtheta: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``exp(δθ) ⊗ r`` for (k, 3) rotation increments [rad] and (k, 4) quaternions (w, x, y, z)."""
    angle = np.linalg.norm(dtheta, axis=1)
    half = np.where(angle > 1e-12, np.sin(0.5 * angle) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    w1, v1 = np.cos(0.5 * angle), dtheta * half[:, None]
    w2, v2 = r[:, 0], r[:, 1:]
    out = np.empty_like(r)
    out[:, 0] = w1 * w2 - np.sum(v1 * v2, axis=1)
    out[:, 1:] = w1[:, None] * v2 + w2[:, None] * v1 + np.cross(v1, v2)
    return out / np.linalg.norm(out, axis=1)[:, None]


class _Newton:
    """Newton's method on the static system of one model, λ carried from solve to solve."""

    def __init__(self, model: Model, tol: float, max_iter: int) -> None:
        self.model = model
        self.assembler = Assembler(model)
        self.tol = tol
        self.max_iter = max_iter
        self.nsys = int(model.n_system_dofs)
        dofs = np.asarray(model.node_dofs)
        first = np.asarray(model.node_map)
        self.moving = np.flatnonzero(dofs > 0)
        self.rotating = np.flatnonzero(dofs == 6)
        self.u_rows = (first[self.moving][:, None] + np.arange(3)).ravel()
        self.r_rows = (first[self.rotating][:, None] + np.arange(3, 6)).ravel()
        crow = np.asarray(model.constraint_row)
        n_rows = np.asarray(model.constraint_n_rows)
        self.lam_index = [(c, self.nsys + int(crow[c]), int(n_rows[c])) for c in range(int(model.n_constraints))]

    def multiplier_estimate(self, state: State, inputs: Inputs) -> None:
        """λ := the least-squares balance of the node residual at λ = 0 (a first estimate, so
        that the first Newton matrix has the constraint forces' geometric stiffness)."""
        if not self.lam_index:
            return
        state.lam[...] = 0.0
        matrix, b = self.assembler.system(state, inputs, STATIC_COEFFICIENTS)
        bt = matrix[: self.nsys, self.nsys :].toarray()
        lam = -scipy.linalg.lstsq(bt, b[: self.nsys])[0]
        self._add_multipliers(state, lam)

    def _add_multipliers(self, state: State, dlam: np.ndarray) -> None:
        for c, row, n in self.lam_index:
            state.lam[c, :n] += dlam[row - self.nsys : row - self.nsys + n]

    def solve(self, state: State, inputs: Inputs) -> tuple[int, int, list[float]]:
        """Newton in place on ``state``: (status, iterations, largest node increment per
        iteration [m, rad]); on failure ``state`` holds the last iterate."""
        errors: list[float] = []
        singular = False
        for k in range(self.max_iter):
            matrix, b = self.assembler.system(state, inputs, STATIC_COEFFICIENTS)
            if not np.all(np.isfinite(b)):
                return NOT_FINITE, k, errors
            dx, exact = _newton_step(matrix, b, self.nsys)
            singular = singular or not exact
            if dx is None or not np.all(np.isfinite(dx)):
                return SINGULAR, k, errors
            q = state.q
            q[self.moving, :3] += dx[self.u_rows].reshape(-1, 3)
            if self.rotating.size:
                q[self.rotating, 3:] = left_rotate(dx[self.r_rows].reshape(-1, 3), q[self.rotating, 3:])
            self._add_multipliers(state, dx[self.nsys :])
            step = float(np.abs(dx[: self.nsys]).max(initial=0.0))
            errors.append(step)
            scale = max(1.0, float(np.abs(q[:, :3]).max(initial=0.0)))
            if step <= self.tol * scale:
                return 0, k + 1, errors
        return SINGULAR if singular else NOT_CONVERGED, self.max_iter, errors


def _newton_step(matrix: scipy.sparse.csc_matrix, b: np.ndarray, nsys: int) -> tuple[np.ndarray | None, bool]:
    """(Δx solving ``matrix Δx = −b``, True), or for a singular dense matrix the least-squares
    minimum-norm step (False): neutral DOFs (a body's free rotation, with no stiffness) then
    stay as they are; None for a singular sparse one.

    The dense solve scales the constraint rows and columns (after the first ``nsys``) to the
    size of the node block: B's entries are 1 or lengths, a rotor blade's stiffness up to 1e11,
    and unscaled LAPACK reported rcond 1e-20 for the IEA 15 MW rotor (a regular matrix), so
    the step fell back to least squares and Newton diverged from the first load increment."""
    if matrix.shape[0] > DENSE_LIMIT:
        try:
            return scipy.sparse.linalg.splu(matrix.tocsc()).solve(-b), True
        except RuntimeError:
            return None, False
    a = matrix.toarray()
    scale = max(float(np.abs(a[:nsys, :nsys]).max(initial=0.0)), 1.0)
    a[nsys:, :] *= scale
    a[:, nsys:] *= scale
    rhs = -np.asarray(b, dtype=float).copy()
    rhs[nsys:] *= scale
    exact = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            dx = scipy.linalg.solve(a, rhs, check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
        dx, exact = scipy.linalg.lstsq(a, rhs, check_finite=False)[0], False
    dx[nsys:] *= scale
    return dx, exact


def static_equilibrium(
    system: Any,
    loads: np.ndarray | None = None,
    load_steps: int = 1,
    tol: float = 1e-10,
    max_iter: int = 25,
    bisections: int = 10,
) -> Equilibrium:
    """The static equilibrium of a model under its loads, by load stepping.

    Starting from the system's configuration (velocities and accelerations zero; λ estimated
    by least squares), the node loads and the joints' torque and force inputs are applied in
    ``load_steps`` equal increments, each solved by Newton's method on the engine's static
    system (β′ = γ′ = 0, exact tangent with the constraint geometric stiffness), an increment
    that fails being halved (at most ``bisections`` times in all).  Gravity and prescribed
    displacements act in full from the first increment.  The system itself is not changed.

    Parameters
    ----------
    system : Model or Simulation
        A :class:`~kynemapy.Model` (from its initial configuration and inputs) or a
        :class:`~kynemapy.Simulation` (from its current configuration, with its loads
        ``inputs.f`` and constraint inputs: set them with ``set_load``, ``set_torque``, ...).
    loads : (N, 6) array_like of float or None, default None
        The node forces [N] and moments [N m] (world frame) to use instead of the system's.
    load_steps : int, default 1
        The number of equal load increments (>= 1).
    tol : float, default 1e-10
        Newton stops when the largest node increment is below ``tol`` × max(1 m, largest
        displacement) [m, rad].
    max_iter : int, default 25
        The most Newton iterations of one increment.
    bisections : int, default 10
        The most halvings of a failed increment, over the whole solve (0: none).

    Returns
    -------
    Equilibrium
        The equilibrium state, the multipliers and reactions, and its residual.

    Raises
    ------
    StaticEquilibriumError
        An increment did not converge; the message names the load fraction reached and the
        residual norm under the attempted load (a subclass of :class:`kynemapy.ConvergenceError`).
    ValueError
        ``load_steps``, ``tol``, ``max_iter`` or ``bisections`` out of range, or ``loads`` of
        the wrong shape.
    """
    for name, value, low in (("load_steps", load_steps, 1), ("max_iter", max_iter, 1), ("bisections", bisections, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"static_equilibrium: {name} must be an integer >= {low}, got {value!r}")
    if not (isinstance(tol, (int, float, np.floating)) and np.isfinite(tol) and tol > 0.0):
        raise ValueError(f"static_equilibrium: tol must be a finite number > 0, got {tol!r}")
    model, start, given_inputs = system_parts(system, None, None)
    full = copy_inputs(model, given_inputs)
    if loads is not None:
        f = np.asarray(loads, dtype=np.float64)
        if f.shape != full.f.shape:
            raise ValueError(f"static_equilibrium: loads must have shape {full.f.shape}, got {f.shape}")
        full.f[...] = f
    is_load = _load_inputs(model)
    newton = _Newton(model, float(tol), int(max_iter))
    state = copy_state(model, start)
    for name in ("v", "vd", "a", "lam"):
        getattr(state, name)[...] = 0.0
    state.q_prev[...] = state.q
    inputs = copy_inputs(model, full)

    def apply(fraction: float) -> None:
        inputs.f[...] = fraction * full.f
        inputs.constraint_input[is_load, 0] = fraction * full.constraint_input[is_load, 0]

    apply(1.0 / int(load_steps))
    newton.multiplier_estimate(state, inputs)
    iterations, reached, increment, halvings = 0, 0.0, 1.0 / int(load_steps), 0
    while reached < 1.0:
        target = min(1.0, reached + increment)
        if 1.0 - target < 1e-12:
            target = 1.0
        apply(target)
        trial = state.copy()
        status, n_iter, errors = newton.solve(trial, inputs)
        iterations += n_iter
        if status == 0:
            state.assign(trial)
            reached = target
            continue
        if halvings >= int(bisections):
            residual, _ = _residual(newton.assembler, state, inputs)
            last = ", ".join(f"{e:.3g}" for e in errors[-3:]) or "none"
            raise StaticEquilibriumError(
                f"static equilibrium not reached: load fraction {reached:.6g} of the full load reached; the "
                f"increment to {target:.6g} failed ({_STATUS[status]} after {n_iter} Newton iteration(s), "
                f"{halvings} bisection(s); last increments {last} m, rad); "
                f"residual norm {residual:.6g} (N, N m) at load fraction {target:.6g} from the last converged "
                "state. More load_steps, max_iter or bisections may help; a load beyond a limit point has no "
                "nearby equilibrium",
                reached, target, residual, state.copy(), tuple(errors), status,
            )  # fmt: skip
        halvings += 1
        increment = 0.5 * (target - reached)
    state.time[...] = start.time
    state.step[...] = start.step
    residual, violation = _residual(newton.assembler, state, full)
    forces = np.zeros((int(model.n_constraints), 3))
    torques = np.zeros((int(model.n_constraints), 3))
    for cid in range(int(model.n_constraints)):
        forces[cid], torques[cid] = newton.assembler.reaction(state, full, cid)
    return Equilibrium(model, state, full, iterations, residual, violation, forces, torques)


_STATUS = {
    NOT_CONVERGED: "Newton did not converge",
    NOT_FINITE: "the residual is not finite",
    SINGULAR: "the static tangent is singular (a mechanism without stiffness under load, or redundant constraints)",
}
