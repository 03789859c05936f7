"""Element tables (one module each) and the element phase of the step.

To add an element type: write its module (:mod:`.springs` is the worked example: its table
class ``TABLE`` with the standard fields of :mod:`.table`, its own ``FIELDS``, ``NODE_DOFS``,
``nodes(model)`` and the kernel ``terms(t, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66,
p, c, vals, b)``, which writes each element's ``res`` and ``mat`` and adds them into the Newton
system with :func:`~kynemapy.engine.elements.table.add_element_block`; optionally
``counts(model)``, sizes named in its fields' shapes, and ``SCRATCH``, kernel scratch allocated
once per table, as the beams have), then list it in :data:`TABLES` and in
:func:`element_phase` below, at the same position.  Packing, sparsity and checks follow from
the table's declaration.  A table whose kernels are a unit of their own (the beams, the
contacts) declares itself in a module without compiled code (:mod:`.beams.table`,
:mod:`.contact_table`, :mod:`.pair_table`), which :data:`TABLES` lists: its kernels are then
imported only for a model that has such elements.
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements import contact_table, masses, pair_table, springs
from kynemapy.engine.elements.beams import table as beams
from kynemapy.engine.elements.table import node_data
from kynemapy.engine.fields import TABLES_FIELD
from kynemapy.engine.params import P_EXACT, P_STIFFNESS
from kynemapy.engine.unit_call import BEAMS as BEAM_UNIT
from kynemapy.engine.unit_call import BEAMS_FULL as BEAM_FULL_UNIT
from kynemapy.engine.unit_call import CONTACTS as CONTACT_UNIT
from kynemapy.engine.unit_call import call_unit, load_field, load_item

#: the element tables in Kynema's assembly order; ``Data.tables[k]`` is the table of TABLES[k]
#: (the beams' and the contacts' declarations: their kernels, the beam and contact units, are
#: imported by :mod:`kynemapy.engine.units` only for a model that has them)
TABLES = (beams, masses, springs, contact_table, pair_table)
#: positions of the tables in TABLES (and in ``Data.tables``)
BEAMS, MASSES, SPRINGS, CONTACTS, PAIRS = 0, 1, 2, 3, 4


@njit
def element_phase(data_at, data_ref, p, c):
    """Residual and iteration matrix of every element, table by table (into their ``res``,
    ``mat``), each element's block added into the Newton system (``b[rows] += res``,
    ``vals[slots] += c · mat``) as soon as it is computed, in Kynema's order (tables in
    :data:`TABLES` order, elements in table order), on the
    :class:`~kynemapy.engine.fields.Data` at address ``data_at`` (``data_ref`` its type), with
    the step coefficients ``p`` (:mod:`kynemapy.engine.params`) and the conditioner ``c``.
    ``vals`` and ``b`` hold the system as :func:`~kynemapy.engine.assemble.begin_system` left
    it.  Returns 0.

    The engine's element unit (:mod:`kynemapy.engine.unit_call`, ``ELEMENTS``): compiled apart
    from the Newton loop and called through its address with four scalars, every field read
    here from the Data (one load each, no copy).  The beams and the contact points are the
    beam and contact units, each called through its address only when the model has them (a
    model without contact compiles no contact code); the beams' damping and exact tangent are a
    unit of their own (``BEAMS_FULL``), called only where the model or ``p`` needs them.  The
    tables' kernels are inlined here (numba ``inline``); this function itself is not inlined
    anywhere: numba copies an inlined function's IR block by block, each copy taking the
    function's whole variable scope with it, and this level's copy cost 2.2 s of a first
    compilation (docs/performance.md, "2026-11-29, later")."""
    # each table is loaded where it is used, alone (the whole Data.tables, ~90 array
    # descriptors, loaded first and kept on the stack across the mass table's call, cost about
    # 490 instructions a call: two thirds of a heavy-top step's element phase)
    units = load_field(data_at, data_ref, "units")
    if load_item(data_at, data_ref, TABLES_FIELD, BEAMS).nodes.shape[0] > 0:
        x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, vals, b = node_data(data_at, data_ref)
        # the exact tangent's stiffness, when asked for, is the full unit's (as are damped
        # beams: BEAMS holds the full unit's address for them); never filled here: fail the step
        unit = BEAM_FULL_UNIT if p[P_EXACT] != 0.0 and p[P_STIFFNESS] != 0.0 else BEAM_UNIT
        if units[unit] == 0:
            b[0] = np.nan
        else:
            beam_table = load_item(data_at, data_ref, TABLES_FIELD, BEAMS)
            call_unit(units, unit, (beam_table, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b))
    masses.terms(data_at, data_ref, p, c)  # (its own compiled function: see there)
    spring_table = load_item(data_at, data_ref, TABLES_FIELD, SPRINGS)
    if spring_table.nodes.shape[0] > 0:
        x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, vals, b = node_data(data_at, data_ref)
        springs.terms(spring_table, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b)
    if (
        load_item(data_at, data_ref, TABLES_FIELD, CONTACTS).nodes.shape[0] > 0
        or load_item(data_at, data_ref, TABLES_FIELD, PAIRS).nodes.shape[0] > 0
    ):
        x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, vals, b = node_data(data_at, data_ref)
        contact_table = load_item(data_at, data_ref, TABLES_FIELD, CONTACTS)
        pair_table = load_item(data_at, data_ref, TABLES_FIELD, PAIRS)
        call_unit(
            units, CONTACT_UNIT,
            (contact_table, pair_table, x0, gravity, q, v, vd, tangent, s33, s3, s4, s66, p, c, vals, b),
        )  # fmt: skip
    return 0
