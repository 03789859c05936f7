"""A resumed sweep (issue 27, item 10): no stale part file beside a reused member, a damaged member
named before it is redone, and a clean end on Dask; the progress line drawn once (item 15)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

from kynemapy.io import read
from kynemapy.run.sweep import MemberProgress, SweepWarning, member_file_problem, sweep

ROOT = Path(__file__).resolve().parents[2]
TOP = ROOT / "examples" / "heavy_top.toml"
N = 20
MEMBERS = [{"step.rho_inf": 0.5}, {"step.rho_inf": 0.9}]


def cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def damage(path: Path) -> None:
    """Invert the first 8 bytes of the first chunk of ``q``."""
    with h5py.File(path, "r") as f:
        offset = f["q"].id.get_chunk_info(0).byte_offset
    with open(path, "r+b") as fh:
        fh.seek(offset)
        data = fh.read(8)
        fh.seek(offset)
        fh.write(bytes(255 - x for x in data))


def test_a_resumed_sweep_removes_stale_part_files_and_names_a_damaged_member_it_redoes(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    first = sweep(TOP, MEMBERS, out, n_steps=N, client="serial", progress=False)
    assert [r["status"] for r in first.rows] == ["ok", "ok"]
    stale = out / "m0000.h5.part"
    stale.write_bytes(b"a run stopped long ago")
    damage(out / "m0001.h5")
    problem = member_file_problem(out / "m0001.h5", "m0001", MEMBERS[1])
    assert problem is not None and problem.startswith("damaged: rows 0 to ") and "/q fail their checksum" in problem
    assert member_file_problem(out / "m0000.h5", "m0000", MEMBERS[0]) is None
    with pytest.warns(SweepWarning, match=r"m0001\.h5: damaged: rows 0 to \d+ of /q fail.*; running m0001 again"):
        again = sweep(TOP, MEMBERS, out, n_steps=N, client="serial", progress=False)
    assert [r["reused"] for r in again.rows] == [True, False] and not stale.exists()
    assert read(out / "m0001.h5").committed == N + 1  # redone, intact
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["sweep.json", "summary.csv", "m0000.h5", "m0000.json", "m0001.h5", "m0001.json"]
    )


def test_command_line_says_which_member_it_redoes_and_draws_the_last_progress_line_once(tmp_path: Path) -> None:
    args = ["sweep", str(TOP), "--set", "step.rho_inf=0.5,0.9", "--set", f"run.n_steps={N}", "-o", "sw", "--serial"]
    res = cli(*args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("2/2 members") == 1, repr(res.stderr)  # one final state, one newline
    damage(tmp_path / "sw" / "m0000.h5")
    res = cli(*args, "--no-progress", cwd=tmp_path)
    assert res.returncode == 0 and "1 reused from an earlier run" in res.stdout, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kynemapy sweep: sw/m0000.h5: damaged: rows 0 to "), res.stderr
    assert lines[0].endswith("; running m0000 again"), res.stderr


def test_member_progress_draws_each_state_once() -> None:
    stream = io.StringIO()
    bar = MemberProgress(3, 1, stream=stream)
    bar.update(True)
    bar.update(False)
    bar.close()
    text = stream.getvalue()
    assert [text.count(f"{k}/3 members") for k in (1, 2, 3)] == [1, 1, 1], repr(text)
    assert text.endswith("\n") and text.count("\n") == 1 and "1 failed" in text


def test_a_resumed_sweep_on_dask_ends_without_a_traceback(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    args = ["sweep", str(TOP), "--set", "step.rho_inf=0.1,0.5,0.9", "--set", f"run.n_steps={N}", "-o", "sw"]
    res = cli(*args, "--workers", "2", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (tmp_path / "sw" / "m0002.h5").unlink()  # one member to redo
    for expected in ("2 reused", "3 reused"):
        res = cli(*args, "--workers", "2", "--no-progress", cwd=tmp_path)
        assert res.returncode == 0 and f"3 members ({expected} from an earlier run), 0 failed" in res.stdout
        assert "Traceback" not in res.stderr and "CommClosedError" not in res.stderr, res.stderr
