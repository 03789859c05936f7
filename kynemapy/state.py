"""Mutable simulation data: :class:`State`, :class:`Inputs` and :class:`Workspace`.

``State`` is exactly what a restart needs (Kynema's ``q, q_prev, q_delta, v,
vd, a`` plus the multipliers, outputs, time and step counter); ``Inputs`` is what
the user sets between steps; ``Workspace`` holds every buffer the compiled step
writes, so nothing is allocated while stepping.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy.model import Model
from kynemapy.sparse_lu import LUWorkspace, analyze, new_lu_workspace
from kynemapy.sparsity import Scatter, build_scatter

#: systems up to this many unknowns are solved densely by ``solver="auto"``
DENSE_MAX_DOFS = 20
#: Newton-matrix solvers of :func:`new_workspace`
SOLVERS = ("auto", "dense", "sparse")


class State(NamedTuple):
    """Node states (inertial frame), shapes with N = n_nodes, C = n_constraints.

    q : (N, 7) displacement u [m] and rotation quaternion r (w, x, y, z) relative
        to the reference orientation (current orientation = r ⊗ r0).
    q_prev : (N, 7) q at the start of the last step.
    q_delta : (N, 6) velocity-like increment Δq [m/s, rad/s]: q = q_prev ⊕ h Δq.
    v : (N, 6) velocity (u̇ [m/s], ω [rad/s]).
    vd : (N, 6) acceleration (ü [m/s²], ω̇ [rad/s²]).
    a : (N, 6) generalized-α algorithmic acceleration.
    x : (N, 7) current position X + u [m] and orientation r ⊗ r0.
    lam : (C, 6) Lagrange multipliers λ [N, N m] (first n_rows entries used).
    constraint_output : (C, 3) revolute joints: azimuth [rad], speed [rad/s],
        acceleration [rad/s²] about the axis; hinge joints: angle of body_b relative
        to body_a [rad] (unwrapped), rate [rad/s], acceleration [rad/s²]; slider
        joints: displacement [m], rate [m/s], acceleration [m/s²]; zero for other kinds.
    time : (1,) simulated time [s].
    step : (1,) int64 number of converged steps.
    """

    q: np.ndarray
    q_prev: np.ndarray
    q_delta: np.ndarray
    v: np.ndarray
    vd: np.ndarray
    a: np.ndarray
    x: np.ndarray
    lam: np.ndarray
    constraint_output: np.ndarray
    time: np.ndarray
    step: np.ndarray

    def copy(self) -> State:
        """A deep copy (for save/restore)."""
        return State(*(np.array(f, copy=True) for f in self))

    def assign(self, other: State) -> None:
        """Copy every array of ``other`` into this state in place."""
        for mine, theirs in zip(self, other, strict=True):
            mine[...] = theirs


class Inputs(NamedTuple):
    """Quantities the user sets between steps.

    f : (N, 6) external nodal force [N] and moment [N m], inertial frame.
    constraint_input : (C, 7) per constraint: prescribed displacement (u, quaternion)
        for prescribed BCs; ``[0]`` = torque [N m] of a revolute or hinge joint,
        force [N] of a slider joint, or angle [rad] of a rotation control.
    """

    f: np.ndarray
    constraint_input: np.ndarray


class Workspace(NamedTuple):
    """Buffers of the compiled step; ``errors[:n_iter[0]]`` are the last step's Newton errors.

    ``con_k`` (C, 2, 2, 6, 6): K^Φ blocks per constraint (base/target × base/target).
    ``q_ground`` (7,) = (0, 0, 0, 1, 0, 0, 0) and ``v_ground`` (6,) = 0: the
    displacement and velocity a constraint sees for the ground side (base node −1).

    The Newton matrix: ``vals`` holds its values, written through the slots of
    ``scatter`` (:mod:`kynemapy.sparsity`).  Dense solver: ``A`` (n, n) with ``vals``
    its flat view, ``piv`` (n,) the row swaps; sparse solver: ``vals`` (nnz,) in the
    CSC order of ``scatter.indptr/indices`` and ``A`` is (0, 0).  ``lu`` holds the
    *reference* factorization (:class:`~kynemapy.sparse_lu.LUWorkspace`), factored once
    from the Newton matrix at the model's initial state: every solve refactors it with
    its pivot sequence (no search); when that is refused (a pivot became too small),
    ``lu_fallback`` is factored afresh for that solve only.  So each solve depends on
    the current matrix alone, never on the run's history, and a resumed run repeats an
    uninterrupted one bit for bit.
    """

    A: np.ndarray
    vals: np.ndarray
    scatter: Scatter
    lu: LUWorkspace
    lu_fallback: LUWorkspace
    b: np.ndarray
    dx: np.ndarray
    piv: np.ndarray
    tangent: np.ndarray
    errors: np.ndarray
    n_iter: np.ndarray
    mass_res: np.ndarray
    mass_mat: np.ndarray
    spring_res: np.ndarray
    spring_mat: np.ndarray
    spring_r: np.ndarray
    con_phi: np.ndarray
    con_bb: np.ndarray
    con_bt: np.ndarray
    con_k: np.ndarray
    con_force: np.ndarray
    q_ground: np.ndarray
    v_ground: np.ndarray
    s3: np.ndarray
    s4: np.ndarray
    s33: np.ndarray
    s66: np.ndarray
    s6: np.ndarray
    saved: State


def new_state(model: Model) -> State:
    """A zero state with identity rotations (q = q_prev = (0,0,0,1,0,0,0))."""
    n, c = model.n_nodes, model.n_constraints
    q = np.zeros((n, 7))
    q[:, 3] = 1.0
    return State(
        q=q,
        q_prev=q.copy(),
        q_delta=np.zeros((n, 6)),
        v=np.zeros((n, 6)),
        vd=np.zeros((n, 6)),
        a=np.zeros((n, 6)),
        x=np.array(model.x0, copy=True),
        lam=np.zeros((c, 6)),
        constraint_output=np.zeros((c, 3)),
        time=np.zeros(1),
        step=np.zeros(1, dtype=np.int64),
    )


def new_inputs(model: Model) -> Inputs:
    """Zero loads; prescribed displacements at identity (0,0,0,1,0,0,0)."""
    ci = np.zeros((model.n_constraints, 7))
    ci[:, 3] = 1.0
    return Inputs(f=np.zeros((model.n_nodes, 6)), constraint_input=ci)


def new_workspace(model: Model, max_iter: int, solver: str = "auto", geometric_stiffness: bool = True) -> Workspace:
    """Every buffer the step needs, sized for ``model``.

    ``solver``: ``"dense"`` (LU with partial pivoting of the full matrix), ``"sparse"``
    (sparse LU, fill-reducing ordering, factors reused across iterations) or ``"auto"``:
    dense up to :data:`DENSE_MAX_DOFS` unknowns, sparse above.  ``geometric_stiffness``
    False (Kynema-compatible steps only) leaves the K^Φ blocks out of the sparse pattern.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    n = model.n_dofs
    nn, nm, ns, nc = model.n_nodes, model.n_masses, model.n_springs, model.n_constraints
    dense = solver == "dense" or (solver == "auto" and n <= DENSE_MAX_DOFS)
    scatter = build_scatter(model, dense, with_k=dense or geometric_stiffness)
    if dense:
        A = np.zeros((n, n))
        vals = A.reshape(-1)
        lu = new_lu_workspace(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), 0)
        lu_fallback = new_lu_workspace(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), 0)
    else:
        A = np.zeros((0, 0))
        vals = np.zeros(scatter.indices.shape[0])
        symbolic = analyze(scatter.indptr, scatter.indices, n)
        lu = new_lu_workspace(scatter.indptr, scatter.indices, n, symbolic=symbolic)
        lu_fallback = new_lu_workspace(scatter.indptr, scatter.indices, n, symbolic=symbolic)
    return Workspace(
        A=A,
        vals=vals,
        scatter=scatter,
        lu=lu,
        lu_fallback=lu_fallback,
        b=np.zeros(n),
        dx=np.zeros(n),
        piv=np.zeros(n, dtype=np.int64),
        tangent=np.zeros((nn, 3, 3)),
        errors=np.zeros(max(int(max_iter), 1)),
        n_iter=np.zeros(1, dtype=np.int64),
        mass_res=np.zeros((nm, 6)),
        mass_mat=np.zeros((nm, 6, 6)),
        spring_res=np.zeros((ns, 3)),
        spring_mat=np.zeros((ns, 3, 3)),
        spring_r=np.zeros((ns, 3)),
        con_phi=np.zeros((nc, 6)),
        con_bb=np.zeros((nc, 6, 6)),
        con_bt=np.zeros((nc, 6, 6)),
        con_k=np.zeros((nc, 2, 2, 6, 6)),
        con_force=np.zeros((nc, 3)),
        q_ground=np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
        v_ground=np.zeros(6),
        s3=np.zeros((8, 3)),
        s4=np.zeros((6, 4)),
        s33=np.zeros((8, 3, 3)),
        s66=np.zeros((4, 6, 6)),
        s6=np.zeros((2, 6)),
        saved=new_state(model),
    )
