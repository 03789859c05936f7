"""A nonsmooth Newton solver of the frictional contact problem on one island of contacts
(docs/contact.md, "Hard contact between bodies").

The problem of :func:`kynemapy.run.body_blocks.solve_blocks`: C contacts, each with a normal row
and two tangential rows of ``G``, ``u = W Λ + b`` with ``W = G M⁻¹ Gᵀ`` (the Delassus matrix,
symmetric positive semi-definite and singular where rows are redundant: a box on four corners),
Signorini's law in the normal row and Coulomb's disk ``|Λ_T| <= μ Λ_N`` in the tangential pair.
Projected Gauss–Seidel need not converge there (it cycles, or creeps at a rate near 1, on
redundant rows); this solver writes the law as Alart and Curnier's equation (Alart & Curnier,
CMAME 92, 1991; Christensen, Klarbring, Pang & Strömberg, IJNME 42, 1998)::

    F_N = Λ_N − max(0, Λ_N − r_N u_N) = 0
    F_T = Λ_T − proj_{|·| <= μ Λ_N}(Λ_T − r_T u_T) = 0

(r_N, r_T > 0 per contact: the inverse of the normal diagonal of W and of the largest eigenvalue
of its tangential 2×2 block, so that a scalar step keeps Coulomb's law exact at a fixed point:
a slipping point's ``Λ_T`` exactly opposite to ``u_T``) and solves ``F(Λ) = 0`` by
Levenberg–Marquardt steps on an element H of the generalized Jacobian of F,
``(Hᵀ H + κ I) d = −Hᵀ F`` with ``κ`` proportional to ``|F|`` (Yamashita & Fukushima, 2001: the
iterates converge quadratically to the set of solutions, which is not a point where W is
singular: a face's load split among its corners), and a backtracking line search on ``½ |F|²``.
The linear algebra is dense (the island's 3C rows): meant for the islands where the sweeps stall.
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit

#: the most Newton iterations
NEWTON_ITERATIONS = 20
#: the most halvings of the step in the line search
LINE_SEARCH_STEPS = 30
#: Armijo's sufficient decrease of ½ |F|²
ARMIJO = 1.0e-4


@njit
def response_columns(na, nb, ja, jb, minv, wa, wb):
    """``M_A⁻¹ J_Aᵀ`` and ``M_B⁻¹ J_Bᵀ`` of C contacts (a body −1, the ground: zero).

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies A and B (−1: none, the ground).
    ja, jb : (C, 3, 6) ndarray of float
        The rows over A's and B's six DOFs.
    minv : (N, 6, 6) ndarray of float
        Each node's inverse mass block.
    wa, wb : (C, 6, 3) ndarray of float
        Out: the columns.
    """
    for c in range(na.shape[0]):
        for r in range(6):
            for s in range(3):
                va = 0.0
                vb = 0.0
                for t in range(6):
                    if na[c] >= 0:
                        va += minv[na[c], r, t] * ja[c, s, t]
                    if nb[c] >= 0:
                        vb += minv[nb[c], r, t] * jb[c, s, t]
                wa[c, r, s] = va
                wb[c, r, s] = vb


@njit
def delassus_dense(
    na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray, wa: np.ndarray,
    wb: np.ndarray, w: np.ndarray,
) -> None:  # fmt: skip
    """The Delassus matrix ``W = G M⁻¹ Gᵀ`` of C contacts, dense.

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies A and B (−1: none, the ground).
    ja, jb : (C, 3, 6) ndarray of float
        The rows over A's and B's six DOFs.
    minv : (N, 6, 6) ndarray of float
        Each node's inverse mass block.
    wa, wb : (C, 6, 3) ndarray of float
        Out: ``M_A⁻¹ J_Aᵀ`` and ``M_B⁻¹ J_Bᵀ`` of each contact.
    w : (3C, 3C) ndarray of float
        Out: W.
    """
    nc = na.shape[0]
    response_columns(na, nb, ja, jb, minv, wa, wb)
    for c in range(nc):
        for d in range(nc):
            for s in range(3):
                for t in range(3):
                    v = 0.0
                    # row s of contact c through each body of c, against column t of contact d
                    for side in range(2):
                        node = na[c] if side == 0 else nb[c]
                        if node < 0:
                            continue
                        j = ja if side == 0 else jb
                        if na[d] == node:
                            for r in range(6):
                                v += j[c, s, r] * wa[d, r, t]
                        if nb[d] == node:
                            for r in range(6):
                                v += j[c, s, r] * wb[d, r, t]
                    w[3 * c + s, 3 * d + t] = v


@njit
def _residual(w, b, mu, rn, rt, lam, u, f):
    """u = W Λ + b and Alart–Curnier's F (both (3C,)); returns ½ |F|² and the largest residual
    in u's units, ``max(|F_N| / r_N, |F_T| / r_T)``."""
    n = b.shape[0]
    for i in range(n):
        v = b[i]
        for j in range(n):
            v += w[i, j] * lam[j]
        u[i] = v
    merit = 0.0
    worst = 0.0
    for c in range(n // 3):
        i = 3 * c
        sigma = lam[i] - rn[c] * u[i]
        f[i] = lam[i] - max(sigma, 0.0)
        if mu[c] > 0.0 and rt[c] > 0.0:
            radius = mu[c] * max(lam[i], 0.0)
            z1 = lam[i + 1] - rt[c] * u[i + 1]
            z2 = lam[i + 2] - rt[c] * u[i + 2]
            norm = np.sqrt(z1 * z1 + z2 * z2)
            if norm > radius:
                scale = radius / norm
                z1 *= scale
                z2 *= scale
            f[i + 1] = lam[i + 1] - z1
            f[i + 2] = lam[i + 2] - z2
            e = max(abs(f[i + 1]), abs(f[i + 2])) / rt[c]
        else:
            f[i + 1] = lam[i + 1]
            f[i + 2] = lam[i + 2]
            e = max(abs(f[i + 1]), abs(f[i + 2])) * (1.0 / rn[c])
        worst = max(worst, abs(f[i]) / rn[c], e)
        merit += f[i] * f[i] + f[i + 1] * f[i + 1] + f[i + 2] * f[i + 2]
    return 0.5 * merit, worst


@njit
def _jacobian(w, mu, rn, rt, lam, u, h):
    """An element H (3C, 3C) of the generalized Jacobian of F at Λ (u = W Λ + b given)."""
    n = lam.shape[0]
    for i in range(n):
        for j in range(n):
            h[i, j] = 0.0
    for c in range(n // 3):
        i = 3 * c
        if lam[i] - rn[c] * u[i] > 0.0:
            for j in range(n):
                h[i, j] = rn[c] * w[i, j]
        else:
            h[i, i] = 1.0
        if not (mu[c] > 0.0 and rt[c] > 0.0):
            h[i + 1, i + 1] = 1.0
            h[i + 2, i + 2] = 1.0
            continue
        radius = mu[c] * max(lam[i], 0.0)
        z1 = lam[i + 1] - rt[c] * u[i + 1]
        z2 = lam[i + 2] - rt[c] * u[i + 2]
        norm = np.sqrt(z1 * z1 + z2 * z2)
        if norm <= radius:
            # sticking: F_T = r_T u_T
            for j in range(n):
                h[i + 1, j] = rt[c] * w[i + 1, j]
                h[i + 2, j] = rt[c] * w[i + 2, j]
            continue
        # slipping: F_T = Λ_T − ρ ẑ, dF_T = dΛ_T − (ρ/|z|)(I − ẑẑᵀ) dz − μ ẑ dΛ_N (Λ_N > 0)
        e1, e2 = z1 / norm, z2 / norm
        k = radius / norm
        p11, p12, p22 = k * (1.0 - e1 * e1), -k * e1 * e2, k * (1.0 - e2 * e2)
        # dz = dΛ_T − r_T (W dΛ)_T
        for j in range(n):
            g1 = -rt[c] * w[i + 1, j]
            g2 = -rt[c] * w[i + 2, j]
            if j == i + 1:
                g1 += 1.0
            if j == i + 2:
                g2 += 1.0
            h[i + 1, j] = -(p11 * g1 + p12 * g2)
            h[i + 2, j] = -(p12 * g1 + p22 * g2)
        h[i + 1, i + 1] += 1.0
        h[i + 2, i + 2] += 1.0
        if lam[i] > 0.0:
            h[i + 1, i] -= mu[c] * e1
            h[i + 2, i] -= mu[c] * e2


@njit
def _cholesky_solve(a, x):
    """Solve ``A x = x`` in place for a symmetric positive definite A (n, n), factored in place
    (its lower triangle); False when a pivot is not positive."""
    n = x.shape[0]
    for j in range(n):
        s = a[j, j]
        for k in range(j):
            s -= a[j, k] * a[j, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        a[j, j] = d
        for i in range(j + 1, n):
            s = a[i, j]
            for k in range(j):
                s -= a[i, k] * a[j, k]
            a[i, j] = s / d
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= a[i, k] * x[k]
        x[i] = s / a[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= a[k, i] * x[k]
        x[i] = s / a[i, i]
    return True


@njit
def newton_contacts(
    na: np.ndarray,
    nb: np.ndarray,
    ja: np.ndarray,
    jb: np.ndarray,
    minv: np.ndarray,
    b: np.ndarray,
    mu: np.ndarray,
    lam: np.ndarray,
    mats: np.ndarray,
    vecs: np.ndarray,
    blocks: np.ndarray,
    tolerance: float,
    max_iterations: int,
) -> tuple:
    """Solve the frictional contact problem of C contacts (one island) by nonsmooth Newton.

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies A and B (−1: none, the ground).
    ja, jb : (C, 3, 6) ndarray of float
        The rows (normal, two tangents) over A's and B's six DOFs.
    minv : (N, 6, 6) ndarray of float
        Each node's inverse mass block.
    b : (C, 3) ndarray of float
        The free term (u at Λ = 0) [m or m/s].
    mu : (C,) ndarray of float
        Coulomb coefficients (0: frictionless, Λ_T = 0).
    lam : (C, 3) ndarray of float
        In: the start (warm start); out: the solution Λ (the best iterate where not converged).
    mats : (3, 3C, 3C) ndarray of float
        Scratch: W, H, the normal matrix.
    vecs : (9, 3C) ndarray of float
        Scratch.
    blocks : (2, C, 6, 3) ndarray of float
        Scratch: ``M⁻¹ Jᵀ`` of each contact's bodies.
    tolerance : float
        Converged when every ``|F_N| / r_N`` and ``|F_T| / r_T`` (u's units) is at most this
        times the largest |b|.
    max_iterations : int
        The most Newton iterations.

    Returns
    -------
    iterations : int
        The Newton iterations done; negated when the tolerance was not met (no descent left,
        or ``max_iterations`` done).
    residual : float
        The largest residual in u's units at the returned Λ (0 at an exact solution).
    """
    delassus_dense(na, nb, ja, jb, minv, blocks[0], blocks[1], mats[0])
    # the scalar parameters r_N, r_T per contact in M⁻¹ Jᵀ's room (spent once W is formed)
    r = blocks[0, :, 0, :2].T
    return newton_delassus(b.reshape(-1), mu, lam.reshape(-1), mats, vecs, r, tolerance, max_iterations)


@njit
def newton_delassus(
    b: np.ndarray, mu: np.ndarray, lam: np.ndarray, mats: np.ndarray, vecs: np.ndarray, r: np.ndarray,
    tolerance: float, max_iterations: int,
) -> tuple:  # fmt: skip
    """:func:`newton_contacts` on a given Delassus matrix W (``mats[0]``): the frictional problem
    ``u = W Λ + b`` (b and Λ (3C,), Λ in: the start, out: the solution or the best iterate; r
    (2, C) scratch for r_N, r_T); the same returns.  Used with W through joints by
    :mod:`kynemapy.run.body_coupled`."""
    nc = mu.shape[0]
    n = 3 * nc
    w, h, k = mats[0], mats[1], mats[2]
    x, u, f, g, step, trial, u_try, f_try, bvec = (
        vecs[0], vecs[1], vecs[2], vecs[3], vecs[4], vecs[5], vecs[6], vecs[7], vecs[8],
    )  # fmt: skip
    scale = 0.0
    for i in range(n):
        x[i] = lam[i]
        bvec[i] = b[i]
        if abs(b[i]) > scale:
            scale = abs(b[i])
    if scale == 0.0:
        for i in range(n):
            lam[i] = 0.0
        return 0, 0.0
    rn = r[0]
    rt = r[1]
    for c in range(nc):
        i = 3 * c
        rn[c] = 1.0 / w[i, i] if w[i, i] > 0.0 else 1.0
        p, o, m = w[i + 1, i + 1], w[i + 1, i + 2], w[i + 2, i + 2]
        big = 0.5 * (p + m) + np.sqrt(0.25 * (p - m) * (p - m) + o * o)
        rt[c] = 1.0 / big if big > 0.0 else 0.0
    merit, worst = _residual(w, bvec, mu, rn, rt, x, u, f)
    target = tolerance * scale
    it = 0
    while worst > target and it < max_iterations:
        it += 1
        _jacobian(w, mu, rn, rt, x, u, h)
        # (Hᵀ H + κ I) step = −Hᵀ F, κ = |F| relative to |Λ| (H is dimensionless)
        size = 0.0
        for i in range(n):
            size = max(size, abs(x[i]))
        kappa = min(np.sqrt(2.0 * merit) / max(size, 1e-300), 1.0) + 1e-15
        for i in range(n):
            s = 0.0
            for r in range(n):
                s += h[r, i] * f[r]
            g[i] = -s
            step[i] = -s
        for i in range(n):
            for j in range(i + 1):
                s = 0.0
                for r in range(n):
                    s += h[r, i] * h[r, j]
                k[i, j] = s
            k[i, i] += kappa
        if not _cholesky_solve(k, step):
            break
        slope = 0.0  # the derivative of ½|F|² along the step: (Hᵀ F) · step
        for i in range(n):
            slope -= g[i] * step[i]
        t = 1.0
        accepted = False
        m_try, w_try = merit, worst
        for _ls in range(LINE_SEARCH_STEPS):
            for i in range(n):
                trial[i] = x[i] + t * step[i]
            m_try, w_try = _residual(w, bvec, mu, rn, rt, trial, u_try, f_try)
            if m_try <= merit + ARMIJO * t * slope or w_try <= target:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        for i in range(n):
            x[i] = trial[i]
            u[i] = u_try[i]
            f[i] = f_try[i]
        merit, worst = m_try, w_try
    for i in range(n):
        lam[i] = x[i]
    if worst <= target:
        return it, worst
    return -max(it, 1), worst
