"""Straight uniform beams for the beam validation cases and examples, built element by element on
:meth:`kynemapy.ModelBuilder.add_beam_element` (the one place that does it: swap it for the
builder's reference-axis beam when that exists).

Conventions: the beam starts at ``origin`` and runs along ``direction`` (unit vector, default
the world x axis); its material frame is the world frame rotated by the shortest rotation that
takes e_x to ``direction`` (first material axis along the beam).  Elements are Legendre
spectral elements of ``order`` with nodes at the Gauss–Lobatto–Legendre points; neighbours share
their end node.  Sections are uniform: (6, 6) M* [kg/m, kg, kg m] and C* [N, N m, N m²].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class StraightBeam:
    """What :func:`straight_beam` built.

    nodes : (n,) node ids from root to tip.
    s : (n,) arc length of each node from the root [m].
    elements : beam element ids, root to tip.
    element_nodes : per element, the indices into ``nodes`` of its nodes.
    """

    nodes: tuple[int, ...]
    s: np.ndarray
    elements: tuple[int, ...]
    element_nodes: tuple[tuple[int, ...], ...]

    @property
    def root(self) -> int:
        return self.nodes[0]

    @property
    def tip(self) -> int:
        return self.nodes[-1]


def isotropic_section(
    ea: float, ga: float, gj: float, ei2: float, ei3: float, m: float = 1.0, j: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Uniform isotropic section: C* = diag(EA, GA, GA, GJ, EI₂, EI₃) [N, N, N, N m², N m², N m²]
    and M* = diag(m, m, m, i₁, i₂, i₃) with m [kg/m] and the rotary inertia per unit length
    ``j`` (3,) [kg m] (default m/1000 each, a thin rod).  Returns (M*, C*), each (6, 6)."""
    rot = np.full(3, m * 1e-3) if j is None else np.asarray(j, dtype=float)
    m_star = np.diag([m, m, m, *rot])
    c_star = np.diag([ea, ga, ga, gj, ei2, ei3])
    return m_star, c_star


def _rotation_to(direction: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the shortest rotation taking e_x to ``direction``."""
    d = direction / np.linalg.norm(direction)
    ex = np.array([1.0, 0.0, 0.0])
    c = float(ex @ d)
    if c < -1.0 + 1e-15:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = np.cross(ex, d)
    q = np.array([1.0 + c, *axis])
    return q / np.linalg.norm(q)


def straight_beam(
    builder,
    length: float,
    m_star: ArrayLike,
    c_star: ArrayLike,
    n_elements: int = 1,
    order: int = 4,
    quadrature_points: int | None = None,
    origin: ArrayLike = (0.0, 0.0, 0.0),
    direction: ArrayLike = (1.0, 0.0, 0.0),
    velocity: Callable[[np.ndarray], ArrayLike] | None = None,
    acceleration: bool = False,
    mu: Sequence[float] | None = None,
) -> StraightBeam:
    """Add a straight uniform beam of ``n_elements`` elements of ``order`` to ``builder``.

    Parameters
    ----------
    builder : :class:`kynemapy.ModelBuilder`.
    length : beam length L [m].
    m_star, c_star : (6, 6) sectional mass [kg/m, kg, kg m] and stiffness [N, N m, N m²]
        matrices, material frame.
    n_elements, order : number of elements and their polynomial order (order + 1 GLL nodes each).
    quadrature_points : Gauss–Legendre points per element (default ``order + 1``).
    origin : (3,) root position [m]; direction : (3,) beam axis.
    velocity : ``velocity(x)`` (6,) initial (u̇ [m/s], ω [rad/s]) of the node at x (3,) [m].
    acceleration : give every node a zero initial acceleration (Kynema's rule) instead of
        letting the simulation compute consistent ones.
    mu : (6,) structural damping [s], default none.
    """
    from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points

    x0 = np.asarray(origin, dtype=float)
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    q0 = _rotation_to(d)
    xi = gll_points(order)
    local = 0.5 * (xi + 1.0)  # span fractions of one element's nodes
    s_nodes = [0.0]
    for e in range(n_elements):
        s_nodes += [(e + f) * length / n_elements for f in local[1:]]
    s_arr = np.array(s_nodes)
    nodes = []
    for s in s_arr:
        x = x0 + s * d
        v = np.zeros(6) if velocity is None else np.asarray(velocity(x), dtype=float)
        nodes.append(
            builder.add_node(position=x, orientation=q0, velocity=v, acceleration=np.zeros(6) if acceleration else None)
        )
    quad = gauss_quadrature(order + 1 if quadrature_points is None else quadrature_points)
    m6 = np.asarray(m_star, dtype=float)
    c6 = np.asarray(c_star, dtype=float)
    elements, element_nodes = [], []
    for e in range(n_elements):
        idx = tuple(range(e * order, e * order + order + 1))
        ids = [nodes[i] for i in idx]
        elements.append(builder.add_beam_element(ids, local, quad, [0.0, 1.0], [m6, m6], [c6, c6], mu=mu))
        element_nodes.append(idx)
    return StraightBeam(tuple(nodes), s_arr, tuple(elements), tuple(element_nodes))
