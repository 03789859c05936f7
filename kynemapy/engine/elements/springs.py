"""Spring element table: a linear spring between the translational DOFs of two nodes.

``r = x0 + u2 − u1`` (x0 = X2 − X1 reference vector [m]), ``l = |r|``,
``c1 = k (l_ref/l − 1)`` [N/m], ``c2 = k l_ref / l³`` [N/m³], force on node 1
``f = c1 r`` [N] (node 2 gets ``−f``).  The 3×3 block ``A = (c1 − c2 l²) I −
c2 r̃ r̃ = c1 I − c2 r rᵀ`` is the Jacobian of ``−f`` with respect to u2... with
Kynema's sign: Kynema assembles ``[[A, −A], [−A, A]]``, the negative of the
true Jacobian ``[[−A, A], [A, −A]]`` of the residual (the exact tangent uses the true one).

This module is the worked example of an element table (see docs/algorithm.md): the table's
own fields (``SPEC``), the DOFs it acts on (``NODE_DOFS``), its nodes (``nodes``) and one
kernel (``terms``) that writes each element's residual and matrix.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements.table import add_element_block
from kynemapy.engine.params import P_EXACT, P_STIFFNESS


class SpringTable(NamedTuple):
    """The springs (n of them): the standard table fields, then ``x0`` (n, 3) reference vector
    X2 − X1 [m], ``l_ref`` (n,) undeformed length [m], ``k`` (n,) stiffness [N/m] and the
    scratch ``r`` (n, 3), the current spring vector [m]."""

    nodes: np.ndarray
    rows: np.ndarray
    slots: np.ndarray
    res: np.ndarray
    mat: np.ndarray
    x0: np.ndarray
    l_ref: np.ndarray
    k: np.ndarray
    r: np.ndarray


TABLE = SpringTable
#: own fields: (field, arena, trailing shape, Model field or None for workspace)
FIELDS = (
    ("x0", "mf", (3,), "spring_x0"),
    ("l_ref", "mf", (), "spring_l_ref"),
    ("k", "mf", (), "spring_k"),
    ("r", "wf", (3,), None),
)
#: two nodes per spring, their three translational DOFs
NODE_DOFS = 3


def nodes(model) -> np.ndarray:
    """(n_springs, 2) the two nodes of each spring."""
    return np.asarray(model.spring_node, dtype=np.int64).reshape(-1, 2)


@njit
def spring_coefficients(k, l_ref, length):
    """Force coefficients ``(c1, c2)``; for ``l_ref = 0`` exactly ``(−k, 0)`` (no 0/0 at zero length)."""
    if l_ref == 0.0:
        return -k, 0.0
    return k * (l_ref / length - 1.0), k * l_ref / (length * length * length)


@njit
def spring_stiffness_block(c1, c2, r, length, out):
    """``A = (c1 − c2 l²) I − c2 r̃ r̃`` (3, 3)."""
    diag = c1 - (c2 * length * length)
    r0, r1, r2 = r[0], r[1], r[2]
    # r̃ r̃ computed as the product of the skews
    out[0, 0] = diag - c2 * (-r2 * r2 - r1 * r1)
    out[0, 1] = -c2 * (r1 * r0)
    out[0, 2] = -c2 * (r2 * r0)
    out[1, 0] = -c2 * (r0 * r1)
    out[1, 1] = diag - c2 * (-r2 * r2 - r0 * r0)
    out[1, 2] = -c2 * (r2 * r1)
    out[2, 0] = -c2 * (r0 * r2)
    out[2, 1] = -c2 * (r1 * r2)
    out[2, 2] = diag - c2 * (-r1 * r1 - r0 * r0)


@njit
def spring_element_terms(x0, u1, u2, k, l_ref, r, res, mat):
    """Force (3,) on node 1 and the 3×3 block ``A`` of one spring.

    ``r`` (3,) scratch/out: the current spring vector [m].  The residual of
    node 1 is ``+res``, of node 2 ``−res``.  Returns the current length [m].
    """
    for i in range(3):
        r[i] = x0[i] + u2[i] - u1[i]
    length = math.sqrt((r[0] * r[0]) + (r[1] * r[1]) + (r[2] * r[2]))
    c1, c2 = spring_coefficients(k, l_ref, length)
    for i in range(3):
        res[i] = c1 * r[i]
    spring_stiffness_block(c1, c2, r, length, mat)
    return length


@njit(inline=True)
def terms(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b):
    """Residual (6,) = (force on node 1, its negative on node 2) and matrix (6, 6) =
    κ s [[A, −A], [−A, A]] of every spring of the table ``t``, s = 1 (Kynema) or −1 (exact
    tangent), each added into the Newton system (``vals``, ``b``, conditioner ``c``) by
    :func:`~kynemapy.engine.elements.table.add_element_block` as soon as it is computed.  The
    signature is every table kernel's (:mod:`kynemapy.engine.elements`); springs read only
    ``q`` and the scratch ``s33``, ``s3``."""
    blk = s33[0]
    f = s3[0]
    sign = -1.0 if p[P_EXACT] != 0.0 else 1.0
    kappa = p[P_STIFFNESS]
    for e in range(t.nodes.shape[0]):
        n1 = t.nodes[e, 0]
        n2 = t.nodes[e, 1]
        spring_element_terms(t.x0[e], q[n1, 0:3], q[n2, 0:3], t.k[e], t.l_ref[e], t.r[e], f, blk)
        re = t.res[e]
        me = t.mat[e]
        for i in range(3):
            re[i] = f[i]
            re[3 + i] = -f[i]
            for j in range(3):
                a = kappa * (sign * blk[i, j])
                me[i, j] = a
                me[i, 3 + j] = -a
                me[3 + i, j] = -a
                me[3 + i, 3 + j] = a
        add_element_block(t, e, c, vals, b)
