"""Rotations and world poses from quaternions, in numpy, for reading results.

Quaternions are (w, x, y, z), unit length.  A node's state is its reference ``x0`` (7,) =
(X [m], r0) and its displacement ``q`` (7,) = (u [m], r): its world position is X + u and its
world orientation r ⊗ r0 (as the engine's ``state.x``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def rotation_matrices(quaternions: ArrayLike) -> np.ndarray:
    """Rotation matrices of unit quaternions.

    Parameters
    ----------
    quaternions : array_like
        (..., 4) unit quaternions (w, x, y, z).

    Returns
    -------
    numpy.ndarray
        (..., 3, 3) rotation matrices: column k is the rotated k-th axis (a body's axes in
        world coordinates, for a body's orientation).

    Raises
    ------
    ValueError
        When the last axis does not have 4 entries.
    """
    r = np.asarray(quaternions, dtype=np.float64)
    if r.ndim == 0 or r.shape[-1] != 4:
        raise ValueError(f"rotation_matrices: quaternions must have shape (..., 4), got {r.shape}")
    w, x, y, z = np.moveaxis(r, -1, 0)
    out = np.empty((*r.shape[:-1], 3, 3))
    out[..., 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[..., 0, 1] = 2.0 * (x * y - w * z)
    out[..., 0, 2] = 2.0 * (x * z + w * y)
    out[..., 1, 0] = 2.0 * (x * y + w * z)
    out[..., 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[..., 1, 2] = 2.0 * (y * z - w * x)
    out[..., 2, 0] = 2.0 * (x * z - w * y)
    out[..., 2, 1] = 2.0 * (y * z + w * x)
    out[..., 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return out


def world_pose(x0: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """World positions and orientations of nodes.

    Parameters
    ----------
    x0 : array_like
        (N, 7) reference positions [m] and orientations (the model's ``x0``).
    q : array_like
        (..., N, 7) displacements [m] and rotations (a state's ``q``, or a result's rows).

    Returns
    -------
    position : numpy.ndarray
        (..., N, 3) world positions X + u [m].
    orientation : numpy.ndarray
        (..., N, 4) world orientations r ⊗ r0, unit quaternions (w, x, y, z).
    """
    x0 = np.asarray(x0, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if x0.ndim != 2 or x0.shape[1] != 7 or q.shape[-2:] != x0.shape:
        raise ValueError(f"world_pose: x0 must be (N, 7) and q (..., N, 7) of the same N, got {x0.shape}, {q.shape}")
    position = x0[:, :3] + q[..., :3]
    orientation = quaternion_product(q[..., 3:7], np.broadcast_to(x0[:, 3:7], q[..., 3:7].shape))
    orientation /= np.linalg.norm(orientation, axis=-1, keepdims=True)
    return position, orientation


def quaternion_product(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamilton products ``a ⊗ b`` of quaternions (..., 4) (w, x, y, z), broadcast together."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    aw, av, bw, bv = a[..., :1], a[..., 1:], b[..., :1], b[..., 1:]
    w = aw * bw - np.sum(av * bv, axis=-1, keepdims=True)
    v = aw * bv + bw * av + np.cross(av, bv)
    return np.concatenate([w, v], axis=-1)


__all__ = ["quaternion_product", "rotation_matrices", "world_pose"]
