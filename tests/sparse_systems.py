"""Newton-system matrices of constrained multibody dynamics, for the sparse LU tests and benchmark.

numpy and scipy only (never kynemapy), so the matrices are an independent input.  Every
generator returns a ``scipy.sparse.csc_matrix`` whose pattern is what the assembly stores
(dense node blocks, explicit zeros kept) and the values a Newton iteration could see:

    A = [[S, Bᵀ], [B T, 0]]

with the node DOFs first (6 per node, node after node) and the constraint rows after them,
as :mod:`kynemapy.engine.assemble` lays them out.

* :func:`heavy_top` — Kynema's heavy top as kynemapy assembles it (15 × 15: the top's 6 DOFs,
  the pin's 3, the 6→3 rigid joint's 3 rows and the pin's prescribed-displacement 3 rows);
  :data:`HEAVY_TOP_ENTRIES` are the values of a real Newton iteration (step 10).
* :func:`chain` — N bodies joined by ball joints, the first to the ground.
* :func:`boxes` — N free bodies (block-diagonal 6 × 6).
* :func:`random_saddle_point` — block-diagonal S with zero (massless) blocks, random B.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: (row, column, value) of the heavy top's Newton matrix at step 10 (h = 2 ms, ρ∞ = 0.9),
#: as kynemapy's dense assembly wrote it: exact zeros are absent.
# fmt: off
HEAVY_TOP_ENTRIES = (
    (0, 0, 16.49999999999999), (0, 1, -7.632783294297951e-17), (0, 9, -1.0),
    (1, 0, -7.632783294297951e-17), (1, 1, 16.499999999999982), (1, 10, -1.0),
    (2, 0, -4.884981308350689e-16), (2, 2, 16.499999999999986), (2, 11, -1.0),
    (3, 3, 0.2657954810227747), (3, 4, 0.02405724496489247), (3, 5, -0.037976720742514986),
    (3, 10, 0.006168420751163474), (3, 11, 0.9957402605048293),
    (4, 3, 0.02318902534876373), (4, 4, 0.5133810861019609), (4, 5, 0.001935801679326791),
    (4, 9, -0.006168420751163474), (4, 11, -0.09199610967432408),
    (5, 3, 0.03766812870003521), (5, 4, -0.0052105566347983474), (5, 5, 0.2635790769756273),
    (5, 9, -0.9957402605048293), (5, 10, 0.09199610967432408),
    (6, 9, 1.0), (6, 12, 1.0), (7, 10, 1.0), (7, 13, 1.0), (8, 11, 1.0), (8, 14, 1.0),
    (9, 0, -1.0), (9, 3, 0.1477669021104963), (9, 4, -0.01802085877388751),
    (9, 5, -0.9807968461182683), (9, 6, 1.0),
    (10, 1, -1.0), (10, 3, -0.007572923672499244), (10, 4, 0.0011357992210629393),
    (10, 5, 0.09153756361780171), (10, 7, 1.0),
    (11, 2, -1.0), (11, 3, 0.9813395334961513), (11, 4, -0.0854169825925521),
    (11, 5, 0.1488457509755196), (11, 8, 1.0),
    (12, 6, 1.0), (13, 7, 1.0), (14, 8, 1.0),
)
# fmt: on


def heavy_top(dense_blocks: bool = False, rng: np.random.Generator | None = None) -> sp.csc_matrix:
    """The heavy top's 15 × 15 Newton matrix (48 non-zeros; :data:`HEAVY_TOP_ENTRIES`).

    ``dense_blocks=True`` stores the pattern an assembly with dense blocks would: the top's
    6 × 6 S block full, the joint's 3 × 3 rotation blocks full, explicit zeros kept
    (72 entries); ``rng`` then perturbs every stored value (a later Newton iteration).
    """
    rows, cols, vals = (np.array(c) for c in zip(*HEAVY_TOP_ENTRIES, strict=True))
    a = sp.coo_matrix((vals, (rows.astype(np.int64), cols.astype(np.int64))), shape=(15, 15)).toarray()
    if not dense_blocks:
        return sp.csc_matrix(a)
    mask = a != 0.0
    mask[0:6, 0:6] = True  # the top's S block
    mask[3:6, 9:12] = True  # Bᵀ rotation block of the joint
    mask[9:12, 3:6] = True  # B T rotation block of the joint
    r, c = np.nonzero(mask)
    v = a[r, c]
    if rng is not None:
        v = v + 0.05 * rng.standard_normal(v.size) * (np.abs(v) + 0.1)
    return _csc(r, c, v, 15)


def _csc(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int) -> sp.csc_matrix:
    """CSC with sorted row indices and explicit zeros kept (no duplicates expected)."""
    order = np.lexsort((rows, cols))
    rows, cols, vals = rows[order], cols[order], vals[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, cols + 1, 1)
    np.cumsum(indptr, out=indptr)
    return sp.csc_matrix((vals.astype(np.float64), rows.astype(np.int64), indptr), shape=(n, n))


def _tilde(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _body_block(rng: np.random.Generator, massless: bool) -> np.ndarray:
    """A 6 × 6 S block: mass + inertia with a small unsymmetric stiffness/gyroscopic part."""
    if massless:
        return np.zeros((6, 6))
    m = rng.uniform(1.0, 20.0)
    d = np.concatenate([np.full(3, m), rng.uniform(0.1, 1.0, 3)])
    return np.diag(d) + 0.05 * rng.standard_normal((6, 6)) * np.sqrt(np.outer(d, d))


class _Builder:
    """Triplets of a Newton matrix with dense blocks (explicit zeros kept)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.r: list[np.ndarray] = []
        self.c: list[np.ndarray] = []
        self.v: list[np.ndarray] = []

    def block(self, row: int, col: int, values: np.ndarray) -> None:
        nr, nc = values.shape
        rr, cc = np.meshgrid(np.arange(row, row + nr), np.arange(col, col + nc), indexing="ij")
        self.r.append(rr.ravel())
        self.c.append(cc.ravel())
        self.v.append(values.ravel())

    def csc(self) -> sp.csc_matrix:
        return _csc(np.concatenate(self.r), np.concatenate(self.c), np.concatenate(self.v), self.n)


def chain(n_bodies: int, seed: int = 0, massless_every: int = 0, random_joints: bool = False) -> sp.csc_matrix:
    """N bodies joined by ball joints (joint 0 holds body 0 to the ground), n = 9 N.

    Body i: DOFs 6i..6i+5 with a dense 6 × 6 S block; joint i: rows 6N+3i..6N+3i+2 with
    B = [−I, (r′)~] on body i and [I, −(r)~] on body i−1; the lower-left block is B T
    (T = diag(I, T_rot), T_rot near the identity), the upper-right Bᵀ.
    ``massless_every = k > 0`` gives every k-th body (from body 1, never the last) a zero S block; a massless
    node between two ball joints would be a mechanism, so those bodies' joints get random
    3 × 6 blocks instead (still structurally [−I, r~]-shaped dense blocks), as do all joints
    with ``random_joints``.
    """
    rng = np.random.default_rng(seed)
    n_sys = 6 * n_bodies
    b = _Builder(9 * n_bodies)
    massless = np.zeros(n_bodies, dtype=bool)
    if massless_every > 0:
        massless[1::massless_every] = True
        massless[-1] = False  # the last body has one joint only: 3 rows cannot hold 6 DOFs
    for i in range(n_bodies):
        b.block(6 * i, 6 * i, _body_block(rng, bool(massless[i])))
    for j in range(n_bodies):
        row = n_sys + 3 * j
        bodies = [(j, -1.0)] if j == 0 else [(j - 1, 1.0), (j, -1.0)]
        special = random_joints or massless[j] or (j > 0 and massless[j - 1])
        for body, sign in bodies:
            if special:
                bb = rng.standard_normal((3, 6))
            else:
                r = rng.uniform(-1.0, 1.0, 3)
                bb = np.hstack([sign * np.eye(3), -sign * _tilde(r)])
            t_rot = np.eye(3) + 0.05 * rng.standard_normal((3, 3))
            bt = bb.copy()
            bt[:, 3:] = bb[:, 3:] @ t_rot
            b.block(row, 6 * body, bt)  # B T
            b.block(6 * body, row, bb.T)  # Bᵀ
    return b.csc()


def boxes(n_bodies: int, seed: int = 0) -> sp.csc_matrix:
    """N free bodies: block-diagonal dense 6 × 6 S blocks, n = 6 N."""
    rng = np.random.default_rng(seed)
    b = _Builder(6 * n_bodies)
    for i in range(n_bodies):
        b.block(6 * i, 6 * i, _body_block(rng, False))
    return b.csc()


def random_saddle_point(
    n_nodes: int, n_constraints: int, seed: int = 0, massless_fraction: float = 0.3, nodes_per_row: int = 2
) -> sp.csc_matrix:
    """Block-diagonal S (6 × 6 per node, a fraction of them zero) and random 3-row constraints.

    Each constraint couples ``nodes_per_row`` random nodes with dense random 3 × 6 blocks (B T
    below, independent random Bᵀ above, so the values are unsymmetric).  Every massless node
    is given two constraints, which makes the matrix nonsingular generically; the caller
    should still check the condition number.
    """
    rng = np.random.default_rng(seed)
    massless = rng.random(n_nodes) < massless_fraction
    pairs: list[list[int]] = []
    for node in np.flatnonzero(massless):
        for _ in range(2):
            others = rng.choice(np.delete(np.arange(n_nodes), node), nodes_per_row - 1, replace=False)
            pairs.append([int(node), *map(int, others)])
    while len(pairs) < n_constraints:
        pairs.append(list(map(int, rng.choice(n_nodes, nodes_per_row, replace=False))))
    n_c = len(pairs)
    n_sys = 6 * n_nodes
    b = _Builder(n_sys + 3 * n_c)
    for i in range(n_nodes):
        b.block(6 * i, 6 * i, _body_block(rng, bool(massless[i])))
    for j, nodes in enumerate(pairs):
        row = n_sys + 3 * j
        for node in nodes:
            b.block(row, 6 * node, rng.standard_normal((3, 6)))
            b.block(6 * node, row, rng.standard_normal((6, 3)))
    return b.csc()


def random_sparse(n: int, density: float, seed: int = 0, symmetric_pattern: bool = False) -> sp.csc_matrix:
    """A random sparse, diagonally dominant (well-conditioned) matrix with a non-zero diagonal."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, random_state=rng, format="csr")
    a.data = rng.standard_normal(a.data.size)
    if symmetric_pattern:
        p = (a != 0) + (a.T != 0)
        a = sp.csr_matrix((rng.standard_normal(p.nnz), p.indices, p.indptr), shape=(n, n))
    rowsum = np.asarray(abs(a).sum(axis=1)).ravel()
    a = a + sp.diags(rowsum + 1.0)
    return sp.csc_matrix(a)


def rhs(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)
