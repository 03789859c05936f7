"""The run driver: streamed results equal the in-memory ones, a SIGKILLed run resumes bit for
bit, failures keep what was written, adaptive sub-stepping, the command line end to end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io import ResultFileWarning, read

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIELDS = ("q", "v", "vd", "a", "lam", "constraint_output")


def pendulum_chain() -> kp.Model:
    """Two bodies: one on a ball joint to the ground, the second welded by a spring; gravity."""
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    top = b.add_node(position=(1, 0, 0), velocity=(0, 1.0, 0, 0, 0, 1.0))
    b.add_mass(top, mass=2.0, inertia=(0.1, 0.2, 0.3))
    b.add_spherical_joint(top, point=(0, 0, 0))
    bob = b.add_node(position=(2, 0, 0))
    b.add_mass(bob, mass=1.0, inertia=(0.05, 0.05, 0.05))
    b.add_spring(top, bob, stiffness=500.0, undeformed_length=1.0)
    return b.build()


PARAMS = kp.StepParameters(h=0.005, rho_inf=0.8, max_iter=10)


def reference_rows(n_steps: int, every: int = 1, loads=None) -> dict[str, np.ndarray]:
    """The same run with sim.step() in a Python loop, every state kept in memory."""
    sim = kp.Simulation(pendulum_chain(), PARAMS)
    rows = {k: [np.array(getattr(sim.state, k))] for k in FIELDS}
    times, steps = [sim.time], [0]
    for _ in range(n_steps):
        if loads is not None:
            loads(sim, sim.time)
        sim.step()
        if sim.step_count % every == 0 or sim.step_count == n_steps:
            for k in FIELDS:
                rows[k].append(np.array(getattr(sim.state, k)))
            times.append(sim.time)
            steps.append(sim.step_count)
    out = {k: np.array(v) for k, v in rows.items()}
    out["time"] = np.array(times)
    out["step"] = np.array(steps)
    return out


def wobble(sim: kp.Simulation, t: float) -> None:
    sim.set_load(0, force=(0.0, 3.0 * np.sin(5.0 * t), 0.0))


@pytest.mark.parametrize(
    ("every", "block", "loads"), [(1, 16, None), (3, 7, None), (2, 5, wobble), (1, 1, None), (2, 1, wobble)]
)
def test_streamed_file_equals_the_in_memory_run(tmp_path: Path, every: int, block: int, loads) -> None:
    n = 101
    sim = kp.Simulation(pendulum_chain(), PARAMS)
    info = sim.run(n_steps=n, output=tmp_path / "run.h5", every=every, block=block, loads=loads)
    ref = reference_rows(n, every, loads)
    r = read(tmp_path / "run.h5")
    assert info.steps == n and info.converged and r.committed == len(ref["step"]) == info.rows
    np.testing.assert_array_equal(r.step, ref["step"])
    np.testing.assert_array_equal(r.time, ref["time"])
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(r, k), ref[k], err_msg=k)
    assert r.restart is not None
    np.testing.assert_array_equal(r.restart["q"], sim.state.q)
    assert r.params == PARAMS
    for name in kp.Model._fields:
        np.testing.assert_array_equal(np.asarray(getattr(r.model, name)), np.asarray(getattr(sim.model, name)))


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path[:0] = [{tests!r}, {helpers!r}]
    import test_run as t
    import kynemapy as kp
    kill_at = int(sys.argv[2])

    def loads(sim, time):
        t.wobble(sim, time)
        if sim.step_count == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    sim = kp.Simulation(t.pendulum_chain(), t.PARAMS)
    sim.run(n_steps=200, output=sys.argv[1], every=2, block=8, loads=loads)
    """
)


def free_body() -> kp.Model:
    """One spinning, falling body and no constraint: lam and constraint_output have no columns."""
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    n = b.add_node(position=(0.3, 0, 1), velocity=(1.0, 0, 2.0, 0.5, 0, 3.0))
    b.add_mass(n, mass=2.0, inertia=(0.1, 0.2, 0.25))
    return b.build()


@pytest.mark.parametrize("build", [pendulum_chain, free_body], ids=["jointed", "no constraints"])
def test_recorded_rows_hold_the_state_of_each_recorded_step(build) -> None:
    """The compiled recorder copies a piece of the state arena into each row
    (kynemapy.engine.rows.RECORDED): the rows of rollout are the states sim.step() reaches."""
    n, every = 12, 3
    rows = kp.Simulation(build(), PARAMS).rollout(n, every=every)
    sim = kp.Simulation(build(), PARAMS)
    expected = [(sim.time, 0, {k: np.array(getattr(sim.state, k)) for k in FIELDS})]
    for _ in range(n):
        sim.step()
        if sim.step_count % every == 0:
            expected.append((sim.time, sim.step_count, {k: np.array(getattr(sim.state, k)) for k in FIELDS}))
    assert len(rows["time"]) == len(expected) == n // every + 1
    for r, (t, step, state) in enumerate(expected):
        assert rows["time"][r] == t and rows["step"][r] == step, r
        for k in FIELDS:
            np.testing.assert_array_equal(rows[k][r], state[k], err_msg=f"row {r}, {k}")
    assert rows["lam"].shape[1:] == sim.state.lam.shape and np.all(rows["iterations"][1:] >= 1)


def test_sigkill_mid_run_loses_at_most_a_block_and_resumes_bit_for_bit(tmp_path: Path) -> None:
    full = tmp_path / "full.h5"
    kp.Simulation(pendulum_chain(), PARAMS).run(n_steps=200, output=full, every=2, block=8, loads=wobble)
    killed = tmp_path / "killed.h5"
    script = tmp_path / "kill.py"
    script.write_text(
        KILL_SCRIPT.format(tests=str(Path(__file__).resolve().parent), helpers=str(Path(__file__).resolve().parents[1]))
    )
    proc = subprocess.run([sys.executable, str(script), str(killed), "77"], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with pytest.warns(ResultFileWarning, match="was killed; cleared HDF5's 'open for writing' marks"):
        partial = read(killed)
    assert not partial.closed_cleanly
    # rows: 0 (step 0), then steps 2, 4, ...; block 8 is written as buffers of 4 rows
    # (rows 0-3, 4-7, ...) by a background thread.  At step 77, rows 0-38 (up to step 76)
    # are recorded; rows 32-35 were handed to the writer at step 70, once rows 0-31 were
    # committed.  So 32 or 36 rows are in the file (the writer may not have finished the
    # last buffer when the signal lands): fewer than a block (8 rows) lost.
    recorded = 1 + 76 // 2
    assert partial.committed in (32, 36) and partial.step[-1] == 2 * (partial.committed - 1)
    assert recorded - partial.committed < 8
    reference = read(full)
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(partial, k), getattr(reference, k)[: partial.committed])
    sim = kp.Simulation.restart(killed)
    assert sim.step_count == partial.step[-1]
    sim.run(n_steps=200 - sim.step_count, output=killed, every=2, block=8, loads=wobble)
    resumed = read(killed)
    assert resumed.committed == reference.committed
    for k in (*FIELDS, "time", "step", "iterations", "error", "kinetic_energy", "angular_momentum"):
        np.testing.assert_array_equal(getattr(resumed, k), getattr(reference, k), err_msg=k)


def test_a_failure_mid_run_keeps_the_rows_and_the_last_converged_state(tmp_path: Path) -> None:
    def bad_load(sim: kp.Simulation, t: float) -> None:
        if sim.step_count >= 30:
            sim.inputs.f[0, 0] = np.nan

    sim = kp.Simulation(pendulum_chain(), PARAMS)
    with pytest.raises(kp.ConvergenceError) as err:
        sim.run(n_steps=100, output=tmp_path / "fail.h5", every=1, block=8, loads=bad_load)
    assert err.value.step == 30 and "t = 0.15" in str(err.value) and "rows are in" in str(err.value)
    assert sim.step_count == 30 and np.all(np.isfinite(sim.state.q))
    r = read(tmp_path / "fail.h5")
    assert r.committed == 31 and r.step[-1] == 30
    np.testing.assert_array_equal(r.q[-1], sim.state.q)
    info = kp.Simulation(pendulum_chain(), PARAMS).run(n_steps=100, loads=bad_load, throw=False)
    assert not info.converged and info.steps == 30


def test_adaptive_substeps_rescue_a_step_newton_cannot_take() -> None:
    """A fast spinning free body: with h = 0.1 and max_iter = 3 Newton fails; halves succeed."""
    b = kp.ModelBuilder()
    body = b.add_node(velocity=(0, 0, 0, 0.1, 8.0, 0.1))
    b.add_mass(body, mass=10.0, inertia=(0.8083, 0.6833, 0.1417))
    model = b.build()
    params = kp.StepParameters(h=0.1, rho_inf=1.0, max_iter=3, atol=1e-9, rtol=1e-9)
    with pytest.raises(kp.ConvergenceError):
        kp.Simulation(model, params).run(n_steps=20)
    sim = kp.Simulation(model, params)
    info = sim.run(n_steps=20, adaptive=True)
    assert info.converged and info.substepped > 0 and sim.step_count == 20
    assert sim.time == pytest.approx(2.0, abs=1e-12)
    # the third step fails at h; the rescued macro step is exactly two steps of h/2
    one = kp.Simulation(model, params)
    one.advance(2)
    before = one.save_state()
    assert one.run(n_steps=1, adaptive=True).substepped == 1
    halves = kp.Simulation(model, kp.StepParameters(h=0.05, rho_inf=1.0, max_iter=3, atol=1e-9, rtol=1e-9))
    halves.restore_state(before)
    halves.advance(2)
    for k in ("q", "v", "vd", "a"):
        np.testing.assert_array_equal(getattr(one.state, k), getattr(halves.state, k))
    assert one.step_count == 3 and one.time == pytest.approx(0.3, abs=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"n_steps": 10, "output": "/nonexistent-dir/x.h5"}, OSError, ["cannot write", "/nonexistent-dir/x.h5"]),
        ({"t_end": -1.0}, ValueError, ["t_end", "before"]),
        ({"n_steps": -3}, ValueError, ["n_steps"]),
        ({"n_steps": 3, "t_end": 1.0}, ValueError, ["exactly one"]),
        ({"n_steps": 3, "every": 0}, ValueError, ["every"]),
        ({"n_steps": 3, "block": 0}, ValueError, ["block"]),
        ({"n_steps": 3, "loads": 5}, TypeError, ["loads"]),
    ],
)
def test_run_rejects_bad_options_before_the_first_step(kwargs, error, words) -> None:
    sim = kp.Simulation(pendulum_chain(), PARAMS)
    with pytest.raises(error) as err:
        sim.run(**kwargs)
    for w in words:
        assert w in str(err.value)
    assert sim.step_count == 0


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=cwd)


def test_command_line_run_info_plot_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "ht.h5"
    res = cli("run", str(EXAMPLES / "heavy_top.toml"), "-o", str(out), "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "400 steps to t = 0.8 s" in res.stdout
    r = read(out)
    kynema_q400 = [
        -0.42217802273894345,
        -0.09458263530050703,
        -0.04455460488952848,
        -0.17919607435565366,
        0.21677896640311572,
        -0.9594776960853596,
        -0.017268392381761217,
    ]
    np.testing.assert_allclose(r.q[-1, 0], kynema_q400, rtol=0, atol=1e-10)
    info = cli("info", str(out), cwd=tmp_path)
    assert info.returncode == 0 and "rows              401" in info.stdout and "closed cleanly    yes" in info.stdout
    # a reader that stops reading (`kynemapy info run.h5 | head`): a quiet stop, no error message
    command = [sys.executable, "-m", "kynemapy", "info", str(out)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    proc.stdout.close()  # before the command writes anything
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait() == 141 and stderr == "", stderr
    # -o is a folder: a name that ends like a file's is refused (it made a folder named top.png)
    plot = cli("plot", str(out), "-o", "top.png", cwd=tmp_path)
    assert plot.returncode == 2 and not (tmp_path / "top.png").exists(), plot.stderr
    assert plot.stderr == (
        "kynemapy plot: the plot folder 'top.png' is a folder (the files are written into it), but its name "
        "ends like a file's (.png): give a folder name, e.g. 'top'\n"
    )
    plot = cli("plot", str(out), "-o", str(tmp_path / "plots"), cwd=tmp_path)
    assert plot.returncode == 0, plot.stderr
    for name in ("displacement.png", "rotation.png", "energy.png", "iterations.png"):
        png = tmp_path / "plots" / name
        assert png.stat().st_size > 5000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_line_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[step]\nh = 0.01\n\n[[node]]\nname = "a"\nposition = [0, 0]\n')
    res = cli("run", str(bad), "-o", str(tmp_path / "x.h5"), cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr and "position" in res.stderr
    res = cli("info", str(tmp_path / "missing.h5"), cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    res = cli("run", "missing.toml", "-o", "x.h5", cwd=tmp_path)  # Python's "[Errno 2] ...: 'missing.toml'" before
    assert res.returncode == 2 and res.stderr == "kynemapy run: missing.toml: No such file or directory\n", res.stderr


def test_ctrl_c_while_the_command_line_still_imports_is_one_line(tmp_path: Path) -> None:
    """Ctrl-C in the first moments of ``kynemapy run`` (here: as numba is being imported) ends with
    one line and status 130; it printed Python's KeyboardInterrupt traceback while ``import
    kynemapy`` loaded the engine, before the command's handler was running."""
    code = (
        "import sys\n"
        "assert 'numba' not in sys.modules\n"
        "from kynemapy.cli import main\n"
        "assert 'numba' not in sys.modules and 'kynemapy.engine' not in sys.modules, 'the command line loads light'\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numba':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    args = ["run", str(EXAMPLES / "heavy_top.toml"), "-o", str(tmp_path / "x.h5"), "--no-progress"]
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 130 and res.stderr == "kynemapy run: interrupted\n", res.stderr


def test_command_line_resume_after_sigkill(tmp_path: Path) -> None:
    """Kill `kynemapy run` of the floating platform after some blocks, resume, compare with a full run."""
    toml = EXAMPLES / "floating_platform.toml"
    full = tmp_path / "full.h5"
    assert cli("run", str(toml), "-o", str(full), "--block", "8", "--no-progress", cwd=tmp_path).returncode == 0
    part = tmp_path / "part.h5"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kynemapy", "run", str(toml), "-o", str(part), "--block", "8", "--no-progress"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import time

    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if read(part).committed >= 25:
                break
        except (OSError, KeyError):
            pass
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    res = cli("run", str(toml), "-o", str(part), "--block", "8", "--resume", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    a, b = read(full), read(part)
    assert a.committed == b.committed == 102
    for k in ("q", "v", "vd", "a", "lam", "time", "step"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


def test_streamed_energy_and_momentum_equal_the_numpy_twin(tmp_path: Path) -> None:
    """The compiled per-row invariants equal their vectorised numpy twin (tests/references.py)."""
    from references import model_energy_and_momentum

    kp.Simulation(pendulum_chain(), PARAMS).run(n_steps=60, output=tmp_path / "e.h5", every=1, block=16)
    r = read(tmp_path / "e.h5")
    ke, pe, p, L = model_energy_and_momentum(r.model, r.q, r.v)
    np.testing.assert_allclose(r.kinetic_energy, ke, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(r.potential_energy, pe, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(r.linear_momentum, p, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(r.angular_momentum, L, rtol=1e-13, atol=1e-12)
    assert np.ptp(r.kinetic_energy) > 0.1  # the bodies do move: the comparison is not between zeros


def test_a_writer_failure_stops_the_run_with_the_committed_rows_kept(tmp_path: Path, monkeypatch) -> None:
    """The writer thread fails (disk full) on its third buffer: the run raises OSError naming the file."""
    from kynemapy.io import ResultWriter

    original = ResultWriter.append
    calls = []

    def failing_append(self, rows, state=None, inputs=None):
        calls.append(len(rows["step"]))
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return original(self, rows, state, inputs)

    monkeypatch.setattr(ResultWriter, "append", failing_append)
    path = tmp_path / "full_disk.h5"
    sim = kp.Simulation(pendulum_chain(), PARAMS)
    threads = threading.active_count()
    with pytest.raises(OSError) as err:
        sim.run(n_steps=200, output=path, every=1, block=8)
    assert "No space left on device" in str(err.value) and str(path) in str(err.value)
    assert threading.active_count() == threads  # the writer thread is gone
    assert sim.step_count < 200  # stopped at the next buffer hand-over, not at the end
    monkeypatch.undo()
    r = read(path)
    assert r.committed == 8 and calls[:2] == [4, 4]  # two buffers of block // 2 = 4 rows
    ref = reference_rows(7)
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(r, k), ref[k], err_msg=k)


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_an_interrupted_run_writes_what_it_has_and_resumes_bit_for_bit(tmp_path: Path, exc) -> None:
    """An exception in loads (or Ctrl-C) at step 37: rows up to step 37 and its restart state are kept."""

    def loads(sim: kp.Simulation, t: float) -> None:
        if sim.step_count == 37 and not sim.resume_path:
            raise exc("stop")
        wobble(sim, t)

    path = tmp_path / "interrupted.h5"
    with pytest.raises(exc):
        kp.Simulation(pendulum_chain(), PARAMS).run(n_steps=200, output=path, every=2, block=8, loads=loads)
    r = read(path)
    # rows at steps 0, 2, ..., 36 and the state at the interruption (step 37)
    np.testing.assert_array_equal(r.step, [*range(0, 37, 2), 37])
    assert r.closed_cleanly and r.restart is not None and int(r.restart["step"][0]) == 37
    sim = kp.Simulation.restart(path)
    sim.run(n_steps=200 - sim.step_count, output=path, every=2, block=8, loads=loads)
    resumed = read(path)
    np.testing.assert_array_equal(resumed.step, [*range(0, 37, 2), 37, *range(38, 201, 2)])
    ref = reference_rows(200, 1, wobble)  # every step, in memory
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(resumed, k), ref[k][resumed.step], err_msg=k)


def test_no_thread_outlives_a_run(tmp_path: Path) -> None:
    threads = threading.active_count()
    sim = kp.Simulation(pendulum_chain(), PARAMS)
    for i in range(3):
        sim.run(n_steps=50, output=tmp_path / f"r{i}.h5", block=16)
    assert threading.active_count() == threads
    assert read(tmp_path / "r2.h5").committed == 51


def test_output_paths_are_checked_before_any_work(tmp_path: Path) -> None:
    """A folder where a file belongs, a file where a folder belongs, or a file in the way of a
    folder: each writer says so by name before it runs, renders or computes anything."""
    from kynemapy.io.vtkhdf import write_vtkhdf
    from kynemapy.post.animate import animate
    from kynemapy.post.plots import plot_result
    from kynemapy.run.sweep import sweep

    a_file = tmp_path / "a_file.txt"
    a_file.write_text("in the way")
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    bob = b.add_node(position=(1, 0, 0))
    b.add_mass(bob, mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.add_spherical_joint(bob, point=(0, 0, 0))
    model = b.build()
    sim = kp.Simulation(model, kp.StepParameters(h=0.01))
    with pytest.raises(IsADirectoryError, match="is a folder: give a file name"):
        sim.run(n_steps=5, output=tmp_path)
    with pytest.raises(NotADirectoryError, match=r"a_file\.txt' is a file, not a folder"):
        sim.run(n_steps=5, output=a_file / "run.h5")
    with pytest.raises(FileNotFoundError, match=r"the folder .*sub' does not exist"):
        sim.run(n_steps=5, output=tmp_path / "sub" / "run.h5")
    assert sim.step_count == 0  # nothing was run
    assert not (tmp_path / "sub").exists()
    result = tmp_path / "run.h5"
    sim.run(n_steps=5, output=result)
    assert read(result).committed == 6
    with pytest.raises(NotADirectoryError, match=r"a_file\.txt' is a file, not a folder"):
        write_vtkhdf(result, a_file / "x.vtkhdf")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        write_vtkhdf(result, tmp_path)
    with pytest.raises(NotADirectoryError, match=r"a_file\.txt' or a folder above it is a file"):
        animate(result, a_file / "x.gif", progress=False)
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        plot_result(read(result), a_file)
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        sweep(EXAMPLES / "heavy_top.toml", {"step.rho_inf": [0.0, 0.5]}, a_file, client="serial", progress=False)
    assert a_file.read_text() == "in the way"
    assert not list(tmp_path.rglob(".kynemapy-write-test-*"))  # the probes leave nothing behind


def test_the_writer_thread_keeps_off_the_cpu_the_stepping_ran_on(tmp_path: Path, monkeypatch) -> None:
    """Each block is written by a thread whose affinity is every usable CPU but the one the driver
    handed the block over on (Linux, two CPUs or more); the driver's own affinity is never touched,
    and the file equals one written without steering."""
    from kynemapy.run import writer as background

    seen: list[tuple[int | None, set[int] | None, str]] = []
    keep_off = background.BackgroundWriter._keep_off

    def spy(self, cpu: int | None) -> None:
        keep_off(self, cpu)
        affinity = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        seen.append((cpu, affinity, threading.current_thread().name))

    monkeypatch.setattr(background.BackgroundWriter, "_keep_off", spy)
    before = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    kp.Simulation(pendulum_chain(), PARAMS).run(n_steps=600, output=tmp_path / "steered.h5", block=64)
    assert len(seen) >= 600 // 32  # every block went through the steering
    if before is None:  # no affinity on this system: nothing to steer, and no CPU number either
        assert background.current_cpu() is None
        return
    assert set(os.sched_getaffinity(0)) == before  # the driver's thread: untouched
    for cpu, affinity, name in seen:
        assert name == "kynemapy-hdf5-writer"
        assert cpu is None or cpu in before
        if cpu is not None and len(before) >= 2:
            assert affinity == before - {cpu}
        else:
            assert affinity == before
    monkeypatch.setattr(background, "current_cpu", lambda: None)  # no steering at all
    kp.Simulation(pendulum_chain(), PARAMS).run(n_steps=600, output=tmp_path / "plain.h5", block=64)
    steered, plain = read(tmp_path / "steered.h5"), read(tmp_path / "plain.h5")
    for name in ("time", "step", "q", "v", "lam", "kinetic_energy"):
        np.testing.assert_array_equal(getattr(steered, name), getattr(plain, name), err_msg=name)
