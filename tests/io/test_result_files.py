"""Result files that are damaged, foreign, left by a killed writer or in the way (issue 12).

Every damaged file must be refused within seconds by ``read``, ``Simulation.restart``,
``kynemapy info`` and ``kynemapy run --resume``, with the file, the dataset and the rows named
and the rows that are still intact; what is intact must be readable (``salvage=True``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import warnings
import zlib
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import xxhash

import kynemapy as kp
from kynemapy.io import ResultFileError, ResultFileWarning, ResultWriter, read

ROOT = Path(__file__).resolve().parents[2]
HEAVY_TOP = (ROOT / "examples" / "heavy_top.toml").read_text()
PARAMS = kp.StepParameters(h=0.001)


def free_body(mass: float = 1.5) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.3, 2.0))
    b.add_mass(n, mass=mass, inertia=(1.0, 2.0, 3.0))
    return b.build()


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished result file of 3001 rows written in blocks of 128 rows."""
    path = tmp_path_factory.mktemp("whole") / "whole.h5"
    kp.Simulation(free_body(), PARAMS).run(n_steps=3000, output=path, block=256)
    return path


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def popen_with_ctrl_c(command: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen`` whose child handles SIGINT as a command typed in a terminal does.

    A test suite started in the background (``cmd &`` in a script, ``nohup``, some CI runners)
    has SIGINT ignored, and an ignored signal stays ignored through ``exec``: the child would
    never see the Ctrl-C this test sends (it ran on, and the test failed after 60 s, whenever
    the suite was launched that way).  A *handled* signal is reset to its default at ``exec``,
    so the child's Python installs its own handler; the suite's own disposition is restored
    right after the start."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(command, **kwargs)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def refused_everywhere(path: Path, pattern: str) -> ResultFileError:
    """read, Simulation.restart, `kynemapy info` and `kynemapy run --resume` refuse ``path`` within 5 s each."""
    started = time.perf_counter()
    with pytest.raises(ResultFileError, match=pattern) as err:
        read(path)
    assert time.perf_counter() - started < 5.0
    assert str(path) in str(err.value) and err.value.path == str(path)
    started = time.perf_counter()
    with pytest.raises(ResultFileError, match=pattern):
        kp.Simulation.restart(path)
    assert time.perf_counter() - started < 5.0
    res = cli("info", str(path), cwd=path.parent, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert str(path) in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    toml = path.parent / "free.toml"
    toml.write_text(HEAVY_TOP)
    res = cli("run", str(toml), "-o", str(path), "--resume", "--no-progress", cwd=path.parent, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr and str(path) in res.stderr, res.stderr
    return err.value


# ------------------------------------------------------------------------------ damaged files
def test_a_file_cut_short_fails_fast_and_names_the_rows_still_intact(whole: Path, tmp_path: Path) -> None:
    data = whole.read_bytes()
    full = read(whole)
    cut = tmp_path / "half.h5"
    cut.write_bytes(data[: len(data) // 2])
    err = refused_everywhere(cut, r"half\.h5: damaged HDF5 file, cut short")
    assert err.intact_rows is not None and 0 < err.intact_rows < full.committed
    assert f"rows 0 to {err.intact_rows - 1} are intact" in str(err) and "salvage=True" in str(err)
    with (
        pytest.warns(ResultFileWarning, match="cut short"),
        pytest.warns(ResultFileWarning, match=r"half\.h5: damaged: rows \d+ to \d+ of .* fail their checksum"),
    ):
        part = read(cut, salvage=True)  # two warnings: the file is cut short, the rows past the cut fail
    assert part.committed == err.intact_rows
    for name in ("time", "q", "v", "lam", "kinetic_energy"):
        np.testing.assert_array_equal(getattr(part, name), getattr(full, name)[: part.committed], err_msg=name)
    assert part.restart is None  # the restart state belongs to the last row, which is gone

    head = tmp_path / "head.h5"
    head.write_bytes(data[:2048])
    err = refused_everywhere(head, r"head\.h5: damaged HDF5 file, cut short.*no row can be read")
    assert err.intact_rows == 0
    with pytest.raises(ResultFileError, match=r"head\.h5: damaged HDF5 file, cut short.*no row can be read"):
        read(head, salvage=True)  # nothing to salvage: still an error naming the file, not h5py's


def test_a_zeroed_second_half_is_detected_not_read_as_rows_at_time_zero(whole: Path, tmp_path: Path) -> None:
    """A copy whose second half never arrived (zeros, full length): rows of zeros were returned as data."""
    data = bytearray(whole.read_bytes())
    data[len(data) // 2 :] = bytes(len(data) - len(data) // 2)
    path = tmp_path / "zeroed.h5"
    path.write_bytes(bytes(data))
    err = refused_everywhere(path, r"zeroed\.h5: damaged: rows \d+ to \d+ of /.* fail their checksum")
    full = read(whole)
    assert 0 < err.intact_rows < full.committed
    assert any(name == "q" for name, _, _ in err.problems)
    with pytest.warns(ResultFileWarning):
        part = read(path, salvage=True)
    assert part.committed == err.intact_rows and np.all(part.time[1:] > 0)
    np.testing.assert_array_equal(part.q, full.q[: part.committed])


def random_bytes_into(path: Path, offset: int, n: int = 4096) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(np.random.default_rng(12).bytes(n))


def test_random_bytes_in_a_data_chunk_name_the_dataset_and_rows(whole: Path, tmp_path: Path) -> None:
    path = tmp_path / "noise.h5"
    path.write_bytes(whole.read_bytes())
    with h5py.File(path, "r") as f:
        chunk = f["q"].id.get_chunk_info(5)  # rows 5 * 128 ... of q
        rows = f["q"].chunks[0]
    random_bytes_into(path, chunk.byte_offset + 64)
    err = refused_everywhere(path, r"noise\.h5: damaged: rows \d+ to \d+ of /q fail their checksum")
    first = chunk.chunk_offset[0]
    assert ("q", first, first + rows) in [(n, a, b) for n, a, b in err.problems if a is not None and b is not None]
    committed = read(whole).committed
    assert err.intact_rows == committed - rows and err.missing_rows == [(first, first + rows)]
    with pytest.warns(ResultFileWarning):
        part = read(path, salvage=True)
    # every intact row, those after the damaged block too (issue 27); the last row's restart slot is intact
    assert part.committed == committed - rows and part.missing_rows == ((first, first + rows),)
    assert part.restart is not None and int(part.restart["step"][0]) == part.step[-1]
    assert np.all(np.abs(part.time) < 10.0) and np.all(np.abs(part.kinetic_energy) < 1e3)


def test_a_damaged_restart_slot_is_never_resumed_from(whole: Path, tmp_path: Path) -> None:
    path = tmp_path / "slot.h5"
    path.write_bytes(whole.read_bytes())
    with h5py.File(path, "r") as f:
        info = f["restart/slot_info"][()]
        offset = f["restart/v"].id.get_offset()
        slot = int(np.argmax(info[:, 1]))  # the newest: the one a restart would use
        itemsize = f["restart/v"][0].nbytes
    random_bytes_into(path, offset + slot * itemsize, itemsize)
    refused_everywhere(path, rf"slot\.h5: damaged: restart slot {slot} .*fails its checksum")
    with pytest.warns(ResultFileWarning):
        r = read(path, salvage=True)
    assert r.restart is None and r.committed == read(whole).committed  # the rows themselves are intact


def test_a_damaged_model_table_is_named(whole: Path, tmp_path: Path) -> None:
    path = tmp_path / "model.h5"
    path.write_bytes(whole.read_bytes())
    with h5py.File(path, "r") as f:
        offset = f["model/mass_m_star"].id.get_offset()
    random_bytes_into(path, offset, 16)
    refused_everywhere(path, r"model\.h5: damaged: /model/mass_m_star fails its checksum")


def xxh3_int64(arr: np.ndarray) -> int:
    """The documented record entry: XXH3-64 (seed 0) of the bytes in C order, as the int64 of the same bits."""
    return int(np.array(xxhash.xxh3_64_intdigest(np.ascontiguousarray(arr).tobytes()), dtype=np.uint64).view(np.int64))


def test_the_checksums_are_the_documented_xxh3_digests(whole: Path) -> None:
    """Every record holds, per dataset, XXH3-64 of that block's rows; each restart slot the XXH3-64
    of its arrays run together (State's fields, then Inputs'): what another reader would compute."""
    with h5py.File(whole, "r") as f:
        ck = f["checksums"]
        assert ck.attrs["algorithm"].decode().startswith("XXH3-64")
        columns = json.loads(ck.attrs["columns"])
        records = ck[()]
        committed = int(f["committed"][0])
        assert records[0, 0] == 0 and records[-1, 1] == committed
        np.testing.assert_array_equal(records[1:, 0], records[:-1, 1])  # the blocks tile the rows
        for rec in records:
            a, b = int(rec[0]), int(rec[1])
            for k, name in enumerate(columns[2:]):
                assert int(rec[2 + k]) == xxh3_int64(f[name][a:b]), (name, a, b)
        gr = f["restart"]
        assert gr["slot_crc"].attrs["algorithm"].decode().startswith("XXH3-64")
        slot = int(np.argmax(gr["slot_info"][:, 1]))
        names = [*kp.State._fields, *kp.Inputs._fields]
        joined = b"".join(np.ascontiguousarray(gr[name][slot]).tobytes() for name in names)
        assert int(gr["slot_crc"][slot]) == xxh3_int64(np.frombuffer(joined, dtype=np.uint8))


def as_crc32_file(path: Path) -> None:
    """Rewrite a result file's checksums as an earlier kynemapy wrote them: CRC-32 (zlib) per block and
    dataset, the ``algorithm`` attribute saying so; the restart slots' CRC-32 chained over their arrays,
    with no ``algorithm`` attribute."""
    with h5py.File(path, "r+") as f:
        ck = f["checksums"]
        columns = json.loads(ck.attrs["columns"])
        records = ck[()]
        for rec in records:
            a, b = int(rec[0]), int(rec[1])
            for k, name in enumerate(columns[2:]):
                rec[2 + k] = zlib.crc32(np.ascontiguousarray(f[name][a:b]).tobytes())
        ck[...] = records
        ck.attrs["algorithm"] = "CRC-32 (zlib.crc32) of each dataset's rows first_row .. stop_row - 1, C order"
        gr = f["restart"]
        crcs = gr["slot_crc"][()]
        for slot in range(2):
            crc = 0
            for name in (*kp.State._fields, *kp.Inputs._fields):
                crc = zlib.crc32(np.ascontiguousarray(gr[name][slot]).tobytes(), crc)
            crcs[slot] = crc
        gr["slot_crc"][...] = crcs
        del gr["slot_crc"].attrs["algorithm"]


def test_a_file_with_the_crc32_checksums_of_an_earlier_version_is_still_checked(whole: Path, tmp_path: Path) -> None:
    path = tmp_path / "crc.h5"
    path.write_bytes(whole.read_bytes())
    as_crc32_file(path)
    full, old = read(whole), read(path)
    assert old.committed == full.committed and old.restart is not None
    np.testing.assert_array_equal(old.q, full.q)
    sim = kp.Simulation.restart(path)
    assert sim.step_count == int(full.step[-1])
    # damage is still found with the old checksums: rows, and the restart slot
    with h5py.File(path, "r") as f:
        chunk = f["q"].id.get_chunk_info(5)
        offset = f["restart/v"].id.get_offset()
        slot = int(np.argmax(f["restart/slot_info"][:, 1]))
        itemsize = f["restart/v"][0].nbytes
    damaged = tmp_path / "crc_noise.h5"
    damaged.write_bytes(path.read_bytes())
    random_bytes_into(damaged, chunk.byte_offset + 64)
    with pytest.raises(ResultFileError, match=r"crc_noise\.h5: damaged: rows \d+ to \d+ of /q fail their checksum"):
        read(damaged)
    random_bytes_into(path, offset + slot * itemsize, itemsize)
    with pytest.raises(ResultFileError, match=rf"crc\.h5: damaged: restart slot {slot} .*fails its checksum"):
        read(path)


def test_checksums_of_an_unknown_algorithm_are_refused_not_trusted(whole: Path, tmp_path: Path) -> None:
    path = tmp_path / "future.h5"
    path.write_bytes(whole.read_bytes())
    with h5py.File(path, "r+") as f:
        f["checksums"].attrs["algorithm"] = "BLAKE9-1024 of each dataset's rows"
    refused_everywhere(path, r"future\.h5: its checksums \(/checksums\) are of an algorithm .* not know.*BLAKE9")
    slot = tmp_path / "future_slot.h5"
    slot.write_bytes(whole.read_bytes())
    with h5py.File(slot, "r+") as f:
        f["restart/slot_crc"].attrs["algorithm"] = "BLAKE9-1024 of the slot"
    with pytest.raises(ResultFileError, match=r"future_slot\.h5: its checksums \(/restart/slot_crc\) are of an algo"):
        read(slot)


# --------------------------------------------------------------------------- foreign files
@pytest.mark.parametrize("kind", ["plain_hdf5", "empty", "zeroed_header", "text"])
def test_a_file_kynemapy_did_not_write_is_named_as_such(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"{kind}.h5"
    if kind == "plain_hdf5":
        with h5py.File(path, "w") as f:
            f["x"] = np.arange(3.0)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "zeroed_header":
        path.write_bytes(bytes(8192))
    else:
        path.write_text("time,q\n0,1\n")
    err = refused_everywhere(path, rf"{kind}\.h5: not a kynemapy result file")
    assert err.intact_rows is None


# ------------------------------------------------------------------------------ killed writers
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import kynemapy as kp
    b = kp.ModelBuilder()
    n = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 2.0))
    b.add_mass(n, mass=1.5, inertia=(1.0, 2.0, 3.0))
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.001))
    sim.run(n_steps=200, output=sys.argv[1], block=1)  # no thread: every row is committed before the next step
    w = kp.io.ResultWriter(sys.argv[2], sim.model, sim.params, block=4)
    print("ready", flush=True)
    if sys.argv[3] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.stdin.read()  # "live": stay alive until the parent closes stdin
    """
)


def test_a_killed_writers_file_opens_in_any_hdf5_reader_after_kynemapy_touched_it(tmp_path: Path) -> None:
    done, killed = tmp_path / "done.h5", tmp_path / "killed.h5"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(done), str(killed), "kill"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with pytest.raises(OSError, match="already open for write"):
        h5py.File(killed, "r").close()
    with pytest.warns(ResultFileWarning, match=r"killed\.h5: its writer \(pid \d+\) was killed; cleared"):
        r = read(killed)
    assert r.committed == 0 and not r.closed_cleanly
    with h5py.File(killed, "r") as f:  # a plain HDF5 reader, no h5clear
        assert int(f["committed"][0]) == 0 and f.attrs["kynemapy_version"].decode() == kp.__version__
    again = read(killed)  # no warning the second time, still not a clean close
    assert not again.closed_cleanly
    assert read(done).closed_cleanly and read(done).committed == 201


def test_a_live_writers_marks_are_left_alone(tmp_path: Path) -> None:
    live = tmp_path / "live.h5"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "done.h5"), str(live), "live"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready"
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "cleared" warning
            r = read(live)
        assert r.committed == 0 and not r.closed_cleanly
        with pytest.raises(OSError, match="already open for write"):
            h5py.File(live, "r").close()
        proc.stdin.close()
    finally:
        proc.wait(timeout=60)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):  # no unclosed-file ResourceWarning
            if pipe is not None:
                pipe.close()
    assert proc.returncode == 0


# ------------------------------------------------------------------------- files in the way
def test_run_refuses_to_overwrite_an_existing_file_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "run.h5"
    kp.Simulation(free_body(15.0), PARAMS).run(n_steps=10, output=path)
    other = kp.Simulation(free_body(30.0), PARAMS)
    with pytest.raises(FileExistsError, match=r"run\.h5' exists; pass overwrite=True.*--resume"):
        other.run(n_steps=20, output=path)
    assert read(path).committed == 11 and read(path).model.mass_m_star[0, 0, 0] == 15.0
    other.run(n_steps=20, output=path, overwrite=True)
    assert read(path).committed == 21 and read(path).model.mass_m_star[0, 0, 0] == 30.0
    with pytest.raises(FileExistsError):
        kp.simulate(free_body(), PARAMS, n_steps=1, output=path)
    kp.simulate(free_body(), PARAMS, n_steps=1, output=path, overwrite=True)
    sim = kp.Simulation.restart(path)  # resuming its own file needs no overwrite
    sim.run(n_steps=3, output=path)
    assert read(path).committed == 5


def test_command_line_overwrite_and_resume_with_another_model(tmp_path: Path) -> None:
    own, other = tmp_path / "top.toml", tmp_path / "other.toml"
    own.write_text(HEAVY_TOP.replace("n_steps = 400", "n_steps = 40"))
    other.write_text(HEAVY_TOP.replace("mass = 15.0", "mass = 30.0").replace("n_steps = 400", "n_steps = 80"))
    out = tmp_path / "ht.h5"
    assert cli("run", str(own), "-o", str(out), "--no-progress", cwd=tmp_path).returncode == 0
    before = out.read_bytes()
    res = cli("run", str(other), "-o", str(out), "--no-progress", cwd=tmp_path)
    assert res.returncode == 2 and "--overwrite" in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.startswith("kynemapy run: the output file") and "run: run:" not in res.stderr
    res = cli("run", str(other), "-o", str(out), "--resume", "--no-progress", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "mass_m_star[0, 0, 0] is 30.0 in the new model, 15.0 in the file's" in res.stderr
    assert f"kynemapy run {own.resolve()} -o {out} --resume" in res.stderr
    assert out.read_bytes() == before  # untouched
    res = cli("run", str(other), "-o", str(out), "--overwrite", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert read(out).committed == 81 and read(out).model.mass_m_star[0, 0, 0] == 30.0


def test_command_line_options_are_validated_and_output_path_may_come_from_o(tmp_path: Path) -> None:
    toml = tmp_path / "top.toml"
    toml.write_text(HEAVY_TOP.replace("n_steps = 400", "n_steps = 20").replace('path = "heavy_top.h5"\n', ""))
    for option in ("--every", "--block"):
        res = cli("run", str(toml), "-o", str(tmp_path / "x.h5"), option, "0", cwd=tmp_path)
        assert res.returncode == 2 and option in res.stderr and ">= 1" in res.stderr, res.stderr
        assert not (tmp_path / "x.h5").exists()
    res = cli("run", str(toml), "-o", str(tmp_path / "y.h5"), "--every", "5", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(read(tmp_path / "y.h5").step, [0, 5, 10, 15, 20])
    res = cli("run", str(toml), "--no-progress", cwd=tmp_path)  # neither -o nor a path
    assert res.returncode == 2 and "no output file" in res.stderr


def test_ctrl_c_during_a_run_is_one_line_saying_how_to_resume(tmp_path: Path) -> None:
    toml = tmp_path / "long.toml"
    toml.write_text(HEAVY_TOP.replace("n_steps = 400", "n_steps = 100000000"))
    out = tmp_path / "long.h5"
    # -X faulthandler: if it does not stop, SIGABRT makes it print where each thread is
    command = [sys.executable, "-X", "faulthandler", "-m", "kynemapy", "run", str(toml), "-o", str(out)]
    proc = popen_with_ctrl_c(
        [*command, "--block", "64", "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        start = time.time()
        while time.time() < start + 300 and proc.poll() is None:
            try:
                with warnings.catch_warnings():  # a read while a block is being written says so: expected here
                    warnings.simplefilter("ignore", ResultFileWarning)
                    if read(out).committed >= 64:
                        break
            except OSError:
                pass
            time.sleep(0.05)
        waited = time.time() - start
        assert proc.poll() is None, f"the run ended by itself after {waited:.1f} s: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGINT)  # this child, by its id
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGABRT)
            _, stderr = proc.communicate(timeout=60)
            pytest.fail(
                f"still running 60 s after SIGINT (sent {waited:.1f} s after the start); its threads:\n{stderr}"
            )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    r = read(out)
    match = re.fullmatch(
        rf"kynemapy run: interrupted at step (\d+), t = (\S+) s; (\d+) rows are in {re.escape(str(out))}; "
        rf"continue with: kynemapy run {re.escape(str(toml))} -o {re.escape(str(out))} --resume",
        lines[0],
    )
    assert match is not None, lines[0]
    step, t, rows = int(match[1]), float(match[2]), int(match[3])
    assert rows == r.committed >= 64 and step >= r.step[-1] and t == pytest.approx(step * 0.002, rel=1e-9)
    assert r.restart is not None and int(r.restart["step"][0]) == r.step[-1]


def test_a_file_of_an_earlier_version_without_strain_energy_or_beams(tmp_path: Path) -> None:
    """A file written before ``strain_energy`` and the beam model fields existed (made here by
    removing them, its checksum records rewritten without the column) reads with the strain
    energy computed from its states (a spring's ½ k (l − l_ref)²), and resumes."""
    b = kp.ModelBuilder()
    a = b.add_node(position=(0.0, 0.0, 0.0))
    c = b.add_node(position=(1.0, 0.0, 0.0), velocity=(0.3, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(c, mass=2.0, inertia=(0.1, 0.1, 0.1))
    b.add_spring(a, c, stiffness=50.0, undeformed_length=1.0)
    b.add_fixed_bc(a)
    model = b.build()
    params = kp.StepParameters(h=0.01)
    path = tmp_path / "old.h5"
    kp.Simulation(model, params).run(n_steps=40, output=path)
    new = read(path)
    with h5py.File(path, "r+") as f:
        ck = f["checksums"]
        columns = json.loads(ck.attrs["columns"])
        keep = [i for i, name in enumerate(columns) if name != "strain_energy"]
        records = ck[()][:, keep]
        attrs = dict(ck.attrs)
        del f["checksums"]
        f.create_dataset("checksums", data=records, maxshape=(None, records.shape[1]), chunks=(64, records.shape[1]))
        for key, value in attrs.items():
            f["checksums"].attrs[key] = value
        f["checksums"].attrs["columns"] = json.dumps([columns[i] for i in keep])
        del f["strain_energy"]
        for name in list(f["model"]):
            if name.startswith("beam_"):
                del f["model"][name]
        del f["model"].attrs["n_beams"]
    old = read(path)
    assert old.model.n_beams == 0 and old.model.beam_node.shape == (0, 2)
    np.testing.assert_array_equal(old.q, new.q)
    length = np.linalg.norm(np.array([1.0, 0.0, 0.0]) + old.q[:, 1, :3] - old.q[:, 0, :3], axis=-1)
    np.testing.assert_allclose(old.strain_energy, 0.5 * 50.0 * (length - 1.0) ** 2, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(old.strain_energy, new.strain_energy)
    sim = kp.Simulation.restart(path)
    sim.run(n_steps=10, output=path)
    assert read(path).committed == old.committed + 10


# ------------------------------------------------------------------------------ the kinds' memories
# Contact's ``touching`` (the points touching at the next step's start under the hard body law):
# stored with each restart slot, checked by its own digest, loaded by ``Simulation.restart``.
MEMORY_G, MEMORY_A = 9.81, 0.1  # m/s², m (the cubes' half edge)
MEMORY_PARAMS = kp.StepParameters(h=0.001, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def two_cubes() -> kp.Model:
    """A cube resting on the hard floor and a second one 1 mm above it, μ = 0.5 (it lands at
    about 14 ms and the two touch on a face)."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -MEMORY_G))
    for z in (MEMORY_A, 3 * MEMORY_A + 1e-3):
        node = b.add_node(position=(0.0, 0.0, z))
        b.add_mass(node, mass=1.0, inertia=(MEMORY_A * MEMORY_A / 1.5,) * 3)
        b.add_box(node, (MEMORY_A, MEMORY_A, MEMORY_A), center=(0.0, 0.0, z), axes=np.eye(3))
    b.add_ground_plane(law="hard", friction=0.5)
    b.set_body_contact(law="hard", friction=0.5)
    return b.build()


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, kp.Simulation]:
    """The two cubes run for 40 steps to a file, and the simulation that wrote it."""
    path = tmp_path_factory.mktemp("memory") / "cubes.h5"
    sim = kp.Simulation(two_cubes(), MEMORY_PARAMS)
    sim.run(n_steps=40, output=path, every=1)
    return path, sim


def test_the_touching_points_are_kept_with_the_restart_slot(landed: tuple[Path, kp.Simulation]) -> None:
    """The file's newest slot holds the points the run remembers after its last step, in the
    documented layout (the plane points first, then the 4 corners between the cubes, kinds and
    keys integral), with the documented digest; a restart loads exactly these points."""
    path, sim = landed
    rows = sim.joint_stops.bodies.touching_rows()
    plane = rows[:, 0] == 0.0
    k = int(np.count_nonzero(plane))
    assert rows.shape == (k + 4, 8) and np.all(plane[:k]) and np.all(rows[k:, 0] == 1.0)  # planes' first
    keys = rows[:k, 1]
    assert np.all(np.diff(keys) > 0) and np.array_equal(keys, np.round(keys))  # sorted integral point keys
    assert np.array_equal(rows[k:, 1], np.full(4, 0 * 2 + 1))  # shape 0 below shape 1: key 0 * 2 + 1
    # the upper cube (body B) landed on the lower one (A) face to face: B's four lower corners
    # (± a in x and y, −a in z), A's four upper ones (+a in z)
    np.testing.assert_allclose(np.abs(rows[k:, 2:8]), np.full((4, 6), MEMORY_A), atol=1e-9)
    np.testing.assert_allclose(rows[k:, 4], np.full(4, -MEMORY_A), atol=1e-9)
    np.testing.assert_allclose(rows[k:, 7], np.full(4, MEMORY_A), atol=1e-9)
    kept = read(path).restart_memory()
    assert list(kept) == ["touching"] and np.array_equal(kept["touching"], rows)
    with h5py.File(path, "r") as f:
        gr = f["restart"]
        slot = int(np.argmax(gr["slot_info"][:, 1]))
        count = gr["memory_rows"][slot]
        names = gr["memory_rows"].attrs["names"]
        assert json.loads(names.decode() if isinstance(names, bytes) else names) == ["touching"]
        h = xxhash.xxh3_64()
        h.update(np.ascontiguousarray(count, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(gr["memory/touching"][slot, : count[0]]).tobytes())
        assert int(gr["memory_digest"][slot]) == int(np.array(h.intdigest(), dtype=np.uint64).view(np.int64))
    again = kp.Simulation.restart(path)
    assert np.array_equal(again.joint_stops.bodies.touching_rows(), rows)


def test_memories_of_any_size_are_kept_in_either_slot(tmp_path: Path) -> None:
    """Appends whose memories grow (3, 100 rows) and shrink (5, 0 rows, none) each read back as
    written; the slot they do not touch keeps its rows through the dataset's growth."""
    model = two_cubes()
    sim = kp.Simulation(model, MEMORY_PARAMS)
    rng = np.random.default_rng(3)
    with ResultWriter(tmp_path / "grow.h5", model, MEMORY_PARAMS, block=4) as w:
        for k, n in enumerate((3, 100, 5, 0, None)):
            sim.step()
            rows = {
                "time": np.array([sim.time]),
                "step": np.array([sim.step_count]),
                "q": sim.state.q[None],
                "v": sim.state.v[None],
                "vd": sim.state.vd[None],
                "a": sim.state.a[None],
                "iterations": np.array([1]),
                "error": np.array([0.0]),
                "lam": sim.state.lam[None],
                "constraint_output": sim.state.constraint_output[None],
            }
            memory = None if n is None else {"touching": rng.normal(size=(n, 8))}
            w.append(rows, state=sim.save_state(), inputs=sim.inputs, memory=memory)
            got = read(tmp_path / "grow.h5").restart_memory()
            if n is None:
                assert got == {}  # not kept: a restart starts from the state's own touching points
            else:
                assert np.array_equal(got["touching"], memory["touching"]), k
            if k == 0:
                first = memory["touching"]
            if k == 1:  # slot 1 grew the dataset to 100 rows: slot 0 still holds the first append's 3
                with h5py.File(tmp_path / "grow.h5", "r") as f:
                    assert f["restart/memory/touching"].shape[1] >= 100
                    assert np.array_equal(f["restart/memory_rows"][0], [3])
                    assert np.array_equal(f["restart/memory/touching"][0, :3], first)
    with pytest.raises(ValueError, match=r"memory touching must have shape \(R, 8\)"):
        with ResultWriter(tmp_path / "bad.h5", model, MEMORY_PARAMS) as w:
            w.append(rows, state=sim.save_state(), inputs=sim.inputs, memory={"touching": np.zeros((2, 7))})


def test_a_damaged_memory_is_never_resumed_from(landed: tuple[Path, kp.Simulation], tmp_path: Path) -> None:
    path = tmp_path / "memory.h5"
    path.write_bytes(landed[0].read_bytes())
    with h5py.File(path, "r") as f:
        gr = f["restart"]
        slot = int(np.argmax(gr["slot_info"][:, 1]))
        ds = gr["memory/touching"]
        offset = ds.id.get_chunk_info_by_coord((slot, 0, 0)).byte_offset  # chunks (1, 64, 8): the slot's rows
    random_bytes_into(path, offset + 8 * 8, 8 * 8)  # its second row
    refused_everywhere(path, rf"memory\.h5: damaged: restart slot {slot}'s memory .*fails its checksum")
    with pytest.warns(ResultFileWarning, match="memory"):
        r = read(path, salvage=True)
    assert r.restart is None and r.committed == 41


MEMORY_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import kynemapy as kp
    import kynemapy.io.memory as memory

    sys.path.insert(0, sys.argv[2])  # this test module's folder: its model and parameters
    from test_result_files import MEMORY_PARAMS, two_cubes

    write = memory.SlotMemory.write

    def write_and_die(self, slot, kept):
        # the first memory that outgrows its dataset (the upper cube has landed): grown, its rows
        # written and flushed, then killed before the row counts, the digest and the slot's mark
        rows, ds = kept["touching"], self._group["memory/touching"]
        if 0 < ds.shape[1] < rows.shape[0]:
            ds.resize((2, 2 * rows.shape[0], 8))
            ds[slot, : rows.shape[0]] = rows
            ds.file.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        write(self, slot, kept)

    memory.SlotMemory.write = write_and_die
    kp.Simulation(two_cubes(), MEMORY_PARAMS).run(n_steps=60, output=sys.argv[1], every=1, block=16)
    """
)


def test_a_run_killed_while_its_memory_grows_resumes_bit_for_bit(tmp_path: Path) -> None:
    """Killed while writing a restart slot's memory that outgrew its dataset (grown and written,
    not yet counted, digested or marked): the file restarts from the slot before, with its own
    memory, and the resumed run equals one never stopped, row by row."""
    path, whole = tmp_path / "killed.h5", tmp_path / "whole.h5"
    child = [sys.executable, "-c", MEMORY_CHILD, str(path), str(Path(__file__).parent)]
    proc = subprocess.run(child, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with pytest.warns(ResultFileWarning, match="was killed"):
        r = read(path)
    assert 0 < r.committed < 61
    kept = r.restart_memory()["touching"]
    with h5py.File(path, "r") as f:
        assert f["restart/memory/touching"].shape[1] > kept.shape[0]  # the killed write grew it
    sim = kp.Simulation.restart(path)
    assert np.array_equal(sim.joint_stops.bodies.touching_rows(), kept)
    sim.run(n_steps=60 - sim.step_count, output=path, every=1)
    kp.Simulation(two_cubes(), MEMORY_PARAMS).run(n_steps=60, output=whole, every=1)
    a, b = read(whole), read(path)
    assert b.committed == 61
    for name in ("q", "v", "vd", "lam"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.restart_memory()["touching"], b.restart_memory()["touching"])
