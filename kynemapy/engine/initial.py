"""Consistent initial accelerations and multipliers at t = 0, from the phases of the step.

Solves the constrained equations of motion at the initial position and velocity,

    [ M   Bᵀ ] [ v̇ ]   [ −r(v̇ = 0) ]
    [ B   0  ] [ λ  ] = [ −γ        ]

where ``r`` is the system residual (inertial minus gravity forces, springs, external loads,
joint inputs) and ``γ`` the velocity part of the constraint acceleration Φ̈ = B v̇ + γ.
It is the step's own assembly run with the coefficients
:data:`~kynemapy.engine.params.INITIAL_ACCELERATIONS` (β′ = 1, γ′ = 0, κ = 0, c = 1, exact
gradients, the bias in the constraint rows), with 𝒯 = 0 for the element blocks (so their
matrix is M) and 𝒯 = I for the constraint rows.  Prescribed motions are taken as
unaccelerated at t = 0 (γ = 0 for one-node constraints; control angles and torques as given).
"""

from __future__ import annotations

from kynemapy._arena import v1, v2, v3
from kynemapy._jit import njit
from kynemapy.engine import fields as fd
from kynemapy.engine.assemble import assemble
from kynemapy.engine.constraints.phase import constraint_terms
from kynemapy.engine.elements import element_terms
from kynemapy.engine.step import solve
from kynemapy.linalg.dense import SOLVE_OK


@njit(inline=True)
def consistent_accelerations(d, p):
    """Fill ``vd`` and ``lam`` of the state with the solution at the current q, v; ``p`` is
    :data:`~kynemapy.engine.params.INITIAL_ACCELERATIONS`.  Returns a ``SOLVE_*`` status (the
    state's ``vd`` and ``lam`` are zero unless ``SOLVE_OK``)."""
    h = d.mi
    vd = v2(d.sf, h, fd.VD)
    lam = v2(d.sf, h, fd.LAM)
    tangent = v3(d.wf, h, fd.TANGENT)
    node_map = v1(h, h, fd.NODE_MAP)
    node_dofs = v1(h, h, fd.NODE_DOFS)
    n_rows = v1(h, h, fd.CON_N_ROWS)
    crow = v1(h, h, fd.CON_ROW)
    dx = v1(d.wf, h, fd.DX)
    for n in range(vd.shape[0]):
        for k in range(6):
            vd[n, k] = 0.0
    for i in range(lam.shape[0]):
        for k in range(6):
            lam[i, k] = 0.0
    for n in range(tangent.shape[0]):
        for i in range(3):
            for j in range(3):
                tangent[n, i, j] = 0.0
    element_terms(d, p)
    for n in range(tangent.shape[0]):
        for i in range(3):
            tangent[n, i, i] = 1.0
    constraint_terms(d, p)
    assemble(d, p)
    status = solve(d, p)
    if status != SOLVE_OK:
        return status
    for n in range(vd.shape[0]):
        m = node_map[n]
        for k in range(node_dofs[n]):
            vd[n, k] = dx[m + k]
    nsys = h[fd.N_SYSTEM_DOFS]
    for ic in range(lam.shape[0]):
        row = nsys + crow[ic]
        for i in range(n_rows[ic]):
            lam[ic, i] = dx[row + i]
    return SOLVE_OK
