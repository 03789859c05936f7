"""The assembly phase: scatter element and constraint blocks into the Newton system ``A Δ = −b``.

Layout (Kynema's): node DOFs in node order (only the active ones), then the constraint
rows in creation order.  Element blocks are multiplied by the conditioner ``c = βh²`` (the
system residual is conditioned by the solve phase); constraint rows ``B 𝒯`` and columns
``Bᵀ`` are not.  The order of the sums into ``b`` is Kynema's: external loads, element
tables in :data:`~kynemapy.engine.elements.TABLES` order, joint inputs, constraint forces
``Bᵀλ``, then Φ in the constraint rows.

The matrix is an array of values written only through *slots*
(:mod:`kynemapy.linalg.sparsity`), in CSC order.  Each block comes with its slot table;
an entry's slot is −1 where it does not exist, and those entries are never written.
Nothing here knows an element type or a constraint kind.
"""

from __future__ import annotations

from kynemapy._arena import v1, v2, v3, v4, v5
from kynemapy._jit import njit
from kynemapy.engine import fields as fd
from kynemapy.engine.elements.table import T_MAT, T_RES, T_ROWS, T_SLOTS
from kynemapy.engine.params import P_ASSEMBLE_K, P_CONDITIONER


@njit
def zero_system(vals, b):
    """``values := 0``, ``b := 0``."""
    for k in range(vals.shape[0]):
        vals[k] = 0.0
    for i in range(b.shape[0]):
        b[i] = 0.0


@njit
def add_external_loads(node_dofs, node_map, f, b):
    """``b[node rows] −= f`` (first ``node_dofs`` components)."""
    for n in range(node_dofs.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            b[m + k] -= f[n, k]


@njit
def add_constraint_rows(row_slots, col_slots, nd, n_rows, grad, t_rot, vals):
    """Constraint rows ``A[rows, node] = B 𝒯`` and columns ``A[node, rows] = Bᵀ``.

    ``grad`` is the (6, 6) gradient of the constraint with respect to a node with
    ``nd`` DOFs, ``t_rot`` the node's (3, 3) rotational tangent block; ``row_slots``
    [i, j] and ``col_slots`` [j, i] (6, 6) are the slots of (row i, DOF j) and (DOF j, row i).
    """
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    for i in range(n_rows):
        rs = row_slots[i]
        for j in range(min(nd, 3)):
            vals[rs[j]] = grad[i, j]
        if nd == 6:
            g3, g4, g5 = grad[i, 3], grad[i, 4], grad[i, 5]
            vals[rs[3]] = g3 * t00 + g4 * t10 + g5 * t20
            vals[rs[4]] = g3 * t01 + g4 * t11 + g5 * t21
            vals[rs[5]] = g3 * t02 + g4 * t12 + g5 * t22
        for j in range(nd):
            vals[col_slots[j, i]] = grad[i, j]


@njit
def add_constraint_forces(node_map, node_dofs, node, n_rows, grad, lam, b):
    """``b[node rows] += Bᵀ λ`` (first ``node_dofs`` components, first ``n_rows`` rows of B).

    The rows of ``grad`` and ``lam`` beyond ``n_rows`` are zero, so leaving them out
    of the sum changes nothing.
    """
    m = node_map[node]
    for j in range(node_dofs[node]):
        s = 0.0
        for i in range(n_rows):
            s += grad[i, j] * lam[i]
        b[m + j] += s


@njit
def add_stiffness_block(slots, nr, nc, scale, k66, t_rot, vals):
    """``A[row node, col node] += scale · K [I 0; 0 𝒯]`` over ``nr`` × ``nc`` active DOFs.

    ``k66`` (6, 6) is a K^Φ block in (u, θ) coordinates; its rotation columns are
    multiplied by the column node's (3, 3) tangent block ``t_rot``, as B's are.
    """
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    for i in range(nr):
        s = slots[i]
        for j in range(min(nc, 3)):
            vals[s[j]] += scale * k66[i, j]
        if nc == 6:
            k3, k4, k5 = k66[i, 3], k66[i, 4], k66[i, 5]
            vals[s[3]] += scale * (k3 * t00 + k4 * t10 + k5 * t20)
            vals[s[4]] += scale * (k3 * t01 + k4 * t11 + k5 * t21)
            vals[s[5]] += scale * (k3 * t02 + k4 * t12 + k5 * t22)


@njit
def assemble(d, p):
    """The Newton matrix (``VALS``, conditioned element blocks) and residual ``B`` from the
    element blocks (``T_RES``, ``T_MAT``) and the constraint blocks (``CON_*``) of the workspace."""
    h = d.mi
    vals = v1(d.wf, h, fd.VALS)
    b = v1(d.wf, h, fd.B)
    node_dofs = v1(h, h, fd.NODE_DOFS)
    node_map = v1(h, h, fd.NODE_MAP)
    c = p[P_CONDITIONER]
    zero_system(vals, b)
    add_external_loads(node_dofs, node_map, v2(d.xf, h, fd.F), b)
    for k in range(h[fd.N_TABLES]):
        t = k * fd.TABLE_WORDS
        rows = v2(h, h, t + T_ROWS)
        slots = v3(h, h, t + T_SLOTS)
        res = v2(d.wf, h, t + T_RES)
        mat = v3(d.wf, h, t + T_MAT)
        add_element_blocks(rows, slots, c, res, mat, vals, b)
    nc = h[fd.N_CONSTRAINTS]
    if nc == 0:
        return
    cnode = v2(h, h, fd.CON_NODE)
    n_rows = v1(h, h, fd.CON_N_ROWS)
    crow = v1(h, h, fd.CON_ROW)
    row_slots = v4(h, h, fd.CON_ROW_SLOTS)
    col_slots = v4(h, h, fd.CON_COL_SLOTS)
    tangent = v3(d.wf, h, fd.TANGENT)
    lam = v2(d.sf, h, fd.LAM)
    phi = v2(d.wf, h, fd.CON_PHI)
    bb = v3(d.wf, h, fd.CON_BB)
    bt = v3(d.wf, h, fd.CON_BT)
    load = v3(d.wf, h, fd.CON_LOAD)
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        rows = n_rows[ic]
        if nb >= 0:
            add_constraint_rows(row_slots[ic, 0], col_slots[ic, 0], node_dofs[nb], rows, bb[ic], tangent[nb], vals)
        add_constraint_rows(row_slots[ic, 1], col_slots[ic, 1], node_dofs[nt], rows, bt[ic], tangent[nt], vals)
    if p[P_ASSEMBLE_K] != 0.0:
        k_slots = v5(h, h, fd.CON_K_SLOTS)
        kphi = v5(d.wf, h, fd.CON_K)
        for ic in range(nc):
            nb = cnode[ic, 0]
            nt = cnode[ic, 1]
            ndt = node_dofs[nt]
            ks = k_slots[ic]
            add_stiffness_block(ks[1, 1], ndt, ndt, c, kphi[ic, 1, 1], tangent[nt], vals)
            if nb >= 0:
                ndb = node_dofs[nb]
                add_stiffness_block(ks[0, 0], ndb, ndb, c, kphi[ic, 0, 0], tangent[nb], vals)
                add_stiffness_block(ks[0, 1], ndb, ndt, c, kphi[ic, 0, 1], tangent[nt], vals)
                add_stiffness_block(ks[1, 0], ndt, ndb, c, kphi[ic, 1, 0], tangent[nb], vals)
    kind_has_load = v1(h, h, fd.CON_HAS_LOAD)
    for ic in range(nc):
        if kind_has_load[ic] == 0:
            continue
        for side in range(2):
            n = cnode[ic, side]
            if n >= 0:
                m = node_map[n]
                for j in range(node_dofs[n]):
                    b[m + j] += load[ic, side, j]
    nsys = h[fd.N_SYSTEM_DOFS]
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        rows = n_rows[ic]
        lam_c = lam[ic]
        if nb >= 0:
            add_constraint_forces(node_map, node_dofs, nb, rows, bb[ic], lam_c, b)
        add_constraint_forces(node_map, node_dofs, nt, rows, bt[ic], lam_c, b)
        row = nsys + crow[ic]
        for i in range(rows):
            b[row + i] = phi[ic, i]


@njit
def add_element_blocks(rows, slots, c, res, mat, vals, b):
    """``b[rows] += res``, ``vals[slots] += c · mat`` for every element of a table."""
    m = rows.shape[1]
    for e in range(rows.shape[0]):
        for i in range(m):
            r = rows[e, i]
            if r >= 0:
                b[r] += res[e, i]
        for i in range(m):
            s = slots[e, i]
            me = mat[e, i]
            for j in range(m):
                sij = s[j]
                if sij >= 0:
                    vals[sij] += c * me[j]
