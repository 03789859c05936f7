"""Reading a URDF document: XML with each element's line (expat, the standard library), URDF's
rotations, and the ``<link>`` and ``<joint>`` elements as plain records."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kynemapy.io.urdf.robot import (
    EXTENSION_JOINT_TYPES,
    JOINT_TYPES,
    Collision,
    JointDynamics,
    JointLimit,
    URDFError,
    URDFRobot,
)


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


class Document:
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
class Link:
    name: str
    element: ET.Element
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))  # link frame
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about the com, link frame axes


@dataclass
class Joint:
    name: str
    element: ET.Element
    type: str
    parent: str
    child: str
    position: np.ndarray
    rotation: np.ndarray
    axis: np.ndarray


def read_link(doc: Document, el: ET.Element, robot: URDFRobot) -> tuple[Link, list[Collision]]:
    link = Link(doc.attr(el, "name"), el)
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


def read_joint(doc: Document, el: ET.Element, robot: URDFRobot) -> Joint:
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
    return Joint(name, el, kind, ends[0], ends[1], xyz, rot, axis)
