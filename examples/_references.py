"""Independent references for the joint examples: numpy and scipy only (kynemapy is never imported).

Each reference is a reduced-coordinate model derived by hand, integrated with
``scipy.integrate.solve_ivp`` (DOP853) at tight tolerances, or a closed form:

* :class:`BallChain` — N rigid bodies in a chain of ball joints, the first pinned to the ground
  (spherical double pendulum, N-link chain, heavy top for N = 1).  Unknowns: the body
  quaternions and world angular velocities; Kane's equations with the partial velocities of
  the centres of mass, so no constraint force appears and nothing drifts off the constraints.
* :func:`planar_double_pendulum` — the textbook Lagrangian of two rigid rods in a vertical
  plane (2 angles): an independent check of :class:`BallChain` on planar motions.
* :class:`FourBar` — Freudenstein's closed form for the rocker angle as a function of the
  crank angle, the velocity and acceleration analysis of the loop equation, and the
  one-degree-of-freedom equation of motion ``M(θ) θ̈ + ½ M'(θ) θ̇² = Q(θ)``.
* :class:`SliderCrank` — the exact piston position ``x(θ) = r cos θ + sqrt(l² − r² sin² θ)``,
  its derivatives, and the same one-degree-of-freedom equation.
* :class:`GimbalGyroscope` — a rotor in a two-axis gimbal (outer ring about the vertical,
  inner ring about a horizontal axis, rotor spinning in the inner ring, centre of mass off the
  inner axis): Lagrangian in the gimbal angles (ψ, θ, φ), Routh-reduced with the conserved
  momenta p_ψ and p_φ; the steady precession ψ̇ = m g ℓ / p_φ (gyroscopic relation) is an
  exact relative equilibrium at θ = 0.

Conventions: quaternions ``(w, x, y, z)``, Hamilton product, ``R(q)`` maps body to world;
angular velocities are world-frame unless said otherwise; SI units.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

RTOL = 1e-12
ATOL = 1e-12

# ----------------------------------------------------------------------------------- rotations


def quat_mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p ⊗ q`` of quaternions ``(..., 4)``."""
    p = np.asarray(p, float)
    q = np.asarray(q, float)
    w = p[..., :1] * q[..., :1] - np.sum(p[..., 1:] * q[..., 1:], axis=-1, keepdims=True)
    v = p[..., :1] * q[..., 1:] + q[..., :1] * p[..., 1:] + np.cross(p[..., 1:], q[..., 1:])
    return np.concatenate([w, v], axis=-1)


def quat_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of quaternions ``(..., 4)`` (normalised first)."""
    q = np.asarray(q, float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    r = np.empty((*q.shape[:-1], 3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - w * z)
    r[..., 0, 2] = 2 * (x * z + w * y)
    r[..., 1, 0] = 2 * (x * y + w * z)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - w * x)
    r[..., 2, 0] = 2 * (x * z - w * y)
    r[..., 2, 1] = 2 * (y * z + w * x)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def quat_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Unit quaternion of a rotation by ``angle`` [rad] about ``axis``."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def rotation_angle(ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """Angle [rad] of the rotation ``ra rbᵀ`` between rotation matrices ``(..., 3, 3)``."""
    c = np.einsum("...ij,...ij->...", ra, rb)  # trace(ra rbᵀ)
    s = np.linalg.norm(_vee(np.einsum("...ij,...kj->...ik", ra, rb)), axis=-1)
    return np.arctan2(s, 0.5 * (c - 1.0))


def _vee(m: np.ndarray) -> np.ndarray:
    """Axial vector of the skew part of ``m`` times 2·sin: ``(m32 − m23, m13 − m31, m21 − m12)/2``."""
    return 0.5 * np.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1)


def tilde(v: np.ndarray) -> np.ndarray:
    """Cross-product matrices ``(..., 3, 3)``: ``tilde(a) @ b = a × b``."""
    v = np.asarray(v, float)
    t = np.zeros((*v.shape[:-1], 3, 3))
    t[..., 0, 1], t[..., 0, 2] = -v[..., 2], v[..., 1]
    t[..., 1, 0], t[..., 1, 2] = v[..., 2], -v[..., 0]
    t[..., 2, 0], t[..., 2, 1] = -v[..., 1], v[..., 0]
    return t


def rod_inertia(mass: float, length: float, radius: float) -> np.ndarray:
    """Principal inertia [kg m²] about the centre of a solid cylinder along body x: (axial, transverse, transverse)."""
    axial = 0.5 * mass * radius**2
    transverse = mass * (3 * radius**2 + length**2) / 12
    return np.array([axial, transverse, transverse])


def _solve(rhs: Callable, y0: np.ndarray, times: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """States ``(len(times), len(y0))`` at the increasing, non-negative ``times``."""
    times = np.asarray(times, float)
    if times[-1] == 0.0:
        return np.repeat(np.asarray(y0, float)[None], times.size, axis=0)
    sol = solve_ivp(rhs, (0.0, float(times[-1])), y0, method="DOP853", t_eval=times, rtol=rtol, atol=atol)
    if not sol.success:  # pragma: no cover - defensive
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.y.T


# ------------------------------------------------------------------------- chain of ball joints
@dataclass(frozen=True)
class BallChain:
    """N rigid bodies, body 0 on a ball joint at ``pivot``, body i on a ball joint to body i−1.

    Body i (body frame): ``link[i]`` from its parent joint to its child joint, ``com[i]`` from
    its parent joint to its centre of mass, ``inertia[i]`` (3, 3) about the centre of mass.
    Generalized speeds: the world angular velocities ω_i; the centre of mass velocities are
    ``v_i = Σ_{j<i} ω_j × a_j + ω_i × c_i`` (``a_j = R_j link_j``, ``c_i = R_i com_i``), i.e.
    ``v = P ω``, and Kane's equations read ``(Pᵀ m P + diag(I_w)) ω̇ = −Pᵀ m (κ − g) − ω × I_w ω``
    with the velocity-squared accelerations ``κ_i = Σ_{j<i} ω_j×(ω_j×a_j) + ω_i×(ω_i×c_i)``.
    Kinematics ``q̇_i = ½ (0, ω_i) ⊗ q_i``.
    """

    pivot: np.ndarray  # (3,) m
    mass: np.ndarray  # (N,) kg
    inertia: np.ndarray  # (N, 3, 3) kg m², body frame, about the centre of mass
    com: np.ndarray  # (N, 3) m, body frame, from the parent joint
    link: np.ndarray  # (N, 3) m, body frame, parent joint to child joint
    gravity: np.ndarray  # (3,) m/s²

    @property
    def n(self) -> int:
        return len(self.mass)

    def _frames(self, quats: np.ndarray):
        r = quat_matrix(quats)  # (N, 3, 3)
        a = np.einsum("nij,nj->ni", r, self.link)
        c = np.einsum("nij,nj->ni", r, self.com)
        iw = np.einsum("nij,njk,nlk->nil", r, self.inertia, r)
        return r, a, c, iw

    def _partials(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """P (3N, 3N): centre-of-mass velocities from the world angular velocities."""
        n = self.n
        p = np.zeros((n, n, 3, 3))
        ii, jj = np.tril_indices(n, -1)
        p[ii, jj] = -tilde(a)[jj]
        p[np.arange(n), np.arange(n)] = -tilde(c)
        return p.transpose(0, 2, 1, 3).reshape(3 * n, 3 * n)

    def positions(self, quats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Centres of mass (N, 3) and joint points (N + 1, 3) [m] for body quaternions (N, 4)."""
        _, a, c, _ = self._frames(quats)
        joints = self.pivot + np.concatenate([np.zeros((1, 3)), np.cumsum(a, axis=0)])
        return joints[:-1] + c, joints

    def velocities(self, quats: np.ndarray, omegas: np.ndarray) -> np.ndarray:
        """Centre-of-mass velocities (N, 3) [m/s]."""
        _, a, c, _ = self._frames(quats)
        return (self._partials(a, c) @ np.ravel(omegas)).reshape(-1, 3)

    def accelerations(self, quats: np.ndarray, omegas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Angular accelerations ω̇ (N, 3) [rad/s²] and centre-of-mass accelerations (N, 3) [m/s²]."""
        _, a, c, iw = self._frames(quats)
        w = np.asarray(omegas, float).reshape(-1, 3)
        p = self._partials(a, c)
        m3 = np.repeat(self.mass, 3)
        big = p.T @ (m3[:, None] * p)
        for i in range(self.n):
            big[3 * i : 3 * i + 3, 3 * i : 3 * i + 3] += iw[i]
        wa = np.cross(w, np.cross(w, a))
        kappa = np.cumsum(wa, axis=0) - wa + np.cross(w, np.cross(w, c))
        force = (m3 * (kappa - self.gravity).ravel()) if self.n else np.zeros(0)
        gyro = np.cross(w, np.einsum("nij,nj->ni", iw, w)).ravel()
        wdot = np.linalg.solve(big, -(p.T @ force) - gyro)
        return wdot.reshape(-1, 3), (p @ wdot).reshape(-1, 3) + kappa

    def pivot_force(self, quats: np.ndarray, omegas: np.ndarray) -> np.ndarray:
        """Force [N] (3,) of the ground's ball joint on body 0: ``Σ m_i (a_i − g)`` (the chain's momentum balance)."""
        _, acc = self.accelerations(quats, omegas)
        return np.sum(self.mass[:, None] * (acc - self.gravity), axis=0)

    def energy(self, quats: np.ndarray, omegas: np.ndarray) -> float:
        """Kinetic plus potential energy [J] (potential zero at the pivot height)."""
        _, _, _, iw = self._frames(quats)
        w = np.asarray(omegas, float).reshape(-1, 3)
        v = self.velocities(quats, w)
        x, _ = self.positions(quats)
        kinetic = 0.5 * np.sum(self.mass * np.sum(v * v, axis=1)) + 0.5 * np.einsum("ni,nij,nj->", w, iw, w)
        return float(kinetic - np.sum(self.mass * ((x - self.pivot) @ self.gravity)))

    def rhs(self, _t: float, y: np.ndarray) -> np.ndarray:
        n = self.n
        q = y[: 4 * n].reshape(n, 4)
        w = y[4 * n :].reshape(n, 3)
        wdot, _ = self.accelerations(q, w)
        qdot = 0.5 * quat_mul(np.concatenate([np.zeros((n, 1)), w], axis=1), q)
        return np.concatenate([qdot.ravel(), wdot.ravel()])

    def solve(
        self, quats0: np.ndarray, omegas0: np.ndarray, times: np.ndarray, rtol: float = RTOL, atol: float = ATOL
    ) -> tuple[np.ndarray, np.ndarray]:
        """Quaternions (T, N, 4) (normalised) and world angular velocities (T, N, 3) at ``times`` [s]."""
        y0 = np.concatenate([np.ravel(quats0), np.ravel(omegas0)])
        y = _solve(self.rhs, y0, times, rtol, atol)
        n = self.n
        q = y[:, : 4 * n].reshape(-1, n, 4)
        return q / np.linalg.norm(q, axis=-1, keepdims=True), y[:, 4 * n :].reshape(-1, n, 3)


def rod_chain(
    n_links: int, length: float, mass: float, radius: float, gravity=(0.0, 0.0, -9.81), pivot=(0.0, 0.0, 0.0)
) -> BallChain:
    """A chain of identical solid rods along their body x axes, centres of mass at mid-length."""
    j = np.diag(rod_inertia(mass, length, radius))
    return BallChain(
        pivot=np.asarray(pivot, float),
        mass=np.full(n_links, float(mass)),
        inertia=np.repeat(j[None], n_links, axis=0),
        com=np.tile([0.5 * length, 0.0, 0.0], (n_links, 1)),
        link=np.tile([length, 0.0, 0.0], (n_links, 1)),
        gravity=np.asarray(gravity, float),
    )


def planar_double_pendulum(
    theta0: tuple[float, float],
    rate0: tuple[float, float],
    times: np.ndarray,
    masses: tuple[float, float],
    lengths: tuple[float, float],
    inertias: tuple[float, float],
    g: float = 9.81,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> np.ndarray:
    """Two uniform rods in a vertical plane, angles from the downward vertical (Lagrange's equations).

    ``inertias``: about each centre of mass, perpendicular to the plane [kg m²]; centres of
    mass at mid-length.  Returns ``(T, 4)`` = (θ1, θ2, θ̇1, θ̇2).
    """
    m1, m2 = masses
    l1, l2 = lengths
    i1, i2 = inertias
    c1, c2 = 0.5 * l1, 0.5 * l2
    m11 = m1 * c1 * c1 + i1 + m2 * l1 * l1
    m22 = m2 * c2 * c2 + i2
    k = m2 * l1 * c2

    def rhs(_t: float, y: np.ndarray) -> list[float]:
        t1, t2, w1, w2 = y
        s, c = np.sin(t1 - t2), np.cos(t1 - t2)
        m12 = k * c
        f1 = -k * s * w2 * w2 - (m1 * c1 + m2 * l1) * g * np.sin(t1)
        f2 = k * s * w1 * w1 - m2 * c2 * g * np.sin(t2)
        det = m11 * m22 - m12 * m12
        return [w1, w2, (m22 * f1 - m12 * f2) / det, (m11 * f2 - m12 * f1) / det]

    return _solve(rhs, np.array([*theta0, *rate0], float), times, rtol, atol)


# ------------------------------------------------------------- one-degree-of-freedom mechanisms
class PlanarMechanism:
    """A planar one-degree-of-freedom mechanism of rigid bodies moving in the xy-plane.

    Subclasses give :meth:`kinematics`: per body the centre of mass (x, y) and the angle φ of
    the body, and their first and second derivatives with respect to the coordinate θ.  The
    equation of motion (virtual power with ``p' = dp/dθ``) is
    ``(Σ m |p'|² + I φ'²) θ̈ + (Σ m p'·p'' + I φ' φ'') θ̇² = Q(θ)``, ``Q = τ + Σ m g·p' + F x_F'``.
    """

    masses: np.ndarray  # (B,) kg
    inertias: np.ndarray  # (B,) kg m² about the centre of mass, perpendicular to the plane
    gravity: np.ndarray  # (2,) m/s² in the plane

    def kinematics(self, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B, 3)`` arrays (x, y, φ), their θ-derivatives and second θ-derivatives."""
        raise NotImplementedError

    def force_coordinate(self, theta: float) -> tuple[float, float]:
        """(x_F, x_F') of the coordinate the force input ``force`` works on (default: none)."""
        return 0.0, 0.0

    def generalized_mass(self, theta: float) -> tuple[float, float]:
        """M(θ) and the velocity-squared coefficient C(θ) = ½ M'(θ)."""
        _, d, dd = self.kinematics(theta)
        m = float(np.sum(self.masses * (d[:, 0] ** 2 + d[:, 1] ** 2)) + np.sum(self.inertias * d[:, 2] ** 2))
        c = float(
            np.sum(self.masses * (d[:, 0] * dd[:, 0] + d[:, 1] * dd[:, 1])) + np.sum(self.inertias * d[:, 2] * dd[:, 2])
        )
        return m, c

    def acceleration(self, theta: float, rate: float, torque: float = 0.0, force: float = 0.0) -> float:
        """θ̈ [rad/s²] for a torque τ [N m] on the coordinate and a force F [N] on ``force_coordinate``."""
        _, d, _ = self.kinematics(theta)
        m, c = self.generalized_mass(theta)
        q = torque + float(np.sum(self.masses * (d[:, :2] @ self.gravity))) + force * self.force_coordinate(theta)[1]
        return (q - c * rate * rate) / m

    def energy(self, theta: float, rate: float) -> float:
        """Kinetic plus potential energy [J] (potential zero at the origin)."""
        p, _, _ = self.kinematics(theta)
        m, _ = self.generalized_mass(theta)
        return 0.5 * m * rate * rate - float(np.sum(self.masses * (p[:, :2] @ self.gravity)))

    def body_velocities(self, theta: float, rate: float) -> np.ndarray:
        """(B, 3): (ẋ, ẏ, φ̇) of each body."""
        _, d, _ = self.kinematics(theta)
        return d * rate

    def solve(
        self,
        theta0: float,
        rate0: float,
        times: np.ndarray,
        torque: float = 0.0,
        force: float = 0.0,
        rtol: float = RTOL,
        atol: float = ATOL,
    ) -> np.ndarray:
        """``(T, 2)`` = (θ, θ̇) at ``times`` [s] under a constant torque and force."""

        def rhs(_t: float, y: np.ndarray) -> list[float]:
            return [y[1], self.acceleration(y[0], y[1], torque, force)]

        return _solve(rhs, np.array([theta0, rate0], float), times, rtol, atol)


def _arm(length: float, angle: float, d: float, dd: float) -> tuple[complex, complex, complex]:
    """``length·e^{iφ}`` and its first and second derivatives for φ' = d, φ'' = dd (complex plane)."""
    e = length * cmath.exp(1j * angle)
    return e, 1j * e * d, (1j * dd - d * d) * e


@dataclass
class FourBar(PlanarMechanism):
    """Four-bar linkage: ground pivots A = (0, 0) and D = (d, 0); crank AB (r2), coupler BC (r3),
    rocker DC (r4); θ2, θ3, θ4 the angles of AB, BC, DC from the x axis; centres of mass at
    mid-length; ``branch`` = ±1 picks the assembly (sign of the acos in Freudenstein's solution).
    The coordinate is the crank angle θ2.
    """

    d: float
    r2: float
    r3: float
    r4: float
    masses: np.ndarray
    inertias: np.ndarray
    gravity: np.ndarray
    branch: float = 1.0

    @classmethod
    def through(cls, a, b, c, d, masses, inertias, gravity) -> FourBar:
        """The linkage through points A, B, C, D (A at the origin, D on the x axis), its branch from C."""
        a, b, c, d = (np.asarray(p, float)[:2] for p in (a, b, c, d))
        if np.linalg.norm(a) > 0 or abs(d[1]) > 0:
            raise ValueError("FourBar.through: A must be the origin and D on the x axis")
        link = cls(
            float(d[0]),
            float(np.linalg.norm(b - a)),
            float(np.linalg.norm(c - b)),
            float(np.linalg.norm(c - d)),
            np.asarray(masses, float),
            np.asarray(inertias, float),
            np.asarray(gravity, float)[:2],
        )
        theta2 = float(np.arctan2(b[1], b[0]))
        theta4 = float(np.arctan2(c[1] - d[1], c[0] - d[0]))
        for branch in (1.0, -1.0):
            link.branch = branch
            if abs(np.angle(np.exp(1j * (link.angles(theta2)[1] - theta4)))) < 1e-9:
                return link
        raise ValueError("FourBar.through: the points do not close the loop")

    @property
    def freudenstein(self) -> tuple[float, float, float]:
        """(K1, K2, K3) of ``K1 cos θ4 − K2 cos θ2 + K3 = cos(θ2 − θ4)``."""
        d, r2, r3, r4 = self.d, self.r2, self.r3, self.r4
        return d / r2, d / r4, (d * d + r2 * r2 + r4 * r4 - r3 * r3) / (2 * r2 * r4)

    def freudenstein_residual(self, theta2, theta4):
        """Residual of Freudenstein's equation (dimensionless), elementwise."""
        k1, k2, k3 = self.freudenstein
        return k1 * np.cos(theta4) - k2 * np.cos(theta2) + k3 - np.cos(theta2 - theta4)

    def angles(self, theta2: float) -> tuple[float, float]:
        """(θ3, θ4) [rad] for the crank angle θ2: Freudenstein's equation as A cos θ4 + B sin θ4 = C."""
        k1, k2, k3 = self.freudenstein
        a = k1 - math.cos(theta2)
        b = -math.sin(theta2)
        c = k2 * math.cos(theta2) - k3
        theta4 = math.atan2(b, a) + self.branch * math.acos(min(1.0, max(-1.0, c / math.hypot(a, b))))
        bc = self.d + self.r4 * cmath.exp(1j * theta4) - self.r2 * cmath.exp(1j * theta2)
        return cmath.phase(bc), theta4

    def rates(self, theta2: float) -> tuple[float, float, float, float]:
        """(θ3', θ4', θ3'', θ4''): derivatives with respect to θ2 from the loop equation
        ``r2 e^{iθ2} + r3 e^{iθ3} − r4 e^{iθ4} = d`` differentiated once and twice."""
        theta3, theta4 = self.angles(theta2)
        e2, e3, e4 = (cmath.exp(1j * t) for t in (theta2, theta3, theta4))
        # [[Re r3 e3, −Re r4 e4], [Im r3 e3, −Im r4 e4]] (θ3', θ4') = rhs, by Cramer's rule
        a11, a12, a21, a22 = (self.r3 * e3).real, -(self.r4 * e4).real, (self.r3 * e3).imag, -(self.r4 * e4).imag
        det = a11 * a22 - a12 * a21

        def solve(rhs: complex) -> tuple[float, float]:
            return (rhs.real * a22 - a12 * rhs.imag) / det, (a11 * rhs.imag - a21 * rhs.real) / det

        d3, d4 = solve(-self.r2 * e2)
        dd3, dd4 = solve(-1j * (self.r2 * e2 + self.r3 * e3 * d3 * d3 - self.r4 * e4 * d4 * d4))
        return d3, d4, dd3, dd4

    def kinematics(self, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        theta3, theta4 = self.angles(theta)
        d3, d4, dd3, dd4 = self.rates(theta)
        b, db, ddb = _arm(self.r2, theta, 1.0, 0.0)
        h3, dh3, ddh3 = _arm(0.5 * self.r3, theta3, d3, dd3)
        h4, dh4, ddh4 = _arm(0.5 * self.r4, theta4, d4, dd4)
        pts = [(0.5 * b, 0.5 * db, 0.5 * ddb), (b + h3, db + dh3, ddb + ddh3), (self.d + h4, dh4, ddh4)]
        ang = [(theta, 1.0, 0.0), (theta3, d3, dd3), (theta4, d4, dd4)]
        out = np.zeros((3, 3, 3))  # (order, body, x/y/φ)
        for k, ((p, dp, ddp), (a, da, dda)) in enumerate(zip(pts, ang, strict=True)):
            out[:, k] = [[p.real, p.imag, a], [dp.real, dp.imag, da], [ddp.real, ddp.imag, dda]]
        return out[0], out[1], out[2]


@dataclass
class SliderCrank(PlanarMechanism):
    """Slider-crank: crank OB (radius r) about the origin, rod BP (length l), piston P on the x axis.

    θ is the crank angle from the x axis; the rod angle φ obeys ``r sin θ + l sin φ = 0`` and the
    piston is at ``x(θ) = r cos θ + sqrt(l² − r² sin² θ)``.  Bodies: crank (centre of mass at
    r/2), rod (at mid-length), piston (at P).  The force input acts on the piston along x.
    """

    r: float
    l: float
    masses: np.ndarray
    inertias: np.ndarray
    gravity: np.ndarray

    def piston(self, theta):
        """Exact piston position x(θ) = r cos θ + sqrt(l² − r² sin² θ) [m], elementwise."""
        return self.r * np.cos(theta) + np.sqrt(self.l**2 - (self.r * np.sin(theta)) ** 2)

    def rod_angle(self, theta: float) -> tuple[float, float, float]:
        """(φ, φ', φ'') of the rod."""
        r, l = self.r, self.l
        phi = float(np.arcsin(-r * np.sin(theta) / l))
        d = -r * np.cos(theta) / (l * np.cos(phi))
        dd = (r * np.sin(theta) + l * np.sin(phi) * d * d) / (l * np.cos(phi))
        return phi, float(d), float(dd)

    def kinematics(self, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        phi, d, dd = self.rod_angle(theta)
        b, db, ddb = _arm(self.r, theta, 1.0, 0.0)
        h, dh, ddh = _arm(0.5 * self.l, phi, d, dd)
        p, dp, ddp = b + 2 * h, db + 2 * dh, ddb + 2 * ddh
        pts = [(0.5 * b, 0.5 * db, 0.5 * ddb), (b + h, db + dh, ddb + ddh), (p, dp, ddp)]
        ang = [(theta, 1.0, 0.0), (phi, d, dd), (0.0, 0.0, 0.0)]
        out = np.zeros((3, 3, 3))
        for k, ((q, dq, ddq), (a, da, dda)) in enumerate(zip(pts, ang, strict=True)):
            out[:, k] = [[q.real, q.imag, a], [dq.real, dq.imag, da], [ddq.real, ddq.imag, dda]]
        return out[0], out[1], out[2]

    def force_coordinate(self, theta: float) -> tuple[float, float]:
        p, d, _ = self.kinematics(theta)
        return float(p[2, 0]), float(d[2, 0])


# ------------------------------------------------------------------------------ gimbal gyroscope
@dataclass(frozen=True)
class GimbalGyroscope:
    """A rotor in a two-axis gimbal, all joints revolute, gravity −g ẑ.

    Outer ring: turns by ψ about the world z axis (principal inertia ``outer[2]`` about it).
    Inner ring: turns by θ about the outer ring's x axis (principal inertias ``inner`` in its frame).
    Rotor: turns by φ about the inner ring's y axis; axisymmetric, ``axial`` about y, ``transverse``
    about x and z; centre of mass at ℓ = ``offset`` along the inner ring's y axis from the common
    centre (the rings' centres of mass are at the centre).  With s = sin θ, c = cos θ:

        L = ½ J(θ) ψ̇² + ½ A θ̇² + ½ I_a (ψ̇ s + φ̇)² − m g ℓ s,
        J(θ) = O_z + I_y s² + I_z c² + (I_t + m ℓ²) c²,   A = I_x + I_t + m ℓ².

    ψ and φ are cyclic: p_ψ = J ψ̇ + p_φ s and p_φ = I_a (ψ̇ s + φ̇) (the rotor's absolute spin
    momentum) are conserved, and ``A θ̈ = ½ J'(θ) ψ̇² + p_φ ψ̇ c − m g ℓ c``.  At θ = θ̇ = 0 with
    ψ̇ = m g ℓ / p_φ the gyroscope precesses steadily (an exact solution).
    """

    outer: np.ndarray  # (3,) kg m²
    inner: np.ndarray  # (3,) kg m²
    rotor_mass: float  # kg
    axial: float  # kg m²
    transverse: float  # kg m²
    offset: float  # m
    g: float = 9.81

    def _j(self, theta: float) -> tuple[float, float]:
        s, c = np.sin(theta), np.cos(theta)
        t = self.transverse + self.rotor_mass * self.offset**2
        j = self.outer[2] + self.inner[1] * s * s + self.inner[2] * c * c + t * c * c
        dj = 2 * s * c * (self.inner[1] - self.inner[2] - t)
        return float(j), float(dj)

    @property
    def a(self) -> float:
        return float(self.inner[0] + self.transverse + self.rotor_mass * self.offset**2)

    def steady_precession(self, spin_momentum: float) -> float:
        """ψ̇ [rad/s] of the steady precession at θ = 0: m g ℓ / p_φ (the gyroscopic relation)."""
        return self.rotor_mass * self.g * self.offset / spin_momentum

    def momenta(self, theta: float, psi_rate: float, phi_rate: float) -> tuple[float, float]:
        """(p_ψ, p_φ) [kg m²/s]."""
        p_phi = self.axial * (psi_rate * np.sin(theta) + phi_rate)
        return self._j(theta)[0] * psi_rate + p_phi * np.sin(theta), float(p_phi)

    def energy(self, theta: float, psi_rate: float, theta_rate: float, phi_rate: float) -> float:
        """Kinetic plus potential energy [J]."""
        j, _ = self._j(theta)
        s = np.sin(theta)
        spin = psi_rate * s + phi_rate
        return float(
            0.5 * j * psi_rate**2
            + 0.5 * self.a * theta_rate**2
            + 0.5 * self.axial * spin**2
            + self.rotor_mass * self.g * self.offset * s
        )

    def solve(
        self,
        theta0: float,
        psi_rate0: float,
        theta_rate0: float,
        phi_rate0: float,
        times: np.ndarray,
        rtol: float = RTOL,
        atol: float = ATOL,
    ) -> np.ndarray:
        """``(T, 6)`` = (ψ, θ, φ, ψ̇, θ̇, φ̇) from ψ = φ = 0 at t = 0 (Routh-reduced equations)."""
        p_psi, p_phi = self.momenta(theta0, psi_rate0, phi_rate0)
        mgl = self.rotor_mass * self.g * self.offset

        def rates(theta: float) -> tuple[float, float]:
            j, _ = self._j(theta)
            psi_rate = (p_psi - p_phi * np.sin(theta)) / j
            return psi_rate, p_phi / self.axial - psi_rate * np.sin(theta)

        def rhs(_t: float, y: np.ndarray) -> list[float]:
            _, theta, _, theta_rate = y
            psi_rate, phi_rate = rates(theta)
            _, dj = self._j(theta)
            c = np.cos(theta)
            return [psi_rate, theta_rate, phi_rate, (0.5 * dj * psi_rate**2 + p_phi * psi_rate * c - mgl * c) / self.a]

        y = _solve(rhs, np.array([0.0, theta0, 0.0, theta_rate0]), times, rtol, atol)
        out = np.zeros((len(y), 6))
        out[:, :3] = y[:, :3]
        out[:, 4] = y[:, 3]
        for k, th in enumerate(y[:, 1]):
            out[k, 3], out[k, 5] = rates(th)
        return out


# ------------------------------------------------------------------------------- reporting
def report(title: str, rows: list[tuple[str, float, float]]) -> int:
    """Print a table of (quantity, measured value, bound) and return the number of failed bounds."""
    print(title)
    width = max(len(r[0]) for r in rows)
    print(f"  {'quantity':{width}s}  {'value':>10s}  {'bound':>10s}")
    failed = 0
    for name, value, bound in rows:
        ok = bool(value <= bound)
        failed += not ok
        print(f"  {name:{width}s}  {value:10.3e}  {bound:10.3e}  {'ok' if ok else 'FAIL'}")
    return failed


def body_pose(model, q: np.ndarray, node: int) -> tuple[np.ndarray, np.ndarray]:
    """Position (3,) and rotation matrix (3, 3) of a node from a kynemapy state row ``q[node]``:
    ``X + u`` and ``R(r ⊗ r0)`` (``model.x0[node]`` = reference position and orientation)."""
    x0 = np.asarray(model.x0[node])
    return x0[:3] + q[node, :3], quat_matrix(quat_mul(q[node, 3:7], x0[3:7]))


def rigid_energy(mass: float, inertia: np.ndarray, rot: np.ndarray, x: np.ndarray, v: np.ndarray, g) -> float:
    """½ m |u̇|² + ½ ωᵀ R J Rᵀ ω − m g·x [J] of a body with its node at the centre of mass (v = (u̇, ω))."""
    w = v[3:]
    jw = rot @ (np.asarray(inertia, float) * (rot.T @ w)) if np.ndim(inertia) == 1 else rot @ inertia @ rot.T @ w
    return float(0.5 * mass * v[:3] @ v[:3] + 0.5 * w @ jw - mass * np.asarray(g, float) @ x)


# ---------------------------------------------------------------------------- self-consistency
def self_check() -> dict[str, float]:
    """Cross-checks of the references against each other and against finite differences.

    * :class:`BallChain` on a planar motion against the planar Lagrangian double pendulum;
    * :class:`BallChain` conserves its energy (a 3-D double pendulum, 1 s);
    * the four-bar's and slider-crank's θ-derivatives against central differences of the positions;
    * the gimbal gyroscope's Routh-reduced solution conserves its energy.
    """
    out: dict[str, float] = {}
    m, length, radius = 1.0, 1.0, 0.02
    chain = rod_chain(2, length, m, radius)
    t = np.linspace(0.0, 1.0, 11)
    # planar: rods in the xz-plane at angles θ from the downward vertical, turning about y
    th0, w0 = (0.7, -0.4), (0.3, 1.1)
    q0 = np.array([quat_about((0, 1, 0), np.pi / 2 - th) for th in th0])  # body x points along the rod
    om0 = np.array([[0.0, -w, 0.0] for w in w0])  # θ grows towards +x, a rotation about −y
    qs, _ = chain.solve(q0, om0, t)
    lag = planar_double_pendulum(th0, w0, t, (m, m), (length, length), (rod_inertia(m, length, radius)[1],) * 2)
    rod = np.einsum("tnij,j->tni", quat_matrix(qs), [1.0, 0.0, 0.0])
    angles = np.arctan2(rod[..., 0], -rod[..., 2])
    out["chain vs planar Lagrangian [rad]"] = float(np.abs(angles - lag[:, :2]).max())
    q3 = np.array([quat_about((0, 1, 1), 0.3), quat_about((1, 2, 0), -0.5)])
    w3 = np.array([[0.5, -1.0, 2.0], [1.0, 0.3, -1.5]])
    qs, ws = chain.solve(q3, w3, t)
    e = [chain.energy(qs[k], ws[k]) for k in range(len(t))]
    out["chain energy drift [J]"] = float(np.ptp(e))

    def fd_error(mech: PlanarMechanism, thetas) -> float:
        worst = 0.0
        for th in thetas:
            eps = 1e-5
            _, d, dd = mech.kinematics(th)
            pp, dp, _ = mech.kinematics(th + eps)
            pm, dm, _ = mech.kinematics(th - eps)
            worst = max(worst, np.abs((pp - pm) / (2 * eps) - d).max(), np.abs((dp - dm) / (2 * eps) - dd).max())
        return float(worst)

    fb = FourBar.through((0, 0), (0, 1), (2, 1.5), (2, 0), np.ones(3), np.full(3, 0.1), (0.0, -9.81))
    out["four-bar derivatives vs differences"] = fd_error(fb, np.linspace(0.1, 6.2, 13))
    out["four-bar Freudenstein residual"] = float(
        max(abs(fb.freudenstein_residual(th, fb.angles(th)[1])) for th in np.linspace(0, 6.2, 13))
    )
    sc = SliderCrank(0.1, 0.35, np.ones(3), np.full(3, 0.01), np.array([0.0, -9.81]))
    out["slider-crank derivatives vs differences"] = fd_error(sc, np.linspace(0.1, 6.2, 13))
    gy = GimbalGyroscope(np.array([0.01, 0.01, 0.008]), np.array([0.003, 0.004, 0.006]), 2.0, 0.01, 0.005, 0.05)
    y = gy.solve(0.0, 0.0, 0.0, 200.0, np.linspace(0.0, 0.5, 6))
    e = [gy.energy(row[1], row[3], row[4], row[5]) for row in y]
    out["gyroscope energy drift [J]"] = float(np.ptp(e))
    return out


if __name__ == "__main__":  # the examples' references, checked against each other
    bad = 0
    for name, value in self_check().items():
        ok = value < 1e-7
        bad += not ok
        print(f"{name:42s} {value:10.2e}  {'ok' if ok else 'FAIL'} (< 1e-7)")
    raise SystemExit(1 if bad else 0)
