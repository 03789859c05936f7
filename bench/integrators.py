"""Benchmark: the rigid-body schemes of ``kynemapy.integrators``, µs per step.

Two seed cases, 10 000 steps each: the Simo–Wong heavy top (J = diag(5, 5, 1), force (0, 0, −20)
at body point e3, W0 = (0, 0, 50) rad/s, h = 1 ms) and the Gazebo box, complex scenario
(0.1 × 0.4 × 0.9 m, 10 kg, ω0 = (0.1, 5, 0.1) rad/s, ċ0 = (−2, 2, 8) m/s, g = (0, 0, −9.8) m/s²,
h = 1 ms).  First the compile time of the schemes' one loop kernel (a fresh, uncached compilation),
without and with a user's torque function; then for each scheme the first call in this process
(numba's disk cache loaded, or compiled if stale) and the median µs per step (and the fastest)
of 7 timed calls of ``kp.integrators.integrate`` (the whole public call: validation, allocation,
loop); on the top, ``rig_pos`` and ``splitting`` again with the gravity torque given as a user's
torque function (called through its address).  ``exact`` is vectorised numpy: µs per output sample.

For comparison, the constrained generalized-α engine (``kp.Simulation``) on the same top: a body
at the pivot node pinned by a spherical joint.  The Simo–Wong inertia data are not those of a
physical body with its centre of mass 1 m from the pivot (J about the centre of mass would be
diag(−15, −15, 1)); m = 400 kg with the centre of mass at η = (0, 0, 0.05) m gives the same
inertia about the pivot (diag(5, 5, 1)) and the same gravity torque (m g |η| = 20 N m) with a
positive definite 6 × 6 mass matrix, so the motion about the pivot is the Simo–Wong one.

Run:  python bench/integrators.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp
from kynemapy.integrators import drive, point_force_torque
from kynemapy.integrators.torques import first_class

N_STEPS = 10_000
N_RUNS = 7
H = 1e-3


def hat(w) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def top_case() -> dict:
    return {
        "inertia": (5.0, 5.0, 1.0),
        "R0": rot_x(0.05),
        "W0": (0.0, 0.0, 50.0),
        "force": (0.0, 0.0, -20.0),
        "force_point": (0.0, 0.0, 1.0),
    }


def box_case() -> dict:
    m = 10.0
    inertia = m / 12.0 * np.array([0.4**2 + 0.9**2, 0.9**2 + 0.1**2, 0.1**2 + 0.4**2])
    return {
        "inertia": inertia,
        "R0": np.eye(3),
        "W0": (0.1, 5.0, 0.1),
        "gravity": (0.0, 0.0, -9.8),
        "v0": (-2.0, 2.0, 8.0),
    }


def compile_seconds(user_torque: bool) -> float:
    """A fresh uncached compilation [s] of the schemes' one loop kernel (same options as
    kynemapy._jit), in its variant without a user torque or with one (a first-class function)."""
    fresh = numba.njit(cache=False, fastmath=False, error_model="numpy", nogil=True, _nrt=False)(
        drive.run_scheme.py_func
    )
    state = np.zeros((4, 3))
    work = np.zeros((7, 3, 3))
    vwork = np.zeros((8, 3))
    R_out = np.tile(np.eye(3), (3, 1, 1))
    W_out = np.zeros((3, 3))
    torque = first_class(point_force_torque) if user_torque else None
    t = time.perf_counter()
    fresh(
        0, torque, np.zeros(6), np.zeros(6), np.ones(3), np.array([0, 1, 2]), 0.0, 0.01, 2, 1, R_out, W_out, state,
        work, vwork, np.zeros(2, dtype=np.int64),
    )  # fmt: skip
    return time.perf_counter() - t


@numba.njit(cache=True)
def top_gravity_torque(t, R, params, out):
    """The Simo–Wong top's gravity torque as a user's torque function: e3 × (Rᵀ (0, 0, −params[0]))."""
    out[0] = R[2, 1] * params[0]
    out[1] = -R[2, 0] * params[0]
    out[2] = 0.0


def bench_case(name: str, case: dict) -> None:
    print(f"\n{name}: h = {H:g} s, {N_STEPS} steps, median of {N_RUNS} runs")
    print(f"  {'scheme':18s} {'µs/step':>8s} {'(min)':>7s} {'Newton it/step':>15s} {'first call [s]':>15s}")
    rows = [(scheme, case) for scheme in kp.integrators.SCHEMES]
    if "force" in case:  # the same load as a user's torque function (called through its address)
        torqued = {k: v for k, v in case.items() if k not in ("force", "force_point")}
        torqued |= {"torque": top_gravity_torque, "torque_params": [-case["force"][2]]}
        rows += [(scheme, torqued) for scheme in ("rig_pos", "splitting")]
    for scheme, kw in rows:
        if scheme == "exact" and "force" in kw:
            continue
        t = time.perf_counter()
        kp.integrators.integrate(scheme, h=H, t_end=10 * H, **kw)
        first = time.perf_counter() - t
        times, iterations = [], 0
        for _ in range(N_RUNS):
            t = time.perf_counter()
            tr = kp.integrators.integrate(scheme, h=H, t_end=N_STEPS * H, **kw)
            times.append(time.perf_counter() - t)
            iterations = tr.newton_iterations
        assert tr.t.size == N_STEPS + 1
        us = statistics.median(times) / N_STEPS * 1e6
        fastest = min(times) / N_STEPS * 1e6
        per = f"{iterations / N_STEPS:.2f}" if scheme != "exact" else "-"
        unit = " (µs per sample)" if scheme == "exact" else ""
        label = scheme + (" + torque" if "torque" in kw else "")
        print(f"  {label:18s} {us:8.3f} {fastest:7.3f} {per:>15s} {first:15.2f}{unit}")


def constrained_top(tol: float) -> None:
    m, eta, J = 400.0, np.array([0.0, 0.0, 0.05]), np.diag([5.0, 5.0, 1.0])
    M = np.zeros((6, 6))
    M[:3, :3] = m * np.eye(3)
    M[:3, 3:] = m * hat(eta).T
    M[3:, :3] = m * hat(eta)
    M[3:, 3:] = J
    R0 = rot_x(0.05)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -1.0))
    top = b.add_node(orientation=(np.cos(0.025), np.sin(0.025), 0.0, 0.0), velocity=(0, 0, 0, *(R0 @ [0, 0, 50.0])))
    b.add_mass(top, mass_matrix=M)
    b.add_spherical_joint(top, point=(0.0, 0.0, 0.0))
    model = b.build()
    params = kp.StepParameters(h=H, rho_inf=1.0, max_iter=20, atol=tol, rtol=tol)
    t = time.perf_counter()
    kp.Simulation(model, params).advance(2)
    first = time.perf_counter() - t
    times = []
    for _ in range(N_RUNS):
        sim = kp.Simulation(model, params)
        t = time.perf_counter()
        iters = sim.advance(N_STEPS)
        times.append(time.perf_counter() - t)
    q = sim.state.q[top]
    w, x, y, z = q[3:]
    Rq = np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )
    R = Rq @ R0
    W = R.T @ sim.state.v[top][3:]
    H_end = 0.5 * W @ J @ W + 20.0 * R[2, 2]
    H0 = 1250.0 + 20.0 * np.cos(0.05)
    print(
        f"  constrained generalized-α (ρ∞ = 1, atol = rtol = {tol:g}): {statistics.median(times) / N_STEPS * 1e6:.2f} "
        f"µs/step (min {min(times) / N_STEPS * 1e6:.2f}), Newton iterations/step {np.mean(iters):.2f}, "
        f"relative H error at t = 10: {H_end / H0 - 1:.1e} (first call {first:.2f} s)"
    )


def main() -> None:
    print(f"machine: {machine()}")
    print(
        f"the schemes' loop, a fresh compilation: {compile_seconds(False):.1f} s; with a user torque "
        f"{compile_seconds(True):.1f} s (each once per install; numba's disk cache after)"
    )
    bench_case("Simo–Wong heavy top (seed 000)", top_case())
    bench_case("Gazebo box, complex scenario (seed 004)", box_case())
    print("\nSimo–Wong top with the constrained engine (kp.Simulation.advance), same h and steps:")
    for tol in (1e-5, 1e-10):
        constrained_top(tol)


if __name__ == "__main__":
    main()
