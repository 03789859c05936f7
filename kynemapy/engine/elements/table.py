"""The fields every element table has, and how a table module declares its own.

An element table is a struct of arrays over its elements (Kynema's ``Masses``, ``Springs``,
``Beams``).  Each table has a region of :data:`~kynemapy.engine.fields.TABLE_WORDS` header
words; table k's region starts at word ``t = k * TABLE_WORDS``, and its kernel receives
``t``.  The first five fields are the same for every table (words relative to ``t``):

``T_NODES`` (n, nodes_per) int
    the nodes of each element.
``T_ROWS`` (n, m) int
    system row of each row of the element block (−1 where the node lacks the DOF);
    m = nodes_per × ``NODE_DOFS`` (the DOFs of each node the element acts on).
``T_SLOTS`` (n, m, m) int
    position of each block entry in the Newton matrix values (−1 where absent).
``T_RES`` (n, m) float
    the element's residual, written by the table's kernel [N, N m].
``T_MAT`` (n, m, m) float
    its iteration matrix ``β′ M + γ′ G + κ K`` (unconditioned), written by the kernel.

The generic assembly (:mod:`kynemapy.engine.assemble`) adds ``T_RES`` and ``c · T_MAT`` into
the Newton system through ``T_ROWS`` and ``T_SLOTS``; a table's kernel only computes them.
A table module adds its own fields with ``SPEC.field(...)`` after these (named like the
:class:`~kynemapy.Model` fields they are packed from), and defines ``NODE_DOFS``,
``nodes(model)`` and the kernel ``terms(d, p, t)``.
"""

from __future__ import annotations

from kynemapy._arena import HeaderSpec
from kynemapy.engine.fields import TABLE_WORDS


def table_spec() -> HeaderSpec:
    """A header spec holding the five standard fields (words relative to the table's start)."""
    spec = HeaderSpec()
    spec.field("mi", "nodes", ("n", "nodes_per"))
    spec.field("mi", "rows", ("n", "m"))
    spec.field("mi", "slots", ("n", "m", "m"))
    spec.field("wf", "res", ("n", "m"))
    spec.field("wf", "mat", ("n", "m", "m"))
    return spec


_STANDARD = table_spec()
T_NODES, T_ROWS, T_SLOTS, T_RES, T_MAT = (f.word for f in _STANDARD.fields)


def check_spec(spec: HeaderSpec, name: str) -> None:
    """Raise if a table's fields do not fit its header region."""
    if spec.size > TABLE_WORDS:
        raise ValueError(f"element table {name}: {spec.size} header words, room for {TABLE_WORDS}")
