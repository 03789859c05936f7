"""Consistent initial velocities: the velocity constraints ``B v = ṙ`` at t = 0.

The index-3 scheme enforces the position constraints Φ(q) = 0 only: a velocity given with a
component that violates ``Φ̇ = B v`` is not corrected by the steps (a ball-jointed body given
3 m/s along its rod still moves 2.15 m/s along it after 10 steps of 1 ms), and the
multipliers absorb it as a spurious impulse.  :func:`velocity_residual` measures ``B v − ṙ``
per constraint; :func:`project_velocities` removes it with the smallest change in kinetic
energy: ``[M Bᵀ; B 0][Δv; μ] = [0; −(B v − ṙ)]`` (mass-weighted least squares, solved once
with scipy's sparse LU, imported only then: a simulation whose velocities are consistent
does not import scipy).

The prescribed rates ṙ: zero for the joints (kinds 3, 4, 8–16) and the fixed BCs; the
velocity as given for the prescribed BCs and the rotation control (kynemapy does not know
their rates: the given velocities of their nodes are taken as the prescribed ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kynemapy.engine import entry as _entry
from kynemapy.engine.data import Inputs, State, Workspace
from kynemapy.engine.params import ACCELERATION_COEFFICIENTS
from kynemapy.model import kinds

if TYPE_CHECKING:
    import scipy.sparse as sp

#: what :class:`kynemapy.Simulation` does with the initial velocities
INITIAL_VELOCITY_MODES = ("project", "check", "keep")
#: constraint kinds whose rate is taken from the given velocities (not known to kynemapy)
RATE_AS_GIVEN = (kinds.PRESCRIBED_BC, kinds.PRESCRIBED_BC_3DOF, kinds.ROTATION_CONTROL)
#: a residual below this times (1 + the largest |velocity| component) is round-off: left alone
CONSISTENT_RTOL = 1e-10


def _system_velocities(workspace: Workspace, state: State) -> np.ndarray:
    """The node velocities in the Newton layout, (n_system_dofs,)."""
    model = workspace.model
    v = np.zeros(int(model.n_system_dofs))
    for node in range(model.n_nodes):
        m, k = int(model.node_map[node]), int(model.node_dofs[node])
        v[m : m + k] = state.v[node, :k]
    return v


class _Newton:
    """The matrix ``[M Bᵀ; B 0]`` at the current q (velocity-level B: rotations as spatial
    angular velocities), as CSC arrays (n, n), and the velocity vector in the Newton layout."""

    def __init__(self, workspace: Workspace, state: State, inputs: Inputs) -> None:
        from kynemapy.engine.api import task  # api imports this module's users

        task(workspace.data(state, inputs), ACCELERATION_COEFFICIENTS, _entry.LINEARIZE)
        model = workspace.model
        self.n = int(model.n_dofs)
        self.nsys = int(model.n_system_dofs)
        self.vals = workspace.vals.copy()
        self.indices = workspace.indices.copy()
        self.indptr = workspace.indptr.copy()
        self.v = np.zeros(self.nsys)
        for node in range(model.n_nodes):
            m, k = int(model.node_map[node]), int(model.node_dofs[node])
            self.v[m : m + k] = state.v[node, :k]

    def b_times(self, x: np.ndarray) -> np.ndarray:
        """``B x`` (the constraint rows times the first ``nsys`` entries of ``x``), in plain numpy."""
        cols = np.repeat(np.arange(self.n), np.diff(self.indptr))
        ours = (self.indices >= self.nsys) & (cols < self.nsys)
        weights = self.vals[ours] * x[cols[ours]]
        return np.bincount(self.indices[ours] - self.nsys, weights=weights, minlength=self.n - self.nsys)

    def matrix(self) -> sp.csc_matrix:
        import scipy.sparse as sp  # only when a projection is solved

        return sp.csc_matrix((self.vals, self.indices, self.indptr), shape=(self.n, self.n))


def velocity_residual(workspace: Workspace, state: State, inputs: Inputs) -> np.ndarray:
    """``B v − ṙ`` per constraint, (C, 6) (m/s and rad/s; unused rows 0)."""
    return _per_constraint(workspace, _row_residual(workspace, _constraint_rates(workspace, state, inputs)))


def _constraint_rates(workspace: Workspace, state: State, inputs: Inputs) -> np.ndarray:
    """``B v`` by constraint row (the rows after the node DOFs), from the constraint phase alone
    (no element phase, no matrix): ``B_b v_base + B_t v_target`` per constraint."""
    from kynemapy.engine.checks import evaluate_constraints  # checks imports the api, which imports us

    model = workspace.model
    evaluate_constraints(workspace.data(state, inputs))
    bb, bt = workspace.views["con_bb"], workspace.views["con_bt"]
    r = np.zeros(int(model.n_dofs) - int(model.n_system_dofs))
    for c in range(model.n_constraints):
        row, n = int(model.constraint_row[c]), int(model.constraint_n_rows[c])
        for node, grad in zip(model.constraint_node[c], (bb[c], bt[c]), strict=True):
            if node >= 0:
                d = int(model.node_dofs[node])
                r[row : row + n] += grad[:n, :d] @ state.v[node, :d]
    return r


def _row_residual(workspace: Workspace, r: np.ndarray) -> np.ndarray:
    """``B v`` with the rows of the constraints whose rate is the given velocity set to 0."""
    model = workspace.model
    for c in range(model.n_constraints):
        if int(model.constraint_kind[c]) in RATE_AS_GIVEN:
            row = int(model.constraint_row[c])
            r[row : row + int(model.constraint_n_rows[c])] = 0.0
    return r


def _per_constraint(workspace: Workspace, r: np.ndarray) -> np.ndarray:
    model = workspace.model
    out = np.zeros((model.n_constraints, 6))
    for c in range(model.n_constraints):
        row, k = int(model.constraint_row[c]), int(model.constraint_n_rows[c])
        out[c, :k] = r[row : row + k]
    return out


def is_consistent(residual: np.ndarray, v: np.ndarray) -> bool:
    """True when ``residual`` (any shape) is round-off next to the velocities ``v``."""
    scale = 1.0 + (float(np.abs(v).max()) if v.size else 0.0)
    return float(np.abs(residual).max(initial=0.0)) <= CONSISTENT_RTOL * scale


def describe(model, residual: np.ndarray) -> str:
    """One line per violated constraint: id, kind and its rows' ``B v − ṙ``."""
    lines = []
    for c in range(model.n_constraints):
        k = int(model.constraint_n_rows[c])
        rows = residual[c, :k]
        if np.any(rows != 0.0):
            kind = kinds.KIND_NAMES[int(model.constraint_kind[c])]
            lines.append(f"constraint {c} ({kind}): B v = [{', '.join(f'{x:.3g}' for x in rows)}]")
    return "; ".join(lines)


def project_velocities(workspace: Workspace, state: State, inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """Make ``state.v`` satisfy ``B v = ṙ`` with the least kinetic-energy change, in place.

    Returns ``(residual, correction)``: the residual ``B v − ṙ`` before, per constraint (C, 6),
    and the velocity change per node (N, 6) [m/s, rad/s].  Velocities already consistent to
    round-off (:data:`CONSISTENT_RTOL`) are left exactly as they are (zero correction).
    Raises ``ValueError`` when the system is singular (redundant constraints with an
    incompatible residual, a free massless node)."""
    model = workspace.model
    correction = np.zeros((model.n_nodes, 6))
    # the common case first: velocities consistent, seen from the constraint phase alone
    r = _row_residual(workspace, _constraint_rates(workspace, state, inputs))
    if is_consistent(r, _system_velocities(workspace, state)):
        return _per_constraint(workspace, r), correction
    k = _Newton(workspace, state, inputs)
    r = _row_residual(workspace, k.b_times(k.v))
    residual = _per_constraint(workspace, r)
    if is_consistent(r, k.v):
        return residual, correction
    rhs = np.zeros(k.n)
    rhs[k.nsys :] = -r
    x = _solve(k.matrix(), rhs)
    if x is None or not np.all(np.isfinite(x)) or not is_consistent(k.b_times(x) + r, k.v):
        raise ValueError(
            "cannot project the initial velocities onto the constraints (singular or incompatible system): "
            + describe(model, residual)
        )
    for node in range(model.n_nodes):
        m, k = int(model.node_map[node]), int(model.node_dofs[node])
        correction[node, :k] = x[m : m + k]
    state.v[...] += correction
    return residual, correction


def _solve(a: sp.csc_matrix, rhs: np.ndarray) -> np.ndarray | None:
    """Sparse LU; a redundant (rank-deficient) constraint set by least squares instead."""
    import warnings

    import scipy.sparse.linalg as spla

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            x = spla.splu(a.tocsc()).solve(rhs)
            if np.all(np.isfinite(x)):
                return x
        except RuntimeError:
            pass
        if a.shape[0] <= 3000:
            return np.linalg.lstsq(a.toarray(), rhs, rcond=None)[0]
        return spla.lsqr(a, rhs, atol=1e-15, btol=1e-15, iter_lim=10 * a.shape[0])[0]
