"""The one numba decorator used by every kernel of the package.

``cache=True`` (compiled code is stored beside the sources and reused by later
processes), ``fastmath=False`` (IEEE semantics: Kynema's numbers are reproduced
to the last bits), ``error_model="numpy"`` (division by zero gives inf/nan,
which the stepper detects, instead of raising inside compiled code).

Set the environment variable ``KYNEMAPY_DISABLE_JIT=1`` to run every kernel as
plain Python (slow; useful for debugging and coverage).
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numba

JIT_DISABLED = os.environ.get("KYNEMAPY_DISABLE_JIT", "0") not in ("", "0", "false", "False")


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
            cache=True, fastmath=False, error_model="numpy", nogil=True, inline="always" if inline else "never"
        )(f)

    if func is None:
        return wrap
    return wrap(func)
