"""Interpolation of a beam element's node values to one quadrature point (compiled kernels).

The element's nodes carry ``node_u`` (nodes, 7) = (u [m], r) with r the rotation quaternion
(w, x, y, z) of the node's displacement, ``node_v`` (nodes, 6) = (u̇ [m/s], ω [rad/s]) and
``node_vd`` (nodes, 6) = (ü [m/s²], ω̇ [rad/s²]).  With the shape-function tables of
:mod:`.shape` (``shape[j, k]``: node j, quadrature point k) a value at point k is
``Σ_j node[j] φ_j(ξ_k)`` and its arc-length derivative ``Σ_j node[j] (dφ_j/dξ(ξ_k) / J_k)``.
An interpolated quaternion is normalised.  Sums run over the nodes in order, as Kynema's
``InterpolateToQuadraturePointFor*`` and ``InterpolateQP*`` kernels sum them.  The number of
nodes is the first extent of the node array (shape tables may have padding rows).  Nothing
here allocates: results go to ``out`` arrays.
"""

from __future__ import annotations

import math

import numpy as np

from kynemapy._jit import njit

#: the first column of a node value's translation and rotation parts, as int64 values rather
#: than int literals: numba compiles a callee once per distinct literal argument (the
#: interpolations were compiled 8 times, 2.5 s of a first compilation), while LLVM inlines it,
#: constants and all, either way
TRANSLATION, ROTATION = np.int64(0), np.int64(3)


@njit(inline=True)
def _weighted_sum(table, qp, jacobian, divide, node_v, c0, out):
    """``out[k] = Σ_j node_v[j, c0 + k] w_j`` with ``w_j = table[j, qp]`` (divided by
    ``jacobian`` when ``divide``), summed over the nodes in order."""
    m = out.shape[0]
    if m == 3 or m == 4:  # the sums in registers (numba cannot prove out apart from node_v)
        s0 = s1 = s2 = s3 = 0.0
        for j in range(node_v.shape[0]):
            w = table[j, qp] / jacobian if divide else table[j, qp]
            row = node_v[j]
            s0 += row[c0] * w
            s1 += row[c0 + 1] * w
            s2 += row[c0 + 2] * w
            if m == 4:
                s3 += row[c0 + 3] * w
        out[0], out[1], out[2] = s0, s1, s2
        if m == 4:
            out[3] = s3
        return
    for k in range(m):
        out[k] = 0.0
    for j in range(node_v.shape[0]):
        w = table[j, qp] / jacobian if divide else table[j, qp]
        for k in range(m):
            out[k] += node_v[j, c0 + k] * w


@njit
def interp_vector(shape, qp, node_v, c0, out):
    """``out[k] = Σ_j node_v[j, c0 + k] shape[j, qp]`` for ``k < out.shape[0]``.

    Parameters
    ----------
    shape : (>= nodes, >= qps) shape-function values.
    qp : quadrature point index.
    node_v : (nodes, >= c0 + len(out)) node values.
    c0 : first component read.
    out : (m,) result.
    """
    _weighted_sum(shape, qp, 1.0, False, node_v, c0, out)


@njit
def interp_vector_deriv(shape_deriv, qp, jacobian, node_v, c0, out):
    """Arc-length derivative ``out[k] = Σ_j node_v[j, c0 + k] (shape_deriv[j, qp] / J)`` [1/m].

    ``jacobian`` J = |dx0/dξ| [m] at the point; ``shape_deriv`` (>= nodes, >= qps) holds dφ/dξ.
    """
    _weighted_sum(shape_deriv, qp, jacobian, True, node_v, c0, out)


@njit
def normalize_quaternion(q):
    """Divide the (4,) array ``q`` by its length in place; a zero ``q`` becomes (1, 0, 0, 0)."""
    length = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if length == 0.0:
        q[0], q[1], q[2], q[3] = 1.0, 0.0, 0.0, 0.0
        return
    for k in range(4):
        q[k] /= length


@njit
def interp_rotation(shape, qp, node_u, out):
    """Interpolated, normalised quaternion (4,) of ``node_u[:, 3:7]`` at quadrature point ``qp``."""
    interp_vector(shape, qp, node_u, ROTATION, out)
    normalize_quaternion(out)


@njit
def reference_geometry(shape_interp, shape_deriv, node_x0, qp_x0, qp_r0, qp_x0_prime, qp_jacobian):
    """Reference position, orientation, unit tangent and Jacobian at every quadrature point.

    Kynema's ``InterpolateQPPosition``, ``InterpolateQPRotation`` and ``CalculateJacobian``.

    Parameters
    ----------
    shape_interp, shape_deriv : (>= nodes, >= qps) φ and dφ/dξ.
    node_x0 : (nodes, 7) reference position [m] and orientation quaternion of each node.
    qp_x0 : (qps, 3) out, reference position [m].
    qp_r0 : (qps, 4) out, reference orientation (interpolated node quaternions, normalised).
    qp_x0_prime : (qps, 3) out, unit tangent dx0/ds [1].
    qp_jacobian : (qps,) out, J = |dx0/dξ| [m].
    """
    for qp in range(qp_jacobian.shape[0]):
        interp_vector(shape_interp, qp, node_x0, TRANSLATION, qp_x0[qp])
        interp_rotation(shape_interp, qp, node_x0, qp_r0[qp])
        t = qp_x0_prime[qp]
        interp_vector(shape_deriv, qp, node_x0, TRANSLATION, t)
        jacobian = math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
        qp_jacobian[qp] = jacobian
        for k in range(3):
            t[k] /= jacobian
