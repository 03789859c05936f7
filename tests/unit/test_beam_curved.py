"""Unit tier: Kynema-FMB's curved-beam tests (``tests/unit_tests/system/beams/test_curved_beam.cpp``,
data ``test_curved_beam.hpp`` transcribed in ``tests/kynema_curved_beam.py``): a curved
second-order element, 3 nodes at ξ = −1, 0, 1, 7-point Gauss quadrature, reference values from
Kynema's Mathematica notebooks.  Each test cites its Kynema test and tolerance (1e-12 for the
shape functions and Jacobians, 1e-6 for forces and 6×6 matrices, 1e-8 for the residual, 1e-7
for the stiffness matrix).
"""

from __future__ import annotations

import kynema_curved_beam as cb
import numpy as np

from kynemapy.engine.elements.beams import qp as k
from kynemapy.engine.elements.beams.integrate import integrate_residual, integrate_stiffness
from kynemapy.engine.elements.beams.interpolate import reference_geometry
from kynemapy.engine.elements.beams.shape import lagrange_derivative_weights, lagrange_weights, shape_tables
from kynemapy.engine.elements.masses import rotate_section_matrix


def test_lagrange_interp_weights_at_gauss_points() -> None:
    """Kynema ``CurvedBeamTests.LagrangePolynomialInterpWeight_SecondOrder_AtSpecifiedQPs`` (1e-12)."""
    for qp, x in enumerate(cb.GAUSS_POINTS):
        np.testing.assert_allclose(lagrange_weights(x, cb.GLL_NODES), cb.INTERP_WEIGHTS[qp], rtol=0, atol=1e-12)


def test_lagrange_deriv_weights_at_gauss_points() -> None:
    """Kynema ``CurvedBeamTests.LagrangePolynomialDerivWeight_SecondOrder_AtSpecifiedQPs`` (1e-12)."""
    for qp, x in enumerate(cb.GAUSS_POINTS):
        got = lagrange_derivative_weights(x, cb.GLL_NODES)
        np.testing.assert_allclose(got, cb.DERIV_WEIGHTS[qp], rtol=0, atol=1e-12)


def test_jacobian() -> None:
    """Kynema ``CurvedBeamTests.CalculateJacobianForCurvedBeam`` (1e-12): Jacobians and unit tangents,
    from the node positions and Kynema's derivative table; also our shape tables reproduce it."""
    n, q = cb.NUM_NODES, cb.NUM_QPS
    interp, deriv = shape_tables(cb.GLL_NODES, cb.GAUSS_POINTS)
    np.testing.assert_allclose(interp, cb.SHAPE_INTERP, rtol=0, atol=1e-12)
    np.testing.assert_allclose(deriv, cb.SHAPE_DERIV, rtol=0, atol=1e-12)
    qp_x0, qp_r0, tangent, jac = np.zeros((q, 3)), np.zeros((q, 4)), np.zeros((q, 3)), np.zeros(q)
    reference_geometry(np.zeros((n, q)), cb.SHAPE_DERIV, cb.NODES, qp_x0, qp_r0, tangent, jac)
    np.testing.assert_allclose(jac, cb.JACOBIANS, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(tangent, axis=1), 1.0, rtol=0, atol=1e-12)


def test_force_fc() -> None:
    """Kynema ``CurvedBeamTests.CalculateForceFcForCurvedBeam`` (1e-6)."""
    out = np.zeros(6)
    k.elastic_force_fc(cb.CUU, cb.STRAIN, out)
    np.testing.assert_allclose(out, cb.FC, rtol=0, atol=1e-6)


def test_force_fd() -> None:
    """Kynema ``CurvedBeamTests.CalculateForceFdForCurvedBeam`` (1e-6)."""
    out = np.zeros(6)
    k.elastic_force_fd(cb.X0PUP_SS, cb.FC, out)
    np.testing.assert_allclose(out, cb.FD, rtol=0, atol=1e-6)


def test_integrate_residual() -> None:
    """Kynema ``CurvedBeamTests.IntegrateResidualVectorForCurvedBeam`` (1e-8)."""
    zero = np.zeros((cb.NUM_QPS, 6))
    out = np.zeros((cb.NUM_NODES, 6))
    integrate_residual(
        cb.GAUSS_WEIGHTS, cb.JACOBIANS, cb.SHAPE_INTERP, cb.SHAPE_DERIV, np.zeros((cb.NUM_NODES, 6)),
        cb.FE1, cb.FE2, zero, zero, cb.FI, zero, zero, out,
    )  # fmt: skip
    np.testing.assert_allclose(out, cb.RESIDUAL, rtol=0, atol=1e-8)


def test_rotated_stiffness_matrix() -> None:
    """Kynema ``CurvedBeamTests.CalculateRotatedStiffnessMatrixForCurvedBeam`` (1e-6): the section
    rotation shared with the rigid bodies (``masses::RotateSectionMatrix``)."""
    out = np.zeros((6, 6))
    rotate_section_matrix(cb.XR, cb.CSTAR, np.zeros((3, 3)), np.zeros((6, 6)), out)
    np.testing.assert_allclose(out, cb.EXPECTED_CUU, rtol=0, atol=1e-6)


def test_ouu() -> None:
    """Kynema ``CurvedBeamTests.CalculateOuuMatrixForCurvedBeam`` (1e-6)."""
    out = np.zeros((6, 6))
    k.ouu(cb.CUU, cb.X0PUP_SS, cb.M_TILDE, cb.N_TILDE, out)
    np.testing.assert_allclose(out, cb.OUU, rtol=0, atol=1e-6)


def test_puu() -> None:
    """Kynema ``CurvedBeamTests.CalculatePuuMatrixForCurvedBeam`` (1e-6)."""
    out = np.zeros((6, 6))
    k.puu(cb.CUU, cb.X0PUP_SS, cb.N_TILDE, out)
    np.testing.assert_allclose(out, cb.PUU, rtol=0, atol=1e-6)


def test_quu() -> None:
    """Kynema ``CurvedBeamTests.CalculateQuuMatrixForCurvedBeam`` (1e-6)."""
    out = np.zeros((6, 6))
    k.quu(cb.CUU, cb.X0PUP_SS, cb.N_TILDE, np.zeros((3, 3)), out)
    np.testing.assert_allclose(out, cb.QUU, rtol=0, atol=1e-6)


def test_integrate_stiffness_matrix() -> None:
    """Kynema ``CurvedBeamTests.IntegrateStiffnessMatrixForCurvedBeam`` (1e-7)."""
    zero = np.zeros((cb.NUM_QPS, 6, 6))
    out = np.zeros((cb.NUM_NODES, cb.NUM_NODES, 6, 6))
    integrate_stiffness(
        cb.GAUSS_WEIGHTS, cb.JACOBIANS, cb.SHAPE_INTERP, cb.SHAPE_DERIV,
        cb.QP_KUU, cb.QP_PUU, cb.QP_CUU, cb.QP_OUU, cb.QP_QUU, zero, zero, zero, zero,
        np.zeros((cb.NUM_QPS, 5, 36)), np.zeros(36), out,
    )  # fmt: skip
    np.testing.assert_allclose(out, cb.STIFFNESS, rtol=0, atol=1e-7)
