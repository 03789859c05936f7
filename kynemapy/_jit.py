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
editable install or a read-only one).  The cache lives in ``<base>/<SOURCE_HASH>/``,
with ``<base>`` the first of these that can be created and written:

1. ``$NUMBA_CACHE_DIR/kynemapy`` when the user chose numba's cache directory (the
   environment variable, or ``numba.config.CACHE_DIR`` set before kynemapy is imported);
2. the user cache folder: ``$XDG_CACHE_HOME/kynemapy``, else ``~/.cache/kynemapy``
   (``~/Library/Caches/kynemapy`` on macOS, ``%LOCALAPPDATA%\\kynemapy`` on Windows);
3. a private per-user temporary folder, ``<tempdir>/kynemapy-<uid>`` (created with
   mode 0700; refused if it is not a directory owned by the user and closed to others).

If none is writable, the kernels are compiled without caching (one warning, no error).
To choose the location, set ``NUMBA_CACHE_DIR`` (or ``XDG_CACHE_HOME``); to clear the
cache, delete the folder.  Only the few most recently used ``<SOURCE_HASH>`` folders
are kept: older ones (unused for an hour) are deleted when a new one is created.

How: numba's documented ``NUMBA_CACHE_DIR`` setting, ``numba.config.CACHE_DIR``.
numba picks a function's cache locator, and with it the cache folder, once, when
``numba.njit(cache=True)`` decorates it; :func:`njit` sets ``numba.config.CACHE_DIR``
to kynemapy's folder around that call only and restores the previous value at once,
so other libraries' caches are unaffected.  (Should ``NUMBA_CACHE_LOCATOR_CLASSES``
be set, it is likewise cleared around the call, so that numba's default locator list,
which reads ``CACHE_DIR`` first, applies to kynemapy's kernels.)

Why stale code is impossible
----------------------------
numba invalidates a cached function only when *its own* source file changes, yet our
kernels call (and inline) functions from other modules.  ``SOURCE_HASH`` is a hash of
all the package's sources, and it names the cache folder: editing any module gives a
new, empty folder, so every kernel is recompiled instead of reusing stale machine code.
Excluded from the hash are ``validation/`` and ``analytic/``: numpy/scipy code that no
kernel uses.  Within one folder numba still checks each function's own file and the
numba version, as usual.
"""

from __future__ import annotations

import functools
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

JIT_DISABLED = os.environ.get("KYNEMAPY_DISABLE_JIT", "0") not in ("", "0", "false", "False")


_PACKAGE_DIR = Path(__file__).resolve().parent


#: subpackages of plain numpy/scipy code that no kernel imports (validation cases, closed-form
#: references): editing them must not invalidate the compiled kernels
_NOT_KERNEL_SOURCES = ("validation", "analytic")


def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(_PACKAGE_DIR)
        if relative.parts[0] in _NOT_KERNEL_SOURCES:
            continue
        source = path.read_bytes()
        digest.update(f"{relative.as_posix()}\0{len(source)}\0".encode())
        digest.update(source)
    return digest.hexdigest()[:16]


#: hash of the package's kernel sources; names the cache folder of this version of the code
SOURCE_HASH = _source_hash()

#: number of most recently used source-hash folders kept in a cache base folder
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


def _usable_dir(path: Path, *, private: bool) -> bool:
    """Create ``path`` if needed and check that this process can write into it."""
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
def _cache_dir() -> str | None:
    """The folder of this version's compiled kernels, or None when no folder is writable."""
    for base, private in _base_candidates():
        if not _usable_dir(base, private=private):
            continue
        folder = base / SOURCE_HASH
        is_new = not folder.exists()
        if not _usable_dir(folder, private=False):
            continue
        try:
            os.utime(folder)  # marks the folder as recently used for _prune
        except OSError:
            pass
        if is_new:
            _prune(base, folder)
        return str(folder)
    warnings.warn(
        "kynemapy: no writable cache folder (tried NUMBA_CACHE_DIR, the user cache folder and the "
        "temporary folder); numba kernels are compiled without on-disk caching",
        RuntimeWarning,
        stacklevel=2,
    )
    return None


_OPTIONS: dict[str, Any] = {"fastmath": False, "error_model": "numpy", "nogil": True, "_nrt": False}


def _compile(f: Callable[..., Any], inline: bool) -> Any:
    options = dict(_OPTIONS, inline="always" if inline else "never")
    cache_dir = None if numba.config.DISABLE_JIT else _cache_dir()
    if cache_dir is None:
        return numba.njit(cache=False, **options)(f)
    config = numba.config
    with _config_lock:
        saved_dir = config.CACHE_DIR
        saved_locators = getattr(config, "CACHE_LOCATOR_CLASSES", None)
        config.CACHE_DIR = cache_dir
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
