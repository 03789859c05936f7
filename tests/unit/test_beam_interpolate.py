"""Unit tier: interpolation of beam node values to quadrature points, and the reference
geometry (Jacobian, unit tangent) at the points (compiled kernels).

Inputs and expected numbers are those of Kynema-FMB's unit tests
``tests/unit_tests/elements/beams/test_interpolate_QP_state.cpp``,
``test_interpolate_QP_vector.cpp`` (tolerance 1e-16) and
``tests/unit_tests/system/beams/test_calculate_jacobian.cpp`` (exact, resp. 1e-12); each test
cites its source.  kynemapy has one set of interpolation kernels (Kynema has a set-up and a
run-time variant, equal up to rounding): the derivative kernel divides each shape-function
derivative by J before the product, as the run-time kernels do.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kynemapy.engine.elements.beams.interpolate import (
    interp_rotation,
    interp_vector,
    interp_vector_deriv,
    reference_geometry,
)

TOL = 1e-16

NODE_U_ONE = np.arange(1.0, 8.0).reshape(1, 7)
NODE_U_TWO = np.arange(1.0, 15.0).reshape(2, 7)
NODE_V_ONE = np.arange(1.0, 7.0).reshape(1, 6)
NODE_V_TWO = np.arange(1.0, 13.0).reshape(2, 6)
# shape tables (node, qp) of Kynema's test_interpolate_QP.hpp
INTERP_1N1Q, DERIV_1N1Q, JAC_1Q = np.array([[2.0]]), np.array([[4.0]]), np.array([2.0])
INTERP_1N2Q, DERIV_1N2Q, JAC_2Q = np.array([[2.0, 4.0]]), np.array([[4.0, 9.0]]), np.array([2.0, 3.0])
INTERP_2N2Q, DERIV_2N2Q = np.array([[2.0, 3.0], [4.0, 5.0]]), np.array([[4.0, 9.0], [8.0, 15.0]])


def at_points(fn, shape, node, c0, m, jac=None) -> np.ndarray:
    out = np.zeros((shape.shape[1], m))
    for qp in range(shape.shape[1]):
        if jac is None:
            fn(shape, qp, node, c0, out[qp])
        else:
            fn(shape, qp, jac[qp], node, c0, out[qp])
    return out


def rotations(shape, node) -> np.ndarray:
    out = np.zeros((shape.shape[1], 4))
    for qp in range(shape.shape[1]):
        interp_rotation(shape, qp, node, out[qp])
    return out


def test_u_one_node_one_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.u_OneNodeOneQP`` (1e-16)."""
    np.testing.assert_allclose(at_points(interp_vector, INTERP_1N1Q, NODE_U_ONE, 0, 3), [[2.0, 4.0, 6.0]], 0, TOL)


def test_uprime_one_node_one_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.uprime_OneNodeOneQP`` (1e-16)."""
    got = at_points(interp_vector_deriv, DERIV_1N1Q, NODE_U_ONE, 0, 3, JAC_1Q)
    np.testing.assert_allclose(got, [[2.0, 4.0, 6.0]], 0, TOL)


def test_r_one_node_one_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.r_OneNodeOneQP`` (1e-16)."""
    d = 6.0 * math.sqrt(14.0)
    np.testing.assert_allclose(rotations(INTERP_1N1Q, NODE_U_ONE), [[8.0 / d, 10.0 / d, 12.0 / d, 14.0 / d]], 0, TOL)


def test_rprime_one_node_one_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.rprime_OneNodeOneQP`` (1e-16)."""
    got = at_points(interp_vector_deriv, DERIV_1N1Q, NODE_U_ONE, 3, 4, JAC_1Q)
    np.testing.assert_allclose(got, [[8.0, 10.0, 12.0, 14.0]], 0, TOL)


def test_u_one_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.u_OneNodeTwoQP`` (1e-16)."""
    got = at_points(interp_vector, INTERP_1N2Q, NODE_U_ONE, 0, 3)
    np.testing.assert_allclose(got, [[2.0, 4.0, 6.0], [4.0, 8.0, 12.0]], 0, TOL)


def test_uprime_one_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.uprime_OneNodeTwoQP`` (1e-16)."""
    got = at_points(interp_vector_deriv, DERIV_1N2Q, NODE_U_ONE, 0, 3, JAC_2Q)
    np.testing.assert_allclose(got, [[2.0, 4.0, 6.0], [3.0, 6.0, 9.0]], 0, TOL)


def test_r_one_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.r_OneNodeTwoQP`` (1e-16)."""
    d1, d2 = 6.0 * math.sqrt(14.0), 12.0 * math.sqrt(14.0)
    expected = [[8.0 / d1, 10.0 / d1, 12.0 / d1, 14.0 / d1], [16.0 / d2, 20.0 / d2, 24.0 / d2, 28.0 / d2]]
    np.testing.assert_allclose(rotations(INTERP_1N2Q, NODE_U_ONE), expected, 0, TOL)


def test_rprime_one_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.rprime_OneNodeTwoQP`` (1e-16)."""
    got = at_points(interp_vector_deriv, DERIV_1N2Q, NODE_U_ONE, 3, 4, JAC_2Q)
    np.testing.assert_allclose(got, [[8.0, 10.0, 12.0, 14.0], [12.0, 15.0, 18.0, 21.0]], 0, TOL)


def test_u_two_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.u_TwoNodeTwoQP`` (1e-16)."""
    got = at_points(interp_vector, INTERP_2N2Q, NODE_U_TWO, 0, 3)
    np.testing.assert_allclose(got, [[34.0, 40.0, 46.0], [43.0, 51.0, 59.0]], 0, TOL)


def test_uprime_two_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.uprime_TwoNodeTwoQP`` (1e-16)."""
    got = at_points(interp_vector_deriv, DERIV_2N2Q, NODE_U_TWO, 0, 3, JAC_2Q)
    np.testing.assert_allclose(got, [[34.0, 40.0, 46.0], [43.0, 51.0, 59.0]], 0, TOL)


def test_r_two_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.r_TwoNodeTwoQP`` (1e-16)."""
    d1, d2 = 2.0 * math.sqrt(3766.0), 14.0 * math.sqrt(129.0)
    expected = [[52.0 / d1, 58.0 / d1, 64.0 / d1, 70.0 / d1], [67.0 / d2, 75.0 / d2, 83.0 / d2, 91.0 / d2]]
    np.testing.assert_allclose(rotations(INTERP_2N2Q, NODE_U_TWO), expected, 0, TOL)


def test_rprime_two_node_two_qp() -> None:
    """Kynema ``test_interpolate_QP_state.cpp``, ``InterpolateQPStateTests.rprime_TwoNodeTwoQP`` (1e-16)."""
    got = at_points(interp_vector_deriv, DERIV_2N2Q, NODE_U_TWO, 3, 4, JAC_2Q)
    np.testing.assert_allclose(got, [[52.0, 58.0, 64.0, 70.0], [67.0, 75.0, 83.0, 91.0]], 0, TOL)


@pytest.mark.parametrize(
    ("shape", "node_v", "expected"),
    [
        (INTERP_1N1Q, NODE_V_ONE, [[2.0, 4.0, 6.0]]),
        (INTERP_1N2Q, NODE_V_ONE, [[2.0, 4.0, 6.0], [4.0, 8.0, 12.0]]),
        (INTERP_2N2Q, NODE_V_TWO, [[30.0, 36.0, 42.0], [38.0, 46.0, 54.0]]),
    ],
    ids=["OneNodeOneQP", "OneNodeTwoQP", "TwoNodeTwoQP"],
)
def test_interpolate_qp_vector(shape: np.ndarray, node_v: np.ndarray, expected: list[list[float]]) -> None:
    """Kynema ``test_interpolate_QP_vector.cpp``, ``InterpolateQPVectorTests.OneNodeOneQP``, ``OneNodeTwoQP``,
    ``TwoNodeTwoQP`` (1e-16): the velocity (u̇) part of the node velocities."""
    np.testing.assert_allclose(at_points(interp_vector, shape, node_v, 0, 3), expected, 0, TOL)


def geometry(shape_deriv: np.ndarray, node_x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    nn, nq = shape_deriv.shape
    qp_x0, qp_r0, tangent, jac = np.zeros((nq, 3)), np.zeros((nq, 4)), np.zeros((nq, 3)), np.zeros(nq)
    reference_geometry(np.zeros((nn, nq)), shape_deriv, node_x0, qp_x0, qp_r0, tangent, jac)
    return jac, tangent


def test_jacobian_linear_element() -> None:
    """Kynema ``system/beams/test_calculate_jacobian.cpp``, ``CalculateJacobian.LinearElement`` (exact):
    a straight element of length 2 has J = 1 and tangent (1, 0, 0)."""
    nodes = np.array([[-1.0, 0, 0, 0, 0, 0, 0], [1.0, 0, 0, 0, 0, 0, 0]])
    jac, tangent = geometry(np.array([[-0.5], [0.5]]), nodes)
    assert jac[0] == 1.0
    assert tangent[0].tolist() == [1.0, 0.0, 0.0]


def test_jacobian_fourth_order_element() -> None:
    """Kynema ``system/beams/test_calculate_jacobian.cpp``, ``CalculateJacobian.FourthOrderElement`` (1e-12,
    expected values from BeamDyn): Jacobians at 5 points of a curved 4th-order element, unit tangents."""
    positions = [
        [0.0, 0.0, 0.0],
        [0.16237631096713473, 0.17578464768961147, 0.1481911137890286],
        [0.25, 1.0, 1.1875],
        [-0.30523345382427747, 2.4670724951675314, 2.953849702537502],
        [-1.0, 3.5, 4.0],
    ]
    nodes = np.zeros((5, 7))
    nodes[:, :3] = positions
    shape_deriv = np.array(
        [
            -3.70533645359145147,
            -0.528715267980273795,
            0.375000000000000111,
            -0.243518021129600221,
            0.144236409367993451,
            4.33282116876392998,
            -1.0976579678283287,
            -1.33658457769545347,
            0.74973857001328692,
            -0.420676230427679154,
            -0.903924536232162623,
            2.13259378469228889,
            -2.22044604925031308e-16,
            -2.13259378469228977,
            0.90392453623216229,
            0.420676230427679099,
            -0.749738570013287031,
            1.33658457769545347,
            1.09765796782832847,
            -4.33282116876392909,
            -0.144236409367993451,
            0.243518021129600221,
            -0.375000000000000111,
            0.528715267980273684,
            3.70533645359145192,
        ]
    ).reshape(5, 5)
    jac, tangent = geometry(shape_deriv, nodes)
    expected = [0.671587005850145, 1.509599209717606, 2.861380785564898, 4.097191592895187, 4.880926263217582]
    np.testing.assert_allclose(jac, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(tangent, axis=1), 1.0, rtol=0, atol=1e-12)


def test_reference_orientation_is_normalised_and_zero_is_identity() -> None:
    """The reference orientation at a point is the normalised interpolated node quaternion;
    a zero interpolated quaternion gives the identity (Kynema's ``InterpQuaternion``)."""
    nodes = np.zeros((2, 7))
    nodes[:, 0] = [0.0, 2.0]
    nodes[0, 3:7] = [1.0, 0.0, 0.0, 0.0]
    nodes[1, 3:7] = [0.0, 0.0, 0.0, 1.0]
    interp = np.array([[0.5, 0.0], [0.5, 0.0]])
    deriv = np.array([[-0.5, -0.5], [0.5, 0.5]])
    qp_x0, qp_r0, tangent, jac = np.zeros((2, 3)), np.zeros((2, 4)), np.zeros((2, 3)), np.zeros(2)
    reference_geometry(interp, deriv, nodes, qp_x0, qp_r0, tangent, jac)
    h = 1.0 / math.sqrt(2.0)
    np.testing.assert_allclose(qp_r0, [[h, 0.0, 0.0, h], [1.0, 0.0, 0.0, 0.0]], rtol=0, atol=1e-16)
    np.testing.assert_allclose(qp_x0[0], [1.0, 0.0, 0.0], rtol=0, atol=0)
