"""Independent references for the validation cases: numpy/scipy only, no kynemapy kernel.

* :func:`rigid_body_reference`: DOP853 (scipy) on the singularity-free quaternion form
  ``q' = ½ q ⊗ (0, W)``, ``J W' = T(R) − W × J W`` at tight tolerances, with an optional constant
  world force at a body point (the heavy tops).
* Rotation helpers written out here (Rodrigues, quaternions, geodesic angle) so that no
  reference goes through kynemapy's own math.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

from kynemapy.math.rotations import rotation_matrices


def hat(w: np.ndarray) -> np.ndarray:
    """Skew matrix of a (3,) vector."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def rodrigues(w) -> np.ndarray:
    """exp(hat(w)) for (3,) or (n, 3) rotation vectors [rad] (closed form)."""
    single = np.ndim(w) == 1
    w = np.atleast_2d(np.asarray(w, dtype=float))
    phi = np.linalg.norm(w, axis=1)
    K = np.zeros((len(w), 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    K -= K.transpose(0, 2, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(phi > 0, np.sin(phi) / np.where(phi > 0, phi, 1.0), 1.0)
        b = np.where(phi > 0, (1 - np.cos(phi)) / np.where(phi > 0, phi, 1.0) ** 2, 0.5)
    out = np.eye(3) + a[:, None, None] * K + b[:, None, None] * K @ K
    return out[0] if single else out


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(..., 4) quaternions (w, x, y, z), normalised here -> (..., 3, 3) body-to-world rotations."""
    q = np.asarray(q, dtype=float)
    return rotation_matrices(q / np.linalg.norm(q, axis=-1, keepdims=True))


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """(3, 3) rotation -> unit quaternion (w, x, y, z) with w >= 0 (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    cands = [tr, R[0, 0], R[1, 1], R[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = np.array([(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s])
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = np.array([(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s])
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = np.array([(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s])
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def quat_multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product of (..., 4) quaternions (w, x, y, z)."""
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    return np.concatenate([pw * qw - np.sum(pv * qv, -1, keepdims=True), pw * qv + qw * pv + np.cross(pv, qv)], -1)


def rotation_angle(Ra: np.ndarray, Rb: np.ndarray) -> np.ndarray:
    """Geodesic angle [rad] between stacks of rotations, ``angle(Raᵀ Rb)`` (accurate when small)."""
    M = np.einsum("...ji,...jk->...ik", Ra, Rb)
    s = 0.5 * np.linalg.norm(
        np.stack([M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0], M[..., 1, 0] - M[..., 0, 1]], -1), axis=-1
    )
    c = 0.5 * (np.trace(M, axis1=-2, axis2=-1) - 1.0)
    return np.arctan2(s, c)


def rigid_body_reference(
    inertia,
    R0: np.ndarray,
    W0,
    t_end: float,
    spatial_force=None,
    arm=None,
    rtol: float = 1e-12,
    atol: float = 1e-12,
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """DOP853 solution of one rigid body about a fixed point (or its centre of mass).

    inertia : (3,) principal moments [kg m²]; R0 : (3, 3) body-to-world rotation; W0 : (3,) body
    angular velocity [rad/s]; optional torque from the constant world force ``spatial_force`` [N]
    at the body point ``arm`` [m] (spatial torque ``(R arm) × f``).

    Returns ``at(t) -> (R (n, 3, 3), W (n, 3))`` (dense output of the adaptive solution).
    """
    I1, I2, I3 = (float(v) for v in inertia)
    fx, fy, fz = (0.0, 0.0, 0.0) if spatial_force is None else (float(v) for v in spatial_force)
    ax, ay, az = (0.0, 0.0, 0.0) if arm is None else (float(v) for v in arm)

    def rhs(_t, y):
        w, x, yq, z, W1, W2, W3 = (float(v) for v in y)
        n2 = w * w + x * x + yq * yq + z * z
        r00 = (w * w + x * x - yq * yq - z * z) / n2
        r01 = 2 * (x * yq - w * z) / n2
        r02 = 2 * (x * z + w * yq) / n2
        r10 = 2 * (x * yq + w * z) / n2
        r11 = (w * w - x * x + yq * yq - z * z) / n2
        r12 = 2 * (yq * z - w * x) / n2
        r20 = 2 * (x * z - w * yq) / n2
        r21 = 2 * (yq * z + w * x) / n2
        r22 = (w * w - x * x - yq * yq + z * z) / n2
        px = r00 * ax + r01 * ay + r02 * az
        py = r10 * ax + r11 * ay + r12 * az
        pz = r20 * ax + r21 * ay + r22 * az
        tx, ty, tz = py * fz - pz * fy, pz * fx - px * fz, px * fy - py * fx
        T1 = r00 * tx + r10 * ty + r20 * tz
        T2 = r01 * tx + r11 * ty + r21 * tz
        T3 = r02 * tx + r12 * ty + r22 * tz
        return [
            0.5 * (-x * W1 - yq * W2 - z * W3),
            0.5 * (w * W1 + yq * W3 - z * W2),
            0.5 * (w * W2 + z * W1 - x * W3),
            0.5 * (w * W3 + x * W2 - yq * W1),
            (T1 - (W2 * I3 * W3 - W3 * I2 * W2)) / I1,
            (T2 - (W3 * I1 * W1 - W1 * I3 * W3)) / I2,
            (T3 - (W1 * I2 * W2 - W2 * I1 * W1)) / I3,
        ]

    y0 = [*matrix_to_quat(R0), *np.asarray(W0, dtype=float)]
    sol = solve_ivp(rhs, (0.0, float(t_end)), y0, method="DOP853", rtol=rtol, atol=atol, dense_output=True)
    if not sol.success:  # pragma: no cover - defensive
        raise RuntimeError(f"reference integration failed: {sol.message}")

    def at(t) -> tuple[np.ndarray, np.ndarray]:
        y = sol.sol(np.atleast_1d(np.asarray(t, dtype=float)))
        return quat_to_matrix(y[:4].T), y[4:].T.copy()

    return at
