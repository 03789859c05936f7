"""``solver="auto"``: which solver a model gets, and that the dense LU of a full matrix steps as
the sparse LU does (to round-off).

The dense kinds (``Solver.dense``): 1, the elimination program of the reference factorization
(up to 20 unknowns); 2, LU with partial pivoting at every solve (a Newton matrix at least half
full: beams of a few elements); 0, the sparse LU.
"""

from __future__ import annotations

import numpy as np
from models import ball_chain

import kynemapy as kp
from kynemapy.engine.data import DENSE_MIN_FILL


def _beam(order: int) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
    c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
    beam = b.add_beam([(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=order, root_acceleration=(0,) * 6)
    b.add_fixed_bc(beam.nodes[0])
    return b.build()


def _kind(model: kp.Model, solver: str = "auto") -> tuple[str, int, float]:
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, solver=solver))
    n = model.n_dofs
    return sim.workspace.solver, int(sim.data.solver.dense), sim.data.indices.shape[0] / n**2


def test_auto_picks_the_program_the_dense_lu_or_the_sparse_lu() -> None:
    assert _kind(ball_chain(2))[:2] == ("dense", 1)  # 12 + 6 unknowns: the program
    solver, dense, fill = _kind(_beam(5))  # 36 + 6 unknowns, one element: a full matrix
    assert (solver, dense) == ("dense", 2) and fill >= DENSE_MIN_FILL
    solver, dense, fill = _kind(ball_chain(40))  # a chain: block tridiagonal, sparse
    assert (solver, dense) == ("sparse", 0) and fill < DENSE_MIN_FILL
    assert _kind(_beam(5), "dense")[:2] == ("dense", 1)  # asked for: the program, as documented
    assert _kind(_beam(5), "sparse")[:2] == ("sparse", 0)


def test_the_dense_lu_steps_a_beam_as_the_sparse_lu_does() -> None:
    """A falling cantilever, 50 steps: the dense LU of every solve and the sparse LU give the same
    iterations and states equal to round-off (not the same bits: other elimination orders)."""
    runs = {}
    for solver in ("auto", "sparse"):
        sim = kp.Simulation(_beam(6), kp.StepParameters(h=1e-3, solver=solver))
        iterations = sim.advance(50)
        runs[solver] = (iterations, sim.state.q.copy(), sim.state.v.copy())
    assert np.array_equal(runs["auto"][0], runs["sparse"][0])
    scale_q = np.abs(runs["sparse"][1][:, :3]).max()
    assert scale_q > 1e-4  # the tip did move
    np.testing.assert_allclose(runs["auto"][1], runs["sparse"][1], rtol=0, atol=1e-12 * max(scale_q, 1.0))
    np.testing.assert_allclose(runs["auto"][2], runs["sparse"][2], rtol=0, atol=1e-9 * np.abs(runs["sparse"][2]).max())
