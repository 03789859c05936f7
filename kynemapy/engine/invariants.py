"""Energy and momentum of a state, in compiled code (for output rows).

Per mass element ``M = diag(R,R) M* diag(R,R)ᵀ`` with ``R = R(q_rot ⊗ r0)``,
``m = M[0,0]``, ``η = (M[5,1], −M[5,0], M[4,0])/m``; kinetic energy ``½ vᵀ M v`` [J],
potential energy ``−m g·(X + u + η)`` [J], linear momentum ``(M v)[0:3]`` [kg m/s],
angular momentum about the world origin ``(X + u) × (M v)[0:3] + (M v)[3:6]`` [kg m²/s].

A beam contributes the same integrands per unit length with its sectional mass matrix at
every quadrature point (weights ``w_k J_k``; position, orientation and velocity interpolated
from its nodes as the element does), and its strain energy ``½ ∫ εᵀ C ε ds`` (ε the element's
strain, C its sectional stiffness in the current frame) [J]; a spring its strain energy
``½ k (l − l_ref)²`` [J].  The quadrature is the element's own, so a beam's energy is exact
to that rule.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.elements import BEAMS, CONTACTS, MASSES, PAIRS, SPRINGS
from kynemapy.engine.elements.beams.interpolate import (
    ROTATION,
    TRANSLATION,
    interp_rotation,
    interp_vector,
    interp_vector_deriv,
)
from kynemapy.engine.elements.beams.qp import elastic_force_fc, strain
from kynemapy.engine.elements.contact_table import PARAM_EXPONENT, PARAM_K
from kynemapy.engine.elements.masses import rotate_section_matrix_call
from kynemapy.engine.elements.pairs import closest_points
from kynemapy.engine.rows import (
    ROW_ANGULAR_MOMENTUM,
    ROW_ITERATIONS,
    ROW_KINETIC_ENERGY,
    ROW_LINEAR_MOMENTUM,
    ROW_ORDER_INDEX,
    ROW_POTENTIAL_ENERGY,
    ROW_Q,
    ROW_STEP,
    ROW_STRAIN_ENERGY,
    ROW_V,
)
from kynemapy.engine.unit_call import load_field
from kynemapy.math.quaternion import quat_compose, quat_to_matrix, rot


class InvariantScratch(NamedTuple):
    """Scratch of :func:`fill_invariants` and :func:`pack_rows` (each caller its own: the run's
    writer thread computes while the stepping goes on).  ``P``: nodes per beam element."""

    s3: np.ndarray  #: (6, 3)
    s4: np.ndarray  #: (3, 4)
    s6: np.ndarray  #: (2, 6)
    s33: np.ndarray  #: (6, 3, 3)
    s66: np.ndarray  #: (2, 6, 6)
    node_u: np.ndarray  #: (P, 7)
    node_v: np.ndarray  #: (P, 6)
    out: np.ndarray  #: (8,)


def invariant_scratch(nodes_per_beam: int) -> InvariantScratch:
    """Zeroed :class:`InvariantScratch` for beam elements of at most ``nodes_per_beam`` nodes."""
    p = max(int(nodes_per_beam), 1)
    return InvariantScratch(
        np.zeros((6, 3)), np.zeros((3, 4)), np.zeros((2, 6)), np.zeros((6, 3, 3)), np.zeros((2, 6, 6)),
        np.zeros((p, 7)), np.zeros((p, 6)), np.zeros(8),
    )  # fmt: skip


@njit
def system_invariants(mass_node, mass_m_star, x0, gravity, q, v, s4, s33, out):
    """``out`` (8,) = (kinetic energy, potential energy, linear momentum (3), angular momentum (3))
    of the rigid bodies.

    ``q`` (N, 7), ``v`` (N, 6) one state; scratch ``s4`` (>= 1, 4), ``s33`` (>= 1, 3, 3).
    """
    for k in range(8):
        out[k] = 0.0
    xr = s4[0]
    rr = s33[0]
    for e in range(mass_node.shape[0]):
        n = mass_node[e]
        quat_compose(q[n, 3:7], x0[n, 3:7], xr)
        quat_to_matrix(xr, rr)
        add_body(
            mass_m_star[e], rr, x0[n, 0] + q[n, 0], x0[n, 1] + q[n, 1], x0[n, 2] + q[n, 2],
            v[n, 0], v[n, 1], v[n, 2], v[n, 3], v[n, 4], v[n, 5], gravity, 1.0, out,
        )  # fmt: skip


@njit
def add_body(ms, rr, px, py, pz, u0, u1, u2, w0, w1, w2, gravity, weight, out):
    """Add ``weight`` times the energy and momentum of one body to ``out`` (8,) (see
    :func:`system_invariants`): material mass matrix ``ms`` (6, 6), orientation ``rr`` (3, 3),
    position ``(px, py, pz)`` [m], velocity ``(u0, u1, u2)`` [m/s] and ``(w0, w1, w2)`` [rad/s].

    ``M v = T (M* (Tᵀ v))`` with ``T = diag(R, R)``: the velocity is taken to the material
    frame, multiplied by M*, and the product rotated back (a fifth of the work of forming
    ``M``); ``m`` and ``m η`` are the needed entries of ``M``, each formed directly.
    """
    r00, r01, r02 = rr[0, 0], rr[0, 1], rr[0, 2]
    r10, r11, r12 = rr[1, 0], rr[1, 1], rr[1, 2]
    r20, r21, r22 = rr[2, 0], rr[2, 1], rr[2, 2]
    # material-frame velocity Tᵀ v
    a0 = r00 * u0 + r10 * u1 + r20 * u2
    a1 = r01 * u0 + r11 * u1 + r21 * u2
    a2 = r02 * u0 + r12 * u1 + r22 * u2
    a3 = r00 * w0 + r10 * w1 + r20 * w2
    a4 = r01 * w0 + r11 * w1 + r21 * w2
    a5 = r02 * w0 + r12 * w1 + r22 * w2
    # material momenta M* Tᵀ v
    y0 = ms[0, 0] * a0 + ms[0, 1] * a1 + ms[0, 2] * a2 + ms[0, 3] * a3 + ms[0, 4] * a4 + ms[0, 5] * a5
    y1 = ms[1, 0] * a0 + ms[1, 1] * a1 + ms[1, 2] * a2 + ms[1, 3] * a3 + ms[1, 4] * a4 + ms[1, 5] * a5
    y2 = ms[2, 0] * a0 + ms[2, 1] * a1 + ms[2, 2] * a2 + ms[2, 3] * a3 + ms[2, 4] * a4 + ms[2, 5] * a5
    y3 = ms[3, 0] * a0 + ms[3, 1] * a1 + ms[3, 2] * a2 + ms[3, 3] * a3 + ms[3, 4] * a4 + ms[3, 5] * a5
    y4 = ms[4, 0] * a0 + ms[4, 1] * a1 + ms[4, 2] * a2 + ms[4, 3] * a3 + ms[4, 4] * a4 + ms[4, 5] * a5
    y5 = ms[5, 0] * a0 + ms[5, 1] * a1 + ms[5, 2] * a2 + ms[5, 3] * a3 + ms[5, 4] * a4 + ms[5, 5] * a5
    # inertial momenta M v = T (M* Tᵀ v)
    mv0 = r00 * y0 + r01 * y1 + r02 * y2
    mv1 = r10 * y0 + r11 * y1 + r12 * y2
    mv2 = r20 * y0 + r21 * y1 + r22 * y2
    mv3 = r00 * y3 + r01 * y4 + r02 * y5
    mv4 = r10 * y3 + r11 * y4 + r12 * y5
    mv5 = r20 * y3 + r21 * y4 + r22 * y5
    # m = M[0,0] = R[0,:] M*uu R[0,:]ᵀ
    m = 0.0
    for k in range(3):
        m += rr[0, k] * (ms[k, 0] * r00 + ms[k, 1] * r01 + ms[k, 2] * r02)
    # ωu block entries M[3+i, j] = R[i,:] M*ωu R[j,:]ᵀ for (i, j) = (2, 1), (2, 0), (1, 0)
    c00 = ms[3, 0] * r00 + ms[3, 1] * r01 + ms[3, 2] * r02  # M*ωu R[0,:]ᵀ
    c01 = ms[4, 0] * r00 + ms[4, 1] * r01 + ms[4, 2] * r02
    c02 = ms[5, 0] * r00 + ms[5, 1] * r01 + ms[5, 2] * r02
    c10 = ms[3, 0] * r10 + ms[3, 1] * r11 + ms[3, 2] * r12  # M*ωu R[1,:]ᵀ
    c11 = ms[4, 0] * r10 + ms[4, 1] * r11 + ms[4, 2] * r12
    c12 = ms[5, 0] * r10 + ms[5, 1] * r11 + ms[5, 2] * r12
    m51 = r20 * c10 + r21 * c11 + r22 * c12
    m50 = r20 * c00 + r21 * c01 + r22 * c02
    m40 = r10 * c00 + r11 * c01 + r12 * c02
    out[0] += weight * (0.5 * (a0 * y0 + a1 * y1 + a2 * y2 + a3 * y3 + a4 * y4 + a5 * y5))
    # −m g·(X + u + η), with m η = (M[5,1], −M[5,0], M[4,0]): no division
    out[1] -= weight * (
        m * (px * gravity[0] + py * gravity[1] + pz * gravity[2])
        + (m51 * gravity[0] - m50 * gravity[1] + m40 * gravity[2])
    )
    out[2] += weight * (mv0)
    out[3] += weight * (mv1)
    out[4] += weight * (mv2)
    out[5] += weight * (py * mv2 - pz * mv1 + mv3)
    out[6] += weight * (pz * mv0 - px * mv2 + mv4)
    out[7] += weight * (px * mv1 - py * mv0 + mv5)


@njit
def beam_invariants(t, gravity, q, v, w, out):
    """Add the beams' energy and momentum to ``out`` (8,) (layout of :func:`system_invariants`)
    and return their strain energy [J]; ``t`` the beam table, ``q`` (N, 7), ``v`` (N, 6) one
    state, ``w`` an :class:`InvariantScratch`.

    At each quadrature point k of each element (weight ``w_k J_k``): the interpolated
    displacement, rotation (normalised) and velocity, the orientation ``R(r ⊗ r0)``, the body
    integrands of :func:`add_body` with the sectional mass matrix, and ``½ ε · F_C`` with the
    element's strain ε and elastic force ``F_C = C ε`` (C rotated to the current frame).
    """
    strain_energy = 0.0
    u = w.s3[0]
    ud = w.s3[1]
    om = w.s3[2]
    u_prime = w.s3[3]
    r = w.s4[0]
    r_prime = w.s4[1]
    xr = w.s4[2]
    e = w.s6[0]
    fc = w.s6[1]
    rr = w.s33[0]
    cuu = w.s66[0]
    for el in range(t.nodes.shape[0]):
        nn = t.n_nodes[el]
        node_u = w.node_u[:nn]
        node_v = w.node_v[:nn]
        for j in range(nn):
            n = t.nodes[el, j]
            for c in range(7):
                node_u[j, c] = q[n, c]
            for c in range(6):
                node_v[j, c] = v[n, c]
        shape = t.shape_interp[el]
        deriv = t.shape_deriv[el]
        for k in range(t.n_qps[el]):
            weight = t.qp_weight[el, k] * t.qp_jacobian[el, k]
            interp_vector(shape, k, node_u, TRANSLATION, u)
            interp_rotation(shape, k, node_u, r)
            interp_vector(shape, k, node_v, TRANSLATION, ud)
            interp_vector(shape, k, node_v, ROTATION, om)
            quat_compose(r, t.qp_r0[el, k], xr)
            quat_to_matrix(xr, rr)
            x0 = t.qp_x0[el, k]
            add_body(
                t.qp_m_star[el, k], rr, x0[0] + u[0], x0[1] + u[1], x0[2] + u[2],
                ud[0], ud[1], ud[2], om[0], om[1], om[2], gravity, weight, out,
            )  # fmt: skip
            interp_vector_deriv(deriv, k, t.qp_jacobian[el, k], node_u, TRANSLATION, u_prime)
            interp_vector_deriv(deriv, k, t.qp_jacobian[el, k], node_u, ROTATION, r_prime)
            rotate_section_matrix_call(xr, t.qp_c_star[el, k], w.s33[1], w.s66[1], cuu)
            strain(t.qp_x0_prime[el, k], u_prime, r, r_prime, e)
            elastic_force_fc(cuu, e, fc)
            density = 0.0
            for c in range(6):
                density += e[c] * fc[c]
            strain_energy += weight * (0.5 * density)
    return strain_energy


@njit
def spring_energy(t, q):
    """Strain energy ``Σ ½ k (l − l_ref)²`` [J] of the springs of table ``t`` at ``q`` (N, 7)."""
    energy = 0.0
    for e in range(t.nodes.shape[0]):
        a = t.nodes[e, 0]
        b = t.nodes[e, 1]
        d0 = t.x0[e, 0] + q[b, 0] - q[a, 0]
        d1 = t.x0[e, 1] + q[b, 1] - q[a, 1]
        d2 = t.x0[e, 2] + q[b, 2] - q[a, 2]
        stretch = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - t.l_ref[e]
        energy += 0.5 * t.k[e] * stretch * stretch
    return energy


@njit
def contact_energy(t, x0, q):
    """Elastic energy ``Σ k δ^(e+1) / (e+1)`` [J] of the compliant contact points of table ``t``
    (points against ground planes) at ``q`` (N, 7): the work of the law's spring part
    ``k δ^e`` (its damping part stores none)."""
    energy = 0.0
    for e in range(t.nodes.shape[0]):
        n = t.nodes[e, 0]
        s0, s1, s2 = rot(q[n, 3:7], t.offset[e])
        pl = t.plane[e]
        gap = (
            pl[0] * (x0[n, 0] + q[n, 0] + s0) + pl[1] * (x0[n, 1] + q[n, 1] + s1) + pl[2] * (x0[n, 2] + q[n, 2] + s2)
            - pl[3] - t.radius[e]
        )  # fmt: skip
        if gap < 0.0:
            ex = t.param[e, PARAM_EXPONENT]
            energy += t.param[e, PARAM_K] * (-gap) ** (ex + 1.0) / (ex + 1.0)
    return energy


@njit
def pair_energy(t, x0, q, x1, x2):
    """Elastic energy ``Σ k δ^(e+1) / (e+1)`` [J] of the compliant body–body pairs of table ``t``
    at ``q`` (N, 7) (the pair geometry of :func:`~kynemapy.engine.elements.pairs.closest_points`);
    ``x1``, ``x2`` (3,) scratch."""
    energy = 0.0
    for e in range(t.nodes.shape[0]):
        n1 = t.nodes[e, 0]
        n2 = t.nodes[e, 1]
        for i in range(3):
            x1[i] = x0[n1, i] + q[n1, i]
            x2[i] = x0[n2, i] + q[n2, i]
        dist = closest_points(q[n1, 3:7], q[n2, 3:7], x1, x2, t.offset[e], t.box[e])[19]
        delta = t.radius[e, 0] + t.radius[e, 1] - dist
        if delta > 0.0 and dist != 0.0:
            ex = t.param[e, PARAM_EXPONENT]
            energy += t.param[e, PARAM_K] * delta ** (ex + 1.0) / (ex + 1.0)
    return energy


@njit(inline=True)
def fill_invariants(tables, x0, gravity, row_offsets, rows, start, stop, w, parts):
    """Energy and momentum columns of output rows ``start`` to ``stop - 1`` of ``rows`` (R, width)
    from their ``q`` and ``v``: kinetic and (gravity) potential energy and momenta of masses and
    beams, strain energy of beams, springs and compliant contacts.  ``tables``, ``x0``,
    ``gravity`` and ``row_offsets``: those fields of the :class:`~kynemapy.engine.fields.Data`.
    ``parts``: None for a model of masses and springs only (:func:`parts_of`: the
    beams' and contacts' code is then not compiled in: numba prunes the branches on
    ``parts is None`` before typing), True for any model.

    Uses only its own scratch ``w`` (:class:`InvariantScratch`): the run's writer thread calls it
    while the stepping goes on.
    """
    masses = tables[MASSES]
    beams = tables[BEAMS]
    springs = tables[SPRINGS]
    contacts = tables[CONTACTS]
    pairs = tables[PAIRS]
    node = masses.nodes[:, 0]
    n = x0.shape[0]
    o = row_offsets
    oq = o[ROW_Q]
    ov = o[ROW_V]
    out = w.out
    for r in range(start, stop):
        row = rows[r]
        q = row[oq : oq + 7 * n].reshape((n, 7))
        v = row[ov : ov + 6 * n].reshape((n, 6))
        system_invariants(node, masses.m_star, x0, gravity, q, v, w.s4, w.s33, out)
        elastic = 0.0
        if parts is not None:  # (pruned at compile time for masses and springs only)
            elastic += beam_invariants(beams, gravity, q, v, w, out)
            if contacts.nodes.shape[0]:
                elastic += contact_energy(contacts, x0, q)
            if pairs.nodes.shape[0]:
                elastic += pair_energy(pairs, x0, q, w.s3[0], w.s3[1])
        if springs.nodes.shape[0]:
            elastic += spring_energy(springs, q)
        row[o[ROW_KINETIC_ENERGY]] = out[0]
        row[o[ROW_POTENTIAL_ENERGY]] = out[1]
        row[o[ROW_STRAIN_ENERGY]] = elastic
        for k in range(3):
            row[o[ROW_LINEAR_MOMENTUM] + k] = out[2 + k]
            row[o[ROW_ANGULAR_MOMENTUM] + k] = out[5 + k]


@njit
def pack_rows(data_at, data_ref, rows, n, unit, fields, ints, w, parts):
    """The writer's pass over one block of output rows: energy and momentum, then field-major copies.

    ``rows`` (>= n, width) the recorded rows (row-major, as the recorder writes them); their
    energy and momentum columns are filled first (:func:`fill_invariants`).  Then each float
    field of :data:`~kynemapy.engine.rows.ROW_FIELDS` is copied into ``fields`` (unit · width,)
    at ``unit · offset``: rows ``0 .. n-1`` of a field of ``s`` floats per row occupy
    ``fields[unit·offset : unit·offset + n·s]``, C order, the layout of its HDF5 dataset.  The
    integer fields ``step`` and ``iterations`` go to ``ints`` (2, >= n) as int64 instead.
    ``n <= unit``.  Scratch ``w`` and ``parts`` as for :func:`fill_invariants` (the writer
    thread's own scratch; ``parts`` :func:`parts_of` the Data).  With ``fields`` empty (0,),
    the energy and momentum columns only (``unit`` and ``ints`` unused:
    :func:`kynemapy.engine.api.fill_rows`).

    The Data at address ``data_at`` (``data_ref`` its type: a stored call's ``data_at`` and
    ``data_type``, :class:`~kynemapy.engine.stored_call.StoredCall`): taking the Data from Python
    would cost about 2 s more of first compilation (numba's conversion of its arrays).
    :func:`fill_invariants` is inlined here (a compiled function of its own cost 3-4 s more: LLVM
    optimizing its code again here).
    """
    o = load_field(data_at, data_ref, "row_offsets")
    x0 = load_field(data_at, data_ref, "x0")
    fill_invariants(
        load_field(data_at, data_ref, "tables"), x0, load_field(data_at, data_ref, "gravity"), o, rows, 0, n, w, parts
    )
    if fields.shape[0] == 0:
        return
    width = rows.shape[1]
    n_fields = o.shape[0]
    for p in range(n_fields):  # the fields in the row's order: each ends where the next starts
        f = ROW_ORDER_INDEX[p]
        start = o[f]
        stop = o[ROW_ORDER_INDEX[p + 1]] if p + 1 < n_fields else width
        s = stop - start
        if f == ROW_STEP or f == ROW_ITERATIONS:
            k = 0 if f == ROW_STEP else 1
            for r in range(n):
                ints[k, r] = np.int64(rows[r, start])
            continue
        base = unit * start
        for r in range(n):
            row = rows[r]
            at = base + r * s
            for j in range(s):
                fields[at + j] = row[start + j]


def parts_of(d: Any) -> bool | None:
    """:func:`pack_rows`'s ``parts`` for the Data ``d``: None where its model has masses and
    springs only (a variant compiled without the beams' and contacts' energies, about 8 s of a
    first compilation less), else True."""
    tables = d.tables
    if tables[BEAMS].nodes.shape[0] or tables[CONTACTS].nodes.shape[0] or tables[PAIRS].nodes.shape[0]:
        return True
    return None
