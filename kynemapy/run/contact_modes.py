"""The frictional contact problem of a few points through joints, compiled: Coulomb's residual,
Newton's method with the contact modes held, and the enumeration of the modes
(:mod:`kynemapy.run.body_coupled`'s last finishers, docs/contact.md "Bodies with joints").

The problem is ``u = D Λ + b`` over C points (3C rows: each point's normal, then its two
tangents), with Signorini's law in the normal row and Coulomb's disk ``|Λ_T| <= μ Λ_N`` in the
tangential pair; D (3C, 3C) is the dense Delassus matrix through the joints, symmetric positive
semi-definite and singular where points are redundant (a face on a face).  With each point's
mode held (open: ``Λ = 0``; sticking: ``u = 0``; slipping: ``u_N = 0`` and Λ_T on its disk's rim
against ``u_T``) the laws are smooth equations, solved by Newton's method with least-norm steps
(:func:`least_norm_solve`: a symmetric start stays symmetric, and redundant rows get the
least-norm split).  :func:`search_modes` tries sets of modes in a given order until one meets
every law.

Every kernel writes into work arrays its caller passes (no allocation).
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit

#: the most Newton steps of :func:`polish`
NEWTON_STEPS = 10
#: a solution meets the laws where :func:`coulomb_residual` is at most this
HELD_TOLERANCE = 1.0e-10
#: the least-norm solves treat R's diagonal entries up to this times its largest as zero (the
#: relative condition numpy's ``lstsq`` applies to singular values, ``rcond``)
RCOND = 1.0e-13


@njit
def least_norm_solve(
    a: np.ndarray, rhs: np.ndarray, x: np.ndarray, perm: np.ndarray, tau: np.ndarray, rcond: float
) -> int:
    """The least-squares solution of least norm of ``a x = rhs`` by a complete orthogonal
    decomposition (as LAPACK's ``xGELSY``): Householder QR with column pivoting
    ``a P = Q R``, R's rank r the diagonal entries above ``rcond`` times the first, then R's
    first r rows reduced to ``[T 0]`` by Householder reflections from the right (``xTZRZF``)
    and ``x = P Z [T⁻¹ (Qᵀ rhs)[:r]; 0]``.

    Parameters
    ----------
    a : (n, n) ndarray of float
        The matrix; overwritten by the factors.
    rhs : (n,) ndarray of float
        The right-hand side; overwritten (work).
    x : (n,) ndarray of float
        Out: the solution.
    perm : (n,) ndarray of int64
        Work: the column permutation.
    tau : (n,) ndarray of float
        Work: the reflections' factors.
    rcond : float
        The relative rank threshold.

    Returns
    -------
    int
        The rank r.
    """
    n = a.shape[0]
    for j in range(n):
        perm[j] = j
    rank = n
    for j in range(n):
        # the pivot: the remaining column of largest norm below row j (norms computed afresh: n is small)
        best, p = -1.0, j
        for col in range(j, n):
            s = 0.0
            for i in range(j, n):
                s += a[i, col] * a[i, col]
            if s > best:
                best, p = s, col
        if p != j:
            for i in range(n):
                a[i, j], a[i, p] = a[i, p], a[i, j]
            perm[j], perm[p] = perm[p], perm[j]
        alpha = a[j, j]
        sigma = 0.0
        for i in range(j + 1, n):
            sigma += a[i, j] * a[i, j]
        if sigma == 0.0 and alpha == 0.0:
            rank = j  # every remaining column is zero
            break
        if sigma == 0.0:
            continue  # already triangular in this column: no reflection
        norm = np.sqrt(alpha * alpha + sigma)
        beta = -norm if alpha >= 0.0 else norm
        scale = 1.0 / (alpha - beta)
        for i in range(j + 1, n):
            a[i, j] *= scale
        t = (beta - alpha) / beta
        a[j, j] = beta
        # H = I − t v vᵀ, v = (1, a[j+1:, j]), on the later columns and on rhs
        for col in range(j + 1, n):
            w = a[j, col]
            for i in range(j + 1, n):
                w += a[i, j] * a[i, col]
            w *= t
            a[j, col] -= w
            for i in range(j + 1, n):
                a[i, col] -= w * a[i, j]
        w = rhs[j]
        for i in range(j + 1, n):
            w += a[i, j] * rhs[i]
        w *= t
        rhs[j] -= w
        for i in range(j + 1, n):
            rhs[i] -= w * a[i, j]
    if rank > 0:
        first = abs(a[0, 0])
        for j in range(rank):
            if not abs(a[j, j]) > rcond * first:
                rank = j
                break
    r = rank
    # R's rows 0..r−1 to [T 0]: row k's entries in columns r..n−1 annihilated by a reflection on
    # columns {k, r..n−1} (rows below k have none left); the vectors kept in those entries
    for k in range(r - 1, -1, -1):
        alpha = a[k, k]
        sigma = 0.0
        for col in range(r, n):
            sigma += a[k, col] * a[k, col]
        if sigma == 0.0:
            tau[k] = 0.0
            continue
        norm = np.sqrt(alpha * alpha + sigma)
        beta = -norm if alpha >= 0.0 else norm
        scale = 1.0 / (alpha - beta)
        for col in range(r, n):
            a[k, col] *= scale
        t = (beta - alpha) / beta
        tau[k] = t
        a[k, k] = beta
        for i in range(k):
            w = a[i, k]
            for col in range(r, n):
                w += a[i, col] * a[k, col]
            w *= t
            a[i, k] -= w
            for col in range(r, n):
                a[i, col] -= w * a[k, col]
    # z = [T⁻¹ c; 0], then x̃ = H_{r−1} ⋯ H_0 z, x = P x̃ (z kept in rhs)
    for i in range(r - 1, -1, -1):
        s = rhs[i]
        for col in range(i + 1, r):
            s -= a[i, col] * rhs[col]
        rhs[i] = s / a[i, i]
    for i in range(r, n):
        rhs[i] = 0.0
    if r < n:
        for k in range(r):
            t = tau[k]
            if t == 0.0:
                continue
            w = rhs[k]
            for col in range(r, n):
                w += a[k, col] * rhs[col]
            w *= t
            rhs[k] -= w
            for col in range(r, n):
                rhs[col] -= w * a[k, col]
    for j in range(n):
        x[perm[j]] = rhs[j]
    return rank


@njit
def coulomb_residual(
    delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray, floor: float, u: np.ndarray
) -> float:
    """How far Λ (3C,) is from solving ``u = D Λ + b`` with Signorini's and Coulomb's laws, relative
    to the largest |b| (u's rows) and to the largest Λ_N (the impulses' conditions): the largest of
    −u_N, min(|u_N|, Λ_N) (complementarity), −Λ_N, ``|Λ_T| − μ Λ_N``, and the tangential u's
    component not opposite to Λ_T (all of u_T where the point sticks inside its disk), a point's
    slip counting as far as it carries load (relative to the largest Λ_N).  u's violations up to
    ``floor`` [the units of b] count as none.  Infinite where Λ or u is not finite.

    Parameters
    ----------
    delassus : (3C, 3C) ndarray of float
    b : (3C,) ndarray of float
    mu : (C,) ndarray of float
    lam : (3C,) ndarray of float
    floor : float
    u : (3C,) ndarray of float
        Out: ``D Λ + b`` (always written: :func:`polish` takes its next step from it).
    """
    n = b.shape[0]
    c = mu.shape[0]
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(b[i]))
    big = 0.0
    for i in range(c):
        big = max(big, lam[3 * i])
    big = max(big, 1e-300)
    for i in range(n):
        s = b[i]
        for k in range(n):
            s += delassus[i, k] * lam[k]
        u[i] = s
    if scale == 0.0:
        return 0.0
    for i in range(n):
        if not (np.isfinite(u[i]) and np.isfinite(lam[i])):
            return np.inf
    worst = 0.0
    for i in range(c):
        r = 3 * i
        ln, l1, l2 = lam[r], lam[r + 1], lam[r + 2]
        un, u1, u2 = u[r], u[r + 1], u[r + 2]
        size = np.sqrt(l1 * l1 + l2 * l2)
        rim = mu[i] > 0.0 and size >= (1.0 - 1e-9) * mu[i] * ln and size > 0.0
        d1, d2 = (l1 / size, l2 / size) if rim else (0.0, 0.0)
        along = u1 * d1 + u2 * d2
        a1, a2 = u1 - along * d1, u2 - along * d2
        load = max(ln, 0.0) / big if mu[i] > 0.0 else 0.0
        slip_wrong = max((along if rim else 0.0) - floor, 0.0) / scale
        worst = max(worst, (-un - floor) / scale)
        worst = max(worst, min(max(abs(un) - floor, 0.0) / scale, max(ln, 0.0) / big))
        worst = max(worst, min(max(np.sqrt(a1 * a1 + a2 * a2) - floor, 0.0) / scale, load))
        worst = max(worst, min(slip_wrong, load))
        worst = max(worst, -ln / big)
        worst = max(worst, (size - mu[i] * ln) / big)
    return worst


@njit
def polish(
    delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, x: np.ndarray, loaded: np.ndarray, rim: np.ndarray,
    jac: np.ndarray, f: np.ndarray, dx: np.ndarray, u: np.ndarray, perm: np.ndarray, tau: np.ndarray,
) -> bool:  # fmt: skip
    """Newton's method on the laws of ``u = D Λ + b`` with the points' modes held, from Λ = x
    (3C,), updated in place: each loaded point's ``u_N = 0``; inside its disk ``u_T = 0``, on its
    rim ``Λ_T + μ Λ_N u_T / |u_T| = 0``; an unloaded point's ``Λ = 0``; each step the least-norm
    solution of the linearized equations (:func:`least_norm_solve`).  True once
    :func:`coulomb_residual` is at most :data:`HELD_TOLERANCE` (within :data:`NEWTON_STEPS`);
    False where it is not, or a rim point's slip is zero.

    Parameters
    ----------
    delassus : (3C, 3C) ndarray of float
    b, x : (3C,) ndarray of float
    mu : (C,) ndarray of float
    loaded, rim : (C,) ndarray of bool
        The loaded points, and those of them on their rims.
    jac : (3C, 3C) ndarray of float
        Work.
    f, dx, u : (3C,) ndarray of float
        Work.
    perm : (3C,) ndarray of int64
        Work.
    tau : (3C,) ndarray of float
        Work.
    """
    n = b.shape[0]
    c = mu.shape[0]
    for i in range(n):  # u = D x + b; after each step, coulomb_residual leaves the new x's in u
        s = b[i]
        for k in range(n):
            s += delassus[i, k] * x[k]
        u[i] = s
    for _ in range(NEWTON_STEPS):
        for i in range(c):
            if rim[i] and np.sqrt(u[3 * i + 1] ** 2 + u[3 * i + 2] ** 2) == 0.0:
                return False
        for i in range(n):
            f[i] = x[i]
            for k in range(n):
                jac[i, k] = 0.0
            jac[i, i] = 1.0
        for i in range(c):
            if not loaded[i]:
                continue
            r = 3 * i
            f[r] = u[r]
            for k in range(n):
                jac[r, k] = delassus[r, k]
            if mu[i] <= 0.0:
                continue
            if not rim[i]:
                for row in (r + 1, r + 2):
                    f[row] = u[row]
                    for k in range(n):
                        jac[row, k] = delassus[row, k]
                continue
            slip = np.sqrt(u[r + 1] ** 2 + u[r + 2] ** 2)
            h1, h2 = u[r + 1] / slip, u[r + 2] / slip
            g = mu[i] * x[r]
            f[r + 1] = x[r + 1] + g * h1
            f[r + 2] = x[r + 2] + g * h2
            # d(μ Λ_N û)/dΛ = μ Λ_N / |u_T| (I − û ûᵀ) D_T + μ û e_N ᵀ, plus the identity on Λ_T
            w = g / slip
            p11, p12, p22 = w * (1.0 - h1 * h1), -w * h1 * h2, w * (1.0 - h2 * h2)
            for k in range(n):
                t1, t2 = delassus[r + 1, k], delassus[r + 2, k]
                jac[r + 1, k] = p11 * t1 + p12 * t2
                jac[r + 2, k] = p12 * t1 + p22 * t2
            jac[r + 1, r + 1] += 1.0
            jac[r + 2, r + 2] += 1.0
            jac[r + 1, r] += mu[i] * h1
            jac[r + 2, r] += mu[i] * h2
        for i in range(n):
            f[i] = -f[i]
        least_norm_solve(jac, f, dx, perm, tau, RCOND)
        for i in range(n):
            x[i] += dx[i]
        if coulomb_residual(delassus, b, mu, x, 0.0, u) <= HELD_TOLERANCE:
            return True
    return False


@njit
def search_modes(
    delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray, modes: np.ndarray, toward: np.ndarray,
    guess: np.ndarray, x: np.ndarray, loaded: np.ndarray, rim: np.ndarray, jac: np.ndarray, work: np.ndarray,
    perm: np.ndarray,
) -> int:  # fmt: skip
    """The sets of modes ``modes`` tried in their order, each from Λ = ``lam`` (3C,) with the open
    points' Λ zero, a newly loaded point's Λ_N ``guess``, and each rim's friction ``−μ Λ_N`` along
    ``toward``, by :func:`polish`: the index of the first that meets every law (its Λ in x),
    else −1.

    Parameters
    ----------
    delassus : (3C, 3C) ndarray of float
    b, lam : (3C,) ndarray of float
    mu, guess : (C,) ndarray of float
    modes : (K, C) ndarray of int64
        Each point's mode per set: 0 open, 1 sticking, 2 slipping on its rim.
    toward : (C, 2) ndarray of float
        The unit direction of a new rim's friction (zero where none).
    x : (3C,) ndarray of float
        Out.
    loaded, rim : (C,) ndarray of bool
        Work.
    jac : (3C, 3C) ndarray of float
        Work.
    work : (4, 3C) ndarray of float
        Work.
    perm : (3C,) ndarray of int64
        Work.
    """
    c = mu.shape[0]
    for m in range(modes.shape[0]):
        for i in range(c):
            mode = modes[m, i]
            loaded[i] = mode > 0
            rim[i] = mode == 2
            r = 3 * i
            if not loaded[i]:
                x[r] = x[r + 1] = x[r + 2] = 0.0
                continue
            x[r], x[r + 1], x[r + 2] = lam[r], lam[r + 1], lam[r + 2]
            if x[r] <= 0.0:
                x[r] = guess[i]
            if rim[i]:
                g = mu[i] * x[r]
                x[r + 1] = -g * toward[i, 0]
                x[r + 2] = -g * toward[i, 1]
        if polish(delassus, b, mu, x, loaded, rim, jac, work[0], work[1], work[2], perm, work[3]):
            return m
    return -1
