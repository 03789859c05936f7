"""Beam case: a straight isotropic cantilever rolled into a full circle by a tip moment
(Simo & Vu-Quoc 1986; Kynema's ``static_isotropic_beam_rollup``), against the closed-form arc.

L = 10 m, C* = diag(1770e3, 1770e3, 1770e3, 8.16e3, 86.9e3, 215e3) (Kynema's section),
tip moment M_y = −2π EI₂/L, one static step per element order (Kynema's settings: atol 1e-11,
rtol 1e-9, 15 Newton iterations, load bisection when a solve does not converge).
"""

from __future__ import annotations

import math
import time

import numpy as np

from kynemapy.analytic.beams import tip_moment_rollup
from kynemapy.math.rotations import rotation_matrices
from kynemapy.validation.common import CaseResult, Table, check

LENGTH = 10.0
C_STAR = np.diag([1770.0e3, 1770.0e3, 1770.0e3, 8.16e3, 86.9e3, 215.0e3])
M_STAR = np.eye(6)  # placeholder (statics), as in Kynema's test
EI = 86.9e3
MOMENT = -2.0 * math.pi * EI / LENGTH
ORDERS_FULL = (4, 6, 8, 10, 12, 14)
ORDERS_QUICK = (6, 10, 14)
#: Kynema's asserted tip displacement u_x at 15 nodes, 15 Gauss points (its tolerance 1e-12)
KYNEMA_UX = -10.0000000000645
KYNEMA_TOL = 1e-12
FINAL_BOUND = 1e-9  # tip position [m] and rotation [rad] error at order 14
ARC_BOUND = 1e-8  # largest node position error along the arc [m] at order 14
RATIO_BOUND = 10.0  # error reduction per two orders, at least (spectral convergence)

DESCRIPTION = """\
A straight isotropic cantilever (L = 10 m along x, Kynema's section C* = diag(1770e3, 1770e3,
1770e3, 8.16e3, 86.9e3, 215e3)) under a tip moment M_y = −2π EI₂/L.  The curvature M/EI is
constant, so the exact solution is a circular arc of radius EI/|M| = L/2π: the tip returns to
the root, u_tip = (−L, 0, 0), with the tip section turned a full 2π (R = I); a half moment
gives the half circle u_tip = (−L, 0, 2L/π), R = R_y(π) (``kynemapy.analytic.beams``).  One
static step (kynemapy's load bisection when a Newton solve fails, as Kynema), Kynema's
tolerances, one element of order p with p + 1 GLL nodes and p + 1 Gauss points.  The element
cannot represent sin/cos of the arc exactly, so the error measures the interpolation: it
falls exponentially (spectrally) with p.  Kynema's own test (15 nodes) asserts
u_x = −10.0000000000645 to 1e-12.
"""


def _solve(order: int, moment: float) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:
    """(tip q (7,), all node q (n, 7), Newton iterations, node arc lengths s (n,), node X0 (n, 3))."""
    import kynemapy as kp
    from kynemapy.validation.beam_model import straight_beam

    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(b, LENGTH, M_STAR, C_STAR, n_elements=1, order=order, acceleration=True)
    b.add_fixed_bc(beam.root)
    params = kp.StepParameters(h=1.0, dynamic=False, max_iter=15, atol=1e-11, rtol=1e-9, rho_inf=1.0)
    sim = kp.Simulation(b.build(), params)
    sim.inputs.f[beam.tip] = (0.0, 0.0, 0.0, 0.0, moment, 0.0)
    info = sim.step()
    x0 = np.column_stack([beam.s, np.zeros_like(beam.s), np.zeros_like(beam.s)])
    return sim.state.q[beam.tip].copy(), sim.state.q[list(beam.nodes)].copy(), int(info.iterations), beam.s, x0


def quat_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix (3, 3) of the quaternion q (w, x, y, z), normalised here."""
    return rotation_matrices(q / np.linalg.norm(q))


def rotation_error(R: np.ndarray, R_ref: np.ndarray) -> float:
    """Angle [rad] of R_refᵀ R (stable near 0: from the skew part and the trace)."""
    D = R_ref.T @ R
    s = 0.5 * np.array([D[2, 1] - D[1, 2], D[0, 2] - D[2, 0], D[1, 0] - D[0, 1]])
    c = 0.5 * (np.trace(D) - 1.0)
    return float(math.atan2(np.linalg.norm(s), c))


def errors(order: int, moment: float = MOMENT) -> dict[str, float]:
    """Tip position error [m], rotation error [rad], largest node position error along the arc
    [m], tip u_x [m] and Newton iterations of one element of ``order``."""
    q_tip, q_all, iters, s, _x0 = _solve(order, moment)
    u_ref, R_ref = tip_moment_rollup(LENGTH, EI, moment)
    pos = float(np.linalg.norm(q_tip[:3] - u_ref))
    rot = rotation_error(quat_matrix(q_tip[3:]), R_ref)
    arc = 0.0
    for k, sk in enumerate(s):
        u_k, _ = tip_moment_rollup(float(sk), EI, moment) if sk > 0 else (np.zeros(3), None)
        # u_k is relative to (s_k, 0, 0), the node's reference position
        arc = max(arc, float(np.linalg.norm(q_all[k, :3] - u_k)))
    return {"pos": pos, "rot": rot, "arc": arc, "ux": float(q_tip[0]), "iterations": iters}


def run(quick: bool = False) -> CaseResult:
    """Rollup at increasing element order, half circle at the highest order."""
    start = time.perf_counter()
    result = CaseResult(
        name="beam_rollup",
        title="Beam rollup: tip moment 2πEI/L closes a circle",
        seed="Simo & Vu-Quoc 1986 / Kynema",
        description=DESCRIPTION,
        quick=quick,
    )
    orders = ORDERS_QUICK if quick else ORDERS_FULL
    rows, pos_errors = [], []
    for p in orders:
        e = errors(p)
        err = max(e["pos"], e["rot"])
        pos_errors.append(err)
        ratio = "—" if len(pos_errors) == 1 else f"{pos_errors[-2] / err:.3g}"
        rows.append([p, p + 1, e["iterations"], f"{e['ux']:.13f}", e["pos"], e["rot"], e["arc"], ratio])
        last = e
    slope = float(np.polyfit(np.array(orders, float), np.log10(np.array(pos_errors)), 1)[0])
    result.tables.append(
        Table(
            "Full circle (M_y = −2πEI/L): tip error against the closed form, one element of order p",
            [
                "p",
                "nodes",
                "Newton solves",
                "tip u_x [m]",
                "|u − u_ref| [m]",
                "rotation error [rad]",
                "max node error on the arc [m]",
                "ratio to previous",
            ],
            rows,
            note=f"log10(error) against p: slope {slope:.2f} per order (exponential convergence).",
        )
    )
    half = errors(orders[-1], MOMENT / 2.0)
    result.tables.append(
        Table(
            f"Half circle (M_y = −πEI/L), order {orders[-1]}",
            ["|u − u_ref| [m]", "rotation error [rad]", "max node error on the arc [m]"],
            [[half["pos"], half["rot"], half["arc"]]],
        )
    )
    ratios = np.array(pos_errors[:-1]) / np.array(pos_errors[1:])
    step = orders[1] - orders[0]
    result.checks += [
        check(f"order {orders[-1]}: tip position error [m]", last["pos"], FINAL_BOUND),
        check(f"order {orders[-1]}: tip rotation error [rad]", last["rot"], FINAL_BOUND),
        check(f"order {orders[-1]}: largest node error along the arc [m]", last["arc"], ARC_BOUND),
        check(
            f"spectral convergence: error reduction per +{step} orders (min, p ≥ 6)",
            float(ratios[[i for i, p in enumerate(orders[:-1]) if p >= 6]].min()),
            RATIO_BOUND ** (step / 2),
            ">=",
        ),
        check(f"half circle, order {orders[-1]}: tip position error [m]", half["pos"], FINAL_BOUND),
        check(f"half circle, order {orders[-1]}: tip rotation error [rad]", half["rot"], FINAL_BOUND),
    ]
    if orders[-1] == 14:
        result.checks.append(
            check(
                "Kynema's assertion: |u_x − (−10.0000000000645)| at 15 nodes", abs(last["ux"] - KYNEMA_UX), KYNEMA_TOL
            )
        )
    result.figures["convergence"] = (np.array(orders), np.array(pos_errors))
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """Error against element order (semi-log)."""
    import matplotlib.pyplot as plt

    orders, errs = result.figures["convergence"]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.semilogy(orders, errs, "o-")
    ax.set(xlabel="element order p", ylabel="tip error (position [m], rotation [rad])", title="Beam rollup")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    name = "beam_rollup_convergence.png"
    fig.savefig(f"{directory}/{name}", dpi=90)
    plt.close(fig)
    return [(name, "Tip error of the full-circle rollup against element order: exponential convergence.")]
