"""The URDF reader's types: the returned :class:`URDFRobot`, the parsed but not enforced
:class:`JointLimit`, :class:`JointDynamics` and :class:`Collision`, and :class:`URDFError`,
:class:`URDFWarning`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kynemapy.model.builder import ModelBuilder
from kynemapy.model.errors import ModelError

#: the joint types of URDF
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: joint types beyond URDF's that pybullet reads and so does :func:`load_urdf`
EXTENSION_JOINT_TYPES = ("spherical",)
#: the collision geometries read (``mesh``: by file name only)
GEOMETRIES = ("box", "sphere", "cylinder", "capsule", "mesh")


class URDFWarning(UserWarning):
    """:func:`load_urdf` changed something the file gives (a repaired inertia)."""


class URDFError(ModelError):
    """A URDF document that cannot be read or built.

    The message starts with ``<source>, line <line>: <element>:`` where a line applies.

    Parameters
    ----------
    message : str
        What is wrong.
    source : str
        The file name, or ``"<string>"``.
    line : int or None
        The 1-based line of the element (None where no line applies).
    element : str or None
        The element, e.g. ``<joint name="elbow">`` (None where none applies).

    Attributes
    ----------
    source : str
        The file name, or ``"<string>"``.
    line : int or None
        The 1-based line of the element.
    element : str or None
        The element the problem was found in.
    """

    def __init__(self, message: str, source: str = "<string>", line: int | None = None, element: str | None = None):
        where = f"{source}, line {line}" if line is not None else str(source)
        what = f" {element}:" if element else ""
        super().__init__(f"{where}:{what} {message}")
        self.source = source
        self.line = line
        self.element = element


@dataclass(frozen=True)
class JointLimit:
    """A joint's ``<limit>``, parsed; its ``lower`` and ``upper`` enforced as compliant limits
    only with ``load_urdf(..., joint_limits=True)``.

    Attributes
    ----------
    lower : float or None
        Lower position limit [rad or m] (None: not given).
    upper : float or None
        Upper position limit [rad or m] (None: not given).
    effort : float
        Largest torque or force [N m or N].
    velocity : float
        Largest speed [rad/s or m/s].
    """

    lower: float | None
    upper: float | None
    effort: float
    velocity: float


@dataclass(frozen=True)
class JointDynamics:
    """A joint's ``<dynamics>``, parsed; applied as the joint's damper and Coulomb friction only
    with ``load_urdf(..., joint_dynamics=True)``.

    Attributes
    ----------
    damping : float
        Viscous damping [N m s/rad or N s/m].
    friction : float
        Static friction [N m or N].
    """

    damping: float
    friction: float


@dataclass(frozen=True)
class Collision:
    """One ``<collision>`` of a link (a contact shape with ``load_urdf(..., collision_shapes=True)``).

    Attributes
    ----------
    geometry : str
        ``"box"``, ``"sphere"``, ``"cylinder"``, ``"capsule"`` or ``"mesh"``.
    size : dict[str, object]
        The geometry's attributes as numbers: box ``size`` (3,) [m]; sphere ``radius`` [m];
        cylinder and capsule ``radius``, ``length`` [m]; mesh ``filename`` (str) and
        ``scale`` (3,) [-].
    origin : (3,) ndarray [m]
        Origin of the geometry in the link frame (``<origin xyz>``).
    rotation : (3, 3) ndarray [-]
        Geometry-to-link rotation (from ``<origin rpy>``).
    name : str or None
        The ``name`` attribute, if any.
    """

    geometry: str
    size: dict[str, object]
    origin: np.ndarray
    rotation: np.ndarray
    name: str | None = None


@dataclass
class URDFRobot:
    """A robot read from URDF: its model builder and the maps from URDF names to kynemapy ids.

    Attributes
    ----------
    name : str
        The ``<robot name>``.
    builder : ModelBuilder
        The model, ready for :meth:`~kynemapy.ModelBuilder.build` (more items may be added first).
    root : str
        The root link.
    link_node : dict[str, int]
        Link name -> node id of its body (links merged by fixed joints share their parent's
        node; a massless root fixed to the ground maps to :data:`kynemapy.GROUND`).
    link_frames : dict[str, tuple[ndarray, ndarray]]
        Link name -> world position (3,) [m] and link-to-world rotation (3, 3) of the link
        frame at the zero configuration (all joint positions 0), the model's reference.
    link_mass : dict[str, float]
        Link name -> the mass of its own ``<inertial>`` [kg] (0 if none).
    joint_id : dict[str, int]
        Joint name -> constraint id, for revolute, continuous, prismatic, planar and unmerged
        fixed joints (merged fixed and floating joints have none).
    joint_type : dict[str, str]
        Joint name -> URDF type.
    joint_parent : dict[str, str]
        Joint name -> parent link.
    joint_child : dict[str, str]
        Joint name -> child link.
    joint_points : dict[str, ndarray]
        Joint name -> joint origin (3,) [m], world frame at the zero configuration.
    joint_axes : dict[str, ndarray]
        Joint name -> unit axis (3,), world frame at the zero configuration (a planar
        joint's normal).  :meth:`kynemapy.Simulation.joint_output` of ``joint_id[name]`` gives
        the URDF joint position (0 at the zero configuration) about or along this axis.
    joint_limits : dict[str, JointLimit]
        Joint name -> its ``<limit>``; parsed, enforced (compliant) only with ``joint_limits=True``.
    joint_dynamics : dict[str, JointDynamics]
        Joint name -> its ``<dynamics>``; parsed, applied only with ``load_urdf(..., joint_dynamics=True)``.
    collisions : dict[str, list[Collision]]
        Link name -> its collision geometry, as parsed.
    collision_shapes : dict[str, list[int]]
        Link name -> the ids of the contact shapes made from its geometry (with
        ``load_urdf(..., collision_shapes=True)``; empty otherwise).
    root_joint : int or None
        Constraint id of the weld of the root body to the ground (None: floating, or a
        massless root that is the ground itself).
    initial_positions : dict[str, float]
        The joint positions the bodies start at [rad or m] (as given to :func:`load_urdf`).
    ignored : list[str]
        The ignored elements met (e.g. ``"transmission"``, ``"mimic"``, ``"geometry <plane>"``), once each.
    repaired_inertia : dict[str, tuple[ndarray, ndarray]]
        With ``repair_inertia=True``: first link of a repaired body -> its principal moments
        of inertia (3,) [kg m²] before and after the repair.
    """

    name: str
    builder: ModelBuilder
    root: str
    link_node: dict[str, int] = field(default_factory=dict)
    link_frames: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    link_mass: dict[str, float] = field(default_factory=dict)
    joint_id: dict[str, int] = field(default_factory=dict)
    joint_type: dict[str, str] = field(default_factory=dict)
    joint_parent: dict[str, str] = field(default_factory=dict)
    joint_child: dict[str, str] = field(default_factory=dict)
    joint_points: dict[str, np.ndarray] = field(default_factory=dict)
    joint_axes: dict[str, np.ndarray] = field(default_factory=dict)
    joint_limits: dict[str, JointLimit] = field(default_factory=dict)
    joint_dynamics: dict[str, JointDynamics] = field(default_factory=dict)
    collisions: dict[str, list[Collision]] = field(default_factory=dict)
    collision_shapes: dict[str, list[int]] = field(default_factory=dict)
    root_joint: int | None = None
    initial_positions: dict[str, float] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    repaired_inertia: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def total_mass(self) -> float:
        """Sum of the links' masses [kg]."""
        return float(sum(self.link_mass.values()))
