"""Dense LU for small Newton systems: a static-pivot elimination program, and partial pivoting.

A small Newton matrix (tens of unknowns, a few hundred non-zeros) is factored about three
times per step.  Partial pivoting searches every column and swaps rows; yet the pivot
sequence barely changes from one iteration to the next.  So, as KLU does for sparse
matrices, the pivot sequence of a *reference* factorization (the matrix at the model's
initial state) is kept, and every later matrix is factored along it by a flat list of
multiply–adds computed once (:func:`build_program`): the structural pattern, the fill
it causes under that row order, and the position of every operand.  No search, no swap,
no test for zeros.  A factorization refuses (:data:`PROGRAM_REFUSED`) when a pivot became
too small (|pivot| < ``growth_tol`` · max|column below it|) or a value is not finite; the
caller then solves the same matrix by :func:`dense_solve` (partial pivoting), so every
solve depends on the current matrix only, never on the run's history.

The matrix values arrive in the order of a CSC pattern (the slots of
:mod:`kynemapy.linalg.sparsity`), the same array the sparse solver reads.
"""

from __future__ import annotations

import math

import numpy as np

from kynemapy._arena import HeaderBuilder, HeaderSpec, field_view, v1
from kynemapy._jit import njit

SOLVE_OK = 0
SOLVE_SINGULAR = 1
#: the sparse factors outgrew their arrays (grow them in Python and redo the step)
SOLVE_CAPACITY = 2
#: a program factorization met a pivot below the growth threshold: solve by partial pivoting
PROGRAM_REFUSED = 3

#: programs longer than this many multiply–adds are not built (the matrix is then factored
#: by partial pivoting every time): a program costs 8 bytes per operation
MAX_PROGRAM_OPS = 200_000
#: default refactor acceptance, as the sparse LU's: |pivot| ≥ GROWTH_TOL · max|column below it|
GROWTH_TOL = 1e-3


_u = np.uint64


@njit
def dense_solve(a, piv, b):
    """Solve ``A x = b`` in place: ``a`` (n, n) gets the LU factors, ``piv`` (n,) the row
    swaps, ``b`` (n,) the solution; returns a ``SOLVE_*`` status.

    Gaussian elimination with partial pivoting (L unit lower, U upper, stored in ``a``),
    in one pass and without the work on structural zeros:

    * the forward substitution ``L y = P b`` runs inside the elimination: ``b`` is
      swapped with the rows, and ``b[i] −= l_ik b[k]`` happens at step k, which is the
      order of lu_solve's row sums;
    * a row update stops at the last non-zero column of the pivot row (the entries
      beyond are exact zeros);
    * the back substitution skips zero entries of U.

    Every skipped term is an exact zero, so the result equals a textbook LU factorisation
    followed by forward and back substitution (up to the sign of zero results).

    The indices are unsigned (``np.uint64``): numba then emits no negative-index
    wraparound code, which otherwise is a large part of the instructions of this
    solve (about 0.1 µs per solve of the 15×15 heavy-top system).  All index
    arithmetic below stays non-negative.
    """
    n = np.uint64(a.shape[0])
    one = np.uint64(1)
    for k in range(n):
        p = k
        best = abs(a[k, k])
        for i in range(k + one, n):
            v = abs(a[i, k])
            if v > best:
                best = v
                p = i
        piv[k] = p
        if best == 0.0 or not math.isfinite(best):
            return SOLVE_SINGULAR
        if p != k:
            for j in range(n):
                t = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = t
            t = b[k]
            b[k] = b[p]
            b[p] = t
        last = n - one
        while last > k and a[k, last] == 0.0:
            last -= one
        inv = 1.0 / a[k, k]
        bk = b[k]
        for i in range(k + one, n):
            lik = a[i, k] * inv
            a[i, k] = lik
            if lik != 0.0:
                for j in range(k + one, last + one):
                    a[i, j] -= lik * a[k, j]
                b[i] -= lik * bk
    for r in range(n):
        i = n - one - r  # rows from the last up
        s = b[i]
        for j in range(i + one, n):
            uij = a[i, j]
            if uij != 0.0:
                s -= uij * b[j]
        b[i] = s / a[i, i]
    return SOLVE_OK


#: the most DOFs of a node, and so of a held block of :func:`condensed_solve` (its scratch)
HELD_MAX_DOFS = 6
#: a condensed solve met a held block it cannot eliminate (a non-zero entry among its constraint
#: rows' own columns, or a singular block): the caller solves the whole matrix instead
CONDENSE_REFUSED = 4


@njit
def _block_solve(a, row, col, m, blk, piv, z):
    """``A[row : row + m, col : col + m] z_new = z`` in place (partial pivoting on a copy in
    ``blk``, at least m² long): a held block's B₀ or C₀ in :func:`condensed_solve`."""
    b = blk[: m * m].reshape((m, m))
    for i in range(m):
        for j in range(m):
            b[i, j] = a[row + i, col + j]
    return dense_solve(b, piv, z)


@njit
def condensed_solve(a, x, plan, w):
    """Solve ``A x = b`` in place, eliminating first the nodes held by one-node constraints.

    ``a`` (n, n) holds A and is left as it is; ``x`` (n,) holds b on entry, the solution on
    exit.  A held block ``(u, r, m)`` is a node's m DOFs (unknowns u … u+m−1) and its
    constraint's m rows and multipliers (r … r+m−1), the constraint's rows having entries only
    in the node's columns and its own (B₀ = A[r, u]; A[r, r] must be zero: checked) and its
    multipliers' columns only in the node's rows and its own (C₀ = A[u, r]).  With F the other
    unknowns:

    * ``B₀ x_u = b_r``: the node's DOFs (an m × m solve);
    * ``A[F, F] x_F = b_F − A[F, u] x_u``: the others (A[F, r] is zero);
    * ``C₀ x_r = b_u − A[u, u] x_u − A[u, F] x_F``: the multipliers.

    For a beam held at its root by a prescribed or fixed boundary condition the LU then works
    on the free nodes' block alone (order 5: 30 × 30 instead of 42 × 42, about 9 000
    multiply–subtracts instead of 24 700).  Each solve is :func:`dense_solve` (partial pivoting).

    plan : (n + 2 + 3 H + nF,) int64
        ``[pivots (n) | H | nF | (u, r, m) × H | F (nF)]``; the first n words are scratch.
    w : (nF² + 2 n + HELD_MAX_DOFS²,) float64
        Scratch.

    Returns ``SOLVE_OK``, or :data:`CONDENSE_REFUSED` with ``x`` unchanged (a non-zero A[r, r],
    or a singular B₀, C₀ or A[F, F]: the caller factors the whole matrix, which then says
    whether A is singular).
    """
    n = x.shape[0]
    piv = plan[:n]
    n_held = plan[n]
    nf = plan[n + 1]
    h0 = n + 2
    f0 = h0 + 3 * n_held
    red = w[: nf * nf].reshape((nf, nf))
    o = nf * nf
    y = w[o : o + n]  # the solution, assembled
    o += n
    z = w[o : o + n]  # right-hand sides of the small solves and of the reduced one
    o += n
    blk = w[o:]
    for i in range(n):
        y[i] = 0.0
    # the held nodes' DOFs from their constraints' rows
    for h in range(n_held):
        u = plan[h0 + 3 * h]
        r = plan[h0 + 3 * h + 1]
        m = plan[h0 + 3 * h + 2]
        for i in range(m):
            for j in range(m):
                if a[r + i, r + j] != 0.0:
                    return CONDENSE_REFUSED
        zs = z[:m]
        for i in range(m):
            zs[i] = x[r + i]
        if _block_solve(a, r, u, m, blk, piv, zs) != SOLVE_OK:  # B₀ x_u = b_r
            return CONDENSE_REFUSED
        for i in range(m):
            y[u + i] = zs[i]
    # the free unknowns: their block, the held DOFs moved to the right-hand side
    for i in range(nf):
        row = plan[f0 + i]
        s = x[row]
        for h in range(n_held):
            u = plan[h0 + 3 * h]
            for k in range(plan[h0 + 3 * h + 2]):
                s -= a[row, u + k] * y[u + k]
        z[i] = s
        for j in range(nf):
            red[i, j] = a[row, plan[f0 + j]]
    zf = z[:nf]
    if dense_solve(red, piv, zf) != SOLVE_OK:
        return CONDENSE_REFUSED
    for i in range(nf):
        y[plan[f0 + i]] = zf[i]
    # the held constraints' multipliers from their nodes' rows (y is zero on every multiplier
    # of a held constraint here, and A[u, r'] is zero for another held block's r')
    for h in range(n_held):
        u = plan[h0 + 3 * h]
        r = plan[h0 + 3 * h + 1]
        m = plan[h0 + 3 * h + 2]
        zs = z[:m]
        for i in range(m):
            s = x[u + i]
            for c in range(n):
                s -= a[u + i, c] * y[c]
            zs[i] = s
        if _block_solve(a, u, r, m, blk, piv, zs) != SOLVE_OK:  # C₀ x_r = the rest of b_u
            return CONDENSE_REFUSED
        for i in range(m):
            y[r + i] = zs[i]
    for i in range(n):
        x[i] = y[i]
    return SOLVE_OK


def held_blocks(
    n: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    constraint_node: np.ndarray,
    constraint_row: np.ndarray,
    constraint_n_rows: np.ndarray,
    node_map: np.ndarray,
    node_dofs: np.ndarray,
    n_system_dofs: int,
) -> np.ndarray:
    """(H, 3) int64: the ``(u, r, m)`` blocks :func:`condensed_solve` may eliminate first, from
    the pattern of A (CSC ``indptr``, ``indices``, n unknowns) and the constraints' tables
    (``constraint_row`` counted from ``n_system_dofs``, the first constraint row).

    A one-node constraint (base −1) with as many rows m as its node has DOFs, whose rows have
    entries only in the node's columns and their own, and whose multipliers' columns have
    entries only in the node's rows and their own; a node held twice is not condensed.
    """
    pattern = np.zeros((n, n), dtype=bool)
    cols = np.repeat(np.arange(n), np.diff(indptr))
    pattern[np.asarray(indices), cols] = True
    blocks = []
    nodes = []
    for c in range(len(constraint_row)):
        base, node = int(constraint_node[c, 0]), int(constraint_node[c, 1])
        m = int(constraint_n_rows[c])
        if base != -1 or node < 0 or not 0 < m <= HELD_MAX_DOFS or m != int(node_dofs[node]):
            continue
        u, r = int(node_map[node]), n_system_dofs + int(constraint_row[c])
        own = np.zeros(n, dtype=bool)
        own[u : u + m] = True
        own[r : r + m] = True
        if pattern[r : r + m, ~own].any() or pattern[~own, r : r + m].any():
            continue
        blocks.append((u, r, m))
        nodes.append(node)
    keep = [b for b, node in zip(blocks, nodes, strict=True) if nodes.count(node) == 1]
    return np.array(keep, dtype=np.int64).reshape(-1, 3)


def condense_plan(n: int, blocks: np.ndarray) -> tuple[np.ndarray, int]:
    """The int64 ``plan`` of :func:`condensed_solve` for ``blocks`` (H, 3) and the length of its
    float scratch ``w``."""
    held = np.zeros(n, dtype=bool)
    for u, r, m in blocks:
        held[u : u + m] = True
        held[r : r + m] = True
    free = np.flatnonzero(~held)
    plan = np.concatenate([np.zeros(n, dtype=np.int64), [len(blocks), free.size], blocks.ravel(), free])
    return plan.astype(np.int64), int(free.size**2 + 2 * n + HELD_MAX_DOFS**2)


# ---------------------------------------------------------------- the elimination program
_P = HeaderSpec()
P_VALID = _P.scalar("valid")  #: 1 when a program was built (else every solve pivots)
P_N = _P.scalar("n")
P_LU_SIZE = _P.scalar("lu_size")
P_NNZ = _P.scalar("nnz")  #: entries of A's pattern (the length of ``values``)
P_APOS = _P.field("i", "apos", ("n_a",))  #: active entries: their positions in ``values`` (the LU buffer's first words)
P_ZERO = _P.field("i", "zero", ("n_z",))  #: inactive entries: positions in ``values`` that must hold zeros
P_PERM = _P.field("i", "perm", ("n",))  #: row pivoted at step k
P_PIV = _P.field("i", "piv", ("n",))  #: LU-buffer position of pivot k
P_LPTR = _P.field("i", "lptr", ("n1",))  #: L entries of step k: lptr[k] .. lptr[k+1]
P_LPOS = _P.field("i", "lpos", ("n_l",))  #: their LU-buffer positions
P_LROW = _P.field("i", "lrow", ("n_l",))  #: their rows
P_UPTR = _P.field("i", "uptr", ("n1",))  #: U entries of step k (right of the pivot)
P_UPOS = _P.field("i", "upos", ("n_u",))
P_UCOL = _P.field("i", "ucol", ("n_u",))
P_TARGET = _P.field("i", "target", ("n_ops",))  #: per (L entry, U entry) of a step: the updated position
P_LU = _P.field("f", "lu", ("lu_size",))  #: the factors (and the fill) after a factorization
P_DIAG = _P.field("f", "diag", ("n",))  #: the pivots
P_Y = _P.field("f", "y", ("n",))
P_TOL = _P.field("f", "tol", (1,))


class Program:
    """A static-pivot LU program in two arenas, ``i`` (int64, header first) and ``f`` (float64).

    ``ops`` is its number of multiply–adds per factorization; ``valid`` False (no reference
    factorization: singular, too long, or not built) makes every solve pivot.
    """

    __slots__ = ("f", "i")

    def __init__(self, i: np.ndarray, f: np.ndarray) -> None:
        self.i = i
        self.f = f

    @property
    def valid(self) -> bool:
        return bool(self.i[P_VALID])

    @property
    def ops(self) -> int:
        return int(self.i[P_TARGET + 1]) if self.valid else 0

    def field(self, word: int) -> np.ndarray:
        arena = self.i if _P_ARENA[word] == "i" else self.f
        return field_view(arena, self.i, word)


_P_ARENA = {spec.word: spec.arena for spec in _P.fields}


def empty_program(n: int) -> Program:
    """A program that is not valid: every solve factors with partial pivoting."""
    return _pack_program(n, 0, {}, valid=False)


def _pack_program(n: int, nnz: int, arrays: dict[str, np.ndarray], valid: bool, growth_tol: float = GROWTH_TOL):
    counts = {"n": n, "n1": n + 1, "nnz": nnz, "lu_size": 0, "n_l": 0, "n_u": 0, "n_ops": 0, "n_a": 0, "n_z": 0}
    for name, count in (
        ("lu", "lu_size"),
        ("lpos", "n_l"),
        ("upos", "n_u"),
        ("target", "n_ops"),
        ("apos", "n_a"),
        ("zero", "n_z"),
    ):
        if name in arrays:
            counts[count] = int(arrays[name].shape[0])
    b = HeaderBuilder(_P, counts)
    prog = Program(b.i, b.f)
    prog.i[P_VALID] = int(valid)
    prog.i[P_N] = n
    prog.i[P_LU_SIZE] = counts["lu_size"]
    prog.i[P_NNZ] = nnz
    for spec in _P.fields:
        if spec.name in arrays:
            prog.field(spec.word)[...] = arrays[spec.name]
    prog.field(P_TOL)[0] = growth_tol
    return prog


def _bits(mask: int) -> list[int]:
    """The positions of the set bits of ``mask`` (a non-negative int), in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def build_program(
    indptr: np.ndarray,
    indices: np.ndarray,
    n: int,
    values: np.ndarray,
    growth_tol: float = GROWTH_TOL,
    active: np.ndarray | None = None,
) -> Program:
    """The elimination program of the CSC pattern ``(indptr, indices)`` (n × n) along the
    pivot sequence of partial pivoting applied to ``values`` (the reference matrix).

    Columns are eliminated in their natural order; at step k the row with the largest
    |value| in column k among the rows not yet pivoted is chosen (ties: the first).  The
    fill is computed on the structural pattern, so every later matrix of that pattern can
    be factored by the program.  A singular reference, or a program of more than
    :data:`MAX_PROGRAM_OPS` operations, gives an invalid program (partial pivoting then).

    ``active`` (nnz,) bool, optional: the entries of the pattern that may be non-zero; the
    others are taken as structural zeros (the program, its fill and its operations are those
    of the active entries only, and a nonzero reference value counts as active).  Every solve
    checks that the inactive entries hold zeros and refuses otherwise, so a wrong guess costs
    speed (partial pivoting for that matrix), never a wrong result.  The pivot sequence and
    every operation on a non-zero value are those of the full pattern's program: the results
    are the same, bit for bit.
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    nnz = int(indptr[n])
    values = np.asarray(values, dtype=np.float64)
    cols = np.repeat(np.arange(n), np.diff(indptr))
    full = np.zeros((n, n), dtype=bool)
    full[indices, cols] = True
    if np.count_nonzero(full) != nnz:
        raise ValueError("build_program: the CSC pattern lists an entry twice")
    act = np.ones(nnz, dtype=bool) if active is None else np.asarray(active, dtype=bool).reshape(nnz).copy()
    act |= values != 0.0
    apos = np.flatnonzero(act)
    dense = np.zeros((n, n))
    np.add.at(dense, (indices, cols), values)
    # The elimination in plain Python: a row's pattern as an int bit mask, its values as a
    # list (a few hundred small numpy calls cost more than the arithmetic here; the products
    # and differences are the same IEEE operations, in the same order, as numpy's)
    a = dense.tolist()
    position = [[-1] * n for _ in range(n)]
    rows = [0] * n
    for e, (r, c) in enumerate(zip(indices[apos].tolist(), cols[apos].tolist(), strict=True)):
        position[r][c] = e
        rows[r] |= 1 << c
    active_rows = list(rows)
    free = list(range(n))  # rows not yet pivoted, in increasing order (ties: the first)
    perm = [0] * n
    steps: list[tuple[list[int], list[int]]] = []
    n_ops = 0
    for k in range(n):
        bit = 1 << k
        cand = [i for i in free if rows[i] & bit]
        if not cand:
            return empty_program(n)
        p, best = cand[0], abs(a[cand[0]][k])
        for i in cand[1:]:
            v = abs(a[i][k])
            if v > best or v != v:  # a NaN is chosen, and refused below
                p, best = i, v
                if v != v:
                    break
        if not (best > 0.0 and math.isfinite(best)):
            return empty_program(n)
        perm[k] = p
        free.remove(p)
        lrows = [i for i in cand if i != p]
        upper = rows[p] >> (k + 1) << (k + 1)
        ucols = _bits(upper)
        steps.append((lrows, ucols))
        n_ops += len(lrows) * len(ucols)
        if n_ops > MAX_PROGRAM_OPS:
            return empty_program(n)
        ap = a[p]
        pivot = ap[k]
        for i in lrows:
            ai = a[i]
            m = ai[k] / pivot
            ai[k] = m
            for j in ucols:
                ai[j] -= m * ap[j]
            rows[i] |= upper
    # positions in the LU buffer: A's active entries first, in CSC order (a solve gathers them
    # in one pass), then the fill, row-major (a solve zeroes only these)
    lu_size = int(apos.size)
    for i in range(n):
        for j in _bits(rows[i] & ~active_rows[i]):
            position[i][j] = lu_size
            lu_size += 1
    lptr, uptr = [0], [0]
    lpos: list[int] = []
    lrow: list[int] = []
    upos: list[int] = []
    ucol: list[int] = []
    target: list[int] = []
    for k, (lrows, ucols) in enumerate(steps):
        pos_p = position[perm[k]]
        lpos.extend(position[i][k] for i in lrows)
        lrow.extend(lrows)
        upos.extend(pos_p[j] for j in ucols)
        ucol.extend(ucols)
        lptr.append(len(lpos))
        uptr.append(len(upos))
        for i in lrows:
            pos_i = position[i]
            target.extend(pos_i[j] for j in ucols)
    arrays = {
        "perm": np.array(perm, dtype=np.int64),
        "piv": np.array([position[perm[k]][k] for k in range(n)], dtype=np.int64),
        "lptr": np.array(lptr, dtype=np.int64),
        "lpos": np.array(lpos, dtype=np.int64),
        "lrow": np.array(lrow, dtype=np.int64),
        "uptr": np.array(uptr, dtype=np.int64),
        "upos": np.array(upos, dtype=np.int64),
        "ucol": np.array(ucol, dtype=np.int64),
        "target": np.array(target, dtype=np.int64),
        "lu": np.zeros(lu_size),
        "apos": apos.astype(np.int64),
        "zero": np.flatnonzero(~act).astype(np.int64),
    }
    return _pack_program(n, nnz, arrays, valid=True, growth_tol=growth_tol)


@njit
def program_solve(i, f, values, x):
    """Solve ``A x = rhs`` in place along the program's pivot sequence (``x`` (n,) holds the
    right-hand side on entry); ``values`` (nnz,) are A's entries in CSC order.

    Returns ``SOLVE_OK``, or ``PROGRAM_REFUSED`` (no valid program, a pivot below the growth
    threshold, a value that is not finite, ``values`` not of the program's length, or a
    non-zero value in an entry the program takes as a structural zero): ``x`` is then
    unchanged.  Indices are cast to
    ``uint64`` where they index (no negative-index wraparound code).

    Every operation is :func:`dense_solve`'s, in its order (multipliers ``a_ik · (1/a_kk)``,
    updates column by column, forward substitution inside the elimination order, back
    substitution dividing by the pivot), less the ones on structural zeros, which change
    nothing: when the reference's pivot rows are the ones partial pivoting would choose, the
    result is bit for bit :func:`dense_solve`'s.
    """
    if i[P_VALID] == 0:
        return PROGRAM_REFUSED
    lu = v1(f, i, P_LU)
    diag = v1(f, i, P_DIAG)
    y = v1(f, i, P_Y)
    piv = v1(i, i, P_PIV)
    perm = v1(i, i, P_PERM)
    lptr = v1(i, i, P_LPTR)
    lpos = v1(i, i, P_LPOS)
    lrow = v1(i, i, P_LROW)
    uptr = v1(i, i, P_UPTR)
    upos = v1(i, i, P_UPOS)
    ucol = v1(i, i, P_UCOL)
    target = v1(i, i, P_TARGET)
    apos = v1(i, i, P_APOS)
    zero = v1(i, i, P_ZERO)
    tol = f[i[P_TOL]]
    n = _u(i[P_N])
    one = _u(1)
    if _u(values.shape[0]) != _u(i[P_NNZ]):
        return PROGRAM_REFUSED
    # the entries taken as structural zeros must be zeros (±0): the OR of their bits without
    # the sign bit, in two independent chains (a branch per entry cost twice as much)
    bits = values.view(np.uint64)
    nz = _u(zero.shape[0])
    acc0 = _u(0)
    acc1 = _u(0)
    k = _u(0)
    while k + one < nz:
        acc0 |= bits[_u(zero[k])]
        acc1 |= bits[_u(zero[k + one])]
        k += _u(2)
    if k < nz:
        acc0 |= bits[_u(zero[k])]
    if ((acc0 | acc1) << one) != _u(0):
        return PROGRAM_REFUSED
    # A's active values fill the start of the buffer in CSC order; the fill after them starts at zero
    n_a = _u(apos.shape[0])
    for k in range(n_a):
        lu[k] = values[_u(apos[k])]
    for k in range(n_a, _u(lu.shape[0])):
        lu[k] = 0.0
    # the right-hand side, forward-substituted inside the elimination (y is scratch: on refusal
    # x is unchanged): at step k, y[perm[k]] has every update of the steps before, as in a
    # separate pass after the factorization, and each multiplier is applied as it is made (the
    # same operations in the same order; a pass of its own cost about 800 instructions a
    # heavy-top step more, its loop and the multipliers' positions read again)
    for k in range(n):
        y[k] = x[k]
    t = _u(0)
    for k in range(n):
        p = lu[_u(piv[k])]
        if not (p * 0.0 == 0.0 and p != 0.0):
            return PROGRAM_REFUSED
        inv = 1.0 / p
        diag[k] = p
        u0 = _u(uptr[k])
        u1 = _u(uptr[k + one])
        nu = u1 - u0
        yk = y[_u(perm[k])]
        # multipliers and updates; the growth test over the column's entries comes after
        # them (on refusal the buffer is scratch), the NaN/inf test with it
        amax = 0.0
        check = 0.0
        for pl in range(_u(lptr[k]), _u(lptr[k + one])):
            q = _u(lpos[pl])
            v = lu[q]
            a = abs(v)
            check += a * 0.0
            if a > amax:
                amax = a
            m = v * inv
            lu[q] = m
            if yk != 0.0:
                y[_u(lrow[pl])] -= m * yk
            if m != 0.0:  # every U entry of the pattern, zero or not, as dense_solve updates
                for j in range(nu):  # (gathering the non-zero ones first cost 8 % of a solve)
                    lu[_u(target[t + j])] -= m * lu[_u(upos[u0 + j])]
            t += nu
        if not (check == 0.0 and abs(p) >= tol * amax):
            return PROGRAM_REFUSED
    for r in range(n):
        k = n - one - r
        s = y[_u(perm[k])]
        for pu in range(_u(uptr[k]), _u(uptr[k + one])):
            s -= lu[_u(upos[pu])] * x[_u(ucol[pu])]
        x[k] = s / diag[k]
    return SOLVE_OK


@njit
def csc_to_dense(indptr, indices, values, a):
    """``a`` (n, n) := the matrix of CSC ``values``."""
    n = a.shape[0]
    for r in range(n):
        for c in range(n):
            a[r, c] = 0.0
    for c in range(n):
        for k in range(indptr[c], indptr[c + 1]):
            a[indices[k], c] += values[k]
