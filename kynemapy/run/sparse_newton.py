"""The nonsmooth Newton solver of :mod:`kynemapy.run.contact_newton` for large islands of contacts,
with sparse linear algebra (docs/contact.md, "Hard contact between bodies").

The same equations (Alart and Curnier's ``F(Λ) = 0``, the same parameters r_N, r_T per contact),
the same Levenberg–Marquardt steps ``(Hᵀ H + κ I) d = −Hᵀ F`` with ``κ`` proportional to ``|F|``
and the same backtracking line search on ``½ |F|²``, but:

* the Delassus matrix ``W = G M⁻¹ Gᵀ`` is assembled sparse (a contact couples only the
  contacts on its two bodies: a pile's W has a few dozen nonzeros per row);
* the element H of the generalized Jacobian is ``H = A + B W`` with A and B block diagonal (one
  3×3 block per contact: which rows of the law are active, sticking or slipping);
* the Levenberg–Marquardt system is solved in its augmented form
  ``[[I, −H], [−Hᵀ, −κ I]] [r; d] = [F; 0]`` (sparse LU, scipy.sparse.linalg.splu), whose
  condition is that of H, not of ``Hᵀ H``, and whose factors stay as sparse as H.

The Python level is vectorized over the contacts (no loop over them); the cost of an iteration
is one sparse product ``B W`` and one sparse factorization.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from kynemapy.run.contact_newton import ARMIJO, LINE_SEARCH_STEPS


def delassus_sparse(na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray) -> sp.csr_matrix:
    """The Delassus matrix ``W = G M⁻¹ Gᵀ`` (3C, 3C) of C contacts, sparse (CSR).

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies A and B (−1: none, the ground).
    ja, jb : (C, 3, 6) ndarray of float
        The rows (normal, two tangents) over A's and B's six DOFs.
    minv : (N, 6, 6) ndarray of float
        Each node's inverse mass block.

    Returns
    -------
    scipy.sparse.csr_matrix
        W, rows and columns ordered contact by contact (normal, t₁, t₂).
    """
    c = na.size
    nodes = np.unique(np.concatenate([na, nb]))
    nodes = nodes[nodes >= 0]
    where = np.full(max(int(nodes.max(initial=-1)) + 1, 1), -1, dtype=np.int64)
    where[nodes] = np.arange(nodes.size)
    rows, cols, vals = [], [], []
    base = np.broadcast_to(np.arange(3 * c).reshape(c, 3, 1), (c, 3, 6))
    for node, j in ((na, ja), (nb, jb)):
        has = node >= 0
        col = 6 * where[np.maximum(node, 0)][:, None, None] + np.arange(6)[None, None, :]
        rows.append(base[has].ravel())
        cols.append(np.broadcast_to(col, (c, 3, 6))[has].ravel())
        vals.append(j[has].ravel())
    g = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(3 * c, 6 * nodes.size)
    )
    k = nodes.size
    block = sp.bsr_matrix((minv[nodes], np.arange(k), np.arange(k + 1)), shape=(6 * k, 6 * k)).tocsr()
    return (g @ (block @ g.T)).tocsr()


def _residual(
    w: sp.csr_matrix, b: np.ndarray, mu: np.ndarray, rn: np.ndarray, rt: np.ndarray, x: np.ndarray
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """``½ |F|²``, the largest residual in u's units, u = W Λ + b (3C,) and F (3C,) at Λ = x."""
    u = w @ x + b
    lam = x.reshape(-1, 3)
    uu = u.reshape(-1, 3)
    f = np.empty_like(lam)
    f[:, 0] = lam[:, 0] - np.maximum(lam[:, 0] - rn * uu[:, 0], 0.0)
    fric = (mu > 0.0) & (rt > 0.0)
    radius = mu * np.maximum(lam[:, 0], 0.0)
    z = lam[:, 1:] - rt[:, None] * uu[:, 1:]
    norm = np.hypot(z[:, 0], z[:, 1])
    out = norm > radius
    z[out] *= (radius[out] / norm[out])[:, None]
    f[:, 1:] = np.where(fric[:, None], lam[:, 1:] - z, lam[:, 1:])
    tangential = np.max(np.abs(f[:, 1:]), axis=1) / np.where(fric, rt, rn)
    worst = float(np.max(np.maximum(np.abs(f[:, 0]) / rn, tangential), initial=0.0))
    f = f.ravel()
    return 0.5 * float(f @ f), worst, u, f


def _jacobian(
    w: sp.csr_matrix, mu: np.ndarray, rn: np.ndarray, rt: np.ndarray, x: np.ndarray, u: np.ndarray
) -> sp.csr_matrix:
    """The element ``H = A + B W`` (3C, 3C) of the generalized Jacobian of F at Λ = x (u = W Λ + b)."""
    c = mu.size
    lam = x.reshape(-1, 3)
    uu = u.reshape(-1, 3)
    a = np.zeros((c, 3, 3))
    bb = np.zeros((c, 3, 3))
    active = lam[:, 0] - rn * uu[:, 0] > 0.0
    bb[active, 0, 0] = rn[active]
    a[~active, 0, 0] = 1.0
    fric = (mu > 0.0) & (rt > 0.0)
    a[~fric, 1, 1] = 1.0
    a[~fric, 2, 2] = 1.0
    radius = mu * np.maximum(lam[:, 0], 0.0)
    z = lam[:, 1:] - rt[:, None] * uu[:, 1:]
    norm = np.hypot(z[:, 0], z[:, 1])
    stick = fric & (norm <= radius)
    bb[stick, 1, 1] = rt[stick]
    bb[stick, 2, 2] = rt[stick]
    # slipping: F_T = Λ_T − ρ ẑ, dF_T = (I − P) dΛ_T + r_T P (W dΛ)_T − μ ẑ dΛ_N (Λ_N > 0),
    # P = (ρ/|z|)(I − ẑẑᵀ)
    slip = np.flatnonzero(fric & (norm > radius))
    if slip.size:
        e = z[slip] / norm[slip, None]
        k = radius[slip] / norm[slip]
        p = k[:, None, None] * (np.eye(2)[None] - e[:, :, None] * e[:, None, :])
        a[slip, 1:, 1:] = np.eye(2)[None] - p
        bb[slip, 1:, 1:] = rt[slip, None, None] * p
        loaded = lam[slip, 0] > 0.0
        a[slip[loaded], 1:, 0] = -mu[slip[loaded], None] * e[loaded]
    index, ptr = np.arange(c), np.arange(c + 1)
    big_a = sp.bsr_matrix((a, index, ptr), shape=(3 * c, 3 * c))
    big_b = sp.bsr_matrix((bb, index, ptr), shape=(3 * c, 3 * c))
    return (big_a.tocsr() + big_b.tocsr() @ w).tocsr()


def newton_sparse(
    na: np.ndarray,
    nb: np.ndarray,
    ja: np.ndarray,
    jb: np.ndarray,
    minv: np.ndarray,
    b: np.ndarray,
    mu: np.ndarray,
    lam: np.ndarray,
    tolerance: float,
    max_iterations: int,
) -> tuple[int, float]:
    """Solve the frictional contact problem of C contacts (one island) by nonsmooth Newton, sparse.

    The problem, the iteration and the result of
    :func:`kynemapy.run.contact_newton.newton_contacts`, with sparse linear algebra (this module's
    docstring).

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
        In: the start; out: the solution Λ (the best iterate where not converged).
    tolerance : float
        Converged when every ``|F_N| / r_N`` and ``|F_T| / r_T`` (u's units) is at most this
        times the largest |b|.
    max_iterations : int
        The most Newton iterations.

    Returns
    -------
    iterations : int
        The Newton iterations done; negated when the tolerance was not met.
    residual : float
        The largest residual in u's units at the returned Λ.
    """
    c = na.size
    n = 3 * c
    scale = float(np.max(np.abs(b), initial=0.0))
    if scale == 0.0:
        lam[...] = 0.0
        return 0, 0.0
    w = delassus_sparse(na, nb, ja, jb, minv)
    diag = w.diagonal().reshape(-1, 3)
    rn = np.where(diag[:, 0] > 0.0, 1.0 / np.where(diag[:, 0] > 0.0, diag[:, 0], 1.0), 1.0)
    p, m = diag[:, 1], diag[:, 2]
    o = np.asarray(w[np.arange(1, n, 3), np.arange(2, n, 3)]).ravel()
    big = 0.5 * (p + m) + np.sqrt(0.25 * (p - m) ** 2 + o * o)
    rt = np.where(big > 0.0, 1.0 / np.where(big > 0.0, big, 1.0), 0.0)
    bvec = np.ascontiguousarray(b, dtype=np.float64).ravel()
    x = lam.astype(np.float64).ravel()
    merit, worst, u, f = _residual(w, bvec, mu, rn, rt, x)
    target = tolerance * scale
    eye = sp.identity(n, format="csr")
    it = 0
    while worst > target and it < max_iterations:
        it += 1
        h = _jacobian(w, mu, rn, rt, x, u)
        kappa = min(np.sqrt(2.0 * merit) / max(float(np.max(np.abs(x))), 1e-300), 1.0) + 1e-15
        system = sp.bmat([[eye, -h], [-h.T, -kappa * eye]], format="csc")
        try:
            step = spla.splu(system).solve(np.concatenate([f, np.zeros(n)]))[n:]
        except RuntimeError:  # a singular factor
            break
        if not np.all(np.isfinite(step)):
            break
        slope = float((h.T @ f) @ step)  # the derivative of ½|F|² along the step: (Hᵀ F) · step
        t = 1.0
        accepted = False
        for _ls in range(LINE_SEARCH_STEPS):
            trial = x + t * step
            m_try, w_try, u_try, f_try = _residual(w, bvec, mu, rn, rt, trial)
            if m_try <= merit + ARMIJO * t * slope or w_try <= target:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        x, u, f, merit, worst = trial, u_try, f_try, m_try, w_try
    lam[...] = x.reshape(-1, 3)
    if worst <= target:
        return it, worst
    return -max(it, 1), worst
