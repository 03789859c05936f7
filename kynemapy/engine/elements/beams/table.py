"""Beam element table: Kynema's geometrically exact beam elements as one table of the step.

One row per element (:mod:`kynemapy.engine.elements.table`): ``nodes`` (n, P) its GLL nodes,
−1 padded where elements of lower order share the table with higher ones (P = the largest
node count, Q = the largest quadrature-point count; the padded rows and slots are −1 and drop
out of the assembly), ``NODE_DOFS = 6``.  The kernel :func:`beam_elements` runs
:func:`~kynemapy.engine.elements.beams.integrate.beam_element_terms` on each element's own
slices (nodes ``[:n_nodes]``, points ``[:n_qps]``: a padded point has J = 0), writing the
integrated forces ``∫ φ′ (F_C + F_D1) + φ (F_D + F_D2 + F_I − F_g)`` into ``res`` and
``β′ M + γ′ G + κ K 𝒯`` into ``mat`` (K Kynema's stiffness, or with ``p[P_EXACT]`` the exact one
of :mod:`~kynemapy.engine.elements.beams.exact`).  Node loads act through the global load vector (the
step's ``f``); distributed loads are not an input yet (zero).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements.beams.integrate import ElementScratch, beam_element_terms
from kynemapy.engine.elements.table import add_element_block
from kynemapy.engine.params import P_BETA_PRIME, P_EXACT, P_GAMMA_PRIME, P_STIFFNESS


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


@njit(inline=True)
def beam_elements(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b, exact):
    """Residual and iteration matrix of every beam element of the table ``t`` into ``t.res``,
    ``t.mat``, each added into the Newton system (``vals``, ``b``, conditioner ``c``) as soon as
    it is computed (the signature of every table kernel, :mod:`kynemapy.engine.elements`, and
    ``exact``); ``exact`` as :func:`~kynemapy.engine.elements.beams.integrate.beam_element_terms`
    takes it (None: the plain variant, undamped elements and Kynema's tangent only)."""
    beta_prime = p[P_BETA_PRIME]
    gamma_prime = p[P_GAMMA_PRIME]
    kappa = p[P_STIFFNESS]
    w = ElementScratch(
        t.w_node_u, t.w_node_v, t.w_node_vd, t.w_qp_vec, t.w_qp_mat, t.w_blk, t.w_sums, t.w_acc, t.w_res,
        t.w_s3, t.w_s33, t.w_s4, t.w_s6, t.w_s66,
        t.w_ex_cols, t.w_ex_grad, t.w_ex_maps, t.w_ex_lam, t.w_ex_s3, t.w_ex_s4, t.w_pts, t.w_wm,
    )  # fmt: skip
    for e in range(t.nodes.shape[0]):
        nn = t.n_nodes[e]
        nq = t.n_qps[e]
        m = 6 * nn
        beam_element_terms(
            t.nodes[e, :nn], q, v, vd, tangent, gravity, beta_prime, gamma_prime, kappa, t.mu[e],
            t.qp_weight[e, :nq], t.qp_jacobian[e, :nq], t.shape_interp[e], t.shape_deriv[e],
            t.qp_r0[e, :nq], t.qp_x0_prime[e, :nq], t.qp_m_star[e, :nq], t.qp_c_star[e, :nq],
            t.w_node_fx[:nn], t.qp_fe[e, :nq], w, t.res[e, :m], t.mat[e], exact,
        )  # fmt: skip
        add_element_block(t, e, c, vals, b)


@njit
def beam_phase(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """The engine's beam unit (:mod:`kynemapy.engine.unit_call`, ``BEAMS``) for a model whose
    beams are undamped: Kynema's tangent (the exact one is :func:`beam_phase_full`'s), neither
    damping nor the exact stiffness compiled in.  Compiled on its own, the first time a model
    has beams, and called through its address; returns 0."""
    beam_elements(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b, None)
    return 0


@njit
def beam_phase_full(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """:func:`beam_elements` as the engine's full beam unit (``BEAMS_FULL``): damping and the exact
    tangent (``p[P_EXACT]``) included; compiled only for a model with damped beams or a
    simulation that asks for the exact tangent.  Returns 0."""
    beam_elements(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b, p[P_EXACT] != 0.0)
    return 0
