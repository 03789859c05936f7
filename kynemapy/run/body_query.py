"""Hard contact between bodies: the contact points of a state, compiled, and the rows of their
Jacobians (:mod:`kynemapy.run.hard_bodies`, docs/contact.md "Hard contact between bodies").

* :func:`scene_contacts`: the shapes' contact points at a state found by :mod:`kynemapy.collision`
  (sort-and-sweep broad phase, then the narrow phase), compiled (``kynemapy._jit.njit``),
  allocation-free;
* :func:`tangent_frames`, :func:`jacobian_rows`: the contacts' frames and their rows
  ``[n; t₁; t₂] [I, −arm~]`` (the bodies' rotations: :func:`kynemapy.math.rotations.rotation_matrices`);
* :func:`touched_pairs`: which points of shape pairs lie near a point of their pair that touched
  at the step's start, compiled.
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit
from kynemapy.collision.broad import aabbs, insertion_sort
from kynemapy.collision.broad import sweep as sweep_pairs
from kynemapy.collision.narrow import collide
from kynemapy.collision.shapes import world_poses
from kynemapy.math.rotations import cross
from kynemapy.math.typed import ONE, ZERO

#: the most points one pair of shapes gives (box–box face clipping: 8)
MAX_POINTS = 8


@njit
def scene_contacts(
    x0: np.ndarray,
    q: np.ndarray,
    node: np.ndarray,
    kind: np.ndarray,
    offset: np.ndarray,
    frame: np.ndarray,
    dims: np.ndarray,
    group: np.ndarray,
    mask: np.ndarray,
    excluded: np.ndarray,
    margin: float,
    scratch: tuple,
    pairs: np.ndarray,
    out: np.ndarray,
    owner: np.ndarray,
) -> int:
    """Every contact point between two shapes with a gap up to ``margin`` at node states q.

    Broad phase: the shapes' world AABBs grown by ``margin``, sorted along the axis of their
    lower corners' largest spread (insertion sort on the previous order, nearly linear while
    the scene moves little), swept once; pairs on the same node, refused by the filter
    (``group & mask`` both ways) or excluded are skipped.  Narrow phase:
    :func:`kynemapy.collision.narrow.collide` on each candidate pair, lower shape id as A.

    Parameters
    ----------
    x0 : (N, 7) ndarray of float
        The nodes' reference positions [m] (columns 0:3 used).
    q : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z).
    node, kind : (S,) ndarray of int64
        Each shape's node and kind code.
    offset : (S, 3) ndarray of float
        The centre's offset from the node at the reference configuration [m].
    frame : (S, 4) ndarray of float
        The local axes' quaternion at the reference configuration.
    dims : (S, 3) ndarray of float
        The shape table's dimensions [m].
    group, mask : (S,) ndarray of int64
        The filter's bit masks.
    excluded : (E,) ndarray of int64
        Excluded shape pairs as sorted keys ``a S + b`` (a < b).
    margin : float
        Points with a larger gap are left out [m].
    scratch : tuple
        ``(positions (N, 3), rotations (N, 4), pos (S, 3), quat (S, 4), lo (S, 3), hi (S, 3),
        order (S,) int64, key (S,), poly (2, 16, 3))``; ``order`` keeps the last sort.
    pairs : (P, 2) ndarray of int64
        Out: the candidate pairs.
    out : (R, 10) ndarray of float
        Out: the contact rows (:mod:`kynemapy.collision.narrow`), R >= 8 P.
    owner : (R,) ndarray of int64
        Out: each row's pair.

    Returns
    -------
    int
        The rows written; ``−(candidate pairs)`` when ``pairs`` is too small (nothing written
        then: call again with P at least that).
    """
    positions, rotations, pos, quat, lo, hi, order, key, poly = scratch
    for i in range(q.shape[0]):
        for c in range(3):
            positions[i, c] = x0[i, c] + q[i, c]
        for c in range(4):
            rotations[i, c] = q[i, 3 + c]
    s = node.shape[0]
    world_poses(node, offset, frame, positions, rotations, pos, quat)
    aabbs(kind, dims, pos, quat, margin, lo, hi)
    best, axis_ = -1.0, ZERO
    for c in range(3):
        mean = 0.0
        for i in range(s):
            mean += lo[i, c]
        mean /= max(s, 1)
        var = 0.0
        for i in range(s):
            var += (lo[i, c] - mean) ** 2
        if var > best:
            best, axis_ = var, c
    for i in range(s):
        key[i] = lo[i, axis_]
    insertion_sort(key, order)
    # no joints in a model under the hard body law: no joined node pairs (an empty key list)
    count = sweep_pairs(lo, hi, order, axis_, node, group, mask, excluded, excluded[:0], ONE, pairs)
    if count > pairs.shape[0] or MAX_POINTS * count > out.shape[0]:
        return -count
    rows = 0
    for p in range(count):
        a, b = pairs[p, 0], pairs[p, 1]
        k = collide(kind[a], pos[a], quat[a], dims[a], kind[b], pos[b], quat[b], dims[b], margin,
                    out[rows : rows + MAX_POINTS], poly)  # fmt: skip
        for r in range(rows, rows + k):
            owner[r] = p
        rows += k
    return rows


@njit
def touched_pairs(
    keys: np.ndarray,
    local_b: np.ndarray,
    local_a: np.ndarray,
    before_keys: np.ndarray,
    before_b: np.ndarray,
    before_a: np.ndarray,
    distance: float,
    out: np.ndarray,
) -> None:
    """Which contact points of shape pairs touched at the start of the step.

    Point i is set touched (``out[i]``) where its pair had points at the start (``before_keys ==
    keys[i]``) and one of them lies within ``distance`` of it, in body B's frame or in body A's;
    it is left as it is where its pair had none.  The distances are ``sqrt((dx² + dy²) + dz²)``,
    the sums of ``numpy.linalg.norm`` along a row of three, so that the decisions are those of
    the numpy loop this kernel replaced.

    Parameters
    ----------
    keys : (C,) ndarray of int64
        Each point's shape pair key (``shape_a · shapes + shape_b``).
    local_b, local_a : (C, 3) ndarray of float
        The points in body B's frame at the step's start and in body A's at the present state [m].
    before_keys : (T,) ndarray of int64
        The pair keys of the points touching at the step's start.
    before_b, before_a : (T, 3) ndarray of float
        Those points in body B's frame and in body A's [m].
    distance : float
        The largest distance of a point found again [m].
    out : (C,) ndarray of bool
        Set True or False for the points whose pair had points at the start.
    """
    for i in range(keys.shape[0]):
        found = False
        near = np.inf
        for j in range(before_keys.shape[0]):
            if before_keys[j] != keys[i]:
                continue
            found = True
            for frame in range(2):
                now = local_b if frame == 0 else local_a
                before = before_b if frame == 0 else before_a
                dx = now[i, 0] - before[j, 0]
                dy = now[i, 1] - before[j, 1]
                dz = now[i, 2] - before[j, 2]
                gap = np.sqrt((dx * dx + dy * dy) + dz * dz)
                if gap < near:
                    near = gap
        if found:
            out[i] = near <= distance


def tangent_frames(normal: np.ndarray) -> np.ndarray:
    """Two unit tangents (C, 2, 3) of unit normals (C, 3), as
    :func:`kynemapy.run.hard_contact.tangents` row by row: ``t₁ = e × n / |e × n|`` with e the
    axis least aligned with n (x, y, z in that order on a tie), ``t₂ = n × t₁``."""
    e = np.zeros_like(normal)
    e[np.arange(normal.shape[0]), np.argmin(np.abs(normal), axis=1)] = 1.0
    t1 = cross(e, normal)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([t1, cross(normal, t1)], axis=1)


def jacobian_rows(frames: np.ndarray, arm: np.ndarray, apart: np.ndarray | None = None) -> np.ndarray:
    """``[n; t₁; t₂] [I, −arm~]`` (C, 3, 6) of frames (C, 3, 3) (rows n, t₁, t₂) and arms (C, 3) [m]:
    row s is ``(s, arm × s)`` (``(arm × s) · ω = s · (ω × arm)``).  With ``apart`` (C, 3) [m], the
    body whose frame turns the normal (body B of a pair): its normal row's rotation part gains
    ``n × apart``, the derivative of ``n · apart`` as n turns (zero where ``apart`` is along n)."""
    out = np.empty((frames.shape[0], 3, 6))
    out[:, :, :3] = frames
    out[:, :, 3:] = cross(arm[:, None, :], frames)
    if apart is not None:
        out[:, 0, 3:] += cross(frames[:, 0], apart)
    return out
