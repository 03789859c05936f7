"""The Newton loop's three large phases as units: compiled apart from the loop, called by address.

:func:`~kynemapy.engine.entry.run_task_at` calls the element phase, the constraint phase and
the constraint assembly once per Newton iteration each.  As compiled callees, their code was
linked into the loop's and optimized again there, and numba's type inference of the loop
compiled them first: the loop's first compilation could not start before theirs had ended.
As units (:mod:`kynemapy.engine.unit_call`) they are compiled on their own, each once, and
the loop only calls their addresses: the four compile independently (in two processes where
two cores are free, :func:`kynemapy.engine.units.fill_units`), and an edit of a kernel they
call recompiles them, not the loop.

Each takes the :class:`~kynemapy.engine.fields.Data` by its address (``data_at`` int64,
``data_ref`` its type) and reads the fields it passes on (one load each, no copy of the
Data), so that a call passes four or five scalars.  Each returns 0.  Their kernels
(``element_terms``, ``constraint_terms``, ``assemble``) are inlined into them
(``njit(inline=True)``, one caller each): called as functions of their own, they received
every array as its flattened descriptor, about 350 words stored on the stack and read back per
Newton iteration, a fifth of a heavy-top step (docs/performance.md, "2026-11-29").
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.assemble import assemble
from kynemapy.engine.constraints.phase import constraint_terms
from kynemapy.engine.elements import element_terms
from kynemapy.engine.unit_call import load_field


@njit
def element_phase(data_at, data_ref, p, c):
    """:func:`~kynemapy.engine.elements.element_terms` on the Data at ``data_at``, with the step
    coefficients ``p`` and the conditioner ``c``."""
    element_terms(
        load_field(data_at, data_ref, "units"), data_at, data_ref, load_field(data_at, data_ref, "x0"),
        load_field(data_at, data_ref, "gravity"), load_field(data_at, data_ref, "q"),
        load_field(data_at, data_ref, "v"), load_field(data_at, data_ref, "vd"),
        load_field(data_at, data_ref, "tangent"), load_field(data_at, data_ref, "s33"),
        load_field(data_at, data_ref, "s3"), load_field(data_at, data_ref, "s4"),
        load_field(data_at, data_ref, "s66"), p, c, load_field(data_at, data_ref, "vals"),
        load_field(data_at, data_ref, "b"),
    )  # fmt: skip
    return 0


@njit
def constraint_phase(data_at, data_ref, exact, with_bias, gp):
    """:func:`~kynemapy.engine.constraints.phase.constraint_terms` on the Data at ``data_at``
    (``exact``: the exact gradients; ``with_bias``: the bias γ instead of Φ; ``gp`` γ′ [1/s])."""
    constraint_terms(
        load_field(data_at, data_ref, "units"), load_field(data_at, data_ref, "kinds"),
        load_field(data_at, data_ref, "constraint_has_load"), load_field(data_at, data_ref, "constraint_node"),
        load_field(data_at, data_ref, "constraint_X0"), load_field(data_at, data_ref, "constraint_axes"),
        load_field(data_at, data_ref, "constraint_geometry"), load_field(data_at, data_ref, "constraint_param"),
        load_field(data_at, data_ref, "constraint_input"), load_field(data_at, data_ref, "q"),
        load_field(data_at, data_ref, "v"), load_field(data_at, data_ref, "lam"),
        load_field(data_at, data_ref, "q_ground"), load_field(data_at, data_ref, "v_ground"),
        load_field(data_at, data_ref, "con_phi"), load_field(data_at, data_ref, "con_bb"),
        load_field(data_at, data_ref, "con_bt"), load_field(data_at, data_ref, "con_k"),
        load_field(data_at, data_ref, "con_load"), load_field(data_at, data_ref, "s3"),
        load_field(data_at, data_ref, "s4"), load_field(data_at, data_ref, "s33"), exact, with_bias,
        load_field(data_at, data_ref, "constraint_output"), load_field(data_at, data_ref, "tangent"), gp,
    )  # fmt: skip
    return 0


@njit
def assembly_phase(data_at, data_ref, c, with_k, with_drives):
    """:func:`~kynemapy.engine.assemble.assemble` on the Data at ``data_at`` (conditioner ``c``;
    ``with_k``: the K^Φ blocks; ``with_drives``: the driven joints' tangents)."""
    assemble(
        load_field(data_at, data_ref, "node_dofs"), load_field(data_at, data_ref, "node_map"),
        load_field(data_at, data_ref, "constraint_node"), load_field(data_at, data_ref, "constraint_n_rows"),
        load_field(data_at, data_ref, "constraint_row"), load_field(data_at, data_ref, "con_row_slots"),
        load_field(data_at, data_ref, "con_col_slots"), load_field(data_at, data_ref, "con_k_slots"),
        load_field(data_at, data_ref, "constraint_has_load"), load_field(data_at, data_ref, "tangent"),
        load_field(data_at, data_ref, "lam"), load_field(data_at, data_ref, "con_phi"),
        load_field(data_at, data_ref, "con_bb"), load_field(data_at, data_ref, "con_bt"),
        load_field(data_at, data_ref, "con_k"), load_field(data_at, data_ref, "con_load"),
        load_field(data_at, data_ref, "vals"), load_field(data_at, data_ref, "b"),
        load_field(data_at, data_ref, "n_system_dofs"), c, with_k, with_drives,
    )  # fmt: skip
    return 0


__all__ = ["assembly_phase", "constraint_phase", "element_phase"]
