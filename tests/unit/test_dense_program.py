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


def padded(rng: np.random.Generator, s: np.ndarray) -> np.ndarray:
    """A wider pattern: ``s`` plus structural entries that will hold zeros (as a dense
    rigid-body block holds the zeros of a diagonal mass)."""
    extra = rng.random(s.shape) < 0.3
    return s | extra


@pytest.mark.parametrize("seed", range(4))
def test_active_entries_program_is_the_full_program_bit_for_bit(seed: int) -> None:
    """A program told which entries can be non-zero (``active``) gives the full pattern's
    results bit for bit, with fewer operations; a non-zero in an entry it takes as zero is
    refused (x untouched), as is a growth failure."""
    rng = np.random.default_rng(100 + seed)
    s, a = kkt_like(rng, 10, 5)
    wide = padded(rng, s)
    indptr, indices, values = to_csc(wide, a)  # the wide pattern's extra entries hold zeros
    active = to_csc(wide, s.astype(float))[2] != 0.0
    assert not active.all()
    full = build_program(indptr, indices, wide.shape[0], values)
    lean = build_program(indptr, indices, wide.shape[0], values, active=active)
    assert full.valid and lean.valid
    assert lean.ops < full.ops
    assert np.array_equal(lean.field(P_PERM), full.field(P_PERM))
    for _ in range(5):
        vals = values * (1.0 + 0.01 * rng.standard_normal(values.shape))  # zeros stay zeros
        rhs = rng.standard_normal(wide.shape[0])
        status_full, x_full = program_solution(full, vals, rhs)
        status_lean, x_lean = program_solution(lean, vals, rhs)
        assert status_full == status_lean == SOLVE_OK
        assert np.array_equal(x_lean, x_full)
        reference = np.linalg.solve(dense_of(wide, vals), rhs)
        assert np.max(np.abs(x_lean - reference)) <= 1e-12 * np.max(np.abs(reference))
    # −0.0 is a zero
    vals = values.copy()
    vals[~active] = -0.0
    status, x = program_solution(lean, vals, rhs)
    assert status == SOLVE_OK and np.array_equal(x, program_solution(full, vals, rhs)[1])
    # an inactive entry that is not zero (the smallest subnormal too): refused, x untouched
    for tiny in (5e-324, -5e-324):
        vals = values.copy()
        vals[np.flatnonzero(~active)[-1]] = tiny
        status, x = program_solution(lean, vals, rhs)
        assert status == PROGRAM_REFUSED and np.array_equal(x, rhs)
    # an inactive entry that is not zero: refused, x untouched; the full program solves it
    vals = values.copy()
    vals[np.flatnonzero(~active)[0]] = 0.5
    rhs = rng.standard_normal(wide.shape[0])
    status, x = program_solution(lean, vals, rhs)
    assert status == PROGRAM_REFUSED and np.array_equal(x, rhs)
    status, x = program_solution(full, vals, rhs)
    assert status == SOLVE_OK
    np.testing.assert_allclose(x, np.linalg.solve(dense_of(wide, vals), rhs), rtol=1e-10, atol=1e-12)


def test_nonzero_reference_value_is_always_active() -> None:
    """An entry with a non-zero reference value is active even when ``active`` says not."""
    rng = np.random.default_rng(5)
    s, a = kkt_like(rng, 6, 3)
    indptr, indices, values = to_csc(s, a)
    prog = build_program(indptr, indices, s.shape[0], values, active=np.zeros(values.shape, dtype=bool))
    assert prog.ops == build_program(indptr, indices, s.shape[0], values).ops
    status, x = program_solution(prog, values, np.ones(s.shape[0]))
    assert status == SOLVE_OK
    np.testing.assert_allclose(x, np.linalg.solve(a, np.ones(s.shape[0])), rtol=1e-12)


def rigid_body_on_a_ball_joint(eta: tuple[float, float, float]):
    """One 6-DOF body (mass at its node, centre of mass at ``eta`` from it [m]) on a spherical
    joint to the ground at the origin: the engine's Newton matrix is 9 × 9."""
    import kynemapy as kp

    m, e = 2.0, np.asarray(eta, dtype=float)
    et = np.array([[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]])
    m_star = np.block([[m * np.eye(3), m * et.T], [m * et, np.diag([0.5, 0.6, 0.7]) - m * et @ et]])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    node = b.add_node(position=(0.0, 0.0, 1.0), velocity=(0.2, -0.1, 0.0, 0.1, 0.2, 0.3))  # ω × r
    b.add_mass(node, mass_matrix=m_star)
    b.add_spherical_joint(node, point=(0.0, 0.0, 0.0))
    return b.build()


def test_probe_finds_the_structural_zeros_of_a_rigid_body() -> None:
    """kynemapy.engine.api.active_entries: a body whose centre of mass is its node has no
    translation-rotation coupling in its iteration matrix (β′M, γ′G and K are exactly zero
    there at every state; the translational block m R Rᵀ is not exactly diagonal in floating
    point, so it stays active); with an offset centre of mass the coupling entries are active.
    The simulation's program uses the lean pattern and steps as partial pivoting does."""
    import kynemapy as kp
    from kynemapy.engine.api import active_entries

    params = kp.StepParameters(h=0.01, rho_inf=0.9, max_iter=10)
    lean = kp.Simulation(rigid_body_on_a_ball_joint((0.0, 0.0, 0.0)), params)
    ws = lean.workspace
    n = int(lean.model.n_dofs)
    cols = np.repeat(np.arange(n), np.diff(ws.indptr))
    active = active_entries(ws, lean.coefficients)
    where = {(int(r), int(c)): bool(a) for r, c, a in zip(ws.indices, cols, active, strict=True)}
    for i in range(3):
        for j in range(3):
            assert where[(i, i)], (i, j)  # m β′ on the diagonal
            assert not where[(i, 3 + j)] and not where[(3 + i, j)], (i, j)  # no coupling
            assert where[(3 + i, 3 + j)], (i, j)  # rotated inertia, gyroscopic and stiffness terms
    offset = kp.Simulation(rigid_body_on_a_ball_joint((0.1, -0.2, 0.05)), params)
    active = active_entries(offset.workspace, offset.coefficients)
    assert active.sum() > sum(where.values())
    where = {(int(r), int(c)): bool(a) for r, c, a in zip(ws.indices, cols, active, strict=True)}
    # m η̃ rotated: its off-diagonal entries are non-zero (its diagonal is zero up to round-off)
    assert all(where[(i, 3 + j)] and where[(3 + i, j)] for i in range(3) for j in range(3) if i != j)
    # the lean program steps the body exactly as partial pivoting on the full matrix would
    # (the program's pivots are partial pivoting's here): same states, bit for bit
    pivoting = kp.Simulation(rigid_body_on_a_ball_joint((0.0, 0.0, 0.0)), params)
    from kynemapy.linalg.dense import empty_program

    pivoting.workspace.reference = empty_program(n)
    pivoting._bind()
    lean.advance(50)
    pivoting.advance(50)
    np.testing.assert_array_equal(lean.state.q, pivoting.state.q)
    np.testing.assert_array_equal(lean.state.lam, pivoting.state.lam)
