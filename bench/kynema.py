"""Benchmark: kynemapy against Kynema-FMB built on this machine, the same models, CPU time per step.

Builds nothing itself.  Set ``KYNEMA_BUILD`` to a Kynema-FMB build that has the ``KyTiming.*``
timing harness (the shared Kynema recipe: Kokkos Serial, Release, KLU, plus the local patch that
adds ``tests/regression_tests/regression/ky_step_timing.cpp``); the directory is searched for the
``kynema_fmb_regression_tests`` executable.  Without it, kynemapy's own figures are printed.

The models, exactly as the harness builds and steps them (and as Kynema's regression tests do):

* **heavy top** (``HeavyTopTest.FinalState``): a 15 kg rigid-body node, a 6→3 rigid joint to a
  pinned node, h = 2 ms, ρ∞ = 0.9, at most 10 iterations, atol 1e-5, rtol 1e-3, the given initial
  accelerations; 400 steps (``KY_STEPS_TOP``);
* **rotating beam, order 5** (``RotatingBeamTest.StepConvergence``): one element, six nodes at
  Kynema's literal GLL stations, its 7-point Gauss rule, the composite section, the root on a
  prescribed BC turned at 0.1 rad/s about z (root displacement and rotation set before each step),
  h = 0.01 s, ρ∞ = 0.9, at most 5 iterations; 10 steps (``KY_STEPS_BEAM``).  Orders 10 and 20: the
  same beam with p + 1 GLL nodes and p + 2 Gauss points (``beam_stations``), the same numbers on both
  sides: this script writes them to a file for the harness (below);
* **IEA 15 MW rotor** (``RotorTest.IEA15Rotor``): three blades of 11 nodes, 26 sections, the
  trapezoidal rule, gravity −9.81 along x, each root on a prescribed BC turned at −0.7906 rad/s
  about z, h = 0.01 s, ρ∞ = 0, at most 6 iterations; 11 steps (``KY_STEPS_ROTOR``).

The shared recipe's patch times the beam at order 5 only.  The other orders need a local extension
of the harness's ``ky_step_timing.cpp``: ``TEST(KyTiming, RotatingBeamOrders)`` reads the file named
by env ``KY_BEAM_SPEC`` (nothing when unset): per order ``p n_nodes n_quad``, the stations s, then the
point-weight pairs (Python repr, read with strtod), and runs the order-5 test's body on them
(``KYTIME rotating_beam_p<p>``).  Without it those orders show "not available".  The extension lives
beside the Kynema build, outside the project (the recipe is used, not copied in): move the body of
``TEST(KyTiming, RotatingBeam)`` into a function of the node stations and the quadrature, call it
from that test with its order-5 literals and from ``RotatingBeamOrders`` with each order read from
the file, then rebuild the test executable (``ninja -C $KY_ROOT/build/kynema
kynema_fmb_regression_tests``, about a minute).

Both sides start from the given velocities and accelerations (``initial_velocities="keep"``, as
Kynema does) and set the prescribed motion before each step inside the timed loop.

Timed, per model and round: the set-up (building the model and the system: Kynema's model,
``CreateSystem`` and solver; kynemapy's ``ModelBuilder`` ... ``build()`` and ``Simulation()``, and
``Simulation()`` alone), wall time; and the step loop, CPU time of the process per step (Kynema:
``CLOCK_PROCESS_CPUTIME_ID``; kynemapy: ``time.process_time``), plus its wall time.  For the heavy
top also ``sim.advance(n)`` (one compiled call).  Newton iterations (linear solves) are summed over
the steps on both sides and must be equal (a loud MISMATCH otherwise).

Rounds are interleaved: round r runs Kynema's harness once (a subprocess started in the
executable's own folder: it reads input files beside it; one process runs all the models) and
then kynemapy's models once each in this process.  kynemapy runs in this process, after a warm-up
of every model (numba compilation or cache load, reported apart), so that neither side's process
start, library loading or compilation is timed; each round builds each model afresh on both
sides.  Kynema's figure is of a fresh process, whose first steps may touch code and memory for
the first time; kynemapy's are of a warm one (the heavy top's 400 steps dilute that; a 10-step
beam does not).  Medians and min–max ranges over ``--rounds`` rounds; the ratios are Kynema ÷
kynemapy (above 1: kynemapy is faster), of the medians, of the minima (each side's fastest
round: on a VM whose speed changes in spells of milliseconds, the figure least touched by them)
and "paired": the median of the rounds' own ratios (a spell of some seconds slows both sides
of a round).

Run:  KYNEMA_BUILD=/path/to/kynema/build python bench/kynema.py [--rounds 5] [--orders 5 10 20]
      [--steps-top 400] [--steps-beam 10] [--steps-rotor 11]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp
from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points

ROOT = Path(__file__).resolve().parents[1]
EXE = "kynema_fmb_regression_tests"
ZERO6 = (0.0,) * 6
STEPS = {"top": 400, "beam": 10, "rotor": 11}  # the harness's defaults
ENV = {"top": "KY_STEPS_TOP", "beam": "KY_STEPS_BEAM", "rotor": "KY_STEPS_ROTOR"}

# --- the models ----------------------------------------------------------------------------

TOP_PARAMS = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, atol=1e-5, rtol=1e-3)

#: Kynema's order-5 beam: the six GLL stations and the 7-point Gauss rule as its test spells them
NODE_S5 = [0.0, 0.11747233803526763, 0.35738424175967748, 0.64261575824032247, 0.88252766196473242, 1.0]
QUADRATURE7 = [
    (-0.9491079123427585, 0.1294849661688697),
    (-0.7415311855993943, 0.27970539148927664),
    (-0.40584515137739696, 0.3818300505051189),
    (6.123233995736766e-17, 0.4179591836734694),
    (0.4058451513773971, 0.3818300505051189),
    (0.7415311855993945, 0.27970539148927664),
    (0.9491079123427585, 0.1294849661688697),
]
#: the composite section of Kynema's rotating beam (its mass_matrix and stiffness_matrix)
M_STAR = np.diag([8.538e-2, 8.538e-2, 8.538e-2, 1.4433e-2, 0.40972e-2, 1.0336e-2])
C_STAR = np.zeros((6, 6))
C_STAR[0, 0], C_STAR[1, 1], C_STAR[2, 2] = 1368.17e3, 88.56e3, 38.78e3
C_STAR[3:, 3:] = [[16.96e3, 17.61e3, -0.351e3], [17.61e3, 59.12e3, -0.37e3], [-0.351e3, -0.37e3, 141.47e3]]
BEAM_OMEGA, BEAM_H, BEAM_ROOT = 0.1, 0.01, 2.0
BEAM_PARAMS = kp.StepParameters(h=BEAM_H, rho_inf=0.9, max_iter=5)

ROTOR_DATA = ROOT / "tests" / "data" / "iea15_rotor_data.json"  # Kynema's iea15_rotor_data.hpp
ROTOR_OMEGA, ROTOR_H = -0.79063415025, 0.01
ROTOR_PARAMS = kp.StepParameters(h=ROTOR_H, rho_inf=0.0, max_iter=6)


def beam_stations(order: int) -> tuple[list[float], list[tuple[float, float]]]:
    if order == 5:
        return NODE_S5, QUADRATURE7
    xi, rule = gll_points(order), gauss_quadrature(order + 2)  # rule: (p + 2, 2) points and weights
    return [float(s) for s in (xi + 1.0) / 2.0], [(float(p), float(w)) for p, w in rule]


def make_beam(order: int) -> Callable[[], tuple[kp.Model, list[int]]]:
    """Kynema's StepConvergence beam: nodes at 10 s along x, one element, TranslateBeam(2, 0, 0),
    SetBeamVelocityAboutPoint(0.1 e_z, origin), the root on a prescribed BC."""
    node_s, quadrature = beam_stations(order)

    def build() -> tuple[kp.Model, list[int]]:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
        nodes = [b.add_node(position=(10.0 * s, 0.0, 0.0), acceleration=ZERO6) for s in node_s]
        e = b.add_beam_element(nodes, node_s, quadrature, [0.0, 1.0], [M_STAR, M_STAR], [C_STAR, C_STAR])
        b.translate_beam(e, (BEAM_ROOT, 0.0, 0.0))
        b.set_beam_velocity_about_point(e, (0.0, 0.0, 0.0, 0.0, 0.0, BEAM_OMEGA), (0.0, 0.0, 0.0))
        bc = b.add_prescribed_bc(nodes[0])
        return b.build(), [bc]

    return build


def drive_beam(sim: kp.Simulation, bcs: list[int], n: int) -> int:
    """``n`` steps, the root's prescribed motion set before each as the harness does (Eigen's
    AngleAxis and _transformVector, in Python floats); returns the Newton iterations."""
    ci, bc, x0, its = sim.inputs.constraint_input, bcs[0], BEAM_ROOT, 0
    for i in range(n):
        half = 0.5 * BEAM_OMEGA * BEAM_H * (i + 1)
        w, z = math.cos(half), math.sin(half)
        uv_y = z * x0 + z * x0  # uv = q.vec() × x0, doubled
        ci[bc] = ((x0 + -z * uv_y) - x0, w * uv_y, 0.0, w, 0.0, 0.0, z)
        its += sim.step().iterations
    return its


def make_rotor(
    bc: str = "prescribed", gravity: tuple[float, float, float] = (-9.81, 0.0, 0.0), omega: float = ROTOR_OMEGA
) -> Callable[[], tuple[kp.Model, list[int]]]:
    """Kynema's CreateIEA15Blades<3> and a prescribed BC on each root (RotorTest.IEA15Rotor);
    ``bc`` "fixed" clamps the roots instead, ``gravity`` [m/s²], ``omega`` the initial spin
    about z [rad/s] (bench/modes.py builds the rotor at rest with these)."""
    data = json.loads(ROTOR_DATA.read_text())  # Kynema's data are compiled in: read once, untimed
    node_s = [(xi + 1.0) / 2.0 for xi in data["node_xi"]]
    coords, quadrature = data["node_coords"], data["trapz_quadrature"]
    sections = data["material_sections"]
    sec_s = [s["s"] for s in sections]
    m_star = [np.asarray(s["m_star"]) for s in sections]
    c_star = [np.asarray(s["c_star"]) for s in sections]

    def build() -> tuple[kp.Model, list[int]]:
        b = kp.ModelBuilder(gravity=gravity)
        roots = []
        for k in range(3):
            half = 0.5 * (-2.0 * math.pi * k / 3.0)
            nodes = [b.add_node(position=c[:3], orientation=c[3:], acceleration=ZERO6) for c in coords]
            e = b.add_beam_element(nodes, node_s, quadrature, sec_s, m_star, c_star)
            b.translate_beam(e, (3.97, 0.0, 0.0))
            b.rotate_beam_about_point(e, (math.cos(half), 0.0, 0.0, math.sin(half)), (0.0, 0.0, 0.0))
            if omega != 0.0:
                b.set_beam_velocity_about_point(e, (0.0, 0.0, 0.0, 0.0, 0.0, omega), (0.0, 0.0, 0.0))
            roots.append(nodes[0])
        bcs = [b.add_fixed_bc(r) if bc == "fixed" else b.add_prescribed_bc(r) for r in roots]
        return b.build(), bcs

    return build


def drive_rotor(sim: kp.Simulation, bcs: list[int], n: int) -> int:
    ci, its = sim.inputs.constraint_input, 0
    for i in range(n):
        half = 0.5 * ROTOR_OMEGA * ROTOR_H * (i + 1)
        u_hub = (0.0, 0.0, 0.0, math.cos(half), 0.0, 0.0, math.sin(half))
        for bc in bcs:
            ci[bc] = u_hub
        its += sim.step().iterations
    return its


def make_top() -> tuple[kp.Model, list[int]]:
    model, _ = build_heavy_top()
    return model, []


def drive_top(sim: kp.Simulation, _: list[int], n: int) -> int:
    its = 0
    for _ in range(n):
        its += sim.step().iterations
    return its


# --- kynemapy's timings ----------------------------------------------------------------------


def kp_round(build: Callable, params: kp.StepParameters, drive: Callable, n: int) -> dict[str, float]:
    """One round: set-up (wall), then the step loop (CPU and wall); keys as the harness's."""
    gc.collect()
    t0 = time.perf_counter()
    model, bcs = build()
    t1 = time.perf_counter()
    sim = kp.Simulation(model, params, consistent_initial_accelerations=False, initial_velocities="keep")
    t2 = time.perf_counter()
    c0, w0 = time.process_time(), time.perf_counter()
    its = drive(sim, bcs, n)
    c1, w1 = time.process_time(), time.perf_counter()
    return {
        "setup_us": 1e6 * (t2 - t0),
        "sim_us": 1e6 * (t2 - t1),
        "cpu_us_per_step": 1e6 * (c1 - c0) / n,
        "us_per_step": 1e6 * (w1 - w0) / n,
        "newton_its": its,
    }


def kp_advance(n: int) -> dict[str, float]:
    """The heavy top's ``n`` steps in one compiled ``sim.advance(n)`` call."""
    model, _ = make_top()
    sim = kp.Simulation(model, TOP_PARAMS, consistent_initial_accelerations=False, initial_velocities="keep")
    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    its = sim.advance(n)
    c1, w1 = time.process_time(), time.perf_counter()
    return {"cpu_us_per_step": 1e6 * (c1 - c0) / n, "us_per_step": 1e6 * (w1 - w0) / n, "newton_its": int(its.sum())}


# --- Kynema's harness ------------------------------------------------------------------------


def find_exe(build: str) -> Path | None:
    root = Path(build)
    for rel in ("", "tests/regression_tests", "kynema/tests/regression_tests", "build/kynema/tests/regression_tests"):
        p = root / rel / EXE
        if p.is_file() and os.access(p, os.X_OK):
            return p
    found = sorted(p for p in root.rglob(EXE) if p.is_file() and os.access(p, os.X_OK))
    return found[0] if found else None


def kynema_source(exe: Path) -> str:
    """Kynema's source folder and commit (from the build's CMakeCache.txt), best effort."""
    for d in exe.parents:
        cache = d / "CMakeCache.txt"
        if cache.is_file():
            m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(errors="replace"), re.M)
            if not m:
                return "source unknown"
            src = m.group(1)
            try:
                rev = subprocess.run(
                    ["git", "-C", src, "log", "-1", "--format=%h %cs"], capture_output=True, text=True, check=True
                ).stdout.strip()
                dirty = subprocess.run(
                    ["git", "-C", src, "status", "--porcelain", "-uno"], capture_output=True, text=True, check=True
                ).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                return f"source {src}"
            return f"source {src} at {rev}" + (" + local changes (the timing patch)" if dirty else "")
    return "source unknown"


KYTIME = re.compile(r"^KYTIME (\S+) (.*)$", re.M)


def write_beam_spec(orders: list[int], path: Path) -> None:
    """The harness's ``KY_BEAM_SPEC`` file: per order ``p n_nodes n_quad``, the stations, then the
    quadrature's point-weight pairs, each float in repr (read back exactly with strtod)."""
    lines = []
    for p in orders:
        node_s, quadrature = beam_stations(p)
        lines.append(f"{p} {len(node_s)} {len(quadrature)}")
        lines.append(" ".join(repr(float(s)) for s in node_s))
        lines.extend(f"{float(x)!r} {float(w)!r}" for x, w in quadrature)
    path.write_text("\n".join(lines) + "\n")


def kynema_round(exe: Path, steps: dict[str, int], spec: Path | None = None) -> dict[str, dict[str, float]]:
    """One run of ``KyTiming.*``: {model: {setup_us, steps, cpu_us_per_step, newton_its, ...}};
    ``spec``: the ``KY_BEAM_SPEC`` file of the beam's other orders."""
    env = dict(os.environ, **{ENV[k]: str(v) for k, v in steps.items()})
    env.pop("KY_BEAM_SPEC", None)
    if spec is not None:
        env["KY_BEAM_SPEC"] = str(spec)
    done = subprocess.run(
        [str(exe), "--gtest_filter=KyTiming.*"], cwd=exe.parent, env=env, capture_output=True, text=True, timeout=600
    )
    lines = KYTIME.findall(done.stdout)
    out = {name: {k: float(v) for k, v in re.findall(r"(\w+)=(\S+)", rest)} for name, rest in lines}
    if done.returncode != 0 or not out:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise RuntimeError(f"{exe.name} --gtest_filter=KyTiming.* exited {done.returncode}:\n{tail}")
    return out


# --- report ----------------------------------------------------------------------------------


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def fmt(xs: list[float], digits: int = 1) -> str:
    if not xs:
        return "n/a"
    return f"{med(xs):.{digits}f} [{min(xs):.{digits}f}–{max(xs):.{digits}f}]"


def git_commit() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h %cs"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "-uno", "kynemapy"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" + uncommitted changes under kynemapy/" if dirty else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--orders", type=int, nargs="+", default=[5, 10, 20], help="rotating-beam orders")
    parser.add_argument("--steps-top", type=int, default=STEPS["top"])
    parser.add_argument("--steps-beam", type=int, default=STEPS["beam"])
    parser.add_argument("--steps-rotor", type=int, default=STEPS["rotor"])
    args = parser.parse_args()
    steps = {"top": args.steps_top, "beam": args.steps_beam, "rotor": args.steps_rotor}

    print(f"machine: {machine()}")
    print(f"kynemapy: commit {git_commit()}")
    build = os.environ.get("KYNEMA_BUILD")
    exe = find_exe(build) if build else None
    if not build:
        print(
            "Kynema: none (KYNEMA_BUILD unset): kynemapy's figures alone.  Build Kynema-FMB with its KyTiming "
            "harness by the shared Kynema recipe and run  KYNEMA_BUILD=<its build folder> python bench/kynema.py"
        )
    elif exe is None:
        print(f"Kynema: no executable {EXE} under {build}: kynemapy's figures alone (see the shared Kynema recipe)")
    else:
        print(f"Kynema: {exe} ({kynema_source(exe)}), KyTiming.* run from its own folder")

    # (label, key of the harness's line or None, build, params, drive, steps)
    models: list[tuple[str, str | None, Callable, kp.StepParameters, Callable, int]] = [
        ("heavy top", "heavy_top", make_top, TOP_PARAMS, drive_top, steps["top"])
    ]
    for p in args.orders:
        models.append(
            (f"rotating beam p={p}", f"rotating_beam_p{p}", make_beam(p), BEAM_PARAMS, drive_beam, steps["beam"])
        )
    models.append(("IEA 15 MW rotor", "iea15_rotor", make_rotor(), ROTOR_PARAMS, drive_rotor, steps["rotor"]))

    # warm-up: numba compilation or cache load, the first simulation of each model
    t = time.perf_counter()
    first = []
    for label, _, make, params, drive, n in models:
        t0 = time.perf_counter()
        kp_round(make, params, drive, min(n, 3))
        first.append(f"{label} {time.perf_counter() - t0:.2f} s")
    kp_advance(min(steps["top"], 3))
    warm = time.perf_counter() - t
    print(f"kynemapy warm-up (compilation or cache load, set-up, 3 steps; not in the figures below): {warm:.2f} s")
    print("  " + ", ".join(first))

    spec_dir = tempfile.TemporaryDirectory(prefix="ky_beam_spec_")
    spec = None
    other_orders = [p for p in dict.fromkeys(args.orders) if p != 5]
    if exe is not None and other_orders:
        spec = Path(spec_dir.name) / "beam_orders.txt"
        write_beam_spec(other_orders, spec)

    ky: dict[str, list[dict[str, float]]] = {}
    ours: dict[str, list[dict[str, float]]] = {label: [] for label, *_ in models}
    ours["advance"] = []
    for _ in range(args.rounds):
        if exe is not None:
            for name, line in kynema_round(exe, steps, spec).items():
                ky.setdefault(name, []).append(line)
        for label, _, make, params, drive, n in models:
            ours[label].append(kp_round(make, params, drive, n))
        ours["advance"].append(kp_advance(steps["top"]))
    spec_dir.cleanup()

    mismatches = []
    print(f"\nCPU µs per step, median [min–max] of {args.rounds} interleaved rounds; Newton iterations per step")
    heads = f"{'Kynema':>24s} {'kynemapy':>24s} {'Kynema/kynemapy':>15s} {'of minima':>9s} {'paired':>7s}"
    print(f"{'model':22s} {'steps':>5s} {heads}  its/step Kynema | kynemapy")
    rows = [(label, key, n, ours[label]) for label, key, _, _, _, n in models]
    rows.insert(1, ("heavy top advance(n)", "heavy_top", steps["top"], ours["advance"]))
    for label, key, n, mine in rows:
        kp_cpu = [r["cpu_us_per_step"] for r in mine]
        kp_its = {r["newton_its"] for r in mine}
        k_lines = ky.get(key, []) if key else []
        k_cpu = [r["cpu_us_per_step"] for r in k_lines]
        k_its = {r["newton_its"] for r in k_lines}
        if k_lines:
            ratio = f"{med(k_cpu) / med(kp_cpu):.2f}×"
            ratio_min = f"{min(k_cpu) / min(kp_cpu):.2f}×"
            # each round's own ratio (both sides timed in it, minutes apart at most), their median:
            # a slow spell of the machine slows both sides of a round (only where every round
            # has Kynema's figure: otherwise the lists do not pair by round)
            paired = (
                f"{med([k / m for k, m in zip(k_cpu, kp_cpu, strict=True)]):.2f}×"
                if len(k_cpu) == len(kp_cpu)
                else "n/a"
            )
            k_its_s = "/".join(f"{x / n:.3f}" for x in sorted(k_its))
            if k_its != kp_its or len(kp_its) != 1 or any(r.get("all_converged", 1) != 1 for r in k_lines):
                mismatches.append(f"{label}: Kynema {sorted(k_its)} iterations, kynemapy {sorted(kp_its)}")
                check = "  MISMATCH"
            else:
                check = "  equal"
        else:
            ratio, ratio_min, paired, k_its_s, check = "n/a", "n/a", "n/a", "n/a", ""
        k_col = fmt(k_cpu) if k_lines else ("not available" if exe is not None else "—")
        kp_its_s = "/".join(f"{x / n:.3f}" for x in sorted(kp_its))
        print(
            f"{label:22s} {n:5d} {k_col:>24s} {fmt(kp_cpu):>24s} {ratio:>15s} {ratio_min:>9s} {paired:>7s}  "
            f"{k_its_s} | {kp_its_s}{check}"
        )
    missing = [p for p in other_orders if exe is not None and f"rotating_beam_p{p}" not in ky]
    if missing:
        print(
            f"  (no Kynema figure for the beam at order(s) {', '.join(map(str, missing))}: the harness lacks the "
            "local KyTiming.RotatingBeamOrders test that reads KY_BEAM_SPEC; see the docstring)"
        )

    print("\nwall µs per step of the same loops, medians:")
    for label, key, _, mine in rows:
        k_lines = ky.get(key, []) if key else []
        k = f"Kynema {med([r['us_per_step'] for r in k_lines]):.1f}, " if k_lines else ""
        print(f"  {label}: {k}kynemapy {med([r['us_per_step'] for r in mine]):.1f}")

    print("\nset-up, wall ms, median [min–max]: Kynema's model, system and solver; kynemapy's model and Simulation()")
    print(f"{'model':22s} {'Kynema':>22s} {'kynemapy':>22s} {'Simulation() alone':>22s} {'Kynema/kynemapy':>15s}")
    for label, key, *_ in models:
        mine = ours[label]
        k_lines = ky.get(key, []) if key else []
        k_set = [r["setup_us"] / 1e3 for r in k_lines]
        kp_set = [r["setup_us"] / 1e3 for r in mine]
        ratio = f"{med(k_set) / med(kp_set):.2f}×" if k_set else "n/a"
        print(
            f"{label:22s} {fmt(k_set, 2) if k_set else 'n/a':>22s} {fmt(kp_set, 2):>22s} "
            f"{fmt([r['sim_us'] / 1e3 for r in mine], 2):>22s} {ratio:>15s}"
        )
    rotor_sim = med([r["sim_us"] / 1e3 for r in ours["IEA 15 MW rotor"]])
    verdict = "met" if rotor_sim <= 10 else "NOT met"
    print(f"target: the rotor's Simulation() in at most 10 ms: {rotor_sim:.2f} ms, {verdict}")
    if mismatches:
        print("\n!!! MISMATCH of Newton iterations between Kynema and kynemapy:")
        for m in mismatches:
            print(f"!!!   {m}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
