"""Linear spring between the translational DOFs of two nodes.

``r = x0 + u2 − u1`` (x0 = X2 − X1 reference vector [m]), ``l = |r|``,
``c1 = k (l_ref/l − 1)`` [N/m], ``c2 = k l_ref / l³`` [N/m³], force on node 1
``f = c1 r`` [N] (node 2 gets ``−f``).  The 3×3 block ``A = (c1 − c2 l²) I −
c2 r̃ r̃ = c1 I − c2 r rᵀ`` is the Jacobian of ``−f`` with respect to u2... with
Kynema's sign: Kynema assembles ``[[A, −A], [−A, A]]``, the negative of the
true Jacobian ``[[−A, A], [A, −A]]`` of the residual.
"""

from __future__ import annotations

import math

from kynemapy._jit import njit


@njit
def spring_coefficients(k, l_ref, length):
    """Force coefficients ``(c1, c2)``; for ``l_ref = 0`` exactly ``(−k, 0)`` (no 0/0 at zero length)."""
    if l_ref == 0.0:
        return -k, 0.0
    return k * (l_ref / length - 1.0), k * l_ref / (length * length * length)


@njit
def spring_stiffness_block(c1, c2, r, length, out):
    """``A = (c1 − c2 l²) I − c2 r̃ r̃`` (3, 3)."""
    diag = c1 - (c2 * length * length)
    r0, r1, r2 = r[0], r[1], r[2]
    # r̃ r̃ computed as the product of the skews
    out[0, 0] = diag - c2 * (-r2 * r2 - r1 * r1)
    out[0, 1] = -c2 * (r1 * r0)
    out[0, 2] = -c2 * (r2 * r0)
    out[1, 0] = -c2 * (r0 * r1)
    out[1, 1] = diag - c2 * (-r2 * r2 - r0 * r0)
    out[1, 2] = -c2 * (r2 * r1)
    out[2, 0] = -c2 * (r0 * r2)
    out[2, 1] = -c2 * (r1 * r2)
    out[2, 2] = diag - c2 * (-r1 * r1 - r0 * r0)


@njit
def spring_element_terms(x0, u1, u2, k, l_ref, r, res, mat):
    """Force (3,) on node 1 and the 3×3 block ``A`` of one spring.

    ``r`` (3,) scratch/out: the current spring vector [m].  The residual of
    node 1 is ``+res``, of node 2 ``−res``.  Returns the current length [m].
    """
    for i in range(3):
        r[i] = x0[i] + u2[i] - u1[i]
    length = math.sqrt((r[0] * r[0]) + (r[1] * r[1]) + (r[2] * r[2]))
    c1, c2 = spring_coefficients(k, l_ref, length)
    for i in range(3):
        res[i] = c1 * r[i]
    spring_stiffness_block(c1, c2, r, length, mat)
    return length
