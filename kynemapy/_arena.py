"""Packed arenas: every array of the engine lives at an offset inside a few flat arrays.

A compiled call from Python unboxes each array argument it receives (about 10 ns an
array, and a NamedTuple of 80 arrays cost 4.8 µs a step), and a call between compiled
phases passes each array as a descriptor of seven or more machine words.  So the engine
keeps its data in a handful of flat arenas, as MuJoCo's ``mjData`` does, and a kernel
takes the views it needs from them:

* ``mi`` int64 and ``mf`` float64 (read-only): the model tables, the sparsity slots and
  the *header*, which says where every field lives;
* ``wi``, ``wf``: the workspace (Newton system, element and constraint blocks, scratch);
* ``sf``, ``si``: the state (``q, v, vd, ...`` and the step counter);
* ``xf``: the inputs (loads, constraint inputs);
* ``ri, rf`` and ``fi, ff``: the reference and fallback factorizations of the solver.

The header is the first part of ``mi``: a few scalar words (counts, flags), then six
words per field: the field's offset in its arena and its shape (up to five dimensions,
unused ones 1).  A field is named in code by the header word where its description starts,
a module-level integer constant that numba compiles in (``Q``, ``MASS_M_STAR``, ...).
Constants are handed out in definition order by a :class:`HeaderSpec`, so the numbering
is fixed by the source code, and numba's cache (keyed on the source) never sees another.

Users never see the arenas: they read named numpy views (``sim.state.q``) of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from kynemapy._jit import njit

#: header words per field: offset, then five dimensions
FIELD_WORDS = 6
#: arenas a field can live in
ARENAS = ("mi", "mf", "wi", "wf", "sf", "si", "xf")
INT_ARENAS = ("mi", "wi", "si")


@dataclass(frozen=True)
class FieldSpec:
    """One array: its arena, its name (a :class:`~kynemapy.Model` field for model data), and
    its shape, with counts given by name (``("n_nodes", 7)``)."""

    word: int
    arena: str
    name: str
    shape: tuple[str | int, ...]


@dataclass
class HeaderSpec:
    """Hands out header words in definition order.

    ``scalar(name)`` reserves one word (a count or a flag), ``field(arena, name, shape)``
    :data:`FIELD_WORDS` words; both return the word, to be kept as a module constant.
    ``base`` is the first word of this spec in the header (tables get theirs at packing).
    """

    base: int = 0
    size: int = 0
    scalars: dict[str, int] = field(default_factory=dict)
    fields: list[FieldSpec] = field(default_factory=list)

    def scalar(self, name: str) -> int:
        word = self.base + self.size
        self.scalars[name] = word
        self.size += 1
        return word

    def field(self, arena: str, name: str, shape: tuple[str | int, ...]) -> int:
        if arena not in ARENAS:
            raise ValueError(f"unknown arena {arena!r}")
        if not 1 <= len(shape) <= FIELD_WORDS - 1:
            raise ValueError(f"field {name!r}: 1 to {FIELD_WORDS - 1} dimensions")
        word = self.base + self.size
        self.fields.append(FieldSpec(word, arena, name, tuple(shape)))
        self.size += FIELD_WORDS
        return word


class ArenaBuilder:
    """Lays out fields in arenas and writes their header words (Python, at packing time)."""

    def __init__(self, header_words: int, header_arena: str = "mi") -> None:
        self.header = np.zeros(header_words, dtype=np.int64)
        self.header_arena = header_arena
        self.sizes = dict.fromkeys(ARENAS, 0)
        self.sizes[header_arena] = header_words

    def place(self, spec: FieldSpec, counts: Mapping[str, int], offset: int = 0) -> None:
        """Reserve room for ``spec`` (its header word shifted by ``offset``)."""
        shape = tuple(int(counts[d]) if isinstance(d, str) else int(d) for d in spec.shape)
        word = spec.word + offset
        size = int(np.prod(shape))
        start = self.sizes[spec.arena]
        self.sizes[spec.arena] = start + size
        self.header[word] = start
        self.header[word + 1 : word + FIELD_WORDS] = 1
        self.header[word + 1 : word + 1 + len(shape)] = shape

    def allocate(self) -> dict[str, np.ndarray]:
        """Zeroed arenas, the header copied to the start of its arena."""
        out = {a: np.zeros(self.sizes[a], dtype=np.int64 if a in INT_ARENAS else np.float64) for a in ARENAS}
        out[self.header_arena][: self.header.shape[0]] = self.header
        return out


def field_view(arena: np.ndarray, header: np.ndarray, word: int) -> np.ndarray:
    """Python: the view of the field whose description starts at ``header[word]``."""
    start = int(header[word])
    dims = [int(d) for d in header[word + 1 : word + FIELD_WORDS]]
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    size = int(np.prod(dims))
    return arena[start : start + size].reshape(dims)


# ---------------------------------------------------------------- compiled views
# The rank is the caller's: a field of rank r is read with v<r>.  Inlined into their callers:
# without numba's reference counting (``_nrt=False``) a compiled function cannot return a view.


@njit(inline=True)
def rows(h, w):
    """Leading dimension (number of rows) of the field described at header word ``w``."""
    return h[w + 1]


@njit(inline=True)
def v1(a, h, w):
    """1-D view of the field described at header word ``w`` of ``h``, in arena ``a``."""
    o = h[w]
    return a[o : o + h[w + 1]]


@njit(inline=True)
def v2(a, h, w):
    """2-D view (see :func:`v1`)."""
    o = h[w]
    d0 = h[w + 1]
    d1 = h[w + 2]
    return a[o : o + d0 * d1].reshape((d0, d1))


@njit(inline=True)
def v3(a, h, w):
    """3-D view (see :func:`v1`)."""
    o = h[w]
    d0 = h[w + 1]
    d1 = h[w + 2]
    d2 = h[w + 3]
    return a[o : o + d0 * d1 * d2].reshape((d0, d1, d2))


@njit(inline=True)
def v4(a, h, w):
    """4-D view (see :func:`v1`)."""
    o = h[w]
    d0 = h[w + 1]
    d1 = h[w + 2]
    d2 = h[w + 3]
    d3 = h[w + 4]
    return a[o : o + d0 * d1 * d2 * d3].reshape((d0, d1, d2, d3))


@njit(inline=True)
def v5(a, h, w):
    """5-D view (see :func:`v1`)."""
    o = h[w]
    d0 = h[w + 1]
    d1 = h[w + 2]
    d2 = h[w + 3]
    d3 = h[w + 4]
    d4 = h[w + 5]
    return a[o : o + d0 * d1 * d2 * d3 * d4].reshape((d0, d1, d2, d3, d4))
