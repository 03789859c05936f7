"""Crash-safe HDF5 result files: :class:`ResultWriter`, :func:`read` and :func:`energy_and_momentum`.

File layout (N = n_nodes, C = n_constraints, n = committed rows; SI units):

``/`` attributes
    ``kynemapy_version``, ``created`` (ISO 8601, UTC), ``units`` (JSON object
    dataset → unit) and the user's ``attrs``.
``/model``
    every field of :class:`kynemapy.Model`: arrays as datasets (exact dtype and
    shape), integer counts as attributes.
``/params``
    the :class:`kynemapy.StepParameters` fields as attributes; ``/params/derived``
    holds α_m, α_f, γ, β (informational).
time-series datasets (chunked ``block`` rows, unlimited first axis)
    one per field of the output row, :data:`kynemapy.engine.rows.ROW_FIELDS` (the one
    definition of their names, shapes, dtypes and units): ``time`` (n,) [s], ``step``
    (n,) int64, ``q`` (n, N, 7), ``v``, ``vd``, ``a`` (n, N, 6), ``iterations`` (n,)
    int64, ``error`` (n,) (final Newton error), ``lam`` (n, C, 6),
    ``constraint_output`` (n, C, 3), ``kinetic_energy`` (n,) [J], ``potential_energy``
    (n,) [J], ``linear_momentum`` (n, 3) [kg m/s], ``angular_momentum`` (n, 3) [kg m²/s]
    (about the world origin).
``/committed`` (1,) int64
    number of complete rows.  Rows beyond it (a block being written when the
    writer died) are ignored by :func:`read`.
``/restart`` (with ``restart=True``)
    the full :class:`kynemapy.State` (``q, q_prev, q_delta, v, vd, a, x, lam,
    constraint_output, time, step``) and :class:`kynemapy.Inputs` (``f,
    constraint_input``) of the last committed row, **double-buffered**: every
    array has a leading slot axis of length 2 (e.g. ``/restart/q`` is (2, N, 7)),
    and ``/restart/slot_info`` (2, 2) int64 holds, per slot, (committed row count
    the slot belongs to, write generation).  A write always goes to the slot not
    holding the newest restart, so a crash in the middle of one never damages
    the other; :func:`read` returns the newest slot whose row count equals
    ``committed``.

Crash safety: the file is created with ``libver="latest"``, every group and
dataset is created up front (at construction, or with ``defer_layout=True`` before
the first append), then SWMR (single-writer/multiple-reader) mode is switched on.
From then on HDF5 keeps the on-disk metadata consistent at every moment, so a
process killed with SIGKILL leaves a file that opens (read-only, ``swmr=True``)
with everything up to the last ``flush()``.  Each :meth:`ResultWriter.append`
writes in three ordered phases, each ended by a flush:

1. resize every dataset once and write the block (and the spare restart slot);
2. mark the restart slot as belonging to the new row count;
3. write ``committed``.

So ``committed`` on disk never counts a row whose data is not on disk, and a
restart slot is never pointed at before its arrays are on disk.  (This protects
against the *process* dying; surviving an operating-system crash or power loss
would also need fsync, which HDF5's flush does not do.)
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np
from h5py import h5s

import kynemapy
from kynemapy.engine.api import entry
from kynemapy.engine.data import Inputs, State
from kynemapy.engine.invariants import system_invariants
from kynemapy.engine.params import StepParameters
from kynemapy.engine.rows import DERIVED, ROW_FIELDS, ROW_NAMES, row_layout
from kynemapy.model import Model, freeze

__all__ = ["UNITS", "Result", "ResultWriter", "energy_and_momentum", "read"]

#: Per-row fields the caller must pass to :meth:`ResultWriter.append` (the others, ``DERIVED``,
#: are computed from ``q`` and ``v`` when left out).
_REQUIRED: tuple[str, ...] = tuple(name for name in ROW_NAMES if name not in DERIVED)

_RESTART_STATE = State._fields
_RESTART_INPUTS = Inputs._fields

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
    "restart/constraint_input": "m and 1 (prescribed displacement); column 0: N m (torque), N (force) or rad (angle)",
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


# --------------------------------------------------------------------------- physics
def energy_and_momentum(
    model: Model, q: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kinetic and potential energy, linear and angular momentum of the rigid bodies, per row.

    The compiled kernel of the output rows (:func:`kynemapy.engine.invariants.system_invariants`),
    one state at a time.  For each mass element on node i: ``M = diag(R,R) M* diag(R,R)ᵀ``
    with ``R = R(q_rot ⊗ r0)``, ``m = M[0,0]`` and the centre-of-mass offset
    ``η = (M[5,1], −M[5,0], M[4,0]) / m``.  Then, summed over masses:

    * kinetic energy ``T = ½ vᵀ M v`` [J];
    * potential energy ``V = −m g·(X + u + η)`` [J] (zero at the world origin);
    * linear momentum ``p = (M v)[0:3] = m (u̇ + ω × η)`` [kg m/s];
    * angular momentum about the world origin ``L = (X + u) × (M v)[0:3] + (M v)[3:6]``
      [kg m²/s], world frame.

    Springs (massless) and constraints carry neither energy nor momentum here; the
    spring strain energy is not included in ``V``.

    Parameters
    ----------
    model : the model (masses, reference positions ``x0``, ``gravity``).
    q : (..., N, 7) displacements (u [m], rotation quaternion).
    v : (..., N, 6) velocities (u̇ [m/s], ω [rad/s]), inertial frame.

    Returns
    -------
    ke : (...,) [J]; pe : (...,) [J]; p : (..., 3) [kg m/s]; L : (..., 3) [kg m²/s].
    """
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    nn = model.n_nodes
    if q.shape[-2:] != (nn, 7) or v.shape[-2:] != (nn, 6) or q.shape[:-2] != v.shape[:-2]:
        raise ValueError(
            f"energy_and_momentum: expected q (..., {nn}, 7) and v (..., {nn}, 6), got {q.shape}, {v.shape}"
        )
    lead = q.shape[:-2]
    qq = np.ascontiguousarray(q.reshape(-1, nn, 7))
    vv = np.ascontiguousarray(v.reshape(-1, nn, 6))
    n = qq.shape[0]
    out = np.zeros((n, 8))
    if n and model.mass_node.shape[0]:
        # writable copies: the kernel is compiled (and cached) for plain arrays
        args = (
            np.array(model.mass_node, dtype=np.int64),
            np.array(model.mass_m_star, dtype=np.float64),
            np.array(model.x0, dtype=np.float64),
            np.array(model.gravity, dtype=np.float64),
        )
        s4, s33 = np.zeros((1, 4)), np.zeros((1, 3, 3))
        kernel = entry(system_invariants, (*args, qq[0], vv[0], s4, s33, out[0]))
        for r in range(n):
            kernel(*args, qq[r], vv[r], s4, s33, out[r])
    return (
        out[:, 0].reshape(lead),
        out[:, 1].reshape(lead),
        out[:, 2:5].reshape((*lead, 3)),
        out[:, 5:8].reshape((*lead, 3)),
    )


# --------------------------------------------------------------------------- writer
def _row_shapes(model: Model) -> dict[str, tuple[tuple[int, ...], type]]:
    """Trailing shape and dtype of every per-row dataset (:data:`kynemapy.engine.rows.ROW_FIELDS`)."""
    shapes = row_layout(model.n_nodes, model.n_constraints).shapes
    return {f.name: (shapes[f.name], f.dtype) for f in ROW_FIELDS}


def _restart_shapes(model: Model) -> dict[str, tuple[tuple[int, ...], type]]:
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


def _attr_value(value: Any) -> Any:
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


def _write_at(dsid: h5py.h5d.DatasetID, offset: tuple[int, ...], arr: np.ndarray) -> None:
    """Write the C-contiguous ``arr`` (the dataset's dtype) into the dataset at ``offset``.

    h5py's low-level calls (hyperslab, ``DatasetID.write``): a quarter of the cost of
    ``ds[a:b] = arr``, which matters for the ~30 writes of every append.
    """
    fspace = dsid.get_space()
    fspace.select_hyperslab(offset, arr.shape)
    dsid.write(h5s.create_simple(arr.shape), fspace, arr)


class ResultWriter:
    """Write simulation results block by block into a crash-safe HDF5 file (see module docstring).

    Parameters
    ----------
    path : file to create (overwritten if it exists).
    model : the simulated model; stored under ``/model``.
    params : the step parameters; stored as attributes of ``/params``.
    block : rows per chunk of every per-row dataset (match the caller's block size).
    restart : keep the double-buffered ``/restart`` group (state and inputs of the last
        committed row).
    attrs : extra root attributes (str, numbers, arrays; dicts/lists are stored as JSON).
    defer_layout : create the file and its root attributes now, the groups and datasets
        on the first :meth:`append` (or :meth:`ensure_layout`, :meth:`close`): the run
        driver lets its writer thread do this while the first steps are computed.  Errors
        of the path or the attributes are raised here either way.

    Use as a context manager; :meth:`append` one block of rows at a time::

        with ResultWriter("run.h5", model, params, block=256) as w:
            w.append(rows, state=sim.state, inputs=sim.inputs)

    The file is in SWMR mode once its layout exists (when the constructor returns, unless
    ``defer_layout``): it may be read (``read(path)``) while the writer is alive, and
    survives the writer being killed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        model: Model,
        params: StepParameters,
        *,
        block: int = 256,
        restart: bool = True,
        attrs: Mapping[str, Any] | None = None,
        defer_layout: bool = False,
    ) -> None:
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise ValueError(f"ResultWriter: block must be an integer >= 1, got {block!r}")
        if not isinstance(params, StepParameters):
            raise TypeError(f"ResultWriter: params must be a kynemapy.StepParameters, got {type(params).__name__}")
        self.path = os.fspath(path)
        self.model = model
        self.params = params
        self.block = int(block)
        self.restart = bool(restart)
        self._shapes = _row_shapes(model)
        self._committed = 0
        self._last_step: int | None = None
        self._slot_info = np.full((2, 2), -1, dtype=np.int64)  # (rows, generation) per slot
        self._generation = 0
        self._laid_out = False
        f = h5py.File(self.path, "w", libver="latest")
        self._file: h5py.File | None = f
        try:
            self._create_attrs(f, attrs)
            if not defer_layout:
                self.ensure_layout()
        except BaseException:
            f.close()
            self._file = None
            raise

    # ------------------------------------------------------------------ setup
    def ensure_layout(self) -> None:
        """Create the groups and datasets and switch SWMR mode on, unless done already."""
        f = self._require_open()
        if self._laid_out:
            return
        self._create_layout(f)
        f.flush()
        f.swmr_mode = True
        self._datasets = {name: f[name] for name in ROW_NAMES}
        self._committed_ds = f["committed"]
        self._restart = (
            {name: f["restart"][name] for name in _restart_shapes(self.model)} | {"slot_info": f["restart/slot_info"]}
            if self.restart
            else None
        )
        self._laid_out = True

    def _create_attrs(self, f: h5py.File, attrs: Mapping[str, Any] | None) -> None:
        f.attrs["kynemapy_version"] = kynemapy.__version__
        f.attrs["created"] = datetime.datetime.now(datetime.UTC).isoformat()
        units = {k: u for k, u in UNITS.items() if self.restart or not k.startswith("restart/")}
        f.attrs["units"] = json.dumps(units, ensure_ascii=False)
        for key, value in (attrs or {}).items():
            if key in ("kynemapy_version", "created", "units"):
                raise ValueError(f"ResultWriter: attribute {key!r} is reserved")
            f.attrs[key] = _attr_value(value)

    def _create_layout(self, f: h5py.File) -> None:
        gm = f.create_group("model")
        for name in Model._fields:
            value = getattr(self.model, name)
            if isinstance(value, np.ndarray):
                gm.create_dataset(name, data=np.ascontiguousarray(value))
            else:
                gm.attrs[name] = int(value)
        gp = f.create_group("params")
        for fld in dataclasses.fields(StepParameters):
            gp.attrs[fld.name] = getattr(self.params, fld.name)
        gd = gp.create_group("derived")
        for name in ("alpha_m", "alpha_f", "gamma", "beta"):
            gd.attrs[name] = float(getattr(self.params, name))
        for name, (shape, dtype) in self._shapes.items():
            # A zero-length trailing axis (no constraints) cannot hold a chunk of extent >= 1
            # unless that axis is declared unlimited too.
            maxshape = (None, *(d if d > 0 else None for d in shape))
            chunks = (self.block, *(max(d, 1) for d in shape))
            f.create_dataset(name, shape=(0, *shape), maxshape=maxshape, chunks=chunks, dtype=dtype)
        f.create_dataset("committed", shape=(1,), dtype=np.int64, data=np.zeros(1, dtype=np.int64))
        if self.restart:
            gr = f.create_group("restart")
            for name, (shape, dtype) in _restart_shapes(self.model).items():
                gr.create_dataset(name, shape=(2, *shape), dtype=dtype, fillvalue=0)
            gr.create_dataset("slot_info", data=self._slot_info)

    # ---------------------------------------------------------------- context
    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush and close the file (idempotent).  Rows committed so far stay; nothing else is written
        (except the layout of a deferred file that never received a row: it closes as a valid, empty result)."""
        if self._file is not None:
            try:
                self.ensure_layout()
                self._file.flush()
            finally:
                self._file.close()
                self._file = None

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._file is None

    @property
    def committed(self) -> int:
        """Number of complete rows in the file."""
        return self._committed

    def _require_open(self) -> h5py.File:
        if self._file is None:
            raise ValueError(f"ResultWriter: {self.path} is closed")
        return self._file

    # ---------------------------------------------------------------- writing
    def _check_rows(self, rows: Mapping[str, Any]) -> tuple[int, dict[str, np.ndarray]]:
        unknown = sorted(set(rows) - set(ROW_NAMES))
        if unknown:
            raise KeyError(f"ResultWriter.append: unknown row fields {unknown}; known: {list(ROW_NAMES)}")
        missing = [k for k in _REQUIRED if k not in rows]
        if missing:
            raise KeyError(f"ResultWriter.append: missing row fields {missing}")
        derived = [k for k in DERIVED if k in rows]
        if derived and len(derived) != len(DERIVED):
            raise KeyError(
                f"ResultWriter.append: pass all of {list(DERIVED)} or none (they are then computed), got {derived}"
            )
        n = None
        out: dict[str, np.ndarray] = {}
        for name in ROW_NAMES:
            if name not in rows:
                continue
            shape, dtype = self._shapes[name]
            arr = np.asarray(rows[name])
            if arr.ndim != 1 + len(shape) or arr.shape[1:] != shape:
                raise ValueError(
                    f"ResultWriter.append: {name} must have shape (n, {', '.join(map(str, shape))}) "
                    f"with n the block length, got {arr.shape}".replace(", )", ")")
                )
            if n is None:
                n = arr.shape[0]
            elif arr.shape[0] != n:
                raise ValueError(f"ResultWriter.append: {name} has {arr.shape[0]} rows, expected {n} like the others")
            if np.dtype(dtype).kind == "i" and arr.dtype.kind not in "iub":
                if not np.array_equal(arr, np.round(arr)):
                    raise ValueError(f"ResultWriter.append: {name} must hold integers")
            out[name] = np.ascontiguousarray(arr, dtype=dtype)
        assert n is not None
        if not derived and n:
            ke, pe, p, ang = energy_and_momentum(self.model, out["q"], out["v"])
            computed = dict(zip(DERIVED, (ke, pe, p, ang), strict=True))
            out.update({name: np.ascontiguousarray(computed[name], dtype=self._shapes[name][1]) for name in DERIVED})
        return n, out

    def _write_restart_slot(self, state: State, inputs: Inputs) -> int:
        """Write ``state`` and ``inputs`` into the spare slot (no flush); return the slot index."""
        assert self._restart is not None
        shapes = _restart_shapes(self.model)
        values = dict(zip(_RESTART_STATE, state, strict=True)) | dict(zip(_RESTART_INPUTS, inputs, strict=True))
        arrays = {}
        for name, (shape, dtype) in shapes.items():
            arr = np.asarray(values[name])
            if arr.shape != shape:
                raise ValueError(f"ResultWriter restart: {name} must have shape {shape}, got {arr.shape}")
            arrays[name] = np.ascontiguousarray(arr, dtype=dtype)
        newest = int(np.argmax(self._slot_info[:, 1]))
        slot = 1 - newest if self._slot_info[newest, 1] >= 0 else 0
        for name, arr in arrays.items():
            if arr.size:
                _write_at(self._restart[name].id, (slot,) + (0,) * arr.ndim, arr.reshape(1, *arr.shape))
        return slot

    def _mark_slot(self, slot: int, rows: int) -> None:
        """Point restart ``slot`` at ``rows`` committed rows with a new generation (no flush)."""
        assert self._restart is not None
        self._generation += 1
        self._slot_info[slot] = (rows, self._generation)
        self._restart["slot_info"].id.write(h5s.ALL, h5s.ALL, self._slot_info)

    def _write_committed(self, rows: int) -> None:
        """Write the committed row count (no flush)."""
        self._committed_ds.id.write(h5s.ALL, h5s.ALL, np.array([rows], dtype=np.int64))

    def _write_rows(self, data: Mapping[str, np.ndarray], start: int) -> None:
        """Extend every per-row dataset to ``start + n`` rows and write ``data`` (n rows each) there (no flush)."""
        for name, arr in data.items():
            dsid = self._datasets[name].id
            dsid.set_extent((start + arr.shape[0], *arr.shape[1:]))
            if arr.size:
                _write_at(dsid, (start,) + (0,) * (arr.ndim - 1), arr)

    def append(self, rows: Mapping[str, Any], state: State | None = None, inputs: Inputs | None = None) -> int:
        """Append one block of rows, commit it and flush; return the committed row count.

        Parameters
        ----------
        rows : per-row arrays with a leading block axis n (all the same n): ``time`` (n,) [s],
            ``step`` (n,), ``q`` (n, N, 7), ``v, vd, a`` (n, N, 6), ``iterations`` (n,),
            ``error`` (n,), ``lam`` (n, C, 6), ``constraint_output`` (n, C, 3); optionally all of
            ``kinetic_energy, potential_energy`` (n,), ``linear_momentum, angular_momentum``
            (n, 3) (computed with :func:`energy_and_momentum` when left out).
        state, inputs : the state and inputs after the block's last row (``state.step[0]`` must
            equal ``rows["step"][-1]``); stored in ``/restart`` and committed together with
            the block.  Give both or neither; ignored without ``restart=True``.

        Each dataset is resized once.  The writes are ordered (data, restart pointer,
        ``committed``) with a flush after each, so a crash never commits partial data.
        """
        f = self._require_open()
        self.ensure_layout()
        if (state is None) != (inputs is None):
            raise ValueError("ResultWriter.append: give both state and inputs, or neither")
        n, data = self._check_rows(rows)
        if state is not None and self._restart is not None and n:
            if int(np.asarray(state.step)[0]) != int(data["step"][-1]):
                raise ValueError(
                    f"ResultWriter.append: the restart state is at step {int(np.asarray(state.step)[0])}, "
                    f"but the block's last row is step {int(data['step'][-1])}"
                )
        if n == 0:
            return self._committed
        start, stop = self._committed, self._committed + n
        self._write_rows(data, start)
        slot = None
        if state is not None and inputs is not None and self._restart is not None:
            slot = self._write_restart_slot(state, inputs)
        f.flush()  # phase 1: the rows (and the spare restart slot) are in the file
        if slot is not None:
            self._mark_slot(slot, stop)
            f.flush()  # phase 2: the slot is labelled with the row count it will belong to
        self._write_committed(stop)
        f.flush()  # phase 3: commit
        self._committed = stop
        self._last_step = int(data["step"][-1])
        return stop

    @classmethod
    def reopen(
        cls, path: str | os.PathLike[str], model: Model, params: StepParameters, *, block: int = 256
    ) -> ResultWriter:
        """Continue an existing result file (finished, or left by a killed writer).

        HDF5 will not reopen for writing a file whose SWMR writer was killed, so the
        committed rows, the restart data and the root attributes are copied into a new
        file that atomically replaces ``path``; rows beyond ``committed`` (a block being
        written when the writer died) are dropped.  ``model`` must be the file's model.
        """
        path = os.fspath(path)
        old = read(path)
        for name in Model._fields:
            mine, theirs = getattr(model, name), getattr(old.model, name)
            if not np.array_equal(np.asarray(mine), np.asarray(theirs)):
                raise ValueError(f"ResultWriter.reopen: {path} holds a different model ({name} differs)")
        reserved = {"kynemapy_version", "created", "units"}
        attrs = {k: v for k, v in old.attrs.items() if k not in reserved}
        tmp = path + ".resume-tmp"
        writer = cls(tmp, model, params, block=block, restart=old.restart is not None, attrs=attrs)
        try:
            n = old.committed
            for start in range(0, n, writer.block):
                stop = min(start + writer.block, n)
                rows = {name: getattr(old, name)[start:stop] for name in ROW_NAMES}
                if stop == n and old.restart is not None:
                    state, inputs = old.restart_state()
                    writer.append(rows, state=state, inputs=inputs)
                else:
                    writer.append(rows)
            os.replace(tmp, path)
        except BaseException:
            writer.close()
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        writer.path = path
        return writer

    def write_restart(self, state: State, inputs: Inputs) -> None:
        """Store ``state`` and ``inputs`` as the restart data of the last committed row, and flush.

        ``state.step[0]`` must equal the ``step`` of the last committed row.  Prefer passing
        ``state=``/``inputs=`` to :meth:`append`, which commits both together.
        """
        f = self._require_open()
        self.ensure_layout()
        if self._restart is None:
            raise ValueError("ResultWriter.write_restart: the file was created with restart=False")
        if self._last_step is not None and int(np.asarray(state.step)[0]) != self._last_step:
            raise ValueError(
                f"ResultWriter.write_restart: the state is at step {int(np.asarray(state.step)[0])}, "
                f"the last committed row is step {self._last_step}"
            )
        slot = self._write_restart_slot(state, inputs)
        f.flush()
        self._mark_slot(slot, self._committed)
        f.flush()


# --------------------------------------------------------------------------- reader
@dataclass
class Result:
    """Contents of a result file, truncated to the committed rows (n = ``committed``).

    Attributes
    ----------
    time : (n,) [s]; step, iterations : (n,) int64; error : (n,) final Newton error.
    q : (n, N, 7); v, vd, a : (n, N, 6); lam : (n, C, 6); constraint_output : (n, C, 3).
    kinetic_energy, potential_energy : (n,) [J]; linear_momentum : (n, 3) [kg m/s];
    angular_momentum : (n, 3) [kg m²/s] about the world origin.
    committed : n.
    model : the :class:`kynemapy.Model` (read-only arrays), equal to the written one.
    params : the :class:`kynemapy.StepParameters`.
    attrs : root attributes (``kynemapy_version``, ``created``, ``units`` and the user's).
    units : ``attrs["units"]`` decoded (dataset → unit).
    restart : the newest restart slot matching ``committed`` (keys of State and Inputs,
        plus ``committed``), or None (no restart group, or no restart written for the
        committed rows).
    closed_cleanly : False when the writer is still running or was killed (the file still
        carries HDF5's "open for writing" mark).
    path : the file.
    """

    time: np.ndarray
    step: np.ndarray
    q: np.ndarray
    v: np.ndarray
    vd: np.ndarray
    a: np.ndarray
    iterations: np.ndarray
    error: np.ndarray
    lam: np.ndarray
    constraint_output: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray
    committed: int
    model: Model
    params: StepParameters
    attrs: dict[str, Any]
    units: dict[str, str]
    restart: dict[str, np.ndarray] | None
    closed_cleanly: bool
    path: str

    def restart_state(self) -> tuple[State, Inputs]:
        """Fresh, writable :class:`State` and :class:`Inputs` built from :attr:`restart`."""
        if self.restart is None:
            raise ValueError(f"{self.path}: no restart data for the committed rows")
        state = State(*(np.array(self.restart[k], copy=True) for k in _RESTART_STATE))
        inputs = Inputs(*(np.array(self.restart[k], copy=True) for k in _RESTART_INPUTS))
        return state, inputs


# the reader's row attributes are the output row's fields, in order
if tuple(f.name for f in dataclasses.fields(Result))[: len(ROW_NAMES)] != ROW_NAMES:  # pragma: no cover
    raise ImportError("kynemapy.io.hdf5.Result: its first fields must be kynemapy.engine.rows.ROW_NAMES")


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def _convert(value: Any, type_name: Any) -> Any:
    """A StepParameters attribute back to its Python type (dataclass annotations are strings here)."""
    name = type_name if isinstance(type_name, str) else getattr(type_name, "__name__", "")
    value = _decode(value)
    if name == "bool":
        return bool(value)
    if name == "int":
        return int(value)
    if name == "float":
        return float(value)
    return value


def _open(path: str) -> tuple[h5py.File, bool]:
    """Open read-only; a file still marked as open by a (live or killed) SWMR writer needs ``swmr=True``.

    A file shorter than its superblock says is damaged (cut off by a copy, a transfer or a full
    disk; a killed writer never leaves one: it extends its superblock's end only after the data
    are flushed): it is refused at once, since a SWMR reader would retry every missing
    metadata block for minutes."""
    try:
        return h5py.File(path, "r"), True
    except OSError as plain_error:
        message = str(plain_error)
        if "truncated file" in message:
            detail = message[message.index("truncated file") :].rstrip(")")
            raise OSError(f"{path}: damaged HDF5 file, shorter than its header says ({detail})") from None
        try:
            return h5py.File(path, "r", swmr=True), False
        except OSError:
            raise plain_error from None


def read(path: str | os.PathLike[str]) -> Result:
    """Read a file written by :class:`ResultWriter` (finished, still being written, or killed).

    Every per-row array is truncated to the committed rows.
    """
    path = os.fspath(path)
    f, clean = _open(path)
    with f:
        committed = int(f["committed"][0])
        rows: dict[str, np.ndarray] = {}
        for name in ROW_NAMES:
            ds = f[name]
            if ds.shape[0] < committed:
                raise OSError(f"{path}: {name} holds {ds.shape[0]} rows, but {committed} are marked committed")
            rows[name] = ds[:committed]
        gm = f["model"]
        fields: dict[str, Any] = {}
        for name in Model._fields:
            if name in gm:
                ds = gm[name]
                fields[name] = freeze(ds[()], ds.dtype.type)
            elif name in gm.attrs:
                fields[name] = int(gm.attrs[name])
            else:
                raise OSError(f"{path}: /model lacks {name}")
        model = Model(**fields)
        gp = f["params"]
        params = StepParameters(
            **{
                fld.name: _convert(gp.attrs[fld.name], fld.type)
                for fld in dataclasses.fields(StepParameters)
                if fld.name in gp.attrs
            }
        )
        attrs = {k: _decode(v) for k, v in f.attrs.items()}
        units = json.loads(attrs["units"]) if "units" in attrs else {}
        restart = None
        if "restart" in f:
            gr = f["restart"]
            info = gr["slot_info"][()]
            match = [s for s in range(2) if info[s, 0] == committed and info[s, 1] >= 0]
            if match:
                slot = max(match, key=lambda s: info[s, 1])
                restart = {name: gr[name][slot] for name in _restart_shapes(model)}
                restart["committed"] = np.array(committed, dtype=np.int64)
    return Result(
        **rows,
        committed=committed,
        model=model,
        params=params,
        attrs=attrs,
        units=units,
        restart=restart,
        closed_cleanly=clean,
        path=path,
    )
