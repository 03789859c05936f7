"""The constraint phases of the step: every constraint's terms, outputs and reaction.

Each loops over the constraint table and calls :mod:`.dispatch` per constraint; nothing
outside this package branches on the kind.  They write the workspace fields ``con_phi``,
``con_bb``, ``con_bt``, ``con_k``, ``con_load`` of :class:`~kynemapy.engine.fields.Data`,
which the assembly scatters without knowing the kinds.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.dispatch import bias, evaluate, input_load, output
from kynemapy.engine.params import P_EXACT, P_RHS_BIAS
from kynemapy.math.quaternion import rotate_vector


@njit(inline=True)
def constraint_terms(d, p):
    """Φ (or, with ``P_RHS_BIAS``, the bias γ of Φ̈ = B v̇ + γ), gradients ``B_b``, ``B_t``,
    K^Φ (with ``P_EXACT``: the exact gradients too) and the input loads of every constraint."""
    exact = p[P_EXACT] != 0.0
    with_bias = p[P_RHS_BIAS] != 0.0
    for ic in range(d.constraint_kind.shape[0]):
        kind = d.constraint_kind[ic]
        nb = d.constraint_node[ic, 0]
        nt = d.constraint_node[ic, 1]
        qb = d.q_ground if nb < 0 else d.q[nb]
        evaluate(
            kind, d.constraint_X0[ic], d.constraint_axes[ic], d.constraint_geometry[ic], d.constraint_param[ic],
            d.constraint_input[ic], qb, d.q[nt], d.lam[ic], exact,
            d.con_phi[ic], d.con_bb[ic], d.con_bt[ic], d.con_k[ic], d.s3, d.s4, d.s33,
        )  # fmt: skip
        if d.constraint_has_load[ic]:
            input_load(
                kind, d.constraint_X0[ic], d.constraint_axes[ic], d.constraint_geometry[ic],
                d.constraint_input[ic, 0], qb, d.q[nt], d.con_load[ic],
            )  # fmt: skip
        if with_bias:
            vb = d.v_ground if nb < 0 else d.v[nb]
            bias(
                kind, d.constraint_X0[ic], d.constraint_axes[ic], d.constraint_geometry[ic], d.constraint_param[ic],
                d.constraint_input[ic], qb, d.q[nt], vb, d.v[nt], d.s3, d.s4, d.s33, d.con_phi[ic],
            )  # fmt: skip


@njit(inline=True)
def constraint_outputs(d, initial):
    """Joint outputs (``constraint_output``) from the state: revolute azimuth / hinge angle /
    slider displacement, rate and acceleration.  ``initial``: at t = 0, where Kynema's revolute
    output stays zero until the first step (hinges and sliders are set)."""
    for ic in range(d.constraint_kind.shape[0]):
        if d.constraint_has_output[ic] == 0:
            continue
        nb = d.constraint_node[ic, 0]
        nt = d.constraint_node[ic, 1]
        g = nb < 0
        output(
            d.constraint_kind[ic], d.constraint_X0[ic], d.constraint_axes[ic], d.constraint_geometry[ic],
            d.q_ground if g else d.q[nb], d.q[nt], d.v_ground if g else d.v[nb], d.v[nt],
            d.v_ground if g else d.vd[nb], d.vd[nt], initial, d.s3, d.constraint_output[ic],
        )  # fmt: skip


@njit
def constraint_reaction(d, c, out):
    """``out`` (6,): force [N] and torque [N m] constraint ``c`` exerts on its target body, world
    frame, torque about the joint point on that body (``x + R(r) d``; the node for Kynema's
    kinds): ``−B_tᵀλ`` from the gradient ``con_bt`` of the last :func:`constraint_terms`
    (with exact gradients), shifted to the point."""
    n_rows = d.constraint_n_rows[c]
    nt = d.constraint_node[c, 1]
    for j in range(6):
        s = 0.0
        for i in range(n_rows):
            s += d.con_bt[c, i, j] * d.lam[c, i]
        out[j] = -s
    lever = d.s3[0]
    rotate_vector(d.q[nt, 3:7], d.constraint_geometry[c, 1, 0], lever)
    f0, f1, f2 = out[0], out[1], out[2]
    out[3] -= lever[1] * f2 - lever[2] * f1
    out[4] -= lever[2] * f0 - lever[0] * f2
    out[5] -= lever[0] * f1 - lever[1] * f0
