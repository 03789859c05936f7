"""The fields every element table has, and how a table module declares its own.

An element table is a struct of arrays over its elements (Kynema's ``Masses``, ``Springs``,
``Beams``): a NamedTuple class in the table's module whose first five fields are the same
for every table:

``nodes`` (n, nodes_per) int
    the nodes of each element.
``rows`` (n, m) int
    system row of each row of the element block (−1 where the node lacks the DOF);
    m = nodes_per × ``NODE_DOFS`` (the DOFs of each node the element acts on).
``slots`` (n, m, m) int
    position of each block entry in the Newton matrix values (−1 where absent).
``res`` (n, m) float
    the element's residual, written by the table's kernel [N, N m].
``mat`` (n, m, m) float
    its iteration matrix ``β′ M + γ′ G + κ K`` (unconditioned), written by the kernel.

:func:`add_element_block` adds one element's ``res`` and ``c · mat`` into the Newton system
through ``rows`` and ``slots``; a table's kernel computes them and calls it for each element.  The
module lists its own fields in ``FIELDS`` as (field, arena, trailing shape, Model field or
None), defines ``NODE_DOFS``, ``nodes(model)`` and the kernel ``terms(t, ..., p, c, vals, b)``
(see :mod:`kynemapy.engine.elements`).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.unit_call import load_field

#: the five standard fields: (field, arena, shape with counts n, nodes_per, m)
STANDARD = (
    ("nodes", "mi", ("n", "nodes_per")),
    ("rows", "mi", ("n", "m")),
    ("slots", "mi", ("n", "m", "m")),
    ("res", "wf", ("n", "m")),
    ("mat", "wf", ("n", "m", "m")),
)


@njit(inline=True)
def add_element_block(t, e, c, vals, b):
    """``b[t.rows[e]] += t.res[e]``, ``vals[t.slots[e]] += c · t.mat[e]``: element ``e`` of table
    ``t`` into the Newton system, right after its kernel wrote it (its block is then still in
    the cache: a second pass over a table of a thousand bodies cost 35 ns per body)."""
    rows = t.rows[e]
    slots = t.slots[e]
    res = t.res[e]
    mat = t.mat[e]
    m = rows.shape[0]
    for i in range(m):
        r = rows[i]
        if r >= 0:
            b[r] += res[i]
    for i in range(m):
        s = slots[i]
        me = mat[i]
        for j in range(m):
            sij = s[j]
            if sij >= 0:
                vals[sij] += c * me[j]


@njit(inline=True)
def node_data(data_at, data_ref):
    """The arrays every element kernel takes, read from the Data at ``data_at`` (``data_ref`` its
    type), one load each: ``(x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, vals, b)``."""
    return (
        load_field(data_at, data_ref, "x0"), load_field(data_at, data_ref, "gravity"),
        load_field(data_at, data_ref, "q"), load_field(data_at, data_ref, "v"), load_field(data_at, data_ref, "vd"),
        load_field(data_at, data_ref, "tangent"), load_field(data_at, data_ref, "s33"),
        load_field(data_at, data_ref, "s3"), load_field(data_at, data_ref, "s4"), load_field(data_at, data_ref, "s66"),
        load_field(data_at, data_ref, "vals"), load_field(data_at, data_ref, "b"),
    )  # fmt: skip
