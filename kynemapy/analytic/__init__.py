"""Closed-form references (numpy/scipy only; nothing here is compiled or used by a kernel).

* :class:`LagrangeTop`: the heavy symmetric top about a fixed point (Lagrange's top): turning
  angles (roots of the cubic in cos θ), nutation θ(t) by Jacobi elliptic functions, azimuth
  φ(t), nutation and mean precession periods.
* :func:`symmetric_free_body`: the torque-free symmetric body (rotation and angular velocity).
* :func:`free_body_momentum`: the torque-free asymmetric body's angular momentum y(t) (Jacobi), an
  implementation independent of ``kynemapy.integrators.free_body_flow`` (which also gives the
  rotation, after Celledoni et al.).
"""

from kynemapy.analytic.free_body import free_body_momentum
from kynemapy.analytic.lagrange_top import LagrangeTop
from kynemapy.analytic.symmetric_free_body import symmetric_free_body

__all__ = ["LagrangeTop", "free_body_momentum", "symmetric_free_body"]
