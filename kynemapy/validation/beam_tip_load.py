"""Beam case: small tip load on a cantilever, tip deflection against Timoshenko beam theory.

L = 1 m (stocky, so that shear flexibility is 13 % and 30 % of the deflections and is tested),
C* = diag(1770e3, 1770e3, 1770e3, 8.16e3, 86.9e3, 215e3), tip load P = 20 N along z and
along y, one static step to tight tolerances, one element of order p = 1…6.
"""

from __future__ import annotations

import time

import numpy as np

from kynemapy.analytic.beams import timoshenko_tip_deflection, timoshenko_tip_rotation
from kynemapy.validation.common import CaseResult, Table, check

LENGTH = 1.0
C_STAR = np.diag([1770.0e3, 1770.0e3, 1770.0e3, 8.16e3, 86.9e3, 215.0e3])
M_STAR = np.eye(6)  # statics: not used
LOAD = 20.0  # [N]: δ/L ≈ 1e-4, the geometric nonlinearity (≈ θ²) is ≈ 1e-8 relative
ORDERS_FULL = (1, 2, 3, 4, 6)
ORDERS_QUICK = (2, 3, 6)
BOUND = 1e-6  # relative deflection error for p >= 3 (cubic deflection: exact in the element)
SCALE_FACTORS = (1.0, 10.0, 100.0)

DESCRIPTION = """\
A cantilever (L = 1 m along x, C* = diag(EA, GA₂, GA₃, GJ, EI₂, EI₃) = diag(1770e3, 1770e3,
1770e3, 8.16e3, 86.9e3, 215e3)) under a small tip load P = 20 N, along z (bending about y: EI₂,
GA₃) and along y (EI₃, GA₂), one static step (atol 1e-13, rtol 1e-10).  Reference: Timoshenko
beam theory, δ = PL³/(3EI) + PL/(κGA) with κGA the section's shear stiffness (the shear term is
13 % of δ_z and 30 % of δ_y here, so it is tested), and the tip rotation PL²/(2EI).  The linear
solution is a cubic deflection and quadratic rotation, which one element of order p ≥ 3
represents exactly; the geometric nonlinearity of the exact beam enters at relative order
θ² ≈ 1e-8 (δ/L ≈ 1e-4), checked by scaling the load: the deviation grows as P².  Order 1 and 2
elements show shear locking / interpolation error.
"""


def solve(order: int, load: float, axis: int) -> tuple[float, float, int]:
    """(tip deflection along ``axis`` (1: y, 2: z) [m], tip rotation about the bending axis [rad],
    Newton iterations) of one element of ``order`` under tip load ``load`` [N]."""
    import kynemapy as kp
    from kynemapy.validation.beam_model import straight_beam

    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(b, LENGTH, M_STAR, C_STAR, n_elements=1, order=order, acceleration=True)
    b.add_fixed_bc(beam.root)
    params = kp.StepParameters(h=1.0, dynamic=False, max_iter=20, atol=1e-13, rtol=1e-10, rho_inf=1.0)
    sim = kp.Simulation(b.build(), params)
    f = np.zeros(6)
    f[axis] = load
    sim.inputs.f[beam.tip] = f
    info = sim.step()
    q = sim.state.q[beam.tip]
    # rotation vector component about the bending axis (small): 2 (x, y, z) of the quaternion
    bend_axis = 2 if axis == 1 else 1
    return float(q[axis]), float(2.0 * q[4 + bend_axis] / q[3]), int(info.iterations)


def reference(load: float, axis: int) -> tuple[float, float]:
    """Timoshenko (δ [m], tip rotation [rad], signed as the engine's about the bending axis)."""
    ei, kga = (C_STAR[5, 5], C_STAR[1, 1]) if axis == 1 else (C_STAR[4, 4], C_STAR[2, 2])
    delta = timoshenko_tip_deflection(LENGTH, ei, kga, load)
    theta = timoshenko_tip_rotation(LENGTH, ei, load)
    # a load along +z turns the tip about −y; along +y, about +z
    return delta, (-theta if axis == 2 else theta)


def run(quick: bool = False) -> CaseResult:
    """Deflection and rotation errors against element order, both bending planes; load scaling."""
    start = time.perf_counter()
    result = CaseResult(
        name="beam_tip_load",
        title="Beam tip load: deflection against Timoshenko theory",
        seed="Timoshenko beam theory",
        description=DESCRIPTION,
        quick=quick,
    )
    orders = ORDERS_QUICK if quick else ORDERS_FULL
    rows = []
    worst = {1: 0.0, 2: 0.0}
    worst_rot = 0.0
    for axis in (2, 1):
        delta_ref, theta_ref = reference(LOAD, axis)
        for p in orders:
            delta, theta, iters = solve(p, LOAD, axis)
            err = abs(delta - delta_ref) / abs(delta_ref)
            err_rot = abs(theta - theta_ref) / abs(theta_ref)
            rows.append(["z" if axis == 2 else "y", p, iters, f"{delta:.12e}", f"{delta_ref:.12e}", err, err_rot])
            if p >= 3:
                worst[axis] = max(worst[axis], err)
                worst_rot = max(worst_rot, err_rot)
    result.tables.append(
        Table(
            f"Tip deflection under P = {LOAD:g} N, one element of order p (p + 1 Gauss points)",
            ["load along", "p", "Newton it", "δ [m]", "Timoshenko δ [m]", "relative error", "rotation rel. error"],
            rows,
        )
    )
    scale_rows, deviations = [], []
    for factor in SCALE_FACTORS:
        delta, _, _ = solve(4, LOAD * factor, 2)
        delta_ref, _ = reference(LOAD * factor, 2)
        dev = abs(delta - delta_ref) / abs(delta_ref)
        deviations.append(dev)
        scale_rows.append([LOAD * factor, delta_ref / LENGTH, dev])
    growth = float(np.polyfit(np.log(SCALE_FACTORS), np.log(deviations), 1)[0])
    result.tables.append(
        Table(
            "Geometric nonlinearity: deviation from linear theory against the load (order 4, along z)",
            ["P [N]", "δ/L", "relative deviation"],
            scale_rows,
            note=f"log-log slope of the deviation against P: {growth:.3f} (the exact beam departs as P²).",
        )
    )
    result.checks += [
        check("load along z (EI₂, GA₃), p ≥ 3: relative deflection error", worst[2], BOUND),
        check("load along y (EI₃, GA₂), p ≥ 3: relative deflection error", worst[1], BOUND),
        check("p ≥ 3: relative tip-rotation error", worst_rot, BOUND),
        check("deviation from linear theory grows as P² (log-log slope)", growth, (1.9, 2.1), "in"),
    ]
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """No figure (the tables say it all)."""
    return []
