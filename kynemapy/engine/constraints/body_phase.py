"""The two-body joints' part of the constraint phases: the engine's two-body joint unit.

:func:`body_joint_phase` does for the constraints of the two-body kinds (``kind >=
BALL_JOINT``) what :func:`~kynemapy.engine.constraints.phase.constraint_phase` and
:func:`~kynemapy.engine.constraints.phase.constraint_outputs` do for Kynema's kinds.  It is a
unit (:mod:`kynemapy.engine.unit_call`): compiled on its own the first time a model has a
two-body joint, and called by those phases through its address; a model without one (every
Kynema model) compiles none of this code.
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.body_joints import (
    body_joint,
    body_joint_bias,
    body_joint_output,
    cone_load,
    drive_load,
    input_load,
)
from kynemapy.engine.constraints.joint_unit import OUTPUTS, has_drive
from kynemapy.engine.constraints.kynema_dispatch import clear, clear_k
from kynemapy.model.kinds import BALL_JOINT, DRIVEN_LOAD, HINGE_JOINT, SLIDER_JOINT


@njit(inline=True)
def body_joints(
    what, kind, has_load, has_output, cnode, cX0, axes, geom, param, cin, q, v, vd, lam, q_ground, v_ground,
    phi, bb, bt, k, load, out, exact, with_bias, tangent, gp, drives,
):  # fmt: skip
    """For every constraint of a two-body kind: with ``what`` :data:`~.joint_unit.TERMS`, Φ
    (``with_bias``: the bias γ of Φ̈ = B v̇ + γ), ``B_b``, ``B_t``, K^Φ (``exact``: the exact
    gradients too) and the input load, into ``phi``, ``bb``, ``bt``, ``k``, ``load``; with
    :data:`~.joint_unit.OUTPUTS`, the hinge and slider outputs into ``out`` (C, 3).  The arrays are the
    :class:`~kynemapy.engine.fields.Data` fields of the same meaning (``kind`` (C,) the kind
    codes).  A hinge or slider with a drive (spring, damper, friction, servo) has its total
    torque or force as its load (:func:`~.body_joints.drive_load`: the last outputs ``out``
    continue the hinge angle; ``tangent`` (N, 3, 3) the rotation blocks of 𝒯 and ``gp`` γ′ [1/s]
    give the damping part of its exact tangent), a ball joint with a cone limit the limit's
    torque (:func:`~.body_joints.cone_load`).  ``drives`` None: the variant without drives and
    cone limits (pruned before typing: none of their code is compiled), where every load is the
    joint's input alone; the engine's entry never runs it on a model with a drive
    (:func:`~.joint_unit.drives_missing`).  Returns 0."""
    for ic in range(kind.shape[0]):
        kc = kind[ic]
        if kc < BALL_JOINT:
            continue
        nb = cnode[ic, 0]
        nt = cnode[ic, 1]
        g = nb < 0
        qb = q_ground if g else q[nb]
        if what == OUTPUTS:
            if has_output[ic] != 0 and (kc == HINGE_JOINT or kc == SLIDER_JOINT):
                body_joint_output(
                    kc, cX0[ic], geom[ic], qb, q[nt], v_ground if g else v[nb], v[nt], v_ground if g else vd[nb],
                    vd[nt], out[ic],
                )  # fmt: skip
            continue
        clear(phi[ic], bb[ic], bt[ic], k[ic], exact)
        body_joint(
            kc,
            cX0[ic],
            axes[ic],
            geom[ic],
            param[ic],
            cin[ic],
            qb,
            q[nt],
            lam[ic],
            exact,
            phi[ic],
            bb[ic],
            bt[ic],
            k[ic],
        )
        if has_load[ic]:
            if drives is None:  # the variant without drives: an input load only (pruned before typing)
                input_load(kc, cX0[ic], geom[ic], cin[ic, 0], qb, q[nt], load[ic])
            else:
                # a driven joint (has_load 2) has its drive's tangent in k in both modes (Kynema's: k
                # holds only that); a drive first given between steps, only with the exact tangent
                tangent_k = exact or has_load[ic] == DRIVEN_LOAD
                if not exact and has_load[ic] == DRIVEN_LOAD:
                    clear_k(k[ic])
                if (kc == HINGE_JOINT or kc == SLIDER_JOINT) and has_drive(axes[ic], cin[ic]):
                    tb = tangent[nt] if g else tangent[nb]  # (the ground's block is never used)
                    drive_load(
                        kc, cX0[ic], axes[ic], geom[ic], cin[ic], qb, q[nt], v_ground if g else v[nb], v[nt],
                        out[ic, 0], tangent_k, exact, tb, tangent[nt], gp, load[ic], k[ic],
                    )  # fmt: skip
                elif kc == BALL_JOINT and has_load[ic] == DRIVEN_LOAD:  # its cone limit
                    tb = tangent[nt] if g else tangent[nb]
                    cone_load(
                        axes[ic], geom[ic], qb, q[nt], v_ground if g else v[nb], v[nt], tangent_k, tb, tangent[nt],
                        gp, load[ic], k[ic],
                    )  # fmt: skip
                else:
                    input_load(kc, cX0[ic], geom[ic], cin[ic, 0], qb, q[nt], load[ic])
        if with_bias:
            body_joint_bias(
                kc, cX0[ic], axes[ic], geom[ic], param[ic], qb, q[nt], v_ground if g else v[nb], v[nt], phi[ic]
            )
    return 0


@njit
def body_joint_phase(
    what, kind, has_load, has_output, cnode, cX0, axes, geom, param, cin, q, v, vd, lam, q_ground, v_ground,
    phi, bb, bt, k, load, out, exact, with_bias, tangent, gp,
):  # fmt: skip
    """The engine's two-body joint unit (``BODY_JOINTS``) for models without drives and cone
    limits: :func:`body_joints` with neither compiled in (about 2.5 s less of first
    compilation).  Returns 0."""
    return body_joints(
        what, kind, has_load, has_output, cnode, cX0, axes, geom, param, cin, q, v, vd, lam, q_ground, v_ground,
        phi, bb, bt, k, load, out, exact, with_bias, tangent, gp, None,
    )  # fmt: skip


@njit
def body_joint_phase_full(
    what, kind, has_load, has_output, cnode, cX0, axes, geom, param, cin, q, v, vd, lam, q_ground, v_ground,
    phi, bb, bt, k, load, out, exact, with_bias, tangent, gp,
):  # fmt: skip
    """:func:`body_joints` as the full two-body joint unit (``BODY_JOINTS_FULL``): drives
    (spring, damper, friction, servo) and cone limits included; compiled only for a model that
    has one, or when a servo is first given between steps.  Returns 0."""
    return body_joints(
        what, kind, has_load, has_output, cnode, cX0, axes, geom, param, cin, q, v, vd, lam, q_ground, v_ground,
        phi, bb, bt, k, load, out, exact, with_bias, tangent, gp, True,
    )  # fmt: skip
