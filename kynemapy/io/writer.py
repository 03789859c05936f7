"""Writing result files: :class:`ResultWriter`, block by block, crash-safe (the layout and the order
of its writes: :mod:`kynemapy.io.hdf5`).
"""

from __future__ import annotations

import datetime
import json
import os
import socket
from collections.abc import Mapping
from typing import Any

import h5py
import numpy as np
from h5py import h5s

import kynemapy
from kynemapy.engine.data import Inputs, State
from kynemapy.engine.energies import row_invariants
from kynemapy.engine.params import StepParameters
from kynemapy.engine.rows import DERIVED, ROW_NAMES
from kynemapy.io.checksums import DIGEST_ALGORITHM, SLOT_ALGORITHM, digest, slot_digest
from kynemapy.io.layout import (
    REQUIRED,
    RESERVED,
    RESTART_INPUTS,
    RESTART_STATE,
    STEP_CONTROL_FIELDS,
    UNITS,
    attr_value,
    extra_columns,
    extra_shapes,
    extra_units,
    group_attribute,
    group_columns,
    group_shapes,
    memory_units,
    memory_widths,
    model_difference,
    restart_shapes,
    row_shapes,
    set_attr,
)
from kynemapy.io.lock import WriterLock
from kynemapy.io.memory import SlotMemory
from kynemapy.io.model_group import write_model_group
from kynemapy.io.paths import file_path
from kynemapy.io.reader import read
from kynemapy.model import Model
from kynemapy.model.registry import column_groups


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
    path : str | path-like
        File to create (overwritten if it exists).
    model : Model
        The simulated model; stored under ``/model``.
    params : StepParameters
        The step parameters; stored as attributes of ``/params``.
    block : int
        Rows per chunk of every per-row dataset (match the caller's block size).
    restart : bool
        Keep the double-buffered ``/restart`` group (state and inputs of the last
        committed row).
    attrs : Mapping[str, Any], optional
        Extra root attributes (str, numbers, arrays; dicts/lists are stored as JSON).
    defer_layout : bool
        Create the file and its root attributes now, the groups and datasets
        on the first :meth:`append` (or :meth:`ensure_layout`, :meth:`close`): the run
        driver lets its writer thread do this while the first steps are computed.  Errors
        of the path or the attributes are raised here either way.
    every : int, optional
        The spacing of the recorded steps (root attribute ``output_every``), or None
        (not recorded).  A resumed run continues with it (:func:`kynemapy.Simulation.run`).
    lock : WriterLock, optional
        The :class:`~kynemapy.io.lock.WriterLock` of ``path``, taken by the caller; None:
        taken here.  Released by :meth:`close`.
    step_control : bool, default False
        Add the group ``/step_control`` of per-row columns of a step-controlled run
        (:data:`kynemapy.io.layout.STEP_CONTROL_FIELDS`: ``step_size`` [s], ``accepted``,
        ``rejected``, ``estimated_error``); every :meth:`append` must then pass them, and they
        are checksummed with the rows.
    **groups : bool
        ``<group>=True`` adds a kind's group ``/<group>`` of per-row columns, those the model has
        (:func:`kynemapy.model.registry.column_groups`; contact's ``hard_contact=True``: the per-row
        impulses of a model with hard contact, :data:`kynemapy.io.layout.HARD_CONTACT_FIELDS`);
        every :meth:`append` must then pass them, checksummed with the rows.

    Raises
    ------
    kynemapy.io.lock.FileInUseError
        Another live process writes ``path``: it is neither truncated nor touched.

    Notes
    -----
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
        every: int | None = None,
        lock: WriterLock | None = None,
        step_control: bool = False,
        **groups: bool,
    ) -> None:
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise ValueError(f"ResultWriter: block must be an integer >= 1, got {block!r}")
        if not isinstance(params, StepParameters):
            raise TypeError(f"ResultWriter: params must be a kynemapy.StepParameters, got {type(params).__name__}")
        self.path = file_path(path, "ResultWriter: path")
        self.model = model
        self.params = params
        self.block = int(block)
        self.restart = bool(restart)
        self._shapes = row_shapes(model)
        #: the columns of ``/step_control`` (empty: none)
        self.step_control: tuple[str, ...] = tuple(STEP_CONTROL_FIELDS) if step_control else ()
        #: each kind's group: its columns' trailing shapes and dtypes (empty: none); also an
        #: attribute by the group's name (``writer.hard_contact``)
        self.groups: dict[str, dict[str, tuple[tuple[int, ...], type]]] = group_shapes(model, groups)
        #: every extra column, ``"<group>/<name>"`` -> (trailing shape, dtype), in the checksum records' order
        self._extra_shapes = extra_shapes(self.step_control, self.groups)
        self._committed = 0
        self._last_step: int | None = None
        self._slot_info = np.full((2, 2), -1, dtype=np.int64)  # (rows, generation) per slot
        #: the kinds' memories of a run kept with each restart slot (:mod:`kynemapy.io.memory`)
        self._memory = SlotMemory(memory_widths(model) if self.restart else {})
        self._generation = 0
        self._laid_out = False
        self._n_records = 0
        self._spaces: dict[tuple[str, int], tuple[Any, Any, Any]] = {}
        self._lock = lock if lock is not None else WriterLock(self.path, "ResultWriter")
        self._file: h5py.File | None = None
        try:
            f = self._file = h5py.File(self.path, "w", libver="latest")
            self._create_attrs(f, attrs)
            if every is not None:
                f.attrs["output_every"] = int(every)
            if not defer_layout:
                self.ensure_layout()
        except BaseException:
            if self._file is not None:
                self._file.close()
                self._file = None
            self._lock.release()
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
        self._extra = {name: f[name] for name in self._extra_shapes}
        self._committed_ds = f["committed"]
        self._checksums = f["checksums"]
        self._restart = (
            {name: f["restart"][name] for name in restart_shapes(self.model)}
            | {
                "slot_info": f["restart/slot_info"],
                "slot_crc": f["restart/slot_crc"],
            }
            if self.restart
            else None
        )
        if self.restart:
            self._memory.open(f["restart"])
        self._laid_out = True

    def _create_attrs(self, f: h5py.File, attrs: Mapping[str, Any] | None) -> None:
        set_attr(f.attrs, "kynemapy_version", kynemapy.__version__)
        set_attr(f.attrs, "created", datetime.datetime.now(datetime.UTC).isoformat())
        units = {k: u for k, u in UNITS.items() if self.restart or not k.startswith("restart/")}
        units |= extra_units(self._extra_shapes)
        units |= memory_units(self.model) if self.restart else {}
        set_attr(f.attrs, "units", json.dumps(units, ensure_ascii=False))
        # who writes the file: a reader that finds it still marked "open for writing" clears the
        # marks only when this process no longer runs
        f.attrs["writer_pid"] = os.getpid()
        set_attr(f.attrs, "writer_host", socket.gethostname())
        for key, value in (attrs or {}).items():
            if key in RESERVED:
                raise ValueError(f"ResultWriter: attribute {key!r} is reserved")
            set_attr(f.attrs, key, attr_value(value))

    def _create_layout(self, f: h5py.File) -> None:
        write_model_group(f, self.model, self.params)
        # the rows' datasets, then the extra columns' (their groups made with their first column)
        for name, (shape, dtype) in (self._shapes | self._extra_shapes).items():
            # A zero-length trailing axis (no constraints) cannot hold a chunk of extent >= 1
            # unless that axis is declared unlimited too.
            maxshape = (None, *(d if d > 0 else None for d in shape))
            chunks = (self.block, *(max(d, 1) for d in shape))
            f.create_dataset(name, shape=(0, *shape), maxshape=maxshape, chunks=chunks, dtype=dtype)
        extra = list(self._extra_shapes)
        width = 2 + len(ROW_NAMES) + len(extra)
        ck = f.create_dataset("checksums", shape=(0, width), maxshape=(None, width), chunks=(64, width), dtype=np.int64)
        set_attr(ck.attrs, "columns", json.dumps(["first_row", "stop_row", *ROW_NAMES, *extra]))
        set_attr(ck.attrs, "algorithm", DIGEST_ALGORITHM)
        f.create_dataset("committed", shape=(1,), dtype=np.int64, data=np.zeros(1, dtype=np.int64))
        f.create_dataset("closed", shape=(1,), dtype=np.int64, data=np.zeros(1, dtype=np.int64))
        if self.restart:
            gr = f.create_group("restart")
            for name, (shape, dtype) in restart_shapes(self.model).items():
                gr.create_dataset(name, shape=(2, *shape), dtype=dtype, fillvalue=0)
            gr.create_dataset("slot_info", data=self._slot_info)
            sc = gr.create_dataset("slot_crc", shape=(2,), dtype=np.int64, data=np.full(2, -1, dtype=np.int64))
            set_attr(sc.attrs, "algorithm", SLOT_ALGORITHM)
            self._memory.create(gr)  # the kinds' memories of a run (none: nothing)

    __getattr__ = group_attribute  # a kind's group by its name (``writer.hard_contact``): :attr:`groups`' entry

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
                self._file["closed"].id.write(h5s.ALL, h5s.ALL, np.ones(1, dtype=np.int64))
                self._file.flush()
            finally:
                try:
                    self._file.close()
                finally:
                    self._file = None
                    self._lock.release()

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
        missing = [k for k in REQUIRED if k not in rows]
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
            computed = row_invariants(self.model, out["q"], out["v"])
            out.update({name: np.ascontiguousarray(computed[name], dtype=self._shapes[name][1]) for name in DERIVED})
        return n, out

    def _write_restart_slot(self, state: State, inputs: Inputs, memory: Mapping[str, Any] | None = None) -> int:
        """Write ``state``, ``inputs`` and the kinds' ``memory`` into the spare slot (no flush);
        return the slot index."""
        assert self._restart is not None
        shapes = restart_shapes(self.model)
        values = dict(zip(RESTART_STATE, state, strict=True)) | dict(zip(RESTART_INPUTS, inputs, strict=True))
        arrays = {}
        for name, (shape, dtype) in shapes.items():
            arr = np.asarray(values[name])
            if arr.shape != shape:
                raise ValueError(f"ResultWriter restart: {name} must have shape {shape}, got {arr.shape}")
            arrays[name] = np.ascontiguousarray(arr, dtype=dtype)
        newest = int(np.argmax(self._slot_info[:, 1]))
        slot = 1 - newest if self._slot_info[newest, 1] >= 0 else 0
        arrays["slot_crc"] = np.array([slot_digest(arrays)], dtype=np.int64)
        for name, arr in arrays.items():
            if arr.size:
                dsid, mspace, fspace = self._slot_spaces(name, slot, arr.shape)
                dsid.write(mspace, fspace, arr)
        self._memory.write(slot, memory)
        return slot

    def _slot_spaces(self, name: str, slot: int, shape: tuple[int, ...]) -> tuple[Any, Any, Any]:
        """Dataset id, memory and file dataspace of one restart array's slot (made once: the slot
        datasets never change extent, and an append writes 14 of them)."""
        key = (name, slot)
        spaces = self._spaces.get(key)
        if spaces is None:
            assert self._restart is not None
            dsid = self._restart[name].id
            fspace = dsid.get_space()
            count = (1, *shape) if name != "slot_crc" else (1,)
            fspace.select_hyperslab((slot,) + (0,) * (len(count) - 1), count)
            spaces = self._spaces[key] = (dsid, h5s.create_simple(shape), fspace)
        return spaces

    def _mark_slot(self, slot: int, rows: int) -> None:
        """Point restart ``slot`` at ``rows`` committed rows with a new generation (no flush)."""
        assert self._restart is not None
        self._generation += 1
        self._slot_info[slot] = (rows, self._generation)
        self._restart["slot_info"].id.write(h5s.ALL, h5s.ALL, self._slot_info)

    def _write_committed(self, rows: int) -> None:
        """Write the committed row count (no flush)."""
        self._committed_ds.id.write(h5s.ALL, h5s.ALL, np.array([rows], dtype=np.int64))

    def _write_rows(self, data: Mapping[str, np.ndarray], start: int, extra: Mapping[str, np.ndarray]) -> None:
        """Extend every per-row dataset to ``start + n`` rows and write ``data`` (n rows each) there,
        the extra columns ``extra`` (:func:`extra_shapes`), and the block's checksum record (no flush)."""
        record = np.zeros((1, 2 + len(ROW_NAMES) + len(self._extra_shapes)), dtype=np.int64)
        # a block that is exactly one chunk goes to the file as it is (H5Dwrite_chunk): no copy
        # into HDF5's chunk cache and out of it at the flush (the usual case: the run driver's
        # buffers are chunk-sized and chunk-aligned)
        whole = start % self.block == 0 and data["time"].shape[0] == self.block
        for k, name in enumerate(ROW_NAMES):
            arr = data[name]
            dsid = self._datasets[name].id
            dsid.set_extent((start + arr.shape[0], *arr.shape[1:]))
            if arr.size:
                offset = (start,) + (0,) * (arr.ndim - 1)
                if whole:
                    dsid.write_direct_chunk(offset, arr)
                else:
                    _write_at(dsid, offset, arr)
            record[0, 2 + k] = digest(arr)
        for k, name in enumerate(self._extra_shapes):
            arr = extra[name]
            dsid = self._extra[name].id
            dsid.set_extent((start + arr.shape[0], *arr.shape[1:]))
            if arr.size:
                _write_at(dsid, (start,) + (0,) * (arr.ndim - 1), arr)
            record[0, 2 + len(ROW_NAMES) + k] = digest(arr)
        record[0, :2] = start, start + data["time"].shape[0]
        ck = self._checksums.id
        m = self._n_records
        ck.set_extent((m + 1, record.shape[1]))
        _write_at(ck, (m, 0), record)
        self._n_records = m + 1

    def append(
        self,
        rows: Mapping[str, Any],
        state: State | None = None,
        inputs: Inputs | None = None,
        step_control: Mapping[str, Any] | None = None,
        memory: Mapping[str, Any] | None = None,
        **groups: Mapping[str, Any] | None,
    ) -> int:
        """Append one block of rows, commit it and flush; return the committed row count.

        Parameters
        ----------
        rows : Mapping[str, Any]
            Per-row arrays with a leading block axis n (all the same n): ``time`` (n,) [s],
            ``step`` (n,), ``q`` (n, N, 7), ``v, vd, a`` (n, N, 6), ``iterations`` (n,),
            ``error`` (n,), ``lam`` (n, C, 6), ``constraint_output`` (n, C, 3); optionally all of
            ``kinetic_energy, potential_energy`` (n,), ``linear_momentum, angular_momentum``
            (n, 3) (computed with :func:`energy_and_momentum` when left out).
        state, inputs : State, optional
            The state and inputs after the block's last row (``state.step[0]`` must
            equal ``rows["step"][-1]``); stored in ``/restart`` and committed together with
            the block.  Give both or neither; ignored without ``restart=True``.
        step_control : Mapping[str, Any], optional
            The ``/step_control`` columns of the block, (n,) each (required when the file was
            created with ``step_control=True``, refused otherwise).
        memory : Mapping[str, Any], optional
            The kinds' memories of the run at ``state`` (name -> (R, width) rows, contact's
            ``touching``: :mod:`kynemapy.io.memory`), kept with it; one left out: not kept.
        **groups : Mapping[str, Any], optional
            ``<group>=`` the block's columns of a kind's group (``hard_contact=``), (n, ...) each as
            :attr:`groups` gives them (required when the file has them, refused otherwise).

        Notes
        -----
        Each dataset is resized once.  The writes are ordered (data, restart pointer,
        ``committed``) with a flush after each, so a crash never commits partial data.
        """
        f = self._require_open()
        self.ensure_layout()
        if (state is None) != (inputs is None):
            raise ValueError("ResultWriter.append: give both state and inputs, or neither")
        n, data = self._check_rows(rows)
        extra = extra_columns(self.path, "step_control", self._extra_shapes, step_control, n)
        extra |= group_columns(self.path, self._extra_shapes, groups, n)
        if state is not None and self._restart is not None and n:
            if int(np.asarray(state.step)[0]) != int(data["step"][-1]):
                raise ValueError(
                    f"ResultWriter.append: the restart state is at step {int(np.asarray(state.step)[0])}, "
                    f"but the block's last row is step {int(data['step'][-1])}"
                )
        if n == 0:
            return self._committed
        start, stop = self._committed, self._committed + n
        self._write_rows(data, start, extra)
        slot = None
        if state is not None and inputs is not None and self._restart is not None:
            slot = self._write_restart_slot(state, inputs, memory)
        if slot is not None:
            # labelled with the row count it will belong to: ignored by readers until `committed` says so
            self._mark_slot(slot, stop)
        f.flush()  # phase 1: the rows, the spare restart slot and its label are in the file
        self._write_committed(stop)
        f.flush()  # phase 2: commit
        self._committed = stop
        self._last_step = int(data["step"][-1])
        return stop

    @classmethod
    def reopen(
        cls,
        path: str | os.PathLike[str],
        model: Model,
        params: StepParameters,
        *,
        block: int = 256,
        lock: WriterLock | None = None,
    ) -> ResultWriter:
        """Continue an existing result file (finished, or left by a killed writer).

        HDF5 will not reopen for writing a file whose SWMR writer was killed, so the
        committed rows, the restart data and the root attributes are copied into a new
        file that atomically replaces ``path``; rows beyond ``committed`` (a block being
        written when the writer died) are dropped.

        Parameters
        ----------
        path : str or os.PathLike
            The result file to continue.
        model : Model
            The file's model (a different one is refused).
        params : StepParameters
            The step parameters the continued run uses (stored in the new file).
        block : int, default 256
            Rows per chunk of every per-row dataset, as for :class:`ResultWriter` (>= 1).
        lock : WriterLock or None, default None
            The caller's :class:`~kynemapy.io.lock.WriterLock` of ``path`` (None: taken
            here).

        Returns
        -------
        ResultWriter
            An open writer of ``path``, positioned after its last committed row.

        Raises
        ------
        kynemapy.io.lock.FileInUseError
            Another live process writes the file.
        ValueError
            The file holds a different model.
        """
        path = file_path(path, "ResultWriter.reopen: path")
        if lock is None:
            lock = WriterLock(path, "ResultWriter.reopen")
        try:
            old = read(path)
            difference = model_difference(old.model, model)
            if difference is not None:
                raise ValueError(f"ResultWriter.reopen: {path} holds a different model: {difference}")
        except BaseException:
            lock.release()
            raise
        attrs = {k: v for k, v in old.attrs.items() if k not in RESERVED}
        every = old.attrs.get("output_every")
        tmp = path + ".resume-tmp"
        writer = cls(
            tmp,
            model,
            params,
            block=block,
            restart=old.restart is not None,
            attrs=attrs,
            every=None if every is None else int(every),
            lock=lock,
            step_control=old.step_control is not None,
            **{group: group in old.groups for group in column_groups()},
        )
        try:
            n = old.committed
            for start in range(0, n, writer.block):
                stop = min(start + writer.block, n)
                rows = {name: getattr(old, name)[start:stop] for name in ROW_NAMES}
                groups = {"step_control": old.step_control, **old.groups}  # /step_control, the kinds' groups
                extra = {g: None if c is None else {k: a[start:stop] for k, a in c.items()} for g, c in groups.items()}
                if stop == n and old.restart is not None:
                    state, inputs = old.restart_state()
                    writer.append(rows, state=state, inputs=inputs, memory=old.restart_memory(), **extra)
                else:
                    writer.append(rows, **extra)
            os.replace(tmp, path)
        except BaseException:
            writer.close()
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        writer.path = path
        return writer

    def write_restart(self, state: State, inputs: Inputs, memory: Mapping[str, Any] | None = None) -> None:
        """Store ``state`` and ``inputs`` as the restart data of the last committed row, and flush.

        Prefer passing ``state=``/``inputs=`` to :meth:`append`, which commits both together.

        Parameters
        ----------
        state : State
            The state at the last committed row: ``state.step[0]`` must equal that row's
            ``step``.
        inputs : Inputs
            The loads and constraint inputs held at that state.
        memory : Mapping[str, Any], optional
            The kinds' memories of the run at that state, as for :meth:`append`.

        Raises
        ------
        ValueError
            The file was created with ``restart=False``, or ``state`` is at another step.
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
        slot = self._write_restart_slot(state, inputs, memory)
        f.flush()
        self._mark_slot(slot, self._committed)
        f.flush()


__all__ = [
    "ResultWriter",
]
