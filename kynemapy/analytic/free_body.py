"""The torque-free asymmetric body: body angular momentum y(t) by Jacobi elliptic functions.

Euler's equations ẏ = y × J⁻¹y (Vilmart's form) with I₁ < I₂ < I₃.  From the integrals
2H = Σ yᵢ²/Iᵢ and G² = |y|²:  y₁² = A₁ − B₁y₂²,  y₃² = A₃ − B₃y₂², with
A₁ = (2H − G²/I₃)/d, B₁ = (1/I₂ − 1/I₃)/d, A₃ = (G²/I₁ − 2H)/d, B₃ = (1/I₁ − 1/I₂)/d,
d = 1/I₁ − 1/I₃, and ẏ₂ = d y₁y₃.  If A₁B₃ ≤ A₃B₁ the momentum circulates about axis 3:

    y₂ = √(A₁/B₁) sn(u, k),  y₁ = √A₁ cn(u, k),  y₃ = δ√A₃ dn(u, k),  k² = A₁B₃/(A₃B₁),
    u = u₀ + δ d √(A₃B₁) t,  δ = sign y₃;

otherwise about axis 1, with the roles of (1, A₁, B₁) and (3, A₃, B₃) exchanged
(y₃ = √A₃ cn, y₁ = δ√A₁ dn, δ = sign y₁, u̇ = δ d √(A₁B₃), and y₂ = √(A₃/B₃) sn).
(Derived here from the equations; Vilmart's Algorithm 1 is the same construction.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def free_body_momentum(inertia, y0, t) -> np.ndarray:
    """Body angular momentum y(t) (n, 3) [kg m²/s] of a torque-free body, I₁ < I₂ < I₃ strictly.

    inertia : (3,) principal moments [kg m²], strictly increasing; y0 : (3,) y(0); t : (n,) [s].
    Not for the separatrix (k = 1) nor for a steady rotation about axis 2.
    """
    I1, I2, I3 = (float(v) for v in inertia)
    if not I1 < I2 < I3:
        raise ValueError(f"free_body_momentum needs I1 < I2 < I3, got {inertia}")
    y0 = np.asarray(y0, dtype=float)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    two_h = float(np.sum(y0 * y0 / np.array([I1, I2, I3])))
    g2 = float(y0 @ y0)
    d = 1.0 / I1 - 1.0 / I3
    A1, B1 = (two_h - g2 / I3) / d, (1.0 / I2 - 1.0 / I3) / d
    A3, B3 = (g2 / I1 - two_h) / d, (1.0 / I1 - 1.0 / I2) / d
    A1, A3 = max(A1, 0.0), max(A3, 0.0)
    about_3 = A1 * B3 <= A3 * B1
    if about_3:  # (c, sn-amplitude axis 2, dn axis 3)
        a_cn, a_sn, a_dn = math.sqrt(A1), math.sqrt(A1 / B1), math.sqrt(A3)
        m = A1 * B3 / (A3 * B1)
        delta = 1.0 if y0[2] >= 0.0 else -1.0
        rate = delta * d * math.sqrt(A3 * B1)
        cn0, sn0 = y0[0] / a_cn if a_cn > 0 else 1.0, y0[1] / a_sn if a_sn > 0 else 0.0
    else:
        a_cn, a_sn, a_dn = math.sqrt(A3), math.sqrt(A3 / B3), math.sqrt(A1)
        m = A3 * B1 / (A1 * B3)
        delta = 1.0 if y0[0] >= 0.0 else -1.0
        rate = delta * d * math.sqrt(A1 * B3)
        cn0, sn0 = y0[2] / a_cn if a_cn > 0 else 1.0, y0[1] / a_sn if a_sn > 0 else 0.0
    amplitude0 = math.atan2(sn0, cn0)  # Jacobi amplitude at t = 0
    K = float(special.ellipk(m))
    # F(φ | m) for any φ: quasi-periodicity F(φ + kπ) = F(φ) + 2kK
    turns = math.floor(amplitude0 / math.pi + 0.5)
    u0 = float(special.ellipkinc(amplitude0 - turns * math.pi, m)) + 2.0 * turns * K
    sn, cn, dn, _ = special.ellipj(u0 + rate * t, m)
    y = np.empty((len(t), 3))
    y[:, 1] = a_sn * sn
    if about_3:
        y[:, 0], y[:, 2] = a_cn * cn, delta * a_dn * dn
    else:
        y[:, 2], y[:, 0] = a_cn * cn, delta * a_dn * dn
    return y
