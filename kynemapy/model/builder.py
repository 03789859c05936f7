"""ModelBuilder: add nodes, masses, springs and constraints, then ``build()`` a :class:`Model`.

Every ``add_*`` validates its arguments and raises :class:`ModelError` naming
the item and the offending value.  Units: SI (m, kg, s, rad, N, N m).
Positions, axes and velocities are given in the inertial (world) frame.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kynemapy.model import BEAM_FIELDS, Model, contact, dof_map, freeze, kinds, no_hard_excluded, no_hard_shapes
from kynemapy.model.beams import (
    Beam,
    beam_layout,
    rotate_about_point,
    set_acceleration_about_point,
    set_velocity_about_point,
    translate,
)
from kynemapy.model.errors import ModelError

ArrayLike = Sequence[float] | np.ndarray

#: the ground (the fixed world frame), usable as ``body_a`` or ``body_b`` of a two-body joint
GROUND = -1


class SphericalJoint(int):
    """What :meth:`ModelBuilder.add_spherical_joint` returns: an ``int``, the id of its joint (the
    6→3 rigid joint body → pin), like every ``add_*``, carrying the ids of all three pieces.

    Attributes
    ----------
    pin : int
        Id of the position-only node at the joint point.
    joint : int
        Id of the 6→3 rigid joint body → pin (= the value of this int).
    bc : int
        Id of the fixed 3-DOF BC that holds the pin.

    Notes
    -----
    Earlier versions returned the tuple ``(pin, joint, bc)``; unpacking or indexing it still
    works but raises a :class:`DeprecationWarning` (use the attributes).
    """

    pin: int
    joint: int
    bc: int

    def __new__(cls, pin: int, joint: int, bc: int) -> SphericalJoint:
        self = super().__new__(cls, joint)
        self.pin, self.joint, self.bc = int(pin), int(joint), int(bc)
        return self

    def __getnewargs__(self) -> tuple[int, int, int]:  # copy, pickle
        return self.pin, self.joint, self.bc

    def __repr__(self) -> str:
        return f"SphericalJoint(pin={self.pin}, joint={self.joint}, bc={self.bc})"

    def _as_tuple(self) -> tuple[int, int, int]:
        warnings.warn(
            "add_spherical_joint returns the joint's id (an int) with attributes .pin, .joint, .bc; "
            "unpacking or indexing it as the tuple (pin, joint, bc) is deprecated",
            DeprecationWarning,
            stacklevel=3,
        )
        return self.pin, self.joint, self.bc

    def __iter__(self):  # deprecated tuple behaviour
        return iter(self._as_tuple())

    def __getitem__(self, i: int) -> int:  # deprecated tuple behaviour
        return self._as_tuple()[i]

    def __len__(self) -> int:  # deprecated tuple behaviour
        return len(self._as_tuple())


@dataclass
class _Node:
    position: np.ndarray
    orientation: np.ndarray
    displacement: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray | None


#: default regularization rate v_s of the Coulomb joint friction [rad/s or m/s]
DEFAULT_FRICTION_RATE = 1e-2


def servo_inputs(
    kp: float, kd: float, position: float, rate: float, feedforward: float, limit: float | None
) -> np.ndarray:
    """The servo's six constraint inputs (columns 1-6 of ``Inputs.constraint_input``: kp, kd,
    position, rate, feed-forward, limit with 0 for none), checked (``ValueError`` naming the bad one)."""
    values = []
    for name, value in (("kp", kp), ("kd", kd), ("position", position), ("rate", rate), ("feedforward", feedforward)):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"servo {name} must be a number, got {value!r}") from None
        if not math.isfinite(x):
            raise ValueError(f"servo {name} must be finite, got {value!r}")
        if name in ("kp", "kd") and x < 0.0:
            raise ValueError(f"servo {name} must be >= 0, got {value!r}")
        values.append(x)
    if limit is None:
        lim = 0.0
    else:
        try:
            lim = float(limit)
        except (TypeError, ValueError):
            raise ValueError(f"servo limit must be a number or None, got {limit!r}") from None
        if math.isnan(lim) or lim <= 0.0:
            raise ValueError(f"servo limit must be > 0 (None or inf: no limit), got {limit!r}")
        if math.isinf(lim):
            lim = 0.0
    return np.array([*values, lim])


@dataclass
class _Constraint:
    kind: int
    base: int
    target: int
    axis: np.ndarray
    initial_input: np.ndarray
    geometry: np.ndarray | None = None  #: two-body joints: (2, 4, 3), see Model.constraint_geometry
    param: float = 0.0
    listed: np.ndarray | None = None  #: point-on-line/plane, generic joints: row list (3, 3), kinds.encode_rows
    n_rows: int | None = None  #: rows of a joint with a row list (else kinds.N_ROWS of its kind)
    drive: np.ndarray | None = None  #: hinge, slider: spring, damper, friction (3, 3), see joint_drive_array
    stops: tuple[float, float, float] | None = None  #: hinge, slider: hard limits (lower, upper, restitution)


def _vector(value: ArrayLike | float, size: int, what: str, *, finite: bool = True) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{what}: expected {size} numbers, got {value!r}") from exc
    if arr.shape != (size,):
        raise ModelError(f"{what}: expected {size} numbers, got shape {arr.shape} ({value!r})")
    if finite and not np.all(np.isfinite(arr)):
        raise ModelError(f"{what}: values must be finite, got {arr.tolist()}")
    return arr.copy()


def _quaternion(value: ArrayLike, what: str) -> np.ndarray:
    q = _vector(value, 4, what)
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > 1e-6:
        raise ModelError(f"{what}: quaternion (w, x, y, z) must have unit length, |q| = {norm:.9g} for {q.tolist()}")
    return q


def real_number(value: object) -> float | None:
    """``value`` as a float, or None when it is not a real number.  Text and booleans are refused,
    not parsed (``"0.5"`` or ``True`` given for a number is a mistake in the caller, which
    ``float()`` would hide); numpy's numbers are taken.  Whether it is finite is the caller's."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _nonnegative(value: object, message: str) -> float:
    """``value`` as a finite float >= 0, else :class:`ModelError` ``message, got value``."""
    x = real_number(value)
    if x is None or not math.isfinite(x) or x < 0.0:
        raise ModelError(f"{message}, got {value!r}")
    return x


class ModelBuilder:
    """Describe a multibody model item by item.

    Parameters
    ----------
    gravity : (3,) array_like [m/s²]
        Gravitational acceleration [m/s²], acting on masses only.

    Examples
    --------
    >>> import kynemapy as kp
    >>> b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    >>> top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538))
    >>> b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    0
    >>> joint = b.add_spherical_joint(top, point=(0, 0, 0))
    >>> model = b.build()
    """

    def __init__(self, gravity: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        self.gravity = _vector(gravity, 3, "ModelBuilder gravity")
        self._nodes: list[_Node] = []
        self._masses: list[tuple[int, np.ndarray]] = []
        self._springs: list[tuple[int, int, float, float]] = []
        self._beams: list[tuple[list[int], Any, np.ndarray]] = []
        #: per beam element: (node_s, quadrature, section_s, m_star, c_star, node x0 its tables were made from)
        self._beam_inputs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._n_named_beams = 0
        self._constraints: list[_Constraint] = []
        self._shapes: list[contact.Shape] = []
        self._planes: list[contact.Plane] = []
        self._body_law: np.ndarray | None = None
        #: the hard body law (restitution, friction), None without
        self._hard_body_law: tuple[float, float] | None = None
        self._excluded: set[tuple[int, int]] = set()

    # ------------------------------------------------------------------ nodes
    def add_node(
        self,
        position: ArrayLike = (0.0, 0.0, 0.0),
        orientation: ArrayLike = (1.0, 0.0, 0.0, 0.0),
        velocity: ArrayLike = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        acceleration: ArrayLike | None = None,
        displacement: ArrayLike | None = None,
    ) -> int:
        """Add a node and return its id (insertion index).

        Parameters
        ----------
        position : (3,) array_like [m]
            Reference position X [m].
        orientation : (4,) array_like
            Reference orientation quaternion r0 (w, x, y, z), unit length.
        velocity : (6,) array_like [m/s]
            Initial (u̇ [m/s], ω [rad/s]), inertial frame.
        acceleration : (6,) array_like [m/s²], optional
            Initial (ü [m/s²], ω̇ [rad/s²]), inertial frame.  Leave it
            out on every node to have consistent accelerations computed at t = 0;
            where some nodes have one, the others start from zero (Kynema's rule).
        displacement : (7,) array_like [m], optional
            Initial displacement (u [m], rotation quaternion), default none.
        """
        i = len(self._nodes)
        pos = _vector(position, 3, f"node {i} position")
        ori = _quaternion(orientation, f"node {i} orientation")
        vel = _vector(velocity, 6, f"node {i} velocity")
        acc = None if acceleration is None else _vector(acceleration, 6, f"node {i} acceleration")
        if displacement is None:
            disp = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        else:
            disp = _vector(displacement, 7, f"node {i} displacement")
            _quaternion(disp[3:], f"node {i} displacement rotation")
        self._nodes.append(_Node(pos, ori, disp, vel, acc))
        return i

    def _node(self, node: int, what: str) -> int:
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
            raise ModelError(f"{what}: node id must be an integer, got {node!r}")
        if not 0 <= int(node) < len(self._nodes):
            raise ModelError(
                f"{what}: unknown node id {node} (the model has {len(self._nodes)} nodes: 0..{len(self._nodes) - 1})"
            )
        return int(node)

    # ---------------------------------------------------------------- elements
    def add_mass(
        self,
        node: int,
        mass: float | None = None,
        inertia: ArrayLike | None = None,
        mass_matrix: ArrayLike | None = None,
    ) -> int:
        """Attach a rigid body to ``node`` and return the mass element id.

        Either ``mass`` [kg] and ``inertia`` [kg m²] about the node in the body frame
        (3 principal values or a symmetric 3×3 matrix), or ``mass_matrix``: the full 6×6
        material mass matrix M* = [[m I, m η̃ᵀ], [m η̃, J]] (η: centre-of-mass offset).

        Parameters
        ----------
        node : int
            The node id the body is attached to.
        mass : float or None, default None
            The mass m [kg] (> 0); give it with ``inertia``.
        inertia : (3,) or (3, 3) array_like or None, default None
            The inertia about the node, body frame [kg m²]: 3 principal values or a
            symmetric 3×3 matrix; give it with ``mass``.
        mass_matrix : (6, 6) array_like of float or None, default None
            The material mass matrix M* [kg, kg m, kg m²] instead of ``mass`` and
            ``inertia``: symmetric, positive definite.

        Returns
        -------
        int
            The mass element id.

        Raises
        ------
        ModelError
            An unknown node, both or neither of (``mass``, ``inertia``) and ``mass_matrix``,
            a mass <= 0, a matrix of the wrong shape, not finite, not symmetric or not
            positive definite, or principal moments no rigid body has (I1 + I2 < I3).
        """
        what = f"mass {len(self._masses)}"
        node = self._node(node, what)
        if mass_matrix is not None:
            if mass is not None or inertia is not None:
                raise ModelError(f"{what}: give either mass and inertia, or mass_matrix, not both")
            try:
                m_star = np.asarray(mass_matrix, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ModelError(f"{what}: mass_matrix must be a 6×6 array of numbers, got {mass_matrix!r}") from exc
            if m_star.shape != (6, 6):
                raise ModelError(f"{what}: mass_matrix must be 6×6, got shape {m_star.shape}")
        else:
            if mass is None or inertia is None:
                raise ModelError(f"{what}: give mass [kg] and inertia [kg m²] (or mass_matrix)")
            m = real_number(mass)
            if m is None or not math.isfinite(m) or m <= 0.0:
                raise ModelError(f"{what}: mass must be a finite number > 0 kg, got {mass!r}")
            try:
                j = np.asarray(inertia, dtype=np.float64)
            except (TypeError, ValueError):
                raise ModelError(
                    f"{what}: inertia must be 3 principal values or a 3×3 matrix of numbers [kg m²], got {inertia!r}"
                ) from None
            if j.shape == (3,):
                j = np.diag(j)
            if j.shape != (3, 3):
                raise ModelError(f"{what}: inertia must be 3 principal values or a 3×3 matrix, got shape {j.shape}")
            m_star = np.zeros((6, 6))
            m_star[:3, :3] = m * np.eye(3)
            m_star[3:, 3:] = j
        if not np.all(np.isfinite(m_star)):
            raise ModelError(f"{what}: mass matrix must be finite, got {m_star.tolist()}")
        if not np.allclose(m_star, m_star.T, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(m_star).max()))):
            raise ModelError(f"{what}: mass matrix must be symmetric")
        if m_star[0, 0] <= 0.0:
            raise ModelError(f"{what}: mass must be > 0 kg, got {m_star[0, 0]!r}")
        eig = np.linalg.eigvalsh(m_star)
        if eig.min() <= 0.0:
            raise ModelError(
                f"{what}: mass matrix must be positive definite (inertia positive definite), "
                f"smallest eigenvalue {eig.min():.6g}"
            )
        # every rigid body's principal moments obey the triangle inequality I1 + I2 >= I3 (they are
        # sums of m (y² + z²) etc.); the inertia about the node, J = J_c + m(|η|² I − η ηᵀ), does too
        principal = np.linalg.eigvalsh(m_star[3:, 3:])
        if principal[0] + principal[1] < principal[2] * (1.0 - 1e-9):
            raise ModelError(
                f"{what}: no rigid body has the principal moments of inertia {principal.tolist()} kg m²: "
                f"they must satisfy I1 + I2 >= I3 (here {principal[0]:.6g} + {principal[1]:.6g} < {principal[2]:.6g})"
            )
        self._masses.append((node, m_star.copy()))
        return len(self._masses) - 1

    def add_spring(self, node_a: int, node_b: int, stiffness: float, undeformed_length: float) -> int:
        """Linear spring between the positions of two nodes; returns the spring id.

        Parameters
        ----------
        node_a : int
            The node id of one end.
        node_b : int
            The node id of the other end (not ``node_a``).
        stiffness : float [N/m]
            The stiffness k (>= 0).
        undeformed_length : float [m]
            The length at which the spring carries no force (>= 0).

        Returns
        -------
        int
            The spring id.

        Raises
        ------
        ModelError
            An unknown node, ``node_a == node_b``, or a negative or non-finite stiffness or
            length.
        """
        what = f"spring {len(self._springs)}"
        a = self._node(node_a, what)
        b = self._node(node_b, what)
        if a == b:
            raise ModelError(f"{what}: joins node {a} to itself")
        k = _nonnegative(stiffness, f"{what}: stiffness must be a finite number >= 0 N/m")
        length = _nonnegative(undeformed_length, f"{what}: undeformed_length must be a finite number >= 0 m")
        self._springs.append((a, b, k, length))
        return len(self._springs) - 1

    # ---------------------------------------------------------------- contact
    def add_ground_plane(
        self,
        normal: ArrayLike = (0.0, 0.0, 1.0),
        offset: float = 0.0,
        *,
        stiffness: float | None = None,
        damping: float = 0.0,
        friction: float = 0.0,
        exponent: float = 1.0,
        damping_model: str = "linear",
        slip_velocity: float = 1e-3,
        group: int = 1,
        mask: int = contact.ALL_GROUPS,
        law: str = "compliant",
        restitution: float | None = None,
    ) -> int:
        """Add a ground half-space ``n · y <= d`` with its contact law; returns its id.

        Every shape whose filter accepts the plane (``shape.group & mask`` and ``group &
        shape.mask`` non-zero) gets its contact points against it (docs/contact.md).  A point
        of radius r at ``y`` penetrates by ``δ = d + r − n · y``.  With the default
        ``law="compliant"`` it gets the normal force
        ``max(0, k δ^e + c w δ̇)`` [N] (``w = 1`` linear, ``w = δ^e`` Hunt–Crossley) and the
        regularized Coulomb friction ``−μ f_n v_t / √(|v_t|² + v_s²)`` [N].  With
        ``law="hard"`` the plane is a nonsmooth unilateral constraint enforced after each step
        (:mod:`kynemapy.run.hard_contact`): no penetration (``δ <= 1e-12`` m), impacts by Newton's
        restitution law with coefficient e, exact Coulomb friction (stick and slip); it adds no
        point to the compiled contact element table (``Model.hard_contacts`` lists its points).

        Parameters
        ----------
        normal : (3,) array_like
            The outward normal n (normalized here; not zero).
        offset : float [m]
            d: the plane is ``n · y = d``.
        stiffness : float [N/m^e]
            k > 0; required with ``law="compliant"``, refused with ``law="hard"``.
        damping : float [N s/m], default 0
            c >= 0 [N s/m] (linear law) or [N s/m^(1+e)] (Hunt–Crossley).
        friction : float, default 0
            Coulomb coefficient μ >= 0 (both laws).
        exponent : float, default 1
            e >= 1 (1.5: Hertz for a sphere).
        damping_model : {"linear", "hunt_crossley"}, default "linear"
            The damping force ``c δ̇`` (linear: switches on at ``c v`` when a point touches at
            speed v) or ``c δ^e δ̇`` (Hunt–Crossley: from zero; the law for impacts).
        slip_velocity : float [m/s], default 1e-3
            v_s > 0: the slip speed at which friction reaches 1/√2 of μ f_n; a sticking contact
            creeps at ``v_s t/√(μ² − t²)`` with t the ratio of tangential to normal load.
        group, mask : int
            Collision filter bit masks (default group 1, mask every bit).
        law : {"compliant", "hard"}, default "compliant"
            The contact law: the compliant spring-damper above, or hard (nonsmooth) contact.
        restitution : float [-], default 0 with ``law="hard"``
            Newton's coefficient of restitution ``0 <= e <= 1`` of a hard plane (the normal
            velocity after an impact is ``−e`` times the one before); refused with
            ``law="compliant"`` (whose damping sets its restitution).

        Raises
        ------
        ModelError
            A zero or non-finite normal, k <= 0, c < 0, μ < 0, e < 1, v_s <= 0, an unknown
            damping model or a non-integer group or mask; an unknown ``law``; no ``stiffness``
            with ``law="compliant"``; with ``law="hard"``: a ``stiffness`` or another parameter
            of the compliant law (damping, exponent, damping_model, slip_velocity) given, or a
            restitution outside [0, 1].
        """
        what = f"ground plane {len(self._planes)}"
        if law not in contact.PLANE_LAWS:
            raise ModelError(f"{what} law must be one of {', '.join(map(repr, contact.PLANE_LAWS))}, got {law!r}")
        if law == "hard":
            if stiffness is not None:
                raise ModelError(
                    f"{what}: stiffness is a parameter of the compliant law and is refused with law='hard' "
                    "(a hard plane is rigid: give restitution and friction only)"
                )
            contact.refuse_compliant(
                what,
                {"damping": damping, "exponent": exponent, "damping_model": damping_model,
                 "slip_velocity": slip_velocity},
            )  # fmt: skip
            self._planes.append(contact.hard_plane(normal, offset, restitution, friction, group, mask, what))
            return len(self._planes) - 1
        if restitution is not None:
            raise ModelError(
                f"{what}: restitution applies to law='hard' only (the compliant law's restitution follows from "
                "its damping)"
            )
        if stiffness is None:
            raise ModelError(f"{what}: stiffness is required with law='compliant' (or give law='hard')")
        self._planes.append(
            contact.plane(
                normal, offset, stiffness, damping, friction, exponent, damping_model, slip_velocity, group, mask, what
            )
        )
        return len(self._planes) - 1

    def set_body_contact(
        self,
        *,
        stiffness: float | None = None,
        damping: float = 0.0,
        friction: float = 0.0,
        exponent: float = 1.0,
        damping_model: str = "linear",
        slip_velocity: float = 1e-3,
        law: str = "compliant",
        restitution: float | None = None,
    ) -> None:
        """Let spheres touch spheres, capsules and boxes on other bodies, boxes touch boxes by
        their corners, capsules touch capsules (axis against axis) and boxes (by their end
        spheres), with this compliant law (that of :meth:`add_ground_plane`); without it bodies
        pass through each other.

        Every pair of a sphere and a sphere, capsule or box, every corner of a box against
        another box, every two capsules (one pair: the closest points of the two axes, δ =
        r₁ + r₂ − distance [m]) and each of a capsule's two end spheres against a box, on two
        different nodes that the filter accepts (``a.group & b.mask`` and ``b.group & a.mask``
        non-zero), that is not excluded (:meth:`exclude_contact`) and whose bodies no joint
        joins becomes a candidate pair: its 12×12 block enters the Newton matrix's pattern, so
        the pattern grows with the candidates (docs/contact.md).  Limits: a capsule against a
        box touches only with its end spheres, so a capsule whose middle presses on a box edge
        or corner (its ends clear of the box) passes through it; two parallel capsules touch at
        one point, the middle of their overlap (not along a line); a box's edges against another
        box's are not built.

        Parameters
        ----------
        stiffness : float [N/m^e]
            k > 0.
        damping : float [N s/m], default 0
            c >= 0 [N s/m] (linear law) or [N s/m^(1+e)] (Hunt–Crossley).
        friction : float, default 0
            Coulomb coefficient μ >= 0.
        exponent : float, default 1
            e >= 1.
        damping_model : {"linear", "hunt_crossley"}, default "linear"
            The damping law (see :meth:`add_ground_plane`).
        slip_velocity : float [m/s], default 1e-3
            The friction's regularization v_s > 0.
        law : {"compliant", "hard"}, default "compliant"
            The compliant spring-damper above, or hard (nonsmooth) contact
            (:mod:`kynemapy.run.hard_bodies`, docs/contact.md "Hard contact between bodies"): no
            penetration (gaps >= −1e-12 m after each step), impacts by Newton's law with
            coefficient ``restitution``, exact Coulomb friction; every pair of shapes on two
            bodies (spheres, capsules and boxes, box edges against box edges included) found by a
            broad and a narrow phase at each step, no candidate table.  For rigid bodies, free
            or joined (joints and other constraints: the contacts' response through them, a
            dense solve meant for mechanisms of a few tens of bodies); :meth:`build` refuses it
            with beams or hard joint limits.
        restitution : float [-], default 0 with ``law="hard"``
            Newton's coefficient ``0 <= e <= 1``; refused with ``law="compliant"``.

        Raises
        ------
        ModelError
            A parameter out of its range; an unknown ``law``; no ``stiffness`` with the
            compliant law; with ``law="hard"``: a stiffness or another parameter of the
            compliant law given, or a restitution outside [0, 1].
        """
        what = "body contact"
        if law not in contact.PLANE_LAWS:
            raise ModelError(f"{what} law must be one of {', '.join(map(repr, contact.PLANE_LAWS))}, got {law!r}")
        if law == "hard":
            contact.refuse_compliant(
                what,
                {"stiffness": stiffness, "damping": damping, "exponent": exponent, "damping_model": damping_model,
                 "slip_velocity": slip_velocity},
            )  # fmt: skip
            self._body_law = None
            self._hard_body_law = contact.hard_law(restitution, friction, what)
            return
        if restitution is not None:
            raise ModelError(
                f"{what}: restitution applies to law='hard' only (the compliant law's restitution follows from "
                "its damping)"
            )
        if stiffness is None:
            raise ModelError(f"{what}: stiffness is required with law='compliant' (or give law='hard')")
        self._body_law = contact.law(stiffness, damping, friction, exponent, damping_model, slip_velocity, what)
        self._hard_body_law = None

    def exclude_contact(self, shape_a: int, shape_b: int) -> None:
        """Keep two shapes from touching each other (see :meth:`set_body_contact`).

        Parameters
        ----------
        shape_a, shape_b : int
            Shape ids (returned by :meth:`add_sphere`, :meth:`add_capsule`, :meth:`add_box`).

        Raises
        ------
        ModelError
            An unknown shape id.
        """
        ids = []
        for s in (shape_a, shape_b):
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= int(s) < len(self._shapes):
                raise ModelError(f"exclude_contact: unknown shape id {s!r} (shapes 0..{len(self._shapes) - 1})")
            ids.append(int(s))
        self._excluded.add((min(ids), max(ids)))

    @property
    def shapes(self) -> tuple[contact.Shape, ...]:
        """The collision shapes added so far, in shape-id order (read-only records; their
        ``points`` are offsets from the node at the reference configuration [m])."""
        return tuple(self._shapes)

    @property
    def planes(self) -> tuple[contact.Plane, ...]:
        """The ground planes added so far, in order."""
        return tuple(self._planes)

    @property
    def excluded_contacts(self) -> tuple[tuple[int, int], ...]:
        """The shape pairs :meth:`exclude_contact` keeps apart (lower id first), sorted."""
        return tuple(sorted(self._excluded))

    @property
    def joined_nodes(self) -> tuple[tuple[int, int], ...]:
        """The node pairs a constraint joins (lower id first), sorted: never in contact."""
        return tuple(sorted({(min(c.base, c.target), max(c.base, c.target)) for c in self._constraints if c.base >= 0}))

    def _shape(self, kind: str, node: int, points: np.ndarray, radii: np.ndarray, group: int, mask: int) -> int:
        what = f"{kind} (shape {len(self._shapes)})"
        self._shapes.append(
            contact.Shape(
                kind, node, points, radii, contact.bits(group, f"{what} group"), contact.bits(mask, f"{what} mask")
            )
        )
        return len(self._shapes) - 1

    def _shape_point(self, node: int, point: ArrayLike | None, what: str) -> np.ndarray:
        """The offset [m] from ``node`` of ``point`` (world, reference configuration; None: the node)."""
        if point is None:
            return np.zeros(3)
        return contact.vector(point, what) - self._nodes[node].position

    def add_sphere(
        self, node: int, radius: float, center: ArrayLike | None = None, *, group: int = 1, mask: int = -1
    ) -> int:
        """A collision sphere on the body of ``node``; returns the shape id.

        Parameters
        ----------
        node : int
            The node of the body (it must carry a mass or a beam).
        radius : float [m]
            > 0.
        center : (3,) array_like [m], optional
            The centre, world frame at the reference configuration (default the node).
        group, mask : int
            Collision filter bit masks (see :meth:`add_ground_plane`).
        """
        what = f"sphere (shape {len(self._shapes)})"
        n = self._node(node, what)
        r = contact.number(radius, f"{what} radius [m]", 0.0, strict=True)
        c = self._shape_point(n, center, f"{what} center")
        return self._shape("sphere", n, c.reshape(1, 3), np.array([r]), group, mask)

    def add_capsule(
        self,
        node: int,
        radius: float,
        point_a: ArrayLike,
        point_b: ArrayLike,
        *,
        group: int = 1,
        mask: int = -1,
    ) -> int:
        """A collision capsule (the points within ``radius`` of the segment a–b) on the body of
        ``node``; returns the shape id.  Against a plane it touches with its two end spheres.

        Parameters
        ----------
        node : int
            The node of the body.
        radius : float [m]
            > 0.
        point_a, point_b : (3,) array_like [m]
            The segment's ends, world frame at the reference configuration (distinct).
        group, mask : int
            Collision filter bit masks (see :meth:`add_ground_plane`).
        """
        what = f"capsule (shape {len(self._shapes)})"
        n = self._node(node, what)
        r = contact.number(radius, f"{what} radius [m]", 0.0, strict=True)
        a = self._shape_point(n, point_a, f"{what} point_a")
        b = self._shape_point(n, point_b, f"{what} point_b")
        if np.array_equal(a, b):
            raise ModelError(f"{what}: point_a and point_b coincide (use add_sphere)")
        return self._shape("capsule", n, np.array([a, b]), np.array([r, r]), group, mask)

    def add_box(
        self,
        node: int,
        half_extents: ArrayLike,
        center: ArrayLike | None = None,
        axes: ArrayLike | None = None,
        *,
        group: int = 1,
        mask: int = -1,
    ) -> int:
        """A collision box on the body of ``node``; returns the shape id.  Against a plane it
        touches with its eight corners.

        Parameters
        ----------
        node : int
            The node of the body.
        half_extents : (3,) array_like [m]
            Half the edge lengths along the box's axes (each > 0).
        center : (3,) array_like [m], optional
            The centre, world frame at the reference configuration (default the node).
        axes : (3, 3) array_like, optional
            Rotation matrix whose columns are the box's axes in the world frame at the
            reference configuration (default the world axes).
        group, mask : int
            Collision filter bit masks (see :meth:`add_ground_plane`).
        """
        what = f"box (shape {len(self._shapes)})"
        n = self._node(node, what)
        c = self._shape_point(n, center, f"{what} center")
        corners = contact.box_corners(half_extents, c, axes, what)
        return self._shape("box", n, corners, np.zeros(8), group, mask)

    def add_beam_element(
        self,
        nodes: Sequence[int],
        node_s: ArrayLike,
        quadrature: ArrayLike,
        section_s: ArrayLike,
        m_star: ArrayLike,
        c_star: ArrayLike,
        mu: ArrayLike | None = None,
    ) -> int:
        """Add one geometrically exact beam element (Kynema's GEBT element) on existing nodes.

        The element's reference line and orientation come from its nodes' reference positions
        and orientations (:meth:`add_node`): node i sits at span fraction ``node_s[i]``, and the
        first axis of its orientation should lie along the beam.  Most users build whole beams
        from a reference axis instead; this is the element-level call they end in.

        Parameters
        ----------
        nodes : (P,) Sequence[int]
            Node ids in span order, P >= 2 (P − 1 is the element's order; usually the
            nodes sit at the Gauss–Lobatto–Legendre points).
        node_s : (P,) array_like [-]
            Span fraction s ∈ [0, 1] of each node, increasing (ξ = 2s − 1).
        quadrature : (Q, 2) array
            The element's quadrature rule, one row (ξ ∈ [−1, 1], weight) per point
            (:mod:`kynemapy.engine.elements.beams.quadrature`).
        section_s : (S,) array_like
            Span fractions of the sections, increasing.
        m_star : (S, 6, 6) array_like [kg/m, kg, kg m]
            Sectional mass matrices M* [kg/m, kg, kg m], material frame,
            symmetric positive semi-definite.
        c_star : (S, 6, 6) array_like [N, N m, N m²]
            Sectional stiffness matrices C* [N, N m, N m²], material frame,
            symmetric positive definite.
        mu : (6,) array_like [s], optional
            Structural damping coefficients μ [s] (D* = diag(μ) C*), default none.

        Returns the element id.
        """
        from kynemapy.engine.elements.beams.sections import element_tables  # numba on first use only

        what = f"beam element {len(self._beams)}"
        ids = [self._node(n, f"{what} node") for n in nodes]
        if len(ids) < 2:
            raise ModelError(f"{what}: needs at least 2 nodes, got {len(ids)}")
        if len(set(ids)) != len(ids):
            raise ModelError(f"{what}: a node appears twice in {ids}")
        s_nodes = _vector(node_s, len(ids), f"{what} node_s")
        if np.any(np.diff(s_nodes) <= 0.0) or s_nodes[0] < 0.0 or s_nodes[-1] > 1.0:
            raise ModelError(f"{what}: node_s must increase within [0, 1], got {s_nodes.tolist()}")
        quad = np.asarray(quadrature, dtype=float)
        if quad.ndim != 2 or quad.shape[1] != 2 or quad.shape[0] < 1 or not np.all(np.isfinite(quad)):
            raise ModelError(f"{what}: quadrature must be finite (Q >= 1, 2) rows (xi, weight), got shape {quad.shape}")
        if np.any(np.abs(quad[:, 0]) > 1.0) or np.any(quad[:, 1] <= 0.0):
            raise ModelError(f"{what}: quadrature points must lie in [-1, 1] with positive weights")
        m = np.asarray(m_star, dtype=float)
        c = np.asarray(c_star, dtype=float)
        s_sec = np.atleast_1d(np.asarray(section_s, dtype=float))
        if s_sec.ndim != 1 or s_sec.size < 1 or np.any(np.diff(s_sec) <= 0.0) or not np.all(np.isfinite(s_sec)):
            raise ModelError(f"{what}: section_s must be increasing span fractions, got {s_sec.tolist()}")
        for name, mat in (("m_star", m), ("c_star", c)):
            if mat.shape != (s_sec.size, 6, 6):
                raise ModelError(
                    f"{what}: {name} must have shape ({s_sec.size}, 6, 6) (one per section), got {mat.shape}"
                )
            if not np.all(np.isfinite(mat)):
                raise ModelError(f"{what}: {name} has values that are not finite")
            for k in range(s_sec.size):
                scale = max(float(np.max(np.abs(mat[k]))), 1e-300)
                if np.max(np.abs(mat[k] - mat[k].T)) > 1e-10 * scale:
                    raise ModelError(f"{what}: {name}[{k}] (section at s = {s_sec[k]}) is not symmetric")
                low = float(np.min(np.linalg.eigvalsh(mat[k])))
                if name == "c_star" and low <= 0.0:
                    raise ModelError(
                        f"{what}: c_star[{k}] (section at s = {s_sec[k]}) is not positive definite "
                        f"(smallest eigenvalue {low:.3g})"
                    )
                if name == "m_star" and low < -1e-12 * scale:
                    raise ModelError(
                        f"{what}: m_star[{k}] (section at s = {s_sec[k]}) is not positive semi-definite "
                        f"(smallest eigenvalue {low:.3g})"
                    )
        damping = np.zeros(6) if mu is None else _vector(mu, 6, f"{what} mu")
        if np.any(damping < 0.0):
            raise ModelError(f"{what}: mu must be >= 0, got {damping.tolist()}")
        if quad.shape[0] < len(ids) and not np.allclose(quad[:, 0], np.linspace(-1.0, 1.0, quad.shape[0])):
            warnings.warn(
                f"{what}: {quad.shape[0]} quadrature points for {len(ids)} nodes (order {len(ids) - 1}) "
                "under-integrate the element's mass matrix (use at least one point per node)",
                UserWarning,
                stacklevel=2,
            )
        x0 = np.array([np.concatenate([self._nodes[n].position, self._nodes[n].orientation]) for n in ids])
        tables = element_tables(x0, s_nodes, quad, s_sec, m, c)
        if not np.all(tables.qp_jacobian > 0.0):
            raise ModelError(f"{what}: its nodes do not span a line (zero Jacobian at a quadrature point)")
        self._beams.append((ids, tables, damping))
        self._beam_inputs.append((s_nodes, quad.copy(), s_sec.copy(), m.copy(), c.copy(), x0))
        return len(self._beams) - 1

    def add_beam(
        self,
        points: ArrayLike,
        section_s: ArrayLike,
        m_star: ArrayLike,
        c_star: ArrayLike,
        *,
        point_s: ArrayLike | None = None,
        twist: ArrayLike | float | None = None,
        twist_s: ArrayLike | None = None,
        order: int = 10,
        n_elements: int = 1,
        quadrature: str = "gll",
        quadrature_style: str = "segmented",
        section_refinement: int | None = None,
        mu: ArrayLike | None = None,
        root_position: ArrayLike | None = None,
        root_orientation: ArrayLike | None = None,
        root_velocity: ArrayLike | None = None,
        root_acceleration: ArrayLike | None = None,
        name: str | None = None,
    ) -> Beam:
        """Add a whole beam from a reference axis, as Kynema's interfaces build a blade
        (``interfaces::components::Beam``); returns its :class:`~kynemapy.model.beams.Beam`.

        Nodes at the Gauss–Lobatto–Legendre points of each element, positioned on Kynema's
        least-squares fit of the axis, oriented by the axis tangent; twist turns the sectional
        matrices (Kynema's way); sections sit at the quadrature points.  Details:
        :mod:`kynemapy.model.beams`.

        Parameters
        ----------
        points : (K, 3) array_like [m]
            Reference-axis points [m], K >= 2, root first.
        section_s : (S,) array_like
            Span fractions of the sections, increasing, first 0 and last 1.
        m_star : (S, 6, 6) array_like [kg/m, kg, kg m]
            Sectional mass matrices M* [kg/m, kg, kg m], material frame (first
            axis along the beam), symmetric positive semi-definite.
        c_star : (S, 6, 6) array_like [N, N m, N m²]
            Sectional stiffness matrices C* [N, N m, N m²], symmetric positive definite.
        point_s : (K,) array_like, optional
            Span fractions of the points, increasing (mapped onto the beam's ends);
            default: normalised arc length along the points.
        twist : array_like | float, optional
            Structural twist [rad] about the reference axis: one value, or (T,) values at
            ``twist_s`` (default: one per section, at ``section_s``); linearly interpolated.
        twist_s : (T,) array_like, optional
            Span fractions of ``twist``, increasing.
        order : int
            Element order (order + 1 nodes per element), default Kynema's 10.
        n_elements : int
            Number of elements of equal span (Kynema's interface: 1).
        quadrature : str
            ``"gll"`` (Kynema's default) or ``"gauss"``.
        quadrature_style : ``"segmented"`` (Kynema's default: a rule per interval between
            sections) or ``"whole"`` (one rule over the element).
        section_refinement : extra sections interpolated per interval (segmented), or the rule's
            size (whole: refinement + 2 GLL or + 1 Gauss points); default: 0 (Kynema's) when that
            gives every element at least as many quadrature points as nodes, else the smallest
            refinement that does (with fewer points an element's mass and stiffness matrices are
            singular: a beam of two sections and order 10 gets refinement 9).  A Gauss rule of
            order + 1 points over the element: ``quadrature="gauss", quadrature_style="whole",
            section_refinement=order``; ``"gll"``, ``"segmented"``, 0 is the trapezoidal rule on
            the section stations.
        mu : (6,) array_like [s], optional
            Structural damping coefficients μ [s] (D* = diag(μ) C*), default none.
        root_position : (3,) array_like [m], optional
            Where the root goes [m]: the beam is translated by it (Kynema's
            ``Root::position``), then
        root_orientation : (4,) array_like, optional
            Unit quaternion (w, x, y, z) it is rotated by about the root position;
        root_velocity : (6,) array_like [m/s], optional
            Rigid-body velocity about the root position: linear [m/s], then
            angular [rad/s];
        root_acceleration : (6,) array_like [m/s²], optional
            Rigid-body acceleration about the root position: linear [m/s²],
            then angular [rad/s²] (with the angular velocity of ``root_velocity``).  Left out, the
            nodes get no acceleration (see :meth:`add_node`).
        name : str, optional
            The beam's name in error messages (default its index among beams).

        Returns
        -------
        Beam : ``.nodes`` (span order), ``.elements``, ``.root``, ``.tip``, ``.node_s``.
        """
        label = str(self._n_named_beams) if name is None else str(name)
        what = f"beam {label!r}"
        refinement = 0 if section_refinement is None else section_refinement

        def layout_with(refinement: Any) -> Any:
            return beam_layout(
                label, points, section_s, m_star, c_star, point_s=point_s, twist=twist, twist_s=twist_s,
                order=order, n_elements=n_elements, quadrature=quadrature, quadrature_style=quadrature_style,
                section_refinement=refinement,
            )  # fmt: skip

        layout = layout_with(refinement)
        if section_refinement is None:
            # the default rule must integrate every element: at least as many points as nodes (with
            # fewer, its mass and stiffness matrices are singular); Kynema's rule (0) when it does
            nodes_per = len(layout.elements[0].nodes)
            while min(el.quadrature.shape[0] for el in layout.elements) < nodes_per and refinement < 4 * nodes_per:
                refinement += 1
                layout = layout_with(refinement)
        damping = None if mu is None else _vector(mu, 6, f"{what} mu")
        origin = np.zeros(3) if root_position is None else _vector(root_position, 3, f"{what} root_position")
        rotation = None if root_orientation is None else _quaternion(root_orientation, f"{what} root_orientation")
        velocity = None if root_velocity is None else _vector(root_velocity, 6, f"{what} root_velocity")
        accel = None if root_acceleration is None else _vector(root_acceleration, 6, f"{what} root_acceleration")
        n_nodes, n_beams = len(self._nodes), len(self._beams)
        try:
            ids = [
                self.add_node(position=p, orientation=q)
                for p, q in zip(layout.positions, layout.orientations, strict=True)
            ]
            elements = []
            for el in layout.elements:
                try:
                    elements.append(
                        self.add_beam_element(
                            [ids[k] for k in el.nodes],
                            el.node_s,
                            el.quadrature,
                            el.section_s,
                            el.m_star,
                            el.c_star,
                            damping,
                        )
                    )
                except ModelError as exc:
                    raise ModelError(f"{what}: {exc}") from exc
        except BaseException:
            del self._nodes[n_nodes:]
            del self._beams[n_beams:]
            del self._beam_inputs[n_beams:]
            raise
        moved = [self._nodes[i] for i in ids]
        translate(moved, origin)
        if rotation is not None:
            rotate_about_point(moved, rotation, origin)
        if velocity is not None:
            set_velocity_about_point(moved, velocity, origin)
        if accel is not None:
            omega = np.zeros(3) if velocity is None else velocity[3:]
            set_acceleration_about_point(moved, accel, omega, origin)
        self._n_named_beams += 1
        return Beam(label, tuple(ids), tuple(elements), tuple(float(s) for s in layout.node_s))

    def translate_beam(self, beam: Any, displacement: ArrayLike) -> None:
        """Kynema's ``TranslateBeam``: move the reference positions of a beam's nodes.

        Orientations are kept; the elements' reference geometry is recomputed at
        :meth:`build`.

        Parameters
        ----------
        beam : Beam or int
            What :meth:`add_beam` returned, or a beam element id (:meth:`add_beam_element`).
        displacement : (3,) array_like of float [m]
            The translation added to each node's reference position.

        Raises
        ------
        ModelError
            An unknown beam, or a displacement that is not 3 finite numbers.
        """
        nodes = self._beam_nodes(beam, "translate_beam")
        translate(nodes, _vector(displacement, 3, "translate_beam displacement"))

    def rotate_beam_about_point(self, beam: Any, quaternion: ArrayLike, point: ArrayLike) -> None:
        """Kynema's ``RotateBeamAboutPoint``: turn a beam's nodes about a point.

        Reference positions X ← p + q(X − p) and orientations r0 ← q ⊗ r0 (displacements and
        velocities are left as they are).

        Parameters
        ----------
        beam : Beam or int
            What :meth:`add_beam` returned, or a beam element id (:meth:`add_beam_element`).
        quaternion : (4,) array_like of float
            The rotation q, a unit quaternion (w, x, y, z).
        point : (3,) array_like of float [m]
            The point p the beam turns about, world frame.

        Raises
        ------
        ModelError
            An unknown beam, a quaternion not of unit length, or values not finite.
        """
        nodes = self._beam_nodes(beam, "rotate_beam_about_point")
        q = _quaternion(quaternion, "rotate_beam_about_point quaternion")
        rotate_about_point(nodes, q, _vector(point, 3, "rotate_beam_about_point point"))

    def set_beam_velocity_about_point(self, beam: Any, velocity: ArrayLike, point: ArrayLike) -> None:
        """Kynema's ``SetBeamVelocityAboutPoint``: give a beam's nodes a rigid-body velocity.

        Each node gets u̇ = v + ω × (X + u − p) and angular velocity ω (replacing the nodes'
        initial velocities).

        Parameters
        ----------
        beam : Beam or int
            What :meth:`add_beam` returned, or a beam element id (:meth:`add_beam_element`).
        velocity : (6,) array_like of float
            The rigid-body velocity (v [m/s], ω [rad/s]) of the point p, inertial frame.
        point : (3,) array_like of float [m]
            The point p, world frame.

        Raises
        ------
        ModelError
            An unknown beam, or values of the wrong length or not finite.
        """
        nodes = self._beam_nodes(beam, "set_beam_velocity_about_point")
        vel = _vector(velocity, 6, "set_beam_velocity_about_point velocity")
        set_velocity_about_point(nodes, vel, _vector(point, 3, "set_beam_velocity_about_point point"))

    def set_beam_acceleration_about_point(
        self, beam: Any, acceleration: ArrayLike, omega: ArrayLike, point: ArrayLike
    ) -> None:
        """Kynema's ``SetBeamAccelerationAboutPoint``: give a beam's nodes a rigid-body acceleration.

        Each node gets ü = a + α × r + ω × (ω × r), r = X + u − p, and angular
        acceleration α (replacing the nodes' initial accelerations).

        Parameters
        ----------
        beam : Beam or int
            What :meth:`add_beam` returned, or a beam element id (:meth:`add_beam_element`).
        acceleration : (6,) array_like of float
            The rigid-body acceleration (a [m/s²], α [rad/s²]) of the point p, inertial frame.
        omega : (3,) array_like of float [rad/s]
            The angular velocity ω of the body, inertial frame.
        point : (3,) array_like of float [m]
            The point p, world frame.

        Raises
        ------
        ModelError
            An unknown beam, or values of the wrong length or not finite.
        """
        what = "set_beam_acceleration_about_point"
        nodes = self._beam_nodes(beam, what)
        set_acceleration_about_point(
            nodes, _vector(acceleration, 6, f"{what} acceleration"), _vector(omega, 3, f"{what} omega"),
            _vector(point, 3, f"{what} point"),
        )  # fmt: skip

    def _beam_nodes(self, beam: Any, what: str) -> list[_Node]:
        """The node records of ``beam``: what :meth:`add_beam` returned, or a beam element id
        (Kynema's handle)."""
        if isinstance(beam, Beam):
            return [self._nodes[i] for i in beam.nodes]
        if isinstance(beam, bool) or not isinstance(beam, (int, np.integer)):
            raise ModelError(f"{what}: beam must be what add_beam returned, or a beam element id, got {beam!r}")
        n = len(self._beams)
        if not 0 <= int(beam) < n:
            raise ModelError(f"{what}: unknown beam element id {beam} (the model has {n} beam elements)")
        return [self._nodes[i] for i in self._beams[int(beam)][0]]

    def _refresh_beam_tables(self) -> None:
        """Recompute the reference tables of the beam elements whose nodes moved since they were
        made (translate/rotate): Kynema makes them from the nodes when the system is created."""
        if not self._beams:  # (a model without beams does not import the beams' modules)
            return
        from kynemapy.engine.elements.beams.sections import element_tables

        for e, (ids, _, damping) in enumerate(self._beams):
            s_nodes, quad, s_sec, m, c, x0_then = self._beam_inputs[e]
            x0 = np.array([np.concatenate([self._nodes[n].position, self._nodes[n].orientation]) for n in ids])
            if np.array_equal(x0, x0_then):
                continue
            tables = element_tables(x0, s_nodes, quad, s_sec, m, c)
            self._beams[e] = (ids, tables, damping)
            self._beam_inputs[e] = (s_nodes, quad, s_sec, m, c, x0)

    # ------------------------------------------------------------- constraints
    def _add_constraint(
        self,
        kind: int,
        base: int,
        target: int,
        axis: ArrayLike = (0.0, 0.0, 0.0),
        initial_input: ArrayLike | None = None,
    ) -> int:
        cid = len(self._constraints)
        what = f"constraint {cid} ({kinds.KIND_NAMES[kind]})"
        target = self._node(target, what)
        if kinds.N_NODES[kind] == 2:
            base = self._node(base, what)
            if base == target:
                raise ModelError(f"{what}: joins node {target} to itself")
        else:
            base = -1
        ax = _vector(axis, 3, f"{what} axis")
        inp = (
            np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]) if initial_input is None else np.asarray(initial_input, float)
        )
        self._constraints.append(_Constraint(kind, base, target, ax, inp))
        return cid

    def add_fixed_bc(self, node: int) -> int:
        """Clamp all 6 DOFs of ``node`` to its reference; returns the constraint id.

        Parameters
        ----------
        node : int
            The node id.

        Returns
        -------
        int
            The constraint id.
        """
        return self._add_constraint(kinds.FIXED_BC, -1, node)

    def add_fixed_bc_3dof(self, node: int) -> int:
        """Clamp the position of ``node`` (3 DOFs); returns the constraint id.

        Parameters
        ----------
        node : int
            The node id.

        Returns
        -------
        int
            The constraint id.
        """
        return self._add_constraint(kinds.FIXED_BC_3DOF, -1, node)

    def add_prescribed_bc(self, node: int, initial_displacement: ArrayLike | None = None) -> int:
        """Prescribe the displacement (u, rotation quaternion) of ``node``; returns the constraint id.

        Set it each step with :meth:`Simulation.set_prescribed_displacement`.

        Parameters
        ----------
        node : int
            The node id.
        initial_displacement : (7,) array_like of float or None, default None
            The prescribed displacement at t = 0: u [m] and a unit rotation quaternion
            (w, x, y, z); None: ``(0, 0, 0, 1, 0, 0, 0)``.

        Returns
        -------
        int
            The constraint id.
        """
        disp = None
        if initial_displacement is not None:
            disp = _vector(initial_displacement, 7, f"constraint {len(self._constraints)} initial_displacement")
            _quaternion(disp[3:], f"constraint {len(self._constraints)} initial_displacement rotation")
        return self._add_constraint(kinds.PRESCRIBED_BC, -1, node, initial_input=disp)

    def add_prescribed_bc_3dof(self, node: int, initial_displacement: ArrayLike | None = None) -> int:
        """Prescribe the position displacement u of ``node`` (3 DOFs); returns the constraint id.

        Parameters
        ----------
        node : int
            The node id.
        initial_displacement : (3,) array_like of float or None, default None
            The prescribed displacement u [m] at t = 0; None: zero.

        Returns
        -------
        int
            The constraint id.
        """
        disp = None
        if initial_displacement is not None:
            u = _vector(initial_displacement, 3, f"constraint {len(self._constraints)} initial_displacement")
            disp = np.array([u[0], u[1], u[2], 1.0, 0.0, 0.0, 0.0])
        return self._add_constraint(kinds.PRESCRIBED_BC_3DOF, -1, node, initial_input=disp)

    def add_rigid_joint(self, base: int, target: int) -> int:
        """Weld ``target`` to ``base`` (6 rows), Kynema's rigid joint; returns the constraint id.

        Kept for Kynema parity; :meth:`add_weld_joint` is kynemapy's weld between two bodies.

        Parameters
        ----------
        base : int
            The node id of the base.
        target : int
            The node id of the target (not ``base``).

        Returns
        -------
        int
            The constraint id.
        """
        return self._add_constraint(kinds.RIGID_JOINT, base, target)

    def add_rigid_joint_6dof_to_3dof(self, base: int, target: int) -> int:
        """Tie the position of ``target`` to a point fixed in body ``base`` (3 rows); returns the id.

        Parameters
        ----------
        base : int
            The node id of the body (6 DOFs) that carries the point.
        target : int
            The node id whose position is tied to it (not ``base``).

        Returns
        -------
        int
            The constraint id.
        """
        return self._add_constraint(kinds.RIGID_JOINT_6DOF_TO_3DOF, base, target)

    def add_revolute_joint(
        self,
        base: int,
        target: int,
        axis: ArrayLike | None = None,
        torque: float | None = None,
        *,
        brake_torque: float = 0.0,
    ) -> int:
        """Kynema's revolute joint between coincident nodes ``base`` and ``target`` about ``axis``
        (world frame at the reference configuration; default: from base to target).  Kept for
        Kynema parity; :meth:`add_hinge_joint` is kynemapy's revolute joint between two bodies.

        Parameters
        ----------
        base : int
            The node id of the base.
        target : int
            The node id of the target (not ``base``).
        axis : (3,) array_like of float or None, default None
            The joint axis, world frame at the reference configuration; None: from base to
            target (the nodes must not coincide then).
        torque : float or None, default None
            Deprecated name of ``brake_torque`` (same value, same meaning; a
            :class:`DeprecationWarning`): every other ``torque`` in kynemapy is the applied
            torque.
        brake_torque : float [N m], default 0.0
            Kynema's input: a brake, it acts as −τ about the axis on the target (set it later
            with :meth:`Simulation.set_brake_torque`).

        Returns
        -------
        int
            The constraint id.

        Raises
        ------
        ModelError
            An unknown node, ``base == target``, no axis for coincident nodes, or a
            non-finite brake torque.
        """
        if torque is not None:
            warnings.warn(
                "add_revolute_joint(torque=...) is Kynema's brake torque (it acts as -torque); pass "
                "brake_torque= (same value, same meaning), or use add_hinge_joint, whose torque is applied as +torque",
                DeprecationWarning,
                stacklevel=2,
            )
            brake_torque = torque
        ax = (0.0, 0.0, 0.0) if axis is None else axis
        inp = np.array([float(brake_torque), 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        cid = self._add_constraint(kinds.REVOLUTE_JOINT, base, target, ax, inp)
        c = self._constraints[cid]
        if np.linalg.norm(c.axis) == 0.0:
            x0 = self._nodes[c.target].position - self._nodes[c.base].position
            if np.linalg.norm(x0) == 0.0:
                self._constraints.pop()
                raise ModelError(f"constraint {cid} (revolute_joint): nodes coincide, so an axis must be given")
        if not math.isfinite(float(brake_torque)):
            self._constraints.pop()
            raise ModelError(f"constraint {cid} (revolute_joint): brake_torque must be finite, got {brake_torque!r}")
        return cid

    def add_rotation_control(self, base: int, target: int, axis: ArrayLike, angle: float = 0.0) -> int:
        """Weld ``target`` to ``base`` with a commanded relative rotation about ``axis``; returns the id.

        Set the angle each step with :meth:`Simulation.set_angle`.

        Parameters
        ----------
        base : int
            The node id of the base.
        target : int
            The node id of the target (not ``base``).
        axis : (3,) array_like of float
            The rotation axis (non-zero), world frame at the reference configuration.
        angle : float [rad], default 0.0
            The commanded angle at t = 0.

        Returns
        -------
        int
            The constraint id.

        Raises
        ------
        ModelError
            An unknown node, ``base == target``, or a zero axis.
        """
        inp = np.array([float(angle), 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        cid = self._add_constraint(kinds.ROTATION_CONTROL, base, target, axis, inp)
        if np.linalg.norm(self._constraints[cid].axis) == 0.0:
            self._constraints.pop()
            raise ModelError(f"constraint {cid} (rotation_control): axis must be non-zero")
        return cid

    def add_spherical_joint(self, body: int, point: ArrayLike) -> SphericalJoint:
        """Pin ``body`` to the ground at ``point`` [m] (a ball joint), Kynema's way: a new
        position-only node at the point, a 6→3 rigid joint body → pin, and a fixed BC on the pin
        (Kynema's pattern, kept for Kynema parity; :meth:`add_ball_joint` ``(body, GROUND, point)``
        is the same joint in one constraint).

        Parameters
        ----------
        body : int
            The node id of the body.
        point : (3,) array_like of float [m]
            The pin point, world frame at the reference configuration.

        Returns
        -------
        SphericalJoint
            The joint's id (an ``int``), with the ids ``.pin``, ``.joint``, ``.bc``.
            ``Simulation.reaction(j)`` is the load on the pin, the opposite of the load on the body.
        """
        body = self._node(body, "add_spherical_joint")
        p = _vector(point, 3, "add_spherical_joint point")
        pin = self.add_node(position=p, acceleration=None)
        joint = self.add_rigid_joint_6dof_to_3dof(body, pin)
        bc = self.add_fixed_bc_3dof(pin)
        return SphericalJoint(pin, joint, bc)

    # ------------------------------------------------------- two-body joints
    # Each joint joins body_a and body_b (node ids, or GROUND); points and axes are world
    # coordinates at the reference configuration.  The kernel's base is a and its target b;
    # a joint with body_b = GROUND is stored with the sides swapped (and a hinge's, slider's
    # or cylindrical joint's axis reversed, so that angles, displacements, torques and
    # forces keep their meaning), hence its reaction is reported on body_a.
    def _joint_bodies(self, what: str, body_a: int, body_b: int) -> tuple[int, int]:
        ids = []
        for key, body in (("body_a", body_a), ("body_b", body_b)):
            if isinstance(body, bool) or not isinstance(body, (int, np.integer)):
                raise ModelError(f"{what}: {key} must be a node id or kp.GROUND (-1), got {body!r}")
            body = int(body)
            if body != GROUND and not 0 <= body < len(self._nodes):
                raise ModelError(
                    f"{what}: {key} = {body} is an unknown body (node ids 0..{len(self._nodes) - 1}, or kp.GROUND = -1)"
                )
            ids.append(body)
        a, b = ids
        if a == b:
            who = "the ground" if a == GROUND else f"body {a}"
            raise ModelError(f"{what}: joins {who} to itself (body_a = body_b = {a})")
        return a, b

    @staticmethod
    def _unit_axis(value: ArrayLike, what: str) -> np.ndarray:
        axis = _vector(value, 3, what)
        norm = float(np.linalg.norm(axis))
        if norm < 1e-12:
            raise ModelError(f"{what} must be a non-zero vector, got {axis.tolist()}")
        return axis / norm

    def _offset(self, body: int, point: np.ndarray) -> np.ndarray:
        return point.copy() if body == GROUND else point - self._nodes[body].position

    def _add_body_joint(
        self,
        kind: int,
        body_a: int,
        body_b: int,
        point_a: np.ndarray,
        point_b: np.ndarray,
        frame_a: np.ndarray,
        frame_b: np.ndarray,
        initial_input: float = 0.0,
        param: float = 0.0,
        reverse_axis_on_swap: bool = False,
        rows: list[tuple[int, int, int]] | None = None,
    ) -> int:
        geom = np.zeros((2, 4, 3))
        geom[0, 0] = self._offset(body_a, point_a)
        geom[1, 0] = self._offset(body_b, point_b)
        geom[0, 1:] = frame_a
        geom[1, 1:] = frame_b
        base, target = body_a, body_b
        if body_b == GROUND:
            base, target = body_b, body_a
            geom = geom[::-1].copy()
            if reverse_axis_on_swap:
                geom[0, 1:] = geom[1, 1:] = joint_frame(-frame_a[0])
            if rows is not None:
                rows = kinds.mirrored_rows(rows)
        inp = np.array([float(initial_input), 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        if kind in (kinds.HINGE_JOINT, kinds.SLIDER_JOINT):
            inp[1:] = 0.0  # the servo's inputs (docs/joints.md, "Drives"): none
        c = _Constraint(kind, base, target, np.zeros(3), inp, geom, float(param))
        if rows is not None:
            c.listed = kinds.encode_rows(rows)
            c.n_rows = kinds.count_rows(rows)
        self._constraints.append(c)
        return len(self._constraints) - 1

    def _what(self, kind: int) -> str:
        name = kinds.KIND_NAMES[kind]
        return f"add_{name}: constraint {len(self._constraints)} ({name})"

    @staticmethod
    def _finite(value: float, what: str) -> float:
        try:
            x = float(value)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{what} must be a number, got {value!r}") from exc
        if not math.isfinite(x):
            raise ModelError(f"{what} must be finite, got {value!r}")
        return x

    def add_ball_joint(
        self,
        body_a: int,
        body_b: int,
        point: ArrayLike,
        *,
        cone_axis: ArrayLike | None = None,
        cone_angle: float | None = None,
        cone_stiffness: float | None = None,
        cone_damping: float = 0.0,
    ) -> int:
        """Spherical joint (3 rows): the bodies share the point ``point``; returns the id.

        Either body may be :data:`GROUND`.  The ``cone_*`` keywords add a compliant cone limit
        (docs/joints.md, "Cone limit of a ball joint"): the angle φ between the axis
        ``cone_axis`` fixed in a and the same axis fixed in b (equal at the reference
        configuration, φ = 0) stays below ``cone_angle``; past it by δ = φ − φ_max a
        one-sided spring-damper ``−k_l δ − c_l φ̇`` turns b back toward a's axis (and a the
        other way), its damper clipped to ``±k_l |δ|`` as a hinge's limits.

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point : (3,) array_like of float [m]
            The joint point, world frame at the reference configuration.
        cone_axis : (3,) array_like of float, optional
            The cone's axis (any non-zero length), world frame at the reference configuration;
            required with ``cone_angle``.
        cone_angle : float [rad], optional
            The cone's half-angle φ_max, 0 < φ_max < π.
        cone_stiffness : float [N m/rad], optional
            The limit's stiffness k_l, > 0; required with ``cone_angle``.
        cone_damping : float [N m s/rad], default 0.0
            The limit's damping c_l, >= 0.

        Returns
        -------
        int
            The constraint id.
        """
        what = self._what(kinds.BALL_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        cone = self._cone(what, cone_axis, cone_angle, cone_stiffness, cone_damping)
        if cone is None:
            frame = np.eye(3)
            return self._add_body_joint(kinds.BALL_JOINT, a, b, p, p, frame, frame)
        frame, drive = cone
        cid = self._add_body_joint(kinds.BALL_JOINT, a, b, p, p, frame, frame)
        self._constraints[cid].drive = drive
        return cid

    def _cone(
        self,
        what: str,
        axis: ArrayLike | None,
        angle: float | None,
        stiffness: float | None,
        damping: float,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """A ball joint's cone limit: its frame (3, 3) (first row the unit axis) and its
        parameters (3, 3) in the ``LIMIT_*`` slots of the hinge's drive (lower −1 rad: never
        reached), or None without one."""
        c = self._finite(damping, f"{what} cone_damping")
        if angle is None:
            if axis is not None or stiffness is not None or c != 0.0:
                raise ModelError(f"{what} cone_axis, cone_stiffness and cone_damping need cone_angle [rad]")
            return None
        if axis is None:
            raise ModelError(f"{what} cone_angle needs cone_axis (3 numbers)")
        frame = joint_frame(self._unit_axis(axis, f"{what} cone_axis"))
        phi = self._finite(angle, f"{what} cone_angle")
        if not 0.0 < phi < math.pi:
            raise ModelError(f"{what} cone_angle must be in (0, π) [rad], got {angle!r}")
        if stiffness is None:
            raise ModelError(f"{what} cone_angle needs cone_stiffness > 0 [N m/rad]")
        k = self._finite(stiffness, f"{what} cone_stiffness")
        if k <= 0.0:
            raise ModelError(f"{what} cone_stiffness must be > 0 [N m/rad], got {stiffness!r}")
        if c < 0.0:
            raise ModelError(f"{what} cone_damping must be >= 0 [N m s/rad], got {damping!r}")
        drive = np.zeros((3, 3))
        drive[2] = (-1.0, phi, k)
        drive[1, 2] = c
        return frame, drive

    def add_hinge_joint(
        self,
        body_a: int,
        body_b: int,
        point: ArrayLike,
        axis: ArrayLike,
        torque: float = 0.0,
        *,
        stiffness: float = 0.0,
        rest: float = 0.0,
        damping: float = 0.0,
        friction: float = 0.0,
        friction_rate: float = DEFAULT_FRICTION_RATE,
        limits: tuple[float, float] | None = None,
        limit_stiffness: float | None = None,
        limit_damping: float = 0.0,
        limit_restitution: float | None = None,
    ) -> int:
        """Revolute joint (5 rows) about the line through ``point`` [m] along ``axis``; returns the id.

        ``torque`` [N m] acts on body_b about ``axis`` (and −torque on body_a); set it later
        with :meth:`Simulation.set_torque`.  :meth:`Simulation.joint_output` gives the angle of
        b relative to a about ``axis`` [rad] (right-handed, 0 at the reference configuration),
        its rate and acceleration.  The keywords add a spring, damper, Coulomb friction and compliant travel limits;
        :meth:`set_servo` a servo (docs/joints.md, "Drives, springs, dampers and friction").

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point : (3,) array_like of float [m]
            A point on the joint axis, world frame at the reference configuration.
        axis : (3,) array_like of float
            The joint axis (any non-zero length), world frame at the reference configuration.
        torque : float [N m], default 0.0
            The applied torque τ at t = 0: +τ on body_b about ``axis``, −τ on body_a.
        stiffness : float [N m/rad], default 0.0
            Torsional spring: ``−k (θ − rest)``, >= 0.
        rest : float [rad], default 0.0
            The spring's rest angle.
        damping : float [N m s/rad], default 0.0
            Torsional damper (viscous joint friction): ``−c θ̇``, >= 0.
        friction : float [N m], default 0.0
            Coulomb joint friction level F_c, >= 0, regularized: ``−F_c tanh(θ̇ / friction_rate)``.
        friction_rate : float [rad/s], default 1e-2
            The regularization rate v_s of the Coulomb friction, > 0 (docs/joints.md, "Drives").
        limits : (lower, upper) of float [rad], optional
            Travel limits, lower < upper: hard with ``limit_restitution``, else compliant.
            Compliant: past a stop by δ = θ − stop a one-sided
            spring-damper ``−k_l δ − c_l θ̇`` pushes back, its damper clipped to ``±k_l |δ|``
            (continuous at the stop; it never pulls); none by default.
        limit_stiffness : float [N m/rad], optional
            The limits' stiffness k_l, > 0; required with ``limits``.  The joint enters a
            stop by about ``|load| / k_l``.
        limit_damping : float [N m s/rad], default 0.0
            The limits' damping c_l, >= 0: sets the restitution of a hit (docs/joints.md,
            "Compliant joint limits").
        limit_restitution : float [-], optional
            Makes ``limits`` hard (unilateral) stops, 0 <= e <= 1 (not with ``limit_stiffness``
            or ``limit_damping``): the joint never passes a stop by more than the correction's
            tolerance, and a hit rebounds by Newton's law, rate after = −e × rate before
            (docs/joints.md, "Hard joint limits").

        Returns
        -------
        int
            The constraint id.
        """
        what = self._what(kinds.HINGE_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = joint_frame(self._unit_axis(axis, f"{what} axis"))
        tau = self._finite(torque, f"{what} torque")
        drive = self._drive(what, stiffness, rest, damping, friction, friction_rate, "rad")
        stops = self._limits(what, drive, limits, limit_stiffness, limit_damping, limit_restitution, "rad", "N m")
        cid = self._add_body_joint(kinds.HINGE_JOINT, a, b, p, p, frame, frame, tau, reverse_axis_on_swap=True)
        self._constraints[cid].drive = drive
        self._constraints[cid].stops = stops
        return cid

    def add_slider_joint(
        self,
        body_a: int,
        body_b: int,
        point: ArrayLike,
        axis: ArrayLike,
        force: float = 0.0,
        *,
        stiffness: float = 0.0,
        rest: float = 0.0,
        damping: float = 0.0,
        friction: float = 0.0,
        friction_rate: float = DEFAULT_FRICTION_RATE,
        limits: tuple[float, float] | None = None,
        limit_stiffness: float | None = None,
        limit_damping: float = 0.0,
        limit_restitution: float | None = None,
    ) -> int:
        """Prismatic joint (5 rows): body_b translates relative to body_a along ``axis`` through
        ``point`` [m], no relative rotation; returns the id.

        ``force`` [N] acts on body_b along ``axis`` at its joint point (−force on body_a at the
        same point); set it later with :meth:`Simulation.set_force`.  :meth:`Simulation.joint_output`
        gives the displacement of b along ``axis`` [m] (0 at the reference configuration), its
        rate and acceleration.  The keywords add a spring, damper, Coulomb friction and compliant travel limits;
        :meth:`set_servo` a servo (docs/joints.md, "Drives, springs, dampers and friction").

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point : (3,) array_like of float [m]
            A point on the sliding line, world frame at the reference configuration.
        axis : (3,) array_like of float
            The sliding direction (any non-zero length), world frame at the reference configuration.
        force : float [N], default 0.0
            The applied force F at t = 0: +F on body_b along ``axis``, −F on body_a.
        stiffness : float [N/m], default 0.0
            Linear spring: ``−k (s − rest)`` (s the displacement along ``axis``), >= 0.
        rest : float [m], default 0.0
            The spring's rest displacement.
        damping : float [N s/m], default 0.0
            Linear damper (viscous joint friction): ``−c ṡ``, >= 0.
        friction : float [N], default 0.0
            Coulomb joint friction level F_c, >= 0, regularized: ``−F_c tanh(ṡ / friction_rate)``.
        friction_rate : float [m/s], default 1e-2
            The regularization rate v_s of the Coulomb friction, > 0 (docs/joints.md, "Drives").
        limits : (lower, upper) of float [m], optional
            Travel limits, lower < upper: hard with ``limit_restitution``, else compliant.
            Compliant: past a stop by δ = s − stop a one-sided
            spring-damper ``−k_l δ − c_l ṡ`` pushes back, its damper clipped to ``±k_l |δ|``
            (continuous at the stop; it never pulls); none by default.
        limit_stiffness : float [N/m], optional
            The limits' stiffness k_l, > 0; required with ``limits``.  The joint enters a
            stop by about ``|load| / k_l``.
        limit_damping : float [N s/m], default 0.0
            The limits' damping c_l, >= 0: sets the restitution of a hit (docs/joints.md,
            "Compliant joint limits").
        limit_restitution : float [-], optional
            Makes ``limits`` hard (unilateral) stops, 0 <= e <= 1 (not with ``limit_stiffness``
            or ``limit_damping``): the joint never passes a stop by more than the correction's
            tolerance, and a hit rebounds by Newton's law, rate after = −e × rate before
            (docs/joints.md, "Hard joint limits").

        Returns
        -------
        int
            The constraint id.
        """
        what = self._what(kinds.SLIDER_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = joint_frame(self._unit_axis(axis, f"{what} axis"))
        f = self._finite(force, f"{what} force")
        drive = self._drive(what, stiffness, rest, damping, friction, friction_rate, "m")
        stops = self._limits(what, drive, limits, limit_stiffness, limit_damping, limit_restitution, "m", "N")
        cid = self._add_body_joint(kinds.SLIDER_JOINT, a, b, p, p, frame, frame, f, reverse_axis_on_swap=True)
        self._constraints[cid].drive = drive
        self._constraints[cid].stops = stops
        return cid

    def _drive(
        self, what: str, stiffness: float, rest: float, damping: float, friction: float, rate: float, unit: str
    ) -> np.ndarray:
        """The passive drive parameters (3, 3) as ``Model.constraint_axes`` holds them for a hinge or slider."""
        k = self._finite(stiffness, f"{what} stiffness")
        c = self._finite(damping, f"{what} damping")
        fc = self._finite(friction, f"{what} friction")
        for name, value in (("stiffness", k), ("damping", c), ("friction", fc)):
            if value < 0.0:
                raise ModelError(f"{what} {name} must be >= 0, got {value!r}")
        vs = self._finite(rate, f"{what} friction_rate")
        if vs <= 0.0:
            raise ModelError(f"{what} friction_rate must be > 0 [{unit}/s], got {rate!r}")
        drive = np.zeros((3, 3))
        drive[0] = (k, self._finite(rest, f"{what} rest"), c)
        drive[1, :2] = (fc, vs) if fc != 0.0 else (0.0, 0.0)  # no friction: the axes stay zeros
        return drive

    def _limits(
        self,
        what: str,
        drive: np.ndarray,
        limits: tuple[float, float] | None,
        stiffness: float | None,
        damping: float,
        restitution: float | None,
        unit: str,
        effort: str,
    ) -> tuple[float, float, float] | None:
        """Put a hinge's or slider's compliant limits into its drive parameters ``drive`` (3, 3)
        (``LIMIT_*`` of :mod:`kynemapy.engine.constraints.body_joints`), or return its hard
        limits ``(lower, upper, restitution)`` (None: none)."""
        c = self._finite(damping, f"{what} limit_damping")
        if limits is None:
            if stiffness is not None or c != 0.0 or restitution is not None:
                raise ModelError(
                    f"{what} limit_stiffness, limit_damping and limit_restitution need limits=(lower, upper) [{unit}]"
                )
            return None
        try:
            lower, upper = limits
        except (TypeError, ValueError):
            raise ModelError(f"{what} limits must be a pair (lower, upper) [{unit}], got {limits!r}") from None
        lo = self._finite(lower, f"{what} lower limit")
        up = self._finite(upper, f"{what} upper limit")
        if not lo < up:
            raise ModelError(f"{what} limits must have lower < upper [{unit}], got ({lo!r}, {up!r})")
        if restitution is not None:
            if stiffness is not None or c != 0.0:
                raise ModelError(
                    f"{what} limits are either hard (limit_restitution) or compliant (limit_stiffness, "
                    "limit_damping), not both"
                )
            e = self._finite(restitution, f"{what} limit_restitution")
            if not 0.0 <= e <= 1.0:
                raise ModelError(f"{what} limit_restitution must be in [0, 1], got {restitution!r}")
            return (lo, up, e)
        if stiffness is None:
            raise ModelError(
                f"{what} limits need limit_stiffness > 0 [{effort}/{unit}] (compliant) or "
                "limit_restitution in [0, 1] (hard)"
            )
        k = self._finite(stiffness, f"{what} limit_stiffness")
        if k <= 0.0:
            raise ModelError(f"{what} limit_stiffness must be > 0 [{effort}/{unit}], got {k!r}")
        if c < 0.0:
            raise ModelError(f"{what} limit_damping must be >= 0 [{effort} s/{unit}], got {c!r}")
        drive[2] = (lo, up, k)
        drive[1, 2] = c
        return None

    def set_servo(
        self,
        joint: int,
        kp: float,
        kd: float = 0.0,
        position: float = 0.0,
        rate: float = 0.0,
        feedforward: float = 0.0,
        limit: float | None = None,
    ) -> int:
        """Give a hinge or slider joint a PD servo (its state at t = 0); returns ``joint``.

        The servo applies ``sat(kp (position − x) + kd (rate − ẋ) + feedforward)`` about (along)
        the joint axis, x the joint's angle [rad] or displacement [m] (:meth:`Simulation.joint_output`),
        ``sat`` clipping to ``±limit``.  Change it between steps with
        :meth:`Simulation.set_servo` and :meth:`Simulation.set_servo_target`.

        Parameters
        ----------
        joint : int
            The constraint id of a hinge or slider joint.
        kp : float [N m/rad or N/m]
            Position gain, >= 0.
        kd : float [N m s/rad or N s/m], default 0.0
            Rate gain, >= 0.
        position : float [rad or m], default 0.0
            Target position.
        rate : float [rad/s or m/s], default 0.0
            Target rate.
        feedforward : float [N m or N], default 0.0
            Added before the limit.
        limit : float [N m or N] or None, default None
            Effort limit (> 0); None or ``inf``: none.

        Returns
        -------
        int
            ``joint``.
        """
        what = f"set_servo: constraint {joint!r}"
        known = isinstance(joint, (int, np.integer)) and not isinstance(joint, bool)
        if not known or not 0 <= joint < len(self._constraints):
            raise ModelError(f"{what}: unknown constraint id (the model has {len(self._constraints)} constraints)")
        c = self._constraints[int(joint)]
        if c.kind not in (kinds.HINGE_JOINT, kinds.SLIDER_JOINT):
            raise ModelError(f"{what} is a {kinds.KIND_NAMES[c.kind]}; a servo drives a hinge or slider joint")
        try:
            c.initial_input[1:] = servo_inputs(kp, kd, position, rate, feedforward, limit)
        except ValueError as exc:
            raise ModelError(f"{what}: {exc}") from None
        return int(joint)

    def add_cylindrical_joint(self, body_a: int, body_b: int, point: ArrayLike, axis: ArrayLike) -> int:
        """Cylindrical joint (4 rows): body_b slides along and turns about the line through
        ``point`` [m] along ``axis`` fixed in body_a; returns the id.

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point : (3,) array_like of float [m]
            A point on the joint axis, world frame at the reference configuration.
        axis : (3,) array_like of float
            The joint axis (any non-zero length), world frame at the reference configuration.

        Returns
        -------
        int
            The constraint id.
        """
        what = self._what(kinds.CYLINDRICAL_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = joint_frame(self._unit_axis(axis, f"{what} axis"))
        return self._add_body_joint(kinds.CYLINDRICAL_JOINT, a, b, p, p, frame, frame, reverse_axis_on_swap=True)

    def add_universal_joint(
        self, body_a: int, body_b: int, point: ArrayLike, axis_a: ArrayLike, axis_b: ArrayLike
    ) -> int:
        """Universal (Hooke, Cardan) joint (4 rows); returns the constraint id.

        The bodies share ``point`` [m]; body_a turns about ``axis_a`` (fixed in body_a) and body_b
        about ``axis_b`` (fixed in body_b) relative to the joint's cross (spider), whose arms keep
        the angle α between the two axes they have at the reference configuration:
        ``a₁·b₁ = cos α``.  α = 90° is the usual cross; any angle strictly between 0° and 180°
        is allowed (Exudyn's 3-D slider-crank: 104°).

        Parameters
        ----------
        body_a, body_b : int
            Node ids, either may be :data:`GROUND`.
        point : (3,) array_like [m]
            Joint point [m], world frame at the reference configuration.
        axis_a, axis_b : (3,) array_like [-]
            Axes [-] (any non-zero length), world frame at the reference
            configuration; they must not be parallel.

        Raises
        ------
        ModelError
            a zero axis, or parallel axes (the joint's angle row would have no gradient).
        """
        what = self._what(kinds.UNIVERSAL_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        ea = self._unit_axis(axis_a, f"{what} axis_a")
        eb = self._unit_axis(axis_b, f"{what} axis_b")
        cos = float(ea @ eb)
        if float(np.linalg.norm(np.cross(ea, eb))) < 1e-6:
            raise ModelError(
                f"{what}: axis_a {np.asarray(axis_a, float).tolist()} and axis_b "
                f"{np.asarray(axis_b, float).tolist()} are parallel; a universal joint's axes must meet at an "
                f"angle strictly between 0° and 180° (use a hinge joint for one common axis)"
            )
        return self._add_body_joint(kinds.UNIVERSAL_JOINT, a, b, p, p, joint_frame(ea), joint_frame(eb), param=cos)

    def add_planar_joint(self, body_a: int, body_b: int, point: ArrayLike, normal: ArrayLike) -> int:
        """Planar joint (3 rows): body_b's point ``point`` [m] stays in the plane of body_a through
        it with normal ``normal``, and body_b turns only about the normal.  Returns the id.

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point : (3,) array_like of float [m]
            A point of the plane, world frame at the reference configuration.
        normal : (3,) array_like of float
            The plane's normal (any non-zero length), world frame at the reference
            configuration.

        Returns
        -------
        int
            The constraint id.
        """
        what = self._what(kinds.PLANAR_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = joint_frame(self._unit_axis(normal, f"{what} normal"))
        return self._add_body_joint(kinds.PLANAR_JOINT, a, b, p, p, frame, frame)

    def add_weld_joint(self, body_a: int, body_b: int, point: ArrayLike) -> int:
        """Fixed joint (6 rows): body_b is welded to body_a; the reaction's torque is reported
        about ``point`` [m].  Returns the id.

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point : (3,) array_like of float [m]
            The point the reaction torque is reported about, world frame at the reference configuration.

        Returns
        -------
        int
            The constraint id.
        """
        what = self._what(kinds.WELD_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = np.eye(3)
        return self._add_body_joint(kinds.WELD_JOINT, a, b, p, p, frame, frame)

    def add_distance_constraint(
        self, body_a: int, body_b: int, point_a: ArrayLike, point_b: ArrayLike, length: float | None = None
    ) -> int:
        """Massless rigid rod (1 row): ``|p_b − p_a| = length`` between ``point_a`` (fixed in body_a)
        and ``point_b`` (fixed in body_b) [m]; ``length`` defaults to their distance at the
        reference configuration.  Returns the id.

        Parameters
        ----------
        body_a : int
            Node id of the first body, or :data:`GROUND`.
        body_b : int
            Node id of the second body, or :data:`GROUND` (not both).
        point_a : (3,) array_like of float [m]
            The rod's end fixed in body_a, world frame at the reference configuration.
        point_b : (3,) array_like of float [m]
            The rod's end fixed in body_b, world frame at the reference configuration (not
            ``point_a``).
        length : float or None, default None
            The rod's length [m] (> 0); None: the distance of the points at the reference
            configuration.

        Returns
        -------
        int
            The constraint id.

        Raises
        ------
        ModelError
            Unknown bodies, coincident points, or a length <= 0 or not finite.
        """
        what = self._what(kinds.DISTANCE_CONSTRAINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        pa = _vector(point_a, 3, f"{what} point_a")
        pb = _vector(point_b, 3, f"{what} point_b")
        dist = float(np.linalg.norm(pb - pa))
        if dist < 1e-12:
            raise ModelError(
                f"{what}: point_a and point_b coincide ({pa.tolist()}); the rod's direction is undefined "
                f"(use a ball joint)"
            )
        ell = dist if length is None else self._finite(length, f"{what} length")
        if ell <= 0.0:
            raise ModelError(f"{what}: length must be > 0 m, got {length!r}")
        eye = np.eye(3)
        return self._add_body_joint(kinds.DISTANCE_CONSTRAINT, a, b, pa, pb, eye, eye, param=ell)

    def add_point_on_line_joint(self, body_a: int, body_b: int, point: ArrayLike, axis: ArrayLike) -> int:
        """Point on a line (2 rows): body_b's point ``point`` stays on the line through ``point``
        along ``axis`` fixed in body_a; rotations are free.  Returns the constraint id.

        ``Φ = (Δ·a₂, Δ·a₃)``, ``Δ = p_b − p_a``, ``a₂, a₃`` ⊥ the line (fixed in a).

        Parameters
        ----------
        body_a : int
            Node id of the body that carries the line, or :data:`GROUND`.
        body_b : int
            Node id of the body that carries the point, or :data:`GROUND`.
        point : (3,) array_like [m]
            Body_b's point, on the line; world frame at the reference configuration.
        axis : (3,) array_like [-]
            Direction of the line, world frame at the reference configuration.
        """
        what = self._what(kinds.POINT_ON_LINE_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = joint_frame(self._unit_axis(axis, f"{what} axis"))
        rows = kinds.generic_rows((False, True, True, False, False, False))
        return self._add_body_joint(kinds.POINT_ON_LINE_JOINT, a, b, p, p, frame, frame, rows=rows)

    def add_point_on_plane_joint(self, body_a: int, body_b: int, point: ArrayLike, normal: ArrayLike) -> int:
        """Point on a plane (1 row): body_b's point ``point`` stays on the plane through ``point``
        with normal ``normal`` fixed in body_a; rotations are free.  Returns the constraint id.

        ``Φ = Δ·a₁``, ``Δ = p_b − p_a``, ``a₁`` the normal (fixed in a).

        Parameters
        ----------
        body_a : int
            Node id of the body that carries the plane, or :data:`GROUND`.
        body_b : int
            Node id of the body that carries the point, or :data:`GROUND`.
        point : (3,) array_like [m]
            Body_b's point, on the plane; world frame at the reference configuration.
        normal : (3,) array_like [-]
            Normal of the plane, world frame at the reference configuration.
        """
        what = self._what(kinds.POINT_ON_PLANE_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        frame = joint_frame(self._unit_axis(normal, f"{what} normal"))
        rows = kinds.generic_rows((True, False, False, False, False, False))
        return self._add_body_joint(kinds.POINT_ON_PLANE_JOINT, a, b, p, p, frame, frame, rows=rows)

    def add_generic_joint(
        self,
        body_a: int,
        body_b: int,
        point: ArrayLike,
        locked: Sequence[bool],
        frame: ArrayLike | None = None,
    ) -> int:
        """Generic joint: lock any of the three relative translations and three relative
        rotations of a joint frame (Exudyn's GenericJoint); returns the constraint id.

        The joint frame (origin ``point``, axes the columns of ``frame``) is fixed in body_a and,
        a copy, in body_b at the reference configuration.  Rows (``aᵢ``, ``bᵢ``: the frame's axes
        as carried by a and b, ``Δ = p_b − p_a``): all three translations locked: ``Δ`` (3 rows),
        else ``Δ·aᵢ`` per locked translation i; all three rotations locked: ``a₁·b₂, a₁·b₃,
        a₂·b₃``; two locked, f free: ``a_f·bⱼ, a_f·b_k`` (a hinge about f); one locked, k:
        ``aᵢ·bⱼ``, (i, j, k) cyclic.  ``locked = (1, 1, 1, 0, 1, 1)`` is a hinge about x,
        ``(0, 1, 1, 1, 1, 1)`` a slider along x, all six a weld, with exactly the rows of
        :meth:`add_hinge_joint`, :meth:`add_slider_joint`, :meth:`add_weld_joint` (axis = x).

        Parameters
        ----------
        body_a, body_b : int
            Node ids, either may be :data:`GROUND`.
        point : (3,) array_like [m]
            Origin of the joint frame [m], world frame at the reference configuration.
        locked : Sequence[bool]
            6 booleans (or 0/1): translations along x, y, z, then rotations about x, y, z
            of the joint frame; at least one.
        frame : (3, 3) array_like, optional
            Rotation matrix whose columns are the joint frame's x, y, z axes in world
            coordinates at the reference configuration (orthonormal, right-handed, to 1e-6; it is
            re-orthonormalised); default the identity.

        Raises
        ------
        ModelError
            ``locked`` not 6 booleans or locking nothing (the joint would have no rows), or a
            ``frame`` that is not a rotation matrix.
        """
        what = self._what(kinds.GENERIC_JOINT)
        a, b = self._joint_bodies(what, body_a, body_b)
        p = _vector(point, 3, f"{what} point")
        try:
            flags = [v for v in locked]
        except TypeError:
            flags = []
        if len(flags) != 6 or not all(isinstance(v, (bool, np.bool_)) or v in (0, 1) for v in flags):
            raise ModelError(
                f"{what}: locked must be 6 booleans (translations x, y, z, rotations x, y, z of the joint "
                f"frame), got {locked!r}"
            )
        flags = [bool(v) for v in flags]
        if not any(flags):
            raise ModelError(
                f"{what}: locked = {locked!r} locks nothing, so the joint would have no constraint rows "
                f"(leave it out, or lock at least one translation or rotation)"
            )
        axes = np.eye(3) if frame is None else self._rotation_matrix(frame, f"{what} frame")
        rows = kinds.generic_rows(flags)
        return self._add_body_joint(kinds.GENERIC_JOINT, a, b, p, p, axes.T, axes.T, rows=rows)

    @staticmethod
    def _rotation_matrix(value: ArrayLike, what: str) -> np.ndarray:
        try:
            m = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{what}: expected a 3×3 rotation matrix, got {value!r}") from exc
        if m.shape != (3, 3) or not np.all(np.isfinite(m)):
            raise ModelError(f"{what}: expected a 3×3 rotation matrix of finite numbers, got shape {m.shape}")
        err = float(np.abs(m.T @ m - np.eye(3)).max())
        if err > 1e-6 or np.linalg.det(m) <= 0.0:
            raise ModelError(
                f"{what}: must be a rotation matrix (orthonormal columns, determinant +1): "
                f"|FᵀF − I| = {err:.3g}, det = {np.linalg.det(m):.6g}"
            )
        u, _, vt = np.linalg.svd(m)
        return u @ vt

    # ------------------------------------------------------------------- build
    def build(self) -> Model:
        """Freeze the description into a :class:`Model` (DOF map, constraint rows, X0, axes)."""
        nodes = self._nodes
        n = len(nodes)
        if n == 0:
            raise ModelError("the model has no nodes")
        self._refresh_beam_tables()
        all_sig, pos_sig = 0b111111, 0b000111
        sig = np.zeros(n, dtype=np.int64)
        for node, _ in self._masses:
            sig[node] |= all_sig
        for a, b, _, _ in self._springs:
            sig[a] |= pos_sig
            sig[b] |= pos_sig
        for beam_nodes, _, _ in self._beams:
            sig[beam_nodes] |= all_sig
        for i, shape in enumerate(self._shapes):
            if sig[shape.node] != all_sig:
                raise ModelError(
                    f"{shape.kind} (shape {i}) is on node {shape.node}, which carries no mass or beam "
                    "(a collision shape belongs to a body)"
                )
        for c in self._constraints:
            sig[c.target] |= all_sig if kinds.TARGET_DOFS[c.kind] == 6 else pos_sig
            if c.base >= 0:
                sig[c.base] |= all_sig
        node_dofs = np.array([bin(int(s)).count("1") for s in sig], dtype=np.int64)
        node_map = dof_map(node_dofs)
        n_sys = int(node_dofs.sum())
        nc = len(self._constraints)
        n_rows = np.array(
            [kinds.N_ROWS[c.kind] if c.n_rows is None else c.n_rows for c in self._constraints], dtype=np.int64
        )
        rows = dof_map(n_rows) if nc else np.zeros(0, dtype=np.int64)
        X0 = np.zeros((nc, 3))
        axes = np.zeros((nc, 3, 3))
        geometry = np.zeros((nc, 2, 4, 3))
        param = np.zeros(nc)
        for i, c in enumerate(self._constraints):
            xt = nodes[c.target].position
            if c.geometry is not None:  # two-body joint: X_b − X_a, the ground at the origin
                X0[i] = xt - (nodes[c.base].position if c.base >= 0 else 0.0)
            elif c.kind in (kinds.PRESCRIBED_BC, kinds.PRESCRIBED_BC_3DOF):
                X0[i] = 0.0
            elif c.base < 0:
                X0[i] = xt - c.axis
            else:
                X0[i] = xt - nodes[c.base].position
            if c.geometry is not None:
                geometry[i] = c.geometry
                param[i] = c.param
                if c.listed is not None:
                    axes[i] = c.listed
                elif c.drive is not None:
                    axes[i] = c.drive
            elif c.kind == kinds.REVOLUTE_JOINT:
                axes[i] = revolute_axes(c.axis if np.linalg.norm(c.axis) > 0.0 else X0[i])
            elif c.kind == kinds.ROTATION_CONTROL:
                axes[i, 0] = c.axis / np.linalg.norm(c.axis)
            else:
                axes[i, 0] = c.axis
        x0 = np.array([np.concatenate([nd.position, nd.orientation]) for nd in nodes])
        q0 = np.array([nd.displacement for nd in nodes])
        v0 = np.array([nd.velocity for nd in nodes])
        given = np.array([nd.acceleration is not None for nd in nodes], dtype=np.int64)
        vd0 = np.array([nd.acceleration if nd.acceleration is not None else np.zeros(6) for nd in nodes])
        mass_node = np.array([m[0] for m in self._masses], dtype=np.int64)
        m_star = np.array([m[1] for m in self._masses]).reshape(len(self._masses), 6, 6)
        spring_node = np.array([[s[0], s[1]] for s in self._springs], dtype=np.int64).reshape(len(self._springs), 2)
        spring_x0 = np.array([nodes[s[1]].position - nodes[s[0]].position for s in self._springs]).reshape(-1, 3)
        return Model(
            n_nodes=n,
            n_masses=len(self._masses),
            n_springs=len(self._springs),
            n_constraints=nc,
            n_system_dofs=n_sys,
            n_dofs=n_sys + int(n_rows.sum()),
            x0=freeze(x0, np.float64),
            node_dofs=freeze(node_dofs, np.int64),
            node_map=freeze(node_map, np.int64),
            gravity=freeze(self.gravity, np.float64),
            mass_node=freeze(mass_node, np.int64),
            mass_m_star=freeze(m_star, np.float64),
            spring_node=freeze(spring_node, np.int64),
            spring_x0=freeze(spring_x0, np.float64),
            spring_l_ref=freeze(np.array([s[3] for s in self._springs], dtype=np.float64), np.float64),
            spring_k=freeze(np.array([s[2] for s in self._springs], dtype=np.float64), np.float64),
            constraint_kind=freeze(np.array([c.kind for c in self._constraints], dtype=np.int64), np.int64),
            constraint_node=freeze(
                np.array([[c.base, c.target] for c in self._constraints], dtype=np.int64).reshape(nc, 2), np.int64
            ),
            constraint_n_rows=freeze(n_rows, np.int64),
            constraint_row=freeze(rows, np.int64),
            constraint_X0=freeze(X0, np.float64),
            constraint_axes=freeze(axes, np.float64),
            initial_q=freeze(q0, np.float64),
            initial_v=freeze(v0, np.float64),
            initial_vd=freeze(vd0, np.float64),
            initial_vd_given=freeze(given, np.int64),
            initial_constraint_input=freeze(
                np.array([c.initial_input for c in self._constraints]).reshape(nc, 7), np.float64
            ),
            constraint_geometry=freeze(geometry, np.float64),
            constraint_param=freeze(param, np.float64),
            n_beams=len(self._beams),
            **self._beam_fields(),
            **contact.contact_fields(self._shapes, self._planes),
            **contact.pair_fields(
                self._shapes,
                contact.sphere_pairs(
                    self._shapes,
                    self._excluded,
                    {tuple(sorted((c.base, c.target))) for c in self._constraints if c.base >= 0},
                ),
                self._body_law,
            ),
            joint_stops=self._joint_stops(),
            hard_contacts=contact.hard_contact_fields(self._shapes, self._planes),
            **self._hard_body_fields(),
        )

    def _hard_body_fields(self) -> dict[str, np.ndarray]:
        """``hard_shapes`` (S, 16) and ``hard_excluded`` (E, 2) of the hard body law (docs/contact.md)."""
        law = self._hard_body_law
        if law is None or not self._shapes:
            return {"hard_shapes": no_hard_shapes(), "hard_excluded": no_hard_excluded()}
        stops = self._joint_stops()
        if self._beams or stops.shape[0]:
            what = "beams" if self._beams else "hard joint limits (limit_restitution)"
            raise ModelError(
                f"body contact law='hard' is built for rigid bodies, free or joined; this model has {what} "
                "(use the compliant law, set_body_contact(stiffness=...), or compliant joint limits with it)"
            )
        t = contact.shape_table(self._shapes)
        laws = np.tile(np.array(law, dtype=np.float64), (len(t), 1))
        rows = np.column_stack([t.node, t.kind, t.offset, t.frame, t.dims, t.group, t.mask, laws]).astype(np.float64)
        excluded = np.array(sorted(self._excluded), dtype=np.int64).reshape(-1, 2)
        return {"hard_shapes": freeze(rows, np.float64), "hard_excluded": freeze(excluded, np.int64)}

    def _joint_stops(self) -> np.ndarray:
        """The hard hinge and slider limits (K, 5): constraint id, kind, lower, upper, restitution."""
        rows = [(i, c.kind, *c.stops) for i, c in enumerate(self._constraints) if c.stops is not None]
        return freeze(np.array(rows, dtype=np.float64).reshape(len(rows), 5), np.float64)

    def _beam_fields(self) -> dict[str, np.ndarray]:
        """The beam fields of the Model, padded to the largest node and point counts."""
        n = len(self._beams)
        sizes = {
            "P": max([len(b[0]) for b in self._beams], default=2),
            "Q": max([b[1].qp_weight.shape[0] for b in self._beams], default=1),
        }
        out = {
            name: np.zeros((n, *(sizes[d] if isinstance(d, str) else d for d in shape)), dtype=dtype)
            for name, shape, dtype in BEAM_FIELDS
        }
        out["beam_node"][...] = -1
        for e, (ids, t, mu) in enumerate(self._beams):
            p, q = len(ids), t.qp_weight.shape[0]
            out["beam_node"][e, :p] = ids
            out["beam_n_nodes"][e] = p
            out["beam_n_qps"][e] = q
            out["beam_mu"][e] = mu
            out["beam_qp_weight"][e, :q] = t.qp_weight
            out["beam_qp_jacobian"][e, :q] = t.qp_jacobian
            out["beam_shape_interp"][e, :p, :q] = t.shape_interp
            out["beam_shape_deriv"][e, :p, :q] = t.shape_deriv
            out["beam_qp_x0"][e, :q] = t.qp_x0
            out["beam_qp_r0"][e, :q] = t.qp_r0
            out["beam_qp_x0_prime"][e, :q] = t.qp_x0_prime
            out["beam_qp_m_star"][e, :q] = t.qp_m_star
            out["beam_qp_c_star"][e, :q] = t.qp_c_star
        return {name: freeze(value, value.dtype.type) for name, value in out.items()}


def revolute_axes(axis: np.ndarray) -> np.ndarray:
    """Kynema's revolute frame (3, 3): row 0 = x̂ = axis/|axis|, rows 1, 2 = images of e2, e3
    under the rotation taking e1 to x̂ (``d I + k v vᵀ − ṽ`` with v = e1 × x̂, d = x̂·e1)."""
    x = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    e1 = np.array([1.0, 0.0, 0.0])
    d = float(x @ e1)
    if d < -1.0 + 1e-12:  # axis = −e1: rotation by π about e3
        return np.diag([-1.0, -1.0, 1.0])
    v = np.cross(e1, x)
    k = 1.0 / (1.0 + d)
    vt = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return d * np.eye(3) + k * np.outer(v, v) - vt


def joint_frame(axis: np.ndarray) -> np.ndarray:
    """Right-handed orthonormal frame (3, 3) whose row 0 is ``axis/|axis|`` (rows 1, 2 span the
    perpendicular plane; Kynema's revolute construction, :func:`revolute_axes`)."""
    return revolute_axes(axis)


def no_unknowns(model: Model) -> ModelError | None:
    """The error to raise when ``model`` is stepped although it has no unknowns (no node has a mass,
    beam, spring or constraint); None when it has some.  Such a model can still be made into a
    :class:`kynemapy.Simulation` to look at its initial state (Kynema's model tests do)."""
    if np.any(np.asarray(model.node_dofs) > 0):
        return None
    return ModelError(
        f"the model has no unknowns: none of its {model.n_nodes} node(s) has a mass, beam, spring or "
        f"constraint attached, so there is nothing to step"
    )


def check_simulation(model: Model, dynamic: bool = True) -> None:
    """Refuse a model with a node that makes the dynamics singular; raises :class:`ModelError` naming it.

    In dynamics (``dynamic``), a node with degrees of freedom (a spring ends on it) but neither a
    mass, a beam nor a constraint has no inertia in any direction: the iteration matrix is singular.
    (Statics may still solve it, when its springs hold it in every direction.)  A node with
    nothing attached at all has no unknowns and is left alone (Kynema's model tests create
    such states); a load on it is refused by :meth:`kynemapy.Simulation.set_load`, and a model
    with no unknowns at all is refused when it is stepped (:func:`no_unknowns`).
    """
    if not dynamic:
        return
    held = np.zeros(model.n_nodes, dtype=bool)
    held[np.asarray(model.mass_node, dtype=np.int64)] = True
    if model.n_beams:  # beam nodes have the beam's inertia
        beam_nodes = np.asarray(model.beam_node, dtype=np.int64)
        held[beam_nodes[beam_nodes >= 0]] = True
    for base, target in np.asarray(model.constraint_node, dtype=np.int64):
        held[target] = True
        if base >= 0:
            held[base] = True
    for i in range(model.n_nodes):
        if model.node_dofs[i] > 0 and not held[i]:
            raise ModelError(
                f"node {i} has no mass and no constraint (only springs): in dynamics its equation of "
                f"motion has no inertia, so the iteration matrix is singular; add a mass to it, "
                f"constrain it, or solve statics (StepParameters(dynamic=False))"
            )
