"""A cantilever rolled up into a circle by a tip moment, in load steps, against the closed form.

A straight isotropic beam (L = 10 m along x, C* = diag(1770e3, 1770e3, 1770e3, 8.16e3, 86.9e3,
215e3), Kynema's ``static_isotropic_beam_rollup`` section) is clamped at the root; a tip moment
about −y grows in equal static load steps to M = 2π EI₂/L.  Under a moment M the beam is a
circular arc of radius EI/M (``kynemapy.analytic.beams.tip_moment_rollup``): after each load
step the tip position and rotation and every node's position are compared with the arc of that
load; the last step closes the circle (tip back at the root, section turned 2π).

One element of order 14 (15 GLL nodes, 15 Gauss points); ``--quick``: order 12 and 4 load steps.
The error is the element's interpolation error of sin/cos along the arc (spectral in the order:
``kynemapy validate --case beam_rollup``), largest at the full circle.

Run:  python examples/cantilever_rollup.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _references as ref

import kynemapy as kp
from kynemapy.analytic.beams import tip_moment_rollup
from kynemapy.validation.beam_model import straight_beam

LENGTH = 10.0
EI = 86.9e3
C_STAR = np.diag([1770.0e3, 1770.0e3, 1770.0e3, 8.16e3, EI, 215.0e3])
M_STAR = np.eye(6)  # statics: the mass does not enter
FULL_MOMENT = 2.0 * math.pi * EI / LENGTH
#: (element order, load steps); bounds on the largest node position error [m] and tip rotation error [rad]
SETTINGS = {False: (14, 8), True: (12, 4)}
BOUNDS = {False: (1e-8, 1e-9), True: (1e-6, 1e-8)}


def run(quick: bool = False) -> list[tuple[float, float, float, float, int]]:
    """Per load step: (moment fraction, tip u_x [m], largest node error [m], tip rotation error
    [rad], Newton solves)."""
    order, n_steps = SETTINGS[quick]
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(b, LENGTH, M_STAR, C_STAR, n_elements=1, order=order, acceleration=True)
    b.add_fixed_bc(beam.root)
    params = kp.StepParameters(h=1.0, dynamic=False, max_iter=15, atol=1e-11, rtol=1e-9, rho_inf=1.0)
    sim = kp.Simulation(b.build(), params)
    out = []
    for k in range(1, n_steps + 1):
        moment = -FULL_MOMENT * k / n_steps  # about −y: the tip rolls up towards +z
        sim.set_load(beam.tip, moment=(0.0, moment, 0.0))
        info = sim.step()
        node_error = 0.0
        for node, s in zip(beam.nodes, beam.s, strict=True):
            u_ref, _ = tip_moment_rollup(float(s), EI, moment) if s > 0.0 else (np.zeros(3), None)
            node_error = max(node_error, float(np.linalg.norm(sim.state.q[node, :3] - u_ref)))
        _, R_ref = tip_moment_rollup(LENGTH, EI, moment)
        R = ref.quat_matrix(sim.state.q[beam.tip, 3:7])
        out.append((k / n_steps, float(sim.state.q[beam.tip, 0]), node_error, float(ref.rotation_angle(R, R_ref)),
                    int(info.iterations)))  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="order 12, 4 load steps")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    order, n_steps = SETTINGS[args.quick]
    rows = run(args.quick)
    print(f"cantilever rollup: one element of order {order}, {n_steps} static load steps to M = 2πEI/L")
    print(
        f"  {'M / (2πEI/L)':>12s}  {'tip u_x [m]':>18s}  {'node error [m]':>14s}  "
        f"{'rotation [rad]':>14s}  {'Newton':>6s}"
    )
    for frac, ux, err, rot, it in rows:
        print(f"  {frac:12.3f}  {ux:18.12f}  {err:14.3e}  {rot:14.3e}  {it:6d}")
    pos_bound, rot_bound = BOUNDS[args.quick]
    failed = ref.report(
        "closed form: circular arc of radius EI/M at every load step",
        [
            ("largest node position error, every load step [m]", max(r[2] for r in rows), pos_bound),
            ("largest tip rotation error, every load step [rad]", max(r[3] for r in rows), rot_bound),
            ("full circle: |u_x,tip + L| [m]", abs(rows[-1][1] + LENGTH), pos_bound),
        ],
    )
    print(f"  wall time {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
