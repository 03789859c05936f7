"""Benchmark: where a heavy-top step goes, phase by phase.

Each phase kernel of the step (``kynemapy.engine``) is compiled on its own, so it can be
timed on its own: a compiled loop calls one phase ``--calls`` times on the heavy top's data
(``examples/heavy_top.py``, h = 2 ms, ρ∞ = 0.9, Kynema-compatible tangent, after 50 steps so
that the state is a moving one).  Printed: ns per call of each phase (median of ``--runs``
interleaved rounds, after a warm-up; compilation reported apart), their sum per Newton
iteration, and ``Simulation.advance`` µs per step with its Newton iterations per step, for
comparison (the rest of a step: prediction, state save, acceleration update, joint outputs).

The solve is timed on a copy of the assembled matrix and right-hand side, restored before
every call (the copy is timed apart and subtracted).

Run:  python bench/phases.py [--calls N] [--runs R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp
from kynemapy._jit import njit
from kynemapy.engine.api import stored
from kynemapy.engine.assemble import assembly_phase, begin_system
from kynemapy.engine.constraints.phase import constraint_phase
from kynemapy.engine.elements import element_phase
from kynemapy.engine.params import (
    CONVERGENCE_AUTO,
    CONVERGENCE_ROUNDOFF,
    P_ASSEMBLE_K,
    P_CONDITIONER,
    P_CONVERGENCE,
    P_EXACT,
    P_GAMMA_PRIME,
    P_H,
    P_RHS_BIAS,
)
from kynemapy.engine.step import convergence_error, solve, update, update_tangent


@njit
def time_tangent(d, p, n):
    for _ in range(n):
        update_tangent(p[P_H], d.q_delta, d.tangent, d.s3[0])


@njit
def time_elements(d, p, n, data_at, data_ref):
    c = p[P_CONDITIONER]
    for _ in range(n):
        begin_system(d.node_dofs, d.node_map, d.f, d.vals, d.b)
        element_phase(data_at, data_ref, p, c)


@njit
def time_constraints(d, p, n, data_at, data_ref):
    exact = p[P_EXACT] != 0.0
    with_bias = p[P_RHS_BIAS] != 0.0
    for _ in range(n):
        constraint_phase(data_at, data_ref, exact, with_bias, p[P_GAMMA_PRIME])


@njit
def time_assembly(d, p, n, data_at, data_ref):
    with_k = p[P_ASSEMBLE_K] != 0.0
    for _ in range(n):
        assembly_phase(data_at, data_ref, p[P_CONDITIONER], with_k, True)


@njit
def restore(d, vals, b):
    for k in range(vals.shape[0]):
        d.vals[k] = vals[k]
    for k in range(b.shape[0]):
        d.b[k] = b[k]


@njit
def time_restore(d, p, n, vals, b):
    for _ in range(n):
        restore(d, vals, b)


@njit
def time_solve(d, p, n, vals, b):
    for _ in range(n):
        restore(d, vals, b)
        solve(d.units, d.solver, d.indptr, d.indices, d.vals, d.b, d.dx, d.n_system_dofs, p[P_CONDITIONER])


@njit
def time_convergence(d, p, n):
    s = 0.0
    for _ in range(n):
        s += convergence_error(
            p[P_CONVERGENCE] == CONVERGENCE_ROUNDOFF, p[P_CONVERGENCE] == CONVERGENCE_AUTO, p, d.node_map,
            d.node_dofs, d.constraint_row, d.constraint_n_rows, d.q_delta, d.lam, d.dx, d.n_system_dofs, d.x,
            d.indptr, d.indices, d.vals, d.force_scratch, -1.0,
        )[0]  # fmt: skip
    return s


@njit
def time_update(d, p, n):
    # a zero increment: the state stays where it is, the arithmetic is the same
    for k in range(d.dx.shape[0]):
        d.dx[k] = 0.0
    for _ in range(n):
        update(
            p, d.node_map, d.node_dofs, d.constraint_row, d.constraint_n_rows, d.q_delta, d.v, d.vd,
            d.q_prev, d.q, d.lam, d.dx, d.n_system_dofs,
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200_000, help="calls per phase and round")
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds (median)")
    args = parser.parse_args()
    model, _ = build_heavy_top()
    params = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, geometric_stiffness=False)
    sim = kp.Simulation(model, params)
    sim.advance(50)
    d, p = sim.data, sim.coefficients
    stored_data = stored(d)  # the phases read the Data stored natively, by its address
    at = (stored_data.data_at, stored_data.data_type)
    t0 = time.perf_counter()
    time_elements(d, p, 1, *at)
    time_constraints(d, p, 1, *at)
    time_assembly(d, p, 1, *at)
    vals, b = d.vals.copy(), d.b.copy()
    phases = {
        "tangent operators": (time_tangent, ()),
        "elements (+ blocks)": (time_elements, at),
        "constraint terms": (time_constraints, at),
        "constraint assembly": (time_assembly, at),
        "solve (+ restore)": (time_solve, (vals, b)),
        "restore (subtracted)": (time_restore, (vals, b)),
        "convergence error": (time_convergence, ()),
        "update": (time_update, ()),
    }
    for f, extra in phases.values():
        f(d, p, 1, *extra)
    compile_s = time.perf_counter() - t0
    times: dict[str, list[float]] = {name: [] for name in phases}
    steps = max(args.calls // 10, 1000)
    advance: list[float] = []
    for _ in range(args.runs):
        for name, (f, extra) in phases.items():
            t = time.perf_counter()
            f(d, p, args.calls, *extra)
            times[name].append((time.perf_counter() - t) / args.calls * 1e9)
        run = kp.Simulation(model, params)
        t = time.perf_counter()
        run.advance(steps)
        advance.append((time.perf_counter() - t) / steps * 1e6)
    print(f"machine: {machine()}")
    print(f"heavy top, h = 2 ms, Kynema-compatible tangent; {args.calls} calls per phase, median of {args.runs}")
    print(f"first calls (compilation or cache load): {compile_s:.2f} s\n")
    med = {name: statistics.median(v) for name, v in times.items()}
    med["solve"] = med.pop("solve (+ restore)") - med["restore (subtracted)"]
    per_iteration = 0.0
    for name in (
        "tangent operators",
        "elements (+ blocks)",
        "constraint terms",
        "constraint assembly",
        "solve",
        "convergence error",
        "update",
    ):
        per_iteration += med[name]
        print(f"  {name:<20s} {med[name]:8.0f} ns")
    print(f"  {'per Newton iteration':<20s} {per_iteration:8.0f} ns")
    probe = kp.Simulation(model, params)
    its = np.mean([probe.step().iterations for _ in range(400)])
    print(f"\nSimulation.advance: {statistics.median(advance):.2f} µs/step, {its:.2f} Newton iterations per step")
    print(
        f"phases × iterations: {per_iteration * its / 1000:.2f} µs/step; the rest of the step is predict, state save,"
    )
    print("accelerations, global positions and joint outputs")


if __name__ == "__main__":
    main()
