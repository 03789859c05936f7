"""Calls into the engine's optional units: code compiled on its own, when a model needs it.

The Newton loop (:func:`kynemapy.engine.entry.run_task`) is compiled once for every model, but
five parts of it only some models use: the beam elements (with damping or the exact tangent a
unit of their own: ``BEAMS_FULL``), the two-body joints, the sparse LU, the dense solve with
held nodes eliminated first, and the contact points.
Each is a *unit*: a compiled function of plain arguments, compiled (or loaded from the cache)
the first time a simulation needs it, whose address the simulation's ``Data.units`` (int64,
(:data:`N_UNITS`,)) holds (:func:`kynemapy.engine.units.fill_units`).  The Newton loop calls a
unit through that address (:func:`call_unit`), so the unit's code is neither compiled into the
loop nor compiled at all for a model that does not use it: the heavy top compiles no beam, joint
or sparse code, and the loop's own compilation does not optimize the units' code again (numba
links every callee's code into its caller and optimizes the whole again).

A unit returns an int64 (a status, or 0).  Its address is 0 until it is filled; the callers
call a unit only where the model has its part (beams, two-body joints, the sparse solver),
which is exactly where :func:`~kynemapy.engine.units.fill_units` fills it.
"""

from __future__ import annotations

from typing import Any

from kynemapy._jit import JIT_DISABLED

#: the units, by their position in ``Data.units``
BEAMS = 0  #: the beam elements' terms (:func:`kynemapy.engine.elements.beams.phase.beam_phase`)
BODY_JOINTS = 1  #: the two-body joints (:func:`kynemapy.engine.constraints.body_phase.body_joint_phase`)
SPARSE = 2  #: the sparse LU (:func:`kynemapy.engine.sparse_unit.sparse_phase`)
ENGINE = 3  #: the engine itself, every model's (:func:`kynemapy.engine.entry.run_task_at`)
CONTACTS = 4  #: the compliant contacts (:func:`kynemapy.engine.elements.pairs.contact_phase`)
ELEMENTS = 5  #: the element phase (:func:`kynemapy.engine.phases.element_phase`)
CONSTRAINTS = 6  #: the constraint phase (:func:`kynemapy.engine.phases.constraint_phase`)
ASSEMBLY = 7  #: the constraint assembly (:func:`kynemapy.engine.phases.assembly_phase`)
#: the beam elements with damping and the exact tangent
#: (:func:`kynemapy.engine.elements.beams.phase.beam_phase_full`): the element phase calls it when
#: ``p`` asks for the exact tangent (``P_EXACT`` with ``P_STIFFNESS`` ≠ 0), else ``BEAMS``, which
#: holds this same unit's address for a model with damped beams
BEAMS_FULL = 8
#: the two-body joints with drives and cone limits
#: (:func:`kynemapy.engine.constraints.body_phase.body_joint_phase_full`): ``BODY_JOINTS`` holds
#: its address for a model with a drive, or once a servo is given between steps (the engine's
#: ``NEEDS_UNIT`` status asks for it)
BODY_JOINTS_FULL = 9
#: the dense solve with the held nodes eliminated first, ``Solver.dense`` 3
#: (:func:`kynemapy.engine.held_unit.held_solve`)
HELD = 10
N_UNITS = 11

#: plain Python (``KYNEMAPY_DISABLE_JIT``): the unit functions themselves, by position, as
#: :mod:`kynemapy.engine.units` registers them when imported (before any simulation exists)
PLAIN_KERNELS: list[Any] = [None] * N_UNITS

if JIT_DISABLED:  # plain Python: call the unit's function itself; the Data stands for its address

    def call_unit(units: Any, index: int, arguments: tuple[Any, ...]) -> int:
        """``unit(*arguments)`` for unit ``index`` (plain Python: the function itself)."""
        return PLAIN_KERNELS[index](*arguments)

    def load_field(data_at: Any, data_ref: Any, name: str) -> Any:
        """The field ``name`` of the Data (plain Python: ``data_at`` is the Data itself)."""
        return getattr(data_at, name)

    def load_item(data_at: Any, data_ref: Any, index: int, item: int) -> Any:
        """Item ``item`` of member ``index`` of the Data (plain Python: ``data_at`` is the Data)."""
        return data_at[index][item]

else:
    from kynemapy.engine.native import call_address as call_unit
    from kynemapy.engine.native import load_field, load_item

__all__ = [
    "ASSEMBLY",
    "BEAMS",
    "BEAMS_FULL",
    "BODY_JOINTS",
    "BODY_JOINTS_FULL",
    "CONSTRAINTS",
    "CONTACTS",
    "ELEMENTS",
    "ENGINE",
    "HELD",
    "N_UNITS",
    "PLAIN_KERNELS",
    "SPARSE",
    "call_unit",
    "load_field",
    "load_item",
]
