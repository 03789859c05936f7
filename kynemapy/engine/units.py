"""Filling a simulation's ``Data.units``: the addresses of the compiled units its model uses.

See :mod:`kynemapy.engine.unit_call`.  :func:`fill_units` compiles a unit the first time a model
needs it (or loads it from the cache) for the argument types its caller passes, which are the
same for every model, and writes the address of its C-ABI wrapper (numba's *wrapper address
protocol*, as for first-class functions).  A unit the model does not use keeps address 0 and is
never compiled.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
from typing import Any

import numba
import numpy as np

from kynemapy._jit import JIT_DISABLED
from kynemapy.engine.constraints.joint_unit import TERMS
from kynemapy.engine.elements import BEAMS as BEAM_TABLE
from kynemapy.engine.elements import CONTACTS as CONTACT_TABLE
from kynemapy.engine.elements import PAIRS as PAIR_TABLE
from kynemapy.engine.entry import run_task_at
from kynemapy.engine.fields import Data
from kynemapy.engine.lookup import argument_types, entry
from kynemapy.engine.notice import ANNOUNCED, announce, is_cached
from kynemapy.engine.params import P_EXACT, P_STIFFNESS
from kynemapy.engine.phases import assembly_phase, constraint_phase, element_phase
from kynemapy.engine.solvers import SOLVE
from kynemapy.engine.unit_call import (
    ASSEMBLY,
    BEAMS,
    BEAMS_FULL,
    BODY_JOINTS,
    BODY_JOINTS_FULL,
    CONSTRAINTS,
    CONTACTS,
    ELEMENTS,
    ENGINE,
    HELD,
    N_UNITS,
    PLAIN_KERNELS,
    SPARSE,
)
from kynemapy.model.kinds import BALL_JOINT, DRIVEN_LOAD, driven

#: the units whose kernels' modules are imported on first use (a model with beams, contact,
#: two-body joints, the sparse solver or a held node): (module, function).  A process that
#: steps Kynema's kinds with the dense solver never imports them, nor the ~120 compiled
#: functions they define (about 40 ms of its start, docs/performance.md); the engine calls
#: every unit through its address.
_LATER = {
    BODY_JOINTS: ("kynemapy.engine.constraints.body_phase", "body_joint_phase"),
    BODY_JOINTS_FULL: ("kynemapy.engine.constraints.body_phase", "body_joint_phase_full"),
    BEAMS: ("kynemapy.engine.elements.beams.phase", "beam_phase"),
    BEAMS_FULL: ("kynemapy.engine.elements.beams.phase", "beam_phase_full"),
    CONTACTS: ("kynemapy.engine.elements.pairs", "contact_phase"),
    SPARSE: ("kynemapy.engine.sparse_unit", "sparse_phase"),
    HELD: ("kynemapy.engine.held_unit", "held_solve"),
}
_kernels: list[Any] = [
    None, None, None, run_task_at, None, element_phase, constraint_phase, assembly_phase, None, None, None,
]  # fmt: skip


def kernel(index: int) -> Any:
    """The unit kernel at position ``index`` of ``Data.units`` (its module imported on first use)."""
    found = _kernels[index]
    if found is None:
        module, name = _LATER[index]
        found = _kernels[index] = getattr(importlib.import_module(module), name)
    return found


if JIT_DISABLED:  # plain Python calls the functions by position: every unit, the full beam and joint ones
    PLAIN_KERNELS[:] = [kernel(index) for index in range(N_UNITS)]
    PLAIN_KERNELS[BEAMS] = kernel(BEAMS_FULL)
    PLAIN_KERNELS[BODY_JOINTS] = kernel(BODY_JOINTS_FULL)

#: addresses found, by unit and the identities of numba's (interned) argument types, kept with
#: the types so that their ids stay theirs
_ADDRESSES: dict[tuple[int, ...], tuple[tuple[Any, ...], int]] = {}
_lock = threading.Lock()


def _arguments(index: int, d: Data) -> tuple[Any, ...]:
    """Arguments of the types unit ``index``'s caller passes (values do not matter)."""
    if index in (BEAMS, BEAMS_FULL, CONTACTS):
        p = np.zeros(1)
        tables = (d.tables[BEAM_TABLE],) if index != CONTACTS else (d.tables[CONTACT_TABLE], d.tables[PAIR_TABLE])
        return (
            *tables, d.x0, d.gravity, d.q, d.v, d.vd, d.tangent, d.s33, d.s3, d.s4, d.s66, p, 1.0,
            d.vals, d.b,
        )  # fmt: skip
    if index in (BODY_JOINTS, BODY_JOINTS_FULL):
        return (
            TERMS, d.kinds.kind, d.constraint_has_load, d.constraint_has_output, d.constraint_node, d.constraint_X0,
            d.constraint_axes, d.constraint_geometry, d.constraint_param, d.constraint_input, d.q, d.v, d.vd, d.lam,
            d.q_ground, d.v_ground, d.con_phi, d.con_bb, d.con_bt, d.con_k, d.con_load, d.constraint_output,
            True, True, d.tangent, 1.0,
        )  # fmt: skip
    if index == SPARSE:
        return (SOLVE, d.solver, d.indptr, d.indices, d.vals, d.dx)
    if index == HELD:
        return (d.solver, d.indptr, d.indices, d.vals, d.dx)
    # the engine and the phases: the Data by its address and type (run_task's own first argument)
    data_type = argument_types(run_task_at, (d,))[0]
    if index == ELEMENTS:
        return (0, data_type, np.zeros(1), 1.0)
    if index == CONSTRAINTS:
        return (0, data_type, True, True, 1.0)
    if index == ASSEMBLY:
        return (0, data_type, 1.0, True, True)
    return (0, data_type, np.zeros(1), 0, 0, 0, np.zeros((0, 1)), 0, np.zeros(0, dtype=np.int64), np.zeros(6))


def damped_beams(d: Data) -> bool:
    """Whether the model of ``d`` has beams with structural damping (the full beam unit's)."""
    return bool(np.any(d.tables[BEAM_TABLE].mu != 0.0))


def driven_joints(d: Data) -> bool:
    """Whether the model of ``d`` has a driven two-body joint (a drive or cone limit in the model,
    ``constraint_has_load`` 2, or a servo in its present constraint inputs): the full joint unit's."""
    if np.any(d.constraint_has_load == DRIVEN_LOAD):
        return True
    return bool(np.any(driven(d.kinds.kind, d.constraint_axes, d.constraint_input) & (d.constraint_has_load != 0)))


def needed(d: Data, exact: bool = False) -> tuple[bool, ...]:
    """Which units the model of ``d`` uses, by position in ``Data.units``; ``exact``: the
    simulation may ask for the exact tangent (the full beam unit, for a model with beams)."""
    use = [False] * N_UNITS
    use[BEAMS] = d.tables[BEAM_TABLE].nodes.shape[0] > 0
    use[BEAMS_FULL] = use[BEAMS] and (exact or damped_beams(d))
    use[BODY_JOINTS] = bool(np.any(d.kinds.kind >= BALL_JOINT))
    use[BODY_JOINTS_FULL] = use[BODY_JOINTS] and driven_joints(d)
    use[SPARSE] = not d.solver.dense
    use[HELD] = d.solver.dense == 3
    use[ENGINE] = use[ELEMENTS] = use[CONSTRAINTS] = use[ASSEMBLY] = True
    use[CONTACTS] = d.tables[CONTACT_TABLE].nodes.shape[0] > 0 or d.tables[PAIR_TABLE].nodes.shape[0] > 0
    return tuple(use)


def address(index: int, d: Data, types: tuple[Any, ...] | None = None) -> int:
    """The address of unit ``index``'s compiled code for the argument types of ``d`` (compiled,
    or loaded from the cache, on first use); ``types``: those argument types, where the caller
    has them (:func:`unit_types`)."""
    unit = kernel(index)
    if types is None:
        types = unit_types(index, d)
    key = (index, *map(id, types))
    with _lock:
        hit = _ADDRESSES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], types, strict=True)):
        return hit[1]
    entry(unit, _arguments(index, d))  # compiled for these types (announced when long)
    found = numba.types.CompileResultWAP(unit.overloads[types]).__wrapper_address__()
    with _lock:
        _ADDRESSES[key] = (types, found)
    return found


def unit_types(index: int, d: Data) -> tuple[Any, ...]:
    """The numba types of the arguments unit ``index``'s caller passes for ``d``."""
    return argument_types(kernel(index), _arguments(index, d))


def fill_units(d: Data, exact: bool = False) -> None:
    """Write into ``d.units`` the address of every unit the model of ``d`` uses (0 for the
    others), compiling those never compiled into the cache (in two processes where they are
    several and two cores are free: :func:`compile_units`); ``exact``: the simulation may ask
    for the exact tangent (:func:`needed`).  A model with damped beams gets the full beam
    unit's address as ``BEAMS`` too.  Plain Python (``KYNEMAPY_DISABLE_JIT``): 1 for each unit
    used (the functions are called by position)."""
    use = needed(d, exact)
    if JIT_DISABLED:
        d.units[:] = use
        d.units[BODY_JOINTS_FULL] = use[BODY_JOINTS]  # (the one joint function has the drives)
        return
    wanted = [index for index, used in enumerate(use) if used]
    if use[BEAMS] and damped_beams(d):
        wanted.remove(BEAMS)  # its address is the full unit's
    if use[BODY_JOINTS_FULL]:
        wanted.remove(BODY_JOINTS)  # likewise
    found = compile_units(wanted, d)
    for index, used in enumerate(use):
        d.units[index] = found[index] if used and index in wanted else 0
    if use[BEAMS] and not d.units[BEAMS]:
        d.units[BEAMS] = d.units[BEAMS_FULL]
    if use[BODY_JOINTS] and not d.units[BODY_JOINTS]:
        d.units[BODY_JOINTS] = d.units[BODY_JOINTS_FULL]


def fill_missing(d: Data) -> bool:
    """After the engine's ``NEEDS_UNIT`` status, or before a task whose status is not read: fill
    the full two-body joint unit into ``d.units`` (as ``BODY_JOINTS`` and ``BODY_JOINTS_FULL``,
    compiling it on first use, announced) where the simulation holds the unit without drives
    and a joint now has one (a servo given between steps).  Returns whether it did; cheap when
    nothing is missing (two reads of ``d.units``)."""
    units = d.units
    if units[BODY_JOINTS] == 0 or units[BODY_JOINTS_FULL] != 0 or not driven_joints(d):
        return False
    compile_units([BODY_JOINTS_FULL], d)
    units[BODY_JOINTS_FULL] = units[BODY_JOINTS] = address(BODY_JOINTS_FULL, d)
    return True


def need_exact_beams(d: Data, p: np.ndarray) -> None:
    """Fill the full beam unit's address into ``d.units`` (compiling it on first use) where the
    coefficients ``p`` ask for the exact tangent of a model with beams whose Data was made
    without it (:func:`fill_units`'s ``exact``): a task run with such ``p`` needs it."""
    if d.units[BEAMS_FULL] == 0 and p[P_EXACT] != 0.0 and p[P_STIFFNESS] != 0.0 and needed(d)[BEAMS]:
        d.units[BEAMS_FULL] = 1 if JIT_DISABLED else address(BEAMS_FULL, d)


#: expected CPU time of each unit's first compilation on a 2-core machine [s] (with the small
#: kernels it alone calls), by position in ``Data.units``: the split between two processes and
#: the figure announced (measured 2026-12-02, each unit alone from an empty cache on the AMD
#: EPYC 2-core VM, in an hour when numba's own floor was 1.2 s, twice the 0.6 s of 2026-11-28:
#: a quieter machine takes about half)
COST = {BEAMS: 26.6, BODY_JOINTS: 10.9, SPARSE: 5.8, ENGINE: 21.3, CONTACTS: 20.1, ELEMENTS: 8.7,
        CONSTRAINTS: 12.8, ASSEMBLY: 4.9, BEAMS_FULL: 51.2, BODY_JOINTS_FULL: 16.3, HELD: 5.2}  # fmt: skip

#: the CPU [s] two units' compilations share when one process compiles both (the beam element's
#: kernels, the joints'): measured the same way, the second after the first (the full beam unit
#: 37.9 s after the beam unit, 51.2 s alone; the full joint unit 7.0 s after the joint unit)
SHARED = {(BEAMS, BEAMS_FULL): 13.3, (BODY_JOINTS, BODY_JOINTS_FULL): 9.3}

#: the second process's start (Python, numba, kynemapy) and the small kernels it compiles again [s]
HELPER_START = 2.0


def expected_cost(indices: list[int]) -> float:
    """The expected CPU time [s] of compiling the units ``indices`` in one process (:data:`COST`,
    less :data:`SHARED` where both of a pair are among them)."""
    total = sum(COST[i] for i in indices)
    return total - sum(saved for (a, b), saved in SHARED.items() if a in indices and b in indices)


#: set to 1 to compile in this process only (``KYNEMAPY_COMPILE_JOBS``; default: 2 where two
#: cores are free)
JOBS_VARIABLE = "KYNEMAPY_COMPILE_JOBS"


def _jobs() -> int:
    given = os.environ.get(JOBS_VARIABLE, "")
    if given.strip():
        try:
            return max(1, int(given))
        except ValueError:
            return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(2, cores)


def _found(index: int, types: tuple[Any, ...]) -> bool:
    """Whether this process has the address of unit ``index`` for the argument types ``types``."""
    with _lock:
        hit = _ADDRESSES.get((index, *map(id, types)))
    return hit is not None and all(a is b for a, b in zip(hit[0], types, strict=True))


def _cold(index: int, types: tuple[Any, ...]) -> bool:
    """Whether unit ``index`` was never compiled into the cache for the argument types ``types``."""
    return not is_cached(kernel(index), types)


def compile_units(indices: list[int], d: Data, jobs: int | None = None) -> dict[int, int]:
    """Compile (or load from the cache) the units ``indices`` for ``d``'s types.  Where two or
    more were never compiled into the cache and two cores are free, a second Python process
    compiles about half of them into the cache (the units compile independently of each other,
    :mod:`kynemapy.engine.phases`) while this one compiles the rest, then loads the second
    process's from the cache (or compiles them itself, should that process fail).  One line on
    stderr says what is compiling and, after, how long it took.  ``jobs``: processes to use
    (default: ``KYNEMAPY_COMPILE_JOBS``, else 2 where two cores are free).  Returns each unit's
    address by index (plain Python, ``KYNEMAPY_DISABLE_JIT``: nothing)."""
    if JIT_DISABLED:
        return {}
    # each unit's argument types once (typing a unit's arguments walks the Data's arrays)
    types = {index: unit_types(index, d) for index in indices}
    # units this process has found already are neither cold nor checked again (checking a
    # signature against a kernel's overloads hashes the Data's ~2000 nested types: 1.4 ms)
    cold = [index for index in indices if not _found(index, types[index]) and _cold(index, types[index])]
    if not cold:
        return {index: address(index, d, types[index]) for index in indices}
    what = "the engine" if ENGINE in cold else "the engine's units"
    if len(cold) == 1 and kernel(cold[0]).py_func.__name__ in ANNOUNCED:  # one unit: say which
        what = ANNOUNCED[kernel(cold[0]).py_func.__name__][0]
    mine, theirs = _split(cold)
    jobs = _jobs() if jobs is None else jobs
    expected = (
        max(expected_cost(mine), expected_cost(theirs) + HELPER_START) if jobs >= 2 and theirs else expected_cost(cold)
    )
    with announce(what + (" in two processes" if jobs >= 2 and theirs else ""), expected):
        helper = _start_helper(theirs) if jobs >= 2 and theirs else None
        try:
            for index in mine if helper is not None else cold:
                address(index, d, types[index])
        finally:
            if helper is not None:
                helper.wait()
        # the helper's from the cache (compiled here if it failed)
        return {index: address(index, d, types[index]) for index in indices}


def _split(cold: list[int]) -> tuple[list[int], list[int]]:
    """The cold units in two shares of about equal expected time; the engine's stays here.

    The two units of a pair in :data:`SHARED` go to one process (their shared kernels then
    compile once); then the largest first, each to the process with less to do, the second
    counting its start (:data:`HELPER_START`).  All of them cold (``kynemapy compile``, the test
    command), expected 82.8 s here against 80.4 s there; measured (2026-12-02, two runs each,
    empty caches): 80.6-83.0 s of wall time, 156-158 s of CPU in both processes, where splitting
    unit by unit took 82.4-84.7 s and 159-160 s."""
    rest = list(cold)
    blocks: list[tuple[float, list[int]]] = []
    for pair in SHARED:
        if all(i in rest for i in pair):
            blocks.append((expected_cost(list(pair)), list(pair)))
            rest = [i for i in rest if i not in pair]
    blocks += [(COST[i], [i]) for i in rest]
    mine: list[int] = []
    theirs: list[int] = []
    load = [0.0, HELPER_START]
    for cost, members in sorted(blocks, key=lambda block: (ENGINE not in block[1], -block[0])):
        here = ENGINE in members or load[0] <= load[1]
        (mine if here else theirs).extend(members)
        load[0 if here else 1] += cost
    return mine, theirs


def _start_helper(indices: list[int]) -> subprocess.Popen[bytes] | None:
    """A second process that compiles the units ``indices`` into the cache, or None."""
    return start_python(f"from kynemapy.engine.helper_process import compile_here; compile_here({indices!r})")


def start_python(code: str) -> subprocess.Popen[bytes] | None:
    """A second Python process that runs ``code`` (``python -c``) with this process's module path
    and numba cache, its output discarded; None where one cannot be started (also in a frozen
    application, whose executable is not a Python interpreter).  The second process of a first
    compilation and of ``kynemapy compile`` (:mod:`kynemapy.run.precompile`)."""
    if getattr(sys, "frozen", False):
        return None
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    if numba.config.CACHE_DIR:
        env["NUMBA_CACHE_DIR"] = str(numba.config.CACHE_DIR)
    try:
        return subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
    except OSError:
        return None


__all__ = [
    "COST",
    "HELPER_START",
    "SHARED",
    "address",
    "compile_units",
    "damped_beams",
    "driven_joints",
    "expected_cost",
    "fill_missing",
    "fill_units",
    "kernel",
    "need_exact_beams",
    "needed",
    "start_python",
    "unit_types",
]
