"""Compiled entry points found by argument types, without numba's per-call typing.

numba's dispatcher types every argument on every call; for the engine's Data (about 80
arrays) that is 0.6 ms.  :func:`entry` resolves a kernel's compiled entry point once per
argument types (typed by structure, :func:`_type_key`, and kept by the identities of numba's
interned types), and the callers keep it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import types as numba_types

from kynemapy.engine.notice import compile_announced

_ENTRIES: dict[tuple[Any, ...], Callable[..., Any]] = {}


#: numba types of the last few Data tuples seen, by identity: (the tuple itself, its type).
#: A Data's type never changes (its arrays are filled in place, never replaced), and numba
#: takes about 0.6 ms to type one (about 110 arrays); a run resolves several entry points.
_DATA_TYPES: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
_DATA_TYPES_KEPT = 8
#: numba types of large tuples by their structure (:func:`_type_key`): a new simulation's
#: Data (every ``workspace.data(...)`` is a new tuple) is typed in about 40 µs, not 0.6 ms
_TYPES_BY_KEY: dict[Any, Any] = {}
_data_types_lock = threading.Lock()

_INT64_MAX = 2**63 - 1


#: the type keys of large member tuples of the last few Data typed, by identity (with the tuple):
#: every Data of a workspace holds the same element tables (~90 arrays), typed once
_MEMBER_KEYS: dict[int, tuple[Any, Any]] = {}
_MEMBER_KEYS_KEPT = 8
#: a member tuple of at least this many members is kept
_KEPT_MEMBERS = 4


def _type_key(value: Any, depth: int = 0) -> Any:
    """What numba's ``typeof`` reads of ``value`` (a tuple of arrays, numbers and such tuples):
    equal keys give equal numba types.  None for a value with a leaf of another kind (then it is
    typed by numba each time)."""
    cls = type(value)
    if cls is np.ndarray:
        return (value.dtype, value.ndim, value.flags.num)
    if isinstance(value, tuple):
        kept = depth == 1 and len(value) >= _KEPT_MEMBERS
        if kept:
            hit = _MEMBER_KEYS.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
        keys = tuple(_type_key(v, depth + 1) for v in value)
        key = None if None in keys else (cls, keys)
        if kept:
            with _data_types_lock:
                while len(_MEMBER_KEYS) >= _MEMBER_KEYS_KEPT:
                    _MEMBER_KEYS.pop(next(iter(_MEMBER_KEYS)))
                _MEMBER_KEYS[id(value)] = (value, key)
        return key
    if cls is int:
        return (int, -_INT64_MAX - 1 <= value <= _INT64_MAX)
    if cls is float or cls is bool:
        return cls
    if isinstance(value, np.generic):
        return (cls, value.dtype)
    return None


def _typeof_by_key(kernel: Any, value: Any) -> Any:
    """numba's type of ``value``, found by its structure (:func:`_type_key`) once numba has typed
    a value like it."""
    key = _type_key(value)
    typ = _TYPES_BY_KEY.get(key) if key is not None else None
    if typ is None:
        typ = kernel.typeof_pyval(value)
        if key is not None:
            with _data_types_lock:
                if len(_TYPES_BY_KEY) >= 256:  # a long sweep over many kinds of models: start again
                    _TYPES_BY_KEY.clear()
                _TYPES_BY_KEY[key] = typ
    return typ


#: numba's type of a numba type passed as an argument (a ``TypeRef``, as the Data's type is to
#: the units), by the identity of the type: making the TypeRef hashes the Data's ~2000 nested
#: types (1.4 ms); kept with the type, so that its id stays its own
_TYPE_REFS: dict[int, tuple[Any, Any]] = {}


def _typeof(kernel: Any, value: Any) -> Any:
    if isinstance(value, numba_types.Type):
        with _data_types_lock:
            hit = _TYPE_REFS.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        typ = kernel.typeof_pyval(value)
        with _data_types_lock:
            if len(_TYPE_REFS) >= 64:
                _TYPE_REFS.clear()
            _TYPE_REFS[id(value)] = (value, typ)
        return typ
    if not (isinstance(value, tuple) and len(value) > 16):
        return _typeof_by_key(kernel, value)
    with _data_types_lock:
        hit = _DATA_TYPES.get(id(value))
        if hit is not None and hit[0] is value:
            _DATA_TYPES.move_to_end(id(value))
            return hit[1]
    typ = _typeof_by_key(kernel, value)
    with _data_types_lock:
        _DATA_TYPES[id(value)] = (value, typ)
        while len(_DATA_TYPES) > _DATA_TYPES_KEPT:
            _DATA_TYPES.popitem(last=False)
    return typ


#: entry points by kernel and the identities of their argument types: numba interns its types
#: (equal types are one object), and hashing a Data's type (about 2000 nested types) took
#: 1.4 ms per simulation.  The types are kept with the entry, so that their ids stay theirs.
_ENTRIES_BY_ID: dict[tuple[Any, ...], tuple[tuple[Any, ...], Callable[..., Any]]] = {}


def argument_types(kernel: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """numba's types of ``args`` for the compiled ``kernel`` (a numba dispatcher), found by
    structure where numba has typed a value like it (see :func:`_type_key`)."""
    return tuple(_typeof(kernel, a) for a in args)


def entry(kernel: Any, args: tuple[Any, ...]) -> Callable[..., Any]:
    """The compiled entry point of ``kernel`` for the types of ``args`` (compiled on first use);
    the kernel itself when compilation is disabled (``KYNEMAPY_DISABLE_JIT=1``)."""
    if not hasattr(kernel, "compile"):
        return kernel
    sig = argument_types(kernel, args)
    ids = (kernel, *map(id, sig))
    hit = _ENTRIES_BY_ID.get(ids)
    if hit is not None and all(a is b for a, b in zip(hit[0], sig, strict=True)):
        return hit[1]
    key = (kernel, sig)
    fn = _ENTRIES.get(key)
    if fn is None:
        fn = _ENTRIES[key] = compile_announced(kernel, sig)
    _ENTRIES_BY_ID[ids] = (sig, fn)
    return fn


def call(kernel: Any, *args: Any) -> Any:
    """Call a compiled kernel through its resolved entry point."""
    return entry(kernel, args)(*args)
