"""Independent high-accuracy reference solutions for the kynemapy test-suite.

This module deliberately depends on numpy and scipy only (it never imports
kynemapy), so that it can serve as an independent oracle for the package.

Conventions
-----------
* Quaternions are stored as ``(w, x, y, z)`` (scalar first) and follow the
  Hamilton convention, ``i*j = k``.
* ``R(q)`` is the *active* rotation matrix mapping body-frame vectors to the
  world frame: ``a_world = R(q) @ a_body``.
* ``W`` always denotes the angular velocity expressed in the *body* frame
  (rad/s); the world-frame angular velocity is ``R(q) @ W``.
* Quaternion kinematics: ``dq/dt = 0.5 * q (x) (0, W)``.
* SI units throughout (m, kg, s, rad, N, J).

Reference problems
------------------
1. The Kynema heavy top: a rigid body spinning about a fixed pivot under
   gravity, integrated in reduced (about-the-pivot) coordinates
   (:func:`heavy_top_reference`, :func:`heavy_top_solution`).
2. The Gazebo "Boxes" benchmark: a free-floating box whose centre of mass
   follows a ballistic trajectory (:func:`ballistic_com`) while its attitude
   obeys the torque-free Euler equations (:func:`free_rigid_body_reference`).
3. Energy and momentum of a model's rigid bodies per output row, in vectorised
   numpy (:func:`model_energy_and_momentum`): the twin of the compiled kernel.

All ODEs are integrated with ``scipy.integrate.solve_ivp(method="DOP853")`` at
tight tolerances; the right-hand sides are written with plain Python floats
because numpy's per-call overhead dominates for 7-dimensional states.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.integrate import solve_ivp

FloatArray = NDArray[np.float64]

__all__ = [
    "BOXES_COMPLEX",
    "BOXES_DURATION",
    "BOXES_MASS",
    "BOXES_SIMPLE",
    "BOXES_SIZE",
    "HEAVY_TOP_CENTROIDAL_INERTIA",
    "HEAVY_TOP_COM",
    "HEAVY_TOP_GRAVITY",
    "HEAVY_TOP_MASS",
    "HEAVY_TOP_OMEGA0",
    "BoxesScenario",
    "ballistic_com",
    "boxes_inertia",
    "free_rigid_body_reference",
    "heavy_top_energy",
    "heavy_top_pivot_inertia",
    "heavy_top_reference",
    "heavy_top_solution",
    "heavy_top_vertical_angular_momentum",
    "quat_multiply",
    "quat_to_rotation_matrix",
    "rigid_body_invariants",
]

# ---------------------------------------------------------------------------
# Quaternion helpers
# ---------------------------------------------------------------------------


def quat_multiply(p: ArrayLike, q: ArrayLike) -> FloatArray:
    """Hamilton product ``p (x) q`` of quaternions stored as ``(w, x, y, z)``.

    Parameters
    ----------
    p, q
        Quaternions, shape ``(..., 4)``; broadcast against each other.

    Returns
    -------
    numpy.ndarray
        The product, shape ``(..., 4)``.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)
    v = pw * qv + qw * pv + np.cross(pv, qv)
    return np.concatenate([w, v], axis=-1)


def quat_to_rotation_matrix(q: ArrayLike) -> FloatArray:
    """Active (body -> world) rotation matrix of a unit quaternion.

    Parameters
    ----------
    q
        Quaternion(s) ``(w, x, y, z)``, shape ``(..., 4)``. They are normalised
        before use, so a slightly non-unit input still yields an orthogonal
        matrix.

    Returns
    -------
    numpy.ndarray
        Rotation matrices, shape ``(..., 3, 3)``, with
        ``a_world = R @ a_body``.
    """
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    rot = np.empty((*q.shape[:-1], 3, 3))
    rot[..., 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    rot[..., 0, 1] = 2.0 * (x * y - w * z)
    rot[..., 0, 2] = 2.0 * (x * z + w * y)
    rot[..., 1, 0] = 2.0 * (x * y + w * z)
    rot[..., 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    rot[..., 1, 2] = 2.0 * (y * z - w * x)
    rot[..., 2, 0] = 2.0 * (x * z - w * y)
    rot[..., 2, 1] = 2.0 * (y * z + w * x)
    rot[..., 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return rot


def rotation_quaternion(phi: ArrayLike) -> FloatArray:
    """Exponential map of a rotation vector ``phi`` (3,) [rad]: the quaternion (w, x, y, z)
    ``(cos(θ/2), sin(θ/2)/θ · phi)``, θ = |phi| (the vector part ``phi/2`` below θ = 1e-12)."""
    p0, p1, p2 = (float(x) for x in phi)
    theta = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    s = math.sin(theta / 2.0) / theta if theta >= 1.0e-12 else 0.5
    return np.array([math.cos(theta / 2.0), p0 * s, p1 * s, p2 * s])


def random_beam_state(nn: int, relative_rotation: float, seed: int = 5) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A displaced state of ``nn`` beam nodes for tangent checks: q (nn, 7) with displacements of
    about 5 cm and rotations that differ from node to node by about ``relative_rotation`` rad
    around a common one; velocities and accelerations v, vd (nn, 6) of about 0.3 (seeded)."""
    rng = np.random.default_rng(seed)
    q = np.zeros((nn, 7))
    q[:, :3] = 0.05 * rng.normal(size=(nn, 3))
    base = rotation_quaternion((0.3, -0.2, 0.5))
    for i in range(nn):
        q[i, 3:7] = quat_multiply(rotation_quaternion(relative_rotation * rng.normal(size=3)), base)
    return q, 0.3 * rng.normal(size=(nn, 6)), 0.3 * rng.normal(size=(nn, 6))


def section_mass(m: float, eta: ArrayLike, rho: ArrayLike) -> FloatArray:
    """Sectional (or rigid-body) mass matrix ``[[m I, (m η̃)ᵀ], [m η̃, ρ]]`` (6, 6): mass ``m``,
    centre-of-mass offset ``eta`` (3,), rotational inertia ``rho`` (3, 3) about the reference point."""
    e = np.asarray(eta, dtype=float)
    et = np.array([[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = m * np.eye(3)
    out[:3, 3:] = (m * et).T
    out[3:, :3] = m * et
    out[3:, 3:] = rho
    return out


# ---------------------------------------------------------------------------
# Generic rigid body about a fixed point (or about its CM)
# ---------------------------------------------------------------------------


def _check_times(times: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Validate output times and return ``(times, unique_sorted, inverse)``.

    ``times`` must be a finite, non-negative 1-D array of shape ``(n,)``;
    any order and repeated entries are allowed.
    """
    t = np.asarray(times, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"times must be a 1-D array, got shape {t.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0.0):
        raise ValueError("times must be finite and non-negative")
    unique, inverse = np.unique(t, return_inverse=True)
    return t, unique, inverse


def _rigid_body_rhs(
    inertia: FloatArray,
    torque: Callable[[float, float, float, float], tuple[float, float, float]],
) -> Callable[[float, FloatArray], list[float]]:
    """Build the RHS of ``q' = q (x) (0, W) / 2``, ``J W' = (J W) x W + T``.

    Parameters
    ----------
    inertia
        Inertia tensor ``J`` in the body frame (kg m^2), shape ``(3, 3)``.
    torque
        ``torque(w, x, y, z) -> (Tx, Ty, Tz)``: body-frame torque (N m) as a
        function of the (possibly slightly non-unit) quaternion components.

    Returns
    -------
    callable
        ``f(t, s)`` for the state ``s = (qw, qx, qy, qz, Wx, Wy, Wz)``.
    """
    j = [[float(v) for v in row] for row in inertia]
    ji = [[float(v) for v in row] for row in np.linalg.inv(inertia)]
    (j00, j01, j02), (j10, j11, j12), (j20, j21, j22) = j
    (i00, i01, i02), (i10, i11, i12), (i20, i21, i22) = ji

    def rhs(_t: float, s: FloatArray) -> list[float]:
        w, x, y, z, a, b, c = (float(v) for v in s)
        # angular momentum in the body frame, L = J W
        l1 = j00 * a + j01 * b + j02 * c
        l2 = j10 * a + j11 * b + j12 * c
        l3 = j20 * a + j21 * b + j22 * c
        t1, t2, t3 = torque(w, x, y, z)
        # (J W) x W + T
        m1 = l2 * c - l3 * b + t1
        m2 = l3 * a - l1 * c + t2
        m3 = l1 * b - l2 * a + t3
        return [
            0.5 * (-x * a - y * b - z * c),
            0.5 * (w * a + y * c - z * b),
            0.5 * (w * b + z * a - x * c),
            0.5 * (w * c + x * b - y * a),
            i00 * m1 + i01 * m2 + i02 * m3,
            i10 * m1 + i11 * m2 + i12 * m3,
            i20 * m1 + i21 * m2 + i22 * m3,
        ]

    return rhs


def _integrate_rigid_body(
    times: ArrayLike,
    inertia: FloatArray,
    torque: Callable[[float, float, float, float], tuple[float, float, float]],
    q0: ArrayLike,
    w0: ArrayLike,
    rtol: float,
    atol: float,
) -> tuple[FloatArray, FloatArray]:
    """Integrate a rigid body about a fixed point and sample it at ``times``.

    Returns ``(quat, W)`` with shapes ``(n, 4)`` and ``(n, 3)``; the
    quaternion is integrated directly (continuous in time, no sign flips) and
    only normalised at output.
    """
    t, unique, inverse = _check_times(times)
    q0 = np.asarray(q0, dtype=float).reshape(4)
    q0 = q0 / np.linalg.norm(q0)
    s0 = np.concatenate([q0, np.asarray(w0, dtype=float).reshape(3)])
    if t.size == 0:
        return np.empty((0, 4)), np.empty((0, 3))
    t_end = float(unique[-1])
    if t_end == 0.0:
        states = np.repeat(s0[:, None], unique.size, axis=1)
    else:
        sol = solve_ivp(
            _rigid_body_rhs(np.asarray(inertia, dtype=float), torque),
            (0.0, t_end),
            s0,
            method="DOP853",
            t_eval=unique,
            rtol=rtol,
            atol=atol,
        )
        if not sol.success:  # pragma: no cover - defensive
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        states = sol.y
    states = states[:, inverse].T
    quat = states[:, :4] / np.linalg.norm(states[:, :4], axis=1, keepdims=True)
    return quat, states[:, 4:].copy()


# ---------------------------------------------------------------------------
# 1. Kynema heavy top
# ---------------------------------------------------------------------------

#: Mass of the heavy top (kg).
HEAVY_TOP_MASS: float = 15.0
#: Centroidal inertia in the body frame (kg m^2), shape (3, 3).
HEAVY_TOP_CENTROIDAL_INERTIA: FloatArray = np.diag([0.234375, 0.46875, 0.234375])
#: Centre of mass relative to the pivot, body frame (m), shape (3,).
HEAVY_TOP_COM: FloatArray = np.array([0.0, 1.0, 0.0])
#: Gravitational acceleration, world frame (m/s^2), shape (3,).
HEAVY_TOP_GRAVITY: FloatArray = np.array([0.0, 0.0, -9.81])
#: Initial angular velocity (rad/s), shape (3,); world = body at t = 0.
HEAVY_TOP_OMEGA0: FloatArray = np.array([0.0, 150.0, -4.61538])


def heavy_top_pivot_inertia() -> FloatArray:
    """Inertia of the heavy top about the pivot, body frame.

    ``J = J_c + m (|r|^2 I - r r^T)`` (parallel-axis theorem).

    Returns
    -------
    numpy.ndarray
        Inertia tensor (kg m^2), shape ``(3, 3)``; equal to
        ``diag(15.234375, 0.46875, 15.234375)``.
    """
    r = HEAVY_TOP_COM
    return HEAVY_TOP_CENTROIDAL_INERTIA + HEAVY_TOP_MASS * (float(r @ r) * np.eye(3) - np.outer(r, r))


def _heavy_top_torque() -> Callable[[float, float, float, float], tuple[float, float, float]]:
    """Body-frame gravity torque ``r x (R(q)^T m g)`` about the pivot (N m)."""
    r1, r2, r3 = (float(v) for v in HEAVY_TOP_COM)
    f1, f2, f3 = (float(v) for v in HEAVY_TOP_MASS * HEAVY_TOP_GRAVITY)

    def torque(w: float, x: float, y: float, z: float) -> tuple[float, float, float]:
        # R is evaluated from the normalised quaternion
        n2 = w * w + x * x + y * y + z * z
        s = 2.0 / n2
        # columns of R^T are rows of R:  G = R^T f (body-frame weight)
        g1 = (1.0 - s * (y * y + z * z)) * f1 + s * (x * y + w * z) * f2 + s * (x * z - w * y) * f3
        g2 = s * (x * y - w * z) * f1 + (1.0 - s * (x * x + z * z)) * f2 + s * (y * z + w * x) * f3
        g3 = s * (x * z + w * y) * f1 + s * (y * z - w * x) * f2 + (1.0 - s * (x * x + y * y)) * f3
        return (r2 * g3 - r3 * g2, r3 * g1 - r1 * g3, r1 * g2 - r2 * g1)

    return torque


def heavy_top_solution(times: ArrayLike, rtol: float = 1e-13, atol: float = 1e-13) -> tuple[FloatArray, FloatArray]:
    """Orientation and body angular velocity of the Kynema heavy top.

    The top is integrated in reduced coordinates about the fixed pivot::

        q' = 0.5 q (x) (0, W)
        J W' = (J W) x W + r x (R(q)^T m g)

    with ``J`` from :func:`heavy_top_pivot_inertia`, ``q(0) = (1, 0, 0, 0)``
    and ``W(0) = HEAVY_TOP_OMEGA0``.

    Parameters
    ----------
    times
        Output times (s), shape ``(n,)``; non-negative, any order.
    rtol, atol
        Tolerances passed to ``solve_ivp(method="DOP853")``.

    Returns
    -------
    quat : numpy.ndarray
        Unit quaternions ``(w, x, y, z)``, shape ``(n, 4)``, continuous in time
        from ``(1, 0, 0, 0)`` (normalised at output only, never sign-flipped).
    W : numpy.ndarray
        Body-frame angular velocity (rad/s), shape ``(n, 3)``.
    """
    return _integrate_rigid_body(
        times,
        heavy_top_pivot_inertia(),
        _heavy_top_torque(),
        (1.0, 0.0, 0.0, 0.0),
        HEAVY_TOP_OMEGA0,
        rtol,
        atol,
    )


def heavy_top_reference(times: ArrayLike, rtol: float = 1e-13, atol: float = 1e-13) -> tuple[FloatArray, FloatArray]:
    """Compute the reference displacement and orientation of the heavy top.

    Parameters
    ----------
    times
        Output times (s), shape ``(n,)``; non-negative, any order.
    rtol, atol
        Tolerances passed to ``solve_ivp(method="DOP853")``.

    Returns
    -------
    u : numpy.ndarray
        Displacement of the centre of mass from its reference position
        ``(0, 1, 0)``, ``u = R(q) r - r`` (m), shape ``(n, 3)``.
    quat : numpy.ndarray
        Orientation quaternions ``(w, x, y, z)``, shape ``(n, 4)``; see
        :func:`heavy_top_solution`.
    """
    quat, _ = heavy_top_solution(times, rtol=rtol, atol=atol)
    u = quat_to_rotation_matrix(quat) @ HEAVY_TOP_COM - HEAVY_TOP_COM
    return u, quat


def heavy_top_energy(quat: ArrayLike, W: ArrayLike) -> FloatArray:
    """Total mechanical energy of the heavy top.

    ``E = 0.5 W^T J W - m g . (R(q) r)`` with ``J`` the inertia about the
    pivot (the pivot is the zero of potential energy).

    Parameters
    ----------
    quat
        Quaternions ``(w, x, y, z)``, shape ``(n, 4)`` (or ``(4,)``).
    W
        Body angular velocities (rad/s), shape ``(n, 3)`` (or ``(3,)``).

    Returns
    -------
    numpy.ndarray
        Energy (J), shape ``(n,)`` (or a 0-d array).
    """
    w = np.asarray(W, dtype=float)
    kinetic = 0.5 * np.einsum("...i,ij,...j->...", w, heavy_top_pivot_inertia(), w)
    x_com = quat_to_rotation_matrix(quat) @ HEAVY_TOP_COM
    potential = -HEAVY_TOP_MASS * (x_com @ HEAVY_TOP_GRAVITY)
    return kinetic + potential


def heavy_top_vertical_angular_momentum(
    quat: ArrayLike,
    W: ArrayLike,
) -> FloatArray:
    """Vertical (world z) angular momentum of the heavy top about the pivot.

    ``L_z = e_z . R(q) J W``; it is conserved because the gravity torque
    about the pivot, ``(R r) x m g``, is horizontal.

    Parameters
    ----------
    quat
        Quaternions ``(w, x, y, z)``, shape ``(n, 4)`` (or ``(4,)``).
    W
        Body angular velocities (rad/s), shape ``(n, 3)`` (or ``(3,)``).

    Returns
    -------
    numpy.ndarray
        ``L_z`` (kg m^2/s), shape ``(n,)`` (or a 0-d array).
    """
    body_l = np.asarray(W, dtype=float) @ heavy_top_pivot_inertia().T
    world_l = np.einsum("...ij,...j->...i", quat_to_rotation_matrix(quat), body_l)
    return world_l[..., 2]


# ---------------------------------------------------------------------------
# 2. Gazebo "Boxes" free-floating box
# ---------------------------------------------------------------------------

#: Box dimensions along body x, y, z (m), shape (3,).
BOXES_SIZE: FloatArray = np.array([0.1, 0.4, 0.9])
#: Box mass (kg).
BOXES_MASS: float = 10.0
#: Duration of the Boxes benchmark (s).
BOXES_DURATION: float = 10.0


@dataclass(frozen=True)
class BoxesScenario:
    """Initial conditions of a Gazebo "Boxes" scenario.

    Attributes
    ----------
    gravity
        Gravitational acceleration, world frame (m/s^2), shape ``(3,)``.
    v0
        Initial centre-of-mass velocity, world frame (m/s), shape ``(3,)``.
    omega0
        Initial body-frame angular velocity (rad/s), shape ``(3,)``.
    c0
        Initial centre-of-mass position, world frame (m), shape ``(3,)``.
    q0
        Initial orientation ``(w, x, y, z)``, shape ``(4,)``.
    duration
        Simulated time (s).
    """

    gravity: tuple[float, float, float]
    v0: tuple[float, float, float]
    omega0: tuple[float, float, float]
    c0: tuple[float, float, float] = (0.0, 0.0, 0.0)
    q0: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    duration: float = BOXES_DURATION


#: "Complex" scenario: gravity on, spin near the intermediate (y) axis.
BOXES_COMPLEX = BoxesScenario(gravity=(0.0, 0.0, -9.8), v0=(-2.0, 2.0, 8.0), omega0=(0.1, 5.0, 0.1))
#: "Simple" scenario: no gravity, spin about the major (x) axis.
BOXES_SIMPLE = BoxesScenario(gravity=(0.0, 0.0, 0.0), v0=(-0.9, 0.4, 0.1), omega0=(0.5, 0.0, 0.0))


def boxes_inertia() -> FloatArray:
    """Principal centroidal inertia of the Boxes box.

    ``I = m/12 * (b^2 + c^2, a^2 + c^2, a^2 + b^2)`` for a box of size
    ``(a, b, c) = (0.1, 0.4, 0.9)`` m and mass 10 kg.

    Returns
    -------
    numpy.ndarray
        Diagonal of the inertia tensor (kg m^2), shape ``(3,)``:
        ``(0.808333..., 0.683333..., 0.141666...)``.
    """
    a, b, c = BOXES_SIZE
    return BOXES_MASS / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def ballistic_com(t: ArrayLike, c0: ArrayLike, v0: ArrayLike, g: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Closed-form ballistic centre-of-mass trajectory.

    ``c(t) = c0 + v0 t + g t^2 / 2`` and ``v(t) = v0 + g t``.

    Parameters
    ----------
    t
        Times (s), shape ``(n,)``.
    c0, v0
        Initial position (m) and velocity (m/s), shape ``(3,)``.
    g
        Gravitational acceleration (m/s^2), shape ``(3,)``.

    Returns
    -------
    c : numpy.ndarray
        Positions (m), shape ``(n, 3)``.
    v : numpy.ndarray
        Velocities (m/s), shape ``(n, 3)``.
    """
    t = np.asarray(t, dtype=float).reshape(-1, 1)
    c0 = np.asarray(c0, dtype=float).reshape(1, 3)
    v0 = np.asarray(v0, dtype=float).reshape(1, 3)
    g = np.asarray(g, dtype=float).reshape(1, 3)
    return c0 + v0 * t + 0.5 * g * t * t, v0 + g * t


def _zero_torque(_w: float, _x: float, _y: float, _z: float) -> tuple[float, float, float]:
    """Torque-free body: zero body-frame torque (N m)."""
    return (0.0, 0.0, 0.0)


def free_rigid_body_reference(
    times: ArrayLike,
    inertia_diag: ArrayLike,
    W0: ArrayLike,
    q0: Sequence[float] | ArrayLike = (1.0, 0.0, 0.0, 0.0),
    rtol: float = 1e-13,
    atol: float = 1e-14,
) -> tuple[FloatArray, FloatArray]:
    """Attitude of a torque-free rigid body (Euler equations).

    Integrates ``q' = 0.5 q (x) (0, W)`` and ``J W' = (J W) x W`` with
    ``J = diag(inertia_diag)`` using DOP853.

    Parameters
    ----------
    times
        Output times (s), shape ``(n,)``; non-negative, any order.
    inertia_diag
        Principal centroidal inertia (kg m^2), shape ``(3,)``.
    W0
        Initial body-frame angular velocity (rad/s), shape ``(3,)``.
    q0
        Initial orientation ``(w, x, y, z)``, shape ``(4,)``.
    rtol, atol
        Tolerances passed to ``solve_ivp(method="DOP853")``.

    Returns
    -------
    quat : numpy.ndarray
        Unit quaternions ``(w, x, y, z)``, shape ``(n, 4)``, continuous in time
        from ``q0`` (normalised at output only, never sign-flipped).
    W : numpy.ndarray
        Body-frame angular velocity (rad/s), shape ``(n, 3)``.
    """
    inertia = np.diag(np.asarray(inertia_diag, dtype=float).reshape(3))
    return _integrate_rigid_body(times, inertia, _zero_torque, q0, W0, rtol, atol)


def rigid_body_invariants(
    quat: ArrayLike,
    W: ArrayLike,
    inertia_diag: ArrayLike,
    m: float,
    c: ArrayLike,
    v: ArrayLike,
    g: ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Energy and world angular momentum about the CM of a free rigid body.

    Parameters
    ----------
    quat
        Orientations ``(w, x, y, z)``, shape ``(n, 4)``.
    W
        Body-frame angular velocities (rad/s), shape ``(n, 3)``.
    inertia_diag
        Principal centroidal inertia (kg m^2), shape ``(3,)``.
    m
        Mass (kg).
    c, v
        Centre-of-mass position (m) and velocity (m/s), world frame,
        shape ``(n, 3)``.
    g
        Gravitational acceleration (m/s^2), shape ``(3,)``.

    Returns
    -------
    energy : numpy.ndarray
        ``0.5 m |v|^2 + 0.5 W^T J W - m g . c`` (J), shape ``(n,)``.
    L : numpy.ndarray
        World-frame angular momentum about the CM, ``R(q) J W``
        (kg m^2/s), shape ``(n, 3)``.
    """
    w = np.asarray(W, dtype=float)
    v = np.asarray(v, dtype=float)
    c = np.asarray(c, dtype=float)
    g = np.asarray(g, dtype=float).reshape(3)
    jw = w * np.asarray(inertia_diag, dtype=float).reshape(3)
    energy = 0.5 * m * np.sum(v * v, axis=-1) + 0.5 * np.sum(w * jw, axis=-1) - m * (c @ g)
    world_l = np.einsum("...ij,...j->...i", quat_to_rotation_matrix(quat), jw)
    return energy, world_l


def _quat_compose(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton product ``a ⊗ b`` of (..., 4) arrays (w, x, y, z), broadcast."""
    a0, a1, a2, a3 = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    b0, b1, b2, b3 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
        ],
        axis=-1,
    )


def _quat_matrix_unnormalised(q: FloatArray) -> FloatArray:
    """Rotation matrices (..., 3, 3) of quaternions (..., 4), Kynema's formula (not normalised)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    out = np.empty((*q.shape[:-1], 3, 3))
    out[..., 0, 0] = w * w + x * x - y * y - z * z
    out[..., 0, 1] = 2.0 * (x * y - w * z)
    out[..., 0, 2] = 2.0 * (x * z + w * y)
    out[..., 1, 0] = 2.0 * (x * y + w * z)
    out[..., 1, 1] = w * w - x * x + y * y - z * z
    out[..., 1, 2] = 2.0 * (y * z - w * x)
    out[..., 2, 0] = 2.0 * (x * z - w * y)
    out[..., 2, 1] = 2.0 * (y * z + w * x)
    out[..., 2, 2] = w * w - x * x - y * y + z * z
    return out


def model_energy_and_momentum(
    model, q: ArrayLike, v: ArrayLike, *, chunk_rows: int = 4096
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Energy and momentum of a kynemapy model's rigid bodies, per row, in vectorised numpy:
    the independent twin of the compiled output-row kernel
    (``kynemapy.engine.invariants.system_invariants``).

    ``model`` is read by attribute only (``n_nodes``, ``mass_node``, ``mass_m_star`` (K, 6, 6),
    ``x0`` (N, 7), ``gravity``).  Per mass element on node i: ``M = diag(R,R) M* diag(R,R)ᵀ``
    with ``R = R(q_rot ⊗ r0)``, ``m = M[0,0]``, ``η = (M[5,1], −M[5,0], M[4,0]) / m``; summed over
    masses: kinetic energy ``½ vᵀ M v`` [J], potential energy ``−m g·(X + u + η)`` [J], linear
    momentum ``(M v)[0:3]`` [kg m/s], angular momentum about the world origin
    ``(X + u) × (M v)[0:3] + (M v)[3:6]`` [kg m²/s].

    q : (..., N, 7), v : (..., N, 6); ``chunk_rows`` bounds the temporary memory.
    Returns ke (...,), pe (...,), p (..., 3), L (..., 3).
    """
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    nn = model.n_nodes
    if q.shape[-2:] != (nn, 7) or v.shape[-2:] != (nn, 6) or q.shape[:-2] != v.shape[:-2]:
        raise ValueError(f"expected q (..., {nn}, 7) and v (..., {nn}, 6), got {q.shape}, {v.shape}")
    lead = q.shape[:-2]
    qq = q.reshape(-1, nn, 7)
    vv = v.reshape(-1, nn, 6)
    n = qq.shape[0]
    ke = np.zeros(n)
    pe = np.zeros(n)
    p = np.zeros((n, 3))
    ang = np.zeros((n, 3))
    nodes = np.asarray(model.mass_node, dtype=np.int64)
    k = nodes.shape[0]
    if k and n:
        m_star = np.asarray(model.mass_m_star, dtype=np.float64)  # (K, 6, 6)
        r0 = np.asarray(model.x0, dtype=np.float64)[nodes, 3:7]  # (K, 4)
        big_x = np.asarray(model.x0, dtype=np.float64)[nodes, 0:3]  # (K, 3)
        g = np.asarray(model.gravity, dtype=np.float64)
        step = max(1, int(chunk_rows) // k)
        for s in range(0, n, step):
            sl = slice(s, min(n, s + step))
            qs = qq[sl][:, nodes]  # (c, K, 7)
            vs = vv[sl][:, nodes]  # (c, K, 6)
            rot = _quat_matrix_unnormalised(_quat_compose(qs[..., 3:7], r0))  # (c, K, 3, 3)
            t = np.zeros((*rot.shape[:-2], 6, 6))
            t[..., :3, :3] = rot
            t[..., 3:, 3:] = rot
            mm = t @ m_star @ np.swapaxes(t, -1, -2)  # (c, K, 6, 6)
            mv = (mm @ vs[..., None])[..., 0]  # (c, K, 6)
            mass = mm[..., 0, 0]
            eta = np.stack([mm[..., 5, 1], -mm[..., 5, 0], mm[..., 4, 0]], axis=-1) / mass[..., None]
            pos = big_x + qs[..., 0:3]  # (c, K, 3)
            ke[sl] = 0.5 * np.einsum("ckj,ckj->c", vs, mv)
            pe[sl] = -np.einsum("ck,ckj,j->c", mass, pos + eta, g)
            p[sl] = mv[..., 0:3].sum(axis=1)
            ang[sl] = (np.cross(pos, mv[..., 0:3]) + mv[..., 3:6]).sum(axis=1)
    return ke.reshape(lead), pe.reshape(lead), p.reshape((*lead, 3)), ang.reshape((*lead, 3))
