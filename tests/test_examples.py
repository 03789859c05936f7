"""The examples are programs a user runs; each must run and pass its own check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
#: options of examples with a shorter mode (the full runs are tests/test_validation_cases.py)
ARGS = {
    "abaqus_rigid_body": ["--quick"],
    "gazebo_boxes": ["--quick"],
    "kynema_top_convergence": ["--quick"],
    "double_four_bar": ["--quick"],
}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(path: Path) -> None:
    command = [sys.executable, str(path), *ARGS.get(path.stem, [])]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
