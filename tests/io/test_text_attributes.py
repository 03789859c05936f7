"""Text attributes: fixed-length in the files kynemapy writes (inside the checksummed object headers),
and a damaged global heap of an older file named as damage instead of hanging the reader."""

from __future__ import annotations

import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io import ResultFileError, heap_guard, read


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    n = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.3, 2.0))
    b.add_mass(n, mass=1.5, inertia=(1.0, 2.0, 3.0))
    path = tmp_path_factory.mktemp("text") / "new.h5"
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.001))
    sim.run(n_steps=20, output=path, attrs={"note": "Grüße, 1 m/s", "empty": "", "tags": {"a": [1, "b"]}})
    return path


def text_attributes(path: Path) -> dict[str, tuple[str, object]]:
    """Every attribute of every object, as h5py alone reads it: (object/name) -> (dtype kind, value)."""
    out: dict[str, tuple[str, object]] = {}
    with h5py.File(path, "r") as f:
        objects = {"/": f}
        f.visit(lambda name: objects.update({name: f[name]}))  # None: visit every object
        for where, obj in objects.items():
            for name in obj.attrs:
                out[f"{where}:{name}"] = (obj.attrs.get_id(name).dtype.kind, obj.attrs[name])
    return out


def with_variable_text(source: Path, target: Path) -> None:
    """A copy of ``source`` whose text attributes are variable-length, as earlier kynemapy files hold them."""
    target.write_bytes(source.read_bytes())
    with h5py.File(target, "r+") as f:
        for obj in (f, f["checksums"], f["params"]):
            for name in list(obj.attrs):
                value = obj.attrs[name]
                if isinstance(value, bytes):
                    del obj.attrs[name]
                    obj.attrs[name] = value.decode("utf-8")  # h5py: variable-length


def heap_collections(path: Path) -> list[tuple[int, int]]:
    """(offset, size) of each global heap collection: signature GCOL, version 1, size at +8."""
    data = path.read_bytes()
    found = []
    at = data.find(b"GCOL")
    while at >= 0:
        if data[at + 4] == 1:
            found.append((at, int.from_bytes(data[at + 8 : at + 16], "little")))
        at = data.find(b"GCOL", at + 1)
    return found


def test_written_text_is_fixed_length_and_reads_back(written: Path) -> None:
    attrs = text_attributes(written)
    assert attrs["/:note"][0] == "S" and attrs["checksums:algorithm"][0] == "S" and attrs["params:solver"][0] == "S"
    assert [key for key, (kind, _) in attrs.items() if kind == "O"] == []  # nothing in the global heap
    assert heap_collections(written) == []
    r = read(written)
    assert r.attrs["note"] == "Grüße, 1 m/s" and r.attrs["empty"] == "" and r.attrs["tags"] == '{"a": [1, "b"]}'
    assert r.attrs["units"].startswith("{") and r.params == kp.StepParameters(h=0.001)


def test_variable_length_text_of_an_earlier_file_reads_the_same(written: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.h5"
    with_variable_text(written, old)
    assert text_attributes(old)["/:units"][0] == "O" and len(heap_collections(old)) >= 1
    new, earlier = read(written), read(old)
    assert earlier.attrs["note"] == "Grüße, 1 m/s" and earlier.attrs["empty"] == ""  # the values given
    assert earlier.params == kp.StepParameters(h=0.001) and earlier.attrs == new.attrs
    np.testing.assert_array_equal(earlier.q, new.q)


def test_a_damaged_global_heap_is_named_instead_of_hanging(
    written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "old.h5"
    with_variable_text(written, old)
    ((start, size),) = heap_collections(old)
    damaged = tmp_path / "damaged.h5"
    data = bytearray(old.read_bytes())
    data[start + size // 2 : start + size] = bytes(size - size // 2)  # the second half of the collection zeroed
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(heap_guard, "TIME_LIMIT", 5.0)
    t0 = time.monotonic()
    with pytest.raises(ResultFileError, match=r"damaged\.h5: damaged: the text attributes in its global heap"):
        read(damaged)
    assert time.monotonic() - t0 < 30.0


def test_no_child_where_none_can_start(written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frozen application (its executable is no Python) reads an earlier file without a child
    process; a child without h5py is no verdict on the file."""
    old = tmp_path / "old.h5"
    with_variable_text(written, old)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("no child process expected")

    with monkeypatch.context() as m:
        m.setattr(heap_guard.sys, "frozen", True, raising=False)
        m.setattr(heap_guard.subprocess, "run", refuse)
        assert read(old).attrs == read(written).attrs
    monkeypatch.setattr(heap_guard, "_CHILD", "import sys; sys.exit(4)")
    heap_guard._checked.clear()
    assert read(old).attrs == read(written).attrs  # exit 4: no h5py in the child, the file read as usual
