"""One compiled engine for every model, and compilation a user can see (issue 26).

* Models of every kind (Kynema's constraints, two-body joints, a beam, the dense and the
  sparse solver, a Batch) run on a single compiled ``run_task_at``: its dispatcher holds one
  signature after all of them, and each model's Data has that one numba type.
* The first compilation of an announced kernel prints one line on stderr, and a later
  process that loads it from the cache prints nothing (a probe kernel in a fresh cache).
* ``kynemapy compile`` compiles (or loads) every kernel and says where they are cached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from models import ball_chain

import kynemapy as kp
from kynemapy.engine.data import new_inputs, new_state, new_workspace
from kynemapy.engine.entry import run_task_at

ROOT = Path(__file__).resolve().parents[2]


def _pair(add: str, *args: object) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    a = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(a, mass=1.0, inertia=(0.1, 0.1, 0.1))
    c = b.add_node(position=(0.5, 0.1, -0.2))
    b.add_mass(c, mass=2.0, inertia=(0.2, 0.3, 0.1))
    b.add_fixed_bc(a)
    getattr(b, add)(a, c, *args)
    return b.build()


def _beam() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
    c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
    beam = b.add_beam([(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=4, root_acceleration=(0,) * 6)
    b.add_fixed_bc(beam.nodes[0])
    return b.build()


def _top() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538))
    pin = b.add_node(position=(0, 0, 0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    b.add_rigid_joint_6dof_to_3dof(top, pin)
    b.add_prescribed_bc_3dof(pin)
    return b.build()


def _ball_on_ground() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    ball = b.add_node(position=(0.0, 0.0, 0.1))
    b.add_mass(ball, mass=1.0, inertia=(0.004, 0.004, 0.004))
    b.add_sphere(ball, 0.1)
    b.add_ground_plane(stiffness=1e5, damping=300.0, friction=0.5)
    return b.build()


MODELS = {
    "heavy top (Kynema's constraints, dense)": _top,
    "hinge pair (two-body joint)": lambda: _pair("add_hinge_joint", (0.2, 0, 0), (0, 1, 0)),
    "slider pair": lambda: _pair("add_slider_joint", (0.2, 0, 0), (1, 0, 0)),
    "ball chain (sparse)": lambda: ball_chain(25),
    "cantilever beam": _beam,
    "ball on the ground (contact)": _ball_on_ground,
}


def test_every_kind_of_model_has_the_one_data_type() -> None:
    types = set()
    for name, make in MODELS.items():
        model = make()
        for solver in ("dense", "sparse"):
            for exact in (False, True):
                ws = new_workspace(model, 10, solver, exact)
                types.add(numba.typeof(ws.data(new_state(model), new_inputs(model))))
        assert len(types) == 1, f"{name} has a Data type of its own"


def test_every_kind_of_model_steps_on_one_compiled_run_task_at() -> None:
    before = set(run_task_at.overloads)
    sims = []
    for make in MODELS.values():
        for solver in ("dense", "sparse"):
            sim = kp.Simulation(make(), kp.StepParameters(h=1e-3, solver=solver))
            info = sim.step()
            assert info.converged
            sims.append(sim)
    kp.Batch([kp.Simulation(_top(), kp.StepParameters(h=1e-3)) for _ in range(2)]).advance(3)
    # one signature: every model, both solvers and the Batch ran the same machine code
    assert len({sim._stored.args_ref for sim in sims}) == 1
    assert len(set(run_task_at.overloads) | before) == 1, [str(sig) for sig in run_task_at.overloads]


def _boxes(n: int) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    for i in range(n):
        node = b.add_node(position=(0.0, 0.0, 0.1 + 0.25 * i))
        b.add_mass(node, mass=1.0, inertia=(0.007, 0.007, 0.007))
        b.add_box(node, (0.1, 0.1, 0.1))
    b.add_ground_plane(law="hard", friction=0.5)
    b.set_body_contact(law="hard", friction=0.5)
    return b.build()


def test_hard_body_contact_of_one_shape_or_several_queries_on_one_compiled_scene_query() -> None:
    """The model's shape table is read-only; with one shape its column slices were contiguous
    read-only views, which numba types apart from writable arrays: the scene query (20 s of CPU)
    compiled a second time for a model of one shape.  Likewise the public query
    (``scene_of(builder).collisions``) given read-only or writable poses."""
    from kynemapy.collision.query import scene_of
    from kynemapy.collision.shapes import world_poses
    from kynemapy.run.body_query import scene_contacts

    before = set(scene_contacts.overloads)
    for n in (2, 1):
        kp.Simulation(_boxes(n), kp.StepParameters(h=1e-3)).advance(2)
    assert len(set(scene_contacts.overloads) | before) == 1, [str(sig) for sig in scene_contacts.overloads]

    b = kp.ModelBuilder()
    node = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(node, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_box(node, (0.1, 0.1, 0.1))
    scene = scene_of(b)
    before = set(world_poses.overloads)
    x, r = np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0, 0.0]])
    for writable in (True, False):
        x.setflags(write=writable)
        r.setflags(write=writable)
        assert len(scene.collisions(x, r).gap) == 0
    assert len(set(world_poses.overloads) | before) == 1, [str(sig) for sig in world_poses.overloads]


#: lazily announced kernels that compiled without a word before: (module, kernel, a script that
#: makes a fresh process compile or load it); each process must then have the notice registered
LAZY_CASES = {
    # every rigid-body scheme's loop of kynemapy.integrators.integrate (13.5 s of CPU at first)
    "rigid-body schemes": (
        "kynemapy.integrators.drive",
        "run_scheme",
        "import numpy as np\n"
        "from kynemapy.integrators import integrate\n"
        "integrate('liemid', (1.0, 2.0, 3.0), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.02)\n",
    ),
    # the generalized-α step-size control's projection of its error estimate (about 2.5 s)
    "step-size control": (
        "kynemapy.run.local_error",
        "project_dense",
        "import kynemapy as kp\n"
        "b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))\n"
        "n = b.add_node(position=(0.0, 0.0, -0.5))\n"
        "b.add_mass(n, mass=1.0, inertia=(0.1, 0.1, 0.1))\n"
        "b.add_ball_joint(kp.GROUND, n, point=(0.0, 0.0, 0.0))\n"
        "kp.Simulation(b.build(), kp.StepParameters(h=1e-3)).advance_to(0.01, kp.StepControl())\n",
    ),
    # the sparse solver's minimum-degree ordering (about 5 s, before the sparse unit's own notice)
    "sparse ordering": (
        "kynemapy.linalg.ordering",
        "_minimum_degree_kernel",
        "import scipy.sparse as sp\n"
        "from kynemapy.linalg.ordering import minimum_degree\n"
        "a = sp.csc_matrix(sp.diags([1.0, 4.0, 1.0], [-1, 0, 1], shape=(6, 6)))\n"
        "assert sorted(minimum_degree(a.indptr, a.indices, 6)) == list(range(6))\n",
    ),
}


@pytest.mark.parametrize("case", list(LAZY_CASES))
def test_a_lazily_compiled_kernels_first_compilation_is_announced(case: str) -> None:
    """Kernels typed on their first call that used to compile without a word are lazily announced
    kernels, and running them registers the notice (this process has them from the cache: nothing
    prints)."""
    import importlib

    from kynemapy.engine.notice import LAZY_ANNOUNCED

    module, name, script = LAZY_CASES[case]
    func = getattr(importlib.import_module(module), name).py_func
    assert f"{func.__module__}.{func.__qualname__}" in LAZY_ANNOUNCED
    code = "import sys\n" + script + "assert 'kynemapy.engine.notice' in sys.modules\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


PROBE = '''\
"""Probe of tests/unit/test_one_engine.py: a kernel announced when it compiles."""

from kynemapy._jit import njit


@njit
def probe_kernel(x):
    return x + 1.0
'''

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    import numba
    from kynemapy.engine import notice as _notice
    import announced_probe

    _notice.ANNOUNCED["probe_kernel"] = ("the probe", 3.0)
    compiled = _notice.compile_announced(announced_probe.probe_kernel, (numba.float64,))
    print(compiled(1.5))
    """
)


def _probe_run(tmp_path: Path, folder: Path | None = None) -> subprocess.CompletedProcess[str]:
    """SCRIPT with the probe module of ``folder`` (default ``tmp_path``) and the cache in ``tmp_path``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(folder or tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )


def test_a_second_copy_of_the_same_sources_announces_its_own_first_compilation(tmp_path: Path) -> None:
    """Two copies of one module (two clones or environments of one version) sharing a cache:
    numba compiles each copy's machine code apart, so the second copy's first compilation is
    announced too (its marker is its own), and each copy's second run loads silently."""
    copies = [tmp_path / "first", tmp_path / "second"]
    for folder in copies:
        folder.mkdir()
        (folder / "announced_probe.py").write_text(PROBE)
    for folder in copies:
        run = _probe_run(tmp_path, folder)
        assert run.returncode == 0 and run.stdout.strip() == "2.5", run.stderr
        assert run.stderr.startswith("kynemapy: compiling the probe"), (folder.name, run.stderr)
    for folder in copies:
        run = _probe_run(tmp_path, folder)
        assert run.returncode == 0 and run.stdout.strip() == "2.5", run.stderr
        assert run.stderr == "", (folder.name, run.stderr)


def test_a_first_compilation_says_so_in_one_line_and_a_cache_load_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "announced_probe.py").write_text(PROBE)
    first = _probe_run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "2.5"
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1, first.stderr
    assert lines[0].startswith("kynemapy: compiling the probe (once per install and version; about 3 s")
    assert "kynemapy compile" in lines[0] and lines[0].rstrip().endswith(" s")

    second = _probe_run(tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "2.5"
    assert second.stderr == ""


LAZY_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from kynemapy.engine import notice as _notice
    import announced_probe

    _notice.LAZY_ANNOUNCED["announced_probe.probe_kernel"] = ("the lazy probe", 2.0)
    print(announced_probe.probe_kernel(1.5))  # compiled at its first call, for a float64
    print(announced_probe.probe_kernel(2.5))  # compiled already: no second line
    """
)


def test_a_lazily_typed_kernel_announces_its_first_compilation_and_not_a_cache_load(tmp_path: Path) -> None:
    (tmp_path / "announced_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", LAZY_SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
        )

    first = run()
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["2.5", "3.5"]
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1, first.stderr
    assert lines[0].startswith("kynemapy: compiling the lazy probe (once per install and version; about 2 s")
    assert " ... done in " in lines[0] and lines[0].rstrip().endswith(" s")
    second = run()
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["2.5", "3.5"]
    assert second.stderr == ""
    # a compilation that fails says so on its line, before numba's error
    failing = LAZY_SCRIPT.replace("probe_kernel(1.5)", "probe_kernel('text')").replace("_notice", "_n")
    proc = subprocess.run(
        [sys.executable, "-c", failing, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != 0
    assert "kynemapy: compiling the lazy probe (" in proc.stderr
    assert ") ... failed\n" in proc.stderr and "TypingError" in proc.stderr


def test_kynemapy_compile_compiles_or_loads_everything_and_names_the_cache() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kynemapy", "compile", "--jobs", "1", "--quiet"],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "kernels compiled or loaded in" in proc.stdout and "cached in" in proc.stdout
    # the cache it names holds the engine's kernels
    folder = Path(proc.stdout.rsplit("cached in ", 1)[1].strip())
    assert (folder / "kynemapy.engine.entry").is_dir()


class _Finished:
    """A stand-in for the second process of ``compile_all``: already ended with ``code``."""

    def __init__(self, code: int) -> None:
        self.code = code

    def wait(self) -> int:
        return self.code

    def poll(self) -> int:
        return self.code


@pytest.mark.parametrize("code", [0, 1], ids=["second process done", "second process failed"])
def test_compile_all_leaves_the_contact_solver_and_hard_contact_stages_to_a_second_process(
    monkeypatch, code: int
) -> None:
    """With two jobs, the contact solvers' and the hard-contact stages run, in that order, in one
    second process started once the units are in the cache; this process runs them (at the
    last of them) only where that process failed (or could not start), and every other stage
    here."""
    from kynemapy.run import precompile

    ran: list[str] = []
    started: list[tuple[str, ...]] = []
    names = ("_engine", "_files", "_joints", "_beams", "_sparse", "_batch", "_contact_solvers", "_integrators")
    for name in (*names, "_hard_contact", "_step_control"):
        monkeypatch.setattr(precompile, name, lambda name=name: ran.append(name))
    monkeypatch.setattr(precompile, "compile_units", lambda jobs: ran.append("units"))
    monkeypatch.setattr(precompile, "_start_second", lambda stages: started.append(stages) or _Finished(code))
    precompile.compile_all(jobs=2, progress=False)
    assert started == [("contact solvers", "hard contact")]
    here = ["units", "_engine", "_files", "_joints", "_beams", "_sparse", "_batch", "_integrators"]
    assert ran == [*here, *(["_contact_solvers", "_hard_contact"] if code else []), "_step_control"]
    ran.clear()
    started.clear()
    precompile.compile_all(jobs=1, progress=False)  # one process: every stage here, in order, none started
    assert started == [] and ran == ["units", *names, "_hard_contact", "_step_control"]


def test_the_second_process_runs_its_stages_in_order(monkeypatch) -> None:
    """The command of the second process imports and calls each of its stages, in order."""
    from kynemapy.engine import units
    from kynemapy.run import precompile

    commands: list[str] = []
    monkeypatch.setattr(units, "start_python", commands.append)
    precompile._start_second(("contact solvers", "hard contact"))
    assert commands[0].endswith("import _contact_solvers, _hard_contact; _contact_solvers(); _hard_contact()"), commands


def test_kynemapy_compile_refuses_a_bad_job_count() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kynemapy", "compile", "--jobs", "0"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "--jobs must be at least 1, got 0" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_each_model_uses_exactly_the_units_it_needs() -> None:
    """The beam elements, the two-body joints, the sparse LU and contact are units (engine.unit_call):
    a model's ``Data.units`` holds the address of those it has, 0 for the others (and every
    model the engine's own, ``run_task_at``)."""
    from kynemapy.engine.unit_call import ASSEMBLY, BEAMS, BODY_JOINTS, CONSTRAINTS, CONTACTS, ELEMENTS, ENGINE, SPARSE

    expected = {
        "heavy top (Kynema's constraints, dense)": set(),
        "hinge pair (two-body joint)": {BODY_JOINTS},
        "slider pair": {BODY_JOINTS},
        "ball chain (sparse)": {BODY_JOINTS},
        "cantilever beam": {BEAMS},
        "ball on the ground (contact)": {CONTACTS},
    }
    for name, make in MODELS.items():
        for solver in ("dense", "sparse"):
            sim = kp.Simulation(make(), kp.StepParameters(h=1e-3, solver=solver))
            assert sim.step().converged
            used = {i for i, address in enumerate(sim._data.units) if address != 0}
            engine = {ENGINE, ELEMENTS, CONSTRAINTS, ASSEMBLY}  # every model's
            assert used == expected[name] | engine | ({SPARSE} if solver == "sparse" else set()), (name, solver)


def test_the_joint_unit_with_drives_only_where_a_drive_needs_it() -> None:
    """A hinge built with a spring (a drive) steps on the two-body joint unit with drives from the
    start (``BODY_JOINTS`` holds ``BODY_JOINTS_FULL``'s address); one built without steps on the
    unit without them (no drive code compiled), until a servo is given between steps."""
    from kynemapy.engine.unit_call import BODY_JOINTS, BODY_JOINTS_FULL

    def hinge(stiffness: float) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        n = b.add_node(position=(0.5, 0.0, 0.0))
        b.add_mass(n, mass=1.0, inertia=(0.1, 0.1, 0.1))
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (0, 1, 0), stiffness=stiffness)
        return b.build()

    sim = kp.Simulation(hinge(10.0), kp.StepParameters(h=1e-3))
    assert sim.step().converged
    assert sim._data.units[BODY_JOINTS] == sim._data.units[BODY_JOINTS_FULL] != 0
    sim = kp.Simulation(hinge(0.0), kp.StepParameters(h=1e-3))
    assert sim.step().converged
    assert sim._data.units[BODY_JOINTS] != 0
    assert sim._data.units[BODY_JOINTS_FULL] == 0 or not sim.jit_enabled
    sim.set_servo(0, kp=5.0)
    assert sim.step().converged
    assert sim._data.units[BODY_JOINTS] == sim._data.units[BODY_JOINTS_FULL] != 0


def _damped_beam() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    m = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
    c = np.diag([1e7, 1e6, 1e6, 1e4, 1e4, 1e4])
    beam = b.add_beam(
        [(0, 0, 0), (2, 0, 0)], [0, 1], [m, m], [c, c], order=4, root_acceleration=(0,) * 6, mu=[1e-3] * 6
    )
    b.add_fixed_bc(beam.nodes[0])
    return b.build()


def test_the_full_beam_unit_only_where_damping_or_the_exact_tangent_needs_it() -> None:
    """An undamped beam model steps on the plain beam unit (no damping, no exact stiffness
    compiled in); the full unit is filled for the exact tangent (``geometric_stiffness=True``),
    for damped beams (whose ``BEAMS`` is the full unit too), and on demand when a task asks for
    the exact tangent on a Data made without it (linearization); its modes then are those of the
    same model linearized on its own."""
    from kynemapy.engine.unit_call import BEAMS, BEAMS_FULL

    plain = kp.Simulation(_beam(), kp.StepParameters(h=1e-3))
    assert plain.step().converged
    assert plain._data.units[BEAMS] != 0 and plain._data.units[BEAMS_FULL] == 0
    exact = kp.Simulation(_beam(), kp.StepParameters(h=1e-3, geometric_stiffness=True))
    assert exact.step().converged
    assert exact._data.units[BEAMS] == plain._data.units[BEAMS]
    assert exact._data.units[BEAMS_FULL] not in (0, plain._data.units[BEAMS])
    damped = kp.Simulation(_damped_beam(), kp.StepParameters(h=1e-3))
    assert damped.step().converged
    assert damped._data.units[BEAMS] == damped._data.units[BEAMS_FULL] == exact._data.units[BEAMS_FULL]
    # the damping acts: the same first step without it ends elsewhere
    undamped = kp.Simulation(_beam(), kp.StepParameters(h=1e-3))
    undamped.step()
    assert not np.array_equal(damped.state.v, undamped.state.v)
    # a task with the exact tangent on a plain Simulation's Data fills the full unit first
    from kynemapy.engine.api import task
    from kynemapy.engine.entry import LINEARIZE
    from kynemapy.engine.params import StepParameters

    p = StepParameters(h=1e-3, geometric_stiffness=True).coefficients
    fresh = kp.Simulation(_beam(), kp.StepParameters(h=1e-3))
    assert fresh._data.units[BEAMS_FULL] == 0
    task(fresh._data, p, LINEARIZE)
    assert fresh._data.units[BEAMS_FULL] == exact._data.units[BEAMS_FULL]


RIGID_ONLY = textwrap.dedent(
    """
    import kynemapy as kp
    from kynemapy.engine.units import kernel
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538))
    pin = b.add_node(position=(0, 0, 0))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    b.add_rigid_joint_6dof_to_3dof(top, pin)
    b.add_prescribed_bc_3dof(pin)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3))
    sim.advance(5)
    sim.reaction(0)
    print([len(kernel(i).overloads) for i in (0, 1, 2, 4, 8)])
    """
)


def test_a_rigid_model_compiles_or_loads_no_unit() -> None:
    """A fresh process stepping the heavy top (dense, Kynema's constraints) never compiles nor
    loads the beam (plain or full), two-body joint, sparse-LU or contact code."""
    done = subprocess.run(
        [sys.executable, "-c", RIGID_ONLY], env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[0, 0, 0, 0, 0]"


def test_every_unit_is_an_announced_kernel() -> None:
    """Each unit's kernel is one of the announced kernels: only their compilation leaves the
    marker that tells a later process the unit is in the cache (``notice.is_cached``; a unit
    without one would be taken for uncompiled by every process, and announced at each start)."""
    from kynemapy.engine import notice, units
    from kynemapy.engine.unit_call import N_UNITS

    for index in range(N_UNITS):
        assert units.kernel(index).py_func.__qualname__ in notice.ANNOUNCED, index


def test_a_first_compilation_splits_the_units_between_two_processes_fairly() -> None:
    """The engine's own unit stays in this process; the two units of a pair that share kernels
    go to one process; the rest go to the process with less expected time, so neither share
    (the second counting its start) is more than the largest block above the other."""
    from kynemapy.engine import units
    from kynemapy.engine.unit_call import ASSEMBLY, BEAMS, CONSTRAINTS, ELEMENTS, ENGINE, HELD, N_UNITS

    for cold in ([ENGINE, ELEMENTS, CONSTRAINTS, ASSEMBLY], list(range(N_UNITS)), [BEAMS, HELD]):
        mine, theirs = units._split(cold)
        assert ENGINE in mine or ENGINE not in cold
        assert sorted(mine + theirs) == sorted(cold)
        for pair in units.SHARED:
            if all(i in cold for i in pair):
                assert all(i in mine for i in pair) or all(i in theirs for i in pair)
        load_mine = units.expected_cost(mine)
        load_theirs = units.expected_cost(theirs) + units.HELPER_START
        paired = [list(pair) for pair in units.SHARED if all(i in cold for i in pair)]
        blocks = [[i] for i in cold if not any(i in pair for pair in paired)] + paired
        assert abs(load_mine - load_theirs) <= max(units.expected_cost(block) for block in blocks)
    # the pairs' shared kernels are counted once
    both = next(iter(units.SHARED))
    assert units.expected_cost(list(both)) == units.COST[both[0]] + units.COST[both[1]] - units.SHARED[both]


def test_a_failed_second_process_leaves_its_units_to_this_one(monkeypatch, capsys) -> None:
    """Where the second process of a first compilation fails, this process compiles (here:
    loads) its share itself: every unit gets its address, and one line says what compiled."""
    from kynemapy.engine import units
    from kynemapy.engine.unit_call import ASSEMBLY, CONSTRAINTS, ELEMENTS, ENGINE

    model = _top()
    workspace = new_workspace(model, 10, "auto", True)
    workspace.units_filled = True
    d = workspace.data(new_state(model), new_inputs(model))
    started = []

    def failing(indices: list[int]) -> subprocess.Popen[bytes]:
        started.append(list(indices))
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])

    monkeypatch.setattr(units, "_found", lambda index, types: False)  # as on a first run
    monkeypatch.setattr(units, "_cold", lambda index, types: True)
    monkeypatch.setattr(units, "_start_helper", failing)
    wanted = [ENGINE, ELEMENTS, CONSTRAINTS, ASSEMBLY]
    found = units.compile_units(wanted, d, jobs=2)
    assert len(started) == 1 and started[0] and ENGINE not in started[0]
    assert sorted(found) == sorted(wanted)
    for i in wanted:  # each address is numba's own, of the unit's overload for these argument types
        overload = units.kernel(i).overloads[units.unit_types(i, d)]
        assert found[i] == numba.types.CompileResultWAP(overload).__wrapper_address__() != 0
    line = capsys.readouterr().err
    assert "kynemapy: compiling the engine in two processes" in line and "done in" in line


def test_the_pattern_keys_are_made_distinct_as_numpy_would() -> None:
    """``sparsity._distinct`` (a table of flags for small patterns, a sort for large ones) gives
    exactly ``np.unique`` of the keys, with repeats, the empty set and both ends of the range."""
    from kynemapy.linalg import sparsity

    rng = np.random.default_rng(7)
    for bound in (1, 50, 4096, sparsity._FLAG_TABLE_MAX, sparsity._FLAG_TABLE_MAX + 1, 10**10):
        for size in (0, 1, 1000):
            keys = rng.integers(0, bound, size=size, dtype=np.int64)
            if size:
                keys[0], keys[-1] = 0, bound - 1
                keys = np.concatenate([keys, keys[: size // 2]])  # repeats
            got = sparsity._distinct(keys, bound)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, np.unique(keys))


def test_a_compile_notice_after_an_open_progress_line_starts_its_own_line(capsys: pytest.CaptureFixture[str]) -> None:
    from kynemapy.engine import notice as _notice
    from kynemapy.run.progress import ProgressBar

    bar = ProgressBar(10, 0.1)
    bar.update(1, 0.1, force=True)  # a partial line on stderr, no newline
    with _notice.announce("the probe", 3.0):
        pass
    bar.close(1.0)
    err = capsys.readouterr().err
    first, notice_line = err.split("\n")[:2]
    assert first.startswith("\r[") and "kynemapy" not in first
    assert notice_line.startswith("kynemapy: compiling the probe (") and notice_line.rstrip().endswith(" s")
    with _notice.announce("the probe", 3.0):  # no bar open: no empty line
        pass
    assert capsys.readouterr().err.startswith("kynemapy: compiling the probe (")


ONE_SIGNATURE = """
import json
import numpy as np
from kynemapy.collision import narrow
from kynemapy.run import nnls
out, poly = np.zeros((16, narrow.ROW)), np.zeros((2, 16, 3))
q, half = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.1, 0.1, 0.1])
for ka in (narrow.SPHERE, narrow.CAPSULE, narrow.BOX):
    for kb in (narrow.SPHERE, narrow.CAPSULE, narrow.BOX):
        narrow.collide(ka, np.zeros(3), q, half, kb, np.array([0.0, 0.0, 0.15]), q, half, 1e-3, out, poly)
    narrow.collide_plane(ka, np.zeros(3), q, half, np.array([0.0, 0.0, 1.0]), -0.05, 1e-3, out)
nnls.solve(np.array([[1.0, 0.0], [-1.0, 1.0], [0.5, 2.0]]), np.array([1.0, 0.0, 0.5]))
counts = {}
for module in (narrow, nnls):
    for attr, value in vars(module).items():
        if hasattr(value, "signatures") and value.py_func.__module__ == module.__name__:
            counts[module.__name__ + "." + attr] = len(value.signatures)
print(json.dumps(counts))
"""


@pytest.mark.slow
def test_the_collision_and_contact_kernels_compile_once_not_once_per_literal_argument(tmp_path: Path) -> None:
    """numba types a literal argument of a compiled call inside compiled code (``0``, ``True``) as a
    type of its own and compiles the callee once per value: the collision and contact kernels
    compiled 2-4 times each (23 s of the hard-contact stages' 64 s of CPU, 2026-12-02).  From an
    empty cache, after the narrow phase of every pair of shape kinds and against a plane and one
    non-negative least-squares solve, every kernel of the two modules has been compiled for one
    signature (the callees' signatures are recorded when they compile in this process; about
    12 s of CPU with LLVM's optimizations off, most of it the narrow phase's compilation)."""
    # NUMBA_OPT=0: LLVM's optimizations off (the types compiled for do not depend on them), a
    # third of the CPU; its own empty cache, so the user's is never given unoptimized code
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT), NUMBA_OPT="0")
    proc = subprocess.run([sys.executable, "-c", ONE_SIGNATURE], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    import json

    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["kynemapy.collision.narrow.box_box"] == 1 and counts["kynemapy.run.nnls._add"] == 1, counts
    several = {name: n for name, n in counts.items() if n > 1}
    assert several == {}, several


HARD_CONTACT_THROUGH_A_JOINT = """
import json
import numba.core.event as ev
names = []
class Listener(ev.Listener):
    def on_start(self, event):
        f = event.data["dispatcher"].py_func
        names.append(f.__module__ + "." + f.__qualname__)
    def on_end(self, event):
        pass
ev.register("numba:compile", Listener())
import kynemapy as kp
b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
box = b.add_node(position=(0.0, 0.0, 0.1))
b.add_mass(box, mass=1.0, inertia=(0.007, 0.007, 0.007))
b.add_box(box, (0.1, 0.1, 0.1))
arm = b.add_node(position=(0.0, 0.0, 0.35))
b.add_mass(arm, mass=1.0, inertia=(0.001, 0.001, 0.001))
b.add_sphere(arm, 0.05)
b.add_hinge_joint(kp.GROUND, arm, (0.3, 0.0, 0.35), (0.0, 1.0, 0.0))
b.add_ground_plane(law="hard", friction=0.5)
b.set_body_contact(law="hard", friction=0.5)
sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3))
touched = 0
for _ in range(300):
    sim.step()
    touched += int(sim.joint_stops.bodies.last["shape_a"].size > 0)
print(json.dumps({"compiled": names, "coupled": sim.joint_stops.bodies.coupled, "touched": touched}))
"""


def test_hard_contact_through_a_joint_compiles_nothing_after_kynemapy_compile() -> None:
    """A sphere on a hinged arm swinging onto a box resting on a hard plane: its contacts are
    solved through the joint (``body_coupled``: the rows over the DOFs and the frictional sweeps
    called from Python).  In a new process on the cache ``kynemapy compile`` filled (the suite's
    session runs its work first), nothing compiles: the hard-contact stage covers that path (the
    sweeps' signatures from Python were compiled at a user's first such run, found 2026-12-02)."""
    proc = subprocess.run(
        [sys.executable, "-c", HARD_CONTACT_THROUGH_A_JOINT], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    import json

    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["coupled"] and result["touched"] > 50, result  # the sphere rests on the box, through the joint
    assert result["compiled"] == [], result["compiled"]
