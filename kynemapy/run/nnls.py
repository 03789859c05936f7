"""Non-negative least squares ``min |A z − e|``, ``z >= 0`` (e the last unit vector) by Lawson and
Hanson's active-set method, compiled, with a warm start: the least-distance programs of hard
contact (:func:`kynemapy.run.body_blocks.least_distance`).

Lawson & Hanson, Solving Least Squares Problems (1974), ch. 23, algorithm NNLS: the passive set
P (the columns with ``z > 0``) grows by the column of the largest gradient ``aⱼᵀ (e − A z)``
(here per unit length of the column: its angle), the least-squares solution on P is kept
positive by stepping back to the boundary and dropping the columns that reach zero.  The
least-squares problems are solved on a QR factorization of ``A_P`` updated as columns enter
(modified Gram–Schmidt, twice) and leave (Givens rotations), so each iteration costs
``O(m k)`` for the gradient and ``O(m p)`` for the factorization.  A column nearly in the span
of P (its part outside it below :data:`DEPENDENT` of its length) does not enter.

The warm start: the previous solution (of the programs of the same contacts one Newton iteration
earlier) is the starting point: its positive columns enter first (those independent of the ones
before), and Lawson and Hanson's inner loop takes it to the positive least-squares solution on
them; the method then goes on from there.  Its
result is checked by the caller (:func:`kynemapy.run.body_blocks.least_distance`, which solves
again without the start, and with scipy's methods, where it misses the optimum).
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit

#: a column whose part outside the span of the passive columns is below this times its length
#: does not enter (its gradient is then at most this times its length times |e − A z|)
DEPENDENT = 1.0e-10
#: the iteration ends when no column outside P has a gradient per unit length above this times
#: |e − A z|
GRADIENT = 1.0e-13


@njit
def _add(at: np.ndarray, j: int, p: int, qt: np.ndarray, r: np.ndarray, v: np.ndarray) -> float:
    """Column j (``at[j]``, (m,)) appended to the QR factorization of the p passive columns
    (``qt[:p]`` Q's columns as rows, ``r[:p, :p]``): the norm of its part outside their span
    (R's new diagonal; ``qt[p]`` and ``r[:p + 1, p]`` written)."""
    m = at.shape[1]
    for i in range(m):
        v[i] = at[j, i]
    for i in range(p + 1):
        r[i, p] = 0.0
    for _ in range(2):  # twice is enough (Giraud, Langou & Rozložník 2005)
        for i in range(p):
            c = 0.0
            for t in range(m):
                c += qt[i, t] * v[t]
            r[i, p] += c
            for t in range(m):
                v[t] -= c * qt[i, t]
    rho = 0.0
    for t in range(m):
        rho += v[t] * v[t]
    rho = np.sqrt(rho)
    r[p, p] = rho
    if rho > 0.0:
        for t in range(m):
            qt[p, t] = v[t] / rho
    return rho


@njit
def _remove(pos: int, p: int, order: np.ndarray, qt: np.ndarray, r: np.ndarray) -> None:
    """The passive column at position ``pos`` of ``p`` removed from the factorization (R's later
    columns shifted left, the Hessenberg part rotated back to triangular by Givens rotations
    applied to R's rows and Q's columns)."""
    m = qt.shape[1]
    for c in range(pos, p - 1):
        order[c] = order[c + 1]
        for i in range(c + 2):
            r[i, c] = r[i, c + 1]
    for c in range(pos, p - 1):
        x, y = r[c, c], r[c + 1, c]
        h = np.hypot(x, y)
        if h == 0.0:
            continue
        cs, sn = x / h, y / h
        for col in range(c, p - 1):
            a, b = r[c, col], r[c + 1, col]
            r[c, col] = cs * a + sn * b
            r[c + 1, col] = -sn * a + cs * b
        r[c + 1, c] = 0.0
        for t in range(m):
            a, b = qt[c, t], qt[c + 1, t]
            qt[c, t] = cs * a + sn * b
            qt[c + 1, t] = -sn * a + cs * b


@njit
def _solve(p: int, qt: np.ndarray, r: np.ndarray, s: np.ndarray) -> None:
    """``s[:p]``: the least-squares solution of ``A_P s = e`` (``R s = Qᵀ e``, Qᵀ e the last
    entries of Q's columns)."""
    m = qt.shape[1]
    for i in range(p - 1, -1, -1):
        acc = qt[i, m - 1]
        for c in range(i + 1, p):
            acc -= r[i, c] * s[c]
        s[i] = acc / r[i, i]


@njit
def _positive(p: int, order: np.ndarray, z: np.ndarray, qt: np.ndarray, r: np.ndarray, s: np.ndarray) -> int:
    """Lawson and Hanson's inner loop: from z (positive on P, zero elsewhere) toward the
    least-squares solution on P, stepping back to the boundary and dropping the columns that
    reach zero until that solution is positive; z set to it.  Returns the new p."""
    while p > 0:
        _solve(p, qt, r, s)
        alpha, first = 2.0, -1
        for i in range(p):
            if s[i] <= 0.0:
                zi = z[order[i]]
                t = zi / (zi - s[i])
                if t < alpha:
                    alpha, first = t, i
        if first < 0:
            for i in range(p):
                z[order[i]] = s[i]
            return p
        for i in range(p):
            zi = z[order[i]]
            z[order[i]] = zi + alpha * (s[i] - zi)
        z[order[first]] = 0.0
        # drop the columns at (or, by round-off, below) zero, the one that set alpha among them
        i = p - 1
        while i >= 0:
            if z[order[i]] <= 0.0:
                z[order[i]] = 0.0
                _remove(i, p, order, qt, r)
                p -= 1
            i -= 1
    return p


@njit
def lawson_hanson(
    a: np.ndarray, at: np.ndarray, start: np.ndarray, z: np.ndarray, order: np.ndarray, qt: np.ndarray, r: np.ndarray,
    s: np.ndarray, v: np.ndarray, w: np.ndarray, length: np.ndarray, max_iterations: int,
) -> int:  # fmt: skip
    """``min |A z − e|``, ``z >= 0`` for ``A = atᵀ`` (m, k), e the last unit vector.

    Parameters
    ----------
    a : (m, k) ndarray of float
        A (C order).
    at : (k, m) ndarray of float
        A's columns, as rows (C order).
    start : (k,) ndarray of float
        The warm start: z's start values, >= 0 (zeros: the method as published).
    z : (k,) ndarray of float
        Out: the solution.
    order, qt, r, s, v, w, length
        Scratch: (m,) int, (m, m), (m, m), (m,), (m,), (k,) and (k,) float.
    max_iterations : int
        The most columns entering.

    Returns
    -------
    int
        The columns that entered, or −1 when ``max_iterations`` ran out (z then the last iterate).
    """
    k, m = at.shape
    for j in range(k):
        z[j] = 0.0
        acc = 0.0
        for t in range(m):
            acc += at[j, t] * at[j, t]
        length[j] = np.sqrt(acc)
    p = np.int64(0)  # not the literal 0: numba would compile _add and _positive for it apart
    # the warm start: its columns enter (those independent of the ones before) at their start
    # values, then Lawson and Hanson's inner loop makes the least-squares solution on them positive
    for j in range(k):
        if start[j] > 0.0 and p < m and length[j] > 0.0:
            if _add(at, j, p, qt, r, v) > DEPENDENT * length[j]:
                order[p] = j
                z[j] = start[j]
                p += 1
    p = _positive(p, order, z, qt, r, s)
    for it in range(max_iterations):
        # the residual e − A z and its norm
        for t in range(m):
            v[t] = 0.0
        v[m - 1] = 1.0
        for i in range(p):
            j = order[i]
            for t in range(m):
                v[t] -= z[j] * at[j, t]
        norm = 0.0
        for t in range(m):
            norm += v[t] * v[t]
        norm = np.sqrt(norm)
        # the gradients per unit length of the columns outside P (those in P marked by z > 0),
        # accumulated row by row of A (independent sums: vectorized without reassociation)
        for j in range(k):
            w[j] = 0.0
        for t in range(m):
            vt = v[t]
            if vt != 0.0:
                for j in range(k):
                    w[j] += vt * a[t, j]
        for j in range(k):
            if z[j] > 0.0 or length[j] == 0.0:
                w[j] = -1.0
            else:
                w[j] /= length[j]
        entered = False
        while not entered:
            best, j = GRADIENT * norm, np.int64(-1)
            for c in range(k):
                if w[c] > best:
                    best, j = w[c], c
            if j < 0 or p >= m:
                return it
            w[j] = -1.0
            if _add(at, j, p, qt, r, s) <= DEPENDENT * length[j]:
                continue  # nearly dependent on P: not this one
            # its coefficient in the least-squares solution on P + j must come out positive
            if qt[p, m - 1] / r[p, p] <= 0.0:
                continue
            order[p] = j
            p += 1
            entered = True
        # z stays feasible: the entering column starts at 0 (marked apart from the rest by its place)
        p = _positive(p, order, z, qt, r, s)
    return -1


def solve(a: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """:func:`lawson_hanson` on ``a`` (m, k): z (k,) and whether it ended (False: its iterations,
    ``3 k + 100`` entering columns, ran out), from the values ``start`` (k,) if given."""
    m, k = a.shape
    at = np.ascontiguousarray(a.T, dtype=np.float64)
    z = np.zeros(k)
    entered = lawson_hanson(
        np.ascontiguousarray(a, dtype=np.float64), at, np.zeros(k) if start is None else np.maximum(start, 0.0), z,
        np.zeros(m, dtype=np.int64), np.zeros((m, m)), np.zeros((m, m)), np.zeros(m), np.zeros(m), np.zeros(k),
        np.zeros(k), 3 * k + 100,
    )  # fmt: skip
    return z, entered >= 0


class WarmStarts:
    """The last solution of each kind of program, by column key: the warm starts of
    :func:`lawson_hanson` (the same contacts' programs one Newton iteration later).  Cleared at
    the start of each step, so that a step's solutions depend on its start alone (a run resumed
    from a result file repeats the uninterrupted one bit for bit)."""

    def __init__(self) -> None:
        self._known: dict[object, tuple[np.ndarray, np.ndarray]] = {}

    def clear(self) -> None:
        """Forget every solution."""
        self._known.clear()

    def start(self, kind: object, keys: np.ndarray) -> np.ndarray | None:
        """The start values (k,) of a program of ``kind`` with column ``keys`` (k,) int: each
        column's value in the last solution that had it (0 where none did); None when no
        solution of the kind is known."""
        known = self._known.get(kind)
        if known is None:
            return None
        sorted_keys, values = known
        if sorted_keys.size == 0:
            return np.zeros(keys.size)
        at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
        return np.where(sorted_keys[at] == keys, values[at], 0.0)

    def keep(self, kind: object, keys: np.ndarray, z: np.ndarray) -> None:
        """A solution ``z`` (k,) of a program of ``kind`` with column ``keys`` (k,)."""
        known = self._known.get(kind)
        if known is not None:
            other = ~np.isin(known[0], keys)
            keys, z = np.concatenate([known[0][other], keys]), np.concatenate([known[1][other], z])
        order = np.argsort(keys, kind="stable")
        self._known[kind] = (keys[order], z[order])
