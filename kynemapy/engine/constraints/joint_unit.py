"""The two-body joint unit's interface, without its kernels: what the unit computes
(:data:`TERMS`, :data:`OUTPUTS`), where a hinge's or slider's drive parameters live, and whether
a model needs the unit's full variant (:func:`drives_missing`).

The engine's Newton loop and constraint phase need these for every model; the unit itself
(:mod:`.body_phase`, with the joints' kernels of :mod:`.body_joints`) is imported only for a
model that has a two-body joint (:mod:`kynemapy.engine.units`).
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.engine.unit_call import BODY_JOINTS, BODY_JOINTS_FULL
from kynemapy.model.kinds import DRIVEN_LOAD, HINGE_JOINT, SLIDER_JOINT

#: what :func:`~.body_phase.body_joint_phase` computes
TERMS = 0  #: Φ (or the bias γ), gradients, K^Φ and input loads
OUTPUTS = 1  #: joint outputs (hinge angle, slider displacement: value, rate, acceleration)

#: where a hinge's or slider's drive parameters live: the passive ones in the model's
#: ``constraint_axes[c]`` (unused by these kinds otherwise), the servo's in its inputs
DRIVE_STIFFNESS = (0, 0)  #: axes[0, 0]: spring stiffness k [N m/rad or N/m]
DRIVE_REST = (0, 1)  #: axes[0, 1]: spring rest position [rad or m]
DRIVE_DAMPING = (0, 2)  #: axes[0, 2]: damper (viscous friction) c [N m s/rad or N s/m]
DRIVE_FRICTION = (1, 0)  #: axes[1, 0]: Coulomb friction level F_c [N m or N]
DRIVE_FRICTION_RATE = (1, 1)  #: axes[1, 1]: its regularization rate v_s [rad/s or m/s], > 0
LIMIT_DAMPING = (1, 2)  #: axes[1, 2]: compliant limit's damping c_l [N m s/rad or N s/m]
LIMIT_LOWER = (2, 0)  #: axes[2, 0]: lower limit [rad or m]
LIMIT_UPPER = (2, 1)  #: axes[2, 1]: upper limit [rad or m]
LIMIT_STIFFNESS = (2, 2)  #: axes[2, 2]: compliant limit's stiffness k_l [N m/rad or N/m] (0: no limits)
SERVO_KP = 1  #: inputs[1]: servo position gain [N m/rad or N/m]
SERVO_KD = 2  #: inputs[2]: servo rate gain [N m s/rad or N s/m]
SERVO_POSITION = 3  #: inputs[3]: servo target position [rad or m]
SERVO_RATE = 4  #: inputs[4]: servo target rate [rad/s or m/s]
SERVO_FEEDFORWARD = 5  #: inputs[5]: servo feed-forward [N m or N], inside the limit
SERVO_LIMIT = 6  #: inputs[6]: servo effort limit [N m or N] (0: none)


@njit
def has_drive(axes, inputs):
    """Whether a hinge or slider has a spring, damper, Coulomb friction, limits or servo."""
    return (
        axes[0, 0] != 0.0
        or axes[0, 2] != 0.0
        or axes[1, 0] != 0.0
        or axes[2, 2] != 0.0
        or inputs[SERVO_KP] != 0.0
        or inputs[SERVO_KD] != 0.0
        or inputs[SERVO_FEEDFORWARD] != 0.0
    )


@njit
def drives_missing(units, kind, has_load, axes, cin):
    """Whether the two-body joint unit in ``units`` (int64, (N_UNITS,)) is the variant without
    drives (``BODY_JOINTS`` filled, ``BODY_JOINTS_FULL`` not) while a hinge or slider has a
    drive (a servo given between steps through the constraint inputs ``cin`` (C, 7)) or a joint
    is a driven one (``has_load`` 2): the engine then returns ``NEEDS_UNIT`` before any work."""
    if units[BODY_JOINTS] == 0 or units[BODY_JOINTS_FULL] != 0:
        return False
    for ic in range(kind.shape[0]):
        if has_load[ic] == DRIVEN_LOAD:
            return True
        if has_load[ic] != 0 and (kind[ic] == HINGE_JOINT or kind[ic] == SLIDER_JOINT) and has_drive(axes[ic], cin[ic]):
            return True
    return False
