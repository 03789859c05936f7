"""Hard (unilateral) hinge-angle and slider-travel limits: the decoupled nonsmooth generalized-α step.

After each ordinary (smooth) step of the engine, which knows nothing of the stops, giving q̃, ṽ and
the smooth algorithmic acceleration a (kept as it is), a limit whose gap ``g`` is <= 0 at q̃
(``g = θ − lower`` or ``upper − θ``, θ the joint's angle [rad] or travel [m]) is enforced in two
corrections (Brüls, Acary & Cardona, CMAME 2014; Chen, Acary, Virlez & Brüls, IJNME 2013):

* position: ``q = q̃ ⊕ U`` (translations added, rotations ``R = exp(U_θ~) R̃``, the engine's
  spatial increment), ``M U = Bᵀμ + Gᵀν`` with the bilateral constraints ``Φ(q) = 0`` kept and
  ``g(q) = 0``, ``ν >= 0`` for the active limits (one whose ν comes out negative is released);
  solved by Newton iterations on the nonlinear Φ and g (each a mass-weighted projection);
* velocity: ``v = ṽ + W``, ``M W = Bᵀ Λ_b + Gᵀ Λ``, ``B W = 0`` and, for the active limits,
  Newton's impact law ``G v + e G v_n >= 0 ⊥ Λ >= 0`` (v_n the velocity at the start of the step),
  a small linear complementarity problem solved exactly by principal pivoting.

M, B and Φ come from the engine's ``LINEARIZE`` task (as :class:`kynemapy.analysis.linearize.Assembler`
assembles them: no step increment, 𝒯 = I, β′ = 1, no K^Φ);
the limit's gradient G (a row over the DOFs, ``dθ = G δq``) is the generalized force of a unit
joint torque (force), read from the engine's own joint-load kernel as the change of the assembled
residual when the joint's torque (force) input grows by 1 (the residual holds minus the applied
loads; exact: the load is linear in its input).  Nothing of this enters the compiled engine: a
model without hard limits steps exactly as before.

A model with points against hard ground planes (:mod:`kynemapy.run.hard_contact`) takes another
path, :meth:`JointStops._correct_with_contacts`: the stops and the contact points in one set of
unilateral rows (three per point: normal and two tangential; a stop's row with two zero ones),
the position correction and the velocity jump each a frictional contact problem on the Delassus
matrix solved by projected Gauss–Seidel (:func:`kynemapy.run.hard_contact.solve_cone`), and the
velocity jump meeting ``B v = 0`` at the corrected q.  A model with stops alone keeps the path
above, its numbers unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from kynemapy._jit import njit
from kynemapy.engine.api import ConvergenceError, task
from kynemapy.engine.data import new_inputs, new_state, new_workspace
from kynemapy.engine.entry import LINEARIZE, START
from kynemapy.engine.params import coefficient_vector
from kynemapy.math.quaternion import quat_exp, quat_product
from kynemapy.model import Model, kinds
from kynemapy.model.errors import ModelError
from kynemapy.model.registry.contact.rows import has_hard_bodies
from kynemapy.run.hard_bodies import HardBodies
from kynemapy.run.hard_contact import (
    GAP_TOLERANCE,
    MAX_SWEEPS,
    SWEEP_TOLERANCE,
    HardContacts,
    contact_geometry,
    has_hard_contacts,
    position_step,
    solve_cone,
    velocity_jump,
)
from kynemapy.run.hard_rows import body_impulse_sums

#: the most Newton iterations of the position correction
MAX_ITERATIONS = 20
#: the tolerance of the bilateral constraints after it [m, rad]: never worse than after the smooth step
PHI_TOLERANCE = 1.0e-12


def has_joint_stops(model: Model) -> bool:
    """Whether ``model`` has hard hinge or slider limits (``Model.joint_stops`` with rows)."""
    stops = getattr(model, "joint_stops", None)
    return stops is not None and np.asarray(stops).shape[0] > 0


def solve_lcp(d: np.ndarray, w0: np.ndarray) -> np.ndarray:
    """Λ >= 0 with ``w = D Λ + w0 >= 0`` and ``Λ · w = 0`` (D (k, k) a P-matrix), by Murty's
    least-index principal pivoting (finite for a P-matrix such as a positive definite Delassus matrix).

    Parameters
    ----------
    d : (k, k) ndarray of float
        The matrix D.
    w0 : (k,) ndarray of float
        The free term.

    Returns
    -------
    (k,) ndarray of float
        Λ.
    """
    k = w0.shape[0]
    scale = max(1.0, float(np.max(np.abs(w0)))) if k else 1.0
    eps = 1.0e-14 * scale
    basis = np.zeros(k, dtype=bool)
    lam = np.zeros(k)
    for _ in range(2 ** min(k, 20) + 2 * k + 2):
        lam[:] = 0.0
        if np.any(basis):
            idx = np.flatnonzero(basis)
            lam[idx] = np.linalg.solve(d[np.ix_(idx, idx)], -w0[idx])
        w = d @ lam + w0
        bad = np.flatnonzero((basis & (lam < -eps)) | (~basis & (w < -eps)))
        if bad.size == 0:
            return np.maximum(lam, 0.0)
        basis[bad[0]] = ~basis[bad[0]]
    raise RuntimeError("joint stops: the impact problem (LCP) did not converge")  # pragma: no cover


@njit
def csc_to_dense(indptr: np.ndarray, indices: np.ndarray, vals: np.ndarray, out: np.ndarray) -> None:
    """Scatter a CSC matrix into the dense ``out`` (zeroed first; repeated entries added in order).

    Parameters
    ----------
    indptr : (n + 1,) ndarray of int64
        The column pointers.
    indices : (nnz,) ndarray of int64
        The row of each stored value.
    vals : (>= nnz,) ndarray of float
        The values (the first nnz used).
    out : (n, n) ndarray of float
        Out: the dense matrix.
    """
    n = out.shape[1]
    for i in range(out.shape[0]):
        for j in range(n):
            out[i, j] = 0.0
    for j in range(n):
        for p in range(indptr[j], indptr[j + 1]):
            out[indices[p], j] += vals[p]


@njit
def apply_position(
    q: np.ndarray,
    u: np.ndarray,
    dof_node: np.ndarray,
    dof_component: np.ndarray,
    rotating: np.ndarray,
    rot_first: np.ndarray,
) -> None:
    """``q := q ⊕ u``: translations added, rotations ``r := exp(u_θ) ⊗ r`` (normalized).

    Parameters
    ----------
    q : (N, 7) ndarray of float
        Node displacements [m] and rotation quaternions (w, x, y, z), updated in place.
    u : (n,) ndarray of float
        The increment over the DOFs [m, rad].
    dof_node, dof_component : (n,) ndarray of int64
        Each DOF's node and component (0 to 5).
    rotating : (R,) ndarray of int64
        The nodes with rotational DOFs.
    rot_first : (R,) ndarray of int64
        Their first DOFs.
    """
    for j in range(u.shape[0]):
        if dof_component[j] < 3:
            q[dof_node[j], dof_component[j]] += u[j]
    for i in range(rotating.shape[0]):
        node = rotating[i]
        f = rot_first[i]
        w0, w1, w2 = u[f + 3], u[f + 4], u[f + 5]
        if w0 == 0.0 and w1 == 0.0 and w2 == 0.0:
            continue
        e0, e1, e2, e3 = quat_exp(w0, w1, w2)
        n0, n1, n2, n3 = quat_product(e0, e1, e2, e3, q[node, 3], q[node, 4], q[node, 5], q[node, 6])
        norm = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2 + n3 * n3)
        q[node, 3] = n0 / norm
        q[node, 4] = n1 / norm
        q[node, 5] = n2 / norm
        q[node, 6] = n3 / norm


#: the coefficients of a linearization with β′ = 1 alone (h = 1 s, c = 1, exact gradients, no K^Φ):
#: the Newton matrix is [[M, Bᵀ], [B, 0]] (``analysis.linearize.linearization_coefficients(1, 0, 0, False)``)
MASS_COEFFICIENTS = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1, True, True, False, 0.0)


class _Assembler:
    """The engine's Newton matrix and residual at given states (``LINEARIZE``, its own workspace)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.workspace = new_workspace(model, 1, "auto", True)
        self.state = new_state(model)
        self.inputs = new_inputs(model)
        self.data = self.workspace.data(self.state, self.inputs)
        self.p = coefficient_vector(*MASS_COEFFICIENTS)
        self._indptr = np.ascontiguousarray(self.workspace.indptr, dtype=np.int64)
        self._indices = np.ascontiguousarray(self.workspace.indices, dtype=np.int64)
        self._b = self.workspace.views["b"]

    def system(self, state: Any, inputs: Any) -> tuple[np.ndarray, np.ndarray]:
        """The dense Newton matrix (n, n) and the residual (n,) at ``state`` (Δq := 0) and ``inputs``."""
        self.state.assign(state)
        self.state.q_delta[...] = 0.0
        self.inputs.f[...] = inputs.f
        self.inputs.constraint_input[...] = inputs.constraint_input
        task(self.data, self.p, LINEARIZE)
        ws = self.workspace
        n = int(self.model.n_dofs)
        matrix = np.empty((n, n))
        csc_to_dense(self._indptr, self._indices, ws.vals, matrix)
        return matrix, self._b.copy()


class JointStops:
    """The hard hinge and slider limits of one simulation, enforced after each of its steps.

    Parameters
    ----------
    sim : kynemapy.Simulation
        The simulation; its model's ``joint_stops`` (K, 5) lists the limits.

    Attributes
    ----------
    cid : (K,) ndarray of int64
        The constraint id of each limited joint.
    lower, upper : (K,) ndarray of float
        The limits [rad or m].
    restitution : (K,) ndarray of float
        Newton's restitution coefficients e [-].
    impulse : (K,) ndarray of float
        The velocity impulse Λ of each stop in the last step [N m s or N s]: positive pushes the
        joint off its lower limit (into increasing θ), negative off its upper one; zero when the
        joint was clear of its stops.
    position_impulse : (K,) ndarray of float
        The position correction's multiplier ν of each stop in the last step, same sign
        convention [N m s² or N s²].
    iterations : int
        The Newton iterations of the last position correction (0: no stop was active).
    contacts : kynemapy.run.hard_contact.HardContacts or None
        The points against hard ground planes, with their last step's impulses; None without.
    sweeps : int
        The projected Gauss–Seidel sweeps of the last velocity jump with contact points.
    events : kynemapy.run.impact_event.ImpactEvents
        The impact-time location of the simulation's steps: the last impact's time and the
        velocities around it.
    """

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        model = sim.model
        stops = getattr(model, "joint_stops", None)
        table = np.zeros((0, 5)) if stops is None else np.asarray(stops, dtype=np.float64).reshape(-1, 5)
        #: the points against hard ground planes (:mod:`kynemapy.run.hard_contact`), None without
        self.contacts: HardContacts | None = HardContacts(model) if has_hard_contacts(model) else None
        #: the shapes touching each other under the hard body law (:mod:`kynemapy.run.hard_bodies`),
        #: None without; it then solves the points against hard planes too
        self.bodies: HardBodies | None = HardBodies(model, self.contacts) if has_hard_bodies(model) else None
        #: the projected Gauss–Seidel sweeps of the last velocity jump with contact points
        self.sweeps = 0
        #: the impact-time location of the simulation's steps (:class:`kynemapy.run.impact_event.ImpactEvents`)
        self.events: Any = None
        # the early-out's scratch (gaps, points, arms), and whether the last step left impulses to zero
        k = 0 if self.contacts is None else self.contacts.size
        self._gap, self._point, self._arm = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
        self._dirty = True
        self.cid = table[:, 0].astype(np.int64)
        # the compiled path: contact points without stops on free nodes (no bilateral constraints)
        self._compiled = self.contacts is not None and self.cid.size == 0 and model.n_dofs == model.n_system_dofs
        #: the hard laws' impulses summed over the steps since the last :meth:`take_sums` (None: not
        #: kept; :meth:`keep_sums` starts them, for the rows of a result file)
        self.sums: dict[str, np.ndarray] | None = None
        if self._compiled:
            con, n = self.contacts, int(model.n_system_dofs)
            assert con is not None
            self._geo = (
                con.x0, con.node, con.offset, con.radius, con.normal, con.offset_d, con.tangent, con.friction,
                con.first, con.rotates,
            )  # fmt: skip
            self._in_set = np.zeros(k, dtype=bool)
            self._nu = np.zeros((k, 3))
            self._counts = np.zeros(2, dtype=np.int64)
            self._u = np.zeros(n)
            self._scratch = (
                self._gap, self._point, self._arm, np.zeros((k, 2)), np.zeros(k, dtype=np.int64),
                np.zeros((3 * k, n)), np.zeros((n, n)), np.zeros(n, dtype=np.int64), np.zeros((n, 3 * k)), self._u,
                np.zeros((3 * k, 3 * k)), np.zeros(3 * k), np.zeros(3 * k), np.zeros(3 * k), np.zeros(k),
                np.zeros(k), np.zeros(3 * k),
            )  # fmt: skip
            self._scratch_v = (*self._scratch, np.zeros(n), np.zeros(n))
            self._impulses = (con.normal_impulse, con.friction_impulse, con.active)
        self.kind = table[:, 1].astype(np.int64)
        self.lower = table[:, 2].copy()
        self.upper = table[:, 3].copy()
        self.restitution = table[:, 4].copy()
        self.impulse = np.zeros(self.cid.size)
        self.position_impulse = np.zeros(self.cid.size)
        self.iterations = 0
        self.n = int(model.n_system_dofs)
        self._assembler: _Assembler | None = None
        first = np.asarray(model.node_map, dtype=np.int64)
        dofs = np.asarray(model.node_dofs, dtype=np.int64)
        # DOF index -> (node, component) of the state's (N, 6) arrays
        self.dof_node = np.zeros(self.n, dtype=np.int64)
        self.dof_component = np.zeros(self.n, dtype=np.int64)
        for node, (start, count) in enumerate(zip(first, dofs, strict=True)):
            self.dof_node[start : start + count] = node
            self.dof_component[start : start + count] = np.arange(count)
        self.rotating = np.flatnonzero(dofs == 6).astype(np.int64)
        self.rot_first = first[self.rotating]
        # the constraints whose outputs _refresh keeps (all but the hinges' and sliders')
        kind = np.asarray(model.constraint_kind)
        self._keep = np.flatnonzero((kind != kinds.HINGE_JOINT) & (kind != kinds.SLIDER_JOINT))
        for kind in self.kind:
            if kind not in (kinds.HINGE_JOINT, kinds.SLIDER_JOINT):  # pragma: no cover (the builder's table)
                raise ValueError(f"joint_stops: constraint kind {kind} has no hard limits (hinges and sliders only)")

    @property
    def assembler(self) -> _Assembler:
        """The engine's Newton system at given states (made on first use)."""
        if self._assembler is None:
            self._assembler = _Assembler(self.sim.model)
        return self._assembler

    # ------------------------------------------------------------ pieces
    def _refresh(self) -> None:
        """x and the hinge and slider outputs from the state's q, v (``START``), keeping a and the
        other kinds' outputs."""
        state = self.sim.state
        a = state.a.copy()
        keep = self._keep
        out = state.constraint_output[keep] if keep.size else None
        task(self.sim.data, self.sim.coefficients, START)
        state.a[...] = a
        if out is not None:
            state.constraint_output[keep] = out

    def _system(self, active: np.ndarray, side: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """M (n, n), B (m, n), Φ (m,) and the gap gradients (k, n) of the limits ``active`` at the state."""
        sim, n = self.sim, self.n
        asm = self.assembler
        dense, b0 = asm.system(sim.state, sim.inputs)
        grads = np.zeros((active.size, n))
        probe = _InputsCopy(sim.inputs)
        for j, (i, s) in enumerate(zip(active, side, strict=True)):
            c = self.cid[i]
            probe.constraint_input[...] = sim.inputs.constraint_input
            probe.constraint_input[c, 0] += 1.0
            _, b1 = asm.system(sim.state, probe)
            grads[j] = -s * (b1[:n] - b0[:n])  # G θ = −∂b/∂τ: the residual holds −(applied load)
        return dense[:n, :n], dense[n:, :n], b0[n:], grads

    def _apply_position(self, u: np.ndarray) -> None:
        """q := q ⊕ u: translations added, rotations ``r := exp(u_θ) ⊗ r``."""
        apply_position(
            self.sim.state.q, np.ascontiguousarray(u, dtype=np.float64), self.dof_node, self.dof_component,
            self.rotating, self.rot_first,
        )  # fmt: skip

    def _gaps(self, active: np.ndarray, side: np.ndarray) -> np.ndarray:
        theta = self.sim.state.constraint_output[self.cid[active], 0]
        return np.where(side > 0, theta - self.lower[active], self.upper[active] - theta)

    def check_start(self) -> None:
        """Refuse a start outside a joint's limits (``ModelError`` naming the joint and its value),
        or with a point inside a hard ground plane (naming the shape and the plane)."""
        if self.contacts is not None:
            self.contacts.check_start(self.sim.state.q)
        if self.bodies is not None:
            self.bodies.check_start(self.sim.state.q)
        theta = self.sim.state.constraint_output[self.cid, 0]
        slack = GAP_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(self.lower), np.abs(self.upper)))
        bad = np.flatnonzero((theta < self.lower - slack) | (theta > self.upper + slack))
        if bad.size:
            i = int(bad[0])
            unit = "rad" if self.kind[i] == kinds.HINGE_JOINT else "m"
            raise ModelError(
                f"constraint {int(self.cid[i])} starts at {float(theta[i])!r} {unit}, outside its hard limits "
                f"({float(self.lower[i])!r}, {float(self.upper[i])!r}) {unit}"
            )

    # ------------------------------------------------------------ impulses between output rows
    def keep_sums(self) -> None:
        """Start summing the hard laws' impulses over the steps (:meth:`step_done`), from zero:
        ``normal_impulse`` (K,) [N s] and ``friction_impulse`` (K, 3) [N s] (on the body, world
        frame) of the points against hard planes, ``body_impulse`` (N, 6) [N s, N m s] of the hard
        body law's contacts per node (force; moment about the node at each step's end)."""
        sums: dict[str, np.ndarray] = {}
        if self.contacts is not None:
            k = self.contacts.size
            sums["normal_impulse"] = np.zeros(k)
            # the friction along each point's two tangents (fixed by its plane), turned into the world
            # frame when taken: a step adds two arrays, no product
            self._friction_sums = np.zeros((k, 2))
        if self.bodies is not None:
            n = self.sim.model.n_nodes
            sums["body_impulse"] = np.zeros((n, 6))
            self._body_step = np.zeros((n, 6))  # one step's, before it is added
        self.sums = sums

    def step_done(self) -> None:
        """Add the last step's impulses to :attr:`sums` (the simulation calls it after each step's
        correction; nothing when the sums are not kept)."""
        sums = self.sums
        if sums is None:
            return
        con = self.contacts
        if con is not None:
            sums["normal_impulse"] += con.normal_impulse
            self._friction_sums += con.friction_impulse
        if self.bodies is not None:
            position = np.asarray(self.sim.model.x0)[:, :3] + self.sim.state.q[:, :3]
            body_impulse_sums(self.bodies.last, position, self._body_step)
            sums["body_impulse"] += self._body_step

    def take_sums(self) -> dict[str, np.ndarray]:
        """The impulses summed since the last call (or :meth:`keep_sums`), as copies; the sums
        restart from zero."""
        assert self.sums is not None
        out = {name: value.copy() for name, value in self.sums.items()}
        for value in self.sums.values():
            value[...] = 0.0
        if self.contacts is not None:
            out["friction_impulse"] = np.einsum("kj,kjs->ks", self._friction_sums, self.contacts.tangent)
            self._friction_sums[...] = 0.0
        return out

    # ------------------------------------------------------------ the correction
    def all_clear(self) -> None:
        """What :meth:`correct` does after a smooth step that left every contact point clear of its
        plane, for a model of contact points without stops (the caller found the smallest gap > 0:
        the last step's impulses zeroed, once)."""
        if self._dirty:
            self.iterations = 0
            self.sweeps = 0
            assert self.contacts is not None
            self.contacts.clear()
            self._dirty = False

    def correct(self, v_start: np.ndarray, q_start: np.ndarray | None = None) -> None:
        """Enforce the stops (and the hard contact points) after a converged smooth step (q̃, ṽ in
        the simulation's state).

        Parameters
        ----------
        v_start : (N, 6) ndarray of float
            The velocities at the start of the step [m/s, rad/s] (Newton's impact law).
        q_start : (N, 7) ndarray of float, optional
            The positions at the start of the step (the friction of the position correction:
            how far each contact point moved along the plane in the step); required with hard
            contact points.

        Raises
        ------
        ConvergenceError
            The position correction does not reach the tolerance (the state is then the last iterate).
        """
        if self.bodies is not None:
            if q_start is None:
                raise ValueError("JointStops.correct: give q_start with hard contact points")
            self.bodies.correct(self, v_start, q_start)
            self.iterations, self.sweeps = self.bodies.iterations, self.bodies.sweeps
            return
        if self.contacts is not None:
            if q_start is None:
                raise ValueError("JointStops.correct: give q_start with hard contact points")
            self._correct_with_contacts(v_start, q_start)
            return
        sim = self.sim
        self.impulse[:] = 0.0
        self.position_impulse[:] = 0.0
        self.iterations = 0
        theta = sim.state.constraint_output[self.cid, 0]
        low = theta <= self.lower
        high = theta >= self.upper
        if not np.any(low | high):
            return
        active = np.flatnonzero(low | high)
        side = np.where(low[active], 1.0, -1.0)  # +1: the lower stop (g = θ − lower), −1: the upper one
        n = self.n
        mass, bmat, phi, grads = self._system(active, side)
        phi_allowed = max(float(np.max(np.abs(phi), initial=0.0)), PHI_TOLERANCE)
        scale = np.maximum(1.0, np.abs(np.where(side > 0, self.lower[active], self.upper[active])))
        keep = np.ones(active.size, dtype=bool)
        nu_total = np.zeros(active.size)
        for it in range(MAX_ITERATIONS + 1):
            gaps = self._gaps(active, side)
            if it > 0 and np.all(np.abs(gaps[keep]) <= GAP_TOLERANCE * scale[keep]):
                if np.max(np.abs(phi), initial=0.0) <= phi_allowed:
                    break
            if it == MAX_ITERATIONS:
                raise ConvergenceError(
                    f"step {int(sim.state.step[0])} (t = {float(sim.state.time[0]):.9g} s): the hard joint limits' "
                    f"position correction did not converge in {MAX_ITERATIONS} iterations (gaps "
                    f"{gaps[keep].tolist()} [rad or m] of joints {self.cid[active[keep]].tolist()})",
                    float(sim.state.time[0]),
                    int(sim.state.step[0]),
                    (),
                    -1,
                )
            while True:  # the active set: release a stop whose multiplier would pull
                g_rows = grads[keep]
                m = bmat.shape[0]
                k = g_rows.shape[0]
                kkt = np.zeros((n + m + k, n + m + k))
                kkt[:n, :n] = mass
                kkt[n : n + m, :n] = bmat
                kkt[:n, n : n + m] = bmat.T
                kkt[n + m :, :n] = g_rows
                kkt[:n, n + m :] = g_rows.T
                rhs = np.concatenate([np.zeros(n), -phi, -gaps[keep]])
                sol = scipy.linalg.solve(kkt, rhs)
                nu = -sol[n + m :]
                if it > 0 or np.all(nu >= 0.0):
                    break
                worst = np.flatnonzero(keep)[int(np.argmin(nu))]
                keep[worst] = False
                if not np.any(keep):
                    break
            if not np.any(keep):
                break
            nu_total[keep] += nu
            self._apply_position(sol[:n])
            self._refresh()
            self.iterations = it + 1
            _, bmat, phi, grads = self._system(active, side)
        if not np.any(keep):
            return
        self.position_impulse[active] = side * nu_total
        # velocity jump at the corrected q
        act = active[keep]
        g_rows = grads[keep]
        m = bmat.shape[0]
        k = act.size
        kkt = np.zeros((n + m, n + m))
        kkt[:n, :n] = mass
        kkt[n:, :n] = bmat
        kkt[:n, n:] = bmat.T
        rhs = np.zeros((n + m, k))
        rhs[:n] = g_rows.T
        response = scipy.linalg.solve(kkt, rhs)[:n]  # W per unit Λ of each stop
        v = sim.state.v
        v_tilde = v[self.dof_node, self.dof_component]
        v_n = v_start[self.dof_node, self.dof_component]
        delassus = g_rows @ response
        w0 = g_rows @ v_tilde + self.restitution[act] * (g_rows @ v_n)
        lam = solve_lcp(delassus, w0)
        v[self.dof_node, self.dof_component] = v_tilde + response @ lam
        self.impulse[act] = side[keep] * lam
        self._refresh()

    # ------------------------------------------------------------ with hard contact points
    def _correct_with_contacts(self, v_start: np.ndarray, q_start: np.ndarray) -> None:
        """:meth:`correct` for a model with hard contact points: the stops and the points in one set.

        Position: Newton iterations of the mass-weighted projection ``M U = Bᵀμ + Gᵀν``,
        ``B U = −Φ``; each solves the frictional problem of :func:`solve_cone` on the total
        multipliers ν (normal rows: ``g + G_N U >= 0 ⊥ ν_N >= 0``; tangential rows of a contact
        point: Coulomb's disk ``|ν_T| <= μ ν_N`` against the point's displacement along the plane
        over the whole step, so a sticking point ends the step where it began it).  Velocity:
        ``M W = Bᵀ Λ_b + Gᵀ Λ``, ``B (ṽ + W) = 0`` at the corrected q (ṽ met it at q̃) with
        Newton's law ``ġ_N⁺ + e ġ_N⁻ >= 0 ⊥ Λ_N >= 0``
        and Coulomb's cone on the closed points, by :func:`solve_cone` on the Delassus matrix.
        """
        sim, n = self.sim, self.n
        con = self.contacts
        assert con is not None
        if self.cid.size == 0:
            # the early-out: no stops, and every point clear of its plane after the smooth step
            smallest = contact_geometry(
                con.x0, sim.state.q, con.node, con.offset, con.radius, con.normal, con.offset_d,
                self._gap, self._point, self._arm,
            )  # fmt: skip
            if smallest > 0.0:
                if self._dirty:
                    self.iterations = 0
                    self.sweeps = 0
                    con.clear()
                    self._dirty = False
                return
            self._dirty = True
            if self._compiled:
                self._contacts_compiled(v_start, q_start)
                return
        self._dirty = True
        self.impulse[:] = 0.0
        self.position_impulse[:] = 0.0
        self.iterations = 0
        self.sweeps = 0
        con.clear()
        theta = sim.state.constraint_output[self.cid, 0]
        low = theta <= self.lower
        high = theta >= self.upper
        stop_set = np.flatnonzero(low | high)
        side = np.where(low[stop_set], 1.0, -1.0)
        gap, _, arm = con.geometry(sim.state.q)
        in_set = gap <= 0.0
        if stop_set.size == 0 and not np.any(in_set):
            return
        mass, bmat, phi, grads = self._system(stop_set, side)
        phi_allowed = max(float(np.max(np.abs(phi), initial=0.0)), PHI_TOLERANCE)
        stop_scale = GAP_TOLERANCE * np.maximum(
            1.0, np.abs(np.where(side > 0, self.lower[stop_set], self.upper[stop_set]))
        )
        ns = stop_set.size
        stop_nu = np.zeros(ns)
        contact_nu = np.zeros((con.size, 3))
        for it in range(MAX_ITERATIONS + 1):
            stop_gaps = self._gaps(stop_set, side)
            gap, _, arm = con.geometry(sim.state.q)
            in_set |= gap <= 0.0
            cset = np.flatnonzero(in_set)
            if it > 0:
                ok = bool(
                    np.all(stop_gaps >= -stop_scale)
                    and np.all(np.abs(stop_gaps[stop_nu > 0.0]) <= stop_scale[stop_nu > 0.0])
                    and np.all(gap[cset] >= -GAP_TOLERANCE)
                    and np.all(np.abs(gap[cset][contact_nu[cset, 0] > 0.0]) <= GAP_TOLERANCE)
                    and np.max(np.abs(phi), initial=0.0) <= phi_allowed
                )
                if ok:
                    break
            if it == MAX_ITERATIONS:
                raise ConvergenceError(
                    f"step {int(sim.state.step[0])} (t = {float(sim.state.time[0]):.9g} s): the position correction "
                    f"of the hard joint limits and contact points did not converge in {MAX_ITERATIONS} iterations "
                    f"(limit gaps {stop_gaps.tolist()} [rad or m] of joints {self.cid[stop_set].tolist()}, "
                    f"contact gaps {gap[cset].tolist()} [m] of shapes {con.shape[cset].tolist()})",
                    float(sim.state.time[0]),
                    int(sim.state.step[0]),
                    (),
                    -1,
                )
            rows = self._rows(grads, con.rows(cset, arm, n))
            free = np.zeros(rows.shape[0])
            free[0 : 3 * ns : 3] = stop_gaps
            free[3 * ns :: 3] = gap[cset]
            tangential = con.slip(sim.state.q, q_start)[cset]
            free[3 * ns + 1 :: 3] = tangential[:, 0]
            free[3 * ns + 2 :: 3] = tangential[:, 1]
            mu = np.concatenate([np.zeros(ns), con.friction[cset]])
            previous = np.concatenate(
                [np.column_stack([stop_nu, np.zeros(ns), np.zeros(ns)]).ravel(), contact_nu[cset].ravel()]
            )
            base, response = self._responses(mass, bmat, phi, rows)
            delassus = rows @ response
            lam = previous.copy()
            sweeps = solve_cone(
                delassus,
                free + rows @ base - delassus @ previous,
                mu,
                lam,
                np.zeros(mu.size),
                np.zeros(lam.size),
                SWEEP_TOLERANCE,
                MAX_SWEEPS,
            )
            self._check_sweeps(int(sweeps), "position correction")
            stop_nu = lam[0 : 3 * ns : 3].copy()
            contact_nu[cset] = lam[3 * ns :].reshape(-1, 3)
            self._apply_position(base + response @ (lam - previous))
            self._refresh()
            self.iterations = it + 1
            mass, bmat, phi, grads = self._system(stop_set, side)
        self.position_impulse[stop_set] = side * stop_nu
        con.position_impulse[:] = contact_nu[:, 0]
        # velocity jump at the corrected q, on the closed stops and points
        stop_gaps = self._gaps(stop_set, side)
        closed_stops = np.abs(stop_gaps) <= stop_scale
        gap, _, arm = con.geometry(sim.state.q)
        closed = np.flatnonzero(in_set & (gap <= GAP_TOLERANCE))
        ks = int(np.count_nonzero(closed_stops))
        if ks == 0 and closed.size == 0:
            return
        rows = self._rows(grads[closed_stops], con.rows(closed, arm, n))
        v = sim.state.v
        v_n = v_start[self.dof_node, self.dof_component]
        # ṽ satisfies B v = 0 at q̃; at the corrected q: W₀ with M W₀ = Bᵀμ, B (ṽ + W₀) = 0 first
        v_tilde = v[self.dof_node, self.dof_component]
        base, response = self._responses(mass, bmat, bmat @ v_tilde, rows)
        v_tilde = v_tilde + base
        delassus = rows @ response
        e = np.concatenate([self.restitution[stop_set[closed_stops]], con.restitution[closed]])
        approach = rows[0::3] @ v_n
        approach[ks:] = np.minimum(approach[ks:], 0.0)  # a point leaving the plane at the start has no impact
        free = rows @ v_tilde
        free[0::3] += e * approach
        mu = np.concatenate([np.zeros(ks), con.friction[closed]])
        lam = np.zeros(rows.shape[0])
        self.sweeps = int(
            solve_cone(delassus, free, mu, lam, np.zeros(mu.size), np.zeros(lam.size), SWEEP_TOLERANCE, MAX_SWEEPS)
        )
        self._check_sweeps(self.sweeps, "velocity jump")
        v[self.dof_node, self.dof_component] = v_tilde + response @ lam
        self.impulse[stop_set[closed_stops]] = side[closed_stops] * lam[0 : 3 * ks : 3]
        con.normal_impulse[closed] = lam[3 * ks :: 3]
        con.friction_impulse[closed, 0] = lam[3 * ks + 1 :: 3]
        con.friction_impulse[closed, 1] = lam[3 * ks + 2 :: 3]
        con.active[closed] = True
        self._refresh()

    def _contacts_compiled(self, v_start: np.ndarray, q_start: np.ndarray) -> None:
        """:meth:`_correct_with_contacts` for points on free nodes (no stops, no bilateral
        constraints), the same operations on the contact rows alone, each iteration one
        compiled :func:`~kynemapy.run.hard_contact.position_step` and the velocity jump one
        :func:`~kynemapy.run.hard_contact.velocity_jump`; M from the engine at each q."""
        sim = self.sim
        con = self.contacts
        assert con is not None
        self.iterations = 0
        self.sweeps = 0
        con.clear()
        state, q = sim.state, sim.state.q
        asm = self.assembler
        in_set, nu, counts, scratch = self._in_set, self._nu, self._counts, self._scratch
        in_set[:] = False
        nu[:] = 0.0
        mass = asm.system(state, sim.inputs)[0]
        for it in range(MAX_ITERATIONS + 1):
            status = position_step(
                it, MAX_ITERATIONS, GAP_TOLERANCE, mass, q, q_start, self._geo, in_set, nu, scratch, counts
            )
            if status == 0:
                break
            if status == 2:
                cset = np.flatnonzero(in_set)
                raise ConvergenceError(
                    f"step {int(state.step[0])} (t = {float(state.time[0]):.9g} s): the position correction "
                    f"of the hard joint limits and contact points did not converge in {MAX_ITERATIONS} iterations "
                    f"(limit gaps [] [rad or m] of joints [], "
                    f"contact gaps {self._gap[cset].tolist()} [m] of shapes {con.shape[cset].tolist()})",
                    float(state.time[0]),
                    int(state.step[0]),
                    (),
                    -1,
                )
            self._check_sweeps(int(counts[1]), "position correction")
            apply_position(q, self._u, self.dof_node, self.dof_component, self.rotating, self.rot_first)
            self._refresh()
            self.iterations = it + 1
            mass = asm.system(state, sim.inputs)[0]
        con.position_impulse[:] = nu[:, 0]
        sweeps = velocity_jump(
            GAP_TOLERANCE, mass, q, state.v, v_start, self.dof_node, self.dof_component, self._geo,
            con.restitution, in_set, self._scratch_v, self._impulses,
        )  # fmt: skip
        if sweeps < 0:
            return
        self.sweeps = int(sweeps)
        self._check_sweeps(self.sweeps, "velocity jump")
        self._refresh()

    def convergence_error(self, what: str) -> ConvergenceError:
        """A ConvergenceError for the present step, ``what`` the sentence after its step and time."""
        state = self.sim.state
        return ConvergenceError(
            f"step {int(state.step[0])} (t = {float(state.time[0]):.9g} s): {what}",
            float(state.time[0]),
            int(state.step[0]),
            (),
            -1,
        )

    def _check_sweeps(self, sweeps: int, what: str) -> None:
        """Raise a ConvergenceError when :func:`solve_cone` did not reach its tolerance."""
        if sweeps > MAX_SWEEPS:
            sim = self.sim
            raise ConvergenceError(
                f"step {int(sim.state.step[0])} (t = {float(sim.state.time[0]):.9g} s): the frictional contact "
                f"problem of the hard contact points' {what} (projected Gauss–Seidel) did not reach "
                f"{SWEEP_TOLERANCE:g} relative in {MAX_SWEEPS} sweeps",
                float(sim.state.time[0]),
                int(sim.state.step[0]),
                (),
                -1,
            )

    @staticmethod
    def _rows(stop_grads: np.ndarray, contact_rows: np.ndarray) -> np.ndarray:
        """The unilateral rows (3 (k_s + k_c), n): each stop's gradient with two zero rows (no
        friction), then the contact points' normal and tangential rows."""
        k, n = stop_grads.shape
        out = np.zeros((3 * k + contact_rows.shape[0], n))
        out[0 : 3 * k : 3] = stop_grads
        out[3 * k :] = contact_rows
        return out

    def _responses(
        self, mass: np.ndarray, bmat: np.ndarray, phi: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The bilateral projection ``U₀`` (``M U₀ = Bᵀμ``, ``B U₀ = −Φ``) (n,) and the response
        (n, r) to unit multipliers on ``rows`` (r, n) (``M U = Bᵀμ + rowsᵀ``, ``B U = 0``), from one
        factorization of ``[[M, Bᵀ], [B, 0]]``."""
        n, m = self.n, bmat.shape[0]
        if m == 0:  # no bilateral constraints: U₀ = 0 and M U = rowsᵀ
            return np.zeros(n), np.linalg.solve(mass, rows.T)
        kkt = np.zeros((n + m, n + m))
        kkt[:n, :n] = mass
        kkt[n:, :n] = bmat
        kkt[:n, n:] = bmat.T
        rhs = np.zeros((n + m, 1 + rows.shape[0]))
        rhs[n:, 0] = -phi
        rhs[:n, 1:] = rows.T
        sol = np.linalg.solve(kkt, rhs)[:n]  # one LU for every column (numpy's: scipy's costs ms here)
        return sol[:, 0], sol[:, 1:]


class _InputsCopy:
    """Inputs of the same shapes as ``given`` (loads shared, constraint inputs a copy) for the probes."""

    def __init__(self, given: Any) -> None:
        self.f = given.f
        self.constraint_input = given.constraint_input.copy()
