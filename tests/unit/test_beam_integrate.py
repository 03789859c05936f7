"""Unit tier: integration of a beam element's quadrature-point values with the node shape
functions (residual, stiffness and inertia matrices), and the iteration matrix.

Inputs and expected numbers are those of Kynema-FMB's unit tests
``tests/unit_tests/system/beams/test_integrate_residual_vector.cpp`` (tolerance 1e-15),
``test_integrate_stiffness_matrix.cpp`` (1e-12 for one node and one point, 1e-10 for its
``Cuu`` case, 1e-15 otherwise) and ``test_integrate_inertia_matrix.cpp`` (1e-15); each test
cites its source.  Kynema's shape tables in the matrix tests have 8 (SIMD padding) rows; the
kernels take the number of nodes from the output.  The expected arrays are Kynema's literal
arrays (blocks (node i, node j) row-major); the inputs are Kynema's literal arrays written as
the arithmetic patterns they follow (e.g. ``0001., 0002., …, 1001., …`` is ``1000 i + j + 1``).
"""

from __future__ import annotations

import numpy as np
import pytest

from kynemapy.engine.elements.beams.integrate import (
    integrate_inertia,
    integrate_residual,
    integrate_stiffness,
    system_matrix,
)

# fmt: off
ONE_NODE_KUU = [
    96, 192, 288, 384, 480, 576,
    96096, 96192, 96288, 96384, 96480, 96576,
    192096, 192192, 192288, 192384, 192480, 192576,
    288096, 288192, 288288, 288384, 288480, 288576,
    384096, 384192, 384288, 384384, 384480, 384576,
    480096, 480192, 480288, 480384, 480480, 480576,
]

ONE_NODE_PUU = [
    40, 80, 120, 160, 200, 240,
    40040, 40080, 40120, 40160, 40200, 40240,
    80040, 80080, 80120, 80160, 80200, 80240,
    120040, 120080, 120120, 120160, 120200, 120240,
    160040, 160080, 160120, 160160, 160200, 160240,
    200040, 200080, 200120, 200160, 200200, 200240,
]

ONE_NODE_QUU = [
    96, 192, 288, 384, 480, 576,
    96096, 96192, 96288, 96384, 96480, 96576,
    192096, 192192, 192288, 192384, 192480, 192576,
    288096, 288192, 288288, 288384, 288480, 288576,
    384096, 384192, 384288, 384384, 384480, 384576,
    480096, 480192, 480288, 480384, 480480, 480576,
]

ONE_NODE_CUU = [
    50050, 50100, 50150, 50200, 50250, 50300,
    100050, 100100, 100150, 100200, 100250, 100300,
    150050, 150100, 150150, 150200, 150250, 150300,
    200050, 200100, 200150, 200200, 200250, 200300,
    250050, 250100, 250150, 250200, 250250, 250300,
    300050, 300100, 300150, 300200, 300250, 300300,
]

ONE_NODE_OUU = [
    40040, 40080, 40120, 40160, 40200, 40240,
    80040, 80080, 80120, 80160, 80200, 80240,
    120040, 120080, 120120, 120160, 120200, 120240,
    160040, 160080, 160120, 160160, 160200, 160240,
    200040, 200080, 200120, 200160, 200200, 200240,
    240040, 240080, 240120, 240160, 240200, 240240,
]

TWO_NODES_PUU = [
    1, 2, 3, 4, 5, 6,
    101, 102, 103, 104, 105, 106,
    201, 202, 203, 204, 205, 206,
    301, 302, 303, 304, 305, 306,
    401, 402, 403, 404, 405, 406,
    501, 502, 503, 504, 505, 506,
    4, 8, 12, 16, 20, 24,
    404, 408, 412, 416, 420, 424,
    804, 808, 812, 816, 820, 824,
    1204, 1208, 1212, 1216, 1220, 1224,
    1604, 1608, 1612, 1616, 1620, 1624,
    2004, 2008, 2012, 2016, 2020, 2024,
    2, 4, 6, 8, 10, 12,
    202, 204, 206, 208, 210, 212,
    402, 404, 406, 408, 410, 412,
    602, 604, 606, 608, 610, 612,
    802, 804, 806, 808, 810, 812,
    1002, 1004, 1006, 1008, 1010, 1012,
    8, 16, 24, 32, 40, 48,
    808, 816, 824, 832, 840, 848,
    1608, 1616, 1624, 1632, 1640, 1648,
    2408, 2416, 2424, 2432, 2440, 2448,
    3208, 3216, 3224, 3232, 3240, 3248,
    4008, 4016, 4024, 4032, 4040, 4048,
]

TWO_NODES_QUU = [
    1, 2, 3, 4, 5, 6,
    101, 102, 103, 104, 105, 106,
    201, 202, 203, 204, 205, 206,
    301, 302, 303, 304, 305, 306,
    401, 402, 403, 404, 405, 406,
    501, 502, 503, 504, 505, 506,
    2, 4, 6, 8, 10, 12,
    202, 204, 206, 208, 210, 212,
    402, 404, 406, 408, 410, 412,
    602, 604, 606, 608, 610, 612,
    802, 804, 806, 808, 810, 812,
    1002, 1004, 1006, 1008, 1010, 1012,
    2, 4, 6, 8, 10, 12,
    202, 204, 206, 208, 210, 212,
    402, 404, 406, 408, 410, 412,
    602, 604, 606, 608, 610, 612,
    802, 804, 806, 808, 810, 812,
    1002, 1004, 1006, 1008, 1010, 1012,
    4, 8, 12, 16, 20, 24,
    404, 408, 412, 416, 420, 424,
    804, 808, 812, 816, 820, 824,
    1204, 1208, 1212, 1216, 1220, 1224,
    1604, 1608, 1612, 1616, 1620, 1624,
    2004, 2008, 2012, 2016, 2020, 2024,
]

TWO_NODES_CUU = [
    1, 2, 3, 4, 5, 6,
    101, 102, 103, 104, 105, 106,
    201, 202, 203, 204, 205, 206,
    301, 302, 303, 304, 305, 306,
    401, 402, 403, 404, 405, 406,
    501, 502, 503, 504, 505, 506,
    4, 8, 12, 16, 20, 24,
    404, 408, 412, 416, 420, 424,
    804, 808, 812, 816, 820, 824,
    1204, 1208, 1212, 1216, 1220, 1224,
    1604, 1608, 1612, 1616, 1620, 1624,
    2004, 2008, 2012, 2016, 2020, 2024,
    4, 8, 12, 16, 20, 24,
    404, 408, 412, 416, 420, 424,
    804, 808, 812, 816, 820, 824,
    1204, 1208, 1212, 1216, 1220, 1224,
    1604, 1608, 1612, 1616, 1620, 1624,
    2004, 2008, 2012, 2016, 2020, 2024,
    16, 32, 48, 64, 80, 96,
    1616, 1632, 1648, 1664, 1680, 1696,
    3216, 3232, 3248, 3264, 3280, 3296,
    4816, 4832, 4848, 4864, 4880, 4896,
    6416, 6432, 6448, 6464, 6480, 6496,
    8016, 8032, 8048, 8064, 8080, 8096,
]

TWO_NODES_OUU = [
    1, 2, 3, 4, 5, 6,
    101, 102, 103, 104, 105, 106,
    201, 202, 203, 204, 205, 206,
    301, 302, 303, 304, 305, 306,
    401, 402, 403, 404, 405, 406,
    501, 502, 503, 504, 505, 506,
    2, 4, 6, 8, 10, 12,
    202, 204, 206, 208, 210, 212,
    402, 404, 406, 408, 410, 412,
    602, 604, 606, 608, 610, 612,
    802, 804, 806, 808, 810, 812,
    1002, 1004, 1006, 1008, 1010, 1012,
    4, 8, 12, 16, 20, 24,
    404, 408, 412, 416, 420, 424,
    804, 808, 812, 816, 820, 824,
    1204, 1208, 1212, 1216, 1220, 1224,
    1604, 1608, 1612, 1616, 1620, 1624,
    2004, 2008, 2012, 2016, 2020, 2024,
    8, 16, 24, 32, 40, 48,
    808, 816, 824, 832, 840, 848,
    1608, 1616, 1624, 1632, 1640, 1648,
    2408, 2416, 2424, 2432, 2440, 2448,
    3208, 3216, 3224, 3232, 3240, 3248,
    4008, 4016, 4024, 4032, 4040, 4048,
]

TWO_QPS_PUU = [
    70004, 70008, 70012, 70016, 70020, 70024,
    70404, 70408, 70412, 70416, 70420, 70424,
    70804, 70808, 70812, 70816, 70820, 70824,
    71204, 71208, 71212, 71216, 71220, 71224,
    71604, 71608, 71612, 71616, 71620, 71624,
    72004, 72008, 72012, 72016, 72020, 72024,
]

TWO_QPS_QUU = [
    260014, 260028, 260042, 260056, 260070, 260084,
    261414, 261428, 261442, 261456, 261470, 261484,
    262814, 262828, 262842, 262856, 262870, 262884,
    264214, 264228, 264242, 264256, 264270, 264284,
    265614, 265628, 265642, 265656, 265670, 265684,
    267014, 267028, 267042, 267056, 267070, 267084,
]

INERTIA_ONE_NODE_MUU = [
    150, 300, 450, 600, 750, 900,
    150150, 150300, 150450, 150600, 150750, 150900,
    300150, 300300, 300450, 300600, 300750, 300900,
    450150, 450300, 450450, 450600, 450750, 450900,
    600150, 600300, 600450, 600600, 600750, 600900,
    750150, 750300, 750450, 750600, 750750, 750900,
]

INERTIA_ONE_NODE_GUU = [
    150150, 150300, 150450, 150600, 150750, 150900,
    300150, 300300, 300450, 300600, 300750, 300900,
    450150, 450300, 450450, 450600, 450750, 450900,
    600150, 600300, 600450, 600600, 600750, 600900,
    750150, 750300, 750450, 750600, 750750, 750900,
    900150, 900300, 900450, 900600, 900750, 900900,
]

INERTIA_TWO_NODES = [
    1, 2, 3, 4, 5, 6,
    101, 102, 103, 104, 105, 106,
    201, 202, 203, 204, 205, 206,
    301, 302, 303, 304, 305, 306,
    401, 402, 403, 404, 405, 406,
    501, 502, 503, 504, 505, 506,
    2, 4, 6, 8, 10, 12,
    202, 204, 206, 208, 210, 212,
    402, 404, 406, 408, 410, 412,
    602, 604, 606, 608, 610, 612,
    802, 804, 806, 808, 810, 812,
    1002, 1004, 1006, 1008, 1010, 1012,
    2, 4, 6, 8, 10, 12,
    202, 204, 206, 208, 210, 212,
    402, 404, 406, 408, 410, 412,
    602, 604, 606, 608, 610, 612,
    802, 804, 806, 808, 810, 812,
    1002, 1004, 1006, 1008, 1010, 1012,
    4, 8, 12, 16, 20, 24,
    404, 408, 412, 416, 420, 424,
    804, 808, 812, 816, 820, 824,
    1204, 1208, 1212, 1216, 1220, 1224,
    1604, 1608, 1612, 1616, 1620, 1624,
    2004, 2008, 2012, 2016, 2020, 2024,
]

INERTIA_TWO_QPS = [
    1001, 2002, 3003, 4004, 5005, 6006,
    11011, 12012, 13013, 14014, 15015, 16016,
    21021, 22022, 23023, 24024, 25025, 26026,
    31031, 32032, 33033, 34034, 35035, 36036,
    41041, 42042, 43043, 44044, 45045, 46046,
    51051, 52052, 53053, 54054, 55055, 56056,
]

INERTIA_FACTOR = [
    5, 10, 15, 20, 25, 30,
    5005, 5010, 5015, 5020, 5025, 5030,
    10005, 10010, 10015, 10020, 10025, 10030,
    15005, 15010, 15015, 15020, 15025, 15030,
    20005, 20010, 20015, 20020, 20025, 20030,
    25005, 25010, 25015, 25020, 25025, 25030,
]
# fmt: on


def pattern(fn, n_qps: int = 1) -> np.ndarray:
    """(n_qps, 6, 6) array with entry fn(qp, i, j)."""
    return np.array([[[fn(q, i, j) for j in range(6)] for i in range(6)] for q in range(n_qps)], dtype=float)


def padded(values, n_qps: int = 1) -> np.ndarray:
    """Kynema's (8, n_qps) shape table filled row-major with ``values`` and zeros."""
    out = np.zeros(8 * n_qps)
    out[: len(values)] = values
    return out.reshape(8, n_qps)


# ---------------------------------------------------------------------------
# residual


def residual(weights, jac, interp, deriv, n_nodes, **forces) -> np.ndarray:
    n_qps = len(weights)
    f = {name: np.asarray(forces.get(name, np.zeros(6 * n_qps)), dtype=float).reshape(n_qps, 6)
         for name in ("fe1", "fe2", "fd1", "fd2", "fi", "fe", "fg")}  # fmt: skip
    node_fx = np.asarray(forces.get("node_fx", np.zeros(6 * n_nodes)), dtype=float).reshape(n_nodes, 6)
    out = np.full((n_nodes, 6), np.nan)
    integrate_residual(
        np.asarray(weights, dtype=float), np.asarray(jac, dtype=float),
        np.asarray(interp, dtype=float).reshape(n_nodes, n_qps), np.asarray(deriv, dtype=float).reshape(n_nodes, n_qps),
        node_fx, f["fe1"], f["fe2"], f["fd1"], f["fd2"], f["fi"], f["fe"], f["fg"], out,
    )  # fmt: skip
    return out


F16 = np.arange(1.0, 7.0)


@pytest.mark.parametrize(
    ("name", "jac", "interp", "deriv", "force", "expected"),
    [
        ("Fc", 0.0, 0.0, 3.0, "fe1", [6, 12, 18, 24, 30, 36]),
        ("Fd", 3.0, 4.0, 0.0, "fe2", [24, 48, 72, 96, 120, 144]),
        ("Fi", 3.0, 4.0, 0.0, "fe2", [24, 48, 72, 96, 120, 144]),
        ("Fe", 3.0, 4.0, 0.0, "fe", [-24, -48, -72, -96, -120, -144]),
        ("Fg", 3.0, 4.0, 0.0, "fg", [-24, -48, -72, -96, -120, -144]),
        ("FX", 3.0, 4.0, 0.0, "node_fx", [-1, -2, -3, -4, -5, -6]),
        ("Fi (ours: qp_Fi set)", 3.0, 4.0, 0.0, "fi", [24, 48, 72, 96, 120, 144]),
    ],
)
def test_residual_one_element_one_node_one_qp(name, jac, interp, deriv, force, expected) -> None:
    """Kynema ``test_integrate_residual_vector.cpp``, ``IntegrateResidualVector.OneElementOneNodeOneQP_Fc``,
    ``_Fd``, ``_Fi``, ``_Fe``, ``_Fg``, ``_FX`` (1e-15; Kynema's ``_Fi`` case sets ``qp_FE2``, as here)."""
    out = residual([2.0], [jac], [interp], [deriv], 1, **{force: F16})
    np.testing.assert_allclose(out, [expected], rtol=0, atol=1e-15)


def test_residual_two_elements_one_node_one_qp() -> None:
    """Kynema ``test_integrate_residual_vector.cpp``, ``IntegrateResidualVector.TwoElementsOneNodeOneQP`` (1e-15)."""
    first = residual([2.0], [0.0], [0.0], [3.0], 1, fe1=F16)
    second = residual([2.0], [0.0], [0.0], [3.0], 1, fe1=2.0 * F16)
    np.testing.assert_allclose(np.vstack((first, second)), [[6, 12, 18, 24, 30, 36], [12, 24, 36, 48, 60, 72]],
                               rtol=0, atol=1e-15)  # fmt: skip


def test_residual_one_element_one_node_two_qps() -> None:
    """Kynema ``test_integrate_residual_vector.cpp``, ``IntegrateResidualVector.OneElementOneNodeTwoQPs`` (1e-15)."""
    out = residual([2.0, 1.0], [0.0, 0.0], [0.0, 0.0], [3.0, 2.0], 1, fe1=np.arange(1.0, 13.0))
    np.testing.assert_allclose(out, [[20, 28, 36, 44, 52, 60]], rtol=0, atol=1e-15)


def test_residual_one_element_two_nodes_one_qp() -> None:
    """Kynema ``test_integrate_residual_vector.cpp``, ``IntegrateResidualVector.OneElementTwoNodesOneQP`` (1e-15)."""
    out = residual([2.0], [0.0], [0.0, 0.0], [3.0, 0.0], 2, fe1=F16)
    np.testing.assert_allclose(out, [[6, 12, 18, 24, 30, 36], [0, 0, 0, 0, 0, 0]], rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------
# stiffness

STIFFNESS_NAMES = ("kuu", "puu", "cuu", "ouu", "quu", "dd1", "kd1", "kd2", "pd2")


def stiffness(weights, jac, interp, deriv, n_nodes, **mats) -> np.ndarray:
    n_qps = len(weights)
    args = [mats.get(name, np.zeros((n_qps, 6, 6))) for name in STIFFNESS_NAMES]
    out = np.full((n_nodes, n_nodes, 6, 6), np.nan)
    sums, acc = np.zeros((n_qps, 5, 36)), np.zeros(36)
    integrate_stiffness(
        np.asarray(weights, dtype=float), np.asarray(jac, dtype=float), interp, deriv, *args, sums, acc, out
    )
    return out


ONE_NODE_DATA = pattern(lambda q, i, j: 1000 * i + j + 1)  # 0001., 0002., …, 1001., …, 5006.


@pytest.mark.parametrize(
    ("name", "data", "expected", "tol"),
    [
        ("kuu", ONE_NODE_DATA, ONE_NODE_KUU, 1e-12),
        ("puu", ONE_NODE_DATA, ONE_NODE_PUU, 1e-12),
        ("quu", ONE_NODE_DATA, ONE_NODE_QUU, 1e-12),
        ("cuu", pattern(lambda q, i, j: 3000 * (i + 1) + 3 * (j + 1)), ONE_NODE_CUU, 1e-10),
        ("ouu", pattern(lambda q, i, j: 1000 * (i + 1) + j + 1), ONE_NODE_OUU, 1e-12),
    ],
)
def test_stiffness_one_element_one_node_one_qp(name, data, expected, tol) -> None:
    """Kynema ``test_integrate_stiffness_matrix.cpp``, ``IntegrateStiffnessMatrixTests.OneElementOneNodeOneQP_Kuu``,
    ``_Puu``, ``_Quu``, ``_Cuu`` (1e-10), ``_Ouu`` (1e-12)."""
    out = stiffness([2.0], [3.0], padded([4.0]), padded([5.0]), 1, **{name: data})
    np.testing.assert_allclose(out.ravel(), expected, rtol=0, atol=tol)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("puu", TWO_NODES_PUU), ("quu", TWO_NODES_QUU), ("cuu", TWO_NODES_CUU), ("ouu", TWO_NODES_OUU)],
)
def test_stiffness_one_element_two_nodes_one_qp(name, expected) -> None:
    """Kynema ``test_integrate_stiffness_matrix.cpp``, ``IntegrateStiffnessMatrixTests.OneElementTwoNodesOneQP_Puu``,
    ``_Quu``, ``_Cuu``, ``_Ouu`` (1e-15)."""
    data = pattern(lambda q, i, j: 100 * i + j + 1)  # 0001., …, 0101., …, 0506.
    out = stiffness([1.0], [1.0], padded([1.0, 2.0]), padded([1.0, 4.0]), 2, **{name: data})
    np.testing.assert_allclose(out.ravel(), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize(("name", "expected"), [("puu", TWO_QPS_PUU), ("quu", TWO_QPS_QUU)])
def test_stiffness_one_element_one_node_two_qps(name, expected) -> None:
    """Kynema ``test_integrate_stiffness_matrix.cpp``, ``IntegrateStiffnessMatrixTests.OneElementOneNodeTwoQPs_Puu``,
    ``_Quu`` (1e-15)."""
    data = pattern(lambda q, i, j: 10000 * (q + 1) + 100 * i + j + 1, 2)  # 10001., …, 20506.
    out = stiffness([1.0, 3.0], [2.0, 4.0], padded([1.0, 1.0], 2), padded([1.0, 1.0], 2), 1, **{name: data})
    np.testing.assert_allclose(out.ravel(), expected, rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------
# inertia


def inertia(weights, jac, interp, deriv, n_nodes, muu, guu, beta_prime, gamma_prime) -> np.ndarray:
    n_qps = len(weights)
    zero = np.zeros((n_qps, 6, 6))
    out = np.full((n_nodes, n_nodes, 6, 6), np.nan)
    integrate_inertia(
        np.asarray(weights, dtype=float), np.asarray(jac, dtype=float), interp, deriv,
        muu, guu, zero, zero, zero, zero, beta_prime, gamma_prime, np.zeros((n_qps, 5, 36)), np.zeros(36), out,
    )  # fmt: skip
    return out


MUU_1000 = pattern(lambda q, i, j: 1000 * i + j + 1)  # 0001., …, 5006.


def test_inertia_one_element_one_node_one_qp_muu() -> None:
    """Kynema ``test_integrate_inertia_matrix.cpp``, ``IntegrateInertiaMatrixTests.OneElementOneNodeOneQP_Muu``
    (1e-15; β′ = 1, γ′ = 0)."""
    guu = pattern(lambda q, i, j: 1000 * (i + 1 + (i >= 2)) + j + 1)  # 1001., 2001., 4001., …, 7006.
    out = inertia([2.0], [3.0], padded([5.0]), padded([1.0]), 1, MUU_1000, guu, 1.0, 0.0)
    np.testing.assert_allclose(out.ravel(), INERTIA_ONE_NODE_MUU, rtol=0, atol=1e-15)


def test_inertia_one_element_one_node_one_qp_guu() -> None:
    """Kynema ``test_integrate_inertia_matrix.cpp``, ``IntegrateInertiaMatrixTests.OneElementOneNodeOneQP_Guu``
    (1e-15; β′ = 0, γ′ = 1)."""
    guu = pattern(lambda q, i, j: 1000 * (i + 1) + j + 1)  # 1001., …, 6006.
    out = inertia([2.0], [3.0], padded([5.0]), padded([5.0]), 1, MUU_1000, guu, 0.0, 1.0)
    np.testing.assert_allclose(out.ravel(), INERTIA_ONE_NODE_GUU, rtol=0, atol=1e-15)


def test_inertia_one_element_two_nodes_one_qp() -> None:
    """Kynema ``test_integrate_inertia_matrix.cpp``, ``IntegrateInertiaMatrixTests.OneElementTwoNodesOneQP`` (1e-15)."""
    muu = pattern(lambda q, i, j: 100 * i + j + 1)  # 001., …, 506.
    out = inertia([1.0], [1.0], padded([1.0, 2.0]), padded([1.0, 2.0]), 2, muu, np.zeros((1, 6, 6)), 1.0, 0.0)
    np.testing.assert_allclose(out.ravel(), INERTIA_TWO_NODES, rtol=0, atol=1e-15)


def test_inertia_one_element_one_node_two_qps() -> None:
    """Kynema ``test_integrate_inertia_matrix.cpp``, ``IntegrateInertiaMatrixTests.OneElementOneNodeTwoQPs`` (1e-15)."""
    muu = pattern(lambda q, i, j: (10 * i + j + 1) if q == 0 else (10000 * i + 1000 * (j + 1)), 2)
    interp = padded([1.0 / 3.0, 1.0 / 2.0], 2)
    out = inertia([9.0, 1.0], [1.0, 4.0], interp, interp, 1, muu, np.zeros((2, 6, 6)), 1.0, 0.0)
    np.testing.assert_allclose(out.ravel(), INERTIA_TWO_QPS, rtol=0, atol=1e-15)


def test_inertia_one_element_one_node_one_qp_with_multiplication_factor() -> None:
    """Kynema ``test_integrate_inertia_matrix.cpp``,
    ``IntegrateInertiaMatrixTests.OneElementOneNodeOneQP_WithMultiplicationFactor_TeamPolicy`` (1e-15; β′ = 5)."""
    out = inertia([1.0], [1.0], padded([1.0]), padded([1.0]), 1, MUU_1000, np.zeros((1, 6, 6)), 5.0, 0.0)
    np.testing.assert_allclose(out.ravel(), INERTIA_FACTOR, rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------
# iteration matrix (our check: Kynema's CalculateSystemMatrix has no unit test)


def test_system_matrix_is_inertia_plus_stiffness_times_tangent() -> None:
    """Block (i, j) of the iteration matrix is ``I_ij + κ S_ij blockdiag(I, T_j)`` (numpy reference)."""
    rng = np.random.default_rng(7)
    n = 3
    stiff = rng.normal(size=(n, n, 6, 6))
    iner = rng.normal(size=(n, n, 6, 6))
    tangent = rng.normal(size=(5, 3, 3))
    nodes = np.array([4, 0, 2])
    out = np.full((6 * n, 6 * n), np.nan)
    system_matrix(stiff, iner, tangent, nodes, 0.5, out)
    for i in range(n):
        for j in range(n):
            t = np.eye(6)
            t[3:, 3:] = tangent[nodes[j]]
            expected = iner[i, j] + 0.5 * stiff[i, j] @ t
            np.testing.assert_allclose(out[6 * i : 6 * i + 6, 6 * j : 6 * j + 6], expected, rtol=1e-14, atol=1e-14)


# ---------------------------------------------------------------------------
# the iteration matrix in one pass (integrate_system) against the three kernels above


@pytest.mark.parametrize("damped", [False, True])
@pytest.mark.parametrize("fits", [True, False])
def test_integrate_system_equals_the_separate_kernels(damped: bool, fits: bool) -> None:
    """:func:`integrate_system` (the element's own pass) equals :func:`integrate_stiffness`,
    :func:`integrate_inertia` and :func:`system_matrix` (Kynema's order) to round-off, whether
    the element fills its output and scratch (the contiguous product) or not (an element of a
    lower order in a padded table: the product by rows)."""
    from kynemapy.engine.elements.beams import integrate as ig

    M_C, M_D, M_DD1, M_DD2, M_GD1, M_GD2 = ig.M_C, ig.M_D, ig.M_DD1, ig.M_DD2, ig.M_GD1, ig.M_GD2
    M_GI, M_KD1, M_KD2, M_KI, M_M, M_O, M_P, M_PD2, M_Q = (
        ig.M_GI, ig.M_KD1, ig.M_KD2, ig.M_KI, ig.M_M, ig.M_O, ig.M_P, ig.M_PD2, ig.M_Q,
    )  # fmt: skip
    rng = np.random.default_rng(7)
    nn, nq = 7, 9  # 4 + 3 rows: both the four-row and the single-row products
    pad_n, pad_q = (nn, nq) if fits else (nn + 2, nq + 3)
    weight, jac = rng.uniform(0.1, 1.0, nq), rng.uniform(0.5, 2.0, nq)
    interp, deriv = rng.standard_normal((pad_n, nq)), rng.standard_normal((pad_n, nq))
    qm = rng.standard_normal((15, pad_q, 6, 6))
    if not damped:  # and the structure the point kernels give the undamped sums
        qm[[M_D, M_DD1, M_DD2, M_GD1, M_GD2, M_PD2, M_KD1, M_KD2]] = 0.0
        qm[[M_KI, M_GI, M_O], :, :, :3] = 0.0
        qm[M_P, :, :3, :] = 0.0
        qm[M_Q, :, :3, :] = 0.0
        qm[M_Q, :, :, :3] = 0.0
    tangent = rng.standard_normal((nn + 3, 3, 3))
    nodes = np.array([2, 0, 5, 1, 9, 3, 4])
    beta_prime, gamma_prime, kappa = 3.0, 2.0, 0.7
    pts, wm = np.zeros((pad_q, 8, 36)), np.zeros((2, pad_q, 6, 6 * pad_n))
    out = np.full((6 * pad_n, 6 * pad_n), np.nan)
    ig.integrate_system(
        weight, jac, interp, deriv, qm, beta_prime, gamma_prime, kappa, tangent, nodes, damped, pts, wm, out
    )
    m = qm[:, :nq]
    sums = np.zeros((nq, 5, 36))
    stiffness = np.zeros((nn, nn, 6, 6))
    integrate_stiffness(
        weight, jac, interp, deriv, m[M_KI], m[M_P], m[M_C], m[M_O], m[M_Q], m[M_DD1], m[M_KD1], m[M_KD2],
        m[M_PD2], sums, np.zeros(36), stiffness,
    )  # fmt: skip
    inertia = np.zeros((nn, nn, 6, 6))
    integrate_inertia(
        weight, jac, interp, deriv, m[M_M], m[M_GI], m[M_D], m[M_GD1], m[M_GD2], m[M_DD2], beta_prime,
        gamma_prime, sums, np.zeros(36), inertia,
    )  # fmt: skip
    expected = np.zeros((6 * nn, 6 * nn))
    system_matrix(stiffness, inertia, tangent, nodes, kappa, expected)
    got = out[: 6 * nn, : 6 * nn]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
