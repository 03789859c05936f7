"""Parts of the generalized-α step-size control (:mod:`kynemapy.run.stepcontrol`): the
coefficient vector of a new step size against its closed form, and the projection of the error estimate off the
constraint directions, its dense and sparse solves against a least-squares solution of the
same matrix read by scipy."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import kynemapy as kp
from kynemapy.engine.params import P_BETA_PRIME, P_CONDITIONER, P_GAMMA_PRIME, P_H, P_SIZE, with_step
from kynemapy.run.stepcontrol import ConstraintProjector, dof_mask


@pytest.mark.parametrize(
    "params",
    [
        kp.StepParameters(h=1e-3, rho_inf=0.9),
        kp.StepParameters(h=2e-2, rho_inf=0.0, geometric_stiffness=True, predictor="last"),
        kp.StepParameters(h=0.5, rho_inf=0.5, dynamic=False),
    ],
)
def test_with_step_gives_the_closed_form_coefficients_of_that_h(params: kp.StepParameters) -> None:
    """``with_step(p, h)`` sets h, γ′ = γ/(hβ), β′ = (1 − α_m)/(h²β(1 − α_f)) (0 in statics) and
    c = βh² from Chung & Hulbert's α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1), γ = ½ + α_f − α_m,
    β = ¼(γ + ½)², written out here (1e-14 relative), leaves every other entry as it was and ``p``
    itself unchanged, and equals the vector of ``replace(params, h=h)``."""
    rho = params.rho_inf
    alpha_m, alpha_f = (2.0 * rho - 1.0) / (rho + 1.0), rho / (rho + 1.0)
    gamma = 0.5 + alpha_f - alpha_m
    beta = 0.25 * (gamma + 0.5) ** 2
    p = params.coefficients
    before = p.copy()
    changed = [P_H, P_GAMMA_PRIME, P_BETA_PRIME, P_CONDITIONER]
    others = [k for k in range(P_SIZE) if k not in changed]
    for h in (1e-6, 3.7e-4, params.h, 0.25):
        q = with_step(p, h)
        dynamic = params.dynamic
        expected = [
            h,
            gamma / (h * beta) if dynamic else 0.0,
            (1.0 - alpha_m) / (h * h * beta * (1.0 - alpha_f)) if dynamic else 0.0,
            beta * h * h,
        ]
        np.testing.assert_allclose(q[changed], expected, rtol=1e-14, atol=0.0)
        np.testing.assert_array_equal(q[others], p[others])
        np.testing.assert_array_equal(q, dataclasses.replace(params, h=h).coefficients)
    np.testing.assert_array_equal(p, before)


def _double_four_bar() -> tuple[kp.Simulation, np.ndarray]:
    from kynemapy.validation import double_four_bar as d

    model, _ = d.simulation_model()
    params = kp.StepParameters(h=5e-3, rho_inf=d.RHO_INF, max_iter=20, atol=d.TOL, rtol=d.TOL, convergence="roundoff")
    sim = kp.Simulation(model, params)
    sim.advance(10)
    rng = np.random.default_rng(7)
    e = np.where(dof_mask(model.node_dofs), rng.standard_normal((model.n_nodes, 6)), 0.0)
    return sim, e


def _newton_matrix(sim: kp.Simulation, n: int) -> np.ndarray:
    """The matrix the last projection solved, read from the workspace by scipy (dense)."""
    w = sim.workspace
    nnz = int(w.indptr[n])
    shape = (n, n)
    return sp.csc_matrix((w.vals[:nnz].copy(), w.indices[:nnz].copy(), w.indptr[: n + 1].copy()), shape=shape).toarray()


def _assert_least_kinetic_energy_projection(sim, projector, e: np.ndarray, projected: np.ndarray) -> None:
    """``projected`` is the least kinetic-energy projection of ``e``, checked on the Newton matrix
    read by scipy: ``B e' = 0`` (1e-12) and ``M (e' − e)`` in the range of Bᵀ (1e-12 relative),
    and ``e`` had a part to remove (the check is not passed by ``e`` returned as it was)."""
    n, nsys = projector.n, projector.nsys
    matrix = _newton_matrix(sim, n)
    m, b = matrix[:nsys, :nsys], matrix[nsys:, :nsys]

    def system(v: np.ndarray) -> np.ndarray:
        x = np.zeros(nsys)
        x[projector._system] = v.reshape(-1)[projector._flat]
        return x

    x, x0 = system(projected), system(e)
    assert np.abs(b @ x).max() <= 1e-12 * max(1.0, np.abs(b @ x0).max())
    change = m @ (x - x0)
    mu = np.linalg.lstsq(b.T, change, rcond=None)[0]
    assert np.abs(b.T @ mu - change).max() <= 1e-12 * np.abs(change).max()
    assert np.abs(change).max() > 1e-3


def test_the_projection_is_the_least_kinetic_energy_one_dense_and_sparse(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the double four-bar (30 node DOFs, 29 multipliers) the projected error satisfies
    ``B e' = 0`` (1e-12) and its change is ``M⁻¹ Bᵀ μ`` for some μ (``M (e' − e)`` in the range
    of Bᵀ, 1e-12 relative): the projection of ``[M Bᵀ; B 0]``.  Solved as a dense matrix (the
    default at this size) and by the sparse LU (``DENSE_LIMIT = 0``) it agrees to 1e-12, and a
    second call with the same pattern gives the same result as a fresh projector's."""
    sim, e = _double_four_bar()
    projector = ConstraintProjector(sim)
    n, nsys = projector.n, projector.nsys
    assert n <= ConstraintProjector.DENSE_LIMIT and n > nsys
    dense = projector.project(e)
    again = projector.project(e)
    np.testing.assert_array_equal(again, dense)
    _assert_least_kinetic_energy_projection(sim, projector, e, dense)
    monkeypatch.setattr(ConstraintProjector, "DENSE_LIMIT", 0)
    sparse = ConstraintProjector(sim).project(e)
    np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-12)


def test_a_singular_matrix_is_solved_by_least_squares(monkeypatch: pytest.MonkeyPatch) -> None:
    """A matrix with a repeated constraint row and column (singular: the LU fails) and a
    consistent right-hand side is solved by least squares on both paths: the solution is finite,
    solves the system (1e-10) and is numpy's minimum-norm one (1e-8)."""
    sim, _ = _double_four_bar()
    projector = ConstraintProjector(sim)
    n = projector.n
    rhs = np.random.default_rng(3).standard_normal(n)
    matrix = _newton_matrix(sim, n)
    matrix[-1, :] = matrix[-2, :]  # the last row repeats the one before: singular
    matrix[:, -1] = matrix[:, -2]
    csc = sp.csc_matrix(matrix)
    rows, indptr, vals = csc.indices.astype(np.int64), csc.indptr.astype(np.int64), csc.data
    cols = np.repeat(np.arange(n), np.diff(indptr))
    rhs[-1] = rhs[-2]  # consistent
    expected = np.linalg.lstsq(matrix, rhs, rcond=None)[0]
    for limit in (ConstraintProjector.DENSE_LIMIT, 0):
        monkeypatch.setattr(ConstraintProjector, "DENSE_LIMIT", limit)
        solution = projector._solve(n, rows, rows * n + cols, vals, indptr, rhs)
        assert np.all(np.isfinite(solution))
        np.testing.assert_allclose(matrix @ solution, rhs, rtol=0, atol=1e-10)
        np.testing.assert_allclose(solution, expected, rtol=0, atol=1e-8)


def test_a_projection_the_lu_finds_singular_falls_back_to_least_squares(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the compiled projection meets a zero pivot (redundant constraints), ``project`` solves
    the same system by least squares instead: here every compiled solve reports a zero pivot, and
    the result is still the least kinetic-energy projection, checked on the matrix read by scipy
    as above: ``B e' = 0`` (1e-12) and ``M (e' − e)`` in the range of Bᵀ (1e-12 relative)."""
    from kynemapy.linalg.dense import SOLVE_SINGULAR
    from kynemapy.run import stepcontrol

    sim, e = _double_four_bar()
    monkeypatch.setattr(stepcontrol, "project_dense", lambda *args: SOLVE_SINGULAR)
    projector = ConstraintProjector(sim)
    fallback = projector.project(e)
    _assert_least_kinetic_energy_projection(sim, projector, e, fallback)


def test_the_compiled_projection_leaves_an_error_with_a_non_finite_matrix_as_it_was() -> None:
    """A matrix entry that is not finite: ``project_dense`` reports NOT_FINITE and leaves ``e`` as
    it was (the controller then measures the error unprojected, as with a non-finite solution)."""
    from kynemapy.run.local_error import NOT_FINITE, project_dense

    n, nsys = 3, 2  # M = diag(2, 4), B = [1, 1]
    indptr = np.array([0, 2, 4, 6], dtype=np.int64)
    indices = np.array([0, 2, 1, 2, 0, 1], dtype=np.int64)
    vals = np.array([2.0, 1.0, 4.0, 1.0, 1.0, 1.0])
    flat, system = np.array([0, 1], dtype=np.int64), np.array([0, 1], dtype=np.int64)
    scratch = (np.zeros((n, n)), np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n))
    e = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    assert project_dense(indptr, indices, vals, nsys, flat, system, e, *scratch) == 0
    # Δ = −M⁻¹Bᵀ (B M⁻¹ Bᵀ)⁻¹ B e = −(1/2, 1/4) · 2/(3/4) = (−4/3, −2/3): e' = (−1/3, 1/3), B e' = 0
    np.testing.assert_allclose(e[:2], [-1.0 / 3.0, 1.0 / 3.0], rtol=1e-15)
    vals[3] = np.nan
    e = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    assert project_dense(indptr, indices, vals, nsys, flat, system, e, *scratch) == NOT_FINITE
    np.testing.assert_array_equal(e, [1.0, 1.0, 0.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("use_velocity", [False, True])
def test_the_error_norm_is_the_weighted_rms_over_the_node_dofs(use_velocity: bool) -> None:
    """``error_norm`` (one compiled call) against its formula written out in numpy: weights
    ``atol + rtol max(|q0|, |q1|)`` on displacements, ``atol + rtol`` on rotations,
    ``atol + rtol max(|v0|, |v1|)`` on velocities, the mean over the DOFs each node has (a node
    of 3 DOFs and one of none among them), 1e-14 relative; 0 where no node has DOFs."""
    from kynemapy.run.stepcontrol import error_norm

    rng = np.random.default_rng(11)
    node_dofs = np.array([6, 3, 0, 6], dtype=np.int64)
    q0, q1 = rng.standard_normal((4, 7)), rng.standard_normal((4, 7))
    v0, v1 = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    position, velocity = 1e-4 * rng.standard_normal((4, 6)), 1e-3 * rng.standard_normal((4, 6))
    control = kp.StepControl(rtol=1e-3, atol=1e-5, velocity_error=use_velocity)
    mask = dof_mask(node_dofs)
    scale = np.ones((4, 6))
    scale[:, :3] = np.maximum(np.abs(q0[:, :3]), np.abs(q1[:, :3]))
    expected = np.mean((position / (1e-5 + 1e-3 * scale))[mask] ** 2)
    if use_velocity:
        expected += np.mean((velocity / (1e-5 + 1e-3 * np.maximum(np.abs(v0), np.abs(v1))))[mask] ** 2)
    norm = error_norm(control, node_dofs, q0, q1, v0, v1, position, velocity)
    assert norm == pytest.approx(np.sqrt(expected), rel=1e-14)
    assert error_norm(control, np.zeros(4, dtype=np.int64), q0, q1, v0, v1, position, velocity) == 0.0
