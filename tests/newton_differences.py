"""The engine's iteration matrix against central differences of its residual (the exact-tangent
checks of tests/verification/test_drives.py and test_joint_limits.py).

The differences are taken along each column's Newton update, independently of the engine's
update code: Δq += ε/h, v += γ′ε, v̇ += β′ε, then q = q_prev ⊕ hΔq with the quaternion exponential
and product written here in numpy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.engine.api import task
from kynemapy.engine.entry import LINEARIZE
from kynemapy.engine.params import P_BETA_PRIME, P_CONDITIONER, P_GAMMA_PRIME, P_H


def quat_exp(p: np.ndarray) -> np.ndarray:
    """exp of the rotation vector ``p`` (3,) as a unit quaternion (w, x, y, z)."""
    angle = float(np.linalg.norm(p))
    if angle == 0.0:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * p / angle])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The quaternion product a ⊗ b (w, x, y, z)."""
    return np.concatenate([[a[0] * b[0] - a[1:] @ b[1:]], a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])])


def matrix_and_differences(
    model: kp.Model,
    params: kp.StepParameters,
    state: kp.State | None = None,
    steps: int = 7,
    projected: bool = True,
    eps: float = 1e-6,
) -> tuple[np.ndarray, np.ndarray, kp.State]:
    """The engine's iteration matrix (node rows ÷ the conditioner c) on the node columns at a
    moving state (``steps`` steps in, or ``state``: Δq ≠ 0, so 𝒯 ≠ I), central differences
    (``eps`` ε = 1e-6) of the residual along each column's Newton update, and the state.  ``projected``:
    the model's initial velocities violate its constraints (a warning says they are projected)."""
    if projected:
        with pytest.warns(UserWarning, match="projected"):
            sim = kp.Simulation(model, params)
    else:
        sim = kp.Simulation(model, params)
    if state is None:
        sim.advance(steps)
    else:
        sim.state.assign(state)
    p = np.array(sim.coefficients)
    base = sim.state.copy()
    task(sim.data, p, LINEARIZE)
    nsys = model.n_system_dofs
    a = sim.workspace.matrix()[:, :nsys].copy()
    a[:nsys] /= p[P_CONDITIONER]
    h, gp, bp = p[P_H], p[P_GAMMA_PRIME], p[P_BETA_PRIME]

    def residual(column: int, eps: float) -> np.ndarray:
        st = base.copy()
        for n in range(model.n_nodes):
            k = column - int(model.node_map[n])
            if 0 <= k < model.node_dofs[n]:
                st.q_delta[n, k] += eps / h
                st.v[n, k] += gp * eps
                st.vd[n, k] += bp * eps
            st.q[n, :3] = st.q_prev[n, :3] + h * st.q_delta[n, :3]
            st.q[n, 3:] = quat_mul(quat_exp(h * st.q_delta[n, 3:]), st.q_prev[n, 3:])
        sim.state.assign(st)
        task(sim.data, p, LINEARIZE)
        return sim.workspace.b.copy()

    fd = np.column_stack([(residual(j, eps) - residual(j, -eps)) / (2 * eps) for j in range(nsys)])
    return a, fd, base
