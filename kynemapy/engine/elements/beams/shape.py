"""Lagrange shape functions of a beam element and their derivatives, tabulated at points.

Set-up code (plain Python, run once when a beam is built).  A beam element with nodes at
reference coordinates ``ξ_j`` (Kynema: ``ξ = 2 s − 1`` for the node's span fraction ``s``)
interpolates with the Lagrange polynomials ``φ_j(ξ) = Π_{m≠j} (ξ − ξ_m)/(ξ_j − ξ_m)``; the
tables the element kernels read are ``shape_interp[j, k] = φ_j(ξ_k)`` and
``shape_deriv[j, k] = dφ_j/dξ(ξ_k)`` [1] at the quadrature points ``ξ_k``, both (nodes, qps).
Derivatives along the arc length are ``dφ/ds = dφ/dξ / J`` with the quadrature point's
Jacobian ``J = |dx0/dξ|`` [m].  Kynema-FMB: ``src/math/interpolation.hpp``
(``LagrangePolynomialInterpWeights``, ``LagrangePolynomialDerivWeights``,
``LinearInterpWeights``), ``src/elements/beams/populate_element_views.hpp``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def lagrange_weights(x: float, nodes: Sequence[float]) -> np.ndarray:
    """Values ``φ_j(x)`` of the Lagrange polynomials of ``nodes`` (n distinct points), shape (n,).

    Kynema's evaluation: each weight is the running product of ``(x − x_m)/(x_j − x_m)`` over m
    in node order.  The weights sum to 1 (partition of unity) and reproduce polynomials of
    degree < n exactly.
    """
    return _lagrange_values(np.array([float(x)]), np.asarray(nodes, dtype=float))[:, 0]


def lagrange_derivative_weights(x: float, nodes: Sequence[float]) -> np.ndarray:
    """Derivatives ``dφ_j/dx(x)`` of the Lagrange polynomials of ``nodes``, shape (n,).

    ``φ_i′(x) = Σ_{j≠i} 1/(x_i − x_j) Π_{k≠i,j} (x − x_k)/(x_i − x_k)`` (Kynema's order of
    operations); the derivatives sum to 0.
    """
    return _lagrange_derivatives(np.array([float(x)]), np.asarray(nodes, dtype=float))[:, 0]


def _distinct_nodes(xs: np.ndarray) -> int:
    """The number of ``xs``, which must be distinct (a ``ValueError`` otherwise)."""
    if np.unique(xs).size != xs.size:
        raise ValueError(f"Lagrange interpolation: the nodes must be distinct, got {xs.tolist()}")
    return int(xs.size)


def _lagrange_values(x: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """:func:`lagrange_weights` at every point of ``x`` (P,): (n, P).  Every weight is formed by
    Kynema's operations in Kynema's order, all points and nodes at once: a factor skipped there
    (m = j) is a multiplication by exactly 1.0 here, which changes no bit."""
    n = _distinct_nodes(xs)
    out = np.ones((n, x.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in range(n):
            factor = (x - xs[m])[None, :] / (xs - xs[m])[:, None]  # (j, P): (x − x_m)/(x_j − x_m)
            factor[m] = 1.0
            out *= factor
    return out


def _lagrange_derivatives(x: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """:func:`lagrange_derivative_weights` at every point of ``x`` (P,): (n, P), by Kynema's
    operations in Kynema's order for each node and point (a skipped factor is a multiplication
    by exactly 1.0, a skipped term an addition of exactly 0.0 to a sum that starts at +0.0)."""
    n = _distinct_nodes(xs)
    with np.errstate(divide="ignore", invalid="ignore"):
        # t[k, i, P] = (x − x_k)/(x_i − x_k)
        t = (x[None, None, :] - xs[:, None, None]) / (xs[None, :] - xs[:, None])[:, :, None]
        prod = np.ones((n, n, x.size))  # [i, j, P]: Π_{k≠i,j} t[k, i] in k order
        for k in range(n):
            factor = np.broadcast_to(t[k][:, None, :], prod.shape).copy()
            factor[k] = 1.0
            factor[:, k] = 1.0
            prod *= factor
        weight = np.zeros((n, x.size))
        for j in range(n):
            term = prod[:, j, :] / (xs - xs[j])[:, None]
            term[j] = 0.0
            weight += term
    return weight


def linear_weights(x: float, nodes: Sequence[float]) -> np.ndarray:
    """Piecewise-linear interpolation weights at ``x`` between ascending ``nodes``, shape (n,).

    Kynema's ``LinearInterpWeights``: the first node above or at ``x`` (``lower_bound``) and its
    predecessor share the weight; left of the first node (or on it) the first node gets 1, right
    of the last node the last node gets 1 (constant extrapolation).
    """
    return linear_weight_table(np.array([float(x)]), np.asarray(nodes, dtype=float))[0]


def linear_weight_table(x: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """:func:`linear_weights` at every point of ``x`` (P,): (P, n), the same operations."""
    out = np.zeros((x.size, xs.size))
    index = np.searchsorted(xs, x, side="left")
    rows = np.arange(x.size)
    first = index == 0
    last = index == xs.size
    out[rows[first], 0] = 1.0
    out[rows[last], -1] = 1.0
    inside = ~(first | last)
    k = index[inside]
    lower, upper = xs[k - 1], xs[k]
    weight_upper = (x[inside] - lower) / (upper - lower)
    out[rows[inside], k - 1] = 1.0 - weight_upper
    out[rows[inside], k] = weight_upper
    return out


def shape_tables(node_xi: Sequence[float], qp_xi: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """``(shape_interp, shape_deriv)``, each (nodes, qps): ``φ_j(ξ_k)`` and ``dφ_j/dξ(ξ_k)``.

    Parameters
    ----------
    node_xi : (nodes,) reference coordinates of the element's nodes in [−1, 1].
    qp_xi : (qps,) reference coordinates of the quadrature points in [−1, 1].
    """
    nodes = np.array([float(v) for v in node_xi])
    points = np.array([float(v) for v in qp_xi])
    return _lagrange_values(points, nodes), _lagrange_derivatives(points, nodes)
