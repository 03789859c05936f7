"""One constraint of any kind.

:func:`evaluate` (Φ, gradients, K^Φ), :func:`bias` (velocity part of Φ̈), :func:`input_load`
(the residual of a joint's torque or force input) and :func:`output` (joint angle or
displacement, rate, acceleration).  Each calls its ``*_kynema`` part
(:mod:`.kynema_dispatch`, the branches on Kynema's kind code) for Kynema's eight kinds and the
two-body joints' kernels for the others.  The engine's phases call the Kynema parts and the
two-body joint unit (:mod:`.body_phase`) instead; these take every kind in one call (the
kernels' own tests).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.constraints.body_joints import body_joint, body_joint_bias, body_joint_output
from kynemapy.engine.constraints.body_joints import input_load as body_joint_load
from kynemapy.engine.constraints.kynema_dispatch import (
    bias_kynema,
    clear,
    evaluate_kynema,
    input_load_kynema,
    output_kynema,
)
from kynemapy.model.kinds import BALL_JOINT, HINGE_JOINT, SLIDER_JOINT


@njit(inline=True)
def evaluate(kind, X0, axes, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k, s3, s4, s33):
    """Residual Φ (6,), gradients ``B_b``, ``B_t`` (6, 6) and K^Φ blocks ``k`` (2, 2, 6, 6).

    ``k[a, b]`` is ∂(B_aᵀλ)/∂q_b (node 0 the base, 1 the target; rows and columns
    (u, θ) with spatial rotation increments, as the columns of B), plus the derivative
    of the residual of a joint's input (revolute, hinge torque; slider force).  Kynema's
    kinds only have rotation-rotation terms and write ``k[:, :, 3:, 3:]``.

    ``with_k`` True: the exact gradients and K^Φ (``geometric_stiffness`` mode);
    False: Kynema's gradients, no K^Φ (``k`` is then left untouched).  Φ, B and (with
    ``with_k``) K^Φ are zeroed first; unused rows stay zero.  ``qb`` is ignored by
    one-node kinds; for a joint to the ground it is the identity (``ws.q_ground``).
    ``geom`` (2, 4, 3) and ``param`` are the two-body joints' geometry and length (or a
    universal joint's cos α), ``axes`` Kynema's axes or the row list of a point-on-line,
    point-on-plane or generic joint (:mod:`.body_joints`); the two-body joints have no Kynema
    variant and use their exact gradient in both modes.  Scratch: ``s3`` (>= 6, 3), ``s4``
    (>= 5, 4), ``s33`` (>= 3, 3, 3).

    Inlined into its callers, as are the three kind kernels it calls (one call site
    each, with the variant flags computed from ``kind``): a real call would pass
    about a dozen array descriptors, which costs more than a whole joint evaluation.
    """
    if kind >= BALL_JOINT:
        clear(phi, bb, bt, k, with_k)
        body_joint(kind, X0, axes, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k)
    else:
        evaluate_kynema(kind, X0, axes, geom, param, inputs, qb, qt, lam, with_k, phi, bb, bt, k, s3, s4, s33)


@njit
def bias(kind, X0, axes, geom, param, inputs, qb, qt, vb, vt, s3, s4, s33, gamma):
    """Velocity part γ (6,) of Φ̈ for a two-node constraint (zero for one-node kinds).

    Two-body joints (``geom``, ``param``: their geometry) take ``qb``, ``vb`` of the ground
    (identity, zero) when their base is the ground.
    """
    if kind >= BALL_JOINT:
        body_joint_bias(kind, X0, axes, geom, param, qb, qt, vb, vt, gamma)
    else:
        bias_kynema(kind, X0, axes, geom, param, inputs, qb, qt, vb, vt, s3, s4, s33, gamma)


@njit
def input_load(kind, X0, axes, geom, value, qb, qt, out):
    """Residual (2, 6) of a joint's input on its base (``out[0]``) and target (``out[1]``) node.

    Kynema's revolute joint: ``τ R(r_t) a0`` on the target's moment rows (a brake torque);
    hinge: torque, slider: force (see :func:`~.body_joints.input_load`).  Other kinds: zeros.
    """
    if kind >= BALL_JOINT:
        body_joint_load(kind, X0, geom, value, qb, qt, out)
    else:
        input_load_kynema(kind, X0, axes, geom, value, qb, qt, out)


@njit
def output(kind, X0, axes, geom, qb, qt, vb, vt, vdb, vdt, initial, s3, out):
    """Revolute: azimuth, speed, acceleration about the axis; hinge: relative angle, rate,
    acceleration; slider: displacement, rate, acceleration (``out`` (3,)); others: untouched.
    ``initial`` (t = 0): Kynema's revolute output stays zero until the first step."""
    if kind == HINGE_JOINT or kind == SLIDER_JOINT:
        body_joint_output(kind, X0, geom, qb, qt, vb, vt, vdb, vdt, out)
    else:
        output_kynema(kind, X0, axes, geom, qb, qt, vb, vt, vdb, vdt, initial, s3, out)
