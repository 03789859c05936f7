"""One writer per result file: a lock held for the writer's lifetime, naming its holder.

HDF5's own file locking does not keep a second kynemapy run off a file being written:
HDF5 drops its lock once SWMR writing starts (so that readers may open the file), a
resumed file is a new file renamed over the old one, and ``HDF5_USE_FILE_LOCKING=FALSE``
(common on cluster file systems) turns it off.  So a writer takes its own lock: an
exclusive ``flock`` on a sidecar file ``<result>.lock`` in the same folder, holding the
writer's process id, host and start time, for as long as it writes (a run, a resume, a
sweep member).  A second writer of the same file, to overwrite or to resume it, is refused
with :class:`FileInUseError` naming that process.

The kernel releases a ``flock`` when its process ends, however it ends, so a lock left by
a killed process blocks nothing: the next writer takes it over (a killed run is resumed as
before, bit for bit).  The sidecar is removed when the writer closes; one left by a killed
process is reused.  Where ``fcntl`` does not exist (Windows) there is no lock.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["FileInUseError", "WriterLock", "holder_of", "lock_path"]

#: attempts to take a lock whose sidecar another process replaces or removes meanwhile
_ATTEMPTS = 20


class FileInUseError(OSError):
    """A result file that another live process is writing (``holder``: that process's record)."""

    def __init__(self, message: str, path: str, holder: dict[str, Any]) -> None:
        super().__init__(message)
        self.path = path
        self.holder = holder


def lock_path(path: str | os.PathLike[str]) -> str:
    """The sidecar lock file of result file ``path``: ``<path>.lock``."""
    return os.fspath(path) + ".lock"


def _describe(holder: dict[str, Any]) -> str:
    pid, host = holder.get("pid", "?"), holder.get("host", "?")
    since = holder.get("since")
    return f"process {pid} on {host}" + (f", writing since {since}" if since else "")


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 4096).decode("utf-8", "replace")
        holder = json.loads(text)
        return holder if isinstance(holder, dict) else {}
    except (OSError, ValueError):
        return {}


def holder_of(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The record of the live process writing ``path`` (``pid``, ``host``, ``since``), or None if none does."""
    if fcntl is None or isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        return None  # not a path: the caller's own check names it
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd) or {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class WriterLock:
    """The exclusive lock of one result file's writer (see the module docstring).

    Parameters
    ----------
    path : the result file to be written.
    what : how the refusal begins, e.g. ``"run"`` (``"run: run.h5 is being written by ..."``).

    Raises
    ------
    FileInUseError
        Another live process holds the lock; the message names it (pid, host, start time).

    Notes
    -----
    Use :meth:`release` (or a ``with`` block) when the file is closed.  The lock belongs to
    this process's open file: a child process forked meanwhile does not hold it.
    """

    def __init__(self, path: str | os.PathLike[str], what: str = "run") -> None:
        self.path = os.fspath(path)
        self.sidecar = lock_path(self.path)
        self._fd: int | None = None
        if fcntl is None:  # pragma: no cover - Windows: no lock
            return
        for _ in range(_ATTEMPTS):
            fd = os.open(self.sidecar, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise FileInUseError(
                    f"{what}: {self.path} is being written by {_describe(holder)}; a file a live process writes "
                    f"is never overwritten or resumed: wait for it to end, or stop it (kill "
                    f"{holder.get('pid', 'PID')}) and then continue the file with --resume",
                    self.path,
                    holder,
                ) from None
            except BaseException:
                os.close(fd)
                raise
            # the sidecar may have been removed (its writer closed) between our open and flock:
            # the lock is ours only if the name still points at the file we locked
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.sidecar))
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            record = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "since": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode(), 0)
            self._fd = fd
            return
        raise FileInUseError(f"{what}: {self.path}: its lock {self.sidecar} keeps changing; try again", self.path, {})

    @property
    def held(self) -> bool:
        """True until :meth:`release`."""
        return self._fd is not None

    def release(self) -> None:
        """Remove the sidecar and let the lock go (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # removed while still held: a process that opened the old name finds it gone and retries
            if os.path.samestat(os.fstat(fd), os.stat(self.sidecar)):
                os.unlink(self.sidecar)
        except OSError:
            pass
        finally:
            os.close(fd)

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
