"""Closed-form references (numpy/scipy only; nothing here is compiled or used by a kernel).

* :class:`LagrangeTop`: the heavy symmetric top about a fixed point (Lagrange's top): turning
  angles (roots of the cubic in cos θ), nutation θ(t) by Jacobi elliptic functions, azimuth
  φ(t), nutation and mean precession periods.
* :func:`symmetric_free_body`: the torque-free symmetric body (rotation and angular velocity).
* :func:`free_body_flow`: the torque-free body of any inertia, rotation and angular velocity
  (Jacobi elliptic functions for the momentum, the construction of Celledoni et al. for the
  rotation); ``kynemapy.integrators``' scheme ``"exact"``.
* :func:`free_body_momentum`: its body angular momentum y(t) alone.
"""

from kynemapy.analytic.free_body import free_body_flow, free_body_momentum
from kynemapy.analytic.lagrange_top import LagrangeTop
from kynemapy.analytic.symmetric_free_body import symmetric_free_body

__all__ = ["LagrangeTop", "free_body_flow", "free_body_momentum", "symmetric_free_body"]
