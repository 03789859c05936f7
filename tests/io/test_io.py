"""Result files: HDF5 round trip, SWMR crash safety, restart data, Kynema NetCDF input, energy/momentum."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from references import model_energy_and_momentum

import kynemapy as kp
from kynemapy.engine.rows import DERIVED, ROW_FIELDS, ROW_NAMES
from kynemapy.io import Result, ResultFileWarning, ResultWriter, energy_and_momentum, read, read_kynema_netcdf
from kynemapy.io.netcdf import NC_FILL_DOUBLE

#: the row fields the caller of ResultWriter.append must pass (the others are derived from q and v)
REQUIRED_ROWS = tuple(name for name in ROW_NAMES if name not in DERIVED)
DERIVED_ROWS = DERIVED
#: the derived fields of masses (energies of motion and gravity, momenta): what the numpy twin computes
MOTION_ROWS = ("kinetic_energy", "potential_energy", "linear_momentum", "angular_momentum")


def spring_strain_energy(model: kp.Model, q: np.ndarray) -> np.ndarray:
    """½ k (l − l_ref)² summed over the springs, per row (numpy, from the model's arrays)."""
    q = np.asarray(q)
    out = np.zeros(q.shape[:-2])
    springs = zip(model.spring_node, model.spring_x0, model.spring_l_ref, model.spring_k, strict=True)
    for (a, b), x0, l_ref, k in springs:
        length = np.linalg.norm(x0 + q[..., b, :3] - q[..., a, :3], axis=-1)
        out += 0.5 * k * (length - l_ref) ** 2
    return out


ROOT = Path(__file__).resolve().parents[2]

# Shared by the test process and the writer subprocesses (exec'd in both), so that both
# build the same model and the parent can recompute every row the child wrote.
HELPERS = textwrap.dedent(
    """
    import numpy as np
    import kynemapy as kp

    def small_model():
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
        a = b.add_node(position=(0.0, 0.0, 0.0))
        c = b.add_node(position=(1.0, 0.0, 0.0), orientation=(np.cos(0.3), 0.0, 0.0, np.sin(0.3)),
                       velocity=(0.1, 0.2, 0.3, 0.0, 0.0, 1.0))
        d = b.add_node(position=(2.0, 0.5, 0.0))
        b.add_mass(c, mass=3.0, inertia=(0.1, 0.2, 0.3))
        m_star = np.diag([2.0, 2.0, 2.0, 0.5, 0.6, 0.7])
        m_star[5, 1] = m_star[1, 5] = 2.0 * 0.1   # m η̃ with η = (0.1, 0.0, 0.0)
        m_star[4, 2] = m_star[2, 4] = -2.0 * 0.1
        b.add_mass(d, mass_matrix=m_star)
        b.add_spring(c, d, stiffness=100.0, undeformed_length=1.0)
        b.add_fixed_bc(a)
        b.add_revolute_joint(a, c, axis=(0.0, 0.0, 1.0), brake_torque=0.5)
        b.add_spherical_joint(d, point=(2.0, 0.0, 0.0))
        return b.build()

    def make_block(model, start, n):
        # Deterministic rows start .. start + n - 1: every value a function of the row index.
        nn, nc = model.n_nodes, model.n_constraints
        rng = np.random.default_rng(1000 + start)
        rows = np.arange(start, start + n)
        q = rng.standard_normal((n, nn, 7))
        q[:, :, 3:] /= np.linalg.norm(q[:, :, 3:], axis=-1, keepdims=True)
        return {
            "time": 0.01 * (rows + 1),
            "step": rows + 1,
            "q": q,
            "v": rng.standard_normal((n, nn, 6)),
            "vd": rng.standard_normal((n, nn, 6)),
            "a": rng.standard_normal((n, nn, 6)),
            "iterations": rng.integers(1, 10, n),
            "error": rng.random(n),
            "lam": rng.standard_normal((n, nc, 6)),
            "constraint_output": rng.standard_normal((n, nc, 3)),
        }

    def state_of_last_row(model, block):
        # A State (and Inputs) whose entries are tied to the block's last row.
        rng = np.random.default_rng(int(block["step"][-1]))
        nn, nc = model.n_nodes, model.n_constraints
        state = kp.State(
            q=block["q"][-1].copy(), q_prev=rng.standard_normal((nn, 7)), q_delta=rng.standard_normal((nn, 6)),
            v=block["v"][-1].copy(), vd=block["vd"][-1].copy(), a=block["a"][-1].copy(),
            x=rng.standard_normal((nn, 7)), lam=block["lam"][-1].copy(),
            constraint_output=block["constraint_output"][-1].copy(),
            time=np.array([block["time"][-1]]), step=np.array([block["step"][-1]], dtype=np.int64),
        )
        inputs = kp.Inputs(f=rng.standard_normal((nn, 6)), constraint_input=rng.standard_normal((nc, 7)))
        return state, inputs
    """
)
_ns: dict = {}
exec(HELPERS, _ns)
small_model = _ns["small_model"]
make_block = _ns["make_block"]
state_of_last_row = _ns["state_of_last_row"]

PARAMS = kp.StepParameters(h=0.01, rho_inf=0.7, max_iter=7, atol=1e-6, rtol=1e-4, geometric_stiffness=True)


def blocks(model: kp.Model, sizes: list[int]) -> list[dict[str, np.ndarray]]:
    out, start = [], 0
    for n in sizes:
        out.append(make_block(model, start, n))
        start += n
    return out


def concat(bs: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([b[k] for b in bs]) for k in bs[0]}


def assert_models_equal(a: kp.Model, b: kp.Model) -> None:
    for name in kp.Model._fields:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(y, np.ndarray):
            assert isinstance(x, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, name
            np.testing.assert_array_equal(x, y, err_msg=name)
            assert not x.flags.writeable and x.flags.c_contiguous, name
        else:
            assert type(x) is int and x == y, name


# ------------------------------------------------------------------------------------ round trip
def test_round_trip_every_array_model_params_and_attributes(tmp_path: Path) -> None:
    model = small_model()
    assert model.n_constraints == 4 and model.n_masses == 2
    path = tmp_path / "run.h5"
    bs = blocks(model, [8, 8, 8, 5])  # the last block is shorter than a chunk
    given = (np.arange(8.0), -np.arange(8.0), np.full(8, 2.5), np.ones((8, 3)), -np.ones((8, 3)))
    bs[1] |= dict(zip(DERIVED_ROWS, given, strict=True))
    with ResultWriter(
        path, model, PARAMS, block=8, attrs={"case": "round trip", "seed": 7, "meta": {"a": [1, 2]}}
    ) as w:
        for i, b in enumerate(bs):
            state, inputs = state_of_last_row(model, b)
            assert w.append(b, state=state, inputs=inputs) == sum(len(x["time"]) for x in bs[: i + 1])
        assert w.committed == 29
    r = read(path)
    assert isinstance(r, Result)
    assert r.committed == 29 and r.closed_cleanly
    expected = concat(bs)
    for name in REQUIRED_ROWS:
        got = getattr(r, name)
        np.testing.assert_array_equal(got, expected[name], err_msg=name)
        assert got.dtype == (np.int64 if name in ("step", "iterations") else np.float64), name
    # derived rows: given ones stored verbatim, others computed from q and v (by the compiled
    # kernel: exactly kp.io.energy_and_momentum, and the numpy twin to rounding)
    ke, pe, p, ang = energy_and_momentum(model, expected["q"], expected["v"])
    computed = dict(zip(MOTION_ROWS, (ke, pe, p, ang), strict=True))
    computed["strain_energy"] = kp.io.row_invariants(model, expected["q"], expected["v"])["strain_energy"]
    twin = dict(zip(MOTION_ROWS, model_energy_and_momentum(model, expected["q"], expected["v"]), strict=True))
    twin["strain_energy"] = spring_strain_energy(model, expected["q"])
    for name in DERIVED_ROWS:
        got = getattr(r, name)
        np.testing.assert_array_equal(got[:8], computed[name][:8], err_msg=name)
        np.testing.assert_array_equal(got[8:16], bs[1][name], err_msg=name)
        np.testing.assert_array_equal(got[16:], computed[name][16:], err_msg=name)
        for rows in (slice(0, 8), slice(16, None)):
            np.testing.assert_allclose(got[rows], twin[name][rows], rtol=1e-12, atol=1e-12, err_msg=name)
    assert_models_equal(r.model, model)
    assert r.params == PARAMS
    assert type(r.params.max_iter) is int and type(r.params.dynamic) is bool
    assert r.attrs["kynemapy_version"] == kp.__version__
    assert datetime.datetime.fromisoformat(r.attrs["created"]).tzinfo is not None
    assert r.attrs["case"] == "round trip" and r.attrs["seed"] == 7 and json.loads(r.attrs["meta"]) == {"a": [1, 2]}
    assert set(ROW_NAMES) <= set(r.units) and r.units == json.loads(r.attrs["units"])
    assert r.units["time"] == "s" and r.units["kinetic_energy"] == "J"
    assert all(r.units[f.name] == f.unit for f in ROW_FIELDS)
    # restart data = the state/inputs handed in with the last block
    state, inputs = state_of_last_row(model, bs[-1])
    assert r.restart is not None and int(r.restart["committed"]) == 29
    for name, value in zip(kp.State._fields, state, strict=True):
        np.testing.assert_array_equal(r.restart[name], value, err_msg=name)
    for name, value in zip(kp.Inputs._fields, inputs, strict=True):
        np.testing.assert_array_equal(r.restart[name], value, err_msg=name)
    rs, ri = r.restart_state()
    assert rs.step.dtype == np.int64 and rs.q.flags.writeable and int(rs.step[0]) == int(r.step[-1])
    np.testing.assert_array_equal(rs.q, r.q[-1])
    np.testing.assert_array_equal(ri.f, inputs.f)
    # file layout: chunks of `block` rows, unlimited first axis, SWMR-capable superblock
    with h5py.File(path, "r") as f:
        for fld in ROW_FIELDS:
            ds = f[fld.name]
            assert ds.chunks[0] == 8 and ds.maxshape[0] is None and ds.shape[0] == 29, fld.name
            assert ds.dtype == fld.dtype, fld.name
        assert f["committed"][0] == 29
        assert dict(f["params"].attrs)["h"] == 0.01 and f["params/derived"].attrs["beta"] == PARAMS.beta
        assert f["model"].attrs["n_nodes"] == model.n_nodes
        assert f["restart/q"].shape == (2, model.n_nodes, 7)


def test_each_dataset_is_resized_once_per_block(tmp_path: Path) -> None:
    model = small_model()
    calls: list[str] = []

    class CountingID:
        """The dataset's low-level id, counting extent changes (the writer's only resize)."""

        def __init__(self, dsid: h5py.h5d.DatasetID, name: str) -> None:
            self._dsid, self._name = dsid, name

        def set_extent(self, shape: tuple[int, ...]) -> None:
            calls.append(self._name)
            self._dsid.set_extent(shape)

        def __getattr__(self, attr: str):
            return getattr(self._dsid, attr)

    class Counting:
        def __init__(self, ds: h5py.Dataset) -> None:
            self.id = CountingID(ds.id, ds.name)

    with ResultWriter(tmp_path / "r.h5", model, PARAMS, block=16) as w:
        w._datasets = {name: Counting(ds) for name, ds in w._datasets.items()}
        for b in blocks(model, [16, 16, 9]):
            w.append(b)
    assert len(calls) == 3 * len(ROW_NAMES)
    assert sorted(set(calls)) == sorted("/" + n for n in ROW_NAMES)
    r = read(tmp_path / "r.h5")
    assert r.committed == 41 and r.q.shape[0] == 41
    np.testing.assert_array_equal(r.q, concat(blocks(model, [16, 16, 9]))["q"])


def test_deferred_layout(tmp_path: Path) -> None:
    """With defer_layout the path and attributes are checked at once; groups appear on the first append."""
    model = small_model()
    with pytest.raises(ValueError, match="reserved"):
        ResultWriter(tmp_path / "a.h5", model, PARAMS, attrs={"units": "m"}, defer_layout=True)
    with pytest.raises(OSError):
        ResultWriter(tmp_path / "no-such-dir" / "a.h5", model, PARAMS, defer_layout=True)
    w = ResultWriter(tmp_path / "empty.h5", model, PARAMS, block=4, defer_layout=True, attrs={"case": "x"})
    with h5py.File(tmp_path / "empty.h5", "r") as f:
        assert "q" not in f and f.attrs["case"] == b"x"  # fixed-length text: bytes to h5py
    w.close()  # never appended to: closes as a valid, empty result
    r = read(tmp_path / "empty.h5")
    assert r.committed == 0 and r.q.shape == (0, model.n_nodes, 7) and r.attrs["case"] == "x"
    with ResultWriter(tmp_path / "rows.h5", model, PARAMS, block=4, defer_layout=True) as w:
        bs = blocks(model, [4, 3])
        for b in bs:
            w.append(b)
    np.testing.assert_array_equal(read(tmp_path / "rows.h5").q, concat(bs)["q"])


def test_model_without_constraints_or_restart(tmp_path: Path) -> None:
    b = kp.ModelBuilder()
    node = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 2.0))
    b.add_mass(node, mass=1.5, inertia=(1.0, 2.0, 3.0))
    model = b.build()
    assert model.n_constraints == 0 and model.n_springs == 0
    bs = blocks(model, [4, 4, 4])
    with ResultWriter(tmp_path / "free.h5", model, kp.StepParameters(h=0.1), block=4, restart=False) as w:
        for blk in bs:
            w.append(blk)
        with pytest.raises(ValueError, match="restart=False"):
            w.write_restart(*state_of_last_row(model, bs[-1]))
    r = read(tmp_path / "free.h5")
    assert r.committed == 12 and r.restart is None
    assert r.lam.shape == (12, 0, 6) and r.constraint_output.shape == (12, 0, 3)
    np.testing.assert_array_equal(r.q, concat(bs)["q"])
    assert_models_equal(r.model, model)
    assert r.params == kp.StepParameters(h=0.1)
    # with restart data: the zero-size constraint arrays come back with their shapes
    with ResultWriter(tmp_path / "free_restart.h5", model, kp.StepParameters(h=0.1), block=4) as w:
        for blk in bs:
            w.append(blk, *state_of_last_row(model, blk))
    r = read(tmp_path / "free_restart.h5")
    assert r.restart is not None and r.restart["lam"].shape == (0, 6) and r.restart["constraint_input"].shape == (0, 7)
    state, inputs = r.restart_state()
    expected_state, expected_inputs = state_of_last_row(model, bs[-1])
    for mine, theirs in zip((*state, *inputs), (*expected_state, *expected_inputs), strict=True):
        np.testing.assert_array_equal(mine, theirs)
        assert mine.shape == theirs.shape and mine.dtype == theirs.dtype


def test_truncated_file_is_refused_at_once(tmp_path: Path) -> None:
    """A result file cut short (a partial copy) is an error naming the file, not a hang in
    HDF5's SWMR retries."""
    model = kp.ModelBuilder()
    node = model.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 2.0))
    model.add_mass(node, mass=1.5, inertia=(1.0, 2.0, 3.0))
    model = model.build()
    with ResultWriter(tmp_path / "whole.h5", model, kp.StepParameters(h=0.1), block=4) as w:
        for blk in blocks(model, [4, 4]):
            w.append(blk, *state_of_last_row(model, blk))
    data = (tmp_path / "whole.h5").read_bytes()
    cut = tmp_path / "cut.h5"
    cut.write_bytes(data[: len(data) // 3])
    started = time.perf_counter()
    with pytest.raises(OSError, match=r"cut\.h5: damaged HDF5 file, cut short: \d+ of the \d+ bytes"):
        read(cut)
    assert time.perf_counter() - started < 5.0


def test_append_rejects_bad_rows(tmp_path: Path) -> None:
    model = small_model()
    good = make_block(model, 0, 4)
    with ResultWriter(tmp_path / "bad.h5", model, PARAMS, block=4) as w:
        with pytest.raises(KeyError, match="missing"):
            w.append({k: v for k, v in good.items() if k != "lam"})
        with pytest.raises(KeyError, match="unknown"):
            w.append(good | {"bogus": np.zeros(4)})
        with pytest.raises(KeyError, match="all of"):
            w.append(good | {"kinetic_energy": np.zeros(4)})
        with pytest.raises(ValueError, match="shape"):
            w.append(good | {"q": good["q"][:, :2]})
        with pytest.raises(ValueError, match="rows"):
            w.append(good | {"time": good["time"][:3]})
        state, inputs = state_of_last_row(model, make_block(model, 10, 4))
        with pytest.raises(ValueError, match="step"):
            w.append(good, state=state, inputs=inputs)
        with pytest.raises(ValueError, match="both"):
            w.append(good, state=state)
        assert w.committed == 0
        w.append(good)
    assert read(tmp_path / "bad.h5").committed == 4
    with pytest.raises(ValueError, match="block"):
        ResultWriter(tmp_path / "x.h5", model, PARAMS, block=0)
    with pytest.raises(ValueError, match="reserved"):
        ResultWriter(tmp_path / "y.h5", model, PARAMS, attrs={"units": "x"})


def test_write_restart_after_append_and_generations(tmp_path: Path) -> None:
    model = small_model()
    b0, b1 = blocks(model, [3, 3])
    s0, i0 = state_of_last_row(model, b0)
    with ResultWriter(tmp_path / "w.h5", model, PARAMS, block=3) as w:
        w.append(b0)
        assert read_restart_step(tmp_path / "w.h5") is None
        w.write_restart(s0, i0)
        s0b = s0.copy()
        s0b.q_delta[...] = 42.0
        w.write_restart(s0b, i0)  # same row twice: the newer generation wins
        with pytest.raises(ValueError, match="last committed row"):
            w.write_restart(*state_of_last_row(model, b1))
        w.append(b1)  # no restart for the new rows: read() reports none
    r = read(tmp_path / "w.h5")
    assert r.committed == 6 and r.restart is None
    with h5py.File(tmp_path / "w.h5", "r") as f:
        np.testing.assert_array_equal(f["restart/slot_info"][()], [[3, 1], [3, 2]])


def read_restart_step(path: Path) -> int | None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from kynemapy.io import read; r = read({str(path)!r}); "
            "print(None if r.restart is None else int(r.restart['step'][0]))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    value = out.stdout.strip()
    return None if value == "None" else int(value)


# -------------------------------------------------------------------------------- crash safety
CHILD = HELPERS + textwrap.dedent(
    """
    import os, signal, sys
    from kynemapy.io import ResultWriter

    path, n_blocks, block, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    model = small_model()
    w = ResultWriter(path, model, kp.StepParameters(h=0.01), block=block)
    start = 0
    for k in range(n_blocks):
        b = make_block(model, start, block)
        w.append(b, *state_of_last_row(model, b))
        start += block
        print("flushed", k + 1, w.committed, flush=True)

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    b = make_block(model, start, block)
    if mode == "between_blocks":
        die()
    elif mode == "mid_block":  # resized and written, flushed, never committed
        for name, arr in b.items():
            w._datasets[name].resize(start + block, axis=0)
            w._datasets[name][start:] = arr
        w._file.flush()
        die()
    elif mode == "before_mark":  # rows and spare restart slot written, not flushed (the mark goes with them)
        w._mark_slot = die
        w.append(b, *state_of_last_row(model, b))
    elif mode == "before_commit":  # phase 1 done (rows, spare slot and its mark flushed), `committed` not yet written
        w._write_committed = die
        w.append(b, *state_of_last_row(model, b))
    elif mode == "forever":  # the parent kills us
        while True:
            b = make_block(model, start, block)
            w.append(b, *state_of_last_row(model, b))
            start += block
            print("flushed", start // block, w.committed, flush=True)
    elif mode == "wait":  # stay alive until stdin closes, then close cleanly
        sys.stdin.read()
        w.close()
        print("closed", flush=True)
    """
)


def run_child(path: Path, n_blocks: int, block: int, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(n_blocks), str(block), mode],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def check_consistent(model: kp.Model, r: Result, block: int) -> None:
    """Every committed row equals what the child generated; restart = state of the last committed row."""
    expected = concat(blocks(model, [block] * (r.committed // block)))
    assert r.committed % block == 0
    for name in REQUIRED_ROWS:
        np.testing.assert_array_equal(getattr(r, name), expected[name], err_msg=name)
    ke, _, _, ang = energy_and_momentum(model, expected["q"], expected["v"])
    np.testing.assert_array_equal(r.kinetic_energy, ke)
    np.testing.assert_array_equal(r.angular_momentum, ang)
    state, inputs = state_of_last_row(model, make_block(model, r.committed - block, block))
    assert r.restart is not None and int(r.restart["committed"]) == r.committed
    for name, value in zip(kp.State._fields + kp.Inputs._fields, (*state, *inputs), strict=True):
        np.testing.assert_array_equal(r.restart[name], value, err_msg=name)
    assert_models_equal(r.model, model)


@pytest.mark.parametrize("mode", ["between_blocks", "mid_block", "before_mark", "before_commit"])
def test_sigkill_leaves_exactly_the_flushed_rows(tmp_path: Path, mode: str) -> None:
    path = tmp_path / f"{mode}.h5"
    n_blocks, block = 5, 16
    proc = run_child(path, n_blocks, block, mode)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert proc.stdout.splitlines()[-1] == f"flushed {n_blocks} {n_blocks * block}"
    # the file still carries the writer's "open for writing" mark: only a SWMR reader opens it
    with pytest.raises(OSError):
        h5py.File(path, "r").close()
    with pytest.warns(ResultFileWarning, match=r"its writer \(pid \d+\) was killed; cleared HDF5's 'open for writing'"):
        r = read(path)  # read() clears the killed writer's marks and says so
    assert not r.closed_cleanly
    assert r.committed == n_blocks * block
    check_consistent(small_model(), r, block)
    with h5py.File(path, "r", swmr=True) as f:
        extent = f["q"].shape[0]
        info = f["restart/slot_info"][()]
    if mode == "between_blocks":
        assert extent == n_blocks * block
    elif mode == "before_mark":  # killed before the flush: HDF5 may or may not have written the resize yet
        assert extent in (n_blocks * block, (n_blocks + 1) * block)
    else:  # the uncommitted block reached the file but is ignored
        assert extent == (n_blocks + 1) * block
    if mode == "before_commit":  # the spare slot already names the next row count; read() skips it
        assert (n_blocks + 1) * block in info[:, 0]


def test_sigkill_from_parent_while_writing(tmp_path: Path) -> None:
    path = tmp_path / "killed.h5"
    block = 8
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "1", str(block), "forever"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        flushed = 0
        while flushed < 20:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            flushed = int(line.split()[1])
        os.kill(proc.pid, signal.SIGKILL)  # this child, by its id
    finally:
        proc.wait(timeout=60)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):  # no unclosed-file ResourceWarning
            if pipe is not None:
                pipe.close()
    assert proc.returncode == -signal.SIGKILL
    with pytest.warns(ResultFileWarning, match=rf"its writer \(pid {proc.pid}\) was killed"):
        r = read(path)
    assert r.committed >= 20 * block  # the child may have committed more before the signal landed
    check_consistent(small_model(), r, block)


def test_read_while_the_writer_is_alive(tmp_path: Path) -> None:
    path = tmp_path / "live.h5"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "3", "4", "wait"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        for _ in range(3):
            assert proc.stdout.readline().startswith("flushed")
        r = read(path)
        assert r.committed == 12 and not r.closed_cleanly
        check_consistent(small_model(), r, 4)
        proc.stdin.close()
        assert proc.stdout.readline().strip() == "closed"
    finally:
        proc.wait(timeout=60)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):  # no unclosed-file ResourceWarning
            if pipe is not None:
                pipe.close()
    assert proc.returncode == 0
    r = read(path)
    assert r.committed == 12 and r.closed_cleanly


# ------------------------------------------------------------------------------------- NetCDF
def write_kynema_like_nc(
    path: Path, data: dict[str, np.ndarray], *, short: str | None = None, time: np.ndarray | None = None
) -> None:
    """A NetCDF-4-style HDF5 file as Kynema's NodeStateWriter lays it out (dims ``time``, ``nodes``)."""
    n_time, n_nodes = next(iter(data.values())).shape[:2]
    comps = {7: ("x", "y", "z", "w", "i", "j", "k"), 6: ("x", "y", "z", "i", "j", "k")}
    with h5py.File(path, "w", libver="earliest") as f:
        f.attrs["_NCProperties"] = "version=2,netcdf=4.9.2,hdf5=1.14.3"
        if time is None:
            t = f.create_dataset("time", shape=(n_time,), maxshape=(None,), chunks=(1024,), dtype="f4")
            t.make_scale("This is a netCDF dimension but not a netCDF variable.         0")
        else:
            t = f.create_dataset("time", data=time, maxshape=(None,), chunks=(1024,))
            t.make_scale("time")
        nodes = f.create_dataset("nodes", shape=(n_nodes,), dtype="f4")
        nodes.make_scale("This is a netCDF dimension but not a netCDF variable.         2")
        for prefix, arr in data.items():
            for col, comp in enumerate(comps[arr.shape[2]]):
                name = f"{prefix}_{comp}"
                values = arr[:, :, col]
                if name == short:
                    values = values[:-2]
                ds = f.create_dataset(
                    name, data=values, maxshape=(None, n_nodes), chunks=(1, n_nodes), fillvalue=NC_FILL_DOUBLE
                )
                ds.attrs["_FillValue"] = np.float64(NC_FILL_DOUBLE)
                ds.dims[0].attach_scale(t)
                ds.dims[1].attach_scale(nodes)


def test_read_kynema_netcdf_all_prefixes(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n, nn = 11, 3
    data = {p: rng.standard_normal((n, nn, 7 if p in "xu" else 6)) for p in "xuvaf"}
    path = tmp_path / "cfd_interface.nc"
    write_kynema_like_nc(path, data)
    out = read_kynema_netcdf(path)
    assert out["n_time"] == n and out["n_nodes"] == nn and "time" not in out
    for prefix, key in zip("xuvaf", ("x", "q", "v", "vd", "f"), strict=True):
        assert out[key].shape == data[prefix].shape and out[key].dtype == np.float64
        np.testing.assert_array_equal(out[key], data[prefix], err_msg=key)
    with h5py.File(path, "r") as f:  # quaternion columns (w, i, j, k) map to q[:, :, 3:7]
        np.testing.assert_array_equal(out["q"][:, :, 3], f["u_w"][()])
        np.testing.assert_array_equal(out["q"][:, :, 6], f["u_k"][()])
        np.testing.assert_array_equal(out["vd"][:, :, 3], f["a_i"][()])


def test_read_kynema_netcdf_only_u_like_r8(tmp_path: Path) -> None:
    # R8: spring-mass system, 2 nodes, prefix {"u"}, time indices 0..1000.
    n, nn = 1001, 2
    t = 0.005 * np.arange(n)
    u = np.zeros((n, nn, 7))
    u[:, :, 3] = 1.0
    u[:, 1, 0] = -4.0 * np.sin(0.5 * np.pi * t)
    path = tmp_path / "spring_mass.nc"
    write_kynema_like_nc(path, {"u": u})
    out = read_kynema_netcdf(path)
    assert set(out) == {"q", "n_time", "n_nodes"}
    assert out["q"].shape == (n, nn, 7)
    np.testing.assert_array_equal(out["q"], u)
    assert out["q"][500, 1, 0] == u[500, 1, 0]


def test_read_kynema_netcdf_time_variable_fill_and_errors(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    data = {"v": rng.standard_normal((6, 2, 6)), "x": rng.standard_normal((6, 2, 7))}
    path = tmp_path / "a.nc"
    write_kynema_like_nc(path, data, short="v_j", time=0.1 * np.arange(6))
    out = read_kynema_netcdf(path)
    np.testing.assert_array_equal(out["time"], 0.1 * np.arange(6))
    np.testing.assert_array_equal(out["x"], data["x"])
    assert np.isnan(out["v"][4:, :, 4]).all()  # v_j written for 4 time indices only
    np.testing.assert_array_equal(out["v"][:4], data["v"][:4])
    np.testing.assert_array_equal(out["v"][4:, :, [0, 1, 2, 3, 5]], data["v"][4:, :, [0, 1, 2, 3, 5]])
    raw = read_kynema_netcdf(path, fill_as_nan=False)
    assert (raw["v"][4:, :, 4] == NC_FILL_DOUBLE).all()
    with h5py.File(path, "a") as f:
        del f["x_w"]
    with pytest.raises(KeyError, match="x_w"):
        read_kynema_netcdf(path)
    with h5py.File(tmp_path / "empty.nc", "w") as f:
        f.create_dataset("time", shape=(0,), dtype="f8")
    with pytest.raises(KeyError, match="no Kynema"):
        read_kynema_netcdf(tmp_path / "empty.nc")


# ------------------------------------------------------------------------- energy and momentum
def quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def unit(q: list[float]) -> np.ndarray:
    q = np.asarray(q, float)
    return q / np.linalg.norm(q)


def compiled_invariants(model: kp.Model, q: np.ndarray, v: np.ndarray):
    """The run driver's per-row kernel (kynemapy.engine.invariants.fill_invariants, through
    kynemapy.engine.api.fill_rows) on output rows holding q (n, N, 7) and v (n, N, 6)."""
    from kynemapy.engine.api import fill_rows, initial_state
    from kynemapy.engine.data import new_workspace
    from kynemapy.engine.rows import new_rows, split_rows

    workspace = new_workspace(model, 1)
    layout = workspace.row_layout
    n = q.shape[0]
    rows = new_rows(model.n_nodes, model.n_constraints, n)
    for name, value in (("q", q), ("v", v)):
        o = layout.offsets[name]
        rows[:, o : o + value[0].size] = value.reshape(n, -1)
    fill_rows(workspace.data(*initial_state(model)), rows)
    out = split_rows(layout, rows)
    return tuple(out[name] for name in MOTION_ROWS)


def packed_invariants(model: kp.Model, q: np.ndarray, v: np.ndarray):
    """The run's writer thread's pass (kynemapy.engine.invariants.pack_rows: energy and momentum,
    then the rows field-major, read through kynemapy.engine.rows.field_views); ``unit`` larger
    than the block, as for the last, partial block of a run."""
    from kynemapy.engine.api import call, initial_state, stored
    from kynemapy.engine.data import new_workspace
    from kynemapy.engine.invariants import invariant_scratch, pack_rows, parts_of
    from kynemapy.engine.rows import field_views, new_rows

    workspace = new_workspace(model, 1)
    layout = workspace.row_layout
    n = q.shape[0]
    unit = n + 3
    rows = new_rows(model.n_nodes, model.n_constraints, n)
    for name, value in (("q", q), ("v", v)):
        o = layout.offsets[name]
        rows[:, o : o + value[0].size] = value.reshape(n, -1)
    fields, ints = np.full(unit * layout.width, np.nan), np.zeros((2, unit), dtype=np.int64)
    scratch = invariant_scratch(2)
    data = workspace.data(*initial_state(model))
    at = stored(data)  # the Data by its address, as the writer passes it
    call(pack_rows, at.data_at, at.data_type, rows, n, unit, fields, ints, scratch, parts_of(data))
    out = field_views(layout, fields, ints, unit, n)
    return tuple(out[name] for name in MOTION_ROWS)


INVARIANTS = pytest.mark.parametrize(
    "invariants",
    [model_energy_and_momentum, energy_and_momentum, compiled_invariants, packed_invariants],
    ids=["numpy", "kp.io", "compiled rows", "packed rows"],
)


@INVARIANTS
def test_energy_momentum_free_spinning_body(invariants) -> None:
    g = np.array([0.3, -1.0, -9.81])
    X = np.array([1.0, -2.0, 0.5])
    r0 = unit([0.9, 0.1, -0.3, 0.2])
    m, J = 4.0, np.array([[2.0, 0.1, 0.0], [0.1, 3.0, -0.2], [0.0, -0.2, 4.5]])  # I1 + I2 >= I3: a rigid body
    b = kp.ModelBuilder(gravity=g)
    node = b.add_node(position=X, orientation=r0)
    b.add_mass(node, mass=m, inertia=J)
    model = b.build()
    rng = np.random.default_rng(0)
    n = 7
    q = np.zeros((n, 1, 7))
    q[:, 0, :3] = rng.standard_normal((n, 3))
    q[:, 0, 3:] = rng.standard_normal((n, 4))
    q[:, 0, 3:] /= np.linalg.norm(q[:, 0, 3:], axis=-1, keepdims=True)
    v = rng.standard_normal((n, 1, 6))
    ke, pe, p, ang = invariants(model, q, v)
    assert ke.shape == pe.shape == (n,) and p.shape == ang.shape == (n, 3)
    for i in range(n):
        u, r, ud, w = q[i, 0, :3], q[i, 0, 3:], v[i, 0, :3], v[i, 0, 3:]
        R = quat_matrix(quat_mul(r, r0))
        Jw = R @ J @ R.T
        x = X + u
        np.testing.assert_allclose(ke[i], 0.5 * m * ud @ ud + 0.5 * w @ Jw @ w, rtol=1e-13)
        np.testing.assert_allclose(pe[i], -m * g @ x, rtol=1e-13)
        np.testing.assert_allclose(p[i], m * ud, rtol=1e-13)
        np.testing.assert_allclose(ang[i], np.cross(x, m * ud) + Jw @ w, rtol=1e-12, atol=1e-13)
    if invariants in (compiled_invariants, packed_invariants):
        return
    # one row without the leading axis gives the same numbers
    one = invariants(model, q[3], v[3])
    assert one[0].shape == () and one[2].shape == (3,)
    np.testing.assert_array_equal(one[3], ang[3])
    if invariants is model_energy_and_momentum:  # and so does row-chunking
        for a, c in zip(invariants(model, q, v, chunk_rows=2), (ke, pe, p, ang), strict=True):
            np.testing.assert_array_equal(a, c)


def free_body_model() -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_mass(b.add_node(position=(1.0, 0.0, 0.0)), mass=3.0, inertia=(0.1, 0.2, 0.3))
    return b.build()


@pytest.mark.parametrize("build", [small_model, free_body_model], ids=["jointed", "no constraints"])
def test_packed_rows_are_the_rows_field_major(build) -> None:
    """pack_rows + field_views (the writer thread's path) give every field of the rows as
    split_rows (plain numpy slicing) does, integers as int64, for a block shorter than a unit;
    also where fields have no columns (lam, constraint_output without constraints)."""
    from kynemapy.engine.api import call, initial_state, stored
    from kynemapy.engine.data import new_workspace
    from kynemapy.engine.invariants import invariant_scratch, pack_rows, parts_of
    from kynemapy.engine.rows import field_views, split_rows

    model = build()
    workspace = new_workspace(model, 1)
    layout = workspace.row_layout
    n, unit = 5, 9
    rows = np.random.default_rng(1).standard_normal((unit, layout.width))
    for name in ("step", "iterations"):
        rows[:, layout.offsets[name]] = np.arange(unit) * 7 + 3
    fields, ints = np.full(unit * layout.width, np.nan), np.zeros((2, unit), dtype=np.int64)
    scratch = invariant_scratch(2)
    data = workspace.data(*initial_state(model))
    at = stored(data)  # the Data by its address, as the writer passes it
    call(pack_rows, at.data_at, at.data_type, rows, n, unit, fields, ints, scratch, parts_of(data))
    packed = field_views(layout, fields, ints, unit, n)
    expected = split_rows(layout, rows[:n])  # after pack_rows: its energy columns are filled in rows
    assert list(packed) == list(ROW_NAMES)
    for name in ROW_NAMES:
        assert packed[name].dtype == expected[name].dtype, name
        assert packed[name].flags.c_contiguous, name
        np.testing.assert_array_equal(packed[name], expected[name], err_msg=name)


def test_energy_and_momentum_rejects_bad_shapes() -> None:
    model = small_model()
    q = np.zeros((2, model.n_nodes, 7))
    with pytest.raises(ValueError, match="expected q"):
        energy_and_momentum(model, q, np.zeros((2, model.n_nodes, 7)))
    ke, pe, p, ang = energy_and_momentum(model, q[:0], np.zeros((0, model.n_nodes, 6)))
    assert ke.shape == pe.shape == (0,) and p.shape == ang.shape == (0, 3)


@INVARIANTS
def test_energy_momentum_offset_centre_of_mass(invariants) -> None:
    # M* = [[m I, m η̃ᵀ], [m η̃, J_cm − m η̃ η̃]] about the node; compare with centre-of-mass formulas.
    g = np.array([0.0, 0.0, -9.81])
    m, eta_b = 2.5, np.array([0.3, -0.2, 0.4])
    J_cm = np.diag([0.5, 0.7, 0.9])
    et = np.array([[0, -eta_b[2], eta_b[1]], [eta_b[2], 0, -eta_b[0]], [-eta_b[1], eta_b[0], 0]])
    m_star = np.block([[m * np.eye(3), m * et.T], [m * et, J_cm - m * et @ et]])
    X, r0 = np.array([0.0, 1.0, 2.0]), unit([1.0, 0.2, 0.3, -0.1])
    b = kp.ModelBuilder(gravity=g)
    b.add_node(position=X, orientation=r0)
    b.add_mass(0, mass_matrix=m_star)
    model = b.build()
    r, u = unit([0.7, -0.3, 0.5, 0.4]), np.array([0.1, -0.4, 0.2])
    ud, w = np.array([1.0, -2.0, 0.5]), np.array([0.3, 1.1, -0.7])
    q = np.concatenate([u, r])[None, None]
    v = np.concatenate([ud, w])[None, None]
    ke, pe, p, ang = invariants(model, q, v)
    R = quat_matrix(quat_mul(r, r0))
    eta = R @ eta_b
    x_cm = X + u + eta
    v_cm = ud + np.cross(w, eta)
    Jw = R @ J_cm @ R.T
    np.testing.assert_allclose(ke[0], 0.5 * m * v_cm @ v_cm + 0.5 * w @ Jw @ w, rtol=1e-13)
    np.testing.assert_allclose(pe[0], -m * g @ x_cm, rtol=1e-13)
    np.testing.assert_allclose(p[0], m * v_cm, rtol=1e-13)
    np.testing.assert_allclose(ang[0], np.cross(x_cm, m * v_cm) + Jw @ w, rtol=1e-12)


@INVARIANTS
def test_energy_momentum_ballistic_body_and_a_spring_node_without_mass(invariants) -> None:
    g = np.array([0.0, -1.0, -9.81])
    m = 3.0
    b = kp.ModelBuilder(gravity=g)
    body = b.add_node(position=(1.0, 2.0, 3.0))
    anchor = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(body, mass=m, inertia=(0.1, 0.1, 0.1))
    b.add_spring(body, anchor, stiffness=0.0, undeformed_length=1.0)  # massless: no contribution
    model = b.build()
    t = np.linspace(0.0, 2.0, 41)
    x0, v0 = np.array([1.0, 2.0, 3.0]), np.array([4.0, 0.5, 8.0])
    q = np.zeros((t.size, 2, 7))
    q[:, :, 3] = 1.0
    q[:, 0, :3] = v0 * t[:, None] + 0.5 * g * t[:, None] ** 2
    q[:, 1, :3] = 5.0  # the anchor moves: irrelevant
    v = np.zeros((t.size, 2, 6))
    v[:, 0, :3] = v0 + g * t[:, None]
    v[:, 0, 3:] = (0.0, 0.0, 2.0)  # spin about z: ½ J ω² = 0.2 J
    v[:, 1] = 7.0
    ke, pe, p, ang = invariants(model, q, v)
    x = x0 + q[:, 0, :3]
    np.testing.assert_allclose(ke, 0.5 * m * np.sum(v[:, 0, :3] ** 2, axis=1) + 0.5 * 0.1 * 4.0, rtol=1e-13)
    np.testing.assert_allclose(pe, -m * x @ g, rtol=1e-13)
    np.testing.assert_allclose(ke + pe, ke[0] + pe[0], rtol=1e-13)  # energy conserved
    np.testing.assert_allclose(p, m * (v0 + g * t[:, None]), rtol=1e-13)
    np.testing.assert_allclose(ang, np.cross(x, p) + np.array([0.0, 0.0, 0.2]), rtol=1e-12, atol=1e-12)
    # dL/dt = x × m g (gravity's moment about the origin)
    dl = np.gradient(ang, t, axis=0, edge_order=2)
    np.testing.assert_allclose(dl, np.cross(x, m * g), rtol=1e-9, atol=1e-9)


def test_simulation_to_file_free_precession_conserves_energy_and_momentum(tmp_path: Path) -> None:
    # Kynema's R3/R9 precession body (ρ∞ = 1): the stored T and L stay at their initial values.
    b = kp.ModelBuilder()
    node = b.add_node(velocity=(0, 0, 0, 0.5, 0.5, 1.0))
    b.add_mass(node, mass_matrix=np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 0.5]))
    model = b.build()
    params = kp.StepParameters(h=0.01, rho_inf=1.0, max_iter=5)
    sim = kp.Simulation(model, params)
    block = 50
    with ResultWriter(tmp_path / "precession.h5", model, params, block=block) as w:
        for _ in range(4):
            rows: dict[str, list] = {k: [] for k in REQUIRED_ROWS}
            for _ in range(block):
                info = sim.step()
                st = sim.state
                rows["time"].append(st.time[0])
                rows["step"].append(st.step[0])
                for k in ("q", "v", "vd", "a", "lam", "constraint_output"):
                    rows[k].append(getattr(st, k).copy())
                rows["iterations"].append(info.iterations)
                rows["error"].append(info.errors[-1])
            w.append({k: np.asarray(val) for k, val in rows.items()}, state=sim.state, inputs=sim.inputs)
    r = read(tmp_path / "precession.h5")
    assert r.committed == 200 and r.step[-1] == 200
    np.testing.assert_allclose(r.time, 0.01 * np.arange(1, 201), rtol=1e-12)
    np.testing.assert_allclose(r.kinetic_energy, 0.5, rtol=1e-6)
    np.testing.assert_allclose(r.angular_momentum, np.tile([0.5, 0.5, 0.5], (200, 1)), atol=1e-4)
    np.testing.assert_array_equal(r.linear_momentum, 0.0)
    np.testing.assert_array_equal(r.potential_energy, 0.0)
    state, _ = r.restart_state()
    for name in kp.State._fields:
        np.testing.assert_array_equal(getattr(state, name), getattr(sim.state, name), err_msg=name)
    assert dataclasses.asdict(r.params) == dataclasses.asdict(params)
