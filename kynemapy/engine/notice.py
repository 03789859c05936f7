"""The one-line notice of a long first compilation.

Two kinds of kernels: those compiled for an explicit signature (the engine's units,
:func:`compile_announced`, with a marker file that tells a compilation from a cache load
before it starts), and lazily typed ones, compiled by numba at their first call with the
types of its arguments (the hard contact kernels of :mod:`kynemapy.run`): for those,
:data:`LAZY_ANNOUNCED`, a listener of numba's ``numba:compile`` event (numba's event API),
which numba triggers only when it compiles, never for a cache load.

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
import numba.core.event

from kynemapy._jit import cache_dir, relaxed_collector

#: kernels whose first compilation takes long enough to announce: qualified name -> what the
#: user is told, and its CPU time measured on a 2-core machine [s]
ANNOUNCED: dict[str, tuple[str, float]] = {
    "run_task_at": ("the engine", 12.0),
    "element_phase": ("the element phase", 9.0),
    "constraint_phase": ("the constraint phase", 11.0),
    "assembly_phase": ("the constraint assembly", 4.0),
    "contact_phase": ("the contact kernels", 10.0),
    "beam_phase": ("the beam element kernels", 22.0),
    "beam_phase_full": ("the beam element kernels with damping and the exact tangent", 35.0),
    "body_joint_phase": ("the two-body joint kernels", 11.0),
    "body_joint_phase_full": ("the two-body joint kernels with drives and cone limits", 15.0),
    "sparse_phase": ("the sparse solver", 8.0),
    "held_solve": ("the solver for held nodes", 3.0),
    "pack_rows": ("the result-file kernels", 5.0),
}


#: lazily typed kernels whose first compilation takes long enough to announce: module and
#: qualified name -> what the user is told, and its CPU time measured on a 2-core machine [s]
LAZY_ANNOUNCED: dict[str, tuple[str, float]] = {
    "kynemapy.run.body_query.scene_contacts": ("the scene query of hard contact between bodies", 12.0),
    "kynemapy.run.body_blocks.solve_blocks": ("the hard body contact solver", 2.5),
    "kynemapy.run.body_blocks.friction_sweeps": ("the hard body friction sweeps", 0.5),
    "kynemapy.run.contact_newton.newton_contacts": ("the hard body contacts' Newton solver", 5.0),
    "kynemapy.run.nnls.lawson_hanson": ("the hard body contacts' exact programs", 2.5),
    "kynemapy.run.hard_contact.position_step": ("the hard contact correction", 6.5),
    "kynemapy.run.hard_contact.velocity_jump": ("the hard contact velocity jump", 2.5),
    # (the polish and the search each compile the least-norm solve and the residual inside them
    # when they come first: 4.5-5 s then, 1.3-3.2 s after the others)
    "kynemapy.run.contact_modes.coulomb_residual": ("Coulomb's residual of contacts through joints", 1.5),
    "kynemapy.run.contact_modes.polish": ("the Newton solver of contacts through joints", 5.0),
    "kynemapy.run.contact_modes.search_modes": ("the contact modes' search through joints", 5.0),
    # the sparse solver's fill-reducing ordering, when a model first gets the sparse solver
    "kynemapy.linalg.ordering._minimum_degree_kernel": ("the sparse solver's ordering", 5.0),
    # kynemapy.integrators (the seed cases' rigid-body schemes): every scheme's loop in one kernel,
    # each of its two variants (without and with a user's torque function: 13.5 and 10.5 s)
    "kynemapy.integrators.drive.run_scheme": ("the rigid-body schemes of kynemapy.integrators", 12.0),
    # the generalized-α step-size control's projection of its error estimate (with the dense LU)
    "kynemapy.run.local_error.project_dense": ("the step-size control's projection", 2.5),
}


def _marker(kernel: Any, signature: tuple[Any, ...]) -> Path | None:
    """The file that records that ``kernel`` was compiled into the cache for ``signature``.

    Keyed by the kernel's source file too: numba keeps the machine code of each source folder
    apart within one cache folder, so a second copy of the same sources (another clone or
    environment of the same version, sharing the user's cache) compiles its own, and must
    not find the first copy's marker (it then compiled without its notice)."""
    folder = cache_dir(kernel.py_func.__module__)
    if folder is None:
        return None
    source = kernel.py_func.__code__.co_filename
    key = f"{kernel.py_func.__qualname__}\0{signature}\0{numba.__version__}\0{sys.version_info[:2]}\0{source}"
    return Path(folder) / f"compiled-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


#: whether :func:`compile_announced` writes its line (``kynemapy compile`` draws a bar instead)
ANNOUNCE = threading.local()


class _OpenLine:
    """Whether a progress bar (:class:`kynemapy.run.progress.ProgressBar`) left a line on stderr
    without its newline: a notice then starts on a line of its own."""

    open = False


#: set by the progress bar while its line is open on stderr
OPEN_LINE = _OpenLine()


def _line_start() -> str:
    if OPEN_LINE.open:
        OPEN_LINE.open = False
        return "\n"
    return ""


def compile_announced(kernel: Any, signature: tuple[Any, ...]) -> Any:
    """``kernel.compile(signature)``; when the kernel is one of :data:`ANNOUNCED` and was never
    compiled into this cache for ``signature``, one line on stderr says so before, and how long
    it took after.  Loading from the cache prints nothing.  Either way with Python's garbage
    collector relaxed (:mod:`kynemapy._jit`: a cache load unpickles many objects too)."""
    with relaxed_collector():
        return _compile_announced(kernel, signature)


def _compile_announced(kernel: Any, signature: tuple[Any, ...]) -> Any:
    announced = ANNOUNCED.get(kernel.py_func.__qualname__)
    marker = _marker(kernel, signature) if announced is not None else None
    if marker is None or marker.exists() or signature in kernel.overloads:
        return kernel.compile(signature)
    if not getattr(ANNOUNCE, "on", True):
        compiled = kernel.compile(signature)
        _touch(marker)
        return compiled
    what, seconds = announced
    sys.stderr.write(
        f"{_line_start()}kynemapy: compiling {what} (once per install and version; {_estimate(seconds)} of CPU on a "
        "2-core machine; "
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


def _estimate(seconds: float) -> str:
    return f"about {seconds / 60:.0f} min" if seconds >= 90 else f"about {seconds:.0f} s"


class _LazyNotice(numba.core.event.Listener):
    """The one-line notice of a lazily typed kernel of :data:`LAZY_ANNOUNCED` compiling, as
    numba starts and ends it (not when a kernel compiles inside another's compilation, nor while
    :data:`ANNOUNCE` is off)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def on_start(self, event: Any) -> None:
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth or not getattr(ANNOUNCE, "on", True):
            return
        func = getattr(event.data.get("dispatcher"), "py_func", None)
        announced = LAZY_ANNOUNCED.get(f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', '')}")
        if announced is None:
            return
        what, seconds = announced
        sys.stderr.write(
            f"{_line_start()}kynemapy: compiling {what} (once per install and version; {_estimate(seconds)} of CPU on "
            "a 2-core "
            "machine; `kynemapy compile` does it ahead) ... "
        )
        sys.stderr.flush()
        self.local.start = time.perf_counter()

    def on_end(self, event: Any) -> None:
        self.local.depth = getattr(self.local, "depth", 1) - 1
        start = getattr(self.local, "start", None)
        if self.local.depth == 0 and start is not None:
            self.local.start = None
            # compiled: numba has added the overload for these argument types before the end event
            data = event.data or {}
            kernel = data.get("dispatcher")
            failed = kernel is None or tuple(data.get("args", ())) not in kernel.overloads
            sys.stderr.write("failed\n" if failed else f"done in {time.perf_counter() - start:.0f} s\n")
            sys.stderr.flush()


numba.core.event.register("numba:compile", _LazyNotice())


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
            sys.stderr.write(
                f"{_line_start()}kynemapy: compiling {self.what} (once per install and version; "
                f"{_estimate(self.seconds)} on a 2-core "
                "machine; `kynemapy compile` does it ahead) ... "
            )
            sys.stderr.flush()
        self.start = time.perf_counter()

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        ANNOUNCE.on = self.was_on
        if self.was_on:
            sys.stderr.write("failed\n" if kind is not None else f"done in {time.perf_counter() - self.start:.0f} s\n")
            sys.stderr.flush()
