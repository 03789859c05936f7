"""Scatter element and constraint blocks into the Newton system ``A Δ = −b``.

Layout (Kynema's): node DOFs in node order (only the active ones), then the
constraint rows in creation order.  Element blocks and the system residual are
multiplied by the conditioner ``c = βh²``; constraint rows ``B 𝒯`` and columns
``Bᵀ`` are not.  These functions are the only code that knows the matrix is
dense: a sparse assembly replaces them without touching the kernels.
"""

from __future__ import annotations

from kynemapy._jit import njit


@njit(inline=True)
def zero_system(A, b):
    """``A := 0``, ``b := 0``."""
    n = b.shape[0]
    for i in range(n):
        b[i] = 0.0
        for j in range(n):
            A[i, j] = 0.0


@njit(inline=True)
def add_external_loads(node_dofs, node_map, f, b):
    """``b[node rows] −= f`` (first ``node_dofs`` components)."""
    for n in range(node_dofs.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            b[m + k] -= f[n, k]


@njit(inline=True)
def add_node_block(node_map, node_dofs, row_node, col_node, scale, block, A):
    """``A[row node, col node] += scale · block`` over the active DOFs of both nodes."""
    r0 = node_map[row_node]
    c0 = node_map[col_node]
    nr = node_dofs[row_node]
    nc = node_dofs[col_node]
    for i in range(nr):
        for j in range(nc):
            A[r0 + i, c0 + j] += scale * block[i, j]


@njit(inline=True)
def add_constraint_rows(node_map, node_dofs, node, row, n_rows, grad, t_rot, A):
    """Constraint rows ``A[row:row+n_rows, node] = B 𝒯`` and columns ``A[node, rows] = Bᵀ``.

    ``grad`` is the (6, 6) gradient of the constraint with respect to ``node``,
    ``t_rot`` the node's (3, 3) rotational tangent block.
    """
    m = node_map[node]
    nd = node_dofs[node]
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    for i in range(n_rows):
        r = row + i
        for j in range(min(nd, 3)):
            A[r, m + j] = grad[i, j]
        if nd == 6:
            g3, g4, g5 = grad[i, 3], grad[i, 4], grad[i, 5]
            A[r, m + 3] = g3 * t00 + g4 * t10 + g5 * t20
            A[r, m + 4] = g3 * t01 + g4 * t11 + g5 * t21
            A[r, m + 5] = g3 * t02 + g4 * t12 + g5 * t22
        for j in range(nd):
            A[m + j, r] = grad[i, j]


@njit(inline=True)
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


@njit(inline=True)
def add_stiffness_block(node_map, node_dofs, row_node, col_node, scale, k66, t_rot, A):
    """``A[row node, col node] += scale · K [I 0; 0 𝒯]`` over the active DOFs of both nodes.

    ``k66`` (6, 6) is a K^Φ block in (u, θ) coordinates; its rotation columns are
    multiplied by the column node's (3, 3) tangent block ``t_rot``, as B's are.
    """
    r0 = node_map[row_node]
    c0 = node_map[col_node]
    nr = node_dofs[row_node]
    nc = node_dofs[col_node]
    t00, t01, t02 = t_rot[0, 0], t_rot[0, 1], t_rot[0, 2]
    t10, t11, t12 = t_rot[1, 0], t_rot[1, 1], t_rot[1, 2]
    t20, t21, t22 = t_rot[2, 0], t_rot[2, 1], t_rot[2, 2]
    for i in range(nr):
        r = r0 + i
        for j in range(min(nc, 3)):
            A[r, c0 + j] += scale * k66[i, j]
        if nc == 6:
            k3, k4, k5 = k66[i, 3], k66[i, 4], k66[i, 5]
            A[r, c0 + 3] += scale * (k3 * t00 + k4 * t10 + k5 * t20)
            A[r, c0 + 4] += scale * (k3 * t01 + k4 * t11 + k5 * t21)
            A[r, c0 + 5] += scale * (k3 * t02 + k4 * t12 + k5 * t22)
