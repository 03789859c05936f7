"""The body–body contact pairs' table (:mod:`.pairs`): its fields, scratch and nodes, without the
kernels (imported with the engine; the kernels only by a model with contact, as the contact
unit's).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy.engine.elements.contact_table import N_OUT, N_PARAM


class PairTable(NamedTuple):
    """The candidate pairs (n of them): the standard table fields, then ``offset`` (n, 4, 3) body
    1's point (a sphere's centre, a box corner, a capsule's end a), body 2's segment ends and body
    1's second segment end (a capsule–capsule pair: its end b; row 0 again otherwise), offsets
    from their nodes at the reference configuration [m], ``radius``
    (n, 2) [m], ``param`` (n, 6) the contact law (:data:`~.contact_table.PARAM_K` ...), the state
    ``out`` (n, 6) (:data:`~.contact_table.OUT_GAP` ...; the friction force is body 2's), ``box``
    (n, 4, 3) where body 2's shape is a box, its centre's offset and its three half-axis
    vectors at the reference configuration [m] (zeros otherwise), and the kernel scratch ``jac``
    (12, 3, 24)."""

    nodes: np.ndarray
    rows: np.ndarray
    slots: np.ndarray
    res: np.ndarray
    mat: np.ndarray
    offset: np.ndarray
    radius: np.ndarray
    param: np.ndarray
    out: np.ndarray
    box: np.ndarray
    jac: np.ndarray


TABLE = PairTable
FIELDS = (
    ("offset", "mf", (4, 3), "pair_offset"),
    ("radius", "mf", (2,), "pair_radius"),
    ("param", "mf", (N_PARAM,), "pair_param"),
    ("out", "wf", (N_OUT,), None),
    ("box", "mf", (4, 3), "pair_box"),
)
#: the kernel's 3×24 Jacobians, once per table
SCRATCH = (("jac", (12, 3, 24)),)
#: two nodes per pair, all six DOFs each
NODE_DOFS = 6


def nodes(model) -> np.ndarray:
    """(n_pairs, 2) the two nodes of each pair."""
    return np.asarray(model.pair_node, dtype=np.int64).reshape(-1, 2)
