"""Benchmark: linearization and the first 20 modes of Kynema's IEA 15 MW rotor, at rest.

The rotor of ``bench/kynema.py`` (Kynema's ``CreateIEA15Blades<3>``: three blades of 11 nodes,
26 sections, the trapezoidal rule, from ``tests/data/iea15_rotor_data.json``) with every root
clamped, at rest (no initial velocity) and without gravity, so that the reference state is the
equilibrium (198 DOFs, 18 constraint rows): once by fixed BCs and once by prescribed BCs (their
inputs the identity), and the Newton workspace of each linearization dense and sparse.

Timed (wall time, median of ``--runs`` runs after a warm-up that compiles or loads numba's cache):
``kp.analysis.linearize(model)`` (assembling M, C, K, B) and, apart, ``kp.analysis.modes(lin,
n_modes=20)`` on that fresh linearization (so its null space and reduced matrices are part of the
modes' time, as in a first call).  Targets (issue 29): linearization ≤ 0.2 s, the first 20 modes ≤ 1 s.

Then the same with Kynema's gravity (−9.81 along x), about the static equilibrium
(``static_equilibrium``, timed once): its tangent is not symmetric, the modes come from the
first-order eigenproblem.

Then the rotor turning at Kynema's Ω = −0.7906 rad/s about z (prescribed BCs, no gravity):
``steady_rotation``, the rotating-frame ``linearize`` and its 20 modes (the gyroscopic, first-order
eigenproblem), its fixed-frame modes in multi-blade coordinates (``mbc_modes``), and a 13-speed
Campbell sweep (``campbell``) from rest to that speed.

OpenBLAS: on a busy 2-core machine its second thread, woken by a LAPACK call on these 180 × 180
matrices, competes with the other work and a Cholesky factorization of M_r took 0.2 s instead of
0.3 ms (docs/performance.md, "OpenBLAS's idle threads"); ``OPENBLAS_NUM_THREADS=1`` avoids it.

Run:  [OPENBLAS_NUM_THREADS=1] python bench/modes.py [--runs 5]
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine
from kynema import ROTOR_OMEGA, make_rotor

import kynemapy as kp

TARGET_LINEARIZE, TARGET_MODES = 0.2, 1.0  # s (issue 29)
N_MODES = 20


def build_rotor(bc: str, gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> kp.Model:
    """The IEA 15 MW rotor at rest (bench/kynema.py's model), each blade root clamped by a ``bc``
    ("fixed" or "prescribed") BC."""
    return make_rotor(bc, gravity, omega=0.0)()[0]


def lin_fn(model: kp.Model, solver: str):
    if "solver" in inspect.signature(kp.analysis.linearize).parameters:
        return lambda: kp.analysis.linearize(model, solver=solver)
    return lambda: kp.analysis.linearize(model)  # an older kynemapy: the "auto" workspace


def lin_then_modes(make, runs: int) -> tuple[float, float, object, object]:
    """Medians of ``make()`` and of ``modes`` on its result, timed apart within each run."""
    t_lin, t_modes, lin, m = [], [], None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        lin = make()
        t1 = time.perf_counter()
        m = kp.analysis.modes(lin, n_modes=N_MODES)
        t_modes.append(time.perf_counter() - t1)
        t_lin.append(t1 - t0)
    return statistics.median(t_lin), statistics.median(t_modes), lin, m


def timed(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (median)")
    args = parser.parse_args()
    print(f"machine: {machine()}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
    print(f"IEA 15 MW rotor at rest, roots clamped; median of {args.runs} runs after a warm-up")
    ok = True
    for bc in ("fixed", "prescribed"):
        model = build_rotor(bc)
        for solver in ("dense", "sparse"):
            make = lin_fn(model, solver)
            t0 = time.perf_counter()
            kp.analysis.modes(make(), n_modes=N_MODES)
            first = time.perf_counter() - t0
            t_lin, t_modes, lin, m = lin_then_modes(make, args.runs)
            ok &= t_lin <= TARGET_LINEARIZE and t_modes <= TARGET_MODES
            print(
                f"  {bc:10s} BCs, {solver:6s} workspace: n = {lin.n_dofs} DOFs, m = {lin.B.shape[0]} constraints; "
                f"linearize {t_lin * 1e3:7.1f} ms (target {TARGET_LINEARIZE * 1e3:.0f} ms), "
                f"{N_MODES} modes {t_modes * 1e3:7.1f} ms (target {TARGET_MODES * 1e3:.0f} ms); "
                f"first call {first:.2f} s"
            )
            kind = "undamped symmetric (eigh)" if np.isrealobj(m.shapes) else "first-order (eig)"
            print(f"      {kind}; f [Hz]: {', '.join(f'{f:.4f}' for f in m.frequency[:7])}, …, {m.frequency[-1]:.4f}")
    # under Kynema's gravity (−9.81 along x): about the static equilibrium, whose tangent is not
    # symmetric (1.7e-4 of its largest entry): the first-order eigenproblem
    model = build_rotor("prescribed", gravity=(-9.81, 0.0, 0.0))
    t_eq, eq = timed(lambda: kp.analysis.static_equilibrium(model), 1)
    kp.analysis.modes(kp.analysis.linearize(eq), n_modes=N_MODES)
    t_lin, t_modes, lin, m = lin_then_modes(lambda: kp.analysis.linearize(eq), args.runs)
    ok &= t_lin <= TARGET_LINEARIZE and t_modes <= TARGET_MODES
    kind = "undamped symmetric (eigh)" if np.isrealobj(m.shapes) else "first-order (eig)"
    print(
        f"  prescribed BCs under gravity, about the static equilibrium ({t_eq * 1e3:.0f} ms, {eq.iterations} Newton "
        f"iterations): linearize {t_lin * 1e3:.1f} ms, {N_MODES} modes {t_modes * 1e3:.1f} ms, {kind}"
    )
    print(f"      f [Hz]: {', '.join(f'{f:.4f}' for f in m.frequency[:7])}, …, {m.frequency[-1]:.4f}")
    print("targets met" if ok else "TARGETS MISSED")
    # the rotor turning: the relative equilibrium at rated speed, the rotating-frame linearization
    # (gyroscopic C: the first-order eigenproblem, 2r = 360) and a Campbell sweep
    model = build_rotor("prescribed")
    omega = (0.0, 0.0, ROTOR_OMEGA)
    kp.analysis.modes(kp.analysis.steady_rotation(model, omega), n_modes=N_MODES)  # warm-up
    t_st, st = timed(lambda: kp.analysis.steady_rotation(model, omega), args.runs)
    t_lin, lin = timed(lambda: kp.analysis.linearize(st), args.runs)
    t_modes, m = timed(lambda: kp.analysis.modes(lin, n_modes=N_MODES), args.runs)
    print(
        f"  turning at Ω = {abs(ROTOR_OMEGA):.4f} rad/s ({abs(ROTOR_OMEGA) * 30 / math.pi:.2f} rpm), no gravity: "
        f"steady rotation {t_st * 1e3:.0f} ms ({st.iterations} Newton iterations), rotating-frame linearize "
        f"{t_lin * 1e3:.1f} ms, {N_MODES} modes {t_modes * 1e3:.0f} ms (first-order eig)"
    )
    low = ", ".join(f"{f:.4f}" for f in m.frequency[:7])
    print(f"      f [Hz]: {low}, …; max |ζ| {np.abs(m.damping_ratio).max():.1e}")
    if hasattr(kp.analysis, "mbc_modes"):  # multi-blade coordinates: the modes seen from the ground
        per_blade = model.n_nodes // 3  # make_rotor adds each blade's nodes in turn, at 0°, −120°, −240° about z
        blades = [list(range(k * per_blade, (k + 1) * per_blade)) for k in range(3)]
        t_mbc, rm = timed(lambda: kp.analysis.mbc_modes(st, blades, n_modes=N_MODES), args.runs)
        fixed = ", ".join(f"{f:.4f} {lab}" for f, lab in zip(rm.frequency[:6], rm.labels()[:6], strict=True))
        print(f"  multi-blade coordinates (mbc_modes), {N_MODES} modes: {t_mbc * 1e3:.0f} ms; f [Hz]: {fixed}, …")
    speeds = np.linspace(0.0, abs(ROTOR_OMEGA), 13)
    t_c, c = timed(lambda: kp.analysis.campbell(model, speeds, axis=(0.0, 0.0, -1.0), n_modes=N_MODES), 1)
    print(
        f"  Campbell diagram, {speeds.size} speeds 0–{speeds[-1] * 30 / math.pi:.2f} rpm, {N_MODES} modes tracked: "
        f"{t_c:.2f} s; lowest MAC between speeds {c.mac.min():.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
