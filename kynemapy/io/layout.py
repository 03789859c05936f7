"""The layout of a result file (see :mod:`kynemapy.io.hdf5`): the datasets and their units, the row and
restart shapes, the root attributes the writer owns, and the conversions of attribute values.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from kynemapy.engine.data import Inputs, State
from kynemapy.engine.rows import DERIVED, ROW_FIELDS, ROW_NAMES, row_layout
from kynemapy.model import HARD_DEFAULTS, Model, no_beams, no_contacts, no_hard_contacts, no_joint_stops

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


def step_control_columns(path: str, names: tuple[str, ...], step_control: Any, n: int) -> dict[str, np.ndarray]:
    """The ``/step_control`` columns of one block of ``n`` rows, checked against the file's ``names``
    (empty: the file has none, and ``step_control`` must be None)."""
    if not names:
        if step_control is not None:
            raise ValueError(f"ResultWriter.append: {path} has no /step_control columns (created without them)")
        return {}
    if step_control is None or set(step_control) != set(names):
        got = None if step_control is None else sorted(step_control)
        raise KeyError(f"ResultWriter.append: {path} needs the step_control columns {list(names)}, got {got}")
    out = {}
    for name in names:
        arr = np.asarray(step_control[name])
        if arr.shape != (n,):
            raise ValueError(f"ResultWriter.append: step_control {name} must have shape ({n},), got {arr.shape}")
        dtype = STEP_CONTROL_FIELDS[name][0]
        if np.dtype(dtype).kind == "i" and arr.dtype.kind not in "iub" and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"ResultWriter.append: step_control {name} must hold integers")
        out[name] = np.ascontiguousarray(arr, dtype=dtype)
    return out


#: output-row fields added after result files were first written (an earlier file lacks them;
#: :func:`read` computes them from the file's states)
ADDED_LATER = frozenset({"strain_energy"})


#: the model fields of a file written before beams, contact (or hard joint limits) existed
NO_BEAMS: dict[str, Any] = {
    "n_beams": 0,
    **no_beams(),
    "n_contacts": 0,
    "n_pairs": 0,
    **no_contacts(),
    "joint_stops": no_joint_stops(),
    "hard_contacts": no_hard_contacts(),
    **{name: make() for name, make in HARD_DEFAULTS.items() if name not in ("joint_stops", "hard_contacts")},
}


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
    "model_difference",
    "restart_shapes",
    "row_shapes",
    "step_control_columns",
]
