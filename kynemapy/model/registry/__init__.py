"""The kinds of elements and constraints that declare themselves (:mod:`.kind`): one module (or
folder) per kind, and :data:`KINDS`, the one line that lists them (docs/engine.md, "Adding a kind").

Every layer above the model loops over :func:`kinds` instead of naming a kind: the model file
(:mod:`kynemapy.model.file`), the result files (:mod:`kynemapy.io.layout`, ``writer``, ``reader``),
the energies (:mod:`kynemapy.engine.energies`), ParaView (:mod:`kynemapy.io.vtkhdf`), the
animation (:mod:`kynemapy.post.animate`) and ``kynemapy info``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from kynemapy.model.registry import contact, springs
from kynemapy.model.registry.kind import READ_AFTER, Columns, Kind, Memory, ModelTable

__all__ = [
    "KINDS",
    "column_groups",
    "derived_data",
    "kinds",
    "memories",
    "model_tables",
    "register",
    "registered",
    "unregister",
]

#: the kinds, in the order their model-file tables are read and their columns written
KINDS: tuple[Kind, ...] = (springs.KIND, contact.KIND)

_added: list[Kind] = []


def kinds() -> tuple[Kind, ...]:
    """Every kind: :data:`KINDS`, then those added by :func:`register`.

    Returns
    -------
    tuple of Kind
        The kinds, in order.
    """
    return (*KINDS, *_added)


def register(kind: Kind) -> None:
    """Add a kind declared outside this package (a plug-in's, a test's) after :data:`KINDS`.

    Parameters
    ----------
    kind : Kind
        The kind; its name, tables, column group and keyword must be new.

    Raises
    ------
    ValueError
        A name already taken, or a table read after none of the model file's own tables.
    """
    taken = {
        *(k.name for k in kinds()),
        *(t.name for t in model_tables()),
        *column_groups(),
        *(k.derived_keyword for k in kinds() if k.derive),
        *(k.memory.name for k in kinds() if k.memory),
    }
    names = {kind.name, *(t.name for t in kind.tables)}
    names |= {kind.columns.name} if kind.columns else set()
    names |= {kind.derived_keyword} if kind.derive else set()
    names |= {kind.memory.name} if kind.memory else set()
    if names & taken:
        raise ValueError(f"register: kind {kind.name!r}: {sorted(names & taken)} taken already")
    for table in kind.tables:
        if table.after not in READ_AFTER:
            raise ValueError(f"register: table [{table.name}] after {table.after!r}: one of {READ_AFTER}")
    _added.append(kind)


def unregister(kind: Kind) -> None:
    """Remove a kind added by :func:`register`.

    Parameters
    ----------
    kind : Kind
        The kind.
    """
    _added.remove(kind)


@contextmanager
def registered(kind: Kind) -> Iterator[Kind]:
    """``with registered(kind):`` the kind is registered inside the block (:func:`register`).

    Parameters
    ----------
    kind : Kind
        The kind.

    Yields
    ------
    Kind
        The kind.
    """
    register(kind)
    try:
        yield kind
    finally:
        unregister(kind)


def model_tables() -> tuple[ModelTable, ...]:
    """Every kind's model-file tables, in reading order.

    Returns
    -------
    tuple of ModelTable
        The tables.
    """
    return tuple(t for k in kinds() for t in k.tables)


def column_groups() -> dict[str, Columns]:
    """Every kind's group of result-file columns, by the group's name.

    Returns
    -------
    dict of str to Columns
        The groups, in order.
    """
    return {k.columns.name: k.columns for k in kinds() if k.columns is not None}


def memories(model: Any) -> dict[str, Memory]:
    """The kinds' memories of a run (:class:`~kynemapy.model.registry.kind.Memory`) that a run of
    ``model`` has, by name.

    Parameters
    ----------
    model : Model
        The model.

    Returns
    -------
    dict of str to Memory
        The memories, in the kinds' order (empty: none).
    """
    return {k.memory.name: k.memory for k in kinds() if k.memory is not None and k.memory.present(model)}


def derived_data(given: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """The kinds' derived rows passed to a drawing or an export by their keywords
    (:attr:`~kynemapy.model.registry.kind.Kind.derived_keyword`), checked.

    Parameters
    ----------
    given : mapping of str to Any
        The keyword arguments (``contacts=...``).
    caller : str
        The function's name, for the message.

    Returns
    -------
    dict of str to Any
        The derived rows by keyword.

    Raises
    ------
    TypeError
        A keyword no kind takes.
    """
    keywords = [k.derived_keyword for k in kinds() if k.derive]
    for name in given:
        if name not in keywords:
            raise TypeError(f"{caller}() got an unexpected keyword argument {name!r} (kinds' data: {keywords})")
    return dict(given)
