"""3-vector algebra on local scalars: vectors as 3-tuples (or any indexable of length 3), results
returned as floats or 3-tuples (numba; nothing is allocated).

Compiled as functions of their own, not inlined at numba-IR level: LLVM inlines them into
their callers all the same (no run-time cost measured), while typing a copy of each at every
call site cost the joints' unit 5 s of its 16 s of compilation.

The array forms that write into ``out`` are in :mod:`kynemapy.math.so3`; the quaternion rotation
of a 3-tuple, :func:`kynemapy.math.quaternion.rot`, is with the other quaternion formulas.
``ṽ a = v × a``.
"""

from __future__ import annotations

from kynemapy._jit import njit


@njit
def dot(a, b):
    """Scalar product ``a · b`` of two 3-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def cross(a, b):
    """Vector product ``a × b`` of two 3-vectors, as a 3-tuple."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit
def spin2(w, v):
    """``w × (w × v)`` as a 3-tuple (the centripetal term of a point turning at ``w``)."""
    return cross(w, cross(w, v))


@njit
def tilde_entry(v, i, j):
    """Entry ``(i, j)`` (0 ≤ i, j < 3) of the skew matrix ``ṽ`` of the 3-vector ``v``."""
    if i == j:
        return 0.0
    if i == 0:
        return -v[2] if j == 1 else v[1]
    if i == 1:
        return v[2] if j == 0 else -v[0]
    return -v[1] if j == 0 else v[0]
