"""Where every array of the engine lives: the header words of the packed arenas.

The compiled engine works on a :class:`Data`, a NamedTuple of eleven flat arrays (see
:mod:`kynemapy._arena`); each constant below is the header word that describes one field
(its offset in its arena and its shape), read in kernels with ``v1 .. v5``::

    q = v2(d.sf, d.mi, Q)        # (n_nodes, 7) view of the state arena

Shapes name their counts: N = n_nodes, C = n_constraints, n = n_dofs (the Newton system),
nnz = entries of the Newton matrix's pattern.  Units are SI; see :class:`kynemapy.State`.

The header begins with the element tables' region (:data:`MAX_TABLES` × :data:`TABLE_WORDS`
words: the words of element table k start at ``k * TABLE_WORDS``, see
:mod:`kynemapy.engine.elements.table`), then the fields below in definition order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._arena import HeaderSpec

#: element tables the header has room for, and header words per table
MAX_TABLES = 8
TABLE_WORDS = 96


class Data(NamedTuple):
    """The arenas of one simulation, as compiled code receives them (eleven arrays).

    mi, mf : model and plan (int64 with the header first; float64), read-only.
    wi, wf : workspace (Newton system, blocks, scratch, saved state).
    sf, si : state (float64: time, q, ..., λ, outputs; int64: step counter).
    xf : inputs (loads, constraint inputs).
    ri, rf : the reference factorization (dense: elimination program; sparse: LU).
    fi, ff : the fallback factorization (dense: partial-pivoting matrix; sparse: LU).
    """

    mi: np.ndarray
    mf: np.ndarray
    wi: np.ndarray
    wf: np.ndarray
    sf: np.ndarray
    si: np.ndarray
    xf: np.ndarray
    ri: np.ndarray
    rf: np.ndarray
    fi: np.ndarray
    ff: np.ndarray


H = HeaderSpec(base=MAX_TABLES * TABLE_WORDS)

# ---- counts and flags
N_NODES = H.scalar("n_nodes")
N_CONSTRAINTS = H.scalar("n_constraints")
N_SYSTEM_DOFS = H.scalar("n_system_dofs")  #: node DOFs (the first rows of the Newton system)
N_DOFS = H.scalar("n_dofs")  #: node DOFs + constraint rows
N_TABLES = H.scalar("n_tables")  #: element tables in the header region
SPARSE = H.scalar("sparse")  #: 1: sparse LU; 0: dense elimination program
HAS_K = H.scalar("has_k")  #: 1 when the pattern has slots for K^Φ

# ---- model (read-only)
X0 = H.field("mf", "x0", ("n_nodes", 7))  #: reference position [m] and orientation
GRAVITY = H.field("mf", "gravity", (3,))  #: [m/s²]
NODE_DOFS = H.field("mi", "node_dofs", ("n_nodes",))
NODE_MAP = H.field("mi", "node_map", ("n_nodes",))  #: first row of each node
CON_KIND = H.field("mi", "constraint_kind", ("n_constraints",))
CON_NODE = H.field("mi", "constraint_node", ("n_constraints", 2))  #: base (−1: ground), target
CON_N_ROWS = H.field("mi", "constraint_n_rows", ("n_constraints",))
CON_ROW = H.field("mi", "constraint_row", ("n_constraints",))  #: first row after the node DOFs
CON_X0 = H.field("mf", "constraint_X0", ("n_constraints", 3))
CON_AXES = H.field("mf", "constraint_axes", ("n_constraints", 3, 3))
CON_GEOM = H.field("mf", "constraint_geometry", ("n_constraints", 2, 4, 3))
CON_PARAM = H.field("mf", "constraint_param", ("n_constraints",))
CON_HAS_LOAD = H.field("mi", "con_has_load", ("n_constraints",))  #: 1 where the kind's input enters the residual

# ---- pattern and slots of the Newton matrix (read-only)
INDPTR = H.field("mi", "indptr", ("n_dofs1",))
INDICES = H.field("mi", "indices", ("nnz",))
CON_ROW_SLOTS = H.field("mi", "con_row_slots", ("n_constraints", 2, 6, 6))
CON_COL_SLOTS = H.field("mi", "con_col_slots", ("n_constraints", 2, 6, 6))
CON_K_SLOTS = H.field("mi", "con_k_slots", ("n_constraints", 2, 2, 6, 6))

# ---- state: float arena (this order is the state arena's; see STATE_FIELDS)
TIME = H.field("sf", "time", (1,))  #: [s]
Q = H.field("sf", "q", ("n_nodes", 7))  #: displacement u [m], rotation quaternion r
Q_PREV = H.field("sf", "q_prev", ("n_nodes", 7))
Q_DELTA = H.field("sf", "q_delta", ("n_nodes", 6))  #: velocity-like increment [m/s, rad/s]
V = H.field("sf", "v", ("n_nodes", 6))  #: (u̇ [m/s], ω [rad/s])
VD = H.field("sf", "vd", ("n_nodes", 6))  #: (ü [m/s²], ω̇ [rad/s²])
A = H.field("sf", "a", ("n_nodes", 6))  #: generalized-α algorithmic acceleration
X = H.field("sf", "x", ("n_nodes", 7))  #: current position [m] and orientation
LAM = H.field("sf", "lam", ("n_constraints", 6))  #: Lagrange multipliers [N, N m]
CON_OUTPUT = H.field("sf", "constraint_output", ("n_constraints", 3))
STEP = H.field("si", "step", (1,))  #: converged steps

# ---- inputs
F = H.field("xf", "f", ("n_nodes", 6))  #: external force [N] and moment [N m]
CON_INPUT = H.field("xf", "constraint_input", ("n_constraints", 7))

# ---- workspace
VALS = H.field("wf", "vals", ("nnz",))  #: Newton matrix values in CSC order
B = H.field("wf", "b", ("n_dofs",))  #: residual (then the right-hand side)
DX = H.field("wf", "dx", ("n_dofs",))  #: Newton increment
TANGENT = H.field("wf", "tangent", ("n_nodes", 3, 3))  #: rotation block of 𝒯 per node
ERRORS = H.field("wf", "errors", ("max_iter",))  #: Newton errors of the last step
CON_PHI = H.field("wf", "con_phi", ("n_constraints", 6))  #: Φ (or the bias γ, see P_RHS_BIAS)
CON_BB = H.field("wf", "con_bb", ("n_constraints", 6, 6))  #: ∂Φ/∂(base node)
CON_BT = H.field("wf", "con_bt", ("n_constraints", 6, 6))  #: ∂Φ/∂(target node)
CON_K = H.field("wf", "con_k", ("n_constraints", 2, 2, 6, 6))  #: K^Φ blocks
CON_LOAD = H.field("wf", "con_load", ("n_constraints", 2, 6))  #: input loads (residual) per side
S3 = H.field("wf", "s3", (8, 3))  #: scratch
S4 = H.field("wf", "s4", (6, 4))
S33 = H.field("wf", "s33", (8, 3, 3))
S66 = H.field("wf", "s66", (4, 6, 6))
S6 = H.field("wf", "s6", (2, 6))
Q_GROUND = H.field("wf", "q_ground", (7,))  #: (0, 0, 0, 1, 0, 0, 0): what a joint sees of the ground
V_GROUND = H.field("wf", "v_ground", (6,))
SAVED = H.field("wf", "saved", ("state_size",))  #: the state arena before the step (rollback)
SAVED_STEP = H.field("wi", "saved_step", (1,))
N_ITER = H.field("wi", "n_iter", (1,))  #: Newton iterations of the last step

# ---- the output row (see kynemapy.run.rows): a flat float64 vector, offsets here
ROW_WIDTH = H.scalar("row_width")
ROW_TIME = H.scalar("row_time")
ROW_STEP = H.scalar("row_step")
ROW_Q = H.scalar("row_q")
ROW_V = H.scalar("row_v")
ROW_VD = H.scalar("row_vd")
ROW_A = H.scalar("row_a")
ROW_LAM = H.scalar("row_lam")
ROW_CON_OUTPUT = H.scalar("row_constraint_output")
ROW_ITERATIONS = H.scalar("row_iterations")
ROW_ERROR = H.scalar("row_error")
ROW_KINETIC = H.scalar("row_kinetic_energy")
ROW_POTENTIAL = H.scalar("row_potential_energy")
ROW_LINEAR = H.scalar("row_linear_momentum")
ROW_ANGULAR = H.scalar("row_angular_momentum")

HEADER_WORDS = H.base + H.size

#: the State fields in the order of :class:`kynemapy.State` (arena order: ``STATE_ARENA``)
STATE_FIELDS = ("q", "q_prev", "q_delta", "v", "vd", "a", "x", "lam", "constraint_output", "time", "step")
INPUT_FIELDS = ("f", "constraint_input")
