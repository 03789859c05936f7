"""Contact drawn: the ParaView arrays of :func:`kynemapy.io.vtkhdf.write_vtkhdf` and the arrows of
``kynemapy animate`` (:func:`kynemapy.post.animate.animate`).

* ``contact_force`` (3) [N]: at each collision shape's point, the force the ground planes apply
  there (normal plus friction; the compliant law's at the row's state, or the hard planes' mean
  force since the row before), zero apart and elsewhere; drawn as red arrows from the point's
  surface towards the body (:func:`contact_arrows`);
* ``body_contact_force`` (3) [N], ``body_contact_moment`` (3) [N m]: at each node, the hard body
  law's mean force and moment (about the node) from the other bodies' contacts since the row
  before (:func:`~kynemapy.model.registry.contact.rows.body_contact_forces`); the forces drawn as
  orange arrows from the nodes (:func:`body_force_arrows`).

The ground planes' forces come as the kind's derived rows (``contacts``): a
:class:`kynemapy.run.contact_rows.ContactRows` of the model's compliant points, or the hard
planes' :class:`kynemapy.run.hard_rows.HardPlaneForces` (with their points' geometry).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kynemapy.math.rotations import rotation_matrices
from kynemapy.model.registry.contact.rows import body_contact_forces
from kynemapy.model.registry.kind import DrawContext, ExportContext

__all__ = [
    "body_arrows",
    "body_contact_force",
    "body_contact_moment",
    "body_force_arrows",
    "contact_arrows",
    "contact_force",
    "plane_arrows",
]


def _plane_points(model: Any, contacts: Any) -> tuple[int, Any, Any, Any, Any, Any]:
    """K and the points' plane normals (K, 3), nodes, shapes, offsets and radii: the hard planes'
    own (``contacts.offset`` given) or the model's compliant points."""
    if hasattr(contacts, "offset"):  # the hard planes' points (kynemapy.run.hard_rows.plane_forces)
        k = int(np.shape(contacts.node)[0])
        return k, contacts.normal, contacts.node, contacts.shape, contacts.offset, contacts.radius
    normal = np.asarray(model.contact_plane, dtype=np.float64)[:, :3]
    k = int(getattr(model, "n_contacts", 0))
    return k, normal, model.contact_node, model.contact_shape, model.contact_offset, model.contact_radius


def contact_force(context: ExportContext) -> np.ndarray | None:
    """(R, n_points, 3) the ground planes' forces [N] at the collision shapes' points in the rows
    written; None without the derived contacts."""
    contacts, result = context.derived, context.result
    if contacts is None:
        return None
    k, plane_normal, _, shapes, offsets, _ = _plane_points(result.model, contacts)
    normal = np.asarray(contacts.normal_force, dtype=np.float64)
    friction = np.asarray(contacts.friction_force, dtype=np.float64)
    if normal.shape != (result.committed, k) or friction.shape != (result.committed, k, 3):
        raise ValueError(
            f"write_vtkhdf: contacts must hold the result's {result.committed} rows of its {k} contact points "
            f"(normal_force ({result.committed}, {k}), friction_force ({result.committed}, {k}, 3)), "
            f"got {normal.shape} and {friction.shape}"
        )
    rows = context.rows
    force = normal[rows, :, None] * np.asarray(plane_normal, dtype=np.float64)[None] + friction[rows]
    points: dict[int, tuple[int, np.ndarray]] = {}  # shape -> (its first point, its points' offsets)
    start = context.shape_start
    for sh in context.scene.shapes:
        points[int(sh.shape)] = (start, np.asarray(sh.offsets, dtype=float).reshape(-1, 3))
        start += len(sh.offsets)
    out = np.zeros((len(rows), context.n_points, 3))
    for e in range(k):  # the shape's point with this offset (the same numbers, up to rounding)
        begin, own = points[int(shapes[e])]
        j = int(np.argmin(np.linalg.norm(own - np.asarray(offsets[e], dtype=float), axis=1)))
        out[:, begin + j] += force[:, e]
    return out


def _body(context: ExportContext, part: slice) -> np.ndarray | None:
    """The hard body law's force or moment (R, n_points, 3) on the node points (0 .. N−1), zero on
    the other points; None without body impulses."""
    forces = body_contact_forces(context.result)
    if forces is None:
        return None
    out = np.zeros((context.rows.size, context.n_points, 3))
    out[:, : forces.shape[1]] = forces[context.rows][:, :, part]
    return out


def body_contact_force(context: ExportContext) -> np.ndarray | None:
    """(R, n_points, 3) the hard body law's mean force [N] on each node point; None without it."""
    return _body(context, slice(0, 3))


def body_contact_moment(context: ExportContext) -> np.ndarray | None:
    """(R, n_points, 3) the hard body law's mean moment [N m] about each node; None without it."""
    return _body(context, slice(3, 6))


def contact_arrows(model: Any, q: np.ndarray, contacts: Any, rows: np.ndarray, length: float) -> np.ndarray:
    """Arrows of the ground planes' forces on the collision shapes' points, for drawing.

    Point e's arrow starts on its sphere's surface towards its plane, ``c − r n`` (c = x + R(r)
    s₀ the sphere's centre [m], r its radius, n the plane's normal), and points along its force
    ``f_n n + f_t`` [N], scaled so that the largest force of all the rows is ``length`` long.

    Parameters
    ----------
    model : Model
        The result's model (its ``contact_node``, ``contact_offset``, ``contact_radius``,
        ``contact_plane``).
    q : (n, N, 7) ndarray of float
        The drawn rows' node displacements [m] and rotation quaternions.
    contacts : ContactRows or HardPlaneForces
        (:class:`kynemapy.run.contact_rows.ContactRows`, :class:`kynemapy.run.hard_rows.HardPlaneForces`)
        The point–plane contacts of all the result's rows (``normal_force`` (R, K) [N],
        ``friction_force`` (R, K, 3) [N]): the compliant law's (the model's ``contact_*``
        points), or the hard planes' mean forces over each row's step, with their points.
    rows : (n,) ndarray of int
        The result's rows that ``q`` holds.
    length : float
        The drawn length of the largest force [m].

    Returns
    -------
    (n, K, 2, 3) ndarray of float
        Each arrow's start and end [m]; a point without force has both at its start.

    Raises
    ------
    ValueError
        ``contacts`` not of the model's K points.
    """
    k, normal, nodes, _, offset, radius = _plane_points(model, contacts)
    normal_force = np.asarray(contacts.normal_force, dtype=np.float64)
    friction = np.asarray(contacts.friction_force, dtype=np.float64)
    if normal_force.ndim != 2 or normal_force.shape[1] != k or friction.shape != (*normal_force.shape, 3):
        raise ValueError(
            f"animate: contacts must hold the model's {k} contact points (normal_force (R, {k}), friction_force "
            f"(R, {k}, 3)), got {normal_force.shape} and {friction.shape}"
        )
    out = np.zeros((q.shape[0], k, 2, 3))
    if k == 0:
        return out
    normal = np.asarray(normal, dtype=np.float64)
    nodes = np.asarray(nodes)
    pos = np.asarray(model.x0)[None, nodes, :3] + q[:, nodes, :3]  # (n, K, 3): X + u
    rot = rotation_matrices(q[:, nodes, 3:7])  # (n, K, 3, 3)
    centre = pos + np.einsum("nkij,kj->nki", rot, np.asarray(offset, dtype=np.float64))
    start = centre - np.asarray(radius, dtype=np.float64)[None, :, None] * normal[None]
    force = normal_force[:, :, None] * normal[None] + friction  # (R, K, 3)
    return _arrows(start, force, rows, length, out)


def _arrows(start: np.ndarray, force: np.ndarray, rows: np.ndarray, length: float, out: np.ndarray) -> np.ndarray:
    """``out`` (F, K, 2, 3): arrows from ``start`` (F, K, 3) [m] along ``force[rows]`` (R, K, 3)
    [N], scaled so that the largest force of all the rows is ``length`` [m] long."""
    largest = float(np.max(np.linalg.norm(force, axis=2))) if force.size else 0.0
    scale = length / largest if largest > 0.0 else 0.0
    out[:, :, 0] = start
    out[:, :, 1] = start + scale * force[rows]
    return out


def body_force_arrows(positions: np.ndarray, forces: np.ndarray, rows: np.ndarray, length: float) -> np.ndarray:
    """Arrows of the hard body law's forces on the nodes, for drawing.

    Node i's arrow starts at the node and points along the mean force the other bodies' contacts
    apply to it (:attr:`kynemapy.io.Result.body_contact_forces`), scaled so that the largest
    force of all the rows is ``length`` long.

    Parameters
    ----------
    positions : (F, N, 3) ndarray of float
        The nodes' positions in the drawn frames [m].
    forces : (R, N, 6) ndarray of float
        Force [N] and moment [N m] on every node in every row of the result (the moments are not
        drawn).
    rows : (F,) ndarray of int
        The result's row of each frame.
    length : float
        The drawn length of the largest force [m].

    Returns
    -------
    (F, N, 2, 3) ndarray of float
        Each arrow's start and end [m]; a node without force has both at its position.
    """
    out = np.empty((positions.shape[0], positions.shape[1], 2, 3))
    return _arrows(positions, np.asarray(forces, dtype=np.float64)[:, :, :3], rows, length, out)


def plane_arrows(context: DrawContext) -> np.ndarray | None:
    """The red arrows: :func:`contact_arrows` of the derived contacts; None without them."""
    if context.derived is None:
        return None
    return contact_arrows(context.model, context.q, context.derived, context.rows, context.length)


def body_arrows(context: DrawContext) -> np.ndarray | None:
    """The orange arrows: :func:`body_force_arrows` of the recorded body impulses; None without them."""
    forces = body_contact_forces(context.result)
    if forces is None:
        return None
    return body_force_arrows(context.positions, forces, context.rows, context.length)
