"""A result file a live process writes is never overwritten or resumed (issue 27, item 1), and a
resumed file keeps the spacing of its recorded steps (item 2)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io import read
from kynemapy.io.lock import FileInUseError, WriterLock, holder_of, lock_path

ROOT = Path(__file__).resolve().parents[2]
HEAVY_TOP = (ROOT / "examples" / "heavy_top.toml").read_text()
PARAMS = kp.StepParameters(h=0.001)


def free_body(mass: float = 1.5) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.3, 2.0))
    b.add_mass(n, mass=mass, inertia=(1.0, 2.0, 3.0))
    return b.build()


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def top_toml(path: Path, n_steps: int, mass: float = 15.0) -> Path:
    text = HEAVY_TOP.replace("n_steps = 400", f"n_steps = {n_steps}")
    path.write_text(text.replace("mass = 15.0 ", f"mass = {mass} "))
    return path


def wait_for_rows(path: Path, rows: int, proc: subprocess.Popen[str], seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        try:
            if read(path).committed >= rows:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{path}: no {rows} rows after {seconds} s (writer status {proc.poll()})")


def test_a_live_run_is_neither_overwritten_nor_resumed_and_a_killed_one_resumes_bit_for_bit(tmp_path: Path) -> None:
    a = top_toml(tmp_path / "a.toml", 10**9)
    b = top_toml(tmp_path / "b.toml", 50, mass=30.0)
    live = tmp_path / "live.h5"
    command = [sys.executable, "-m", "kynemapy", "run", str(a), "-o", str(live), "--every", "50"]
    proc = subprocess.Popen(
        [*command, "--block", "16", "--no-progress"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for_rows(live, 16, proc)
        assert proc.poll() is None
        holder = holder_of(live)
        assert holder is not None and holder["pid"] == proc.pid and holder["host"] == socket.gethostname()
        who = f"is being written by process {proc.pid} on {socket.gethostname()}"
        res = cli("run", str(b), "-o", str(live), "--overwrite", "--no-progress", cwd=tmp_path)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert res.stderr.startswith(f"kynemapy run: {live} {who}") and "rows written" not in res.stdout, res.stderr
        res = cli("run", str(a), "-o", str(live), "--resume", "--no-progress", cwd=tmp_path)
        assert res.returncode == 2 and who in res.stderr and "no restart data" not in res.stderr, res.stderr
        with pytest.raises(FileInUseError, match=who):
            kp.Simulation.restart(live)
        with pytest.raises(FileInUseError, match=who):
            kp.Simulation(free_body(), PARAMS).run(n_steps=5, output=live, overwrite=True)
        with pytest.raises(FileInUseError, match=who):
            kp.io.ResultWriter(live, free_body(), PARAMS)
        assert proc.poll() is None  # the live run goes on, its model untouched
        assert read(live).model.mass_m_star[0, 0, 0] == 15.0
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # this child, by its id
        proc.communicate(timeout=60)
    # killed: its lock is gone with it (the sidecar stays, unlocked); --resume continues the file
    assert Path(lock_path(live)).exists() and holder_of(live) is None
    with pytest.warns(kp.io.ResultFileWarning, match="was killed"):
        killed = read(live)
    last = int(killed.step[-1])
    end = last + 120
    top_toml(a, end)
    res = cli("run", str(a), "-o", str(live), "--resume", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert not Path(lock_path(live)).exists()  # released and removed at the end
    full = tmp_path / "full.h5"
    res = cli("run", str(a), "-o", str(full), "--every", "50", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    resumed, reference = read(live), read(full)
    assert last % 50 == 0  # a killed run's rows are on its cadence: the two files hold the same steps
    np.testing.assert_array_equal(resumed.step, [*range(0, end + 1, 50), end])
    for name in ("step", "time", "q", "v", "vd", "a", "lam", "iterations"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(reference, name), err_msg=name)


def test_the_lock_names_its_holder_and_a_dead_holder_blocks_nothing(tmp_path: Path) -> None:
    path = tmp_path / "x.h5"
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from kynemapy.io.lock import WriterLock; "
         "w = WriterLock(sys.argv[1]); print('held', flush=True); sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with pytest.raises(FileInUseError) as err:
            WriterLock(path, "run")
        assert err.value.holder["pid"] == child.pid and f"(kill {child.pid})" in str(err.value)
        assert str(err.value).startswith(f"run: {path} is being written by process {child.pid}")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    with WriterLock(path) as lock:  # the dead holder's sidecar is taken over
        assert lock.held and holder_of(path)["pid"] == os.getpid()  # type: ignore[index]
    assert not os.path.exists(lock_path(path)) and holder_of(path) is None


def test_hdf5s_own_locking_does_not_protect_a_swmr_writer(tmp_path: Path) -> None:
    """Why kynemapy has its own lock: once SWMR writing starts, HDF5 lets another process truncate the file."""
    path = tmp_path / "swmr.h5"
    code = (
        "import sys, h5py, numpy as np\n"
        "f = h5py.File(sys.argv[1], 'w', libver='latest'); f.create_dataset('x', data=np.zeros(3))\n"
        "f.swmr_mode = True; print('swmr', flush=True); sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "swmr"
        h5py.File(path, "w").close()  # HDF5 allows it: the writer's file is gone under it
        with h5py.File(path, "r") as f:
            assert "x" not in f
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=60)


# ---------------------------------------------------------------------------------- item 2
def test_resume_continues_with_the_files_own_every_and_refuses_another_by_name(tmp_path: Path) -> None:
    short, mid = top_toml(tmp_path / "short.toml", 20), top_toml(tmp_path / "mid.toml", 40)
    out = tmp_path / "ev.h5"
    assert cli("run", str(short), "-o", str(out), "--every", "5", "--no-progress", cwd=tmp_path).returncode == 0
    before = out.read_bytes()
    res = cli("run", str(mid), "-o", str(out), "--resume", "--every", "1", "--no-progress", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert f"{out} records every 5th step; continuing it with every = 1" in res.stderr, res.stderr
    assert out.read_bytes() == before  # refused before anything was written
    res = cli("run", str(mid), "-o", str(out), "--resume", "--no-progress", cwd=tmp_path)  # [output] every = 1
    assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(read(out).step, np.arange(0, 41, 5))


def test_restart_run_keeps_the_spacing_and_refuses_another(tmp_path: Path) -> None:
    path = tmp_path / "r.h5"
    kp.Simulation(free_body(), PARAMS).run(n_steps=23, output=path, every=4, block=8)
    with pytest.raises(ValueError, match=r"r\.h5 records every 4th step; continuing it with every = 3"):
        kp.Simulation.restart(path).run(n_steps=10, output=path, every=3)
    kp.Simulation.restart(path).run(n_steps=10, output=path)
    np.testing.assert_array_equal(read(path).step, [0, 4, 8, 12, 16, 20, 23, 24, 28, 32, 33])
    assert read(path).attrs["output_every"] == 4
