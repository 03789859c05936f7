"""Model files (``kynemapy.model.file``): the example TOML files reproduce Kynema, bad files fail clearly.

* ``examples/heavy_top.toml`` builds exactly the model of ``examples/heavy_top.py`` and its
  400 steps reproduce Kynema-FMB's HeavyTopTest q to 1e-10.
* ``examples/floating_platform.toml`` (Kynema's CFD-interface floating platform, R10) with
  ``apply_loads`` at t = i·h before step i reproduces Kynema's platform q to 1e-12.
* A table of bad files: each raises ``ModelFileError`` (a ``ModelError``) naming the item and
  key, and the line (marked ``# <-`` in the text) for unknown keys and wrong types.
* Load expressions: values, and rejection of everything outside the safe grammar.
"""

from __future__ import annotations

import importlib.util
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.model.builder import ModelError
from kynemapy.model.file import Expression, ModelFileError, load_model_file, parse_model_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _heavy_top_example():
    spec = importlib.util.spec_from_file_location("heavy_top_example", EXAMPLES / "heavy_top.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_models_equal(a: kp.Model, b: kp.Model) -> None:
    for name in kp.Model._fields:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, name
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


# ------------------------------------------------------------------------------- heavy top
def test_heavy_top_file_builds_the_example_model_and_reproduces_kynema() -> None:
    example = _heavy_top_example()
    reference, top = example.build_heavy_top()
    mf = load_model_file(EXAMPLES / "heavy_top.toml")
    assert_models_equal(mf.model, reference)
    assert mf.nodes == {"top": 0, "pin": 1} and mf.nodes["top"] == top
    assert mf.constraints == {"joint": 0, "pivot": 1}
    assert mf.params == kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, atol=1e-5, rtol=1e-3)
    assert mf.n_steps == 400 and mf.t_end == pytest.approx(0.8)
    assert mf.output == {"path": "heavy_top.h5", "every": 1, "block": None}
    assert mf.loads == () and mf.source == EXAMPLES / "heavy_top.toml"

    sim = kp.Simulation(mf.model, mf.params)
    for i in range(mf.n_steps):
        mf.apply_loads(sim, i * mf.params.h)  # no loads: a no-op
        assert sim.step().converged
    np.testing.assert_allclose(sim.state.q[mf.nodes["top"]], example.KYNEMA_Q400, rtol=0.0, atol=1e-10)


# ------------------------------------------------------------------------ floating platform
PLATFORM_Q100 = np.array(
    [
        3.4379940641493395e-06,
        0.0036709089002912518,
        0.0034998271929752248,
        0.99999999992274302,
        1.3448158662549561e-06,
        1.2713890988278111e-06,
        1.2291853012439073e-05,
    ]
)


def _platform_builder_model() -> kp.Model:
    zero6 = (0.0,) * 6
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.8124))
    platform = b.add_node(position=(0.0, 0.0, -7.53), acceleration=zero6)
    b.add_mass(platform, mass_matrix=np.diag([1.419625e7] * 3 + [1.2898e10, 1.2851e10, 1.4189e10]))
    fairleads = ((-40.87, 0.0, -14.0), (20.43, -35.39, -14.0), (20.43, 35.39, -14.0))
    anchors = ((-105.47, 0.0, -58.4), (52.73, -91.34, -58.4), (52.73, 91.34, -58.4))
    for fp, ap in zip(fairleads, anchors, strict=True):
        fairlead = b.add_node(position=fp, acceleration=zero6)
        anchor = b.add_node(position=ap, acceleration=zero6)
        b.add_fixed_bc_3dof(anchor)
        b.add_rigid_joint_6dof_to_3dof(platform, fairlead)
        b.add_spring(fairlead, anchor, 48.9e3, 55.432)
    return b.build()


def test_floating_platform_file_reproduces_kynema() -> None:
    mf = load_model_file(EXAMPLES / "floating_platform.toml")
    assert mf.model.n_dofs == 42
    np.testing.assert_array_equal(mf.model.node_dofs, [6, 3, 3, 3, 3, 3, 3])
    assert_models_equal(mf.model, _platform_builder_model())
    assert list(mf.nodes) == ["platform", "fairlead1", "anchor1", "fairlead2", "anchor2", "fairlead3", "anchor3"]
    assert list(mf.nodes.values()) == list(range(7))
    assert mf.constraints["mooring2_anchor"] == 2 and mf.constraints["mooring3_fairlead"] == 5
    assert mf.params == kp.StepParameters(h=0.01, rho_inf=0.0, max_iter=5)
    assert mf.n_steps == 101

    # the loads are Kynema's (R10) at any t
    f_s = 1907514.4912628897
    buoyancy = f_s + 9.8124 * 1.419625e7
    for t in (0.0, 0.37, 1.0):
        s20 = math.sin(2.0 * math.pi / 20.0 * t)
        expected = [
            0.0,
            1e6 * s20,
            buoyancy + 0.5 * f_s * s20,
            5e5 * math.sin(2.0 * math.pi / 15.0 * t),
            1e6 * math.sin(2.0 * math.pi / 30.0 * t),
            2e7 * math.sin(2.0 * math.pi / 60.0 * t),
        ]
        np.testing.assert_allclose(mf.load_vector(t)[0], expected, rtol=1e-15, atol=1e-9)
        np.testing.assert_array_equal(mf.load_vector(t)[1:], 0.0)

    sim = kp.Simulation(mf.model, mf.params)
    platform = mf.nodes["platform"]
    for i in range(mf.n_steps):
        mf.apply_loads(sim, i * mf.params.h)  # Kynema: loads of step i at t = i·h, before the step
        assert sim.step().converged
    np.testing.assert_allclose(sim.state.q[platform], PLATFORM_Q100, rtol=0.0, atol=1e-12)
    for anchor in ("anchor1", "anchor2", "anchor3"):
        np.testing.assert_allclose(sim.state.q[mf.nodes[anchor], :3], 0.0, atol=1e-12)


# ------------------------------------------------------------------------- schema coverage
ALL_KINDS = """
[model]
gravity = [0, 0, -9.81]

[[node]]
name = "a"
position = [0, 0, 0]

[[node]]
name = "b"
position = [1, 0, 0]
orientation = [0.7071067811865476, 0, 0, 0.7071067811865476]
velocity = [0, 0.1, 0, 0, 0, 0.2]
displacement = [0.01, 0, 0, 1, 0, 0, 0]

[[node]]
name = "c"
position = [1, 0, 0]

[[node]]
name = "d"
position = [2, 0, 0]

[[mass]]
node = "b"
mass = 2
inertia = [[1, 0.1, 0], [0.1, 2, 0], [0, 0, 3]]

[[mass]]
node = "c"
mass_matrix = [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0],
               [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]

[[mass]]
node = "d"
mass = 1.5
inertia = [0.1, 0.2, 0.3]

[[spring]]
nodes = ["c", "d"]
stiffness = 10
undeformed_length = 0.5

[[constraint]]
kind = "prescribed_bc"
name = "root"
node = "a"
initial_displacement = [0, 0, 0.1, 1, 0, 0, 0]

[[constraint]]
kind = "revolute_joint"
name = "hinge"
base = "a"
target = "b"
brake_torque = 5.0

[[constraint]]
kind = "rotation_control"
base = "b"
target = "c"
axis = [0, 0, 1]
angle = 0.25

[[constraint]]
kind = "spherical_joint"
name = "ball"
body = "d"
point = [3, 0, 0]

[[constraint]]
kind = "rigid_joint"
base = "c"
target = "d"

[[constraint]]
kind = "fixed_bc"
node = "a"

[[constraint]]
kind = "prescribed_bc_3dof"
node = "ball.pin"
initial_displacement = [0, 0, 0]

[step]
h = 0.01
rho_inf = 0.5
max_iter = 7
atol = 1e-6
rtol = 1e-4
geometric_stiffness = true
dynamic = true
static_load_retries = 3
predictor = "last"

[run]
t_end = 0.5

[output]
path = "out/all.h5"
every = 5
block = 64
"""


def test_every_kind_builds_like_the_builder(tmp_path: Path) -> None:
    path = tmp_path / "all.toml"
    path.write_text(ALL_KINDS)
    mf = load_model_file(path)
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    a = b.add_node(position=(0, 0, 0))
    n_b = b.add_node(
        position=(1, 0, 0),
        orientation=(0.7071067811865476, 0, 0, 0.7071067811865476),
        velocity=(0, 0.1, 0, 0, 0, 0.2),
        displacement=(0.01, 0, 0, 1, 0, 0, 0),
    )
    c = b.add_node(position=(1, 0, 0))
    d = b.add_node(position=(2, 0, 0))
    b.add_mass(n_b, mass=2.0, inertia=[[1, 0.1, 0], [0.1, 2, 0], [0, 0, 3]])
    b.add_mass(c, mass_matrix=np.eye(6))
    b.add_mass(d, mass=1.5, inertia=(0.1, 0.2, 0.3))
    b.add_spring(c, d, 10.0, 0.5)
    b.add_prescribed_bc(a, (0, 0, 0.1, 1, 0, 0, 0))
    b.add_revolute_joint(a, n_b, brake_torque=5.0)
    b.add_rotation_control(n_b, c, axis=(0, 0, 1), angle=0.25)
    ball = b.add_spherical_joint(d, point=(3, 0, 0))
    b.add_rigid_joint(c, d)
    b.add_fixed_bc(a)
    b.add_prescribed_bc_3dof(ball.pin, (0, 0, 0))
    assert_models_equal(mf.model, b.build())
    assert mf.nodes == {"a": 0, "b": 1, "c": 2, "d": 3, "ball.pin": 4}
    assert mf.constraints == {"root": 0, "hinge": 1, "ball": 3, "ball.bc": 4}
    assert mf.params == kp.StepParameters(
        h=0.01,
        rho_inf=0.5,
        max_iter=7,
        atol=1e-6,
        rtol=1e-4,
        geometric_stiffness=True,
        dynamic=True,
        static_load_retries=3,
        predictor="last",
    )
    assert mf.t_end == 0.5 and mf.n_steps == 50
    assert mf.output == {"path": "out/all.h5", "every": 5, "block": 64}


def test_defaults_and_t_end_rounding() -> None:
    mf = parse_model_file('[[node]]\nname = "n"\n[step]\nh = 0.002\n[run]\nt_end = 0.8\n')
    assert mf.n_steps == 400  # 0.8/0.002 = 400.00000000000006 counts as 400
    assert mf.output == {"path": None, "every": 1, "block": None}
    assert mf.params == kp.StepParameters(h=0.002)
    np.testing.assert_array_equal(mf.model.gravity, 0.0)
    np.testing.assert_array_equal(mf.model.x0, [[0, 0, 0, 1, 0, 0, 0]])
    mf = parse_model_file('[[node]]\nname = "n"\n[step]\nh = 0.3\n[run]\nt_end = 1.0\n')
    assert mf.n_steps == 4  # rounded up
    mf = parse_model_file('[[node]]\nname = "n"\n[step]\nh = 0.3\n')
    assert mf.n_steps is None and mf.t_end is None


def test_apply_loads_sums_loads_per_node_and_leaves_other_rows() -> None:
    text = textwrap.dedent(
        """
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[mass]]
        node = "a"
        mass = 1
        inertia = [1, 1, 1]
        [[mass]]
        node = "b"
        mass = 1
        inertia = [1, 1, 1]
        [[load]]
        node = "a"
        force = [1, "2*t", 0]
        [[load]]
        node = "a"
        force = [10, 0, 0]
        moment = [0, 0, "-t**2"]
        [step]
        h = 0.1
        """
    )
    mf = parse_model_file(text)
    sim = kp.Simulation(mf.model, mf.params)
    sim.inputs.f[1] = 7.0  # not touched by the file's loads
    sim.inputs.f[0] = 99.0  # overwritten
    mf.apply_loads(sim, 3.0)
    np.testing.assert_array_equal(sim.inputs.f[0], [11.0, 6.0, 0.0, 0.0, 0.0, -9.0])
    np.testing.assert_array_equal(sim.inputs.f[1], 7.0)
    assert isinstance(mf.loads[0].components[0], float)
    assert isinstance(mf.loads[0].components[1], Expression)


def test_load_evaluation_errors_name_the_load_and_time() -> None:
    text = '[[node]]\nname = "a"\n[[load]]\nnode = "a"\nforce = ["1/t", 0, 0]\n[step]\nh = 0.1\n'
    mf = parse_model_file(text)
    assert mf.load_vector(2.0)[0, 0] == 0.5
    with pytest.raises(ModelFileError, match=r"load #1 \(node 'a'\) force\[0\] = '1/t': cannot evaluate at t = 0.0"):
        mf.load_vector(0.0)


# ------------------------------------------------------------------------------ bad files
NODE = '[[node]]\nname = "top"\nposition = [0, 1, 0]\n'
STEP = "[step]\nh = 0.01\n"

#: (id, text, message fragments, expect_line): the expected line carries the marker "# <-".
BAD_FILES = [
    ("toml-syntax", "[model # <-\ngravity = [0, 0, -9.81]\n", ["TOML syntax error"], True),
    ("toml-unterminated", NODE + STEP + "[model]\ngravity = [0, 0, # <-\n", ["TOML syntax error"], True),
    ("unknown-table", NODE + STEP + "[solver] # <-\ntype = 'lu'\n", ["unknown top-level table 'solver'"], True),
    ("unknown-top-key", "gravity = [0, 0, -9.81] # <-\n" + NODE + STEP, ["unknown top-level key 'gravity'"], True),
    (
        "unknown-node-key",
        '[[node]]\nname = "top"\npositon = [0, 1, 0] # <-\n' + STEP,
        ["unknown key 'positon'", "[[node]]", "node #1 'top'"],
        True,
    ),
    (
        "unknown-mass-key",
        NODE
        + STEP
        + '[[mass]]\nnode = "top"\nmass = 1\ninertia = [1, 1, 1]\n'
        + '[[mass]]\nnode = "top"\nmass_matrix = [\n  [1, 0, 0, 0, 0, 0],\n  [0, 1, 0, 0, 0, 0],\n'
        + "  [0, 0, 1, 0, 0, 0],\n  [0, 0, 0, 1, 0, 0],\n  [0, 0, 0, 0, 1, 0],\n  [0, 0, 0, 0, 0, 1],\n]\n"
        + "mas = 3 # <-\n",
        ["unknown key 'mas'", "[[mass]]", "mass #2 (node 'top')"],
        True,
    ),
    ("unknown-step-key", NODE + "[step]\nh = 0.01\ndt = 0.01 # <-\n", ["unknown key 'dt'", "[step]"], True),
    (
        "key-not-of-kind",
        NODE + STEP + '[[constraint]]\nkind = "fixed_bc"\nnode = "top"\naxis = [1, 0, 0] # <-\n',
        ["unknown key 'axis'", "[[constraint]] of kind 'fixed_bc'", "constraint #1 (fixed_bc)"],
        True,
    ),
    (
        "unknown-key-after-multiline-string",
        '[[node]]\nname = """top\n[fake]\nfoo = 1"""\n' + "[[node]]\nname = 'x'\nfoo = 2 # <-\n" + STEP,
        ["unknown key 'foo'", "node #2 'x'"],
        True,
    ),
    (
        "wrong-type-position",
        '[[node]]\nname = "top"\nposition = "abc" # <-\n' + STEP,
        ["key 'position'", "expected an array of 3 finite numbers [m]", "'abc' (string)"],
        True,
    ),
    (
        "wrong-type-position-length",
        '[[node]]\nname = "top"\nposition = [0, 1] # <-\n' + STEP,
        ["key 'position'", "expected an array of 3", "[0, 1] (array)"],
        True,
    ),
    (
        "wrong-type-mass",
        NODE + STEP + '[[mass]]\nnode = "top"\nmass = "heavy" # <-\ninertia = [1, 1, 1]\n',
        ["mass #1 (node 'top')", "key 'mass'", "expected a number [kg]", "'heavy'"],
        True,
    ),
    (
        "wrong-type-inertia",
        NODE + STEP + '[[mass]]\nnode = "top"\nmass = 1\ninertia = [1, 2] # <-\n',
        ["key 'inertia'", "3 numbers (principal values) or 3×3"],
        True,
    ),
    ("wrong-type-h", NODE + '[step]\nh = "0.01" # <-\n', ["[step]", "key 'h'", "expected a number [s]"], True),
    ("wrong-type-max-iter", NODE + "[step]\nh = 0.01\nmax_iter = 2.5 # <-\n", ["key 'max_iter'", "integer"], True),
    (
        "wrong-type-gravity",
        "[model]\ngravity = -9.81 # <-\n" + NODE + STEP,
        ["[model]", "key 'gravity'", "-9.81 (float)"],
        True,
    ),
    (
        "wrong-type-load",
        NODE + STEP + '[[load]]\nnode = "top"\nforce = [1, 2, true] # <-\n',
        ["load #1 (node 'top')", "key 'force'", "expressions of t"],
        True,
    ),
    ("wrong-type-name", "[[node]]\nname = 3 # <-\n" + STEP, ["node #1", "key 'name'", "string"], True),
    ("node-not-array", '[node] # <-\nname = "top"\n' + STEP, ["'node' must be an array of tables", "[[node]]"], True),
    (
        "unknown-node-in-mass",
        NODE + STEP + '[[mass]]\nnode = "tpo" # <-\nmass = 1\ninertia = [1, 1, 1]\n',
        ["mass #1 (node 'tpo')", "unknown node 'tpo'", "'top'"],
        True,
    ),
    (
        "unknown-node-in-spring",
        NODE + STEP + '[[spring]]\nnodes = ["top", "ground"] # <-\nstiffness = 1\nundeformed_length = 0\n',
        ["spring #1", "unknown node 'ground'"],
        True,
    ),
    (
        "unknown-node-in-constraint",
        NODE + STEP + '[[constraint]]\nkind = "rigid_joint"\nname = "weld"\nbase = "bse" # <-\ntarget = "top"\n',
        ["constraint #1 (rigid_joint 'weld')", "key 'base'", "unknown node 'bse'"],
        True,
    ),
    (
        "unknown-node-in-load",
        NODE + STEP + '[[load]]\nnode = "bottom" # <-\nforce = [1, 0, 0]\n',
        ["load #1 (node 'bottom')", "unknown node 'bottom'"],
        True,
    ),
    (
        "duplicate-node",
        NODE + '[[node]]\nname = "top" # <-\n' + STEP,
        ["duplicate node name 'top'", "node #2", "first defined on line 2"],
        True,
    ),
    (
        "duplicate-constraint",
        NODE
        + STEP
        + '[[constraint]]\nkind = "fixed_bc"\nname = "c"\nnode = "top"\n'
        + '[[constraint]]\nkind = "fixed_bc"\nname = "c" # <-\nnode = "top"\n',
        ["duplicate constraint name 'c'", "constraint #2"],
        True,
    ),
    ("missing-mass-node", NODE + STEP + "[[mass]]\nmass = 1\n", ["mass #1", "missing required key 'node'"], False),
    (
        "missing-spring-key",
        NODE + '[[node]]\nname = "b"\n' + STEP + '[[spring]]\nnodes = ["top", "b"]\nstiffness = 1\n',
        ["spring #1", "missing required key 'undeformed_length'"],
        False,
    ),
    (
        "missing-constraint-key",
        NODE + STEP + '[[constraint]]\nkind = "rotation_control"\nbase = "top"\ntarget = "top"\n',
        ["constraint #1 (rotation_control)", "missing required key 'axis'"],
        False,
    ),
    ("missing-step", NODE, ["missing table [step]"], False),
    ("no-nodes", STEP, ["no nodes"], False),
    (
        "unknown-kind",
        NODE + STEP + '[[constraint]]\nkind = "gear_joint" # <-\nnode = "top"\n',
        ["unknown constraint kind 'gear_joint'", "spherical_joint"],
        True,
    ),
    (
        "unsafe-expression",
        NODE + STEP + '[[load]]\nnode = "top"\nforce = [0, "__import__(\'os\')", 0] # <-\n',
        ["load #1 (node 'top')", "force[1]", "__import__('os')", "'__import__' is not allowed"],
        True,
    ),
    (
        "attribute-expression",
        NODE + STEP + '[[load]]\nnode = "top"\nmoment = ["t.real", 0, 0] # <-\n',
        ["load #1 (node 'top')", "moment[0]", "'t.real'", "attribute access"],
        True,
    ),
    (
        "invalid-expression-syntax",
        NODE + STEP + '[[load]]\nnode = "top"\nforce = ["sin(t", 0, 0] # <-\n',
        ["load #1 (node 'top')", "'sin(t'", "syntax error"],
        True,
    ),
    (
        "constant-expression-overflow",
        NODE + STEP + '[[load]]\nnode = "top"\nforce = ["10**10**10", 0, 0] # <-\n',
        ["load #1 (node 'top') force[0]", "'10**10**10'", "cannot evaluate"],
        True,
    ),
    (
        "negative-mass",
        NODE
        + STEP
        + '[[mass]]\nnode = "top"\nmass = 1\ninertia = [1, 1, 1]\n'
        + '[[mass]]\nnode = "top"\nmass = -2 # <-\ninertia = [1, 1, 1]\n',
        ["mass #2 (node 'top'): mass must be a finite number > 0 kg, got -2"],
        True,
    ),
    (
        "non-unit-quaternion",
        '[[node]]\nname = "top"\norientation = [1, 1, 0, 0] # <-\n' + STEP,
        ["node #1 'top'", "orientation", "unit length"],
        True,
    ),
    (
        "spring-to-itself",
        NODE + STEP + '[[spring]] # <-\nnodes = ["top", "top"]\nstiffness = 1\nundeformed_length = 0\n',
        ["spring #1 (nodes 'top', 'top')", "joins node 0 to itself"],
        True,
    ),
    ("bad-rho-inf", NODE + "[step]\nh = 0.01\nrho_inf = 2 # <-\n", ["[step]", "rho_inf must lie in [0, 1]"], True),
    (
        "run-both",
        NODE + STEP + "[run] # <-\nt_end = 1.0\nn_steps = 100\n",
        ["[run]", "exactly one of t_end [s] or n_steps"],
        True,
    ),
    ("output-every", NODE + STEP + '[output]\npath = "o.h5"\nevery = 0 # <-\n', ["[output]", "key 'every'"], True),
]


@pytest.mark.parametrize(
    ("text", "fragments", "expect_line"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES]
)
def test_bad_file_raises_a_clear_error(tmp_path: Path, text: str, fragments: list[str], expect_line: bool) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ModelFileError) as info:
        load_model_file(path)
    error = info.value
    assert isinstance(error, ModelError) and isinstance(error, ValueError)
    message = str(error)
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if expect_line:
        line = next(i for i, text_line in enumerate(text.splitlines(), start=1) if "# <-" in text_line)
        assert error.line == line, message
        assert f"line {line}:" in message


def test_bad_file_table_is_large_enough() -> None:
    assert len(BAD_FILES) >= 12


def test_builder_errors_keep_their_cause() -> None:
    with pytest.raises(ModelFileError) as info:
        parse_model_file(NODE + STEP + '[[mass]]\nnode = "top"\nmass = 0\ninertia = [1, 1, 1]\n')
    assert isinstance(info.value.__cause__, ModelError)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[[node]]\nname = "caf\xe9"\n')
    with pytest.raises(ModelFileError, match="line 2: not UTF-8"):
        load_model_file(path)


# ----------------------------------------------------------------------------- expressions
@pytest.mark.parametrize(
    ("text", "t", "value"),
    [
        ("t", 0.5, 0.5),
        ("2*t + 1", 0.5, 2.0),
        ("-t**2", 3.0, -9.0),
        ("(1 + t) / 2", 3.0, 2.0),
        ("2**3", 0.0, 8.0),
        ("+t - -1", 1.0, 2.0),
        ("sin(pi*t)", 0.5, 1.0),
        ("cos(0)", 7.0, 1.0),
        ("exp(t)", 1.0, math.e),
        ("sqrt(t)", 16.0, 4.0),
        ("1e6 * sin(2*pi/20 * t)", 1.0, 1e6 * math.sin(2.0 * math.pi / 20.0 * 1.0)),
        ("  3  ", 0.0, 3.0),
    ],
)
def test_expression_values(text: str, t: float, value: float) -> None:
    assert Expression(text)(t) == pytest.approx(value, rel=1e-15, abs=1e-15)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("__import__('os')", "'__import__' is not allowed"),
        ("__import__('os').system('true')", "attribute access"),
        ("t.real", "attribute access"),
        ("math.sin(t)", "attribute access"),
        ("(lambda: 1)()", "lambda"),
        ("lambda t: t", "lambda"),
        ("x + 1", "unknown name 'x'"),
        ("T", "unknown name 'T'"),
        ("abs(t)", "'abs' is not allowed"),
        ("eval('1')", "'eval' is not allowed"),
        ("open('/etc/passwd')", "'open' is not allowed"),
        ("'a'", "not a real number"),
        ("True", "not a real number"),
        ("1j", "not a real number"),
        ("t if t else 1", "conditional"),
        ("[1][0]", "subscripts"),
        ("t < 1", "comparisons"),
        ("t % 2", "operator Mod"),
        ("t // 2", "operator FloorDiv"),
        ("~1", "operator Invert"),
        ("sin(t, 1)", "exactly one argument"),
        ("sin(x=t)", "exactly one argument"),
        ("sin", "must be called"),
        ("t(1)", "'t' is not allowed"),
        ("t = 1", "syntax error"),
        ("", "syntax error"),
        ("(" * 300 + "t" + ")" * 300, ""),
        ("t" + "+t" * 2000, "longer than"),
    ],
)
def test_expression_rejects_everything_outside_the_grammar(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        Expression(text)
    assert reason in str(info.value)


def test_expression_runtime_domain_errors() -> None:
    with pytest.raises(ModelFileError, match="math domain error"):
        Expression("sqrt(t - 1)", "load #1 force[0]")(0.0)
    with pytest.raises(ModelFileError, match="cannot evaluate"):
        Expression("(-8)**(1/3)")(0.0)  # float power: no complex results
    with pytest.raises(ModelFileError, match="not finite"):
        Expression("1e308 * 10 * t")(1.0)


def test_model_file_simulation_still_works_and_warns() -> None:
    """The model layer no longer builds simulations (the data flows model → engine → run):
    ``mf.simulation()`` stays, deprecated, and gives what ``kp.Simulation(mf.model, mf.params)`` gives."""
    mf = load_model_file(EXAMPLES / "heavy_top.toml")
    with pytest.warns(DeprecationWarning, match=r"kp\.Simulation\(mf\.model, mf\.params\)"):
        old = mf.simulation()
    new = kp.Simulation(mf.model, mf.params)
    old.advance(3)
    new.advance(3)
    assert old.params == mf.params and np.array_equal(old.state.q, new.state.q)
