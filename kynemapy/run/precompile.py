"""``kynemapy compile``: compile every kernel ahead, with a progress bar, on up to two cores.

The engine is one compiled function for every model (:func:`kynemapy.engine.entry.run_task_at`),
so compiling it once serves every model, size, joint mix and solver.  This module runs a small
workload of each kind (a rigid body with Kynema's constraints, a two-body joint, a beam, a
sparse chain, a result file written and read back, a ``Batch``, body points and reactions, a
ball on a hard plane, boxes on boxes and the collision query, the rigid-body schemes of
:mod:`kynemapy.integrators`, the step-size control of both schemes) so that every kernel a user
can reach is compiled into the cache (:mod:`kynemapy._jit`).

With two or more cores, the engine's units (the Newton loop, its three phases, the beam
elements, the two-body joints, the sparse LU, the held-node solve and the contacts,
:mod:`kynemapy.engine.unit_call`) compile in two processes, about half each
(:func:`kynemapy.engine.units.compile_units`); the later stages load them from the cache, and
the contact solvers' and the hard-contact stages (lazily compiled kernels of their own) run in a
second process meanwhile.  Two processes that compile the same small kernel write the same
files, each atomically (numba's cache).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

#: stages: (label, expected share of the whole time, function)
Stage = tuple[str, float, Callable[[], None]]


def _heavy_top() -> Any:
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538))
    pin = b.add_node(position=(0, 0, 0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    b.add_rigid_joint_6dof_to_3dof(top, pin)
    b.add_prescribed_bc_3dof(pin)
    return b.build()


def _hinged_pair() -> Any:
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    rod = b.add_node(position=(0.0, 0.0, -0.5))
    b.add_mass(rod, mass=1.0, inertia=(1 / 12, 1 / 12, 2e-4))
    b.add_hinge_joint(kp.GROUND, rod, point=(0, 0, 0), axis=(0, 1, 0))
    return b.build()


def _beam() -> Any:
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
    c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
    beam = b.add_beam([(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=3, root_acceleration=(0,) * 6)
    b.add_fixed_bc(beam.nodes[0])
    return b.build()


def _chain(n: int) -> Any:
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    prev = kp.GROUND
    for i in range(n):
        node = b.add_node(position=(0.1 * (i + 1), 0.0, 0.0))
        b.add_mass(node, mass=1.0, inertia=(0.01, 0.01, 0.01))
        b.add_ball_joint(prev, node, point=(0.1 * i, 0.0, 0.0))
        prev = node
    return b.build()


def compile_units(jobs: int | None = None) -> None:
    """Compile every unit of the engine (the Newton loop, its three phases, the beam elements,
    the two-body joints, the sparse LU, the held-node solve, the contacts:
    :mod:`kynemapy.engine.unit_call`) into the cache for the types of every model, in two
    processes where two cores are free (:func:`kynemapy.engine.units.compile_units`)."""
    from kynemapy.engine import units
    from kynemapy.engine.data import new_inputs, new_state, new_workspace
    from kynemapy.engine.unit_call import N_UNITS

    model = _heavy_top()
    workspace = new_workspace(model, 10, "auto", True)
    workspace.units_filled = True  # compiled below, all of them
    d = workspace.data(new_state(model), new_inputs(model))
    units.compile_units(list(range(N_UNITS)), d, jobs)


def _engine() -> None:
    import kynemapy as kp

    sim = kp.Simulation(_heavy_top(), kp.StepParameters(h=1e-3))
    sim.advance(2)
    sim.step()
    sim.reaction(0)


def _joints() -> None:
    import kynemapy as kp

    sim = kp.Simulation(_hinged_pair(), kp.StepParameters(h=1e-3))
    sim.step()
    sim.joint_output(0)
    sim.reaction(0)
    sim.body_frame(0)
    sim.body_point(0, (0.0, 0.0, -0.5))


def _beams() -> None:
    import kynemapy as kp

    kp.Simulation(_beam(), kp.StepParameters(h=1e-3)).step()


def _step_control() -> None:
    """The step-size control's kernels: the generalized-α controller's projection and error norm
    (:mod:`kynemapy.run.local_error`) and the extrapolated scheme's combination."""
    import kynemapy as kp
    from kynemapy.run import extrapolation

    kp.Simulation(_heavy_top(), kp.StepParameters(h=1e-3)).advance_to(0.005, kp.StepControl())
    extrapolation.extrapolate(kp.Simulation(_heavy_top(), kp.StepParameters(h=1e-2, rho_inf=0.9)), 0.03, 1e-2)


def _sparse() -> None:
    import kynemapy as kp

    kp.Simulation(_chain(30), kp.StepParameters(h=1e-3, solver="sparse")).step()


def _files() -> None:
    import kynemapy as kp

    with tempfile.TemporaryDirectory(prefix="kynemapy-compile-") as tmp:
        path = os.path.join(tmp, "compile.h5")
        kp.Simulation(_heavy_top(), kp.StepParameters(h=1e-3)).run(n_steps=3, output=path)
        kp.io.read(path)
        # the result-file kernel of models with beams or contact (engine.invariants.parts_of)
        kp.Simulation(_beam(), kp.StepParameters(h=1e-3)).run(n_steps=1, output=os.path.join(tmp, "beam.h5"))


def _batch() -> None:
    import kynemapy as kp

    model = _heavy_top()
    kp.Batch([kp.Simulation(model, kp.StepParameters(h=1e-3)) for _ in range(2)]).advance(2, threads=1)


def _hard_contact() -> None:
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(position=(0.0, 0.0, 0.1))
    b.add_mass(n, mass=1.0, inertia=(0.004, 0.004, 0.004))
    b.add_sphere(n, 0.1)
    b.add_ground_plane(law="hard", friction=0.5)
    model = b.build()
    kp.Simulation(model, kp.StepParameters(h=1e-3)).advance(2)  # the compiled path (free nodes)
    general = kp.Simulation(model, kp.StepParameters(h=1e-3))
    assert general.joint_stops is not None
    general.joint_stops._compiled = False  # the general path's kernels (stops, bilateral constraints)
    general.advance(2)
    # an impact located inside a step (kynemapy.run.impact_event): a ball 0.1 mm above the plane,
    # a pendulum 1 mrad above its stop
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(position=(0.0, 0.0, 0.1001))
    b.add_mass(n, mass=1.0, inertia=(0.004, 0.004, 0.004))
    b.add_sphere(n, 0.1)
    b.add_ground_plane(law="hard", restitution=1.0)
    kp.Simulation(b.build(), kp.StepParameters(h=1e-3)).advance(8)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(position=(0.0, 0.8, 0.0))
    b.add_mass(n, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1e-3, 1.0), limit_restitution=0.5)
    kp.Simulation(b.build(), kp.StepParameters(h=1e-3)).advance(20)
    # hard contact between bodies (kynemapy.run.hard_bodies): a tilted box dropped on a box
    import numpy as np

    from kynemapy.run import body_blocks

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    c, s = np.cos(0.1), np.sin(0.1)
    for z, axes in ((0.1, None), (0.33, [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])):
        n = b.add_node(position=(0.0, 0.0, z))
        b.add_mass(n, mass=1.0, inertia=(0.007, 0.007, 0.007))
        b.add_box(n, (0.1, 0.1, 0.1), axes=axes)
    b.add_ground_plane(law="hard", friction=0.5)
    b.set_body_contact(law="hard", friction=0.5)
    kp.Simulation(b.build(), kp.StepParameters(h=1e-3)).advance(90)  # landed from 71 ms on: touched points too
    # the public collision query (kynemapy.collision): the same boxes' contact points
    from kynemapy.collision.query import scene_of

    scene_of(b).collisions(np.array([[0.0, 0.0, 0.1], [0.0, 0.0, 0.33]]), np.array([[1.0, 0.0, 0.0, 0.0]] * 2))
    one, none = np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64)
    rows, y = np.zeros((1, 3, 6)), np.zeros((1, 6))
    scratch = (np.zeros((1, 6, 3)), np.zeros((1, 6, 3)), np.zeros((1, 3, 3)), np.zeros(1), np.zeros((1, 3)))
    body_blocks.friction_sweeps(none, one, rows, rows, np.zeros((1, 3)), np.ones(1), np.zeros((1, 3)), y, scratch,
                                1e-14, 1)  # fmt: skip
    # the contacts' rows and the frictional solves through joints (kynemapy.run.body_coupled, a
    # model with joints: solve_cone called from Python, with and without hold_normal)
    from kynemapy.run.body_query import dof_rows
    from kynemapy.run.hard_contact import solve_cone

    dof_rows(one, none, rows, rows, np.zeros(2, dtype=np.int64), np.full(2, 6, dtype=np.int64), np.zeros((3, 6)))
    for hold in ((), (True,)):
        solve_cone(np.eye(3), np.ones(3), np.full(1, 0.5), np.zeros(3), np.zeros(1), np.zeros(3), 1e-14, 10, *hold)


def _contact_solvers() -> None:
    """The contact solvers' kernels that no simulation of :func:`_hard_contact` compiles (called
    here directly): the NNLS, the hard body contacts' Newton solver and the finishers of
    contacts through joints.  A stage of its own, so that the processes of :func:`compile_all`
    can share the stages evenly (:data:`SECOND_PROCESS_STAGES`)."""
    import numpy as np

    one, none = np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64)
    rows = np.zeros((1, 3, 6))
    from kynemapy.run import nnls

    nnls.solve(np.array([[1.0, 0.0], [-1.0, 1.0]]), np.array([1.0, 0.0]))
    from kynemapy.run.contact_newton import newton_contacts

    newton_contacts(none, one, rows, rows, np.zeros((1, 6, 6)), np.zeros((1, 3)), np.ones(1), np.zeros((1, 3)),
                    np.zeros((3, 3, 3)), np.zeros((9, 3)), np.zeros((2, 1, 6, 3)), 1e-10, 1)  # fmt: skip
    # the last finishers through joints (kynemapy.run.body_coupled): one point pushed onto a plane
    from kynemapy.run.body_coupled import coulomb_residual, mode_search, newton_polish

    d, push, mu = 2.0 * np.eye(3), np.array([-1.0, 0.2, -0.1]), np.array([0.5])
    coulomb_residual(d, push, mu, np.zeros(3))
    newton_polish(d, push, mu, np.array([0.5, 0.0, 0.0]))
    mode_search(d, push, mu, np.zeros(3))


def _integrators() -> None:
    """The rigid-body schemes of :mod:`kynemapy.integrators` (``kp.integrators.integrate``):
    one compiled driver for every stepped scheme, in its two variants: the built-in point-force
    torque alone, and with a user's torque function (any: it is called through its address)."""
    import numpy as np

    from kynemapy.integrators import integrate, point_force_torque

    integrate("rig_pos", (1.0, 2.0, 3.0), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.02, force=(0.0, 0.0, -1.0),
              force_point=(0.0, 0.0, 1.0))  # fmt: skip
    integrate("rig_pos", (1.0, 2.0, 3.0), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.02, torque=point_force_torque,
              torque_params=(0.0, 0.0, -1.0, 0.0, 0.0, 1.0))  # fmt: skip


class _Bar:
    """``[########............]  40%  the engine  1 min 10 s`` on ``stream``, redrawn every
    half second while a stage runs (its share of the bar grows with its expected time)."""

    def __init__(self, stream: TextIO, total: float) -> None:
        self.stream = stream
        self.total = total
        self.done = 0.0
        self.start = time.perf_counter()
        self.label = ""
        self.share = 0.0
        self.stage_start = self.start
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _draw(self) -> None:
        now = time.perf_counter()
        with self._lock:
            # a stage fills its share over its expected time, and never more
            running = min(self.share * 0.95, self.share * (now - self.stage_start) / max(self.share, 1e-9))
            frac = min((self.done + running) / self.total, 1.0)
            elapsed = now - self.start
            width = 30
            filled = round(frac * width)
            clock = f"{int(elapsed // 60)} min {int(elapsed % 60):02d} s" if elapsed >= 60 else f"{elapsed:.0f} s"
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {100 * frac:3.0f}%  {self.label:<44s} {clock}  "
            )
            self.stream.flush()

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            self._draw()

    def stage(self, label: str, share: float) -> None:
        with self._lock:
            self.label = label
            self.share = share
            self.stage_start = time.perf_counter()
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        self._draw()

    def finish_stage(self) -> None:
        with self._lock:
            self.done += self.share
            self.share = 0.0
        self._draw()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.label = "done"
        self._draw()
        self.stream.write("\n")
        self.stream.flush()


#: the stages a second process runs, one after the other, while this one runs the others (after
#: the units), by label: their kernels are compiled lazily, apart from the engine's, so that two
#: processes split them.  Measured stage by stage from an empty cache after the units
#: (2026-12-02, 2 cores, CPU): result files 17.4 s, rigid-body schemes 16.8 s, contact solvers
#: 13.9 s, sparse solver 4.9 s, step-size control 2.1 s, joints, beams, Batch and the step from
#: Python 3.2 s; hard contact 31.4 s (46 s before its kernels stopped compiling once per literal
#: argument).  With the contact solvers and hard contact in the second process: 45.3 s there,
#: 44.4 s here (with the sparse solver and hard contact there instead: 36.3 s against 53.4 s)
SECOND_PROCESS_STAGES = {"contact solvers": "_contact_solvers", "hard contact": "_hard_contact"}


def _start_second(stages: tuple[str, ...]) -> subprocess.Popen[bytes] | None:
    """A second Python process that runs the stages ``stages`` of :data:`SECOND_PROCESS_STAGES`
    in their order (compiling their kernels into the cache), or None where one cannot be
    started."""
    from kynemapy.engine.units import start_python

    names = [SECOND_PROCESS_STAGES[stage] for stage in stages]
    return start_python(
        "from kynemapy.engine.notice import ANNOUNCE; ANNOUNCE.on = False; "
        f"from kynemapy.run.precompile import {', '.join(names)}; " + "; ".join(f"{name}()" for name in names)
    )


def _units_cost() -> float:
    """The expected CPU time of every unit's first compilation in one process [s]
    (``engine.units.COST``, less the kernels pairs of units share)."""
    from kynemapy.engine.units import COST, expected_cost

    return float(expected_cost(list(COST)))


def compile_all(jobs: int | None = None, stream: TextIO | None = None, progress: bool = True) -> float:
    """Compile every kernel into the cache (see the module's description); returns the wall
    time [s].  ``jobs``: processes to use (default: 2 when the machine has two cores or more).
    Kernels already in the cache are loaded, not compiled again.  With two processes, the units
    are split between them, and then the stages of :data:`SECOND_PROCESS_STAGES` run in the
    second while this one runs the others (should the second fail, this one runs them at the
    last of them)."""
    stream = stream if stream is not None else sys.stderr
    jobs = jobs if jobs is not None else min(2, os.cpu_count() or 1)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs!r}")
    start = time.perf_counter()
    stages: list[Stage] = [
        ("the engine and its units" + (" (2 processes)" if jobs >= 2 else ""), _units_cost() / min(jobs, 2),
         lambda: compile_units(jobs)),
        ("the step from Python", 2.0, _engine),
        ("result files", 9.0, _files),
    ]  # fmt: skip
    stages += [
        ("joints", 1.0, _joints),
        ("beams", 1.0, _beams),
        ("sparse solver and orderings", 5.0, _sparse),
        ("ensembles (Batch)", 2.0, _batch),
        ("contact solvers", 1.0, _contact_solvers),
        ("rigid-body schemes (kynemapy.integrators)", 24.0, _integrators),
        ("hard contact", 1.0, _hard_contact),
        ("step-size control (both schemes)", 2.5, _step_control),
    ]
    bar = _Bar(stream, sum(share for _, share, _ in stages)) if progress else None
    from kynemapy.engine.notice import ANNOUNCE

    ANNOUNCE.on = not progress  # the bar says what is compiling; without it, the one-line notices do
    helper: subprocess.Popen[bytes] | None = None
    given = [label for label, _, _ in stages if label in SECOND_PROCESS_STAGES]
    by_label = {label: run for label, _, run in stages}
    try:
        for index, (label, share, run) in enumerate(stages):
            if index == 1 and jobs >= 2:  # the units are in the cache: the second process's stages
                helper = _start_second(tuple(given))
            if bar is not None:
                bar.stage(label, share)
            if helper is None or label not in given:
                run()
            elif label == given[-1] and helper.wait() != 0:
                for name in given:  # the second process failed: this one compiles what is left
                    by_label[name]()
            if bar is not None:
                bar.finish_stage()
    finally:
        if helper is not None and helper.poll() is None:
            helper.kill()
            helper.wait()
        ANNOUNCE.on = True
        if bar is not None:
            bar.close()
    return time.perf_counter() - start


def cache_location() -> str:
    """Where the compiled kernels are kept (see :mod:`kynemapy._jit`)."""
    from kynemapy._jit import cache_dir

    folder = cache_dir("kynemapy.engine.entry")
    return str(Path(folder).parent.parent) if folder else "(no writable cache folder: kernels are not cached)"
