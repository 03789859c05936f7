"""Rigid-body time integration schemes for one body about a fixed point or its centre of mass.

``integrate(scheme, inertia, R0, W0, h, t_end, force=..., force_point=..., gravity=..., x0=..., v0=...)``
runs Solfec's RIG_POS / RIG_NEG / RIG_IMP, Krysl's LIEMID, a symmetric free-rotation splitting,
the discrete Moser–Veselov integrator (all numba kernels, compiled on first use and cached) or
the exact free-body flow (Jacobi elliptic functions; :func:`kynemapy.analytic.free_body_flow`,
re-exported here as :func:`free_body_flow`), and returns a :class:`Trajectory`.  Nothing compiles
at import.
"""

from kynemapy.analytic.free_body import free_body_flow
from kynemapy.integrators.api import (
    MOMENTUM_CONSERVING,
    SCHEMES,
    IntegrationError,
    Trajectory,
    integrate,
)
from kynemapy.integrators.torques import point_force_torque

__all__ = [
    "MOMENTUM_CONSERVING",
    "SCHEMES",
    "IntegrationError",
    "Trajectory",
    "free_body_flow",
    "integrate",
    "point_force_torque",
]
