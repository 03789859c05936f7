"""The frictional contact problem of bodies at rest, solved exactly (docs/contact.md, "Hard contact
between bodies", "A pile of boxes").

Where the bodies of a pile rest, every contact of the frictional problem ``u = W Λ + b`` sticks
(``u = 0``) and the impulses are not unique (a face on a face: four corners on three free
directions), which is where projected Gauss–Seidel creeps and the nonsmooth Newton iteration can
stall.  Such a solution is found exactly, as a finite active-set problem, through the friction
pyramid: each contact's impulse a non-negative combination of ``K`` edges of an inner pyramid of
its cone, ``Λ_c = Σ_k β_ck (1, μ cos θ_k, μ sin θ_k)``, ``θ_k = 2π k / K``, and the rows
``u_ck = (n + μ cos θ_k t₁ + μ sin θ_k t₂) · u_c``.  The problem

    u_ck = Σ G_ck M⁻¹ G_dlᵀ β_dl + b_ck >= 0,  β >= 0,  β u = 0

is the optimality condition of the convex program ``min ½ Λᵀ W Λ + bᵀ Λ`` over the pyramids
(Anitescu's cone complementarity with the pyramid for the cone), a normal problem of the
pyramid's edges solved by :func:`kynemapy.run.body_blocks.normal_lcp` (Lawson and Hanson's
least-distance program; the bodies' motion is unique).  Where some Λ in the pyramids sticks
everywhere (``u_T = 0``, Signorini's law in the normal rows), the bodies' motion it gives is
that minimizer's, so the solution found sticks too: then Coulomb's law holds exactly (sticking,
``|Λ_T| <= μ Λ_N``), and the caller takes it; where it slips somewhere, the program's relaxation
(a slipping point lifts off by ``μ |u_T|``) is not Coulomb's law and the caller solves on.
"""

from __future__ import annotations

import numpy as np

from kynemapy.run.body_blocks import normal_lcp
from kynemapy.run.nnls import WarmStarts

#: the edges of each contact's friction pyramid (inscribed in the cone: the friction it allows
#: is at least ``μ cos(π / K)`` in every direction, 0.981 μ for 16)
PYRAMID_EDGES = 16
#: the edges of the finer pyramid an island at rest is solved on again where its solution on
#: :data:`PYRAMID_EDGES` slipped (0.9988 μ in every direction): bodies at rest whose friction is
#: within a few per cent of the cone, outside the coarser pyramid (docs/contact.md)
FINE_PYRAMID_EDGES = 64


def pyramid_edges(mu: np.ndarray, edges: int = PYRAMID_EDGES) -> tuple[np.ndarray, np.ndarray]:
    """The edges of the contacts' inner friction pyramids: ``edges`` per contact with friction,
    the normal alone for a frictionless one.

    Parameters
    ----------
    mu : (C,) ndarray of float
        Coulomb coefficients.
    edges : int, optional
        The edges of each pyramid (default :data:`PYRAMID_EDGES`).

    Returns
    -------
    owner : (E,) ndarray of int64
        Each edge's contact.
    edge : (E, 3) ndarray of float
        ``(1, μ cos θ_k, μ sin θ_k)`` in the contact's (normal, tangent, tangent) frame.
    """
    k = edges
    theta = 2.0 * np.pi * np.arange(k) / k
    count = np.where(mu > 0.0, k, 1)
    owner = np.repeat(np.arange(mu.size), count)
    which = np.arange(owner.size) - np.repeat(np.cumsum(count) - count, count)
    edge = np.zeros((owner.size, 3))
    edge[:, 0] = 1.0
    edge[:, 1] = mu[owner] * np.cos(theta[which])
    edge[:, 2] = mu[owner] * np.sin(theta[which])
    return owner, edge


def pyramid_lcp(
    na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, chol: np.ndarray, b: np.ndarray, mu: np.ndarray,
    island: np.ndarray, edges: int = PYRAMID_EDGES, keys: np.ndarray | None = None, warm: WarmStarts | None = None,
    kind: object = None,
) -> np.ndarray | None:  # fmt: skip
    """The frictional problem on inner friction pyramids, exactly (this module's docstring).

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies A and B (−1: none, the ground).
    ja, jb : (C, 3, 6) ndarray of float
        The rows (normal, two tangents) over A's and B's six DOFs.
    chol : (N, 6, 6) ndarray of float
        Each node's lower Cholesky factor of its inverse mass block.
    b : (C, 3) ndarray of float
        The free term (u at Λ = 0) [m or m/s].
    mu : (C,) ndarray of float
        Coulomb coefficients (0: the normal row alone).
    island : (C,) ndarray of int64
        Each contact's island (:func:`kynemapy.run.body_blocks.contact_islands`).
    edges : int, optional
        The edges of each contact's pyramid (default :data:`PYRAMID_EDGES`).
    keys, warm, kind : optional
        Each contact's key (C,) int64 and the warm starts of the programs of ``kind``
        (:func:`~kynemapy.run.body_blocks.normal_lcp`; an edge's key: its contact's key times
        ``edges + 1`` plus its place in the pyramid).

    Returns
    -------
    (C, 3) ndarray of float or None
        Λ (normal, two tangents) [the units of b times those of W⁻¹]; None when the program has
        no solution.
    """
    owner, edge = pyramid_edges(mu, edges)
    edge_keys = None
    if keys is not None:
        edge_keys = keys[owner] * (edges + 1) + np.arange(owner.size) - np.searchsorted(owner, owner)
    beta = normal_lcp(
        na[owner], nb[owner], np.einsum("es,esr->er", edge, ja[owner]), np.einsum("es,esr->er", edge, jb[owner]),
        chol, np.einsum("es,es->e", edge, b[owner]), island[owner], edge_keys, warm, kind,
    )  # fmt: skip
    if beta is None:
        return None
    out = np.zeros((na.size, 3))
    np.add.at(out, owner, beta[:, None] * edge)
    return out


#: the most pivots of :func:`lemke`, times the LCP's size
LEMKE_PIVOTS = 10


def lemke(m: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """Lemke's complementary pivoting (covering vector of ones) on the LCP ``w = M z + q >= 0``,
    ``z >= 0``, ``wᵀ z = 0``: z (n,), or None on a secondary ray or after ``LEMKE_PIVOTS · n``
    pivots.  Where M is copositive-plus (as :func:`pyramid_coulomb`'s), it ends at a solution
    whenever the LCP is feasible (Cottle, Pang & Stone, The Linear Complementarity Problem,
    1992, §4.4); q scaled to 1 at most; ties in the ratio test go to the artificial variable."""
    n = q.size
    if np.all(q >= 0.0):
        return np.zeros(n)
    # the tableau [I, −M, −1 | q] over w (0..n−1), z (n..2n−1) and the artificial z₀ (2n)
    table = np.hstack([np.eye(n), -m, -np.ones((n, 1)), q[:, None]])
    basis = np.arange(n)

    def pivot(row: int, col: int) -> int:
        table[row] /= table[row, col]
        column = table[:, col].copy()
        column[row] = 0.0
        table[...] -= np.outer(column, table[row])
        out, basis[row] = int(basis[row]), col
        return out

    leaving = pivot(int(np.argmin(q)), 2 * n)
    for _ in range(LEMKE_PIVOTS * n):
        entering = leaving + n if leaving < n else leaving - n  # the complement of the one that left
        col = table[:, entering]
        rows = np.flatnonzero(col > 1e-12 * max(float(np.max(np.abs(col))), 1e-300))
        if rows.size == 0:
            return None  # a secondary ray
        ratio = table[rows, -1] / col[rows]
        # (absolute: q is scaled to 1, and the degenerate ties are at round-off of 0)
        tied = rows[ratio <= ratio.min() + 1e-12 * max(1.0, abs(float(ratio.min())))]
        artificial = tied[basis[tied] == 2 * n]
        leaving = pivot(int(artificial[0] if artificial.size else tied[0]), entering)
        if leaving == 2 * n:
            z = np.zeros(2 * n + 1)
            z[basis] = table[:, -1]
            return np.maximum(z[n : 2 * n], 0.0)
    return None


def pyramid_coulomb(delassus: np.ndarray, b: np.ndarray, mu: np.ndarray) -> np.ndarray | None:
    """The frictional problem ``u = D Λ + b`` (D dense, symmetric positive semi-definite) with
    Coulomb's law on inner friction pyramids, maximal dissipation included: Λ (3C,), else None.

    Stewart and Trinkle's LCP (IJNME 39, 1996; Anitescu and Potra, Nonlinear Dynamics 14, 1997):
    each contact's friction ``Λ_T = Σ_k β_k d_k`` over the :data:`PYRAMID_EDGES` directions d_k
    of :func:`pyramid_edges`, β >= 0, with a slip speed γ per contact::

        u_N = n·(D Λ + b) >= 0            ⊥ Λ_N >= 0
        d_k·(D Λ + b)_T + γ >= 0           ⊥ β_k >= 0
        μ Λ_N − Σ_k β_k >= 0               ⊥ γ >= 0

    Its matrix is copositive-plus (D positive semi-definite), so Lemke's method (:func:`lemke`)
    solves it where it is feasible; unlike the program of :func:`pyramid_lcp` a slipping point
    does not lift off.  Its solution is Coulomb's law on the polygon, not the disk: its sets
    (which points separate, stick, slip and where to) are the start of a Newton solve on the
    disks (:func:`kynemapy.run.body_coupled.newton_polish`)."""
    c = mu.size
    k = PYRAMID_EDGES
    theta = 2.0 * np.pi * np.arange(k) / k
    # Λ = A [Λ_N; β]: the normals, then each contact's k unit tangential directions (the frictionless
    # contacts' directions have no rows: β there is held at 0 by μ Λ_N − Σ β = −Σ β >= 0)
    a = np.zeros((3 * c, c + c * k))
    a[0::3, :c] = np.eye(c)
    for i in range(c):
        a[3 * i + 1, c + i * k : c + (i + 1) * k] = np.cos(theta)
        a[3 * i + 2, c + i * k : c + (i + 1) * k] = np.sin(theta)
    e = np.kron(np.eye(c), np.ones((k, 1)))  # (c k, c)
    size = 2 * c + c * k
    m = np.zeros((size, size))
    m[: c + c * k, : c + c * k] = a.T @ delassus @ a
    m[c : c + c * k, c + c * k :] = e
    m[c + c * k :, :c] = np.diag(mu)
    m[c + c * k :, c : c + c * k] = -e.T
    scale = float(np.max(np.abs(b), initial=0.0))
    if scale == 0.0:
        return np.zeros_like(b)
    z = lemke(m, np.concatenate([a.T @ b, np.zeros(c)]) / scale)
    return None if z is None else a @ z[: c + c * k] * scale
