"""Robots from URDF: :func:`load_urdf` reads a URDF file (or string) into a :class:`kynemapy.ModelBuilder`.

What becomes what
-----------------
* ``<link>`` with ``<inertial>``: a rigid body, one node at the link's centre of mass, its
  reference orientation the link frame's world orientation at the zero configuration, its
  inertia the URDF tensor (given about the centre of mass in the ``<inertial><origin rpy>``
  frame) rotated into the link frame.
* ``fixed`` joints: by default the child link is merged into its parent's body (total mass,
  combined centre of mass, inertia by the parallel-axis theorem); with ``merge_fixed=False``
  every link with mass is its own body and a fixed joint is a weld joint.
* ``revolute`` and ``continuous``: :meth:`~kynemapy.ModelBuilder.add_hinge_joint`;
  ``prismatic``: :meth:`~kynemapy.ModelBuilder.add_slider_joint`; ``planar``:
  :meth:`~kynemapy.ModelBuilder.add_planar_joint` (its ``<axis>`` is the plane's normal);
  ``floating``: no joint, the child body is free.  pybullet's ``spherical`` (not URDF's):
  :meth:`~kynemapy.ModelBuilder.add_ball_joint`.
* The root link is welded to :data:`kynemapy.GROUND` (``floating_base=True``: free).  A
  massless root fixed to the ground is the ground itself (its children's joints attach to
  :data:`kynemapy.GROUND`).  A moving body without mass is an error naming its links, and so
  is an inertia no rigid body has (singular, or against ``I1 + I2 >= I3``) unless
  ``repair_inertia=True`` lifts it, with a :class:`URDFWarning`.

Parsed, applied on request
--------------------------
``<limit lower upper effort velocity>`` and ``<dynamics damping friction>`` are read into
:attr:`URDFRobot.joint_limits` and :attr:`URDFRobot.joint_dynamics`.  By default the joints
of the model are free over their whole range; ``load_urdf(..., joint_limits=True,
limit_stiffness=k_l)`` makes ``lower`` and ``upper`` compliant travel limits (a one-sided
spring-damper, docs/joints.md); velocity limits are not enforced.
``load_urdf(..., joint_dynamics=True)`` applies the damping and friction (the joint
drives of docs/joints.md); an effort limit applies to a servo given it,
``robot.builder.set_servo(robot.joint_id[name], kp, kd, limit=robot.joint_limits[name].effort)``.
``<collision>`` geometry (box, sphere, cylinder, capsule; meshes by file name only; other
simulators' geometries by their attributes as text) is read into :attr:`URDFRobot.collisions`
and not used for contact.  ``<visual>``,
``<mimic>``, ``<safety_controller>``, ``<calibration>``, ``<transmission>``, ``<gazebo>`` and
``<material>`` are ignored (a mimic joint moves freely).
URDF has no gravity: it is ``load_urdf``'s ``gravity`` (default ``(0, 0, -9.81)`` m/s², z up).

Units: SI (m, kg, kg m², rad, N, N m), as URDF's.
"""

from kynemapy.io.urdf.load import load_urdf
from kynemapy.io.urdf.parse import rpy_matrix
from kynemapy.io.urdf.robot import (
    EXTENSION_JOINT_TYPES,
    GEOMETRIES,
    JOINT_TYPES,
    Collision,
    JointDynamics,
    JointLimit,
    URDFError,
    URDFRobot,
    URDFWarning,
)

# the public names are documented, pickled and shown as kynemapy.io.urdf's (one description each
# in the API reference, which also lists three of them under kynemapy.io)
for _public in (Collision, JointDynamics, JointLimit, URDFError, URDFRobot, URDFWarning, load_urdf, rpy_matrix):
    _public.__module__ = __name__
del _public

__all__ = [
    "EXTENSION_JOINT_TYPES",
    "GEOMETRIES",
    "JOINT_TYPES",
    "Collision",
    "JointDynamics",
    "JointLimit",
    "URDFError",
    "URDFRobot",
    "URDFWarning",
    "load_urdf",
    "rpy_matrix",
]
