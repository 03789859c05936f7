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
    xs = [float(v) for v in nodes]
    n = len(xs)
    diff = [x - xm for xm in xs]
    out = np.ones(n)
    for j in range(n):
        w = 1.0
        for m in range(n):
            if j != m:
                w *= diff[m] / (xs[j] - xs[m])
        out[j] = w
    return out


def lagrange_derivative_weights(x: float, nodes: Sequence[float]) -> np.ndarray:
    """Derivatives ``dφ_j/dx(x)`` of the Lagrange polynomials of ``nodes``, shape (n,).

    ``φ_i′(x) = Σ_{j≠i} 1/(x_i − x_j) Π_{k≠i,j} (x − x_k)/(x_i − x_k)`` (Kynema's order of
    operations); the derivatives sum to 0.
    """
    xs = [float(v) for v in nodes]
    n = len(xs)
    out = np.zeros(n)
    for i in range(n):
        xi = xs[i]
        weight = 0.0
        for j in range(n):
            if j == i:
                continue
            prod = 1.0
            for k in range(n):
                if k != i and k != j:
                    prod *= (x - xs[k]) / (xi - xs[k])
            weight += prod / (xi - xs[j])
        out[i] = weight
    return out


def linear_weights(x: float, nodes: Sequence[float]) -> np.ndarray:
    """Piecewise-linear interpolation weights at ``x`` between ascending ``nodes``, shape (n,).

    Kynema's ``LinearInterpWeights``: the first node above or at ``x`` (``lower_bound``) and its
    predecessor share the weight; left of the first node (or on it) the first node gets 1, right
    of the last node the last node gets 1 (constant extrapolation).
    """
    xs = np.asarray(nodes, dtype=float)
    out = np.zeros(xs.size)
    index = int(np.searchsorted(xs, x, side="left"))
    if index == 0:
        out[0] = 1.0
        return out
    if index == xs.size:
        out[-1] = 1.0
        return out
    lower, upper = xs[index - 1], xs[index]
    weight_upper = (x - lower) / (upper - lower)
    out[index - 1] = 1.0 - weight_upper
    out[index] = weight_upper
    return out


def shape_tables(node_xi: Sequence[float], qp_xi: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """``(shape_interp, shape_deriv)``, each (nodes, qps): ``φ_j(ξ_k)`` and ``dφ_j/dξ(ξ_k)``.

    Parameters
    ----------
    node_xi : (nodes,) reference coordinates of the element's nodes in [−1, 1].
    qp_xi : (qps,) reference coordinates of the quadrature points in [−1, 1].
    """
    nodes = [float(v) for v in node_xi]
    points = [float(v) for v in qp_xi]
    interp = np.empty((len(nodes), len(points)))
    deriv = np.empty((len(nodes), len(points)))
    for k, x in enumerate(points):
        interp[:, k] = lagrange_weights(x, nodes)
        deriv[:, k] = lagrange_derivative_weights(x, nodes)
    return interp, deriv
