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

Parsed but not enforced
-----------------------
``<limit lower upper effort velocity>`` and ``<dynamics damping friction>`` are read into
:attr:`URDFRobot.joint_limits` and :attr:`URDFRobot.joint_dynamics`, but kynemapy does not
yet enforce joint limits, effort or velocity limits, damping or friction: the joints of the
model are free over their whole range and undamped.  ``<collision>`` geometry (box, sphere,
cylinder, capsule; meshes by file name only; other simulators' geometries by their attributes
as text) is read into :attr:`URDFRobot.collisions` and not used for contact.  ``<visual>``,
``<mimic>``, ``<safety_controller>``, ``<calibration>``, ``<transmission>``, ``<gazebo>`` and
``<material>`` are ignored (a mimic joint moves freely).
URDF has no gravity: it is ``load_urdf``'s ``gravity`` (default ``(0, 0, -9.81)`` m/s², z up).

Units: SI (m, kg, kg m², rad, N, N m), as URDF's.
"""

from __future__ import annotations

import math
import os
import re
import warnings
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kynemapy.model.builder import GROUND, ModelBuilder
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
    """A joint's ``<limit>``, parsed but **not enforced** by kynemapy.

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
    """A joint's ``<dynamics>``, parsed but **not applied** by kynemapy.

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
    """One ``<collision>`` of a link, parsed but **not used** for contact.

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
        Joint name -> its ``<limit>``; parsed, **not enforced**.
    joint_dynamics : dict[str, JointDynamics]
        Joint name -> its ``<dynamics>``; parsed, **not applied**.
    collisions : dict[str, list[Collision]]
        Link name -> its collision geometry; parsed, **not used** for contact.
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
    root_joint: int | None = None
    initial_positions: dict[str, float] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    repaired_inertia: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def total_mass(self) -> float:
        """Sum of the links' masses [kg]."""
        return float(sum(self.link_mass.values()))


# ------------------------------------------------------------------------------------------ rotations
def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """URDF's rotation of roll, pitch, yaw [rad]: ``Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, y, z).

    Parameters
    ----------
    rpy : (3,) sequence of float [rad]
        Roll, pitch, yaw.

    Returns
    -------
    (3, 3) ndarray
        The rotation matrix (child-to-parent).
    """
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def axis_angle_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` [rad] about the unit ``axis`` (3,) (Rodrigues)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def matrix_quaternion(m: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    t = float(np.trace(m))
    if t > max(m[0, 0], m[1, 1], m[2, 2]):
        w = 0.5 * math.sqrt(1.0 + t)
        q = np.array([w, (m[2, 1] - m[1, 2]) / (4 * w), (m[0, 2] - m[2, 0]) / (4 * w), (m[1, 0] - m[0, 1]) / (4 * w)])
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 0.5 * math.sqrt(max(0.0, 1.0 + m[i, i] - m[j, j] - m[k, k]))
        q = np.empty(4)
        q[1 + i] = s
        q[0] = (m[k, j] - m[j, k]) / (4 * s)
        q[1 + j] = (m[j, i] + m[i, j]) / (4 * s)
        q[1 + k] = (m[k, i] + m[i, k]) / (4 * s)
    if q[0] < 0.0:
        q = -q
    return q / np.linalg.norm(q)


# ------------------------------------------------------------------------------------------ XML
#: an XML declaration after leading blank lines (expat refuses it; tinyxml, pybullet's parser, reads
#: it): it is blanked out, which keeps the line numbers
_DECLARATION_LATE = re.compile(rb"\A(\s+)(<\?xml[^>]*\?>)")
_DECLARATION_LATE_STR = re.compile(r"\A(\s+)(<\?xml[^>]*\?>)")


class _Document:
    """The parsed XML: the root element and each element's line."""

    def __init__(self, text: str | bytes, source: str) -> None:
        self.source = source
        self.lines: dict[ET.Element, int] = {}
        builder = ET.TreeBuilder()
        parser = xml.parsers.expat.ParserCreate()

        def start(tag: str, attrs: dict[str, str]) -> None:
            self.lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

        parser.StartElementHandler = start
        parser.EndElementHandler = builder.end
        parser.CharacterDataHandler = builder.data
        if isinstance(text, bytes):
            text = _DECLARATION_LATE.sub(lambda m: m.group(1) + b" " * len(m.group(2)), text, count=1)
        else:
            text = _DECLARATION_LATE_STR.sub(lambda m: m.group(1) + " " * len(m.group(2)), text, count=1)
        try:
            parser.Parse(text, True)
        except xml.parsers.expat.ExpatError as exc:
            raise URDFError(
                f"malformed XML: {xml.parsers.expat.errors.messages[exc.code]} (column {exc.offset + 1})",
                source,
                exc.lineno,
            ) from None
        self.root = builder.close()

    def describe(self, el: ET.Element) -> str:
        name = el.get("name")
        return f"<{el.tag} name={name!r}>" if name is not None else f"<{el.tag}>"

    def error(self, el: ET.Element, message: str, context: ET.Element | None = None) -> URDFError:
        what = self.describe(el)
        if context is not None and context is not el:
            what = f"{self.describe(context)} {what}"
        return URDFError(message, self.source, self.lines.get(el), what)

    def attr(self, el: ET.Element, key: str, context: ET.Element | None = None) -> str:
        value = el.get(key)
        if value is None:
            raise self.error(el, f"missing attribute {key!r}", context)
        return value

    def numbers(
        self,
        el: ET.Element,
        key: str,
        n: int,
        default: Sequence[float] | None = None,
        context: ET.Element | None = None,
    ) -> np.ndarray:
        value = el.get(key)
        if value is None:
            if default is None:
                raise self.error(el, f"missing attribute {key!r}", context)
            return np.array(default, dtype=float)
        try:
            out = np.array([float(v) for v in value.split()], dtype=float)
        except ValueError:
            out = np.empty(0)
        if out.shape != (n,) or not np.all(np.isfinite(out)):
            raise self.error(el, f"attribute {key}={value!r} must be {n} finite number{'s' * (n > 1)}", context)
        return out

    def number(
        self, el: ET.Element, key: str, default: float | None = None, context: ET.Element | None = None
    ) -> float:
        return float(self.numbers(el, key, 1, None if default is None else (default,), context)[0])

    def origin(self, parent: ET.Element) -> tuple[np.ndarray, np.ndarray]:
        """The ``<origin xyz rpy>`` child of ``parent``: position (3,) and rotation (3, 3)."""
        el = parent.find("origin")
        if el is None:
            return np.zeros(3), np.eye(3)
        return self.numbers(el, "xyz", 3, (0, 0, 0), parent), rpy_matrix(self.numbers(el, "rpy", 3, (0, 0, 0), parent))


@dataclass
class _Link:
    name: str
    element: ET.Element
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))  # link frame
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about the com, link frame axes


@dataclass
class _Joint:
    name: str
    element: ET.Element
    type: str
    parent: str
    child: str
    position: np.ndarray
    rotation: np.ndarray
    axis: np.ndarray


def _read_link(doc: _Document, el: ET.Element, robot: URDFRobot) -> tuple[_Link, list[Collision]]:
    link = _Link(doc.attr(el, "name"), el)
    inertial = el.find("inertial")
    if inertial is not None:
        mass_el = inertial.find("mass")
        if mass_el is None:
            raise doc.error(inertial, "missing <mass>", el)
        mass = doc.number(mass_el, "value", context=el)
        if mass < 0.0:
            raise doc.error(mass_el, f"mass must be >= 0 kg, got {mass!r}", el)
        inertia_el = inertial.find("inertia")
        if inertia_el is None:
            raise doc.error(inertial, "missing <inertia>", el)
        ixx, ixy, ixz, iyy, iyz, izz = (
            doc.number(inertia_el, k, context=el) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        )
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        xyz, rot = doc.origin(inertial)
        link.mass, link.com, link.inertia = mass, xyz, rot @ tensor @ rot.T
    collisions = []
    for col in el.findall("collision"):
        geometry = col.find("geometry")
        if geometry is None or len(geometry) == 0:
            raise doc.error(col, "missing <geometry> (one of box, sphere, cylinder, capsule, mesh)", el)
        shape = geometry[0]
        size: dict[str, object]
        if shape.tag == "box":
            size = {"size": doc.numbers(shape, "size", 3, context=el)}
        elif shape.tag == "sphere":
            size = {"radius": doc.number(shape, "radius", context=el)}
        elif shape.tag in ("cylinder", "capsule"):
            size = {key: doc.number(shape, key, context=el) for key in ("radius", "length")}
        elif shape.tag == "mesh":
            size = {"filename": doc.attr(shape, "filename", el), "scale": doc.numbers(shape, "scale", 3, (1, 1, 1), el)}
        else:  # another simulator's extension (pybullet's plane, cdf): kept as text, like the ignored elements
            size = dict(shape.attrib)
            if f"geometry <{shape.tag}>" not in robot.ignored:
                robot.ignored.append(f"geometry <{shape.tag}>")
        xyz, rot = doc.origin(col)
        collisions.append(Collision(shape.tag, size, xyz, rot, col.get("name")))
    return link, collisions


def _read_joint(doc: _Document, el: ET.Element, robot: URDFRobot) -> _Joint:
    name = doc.attr(el, "name")
    kind = doc.attr(el, "type")
    if kind not in JOINT_TYPES + EXTENSION_JOINT_TYPES:
        raise doc.error(el, f"unknown joint type {kind!r} (URDF's: {', '.join(JOINT_TYPES)}; pybullet's: spherical)")
    ends = []
    for tag in ("parent", "child"):
        sub = el.find(tag)
        if sub is None:
            raise doc.error(el, f"missing <{tag} link=...>")
        ends.append(doc.attr(sub, "link", el))
    xyz, rot = doc.origin(el)
    axis = np.array([1.0, 0.0, 0.0])
    axis_el = el.find("axis")
    if axis_el is not None:
        axis = doc.numbers(axis_el, "xyz", 3, (1, 0, 0), el)
        norm = float(np.linalg.norm(axis))
        if kind in ("revolute", "continuous", "prismatic", "planar") and norm < 1e-12:
            raise doc.error(axis_el, f"the axis of a {kind} joint must be non-zero, got {axis.tolist()}", el)
        axis = axis / norm if norm > 0.0 else np.array([1.0, 0.0, 0.0])
    limit = el.find("limit")
    if limit is not None:
        robot.joint_limits[name] = JointLimit(
            None if limit.get("lower") is None else doc.number(limit, "lower", context=el),
            None if limit.get("upper") is None else doc.number(limit, "upper", context=el),
            doc.number(limit, "effort", context=el),
            doc.number(limit, "velocity", context=el),
        )
    dynamics = el.find("dynamics")
    if dynamics is not None:
        robot.joint_dynamics[name] = JointDynamics(
            doc.number(dynamics, "damping", 0.0, el), doc.number(dynamics, "friction", 0.0, el)
        )
    for tag in ("mimic", "safety_controller", "calibration"):
        if el.find(tag) is not None and tag not in robot.ignored:
            robot.ignored.append(tag)
    return _Joint(name, el, kind, ends[0], ends[1], xyz, rot, axis)


def _repaired_inertia(inertia: np.ndarray, mass: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Principal moments (3,) [kg m²] before and after the repair, and the repaired (3, 3)
    inertia (None: valid as it is)."""
    moments, axes = np.linalg.eigh(inertia)
    if moments[0] > 0.0 and moments[0] + moments[1] >= moments[2] * (1.0 - 1e-9):
        return moments, moments, None
    floor = max(1e-6 * max(float(moments[2]), 0.0), 1e-6 * mass)
    fixed = np.maximum(moments, floor)
    deficit = fixed[2] - fixed[0] - fixed[1]
    if deficit > 0.0:
        fixed[:2] += 0.5 * deficit * (1.0 + 1e-9)
    return moments, fixed, axes @ np.diag(fixed) @ axes.T


# ------------------------------------------------------------------------------------------ loading
def load_urdf(
    source: str | os.PathLike[str] | bytes,
    *,
    floating_base: bool = False,
    gravity: Sequence[float] = (0.0, 0.0, -9.81),
    initial_positions: Mapping[str, float] | None = None,
    merge_fixed: bool = True,
    base_position: Sequence[float] = (0.0, 0.0, 0.0),
    repair_inertia: bool = False,
) -> URDFRobot:
    """Read a URDF robot into a :class:`kynemapy.ModelBuilder`.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A file name, or the URDF document itself (a string whose first non-blank character
        is ``<``, or bytes).
    floating_base : bool
        False (default): the root link is welded to the ground; True: it is free.
    gravity : (3,) sequence of float [m/s²]
        The builder's gravity, world frame (URDF has none); default ``(0, 0, -9.81)``.
    initial_positions : Mapping[str, float], optional
        Joint name -> initial position [rad or m] of revolute, continuous and prismatic
        joints (default all 0).  The reference configuration stays URDF's zero
        configuration (``joint_output`` reads URDF's joint positions); the bodies start
        displaced to these positions, at rest.
    merge_fixed : bool
        True (default): a fixed joint's child link is merged into its parent's body; False:
        each link with mass is its own body, welded to its parent (a massless child of a
        fixed joint is then still merged).
    base_position : (3,) sequence of float [m]
        World position of the root link's frame (its orientation is the world's).
    repair_inertia : bool
        False (default): a body whose inertia no rigid body has (singular, e.g. all zero, or
        principal moments against ``I1 + I2 >= I3``) is an error.  True: its principal
        moments are lifted to the nearest valid ones (at least ``1e-6`` of the largest and
        ``1e-6 m`` kg m², then the two smaller raised equally until ``I1 + I2 = I3``), with a
        :class:`URDFWarning` naming the links; :attr:`URDFRobot.repaired_inertia` lists them.

    Returns
    -------
    URDFRobot
        The builder and the maps from link and joint names to node and constraint ids, the
        parsed (not enforced) limits, dynamics and collision geometry.

    Raises
    ------
    URDFError
        A file that cannot be read, malformed XML, a missing element or attribute, a bad
        number, an unknown joint type or geometry, duplicate names, unknown parent or child
        links, a link with two parents, a cycle, several roots, a moving body without mass
        or with a singular inertia, an unknown or unsupported joint in ``initial_positions``;
        the message names the element and its line.
    """
    if isinstance(source, bytes):
        text: str | bytes = source
        where = "<string>"
    elif isinstance(source, str) and source.lstrip().startswith("<"):
        text, where = source, "<string>"
    else:
        path = Path(source)
        where = str(path)
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise URDFError(f"cannot read the file: {exc.strerror or exc}", where) from None
    doc = _Document(text, where)
    top = doc.root
    if top.tag != "robot":
        raise doc.error(top, "the document's root element must be <robot>")
    robot = URDFRobot(top.get("name", ""), ModelBuilder(gravity=gravity), "")

    links: dict[str, _Link] = {}
    joints: dict[str, _Joint] = {}
    for el in top:
        if el.tag == "link":
            link, collisions = _read_link(doc, el, robot)
            if link.name in links:
                first = doc.lines.get(links[link.name].element)
                raise doc.error(el, f"duplicate link name {link.name!r} (first on line {first})")
            links[link.name] = link
            robot.link_mass[link.name] = link.mass
            robot.collisions[link.name] = collisions
        elif el.tag == "joint":
            joint = _read_joint(doc, el, robot)
            if joint.name in joints:
                first = doc.lines.get(joints[joint.name].element)
                raise doc.error(el, f"duplicate joint name {joint.name!r} (first on line {first})")
            joints[joint.name] = joint
        elif el.tag in ("transmission", "gazebo", "material") and el.tag not in robot.ignored:
            robot.ignored.append(el.tag)
    if not links:
        raise doc.error(top, "no <link>")

    # the tree: parents, children, the root
    parent_joint: dict[str, _Joint] = {}
    children: dict[str, list[_Joint]] = {name: [] for name in links}
    for joint in joints.values():
        for end, key in ((joint.parent, "parent"), (joint.child, "child")):
            if end not in links:
                raise doc.error(joint.element, f"unknown {key} link {end!r}")
        if joint.parent == joint.child:
            raise doc.error(joint.element, f"joins link {joint.child!r} to itself")
        if joint.child in parent_joint:
            other = parent_joint[joint.child]
            raise doc.error(
                joint.element,
                f"link {joint.child!r} already has the parent joint {other.name!r} "
                f"(line {doc.lines.get(other.element)}); a URDF is a tree",
            )
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) > 1:
        described = ", ".join(f"{name!r} (line {doc.lines.get(links[name].element)})" for name in roots)
        raise doc.error(top, f"several root links (links that are no joint's child): {described}")
    order: list[_Joint] = []
    if roots:
        stack = [roots[0]]
        while stack:
            name = stack.pop()
            for joint in reversed(children[name]):
                order.append(joint)
                stack.append(joint.child)
    reached = {roots[0]} if roots else set()
    reached.update(j.child for j in order)
    if len(reached) < len(links):
        start = next(name for name in links if name not in reached)
        cycle, name = [], start
        while name not in cycle:
            cycle.append(name)
            name = parent_joint[name].parent
        loop = cycle[cycle.index(name) :]
        joint = parent_joint[loop[0]]
        path = " -> ".join(repr(parent_joint[n].name) for n in reversed(loop))
        raise doc.error(joint.element, f"the joints form a cycle ({path}); a URDF is a tree")
    robot.root = roots[0]

    # initial positions
    q0 = dict(initial_positions or {})
    for name, value in q0.items():
        if name not in joints:
            raise URDFError(f"initial_positions: unknown joint {name!r}", where)
        kind = joints[name].type
        if kind not in ("revolute", "continuous", "prismatic"):
            raise doc.error(
                joints[name].element,
                f"initial_positions: a {kind} joint has no single position (only revolute, continuous, prismatic)",
            )
        if not math.isfinite(float(value)):
            raise doc.error(joints[name].element, f"initial_positions: must be finite, got {value!r}")
        q0[name] = float(value)
    robot.initial_positions = q0

    # link frames at the zero configuration and at the initial one
    base = np.asarray(base_position, dtype=float)
    frames = {robot.root: (base.copy(), np.eye(3))}
    posed = {robot.root: (base.copy(), np.eye(3))}
    for joint in order:
        for table, q in ((frames, 0.0), (posed, q0.get(joint.name, 0.0))):
            p, r = table[joint.parent]
            jp, jr = p + r @ joint.position, r @ joint.rotation
            if joint.type == "prismatic":
                jp = jp + jr @ joint.axis * q
            elif q != 0.0:
                jr = jr @ axis_angle_matrix(joint.axis, q)
            table[joint.child] = (jp, jr)
    robot.link_frames = {name: frames[name] for name in links}

    # bodies: groups of links joined by fixed joints (merge_fixed), or by fixed joints to massless children
    group = {robot.root: robot.root}
    for joint in order:
        merge = joint.type == "fixed" and (merge_fixed or links[joint.child].mass == 0.0)
        group[joint.child] = group[joint.parent] if merge else joint.child
    members: dict[str, list[str]] = {}
    for name in [robot.root, *(j.child for j in order)]:
        members.setdefault(group[name], []).append(name)

    b = robot.builder
    node_of: dict[str, int] = {}
    for head, names in members.items():
        p_head, r_head = frames[head]
        mass = sum(links[n].mass for n in names)
        is_ground = head == robot.root and not floating_base and mass == 0.0
        if is_ground:
            node_of[head] = GROUND
            continue
        if mass == 0.0:
            how = "is free (floating base)" if head == robot.root else f"moves (joint {parent_joint[head].name!r})"
            el = links[head].element
            raise doc.error(
                el,
                f"the body of link(s) {', '.join(map(repr, names))} {how} but has no mass: give it an <inertial> "
                f"with mass > 0, or fix it to a link with mass",
            )
        com = sum(links[n].mass * (frames[n][0] + frames[n][1] @ links[n].com) for n in names) / mass
        inertia = np.zeros((3, 3))
        for n in names:
            if links[n].mass == 0.0:
                continue
            rn = r_head.T @ frames[n][1]  # link n -> head frame
            d = r_head.T @ (frames[n][0] + frames[n][1] @ links[n].com - com)
            inertia += rn @ links[n].inertia @ rn.T + links[n].mass * (d @ d * np.eye(3) - np.outer(d, d))
        p_pose, r_pose = posed[head]
        shift = r_pose @ r_head.T  # world rotation from the zero configuration to the initial one
        com_pose = p_pose + r_pose @ (r_head.T @ (com - p_head))
        displacement = np.concatenate([com_pose - com, matrix_quaternion(shift)])
        node = b.add_node(position=com, orientation=matrix_quaternion(r_head), displacement=displacement)
        inertia = 0.5 * (inertia + inertia.T)
        if repair_inertia:
            before, after, repaired = _repaired_inertia(inertia, mass)
            if repaired is not None:
                robot.repaired_inertia[head] = (before, after)
                warnings.warn(
                    f"{doc.source}, line {doc.lines.get(links[head].element)}: the body of link(s) "
                    f"{', '.join(map(repr, names))}: principal moments of inertia {before.tolist()} kg m² "
                    f"repaired to {after.tolist()} kg m²",
                    URDFWarning,
                    stacklevel=2,
                )
                inertia = repaired
        try:
            b.add_mass(node, mass=mass, inertia=inertia)
        except ModelError as exc:
            why = re.sub(r"^mass \d+: ", "", str(exc))  # the builder's item number means nothing here
            hint = "" if repair_inertia else " (load_urdf(..., repair_inertia=True) repairs it, with a warning)"
            raise doc.error(
                links[head].element, f"the body of link(s) {', '.join(map(repr, names))}: {why}{hint}"
            ) from None
        node_of[head] = node
    robot.link_node = {name: node_of[group[name]] for name in links}

    root_node = robot.link_node[robot.root]
    if not floating_base and root_node != GROUND:
        robot.root_joint = b.add_weld_joint(GROUND, root_node, base)

    for joint in order:
        p, r = frames[joint.child]
        axis = r @ joint.axis
        robot.joint_type[joint.name] = joint.type
        robot.joint_parent[joint.name] = joint.parent
        robot.joint_child[joint.name] = joint.child
        robot.joint_points[joint.name] = p.copy()
        robot.joint_axes[joint.name] = axis
        a, c = robot.link_node[joint.parent], robot.link_node[joint.child]
        if a == c or joint.type == "floating":
            continue
        try:
            if joint.type in ("revolute", "continuous"):
                cid = b.add_hinge_joint(a, c, p, axis)
            elif joint.type == "prismatic":
                cid = b.add_slider_joint(a, c, p, axis)
            elif joint.type == "planar":
                cid = b.add_planar_joint(a, c, p, axis)
            elif joint.type == "spherical":
                cid = b.add_ball_joint(a, c, p)
            else:  # fixed, not merged
                cid = b.add_weld_joint(a, c, p)
        except ModelError as exc:
            raise doc.error(joint.element, str(exc)) from None
        robot.joint_id[joint.name] = cid
    return robot


__all__ = [
    "Collision",
    "JointDynamics",
    "JointLimit",
    "URDFError",
    "URDFRobot",
    "URDFWarning",
    "load_urdf",
    "rpy_matrix",
]
