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
    # the entries 1 − 2 (y² + z²), 2 (xy − wz), ... in row order from the nine products at once: a
    # third of the time of one array operation per term on a few quaternions, the same IEEE
    # operations (x − y as x + (−1) y, which is exact) and so the same bits; by take, whose
    # result is C-contiguous (r[..., index] is not, and np.einsum's sums follow the layout)
    products = r.take(_FIRST, -1) * r.take(_SECOND, -1)
    out = 2.0 * (products.take(_TERM, -1) + _SIGN * products.take(_OTHER, -1))
    out[..., _DIAGONAL] = 1.0 - out[..., _DIAGONAL]
    return out.reshape(*r.shape[:-1], 3, 3)


#: the products of :func:`rotation_matrices`: yy, zz, xx, xy, wz, xz, wy, yz, wx (w, x, y, z = 0..3)
_FIRST = np.array([2, 3, 1, 1, 0, 1, 0, 2, 0])
_SECOND = np.array([2, 3, 1, 2, 3, 3, 2, 3, 1])
#: each entry (row order) as ``products[_TERM] + _SIGN * products[_OTHER]``
_TERM = np.array([0, 3, 5, 3, 2, 7, 5, 7, 2])
_OTHER = np.array([1, 4, 6, 4, 1, 8, 6, 8, 0])
_SIGN = np.array([1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0])
#: the diagonal entries, ``1 − 2 (...)``
_DIAGONAL = np.array([0, 4, 8])
#: the components of :func:`cross`'s two products
_NEXT = np.array([1, 2, 0])
_AFTER = np.array([2, 0, 1])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``numpy.cross`` of 3-vectors along the last axis of ``a`` and ``b`` (broadcast), with its
    operations (``a₁ b₂ − a₂ b₁``, ...: the same bits) and its C-contiguous result, at a third of
    its cost on a few vectors.

    Parameters
    ----------
    a, b : (..., 3) ndarray of float

    Returns
    -------
    numpy.ndarray
        (..., 3), the broadcast shape.
    """
    a, b = np.asarray(a), np.asarray(b)
    return a.take(_NEXT, -1) * b.take(_AFTER, -1) - a.take(_AFTER, -1) * b.take(_NEXT, -1)


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
