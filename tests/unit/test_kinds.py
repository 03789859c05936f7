"""Kinds declared once (kynemapy.model.registry, docs/engine.md "Adding a kind"): the registry lists
contact, and a toy kind declared here gets its model-file table read, its result-file columns
written and read back, its ParaView array, its arrows in the animation and its lines of
``kynemapy info``, with no edit to the model file's reader, io, post or the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

import kynemapy as kp
from kynemapy.cli import main
from kynemapy.engine.rows import ROW_NAMES
from kynemapy.io import ResultWriter, read
from kynemapy.io.vtkhdf import CELL_KINDS, write_vtkhdf
from kynemapy.model.file import ModelFileError, parse_model_file
from kynemapy.model.geometry import node_positions
from kynemapy.model.registry import KINDS, column_groups, kinds, model_tables, register, registered
from kynemapy.model.registry.kind import (
    Arrows,
    Column,
    Columns,
    DrawContext,
    ExportContext,
    Kind,
    Memory,
    ModelTable,
    PointArray,
    Shape,
)
from kynemapy.post.animate import animate

#: the calls of the toy kind's hooks (what each got)
CALLS: dict[str, list[Any]] = {"arrows": [], "array": [], "loaded": []}


def read_tether(item: Any, builder: Any) -> None:
    """``[[tether]]``: ``nodes = ["a", "b"]`` and ``stiffness`` [N/m], a spring of rest length 1 m."""
    item.check_keys(("nodes", "stiffness"))
    item.require("nodes", "stiffness")
    a, b = (item.node_ref("nodes", name) for name in item.data["nodes"])
    item.build(builder.add_spring, a, b, stiffness=item.number("stiffness", unit="N/m"), undeformed_length=1.0)


class TensionRecorder:
    """The toy's recorder: each row's tension [N] of the tether, k (l − 1 m), from the simulation's state."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim

    def __call__(self, columns: dict[str, np.ndarray], row: int) -> None:
        x = node_positions(self.sim.model, np.asarray(self.sim.state.q)[None])[0]
        columns["tension"][row] = 10.0 * (np.linalg.norm(x[1] - x[0]) - 1.0)


class TetherMemory:
    """The toy's memory of a run: one row, (the step it was saved at, 42)."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim

    def save(self) -> np.ndarray:
        return np.array([[float(self.sim.step_count), 42.0]])

    def load(self, rows: np.ndarray) -> None:
        CALLS["loaded"].append(rows)


def tether_rows(result: Any) -> np.ndarray:
    """The toy's derived rows: (n,) the distance between the tethered nodes [m]."""
    x = node_positions(result.model, np.asarray(result.q))
    return np.linalg.norm(x[:, 1] - x[:, 0], axis=1)


def tension_array(context: ExportContext) -> np.ndarray:
    CALLS["array"].append(context)
    out = np.zeros((context.rows.size, context.n_points))
    out[:, :2] = np.asarray(context.result.tether["tension"])[context.rows, None]
    return out


def tension_arrows(context: DrawContext) -> np.ndarray:
    CALLS["arrows"].append(context)
    return context.positions[:, None, :2, :]  # from node a to node b


TOY = Kind(
    name="tether",
    tables=(ModelTable("tether", ("nodes", "stiffness"), read_tether),),
    columns=Columns("tether", (Column("tension", np.float64, "N", lambda m: () if m.n_springs else None),)),
    derive=f"{__name__}:tether_rows",
    recorder=f"{__name__}:TensionRecorder",
    keyword="tether_length",
    point_arrays=(PointArray("tether_tension", "N", tension_array),),
    drawing=(Arrows("the tether", "C5", tension_arrows),),
    info=lambda r: [("tether", f"tension up to {float(np.max(r.tether['tension'])):g} N")],
    memory=Memory("tether_memory", 2, lambda m: bool(m.n_springs), "s (step), 1", f"{__name__}:TetherMemory"),
    shapes=lambda m: [Shape(shape=0, kind="sphere", node=1, offsets=np.zeros((1, 3)), radius=0.1)],
    planes=lambda m: np.array([[0.0, 0.0, 1.0, -1.0]]),
)

MODEL = """
[[node]]
name = "a"
[[node]]
name = "b"
position = [1.5, 0.0, 0.0]
[[mass]]
node = "a"
mass = 1.0
inertia = [1.0, 1.0, 1.0]
[[mass]]
node = "b"
mass = 1.0
inertia = [1.0, 1.0, 1.0]
[[tether]]
nodes = ["a", "b"]
stiffness = 10.0
[step]
h = 0.01
"""


def test_the_registry_lists_springs_and_contact() -> None:
    assert [k.name for k in KINDS] == ["springs", "contact"]
    assert kinds() == KINDS
    assert [t.name for t in model_tables()] == ["spring", "shape", "ground", "body_contact"]
    assert list(column_groups()) == ["hard_contact"]
    contact = KINDS[1]
    assert [a.name for a in contact.point_arrays] == ["contact_force", "body_contact_force", "body_contact_moment"]
    assert contact.derived_keyword == "contacts" and contact.energy is not None


def test_a_name_is_registered_once_and_a_table_read_in_place() -> None:
    with pytest.raises(ValueError, match="taken already"):
        register(Kind(name="x", tables=(ModelTable("ground", (), read_tether),)))
    with pytest.raises(ValueError, match="taken already"):
        register(Kind(name="x", memory=Memory("touching", 1, bool, "1", "x:y")))  # contact's memory
    with pytest.raises(ValueError, match=r"table \[x\] after 'step'"):
        register(Kind(name="x", tables=(ModelTable("x", (), read_tether, after="step"),)))
    assert kinds() == KINDS


def _write(path: Path, model: Any, params: Any, n: int = 5) -> np.ndarray:
    """n rows of the model at rest but for node b moving along x, with the toy's tensions."""
    nn, nc = model.n_nodes, model.n_constraints
    q = np.zeros((n, nn, 7))
    q[:, :, 3] = 1.0
    q[:, 1, 0] = 0.1 * np.arange(n)
    zeros = {"v": (nn, 6), "vd": (nn, 6), "a": (nn, 6), "lam": (nc, 6), "constraint_output": (nc, 3)}
    rows: dict[str, Any] = {name: np.zeros((n, *shape)) for name, shape in zeros.items()}
    rows |= {"time": 0.01 * np.arange(n), "step": np.arange(n), "q": q, "iterations": np.ones(n, dtype=np.int64)}
    rows |= {"error": np.zeros(n), "kinetic_energy": np.zeros(n), "potential_energy": np.zeros(n)}
    rows |= {"strain_energy": np.zeros(n), "linear_momentum": np.zeros((n, 3)), "angular_momentum": np.zeros((n, 3))}
    assert set(rows) == set(ROW_NAMES)
    tension = 10.0 * (0.5 + 0.1 * np.arange(n))
    with ResultWriter(path, model, params, block=4, tether=True) as writer:
        assert writer.tether == {"tension": ((), np.float64)}
        writer.append(rows, tether={"tension": tension})
    return tension


def test_a_toy_kind_is_read_written_exported_drawn_and_summarized(tmp_path: Path, capsys: Any) -> None:
    CALLS["arrows"].clear()
    CALLS["array"].clear()
    with registered(TOY):
        # the model file: its table read through the builder call it names
        mf = parse_model_file(MODEL, "toy.toml")
        assert mf.model.n_springs == 1 and mf.model.spring_k[0] == 10.0
        with pytest.raises(ModelFileError, match=r"line \d+: tether #1: unknown key 'length'"):
            parse_model_file(MODEL.replace("stiffness = 10.0", "stiffness = 10.0\nlength = 2.0"), "toy.toml")
        # its columns written, checksummed and read back, with their unit
        path = tmp_path / "toy.h5"
        tension = _write(path, mf.model, mf.params)
        r = read(path)
        np.testing.assert_array_equal(r.tether["tension"], tension)
        assert list(r.groups) == ["tether"] and r.groups["tether"]["tension"] is r.tether["tension"]
        assert r.units["tether/tension"] == "N" and r.hard_contact is None
        with h5py.File(path) as f:
            assert "tether/tension" in json.loads(f["checksums"].attrs["columns"])
        # its ParaView array, with its derived rows
        out = write_vtkhdf(r, tmp_path / "toy.vtkhdf", tether_length=tether_rows(r))
        with h5py.File(out) as f:
            data = f["VTKHDF/PointData/tether_tension"][()].reshape(5, -1)
            np.testing.assert_array_equal(data[:, 0], tension)
            assert "tether_tension" in f["VTKHDF/Steps/PointDataOffsets"]
            # its shape (a sphere on node b: a vertex cell with its radius) and its plane (a square)
            cells = f["VTKHDF/CellData/kind"][()]
            counts = [np.count_nonzero(cells == CELL_KINDS[kind]) for kind in ("shape", "ground")]
            assert counts == [5, 5]
            assert np.count_nonzero(f["VTKHDF/PointData/radius"][()] == 0.1) == 5
        np.testing.assert_allclose(CALLS["array"][-1].derived, 1.5 + 0.1 * np.arange(5))
        # its arrows in the animation
        gif = animate(r, tmp_path / "toy.gif", max_frames=3)
        assert gif.exists() and CALLS["arrows"][-1].rows.tolist() == [0, 2, 4]
        # and through the command line, which computes its derived rows: info, export, animate
        assert main(["info", str(path)]) == 0
        assert "tether            tension up to 9 N" in capsys.readouterr().out
        assert main(["export", str(path), "-o", str(tmp_path / "cli.vtkhdf")]) == 0
        np.testing.assert_allclose(CALLS["array"][-1].derived, 1.5 + 0.1 * np.arange(5))
        assert main(["animate", str(path), "-o", str(tmp_path / "cli.gif"), "--no-progress"]) == 0
        np.testing.assert_allclose(CALLS["arrows"][-1].derived, 1.5 + 0.1 * np.arange(5))
        # a run records its columns row by row through its recorder: k (l − 1 m) at each row's state
        # (stepped from Python, with loads: a recorder needs the rows back in Python, as the hard laws have them)
        sim = kp.Simulation(mf.model, mf.params)
        sim.run(n_steps=20, output=tmp_path / "run.h5", every=5, loads=lambda sim, t: None)
        run = read(tmp_path / "run.h5")
        assert run.committed == 5 and run.tether["tension"].shape == (5,)
        np.testing.assert_allclose(run.tether["tension"], 10.0 * (tether_rows(run) - 1.0), rtol=1e-12)
        # and keeps its memory with the restart data, loaded by a restart
        assert np.array_equal(run.restart_memory()["tether_memory"], [[20.0, 42.0]])
        assert run.units["restart/memory/tether_memory"] == "s (step), 1"
        kp.Simulation.restart(tmp_path / "run.h5")
        assert np.array_equal(CALLS["loaded"][-1], [[20.0, 42.0]])
    # unregistered: the table and the group are unknown again
    assert kinds() == KINDS
    with pytest.raises(ModelFileError, match="unknown top-level table 'tether'"):
        parse_model_file(MODEL, "toy.toml")
    with pytest.raises(TypeError, match="tether"):
        ResultWriter(tmp_path / "again.h5", mf.model, mf.params, tether=True)


def test_engine_md_shows_the_declarations_as_they_are() -> None:
    """docs/engine.md's "Adding a kind" shows the registry's code: each of its Python blocks is a run
    of lines of a module of kynemapy/model/registry (dedented)."""
    import re
    import textwrap

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "engine.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a kind") : text.index("## Constraints")]
    blocks = [m.group(1) for m in re.finditer(r"^```python\n(.*?)^```$", section, flags=re.S | re.M)]
    sources = [p.read_text(encoding="utf-8").splitlines() for p in (root / "kynemapy/model/registry").rglob("*.py")]
    assert len(blocks) == 4
    for block in blocks:
        n = len(block.splitlines())
        found = any(
            textwrap.dedent("\n".join(lines[i : i + n]) + "\n") == block
            for lines in sources
            for i in range(len(lines) - n + 1)
        )
        assert found, block
