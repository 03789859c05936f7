"""Unit tier: the beam's interpolation and quadrature set-up (plain Python).

Inputs and expected numbers are those of Kynema-FMB's unit tests
``tests/unit_tests/math/test_interpolation.cpp`` (tolerance 1e-12, GLL points 1e-15) and
``tests/unit_tests/elements/beams/test_beam_quadrature.cpp`` (1e-14), each test citing its
source; the last tests are closed-form checks of our own (partition of unity, exact
interpolation of polynomials, quadrature exactness).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kynemapy.engine.elements.beams.quadrature import (
    gauss_points_weights,
    gauss_quadrature,
    gll_points,
    gll_quadrature,
    gll_weights,
    legendre_polynomial,
    trapezoidal_quadrature,
)
from kynemapy.engine.elements.beams.shape import (
    lagrange_derivative_weights,
    lagrange_weights,
    linear_weights,
    shape_tables,
)

TOL = 1e-12
GLL4 = [-1.0, -0.6546536707079771, 0.0, 0.6546536707079771, 1.0]


def test_linear_interp_weight() -> None:
    """Kynema ``math/test_interpolation.cpp``,
    ``InterpolationTest.LinearInterpWeight`` (1e-12)."""
    xs = [0.0, 1.0, 2.0]
    cases = [(-1.0, [1.0, 0.0, 0.0]), (1.0, [0.0, 1.0, 0.0]), (0.5, [0.5, 0.5, 0.0]), (3.0, [0.0, 0.0, 1.0])]
    for x, expected in cases:
        np.testing.assert_allclose(linear_weights(x, xs), expected, rtol=0, atol=TOL)


@pytest.mark.parametrize(
    ("x", "expected"),
    [(-1.0, [1.0, 0.0]), (0.0, [0.5, 0.5]), (1.0, [0.0, 1.0])],
)
def test_lagrange_interp_weight_first_order(x: float, expected: list[float]) -> None:
    """Kynema ``math/test_interpolation.cpp``,
    ``InterpolationTest.LagrangePolynomialInterpWeight_FirstOrder`` (1e-12)."""
    np.testing.assert_allclose(lagrange_weights(x, [-1.0, 1.0]), expected, rtol=0, atol=TOL)


def test_lagrange_interp_weight_second_order() -> None:
    """Kynema ``math/test_interpolation.cpp``,
    ``InterpolationTest.LagrangePolynomialInterpWeight_SecondOrder`` (1e-12)."""
    for x, expected in [(-1.0, [1, 0, 0]), (0.0, [0, 1, 0]), (1.0, [0, 0, 1])]:
        np.testing.assert_allclose(lagrange_weights(x, [-1.0, 0.0, 1.0]), expected, rtol=0, atol=TOL)


def test_lagrange_interp_weight_fourth_order() -> None:
    """Kynema ``math/test_interpolation.cpp``,
    ``InterpolationTest.LagrangePolynomialInterpWeight_FourthOrder`` (1e-12)."""
    for k, x in enumerate(GLL4):
        np.testing.assert_allclose(lagrange_weights(x, GLL4), np.eye(5)[k], rtol=0, atol=TOL)
    cases = [
        (-0.8, [0.2664, 0.855336358376291, -0.1776, 0.0854636416237095, -0.0296]),
        (0.1, [0.0329625, -0.1121093731918499, 0.9669, 0.1525343731918499, -0.0402875]),
        (0.4, [0.0564, -0.1746924181056723, 0.5263999999999998, 0.7234924181056726, -0.1316]),
    ]
    for x, expected in cases:
        np.testing.assert_allclose(lagrange_weights(x, GLL4), expected, rtol=0, atol=TOL)


def test_lagrange_interp_weight_nodes_not_at_gll_points() -> None:
    """Kynema ``math/test_interpolation.cpp``, ``InterpolationTest.LagrangePolynomialInterpWeight_NodesNotAtGLLPoints``
    (1e-12)."""
    xs = [0.0, 1.0, 2.0]
    for x, expected in [(0.5, [0.375, 0.75, -0.125]), (1.0, [0.0, 1.0, 0.0]), (-1.0, [3.0, -3.0, 1.0])]:
        np.testing.assert_allclose(lagrange_weights(x, xs), expected, rtol=0, atol=TOL)


def test_lagrange_deriv_weights_first_order() -> None:
    """Kynema ``math/test_interpolation.cpp``,
    ``InterpolationTest.LagrangePolynomialDerivWeights_FirstOrder`` (1e-12)."""
    for x in (-1.0, 1.0):
        np.testing.assert_allclose(lagrange_derivative_weights(x, [-1.0, 1.0]), [-0.5, 0.5], rtol=0, atol=TOL)


def test_lagrange_deriv_weights_fourth_order() -> None:
    """Kynema ``math/test_interpolation.cpp``,
    ``InterpolationTest.LagrangePolynomialDerivWeights_FourthOrder`` (1e-12)."""
    cases = [
        (-1.0, [-5.0, 6.75650248872424, -2.666666666666667, 1.410164177942427, -0.5]),
        (-0.6546536707079771, [-1.240990253030983, 0.0, 1.74574312188794, -0.7637626158259736, 0.2590097469690172]),
        (0.0, [0.375, -1.336584577695454, 0.0, 1.336584577695454, -0.375]),
        (0.6546536707079771, [-0.2590097469690172, 0.7637626158259736, -1.74574312188794, 0.0, 1.240990253030983]),
        (1.0, [0.5, -1.410164177942427, 2.666666666666667, -6.756502488724241, 5.0]),
        (-0.8, [-2.497, 2.144324478146484, 0.5546666666666656, -0.31499114481315, 0.1129999999999999]),
        (0.1, [0.27725, -0.896320373697923, -0.6573333333333338, 1.696653707031257, -0.42025]),
        (0.4, [-0.1210000000000001, 0.4156426862650312, -2.069333333333333, 1.805690647068303, -0.03099999999999978]),
    ]
    for x, expected in cases:
        np.testing.assert_allclose(lagrange_derivative_weights(x, GLL4), expected, rtol=0, atol=TOL)


@pytest.mark.parametrize(
    ("n", "cases"),
    [
        (0, [(-1.0, 1.0), (0.0, 1.0), (1.0, 1.0)]),
        (1, [(-1.0, -1.0), (0.0, 0.0), (1.0, 1.0)]),
        (2, [(-1.0, 1.0), (0.0, -0.5), (1.0, 1.0)]),
        (3, [(-1.0, -1.0), (0.0, 0.0), (1.0, 1.0)]),
        (
            4,
            [
                (-1.0, 1.0),
                (-0.6546536707079771, -0.4285714285714286),
                (0.0, 0.375),
                (0.6546536707079771, -0.4285714285714286),
                (1.0, 1.0),
            ],
        ),
    ],
)
def test_legendre_polynomial(n: int, cases: list[tuple[float, float]]) -> None:
    """Kynema ``math/test_interpolation.cpp``, ``InterpolationTest.LegendrePolynomial_ZerothOrder`` …
    ``_FourthOrder`` (1e-12)."""
    for x, expected in cases:
        assert legendre_polynomial(n, x) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (1, [-1.0, 1.0]),
        (2, [-1.0, 0.0, 1.0]),
        (4, [-1.0, -0.6546536707079771437983, 0.0, 0.654653670707977143798, 1.0]),
        (6, [-1.0, -0.8302238962785669, -0.46884879347071423, 0.0, 0.46884879347071423, 0.8302238962785669, 1.0]),
    ],
)
def test_generate_gll_points(order: int, expected: list[float]) -> None:
    """Kynema ``math/test_interpolation.cpp``, ``InterpolationTest.GenerateGLLPoints_FirstOrderElement``,
    ``_SecondOrderElement``, ``_FourthOrderElement``, ``_SixthOrderElement`` (1e-15)."""
    points = gll_points(order)
    assert points.shape == (order + 1,)
    np.testing.assert_allclose(points, expected, rtol=0, atol=1e-15)


def test_gll_points_reject_order_zero() -> None:
    """Kynema throws for order < 1 (``GenerateGLLPoints``)."""
    with pytest.raises(ValueError, match="order"):
        gll_points(0)


def test_trapezoidal_quadrature_uniform() -> None:
    """Kynema ``elements/beams/test_beam_quadrature.cpp``, ``BeamQuadratureTest.CheckCreateTrapezoidalQuadrature_1``
    (1e-14)."""
    expected = [[-1.0, 0.2], [-0.6, 0.4], [-0.2, 0.4], [0.2, 0.4], [0.6, 0.4], [1.0, 0.2]]
    np.testing.assert_allclose(trapezoidal_quadrature([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), expected, rtol=0, atol=1e-14)


def test_trapezoidal_quadrature_nonuniform() -> None:
    """Kynema ``elements/beams/test_beam_quadrature.cpp``, ``BeamQuadratureTest.CheckCreateTrapezoidalQuadrature_2``
    (1e-14)."""
    expected = [[-1.0, 0.2], [-0.6, 0.4], [-0.2, 0.3], [0.0, 0.4], [0.6, 0.4], [0.8, 0.2], [1.0, 0.1]]
    grid = [-5.0, -3.0, -1.0, 0.0, 3.0, 4.0, 5.0]
    np.testing.assert_allclose(trapezoidal_quadrature(grid), expected, rtol=0, atol=1e-14)


def test_gll_and_gauss_tables_match_kynema() -> None:
    """The tabulated rules of Kynema's ``src/math/gll_quadrature.hpp`` (orders 4, 7) and
    ``gl_quadrature.hpp`` (7 points) against ours (1e-15): the element's nodes and quadrature."""
    np.testing.assert_allclose(
        gll_weights(4), [1.0 / 10.0, 49.0 / 90.0, 32.0 / 45.0, 49.0 / 90.0, 1.0 / 10.0], rtol=0, atol=1e-15
    )
    np.testing.assert_allclose(
        gll_points(7),
        [
            -1.0,
            -0.87174014850960657,
            -0.59170018143314229,
            -0.20929921790247885,
            0.20929921790247885,
            0.59170018143314229,
            0.87174014850960657,
            1.0,
        ],
        rtol=0,
        atol=1e-15,
    )
    np.testing.assert_allclose(
        gll_weights(7),
        [
            3.5714285714285712e-002,
            0.21070422714350615,
            0.34112269248350441,
            0.41245879465870372,
            0.41245879465870372,
            0.34112269248350441,
            0.21070422714350615,
            3.5714285714285712e-002,
        ],
        rtol=0,
        atol=1e-15,
    )
    x, w = gauss_points_weights(7)
    np.testing.assert_allclose(
        x,
        [
            -0.9491079123427585,
            -0.7415311855993945,
            -0.4058451513773972,
            0.0,
            0.4058451513773972,
            0.7415311855993945,
            0.9491079123427585,
        ],
        rtol=0,
        atol=1e-15,
    )
    np.testing.assert_allclose(
        w,
        [
            0.1294849661688697,
            0.2797053914892766,
            0.3818300505051189,
            0.4179591836734694,
            0.3818300505051189,
            0.2797053914892766,
            0.1294849661688697,
        ],
        rtol=0,
        atol=1e-15,
    )


# ---------------------------------------------------------------------------
# closed-form checks of our own


@pytest.mark.parametrize("order", [1, 2, 3, 5, 8, 12, 20])
def test_shape_functions_partition_of_unity_and_polynomial_exactness(order: int) -> None:
    """Lagrange shape functions on GLL nodes: Σ φ_j = 1, Σ φ′_j = 0, and a polynomial of the
    element's order (and its derivative) is interpolated exactly at arbitrary points."""
    nodes = gll_points(order)
    points = np.linspace(-1.0, 1.0, 13) * 0.97
    interp, deriv = shape_tables(nodes, points)
    np.testing.assert_allclose(interp.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(deriv.sum(axis=0), 0.0, rtol=0, atol=1e-9)
    coeffs = np.cos(np.arange(order + 1) + 0.3)  # a polynomial of degree `order`
    p = np.polynomial.Polynomial(coeffs)
    np.testing.assert_allclose(p(nodes) @ interp, p(points), rtol=0, atol=1e-10)
    np.testing.assert_allclose(p(nodes) @ deriv, p.deriv()(points), rtol=0, atol=1e-8)


@pytest.mark.parametrize("order", [1, 2, 3, 4, 6, 10, 20])
def test_gll_rule_sums_to_two_and_integrates_degree_2n_minus_1(order: int) -> None:
    """GLL weights sum to 2 (the length of [−1, 1]) and integrate x^k exactly for k ≤ 2·order − 1."""
    rule = gll_quadrature(order)
    assert rule[:, 1].sum() == pytest.approx(2.0, abs=1e-13)
    for k in range(2 * order):
        exact = 0.0 if k % 2 else 2.0 / (k + 1)
        assert float(rule[:, 1] @ rule[:, 0] ** k) == pytest.approx(exact, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 7, 12])
def test_gauss_rule_integrates_degree_2n_minus_1(n: int) -> None:
    """n-point Gauss rule: weights sum to 2 and integrate x^k exactly for k ≤ 2n − 1."""
    rule = gauss_quadrature(n)
    for k in range(2 * n):
        exact = 0.0 if k % 2 else 2.0 / (k + 1)
        assert float(rule[:, 1] @ rule[:, 0] ** k) == pytest.approx(exact, abs=1e-13)


def test_legendre_matches_closed_form() -> None:
    """P_3(x) = (5x³ − 3x)/2 and P_5 against numpy's Legendre series."""
    for x in np.linspace(-1.0, 1.0, 9):
        assert legendre_polynomial(3, x) == pytest.approx(0.5 * (5 * x**3 - 3 * x), abs=1e-15)
        assert legendre_polynomial(5, x) == pytest.approx(np.polynomial.legendre.legval(x, [0] * 5 + [1]), abs=1e-14)
    assert math.isclose(legendre_polynomial(7, 1.0), 1.0)


def test_lagrange_weights_refuse_coincident_nodes() -> None:
    """Two nodes at one point have no Lagrange polynomials: a ValueError naming the nodes,
    not a division by zero or silent infinities."""
    for f in (lagrange_weights, lagrange_derivative_weights):
        with pytest.raises(ValueError, match="distinct"):
            f(0.3, [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="distinct"):
        shape_tables([-1.0, 0.5, 0.5, 1.0], [0.0])


def test_shape_tables_at_the_nodes_are_the_identity_and_the_node_derivatives() -> None:
    """At its own nodes the table of φ is the identity, and dφ/dξ is the derivative matrix of
    the nodes' polynomial (the exact derivative of ξ³ at each node, order 3: Σ_j φ_j′ ξ_j³ = 3ξ²)."""
    nodes = [-1.0, -0.4472135954999579, 0.4472135954999579, 1.0]
    interp, deriv = shape_tables(nodes, nodes)
    np.testing.assert_allclose(interp, np.eye(4), rtol=0, atol=TOL)
    np.testing.assert_allclose(np.asarray(nodes) ** 3 @ deriv, 3 * np.asarray(nodes) ** 2, rtol=0, atol=1e-12)
