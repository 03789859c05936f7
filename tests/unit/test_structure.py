"""The package's shape: no import cycle, no reaching into another module's private names,
a top level with only the public entry points, and nothing compiled at import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import kynemapy

PACKAGE = Path(kynemapy.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def module_level_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(imported module, imported names) of the imports executed when the module is imported:
    top level and ``if`` blocks, not functions, not ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text())
    module = module_name(path)
    out: list[tuple[str, list[str]]] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                out.extend((alias.name, []) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                out.append((resolve(module, node, path.name == "__init__.py"), [a.name for a in node.names]))
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return out


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, names in module_level_imports(path):
            for candidate in [target] + [f"{target}.{n}" for n in names]:
                if candidate in modules and candidate != name:
                    edges[name].add(candidate)
            # importing a submodule runs its packages' __init__ first
            parts = target.split(".")
            for k in range(1, len(parts)):
                parent = ".".join(parts[:k])
                if parent in modules and parent != name and not name.startswith(parent + "."):
                    edges[name].add(parent)
    return edges


def test_no_import_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycle = [*stack[stack.index(t) :], t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                dfs(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            dfs(m)


def test_no_module_imports_another_modules_private_names() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for target, names in module_level_imports(path):
            if target.startswith("kynemapy"):
                offenders += [f"{module_name(path)} imports {target}.{n}" for n in names if n.startswith("_")]
    assert not offenders, offenders


def test_top_level_holds_only_the_public_entry_points() -> None:
    files = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert files == ["__init__.py", "__main__.py", "_arena.py", "_jit.py", "cli.py"]
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    expected = [
        "analysis",
        "analytic",
        "collision",
        "engine",
        "integrators",
        "io",
        "linalg",
        "math",
        "model",
        "post",
        "run",
        "validation",
    ]
    assert packages == expected


def test_importing_compiles_nothing() -> None:
    code = (
        "import kynemapy, numba\n"
        "from kynemapy.engine import entry, step\n"
        "from kynemapy.engine.elements import masses\n"
        "from kynemapy.engine.constraints import dispatch\n"
        "compiled = [f for f in (entry.run_task, entry.run_task_at, step.predict, masses.mass_element_terms,"
        " dispatch.evaluate) if f.signatures]\n"
        "assert not compiled, compiled\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_stepping_kynemas_kinds_imports_no_beam_contact_joint_or_sparse_kernels() -> None:
    """A warm process pays for every module it imports (each compiled function's dispatcher and
    cache set-up): the beams' kernels, the contacts', the two-body joints', the sparse LU's, the
    rows' energy kernels, ``scipy.sparse`` (and its solvers: initial velocities that need a
    projection) and h5py (result files) load only for a model or a task that needs them;
    and a model with beams and the sparse solver, or with a hinge, then imports them and steps
    (the pendulum on its hinge about y falls in x-z, nothing along y)."""
    code = (
        "import sys, kynemapy as kp\n"
        "b = kp.ModelBuilder(gravity=(0, 0, -9.81))\n"
        "n = b.add_node(position=(1, 0, 0))\n"
        "b.add_mass(n, mass=1.0, inertia=(0.1, 0.1, 0.1))\n"
        "b.add_spherical_joint(n, point=(0, 0, 0))\n"
        "sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01))\n"
        "sim.step(); sim.advance(3)\n"
        "later = {'kynemapy.engine.elements.beams.phase', 'kynemapy.engine.elements.beams.qp',\n"
        "         'kynemapy.engine.elements.contacts', 'kynemapy.engine.elements.pairs',\n"
        "         'kynemapy.engine.sparse_unit', 'kynemapy.linalg.sparse_lu', 'kynemapy.engine.invariants',\n"
        "         'kynemapy.engine.constraints.body_phase', 'kynemapy.engine.constraints.body_joints',\n"
        "         'scipy.sparse', 'scipy.sparse.linalg', 'h5py'}\n"
        "assert not later & set(sys.modules), sorted(later & set(sys.modules))\n"
        "b = kp.ModelBuilder()\n"
        "nodes = [b.add_node(position=(x, 0, 0)) for x in (0.0, 0.5, 1.0)]\n"
        "b.add_beam_element(nodes, [0.0, 0.5, 1.0], [(0.1, 1 / 3), (0.5, 1 / 3), (0.9, 1 / 3)], [0.0, 1.0],\n"
        "                   [np.eye(6)] * 2, [1e4 * np.eye(6)] * 2)\n"
        "b.add_fixed_bc(nodes[0])\n"
        "sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, solver='sparse'))\n"
        "sim.set_load(nodes[2], (0, 0, 1.0)); sim.advance(2)\n"
        "assert {'kynemapy.engine.elements.beams.phase', 'kynemapy.engine.sparse_unit'} <= set(sys.modules)\n"
        "assert abs(sim.state.q[nodes[2], 2]) > 0.0\n"
        "b = kp.ModelBuilder(gravity=(0, 0, -9.81))\n"
        "n = b.add_node(position=(1, 0, 0))\n"
        "b.add_mass(n, mass=1.0, inertia=(0.1, 0.1, 0.1))\n"
        "b.add_hinge_joint(-1, n, (0, 0, 0), (0, 1, 0))\n"
        "sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01))\n"
        "sim.advance(5)\n"
        "assert 'kynemapy.engine.constraints.body_phase' in sys.modules\n"
        "assert sim.state.q[n, 2] < -1e-4 and abs(sim.state.q[n, 1]) < 1e-12\n"
    )
    subprocess.run([sys.executable, "-c", "import numpy as np\n" + code], check=True)


def test_the_newton_loop_reads_fields_of_the_data_by_name_never_the_whole_data() -> None:
    """``engine.entry.run_task_at`` reads each field it uses from the stored Data alone
    (``load_field``, by a name that must be a field of ``Data``), and no module of the package
    loads the whole Data (``load_data``: ~730 words, an aggregate that LLVM splits slowly at the
    first compilation; the result-file kernel that did compiled in 4 s instead of 1 s)."""
    from kynemapy.engine.fields import Data

    source = (PACKAGE / "engine" / "entry.py").read_text()
    loop = next(
        node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name == "run_task_at"
    )
    calls = [node for node in ast.walk(loop) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    names = [call.args[2].value for call in calls if call.func.id == "load_field"]
    assert len(names) >= 30 and set(names) <= set(Data._fields), set(names) - set(Data._fields)
    whole = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "load_data":
                whole.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert whole == []


def test_the_code_map_names_every_module() -> None:
    # docs/algorithm.md's code map: each module by its path, or its whole package by "package/"
    text = (PACKAGE.parent / "docs" / "algorithm.md").read_text(encoding="utf-8")
    code_map = text[text.index("## Code map") :]
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if path.name in ("__init__.py", "__main__.py") and rel.count("/") == 0:
            continue
        folder = rel.split("/")[0] + "/"
        if f"`{rel}`" not in code_map and f"`{folder}`" not in code_map and not _listed_with_glob(rel, code_map):
            missing.append(rel)
    assert not missing, f"modules missing from docs/algorithm.md's code map: {missing}"


def _listed_with_glob(rel: str, code_map: str) -> bool:
    """``engine/constraints/*.py`` covers every module of that folder; a package's
    ``__init__.py`` is covered by its other modules' rows."""
    folder = rel.rsplit("/", 1)[0]
    return f"`{folder}/*.py`" in code_map or (rel.endswith("__init__.py") and f"`{folder}/" in code_map)


def all_imports(path: Path) -> list[str]:
    """The kynemapy modules ``path`` imports anywhere, inside functions too: for ``from package
    import name`` the submodule when ``name`` is one, else the package."""
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    module = module_name(path)
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names if alias.name in modules]
        elif isinstance(node, ast.ImportFrom):
            target = resolve(module, node, path.name == "__init__.py")
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append(sub if sub in modules else target)
    return [m for m in out if m in modules and m != module]


def test_no_import_cycle_even_through_imports_inside_functions() -> None:
    """A deferred import does not make a cycle honest: no module imports (anywhere) one that
    imports it back.  The root package is left out (``kynemapy.__version__`` is read everywhere,
    and ``import kynemapy`` loads the public entry points lazily)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {m: {t for t in all_imports(p) if t != "kynemapy"} for m, p in modules.items()}
    cycles = []
    for m, targets in sorted(edges.items()):
        for t in sorted(targets):
            if m in edges.get(t, ()) and m < t:
                cycles.append(f"{m} <-> {t}")
    # longer cycles: a module reachable from itself
    for start in sorted(edges):
        seen, todo = set(), [start]
        while todo:
            for t in edges[todo.pop()]:
                if t == start:
                    cycles.append(f"{start} reaches itself")
                    todo = []
                    break
                if t not in seen and not start.startswith(t + "."):  # a package's own __init__
                    seen.add(t)
                    todo.append(t)
    assert not cycles, cycles


#: the data flow model → (collision) → engine → run → io → (analysis) → post, as imports: each layer may
#: import the layers before it, none after it (io is the file library the run writes through: it never
#: imports run; collision is the geometry a contact solver calls, independent of the engine)
LAYERS = ("model", "collision", "engine", "io", "run", "analysis", "post")

#: known edges against the flow, left to the engine's owner: the beam set-up arithmetic (shape
#: functions, quadrature, sectional tables) lives in engine.elements.beams; the model uses it
AGAINST_THE_FLOW_ALLOWED = {
    ("kynemapy.model.beams", "kynemapy.engine.elements.beams.shape"),
    ("kynemapy.model.beams", "kynemapy.engine.elements.beams.quadrature"),
    ("kynemapy.model.builder", "kynemapy.engine.elements.beams.sections"),
    ("kynemapy.model.file", "kynemapy.engine.params"),
}


def test_the_data_flows_one_way() -> None:
    back = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        layer = module.split(".")[1] if module.count(".") else ""
        if layer not in LAYERS:
            continue
        for target in all_imports(path):
            to = target.split(".")[1] if target.count(".") else ""
            if to in LAYERS and LAYERS.index(to) > LAYERS.index(layer):
                if (module, target) not in AGAINST_THE_FLOW_ALLOWED:
                    back.append(f"{module} imports {target}")
    assert not back, sorted(set(back))


def test_result_files_are_split_by_role_and_energies_are_the_engines() -> None:
    """io/hdf5.py held the writer, the reader, salvage, a superblock parser and the energies
    (1 586 lines): each role is a module of its own, the energies sit beside the engine's
    invariants, and the old import paths keep their names."""
    import kynemapy.engine.energies as energies
    import kynemapy.io as kio
    import kynemapy.io.hdf5 as hdf5

    sizes = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "io").glob("*.py")}
    assert max(sizes.values()) < 600, sizes
    assert {"writer.py", "reader.py", "salvage.py", "superblock.py", "checksums.py"} <= set(sizes)
    for name in ("energy_and_momentum", "row_invariants"):
        assert getattr(kio, name) is getattr(hdf5, name) is getattr(energies, name)
    assert hdf5.read is kio.read and hdf5.ResultWriter is kio.ResultWriter and hdf5.Result is kio.Result


def test_the_unit_tier_holds_no_cli_dask_or_file_fault_tests() -> None:
    """tests/unit held the command line's, Dask's and damaged files' tests: each has its tier."""
    tests = PACKAGE.parent / "tests"
    unit = {p.name for p in (tests / "unit").glob("test_*.py")}
    assert {"test_cli_text.py", "test_run_stops.py", "test_sweep.py", "test_salvage.py"}.isdisjoint(unit)
    for tier in ("cli", "ensembles", "io"):
        assert any((tests / tier).glob("test_*.py")), tier
    for path in (tests / "unit").glob("test_*.py"):
        text = path.read_text()
        dask = ("from " + "distributed import", "import " + "dask")  # split: this file is in the tier
        assert not any(words in text for words in dask), path.name


def test_the_mass_kernel_reads_its_own_table() -> None:
    # masses.terms takes the Data by its address and reads Data.tables[masses.POSITION]
    from kynemapy.engine import elements
    from kynemapy.engine.elements import masses

    assert elements.TABLES[masses.POSITION] is masses
    assert masses.POSITION == elements.MASSES
