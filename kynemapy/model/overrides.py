"""Change values of a TOML model file by dotted keys (the parameters of a sweep).

A key names one value of the model file (see :mod:`kynemapy.model.file` for the schema):

* ``step.h``, ``step.rho_inf``, ``run.n_steps``, ``run.t_end``, ``model.gravity``: a key of
  one of the plain tables ``[model]``, ``[step]``, ``[run]``;
* ``node.<name>.<key>`` and ``constraint.<name>.<key>``: a key of the node or constraint of
  that name, e.g. ``node.platform.position``, ``constraint.hinge.torque``;
* ``beam.<name>.<key>``: a key of the beam of that name, e.g. ``beam.blade.mu``;
* ``mass.<node>.<key>`` and ``load.<node>.<key>``: the mass or load on the node of that name
  (when there is exactly one), e.g. ``mass.top.mass``, ``load.platform.force``;
* ``spring.<a>-<b>.<key>``: the spring between nodes ``a`` and ``b``, e.g.
  ``spring.fairlead1-anchor1.stiffness``;
* ``<table>.#<i>.<key>``: the i-th item (from 1, file order) of an array table, e.g.
  ``spring.#2.stiffness``;
* a trailing ``[j]`` (repeatable) picks an element of an array value (from 0), e.g.
  ``node.top.velocity[4]``, ``load.platform.force[2]``.

A key must name a value the file holds or one the schema allows in that table (``step.rho_inf``
when the file leaves it at its default); the new value must have the type of the old one (a
number for a number, an integer for an integer, an array of the same length, a string
expression of ``t`` where a load component is expected).  Setting ``run.t_end`` replaces a
``run.n_steps`` and vice versa.  Names, kinds, node references and the ``[output]`` table
cannot be changed.

Use::

    data = read_toml(text)
    patched = apply_overrides(data, {"step.rho_inf": 0.5, "mass.top.mass": 12.0})
    model_file = parse_model_file(dump_toml(patched))
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from kynemapy.model.builder import ModelError

__all__ = [
    "OverrideError",
    "ResolvedKey",
    "apply_overrides",
    "check_value",
    "describe_values",
    "dump_toml",
    "parse_values",
    "read_toml",
    "resolve_key",
]


class OverrideError(ModelError, ValueError):
    """A key that names no value of the model file, or a value of the wrong type."""


#: prototypes of the values the schema allows where a file may leave them out (type and length)
_NUMBER, _INTEGER, _BOOLEAN = 0.0, 0, False
_SCHEMA: dict[str, dict[str, Any]] = {
    "model": {"gravity": [0.0] * 3},
    "step": {
        "h": _NUMBER,
        "rho_inf": _NUMBER,
        "max_iter": _INTEGER,
        "atol": _NUMBER,
        "rtol": _NUMBER,
        "geometric_stiffness": _BOOLEAN,
        "dynamic": _BOOLEAN,
        "static_load_retries": _INTEGER,
    },
    "run": {"t_end": _NUMBER, "n_steps": _INTEGER},
    "node": {
        "position": [0.0] * 3,
        "orientation": [0.0] * 4,
        "velocity": [0.0] * 6,
        "acceleration": [0.0] * 6,
        "displacement": [0.0] * 7,
    },
    "mass": {"mass": _NUMBER, "inertia": [0.0] * 3},
    "spring": {"stiffness": _NUMBER, "undeformed_length": _NUMBER},
    "constraint": {
        "torque": _NUMBER,
        "force": _NUMBER,
        "angle": _NUMBER,
        "length": _NUMBER,
        "axis": [0.0] * 3,
    },
    "load": {"force": [0.0] * 3, "moment": [0.0] * 3},
    "beam": {
        "order": _INTEGER,
        "n_elements": _INTEGER,
        "section_refinement": _INTEGER,
        "twist": _NUMBER,
        "mu": [0.0] * 6,
        "root_position": [0.0] * 3,
        "root_orientation": [0.0] * 4,
        "root_velocity": [0.0] * 6,
        "root_acceleration": [0.0] * 6,
    },
}
#: keys that hold integers (an integer value in the file is not enough: 1 may mean 1.0)
_INTEGER_KEYS = frozenset(
    {
        ("step", "max_iter"),
        ("step", "static_load_retries"),
        ("run", "n_steps"),
        ("beam", "order"),
        ("beam", "n_elements"),
        ("beam", "section_refinement"),
    }
)
#: keys that identify items or refer to other items: never swept
_FIXED_KEYS = frozenset({"name", "kind", "node", "nodes", "base", "target", "body", "body_a", "body_b"})
_PLAIN_TABLES = ("model", "step", "run")
_ARRAY_TABLES = ("node", "mass", "spring", "constraint", "load", "beam")


@dataclass(frozen=True)
class ResolvedKey:
    """Where a dotted key points in the parsed TOML data.

    Attributes
    ----------
    key : str
        The key as given.
    table : str
        Table name (``step``, ``node``, ...).
    item : int or None
        Index of the item of an array table (from 0), None for a plain table.
    field : str
        The key inside the table.
    indices : tuple of int
        Element indices into an array value (empty for the whole value).
    prototype : Any
        The current value (or the schema's prototype where the file leaves it out): the new
        value must have its type.
    integer : bool
        True where the value must be an integer.
    expression : bool
        True where a string expression of ``t`` is allowed (load components).
    """

    key: str
    table: str
    item: int | None
    field: str
    indices: tuple[int, ...]
    prototype: Any
    integer: bool
    expression: bool


def read_toml(text: str, source: str = "<string>") -> dict[str, Any]:
    """Parse TOML text into plain Python data.

    Parameters
    ----------
    text : str
        The TOML text.
    source : str, default "<string>"
        Where the text came from (a file name), named in errors.

    Returns
    -------
    dict of str to Any
        The parsed tables and values.

    Raises
    ------
    OverrideError
        A TOML syntax error, naming ``source``.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OverrideError(f"{source}: not valid TOML ({exc})") from None


def _item_label(table: str, item: dict[str, Any]) -> str:
    if table in ("node", "constraint", "beam") and isinstance(item.get("name"), str):
        return item["name"]
    if table in ("mass", "load") and isinstance(item.get("node"), str):
        return item["node"]
    if table == "spring" and isinstance(item.get("nodes"), list) and len(item["nodes"]) == 2:
        return "-".join(str(n) for n in item["nodes"])
    return ""


def _find_item(data: Mapping[str, Any], table: str, ident: str, key: str) -> int:
    items = data.get(table)
    if not isinstance(items, list) or not items:
        raise OverrideError(f"--set {key}: the model file has no [[{table}]] tables")
    if ident.startswith("#"):
        try:
            i = int(ident[1:])
        except ValueError:
            raise OverrideError(f"--set {key}: {ident!r} is not an item number like #1") from None
        if not 1 <= i <= len(items):
            raise OverrideError(f"--set {key}: there are {len(items)} [[{table}]] tables, not {i}")
        return i - 1
    if table == "spring":
        matches = []
        for i, it in enumerate(items):
            nodes = it.get("nodes") if isinstance(it, dict) else None
            if (
                isinstance(nodes, list)
                and len(nodes) == 2
                and ident in (f"{nodes[0]}-{nodes[1]}", f"{nodes[1]}-{nodes[0]}")
            ):
                matches.append(i)
    else:
        field = "name" if table in ("node", "constraint", "beam") else "node"
        matches = [i for i, it in enumerate(items) if isinstance(it, dict) and it.get(field) == ident]
    if len(matches) == 1:
        return matches[0]
    labels = [_item_label(table, it) for it in items if isinstance(it, dict)]
    known = ", ".join(repr(x) for x in labels if x) or "none"
    if not matches:
        what = {
            "node": "node",
            "constraint": "constraint",
            "mass": "mass on node",
            "load": "load on node",
            "beam": "beam",
        }
        raise OverrideError(
            f"--set {key}: no {what.get(table, 'spring')} {ident!r} in the model file ({table} items: {known}; "
            f"or use {table}.#<number>)"
        )
    raise OverrideError(
        f"--set {key}: {len(matches)} [[{table}]] tables match {ident!r}; "
        f"name one by its number instead, e.g. {table}.#{matches[0] + 1}"
    )


def resolve_key(data: Mapping[str, Any], key: str) -> ResolvedKey:
    """Find the value a dotted ``key`` names in the parsed model file ``data``.

    Parameters
    ----------
    data : dict
        The model file parsed by :func:`read_toml`.
    key : str
        Dotted key (see the module docstring), e.g. ``"step.h"`` or ``"node.top.velocity[4]"``.

    Returns
    -------
    ResolvedKey
        Its table, item, field, element indices and the prototype of its value.

    Raises
    ------
    OverrideError
        The key names no value of the file (nor one its schema allows), or a value that
        cannot be changed (names, kinds, node references, ``[output]``).
    """
    if not isinstance(key, str) or not key.strip():
        raise OverrideError(f"--set: empty key {key!r}")
    key = key.strip()
    base = key
    indices: list[int] = []
    while True:
        m = re.search(r"\[(\d+)\]$", base)
        if m is None:
            break
        indices.insert(0, int(m.group(1)))
        base = base[: m.start()]
    parts = base.split(".")
    table = parts[0]
    if table == "output":
        raise OverrideError(f"--set {key}: the [output] table is set by the sweep (one file per member)")
    if table in _PLAIN_TABLES:
        if len(parts) != 2 or not parts[1]:
            raise OverrideError(f"--set {key}: expected {table}.<key>, e.g. {table}.{next(iter(_SCHEMA[table]))}")
        field = parts[1]
        container = data.get(table, {})
        item = None
    elif table in _ARRAY_TABLES:
        if len(parts) < 3 or not parts[-1] or not parts[1]:
            ident = {
                "node": "<name>", "constraint": "<name>", "mass": "<node>", "load": "<node>", "spring": "<a>-<b>",
                "beam": "<name>",
            }  # fmt: skip
            raise OverrideError(f"--set {key}: expected {table}.{ident[table]}.<key> or {table}.#<number>.<key>")
        field = parts[-1]
        item = _find_item(data, table, ".".join(parts[1:-1]), key)
        container = data[table][item]
    else:
        tables = ", ".join((*_PLAIN_TABLES, *_ARRAY_TABLES))
        raise OverrideError(f"--set {key}: unknown table {table!r} (tables: {tables})")
    if field in _FIXED_KEYS:
        raise OverrideError(f"--set {key}: {field!r} identifies or connects items and cannot be swept")
    if field in container:
        prototype = container[field]
    elif field in _SCHEMA[table]:
        prototype = _SCHEMA[table][field]
        if indices:
            raise OverrideError(
                f"--set {key}: the model file has no {field!r} here to change an element of; set the whole array"
            )
    else:
        present = [k for k in container if k not in _FIXED_KEYS]
        allowed = sorted(set(present) | set(_SCHEMA[table]))
        raise OverrideError(
            f"--set {key}: no key {field!r} in {_where(table, item, data)} (keys that can be set: {', '.join(allowed)})"
        )
    for depth, j in enumerate(indices):
        if not isinstance(prototype, list):
            raise OverrideError(f"--set {key}: {_path(field, indices[:depth])} is not an array")
        if j >= len(prototype):
            raise OverrideError(
                f"--set {key}: {_path(field, indices[:depth])} has {len(prototype)} elements, not {j + 1}"
            )
        prototype = prototype[j]
    return ResolvedKey(
        key=key,
        table=table,
        item=item,
        field=field,
        indices=tuple(indices),
        prototype=copy.deepcopy(prototype),
        integer=(table, field) in _INTEGER_KEYS,
        expression=table == "load",
    )


def _where(table: str, item: int | None, data: Mapping[str, Any]) -> str:
    if item is None:
        return f"[{table}]"
    label = _item_label(table, data[table][item])
    return f"[[{table}]] #{item + 1}" + (f" ({label})" if label else "")


def _path(field: str, indices: list[int] | tuple[int, ...]) -> str:
    return field + "".join(f"[{j}]" for j in indices)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _describe(prototype: Any, integer: bool, expression: bool) -> str:
    if isinstance(prototype, bool):
        return "true or false"
    if integer:
        return "an integer"
    if _is_number(prototype):
        return "a number or an expression of t (string)" if expression else "a number"
    if isinstance(prototype, str):
        return "a string"
    if isinstance(prototype, list):
        if prototype and all(isinstance(p, list) for p in prototype):
            return f"an array of {len(prototype)} arrays"
        what = "numbers or expressions of t" if expression else "numbers"
        return f"an array of {len(prototype)} {what}"
    return f"a value like {prototype!r}"


def check_value(resolved: ResolvedKey, value: Any) -> Any:
    """The value to store for ``resolved``: ``value`` checked against the type of the old one.

    Integers are accepted (and stored as floats) where numbers are expected; arrays must keep
    their length (and the lengths of nested arrays).

    Parameters
    ----------
    resolved : ResolvedKey
        The key, from :func:`resolve_key`.
    value : Any
        The new value, as :func:`parse_values` read it (a TOML value or a string).

    Returns
    -------
    Any
        The value to store (an int as a float where numbers are expected).

    Raises
    ------
    OverrideError
        The value does not fit: it names the key, the expected type and the value.
    """

    def fits(new: Any, old: Any, top: bool) -> Any:
        if isinstance(old, bool):
            if isinstance(new, bool):
                return new
        elif top and resolved.integer:
            if isinstance(new, int) and not isinstance(new, bool):
                return new
        elif _is_number(old) or (resolved.expression and isinstance(old, str)):
            if _is_number(new):
                return float(new)
            if resolved.expression and isinstance(new, str):
                return new
        elif isinstance(old, str):
            if isinstance(new, str):
                return new
        elif isinstance(old, list):
            if isinstance(new, list) and (len(new) == len(old) or (not old and not top)):
                if len(old) == len(new):
                    return [fits(n, o, False) for n, o in zip(new, old, strict=True)]
        raise TypeError

    try:
        out = fits(value, resolved.prototype, True)
    except TypeError:
        expected = _describe(resolved.prototype, resolved.integer, resolved.expression)
        raise OverrideError(f"--set {resolved.key}: expected {expected}, got {_show(value)}") from None
    if isinstance(out, float) and not math.isfinite(out):
        raise OverrideError(f"--set {resolved.key}: expected a finite number, got {value!r}")
    return out


def _show(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    return f"{value!r} ({kind.get(type(value), type(value).__name__)})"


def apply_overrides(data: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of the parsed model file ``data`` with every ``key: value`` of ``values`` set.

    Each key is resolved (:func:`resolve_key`) and each value checked (:func:`check_value`)
    against the original data; ``run.t_end`` replaces ``run.n_steps`` and vice versa.

    Parameters
    ----------
    data : mapping of str to Any
        The model file parsed by :func:`read_toml`; not modified.
    values : mapping of str to Any
        Dotted key (e.g. ``"step.h"``) to its new value.

    Returns
    -------
    dict of str to Any
        The changed copy of ``data``.

    Raises
    ------
    OverrideError
        A key names no value, or a value does not fit.
    """
    out = copy.deepcopy(dict(data))
    for key, value in values.items():
        r = resolve_key(data, key)
        new = check_value(r, value)
        if r.item is None:
            container = out.setdefault(r.table, {})
            if r.table == "run":
                container.pop("n_steps" if r.field == "t_end" else "t_end", None)
        else:
            container = out[r.table][r.item]
        if not r.indices:
            container[r.field] = new
            continue
        target = container[r.field]
        for j in r.indices[:-1]:
            target = target[j]
        target[r.indices[-1]] = new
    return out


def parse_values(text: str, key: str = "") -> list[Any]:
    """Split ``V1,V2,...`` and read each value as TOML.

    Commas inside brackets or quotes do not split; ``0.5``, ``3``, ``true``, ``[0, 1, 0]``,
    ``"text"`` are read as TOML, and a value that is not TOML is kept as a string
    (``1e6*sin(t)``).

    Parameters
    ----------
    text : str
        The values as given on the command line (``--set key=V1,V2``).
    key : str, default ""
        The key they are for, named in errors.

    Returns
    -------
    list of Any
        The values, in order.

    Raises
    ------
    OverrideError
        A value is empty.
    """
    pieces: list[str] = []
    depth, quote, start = 0, "", 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    values = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            raise OverrideError(f"--set {key}={text}: empty value in the list")
        try:
            values.append(tomllib.loads(f"v = {piece}")["v"])
        except tomllib.TOMLDecodeError:
            values.append(piece)
    return values


# ------------------------------------------------------------------------------------------------
# writing TOML back (the schema uses plain tables of values, and arrays of such tables)
def _toml_string(s: str) -> str:
    out = ['"']
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_string(k)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # shortest text that reads back to the same double
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return str(value)  # dates and times


def dump_toml(data: Mapping[str, Any]) -> str:
    """TOML text that :func:`read_toml` reads back to ``data`` exactly (floats included).

    Parameters
    ----------
    data : mapping of str to Any
        Tables, arrays of tables and values as :func:`read_toml` returns them.

    Returns
    -------
    str
        The TOML text.
    """
    lines: list[str] = []
    scalars = {k: v for k, v in data.items() if not _is_table(v) and not _is_table_array(v)}
    for k, v in scalars.items():
        lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    for k, v in data.items():
        if _is_table(v):
            lines.append(f"\n[{_toml_key(k)}]")
            lines.extend(f"{_toml_key(kk)} = {_toml_value(vv)}" for kk, vv in v.items())
        elif _is_table_array(v):
            for item in v:
                lines.append(f"\n[[{_toml_key(k)}]]")
                lines.extend(f"{_toml_key(kk)} = {_toml_value(vv)}" for kk, vv in item.items())
    return "\n".join(lines) + "\n"


def _is_table(v: Any) -> bool:
    return isinstance(v, dict)


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def describe_values(values: Mapping[str, Any]) -> str:
    """``key=value, ...`` for messages and labels."""
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in values.items())
