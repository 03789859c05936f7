"""``Simulation``: a model, its state, inputs and workspace, stepped by the compiled phases."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import numpy as np

from kynemapy._jit import relax, restore
from kynemapy.engine import api
from kynemapy.engine.api import (
    NO_ROWS,
    ConvergenceError,
    StepInfo,
    error_readers,
    fill_rows,
    status_text,
    step_info,
    task,
)
from kynemapy.engine.checks import check_constraints
from kynemapy.engine.data import Inputs, State, Workspace, new_workspace
from kynemapy.engine.elements import CONTACTS, PAIRS
from kynemapy.engine.elements.contact_table import OUT_FRICTION, OUT_GAP, OUT_NORMAL, OUT_SLIP
from kynemapy.engine.entry import ADVANCE, INITIAL_ACCELERATIONS, LINEARIZE, REACTION, RECORD, START, run_task
from kynemapy.engine.fields import Data
from kynemapy.engine.initial_velocity import (
    INITIAL_VELOCITY_MODES,
    describe,
    is_consistent,
    project_velocities,
    velocity_residual,
)
from kynemapy.engine.lookup import entry
from kynemapy.engine.params import ACCELERATION_COEFFICIENTS, P_ASSEMBLE_K, P_MAX_ITER, P_SIZE, StepParameters
from kynemapy.engine.rows import split_rows
from kynemapy.engine.step import CONVERGED, NEEDS_UNIT, RESUMABLE
from kynemapy.engine.stored_call import StoredCall
from kynemapy.engine.units import fill_missing
from kynemapy.linalg.dense import SOLVE_CAPACITY
from kynemapy.math.frames import node_frame, point_motion
from kynemapy.math.rotations import rotation_matrices
from kynemapy.model import Model, kinds
from kynemapy.model.builder import check_simulation, no_unknowns, real_number, servo_inputs
from kynemapy.run import loop, stepcontrol
from kynemapy.run.failure import failure_text, singular_cause
from kynemapy.run.hooks import keepers
from kynemapy.run.stepcontrol import ControlledRun, StepControl

if TYPE_CHECKING:  # pragma: no cover
    from kynemapy.run.joint_stops import JointStops

_new_tuple = tuple.__new__


def _checked_id(value: Any, count: int, name: str, item: str, prefix: str) -> int:
    """``value`` as an int in [0, count): else ``TypeError`` (not an integer) or ``IndexError``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{prefix}{name} must be a {item} id (int), got {value!r}")
    value = int(value)
    if not 0 <= value < count:
        raise IndexError(f"{prefix}unknown {item} id {value} (the model has {count} {item}s)")
    return value


#: the element types of a tuple or list that a load takes as they are (numpy's go through numpy)
_PLAIN_NUMBERS = (float, int)


def _vector3(value: Any) -> tuple[float, float, float] | None:
    """3 finite floats from a tuple or list of 3 numbers or anything numpy reads as a (3,) array;
    None if it is not that (the caller names it)."""
    if (type(value) is tuple or type(value) is list) and len(value) == 3:
        x, y, z = value
        if type(x) in _PLAIN_NUMBERS and type(y) in _PLAIN_NUMBERS and type(z) in _PLAIN_NUMBERS:
            x, y, z = float(x), float(y), float(z)  # the common case, without numpy (a third of the cost)
            return (x, y, z) if math.isfinite(x) and math.isfinite(y) and math.isfinite(z) else None
    a = _numbers(value)
    if a is None or a.shape != (3,) or not np.isfinite(a).all():
        return None
    return float(a[0]), float(a[1]), float(a[2])


#: numpy kinds of values that are not numbers: text, bytes, booleans, raw records
_NOT_NUMBERS = frozenset("USbV")


def _numbers(value: Any) -> np.ndarray | None:
    """``value`` as a float64 array; None when it is not numbers (a string such as ``"0.5"`` is
    refused, not parsed: it is a bug in the caller, and numpy would read it silently)."""
    try:
        a = np.asarray(value)
        if a.dtype.kind in _NOT_NUMBERS:
            return None
        return np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _finite(value: float, what: str) -> float:
    x = value if type(value) is float else real_number(value)
    if x is None:
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    if not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return x


class Contacts(NamedTuple):
    """The contact points of a model at one state (:meth:`Simulation.contacts`), K of them: one
    per point of every shape–plane pair the filter keeps (docs/contact.md)."""

    node: np.ndarray  #: (K,) int: the node (body) of each point
    shape: np.ndarray  #: (K,) int: the shape id (``ModelBuilder.add_sphere`` ...) of each point
    gap: np.ndarray  #: (K,) [m]: distance to the plane, negative when it penetrates
    active: np.ndarray  #: (K,) bool: whether the point carries a force
    normal_force: np.ndarray  #: (K,) [N]: the normal force f_n >= 0 on the body
    friction_force: np.ndarray  #: (K, 3) [N]: the friction force on the body, world frame
    slip_speed: np.ndarray  #: (K,) [m/s]: the tangential speed of the contact point (active points)


class ContactImpulses(NamedTuple):
    """The points against hard ground planes and their impulses in the last step
    (:meth:`Simulation.contact_impulses`), K of them (``model.hard_contacts``' rows, docs/contact.md)."""

    node: np.ndarray  #: (K,) int: the node (body) of each point
    shape: np.ndarray  #: (K,) int: the shape id (``ModelBuilder.add_sphere`` ...) of each point
    plane: np.ndarray  #: (K,) int: the hard ground plane's id (``ModelBuilder.add_ground_plane``)
    normal_impulse: np.ndarray  #: (K,) [N s]: the normal impulse Λ_N >= 0 of the velocity jump
    friction_impulse: np.ndarray  #: (K, 2) [N s]: the friction impulse along the plane's tangents t₁, t₂
    tangents: np.ndarray  #: (K, 2, 3): the unit tangents t₁, t₂ of each point's plane (world frame)
    active: np.ndarray  #: (K,) bool: whether the point was closed at the end of the step


#: what the step-size control, advance_to and Batch answer for a model with hard joint limits or hard contact
NONSMOOTH = (
    "hard joint limits (limit_restitution) or hard contact (add_ground_plane(law='hard') or "
    "set_body_contact(law='hard'))"
)


class Simulation:
    """Time integration of a :class:`Model` with Kynema's Lie-group generalized-α scheme.

    Parameters
    ----------
    model : Model
        The built model (from :meth:`ModelBuilder.build` or a model file).
    params : StepParameters
        Step size h [s], spectral radius ρ∞, Newton tolerances and solver.
    consistent_initial_accelerations : bool or None, default None
        None computes the accelerations ``vd`` [m/s², rad/s²] and multipliers ``lam`` at
        t = 0 when no node was given an ``acceleration``; True always computes them; False
        uses the given ones (zero where none was given).
    initial_velocities : {"project", "check", "keep"}, default "project"
        What to do with initial velocities that violate the velocity constraints
        ``B v = ṙ`` (ṙ = 0 for joints and fixed BCs; the given velocities for prescribed BCs
        and rotation controls, whose rates kynemapy does not know).  ``"project"``: the least
        kinetic-energy change that satisfies them (velocities consistent to 1e-10 relative
        are left bit for bit as given); its size is :attr:`initial_velocity_correction`
        (N, 6) [m/s, rad/s] and a ``UserWarning`` names it.  ``"check"``: refuse with
        ``ValueError`` naming ``B v`` per violated constraint.  ``"keep"``: use them as given
        (Kynema-FMB's behaviour; the index-3 steps never remove the violation).

    Attributes
    ----------
    state : State
        The state (``q`` (N, 7), ``v``, ``vd``, ``a`` (N, 6), ``lam`` (C, 6), ...), updated
        in place by each step.
    inputs : Inputs
        Loads ``f`` (N, 6) [N, N m] and constraint inputs ``constraint_input`` (C, 7), read
        by each step.
    initial_velocity_correction : (N, 6) ndarray of float
        The change ``initial_velocities="project"`` made to the initial velocities
        [m/s, rad/s] (zeros when none).
    resume_path : str or None
        The result file this simulation continues (set by :meth:`restart`), else None.
    resume_every : int or None
        The spacing of the recorded steps of that file (its ``output_every``; None: none).
    resume_step_control : bool
        That file holds the rows of a step-controlled run (``run(..., control=...)``).

    Raises
    ------
    TypeError
        ``model`` is not a :class:`Model` or ``params`` not a :class:`StepParameters`.
    ValueError
        An unknown ``initial_velocities``, or, with ``"check"``, initial velocities that
        violate the constraints.
    ModelError
        A model that cannot be simulated (a node without equation or inertia, redundant
        constraints); a subclass of ``ValueError``.
    ConvergenceError
        The consistent initial accelerations cannot be computed (a singular system).
    """

    def __init__(
        self,
        model: Model,
        params: StepParameters,
        consistent_initial_accelerations: bool | None = None,
        initial_velocities: str = "project",
    ) -> None:
        if not isinstance(model, Model):
            raise TypeError(
                f"model must be a kynemapy Model (from ModelBuilder.build() or load_model), got {type(model).__name__}"
            )
        if not isinstance(params, StepParameters):
            raise TypeError(f"params must be a kynemapy.StepParameters, got {type(params).__name__}")
        if initial_velocities not in INITIAL_VELOCITY_MODES:
            raise ValueError(
                f"initial_velocities must be one of {', '.join(map(repr, INITIAL_VELOCITY_MODES))}, "
                f"got {initial_velocities!r}"
            )
        # the collector relaxed while the set-up makes its many small objects (numba's loaded
        # code keeps a large heap, which a full collection walks: tens of ms)
        relax()
        try:
            check_simulation(model, params.dynamic)  # a node without equation or inertia, named
            self._model = model
            # the model's node DOFs, constraint kinds and rows as Python ints, for the accessors' checks
            self._node_dofs = tuple(int(k) for k in model.node_dofs)
            self._kinds = tuple(int(k) for k in model.constraint_kind)
            self._n_rows = tuple(int(k) for k in model.constraint_n_rows)
            # the compiled kernels of body_frame and body_point, resolved on first use
            self._frame: Callable[..., None] | None = None
            self._point_motion: Callable[..., None] | None = None
            #: the hard hinge and slider limits (:mod:`kynemapy.run.joint_stops`), None without
            self._stops: JointStops | None = None
            stops = getattr(model, "joint_stops", None)
            hard = getattr(model, "hard_contacts", None)
            shapes = getattr(model, "hard_shapes", None)
            if any(t is not None and len(t) for t in (stops, hard, shapes)):  # scipy: with them only
                from kynemapy.run.joint_stops import JointStops

                self._stops = JointStops(self)
            self._params = params
            self._p = params.coefficients
            self._state, self._inputs = api.initial_state(model)
            self._workspace = new_workspace(model, params.max_iter, params.solver, params.geometric_stiffness)
            self.resume_path: str | None = None
            #: the spacing of the recorded steps of that file (its ``output_every``; None: not recorded)
            self.resume_every: int | None = None
            #: that file holds the rows of a step-controlled run (its /step_control columns)
            self.resume_step_control = False
            #: advance_rows' on_row while a call runs (None otherwise)
            self._on_row: Callable[[int], None] | None = None
            self._bind()
            check_constraints(self._workspace, self._data)
            reference, fallback = self._workspace.reference, self._workspace.fallback
            api.reference_factorization(self._workspace, params, at=(self._state, self._inputs, self._data))
            if self._workspace.reference is not reference or self._workspace.fallback is not fallback:
                self._bind()  # the Data holds the solver's arrays: a dense program is new, a grown LU
            #: (N, 6) change made to the initial velocities by ``initial_velocities="project"`` [m/s, rad/s]
            self.initial_velocity_correction = np.zeros((model.n_nodes, 6))
            if initial_velocities != "keep" and model.n_constraints:
                self._initial_velocities(initial_velocities == "project")
            solve = consistent_initial_accelerations
            if solve is None:
                solve = not bool(np.any(model.initial_vd_given))
            if solve:
                self.compute_consistent_accelerations()
            task(self._data, self._p, START)
            if self._stops is not None:
                self._stops.check_start()
        finally:
            restore()

    def _initial_velocities(self, project: bool) -> None:
        """Project the initial velocities onto ``B v = ṙ`` (warning with its size), or refuse them.

        The velocities change in place, so the Data stays bound unless the solver's arrays
        were replaced meanwhile (a grown LU); rebinding anyway cost 0.4-0.7 ms of the IEA
        15 MW rotor's ``Simulation()``."""
        solver = (self._workspace.reference, self._workspace.fallback)
        if project:
            residual, correction = project_velocities(self._workspace, self._state, self._inputs)
            self.initial_velocity_correction[...] = correction
            if np.any(correction != 0.0):
                node = int(np.argmax(np.abs(correction).max(axis=1)))
                warnings.warn(
                    "initial velocities projected onto the velocity constraints (B v = ṙ): largest change "
                    f"{np.abs(correction).max():.3g} (node {node}, Δv = {np.round(correction[node], 12).tolist()}); "
                    f"before: {describe(self._model, residual)}",
                    UserWarning,
                    stacklevel=3,
                )
        else:
            residual = velocity_residual(self._workspace, self._state, self._inputs)
            if not is_consistent(residual, self._state.v):
                raise ValueError(
                    "initial velocities violate the velocity constraints B v = ṙ (initial_velocities='check'): "
                    + describe(self._model, residual)
                )
        if self._workspace.reference is not solver[0] or self._workspace.fallback is not solver[1]:
            self._bind()

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError(
            "a kynemapy.Simulation cannot be pickled or copied (it holds the compiled engine's state): "
            "copy its state with sim.save_state() / sim.restore_state(), or sim.state.copy(); make another "
            "simulation of the model with kynemapy.Simulation(sim.model, sim.params), or resume a result file "
            "with Simulation.restart(path)"
        )

    def __copy__(self) -> NoReturn:
        self.__reduce_ex__(0)

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        self.__reduce_ex__(0)

    def _bind(self) -> None:
        """(Re)build the arenas tuple and the compiled step entry (after the arrays changed)."""
        self._data = self._workspace.data(self._state, self._inputs)
        self._iters1 = np.zeros(1, dtype=np.int64)
        self._out = np.zeros(6)
        self._errors = self._workspace.views["errors"]
        self._n_iter = self._workspace.views["n_iter"]
        # step(): the Newton errors and counts read through memoryviews (no numpy call)
        self._errors_buffer = memoryview(self._errors)
        self._n_iter_buffer = memoryview(self._n_iter)
        self._iters1_buffer = memoryview(self._iters1)
        # what a script reads and writes every step, through memoryviews (a third of numpy's cost);
        # the state and inputs are written in place, never replaced
        self._time_buffer = memoryview(self._state.time)
        self._step_buffer = memoryview(self._state.step)
        self._load_buffer = memoryview(self._inputs.f)
        self._input_buffer = memoryview(self._inputs.constraint_input)
        self._read_errors = error_readers(self._errors.shape[0])
        # the engine's entry with its arguments converted once (engine.stored_call): a step from
        # Python converts two arguments instead of the Data's ~80 arrays
        stored = StoredCall(run_task, (self._data, self._p, ADVANCE, 1, 0, NO_ROWS, 0, self._iters1, self._out))
        self._stored = stored  # Batch steps its members through their stored calls
        api.keep_stored(stored)  # the tasks on this Data (START, checks) use it too
        self._step_status = stored.status  # one step, every argument stored: returns the status
        self._run = stored.run  # run(p, task, n, every, rows, max_rows, iterations, out) on this Data
        refused = no_unknowns(self._model)
        if refused is not None:  # nothing to step (the compiled step would report NaN): say so instead

            def refuse(*_: Any) -> NoReturn:
                raise refused

            self._step_status = self._run = refuse
            return
        if self._stops is not None:
            self._with_stops()

    def _with_stops(self) -> None:
        """Make the step entries enforce the hard joint limits after each smooth step (one step
        per compiled call; the rows record the corrected state), a step in which an open contact
        point or stop closes split at the impact (:mod:`kynemapy.run.impact_event`)."""
        from kynemapy.run.impact_event import ImpactEvents

        smooth_status, smooth_run, stops = self._step_status, self._run, self._stops
        assert stops is not None
        state, iters1, p_own = self._state, self._iters1, self._p
        # the impact-time location (also stops.events): splits a step at a first impact
        events = ImpactEvents(self, stops, smooth_run, NO_ROWS, iters1, self._out)

        def status_with_stops() -> int:
            events.begin()
            status = smooth_status()
            if status == CONVERGED:
                events.correct(p_own)
                stops.step_done()
            return status

        def run_with_stops(
            p: np.ndarray,
            which: int,
            n: int,
            every: int,
            rows: np.ndarray,
            max_rows: int,
            iterations: np.ndarray,
            out: np.ndarray,
        ) -> tuple[int, int, int]:
            if which != ADVANCE:
                return smooth_run(p, which, n, every, rows, max_rows, iterations, out)
            done = recorded = 0
            while done < n:
                events.begin()
                status = smooth_run(p, ADVANCE, 1, 0, NO_ROWS, 0, iters1, out)[2]
                if status != CONVERGED:
                    return done, recorded, status
                events.correct(p)
                stops.step_done()
                n_iter = int(iters1[0])
                if done < iterations.shape[0]:
                    iterations[done] = n_iter
                done += 1
                if every > 0 and int(state.step[0]) % every == 0:
                    task(self._data, self._p, RECORD, n_iter, recorded, rows)
                    if self._on_row is not None:
                        self._on_row(recorded)
                    recorded += 1
                    if recorded >= max_rows:
                        break
            return done, recorded, CONVERGED

        self._step_status = status_with_stops
        self._run = run_with_stops

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
        """The packed model and the buffers of the compiled step (Newton matrix, last step's errors, ...)."""
        return self._workspace

    @property
    def data(self) -> Data:
        """The arenas of this simulation as the compiled phases take them (for run drivers)."""
        return self._data

    @property
    def coefficients(self) -> np.ndarray:
        """A copy of the coefficient vector ``p`` of the compiled phases for ``params``."""
        return self._p.copy()

    # ------------------------------------------------------------- stepping
    def compute_consistent_accelerations(self) -> None:
        """Solve the constrained equations of motion for ``vd`` and ``lam`` at the current q, v."""
        status = SOLVE_CAPACITY
        if self._step_status is self._stored.status:  # through the stored call: no new one to build
            status = self._task(INITIAL_ACCELERATIONS, 1)[2]
        if status == SOLVE_CAPACITY:  # the solver's arrays grow: through the workspace, then bound anew
            status = api.consistent_accelerations(self._workspace, self._state, self._inputs)
            self._bind()
        if status != 0:
            t = float(self._state.time[0])
            raise ConvergenceError(
                f"cannot compute consistent initial accelerations (step {int(self._state.step[0])}, t = {t:.9g} s): "
                + status_text(api.SINGULAR)
                + (_under_integrated(self._model) or singular_cause(self)),
                float(self._state.time[0]),
                int(self._state.step[0]),
                (),
                api.SINGULAR,
            )

    def step(self, throw: bool = True) -> StepInfo:
        """Advance one time step h.

        Parameters
        ----------
        throw : bool, default True
            On a failed step (the state is then unchanged) raise :class:`ConvergenceError`;
            False: return ``StepInfo(converged=False, ...)`` instead.

        Returns
        -------
        StepInfo
            ``(converged, iterations, errors, status)``: whether Newton converged, its
            iteration count, the error of each iteration and the engine's status code.

        Raises
        ------
        ConvergenceError
            The step failed and ``throw`` is True.
        """
        run = self._step_status  # as an attribute: `self._step_status()` is a LOAD_METHOD, which
        status = run()  # never specializes on a callable attribute (150 instructions a step more)
        if status == CONVERGED:  # the common case first, in as few Python operations as possible
            return _new_tuple(  # step_info's body, inline: a partial call costs 20 ns more
                StepInfo,
                (True, self._iters1_buffer[0], self._read_errors[self._n_iter_buffer[0]](self._errors_buffer), 0),
            )
        if status in RESUMABLE:
            status, _ = self.step_with()
        errors = tuple(self._errors.tolist()[: self._n_iter.item()])
        if status != CONVERGED:
            if throw:
                raise self._failure(status, errors)
            return step_info((False, self._iters1.item(), errors, int(status)))
        return step_info((True, self._iters1.item(), errors, CONVERGED))

    def _failure(self, status: int, errors: tuple[float, ...]) -> ConvergenceError:
        t = float(self._state.time[0])
        return ConvergenceError(
            f"step {int(self._state.step[0]) + 1} (t = {t:.9g} s → {t + self._params.h:.9g} s): "
            f"{failure_text(self, status, errors)} ({len(errors)} iteration(s))",
            t,
            int(self._state.step[0]),
            errors,
            int(status),
        )

    def check_coefficients(self, coefficients: np.ndarray) -> None:
        """Raise ``ValueError`` when this simulation cannot step with ``coefficients``.

        Parameters
        ----------
        coefficients : (P,) ndarray of float
            A coefficient vector (``StepParameters.coefficients``), e.g. another h's.

        Raises
        ------
        ValueError
            Not a vector of the engine's length, more Newton iterations than the simulation's
            ``max_iter`` holds, or the exact tangent (``geometric_stiffness=True``) where the
            simulation was made without it (its Newton matrix has no K^Φ slots).
        """
        p = np.asarray(coefficients)
        if p.shape != (P_SIZE,):
            raise ValueError(f"coefficients must be a ({P_SIZE},) vector (StepParameters.coefficients), got {p.shape}")
        if p[P_MAX_ITER] > self._params.max_iter:
            raise ValueError(
                f"coefficients allow {int(p[P_MAX_ITER])} Newton iterations, the simulation holds "
                f"{self._params.max_iter} (its StepParameters.max_iter)"
            )
        if p[P_ASSEMBLE_K] and not self._workspace.has_k:
            raise ValueError(
                "coefficients with the exact tangent (geometric_stiffness=True) need a simulation made with "
                "StepParameters(geometric_stiffness=True): this one's Newton matrix has no K^Φ slots"
            )

    def step_with(self, coefficients: np.ndarray | None = None) -> tuple[int, int]:
        """One step with a given coefficient vector, for run drivers (sub-steps of another h).

        The state is restored on failure; the sparse solver's fallback grows as needed.

        Parameters
        ----------
        coefficients : (P,) ndarray of float or None, default None
            The coefficient vector ``p`` of the compiled phases (see :attr:`coefficients`; a
            run driver's sub-steps use another h); None: the simulation's own, through its
            cheapest call.

        Returns
        -------
        status : int
            The engine's status code (``CONVERGED`` = 0 on success).
        n_iter : int
            The Newton iterations of the step.

        Raises
        ------
        ValueError
            ``coefficients`` this simulation cannot step with (:meth:`check_coefficients`).
        """
        if coefficients is not None:
            self.check_coefficients(coefficients)
        while True:
            if coefficients is None:
                status = self._step_status()
            else:
                status = self._run(coefficients, ADVANCE, 1, 0, NO_ROWS, 0, self._iters1, self._out)[2]
            if status not in RESUMABLE:
                return int(status), self._iters1_buffer[0]
            self.provide(status)

    def advance_rows(
        self,
        n_steps: int,
        every: int,
        rows: np.ndarray,
        max_rows: int,
        iterations: np.ndarray,
        on_row: Callable[[int], None] | None = None,
    ) -> tuple[int, int, int]:
        """Up to ``n_steps`` steps in one compiled call, recording output rows (for run drivers).

        Parameters
        ----------
        n_steps : int
            The most steps to take (>= 0).
        every : int
            Record a row into ``rows`` after every converged step whose counter is a multiple
            of ``every`` (> 0; 0 records none).
        rows : (R, width) ndarray of float
            Receives the recorded rows (the workspace's ``row_layout``), written in place.
        max_rows : int
            The most rows to record (<= R).
        iterations : (K,) ndarray of int64
            Receives the Newton iterations of each step taken (``iterations[i]``: step i),
            written in place for the first K steps (K = 0: none kept).
        on_row : callable, optional
            ``on_row(i)`` is called right after row ``i`` of ``rows`` is recorded, before the
            next step (the run driver records the hard contact's impulses of the step beside
            it); only for models with hard joint limits or hard contact, whose steps are one
            compiled call each.

        Returns
        -------
        steps : int
            The steps taken.
        rows_recorded : int
            The rows written into ``rows``.
        status : int
            The engine's status code: ``CONVERGED`` (0), a failure, or one of ``RESUMABLE``
            (``NEEDS_MEMORY``, ``NEEDS_UNIT``: call :meth:`provide` with it, then go on).
        """
        n, e, m = int(n_steps), int(every), int(max_rows)
        if on_row is None:
            return self._run(self._p, ADVANCE, n, e, rows, m, iterations, self._out)
        if self._stops is None:
            raise ValueError(
                "advance_rows: on_row needs a model with hard joint limits or hard contact (one compiled call a step)"
            )
        self._on_row = on_row
        try:
            return self._run(self._p, ADVANCE, n, e, rows, m, iterations, self._out)
        finally:
            self._on_row = None

    @property
    def jit_enabled(self) -> bool:
        """False when the kernels run as plain Python (``KYNEMAPY_DISABLE_JIT=1``)."""
        return hasattr(run_task, "compile")

    def _task(self, which: int, n: int = 0, out: np.ndarray | None = None) -> tuple[int, int, int]:
        """Run the engine's task ``which`` (not a step) on this simulation's Data with the
        acceleration coefficients (``out``: the stored call's buffer by default), providing the
        joint unit with drives first where the engine asks for it."""
        out = self._out if out is None else out
        result = self._run(ACCELERATION_COEFFICIENTS, which, n, 0, NO_ROWS, 0, self._iters1, out)
        if result[2] == NEEDS_UNIT:
            self.provide(NEEDS_UNIT)
            result = self._run(ACCELERATION_COEFFICIENTS, which, n, 0, NO_ROWS, 0, self._iters1, out)
        return result

    def grow_solver(self) -> None:
        """Double the capacity of the fallback sparse LU (after a ``NEEDS_MEMORY`` status)."""
        api.grow_fallback(self._workspace)
        self._bind()

    def provide(self, status: int) -> None:
        """Give the engine what a status of ``RESUMABLE`` asked for, so that the call that returned
        it can be repeated from the same step: after ``NEEDS_MEMORY`` larger arrays for the sparse
        LU (:meth:`grow_solver`), after ``NEEDS_UNIT`` the two-body joint unit with drives
        (compiled on first use: a servo was given to a model built without drives).

        Parameters
        ----------
        status : int
            The status a step or :meth:`advance_rows` returned, ``NEEDS_MEMORY`` or ``NEEDS_UNIT``.
        """
        if status == NEEDS_UNIT:
            fill_missing(self._data)
        else:
            self.grow_solver()

    def run(
        self,
        t_end: float | None = None,
        n_steps: int | None = None,
        output: str | os.PathLike[str] | None = None,
        every: int | None = None,
        block: int | None = None,
        progress: bool = False,
        loads: Callable[[Simulation, float], None] | None = None,
        adaptive: bool = False,
        max_halvings: int = 6,
        min_step: float | None = None,
        throw: bool = True,
        attrs: dict[str, Any] | None = None,
        overwrite: bool = False,
        control: StepControl | None = None,
    ) -> loop.RunInfo:
        """Run to ``t_end`` [s] (or ``n_steps`` steps), streaming results to an HDF5 file.

        Parameters
        ----------
        t_end : float or None, default None
            The end time [s]; a time between grid points is rounded up to a whole number of
            steps h from the current time.  Give exactly one of ``t_end`` and ``n_steps``.
        n_steps : int or None, default None
            The number of steps to take (>= 0), instead of ``t_end``.
        output : str or os.PathLike or None, default None
            The HDF5 result file (see :mod:`kynemapy.io`), checked writable before the first
            step; None records nothing.  Rows: the initial state (new file), every
            ``every``-th step and the last step.  If this simulation came from
            :meth:`restart` of the same file, the file is continued; any other existing file
            is refused (``FileExistsError``) unless ``overwrite``.  A file another live
            process writes is refused either way (:class:`kynemapy.io.lock.FileInUseError`,
            naming that process).  A model with hard contact (hard ground planes, the hard
            body law) also records, with each row, the impulses summed over the steps since the
            row before
            (:attr:`kynemapy.io.Result.hard_contact`, docs/contact.md "Hard contact in result
            files").
        every : int or None, default None
            Record every ``every``-th step (>= 1; None: 1, or for a continued file its own
            spacing, and another one is refused with ``ValueError``).
        block : int or None, default None
            A killed run loses fewer than ``block`` rows (>= 1; None: about 2 MiB of rows,
            64 to 16384).  Rows are recorded into two buffers of ``block // 2`` rows (the
            file's chunk); a background thread appends each full buffer while the stepping
            goes on (``block = 1``: each row is written before the next step, no thread).
        progress : bool, default False
            Draw a progress bar on stderr.
        loads : callable or None, default None
            ``loads(sim, t)``, called before every step with the time at its start [s]; it
            writes ``sim.inputs``.  Without it the steps run in compiled calls of about 0.25 s.
            (With ``control``: with the time at each step's end, :meth:`advance_to`.)
        adaptive : bool, default False
            Retry a failed step as two half steps, recursively up to ``max_halvings`` times
            and never below ``min_step``.  The main grid stays ``t = n h``; sub-steps lie on
            the grid of their own size.  :class:`RunInfo` counts the rejected attempts
            (``rejected``) and the smallest step size that converged (``min_step``).
        max_halvings : int, default 6
            The most times an adaptive step is halved (>= 1).
        min_step : float or None, default None
            The smallest sub-step size [s], in (0, h] (None: ``h / 2**max_halvings``): a step
            that fails at the smallest allowed size stops the run (raises, or
            ``converged=False`` with ``throw=False``), the state being that of the last
            converged step of size h.
        throw : bool, default True
            Raise :class:`ConvergenceError` when a step fails (everything converged so far is
            written, the state is that of the last converged step); False: return with
            ``converged=False``.
        attrs : dict of str to Any or None, default None
            Extra root attributes of the file (str, numbers, arrays; dicts and lists are
            stored as JSON).
        overwrite : bool, default False
            Replace an existing ``output`` file (False: refuse it, so that a run never
            silently destroys another run's results).
        control : StepControl or None, default None
            Step-size control (:meth:`advance_to`, either scheme) instead of fixed steps of h;
            needs ``t_end``.  The rows stay on the regular grid ``t0 + k · every · h`` (and
            ``t_end``), their states given by the scheme's own interpolation, and the file gets
            the per-row columns ``/step_control`` (step size, accepted and rejected steps since
            the row before, estimated error; :attr:`kynemapy.io.Result.step_control`).  The
            control runs in calls of ``block // 2`` rows, each ending exactly on its last row
            (the restart state); see :func:`kynemapy.run.controlled.run`.

        Returns
        -------
        RunInfo
            What the run did: steps, rows written, time reached, whether every step
            converged, Newton iterations, rejected sub-steps.

        Raises
        ------
        ConvergenceError
            A step failed (at the smallest allowed size when ``adaptive``) and ``throw``.
        FileExistsError
            ``output`` exists, is not continued, and ``overwrite`` is False.
        ValueError
            Neither or both of ``t_end`` and ``n_steps``, a ``t_end`` before the current
            time, or an invalid ``every``, ``block``, ``max_halvings`` or ``min_step``.
        TypeError
            ``loads`` is not callable.
        """
        if control is not None and self._stops is not None:
            raise ValueError(
                f"run(control=...) (step-size control) does not support {NONSMOOTH} yet: "
                "run with a fixed step (no control)"
            )
        if control is not None:
            from kynemapy.run import controlled

            if n_steps is not None or t_end is None:
                raise ValueError("run: with control, give t_end [s] (the control chooses the steps)")
            if adaptive:
                raise ValueError("run: adaptive halving does not apply with control (the control redoes failed steps)")
            return controlled.run(
                self,
                t_end=t_end,
                control=control,
                output=output,
                every=every,
                block=block,
                progress=progress,
                loads=loads,
                throw=throw,
                attrs=attrs,
                overwrite=overwrite,
            )
        return loop.run(
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
            min_step=min_step,
            throw=throw,
            attrs=attrs,
            overwrite=overwrite,
        )

    def advance_to(
        self,
        t_end: float,
        control: StepControl | None = None,
        output_times: Sequence[float] | np.ndarray | None = None,
        loads: Callable[[Simulation, float], None] | None = None,
    ) -> ControlledRun:
        """Advance to ``t_end`` [s] with step-size control (docs/step-control.md).

        Each step's local position error is estimated from the change of the algorithmic
        accelerations, ``h² |β − γ/2 + 1/12| |a_{n+1} − a_n|`` per node DOF, without its part
        along the constraint directions ``M⁻¹ Bᵀ``, and measured in the weighted RMS norm with
        weights ``atol + rtol |u|`` (1 rad for rotations; multipliers excluded).  A step with a
        norm above 1, or whose Newton iteration fails, is redone from the saved state with a
        smaller h; the next h is ``h · min(fac_max, max(fac_min, safety · err^(−1/3)))``
        (exponent 1/2 with ``scope="run"``).
        Nothing is written to a file: the accepted steps and the dense output at
        ``output_times`` (cubic Hermite interpolation) are returned.
        ``StepControl(scheme="extrapolated")`` selects the fourth-order Richardson extrapolation
        of the same step instead (:mod:`kynemapy.run.extrapolation`: h, h/2 and h/4 over the
        whole interval, combined on the Lie group, with a global error estimate).

        Parameters
        ----------
        t_end : float
            The end time [s] (>= the current time), reached exactly.
        control : StepControl or None, default None
            Tolerances and step-size limits (None: ``StepControl()``).
        output_times : (T,) array_like of float or None, default None
            Increasing times in [current time, ``t_end``] [s] at which to return the state.
        loads : callable or None, default None
            ``loads(sim, t)``, called before every attempt with the time at its end [s], where
            generalized-α evaluates its equilibrium (``scheme="extrapolated"``: before every
            step of each level, likewise; that keeps the estimate true and the extrapolation's
            fourth order for loads that vary in time).

        Returns
        -------
        ControlledRun
            Per accepted step its end time, size and estimated error; the counts of accepted
            and rejected steps; the dense output ``q``, ``v`` at ``output_times``.

        Raises
        ------
        ConvergenceError
            A step is rejected at ``h_min`` or ``max_attempts`` times; the state is that of
            the last accepted step.
        ValueError
            A ``t_end`` before the current time, ``output_times`` not increasing within the
            run, or a static simulation.
        TypeError
            ``control`` is not a :class:`StepControl` or ``loads`` not callable.
        """
        if self._stops is not None:
            raise ValueError(
                f"advance_to (step-size control) does not support {NONSMOOTH} yet: "
                "use step(), advance(), rollout() or run() with a fixed step"
            )
        control = StepControl() if control is None else control
        if isinstance(control, StepControl) and control.scheme == "extrapolated":
            from kynemapy.run import extrapolation

            return extrapolation.advance_to(self, t_end, control, output_times=output_times, loads=loads)
        return stepcontrol.advance_to(self, t_end, control, output_times=output_times, loads=loads)

    @classmethod
    def restart(cls, path: str | os.PathLike[str], params: StepParameters | None = None) -> Simulation:
        """A simulation positioned at the last committed step of a result file.

        Continuing it (``run(..., output=path)`` appends to the same file) reproduces an
        uninterrupted run bit for bit: the file's restart data holds the state, the inputs and
        what the kinds remember of the run (the points touching under the hard body law); a
        file written before kynemapy kept the touching points starts with those of its state.

        Parameters
        ----------
        path : str or os.PathLike
            The HDF5 result file (written by :meth:`run`).
        params : StepParameters or None, default None
            The step parameters to go on with (None: the file's).

        Returns
        -------
        Simulation
            The model of the file, in its last committed state and inputs, with
            :attr:`resume_path` and :attr:`resume_every` set.

        Raises
        ------
        kynemapy.io.lock.FileInUseError
            A live process still writes the file.
        ValueError
            The file holds no restart data.
        """
        from kynemapy.io.hdf5 import read  # h5py on first use only
        from kynemapy.io.lock import FileInUseError, holder_of

        holder = holder_of(path)
        if holder is not None:  # its rows and restart slot are still moving: never continued
            raise FileInUseError(
                f"{os.fspath(path)} is being written by process {holder.get('pid', '?')} on "
                f"{holder.get('host', '?')}; a file a live process writes is never resumed: wait for it "
                f"to end, or stop it (kill {holder.get('pid', 'PID')}) and resume then",
                os.fspath(path),
                holder,
            )
        result = read(path)
        if result.restart is None:
            raise ValueError(f"{os.fspath(path)}: no restart data for the {result.committed} committed rows")
        sim = cls(
            result.model, params or result.params, consistent_initial_accelerations=False, initial_velocities="keep"
        )
        state, inputs = result.restart_state()
        sim._state.assign(state)
        sim._inputs.f[...] = inputs.f
        sim._inputs.constraint_input[...] = inputs.constraint_input
        kept = result.restart_memory()  # the kinds' memories of the run (contact's touching points)
        for name, keeper in keepers(sim).items():
            if name in kept:
                keeper.load(kept[name])
        sim.resume_path = os.fspath(path)
        every = result.attrs.get("output_every")
        sim.resume_every = None if every is None else int(every)
        sim.resume_step_control = result.step_control is not None
        return sim

    def advance(self, n_steps: int, throw: bool = True) -> np.ndarray:
        """Run ``n_steps`` steps inside one compiled call (inputs held constant).

        Stops at the first failed step (state as before that step) and raises unless
        ``throw`` is False.

        Parameters
        ----------
        n_steps : int
            The number of steps (>= 0).
        throw : bool, default True
            Raise :class:`ConvergenceError` at a failed step; False: return the iterations of
            the steps completed before it.

        Returns
        -------
        (n,) ndarray of int64
            The Newton iterations of each completed step (n <= ``n_steps``).

        Raises
        ------
        ValueError
            ``n_steps`` is not an integer >= 0.
        ConvergenceError
            A step failed and ``throw`` is True.
        """
        if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
            raise ValueError(f"advance: n_steps must be an integer >= 0, got {n_steps!r}")
        iterations = np.zeros(int(n_steps), dtype=np.int64)
        done, status = 0, CONVERGED
        while done < int(n_steps):
            steps, _, status = self.advance_rows(int(n_steps) - done, 0, NO_ROWS, 0, iterations[done:])
            done += steps
            if status not in RESUMABLE:
                break
            self.provide(status)  # larger sparse factors or the joint unit with drives: go on from the same step
        if status != CONVERGED and throw:
            n_iter = self._workspace.n_iter
            raise self._failure(status, tuple(self._workspace.errors[:n_iter].tolist()))
        return iterations[:done]

    def rollout(self, n_steps: int, every: int = 1, throw: bool = True) -> dict[str, np.ndarray]:
        """Run ``n_steps`` steps in compiled calls (inputs held constant), keeping rows in memory.

        Parameters
        ----------
        n_steps : int
            The number of steps (>= 0).
        every : int, default 1
            Keep every ``every``-th state (by step counter; >= 1).
        throw : bool, default True
            Raise :class:`ConvergenceError` at a failed step; False: stop there and return
            the rows up to it.

        Returns
        -------
        dict of str to ndarray
            The arrays of :func:`kynemapy.io.read`, R rows, the current state first as row 0:
            ``time`` (R,) [s], ``step`` (R,), ``q`` (R, N, 7), ``v``, ``vd``, ``a`` (R, N, 6),
            ``lam`` (R, C, 6), ``constraint_output``, ``iterations``, ``error``, energies [J]
            and momenta (see :mod:`kynemapy.engine.rows`).

        Raises
        ------
        ValueError
            ``n_steps`` is not an integer >= 0 or ``every`` not one >= 1.
        ConvergenceError
            A step failed and ``throw`` is True.
        """
        if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
            raise ValueError(f"rollout: n_steps must be an integer >= 0, got {n_steps!r}")
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"rollout: every must be an integer >= 1, got {every!r}")
        layout = self._workspace.row_layout
        first, every = self.step_count, int(every)
        n_rows = 1 + (first + int(n_steps)) // every - first // every  # row 0, then the multiples of every
        rows = np.zeros((n_rows, layout.width))
        task(self._data, self._p, RECORD, self._workspace.n_iter, 0, rows)
        rows[0, layout.offsets["iterations"]] = 0
        rows[0, layout.offsets["error"]] = 0.0
        iterations = np.zeros(0, dtype=np.int64)
        done, recorded, status = 0, 1, CONVERGED
        while done < int(n_steps):
            steps, got, status = self.advance_rows(
                int(n_steps) - done, int(every), rows[recorded:], n_rows - recorded, iterations
            )
            done += steps
            recorded += got
            if status not in RESUMABLE:
                break
            self.provide(status)
        fill_rows(self._data, rows[:recorded])
        out = split_rows(layout, rows[:recorded])
        if status != CONVERGED and throw:
            n_iter = self._workspace.n_iter
            raise self._failure(status, tuple(self._workspace.errors[:n_iter].tolist()))
        return out

    # --------------------------------------------------------------- inputs
    def set_load(
        self, node: int, force: np.ndarray | tuple = (0.0, 0.0, 0.0), moment: np.ndarray | tuple = (0.0, 0.0, 0.0)
    ) -> None:
        """Set the external force and moment on a node, held until changed.

        Parameters
        ----------
        node : int
            The node id.
        force : (3,) array_like of float, default (0, 0, 0)
            The force [N], inertial frame.
        moment : (3,) array_like of float, default (0, 0, 0)
            The moment [N m], inertial frame.

        Raises
        ------
        ValueError
            An unknown node, a node with nothing attached (no mass, spring or constraint),
            or a force or moment that is not 3 finite numbers.
        """
        node = self._node(node)
        f = _vector3(force)
        if f is None:
            raise ValueError(f"load on node {node}: the force [N] must be 3 finite numbers, got {force!r}")
        m = _vector3(moment)
        if m is None:
            raise ValueError(f"load on node {node}: the moment [N m] must be 3 finite numbers, got {moment!r}")
        if not self._node_dofs[node]:
            raise ValueError(
                f"load on node {node}: the node has nothing attached (no mass, spring or constraint), "
                f"so a load on it would be ignored"
            )
        row = self._load_buffer
        row[node, 0], row[node, 1], row[node, 2] = f
        row[node, 3], row[node, 4], row[node, 5] = m

    def _node(self, node: int) -> int:
        return _checked_id(node, len(self._node_dofs), "node", "node", "")

    def _constraint_id(self, cid: int, what: str) -> int:
        """``cid`` as an int, refused (named by ``what``) unless it is a constraint of the model."""
        return _checked_id(cid, len(self._kinds), "cid", "constraint", f"{what}: ")

    def _constraint(self, cid: int, what: str) -> int:
        cid = self._constraint_id(cid, what)
        kind = self._kinds[cid]
        if kind not in kinds.ACCEPTS[what]:
            raise ValueError(f"constraint {cid} is a {kinds.KIND_NAMES[kind]}, which has no {what}")
        return cid

    def set_prescribed_displacement(
        self, cid: int, u: np.ndarray | tuple, rotation: np.ndarray | tuple = (1.0, 0.0, 0.0, 0.0)
    ) -> None:
        """Set the displacement and rotation of a prescribed BC for the next step.

        Parameters
        ----------
        cid : int
            The constraint id of the prescribed BC.
        u : (3,) array_like of float
            The prescribed displacement [m], inertial frame.
        rotation : (4,) array_like of float, default (1, 0, 0, 0)
            The prescribed rotation, a quaternion ``(w, x, y, z)``.

        Raises
        ------
        ValueError
            ``cid`` is not a prescribed BC, or the values are not 3 + 4 finite numbers.
        """
        cid = self._constraint(cid, "prescribed displacement")
        parts = _numbers(u), _numbers(rotation)
        value = None if any(x is None for x in parts) else np.concatenate([parts[0].reshape(-1), parts[1].reshape(-1)])
        if value is None or value.shape != (7,) or not np.all(np.isfinite(value)):
            raise ValueError(
                f"constraint {cid}: prescribed displacement must be 3 + 4 finite numbers, got u = {u!r}, "
                f"rotation = {rotation!r}"
            )
        self.inputs.constraint_input[cid] = value

    def set_torque(self, cid: int, torque: float) -> None:
        """Torque τ [N m] of a hinge joint, held until changed: ``+τ`` about the axis on body_b,
        ``−τ`` on body_a (the sign rule of every input, docs/joints.md).

        On a Kynema revolute joint it is deprecated (a :class:`DeprecationWarning`) and sets
        Kynema's brake torque as before (it acts as −τ): use :meth:`set_brake_torque`.

        Parameters
        ----------
        cid : int
            The constraint id of the hinge joint.
        torque : float [N m]
            The torque τ about the joint axis.
        """
        cid = self._constraint(cid, "torque input")
        if self._kinds[cid] == kinds.REVOLUTE_JOINT:
            warnings.warn(
                f"set_torque on constraint {cid}, a Kynema revolute joint, sets Kynema's brake torque (it acts "
                f"as -torque); this use is deprecated: call set_brake_torque (same value, same meaning)",
                DeprecationWarning,
                stacklevel=2,
            )
        self._input_buffer[cid, 0] = _finite(torque, f"constraint {cid} torque")

    def set_brake_torque(self, cid: int, torque: float) -> None:
        """Set Kynema's brake torque of a Kynema revolute joint, held until changed.

        It acts as ``−τ`` about the joint axis on the target node (Kynema's input, kept for
        Kynema parity).

        Parameters
        ----------
        cid : int
            The constraint id of the revolute joint.
        torque : float [N m]
            The brake torque τ.
        """
        cid = self._constraint(cid, "brake torque input")
        self._input_buffer[cid, 0] = _finite(torque, f"constraint {cid} brake torque")

    def set_force(self, cid: int, force: float) -> None:
        """Set the force of a slider joint, held until changed.

        Parameters
        ----------
        cid : int
            The constraint id of the slider joint.
        force : float [N]
            The force F, on body_b along the axis (−F on body_a).
        """
        cid = self._constraint(cid, "force input")
        self._input_buffer[cid, 0] = _finite(force, f"constraint {cid} force")

    def set_servo(
        self,
        cid: int,
        kp: float,
        kd: float = 0.0,
        position: float = 0.0,
        rate: float = 0.0,
        feedforward: float = 0.0,
        limit: float | None = None,
    ) -> None:
        """Set (or with ``kp = kd = feedforward = 0`` remove) the PD servo of a hinge or slider
        joint, held until changed: it applies ``sat(kp (position − x) + kd (rate − ẋ) +
        feedforward)`` about (along) the axis, x the joint output (:meth:`joint_output`), ``sat``
        clipping to ``±limit`` (see :meth:`kynemapy.ModelBuilder.set_servo`, docs/joints.md).

        Parameters
        ----------
        cid : int
            The constraint id of a hinge or slider joint.
        kp : float [N m/rad or N/m]
            Position gain, >= 0.
        kd : float [N m s/rad or N s/m], default 0.0
            Rate gain, >= 0.
        position : float [rad or m], default 0.0
            Target position.
        rate : float [rad/s or m/s], default 0.0
            Target rate.
        feedforward : float [N m or N], default 0.0
            Added before the limit.
        limit : float [N m or N] or None, default None
            Effort limit (> 0); None or ``inf``: none.
        """
        cid = self._constraint(cid, "servo")
        try:
            values = servo_inputs(kp, kd, position, rate, feedforward, limit)
        except ValueError as exc:
            raise ValueError(f"constraint {cid}: {exc}") from None
        self.inputs.constraint_input[cid, 1:] = values

    def set_servo_target(self, cid: int, position: float, rate: float = 0.0, feedforward: float = 0.0) -> None:
        """Set the target of a hinge's or slider's servo (gains and limit as they are), held until changed.

        Parameters
        ----------
        cid : int
            The constraint id of a hinge or slider joint.
        position : float [rad or m]
            Target position.
        rate : float [rad/s or m/s], default 0.0
            Target rate.
        feedforward : float [N m or N], default 0.0
            Added before the limit.
        """
        cid = self._constraint(cid, "servo")
        self._input_buffer[cid, 3] = _finite(position, f"constraint {cid} servo position")
        self._input_buffer[cid, 4] = _finite(rate, f"constraint {cid} servo rate")
        self._input_buffer[cid, 5] = _finite(feedforward, f"constraint {cid} servo feedforward")

    def joint_effort(self, cid: int) -> float:
        """The total torque [N m] about a hinge's axis (force [N] along a slider's) that the joint's
        input (:meth:`set_torque`, :meth:`set_force`), spring, damper, Coulomb friction and servo
        apply to body_b at the current state (−it on body_a); not the constraint's reaction
        (:meth:`reaction`).

        Parameters
        ----------
        cid : int
            The constraint id of a hinge or slider joint.

        Returns
        -------
        float
            The torque [N m] or force [N].
        """
        cid = self._constraint(cid, "servo")
        self._task(REACTION, cid)
        load = self._workspace.views["con_load"][cid]
        geom = self._model.constraint_geometry[cid]
        base = int(self._model.constraint_node[cid, 0])
        # the residual holds −τ n on the target's moment rows (hinge) or −F n on its force rows
        # (slider), n = R_base a₁; a joint given with body_b the ground has them swapped, with
        # the axis reversed: the same τ on body_b
        n = geom[0, 1] if base < 0 else rotation_matrices(self._state.q[base, 3:7]) @ geom[0, 1]
        rows = load[1, 3:6] if self._kinds[cid] == kinds.HINGE_JOINT else load[1, 0:3]
        return float(-np.dot(rows, n))

    def set_angle(self, cid: int, angle: float) -> None:
        """Set the commanded angle of a rotation control.

        Parameters
        ----------
        cid : int
            The constraint id of the rotation control.
        angle : float [rad]
            The commanded angle.
        """
        cid = self._constraint(cid, "angle input")
        self._input_buffer[cid, 0] = _finite(angle, f"constraint {cid} angle")

    # -------------------------------------------------------------- outputs
    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self._time_buffer[0]

    @property
    def step_count(self) -> int:
        """Number of converged steps."""
        return self._step_buffer[0]

    @property
    def joint_stops(self) -> JointStops | None:
        """The hard hinge and slider limits (``limit_restitution``) and the points against hard
        ground planes (its ``contacts``) enforced after each step, with the last step's impulses
        (:class:`kynemapy.run.joint_stops.JointStops`); None without either."""
        return self._stops

    def stop_impulse(self, cid: int) -> float:
        """The impulse of a joint's hard limit in the last step.

        The velocity jump's impulse Λ of Newton's impact law (docs/joints.md, "Hard joint
        limits"): positive when the lower stop pushes (towards increasing angle or travel),
        negative for the upper one, 0 when the joint was clear of its stops.  Over a step of a
        joint resting on its stop, Λ / h is the stop's torque [N m] (force [N]).

        Parameters
        ----------
        cid : int
            The constraint id of a hinge or slider with hard limits.

        Returns
        -------
        float
            Λ [N m s for a hinge, N s for a slider].

        Raises
        ------
        ValueError
            ``cid`` is not a joint with hard limits.
        """
        cid = self._constraint_id(cid, "stop_impulse")
        stops = self._stops
        where = np.flatnonzero(stops.cid == cid) if stops is not None else np.zeros(0, dtype=np.int64)
        if where.size == 0:
            raise ValueError(f"stop_impulse: constraint {cid} has no hard limits (limits with limit_restitution)")
        return float(stops.impulse[where[0]])  # type: ignore[union-attr]

    def multipliers(self, cid: int) -> np.ndarray:
        """The Lagrange multipliers of a constraint.

        Parameters
        ----------
        cid : int
            The constraint id.

        Returns
        -------
        (n_rows,) ndarray of float
            A copy of its multipliers λ, one per constraint row [N for force rows, N m for
            moment rows].
        """
        cid = self._constraint_id(cid, "multipliers")
        return self._state.lam[cid, : self._n_rows[cid]].copy()

    def joint_output(self, cid: int) -> np.ndarray:
        """The (3,) outputs of a constraint after the last step (or at t = 0).

        Hinge joint: angle of body_b relative to body_a about the axis [rad] (right-handed,
        0 at the reference configuration, continuous across turns), its rate [rad/s] and
        acceleration [rad/s²].  Slider joint: displacement of body_b's joint point along the
        axis [m], rate [m/s], acceleration [m/s²].  Kynema revolute joint: azimuth
        [rad], speed [rad/s], acceleration [rad/s²] (zero until the first step).  Other kinds
        (point-on-line, point-on-plane and generic joints included): zeros.

        Parameters
        ----------
        cid : int
            The constraint id.

        Returns
        -------
        (3,) ndarray of float
            A copy of (position, rate, acceleration) as above.
        """
        return self._state.constraint_output[self._constraint_id(cid, "joint_output")].copy()

    def reaction(self, cid: int) -> tuple[np.ndarray, np.ndarray]:
        """The force and torque a constraint exerts on its body, world frame.

        Two-body joints: the load on body_b (on body_a when body_b is the ground), torque about
        the joint point as carried by that body (``x + R(r) d``; for a distance constraint,
        its ``point_b``).  Kynema's kinds: the load on the target node, torque about that node.
        From the multipliers only: a hinge's input torque or a slider's input force is not
        included (it is known: see :meth:`set_torque`, :meth:`set_force`).  Computed as
        ``−B_tᵀλ`` at the current state: the constraint's share of the target's equation of motion.

        Parameters
        ----------
        cid : int
            The constraint id.

        Returns
        -------
        force : (3,) ndarray of float
            The force [N].
        torque : (3,) ndarray of float
            The torque [N m].
        """
        cid = self._constraint_id(cid, "reaction")
        out = self._out  # the stored call's: a linearization with exact gradients, then the reaction
        self._task(REACTION, cid, out)
        return out[:3].copy(), out[3:].copy()

    def contacts(self) -> Contacts:
        """The contact points at the current state: gaps, normal and friction forces, slip.

        Evaluated afresh at the current state (one linearization, as :meth:`reaction`), so after a
        step they are those of the converged state.  The force on a body is the sum over its
        active points of ``normal_force · n + friction_force``, applied at each point (docs/contact.md).

        Returns
        -------
        Contacts
            Arrays over the model's K contact points (K = ``model.n_contacts``; all empty
            without contact).
        """
        return self._contact_table(CONTACTS, self.model.contact_node, self.model.contact_shape)

    def contact_impulses(self) -> ContactImpulses:
        """The impulses of the points against hard ground planes in the last step (docs/contact.md,
        "Hard contact").

        The velocity jump's impulses of the decoupled nonsmooth step: over a step of a body
        resting on a plane, ``normal_impulse / h`` is the point's normal force [N]; the friction
        impulse obeys ``|friction_impulse| <= μ normal_impulse`` (opposite to the point's slip
        where it slides).  Points apart from their plane (or before the first step) have zero
        impulses and ``active`` False.

        Returns
        -------
        ContactImpulses
            Arrays over the model's K hard contact points (K = ``len(model.hard_contacts)``; all
            empty without hard planes).
        """
        contacts = self._stops.contacts if self._stops is not None else None
        if contacts is None:
            return ContactImpulses(
                node=np.zeros(0, dtype=np.int64),
                shape=np.zeros(0, dtype=np.int64),
                plane=np.zeros(0, dtype=np.int64),
                normal_impulse=np.zeros(0),
                friction_impulse=np.zeros((0, 2)),
                tangents=np.zeros((0, 2, 3)),
                active=np.zeros(0, dtype=bool),
            )
        return ContactImpulses(
            node=contacts.node.copy(),
            shape=contacts.shape.copy(),
            plane=contacts.plane.copy(),
            normal_impulse=contacts.normal_impulse.copy(),
            friction_impulse=contacts.friction_impulse.copy(),
            tangents=contacts.tangent.copy(),
            active=contacts.active.copy(),
        )

    def body_impulses(self) -> dict[str, np.ndarray]:
        """The contacts between shapes closed at the end of the last step under the hard body law
        (``set_body_contact(law="hard")``, docs/contact.md "Hard contact between bodies"), C of
        them; empty arrays without that law.

        Returns
        -------
        dict of str to ndarray
            ``shape_a``, ``shape_b``, ``node_a``, ``node_b`` (C,) int (A the lower shape id);
            ``point`` (C, 3) [m] (the middle of the two shapes' points), ``normal`` (C, 3) (unit,
            from A to B), ``tangents`` (C, 2, 3), ``gap`` (C,) [m], ``normal_impulse`` (C,) [N s]
            (on B along the normal; A gets the opposite), ``friction_impulse`` (C, 2) [N s] along
            the tangents (on B), ``position_impulse`` (C,) [N s²] of the position correction.
            Over a step at rest, an impulse over h is the force [N].  The points against hard
            ground planes are in :meth:`contact_impulses`.
        """
        bodies = self._stops.bodies if self._stops is not None else None
        if bodies is None:
            from kynemapy.run.hard_bodies import empty_record

            return empty_record()
        return {name: value.copy() for name, value in bodies.last.items()}

    def contact_pairs(self) -> Contacts:
        """The candidate body–body pairs at the current state (:meth:`contacts` for pairs,
        docs/contact.md): ``node`` and ``shape`` are (P, 2), body 1's (a sphere, a box's corner, a
        capsule: its axis against another capsule, an end sphere against a box) and body 2's (a
        sphere, capsule or box); ``gap`` is the distance between the shapes' surfaces [m] and
        ``friction_force`` the one on body 2 (body 1 gets ``−(normal_force · n + friction_force)``,
        n from body 1's closest point to body 2's)."""
        return self._contact_table(PAIRS, self.model.pair_node, self.model.pair_shape)

    def _contact_table(self, which: int, node: np.ndarray, shape: np.ndarray) -> Contacts:
        table = self.data.tables[which]
        if table.nodes.shape[0] > 0:  # evaluate at the current state (one linearization)
            self._task(LINEARIZE)
        out = np.array(table.out)
        normal = out[:, OUT_NORMAL]
        return Contacts(
            node=np.array(node),
            shape=np.array(shape),
            gap=out[:, OUT_GAP].copy(),
            active=normal > 0.0,
            normal_force=normal.copy(),
            friction_force=out[:, OUT_FRICTION : OUT_FRICTION + 3].copy(),
            slip_speed=out[:, OUT_SLIP].copy(),
        )

    def body_frame(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """World frame of a body (node) in the current state.

        Parameters
        ----------
        node : int
            The node id of the body.

        Returns
        -------
        origin : (3,) ndarray of float
            The node's world position ``X + u`` [m].
        rotation : (3, 3) ndarray of float
            The body-to-world rotation matrix ``R(r ⊗ r0)`` [-]: its columns are the body's
            axes in world coordinates (at the reference configuration the node's
            ``orientation``).

        Raises
        ------
        ValueError
            ``node`` is not a node id of the model.
        """
        n = self._body_node(node, "body_frame")
        origin, rotation = np.empty(3), np.empty((3, 3))
        args = (self._model.x0[n], self._state.q[n], origin, rotation)
        frame = self._frame
        if frame is None:  # the compiled kernel's entry, resolved once (a call through numba's dispatcher costs 1 µs)
            frame = self._frame = entry(node_frame, args)
        frame(*args)
        return origin, rotation

    def body_point(
        self, node: int, point: np.ndarray | tuple, frame: str = "body"
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World position, velocity and acceleration of a point fixed in a body (a marker, an
        offset centre of mass), in the current state.

        With ``ρ = R s`` the current lever from the node to the point, ``ω``, ``ω̇`` the body's
        angular velocity and acceleration and ``u̇``, ``ü`` the node's: position ``X + u + ρ``,
        velocity ``u̇ + ω × ρ``, acceleration ``ü + ω̇ × ρ + ω × (ω × ρ)`` (the state's ``vd``,
        not the algorithmic acceleration ``a``).

        Parameters
        ----------
        node : int
            The node id of the body.
        point : (3,) or (k, 3) array_like of float [m]
            The point(s).
        frame : {"body", "reference"}, default "body"
            ``"body"``: ``point`` in the body's frame, relative to the node (its axes the
            columns of :meth:`body_frame`'s rotation); ``"reference"``: ``point`` in world
            coordinates at the reference configuration (as the joints take their points).

        Returns
        -------
        position : (3,) or (k, 3) ndarray of float
            World position [m], shaped like ``point``.
        velocity : (3,) or (k, 3) ndarray of float
            World velocity [m/s].
        acceleration : (3,) or (k, 3) ndarray of float
            World acceleration [m/s²].

        Raises
        ------
        ValueError
            An unknown ``node`` or ``frame``, or ``point`` not of shape (3,) or (k, 3) or not
            finite.
        """
        n = self._body_node(node, "body_point")
        if frame not in ("body", "reference"):
            raise ValueError(f"body_point: frame must be 'body' or 'reference', got {frame!r}")
        one = _vector3(point)  # the common case, one point as 3 numbers, without numpy's checks
        if one is not None:
            s = np.array((one,))
            shape: tuple[int, ...] = (3,)
        else:
            try:
                s = np.asarray(point, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"body_point: point must be 3 numbers [m] or a (k, 3) array, got {point!r}") from exc
            if s.shape[-1:] != (3,) or s.ndim > 2 or not np.all(np.isfinite(s)):
                raise ValueError(
                    f"body_point: point must be 3 finite numbers [m] or a (k, 3) array of them, got shape {s.shape}"
                )
            shape = s.shape
            s = np.ascontiguousarray(s.reshape(-1, 3))
        position, velocity, acceleration = np.empty(s.shape), np.empty(s.shape), np.empty(s.shape)
        state = self._state
        args = (
            self._model.x0[n], state.q[n], state.v[n], state.vd[n], s, frame == "reference",
            np.empty(3), np.empty((3, 3)), position, velocity, acceleration,
        )  # fmt: skip
        motion = self._point_motion
        if motion is None:  # the compiled kernel's entry, resolved once
            motion = self._point_motion = entry(point_motion, args)
        motion(*args)
        return position.reshape(shape), velocity.reshape(shape), acceleration.reshape(shape)

    def _body_node(self, node: int, what: str) -> int:
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
            raise ValueError(f"{what}: node must be a node id (an integer), got {node!r}")
        if not 0 <= int(node) < self.model.n_nodes:
            raise ValueError(f"{what}: unknown node id {node} (the model has {self.model.n_nodes} nodes)")
        return int(node)

    def revolute_output(self, cid: int) -> np.ndarray:
        """Deprecated alias (a :class:`DeprecationWarning`) of :meth:`joint_output`.

        Parameters
        ----------
        cid : int
            The constraint id of a Kynema revolute joint.

        Returns
        -------
        (3,) ndarray of float
            Azimuth [rad], speed [rad/s], acceleration [rad/s²].
        """
        warnings.warn(
            "Simulation.revolute_output is deprecated: joint_output returns the same for a revolute joint",
            DeprecationWarning,
            stacklevel=2,
        )
        cid = self._constraint(cid, "revolute output")
        return self.state.constraint_output[cid].copy()

    def save_state(self) -> State:
        """A copy of the state (restore it with :meth:`restore_state`).

        Returns
        -------
        State
            An independent copy of :attr:`state`.

        Notes
        -----
        Under the hard body law the next step also depends on the points touching at its start
        (the contact kind's memory of the run, not part of :class:`State`): a result file keeps
        them for :meth:`restart`, but :meth:`restore_state` leaves the simulation's own, so a
        step from a restored state of such a model may differ from the first one by the
        position correction's friction (docs/contact.md).
        """
        return self.state.copy()

    def restore_state(self, saved: State) -> None:
        """Put a saved state back (in place).

        Parameters
        ----------
        saved : State
            A state of this model, from :meth:`save_state`.
        """
        self.state.assign(saved)


def simulate(
    model: Model,
    params: StepParameters,
    t_end: float | None = None,
    n_steps: int | None = None,
    output: str | os.PathLike[str] | None = None,
    **run_options: Any,
) -> tuple[Simulation, loop.RunInfo]:
    """Build a :class:`Simulation` and :meth:`~Simulation.run` it.

    Parameters
    ----------
    model : Model
        The built model.
    params : StepParameters
        The step parameters.
    t_end : float or None, default None
        The end time [s]; give it or ``n_steps``.
    n_steps : int or None, default None
        The number of steps, instead of ``t_end``.
    output : str or os.PathLike or None, default None
        The HDF5 result file (None: nothing recorded), as in :meth:`Simulation.run`.
    **run_options : Any
        The other options of :meth:`Simulation.run`: ``every, block, progress, loads,
        adaptive, max_halvings, min_step, throw, attrs, overwrite``.

    Returns
    -------
    sim : Simulation
        The simulation, in its final state.
    info : RunInfo
        What the run did.
    """
    sim = Simulation(model, params)
    info = sim.run(t_end=t_end, n_steps=n_steps, output=output, **run_options)
    return sim, info


def _under_integrated(model: Model) -> str:
    """The cause of a singular matrix that under-integrated beam elements give, or ''."""
    n_beams = int(getattr(model, "n_beams", 0) or 0)
    if not n_beams:
        return ""
    nodes = np.asarray(model.beam_n_nodes).reshape(-1)
    points = np.asarray(model.beam_n_qps).reshape(-1)
    short = np.flatnonzero(points < nodes)
    if short.size == 0:
        return ""
    e = int(short[0])
    return (
        f"; beam element {e} has {int(points[e])} quadrature points for {int(nodes[e])} nodes "
        f"({short.size} of {n_beams} elements have fewer points than nodes), so its mass and stiffness "
        "matrices are singular: give more sections or a larger section_refinement (add_beam's default "
        "chooses one that integrates)"
    )
