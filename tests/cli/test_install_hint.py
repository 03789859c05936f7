"""The hint for a missing optional extra names a ``pip install`` that works where the user is:
from a clone (kynemapy is not on the registry) the checkout's path, else the registry form."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

import pytest

from kynemapy import cli
from kynemapy.run import extras
from kynemapy.run.sweep import SweepError, _Executor

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "kynemapy"


def test_from_the_checkout_root_the_command_is_an_editable_install_of_dot(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    assert extras.install_command("plot") == "pip install -e '.[plot]'"
    assert extras.install_command("ensemble") == "pip install -e '.[ensemble]'"
    # the extras it names exist in this checkout's pyproject.toml
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"plot", "ensemble", "paraview"} <= set(declared)


def test_elsewhere_the_command_names_the_checkout(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert extras.install_command("plot") == f"pip install -e '{ROOT}[plot]'"


def test_a_registry_install_gets_the_registry_form(tmp_path, monkeypatch) -> None:
    site = tmp_path / "site-packages" / "kynemapy"  # no pyproject.toml beside it
    site.mkdir(parents=True)
    monkeypatch.setattr(extras, "_direct_url", lambda: None)
    assert extras.source_folder(site) is None
    assert extras.install_command("plot", package_dir=site, cwd=tmp_path) == "pip install 'kynemapy[plot]'"


def test_an_install_from_a_local_folder_names_that_folder(tmp_path, monkeypatch) -> None:
    site = tmp_path / "site-packages" / "kynemapy"
    site.mkdir(parents=True)
    url = {"url": ROOT.as_uri(), "dir_info": {}}  # PEP 610: `pip install /path/to/clone`
    monkeypatch.setattr(extras, "_direct_url", lambda: json.dumps(url))
    assert extras.install_command("plot", package_dir=site, cwd=tmp_path) == f"pip install '{ROOT}[plot]'"
    url["dir_info"] = {"editable": True}
    assert extras.install_command("plot", package_dir=site, cwd=ROOT) == "pip install -e '.[plot]'"


def test_cli_and_sweep_hints_use_it(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    with pytest.raises(ValueError, match=r"needs matplotlib: pip install -e '\.\[plot\]'$"):
        cli._plot(argparse.Namespace(result=str(tmp_path / "r.h5"), output_dir=None))
    with pytest.raises(ValueError, match=r"needs matplotlib: pip install -e '\.\[plot\]'$"):
        cli._animate(argparse.Namespace(result=str(tmp_path / "r.h5"), output=None))
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(SweepError, match=r"sweeps run on Dask: pip install -e '\.\[ensemble\]'"):
        _Executor(None, workers=1, timeout=1.0, needed=2)


def test_the_old_import_path_still_gives_the_command() -> None:
    from kynemapy.post.extras import install_command

    assert install_command is extras.install_command
