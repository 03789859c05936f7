"""The frozen model: NamedTuple tables of read-only arrays, and the DOF map.

Names follow Kynema (``x0``) and MuJoCo (``{entity}_{attr}``, ``n_{entity}``).
Units: SI (m, kg, s, rad, N, N m).  Arrays are C-contiguous float64 / int64 and
made read-only, so a compiled kernel that tries to write one fails to compile.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Model(NamedTuple):
    """A built model (see :class:`kynemapy.ModelBuilder`).

    Attributes
    ----------
    n_nodes, n_masses, n_springs, n_constraints : counts.
    n_system_dofs : node DOFs (6 per body node, 3 per position-only node).
    n_dofs : n_system_dofs plus the constraint rows (size of the Newton system).
    x0 : (n_nodes, 7) reference position [m] and orientation quaternion (w, x, y, z).
    node_dofs : (n_nodes,) active DOFs per node (0, 3 or 6).
    node_map : (n_nodes,) first row of the node in the Newton system.
    gravity : (3,) [m/s²].
    mass_node : (n_masses,) node index; mass_m_star : (n_masses, 6, 6) material
        mass matrix M* [kg, kg m, kg m²] about the node.
    spring_node : (n_springs, 2); spring_x0 : (n_springs, 3) reference vector
        X2 − X1 [m]; spring_l_ref : (n_springs,) undeformed length [m];
        spring_k : (n_springs,) stiffness [N/m].
    constraint_kind : (n_constraints,) kind code (:mod:`kynemapy.model.kinds`).
    constraint_node : (n_constraints, 2) base and target node (base −1 for one-node kinds).
    constraint_n_rows : (n_constraints,) rows; constraint_row : (n_constraints,)
        first row in the Newton system.
    constraint_X0 : (n_constraints, 3) [m]; constraint_axes : (n_constraints, 3, 3) Kynema's
        axes; for the point-on-line, point-on-plane and generic joints their row list
        (:func:`kynemapy.model.kinds.encode_rows`).
    initial_q : (n_nodes, 7), initial_v, initial_vd : (n_nodes, 6) initial displacement,
        velocity and acceleration; initial_vd_given : (n_nodes,) int64, 1 where the
        acceleration was given; initial_constraint_input : (n_constraints, 7).
    constraint_geometry : (n_constraints, 2, 4, 3) two-body joints (kinds >= 9): per side
        (0 = base a, 1 = target b) the offset d [m] of the joint point from the node and up
        to three unit axes, world frame at the reference configuration (current point
        X + u + R(r) d, current axis R(r) e); for a ground side d is the world point.
        Zero for Kynema's kinds.  The joint's ``constraint_X0`` is X_b − X_a (X_a = 0 for
        the ground).
    constraint_param : (n_constraints,) distance constraint length [m]; cos α of a universal
        joint's axes [-]; 0 for other kinds.
    n_beams : number of beam elements (Kynema's geometrically exact beam,
        :mod:`kynemapy.engine.elements.beams`).  Per element, padded to the largest node count
        P and quadrature-point count Q of the model's elements (P = 2, Q = 1 without beams):
    beam_node : (n_beams, P) int64 nodes (GLL points in span order), −1 padded;
        beam_n_nodes, beam_n_qps : (n_beams,) int64 the element's own counts;
        beam_mu : (n_beams, 6) structural damping coefficients μ [s] (D* = diag(μ) C*);
        beam_qp_weight : (n_beams, Q) quadrature weights on [−1, 1];
        beam_qp_jacobian : (n_beams, Q) J = ‖dX/dξ‖ [m];
        beam_shape_interp, beam_shape_deriv : (n_beams, P, Q) Lagrange shape functions φ and
        dφ/dξ at the points;
        beam_qp_x0 : (n_beams, Q, 3) reference position [m]; beam_qp_r0 : (n_beams, Q, 4)
        reference orientation (w, x, y, z); beam_qp_x0_prime : (n_beams, Q, 3) unit tangent;
        beam_qp_m_star, beam_qp_c_star : (n_beams, Q, 6, 6) sectional mass [kg/m, kg, kg m]
        and stiffness [N, N m, N m²] matrices in the material frame (first axis along the beam).
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
