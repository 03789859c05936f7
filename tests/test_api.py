"""Public-API contracts: the functional core, lazy compilation, read-only model tables."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import kynemapy as kp


def pendulum() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    bob = b.add_node(position=(1, 0, 0), velocity=(0, 0.5, 0, 0, 0, 0.5))
    b.add_mass(bob, mass=2.0, inertia=(0.1, 0.1, 0.1))
    b.add_spherical_joint(bob, point=(0, 0, 0))
    return b.build()


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


def test_importing_compiles_nothing() -> None:
    code = (
        "import importlib\n"
        "import kynemapy\n"
        "s = importlib.import_module('kynemapy.engine.step')\n"
        "ic = importlib.import_module('kynemapy.engine.initial')\n"
        "assert s.step_kernel.signatures == [] and s.advance_kernel.signatures == []\n"
        "assert ic.consistent_accelerations.signatures == []\n"
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
