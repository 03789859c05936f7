"""The examples are programs a user runs; each must run and pass its own check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(path: Path) -> None:
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
