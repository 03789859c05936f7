"""A compiled call whose arguments are stored once, in native form: the cheap way into the engine.

numba's wrapper converts every argument of a compiled function from Python on each call; the
engine's :class:`~kynemapy.engine.fields.Data` holds about 80 arrays, and converting them cost
1.7 µs of every ``Simulation.step()`` (a step of the heavy top takes 4 µs).  A
:class:`StoredCall` converts the arguments of :func:`~kynemapy.engine.entry.run_task` once,
keeps the native values (array descriptors: data pointers, shapes, strides) in an int64
*blob*, and calls ``run_task``'s compiled code through its address with them: a call then
converts two or three arguments.

The machine code that runs is ``run_task``'s own, compiled and cached once: the small entry
points here (:func:`stored_status`, :func:`stored_with`) call it through its address (numba's
*wrapper address protocol*, as for first-class functions), so it is neither compiled again nor
optimized into them, and ``step()`` and ``advance()`` share it.

The stored descriptors point into the arrays of the arguments, which the :class:`StoredCall`
keeps alive; they stay valid as long as those arrays are not replaced (the engine's arrays are
views into fixed arenas, written in place; a simulation whose arrays change makes a new
:class:`StoredCall`).
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any

import numpy as np
from numba import types

from kynemapy._arena import view_pointer
from kynemapy._jit import JIT_DISABLED, njit
from kynemapy.engine.entry import ADVANCE, run_task_at
from kynemapy.engine.lookup import argument_types, entry
from kynemapy.engine.native import call_stored, call_stored_data

#: array descriptors already written, by the array's identity (with a weak reference that
#: checks it): a simulation stores the same views in several calls, and reading an array's
#: data pointer costs about 1.5 µs (0.2 ms for a Data's ~140 leaves)
_DESCRIPTORS: dict[int, tuple[weakref.ref[np.ndarray], list[int]]] = {}
_DESCRIPTORS_KEPT = 8192


def _words(value: Any) -> list[int]:
    """The native value of one leaf of the Data as int64 words: an int64, or an array's
    descriptor as numba's wrapper makes it for a kernel compiled without reference counting
    (meminfo 0, parent the array object, item count, item size [bytes], data pointer, shape,
    strides [bytes])."""
    if isinstance(value, np.ndarray):
        hit = _DESCRIPTORS.get(id(value))
        if hit is not None and hit[0]() is value:
            return hit[1]
        words = [0, id(value), value.size, value.itemsize, view_pointer(value), *value.shape, *value.strides]
        if len(_DESCRIPTORS) >= _DESCRIPTORS_KEPT:
            _DESCRIPTORS.clear()
        _DESCRIPTORS[id(value)] = (weakref.ref(value), words)
        return words
    if (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, np.int64):
        return [int(value)]  # (numba's int64; another integer type's native value is not a word)
    raise TypeError(f"kynemapy: a stored leaf that is neither an array nor an int64: {type(value).__name__}")


#: the words of the last few trees stored, by the tree's identity (with the tree, so that its id
#: stays its own): a simulation's set-up stores one Data in two or three calls, and walking a
#: Data's ~140 leaves costs about 0.4 ms (a tuple and its arrays never change: the words stay
#: valid).  The Data's large members are kept too: every Data of a workspace holds the same
#: element tables (~90 arrays), so a new Data of it walks only its other leaves.
_TREE_WORDS: dict[int, tuple[Any, list[int]]] = {}
_TREE_WORDS_KEPT = 8
#: a member tuple of at least this many words is kept with the tree
_KEPT_MEMBER_WORDS = 64


def leaf_words(value: Any) -> list[int]:
    """Every leaf of ``value``, a tree of tuples (the :class:`~kynemapy.engine.fields.Data`)
    whose leaves are arrays and int64s, as int64 words in order (see :func:`store_data`)."""
    if not isinstance(value, tuple):
        return _words(value)
    return _tuple_words(value, 0)


def _tuple_words(value: tuple[Any, ...], depth: int) -> list[int]:
    """:func:`leaf_words` of the tuple ``value`` (``depth`` 0: the tree itself), in order."""
    hit = _TREE_WORDS.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    words: list[int] = []
    for item in value:
        words += _tuple_words(item, depth + 1) if isinstance(item, tuple) else _words(item)
    if depth == 0 or (depth == 1 and len(words) >= _KEPT_MEMBER_WORDS):
        while len(_TREE_WORDS) >= _TREE_WORDS_KEPT:
            _TREE_WORDS.pop(next(iter(_TREE_WORDS)))
        _TREE_WORDS[id(value)] = (value, words)
    return words


def store_data(value: Any, blob: np.ndarray, word: int) -> int:
    """Store the native value of ``value``, a tree of tuples (the
    :class:`~kynemapy.engine.fields.Data`, or the call's other arguments) whose leaves are
    arrays and int64s, into ``blob`` (int64, 1-D) from word ``word`` on, where it fits (else
    nothing); returns its size in bytes.

    Written from Python, leaf by leaf, without a compiled function: numba's wrapper of a
    function that takes the whole Data converts its ~140 leaves and took 3.6-4.2 s of LLVM at
    its first compilation, and one small compiled store per leaf type cost eleven cache loads
    at every start (the last one, of the other arguments, 4-5 ms of every start).  The native
    value of a tuple is the structure of its members' native values in order, and every leaf's
    is a whole number of 8-byte words (an int64, or an array's descriptor: pointers and int64s),
    so the members lie one after the other with no padding.
    tests/unit/test_stored_call.py checks the words against numba's own conversion of the whole
    Data and of the other arguments (one compiled call each), word for word.
    """
    return _write(leaf_words(value), blob, word)


def store_arguments(arguments: tuple[Any, ...], blob: np.ndarray, word: int) -> int:
    """:func:`store_data` of the call's arguments after the Data (a fresh tuple at every call:
    its words are not kept, as a Data's are)."""
    words: list[int] = []
    for item in arguments:
        words += leaf_words(item)
    return _write(words, blob, word)


def _write(words: list[int], blob: np.ndarray, word: int) -> int:
    if 0 <= word and word + len(words) <= blob.shape[0]:
        blob[word : word + len(words)] = words
    return 8 * len(words)


#: raised when ``run_task`` raised inside compiled code (numba's C-ABI wrapper then reports the
#: exception on stderr and returns zeros: a step that did nothing with a "converged" status)
FAILED = "kynemapy: the compiled step raised an error (reported above); the state may be partly updated"


@njit
def stored_status(blob, args_ref):
    """``run_task(*arguments)[2]`` with every argument stored in ``blob`` (see :class:`StoredCall`);
    the stored call must ask for at least one step."""
    steps, _, status = call_stored(blob, args_ref)
    if steps == 0 and status == 0:
        raise RuntimeError(FAILED)
    return status


@njit
def stored_with(blob, args_ref, p, task, n, every, rows, max_rows, iterations, out):
    """``run_task(d, p, task, n, every, rows, max_rows, iterations, out)`` with ``d`` the Data
    stored in ``blob`` (see :class:`StoredCall`)."""
    result = call_stored_data(blob, args_ref, p, task, n, every, rows, max_rows, iterations, out)
    if task == ADVANCE and n > 0 and result[0] == 0 and result[2] == 0:
        raise RuntimeError(FAILED)
    return result


class StoredCall:
    """``run_task`` with its arguments converted once (see the module's description).

    Parameters
    ----------
    kernel
        ``run_task`` (a numba dispatcher): it gives the arguments' numba types and, in plain
        Python (``KYNEMAPY_DISABLE_JIT``), runs the call; compiled code never runs it (the Data
        is stored leaf by leaf, :func:`store_data`).
    arguments : tuple
        Its arguments ``(d, p, task, n, every, rows, max_rows, iterations, out)``: ``d`` a
        :class:`~kynemapy.engine.fields.Data`; kept alive by this object.
    at_kernel
        The compiled function the stored call runs: ``kernel``'s twin that takes ``d`` by its
        address and type, ``(d_at, d_type, p, task, ...)`` (default: ``run_task_at``).  The
        Data stays in the blob and is passed by its address, never copied.

    Attributes
    ----------
    status : callable
        ``status()``: run the stored call, return its status (``run_task(*arguments)[2]``).
    blob : (W,) int64
        The stored call: ``run_task``'s address, then the native value of every argument.
    args_ref : numba TypeRef
        The stored arguments' types, as the compiled callers of a blob take them.
    run : callable
        ``run(p, task, n, every, rows, max_rows, iterations, out)``: ``run_task`` with the stored
        ``d`` and these arguments (of the stored arguments' types); returns ``run_task``'s
        ``(steps_done, rows_recorded, status)``.
    data_at : int
        The address of the stored Data (in ``blob``), for compiled functions that take the Data
        by its address and type (plain Python, ``KYNEMAPY_DISABLE_JIT``: the Data itself).
    data_type : numba type
        The stored Data's numba type (plain Python: None).
    """

    __slots__ = ("args_ref", "arguments", "blob", "data_at", "data_type", "run", "status")

    def __init__(self, kernel: Any, arguments: tuple[Any, ...], at_kernel: Any = None) -> None:
        if arguments[2] != ADVANCE or arguments[3] < 1:
            raise ValueError("StoredCall: the stored call must be an ADVANCE of at least one step")
        self.arguments = arguments
        if JIT_DISABLED:  # plain Python: nothing to store
            compiled = entry(kernel, arguments)
            self.blob = np.zeros(0, dtype=np.int64)
            self.args_ref = None
            self.status = lambda: compiled(*arguments)[2]
            self.run = functools.partial(compiled, arguments[0])
            self.data_at = arguments[0]
            self.data_type = None
            return
        at_kernel = run_task_at if at_kernel is None else at_kernel
        address, data_bytes, rest_bytes, args_ref, status, with_data = _prepare(kernel, arguments, at_kernel)
        rest_word = 1 + (data_bytes + 7) // 8
        blob = np.zeros(rest_word + (rest_bytes + 7) // 8, dtype=np.int64)
        stored_data = store_data(arguments[0], blob, 1)
        stored_rest = store_arguments(arguments[1:], blob, rest_word)
        if stored_data != data_bytes or stored_rest != rest_bytes:  # pragma: no cover
            raise RuntimeError("kynemapy: the stored call's size changed")
        blob[0] = address
        self.blob = blob
        self.args_ref = args_ref
        self.status = functools.partial(status, blob, args_ref)
        self.run = functools.partial(with_data, blob, args_ref)
        self.data_at = int(blob.ctypes.data) + 8  # word 1
        self.data_type = args_ref.instance_type.types[0]


#: what a stored call of given argument types needs, by the identities of the kernel and of
#: numba's (interned) argument types, kept with the types so that their ids stay theirs:
#: (address, bytes of the Data, bytes of the other arguments, TypeRef of the stored tuple,
#: status entry, run entry)
_PREPARED: dict[tuple[int, ...], tuple[tuple[Any, ...], tuple[Any, ...]]] = {}
_prepared_lock = threading.Lock()


def _prepare(kernel: Any, arguments: tuple[Any, ...], at_kernel: Any) -> tuple[Any, ...]:
    """The compiled pieces of a stored call of ``kernel`` with arguments like ``arguments``,
    ``at_kernel`` its twin that takes the first argument by address (compiled on first use;
    about 0.3 ms to find again by types, so they are kept)."""
    arg_types = argument_types(kernel, arguments)
    key = (id(kernel), id(at_kernel), *map(id, arg_types))
    with _prepared_lock:
        hit = _PREPARED.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], arg_types, strict=True)):
        return hit[1]
    at_arguments = (0, arg_types[0], *arguments[1:])  # the first argument by its address
    entry(at_kernel, at_arguments)
    at_types = argument_types(at_kernel, at_arguments)
    address = types.CompileResultWAP(at_kernel.overloads[at_types]).__wrapper_address__()
    empty = np.zeros(0, dtype=np.int64)
    data_bytes = store_data(arguments[0], empty, 0)
    rest = arguments[1:]
    args_ref = types.TypeRef(types.Tuple(arg_types))
    status = entry(stored_status, (empty, args_ref))
    with_data = entry(stored_with, (empty, args_ref, *rest))
    prepared = (address, data_bytes, store_arguments(rest, empty, 0), args_ref, status, with_data)
    with _prepared_lock:
        if len(_PREPARED) >= 256:  # a long sweep over many kinds of models: start again
            _PREPARED.clear()
        _PREPARED[key] = (arg_types, prepared)
    return prepared
