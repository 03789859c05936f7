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
``data_ref`` its type) and reads the fields it uses (one load each, no copy of the Data), so
that a call passes four or five scalars; each returns 0.  Each is defined beside the code it
runs (:func:`kynemapy.engine.elements.element_phase`,
:func:`kynemapy.engine.constraints.phase.constraint_phase`,
:func:`kynemapy.engine.assemble.assembly_phase`) and listed here.  Their per-item kernels are
inlined into them (numba ``inline``), but they are not wrappers of an inlined kernel: numba
copies an inlined function's IR block by block, each block's copy taking the function's
whole variable scope with it, and those three copies took 5.5 s of a first compilation
(docs/performance.md, "2026-11-29, later").  Nor are the kernels compiled functions of their
own: then every array reached them as its flattened descriptor, about 350 words stored on the
stack and read back per Newton iteration, a fifth of a heavy-top step.
"""

from __future__ import annotations

from kynemapy.engine.assemble import assembly_phase
from kynemapy.engine.constraints.phase import constraint_phase
from kynemapy.engine.elements import element_phase

__all__ = ["assembly_phase", "constraint_phase", "element_phase"]
