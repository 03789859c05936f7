"""The shape table: each collision shape's node, kind code, local pose and dimensions.

A shape's local pose is its centre's offset from the node [m] and a rotation quaternion
``(w, x, y, z)`` of its local axes, both in the body's reference frame (the world frame at the
reference configuration, as the builder's points are).  At a node pose (position x [m], rotation
displacement r) the shape's world centre is ``x + R(r) offset`` and its world rotation
``r ⊗ frame``.  Local axes: a capsule's axis is its local z; a box's half extents are along its
local x, y, z.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kynemapy._jit import njit
from kynemapy.model.contact import Shape

#: kind codes of the shape table
SPHERE, CAPSULE, BOX = 0, 1, 2
KIND_CODES = {"sphere": SPHERE, "capsule": CAPSULE, "box": BOX}


@dataclass(frozen=True)
class ShapeTable:
    """Struct of arrays over S shapes.

    Attributes
    ----------
    node : (S,) ndarray of int64
        The node (body) of each shape.
    kind : (S,) ndarray of int64
        ``SPHERE`` (0), ``CAPSULE`` (1) or ``BOX`` (2).
    offset : (S, 3) ndarray of float
        The shape centre's offset from its node, reference frame [m].
    frame : (S, 4) ndarray of float
        The rotation quaternion of the shape's local axes, reference frame.
    dims : (S, 3) ndarray of float
        Sphere ``(r, 0, 0)``, capsule ``(r, half-length, 0)``, box half extents [m].
    group, mask : (S,) ndarray of int64
        The pair filter's bit masks.
    """

    node: np.ndarray
    kind: np.ndarray
    offset: np.ndarray
    frame: np.ndarray
    dims: np.ndarray
    group: np.ndarray
    mask: np.ndarray

    def __len__(self) -> int:
        return int(self.node.shape[0])


def matrix_quaternion(r: np.ndarray) -> np.ndarray:
    """The unit quaternion (4,) ``(w, x, y, z)`` of a rotation matrix (3, 3) (Shepperd's method)."""
    t = np.trace(r)
    k = int(np.argmax([t, r[0, 0], r[1, 1], r[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def _axis_frame(axis: np.ndarray) -> np.ndarray:
    """A rotation matrix whose third column is the unit vector ``axis``."""
    z = axis / np.linalg.norm(axis)
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def shape_table(shapes: Sequence[Shape]) -> ShapeTable:
    """The shape table of the builder's shapes (:attr:`kynemapy.ModelBuilder.shapes`).

    The kind is the shape's own (never told from its point count); the pose and dimensions come
    from its reference points: a sphere's centre, a capsule's two axis ends, a box's eight
    corners in :func:`kynemapy.model.contact.box_corners`' order.

    Parameters
    ----------
    shapes : sequence of kynemapy.model.contact.Shape
        The shapes, in shape-id order.

    Returns
    -------
    ShapeTable
        One row per shape.
    """
    s = len(shapes)
    node = np.zeros(s, dtype=np.int64)
    kind = np.zeros(s, dtype=np.int64)
    offset = np.zeros((s, 3))
    frame = np.zeros((s, 4))
    dims = np.zeros((s, 3))
    group = np.zeros(s, dtype=np.int64)
    mask = np.zeros(s, dtype=np.int64)
    for i, sh in enumerate(shapes):
        node[i], kind[i], group[i], mask[i] = sh.node, KIND_CODES[sh.kind], sh.group, sh.mask
        p = np.asarray(sh.points, dtype=float)
        rot = np.eye(3)
        if sh.kind == "sphere":
            offset[i] = p[0]
            dims[i, 0] = float(sh.radii[0])
        elif sh.kind == "capsule":
            offset[i] = 0.5 * (p[0] + p[1])
            half = 0.5 * float(np.linalg.norm(p[1] - p[0]))
            if half > 0.0:
                rot = _axis_frame(p[1] - p[0])
            dims[i, :2] = float(sh.radii[0]), half
        else:
            offset[i] = p.mean(axis=0)
            edges = np.array([p[4] - p[0], p[2] - p[0], p[1] - p[0]])  # 2 h_k a_k, k = x, y, z
            h = 0.5 * np.linalg.norm(edges, axis=1)
            rot = (edges / (2.0 * h[:, None])).T
            dims[i] = h
        frame[i] = matrix_quaternion(rot)
    return ShapeTable(node, kind, offset, frame, dims, group, mask)


@njit
def world_poses(node, offset, frame, positions, rotations, pos_out, quat_out):
    """Every shape's world centre and rotation at the given node poses.

    Parameters
    ----------
    node : (S,) ndarray of int64
    offset : (S, 3) ndarray of float
        Reference-frame offsets [m].
    frame : (S, 4) ndarray of float
        Reference-frame quaternions of the local axes.
    positions : (N, 3) ndarray of float
        The node positions ``X + u`` [m].
    rotations : (N, 4) ndarray of float
        The nodes' rotation displacements r (unit quaternions).
    pos_out : (S, 3) ndarray of float
        Written: ``x + R(r) offset`` [m].
    quat_out : (S, 4) ndarray of float
        Written: ``r ⊗ frame``.
    """
    for i in range(node.shape[0]):
        n = node[i]
        w, x, y, z = rotations[n, 0], rotations[n, 1], rotations[n, 2], rotations[n, 3]
        ox, oy, oz = offset[i, 0], offset[i, 1], offset[i, 2]
        # v + 2 w (u × v) + 2 u × (u × v), u = (x, y, z)
        cx, cy, cz = y * oz - z * oy, z * ox - x * oz, x * oy - y * ox
        pos_out[i, 0] = positions[n, 0] + ox + 2.0 * (w * cx + y * cz - z * cy)
        pos_out[i, 1] = positions[n, 1] + oy + 2.0 * (w * cy + z * cx - x * cz)
        pos_out[i, 2] = positions[n, 2] + oz + 2.0 * (w * cz + x * cy - y * cx)
        fw, fx, fy, fz = frame[i, 0], frame[i, 1], frame[i, 2], frame[i, 3]
        quat_out[i, 0] = w * fw - x * fx - y * fy - z * fz
        quat_out[i, 1] = w * fx + x * fw + y * fz - z * fy
        quat_out[i, 2] = w * fy - x * fz + y * fw + z * fx
        quat_out[i, 3] = w * fz + x * fy - y * fx + z * fw
