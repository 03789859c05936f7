"""The command line's own words (issue 27, item 15): ``--version``, help for every positional
argument, plurals in ``kynemapy info``."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import kynemapy as kp
from kynemapy.cli import main, parser

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_projects_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    res = subprocess.run([sys.executable, "-m", "kynemapy", "--version"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == f"kynemapy {version}", (res.stdout, res.stderr)


def test_every_positional_argument_of_every_command_has_help() -> None:
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    positionals = [
        (name, action.dest, action.help)
        for name, command in sub.choices.items()
        for action in command._actions
        if not action.option_strings
    ]
    assert {name for name, _, _ in positionals} >= {"run", "info", "plot", "animate", "export", "sweep"}
    missing = [f"{name} {dest}" for name, dest, text in positionals if not text]
    assert missing == []


@pytest.mark.parametrize(
    ("nodes", "words"),
    [(1, "1 node, 1 mass, 0 springs, 0 constraints, 6 unknowns"), (2, "2 nodes, 2 masses, 1 spring, 0 constraints")],
)
def test_info_counts_in_the_singular_and_the_plural(tmp_path: Path, capsys, nodes: int, words: str) -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    ids = [b.add_node(position=(float(i), 0.0, 0.0)) for i in range(nodes)]
    for n in ids:
        b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    if nodes == 2:
        b.add_spring(ids[0], ids[1], stiffness=10.0, undeformed_length=1.0)
    path = tmp_path / "m.h5"
    kp.Simulation(b.build(), kp.StepParameters(h=0.01)).run(n_steps=2, output=path)
    assert main(["info", str(path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("model"))
    assert line.split(None, 1)[1].startswith(words), line


def test_validate_help_lists_every_case_and_an_honest_quick_time() -> None:
    from kynemapy.validation import ALL_CASES

    proc = subprocess.run(
        [sys.executable, "-m", "kynemapy", "validate", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert len(ALL_CASES) == 14
    for name in ALL_CASES:
        assert name in text, name
    assert "under a minute" not in text
