"""Mutable simulation data: :class:`State`, :class:`Inputs`, :class:`Workspace`, and their packing.

``State`` is exactly what a restart needs (Kynema's ``q, q_prev, q_delta, v, vd, a`` plus
the multipliers, outputs, time and step counter); ``Inputs`` is what the user sets between
steps; ``Workspace`` holds the packed model and every buffer the compiled step writes, so
nothing is allocated while stepping.  Each keeps its arrays in flat arenas (see
:mod:`kynemapy._arena`) and shows them as named numpy views: ``state.q`` is a (N, 7) view
into ``state.f``; write into the views, never replace them.  :meth:`Workspace.data` gives
the :class:`~kynemapy.engine.fields.Data` the compiled kernels take.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from kynemapy._arena import Arenas, resolve
from kynemapy.engine import fields as fd
from kynemapy.engine.constraints.phase import Kinds
from kynemapy.engine.elements import TABLES
from kynemapy.engine.elements.table import STANDARD
from kynemapy.engine.fields import Data
from kynemapy.engine.rows import RECORDED, ROW_FIELDS, RowLayout, row_layout, row_offsets
from kynemapy.engine.solvers import Solver
from kynemapy.engine.unit_call import N_UNITS
from kynemapy.engine.units import fill_units
from kynemapy.linalg import sparsity
from kynemapy.linalg.dense import Program, condense_plan, empty_program, held_blocks
from kynemapy.model import Model, kinds

if TYPE_CHECKING:  # the sparse LU is imported by the first sparse model, not with the engine
    from kynemapy.linalg.sparse_lu import LUWorkspace

#: systems up to this many unknowns are solved densely by ``solver="auto"``
DENSE_MAX_DOFS = 20
#: ... and so are systems up to this many whose Newton matrix is not full (below
#: :data:`DENSE_MIN_FILL`), by the same elimination program: mechanisms of two to four bodies,
#: where it stepped 10-30 % faster than the sparse LU (2026-12-02, dense ÷ sparse µs a step,
#: paired medians of 7 interleaved rounds, two runs: two to five hinged links, 22-55 unknowns,
#: 0.63-0.76; chains of three and four ball-jointed links, 27 and 36, 0.80-0.83; a hub with two or
#: three hinged arms, 31 and 42, 0.83 and 0.91-1.03; the IFToMM double four-bar, 59, 0.74-0.82;
#: but a hub with four arms, 53, 1.14, and ten ball-jointed links, 90, 1.53)
DENSE_PROGRAM_MAX_DOFS = 40
#: ... and so are larger ones whose Newton matrix's pattern is at least this full (nnz / n²), up
#: to :data:`DENSE_FULL_MAX_DOFS` unknowns, by LU with partial pivoting at every solve: beam
#: elements of few nodes each, where the sparse LU works on dense blocks (measured, one solve
#: with the dense copy of the matrix against the sparse refactorization and solve, µs: rotating
#: beam of order 5, n = 42, fill 0.78: 7.3 / 15.5; order 10, n = 72, fill 0.86: 32 / 53; the
#: IEA 15 MW rotor, n = 216, fill 0.29: 204 / 100-117, sparse)
DENSE_MIN_FILL = 0.5
DENSE_FULL_MAX_DOFS = 600
#: Newton-matrix solvers of :func:`new_workspace`
SOLVERS = ("auto", "dense", "sparse")


def _counts(n_nodes: int, n_constraints: int, **more: int) -> dict[str, int]:
    return {"N": int(n_nodes), "C": int(n_constraints), **more}


def _layout(fields: fd.FieldList, counts: dict[str, int], int_arenas: tuple[str, ...] = fd.INT_ARENAS) -> Arenas:
    arenas = Arenas(int_arenas)
    for name, arena, shape in fields:
        arenas.add(arena, name, resolve(shape, counts))
    return arenas


class _Arrays:
    """Named views of one or two arenas; iteration and ``_fields`` as a NamedTuple's.

    Each view is also kept in a slot of its name (subclasses list their ``_fields`` in
    ``__slots__``), so ``state.q`` is a plain attribute read (about 20 ns), not a call of
    :meth:`__getattr__` (about 0.3 µs), which a script reading the state every step would pay.
    """

    _fields: tuple[str, ...] = ()
    __slots__ = ("_layout", "_views")

    def __init__(self, views: dict[str, np.ndarray]) -> None:
        self._set_views(views)

    def _set_views(self, views: dict[str, np.ndarray]) -> None:
        object.__setattr__(self, "_views", views)
        for name in self._fields:
            object.__setattr__(self, name, views[name])

    def _arenas(self) -> dict[str, np.ndarray]:  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def __getattr__(self, name: str) -> np.ndarray:
        # reached for a name without a value: a field of a copy whose views are not made yet
        # (State.copy makes them on first use), or no field at all.  object.__getattribute__: an
        # object not yet initialised (copy, pickle) has neither, and looking them up through
        # __getattr__ again would recurse
        try:
            views = object.__getattribute__(self, "_views")
        except AttributeError:
            try:
                layout = object.__getattribute__(self, "_layout")
            except AttributeError:
                layout = None
            if layout is None or name.startswith("__"):
                raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None
            views = layout.views(self._arenas())
            self._set_views(views)
            if name == "_views":
                return views  # type: ignore[return-value]
        try:
            return views[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __reduce__(self) -> tuple[Any, tuple[np.ndarray, ...]]:
        # copy, deepcopy and pickle give an independent object of the same arrays' values
        return type(self), tuple(np.array(a, copy=True) for a in self)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"{type(self).__name__}.{name} is a view into packed data: write into it ({name}[...] = value)"
        )

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self._views[name] for name in self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __getitem__(self, i: int) -> np.ndarray:
        return self._views[self._fields[i]]

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}={tuple(self._views[n].shape)}" for n in self._fields)
        return f"{type(self).__name__}({shapes})"

    def _asdict(self) -> dict[str, np.ndarray]:
        return {name: self._views[name] for name in self._fields}


class State(_Arrays):
    """Node states (inertial frame); shapes with N = n_nodes, C = n_constraints.

    The arrays are views into two arenas, ``f`` (float64) and ``i`` (int64, the step
    counter).  ``State(q=..., ...)`` (or positional, in :attr:`_fields` order) copies
    the given arrays into a new state.

    Attributes
    ----------
    q : (N, 7) float64
        Displacement u [m] and rotation quaternion r (w, x, y, z) relative to the reference
        orientation (current orientation = r ⊗ r0).
    q_prev : (N, 7) float64
        q at the start of the last step.
    q_delta : (N, 6) float64
        Velocity-like increment Δq [m/s, rad/s]: q = q_prev ⊕ h Δq.
    v : (N, 6) float64
        Velocity (u̇ [m/s], ω [rad/s]).
    vd : (N, 6) float64
        Acceleration (ü [m/s²], ω̇ [rad/s²]).
    a : (N, 6) float64
        Generalized-α algorithmic acceleration [m/s², rad/s²].
    x : (N, 7) float64
        Current position X + u [m] and orientation r ⊗ r0 (w, x, y, z).
    lam : (C, 6) float64
        Lagrange multipliers λ [N, N m] (the first n_rows entries of each row are used).
    constraint_output : (C, 3) float64
        Revolute joints: azimuth [rad], speed [rad/s], acceleration [rad/s²] about the axis;
        hinge joints: angle of body_b relative to body_a [rad] (unwrapped), rate [rad/s],
        acceleration [rad/s²]; slider joints: displacement [m], rate [m/s], acceleration
        [m/s²]; zero for other kinds.
    time : (1,) float64
        Simulated time [s].
    step : (1,) int64
        Number of converged steps.
    """

    _fields = ("q", "q_prev", "q_delta", "v", "vd", "a", "x", "lam", "constraint_output", "time", "step")
    __slots__ = ("f", "i", *_fields)

    def __init__(self, *arrays: Any, **named: Any) -> None:
        given = dict(zip(self._fields, arrays, strict=False))
        given.update(named)
        missing = [name for name in self._fields if name not in given]
        if missing:
            raise TypeError(f"State: missing arrays {missing}")
        q = np.asarray(given["q"])
        lam = np.asarray(given["lam"])
        f, i, views = _new_state_arenas(q.shape[0], lam.shape[0])
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "i", i)
        object.__setattr__(self, "_layout", _sized_layout("state", int(q.shape[0]), int(lam.shape[0])))
        super().__init__(views)
        for name in self._fields:
            try:
                views[name][...] = given[name]
            except ValueError as exc:
                raise ValueError(f"State: {name} must have shape {views[name].shape}: {exc}") from None

    @classmethod
    def _from_arenas(cls, f: np.ndarray, i: np.ndarray, layout: Arenas, views: dict[str, np.ndarray] | None) -> State:
        """A state on the arenas ``f``, ``i`` laid out by ``layout``; its views made now, or
        (``views`` None) on the first read of a field."""
        self = object.__new__(cls)
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "i", i)
        object.__setattr__(self, "_layout", layout)
        if views is not None:
            self._set_views(views)
        return self

    def _arenas(self) -> dict[str, np.ndarray]:
        return {"sf": self.f, "si": self.i}

    def copy(self) -> State:
        """A deep copy (for save/restore): its two arenas copied, its views made when first read
        (a copy that only goes back through :meth:`assign` never needs them)."""
        return State._from_arenas(self.f.copy(), self.i.copy(), self._layout, None)

    def assign(self, other: State) -> None:
        """Copy every array of ``other`` into this state in place.

        Parameters
        ----------
        other : State
            A state of the same model (the same shapes).

        Raises
        ------
        TypeError
            ``other`` is not a :class:`State`.
        ValueError
            ``other`` has other shapes (a state of another model); nothing is copied.
        """
        if not isinstance(other, State):
            raise TypeError(f"expected a kynemapy.State, got {type(other).__name__}")
        layout = getattr(self, "_layout", None)
        if layout is not None and getattr(other, "_layout", None) is layout:  # same counts, same arenas: copied whole
            self.f[...] = other.f
            self.i[...] = other.i
            return
        for name, mine, theirs in zip(self._fields, self, other, strict=True):
            if np.shape(theirs) != mine.shape:
                raise ValueError(
                    f"the state to put back has {name} of shape {np.shape(theirs)}, this one {mine.shape}: "
                    "a state of another model (nothing was changed)"
                )
        for mine, theirs in zip(self, other, strict=True):
            mine[...] = theirs


@functools.lru_cache(maxsize=64)
def _sized_layout(which: str, n_nodes: int, n_constraints: int) -> Arenas:
    """The layout of a State (``which`` "state") or Inputs ("inputs") of these counts, made once:
    a run copies the state and inputs for every block it writes, and laying them out again
    cost more than the copies."""
    return _layout(fd.STATE_ARENA_ORDER if which == "state" else fd.INPUTS, _counts(n_nodes, n_constraints))


def _new_state_arenas(n_nodes: int, n_constraints: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    arenas, views = _sized_layout("state", int(n_nodes), int(n_constraints)).allocate()
    return arenas["sf"], arenas["si"], views


def _check_recorded_prefix(layout: RowLayout, state: Arenas) -> None:
    """The recorder copies the first ``offsets["step"]`` floats of the state arena ``sf`` into
    a row: check that they are the row's RECORDED fields, at the same offsets."""
    for name in RECORDED:
        arena, start, shape = state.places[name]
        size = math.prod(layout.shapes[name])
        if arena != "sf" or start != layout.offsets[name] or math.prod(shape) != size:
            raise RuntimeError(  # pragma: no cover - a layout edited apart from the other
                f"kynemapy internal error: state field {name!r} at sf[{start}] (shape {shape}) but row offset "
                f"{layout.offsets[name]} (shape {layout.shapes[name]}); see engine.rows.RECORDED"
            )
    if layout.offsets["step"] != sum(math.prod(layout.shapes[name]) for name in RECORDED):  # pragma: no cover
        raise RuntimeError("kynemapy internal error: the row's step must follow its RECORDED fields")


def state_size(n_nodes: int, n_constraints: int) -> int:
    """Length of the state's float arena."""
    return _sized_layout("state", int(n_nodes), int(n_constraints)).sizes["sf"]


class Inputs(_Arrays):
    """Quantities the user sets between steps (views into one float64 arena ``data``).

    Attributes
    ----------
    f : (N, 6) float64
        External nodal force [N] and moment [N m], inertial frame.
    constraint_input : (C, 7) float64
        Per constraint: the prescribed displacement (u [m], quaternion) of prescribed BCs;
        ``[0]`` = torque [N m] of a revolute or hinge joint, force [N] of a slider joint, or
        angle [rad] of a rotation control; for a hinge or slider ``[1:7]`` its servo: kp, kd,
        target position, target rate, feed-forward, effort limit (0: none) (docs/joints.md,
        "Drives, springs, dampers and friction"; hinge units rad and N m, slider m and N).
    """

    _fields = ("f", "constraint_input")
    __slots__ = ("data", *_fields)

    def _arenas(self) -> dict[str, np.ndarray]:
        return {"xf": self.data}

    def __init__(self, *arrays: Any, **named: Any) -> None:
        given = dict(zip(self._fields, arrays, strict=False))
        given.update(named)
        f = np.asarray(given["f"])
        ci = np.asarray(given["constraint_input"])
        data, views = _new_input_arena(f.shape[0], ci.shape[0])
        object.__setattr__(self, "data", data)
        super().__init__(views)
        for name in self._fields:
            views[name][...] = given[name]


def _new_input_arena(n_nodes: int, n_constraints: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    arenas, views = _sized_layout("inputs", int(n_nodes), int(n_constraints)).allocate()
    return arenas["xf"], views


def new_state(model: Model) -> State:
    """A zero state with identity rotations (q = q_prev = (0,0,0,1,0,0,0)), ``x`` = X.

    Parameters
    ----------
    model : Model
        The model whose node and constraint counts size it.
    """
    f, i, views = _new_state_arenas(model.n_nodes, model.n_constraints)
    views["q"][:, 3] = 1.0
    views["q_prev"][:, 3] = 1.0
    views["x"][...] = model.x0
    return State._from_arenas(f, i, _sized_layout("state", int(model.n_nodes), int(model.n_constraints)), views)


def new_inputs(model: Model) -> Inputs:
    """Zero loads; prescribed displacements at identity (0,0,0,1,0,0,0); hinges and sliders zeros (no servo).

    Parameters
    ----------
    model : Model
        The model whose node and constraint counts size it.
    """
    data, views = _new_input_arena(model.n_nodes, model.n_constraints)
    kind = np.asarray(model.constraint_kind)
    views["constraint_input"][:, 3] = np.where((kind == kinds.HINGE_JOINT) | (kind == kinds.SLIDER_JOINT), 0.0, 1.0)
    inputs = object.__new__(Inputs)
    object.__setattr__(inputs, "data", data)
    inputs._set_views(views)
    return inputs


class Workspace:
    """The packed model and every buffer of the compiled step (build with :func:`new_workspace`).

    Parameters
    ----------
    model : Model
        The model to pack.
    max_iter : int
        The most Newton iterations of a step (sizes ``errors``; at least 1 is used).
    solver : {"auto", "dense", "sparse"}
        The linear solver (see :func:`new_workspace`; not checked here).
    with_k : bool
        Put the geometric-stiffness blocks K^Φ into the Newton matrix's pattern.

    Attributes
    ----------
    model : Model
        The :class:`~kynemapy.Model` it was packed from.
    solver : str
        ``"dense"`` or ``"sparse"`` (what ``"auto"`` chose).
    has_k : bool
        True when the matrix pattern has the K^Φ blocks (exact tangent possible).
    arenas : dict[str, ndarray]
        The model (``mi``, ``mf``, read-only) and workspace (``wi``, ``wf``) arenas.
    views : dict[str, ndarray]
        Every model and workspace field by name (:mod:`kynemapy.engine.fields`), and
        ``tables``, the element tables (one NamedTuple per module of ``TABLES``).
    reference : Program or LUWorkspace
        The reference factorization (dense: :class:`~kynemapy.linalg.dense.Program`;
        sparse: :class:`~kynemapy.linalg.sparse_lu.LUWorkspace`), factored once at the
        model's initial state; ``fallback``: the solver used when a refactorization along the
        reference's pivots is refused (dense: a matrix for partial pivoting; sparse: an LU).
    fallback : tuple of ndarray or LUWorkspace
        That fallback solver's storage.
    indptr : (n + 1,) ndarray of int64
        The column pointers of the CSC pattern of the Newton matrix (n unknowns).
    indices : (nnz,) ndarray of int64
        The row indices of that pattern; :attr:`vals` holds the values (last step), and
        :attr:`b`, :attr:`dx`, :attr:`errors`, :attr:`tangent` the other buffers.
    row_layout : RowLayout
        The output row layout (:mod:`kynemapy.engine.rows`).
    """

    def __init__(self, model: Model, max_iter: int, solver: str, with_k: bool) -> None:
        self.model = model
        n = int(model.n_dofs)
        self.has_k = bool(with_k)
        #: True once the reference factorization was made (:func:`kynemapy.engine.api.reference_factorization`)
        self.has_reference = False
        self._pack(model, max(int(max_iter), 1))
        filled = self.indices.shape[0] >= DENSE_MIN_FILL * n * n
        full = filled and n <= DENSE_FULL_MAX_DOFS
        program = n <= DENSE_MAX_DOFS or (n <= DENSE_PROGRAM_MAX_DOFS and not filled)
        dense = solver == "dense" or (solver == "auto" and (program or full))
        self.solver = "dense" if dense else "sparse"
        #: the dense solver's kind (``Solver.dense``): 1 the elimination program of the reference
        #: factorization (partial pivoting when it refuses), 2 partial pivoting at every solve
        #: (``solver="auto"`` for a full matrix: the program's indirection costs more there), 3 as
        #: 2 with the nodes held by one-node constraints eliminated first; 0 sparse
        self.dense_mode = (1 if solver == "dense" or program else 2) if dense else 0
        plan, scratch = None, 0
        if self.dense_mode == 2:  # 3: the same, the held nodes eliminated first (Solver)
            blocks = held_blocks(
                n, self.indptr, self.indices, model.constraint_node, model.constraint_row,
                model.constraint_n_rows, model.node_map, model.node_dofs, int(model.n_system_dofs),
            )  # fmt: skip
            if blocks.shape[0]:
                self.dense_mode = 3
                plan, scratch = condense_plan(n, blocks)
        #: addresses of the compiled units the model uses (``Data.units``, engine.unit_call)
        self.units = np.zeros(N_UNITS, dtype=np.int64)
        self.units_filled = False
        if dense:
            self.reference: Program | LUWorkspace = empty_program(n)
            self.fallback: Any = (
                (np.zeros(n, dtype=np.int64), np.zeros(n * n)) if plan is None else (plan, np.zeros(n * n + scratch))
            )
        else:
            from kynemapy.linalg.sparse_lu import analyze, new_lu_workspace

            symbolic = analyze(self.indptr, self.indices, n)
            self.reference = new_lu_workspace(self.indptr, self.indices, n, symbolic=symbolic)
            self.fallback = new_lu_workspace(self.indptr, self.indices, n, symbolic=symbolic)

    def _pack(self, model: Model, max_iter: int) -> None:
        nn, nc = int(model.n_nodes), int(model.n_constraints)
        n = int(model.n_dofs)
        node_map = np.asarray(model.node_map, dtype=np.int64)
        node_dofs = np.asarray(model.node_dofs, dtype=np.int64)
        # element tables: nodes and block rows; then the pattern of the Newton matrix
        blocks = []
        for table in TABLES:
            nodes = table.nodes(model)
            rows = sparsity.node_rows(node_map, node_dofs, nodes, table.NODE_DOFS)
            blocks.append((nodes, rows.reshape(nodes.shape[0], nodes.shape[1] * table.NODE_DOFS)))
        drive = kinds.driven(model.constraint_kind, model.constraint_axes, model.initial_constraint_input)
        cpairs = sparsity.constraint_pairs(
            node_map, node_dofs, int(model.n_system_dofs), model.constraint_node, model.constraint_row,
            model.constraint_n_rows, self.has_k | drive,
        )  # fmt: skip
        pairs = [sparsity.block_pairs(rows) for _, rows in blocks]
        indptr, indices = sparsity.pattern(n, pairs + list(cpairs.values()))
        self.row_layout = row_layout(nn, nc)
        _check_recorded_prefix(self.row_layout, _sized_layout("state", nn, nc))
        counts = _counts(
            nn, nc, n=n, n1=n + 1, nnz=int(indices.shape[0]), max_iter=max_iter,
            state_size=state_size(nn, nc), row_fields=len(ROW_FIELDS),
        )  # fmt: skip
        layout = _layout(fd.MODEL + fd.WORKSPACE, counts)
        for k, (table, (nodes, rows)) in enumerate(zip(TABLES, blocks, strict=True)):
            tcounts = {"n": nodes.shape[0], "nodes_per": nodes.shape[1], "m": rows.shape[1]}
            if hasattr(table, "counts"):  # the table's own sizes (beams: nodes and points per element)
                tcounts.update(table.counts(model))
            for name, arena, shape in STANDARD:
                layout.add(arena, f"table{k}.{name}", resolve(shape, tcounts))
            for name, arena, trailing, _ in table.FIELDS:
                layout.add(arena, f"table{k}.{name}", (nodes.shape[0], *resolve(trailing, tcounts)))
            for name, shape in getattr(table, "SCRATCH", ()):  # the kernel's scratch, once per table
                layout.add("wf", f"table{k}.{name}", resolve(shape, tcounts))
        arenas, views = layout.allocate()
        for name, _, _ in fd.MODEL:
            if hasattr(model, name):
                views[name][...] = getattr(model, name)
        kind = np.asarray(model.constraint_kind, dtype=np.int64)
        views["constraint_has_load"][...] = np.where(drive, kinds.DRIVEN_LOAD, kinds.HAS_INPUT_LOAD[kind])
        views["constraint_has_output"][...] = kinds.HAS_OUTPUT[kind]
        views["indptr"][...] = indptr
        views["indices"][...] = indices
        keys = sparsity.slot_table(indptr, indices)
        for name in ("con_row", "con_col", "con_k"):
            views[f"{name}_slots"][...] = sparsity.slots(indptr, indices, *cpairs[name], keys=keys)
        views["row_offsets"][...] = row_offsets(self.row_layout)
        views["q_ground"][...] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        tables = []
        for k, (table, (nodes, rows), (r, c)) in enumerate(zip(TABLES, blocks, pairs, strict=True)):
            tv = {name: views[f"table{k}.{name}"] for name in table.TABLE._fields}
            tv["nodes"][...] = nodes
            tv["rows"][...] = rows
            tv["slots"][...] = sparsity.slots(indptr, indices, r, c, keys=keys)
            for name, _, _, model_name in table.FIELDS:
                if model_name is not None:
                    tv[name][...] = np.asarray(getattr(model, model_name)).reshape(tv[name].shape)
            cls = table.TABLE
            tables.append(cls(**{name: tv[name] for name in cls._fields}))
        for name in fd.MODEL_ARENAS:
            arenas[name].setflags(write=False)
        self.arenas = arenas
        self.views = views
        self.tables = tuple(tables)
        self.kinds = Kinds(views["constraint_kind"])
        self.indptr = views["indptr"]
        self.indices = views["indices"]

    # ------------------------------------------------------------ views
    @property
    def vals(self) -> np.ndarray:
        """(nnz,) float64: the Newton matrix's values of the last iteration, CSC order of ``indptr``, ``indices``."""
        return self.views["vals"]

    @property
    def b(self) -> np.ndarray:
        """(n,) float64: the residual of the last iteration, then the right-hand side of its solve."""
        return self.views["b"]

    @property
    def dx(self) -> np.ndarray:
        """(n,) float64: the Newton increment of the last iteration."""
        return self.views["dx"]

    @property
    def errors(self) -> np.ndarray:
        """(max_iter,) float64: the Newton errors of the last step (the first ``n_iter`` are set)."""
        return self.views["errors"]

    @property
    def tangent(self) -> np.ndarray:
        """(N, 3, 3) float64: the rotation block of the tangent operator 𝒯 per node (transposed)."""
        return self.views["tangent"]

    @property
    def n_iter(self) -> int:
        """Newton iterations of the last step."""
        return int(self.views["n_iter"][0])

    def matrix(self) -> np.ndarray:
        """The Newton matrix of the last assembly as a dense (n, n) array (for inspection)."""
        n = int(self.model.n_dofs)
        a = np.zeros((n, n))
        cols = np.repeat(np.arange(n), np.diff(self.indptr))
        np.add.at(a, (self.indices, cols), self.vals)
        return a

    def data(self, state: State, inputs: Inputs) -> Data:
        """The :class:`~kynemapy.engine.fields.Data` of ``state``, ``inputs`` and this workspace.

        It is what the compiled entry point takes; make it again after the solver's arrays
        grew.

        Parameters
        ----------
        state : State
            The state of this workspace's model.
        inputs : Inputs
            The inputs of this workspace's model.

        Returns
        -------
        Data
            The arrays of the model, state, inputs and workspace (views, not copies).
        """
        if self.solver == "dense":
            fi, ff = self.fallback
            solver = Solver(self.dense_mode, self.reference.i, self.reference.f, fi, ff)
        else:
            solver = Solver(0, self.reference.i, self.reference.f, self.fallback.i, self.fallback.f)
        v = self.views
        sv = state._asdict()
        iv = inputs._asdict()
        d = Data(
            int(self.model.n_system_dofs),
            int(self.model.n_dofs),
            *(v[name] for name, _, _ in fd.MODEL),
            self.kinds,
            self.tables,
            state.f,
            *(sv[name] for name, _, _ in fd.STATE),
            *(iv[name] for name, _, _ in fd.INPUTS),
            *(v[name] for name, _, _ in fd.WORKSPACE),
            solver,
            self.units,
        )
        if not self.units_filled:  # the compiled units the model uses (engine.unit_call)
            fill_units(d, self.has_k)
            self.units_filled = True
        return d


def new_workspace(model: Model, max_iter: int, solver: str = "auto", geometric_stiffness: bool = True) -> Workspace:
    """Every buffer the step needs, sized for ``model``.

    The reference factorization is made by :class:`kynemapy.Simulation` (or
    :func:`kynemapy.engine.api.reference_factorization`).

    Parameters
    ----------
    model : Model
        The built model.
    max_iter : int
        The most Newton iterations of a step (``StepParameters.max_iter``).
    solver : {"auto", "dense", "sparse"}, default "auto"
        ``"dense"``: an elimination program along the pivots of a reference factorization,
        partial pivoting when it refuses.  ``"sparse"``: sparse LU, fill-reducing ordering,
        refactored along a reference factorization.  ``"auto"``: dense up to
        :data:`DENSE_MAX_DOFS` unknowns, or up to :data:`DENSE_PROGRAM_MAX_DOFS` with a Newton
        matrix less than :data:`DENSE_MIN_FILL` full (the elimination program), or with one at
        least that full (up to :data:`DENSE_FULL_MAX_DOFS` unknowns; partial pivoting at every
        solve), sparse otherwise.
    geometric_stiffness : bool, default True
        False (Kynema-compatible steps only) leaves the K^Φ blocks out of the pattern.

    Returns
    -------
    Workspace
        The packed model and buffers.

    Raises
    ------
    ValueError
        An unknown ``solver``.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    return Workspace(model, max_iter, solver, geometric_stiffness)


__all__ = [
    "DENSE_MAX_DOFS",
    "DENSE_PROGRAM_MAX_DOFS",
    "SOLVERS",
    "Inputs",
    "State",
    "Workspace",
    "new_inputs",
    "new_state",
    "new_workspace",
]
