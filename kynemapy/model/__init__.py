"""The frozen model: NamedTuple tables of read-only arrays, and the DOF map.

Names follow Kynema (``x0``) and MuJoCo (``{entity}_{attr}``, ``n_{entity}``).
Units: SI (m, kg, s, rad, N, N m).  Arrays are C-contiguous float64 / int64 and
made read-only, so a compiled kernel that tries to write one fails to compile.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: the contact fields of :class:`Model` and their trailing shapes (read-only empty arrays for a
#: model without contact, and for result files written before contact existed)
CONTACT_FIELDS: tuple[tuple[str, tuple[int, ...], type], ...] = (
    ("contact_node", (), np.int64),
    ("contact_shape", (), np.int64),
    ("contact_offset", (3,), np.float64),
    ("contact_radius", (), np.float64),
    ("contact_plane", (4,), np.float64),
    ("contact_param", (6,), np.float64),
    ("pair_node", (2,), np.int64),
    ("pair_shape", (2,), np.int64),
    ("pair_offset", (4, 3), np.float64),
    ("pair_radius", (2,), np.float64),
    ("pair_param", (6,), np.float64),
    ("pair_box", (4, 3), np.float64),
)


def _empty(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    out = np.zeros((0, *shape), dtype=dtype)
    out.setflags(write=False)
    return out


_EMPTY_CONTACTS = {name: _empty(shape, dtype) for name, shape, dtype in CONTACT_FIELDS}


def no_contacts() -> dict[str, np.ndarray]:
    """The contact fields of a model without contact (read-only empty arrays)."""
    return dict(_EMPTY_CONTACTS)


class Model(NamedTuple):
    """A built model (see :class:`kynemapy.ModelBuilder`): read-only arrays, SI units.

    N = ``n_nodes``, C = ``n_constraints``; beams are padded to the largest node count P and
    quadrature-point count Q of the model's elements (P = 2, Q = 1 without beams).

    Attributes
    ----------
    n_nodes : int
        The number of nodes N.
    n_masses : int
        The number of mass elements.
    n_springs : int
        The number of springs.
    n_constraints : int
        The number of constraints C.
    n_system_dofs : int
        The node DOFs (6 per body node, 3 per position-only node).
    n_dofs : int
        ``n_system_dofs`` plus the constraint rows: the size of the Newton system.
    x0 : (N, 7) ndarray of float
        Reference position [m] and orientation quaternion (w, x, y, z) of each node.
    node_dofs : (N,) ndarray of int64
        The active DOFs of each node (0, 3 or 6).
    node_map : (N,) ndarray of int64
        The first row of each node in the Newton system.
    gravity : (3,) ndarray of float
        Gravitational acceleration [m/s²].
    mass_node : (n_masses,) ndarray of int64
        The node of each mass element.
    mass_m_star : (n_masses, 6, 6) ndarray of float
        Material mass matrix M* [kg, kg m, kg m²] of each mass element, about its node.
    spring_node : (n_springs, 2) ndarray of int64
        The two nodes of each spring.
    spring_x0 : (n_springs, 3) ndarray of float
        Reference vector X2 − X1 [m] of each spring.
    spring_l_ref : (n_springs,) ndarray of float
        Undeformed length [m] of each spring.
    spring_k : (n_springs,) ndarray of float
        Stiffness [N/m] of each spring.
    constraint_kind : (C,) ndarray of int64
        Kind code of each constraint (:mod:`kynemapy.model.kinds`).
    constraint_node : (C, 2) ndarray of int64
        Base and target node of each constraint (base −1 for one-node kinds).
    constraint_n_rows : (C,) ndarray of int64
        The number of rows of each constraint.
    constraint_row : (C,) ndarray of int64
        The first row of each constraint in the Newton system.
    constraint_X0 : (C, 3) ndarray of float
        Reference vector of each constraint [m]: for two-body joints X_b − X_a (X_a = 0
        for the ground).
    constraint_axes : (C, 3, 3) ndarray of float
        Kynema's axes of each constraint; for the point-on-line, point-on-plane and generic
        joints their row list (:func:`kynemapy.model.kinds.encode_rows`); for hinge and slider
        joints their drive: ``[0]`` spring stiffness, rest position, damping, ``[1, :2]``
        Coulomb friction level and regularization rate (docs/joints.md, "Drives").
    initial_q : (N, 7) ndarray of float
        Initial displacement [m] and rotation quaternion (w, x, y, z) of each node.
    initial_v : (N, 6) ndarray of float
        Initial velocity [m/s, rad/s] of each node.
    initial_vd : (N, 6) ndarray of float
        Initial acceleration [m/s², rad/s²] of each node.
    initial_vd_given : (N,) ndarray of int64
        1 where the node's initial acceleration was given, else 0.
    initial_constraint_input : (C, 7) ndarray of float
        Initial input of each constraint (a prescribed displacement and quaternion, a
        torque [N m], a force [N] or an angle [rad] in its first entry; a hinge's or slider's
        servo in entries 1-6, see :class:`kynemapy.Inputs`).
    constraint_geometry : (C, 2, 4, 3) ndarray of float
        Two-body joints (kinds >= 9): per side (0 = base a, 1 = target b) the offset d [m]
        of the joint point from the node and up to three unit axes, world frame at the
        reference configuration (current point X + u + R(r) d, current axis R(r) e); for a
        ground side d is the world point.  Zero for Kynema's kinds.
    constraint_param : (C,) ndarray of float
        A distance constraint's length [m]; cos α of a universal joint's axes [-]; 0 for
        other kinds.
    n_beams : int
        The number of beam elements (Kynema's geometrically exact beam,
        :mod:`kynemapy.engine.elements.beams`).
    beam_node : (n_beams, P) ndarray of int64
        The nodes of each element (GLL points in span order), −1 padded.
    beam_n_nodes : (n_beams,) ndarray of int64
        Each element's own node count (<= P).
    beam_n_qps : (n_beams,) ndarray of int64
        Each element's own quadrature-point count (<= Q).
    beam_mu : (n_beams, 6) ndarray of float
        Structural damping coefficients μ [s] (D* = diag(μ) C*).
    beam_qp_weight : (n_beams, Q) ndarray of float
        Quadrature weights on [−1, 1].
    beam_qp_jacobian : (n_beams, Q) ndarray of float
        J = ‖dX/dξ‖ [m] at the quadrature points.
    beam_shape_interp : (n_beams, P, Q) ndarray of float
        Lagrange shape functions φ at the quadrature points.
    beam_shape_deriv : (n_beams, P, Q) ndarray of float
        Their derivatives dφ/dξ at the quadrature points.
    beam_qp_x0 : (n_beams, Q, 3) ndarray of float
        Reference position [m] of the quadrature points.
    beam_qp_r0 : (n_beams, Q, 4) ndarray of float
        Reference orientation (w, x, y, z) of the quadrature points.
    beam_qp_x0_prime : (n_beams, Q, 3) ndarray of float
        Unit tangent of the reference line at the quadrature points.
    beam_qp_m_star : (n_beams, Q, 6, 6) ndarray of float
        Sectional mass matrices [kg/m, kg, kg m] in the material frame (first axis along
        the beam).
    beam_qp_c_star : (n_beams, Q, 6, 6) ndarray of float
        Sectional stiffness matrices [N, N m, N m²] in the material frame.
    n_contacts : int
        The number of contact points (shape points against ground planes, docs/contact.md).
    contact_node : (n_contacts,) ndarray of int64
        The node of each contact point.
    contact_shape : (n_contacts,) ndarray of int64
        The shape (``ModelBuilder.add_sphere`` ... id) each contact point belongs to.
    contact_offset : (n_contacts, 3) ndarray of float
        Point offset from its node at the reference configuration, inertial frame [m].
    contact_radius : (n_contacts,) ndarray of float
        Radius of the point's sphere [m] (0: a box corner).
    contact_plane : (n_contacts, 4) ndarray of float
        Unit normal n and offset d [m] of the ground plane ``n · y = d``.
    contact_param : (n_contacts, 6) ndarray of float
        Stiffness k [N/m^e], exponent e, damping c [N s/m or N s/m^(1+e)], Hunt–Crossley flag,
        friction coefficient μ, slip-velocity regularization v_s [m/s].
    n_pairs : int
        The number of candidate pairs on two bodies (docs/contact.md): a sphere (body 1) and a
        sphere, capsule or box (body 2); a box corner and a box; two capsules (their axes); a
        capsule's end sphere and a box.
    pair_node : (n_pairs, 2) ndarray of int64
        The two nodes of each pair.
    pair_shape : (n_pairs, 2) ndarray of int64
        The two shapes of each pair (the sphere first; of two capsules the lower id; a
        capsule before a box).
    pair_offset : (n_pairs, 4, 3) ndarray of float
        Offsets from their nodes at the reference configuration [m]: body 1's point (a sphere's
        centre, a capsule's end a, a box corner), then the ends of body 2's segment (a capsule's
        axis; a sphere's centre twice), then body 1's second segment end (a capsule–capsule
        pair: its end b; otherwise row 0 again).
    pair_radius : (n_pairs, 2) ndarray of float
        The two radii [m].
    pair_param : (n_pairs, 6) ndarray of float
        The contact law, as ``contact_param``.
    pair_box : (n_pairs, 4, 3) ndarray of float
        Where body 2's shape is a box: its centre's offset from the node, then its three
        half-axis vectors (each edge direction times the half extent), at the reference
        configuration [m]; zeros where it is a sphere or a capsule.
    joint_stops : (K, 5) ndarray of float or None
        Hard (unilateral) hinge and slider limits, one row per joint: constraint id, kind,
        lower and upper limit [rad or m] and Newton's restitution coefficient e [-]
        (docs/joints.md, "Hard joint limits").  Not part of the compiled engine's data: the
        limits are enforced between the engine's steps (:mod:`kynemapy.run.joint_stops`).
        None or K = 0: none.
    hard_contacts : (K, 13) ndarray of float or None
        Points against hard (nonsmooth) ground planes (``add_ground_plane(law="hard")``), one row
        per point: node, shape, plane, offset from the node at the reference configuration (3)
        [m], radius [m], the plane's unit normal n (3) and offset d [m], Newton's restitution e
        [-], Coulomb's μ [-] (docs/contact.md).  Not part of the compiled engine's data: enforced
        between the engine's steps (:mod:`kynemapy.run.hard_contact`).  None or K = 0: none.
    hard_shapes : (S, 16) ndarray of float or None
        The shapes of a model whose bodies touch each other under the hard (nonsmooth) law
        (``set_body_contact(law="hard")``), one row per shape: node, kind code (0 sphere, 1
        capsule, 2 box), the centre's offset from the node at the reference configuration (3)
        [m], the local axes' quaternion (4), dims (3) [m] (sphere radius; capsule radius and
        half-length; box half extents), filter group and mask, Newton's restitution e [-],
        Coulomb's μ [-] (docs/contact.md, "Hard contact between bodies").  Not part of the
        compiled engine's data (:mod:`kynemapy.run.hard_bodies`).  None or S = 0: none.
    hard_excluded : (E, 2) ndarray of int64 or None
        Shape pairs that never touch under the hard body law (``exclude_contact``).
    """

    n_nodes: int
    n_masses: int
    n_springs: int
    n_constraints: int
    n_system_dofs: int
    n_dofs: int
    x0: np.ndarray
    node_dofs: np.ndarray
    node_map: np.ndarray
    gravity: np.ndarray
    mass_node: np.ndarray
    mass_m_star: np.ndarray
    spring_node: np.ndarray
    spring_x0: np.ndarray
    spring_l_ref: np.ndarray
    spring_k: np.ndarray
    constraint_kind: np.ndarray
    constraint_node: np.ndarray
    constraint_n_rows: np.ndarray
    constraint_row: np.ndarray
    constraint_X0: np.ndarray
    constraint_axes: np.ndarray
    initial_q: np.ndarray
    initial_v: np.ndarray
    initial_vd: np.ndarray
    initial_vd_given: np.ndarray
    initial_constraint_input: np.ndarray
    constraint_geometry: np.ndarray
    constraint_param: np.ndarray
    n_beams: int = 0
    beam_node: np.ndarray | None = None
    beam_n_nodes: np.ndarray | None = None
    beam_n_qps: np.ndarray | None = None
    beam_mu: np.ndarray | None = None
    beam_qp_weight: np.ndarray | None = None
    beam_qp_jacobian: np.ndarray | None = None
    beam_shape_interp: np.ndarray | None = None
    beam_shape_deriv: np.ndarray | None = None
    beam_qp_x0: np.ndarray | None = None
    beam_qp_r0: np.ndarray | None = None
    beam_qp_x0_prime: np.ndarray | None = None
    beam_qp_m_star: np.ndarray | None = None
    beam_qp_c_star: np.ndarray | None = None
    n_contacts: int = 0
    contact_node: np.ndarray = _EMPTY_CONTACTS["contact_node"]
    contact_shape: np.ndarray = _EMPTY_CONTACTS["contact_shape"]
    contact_offset: np.ndarray = _EMPTY_CONTACTS["contact_offset"]
    contact_radius: np.ndarray = _EMPTY_CONTACTS["contact_radius"]
    contact_plane: np.ndarray = _EMPTY_CONTACTS["contact_plane"]
    contact_param: np.ndarray = _EMPTY_CONTACTS["contact_param"]
    n_pairs: int = 0
    pair_node: np.ndarray = _EMPTY_CONTACTS["pair_node"]
    pair_shape: np.ndarray = _EMPTY_CONTACTS["pair_shape"]
    pair_offset: np.ndarray = _EMPTY_CONTACTS["pair_offset"]
    pair_radius: np.ndarray = _EMPTY_CONTACTS["pair_radius"]
    pair_param: np.ndarray = _EMPTY_CONTACTS["pair_param"]
    pair_box: np.ndarray = _EMPTY_CONTACTS["pair_box"]
    joint_stops: np.ndarray | None = None
    hard_contacts: np.ndarray | None = None
    hard_shapes: np.ndarray | None = None
    hard_excluded: np.ndarray | None = None


#: the beam fields of :class:`Model` and their shapes with P (nodes per element) and Q (points)
BEAM_FIELDS: tuple[tuple[str, tuple[str | int, ...], type], ...] = (
    ("beam_node", ("P",), np.int64),
    ("beam_n_nodes", (), np.int64),
    ("beam_n_qps", (), np.int64),
    ("beam_mu", (6,), np.float64),
    ("beam_qp_weight", ("Q",), np.float64),
    ("beam_qp_jacobian", ("Q",), np.float64),
    ("beam_shape_interp", ("P", "Q"), np.float64),
    ("beam_shape_deriv", ("P", "Q"), np.float64),
    ("beam_qp_x0", ("Q", 3), np.float64),
    ("beam_qp_r0", ("Q", 4), np.float64),
    ("beam_qp_x0_prime", ("Q", 3), np.float64),
    ("beam_qp_m_star", ("Q", 6, 6), np.float64),
    ("beam_qp_c_star", ("Q", 6, 6), np.float64),
)


def no_beams() -> dict[str, np.ndarray]:
    """The beam fields of a model without beams (read-only empty arrays, P = 2, Q = 1): for
    models built before beams existed and for result files written by such versions."""
    sizes = {"P": 2, "Q": 1}
    return {
        name: freeze(np.zeros((0, *(sizes[d] if isinstance(d, str) else d for d in shape)), dtype=dtype), dtype)
        for name, shape, dtype in BEAM_FIELDS
    }


def no_joint_stops() -> np.ndarray:
    """The ``joint_stops`` field of a model without hard joint limits: a read-only (0, 5) array."""
    return freeze(np.zeros((0, 5)), np.float64)


def no_hard_contacts() -> np.ndarray:
    """The ``hard_contacts`` field of a model without hard ground planes: a read-only (0, 13) array."""
    return freeze(np.zeros((0, 13)), np.float64)


def no_hard_shapes() -> np.ndarray:
    """The ``hard_shapes`` field of a model without the hard body law: a read-only (0, 16) array."""
    return freeze(np.zeros((0, 16)), np.float64)


def no_hard_excluded() -> np.ndarray:
    """The ``hard_excluded`` field of a model without the hard body law: a read-only (0, 2) array."""
    return freeze(np.zeros((0, 2), dtype=np.int64), np.int64)


#: the hard-contact fields a Model made by hand may leave None, and what None means
HARD_DEFAULTS = {
    "joint_stops": no_joint_stops,
    "hard_contacts": no_hard_contacts,
    "hard_shapes": no_hard_shapes,
    "hard_excluded": no_hard_excluded,
}


def freeze(a: np.ndarray, dtype: type) -> np.ndarray:
    """A C-contiguous, read-only copy of ``a``."""
    out = np.ascontiguousarray(np.array(a, dtype=dtype, copy=True))
    out.setflags(write=False)
    return out


def dof_map(node_dofs: np.ndarray) -> np.ndarray:
    """Exclusive prefix sum of the node DOF counts (Kynema's node freedom map)."""
    out = np.zeros(len(node_dofs), dtype=np.int64)
    if len(node_dofs) > 1:
        out[1:] = np.cumsum(node_dofs)[:-1]
    return out
