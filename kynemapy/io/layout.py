"""The layout of a result file (see :mod:`kynemapy.io.hdf5`): the datasets and their units, the row and
restart shapes, the root attributes the writer owns, and the conversions of attribute values.
"""

from __future__ import annotations

import json
from typing import Any

import h5py
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


#: the per-row columns of a model with hard contact (:mod:`kynemapy.run.hard_rows`), in
#: the group ``/hard_contact`` of its file: name -> (dtype, unit).  The hard laws' impulses are not
#: functions of the state (unlike the compliant law's forces, :mod:`kynemapy.run.contact_rows`), so
#: they are recorded with each row: the impulses summed over the steps since the row before (zeros
#: at a new file's first row), the contacts closed at the end of the row's last step.  With K
#: points against hard ground planes (``model.hard_contacts``' rows) and N nodes:
#:
#: * ``normal_impulse`` (n, K), ``friction_impulse`` (n, K, 3), ``active`` (n, K): the planes'
#:   points (when K > 0);
#: * ``body_impulse`` (n, N, 6), ``body_contacts`` (n,): the hard body law's contacts summed per
#:   body (with ``set_body_contact(law="hard")``).
HARD_CONTACT_FIELDS: dict[str, tuple[type, str]] = {
    "normal_impulse": (
        np.float64,
        "N s (per point against a hard ground plane: the normal impulse summed over the steps since the row before)",
    ),
    "friction_impulse": (
        np.float64,
        "N s (per point against a hard ground plane: the friction impulse on the body, world frame, summed over "
        "the steps since the row before)",
    ),
    "active": (np.int8, "1 (per point against a hard ground plane: 1 when closed at the end of the step)"),
    "body_impulse": (
        np.float64,
        "N s (columns 0-2: force), N m s (columns 3-5: moment about the node) (per node: the impulse of the "
        "hard contacts between bodies on it, world frame, summed over the steps since the row before)",
    ),
    "body_contacts": (np.int64, "1 (hard contacts between bodies closed at the end of the step)"),
}


def impulse_spans(time: np.ndarray) -> np.ndarray:
    """The time [s] (n,) each row's ``/hard_contact`` impulses are summed over: since the row
    before; inf at the first row (whose impulses are zero), so that impulse / span is each row's
    mean force, 0 at the first.

    Parameters
    ----------
    time : (n,) ndarray of float
        The rows' times [s].
    """
    time = np.asarray(time, dtype=np.float64)
    elapsed = np.diff(time, prepend=time[:1])
    return np.where(elapsed > 0.0, elapsed, np.inf)


def hard_contact_shapes(model: Model) -> dict[str, tuple[tuple[int, ...], type]]:
    """Trailing shape and dtype of each ``/hard_contact`` column of ``model`` (:data:`HARD_CONTACT_FIELDS`).

    Parameters
    ----------
    model : Model
        The model.

    Returns
    -------
    dict of str to (tuple of int, type)
        The planes' columns when the model has points against hard ground planes
        (``model.hard_contacts`` with rows), the bodies' when it has shapes under the hard body
        law (``model.hard_shapes`` with rows); empty for a model without hard contact.
    """
    points = getattr(model, "hard_contacts", None)
    shapes = getattr(model, "hard_shapes", None)
    k = 0 if points is None else int(np.asarray(points).shape[0])
    out: dict[str, tuple[tuple[int, ...], type]] = {}
    if k:
        out["normal_impulse"] = ((k,), HARD_CONTACT_FIELDS["normal_impulse"][0])
        out["friction_impulse"] = ((k, 3), HARD_CONTACT_FIELDS["friction_impulse"][0])
        out["active"] = ((k,), HARD_CONTACT_FIELDS["active"][0])
    if shapes is not None and np.asarray(shapes).shape[0]:
        out["body_impulse"] = ((int(model.n_nodes), 6), HARD_CONTACT_FIELDS["body_impulse"][0])
        out["body_contacts"] = ((), HARD_CONTACT_FIELDS["body_contacts"][0])
    return out


#: the groups of extra per-row columns (the group's name -> its fields), checked with the rows
EXTRA_GROUPS: dict[str, dict[str, tuple[type, str]]] = {
    "step_control": STEP_CONTROL_FIELDS,
    "hard_contact": HARD_CONTACT_FIELDS,
}


def extra_shapes(
    step_control: tuple[str, ...], hard_contact: dict[str, tuple[tuple[int, ...], type]]
) -> dict[str, tuple[tuple[int, ...], type]]:
    """Every extra column of a file, ``"<group>/<name>"`` -> (trailing shape, dtype), in the order of
    its checksum records: the ``/step_control`` columns named, then the ``/hard_contact`` ones."""
    out = {f"step_control/{name}": ((), STEP_CONTROL_FIELDS[name][0]) for name in step_control}
    return out | {f"hard_contact/{name}": spec for name, spec in hard_contact.items()}


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
    "EXTRA_GROUPS",
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
    "extra_shapes",
    "hard_contact_shapes",
    "impulse_spans",
    "model_difference",
    "restart_shapes",
    "row_shapes",
    "set_attr",
]
