"""Benchmark: accuracy against cost on Kynema's heavy top, kynemapy's schemes and MuJoCo's RK4.

The heavy top of ``examples/heavy_top.py`` (15 kg, centre of mass 1 m from a fixed pivot,
spinning at 150 rad/s; consistent initial accelerations computed), simulated for 1 s.  The error
is the distance [m] of the centre of mass at t = 1 s from a reference: Euler's equations of a
heavy top about its fixed point, written here independently of kynemapy (quaternion kinematics,
inertia about the pivot), integrated by scipy's DOP853 at rtol = atol = 1e-13.  For each method
and step size (or tolerance), the CPU time of the integration (``time.process_time``; the
``Simulation`` and the models are made before the clock starts) is measured in ``--rounds``
interleaved rounds after a warm-up, and the median is kept; the CPU ms per simulated second that
an error of 1e-3 and 1e-6 needs is interpolated in log-log between the two measured points that
bracket it.

Methods:

* ``gen-α, fixed h``: ``Simulation.advance(n)`` (one compiled call), ρ∞ = 0.9, Kynema's Newton
  tolerances (atol = 1e-5, rtol = 1e-3).
* ``gen-α, step control``: ``advance_to(1, StepControl(rtol=tol, atol=tol, scope="run"))``
  (Python around each compiled step: about 0.3 ms per step, most of the cost).
* ``extrapolated, fixed h``: :func:`kynemapy.run.extrapolation.extrapolate` (h, h/2 and h/4
  over the whole second, three compiled calls, combined; order 4).
* ``extrapolated (h, h/2), fixed h``: two levels only, ``extrapolate(..., divisions=(1, 2))``
  (weights (−1, 4)/3 remove the h² term: order 3, three steps per h instead of seven).
* ``extrapolated, step control``: ``advance_to(1, StepControl(rtol=tol, atol=tol,
  scheme="extrapolated"))``: the same, h chosen from the tolerance (a call whose estimate
  exceeds it is redone), the first h 10 ms; the levels' Newton settings chosen from the
  tolerance (``newton="auto"``, the default: from 1e-4 up, Newton atol = tol,
  rtol = min(0.1, 10 tol), the last step's predictor).  ``..., newton=params``: the same with
  the simulation's ``StepParameters`` as they are (Kynema's Newton tolerances).
* ``... predictor last``, ``... fast Newton``: the same with other ``StepParameters`` (set by the
  user, labelled here): ``predictor="last"`` (the last step's v̇ and λ start each Newton
  iteration instead of Kynema's zeros), and "fast Newton" = that predictor, the exact tangent
  (``geometric_stiffness=True``) and Newton ``atol=1e-3, rtol=0.1`` (fewer iterations a step;
  the error unchanged on this model); one of them at ρ∞ = 0.5.
* MuJoCo (optional: ``pip install mujoco``): ``bench/peers.py``'s model, RK4, its native
  ``rollout``.

* Exudyn (optional: ``pip install exudyn``): RK44, the top reduced to its rotation: a rigid body
  with a rotation-vector (Lie-group) node at the pivot, the inertia about the pivot, the three
  translations held by eliminated ``CoordinateConstraint`` s (Exudyn's explicit solvers take no
  other constraint, so a spherical joint cannot be used), gravity as the force ``m g`` at the
  centre of mass (body-fixed point (0, 1, 0) m).  Its error falls like h⁴ (about 15× per halving).

Run:  python bench/accuracy.py [--rounds R]
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp
from kynemapy.run import extrapolation

try:
    import mujoco
    from mujoco import rollout
except ImportError:  # MuJoCo is optional
    mujoco = None
try:
    import exudyn
    import exudyn.utilities as exu_utilities
except ImportError:  # Exudyn is optional
    exudyn = None

T_END = 1.0
TARGETS = (1e-3, 1e-6)
MASS = 15.0
COM = np.array([0.0, 1.0, 0.0])  # m, body frame, from the pivot
INERTIA_CM = np.array([0.234375, 0.46875, 0.234375])  # kg m², principal, about the centre of mass
GRAVITY = np.array([0.0, 0.0, -9.81])
OMEGA0 = np.array([0.0, 150.0, -4.61538])  # rad/s (body = world frame at the start)

MJCF = """<mujoco>
  <option timestep="{h}" integrator="RK4" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="top" pos="0 0 0">
      <joint type="ball" pos="0 0 0"/>
      <inertial pos="0 1 0" mass="15" diaginertia="0.234375 0.46875 0.234375"/>
    </body>
  </worldbody>
</mujoco>"""


# --- the reference ----------------------------------------------------------------------------


def _rotation(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def reference_com(t_end: float = T_END) -> np.ndarray:
    """Centre of mass [m] at ``t_end``: Euler's equations about the pivot, DOP853 at 1e-13."""
    inertia = np.diag(INERTIA_CM) + MASS * (COM @ COM * np.eye(3) - np.outer(COM, COM))
    inverse = np.linalg.inv(inertia)

    def rhs(_t: float, s: np.ndarray) -> np.ndarray:
        q, w = s[:4], s[4:]
        torque = np.cross(COM, _rotation(q).T @ (MASS * GRAVITY))  # body frame
        qd = 0.5 * np.array(
            [
                -q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
                q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
                q[0] * w[2] + q[1] * w[1] - q[2] * w[0],
            ]
        )
        return np.concatenate([qd, inverse @ (np.cross(inertia @ w, w) + torque)])

    s0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], OMEGA0])
    sol = solve_ivp(rhs, (0.0, t_end), s0, method="DOP853", rtol=1e-13, atol=1e-13)
    return _rotation(sol.y[:4, -1]) @ COM


# --- the methods: each returns (error [m], CPU seconds) ------------------------------------------


def _clock(fn: Callable[[], np.ndarray], reference: np.ndarray) -> tuple[float, float]:
    t = time.process_time()
    com = fn()
    return float(np.linalg.norm(com - reference)), time.process_time() - t


def _params(h: float, **settings: Any) -> kp.StepParameters:
    return kp.StepParameters(**({"h": h, "rho_inf": 0.9, "max_iter": 20} | settings))


#: "fast Newton": the settings measured cheapest for the extrapolated scheme on this model (each a
#: StepParameters field the user sets): the last step's v̇ and λ as the Newton start, the exact
#: tangent, Newton atol = 1e-3, rtol = 0.1 (docs/step-control.md, "The extrapolated scheme")
FAST = {"predictor": "last", "geometric_stiffness": True, "atol": 1e-3, "rtol": 0.1}


def gen_alpha_fixed(model: kp.Model, top: int, h: float, reference: np.ndarray) -> tuple[float, float]:
    sim = kp.Simulation(model, _params(h))
    n = round(T_END / h)

    def go() -> np.ndarray:
        sim.advance(n)
        return sim.state.x[top, :3].copy()

    return _clock(go, reference)


def gen_alpha_control(model: kp.Model, top: int, tol: float, reference: np.ndarray) -> tuple[float, float]:
    sim = kp.Simulation(model, _params(1e-3))
    control = kp.StepControl(rtol=tol, atol=tol, scope="run")

    def go() -> np.ndarray:
        sim.advance_to(T_END, control)
        return sim.state.x[top, :3].copy()

    return _clock(go, reference)


def extrapolated_fixed(
    model: kp.Model, top: int, h: float, reference: np.ndarray, **settings: Any
) -> tuple[float, float]:
    sim = kp.Simulation(model, _params(h, **settings))

    def go() -> np.ndarray:
        run = extrapolation.extrapolate(sim, T_END, h)
        return np.asarray(model.x0)[top, :3] + run.q[-1, top, :3]

    return _clock(go, reference)


def extrapolated_two_levels(
    model: kp.Model, top: int, h: float, reference: np.ndarray, **settings: Any
) -> tuple[float, float]:
    sim = kp.Simulation(model, _params(h, **settings))

    def go() -> np.ndarray:
        run = extrapolation.extrapolate(sim, T_END, h, divisions=(1, 2))
        return np.asarray(model.x0)[top, :3] + run.q[-1, top, :3]

    return _clock(go, reference)


def extrapolated_control(
    model: kp.Model, top: int, tol: float, reference: np.ndarray, newton: str = "auto", **settings: Any
) -> tuple[float, float]:
    sim = kp.Simulation(model, _params(1e-2, **settings))  # the first h: 10 ms
    control = kp.StepControl(rtol=tol, atol=tol, scheme="extrapolated", newton=newton)

    def go() -> np.ndarray:
        sim.advance_to(T_END, control)
        return sim.state.x[top, :3].copy()

    return _clock(go, reference)


def mujoco_rk4(h: float, reference: np.ndarray) -> tuple[float, float]:
    m = mujoco.MjModel.from_xml_string(MJCF.format(h=h))
    d = mujoco.MjData(m)
    d.qvel[:] = OMEGA0  # ball joint: body-frame angular velocity
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    initial = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, initial, spec)
    n = round(T_END / h)
    out = np.empty((1, n, initial.size))
    t = time.process_time()
    rollout.rollout(m, d, initial, nstep=n, state=out)
    seconds = time.process_time() - t
    com = _rotation(out[0, -1, 1:5]) @ COM  # state: time, qpos (the ball's quaternion), ...
    return float(np.linalg.norm(com - reference)), seconds


def exudyn_rk44(h: float, reference: np.ndarray) -> tuple[float, float]:
    system = exudyn.SystemContainer()
    mbs = system.AddSystem()
    about_pivot = np.diag(INERTIA_CM) + MASS * (COM @ COM * np.eye(3) - np.outer(COM, COM))
    body = mbs.CreateRigidBody(
        inertia=exu_utilities.RigidBodyInertia(mass=MASS, inertiaTensor=about_pivot),
        referencePosition=[0.0, 0.0, 0.0],
        initialAngularVelocity=list(OMEGA0),  # global = body frame at t = 0
        nodeType=exudyn.NodeType.RotationRotationVector,
        returnDict=True,
    )
    mbs.CreateForce(itemNumber=body["bodyNumber"], loadVector=list(MASS * GRAVITY), localPosition=list(COM))
    ground = mbs.AddMarker(
        exu_utilities.MarkerNodeCoordinate(nodeNumber=mbs.AddNode(exu_utilities.NodePointGround()), coordinate=0)
    )
    for i in range(3):  # the pivot's translations, eliminated by the explicit solver
        marker = mbs.AddMarker(exu_utilities.MarkerNodeCoordinate(nodeNumber=body["nodeNumber"], coordinate=i))
        mbs.AddObject(exu_utilities.CoordinateConstraint(markerNumbers=[ground, marker]))
    mbs.Assemble()
    settings = exudyn.SimulationSettings()
    settings.timeIntegration.numberOfSteps = round(T_END / h)
    settings.timeIntegration.endTime = T_END
    settings.timeIntegration.explicit.eliminateConstraints = True
    settings.timeIntegration.explicit.useLieGroupIntegration = True
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    t = time.process_time()
    mbs.SolveDynamic(settings, solverType=exudyn.DynamicSolverType.RK44)
    seconds = time.process_time() - t
    com = np.asarray(
        mbs.GetObjectOutputBody(body["bodyNumber"], exudyn.OutputVariableType.Position, localPosition=list(COM))
    )
    return float(np.linalg.norm(com - reference)), seconds


# --- report ------------------------------------------------------------------------------------


def cost_at(points: list[tuple[float, float, str]], target: float) -> tuple[float, str] | None:
    """CPU ms for the error ``target``: log-log interpolation between the two bracketing points
    (error, ms, setting) ordered by cost; when every setting's error is below the target, the
    cheapest one's cost (an upper bound, marked "<="); None otherwise."""
    pts = sorted(points, key=lambda p: p[1])
    for (e0, c0, s0), (e1, c1, s1) in itertools.pairwise(pts):
        if e0 >= target >= e1 and e0 > e1:
            f = math.log(e0 / target) / math.log(e0 / e1)
            return math.exp(math.log(c0) + f * math.log(c1 / c0)), f"{s0} … {s1}"
    below = [p for p in pts if p[0] <= target]
    if below and all(p[0] <= target for p in pts):  # every setting does better: the cheapest one bounds the cost
        return below[0][1], f"<=, {below[0][2]}: error {below[0][0]:.1e}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    rounds = max(1, args.rounds)
    print(f"machine: {machine()}")
    print(f"MuJoCo {mujoco.__version__}" if mujoco is not None else "MuJoCo: not importable (pip install mujoco)")
    print(f"Exudyn {exudyn.__version__}" if exudyn is not None else "Exudyn: not importable (pip install exudyn)")
    reference = reference_com()
    model, top = build_heavy_top(give_accelerations=False)

    methods: dict[str, tuple[Callable[[float], tuple[float, float]], tuple[float, ...], str]] = {
        "gen-α, fixed h": (
            lambda h: gen_alpha_fixed(model, top, h, reference),
            (2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4, 5e-5, 2.5e-5, 1.25e-5),
            "h",
        ),
        "gen-α, step control": (
            lambda tol: gen_alpha_control(model, top, tol, reference),
            (1e-2, 1e-3, 1e-4, 1e-5, 1e-6),
            "tol",
        ),
        "extrapolated, fixed h": (
            lambda h: extrapolated_fixed(model, top, h, reference),
            (2e-2, 1.6e-2, 1.25e-2, 1e-2, 8e-3, 5e-3, 4e-3, 2e-3, 1e-3),
            "h",
        ),
        "extrapolated (h, h/2), fixed h": (
            lambda h: extrapolated_two_levels(model, top, h, reference),
            (1.6e-2, 1.25e-2, 1e-2, 8e-3, 6.25e-3, 5e-3, 4e-3, 2.5e-3, 1.25e-3),
            "h",
        ),
        "extrapolated, step control": (
            lambda tol: extrapolated_control(model, top, tol, reference),
            (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7),
            "tol",
        ),
        "extrapolated, step control, newton=params": (
            lambda tol: extrapolated_control(model, top, tol, reference, newton="params"),
            (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7),
            "tol",
        ),
        "extrapolated (h, h/2), predictor last": (
            lambda h: extrapolated_two_levels(model, top, h, reference, predictor="last"),
            (1.6e-2, 1.25e-2, 1e-2, 8e-3, 6.25e-3, 5e-3, 4e-3, 2.5e-3, 1.25e-3, 1e-3),
            "h",
        ),
        "extrapolated (h, h/2), fast Newton": (
            lambda h: extrapolated_two_levels(model, top, h, reference, **FAST),
            (1.6e-2, 1.25e-2, 1e-2, 8e-3, 6.25e-3, 5e-3, 4e-3, 2.5e-3, 1.25e-3, 1e-3),
            "h",
        ),
        "extrapolated (h, h/2), fast Newton, ρ∞ 0.5": (
            lambda h: extrapolated_two_levels(model, top, h, reference, rho_inf=0.5, **FAST),
            (1.6e-2, 1.25e-2, 1e-2, 8e-3, 6.25e-3, 5e-3, 4e-3, 2.5e-3, 1.25e-3, 1e-3),
            "h",
        ),
        "extrapolated, fast Newton": (
            lambda h: extrapolated_fixed(model, top, h, reference, **FAST),
            (2e-2, 1.6e-2, 1.25e-2, 1e-2, 8e-3, 5e-3, 4e-3, 2e-3, 1e-3),
            "h",
        ),
        "extrapolated, step control, fast Newton": (
            lambda tol: extrapolated_control(model, top, tol, reference, **FAST),
            (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7),
            "tol",
        ),
    }
    if mujoco is not None:
        methods["MuJoCo RK4"] = (
            lambda h: mujoco_rk4(h, reference),
            (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5),
            "h",
        )
    if exudyn is not None:
        methods["Exudyn RK44"] = (
            lambda h: exudyn_rk44(h, reference),
            (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4),
            "h",
        )
    # warm-up: compilation or cache load, first calls
    for fn, settings, _ in methods.values():
        for value in settings[:2]:
            try:
                fn(value)
            except kp.ConvergenceError:
                pass
    seconds: dict[tuple[str, float], list[float]] = {}
    errors: dict[tuple[str, float], float] = {}
    for _ in range(rounds):
        for name, (fn, settings, _) in methods.items():
            for value in settings:
                try:
                    err, cpu = fn(value)
                except kp.ConvergenceError:
                    errors[(name, value)] = math.nan
                    continue
                errors[(name, value)] = err
                seconds.setdefault((name, value), []).append(cpu)
    print(
        "\nheavy top, 1 s; centre-of-mass error at t = 1 s against DOP853; "
        f"CPU ms, median of {rounds} interleaved rounds"
    )
    costs: dict[str, list[tuple[float, str] | None]] = {}
    for name, (_, settings, label) in methods.items():
        print(f"\n{name}")
        points = []
        for value in settings:
            err = errors.get((name, value), math.nan)
            if (name, value) not in seconds:
                print(f"  {label} = {value:8.3g}   failed (Newton)")
                continue
            ms = statistics.median(seconds[(name, value)]) * 1e3
            points.append((err, ms, f"{label}={value:.3g}"))
            print(f"  {label} = {value:8.3g}   error {err:9.2e} m   {ms:9.2f} ms")
        costs[name] = [cost_at(points, target) for target in TARGETS]
    print("\nCPU ms per simulated second for the error (interpolated in log-log between the settings given):")
    header = f"  {'method':44s}" + "".join(f"{f'error {t:.0e}':>34s}" for t in TARGETS)
    print(header)
    for name, values in costs.items():
        cells = "".join(f"{(f'{c[0]:.2f} ({c[1]})' if c else 'not bracketed'):>34s}" for c in values)
        print(f"  {name:44s}{cells}")
    base = costs["gen-α, fixed h"]
    for name, values in costs.items():
        ratios = [f"{b[0] / c[0]:.2f}×" if (b and c) else "-" for b, c in zip(base, values, strict=True)]
        print(f"  gen-α fixed / {name}: {', '.join(ratios)}  (at {', '.join(f'{t:.0e}' for t in TARGETS)})")
    for h_coarse in (2e-3, 1.25e-2):  # the settings of an error of about 1e-6 and 1e-3
        compiled, total = [], []
        n_steps = sum(round(T_END * division / h_coarse) for division in extrapolation.DIVISIONS)
        for _ in range(rounds):
            cpu = 0.0
            for division in extrapolation.DIVISIONS:
                h = h_coarse / division
                sim = kp.Simulation(model, _params(h))
                start = time.process_time()
                sim.advance(round(T_END / h))
                cpu += time.process_time() - start
            compiled.append(cpu)
            total.append(extrapolated_fixed(model, top, h_coarse, reference)[1])
        steps_ms = statistics.median(compiled) * 1e3
        total_ms = statistics.median(total) * 1e3
        print(
            f"\nwhere the extrapolated scheme's cost goes (h = {h_coarse * 1e3:g} ms, median of the rounds):\n"
            f"  the {n_steps} generalized-α steps alone (advance): {steps_ms:.2f} ms "
            f"({steps_ms / n_steps * 1e3:.2f} µs per step); the whole extrapolated run: {total_ms:.2f} ms; "
            f"Python (levels, rows, combination on the group, estimate): {total_ms - steps_ms:.2f} ms"
        )
    extrapolated = [name for name in costs if name.startswith("extrapolated")]
    if mujoco is not None:
        mj = costs["MuJoCo RK4"]
        for name in extrapolated:
            ratios = [f"{c[0] / m[0]:.2f}×" if (m and c) else "-" for m, c in zip(mj, costs[name], strict=True)]
            print(f"  {name} / MuJoCo RK4: {', '.join(ratios)}  (<= 1: at most MuJoCo's cost)")
    if exudyn is not None:
        ex = costs["Exudyn RK44"]
        for name in extrapolated:
            ratios = [f"{c[0] / m[0]:.2f}×" if (m and c) else "-" for m, c in zip(ex, costs[name], strict=True)]
            print(f"  {name} / Exudyn RK44: {', '.join(ratios)}  (<= 1: at most Exudyn's cost)")


if __name__ == "__main__":
    main()
