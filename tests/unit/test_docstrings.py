"""Every public name of the API reference has numpydoc sections that napoleon renders right.

The names are those of ``kynemapy.__all__`` and of the directives of ``docs/api.rst``
(``autoclass``/``autofunction``/``autoexception`` and the ``:members:`` lists of
``automodule``), with the public methods of the classes.  For each of them every
parameter of the signature (not ``self``/``cls``, ``*args``/``**kwargs`` unless documented)
must have an entry ``name : type`` in ``Parameters`` (a class: in its own docstring, or
in ``Attributes`` for a dataclass field) followed by an indented, non-empty description.
The type slot must be a type (shape and units included, e.g. ``(N, 7) ndarray`` or
``float [s]``), not the description: napoleon renders ``name : a sentence.`` as a type.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import kynemapy

API_RST = Path(__file__).resolve().parents[2] / "docs" / "api.rst"

_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}\s*$", re.M)


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def public_names() -> dict[str, object]:
    """Dotted name -> object for every public name of the reference (methods included)."""
    names: dict[str, object] = {}
    for name in kynemapy.__all__:
        obj = getattr(kynemapy, name)
        if callable(obj):
            names[f"kynemapy.{name}"] = obj
    text = API_RST.read_text(encoding="utf-8")
    for kind, target, body in re.findall(
        r"^\.\. auto(class|function|exception|module):: (\S+)\n((?:   .*\n)*)", text, re.M
    ):
        if kind == "module":
            members = re.search(r":members: (.+)", body)
            for member in members.group(1).split(",") if members else ():
                obj = getattr(_resolve(target), member.strip())
                if callable(obj):
                    names[f"{target}.{member.strip()}"] = obj
        else:
            names[target] = _resolve(target)
    for name, obj in list(names.items()):
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not member.__doc__:
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member):
                    names[f"{name}.{attr}"] = member
    return names


def _sections(doc: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    lines = doc.splitlines()
    current = None
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and lines[i].strip():
            current = lines[i].strip()
            out[current] = []
            i += 2
            continue
        if current is not None:
            out[current].append(lines[i])
        i += 1
    return out


def parse_entries(lines: list[str]) -> dict[str, tuple[str, list[str]]]:
    """``name : type`` lines (several names may share one) -> (type, description lines)."""
    entries: dict[str, tuple[str, list[str]]] = {}
    current: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if not line.startswith((" ", "\t")):
            head, _, kind = line.partition(" : ")
            current = [n.strip().lstrip("*") for n in head.split(",")]
            for n in current:
                entries[n] = (kind.strip(), [])
        else:
            for n in current:
                entries[n][1].append(line.strip())
    return entries


def type_problem(kind: str) -> str | None:
    """Why ``kind`` is not a type slot (None when it reads as one)."""
    if not kind:
        return "no type"
    if kind.endswith((".", ";", ":", ",")) or len(kind) > 70 or len(kind.split()) > 9:
        return f"description in the type slot: {kind[:50]!r}"
    if re.match(r"(a|an|the|if|whether|what|which|how)\b", kind, re.I):
        return f"description in the type slot: {kind[:50]!r}"
    return None


def problems(name: str, obj: object) -> list[str]:
    doc = inspect.getdoc(obj) or ""
    sections = _sections(doc)
    documented = parse_entries(sections.get("Parameters", []))
    fields: set[str] = set()
    if inspect.isclass(obj):
        attributes = parse_entries(sections.get("Attributes", []))
        if dataclasses.is_dataclass(obj):
            fields = {f.name for f in dataclasses.fields(obj)}
        documented = {**attributes, **documented}
        target = obj.__init__
        if target is object.__init__ or issubclass(obj, BaseException):
            return [f"{name}: {n}: {p}" for n, (k, d) in documented.items() for p in _entry(k, d)]
    else:
        target = obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    out = []
    for param in signature.parameters.values():
        if param.name in ("self", "cls"):
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) and param.name not in documented:
            continue
        if param.name not in documented:
            out.append(f"{name}: {param.name}: not documented")
    for n, (kind, desc) in documented.items():
        if n in signature.parameters or n in fields or inspect.isclass(obj):
            out += [f"{name}: {n}: {p}" for p in _entry(kind, desc)]
    return out


def _entry(kind: str, desc: list[str]) -> list[str]:
    out = []
    problem = type_problem(kind)
    if problem:
        out.append(problem)
    if not desc:
        out.append("no description")
    return out


def test_names_are_found():
    names = public_names()
    assert "kynemapy.Simulation.run" in names and "kynemapy.io.read" in names
    assert "kynemapy.world_pose" in names and "kynemapy.io.Result" in names


def test_parameters_have_type_and_description():
    offenders = []
    for name, obj in public_names().items():
        offenders += problems(name, obj)
    assert not offenders, f"{len(offenders)} parameter entries:\n" + "\n".join(offenders)
