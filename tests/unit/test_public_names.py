"""Names the README documents keep working after the package moved into model/, engine/,
linalg/, run/ (a moved module name answers with a DeprecationWarning)."""

from __future__ import annotations

import warnings

import pytest

import kynemapy as kp

README_NAMES = (
    "GROUND", "ConvergenceError", "Inputs", "Model", "ModelBuilder", "ModelError", "Simulation", "SphericalJoint",
    "State", "StepInfo", "StepParameters", "Workspace", "new_inputs", "new_state", "new_workspace", "simulate", "step",
)  # fmt: skip


def test_readme_names_are_exported() -> None:
    for name in README_NAMES:
        assert hasattr(kp, name), name
        assert name in kp.__all__, name
    assert callable(kp.step)  # the functional core, not a module (it no longer shadows one)


def test_subpackages_load_on_first_use() -> None:
    assert callable(kp.io.read) and callable(kp.io.read_kynema_netcdf)
    assert callable(kp.integrators.integrate)
    assert callable(kp.analytic.free_body_momentum)
    assert callable(kp.cli.main)


def test_moved_module_name_warns_and_still_works() -> None:
    with pytest.warns(DeprecationWarning, match=r"kynemapy\.model_file moved to kynemapy\.model\.file"):
        mf = kp.model_file
    from kynemapy.model.file import load_model_file

    assert mf.load_model_file is load_model_file


def test_unknown_name_is_an_attribute_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
            _ = kp.no_such_name


def test_simulation_methods_the_readme_documents() -> None:
    for name in (
        "step", "advance", "rollout", "run", "restart", "set_load", "set_prescribed_displacement", "set_torque",
        "set_force", "set_angle", "multipliers", "joint_output", "reaction", "revolute_output", "save_state",
        "restore_state", "compute_consistent_accelerations",
    ):  # fmt: skip
        assert callable(getattr(kp.Simulation, name)), name
    for name in ("state", "inputs", "workspace", "model", "params", "time", "step_count"):
        assert isinstance(getattr(kp.Simulation, name), property), name
