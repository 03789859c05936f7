"""Unit tier: sectional matrices (plain Python set-up).

Kynema-FMB's unit tests ``tests/unit_tests/elements/beams/test_generate_sectional_properties.cpp``
and ``test_hollow_circle_properties.cpp`` (tolerance 1e-12, the expected matrices written, as
there, from the input properties; BeamDyn's section axes, z along the beam), then checks of our
own of the interpolation of sections to the quadrature points (Kynema's ``PopulateQPMstar``,
``PopulateQPCstar``) and of an element's set-up tables.
"""

from __future__ import annotations

import math

import kynema_curved_beam as cb
import numpy as np
import pytest

from kynemapy.engine.elements.beams.quadrature import gauss_quadrature
from kynemapy.engine.elements.beams.sections import (
    element_tables,
    generate_mass_matrix,
    generate_stiffness_matrix,
    hollow_circle_properties,
    hollow_circle_section,
    interpolate_sections,
)

TOL = 1e-12
# the test parameters of Kynema's GenerateSectionalMatricesTest
EA, EI_X, EI_Y, GKT, GA, KXS, KYS = 1000.0, 200.0, 300.0, 150.0, 400.0, 1.0, 1.0
M, I_X, I_Y, I_P = 10.0, 5.0, 8.0, 13.0


def test_stiffness_matrix_uncoupled() -> None:
    """Kynema ``test_generate_sectional_properties.cpp``, ``GenerateSectionalMatricesTest.StiffnessMatrix_Uncoupled``
    (1e-12)."""
    got = generate_stiffness_matrix(EA, EI_X, EI_Y, GKT, GA, KXS, KYS)
    np.testing.assert_allclose(got, np.diag([GA, GA, EA, EI_X, EI_Y, GKT]), rtol=0, atol=TOL)


def test_stiffness_matrix_centroid_offset_coupling() -> None:
    """Kynema ``test_generate_sectional_properties.cpp``,
    ``GenerateSectionalMatricesTest.StiffnessMatrix_CentroidOffsetCoupling`` (1e-12)."""
    x_c, y_c = 0.1, 0.2
    got = generate_stiffness_matrix(EA, EI_X, EI_Y, GKT, GA, KXS, KYS, x_C=x_c, y_C=y_c)
    expected = np.diag([GA, GA, EA, EI_X + EA * y_c * y_c, EI_Y + EA * x_c * x_c, GKT])
    expected[2, 3] = expected[3, 2] = EA * y_c
    expected[2, 4] = expected[4, 2] = -EA * x_c
    expected[3, 4] = expected[4, 3] = -EA * x_c * y_c
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)


def test_mass_matrix_uncoupled() -> None:
    """Kynema ``test_generate_sectional_properties.cpp``, ``GenerateSectionalMatricesTest.MassMatrix_Uncoupled``
    (1e-12)."""
    np.testing.assert_allclose(generate_mass_matrix(M, I_X, I_Y, I_P), np.diag([M, M, M, I_X, I_Y, I_P]), 0, TOL)


def test_mass_matrix_cg_offset_coupling() -> None:
    """Kynema ``test_generate_sectional_properties.cpp``, ``GenerateSectionalMatricesTest.MassMatrix_CGOffsetCoupling``
    (1e-12)."""
    x_g, y_g = 0.2, 0.3
    got = generate_mass_matrix(M, I_X, I_Y, I_P, x_G=x_g, y_G=y_g)
    expected = np.diag([M, M, M, I_X + M * y_g * y_g, I_Y + M * x_g * x_g, I_P + M * (x_g * x_g + y_g * y_g)])
    expected[0, 5] = expected[5, 0] = -M * y_g
    expected[1, 5] = expected[5, 1] = M * x_g
    expected[2, 3] = expected[3, 2] = M * y_g
    expected[2, 4] = expected[4, 2] = -M * x_g
    expected[3, 4] = expected[4, 3] = -M * x_g * y_g
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("thickness", [0.6, 0.5])
def test_hollow_circle_invalid_geometry(thickness: float) -> None:
    """Kynema ``test_hollow_circle_properties.cpp``, ``HollowCirclePropertiesTest.InvalidGeometryThrows``."""
    with pytest.raises(ValueError, match="wall thickness"):
        hollow_circle_properties(1.0, thickness, 0.3)


def test_hollow_circle_geometric_properties() -> None:
    """Kynema ``test_hollow_circle_properties.cpp``, ``HollowCirclePropertiesTest.CalculateGeometricProperties``
    (1e-12): D = 1, t = 0.1, ν = 0.33."""
    p = hollow_circle_properties(1.0, 0.1, 0.33)
    ro, ri = 0.5, 0.4
    assert p.area == pytest.approx(math.pi * (ro**2 - ri**2), abs=TOL)
    assert p.Ixx == pytest.approx(math.pi * (ro**4 - ri**4) / 4.0, abs=TOL)
    assert p.Iyy == pytest.approx(p.Ixx, abs=TOL)
    assert p.J == pytest.approx(math.pi * (ro**4 - ri**4) / 2.0, abs=TOL)
    assert p.kx == pytest.approx(6.0 * 1.33 / (7.0 + 6.0 * 0.33), abs=TOL)
    assert p.ky == pytest.approx(p.kx, abs=TOL)


def test_hollow_circle_sectional_matrices_uncoupled() -> None:
    """Kynema ``test_hollow_circle_properties.cpp``, ``HollowCirclePropertiesTest.SectionalMatrices_Uncoupled``
    (1e-12): steel tube E = 200 GPa, G = 80 GPa, ρ = 7850 kg/m³."""
    e, g, rho = 200.0e9, 80.0e9, 7850.0
    mass, stiffness = hollow_circle_section(e, g, rho, 1.0, 0.1, 0.33)
    p = hollow_circle_properties(1.0, 0.1, 0.33)
    expected_k = np.diag([g * p.area * p.kx, g * p.area * p.ky, e * p.area, e * p.Ixx, e * p.Iyy, g * p.J])
    np.testing.assert_allclose(stiffness, expected_k, rtol=0, atol=TOL)
    i_x, i_y = rho * p.Ixx, rho * p.Iyy
    expected_m = np.diag([rho * p.area] * 3 + [i_x, i_y, i_x + i_y])
    np.testing.assert_allclose(mass, expected_m, rtol=0, atol=TOL)


# ---------------------------------------------------------------------------
# checks of our own


def test_sections_interpolate_linearly_and_hold_beyond_the_ends() -> None:
    """Sections at s = 0.25 and 0.75 (ξ = ±0.5): linear in between, constant outside."""
    a, b = np.full((6, 6), 2.0), np.full((6, 6), 6.0)
    got = interpolate_sections([-0.5, 0.5], np.array([a, b]), [-1.0, -0.5, 0.0, 0.25, 0.5, 1.0])
    np.testing.assert_allclose(got[:, 0, 0], [2.0, 2.0, 4.0, 5.0, 6.0, 6.0], rtol=0, atol=1e-15)


def test_sections_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="ascending"):
        interpolate_sections([0.5, -0.5], np.zeros((2, 6, 6)), [0.0])


def test_element_tables_of_the_curved_beam() -> None:
    """The set-up tables of Kynema's curved-beam element (nodes at s = 0, ½, 1, 7 Gauss points):
    shape tables and Jacobians equal Kynema's (1e-12), weights sum to 2."""
    t = element_tables(
        cb.NODES, [0.0, 0.5, 1.0], gauss_quadrature(7), [0.0, 1.0], np.zeros((2, 6, 6)), np.zeros((2, 6, 6))
    )
    np.testing.assert_allclose(t.shape_interp, cb.SHAPE_INTERP, rtol=0, atol=TOL)
    np.testing.assert_allclose(t.shape_deriv, cb.SHAPE_DERIV, rtol=0, atol=TOL)
    np.testing.assert_allclose(t.qp_jacobian, cb.JACOBIANS, rtol=0, atol=TOL)
    np.testing.assert_allclose(t.qp_weight, cb.GAUSS_WEIGHTS, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.qp_r0, np.tile([1.0, 0.0, 0.0, 0.0], (7, 1)), rtol=0, atol=0)
