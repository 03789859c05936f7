"""The kinds' hooks above the model layer (:mod:`kynemapy.model.registry`): a kind names, by import
path, the functions of the run that compute what its declaration cannot (its derived rows,
:attr:`~kynemapy.model.registry.kind.Kind.derive`, the recorder of its result-file columns,
:attr:`~kynemapy.model.registry.kind.Kind.recorder`, and the keeper of its memory of a run,
:attr:`~kynemapy.model.registry.kind.Memory.keeper`); this module resolves and calls them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from kynemapy.model.registry import kinds, memories

__all__ = ["derived", "keepers", "recorded_groups", "recorders", "resolve"]


def resolve(path: str) -> Callable[..., Any]:
    """The function (or class) named ``"module:name"``.

    Parameters
    ----------
    path : str
        ``"package.module:name"``.

    Returns
    -------
    callable
        The module's attribute, the module imported first.
    """
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def derived(result: Any) -> dict[str, Any]:
    """Each kind's derived rows of a result (:attr:`~kynemapy.model.registry.kind.Kind.derive`), by
    the kind's keyword, for :func:`kynemapy.post.animate.animate` and
    :func:`kynemapy.io.vtkhdf.write_vtkhdf` (``kynemapy animate``, ``kynemapy export``).

    Parameters
    ----------
    result : kynemapy.io.Result
        A result file's contents.

    Returns
    -------
    dict of str to Any
        Contact's: ``contacts``, the ground planes' forces at the shapes' points
        (:func:`kynemapy.run.contact_rows.plane_contacts`).
    """
    return {k.derived_keyword: resolve(k.derive)(result) for k in kinds() if k.derive is not None}


def recorded_groups(step_control: bool) -> dict[str, bool]:
    """The keywords of a run's :class:`~kynemapy.io.ResultWriter`: each kind's column group that a
    recorder fills (:attr:`~kynemapy.model.registry.kind.Kind.recorder`), none under step control.

    Parameters
    ----------
    step_control : bool
        Whether the run is step-controlled (its rows are no steps: no such columns).

    Returns
    -------
    dict of str to bool
        The group's name -> whether the file gets it (a model without such columns gets no group).
    """
    return {k.columns.name: not step_control for k in kinds() if k.columns is not None and k.recorder is not None}


def recorders(sim: Any, writer: Any) -> dict[str, Callable[[dict[str, Any], int], None]]:
    """The recorders of the kinds' column groups that ``writer``'s file has, made for ``sim``.

    Parameters
    ----------
    sim : Simulation
        The simulation that runs.
    writer : ResultWriter
        Its result file's writer (:attr:`~kynemapy.io.ResultWriter.groups`).

    Returns
    -------
    dict of str to callable
        The group's name -> ``recorder(columns, row)`` (contact's:
        :class:`kynemapy.run.hard_rows.HardRowRecorder`), for the groups the file has.
    """
    out = {}
    for k in kinds():
        if k.columns is not None and k.recorder is not None and writer.groups.get(k.columns.name):
            out[k.columns.name] = resolve(k.recorder)(sim)
    return out


def keepers(sim: Any) -> dict[str, Any]:
    """The keepers of the kinds' memories of a run (:attr:`~kynemapy.model.registry.kind.Kind.memory`)
    that ``sim``'s model has, made for ``sim``.

    Parameters
    ----------
    sim : Simulation
        The simulation.

    Returns
    -------
    dict of str to object
        The memory's name -> its keeper, with ``save()`` ((R, width) float64) and ``load(rows)``
        (contact's: :class:`kynemapy.run.hard_bodies.TouchingKeeper`); empty: none.
    """
    return {name: resolve(memory.keeper)(sim) for name, memory in memories(sim.model).items()}
