"""All current contact points of a set of shapes at given node poses (broad, then narrow phase).

:class:`CollisionScene` holds the shape table, the ground planes and the pair filter (built
from a :class:`~kynemapy.ModelBuilder` by :func:`scene_of`); :meth:`CollisionScene.collisions`
takes the node positions and rotation displacements (a simulation's state) and returns every
contact point within a margin, between shapes and against planes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kynemapy._jit import njit
from kynemapy.collision.broad import aabbs, candidate_pairs
from kynemapy.collision.narrow import ROW, collide, collide_plane
from kynemapy.collision.shapes import ShapeTable, shape_table, world_poses
from kynemapy.model.contact import pairs as plane_pairs

#: rows per pair in the narrow phase's buffer (box–box: at most 8)
MAX_POINTS = 8


@dataclass(frozen=True)
class Collisions:
    """C contact points.

    Attributes
    ----------
    node_a, node_b : (C,) ndarray of int64
        The nodes of the two shapes; ``node_b`` is −1 for a ground plane.
    shape_a, shape_b : (C,) ndarray of int64
        The shape ids; ``shape_b`` is the plane's index for a ground plane.
    point_a, point_b : (C, 3) ndarray of float
        The world points on shape A and on B (on the plane) [m].
    normal : (C, 3) ndarray of float
        The unit normal from A to B.
    gap : (C,) ndarray of float
        The signed gap [m] (negative: penetration).
    """

    node_a: np.ndarray
    node_b: np.ndarray
    shape_a: np.ndarray
    shape_b: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    gap: np.ndarray

    def __len__(self) -> int:
        return int(self.gap.shape[0])


@njit
def narrow_pairs(kind, dims, pos, quat, pairs, margin, poly, out, owner):
    """The narrow phase over candidate pairs.

    Parameters
    ----------
    kind : (S,) ndarray of int64
    dims : (S, 3) ndarray of float
    pos : (S, 3) ndarray of float
        World centres [m].
    quat : (S, 4) ndarray of float
        World rotations.
    pairs : (P, 2) ndarray of int64
        Shape pairs.
    margin : float
        Points with a gap above it are left out [m].
    poly : (2, 16, 3) ndarray of float
        Scratch.
    out : (P * 8, 10) ndarray of float
        Written: the contact rows (:mod:`kynemapy.collision.narrow`).
    owner : (P * 8,) ndarray of int64
        Written: the pair of each row.

    Returns
    -------
    int
        The rows written.
    """
    rows = 0
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        k = collide(kind[a], pos[a], quat[a], dims[a], kind[b], pos[b], quat[b], dims[b], margin,
                    out[rows : rows + 8], poly)  # fmt: skip
        for r in range(rows, rows + k):
            owner[r] = p
        rows += k
    return rows


@njit
def narrow_planes(kind, dims, pos, quat, pairs, planes, margin, out, owner):
    """Every (shape, plane) pair of ``pairs`` (P, 2) against ``planes`` (L, 4) (unit normal n,
    offset d [m] of ``n · y <= d``): rows into ``out`` (P * 8, 10), their pair into ``owner``;
    returns the rows written."""
    rows = 0
    for p in range(pairs.shape[0]):
        a, j = pairs[p, 0], pairs[p, 1]
        k = collide_plane(kind[a], pos[a], quat[a], dims[a], planes[j, :3], planes[j, 3], margin, out[rows : rows + 8])
        for r in range(rows, rows + k):
            owner[r] = p
        rows += k
    return rows


@dataclass(frozen=True)
class CollisionScene:
    """The shapes, the ground planes and the pair filter of a model.

    Attributes
    ----------
    table : ShapeTable
        The shapes.
    planes : (L, 4) ndarray of float
        Each ground plane's unit normal n and offset d [m] (``n · y <= d``).
    plane_pairs : (Q, 2) ndarray of int64
        The (shape, plane) pairs the filter accepts.
    excluded : (E, 2) ndarray of int64
        Shape pairs never in contact.
    joined : (J, 2) ndarray of int64
        Node pairs never in contact (a joint joins them).
    """

    table: ShapeTable
    planes: np.ndarray
    plane_pairs: np.ndarray
    excluded: np.ndarray
    joined: np.ndarray

    def collisions(self, positions: np.ndarray, rotations: np.ndarray, margin: float = 0.0) -> Collisions:
        """Every contact point within ``margin`` at the given node poses.

        Parameters
        ----------
        positions : (N, 3) array_like of float
            Node positions ``X + u`` [m].
        rotations : (N, 4) array_like of float
            Node rotation displacements r (unit quaternions ``(w, x, y, z)``): a shape's world
            centre is ``x + R(r) offset``.
        margin : float, default 0.0
            Points whose gap is at most this are returned [m] (>= 0).

        Returns
        -------
        Collisions
            Shape pairs first (pairs in ascending order), then shape–plane points.

        Raises
        ------
        ValueError
            Arrays of the wrong shape, non-finite values or a negative margin.
        """
        t = self.table
        # copies: writable whatever the caller passes (numba compiles a read-only array apart)
        x = np.array(positions, dtype=np.float64, order="C")
        r = np.array(rotations, dtype=np.float64, order="C")
        n_nodes = int(t.node.max()) + 1 if len(t) else 0
        if x.ndim != 2 or x.shape[1] != 3 or r.ndim != 2 or r.shape[1] != 4 or x.shape[0] != r.shape[0]:
            raise ValueError(f"collisions: positions must be (N, 3) and rotations (N, 4), got {x.shape} and {r.shape}")
        if x.shape[0] < n_nodes:
            raise ValueError(f"collisions: the shapes need {n_nodes} nodes, got poses of {x.shape[0]}")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(r))):
            raise ValueError("collisions: positions and rotations must be finite")
        margin = float(margin)
        if not np.isfinite(margin) or margin < 0.0:
            raise ValueError(f"collisions: margin must be a finite number >= 0 [m], got {margin!r}")
        s = len(t)
        pos, quat = np.zeros((s, 3)), np.zeros((s, 4))
        lo, hi = np.zeros((s, 3)), np.zeros((s, 3))
        if s:
            world_poses(t.node, t.offset, t.frame, x, r, pos, quat)
            aabbs(t.kind, t.dims, pos, quat, margin, lo, hi)
        pairs = candidate_pairs(lo, hi, t.node, t.group, t.mask, self.excluded, self.joined)
        buf = np.zeros((8 * (pairs.shape[0] + self.plane_pairs.shape[0]), ROW))
        owner = np.zeros(buf.shape[0], dtype=np.int64)
        poly = np.zeros((2, 16, 3))
        nb = narrow_pairs(t.kind, t.dims, pos, quat, pairs, margin, poly, buf, owner) if pairs.shape[0] else 0
        rows_b, own_b = buf[:nb].copy(), owner[:nb].copy()
        npl = (
            narrow_planes(t.kind, t.dims, pos, quat, self.plane_pairs, self.planes, margin, buf, owner)
            if self.plane_pairs.shape[0]
            else 0
        )
        rows_p, own_p = buf[:npl], owner[:npl]
        sa = np.concatenate([pairs[own_b, 0], self.plane_pairs[own_p, 0]]).astype(np.int64)
        sb = np.concatenate([pairs[own_b, 1], self.plane_pairs[own_p, 1]]).astype(np.int64)
        rows = np.concatenate([rows_b, rows_p])
        nodes_b = np.concatenate([t.node[pairs[own_b, 1]], np.full(npl, -1, dtype=np.int64)])
        return Collisions(t.node[sa], nodes_b, sa, sb, rows[:, 0:3], rows[:, 3:6], rows[:, 6:9], rows[:, 9])


def scene_of(builder: object) -> CollisionScene:
    """The collision scene of a :class:`~kynemapy.ModelBuilder` (its shapes, planes, excluded
    shape pairs and joined nodes; the plane pairs its filter accepts).

    Parameters
    ----------
    builder : kynemapy.ModelBuilder
        The builder.

    Returns
    -------
    CollisionScene
        The scene.
    """
    shapes, planes = list(builder.shapes), list(builder.planes)  # type: ignore[attr-defined]
    plane_rows = np.array([[*p.normal, p.offset] for p in planes], dtype=np.float64).reshape(-1, 4)
    return CollisionScene(
        table=shape_table(shapes),
        planes=plane_rows,
        plane_pairs=np.array(plane_pairs(shapes, planes), dtype=np.int64).reshape(-1, 2),
        excluded=np.array(builder.excluded_contacts, dtype=np.int64).reshape(-1, 2),  # type: ignore[attr-defined]
        joined=np.array(builder.joined_nodes, dtype=np.int64).reshape(-1, 2),  # type: ignore[attr-defined]
    )
