"""The compliant contact points' table (:mod:`.contacts`): its columns, fields and nodes, without
the kernels (imported with the engine; the kernels only by a model with contact, as the contact
unit's).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: columns of ``contact_param``: stiffness k [N/m^e], exponent e, damping c, Hunt–Crossley flag
#: (1: damping times δ^e), friction coefficient μ, slip-velocity regularization v_s [m/s]
PARAM_K, PARAM_EXPONENT, PARAM_DAMPING, PARAM_HUNT_CROSSLEY, PARAM_MU, PARAM_SLIP = range(6)
N_PARAM = 6
#: columns of the contact state ``out`` (n, 6): gap n·(x+s) − d − r [m] (< 0: penetration),
#: normal force f_n [N], friction force f_t (3) [N], slip speed ``|v_t|`` [m/s]
OUT_GAP, OUT_NORMAL, OUT_FRICTION, OUT_SLIP = 0, 1, 2, 5
N_OUT = 6


class ContactTable(NamedTuple):
    """The contact points (n of them): the standard table fields, then ``offset`` (n, 3) point
    offset s₀ from the node at the reference configuration [m], ``radius`` (n,) [m], ``plane``
    (n, 4) unit normal n and offset d [m] of the plane ``n · y = d``, ``param`` (n, 6) (see
    :data:`PARAM_K` ...) and the state ``out`` (n, 6) written at each evaluation (see
    :data:`OUT_GAP` ...)."""

    nodes: np.ndarray
    rows: np.ndarray
    slots: np.ndarray
    res: np.ndarray
    mat: np.ndarray
    offset: np.ndarray
    radius: np.ndarray
    plane: np.ndarray
    param: np.ndarray
    out: np.ndarray


TABLE = ContactTable
#: own fields: (field, arena, trailing shape, Model field or None for workspace)
FIELDS = (
    ("offset", "mf", (3,), "contact_offset"),
    ("radius", "mf", (), "contact_radius"),
    ("plane", "mf", (4,), "contact_plane"),
    ("param", "mf", (N_PARAM,), "contact_param"),
    ("out", "wf", (N_OUT,), None),
)
#: one node per contact point, all six DOFs
NODE_DOFS = 6


def nodes(model) -> np.ndarray:
    """(n_contacts, 1) the node of each contact point."""
    return np.asarray(model.contact_node, dtype=np.int64).reshape(-1, 1)
