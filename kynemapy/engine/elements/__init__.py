"""Element tables (one module each) and the element phase of the step.

To add an element type: write its module (:mod:`.springs` is the worked example: its table
class ``TABLE`` with the standard fields of :mod:`.table`, its own ``FIELDS``, ``NODE_DOFS``,
``nodes(model)`` and the kernel ``terms(t, d, p)``; optionally ``counts(model)``, sizes named
in its fields' shapes, and ``SCRATCH``, kernel scratch allocated once per table, as the beams
have), then list it in :data:`TABLES` and in the two phase functions below, at the same
position.  Packing, sparsity and checks follow from the table's declaration.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.elements import masses, springs
from kynemapy.engine.elements.beams import table as beams
from kynemapy.engine.elements.table import add_element_blocks

#: the element tables in Kynema's assembly order; ``Data.tables[k]`` is the table of TABLES[k]
TABLES = (beams, masses, springs)
#: positions of the tables in TABLES (and in ``Data.tables``)
BEAMS, MASSES, SPRINGS = 0, 1, 2


@njit(inline=True)
def element_terms(tables, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p):
    """Residual and iteration matrix of every element, table by table (into their ``res``, ``mat``)."""
    beams.terms(tables[0], x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p)
    masses.terms(tables[1], x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p)
    springs.terms(tables[2], x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p)


@njit(inline=True)
def element_blocks(tables, c, vals, b):
    """Assembly of every table: ``b[rows] += res``, ``vals[slots] += c · mat`` (Kynema's order)."""
    add_element_blocks(tables[0], c, vals, b)
    add_element_blocks(tables[1], c, vals, b)
    add_element_blocks(tables[2], c, vals, b)
