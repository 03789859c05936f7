"""The one numba decorator used by every kernel of the package.

``cache=True`` (compiled code is stored on disk and reused by later processes, see
below), ``fastmath=False`` (IEEE semantics: Kynema's numbers are reproduced to the
last bits), ``error_model="numpy"`` (division by zero gives inf/nan, which the
stepper detects, instead of raising inside compiled code), and ``_nrt=False``: no
kernel may allocate (numba refuses to compile one that does), and array views cost
no atomic reference counting, which otherwise took about a quarter of the step time.

Set the environment variable ``KYNEMAPY_DISABLE_JIT=1`` to run every kernel as
plain Python (slow; useful for debugging and coverage).

Where the compiled code is cached
---------------------------------
Never inside the package tree (no ``.nbi``/``.nbc`` files beside the sources, in an
editable install or a read-only one).  The cache lives in ``<base>/<module>/<hash>/``
(see below),
with ``<base>`` the first of these that can be created and written:

1. ``$NUMBA_CACHE_DIR/kynemapy`` when the user chose numba's cache directory (the
   environment variable, or ``numba.config.CACHE_DIR`` set before kynemapy is imported);
2. the user cache folder: ``$XDG_CACHE_HOME/kynemapy``, else ``~/.cache/kynemapy``
   (``~/Library/Caches/kynemapy`` on macOS, ``%LOCALAPPDATA%\\kynemapy`` on Windows);
3. a private per-user temporary folder, ``<tempdir>/kynemapy-<uid>`` (created with
   mode 0700; refused if it is not a directory owned by the user and closed to others).

If none is writable, the kernels are compiled without caching (one warning, no error).
To choose the location, set ``NUMBA_CACHE_DIR`` (or ``XDG_CACHE_HOME``); to clear the
cache, delete the folder.

How: numba's documented ``NUMBA_CACHE_DIR`` setting, ``numba.config.CACHE_DIR``.
numba picks a function's cache locator, and with it the cache folder, once, when
``numba.njit(cache=True)`` decorates it; :func:`njit` sets ``numba.config.CACHE_DIR``
to kynemapy's folder around that call only and restores the previous value at once,
so other libraries' caches are unaffected.  (Should ``NUMBA_CACHE_LOCATOR_CLASSES``
be set, it is likewise cleared around the call, so that numba's default locator list,
which reads ``CACHE_DIR`` first, applies to kynemapy's kernels.)

Why stale code is impossible, and why an edit recompiles only what depends on it
---------------------------------------------------------------------------------
numba invalidates a cached function only when *its own* source file changes, yet our
kernels call (and inline) functions from other modules.  Each kernel is therefore cached in
``<base>/<module>/<hash>/``, where ``<module>`` is the module that defines it and
``<hash>`` a hash of the sources of that module and of every kynemapy module it imports,
directly or through others (:func:`import_closure`, read from the ``import`` statements).
A kernel can only call code its module reaches through those imports, so editing any
module it depends on gives a new, empty folder and a recompilation, never stale machine
code; editing a module it does not depend on (the command line, result files, the model
builder, the validation cases) leaves its compiled code in use.  Within one folder numba
still checks the function's own file and the numba version, as usual.  Only the few most
recently used ``<hash>`` folders of each module are kept: older ones (unused for an hour)
are deleted when a new one is created.

The garbage collector while numba compiles
------------------------------------------

numba's compilation allocates millions of short-lived Python objects (IR, types, LLVM
wrappers), and CPython's collector runs a collection every 700 net allocations, each older
generation's after ten of the younger: on a heap holding a compiled engine, the full
collections walk every object again and again.  Measured on the 2-core machine
(``bench/compile.py``'s every-kind process, one compiling process): 7 364 collections took
12-14 s of its 68-79 s of CPU.  While anything compiles (numba's documented event API,
``numba:compile``) or the engine's compiled code is loaded from the cache
(:func:`relaxed_collector` around it), the thresholds are raised to :data:`RELAXED` (at
least): the young objects are still collected, the full collections are rare.  Measured in
the same process: 228 collections, 3.0 s; the peak memory 590 MB instead of 486 MB
(100 000 / 50 / 1 000: 45 collections, 2.5 s, but 728 MB).  The user's
thresholds come back when the outermost compilation or load ends; a collector the user
switched off (threshold 0) is left alone.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numba
import numba.core.event

JIT_DISABLED = os.environ.get("KYNEMAPY_DISABLE_JIT", "0") not in ("", "0", "false", "False")


_PACKAGE_DIR = Path(__file__).resolve().parent


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]+))", re.MULTILINE
)


@functools.cache
def _package_modules() -> dict[str, str]:
    """Every module of the package: dotted name -> source file path (``os.walk`` and plain
    strings: pathlib's ``rglob`` took 20 ms of every start, a ``Path`` per file 4 ms)."""
    modules = {}
    root = str(_PACKAGE_DIR.parent)
    for folder, subfolders, files in os.walk(_PACKAGE_DIR):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        package = os.path.relpath(folder, root).replace(os.sep, ".")
        for name in files:
            if name.endswith(".py"):
                stem = name[:-3]
                modules[package if stem == "__init__" else f"{package}.{stem}"] = os.path.join(folder, name)
    return modules


def _import_statements(source: str) -> Iterator[tuple[str | None, ...]]:
    """The groups of every match of ``_IMPORT`` in ``source``, in order: the regex is tried only
    at the starts of the lines that contain ``import`` (every match has it on its first line),
    which finds the same matches as scanning every line, six times faster."""
    tried = -1
    i = source.find("import")
    while i >= 0:
        start = source.rfind("\n", 0, i) + 1
        if start != tried:
            tried = start
            match = _IMPORT.match(source, start)
            if match is not None:
                yield match.groups()
        i = source.find("import", i + 6)


def _direct_imports(name: str, source: str, modules: dict[str, str]) -> set[str]:
    """The package's modules that ``import`` statements of module ``name`` name (absolute or
    relative; ``from a.b import c`` names ``a.b`` and, when it is a module, ``a.b.c``)."""
    found = set()
    is_package = os.path.basename(modules[name]) == "__init__.py"
    for from_module, names, plain in _import_statements(source):
        if plain is not None:
            found.update(alias.split()[0] for alias in plain.split(",") if alias.split())
            continue
        dots = len(from_module) - len(from_module.lstrip("."))
        if dots:
            package = name.split(".") if is_package else name.split(".")[:-1]
            package = package[: len(package) - (dots - 1)]
            from_module = ".".join([*package, *([from_module.lstrip(".")] if from_module.lstrip(".") else [])])
        found.add(from_module)
        for alias in names.strip("()").replace("\n", " ").split(","):
            words = alias.split()
            if words:
                found.add(f"{from_module}.{words[0]}")
    return {module for module in found if module in modules and module != name}


@functools.cache
def _source(name: str) -> bytes:
    """The source of module ``name`` (read once, when a closure first reaches it)."""
    with open(_package_modules()[name], "rb") as source:
        return source.read()


@functools.cache
def _imports(name: str) -> frozenset[str]:
    """The package's modules that module ``name`` imports directly."""
    return frozenset(_direct_imports(name, _source(name).decode("utf-8", "replace"), _package_modules()))


def import_closure(module: str) -> frozenset[str]:
    """``module`` and every module of the package it imports, directly or through others
    (only the modules reached are read: a kernel module's closure is about a third of the
    package)."""
    modules = _package_modules()
    seen: set[str] = set()
    stack = [module]
    while stack:
        name = stack.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        stack.extend(_imports(name))
    return frozenset(seen)


@functools.cache
def _source_digest(name: str) -> bytes:
    """SHA-256 of module ``name``'s source (each source hashed once per process: the closures of
    the 34 kernel modules overlap, and hashing each closure's sources whole took 20 ms of every
    warm start)."""
    return hashlib.sha256(_source(name)).digest()


@functools.cache
def source_hash(module: str) -> str:
    """Hash of the sources of ``module``'s :func:`import_closure` (names its kernels' cache folder):
    SHA-256 over each module's name and the SHA-256 of its source, in the order of the names."""
    digest = hashlib.sha256()
    for name in sorted(import_closure(module) | {__name__}):
        digest.update(f"{name}\0".encode())
        digest.update(_source_digest(name))
    return digest.hexdigest()[:16]


#: number of most recently used source-hash folders kept per module
_KEEP_VERSIONS = 4
#: a folder used (created or its package imported) this recently is never deleted [s]
_KEEP_RECENT_S = 3600.0
_HASH_NAME = re.compile(r"[0-9a-f]{16}")

_config_lock = threading.Lock()


def _user_cache_home() -> Path | None:
    """The platform's per-user cache folder, or None when it cannot be determined."""
    try:
        if sys.platform == "win32":
            local = os.environ.get("LOCALAPPDATA")
            return Path(local) if local else Path.home() / "AppData" / "Local"
        if sys.platform == "darwin":
            return Path.home() / "Library" / "Caches"
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        # the XDG specification ignores relative paths
        return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    except (RuntimeError, KeyError, OSError):  # no home directory
        return None


def _private_temp_base() -> Path:
    if hasattr(os, "getuid"):
        owner = str(os.getuid())
    else:
        try:
            import getpass

            owner = getpass.getuser()
        except Exception:
            owner = "user"
    return Path(tempfile.gettempdir()) / f"kynemapy-{owner}"


def _base_candidates() -> list[tuple[Path, bool]]:
    """``(base folder, must be private)`` in order of preference."""
    candidates = []
    chosen = numba.config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR", "")
    if chosen:
        candidates.append((Path(chosen).expanduser().absolute() / "kynemapy", False))
    home = _user_cache_home()
    if home is not None:
        candidates.append((home.expanduser().absolute() / "kynemapy", False))
    candidates.append((_private_temp_base(), True))
    return candidates


@functools.cache
def _usable_base(path: Path, private: bool) -> bool:
    """:func:`_usable_dir` of a base folder, probed once per process."""
    return _usable_dir(path, private=private)


def _usable_dir(path: Path, *, private: bool, probe: bool = True) -> bool:
    """Create ``path`` if needed and check that this process can write into it (``probe``: by
    creating a file there; else by its permissions, for a folder inside a probed base)."""
    if not probe:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False
        return os.access(path, os.W_OK | os.X_OK)
    try:
        path.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
        if private and hasattr(os, "getuid"):
            # a shared temporary folder: refuse a folder (or link) planted by another user,
            # since numba unpickles what it finds in the cache
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
                return False
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _prune(base: Path, current: Path) -> None:
    """Delete the cache folders of old sources: all but the ``_KEEP_VERSIONS`` most recently
    used, and none used in the last ``_KEEP_RECENT_S`` seconds.

    Safe beside other processes: numba treats a missing index or data file as a cache miss,
    and recreates its folder before saving.
    """
    try:
        folders = [
            (entry.stat(follow_symlinks=False).st_mtime, Path(entry.path))
            for entry in os.scandir(base)
            if _HASH_NAME.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)
        ]
    except OSError:
        return
    folders.sort(reverse=True)
    now = time.time()
    for mtime, folder in folders[_KEEP_VERSIONS:]:
        if folder != current and now - mtime > _KEEP_RECENT_S:
            shutil.rmtree(folder, ignore_errors=True)


@functools.cache
def _warn_uncached() -> None:
    warnings.warn(
        "kynemapy: no writable cache folder (tried NUMBA_CACHE_DIR, the user cache folder and the "
        "temporary folder); numba kernels are compiled without on-disk caching",
        RuntimeWarning,
        stacklevel=4,
    )


@functools.cache
def cache_dir(module: str) -> str | None:
    """The folder of the compiled kernels of ``module`` at its current sources (and those of the
    modules it imports), or None (one warning) when no folder is writable."""
    for base, private in _base_candidates():
        if not _usable_base(base, private):
            continue
        folder = base / module / source_hash(module)
        is_new = not folder.exists()
        if not _usable_dir(folder, private=False, probe=False):
            continue
        try:
            os.utime(folder)  # marks the folder as recently used for _prune
        except OSError:
            pass
        if is_new:
            _prune(folder.parent, folder)
            _prune(base, folder)  # folders of the earlier layout, <base>/<hash of every source>
        return str(folder)
    _warn_uncached()
    return None


_OPTIONS: dict[str, Any] = {"fastmath": False, "error_model": "numpy", "nogil": True, "_nrt": False}


def _compile(f: Callable[..., Any], inline: bool) -> Any:
    options = dict(_OPTIONS, inline="always" if inline else "never")
    folder = None if numba.config.DISABLE_JIT else cache_dir(f.__module__)
    if folder is None:
        return numba.njit(cache=False, **options)(f)
    config = numba.config
    with _config_lock:
        saved_dir = config.CACHE_DIR
        saved_locators = getattr(config, "CACHE_LOCATOR_CLASSES", None)
        config.CACHE_DIR = folder
        if saved_locators:
            config.CACHE_LOCATOR_CLASSES = ""
        try:
            # the dispatcher chooses its cache locator (and folder) here, not at compilation
            return numba.njit(cache=True, **options)(f)
        finally:
            config.CACHE_DIR = saved_dir
            if saved_locators:
                config.CACHE_LOCATOR_CLASSES = saved_locators


def njit(func: Callable[..., Any] | None = None, *, inline: bool = False) -> Any:
    """Compile ``func`` lazily (on its first call) with the package's options.

    ``inline=True`` inlines the function into its callers at numba-IR level; used
    for the stages that take whole Model/State/Workspace tuples, whose call
    boundaries would otherwise pass hundreds of array descriptors per call.
    """

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        if JIT_DISABLED:
            f.py_func = f  # type: ignore[attr-defined]
            return f
        return _compile(f, inline)

    if func is None:
        return wrap
    return wrap(func)


#: the thresholds while compiling or loading: (young, middle, old generation)
RELAXED = (20_000, 20, 100)

_collector_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


def relax() -> None:
    """Raise the collector's thresholds to at least :data:`RELAXED` (nested calls count)."""
    global _depth, _saved
    with _collector_lock:
        if _depth == 0:
            current = gc.get_threshold()
            if current[0] > 0:
                _saved = current
                gc.set_threshold(*(max(c, r) for c, r in zip(current, RELAXED, strict=True)))
        _depth += 1


def restore() -> None:
    """Undo one :func:`relax`; the outermost gives the collector its thresholds back."""
    global _depth, _saved
    with _collector_lock:
        _depth = max(_depth - 1, 0)
        if _depth == 0 and _saved is not None:
            gc.set_threshold(*_saved)
            _saved = None


@contextmanager
def relaxed_collector() -> Iterator[None]:
    """``with relaxed_collector():`` the collector relaxed inside (:func:`relax`)."""
    relax()
    try:
        yield
    finally:
        restore()


class _Compiling(numba.core.event.Listener):
    """Relaxes the collector from the start of each numba compilation to its end."""

    def on_start(self, event: Any) -> None:
        relax()

    def on_end(self, event: Any) -> None:
        restore()


numba.core.event.register("numba:compile", _Compiling())
