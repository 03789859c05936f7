"""Beam element table: Kynema's geometrically exact beam elements as one table of the step.

One row per element (:mod:`kynemapy.engine.elements.table`): ``nodes`` (n, P) its GLL nodes,
−1 padded where elements of lower order share the table with higher ones (P = the largest
node count, Q = the largest quadrature-point count; the padded rows and slots are −1 and drop
out of the assembly), ``NODE_DOFS = 6``.  This module declares the table (its fields, sizes and
scratch) and holds no compiled code: the kernels are :mod:`.phase`'s, imported only when a
model has beams (a process that steps rigid bodies never loads them: about 15 ms of its start).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class BeamTable(NamedTuple):
    """The beam elements (n of them): the standard table fields, the model's beam fields
    (:class:`kynemapy.Model`, ``beam_*``), the distributed loads ``qp_fe`` (n, Q, 6) [N/m, N]
    (zero), and the kernel's scratch ``w_*`` (one element's, shared by the elements in turn)."""

    nodes: np.ndarray
    rows: np.ndarray
    slots: np.ndarray
    res: np.ndarray
    mat: np.ndarray
    n_nodes: np.ndarray
    n_qps: np.ndarray
    mu: np.ndarray
    qp_weight: np.ndarray
    qp_jacobian: np.ndarray
    shape_interp: np.ndarray
    shape_deriv: np.ndarray
    qp_x0: np.ndarray
    qp_r0: np.ndarray
    qp_x0_prime: np.ndarray
    qp_m_star: np.ndarray
    qp_c_star: np.ndarray
    qp_fe: np.ndarray
    w_node_fx: np.ndarray
    w_node_u: np.ndarray
    w_node_v: np.ndarray
    w_node_vd: np.ndarray
    w_qp_vec: np.ndarray
    w_qp_mat: np.ndarray
    w_blk: np.ndarray
    w_sums: np.ndarray
    w_acc: np.ndarray
    w_res: np.ndarray
    w_s3: np.ndarray
    w_s33: np.ndarray
    w_s4: np.ndarray
    w_s6: np.ndarray
    w_s66: np.ndarray
    w_ex_cols: np.ndarray
    w_ex_grad: np.ndarray
    w_ex_maps: np.ndarray
    w_ex_lam: np.ndarray
    w_ex_s3: np.ndarray
    w_ex_s4: np.ndarray
    w_pts: np.ndarray
    w_wm: np.ndarray


TABLE = BeamTable
#: own fields: (field, arena, trailing shape with "P" nodes and "Q" points per element, Model field)
FIELDS = (
    ("n_nodes", "mi", (), "beam_n_nodes"),
    ("n_qps", "mi", (), "beam_n_qps"),
    ("mu", "mf", (6,), "beam_mu"),
    ("qp_weight", "mf", ("Q",), "beam_qp_weight"),
    ("qp_jacobian", "mf", ("Q",), "beam_qp_jacobian"),
    ("shape_interp", "mf", ("P", "Q"), "beam_shape_interp"),
    ("shape_deriv", "mf", ("P", "Q"), "beam_shape_deriv"),
    ("qp_x0", "mf", ("Q", 3), "beam_qp_x0"),
    ("qp_r0", "mf", ("Q", 4), "beam_qp_r0"),
    ("qp_x0_prime", "mf", ("Q", 3), "beam_qp_x0_prime"),
    ("qp_m_star", "mf", ("Q", 6, 6), "beam_qp_m_star"),
    ("qp_c_star", "mf", ("Q", 6, 6), "beam_qp_c_star"),
    ("qp_fe", "wf", ("Q", 6), None),
)
#: scratch of the kernel, once per table (workspace): (field, shape)
SCRATCH = (
    ("w_node_fx", ("P", 6)),
    ("w_node_u", ("P", 7)),
    ("w_node_v", ("P", 6)),
    ("w_node_vd", ("P", 6)),
    ("w_qp_vec", (6, "Q", 6)),
    ("w_qp_mat", (15, "Q", 6, 6)),
    ("w_blk", (2, "P", "P", 6, 6)),
    ("w_sums", ("Q", 5, 36)),
    ("w_acc", (36,)),
    ("w_res", ("P", 6)),
    ("w_s3", (6, 3)),
    ("w_s33", (7, 3, 3)),
    ("w_s4", (3, 4)),
    ("w_s6", (2, 6)),
    ("w_s66", (3, 6, 6)),
    ("w_ex_cols", ("Q", "P", 2, 6, 6)),
    ("w_ex_grad", (2, 6, 9)),
    ("w_ex_maps", (2, 3, 3)),
    ("w_ex_lam", (2, 4, 3)),
    ("w_ex_s3", (10, 3)),
    ("w_ex_s4", (2, 4)),
    ("w_pts", ("Q", 8, 36)),
    ("w_wm", (2, "Q", 6, "m")),
)
#: every node of a beam has six DOFs
NODE_DOFS = 6


def nodes(model) -> np.ndarray:
    """(n_beams, P) the nodes of each element, −1 padded."""
    return np.asarray(model.beam_node, dtype=np.int64).reshape(int(model.n_beams), np.shape(model.beam_node)[1])


def scratch_nodes(t) -> int:
    """Nodes per element a beam table's scratch is sized for (at least 1)."""
    return max(int(t.w_node_u.shape[0]), 1)


def counts(model) -> dict[str, int]:
    """The table's per-element sizes: P nodes and Q quadrature points (padded)."""
    return {"P": int(np.shape(model.beam_node)[1]), "Q": int(np.shape(model.beam_qp_weight)[1])}
