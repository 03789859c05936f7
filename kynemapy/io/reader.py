"""Reading result files: :func:`read` and the :class:`Result` it returns (the layout: :mod:`kynemapy.io.hdf5`)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import warnings
from dataclasses import dataclass, field
from typing import Any

import h5py
import numpy as np

from kynemapy.engine.data import Inputs, State
from kynemapy.engine.energies import row_invariants
from kynemapy.engine.params import StepParameters
from kynemapy.engine.rows import ROW_NAMES
from kynemapy.io.checksums import (
    block_check,
    crc32_of,
    slot_digest,
    unknown_algorithm,
)
from kynemapy.io.errors import (
    ResultFileError,
    ResultFileWarning,
)
from kynemapy.io.heap_guard import check_text_attributes
from kynemapy.io.layout import (
    RESTART_INPUTS,
    RESTART_STATE,
    convert,
    decode,
    missing_model_fields,
    restart_shapes,
)
from kynemapy.io.memory import read_memory
from kynemapy.io.paths import file_path
from kynemapy.io.salvage import (
    complement,
    count_rows,
    intact_text,
    ranges_text,
    summary,
    verify,
)
from kynemapy.io.superblock import (
    Superblock,
    open_patched,
    read_superblock,
)
from kynemapy.math.rotations import world_pose
from kynemapy.model import Model, freeze
from kynemapy.model.registry import column_groups, kinds


@dataclass
class Result:
    """Contents of a result file, truncated to the committed rows (n = ``committed``).

    Attributes
    ----------
    time : (n,) ndarray [s]
        Time of each row.
    step : (n,) int64 ndarray
        Step number of each row.
    iterations : (n,) int64 ndarray
        Newton iterations of the row's step.
    error : (n,) ndarray
        Final Newton error of the row's step.
    q : (n, N, 7) ndarray [m, -]
        Displacement u [m] and rotation quaternion r (w, x, y, z) relative to the
        reference orientation, per node (as :attr:`kynemapy.State.q`).
    v, vd, a : (n, N, 6) ndarray [m/s, rad/s], [m/s², rad/s²]
        Velocity (u̇, ω), acceleration (ü, ω̇) and the generalized-α algorithmic
        acceleration, inertial frame.
    lam : (n, C, 6) ndarray [N, N m]
        Lagrange multipliers of the constraints.
    constraint_output : (n, C, 3) ndarray
        Per constraint: revolute and hinge angle [rad], slider displacement [m], with
        their rates and accelerations; zero for other kinds.
    kinetic_energy, potential_energy, strain_energy : (n,) ndarray [J]
        Energies of each row.
    linear_momentum : (n, 3) ndarray [kg m/s]
        Linear momentum of each row.
    angular_momentum : (n, 3) ndarray [kg m²/s]
        Angular momentum of each row, about the world origin.
    committed : int
        Number of rows n.
    model : Model
        The :class:`kynemapy.Model` (read-only arrays), equal to the written one.
    params : StepParameters
        The :class:`kynemapy.StepParameters`.
    attrs : dict[str, Any]
        Root attributes (``kynemapy_version``, ``created``, ``units`` and the user's).
    units : dict[str, str]
        ``attrs["units"]`` decoded (dataset → unit).
    restart : dict[str, ndarray], optional
        The newest restart slot matching ``committed`` (keys of State and Inputs,
        ``committed``, and ``"memory/<name>"`` for each kind's memory of the run kept with it,
        :meth:`restart_memory`), or None (no restart group, or no restart written for the
        committed rows).
    closed_cleanly : bool
        False when the writer is still running or was killed (the file still
        carries HDF5's "open for writing" mark).
    path : str
        The file.
    position : (n, N, 3) ndarray [m]
        World positions of the nodes, computed from ``q`` and the model's ``x0``.
    orientation : (n, N, 4) ndarray [-]
        World orientations (unit quaternions (w, x, y, z)) of the nodes, computed from
        ``q`` and the model's ``x0``.
    step_control : dict[str, ndarray] or None
        The per-row columns of a step-controlled run (:meth:`kynemapy.Simulation.run` with
        ``control``; the group ``/step_control``), (n,) each: ``step_size`` [s], ``accepted``,
        ``rejected`` (counts since the row before), ``estimated_error`` [-]; None for a file of
        fixed steps.
    groups : dict[str, dict[str, ndarray]]
        Each kind's per-row columns that the file holds (:func:`kynemapy.model.registry.column_groups`),
        by the group's name, then by the column's; each group is also an attribute of the result by
        its name (None when the file has none of its columns), and so is each of the kinds'
        further attributes (:attr:`kynemapy.model.registry.kind.Kind.attributes`): contact's are
        ``hard_contact`` and ``body_contact_forces``.
    hard_contact : dict[str, ndarray] or None
        (contact's group, ``groups["hard_contact"]``) The per-row columns of a model with hard
        contact (the group ``/hard_contact``,
        :data:`kynemapy.io.layout.HARD_CONTACT_FIELDS`): the impulses summed over the steps since
        the row before (all ``output_every`` of them; zeros at a new file's first row), the
        contacts closed at the end of the row's last step.  With K points against hard ground
        planes (``model.hard_contacts``' rows, in the order of
        :meth:`kynemapy.Simulation.contact_impulses`): ``normal_impulse`` (n, K) [N s],
        ``friction_impulse`` (n, K, 3) [N s] (on the body, world frame: the tangential
        components of :meth:`~kynemapy.Simulation.contact_impulses` times its tangents),
        ``active`` (n, K) bool.  With the hard body law: ``body_impulse`` (n, N, 6) [N s, N m s]:
        per node, the force and the moment about the node (world frame) of the step's contacts
        between bodies on it (:meth:`~kynemapy.Simulation.body_impulses` summed per body), and
        ``body_contacts`` (n,) int64, the number of those contacts.  None for a model without
        hard contact, and for files written before these columns existed.
    body_contact_forces : (n, N, 6) ndarray or None
        (contact's attribute) The hard body law's mean force [N] and moment about the node [N m]
        (world frame) on every node in every row, from the other bodies' contacts: the row's
        recorded ``hard_contact["body_impulse"]`` (summed over the steps since the row before) over
        the time since that row (0 at the first row); as :func:`kynemapy.run.hard_rows.plane_forces`
        for the ground planes.  None when the file holds no body impulses.
    missing_rows : tuple[tuple[int, int], ...]
        ``(first_row, stop_row)`` ranges of the file's committed rows left out by
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
    step_control: dict[str, np.ndarray] | None = None
    groups: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        """A kind's group of columns by its name (None: not in the file), or a kind's attribute."""
        if name.startswith("__") or name == "groups":
            raise AttributeError(name)
        if name in column_groups():
            return self.groups.get(name)
        for kind in kinds():
            if name in kind.attributes:
                return kind.attributes[name](self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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

    def restart_memory(self) -> dict[str, np.ndarray]:
        """The kinds' memories of the run kept with :attr:`restart` (contact's ``touching``: the
        points touching at the next step's start under the hard body law), by name.

        Returns
        -------
        dict of str to ndarray
            Name -> (R, width) float64 rows (copies); empty: none kept (or no restart data).
        """
        restart = self.restart or {}
        return {k.split("/", 1)[1]: np.array(v) for k, v in restart.items() if k.startswith("memory/")}

    def restart_state(self) -> tuple[State, Inputs]:
        """Fresh, writable :class:`State` and :class:`Inputs` built from :attr:`restart`."""
        if self.restart is None:
            raise ValueError(f"{self.path}: no restart data for the committed rows")
        state = State(*(np.array(self.restart[k], copy=True) for k in RESTART_STATE))
        inputs = Inputs(*(np.array(self.restart[k], copy=True) for k in RESTART_INPUTS))
        return state, inputs


# the reader's row attributes are the output row's fields, in order
if tuple(f.name for f in dataclasses.fields(Result))[: len(ROW_NAMES)] != ROW_NAMES:  # pragma: no cover
    raise ImportError("kynemapy.io.hdf5.Result: its first fields must be kynemapy.engine.rows.ROW_NAMES")


def _writer_alive(f: h5py.File) -> bool | None:
    """Whether the process that wrote ``f`` runs: True, False, or None (unknown: other host, old file)."""
    pid, host = f.attrs.get("writer_pid"), decode(f.attrs.get("writer_host"))
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
    sb, size = read_superblock(path)
    if sb is not None and size < sb.eof:
        if salvage:
            try:
                f = open_patched(path, sb, size)
                try:
                    check_text_attributes(f, path)
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
            f = open_patched(path, sb, size)
            try:
                check_text_attributes(f, path)
                _check_kynemapy(f, path)
                if "checksums" not in f:  # an older file: rows read as zeros cannot be told from data
                    raise ResultFileError(message + "; written without checksums: the intact rows are unknown", path)
                kept, _, problems, committed = verify(f, path, salvage=True)
                missing = complement(kept, committed)
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
        raise ResultFileError(
            message + intact_text(path, kept), path, [("(file)", None, None)], count_rows(kept), missing
        )
    if sb is not None and sb.flags:
        # the root attributes (kynemapy_version, writer_pid) are written before the writer goes on
        try:
            with open_patched(path, sb, size) as f:
                _check_kynemapy(f, path, layout=False)
                check_text_attributes(f, path)
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
                check_text_attributes(f, path)
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
            f = open_patched(path, sb, size)
            return f, note
        return h5py.File(path, "r"), note
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ResultFileError(f"{path}: not a readable HDF5 file ({exc})", path) from None
    try:
        _check_kynemapy(f, path)
        check_text_attributes(f, path)
    except BaseException as exc:
        f.close()
        if isinstance(exc, (OSError, RuntimeError, KeyError)) and not isinstance(exc, ResultFileError):
            raise ResultFileError(f"{path}: damaged: HDF5 cannot read its root group ({exc})", path) from exc
        raise
    return f, None


def _pid_of(path: str, sb: Superblock, size: int) -> str:
    with open_patched(path, sb, size) as f:
        return str(decode(f.attrs.get("writer_pid", "?")))


def read(path: str | os.PathLike[str], *, salvage: bool = False) -> Result:
    """Read a file written by :class:`ResultWriter` (finished, still being written, or killed).

    Every per-row array is truncated to the committed rows, and checked against the CRC-32
    of every appended block (files written by kynemapy 2.x before checksums are read
    unchecked).  The model tables and the restart slot are checked too.

    Parameters
    ----------
    path : str | path-like
        The result file.
    salvage : bool
        Return every intact row (with a warning) instead of raising
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
            kept, rows, problems, committed = verify(f, path, salvage=salvage)
            intact = count_rows(kept)
            lost = complement(kept, committed)
            gm = f["model"]
            fields: dict[str, Any] = {}
            missing_fields = missing_model_fields()
            for name in Model._fields:
                if name in gm:
                    ds = gm[name]
                    value = ds[()]
                    crc = ds.attrs.get("crc32")
                    if crc is not None and crc32_of(value) != int(crc):
                        raise ResultFileError(
                            f"{path}: damaged: /model/{name} fails its checksum (the model cannot be trusted)",
                            path,
                            [(f"model/{name}", None, None)],
                            0,
                        )
                    fields[name] = freeze(value, ds.dtype.type)
                elif name in gm.attrs:
                    fields[name] = int(gm.attrs[name])
                elif name in missing_fields:  # written before beams, hard joint limits or a kind existed
                    fields[name] = missing_fields[name]
                else:
                    raise ResultFileError(f"{path}: /model lacks {name}", path, [(f"model/{name}", None, None)])
            for kind in kinds():  # a kind's fields of an older layout brought to the current one
                if kind.upgrade is not None:
                    kind.upgrade(fields)
            model = Model(**fields)
            gp = f["params"]
            params = StepParameters(
                **{
                    fld.name: convert(gp.attrs[fld.name], fld.type)
                    for fld in dataclasses.fields(StepParameters)
                    if fld.name in gp.attrs
                }
            )
            attrs = {k: decode(v) for k, v in f.attrs.items()}
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
        left_out = f" ({ranges_text(lost)} of {committed} left out)" if lost else ""
        warnings.warn(
            f"{path}: damaged: " + summary(problems, committed) + f"; returning the {intact} intact rows" + left_out,
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
        step_control=_group(rows, "step_control"),
        groups={name: group for name in column_groups() if (group := _group(rows, name)) is not None},
    )


def _group(rows: dict[str, np.ndarray], group: str) -> dict[str, np.ndarray] | None:
    """The extra columns ``/<group>/*`` of the rows read, by their names in the group, each as its
    kind declares it is read (:attr:`kynemapy.model.registry.kind.Column.read_as`); None: none."""
    out = {name.split("/", 1)[1]: rows[name] for name in rows if name.startswith(group + "/")}
    declared = column_groups().get(group)
    for column in () if declared is None else declared.columns:
        if column.name in out and column.read_as is not None:
            out[column.name] = out[column.name].astype(column.read_as)
    return out or None


def _restart_slot(f: h5py.File, path: str, model: Model, committed: int, salvage: bool) -> dict[str, np.ndarray] | None:
    """The newest restart slot that belongs to ``committed`` rows and passes its checksum."""
    gr = f["restart"]
    info = gr["slot_info"][()]
    digests = gr["slot_crc"][()] if "slot_crc" in gr else None
    algorithm = str(decode(gr["slot_crc"].attrs.get("algorithm", "CRC-32"))) if digests is not None else ""
    if digests is not None and block_check(algorithm) is None:
        raise unknown_algorithm(f, path, "restart/slot_crc", algorithm)
    match = sorted((s for s in range(2) if info[s, 0] == committed and info[s, 1] >= 0), key=lambda s: -info[s, 1])
    for slot in match:
        arrays = {name: gr[name][slot] for name in restart_shapes(model)}
        if digests is not None and slot_digest(arrays, algorithm) != int(digests[slot]):
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
        memory = read_memory(gr, slot)
        if memory is None:  # fails its digest
            if salvage:
                warnings.warn(
                    f"{path}: damaged: restart slot {slot}'s memory (/restart/memory/*) fails its checksum; "
                    "no restart data returned",
                    ResultFileWarning,
                    stacklevel=3,
                )
                continue
            raise ResultFileError(
                f"{path}: damaged: restart slot {slot}'s memory (/restart/memory/*[{slot}], what the run "
                f"remembers beside its state after row {committed - 1}) fails its checksum; the rows are intact, "
                "but no run can continue from this file",
                path,
                [(f"restart/memory[{slot}]", None, None)],
                committed,
            )
        arrays |= memory
        arrays["committed"] = np.array(committed, dtype=np.int64)
        return arrays
    return None


__all__ = [
    "Result",
    "read",
]
