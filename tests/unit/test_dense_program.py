"""The static-pivot elimination program (kynemapy.linalg.dense): the same solution as
numpy's LAPACK solve, bit for bit partial pivoting's arithmetic while the pivot rows agree,
and a refusal (x untouched) whenever its pivot sequence is no longer safe."""

from __future__ import annotations

import numpy as np
import pytest

from kynemapy.linalg.dense import P_PERM, PROGRAM_REFUSED, SOLVE_OK, build_program, dense_solve, program_solve


def random_pattern(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """A sparse n × n pattern with a full diagonal and a few off-diagonal entries."""
    s = rng.random((n, n)) < density
    s[np.arange(n), np.arange(n)] = True
    return s


def to_csc(s: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = s.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices, values = [], []
    for c in range(n):
        rows = np.flatnonzero(s[:, c])
        indices.extend(rows)
        values.extend(a[rows, c])
        indptr[c + 1] = len(indices)
    return indptr, np.array(indices, dtype=np.int64), np.array(values)


def kkt_like(rng: np.random.Generator, n_dofs: int, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Pattern and values of [M Bᵀ; B 0] with a sparse B: the matrices the engine solves
    (zero diagonal in the constraint block, so pivoting must leave the natural order)."""
    n = n_dofs + n_rows
    m = rng.standard_normal((n_dofs, n_dofs))
    m = m @ m.T + n_dofs * np.eye(n_dofs)
    b = rng.standard_normal((n_rows, n_dofs)) * (rng.random((n_rows, n_dofs)) < 0.4)
    b[np.arange(n_rows), np.arange(n_rows)] = 1.0 + rng.random(n_rows)
    a = np.zeros((n, n))
    a[:n_dofs, :n_dofs] = m
    a[:n_dofs, n_dofs:] = b.T
    a[n_dofs:, :n_dofs] = b
    return a != 0.0, a


def program_for(s: np.ndarray, a: np.ndarray):
    """CSC values of ``a`` on pattern ``s`` and the program built with them as the reference."""
    indptr, indices, values = to_csc(s, a)
    return values, build_program(indptr, indices, s.shape[0], values)


def dense_of(s: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The n × n matrix of CSC ``values`` on pattern ``s``."""
    a = np.zeros(s.shape)
    a.T[s.T] = values  # column-major traversal of the pattern = CSC order
    return a


def program_solution(prog, values: np.ndarray, rhs: np.ndarray) -> tuple[int, np.ndarray]:
    x = rhs.copy()
    status = program_solve(prog.i, prog.f, values, x)
    return status, x


def pivoting_solution(s: np.ndarray, values: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Partial pivoting's solution and the original row it pivoted at each step."""
    n = s.shape[0]
    swaps = np.zeros(n, dtype=np.int64)
    x = rhs.copy()
    assert dense_solve(dense_of(s, values), swaps, x) == SOLVE_OK
    rows = np.arange(n)
    for k in range(n):
        rows[[k, swaps[k]]] = rows[[swaps[k], k]]
    return x, rows


@pytest.mark.parametrize("seed", range(6))
def test_program_matches_lapack_and_partial_pivoting(seed: int) -> None:
    rng = np.random.default_rng(seed)
    if seed % 2:
        s, a = kkt_like(rng, 12, 6)
    else:
        s = random_pattern(rng, 20, 0.15)
        a = np.where(s, rng.standard_normal(s.shape), 0.0)
        a[np.arange(20), np.arange(20)] += 4.0
    values, prog = program_for(s, a)
    assert prog.valid
    perm = prog.field(P_PERM)
    same_pivots = 0
    for _ in range(5):
        # a nearby matrix of the same pattern (the next Newton iteration's)
        vals = values * (1.0 + 0.01 * rng.standard_normal(values.shape))
        rhs = rng.standard_normal(s.shape[0])
        status, x = program_solution(prog, vals, rhs)
        assert status == SOLVE_OK
        reference = np.linalg.solve(dense_of(s, vals), rhs)
        assert np.max(np.abs(x - reference)) <= 1e-12 * np.max(np.abs(reference))
        # where partial pivoting picks the program's rows, the arithmetic is the same, bit for bit
        x_pivoting, rows = pivoting_solution(s, vals, rhs)
        if np.array_equal(rows, perm):
            same_pivots += 1
            assert np.array_equal(x, x_pivoting)
    assert same_pivots > 0


def test_reference_matrix_is_partial_pivoting_bit_for_bit() -> None:
    rng = np.random.default_rng(11)
    s, a = kkt_like(rng, 9, 6)
    values, prog = program_for(s, a)
    rhs = rng.standard_normal(s.shape[0])
    status, x = program_solution(prog, values, rhs)
    assert status == SOLVE_OK
    x_pivoting, rows = pivoting_solution(s, values, rhs)
    assert np.array_equal(rows, prog.field(P_PERM))
    assert np.array_equal(x, x_pivoting)


def test_refusals_leave_x_untouched() -> None:
    rng = np.random.default_rng(3)
    s, a = kkt_like(rng, 6, 3)
    indptr, indices, values = to_csc(s, a)
    prog = build_program(indptr, indices, s.shape[0], values)
    rhs = rng.standard_normal(s.shape[0])

    bad = values.copy()
    bad[len(bad) // 2] = np.nan
    status, x = program_solution(prog, bad, rhs)
    assert status == PROGRAM_REFUSED and np.array_equal(x, rhs)

    # the first pivot shrinks far below the rest of its column: growth test refuses
    small = values.copy()
    first = indptr[0] + int(np.flatnonzero(indices[indptr[0] : indptr[1]] == 0)[0])
    small[first] = 1e-9 * np.max(np.abs(values))
    status, x = program_solution(prog, small, rhs)
    assert status == PROGRAM_REFUSED and np.array_equal(x, rhs)

    # values of another pattern's length
    status, x = program_solution(prog, values[:-1].copy(), rhs)
    assert status == PROGRAM_REFUSED and np.array_equal(x, rhs)


def test_singular_reference_gives_an_invalid_program() -> None:
    s = np.ones((3, 3), dtype=bool)
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    indptr, indices, values = to_csc(s, a)
    prog = build_program(indptr, indices, 3, values)
    assert not prog.valid
    status, x = program_solution(prog, values, np.ones(3))
    assert status == PROGRAM_REFUSED and np.array_equal(x, np.ones(3))


def test_duplicate_pattern_entry_is_an_error() -> None:
    indptr = np.array([0, 2, 3])
    indices = np.array([0, 0, 1])
    with pytest.raises(ValueError, match="twice"):
        build_program(indptr, indices, 2, np.ones(3))
