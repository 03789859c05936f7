"""Whole beams from a reference axis, and Kynema's beam transforms (set-up code, plain numpy).

:meth:`kynemapy.ModelBuilder.add_beam` ends here.  A beam is described as Kynema-FMB's
interfaces describe a blade (``src/interfaces/components/beam.cpp``, ``beam_input.hpp``):

* a **reference axis**: K >= 2 points (K, 3) [m] at span fractions ``point_s`` (from arc length
  when left out); the element's node positions are Kynema's constrained least-squares fit of
  the points (end points interpolated) by a polynomial on the element's Gauss–Lobatto–Legendre
  (GLL) nodes, of degree ``min(K, order + 1, 10) − 1``, raised to the element's order;
* **node orientations** from the axis tangent alone (Kynema's ``TangentTwistToQuaternion(t, 0)``:
  first axis along the tangent, second in the plane of the tangent and e_y, or e_x when the
  tangent lies within 25.8° of e_y);
* a **twist** table (span fractions, [rad]) about the reference axis: as in Kynema it turns the
  sectional matrices, not the nodes (``M* ← diag(R, R) M* diag(R, R)ᵀ``, R the rotation by the
  linearly interpolated twist about the first material axis, at every section the beam uses);
* **sections** at span fractions (first 0, last 1): 6×6 mass M* and stiffness C* matrices in
  the material frame, first axis along the beam, full coupling;
* the **quadrature** as in Kynema: ``"gll"`` (Kynema's default) or ``"gauss"`` rules, either
  ``"segmented"`` (Kynema's default: one rule per interval between given sections, with
  ``section_refinement`` extra sections linearly interpolated in each) or ``"whole"`` (one rule
  of ``section_refinement + 2`` (GLL) or ``+ 1`` (Gauss) points over the beam); sections are
  placed at the quadrature points, so the element reads them there exactly.  ``"gll"``,
  ``"segmented"`` with no refinement is the trapezoidal rule on the section stations.

Kynema's interface beam is one element (``n_elements = 1``, numbers as Kynema's).  kynemapy
also splits the beam into ``n_elements`` elements of equal span: the axis is then fitted once
(degree ``min(K, 10) − 1``), evaluated at every element's GLL nodes (shared end nodes), its
tangent taken from the fitted polynomial, and every element gets the sections of its span
(given stations inside it, and its two ends linearly interpolated) with the rule above.

The transforms (Kynema's ``Model::TranslateBeam``, ``RotateBeamAboutPoint``,
``SetBeamVelocityAboutPoint``, ``SetBeamAccelerationAboutPoint``, ``src/model/node.hpp``) change
the nodes' reference positions and orientations (``x0``) and their initial velocities and
accelerations; the elements' reference tables follow at ``build()``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kynemapy.model.errors import ModelError

ArrayLike = Sequence[float] | np.ndarray

#: Kynema's ``Beam::kMaxGeometryPoints``: the highest polynomial the axis is fitted with, plus one
MAX_GEOMETRY_POINTS = 10
QUADRATURE_RULES = ("gll", "gauss")
QUADRATURE_STYLES = ("segmented", "whole")


@dataclass(frozen=True)
class Beam:
    """What :meth:`~kynemapy.ModelBuilder.add_beam` returns: the ids of a beam's pieces.

    Attributes
    ----------
    name : the beam's name (used in error messages).
    nodes : node ids in span order, root first (shared element end nodes once).
    elements : beam element ids in span order.
    node_s : (N,) span fraction of each node in ``nodes``.
    root, tip : ids of the first and last node.
    """

    name: str
    nodes: tuple[int, ...]
    elements: tuple[int, ...]
    node_s: tuple[float, ...]

    @property
    def root(self) -> int:
        """Id of the root node (span fraction 0)."""
        return self.nodes[0]

    @property
    def tip(self) -> int:
        """Id of the tip node (span fraction 1)."""
        return self.nodes[-1]


@dataclass
class ElementLayout:
    """One element of a beam layout: local node indices, and what ``add_beam_element`` takes."""

    nodes: list[int]  #: indices into the layout's nodes
    node_s: np.ndarray  #: (P,) element-local span fractions
    quadrature: np.ndarray  #: (Q, 2) rows (ξ, weight)
    section_s: np.ndarray  #: (S,) element-local span fractions
    m_star: np.ndarray  #: (S, 6, 6), twist applied
    c_star: np.ndarray  #: (S, 6, 6), twist applied


@dataclass
class BeamLayout:
    """A beam before it enters a builder: its nodes' span fractions, positions, orientations,
    and its elements (:func:`beam_layout`)."""

    node_s: np.ndarray  #: (N,) span fractions
    positions: np.ndarray  #: (N, 3) [m]
    orientations: np.ndarray  #: (N, 4) quaternions (w, x, y, z)
    elements: list[ElementLayout]


# ------------------------------------------------------------------ small math (Eigen's formulas)
def quaternion_to_matrix(q: ArrayLike) -> np.ndarray:
    """Rotation matrix (3, 3) of a unit quaternion (w, x, y, z), Eigen's ``toRotationMatrix``."""
    w, x, y, z = (float(v) for v in q)
    tx, ty, tz = 2.0 * x, 2.0 * y, 2.0 * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    return np.array(
        [
            [1.0 - (tyy + tzz), txy - twz, txz + twy],
            [txy + twz, 1.0 - (txx + tzz), tyz - twx],
            [txz - twy, tyz + twx, 1.0 - (txx + tyy)],
        ]
    )


def matrix_to_quaternion(m: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation matrix (3, 3), Eigen's ``Quaternion(Matrix3)``."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    q = np.zeros(4)
    if trace > 0.0:
        t = math.sqrt(trace + 1.0)
        q[0] = 0.5 * t
        t = 0.5 / t
        q[1] = (m[2, 1] - m[1, 2]) * t
        q[2] = (m[0, 2] - m[2, 0]) * t
        q[3] = (m[1, 0] - m[0, 1]) * t
        return q
    i = 0
    if m[1, 1] > m[0, 0]:
        i = 1
    if m[2, 2] > m[i, i]:
        i = 2
    j, k = (i + 1) % 3, (i + 2) % 3
    t = math.sqrt(m[i, i] - m[j, j] - m[k, k] + 1.0)
    q[1 + i] = 0.5 * t
    t = 0.5 / t
    q[0] = (m[k, j] - m[j, k]) * t
    q[1 + j] = (m[j, i] + m[i, j]) * t
    q[1 + k] = (m[k, i] + m[i, k]) * t
    return q


def quaternion_product(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamilton product a ⊗ b of quaternions (w, x, y, z), Eigen's order of terms."""
    aw, ax, ay, az = (float(v) for v in a)
    bw, bx, by, bz = (float(v) for v in b)
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by + ay * bw + az * bx - ax * bz,
            aw * bz + az * bw + ax * by - ay * bx,
        ]
    )


def rotate_vector(q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """``q v q*`` for a unit quaternion, Eigen's ``_transformVector``: v + w (2 u×v) + u × (2 u×v)."""
    w = float(q[0])
    u = np.array([float(q[1]), float(q[2]), float(q[3])])
    vv = np.asarray(v, dtype=float)
    uv = np.cross(u, vv)
    uv = uv + uv
    return vv + w * uv + np.cross(u, uv)


def tangent_to_quaternion(tangent: ArrayLike) -> np.ndarray:
    """Kynema's ``TangentTwistToQuaternion(tangent, 0)``: orientation (w, x, y, z) whose first
    axis is the unit tangent, second in the plane of the tangent and e_y (e_x when
    ``|t·e_y| > 0.9``), third their cross product."""
    e1 = np.asarray(tangent, dtype=float)
    e1 = e1 / math.sqrt(float(e1 @ e1))
    plane = np.array([1.0, 0.0, 0.0]) if abs(e1[1]) > 0.9 else np.array([0.0, 1.0, 0.0])
    e2 = plane - float(e1 @ plane) * e1
    e2 = e2 / math.sqrt(float(e2 @ e2))
    e3 = np.cross(e1, e2)
    return matrix_to_quaternion(np.column_stack((e1, e2, e3)))


def rotate_section(matrix: np.ndarray, q: ArrayLike) -> np.ndarray:
    """Kynema's ``RotateMatrix6``: ``diag(R, R) M diag(R, R)ᵀ`` (6, 6), R the rotation of ``q``."""
    r = quaternion_to_matrix(q)
    mt = np.empty((6, 6))
    mt[:3] = r @ matrix[:3]
    mt[3:] = r @ matrix[3:]
    out = np.empty((6, 6))
    out[:, :3] = mt[:, :3] @ r.T
    out[:, 3:] = mt[:, 3:] @ r.T
    return out


def twist_quaternion(angle: float) -> np.ndarray:
    """Rotation by ``angle`` [rad] about the first axis (Eigen's ``AngleAxis(angle, e_x)``)."""
    return np.array([math.cos(0.5 * angle), math.sin(0.5 * angle), 0.0, 0.0])


def linear_interp(x: float, xs: np.ndarray, values: np.ndarray) -> float:
    """Kynema's ``LinearInterp`` (constant beyond the ends)."""
    from kynemapy.engine.elements.beams.shape import linear_weights  # set-up module, no numba

    return float(np.dot(linear_weights(x, xs), values))


# ---------------------------------------------------------------------------------- geometry
def _fit(xi_points: np.ndarray, points: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Kynema's ``PerformLeastSquaresFitting``: coefficients (p, 3) at the ``basis`` nodes of the
    least-squares polynomial through ``points`` (n, 3) at ``xi_points``, ends interpolated."""
    from kynemapy.engine.elements.beams.shape import lagrange_weights

    p = basis.size
    s = np.array([lagrange_weights(float(x), basis) for x in xi_points]).T  # (p, n): φ_i(ξ_j)
    a = s @ s.T
    a[0, :] = 0.0
    a[-1, :] = 0.0
    a[0, 0] = 1.0
    a[p - 1, p - 1] = 1.0
    b = s @ points
    b[0] = points[0]
    b[-1] = points[-1]
    return np.linalg.solve(a, b)


def _evaluate(basis: np.ndarray, coefficients: np.ndarray, xi: float, derivative: bool = False) -> np.ndarray:
    from kynemapy.engine.elements.beams.shape import lagrange_derivative_weights, lagrange_weights

    w = (lagrange_derivative_weights if derivative else lagrange_weights)(float(xi), basis)
    out = np.zeros(3)
    for i in range(basis.size):
        out += w[i] * coefficients[i]
    return out


def _single_element_geometry(xi_points: np.ndarray, points: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Kynema's ``CreateNodeGeometry`` and ``CalcNodeTangents`` for one element: node positions
    (P, 3) and unit tangents (P, 3) at the GLL nodes of ``order``."""
    from kynemapy.engine.elements.beams.quadrature import gll_points
    from kynemapy.engine.elements.beams.shape import lagrange_derivative_weights, lagrange_weights

    node_xi = gll_points(order)
    n_nodes = order + 1
    n_geometry = min(points.shape[0], n_nodes, MAX_GEOMETRY_POINTS)
    if n_geometry < n_nodes:
        basis = gll_points(n_geometry - 1)
        coefficients = _fit(xi_points, points, basis)
        positions = np.zeros((n_nodes, 3))
        for out in range(n_nodes):  # ProjectPointsToTargetPolynomial
            w = lagrange_weights(float(node_xi[out]), basis)
            for i in range(n_geometry):
                positions[out] += w[i] * coefficients[i]
    else:
        positions = _fit(xi_points, points, node_xi)
    tangents = np.zeros((n_nodes, 3))
    for node_2 in range(n_nodes):
        w = lagrange_derivative_weights(float(node_xi[node_2]), node_xi)
        for node_1 in range(n_nodes):
            tangents[node_2] += w[node_1] * positions[node_1]
    tangents /= np.linalg.norm(tangents, axis=1)[:, None]
    return positions, tangents


# ---------------------------------------------------------------------------------- sections
def _interp_matrix(s: float, stations: np.ndarray, matrices: np.ndarray) -> np.ndarray:
    from kynemapy.engine.elements.beams.shape import linear_weights

    w = linear_weights(s, stations)
    out = np.zeros((6, 6))
    for k in range(stations.size):
        if w[k] != 0.0:
            out += w[k] * matrices[k]
    return out


def _element_sections(
    loc: np.ndarray,
    m: np.ndarray,
    c: np.ndarray,
    twist_at: Any,
    rule: str,
    style: str,
    refinement: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kynema's ``BuildBeamSections_*`` and ``CreateGaussLegendre(Lobatto)Quadrature`` for one
    element with sections at local span fractions ``loc`` (first 0, last 1).

    Returns ``(section_s, m_star, c_star, quadrature)``; ``twist_at(s_local)`` gives the twist [rad].
    """
    from kynemapy.engine.elements.beams.quadrature import gauss_points_weights, gll_points, gll_weights

    def twisted(s: float, mm: np.ndarray, cc: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        q = twist_quaternion(twist_at(s))
        return s, rotate_section(mm, q), rotate_section(cc, q)

    sections: list[tuple[float, np.ndarray, np.ndarray]] = []
    n_rule = refinement + 1  # Kynema's `order` argument of the rule
    if rule == "gll":
        locations = gll_points(n_rule)  # n_rule + 1 points
        weights = gll_weights(n_rule)
    else:
        locations, weights = gauss_points_weights(n_rule)
    if style == "segmented":
        if rule == "gll":
            sections.append(twisted(float(loc[0]), m[0], c[0]))
        for k in range(1, loc.size):
            inner = range(refinement) if rule == "gll" else range(refinement + 1)
            for r in inner:
                alpha = (locations[r + 1] + 1.0) / 2.0 if rule == "gll" else (locations[r] + 1.0) / 2.0
                s = (1.0 - alpha) * loc[k - 1] + alpha * loc[k]
                mm = (1.0 - alpha) * m[k - 1] + alpha * m[k]
                cc = (1.0 - alpha) * c[k - 1] + alpha * c[k]
                sections.append(twisted(float(s), mm, cc))
            if rule == "gll":
                sections.append(twisted(float(loc[k]), m[k], c[k]))
        original = loc
    else:
        lo, hi = float(loc[0]), float(loc[-1])
        for x in locations:
            alpha = (x + 1.0) / 2.0
            s = (1.0 - alpha) * lo + alpha * hi
            # linear between the bounding stations (Kynema's BuildBeamSections_WholeBeam always
            # takes the first two stations, extrapolating beyond the second: not reproduced)
            sections.append(twisted(float(s), _interp_matrix(float(s), loc, m), _interp_matrix(float(s), loc, c)))
        original = np.array([lo, hi])
    grid = np.array([sec[0] for sec in sections])
    # the rule's points and weights (Kynema's CreateGaussLegendre(Lobatto)Quadrature)
    if rule == "gll":
        g_min, g_max = float(grid.min()), float(grid.max())
    else:
        g_min, g_max = float(original.min()), float(original.max())
    g_range = g_max - g_min
    quadrature = np.zeros((grid.size, 2))
    quadrature[:, 0] = 2.0 * (grid - g_min) / g_range - 1.0
    per = weights.size
    index = 0
    for k in range(original.size - 1):
        scale = (original[k + 1] - original[k]) / g_range
        for node in range(per):
            quadrature[index + node, 1] += weights[node] * scale
        index += per - 1 if rule == "gll" else per
    m_out = np.array([sec[1] for sec in sections])
    c_out = np.array([sec[2] for sec in sections])
    return grid, m_out, c_out, quadrature


# ---------------------------------------------------------------------------------- the layout
def _array(value: Any, what: str, shape: tuple[int | None, ...]) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{what}: expected numbers, got {value!r}") from exc
    if arr.ndim != len(shape) or any(n is not None and arr.shape[i] != n for i, n in enumerate(shape)):
        want = "(" + ", ".join("K" if n is None else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ModelError(f"{what}: expected shape {want}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{what}: values must be finite, got {arr.tolist()}")
    return arr.copy()


def _increasing(arr: np.ndarray, what: str) -> None:
    if np.any(np.diff(arr) <= 0.0):
        raise ModelError(f"{what}: must be strictly increasing, got {arr.tolist()}")


def beam_layout(
    name: str,
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
    section_refinement: int = 0,
) -> BeamLayout:
    """The nodes and elements of a beam, before they enter a builder (see the module docstring).

    Parameters
    ----------
    name : the beam's name in error messages.
    points : (K, 3) reference-axis points [m], K >= 2.
    section_s : (S,) section stations (span fractions), increasing, first 0, last 1.
    m_star, c_star : (S, 6, 6) sectional mass [kg/m, kg, kg m] and stiffness [N, N m, N m²]
        matrices, material frame (first axis along the beam).
    point_s, twist, twist_s, order, n_elements, quadrature, quadrature_style, section_refinement :
        as :meth:`kynemapy.ModelBuilder.add_beam`.

    Returns
    -------
    BeamLayout : node span fractions (N,), positions (N, 3) [m], orientations (N, 4), and per
        element its node indices and the arguments of ``add_beam_element`` (twist applied).

    Raises
    ------
    ModelError
        naming the beam and the argument (``beam 'blade' twist: ...``).
    """
    from kynemapy.engine.elements.beams.quadrature import gll_points

    what = f"beam {name!r}"
    pts = _array(points, f"{what} points", (None, 3))
    if pts.shape[0] < 2:
        raise ModelError(f"{what} points: the reference axis needs at least two points, got {pts.shape[0]}")
    if point_s is None:
        chord = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))))
        if chord[-1] <= 0.0 or np.any(np.diff(chord) <= 0.0):
            raise ModelError(f"{what} points: two consecutive reference-axis points coincide (give point_s)")
        ps = chord / chord[-1]
    else:
        ps = _array(point_s, f"{what} point_s", (pts.shape[0],))
        _increasing(ps, f"{what} point_s (span fractions of the points)")
    for key, value in (("order", order), ("n_elements", n_elements)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ModelError(f"{what} {key}: must be an integer >= 1, got {value!r}")
    if isinstance(section_refinement, bool) or not isinstance(section_refinement, (int, np.integer)):
        raise ModelError(f"{what} section_refinement: must be an integer >= 0, got {section_refinement!r}")
    if section_refinement < 0:
        raise ModelError(f"{what} section_refinement: must be an integer >= 0, got {section_refinement!r}")
    if quadrature not in QUADRATURE_RULES:
        raise ModelError(f"{what} quadrature: must be one of {QUADRATURE_RULES}, got {quadrature!r}")
    if quadrature_style not in QUADRATURE_STYLES:
        raise ModelError(f"{what} quadrature_style: must be one of {QUADRATURE_STYLES}, got {quadrature_style!r}")
    sec_s = _array(section_s, f"{what} section_s", (None,))
    if sec_s.size < 2:
        raise ModelError(f"{what} section_s: needs at least two stations (0 and 1), got {sec_s.tolist()}")
    _increasing(sec_s, f"{what} section_s (section stations)")
    if sec_s[0] != 0.0 or sec_s[-1] != 1.0:
        raise ModelError(
            f"{what} section_s: must start at 0 and end at 1 (root and tip), "
            f"got {float(sec_s[0])!r} ... {float(sec_s[-1])!r}"
        )
    m = _array(m_star, f"{what} m_star", (sec_s.size, 6, 6))
    c = _array(c_star, f"{what} c_star", (sec_s.size, 6, 6))
    if twist is None:
        if twist_s is not None:
            raise ModelError(f"{what} twist_s: given without twist")
        tw_s, tw = np.array([0.0, 1.0]), np.zeros(2)
    elif np.ndim(twist) == 0:
        if twist_s is not None:
            raise ModelError(f"{what} twist_s: a single twist value takes no twist_s")
        value = _array([twist], f"{what} twist", (1,))[0]
        tw_s, tw = np.array([0.0, 1.0]), np.array([value, value])
    else:
        tw = _array(twist, f"{what} twist", (None,))
        if twist_s is None:
            if tw.size != sec_s.size:
                raise ModelError(
                    f"{what} twist: {tw.size} values but {sec_s.size} section stations "
                    f"(give twist_s, or one twist per section)"
                )
            tw_s = sec_s.copy()
        else:
            tw_s = _array(twist_s, f"{what} twist_s", (None,))
            if tw_s.size != tw.size:
                raise ModelError(f"{what} twist: {tw.size} values but twist_s has {tw_s.size} stations")
            _increasing(tw_s, f"{what} twist_s (twist stations)")
        if tw.size < 1:
            raise ModelError(f"{what} twist: the twist table is empty")

    xi_points = 2.0 * (ps - ps[0]) / (ps[-1] - ps[0]) - 1.0  # Kynema's MapGeometricLocations
    node_xi = gll_points(order)
    if n_elements == 1:
        positions, tangents = _single_element_geometry(xi_points, pts, order)
        node_s = (node_xi + 1.0) / 2.0
        element_nodes = [list(range(order + 1))]
        bounds = [(0.0, 1.0)]
    else:
        n_geometry = min(pts.shape[0], MAX_GEOMETRY_POINTS)
        basis = gll_points(n_geometry - 1)
        coefficients = _fit(xi_points, pts, basis)
        local = (node_xi + 1.0) / 2.0
        node_s_list: list[float] = []
        element_nodes = []
        bounds = []
        for e in range(n_elements):
            a, b = e / n_elements, (e + 1) / n_elements
            bounds.append((a, b))
            ids = []
            for j, sl in enumerate(local):
                if e > 0 and j == 0:
                    ids.append(len(node_s_list) - 1)
                    continue
                node_s_list.append(1.0 if (e == n_elements - 1 and j == order) else a + (b - a) * float(sl))
                ids.append(len(node_s_list) - 1)
            element_nodes.append(ids)
        node_s = np.array(node_s_list)
        positions = np.array([_evaluate(basis, coefficients, 2.0 * s - 1.0) for s in node_s])
        tangents = np.array([_evaluate(basis, coefficients, 2.0 * s - 1.0, derivative=True) for s in node_s])
        norms = np.linalg.norm(tangents, axis=1)
        if np.any(norms <= 0.0):
            raise ModelError(f"{what} points: the fitted reference axis has a zero tangent at a node")
        tangents /= norms[:, None]
    if not np.all(np.isfinite(tangents)):
        raise ModelError(f"{what} points: the fitted reference axis has a zero tangent at a node (points coincide?)")
    orientations = np.array([tangent_to_quaternion(t) for t in tangents])

    elements = []
    for ids, (a, b) in zip(element_nodes, bounds, strict=True):
        inside = (sec_s > a + 1e-12) & (sec_s < b - 1e-12)
        if n_elements == 1:
            loc, mm, cc = sec_s, m, c
        else:
            loc = np.concatenate(([a], sec_s[inside], [b]))
            mm = np.array([_interp_matrix(a, sec_s, m), *m[inside], _interp_matrix(b, sec_s, m)])
            cc = np.array([_interp_matrix(a, sec_s, c), *c[inside], _interp_matrix(b, sec_s, c)])
            loc = (loc - a) / (b - a)
            loc[0], loc[-1] = 0.0, 1.0

        def twist_at(s_local: float, a: float = a, b: float = b) -> float:
            return linear_interp(s_local if n_elements == 1 else a + (b - a) * s_local, tw_s, tw)

        s_el, m_el, c_el, quad = _element_sections(
            loc, mm, cc, twist_at, quadrature, quadrature_style, int(section_refinement)
        )
        elements.append(ElementLayout(ids, (node_xi + 1.0) / 2.0, quad, s_el, m_el, c_el))
    return BeamLayout(node_s=node_s, positions=positions, orientations=orientations, elements=elements)


# ---------------------------------------------------------------------------------- transforms
class NodeRecord(Protocol):
    """A node as the builder keeps it (reference ``position`` (3,) [m] and ``orientation`` (4,),
    initial ``displacement`` (7,), ``velocity`` (6,), ``acceleration`` (6,) or None): what the
    transforms below move."""

    position: np.ndarray
    orientation: np.ndarray
    displacement: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray | None


def translate(nodes: Sequence[NodeRecord], displacement: np.ndarray) -> None:
    """Kynema's ``Node::Translate``: X ← X + d for each node (``displacement`` (3,) [m])."""
    for nd in nodes:
        nd.position = nd.position + displacement


def rotate_about_point(nodes: Sequence[NodeRecord], q: np.ndarray, point: np.ndarray) -> None:
    """Kynema's ``Node::RotateAboutPoint``: X ← p + q (X − p), r0 ← q ⊗ r0 (displacements kept);
    ``q`` (4,) unit quaternion (w, x, y, z), ``point`` (3,) [m]."""
    for nd in nodes:
        nd.position = rotate_vector(q, nd.position - point) + point
        nd.orientation = quaternion_product(q, nd.orientation)


def set_velocity_about_point(nodes: Sequence[NodeRecord], velocity: np.ndarray, point: np.ndarray) -> None:
    """Kynema's ``Node::SetVelocityAboutPoint``: u̇ = v + ω × (X + u − p), ω as given;
    ``velocity`` (6,) (v [m/s], ω [rad/s]), ``point`` (3,) [m]."""
    omega = velocity[3:]
    for nd in nodes:
        r = nd.position + nd.displacement[:3] - point
        v = np.empty(6)
        v[:3] = velocity[:3] + np.cross(omega, r)
        v[3:] = omega
        nd.velocity = v


def set_acceleration_about_point(
    nodes: Sequence[NodeRecord], acceleration: np.ndarray, omega: np.ndarray, point: np.ndarray
) -> None:
    """Kynema's ``Node::SetAccelerationAboutPoint``: ü = a + α × r + ω × (ω × r), r = X + u − p;
    ``acceleration`` (6,) (a [m/s²], α [rad/s²]), ``omega`` (3,) [rad/s], ``point`` (3,) [m]."""
    alpha = acceleration[3:]
    for nd in nodes:
        r = nd.position + nd.displacement[:3] - point
        out = np.empty(6)
        out[:3] = acceleration[:3] + (np.cross(alpha, r) + np.cross(omega, np.cross(omega, r)))
        out[3:] = alpha
        nd.acceleration = out


__all__ = [
    "Beam",
    "BeamLayout",
    "ElementLayout",
    "NodeRecord",
    "beam_layout",
    "matrix_to_quaternion",
    "quaternion_product",
    "quaternion_to_matrix",
    "rotate_about_point",
    "rotate_section",
    "rotate_vector",
    "set_acceleration_about_point",
    "set_velocity_about_point",
    "tangent_to_quaternion",
    "translate",
    "twist_quaternion",
]
