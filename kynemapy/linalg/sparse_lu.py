"""Sparse direct solver for the Newton systems: KLU-style left-looking LU in numba.

The Newton matrices of constrained multibody dynamics, A = [[S, Bᵀ], [B T, 0]], are square,
structurally (nearly) symmetric, unsymmetric in value, and need row pivoting (zero
constraint diagonal, massless nodes whose 6 × 6 block is zero).  Their pattern is fixed
for a run while the values change every Newton iteration, so the work is split KLU's way:

1. :func:`analyze` (Python, once per pattern): a fill-reducing ordering of A + Aᵀ
   (:mod:`kynemapy.ordering`: natural, reverse Cuthill–McKee or minimum degree, the one
   with the least symbolic work) and the sizes, in a :class:`Symbolic`.
2. :func:`lu_factor` (numba): Gilbert–Peierls left-looking LU with threshold partial
   pivoting of A(:, q) (columns in the analysis order, rows pivoted): per column a
   depth-first search over the columns of L finds the reach (the pattern of the sparse
   triangular solve) in topological order, a sparse triangular solve computes the column of
   U and the candidates of L, and the pivot is the diagonal entry (row q[k]) when
   |a_diag| ≥ ``pivot_tol`` · max|candidates|, else the largest candidate.  L (unit lower,
   diagonal not stored) and U (reciprocal diagonal apart in ``uinv``) live in preallocated CSC arrays.
3. :func:`lu_refactor` (numba): the same pivot sequence and patterns with new values, no
   search.  It refuses (``LU_REFACTOR_FAILED``) a pivot below ``growth_tol`` · max|column|
   or any non-finite value, and the caller factors afresh.
4. :func:`lu_solve` (numba): b := A⁻¹ b in place.

:func:`sparse_factor_solve` does refactor → (factor) → solve inside compiled code, on an
:class:`LUWorkspace` (a NamedTuple of arrays built by :func:`new_lu_workspace`);
:class:`SparseLU` wraps it for Python callers and grows the capacity when a factorization
needs more room than preallocated (numba code cannot allocate: ``LU_CAPACITY``).

The factors: P A Q = L U with ``q[k]`` the column of A at step k and ``prow[k]`` the row
pivoted at step k (``pinv[prow[k]] = k``); L's row indices are pivot steps (after the
factorization; original rows while it runs), U's row indices are pivot steps in a
topological order of the column's elimination (any order that respects L's dependencies).

Use (the integrator's Newton loop)::

    lu = new_lu_workspace(indptr, indices, n, values0)   # Python, once per model (values0 optional)
    ...
    @njit
    def newton(..., lu, values, b):                        # compiled, no allocation
        ...                                                # assemble values (nnz,) and b (n,)
        status = sparse_factor_solve(lu, values, b)        # b := A⁻¹ b
        if status != LU_OK:                                # LU_SINGULAR, or LU_CAPACITY:
            return status                                  #   Python grows: lu = grow_lu_workspace(lu)
    # and calls again (the step is redone)

Statuses (ints; ``LU_OK`` and ``LU_SINGULAR`` equal :mod:`kynemapy.linalg`'s ``SOLVE_OK``
and ``SOLVE_SINGULAR``):

* ``LU_OK`` = 0
* ``LU_SINGULAR`` = 1: a pivot column had no candidate, only exact zeros, or a non-finite
  value (``info[INFO_COLUMN]`` = the step).
* ``LU_CAPACITY`` = 2: L or U did not fit (``info[INFO_COLUMN]`` = the step,
  ``info[INFO_NEED]`` = the entries written so far); grow with :func:`grow_lu_workspace`.
* ``LU_REFACTOR_FAILED`` = 3 (refactor only): no factorization to reuse, or a pivot now
  too small / non-finite: call :func:`lu_factor`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from kynemapy._arena import U32_LIMIT, HeaderBuilder, HeaderSpec, field_view, v1, v1u
from kynemapy._jit import njit
from kynemapy.linalg.ordering import FillEstimate, choose_ordering

_u = np.uint64
_i = np.int64

LU_OK = 0
LU_SINGULAR = 1
LU_CAPACITY = 2
LU_REFACTOR_FAILED = 3

#: default threshold of the diagonal preference: the diagonal pivot is kept when
#: |a_diag| ≥ PIVOT_TOL · max|column|.  1.0 = pure partial pivoting (ties go to the
#: diagonal).  Measured on 48 chains with massless bodies (cond up to 1e6): residuals within
#: 2.9× numpy's at 1.0, 3.2× at 0.5, 13.7× at 0.1; refactor work on the chain (N = 1000):
#: 512 multiply–adds per body at 1.0, 438 at 0.5, 358 at 0.1.  The safe choice is the default.
PIVOT_TOL = 1.0
#: default refactor acceptance: |pivot| ≥ GROWTH_TOL · max|column below it|
GROWTH_TOL = 1e-3

# fields of LUWorkspace.info (int64)
INFO_VALID = 0  #: 1 while L, U, prow hold a usable factorization (pattern and values)
INFO_PATTERN = 1  #: 1 while the pivot sequence and patterns may be reused by a refactor
INFO_LNZ = 2  #: entries of L (strictly lower)
INFO_UNZ = 3  #: entries of U (strictly upper)
INFO_N_FACTOR = 4  #: factorizations with pivot search (counter)
INFO_N_REFACTOR = 5  #: successful refactorizations (counter)
INFO_STATUS = 6  #: status of the last factor / refactor
INFO_COLUMN = 7  #: step at which the last failure happened
INFO_NEED = 8  #: LU_CAPACITY: 0 = L full, 1 = U full
INFO_SIZE = 9

# fields of LUWorkspace.tol (float64)
TOL_PIVOT = 0
TOL_GROWTH = 1


class Symbolic(NamedTuple):
    """Result of :func:`analyze`: the column ordering and the sizes (pattern only)."""

    n: int  #: order of A
    nnz: int  #: stored entries of A
    q: np.ndarray  #: (n,) int64 column ordering: step k factors column q[k]
    ordering: str  #: "natural", "rcm" or "amd"
    estimate: FillEstimate  #: symbolic Cholesky of A + Aᵀ under q (nnz of L, flops)


# the LU arenas: an int64 arena (header first, the long index arrays uint32 two to a word) and a float64 arena
_LU = HeaderSpec()
AP = _LU.field("i", "ap", ("n1",))
AI = _LU.field("u", "ai", ("nnz",))
Q = _LU.field("i", "q", ("n",))
PROW = _LU.field("i", "prow", ("n",))
PINV = _LU.field("i", "pinv", ("n",))
LP = _LU.field("i", "lp", ("n1",))
LI = _LU.field("u", "li", ("cap_l",))
UP = _LU.field("i", "up", ("n1",))
UI = _LU.field("u", "ui", ("cap_u",))
AROW = _LU.field("u", "arow", ("nnz",))
STACK = _LU.field("i", "stack", ("n",))
FLAG = _LU.field("i", "flag", ("n",))
WORK = _LU.field("i", "work", ("n",))
POS = _LU.field("i", "pos", ("n",))
INFO = _LU.field("i", "info", (INFO_SIZE,))
LX = _LU.field("f", "lx", ("cap_l",))
UX = _LU.field("f", "ux", ("cap_u",))
UINV = _LU.field("f", "uinv", ("n",))
X = _LU.field("f", "x", ("n",))
Y = _LU.field("f", "y", ("n",))
TOL = _LU.field("f", "tol", (2,))
LRUN = _LU.field("i", "lrun", ("n",))


class LUWorkspace:
    """All arrays of a sparse LU, packed in two arenas: ``i`` (int64, its header first; the
    index arrays as long as A's, L's and U's entries, ``ai``, ``arow``, ``li`` and ``ui``, are
    uint32 packed two to a word) and ``f`` (float64); built by :func:`new_lu_workspace`.
    Compiled code takes ``(i, f)``.

    Named views (n = order of A, nnz = stored entries of A, cap_l / cap_u = capacities of L / U):

    ap : (n+1,), ai : (nnz,) — the CSC pattern of A (the caller's values array, (nnz,)
        float64, follows it).
    q : (n,) — column ordering (from :func:`analyze`).
    prow : (n,) — row pivoted at each step; pinv : (n,) — its inverse.
    lp : (n+1,), li : (cap_l,), lx : (cap_l,) float64 — L, unit diagonal not stored.
    up : (n+1,), ui : (cap_u,), ux : (cap_u,) float64 — U without its diagonal.
    uinv : (n,) float64 — reciprocals of the pivots (the diagonal of U).
    x : (n,) float64 — dense accumulator (all zeros between calls); y : (n,) float64 — solve buffer.
    stack, flag, work, pos : (n,) — depth-first search buffers.
    arow : (nnz,) — pivot step of each entry's row (pinv[ai]), set by the factorization.
    lrun : (n,) — per column of L its first row when its rows are the consecutive pivot steps
        ``lrun[j], lrun[j] + 1, ...`` (then stored in that order: the refactorization and the
        solve run over them as contiguous vectors), else −1.
    tol : (2,) float64 — [pivot_tol, growth_tol] (see :data:`PIVOT_TOL`, :data:`GROWTH_TOL`).
    info : (INFO_SIZE,) — state and counters (``INFO_*``).
    """

    __slots__ = ("f", "i")

    def __init__(self, i: np.ndarray, f: np.ndarray) -> None:
        self.i = i
        self.f = f

    def _field(self, word: int) -> np.ndarray:
        arena = self.f if _LU_ARENA[word] == "f" else self.i
        return field_view(arena, self.i, word, packed=_LU_ARENA[word] == "u")

    @property
    def n(self) -> int:
        return int(self.i[Q + 1])

    def replace(self, **arrays: np.ndarray) -> LUWorkspace:
        """A new workspace with some arrays replaced (capacities may change), the others copied."""
        current = {spec.name: self._field(spec.word) for spec in _LU.fields}
        current.update(arrays)
        return _pack(current)


_LU_ARENA = {spec.word: spec.arena for spec in _LU.fields}
for _spec in _LU.fields:
    setattr(LUWorkspace, _spec.name, property(lambda self, w=_spec.word: self._field(w)))


def _pack(arrays: dict[str, np.ndarray]) -> LUWorkspace:
    """An LUWorkspace holding copies of ``arrays`` (one per field of the LU layout)."""
    n = int(arrays["q"].shape[0])
    counts = {
        "n": n,
        "n1": n + 1,
        "nnz": int(arrays["ai"].shape[0]),
        "cap_l": int(arrays["li"].shape[0]),
        "cap_u": int(arrays["ui"].shape[0]),
    }
    b = HeaderBuilder(_LU, counts)
    lu = LUWorkspace(b.i, b.f)
    for spec in _LU.fields:
        lu._field(spec.word)[...] = arrays[spec.name]
    return lu


# ----------------------------------------------------------------------------------------
# kernels on flat arrays


@njit
def _factor(ap, ai, ax, q, prow, pinv, arow, lp, li, lx, up, ui, ux, uinv, x, stack, flag, work, pos, pivot_tol, info):
    """Left-looking LU with threshold partial pivoting; see :func:`lu_factor`.

    Indices are cast to ``uint64`` where they index: numba then emits no negative-index
    wraparound, which halves the time of these short indirect loops.  ``pinv`` and ``flag``
    hold −1 sentinels as values only.
    """
    n = _u(q.shape[0])
    one = _u(1)
    cap_l = _u(li.shape[0])
    cap_u = _u(ui.shape[0])
    info[INFO_VALID] = 0
    info[INFO_PATTERN] = 0
    for i in range(n):
        x[i] = 0.0
        flag[i] = -1
        pinv[i] = -1
    lnz = _u(0)
    unz = _u(0)
    lp[0] = 0
    up[0] = 0
    for k in range(n):
        kk = _i(k)
        col = _u(q[k])
        top = n
        l_start = lnz
        # scatter A(:, col) into x; the reach of its pattern in the graph of L: non-pivotal
        # rows become candidates (li[l_start:lnz]), pivotal ones start a depth-first search
        # whose finished columns are pushed on stack[top:n] (a topological order)
        for pa in range(_u(ap[col]), _u(ap[col + one])):
            i = _u(ai[pa])
            x[i] += ax[pa]
            if flag[i] == kk:
                continue
            flag[i] = kk
            j = pinv[i]
            if j < 0:
                if lnz >= cap_l:
                    info[INFO_COLUMN] = kk
                    info[INFO_NEED] = 0
                    return LU_CAPACITY
                li[lnz] = _i(i)
                lnz += one
                continue
            head = 0
            work[0] = j
            pos[0] = lp[j]
            while head >= 0:
                h = _u(head)
                j = _u(work[h])
                pend = _u(lp[j + one])
                pp = _u(pos[h])
                descended = False
                while pp < pend:
                    i2 = _u(li[pp])
                    pp += one
                    if flag[i2] == kk:
                        continue
                    flag[i2] = kk
                    j2 = pinv[i2]
                    if j2 < 0:
                        if lnz >= cap_l:
                            info[INFO_COLUMN] = kk
                            info[INFO_NEED] = 0
                            return LU_CAPACITY
                        li[lnz] = _i(i2)
                        lnz += one
                        continue
                    pos[h] = _i(pp)
                    head += 1
                    h = _u(head)
                    work[h] = j2
                    pos[h] = lp[_u(j2)]
                    descended = True
                    break
                if not descended:
                    head -= 1
                    top -= one
                    stack[top] = _i(j)
        if unz + (n - top) > cap_u:
            info[INFO_COLUMN] = kk
            info[INFO_NEED] = 1
            return LU_CAPACITY
        # sparse triangular solve: U(:, k) and the updated candidates
        check = 0.0
        for t in range(top, n):
            j = _u(stack[t])
            r = _u(prow[j])
            xj = x[r]
            x[r] = 0.0
            check += xj * 0.0  # NaN once any U entry is not finite
            ui[unz] = _i(j)
            ux[unz] = xj
            unz += one
            for pl in range(_u(lp[j]), _u(lp[j + one])):
                x[_u(li[pl])] -= lx[pl] * xj
        # pivot: the diagonal row q[k] if large enough, else the largest candidate
        amax = 0.0
        p_max = l_start
        found = False
        p_diag = l_start
        has_diag = False
        for pl in range(l_start, lnz):
            i = _u(li[pl])
            v = abs(x[i])
            if v > amax or not found:
                amax = v
                p_max = pl
                found = True
            check += v * 0.0
            if i == col:
                p_diag = pl
                has_diag = True
        if not found or amax == 0.0 or not (check == 0.0) or not (amax < math.inf):
            for pl in range(l_start, lnz):
                x[_u(li[pl])] = 0.0
            info[INFO_COLUMN] = kk
            return LU_SINGULAR
        p_piv = p_max
        if has_diag and abs(x[col]) >= pivot_tol * amax:
            p_piv = p_diag
        ipiv = _u(li[p_piv])
        piv = x[ipiv]
        x[ipiv] = 0.0
        inv = 1.0 / piv
        uinv[k] = inv
        prow[k] = _i(ipiv)
        pinv[ipiv] = kk
        lnz -= one
        li[p_piv] = li[lnz]
        for pl in range(l_start, lnz):
            i = _u(li[pl])
            lx[pl] = x[i] * inv
            x[i] = 0.0
        lp[k + one] = _i(lnz)
        up[k + one] = _i(unz)
    for pl in range(lnz):
        li[pl] = pinv[_u(li[pl])]
    for pa in range(_u(ap[n])):
        arow[pa] = pinv[_u(ai[pa])]
    info[INFO_LNZ] = _i(lnz)
    info[INFO_UNZ] = _i(unz)
    info[INFO_VALID] = 1
    info[INFO_PATTERN] = 1
    return LU_OK


@njit
def _runs(lp, li, lx, lrun):
    """Sort each column of L by row (pivot step, ``lx`` along) and mark the columns whose rows
    are consecutive: ``lrun[j]`` their first row, else −1.

    The order of a column's entries changes no result (each row receives one update per
    column), so the factors stay those of :func:`_factor` to the bit.  The dense blocks of a
    beam element factor into such columns: the refactorization and the solve then update
    them as contiguous vectors, with no index array (see :func:`_refactor`).
    """
    n = _u(lrun.shape[0])
    one = _u(1)
    for j in range(n):
        start = _u(lp[j])
        end = _u(lp[j + one])
        for p in range(start + one, end):  # insertion sort: columns are short or nearly sorted
            r = li[p]
            v = lx[p]
            t = p
            while t > start and li[t - one] > r:
                li[t] = li[t - one]
                lx[t] = lx[t - one]
                t -= one
            li[t] = r
            lx[t] = v
        lrun[j] = -1
        if end > start and _i(li[end - one]) - _i(li[start]) == _i(end - start) - 1:
            lrun[j] = _i(li[start])


@njit
def _refactor(ap, arow, ax, q, lp, li, lx, up, ui, ux, uinv, x, growth_tol, info, lrun):
    """Numeric refactorization on the last pivot sequence; see :func:`lu_refactor`."""
    if info[INFO_PATTERN] == 0:
        return LU_REFACTOR_FAILED
    info[INFO_VALID] = 0
    lim = 1.0 / growth_tol if growth_tol > 0.0 else 1.0e308
    n = _u(q.shape[0])
    one = _u(1)
    for k in range(n):
        col = _u(q[k])
        for pa in range(_u(ap[col]), _u(ap[col + one])):
            x[_u(arow[pa])] += ax[pa]
        check = 0.0
        for pu in range(_u(up[k]), _u(up[k + one])):
            j = _u(ui[pu])
            xj = x[j]
            x[j] = 0.0
            check += xj * 0.0  # NaN once any U entry is not finite
            ux[pu] = xj
            p0 = _u(lp[j])
            p1 = _u(lp[j + one])
            r0 = lrun[j]
            if r0 >= 0:  # rows r0, r0 + 1, ...: a contiguous update the compiler vectorizes
                xs = x[_u(r0) : _u(r0) + (p1 - p0)]
                ls = lx[p0:p1]
                for t in range(p1 - p0):
                    xs[t] -= ls[t] * xj
            else:
                for pl in range(p0, p1):
                    x[_u(li[pl])] -= lx[pl] * xj
        piv = x[k]
        x[k] = 0.0
        inv = 1.0 / piv
        uinv[k] = inv
        ok = check == 0.0 and abs(piv) < math.inf and piv != 0.0
        # L(:, k) = x / pivot; |L| ≤ 1 / growth_tol is |pivot| ≥ growth_tol · max|column|
        for pl in range(_u(lp[k]), _u(lp[k + one])):
            i = _u(li[pl])
            l = x[i] * inv
            x[i] = 0.0
            lx[pl] = l
            if not (abs(l) <= lim):
                ok = False
        if not ok:
            info[INFO_COLUMN] = _i(k)
            return LU_REFACTOR_FAILED
    info[INFO_VALID] = 1
    return LU_OK


@njit
def _solve(q, prow, lp, li, lx, up, ui, ux, uinv, b, y, lrun):
    """b := Q U⁻¹ L⁻¹ P b."""
    n = _u(q.shape[0])
    one = _u(1)
    for k in range(n):
        y[k] = b[_u(prow[k])]
    for j in range(n):
        yj = y[j]
        p0 = _u(lp[j])
        p1 = _u(lp[j + one])
        r0 = lrun[j]
        if r0 >= 0:
            ys = y[_u(r0) : _u(r0) + (p1 - p0)]
            ls = lx[p0:p1]
            for t in range(p1 - p0):
                ys[t] -= ls[t] * yj
        else:
            for pl in range(p0, p1):
                y[_u(li[pl])] -= lx[pl] * yj
    for r in range(n):
        k = n - one - r
        yk = y[k] * uinv[k]  # final: columns after k have all been applied
        b[_u(q[k])] = yk
        for pu in range(_u(up[k]), _u(up[k + one])):
            y[_u(ui[pu])] -= ux[pu] * yk


# ----------------------------------------------------------------------------------------
# kernels on an LUWorkspace (callable from compiled code)


@njit(inline=True)
def lu_factor(i, f, values):
    """Factor A (pattern ``ap, ai`` of the LU arenas ``i``, ``f``; ``values`` (nnz,) float64)
    with pivot search.

    Returns ``LU_OK``, ``LU_SINGULAR`` or ``LU_CAPACITY``; counts in ``info``.
    """
    info = v1(i, i, INFO)
    info[INFO_N_FACTOR] += 1
    status = _factor(
        v1(i, i, AP),
        v1u(i, i, AI),
        values,
        v1(i, i, Q),
        v1(i, i, PROW),
        v1(i, i, PINV),
        v1u(i, i, AROW),
        v1(i, i, LP),
        v1u(i, i, LI),
        v1(f, i, LX),
        v1(i, i, UP),
        v1u(i, i, UI),
        v1(f, i, UX),
        v1(f, i, UINV),
        v1(f, i, X),
        v1(i, i, STACK),
        v1(i, i, FLAG),
        v1(i, i, WORK),
        v1(i, i, POS),
        v1(f, i, TOL)[TOL_PIVOT],
        info,
    )
    if status == LU_OK:
        _runs(v1(i, i, LP), v1u(i, i, LI), v1(f, i, LX), v1(i, i, LRUN))
    info[INFO_STATUS] = status
    return status


@njit(inline=True)
def lu_refactor(i, f, values):
    """Refactor with the pivot sequence and patterns of the last successful :func:`lu_factor`.

    Returns ``LU_OK`` or ``LU_REFACTOR_FAILED`` (no factorization to reuse, a pivot below
    ``tol[TOL_GROWTH]`` · max|column below it|, or a non-finite value).
    """
    info = v1(i, i, INFO)
    status = _refactor(
        v1(i, i, AP),
        v1u(i, i, AROW),
        values,
        v1(i, i, Q),
        v1(i, i, LP),
        v1u(i, i, LI),
        v1(f, i, LX),
        v1(i, i, UP),
        v1u(i, i, UI),
        v1(f, i, UX),
        v1(f, i, UINV),
        v1(f, i, X),
        v1(f, i, TOL)[TOL_GROWTH],
        info,
        v1(i, i, LRUN),
    )
    if status == LU_OK:
        info[INFO_N_REFACTOR] += 1
    info[INFO_STATUS] = status
    return status


@njit(inline=True)
def lu_solve(i, f, b):
    """b := A⁻¹ b in place with the current factors (valid after LU_OK from factor/refactor)."""
    _solve(
        v1(i, i, Q),
        v1(i, i, PROW),
        v1(i, i, LP),
        v1u(i, i, LI),
        v1(f, i, LX),
        v1(i, i, UP),
        v1u(i, i, UI),
        v1(f, i, UX),
        v1(f, i, UINV),
        b,
        v1(f, i, Y),
        v1(i, i, LRUN),
    )


@njit
def sparse_factor_solve(i, f, values, b):
    """Solve A x = b in place (b := x): refactor, else factor, then solve.

    i, f : the arenas of an :class:`LUWorkspace` (from :func:`new_lu_workspace`).
    values : (nnz,) float64, the entries of A in the order of the pattern ``ap, ai``.
    b : (n,) float64, right-hand side in, solution out (untouched unless ``LU_OK``).

    Returns ``LU_OK``, ``LU_SINGULAR`` or ``LU_CAPACITY`` (then leave compiled code, call
    ``lu = grow_lu_workspace(lu)`` and repeat).  Allocates nothing.
    """
    status = lu_refactor(i, f, values)
    if status != LU_OK:
        status = lu_factor(i, f, values)
        if status != LU_OK:
            return status
    lu_solve(i, f, b)
    return LU_OK


# ----------------------------------------------------------------------------------------
# Python side


def _pattern(indptr: np.ndarray, indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    ap = np.ascontiguousarray(indptr, dtype=np.int64)
    ai = np.ascontiguousarray(indices, dtype=np.int64)
    if ap.shape != (n + 1,) or ap[0] != 0 or np.any(np.diff(ap) < 0) or ai.shape != (int(ap[n]),):
        raise ValueError(f"invalid CSC pattern for n = {n}: indptr (n+1,) non-decreasing from 0, indices (nnz,)")
    if ai.size and (ai.min() < 0 or ai.max() >= n):
        raise ValueError(f"row indices must lie in [0, {n})")
    if n >= U32_LIMIT or ai.size >= U32_LIMIT:
        raise ValueError(
            f"the sparse LU holds its indices in 32 bits: n = {n} and {ai.size} entries must be below {U32_LIMIT}"
        )
    return ap, ai


def analyze(indptr: np.ndarray, indices: np.ndarray, n: int, ordering: str = "auto") -> Symbolic:
    """Symbolic analysis of the CSC pattern of A (n × n): column ordering and sizes.

    indptr : (n+1,) column pointers, indices : (nnz,) row indices (any integer type;
    duplicates are allowed and summed).  ``ordering``: "auto" (the candidate among
    natural, RCM and minimum degree with the least work of the symbolic Cholesky of
    A + Aᵀ), "amd", "rcm" or "natural".
    """
    ap, ai = _pattern(indptr, indices, n)
    name, perm, est = choose_ordering(ap, ai, n, ordering)
    return Symbolic(n=n, nnz=int(ap[n]), q=np.ascontiguousarray(perm, dtype=np.int64), ordering=name, estimate=est)


def new_lu_workspace(
    indptr: np.ndarray,
    indices: np.ndarray,
    n: int,
    values: np.ndarray | None = None,
    *,
    capacity_factor: float = 2.0,
    ordering: str = "auto",
    symbolic: Symbolic | None = None,
    pivot_tol: float = PIVOT_TOL,
    growth_tol: float = GROWTH_TOL,
    capacity: tuple[int, int] | None = None,
) -> LUWorkspace:
    """Allocate an :class:`LUWorkspace` for the CSC pattern of A (n × n).

    Capacities: ``capacity_factor`` × the symbolic estimate (Cholesky of A + Aᵀ, + n) for
    L and for U; with ``values`` given, a first factorization sizes them instead
    (``capacity_factor`` × the entries it needed, growing first if needed) and the workspace
    is returned factored (``info[INFO_VALID]`` = 1) unless A is singular.  ``capacity =
    (cap_l, cap_u)`` fixes the initial capacities instead (tests, tight memory).
    ``pivot_tol`` (0, 1]: diagonal preference of :func:`lu_factor` (1 = pure partial
    pivoting); ``growth_tol`` [0, 1]: pivot acceptance of :func:`lu_refactor`.
    """
    if capacity_factor < 1.0:
        raise ValueError("capacity_factor must be ≥ 1")
    if not 0.0 < pivot_tol <= 1.0 or not 0.0 <= growth_tol <= 1.0:
        raise ValueError("need 0 < pivot_tol ≤ 1 and 0 ≤ growth_tol ≤ 1")
    ap, ai = _pattern(indptr, indices, n)
    sym = symbolic if symbolic is not None else analyze(ap, ai, n, ordering)
    if sym.n != n or sym.nnz != ap[n]:
        raise ValueError("symbolic analysis of another pattern")
    if capacity is None:
        cap = int(capacity_factor * (sym.estimate.nnz_l + n)) + 16
        capacity = (cap, cap)
    lu = _allocate(ap, ai, sym.q, max(int(capacity[0]), 1), max(int(capacity[1]), 1), pivot_tol, growth_tol)
    if values is not None:
        values = np.ascontiguousarray(values, dtype=np.float64)
        status = lu_factor(lu.i, lu.f, values)
        while status == LU_CAPACITY:
            lu = grow_lu_workspace(lu)
            status = lu_factor(lu.i, lu.f, values)
        if status == LU_OK:
            lu = _with_headroom(lu, capacity_factor)
    return lu


def _allocate(ap, ai, q, cap_l, cap_u, pivot_tol, growth_tol) -> LUWorkspace:
    """A fresh LUWorkspace for the pattern ``ap, ai`` and the ordering ``q``: its arenas zeroed,
    the fields that do not start at zero written (no array made and copied per field)."""
    n = q.shape[0]
    counts = {"n": n, "n1": n + 1, "nnz": int(ap[n]), "cap_l": cap_l, "cap_u": cap_u}
    b = HeaderBuilder(_LU, counts)
    lu = LUWorkspace(b.i, b.f)
    lu.ap[...] = ap
    lu.ai[...] = ai
    lu.q[...] = q
    lu.tol[...] = (pivot_tol, growth_tol)
    lu.lrun[...] = -1
    return lu


def _resize(lu: LUWorkspace, cap_l: int, cap_u: int) -> LUWorkspace:
    """A copy of ``lu`` with new capacities; the factorization (if any and if it fits) is kept."""
    cap_l = max(cap_l, int(lu.info[INFO_LNZ]) if lu.info[INFO_PATTERN] else 0)
    cap_u = max(cap_u, int(lu.info[INFO_UNZ]) if lu.info[INFO_PATTERN] else 0)
    li, lx, ui, ux = np.zeros(cap_l, lu.li.dtype), np.zeros(cap_l), np.zeros(cap_u, lu.ui.dtype), np.zeros(cap_u)
    ml, mu = min(cap_l, lu.li.size), min(cap_u, lu.ui.size)
    li[:ml], lx[:ml], ui[:mu], ux[:mu] = lu.li[:ml], lu.lx[:ml], lu.ui[:mu], lu.ux[:mu]
    return lu.replace(li=li, lx=lx, ui=ui, ux=ux)


def grow_lu_workspace(lu: LUWorkspace, factor: float = 2.0) -> LUWorkspace:
    """After ``LU_CAPACITY``: a workspace with larger L/U arrays (the full one × ``factor``,
    more when the failing step suggests it); other arrays are shared with ``lu``."""
    n = lu.q.shape[0]
    k = int(lu.info[INFO_COLUMN])
    cap_l, cap_u = lu.li.size, lu.ui.size
    # extrapolate the entries per step seen so far to all n steps, with margin
    scale = max(factor, 1.25 * n / max(k, 1))
    if lu.info[INFO_STATUS] == LU_CAPACITY and lu.info[INFO_NEED] == 1:
        cap_u = int(cap_u * scale) + n
    elif lu.info[INFO_STATUS] == LU_CAPACITY:
        cap_l = int(cap_l * scale) + n
    else:
        cap_l, cap_u = int(cap_l * factor) + n, int(cap_u * factor) + n
    return _resize(lu, cap_l, cap_u)


def _with_headroom(lu: LUWorkspace, capacity_factor: float) -> LUWorkspace:
    """Ensure capacity ≥ ``capacity_factor`` × the entries of the current factorization."""
    need_l = int(capacity_factor * lu.info[INFO_LNZ]) + 16
    need_u = int(capacity_factor * lu.info[INFO_UNZ]) + 16
    if lu.li.size >= need_l and lu.ui.size >= need_u:
        return lu
    return _resize(lu, max(need_l, lu.li.size), max(need_u, lu.ui.size))


class SparseLU:
    """Sparse LU of a fixed pattern for Python callers (owns an :class:`LUWorkspace`).

    ``SparseLU(indptr, indices, n)`` analyzes the CSC pattern; then per Newton iteration
    ``status = lu.factor_solve(values, b)`` (b overwritten by the solution), or the parts
    ``factor(values)``, ``refactor(values)``, ``solve(b)``.  ``LU_CAPACITY`` never reaches
    the caller: the arrays grow (× ``capacity_factor`` headroom) and the factorization is
    redone.  The workspace (``.workspace``) is what compiled code passes to
    :func:`sparse_factor_solve`.
    """

    def __init__(
        self,
        indptr: np.ndarray,
        indices: np.ndarray,
        n: int,
        *,
        ordering: str = "auto",
        capacity_factor: float = 2.0,
        pivot_tol: float = PIVOT_TOL,
        growth_tol: float = GROWTH_TOL,
    ) -> None:
        self.symbolic = analyze(indptr, indices, n, ordering)
        self.capacity_factor = capacity_factor
        self.workspace = new_lu_workspace(
            indptr, indices, n, capacity_factor=capacity_factor, symbolic=self.symbolic,
            pivot_tol=pivot_tol, growth_tol=growth_tol,
        )  # fmt: skip
        self.n = n

    @property
    def nnz_lu(self) -> int:
        """Entries of L + U including the diagonal (of the current factorization)."""
        info = self.workspace.info
        return int(info[INFO_LNZ] + info[INFO_UNZ]) + self.n

    @property
    def counters(self) -> dict[str, int]:
        info = self.workspace.info
        return {"factor": int(info[INFO_N_FACTOR]), "refactor": int(info[INFO_N_REFACTOR])}

    def _values(self, values: np.ndarray) -> np.ndarray:
        v = np.ascontiguousarray(values, dtype=np.float64)
        if v.shape != (self.symbolic.nnz,):
            raise ValueError(f"values must have shape ({self.symbolic.nnz},), got {v.shape}")
        return v

    def factor(self, values: np.ndarray) -> int:
        """Factor with pivot search; ``LU_OK`` or ``LU_SINGULAR``."""
        v = self._values(values)
        status = lu_factor(self.workspace.i, self.workspace.f, v)
        while status == LU_CAPACITY:
            self.workspace = grow_lu_workspace(self.workspace)
            status = lu_factor(self.workspace.i, self.workspace.f, v)
        if status == LU_OK:
            self.workspace = _with_headroom(self.workspace, self.capacity_factor)
        return status

    def refactor(self, values: np.ndarray) -> int:
        """Refactor on the last pivot sequence; ``LU_OK`` or ``LU_REFACTOR_FAILED``."""
        return lu_refactor(self.workspace.i, self.workspace.f, self._values(values))

    def solve(self, b: np.ndarray) -> np.ndarray:
        """x = A⁻¹ b (a new array; ``b`` is left alone) with the current factors."""
        if not self.workspace.info[INFO_VALID]:
            raise RuntimeError("no valid factorization: call factor() first")
        x = np.array(b, dtype=np.float64, copy=True)
        if x.shape != (self.n,):
            raise ValueError(f"b must have shape ({self.n},)")
        lu_solve(self.workspace.i, self.workspace.f, x)
        return x

    def factor_solve(self, values: np.ndarray, b: np.ndarray) -> int:
        """b := A⁻¹ b in place (b (n,) float64, C-contiguous); refactor, else factor; a status."""
        v = self._values(values)
        if b.shape != (self.n,) or b.dtype != np.float64 or not b.flags.c_contiguous:
            raise ValueError(f"b must be a C-contiguous float64 array of shape ({self.n},)")
        n_factor = int(self.workspace.info[INFO_N_FACTOR])
        status = sparse_factor_solve(self.workspace.i, self.workspace.f, v, b)
        while status == LU_CAPACITY:
            self.workspace = grow_lu_workspace(self.workspace)
            status = sparse_factor_solve(self.workspace.i, self.workspace.f, v, b)
        if status == LU_OK and self.workspace.info[INFO_N_FACTOR] != n_factor:
            self.workspace = _with_headroom(self.workspace, self.capacity_factor)
        return status
