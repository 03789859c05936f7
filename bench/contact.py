"""Benchmark: contact against closed forms, kynemapy's hard and compliant contact beside MuJoCo's and Exudyn's.

Issue 28's cases on a ground plane, each with a closed-form answer for rigid bodies with Coulomb
friction (g = 9.81 m/s², the plane z = 0; an incline is the plane under gravity turned by θ about
y, which is the same problem):

* ``incline, slides``: a 0.2 m cube of 1 kg released at rest on a 30° incline, μ = 0.3 <
  tan θ: it slides with a = g (sin θ − μ cos θ); the quantity is its travel at t = 1 s,
  exact ``a / 2``.
* ``incline, sticks``: the same cube with μ = 0.7 > tan θ: exact travel 0.
* ``sliding ball``: a sphere (r = 0.1 m, 1 kg, solid) thrown at v0 = 2 m/s without spin, μ = 0.3:
  friction brings it to rolling at v = 5/7 v0 at t* = 2 v0 / (7 μ g); the quantity is the
  travel at t = 1 s, exact ``v0 t* − μ g t*² / 2 + 5/7 v0 (1 − t*)``.
* ``rolling ball``: the sphere released on a 30° incline with μ = 0.5 (> 2/7 tan θ: no slip):
  a = 5/7 g sin θ; travel at t = 1 s, exact ``a / 2``.
* ``bounce``: the sphere dropped from rest 1 m above the plane, elastic (no damping): the
  quantity is the height of its apex after the first bounce, exact 1 m (energy conserved; the
  time in contact shifts the apex's time, not its height), computed as ``z + v_z²/2g`` from the
  state at t = 0.66 s, in the free flight after the bounce (at 0.45 s), so that no engine's error
  is the sampling of its trajectory on its step grid (up to g h²/8: 2e-5 m at h = 4 ms).

Error: ``|quantity − exact|`` [m].  Cost: CPU time per simulated second [ms]
(``time.process_time``, model and simulation made before the clock starts; median of
``--rounds`` interleaved rounds after a warm-up).  Each engine runs each case at several step
sizes; the table gives error and cost per step size, and per case the error each engine reaches
at the cost of kynemapy's cheapest run that is at least as accurate, interpolated in log-log
between the peer's two bracketing runs (the issue's "10× more accurate at equal cost").

Engines:

* kynemapy hard: nonsmooth contact (``add_ground_plane(law="hard")``, :mod:`kynemapy.run.hard_contact`):
  no penetration, Newton's restitution law (e = 1 for the elastic bounce, 0 otherwise), exact
  Coulomb friction; generalized-α with the same ρ∞ as below, ``sim.step()`` for the bounce and
  ``run(n_steps)`` otherwise.
* kynemapy: compliant contact (``ModelBuilder.add_ground_plane``: linear spring k = 1e6 N/m, no
  damping, regularized Coulomb friction with its default slip speed v_s = 1e-3 m/s, which
  docs/contact.md's rule ``μ f_n h / (m v_s) <~ 1`` allows at these steps), generalized-α, ρ∞ =
  1 for the elastic bounce and 0.9 otherwise, ``run(n_steps, adaptive=True)`` (a step whose
  Newton iteration fails is halved; the halvings are in the cost).
* MuJoCo (optional: ``pip install mujoco``): its soft contact with default solver parameters,
  elliptic friction cones, ``impratio`` 10 (its recommendation against slip), Euler and RK4 (the
  bounce: ``solref`` with zero damping, ``-k/m 0``, its spring-damper form).
* Exudyn (optional: ``pip install exudyn``): its penalty connector ``ObjectContactSphereTriangle``
  (``MainSystem.CreateSphereTriangleContact``) between the body and one large ground triangle: the
  sphere itself, and for the cube a sphere of radius 1 mm at each of its four lower corners (the points
  that touch in these scenes; its contacts pair spheres with spheres or triangles, nothing box-shaped).
  Its ``GeneralContact`` (spheres against a triangle mesh), tried for the balls, was slower and less
  accurate here (errors 1.3e-4 m sliding ball, 7.6e-5 m rolling ball at h = 1e-4, against 4.8e-5 and
  3.0e-5 m).  Linear spring k = 1e6 N/m per contact point (the bodies start at their static
  penetration), regularized Coulomb friction (``dynamicFriction`` μ, ``frictionProportionalZone`` = v_s
  = 1e-3 m/s, as kynemapy's), no damping for the elastic bounce and 100 N s/m per contact point
  otherwise: without it the cube chatters and hops, gaining energy (0.4 m of travel on the incline where
  it should stick); ζ ≈ 0.1 for the cube's normal mode, 0.05 for the sphere's, and it does not act in
  the steady motions.  Integrators: "GA", its default implicit generalized-α (ρ∞ 0.9, 1 for the bounce;
  Euler-parameter nodes, modified Newton), and "RK44", its explicit Runge–Kutta 4 (rotation-vector
  nodes, which its Lie-group explicit integration needs).  Both keep Exudyn's default step control: a
  step is cut to the size the contact recommends when it closes or opens (which is why its bounce is
  accurate at coarse steps), and (GA) reduced when Newton fails; the cost includes it.  Cost:
  ``mbs.SolveDynamic`` with file output and printing off, its solver set-up (about 0.4 ms for GA)
  included, as its step-by-step interface is slower.  As h falls, Exudyn converges to the answer of its
  regularized friction law, not to the closed form: the cube creeps at v_s tan θ / μ on the sticking
  incline (8.3e-4 m), the sliding cube gains about 4e-4 m while its slip is below v_s at the start
  (3.2e-4 m in the 1D regularized model), and the balls end 4.8e-5 m (sliding) and 3.0e-5 m (rolling)
  off: the friction's lever arm is shortened by part of the static penetration (1e-5 m), and the rolling
  ball's slip starts below v_s (9e-5 m in the 1D regularized model); coarse steps can step over the
  regularized start and land closer (the sliding cube at h >= 1e-3).

Run:  python bench/contact.py [--rounds R] [--cases NAME ...]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

from _machine import machine

import kynemapy as kp

try:
    import mujoco
except ImportError:  # MuJoCo is optional
    mujoco = None

try:
    import exudyn
    from exudyn.rigidBodyUtilities import InertiaCuboid, InertiaSphere
except ImportError:  # Exudyn is optional
    exudyn = None

G = 9.81  # m/s²
THETA = math.radians(30.0)
MASS = 1.0  # kg
HALF = 0.1  # m, the cube's half edge
RADIUS = 0.1  # m, the sphere's radius
STIFFNESS = 1e6  # N/m
SLIP = 1e-3  # m/s
T_END = 1.0  # s
EXUDYN_DAMPING = 100.0  # N s/m per contact point, Exudyn's scenes other than the bounce
EXUDYN_CORNER = 1e-3  # m, the radius of the spheres at the cube's corners in Exudyn


@dataclass(frozen=True)
class Case:
    """One scene: its shape, friction, gravity turn, initial velocity and the exact answer."""

    name: str
    shape: str  # "box" or "sphere"
    mu: float
    theta: float  # rad, the incline
    v0: float  # m/s along x
    drop: float  # m, the height of the lowest point above the plane at t = 0
    exact: float  # m
    t_end: float  # s


def _sliding_ball_travel(v0: float, mu: float, t: float) -> float:
    t_star = 2.0 * v0 / (7.0 * mu * G)
    if t <= t_star:
        return v0 * t - 0.5 * mu * G * t * t
    return v0 * t_star - 0.5 * mu * G * t_star**2 + 5.0 / 7.0 * v0 * (t - t_star)


def _bounce_end() -> float:
    """0.66 s: the ball (falling 1 m) bounces at 0.4515 s and is in free flight, rising, until its
    apex at 0.903 s; a multiple of every step size of the benchmark."""
    return 0.66


def apex(z: float, vz: float) -> float:
    """The apex height [m] of a ball in free flight whose lowest point is at ``z`` [m], rising at ``vz``
    [m/s]: ``z + vz²/2g`` (no sampling of the trajectory: the state at one time in the flight)."""
    return z + vz * vz / (2.0 * G)


CASES = (
    Case("incline, slides", "box", 0.3, THETA, 0.0, 0.0, 0.5 * G * (math.sin(THETA) - 0.3 * math.cos(THETA)), T_END),
    Case("incline, sticks", "box", 0.7, THETA, 0.0, 0.0, 0.0, T_END),
    Case("sliding ball", "sphere", 0.3, 0.0, 2.0, 0.0, _sliding_ball_travel(2.0, 0.3, T_END), T_END),
    Case("rolling ball", "sphere", 0.5, THETA, 0.0, 0.0, 0.5 * 5.0 / 7.0 * G * math.sin(THETA), T_END),
    Case("bounce", "sphere", 0.0, 0.0, 0.0, 1.0, 1.0, _bounce_end()),
)


def _gravity(theta: float) -> tuple[float, float, float]:
    return (G * math.sin(theta), 0.0, -G * math.cos(theta))


def _inertia(shape: str) -> float:
    return MASS * (2.0 * HALF) ** 2 / 6.0 if shape == "box" else 0.4 * MASS * RADIUS**2


def _size(shape: str) -> float:
    return HALF if shape == "box" else RADIUS


# ---------------------------------------------------------------------------------- kynemapy
def kynemapy_run(case: Case, h: float, hard: bool = False) -> Callable[[], tuple[float, float]]:
    """A run of ``case`` at step ``h`` (``hard``: the nonsmooth law, else the compliant one):
    returns a function that simulates and gives (quantity, CPU s)."""
    b = kp.ModelBuilder(gravity=_gravity(case.theta))
    weight = MASS * G * math.cos(case.theta)
    corners = 4 if case.shape == "box" else 1
    sink = 0.0 if hard else weight / (corners * STIFFNESS)  # static penetration: start at rest on the plane
    z0 = _size(case.shape) + (case.drop if case.drop > 0.0 else -sink)
    node = b.add_node(position=(0.0, 0.0, z0), velocity=(case.v0, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(node, mass=MASS, inertia=(_inertia(case.shape),) * 3)
    if case.shape == "box":
        b.add_box(node, (HALF, HALF, HALF))
    else:
        b.add_sphere(node, RADIUS)
    if hard:
        restitution = 1.0 if case.name == "bounce" else 0.0
        b.add_ground_plane((0.0, 0.0, 1.0), 0.0, law="hard", restitution=restitution, friction=case.mu)
    else:
        b.add_ground_plane((0.0, 0.0, 1.0), 0.0, stiffness=STIFFNESS, friction=case.mu, slip_velocity=SLIP)
    model = b.build()
    rho = 1.0 if case.name == "bounce" else 0.9
    params = kp.StepParameters(h=h, rho_inf=rho, max_iter=30)
    n = round(case.t_end / h)

    def go() -> tuple[float, float]:
        sim = kp.Simulation(model, params)
        t = time.process_time()
        if hard:
            sim.run(n_steps=n)
        else:
            sim.run(n_steps=n, adaptive=True)
        cost = time.process_time() - t
        if case.name == "bounce":  # q holds the displacement from the start
            return apex(z0 + float(sim.state.q[node, 2]) - RADIUS, float(sim.state.v[node, 2])), cost
        return float(sim.state.q[node, 0]), cost

    return go


# ---------------------------------------------------------------------------------- MuJoCo
def mujoco_run(case: Case, h: float, integrator: str) -> Callable[[], tuple[float, float]]:
    """The same scene in MuJoCo (its soft contact), ``integrator`` "Euler" or "RK4"."""
    gx, gy, gz = _gravity(case.theta)
    size = _size(case.shape)
    geom = f'type="box" size="{HALF} {HALF} {HALF}"' if case.shape == "box" else f'type="sphere" size="{RADIUS}"'
    inertia = _inertia(case.shape)
    contact = f'solref="{-STIFFNESS / MASS} 0"' if case.name == "bounce" else ""
    xml = f"""<mujoco><option timestep="{h}" gravity="{gx} {gy} {gz}" integrator="{integrator}"
 cone="elliptic" impratio="10"/>
<worldbody><geom type="plane" size="50 50 .1" friction="{case.mu} 0 0" {contact}/>
<body pos="0 0 {size + case.drop}"><freejoint/>
<inertial pos="0 0 0" mass="{MASS}" diaginertia="{inertia} {inertia} {inertia}"/>
<geom {geom} friction="{case.mu} 0 0" {contact} contype="1" conaffinity="1"/></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    n = round(case.t_end / h)

    def go() -> tuple[float, float]:
        data = mujoco.MjData(model)
        data.qvel[0] = case.v0
        mujoco.mj_forward(model, data)
        t = time.process_time()
        for _ in range(n):
            mujoco.mj_step(model, data)
        cost = time.process_time() - t
        if case.name == "bounce":
            return apex(float(data.qpos[2]) - RADIUS, float(data.qvel[2])), cost
        return float(data.qpos[0]), cost

    return go


# ---------------------------------------------------------------------------------- Exudyn
def exudyn_run(case: Case, h: float, integrator: str) -> Callable[[], tuple[float, float]]:
    """The same scene in Exudyn (its penalty sphere-triangle contact), ``integrator`` "GA" or "RK44"."""
    sc = exudyn.SystemContainer()
    mbs = sc.AddSystem()
    explicit = integrator == "RK44"
    corners = 4 if case.shape == "box" else 1
    sink = MASS * G * math.cos(case.theta) / (corners * STIFFNESS)  # static penetration: start at rest on the plane
    z0 = _size(case.shape) + (case.drop if case.drop > 0.0 else -sink)
    if case.shape == "box":
        inertia = InertiaCuboid(MASS / (2.0 * HALF) ** 3, [2.0 * HALF] * 3)
        radius = EXUDYN_CORNER
        spheres = [[sx * HALF, sy * HALF, radius - HALF] for sx in (-1.0, 1.0) for sy in (-1.0, 1.0)]
    else:
        inertia = InertiaSphere(MASS, RADIUS)
        radius = RADIUS
        spheres = [[0.0, 0.0, 0.0]]
    body = mbs.CreateRigidBody(
        referencePosition=[0.0, 0.0, z0],
        initialVelocity=[case.v0, 0.0, 0.0],
        inertia=inertia,
        gravity=list(_gravity(case.theta)),
        # the explicit solvers integrate rotations on the Lie group, which needs rotation-vector nodes
        nodeType=exudyn.NodeType.RotationRotationVector if explicit else exudyn.NodeType.RotationEulerParameters,
        show=False,
        returnDict=True,
    )
    ground = mbs.CreateGround(show=False)
    plane = exudyn.Vector3DList([[-10.0, -10.0, 0.0], [40.0, -10.0, 0.0], [-10.0, 40.0, 0.0]])  # one triangle
    damping = 0.0 if case.name == "bounce" else EXUDYN_DAMPING
    for local in spheres:
        mbs.CreateSphereTriangleContact(
            itemNumbers=[body["bodyNumber"], ground],
            localPosition0=local,
            sphereRadius=radius,
            trianglePoints=plane,
            includeEdges=0,
            dynamicFriction=case.mu,
            frictionProportionalZone=SLIP,
            contactStiffness=STIFFNESS,
            contactDamping=damping,
            impactModel=0,  # the linear spring-damper
        )
    node = body["nodeNumber"]
    mbs.Assemble()
    settings = exudyn.SimulationSettings()
    settings.solution.file.write = False
    settings.show.globalTimers = False
    settings.timeIntegration.verboseMode = 0
    settings.timeIntegration.endTime = case.t_end
    settings.timeIntegration.numberOfSteps = round(case.t_end / h)
    settings.timeIntegration.generalizedAlpha.spectralRadius = 1.0 if case.name == "bounce" else 0.9
    settings.timeIntegration.solverType = (
        exudyn.DynamicSolverType.RK44 if explicit else exudyn.DynamicSolverType.GeneralizedAlpha
    )

    def go() -> tuple[float, float]:
        # SolveDynamic starts from the initial state each call; its set-up (about 0.4 ms for GA) is in the
        # clock, since the step-by-step interface (InitializeSolver, SolveSteps) is slower than this
        t = time.process_time()
        mbs.SolveDynamic(settings)
        cost = time.process_time() - t
        if case.name == "bounce":
            z = float(mbs.GetNodeOutput(node, exudyn.OutputVariableType.Position)[2]) - RADIUS
            return apex(z, float(mbs.GetNodeOutput(node, exudyn.OutputVariableType.Velocity)[2])), cost
        return float(mbs.GetNodeOutput(node, exudyn.OutputVariableType.Position)[0]), cost

    return go


# ---------------------------------------------------------------------------------- report
def at_cost(points: list[tuple[float, float]], cost: float) -> float | None:
    """The error at ``cost`` [ms/s] interpolated in log-log between bracketing (cost, error) points."""
    pts = sorted(points)
    for (c0, e0), (c1, e1) in itertools.pairwise(pts):
        if c0 <= cost <= c1 and e0 > 0.0 and e1 > 0.0:
            w = math.log(cost / c0) / math.log(c1 / c0) if c1 > c0 else 0.0
            return math.exp(math.log(e0) + w * (math.log(e1) - math.log(e0)))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, median kept (default 3)")
    parser.add_argument("--cases", nargs="*", default=None, help="case names (default all)")
    args = parser.parse_args()
    cases = [c for c in CASES if args.cases is None or c.name in args.cases]
    steps = {"kynemapy hard": (4e-3, 2e-3, 1e-3, 5e-4), "kynemapy": (2e-3, 1e-3, 5e-4, 2.5e-4)}
    if mujoco is not None:
        steps["MuJoCo Euler"] = (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4)
        steps["MuJoCo RK4"] = (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4)
    if exudyn is not None:
        steps["Exudyn GA"] = (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4)
        steps["Exudyn RK44"] = (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4)
    failures: tuple[type[BaseException], ...] = (kp.ConvergenceError,)
    if exudyn is not None:
        failures += (exudyn.SolverError,)
    print(f"machine: {machine()}")
    versions = [f"kynemapy {kp.__version__}"]
    if mujoco is not None:
        versions.append(f"MuJoCo {mujoco.__version__}")
    if exudyn is not None:
        versions.append(f"Exudyn {exudyn.__version__}")
    print(", ".join(versions))
    print(f"k = {STIFFNESS:g} N/m, v_s = {SLIP:g} m/s; CPU ms per simulated s, median of {args.rounds}\n")
    for case in cases:
        runs: dict[tuple[str, float], Callable[[], tuple[float, float]]] = {}
        for engine, hs in steps.items():
            for h in hs:
                if engine.startswith("kynemapy"):
                    runs[(engine, h)] = kynemapy_run(case, h, hard=engine == "kynemapy hard")
                elif engine.startswith("MuJoCo"):
                    runs[(engine, h)] = mujoco_run(case, h, engine.split()[1])
                else:
                    runs[(engine, h)] = exudyn_run(case, h, engine.split()[1])
        failed: dict[tuple[str, float], str] = {}
        for key, go in runs.items():  # warm-up (compilation, caches); a run that fails is reported
            try:
                go()
            except failures as err:
                failed[key] = str(err).split(";")[0]
        for key in failed:
            del runs[key]
        costs: dict[tuple[str, float], list[float]] = {k: [] for k in runs}
        values: dict[tuple[str, float], float] = {}
        for _ in range(max(1, args.rounds)):
            for key, go in runs.items():
                value, cpu = go()
                costs[key].append(cpu / case.t_end * 1e3)
                values[key] = value
        print(f"{case.name}: exact {case.exact:.9f} m")
        for (engine, h), why in failed.items():
            print(f"  {engine:<13s} h = {h:7.1e} s  FAILED: {why}")
        table: dict[str, list[tuple[float, float]]] = {}
        for (engine, h), value in values.items():
            err = abs(value - case.exact)
            cost = statistics.median(costs[(engine, h)])
            table.setdefault(engine, []).append((cost, err))
            print(f"  {engine:<13s} h = {h:7.1e} s  value {value:.9f}  error {err:9.2e} m  cost {cost:8.2f} ms/s")
        for ours_name in ("kynemapy hard", "kynemapy"):
            ours = table.get(ours_name, [])
            for engine, points in table.items():
                if engine.startswith("kynemapy"):
                    continue
                ratios = []
                for cost, err in ours:
                    theirs = at_cost(points, cost)
                    if theirs is not None:
                        ratio = f"{theirs / err:.3g}×" if err > 0.0 else "∞ (exact)"
                        ratios.append(f"{ratio} at {cost:.2f} ms/s")
                said = ", ".join(ratios) if ratios else "no overlap in cost"
                print(f"  {engine} error ÷ {ours_name} error at equal cost: {said}")
        print()


if __name__ == "__main__":
    main()
