"""Static steps (``StepParameters(dynamic=False)``) and Kynema's load bisection.

A node on a pre-tensioned linear spring from a fixed node, loaded across the spring: the
equilibrium turns the spring by 90° onto the load, at the closed-form length l0 + F/k.
Newton from the unloaded configuration needs 6 iterations at the full load; with 4 it
fails, and the load bisection (``static_load_retries``) reaches the same equilibrium.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp

L, L0, K, F = 1.0, 0.5, 100.0, 30.0  # m, m, N/m, N


def spring_model() -> tuple[kp.Model, int]:
    b = kp.ModelBuilder()
    anchor = b.add_node(position=(0, 0, 0))
    node = b.add_node(position=(L, 0, 0))
    b.add_spring(anchor, node, stiffness=K, undeformed_length=L0)
    b.add_fixed_bc_3dof(anchor)
    return b.build(), node


def static_sim(max_iter: int, retries: int) -> tuple[kp.Simulation, int]:
    model, node = spring_model()
    params = kp.StepParameters(
        h=1.0, dynamic=False, geometric_stiffness=True, max_iter=max_iter, static_load_retries=retries,
        atol=1e-10, rtol=1e-8,
    )  # fmt: skip
    sim = kp.Simulation(model, params, consistent_initial_accelerations=False)
    sim.set_load(node, force=(0.0, F, 0.0))
    return sim, node


def position(sim: kp.Simulation, node: int) -> np.ndarray:
    return sim.model.x0[node, :3] + sim.state.q[node, :3]


def test_static_step_reaches_the_closed_form_equilibrium() -> None:
    sim, node = static_sim(max_iter=10, retries=1)
    info = sim.step()
    assert info.converged
    np.testing.assert_allclose(position(sim, node), [0.0, L0 + F / K, 0.0], atol=1e-9)


def test_without_bisection_a_hard_static_step_fails_and_leaves_the_state_alone() -> None:
    sim, node = static_sim(max_iter=4, retries=1)
    before = sim.save_state()
    with pytest.raises(kp.ConvergenceError):
        sim.step()
    for now, then in zip(sim.state, before, strict=True):
        np.testing.assert_array_equal(now, then)
    np.testing.assert_array_equal(sim.inputs.f[node], [0.0, F, 0.0, 0.0, 0.0, 0.0])  # loads as given


def test_load_bisection_reaches_the_equilibrium_the_full_load_misses() -> None:
    sim, node = static_sim(max_iter=4, retries=20)
    info = sim.step()
    assert info.converged
    assert info.iterations > 4  # several Newton solves: partial loads, then the full one
    np.testing.assert_allclose(position(sim, node), [0.0, L0 + F / K, 0.0], atol=1e-9)
    np.testing.assert_array_equal(sim.inputs.f[node], [0.0, F, 0.0, 0.0, 0.0, 0.0])  # loads restored
    assert sim.step_count == 1 and sim.time == 1.0
