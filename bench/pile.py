"""Benchmark: a pile of boxes dropped on the ground (issue 28), kynemapy's hard contact beside MuJoCo.

``nx × ny × nz`` cubes (0.2 m, 1 kg; default 5 × 5 × 4 = 100), each turned by a random rotation
(seeded) and placed in staggered layers 0.36 m apart, are dropped on a hard floor (μ = 0.5, e = 0)
with the hard body law between them (``set_body_contact(law="hard")``), h = 1 ms.  Printed:

* the deepest penetration over the whole run, between any two boxes and into the floor, at the
  end of every step (the issue's target: no penetration above 1e-6 m);
* the drift at rest: the largest displacement of any box over the last ``--rest`` seconds, and
  the largest speed at the end; the time to rest: the end of the last step in which some box
  moved by more than 1e-9 m;
* how the frictional problems were solved: the steps whose solves needed the nonsmooth Newton
  finisher, those with an island solved exactly on friction pyramids (sticking), and those
  finished by the exact normal solve with the friction held;
* cost: CPU time per body-step (``time.process_time`` around the steps; the model is built
  before the clock), and per step over the whole run and over the last second;
* MuJoCo (optional, ``pip install mujoco``) on the same pile (the same boxes, poses, floor and
  friction; its soft contact with default solver parameters, elliptic cones, h = 1 ms, Euler):
  its cost per body-step and its deepest penetration (MuJoCo's contact is soft: its boxes sink
  into each other by design).

BLAS runs on one thread (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set
to 1 unless given): the contact solver's dense programs (scipy's ``nnls``, numpy's ``lstsq``) ran
slower on two threads on the 2-core machine (100 boxes at rest: 1.35 s a step of wall time and
1.82 s of CPU against 1.16 s and 1.16 s, 2026-11-29), and MuJoCo steps on one thread too.

The 100-box run takes about an hour (3 s: 64 minutes of one core, 2026-11-30): ``--checkpoint
FILE`` saves the pile's state, the points the hard body law holds as touching
(``HardBodies.touching_rows``, the contact kind's memory, which a result file keeps with its
restart data too: docs/contact.md) and the figures so far every 100 steps (``.npz``), and
``--resume FILE`` goes on from such a file, bit for bit (the cost figures are then those of the
steps run since).

Run:  python bench/pile.py [--nx 5 --ny 5 --nz 4] [--seconds 2.0] [--rest 0.5]
                           [--checkpoint pile.npz] [--resume pile.npz]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# one BLAS thread (see above), before numpy loads its BLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

import kynemapy as kp

try:
    import mujoco
except ImportError:  # MuJoCo is optional
    mujoco = None

G = 9.81
HALF = 0.1  # m
MASS = 1.0  # kg
MU = 0.5
H = 1e-3  # s
#: the hard body law's record of the points touching at a step's start in checkpoints written
#: before ``HardBodies.touching_rows`` (read by ``--resume``)
TOUCHING = ("keys", "pair", "local", "local_a")


def poses(nx: int, ny: int, nz: int, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each box's centre (3,) [m] and rotation matrix (3, 3)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    out = []
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                centre = np.array(
                    [
                        (2.8 * i + (1.4 if k % 2 else 0.0) + rng.uniform(-0.1, 0.1)) * HALF,
                        (2.8 * j + rng.uniform(-0.1, 0.1)) * HALF,
                        (1.8 + 3.6 * k) * HALF + 0.02,
                    ]
                )
                out.append((centre, Rotation.from_rotvec(rng.normal(size=3) * 0.1).as_matrix()))
    return out


def kynemapy_pile(boxes: list[tuple[np.ndarray, np.ndarray]]) -> kp.Simulation:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    inertia = MASS * (2 * HALF) ** 2 / 6
    for centre, rot in boxes:
        node = b.add_node(position=tuple(centre))
        b.add_mass(node, mass=MASS, inertia=(inertia, inertia, inertia))
        b.add_box(node, (HALF, HALF, HALF), axes=rot)
    b.add_ground_plane(law="hard", friction=MU)
    b.set_body_contact(law="hard", friction=MU)
    return kp.Simulation(b.build(), kp.StepParameters(h=H, rho_inf=0.9))


def deepest(sim: kp.Simulation) -> float:
    """The deepest penetration now [m] (0 when none): boxes into boxes and into the floor."""
    bodies = sim.joint_stops.bodies
    rows, _, _ = bodies.query(sim.state.q)
    gap, _, _ = sim.joint_stops.contacts.geometry(sim.state.q)
    return max(0.0, -float(np.min(rows[:, 9], initial=0.0)), -float(np.min(gap, initial=0.0)))


def mujoco_pile(boxes: list[tuple[np.ndarray, np.ndarray]], steps: int) -> tuple[float, float]:
    """MuJoCo's cost per step [s] and its deepest penetration [m] over the run."""
    from scipy.spatial.transform import Rotation

    inertia = MASS * (2 * HALF) ** 2 / 6
    bodies = []
    for centre, rot in boxes:
        x, y, z, w = Rotation.from_matrix(rot).as_quat()
        bodies.append(
            f'<body pos="{centre[0]} {centre[1]} {centre[2]}" quat="{w} {x} {y} {z}"><freejoint/>'
            f'<inertial pos="0 0 0" mass="{MASS}" diaginertia="{inertia} {inertia} {inertia}"/>'
            f'<geom type="box" size="{HALF} {HALF} {HALF}" friction="{MU} 0 0"/></body>'
        )
    xml = (
        f'<mujoco><option timestep="{H}" cone="elliptic"/><worldbody>'
        f'<geom type="plane" size="50 50 .1" friction="{MU} 0 0"/>{"".join(bodies)}</worldbody></mujoco>'
    )
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    worst = 0.0
    t = time.process_time()
    for _ in range(steps):
        mujoco.mj_step(model, data)
        if data.ncon:
            worst = max(worst, -float(np.min(data.contact.dist[: data.ncon])))
    return (time.process_time() - t) / steps, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nx", type=int, default=5)
    ap.add_argument("--ny", type=int, default=5)
    ap.add_argument("--nz", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2.0, help="simulated time (default 2 s)")
    ap.add_argument("--rest", type=float, default=0.5, help="the last seconds checked for drift (default 0.5)")
    ap.add_argument("--checkpoint", help="save the state and the figures so far every 100 steps (.npz)")
    ap.add_argument("--resume", help="go on from a --checkpoint file of the same pile")
    args = ap.parse_args()
    boxes = poses(args.nx, args.ny, args.nz)
    n = len(boxes)
    steps = round(args.seconds / H)
    rest_from = steps - round(args.rest / H)
    print(f"machine: {machine()}")
    print(f"{n} boxes, h = {H * 1e3:g} ms, {args.seconds:g} s; μ = {MU}")
    sim = kynemapy_pile(boxes)
    worst = 0.0
    costs = []
    q_rest = None
    moving_until = 0.0
    newton = stick = held = 0
    first = 0
    if args.resume:
        saved = np.load(args.resume)
        if saved["q"].shape != sim.state.q.shape:
            raise SystemExit(f"--resume: {args.resume} holds a pile of {saved['q'].shape[0]} boxes, not {n}")
        sim.state.assign(kp.State(*(saved[name] for name in kp.State._fields)))
        if "touching" in saved:
            sim.joint_stops.bodies.load_touching(saved["touching"])
        else:  # an earlier checkpoint's four arrays
            sim.joint_stops.bodies._touching = {name: saved["touching_" + name] for name in TOUCHING}
        first = int(saved["step"][0])
        worst, moving_until = float(saved["worst"]), float(saved["moving_until"])
        newton, stick, held = (int(saved[name]) for name in ("newton", "stick", "held"))
        q_rest = saved["q_rest"] if saved["q_rest"].size else None
        if first == rest_from:  # resumed where the rest measured begins: the drift from here
            q_rest = sim.state.q.copy()
        print(f"resumed from {args.resume} at t = {first * H:.3f} s")
    for k in range(first, steps):
        q_before = sim.state.q[:, :3].copy()
        t = time.process_time()
        sim.step()
        costs.append(time.process_time() - t)
        worst = max(worst, deepest(sim))
        if np.abs(sim.state.q[:, :3] - q_before).max() > 1e-9:
            moving_until = (k + 1) * H
        newton += sim.joint_stops.bodies.newton_solves > 0
        stick += sim.joint_stops.bodies.sticking_solves > 0
        held += sim.joint_stops.bodies.held_friction > 0
        if k + 1 == rest_from:
            q_rest = sim.state.q.copy()
        if (k + 1) % 100 == 0:
            print(
                f"  t = {(k + 1) * H:5.2f} s  deepest so far {worst:.3e} m  "
                f"{1e3 * float(np.mean(costs[-100:])):8.2f} ms/step",
                flush=True,
            )
            if args.checkpoint:
                figures = {"worst": worst, "moving_until": moving_until, "newton": newton, "stick": stick, "held": held}
                state = {name: getattr(sim.state, name) for name in kp.State._fields}
                rest = q_rest if q_rest is not None else np.zeros(0)
                touching = sim.joint_stops.bodies.touching_rows()
                np.savez(args.checkpoint + ".tmp.npz", q_rest=rest, touching=touching, **state, **figures)
                os.replace(args.checkpoint + ".tmp.npz", args.checkpoint)
    if not costs:
        raise SystemExit(f"nothing to run: the pile is at t = {first * H:.3f} s already (--seconds {args.seconds:g})")
    drift = float(np.max(np.abs(sim.state.q[:, :3] - q_rest[:, :3]))) if q_rest is not None else float("nan")
    last = costs[-round(1.0 / H) :]
    print(f"kynemapy hard: deepest penetration {worst:.3e} m (target <= 1e-6 m)")
    print(
        f"  drift over the last {args.rest:g} s {drift:.3e} m; largest speed at the end {np.abs(sim.state.v).max():.3e}"
    )
    print(f"  at rest from t = {moving_until:.3f} s (no box moving by more than 1e-9 m in a step after it)")
    print(
        f"  steps with a Newton finish {newton}, with an island solved on the pyramids {stick}, "
        f"with the friction held {held} (of {steps})"
    )
    print(
        f"  cost {1e6 * float(np.mean(costs)) / n:.1f} µs per body-step over the {len(costs)} steps run here, "
        f"{1e6 * float(np.mean(last)) / n:.1f} over the last {len(last) * H:g} s "
        f"({1e3 * float(np.mean(costs)):.2f} ms/step)"
    )
    if mujoco is not None:
        per_step, mj_worst = mujoco_pile(boxes, steps)
        print(
            f"MuJoCo {mujoco.__version__} (Euler, soft contact): {1e6 * per_step / n:.2f} µs per body-step, "
            f"deepest penetration {mj_worst:.3e} m"
        )


if __name__ == "__main__":
    main()
