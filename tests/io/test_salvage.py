"""``read(path, salvage=True)`` returns every intact row, not only those before the first damaged
block, and says which rows are missing (issue 27, item 3)."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io import ResultFileError, ResultFileWarning, read

ROWS = 2001  # the initial state and 2000 steps
CHUNK = 50  # block=100: buffers and HDF5 chunks of 50 rows


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.3, 2.0))
    b.add_mass(n, mass=1.5, inertia=(1.0, 2.0, 3.0))
    path = tmp_path_factory.mktemp("salvage") / "whole.h5"
    kp.Simulation(b.build(), kp.StepParameters(h=0.001)).run(n_steps=2000, output=path, block=2 * CHUNK)
    return path


def raw(path: Path) -> dict[str, np.ndarray]:
    """The datasets as HDF5 holds them (h5py alone, no kynemapy reader)."""
    with h5py.File(path, "r") as f:
        assert f["q"].chunks[0] == CHUNK and int(f["committed"][0]) == ROWS
        return {name: f[name][()] for name in ("step", "time", "q", "v", "lam", "kinetic_energy")}


def flip(path: Path, dataset: str, chunk: int, n: int = 8) -> tuple[int, int]:
    """Invert ``n`` bytes inside chunk ``chunk`` of ``dataset``; return the chunk's rows (first, stop)."""
    with h5py.File(path, "r") as f:
        info = f[dataset].id.get_chunk_info(chunk)
    with open(path, "r+b") as fh:
        fh.seek(info.byte_offset)
        data = fh.read(n)
        fh.seek(info.byte_offset)
        fh.write(bytes(255 - x for x in data))
    first = info.chunk_offset[0]
    return first, first + CHUNK


def test_eight_flipped_bytes_in_the_first_chunk_of_q_lose_its_rows_only(whole: Path, tmp_path: Path) -> None:
    truth = raw(whole)
    path = tmp_path / "first.h5"
    path.write_bytes(whole.read_bytes())
    assert flip(path, "q", 0) == (0, 50)
    with pytest.raises(ResultFileError) as err:
        read(path)
    assert "rows 0 to 49 of /q fail their checksum" in str(err.value)
    assert f"rows 50 to {ROWS - 1} are intact" in str(err.value) and "salvage=True" in str(err.value)
    assert err.value.intact_rows == ROWS - 50 and err.value.missing_rows == [(0, 50)]
    with pytest.warns(ResultFileWarning, match=rf"returning the 1951 intact rows \(rows 0 to 49 of {ROWS} left out\)"):
        part = read(path, salvage=True)
    assert part.committed == ROWS - 50 and part.missing_rows == ((0, 50),)
    np.testing.assert_array_equal(part.step, np.arange(50, ROWS))
    for name, value in truth.items():
        np.testing.assert_array_equal(getattr(part, name), value[50:], err_msg=name)
    # the last row and its restart slot are intact: its restart data are returned, for the last row
    assert part.restart is not None and int(part.restart["step"][0]) == ROWS - 1


def test_damage_in_two_places_leaves_out_those_rows_of_every_dataset(whole: Path, tmp_path: Path) -> None:
    truth = raw(whole)
    path = tmp_path / "two.h5"
    path.write_bytes(whole.read_bytes())
    a = flip(path, "v", 7)  # rows 350 to 399 of v
    b = flip(path, "time", 40)  # rows 2000 (the last row, the chunk holding it)
    assert a == (350, 400) and b == (2000, 2050)
    with pytest.raises(ResultFileError) as err:
        read(path)
    assert "rows 0 to 349 and 400 to 1999 are intact" in str(err.value), str(err.value)
    with pytest.warns(ResultFileWarning, match=r"rows 350 to 399 and 2000 of 2001 left out"):
        part = read(path, salvage=True)
    keep = np.r_[0:350, 400:2000]
    assert part.committed == keep.size and part.missing_rows == ((350, 400), (2000, 2001))
    for name, value in truth.items():  # q, lam... of rows 350-399 are intact, but a row is kept whole or not at all
        np.testing.assert_array_equal(getattr(part, name), value[keep], err_msg=name)
    assert part.restart is None  # the last row is lost: no state to continue from


def test_an_intact_file_reads_whole_with_no_missing_rows(whole: Path) -> None:
    r = read(whole, salvage=True)
    assert r.committed == ROWS and r.missing_rows == ()
