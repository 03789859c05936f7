"""Closed-form references (numpy/scipy only; nothing here is compiled or used by a kernel).

* :class:`LagrangeTop`: the heavy symmetric top about a fixed point (Lagrange's top): turning
  angles (roots of the cubic in cos θ), nutation θ(t) by Jacobi elliptic functions, azimuth
  φ(t), nutation and mean precession periods.
* :func:`symmetric_free_body`: the torque-free symmetric body (rotation and angular velocity).

The torque-free asymmetric body (Jacobi / Celledoni et al.) is ``kynemapy.integrators.free_body_flow``.
"""

from kynemapy.analytic.lagrange_top import LagrangeTop
from kynemapy.analytic.symmetric_free_body import symmetric_free_body

__all__ = ["LagrangeTop", "symmetric_free_body"]
