"""Mode shapes as views: ``kynemapy export MODEL.toml --mode K`` (ParaView) and ``kynemapy
animate MODEL.toml --mode K``, and :func:`kynemapy.post.modeshape.mode_frames`.

The ParaView file's node points at each phase θ_k = 2π k/F must be the reference positions plus
the mode scaled to the amplitude asked for, X + u₀ + a φ_u sin θ_k (φ taken from
``kynemapy.analysis.modes`` of the same model; the mode itself is checked against its closed
form: the first flap frequency of the blade against the cantilever's)."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

import kynemapy as kp
from kynemapy.analytic.beams import euler_bernoulli_frequencies
from kynemapy.cli import main
from kynemapy.model.file import load_model_file
from kynemapy.post.modeshape import mode_frames

MODEL = """\
[model]
gravity = [0, 0, 0]

[step]
h = 0.01

[[beam]]
name = "blade"
points = [[0, 0, 0], [10, 0, 0]]
section_s = [0, 1]
m_star = [[10, 10, 10, 0.02, 0.01, 0.01], [10, 10, 10, 0.02, 0.01, 0.01]]
c_star = [[1e9, 1e9, 1e9, 1e5, 1e5, 2e5], [1e9, 1e9, 1e9, 1e5, 1e5, 2e5]]
order = 6
quadrature = "gauss"
quadrature_style = "whole"
section_refinement = 7

[[constraint]]
kind = "fixed_bc"
node = "blade.root"
"""


#: the blade of test_campbell_cli: a 10 m blade on a hub node (prescribed BC, a rigid joint), root at r = 2 m
ROTOR = """\
[model]
gravity = [0, 0, 0]

[step]
h = 0.01

[[node]]
name = "hub"

[[beam]]
name = "blade"
points = [[0, 0, 0], [10, 0, 0]]
section_s = [0, 1]
m_star = [[10, 10, 10, 0.02, 0.01, 0.01], [10, 10, 10, 0.02, 0.01, 0.01]]
c_star = [[1e9, 1e9, 1e9, 1e5, 1e5, 2e5], [1e9, 1e9, 1e9, 1e5, 1e5, 2e5]]
order = 6
quadrature = "gauss"
quadrature_style = "whole"
section_refinement = 7
root_position = [2, 0, 0]

[[constraint]]
kind = "prescribed_bc"
node = "hub"

[[constraint]]
kind = "rigid_joint"
base = "hub"
target = "blade.root"
"""


def test_export_of_a_mode_holds_the_scaled_shape_at_each_phase(tmp_path: Path) -> None:
    path = tmp_path / "blade.toml"
    path.write_text(MODEL)
    out = tmp_path / "m1.vtkhdf"
    amplitude, frames = 0.25, 8
    args = ["export", str(path), "--mode", "1", "--amplitude", str(amplitude), "--frames", str(frames)]
    assert main([*args, "-o", str(out)]) == 0
    model = load_model_file(path).model
    m = kp.analysis.modes(kp.analysis.static_equilibrium(model))
    # mode 1 is the first flap (bending in z, EI = 1e5 N m², m = 10 kg/m, L = 10 m): rotary
    # inertia and shear move it by about 1e-5
    w1 = euler_bernoulli_frequencies(10.0, 1e5, 10.0, 1)[0]
    assert abs(m.omega[0] / w1 - 1.0) < 1e-4
    n = int(model.n_nodes)
    phi_u = np.zeros((n, 3))
    lin = m.linearization
    for dof in np.flatnonzero(lin.dof_component < 3):
        phi_u[lin.dof_node[dof], lin.dof_component[dof]] = m.shapes[dof, 0]
    a = amplitude / np.abs(phi_u).max()
    x_ref = np.asarray(model.x0)[:, :3] + lin.state.q[:, :3]
    theta = 2.0 * np.pi * np.arange(frames) / frames
    with h5py.File(out, "r") as f:
        g = f["VTKHDF"]
        n_points = int(g["NumberOfPoints"][0])
        points = g["Points"][()].reshape(frames, n_points, 3)[:, :n]
        times = g["Steps/Values"][()]
        displacement = g["PointData/displacement"][()].reshape(frames, n_points, 3)[:, :n]
    expected = x_ref[None] + a * phi_u[None] * np.sin(theta)[:, None, None]
    sign = np.sign(np.sum((points - x_ref) * (expected - x_ref)))  # a shape's sign is arbitrary
    expected = x_ref[None] + sign * a * phi_u[None] * np.sin(theta)[:, None, None]
    np.testing.assert_allclose(points, expected, rtol=0.0, atol=1e-12 * 10.0)
    np.testing.assert_allclose(displacement, expected - x_ref[None], rtol=0.0, atol=1e-12 * 10.0)
    assert abs(np.abs(points - x_ref).max() - amplitude) < 1e-12  # the largest displacement: the amplitude
    np.testing.assert_allclose(times, theta / m.omega[0], rtol=1e-14)
    assert np.abs(phi_u[:, 2]).max() > 1e3 * np.abs(phi_u[:, :2]).max()  # flap: out of plane


def test_bad_mode_numbers_say_what_is_wrong(tmp_path: Path, capsys) -> None:
    path = tmp_path / "blade.toml"
    path.write_text(MODEL)
    n = kp.analysis.modes(load_model_file(path).model).omega.size
    assert main(["export", str(path), "--mode", str(n + 1)]) == 2
    assert f"--mode {n + 1}: the model has {n} modes (numbered 1 to {n})" in capsys.readouterr().err
    assert main(["export", str(path), "--mode", "0"]) == 2
    assert "modes are numbered from 1" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "run.h5"), "--mode", "1"]) == 2
    assert "--mode needs a model file (.toml)" in capsys.readouterr().err
    m = kp.analysis.modes(load_model_file(path).model, n_modes=3)
    with pytest.raises(ValueError, match=r"mode 3 does not exist: there are 3 modes \(indices 0 … 2\)"):
        mode_frames(m, 3)
    with pytest.raises(ValueError, match="amplitude must be a number > 0"):
        mode_frames(m, 0, amplitude=-1.0)


def test_animate_a_mode_writes_a_gif(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "blade.toml"
    path.write_text(MODEL)
    out = tmp_path / "m2.gif"
    assert main(["animate", str(path), "--mode", "2", "--frames", "4", "--no-progress", "-o", str(out)]) == 0
    from PIL import Image

    with Image.open(out) as im:
        assert im.n_frames == 4


def test_export_of_a_rotating_mode(tmp_path: Path, capsys) -> None:
    """``--speed`` (rpm): the mode about the steady rotation (rotating frame); the printed
    frequency is the rotating cantilever's first flap frequency (the campbell CLI's blade)."""
    from kynemapy.analytic.beams import rotating_cantilever_frequencies

    path = tmp_path / "rotor.toml"
    path.write_text(ROTOR)
    out = tmp_path / "r.vtkhdf"
    assert main(["export", str(path), "--mode", "1", "--speed", "30", "--frames", "4", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    f = float(err.split("mode 1: ")[1].split(" Hz")[0])
    speed = 30.0 * np.pi / 30.0
    ref = rotating_cantilever_frequencies(10.0, 1e5, 10.0, speed, hub_radius=2.0, n_modes=1)[0] / (2 * np.pi)
    assert abs(f / ref - 1.0) < 1e-4
    with h5py.File(out, "r") as h:
        assert int(h["VTKHDF/Steps"].attrs["NSteps"]) == 4


def test_no_equilibrium_is_a_message_not_a_traceback(tmp_path: Path, capsys) -> None:
    """A beam with a free end and nothing holding it in a gravity field: no static equilibrium."""
    path = tmp_path / "free.toml"
    path.write_text(MODEL.replace("gravity = [0, 0, 0]", "gravity = [0, 0, -9.81]").split("[[constraint]]")[0])
    assert main(["export", str(path), "--mode", "1"]) == 2
    assert "static equilibrium not reached" in capsys.readouterr().err
