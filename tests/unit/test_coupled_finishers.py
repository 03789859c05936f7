"""The last finishers of the frictional contact problem through joints (kynemapy.run.body_coupled,
docs/contact.md "Bodies with joints", "The set-down"), against closed forms.

* Lemke's method on small LCPs ``w = M z + q >= 0 ⊥ z >= 0`` with M positive definite: both
  unknowns active (``z = −M⁻¹ q``) and one inactive.
* Stewart and Trinkle's pyramid LCP (``pyramid_coulomb``) and the enumeration of contact modes
  (``mode_search``) on one point with an isotropic Delassus matrix ``D = d I`` pushed into its
  plane (``b_N < 0``): Signorini's law makes ``Λ_N = −b_N / d``; where ``|b_T| > μ |b_N|`` the point
  slips, ``Λ_T = −μ Λ_N b_T / |b_T|`` (the pyramid has an edge along every axis, so its solution is
  the disk's there), else it sticks, ``Λ_T = −b_T / d``; a point pulled off (``b_N > 0``) has Λ = 0.
* Two points of a rod pushed onto the ground (3 DOFs, D of rank 3 in 6 rows): both stop, the
  normals carry the push, ``Λ_N1 + Λ_N2 = m |v_N|``, split symmetrically (least-norm steps).
* ``coulomb_residual``'s floor: one point violating one law by 3e-13 in u, passed by a floor of
  1e-12 and not by one of 2e-13; a NaN impulse's residual is infinite.
* The Newton steps' least-norm solve (``contact_modes.least_norm_solve``) against numpy's
  SVD-based ``lstsq`` on random systems of every rank, and closed forms.
"""

from __future__ import annotations

import numpy as np
import pytest

from kynemapy.run.body_coupled import HELD_TOLERANCE, coulomb_residual, mode_search
from kynemapy.run.contact_modes import RCOND, least_norm_solve
from kynemapy.run.pyramid_lcp import lemke, pyramid_coulomb


def test_lemke_on_small_lcps() -> None:
    m = np.array([[2.0, 1.0], [1.0, 2.0]])
    z = lemke(m, np.array([-1.0, -1.0]))
    assert z == pytest.approx([1.0 / 3.0, 1.0 / 3.0], abs=1e-15)
    z = lemke(m, np.array([-1.0, 1.0]))  # the second stays off: w₂ = 1 + z₁ > 0
    assert z == pytest.approx([0.5, 0.0], abs=1e-15)
    assert lemke(m, np.array([1.0, 2.0])) == pytest.approx([0.0, 0.0])


@pytest.mark.parametrize(
    ("b", "mu", "expected"),
    [
        ((-1.0, 2.0, 0.0), 0.5, (0.5, -0.25, 0.0)),  # slips along t₁
        ((-1.0, 0.0, -3.0), 0.5, (0.5, 0.0, 0.25)),  # slips along t₂
        ((-1.0, 0.2, -0.1), 0.5, (0.5, -0.1, 0.05)),  # sticks: Λ_T = −b_T / d
        ((1.0, 0.2, -0.1), 0.5, (0.0, 0.0, 0.0)),  # pulled off
    ],
)
def test_one_point_by_the_pyramid_lcp_and_the_mode_search(b: tuple, mu: float, expected: tuple) -> None:
    d = 2.0 * np.eye(3)  # D = d I, d = 2
    b, mu = np.array(b), np.array([mu])
    lam = pyramid_coulomb(d, b, mu)
    assert lam == pytest.approx(expected, abs=1e-14)
    found = mode_search(d, b, mu, np.zeros(3))
    assert found == pytest.approx(expected, abs=1e-14)


def test_two_points_of_a_rod_pushed_onto_the_ground_by_the_mode_search() -> None:
    """A rod (mass m = 2, moment of inertia J = 0.5 about its middle) with points at ±a = ±0.5 on
    the ground, moving down at 1 and sideways at 0.1 (rows: normal z, tangents x, y; DOFs: z, x
    and its roll about y).  With μ = 0.5 both points stop (the friction needed, m 0.1 = 0.2, is
    within μ m 1 = 1): the normal impulses sum to m = 2 and the friction impulses to −0.2; the
    split between the points is not unique (D has rank 3), and Newton's least-norm steps from
    Λ = 0 give the symmetric one, 1 and −0.1 each; every law holds."""
    m, j, a = 2.0, 0.5, 0.5
    g = np.zeros((6, 3))  # rows (normal, t_x, t_y) per point over (z, x, roll)
    for i, x in enumerate((-a, a)):
        g[3 * i] = (1.0, 0.0, -x)  # the point's vertical speed z − x θ̇
        g[3 * i + 1] = (0.0, 1.0, 0.0)
    d = g @ np.diag([1.0 / m, 1.0 / m, 1.0 / j]) @ g.T
    b = g @ np.array([-1.0, 0.1, 0.0])
    mu = np.array([0.5, 0.5])
    lam = mode_search(d, b, mu, np.zeros(6))
    assert lam is not None and coulomb_residual(d, b, mu, lam) <= HELD_TOLERANCE
    pt = lam.reshape(2, 3)
    assert pt[:, 0] == pytest.approx([m / 2, m / 2], rel=1e-12)  # the least-norm split: symmetric
    assert pt[:, 1] == pytest.approx([-m * 0.1 / 2, -m * 0.1 / 2], rel=1e-12)
    assert np.abs(d @ lam + b).max() <= 1e-12  # both stop


@pytest.mark.parametrize(
    ("lam", "u", "kind"),
    [
        ((0.5, 0.0, 0.0), (-3e-13, 0.0, 0.0), "penetrating"),
        ((0.5, 0.0, 0.0), (3e-13, 0.0, 0.0), "pushing while open"),
        ((0.5, 0.1, 0.0), (0.0, 0.0, 3e-13), "sticking inside its disk, slipping"),
        ((0.5, 0.25, 0.0), (0.0, 3e-13, 0.0), "on its rim, slipping along its friction"),
    ],
)
def test_the_residual_passes_u_violations_up_to_its_floor(lam: tuple, u: tuple, kind: str) -> None:
    """One point, ``D = d I`` (d = 2), μ = 0.5, Λ as given and b = u − D Λ, so that the point's
    u is the given one: each a violation of one law by 3e-13 in u (|b| = 1 near enough, so the
    residual is 3e-13 of it).  With a floor of 1e-12 (the position correction's gap tolerance,
    the units of b) it counts as none; with 2e-13 as the 1e-13 above it."""
    d, mu = 2.0 * np.eye(3), np.array([0.5])
    lam, u = np.array(lam), np.array(u)
    b = u - d @ lam
    scale = np.max(np.abs(b))
    assert coulomb_residual(d, b, mu, lam) == pytest.approx(3e-13 / scale, rel=1e-3), kind
    assert coulomb_residual(d, b, mu, lam, 1e-12) == 0.0, kind
    assert coulomb_residual(d, b, mu, lam, 2e-13) == pytest.approx(1e-13 / scale, rel=1e-3), kind


def _least_norm(a: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, int]:
    n = a.shape[0]
    x = np.empty(n)
    rank = least_norm_solve(a.copy(), rhs.copy(), x, np.empty(n, dtype=np.int64), np.empty(n), RCOND)
    return x, rank


def test_the_least_norm_solve_is_lapacks_least_squares_solution_of_least_norm() -> None:
    """The Newton steps' solve (a complete orthogonal decomposition) against numpy's ``lstsq``
    (LAPACK's SVD-based ``xGELSD``) with the same relative cut, 1e-13: square systems of 1 to 18
    unknowns, full rank, of every lower rank (a product of n × r and r × n random factors) and with
    a repeated row, random right-hand sides (inconsistent where the rank is short); the rank found
    is the factors'."""
    rng = np.random.default_rng(7)
    for trial in range(600):
        n = int(rng.integers(1, 19))
        r = int(rng.integers(0, n + 1))
        a = rng.standard_normal((n, r)) @ rng.standard_normal((r, n))
        if trial % 5 == 0 and n > 2:
            a[1] = a[0]
            r = min(r, n - 1)
        rhs = rng.standard_normal(n)
        x, rank = _least_norm(a, rhs)
        reference = np.linalg.lstsq(a, rhs, rcond=RCOND)[0]
        assert rank == np.linalg.matrix_rank(a), (n, r)
        assert np.abs(x - reference).max() <= 1e-9 * max(np.abs(reference).max(), 1.0), (n, r)


def test_the_least_norm_solve_of_a_zero_matrix_and_of_redundant_equations() -> None:
    """Closed forms: a zero matrix gives x = 0 (rank 0); ``x₁ + x₂ = 2`` written twice gives the
    least-norm split x = (1, 1); a diagonal system gives ``rhs / diagonal``."""
    x, rank = _least_norm(np.zeros((3, 3)), np.ones(3))
    assert rank == 0 and np.all(x == 0.0)
    x, rank = _least_norm(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([2.0, 2.0]))
    assert rank == 1 and x == pytest.approx([1.0, 1.0], abs=1e-15)
    x, rank = _least_norm(np.diag([2.0, -4.0, 0.5]), np.array([1.0, 1.0, 1.0]))
    assert rank == 3 and x == pytest.approx([0.5, -0.25, 2.0], abs=1e-15)


def test_the_residual_of_a_nan_impulse_is_infinite() -> None:
    """A NaN in Λ (a failed solve) is no solution: the residual is infinite, never NaN (which
    would pass no test and fail none)."""
    d, mu = 2.0 * np.eye(3), np.array([0.5])
    assert coulomb_residual(d, np.array([-1.0, 0.0, 0.0]), mu, np.array([np.nan, 0.0, 0.0])) == np.inf
