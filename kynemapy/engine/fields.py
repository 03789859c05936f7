"""Every array of the engine, where it lives, and :class:`Data`, what the compiled phases receive.

The arrays are views into flat arenas (see :mod:`kynemapy._arena`): the model in ``mi``
(int64) and ``mf`` (float64), read-only; the state in ``sf`` and ``si``; the inputs in
``xf``; the workspace in ``wi`` and ``wf``.  Each tuple below lists (name, arena, shape)
with counts by name: N = n_nodes, C = n_constraints, n = n_dofs (the Newton system),
n1 = n + 1, nnz = entries of the Newton matrix's pattern.  Units are SI; see
:class:`kynemapy.State` and :class:`kynemapy.Model`.

:class:`Data` holds all of them as named fields (model, element tables, state, inputs,
workspace) and the solver's packed arenas: one NamedTuple of views, made once per
simulation in Python and passed to the one compiled entry point
(:func:`kynemapy.engine.entry.run_task`).  Inside, the phases are inlined into that entry,
so a view is passed between phases as a variable, never rebuilt.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy.engine.rows import RECORDED

FieldList = tuple[tuple[str, str, tuple[str | int, ...]], ...]

#: model tables and the Newton matrix's pattern and slots (read-only)
MODEL: FieldList = (
    ("x0", "mf", ("N", 7)),  # reference position [m] and orientation quaternion
    ("gravity", "mf", (3,)),  # [m/s²]
    ("node_dofs", "mi", ("N",)),  # active DOFs per node (0, 3 or 6)
    ("node_map", "mi", ("N",)),  # first row of each node in the Newton system
    ("constraint_kind", "mi", ("C",)),
    ("constraint_node", "mi", ("C", 2)),  # base (−1: ground) and target node
    ("constraint_n_rows", "mi", ("C",)),
    ("constraint_row", "mi", ("C",)),  # first row after the node DOFs
    ("constraint_X0", "mf", ("C", 3)),
    ("constraint_axes", "mf", ("C", 3, 3)),
    ("constraint_geometry", "mf", ("C", 2, 4, 3)),
    ("constraint_param", "mf", ("C",)),
    ("constraint_has_load", "mi", ("C",)),  # 1 where the kind's input enters the residual (2: a driven joint)
    ("constraint_has_output", "mi", ("C",)),  # 1 where the kind has joint outputs
    ("indptr", "mi", ("n1",)),  # CSC pattern of the Newton matrix
    ("indices", "mi", ("nnz",)),
    ("con_row_slots", "mi", ("C", 2, 6, 6)),  # [side, row i, DOF j]: the B 𝒯 rows
    ("con_col_slots", "mi", ("C", 2, 6, 6)),  # [side, DOF j, row i]: the Bᵀ columns
    ("con_k_slots", "mi", ("C", 2, 2, 6, 6)),  # K^Φ blocks (−1 without the exact tangent)
    ("row_offsets", "mi", ("row_fields",)),  # offsets of the output row's fields (engine.rows)
)

#: the state, in the order of its arena ``sf`` (``step`` alone in ``si``)
STATE: FieldList = (
    ("time", "sf", (1,)),  # [s]
    ("q", "sf", ("N", 7)),  # displacement u [m], rotation quaternion r
    ("q_prev", "sf", ("N", 7)),
    ("q_delta", "sf", ("N", 6)),  # velocity-like increment [m/s, rad/s]
    ("v", "sf", ("N", 6)),  # (u̇ [m/s], ω [rad/s])
    ("vd", "sf", ("N", 6)),  # (ü [m/s²], ω̇ [rad/s²])
    ("a", "sf", ("N", 6)),  # generalized-α algorithmic acceleration
    ("x", "sf", ("N", 7)),  # current position [m] and orientation
    ("lam", "sf", ("C", 6)),  # Lagrange multipliers [N, N m]
    ("constraint_output", "sf", ("C", 3)),
    ("step", "si", (1,)),  # converged steps
)
#: STATE in the order of its arenas (the order of Data's fields is STATE's): the fields an
#: output row records first, in the row's order (:data:`kynemapy.engine.rows.RECORDED`), so
#: that :func:`kynemapy.engine.step.record_row` copies one piece of ``sf``
STATE_ARENA_ORDER: FieldList = tuple(
    sorted(STATE, key=lambda f: RECORDED.index(f[0]) if f[0] in RECORDED else len(RECORDED))
)

INPUTS: FieldList = (
    ("f", "xf", ("N", 6)),  # external force [N] and moment [N m]
    ("constraint_input", "xf", ("C", 7)),
)

WORKSPACE: FieldList = (
    ("vals", "wf", ("nnz",)),  # Newton matrix values, CSC order
    ("b", "wf", ("n",)),  # residual, then the right-hand side
    ("dx", "wf", ("n",)),  # Newton increment
    ("force_scratch", "wf", (2, "n")),  # convergence error (round-off mode): Bᵀ Δλ and Σ|Bᵀ λ| per node DOF
    ("tangent", "wf", ("N", 3, 3)),  # rotation block of 𝒯 per node (transposed)
    ("errors", "wf", ("max_iter",)),  # Newton errors of the last step
    ("con_phi", "wf", ("C", 6)),  # Φ, or the bias γ of Φ̈ = B v̇ + γ
    ("con_bb", "wf", ("C", 6, 6)),  # ∂Φ/∂(base node)
    ("con_bt", "wf", ("C", 6, 6)),  # ∂Φ/∂(target node)
    ("con_k", "wf", ("C", 2, 2, 6, 6)),  # K^Φ blocks
    ("con_load", "wf", ("C", 2, 6)),  # residual of the joint inputs, per side
    ("s3", "wf", (8, 3)),  # scratch
    ("s4", "wf", (6, 4)),
    ("s33", "wf", (8, 3, 3)),
    ("s66", "wf", (4, 6, 6)),
    ("s6", "wf", (2, 6)),
    ("q_ground", "wf", (7,)),  # (0, 0, 0, 1, 0, 0, 0): what a joint sees of the ground
    ("v_ground", "wf", (6,)),
    ("saved", "wf", ("state_size",)),  # the state arena before the step (rollback)
    ("snapshot", "wf", ("state_size",)),  # static steps: the state at the last converged partial load
    ("f_baseline", "wf", ("N", 6)),  # static steps: the external loads as given
    ("n_iter", "wi", (1,)),  # Newton iterations of the last step
    ("saved_step", "wi", (1,)),
)

#: read-only arenas
MODEL_ARENAS = ("mi", "mf")
#: int64 arenas
INT_ARENAS = ("mi", "si", "wi")

_SCALARS = (("n_system_dofs", int), ("n_dofs", int))
_ARRAYS = tuple((name, np.ndarray) for name, _, _ in MODEL)
_STATE_ARRAYS = (("state", np.ndarray), *((name, np.ndarray) for name, _, _ in STATE))
_REST = tuple((name, np.ndarray) for name, _, _ in INPUTS + WORKSPACE)
_SOLVER = (("solver", tuple), ("units", np.ndarray))

#: The compiled engine's view of one simulation: the counts ``n_system_dofs``, ``n_dofs``;
#: every field of MODEL, then ``kinds`` (the constraint kind codes in a
#: :class:`~kynemapy.engine.constraints.phase.Kinds`), ``tables`` (the element tables, one NamedTuple each, see
#: :mod:`kynemapy.engine.elements`); ``state`` (the arena ``sf``) and the fields of STATE;
#: those of INPUTS and WORKSPACE; ``solver``, a :class:`~kynemapy.engine.solvers.Solver`;
#: ``units`` (int64, (N_UNITS,)), the addresses of the compiled units the model uses
#: (:mod:`kynemapy.engine.unit_call`).
#: Its numba type is the same for every model: one compiled engine runs them all.
Data = NamedTuple(
    "Data",
    [*_SCALARS, *_ARRAYS, ("kinds", tuple), ("tables", tuple), *_STATE_ARRAYS, *_REST, *_SOLVER],
)
Data.__module__ = __name__

#: the position of ``tables`` among the Data's fields (the element phase reads it by address)
TABLES_FIELD = Data._fields.index("tables")
