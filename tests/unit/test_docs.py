"""The documentation a fresh clone shows: every image a page links is committed, every
relative link between pages resolves."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def tracked_files() -> set[Path] | None:
    """The files git tracks (None outside a git checkout: then existence is checked)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {(ROOT / name).resolve() for name in out.decode().split("\0") if name}


def links(page: Path) -> list[tuple[str, str]]:
    """(kind, target) of the page's Markdown links and images, relative targets only."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    found = [("image", m) for m in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)]
    found += [("link", m) for m in re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)", text)]
    return [(kind, t) for kind, t in found if not re.match(r"[a-z]+:|#", t)]


def test_every_linked_image_and_page_is_committed() -> None:
    tracked = tracked_files()
    missing = []
    for page in PAGES:
        for kind, target in links(page):
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists() or (tracked is not None and path.is_file() and path not in tracked):
                missing.append(f"{page.relative_to(ROOT)}: {kind} {target}")
    assert not missing, "links to files a fresh clone lacks:\n" + "\n".join(missing)
    assert any(kind == "image" for page in PAGES for kind, _ in links(page))  # the check has images to check
