"""Hard contact between bodies: the contact points of a state, compiled, and the rows of their
Jacobians (:mod:`kynemapy.run.hard_bodies`, docs/contact.md "Hard contact between bodies").

* :func:`scene_contacts`: the shapes' contact points at a state found by :mod:`kynemapy.collision`
  (sort-and-sweep broad phase, then the narrow phase), compiled (``kynemapy._jit.njit``),
  allocation-free;
* :func:`tangent_frames`, :func:`jacobian_rows`: the contacts' frames and their rows
  ``[n; t₁; t₂] [I, −arm~]`` (the bodies' rotations: :func:`kynemapy.math.rotations.rotation_matrices`);
* :func:`touched_pairs`: which points of shape pairs lie near a point of their pair that touched
  at the step's start, compiled;
* :func:`material_rows`, :func:`pair_geometry`, :func:`in_body_frames`, :func:`contact_rates`,
  :func:`dof_rows`: the pairs' material points at a state, their frames, arms and slips over the
  step, points in their bodies' frames, the contacts' rates and their rows over a model's DOFs
  (through joints), compiled, each sum in the order of the numpy expression it replaced (the
  same bits).
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
    frames, arm = np.ascontiguousarray(frames, dtype=np.float64), np.ascontiguousarray(arm, dtype=np.float64)
    turned = arm if apart is None else np.ascontiguousarray(apart, dtype=np.float64)
    _jacobian_rows(frames, arm, turned, apart is not None, out)
    return out


@njit
def _jacobian_rows(frames: np.ndarray, arm: np.ndarray, apart: np.ndarray, turned: bool, out: np.ndarray) -> None:
    """:func:`jacobian_rows` into ``out`` (``apart`` used where ``turned``), with the products and
    differences of :func:`kynemapy.math.rotations.cross` (``a₁ b₂ − a₂ b₁``, ...)."""
    for c in range(frames.shape[0]):
        a0, a1, a2 = arm[c, 0], arm[c, 1], arm[c, 2]
        for s in range(3):
            f0, f1, f2 = frames[c, s, 0], frames[c, s, 1], frames[c, s, 2]
            out[c, s, 0], out[c, s, 1], out[c, s, 2] = f0, f1, f2
            out[c, s, 3] = a1 * f2 - a2 * f1
            out[c, s, 4] = a2 * f0 - a0 * f2
            out[c, s, 5] = a0 * f1 - a1 * f0
        if turned:
            n0, n1, n2 = frames[c, 0, 0], frames[c, 0, 1], frames[c, 0, 2]
            d0, d1, d2 = apart[c, 0], apart[c, 1], apart[c, 2]
            out[c, 0, 3] += n1 * d2 - n2 * d1
            out[c, 0, 4] += n2 * d0 - n0 * d2
            out[c, 0, 5] += n0 * d1 - n1 * d0


@njit
def _rotation(r: np.ndarray) -> tuple[float, float, float, float, float, float, float, float, float]:
    """The rotation matrix (row order) of the unit quaternion ``r`` (4,) (w, x, y, z), with the
    operations of :func:`kynemapy.math.rotations.rotation_matrices`: the same bits."""
    w, x, y, z = r[0], r[1], r[2], r[3]
    yy, zz, xx, xy, wz = y * y, z * z, x * x, x * y, w * z
    xz, wy, yz, wx = x * z, w * y, y * z, w * x
    return (
        1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
        2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
        2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy),
    )  # fmt: skip


@njit
def material_rows(
    x0: np.ndarray,
    q: np.ndarray,
    node_a: np.ndarray,
    node_b: np.ndarray,
    local_a: np.ndarray,
    local_b: np.ndarray,
    local_n: np.ndarray,
    out: np.ndarray,
) -> None:
    """The rows of material contact points at node states q: each pair's point on A and on B
    (given in their bodies' frames), its normal (given in body B's frame, normalized) and
    ``g = n · (p_B − p_A)``.

    The sums are those of the numpy expressions this kernel replaced on a contiguous row of three
    (``np.einsum`` over a contiguous axis adds ``(t₀ + t₂) + t₁``; ``np.linalg.norm`` along a row
    ``(t₀ + t₁) + t₂``), so that the points and decisions are theirs.

    Parameters
    ----------
    x0 : (N, 7) ndarray of float
        The nodes' reference positions [m] (columns 0:3 used).
    q : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z).
    node_a, node_b : (C,) ndarray of int64
        The nodes of the points' bodies A and B.
    local_a, local_b : (C, 3) ndarray of float
        The points in the frames of bodies A and B [m].
    local_n : (C, 3) ndarray of float
        The normals in body B's frame.
    out : (C, 10) ndarray of float
        Out: point on A (3), point on B (3) [m], unit normal from A to B (3), gap [m].
    """
    for c in range(node_a.shape[0]):
        for side in range(2):
            node = node_a[c] if side == 0 else node_b[c]
            local = local_a if side == 0 else local_b
            r = _rotation(q[node, 3:7])
            for i in range(3):
                p0 = r[3 * i] * local[c, 0]
                p1 = r[3 * i + 1] * local[c, 1]
                p2 = r[3 * i + 2] * local[c, 2]
                out[c, 3 * side + i] = (x0[node, i] + q[node, i]) + ((p0 + p2) + p1)
            if side == 1:  # the normal, turned with body B
                for i in range(3):
                    p0 = r[3 * i] * local_n[c, 0]
                    p1 = r[3 * i + 1] * local_n[c, 1]
                    p2 = r[3 * i + 2] * local_n[c, 2]
                    out[c, 6 + i] = (p0 + p2) + p1
        n0, n1, n2 = out[c, 6], out[c, 7], out[c, 8]
        norm = np.sqrt((n0 * n0 + n1 * n1) + n2 * n2)
        n0, n1, n2 = n0 / norm, n1 / norm, n2 / norm
        out[c, 6], out[c, 7], out[c, 8] = n0, n1, n2
        d0, d1, d2 = out[c, 3] - out[c, 0], out[c, 4] - out[c, 1], out[c, 5] - out[c, 2]
        out[c, 9] = (n0 * d0 + n2 * d2) + n1 * d1


@njit
def _carried_back(
    x0: np.ndarray, q: np.ndarray, q_start: np.ndarray, node: int, p0: float, p1: float, p2: float
) -> tuple[float, float, float]:
    """``p − start`` (3 floats) [m]: the world point p less where the material point of ``node``'s
    body now at p was at ``q_start``, with the sums of the numpy expressions it replaced (``Rᵀ (p −
    x)`` a strided sum, in order; back through the start's frame a contiguous one, as
    :func:`material_rows`)."""
    r = _rotation(q[node, 3:7])
    s = _rotation(q_start[node, 3:7])
    m0, m1, m2 = p0 - (x0[node, 0] + q[node, 0]), p1 - (x0[node, 1] + q[node, 1]), p2 - (x0[node, 2] + q[node, 2])
    l0 = (r[0] * m0 + r[3] * m1) + r[6] * m2
    l1 = (r[1] * m0 + r[4] * m1) + r[7] * m2
    l2 = (r[2] * m0 + r[5] * m1) + r[8] * m2
    s0 = (x0[node, 0] + q_start[node, 0]) + ((s[0] * l0 + s[2] * l2) + s[1] * l1)
    s1 = (x0[node, 1] + q_start[node, 1]) + ((s[3] * l0 + s[5] * l2) + s[4] * l1)
    s2 = (x0[node, 2] + q_start[node, 2]) + ((s[6] * l0 + s[8] * l2) + s[7] * l1)
    return p0 - s0, p1 - s1, p2 - s2


@njit
def pair_geometry(
    x0: np.ndarray,
    q: np.ndarray,
    q_start: np.ndarray,
    node_a: np.ndarray,
    node_b: np.ndarray,
    rows: np.ndarray,
    frame: np.ndarray,
    arm_a: np.ndarray,
    arm_b: np.ndarray,
    slip: np.ndarray,
    mid: np.ndarray,
    apart: np.ndarray,
) -> None:
    """The frames, arms and slips of contact points between two shapes at node states q.

    Each point's frame is its normal and :func:`tangent_frames`' tangents; its arms are its points
    on A and B less their nodes' positions; its slip is the motion along the tangents, over the
    step, of body B's material point now at the middle of the two points relative to body A's
    (each body's point carried back to ``q_start`` through its frame).  The sums are those of the
    numpy expressions this kernel replaced (:func:`material_rows`).

    Parameters
    ----------
    x0 : (N, 7) ndarray of float
        The nodes' reference positions [m] (columns 0:3 used).
    q, q_start : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z), now and at the step's start.
    node_a, node_b : (C,) ndarray of int64
        The nodes of the points' bodies A and B.
    rows : (C, 10) ndarray of float
        Point on A (3), point on B (3) [m], unit normal from A to B (3), gap [m].
    frame : (C, 3, 3) ndarray of float
        Out: rows n, t₁, t₂.
    arm_a, arm_b : (C, 3) ndarray of float
        Out: the points on A and B less their nodes' positions [m].
    slip : (C, 2) ndarray of float
        Out: the slip along t₁, t₂ over the step [m].
    mid : (C, 3) ndarray of float
        Out: the middle of the two points [m].
    apart : (C, 3) ndarray of float
        Out: ``p_B − p_A`` [m].
    """
    for c in range(node_a.shape[0]):
        n0, n1, n2 = rows[c, 6], rows[c, 7], rows[c, 8]
        # the axis least aligned with n (the first on a tie, as np.argmin), e × n, normalized
        a0, a1, a2 = abs(n0), abs(n1), abs(n2)
        e0, e1, e2 = 1.0, 0.0, 0.0
        if a1 < a0 and a1 <= a2:
            e0, e1 = 0.0, 1.0
        elif a2 < a0 and a2 < a1:
            e0, e2 = 0.0, 1.0
        t0, t1, t2 = e1 * n2 - e2 * n1, e2 * n0 - e0 * n2, e0 * n1 - e1 * n0
        norm = np.sqrt((t0 * t0 + t1 * t1) + t2 * t2)
        t0, t1, t2 = t0 / norm, t1 / norm, t2 / norm
        frame[c, 0, 0], frame[c, 0, 1], frame[c, 0, 2] = n0, n1, n2
        frame[c, 1, 0], frame[c, 1, 1], frame[c, 1, 2] = t0, t1, t2
        frame[c, 2, 0], frame[c, 2, 1], frame[c, 2, 2] = n1 * t2 - n2 * t1, n2 * t0 - n0 * t2, n0 * t1 - n1 * t0
        for i in range(3):
            mid[c, i] = 0.5 * (rows[c, i] + rows[c, 3 + i])
            apart[c, i] = rows[c, 3 + i] - rows[c, i]
        v0 = v1 = v2 = 0.0
        for side in range(2):
            node = node_a[c] if side == 0 else node_b[c]
            arm = arm_a if side == 0 else arm_b
            for i in range(3):
                arm[c, i] = rows[c, 3 * side + i] - (x0[node, i] + q[node, i])
            d0, d1, d2 = _carried_back(x0, q, q_start, node, mid[c, 0], mid[c, 1], mid[c, 2])
            if side == 0:
                v0, v1, v2 = v0 + -1.0 * d0, v1 + -1.0 * d1, v2 + -1.0 * d2
            else:
                v0, v1, v2 = v0 + 1.0 * d0, v1 + 1.0 * d1, v2 + 1.0 * d2
        for k in range(2):
            slip[c, k] = (frame[c, 1 + k, 0] * v0 + frame[c, 1 + k, 2] * v2) + frame[c, 1 + k, 1] * v1


@njit
def in_body_frames(q: np.ndarray, nodes: np.ndarray, vectors: np.ndarray, out: np.ndarray) -> None:
    """World vectors in their bodies' frames: ``out[c] = R(q[nodes[c]])ᵀ vectors[c]``, each sum in
    order, as ``np.einsum("cji,cj->ci", ...)`` over the rotation matrices (a strided axis).

    Parameters
    ----------
    q : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z).
    nodes : (C,) ndarray of int64
        Each vector's node.
    vectors : (C, 3) ndarray of float
        World vectors (a point less its node's position [m], or a direction).
    out : (C, 3) ndarray of float
        Out: the vectors in their bodies' frames.
    """
    for c in range(nodes.shape[0]):
        r = _rotation(q[nodes[c], 3:7])
        v0, v1, v2 = vectors[c, 0], vectors[c, 1], vectors[c, 2]
        out[c, 0] = (r[0] * v0 + r[3] * v1) + r[6] * v2
        out[c, 1] = (r[1] * v0 + r[4] * v1) + r[7] * v2
        out[c, 2] = (r[2] * v0 + r[5] * v1) + r[8] * v2


@njit
def dof_rows(
    node_a: np.ndarray,
    node_b: np.ndarray,
    rows_a: np.ndarray,
    rows_b: np.ndarray,
    first: np.ndarray,
    dofs: np.ndarray,
    out: np.ndarray,
) -> None:
    """The contacts' rows over a model's DOFs from their blocks on nodes A and B: ``out[3c:3c+3,
    first[n]:first[n]+dofs[n]] += rows[c, :, :dofs[n]]``, A's then B's (a node −1, a ground
    plane, adds nothing).

    Parameters
    ----------
    node_a, node_b : (C,) ndarray of int64
        The contacts' nodes (−1: none).
    rows_a, rows_b : (C, 3, 6) ndarray of float
        Their rows on each node's six DOFs (:func:`jacobian_rows`).
    first, dofs : (N,) ndarray of int64
        Each node's first DOF and its number of DOFs.
    out : (3C, n) ndarray of float
        Zeros in; out: the rows.
    """
    for side in range(2):
        nodes = node_a if side == 0 else node_b
        rows = rows_a if side == 0 else rows_b
        for c in range(nodes.shape[0]):
            node = nodes[c]
            if node < 0:
                continue
            f, d = first[node], dofs[node]
            for s in range(3):
                for k in range(d):
                    out[3 * c + s, f + k] += rows[c, s, k]


@njit
def contact_rates(
    node_a: np.ndarray, node_b: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray, y: np.ndarray, out: np.ndarray
) -> None:
    """``J_A y_A + J_B y_B`` of every contact: ``out[c, s] = Σ_r rows_a[c, s, r] y[node_a[c], r] +
    Σ_r rows_b[c, s, r] y[node_b[c], r]``, y's missing columns (a point mass's three DOFs) and a
    node −1 (a ground plane) counting as zeros.  Each six-term sum is added as ``np.einsum`` adds
    a contiguous axis of six, ``((t₀ + t₂) + t₄) + ((t₁ + t₃) + t₅)`` (two SIMD lanes), so that
    the rates are those of the numpy expression this kernel replaced.

    Parameters
    ----------
    node_a, node_b : (C,) ndarray of int64
        The contacts' nodes (−1: none).
    rows_a, rows_b : (C, 3, 6) ndarray of float
        Their rows (:func:`jacobian_rows`).
    y : (N, k) ndarray of float
        Per node, k <= 6 components (velocities [m/s, rad/s] or displacements).
    out : (C, 3) ndarray of float
        Out: the rates along each contact's n, t₁, t₂.
    """
    k = y.shape[1]
    for c in range(node_a.shape[0]):
        for s in range(3):
            total = 0.0
            for side in range(2):
                node = node_a[c] if side == 0 else node_b[c]
                rows = rows_a if side == 0 else rows_b
                p0 = p1 = p2 = p3 = p4 = p5 = 0.0
                if node >= 0:
                    p0 = rows[c, s, 0] * (y[node, 0] if k > 0 else 0.0)
                    p1 = rows[c, s, 1] * (y[node, 1] if k > 1 else 0.0)
                    p2 = rows[c, s, 2] * (y[node, 2] if k > 2 else 0.0)
                    p3 = rows[c, s, 3] * (y[node, 3] if k > 3 else 0.0)
                    p4 = rows[c, s, 4] * (y[node, 4] if k > 4 else 0.0)
                    p5 = rows[c, s, 5] * (y[node, 5] if k > 5 else 0.0)
                else:
                    p0, p1, p2 = rows[c, s, 0] * 0.0, rows[c, s, 1] * 0.0, rows[c, s, 2] * 0.0
                    p3, p4, p5 = rows[c, s, 3] * 0.0, rows[c, s, 4] * 0.0, rows[c, s, 5] * 0.0
                part = ((p0 + p2) + p4) + ((p1 + p3) + p5)
                total = part if side == 0 else total + part
            out[c, s] = total
