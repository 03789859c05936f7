"""Energy and momentum of the rigid bodies of a state, in compiled code (for streamed rows).

Same definitions as :func:`kynemapy.io.energy_and_momentum` (its vectorised numpy twin):
per mass element ``M = diag(R,R) M* diag(R,R)ᵀ`` with ``R = R(q_rot ⊗ r0)``,
``m = M[0,0]``, ``η = (M[5,1], −M[5,0], M[4,0])/m``; kinetic energy ``½ vᵀ M v`` [J],
potential energy ``−m g·(X + u + η)`` [J], linear momentum ``(M v)[0:3]`` [kg m/s],
angular momentum about the world origin ``(X + u) × (M v)[0:3] + (M v)[3:6]`` [kg m²/s].
"""

from __future__ import annotations

from kynemapy._jit import njit
from kynemapy.elements.masses import rotate_section_matrix
from kynemapy.math.quaternion import quat_compose


@njit
def system_invariants(mass_node, mass_m_star, x0, gravity, q, v, s4, s33, s66, out):
    """``out`` (8,) = (kinetic energy, potential energy, linear momentum (3), angular momentum (3)).

    ``q`` (N, 7), ``v`` (N, 6) one state; scratch ``s4`` (>= 1, 4), ``s33`` (>= 1, 3, 3),
    ``s66`` (>= 2, 6, 6).
    """
    for k in range(8):
        out[k] = 0.0
    xr = s4[0]
    mm = s66[0]
    tmp = s66[1]
    for e in range(mass_node.shape[0]):
        n = mass_node[e]
        quat_compose(q[n, 3:7], x0[n, 3:7], xr)
        rotate_section_matrix(xr, mass_m_star[e], s33[0], tmp, mm)
        m = mm[0, 0]
        eta0 = mm[5, 1] / m
        eta1 = -mm[5, 0] / m
        eta2 = mm[4, 0] / m
        px = x0[n, 0] + q[n, 0]
        py = x0[n, 1] + q[n, 1]
        pz = x0[n, 2] + q[n, 2]
        mv0 = 0.0
        mv1 = 0.0
        mv2 = 0.0
        mv3 = 0.0
        mv4 = 0.0
        mv5 = 0.0
        for j in range(6):
            vj = v[n, j]
            mv0 += mm[0, j] * vj
            mv1 += mm[1, j] * vj
            mv2 += mm[2, j] * vj
            mv3 += mm[3, j] * vj
            mv4 += mm[4, j] * vj
            mv5 += mm[5, j] * vj
        out[0] += 0.5 * (v[n, 0] * mv0 + v[n, 1] * mv1 + v[n, 2] * mv2 + v[n, 3] * mv3 + v[n, 4] * mv4 + v[n, 5] * mv5)
        out[1] -= m * ((px + eta0) * gravity[0] + (py + eta1) * gravity[1] + (pz + eta2) * gravity[2])
        out[2] += mv0
        out[3] += mv1
        out[4] += mv2
        out[5] += py * mv2 - pz * mv1 + mv3
        out[6] += pz * mv0 - px * mv2 + mv4
        out[7] += px * mv1 - py * mv0 + mv5
