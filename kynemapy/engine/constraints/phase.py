"""The constraint phases of the step: every constraint's terms, outputs and reaction.

Each loops over the constraint table and calls :mod:`.dispatch` per constraint; nothing
outside this package branches on the kind.  They write the workspace fields ``CON_PHI``,
``CON_BB``, ``CON_BT``, ``CON_K``, ``CON_LOAD``, which the assembly scatters without
knowing the kinds.
"""

from __future__ import annotations

from kynemapy._arena import v1, v2, v3, v4, v5
from kynemapy._jit import njit
from kynemapy.engine import fields as fd
from kynemapy.engine.constraints.dispatch import bias, evaluate, input_load, output
from kynemapy.engine.params import P_EXACT, P_RHS_BIAS
from kynemapy.math.quaternion import rotate_vector


@njit
def constraint_terms(d, p):
    """Φ (or, with ``P_RHS_BIAS``, the bias γ of Φ̈ = B v̇ + γ), gradients ``B_b``, ``B_t``,
    K^Φ (with ``P_EXACT``: exact gradients too) and the input loads of every constraint."""
    h = d.mi
    nc = h[fd.N_CONSTRAINTS]
    if nc == 0:
        return
    kind = v1(h, h, fd.CON_KIND)
    has_load = v1(h, h, fd.CON_HAS_LOAD)
    cnode = v2(h, h, fd.CON_NODE)
    cx0 = v2(d.mf, h, fd.CON_X0)
    axes = v3(d.mf, h, fd.CON_AXES)
    geom = v4(d.mf, h, fd.CON_GEOM)
    param = v1(d.mf, h, fd.CON_PARAM)
    cin = v2(d.xf, h, fd.CON_INPUT)
    q = v2(d.sf, h, fd.Q)
    v = v2(d.sf, h, fd.V)
    lam = v2(d.sf, h, fd.LAM)
    phi = v2(d.wf, h, fd.CON_PHI)
    bb = v3(d.wf, h, fd.CON_BB)
    bt = v3(d.wf, h, fd.CON_BT)
    k = v5(d.wf, h, fd.CON_K)
    load = v3(d.wf, h, fd.CON_LOAD)
    q_ground = v1(d.wf, h, fd.Q_GROUND)
    v_ground = v1(d.wf, h, fd.V_GROUND)
    s3 = v2(d.wf, h, fd.S3)
    s4 = v2(d.wf, h, fd.S4)
    s33 = v3(d.wf, h, fd.S33)
    exact = p[P_EXACT] != 0.0
    with_bias = p[P_RHS_BIAS] != 0.0
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        qb = q_ground if nb < 0 else q[nb]
        evaluate(
            kind[ic], cx0[ic], axes[ic], geom[ic], param[ic], cin[ic], qb, q[nt], lam[ic], exact,
            phi[ic], bb[ic], bt[ic], k[ic], s3, s4, s33,
        )  # fmt: skip
        if has_load[ic]:
            input_load(kind[ic], cx0[ic], axes[ic], geom[ic], cin[ic, 0], qb, q[nt], load[ic])
        if with_bias:
            vb = v_ground if nb < 0 else v[nb]
            bias(kind[ic], cx0[ic], axes[ic], geom[ic], param[ic], cin[ic], qb, q[nt], vb, v[nt], s3, s4, s33, phi[ic])


@njit
def constraint_outputs(d, initial):
    """Joint outputs (``CON_OUTPUT``) from the state: revolute azimuth / hinge angle / slider
    displacement, rate and acceleration.  ``initial``: at t = 0, where Kynema's revolute
    output stays zero until the first step (hinges and sliders are set)."""
    h = d.mi
    nc = h[fd.N_CONSTRAINTS]
    kind = v1(h, h, fd.CON_KIND)
    cnode = v2(h, h, fd.CON_NODE)
    cx0 = v2(d.mf, h, fd.CON_X0)
    axes = v3(d.mf, h, fd.CON_AXES)
    geom = v4(d.mf, h, fd.CON_GEOM)
    q = v2(d.sf, h, fd.Q)
    v = v2(d.sf, h, fd.V)
    vd = v2(d.sf, h, fd.VD)
    out = v2(d.sf, h, fd.CON_OUTPUT)
    q_ground = v1(d.wf, h, fd.Q_GROUND)
    v_ground = v1(d.wf, h, fd.V_GROUND)
    s3 = v2(d.wf, h, fd.S3)
    for ic in range(nc):
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        g = nb < 0
        output(
            kind[ic], cx0[ic], axes[ic], geom[ic],
            q_ground if g else q[nb], q[nt], v_ground if g else v[nb], v[nt], v_ground if g else vd[nb], vd[nt],
            initial, s3, out[ic],
        )  # fmt: skip


@njit
def constraint_reaction(d, p, c, out):
    """``out`` (6,): force [N] and torque [N m] constraint ``c`` exerts on its target body, world
    frame, torque about the joint point on that body (``x + R(r) d``; the node for Kynema's
    kinds): ``−B_tᵀλ`` at the current state, shifted to the point.  ``p`` must ask for exact
    gradients (``P_EXACT``).  Runs :func:`constraint_terms` (call between steps)."""
    constraint_terms(d, p)
    h = d.mi
    cnode = v2(h, h, fd.CON_NODE)
    geom = v4(d.mf, h, fd.CON_GEOM)
    q = v2(d.sf, h, fd.Q)
    lam = v2(d.sf, h, fd.LAM)
    bt = v3(d.wf, h, fd.CON_BT)
    n_rows = v1(h, h, fd.CON_N_ROWS)[c]
    nt = cnode[c, 1]
    for j in range(6):
        s = 0.0
        for i in range(n_rows):
            s += bt[c, i, j] * lam[c, i]
        out[j] = -s
    lever = v2(d.wf, h, fd.S3)[0]
    rotate_vector(q[nt, 3:7], geom[c, 1, 0], lever)
    f0, f1, f2 = out[0], out[1], out[2]
    out[3] -= lever[1] * f2 - lever[2] * f1
    out[4] -= lever[2] * f0 - lever[0] * f2
    out[5] -= lever[0] * f1 - lever[1] * f0
