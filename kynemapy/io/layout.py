"""The layout of a result file (see :mod:`kynemapy.io.hdf5`): the datasets and their units, the row and
restart shapes, the root attributes the writer owns, and the conversions of attribute values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import h5py
import numpy as np

from kynemapy.engine.data import Inputs, State
from kynemapy.engine.rows import DERIVED, ROW_FIELDS, ROW_NAMES, row_layout
from kynemapy.model import HARD_DEFAULTS, Model, no_beams, no_joint_stops
from kynemapy.model.registry import column_groups, kinds, memories
from kynemapy.model.registry.contact.rows import HARD_CONTACT, impulse_spans

#: Per-row fields the caller must pass to :meth:`ResultWriter.append` (the others, ``DERIVED``,
#: are computed from ``q`` and ``v`` when left out).
REQUIRED: tuple[str, ...] = tuple(name for name in ROW_NAMES if name not in DERIVED)


RESTART_STATE = State._fields


RESTART_INPUTS = Inputs._fields


#: Unit of every dataset: the per-row ones from :data:`kynemapy.engine.rows.ROW_FIELDS`, then
#: ``committed``, ``/restart`` and ``/model``.
UNITS: dict[str, str] = {f.name: f.unit for f in ROW_FIELDS} | {
    "committed": "1 (complete rows)",
    "restart/q": "as q",
    "restart/q_prev": "as q",
    "restart/q_delta": "m/s, rad/s",
    "restart/v": "as v",
    "restart/vd": "as vd",
    "restart/a": "as a",
    "restart/x": "m (X + u), 1 (orientation quaternion r ⊗ r0)",
    "restart/lam": "as lam",
    "restart/constraint_output": "as constraint_output",
    "restart/time": "s",
    "restart/step": "1",
    "restart/f": "N (columns 0-2), N m (columns 3-5)",
    "restart/constraint_input": (
        "m and 1 (prescribed displacement); column 0: N m (torque), N (force) or rad (angle); "
        "hinge/slider columns 1-6: servo kp, kd, position, rate, feedforward, limit (rad, N m or m, N)"
    ),
    "restart/slot_info": "1 (per slot: committed rows it belongs to, write generation)",
    "model/x0": "m (X), 1 (reference quaternion r0)",
    "model/gravity": "m/s^2",
    "model/mass_m_star": "kg, kg m, kg m^2",
    "model/spring_x0": "m",
    "model/spring_l_ref": "m",
    "model/spring_k": "N/m",
    "model/constraint_X0": "m",
    "model/constraint_geometry": "m (joint point offsets, [:, :, 0]), 1 (unit axes, [:, :, 1:4])",
    "model/constraint_param": "m (distance constraint length)",
    "model/initial_q": "as q",
    "model/initial_v": "as v",
    "model/initial_vd": "as vd",
}


def model_difference(theirs: Model, mine: Model) -> str | None:
    """The first difference between two models as a sentence (``theirs``: a file's), or None if equal."""
    for name in Model._fields:
        a, b = getattr(theirs, name), getattr(mine, name)
        if name in HARD_DEFAULTS:  # None (a Model made by hand) is none
            a = HARD_DEFAULTS[name]() if a is None else a
            b = HARD_DEFAULTS[name]() if b is None else b
        if not isinstance(a, np.ndarray):
            if int(a) != int(b):
                return f"{name} is {b} in the new model, {a} in the file's"
            continue
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"{name} has shape {b.shape} in the new model, {a.shape} in the file's"
        if a.dtype.kind == "f":
            differs = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        else:
            differs = a != b
        if np.any(differs):
            where = tuple(int(i) for i in np.argwhere(differs)[0])
            index = ", ".join(map(str, where))
            return f"{name}[{index}] is {b[where].item()!r} in the new model, {a[where].item()!r} in the file's"
    return None


def row_shapes(model: Model) -> dict[str, tuple[tuple[int, ...], type]]:
    """Trailing shape and dtype of every per-row dataset (:data:`kynemapy.engine.rows.ROW_FIELDS`)."""
    shapes = row_layout(model.n_nodes, model.n_constraints).shapes
    return {f.name: (shapes[f.name], f.dtype) for f in ROW_FIELDS}


def restart_shapes(model: Model) -> dict[str, tuple[tuple[int, ...], type]]:
    """Shape (without the slot axis) and dtype of every restart array."""
    nn, nc = model.n_nodes, model.n_constraints
    return {
        "q": ((nn, 7), np.float64),
        "q_prev": ((nn, 7), np.float64),
        "q_delta": ((nn, 6), np.float64),
        "v": ((nn, 6), np.float64),
        "vd": ((nn, 6), np.float64),
        "a": ((nn, 6), np.float64),
        "x": ((nn, 7), np.float64),
        "lam": ((nc, 6), np.float64),
        "constraint_output": ((nc, 3), np.float64),
        "time": ((1,), np.float64),
        "step": ((1,), np.int64),
        "f": ((nn, 6), np.float64),
        "constraint_input": ((nc, 7), np.float64),
    }


def memory_widths(model: Model) -> dict[str, int]:
    """The kinds' memories of a run of ``model`` (:class:`kynemapy.model.registry.kind.Memory`),
    kept with the restart data as ``/restart/memory/<name>``: name -> floats per row (empty: none)."""
    return {name: int(memory.width) for name, memory in memories(model).items()}


def memory_units(model: Model) -> dict[str, str]:
    """The units of the restart memory's datasets of ``model`` (empty: none)."""
    found = memories(model)
    if not found:
        return {}
    return {f"restart/memory/{name}": memory.unit for name, memory in found.items()} | {
        "restart/memory_rows": "1 (per slot: the rows of each memory, in the order of its attribute names; "
        "-1 not kept)",
        "restart/memory_digest": "1 (per slot: XXH3-64 of its memory_rows row and its memories' rows, as int64)",
    }


#: the per-row columns of a step-controlled run (:meth:`kynemapy.Simulation.run` with ``control``),
#: in the group ``/step_control`` of its file: name -> (dtype, unit)
STEP_CONTROL_FIELDS: dict[str, tuple[type, str]] = {
    "step_size": (np.float64, "s (the accepted step that reaches the row's time; 0 at a run's first row)"),
    "accepted": (np.int64, "1 (steps accepted since the row before)"),
    "rejected": (np.int64, "1 (step attempts, or extrapolated calls, rejected since the row before)"),
    "estimated_error": (
        np.float64,
        "1 (the control's weighted-RMS error estimate of the step that reaches the row's time, <= 1 accepted)",
    ),
}


#: the hard contact's columns, ``/hard_contact`` (declared by the contact kind,
#: :data:`kynemapy.model.registry.contact.rows.HARD_CONTACT`): name -> (dtype, unit)
HARD_CONTACT_FIELDS: dict[str, tuple[type, str]] = HARD_CONTACT.fields()

#: trailing shape and dtype of each ``/hard_contact`` column of a model (empty without hard contact)
hard_contact_shapes = HARD_CONTACT.shapes


def extra_groups() -> dict[str, dict[str, tuple[type, str]]]:
    """The groups of extra per-row columns, checked with the rows: ``step_control``, then each
    kind's (:func:`kynemapy.model.registry.column_groups`); the group's name -> name -> (dtype, unit)."""
    return {"step_control": STEP_CONTROL_FIELDS} | {name: g.fields() for name, g in column_groups().items()}


def extra_units(shapes: dict[str, tuple[tuple[int, ...], type]]) -> dict[str, str]:
    """The unit of every extra column ``"<group>/<name>"`` of ``shapes`` (:func:`extra_shapes`)."""
    fields = extra_groups()
    return {name: fields[name.split("/")[0]][name.split("/")[1]][1] for name in shapes}


def extra_shapes(
    step_control: tuple[str, ...], groups: dict[str, dict[str, tuple[tuple[int, ...], type]]]
) -> dict[str, tuple[tuple[int, ...], type]]:
    """Every extra column of a file, ``"<group>/<name>"`` -> (trailing shape, dtype), in the order of
    its checksum records: the ``/step_control`` columns named, then each kind group's (``groups``:
    the group's name -> its columns' shapes, in :func:`extra_groups` order)."""
    out = {f"step_control/{name}": ((), STEP_CONTROL_FIELDS[name][0]) for name in step_control}
    for group, shapes in groups.items():
        out |= {f"{group}/{name}": spec for name, spec in shapes.items()}
    return out


def group_shapes(model: Model, requested: Mapping[str, bool]) -> dict[str, dict[str, tuple[tuple[int, ...], type]]]:
    """Each kind's group of a writer (``<group>=True``, :func:`kynemapy.model.registry.column_groups`):
    its columns' trailing shapes and dtypes in a file of ``model``, empty when not requested.

    Raises
    ------
    TypeError
        A keyword that names no group.
    """
    known = column_groups()
    unknown = sorted(set(requested) - set(known))
    if unknown:
        raise TypeError(f"ResultWriter: unexpected keyword {unknown[0]!r} (column groups: {', '.join(known)})")
    return {name: group.shapes(model) if requested.get(name) else {} for name, group in known.items()}


def group_columns(
    path: str, shapes: dict[str, tuple[tuple[int, ...], type]], given: Mapping[str, Any], n: int
) -> dict[str, np.ndarray]:
    """The kinds' groups' columns of one block of ``n`` rows (``given``: the group's name -> its
    columns, as :meth:`ResultWriter.append` takes them), checked (:func:`extra_columns`)."""
    known = column_groups()
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(f"ResultWriter.append: unexpected keyword {unknown[0]!r}")
    out: dict[str, np.ndarray] = {}
    for group in known:
        out |= extra_columns(path, group, shapes, given.get(group), n)
    return out


def group_attribute(owner: object, name: str) -> Any:
    """``owner.groups[name]``: a kind's group as an attribute of a writer (``writer.hard_contact``)."""
    groups = owner.__dict__.get("groups")
    if groups is None or name not in groups:
        raise AttributeError(f"{type(owner).__name__!r} object has no attribute {name!r}")
    return groups[name]


def extra_columns(
    path: str, group: str, shapes: dict[str, tuple[tuple[int, ...], type]], given: Any, n: int
) -> dict[str, np.ndarray]:
    """The ``/<group>`` columns of one block of ``n`` rows, checked against the file's extra
    columns ``shapes`` (:func:`extra_shapes`; none of the group: the file has none, and ``given``
    must be None); keyed ``"<group>/<name>"``."""
    prefix = group + "/"
    shapes = {name.removeprefix(prefix): spec for name, spec in shapes.items() if name.startswith(prefix)}
    if not shapes:
        if given is not None:
            raise ValueError(f"ResultWriter.append: {path} has no /{group} columns (created without them)")
        return {}
    if given is None or set(given) != set(shapes):
        got = None if given is None else sorted(given)
        raise KeyError(f"ResultWriter.append: {path} needs the {group} columns {list(shapes)}, got {got}")
    out = {}
    for name, (shape, dtype) in shapes.items():
        arr = np.asarray(given[name])
        if arr.shape != (n, *shape):
            raise ValueError(f"ResultWriter.append: {group} {name} must have shape {(n, *shape)}, got {arr.shape}")
        if np.dtype(dtype).kind == "i" and arr.dtype.kind not in "iub" and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"ResultWriter.append: {group} {name} must hold integers")
        out[f"{group}/{name}"] = np.ascontiguousarray(arr, dtype=dtype)
    return out


#: output-row fields added after result files were first written (an earlier file lacks them;
#: :func:`read` computes them from the file's states)
ADDED_LATER = frozenset({"strain_energy"})


#: the model fields of a file written before beams (or hard joint limits) existed
NO_BEAMS: dict[str, Any] = {
    "n_beams": 0,
    **no_beams(),
    "joint_stops": no_joint_stops(),
}


def missing_model_fields() -> dict[str, Any]:
    """The model fields of a file written before beams, hard joint limits or a kind existed, and
    their values there: :data:`NO_BEAMS`, each kind's ``model_defaults()`` and the hard fields'
    defaults (:data:`kynemapy.model.HARD_DEFAULTS`) none of them names."""
    out = dict(NO_BEAMS)
    for kind in kinds():
        if kind.model_defaults is not None:
            out |= kind.model_defaults()
    return out | {name: make() for name, make in HARD_DEFAULTS.items() if name not in out}


#: root attributes the writer sets (not the user's)
RESERVED = ("kynemapy_version", "created", "units", "writer_pid", "writer_host", "output_every")


def attr_value(value: Any) -> Any:
    """A value h5py can store as an attribute (dicts and lists of mixed types go as JSON)."""
    if isinstance(value, (dict, list, tuple)) and not isinstance(value, np.ndarray):
        try:
            arr = np.asarray(value)
            if arr.dtype.kind in "biuf":
                return arr
        except (ValueError, TypeError):
            pass
        return json.dumps(value)
    if value is None:
        return json.dumps(None)
    return value


def set_attr(attrs: h5py.AttributeManager, key: str, value: Any) -> None:
    """Store ``value`` as attribute ``key``; text as a fixed-length UTF-8 string.

    Fixed length keeps the text inside the object's header, which the file format checksums;
    variable-length strings (what h5py writes for ``str``, and earlier kynemapy files hold) live
    in the file's global heap, which carries no checksum: HDF5 reads a damaged one as other
    text, or never returns (:mod:`kynemapy.io.heap_guard`).
    """
    if isinstance(value, str):
        data = value.encode("utf-8")
        n = max(len(data), 1)
        attrs.create(key, np.array(data, dtype=f"S{n}"), dtype=h5py.string_dtype("utf-8", n))
    else:
        attrs[key] = value


def decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def convert(value: Any, type_name: Any) -> Any:
    """A StepParameters attribute back to its Python type (dataclass annotations are strings here)."""
    name = type_name if isinstance(type_name, str) else getattr(type_name, "__name__", "")
    value = decode(value)
    if name == "bool":
        return bool(value)
    if name == "int":
        return int(value)
    if name == "float":
        return float(value)
    return value


__all__ = [
    "ADDED_LATER",
    "HARD_CONTACT_FIELDS",
    "NO_BEAMS",
    "REQUIRED",
    "RESERVED",
    "RESTART_INPUTS",
    "RESTART_STATE",
    "STEP_CONTROL_FIELDS",
    "UNITS",
    "attr_value",
    "convert",
    "decode",
    "extra_columns",
    "extra_groups",
    "extra_shapes",
    "extra_units",
    "group_attribute",
    "group_columns",
    "group_shapes",
    "hard_contact_shapes",
    "impulse_spans",
    "memory_units",
    "memory_widths",
    "missing_model_fields",
    "model_difference",
    "restart_shapes",
    "row_shapes",
    "set_attr",
]
