"""Crash-safe HDF5 result files: :class:`ResultWriter`, :func:`read` and :func:`energy_and_momentum`.

File layout (N = n_nodes, C = n_constraints, n = committed rows; SI units):

``/`` attributes
    ``kynemapy_version``, ``created`` (ISO 8601, UTC), ``units`` (JSON object
    dataset → unit), ``writer_pid`` and ``writer_host`` (the writing process),
    ``output_every`` (the spacing of the recorded steps, written by the run driver; a resumed
    run keeps it) and the user's ``attrs``.
``/model``
    every field of :class:`kynemapy.Model`: arrays as datasets (exact dtype and
    shape; attribute ``crc32``: CRC-32 of the array's bytes), integer counts as attributes.
    The beams' element connectivity is ``/model/beam_node`` (elements × nodes, −1 padded),
    with the beam tables beside it (files written before beams existed lack them: read as a
    model without beams).
``/params``
    the :class:`kynemapy.StepParameters` fields as attributes; ``/params/derived``
    holds α_m, α_f, γ, β (informational).
time-series datasets (chunked ``block`` rows, unlimited first axis)
    one per field of the output row, :data:`kynemapy.engine.rows.ROW_FIELDS` (the one
    definition of their names, shapes, dtypes and units): ``time`` (n,) [s], ``step``
    (n,) int64, ``q`` (n, N, 7), ``v``, ``vd``, ``a`` (n, N, 6), ``iterations`` (n,)
    int64, ``error`` (n,) (final Newton error), ``lam`` (n, C, 6),
    ``constraint_output`` (n, C, 3), ``kinetic_energy`` (n,) [J], ``potential_energy``
    (n,) [J], ``strain_energy`` (n,) [J] (beams and springs; computed by :func:`read` for
    files written before it existed), ``linear_momentum`` (n, 3) [kg m/s],
    ``angular_momentum`` (n, 3) [kg m²/s] (about the world origin).
``/checksums`` (m, 2 + F) int64
    one record per appended block: first row, stop row, then the XXH3-64 digest
    (``xxhash.xxh3_64_intdigest``, seed 0, stored as the int64 with the same 64 bits) of
    each of the F per-row datasets' rows of that block (their bytes in C order, in the order
    of ``ROW_FIELDS``; attribute ``columns`` names them, attribute ``algorithm`` the digest:
    earlier files hold CRC-32s, ``zlib.crc32``, and say so there).  The records of the
    committed rows tile rows ``0 .. committed - 1``.
``/committed`` (1,) int64
    number of complete rows.  Rows beyond it (a block being written when the
    writer died) are ignored by :func:`read`.
``/closed`` (1,) int64
    1 once the writer closed the file, 0 while it writes (or after it was killed).
``/restart`` (with ``restart=True``)
    the full :class:`kynemapy.State` (``q, q_prev, q_delta, v, vd, a, x, lam,
    constraint_output, time, step``) and :class:`kynemapy.Inputs` (``f,
    constraint_input``) of the last committed row, **double-buffered**: every
    array has a leading slot axis of length 2 (e.g. ``/restart/q`` is (2, N, 7)),
    and ``/restart/slot_info`` (2, 2) int64 holds, per slot, (committed row count
    the slot belongs to, write generation); ``/restart/slot_crc`` (2,) the digest of each
    slot's arrays (State's fields, then Inputs', in order; the XXH3-64 of their bytes run
    together, as int64, named by the attribute ``algorithm``; CRC-32 in files without it),
    written with the slot.  A write always goes to the slot not holding the newest restart,
    so a crash in the middle of one never damages the other; :func:`read` returns the newest
    slot whose row count equals ``committed``.

Crash safety: the file is created with ``libver="latest"``, every group and
dataset is created up front (at construction, or with ``defer_layout=True`` before
the first append), then SWMR (single-writer/multiple-reader) mode is switched on.
From then on HDF5 keeps the on-disk metadata consistent at every moment, so a
process killed with SIGKILL leaves a file that opens (read-only, ``swmr=True``)
with everything up to the last ``flush()``.  Each :meth:`ResultWriter.append`
writes in two ordered phases, each ended by a flush:

1. resize every dataset once and write the block and its checksum record, the spare
   restart slot and its checksum, and mark that slot as belonging to the new row count;
2. write ``committed``.

So ``committed`` on disk never counts a row whose data is not on disk.  A restart slot
is used only when its row count equals ``committed``, so the spare slot may be marked in
the flush that writes it: until phase 2 the file's ``committed`` is the old count, whose
slot is the other one, untouched.  (Until 2.x the mark had a flush of its own: three
flushes an append, a third of the writer's HDF5 time.)  (This protects
against the *process* dying; surviving an operating-system crash or power loss
would also need fsync, which HDF5's flush does not do.)

One writer per file: a :class:`ResultWriter` holds the lock of :mod:`kynemapy.io.lock` (an
exclusive ``flock`` on ``<path>.lock``, naming its process) from before it creates or
replaces the file until :meth:`ResultWriter.close`, so a file a live process writes is never
overwritten or resumed; a killed writer's lock goes with its process.

A killed writer leaves its file marked "open for writing" (HDF5's superblock status
flags), which only a SWMR reader accepts.  :func:`read` (and so ``Simulation.restart``,
``kynemapy info``, ``--resume``) clears those marks when the writer is gone
(``writer_pid`` no longer runs on this host), as ``h5clear -s`` would, and warns
(:class:`ResultFileWarning`); afterwards any HDF5 reader (h5py, h5dump, ParaView) opens
the file.  The marks of a live writer are left alone.

Checksums rather than HDF5's Fletcher-32 filter: Fletcher-32 passes a chunk whose bytes
are all zeros (a copy whose end never arrived), cannot say which rows of a failing
dataset are bad, and costs a filter pipeline per chunk.  XXH3-64 rather than CRC-32 (what
earlier files hold, still checked): 96 GB/s against 7 GB/s here, which made the checksums of
a run streaming every step 0.4 ms per 65 536 heavy-top rows instead of 6 ms.  A file whose
checksums name an algorithm this version does not know is refused, never read unchecked.
Every :func:`read` checks every committed row, the model tables and the restart slot it
returns; a failure raises :class:`ResultFileError` naming the datasets and rows and the rows
still intact (``read(path, salvage=True)`` returns those).  Files written before the
checksums are read unchecked.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import os
import socket
import warnings
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np
import xxhash
from h5py import h5s

import kynemapy
from kynemapy.engine.data import Inputs, State
from kynemapy.engine.invariants import system_invariants
from kynemapy.engine.lookup import entry
from kynemapy.engine.params import StepParameters
from kynemapy.engine.rows import DERIVED, ROW_FIELDS, ROW_NAMES, row_layout
from kynemapy.io.lock import WriterLock
from kynemapy.io.paths import file_path
from kynemapy.math.rotations import world_pose
from kynemapy.model import Model, freeze, no_beams

__all__ = [
    "UNITS",
    "Result",
    "ResultFileError",
    "ResultFileWarning",
    "ResultWriter",
    "energy_and_momentum",
    "model_difference",
    "read",
    "row_invariants",
]

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
    """Kinetic and potential energy, linear and angular momentum of the masses and beams, per row.

    The compiled kernel of the output rows (:mod:`kynemapy.engine.invariants`), one state at a
    time.  For each mass element on node i: ``M = diag(R,R) M* diag(R,R)ᵀ`` with
    ``R = R(q_rot ⊗ r0)``, ``m = M[0,0]`` and the centre-of-mass offset
    ``η = (M[5,1], −M[5,0], M[4,0]) / m``.  Then, summed over masses:

    * kinetic energy ``T = ½ vᵀ M v`` [J];
    * potential energy ``V = −m g·(X + u + η)`` [J] (zero at the world origin);
    * linear momentum ``p = (M v)[0:3] = m (u̇ + ω × η)`` [kg m/s];
    * angular momentum about the world origin ``L = (X + u) × (M v)[0:3] + (M v)[3:6]``
      [kg m²/s], world frame.

    Beams add the same integrands per unit length over their quadrature points.  Springs
    (massless) and constraints carry neither energy nor momentum here; the strain energy of
    beams and springs is the output rows' ``strain_energy`` (:func:`row_invariants`).

    Parameters
    ----------
    model : the model (masses, beams, reference positions ``x0``, ``gravity``).
    q : (..., N, 7) displacements (u [m], rotation quaternion).
    v : (..., N, 6) velocities (u̇ [m/s], ω [rad/s]), inertial frame.

    Returns
    -------
    ke : (...,) [J]; pe : (...,) [J]; p : (..., 3) [kg m/s]; L : (..., 3) [kg m²/s].
    """
    out = row_invariants(model, q, v)
    return out["kinetic_energy"], out["potential_energy"], out["linear_momentum"], out["angular_momentum"]


def row_invariants(model: Model, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """The derived fields of output rows (:data:`kynemapy.engine.rows.DERIVED`) at states q, v.

    ``kinetic_energy``, ``potential_energy``, ``strain_energy`` (...,) [J], ``linear_momentum``
    (..., 3) [kg m/s], ``angular_momentum`` (..., 3) [kg m²/s], as the run's writer computes them
    (:func:`kynemapy.engine.invariants.fill_invariants`); q (..., N, 7), v (..., N, 6).
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
    out = np.zeros((n, 9))  # ke, pe, p (3), L (3), strain
    if n and (model.n_beams or model.n_springs):
        # the writer's kernel on rows of a workspace's layout (beams and springs need its tables)
        from kynemapy.engine.api import fill_rows, initial_state  # the engine on first use only
        from kynemapy.engine.data import new_workspace

        workspace = new_workspace(model, 1)
        layout = workspace.row_layout
        data = workspace.data(*initial_state(model))
        rows = np.zeros((min(n, 4096), layout.width))
        oq, ov = layout.offsets["q"], layout.offsets["v"]
        for start in range(0, n, rows.shape[0]):
            stop = min(n, start + rows.shape[0])
            block = rows[: stop - start]
            block[:, oq : oq + 7 * nn] = qq[start:stop].reshape(stop - start, -1)
            block[:, ov : ov + 6 * nn] = vv[start:stop].reshape(stop - start, -1)
            fill_rows(data, block)
            for k, name in enumerate(("kinetic_energy", "potential_energy")):
                out[start:stop, k] = block[:, layout.offsets[name]]
            out[start:stop, 2:5] = block[:, layout.offsets["linear_momentum"] + np.arange(3)]
            out[start:stop, 5:8] = block[:, layout.offsets["angular_momentum"] + np.arange(3)]
            out[start:stop, 8] = block[:, layout.offsets["strain_energy"]]
    elif n and model.mass_node.shape[0]:
        # writable copies: the kernel is compiled (and cached) for plain arrays
        args = (
            np.array(model.mass_node, dtype=np.int64),
            np.array(model.mass_m_star, dtype=np.float64),
            np.array(model.x0, dtype=np.float64),
            np.array(model.gravity, dtype=np.float64),
        )
        s4, s33 = np.zeros((1, 4)), np.zeros((1, 3, 3))
        kernel = entry(system_invariants, (*args, qq[0], vv[0], s4, s33, out[0, :8]))
        for r in range(n):
            kernel(*args, qq[r], vv[r], s4, s33, out[r, :8])
    return {
        "kinetic_energy": out[:, 0].reshape(lead),
        "potential_energy": out[:, 1].reshape(lead),
        "strain_energy": out[:, 8].reshape(lead),
        "linear_momentum": out[:, 2:5].reshape((*lead, 3)),
        "angular_momentum": out[:, 5:8].reshape((*lead, 3)),
    }


# --------------------------------------------------------------------------- writer
def model_difference(theirs: Model, mine: Model) -> str | None:
    """The first difference between two models as a sentence (``theirs``: a file's), or None if equal."""
    for name in Model._fields:
        a, b = getattr(theirs, name), getattr(mine, name)
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


#: ``/checksums`` attribute ``algorithm`` of the files this version writes
DIGEST_ALGORITHM = (
    "XXH3-64 (xxhash.xxh3_64_intdigest, seed 0) of each dataset's rows first_row .. stop_row - 1, "
    "C order, stored as the int64 with the same bits"
)
#: ... and of earlier files (still read and checked)
CRC_ALGORITHM = "CRC-32 (zlib.crc32) of each dataset's rows first_row .. stop_row - 1, C order"
#: ``/restart/slot_crc`` attribute ``algorithm`` (files without it hold CRC-32s)
SLOT_ALGORITHM = "XXH3-64 (xxhash.xxh3_64) of the slot's arrays' bytes, State's fields then Inputs', as int64"

_TWO64 = 1 << 64


def _crc(arr: np.ndarray, start: int = 0) -> int:
    """CRC-32 (zlib) of an array's bytes in C order, continuing ``start``."""
    return zlib.crc32(np.ascontiguousarray(arr).reshape(-1).view(np.uint8), start)


def _signed(digest: int) -> int:
    """An unsigned 64-bit digest as the int64 with the same bits (what an int64 dataset stores)."""
    return digest - _TWO64 if digest >= 1 << 63 else digest


def _digest(arr: np.ndarray) -> int:
    """XXH3-64 (seed 0) of an array's bytes in C order, as int64 (:data:`DIGEST_ALGORITHM`)."""
    return _signed(xxhash.xxh3_64_intdigest(np.ascontiguousarray(arr)))


def _block_check(algorithm: str) -> Callable[[np.ndarray], int] | None:
    """The function computing a ``/checksums`` record entry for a file's ``algorithm`` attribute
    (:func:`_digest` or :func:`_crc`), or None for an algorithm this version does not know."""
    if algorithm.startswith("XXH3-64"):
        return _digest
    if algorithm.startswith("CRC-32"):
        return _crc
    return None


def _unknown_algorithm(f: h5py.File, path: str, dataset: str, algorithm: str) -> ResultFileError:
    """The error for checksums (``dataset``) of an algorithm this version does not know."""
    writer = _decode(f.attrs.get("kynemapy_version"))
    return ResultFileError(
        f"{path}: its checksums (/{dataset}) are of an algorithm this kynemapy ({kynemapy.__version__}) does "
        f"not know ({algorithm!r}); read it with the version that wrote it ({writer})",
        path,
        [(dataset, None, None)],
        0,
    )


def _slot_digest(arrays: Mapping[str, np.ndarray], algorithm: str = SLOT_ALGORITHM) -> int:
    """Digest of one restart slot: its arrays in the order of State, then Inputs (XXH3-64 of
    their bytes run together as int64, or with ``algorithm`` "CRC-32" an earlier file's)."""
    names = (*_RESTART_STATE, *_RESTART_INPUTS)
    if algorithm.startswith("CRC-32"):
        crc = 0
        for name in names:
            crc = _crc(arrays[name], crc)
        return crc
    h = xxhash.xxh3_64()
    for name in names:
        h.update(np.ascontiguousarray(arrays[name]))
    return _signed(h.intdigest())


#: output-row fields added after result files were first written (an earlier file lacks them;
#: :func:`read` computes them from the file's states)
_ADDED_LATER = frozenset({"strain_energy"})

#: the model fields of a file written before beams existed
_NO_BEAMS: dict[str, Any] = {"n_beams": 0, **no_beams()}

#: root attributes the writer sets (not the user's)
_RESERVED = ("kynemapy_version", "created", "units", "writer_pid", "writer_host", "output_every")


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
    every : the spacing of the recorded steps (root attribute ``output_every``), or None
        (not recorded).  A resumed run continues with it (:func:`kynemapy.Simulation.run`).
    lock : the :class:`~kynemapy.io.lock.WriterLock` of ``path``, taken by the caller; None:
        taken here.  Released by :meth:`close`.

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
        self._shapes = _row_shapes(model)
        self._committed = 0
        self._last_step: int | None = None
        self._slot_info = np.full((2, 2), -1, dtype=np.int64)  # (rows, generation) per slot
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
        self._committed_ds = f["committed"]
        self._checksums = f["checksums"]
        self._restart = (
            {name: f["restart"][name] for name in _restart_shapes(self.model)}
            | {
                "slot_info": f["restart/slot_info"],
                "slot_crc": f["restart/slot_crc"],
            }
            if self.restart
            else None
        )
        self._laid_out = True

    def _create_attrs(self, f: h5py.File, attrs: Mapping[str, Any] | None) -> None:
        f.attrs["kynemapy_version"] = kynemapy.__version__
        f.attrs["created"] = datetime.datetime.now(datetime.UTC).isoformat()
        units = {k: u for k, u in UNITS.items() if self.restart or not k.startswith("restart/")}
        f.attrs["units"] = json.dumps(units, ensure_ascii=False)
        # who writes the file: a reader that finds it still marked "open for writing" clears the
        # marks only when this process no longer runs
        f.attrs["writer_pid"] = os.getpid()
        f.attrs["writer_host"] = socket.gethostname()
        for key, value in (attrs or {}).items():
            if key in _RESERVED:
                raise ValueError(f"ResultWriter: attribute {key!r} is reserved")
            f.attrs[key] = _attr_value(value)

    def _create_layout(self, f: h5py.File) -> None:
        gm = f.create_group("model")
        for name in Model._fields:
            value = getattr(self.model, name)
            if isinstance(value, np.ndarray):
                ds = gm.create_dataset(name, data=np.ascontiguousarray(value))
                ds.attrs["crc32"] = _crc(value)
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
        width = 2 + len(ROW_NAMES)
        ck = f.create_dataset("checksums", shape=(0, width), maxshape=(None, width), chunks=(64, width), dtype=np.int64)
        ck.attrs["columns"] = json.dumps(["first_row", "stop_row", *ROW_NAMES])
        ck.attrs["algorithm"] = DIGEST_ALGORITHM
        f.create_dataset("committed", shape=(1,), dtype=np.int64, data=np.zeros(1, dtype=np.int64))
        f.create_dataset("closed", shape=(1,), dtype=np.int64, data=np.zeros(1, dtype=np.int64))
        if self.restart:
            gr = f.create_group("restart")
            for name, (shape, dtype) in _restart_shapes(self.model).items():
                gr.create_dataset(name, shape=(2, *shape), dtype=dtype, fillvalue=0)
            gr.create_dataset("slot_info", data=self._slot_info)
            sc = gr.create_dataset("slot_crc", shape=(2,), dtype=np.int64, data=np.full(2, -1, dtype=np.int64))
            sc.attrs["algorithm"] = SLOT_ALGORITHM

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
            computed = row_invariants(self.model, out["q"], out["v"])
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
        arrays["slot_crc"] = np.array([_slot_digest(arrays)], dtype=np.int64)
        for name, arr in arrays.items():
            if arr.size:
                dsid, mspace, fspace = self._slot_spaces(name, slot, arr.shape)
                dsid.write(mspace, fspace, arr)
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

    def _write_rows(self, data: Mapping[str, np.ndarray], start: int) -> None:
        """Extend every per-row dataset to ``start + n`` rows and write ``data`` (n rows each) there,
        and the block's checksum record (no flush)."""
        record = np.zeros((1, 2 + len(ROW_NAMES)), dtype=np.int64)
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
            record[0, 2 + k] = _digest(arr)
        record[0, :2] = start, start + data["time"].shape[0]
        ck = self._checksums.id
        m = self._n_records
        ck.set_extent((m + 1, record.shape[1]))
        _write_at(ck, (m, 0), record)
        self._n_records = m + 1

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
        written when the writer died) are dropped.  ``model`` must be the file's model.
        ``lock``: the caller's :class:`~kynemapy.io.lock.WriterLock` of ``path`` (None: taken
        here); a file another live process writes is refused
        (:class:`~kynemapy.io.lock.FileInUseError`).
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
        attrs = {k: v for k, v in old.attrs.items() if k not in _RESERVED}
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
        )
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
    kinetic_energy, potential_energy, strain_energy : (n,) [J]; linear_momentum : (n, 3) [kg m/s];
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
    position, orientation : (n, N, 3) world positions [m] and (n, N, 4) world orientations
        (unit quaternions) of the nodes, computed from ``q`` and the model's ``x0``.
    missing_rows : ``(first_row, stop_row)`` ranges of the file's committed rows left out by
        ``read(path, salvage=True)`` because they fail their checksums (empty otherwise); then
        ``committed`` counts the rows returned, not the rows in the file.
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
    strain_energy: np.ndarray
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
    missing_rows: tuple[tuple[int, int], ...] = ()

    @property
    def position(self) -> np.ndarray:
        """(n, N, 3) world position of every node in every row, X + u [m] (MuJoCo's ``xpos``)."""
        return world_pose(self.model.x0, self.q)[0]

    @property
    def orientation(self) -> np.ndarray:
        """(n, N, 4) world orientation of every node in every row, r ⊗ r0, unit quaternions
        (w, x, y, z) (MuJoCo's ``xquat``); :func:`kynemapy.rotation_matrices` turns them into
        (n, N, 3, 3) matrices whose columns are the bodies' axes in world coordinates."""
        return world_pose(self.model.x0, self.q)[1]

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


# ------------------------------------------------------------------ the file's first bytes
_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_M32 = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def _lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 ``hashlittle``: the checksum HDF5 puts on its superblock (and metadata)."""
    length = len(data)
    a = b = c = (0xDEADBEEF + length + initval) & _M32
    k = 0
    while length > 12:
        a = (a + int.from_bytes(data[k : k + 4], "little")) & _M32
        b = (b + int.from_bytes(data[k + 4 : k + 8], "little")) & _M32
        c = (c + int.from_bytes(data[k + 8 : k + 12], "little")) & _M32
        a = (a - c) & _M32 ^ _rot(c, 4)
        c = (c + b) & _M32
        b = (b - a) & _M32 ^ _rot(a, 6)
        a = (a + c) & _M32
        c = (c - b) & _M32 ^ _rot(b, 8)
        b = (b + a) & _M32
        a = (a - c) & _M32 ^ _rot(c, 16)
        c = (c + b) & _M32
        b = (b - a) & _M32 ^ _rot(a, 19)
        a = (a + c) & _M32
        c = (c - b) & _M32 ^ _rot(b, 4)
        b = (b + a) & _M32
        length -= 12
        k += 12
    if length == 0:
        return c
    tail = data[k : k + length] + bytes(12 - length)
    a = (a + int.from_bytes(tail[0:4], "little")) & _M32
    b = (b + int.from_bytes(tail[4:8], "little")) & _M32
    c = (c + int.from_bytes(tail[8:12], "little")) & _M32
    c = (c ^ b) - _rot(b, 14) & _M32
    a = (a ^ c) - _rot(c, 11) & _M32
    b = (b ^ a) - _rot(a, 25) & _M32
    c = (c ^ b) - _rot(b, 16) & _M32
    a = (a ^ c) - _rot(c, 4) & _M32
    b = (b ^ a) - _rot(a, 14) & _M32
    c = (c ^ b) - _rot(b, 24) & _M32
    return c


@dataclass
class _Superblock:
    """What kynemapy needs of an HDF5 version 2/3 superblock (the format of ``libver="latest"``)."""

    header: bytes  # its 48 bytes
    flags: int  # file consistency flags: bit 0 open for writing, bit 2 open for SWMR writing
    eof: int  # end-of-file address: the size the file must have [bytes]

    def cleared(self) -> bytes:
        """The superblock with its consistency flags cleared and its checksum renewed (what h5clear does)."""
        head = bytearray(self.header[:44])
        head[11] = 0
        return bytes(head) + _lookup3(bytes(head)).to_bytes(4, "little")


class ResultFileError(OSError):
    """A file that :func:`read` cannot return as it is: not a kynemapy result file, cut short, or damaged.

    Attributes
    ----------
    path : the file.
    problems : ``(dataset, first_row, stop_row)`` of every damaged range found (rows None: the
        dataset as a whole).
    intact_rows : how many rows passed their checksums (every dataset of the row) and can be
        had with ``read(path, salvage=True)`` (0: none; None: not a result file).
    position, orientation : (n, N, 3) world positions [m] and (n, N, 4) world orientations
        (unit quaternions) of the nodes, computed from ``q`` and the model's ``x0``.
    missing_rows : ``(first_row, stop_row)`` ranges of the committed rows that did not (in
        order; empty when the damage is not in the rows).
    """

    def __init__(
        self,
        message: str,
        path: str,
        problems: list[tuple[str, int | None, int | None]] | None = None,
        intact_rows: int | None = None,
        missing_rows: list[tuple[int, int]] | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.problems = problems or []
        self.intact_rows = intact_rows
        self.missing_rows = missing_rows or []


def _superblock(path: str) -> tuple[_Superblock | None, int]:
    """The superblock of ``path`` (None for an HDF5 superblock of another version) and the file size.

    Raises :class:`ResultFileError` for a file that does not start like an HDF5 file."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(48)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ResultFileError(f"{path}: not a kynemapy result file (a directory)", path) from None
    if size == 0:
        raise ResultFileError(f"{path}: not a kynemapy result file (the file is empty)", path)
    if header[:8] != _SIGNATURE:
        what = "its first bytes are zeros" if not any(header) else "no HDF5 signature at its start"
        raise ResultFileError(f"{path}: not a kynemapy result file (not an HDF5 file: {what})", path)
    if len(header) < 48 or header[8] not in (2, 3) or header[9] != 8:
        return None, size
    if _lookup3(header[:44]) != int.from_bytes(header[44:48], "little"):
        raise ResultFileError(f"{path}: damaged HDF5 file (its superblock fails its checksum)", path)
    eof = int.from_bytes(header[28:36], "little")
    return _Superblock(header, header[11], eof), size


class _Patched(io.RawIOBase):
    """Read-only view of a file with a new superblock and zeros beyond its end, up to ``size`` bytes.

    h5py opens it (``driver="fileobj"``) as an ordinary file: a file cut short, or one still
    marked as open by a killed writer, is read without touching it on disk and without SWMR's
    minutes of retries."""

    def __init__(self, path: str, superblock: bytes, size: int) -> None:
        self._fh = open(path, "rb")  # closed by close()
        self._superblock = superblock
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = max(0, min(len(view), self._size - self._pos))
        self._fh.seek(self._pos)
        got = self._fh.readinto(view[:n]) or 0
        view[got:n] = bytes(n - got)  # beyond the end of what is on disk: zeros
        lo, hi = self._pos, self._pos + n
        if lo < len(self._superblock):
            end = min(hi, len(self._superblock))
            view[: end - lo] = self._superblock[lo:end]
        self._pos += n
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def _open_patched(path: str, sb: _Superblock, size: int) -> h5py.File:
    return h5py.File(_Patched(path, sb.cleared(), max(size, sb.eof)), "r")


def _writer_alive(f: h5py.File) -> bool | None:
    """Whether the process that wrote ``f`` runs: True, False, or None (unknown: other host, old file)."""
    pid, host = f.attrs.get("writer_pid"), _decode(f.attrs.get("writer_host"))
    if pid is None or host != socket.gethostname():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_kynemapy(f: h5py.File, path: str, *, layout: bool = True) -> None:
    """Raise :class:`ResultFileError` unless ``f`` was written by kynemapy (and, with ``layout``, has its datasets)."""
    if "kynemapy_version" in f.attrs and "committed" not in f and layout:
        raise ResultFileError(
            f"{path}: a kynemapy result file without its datasets yet (its writer is starting, or stopped "
            f"before writing the first row)",
            path,
            [("committed", None, None)],
            0,
        )
    if "kynemapy_version" not in f.attrs or ("committed" not in f and layout):
        found = ", ".join(sorted(f.keys())[:8]) or "nothing"
        raise ResultFileError(
            f"{path}: not a kynemapy result file (an HDF5 file without kynemapy's /committed and "
            f"kynemapy_version; it holds {found})",
            path,
        )


def _open(path: str, *, salvage: bool = False) -> tuple[h5py.File, str | None]:
    """Open a result file read-only; return it and a note on what was done to it (or None).

    * not an HDF5 file (empty, zeroed header, other data) or an HDF5 file kynemapy did not
      write: :class:`ResultFileError` "not a kynemapy result file";
    * cut short (shorter than its superblock says): :class:`ResultFileError` naming the rows
      that are intact, found by reading it as if padded with zeros (``salvage``: opened so);
    * still marked as open for writing: if its writer (``writer_pid`` on this host) still
      runs, opened as a SWMR reader; if not, the marks are cleared on disk (what ``h5clear -s``
      does), so that any HDF5 reader opens it again, and the note says so; a file that cannot
      be written (permissions) is read through an in-memory copy of its cleared superblock.
    """
    sb, size = _superblock(path)
    if sb is not None and size < sb.eof:
        if salvage:
            try:
                f = _open_patched(path, sb, size)
                try:
                    _check_kynemapy(f, path)
                except BaseException:
                    f.close()
                    raise
            except ResultFileError:
                raise
            except Exception as exc:  # its metadata are in the missing part
                raise ResultFileError(
                    f"{path}: damaged HDF5 file, cut short: {size} of the {sb.eof} bytes its superblock names; "
                    f"no row can be read from it ({exc})",
                    path,
                    [("(file)", None, None)],
                    0,
                ) from None
            return f, f"{path}: cut short ({size} of {sb.eof} bytes); reading the intact rows"
        message = f"{path}: damaged HDF5 file, cut short: {size} of the {sb.eof} bytes its superblock names"
        kept: list[tuple[int, int]] = []
        missing: list[tuple[int, int]] = []
        try:
            f = _open_patched(path, sb, size)
            try:
                _check_kynemapy(f, path)
                if "checksums" not in f:  # an older file: rows read as zeros cannot be told from data
                    raise ResultFileError(message + "; written without checksums: the intact rows are unknown", path)
                kept, _, problems, committed = _verify(f, path, salvage=True)
                missing = _complement(kept, committed)
            except BaseException:
                f.close()
                raise
            if not problems:
                # only what was never committed is missing: the end of a write that did not complete
                # (a full disk, a file size limit, a writer killed in the middle of a write)
                return f, (
                    f"{path}: its last {sb.eof - size} bytes are missing (a write that did not complete: a "
                    f"full disk, or a writer killed while writing); all {committed} committed rows are intact"
                )
            f.close()
        except ResultFileError as exc:
            raise ResultFileError(str(exc), path, [("(file)", None, None)], None) from None
        except Exception:
            pass
        raise ResultFileError(message + _intact_text(path, kept), path, [("(file)", None, None)], _count(kept), missing)
    if sb is not None and sb.flags:
        # the root attributes (kynemapy_version, writer_pid) are written before the writer goes on
        try:
            with _open_patched(path, sb, size) as f:
                _check_kynemapy(f, path, layout=False)
                alive = _writer_alive(f)
        except ResultFileError:
            raise
        except Exception:  # changing under our eyes: a writer runs
            alive = None
        if alive is not False:  # a live writer (or one we cannot tell): a SWMR reader sees its flushed state
            try:
                f = h5py.File(path, "r", swmr=True)
            except OSError as exc:
                raise ResultFileError(
                    f"{path}: open for writing by another process and not readable yet ({exc})", path
                ) from None
            try:
                _check_kynemapy(f, path)
            except BaseException:
                f.close()
                raise
            return f, None
        note = (
            f"{path}: its writer (pid {_pid_of(path, sb, size)}) was killed; cleared HDF5's "
            f"'open for writing' marks (as h5clear -s does), so any HDF5 reader opens it again"
        )
        try:
            with open(path, "r+b") as fh:
                fh.write(sb.cleared())
        except OSError as exc:
            note = (
                f"{path}: its writer was killed and the file still carries HDF5's 'open for writing' marks "
                f"(not cleared: {exc.strerror}; run h5clear -s on it for other HDF5 readers)"
            )
            f = _open_patched(path, sb, size)
            return f, note
        return h5py.File(path, "r"), note
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ResultFileError(f"{path}: not a readable HDF5 file ({exc})", path) from None
    try:
        _check_kynemapy(f, path)
    except BaseException as exc:
        f.close()
        if isinstance(exc, (OSError, RuntimeError, KeyError)) and not isinstance(exc, ResultFileError):
            raise ResultFileError(f"{path}: damaged: HDF5 cannot read its root group ({exc})", path) from exc
        raise
    return f, None


def _pid_of(path: str, sb: _Superblock, size: int) -> str:
    with _open_patched(path, sb, size) as f:
        return str(_decode(f.attrs.get("writer_pid", "?")))


def _count(ranges: list[tuple[int, int]]) -> int:
    """Rows in ``(first, stop)`` ranges."""
    return sum(b - a for a, b in ranges)


def _complement(ranges: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The ``(first, stop)`` ranges of rows ``0 .. n - 1`` outside ``ranges`` (any order, may overlap)."""
    out, row = [], 0
    for a, b in sorted(ranges):
        if a > row:
            out.append((row, min(a, n)))
        row = max(row, b)
        if row >= n:
            break
    if row < n:
        out.append((row, n))
    return [(a, b) for a, b in out if b > a]


def _ranges_text(ranges: list[tuple[int, int]], most: int = 4) -> str:
    """``rows 0 to 639``, ``rows 0 to 639 and 768 to 3000``, or ``2873 rows in 7 ranges``."""
    if len(ranges) > most:
        return f"{_count(ranges)} rows in {len(ranges)} ranges"
    parts = [f"{a} to {b - 1}" if b - a > 1 else f"{a}" for a, b in ranges]
    return "rows " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


def _intact_text(path: str, kept: list[tuple[int, int]]) -> str:
    if not kept:
        return "; no row can be read from it"
    return f"; {_ranges_text(kept)} are intact: kynemapy.io.read({path!r}, salvage=True) returns them"


def _segments(f: h5py.File, committed: int) -> tuple[np.ndarray, int | None]:
    """The checksum records that tile rows ``0 .. committed`` and the row where they stop making sense.

    Returns ``(records, bad_from)``: ``bad_from`` is None when the records tile the committed
    rows exactly, else the first row they do not vouch for (the records table is damaged)."""
    table = f["checksums"][()]
    out, row = [], 0
    for rec in table:
        if row >= committed:
            break
        if int(rec[0]) != row or not row < int(rec[1]) <= committed:
            return np.array(out, dtype=np.int64).reshape(-1, table.shape[1]), row
        out.append(rec)
        row = int(rec[1])
    records = np.array(out, dtype=np.int64).reshape(-1, table.shape[1])
    return records, None if row == committed else row


def _verify(
    f: h5py.File, path: str, *, salvage: bool
) -> tuple[list[tuple[int, int]], dict[str, np.ndarray], list[tuple[str, int | None, int | None]], int]:
    """Read the committed rows and check them against their checksums.

    Returns ``(kept, rows, problems, committed)``: ``kept`` are the ``(first, stop)`` ranges of
    the rows whose every dataset passed its checksum (all ``committed`` rows when ``problems``
    is empty), ``rows`` every field's kept rows, in order.  A row is kept or left out whole: a
    damaged block of one dataset leaves out those rows of all of them.  Without ``salvage`` a
    problem raises :class:`ResultFileError`."""
    problems: list[tuple[str, int | None, int | None]] = []
    try:
        committed = int(f["committed"][0])
    except Exception as exc:
        raise ResultFileError(
            f"{path}: damaged: /committed cannot be read ({exc})", path, [("committed", None, None)], 0
        ) from None
    lengths = {}
    for name in ROW_NAMES:
        if name not in f:
            if name in _ADDED_LATER:  # a file of an earlier version: computed by read()
                continue
            raise ResultFileError(
                f"{path}: not a complete kynemapy result file: no /{name}", path, [(name, None, None)]
            )
        lengths[name] = f[name].shape[0]
    short = min(lengths.values())
    if not 0 <= committed <= short:
        problems.append(("committed", None, None))
        committed = max(0, min(committed, short))
    checked = "checksums" in f
    bad_from: int | None = None
    records = np.zeros((0, 2 + len(ROW_NAMES)), dtype=np.int64)
    if checked:
        records, bad_from = _segments(f, committed)
        if bad_from is not None:
            problems.append(("checksums", bad_from, committed))
    rows: dict[str, np.ndarray] = {}
    bad: list[tuple[int, int]] = [] if bad_from is None else [(bad_from, committed)]
    # the records' columns by name (a file of an earlier version lacks the fields added since)
    columns = json.loads(f["checksums"].attrs["columns"]) if checked else ["first_row", "stop_row", *ROW_NAMES]
    check = _crc
    if checked:
        algorithm = _decode(f["checksums"].attrs.get("algorithm", CRC_ALGORITHM))
        check = _block_check(str(algorithm))
        if check is None:
            raise _unknown_algorithm(f, path, "checksums", str(algorithm))
    for name in ROW_NAMES:
        if name not in f:
            continue
        k = columns.index(name) - 2
        ds = f[name]
        unreadable: set[int] = set()
        try:
            data = ds[:committed]
        except Exception:  # an unreadable chunk: read block by block to find it
            data = np.zeros((committed, *ds.shape[1:]), dtype=ds.dtype)
            bounds = [(int(r[0]), int(r[1])) for r in records] or [(0, committed)]
            for a, b in bounds:
                try:
                    data[a:b] = ds[a:b]
                except Exception:
                    unreadable.add(a)
                    problems.append((name, a, b))
                    bad.append((a, b))
        for rec in records:
            a, b = int(rec[0]), int(rec[1])
            if a not in unreadable and check(data[a:b]) != int(rec[2 + k]):
                problems.append((name, a, b))
                bad.append((a, b))
        rows[name] = data
    kept = _complement(bad, committed)
    if problems and not salvage:
        raise ResultFileError(
            f"{path}: damaged: " + _summary(problems, committed) + _intact_text(path, kept),
            path,
            problems,
            _count(kept),
            _complement(kept, committed),
        )
    if bad:
        index = np.concatenate([np.arange(a, b) for a, b in kept]) if kept else np.zeros(0, dtype=np.intp)
        rows = {name: arr[index] for name, arr in rows.items()}
    return kept, rows, problems, committed


def _summary(problems: list[tuple[str, int | None, int | None]], committed: int, most: int = 8) -> str:
    """The problems as text, adjacent row ranges of one dataset merged, in order of their first row."""
    merged: list[tuple[str, int | None, int | None]] = []
    for name, a, b in sorted(problems, key=lambda p: (-1 if p[1] is None else p[1], p[0])):
        for i, (other, c, d) in enumerate(merged):
            if other == name and a is not None and d is not None and c is not None and c <= a <= d:
                merged[i] = (name, c, max(d, b or d))
                break
        else:
            merged.append((name, a, b))
    groups: dict[tuple[int | None, int | None], list[str]] = {}
    others: list[tuple[str, int | None, int | None]] = []
    for name, a, b in merged:
        if a is None or b is None or name in ("committed", "checksums"):
            others.append((name, a, b))
        else:
            groups.setdefault((a, b), []).append(name)
    parts = [_problem_text(p, committed) for p in others]
    for (a, b), names in groups.items():
        shown = ", ".join(f"/{n}" for n in names[:most])
        if len(names) > most:
            shown += f" and {len(names) - most} more"
        parts.append(f"rows {a} to {b - 1} of {shown} fail their checksum")  # type: ignore[operator]
    return "; ".join(parts)


def _problem_text(problem: tuple[str, int | None, int | None], committed: int) -> str:
    name, a, b = problem
    if name == "committed":
        return f"/committed ({committed} rows marked committed) is out of range of the datasets"
    if name == "checksums":
        return f"the checksum records of rows {a} to {b - 1} are missing or damaged" if b else "checksums"
    if a is None:
        return f"/{name} is damaged"
    return f"/{name} rows {a} to {b - 1} fail their checksum"  # type: ignore[operator]


def read(path: str | os.PathLike[str], *, salvage: bool = False) -> Result:
    """Read a file written by :class:`ResultWriter` (finished, still being written, or killed).

    Every per-row array is truncated to the committed rows, and checked against the CRC-32
    of every appended block (files written by kynemapy 2.x before checksums are read
    unchecked).  The model tables and the restart slot are checked too.

    Parameters
    ----------
    path : the result file.
    salvage : return every intact row (with a warning) instead of raising
        :class:`ResultFileError`: the rows of a damaged block are left out, those before and
        after it kept (:attr:`Result.missing_rows` names the rows left out; ``step`` and
        ``time`` say which the others are).  The restart data are returned only when the last
        committed row and its restart slot are intact.

    Raises
    ------
    ResultFileError
        (an ``OSError``) not a kynemapy result file, cut short, or damaged: the message names
        the file, the datasets and rows, and the rows that are intact.

    A file left marked "open for writing" by a killed writer is cleared of those marks (what
    ``h5clear -s`` does; a warning says so) so that any HDF5 reader opens it again.
    """
    path = file_path(path, "read: path")
    f, note = _open(path, salvage=salvage)
    if note is not None:
        warnings.warn(note, ResultFileWarning, stacklevel=2)
    try:
        with f:
            clean = bool(f["closed"][0]) if "closed" in f else (note is None and not f.swmr_mode)
            kept, rows, problems, committed = _verify(f, path, salvage=salvage)
            intact = _count(kept)
            lost = _complement(kept, committed)
            gm = f["model"]
            fields: dict[str, Any] = {}
            for name in Model._fields:
                if name in gm:
                    ds = gm[name]
                    value = ds[()]
                    crc = ds.attrs.get("crc32")
                    if crc is not None and _crc(value) != int(crc):
                        raise ResultFileError(
                            f"{path}: damaged: /model/{name} fails its checksum (the model cannot be trusted)",
                            path,
                            [(f"model/{name}", None, None)],
                            0,
                        )
                    fields[name] = freeze(value, ds.dtype.type)
                elif name in gm.attrs:
                    fields[name] = int(gm.attrs[name])
                elif name in _NO_BEAMS:  # written before beams existed: a model without beams
                    fields[name] = _NO_BEAMS[name]
                else:
                    raise ResultFileError(f"{path}: /model lacks {name}", path, [(f"model/{name}", None, None)])
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
            if "restart" in f and (not lost or lost[-1][1] < committed):  # the last row is intact
                restart = _restart_slot(f, path, model, committed, salvage)
    except ResultFileError:
        raise
    except (OSError, RuntimeError, KeyError, ValueError, TypeError) as exc:  # HDF5's own complaint
        raise ResultFileError(
            f"{path}: damaged: HDF5 cannot read it ({type(exc).__name__}: {exc})", path, [("(file)", None, None)], 0
        ) from exc
    if problems:
        left_out = f" ({_ranges_text(lost)} of {committed} left out)" if lost else ""
        warnings.warn(
            f"{path}: damaged: " + _summary(problems, committed) + f"; returning the {intact} intact rows" + left_out,
            ResultFileWarning,
            stacklevel=2,
        )
    missing = [name for name in ROW_NAMES if name not in rows]
    if missing:  # fields added after the file was written: computed from its states
        computed = row_invariants(model, rows["q"], rows["v"])
        rows.update({name: computed[name] for name in missing})
    return Result(
        **{name: rows[name] for name in ROW_NAMES},
        committed=intact,
        model=model,
        params=params,
        attrs=attrs,
        units=units,
        restart=restart,
        closed_cleanly=clean,
        path=path,
        missing_rows=tuple(lost),
    )


class ResultFileWarning(UserWarning):
    """:func:`read` changed a file (cleared a killed writer's marks) or returned only its intact rows."""


def _restart_slot(f: h5py.File, path: str, model: Model, committed: int, salvage: bool) -> dict[str, np.ndarray] | None:
    """The newest restart slot that belongs to ``committed`` rows and passes its checksum."""
    gr = f["restart"]
    info = gr["slot_info"][()]
    digests = gr["slot_crc"][()] if "slot_crc" in gr else None
    algorithm = str(_decode(gr["slot_crc"].attrs.get("algorithm", "CRC-32"))) if digests is not None else ""
    if digests is not None and _block_check(algorithm) is None:
        raise _unknown_algorithm(f, path, "restart/slot_crc", algorithm)
    match = sorted((s for s in range(2) if info[s, 0] == committed and info[s, 1] >= 0), key=lambda s: -info[s, 1])
    for slot in match:
        arrays = {name: gr[name][slot] for name in _restart_shapes(model)}
        if digests is not None and _slot_digest(arrays, algorithm) != int(digests[slot]):
            if salvage:
                warnings.warn(
                    f"{path}: damaged: restart slot {slot} fails its checksum; no restart data returned",
                    ResultFileWarning,
                    stacklevel=3,
                )
                continue
            raise ResultFileError(
                f"{path}: damaged: restart slot {slot} (/restart/*[{slot}], the state after row {committed - 1}) "
                f"fails its checksum; the rows are intact, but no run can continue from this file",
                path,
                [(f"restart[{slot}]", None, None)],
                committed,
            )
        arrays["committed"] = np.array(committed, dtype=np.int64)
        return arrays
    return None
