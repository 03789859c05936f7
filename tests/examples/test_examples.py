"""The examples tier: every example program runs once, as a user runs it, and passes its own
checks (each compares itself with an independent reference and exits non-zero on a miss).

Examples with a shorter mode run it here (``--quick``: the same checks, held to the same
bounds, over a shorter time or fewer step sizes); the seed cases' full runs are
``tests/verification/test_validation_cases.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


def arguments(path: Path) -> list[str]:
    """``--quick`` for the examples that offer it."""
    return ["--quick"] if "--quick" in path.read_text(encoding="utf-8") else []


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(path: Path) -> None:
    command = [sys.executable, str(path), *arguments(path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout and "MISMATCH" not in result.stdout, result.stdout


def test_the_readme_example_runs() -> None:
    # the README's one Python example, as a newcomer would paste it
    import re

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    result = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    time, angle = (float(x) for x in result.stdout.split()[:2])
    # 1 s after release under a constant 0.5 N m the rod has turned forward, less than the torque alone would turn it
    assert time == 1.0 and 0.0 < angle < 0.5 * 1.0**2 / (2 * (1 / 3))
