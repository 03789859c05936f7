"""Output rows double-buffered in memory and appended to HDF5 by a background thread.

The run driver records rows into the *current* buffer (from compiled code or Python);
when the buffer is full it is handed, with a copy of the state and inputs after its
last row, to a writer thread that computes the rows' energy and momentum and packs them
field-major, the layout of the datasets, in one compiled pass
(:func:`kynemapy.engine.invariants.pack_rows`), and appends them to the file with
:meth:`kynemapy.io.ResultWriter.append` (rows, restart data, ``committed``, each phase
flushed), while the driver goes on filling the other buffer.  The compiled kernels
release the GIL, so on a machine with two cores the HDF5 writes cost the stepping
almost nothing.

Crash safety: a buffer is handed over only once the buffer before it has been
committed, so at most two buffers of rows are ever missing from the file: the one
being written and the one being filled.  Buffers hold ``unit = block // 2`` rows, so a
killed run loses fewer than ``block`` rows (with ``block = 1`` there is no thread and
each row is written before the next step).

Buffers end on multiples of ``unit`` in the file's row index, the file's chunk size:
every full append writes whole HDF5 chunks.

Scheduling (Linux): the writer thread keeps off the CPU the driver ran on when it handed over
the buffer (its affinity is every CPU the process may use but that one).  Woken by the
driver, the thread would otherwise be queued on the driver's CPU and take its time from the
stepping whenever the other CPUs are busy: beside a busy process on two cores, streaming
every step of the heavy top cost +29–32 % left alone, +18 % steered (paired runs as in
``bench/streaming.py``).  On a quiet machine it changes nothing; with a single usable CPU,
or where the CPU cannot be known, nothing is steered.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import os
import queue
import re
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kynemapy.engine.api import stored
from kynemapy.engine.data import Inputs, State
from kynemapy.engine.elements import BEAMS
from kynemapy.engine.elements.beams.table import scratch_nodes
from kynemapy.engine.fields import Data
from kynemapy.engine.lookup import entry
from kynemapy.engine.rows import RowLayout, field_views

if TYPE_CHECKING:  # h5py is imported when a run writes a file, not with kynemapy
    from kynemapy.io.hdf5 import ResultWriter

__all__ = ["BackgroundWriter", "OutputWriteError", "unit_rows"]


class OutputWriteError(OSError):
    """Writing the result file failed (a full disk, a quota, a file size limit, an I/O error).

    The message names the file and the operating system's reason, not HDF5's internals;
    ``errno`` and ``strerror`` are the operating system's (when HDF5 reported them), ``path``
    the file and ``committed`` the rows safe in it (verified and resumable).
    """

    def __init__(self, path: str, committed: int, errno: int | None, reason: str) -> None:
        self.message = f"cannot write {path}: {reason}; {committed} rows are safe in it"
        super().__init__(self.message)
        self.errno = errno
        self.strerror = reason
        self.path = path
        self.committed = committed
        self.reason = reason

    def __str__(self) -> str:
        return self.message  # not OSError's "[Errno 28] ...", which would drop the file and the rows


def write_failure_reason(exc: BaseException) -> tuple[int | None, str]:
    """The operating system's error number and reason behind a failed HDF5 write (or the exception's text).

    HDF5 reports a failed ``write(2)`` as one long string (``... errno = 28, error message =
    'No space left on device', buf = 0x..., total write size = ..., offset = ...``); the
    number and its reason are what a user can act on.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        number = getattr(exc, "errno", None)
        if isinstance(number, int) and number in _errno.errorcode:
            return number, os.strerror(number)
        match = re.search(r"errno = (\d+)", str(exc))
        if match and int(match[1]) in _errno.errorcode:
            return int(match[1]), os.strerror(int(match[1]))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None, ""


def _cpu_reader() -> Callable[[], int] | None:
    """glibc's/musl's ``sched_getcpu`` (Linux), or None where there is none."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        function = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_int
    function.argtypes = []
    return function


_SCHED_GETCPU = _cpu_reader()


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now (Linux), or None where it cannot be known."""
    if _SCHED_GETCPU is None:
        return None
    cpu = int(_SCHED_GETCPU())
    return cpu if cpu >= 0 else None


def unit_rows(block: int) -> int:
    """Rows per buffer (and per HDF5 chunk) for a loss bound of ``block`` rows."""
    return max(1, int(block) // 2)


class BackgroundWriter:
    """Two record buffers of ``unit`` rows and the thread that writes them (see the module docstring).

    Parameters
    ----------
    writer : an open :class:`ResultWriter` whose chunks hold ``unit`` rows (its layout may be
        deferred: the thread makes it first); closed by :meth:`close`.
    data : the simulation's arenas (the model part is read for energy and momentum).
    layout : the output row layout (``workspace.row_layout``).
    unit : rows per buffer.
    threaded : write in a background thread (two buffers) or in the caller's thread (one buffer).
    recorders : group -> ``recorder(columns, row)``, optional: each writes the writer's columns
        of a kind's group (:attr:`ResultWriter.groups`; contact's ``/hard_contact``,
        :class:`kynemapy.run.hard_rows.HardRowRecorder`) of the last step into row ``row`` of
        ``columns`` (a dict of arrays, ``unit`` rows each); required for each group the file has
        (:func:`kynemapy.run.hooks.recorders`).
    keepers : name -> keeper, optional: the kinds' memories of the run (contact's ``touching``,
        :class:`kynemapy.run.hard_bodies.TouchingKeeper`), saved (``save()``) at every hand-over
        and stored with the restart data (:func:`kynemapy.run.hooks.keepers`).

    The driver fills :meth:`view` (rows from :attr:`fill` on), calls :meth:`record_columns` for
    each row it records there, reports them with :meth:`added`, and calls :meth:`submit` when
    :meth:`room` is 0 and at the end.
    """

    def __init__(
        self,
        writer: ResultWriter,
        data: Data,
        layout: RowLayout,
        unit: int,
        *,
        threaded: bool = True,
        recorders: Mapping[str, Callable[[dict[str, np.ndarray], int], None]] | None = None,
        keepers: Mapping[str, Any] | None = None,
    ) -> None:
        # the rows' energy and momentum kernel: its module (with the beam and contact kernels it
        # evaluates) is imported by the first writer, not with the run driver
        from kynemapy.engine.invariants import invariant_scratch, pack_rows, parts_of

        self.writer = writer
        self.unit = int(unit)
        self.threaded = bool(threaded)
        self._data = data
        self._layout = layout
        self._buffers = [np.zeros((self.unit, layout.width)) for _ in range(2 if self.threaded else 1)]
        # the kinds' columns of each buffer's rows, by group (none: the file has none)
        groups = {group: shapes for group, shapes in getattr(writer, "groups", {}).items() if shapes}
        for group in groups:
            if group not in (recorders or {}):
                raise ValueError(f"BackgroundWriter: {writer.path} has /{group} columns: give their recorder")
        self._recorders = {group: (recorders or {})[group] for group in groups}
        self._keepers = dict(keepers or {})
        self._columns: list[dict[str, dict[str, np.ndarray]]] = [
            {
                group: {name: np.zeros((self.unit, *shape), dtype=dtype) for name, (shape, dtype) in shapes.items()}
                for group, shapes in groups.items()
            }
            for _ in self._buffers
        ]
        # the writer thread's own: the block packed field-major (each dataset's rows contiguous,
        # written and checksummed without a copy), scratch of the energy/momentum kernel
        self._fields = np.zeros(self.unit * layout.width)
        self._ints = np.zeros((2, self.unit), dtype=np.int64)
        self._scratch = invariant_scratch(scratch_nodes(data.tables[BEAMS]))
        # the compiled entry resolved once: resolving it from the arguments' types costs about
        # 0.6 ms a call (the arenas tuple)
        # the Data by its address in its stored call (engine.api.stored), kept alive here
        self._stored = stored(data)
        at, data_type = self._stored.data_at, self._stored.data_type
        self._parts = parts_of(data)
        pack_arguments = (
            at, data_type, self._buffers[0], 0, self.unit, self._fields, self._ints, self._scratch, self._parts,
        )  # fmt: skip
        self._pack = entry(pack_rows, pack_arguments)
        self._current = 0
        #: rows in the current buffer
        self.fill = 0
        #: global row index of the current buffer's first row
        self._start = writer.committed
        #: step counter of the last row recorded (-1: none yet in this run)
        self.last_step = -1
        self._error: BaseException | None = None
        self._free: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._todo: queue.SimpleQueue[tuple[int, int, State, Inputs, dict[str, np.ndarray], int | None] | None] = (
            queue.SimpleQueue()
        )
        #: the writer thread's: CPUs it may be steered over, and the one it keeps off now
        self._cpus: frozenset[int] = frozenset()
        self._off: int | None = None
        self._creator_cpu = current_cpu()  # the layout is made before the first hand-over
        self._thread: threading.Thread | None = None
        if self.threaded:
            for i in range(1, len(self._buffers)):
                self._free.put(i)
            self._thread = threading.Thread(target=self._work, name="kynemapy-hdf5-writer", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------------ filling
    @property
    def buffer(self) -> np.ndarray:
        """The buffer being filled (``unit`` rows × the row width)."""
        return self._buffers[self._current]

    def room(self) -> int:
        """Rows the current buffer takes before it is due (it ends on a multiple of ``unit``)."""
        return self.unit - self._start % self.unit - self.fill

    def view(self) -> np.ndarray:
        """The free rows of the current buffer (row 0 of the view = row :attr:`fill`)."""
        return self.buffer[self.fill :]

    @property
    def records_columns(self) -> bool:
        """True when the file has kinds' columns (``/hard_contact``), to be recorded with each row."""
        return bool(self._recorders)

    def record_columns(self, i: int) -> None:
        """Record the kinds' columns (``/hard_contact``) of row :attr:`fill` ``+ i`` of the current
        buffer (the row just recorded as row ``i`` of :meth:`view`; nothing when the file has none)."""
        for group, recorder in self._recorders.items():
            recorder(self._columns[self._current][group], self.fill + i)

    def added(self, n: int) -> None:
        """``n`` rows were recorded at :attr:`fill` and after."""
        if n:
            self.fill += n
            self.last_step = int(self.buffer[self.fill - 1, self._layout.offsets["step"]])

    # ------------------------------------------------------------------ writing
    def submit(self, state: State, inputs: Inputs) -> None:
        """Hand the filled rows to the writer with a copy of ``state`` and ``inputs`` (after the last row).

        Threaded: returns once the other buffer is free, i.e. once every earlier buffer is
        committed.  Raises ``OSError`` if the writer has failed.
        """
        self._raise_writer_error()
        if self.fill == 0:
            return
        # copies: the driver goes on (and a loads callback writes the inputs) while the thread writes
        cpu = current_cpu() if self._thread is not None else None
        memory = {name: keeper.save() for name, keeper in self._keepers.items()}  # new arrays
        item = (self._current, self.fill, state.copy(), Inputs(*(np.array(a) for a in inputs)), memory, cpu)
        self._start += self.fill
        self.fill = 0
        if self._thread is None:
            self._write(item)
            self._raise_writer_error()
            return
        self._todo.put(item)
        self._current = -1  # no buffer of ours until the writer frees one
        self._current = self._free.get()
        self._raise_writer_error()

    def can_submit(self) -> bool:
        """True when the current buffer is ours (not interrupted while waiting) and the writer has not failed."""
        return self._current >= 0 and self._error is None

    def _keep_off(self, cpu: int | None) -> None:
        """Writer thread: run on any allowed CPU but ``cpu`` (the driver's; see the module docstring)."""
        if cpu is None or cpu == self._off or cpu not in self._cpus or len(self._cpus) < 2:
            return
        try:
            os.sched_setaffinity(0, self._cpus - {cpu})  # 0: the calling thread
            self._off = cpu
        except OSError:  # not allowed here: leave the scheduling alone
            self._cpus = frozenset()

    def _write(self, item: tuple[int, int, State, Inputs, dict[str, np.ndarray], int | None]) -> None:
        index, n, state, inputs, memory, cpu = item
        if self._error is not None:
            return
        if self._thread is not None:
            self._keep_off(cpu)
        try:
            buf = self._buffers[index]
            at = self._stored
            fields, ints, scratch = self._fields, self._ints, self._scratch
            self._pack(at.data_at, at.data_type, buf, n, self.unit, fields, ints, scratch, self._parts)
            rows = field_views(self._layout, self._fields, self._ints, self.unit, n)
            # the kinds' columns of these rows (/hard_contact), by group
            groups = {group: {name: arr[:n] for name, arr in c.items()} for group, c in self._columns[index].items()}
            kept = {"memory": memory} if memory else {}  # the kinds' memories, where the model has one
            self.writer.append(rows, state=state, inputs=inputs, **kept, **groups)
        except BaseException as exc:  # reported to the driver at its next submit or at close
            self._error = exc

    def _work(self) -> None:
        if _SCHED_GETCPU is not None:
            try:
                self._cpus = frozenset(os.sched_getaffinity(0))
            except OSError:
                self._cpus = frozenset()
            self._keep_off(self._creator_cpu)
        try:
            self.writer.ensure_layout()  # a deferred layout is made while the first rows are computed
        except BaseException as exc:
            self._error = exc
        while True:
            item = self._todo.get()
            if item is None:
                return
            try:
                self._write(item)
            finally:
                self._free.put(item[0])

    def _raise_writer_error(self) -> None:
        if self._error is not None:
            exc = self._error
            number, reason = write_failure_reason(exc)
            if not reason:
                reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise OutputWriteError(self.writer.path, self.writer.committed, number, reason) from exc

    def close(self, *, raise_errors: bool = True) -> None:
        """Wait for every submitted buffer to be written, then close the file (idempotent).

        Rows still in the current buffer and not submitted are dropped.  Raises the writer's
        error as ``OSError`` unless ``raise_errors`` is False (the caller is already raising:
        then errors of closing are not raised either).
        """
        if self._thread is not None:
            self._todo.put(None)
            self._thread.join()
            self._thread = None
        try:
            self.writer.close()
        except Exception:
            if raise_errors:
                raise
        if raise_errors:
            self._raise_writer_error()
