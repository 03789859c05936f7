"""Element tables (one module each) and the element phase of the step.

To add an element type: write its module (:mod:`.springs` is the worked example: its fields,
``NODE_DOFS``, ``nodes(model)`` and the kernel ``terms(d, p, t)``), then list it in
:data:`TABLES` and call its kernel in :func:`element_terms`, at the same position.
Packing, sparsity, assembly, output and checks follow from the table's declaration.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.elements import masses, springs
from kynemapy.engine.fields import TABLE_WORDS

#: the element tables in Kynema's assembly order; table k's header words start at k * TABLE_WORDS
TABLES = (masses, springs)


@njit(inline=True)
def element_terms(d, p):
    """Residual and iteration matrix of every element, table by table (into their ``T_RES``, ``T_MAT``)."""
    masses.terms(d, p, 0 * TABLE_WORDS)
    springs.terms(d, p, 1 * TABLE_WORDS)
