"""The torque-free symmetric rigid body in closed form (Goldstein; ABAQUS Benchmarks 1.3.6)."""

from __future__ import annotations

import numpy as np


def _rodrigues(w: np.ndarray) -> np.ndarray:
    """exp(hat(w)) for (n, 3) rotation vectors."""
    phi = np.linalg.norm(w, axis=1)
    K = np.zeros((len(w), 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    K -= K.transpose(0, 2, 1)
    safe = np.where(phi > 0, phi, 1.0)
    a = np.where(phi > 0, np.sin(phi) / safe, 1.0)
    b = np.where(phi > 0, (1 - np.cos(phi)) / safe**2, 0.5)
    return np.eye(3) + a[:, None, None] * K + b[:, None, None] * K @ K


def symmetric_free_body(inertia, R0: np.ndarray, W0, t) -> tuple[np.ndarray, np.ndarray]:
    """Rotation and body angular velocity of a torque-free body with I₁₁ = I₂₂.

    With L = R₀ J W₀ (world angular momentum, constant) and Ω = W₀₃ (I₃₃ − I₁₁)/I₁₁:
    ``R(t) = exp(t L̂/I₁₁) R₀ exp(−Ωt ê₃)`` and ``W(t) = (W₁ cos Ωt − W₂ sin Ωt,
    W₁ sin Ωt + W₂ cos Ωt, W₀₃)`` in body axes; the world angular velocity is
    ``w(t) = R W = L/I₁₁ − Ω R(t) e₃``.

    Parameters
    ----------
    inertia : (3,) array_like of float [kg m²]
        Principal moments of inertia ``(I₁₁, I₂₂, I₃₃)``, with ``inertia[0] == inertia[1]``.
    R0 : (3, 3) array_like of float
        Initial body-to-world rotation matrix.
    W0 : (3,) array_like of float [rad/s]
        Initial body angular velocity, body frame.
    t : float or (n,) array_like of float [s]
        Times measured from the initial state.

    Returns
    -------
    R : (n, 3, 3) ndarray of float
        Body-to-world rotation matrices at the times ``t``.
    W : (n, 3) ndarray of float
        Body angular velocities [rad/s], body frame.

    Raises
    ------
    ValueError
        ``inertia[0] != inertia[1]``.
    """
    J = np.asarray(inertia, dtype=float)
    if J[0] != J[1]:
        raise ValueError(f"symmetric_free_body needs inertia[0] == inertia[1], got {J}")
    R0 = np.asarray(R0, dtype=float)
    W0 = np.asarray(W0, dtype=float)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    L = R0 @ (J * W0)
    big_omega = W0[2] * (J[2] - J[0]) / J[0]
    R = _rodrigues(np.outer(t, L / J[0])) @ R0 @ _rodrigues(np.outer(-big_omega * t, [0.0, 0.0, 1.0]))
    c, s = np.cos(big_omega * t), np.sin(big_omega * t)
    W = np.stack([W0[0] * c - W0[1] * s, W0[0] * s + W0[1] * c, np.full_like(t, W0[2])], 1)
    return R, W
