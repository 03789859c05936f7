"""How ``kynemapy run`` ends when it cannot go on (issue 27): SIGTERM like Ctrl-C (item 5), a full
disk (item 6), a load that turns NaN (item 7).  Each says step, time, the rows kept and what to do."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kynemapy.io import read

ROOT = Path(__file__).resolve().parents[2]
HEAVY_TOP = (ROOT / "examples" / "heavy_top.toml").read_text()
H = 0.002  # the heavy top's step [s]


def top_toml(path: Path, n_steps: int, extra: str = "") -> Path:
    path.write_text(HEAVY_TOP.replace("n_steps = 400", f"n_steps = {n_steps}") + extra)
    return path


def cli(*args: str, cwd: Path, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, **kwargs
    )


# ------------------------------------------------------------------------------------- SIGTERM
def test_sigterm_ends_a_run_as_ctrl_c_does_with_the_rows_kept_and_the_resume_command(tmp_path: Path) -> None:
    toml = top_toml(tmp_path / "long.toml", 10**9)
    out = tmp_path / "long.h5"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kynemapy", "run", str(toml), "-o", str(out), "--every", "20", "--block", "16"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            try:
                if read(out).committed >= 16:
                    break
            except OSError:
                pass
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        os.kill(proc.pid, signal.SIGTERM)  # this child, by its id
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, stderr
    line = stderr.strip().splitlines()[-1]  # after the progress bar's line
    assert "Traceback" not in stderr, stderr
    match = re.fullmatch(
        rf"kynemapy run: terminated \(SIGTERM\) at step (\d+), t = (\S+) s; (\d+) rows are in {re.escape(str(out))}; "
        rf"continue with: kynemapy run {re.escape(str(toml))} -o {re.escape(str(out))} --resume",
        line,
    )
    assert match is not None, stderr
    r = read(out)
    step, t, rows = int(match[1]), float(match[2]), int(match[3])
    # the state at the signal is the last row (off the every-20 cadence as often as not), with its restart data
    assert rows == r.committed and r.step[-1] == step and t == pytest.approx(step * H, rel=1e-12)
    assert np.all(r.step[:-1] % 20 == 0) and r.restart is not None and int(r.restart["step"][0]) == step


# ------------------------------------------------------------------------------------ full disk
FULL_DISK_MESSAGE = (
    r"kynemapy run: stopped at step (\d+), t = (\S+) s: cannot write {out}: {reason}; (\d+) rows are safe in {out}; "
    r"once there is room, continue with: kynemapy run {toml} -o {out} --resume"
)


def check_rows_and_resume(copy: Path, safe: int, toml: Path, reference: Path, cwd: Path) -> None:
    """``safe`` rows read back from the file as in an uninterrupted run; the printed command finishes it."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the failed writer's 'open for writing' marks are cleared
        r = read(copy)
    full = read(reference)
    assert r.committed == safe > 0
    for name in ("step", "q", "v", "lam"):
        np.testing.assert_array_equal(getattr(r, name), getattr(full, name)[:safe], err_msg=name)
    res = cli("run", str(toml), "-o", str(copy), "--resume", "--no-progress", cwd=cwd)
    assert res.returncode == 0, res.stderr
    resumed = read(copy)
    for name in ("step", "time", "q", "v", "vd", "lam"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(full, name), err_msg=name)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("disk")
    toml = top_toml(folder / "top.toml", 3000)
    out = folder / "reference.h5"
    assert cli("run", str(toml), "-o", str(out), "--block", "64", "--no-progress", cwd=folder).returncode == 0
    return toml, out


def test_a_file_size_limit_stops_the_run_with_the_file_the_rows_kept_and_the_resume_command(
    tmp_path: Path, reference: tuple[Path, Path]
) -> None:
    """The operating system refuses the writes past 1 MiB (RLIMIT_FSIZE: EFBIG, as a full disk's ENOSPC)."""
    toml, ref = reference
    out = tmp_path / "big.h5"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))

    res = cli(
        "run", str(toml), "-o", str(out), "--block", "64", "--no-progress", cwd=tmp_path, preexec_fn=limit
    )  # fmt: skip
    assert res.returncode == 1 and "Traceback" not in res.stderr and "buf = 0x" not in res.stderr, res.stderr
    pattern = FULL_DISK_MESSAGE.format(out=re.escape(str(out)), reason="File too large", toml=re.escape(str(toml)))
    match = re.fullmatch(pattern, res.stderr.strip().splitlines()[-1])
    assert match is not None, res.stderr
    assert float(match[2]) == pytest.approx(int(match[1]) * H, rel=1e-12)
    check_rows_and_resume(out, int(match[3]), toml, ref, tmp_path)


def test_a_full_tmpfs_stops_the_run_with_the_file_the_rows_kept_and_the_resume_command(
    tmp_path: Path, reference: tuple[Path, Path]
) -> None:
    """A real full disk: a 1 MiB tmpfs in a private mount namespace (``unshare``), where one can be made."""
    toml, ref = reference
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("no private mount namespace here (unshare -rm)")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    out = mnt / "full.h5"
    copy = tmp_path / "full.h5"
    script = (
        f"mount -t tmpfs -o size=1m tmpfs {mnt} || exit 77\n"
        f"{sys.executable} -m kynemapy run {toml} -o {out} --block 64 --no-progress\n"
        f"status=$?\n"
        f"cp {out} {copy}\n"
        f"exit $status\n"
    )
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    if res.returncode == 77:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    assert res.returncode == 1 and "Traceback" not in res.stderr and "buf = 0x" not in res.stderr, res.stderr
    pattern = FULL_DISK_MESSAGE.format(
        out=re.escape(str(out)), reason="No space left on device", toml=re.escape(str(toml))
    )
    match = re.fullmatch(pattern, res.stderr.strip().splitlines()[-1])
    assert match is not None, res.stderr
    check_rows_and_resume(copy, int(match[3]), toml, ref, tmp_path)


# ------------------------------------------------------------------------------ a load turns NaN
def test_a_load_that_turns_nan_mid_run_is_a_failed_run_with_step_time_and_rows(tmp_path: Path) -> None:
    # 1e306 * 2**(1000 t) overflows to inf once t > ~0.0075 s; inf - inf is NaN (0 before that)
    expr = "1e306 * 2 ** (1000 * t) - 1e306 * 2 ** (1000 * t)"
    load = f'\n[[load]]\nnode = "top"\nforce = ["{expr}", 0.0, 0.0]\n'
    toml = top_toml(tmp_path / "nan.toml", 400, load)
    out = tmp_path / "nan.h5"
    # independent truth: the first step k whose start time k h gives a NaN, by plain float arithmetic
    k = next(k for k in range(400) if (1e306 * 2 ** (1000 * (k * H))) - (1e306 * 2 ** (1000 * (k * H))) != 0.0)
    assert 1 < k < 400
    res = cli("run", str(toml), "-o", str(out), "--no-progress", cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    line = res.stderr.strip()
    assert line.startswith(f"kynemapy run: stopped at step {k}, t = {k * H:.9g} s: a load cannot be evaluated: "), line
    assert "not finite" in line and "(got nan)" in line, line
    assert line.endswith(f"; {k + 1} rows are in {out} (up to step {k})"), line
    np.testing.assert_array_equal(read(out).step, np.arange(k + 1))
