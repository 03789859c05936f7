"""An N-link spherical pendulum chain: N rods on ball joints swirling under gravity.

N identical rods (0.2 m, 0.2 kg, radius 1 cm; N = 10 by default) hang from the ground and from
each other on ball joints.  They start 40° and 70° (alternately) from the downward vertical,
fanned out 25° apart in azimuth, each turning at 1 rad/s about the vertical (less its own
axis); h = 1 ms.  Checked independently against a reduced-coordinate reference (N quaternions
and N angular velocities, Kane's equations, scipy DOP853 at rtol = atol = 1e-10;
``_references.BallChain``):

* the total energy (relative to the largest kinetic energy), conserved by the exact solution;
* the constraint drift: the gap of every ball joint, the rods' ends as carried by each rod [m];
* the trajectory: the orientation error of every rod [rad] and the position of the chain's tip [m];

with ρ∞ = 1 (no numerical damping) over 0.3 s, and with ρ∞ = 0.9 over 1 s, through the whip
near 0.42 s where the rods turn at up to 50 rad/s and the pivot force jumps to 70 N.  With
ρ∞ = 1, and with ρ∞ = 0.99, the multipliers' undamped oscillation (see
examples/double_pendulum.py) blows up in that whip and the Newton iteration fails at 0.41–0.43 s
whether h = 1 ms or 0.5 ms; ρ∞ = 0.95 and 0.9 run through it.  Kynema's tangent runs the
ρ∞ = 0.9 steps too; the iterations per step of both tangents are printed.

Run:  python examples/pendulum_chain.py [N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _references as ref

import kynemapy as kp

LENGTH, MASS, RADIUS = 0.2, 0.2, 0.01
G = np.array([0.0, 0.0, -9.81])
H = 1e-3
N_LINKS, N_QUICK = 10, 5
T_END, T_END_RHO1, T_QUICK = 1.0, 0.3, 0.5
EVERY = 5  # steps between checks
TOL = {"atol": 1e-10, "rtol": 1e-10}

#: bounds on the measured numbers of :func:`run` for the default (10 links, 1 s) and quick (5 links,
#: 0.5 s) runs, h = 1 ms: the joints hold to the Newton tolerance (measured ≤ 3e-15 m); energy and
#: trajectory errors are second order (10 links: ρ∞ = 1, 0.3 s: energy 1.8e-4, 4.5e-4 rad, tip
#: 4.6e-6 m; ρ∞ = 0.9, 1 s: 4.7e-4, 4.2e-3 rad, 4.2e-4 m; a quarter of each at h = 0.5 ms;
#: 5 links: tip 1.6e-5 m at ρ∞ = 1), margin about 3
BOUNDS = {
    "ρ∞=1: energy error / max kinetic energy": 5e-4,
    "ρ∞=1: ball-joint gap [m]": 1e-9,
    "ρ∞=1: rod orientation error [rad]": 1.5e-3,
    "ρ∞=1: tip position error [m]": 5e-5,
    "ρ∞=0.9: energy error / max kinetic energy": 1.5e-3,
    "ρ∞=0.9: ball-joint gap [m]": 1e-9,
    "ρ∞=0.9: rod orientation error [rad]": 1.5e-2,
    "ρ∞=0.9: tip position error [m]": 1.5e-3,
    "ρ∞=0.9, Kynema's tangent: ball-joint gap [m]": 1e-9,
    "ρ∞=0.9, Kynema's tangent: rod orientation error [rad]": 1.5e-2,
}


def initial_conditions(n_links: int) -> tuple[np.ndarray, np.ndarray]:
    """Body quaternions (N, 4) (body x along the rod) and world angular velocities (N, 3) [rad/s]."""
    quats, omegas = [], []
    for i in range(n_links):
        polar, azimuth = np.radians(40.0 + 30.0 * (i % 2)), np.radians(25.0 * i)
        q = ref.quat_mul(ref.quat_about((0, 0, 1), azimuth), ref.quat_about((0, 1, 0), np.pi / 2 - polar))
        axis = ref.quat_matrix(q) @ np.array([1.0, 0.0, 0.0])
        w = np.array([0.0, 0.0, 1.0])
        quats.append(q)
        omegas.append(w - (w @ axis) * axis)
    return np.array(quats), np.array(omegas)


def build(n_links: int) -> tuple[kp.Model, ref.BallChain, list[int], list[int]]:
    """The model, its reference, the node ids and the joint ids."""
    chain = ref.rod_chain(n_links, LENGTH, MASS, RADIUS, gravity=G)
    q0, w0 = initial_conditions(n_links)
    x0, joints = chain.positions(q0)
    v0 = chain.velocities(q0, w0)
    b = kp.ModelBuilder(gravity=G)
    nodes, ids = [], []
    for i in range(n_links):
        n = b.add_node(position=x0[i], orientation=q0[i], velocity=np.concatenate([v0[i], w0[i]]))
        b.add_mass(n, mass=MASS, inertia=ref.rod_inertia(MASS, LENGTH, RADIUS))
        ids.append(b.add_ball_joint(nodes[-1] if nodes else kp.GROUND, n, joints[i]))
        nodes.append(n)
    return b.build(), chain, nodes, ids


def simulate(
    n_links: int, t_end: float, reference: tuple[np.ndarray, np.ndarray], rho_inf: float, exact: bool, h: float = H
) -> dict[str, float]:
    """One run: energy, joint gaps, orientation and tip errors against the reference sampled every EVERY steps."""
    model, chain, nodes, _ = build(n_links)
    q_ref, _ = reference
    rod_ref = ref.quat_matrix(q_ref)  # (T, N, 3, 3)
    tip_ref = np.array([chain.positions(q)[1][-1] for q in q_ref])
    inertia = ref.rod_inertia(MASS, LENGTH, RADIUS)
    params = kp.StepParameters(h=h, rho_inf=rho_inf, max_iter=20, geometric_stiffness=exact, **TOL)
    sim = kp.Simulation(model, params)
    n_steps = EVERY * round(t_end / (h * EVERY))
    err = dict.fromkeys(("gap", "orientation", "tip"), 0.0)
    energy, kinetic, iterations = [], [], []
    for j, k in enumerate(range(0, n_steps + 1, EVERY)):
        if k:
            iterations.extend(sim.advance(EVERY))
        e = ke = 0.0
        previous_end = chain.pivot
        for i, n in enumerate(nodes):
            x, rot = ref.body_pose(model, sim.state.q, n)
            err["orientation"] = max(err["orientation"], float(ref.rotation_angle(rot, rod_ref[j, i])))
            start = x - rot @ chain.com[i]
            err["gap"] = max(err["gap"], float(np.linalg.norm(start - previous_end)))
            previous_end = x + rot @ (chain.link[i] - chain.com[i])
            e += ref.rigid_energy(MASS, inertia, rot, x, sim.state.v[n], G)
            ke += ref.rigid_energy(MASS, inertia, rot, x, sim.state.v[n], (0.0, 0.0, 0.0))
        err["tip"] = max(err["tip"], float(np.linalg.norm(previous_end - tip_ref[j])))
        energy.append(e)
        kinetic.append(ke)
    err["energy"] = float(np.abs(np.array(energy) - energy[0]).max() / max(kinetic))
    err["iterations"] = float(np.mean(iterations))
    return err


def run(quick: bool = False, n_links: int | None = None, h: float = H) -> dict[str, float]:
    """The measured numbers (keys of :data:`BOUNDS` and informational ones)."""
    n_links = (N_QUICK if quick else N_LINKS) if n_links is None else n_links
    t1, t2 = (T_END_RHO1, T_QUICK) if quick else (T_END_RHO1, T_END)
    chain = ref.rod_chain(n_links, LENGTH, MASS, RADIUS, gravity=G)
    n_steps = EVERY * round(t2 / (h * EVERY))
    q_ref, w_ref = chain.solve(
        *initial_conditions(n_links), h * np.arange(0, n_steps + 1, EVERY), rtol=1e-10, atol=1e-10
    )
    m = EVERY * round(t1 / (h * EVERY)) // EVERY + 1
    out = {}
    for label, rho_inf, t_end, exact in (
        ("ρ∞=1", 1.0, t1, True),
        ("ρ∞=0.9", 0.9, t2, True),
        ("ρ∞=0.9, Kynema's tangent", 0.9, t2, False),
    ):
        reference = (q_ref[:m], w_ref[:m]) if t_end == t1 else (q_ref, w_ref)
        res = simulate(n_links, t_end, reference, rho_inf, exact, h)
        out[f"{label}: energy error / max kinetic energy"] = res["energy"]
        out[f"{label}: ball-joint gap [m]"] = res["gap"]
        out[f"{label}: rod orientation error [rad]"] = res["orientation"]
        out[f"{label}: tip position error [m]"] = res["tip"]
        out[f"{label}: iterations per step"] = res["iterations"]
    out["links"] = float(n_links)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("links", nargs="?", type=int, default=None, help=f"number of links (default {N_LINKS})")
    parser.add_argument("--quick", action="store_true", help=f"{N_QUICK} links (unless given), {T_QUICK} s")
    args = parser.parse_args(argv)
    if args.links is not None and args.links < 1:
        parser.error("the chain needs at least one link")
    start = time.perf_counter()
    res = run(quick=args.quick, n_links=args.links)
    t2 = T_QUICK if args.quick else T_END
    failed = ref.report(
        f"{int(res['links'])}-link spherical pendulum chain, h = {H} s (ρ∞ = 1: {T_END_RHO1} s, ρ∞ = 0.9: {t2} s), "
        "against a reduced-coordinate reference",
        [(name, res[name], bound) for name, bound in BOUNDS.items()],
    )
    exact, kynema = res["ρ∞=0.9: iterations per step"], res["ρ∞=0.9, Kynema's tangent: iterations per step"]
    print(
        f"  Newton iterations per step (atol = rtol = 1e-10): exact tangent {exact:.2f}, Kynema's tangent {kynema:.2f}"
    )
    print(f"  wall time {time.perf_counter() - start:.1f} s")
    if failed:
        raise SystemExit(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
