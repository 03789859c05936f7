"""The ``pip install`` command that adds an optional extra (``plot``, ``ensemble``, ``paraview``) where the user is.

kynemapy is installed from a clone (``pip install -e .``), so the registry form
``pip install 'kynemapy[plot]'`` fails there.  :func:`install_command` gives the command that
works for this installation: the source checkout's path when kynemapy runs from one (editable
or development install, or a ``pyproject.toml`` of kynemapy beside the package), the local
folder it was installed from (PEP 610's ``direct_url.json``), else the registry form.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the kynemapy package


def _is_checkout(root: Path) -> bool:
    """Whether ``root`` holds kynemapy's ``pyproject.toml``."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return 'name = "kynemapy"' in text


def _direct_url() -> str | None:
    """The installation's PEP 610 ``direct_url.json`` (how pip installed it), or None."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return distribution("kynemapy").read_text("direct_url.json")
    except (PackageNotFoundError, OSError):
        return None


def source_folder(package_dir: Path = PACKAGE_DIR) -> tuple[Path, bool] | None:
    """(folder, editable) of the source kynemapy was installed from, or None for a registry install.

    The package beside a kynemapy ``pyproject.toml`` runs from a checkout (editable or
    development install: ``pip install -e``); otherwise the installation's ``direct_url.json``
    names a local folder when it came from one."""
    if _is_checkout(package_dir.parent):
        return package_dir.parent, True
    text = _direct_url()
    if not text:
        return None
    try:
        info = json.loads(text)
    except ValueError:
        return None
    url = info.get("url", "")
    if "dir_info" not in info or not url.startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    folder = Path(unquote(urlparse(url).path))
    if not _is_checkout(folder):
        return None
    return folder, bool(info["dir_info"].get("editable", False))


def install_command(extra: str, package_dir: Path = PACKAGE_DIR, cwd: Path | None = None) -> str:
    """The shell command that installs ``kynemapy[extra]`` for this installation.

    From a source checkout: ``pip install -e '.[extra]'`` in the checkout's root, with the
    checkout's path elsewhere; a registry install: ``pip install 'kynemapy[extra]'``."""
    found = source_folder(package_dir)
    if found is None:
        return f"pip install {shlex.quote(f'kynemapy[{extra}]')}"
    folder, editable = found
    here = Path(cwd) if cwd is not None else Path.cwd()
    try:
        same = os.path.samefile(here, folder)
    except OSError:
        same = False
    target = "." if same else str(folder)
    return f"pip install {'-e ' if editable else ''}{shlex.quote(f'{target}[{extra}]')}"
