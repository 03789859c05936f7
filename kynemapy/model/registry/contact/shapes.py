"""Contact's shapes and planes drawn with the model (:mod:`kynemapy.model.geometry`): the collision
shapes its pairs use, as their contact points with their radius, and the distinct ground planes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kynemapy.math.rotations import rotation_matrices
from kynemapy.model.registry.kind import Shape

__all__ = ["contact_planes", "contact_shapes"]


def contact_shapes(model: Any) -> list[Shape]:
    """The collision shapes of a model's contact pairs (shape–plane points and sphere pairs), each
    once, in shape order; a shape no pair uses is not in the model and not drawn.

    Parameters
    ----------
    model : Model
        A built model (or one read from a result file; files without contact have none).

    Returns
    -------
    list of Shape
        Kind told by the number of distinct points: one (sphere), two (capsule), eight (box).
    """
    points: dict[int, tuple[int, float, list[np.ndarray]]] = {}

    def add(shape: int, node: int, offset: np.ndarray, radius: float) -> None:
        offsets = points.setdefault(shape, (node, radius, []))[2]
        if not any(np.array_equal(offset, o) for o in offsets):
            offsets.append(np.array(offset, dtype=float))

    for k in range(int(getattr(model, "n_contacts", 0))):
        add(
            int(model.contact_shape[k]),
            int(model.contact_node[k]),
            model.contact_offset[k],
            float(model.contact_radius[k]),
        )
    for k in range(int(getattr(model, "n_pairs", 0))):
        # pair_offset (4, 3): body 1's point, body 2's segment ends (a capsule's axis, or a
        # sphere's centre twice: one point once deduplicated), body 1's second end (row 0 again
        # unless body 1 is a capsule of a capsule–capsule pair)
        for side, rows in ((0, (0, 3)), (1, (1, 2))):
            for row in rows:
                add(
                    int(model.pair_shape[k, side]), int(model.pair_node[k, side]), model.pair_offset[k, row],
                    float(model.pair_radius[k, side]),
                )  # fmt: skip
    # the hard laws' shapes (the builder's shape ids): each point against a hard ground plane
    # (model.hard_contacts: node, shape, plane, offset (3), radius, ...), and the shapes of hard
    # contact between bodies (model.hard_shapes, row i shape i: node, kind, centre offset (3),
    # axes quaternion (4), dims (3), ...) that no hard plane lists
    hard = np.asarray(getattr(model, "hard_contacts", np.zeros((0, 13))), dtype=float).reshape(-1, 13)
    for row in hard:
        add(int(row[1]), int(row[0]), row[3:6], float(row[6]))
    listed = set(hard[:, 1].astype(int).tolist())
    bodies = np.asarray(getattr(model, "hard_shapes", np.zeros((0, 16))), dtype=float).reshape(-1, 16)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    for i, row in enumerate(bodies):
        if i in listed:
            continue
        node, kind, centre, dims = int(row[0]), int(row[1]), row[2:5], row[9:12]
        turn = rotation_matrices(row[5:9])
        if kind == 0:  # sphere: its centre
            ends, radius = centre[None], dims[0]
        elif kind == 1:  # capsule: its axis ends (radius, half-length along the local z axis)
            ends, radius = centre + np.outer([-dims[1], dims[1]], turn[:, 2]), dims[0]
        else:  # box: its corners in the builder's order (x in bit 2, z in bit 0)
            ends, radius = centre + (signs * dims) @ turn.T, 0.0
        for end in ends:
            add(i, node, end, float(radius))
    shapes = []
    for shape in sorted(points):
        node, radius, offsets = points[shape]
        pts = np.array(offsets).reshape(-1, 3)
        kind = {1: "sphere", 2: "capsule", 8: "box"}.get(pts.shape[0], "points")
        if kind == "box":  # the builder's order has x in bit 2 and z in bit 0: to BOX_FACES' order
            pts = pts[[((i & 1) << 2) | (i & 2) | (i >> 2 & 1) for i in range(8)]]
        shapes.append(Shape(shape=shape, kind=kind, node=node, offsets=pts, radius=radius))
    return shapes


def contact_planes(model: Any) -> np.ndarray:
    """The distinct ground planes of a model's contact points.

    Parameters
    ----------
    model : Model
        A built model.

    Returns
    -------
    (P, 4) ndarray of float
        Unit normal n and offset d [m] of each plane ``n · y = d``.
    """
    planes = np.asarray(getattr(model, "contact_plane", np.zeros((0, 4))), dtype=float).reshape(-1, 4)
    hard = np.asarray(getattr(model, "hard_contacts", np.zeros((0, 13))), dtype=float).reshape(-1, 13)[:, 7:11]
    planes = np.concatenate([planes, hard])
    return np.unique(planes, axis=0) if planes.shape[0] else planes
