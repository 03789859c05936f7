"""The assembly of the Newton system ``A Δ = −b``: its start (zeros, external loads) and the
constraint blocks.

Layout (Kynema's): node DOFs in node order (only the active ones), then the constraint
rows in creation order.  Element blocks are multiplied by the conditioner ``c = βh²`` (the
system residual is conditioned by the solve phase); constraint rows ``B 𝒯`` and columns
``Bᵀ`` are not.  The order of the sums into ``b`` is Kynema's: external loads
(:func:`begin_system`), element tables in :data:`~kynemapy.engine.elements.TABLES` order (the
element phase adds each element's block as soon as it is computed,
:func:`~kynemapy.engine.elements.table.add_element_block`), then in :func:`assembly_phase` joint
inputs, constraint forces ``Bᵀλ``, and Φ in the constraint rows.

The matrix is an array of values written only through *slots*
(:mod:`kynemapy.linalg.sparsity`), in CSC order.  Each block comes with its slot table;
an entry's slot is −1 where it does not exist, and those entries are never written.
Nothing here knows an element type or a constraint kind.
"""

from __future__ import annotations

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.unit_call import load_field

_u = np.uint64  #: an index cast: numba adds no negative-index correction to unsigned indices


@njit(inline=True)
def begin_system(node_dofs, node_map, f, vals, b):
    """Start a Newton system: ``vals := 0``, ``b := −f`` on the node rows (first ``node_dofs``
    components of the external loads ``f`` (N, 6)), 0 on the others."""
    for k in range(vals.shape[0]):
        vals[k] = 0.0
    for i in range(b.shape[0]):
        b[i] = 0.0
    for n in range(node_dofs.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            b[m + k] -= f[n, k]


@njit(inline=True)
def add_constraint_rows(row_slots, col_slots, nd, n_rows, grad, t_rot, vals):
    """Constraint rows ``A[rows, node] = B 𝒯`` and columns ``A[node, rows] = Bᵀ``.

    ``grad`` is the (6, 6) gradient of the constraint with respect to a node with
    ``nd`` DOFs (3 or 6: a constraint's node has at least its displacement), ``t_rot`` the
    node's (3, 3) rotational tangent block; ``row_slots`` [i, j] and ``col_slots`` [j, i]
    (6, 6) are the slots of (row i, DOF j) and (DOF j, row i).

    The DOFs are written out, not looped over: loops of 3 or 6 turns, alternating from one
    node to the next, mispredict their exits (written out, a heavy-top step took 5 % less).
    The slots index as unsigned integers: they are valid (≥ 0) for these rows and DOFs, and a
    signed index costs numba's negative-index correction, three instructions an entry.
    """
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    six = nd == 6
    for i in range(n_rows):
        rs = row_slots[i]
        g0, g1, g2 = grad[i, 0], grad[i, 1], grad[i, 2]
        vals[_u(rs[0])] = g0
        vals[_u(rs[1])] = g1
        vals[_u(rs[2])] = g2
        if six:
            g3, g4, g5 = grad[i, 3], grad[i, 4], grad[i, 5]
            vals[_u(rs[3])] = g3 * t00 + g4 * t10 + g5 * t20
            vals[_u(rs[4])] = g3 * t01 + g4 * t11 + g5 * t21
            vals[_u(rs[5])] = g3 * t02 + g4 * t12 + g5 * t22
        vals[_u(col_slots[0, i])] = g0
        vals[_u(col_slots[1, i])] = g1
        vals[_u(col_slots[2, i])] = g2
        if six:
            vals[_u(col_slots[3, i])] = grad[i, 3]
            vals[_u(col_slots[4, i])] = grad[i, 4]
            vals[_u(col_slots[5, i])] = grad[i, 5]


@njit(inline=True)
def add_constraint_forces(node_map, node_dofs, node, n_rows, grad, lam, b):
    """``b[node rows] += Bᵀ λ`` (first ``node_dofs`` components, 3 or 6, first ``n_rows`` rows of B).

    The rows of ``grad`` and ``lam`` beyond ``n_rows`` are zero, so leaving them out
    of the sum changes nothing.  Each component is summed over the rows in order, as a
    loop per component would; the components are written out (see :func:`add_constraint_rows`).
    """
    m = node_map[node]
    six = node_dofs[node] == 6
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    for i in range(n_rows):
        li = lam[i]
        s0 += grad[i, 0] * li
        s1 += grad[i, 1] * li
        s2 += grad[i, 2] * li
        if six:
            s3 += grad[i, 3] * li
            s4 += grad[i, 4] * li
            s5 += grad[i, 5] * li
    b[m] += s0
    b[m + 1] += s1
    b[m + 2] += s2
    if six:
        b[m + 3] += s3
        b[m + 4] += s4
        b[m + 5] += s5


@njit(inline=True)
def add_stiffness_block(slots, nr, nc, scale, k66, t_rot, vals):
    """``A[row node, col node] += scale · K [I 0; 0 𝒯]`` over ``nr`` × ``nc`` active DOFs.

    ``k66`` (6, 6) is a K^Φ block in (u, θ) coordinates; its rotation columns are
    multiplied by the column node's (3, 3) tangent block ``t_rot``, as B's are.  ``nc`` is 3 or 6.
    """
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    six = nc == 6
    for i in range(nr):
        s = slots[i]
        vals[s[0]] += scale * k66[i, 0]  # nc is 3 or 6: written out (see add_constraint_rows)
        vals[s[1]] += scale * k66[i, 1]
        vals[s[2]] += scale * k66[i, 2]
        if six:
            k3, k4, k5 = k66[i, 3], k66[i, 4], k66[i, 5]
            vals[s[3]] += scale * (k3 * t00 + k4 * t10 + k5 * t20)
            vals[s[4]] += scale * (k3 * t01 + k4 * t11 + k5 * t21)
            vals[s[5]] += scale * (k3 * t02 + k4 * t12 + k5 * t22)


@njit
def assembly_phase(data_at, data_ref, c, with_k, with_drives):
    """The constraint part of the Newton matrix ``vals`` (rows ``B 𝒯`` and columns ``Bᵀ``, ``c K^Φ
    𝒯`` with ``with_k``, and with ``with_drives`` those of the driven joints, ``has_load`` 2,
    whose blocks then hold their drive's tangent) and of the residual ``b`` (joint inputs
    ``load``, ``Bᵀλ``, Φ) from the constraint blocks (``con_phi``, ``con_bb``, ``con_bt``,
    ``con_k``, ``con_load``: see :mod:`kynemapy.engine.fields`), in Kynema's order, after the
    element phase, on the :class:`~kynemapy.engine.fields.Data` at address ``data_at``
    (``data_ref`` its type); ``c`` the conditioner.  Returns 0.

    The engine's assembly unit (:mod:`kynemapy.engine.unit_call`, ``ASSEMBLY``): compiled apart
    from the Newton loop, called through its address with five scalars, and not inlined
    anywhere (see :func:`kynemapy.engine.elements.element_phase`)."""
    node_dofs = load_field(data_at, data_ref, "node_dofs")
    node_map = load_field(data_at, data_ref, "node_map")
    cnode = load_field(data_at, data_ref, "constraint_node")
    n_rows = load_field(data_at, data_ref, "constraint_n_rows")
    crow = load_field(data_at, data_ref, "constraint_row")
    row_slots = load_field(data_at, data_ref, "con_row_slots")
    col_slots = load_field(data_at, data_ref, "con_col_slots")
    k_slots = load_field(data_at, data_ref, "con_k_slots")
    has_load = load_field(data_at, data_ref, "constraint_has_load")
    tangent = load_field(data_at, data_ref, "tangent")
    lam = load_field(data_at, data_ref, "lam")
    phi = load_field(data_at, data_ref, "con_phi")
    bb = load_field(data_at, data_ref, "con_bb")
    bt = load_field(data_at, data_ref, "con_bt")
    kphi = load_field(data_at, data_ref, "con_k")
    load = load_field(data_at, data_ref, "con_load")
    vals = load_field(data_at, data_ref, "vals")
    b = load_field(data_at, data_ref, "b")
    nsys = load_field(data_at, data_ref, "n_system_dofs")
    nc = cnode.shape[0]
    for ic in range(nc):
        nb = cnode[ic, 0]  # the base (none: the ground), then the target; each side written out
        if nb >= 0:
            add_constraint_rows(
                row_slots[ic, 0], col_slots[ic, 0], node_dofs[nb], n_rows[ic], bb[ic], tangent[nb], vals
            )
        nt = cnode[ic, 1]
        add_constraint_rows(row_slots[ic, 1], col_slots[ic, 1], node_dofs[nt], n_rows[ic], bt[ic], tangent[nt], vals)
    if with_k or with_drives:
        for ic in range(nc):  # K^Φ blocks (target, target), (base, base), (base, target), (target, base)
            if not with_k and has_load[ic] != 2:
                continue
            nb = cnode[ic, 0]
            nt = cnode[ic, 1]
            dt = node_dofs[nt]
            add_stiffness_block(k_slots[ic, 1, 1], dt, dt, c, kphi[ic, 1, 1], tangent[nt], vals)
            if nb >= 0:
                db = node_dofs[nb]
                add_stiffness_block(k_slots[ic, 0, 0], db, db, c, kphi[ic, 0, 0], tangent[nb], vals)
                add_stiffness_block(k_slots[ic, 0, 1], db, dt, c, kphi[ic, 0, 1], tangent[nt], vals)
                add_stiffness_block(k_slots[ic, 1, 0], dt, db, c, kphi[ic, 1, 0], tangent[nb], vals)
    for ic in range(nc):
        if has_load[ic] == 0:
            continue
        for side in range(2):
            n = cnode[ic, side]
            if n >= 0:
                m = node_map[n]
                for j in range(node_dofs[n]):
                    b[m + j] += load[ic, side, j]
    for ic in range(nc):
        rows = n_rows[ic]
        nb = cnode[ic, 0]
        if nb >= 0:
            add_constraint_forces(node_map, node_dofs, nb, rows, bb[ic], lam[ic], b)
        add_constraint_forces(node_map, node_dofs, cnode[ic, 1], rows, bt[ic], lam[ic], b)
        row = nsys + crow[ic]
        for i in range(rows):
            b[row + i] = phi[ic, i]
    return 0
