"""The shape table: each collision shape's node, kind code, local pose and dimensions.

A shape's local pose is its centre's offset from the node [m] and a rotation quaternion
``(w, x, y, z)`` of its local axes, both in the body's reference frame (the world frame at the
reference configuration, as the builder's points are).  At a node pose (position x [m], rotation
displacement r) the shape's world centre is ``x + R(r) offset`` and its world rotation
``r ⊗ frame``.  Local axes: a capsule's axis is its local z; a box's half extents are along its
local x, y, z.
"""

from __future__ import annotations

from kynemapy._jit import njit

# the shape table is built from the builder's shapes in the model layer (a Model keeps it for
# the hard body law); its names stay importable from here
from kynemapy.model.contact import (
    BOX,
    CAPSULE,
    KIND_CODES,
    SPHERE,
    ShapeTable,
    matrix_quaternion,
    shape_table,
)

__all__ = ["BOX", "CAPSULE", "KIND_CODES", "SPHERE", "ShapeTable", "matrix_quaternion", "shape_table", "world_poses"]


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
