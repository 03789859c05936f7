"""The compiled Lawson–Hanson solver of the least-distance programs (kynemapy.run.nnls): against
scipy's independent implementation where the solution is unique, against the optimality
conditions (from their definition) everywhere, and its warm starts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from kynemapy.run import nnls


def _e(m: int) -> np.ndarray:
    e = np.zeros(m)
    e[-1] = 1.0
    return e


def _conditions(a: np.ndarray, z: np.ndarray) -> tuple[float, float]:
    """The optimality conditions of ``min |a z − e|``, ``z >= 0``: the gradient ``aᵀ (a z − e)``
    non-negative (its most negative entry returned, as a positive number) and zero where z > 0
    (its largest size there)."""
    g = a.T @ (a @ z - _e(a.shape[0]))
    return max(0.0, -float(g.min())), float(np.max(np.abs(g[z > 0.0]), initial=0.0))


def _program(rng: np.random.Generator, m: int, k: int) -> np.ndarray:
    """A least-distance program's matrix: m − 1 rows of constraint columns and a last row −bᵀ
    (mostly negative entries of b: most rows push)."""
    return np.vstack([rng.normal(size=(m - 1, k)), -rng.uniform(-0.3, 1.0, size=k)])


@pytest.mark.parametrize("seed", range(5))
def test_a_tall_problem_has_scipys_unique_solution(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(40, 25))
    z, ended = nnls.solve(a)
    reference, _ = scipy.optimize.nnls(a, _e(40))
    assert ended
    assert np.all(z >= 0.0)
    np.testing.assert_allclose(z, reference, rtol=0.0, atol=1e-12 * np.abs(reference).max())
    dual, primal = _conditions(a, z)
    assert dual <= 1e-13 and primal <= 1e-13


@pytest.mark.parametrize("seed", range(5))
def test_a_wide_program_meets_the_optimality_conditions(seed: int) -> None:
    """More columns than rows (a pyramid program): z is not unique, the residual a z − e is."""
    rng = np.random.default_rng(seed)
    a = _program(rng, 19, 300)
    z, ended = nnls.solve(a)
    reference, norm = scipy.optimize.nnls(a, _e(19), maxiter=20000)
    assert ended
    assert np.all(z >= 0.0)
    dual, primal = _conditions(a, z)
    assert dual <= 1e-12 and primal <= 1e-13
    np.testing.assert_allclose(a @ z, a @ reference, rtol=0.0, atol=1e-10)
    assert abs(np.linalg.norm(a @ z - _e(19)) - norm) <= 1e-12


def test_repeated_and_dependent_columns() -> None:
    """Redundant contacts: each column twice, and sums of others; the method ends at the optimum."""
    rng = np.random.default_rng(3)
    base = _program(rng, 13, 40)
    a = np.hstack([base, base, base[:, :10] + base[:, 10:20], 2.0 * base[:, :5]])
    z, ended = nnls.solve(a)
    assert ended
    dual, primal = _conditions(a, z)
    assert dual <= 1e-12 and primal <= 1e-13
    _, norm = scipy.optimize.nnls(base, _e(13))
    assert abs(np.linalg.norm(a @ z - _e(13)) - norm) <= 1e-12  # the same optimum as without repeats


def test_a_warm_start_at_the_solution_enters_nothing() -> None:
    rng = np.random.default_rng(4)
    a = _program(rng, 25, 400)
    z, _ = nnls.solve(a)
    m, k = a.shape
    again = np.zeros(k)
    entered = nnls.lawson_hanson(
        a, np.ascontiguousarray(a.T), z, again, np.zeros(m, dtype=np.int64), np.zeros((m, m)), np.zeros((m, m)),
        np.zeros(m), np.zeros(m), np.zeros(k), np.zeros(k), 3 * k,
    )  # fmt: skip
    assert entered == 0
    np.testing.assert_allclose(again, z, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_any_warm_start_ends_at_the_optimum(seed: int) -> None:
    """From a nearby program's solution, and from arbitrary non-negative values."""
    rng = np.random.default_rng(10 + seed)
    a = _program(rng, 31, 500)
    z, _ = nnls.solve(a)
    nearby, _ = nnls.solve(a * (1.0 + 1e-3 * rng.normal(size=a.shape)))
    arbitrary = np.where(rng.uniform(size=500) < 0.1, rng.uniform(size=500), 0.0)
    for start in (nearby, arbitrary):
        warm, ended = nnls.solve(a, start)
        assert ended
        dual, primal = _conditions(a, warm)
        assert dual <= 1e-12 and primal <= 1e-13
        np.testing.assert_allclose(a @ warm, a @ z, rtol=0.0, atol=1e-10)


def test_the_warm_starts_are_kept_by_column_key_and_cleared() -> None:
    warm = nnls.WarmStarts()
    assert warm.start("position", np.array([3, 1])) is None
    warm.keep("position", np.array([5, 1, 9]), np.array([0.5, 0.0, 2.0]))
    np.testing.assert_array_equal(warm.start("position", np.array([9, 4, 5])), [2.0, 0.0, 0.5])
    assert warm.start("velocity", np.array([9])) is None  # kinds apart
    # a later solution with some of the same columns replaces theirs, keeps the others
    warm.keep("position", np.array([9, 7]), np.array([0.0, 1.5]))
    np.testing.assert_array_equal(warm.start("position", np.array([5, 7, 9, 1])), [0.5, 1.5, 0.0, 0.0])
    warm.clear()
    assert warm.start("position", np.array([5])) is None
