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

#: the edges of each contact's friction pyramid (inscribed in the cone: the friction it allows
#: is at least ``μ cos(π / K)`` in every direction, 0.981 μ for 16)
PYRAMID_EDGES = 16


def pyramid_edges(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges of the contacts' inner friction pyramids: :data:`PYRAMID_EDGES` per contact with
    friction, the normal alone for a frictionless one.

    Parameters
    ----------
    mu : (C,) ndarray of float
        Coulomb coefficients.

    Returns
    -------
    owner : (E,) ndarray of int64
        Each edge's contact.
    edge : (E, 3) ndarray of float
        ``(1, μ cos θ_k, μ sin θ_k)`` in the contact's (normal, tangent, tangent) frame.
    """
    k = PYRAMID_EDGES
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
    island: np.ndarray,
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

    Returns
    -------
    (C, 3) ndarray of float or None
        Λ (normal, two tangents) [the units of b times those of W⁻¹]; None when the program has
        no solution.
    """
    owner, edge = pyramid_edges(mu)
    beta = normal_lcp(
        na[owner], nb[owner], np.einsum("es,esr->er", edge, ja[owner]), np.einsum("es,esr->er", edge, jb[owner]),
        chol, np.einsum("es,es->e", edge, b[owner]), island[owner],
    )  # fmt: skip
    if beta is None:
        return None
    out = np.zeros((na.size, 3))
    np.add.at(out, owner, beta[:, None] * edge)
    return out
