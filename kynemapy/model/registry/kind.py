"""What a kind of element or constraint declares, beside its engine code: plain data and small
functions of a model or a result, read by every layer above the model (docs/engine.md, "Adding a
kind").

A :class:`Kind` names

* its **model-file tables** (:class:`ModelTable`: the table, its keys, and how an item becomes a
  builder call), read by :mod:`kynemapy.model.file`;
* its **Model fields** and what they are in a result file written before the kind existed
  (:attr:`Kind.model_defaults`, :attr:`Kind.upgrade`), used by :mod:`kynemapy.io.reader`;
* its **energy** (:class:`Energy`: the term, and the models that have it), used by
  :mod:`kynemapy.engine.energies`;
* its **result-file columns** (:class:`Columns`: a group ``/<name>`` of per-row datasets with
  units and shapes), written and read by :mod:`kynemapy.io.writer` and :mod:`kynemapy.io.reader`
  (:attr:`kynemapy.io.Result.groups`, and as an attribute of the result by the group's name);
* its **derived rows** (:attr:`Kind.derive`: per-row data the file does not hold, computed from
  a result by a function of a higher layer, named by its import path), which ``kynemapy animate``
  and ``kynemapy export`` compute and pass on by the kind's :attr:`Kind.keyword`;
* its **ParaView arrays** (:class:`PointArray`), written by :mod:`kynemapy.io.vtkhdf`;
* its **drawing**: arrows in ``kynemapy animate`` (:class:`Arrows`), drawn by
  :mod:`kynemapy.post.animate`, and shapes and planes drawn with the model (:class:`Shape`,
  :attr:`Kind.shapes`, :attr:`Kind.planes`), in the scene of :mod:`kynemapy.model.geometry`;
* its lines of ``kynemapy info`` (:attr:`Kind.info`);
* its **run memory** (:class:`Memory`: state of a run that is not the engine's ``State``, rows of
  floats kept with each restart slot so that a continued run goes on bit for bit), written and
  read by :mod:`kynemapy.io.writer` and :mod:`kynemapy.io.reader`, saved and loaded by a class of
  the run's layer named by its import path.

The functions receive duck-typed results (:class:`kynemapy.io.Result`) and models: a kind module
lives in the model layer and imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "READ_AFTER",
    "Arrows",
    "Column",
    "Columns",
    "DrawContext",
    "Energy",
    "ExportContext",
    "Kind",
    "Memory",
    "ModelTable",
    "PointArray",
    "Shape",
    "plural",
]

#: the model file's own tables a kind's table may be read after (:attr:`ModelTable.after`), in
#: reading order
READ_AFTER = ("node", "beam", "mass", "constraint", "load")


def plural(n: int, word: str) -> str:
    """``1 mass``, ``2 masses``, ``0 nodes``: a count and its noun (``kynemapy info``'s lines).

    Parameters
    ----------
    n : int
        The count.
    word : str
        The noun, singular.

    Returns
    -------
    str
        The count and the noun, plural unless ``n`` is 1.
    """
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}es" if word.endswith(("s", "x", "ch", "sh")) else f"{n} {word}s"


@dataclass(frozen=True)
class Shape:
    """A shape drawn as its points moving with a node (a kind's :attr:`Kind.shapes`): in the
    animation as wire spheres, a capsule or a box, in ParaView as a vertex, a line or six faces
    (cell kind ``shape``) with the points' ``radius`` (:mod:`kynemapy.model.geometry`).  Contact's
    are the collision shapes its pairs use.

    Attributes
    ----------
    shape : int
        The shape id (contact's: ``Model.contact_shape`` / ``pair_shape``).
    kind : {"sphere", "capsule", "box"}
        What the points make: one sphere, a capsule's two end spheres, or a box's eight
        corners (ordered so that corner i has the signs of the bits (x, y, z) of i along the
        box's axes, as :data:`kynemapy.model.geometry.BOX_FACES` expects).
    node : int
        The node of its body.
    offsets : numpy.ndarray
        (k, 3) the points' offsets from the node at the reference configuration, world frame [m].
    radius : float
        The points' radius [m] (0 for a box's corners).
    """

    shape: int
    kind: str
    node: int
    offsets: np.ndarray
    radius: float


@dataclass(frozen=True)
class ModelTable:
    """A table of the model file (TOML) that a kind reads.

    Attributes
    ----------
    name : str
        The table's name: ``[[name]]`` (``array``) or ``[name]``.
    keys : tuple of str
        Every key an item may have (the reader's hints for a key written at the top level).
    read : callable
        ``read(item, builder)``: checks the item's keys and calls the builder.  ``item`` is the
        reader's checked view of one table (:class:`kynemapy.model.file.ModelFile`'s reader:
        ``check_keys``, ``require``, ``number``, ``integer``, ``string``, ``vector``, ``matrix``,
        ``node_ref``, ``build``, ``error``, ``data``); ``builder`` the
        :class:`~kynemapy.ModelBuilder`.
    array : bool, default True
        ``[[name]]``, an array of tables (read item by item, in file order), or one ``[name]``.
    label : callable, optional
        ``label(i, data)``: the item's name in error messages (``i`` counted from 0); default
        ``"<name> #<i + 1>"`` (``"[<name>]"`` for a single table).
    message_prefix : str, default ""
        A regular expression of the builder's own prefix of its errors about such an item (the
        reader removes it and names the item and line instead).
    after : {"node", "beam", "mass", "constraint", "load"}, default "load"
        The model file's own table after which it is read and listed (:data:`READ_AFTER`).
    """

    name: str
    keys: tuple[str, ...]
    read: Callable[[Any, Any], None]
    array: bool = True
    label: Callable[[int, Mapping[str, Any]], str] | None = None
    message_prefix: str = ""
    after: str = "load"


@dataclass(frozen=True)
class Column:
    """One per-row dataset of a kind's result-file group.

    Attributes
    ----------
    name : str
        The dataset's name in its group.
    dtype : type
        Its dtype in the file.
    unit : str
        Its unit and meaning (the file's ``units`` attribute).
    shape : callable
        ``shape(model)``: its trailing shape (without the row axis) in a file of ``model``, or
        None when such a file has no such column.
    read_as : type, optional
        The dtype a reader returns (e.g. ``bool`` for a column stored as int8); None: as stored.
    """

    name: str
    dtype: type
    unit: str
    shape: Callable[[Any], tuple[int, ...] | None]
    read_as: type | None = None


@dataclass(frozen=True)
class Columns:
    """A kind's group of per-row columns in a result file, ``/<name>/<column>``.

    A writer made with ``<name>=True`` (:class:`kynemapy.io.ResultWriter`) has the columns whose
    shape the model gives (none: no group), every append passes them as ``<name>={...}``, they
    are checksummed with the rows, and :func:`kynemapy.io.read` returns them as
    ``result.groups[name]`` (and ``result.<name>``; None without them).

    Attributes
    ----------
    name : str
        The group's name (and the keyword of the writer and of ``append``).
    columns : tuple of Column
        Its columns, in the checksum records' order.
    """

    name: str
    columns: tuple[Column, ...]

    def fields(self) -> dict[str, tuple[type, str]]:
        """Every column's dtype and unit.

        Returns
        -------
        dict of str to (type, str)
            Name -> (dtype, unit), in order.
        """
        return {c.name: (c.dtype, c.unit) for c in self.columns}

    def shapes(self, model: Any) -> dict[str, tuple[tuple[int, ...], type]]:
        """The columns a file of ``model`` has (:attr:`Column.shape`).

        Parameters
        ----------
        model : Model
            The model.

        Returns
        -------
        dict of str to (tuple of int, type)
            Name -> (trailing shape, dtype), in order; empty: the file has no such group.
        """
        out = {}
        for c in self.columns:
            shape = c.shape(model)
            if shape is not None:
                out[c.name] = (tuple(shape), c.dtype)
        return out


@dataclass(frozen=True)
class Energy:
    """A kind's term of the output rows' energies.

    Attributes
    ----------
    term : str
        What it is, with its unit (documentation, ``kynemapy info``).
    row_field : str
        The output row's field that holds it (:data:`kynemapy.engine.rows.ROW_FIELDS`).
    present : callable
        ``present(model)``: True when the model has the term (the compiled row kernel then needs
        a workspace's tables to compute it).
    """

    term: str
    row_field: str
    present: Callable[[Any], bool]


class ExportContext(NamedTuple):
    """What a :class:`PointArray` gets: the result, the rows written and the points' layout."""

    result: Any  #: the result (:class:`kynemapy.io.Result`)
    rows: np.ndarray  #: (R,) int: the result's rows written
    scene: Any  #: the model's drawable items (:class:`kynemapy.model.geometry.Scene`)
    n_points: int  #: the points of one step
    shape_start: int  #: the first point of the collision shapes (:meth:`Scene.shape_points`, shape after shape)
    derived: Any  #: the kind's derived rows (:attr:`Kind.derive`), or None


@dataclass(frozen=True)
class PointArray:
    """A point-data array of the ParaView file (:func:`kynemapy.io.vtkhdf.write_vtkhdf`).

    Attributes
    ----------
    name : str
        The array's name.
    unit : str
        Its unit.
    values : callable
        ``values(context)`` (:class:`ExportContext`): (R, n_points, k) values, or None (the file
        then has no such array).
    """

    name: str
    unit: str
    values: Callable[[ExportContext], np.ndarray | None]


class DrawContext(NamedTuple):
    """What an :class:`Arrows` drawing gets: the drawn frames and the result's rows."""

    result: Any  #: the result (:class:`kynemapy.io.Result`)
    model: Any  #: its model
    q: np.ndarray  #: (F, N, 7) the drawn frames' node displacements and rotations (magnified)
    rows: np.ndarray  #: (F,) int: the result's row of each frame
    positions: np.ndarray  #: (F, N, 3) [m]: the nodes' positions in the frames
    length: float  #: [m] the drawn length of the largest arrow
    derived: Any  #: the kind's derived rows (:attr:`Kind.derive`), or None


@dataclass(frozen=True)
class Arrows:
    """Arrows drawn in every frame of ``kynemapy animate`` (:func:`kynemapy.post.animate.animate`).

    Attributes
    ----------
    what : str
        What they show (documentation).
    colour : str
        Their matplotlib colour.
    arrows : callable
        ``arrows(context)`` (:class:`DrawContext`): (F, K, 2, 3) each arrow's start and end [m] in
        each frame, or None (nothing to draw).  An arrow of zero length in every frame is not drawn.
    """

    what: str
    colour: str
    arrows: Callable[[DrawContext], np.ndarray | None]


@dataclass(frozen=True)
class Memory:
    """A kind's memory of a run: what its next step depends on beside the engine's ``State``
    (contact's: the points touching at the step's start), kept with each restart slot of a result
    file as rows of floats, so that a run continued from the file goes on bit for bit.

    In the file: ``/restart/memory/<name>`` (2, R, width) float64, the rows of each slot (R grows
    as needed); ``/restart/memory_rows`` (2, M) int64, each slot's row count of each memory (-1:
    not kept) and ``/restart/memory_digest`` (2,) int64, each slot's XXH3-64 of its rows.

    Attributes
    ----------
    name : str
        The dataset's name.
    width : int
        Floats per row (>= 1).
    present : callable
        ``present(model)``: whether a run of the model has it.
    unit : str
        What a row holds, with units (the file's ``units`` attribute).
    keeper : str
        ``"module:callable"`` of the run's layer: ``make(sim)`` gives an object with ``save()``,
        the rows now ((R, width) float64, a new array), and ``load(rows)``, which puts them back
        (:func:`kynemapy.run.hooks.keepers`).
    """

    name: str
    width: int
    present: Callable[[Any], bool]
    unit: str
    keeper: str


@dataclass(frozen=True)
class Kind:
    """The declaration of one kind of element or constraint (see the module docstring).

    Attributes
    ----------
    name : str
        The kind's name.
    tables : tuple of ModelTable
        Its model-file tables, read in this order (each after its :attr:`ModelTable.after`).
    model_defaults : callable, optional
        ``model_defaults()``: its :class:`~kynemapy.Model` fields and their values in a model
        without the kind (what a result file written before the kind existed lacks).
    upgrade : callable, optional
        ``upgrade(fields)``: brings the Model fields read from an older result file (a dict, changed
        in place) to the current layout.
    energy : Energy, optional
        Its energy term.
    columns : Columns, optional
        Its group of per-row result-file columns.
    attributes : mapping of str to callable
        Further attributes of a result (:class:`kynemapy.io.Result`), each ``f(result)``.
    derive : str, optional
        ``"module:function"``, a function ``f(result)`` of a higher layer (the run's) giving the
        kind's per-row data that the file does not hold, or None; ``kynemapy animate`` and
        ``kynemapy export`` call it (:func:`kynemapy.run.hooks.derived`) and pass its value as
        ``keyword=`` to the drawing and export.
    recorder : str, optional
        ``"module:callable"`` of the run's layer: ``make(sim)`` gives ``recorder(columns, row)``,
        which writes the kind's :attr:`columns` of the row just recorded (``columns``: name ->
        (rows, ...) array of a buffer) in a run's result file (:func:`kynemapy.run.hooks.recorders`);
        None: a run's file does not get them.  It is called for each row the run records in
        Python: with ``loads``, or for a model whose steps are one compiled call each (hard joint
        limits or hard contact; ``Simulation.advance_rows(..., on_row=...)`` refuses others).
    keyword : str, optional
        The keyword of :func:`~kynemapy.post.animate.animate` and
        :func:`~kynemapy.io.vtkhdf.write_vtkhdf` that takes the derived rows (default: the name).
    point_arrays : tuple of PointArray
        Its ParaView point-data arrays.
    drawing : tuple of Arrows
        Its arrows in the animation.
    info : callable, optional
        ``info(result)``: its lines of ``kynemapy info`` (label and text), none when empty.
    memory : Memory, optional
        Its memory of a run, kept with the restart data.
    shapes : callable, optional
        ``shapes(model)``: its shapes drawn with the model (a list of :class:`Shape`, in order).
    planes : callable, optional
        ``planes(model)``: its planes drawn with the model, (P, 4) unit normal n and offset d [m]
        of each ``n · y = d`` (a square on each, grey in the animation, cell kind ``ground`` in
        ParaView).
    """

    name: str
    tables: tuple[ModelTable, ...] = ()
    model_defaults: Callable[[], dict[str, Any]] | None = None
    upgrade: Callable[[dict[str, Any]], None] | None = None
    energy: Energy | None = None
    columns: Columns | None = None
    attributes: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    derive: str | None = None
    recorder: str | None = None
    keyword: str | None = None
    point_arrays: tuple[PointArray, ...] = ()
    drawing: tuple[Arrows, ...] = ()
    info: Callable[[Any], list[tuple[str, str]]] | None = None
    memory: Memory | None = None
    shapes: Callable[[Any], list[Shape]] | None = None
    planes: Callable[[Any], np.ndarray] | None = None

    @property
    def derived_keyword(self) -> str:
        """The keyword that passes the derived rows on (:attr:`keyword`, else :attr:`name`)."""
        return self.keyword or self.name
