"""Filling a simulation's ``Data.units``: the addresses of the compiled units its model uses.

See :mod:`kynemapy.engine.unit_call`.  :func:`fill_units` compiles a unit the first time a model
needs it (or loads it from the cache) for the argument types its caller passes, which are the
same for every model, and writes the address of its C-ABI wrapper (numba's *wrapper address
protocol*, as for first-class functions).  A unit the model does not use keeps address 0 and is
never compiled.
"""

from __future__ import annotations

import threading
from typing import Any

import numba
import numpy as np

from kynemapy._jit import JIT_DISABLED
from kynemapy.engine.constraints.body_phase import TERMS, body_joint_phase
from kynemapy.engine.elements import BEAMS as BEAM_TABLE
from kynemapy.engine.elements import CONTACTS as CONTACT_TABLE
from kynemapy.engine.elements import PAIRS as PAIR_TABLE
from kynemapy.engine.elements.beams.table import beam_phase
from kynemapy.engine.elements.pairs import contact_phase
from kynemapy.engine.entry import run_task_at
from kynemapy.engine.fields import Data
from kynemapy.engine.lookup import argument_types, entry
from kynemapy.engine.solvers import SOLVE, sparse_phase
from kynemapy.engine.unit_call import BEAMS, BODY_JOINTS, CONTACTS, ENGINE, N_UNITS, PLAIN_KERNELS, SPARSE
from kynemapy.model.kinds import BALL_JOINT

#: the unit kernels by their position in ``Data.units``
KERNELS = (beam_phase, body_joint_phase, sparse_phase, run_task_at, contact_phase)
PLAIN_KERNELS[:] = KERNELS  # what plain Python (KYNEMAPY_DISABLE_JIT) calls

#: addresses found, by unit and the identities of numba's (interned) argument types, kept with
#: the types so that their ids stay theirs
_ADDRESSES: dict[tuple[int, ...], tuple[tuple[Any, ...], int]] = {}
_lock = threading.Lock()


def _arguments(index: int, d: Data) -> tuple[Any, ...]:
    """Arguments of the types unit ``index``'s caller passes (values do not matter)."""
    if index in (BEAMS, CONTACTS):
        p = np.zeros(1)
        tables = (d.tables[BEAM_TABLE],) if index == BEAMS else (d.tables[CONTACT_TABLE], d.tables[PAIR_TABLE])
        return (
            *tables, d.x0, d.gravity, d.q, d.v, d.vd, d.tangent, d.s33, d.s3, d.s4, d.s66, p, 1.0,
            d.vals, d.b,
        )  # fmt: skip
    if index == BODY_JOINTS:
        return (
            TERMS, d.kinds.kind, d.constraint_has_load, d.constraint_has_output, d.constraint_node, d.constraint_X0,
            d.constraint_axes, d.constraint_geometry, d.constraint_param, d.constraint_input, d.q, d.v, d.vd, d.lam,
            d.q_ground, d.v_ground, d.con_phi, d.con_bb, d.con_bt, d.con_k, d.con_load, d.constraint_output,
            True, True, d.tangent, 1.0,
        )  # fmt: skip
    if index == SPARSE:
        return (SOLVE, d.solver, d.indptr, d.indices, d.vals, d.dx)
    # the engine: the argument types of run_task's call (and of every stored call)
    data_type = argument_types(run_task_at, (d,))[0]
    return (0, data_type, np.zeros(1), 0, 0, 0, np.zeros((0, 1)), 0, np.zeros(0, dtype=np.int64), np.zeros(6))


def needed(d: Data) -> tuple[bool, ...]:
    """Which units the model of ``d`` uses, by position in ``Data.units``."""
    use = [False] * N_UNITS
    use[BEAMS] = d.tables[BEAM_TABLE].nodes.shape[0] > 0
    use[BODY_JOINTS] = bool(np.any(d.kinds.kind >= BALL_JOINT))
    use[SPARSE] = not d.solver.dense
    use[ENGINE] = True
    use[CONTACTS] = d.tables[CONTACT_TABLE].nodes.shape[0] > 0 or d.tables[PAIR_TABLE].nodes.shape[0] > 0
    return tuple(use)


def address(index: int, d: Data) -> int:
    """The address of unit ``index``'s compiled code for the argument types of ``d`` (compiled,
    or loaded from the cache, on first use)."""
    kernel = KERNELS[index]
    arguments = _arguments(index, d)
    types = argument_types(kernel, arguments)
    key = (index, *map(id, types))
    with _lock:
        hit = _ADDRESSES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], types, strict=True)):
        return hit[1]
    entry(kernel, arguments)  # compiled for these types (announced when long)
    found = numba.types.CompileResultWAP(kernel.overloads[types]).__wrapper_address__()
    with _lock:
        _ADDRESSES[key] = (types, found)
    return found


def fill_units(d: Data) -> None:
    """Write into ``d.units`` the address of every unit the model of ``d`` uses (0 for the
    others); plain Python (``KYNEMAPY_DISABLE_JIT``): nothing to write."""
    if JIT_DISABLED:
        return
    for index, use in enumerate(needed(d)):
        d.units[index] = address(index, d) if use else 0


__all__ = ["KERNELS", "address", "fill_units", "needed"]
