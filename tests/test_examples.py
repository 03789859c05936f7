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


def test_the_readme_example_runs() -> None:
    # the README's one Python example, as a newcomer would paste it
    import re

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    result = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    time, angle = (float(x) for x in result.stdout.split()[:2])
    # 1 s after release under a constant 0.5 N m the rod has turned forward, less than the torque alone would turn it
    assert time == 1.0 and 0.0 < angle < 0.5 * 1.0**2 / (2 * (1 / 3))
