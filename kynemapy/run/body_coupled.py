"""The hard body law on models with joints: the contacts' response through the bilateral constraints.

For free bodies :class:`kynemapy.run.hard_bodies.HardBodies` solves its contact problems with each
body's inverse mass block (``y = M⁻¹ Gᵀ Λ`` per node).  Where joints or other bilateral constraints
``Φ(q) = 0`` (gradient B) couple the bodies, an impulse on one body moves the others: the response
to contact multipliers is ``U = S Gᵀ Λ`` with the constrained inverse
``S = M⁻¹ − M⁻¹Bᵀ(B M⁻¹Bᵀ)⁻¹B M⁻¹``, from one factorization of ``[[M, Bᵀ], [B, 0]]`` at the
state (as the hard ground planes' general path, :meth:`kynemapy.run.joint_stops.JointStops._responses`).
:class:`CoupledResponse` holds that factorization and gives what ``HardBodies`` needs: the
response per node, the bilateral projection that keeps ``Φ`` (positions) and ``B v = 0``
(velocities) at the corrected state, and the frictional problem on the dense Delassus matrix
``D = G S Gᵀ`` by :func:`kynemapy.run.hard_contact.solve_cone` (projected Gauss–Seidel over the
points' 3×3 blocks), with the free bodies' finishers in dense form: the frictionless solution
where no point slips under it; where the sweeps stall, the exact solution on friction pyramids
where it sticks everywhere (:meth:`CoupledResponse.sticking`); and where they stall or leave a
point slipping, the held-friction rounds with the least-norm split of the normal load and a
Newton finish (:func:`held_rounds`: redundant points, whose split the sweeps choose by their
order, get the symmetric one, so that friction has no spurious moment); last, Coulomb's law on
friction pyramids by Lemke's method (:func:`kynemapy.run.pyramid_lcp.pyramid_coulomb`) with Newton
on the disks from its sets, and for a few points an enumeration of their modes
(:func:`mode_search`).  A stall that none finishes is a ConvergenceError, or, where the caller
allows it (``loose``: the velocity jump's :data:`kynemapy.run.hard_bodies.JUMP_LOOSE`), the least
violating impulse, its residual in :attr:`CoupledResponse.violation`.  Meant for mechanisms of
a few tens of bodies: D is dense (3C × 3C) and the inverse (n + m)³.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from kynemapy.run import contact_modes
from kynemapy.run.body_blocks import least_distance
from kynemapy.run.body_query import dof_rows
from kynemapy.run.contact_modes import HELD_TOLERANCE
from kynemapy.run.contact_newton import NEWTON_ITERATIONS, newton_delassus
from kynemapy.run.hard_contact import MAX_SWEEPS, SWEEP_TOLERANCE, solve_cone
from kynemapy.run.pyramid_lcp import pyramid_coulomb, pyramid_edges

#: the frictionless solution is taken where no point with friction slips by more than this times
#: the largest |b| (as :data:`kynemapy.run.hard_bodies.STICK_TOLERANCE` for free bodies)
STICK_TOLERANCE = 1.0e-12
#: the frictional sweeps before the exact solve on the friction pyramids (:meth:`CoupledResponse.sticking`)
FRICTION_SWEEPS = 2000
#: the most rounds of :func:`held_rounds`
HELD_ROUNDS = 50
# held_rounds' solution holds Signorini's and Coulomb's laws to HELD_TOLERANCE (defined in
# kynemapy.run.contact_modes), relative to the largest |b| (u's residuals) and to the largest Λ_N
# (the cones, Λ_N >= 0)
#: :func:`held_rounds` hands over to :func:`newton_delassus` once a round changes the normal impulses
#: by less than this (relative), or by more than half the change of the round before
ROUNDS_SETTLED = 1.0e-9
#: :func:`held_rounds` leaves the free term's part along the eigenvectors of D with eigenvalues
#: up to this times the largest (D's null space: redundant rows, and nearly null directions)
NULL_MODE = 1.0e-8
#: ... where that part is at most this times the largest |b| (else the free term is kept whole)
NULL_PART = 1.0e-3
#: :func:`newton_polish` takes a point as slipping where its slip is more than this times the
#: largest |b| (or on its disk's rim and slipping by more than :data:`HELD_TOLERANCE` of it)
SLIPPING = 1.0e-6
#: the most points whose modes :func:`mode_search` enumerates (3^C sets)
MODES_SEARCHED = 6
#: the nonsmooth Newton finisher of :func:`held_rounds` (:func:`~kynemapy.run.contact_newton.newton_delassus`)
#: converged when its residual is at most this times the largest |b|
NEWTON_TOLERANCE = 1.0e-11


def least_norm_normal(dnn: np.ndarray, c: np.ndarray, loaded: np.ndarray) -> np.ndarray | None:
    """The normal problem ``u = D_NN λ + c >= 0``, ``λ >= 0``, ``λᵀ u = 0`` solved exactly with the
    least-norm λ (C,): a primal active-set method from the points ``loaded`` (C,) bool, each set's
    rows ``u = 0`` solved by least squares of least norm (numpy's lstsq: where points are redundant,
    a face on a face, a symmetric configuration gets a symmetric split); None when the sets do not
    settle (:data:`HELD_ROUNDS`)."""
    scale = float(np.max(np.abs(c), initial=0.0))
    lam = np.zeros(c.size)
    if scale == 0.0:
        return lam
    active = loaded | (c < 0.0) if not np.any(loaded) else loaded.copy()
    for _ in range(HELD_ROUNDS):
        at = np.flatnonzero(active)
        lam[:] = 0.0
        if at.size:
            lam[at] = np.linalg.lstsq(dnn[np.ix_(at, at)], -c[at], rcond=1e-13)[0]
        u = dnn @ lam + c
        big = float(np.max(lam, initial=0.0))
        leave = active & (lam < -HELD_TOLERANCE * big)
        join = ~active & (u < -HELD_TOLERANCE * scale)
        if not np.any(leave) and not np.any(join):
            return np.maximum(lam, 0.0)
        # the most negative multiplier leaves (one at a time), every penetrating point joins
        if np.any(leave):
            active[at[np.argmin(lam[at])]] = False
        active |= join
    return None


def held_rounds(
    delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray, loose: float = 0.0
) -> tuple[np.ndarray | None, bool]:
    """The frictional problem ``u = D Λ + b`` finished in rounds from an approximate solution Λ
    (3C,) (the sweeps'): Λ (3C,) and True where every law holds to :data:`HELD_TOLERANCE`, else
    the least violating iterate and False where its :func:`coulomb_residual` is at most
    ``loose``, else None and False.

    Where points are redundant (a face on a face, two fingertips on one face) the impulses are not
    unique, and with friction neither is the motion: the split of the normal load among the points
    sets their friction bounds and the friction's moment.  Projected Gauss–Seidel, whose split
    depends on the order of its sweeps, can end at a solution in which a lightly loaded point
    slips (a held box sliding in its fingers) or a sliding body turns, or stall.  Each round here
    solves the normal problem exactly with the friction held, taking the least-norm split
    (:func:`least_norm_normal`), then the friction alone on the disks of those normal impulses by
    the sweeps (:func:`~kynemapy.run.hard_contact.solve_cone` with ``hold_normal``: a convex
    problem, whose motion is unique), until the normal impulses no longer change; a last normal
    solve makes Signorini's law exact (the free bodies' held-friction rounds,
    :meth:`kynemapy.run.hard_bodies.HardBodies._held_rounds`, in dense form with the least-norm
    split).  A symmetric configuration keeps a symmetric split, so that its friction has no
    moment.
    """
    c = mu.size
    # the free term's part along D's (nearly) null directions is left as it is: no bounded impulse
    # moves the points there (the joints' round-off, Φ ~ 1e-12, can put 1e-6 of |b| on a direction
    # with 1e-10 of D's largest eigenvalue: the fingers twisted against each other)
    # (over the rows that the laws constrain: the normals, the tangents of points with friction)
    rows = np.flatnonzero(np.repeat(mu > 0.0, 3) | (np.arange(b.size) % 3 == 0))
    w, v = np.linalg.eigh(0.5 * (delassus[np.ix_(rows, rows)] + delassus[np.ix_(rows, rows)].T))
    null = v[:, w <= NULL_MODE * max(float(w[-1]), 0.0)]
    part = null @ (null.T @ b[rows])
    if np.max(np.abs(part), initial=0.0) <= NULL_PART * float(np.max(np.abs(b), initial=0.0)):
        b = b.copy()
        b[rows] -= part
    scale = float(np.max(np.abs(b), initial=0.0))
    if scale == 0.0:
        return np.zeros_like(b), True
    out = lam.copy().reshape(c, 3)
    dnn = delassus[0::3, 0::3]
    rho, work = np.zeros(c), np.zeros(b.size)
    flat = out.reshape(-1)
    previous = np.inf
    for _ in range(HELD_ROUNDS):
        held = flat.copy()
        held[0::3] = 0.0
        # the points that carry load or touch (u_N = 0): the least-norm split spreads it over all
        touching = (out[:, 0] > 0.0) | ((delassus @ flat + b)[0::3] <= HELD_TOLERANCE * scale)
        normal = least_norm_normal(dnn, (delassus @ held + b)[0::3], touching)
        if normal is None:
            break  # the sets did not settle: Newton from here
        change = float(np.max(np.abs(normal - out[:, 0]), initial=0.0)) / max(float(np.max(normal)), 1e-300)
        out[:, 0] = normal
        if coulomb_residual(delassus, b, mu, flat) <= HELD_TOLERANCE:
            return flat, True
        if change <= ROUNDS_SETTLED or change > 0.5 * previous:
            break  # settled, or converging slowly: Newton finishes
        previous = change
        # the friction of each point brought into its new disk, then swept with the normals held
        size = np.linalg.norm(out[:, 1:], axis=1)
        over = size > mu * normal
        out[over, 1:] *= (mu[over] * normal[over] / size[over])[:, None]
        if solve_cone(delassus, b, mu, flat, rho, work, SWEEP_TOLERANCE, FRICTION_SWEEPS, True) > FRICTION_SWEEPS:
            break  # the friction's sweeps stalled: Newton from here
    # Newton finishes: with the rounds' sets held and least-norm steps (a symmetric start stays
    # symmetric), else nonsmooth Newton (Levenberg–Marquardt steps) from the rounds' iterate, else
    # from the start (the sweeps' iterate, which may already solve the problem where the sweeps
    # only crept on: Λ drifting along D's null space)
    polished = newton_polish(delassus, b, mu, flat)
    if polished is not None:
        return polished, True
    mats, vecs = np.empty((3, b.size, b.size)), np.empty((9, b.size))
    best = (coulomb_residual(delassus, b, mu, flat), flat.copy())
    for x in (flat, lam.copy(), None):
        if x is None:
            # last, Coulomb's law on the friction pyramids by Lemke's method, whose LCP has a
            # solution (the gripped box set down on one corner: the sweeps, the rounds and Newton
            # from their iterates all stalled at 2e-7), and Newton on the disks from its sets
            x = pyramid_coulomb(delassus, b, mu)
            if x is None:
                break
            polished = newton_polish(delassus, b, mu, x)
            if polished is not None:
                return polished, True
        mats[0] = delassus
        done, _ = newton_delassus(b, mu, x, mats, vecs, np.empty((2, c)), NEWTON_TOLERANCE, NEWTON_ITERATIONS)
        residual = coulomb_residual(delassus, b, mu, x)
        if done >= 0 and residual <= HELD_TOLERANCE:
            return x, True
        best = min(best, (residual, x), key=lambda pair: pair[0])
    if best[0] <= HELD_TOLERANCE:
        return best[1], True  # a Newton iterate that stopped short of its own test but meets the laws
    # a few points: every set of modes, the nearest to the best iterate's first
    found = mode_search(delassus, b, mu, best[1])
    if found is not None:
        return found, True
    # no exact solution found: the least violating iterate where ``loose`` allows it
    return (best[1], False) if best[0] <= loose else (None, False)


def newton_polish(
    delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray,
    sets: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray | None:  # fmt: skip
    """Newton iterations on the laws of the frictional problem ``u = D Λ + b`` with the sets of Λ
    (3C,) held (each loaded point's ``u_N = 0``; inside its disk ``u_T = 0``, on its rim
    ``Λ_T + μ Λ_N u_T / |u_T| = 0``; an unloaded point's ``Λ = 0``), each step the least-norm
    solution of the linearized equations (a symmetric start stays symmetric;
    :func:`kynemapy.run.contact_modes.polish`, compiled): Λ (3C,) where :func:`coulomb_residual`
    reaches :data:`HELD_TOLERANCE`, else None.  ``sets``: the loaded points and those on their
    rims (C,) bool, else read from Λ."""
    c = mu.size
    x = np.array(lam, dtype=np.float64)
    if sets is not None:
        loaded, rim = sets
    else:
        scale = float(np.max(np.abs(b), initial=0.0))
        pt = x.reshape(c, 3)
        size = np.linalg.norm(pt[:, 1:], axis=1)
        slip = np.linalg.norm((delassus @ x + b).reshape(c, 3)[:, 1:], axis=1)
        loaded = pt[:, 0] > 0.0
        # the sets, held: slipping where the slip is more than round-off, or on the rim and slipping at all
        near = size >= (1.0 - 1e-6) * mu * pt[:, 0]
        rim = loaded & (mu > 0.0) & ((slip > SLIPPING * scale) | (near & (slip > HELD_TOLERANCE * scale)))
    n = x.size
    work = np.empty((4, n))
    delassus = np.ascontiguousarray(delassus, dtype=np.float64)
    b, mu = np.ascontiguousarray(b, dtype=np.float64), np.ascontiguousarray(mu, dtype=np.float64)
    done = contact_modes.polish(
        delassus, b, mu, x, np.asarray(loaded, dtype=np.bool_), np.asarray(rim, dtype=np.bool_), np.empty((n, n)),
        work[0], work[1], work[2], np.empty(n, dtype=np.int64), work[3],
    )  # fmt: skip
    return x if done else None


#: the sets of modes of C points (3^C, C), each point open (0), sticking (1) or slipping (2)
_MODES: dict[int, np.ndarray] = {}


def mode_search(delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> np.ndarray | None:
    """The frictional problem ``u = D Λ + b`` of at most :data:`MODES_SEARCHED` points solved by
    enumerating their modes: each point open (Λ = 0), sticking (``u = 0``) or, with friction,
    slipping on its disk's rim; each set of modes solved by Newton's method with the sets held
    (:func:`kynemapy.run.contact_modes.search_modes`, compiled), in the order of how many points'
    modes differ from those of Λ (3C,) (open where Λ_N = 0, slipping where its slip is more than
    :data:`SLIPPING` of the largest |b|), from Λ with each new rim's friction against the point's
    slip (or its free term's tangential part).  The first Λ (3C,) that meets every law
    (:func:`coulomb_residual` to :data:`HELD_TOLERANCE`), else None.

    Where D is singular and the problem has several solutions, the iterative solvers can stall
    between them (the gripped box set down on one corner: a solution with two diagonal
    fingertips sticking and the other two opening, that the sweeps, the rounds, Newton and the
    pyramids' sets all missed); this finds one when there is one, at up to 3^C Newton solves."""
    c = mu.size
    if c > MODES_SEARCHED:
        return None
    scale = float(np.max(np.abs(b), initial=0.0))
    pt = lam.reshape(c, 3)
    u = (delassus @ lam + b).reshape(c, 3)
    slip = np.linalg.norm(u[:, 1:], axis=1)
    reference = np.where(pt[:, 0] > 0.0, np.where((mu > 0.0) & (slip > SLIPPING * scale), 2, 1), 0)
    if c not in _MODES:
        _MODES[c] = np.array(list(itertools.product(range(3), repeat=c)), dtype=np.int64).reshape(-1, c)
    modes = _MODES[c]
    modes = modes[~np.any((modes == 2) & (mu <= 0.0), axis=1)]  # no rim without friction
    # the directions of a new rim's friction (against the slip, else against the free term's)
    toward = np.where((slip > 0.0)[:, None], u[:, 1:], b.reshape(c, 3)[:, 1:])
    length = np.linalg.norm(toward, axis=1)
    toward = np.divide(toward, length[:, None], out=np.zeros_like(toward), where=length[:, None] > 0.0)
    diagonal = np.diag(delassus)[0::3]
    guess = np.divide(np.abs(b[0::3]), diagonal, out=np.zeros(c), where=diagonal > 0.0)
    order = np.ascontiguousarray(modes[np.argsort(np.sum(modes != reference, axis=1), kind="stable")])
    n = 3 * c
    x = np.empty(n)
    found = contact_modes.search_modes(
        np.ascontiguousarray(delassus, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64),
        np.ascontiguousarray(mu, dtype=np.float64), np.ascontiguousarray(lam, dtype=np.float64), order,
        np.ascontiguousarray(toward), guess, x, np.empty(c, dtype=np.bool_), np.empty(c, dtype=np.bool_),
        np.empty((n, n)), np.empty((4, n)), np.empty(n, dtype=np.int64),
    )  # fmt: skip
    return x if found >= 0 else None


def coulomb_residual(delassus: np.ndarray, b: np.ndarray, mu: np.ndarray, lam: np.ndarray, floor: float = 0.0) -> float:
    """How far Λ (3C,) is from solving ``u = D Λ + b`` with Signorini's and Coulomb's laws, relative
    to the largest |b| (u's rows) and to the largest Λ_N (the impulses' conditions): the largest of
    −u_N, min(|u_N|, Λ_N) (complementarity), −Λ_N, ``|Λ_T| − μ Λ_N``, and the tangential u's
    component not opposite to Λ_T (all of u_T where the point sticks inside its disk); infinite
    where Λ or u is not finite (:func:`kynemapy.run.contact_modes.coulomb_residual`, compiled).
    ``floor`` [the units of b]: u's violations up to it count as none (the position correction's
    :data:`~kynemapy.run.hard_bodies.GAP_TOLERANCE`, its own tolerance on the gaps)."""
    b = np.ascontiguousarray(b, dtype=np.float64)
    return float(
        contact_modes.coulomb_residual(
            np.ascontiguousarray(delassus, dtype=np.float64), b, np.ascontiguousarray(mu, dtype=np.float64),
            np.ascontiguousarray(lam, dtype=np.float64).reshape(-1), float(floor), np.empty(b.size),
        )
    )  # fmt: skip


class CoupledResponse:
    """``[[M, Bᵀ], [B, 0]]`` of a model with bilateral constraints, inverted at the present state.

    Parameters
    ----------
    stops : kynemapy.run.joint_stops.JointStops
        The simulation's correction: its state, the engine's M, B, Φ (``_system``) and the
        map from DOFs to (node, component).

    Attributes
    ----------
    n, m : int
        The DOFs and the bilateral constraint rows.
    phi : (m,) ndarray of float
        Φ at the state [m, rad].
    bmat : (m, n) ndarray of float
        B at the state.
    """

    def __init__(self, stops: Any) -> None:
        mass, bmat, phi, _ = stops._system(np.zeros(0, dtype=np.int64), np.zeros(0))
        self.n, self.m = mass.shape[0], bmat.shape[0]
        self.phi, self.bmat = phi, bmat
        self.dof_node, self.dof_component = stops.dof_node, stops.dof_component
        # writable copies: numba types the model's read-only arrays apart (a second compilation)
        self.first = np.array(stops.sim.model.node_map, dtype=np.int64)
        self.dofs = np.array(stops.sim.model.node_dofs, dtype=np.int64)
        self.n_nodes = int(stops.sim.model.n_nodes)
        #: the solves finished exactly on the friction pyramids (:meth:`sticking`)
        self.sticking_solves = 0
        #: the solves finished by :func:`held_rounds`
        self.held_solves = 0
        #: whether the last :meth:`solve` was exact (else its ``loose`` allowed the least violating
        #: iterate of :func:`held_rounds`)
        self.exact = True
        #: the :func:`coulomb_residual` of the last :meth:`solve` where it was not exact, else 0
        self.violation = 0.0
        kkt = np.zeros((self.n + self.m, self.n + self.m))
        kkt[: self.n, : self.n] = mass
        kkt[self.n :, : self.n] = bmat
        kkt[: self.n, self.n :] = bmat.T
        # the inverse's first n rows, once: S (n, n) and the projection's (n, m) (numpy's LAPACK;
        # scipy's lu_solve took 4 ms a call here on this 50-unknown system)
        try:
            self._rows = np.linalg.inv(kkt)[: self.n]
        except np.linalg.LinAlgError:  # redundant constraints: the least-squares multipliers
            self._rows = np.linalg.pinv(kkt)[: self.n]

    def _solve(self, force: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """x (n, ...) with ``M x = force + Bᵀμ``, ``B x = rhs``."""
        return self._rows[:, : self.n] @ force + self._rows[:, self.n :] @ rhs

    def per_node(self, x: np.ndarray) -> np.ndarray:
        """The DOF vector x (n,) as (N, 6) per node (zeros where a node has fewer DOFs)."""
        y = np.zeros((self.n_nodes, 6))
        y[self.dof_node, self.dof_component] = x
        return y

    def rows(self, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray) -> np.ndarray:
        """The contacts' rows G (3C, n) over the DOFs from their blocks on nodes A and B (a node
        −1, a ground plane, adds nothing)."""
        g = np.zeros((3 * na.size, self.n))
        rows = (np.ascontiguousarray(x, dtype=t) for x, t in ((na, np.int64), (nb, np.int64), (ja, float), (jb, float)))
        dof_rows(*rows, self.first, self.dofs, g)
        return g

    def response(self, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """``S Gᵀ Λ`` (N, 6) per node: the motion of every node under the contacts' multipliers."""
        if na.size == 0:
            return np.zeros((self.n_nodes, 6))
        force = self.rows(na, nb, ja, jb).T @ np.asarray(lam).reshape(-1)
        return self.per_node(self._solve(force, np.zeros(self.m)))

    def projection(self, rhs: np.ndarray) -> np.ndarray:
        """``x`` (N, 6) with ``M x = Bᵀμ`` and ``B x = rhs``: the mass-weighted bilateral projection
        (positions: rhs = −Φ; velocities: rhs = −B ṽ)."""
        return self.per_node(self._solve(np.zeros(self.n), np.asarray(rhs, dtype=np.float64)))

    def sticking(
        self, g: np.ndarray, columns: np.ndarray, b: np.ndarray, mu: np.ndarray, slip_floor: float = 0.0
    ) -> np.ndarray | None:
        """The frictional problem on inner friction pyramids, exactly, where its solution sticks
        at every loaded point with friction: Λ (3C,), else None.

        As :func:`kynemapy.run.pyramid_lcp.pyramid_lcp` for free bodies: each contact's impulse a
        non-negative combination of the edges (:func:`~kynemapy.run.pyramid_lcp.pyramid_edges`) of
        an inner pyramid of its cone, the problem then Lawson and Hanson's least-distance
        program ``min ½ |w|²``, ``Aᵀ w >= −b_e`` with ``A = Rᵀ G_eᵀ`` (``S = R Rᵀ``, the
        constrained inverse's factor from its eigenvalues; G_e the edges' rows), solved by
        non-negative least squares (:func:`~kynemapy.run.body_blocks.least_distance`).  Where
        that solution sticks (every loaded point's tangential u within :data:`STICK_TOLERANCE`
        of the largest |b|, or ``slip_floor``), it is an exact Coulomb solution.

        Parameters
        ----------
        g : (3C, n) ndarray of float
            The contacts' rows.
        columns : (n, 3C) ndarray of float
            ``S Gᵀ``.
        b : (3C,) ndarray of float
            The free term.
        mu : (C,) ndarray of float
            Coulomb coefficients.
        slip_floor : float, default 0.0
            A slip that passes too [the units of b].
        """
        scale = float(np.max(np.abs(b), initial=0.0))
        if scale == 0.0:
            return np.zeros_like(b)
        owner, edge = pyramid_edges(mu)
        rows = g.reshape(mu.size, 3, -1)
        g_e = np.einsum("es,esn->en", edge, rows[owner])  # (E, n)
        b_e = np.einsum("es,es->e", edge, b.reshape(-1, 3)[owner])
        w, v = np.linalg.eigh(0.5 * (self._rows[:, : self.n] + self._rows[:, : self.n].T))
        factor = v * np.sqrt(np.maximum(w, 0.0))  # S = R Rᵀ
        a = np.vstack([factor.T @ g_e.T, -b_e / scale])
        z = least_distance(a)
        last = float(a[-1] @ z - 1.0)
        if last >= 0.0:
            return None  # no solution (the rows cannot all be met)
        beta = z / -last * scale
        lam = np.zeros((mu.size, 3))
        np.add.at(lam, owner, beta[:, None] * edge)
        flat = lam.reshape(-1)
        u = (g @ (columns @ flat) + b).reshape(-1, 3)
        loaded = (lam[:, 0] > 0.0) & (mu > 0.0)
        slip = float(np.max(np.abs(u[loaded, 1:]), initial=0.0))
        return flat if slip <= max(STICK_TOLERANCE * scale, slip_floor) else None

    def velocity_defect(self, v: np.ndarray) -> np.ndarray:
        """``B v`` (m,) for node velocities v (N, 6)."""
        return self.bmat @ v[self.dof_node, self.dof_component]

    def solve(
        self,
        stops: Any,
        na: np.ndarray,
        nb: np.ndarray,
        ja: np.ndarray,
        jb: np.ndarray,
        free: np.ndarray,
        mu: np.ndarray,
        lam: np.ndarray,
        what: str,
        slip_floor: float = 0.0,
        loose: float = 0.0,
    ) -> tuple[np.ndarray, int]:
        """The frictional problem ``u = D Λ + free`` (Signorini and Coulomb per point, as
        :func:`kynemapy.run.hard_contact.solve_cone`) with ``D = G S Gᵀ``; Λ (C, 3) in ``lam``,
        updated from its value as the warm start.  Returns ``S Gᵀ Λ`` (N, 6) and the sweeps.

        Where no point with friction slips under the frictionless solution, that one is taken;
        where the frictional sweeps stall (:data:`FRICTION_SWEEPS`), the exact solution on the
        friction pyramids (:meth:`sticking`) where it sticks everywhere (up to ``slip_floor``
        [the units of free]: the position correction's gap tolerance); where they stall or end
        with a loaded point slipping, :func:`held_rounds` (the least-norm split); else the sweeps
        go on, and an iterate that meets the laws (:func:`coulomb_residual`, u's violations up to
        ``slip_floor`` passing: the gripped box pressed onto the ground, its points on their rims
        at a slip of 1e-12 m, left the sweeps there at 3e-8 of |b| for 20000 sweeps) is taken.
        ``loose``: where nothing is exact, :func:`held_rounds`' least violating iterate is taken
        if its residual is at most this (relative; :attr:`exact` then False: the position
        correction solves again at its next iterate).

        Raises
        ------
        ConvergenceError
            The sweeps do not reach their tolerance (:data:`~kynemapy.run.hard_contact.MAX_SWEEPS`).
        """
        self.exact, self.violation = True, 0.0
        g = self.rows(na, nb, ja, jb)
        columns = self._solve(g.T, np.zeros((self.m, g.shape[0])))  # S Gᵀ (n, 3C)
        delassus = g @ columns
        b = np.asarray(free, dtype=np.float64).reshape(-1)
        mu = np.asarray(mu, dtype=np.float64)
        if np.any(mu > 0.0):
            # where the frictionless solution leaves no point with friction slipping, it solves the
            # frictional problem exactly (sticking, Λ_T = 0): taken, as for free bodies (redundant
            # points at rest, where the frictional sweeps can stall)
            flat = lam.reshape(-1).copy()
            flat.reshape(-1, 3)[:, 1:] = 0.0
            sweeps = int(
                solve_cone(
                    delassus, b, np.zeros_like(mu), flat, np.zeros(mu.size), np.zeros(flat.size), SWEEP_TOLERANCE,
                    MAX_SWEEPS,
                )
            )  # fmt: skip
            slip = (delassus @ flat + b).reshape(-1, 3)[mu > 0.0, 1:]
            if sweeps <= MAX_SWEEPS and np.max(np.abs(slip), initial=0.0) <= STICK_TOLERANCE * np.max(np.abs(b)):
                lam[...] = flat.reshape(lam.shape)
                return self.per_node(columns @ flat), sweeps
        flat = lam.reshape(-1).copy()
        sweeps = int(
            solve_cone(
                delassus, b, mu, flat, np.zeros(mu.size), np.zeros(flat.size), SWEEP_TOLERANCE, FRICTION_SWEEPS,
            )
        )  # fmt: skip
        scale = float(np.max(np.abs(b), initial=0.0))
        u = (delassus @ flat + b).reshape(-1, 3)
        loaded = (flat.reshape(-1, 3)[:, 0] > 0.0) & (mu > 0.0)
        stalled = sweeps > FRICTION_SWEEPS
        if stalled:
            # stalled (redundant points with friction): bodies at rest have a solution on the friction
            # pyramids that sticks everywhere, found exactly
            stuck = self.sticking(g, columns, b, mu, slip_floor)
            self.sticking_solves += stuck is not None
            if stuck is not None:
                lam[...] = stuck.reshape(lam.shape)
                return self.per_node(columns @ stuck), sweeps
        if stalled or np.max(np.abs(u[loaded, 1:]), initial=0.0) > HELD_TOLERANCE * scale:
            # stalled, or a point slips: the exact solution with the least-norm split from the
            # sweeps' sets (redundant points: the sweeps' split can make a lightly loaded point slip)
            exact, _ = held_rounds(delassus, b, mu, flat)
            if exact is not None:
                self.held_solves += 1
                lam[...] = exact.reshape(lam.shape)
                return self.per_node(columns @ exact), sweeps
        if stalled:  # else the sweeps go on
            sweeps = FRICTION_SWEEPS + int(
                solve_cone(
                    delassus, b, mu, flat, np.zeros(mu.size), np.zeros(flat.size), SWEEP_TOLERANCE,
                    MAX_SWEEPS - FRICTION_SWEEPS,
                )
            )  # fmt: skip
        if sweeps > MAX_SWEEPS and coulomb_residual(delassus, b, mu, flat, slip_floor) > HELD_TOLERANCE:
            # (an iterate that meets the laws is taken: the sweeps' test is on the change of u, which
            # Λ creeping along D's null space can keep above its tolerance)
            near, met = held_rounds(delassus, b, mu, flat, loose) if loose > 0.0 else (None, False)
            if near is not None:
                self.exact = False
                self.violation = 0.0 if met else coulomb_residual(delassus, b, mu, near)
                lam[...] = near.reshape(lam.shape)
                return self.per_node(columns @ near), sweeps
            raise stops.convergence_error(
                f"the frictional contact problem of the hard contacts' {what} between bodies with joints "
                f"(projected Gauss–Seidel) did not reach {SWEEP_TOLERANCE:g} relative in {MAX_SWEEPS} sweeps "
                "(redundant points with friction, such as a box held on the ground by fingers, can stall it; the "
                "free bodies' finishers are not used through joints: the compliant law, "
                "set_body_contact(stiffness=...), handles them)"
            )
        lam[...] = flat.reshape(lam.shape)
        return self.per_node(columns @ flat), sweeps
