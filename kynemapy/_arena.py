"""Packed arenas: arrays laid out at offsets inside a few flat arrays.

The engine's data live in a handful of flat arenas (as MuJoCo's ``mjData``): the state in
one float64 and one int64 array, the inputs in one, the workspace in two, the model in two
read-only ones.  Python sees named numpy *views* of them (``state.q`` is a (N, 7) view into
``state.f``), so a state is copied, saved or restored as one array, and the views are what
the compiled phases receive (:class:`kynemapy.engine.fields.Data`): views made once in
Python cost nothing per call, whereas a view made in compiled code by ``reshape`` costs
about 10 ns (and 30 ms of compilation per site).

Self-contained packed structures that compiled code receives as two arrays (the sparse LU,
the dense elimination program) keep a *header* at the start of their int64 arena: six
words per field, its offset and shape; compiled code takes 1-D views with :func:`v1`.
Index arrays as long as a matrix's entries may be ``uint32`` fields packed two to a word
of the int64 arena (arena ``"u"``, views by :func:`v1u`): half the bytes a pass over them
streams.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

from kynemapy._jit import JIT_DISABLED

_I64 = ir.IntType(64)

#: header words per field: offset, then five dimensions
FIELD_WORDS = 6


@dataclass(frozen=True)
class FieldSpec:
    """One array: its arena, its name, its shape with counts by name (``("n_nodes", 7)``),
    and (in a header) the word where its description starts.

    Arenas of a header's structure: ``"i"`` (int64, the header's own), ``"f"`` (float64) and
    ``"u"`` (uint32, packed two to a word in the ``"i"`` arena)."""

    arena: str
    name: str
    shape: tuple[str | int, ...]
    word: int = -1


@dataclass
class HeaderSpec:
    """Fields of a packed structure with a header; ``field`` returns the field's header word,
    to be kept as a module constant (the numbering follows the definition order)."""

    size: int = 0
    scalars: dict[str, int] = field(default_factory=dict)
    fields: list[FieldSpec] = field(default_factory=list)

    def scalar(self, name: str) -> int:
        word = self.size
        self.scalars[name] = word
        self.size += 1
        return word

    def field(self, arena: str, name: str, shape: tuple[str | int, ...]) -> int:
        if arena not in ("i", "f", "u"):
            raise ValueError(f"field {name!r}: arena 'i' (int64), 'f' (float64) or 'u' (uint32), not {arena!r}")
        if arena == "u" and len(shape) != 1:
            raise ValueError(f"field {name!r}: a uint32 field is 1-D")
        if not 1 <= len(shape) <= FIELD_WORDS - 1:
            raise ValueError(f"field {name!r}: 1 to {FIELD_WORDS - 1} dimensions")
        word = self.size
        self.fields.append(FieldSpec(arena, name, tuple(shape), word))
        self.size += FIELD_WORDS
        return word


def resolve(shape: tuple[str | int, ...], counts: Mapping[str, int]) -> tuple[int, ...]:
    """``shape`` with its named counts replaced by their values."""
    return tuple([int(counts[d]) if isinstance(d, str) else int(d) for d in shape])


class Arenas:
    """Lays out named fields in arenas and makes them (Python, once per simulation).

    ``add(arena, name, shape)`` reserves room; ``allocate()`` creates the zeroed arenas
    (int64 for the names in ``int_arenas``, float64 otherwise) and returns the views.
    """

    def __init__(self, int_arenas: tuple[str, ...] = ()) -> None:
        self.int_arenas = int_arenas
        self.sizes: dict[str, int] = {}
        self.places: dict[str, tuple[str, int, tuple[int, ...]]] = {}

    def add(self, arena: str, name: str, shape: tuple[int, ...]) -> None:
        if name in self.places:
            raise ValueError(f"field {name!r} placed twice")
        shape = tuple(map(int, shape))
        start = self.sizes.get(arena, 0)
        self.sizes[arena] = start + math.prod(shape)
        self.places[name] = (arena, start, shape)

    def allocate(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``(arenas, views)``: the zeroed arenas by name and every field's view by name."""
        arenas = {
            a: np.zeros(max(size, 1), dtype=np.int64 if a in self.int_arenas else np.float64)
            for a, size in self.sizes.items()
        }
        return arenas, self.views(arenas)

    def views(self, arenas: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Every field's view by name into ``arenas`` (arrays laid out by this object); their
        data pointers are noted (:func:`view_pointer`)."""
        bases = {a: (arena.ctypes.data, arena.itemsize) for a, arena in arenas.items()}
        views = {}
        for name, (a, start, shape) in self.places.items():
            size = math.prod(shape)
            view = arenas[a][start : start + size].reshape(shape)
            if size:  # (numpy may give an empty view another address: the arena's start)
                address, itemsize = bases[a]
                _note_pointer(view, address + start * itemsize)
            views[name] = view
        return views


#: the data pointers of the views made by :meth:`Arenas.views`, by the view's identity (with a
#: weak reference that checks it): numpy takes about 2 µs to give an array's address
#: (``ndarray.ctypes.data``), and a simulation hands a few hundred views to compiled code
_VIEW_POINTERS: dict[int, tuple[weakref.ref[np.ndarray], int]] = {}
_VIEW_POINTERS_KEPT = 1 << 15


def _note_pointer(view: np.ndarray, address: int) -> None:
    if len(_VIEW_POINTERS) >= _VIEW_POINTERS_KEPT:
        _VIEW_POINTERS.clear()
    _VIEW_POINTERS[id(view)] = (weakref.ref(view), address)


def view_pointer(array: np.ndarray) -> int:
    """The address of ``array``'s data: noted for the views of :meth:`Arenas.views`, asked of
    numpy otherwise."""
    hit = _VIEW_POINTERS.get(id(array))
    if hit is not None and hit[0]() is array:
        return hit[1]
    return array.ctypes.data


#: a uint32 field holds fewer entries than this, and the indices it holds are below it
U32_LIMIT = 2**32 - 1


class HeaderBuilder:
    """Lays out the fields of a :class:`HeaderSpec` in an int64 arena (header first) and a
    float64 arena, and writes their header words.  A uint32 field (arena ``"u"``) takes
    ⌈length / 2⌉ words of the int64 arena; its header gives that word offset and its length
    in uint32 elements."""

    def __init__(self, spec: HeaderSpec, counts: Mapping[str, int]) -> None:
        self.spec = spec
        header = [0] * spec.size  # Python ints: a numpy write per word cost more than the layout
        sizes = {"i": spec.size, "f": 0}
        for f in spec.fields:
            shape = resolve(f.shape, counts)
            arena = "i" if f.arena == "u" else f.arena
            start = sizes[arena]
            size = math.prod(shape)
            if f.arena == "u":
                if size > U32_LIMIT:
                    raise ValueError(f"field {f.name!r}: {size} entries, more than a uint32 field holds")
                size = (size + 1) // 2
            sizes[arena] = start + size
            header[f.word] = start
            header[f.word + 1 : f.word + FIELD_WORDS] = (*shape, *(1,) * (FIELD_WORDS - 1 - len(shape)))
        self.header = np.array(header, dtype=np.int64)
        self.i = np.zeros(sizes["i"], dtype=np.int64)
        self.f = np.zeros(max(sizes["f"], 1))
        self.i[: spec.size] = self.header


def field_view(arena: np.ndarray, header: np.ndarray, word: int, packed: bool = False) -> np.ndarray:
    """Python: the view of the field whose description starts at ``header[word]``
    (``packed``: a uint32 field of the int64 ``arena``)."""
    start, *dims = header[word : word + FIELD_WORDS].tolist()
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    if packed:
        return arena[start : start + (dims[0] + 1) // 2].view(np.uint32)[: dims[0]]
    return arena[start : start + math.prod(dims)].reshape(dims)


def _v1_python(a: np.ndarray, h: np.ndarray, w: int) -> np.ndarray:
    o = h[w]
    return a[o : o + h[w + 1]]


def _v1u_python(a: np.ndarray, h: np.ndarray, w: int) -> np.ndarray:
    o = h[w]
    m = h[w + 1]
    return a[o : o + (m + 1) // 2].view(np.uint32)[:m]


def _view_codegen(item: Any, packed: bool) -> Callable[..., Any]:
    """LLVM for :func:`v1` (``packed`` False) or :func:`v1u`: the view's descriptor built from
    the header's two words (offset, length), no reference count (``_nrt=False``)."""

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        arena_type, header_type, word_type = sig.args
        arena = context.make_array(arena_type)(context, builder, args[0])
        header = context.make_array(header_type)(context, builder, args[1])
        word = context.cast(builder, args[2], word_type, numba.types.int64)
        offset = builder.load(builder.gep(header.data, [word]))
        length = builder.load(builder.gep(header.data, [builder.add(word, ir.Constant(_I64, 1))]))
        data = builder.gep(arena.data, [offset])
        out = context.make_array(sig.return_type)(context, builder)  # zero-filled: no meminfo, no parent
        size = context.get_abi_sizeof(context.get_data_type(item))
        out.data = builder.bitcast(data, out.data.type) if packed else data
        out.shape = cgutils.pack_array(builder, [length])
        out.strides = cgutils.pack_array(builder, [ir.Constant(_I64, size)])
        out.itemsize = ir.Constant(_I64, size)
        out.nitems = length
        return out._getvalue()

    return codegen


def _arena_arguments(a: Any, h: Any, w: Any, dtype: Any | None) -> bool:
    """Whether :func:`v1` / :func:`v1u` accept these argument types (C-contiguous 1-D arenas,
    an int64 header, an integer word; ``dtype``: the arena's, where it must be one)."""
    arrays = all(isinstance(x, numba.types.Array) and x.ndim == 1 and x.layout == "C" for x in (a, h))
    return arrays and h.dtype == numba.types.int64 and isinstance(w, numba.types.Integer) and dtype in (None, a.dtype)


if JIT_DISABLED:
    v1 = _v1_python
    v1u = _v1u_python
else:

    @intrinsic
    def v1(typingctx: Any, a: Any, h: Any, w: Any) -> Any:
        """Compiled: the 1-D view (C-contiguous, of the arena's dtype) of the field described at
        header word ``w`` of ``h``, in arena ``a``: ``a[h[w] : h[w] + h[w + 1]]``.

        An intrinsic, not a function: without numba's reference counting (``_nrt=False``) a
        compiled function cannot return a view, and an inlined one is copied into its caller
        block by block at each site (the sparse LU's unit made 46 such copies: about 6 s of
        its first compilation's 10 s, docs/performance.md)."""
        if not _arena_arguments(a, h, w, None):
            return None
        return numba.types.Array(a.dtype, 1, "C")(a, h, w), _view_codegen(a.dtype, False)

    @intrinsic
    def v1u(typingctx: Any, a: Any, h: Any, w: Any) -> Any:
        """Compiled: the uint32 view of the field described at header word ``w`` of ``h``,
        packed in the int64 arena ``a`` (see :class:`HeaderBuilder`): ``h[w]`` its offset in
        words, ``h[w + 1]`` its length in uint32 elements."""
        if not _arena_arguments(a, h, w, numba.types.int64):
            return None
        return numba.types.Array(numba.types.uint32, 1, "C")(a, h, w), _view_codegen(numba.types.uint32, True)
