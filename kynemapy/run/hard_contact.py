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
from kynemapy.math.typed import ZERO
from kynemapy.model import Model
from kynemapy.model.errors import ModelError

#: the tolerance of the gaps after the position correction [m] (of the joint stops: [rad or m],
#: relative to max(1, |limit|))
GAP_TOLERANCE = 1.0e-12
#: the largest number of projected Gauss–Seidel sweeps over the blocks (then a ConvergenceError)
MAX_SWEEPS = 20_000
#: stop the sweeps when no impulse changes by more than this, relative to the largest impulse
SWEEP_TOLERANCE = 1.0e-14


def has_hard_contacts(model: Model) -> bool:
    """Whether ``model`` has points against hard ground planes (``Model.hard_contacts`` with rows)."""
    table = getattr(model, "hard_contacts", None)
    return table is not None and np.asarray(table).shape[0] > 0


@njit
def disk_projection(t1: float, t2: float, radius: float) -> tuple[float, float]:
    """The tangential impulse ``(t1, t2)`` [N s] brought onto Coulomb's disk ``|t| <= radius``
    (scaled along itself; zero when ``radius`` is 0), the projection of every projected
    Gauss–Seidel sweep here and in :mod:`kynemapy.run.body_blocks`."""
    norm = np.sqrt(t1 * t1 + t2 * t2)
    if norm > radius:
        if norm > 0.0:
            return t1 * (radius / norm), t2 * (radius / norm)
        return 0.0, 0.0
    return t1, t2


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
    hold_normal: bool = False,
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
    hold_normal : bool, default False
        Keep Λ_N as given and sweep the tangential pairs alone (the friction on the disks of
        given normal impulses: a convex problem, :func:`kynemapy.run.body_coupled.held_rounds`).

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
            new = lam[r]
            if not hold_normal:
                un = b[r]
                for j in range(m):
                    un += d[r, j] * lam[j]
                new = max(lam[r] - un / dnn, 0.0)
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
            t1, t2 = disk_projection(lam[r + 1] - u1 / rho[i], lam[r + 2] - u2 / rho[i], mu[i] * new)
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


@njit
def contact_geometry(
    x0: np.ndarray,
    q: np.ndarray,
    node: np.ndarray,
    offset: np.ndarray,
    radius: np.ndarray,
    normal: np.ndarray,
    offset_d: np.ndarray,
    gap: np.ndarray,
    point: np.ndarray,
    arm: np.ndarray,
) -> float:
    """The points' gaps, contact points and arms at node displacements q (:meth:`HardContacts.geometry`).

    Parameters
    ----------
    x0 : (K, 3) ndarray of float
        The reference positions of each point's node [m].
    q : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z).
    node : (K,) ndarray of int64
        Each point's node.
    offset : (K, 3) ndarray of float
        The point's offset from its node at the reference configuration [m].
    radius : (K,) ndarray of float
        Its radius [m].
    normal : (K, 3) ndarray of float
        The plane's unit normal.
    offset_d : (K,) ndarray of float
        The plane's offset [m].
    gap : (K,) ndarray of float
        Out: ``g = n · c − r − d`` [m].
    point : (K, 3) ndarray of float
        Out: the contact point ``p = c − r n`` [m].
    arm : (K, 3) ndarray of float
        Out: ``p − x`` [m].

    Returns
    -------
    float
        The smallest gap [m] (inf for K = 0).
    """
    smallest = np.inf
    for k in range(node.shape[0]):
        i = node[k]
        w = q[i, 3]
        x = q[i, 4]
        y = q[i, 5]
        z = q[i, 6]
        o0 = offset[k, 0]
        o1 = offset[k, 1]
        o2 = offset[k, 2]
        # the rows of rotation_matrices' R times the offset
        c0 = (1.0 - 2.0 * (y * y + z * z)) * o0 + 2.0 * (x * y - w * z) * o1 + 2.0 * (x * z + w * y) * o2
        c1 = 2.0 * (x * y + w * z) * o0 + (1.0 - 2.0 * (x * x + z * z)) * o1 + 2.0 * (y * z - w * x) * o2
        c2 = 2.0 * (x * z - w * y) * o0 + 2.0 * (y * z + w * x) * o1 + (1.0 - 2.0 * (x * x + y * y)) * o2
        p0 = x0[k, 0] + q[i, 0]
        p1 = x0[k, 1] + q[i, 1]
        p2 = x0[k, 2] + q[i, 2]
        c0 += p0
        c1 += p1
        c2 += p2
        g = normal[k, 0] * c0 + normal[k, 1] * c1 + normal[k, 2] * c2 - radius[k] - offset_d[k]
        gap[k] = g
        if g < smallest:
            smallest = g
        r = radius[k]
        point[k, 0] = c0 - r * normal[k, 0]
        point[k, 1] = c1 - r * normal[k, 1]
        point[k, 2] = c2 - r * normal[k, 2]
        arm[k, 0] = point[k, 0] - p0
        arm[k, 1] = point[k, 1] - p1
        arm[k, 2] = point[k, 2] - p2
    return smallest


@njit
def contact_slip(
    q: np.ndarray,
    q_start: np.ndarray,
    node: np.ndarray,
    offset: np.ndarray,
    radius: np.ndarray,
    normal: np.ndarray,
    tangent: np.ndarray,
    out: np.ndarray,
) -> None:
    """Each point's slip along its plane from ``q_start`` to ``q`` (:meth:`HardContacts.slip`).

    Parameters
    ----------
    q, q_start : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z) at the end and the start.
    node : (K,) ndarray of int64
        Each point's node.
    offset : (K, 3) ndarray of float
        The point's offset from its node at the reference configuration [m].
    radius : (K,) ndarray of float
        Its radius [m].
    normal : (K, 3) ndarray of float
        The plane's unit normal.
    tangent : (K, 2, 3) ndarray of float
        The plane's tangents t₁, t₂.
    out : (K, 2) ndarray of float
        Out: the slip along t₁, t₂ [m].
    """
    for k in range(node.shape[0]):
        i = node[k]
        w, x, y, z = q[i, 3], q[i, 4], q[i, 5], q[i, 6]
        a, b, c, d = q_start[i, 3], q_start[i, 4], q_start[i, 5], q_start[i, 6]
        o0, o1, o2 = offset[k, 0], offset[k, 1], offset[k, 2]
        # (R − R_start) offset, term by term as rotation_matrices
        d0 = (
            ((1.0 - 2.0 * (y * y + z * z)) - (1.0 - 2.0 * (c * c + d * d))) * o0
            + (2.0 * (x * y - w * z) - 2.0 * (b * c - a * d)) * o1
            + (2.0 * (x * z + w * y) - 2.0 * (b * d + a * c)) * o2
        )
        d1 = (
            (2.0 * (x * y + w * z) - 2.0 * (b * c + a * d)) * o0
            + ((1.0 - 2.0 * (x * x + z * z)) - (1.0 - 2.0 * (b * b + d * d))) * o1
            + (2.0 * (y * z - w * x) - 2.0 * (c * d - a * b)) * o2
        )
        d2 = (
            (2.0 * (x * z - w * y) - 2.0 * (b * d - a * c)) * o0
            + (2.0 * (y * z + w * x) - 2.0 * (c * d + a * b)) * o1
            + ((1.0 - 2.0 * (x * x + y * y)) - (1.0 - 2.0 * (b * b + c * c))) * o2
        )
        m0 = q[i, 0] - q_start[i, 0] + d0
        m1 = q[i, 1] - q_start[i, 1] + d1
        m2 = q[i, 2] - q_start[i, 2] + d2
        # turn = r ⊗ conj(r_start), the shorter way round
        tw = w * a + x * b + y * c + z * d
        tx = x * a - w * b + (-y * d + z * c)
        ty = y * a - w * c + (-z * b + x * d)
        tz = z * a - w * d + (-x * c + y * b)
        if tw < 0.0:
            tw, tx, ty, tz = -tw, -tx, -ty, -tz
        sin_half = np.sqrt(tx * tx + ty * ty + tz * tz)
        scale = 2.0
        if sin_half > 0.0:
            scale = 2.0 * np.arctan2(sin_half, tw) / sin_half
        f0, f1, f2 = scale * tx, scale * ty, scale * tz
        n0, n1, n2 = normal[k, 0], normal[k, 1], normal[k, 2]
        r = radius[k]
        m0 -= r * (f1 * n2 - f2 * n1)
        m1 -= r * (f2 * n0 - f0 * n2)
        m2 -= r * (f0 * n1 - f1 * n0)
        for j in range(2):
            out[k, j] = tangent[k, j, 0] * m0 + tangent[k, j, 1] * m1 + tangent[k, j, 2] * m2


@njit
def contact_rows(
    which: np.ndarray,
    arm: np.ndarray,
    normal: np.ndarray,
    tangent: np.ndarray,
    first: np.ndarray,
    rotates: np.ndarray,
    out: np.ndarray,
    row0: int,
) -> None:
    """Write the rows of the points ``which`` into ``out[row0:row0 + 3k]`` (:meth:`HardContacts.rows`).

    Parameters
    ----------
    which : (k,) ndarray of int64
        The points.
    arm : (K, 3) ndarray of float
        ``p − x`` of every point [m].
    normal : (K, 3) ndarray of float
        The planes' unit normals.
    tangent : (K, 2, 3) ndarray of float
        Their tangents t₁, t₂.
    first : (K,) ndarray of int64
        The first DOF of each point's node.
    rotates : (K,) ndarray of bool
        Whether the node has rotational DOFs.
    out : (r, n) ndarray of float
        Out: rows ``row0`` to ``row0 + 3k`` (the DOFs outside the points' nodes are zeroed).
    row0 : int
        The first row written.
    """
    n = out.shape[1]
    for j in range(which.shape[0]):
        i = which[j]
        f = first[i]
        a0, a1, a2 = arm[i, 0], arm[i, 1], arm[i, 2]
        for s in range(3):
            row = row0 + 3 * j + s
            for c in range(n):
                out[row, c] = 0.0
            if s == 0:
                s0, s1, s2 = normal[i, 0], normal[i, 1], normal[i, 2]
            else:
                s0, s1, s2 = tangent[i, s - 1, 0], tangent[i, s - 1, 1], tangent[i, s - 1, 2]
            out[row, f] = s0
            out[row, f + 1] = s1
            out[row, f + 2] = s2
            if rotates[i]:
                # (a × s) · ω = s · (ω × a)
                out[row, f + 3] = a1 * s2 - a2 * s1
                out[row, f + 4] = a2 * s0 - a0 * s2
                out[row, f + 5] = a0 * s1 - a1 * s0


@njit
def lu_factor(a: np.ndarray, lu: np.ndarray, piv: np.ndarray) -> None:
    """LU factorization with partial pivoting of a square matrix (LAPACK's unblocked ``dgetf2``).

    Parameters
    ----------
    a : (n, n) ndarray of float
        The matrix (not changed).
    lu : (n, n) ndarray of float
        Out: L (unit lower, below the diagonal) and U (on and above it) of ``P a = L U``.
    piv : (n,) ndarray of int64
        Out: row j was swapped with row ``piv[j]`` at step j.
    """
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            lu[i, j] = a[i, j]
    for j in range(n):
        p = j
        big = abs(lu[j, j])
        for i in range(j + 1, n):
            if abs(lu[i, j]) > big:
                big = abs(lu[i, j])
                p = i
        piv[j] = p
        if p != j:
            for c in range(n):
                t = lu[j, c]
                lu[j, c] = lu[p, c]
                lu[p, c] = t
        d = lu[j, j]
        if d != 0.0:
            r = 1.0 / d
            for i in range(j + 1, n):
                lu[i, j] *= r
        for i in range(j + 1, n):
            f = lu[i, j]
            if f != 0.0:
                for c in range(j + 1, n):
                    lu[i, c] -= f * lu[j, c]


@njit
def lu_solve(lu: np.ndarray, piv: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    """Solve ``a x = b`` from :func:`lu_factor`'s factors.

    Parameters
    ----------
    lu : (n, n) ndarray of float
        The factors.
    piv : (n,) ndarray of int64
        The row swaps.
    b : (n,) ndarray of float
        The right-hand side (not changed).
    x : (n,) ndarray of float
        Out: the solution.
    """
    n = lu.shape[0]
    for i in range(n):
        x[i] = b[i]
    for j in range(n):
        p = piv[j]
        if p != j:
            t = x[j]
            x[j] = x[p]
            x[p] = t
    for i in range(n):
        s = x[i]
        for c in range(i):
            s -= lu[i, c] * x[c]
        x[i] = s
    for i in range(n - 1, -1, -1):
        s = x[i]
        for c in range(i + 1, n):
            s -= lu[i, c] * x[c]
        x[i] = s / lu[i, i]


@njit
def _delassus(
    mass: np.ndarray, rows: np.ndarray, m3: int, lu: np.ndarray, piv: np.ndarray, resp: np.ndarray, dl: np.ndarray
) -> None:
    """``resp[:, :m3] = M⁻¹ rows[:m3]ᵀ`` and ``dl[:m3, :m3] = rows[:m3] resp[:, :m3]``."""
    n = mass.shape[0]
    lu_factor(mass, lu, piv)
    for c in range(m3):
        lu_solve(lu, piv, rows[c], resp[:, c])
    for a in range(m3):
        for b in range(m3):
            s = 0.0
            for j in range(n):
                s += rows[a, j] * resp[j, b]
            dl[a, b] = s


@njit
def position_step(
    it: int,
    max_iterations: int,
    gap_tolerance: float,
    mass: np.ndarray,
    q: np.ndarray,
    q_start: np.ndarray,
    geo: tuple,
    in_set: np.ndarray,
    nu: np.ndarray,
    scratch: tuple,
    counts: np.ndarray,
) -> int:
    """One Newton iteration of the position correction of points against hard planes, for a model
    of free nodes (no stops, no bilateral constraints: ``M U = Gᵀ ν``).

    Updates the gaps and arms at q, adds the points with ``g <= 0`` to ``in_set``, tests
    convergence (``it > 0``: every gap >= −tol, |g| <= tol where ν_N > 0), else solves the
    frictional problem of :func:`solve_cone` on the total multipliers (warm start ``nu``) with the
    normal rows' gaps and the tangential rows' slips from ``q_start`` (:func:`contact_slip`), and
    writes the increment U (n,) into ``scratch[9]`` and the new multipliers into ``nu``.

    Parameters
    ----------
    it, max_iterations : int
        The iteration (0 first) and the most.
    gap_tolerance : float
        The gaps' tolerance [m].
    mass : (n, n) ndarray of float
        The mass matrix M at q.
    q, q_start : (N, 7) ndarray of float
        The node displacements and quaternions now and at the start of the step.
    geo : tuple
        ``(x0, node, offset, radius, normal, offset_d, tangent, friction, first, rotates)`` of
        :class:`HardContacts`.
    in_set : (K,) ndarray of bool
        The points in the set (updated).
    nu : (K, 3) ndarray of float
        The points' total multipliers ν [N s²] (updated).
    scratch : tuple
        ``(gap, point, arm, slip, cset, rows, lu, piv, resp, u, dl, free, lam, prev, mu, rho, work)``,
        sized for all K points.
    counts : (2,) ndarray of int64
        Out: the points in the set, the sweeps.

    Returns
    -------
    int
        0: converged (nothing changed); 1: U computed; 2: ``it == max_iterations`` without
        convergence.
    """
    x0, node, offset, radius, normal, offset_d, tangent, friction, first, rotates = geo
    gap, point, arm, slip, cset, rows, lu, piv, resp, u, dl, free, lam, prev, mu, rho, work = scratch
    n = mass.shape[0]
    contact_geometry(x0, q, node, offset, radius, normal, offset_d, gap, point, arm)
    k = 0
    for i in range(node.shape[0]):
        if gap[i] <= 0.0:
            in_set[i] = True
        if in_set[i]:
            cset[k] = i
            k += 1
    counts[0] = k
    if it > 0:
        ok = True
        for j in range(k):
            i = cset[j]
            if gap[i] < -gap_tolerance:
                ok = False
            if nu[i, 0] > 0.0 and abs(gap[i]) > gap_tolerance:
                ok = False
        if ok:
            return 0
    if it == max_iterations:
        return 2
    m3 = 3 * k
    contact_rows(cset[:k], arm, normal, tangent, first, rotates, rows, ZERO)
    contact_slip(q, q_start, node, offset, radius, normal, tangent, slip)
    _delassus(mass, rows, m3, lu, piv, resp, dl)
    for j in range(k):
        i = cset[j]
        mu[j] = friction[i]
        for s in range(3):
            prev[3 * j + s] = nu[i, s]
            lam[3 * j + s] = nu[i, s]
    for j in range(k):
        i = cset[j]
        free[3 * j] = gap[i]
        free[3 * j + 1] = slip[i, 0]
        free[3 * j + 2] = slip[i, 1]
    for a in range(m3):
        s = 0.0
        for b in range(m3):
            s += dl[a, b] * prev[b]
        free[a] -= s
    counts[1] = solve_cone(dl[:m3, :m3], free[:m3], mu[:k], lam[:m3], rho[:k], work[:m3], SWEEP_TOLERANCE, MAX_SWEEPS)
    if counts[1] > MAX_SWEEPS:
        return 1
    for j in range(n):
        s = 0.0
        for b in range(m3):
            s += resp[j, b] * (lam[b] - prev[b])
        u[j] = s
    for j in range(k):
        i = cset[j]
        for s in range(3):
            nu[i, s] = lam[3 * j + s]
    return 1


@njit
def velocity_jump(
    gap_tolerance: float,
    mass: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
    v_start: np.ndarray,
    dof_node: np.ndarray,
    dof_component: np.ndarray,
    geo: tuple,
    restitution: np.ndarray,
    in_set: np.ndarray,
    scratch: tuple,
    impulses: tuple,
) -> int:
    """The velocity jump of points against hard planes for a model of free nodes (no stops, no
    bilateral constraints): ``v = ṽ + M⁻¹ Gᵀ Λ`` on the points of ``in_set`` closed at q
    (``g <= tol``), Newton's law ``ġ_N⁺ + e min(ġ_N⁻, 0) >= 0 ⊥ Λ_N >= 0`` (ġ_N⁻ at ``v_start``) and
    Coulomb's cone, by :func:`solve_cone`.

    Parameters
    ----------
    gap_tolerance : float
        A point is closed with ``g <= gap_tolerance`` [m].
    mass : (n, n) ndarray of float
        The mass matrix M at q.
    q : (N, 7) ndarray of float
        The corrected node displacements and quaternions.
    v : (N, 6) ndarray of float
        In: ṽ; out: the velocities after the jump (unchanged when the sweeps fail) [m/s, rad/s].
    v_start : (N, 6) ndarray of float
        The velocities at the start of the step.
    dof_node, dof_component : (n,) ndarray of int64
        Each DOF's node and component.
    geo : tuple
        As :func:`position_step`.
    restitution : (K,) ndarray of float
        Newton's e of each point.
    in_set : (K,) ndarray of bool
        The points in the position correction's set.
    scratch : tuple
        As :func:`position_step` plus ``(vt, vn)`` (n,) each.
    impulses : tuple
        Out: ``(normal_impulse (K,), friction_impulse (K, 2), active (K,))`` of the closed points.

    Returns
    -------
    int
        The sweeps (``MAX_SWEEPS + 1``: not converged, v unchanged); −1 when no point is closed.
    """
    x0, node, offset, radius, normal, offset_d, tangent, friction, first, rotates = geo
    gap, point, arm, _slip, cset, rows, lu, piv, resp, _u, dl, free, lam, _prev, mu, rho, work, vt, vn = scratch
    normal_impulse, friction_impulse, active = impulses
    n = mass.shape[0]
    contact_geometry(x0, q, node, offset, radius, normal, offset_d, gap, point, arm)
    k = 0
    for i in range(node.shape[0]):
        if in_set[i] and gap[i] <= gap_tolerance:
            cset[k] = i
            k += 1
    if k == 0:
        return -1
    m3 = 3 * k
    contact_rows(cset[:k], arm, normal, tangent, first, rotates, rows, ZERO)
    for j in range(n):
        vt[j] = v[dof_node[j], dof_component[j]]
        vn[j] = v_start[dof_node[j], dof_component[j]]
    _delassus(mass, rows, m3, lu, piv, resp, dl)
    for a in range(m3):
        s = 0.0
        for j in range(n):
            s += rows[a, j] * vt[j]
        free[a] = s
        lam[a] = 0.0
    for jj in range(k):
        i = cset[jj]
        mu[jj] = friction[i]
        s = 0.0
        for j in range(n):
            s += rows[3 * jj, j] * vn[j]
        if s > 0.0:
            s = 0.0  # a point leaving the plane at the start has no impact
        free[3 * jj] += restitution[i] * s
    sweeps = solve_cone(dl[:m3, :m3], free[:m3], mu[:k], lam[:m3], rho[:k], work[:m3], SWEEP_TOLERANCE, MAX_SWEEPS)
    if sweeps > MAX_SWEEPS:
        return sweeps
    for j in range(n):
        s = 0.0
        for b in range(m3):
            s += resp[j, b] * lam[b]
        v[dof_node[j], dof_component[j]] = vt[j] + s
    for jj in range(k):
        i = cset[jj]
        normal_impulse[i] = lam[3 * jj]
        friction_impulse[i, 0] = lam[3 * jj + 1]
        friction_impulse[i, 1] = lam[3 * jj + 2]
        active[i] = True
    return sweeps


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
        k = self.node.size
        gap, point, arm = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
        contact_geometry(self.x0, q, self.node, self.offset, self.radius, self.normal, self.offset_d, gap, point, arm)
        return gap, point, arm

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
        out = np.empty((self.node.size, 2))
        contact_slip(q, q_start, self.node, self.offset, self.radius, self.normal, self.tangent, out)
        return out

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
        out = np.empty((3 * which.size, n))
        contact_rows(
            np.asarray(which, dtype=np.int64), arm, self.normal, self.tangent, self.first, self.rotates, out, 0
        )
        return out

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
