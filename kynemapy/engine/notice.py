"""The one-line notice of a long first compilation (:func:`compile_announced`).

Kept apart from :mod:`kynemapy._jit`, which every kernel module imports: an edit here
recompiles only the small stored-call kernels (see "Why stale code is impossible" there).
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numba

from kynemapy._jit import cache_dir

#: kernels whose first compilation takes long enough to announce: qualified name -> what the
#: user is told, and its CPU time measured on a 2-core machine [s]
ANNOUNCED: dict[str, tuple[str, float]] = {
    "run_task_at": ("the engine", 12.0),
    "element_phase": ("the element phase", 9.0),
    "constraint_phase": ("the constraint phase", 11.0),
    "assembly_phase": ("the constraint assembly", 4.0),
    "contact_phase": ("the contact kernels", 10.0),
    "beam_phase": ("the beam element kernels", 35.0),
    "body_joint_phase": ("the two-body joint kernels", 15.0),
    "sparse_phase": ("the sparse solver", 8.0),
    "pack_rows": ("the result-file kernels", 15.0),
}


def _marker(kernel: Any, signature: tuple[Any, ...]) -> Path | None:
    """The file that records that ``kernel`` was compiled into the cache for ``signature``."""
    folder = cache_dir(kernel.py_func.__module__)
    if folder is None:
        return None
    key = f"{kernel.py_func.__qualname__}\0{signature}\0{numba.__version__}\0{sys.version_info[:2]}"
    return Path(folder) / f"compiled-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


#: whether :func:`compile_announced` writes its line (``kynemapy compile`` draws a bar instead)
ANNOUNCE = threading.local()


def compile_announced(kernel: Any, signature: tuple[Any, ...]) -> Any:
    """``kernel.compile(signature)``; when the kernel is one of :data:`ANNOUNCED` and was never
    compiled into this cache for ``signature``, one line on stderr says so before, and how long
    it took after.  Loading from the cache prints nothing."""
    announced = ANNOUNCED.get(kernel.py_func.__qualname__)
    marker = _marker(kernel, signature) if announced is not None else None
    if marker is None or marker.exists() or signature in kernel.overloads:
        return kernel.compile(signature)
    if not getattr(ANNOUNCE, "on", True):
        compiled = kernel.compile(signature)
        _touch(marker)
        return compiled
    what, seconds = announced
    estimate = f"about {seconds / 60:.0f} min" if seconds >= 90 else f"about {seconds:.0f} s"
    sys.stderr.write(
        f"kynemapy: compiling {what} (once per install and version; {estimate} of CPU on a 2-core machine; "
        "`kynemapy compile` does it ahead) ... "
    )
    sys.stderr.flush()
    start = time.perf_counter()
    try:
        compiled = kernel.compile(signature)
    except BaseException:
        sys.stderr.write("failed\n")
        raise
    sys.stderr.write(f"done in {time.perf_counter() - start:.0f} s\n")
    sys.stderr.flush()
    _touch(marker)
    return compiled


def _touch(marker: Path) -> None:
    try:
        marker.touch()
    except OSError:  # a cache folder that became read-only: only the notice is affected
        pass


def is_cached(kernel: Any, signature: tuple[Any, ...]) -> bool:
    """Whether ``kernel`` (one of :data:`ANNOUNCED`) was compiled into this cache for
    ``signature`` (its marker exists), or already in this process."""
    if signature in kernel.overloads:
        return True
    marker = _marker(kernel, signature)
    return marker is None or marker.exists()


def announce(what: str, seconds: float) -> Any:
    """A context manager: one line on stderr, ``kynemapy: compiling <what> (...; about <seconds>
    s) ... done in N s``, around compilations whose own notices it silences."""
    return _Announcement(what, seconds)


class _Announcement:
    def __init__(self, what: str, seconds: float) -> None:
        self.what = what
        self.seconds = seconds
        self.start = 0.0
        self.was_on = True

    def __enter__(self) -> None:
        self.was_on = getattr(ANNOUNCE, "on", True)
        ANNOUNCE.on = False
        if self.was_on:
            estimate = f"about {self.seconds / 60:.0f} min" if self.seconds >= 90 else f"about {self.seconds:.0f} s"
            sys.stderr.write(
                f"kynemapy: compiling {self.what} (once per install and version; {estimate} on a 2-core "
                "machine; `kynemapy compile` does it ahead) ... "
            )
            sys.stderr.flush()
        self.start = time.perf_counter()

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        ANNOUNCE.on = self.was_on
        if self.was_on:
            sys.stderr.write("failed\n" if kind is not None else f"done in {time.perf_counter() - self.start:.0f} s\n")
            sys.stderr.flush()
