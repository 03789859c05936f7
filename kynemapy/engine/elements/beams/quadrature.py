"""Legendre polynomials, Gauss–Lobatto–Legendre (GLL) nodes and the beam quadrature rules.

Set-up code (plain Python and numpy, run once when a beam is built): the element's nodes sit at
GLL points of the reference interval ξ ∈ [−1, 1]; its quadrature is Gauss–Legendre (GL), GLL or
trapezoidal.  A quadrature rule is an (n, 2) float64 array of rows ``(ξ, weight)``; the weights
of a rule on [−1, 1] sum to 2 (its length).  Kynema-FMB: ``src/math/interpolation.hpp``
(``LegendrePolynomial``, ``GenerateGLLPoints``), ``src/math/gl_quadrature.hpp``,
``src/math/gll_quadrature.hpp`` and ``src/elements/beams/beam_quadrature.hpp``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: Newton iterations allowed per GLL point before giving up (Kynema's limit)
_GLL_MAX_ITERATIONS = 1000


def legendre_polynomial(n: int, x: float) -> float:
    """Legendre polynomial ``P_n(x)`` by the three-term recurrence (Kynema's evaluation order).

    ``P_k = ((2k − 1) x P_{k−1} − (k − 1) P_{k−2}) / k``.

    Parameters
    ----------
    n : order, n >= 0.
    x : point, usually in [−1, 1].
    """
    if n == 0:
        return 1.0
    if n == 1:
        return float(x)
    p_2, p_1, p_n = 1.0, float(x), 0.0
    for i in range(2, n + 1):
        k = float(i)
        p_n = ((2.0 * k - 1.0) * x * p_1 - (k - 1.0) * p_2) / k
        p_2, p_1 = p_1, p_n
    return p_n


def gll_points(order: int) -> np.ndarray:
    """The ``order + 1`` Gauss–Lobatto–Legendre points on [−1, 1], ascending, shape (order + 1,).

    The interior points are the roots of ``(1 − x²) P′_order(x)``, found as Kynema finds them:
    Newton iteration on ``x P_N(x) − P_{N−1}(x)`` (N = order + 1 nodes) from the
    Chebyshev–Gauss–Lobatto guess ``−cos(iπ/order)``, to a step of at most machine epsilon.

    Parameters
    ----------
    order : int
        The polynomial order (>= 1); the rule has ``order + 1`` points.

    Returns
    -------
    (order + 1,) ndarray of float
        The points ξ [-], ascending, ``−1`` and ``1`` included.

    Raises
    ------
    ValueError
        ``order < 1``.
    RuntimeError
        The iteration does not converge.
    """
    if order < 1:
        raise ValueError(f"GLL points: polynomial order must be >= 1, got {order}")
    n_nodes = order + 1
    points = np.zeros(n_nodes)
    points[0], points[-1] = -1.0, 1.0
    eps = np.finfo(float).eps
    for i in range(1, order):
        x = -math.cos(i * math.pi / order)
        for _ in range(_GLL_MAX_ITERATIONS):
            x_old = x
            p_last = legendre_polynomial(n_nodes - 1, x)
            p_prev = legendre_polynomial(n_nodes - 2, x)
            x -= (x * p_last - p_prev) / (n_nodes * p_last)
            if abs(x - x_old) <= eps:
                break
        else:
            raise RuntimeError(f"GLL points: Newton iteration did not converge for point {i} of order {order}")
        points[i] = x
    return points


def gll_weights(order: int) -> np.ndarray:
    """GLL quadrature weights ``2 / (N (N − 1) P_{N−1}(x_i)²)`` (N = order + 1 points), shape (N,).

    Exact for polynomials of degree up to ``2 order − 1``; the weights sum to 2.

    Parameters
    ----------
    order : int
        The polynomial order (>= 1); the rule has ``order + 1`` points.

    Returns
    -------
    (order + 1,) ndarray of float
        The weights [-], in the order of :func:`gll_points`.

    Raises
    ------
    ValueError
        ``order < 1``.
    """
    points = gll_points(order)
    n = order + 1
    return np.array([2.0 / (n * (n - 1) * legendre_polynomial(order, x) ** 2) for x in points])


def gauss_points_weights(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre points (roots of ``P_n``, ascending) and weights on [−1, 1], each shape (n,).

    Exact for polynomials of degree up to ``2n − 1``; computed by numpy's
    :func:`numpy.polynomial.legendre.leggauss` (Kynema tabulates the same values).
    """
    if n < 1:
        raise ValueError(f"Gauss quadrature: number of points must be >= 1, got {n}")
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def gauss_quadrature(n: int) -> np.ndarray:
    """The n-point Gauss–Legendre rule on [−1, 1], exact up to degree ``2n − 1``.

    Parameters
    ----------
    n : int
        The number of points (>= 1).

    Returns
    -------
    (n, 2) ndarray of float
        Rows ``(ξ, weight)``, ξ ascending; the weights sum to 2.

    Raises
    ------
    ValueError
        ``n < 1``.
    """
    x, w = gauss_points_weights(n)
    return np.column_stack((x, w))


def gll_quadrature(order: int) -> np.ndarray:
    """The ``order + 1``-point Gauss–Lobatto–Legendre rule on [−1, 1].

    Parameters
    ----------
    order : int
        The polynomial order (>= 1); the rule has ``order + 1`` points.

    Returns
    -------
    (order + 1, 2) ndarray of float
        Rows ``(ξ, weight)`` (:func:`gll_points`, :func:`gll_weights`).

    Raises
    ------
    ValueError
        ``order < 1``.
    """
    return np.column_stack((gll_points(order), gll_weights(order)))


def trapezoidal_quadrature(grid: Sequence[float]) -> np.ndarray:
    """Trapezoidal rule at the points of ``grid`` mapped onto [−1, 1], shape (n, 2).

    Kynema's ``CreateTrapezoidalQuadrature``: the grid (ascending, n >= 2, any units) is mapped
    linearly onto [−1, 1]; the weight of an interior point is ``(g[i+1] − g[i−1]) / range`` and of
    an end point ``(g[1] − g[0]) / range`` (resp. the last interval), so the weights sum to 2.

    Parameters
    ----------
    grid : (n,) sequence of float
        The points, ascending, n >= 2, in any unit (e.g. [m] along the beam or [-]).

    Returns
    -------
    (n, 2) ndarray of float
        Rows ``(ξ, weight)``, ξ the grid points mapped onto [−1, 1].

    Raises
    ------
    ValueError
        ``grid`` is not one-dimensional or has fewer than two points.
    """
    g = np.asarray(grid, dtype=float)
    if g.ndim != 1 or g.size < 2:
        raise ValueError("trapezoidal quadrature: the grid needs at least two points")
    lo, hi = float(g.min()), float(g.max())
    span = hi - lo
    out = np.empty((g.size, 2))
    out[0] = (-1.0, (g[1] - g[0]) / span)
    for i in range(1, g.size - 1):
        out[i] = ((2.0 * (g[i] - lo) / span) - 1.0, (g[i + 1] - g[i - 1]) / span)
    out[-1] = (1.0, (g[-1] - g[-2]) / span)
    return out
