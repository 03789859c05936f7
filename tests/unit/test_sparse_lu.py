"""Sparse LU (kynemapy.linalg.sparse_lu, kynemapy.linalg.ordering) against numpy / scipy, which are independent.

Matrices from tests/sparse_systems.py: Kynema's heavy top (real Newton values), chains of
bodies joined by ball joints (with massless bodies and random joint blocks), free boxes,
random saddle-point systems with zero constraint diagonals and zero (massless) node blocks,
random sparse matrices.  Checked: residual ‖Ax − b‖/‖b‖ and agreement with
numpy.linalg.solve / scipy.sparse.linalg.spsolve, refactor = fresh factor after a value
change, refusal of a refactor whose pivot became too small, SINGULAR and CAPACITY paths, the
compiled (no-allocation) call path, fill linear in the chain length, and the orderings
against a dense symbolic elimination.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import sparse_systems as ss

from kynemapy.linalg import ordering as od
from kynemapy.linalg import sparse_lu as sl
from kynemapy.linalg.dense import SOLVE_OK, SOLVE_SINGULAR, dense_solve

ORDERINGS = ("amd", "rcm", "natural")


def residual(a: sp.spmatrix, x: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a @ x - b) / np.linalg.norm(b))


def solve_fresh(a: sp.csc_matrix, b: np.ndarray, **kw) -> tuple[np.ndarray, sl.LUWorkspace]:
    """x by a fresh workspace through the compiled path (factor, then solve; grow when full)."""
    lu = sl.new_lu_workspace(a.indptr, a.indices, a.shape[0], **kw)
    x = b.copy()
    values = np.ascontiguousarray(a.data)
    status = sl.sparse_factor_solve(lu.i, lu.f, values, x)
    while status == sl.LU_CAPACITY:
        lu = sl.grow_lu_workspace(lu)
        status = sl.sparse_factor_solve(lu.i, lu.f, values, x)
    assert status == sl.LU_OK
    return x, lu


def check_against_numpy(a: sp.csc_matrix, x: np.ndarray, b: np.ndarray, rtol: float = 1e-12) -> None:
    assert residual(a, x, b) <= rtol
    x_np = np.linalg.solve(a.toarray(), b)
    assert np.linalg.norm(x - x_np) <= rtol * np.linalg.norm(x_np)


@functools.lru_cache
def well_conditioned_saddle_points(count: int, n_nodes: int, n_constraints: int, max_cond: float = 1e5):
    """Random saddle-point matrices (massless blocks, zero constraint diagonal) with cond ≤ max_cond."""
    out = []
    seed = 0
    while len(out) < count:
        a = ss.random_saddle_point(n_nodes, n_constraints, seed=seed, massless_fraction=0.3)
        seed += 1
        if np.linalg.cond(a.toarray()) <= max_cond:
            out.append(a)
    return tuple(out)


# ----------------------------------------------------------------------------------------
# solutions against numpy / scipy


@pytest.mark.parametrize("ordering", ORDERINGS)
@pytest.mark.parametrize("symmetric_pattern", [False, True])
def test_random_sparse_matches_numpy(ordering, symmetric_pattern):
    for seed in range(4):
        a = ss.random_sparse(120, 0.04, seed=seed, symmetric_pattern=symmetric_pattern)
        b = ss.rhs(120, seed)
        x, _ = solve_fresh(a, b, ordering=ordering)
        check_against_numpy(a, x, b)


@pytest.mark.parametrize("ordering", ORDERINGS)
@pytest.mark.parametrize("pivot_tol", [1.0, 0.1])
def test_random_saddle_points_need_pivoting(ordering, pivot_tol):
    for a in well_conditioned_saddle_points(3, 20, 14):
        d = a.toarray()
        n = a.shape[0]
        assert np.any(np.all(d[: 6 * 20].reshape(20, 6, -1)[:, :, : 6 * 20] == 0.0, axis=(1, 2)))  # a massless node
        assert np.all(np.diag(d)[6 * 20 :] == 0.0)
        b = ss.rhs(n)
        x, lu = solve_fresh(a, b, ordering=ordering, pivot_tol=pivot_tol)
        check_against_numpy(a, x, b, rtol=1e-12)
        assert np.any(lu.prow != lu.q)  # rows were pivoted away from the diagonal
        lnz = lu.info[sl.INFO_LNZ]
        assert np.max(np.abs(lu.lx[:lnz])) <= 1.0 / pivot_tol * (1 + 1e-12)  # threshold partial pivoting


def test_large_saddle_point_backward_stable():
    """cond ≈ 1e6: the residual is what a backward-stable solver gives (numpy's own order)."""
    a = ss.random_saddle_point(300, 200, seed=0)
    b = ss.rhs(a.shape[0])
    x_np = np.linalg.solve(a.toarray(), b)
    for ordering in ORDERINGS:
        x, _ = solve_fresh(a, b, ordering=ordering)
        assert residual(a, x, b) <= max(10.0 * residual(a, x_np, b), 1e-14)
        backward = np.linalg.norm(a @ x - b) / (sp.linalg.norm(a, np.inf) * np.linalg.norm(x) + np.linalg.norm(b))
        assert backward <= 1e-15


def test_heavy_top_real_newton_matrix():
    a = ss.heavy_top()
    assert a.shape == (15, 15) and a.nnz == 48
    b = ss.rhs(15)
    for ordering in ORDERINGS:
        x, _ = solve_fresh(a, b, ordering=ordering)
        check_against_numpy(a, x, b, rtol=1e-14)
        assert np.linalg.norm(x - spla.spsolve(a, b)) <= 1e-13 * np.linalg.norm(x)
    # and the package's dense solver on the same matrix
    d = a.toarray()
    xd = b.copy()
    assert dense_solve(d, np.zeros(15, dtype=np.int64), xd) == SOLVE_OK
    x, _ = solve_fresh(a, b)
    assert np.linalg.norm(x - xd) <= 1e-14 * np.linalg.norm(xd)


def test_heavy_top_dense_blocks_with_explicit_zeros():
    rng = np.random.default_rng(5)
    a0 = ss.heavy_top(dense_blocks=True)
    assert a0.nnz == 72 and np.count_nonzero(a0.data) == 48  # explicit zeros stored
    lu = sl.SparseLU(a0.indptr, a0.indices, 15)
    for it in range(5):
        a = a0 if it == 0 else ss.heavy_top(dense_blocks=True, rng=rng)
        b = ss.rhs(15, it)
        x = b.copy()
        assert lu.factor_solve(a.data, x) == sl.LU_OK
        check_against_numpy(a, x, b)
    assert lu.counters["factor"] >= 1 and lu.counters["refactor"] >= 1


@pytest.mark.parametrize(
    "kwargs", [{}, {"massless_every": 3}, {"random_joints": True}, {"massless_every": 2, "random_joints": True}]
)
def test_chain_matches_spsolve(kwargs):
    """Ball-joint chains; with massless bodies they are ill-conditioned (cond 1e5 – 1e8) and the
    residual is held to numpy's own (backward-stable LAPACK) residual instead of 1e-12."""
    a = ss.chain(40, seed=2, **kwargs)
    n = a.shape[0]
    b = ss.rhs(n)
    x_ref = spla.spsolve(a, b)
    d = a.toarray()
    cond = np.linalg.cond(d)
    res_np = residual(a, np.linalg.solve(d, b), b)
    if not kwargs:
        assert cond < 1e4
    for ordering in ORDERINGS:
        x, _ = solve_fresh(a, b, ordering=ordering)
        assert residual(a, x, b) <= max(1e-12 if cond < 1e4 else 0.0, 4.0 * res_np)
        assert np.linalg.norm(x - x_ref) <= max(1e-12, 1e-15 * cond) * np.linalg.norm(x_ref)


def test_boxes_block_diagonal():
    a = ss.boxes(200, seed=4)
    b = ss.rhs(a.shape[0])
    x, lu = solve_fresh(a, b)
    check_against_numpy(a, x, b)
    n = a.shape[0]
    assert lu.info[sl.INFO_LNZ] + lu.info[sl.INFO_UNZ] + n == a.nnz  # no fill at all


def test_duplicate_entries_are_summed():
    a = ss.random_sparse(40, 0.1, seed=3).tocoo()
    # split every value in two entries of the same position
    rows = np.concatenate([a.row, a.row])
    cols = np.concatenate([a.col, a.col])
    vals = np.concatenate([0.25 * a.data, 0.75 * a.data])
    order = np.argsort(cols, kind="stable")
    indptr = np.searchsorted(cols[order], np.arange(41)).astype(np.int64)
    b = ss.rhs(40)
    lu = sl.SparseLU(indptr, rows[order], 40)
    x = b.copy()
    assert lu.factor_solve(vals[order], x) == sl.LU_OK
    x = b.copy()
    assert lu.factor_solve(vals[order], x) == sl.LU_OK  # the refactor path sums too
    assert lu.counters["refactor"] == 1
    check_against_numpy(a.tocsc(), x, b)


# ----------------------------------------------------------------------------------------
# refactor


@pytest.mark.parametrize(
    ("name", "matrix"),
    [
        ("chain", lambda: ss.chain(30, seed=1, massless_every=3)),
        ("saddle", lambda: well_conditioned_saddle_points(1, 20, 14)[0]),
        ("heavy top", lambda: ss.heavy_top(dense_blocks=True)),
    ],
)
def test_refactor_equals_fresh_factor(name, matrix):
    a = matrix()
    n = a.shape[0]
    rng = np.random.default_rng(9)
    lu = sl.new_lu_workspace(a.indptr, a.indices, n, a.data)
    values = a.data * (1.0 + 1e-3 * rng.standard_normal(a.nnz))  # the next Newton iteration
    assert sl.lu_refactor(lu.i, lu.f, values) == sl.LU_OK
    fresh = sl.new_lu_workspace(a.indptr, a.indices, n, values)
    assert fresh.info[sl.INFO_VALID] == 1
    b = ss.rhs(n)
    x_re, x_fresh = b.copy(), b.copy()
    sl.lu_solve(lu.i, lu.f, x_re)
    sl.lu_solve(fresh.i, fresh.f, x_fresh)
    assert np.linalg.norm(x_re - x_fresh) <= 1e-12 * np.linalg.norm(x_fresh)
    a2 = sp.csc_matrix((values, a.indices, a.indptr), shape=(n, n))
    check_against_numpy(a2, x_re, b)
    # the refactored L U is P A₂ Q
    ell, u = factors(lu)
    d2 = a2.toarray()[np.ix_(lu.prow, lu.q)]
    assert np.max(np.abs(ell @ u - d2)) <= 1e-13 * np.max(np.abs(d2))
    if name != "heavy top":  # (the heavy top has exact ties: a fresh factor may swap equal pivots)
        assert np.array_equal(lu.prow, fresh.prow)
        lnz, unz = lu.info[sl.INFO_LNZ], lu.info[sl.INFO_UNZ]
        assert lnz == fresh.info[sl.INFO_LNZ] and unz == fresh.info[sl.INFO_UNZ]
        np.testing.assert_allclose(lu.lx[:lnz], fresh.lx[:lnz], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(lu.ux[:unz], fresh.ux[:unz], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(lu.uinv, fresh.uinv, rtol=1e-12)


def factors(lu: sl.LUWorkspace) -> tuple[np.ndarray, np.ndarray]:
    """Dense L (unit diagonal) and U of a workspace, in pivot order."""
    n = lu.q.size
    ell = np.eye(n)
    u = np.diag(1.0 / lu.uinv)
    for k in range(n):
        for p in range(lu.lp[k], lu.lp[k + 1]):
            ell[lu.li[p], k] = lu.lx[p]
        for p in range(lu.up[k], lu.up[k + 1]):
            u[lu.ui[p], k] = lu.ux[p]
    return ell, u


def test_refactor_refuses_small_pivot_and_factor_recovers():
    # [[e, 1], [1, 1]] factored at e = 1 keeps the diagonal pivot; at e = 1e-6 that pivot is too small
    indptr = np.array([0, 2, 4])
    indices = np.array([0, 1, 0, 1])
    lu = sl.new_lu_workspace(indptr, indices, 2, np.array([1.0, 1.0, 1.0, 2.0]), pivot_tol=1.0)
    assert lu.prow[0] == 0
    small = np.array([1e-6, 1.0, 1.0, 2.0])
    assert sl.lu_refactor(lu.i, lu.f, small) == sl.LU_REFACTOR_FAILED
    assert lu.info[sl.INFO_VALID] == 0 and lu.info[sl.INFO_COLUMN] == 0
    assert np.all(lu.x == 0.0)  # the accumulator is left clean
    b = np.array([1.0, 3.0])
    x = b.copy()
    assert sl.sparse_factor_solve(lu.i, lu.f, small, x) == sl.LU_OK
    assert lu.prow[0] == 1  # re-pivoted
    np.testing.assert_allclose(np.array([[1e-6, 1.0], [1.0, 2.0]]) @ x, b, rtol=1e-14)
    assert lu.info[sl.INFO_N_FACTOR] == 2  # one factor at creation, one after the refusal
    # growth within growth_tol is accepted
    # now row 1 is the pivot of column 0: |a00 / a10| ≤ 1 / growth_tol is accepted, beyond refused
    assert sl.lu_refactor(lu.i, lu.f, np.array([2.0, 0.01, 1.0, 2.0])) == sl.LU_OK
    assert sl.lu_refactor(lu.i, lu.f, np.array([20.0, 0.01, 1.0, 2.0])) == sl.LU_REFACTOR_FAILED


def test_refactor_without_factorization_and_non_finite_values():
    a = ss.chain(5)
    lu = sl.new_lu_workspace(a.indptr, a.indices, a.shape[0])
    assert sl.lu_refactor(lu.i, lu.f, a.data) == sl.LU_REFACTOR_FAILED  # nothing to reuse yet
    assert sl.lu_factor(lu.i, lu.f, a.data) == sl.LU_OK
    for bad in (np.nan, np.inf):
        v = a.data.copy()
        v[7] = bad
        assert sl.lu_refactor(lu.i, lu.f, v) == sl.LU_REFACTOR_FAILED
        assert np.all(lu.x == 0.0)
        b = ss.rhs(a.shape[0])
        x = b.copy()
        assert sl.sparse_factor_solve(lu.i, lu.f, v, x) == sl.LU_SINGULAR
        assert np.array_equal(x, b)  # untouched
        assert sl.sparse_factor_solve(lu.i, lu.f, a.data, x) == sl.LU_OK
        check_against_numpy(a, x, b)


# ----------------------------------------------------------------------------------------
# singular matrices, capacity


def test_singular_structurally():
    # columns 0 and 1 have entries only in row 0: structural rank 2 < 3
    d = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 3.0]])
    a = sp.csc_matrix(d)
    lu = sl.new_lu_workspace(a.indptr, a.indices, 3, ordering="natural")
    assert sl.lu_factor(lu.i, lu.f, a.data) == sl.LU_SINGULAR
    assert lu.info[sl.INFO_COLUMN] == 1 and lu.info[sl.INFO_VALID] == 0
    assert np.all(lu.x == 0.0)
    with pytest.raises(RuntimeError):
        sl.SparseLU(a.indptr, a.indices, 3).solve(np.ones(3))
    # an empty column
    a = ss.chain(6).tolil()
    a[:, 10] = 0.0
    a = sp.csc_matrix(a.toarray())
    assert sl.SparseLU(a.indptr, a.indices, a.shape[0]).factor(a.data) == sl.LU_SINGULAR


def test_singular_zero_column_and_exact_cancellation():
    # a column whose stored entries are all exact zeros: body 1's first DOF (pattern kept)
    a = ss.chain(6, seed=3)
    a.data[a.indptr[6] : a.indptr[7]] = 0.0
    lu = sl.SparseLU(a.indptr, a.indices, a.shape[0])
    assert lu.factor(a.data) == sl.LU_SINGULAR
    assert lu.workspace.info[sl.INFO_VALID] == 0
    # exact cancellation: [[1, 2], [2, 4]]
    a = sp.csc_matrix(np.array([[1.0, 2.0], [2.0, 4.0]]))
    lu = sl.SparseLU(a.indptr, a.indices, 2)
    x = np.ones(2)
    assert lu.factor_solve(a.data, x) == sl.LU_SINGULAR
    assert np.array_equal(x, np.ones(2))
    assert sl.LU_SINGULAR == SOLVE_SINGULAR and sl.LU_OK == SOLVE_OK


def test_capacity_path_grows():
    a = ss.chain(50, seed=6, random_joints=True)
    n = a.shape[0]
    b = ss.rhs(n)
    lu = sl.new_lu_workspace(a.indptr, a.indices, n, capacity=(100, 100))
    x = b.copy()
    assert sl.sparse_factor_solve(lu.i, lu.f, a.data, x) == sl.LU_CAPACITY
    assert np.array_equal(x, b)
    assert lu.info[sl.INFO_VALID] == 0 and lu.info[sl.INFO_PATTERN] == 0
    grows = 0
    status = sl.LU_CAPACITY
    while status == sl.LU_CAPACITY:
        lu = sl.grow_lu_workspace(lu)
        grows += 1
        status = sl.sparse_factor_solve(lu.i, lu.f, a.data, x)
    assert status == sl.LU_OK and grows <= 6
    check_against_numpy(a, x, b)
    # U full (L roomy) is reported as such
    lu = sl.new_lu_workspace(a.indptr, a.indices, n, capacity=(10 * a.nnz, 50))
    assert sl.lu_factor(lu.i, lu.f, a.data) == sl.LU_CAPACITY and lu.info[sl.INFO_NEED] == 1
    # SparseLU grows by itself
    slu = sl.SparseLU(a.indptr, a.indices, n, capacity_factor=1.0)
    slu.workspace = sl.new_lu_workspace(a.indptr, a.indices, n, capacity=(10, 10))
    assert slu.factor(a.data) == sl.LU_OK
    check_against_numpy(a, slu.solve(b), b)
    assert slu.workspace.li.size >= slu.workspace.info[sl.INFO_LNZ]


def test_workspace_sized_by_first_factorization():
    a = ss.chain(60, seed=2, massless_every=3)
    n = a.shape[0]
    lu = sl.new_lu_workspace(a.indptr, a.indices, n, a.data, capacity_factor=1.5, capacity=(20, 20))
    assert lu.info[sl.INFO_VALID] == 1
    assert lu.li.size >= 1.5 * lu.info[sl.INFO_LNZ] and lu.ui.size >= 1.5 * lu.info[sl.INFO_UNZ]


# ----------------------------------------------------------------------------------------
# the compiled path: one Newton-like loop, no allocation


@numba.njit(cache=False, _nrt=False)
def _newton_like(lu_i, lu_f, values, b0, x, scales, statuses):
    """Per iteration: scale the values, solve; what the integrator does inside its step."""
    nnz = values.shape[0]
    for it in range(scales.shape[0]):
        for p in range(nnz):
            values[p] *= scales[it]
        for i in range(b0.shape[0]):
            x[it, i] = b0[i]
        statuses[it] = sl.sparse_factor_solve(lu_i, lu_f, values, x[it])
    return 0


def test_sparse_factor_solve_inside_compiled_loop():
    a = ss.chain(20, seed=8)
    n = a.shape[0]
    lu = sl.new_lu_workspace(a.indptr, a.indices, n)
    values = a.data.copy()
    scales = np.array([1.0, 1.01, 0.99, 1.02])
    x = np.zeros((4, n))
    statuses = np.zeros(4, dtype=np.int64)
    b = ss.rhs(n)
    _newton_like(lu.i, lu.f, values, b, x, scales, statuses)
    assert np.all(statuses == sl.LU_OK)
    assert lu.info[sl.INFO_N_FACTOR] == 1 and lu.info[sl.INFO_N_REFACTOR] == 3
    s = np.cumprod(scales)
    for it in range(4):
        check_against_numpy(a * s[it], x[it], b)


def test_plain_python_kernels_agree(tmp_path):
    """KYNEMAPY_DISABLE_JIT=1 runs every kernel as Python: same solution (heavy top, chain)."""
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        sys.path.insert(0, {tests!r})
        import sparse_systems as ss
        from kynemapy.linalg import sparse_lu as sl
        out = []
        for a in (ss.heavy_top(), ss.chain(4, massless_every=2)):
            lu = sl.new_lu_workspace(a.indptr, a.indices, a.shape[0], a.data)
            x = ss.rhs(a.shape[0])
            assert sl.sparse_factor_solve(lu.i, lu.f, a.data, x) == sl.LU_OK
            out.append(x)
        np.save({path!r}, np.concatenate(out))
        """
    ).format(tests=str(Path(__file__).resolve().parents[1]), path=str(tmp_path / "x.npy"))
    env = dict(os.environ, KYNEMAPY_DISABLE_JIT="1")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    x_py = np.load(tmp_path / "x.npy")
    expected = []
    for a in (ss.heavy_top(), ss.chain(4, massless_every=2)):
        x, _ = solve_fresh(a, ss.rhs(a.shape[0]))
        expected.append(x)
    np.testing.assert_allclose(x_py, np.concatenate(expected), rtol=1e-13, atol=1e-15)


# ----------------------------------------------------------------------------------------
# fill and orderings


def test_chain_fill_linear_in_length():
    per_body = []
    for n_bodies in (100, 1000, 5000):
        a = ss.chain(n_bodies, seed=0)
        lu = sl.SparseLU(a.indptr, a.indices, a.shape[0])
        assert lu.factor(a.data) == sl.LU_OK
        per_body.append(lu.nnz_lu / n_bodies)
    assert max(per_body) <= 1.05 * min(per_body)
    assert max(per_body) <= 1.5 * 108  # nnz(A)/N ≈ 108: little fill beyond A itself


def test_boxes_and_tiny_systems_choose_cheap_orderings():
    a = ss.boxes(50)
    sym = sl.analyze(a.indptr, a.indices, a.shape[0])
    assert sym.ordering == "natural"  # nothing to gain: the first candidate is kept
    assert sym.estimate.nnz_l == 50 * 15


def _dense_symbolic_cholesky_nnz(pattern: np.ndarray, perm: np.ndarray) -> int:
    """Strict-lower nnz of the Cholesky factor, by boolean elimination on the dense pattern."""
    g = pattern[np.ix_(perm, perm)].copy()
    n = g.shape[0]
    total = 0
    for k in range(n):
        below = np.flatnonzero(g[k + 1 :, k]) + k + 1
        total += below.size
        g[np.ix_(below, below)] = True
    return total


def test_symmetric_pattern_is_scipys_a_plus_a_transposed_without_the_diagonal():
    """The pattern of A + Aᵀ without the diagonal, against scipy.sparse's sum (an independent
    construction): square patterns with and without a diagonal, unsorted columns, repeats, empty."""
    rng = np.random.default_rng(11)
    for trial in range(120):
        n = int(rng.integers(0, 40))
        a = sp.random(n, n, density=rng.uniform(0.0, 0.3), format="coo", random_state=int(rng.integers(2**31)))
        rows, cols = a.row, a.col
        if trial % 3 == 0:  # a full diagonal too
            rows, cols = np.concatenate([rows, np.arange(n)]), np.concatenate([cols, np.arange(n)])
        if trial % 4 == 0 and rows.size:  # repeated entries
            rows, cols = np.concatenate([rows, rows[:3]]), np.concatenate([cols, cols[:3]])
        order = rng.permutation(rows.size)  # columns whose rows are not sorted
        rows, cols = rows[order], cols[order]
        by_col = np.argsort(cols, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=n))]).astype(np.int64)
        indices = rows[by_col].astype(np.int64)
        ones = sp.csc_matrix((np.ones(indices.size), indices, indptr), shape=(n, n))
        ref = (ones + ones.T).tocsc()
        ref.setdiag(0.0)
        ref.eliminate_zeros()
        ref.sort_indices()
        got_ptr, got_idx = od.symmetric_pattern(indptr, indices, n)
        assert got_ptr.dtype == np.int64 and got_idx.dtype == np.int64
        np.testing.assert_array_equal(got_ptr, ref.indptr)
        np.testing.assert_array_equal(got_idx, ref.indices)


def test_slot_table_finds_the_same_positions_as_a_search():
    """``sparsity.slots`` through the table of positions (small patterns) gives each entry's
    position in the CSC values, found here by a search of the pattern's columns; −1 for absent."""
    from kynemapy.linalg import sparsity

    rng = np.random.default_rng(5)
    for n in (1, 7, 60):
        a = (sp.random(n, n, density=0.2, format="csc", random_state=n) + sp.eye(n, format="csc")).tocsc()
        a.sort_indices()
        indptr, indices = a.indptr.astype(np.int64), a.indices.astype(np.int64)
        table = sparsity.slot_table(indptr, indices)
        assert table.shape == (n * n,)
        cols = np.repeat(np.arange(n), np.diff(indptr))
        pick = rng.integers(0, indices.size, size=50)
        r, c = indices[pick].copy(), cols[pick].copy()
        r[::7] = -1  # absent entries
        expected = np.array(
            [-1 if ri < 0 else int(indptr[ci] + np.flatnonzero(indices[indptr[ci] : indptr[ci + 1]] == ri)[0])
             for ri, ci in zip(r, c, strict=True)]
        )  # fmt: skip
        np.testing.assert_array_equal(sparsity.slots(indptr, indices, r, c, keys=table), expected)
        np.testing.assert_array_equal(sparsity.slots(indptr, indices, r, c), expected)
        keys = sparsity.csc_keys(indptr, indices)  # the search, as for patterns too large for a table
        np.testing.assert_array_equal(sparsity.slots(indptr, indices, r, c, keys=keys), expected)


def test_cholesky_counts_against_dense_elimination():
    rng = np.random.default_rng(0)
    for seed in range(3):
        a = ss.random_sparse(60, 0.05, seed=seed)
        pattern = (a.toarray() != 0) | (a.toarray().T != 0)
        for perm in (np.arange(60), rng.permutation(60), od.minimum_degree(a.indptr, a.indices, 60)):
            est = od.cholesky_counts(a.indptr, a.indices, 60, perm)
            assert est.nnz_l == _dense_symbolic_cholesky_nnz(pattern, perm)


def test_minimum_degree_is_a_permutation_and_reduces_fill():
    for a in (ss.random_sparse(300, 0.01, seed=1), ss.random_saddle_point(60, 40, seed=2), ss.chain(50)):
        n = a.shape[0]
        perm = od.minimum_degree(a.indptr, a.indices, n)
        assert np.array_equal(np.sort(perm), np.arange(n))
        fill_md = od.cholesky_counts(a.indptr, a.indices, n, perm).nnz_l
        fill_nat = od.cholesky_counts(a.indptr, a.indices, n, np.arange(n)).nnz_l
        fill_rand = od.cholesky_counts(a.indptr, a.indices, n, np.random.default_rng(0).permutation(n)).nnz_l
        assert fill_md <= fill_nat and fill_md < fill_rand
    # arrow matrix (a hub joined to every node): the hub goes last, no fill at all
    n = 200
    d = np.eye(n)
    d[0, :] = d[:, 0] = 1.0
    a = sp.csc_matrix(d)
    perm = od.minimum_degree(a.indptr, a.indices, n)
    assert od.cholesky_counts(a.indptr, a.indices, n, perm).nnz_l == n - 1
    # a star of chains (three blades on a hub): minimum degree beats RCM
    blades = []
    for _ in range(3):
        blades.append(ss.chain(30, seed=len(blades)))
    m = sp.block_diag(blades).tolil()
    m.resize((m.shape[0] + 6, m.shape[1] + 6))
    hub = m.shape[0] - 6
    for k in range(len(blades)):
        first = sum(b.shape[0] for b in blades[:k])
        m[hub : hub + 6, first : first + 6] = 1.0
        m[first : first + 6, hub : hub + 6] = 1.0
    m = sp.csc_matrix(m)
    est_md = od.cholesky_counts(m.indptr, m.indices, m.shape[0], od.minimum_degree(m.indptr, m.indices, m.shape[0]))
    est_rcm = od.cholesky_counts(m.indptr, m.indices, m.shape[0], od.rcm(m.indptr, m.indices, m.shape[0]))
    assert est_md.flops <= 1.05 * est_rcm.flops


def test_supervariables_keep_body_blocks_together():
    a = ss.boxes(30)
    perm = od.minimum_degree(a.indptr, a.indices, a.shape[0])
    body = perm.reshape(30, 6) // 6  # six consecutive steps per body
    assert np.all(body == body[:, :1])


def test_index_arrays_are_uint32_packed_two_to_a_word(monkeypatch):
    """ai, arow, li and ui (as long as A's, L's and U's entries) are uint32 views of the int64
    arena, two to a word: what Python writes there, compiled code reads back through ``v1u``,
    and the neighbouring fields are left alone; a pattern too large for 32-bit indices is refused."""
    from kynemapy._arena import v1u

    a = ss.chain(3)
    n = a.shape[0]
    lu = sl.new_lu_workspace(a.indptr, a.indices, n, a.data)
    for name in ("ai", "arow", "li", "ui"):
        view = getattr(lu, name)
        assert view.dtype == np.uint32 and np.shares_memory(view, lu.i), name
    np.testing.assert_array_equal(lu.ai, a.indices)
    words = {"ai": sl.AI, "arow": sl.AROW, "li": sl.LI, "ui": sl.UI}

    @numba.njit(cache=False)
    def read(i, word):
        v = v1u(i, i, word)
        out = np.empty(v.shape[0], np.int64)
        for k in range(v.shape[0]):
            out[k] = v[k]
        return out

    before = {name: getattr(lu, name).copy() for name in ("ap", "q", "lp", "up", "lrun", "prow")}
    for name, word in words.items():
        view = getattr(lu, name)
        pattern = (np.arange(view.size, dtype=np.uint64) * 2654435761 + 7) % (2**32)
        view[:] = pattern
        np.testing.assert_array_equal(read(lu.i, word), pattern.astype(np.int64))
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(lu, name), value, err_msg=name)
    # the int64 arena: the header, the int64 fields, and ⌈length / 2⌉ words per uint32 field
    fields = {spec.name: getattr(lu, spec.name) for spec in sl._LU.fields}
    int64_words = sum(v.size for v in fields.values() if v.dtype == np.int64)
    assert lu.i.size == sl._LU.size + int64_words + sum((fields[name].size + 1) // 2 for name in words)
    monkeypatch.setattr(sl, "U32_LIMIT", 5)
    with pytest.raises(ValueError, match="32 bits"):
        sl.analyze(a.indptr, a.indices, n)


def test_compiled_arena_views_are_the_python_views():
    """``v1`` and ``v1u`` (numba intrinsics) give, for every field of an LU workspace, the view
    Python's ``field_view`` gives: the same length and entries, and a write through the compiled
    view is seen in the Python one; arguments they do not take are refused when typed."""
    from numba.core.errors import TypingError

    from kynemapy._arena import v1, v1u

    a = ss.chain(3)
    lu = sl.new_lu_workspace(a.indptr, a.indices, a.shape[0], a.data)

    @numba.njit(cache=False)
    def mark(arena, header, word):
        v = v1(arena, header, word)
        for k in range(v.shape[0]):
            v[k] = k + 3
        return v.shape[0]

    @numba.njit(cache=False)
    def mark_packed(arena, header, word):
        v = v1u(arena, header, word)
        for k in range(v.shape[0]):
            v[k] = k + 3
        return v.shape[0]

    checked = 0
    for spec in sl._LU.fields:
        view = getattr(lu, spec.name)
        arena = lu.f if spec.arena == "f" else lu.i
        marked = mark_packed if spec.arena == "u" else mark
        assert marked(arena, lu.i, spec.word) == view.size, spec.name
        np.testing.assert_array_equal(view.ravel(), np.arange(view.size) + 3, err_msg=spec.name)
        checked += 1
    assert checked == len(sl._LU.fields) >= 20

    @numba.njit(cache=False)
    def wrong_header(arena, header):
        return v1(arena, header, 0).shape[0]

    with pytest.raises(TypingError):
        wrong_header(lu.i, lu.f)  # a float64 header
    with pytest.raises(TypingError):
        mark_packed(lu.f, lu.i, sl.AI)  # uint32 fields live in the int64 arena


def test_validation():
    with pytest.raises(ValueError, match="CSC pattern"):
        sl.analyze(np.array([0, 2]), np.array([0]), 1)
    with pytest.raises(ValueError, match="row indices"):
        sl.analyze(np.array([0, 1]), np.array([3]), 1)
    with pytest.raises(ValueError, match="ordering"):
        sl.analyze(np.array([0, 1]), np.array([0]), 1, ordering="metis")
    with pytest.raises(ValueError, match="pivot_tol"):
        sl.new_lu_workspace(np.array([0, 1]), np.array([0]), 1, pivot_tol=0.0)
    lu = sl.SparseLU(np.array([0, 1]), np.array([0]), 1)
    with pytest.raises(ValueError, match="values"):
        lu.factor(np.ones(2))
    with pytest.raises(ValueError, match="C-contiguous"):
        lu.factor_solve(np.ones(1), np.ones(1, dtype=np.float32))
    b = np.array([2.0])
    assert lu.factor_solve(np.array([4.0]), b) == sl.LU_OK and b[0] == 0.5
