"""``kynemapy campbell``: a blade on a hub (a prescribed BC, a rigid joint) from a model file, its
speeds in rpm, the table's first flap frequency against the rotating-cantilever reference."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from kynemapy.analytic.beams import rotating_cantilever_frequencies
from kynemapy.cli import main

MODEL = """\
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
order = 8
quadrature = "gauss"
quadrature_style = "whole"
section_refinement = 9
root_position = [2, 0, 0]

[[constraint]]
kind = "prescribed_bc"
node = "hub"

[[constraint]]
kind = "rigid_joint"
base = "hub"
target = "blade.root"
"""


def test_campbell_writes_the_table_and_the_plot(tmp_path: Path, capsys) -> None:
    model = tmp_path / "blade.toml"
    model.write_text(MODEL)
    out = tmp_path / "c.csv"
    assert main(["campbell", str(model), "--speed", "0:30:4", "--modes", "3", "-o", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    assert str(out) in printed
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert [float(r["speed_rpm"]) for r in rows] == [0.0, 10.0, 20.0, 30.0]
    for r in rows:
        speed = float(r["speed_rad_s"])
        assert abs(speed - float(r["speed_rpm"]) * np.pi / 30.0) < 1e-8
        # mode 1 is the flap mode (EI = 1e5 N m², lag 2e5): L = 10 m, m = 10 kg/m, root at r = 2 m
        ref = rotating_cantilever_frequencies(10.0, 1e5, 10.0, speed, hub_radius=2.0, n_modes=1)[0] / (2 * np.pi)
        assert abs(float(r["mode1_hz"]) / ref - 1.0) < 1e-4
        assert float(r["mode1_mac"]) > 0.99
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("speed", ["0:30", "a:b:c", "0:30:0"])
def test_campbell_refuses_a_bad_speed_list(tmp_path: Path, speed: str, capsys) -> None:
    model = tmp_path / "blade.toml"
    model.write_text(MODEL)
    with pytest.raises(SystemExit) as exc:
        main(["campbell", str(model), "--speed", speed])
    assert exc.value.code == 2
    assert "START:STOP:COUNT" in capsys.readouterr().err


def test_campbell_refuses_gravity_across_the_axis(tmp_path: Path, capsys) -> None:
    model = tmp_path / "blade.toml"
    model.write_text(MODEL.replace("gravity = [0, 0, 0]", "gravity = [0, -9.81, 0]"))
    assert main(["campbell", str(model), "--speed", "0,10", "--no-plot"]) == 2
    assert "across the rotation axis" in capsys.readouterr().err


def rotor_file(tmp_path: Path) -> Path:
    """Three copies of the blade above at 0°, 120°, 240° about z, roots on prescribed BCs at r = 2 m."""
    beam = MODEL.split("[[beam]]")[1].split("[[constraint]]")[0].replace('name = "blade"\n', "")
    beam = beam.replace("root_position = [2, 0, 0]\n", "")
    text = "[model]\ngravity = [0, 0, 0]\n\n[step]\nh = 0.01\n"
    for k in range(3):
        a = 2.0 * math.pi * k / 3.0
        text += (
            f'\n[[beam]]\nname = "b{k + 1}"{beam}root_position = [{2 * math.cos(a)!r}, {2 * math.sin(a)!r}, 0]\n'
            f"root_orientation = [{math.cos(a / 2)!r}, 0, 0, {math.sin(a / 2)!r}]\n"
            f'\n[[constraint]]\nkind = "prescribed_bc"\nnode = "b{k + 1}.root"\n'
        )
    path = tmp_path / "rotor.toml"
    path.write_text(text)
    return path


def test_campbell_in_the_fixed_frame(tmp_path: Path, capsys) -> None:
    path = rotor_file(tmp_path)
    out = tmp_path / "rotor.csv"
    args = ["campbell", str(path), "--speed", "10,30", "--modes", "6", "--blades", "b1,b2,b3", "--no-plot"]
    assert main([*args, "-o", str(out)]) == 0
    with out.open() as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        speed = float(r["speed_rad_s"])
        flap = rotating_cantilever_frequencies(10.0, 1e5, 10.0, speed, hub_radius=2.0, n_modes=1)[0]
        shift = {"collective": 0.0, "forward": speed, "backward": -speed}
        found = {r[f"mode{j}_kind"]: 2 * np.pi * float(r[f"mode{j}_hz"]) for j in range(1, 7)}
        for kind, d in shift.items():
            # the first flap mode's collective and whirls (lag is 2e5: higher)
            near = [2 * np.pi * float(r[f"mode{j}_hz"]) for j in range(1, 7) if r[f"mode{j}_kind"] == kind]
            assert min(abs(x / (flap + d) - 1.0) for x in near) < 1e-4, (kind, near, flap + d, found)
    assert main(["campbell", str(path), "--speed", "10", "--blades", "b1,b9,b3", "--no-plot"]) == 2
    assert "--blades: no beam named 'b9'" in capsys.readouterr().err
