"""Benchmark: what compiling costs a user, from an empty numba cache (issue 26's targets).

Two fresh processes run one after the other against one new, empty numba cache
(``NUMBA_CACHE_DIR`` and ``XDG_CACHE_HOME`` in a temporary folder):

* **every kind**: builds and steps one model of every kind the engine has: Kynema's
  constraints (the heavy top: a 6→3 rigid joint, a prescribed 3-DOF node; a fixed node; a
  revolute joint with a rotation control), every two-body joint kind, a 300-body ball chain
  (sparse solver), a cantilever beam (clamped root, tip load), an HDF5 run read back, and
  a ``Batch``;
* **other sizes**: other sizes and combinations of the same kinds (a two-hinge double
  pendulum, a 50-body chain, a three-element beam with a hinge to a body, a weld and a
  slider together, a sweep of batch members), with the cache the first process wrote.

For each, the process's CPU time (user + system, ``resource.getrusage`` of the child) and
wall time.  The targets: at most 60 s of CPU for the first, at most 4 s for the second.

Run:  python bench/compile.py [--worktree | --commit REF]   (default: a clone of HEAD)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

COMMON = textwrap.dedent(
    """
    import sys, tempfile, os
    import numpy as np
    import kynemapy as kp

    def joint_pair(add, *args):
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        a = b.add_node(position=(0.0, 0.0, 0.0))
        b.add_mass(a, mass=1.0, inertia=(0.1, 0.1, 0.1))
        c = b.add_node(position=(0.5, 0.1, -0.2))
        b.add_mass(c, mass=2.0, inertia=(0.2, 0.3, 0.1))
        b.add_fixed_bc(a)
        getattr(b, add)(a, c, *args)
        return b.build()

    def chain(n):
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        prev = kp.GROUND
        for i in range(n):
            node = b.add_node(position=(0.1 * (i + 1), 0.0, 0.0))
            b.add_mass(node, mass=1.0, inertia=(0.01, 0.01, 0.01))
            b.add_ball_joint(prev, node, point=(0.1 * i, 0.0, 0.0))
            prev = node
        return b.build()

    def cantilever(n_elements, order, hinge_body=False):
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
        c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
        beam = b.add_beam(
            [(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=order, n_elements=n_elements,
            root_acceleration=(0,) * 6,
        )
        b.add_fixed_bc(beam.nodes[0])
        if hinge_body:
            body = b.add_node(position=(2.2, 0, 0))
            b.add_mass(body, mass=1.0, inertia=(0.01, 0.01, 0.01))
            b.add_hinge_joint(beam.nodes[-1], body, point=(2.0, 0, 0), axis=(0, 1, 0))
        return b.build(), beam.nodes[-1]

    def step(model, n=20, **kw):
        sim = kp.Simulation(model, kp.StepParameters(h=1e-3, **kw))
        sim.advance(n)
        return sim
    """
)

EVERY_KIND = COMMON + textwrap.dedent(
    """
    sys.path.insert(0, "examples")
    from heavy_top import build_heavy_top
    top, _ = build_heavy_top()
    for exact in (False, True):
        step(top, 50, geometric_stiffness=exact)
    # Kynema's revolute joint and rotation control
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    hub = b.add_node(position=(0, 0, 0))
    b.add_mass(hub, mass=1.0, inertia=(1, 1, 1))
    ground = b.add_node(position=(0, 0, 0))
    b.add_fixed_bc(ground)
    b.add_revolute_joint(ground, hub, axis=(1, 0, 0))
    arm = b.add_node(position=(0, 0, 0))
    b.add_mass(arm, mass=1.0, inertia=(1, 1, 1))
    b.add_rotation_control(hub, arm, axis=(0, 0, 1), angle=0.0)
    step(b.build())
    # every two-body joint kind
    for add, args in [
        ("add_ball_joint", ((0.2, 0, 0),)), ("add_hinge_joint", ((0.2, 0, 0), (0, 1, 0))),
        ("add_slider_joint", ((0.2, 0, 0), (1, 0, 0))), ("add_cylindrical_joint", ((0.2, 0, 0), (1, 0, 0))),
        ("add_universal_joint", ((0.2, 0, 0), (1, 0, 0), (0, 1, 0))), ("add_planar_joint", ((0.2, 0, 0), (0, 0, 1))),
        ("add_weld_joint", ((0.2, 0, 0),)), ("add_point_on_line_joint", ((0.2, 0, 0), (1, 0, 0))),
        ("add_point_on_plane_joint", ((0.2, 0, 0), (0, 0, 1))),
        ("add_generic_joint", ((0.2, 0, 0), (1, 1, 1, 0, 1, 1))),
        ("add_distance_constraint", ((0, 0, 0), (0.5, 0.1, -0.2))),
    ]:
        step(joint_pair(add, *args))
    step(chain(300), 10)
    model, tip = cantilever(1, 5)
    sim = step(model, 10)
    with tempfile.TemporaryDirectory() as tmp:
        sim = kp.Simulation(top, kp.StepParameters(h=2e-3, rho_inf=0.9))
        sim.run(n_steps=100, output=os.path.join(tmp, "top.h5"))
        res = kp.io.read(os.path.join(tmp, "top.h5"))
        assert res.q.shape[0] == 101, res.q.shape
    kp.Batch([kp.Simulation(top, kp.StepParameters(h=2e-3)) for _ in range(4)]).advance(20)
    print("every kind: done")
    """
)

OTHER_SIZES = COMMON + textwrap.dedent(
    """
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    r1 = b.add_node(position=(0.5, 0, 0))
    b.add_mass(r1, mass=1.0, inertia=(0.01, 0.1, 0.1))
    r2 = b.add_node(position=(1.5, 0, 0))
    b.add_mass(r2, mass=1.0, inertia=(0.01, 0.1, 0.1))
    b.add_hinge_joint(kp.GROUND, r1, point=(0, 0, 0), axis=(0, 1, 0))
    b.add_hinge_joint(r1, r2, point=(1, 0, 0), axis=(0, 1, 0))
    step(b.build(), 100)
    step(chain(50), 10)
    model, tip = cantilever(3, 4, hinge_body=True)
    step(model, 10)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    a = b.add_node(position=(0, 0, 0))
    b.add_mass(a, mass=1.0, inertia=(0.1, 0.1, 0.1))
    c = b.add_node(position=(1, 0, 0))
    b.add_mass(c, mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.add_weld_joint(kp.GROUND, a, point=(0, 0, 0))
    b.add_slider_joint(a, c, point=(0.5, 0, 0), axis=(1, 0, 0))
    sims = [step(b.build(), 5) for _ in range(3)]
    kp.Batch(sims).advance(10)
    print("other sizes: done")
    """
)


def run(script: str, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(CPU s, wall s) of a fresh ``python -c script``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"FAILED (exit {proc.returncode})")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worktree", action="store_true", help="time this checkout instead of a clone of HEAD")
    parser.add_argument("--commit", default="HEAD", help="the commit to clone and time (default HEAD)")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="kynemapy-compile-") as tmp:
        tmp = Path(tmp)
        if args.worktree:
            source = root
        else:
            source = tmp / "repo"
            subprocess.run(["git", "clone", "--quiet", str(root), str(source)], check=True)
            subprocess.run(["git", "-C", str(source), "checkout", "--quiet", "--detach", args.commit], check=True)
        rev = ["git", "-C", str(source), "rev-parse", "--short", "HEAD"]
        head = subprocess.run(rev, capture_output=True, text=True)
        print(f"source: {source} ({head.stdout.strip()}{', working tree' if args.worktree else ''})")
        env = dict(os.environ, PYTHONPATH=str(source), NUMBA_CACHE_DIR=str(tmp / "numba"))
        env["XDG_CACHE_HOME"] = str(tmp / "xdg")
        for name, script, target in (("every kind", EVERY_KIND, 60.0), ("other sizes", OTHER_SIZES, 4.0)):
            cpu, wall = run(script, source, env)
            verdict = "met" if cpu <= target else "NOT met"
            print(f"{name:12s}: {cpu:7.1f} s CPU, {wall:7.1f} s wall  (target <= {target:g} s CPU: {verdict})")


if __name__ == "__main__":
    main()
