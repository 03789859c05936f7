"""Building the model: :func:`load_urdf` composes the link frames down the tree, merges fixed
joints' links, and adds the bodies and joints to a :class:`kynemapy.ModelBuilder`."""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from kynemapy.io.urdf.parse import Document, Joint, Link, axis_angle_matrix, matrix_quaternion, read_joint, read_link
from kynemapy.io.urdf.robot import URDFError, URDFRobot, URDFWarning
from kynemapy.model.builder import GROUND, ModelBuilder
from kynemapy.model.errors import ModelError


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
    joint_dynamics: bool = False,
    joint_limits: bool = False,
    limit_stiffness: float | None = None,
    limit_damping: float = 0.0,
    limit_restitution: float | None = None,
    collision_shapes: bool = False,
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
    joint_dynamics : bool
        False (default): ``<dynamics damping friction>`` is parsed into
        :attr:`URDFRobot.joint_dynamics` and not applied.  True: revolute, continuous and
        prismatic joints get it as their damper (``damping`` [N m s/rad, N s/m]) and Coulomb
        friction (``friction`` [N m, N], regularized with the default ``friction_rate``; see
        :meth:`~kynemapy.ModelBuilder.add_hinge_joint` and docs/joints.md, "Drives").
    joint_limits : bool
        False (default): ``<limit lower upper>`` is parsed into :attr:`URDFRobot.joint_limits`
        and not enforced.  True: revolute and prismatic joints whose ``<limit>`` gives both
        ``lower`` and ``upper`` get them as compliant travel limits (``limits``,
        ``limit_stiffness``, ``limit_damping`` of :meth:`~kynemapy.ModelBuilder.add_hinge_joint`;
        docs/joints.md, "Compliant joint limits"); then ``limit_stiffness`` is required, as
        URDF has no stiffness and no default fits every robot.  With ``limit_restitution``
        instead they are hard stops (docs/joints.md, "Hard joint limits").
    limit_stiffness : float [N m/rad, N/m], optional
        The limits' stiffness k_l (N m/rad for revolute, N/m for prismatic joints), > 0, the
        same for every limited joint (with ``joint_limits``).
    limit_damping : float [N m s/rad, N s/m], default 0.0
        The limits' damping c_l, >= 0 (with ``joint_limits``).
    limit_restitution : float [-], optional
        With ``joint_limits``: hard (unilateral) limits with Newton's restitution coefficient
        e in [0, 1], the same for every limited joint, instead of compliant ones (not with
        ``limit_stiffness`` or ``limit_damping``).
    collision_shapes : bool
        False (default): ``<collision>`` geometry is parsed into :attr:`URDFRobot.collisions`
        only.  True: each sphere, box and capsule of a link with a body becomes a contact shape
        on that body (:meth:`~kynemapy.ModelBuilder.add_sphere`, ``add_box``, ``add_capsule``,
        at the link's zero-configuration pose; a capsule's ``length`` is its axis between the
        end spheres, along the geometry's z); their ids are in
        :attr:`URDFRobot.collision_shapes`.  Add a ground plane (and ``set_body_contact``) to the
        builder for them to touch anything (docs/contact.md).  Cylinders and meshes, which have
        no contact shape yet, and the geometry of links fixed to the ground are left out with a
        :class:`URDFWarning` naming them.

    Returns
    -------
    URDFRobot
        The builder and the maps from link and joint names to node and constraint ids, the
        parsed limits (compliant with ``joint_limits``), dynamics and collision geometry.

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
    if joint_limits and limit_stiffness is None and limit_restitution is None:
        raise URDFError(
            "joint_limits=True needs limit_stiffness > 0 [N m/rad, N/m] (compliant limits) or "
            "limit_restitution in [0, 1] (hard limits)",
            where,
        )
    doc = Document(text, where)
    top = doc.root
    if top.tag != "robot":
        raise doc.error(top, "the document's root element must be <robot>")
    robot = URDFRobot(top.get("name", ""), ModelBuilder(gravity=gravity), "")

    links: dict[str, Link] = {}
    joints: dict[str, Joint] = {}
    for el in top:
        if el.tag == "link":
            link, collisions = read_link(doc, el, robot)
            if link.name in links:
                first = doc.lines.get(links[link.name].element)
                raise doc.error(el, f"duplicate link name {link.name!r} (first on line {first})")
            links[link.name] = link
            robot.link_mass[link.name] = link.mass
            robot.collisions[link.name] = collisions
        elif el.tag == "joint":
            joint = read_joint(doc, el, robot)
            if joint.name in joints:
                first = doc.lines.get(joints[joint.name].element)
                raise doc.error(el, f"duplicate joint name {joint.name!r} (first on line {first})")
            joints[joint.name] = joint
        elif el.tag in ("transmission", "gazebo", "material") and el.tag not in robot.ignored:
            robot.ignored.append(el.tag)
    if not links:
        raise doc.error(top, "no <link>")

    # the tree: parents, children, the root
    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {name: [] for name in links}
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
    order: list[Joint] = []
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
            dyn = robot.joint_dynamics.get(joint.name) if joint_dynamics else None
            drive: dict[str, object] = {} if dyn is None else {"damping": dyn.damping, "friction": dyn.friction}
            lim = robot.joint_limits.get(joint.name) if joint_limits else None
            if lim is not None and joint.type != "continuous" and lim.lower is not None and lim.upper is not None:
                drive.update(
                    limits=(lim.lower, lim.upper), limit_stiffness=limit_stiffness, limit_damping=limit_damping
                )
                if limit_restitution is not None:
                    drive["limit_restitution"] = limit_restitution
            if joint.type in ("revolute", "continuous"):
                cid = b.add_hinge_joint(a, c, p, axis, **drive)
            elif joint.type == "prismatic":
                cid = b.add_slider_joint(a, c, p, axis, **drive)
            elif joint.type == "planar":
                cid = b.add_planar_joint(a, c, p, axis)
            elif joint.type == "spherical":
                cid = b.add_ball_joint(a, c, p)
            else:  # fixed, not merged
                cid = b.add_weld_joint(a, c, p)
        except ModelError as exc:
            raise doc.error(joint.element, str(exc)) from None
        robot.joint_id[joint.name] = cid
    if collision_shapes:
        _add_collision_shapes(doc, robot, links, b)
    return robot


def _add_collision_shapes(doc: Document, robot: URDFRobot, links: dict[str, Link], b: ModelBuilder) -> None:
    """The links' spheres, boxes and capsules as contact shapes on their bodies (see
    :func:`load_urdf`'s ``collision_shapes``); the others named in one :class:`URDFWarning`."""
    left_out: list[str] = []
    for name, collisions in robot.collisions.items():
        node = robot.link_node[name]
        p, r = robot.link_frames[name]
        for col in collisions:
            what = f"link {name!r}: <{col.geometry}>" + (f" {col.name!r}" if col.name else "")
            if node == GROUND:
                left_out.append(f"{what} (fixed to the ground)")
                continue
            if col.geometry not in ("sphere", "box", "capsule"):
                left_out.append(f"{what} (no {col.geometry} contact shape yet)")
                continue
            centre = p + r @ col.origin
            rot = r @ col.rotation
            try:
                if col.geometry == "sphere":
                    sid = b.add_sphere(node, float(col.size["radius"]), center=centre)
                elif col.geometry == "box":
                    half = 0.5 * np.asarray(col.size["size"], dtype=float)
                    sid = b.add_box(node, half, center=centre, axes=rot)
                else:
                    half_axis = 0.5 * float(col.size["length"]) * rot[:, 2]
                    sid = b.add_capsule(node, float(col.size["radius"]), centre - half_axis, centre + half_axis)
            except ModelError as exc:
                raise doc.error(links[name].element, f"{what}: {exc}") from None
            robot.collision_shapes.setdefault(name, []).append(sid)
    if left_out:
        warnings.warn(
            f"{doc.source}: collision geometry left out of contact: {'; '.join(left_out)}", URDFWarning, stacklevel=3
        )
