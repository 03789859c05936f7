"""World frames and body-fixed points of nodes, for what a script reads between steps
(:meth:`kynemapy.Simulation.body_frame`, :meth:`~kynemapy.Simulation.body_point`): one compiled
call each instead of a dozen small numpy operations.

A node's state: reference ``x0`` (7,) = (X [m], r0), displacement ``q`` (7,) = (u [m], r), so
that its world position is X + u and its orientation r ⊗ r0 (quaternions (w, x, y, z)).
"""

from __future__ import annotations

import math

from kynemapy._jit import njit
from kynemapy.math.quaternion import quat_product, quat_to_matrix, rot
from kynemapy.math.vectors import cross


@njit
def node_frame(x0, q, origin, rotation):
    """``origin`` (3,) := X + u [m] and ``rotation`` (3, 3) := R(r ⊗ r0), the composed quaternion
    normalised first (its columns are the body's axes in world coordinates)."""
    for k in range(3):
        origin[k] = x0[k] + q[k]
    w, x, y, z = quat_product(q[3], q[4], q[5], q[6], x0[3], x0[4], x0[5], x0[6])
    n = math.sqrt(w * w + x * x + y * y + z * z)
    quat_to_matrix((w / n, x / n, y / n, z / n), rotation)


@njit
def point_motion(x0, q, v, vd, points, reference, origin, rotation, position, velocity, acceleration):
    """World position [m], velocity [m/s] and acceleration [m/s²] of points fixed in a node's body.

    Parameters
    ----------
    x0, q : (7,) the node's reference and displacement.
    v, vd : (6,) its velocity (u̇ [m/s], ω [rad/s]) and acceleration (ü, ω̇).
    points : (k, 3) the points [m]: in the body's frame relative to the node, or (``reference``
        True) in world coordinates at the reference configuration.
    origin, rotation : (3,) and (3, 3) scratch (get the node's world frame, :func:`node_frame`).
    position, velocity, acceleration : (k, 3) outputs.  With ``ρ = R s`` the world lever from the
        node: ``X + u + ρ``, ``u̇ + ω × ρ``, ``ü + ω̇ × ρ + ω × (ω × ρ)``.
    """
    n0 = math.sqrt(x0[3] * x0[3] + x0[4] * x0[4] + x0[5] * x0[5] + x0[6] * x0[6])
    r0_inverse = (x0[3] / n0, -x0[4] / n0, -x0[5] / n0, -x0[6] / n0)
    node_frame(x0, q, origin, rotation)
    w = (v[3], v[4], v[5])
    wd = (vd[3], vd[4], vd[5])
    for i in range(points.shape[0]):
        s = (points[i, 0], points[i, 1], points[i, 2])
        if reference:  # a world offset at the reference configuration, into the body's frame
            s = rot(r0_inverse, (s[0] - x0[0], s[1] - x0[1], s[2] - x0[2]))
        rho = (
            rotation[0, 0] * s[0] + rotation[0, 1] * s[1] + rotation[0, 2] * s[2],
            rotation[1, 0] * s[0] + rotation[1, 1] * s[1] + rotation[1, 2] * s[2],
            rotation[2, 0] * s[0] + rotation[2, 1] * s[1] + rotation[2, 2] * s[2],
        )
        w_rho = cross(w, rho)
        wd_rho = cross(wd, rho)
        w_w_rho = cross(w, w_rho)
        for k in range(3):
            velocity[i, k] = v[k] + w_rho[k]
            acceleration[i, k] = vd[k] + wd_rho[k] + w_w_rho[k]
            position[i, k] = origin[k] + rho[k]
