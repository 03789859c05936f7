"""Hard (nonsmooth) contact between bodies: spheres, capsules and boxes touching each other
(docs/contact.md, "Hard contact between bodies").

With ``ModelBuilder.set_body_contact(law="hard", ...)`` the shapes of a model of rigid bodies
and point masses, free or joined (no beams, no hard joint limits), touch each other as unilateral
constraints enforced after each smooth step by the decoupled nonsmooth generalized-α scheme of
:mod:`kynemapy.run.joint_stops` (Brüls, Acary & Cardona, CMAME 2014), in one set with the
points against hard ground planes (:mod:`kynemapy.run.hard_contact`).  This module holds:

* :class:`HardBodies`: the shapes (``Model.hard_shapes``), the contact points between them at a
  state found by :mod:`kynemapy.collision` (sort-and-sweep broad phase, then the narrow phase:
  sphere and capsule pairs by their axes' closest points, sphere– and capsule–box, box–box by
  the separating axes and face clipping or edge–edge), and the last step's contacts and
  impulses;
* the position correction and the velocity jump of each step (:meth:`HardBodies._solve`): the
  frictional contact problem by the sweeps of :mod:`kynemapy.run.body_blocks`, the
  frictionless solution where nothing slips, the nonsmooth Newton finisher of
  :mod:`kynemapy.run.contact_newton` and the exact normal solve where the sweeps stall.  With
  joints (:attr:`HardBodies.coupled`) the problems are solved through them instead, on the dense
  Delassus matrix of :mod:`kynemapy.run.body_coupled`, each position iteration with the
  bilateral projection that keeps Φ and the velocity jump with ``B v = 0`` at the corrected q.

The query itself, compiled and allocation-free, and the contacts' Jacobian rows are in
:mod:`kynemapy.run.body_query`; the sweeps and the exact normal solve in
:mod:`kynemapy.run.body_blocks`.

The columns of ``Model.hard_shapes`` (S, 16): node, kind code (0 sphere, 1 capsule, 2 box), the
centre's offset from the node at the reference configuration (3) [m], the local axes' quaternion
(4), dims (3) [m] (sphere r; capsule r, half-length; box half extents), group, mask, Newton's
restitution coefficient e [-], Coulomb's μ [-].

Each contact c between shapes A and B has the gap ``g = n · (p_B − p_A)`` [m] (n the unit normal
from A to B, p the points on each shape), and three rows over the two nodes' DOFs,
``[n; t₁; t₂] ([I, −(p_B − x_B)~] on B − [I, −(p_A − x_A)~] on A)``, so ``G v`` is the relative
velocity of the contact points along n, t₁, t₂ [m/s].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kynemapy.collision.narrow import BOX, ROW
from kynemapy.engine.api import ConvergenceError
from kynemapy.math.rotations import rotation_matrices
from kynemapy.model import Model
from kynemapy.model.errors import ModelError
from kynemapy.run.body_blocks import (
    clip_groups,
    contact_islands,
    friction_sweeps,
    node_blocks,
    normal_lcp,
    solve_blocks,
)
from kynemapy.run.body_coupled import CoupledResponse
from kynemapy.run.body_query import (
    MAX_POINTS,
    contact_rates,
    in_body_frames,
    jacobian_rows,
    material_rows,
    pair_geometry,
    scene_contacts,
    touched_pairs,
)
from kynemapy.run.contact_newton import NEWTON_ITERATIONS, newton_contacts
from kynemapy.run.hard_contact import GAP_TOLERANCE, contact_geometry
from kynemapy.run.nnls import WarmStarts
from kynemapy.run.pyramid_lcp import FINE_PYRAMID_EDGES, PYRAMID_EDGES, pyramid_lcp

#: the bilateral constraints after a correction of a model with joints [m, rad]: no worse than
#: after the smooth step, or this
PHI_TOLERANCE = 1.0e-12

#: the narrow phase's points with a gap up to this are returned [m] (the set's candidates)
QUERY_MARGIN = 1.0e-6
#: the most iterations of the position correction (its friction held after a stalled solve, the
#: iterations converge linearly: 10 for a 100-box pile's landing)
MAX_BODY_ITERATIONS = 50
#: a shape pair's point touched at the start of a step when the pair had a point this close to
#: it then, in body B's frame [m]
TOUCH_DISTANCE = 1.0e-4
#: a pair's keys: shape pair times this plus the point's place among the pair's points (points
#: that join a box pair's fixed points during a correction take the places from MAX_POINTS on)
KEY_SLOTS = 64
#: a box point penetrating by more than ``GAP_TOLERANCE`` [m] during a correction joins its
#: pair's fixed points when it is farther than this from all of them [m]
NEW_POINT_DISTANCE = 1.0e-6

#: the normal rows' residual that :func:`solve_blocks` must also meet [m or m/s] (1 % of the
#: position correction's gap tolerance) once position iterations stall (STALLED_ITERATIONS)
BLOCK_RESIDUAL = 1.0e-14
#: after this many position iterations in a row that did not halve the worst gap, the sweeps must
#: meet BLOCK_RESIDUAL too
STALLED_ITERATIONS = 3
#: up to this many contacts, :func:`normal_lcp` solves them as one problem (islands apart above)
ONE_ISLAND = 300
#: the most rounds of "normal impulses exactly with the friction held, then the friction by
#: sweeps with the normal impulses held" (:meth:`HardBodies._solve`)
STAGGER_ROUNDS = 10
#: stop the sweeps of :func:`solve_blocks` when no component of u changes by more than this,
#: relative to the largest |b|
BLOCK_TOLERANCE = 1.0e-14
#: the most sweeps of :func:`solve_blocks` before the normal problem is solved exactly with the
#: friction held (:meth:`HardBodies._solve`)
FRICTION_SWEEPS = 500
#: a point joins the position correction's set when its gap is at most this [m] (a point left open
#: by a few 1e-11 m at the end of a step, as a redundant support can be, is still a support: left
#: out, its body would fall through the smooth step's h² g and be caught one iteration late)
SET_GAP = 1.0e-9
#: position iterations that do not settle end at their least violating iterate when no point
#: penetrates there by more than this [m] (else a ConvergenceError)
UNSETTLED_DEPTH = 1.0e-7
#: the frictionless solution is taken where no point with friction slips by more than this times
#: the largest |b| (:meth:`HardBodies._solve`)
STICK_TOLERANCE = 1.0e-12
#: an island whose points approach or slide at more than this at the step's start [m/s] is
#: *moving*: once its friction-pyramid solution slipped, it is not tried on the pyramids again
#: within the same step's problem (:meth:`HardBodies._sticking`); an island slower than this (a
#: pile at rest, or settling at 1e-3 m/s) is tried at every iteration
MOVING_SPEED = 1.0e-2
#: an island whose points all approach and slide at most this at the step's start [m/s] rests:
#: where its solution on the friction pyramids slipped, it is solved again on the fine pyramids
#: (:data:`~kynemapy.run.pyramid_lcp.FINE_PYRAMID_EDGES`; :meth:`HardBodies._sticking`).  The
#: 100-box pile at rest moves at 1e-16 m/s; while it lands, islands settling at 1e-4 to 1e-2 m/s
#: slip on both pyramids, and the fine pass on them was 60 % of a step's cost (0.7 s)
RESTING_SPEED = 1.0e-6
#: the most contacts of an island that :func:`newton_contacts` solves (dense: its cost grows as
#: the cube of the contacts); a larger island is finished as before (the same iteration with
#: sparse linear algebra stalled on the 100-box pile's islands: docs/contact.md)
NEWTON_LARGEST = 32
#: :func:`newton_contacts` converged when its residual (in u's units) is at most this times the
#: largest |b| (u computed in floating point from Λ is no closer where W is singular)
NEWTON_TOLERANCE = 1.0e-10
#: a position iteration's Newton solve that stops short of NEWTON_TOLERANCE but within this
#: (relative, as it) is kept and the position iterations go on (at most INEXACT_ITERATIONS such
#: solves in one correction; then the held-friction rounds finish as before)
NEWTON_LOOSE = 1.0e-4
INEXACT_ITERATIONS = 5
#: with joints, a velocity jump with no solution found that meets every law to
#: :data:`kynemapy.run.body_coupled.HELD_TOLERANCE` takes the least violating impulse where its
#: residual (:func:`kynemapy.run.body_coupled.coulomb_residual`, relative) is at most this
#: (:attr:`HardBodies.violation`), else a ConvergenceError
JUMP_LOOSE = 1.0e-6


def empty_record() -> dict[str, np.ndarray]:
    """:attr:`HardBodies.last` without contacts (empty arrays of the right shapes)."""
    i, f = np.zeros(0, dtype=np.int64), np.zeros(0)
    return {
        "shape_a": i, "shape_b": i.copy(), "node_a": i.copy(), "node_b": i.copy(), "point": np.zeros((0, 3)),
        "normal": np.zeros((0, 3)), "tangents": np.zeros((0, 2, 3)), "gap": f, "normal_impulse": f.copy(),
        "friction_impulse": np.zeros((0, 2)), "position_impulse": f.copy(),
    }  # fmt: skip


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The rows of ``values`` (k, 3) whose sorted ``keys`` (k,) equal ``wanted`` (c,); zeros where absent."""
    out = np.zeros((wanted.size, 3))
    if keys.size == 0 or wanted.size == 0:
        return out
    at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    hit = keys[at] == wanted
    out[hit] = values[at[hit]]
    return out


#: no point touching (:attr:`HardBodies._touching`)
_NO_TOUCHING = {
    "keys": np.zeros(0, dtype=np.int64),
    "pair": np.zeros(0, dtype=np.int64),
    "local": np.zeros((0, 3)),
    "local_a": np.zeros((0, 3)),
}


def _writable(a: np.ndarray) -> np.ndarray:
    """``a`` as a writable C-contiguous float64 array (numba types a read-only or strided array
    apart: another compilation of the kernel it is passed to)."""
    return a if a.flags.writeable and a.flags.c_contiguous and a.dtype == np.float64 else np.array(a, np.float64)


def _in_frames(q: np.ndarray, nodes: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """:func:`~kynemapy.run.body_query.in_body_frames`: world vectors (C, 3) in the frames of
    their nodes' bodies at node states q."""
    out = np.empty((nodes.size, 3))
    in_body_frames(_writable(q), np.ascontiguousarray(nodes, dtype=np.int64), _writable(vectors), out)
    return out


def _groups(con: _Contacts) -> np.ndarray:
    """Each contact's group (C,) int: one per shape pair, or per shape and plane, numbered in the
    order of (plane or not, shape A, shape B): one integer key per contact in that order (the
    ids below ``m``), and each key's rank among the distinct keys by one sort (the numbers of the
    rows' own ``np.unique(..., axis=0)`` and of ``np.unique(key, return_inverse=True)``, at a
    small part of their time: two calls a step)."""
    m = int(max(np.max(con.shape_a, initial=0), np.max(con.shape_b, initial=0))) + 1
    key = (con.na < 0).astype(np.int64) * (m * m) + con.shape_a.astype(np.int64) * m + con.shape_b
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    rank = np.empty(key.size, dtype=np.int64)
    rank[order] = np.cumsum(np.concatenate([[False], ordered[1:] != ordered[:-1]]))[: key.size]
    return rank


def _member(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """``np.isin(keys, sorted_keys)`` (C,) bool for sorted ``sorted_keys``, by a binary search (a
    fifth of its time on a few keys)."""
    if sorted_keys.size == 0:
        return np.zeros(keys.shape, dtype=np.bool_)
    return sorted_keys[np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)] == keys


class _Contacts:
    """The contact points of one iteration (C of them): nodes, frames, arms, gaps, slips, keys."""

    def __init__(self, parts: list[tuple[np.ndarray, ...]]) -> None:
        cols = list(zip(*parts, strict=True))[:10] if parts else [()] * 10
        names = ("key", "na", "nb", "frame", "arm_a", "arm_b", "gap", "slip", "mu", "e")
        shapes = {"frame": (0, 3, 3), "arm_a": (0, 3), "arm_b": (0, 3), "slip": (0, 2)}
        for name, col in zip(names, cols, strict=True):
            if col:
                setattr(self, name, np.concatenate(col))
            else:
                dtype = np.int64 if name in ("key", "na", "nb") else np.float64
                setattr(self, name, np.zeros(shapes.get(name, (0,)), dtype=dtype))
        self.shape_a = np.concatenate([p[10] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        self.shape_b = np.concatenate([p[11] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        self.point = np.concatenate([p[12] for p in parts]) if parts else np.zeros((0, 3))
        #: ``p_B − p_A`` [m] (C, 3): along n for closest points; a material pair's may slip apart
        self.apart = np.concatenate([p[13] for p in parts]) if parts else np.zeros((0, 3))

    def take(self, which: np.ndarray) -> _Contacts:
        """The contacts ``which`` (boolean or integer index)."""
        # a mask as indices once, then ndarray.take: half the time of indexing 14 arrays by the mask
        index = np.flatnonzero(which) if which.dtype == np.bool_ else which
        out = object.__new__(_Contacts)
        for name, value in vars(self).items():
            setattr(out, name, value.take(index, axis=0))
        return out


class HardBodies:
    """The shapes under the hard body law of a model, and the contacts of the last step.

    Parameters
    ----------
    model : kynemapy.Model
        A model with ``hard_shapes`` rows (``has_hard_bodies``): rigid bodies, free or with
        joints and other bilateral constraints (:attr:`coupled`; no beams, no joint stops: the
        builder refuses those).
    planes : kynemapy.run.hard_contact.HardContacts or None
        The model's points against hard ground planes, solved in the same problems.

    Attributes
    ----------
    node, kind : (S,) ndarray of int64
        Each shape's node and kind code (0 sphere, 1 capsule, 2 box).
    restitution, friction : float
        Newton's e [-] and Coulomb's μ [-] of every contact between two shapes.
    last : dict of str to ndarray
        The contacts between shapes closed at the end of the last step (C of them):
        ``shape_a``, ``shape_b``, ``node_a``, ``node_b`` (C,) int; ``point`` (C, 3) [m] (the middle
        of the two shapes' points), ``normal`` (C, 3) (unit, from A to B), ``tangents``
        (C, 2, 3), ``gap`` (C,) [m], ``normal_impulse`` (C,) [N s], ``friction_impulse`` (C, 2)
        [N s] along the tangents, ``position_impulse`` (C,) [N s²].
    iterations, sweeps : int
        The position correction's iterations and the velocity jump's sweeps in the last step.
    held_friction : int
        The solves of the last step whose frictional sweeps did not converge, so that the
        normal problem was solved alone with the last sweep's friction (:func:`solve_blocks`).
    newton_solves : int
        The solves of the last step whose stalled sweeps were finished by nonsmooth Newton
        (:func:`kynemapy.run.contact_newton.newton_contacts`).
    sticking_solves : int
        The solves of the last step whose stalled sweeps were finished by the exact solution on
        friction pyramids, where it sticks everywhere
        (:func:`kynemapy.run.pyramid_lcp.pyramid_lcp`).
    unsettled : int
        1 when the last step's position iterations did not reach their tolerance, or one of
        their frictional problems found no solution, and they ended at their least violating
        iterate (no point deeper than :data:`UNSETTLED_DEPTH`), else 0.
    violation : float
        With joints: the residual of Signorini's and Coulomb's laws (relative to the largest
        free velocity, :func:`kynemapy.run.body_coupled.coulomb_residual`) of the last step's
        velocity jump where no exact solution was found and its least violating impulse was taken
        (at most :data:`JUMP_LOOSE`), else 0.
    """

    def __init__(self, model: Model, planes: Any = None) -> None:
        # every array the scene query reads is a writable copy: numba types a read-only array
        # apart from a writable one, and the model's read-only table gave read-only views where
        # a slice was contiguous (one shape), compiling the whole query a second time (20 s)
        table = np.asarray(model.hard_shapes, dtype=np.float64)
        self.node = np.array(table[:, 0], dtype=np.int64)
        self.kind = np.array(table[:, 1], dtype=np.int64)
        self.offset = np.array(table[:, 2:5], order="C")
        self.frame = np.array(table[:, 5:9], order="C")
        self.dims = np.array(table[:, 9:12], order="C")
        self.group = np.array(table[:, 12], dtype=np.int64)
        self.mask = np.array(table[:, 13], dtype=np.int64)
        self.restitution = float(table[0, 14])
        self.friction = float(table[0, 15])
        s = self.node.size
        exc = np.asarray(getattr(model, "hard_excluded", np.zeros((0, 2))), dtype=np.int64).reshape(-1, 2)
        self.excluded = np.unique(np.minimum(exc[:, 0], exc[:, 1]) * s + np.maximum(exc[:, 0], exc[:, 1]))
        self.planes = planes
        #: joints or other bilateral constraints couple the bodies: the contacts' response through
        #: them (:class:`~kynemapy.run.body_coupled.CoupledResponse`) instead of each body's own
        self.coupled = int(model.n_constraints) > 0
        self.x0 = np.array(model.x0, dtype=np.float64, order="C")
        n_nodes = int(model.n_nodes)
        self.n_nodes = n_nodes
        self._scratch = (
            np.zeros((n_nodes, 3)), np.zeros((n_nodes, 4)), np.zeros((s, 3)), np.zeros((s, 4)), np.zeros((s, 3)),
            np.zeros((s, 3)), np.arange(s, dtype=np.int64), np.zeros(s), np.zeros((2, 16, 3)),
        )  # fmt: skip
        self._pairs = np.zeros((max(4 * s, 16), 2), dtype=np.int64)
        self._out = np.zeros((MAX_POINTS * self._pairs.shape[0], ROW))
        self._owner = np.zeros(self._out.shape[0], dtype=np.int64)
        k = 0 if planes is None else planes.size
        self._plane_gap, self._plane_point, self._plane_arm = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
        self.iterations = 0
        self.sweeps = 0
        self.held_friction = 0
        self.newton_solves = 0
        self.sticking_solves = 0
        self.unsettled = 0
        self.violation = 0.0
        self._exact = True
        #: the points found at the end of the last step (touching at the start of the next; the
        #: position correction's friction acts on these only): plane points by key, pair points by
        #: their shape pair and place in body B's frame (:meth:`_touched`)
        self._touching: dict[str, np.ndarray] = dict(_NO_TOUCHING)
        #: the (problem, bodies) of the moving islands whose pyramid solution slipped in this step
        #: (:meth:`_sticking`), and the velocities at the step's start; both set at each step's start
        self._slipping: set[tuple[str, frozenset[int]]] = set()
        #: the same for the resting islands whose solution slipped on the fine pyramids too
        self._fine_slipped: set[tuple[str, frozenset[int]]] = set()
        self._v_start: np.ndarray | None = None
        #: the exact programs' warm starts within a step (:class:`kynemapy.run.nnls.WarmStarts`)
        self._warm = WarmStarts()
        #: the box pairs' material points of the present correction (:meth:`_contacts`), None between
        self._fixed: dict[str, Any] | None = None
        self.last: dict[str, np.ndarray] = empty_record()

    # ------------------------------------------------------------ geometry
    def query(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The contact points between shapes with a gap up to :data:`QUERY_MARGIN` at node states q.

        Parameters
        ----------
        q : (N, 7) ndarray of float
            Node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        rows : (R, 10) ndarray of float
            Point on A (3), point on B (3) [m], unit normal from A to B (3), gap [m].
        pairs : (R, 2) ndarray of int64
            The shapes A, B of each row (A the lower id).
        slot : (R,) ndarray of int64
            The row's place among its pair's rows.
        """
        rows = self._scan(q)
        owner = self._owner[:rows]
        slot = np.arange(rows, dtype=np.int64) - np.searchsorted(owner, owner)
        return self._out[:rows].copy(), self._pairs[owner].copy(), slot

    def _contacts(self, q: np.ndarray, q_start: np.ndarray, fix: bool = False) -> _Contacts:
        """Every point against a hard plane and between two shapes at q, with slips from ``q_start``.

        Points between two boxes are the material points of :attr:`_fixed` once it is set
        (``fix``: set it from this query): their narrow-phase points (face clipping, edge against
        edge) are features that can change between two nearby states (the Newton iterations then
        swing across the tolerance), so within one step's correction each is kept as a point of
        each body with the normal turning with body B; a box point that the correction itself
        pushes into a box, away from those, joins them.
        """
        parts = []
        pl = self.planes
        if pl is not None:
            k = pl.size
            gap, point, arm = pl.geometry(q)
            frame = np.concatenate([pl.normal[:, None, :], pl.tangent], axis=1)
            parts.append(
                (
                    np.arange(k, dtype=np.int64), np.full(k, -1, dtype=np.int64), pl.node, frame, np.zeros((k, 3)),
                    arm, gap, pl.slip(q, q_start), pl.friction, pl.restitution, pl.shape, pl.plane, point,
                    np.zeros((k, 3)),
                )
            )  # fmt: skip
        rows, pairs, slot = self.query(q)
        boxes = (self.kind[pairs[:, 0]] == BOX) & (self.kind[pairs[:, 1]] == BOX)
        if fix:
            self._fixed = self._material(q, rows[boxes], pairs[boxes], slot[boxes])
        if self._fixed is not None:
            fixed = self._fixed
            # a box point penetrating away from every fixed point of its pair joins them (the
            # correction can turn a box onto a corner that was clear after the smooth step)
            new = boxes & (rows[:, 9] < -GAP_TOLERANCE)
            if np.any(new):
                keys = pairs[:, 0] * self.node.size + pairs[:, 1]
                for i in np.flatnonzero(new):
                    same = fixed["pair_key"] == keys[i]
                    if np.any(same):
                        pa = self._world(q, fixed["shape_a"][same], fixed["local_a"][same])
                        if np.min(np.linalg.norm(pa - rows[i, 0:3], axis=1)) <= NEW_POINT_DISTANCE:
                            continue
                    # its place: after the pair's points (a key of its own pair: the places count per pair)
                    place = MAX_POINTS + int(np.count_nonzero(same & (fixed["slot"] >= MAX_POINTS)))
                    if place >= KEY_SLOTS:
                        continue  # pragma: no cover (56 points joining one pair in one step)
                    added = self._material(q, rows[i : i + 1], pairs[i : i + 1], place)
                    fixed["added"] += 1
                    for name in ("pair_key", "shape_a", "shape_b", "slot", "local_a", "local_b", "local_n"):
                        fixed[name] = np.concatenate([fixed[name], added[name]])
            rows, pairs, slot = (
                np.concatenate([rows[~boxes], self._material_rows(q, fixed)]),
                np.concatenate([pairs[~boxes], np.column_stack([fixed["shape_a"], fixed["shape_b"]])]),
                np.concatenate([slot[~boxes], fixed["slot"]]),
            )
        if rows.shape[0]:
            s = self.node.size
            k0 = 0 if pl is None else pl.size
            na, nb = self.node[pairs[:, 0]], self.node[pairs[:, 1]]
            c = rows.shape[0]
            frame, slip = np.empty((c, 3, 3)), np.empty((c, 2))
            arm_a, arm_b, mid, apart = np.empty((c, 3)), np.empty((c, 3)), np.empty((c, 3)), np.empty((c, 3))
            now, start = _writable(q), _writable(q_start)
            pair_geometry(self.x0, now, start, na, nb, _writable(rows), frame, arm_a, arm_b, slip, mid, apart)
            parts.append(
                (
                    k0 + (pairs[:, 0] * s + pairs[:, 1]) * KEY_SLOTS + slot, na, nb, frame, arm_a, arm_b,
                    rows[:, 9].copy(), slip, np.full(c, self.friction), np.full(c, self.restitution), pairs[:, 0],
                    pairs[:, 1], mid, apart,
                )
            )  # fmt: skip
        return _Contacts(parts)

    def _smallest_gap(self, q: np.ndarray) -> tuple[float, bool]:
        """The smallest gap at q [m] over the plane points and the shape pairs, and whether any
        point is within :data:`QUERY_MARGIN` (touching: the next step's friction needs it)."""
        smallest = np.inf
        pl = self.planes
        if pl is not None:
            smallest = contact_geometry(
                pl.x0, q, pl.node, pl.offset, pl.radius, pl.normal, pl.offset_d, self._plane_gap, self._plane_point,
                self._plane_arm,
            )  # fmt: skip
        near = smallest <= QUERY_MARGIN
        rows = self._scan(q)
        if rows > 0:
            near = True
            smallest = min(smallest, float(np.min(self._out[:rows, 9])))
        return float(smallest), bool(near)

    def _scan(self, q: np.ndarray) -> int:
        """:func:`scene_contacts` at q into the query's buffers (grown when too small); the rows."""
        q = _writable(q)  # (a read-only q would compile the query a second time)
        while True:
            rows = scene_contacts(
                self.x0, q, self.node, self.kind, self.offset, self.frame, self.dims, self.group, self.mask,
                self.excluded, QUERY_MARGIN, self._scratch, self._pairs, self._out, self._owner,
            )  # fmt: skip
            if rows >= 0:
                return int(rows)
            # room for twice the candidate pairs found
            self._pairs = np.zeros((-2 * rows, 2), dtype=np.int64)
            self._out = np.zeros((MAX_POINTS * self._pairs.shape[0], ROW))
            self._owner = np.zeros(self._out.shape[0], dtype=np.int64)

    def _local_b(self, con: _Contacts, q: np.ndarray, side: str = "nb") -> np.ndarray:
        """The contacts' points (C, 3) in their body B's frame at node states q [m] (``side="na"``:
        body A's)."""
        nb = getattr(con, side)
        return _in_frames(q, nb, con.point - (self.x0[nb, :3] + q[nb, :3]))

    def _remember_touching(self, con: _Contacts, q: np.ndarray) -> None:
        """Keep the points of ``con`` at q as those touching at the start of the next step."""
        plane = con.na < 0
        pair = ~plane
        self._touching = {
            "keys": np.sort(con.key[plane]),
            "pair": con.shape_a[pair] * self.node.size + con.shape_b[pair],
            "local": self._local_b(con.take(pair), q),
            "local_a": self._local_b(con.take(pair), q, "na"),
        }

    def touching_rows(self) -> np.ndarray:
        """The points touching at the next step's start (:meth:`_remember_touching`) as rows of
        floats, the contact kind's run memory (:class:`TouchingKeeper`).

        Returns
        -------
        (R, 8) ndarray of float
            Per point: kind (0 a plane point, 1 a point between two shapes), key (the plane
            point's key, or ``shape_a * shapes + shape_b``), the point in body B's frame (3)
            and in body A's (3) [m] (zeros for a plane point); the plane points first.
        """
        t = self._touching
        k, p = t["keys"].size, t["pair"].size
        out = np.zeros((k + p, 8))
        out[:k, 1] = t["keys"]
        out[k:, 0] = 1.0
        out[k:, 1] = t["pair"]
        out[k:, 2:5] = t["local"]
        out[k:, 5:8] = t["local_a"]
        return out

    def load_touching(self, rows: np.ndarray) -> None:
        """Put back the points touching at the next step's start from :meth:`touching_rows`' rows.

        Parameters
        ----------
        rows : (R, 8) array_like of float
            The rows (integral kinds and keys).

        Raises
        ------
        ValueError
            Rows of another width, or a kind or key that is not an integer of its range.
        """
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != 8:
            raise ValueError(f"the touching points must be rows of 8 floats, got shape {rows.shape}")
        kind, key = rows[:, 0], rows[:, 1]
        limit = self.node.size * self.node.size
        if not (np.all((kind == 0.0) | (kind == 1.0)) and np.all(key == np.round(key)) and np.all(key >= 0)):
            raise ValueError("the touching points' kinds must be 0 or 1 and their keys integers >= 0")
        pair = kind == 1.0
        if np.any(key[pair] >= limit):
            raise ValueError(f"a touching point's shape pair key is {int(key[pair].max())}, past {limit - 1}")
        self._touching = {
            "keys": np.sort(key[~pair].astype(np.int64)),
            "pair": key[pair].astype(np.int64),
            "local": rows[pair, 2:5].copy(),
            "local_a": rows[pair, 5:8].copy(),
        }

    def _touched(self, con: _Contacts, q_start: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Which contacts (C,) bool touched at the start of the step: a plane point by its key, a
        point of a shape pair when the pair had a point within :data:`TOUCH_DISTANCE` of it in
        body B's frame (the points of a face or an edge are found again in another order, or
        one more or fewer, from one step to the next), or in body A's at the present state q (an
        edge of A sliding along B's face: its points move in B's frame, not in A's)."""
        out = _member(con.key, self._touching["keys"]) & (con.na < 0)
        pair = np.flatnonzero(con.na >= 0)
        if pair.size == 0 or self._touching["pair"].size == 0:
            return out
        # in either body's frame (body A's at q: its points, an edge or a corner sliding along B's
        # face, are material points of A)
        taken = con.take(pair)
        touched = np.zeros(pair.size, dtype=np.bool_)
        touching = self._touching
        touched_pairs(
            np.ascontiguousarray(con.shape_a[pair] * self.node.size + con.shape_b[pair], dtype=np.int64),
            self._local_b(taken, q_start), self._local_b(taken, q, "na"),
            np.ascontiguousarray(touching["pair"], dtype=np.int64), np.ascontiguousarray(touching["local"]),
            np.ascontiguousarray(touching["local_a"]), TOUCH_DISTANCE, touched,
        )  # fmt: skip
        out[pair] = touched
        return out

    def _world(self, q: np.ndarray, shapes: np.ndarray, local: np.ndarray) -> np.ndarray:
        """World points (C, 3) [m] of points given in the frames of the shapes' nodes (C, 3)."""
        nodes = self.node[shapes]
        return self.x0[nodes, :3] + q[nodes, :3] + np.einsum("cij,cj->ci", rotation_matrices(q[nodes, 3:7]), local)

    def _material(self, q: np.ndarray, rows: np.ndarray, pairs: np.ndarray, slot: np.ndarray | int) -> dict[str, Any]:
        """Narrow-phase rows (C, 10) of shape ``pairs`` (C, 2) as material points: each point in its
        body's frame, the normal in body B's."""
        na, nb = self.node[pairs[:, 0]], self.node[pairs[:, 1]]
        xa = self.x0[na, :3] + q[na, :3]
        xb = self.x0[nb, :3] + q[nb, :3]
        c = rows.shape[0]
        return {
            "pair_key": pairs[:, 0] * self.node.size + pairs[:, 1],
            "shape_a": pairs[:, 0].copy(),
            "shape_b": pairs[:, 1].copy(),
            "slot": np.broadcast_to(np.asarray(slot, dtype=np.int64), (c,)).copy(),
            "local_a": _in_frames(q, na, rows[:, 0:3] - xa),
            "local_b": _in_frames(q, nb, rows[:, 3:6] - xb),
            "local_n": _in_frames(q, nb, rows[:, 6:9]),
            "added": 0,
        }

    def _material_rows(self, q: np.ndarray, fixed: dict[str, Any]) -> np.ndarray:
        """The rows (C, 10) of the fixed material points at q: points, normal, ``g = n · (p_B − p_A)``."""
        out = np.empty((fixed["shape_a"].size, 10))
        nodes = self.node[fixed["shape_a"]], self.node[fixed["shape_b"]]
        material_rows(self.x0, _writable(q), *nodes, fixed["local_a"], fixed["local_b"], fixed["local_n"], out)
        return out

    def check_start(self, q: np.ndarray) -> None:
        """Refuse a start with two shapes overlapping by more than 1e-12 m (``ModelError`` naming
        the shapes and the depth)."""
        self._remember_touching(self._contacts(q, q), q)
        rows, pairs, _ = self.query(q)
        bad = np.flatnonzero(rows[:, 9] < -1.0e-12)
        if bad.size:
            i = int(bad[np.argmin(rows[bad, 9])])
            a, b = (int(v) for v in pairs[i])
            raise ModelError(
                f"shapes {a} (node {int(self.node[a])}) and {b} (node {int(self.node[b])}) start overlapping by "
                f"{-float(rows[i, 9]):.9g} m under the hard body law: place them apart or touching"
            )

    # ------------------------------------------------------------ the correction
    def correct(self, stops: Any, v_start: np.ndarray, q_start: np.ndarray) -> None:
        """Enforce the contacts after a converged smooth step (q̃, ṽ in ``stops.sim.state``).

        Position: Newton iterations ``q := q ⊕ U``, ``M U = Gᵀ (ν − ν_prev)``, each the
        frictional problem of :func:`solve_blocks` on the total multipliers ν of the set (the
        points with ``g <= 0`` now or at an earlier iteration, told apart by their key: a plane
        point's index, or a shape pair and the point's place among the pair's points): normal rows
        ``g + G_N U >= 0 ⊥ ν_N >= 0``, tangential rows Coulomb's disk against the points' slip over
        the whole step; until every gap of the set is >= −tol and |g| <= tol where ν_N > 0.
        Velocity: ``v = ṽ + M⁻¹ Gᵀ Λ`` on the set's points closed at the corrected q (g <= tol),
        Newton's law ``ġ_N⁺ + e min(ġ_N⁻, 0) >= 0 ⊥ Λ_N >= 0`` (ġ_N⁻ at ``v_start``) and Coulomb's
        cone.

        Parameters
        ----------
        stops : kynemapy.run.joint_stops.JointStops
            The simulation's correction (its state, mass matrix, position update and refresh).
        v_start, q_start : ndarray
            The velocities (N, 6) and node states (N, 7) at the start of the step.

        Raises
        ------
        ConvergenceError
            The position correction or a sweep does not reach its tolerance.
        """
        sim = stops.sim
        state, q = sim.state, sim.state.q
        self.iterations = 0
        self.sweeps = 0
        self.held_friction = 0
        self.newton_solves = 0
        self.sticking_solves = 0
        self.unsettled = 0
        self.violation = 0.0
        pl = self.planes
        if pl is not None:
            pl.clear()
        self._fixed = None
        self._slipping = set()
        self._fine_slipped = set()
        self._v_start = v_start
        self._warm.clear()
        # the early-out: nothing touches after the smooth step (compiled queries only)
        smallest, near = self._smallest_gap(q)
        if smallest > 0.0 and not near:
            self.last = empty_record()
            self._touching = _NO_TOUCHING
            return
        con = self._contacts(q, q_start, fix=True)
        if not np.any(con.gap <= SET_GAP):
            self._fixed = None
            self.last = empty_record()
            self._remember_touching(con, q)
            return
        con, cur, nu_keys, nu_vals, minv = self._position(stops, q_start, con)
        self._fixed = None
        # the velocity jump at the corrected q
        nu = _lookup(nu_keys, nu_vals, cur.key)
        closed = cur.take(cur.gap <= GAP_TOLERANCE)
        nu_closed = nu[cur.gap <= GAP_TOLERANCE]
        if pl is not None:
            at_plane = cur.na < 0
            pl.position_impulse[cur.key[at_plane]] = nu[at_plane, 0]
        self._remember_touching(con, q)
        if closed.gap.size == 0:
            self.last = empty_record()
            return
        ja = -jacobian_rows(closed.frame, closed.arm_a)
        jb = jacobian_rows(closed.frame, closed.arm_b, closed.apart)
        v = state.v
        if self.coupled:  # ṽ met B v = 0 at q̃: projected onto it at the corrected q first
            v[...] += minv.projection(-minv.velocity_defect(v))[:, : v.shape[1]]
        free = self._rates(closed.na, closed.nb, ja, jb, v)
        approach = self._rates(closed.na, closed.nb, ja, jb, v_start)[:, 0]
        free[:, 0] += closed.e * np.minimum(approach, 0.0)  # a point leaving at the start has no impact
        lam = np.zeros((closed.gap.size, 3))
        y, self.sweeps = self._solve(
            stops, closed.na, closed.nb, ja, jb, minv, free, closed.mu, lam, "velocity jump", closed.frame,
            _groups(closed), tolerated=JUMP_LOOSE, keys=closed.key,
        )  # fmt: skip
        if isinstance(minv, CoupledResponse):
            self.violation = minv.violation
        v[...] += y[:, : v.shape[1]]
        if pl is not None:
            at_plane = closed.na < 0
            which = closed.key[at_plane]
            pl.normal_impulse[which] = lam[at_plane, 0]
            pl.friction_impulse[which] = lam[at_plane, 1:]
            pl.active[which] = True
        self.last = self._record(closed, lam, nu_closed[:, 0])
        stops._refresh()

    # ------------------------------------------------------------ pieces
    def _position(
        self, stops: Any, q_start: np.ndarray, con: _Contacts
    ) -> tuple[_Contacts, _Contacts, np.ndarray, np.ndarray, np.ndarray]:
        """The position correction's Newton iterations (:meth:`correct`) from the contacts ``con`` at
        the present state, the state updated.  Returns the last query's contacts, the set's, the
        multipliers by key and the inverse mass blocks at the corrected state.

        Iterations that do not reach the tolerance in :data:`MAX_BODY_ITERATIONS`, or whose
        frictional problem finds no solution after the first (through joints: the sweeps stalled
        and no finisher applies, as for the gripped box set down on the ground with the schedule
        of ``examples/urdf_pick_box.py`` started 10 ms later), end at their least violating
        iterate when no point penetrates there by more than :data:`UNSETTLED_DEPTH`
        (:attr:`unsettled` counts these).

        Raises
        ------
        ConvergenceError
            No iterate within :data:`UNSETTLED_DEPTH`, or the first iteration's problem has no
            solution found.
        """
        q = stops.sim.state.q
        set_keys = np.zeros(0, dtype=np.int64)
        nu_keys, nu_vals = np.zeros(0, dtype=np.int64), np.zeros((0, 3))
        minv = self._inverse_mass(stops)
        # with joints: Φ no worse than after the smooth step (or round-off)
        phi_allowed = max(float(np.max(np.abs(minv.phi), initial=0.0)), PHI_TOLERANCE) if self.coupled else 0.0
        frozen = strict = False
        inexact = 0
        previous, stalled = np.inf, 0
        best: tuple = (np.inf, np.inf)

        def least_violating() -> tuple[_Contacts, _Contacts, np.ndarray, np.ndarray, np.ndarray]:
            # the iterations end at their least violating iterate (unsettled)
            q[...] = best[2]
            stops._refresh()
            self.unsettled += 1
            return best[3], best[4], best[5], best[6], self._inverse_mass(stops)

        for it in range(MAX_BODY_ITERATIONS + 1):
            if it > 0:
                con = self._contacts(q, q_start)
            inc = (con.gap <= SET_GAP) | _member(con.key, set_keys)
            cur = con.take(inc)
            set_keys = np.sort(cur.key)
            nu = _lookup(nu_keys, nu_vals, cur.key)
            if it > 0:
                pushing = nu[:, 0] > 0.0
                closed_ok = np.all(cur.gap >= -GAP_TOLERANCE) and np.all(np.abs(cur.gap[pushing]) <= GAP_TOLERANCE)
                # a solve left inexact (its problem linearized far from the solution) is solved again
                if self.coupled:
                    closed_ok = closed_ok and float(np.max(np.abs(minv.phi), initial=0.0)) <= phi_allowed
                if closed_ok and self._exact:
                    break
                # iterations that did not halve the worst violation: the sweeps may have stopped short
                # of Signorini's law (Λ drifting along a singular Delassus matrix), so from then on
                # they must also meet BLOCK_RESIDUAL, else the exact normal solve finishes them
                worst = max(float(np.max(-cur.gap, initial=0.0)), float(np.max(np.abs(cur.gap[pushing]), initial=0.0)))
                stalled = stalled + 1 if worst > 0.5 * previous else 0
                strict = strict or stalled >= STALLED_ITERATIONS
                previous = worst
                if worst < best[0]:
                    best = (worst, float(np.max(-cur.gap, initial=0.0)), q.copy(), con, cur, nu_keys, nu_vals)
            if it == MAX_BODY_ITERATIONS and best[1] <= UNSETTLED_DEPTH:
                return least_violating()
            if it == MAX_BODY_ITERATIONS:
                pairs = np.column_stack([cur.shape_a, cur.shape_b]).tolist()
                raise stops.convergence_error(
                    f"the position correction of the hard contacts did not converge in {MAX_BODY_ITERATIONS} "
                    f"iterations (gaps {cur.gap.tolist()} [m] of shape pairs {pairs}; a plane's point: its shape "
                    "and plane)"
                )
            ja = -jacobian_rows(cur.frame, cur.arm_a)
            jb = jacobian_rows(cur.frame, cur.arm_b, cur.apart)
            y0 = self._response(minv, cur.na, cur.nb, ja, jb, nu)
            free = np.column_stack([cur.gap, cur.slip]) - self._rates(cur.na, cur.nb, ja, jb, y0)
            # with joints, the bilateral projection U₀ (M U₀ = Bᵀμ, B U₀ = −Φ) moves the points too
            base = minv.projection(-minv.phi) if self.coupled else None
            if base is not None:
                free += self._rates(cur.na, cur.nb, ja, jb, base)
            lam = nu.copy()
            # friction at position level only where the point touched at the start of the step
            mu = np.where(self._touched(cur, q_start, q), cur.mu, 0.0)
            lam[mu == 0.0, 1:] = 0.0
            held = self.held_friction
            try:
                y, _ = self._solve(
                    stops, cur.na, cur.nb, ja, jb, minv, free, mu, lam, "position correction", cur.frame,
                    _groups(cur), frozen, strict, inexact < INEXACT_ITERATIONS, it == 0, GAP_TOLERANCE, keys=cur.key,
                )  # fmt: skip
            except ConvergenceError:
                # no solution of this iteration's problem (the gripped box set down, its points
                # redundant with friction, after the inexact solves allowed): the least violating
                # iterate so far, as when the iterations do not settle
                if best[1] > UNSETTLED_DEPTH:
                    raise
                return least_violating()
            # once the sweeps had to be finished with the friction held, the friction stays as it is
            # for the rest of this correction: its iterations then only bring the gaps to zero
            frozen = frozen or self.held_friction > held
            inexact += 0 if self._exact else 1
            u = (y - y0 if base is None else y - y0 + base)[stops.dof_node, stops.dof_component]
            stops._apply_position(u)
            stops._refresh()
            self.iterations = it + 1
            nu_keys, nu_vals = set_keys, lam[np.argsort(cur.key)]
            minv = self._inverse_mass(stops)
        return con, cur, nu_keys, nu_vals, minv

    def _solve(
        self, stops: Any, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray,
        free: np.ndarray, mu: np.ndarray, lam: np.ndarray, what: str, frame: np.ndarray, group: np.ndarray,
        frozen: bool = False, strict: bool = False, loose: bool = False, first: bool = True, slip_floor: float = 0.0,
        tolerated: float = 0.0, keys: np.ndarray | None = None,
    ) -> tuple[np.ndarray, int]:  # fmt: skip
        """The frictional problem of :func:`solve_blocks` (Λ in ``lam``, updated); returns
        ``y = M⁻¹ Gᵀ Λ`` (N, 6) and the sweeps.

        Where the sweeps do not converge (:data:`FRICTION_SWEEPS`; :attr:`held_friction` counts
        these), the problem is finished in rounds (at most :data:`STAGGER_ROUNDS`): the normal
        impulses exactly with the friction held (:func:`normal_lcp`, island by island), each
        group's friction resultant clipped to the cone of its normal load (:func:`clip_groups`),
        then the friction alone by sweeps on its disks with the normal impulses held
        (:func:`friction_sweeps`, a convex problem), until the normal impulses no longer change;
        a last exact normal solve makes non-penetration exact, and Coulomb's law holds as an
        inequality per group.  ``frozen``: no sweeps, Λ_T as given (held).  ``strict``: the
        sweeps must also meet :data:`BLOCK_RESIDUAL` (else only their change of u is tested).
        Where Newton does not converge, and at every solve once the friction is held, the islands
        whose problem sticks everywhere are solved exactly on friction pyramids (:meth:`_sticking`,
        with ``slip_floor``: the position correction's :data:`GAP_TOLERANCE`) and only the
        others go to the rounds.  ``tolerated``: with joints, where nothing exact is found, the
        least violating solution is taken up to this residual (the velocity jump's
        :data:`JUMP_LOOSE`).  ``keys`` (C,): the contacts' keys, for the warm starts of the exact
        programs (:class:`kynemapy.run.nnls.WarmStarts`, kept within the step).
        """
        if isinstance(minv, CoupledResponse):  # the dense problem through the joints
            before = minv.sticking_solves
            loosest = NEWTON_LOOSE if loose else tolerated
            out = minv.solve(stops, na, nb, ja, jb, free, mu, lam, what, slip_floor, loosest)
            self._exact = minv.exact
            self.sticking_solves += minv.sticking_solves - before
            return out
        c = na.size
        sweeps = 0
        scratch = self._block_scratch(c)
        self._exact = True
        if first and not frozen and np.any(mu > 0.0):
            # friction may not be needed: where the frictionless solution leaves no point slipping
            # (bodies at rest, moved by the smooth step all alike), it is an exact solution of the
            # frictional problem (sticking with Λ_T = 0), and the one to take: the frictional sweeps
            # on redundant rows can end at another (friction on the disks' rims, the bodies turned)
            smooth = lam.copy()
            smooth[:, 1:] = 0.0
            y = np.zeros((self.n_nodes, 6))
            done = int(
                solve_blocks(
                    na, nb, ja, jb, minv, free, np.zeros_like(mu), smooth, y, scratch, BLOCK_TOLERANCE,
                    BLOCK_RESIDUAL, FRICTION_SWEEPS,
                )
            )  # fmt: skip
            scale = float(np.max(np.abs(free), initial=0.0))
            if done >= 0 and np.max(np.abs(scratch[4][mu > 0.0, 1:]), initial=0.0) <= STICK_TOLERANCE * scale:
                lam[...] = smooth
                return y, done
        if not frozen:
            y = np.zeros((self.n_nodes, 6))
            sweeps = int(
                solve_blocks(
                    na,
                    nb,
                    ja,
                    jb,
                    minv,
                    free,
                    mu,
                    lam,
                    y,
                    scratch,
                    BLOCK_TOLERANCE,
                    BLOCK_RESIDUAL if strict else np.inf,
                    FRICTION_SWEEPS,
                )
            )
            if sweeps >= 0:
                return y, sweeps
        chol = np.zeros_like(minv)
        for node in np.unique(np.concatenate([na, nb])):
            if node >= 0:
                chol[node] = np.linalg.cholesky(0.5 * (minv[node] + minv[node].T))
        # islands of contacts that share a body, solved apart where there are many contacts
        island = contact_islands(na, nb) if na.size > ONE_ISLAND else np.zeros(na.size, dtype=np.int64)
        if not frozen:
            # the sweeps stalled: the islands by nonsmooth Newton from where they stopped
            exact = self._newton(na, nb, ja, jb, minv, free, mu, lam, loose)
            if exact is not None:
                self.newton_solves += 1
                self._exact = exact
                return self._response(minv, na, nb, ja, jb, lam), -sweeps
        # bodies at rest: the islands with a solution that sticks everywhere, found exactly (also
        # once the friction is held)
        stuck = np.zeros(na.size, dtype=bool)
        if np.any(mu > 0.0):
            stuck = self._sticking(
                na, nb, ja, jb, minv, chol, free, mu, lam, contact_islands(na, nb), slip_floor, what, keys
            )  # fmt: skip
        if np.any(stuck):
            self.sticking_solves += 1
        if np.all(stuck):
            return self._response(minv, na, nb, ja, jb, lam), -sweeps
        if not frozen:
            self.held_friction += 1
        if np.any(stuck):
            # the other islands (no body shared with these) by the rounds below
            rest = np.flatnonzero(~stuck)
            part = lam[rest]
            self._held_rounds(
                stops, na[rest], nb[rest], ja[rest], jb[rest], minv, free[rest], mu[rest], part, what, frame[rest],
                group[rest], frozen, chol, island[rest], tuple(a[rest] for a in scratch),
                None if keys is None else keys[rest],
            )  # fmt: skip
            lam[rest] = part
            return self._response(minv, na, nb, ja, jb, lam), -sweeps
        self._held_rounds(
            stops, na, nb, ja, jb, minv, free, mu, lam, what, frame, group, frozen, chol, island, scratch, keys
        )  # fmt: skip
        return self._response(minv, na, nb, ja, jb, lam), -sweeps

    def _held_rounds(
        self, stops: Any, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray,
        free: np.ndarray, mu: np.ndarray, lam: np.ndarray, what: str, frame: np.ndarray, group: np.ndarray,
        frozen: bool, chol: np.ndarray, island: np.ndarray, scratch: tuple, keys: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        """The rounds of :meth:`_solve` (normal impulses exactly with the friction held, then the
        friction by sweeps with the normal impulses held), Λ in ``lam`` updated; ``chol`` the
        nodes' Cholesky factors of their inverse mass blocks, ``island`` the contacts' problems
        for :func:`normal_lcp`, ``scratch`` the sweeps' blocks of these contacts, ``keys`` their
        keys for the warm starts of the normal programs (of the kind ``what``)."""
        warm = self._warm if keys is not None else None
        for _ in range(STAGGER_ROUNDS):
            # the normal impulses exactly, the friction held; then the friction on the new disks
            tangential = lam.copy()
            tangential[:, 0] = 0.0
            y_t = self._response(minv, na, nb, ja, jb, tangential)
            b_n = free[:, 0] + self._rates(na, nb, ja, jb, y_t)[:, 0]
            solved = normal_lcp(na, nb, ja[:, 0], jb[:, 0], chol, b_n, island, keys, warm, (what, 0))
            if solved is None:
                raise stops.convergence_error(
                    f"the normal problem of the hard contacts' {what} (friction held) has no solution"
                )
            change = float(np.max(np.abs(solved - lam[:, 0]), initial=0.0))
            lam[:, 0] = solved
            clip_groups(lam, mu, frame, group)
            if frozen or not np.any(mu > 0.0):
                break
            y = self._response(minv, na, nb, ja, jb, lam)
            friction_sweeps(na, nb, ja, jb, free, mu, lam, y, scratch, BLOCK_TOLERANCE, FRICTION_SWEEPS)
            if change <= 1e-12 * float(np.max(lam[:, 0], initial=0.0)):
                break
        # the normal problem once more with the final friction: the gaps exact
        tangential = lam.copy()
        tangential[:, 0] = 0.0
        y_t = self._response(minv, na, nb, ja, jb, tangential)
        b_n = free[:, 0] + self._rates(na, nb, ja, jb, y_t)[:, 0]
        solved = normal_lcp(na, nb, ja[:, 0], jb[:, 0], chol, b_n, island, keys, warm, (what, 0))
        if solved is not None:
            lam[:, 0] = solved
            clip_groups(lam, mu, frame, group)

    def _sticking(
        self, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray, chol: np.ndarray,
        free: np.ndarray, mu: np.ndarray, lam: np.ndarray, island: np.ndarray, slip_floor: float = 0.0,
        what: str = "", contact_keys: np.ndarray | None = None,
    ) -> np.ndarray:  # fmt: skip
        """The frictional problem on inner friction pyramids (:func:`pyramid_lcp`), island by
        island; which contacts (C,) bool are in an island whose solution sticks at every loaded
        point with friction (``|u_T|`` at most :data:`STICK_TOLERANCE` times the island's largest
        |b|: then it is an exact solution of the island's problem with Coulomb's cones), their Λ
        put in ``lam`` (the others' left as given).  ``slip_floor`` [the units of b]: a slip up
        to it passes too (the position correction's :data:`GAP_TOLERANCE`, its own tolerance on
        the gaps: measured on the 100-box pile at rest, its islands' solutions slip by up to
        5e-14 m, the size of the gaps the step before left, where 1e-12 of the free term is
        5e-18 m).  ``what``: the problem (position or velocity); a *moving* island (points
        approaching or sliding faster than :data:`MOVING_SPEED` at the step's start) of the same
        bodies whose solution slipped earlier in the same step's problem of that kind is not
        tried again (:attr:`_slipping`: while a pile lands, its islands slip and these programs
        were most of the step's cost; at rest every island is tried at every iteration).  A
        *resting* island (every point at most :data:`RESTING_SPEED` at the step's start) whose
        solution slipped is solved once more on the fine pyramids
        (:data:`~kynemapy.run.pyramid_lcp.FINE_PYRAMID_EDGES`), unless it slipped there earlier in
        the same step's problem.  ``contact_keys`` (C,): the contacts' keys (the programs' warm
        starts)."""
        stuck = np.zeros(na.size, dtype=bool)
        n = int(island.max(initial=-1)) + 1
        bodies = [frozenset(np.concatenate([na[island == i], nb[island == i]]).tolist()) - {-1} for i in range(n)]
        keys = [(what, b) for b in bodies]
        moving = np.zeros(n, dtype=bool)
        resting = np.ones(n, dtype=bool)
        if self._v_start is not None and n:
            speed = np.max(np.abs(self._rates(na, nb, ja, jb, self._v_start)), axis=1)
            fastest = np.zeros(n)
            np.maximum.at(fastest, island, speed)
            moving = fastest > MOVING_SPEED
            resting = fastest <= RESTING_SPEED
        tried = np.array([not (moving[i] and keys[i] in self._slipping) for i in range(n)], dtype=bool)
        held = self._pyramid_pass(
            na, nb, ja, jb, minv, chol, free, mu, lam, island, tried, slip_floor, stuck, PYRAMID_EDGES, contact_keys,
            what,
        )  # fmt: skip
        if held is None:  # no solution on the pyramids
            return stuck
        self._slipping.update(keys[i] for i in np.flatnonzero(tried & moving & ~held))
        # islands at rest that slipped on the coarse pyramids: once more on the fine ones (not again
        # within this step's problem once they slipped there too)
        again = tried & resting & ~held & np.array([keys[i] not in self._fine_slipped for i in range(n)], dtype=bool)
        if np.any(again):
            fine = self._pyramid_pass(
                na, nb, ja, jb, minv, chol, free, mu, lam, island, again, slip_floor, stuck, FINE_PYRAMID_EDGES,
                contact_keys, what,
            )  # fmt: skip
            if fine is not None:
                self._fine_slipped.update(keys[i] for i in np.flatnonzero(again & ~fine))
        return stuck

    def _pyramid_pass(
        self, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray, chol: np.ndarray,
        free: np.ndarray, mu: np.ndarray, lam: np.ndarray, island: np.ndarray, tried: np.ndarray, slip_floor: float,
        stuck: np.ndarray, edges: int = PYRAMID_EDGES, keys: np.ndarray | None = None, what: str = "",
    ) -> np.ndarray | None:  # fmt: skip
        """One pass of :meth:`_sticking` over the islands ``tried`` (n,) bool on pyramids of
        ``edges`` edges: the islands whose solution sticks (n,) bool (None where the program has
        no solution); their contacts marked in ``stuck`` and their Λ put in ``lam``; ``keys``
        the contacts' keys for the programs' warm starts (of the kind ``what`` and ``edges``)."""
        n = tried.size
        held = np.zeros(n, dtype=bool)
        warm = self._warm if keys is not None else None
        sel = tried[island] if n else np.zeros(0, dtype=bool)
        if not np.any(sel):
            return held
        if np.all(sel):  # every island (as at rest): the arrays as they are
            solved = pyramid_lcp(na, nb, ja, jb, chol, free, mu, island, edges, keys, warm, (what, edges))
            part = island
        else:
            na, nb, ja, jb, free, mu, part = na[sel], nb[sel], ja[sel], jb[sel], free[sel], mu[sel], island[sel]
            keys = None if keys is None else keys[sel]
            solved = pyramid_lcp(na, nb, ja, jb, chol, free, mu, part, edges, keys, warm, (what, edges))
        if solved is None:
            return None
        u = free + self._rates(na, nb, ja, jb, self._response(minv, na, nb, ja, jb, solved))
        loaded = (solved[:, 0] > 0.0) & (mu > 0.0)
        slip = np.zeros(n)
        size = np.zeros(n)
        np.maximum.at(slip, part, np.where(loaded, np.max(np.abs(u[:, 1:]), axis=1), 0.0))
        np.maximum.at(size, part, np.max(np.abs(free), axis=1))
        held = tried & (slip <= np.maximum(STICK_TOLERANCE * size, slip_floor))
        mine = held[part]
        where = np.flatnonzero(sel)
        stuck[where[mine]] = True
        lam[where[mine]] = solved[mine]
        return held

    def _newton(
        self, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, minv: np.ndarray, free: np.ndarray,
        mu: np.ndarray, lam: np.ndarray, loose: bool = False,
    ) -> bool | None:  # fmt: skip
        """The frictional problem island by island by :func:`newton_contacts` from Λ in ``lam``.

        Returns True when every island met :data:`NEWTON_TOLERANCE` (``lam`` then holds the
        solution); with ``loose``, False when some island stopped short of it but within
        :data:`NEWTON_LOOSE` (``lam`` then holds the best iterates: a position iteration's problem,
        linearized at a state whose friction cannot stick exactly by first-order motions, solved
        again at the next iteration); else None (``lam`` left as given)."""
        island = contact_islands(na, nb)
        exact = True
        out = lam.copy()
        order = np.argsort(island, kind="stable")
        bounds = np.flatnonzero(np.diff(island[order])) + 1
        for idx in np.split(order, bounds):
            k = idx.size
            part = out[idx]
            if k > NEWTON_LARGEST:
                return None  # too large for the dense solve: finished as before
            done, residual = newton_contacts(
                na[idx], nb[idx], ja[idx], jb[idx], minv, free[idx], mu[idx], part, np.empty((3, 3 * k, 3 * k)),
                np.empty((9, 3 * k)), np.empty((2, k, 6, 3)), NEWTON_TOLERANCE, NEWTON_ITERATIONS,
            )  # fmt: skip
            if done < 0:
                if not loose or residual > NEWTON_LOOSE * float(np.max(np.abs(free[idx]))):
                    return None
                exact = False
            out[idx] = part
        lam[...] = out
        return exact

    def _inverse_mass(self, stops: Any) -> Any:
        """Each node's inverse mass block (N, 6, 6) at the state (zero for nodes without shapes);
        with bilateral constraints (:attr:`coupled`) their factored system instead."""
        if self.coupled:
            return CoupledResponse(stops)
        asm = stops.assembler
        asm.state.assign(stops.sim.state)
        asm.state.q_delta[...] = 0.0
        asm.inputs.f[...] = stops.sim.inputs.f
        from kynemapy.engine.api import task
        from kynemapy.engine.entry import LINEARIZE

        task(asm.data, asm.p, LINEARIZE)
        blocks = np.zeros((self.n_nodes, 6, 6))
        off = node_blocks(asm._indptr, asm._indices, asm.workspace.vals, stops.dof_node, stops.dof_component, blocks)
        if off != 0.0:  # pragma: no cover (the builder refuses what couples nodes' masses)
            raise ModelError("hard body contact: the mass matrix couples two nodes (free bodies only)")
        out = np.zeros_like(blocks)
        dofs = np.asarray(stops.sim.model.node_dofs)
        nodes = np.unique(self.node)
        # the nodes with the same number of DOFs in one batched call each (rigid bodies 6, points 3)
        for d in np.unique(dofs[nodes]):
            same = nodes[dofs[nodes] == d]
            block = blocks[same, :d, :d]
            bad = ~np.all(np.isfinite(block), axis=(1, 2))
            bad[~bad] = np.linalg.cond(block[~bad]) > 1e14
            if np.any(bad):
                node = int(same[np.flatnonzero(bad)[0]])
                raise ModelError(f"hard body contact: node {node} carries a shape but has no (invertible) mass")
            out[same, :d, :d] = np.linalg.inv(block)
        return out

    @staticmethod
    def _rates(na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``J_A y_A + J_B y_B`` (C, 3) with y (N, ≤6) per node (no body: zero;
        :func:`~kynemapy.run.body_query.contact_rates`)."""
        out = np.empty((na.size, 3))
        nodes = (np.ascontiguousarray(x, dtype=np.int64) for x in (na, nb))
        contact_rates(*nodes, _writable(ja), _writable(jb), _writable(y), out)
        return out

    def _response(
        self, minv: np.ndarray, na: np.ndarray, nb: np.ndarray, ja: np.ndarray, jb: np.ndarray, lam: np.ndarray
    ) -> np.ndarray:
        """``M⁻¹ Gᵀ Λ`` (N, 6) per node (``S Gᵀ Λ`` through the bilateral constraints when coupled)."""
        if isinstance(minv, CoupledResponse):
            return minv.response(na, nb, ja, jb, lam)
        out = np.zeros((self.n_nodes + 1, 6))
        pad = np.concatenate([minv, np.zeros((1, 6, 6))])
        np.add.at(out, na, np.einsum("crt,cst,cs->cr", pad[na], ja, lam))
        np.add.at(out, nb, np.einsum("crt,cst,cs->cr", pad[nb], jb, lam))
        return out[:-1]

    @staticmethod
    def _block_scratch(c: int) -> tuple[np.ndarray, ...]:
        return np.zeros((c, 6, 3)), np.zeros((c, 6, 3)), np.zeros((c, 3, 3)), np.zeros(c), np.zeros((c, 3))

    def _record(self, closed: _Contacts, lam: np.ndarray, nu: np.ndarray) -> dict[str, np.ndarray]:
        """The last step's contacts between shapes (planes' points left out: ``contact_impulses``)."""
        pair = closed.na >= 0
        return {
            "shape_a": closed.shape_a[pair],
            "shape_b": closed.shape_b[pair],
            "node_a": closed.na[pair],
            "node_b": closed.nb[pair],
            "point": closed.point[pair],
            "normal": closed.frame[pair, 0],
            "tangents": closed.frame[pair, 1:],
            "gap": closed.gap[pair],
            "normal_impulse": lam[pair, 0] if lam.size else np.zeros(0),
            "friction_impulse": lam[pair, 1:] if lam.size else np.zeros((0, 2)),
            "position_impulse": nu[pair] if nu.size else np.zeros(0),
        }


class TouchingKeeper:
    """The contact kind's run memory (:class:`kynemapy.model.registry.kind.Memory`): the points
    touching at the next step's start under the hard body law, saved with each restart slot and
    loaded by :meth:`kynemapy.Simulation.restart`, so a restarted run of a hard-body model goes on
    bit for bit.

    Parameters
    ----------
    sim : Simulation
        A simulation of a model with hard bodies.
    """

    def __init__(self, sim: Any) -> None:
        bodies = sim.joint_stops.bodies if sim.joint_stops is not None else None
        if bodies is None:
            raise ValueError("TouchingKeeper: the simulation's model has no shapes under the hard body law")
        self._bodies: HardBodies = bodies

    def save(self) -> np.ndarray:
        """(R, 8) float64: :meth:`HardBodies.touching_rows`."""
        return self._bodies.touching_rows()

    def load(self, rows: np.ndarray) -> None:
        """:meth:`HardBodies.load_touching`."""
        self._bodies.load_touching(rows)
