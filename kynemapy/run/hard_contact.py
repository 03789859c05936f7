"""Hard (nonsmooth) contact of collision shapes against ground planes (docs/contact.md, "Hard contact").

The points of ``Model.hard_contacts`` (a sphere's centre, a capsule's end spheres, a box's
corners against each plane made with ``ModelBuilder.add_ground_plane(law="hard")``) are enforced
after each smooth step of the engine by the decoupled nonsmooth generalized-α scheme of
:mod:`kynemapy.run.joint_stops` (Brüls, Acary & Cardona, CMAME 2014), in one set with the hard
joint limits.  This module holds the contact side:

* :class:`HardContacts`: the points' geometry at a state (gap, contact point, the three rows
  ``G = [n; t₁; t₂] [I, −(p − x)~]`` of each point over its node's DOFs), and the last step's
  impulses;
* :func:`solve_cone`: the frictional contact problem ``u = D Λ + b`` on the 3×3 blocks of the
  Delassus matrix D (Signorini in the normal row, Coulomb's disk in the tangential ones) by
  projected Gauss–Seidel, compiled (``kynemapy._jit.njit``), allocation-free.
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit
from kynemapy.math.rotations import quaternion_product, rotation_matrices
from kynemapy.model import Model
from kynemapy.model.errors import ModelError

#: the largest number of projected Gauss–Seidel sweeps over the blocks (then a ConvergenceError)
MAX_SWEEPS = 20_000
#: stop the sweeps when no impulse changes by more than this, relative to the largest impulse
SWEEP_TOLERANCE = 1.0e-14


def has_hard_contacts(model: Model) -> bool:
    """Whether ``model`` has points against hard ground planes (``Model.hard_contacts`` with rows)."""
    table = getattr(model, "hard_contacts", None)
    return table is not None and np.asarray(table).shape[0] > 0


@njit
def solve_cone(
    d: np.ndarray,
    b: np.ndarray,
    mu: np.ndarray,
    lam: np.ndarray,
    rho: np.ndarray,
    work: np.ndarray,
    tolerance: float,
    max_sweeps: int,
) -> int:
    """Solve the frictional contact problem of k points by projected Gauss–Seidel over 3×3 blocks.

    With ``u = D Λ + b`` (rows 3i, 3i + 1, 3i + 2: point i's normal and two tangential
    components), find Λ with, for each point i: ``u_N >= 0``, ``Λ_N >= 0``, ``u_N Λ_N = 0``
    (Signorini) and ``|Λ_T| <= μ_i Λ_N`` with ``Λ_T = −μ_i Λ_N u_T / |u_T|`` where ``u_T != 0``
    (Coulomb).  Each sweep updates every point in turn: ``Λ_N := max(0, Λ_N − u_N / D_NN)``,
    then ``Λ_T := proj_{|·| <= μ Λ_N}(Λ_T − u_T / ρ)`` with ρ the largest eigenvalue of the
    point's 2×2 tangential block (a scalar step, so that a fixed point on the disk's rim has
    ``u_T`` exactly opposite to ``Λ_T``: Coulomb's law, not a metric-weighted variant of it).
    A point with ``μ_i = 0`` (or whose tangential block is zero, a joint stop's row) keeps
    ``Λ_T = 0``; a point whose normal diagonal is zero keeps ``Λ = 0``.

    The test is on u, not on Λ: where D is singular (a box on its four corners: four normals on
    three free directions) the split of Λ between the points is not unique and drifts along D's
    null space at round-off level while u no longer changes.

    Parameters
    ----------
    d : (3k, 3k) ndarray of float
        The Delassus matrix D (symmetric positive semi-definite).
    b : (3k,) ndarray of float
        The free term b (u at Λ = 0).
    mu : (k,) ndarray of float
        Coulomb coefficients μ_i >= 0.
    lam : (3k,) ndarray of float
        In: the start (warm start; zeros for none).  Out: the solution Λ.
    rho : (k,) ndarray of float
        Scratch (the tangential steps).
    work : (3k,) ndarray of float
        Scratch (Λ before the sweep).
    tolerance : float
        Stop when a sweep changes no component of u by more than ``tolerance`` times the largest
        |b| (or when b is 0).
    max_sweeps : int
        The most sweeps.

    Returns
    -------
    int
        The sweeps done (``max_sweeps`` + 1 if the tolerance was not reached).
    """
    k = mu.shape[0]
    m = 3 * k
    scale = 0.0
    for j in range(m):
        if abs(b[j]) > scale:
            scale = abs(b[j])
    if scale == 0.0:
        for j in range(m):
            lam[j] = 0.0
        return 0
    for i in range(k):
        a = d[3 * i + 1, 3 * i + 1]
        c = d[3 * i + 2, 3 * i + 2]
        o = d[3 * i + 1, 3 * i + 2]
        rho[i] = 0.5 * (a + c) + np.sqrt(0.25 * (a - c) * (a - c) + o * o)
    for sweep in range(max_sweeps):
        for j in range(m):
            work[j] = lam[j]
        for i in range(k):
            r = 3 * i
            dnn = d[r, r]
            if dnn <= 0.0:
                lam[r] = 0.0
                lam[r + 1] = 0.0
                lam[r + 2] = 0.0
                continue
            un = b[r]
            for j in range(m):
                un += d[r, j] * lam[j]
            new = lam[r] - un / dnn
            if new < 0.0:
                new = 0.0
            lam[r] = new
            if mu[i] <= 0.0 or rho[i] <= 0.0:
                lam[r + 1] = 0.0
                lam[r + 2] = 0.0
                continue
            u1 = b[r + 1]
            u2 = b[r + 2]
            for j in range(m):
                u1 += d[r + 1, j] * lam[j]
                u2 += d[r + 2, j] * lam[j]
            t1 = lam[r + 1] - u1 / rho[i]
            t2 = lam[r + 2] - u2 / rho[i]
            radius = mu[i] * new
            norm = np.sqrt(t1 * t1 + t2 * t2)
            if norm > radius:
                if norm > 0.0:
                    t1 *= radius / norm
                    t2 *= radius / norm
                else:
                    t1 = 0.0
                    t2 = 0.0
            lam[r + 1] = t1
            lam[r + 2] = t2
        change = 0.0
        for j in range(m):
            du = 0.0
            for l in range(m):
                du += d[j, l] * (lam[l] - work[l])
            if abs(du) > change:
                change = abs(du)
        if change <= tolerance * scale:
            return sweep + 1
    return max_sweeps + 1


def tangents(normal: np.ndarray) -> np.ndarray:
    """Two unit tangents (2, 3) of a plane of unit ``normal`` (3,): ``t₁ = e × n / |e × n|`` with
    e the coordinate axis least aligned with n (x, y, z in that order on a tie), ``t₂ = n × t₁``
    (so ``(t₁, t₂, n)`` is right-handed)."""
    e = np.zeros(3)
    e[int(np.argmin(np.abs(normal)))] = 1.0
    t1 = np.cross(e, normal)
    t1 /= np.linalg.norm(t1)
    return np.array([t1, np.cross(normal, t1)])


class HardContacts:
    """The points against hard ground planes of a model, and their impulses in the last step.

    Parameters
    ----------
    model : kynemapy.Model
        A model with ``hard_contacts`` rows (:func:`has_hard_contacts`).

    Attributes
    ----------
    node, shape, plane : (K,) ndarray of int64
        Each point's node, shape id and plane id.
    offset : (K, 3) ndarray of float
        The point's offset from its node at the reference configuration [m] (a sphere's centre,
        a box's corner).
    radius : (K,) ndarray of float
        Its radius [m] (0 for a box corner).
    normal : (K, 3) ndarray of float
        The plane's unit normal n (out of the ground).
    tangent : (K, 2, 3) ndarray of float
        The tangents t₁, t₂ of :func:`tangents` (the friction impulse's components).
    offset_d : (K,) ndarray of float
        The plane's offset d [m] (the plane is ``n · y = d``).
    restitution, friction : (K,) ndarray of float
        Newton's e [-] and Coulomb's μ [-].
    normal_impulse : (K,) ndarray of float
        The velocity jump's normal impulse Λ_N >= 0 of each point in the last step [N s].
    friction_impulse : (K, 2) ndarray of float
        Its friction impulse along t₁, t₂ [N s] (``|Λ_T| <= μ Λ_N``).
    position_impulse : (K,) ndarray of float
        The position correction's normal multiplier ν_N [N s²] (``M U = Gᵀ ν``).
    active : (K,) ndarray of bool
        The points closed at the end of the last step (in the velocity jump's set).
    """

    def __init__(self, model: Model) -> None:
        table = np.asarray(model.hard_contacts, dtype=np.float64)
        self.node = table[:, 0].astype(np.int64)
        self.shape = table[:, 1].astype(np.int64)
        self.plane = table[:, 2].astype(np.int64)
        self.offset = table[:, 3:6].copy()
        self.radius = table[:, 6].copy()
        self.normal = table[:, 7:10].copy()
        self.offset_d = table[:, 10].copy()
        self.restitution = table[:, 11].copy()
        self.friction = table[:, 12].copy()
        self.tangent = np.array([tangents(n) for n in self.normal]).reshape(-1, 2, 3)
        k = self.node.size
        self.x0 = np.asarray(model.x0, dtype=np.float64)[self.node, :3].copy()
        dofs = np.asarray(model.node_dofs, dtype=np.int64)
        self.first = np.asarray(model.node_map, dtype=np.int64)[self.node]
        self.rotates = dofs[self.node] == 6
        self.normal_impulse = np.zeros(k)
        self.friction_impulse = np.zeros((k, 2))
        self.position_impulse = np.zeros(k)
        self.active = np.zeros(k, dtype=bool)

    @property
    def size(self) -> int:
        """The number of points K."""
        return int(self.node.size)

    def clear(self) -> None:
        """Zero the last step's impulses and active flags."""
        self.normal_impulse[:] = 0.0
        self.friction_impulse[:] = 0.0
        self.position_impulse[:] = 0.0
        self.active[:] = False

    def geometry(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points at node displacements ``q`` (N, 7).

        Parameters
        ----------
        q : (N, 7) ndarray of float
            Node displacements [m] and rotation quaternions (w, x, y, z), the state's ``q``.

        Returns
        -------
        gap : (K,) ndarray of float
            ``g = n · c − r − d`` [m] (c the sphere's centre or the corner): negative penetrates.
        point : (K, 3) ndarray of float
            The contact point ``p = c − r n`` [m] (world).
        arm : (K, 3) ndarray of float
            ``p − x`` [m], x the node's position.
        """
        x = self.x0 + q[self.node, :3]
        rot = rotation_matrices(q[self.node, 3:7])
        centre = x + np.einsum("kij,kj->ki", rot, self.offset)
        gap = np.einsum("ki,ki->k", self.normal, centre) - self.radius - self.offset_d
        point = centre - self.radius[:, None] * self.normal
        return gap, point, point - x

    def slip(self, q: np.ndarray, q_start: np.ndarray) -> np.ndarray:
        """How far each contact point slipped along its plane from ``q_start`` to ``q`` [m] (K, 2):
        along t₁, t₂, ``Δc − r φ × n`` with Δc the displacement of the sphere's centre (of the
        corner) as a point of the body and φ the body's rotation vector from ``q_start`` to ``q``
        (``R R_startᵀ = exp(φ~)``).  Zero for a point that sticks, a corner that pivots about
        itself, and a sphere rolling without slip about a fixed axis (exactly, not to O(φ³): a
        rolling sphere's material point at the contact moves on a cycloid).

        Parameters
        ----------
        q, q_start : (N, 7) ndarray of float
            The node displacements [m] and rotation quaternions (w, x, y, z) at the end and the
            start.
        """
        rot = rotation_matrices(q[self.node, 3:7])
        rot_start = rotation_matrices(q_start[self.node, 3:7])
        moved = q[self.node, :3] - q_start[self.node, :3] + np.einsum("kij,kj->ki", rot - rot_start, self.offset)
        # φ: the log map of r ⊗ r_start⁻¹ by atan2 (accurate at small angles), the shorter way round
        turn = quaternion_product(q[self.node, 3:7], q_start[self.node, 3:7] * np.array([1.0, -1.0, -1.0, -1.0]))
        turn *= np.where(turn[:, :1] < 0.0, -1.0, 1.0)
        sin_half = np.linalg.norm(turn[:, 1:], axis=1)
        scale = np.where(
            sin_half > 0.0, 2.0 * np.arctan2(sin_half, turn[:, 0]) / np.where(sin_half > 0.0, sin_half, 1.0), 2.0
        )
        phi = scale[:, None] * turn[:, 1:]
        moved -= self.radius[:, None] * np.cross(phi, self.normal)
        return np.einsum("kij,kj->ki", self.tangent, moved)

    def rows(self, which: np.ndarray, arm: np.ndarray, n: int) -> np.ndarray:
        """The rows (3 k, n) of the points ``which`` (k,) over the n DOFs: for each point
        ``[n; t₁; t₂]`` times ``[I, −(p − x)~]`` on its node's translations and rotations (the
        engine's spatial increment: ``δp = δu + δθ × (p − x)``), so ``G v`` is the contact
        point's velocity along n, t₁, t₂ [m/s].

        Parameters
        ----------
        which : (k,) ndarray of int
            The points.
        arm : (K, 3) ndarray of float
            ``p − x`` of every point (:meth:`geometry`).
        n : int
            The number of DOFs.
        """
        out = np.zeros((which.size, 3, n))
        frames = np.concatenate([self.normal[which, None, :], self.tangent[which]], axis=1)  # (k, 3, 3)
        turns = np.cross(arm[which, None, :], frames)  # (s × a) · ω = a · (ω × s)
        for j, i in enumerate(which):
            f = int(self.first[i])
            out[j, :, f : f + 3] = frames[j]
            if self.rotates[i]:
                out[j, :, f + 3 : f + 6] = turns[j]
        return out.reshape(3 * which.size, n)

    def check_start(self, q: np.ndarray) -> None:
        """Refuse a start with a point inside its hard plane by more than 1e-12 m (``ModelError``
        naming the shape, the plane and the gap)."""
        gap, _, _ = self.geometry(q)
        bad = np.flatnonzero(gap < -1.0e-12)
        if bad.size:
            i = int(bad[0])
            raise ModelError(
                f"shape {int(self.shape[i])} (node {int(self.node[i])}) starts {-float(gap[i]):.9g} m inside hard "
                f"ground plane {int(self.plane[i])}: place it on or above the plane"
            )
