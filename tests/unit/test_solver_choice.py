"""``solver="auto"``: which solver a model gets, and that the dense LU of a full matrix steps as
the sparse LU does (to round-off).

The dense kinds (``Solver.dense``): 1, the elimination program of the reference factorization
(up to 20 unknowns, or 40 where the Newton matrix is less than half full); 2, LU with partial
pivoting at every solve (a Newton matrix at least half full: beams of a few elements); 3, the
same with the nodes held by one-node constraints (a beam's root under a fixed boundary
condition) eliminated first; 0, the sparse LU.  The condensed solve is checked against numpy's
LAPACK solve on random matrices of its structure.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from models import ball_chain

import kynemapy as kp
from kynemapy.engine.data import DENSE_MIN_FILL
from kynemapy.linalg.dense import CONDENSE_REFUSED, SOLVE_OK, condense_plan, condensed_solve, held_blocks


def _beam(order: int, held: bool = True) -> kp.Model:
    """A cantilever of one element, its root held by a fixed BC (``held``) or by a ball joint to
    the ground (three rows on six DOFs: not a held node)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
    c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
    beam = b.add_beam([(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=order, root_acceleration=(0,) * 6)
    if held:
        b.add_fixed_bc(beam.nodes[0])
    else:
        b.add_ball_joint(kp.GROUND, beam.nodes[0], (0.0, 0.0, 0.0))
    return b.build()


def _kind(model: kp.Model, solver: str = "auto") -> tuple[str, int, float]:
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, solver=solver))
    n = model.n_dofs
    return sim.workspace.solver, int(sim.data.solver.dense), sim.data.indices.shape[0] / n**2


def test_auto_picks_the_program_the_dense_lu_or_the_sparse_lu() -> None:
    assert _kind(ball_chain(2))[:2] == ("dense", 1)  # 12 + 6 unknowns: the program
    # up to DENSE_PROGRAM_MAX_DOFS (40) unknowns the program too where the matrix is not full
    solver, dense, fill = _kind(ball_chain(4))  # 24 + 12
    assert (solver, dense) == ("dense", 1) and fill < DENSE_MIN_FILL
    assert _kind(ball_chain(5))[:2] == ("sparse", 0)  # 30 + 15
    solver, dense, fill = _kind(_beam(5))  # 36 + 6 unknowns, one element: a full matrix, its root held
    assert (solver, dense) == ("dense", 3) and fill >= DENSE_MIN_FILL
    solver, dense, fill = _kind(_beam(5, held=False))  # 36 + 3: no held node
    assert (solver, dense) == ("dense", 2) and fill >= DENSE_MIN_FILL
    solver, dense, fill = _kind(ball_chain(40))  # a chain: block tridiagonal, sparse
    assert (solver, dense) == ("sparse", 0) and fill < DENSE_MIN_FILL
    assert _kind(_beam(5), "dense")[:2] == ("dense", 1)  # asked for: the program, as documented
    assert _kind(_beam(5), "sparse")[:2] == ("sparse", 0)


@pytest.mark.parametrize("held", [True, False], ids=["held root (3)", "ball-jointed root (2)"])
def test_the_dense_lu_steps_a_beam_as_the_sparse_lu_does(held: bool) -> None:
    """A falling cantilever, 50 steps: the dense LU of every solve (the held root eliminated first,
    or not) and the sparse LU give the same iterations and states equal to round-off (not the same
    bits: other elimination orders).  The held-root solve is the held-node unit, compiled and
    filled only for the model that has a held node."""
    from kynemapy.engine.unit_call import HELD

    runs = {}
    for solver in ("auto", "sparse"):
        sim = kp.Simulation(_beam(6, held), kp.StepParameters(h=1e-3, solver=solver))
        assert solver == "sparse" or int(sim.data.solver.dense) == (3 if held else 2)
        assert (sim.data.units[HELD] != 0) == (held and solver == "auto")
        iterations = sim.advance(50)
        runs[solver] = (iterations, sim.state.q.copy(), sim.state.v.copy())
    assert np.array_equal(runs["auto"][0], runs["sparse"][0])
    scale_q = np.abs(runs["sparse"][1][:, :3]).max()
    assert scale_q > 1e-4  # the tip did move
    np.testing.assert_allclose(runs["auto"][1], runs["sparse"][1], rtol=0, atol=1e-12 * max(scale_q, 1.0))
    np.testing.assert_allclose(runs["auto"][2], runs["sparse"][2], rtol=0, atol=1e-9 * np.abs(runs["sparse"][2]).max())


def _held_system(rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[int, int, int]], np.ndarray]:
    """A random matrix of the condensed solve's structure: nodes of 6 DOFs (a dense, diagonally
    dominant block), one to three of them held (B₀ and C₀ random, invertible), and a few generic
    constraint rows on free DOFs and on one held DOF."""
    n_nodes = int(rng.integers(2, 6))
    held = sorted(rng.choice(n_nodes, size=int(rng.integers(1, min(n_nodes - 1, 3) + 1)), replace=False).tolist())
    nd = 6 * n_nodes
    free_dofs = [d for d in range(nd) if d // 6 not in held]
    extra = int(rng.integers(0, 4))
    n = nd + 6 * len(held) + extra
    a = np.zeros((n, n))
    a[:nd, :nd] = rng.standard_normal((nd, nd)) + 8.0 * np.eye(nd)
    blocks = []
    r = nd
    for node in held:
        u = 6 * node
        a[r : r + 6, u : u + 6] = rng.standard_normal((6, 6)) + 4.0 * np.eye(6)
        a[u : u + 6, r : r + 6] = rng.standard_normal((6, 6)) + 4.0 * np.eye(6)
        blocks.append((u, r - nd, 6))
        r += 6
    for _ in range(extra):
        cols = [*rng.choice(free_dofs, size=3, replace=False).tolist(), 6 * held[0] + 2]
        a[r, cols] = rng.standard_normal(4)
        a[cols, r] = rng.standard_normal(4)
        r += 1
    return a, blocks, np.array(held)


def _found(a: np.ndarray, nodes: list[int], rows: list[int], n_rows: int = 6) -> list[tuple[int, ...]]:
    """held_blocks of ``a`` whose first rows after ``6 n_nodes`` node DOFs are constraints on
    ``nodes`` starting at ``rows`` (counted from the first constraint row), every node 6 DOFs."""
    n = a.shape[0]
    n_nodes = (n - n_rows * len(nodes)) // 6  # (the generic rows are fewer than 6)
    csc = sp.csc_matrix(a)
    found = held_blocks(
        n, csc.indptr, csc.indices, np.array([[-1, node] for node in nodes]), np.array(rows),
        np.full(len(nodes), n_rows), np.arange(0, 6 * n_nodes, 6), np.full(n_nodes, 6), 6 * n_nodes,
    )  # fmt: skip
    return [tuple(map(int, b)) for b in found]


def test_the_condensed_solve_equals_numpys_solve_on_held_blocks() -> None:
    """100 random systems: held_blocks finds every held node from the pattern and the constraint
    tables, and condensed_solve's solution has a normwise backward error below 1e-13 and equals
    numpy's LAPACK solve within 1e-14 × the condition number."""
    rng = np.random.default_rng(7)
    for _ in range(100):
        a, blocks, held = _held_system(rng)
        n = a.shape[0]
        first = n - 6 * len(blocks) - (n - 6 * len(blocks)) % 6
        found = _found(a, held.tolist(), [r for _, r, _ in blocks])
        assert found == [(u, first + r, m) for u, r, m in blocks]
        plan, scratch = condense_plan(n, np.array(found))
        b = rng.standard_normal(n)
        x = b.copy()
        assert condensed_solve(a.copy(), x, plan, np.zeros(scratch)) == SOLVE_OK
        assert np.linalg.norm(a @ x - b) <= 1e-13 * np.linalg.norm(a, np.inf) * np.linalg.norm(x)
        x_np = np.linalg.solve(a, b)  # the forward error bound: round-off times the condition number
        np.testing.assert_allclose(x, x_np, rtol=0, atol=1e-14 * np.linalg.cond(a) * np.abs(x_np).max())


def test_the_condensed_solve_refuses_what_it_cannot_eliminate_and_leaves_b() -> None:
    """A non-zero entry among a held constraint's own columns, or a singular B₀: CONDENSE_REFUSED,
    and the right-hand side untouched (the engine then factors the whole matrix)."""
    rng = np.random.default_rng(3)
    a, blocks, held = _held_system(rng)
    n = a.shape[0]
    found = _found(a, held.tolist(), [r for _, r, _ in blocks])
    plan, scratch = condense_plan(n, np.array(found))
    b = rng.standard_normal(n)
    u, r, _ = found[0]
    for damage in ("own block", "singular B0"):
        bad = a.copy()
        if damage == "own block":
            bad[r, r] = 1.0
        else:
            bad[r + 1, u : u + 6] = bad[r, u : u + 6]
        x = b.copy()
        assert condensed_solve(bad, x, plan, np.zeros(scratch)) == CONDENSE_REFUSED, damage
        np.testing.assert_array_equal(x, b)


def test_held_blocks_takes_only_a_node_held_alone_by_as_many_rows_as_it_has_dofs() -> None:
    """Two nodes of 6 DOFs (12 unknowns, a dense block) and constraints on the first: one BC of 6
    rows is a held block; two BCs on it are not (a node held twice), nor a BC whose rows reach
    the other node's columns, nor a constraint of 3 rows on its 6 DOFs."""
    rng = np.random.default_rng(5)

    def system(n_constraints: int, rows: int = 6) -> np.ndarray:
        n = 12 + rows * n_constraints
        a = np.zeros((n, n))
        a[:12, :12] = rng.standard_normal((12, 12))
        for k in range(n_constraints):
            r = 12 + rows * k
            a[r : r + rows, :rows] = rng.standard_normal((rows, rows))
            a[:rows, r : r + rows] = rng.standard_normal((rows, rows))
        return a

    assert _found(system(1), [0], [0]) == [(0, 12, 6)]
    assert _found(system(2), [0, 0], [0, 6]) == []
    reach = system(1)
    reach[12, 7] = 1.0  # a row of the BC on a DOF of node 1
    assert _found(reach, [0], [0]) == []
    reach = system(1)
    reach[7, 12] = 1.0  # a multiplier of the BC in a row of node 1
    assert _found(reach, [0], [0]) == []
    assert _found(system(1, rows=3), [0], [0], n_rows=3) == []
