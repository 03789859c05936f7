"""Linearization of a model about a state: the mass, damping and stiffness matrices and the
constraint Jacobian, from the engine's own Newton matrix.

The engine assembles the iteration matrix ``c(β′M + γ′C + κK) + c K^Φ`` on the node rows and
``B`` / ``Bᵀ`` in the constraint rows and columns (:mod:`kynemapy.engine.assemble`), with the
rotation columns multiplied by the tangent operator 𝒯 of the step's rotation increment.
:func:`linearize` runs that assembly (the ``LINEARIZE`` task, the kernels a step uses) three
times on a copy of the state with no step increment (𝒯 = I) and the conditioner c = 1:

* β′ = 1, γ′ = 0, κ = 0, no K^Φ: ``M``;
* β′ = 0, γ′ = 1, κ = 0, no K^Φ: ``C`` (the gyroscopic matrix and the beams' structural damping);
* β′ = 0, γ′ = 0, κ = 1, with K^Φ: ``K`` (elastic, inertial and load stiffness plus the
  constraint forces' geometric stiffness ∂(Bᵀλ)/∂q at the state's multipliers λ),

always with the engine's exact tangent (``P_EXACT``: exact constraint gradients, K^Φ, the true
spring Jacobian, the gravity-moment stiffness and the beams' exact stiffness).

Coordinates (the engine's DOFs): per node, in node order, the displacement increment δu [m]
(world frame) and, for a node with rotations, the rotation increment δθ [rad] in the world
frame, ``R = exp(δθ~) R₀`` (a left, spatial increment: the Lie-algebra increment the engine's
Newton update uses).  The conjugate generalized forces are a node's world-frame force [N] and
moment [N m], the node loads ``Inputs.f``.  The linearized equations about the state are::

    M δq̈ + C δq̇ + K δq + Bᵀ δλ = δf,     B δq = 0.

The engine's matrices multiply the velocity perturbation δv; for a node turning at ω₀ the
angular one is δω = δθ̇ − ω₀~δθ, so about a spinning state C and K are taken in the rates δq̇:
``C + M W``, ``K + C W + M Ẇ`` with W = −ω₀~ (Ẇ = −ω̇₀~) on each rotation block (nothing
changes for nodes at rest; in a rotating frame the frame's terms replace these,
:mod:`kynemapy.analysis.rotating`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse

from kynemapy.analysis.frames import rotating_frame_matrices
from kynemapy.engine import entry
from kynemapy.engine.api import initial_state, task
from kynemapy.engine.data import Inputs, State, new_inputs, new_state, new_workspace
from kynemapy.engine.params import ACCELERATION_COEFFICIENTS, coefficient_vector
from kynemapy.model import Model, kinds

#: names of the six components of a node's DOFs, in the engine's order
COMPONENTS = ("ux", "uy", "uz", "rx", "ry", "rz")


def linearization_coefficients(beta_prime: float, gamma_prime: float, kappa: float, with_k: bool) -> np.ndarray:
    """The coefficient vector ``p`` of a linearization: h = 1 s, conditioner c = 1, exact tangent.

    Parameters
    ----------
    beta_prime : float [1/s²]
        The weight β′ of the mass matrix.
    gamma_prime : float [1/s]
        The weight γ′ of the damping (gyroscopic) matrix.
    kappa : float [-]
        The weight κ of the element stiffness.
    with_k : bool
        Whether the constraint geometric stiffness K^Φ enters the matrix.

    Returns
    -------
    (P,) ndarray of float
        The vector the compiled phases read (:mod:`kynemapy.engine.params`).
    """
    # h, α_m, α_f, γ, β, γ′, β′, c, atol, rtol, max_iter, dynamic, exact, K^Φ, κ
    return coefficient_vector(
        1.0, 0.0, 0.0, 0.0, 0.0, gamma_prime, beta_prime, 1.0, 1.0, 1.0, 1, True, True, with_k, kappa
    )  # fmt: skip


def drive_damping(model: Model, inputs: Inputs) -> bool:
    """Whether a hinge or slider of ``model`` has a damper, Coulomb friction, a limit damper or a servo rate gain
    (docs/joints.md, "Drives"): a velocity-dependent joint load, whose derivative the engine
    assembles with the constraint blocks K^Φ."""
    kind = np.asarray(model.constraint_kind)
    driven = (kind == kinds.HINGE_JOINT) | (kind == kinds.SLIDER_JOINT)
    axes = np.asarray(model.constraint_axes)
    limit_damper = (axes[:, 2, 2] != 0.0) & (axes[:, 1, 2] != 0.0)
    rate_dependent = (
        (axes[:, 0, 2] != 0.0) | (axes[:, 1, 0] != 0.0) | limit_damper | (inputs.constraint_input[:, 2] != 0.0)
    )
    return bool(np.any(driven & rate_dependent))


def damping_system(assembler: Assembler, state: State, inputs: Inputs) -> scipy.sparse.csc_matrix:
    """The Newton matrix with γ′ = 1 alone (β′ = κ = 0): the damping matrix C on the node rows.

    A joint damper's (Coulomb friction's, servo rate gain's) share, ``γ′ ∂τ/∂ẋ``, sits in the
    constraint's K^Φ blocks (docs/joints.md, "Drives"): with such a joint (:func:`drive_damping`)
    it is the pass with K^Φ less K^Φ alone; without, the pass without K^Φ (bit for bit as before).
    """
    if not drive_damping(assembler.model, inputs):
        return assembler.system(state, inputs, linearization_coefficients(0.0, 1.0, 0.0, False))[0]
    with_k, _ = assembler.system(state, inputs, linearization_coefficients(0.0, 1.0, 0.0, True))
    k_phi, _ = assembler.system(state, inputs, linearization_coefficients(0.0, 0.0, 0.0, True))
    return (with_k - k_phi).tocsc()


def system_parts(system: Any, state: State | None, inputs: Inputs | None) -> tuple[Model, State, Inputs]:
    """The model, state and inputs of a Model, a Simulation, an Equilibrium (anything with
    ``model``, ``state`` and ``inputs``), the given state and inputs taking precedence."""
    if isinstance(system, Model):
        model = system
        start, start_inputs = initial_state(model)
    elif all(hasattr(system, name) for name in ("model", "state", "inputs")):
        model, start, start_inputs = system.model, system.state, system.inputs
    else:
        raise TypeError(
            "expected a kynemapy Model, Simulation, analysis.Equilibrium or analysis.Linearization's source, "
            f"got {type(system).__name__}"
        )
    return model, start if state is None else state, start_inputs if inputs is None else inputs


def copy_state(model: Model, given: State) -> State:
    """A state of ``model`` holding ``given``'s arrays, with no step increment (Δq = 0: 𝒯 = I)."""
    state = new_state(model)
    state.assign(given)
    state.q_delta[...] = 0.0
    return state


def copy_inputs(model: Model, given: Inputs) -> Inputs:
    """Inputs of ``model`` holding ``given``'s loads and constraint inputs."""
    inputs = new_inputs(model)
    inputs.f[...] = given.f
    inputs.constraint_input[...] = given.constraint_input
    return inputs


class Assembler:
    """The engine's Newton system of one model at given states, through ``LINEARIZE``.

    It keeps a workspace, a state and inputs of its own: each call copies the given ones into
    them (with Δq = 0, so 𝒯 = I) and assembles.

    Parameters
    ----------
    model : Model
        The model.
    solver : {"auto", "dense", "sparse"}, default "auto"
        The Newton workspace's kind (:func:`kynemapy.engine.data.new_workspace`): the same
        matrices either way, assembled into the dense or the sparse solver's storage.
    """

    def __init__(self, model: Model, solver: str = "auto") -> None:
        self.model = model
        self.workspace = new_workspace(model, 1, solver, True)
        self.state = new_state(model)
        self.inputs = new_inputs(model)
        self.data = self.workspace.data(self.state, self.inputs)

    def load(self, state: State, inputs: Inputs) -> None:
        """Copy ``state`` (Δq := 0) and ``inputs`` into the assembler's own.

        Parameters
        ----------
        state : State
            A state of the model.
        inputs : Inputs
            Inputs of the model.
        """
        self.state.assign(state)
        self.state.q_delta[...] = 0.0
        self.inputs.f[...] = inputs.f
        self.inputs.constraint_input[...] = inputs.constraint_input

    def system(self, state: State, inputs: Inputs, p: np.ndarray) -> tuple[scipy.sparse.csc_matrix, np.ndarray]:
        """The Newton matrix (n, n) and the residual b (n,) at ``state`` (copied, Δq = 0).

        Parameters
        ----------
        state : State
            The state (q, v, v̇, λ are read).
        inputs : Inputs
            The loads and constraint inputs.
        p : (P,) ndarray of float
            The coefficients (:func:`linearization_coefficients`).

        Returns
        -------
        matrix : (n, n) scipy.sparse.csc_matrix
            Node rows ``β′M + γ′C + κK (+ K^Φ)``, constraint rows B, constraint columns Bᵀ.
        b : (n,) ndarray of float
            The residual: node rows ``r − f + Bᵀλ`` [N, N m], constraint rows Φ [m, rad].
        """
        self.load(state, inputs)
        ws = self.workspace
        task(self.data, p, entry.LINEARIZE)
        n = int(self.model.n_dofs)
        matrix = scipy.sparse.csc_matrix((ws.vals.copy(), ws.indices.copy(), ws.indptr.copy()), shape=(n, n))
        return matrix, ws.views["b"].copy()

    def reaction(self, state: State, inputs: Inputs, cid: int) -> tuple[np.ndarray, np.ndarray]:
        """The force [N] and torque [N m] of constraint ``cid`` on its body at ``state`` (world
        frame, ``−B_tᵀλ``: :meth:`kynemapy.Simulation.reaction`).

        Parameters
        ----------
        state : State
            The state (q and λ are read).
        inputs : Inputs
            The inputs.
        cid : int
            The constraint id.

        Returns
        -------
        force, torque : (3,) ndarray of float
            The reaction force [N] and torque [N m].
        """
        self.load(state, inputs)
        out = np.zeros(6)
        task(self.data, ACCELERATION_COEFFICIENTS, entry.REACTION, int(cid), out=out)
        return out[:3], out[3:]


class StateSpace(NamedTuple):
    """A linear time-invariant system ``ẋ = A x + B u``, ``y = C x + D u``.

    Attributes
    ----------
    A : (2r, 2r) ndarray of float
        The system matrix ``[[0, I], [−M_r⁻¹K_r, −M_r⁻¹C_r]]``; the state is ``x = (η, η̇)``,
        the independent coordinates η of :attr:`Linearization.null_space` and their rates.
    B : (2r, k) ndarray of float
        The input matrix ``[[0], [M_r⁻¹ Nᵀ S_u]]`` of the k node-load components u [N, N m].
    C : (l, 2r) ndarray of float
        The output matrix: the chosen DOFs' displacements [m, rad] (``[S_yᵀ N, 0]``), then
        their rates [m/s, rad/s] (``[0, S_vᵀ N]``).
    D : (l, k) ndarray of float
        The feed-through (zero).
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray


@dataclass(frozen=True)
class Linearization:
    """A model linearized about a state (from :func:`linearize`).

    The DOF coordinates are the engine's (``n = model.n_system_dofs``): per node the world-frame
    displacement increment δu [m] and the world-frame (spatial, left) rotation increment δθ
    [rad], ``R = exp(δθ~) R₀``; conjugate forces are node forces [N] and moments [N m] in the
    world frame.  The linearized equations are ``M δq̈ + C δq̇ + K δq + Bᵀ δλ = δf``,
    ``B δq = 0``.

    Attributes
    ----------
    model : Model
        The model.
    state : State
        A copy of the state linearized about.
    inputs : Inputs
        A copy of the loads and constraint inputs.
    M : (n, n) scipy.sparse.csc_matrix
        The mass matrix [kg, kg m, kg m²].
    C : (n, n) scipy.sparse.csc_matrix
        The damping matrix: gyroscopic terms and structural damping [N s/m, N m s/rad, ...].
    K : (n, n) scipy.sparse.csc_matrix
        The tangent stiffness [N/m, N/rad, N m/m, N m/rad]: elastic, inertial, load and
        constraint geometric stiffness (exact tangent).
    B : (m, n) scipy.sparse.csc_matrix
        The constraint Jacobian (m constraint rows) [-, m].
    residual : (n + m,) ndarray of float
        The engine's residual at the state: node rows ``r − f + Bᵀλ`` [N, N m] (zero at an
        equilibrium), then the constraint violations Φ [m, rad].
    dof_node : (n,) ndarray of int64
        The node of each DOF.
    dof_component : (n,) ndarray of int64
        The component of each DOF (0–2: δu x, y, z; 3–5: δθ x, y, z).
    frame_rate : (3,) ndarray of float or None, default None
        None: the DOFs are the engine's inertial ones.  Otherwise the angular velocity Ω
        [rad/s] of the rotating frame the DOFs are measured in (about a steady rotation,
        :func:`kynemapy.analysis.steady_rotation`): C and K are then the rotating frame's,
        ``C + M(2W_u + W_θ)`` and ``K + C W_u + M W_u²`` (:mod:`kynemapy.analysis.rotating`).
    """

    model: Model
    state: State
    inputs: Inputs
    M: scipy.sparse.csc_matrix
    C: scipy.sparse.csc_matrix
    K: scipy.sparse.csc_matrix
    B: scipy.sparse.csc_matrix
    residual: np.ndarray
    dof_node: np.ndarray
    dof_component: np.ndarray
    frame_rate: np.ndarray | None = None

    @property
    def n_dofs(self) -> int:
        """The number n of DOF coordinates (``model.n_system_dofs``)."""
        return int(self.M.shape[0])

    def dof(self, node: int, component: int) -> int:
        """The index of one DOF of a node.

        Parameters
        ----------
        node : int
            The node id.
        component : int
            0–2: displacement x, y, z; 3–5: rotation about x, y, z (world frame).

        Returns
        -------
        int
            The DOF's index into the rows of M, C, K (and the columns of B).

        Raises
        ------
        ValueError
            The node does not have that DOF (a node with nothing attached, a position-only node's
            rotation, a component outside 0–5).
        """
        node, component = int(node), int(component)
        if not 0 <= node < int(self.model.n_nodes):
            raise ValueError(f"unknown node {node} (the model has {int(self.model.n_nodes)} nodes)")
        dofs = int(self.model.node_dofs[node])
        if not 0 <= component < dofs:
            raise ValueError(f"node {node} has {dofs} DOFs: no component {component}")
        return int(self.model.node_map[node]) + component

    def selection(self, dofs: Sequence[tuple[int, int]]) -> np.ndarray:
        """The (n, k) matrix whose column j is the unit vector of the j-th ``(node, component)``.

        Parameters
        ----------
        dofs : sequence of (int, int)
            ``(node, component)`` pairs (see :meth:`dof`).

        Returns
        -------
        (n, k) ndarray of float
            The selection matrix S.
        """
        s = np.zeros((self.n_dofs, len(dofs)))
        for j, (node, component) in enumerate(dofs):
            s[self.dof(node, component), j] = 1.0
        return s

    @property
    def equilibrium_error(self) -> float:
        """‖r − f + Bᵀλ‖ over the size of the loads, ‖f‖ + ‖M g‖ (gravity on every node's
        displacement DOFs) + ‖M v̇‖ (the state's inertial forces: those of a steady rotation) [-]:
        about 0 (round-off) at a static equilibrium or a steady rotation, 1 when nothing
        balances the loads (a model's initial state with λ = 0 under gravity)."""
        nsys = self.n_dofs
        g = np.zeros(nsys)
        translation = self.dof_component < 3
        g[translation] = np.asarray(self.model.gravity)[self.dof_component[translation]]
        f = self.inputs.f
        node_f = f[self.dof_node, self.dof_component] if nsys else np.zeros(0)
        vd = self.state.vd[self.dof_node, self.dof_component] if nsys else np.zeros(0)
        scale = float(np.linalg.norm(node_f) + np.linalg.norm(self.M @ g) + np.linalg.norm(self.M @ vd))
        error = float(np.linalg.norm(self.residual[:nsys]))
        return error / scale if scale > 0.0 else error

    @cached_property
    def _eliminated(self) -> np.ndarray | None:
        """The DOFs the constraints leave free when they simply fix others: B's nonzero columns
        number its rows and make a well-conditioned square block (clamps, fixed and prescribed
        BCs alone), so that B δq = 0 sets those DOFs to zero; None otherwise."""
        m = self.B.shape[0]
        if m == 0:
            return np.arange(self.n_dofs)
        b = self.B.tocsc()
        used = np.flatnonzero(np.diff(b.indptr) > 0)
        if used.size != m:
            return None
        block = b[:, used].toarray()
        s = np.linalg.svd(block, compute_uv=False)
        if s[-1] <= 1e-10 * s[0]:
            return None
        return np.setdiff1d(np.arange(self.n_dofs), used)

    @cached_property
    def null_space(self) -> np.ndarray:
        """(n, r) orthonormal basis N of the null space of B: δq = N η with η the r independent
        coordinates.  When the constraints simply fix DOFs (B's nonzero columns make a square,
        well-conditioned block: clamps by fixed or prescribed BCs) N is the columns of the
        identity of the other DOFs (elimination); otherwise a dense SVD of B."""
        free = self._eliminated
        if free is not None:
            n = np.zeros((self.n_dofs, free.size))
            n[free, np.arange(free.size)] = 1.0
            return n
        return scipy.linalg.null_space(self.B.toarray())

    @cached_property
    def _reduced(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        free = self._eliminated
        if free is not None:  # N selects DOFs: slice the sparse matrices
            return tuple(a[free][:, free].toarray() for a in (self.M, self.C, self.K))
        n = self.null_space
        return tuple(np.asarray(n.T @ (a @ n)) for a in (self.M, self.C, self.K))

    def reduced(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The matrices in the independent coordinates η: ``NᵀMN, NᵀCN, NᵀKN``.

        Returns
        -------
        M_r, C_r, K_r : (r, r) ndarray of float
            The reduced mass, damping and stiffness matrices (dense).
        """
        return self._reduced

    def state_space(
        self,
        inputs: Sequence[tuple[int, int]] = (),
        outputs: Sequence[tuple[int, int]] = (),
        rate_outputs: Sequence[tuple[int, int]] = (),
    ) -> StateSpace:
        """The first-order form ``ẋ = A x + B u``, ``y = C x + D u`` in the independent coordinates.

        Parameters
        ----------
        inputs : sequence of (int, int), default ()
            The node-load components ``(node, component)`` that make u: a force [N] (components
            0–2) or moment [N m] (3–5) in the world frame, as ``Inputs.f``.
        outputs : sequence of (int, int), default ()
            The DOFs ``(node, component)`` whose displacement [m] or rotation [rad] make y.
        rate_outputs : sequence of (int, int), default ()
            DOFs whose rates [m/s, rad/s] follow them in y.

        Returns
        -------
        StateSpace
            ``(A, B, C, D)``; x = (η, η̇) with 2r entries.

        Raises
        ------
        numpy.linalg.LinAlgError
            The reduced mass matrix is singular (DOFs without inertia: beams without rotary
            inertia, massless nodes): the first-order form does not exist.
        """
        m_r, c_r, k_r = self.reduced()
        r = m_r.shape[0]
        n = self.null_space
        s_u = self.selection(inputs)
        lu = scipy.linalg.lu_factor(m_r, check_finite=True)
        if np.any(np.abs(np.diag(lu[0])) <= 1e-13 * max(np.abs(m_r).max(initial=0.0), 1e-300)):
            raise np.linalg.LinAlgError("the reduced mass matrix is singular (DOFs without inertia)")
        a = np.zeros((2 * r, 2 * r))
        a[:r, r:] = np.eye(r)
        a[r:, :r] = -scipy.linalg.lu_solve(lu, k_r)
        a[r:, r:] = -scipy.linalg.lu_solve(lu, c_r)
        b = np.zeros((2 * r, s_u.shape[1]))
        if s_u.shape[1]:
            b[r:] = scipy.linalg.lu_solve(lu, n.T @ s_u)
        s_y, s_v = self.selection(outputs), self.selection(rate_outputs)
        c = np.zeros((s_y.shape[1] + s_v.shape[1], 2 * r))
        c[: s_y.shape[1], :r] = s_y.T @ n
        c[s_y.shape[1] :, r:] = s_v.T @ n
        return StateSpace(a, b, c, np.zeros((c.shape[0], b.shape[1])))


def _spinning_nodes(
    model: Model, state: State, m: scipy.sparse.csc_matrix, c: scipy.sparse.csc_matrix, k: scipy.sparse.csc_matrix
) -> tuple[scipy.sparse.csc_matrix, scipy.sparse.csc_matrix]:
    """C and K in the rates of the coordinates, δq̇, for nodes that turn at the state.

    The engine's matrices multiply the velocity perturbation δv; a node's angular velocity
    perturbation is δω = δθ̇ − ω₀~δθ for ``R = exp(δθ~) R₀`` turning at ω₀ (δu̇ = δv for the
    displacements).  With W (−ω₀~ on each rotation block) and Ẇ (−ω̇₀~),
    ``M δv̇ + C δv + K δq = M δq̈ + (C + M W) δq̇ + (K + C W + M Ẇ) δq``.  Zero ω₀: unchanged."""
    dofs = np.asarray(model.node_dofs)
    rotating = np.flatnonzero(dofs == 6)
    w = np.asarray(state.v)[rotating, 3:]
    wd = np.asarray(state.vd)[rotating, 3:]
    if rotating.size == 0 or not (np.any(w != 0.0) or np.any(wd != 0.0)):
        return c, k
    n = int(model.n_system_dofs)
    first = np.asarray(model.node_map)[rotating] + 3
    i, j = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
    rows = (first[:, None, None] + i[None]).ravel()
    cols = (first[:, None, None] + j[None]).ravel()

    def minus_skew(a: np.ndarray) -> scipy.sparse.csc_matrix:
        blocks = np.zeros((a.shape[0], 3, 3))
        blocks[:, 0, 1], blocks[:, 0, 2], blocks[:, 1, 2] = a[:, 2], -a[:, 1], a[:, 0]
        blocks[:, 1, 0], blocks[:, 2, 0], blocks[:, 2, 1] = -a[:, 2], a[:, 1], -a[:, 0]
        return scipy.sparse.csc_matrix((blocks.ravel(), (rows, cols)), shape=(n, n))

    w_mat, wd_mat = minus_skew(w), minus_skew(wd)
    return (c + m @ w_mat).tocsc(), (k + c @ w_mat + m @ wd_mat).tocsc()


def linearize(
    system: Any,
    state: State | None = None,
    inputs: Inputs | None = None,
    solver: str = "auto",
    frame_rate: Any = None,
) -> Linearization:
    """Linearize a model about a state: M, C, K and the constraint Jacobian B.

    The engine's own Newton matrix, assembled three times with the coefficients that pick out
    M (β′ = 1), C (γ′ = 1) and K (κ = 1, with the constraint geometric stiffness K^Φ), the
    conditioner 1 and no step increment (𝒯 = I), always with the exact tangent (see
    :mod:`kynemapy.analysis.linearize`).  The state's multipliers λ enter K through K^Φ: linearize
    about a state whose λ balance the loads (:func:`static_equilibrium`, or a converged step).

    Parameters
    ----------
    system : Model, Simulation, Equilibrium or SteadyRotation
        The model, with its state and inputs: a :class:`~kynemapy.Model` (its initial state and
        inputs, λ = 0), a :class:`~kynemapy.Simulation` (its current state and inputs), an
        :class:`Equilibrium` (from :func:`static_equilibrium`) or a :class:`SteadyRotation`
        (from :func:`steady_rotation`: linearized in the frame turning with it).
    state : State or None, default None
        The state to linearize about instead of the system's (q, v, v̇ and λ are read).
    inputs : Inputs or None, default None
        The loads and constraint inputs instead of the system's.
    solver : {"auto", "dense", "sparse"}, default "auto"
        The kind of Newton workspace the matrices are assembled in (as
        ``StepParameters.solver``); the matrices are the same.
    frame_rate : (3,) array_like of float [rad/s] or None, default None
        Linearize in a frame turning at this Ω (world frame) about the state, which should be a
        steady rotation at Ω (:func:`steady_rotation`); None: a SteadyRotation's own Ω, else
        the inertial DOFs.

    Returns
    -------
    Linearization
        M, C, K (n, n) and B (m, n) as ``scipy.sparse.csc_matrix``, the residual, the DOF map,
        the null space of B, the reduced matrices and the state-space form.

    Raises
    ------
    TypeError
        ``system`` is none of the accepted kinds.
    ValueError
        An unknown ``solver``.
    """
    model, given_state, given_inputs = system_parts(system, state, inputs)
    assembler = Assembler(model, solver)
    nsys = int(model.n_system_dofs)
    parts = {}
    residual = np.zeros(0)
    for name, p in (
        ("M", linearization_coefficients(1.0, 0.0, 0.0, False)),
        ("C", linearization_coefficients(0.0, 1.0, 0.0, False)),
        ("K", linearization_coefficients(0.0, 0.0, 1.0, True)),
    ):
        if name == "C":
            matrix = damping_system(assembler, given_state, given_inputs)
        else:
            matrix, b = assembler.system(given_state, given_inputs, p)
        parts[name] = matrix[:nsys, :nsys].tocsc()
        if name == "K":
            parts["B"] = matrix[nsys:, :nsys].tocsc()
            residual = b
    dof_node = np.zeros(nsys, dtype=np.int64)
    dof_component = np.zeros(nsys, dtype=np.int64)
    for node, dofs in enumerate(np.asarray(model.node_dofs)):
        first = int(model.node_map[node])
        dof_node[first : first + int(dofs)] = node
        dof_component[first : first + int(dofs)] = np.arange(int(dofs))
    if frame_rate is None:
        frame_rate = getattr(system, "frame_rate", None)
    if frame_rate is not None:
        frame_rate = np.asarray(frame_rate, dtype=float).reshape(3).copy()
        parts["C"], parts["K"] = rotating_frame_matrices(model, parts["M"], parts["C"], parts["K"], frame_rate)
    else:
        parts["C"], parts["K"] = _spinning_nodes(model, given_state, parts["M"], parts["C"], parts["K"])
    return Linearization(
        model, copy_state(model, given_state), copy_inputs(model, given_inputs),
        parts["M"], parts["C"], parts["K"], parts["B"], residual, dof_node, dof_component, frame_rate,
    )  # fmt: skip
