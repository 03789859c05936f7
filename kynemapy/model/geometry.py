"""What a result looks like in space: node positions, body boxes, springs, joints, beams.

The drawing geometry shared by the animation (:mod:`kynemapy.post.animate`), the plots, the ParaView
export (:mod:`kynemapy.io.vtkhdf`) and the sweep's summaries (also importable as
:mod:`kynemapy.post.geometry`), computed from a result's model tables and its ``q`` rows:

* a rigid body (a mass element) is its **principal-inertia box**: the uniform box with the
  body's mass and central principal moments (edge lengths ``a_i = sqrt(6 (I_j + I_k − I_i) / m)``),
  centred on the centre of mass and aligned with the principal axes;
* a spring is the segment between its two nodes;
* a constraint between two nodes (Kynema's rigid, revolute, rotation-control joints) is the
  segment between them; a two-body joint (ball, hinge, ...) is its joint point, with a segment
  from each body's node to it; a one-node boundary condition is a point at its node;
* a beam is its deformed axis: the polyline through its nodes, in span order, one per chain
  of elements that share their end nodes (:func:`beam_chains`);
* a collision shape that takes part in contact (docs/contact.md) is its points with their
  radius, moving with its body (:class:`Shape`): a sphere one point, a capsule its two end
  points (the segment between them, thickened by the radius), a box its eight corners; a
  ground plane is its unit normal and offset (:attr:`Scene.planes`).

All positions are world coordinates [m]; arrays carry a leading row axis ``n``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kynemapy.math.rotations import quaternion_product, rotation_matrices
from kynemapy.model import Model
from kynemapy.model import kinds as constraint_kinds
from kynemapy.model.registry import kinds
from kynemapy.model.registry.contact.shapes import contact_planes, contact_shapes
from kynemapy.model.registry.kind import Shape

__all__ = [
    "Box",
    "Scene",
    "Shape",
    "box_corners",
    "contact_planes",
    "contact_shapes",
    "magnified",
    "node_positions",
    "quaternion_matrices",
    "relative_rotation_vectors",
    "scene",
]

#: the 6 faces of a box whose corners are numbered by bits (x, y, z) = (i & 1, i >> 1 & 1, i >> 2)
BOX_FACES = ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5))


#: rotation matrices (..., 3, 3) of unit quaternions (..., 4): :func:`kynemapy.rotation_matrices`
quaternion_matrices = rotation_matrices


def relative_rotation_vectors(q: np.ndarray) -> np.ndarray:
    """Rotation vectors of each row's orientation relative to the first row's.

    Parameters
    ----------
    q : numpy.ndarray
        (n, 7) displacement and rotation quaternion (w, x, y, z) of one node.

    Returns
    -------
    numpy.ndarray
        (n, 3) rotation vector θ·axis [rad] of ``r_k ⊗ r_0⁻¹`` (world frame), angle θ <= π.
    """
    r = np.asarray(q, dtype=np.float64)[:, 3:7]
    r0 = r[0]
    w = r @ r0
    v = -r[:, :1] * r0[1:] + r0[0] * r[:, 1:] - np.cross(r[:, 1:], r0[1:])
    sign = np.where(w < 0, -1.0, 1.0)
    w, v = w * sign, v * sign[:, None]
    s = np.linalg.norm(v, axis=1)
    theta = 2.0 * np.arctan2(s, w)
    scale = np.where(s > 1e-300, theta / np.where(s > 1e-300, s, 1.0), 2.0)
    return v * scale[:, None]


def magnified(q: np.ndarray, factor: float) -> np.ndarray:
    """Rows with the motion from the first row magnified: ``u0 + f (u − u0)`` and the rotation
    vector of ``r ⊗ r0⁻¹`` scaled by f (a deformed-shape view of small motions).

    Parameters
    ----------
    q : numpy.ndarray
        (n, N, 7) rows of displacements and rotation quaternions.
    factor : float
        Magnification f (1: the rows unchanged).

    Returns
    -------
    numpy.ndarray
        (n, N, 7) magnified rows.
    """
    q = np.asarray(q, dtype=np.float64)
    if factor == 1.0:
        return q
    out = q.copy()
    out[:, :, :3] = q[:1, :, :3] + factor * (q[:, :, :3] - q[:1, :, :3])
    r0 = q[:1, :, 3:7]
    conj = r0 * np.array([1.0, -1.0, -1.0, -1.0])
    rel = quaternion_product(q[:, :, 3:7], np.broadcast_to(conj, q[:, :, 3:7].shape))
    rel = rel * np.where(rel[..., :1] < 0, -1.0, 1.0)
    s = np.linalg.norm(rel[..., 1:], axis=-1, keepdims=True)
    half = np.arctan2(s, rel[..., :1]) * factor
    axis = np.divide(rel[..., 1:], s, out=np.zeros_like(rel[..., 1:]), where=s > 0)
    scaled = np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)
    out[:, :, 3:7] = quaternion_product(scaled, np.broadcast_to(r0, scaled.shape))
    return out


def node_positions(model: Model, q: np.ndarray) -> np.ndarray:
    """World positions X + u of every node [m].

    Parameters
    ----------
    model : Model
        The model (reference positions ``x0``).
    q : numpy.ndarray
        (n, N, 7) rows of displacements and rotations.

    Returns
    -------
    numpy.ndarray
        (n, N, 3) positions [m].
    """
    return np.asarray(model.x0)[None, :, :3] + np.asarray(q)[:, :, :3]


@dataclass(frozen=True)
class Box:
    """A rigid body drawn as its principal-inertia box.

    Attributes
    ----------
    mass : int
        Index of the mass element.
    node : int
        Its node.
    centre : numpy.ndarray
        (3,) centre of mass in the body (material) frame [m].
    axes : numpy.ndarray
        (3, 3) principal axes as columns, body frame.
    size : numpy.ndarray
        (3,) edge lengths along the axes [m].
    """

    mass: int
    node: int
    centre: np.ndarray
    axes: np.ndarray
    size: np.ndarray


@dataclass(frozen=True)
class Scene:
    """The drawable items of a model.

    Attributes
    ----------
    model : Model
        The model drawn.
    boxes : list of Box
        One per mass element (of positive mass).
    springs : (S, 2) ndarray of int64
        The node pairs of the springs.
    links : (L, 2) ndarray of int64
        The node pairs of constraints between two nodes (Kynema's joint kinds).
    anchors : (A,) ndarray of int64
        The nodes held by one-node boundary conditions.
    joints : (J,) ndarray of int64
        The constraint ids of the two-body joints (their points: :meth:`joint_points`).
    beams : list of ndarray, default []
        The beams as chains of element nodes, root first (:func:`beam_chains`); :meth:`beam_axes`
        gives their deformed axes.
    shapes : list of Shape, default []
        The kinds' shapes (:attr:`kynemapy.model.registry.kind.Kind.shapes`: contact's collision
        shapes in contact pairs, :func:`contact_shapes`); :meth:`shape_points`
        gives their points.
    planes : (P, 4) ndarray of float, default none
        The distinct ground planes ``n · y = d``: unit normal n and offset d [m].
    """

    model: Model
    boxes: list[Box]
    springs: np.ndarray
    links: np.ndarray
    anchors: np.ndarray
    joints: np.ndarray
    beams: list = field(default_factory=list)
    shapes: list = field(default_factory=list)
    planes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))

    def rotations(self, q: np.ndarray) -> np.ndarray:
        """The current orientation R(r ⊗ r0) of every node.

        Parameters
        ----------
        q : (n, N, 7) array_like of float
            Rows of node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        (n, N, 3, 3) ndarray of float
            Body-to-world rotation matrices.
        """
        r = quaternion_product(np.asarray(q)[:, :, 3:7], np.asarray(self.model.x0)[None, :, 3:7])
        return quaternion_matrices(r)

    def joint_points(self, q: np.ndarray) -> np.ndarray:
        """The current joint point of each two-body joint, as carried by each side.

        Parameters
        ----------
        q : (n, N, 7) array_like of float
            Rows of node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        (n, J, 2, 3) ndarray of float
            The point [m] as carried by side a and by side b (equal while the joint holds); a
            ground side is its fixed point.
        """
        q = np.asarray(q)
        n = q.shape[0]
        out = np.zeros((n, len(self.joints), 2, 3))
        pos = node_positions(self.model, q)
        rot = quaternion_matrices(q[:, :, 3:7])  # the displacement rotation R(r): d is in the reference world frame
        for j, c in enumerate(self.joints):
            for side in range(2):
                node = int(self.model.constraint_node[c, side])
                d = np.asarray(self.model.constraint_geometry[c, side, 0])
                out[:, j, side] = d if node < 0 else pos[:, node] + rot[:, node] @ d
        return out

    def beam_axes(self, q: np.ndarray) -> list[np.ndarray]:
        """The deformed axis of each beam.

        Parameters
        ----------
        q : (n, N, 7) array_like of float
            Rows of node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        list of ndarray
            One (n, P, 3) polyline through the P nodes of each chain of :func:`beam_chains` [m].
        """
        pos = node_positions(self.model, q)
        return [pos[:, chain] for chain in self.beams]

    def box_corners(self, q: np.ndarray) -> np.ndarray:
        """The corners of every body's box.

        Parameters
        ----------
        q : (n, N, 7) array_like of float
            Rows of node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        (n, B, 8, 3) ndarray of float
            Corners [m]; corner i has the signs of the bits (x, y, z) of i.
        """
        q = np.asarray(q)
        out = np.zeros((q.shape[0], len(self.boxes), 8, 3))
        if not self.boxes:
            return out
        rot = self.rotations(q)
        pos = node_positions(self.model, q)
        for b, box in enumerate(self.boxes):
            out[:, b] = box_corners(box, pos[:, box.node], rot[:, box.node])
        return out

    def shape_points(self, q: np.ndarray) -> list[np.ndarray]:
        """The current points of every collision shape, ``x + R(r) s₀`` (the offsets s₀ are in
        the reference world frame, turned by the node's rotation displacement R(r)).

        Parameters
        ----------
        q : (n, N, 7) array_like of float
            Rows of node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        list of ndarray
            One (n, k, 3) array of points [m] per shape of :attr:`shapes`.
        """
        q = np.asarray(q)
        if not self.shapes:
            return []
        pos = node_positions(self.model, q)
        rot = quaternion_matrices(q[:, :, 3:7])
        return [pos[:, sh.node, None, :] + np.einsum("nij,kj->nki", rot[:, sh.node], sh.offsets) for sh in self.shapes]

    def plane_squares(self, centre: np.ndarray, half: float) -> np.ndarray:
        """A square on each ground plane of :attr:`planes`, for drawing.

        Parameters
        ----------
        centre : (3,) array_like of float
            The point [m] whose foot on each plane is the square's centre.
        half : float
            Half the square's edge [m].

        Returns
        -------
        (P, 4, 3) ndarray of float
            The corners [m] of each plane's square, in order around it.
        """
        centre = np.asarray(centre, dtype=float)
        out = np.zeros((len(self.planes), 4, 3))
        for k, plane in enumerate(self.planes):
            n, d = np.asarray(plane[:3], dtype=float), float(plane[3])
            foot = centre - (centre @ n - d) * n
            e1 = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
            e1 /= np.linalg.norm(e1)
            e2 = np.cross(n, e1)
            out[k] = [foot + half * (a * e1 + b * e2) for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        return out

    def extent(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bounding box of everything drawn over all rows.

        Parameters
        ----------
        q : (n, N, 7) array_like of float
            Rows of node displacements [m] and rotation quaternions (w, x, y, z).

        Returns
        -------
        lower : (3,) ndarray of float
            The lower corner [m].
        upper : (3,) ndarray of float
            The upper corner [m].
        """
        pts = [node_positions(self.model, q).reshape(-1, 3)]
        if self.boxes:
            pts.append(self.box_corners(q).reshape(-1, 3))
        if len(self.joints):
            pts.append(self.joint_points(q).reshape(-1, 3))
        for sh, p in zip(self.shapes, self.shape_points(q), strict=True):
            pts.extend((p.reshape(-1, 3) - sh.radius, p.reshape(-1, 3) + sh.radius))
        allp = np.concatenate(pts)
        return allp.min(axis=0), allp.max(axis=0)


def box_corners(box: Box, position: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """Corners of ``box`` on a node, per row.

    Parameters
    ----------
    box : Box
        The body's box (centre, axes and size in the body frame).
    position : (n, 3) ndarray of float
        The node's world position X + u [m].
    rotation : (n, 3, 3) ndarray of float
        The node's body-to-world rotation matrix R(r ⊗ r0).

    Returns
    -------
    (n, 8, 3) ndarray of float
        Corners [m]; corner i has the signs of the bits (x, y, z) of i.
    """
    signs = np.array([[(i & 1) * 2 - 1, (i >> 1 & 1) * 2 - 1, (i >> 2 & 1) * 2 - 1] for i in range(8)], dtype=float)
    local = box.centre[None, :] + (signs * (box.size / 2)[None, :]) @ box.axes.T  # (8, 3) body frame
    return position[:, None, :] + np.einsum("nij,kj->nki", rotation, local)


def _boxes(model: Model) -> list[Box]:
    boxes = []
    scale = float(np.ptp(np.asarray(model.x0)[:, :3], axis=0).max()) if model.n_nodes > 1 else 1.0
    for k in range(model.n_masses):
        ms = np.asarray(model.mass_m_star[k])
        m = float(ms[0, 0])
        if m <= 0.0:
            continue
        eta = np.array([ms[5, 1], -ms[5, 0], ms[4, 0]]) / m
        j_node = ms[3:6, 3:6]
        j_c = j_node - m * (np.dot(eta, eta) * np.eye(3) - np.outer(eta, eta))
        moments, axes = np.linalg.eigh(0.5 * (j_c + j_c.T))
        total = moments.sum()
        sq = 6.0 * (total - 2.0 * moments) / m  # a_i² = 6 (I_j + I_k − I_i) / m
        size = np.sqrt(np.clip(sq, 0.0, None))
        floor = 0.05 * (size.max() if size.max() > 0 else max(scale, 1e-3) * 0.2)
        size = np.maximum(size, floor)  # a thin or point body still shows
        boxes.append(Box(mass=k, node=int(model.mass_node[k]), centre=eta, axes=axes, size=size))
    return boxes


def scene(model: Model) -> Scene:
    """The drawable items of ``model`` (see the module docstring).

    Parameters
    ----------
    model : Model
        A built model (e.g. ``kynemapy.io.read(path).model``).

    Returns
    -------
    Scene
        Boxes, springs, links, anchors, joints (and, when beams exist, beams).
    """
    kind = np.asarray(model.constraint_kind)
    nodes = np.asarray(model.constraint_node)
    body = set(constraint_kinds.BODY_JOINTS)
    links = [(int(a), int(b)) for c, (a, b) in enumerate(nodes) if kind[c] not in body and a >= 0 and b >= 0]
    anchors = sorted({int(b) for c, (a, b) in enumerate(nodes) if kind[c] not in body and a < 0 and b >= 0})
    joints = [c for c in range(model.n_constraints) if kind[c] in body]
    return Scene(
        model=model,
        boxes=_boxes(model),
        springs=np.asarray(model.spring_node, dtype=np.int64).reshape(-1, 2),
        links=np.array(links, dtype=np.int64).reshape(-1, 2),
        anchors=np.array(anchors, dtype=np.int64),
        joints=np.array(joints, dtype=np.int64),
        beams=beam_chains(model),
        shapes=[sh for kind in kinds() if kind.shapes is not None for sh in kind.shapes(model)],
        planes=_planes(model),
    )


def _planes(model: Model) -> np.ndarray:
    """(P, 4) the distinct ground planes of every kind (:attr:`~kynemapy.model.registry.kind.Kind.planes`)."""
    found = [np.asarray(kind.planes(model), dtype=float).reshape(-1, 4) for kind in kinds() if kind.planes is not None]
    planes = np.concatenate(found) if found else np.zeros((0, 4))
    return np.unique(planes, axis=0) if planes.shape[0] else planes


def beam_chains(model: Model) -> list[np.ndarray]:
    """The beams of a model as chains of elements: each chain's nodes in span order.

    Elements are taken in their order; an element whose first node is the last node of the
    chain before it continues that chain (a beam of several elements), otherwise it starts a
    new one.

    Parameters
    ----------
    model : Model
        The model (its beam element tables).

    Returns
    -------
    list of ndarray
        One (P,) int64 array of node ids per chain, root first, tip last (empty without
        beams).
    """
    chains: list[list[int]] = []
    n_beams = int(getattr(model, "n_beams", 0) or 0)
    for e in range(n_beams):
        count = int(model.beam_n_nodes[e])
        nodes = [int(n) for n in np.asarray(model.beam_node[e, :count])]
        if chains and chains[-1][-1] == nodes[0]:
            chains[-1].extend(nodes[1:])
        else:
            chains.append(nodes)
    return [np.array(c, dtype=np.int64) for c in chains]


def tip_deflection(model: Model, q: np.ndarray, chain: np.ndarray) -> np.ndarray:
    """Deflection of a beam's tip in its root's frame, from the first row [m].

    ``d(t) = R_root(t)ᵀ (x_tip(t) − x_root(t)) − R_root(0)ᵀ (x_tip(0) − x_root(0))`` with
    ``x = X + u`` and ``R = R(r ⊗ r0)`` the root node's orientation: the root's rigid motion
    (a spinning hub, a pitching blade) taken out, components along the root node's axes.

    Parameters
    ----------
    model : Model
        The result's model.
    q : numpy.ndarray
        (n, N, 7) rows of displacements [m] and rotation quaternions.
    chain : numpy.ndarray
        (nodes,) int, the beam's nodes, root first (:func:`beam_chains`).

    Returns
    -------
    numpy.ndarray
        (n, 3) [m].
    """
    q = np.asarray(q)
    pos = node_positions(model, q)
    root, tip = int(chain[0]), int(chain[-1])
    r = quaternion_product(q[:, root, 3:7], np.asarray(model.x0)[None, root, 3:7])
    rot = quaternion_matrices(r)
    local = np.einsum("nji,nj->ni", rot, pos[:, tip] - pos[:, root])
    return local - local[:1]
