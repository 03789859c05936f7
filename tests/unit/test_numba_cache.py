"""Where numba caches kynemapy's kernels, and that an edit in another module is never served stale.

Each test runs a copy of the package in a fresh interpreter (``sys.executable``) with
``HOME``, ``XDG_CACHE_HOME``, ``TMPDIR`` and ``NUMBA_CACHE_DIR`` pointed into ``tmp_path``,
so that nothing is read from or written to the real user's caches.  The copy gets a
probe module whose kernel calls :func:`kynemapy.math.quaternion.quat_exp` from another
file: numba alone would not recompile it after ``quaternion.py`` changes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "kynemapy"

PROBE = '''\
"""Test probe: a kernel calling a kernel of another module."""

from kynemapy._jit import njit
from kynemapy.math.quaternion import quat_exp


@njit
def probe(x):
    w, a, b, c = quat_exp(x, 0.0, 0.0)
    return w + a
'''

#: the probe's module: its kernels are cached in ``<base>/kynemapy._cache_probe/<hash>/``
PROBE_MODULE = "kynemapy._cache_probe"

#: what ``probe(0.5)`` returns with the package's quat_exp: cos(θ/2) + sin(θ/2)
PROBE_VALUE = math.cos(0.25) + math.sin(0.25)

#: appended to the copy's quaternion.py: the probe must then return 1000.5
EDITED_QUAT_EXP = """

@njit
def quat_exp(p0, p1, p2):  # noqa: F811  (edited by tests/unit/test_numba_cache.py)
    return 1000.0 + p0, 0.0, 0.0, 0.0
"""

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, warnings

    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import numba

        config_before = numba.config.CACHE_DIR
        import kynemapy._jit as jit
        from kynemapy._cache_probe import probe

        value = probe(0.5)
    stats = probe.stats if hasattr(probe, "stats") else None
    print(json.dumps({
        "package": os.path.dirname(jit.__file__),
        "source_hash": jit.source_hash("kynemapy._cache_probe"),
        "value": value,
        "cache_path": stats.cache_path if stats else None,
        "hits": sum(stats.cache_hits.values()) if stats else None,
        "misses": sum(stats.cache_misses.values()) if stats else None,
        "config_before": config_before,
        "config_after": numba.config.CACHE_DIR,
        "warnings": [str(w.message) for w in caught if "kynemapy" in str(w.message)],
    }))
    """
)


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".nbi", ".nbc"))}


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the package's kernel machinery under ``tmp_path/src``; returns its folder.

    Only ``_jit.py`` and ``math/`` are copied, with a bare ``__init__.py`` and the probe
    module: the rest of the package (and its ``__init__``) plays no part in the caching.
    """
    copy = tmp_path / "src" / "kynemapy"
    copy.mkdir(parents=True)
    (copy / "__init__.py").write_text('"""Copy of kynemapy\'s kernel machinery (tests/unit/test_numba_cache.py)."""\n')
    shutil.copy2(PACKAGE_DIR / "_jit.py", copy / "_jit.py")
    shutil.copytree(PACKAGE_DIR / "math", copy / "math", ignore=_ignore)
    (copy / "_cache_probe.py").write_text(PROBE)
    return copy


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


def _cache_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")}


def _run(tmp_path: Path, package: Path, **env_vars: str | None) -> dict:
    """Run :data:`SCRIPT` against ``package``; ``env_vars`` set (or, with None, remove) variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KYNEMAPY_"))}
    env.pop("XDG_CACHE_HOME", None)
    env.update(
        PYTHONPATH=str(package.parent),
        PYTHONDONTWRITEBYTECODE="1",
        HOME=str(tmp_path / "home"),
        TMPDIR=str(tmp_path / "tmp"),
    )
    (tmp_path / "tmp").mkdir(exist_ok=True)
    for name, value in env_vars.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(result["package"]) == package.resolve()  # the copy, not the checkout
    return result


def _blocked(tmp_path: Path) -> Path:
    """A path that no one, not even root, can create a folder at (its parent is a file)."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    return blocker / "cache"


def test_numba_cache_dir_is_honoured(tmp_path, package):
    before = _files(package)
    cache = tmp_path / "numba-cache"
    result = _run(tmp_path, package, NUMBA_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(tmp_path / "xdg"))

    assert result["value"] == pytest.approx(PROBE_VALUE, rel=1e-15)
    version_dir = cache / "kynemapy" / PROBE_MODULE / result["source_hash"]
    assert Path(result["cache_path"]).is_relative_to(version_dir)
    assert any(p.name.startswith("_cache_probe.probe-") for p in _cache_files(version_dir))
    # nothing written beside the sources, nor in the user cache folder
    assert _files(package) == before
    assert not (tmp_path / "xdg").exists()
    assert not (tmp_path / "home").exists()
    # numba's setting is restored after each decoration: other libraries keep their cache folder
    assert result["config_before"] == result["config_after"] == str(cache)
    assert result["warnings"] == []


def test_edit_of_a_called_module_is_not_served_stale(tmp_path, package):
    cache = tmp_path / "numba-cache"
    first = _run(tmp_path, package, NUMBA_CACHE_DIR=str(cache))
    assert first["value"] == pytest.approx(PROBE_VALUE, rel=1e-15)
    assert first["misses"] >= 1

    # unchanged sources: the compiled probe is loaded from the cache (so the next check means something)
    second = _run(tmp_path, package, NUMBA_CACHE_DIR=str(cache))
    assert second["hits"] >= 1 and second["misses"] == 0
    assert second["value"] == first["value"]

    # edit a module the probe does not import (so3.py): its compiled code stays in use
    so3 = package / "math" / "so3.py"
    so3.write_text(so3.read_text() + "\n\nEDITED = True  # (edited by tests/unit/test_numba_cache.py)\n")
    unrelated = _run(tmp_path, package, NUMBA_CACHE_DIR=str(cache))
    assert unrelated["source_hash"] == first["source_hash"]
    assert unrelated["hits"] >= 1 and unrelated["misses"] == 0
    assert unrelated["value"] == first["value"]

    # edit quat_exp only: the probe's own file is unchanged, yet it must be recompiled
    quaternion = package / "math" / "quaternion.py"
    quaternion.write_text(quaternion.read_text() + EDITED_QUAT_EXP)
    third = _run(tmp_path, package, NUMBA_CACHE_DIR=str(cache))
    assert third["value"] == 1000.5
    assert third["source_hash"] != first["source_hash"]
    assert third["misses"] >= 1 and third["hits"] == 0
    assert Path(third["cache_path"]).is_relative_to(cache / "kynemapy" / PROBE_MODULE / third["source_hash"])


@pytest.fixture
def read_only_package(package):
    for path in [package, *package.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    yield package
    for path in [package, *package.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_read_only_install(tmp_path, read_only_package):
    package = read_only_package
    before = _files(package)
    xdg = tmp_path / "xdg"
    result = _run(tmp_path, package, XDG_CACHE_HOME=str(xdg))

    assert result["value"] == pytest.approx(PROBE_VALUE, rel=1e-15)
    assert result["warnings"] == []
    assert _files(package) == before
    assert Path(result["cache_path"]).is_relative_to(xdg / "kynemapy" / PROBE_MODULE / result["source_hash"])
    assert _cache_files(xdg)


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG cache folder layout")
@pytest.mark.parametrize("where", ["XDG_CACHE_HOME", "HOME"])
def test_user_cache_folder(tmp_path, package, where):
    before = _files(package)
    if where == "XDG_CACHE_HOME":
        base = tmp_path / "xdg" / "kynemapy"
        result = _run(tmp_path, package, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    else:
        base = tmp_path / "home" / ".cache" / "kynemapy"
        result = _run(tmp_path, package, XDG_CACHE_HOME=None)

    assert result["value"] == pytest.approx(PROBE_VALUE, rel=1e-15)
    assert result["config_before"] == result["config_after"] == ""
    assert Path(result["cache_path"]).is_relative_to(base / PROBE_MODULE / result["source_hash"])
    assert any(p.name.startswith("_cache_probe.probe-") for p in _cache_files(base))
    assert _files(package) == before
    assert not _cache_files(tmp_path / "tmp")


def _temp_base(tmp_path: Path) -> Path:
    owner = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return tmp_path / "tmp" / f"kynemapy-{owner}"


def test_unwritable_cache_folders_fall_back_to_private_temp_folder(tmp_path, package):
    blocked = _blocked(tmp_path)
    result = _run(tmp_path, package, NUMBA_CACHE_DIR=str(blocked), XDG_CACHE_HOME=str(blocked), HOME=str(blocked))

    assert result["value"] == pytest.approx(PROBE_VALUE, rel=1e-15)
    base = _temp_base(tmp_path)
    assert Path(result["cache_path"]).is_relative_to(base / PROBE_MODULE / result["source_hash"])
    assert _cache_files(base)
    if hasattr(os, "getuid"):
        assert stat.S_IMODE(base.stat().st_mode) == 0o700


def test_nothing_writable_compiles_without_cache(tmp_path, package):
    before = _files(package)
    blocked = _blocked(tmp_path)
    (tmp_path / "tmp").mkdir()
    _temp_base(tmp_path).write_text("a file where the private temporary folder would go")
    result = _run(tmp_path, package, NUMBA_CACHE_DIR=str(blocked), XDG_CACHE_HOME=str(blocked), HOME=str(blocked))

    assert result["value"] == pytest.approx(PROBE_VALUE, rel=1e-15)
    assert result["cache_path"] is None
    assert len(result["warnings"]) == 1
    assert "without on-disk caching" in result["warnings"][0]
    assert not _cache_files(tmp_path)
    assert _files(package) == before


def test_old_source_versions_are_pruned(tmp_path, package):
    root = tmp_path / "xdg" / "kynemapy"
    base = root / PROBE_MODULE
    two_hours_ago = time.time() - 7200
    old = [base / f"{i:016x}" for i in range(6)]
    for i, folder in enumerate(old):
        folder.mkdir(parents=True)
        (folder / "x.nbi").write_text("")
        os.utime(folder, (two_hours_ago + i, two_hours_ago + i))
    recent = base / "ffffffffffffffff"  # used a minute ago by another version: kept
    recent.mkdir()
    os.utime(recent, (time.time() - 60, time.time() - 60))
    other = base / "not-a-hash"
    other.mkdir()
    os.utime(other, (0, 0))
    # the earlier layout (<base>/<hash of every source>): the 4 most recent kept, as for a module
    earlier = [root / f"{i:016x}" for i in range(6)]
    for i, folder in enumerate(earlier):
        folder.mkdir()
        os.utime(folder, (two_hours_ago + i, two_hours_ago + i))

    result = _run(tmp_path, package, XDG_CACHE_HOME=str(tmp_path / "xdg"))

    kept = {p.name for p in base.iterdir()}
    # the 4 most recently used: this version, the recent one and the 2 newest old ones
    assert kept == {result["source_hash"], recent.name, old[5].name, old[4].name, other.name}
    assert {p.name for p in root.iterdir() if not p.name.startswith("kynemapy.")} == {f.name for f in earlier[2:]}
    assert PROBE_MODULE in {p.name for p in root.iterdir()}
