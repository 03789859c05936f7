"""Hard contact between bodies: the frictional contact problem of the contacts' 3×3 blocks
(:mod:`kynemapy.run.hard_bodies`, docs/contact.md "Hard contact between bodies").

* :func:`solve_blocks`: projected Gauss–Seidel over the contacts' blocks with the bodies' inverse
  mass blocks (the Delassus matrix is never formed: each sweep costs linear time in the
  contacts); :func:`friction_sweeps` the friction alone with the normal impulses held;
* :func:`node_blocks`: each node's diagonal block of the mass matrix; :func:`contact_islands`
  the contacts' islands (contacts linked through the bodies they touch); :func:`clip_groups`
  the friction impulses clipped to their cones, group by group;
* :func:`normal_lcp`: the normal problem solved exactly (a least-distance program), which
  finishes the sweeps where they stall (:meth:`kynemapy.run.hard_bodies.HardBodies._solve`).
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit
from kynemapy.math.typed import FALSE, ONE, TRUE, TWO, ZERO
from kynemapy.run import nnls
from kynemapy.run.contact_newton import response_columns
from kynemapy.run.hard_contact import disk_projection

#: the sweeps also end when the change of u has not halved for this many sweeps and is below
#: ``FLOOR_TOLERANCE`` times the largest |b| (the round-off floor of the incremental updates of
#: y, or Λ drifting along the null space of a singular Delassus matrix, a box on four corners,
#: while u stays put); the solve is then finished as after ``FRICTION_SWEEPS``
STALL_SWEEPS = 50
FLOOR_TOLERANCE = 1.0e-9
#: the least-squares refinements of :func:`normal_lcp`'s active multipliers
REFINE_STEPS = 2
#: programs of at least this many columns start from the last solution's columns (the warm
#: starts of :func:`normal_lcp`; smaller ones cost less than the lookup)
WARM_COLUMNS = 64
#: the optimality test of :func:`least_distance`'s non-negative least squares: the rows ``u`` of
#: its λ within this times the largest |b| of ``u >= 0`` (and of 0 where λ > 0); a program that
#: ends outside it is solved again (scaled columns, then bounded-variable least squares; the 2.127 s
#: program below needs the latter).  Lawson and Hanson's method
#: (scipy.optimize.nnls) can stop with a basis of nearly dependent columns and no candidate left
#: (the 100-box pile at rest, 2.127 s: its position problem on the friction pyramids, 3744 edges
#: of 36 boxes, the free term 4.9e-6 m at the ground and round-off between the boxes: rows
#: violated by 1.7 times |b|), where BVLS ends at the optimum to 1e-10 of |b|
OPTIMALITY_TOLERANCE = 1.0e-8


@njit
def solve_blocks(
    na: np.ndarray,
    nb: np.ndarray,
    ja: np.ndarray,
    jb: np.ndarray,
    minv: np.ndarray,
    b: np.ndarray,
    mu: np.ndarray,
    lam: np.ndarray,
    y: np.ndarray,
    scratch: tuple,
    tolerance: float,
    residual: float,
    max_sweeps: int,
) -> int:
    """The frictional contact problem ``u = G M⁻¹ Gᵀ Λ + b`` of C contacts by projected
    Gauss–Seidel over their 3×3 blocks, with ``y = M⁻¹ Gᵀ Λ`` kept per node.

    For each contact c (rows 3c .. 3c + 2 of G: normal, two tangents): ``u_N >= 0``,
    ``Λ_N >= 0``, ``u_N Λ_N = 0`` (Signorini) and ``|Λ_T| <= μ_c Λ_N``,
    ``Λ_T = −μ_c Λ_N u_T/|u_T|`` where ``u_T != 0`` (Coulomb), as
    :func:`kynemapy.run.hard_contact.solve_cone` (the same steps: the normal by its diagonal,
    the tangential pair by the largest eigenvalue of its 2×2 block, projected on the disk), but
    each block's u from the nodes' ``y`` (``u_c = b_c + J_A,c y_A + J_B,c y_B``) and each update
    added to ``y``: a sweep costs O(C), the Delassus matrix is never formed.  Stops when a sweep
    changes no component of u by more than ``tolerance`` times the largest |b|.  Frictional
    projected Gauss–Seidel need not converge (it cycles, or creeps at a rate near 1, where a
    body tumbles on several corners or rows are nearly redundant): the caller finishes such a
    solve (:meth:`HardBodies._solve`).

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies A and B (−1: none, the ground).
    ja, jb : (C, 3, 6) ndarray of float
        The rows over A's and B's six DOFs (translations, rotations).
    minv : (N, 6, 6) ndarray of float
        Each node's inverse mass block (zero rows and columns past its DOFs).
    b : (C, 3) ndarray of float
        The free term.
    mu : (C,) ndarray of float
        Coulomb coefficients.
    lam : (C, 3) ndarray of float
        In: the start; out: the solution Λ (the last sweep's where not converged).
    y : (N, 6) ndarray of float
        Out: ``M⁻¹ Gᵀ Λ`` per node.
    scratch : tuple
        ``(wa (C, 6, 3), wb (C, 6, 3), dd (C, 3, 3), rho (C,), u (C, 3))``.
    tolerance : float
        The relative tolerance on u.
    residual : float
        Converged also needs every ``u_N >= −residual`` and ``|u_N| <= residual`` where
        ``Λ_N > 0`` [m or m/s].
    max_sweeps : int
        The most sweeps.

    Returns
    -------
    int
        The sweeps done; their count negated when the tolerance was not reached (the change
        of u stalled, see :data:`STALL_SWEEPS`, or ``max_sweeps`` were done); 0 when b = 0.
    """
    wa, wb, dd, rho, u = scratch
    nc = na.shape[0]
    for i in range(y.shape[0]):
        for r in range(6):
            y[i, r] = 0.0
    scale = 0.0
    for c in range(nc):
        for s in range(3):
            if abs(b[c, s]) > scale:
                scale = abs(b[c, s])
    if scale == 0.0:
        for c in range(nc):
            for s in range(3):
                lam[c, s] = 0.0
        return 0
    response_columns(na, nb, ja, jb, minv, wa, wb)
    for c in range(nc):
        for s in range(3):
            for t in range(3):
                v = 0.0
                for r in range(6):
                    v += ja[c, s, r] * wa[c, r, t] + jb[c, s, r] * wb[c, r, t]
                dd[c, s, t] = v
        p, o, m = dd[c, 1, 1], dd[c, 1, 2], dd[c, 2, 2]
        rho[c] = 0.5 * (p + m) + np.sqrt(0.25 * (p - m) * (p - m) + o * o)
        for r in range(6):
            for s in range(3):
                if na[c] >= 0:
                    y[na[c], r] += wa[c, r, s] * lam[c, s]
                if nb[c] >= 0:
                    y[nb[c], r] += wb[c, r, s] * lam[c, s]
    _rates(na, nb, ja, jb, b, y, u)
    done, status = _sweeps(na, nb, ja, jb, b, mu, lam, y, wa, wb, dd, rho, u, tolerance, residual, max_sweeps, FALSE)
    return done if status == 0 else -done


@njit
def _sweeps(na, nb, ja, jb, b, mu, lam, y, wa, wb, dd, rho, u, tolerance, residual, max_sweeps, tangential=False):
    """Projected Gauss–Seidel sweeps of :func:`solve_blocks`; returns the sweeps and how they
    ended: 0 the tolerance met, 1 stalled at the floor (:data:`STALL_SWEEPS`), 2 ``max_sweeps``
    reached."""
    nc = na.shape[0]
    scale = 0.0
    for c in range(nc):
        for s in range(3):
            if abs(b[c, s]) > scale:
                scale = abs(b[c, s])
    if scale == 0.0:
        scale = 1.0
    best, best_sweep = np.inf, 0
    for sweep in range(max_sweeps):
        for c in range(nc):
            a_, b_ = na[c], nb[c]
            un = _rate(na, nb, ja, jb, b, y, c, ZERO)
            dnn = dd[c, 0, 0]
            if dnn <= 0.0:
                continue
            new = lam[c, 0] - un / dnn
            if new < 0.0:
                new = 0.0
            if tangential:
                new = lam[c, 0]  # the normal impulses held
            dl = new - lam[c, 0]
            lam[c, 0] = new
            if dl != 0.0:
                for r in range(6):
                    if a_ >= 0:
                        y[a_, r] += wa[c, r, 0] * dl
                    if b_ >= 0:
                        y[b_, r] += wb[c, r, 0] * dl
            if mu[c] <= 0.0 or rho[c] <= 0.0:
                if lam[c, 1] != 0.0 or lam[c, 2] != 0.0:
                    for r in range(6):
                        for s in (1, 2):
                            if a_ >= 0:
                                y[a_, r] -= wa[c, r, s] * lam[c, s]
                            if b_ >= 0:
                                y[b_, r] -= wb[c, r, s] * lam[c, s]
                    lam[c, 1] = 0.0
                    lam[c, 2] = 0.0
                continue
            u1 = _rate(na, nb, ja, jb, b, y, c, ONE)
            u2 = _rate(na, nb, ja, jb, b, y, c, TWO)
            t1, t2 = disk_projection(lam[c, 1] - u1 / rho[c], lam[c, 2] - u2 / rho[c], mu[c] * new)
            d1 = t1 - lam[c, 1]
            d2 = t2 - lam[c, 2]
            lam[c, 1] = t1
            lam[c, 2] = t2
            for r in range(6):
                if a_ >= 0:
                    y[a_, r] += wa[c, r, 1] * d1 + wa[c, r, 2] * d2
                if b_ >= 0:
                    y[b_, r] += wb[c, r, 1] * d1 + wb[c, r, 2] * d2
        change = 0.0
        for c in range(nc):
            for s in range(3):
                v = _rate(na, nb, ja, jb, b, y, c, s)
                if abs(v - u[c, s]) > change:
                    change = abs(v - u[c, s])
                u[c, s] = v
        if change <= tolerance * scale:
            # u no longer changes; where Λ drifts along a singular Delassus matrix's null space
            # u can stop short of Signorini's law: then not converged
            for c in range(nc):
                if tangential:
                    break
                if u[c, 0] < -residual or (lam[c, 0] > 0.0 and u[c, 0] > residual):
                    return sweep + 1, 1
            return sweep + 1, 0
        if change < 0.5 * best:
            best, best_sweep = change, sweep
        elif sweep - best_sweep >= STALL_SWEEPS and best <= FLOOR_TOLERANCE * scale:
            return sweep + 1, 1  # at the round-off floor of the updates of y
    return max_sweeps + 1, 2


@njit
def friction_sweeps(
    na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray,
    y: np.ndarray, scratch: tuple, tolerance: float, max_sweeps: int,
) -> int:  # fmt: skip
    """Projected Gauss–Seidel sweeps of the tangential rows alone, the normal impulses Λ_N held:
    each point's Λ_T on its disk ``|Λ_T| <= μ Λ_N`` (a convex problem, where the sweeps converge).
    ``scratch`` as :func:`solve_blocks` left it (its blocks), ``y = M⁻¹ Gᵀ Λ`` on entry; returns
    the sweeps (negated when ``max_sweeps`` were done without meeting ``tolerance``)."""
    wa, wb, dd, rho, u = scratch
    _rates(na, nb, ja, jb, b, y, u)
    done, status = _sweeps(na, nb, ja, jb, b, mu, lam, y, wa, wb, dd, rho, u, tolerance, np.inf, max_sweeps, TRUE)
    return done if status != 2 else -done


@njit
def _rate(na, nb, ja, jb, b, y, c, s):
    """Component s of ``u_c = b_c + J_A,c y_A + J_B,c y_B`` (contact c's relative velocity or gap
    rate along n, t₁, t₂)."""
    v = b[c, s]
    for r in range(6):
        if na[c] >= 0:
            v += ja[c, s, r] * y[na[c], r]
        if nb[c] >= 0:
            v += jb[c, s, r] * y[nb[c], r]
    return v


@njit
def _rates(na, nb, ja, jb, b, y, u):
    """``u_c = b_c + J_A,c y_A + J_B,c y_B`` of every contact."""
    for c in range(na.shape[0]):
        for s in range(3):
            u[c, s] = _rate(na, nb, ja, jb, b, y, c, s)


@njit
def node_blocks(
    indptr: np.ndarray, indices: np.ndarray, vals: np.ndarray, dof_node: np.ndarray, dof_component: np.ndarray,
    out: np.ndarray,
) -> float:  # fmt: skip
    """Each node's diagonal block of a matrix in CSC form (the mass matrix).

    Parameters
    ----------
    indptr, indices, vals : ndarray
        The matrix (n, n) in CSC form.
    dof_node, dof_component : (n,) ndarray of int64
        Each DOF's node and component.
    out : (N, 6, 6) ndarray of float
        Out: the blocks (zero past a node's DOFs).

    Returns
    -------
    float
        The largest |entry| coupling two different nodes (0 for a block-diagonal matrix).
    """
    out[...] = 0.0
    off = 0.0
    n = dof_node.shape[0]
    for j in range(n):
        nj, cj = dof_node[j], dof_component[j]
        for k in range(indptr[j], indptr[j + 1]):
            i = indices[k]
            if i >= n:
                continue
            if dof_node[i] == nj:
                out[nj, dof_component[i], cj] = vals[k]
            elif abs(vals[k]) > off:
                off = abs(vals[k])
    return off


def clip_groups(lam: np.ndarray, mu: np.ndarray, frame: np.ndarray, group: np.ndarray) -> bool:
    """Bring each group's friction into its cone, ``|Σ Λ_T| <= μ Σ Λ_N`` over the group's points
    (the points of one shape pair, or of a shape on a plane: the split of a face's normal load
    among its corners is not unique, their resultant is), scaling the group's Λ_T (C, 3) in place;
    whether any group was more than 1e-12 of the largest Λ_N outside its cone."""
    n_groups = int(group.max(initial=-1)) + 1
    if n_groups == 0:
        return False
    world = lam[:, 1:2] * frame[:, 1] + lam[:, 2:3] * frame[:, 2]
    force = np.zeros((n_groups, 3))
    normal = np.zeros(n_groups)
    mu_g = np.zeros(n_groups)
    np.add.at(force, group, world)
    np.add.at(normal, group, lam[:, 0])
    np.maximum.at(mu_g, group, mu)
    size = np.linalg.norm(force, axis=1)
    radius = mu_g * normal
    big = float(np.max(lam[:, 0], initial=0.0))
    over = size > radius + 1e-12 * big
    factor = np.where(size > radius, radius / np.where(size > 0.0, size, 1.0), 1.0)
    lam[:, 1:] *= factor[group][:, None]
    return bool(np.any(over))


def contact_islands(na: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """Each contact's island (C,) int: contacts that share a body (not the ground) are in one."""
    import scipy.sparse
    import scipy.sparse.csgraph

    c = na.size
    if c == 0:
        return np.zeros(0, dtype=np.int64)
    n = int(max(na.max(initial=-1), nb.max(initial=-1))) + 1
    rows, cols = [], []
    for nodes in (na, nb):
        has = nodes >= 0
        rows.append(np.flatnonzero(has))
        cols.append(c + nodes[has])
    rows_, cols_ = np.concatenate(rows), np.concatenate(cols)
    graph = scipy.sparse.coo_matrix((np.ones(rows_.size), (rows_, cols_)), shape=(c + n, c + n))
    return scipy.sparse.csgraph.connected_components(graph, directed=False)[1][:c].astype(np.int64)


def _optimal(a: np.ndarray, z: np.ndarray) -> bool:
    """Whether z (k,) meets the optimality conditions of :func:`least_distance`'s program to
    :data:`OPTIMALITY_TOLERANCE` (that function's docstring)."""
    r = a @ z
    r[-1] -= 1.0
    # scaled to the rows u / |b| where r_last < 0; where not (no solution: then a z = e up to the
    # residual, which the same conditions test), as it is
    g = (a.T @ r) / (-r[-1] if r[-1] < 0.0 else 1.0)
    return bool(g.min(initial=0.0) >= -OPTIMALITY_TOLERANCE and np.all(np.abs(g[z > 0.0]) <= OPTIMALITY_TOLERANCE))


def least_distance(a: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """The non-negative least-squares problem ``min |a z − e|``, ``z >= 0`` of a least-distance
    program (e the last unit vector; Lawson & Hanson 1974, ch. 23): z (k,) for a (m, k).

    By Lawson and Hanson's active-set method, compiled (:func:`kynemapy.run.nnls.lawson_hanson`),
    from the values ``start`` (k,) when given (a warm start), then without; where it ends
    away from the optimum (:data:`OPTIMALITY_TOLERANCE`), by the same method as scipy
    implements it (scipy.optimize.nnls), then on the columns scaled to unit length (its choice
    of the entering column and its test of dependence then by angle, not by size), and where
    that fails too by bounded-variable least squares (scipy.optimize.lsq_linear,
    ``method="bvls"``; slower: 0.3 to 16 s where the scaled columns took 0.02 to 0.4 s on the
    100-box pile).  The gradient ``aᵀ (a z − e)`` is ``−r_last`` times the program's rows
    ``u / |b|`` (``r = a z − e``): at the optimum non-negative, and zero where z > 0 (where
    ``r_last >= 0``, the program having no solution, the gradient itself).
    """
    import scipy.optimize

    for begin in (start, None) if start is not None and np.any(start > 0.0) else (None,):
        z, ended = nnls.solve(a, begin)
        if ended and _optimal(a, z):
            return z
    e = np.zeros(a.shape[0])
    e[-1] = 1.0
    most = 50 * max(a.shape[1], 10)
    z, _ = scipy.optimize.nnls(a, e, maxiter=most)
    if _optimal(a, z):
        return z
    length = np.linalg.norm(a, axis=0)
    length[length == 0.0] = 1.0
    z, _ = scipy.optimize.nnls(a / length, e, maxiter=most)
    z /= length
    if _optimal(a, z):
        return z
    return scipy.optimize.lsq_linear(a, e, bounds=(0.0, np.inf), method="bvls", tol=1e-14).x


def _violation(lam: np.ndarray, u: np.ndarray) -> tuple[float, np.ndarray]:
    """How far λ (k,) with rows u (k,) is from Signorini's law (the largest of −u and of |u| where
    λ > 0), and u."""
    return max(float(np.max(-u, initial=0.0)), float(np.max(np.abs(u[lam > 0.0]), initial=0.0))), u


def normal_lcp(
    na: np.ndarray, nb: np.ndarray, jna: np.ndarray, jnb: np.ndarray, chol: np.ndarray, b: np.ndarray,
    island: np.ndarray | None = None, keys: np.ndarray | None = None, warm: nnls.WarmStarts | None = None,
    kind: object = None,
) -> np.ndarray | None:  # fmt: skip
    """The normal contact problem ``u = G_N M⁻¹ G_Nᵀ λ + b >= 0``, ``λ >= 0``, ``λᵀ u = 0``,
    solved exactly, island by island, as Lawson and Hanson's least-distance program.

    With ``M⁻¹ = C Cᵀ`` (each body's block) and ``A = Cᵀ G_Nᵀ``, the problem is the optimality
    condition of ``min ½ |w|²`` subject to ``Aᵀ w >= −b`` (w = C⁻¹ U, U the bodies' motion, unique
    even where the rows are redundant: a face's corners on a face), which is the non-negative
    least-squares problem ``min |E z − e|``, ``z >= 0``, ``E = [A; −bᵀ]``, e the last unit vector
    (Lawson & Hanson, Solving Least Squares Problems, 1974, ch. 23): ``λ = z / (−r_last)`` with
    r = E z − e (:func:`least_distance`: active-set methods that handle the degenerate rows).

    Parameters
    ----------
    na, nb : (C,) ndarray of int64
        The nodes of each contact's bodies (−1: the ground).
    jna, jnb : (C, 6) ndarray of float
        The normal rows over each body's DOFs.
    chol : (N, 6, 6) ndarray of float
        Each node's lower Cholesky factor C of its inverse mass block (zero for nodes without
        shapes).
    b : (C,) ndarray of float
        The free term.
    island : (C,) ndarray of int64, optional
        Each contact's island (:func:`contact_islands`; computed when not given).
    keys, warm, kind : optional
        Each contact's key (C,) int64 (the same contact, the same key) and the warm starts
        (:class:`kynemapy.run.nnls.WarmStarts`) of programs of ``kind``: each island's program
        starts from the last solution of that kind that had its columns, and its solution is
        kept there.

    Returns
    -------
    (C,) ndarray of float or None
        λ; None when an island has no solution (its rows cannot all be met).
    """
    out = np.zeros(b.size)
    if island is None:
        island = contact_islands(na, nb)
    # each contact's columns of A = Cᵀ G_Nᵀ: (C, 6) for body A and for body B
    cols_a = np.einsum("cji,cj->ci", chol[np.maximum(na, 0)], jna)
    cols_b = np.einsum("cji,cj->ci", chol[np.maximum(nb, 0)], jnb)
    order = np.argsort(island, kind="stable")
    bounds = np.flatnonzero(np.diff(island[order])) + 1
    for idx in np.split(order, bounds):
        if not np.any(b[idx] < 0.0):
            continue  # nothing pushes: λ = 0
        nodes, local = np.unique(np.concatenate([na[idx], nb[idx]]), return_inverse=True)
        k = idx.size
        a = np.zeros((6 * nodes.size + 1, k))
        col = np.arange(k)
        for which, cols, node in ((0, cols_a, na), (1, cols_b, nb)):
            place = local[which * k : (which + 1) * k]
            has = node[idx] >= 0
            rows = 6 * place[has][:, None] + np.arange(6)
            np.add.at(a, (rows, col[has][:, None]), cols[idx][has])
        # λ is linear in b: solved for b / |b|_max (the last row on the scale of the others)
        scale = float(np.max(np.abs(b[idx])))
        a[-1] = -b[idx] / scale
        many = warm is not None and k >= WARM_COLUMNS
        z = least_distance(a, warm.start(kind, keys[idx]) if many else None)
        if many:
            warm.keep(kind, keys[idx], z)
        last = float(a[-1] @ z - 1.0)
        if last >= 0.0:
            return None
        lam = scale * z / -last
        # refinement on the active rows: the program's precision is relative to |b|, which in the
        # position correction holds the whole correction (1e-4 m): u there to a few 1e-11 m,
        # brought to round-off by a least-squares correction of the active multipliers, kept only
        # where it lessens the violation (on many nearly dependent rows, an island on 64-edge
        # pyramids, the clipped step took a row from −6e-15 to −1.7e-4 m in two steps)
        body = a[:-1]
        worst = _violation(lam, body.T @ (body @ lam) + b[idx])
        for _ in range(REFINE_STEPS):
            act = np.flatnonzero(lam > 0.0)
            if act.size == 0 or worst[0] == 0.0:
                break
            d_aa = body[:, act].T @ body[:, act]
            step = np.linalg.lstsq(d_aa, -worst[1][act], rcond=1e-13)[0]
            trial = lam.copy()
            trial[act] = np.maximum(lam[act] + step, 0.0)
            better = _violation(trial, body.T @ (body @ trial) + b[idx])
            if not better[0] < worst[0]:
                break
            lam, worst = trial, better
        out[idx] = lam
    return out
