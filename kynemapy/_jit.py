"""The one numba decorator used by every kernel of the package.

``cache=True`` (compiled code is stored beside the sources and reused by later
processes), ``fastmath=False`` (IEEE semantics: Kynema's numbers are reproduced
to the last bits), ``error_model="numpy"`` (division by zero gives inf/nan,
which the stepper detects, instead of raising inside compiled code), and
``_nrt=False``: no kernel may allocate (numba refuses to compile one that does),
and array views cost no atomic reference counting, which otherwise took about a
quarter of the step time.

Set the environment variable ``KYNEMAPY_DISABLE_JIT=1`` to run every kernel as
plain Python (slow; useful for debugging and coverage).

Cache freshness: numba invalidates a cached function only when *its own* source
file changes, yet our kernels inline functions from other modules.  The package's
cache locators below stamp every kynemapy kernel with a hash of all the package's
sources, so editing any module recompiles every kernel instead of reusing stale
machine code (except ``validation/`` and ``analytic/``: numpy/scipy code no kernel uses).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.core import caching

JIT_DISABLED = os.environ.get("KYNEMAPY_DISABLE_JIT", "0") not in ("", "0", "false", "False")


_PACKAGE_DIR = Path(__file__).resolve().parent


#: subpackages of plain numpy/scipy code that no kernel imports (validation cases, closed-form
#: references): editing them must not invalidate the compiled kernels
_NOT_KERNEL_SOURCES = ("validation", "analytic")


def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        if path.relative_to(_PACKAGE_DIR).parts[0] in _NOT_KERNEL_SOURCES:
            continue
        digest.update(str(path.relative_to(_PACKAGE_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


SOURCE_HASH = _source_hash()


def _in_package(py_file: str) -> bool:
    try:
        return Path(py_file).resolve().is_relative_to(_PACKAGE_DIR)
    except (OSError, ValueError):
        return False


class _PackageInTreeLocator(caching.InTreeCacheLocator):
    """In-tree ``__pycache__`` cache of kynemapy kernels, stamped with the package source hash."""

    def get_source_stamp(self) -> str:
        return SOURCE_HASH

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        return super().from_function(py_func, py_file) if _in_package(py_file) else None


class _PackageUserWideLocator(caching.UserWideCacheLocator):
    """User-wide cache (read-only installs), stamped with the package source hash."""

    def get_source_stamp(self) -> str:
        return SOURCE_HASH

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        return super().from_function(py_func, py_file) if _in_package(py_file) else None


for _locator in (_PackageUserWideLocator, _PackageInTreeLocator):
    if _locator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, _locator)


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
        return numba.njit(
            cache=True,
            fastmath=False,
            error_model="numpy",
            nogil=True,
            inline="always" if inline else "never",
            _nrt=False,
        )(f)

    if func is None:
        return wrap
    return wrap(func)
