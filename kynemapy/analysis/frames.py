"""The rotating frame's operators: W_u and W_θ, and the damping and stiffness matrices of the
linearized equations written in a frame turning at Ω (see :mod:`kynemapy.analysis.rotating`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse

from kynemapy.model import Model


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def frame_operators(model: Model, frame_rate: np.ndarray) -> tuple[scipy.sparse.csc_matrix, scipy.sparse.csc_matrix]:
    """The block-diagonal operators W_u (Ω~ on each node's displacement DOFs) and W_θ (Ω~ on its
    rotation DOFs), (n, n) in the engine's DOF coordinates.

    Parameters
    ----------
    model : Model
        The model.
    frame_rate : (3,) ndarray of float [rad/s]
        The frame's angular velocity Ω (world frame).

    Returns
    -------
    w_u, w_theta : (n, n) scipy.sparse.csc_matrix
        The two operators [rad/s].
    """
    n = int(model.n_system_dofs)
    skew = _skew(np.asarray(frame_rate, dtype=float))
    rows: dict[str, list[np.ndarray]] = {"u": [], "t": []}
    cols: dict[str, list[np.ndarray]] = {"u": [], "t": []}
    vals: dict[str, list[np.ndarray]] = {"u": [], "t": []}
    i, j = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
    for node, dofs in enumerate(np.asarray(model.node_dofs)):
        first = int(model.node_map[node])
        for key, offset, present in (("u", 0, dofs >= 3), ("t", 3, dofs == 6)):
            if present:
                rows[key].append((first + offset + i).ravel())
                cols[key].append((first + offset + j).ravel())
                vals[key].append(skew.ravel())

    def build(key: str) -> scipy.sparse.csc_matrix:
        if not rows[key]:
            return scipy.sparse.csc_matrix((n, n))
        return scipy.sparse.csc_matrix(
            (np.concatenate(vals[key]), (np.concatenate(rows[key]), np.concatenate(cols[key]))), shape=(n, n)
        )

    return build("u"), build("t")


def rotating_frame_matrices(
    model: Model,
    m: scipy.sparse.spmatrix,
    c: scipy.sparse.spmatrix,
    k: scipy.sparse.spmatrix,
    frame_rate: np.ndarray,
) -> tuple[scipy.sparse.csc_matrix, scipy.sparse.csc_matrix]:
    """The damping and stiffness matrices in a frame turning at Ω (the mass matrix is M).

    Parameters
    ----------
    model : Model
        The model.
    m, c, k : (n, n) scipy.sparse matrix
        The engine's M, C, K at a state of steady rotation at Ω (:func:`kynemapy.analysis.linearize`).
    frame_rate : (3,) ndarray of float [rad/s]
        Ω (world frame).

    Returns
    -------
    c_rot, k_rot : (n, n) scipy.sparse.csc_matrix
        ``C + M(2W_u + W_θ)`` (gyroscopic) and ``K + C W_u + M W_u²`` (with the centrifugal
        softening of the displacement DOFs).
    """
    w_u, w_t = frame_operators(model, frame_rate)
    c_rot = (c + m @ (2.0 * w_u + w_t)).tocsc()
    k_rot = (k + c @ w_u + m @ (w_u @ w_u)).tocsc()
    return c_rot, k_rot
