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
:func:`kynemapy.engine.elements.masses.rotate_section_matrix`.  Also here: sectional matrices from
engineering properties (Kynema's ``GenerateStiffnessMatrix``, ``GenerateMassMatrix``, hollow
circular sections), in BeamDyn's section axes (z along the beam).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from kynemapy.engine.elements.beams.interpolate import reference_geometry
from kynemapy.engine.elements.beams.shape import linear_weight_table, shape_tables


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
    weights = linear_weight_table(np.array([float(x) for x in qp_xi]), xs)  # (qps, sections)
    out = np.zeros((weights.shape[0], 6, 6))
    for s in range(xs.size):  # every point at once, the sections in Kynema's order
        out += mats[s][None] * weights[:, s, None, None]
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
    x0 = np.array(node_x0, dtype=float, order="C")  # writable: numba compiles a read-only one apart
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


# ---------------------------------------------------------------------------
# sectional matrices from engineering properties (Kynema's generate_sectional_properties.hpp,
# hollow_circle_properties.hpp).  These follow BeamDyn's section convention: the section lies in
# its x-y plane and z is the beam axis (EA at [2, 2], torsion at [5, 5]); the beam kernels take
# the first material axis along the beam, so such matrices are used in a frame with z along the
# reference line, or permuted first.


def generate_stiffness_matrix(
    EA: float,
    EI_x: float,
    EI_y: float,
    GKt: float,
    GA: float,
    kxs: float,
    kys: float,
    x_C: float = 0.0,
    y_C: float = 0.0,
    theta_p: float = 0.0,
    x_S: float = 0.0,
    y_S: float = 0.0,
    theta_s: float = 0.0,
) -> np.ndarray:
    """6×6 sectional stiffness about the reference point O (BeamDyn axes, z along the beam).

    Parameters
    ----------
    EA : float [N]
        Axial stiffness.
    EI_x : float [N m²]
        Bending stiffness about the first principal bending axis at the centroid C.
    EI_y : float [N m²]
        Bending stiffness about the second principal bending axis at C.
    GKt : float [N m²]
        Torsional stiffness about the shear center S.
    GA : float [N]
        Shear stiffness (multiplied by ``kxs``, ``kys``).
    kxs : float [-]
        Shear correction factor along the first principal shear axis.
    kys : float [-]
        Shear correction factor along the second principal shear axis.
    x_C : float [m], default 0.0
        Centroid offset from O along x.
    y_C : float [m], default 0.0
        Centroid offset from O along y.
    theta_p : float [rad], default 0.0
        Angle from the reference axes to the principal bending axes.
    x_S : float [m], default 0.0
        Shear-center offset from O along x.
    y_S : float [m], default 0.0
        Shear-center offset from O along y.
    theta_s : float [rad], default 0.0
        Angle from the reference axes to the principal shear axes.

    Returns
    -------
    (6, 6) ndarray of float
        The symmetric sectional stiffness matrix C* [N, N m, N m²] (rows: the strains of
        shear x, shear y, extension, bending x, bending y, torsion).
    """
    cp, sp = math.cos(theta_p), math.sin(theta_p)
    cs, ss = math.cos(theta_s), math.sin(theta_s)
    bending_xx = (EI_x * cp * cp) + (EI_y * sp * sp)
    bending_yy = (EI_x * sp * sp) + (EI_y * cp * cp)
    bending_xy = (EI_y - EI_x) * sp * cp
    shear_xx = GA * (kxs * cs * cs + kys * ss * ss)
    shear_yy = GA * (kxs * ss * ss + kys * cs * cs)
    shear_xy = GA * (kys - kxs) * ss * cs
    k = np.zeros((6, 6))
    k[0, 0] = shear_xx
    k[0, 1] = k[1, 0] = -shear_xy
    k[1, 1] = shear_yy
    k[2, 2] = EA
    k[2, 3] = k[3, 2] = EA * y_C
    k[2, 4] = k[4, 2] = -EA * x_C
    k[3, 3] = bending_xx + EA * y_C * y_C
    k[3, 4] = k[4, 3] = -bending_xy - EA * x_C * y_C
    k[4, 4] = bending_yy + EA * x_C * x_C
    k[0, 5] = k[5, 0] = -shear_xx * y_S - shear_xy * x_S
    k[1, 5] = k[5, 1] = shear_xy * y_S + shear_yy * x_S
    k[5, 5] = GKt + shear_xx * y_S * y_S + 2.0 * shear_xy * x_S * y_S + shear_yy * x_S * x_S
    return k


def generate_mass_matrix(
    m: float, I_x: float, I_y: float, I_p: float, x_G: float = 0.0, y_G: float = 0.0, theta_i: float = 0.0
) -> np.ndarray:
    """6×6 sectional mass matrix per unit length about O (BeamDyn axes, z along the beam).

    Parameters
    ----------
    m : float [kg/m]
        Mass per unit length.
    I_x : float [kg m]
        Mass moment of inertia per unit length about the first principal inertia axis at
        the centre of gravity G.
    I_y : float [kg m]
        The same about the second principal inertia axis.
    I_p : float [kg m]
        Polar mass moment of inertia per unit length about G.
    x_G : float [m], default 0.0
        Offset of G from O along x.
    y_G : float [m], default 0.0
        Offset of G from O along y.
    theta_i : float [rad], default 0.0
        Angle from the reference axes to the principal inertia axes.

    Returns
    -------
    (6, 6) ndarray of float
        The symmetric sectional mass matrix M* per unit length [kg/m, kg, kg m].
    """
    ci, si = math.cos(theta_i), math.sin(theta_i)
    inertia_xx = (I_x * ci * ci) + (I_y * si * si)
    inertia_yy = (I_x * si * si) + (I_y * ci * ci)
    inertia_xy = (I_y - I_x) * si * ci
    out = np.zeros((6, 6))
    out[0, 0] = out[1, 1] = out[2, 2] = m
    out[0, 5] = out[5, 0] = -m * y_G
    out[1, 5] = out[5, 1] = m * x_G
    out[2, 3] = out[3, 2] = m * y_G
    out[2, 4] = out[4, 2] = -m * x_G
    out[3, 3] = inertia_xx + m * y_G * y_G
    out[3, 4] = out[4, 3] = -inertia_xy - m * x_G * y_G
    out[4, 4] = inertia_yy + m * x_G * x_G
    out[5, 5] = I_p + m * (x_G * x_G + y_G * y_G)
    return out


class HollowCircleProperties(NamedTuple):
    """Area [m²], second moments Ixx, Iyy and polar moment J [m⁴], shear factors kx, ky [1]."""

    area: float
    Ixx: float
    Iyy: float
    J: float
    kx: float
    ky: float


def hollow_circle_properties(outer_diameter: float, wall_thickness: float, nu: float = 0.33) -> HollowCircleProperties:
    """Geometric properties of a hollow circular section (tube).

    Shear correction factor ``6 (1 + ν) / (7 + 6 ν)`` (Timoshenko).

    Parameters
    ----------
    outer_diameter : float [m]
        The outer diameter.
    wall_thickness : float [m]
        The wall thickness (less than the outer radius).
    nu : float [-], default 0.33
        Poisson's ratio ν.

    Returns
    -------
    HollowCircleProperties
        ``area`` [m²], second moments ``Ixx``, ``Iyy`` and polar moment ``J`` [m⁴], shear
        correction factors ``kx``, ``ky`` [-].

    Raises
    ------
    ValueError
        The wall is not thinner than the outer radius.
    """
    if wall_thickness >= outer_diameter / 2.0:
        raise ValueError(
            f"hollow circle: wall thickness {wall_thickness} must be less than the outer radius {outer_diameter / 2.0}"
        )
    ro = outer_diameter / 2.0
    ri = ro - wall_thickness
    area = math.pi * (ro**2 - ri**2)
    ixx = math.pi * (ro**4 - ri**4) / 4.0
    polar = math.pi * (ro**4 - ri**4) / 2.0
    kx = (6.0 * (1.0 + nu)) / (7.0 + 6.0 * nu)
    return HollowCircleProperties(area=area, Ixx=ixx, Iyy=ixx, J=polar, kx=kx, ky=kx)


def hollow_circle_section(
    E: float, G: float, rho: float, outer_diameter: float, wall_thickness: float, nu: float, **offsets: float
) -> tuple[np.ndarray, np.ndarray]:
    """Sectional mass and stiffness matrices of a homogeneous tube.

    Parameters
    ----------
    E : float [Pa]
        Young's modulus.
    G : float [Pa]
        Shear modulus.
    rho : float [kg/m³]
        Density.
    outer_diameter : float [m]
        The outer diameter.
    wall_thickness : float [m]
        The wall thickness (less than the outer radius).
    nu : float [-]
        Poisson's ratio ν (for the shear correction factors).
    **offsets : float
        The keyword offsets [m] and angles [rad] of :func:`generate_mass_matrix` (``x_G``,
        ``y_G``, ``theta_i``) and :func:`generate_stiffness_matrix` (``x_C``, ``y_C``,
        ``theta_p``, ``x_S``, ``y_S``, ``theta_s``).

    Returns
    -------
    mass : (6, 6) ndarray of float
        M* per unit length [kg/m, kg, kg m].
    stiffness : (6, 6) ndarray of float
        C* [N, N m, N m²].

    Raises
    ------
    ValueError
        The wall is not thinner than the outer radius.
    """
    p = hollow_circle_properties(outer_diameter, wall_thickness, nu)
    i_x, i_y = rho * p.Ixx, rho * p.Iyy
    mass_keys = ("x_G", "y_G", "theta_i")
    mass = generate_mass_matrix(
        rho * p.area, i_x, i_y, i_x + i_y, **{k: v for k, v in offsets.items() if k in mass_keys}
    )
    stiffness = generate_stiffness_matrix(
        E * p.area, E * p.Ixx, E * p.Iyy, G * p.J, G * p.area, p.kx, p.ky,
        **{k: v for k, v in offsets.items() if k not in mass_keys},
    )  # fmt: skip
    return mass, stiffness
