"""Runs of the constrained generalized-α engine (``kp.Simulation``) for the validation cases:
the models, and a rollout that records every step in compiled calls."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kynemapy.validation.reference import hat, matrix_to_quat, quat_multiply, quat_to_matrix

#: the equivalent top of the engine runs (see :func:`top_model`): mass [kg] and centre-of-mass
#: height above the pivot [m]; m η = 20 kg m (Simo–Wong / ABAQUS: M g l = 20 N m with g = 1)
TOP_EQUIVALENT_MASS = 400.0
TOP_EQUIVALENT_ETA = 0.05


@dataclass(frozen=True)
class EngineRun:
    """Every step of one engine run: t (n,), R (n, 3, 3) body-to-world, W (n, 3) body angular
    velocity [rad/s], x, v (n, 3) node position [m] and velocity [m/s], iterations (n − 1,)
    Newton iterations per step, wall time [s] of the stepping alone."""

    t: np.ndarray
    R: np.ndarray
    W: np.ndarray
    x: np.ndarray
    v: np.ndarray
    iterations: np.ndarray
    wall_time: float

    @property
    def omega(self) -> np.ndarray:
        """World angular velocity (n, 3) [rad/s]."""
        return np.einsum("nij,nj->ni", self.R, self.W)


def step_parameters(h: float, tol: float = 1e-10, rho_inf: float = 1.0):
    """ρ∞ = 1 (no numerical damping: ABAQUS's ALPHA = 0), Newton converged to ``tol``."""
    import kynemapy as kp

    return kp.StepParameters(h=h, rho_inf=rho_inf, max_iter=30, atol=tol, rtol=tol)


def top_model(inertia, R0: np.ndarray, W0, gravity: float = 1.0):
    """A top about a fixed point for the engine: one node AT THE PIVOT carrying the 6×6 mass
    matrix about the pivot, pinned by a spherical joint; returns ``(model, node)``.

    The Simo–Wong / ABAQUS top (J = diag(5, 5, 1) about the pivot, M g l = 20 N m with g = 1,
    l = 1) is not a physical body with m = 20 kg at l = 1 m: its inertia about the centre of
    mass would be J − m l²(I − e3 e3ᵀ) = diag(−15, −15, 1), and the builder requires a positive
    definite mass matrix.  The motion about the pivot depends only on J about the pivot and the
    gravity moment m g η, so m = 400 kg with η = 0.05 m (J_cm = diag(4, 4, 1)) turns exactly like
    it; only the pivot reaction differs, which no check uses.
    """
    import kynemapy as kp

    m, eta = TOP_EQUIVALENT_MASS, np.array([0.0, 0.0, TOP_EQUIVALENT_ETA])
    M = np.zeros((6, 6))
    M[:3, :3] = m * np.eye(3)
    M[:3, 3:] = m * hat(eta).T
    M[3:, :3] = m * hat(eta)
    M[3:, 3:] = np.diag(np.asarray(inertia, dtype=float))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    omega = np.asarray(R0) @ np.asarray(W0, dtype=float)  # the engine takes the world ω
    node = b.add_node(position=(0, 0, 0), orientation=matrix_to_quat(R0), velocity=(0, 0, 0, *omega))
    b.add_mass(node, mass_matrix=M)
    b.add_spherical_joint(node, point=(0.0, 0.0, 0.0))
    return b.build(), node


def free_body_model(mass: float, inertia, R0: np.ndarray, W0, v0=(0.0, 0.0, 0.0), gravity=(0.0, 0.0, 0.0)):
    """One free body, node at its centre of mass (origin), no constraint; returns ``(model, node)``."""
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=gravity)
    omega = np.asarray(R0) @ np.asarray(W0, dtype=float)
    node = b.add_node(position=(0, 0, 0), orientation=matrix_to_quat(R0), velocity=(*v0, *omega))
    b.add_mass(node, mass=mass, inertia=inertia)
    return b.build(), node


def rollout(model, node: int, params, n_steps: int) -> EngineRun:
    """``n_steps`` steps from consistent initial accelerations, every step recorded
    (:meth:`kynemapy.Simulation.rollout`: compiled calls, or plain Python with
    ``KYNEMAPY_DISABLE_JIT=1``)."""
    import time

    import kynemapy as kp

    sim = kp.Simulation(model, params)
    start = time.perf_counter()
    try:
        rows = sim.rollout(n_steps, every=1)
    except kp.ConvergenceError as exc:
        raise kp.ConvergenceError(
            f"validation engine run: step {exc.step + 1} did not converge (h = {params.h}): {exc}",
            exc.time,
            exc.step,
            exc.errors,
            exc.status,
        ) from exc
    wall = time.perf_counter() - start
    q = rows["q"][:, node]
    v = rows["v"][:, node]
    t = rows["time"]
    iterations = rows["iterations"][1:]  # row 0 is the initial state
    r0 = np.asarray(model.x0[node, 3:])
    R = quat_to_matrix(quat_multiply(q[:, 3:], np.broadcast_to(r0, (len(q), 4))))
    W = np.einsum("nji,nj->ni", R, v[:, 3:])
    x = np.asarray(model.x0[node, :3]) + q[:, :3]
    return EngineRun(t, R, W, x, v[:, :3].copy(), iterations, wall)
