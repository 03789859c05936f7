"""Crash-safe HDF5 result files: :class:`ResultWriter`, :func:`read` and :func:`energy_and_momentum`.

File layout (N = n_nodes, C = n_constraints, n = committed rows; SI units):

``/`` attributes
    ``kynemapy_version``, ``created`` (ISO 8601, UTC), ``units`` (JSON object
    dataset → unit), ``writer_pid`` and ``writer_host`` (the writing process),
    ``output_every`` (the spacing of the recorded steps, written by the run driver; a resumed
    run keeps it) and the user's ``attrs``.  Text attributes, here and below, are fixed-length
    UTF-8 strings (h5py reads them as ``bytes``), kept in the checksummed object headers;
    earlier files hold variable-length strings, in HDF5's unchecksummed global heap, which
    :func:`read` reads in a child process first (:mod:`kynemapy.io.heap_guard`), so that a
    damaged heap raises :class:`ResultFileError` instead of hanging.
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
extra per-row columns (chunked ``block`` rows, unlimited first axis, checksummed with the rows)
    ``/step_control/*`` (n,) of a step-controlled run (``step_size`` [s], ``accepted``,
    ``rejected``, ``estimated_error``; :data:`kynemapy.io.layout.STEP_CONTROL_FIELDS`), and
    ``/hard_contact/*`` of a model with hard contact, the impulses summed over the steps since
    the row before (:data:`kynemapy.io.layout.HARD_CONTACT_FIELDS`, :mod:`kynemapy.run.hard_rows`): with
    K points against hard ground planes ``normal_impulse`` (n, K) [N s], ``friction_impulse``
    (n, K, 3) [N s] (world frame), ``active`` (n, K) int8; with the hard body law
    ``body_impulse`` (n, N, 6) [N s, N m s] (per node: force, moment about the node, world
    frame) and ``body_contacts`` (n,) int64.  :func:`read` returns them as
    :attr:`Result.step_control` and :attr:`Result.hard_contact` (None when the file has none).
``/checksums`` (m, 2 + F + E) int64
    one record per appended block: first row, stop row, then the XXH3-64 digest
    (``xxhash.xxh3_64_intdigest``, seed 0, stored as the int64 with the same 64 bits) of
    each of the F per-row datasets' rows of that block, then of the E extra columns' (their
    bytes in C order, in the order of ``ROW_FIELDS``, then ``step_control/*``,
    ``hard_contact/*``; attribute ``columns`` names them, attribute ``algorithm`` the digest:
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
    written with the slot; with a kind's memory of the run (contact's ``touching`` under the
    hard body law) also ``/restart/memory/<name>`` (2, R, width), ``/restart/memory_rows``
    (2, M) and ``/restart/memory_digest`` (2,), each slot's rows, counts and digest
    (:mod:`kynemapy.io.memory`).  A write always goes to the slot not holding the newest restart,
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

from kynemapy.engine.energies import energy_and_momentum, row_invariants
from kynemapy.io.checksums import CRC_ALGORITHM, DIGEST_ALGORITHM, SLOT_ALGORITHM
from kynemapy.io.errors import ResultFileError, ResultFileWarning
from kynemapy.io.layout import UNITS, model_difference
from kynemapy.io.reader import Result, read
from kynemapy.io.writer import ResultWriter

__all__ = [
    "CRC_ALGORITHM",
    "DIGEST_ALGORITHM",
    "SLOT_ALGORITHM",
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
