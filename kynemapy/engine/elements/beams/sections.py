"""Sectional matrices at the quadrature points and the set-up tables of one beam element.

Set-up code (plain Python and numpy, run once when a beam is built).  A section gives the 6×6
mass matrix ``M*`` per unit length [kg/m, kg, kg m] and stiffness matrix ``C*`` [N, N m, N m²]
in the material frame at a span fraction ``s`` ∈ [0, 1] of the element (full coupling: any
symmetric 6×6 matrices, not only diagonal ones).  They are interpolated linearly between
sections to the quadrature points (held constant beyond the first and last section), as
Kynema's ``PopulateQPMstar``/``PopulateQPCstar`` do.  The kernels rotate them into the
inertial frame at every evaluation by the *current* orientation of the point,
``M = diag(R, R) M* diag(R, R)ᵀ`` with ``R = R(r ⊗ r0)`` (r: interpolated rotation
displacement, r0: reference orientation), with the rigid-body kernel
:func:`kynemapy.engine.elements.masses.rotate_section_matrix`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from kynemapy.engine.elements.beams.interpolate import reference_geometry
from kynemapy.engine.elements.beams.shape import linear_weights, shape_tables


def interpolate_sections(section_xi: Sequence[float], matrices: np.ndarray, qp_xi: Sequence[float]) -> np.ndarray:
    """Sectional matrices linearly interpolated to the quadrature points, shape (qps, 6, 6).

    Parameters
    ----------
    section_xi : (sections,) ascending reference coordinates ξ ∈ [−1, 1] of the sections.
    matrices : (sections, 6, 6) the sectional matrices (any units; returned in the same).
    qp_xi : (qps,) reference coordinates of the quadrature points.

    Kynema's order: ``Σ_s matrices[s] · weight_s`` accumulated from zero, sections in order.
    """
    mats = np.asarray(matrices, dtype=float)
    xs = np.asarray(section_xi, dtype=float)
    if mats.ndim != 3 or mats.shape[1:] != (6, 6) or mats.shape[0] != xs.size:
        raise ValueError(f"sections: expected ({xs.size}, 6, 6) matrices, got {mats.shape}")
    if np.any(np.diff(xs) <= 0.0):
        raise ValueError(f"sections: positions must be strictly ascending, got {xs.tolist()}")
    out = np.zeros((len(qp_xi), 6, 6))
    for k, x in enumerate(qp_xi):
        weights = linear_weights(float(x), xs)
        for s in range(xs.size):
            out[k] += mats[s] * weights[s]
    return out


class ElementTables(NamedTuple):
    """Everything one beam element's kernel reads besides the node states.

    ``shape_interp``, ``shape_deriv`` (nodes, qps): φ and dφ/dξ; ``qp_weight`` (qps,);
    ``qp_jacobian`` (qps,) J [m]; ``qp_x0`` (qps, 3) [m]; ``qp_r0`` (qps, 4);
    ``qp_x0_prime`` (qps, 3) unit tangent; ``qp_m_star``, ``qp_c_star`` (qps, 6, 6) material-frame
    sectional mass and stiffness at the points.
    """

    shape_interp: np.ndarray
    shape_deriv: np.ndarray
    qp_weight: np.ndarray
    qp_jacobian: np.ndarray
    qp_x0: np.ndarray
    qp_r0: np.ndarray
    qp_x0_prime: np.ndarray
    qp_m_star: np.ndarray
    qp_c_star: np.ndarray


def element_tables(
    node_x0: np.ndarray,
    node_s: Sequence[float],
    quadrature: np.ndarray,
    section_s: Sequence[float],
    m_star: np.ndarray,
    c_star: np.ndarray,
) -> ElementTables:
    """The set-up tables of one element (Kynema's ``CreateBeams`` for one element).

    Parameters
    ----------
    node_x0 : (nodes, 7) reference position [m] and orientation quaternion (w, x, y, z) of the
        element's nodes.
    node_s : (nodes,) span fraction s ∈ [0, 1] of each node (ξ = 2 s − 1).
    quadrature : (qps, 2) rows (ξ, weight) on [−1, 1] (see :mod:`.quadrature`).
    section_s : (sections,) span fractions of the sections, ascending.
    m_star, c_star : (sections, 6, 6) sectional mass and stiffness matrices, material frame.
    """
    x0 = np.ascontiguousarray(node_x0, dtype=float)
    if x0.ndim != 2 or x0.shape[1] != 7 or x0.shape[0] < 2:
        raise ValueError(f"beam element: node_x0 must be (nodes >= 2, 7), got {x0.shape}")
    node_xi = 2.0 * np.asarray(node_s, dtype=float) - 1.0
    quad = np.asarray(quadrature, dtype=float)
    qp_xi = quad[:, 0]
    interp, deriv = shape_tables(node_xi, qp_xi)
    section_xi = 2.0 * np.asarray(section_s, dtype=float) - 1.0
    nq = qp_xi.size
    qp_x0 = np.zeros((nq, 3))
    qp_r0 = np.zeros((nq, 4))
    qp_x0_prime = np.zeros((nq, 3))
    qp_jacobian = np.zeros(nq)
    reference_geometry(interp, deriv, x0, qp_x0, qp_r0, qp_x0_prime, qp_jacobian)
    return ElementTables(
        shape_interp=interp,
        shape_deriv=deriv,
        qp_weight=np.ascontiguousarray(quad[:, 1]),
        qp_jacobian=qp_jacobian,
        qp_x0=qp_x0,
        qp_r0=qp_r0,
        qp_x0_prime=qp_x0_prime,
        qp_m_star=interpolate_sections(section_xi, m_star, qp_xi),
        qp_c_star=interpolate_sections(section_xi, c_star, qp_xi),
    )
