"""The sparse path: slot-map assembly, sparse LU in the Newton loop, large-model checks.

The sparse solver must reproduce Kynema's published numbers exactly as the dense one
does (same tolerances), the slot maps must put every element entry where the dense
assembly puts it, a factorization that outgrows its arrays must be transparent, and
the build-time redundancy check must name the constraints of large models too.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from test_regression import (
    HEAVY_TOP_PARAMS,
    HEAVY_TOP_Q400,
    PLATFORM_GRAVITY,
    PLATFORM_MASS,
    PLATFORM_Q100,
    floating_platform_simulation,
    heavy_top_model,
)

import kynemapy as kp
from kynemapy.linalg.sparse_lu import INFO_N_FACTOR, INFO_N_REFACTOR, new_lu_workspace
from kynemapy.linalg.sparsity import build_scatter, pattern
from kynemapy.engine.data import DENSE_MAX_DOFS


def ball_chain(n: int, duplicate: int | None = None) -> kp.Model:
    """n links of 1 m along +x joined by ball joints, the first to the ground."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    prev = kp.GROUND
    for i in range(n):
        node = b.add_node(position=(i + 0.5, 0.0, 0.0), velocity=(0.0, 0.1, 0.0, 0.0, 0.0, 0.0))
        b.add_mass(node, mass=1.0, inertia=(0.01, 0.1, 0.1))
        b.add_ball_joint(prev, node, point=(float(i), 0.0, 0.0))
        if i == duplicate:
            b.add_ball_joint(prev, node, point=(float(i), 0.0, 0.0))
        prev = node
    return b.build()


@pytest.mark.parametrize("exact", [False, True])
def test_sparse_solver_reproduces_kynema_heavy_top(exact: bool) -> None:
    """R1 (400 steps, Kynema's q to 1e-10) through the sparse LU, both tangents."""
    params = dataclasses.replace(HEAVY_TOP_PARAMS, solver="sparse", geometric_stiffness=exact)
    sim = kp.Simulation(heavy_top_model(), params)
    assert not sim.workspace.scatter.dense
    iterations = sim.advance(400)
    assert np.all(iterations == 3)
    np.testing.assert_allclose(sim.state.q[0], HEAVY_TOP_Q400, rtol=0.0, atol=1e-10)
    info = sim.workspace.lu.info
    assert info[INFO_N_FACTOR] == 1  # the reference factorization at the initial state
    assert info[INFO_N_REFACTOR] >= 1100  # nearly every one of the 1200 solves reuses its pivot sequence


def test_sparse_solver_reproduces_kynema_floating_platform() -> None:
    """R10 (101 steps with time-varying loads, q to 1e-12, Kynema's iteration counts) through the sparse LU."""
    dense_sim, platform = floating_platform_simulation()
    sim = kp.Simulation(dense_sim.model, dataclasses.replace(dense_sim.params, solver="sparse"))
    spring_force = 1907514.4912628897
    buoyancy = spring_force - PLATFORM_GRAVITY * PLATFORM_MASS
    iterations = []
    for i in range(101):
        t = i * 0.01
        s20 = math.sin(2.0 * math.pi / 20.0 * t)
        sim.set_load(
            platform,
            force=(0.0, 1e6 * s20, buoyancy + 0.5 * spring_force * s20),
            moment=(
                5.0e5 * math.sin(2.0 * math.pi / 15.0 * t),
                1.0e6 * math.sin(2.0 * math.pi / 30.0 * t),
                2.0e7 * math.sin(2.0 * math.pi / 60.0 * t),
            ),
        )
        iterations.append(sim.step().iterations)
    np.testing.assert_allclose(sim.state.q[platform], PLATFORM_Q100, rtol=0.0, atol=1e-12)
    assert {k: iterations.count(k) for k in set(iterations)} == {2: 65, 3: 36}


def test_slot_maps_place_every_entry_where_the_dense_assembly_does() -> None:
    """Assemble the same state both ways: the CSC values scattered to a dense matrix equal
    the dense matrix exactly, entry by entry (exact tangent: K^Φ blocks included)."""
    from kynemapy.engine.step import assemble

    model = ball_chain(4)
    sims = {}
    for solver in ("dense", "sparse"):
        params = kp.StepParameters(h=1e-3, rho_inf=0.5, geometric_stiffness=True, solver=solver)
        sims[solver] = kp.Simulation(model, params)
    sparse, dense = sims["sparse"], sims["dense"]
    dense.advance(3)
    for mine, theirs in zip(sparse.state, dense.state, strict=True):  # the same state for both
        mine[...] = theirs
    for sim in (dense, sparse):
        assemble.py_func(sim.model, sim.state, sim.inputs, sim.workspace, sim._coefficients)
    indptr, indices = pattern(model)
    n = model.n_dofs
    rebuilt = np.zeros((n, n))
    cols = np.repeat(np.arange(n), np.diff(indptr))
    rebuilt[indices, cols] = sparse.workspace.vals
    np.testing.assert_array_equal(rebuilt, dense.workspace.A)
    np.testing.assert_array_equal(sparse.workspace.b, dense.workspace.b)
    # nothing outside the pattern
    outside = np.ones((n, n), dtype=bool)
    outside[indices, cols] = False
    assert np.all(dense.workspace.A[outside] == 0.0)


def test_sparse_and_dense_chains_follow_the_reduced_reference() -> None:
    """A 12-link ball-joint chain (examples/pendulum_chain.py's model, 96 unknowns) through
    both solvers, exact tangent: every link's orientation after 0.2 s against the
    reduced-coordinate Kane reference (examples/_references.BallChain, DOP853 at 1e-10)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import _references as ref
    import pendulum_chain as pc

    n_links, h, n_steps = 12, 1e-3, 200
    model, chain, nodes, _ = pc.build(n_links)
    q_ref, _ = chain.solve(*pc.initial_conditions(n_links), np.array([0.0, h * n_steps]), rtol=1e-10, atol=1e-10)
    rot_ref = ref.quat_matrix(q_ref[-1])
    for solver in ("dense", "sparse"):
        params = kp.StepParameters(
            h=h, rho_inf=0.9, max_iter=20, atol=1e-10, rtol=1e-10, geometric_stiffness=True, solver=solver
        )
        sim = kp.Simulation(model, params)
        assert sim.workspace.scatter.dense == (solver == "dense")
        sim.advance(n_steps)
        errors = [
            float(ref.rotation_angle(ref.body_pose(model, sim.state.q, n)[1], rot_ref[i])) for i, n in enumerate(nodes)
        ]
        assert max(errors) < BALL_CHAIN_ORIENTATION_BOUND, (solver, max(errors))


#: rad; the time-discretization error at h = 1 ms over 0.2 s (measured 2.3e-4 for both solvers,
#: 5.8e-5 at h = 0.5 ms: second order) with a 3× margin
BALL_CHAIN_ORIENTATION_BOUND = 7e-4


def _without_reference(sim: kp.Simulation, capacity: tuple[int, int] | None = None) -> None:
    """Drop the reference factorization (every solve then factors afresh in the fallback)."""
    ws = sim.workspace
    n = sim.model.n_dofs
    fresh = new_lu_workspace(ws.scatter.indptr, ws.scatter.indices, n)
    fallback = new_lu_workspace(ws.scatter.indptr, ws.scatter.indices, n, capacity=capacity)
    sim._workspace = ws._replace(lu=fresh, lu_fallback=fallback)


def test_sparse_lu_growth_is_transparent() -> None:
    """Fallback factors with arrays far too small: the step that outgrows them is redone
    after growing, and the run equals one with ample arrays bit for bit."""
    model = ball_chain(20)
    params = kp.StepParameters(h=1e-3, rho_inf=0.9, solver="sparse")
    ref = kp.Simulation(model, params)
    _without_reference(ref)
    ref.advance(30)
    sim = kp.Simulation(model, params)
    _without_reference(sim, capacity=(8, 8))
    sim.advance(10)
    sim.step()
    sim.advance(19)
    assert sim.workspace.lu_fallback.li.shape[0] > 8  # it grew
    assert sim.workspace.lu_fallback.info[INFO_N_FACTOR] >= 30
    np.testing.assert_array_equal(sim.state.q, ref.state.q)
    np.testing.assert_array_equal(sim.state.lam, ref.state.lam)
    # and against Kynema's numbers: R1 with every solve factored afresh in arrays grown from 8 entries
    top = kp.Simulation(heavy_top_model(), dataclasses.replace(HEAVY_TOP_PARAMS, solver="sparse"))
    _without_reference(top, capacity=(8, 8))
    top.advance(400)
    np.testing.assert_allclose(top.state.q[0], HEAVY_TOP_Q400, rtol=0.0, atol=1e-10)


def test_sparse_solves_do_not_depend_on_the_run_history() -> None:
    """A simulation restored at step 15 into a fresh Simulation repeats steps 16-40 of an
    uninterrupted run bit for bit (the sparse refactorizations reuse the pivot sequence
    of the model's initial state, not of the run's last factorization)."""
    model = ball_chain(15)
    params = kp.StepParameters(h=2e-3, rho_inf=0.9, solver="sparse")
    full = kp.Simulation(model, params)
    full.advance(15)
    saved = full.save_state()
    full.advance(25)
    resumed = kp.Simulation(model, params)
    resumed.restore_state(saved)
    resumed.advance(25)
    for name, a, b in zip(kp.State._fields, resumed.state, full.state, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert full.workspace.lu.info[INFO_N_FACTOR] == 1  # the reference, factored once


def test_auto_solver_threshold() -> None:
    small = kp.Simulation(heavy_top_model(), HEAVY_TOP_PARAMS)
    assert small.model.n_dofs <= DENSE_MAX_DOFS and small.workspace.scatter.dense
    big = kp.Simulation(ball_chain(8), kp.StepParameters(h=1e-3))
    assert big.model.n_dofs > DENSE_MAX_DOFS and not big.workspace.scatter.dense
    assert big.workspace.A.shape == (0, 0)  # no n² matrix for large models
    with pytest.raises(ValueError, match="solver"):
        kp.StepParameters(h=1e-3, solver="cholesky")


def test_slot_tables_of_a_large_model_are_linear_in_size() -> None:
    """Pattern entries per body stay constant from 100 to 400 links (no dense blocks)."""
    per_body = []
    for n in (100, 400):
        model = ball_chain(n)
        indptr, _ = pattern(model)
        per_body.append(indptr[-1] / n)
        sc = build_scatter(model, dense=False)
        assert sc.mass.max() < indptr[-1] and sc.con_k.max() < indptr[-1]
    assert per_body[0] == pytest.approx(per_body[1], rel=0.02)


def test_redundancy_check_of_a_large_model_names_the_duplicates() -> None:
    """More than 600 constraint rows: the sparse rank test finds a duplicated ball joint
    in the middle of a 210-link chain and names both copies, and only them."""
    model = ball_chain(210, duplicate=150)
    with pytest.raises(kp.ModelError) as err:
        kp.Simulation(model, kp.StepParameters(h=1e-3))
    msg = str(err.value)
    assert "3 of the 633 constraint equations" in msg
    assert "constraint 150 (ball_joint, nodes 149 → 150)" in msg
    assert "constraint 151 (ball_joint, nodes 149 → 150)" in msg
    assert "constraint 149 " not in msg and "constraint 152 " not in msg
    # the same chain without the duplicate passes
    kp.Simulation(ball_chain(210), kp.StepParameters(h=1e-3))
