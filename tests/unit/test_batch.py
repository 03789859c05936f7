"""kp.Batch: members of one model stepped together in compiled, GIL-free calls over threads.

Each member's result must be bit for bit its own ``Simulation.advance`` (the reference here
is the engine's ordinary per-simulation path, run on separate, identical simulations), with
one thread or several; a failing member stops alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

from heavy_top import build_heavy_top  # noqa: E402

PARAMS = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, atol=1e-5, rtol=1e-3)


def heavy_tops(model: kp.Model, top: int, n: int) -> list[kp.Simulation]:
    """n heavy tops, member k with its own constant load and a perturbed spin."""
    sims = []
    for k in range(n):
        sim = kp.Simulation(model, PARAMS)
        sim.set_load(top, force=(0.5 * k, 0.0, 0.0), moment=(0.0, 0.1 * k, 0.0))
        sim.state.v[top, 4] += 0.01 * k  # rad/s
        sims.append(sim)
    return sims


def same_state(a: kp.Simulation, b: kp.Simulation) -> bool:
    return bool(np.array_equal(a.state.f, b.state.f) and np.array_equal(a.state.i, b.state.i))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_each_member_is_bit_for_bit_its_own_simulation(threads: int) -> None:
    model, top = build_heavy_top()
    batch_sims, alone = heavy_tops(model, top, 5), heavy_tops(model, top, 5)
    info = kp.Batch(batch_sims).advance(60, threads=threads)
    for sim in alone:
        sim.advance(60)
    assert info.steps.tolist() == [60] * 5 and info.status.tolist() == [0] * 5
    for k, (a, b) in enumerate(zip(batch_sims, alone, strict=True)):
        assert same_state(a, b), k
        assert a.time == b.time and a.step_count == 60
    # the members really differ (the loads act), and a second call goes on from where they are
    assert not np.array_equal(batch_sims[0].state.q, batch_sims[4].state.q)
    kp.Batch(batch_sims).advance(7, threads=threads)
    for sim in alone:
        sim.advance(7)
    assert all(same_state(a, b) for a, b in zip(batch_sims, alone, strict=True))


def test_a_failing_member_stops_alone_with_its_state_at_the_last_converged_step() -> None:
    model, top = build_heavy_top()
    sims, alone = heavy_tops(model, top, 3), heavy_tops(model, top, 3)
    batch = kp.Batch(sims)
    batch.advance(5)
    for sim in alone:
        sim.advance(5)
    sims[1].inputs.f[top, 2] = np.nan  # a load that makes member 1's next step fail
    alone[1].inputs.f[top, 2] = np.nan
    info = batch.advance(20, threads=2)
    assert info.steps.tolist() == [20, 0, 20]
    assert info.status[0] == 0 and info.status[2] == 0 and info.status[1] != 0
    alone[0].advance(20)
    alone[2].advance(20)
    with pytest.raises(kp.ConvergenceError):
        alone[1].advance(20)
    assert all(same_state(a, b) for a, b in zip(sims, alone, strict=True))
    assert sims[1].step_count == 5


def test_sparse_members_equal_their_own_simulations() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    prev = kp.GROUND
    for i in range(4):  # a chain of four rods on ball joints
        node = b.add_node(position=(0.5 + i, 0.0, 0.0))
        b.add_mass(node, mass=1.0, inertia=(1e-3, 0.08, 0.08))
        b.add_ball_joint(prev, node, point=(float(i), 0.0, 0.0))
        prev = node
    model = b.build()
    params = kp.StepParameters(h=0.005, rho_inf=0.9, solver="sparse", geometric_stiffness=True)
    sims = [kp.Simulation(model, params) for _ in range(3)]
    alone = [kp.Simulation(model, params) for _ in range(3)]
    for group in (sims, alone):
        for k, sim in enumerate(group):
            sim.state.v[0, 1] = 0.3 * k  # m/s across the chain (projected by the first step)
    info = kp.Batch(sims).advance(40, threads=2)
    for sim in alone:
        sim.advance(40)
    assert info.status.tolist() == [0, 0, 0]
    assert all(same_state(a, b) for a, b in zip(sims, alone, strict=True))


def test_bad_members_are_refused_with_the_reason() -> None:
    model, _ = build_heavy_top()
    sim = kp.Simulation(model, PARAMS)
    with pytest.raises(ValueError, match="at least one"):
        kp.Batch([])
    with pytest.raises(TypeError, match="member 1 is a str"):
        kp.Batch([sim, "sim"])
    with pytest.raises(ValueError, match="listed twice"):
        kp.Batch([sim, sim])
    other = kp.Simulation(model, kp.StepParameters(h=0.001))
    with pytest.raises(ValueError, match="member 1's step parameters differ"):
        kp.Batch([sim, other])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(position=(0.0, 1.0, 0.0))
    pin = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=30.0, inertia=(0.234375, 0.46875, 0.234375))  # another mass
    b.add_rigid_joint_6dof_to_3dof(n, pin)
    b.add_prescribed_bc_3dof(pin)
    with pytest.raises(ValueError, match="another model"):
        kp.Batch([sim, kp.Simulation(b.build(), PARAMS)])
    with pytest.raises(ValueError, match="n_steps must be an integer >= 0"):
        kp.Batch([sim]).advance(-1)
    with pytest.raises(ValueError, match="threads must be an integer >= 1"):
        kp.Batch([sim]).advance(1, threads=0)


def test_plain_python_members_equal_the_compiled_ones() -> None:
    # KYNEMAPY_DISABLE_JIT=1 runs the same member construction as Python
    code = (
        "import sys, numpy as np, kynemapy as kp; sys.path.insert(0, 'examples');"
        "from heavy_top import build_heavy_top; m, top = build_heavy_top();"
        "p = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, atol=1e-5, rtol=1e-3);"
        "s = [kp.Simulation(m, p) for _ in range(2)]; s[1].set_load(top, (1.0, 0, 0), (0, 0, 0));"
        "kp.Batch(s).advance(2, threads=2); np.save(sys.argv[1], np.stack([x.state.f for x in s]))"
    )
    out = {}
    for jit in ("0", "1"):
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"kynemapy_batch_{os.getpid()}_{jit}.npy"
        env = dict(os.environ, KYNEMAPY_DISABLE_JIT=jit)
        result = subprocess.run(
            [sys.executable, "-c", code, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, result.stderr
        out[jit] = np.load(path)
        path.unlink()
    np.testing.assert_allclose(out["1"], out["0"], rtol=0, atol=1e-12)
    assert not np.array_equal(out["0"][0], out["0"][1])
