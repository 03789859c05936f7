"""The code the documentation shows is the code that runs: the Python blocks of
docs/getting-started.md are lines of examples/getting_started.py (which tests/examples runs),
and every Markdown table cell renders whole (a ``|`` inside a code span splits the cell on
GitHub and in MyST)."""

from __future__ import annotations

import ast
import re
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "getting-started.md"
EXAMPLE = ROOT / "examples" / "getting_started.py"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def python_blocks(text: str) -> list[str]:
    """The bodies of the page's fenced ```python blocks."""
    return [m.group(1) for m in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)]


def functions(source: str) -> dict[str, str]:
    """Top-level function name -> its source lines, as in the file."""
    lines = source.splitlines()
    tree = ast.parse(source)
    return {
        node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno]) + "\n"
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def is_excerpt(block: str, lines: list[str]) -> bool:
    """Whether ``block`` is a run of consecutive ``lines``, dedented (an excerpt of a function body)."""
    n = len(block.splitlines())
    return any(textwrap.dedent("\n".join(lines[i : i + n]) + "\n") == block for i in range(len(lines) - n + 1))


def test_getting_started_shows_the_example_code() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    source = EXAMPLE.read_text(encoding="utf-8")
    assert "literalinclude" not in text  # GitHub shows no directive's code: the code is inline
    blocks = python_blocks(text)
    defs = functions(source)
    shown = []
    for block in blocks:
        assert is_excerpt(block, source.splitlines()), f"a block of getting-started.md is not in the example:\n{block}"
        for name, code in functions(block).items():  # a function shown is the whole function, to its last line
            assert code == defs.get(name), f"getting-started.md's {name}() is not the example's whole {name}()"
            shown.append(name)
    assert {"build_pendulum", "swing"} <= set(shown)  # the model and the stepping loop are shown


def test_excerpt_check_catches_drift() -> None:
    """The comparison fails on a changed line (so the test above can fail)."""
    source = EXAMPLE.read_text(encoding="utf-8")
    swing = functions(source)["swing"]
    assert is_excerpt(swing, source.splitlines())
    assert not is_excerpt(swing.replace("h=1e-3", "h=2e-3"), source.splitlines())


def table_cells_with_odd_backticks(text: str) -> list[str]:
    """Cells of the page's tables (outside fences) that a ``|`` inside a code span has split."""
    bad, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or not line.lstrip().startswith("|"):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        bad += [line for cell in cells if cell.count("`") % 2]
    return bad


def test_table_cells_render_whole() -> None:
    assert table_cells_with_odd_backticks("| a | keep `|p| = L` |\n")  # the check sees a split cell
    assert not table_cells_with_odd_backticks("| a | keep `‖p‖ = L` |\n")
    bad = [
        f"{page.relative_to(ROOT)}: {line}"
        for page in PAGES
        for line in table_cells_with_odd_backticks(page.read_text(encoding="utf-8"))
    ]
    assert not bad, "table cells split by a | inside code:\n" + "\n".join(bad)


def commands(text: str) -> list[str]:
    """The command lines of the page's fenced bash blocks, comments stripped."""
    blocks = re.findall(r"^```bash\n(.*?)^```$", text, flags=re.S | re.M)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_runs_the_tests_as_ci_does_and_names_the_fast_tier() -> None:
    readme = commands((ROOT / "README.md").read_text(encoding="utf-8"))
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert "python -m pytest" in ci  # CI runs the whole suite ...
    assert "python -m pytest" in readme  # ... with the README's command
    fast = 'pip install -e ".[test]" && python -m pytest -m "not slow"'
    assert fast in readme and readme.index(fast) < readme.index("python -m pytest")  # the fast tier comes first
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert any(m.startswith("slow:") for m in markers["markers"])  # the marker the fast tier leaves out exists
