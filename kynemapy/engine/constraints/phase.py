"""The constraint phases of the step: every constraint's terms, outputs and reaction.

Each loops over the constraint table and calls :mod:`.dispatch`'s Kynema kinds per constraint,
and the two-body joint unit (:mod:`.body_phase`) for the other kinds when there are any;
nothing outside this package branches on the kind.  The kind is a run-time code: every model runs
the same compiled loops (one compiled engine for every model, docs/engine.md).  Each loop
is a compiled function of its own (not inlined into the Newton loop): called once per
Newton iteration it costs a few tens of nanoseconds, and keeping the kinds' code out of the
entry point halves its compilation.  They write the workspace fields ``con_phi``,
``con_bb``, ``con_bt``, ``con_k``, ``con_load`` of :class:`~kynemapy.engine.fields.Data`,
which the assembly scatters without knowing the kinds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kynemapy._jit import njit
from kynemapy.engine.constraints.joint_unit import OUTPUTS, TERMS
from kynemapy.engine.constraints.kynema_dispatch import bias_kynema, evaluate_kynema, input_load_kynema, output_kynema
from kynemapy.engine.unit_call import BODY_JOINTS, call_unit, load_field
from kynemapy.math.quaternion import rotate_vector
from kynemapy.model.kinds import BALL_JOINT


class Kinds(NamedTuple):
    """``Data.kinds``: the kind code of every constraint (``kind`` (C,) int64, :mod:`kynemapy.model.kinds`)."""

    kind: np.ndarray


@njit
def constraint_phase(data_at, data_ref, exact, with_bias, gp):
    """Φ (or, ``with_bias``, the bias γ of Φ̈ = B v̇ + γ), gradients ``B_b``, ``B_t``, K^Φ (``exact``:
    the exact gradients too) and the input loads of every constraint, into the workspace fields
    ``con_phi``, ``con_bb``, ``con_bt``, ``con_k``, ``con_load`` of the
    :class:`~kynemapy.engine.fields.Data` at address ``data_at`` (``data_ref`` its type; fields:
    see :mod:`kynemapy.engine.fields`).  ``Data.kinds`` (:class:`Kinds`) holds the kind codes;
    the two-body joints are the two-body joint unit's (``Data.units``,
    :func:`~kynemapy.engine.constraints.body_phase.body_joint_phase`), called when there are any;
    it reads the last joint outputs ``constraint_output`` (C, 3), the rotation blocks of 𝒯
    ``tangent`` (N, 3, 3) and γ′ ``gp`` [1/s] for the drives of hinges and sliders.  Returns 0.

    The engine's constraint unit (:mod:`kynemapy.engine.unit_call`, ``CONSTRAINTS``): compiled
    apart from the Newton loop, called through its address with five scalars, and not inlined
    anywhere (see :func:`kynemapy.engine.elements.element_phase`)."""
    kinds = load_field(data_at, data_ref, "kinds")
    has_load = load_field(data_at, data_ref, "constraint_has_load")
    cnode = load_field(data_at, data_ref, "constraint_node")
    cX0 = load_field(data_at, data_ref, "constraint_X0")
    axes = load_field(data_at, data_ref, "constraint_axes")
    geom = load_field(data_at, data_ref, "constraint_geometry")
    param = load_field(data_at, data_ref, "constraint_param")
    cin = load_field(data_at, data_ref, "constraint_input")
    q = load_field(data_at, data_ref, "q")
    v = load_field(data_at, data_ref, "v")
    lam = load_field(data_at, data_ref, "lam")
    q_ground = load_field(data_at, data_ref, "q_ground")
    v_ground = load_field(data_at, data_ref, "v_ground")
    phi = load_field(data_at, data_ref, "con_phi")
    bb = load_field(data_at, data_ref, "con_bb")
    bt = load_field(data_at, data_ref, "con_bt")
    k = load_field(data_at, data_ref, "con_k")
    load = load_field(data_at, data_ref, "con_load")
    s3 = load_field(data_at, data_ref, "s3")
    s4 = load_field(data_at, data_ref, "s4")
    s33 = load_field(data_at, data_ref, "s33")
    kind = kinds.kind
    body = False
    for ic in range(kind.shape[0]):
        if kind[ic] >= BALL_JOINT:
            body = True
            continue
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        qb = q_ground if nb < 0 else q[nb]
        evaluate_kynema(
            kind[ic], cX0[ic], axes[ic], geom[ic], param[ic], cin[ic], qb, q[nt], lam[ic], exact,
            phi[ic], bb[ic], bt[ic], k[ic], s3, s4, s33,
        )  # fmt: skip
        if has_load[ic]:
            input_load_kynema(kind[ic], cX0[ic], axes[ic], geom[ic], cin[ic, 0], qb, q[nt], load[ic])
        if with_bias:
            vb = v_ground if nb < 0 else v[nb]
            bias_kynema(
                kind[ic], cX0[ic], axes[ic], geom[ic], param[ic], cin[ic], qb, q[nt], vb, v[nt], s3, s4, s33,
                phi[ic],
            )  # fmt: skip
    if body:  # (has_output, vd: unused by TERMS, given as arrays of their types)
        _body_joints(data_at, data_ref, TERMS, has_load, v, exact, with_bias, gp)
    return 0


@njit(inline=True)
def _body_joints(data_at, data_ref, what, has_output, vd, exact, with_bias, gp):
    """The two-body joint unit's call (``what``: ``TERMS`` from :func:`constraint_phase`,
    ``OUTPUTS`` from :func:`constraint_outputs`), its arguments read from the Data here, where
    they are used (read once before the loop over Kynema's kinds, the ~25 array descriptors the
    call passes were copied onto the stack at every call: about 470 instructions a heavy-top
    step, for a call a model without such joints never makes).  ``has_output`` and ``vd``: the
    caller's (``TERMS`` does not read them: arrays of their types)."""
    call_unit(
        load_field(data_at, data_ref, "units"), BODY_JOINTS,
        (what, load_field(data_at, data_ref, "kinds").kind, load_field(data_at, data_ref, "constraint_has_load"),
         has_output, load_field(data_at, data_ref, "constraint_node"),
         load_field(data_at, data_ref, "constraint_X0"), load_field(data_at, data_ref, "constraint_axes"),
         load_field(data_at, data_ref, "constraint_geometry"), load_field(data_at, data_ref, "constraint_param"),
         load_field(data_at, data_ref, "constraint_input"), load_field(data_at, data_ref, "q"),
         load_field(data_at, data_ref, "v"), vd, load_field(data_at, data_ref, "lam"),
         load_field(data_at, data_ref, "q_ground"), load_field(data_at, data_ref, "v_ground"),
         load_field(data_at, data_ref, "con_phi"), load_field(data_at, data_ref, "con_bb"),
         load_field(data_at, data_ref, "con_bt"), load_field(data_at, data_ref, "con_k"),
         load_field(data_at, data_ref, "con_load"), load_field(data_at, data_ref, "constraint_output"),
         exact, with_bias, load_field(data_at, data_ref, "tangent"), gp),
    )  # fmt: skip


@njit
def constraint_outputs(data_at, data_ref, initial):
    """Joint outputs ``constraint_output`` (C, 3) of the :class:`~kynemapy.engine.fields.Data` at
    address ``data_at`` (``data_ref`` its type) from its state: revolute azimuth / hinge angle /
    slider displacement, rate and acceleration.  ``initial``: at t = 0, where Kynema's revolute
    output stays zero until the first step (hinges and sliders are set).

    Its arrays are read here from the Data, as the phases read theirs, and the Newton loop calls
    it only when a constraint has outputs (a heavy-top step, which has none, spent about 500
    instructions here for nothing)."""
    kind = load_field(data_at, data_ref, "kinds").kind
    has_output = load_field(data_at, data_ref, "constraint_has_output")
    cnode = load_field(data_at, data_ref, "constraint_node")
    cX0 = load_field(data_at, data_ref, "constraint_X0")
    axes = load_field(data_at, data_ref, "constraint_axes")
    geom = load_field(data_at, data_ref, "constraint_geometry")
    q = load_field(data_at, data_ref, "q")
    v = load_field(data_at, data_ref, "v")
    vd = load_field(data_at, data_ref, "vd")
    q_ground = load_field(data_at, data_ref, "q_ground")
    v_ground = load_field(data_at, data_ref, "v_ground")
    s3 = load_field(data_at, data_ref, "s3")
    out = load_field(data_at, data_ref, "constraint_output")
    body = False
    for ic in range(kind.shape[0]):
        if has_output[ic] == 0:
            continue
        if kind[ic] >= BALL_JOINT:
            body = True
            continue
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        g = nb < 0
        output_kynema(
            kind[ic], cX0[ic], axes[ic], geom[ic], q_ground if g else q[nb], q[nt], v_ground if g else v[nb],
            v[nt], v_ground if g else vd[nb], vd[nt], initial, s3, out[ic],
        )  # fmt: skip
    if body:
        _body_joints(data_at, data_ref, OUTPUTS, has_output, vd, False, False, 0.0)


@njit
def constraint_reaction(c, cnode, geom, n_rows, q, lam, bt, lever, out):
    """``out`` (6,): force [N] and torque [N m] constraint ``c`` exerts on its target body, world
    frame, torque about the joint point on that body (``x + R(r) d``; the node for Kynema's
    kinds): ``−B_tᵀλ`` from the gradient ``bt`` of the last :func:`constraint_phase` (with exact
    gradients), shifted to the point.  ``lever`` (3,) scratch."""
    nt = cnode[c, 1]
    for j in range(6):
        s = 0.0
        for i in range(n_rows[c]):
            s += bt[c, i, j] * lam[c, i]
        out[j] = -s
    rotate_vector(q[nt, 3:7], geom[c, 1, 0], lever)
    f0, f1, f2 = out[0], out[1], out[2]
    out[3] -= lever[1] * f2 - lever[2] * f1
    out[4] -= lever[2] * f0 - lever[0] * f2
    out[5] -= lever[0] * f1 - lever[1] * f0
