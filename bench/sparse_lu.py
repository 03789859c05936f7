"""Benchmark: the sparse LU of kynemapy.linalg.sparse_lu on multibody Newton matrices.

µs per factor (pivot search), refactor (same pivots, new values), solve, and refactor +
solve (the Newton-iteration path of ``sparse_factor_solve``), each timed inside one compiled
loop (no Python dispatch), median of 7 runs (CPU time of the process) after a warm-up; the solve times include copying
the right-hand side in.  Matrices (tests/sparse_systems.py): Kynema's heavy top (15 × 15,
real Newton values; compared with kynemapy.linalg.dense.dense_solve on the same matrix, which
includes copying the 15 × 15 matrix it overwrites), a chain of N bodies joined by ball
joints (n = 9 N) and N free boxes (n = 6 N), N = 10, 100, 1000, 5000.  Also: the ordering
chosen, analysis time, nnz(L+U) (diagonal counted once) and the compile / cache-load time
of the kernels, reported apart.

Run:  python bench/sparse_lu.py [--pivot-tol 0.1] [--ordering auto]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import sparse_systems as ss
from _machine import machine

from kynemapy.linalg import sparse_lu as sl
from kynemapy.linalg.dense import dense_solve

RUNS = 7


@numba.njit(cache=False)
def _loop_factor(li, lf, values, reps):
    s = 0
    for _ in range(reps):
        s += sl.lu_factor(li, lf, values)
    return s


@numba.njit(cache=False)
def _loop_refactor(li, lf, values, reps):
    s = 0
    for _ in range(reps):
        s += sl.lu_refactor(li, lf, values)
    return s


@numba.njit(cache=False)
def _loop_solve(li, lf, b0, b, reps):
    n = b.shape[0]
    for _ in range(reps):
        for i in range(n):
            b[i] = b0[i]
        sl.lu_solve(li, lf, b)
    return b[0]


@numba.njit(cache=False)
def _loop_factor_solve(li, lf, values, b0, b, reps):
    n = b.shape[0]
    s = 0
    for _ in range(reps):
        for i in range(n):
            b[i] = b0[i]
        s += sl.sparse_factor_solve(li, lf, values, b)
    return s


@numba.njit(cache=False)
def _loop_dense(a0, a, piv, b0, b, reps):
    n = b.shape[0]
    s = 0
    for _ in range(reps):
        for i in range(n):
            for j in range(n):
                a[i, j] = a0[i, j]
            b[i] = b0[i]
        s += dense_solve(a, piv, b)
    return s


def _median_us(fn, reps: int) -> float:
    """Median over RUNS of the CPU time per call (process time: other load on a shared
    machine is not counted, its effect on caches is)."""
    fn(1)
    times = []
    for _ in range(RUNS):
        t = time.process_time()
        fn(reps)
        times.append(time.process_time() - t)
    return statistics.median(times) / reps * 1e6


def _reps(nnz_lu: int, budget_s: float = 0.03) -> int:
    """Calls per timed run: about ``budget_s`` of refactor work (≈ 10 ns per entry of L+U)."""
    return max(3, int(budget_s / (1e-8 * nnz_lu + 1e-7)))


def bench_matrix(a, pivot_tol: float, ordering: str) -> dict[str, float]:
    n = a.shape[0]
    t = time.perf_counter()
    sym = sl.analyze(a.indptr, a.indices, n, ordering)
    t_analyze = time.perf_counter() - t
    lu = sl.new_lu_workspace(a.indptr, a.indices, n, a.data, symbolic=sym, pivot_tol=pivot_tol)
    values = np.ascontiguousarray(a.data)
    b0 = ss.rhs(n)
    b = b0.copy()
    assert sl.lu_factor(lu.i, lu.f, values) == sl.LU_OK
    nnz_lu = int(lu.info[sl.INFO_LNZ] + lu.info[sl.INFO_UNZ]) + n
    reps = _reps(nnz_lu)
    out = {
        "factor": _median_us(lambda r: _loop_factor(lu.i, lu.f, values, r), reps),
        "refactor": _median_us(lambda r: _loop_refactor(lu.i, lu.f, values, r), reps),
        "solve": _median_us(lambda r: _loop_solve(lu.i, lu.f, b0, b, r), reps * 4),
        "refactor+solve": _median_us(lambda r: _loop_factor_solve(lu.i, lu.f, values, b0, b, r), reps),
    }
    x = b0.copy()
    assert sl.sparse_factor_solve(lu.i, lu.f, values, x) == sl.LU_OK
    res = np.linalg.norm(a @ x - b0) / np.linalg.norm(b0)
    out.update(analyze_ms=t_analyze * 1e3, nnz_lu=nnz_lu, nnz_a=a.nnz, n=n, residual=res, ordering=sym.ordering)
    return out


def compile_times() -> tuple[float, float]:
    """Seconds to compile (or load from cache) the package kernels, and the bench loops."""
    a = ss.heavy_top()
    t = time.perf_counter()
    lu = sl.new_lu_workspace(a.indptr, a.indices, 15, a.data)
    b = ss.rhs(15)
    sl.sparse_factor_solve(lu.i, lu.f, a.data, b)
    sl.lu_refactor(lu.i, lu.f, a.data)
    sl.lu_solve(lu.i, lu.f, b)
    t_kernels = time.perf_counter() - t
    t = time.perf_counter()
    _loop_factor(lu.i, lu.f, a.data, 1)
    _loop_refactor(lu.i, lu.f, a.data, 1)
    _loop_solve(lu.i, lu.f, b, b.copy(), 1)
    _loop_factor_solve(lu.i, lu.f, a.data, b, b.copy(), 1)
    d = a.toarray()
    _loop_dense(d, d.copy(), np.zeros(15, np.int64), b, b.copy(), 1)
    return t_kernels, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pivot-tol", type=float, default=sl.PIVOT_TOL)
    parser.add_argument("--ordering", default="auto", choices=("auto", "amd", "rcm", "natural"))
    parser.add_argument("--sizes", type=int, nargs="*", default=[10, 100, 1000, 5000])
    parser.add_argument("--no-fill", action="store_true", help="skip the fill table")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"pivot_tol = {args.pivot_tol}, ordering = {args.ordering}")
    t_kernels, t_bench = compile_times()
    print(f"compile / cache load: kynemapy kernels {t_kernels:.2f} s, benchmark loops {t_bench:.2f} s\n")

    a = ss.heavy_top()
    r = bench_matrix(a, args.pivot_tol, args.ordering)
    d = a.toarray()
    b0 = ss.rhs(15)
    piv = np.zeros(15, dtype=np.int64)
    dense = _median_us(lambda k: _loop_dense(d, d.copy(), piv, b0, b0.copy(), k), 200_000)
    print("heavy top, 15 × 15, 48 entries (µs per call)")
    print(f"  ordering {r['ordering']}, nnz(L+U) {r['nnz_lu']}, residual {r['residual']:.1e}")
    print(
        f"  factor {r['factor']:.3f}  refactor {r['refactor']:.3f}  solve {r['solve']:.3f}  "
        f"refactor+solve {r['refactor+solve']:.3f}  | dense_solve (incl. copy of A) {dense:.3f}\n"
    )

    header = (
        f"{'system':>14} {'N':>5} {'n':>6} {'ord':>7} {'nnz(A)':>8} {'nnz(L+U)':>9} {'/N':>6} "
        f"{'factor':>9} {'refactor':>9} {'solve':>8} {'ref+sol':>9} {'µs/body':>8} {'analyze ms':>10} {'resid':>8}"
    )
    print("chain and boxes: µs per call; µs/body = refactor+solve / N")
    print(header)
    for name, gen in (("chain", ss.chain), ("boxes", ss.boxes)):
        for n_bodies in args.sizes:
            a = gen(n_bodies)
            r = bench_matrix(a, args.pivot_tol, args.ordering)
            print(
                f"{name:>14} {n_bodies:>5} {r['n']:>6} {r['ordering']:>7} {r['nnz_a']:>8} {r['nnz_lu']:>9} "
                f"{r['nnz_lu'] / n_bodies:>6.1f} {r['factor']:>9.2f} {r['refactor']:>9.2f} {r['solve']:>8.2f} "
                f"{r['refactor+solve']:>9.2f} {r['refactor+solve'] / n_bodies:>8.3f} {r['analyze_ms']:>10.1f} "
                f"{r['residual']:>8.1e}"
            )
    if not args.no_fill:
        fill_table(args.sizes, args.pivot_tol)


def fill_table(sizes: list[int], pivot_tol: float) -> None:
    """nnz(L+U) (diagonal once) per ordering, and the symbolic estimate of the chosen one."""
    print(f"\nfill: nnz(L+U) per ordering (pivot_tol = {pivot_tol}); est = symbolic Cholesky of A + Aᵀ (2 nnz(L) + n)")
    print(f"{'system':>8} {'N':>5} {'nnz(A)':>8} {'natural':>9} {'rcm':>9} {'amd':>9} {'auto':>8} {'est':>9} {'/N':>7}")
    for name, gen in (("chain", ss.chain), ("massless", lambda n: ss.chain(n, massless_every=3)), ("boxes", ss.boxes)):
        for n_bodies in sizes:
            a = gen(n_bodies)
            n = a.shape[0]
            counts = {}
            for ordering in ("natural", "rcm", "amd", "auto"):
                sym = sl.analyze(a.indptr, a.indices, n, ordering)
                lu = sl.new_lu_workspace(a.indptr, a.indices, n, a.data, symbolic=sym, pivot_tol=pivot_tol)
                counts[ordering] = int(lu.info[sl.INFO_LNZ] + lu.info[sl.INFO_UNZ]) + n
            est = 2 * sym.estimate.nnz_l + n
            print(
                f"{name:>8} {n_bodies:>5} {a.nnz:>8} {counts['natural']:>9} {counts['rcm']:>9} {counts['amd']:>9} "
                f"{sym.ordering:>8} {est:>9} {counts['auto'] / n_bodies:>7.1f}"
            )


if __name__ == "__main__":
    main()
