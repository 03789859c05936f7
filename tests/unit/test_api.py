"""Public-API contracts: the functional core, lazy compilation, read-only model tables."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from models import ball_chain, beam_with_a_hinge, pendulum

import kynemapy as kp
from kynemapy.engine import api


def test_functional_core_steps_exactly_like_the_simulation() -> None:
    model = pendulum()
    params = kp.StepParameters(h=0.01, rho_inf=0.8)
    sim = kp.Simulation(model, params)
    state = sim.state.copy()
    inputs = kp.Inputs(*(np.array(a, copy=True) for a in sim.inputs))
    workspace = kp.new_workspace(model, params.max_iter)
    for _ in range(50):
        info = kp.step(model, state, inputs, workspace, params)
        assert info.converged and info.iterations == len(info.errors)
        sim.step()
    for mine, theirs in zip(state, sim.state, strict=True):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize(
    ("build", "solver"),
    [(pendulum, "dense"), (lambda: ball_chain(40), "sparse"), (lambda: beam_with_a_hinge(3), "sparse")],
)
def test_a_simulations_reference_factorization_is_that_of_a_fresh_initial_state(build, solver: str) -> None:
    """``Simulation()`` factors its reference matrix on its own state and Data (no second Data
    stored): the factors, the pivots and the state must be those of the reference made on a
    fresh initial state of a new workspace, bit for bit."""
    model = build()
    params = kp.StepParameters(h=0.01, rho_inf=0.8, solver=solver)
    sim = kp.Simulation(model, params, consistent_initial_accelerations=False, initial_velocities="keep")
    fresh = kp.new_workspace(model, params.max_iter, params.solver, params.geometric_stiffness)
    api.reference_factorization(fresh, params)
    assert sim.workspace.solver == fresh.solver == solver
    mine, theirs = sim.workspace.reference, fresh.reference
    assert mine.i.tobytes() == theirs.i.tobytes() and mine.f.tobytes() == theirs.f.tobytes()
    initial, _ = api.initial_state(model)
    for name in ("q", "v", "vd", "lam"):
        np.testing.assert_array_equal(getattr(sim.state, name), getattr(initial, name))


def test_importing_compiles_nothing() -> None:
    """Importing kynemapy (and the engine's modules) compiles no kernel: not the one entry point
    ``run_task``, not a phase of the step, not any other compiled function of the package."""
    code = (
        "import sys\n"
        "import kynemapy\n"
        "from kynemapy.engine import api, entry, lookup, step\n"
        "from kynemapy.engine.constraints import dispatch\n"
        "from kynemapy.engine.elements import masses, springs\n"
        "import kynemapy.run.simulation\n"
        "assert entry.run_task.signatures == []\n"
        "phases = (step.predict, step.update_tangent, step.solve, step.convergence_error, step.update,\n"
        "          entry.run_task_at, step.start, step.record_row, dispatch.evaluate, dispatch.evaluate_kynema,\n"
        "          dispatch.bias, masses.mass_element_terms, springs.spring_element_terms)\n"
        "assert all(f.signatures == [] for f in phases)\n"
        "kernels = {(m, n): f for m, mod in list(sys.modules.items()) if m.startswith('kynemapy')\n"
        "           for n, f in vars(mod).items() if hasattr(f, 'signatures') and hasattr(f, 'py_func')}\n"
        "assert len(kernels) > 50, len(kernels)\n"
        "compiled = [k for k, f in kernels.items() if f.signatures]\n"
        "assert not compiled, compiled\n"
        "assert not lookup._ENTRIES\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_tables_are_read_only() -> None:
    model = pendulum()
    with pytest.raises(ValueError, match="read-only"):
        model.x0[0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        model.mass_m_star[0, 0, 0] = 1.0


def test_save_and_restore_state_reproduce_the_trajectory_bitwise() -> None:
    sim = kp.Simulation(pendulum(), kp.StepParameters(h=0.01, rho_inf=0.5))
    sim.advance(20)
    saved = sim.save_state()
    sim.advance(30)
    first = sim.state.copy()
    sim.restore_state(saved)
    assert sim.step_count == 20
    sim.advance(30)
    for a, b in zip(first, sim.state, strict=True):
        np.testing.assert_array_equal(a, b)
    assert sim.time == pytest.approx(0.5, abs=1e-12)


def test_plain_python_kernels_give_the_compiled_result() -> None:
    """KYNEMAPY_DISABLE_JIT=1 runs every kernel as plain Python: same numbers as the compiled code."""
    code = (
        "import numpy as np, kynemapy as kp\n"
        "b = kp.ModelBuilder(gravity=(0, 0, -9.81))\n"
        "n = b.add_node(position=(1, 0, 0), velocity=(0, 0.5, 0, 0, 0, 0.5))\n"
        "b.add_mass(n, mass=2.0, inertia=(0.1, 0.1, 0.1))\n"
        "b.add_spherical_joint(n, point=(0, 0, 0))\n"
        "sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, rho_inf=0.8, geometric_stiffness=True))\n"
        "for _ in range(20):\n    sim.step()\n"
        "print(repr(sim.state.q[n].tolist()))\n"
    )
    import os

    env = dict(os.environ, KYNEMAPY_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    python_q = np.array(eval(out.stdout.strip()))
    compiled = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    compiled_q = np.array(eval(compiled.stdout.strip()))
    np.testing.assert_allclose(python_q, compiled_q, rtol=0, atol=1e-14)


def test_data_types_found_by_structure_are_numbas_own() -> None:
    """A new simulation's arenas tuple is typed from its structure (``lookup._type_key``) once numba
    has typed one like it: that type must be exactly numba's ``typeof`` of the tuple, for the
    dense and the sparse solver, with and without springs and beams; and a tuple whose arrays
    differ in anything numba types (writability, dimensions, dtype) must not share a key."""
    import numba

    from kynemapy.engine import lookup
    from kynemapy.engine.entry import run_task

    def chain(n: int, spring: bool, beam: bool) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0, 0, -9.81))
        prev = None
        for k in range(n):
            node = b.add_node(position=(k + 1.0, 0, 0))
            b.add_mass(node, mass=1.0, inertia=(0.1, 0.1, 0.1))
            if prev is None:
                b.add_spherical_joint(node, point=(0, 0, 0))
            else:
                b.add_ball_joint(prev, node, point=(k + 0.5, 0, 0))
            prev = node
        if spring:
            anchor = b.add_node(position=(0, 1, 0))
            b.add_fixed_bc(anchor)
            b.add_spring(anchor, prev, stiffness=10.0, undeformed_length=1.0)
        if beam:
            nodes = [b.add_node(position=(0, 2 + 0.5 * k, 0)) for k in range(3)]
            b.add_fixed_bc(nodes[0])
            rule = [(-(0.6**0.5), 5 / 9), (0.0, 8 / 9), (0.6**0.5, 5 / 9)]
            b.add_beam_element(nodes, [0.0, 0.5, 1.0], rule, [0.0, 1.0], [np.eye(6)] * 2, [np.eye(6)] * 2)
        return b.build()

    seen = {}
    for n, spring, beam in ((1, False, False), (30, False, False), (2, True, False), (2, False, True)):
        for _ in range(2):  # the second simulation of a model is typed from the first one's key
            sim = kp.Simulation(chain(n, spring, beam), kp.StepParameters(h=0.01))
            data = sim.workspace.data(sim.state, sim.inputs)
            key = lookup._type_key(data)
            assert key is not None
            assert lookup._typeof(run_task, data) == numba.typeof(data)
            seen.setdefault(key, numba.typeof(data))
            assert seen[key] == numba.typeof(data)
    # what numba types must change the key
    a = np.zeros((3, 7))
    ro = a.copy()
    ro.flags.writeable = False
    keys = {
        lookup._type_key((a,)),
        lookup._type_key((ro,)),
        lookup._type_key((a[0],)),
        lookup._type_key((a.astype(np.int64),)),
    }
    assert len(keys) == 4
    assert lookup._type_key((a, object())) is None
    # the small arguments of an entry point are found by structure too
    for value in (a, ro, a[0], a.T, 3, 2.5, True, np.int64(4), np.float64(1.0), np.zeros(0, dtype=np.int64)):
        for _ in range(2):
            assert lookup._typeof(run_task, value) == numba.typeof(value), value


def test_states_and_inputs_copy_and_pickle_as_independent_values() -> None:
    """copy, deepcopy and pickle of a State or Inputs (views into arenas) give an object of the
    same values that shares no memory with the original (they raised RecursionError before)."""
    import copy
    import pickle

    sim = kp.Simulation(pendulum(), kp.StepParameters(h=0.01, rho_inf=0.5))
    sim.advance(5)
    sim.inputs.f[0, 2] = 3.0
    for original in (sim.state, sim.inputs):
        for make in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
            twin = make(original)
            assert type(twin) is type(original)
            for a, b in zip(original, twin, strict=True):
                np.testing.assert_array_equal(a, b)
                assert not np.shares_memory(a, b)
    saved = copy.deepcopy(sim.state)
    sim.advance(5)
    sim.restore_state(saved)
    assert sim.step_count == 5


def test_a_simulation_refuses_to_be_copied_or_pickled_with_a_clear_message() -> None:
    """A copy would share (copy.copy) or lose (pickle) the compiled engine's stored arguments."""
    import copy
    import pickle

    sim = kp.Simulation(pendulum(), kp.StepParameters(h=0.01, rho_inf=0.5))
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match=r"cannot be pickled or copied.*save_state"):
            make(sim)


def test_restoring_a_state_of_another_model_is_refused_and_changes_nothing() -> None:
    """restore_state gave numpy's raw broadcasting error after overwriting the fields before the
    first that did not fit; now it names the field and leaves the state as it was."""
    sim = kp.Simulation(pendulum(), kp.StepParameters(h=0.01, rho_inf=0.5))
    sim.advance(3)
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    nodes = [b.add_node(position=(1 + k, 0, 0)) for k in range(2)]
    for node in nodes:
        b.add_mass(node, mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.add_spherical_joint(nodes[0], point=(0, 0, 0))
    b.add_ball_joint(nodes[0], nodes[1], point=(1.5, 0, 0))
    other = kp.Simulation(b.build(), kp.StepParameters(h=0.01))
    before = sim.save_state()
    with pytest.raises(ValueError, match=r"has q of shape .* a state of another model \(nothing was changed\)"):
        sim.restore_state(other.save_state())
    with pytest.raises(TypeError, match=r"expected a kynemapy\.State"):
        sim.restore_state(sim.inputs)
    for a, b_ in zip(sim.state, before, strict=True):
        np.testing.assert_array_equal(a, b_)


def test_a_saved_state_is_an_independent_copy_that_restores_bit_for_bit() -> None:
    """save_state copies the two arenas and makes the views when first read; restore_state
    copies the arenas back (same model) or field by field (checked)."""
    sim = kp.Simulation(pendulum(), kp.StepParameters(h=0.01, rho_inf=0.5))
    sim.advance(3)
    before = [np.array(a) for a in sim.state]
    saved = sim.save_state()
    assert repr(saved) == repr(sim.state)  # before any field is read
    sim.advance(4)
    after = [np.array(a) for a in sim.state]
    for a, b in zip(saved, before, strict=True):  # the copy kept the values of the moment it was made
        np.testing.assert_array_equal(a, b)
        assert not np.shares_memory(a, sim.state.q)
    sim.restore_state(saved)
    for a, b in zip(sim.state, before, strict=True):
        np.testing.assert_array_equal(a, b)
    sim.advance(4)
    for a, b in zip(sim.state, after, strict=True):  # the same four steps again, bit for bit
        np.testing.assert_array_equal(a, b)
    other = kp.new_state(sim.model)  # a fresh state of the same model
    sim.restore_state(other)
    np.testing.assert_array_equal(sim.state.q, other.q)
