"""Ensembles (kynemapy.run.sweep, ``kynemapy sweep``): dotted keys into model files, members on a
local Dask cluster (two worker processes on the loopback) bit-identical to standalone runs,
failed members reported without stopping the others, resume, and bad input refused before any
member runs."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io import read
from kynemapy.model.file import load_model_file, parse_model_file
from kynemapy.model.overrides import (
    OverrideError,
    apply_overrides,
    dump_toml,
    parse_values,
    read_toml,
    resolve_key,
)
from kynemapy.run.sweep import SweepError, grid, member_rotation_angle, sweep, verify_member

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOP = EXAMPLES / "heavy_top.toml"
PLATFORM = EXAMPLES / "floating_platform.toml"
FIELDS = ("q", "v", "vd", "a", "lam", "constraint_output", "time", "step", "iterations", "error")
N = 30


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=cwd)


def standalone(tmp_path: Path, text: str, name: str, n_steps: int) -> kp.io.Result:
    """The model of ``text`` run alone, as `kynemapy run` runs it."""
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    mf = load_model_file(path)
    out = tmp_path / f"{name}.h5"
    kp.Simulation(mf.model, mf.params).run(n_steps=n_steps, output=out, loads=mf.apply_loads if mf.loads else None)
    return read(out)


def assert_same_run(a: kp.io.Result, b: kp.io.Result) -> None:
    assert a.committed == b.committed
    for k in FIELDS:
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.params == b.params


# ------------------------------------------------------------------------------------------------
# keys into model files
def test_dotted_keys_reach_every_kind_of_value() -> None:
    data = read_toml(PLATFORM.read_text())
    cases = {
        "step.rho_inf": 0.25,  # present in the file
        "step.atol": 1e-7,  # left at its default in the file
        "model.gravity": [0, 0, -9.81],
        "node.platform.position": [0.0, 0.5, -7.5],
        "node.fairlead2.acceleration[2]": 0.5,
        "mass.platform.mass_matrix[0][0]": 1.5e7,
        "spring.fairlead1-anchor1.stiffness": 5e4,
        "spring.#3.undeformed_length": 55.0,
        "load.platform.force[1]": "2e6 * sin(2*pi/20 * t)",
        "load.platform.moment[0]": 0,
    }
    patched = apply_overrides(data, cases)
    assert patched["step"]["rho_inf"] == 0.25 and patched["step"]["atol"] == 1e-7
    assert patched["model"]["gravity"] == [0.0, 0.0, -9.81] and isinstance(patched["model"]["gravity"][0], float)
    assert patched["node"][0]["position"] == [0.0, 0.5, -7.5]
    assert patched["node"][3]["acceleration"] == [0.0, 0.0, 0.5, 0.0, 0.0, 0.0]
    assert patched["mass"][0]["mass_matrix"][0][0] == 1.5e7 and patched["mass"][0]["mass_matrix"][1][1] == 1.419625e7
    assert patched["spring"][0]["stiffness"] == 5e4 and patched["spring"][2]["undeformed_length"] == 55.0
    assert patched["load"][0]["force"][1] == "2e6 * sin(2*pi/20 * t)" and patched["load"][0]["moment"][0] == 0.0
    assert data["step"]["rho_inf"] == 0.0  # the original is untouched
    mf = parse_model_file(dump_toml(patched))
    assert mf.params.rho_inf == 0.25 and mf.params.atol == 1e-7
    assert mf.model.spring_k[0] == 5e4 and mf.model.mass_m_star[0, 0, 0] == 1.5e7
    # run.t_end replaces run.n_steps
    assert apply_overrides(data, {"run.t_end": 0.5})["run"] == {"t_end": 0.5}
    joints = read_toml('[[node]]\nname = "a"\n[[constraint]]\nkind = "hinge_joint"\nname = "h"\ntorque = 1\n')
    r = resolve_key(joints, "constraint.h.torque")
    assert (r.table, r.item, r.field, r.prototype) == ("constraint", 0, "torque", 1)


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("stepp.h", 0.1, "unknown table 'stepp'"),
        ("step.hh", 0.1, "no key 'hh' in [step]"),
        ("node.nowhere.position", [0, 0, 0], "no node 'nowhere'"),
        ("node.platform.colour", 1, "no key 'colour'"),
        ("node.platform.position", [0, 0], "expected an array of 3 numbers"),
        ("node.platform.position[3]", 1.0, "has 3 elements, not 4"),
        ("node.platform.name", "x", "cannot be swept"),
        ("step.h", "fast", "expected a number, got 'fast' (string)"),
        ("step.max_iter", 5.5, "expected an integer"),
        ("step.geometric_stiffness", 1, "expected true or false"),
        ("spring.#9.stiffness", 1.0, "there are 3 [[spring]] tables, not 9"),
        ("output.path", "x.h5", "[output] table is set by the sweep"),
        ("node.platform.velocity[0]", 1.0, "set the whole array"),
    ],
)
def test_bad_keys_and_values_are_named_in_the_error(key: str, value, words: str) -> None:
    data = read_toml(PLATFORM.read_text())
    with pytest.raises(OverrideError) as err:
        apply_overrides(data, {key: value})
    assert words in str(err.value) and key.split("[")[0] in str(err.value)


def test_toml_text_round_trips_exactly_and_values_parse_as_toml() -> None:
    for path in EXAMPLES.glob("*.toml"):
        data = read_toml(path.read_text())
        assert read_toml(dump_toml(data)) == data, path.name
    tricky = {"a": {"s": 'quote " back \\ tab \t ü', "f": [0.1, 1e-300, -2.5e17, float("inf")], "b": True}}
    assert read_toml(dump_toml(tricky)) == tricky
    assert parse_values('0,0.5,[1, 2],true,"a,b",1e6*sin(t)') == [0, 0.5, [1, 2], True, "a,b", "1e6*sin(t)"]
    assert grid({"a": [1, 2], "b": ["x", "y", "z"]})[4] == {"a": 2, "b": "y"}


def test_rotation_angle_of_a_quarter_turn() -> None:
    q = np.zeros((2, 7))
    q[0, 3] = 1.0
    q[1, 3:] = (np.cos(np.pi / 8), 0.0, 0.0, np.sin(np.pi / 8))
    np.testing.assert_allclose(member_rotation_angle(q), [0.0, np.pi / 4], atol=1e-15)


# ------------------------------------------------------------------------------------------------
# sweeps
def test_sweep_on_two_local_workers_matches_standalone_runs_reports_failures_and_resumes(tmp_path: Path) -> None:
    text = TOP.read_text()
    members = [
        {"step.rho_inf": 0.5},
        {"step.rho_inf": 0.9, "mass.top.mass": 12.0},
        {"mass.top.mass": -1.0},  # rejected by the model: an error, the others go on
        {"step.max_iter": 1},  # the first step does not converge
    ]
    out = tmp_path / "sweep"
    res = sweep(TOP, members, out, n_steps=N, workers=2, outputs=["final:top.angle", "max:iterations"])
    rows = res.rows
    assert [r["status"] for r in rows] == ["ok", "ok", "error", "diverged"]
    assert "mass must be a finite number > 0 kg" in rows[2]["error"] and "line" not in rows[2]["error"]
    assert "did not converge" in rows[3]["error"] and (out / "m0003.failed.h5").exists()
    assert not (out / "m0002.h5").exists() and not (out / "m0003.h5").exists()

    # each member equals the same model run alone, bit for bit
    variants = [
        text.replace("rho_inf = 0.9", "rho_inf = 0.5"),
        text.replace("mass = 15.0", "mass = 12.0"),
    ]
    for i, variant in enumerate(variants):
        alone = standalone(tmp_path, variant, f"alone{i}", N)
        member = read(out / f"m{i:04d}.h5")
        assert_same_run(member, alone)
        assert rows[i]["steps"] == N and rows[i]["final_time_s"] == alone.time[-1]
        assert rows[i]["final:top.angle"] == member_rotation_angle(alone.q[:, 0])[-1]
        assert rows[i]["max:iterations"] == alone.iterations[1:].max()
        energy = alone.kinetic_energy + alone.potential_energy
        assert rows[i]["energy_drift"] == (energy[-1] - energy[0]) / abs(energy[0])
    assert read(out / "m0000.h5").params.rho_inf == 0.5

    # the summary table: one row per member, the parameters as columns
    with open(res.summary, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [t["member"] for t in table] == ["m0000", "m0001", "m0002", "m0003"]
    assert table[1]["mass.top.mass"] == "12.0" and table[0]["mass.top.mass"] == ""
    assert float(table[0]["wall_time_s"]) > 0 and table[2]["status"] == "error"

    # interrupted: member 1's file lost, member 0's left half-written; a rerun redoes exactly those
    (out / "m0001.h5").unlink()
    (out / "m0000.h5").rename(out / "m0000.h5.part")
    stamp = (out / "m0003.failed.h5").stat().st_mtime_ns
    time.sleep(0.01)
    again = sweep(TOP, members, out, n_steps=N, client="serial", outputs=["final:top.angle", "max:iterations"])
    assert [r["reused"] for r in again.rows] == [False, False, False, False]
    assert not (out / "m0000.h5.part").exists()
    assert_same_run(read(out / "m0000.h5"), standalone(tmp_path, variants[0], "again0", N))
    assert (out / "m0003.failed.h5").stat().st_mtime_ns != stamp  # failed members are tried again
    stamp = (out / "m0001.h5").stat().st_mtime_ns
    third = sweep(TOP, members, out, n_steps=N, client="serial", outputs=["final:top.angle", "max:iterations"])
    assert [r["reused"] for r in third.rows] == [True, True, False, False]
    assert (out / "m0001.h5").stat().st_mtime_ns == stamp
    assert third.rows[1]["final:top.angle"] == rows[1]["final:top.angle"]
    assert verify_member(out / "m0001.h5", "m0001", members[1]) is not None
    assert verify_member(out / "m0001.h5", "m0000", members[1]) is None

    # the same folder with another sweep: refused before anything runs
    with pytest.raises(SweepError, match="holds another sweep"):
        sweep(TOP, members[:2], out, n_steps=N, client="serial")
    with pytest.raises(SweepError, match="another run length"):
        sweep(TOP, members, out, n_steps=N + 1, client="serial", outputs=["final:top.angle", "max:iterations"])


def pendulum(values: dict) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    bob = b.add_node(position=(values.get("length", 1.0), 0, 0))
    b.add_mass(bob, mass=values.get("mass", 1.0), inertia=(0.01, 0.01, 0.01))
    b.add_spherical_joint(bob, point=(0, 0, 0))
    return b.build()


def test_a_model_factory_in_process_equals_standalone_runs(tmp_path: Path) -> None:
    params = kp.StepParameters(h=0.01, rho_inf=0.8)
    res = sweep(
        pendulum,
        {"length": [1.0, 2.0], "step.rho_inf": [0.0, 0.8]},
        tmp_path / "f",
        params=params,
        t_end=0.2,
        client="serial",
        progress=False,
        outputs=["maxabs:0.uz", ("final_z", lambda r: float(r.q[-1, 0, 2]))],
    )
    assert [r["status"] for r in res.rows] == ["ok"] * 4
    assert [(r["length"], r["step.rho_inf"]) for r in res.rows] == [(1.0, 0.0), (1.0, 0.8), (2.0, 0.0), (2.0, 0.8)]
    sim = kp.Simulation(pendulum({"length": 2.0}), kp.StepParameters(h=0.01, rho_inf=0.0))
    sim.run(n_steps=20, output=tmp_path / "alone.h5")
    alone, member = read(tmp_path / "alone.h5"), read(tmp_path / "f" / "m0002.h5")
    assert_same_run(member, alone)
    assert res.rows[2]["final_z"] == alone.q[-1, 0, 2] and res.rows[2]["maxabs:0.uz"] == np.abs(alone.q[:, 0, 2]).max()
    with pytest.raises(SweepError, match=r"step\.max_iter: expected int, got 2\.5"):
        sweep(pendulum, [{"step.max_iter": 2.5}], tmp_path / "g", params=params, n_steps=2, client="serial")
    with pytest.raises(SweepError, match="with a model factory give n_steps or t_end"):
        sweep(pendulum, [{"length": 1.0}], tmp_path / "g", params=params, client="serial")
    assert not (tmp_path / "g").exists()
    manifest = json.loads((tmp_path / "f" / "sweep.json").read_text())
    assert manifest["model"]["name"].endswith("pendulum") and len(manifest["members"]) == 4


def test_bad_sweeps_are_refused_before_any_member_runs(tmp_path: Path) -> None:
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")
    cases = [
        (dict(parameters={"step.hh": [1]}), "no key 'hh'"),
        (dict(parameters={"step.h": ["x"]}), "expected a number"),
        (dict(parameters={"step.h": [0.1]}, output_dir=occupied), "not empty and holds no sweep.json"),
        (dict(parameters={"step.h": [0.1]}, outputs=["last:top.uz"]), "unknown statistic 'last'"),
        (dict(parameters={"step.h": [0.1]}, outputs=["final:tip.uz"]), "no node 'tip'"),
        (dict(parameters=[{"step.h": 0.1}, {"step.h": "x"}]), "expected a number, got 'x' (string) (parameter set 1)"),
        (dict(parameters={"step.h": [0.1]}, n_steps=5, t_end=1.0), "give n_steps or t_end, not both"),
    ]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        cases.append((dict(parameters={"step.h": [0.1]}, summary_format="parquet"), "needs pyarrow"))
    for kwargs, words in cases:
        kwargs = {"output_dir": tmp_path / "new", **kwargs}
        with pytest.raises(SweepError, match=re.escape(words)):
            sweep(TOP, client="serial", **kwargs)
        assert not (tmp_path / "new").exists()
    t0 = time.perf_counter()
    with pytest.raises(SweepError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"):
        sweep(TOP, {"step.h": [0.001]}, tmp_path / "new", client="tcp://127.0.0.1:9", timeout=1.0)
    assert time.perf_counter() - t0 < 30 and not (tmp_path / "new").exists()


def test_a_sweep_on_a_running_scheduler_by_its_address(tmp_path: Path) -> None:
    import logging

    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR
    ) as cluster:
        res = sweep(
            TOP,
            {"step.rho_inf": [0.5, 0.9]},
            tmp_path / "s",
            n_steps=5,
            client=cluster.scheduler_address,
            progress=False,
        )
        assert len(cluster.scheduler.workers) == 2  # the cluster outlives the sweep: not ours to close
    assert [r["status"] for r in res.rows] == ["ok", "ok"]
    alone = standalone(tmp_path, TOP.read_text().replace("rho_inf = 0.9", "rho_inf = 0.5"), "alone", 5)
    assert_same_run(read(tmp_path / "s" / "m0000.h5"), alone)


def test_importing_kynemapy_and_its_sweep_module_imports_no_dask() -> None:
    code = (
        "import sys, kynemapy, kynemapy.cli, kynemapy.run.sweep, kynemapy.post.plots, kynemapy.io.vtkhdf\n"
        "assert not {'dask', 'distributed', 'matplotlib', 'vtk'} & set(sys.modules), sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_command_line_sweep_grid_on_two_workers_and_bad_input(tmp_path: Path) -> None:
    res = cli(
        "sweep", str(TOP), "--set", "step.rho_inf=0.5,0.9", "--set", "node.top.velocity[4]=150,140",
        "--set", "run.n_steps=20", "-o", "grid", "--workers", "2", "--record", "final:top.angle", "--no-progress",
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "4 members (0 reused from an earlier run), 0 failed" in res.stdout
    with open(tmp_path / "grid" / "summary.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [(t["step.rho_inf"], t["node.top.velocity[4]"]) for t in table] == [
        ("0.5", "150"), ("0.5", "140"), ("0.9", "150"), ("0.9", "140"),
    ]  # fmt: skip
    assert read(tmp_path / "grid" / "m0003.h5").model.initial_v[0, 4] == 140.0
    bad = [
        (["--set", "step.rho=0.5"], "no key 'rho' in [step]"),
        (["--set", "mass.top.mass=heavy"], "expected a number, got 'heavy'"),
        (["--set", "step.rho_inf"], "expected KEY=V1,V2"),
        (["--set", "step.rho_inf=0.5", "--scheduler", "tcp://127.0.0.1:9", "--timeout", "1"], "cannot reach"),
        (["--set", "step.rho_inf=0.1"], "holds another sweep"),
    ]
    for extra, words in bad:
        out = "grid" if words == "holds another sweep" else "bad"
        res = cli("sweep", str(TOP), *extra, "-o", out, "--no-progress", cwd=tmp_path)
        assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr, (extra, res.stderr)
        assert not (tmp_path / "bad").exists()
