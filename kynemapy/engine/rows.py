"""The output row: the one definition of what a recorded step holds.

A row is a flat float64 vector; :data:`ROW_FIELDS` lists its fields with their shapes
(N = n_nodes, C = n_constraints), file dtype and unit, in the order of the files and of
:class:`kynemapy.io.Result`.  From it come the offsets the compiled recorder writes
(:func:`kynemapy.engine.step.record_row`, through the header words ``ROW_*``), the HDF5
datasets and their units (:mod:`kynemapy.io.hdf5`), the arrays :func:`kynemapy.io.read`
returns, and the plots.  Integer fields (``step``, ``iterations``) are exact in float64
and stored as int64 in files.

In memory a row is laid out in :data:`ROW_ORDER`: the state fields it records
(:data:`RECORDED`) first, in the order they lead the state arena ``sf``
(:data:`kynemapy.engine.fields.STATE_ARENA_ORDER`), so that recording a step is one
contiguous copy (a copy per field, with twelve array arguments, cost 0.2 µs a step, 6 %
of a heavy-top step).  Code reads a field by its offset, never by position.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class RowField(NamedTuple):
    """One field of the output row."""

    name: str
    shape: tuple[str | int, ...]  #: per row; counts by name: "N" nodes, "C" constraints
    dtype: type  #: dtype in files and in :func:`kynemapy.io.read`
    unit: str


ROW_FIELDS: tuple[RowField, ...] = (
    RowField("time", (), np.float64, "s"),
    RowField("step", (), np.int64, "1 (converged steps)"),
    RowField("q", ("N", 7), np.float64, "m (u, columns 0-2), 1 (rotation quaternion w, x, y, z, columns 3-6)"),
    RowField("v", ("N", 6), np.float64, "m/s (columns 0-2), rad/s (columns 3-5)"),
    RowField("vd", ("N", 6), np.float64, "m/s^2 (columns 0-2), rad/s^2 (columns 3-5)"),
    RowField(
        "a",
        ("N", 6),
        np.float64,
        "m/s^2 (columns 0-2), rad/s^2 (columns 3-5) (generalized-alpha algorithmic acceleration)",
    ),
    RowField("iterations", (), np.int64, "1 (Newton iterations of the step)"),
    RowField("error", (), np.float64, "1 (final weighted-RMS Newton error of the step)"),
    RowField("lam", ("C", 6), np.float64, "N (force rows), N m (moment rows)"),
    RowField(
        "constraint_output",
        ("C", 3),
        np.float64,
        "rad, rad/s, rad/s^2 (revolute and hinge joints); m, m/s, m/s^2 (slider joints)",
    ),
    RowField("kinetic_energy", (), np.float64, "J"),
    RowField("potential_energy", (), np.float64, "J (gravity, zero at the world origin)"),
    RowField("strain_energy", (), np.float64, "J (elastic energy of beams, springs and compliant contacts)"),
    RowField("linear_momentum", (3,), np.float64, "kg m/s"),
    RowField("angular_momentum", (3,), np.float64, "kg m^2/s (about the world origin, world frame)"),
)
#: names of the fields, in row order
ROW_NAMES: tuple[str, ...] = tuple(f.name for f in ROW_FIELDS)
#: index of each field in ``Data.row_offsets`` (its position in ROW_FIELDS)
(
    ROW_TIME,
    ROW_STEP,
    ROW_Q,
    ROW_V,
    ROW_VD,
    ROW_A,
    ROW_ITERATIONS,
    ROW_ERROR,
    ROW_LAM,
    ROW_CONSTRAINT_OUTPUT,
    ROW_KINETIC_ENERGY,
    ROW_POTENTIAL_ENERGY,
    ROW_STRAIN_ENERGY,
    ROW_LINEAR_MOMENTUM,
    ROW_ANGULAR_MOMENTUM,
) = range(len(ROW_FIELDS))
#: the state fields a row records, in the row's order: a row starts with them, and so does
#: the state arena (:data:`kynemapy.engine.fields.STATE_ARENA_ORDER`) with the same shapes
RECORDED: tuple[str, ...] = ("time", "q", "v", "vd", "a", "lam", "constraint_output")
#: the fields in the order of a row in memory (:func:`row_layout`): RECORDED, then the rest
#: in ROW_FIELDS order
ROW_ORDER: tuple[str, ...] = (*RECORDED, *(name for name in ROW_NAMES if name not in RECORDED))
#: ROW_ORDER as positions in ROW_FIELDS (for compiled code)
ROW_ORDER_INDEX: tuple[int, ...] = tuple(ROW_NAMES.index(name) for name in ROW_ORDER)
#: the fields computed from q and v after recording (by the writer thread)
DERIVED: tuple[str, ...] = (
    "kinetic_energy",
    "potential_energy",
    "strain_energy",
    "linear_momentum",
    "angular_momentum",
)


class RowLayout(NamedTuple):
    """Offsets and shapes of the row fields for a model's counts; ``width`` floats per row."""

    offsets: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    width: int


def row_layout(n_nodes: int, n_constraints: int) -> RowLayout:
    """The row layout of a model with these counts: the fields one after the other in
    :data:`ROW_ORDER` (``offsets`` and ``shapes`` keyed by name, in ROW_FIELDS order)."""
    counts = {"N": int(n_nodes), "C": int(n_constraints)}
    shapes = {f.name: tuple(counts[d] if isinstance(d, str) else int(d) for d in f.shape) for f in ROW_FIELDS}
    placed: dict[str, int] = {}
    width = 0
    for name in ROW_ORDER:
        placed[name] = width
        width += math.prod(shapes[name])
    return RowLayout({name: placed[name] for name in ROW_NAMES}, shapes, width)


def row_offsets(layout: RowLayout) -> np.ndarray:
    """(len(ROW_FIELDS),) int64: each field's offset in the row, in ROW_FIELDS order."""
    return np.array([layout.offsets[name] for name in ROW_NAMES], dtype=np.int64)


def new_rows(n_nodes: int, n_constraints: int, rows: int) -> np.ndarray:
    """A zeroed (rows, width) buffer."""
    return np.zeros((int(rows), row_layout(n_nodes, n_constraints).width))


def split_rows(layout: RowLayout, buffer: np.ndarray) -> dict[str, np.ndarray]:
    """Named arrays (copies, file dtypes) of the rows of ``buffer`` (R, width): ``q`` (R, N, 7), ..."""
    out: dict[str, np.ndarray] = {}
    n = buffer.shape[0]
    for f in ROW_FIELDS:
        o = layout.offsets[f.name]
        shape = layout.shapes[f.name]
        size = math.prod(shape)
        block = buffer[:, o : o + size].reshape((n, *shape))
        out[f.name] = np.ascontiguousarray(block, dtype=f.dtype)
    return out


def field_views(layout: RowLayout, fields: np.ndarray, ints: np.ndarray, unit: int, n: int) -> dict[str, np.ndarray]:
    """Named arrays (views, file dtypes) of ``n`` rows packed field-major by
    :func:`kynemapy.engine.invariants.pack_rows`: ``fields`` (unit · width,) float64,
    ``ints`` (2, >= n) int64 (``step``, ``iterations``)."""
    out: dict[str, np.ndarray] = {}
    for f in ROW_FIELDS:
        if f.name == "step" or f.name == "iterations":
            out[f.name] = ints[0 if f.name == "step" else 1, :n]
            continue
        shape = layout.shapes[f.name]
        size = math.prod(shape)
        start = unit * layout.offsets[f.name]
        out[f.name] = fields[start : start + n * size].reshape((n, *shape))
    return out
