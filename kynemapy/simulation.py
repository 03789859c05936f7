"""``Simulation``: a model, its state, inputs and workspace, stepped by the compiled kernel."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kynemapy.constraints import kinds
from kynemapy.linalg import SOLVE_CAPACITY
from kynemapy.model import Model
from kynemapy.params import StepParameters
from kynemapy.rollout import advance_kernel, new_record
from kynemapy.state import Inputs, State, Workspace, new_inputs, new_state, new_workspace
from kynemapy.step import CONVERGED, NEEDS_MEMORY, NOT_CONVERGED, NOT_FINITE, SINGULAR, step_kernel

if TYPE_CHECKING:
    from kynemapy.driver import LoadFunction, RunInfo

_STATUS_TEXT = {
    NOT_CONVERGED: "Newton iteration did not converge",
    NOT_FINITE: "the iteration produced NaN or inf",
    SINGULAR: "the iteration matrix is singular (redundant or conflicting constraints, or a node without mass)",
    NEEDS_MEMORY: "the sparse LU factors need larger arrays",
}


def _finite(value: float, what: str) -> float:
    x = float(value)
    if not np.isfinite(x):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return x


def status_text(status: int) -> str:
    """Words for a step status code of :mod:`kynemapy.step`."""
    return _STATUS_TEXT.get(int(status), f"step status {status}")


class StepInfo(NamedTuple):
    """Outcome of one step: ``converged``, Newton ``iterations`` and their ``errors`` (weighted RMS)."""

    converged: bool
    iterations: int
    errors: tuple[float, ...]
    status: int = CONVERGED


class ConvergenceError(RuntimeError):
    """A step failed; the state is left exactly as it was before the step.

    Attributes: ``time`` [s] and ``step`` at the start of the failed step, ``errors``
    (the Newton errors, one per iteration) and ``status`` (a ``kynemapy.step`` code).
    """

    def __init__(self, message: str, time: float, step: int, errors: tuple[float, ...], status: int) -> None:
        super().__init__(message)
        self.time = time
        self.step = step
        self.errors = errors
        self.status = status


def step(model: Model, state: State, inputs: Inputs, workspace: Workspace, params: StepParameters) -> StepInfo:
    """Functional core: advance ``state`` in place by one step; never raises on non-convergence.

    The workspace must come from :func:`kynemapy.state.new_workspace` with at least
    ``params.max_iter`` error slots.  On failure the state is restored exactly.  Status
    ``NEEDS_MEMORY`` (4, sparse solver): replace ``workspace.lu`` by
    ``kynemapy.sparse_lu.grow_lu_workspace(workspace.lu)`` and repeat the step.
    """
    p = params.coefficients
    if workspace.errors.shape[0] < p.max_iter:
        raise ValueError(
            f"workspace holds {workspace.errors.shape[0]} iteration errors, params.max_iter = {p.max_iter}"
        )
    if p.geometric_stiffness and not workspace.scatter.has_k:
        raise ValueError(
            "params.geometric_stiffness is True but the workspace was built without K^Φ slots "
            "(new_workspace(..., geometric_stiffness=False)); build it with geometric_stiffness=True"
        )
    status, n_iter = step_kernel(model, state, inputs, workspace, p)
    errors = tuple(float(e) for e in workspace.errors[:n_iter])
    return StepInfo(status == CONVERGED, int(n_iter), errors, int(status))


class Simulation:
    """Time integration of a :class:`Model` with Kynema's Lie-group generalized-α scheme.

    Parameters
    ----------
    model : a built model.
    params : step parameters.
    consistent_initial_accelerations : None (default) computes accelerations and
        multipliers at t = 0 when no node was given an ``acceleration``; True always
        computes them; False uses the given ones (zero where none was given).

    Attributes
    ----------
    state : :class:`State` (``q, v, vd, a, lam, ...``), updated in place by each step.
    inputs : :class:`Inputs` (``f`` loads, ``constraint_input``), read by each step.
    """

    def __init__(
        self, model: Model, params: StepParameters, consistent_initial_accelerations: bool | None = None
    ) -> None:
        if not isinstance(params, StepParameters):
            raise TypeError(f"params must be a kynemapy.StepParameters, got {type(params).__name__}")
        self._model = model
        self._params = params
        self._coefficients = params.coefficients
        self._state = new_state(model)
        self._inputs = new_inputs(model)
        self._workspace = new_workspace(model, params.max_iter, params.solver, params.geometric_stiffness)
        self._step_entry = None
        self.resume_path: str | None = None
        self.state.q[...] = model.initial_q
        self.state.q_prev[...] = model.initial_q
        self.state.v[...] = model.initial_v
        self.state.vd[...] = model.initial_vd
        self.inputs.constraint_input[...] = model.initial_constraint_input
        from kynemapy.diagnostics import check_constraints

        check_constraints(model, self._state, self._inputs)
        self._reference_factorization()
        solve = consistent_initial_accelerations
        if solve is None:
            solve = not bool(np.any(model.initial_vd_given))
        if solve:
            self.compute_consistent_accelerations()
        self.state.a[...] = self.state.vd
        from kynemapy.step import global_position

        global_position(model.x0, self.state.q, self.state.x)
        self._initial_joint_outputs()

    def _initial_joint_outputs(self) -> None:
        """Hinge and slider outputs at t = 0 (Kynema's revolute output stays zero until the first step)."""
        m = self.model
        ws = self._workspace
        st = self.state
        with_outputs = (kinds.HINGE_JOINT, kinds.SLIDER_JOINT)
        joints = [c for c in range(m.n_constraints) if int(m.constraint_kind[c]) in with_outputs]
        if not joints:
            return
        from kynemapy.constraints.body_joints import body_joint_output

        for c in joints:
            base, target = (int(x) for x in m.constraint_node[c])
            g = base < 0
            body_joint_output(
                int(m.constraint_kind[c]),
                m.constraint_X0[c],
                m.constraint_geometry[c],
                ws.q_ground if g else st.q[base],
                st.q[target],
                ws.v_ground if g else st.v[base],
                st.v[target],
                ws.v_ground if g else st.vd[base],
                st.vd[target],
                st.constraint_output[c],
            )

    # ------------------------------------------------------------- data
    # Read-only attributes: the arrays are updated in place, never replaced, so the
    # compiled entry point resolved on the first step stays valid for every later one.
    @property
    def model(self) -> Model:
        """The model being simulated."""
        return self._model

    @property
    def params(self) -> StepParameters:
        """The step parameters."""
        return self._params

    @property
    def state(self) -> State:
        """The state, updated in place by each step (``q, v, vd, a, lam, ...``)."""
        return self._state

    @property
    def inputs(self) -> Inputs:
        """Loads and constraint inputs read by each step; write into their arrays."""
        return self._inputs

    @property
    def workspace(self) -> Workspace:
        """Buffers of the compiled step (Newton matrix, last step's errors, ...)."""
        return self._workspace

    # ------------------------------------------------------------- stepping
    def compute_consistent_accelerations(self) -> None:
        """Solve the constrained equations of motion for ``vd`` and ``lam`` at the current q, v."""
        from kynemapy.initial_conditions import consistent_accelerations

        status = consistent_accelerations(self.model, self.state, self.inputs, self.workspace)
        while status == SOLVE_CAPACITY:
            self._grow_lu()
            status = consistent_accelerations(self.model, self.state, self.inputs, self.workspace)
        if status != 0:
            raise ConvergenceError(
                "cannot compute consistent initial accelerations: " + _STATUS_TEXT[SINGULAR],
                float(self.state.time[0]),
                int(self.state.step[0]),
                (),
                SINGULAR,
            )

    def step(self, throw: bool = True) -> StepInfo:
        """Advance one time step h.  On failure the state is unchanged and, with ``throw``,
        :class:`ConvergenceError` is raised (else ``StepInfo(converged=False, ...)`` returned)."""
        # The compiled overload is resolved once: the dispatcher's per-call type inference
        # of ~80 arrays costs about 20 µs, three times the step itself.
        status, n_iter = self._raw_step(self._coefficients)
        errors = tuple(float(e) for e in self._workspace.errors[:n_iter])
        if status != CONVERGED and throw:
            raise ConvergenceError(
                f"step {int(self.state.step[0]) + 1} (t = {float(self.state.time[0]):.9g} s → "
                f"{float(self.state.time[0]) + self.params.h:.9g} s): {_STATUS_TEXT[status]} after {n_iter} "
                f"iteration(s); errors {', '.join(f'{e:.3g}' for e in errors)}",
                float(self.state.time[0]),
                int(self.state.step[0]),
                errors,
                int(status),
            )
        return StepInfo(status == CONVERGED, int(n_iter), errors, int(status))

    @property
    def jit_enabled(self) -> bool:
        """False when the kernels run as plain Python (``KYNEMAPY_DISABLE_JIT=1``)."""
        return hasattr(step_kernel, "compile")

    def _raw_step(self, coefficients: Any) -> tuple[int, int]:
        """One compiled step with the given coefficients; ``(status, n_iter)``, state restored on failure."""
        args = (self._model, self._state, self._inputs, self._workspace, coefficients)
        if self._step_entry is None and self.jit_enabled:
            self._step_entry = step_kernel.compile(tuple(step_kernel.typeof_pyval(a) for a in args))
        status, n_iter = (self._step_entry or step_kernel)(*args)
        while status == NEEDS_MEMORY:  # the sparse factors outgrew their arrays: grow, redo the step
            self._grow_lu()
            args = (self._model, self._state, self._inputs, self._workspace, coefficients)
            status, n_iter = (self._step_entry or step_kernel)(*args)
        return int(status), int(n_iter)

    def _grow_lu(self) -> None:
        """Double the capacity of the fallback sparse LU factors (after a ``NEEDS_MEMORY`` step)."""
        from kynemapy.sparse_lu import grow_lu_workspace

        ws = self._workspace
        self._workspace = ws._replace(lu_fallback=grow_lu_workspace(ws.lu_fallback))

    def _reference_factorization(self) -> None:
        """Sparse solver: factor the Newton matrix at the current (initial) state into ``workspace.lu``.

        Assembly reads the state and writes only workspace buffers.  Every later solve
        refactors with this pivot sequence, so the run does not depend on its
        own history and a restart repeats it bit for bit.  A singular initial matrix
        leaves no reference; every solve then factors afresh.
        """
        if self._workspace.scatter.dense:
            return
        from kynemapy.sparse_lu import LU_CAPACITY, grow_lu_workspace
        from kynemapy.step import reference_factorization

        while True:
            status = reference_factorization(
                self._model, self._state, self._inputs, self._workspace, self._coefficients
            )
            if status != LU_CAPACITY:
                break
            self._workspace = self._workspace._replace(lu=grow_lu_workspace(self._workspace.lu))

    def run(
        self,
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
        """Run to ``t_end`` [s] (or ``n_steps`` steps), streaming results to an HDF5 file.

        Parameters
        ----------
        output : HDF5 file (see :mod:`kynemapy.io`), checked writable before the first step;
            rows: the initial state (new file), every ``every``-th step and the last step.
            If this simulation came from :meth:`restart` of the same file, the file is continued.
        block : a killed run loses fewer than ``block`` rows (default: about 2 MiB of rows,
            64 to 16384).  Rows are recorded into two buffers of ``block // 2`` rows (the
            file's chunk); a background thread appends each full buffer while the stepping
            goes on (``block = 1``: each row is written before the next step, no thread).
        progress : draw a progress bar on stderr.
        loads : ``loads(sim, t)`` called before every step with the time at its start [s]
            (write ``sim.inputs``); without it the steps run in compiled calls of about 0.25 s.
        adaptive : retry a failed step as two half steps, recursively up to ``max_halvings``.
        throw : raise :class:`ConvergenceError` when a step fails (everything converged so far is
            written, the state is that of the last converged step); else return with
            ``converged=False``.
        """
        from kynemapy.driver import run

        return run(
            self,
            t_end=t_end,
            n_steps=n_steps,
            output=output,
            every=every,
            block=block,
            progress=progress,
            loads=loads,
            adaptive=adaptive,
            max_halvings=max_halvings,
            throw=throw,
            attrs=attrs,
        )

    @classmethod
    def restart(cls, path: str | os.PathLike[str], params: StepParameters | None = None) -> Simulation:
        """A simulation positioned at the last committed step of a result file.

        Continuing it (``run(..., output=path)`` appends to the same file) reproduces an
        uninterrupted run bit for bit.  ``params`` defaults to the file's step parameters.
        """
        from kynemapy.io.hdf5 import read

        result = read(path)
        if result.restart is None:
            raise ValueError(f"{os.fspath(path)}: no restart data for the {result.committed} committed rows")
        sim = cls(result.model, params or result.params, consistent_initial_accelerations=False)
        state, inputs = result.restart_state()
        sim._state.assign(state)
        sim._inputs.f[...] = inputs.f
        sim._inputs.constraint_input[...] = inputs.constraint_input
        sim.resume_path = os.fspath(path)
        return sim

    def advance(self, n_steps: int, throw: bool = True) -> np.ndarray:
        """Run ``n_steps`` steps inside one compiled call (inputs held constant).

        Returns the Newton iterations of each completed step (int64 array).  Stops at
        the first failed step (state as before that step) and raises unless ``throw`` is False.
        """
        iterations = np.zeros(int(n_steps), dtype=np.int64)
        record = new_record(self.model, 0)
        done, status = 0, CONVERGED
        while done < int(n_steps):
            steps, _, status = advance_kernel(
                self.model,
                self.state,
                self.inputs,
                self.workspace,
                self._coefficients,
                int(n_steps) - done,
                0,
                iterations[done:],
                record,
                0,
            )
            done += steps
            if status != NEEDS_MEMORY:
                break
            self._grow_lu()  # the sparse factors outgrew their arrays: grow, go on from the same step
        if status != CONVERGED and throw:
            n_iter = int(self.workspace.n_iter[0])
            errors = tuple(float(e) for e in self.workspace.errors[:n_iter])
            raise ConvergenceError(
                f"step {int(self.state.step[0]) + 1} (t = {float(self.state.time[0]):.9g} s): "
                f"{_STATUS_TEXT[status]}; errors {', '.join(f'{e:.3g}' for e in errors)}",
                float(self.state.time[0]),
                int(self.state.step[0]),
                errors,
                int(status),
            )
        return iterations[:done]

    # --------------------------------------------------------------- inputs
    def set_load(
        self, node: int, force: np.ndarray | tuple = (0.0, 0.0, 0.0), moment: np.ndarray | tuple = (0.0, 0.0, 0.0)
    ) -> None:
        """External force [N] and moment [N m] (inertial frame) on ``node``, held until changed."""
        f = np.concatenate([np.asarray(force, float), np.asarray(moment, float)])
        if f.shape != (6,) or not np.all(np.isfinite(f)):
            raise ValueError(f"load on node {node}: force and moment must be 3 finite numbers each, got {f.tolist()}")
        self.inputs.f[self._node(node)] = f

    def _node(self, node: int) -> int:
        if not 0 <= int(node) < self.model.n_nodes:
            raise IndexError(f"unknown node id {node} (the model has {self.model.n_nodes} nodes)")
        return int(node)

    def _constraint(self, cid: int, allowed: tuple[int, ...], what: str) -> int:
        if not 0 <= int(cid) < self.model.n_constraints:
            raise IndexError(f"unknown constraint id {cid} (the model has {self.model.n_constraints} constraints)")
        kind = int(self.model.constraint_kind[cid])
        if kind not in allowed:
            raise ValueError(f"constraint {cid} is a {kinds.KIND_NAMES[kind]}, which has no {what}")
        return int(cid)

    def set_prescribed_displacement(
        self, cid: int, u: np.ndarray | tuple, rotation: np.ndarray | tuple = (1.0, 0.0, 0.0, 0.0)
    ) -> None:
        """Prescribed displacement u [m] and rotation quaternion of a prescribed BC for the next step."""
        cid = self._constraint(cid, (kinds.PRESCRIBED_BC, kinds.PRESCRIBED_BC_3DOF), "prescribed displacement")
        value = np.concatenate([np.asarray(u, float), np.asarray(rotation, float)])
        if value.shape != (7,) or not np.all(np.isfinite(value)):
            raise ValueError(
                f"constraint {cid}: prescribed displacement must be 3 + 4 finite numbers, got {value.tolist()}"
            )
        self.inputs.constraint_input[cid] = value

    def set_torque(self, cid: int, torque: float) -> None:
        """Torque τ [N m] of a hinge joint (on body_b about the axis, −τ on body_a), or the brake
        torque of a Kynema revolute joint (acts as −τ about the joint axis), held until changed."""
        cid = self._constraint(cid, (kinds.REVOLUTE_JOINT, kinds.HINGE_JOINT), "torque input")
        self.inputs.constraint_input[cid, 0] = _finite(torque, f"constraint {cid} torque")

    def set_force(self, cid: int, force: float) -> None:
        """Force F [N] of a slider joint (on body_b along the axis, −F on body_a), held until changed."""
        cid = self._constraint(cid, (kinds.SLIDER_JOINT,), "force input")
        self.inputs.constraint_input[cid, 0] = _finite(force, f"constraint {cid} force")

    def set_angle(self, cid: int, angle: float) -> None:
        """Commanded angle [rad] of a rotation control."""
        cid = self._constraint(cid, (kinds.ROTATION_CONTROL,), "angle input")
        self.inputs.constraint_input[cid, 0] = float(angle)

    # -------------------------------------------------------------- outputs
    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return float(self.state.time[0])

    @property
    def step_count(self) -> int:
        """Number of converged steps."""
        return int(self.state.step[0])

    def multipliers(self, cid: int) -> np.ndarray:
        """Lagrange multipliers λ of constraint ``cid`` (its n_rows entries) [N, N m]."""
        n = int(self.model.constraint_n_rows[cid])
        return self.state.lam[cid, :n].copy()

    def joint_output(self, cid: int) -> np.ndarray:
        """(3,) outputs of constraint ``cid`` after the last step (or at t = 0).

        Hinge joint: angle of body_b relative to body_a about the axis [rad] (right-handed,
        0 at the reference configuration, continuous across turns), its rate [rad/s] and
        acceleration [rad/s²].  Slider joint: displacement of body_b's joint point along the
        axis [m], rate [m/s], acceleration [m/s²].  Kynema revolute joint: as
        :meth:`revolute_output`.  Other kinds: zeros.
        """
        if not 0 <= int(cid) < self.model.n_constraints:
            raise IndexError(f"unknown constraint id {cid} (the model has {self.model.n_constraints} constraints)")
        return self.state.constraint_output[int(cid)].copy()

    def reaction(self, cid: int) -> tuple[np.ndarray, np.ndarray]:
        """Force [N] (3,) and torque [N m] (3,) the constraint exerts on its body, world frame.

        Two-body joints: the load on body_b (on body_a when body_b is the ground), torque about
        the joint point as carried by that body (``x + R(r) d``; for a distance constraint,
        its ``point_b``).  Kynema's kinds: the load on the target node, torque about that node.
        From the multipliers only: a hinge's input torque or a slider's input force is not
        included (it is known: see :meth:`set_torque`, :meth:`set_force`).  Computed as
        ``−B_tᵀλ`` at the current state: the constraint's share of the target's equation of motion.
        """
        from kynemapy.constraints.dispatch import constraint_terms
        from kynemapy.math.quaternion import rotate_vector

        if not 0 <= int(cid) < self.model.n_constraints:
            raise IndexError(f"unknown constraint id {cid} (the model has {self.model.n_constraints} constraints)")
        c = int(cid)
        m = self.model
        base, target = (int(x) for x in m.constraint_node[c])
        qb = self._workspace.q_ground if base < 0 else self.state.q[base]
        phi, bb, bt = np.zeros(6), np.zeros((6, 6)), np.zeros((6, 6))
        constraint_terms(
            int(m.constraint_kind[c]),
            m.constraint_X0[c],
            m.constraint_axes[c],
            m.constraint_geometry[c],
            float(m.constraint_param[c]),
            self.inputs.constraint_input[c],
            qb,
            self.state.q[target],
            self.state.lam[c],
            True,
            phi,
            bb,
            bt,
            np.zeros((2, 2, 6, 6)),
            np.zeros((8, 3)),
            np.zeros((6, 4)),
            np.zeros((8, 3, 3)),
        )
        n = int(m.constraint_n_rows[c])
        load = -(bt[:n].T @ self.state.lam[c, :n])
        force = load[:3].copy()
        lever = np.zeros(3)
        rotate_vector(self.state.q[target, 3:7], np.ascontiguousarray(m.constraint_geometry[c, 1, 0]), lever)
        torque = load[3:] - np.cross(lever, force)
        return force, torque

    def revolute_output(self, cid: int) -> np.ndarray:
        """(azimuth [rad], speed [rad/s], acceleration [rad/s²]) of revolute joint ``cid``."""
        cid = self._constraint(cid, (kinds.REVOLUTE_JOINT,), "revolute output")
        return self.state.constraint_output[cid].copy()

    def save_state(self) -> State:
        """A copy of the state (restore it with :meth:`restore_state`)."""
        return self.state.copy()

    def restore_state(self, saved: State) -> None:
        """Put a saved state back (in place)."""
        self.state.assign(saved)


def simulate(
    model: Model,
    params: StepParameters,
    t_end: float | None = None,
    n_steps: int | None = None,
    output: str | os.PathLike[str] | None = None,
    **run_options: Any,
) -> tuple[Simulation, RunInfo]:
    """Build a :class:`Simulation` and :meth:`~Simulation.run` it; returns both.

    ``run_options``: ``every, block, progress, loads, adaptive, max_halvings, throw, attrs``.
    """
    sim = Simulation(model, params)
    info = sim.run(t_end=t_end, n_steps=n_steps, output=output, **run_options)
    return sim, info
