"""Broad phase: sweep and prune on the shapes' world AABBs.

:func:`aabbs` writes each shape's world axis-aligned box grown by a margin; the boxes are sorted
by their lower corner along the axis of largest spread (``numpy.argsort``, O(S log S), or
:func:`insertion_sort` on the previous order, nearly linear while the scene moves little);
:func:`sweep` walks the sorted list once, testing each box only against those whose interval
on that axis overlaps, and keeps the pairs the filter
accepts: two different nodes, ``group & mask`` both ways, not an excluded shape pair, not a
joined node pair.
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit
from kynemapy.collision.narrow import BOX, CAPSULE, axis
from kynemapy.math.typed import ONE, TWO, ZERO


@njit
def aabbs(kind, dims, pos, quat, margin, lo, hi):
    """World AABBs of S shapes grown by ``margin`` [m].

    Parameters
    ----------
    kind : (S,) ndarray of int64
    dims : (S, 3) ndarray of float
        The shape table's dimensions [m].
    pos : (S, 3) ndarray of float
        World centres [m].
    quat : (S, 4) ndarray of float
        World rotations (unit quaternions).
    margin : float
        Growth of every box on each side [m].
    lo, hi : (S, 3) ndarray of float
        Written: lower and upper corners [m].
    """
    for s in range(kind.shape[0]):
        q = quat[s]
        if kind[s] == BOX:
            e0, e1, e2 = axis(q, ZERO), axis(q, ONE), axis(q, TWO)
            for c in range(3):
                w = dims[s, 0] * abs(e0[c]) + dims[s, 1] * abs(e1[c]) + dims[s, 2] * abs(e2[c]) + margin
                lo[s, c] = pos[s, c] - w
                hi[s, c] = pos[s, c] + w
        else:
            h = dims[s, 1] if kind[s] == CAPSULE else 0.0
            u = axis(q, TWO)
            for c in range(3):
                w = h * abs(u[c]) + dims[s, 0] + margin
                lo[s, c] = pos[s, c] - w
                hi[s, c] = pos[s, c] + w


@njit
def insertion_sort(key, order):
    """Sort ``order`` (S,) int64 in place by ``key[order]`` ascending (stable); O(S) on an order
    that is already nearly sorted (the previous step's)."""
    for i in range(1, order.shape[0]):
        v = order[i]
        kv = key[v]
        j = i - 1
        while j >= 0 and key[order[j]] > kv:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = v


@njit
def _member(sorted_keys, key):
    """Whether ``key`` is in the ascending array ``sorted_keys`` (binary search)."""
    a, b = 0, sorted_keys.shape[0]
    while a < b:
        m = (a + b) // 2
        if sorted_keys[m] < key:
            a = m + 1
        else:
            b = m
    return a < sorted_keys.shape[0] and sorted_keys[a] == key


@njit
def sweep(lo, hi, order, axis_, node, group, mask, excluded, joined, n_nodes, pairs):
    """The candidate pairs of shapes whose AABBs overlap and that the filter accepts.

    Parameters
    ----------
    lo, hi : (S, 3) ndarray of float
        AABB corners [m] (:func:`aabbs`).
    order : (S,) ndarray of int64
        The shapes sorted by ``lo[:, axis_]``.
    axis_ : int
        The sweep axis (0, 1 or 2).
    node, group, mask : (S,) ndarray of int64
        Each shape's node and filter bits.
    excluded : (E,) ndarray of int64
        Excluded shape pairs as sorted keys ``a S + b`` (a < b).
    joined : (J,) ndarray of int64
        Node pairs never in contact (a joint joins them) as sorted keys ``a N + b`` (a < b).
    n_nodes : int
        N, the node count of the keys of ``joined``.
    pairs : (P, 2) ndarray of int64
        Written: the pairs (lower shape id first), up to P.

    Returns
    -------
    int
        The number of pairs found (larger than P when ``pairs`` was too small: only the first P
        were written).
    """
    n = order.shape[0]
    count = 0
    for i in range(n):
        a = order[i]
        for j in range(i + 1, n):
            b = order[j]
            if lo[b, axis_] > hi[a, axis_]:
                break
            if lo[b, 0] > hi[a, 0] or lo[a, 0] > hi[b, 0] or lo[b, 1] > hi[a, 1] or lo[a, 1] > hi[b, 1]:
                continue
            if lo[b, 2] > hi[a, 2] or lo[a, 2] > hi[b, 2]:
                continue
            na, nb = node[a], node[b]
            if na == nb or (group[a] & mask[b]) == 0 or (group[b] & mask[a]) == 0:
                continue
            s, t = (a, b) if a < b else (b, a)
            if _member(excluded, s * n + t):
                continue
            u, v = (na, nb) if na < nb else (nb, na)
            if _member(joined, u * n_nodes + v):
                continue
            if count < pairs.shape[0]:
                pairs[count, 0] = s
                pairs[count, 1] = t
            count += 1
    return count


def sweep_axis(lo: np.ndarray) -> int:
    """The sweep axis: that of the largest variance of the AABBs' lower corners ``lo`` (S, 3) [m]."""
    return int(np.argmax(lo.var(axis=0))) if lo.shape[0] > 1 else 0


def candidate_pairs(
    lo: np.ndarray,
    hi: np.ndarray,
    node: np.ndarray,
    group: np.ndarray,
    mask: np.ndarray,
    excluded: np.ndarray | None = None,
    joined: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Sweep and prune over S AABBs (see :func:`sweep`).

    Parameters
    ----------
    lo, hi : (S, 3) ndarray of float
        AABB corners [m].
    node, group, mask : (S,) ndarray of int64
        Each shape's node and filter bits.
    excluded : (E, 2) array_like of int, optional
        Shape pairs never in contact.
    joined : (J, 2) array_like of int, optional
        Node pairs never in contact.
    order : (S,) ndarray of int64, optional
        The previous order: sorted again in place by insertion (nearly linear when little
        moved and the sweep axis is the same); without it, ``numpy.argsort``.

    Returns
    -------
    (P, 2) ndarray of int64
        The pairs, lower shape id first, sorted.
    """
    s = lo.shape[0]
    n_nodes = max(
        int(node.max()) + 1 if s else 1, int(np.max(joined)) + 1 if joined is not None and np.size(joined) else 1
    )

    def keys(p: np.ndarray | None, n: int) -> np.ndarray:
        p = np.asarray(p if p is not None else np.zeros((0, 2)), dtype=np.int64).reshape(-1, 2)
        return np.unique(np.minimum(p[:, 0], p[:, 1]) * n + np.maximum(p[:, 0], p[:, 1]))

    ax = sweep_axis(lo)
    if order is None:
        order = np.argsort(lo[:, ax], kind="stable").astype(np.int64)
    else:
        insertion_sort(lo[:, ax].copy(), order)
    exc, jn = keys(excluded, s), keys(joined, n_nodes)
    pairs = np.zeros((max(4 * s, 16), 2), dtype=np.int64)
    count = sweep(lo, hi, order, ax, node, group, mask, exc, jn, n_nodes, pairs)
    if count > pairs.shape[0]:
        pairs = np.zeros((count, 2), dtype=np.int64)
        sweep(lo, hi, order, ax, node, group, mask, exc, jn, n_nodes, pairs)
    pairs = pairs[:count]
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
