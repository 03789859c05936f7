"""Collision shapes on bodies, ground planes and their contact points (docs/contact.md).

The :class:`~kynemapy.ModelBuilder` keeps a list of shapes (sphere, capsule, box on a node) and
ground planes (half-spaces with their contact law); :func:`contact_fields` turns the pairs that
the filter keeps into the contact points of the Model (``contact_*`` fields, one row per
point): a sphere is one point of its radius, a capsule its two end spheres, a box its eight
corners (radius 0).  Against a plane these are exact: the deepest point of a convex shape
below a plane is one of them.

Pair filter: a shape and a plane make contact points when ``shape.group & plane.mask`` and
``plane.group & shape.mask`` are both non-zero (bit masks, MuJoCo's contype/conaffinity
rule; default group 1, mask all bits).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kynemapy.model.errors import ModelError

#: every bit: a mask that accepts every group
ALL_GROUPS = -1
#: the damping laws of a plane's normal force
DAMPING_MODELS = ("linear", "hunt_crossley")
#: the shape kinds
SHAPE_KINDS = ("sphere", "capsule", "box")
#: the contact laws of a ground plane: the compliant spring-damper, or hard (nonsmooth) contact
PLANE_LAWS = ("compliant", "hard")
#: the columns of ``Model.hard_contacts``: node, shape, plane, offset (3) [m], radius [m], unit
#: normal (3), plane offset d [m], Newton's restitution coefficient e [-], Coulomb's μ [-]
HARD_COLUMNS = 13


@dataclass(frozen=True)
class Shape:
    """A collision shape on ``node``: ``points`` (k, 3) offsets from the node at the reference
    configuration [m], inertial frame, with ``radii`` (k,) [m]; ``group``, ``mask`` bit masks."""

    kind: str
    node: int
    points: np.ndarray
    radii: np.ndarray
    group: int
    mask: int


@dataclass(frozen=True)
class Plane:
    """A ground half-space ``n · y <= d`` (``normal`` unit (3,), ``offset`` d [m]) with its
    contact law: ``law`` "compliant" with ``param`` (6,) (see
    :mod:`kynemapy.engine.elements.contacts`), or "hard" (nonsmooth contact,
    :mod:`kynemapy.run.hard_contact`) with Newton's ``restitution`` e [-] and Coulomb's
    ``param[4]`` μ [-] (the other entries of ``param`` zero)."""

    normal: np.ndarray
    offset: float
    param: np.ndarray
    group: int
    mask: int
    law: str = "compliant"
    restitution: float = 0.0


def number(value: object, what: str, minimum: float | None = None, strict: bool = False) -> float:
    """``value`` as a finite float (>= ``minimum``, or > it with ``strict``), else a ModelError."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(f"{what} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ModelError(f"{what} must be finite, got {value!r}")
    if minimum is not None and (x <= minimum if strict else x < minimum):
        raise ModelError(f"{what} must be {'>' if strict else '>='} {minimum:g}, got {value!r}")
    return x


def vector(value: object, what: str) -> np.ndarray:
    """``value`` as a finite (3,) float array, else a ModelError."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be 3 numbers, got {value!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {value!r}")
    return a


def bits(value: object, what: str) -> int:
    """``value`` as a group or mask bit set (an int; −1 all bits)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ModelError(f"{what} must be an integer bit mask, got {value!r}")
    return int(value)


def law(
    stiffness: object,
    damping: object,
    friction: object,
    exponent: object,
    damping_model: object,
    slip_velocity: object,
    what: str,
) -> np.ndarray:
    """A checked contact law (6,) (see :mod:`kynemapy.engine.elements.contacts`)."""
    k = number(stiffness, f"{what} stiffness [N/m^exponent]", 0.0, strict=True)
    c = number(damping, f"{what} damping", 0.0)
    mu = number(friction, f"{what} friction (coefficient)", 0.0)
    e = number(exponent, f"{what} exponent", 1.0)
    vs = number(slip_velocity, f"{what} slip_velocity [m/s]", 0.0, strict=True)
    if damping_model not in DAMPING_MODELS:
        raise ModelError(f"{what} damping_model must be one of {', '.join(DAMPING_MODELS)}, got {damping_model!r}")
    return np.array([k, e, c, float(damping_model == "hunt_crossley"), mu, vs])


def plane(
    normal: object,
    offset: object,
    stiffness: object,
    damping: object,
    friction: object,
    exponent: object,
    damping_model: object,
    slip_velocity: object,
    group: object,
    mask: object,
    what: str,
) -> Plane:
    """A checked :class:`Plane` (``what`` names it in errors)."""
    n = vector(normal, f"{what} normal")
    length = float(np.linalg.norm(n))
    if length == 0.0:
        raise ModelError(f"{what} normal must not be zero")
    d = number(offset, f"{what} offset [m]")
    param = law(stiffness, damping, friction, exponent, damping_model, slip_velocity, what)
    return Plane(n / length, d, param, bits(group, f"{what} group"), bits(mask, f"{what} mask"))


#: the compliant law's keywords other than friction, and their defaults (refused with law="hard")
COMPLIANT_DEFAULTS = {"stiffness": None, "damping": 0.0, "exponent": 1.0, "damping_model": "linear",
                      "slip_velocity": 1e-3}  # fmt: skip


def refuse_compliant(what: str, values: dict[str, object]) -> None:
    """Refuse the compliant law's keywords given (not at their defaults, :data:`COMPLIANT_DEFAULTS`)
    with ``law="hard"``: a ``ModelError`` naming them (``what`` names the plane or the law)."""
    given = [name for name, value in values.items() if value != COMPLIANT_DEFAULTS[name]]
    if given:
        raise ModelError(
            f"{what}: {', '.join(given)} {'is a parameter' if len(given) == 1 else 'are parameters'} of the "
            "compliant law and refused with law='hard' (give restitution and friction only)"
        )


def hard_law(restitution: object, friction: object, what: str) -> tuple[float, float]:
    """Checked Newton's ``0 <= restitution <= 1`` [-] (None: 0) and Coulomb's ``friction >= 0`` [-]
    of the hard (nonsmooth) law (``what`` names it in errors)."""
    e = number(0.0 if restitution is None else restitution, f"{what} restitution (Newton's coefficient, law='hard')",
               0.0)  # fmt: skip
    if e > 1.0:
        raise ModelError(f"{what} restitution (Newton's coefficient, law='hard') must be <= 1, got {restitution!r}")
    return e, number(friction, f"{what} friction (coefficient)", 0.0)


def hard_plane(
    normal: object, offset: object, restitution: object, friction: object, group: object, mask: object, what: str
) -> Plane:
    """A checked hard (nonsmooth) :class:`Plane`: ``0 <= restitution <= 1``, ``friction >= 0``
    (``what`` names it in errors)."""
    n = vector(normal, f"{what} normal")
    length = float(np.linalg.norm(n))
    if length == 0.0:
        raise ModelError(f"{what} normal must not be zero")
    d = number(offset, f"{what} offset [m]")
    e, mu = hard_law(restitution, friction, what)
    param = np.array([0.0, 0.0, 0.0, 0.0, mu, 0.0])
    return Plane(n / length, d, param, bits(group, f"{what} group"), bits(mask, f"{what} mask"), "hard", e)


def box_corners(half_extents: object, center: np.ndarray, axes: object, what: str) -> np.ndarray:
    """The eight corners (8, 3) of a box of ``half_extents`` [m] about ``center`` whose edges lie
    along the columns of ``axes`` (a rotation matrix, identity when None)."""
    h = vector(half_extents, f"{what} half_extents [m]")
    if np.any(h <= 0.0):
        raise ModelError(f"{what} half_extents must be > 0 [m], got {tuple(h)}")
    if axes is None:
        r = np.eye(3)
    else:
        try:
            r = np.asarray(axes, dtype=np.float64)
        except (TypeError, ValueError):
            raise ModelError(f"{what} axes must be a 3×3 rotation matrix, got {axes!r}") from None
        if r.shape != (3, 3) or not np.all(np.isfinite(r)):
            raise ModelError(f"{what} axes must be a 3×3 rotation matrix of finite numbers")
        if float(np.abs(r.T @ r - np.eye(3)).max()) > 1e-6 or np.linalg.det(r) <= 0.0:
            raise ModelError(f"{what} axes must be a rotation matrix (orthonormal columns, determinant +1)")
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    return center + (signs * h) @ r.T


def pairs(shapes: list[Shape], planes: list[Plane], law: str = "compliant") -> list[tuple[int, int]]:
    """(shape, plane) ids of the pairs the filter keeps, plane by plane, shapes in order, for the
    planes of contact ``law`` ("compliant" or "hard")."""
    return [(i, j) for j, pl in enumerate(planes) if pl.law == law for i, sh in enumerate(shapes) if accepts(sh, pl)]


def accepts(a: Shape | Plane, b: Shape | Plane) -> bool:
    """The filter: ``a.group & b.mask`` and ``b.group & a.mask`` both non-zero."""
    return (a.group & b.mask) != 0 and (b.group & a.mask) != 0


def sphere_pairs(
    shapes: list[Shape], excluded: set[tuple[int, int]], joined: set[tuple[int, int]]
) -> list[tuple[int, int, int]]:
    """Candidate body–body pairs ``(shape 1, shape 2, point of shape 1)``: a sphere (point 0)
    against a sphere, capsule or box, the sphere first (the lower id of two spheres); each of two
    boxes' eight corners (radius 0) against the other box; two capsules, axis against axis (point
    −1: the whole segment of shape 1, the lower id); a capsule's two end spheres (points 0, 1)
    against a box, the capsule first.  On two different nodes, accepted by the filter, not
    ``excluded`` (shape ids, sorted) and their nodes not ``joined`` (node pairs, sorted)."""
    out = []
    for i, a in enumerate(shapes):
        for j, b in enumerate(shapes):
            if a.kind == "sphere":
                if b.kind not in ("sphere", "capsule", "box") or (b.kind == "sphere" and j <= i):
                    continue
                points: range | tuple[int, ...] = range(a.points.shape[0])
            elif a.kind == "box":
                if b.kind != "box":
                    continue
                points = range(a.points.shape[0])
            elif a.kind == "capsule":
                if b.kind == "capsule" and j > i:
                    points = (-1,)
                elif b.kind == "box":
                    points = range(a.points.shape[0])
                else:
                    continue
            else:
                continue
            if a.node == b.node or (min(i, j), max(i, j)) in excluded or tuple(sorted((a.node, b.node))) in joined:
                continue
            if accepts(a, b):
                out.extend((i, j, k) for k in points)
    return out


def box_frame(shape: Shape) -> np.ndarray:
    """(4, 3): a box shape's centre offset, then its three half-axis vectors (edge direction times
    half extent) [m], from its eight corners in :func:`box_corners`' order; zeros for a sphere or
    a capsule."""
    out = np.zeros((4, 3))
    if shape.kind == "box":
        corners = shape.points
        out[0] = corners.mean(axis=0)
        # box_corners: corner index 4 sx + 2 sy + sz (sign −1 then +1): differences along each axis
        out[1] = 0.5 * (corners[4] - corners[0])
        out[2] = 0.5 * (corners[2] - corners[0])
        out[3] = 0.5 * (corners[1] - corners[0])
    return out


def pair_fields(
    shapes: list[Shape], candidates: list[tuple[int, int, int]], law: np.ndarray | None
) -> dict[str, object]:
    """The ``n_pairs`` and ``pair_*`` fields of the Model (none without a body–body ``law``), one
    row per candidate ``(shape 1, shape 2, point of shape 1)`` (:func:`sphere_pairs`; point −1:
    shape 1's segment, its ends in ``pair_offset`` rows 0 and 3; otherwise row 3 repeats row 0)."""
    rows = candidates if law is not None else []
    n = len(rows)
    out: dict[str, object] = {
        "n_pairs": n,
        "pair_node": np.array([[shapes[i].node, shapes[j].node] for i, j, _ in rows], dtype=np.int64).reshape(n, 2),
        "pair_shape": np.array([(i, j) for i, j, _ in rows], dtype=np.int64).reshape(n, 2),
        "pair_offset": np.array(
            [
                [shapes[i].points[max(k, 0)], shapes[j].points[0], shapes[j].points[-1], shapes[i].points[k]]
                for i, j, k in rows
            ]
        ).reshape(n, 4, 3),
        "pair_radius": np.array([[shapes[i].radii[max(k, 0)], shapes[j].radii[0]] for i, j, k in rows]).reshape(n, 2),
        "pair_param": np.array([law for _ in rows], dtype=np.float64).reshape(n, 6),
        "pair_box": np.array([box_frame(shapes[j]) for _, j, _ in rows], dtype=np.float64).reshape(n, 4, 3),
    }
    for value in out.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return out


def contact_fields(shapes: list[Shape], planes: list[Plane]) -> dict[str, object]:
    """The ``n_contacts`` and ``contact_*`` fields of the Model: one row per point of every kept pair."""
    rows = [(i, j, k) for i, j in pairs(shapes, planes) for k in range(shapes[i].points.shape[0])]
    n = len(rows)
    out: dict[str, object] = {
        "n_contacts": n,
        "contact_node": np.array([shapes[i].node for i, _, _ in rows], dtype=np.int64),
        "contact_shape": np.array([i for i, _, _ in rows], dtype=np.int64),
        "contact_offset": np.array([shapes[i].points[k] for i, _, k in rows], dtype=np.float64).reshape(n, 3),
        "contact_radius": np.array([shapes[i].radii[k] for i, _, k in rows], dtype=np.float64),
        "contact_plane": np.array(
            [[*planes[j].normal, planes[j].offset] for _, j, _ in rows], dtype=np.float64
        ).reshape(n, 4),
        "contact_param": np.array([planes[j].param for _, j, _ in rows], dtype=np.float64).reshape(n, 6),
    }
    for value in out.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return out


def hard_contact_fields(shapes: list[Shape], planes: list[Plane]) -> np.ndarray:
    """The ``hard_contacts`` field of the Model (K, :data:`HARD_COLUMNS`), read-only: one row per
    point of every pair of a shape and a hard plane that the filter keeps (a sphere's centre, a
    capsule's two end spheres, a box's eight corners): node, shape, plane, offset from the node
    at the reference configuration (3) [m], radius [m], the plane's unit normal n (3) and offset
    d [m], restitution e [-], friction coefficient μ [-]."""
    rows = [
        [shapes[i].node, i, j, *shapes[i].points[k], shapes[i].radii[k], *planes[j].normal, planes[j].offset,
         planes[j].restitution, planes[j].param[4]]
        for i, j in pairs(shapes, planes, "hard")
        for k in range(shapes[i].points.shape[0])
    ]  # fmt: skip
    out = np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(len(rows), HARD_COLUMNS))
    out.setflags(write=False)
    return out


#: kind codes of the shape table
SPHERE, CAPSULE, BOX = 0, 1, 2
KIND_CODES = {"sphere": SPHERE, "capsule": CAPSULE, "box": BOX}


@dataclass(frozen=True)
class ShapeTable:
    """Struct of arrays over S shapes.

    Attributes
    ----------
    node : (S,) ndarray of int64
        The node (body) of each shape.
    kind : (S,) ndarray of int64
        ``SPHERE`` (0), ``CAPSULE`` (1) or ``BOX`` (2).
    offset : (S, 3) ndarray of float
        The shape centre's offset from its node, reference frame [m].
    frame : (S, 4) ndarray of float
        The rotation quaternion of the shape's local axes, reference frame.
    dims : (S, 3) ndarray of float
        Sphere ``(r, 0, 0)``, capsule ``(r, half-length, 0)``, box half extents [m].
    group, mask : (S,) ndarray of int64
        The pair filter's bit masks.
    """

    node: np.ndarray
    kind: np.ndarray
    offset: np.ndarray
    frame: np.ndarray
    dims: np.ndarray
    group: np.ndarray
    mask: np.ndarray

    def __len__(self) -> int:
        return int(self.node.shape[0])


def matrix_quaternion(r: np.ndarray) -> np.ndarray:
    """The unit quaternion (4,) ``(w, x, y, z)`` of a rotation matrix (3, 3) (Shepperd's method)."""
    t = np.trace(r)
    k = int(np.argmax([t, r[0, 0], r[1, 1], r[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def _axis_frame(axis: np.ndarray) -> np.ndarray:
    """A rotation matrix whose third column is the unit vector ``axis``."""
    z = axis / np.linalg.norm(axis)
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def shape_table(shapes: Sequence[Shape]) -> ShapeTable:
    """The shape table of the builder's shapes (:attr:`kynemapy.ModelBuilder.shapes`).

    The kind is the shape's own (never told from its point count); the pose and dimensions come
    from its reference points: a sphere's centre, a capsule's two axis ends, a box's eight
    corners in :func:`kynemapy.model.contact.box_corners`' order.

    Parameters
    ----------
    shapes : sequence of kynemapy.model.contact.Shape
        The shapes, in shape-id order.

    Returns
    -------
    ShapeTable
        One row per shape.
    """
    s = len(shapes)
    node = np.zeros(s, dtype=np.int64)
    kind = np.zeros(s, dtype=np.int64)
    offset = np.zeros((s, 3))
    frame = np.zeros((s, 4))
    dims = np.zeros((s, 3))
    group = np.zeros(s, dtype=np.int64)
    mask = np.zeros(s, dtype=np.int64)
    for i, sh in enumerate(shapes):
        node[i], kind[i], group[i], mask[i] = sh.node, KIND_CODES[sh.kind], sh.group, sh.mask
        p = np.asarray(sh.points, dtype=float)
        rot = np.eye(3)
        if sh.kind == "sphere":
            offset[i] = p[0]
            dims[i, 0] = float(sh.radii[0])
        elif sh.kind == "capsule":
            offset[i] = 0.5 * (p[0] + p[1])
            half = 0.5 * float(np.linalg.norm(p[1] - p[0]))
            if half > 0.0:
                rot = _axis_frame(p[1] - p[0])
            dims[i, :2] = float(sh.radii[0]), half
        else:
            offset[i] = p.mean(axis=0)
            edges = np.array([p[4] - p[0], p[2] - p[0], p[1] - p[0]])  # 2 h_k a_k, k = x, y, z
            h = 0.5 * np.linalg.norm(edges, axis=1)
            rot = (edges / (2.0 * h[:, None])).T
            dims[i] = h
        frame[i] = matrix_quaternion(rot)
    return ShapeTable(node, kind, offset, frame, dims, group, mask)


__all__ = [
    "ALL_GROUPS",
    "BOX",
    "CAPSULE",
    "DAMPING_MODELS",
    "HARD_COLUMNS",
    "KIND_CODES",
    "PLANE_LAWS",
    "SPHERE",
    "Plane",
    "Shape",
    "ShapeTable",
    "accepts",
    "box_corners",
    "box_frame",
    "contact_fields",
    "hard_contact_fields",
    "hard_plane",
    "law",
    "matrix_quaternion",
    "pair_fields",
    "pairs",
    "plane",
    "shape_table",
    "sphere_pairs",
]  # fmt: skip
