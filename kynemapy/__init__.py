"""kynemapy: Lie-group generalized-α multibody dynamics in numba, reproducing Kynema-FMB.

Public entry points (the README documents them): model building (:class:`ModelBuilder`,
:class:`Model`), stepping (:class:`Simulation`, :class:`StepParameters`, the functional core
:func:`step` with :func:`new_state`, :func:`new_inputs`, :func:`new_workspace`), and the
subpackages ``kp.io`` (result files), ``kp.integrators`` (rigid-body schemes),
``kp.analytic`` and ``kp.validation``.  The packages follow the data flow: ``model`` (building,
model files) → ``engine`` (the step's phases, elements, constraints) → ``linalg`` (Newton
solves) → ``run`` (Simulation, run loop, writer) → ``io``.

Nothing compiles at import; kernels compile on first use and are cached on disk.  The
public names are imported on first use: ``import kynemapy`` itself is light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kynemapy.engine.api import ConvergenceError, StepInfo, step
    from kynemapy.engine.data import Inputs, State, Workspace, new_inputs, new_state, new_workspace
    from kynemapy.engine.params import StepParameters
    from kynemapy.model import Model
    from kynemapy.model.builder import GROUND, ModelBuilder, ModelError, SphericalJoint
    from kynemapy.run.batch import Batch, BatchInfo
    from kynemapy.run.simulation import Simulation, simulate
    from kynemapy.run.stepcontrol import ControlledRun, StepControl

#: the public names, each imported from its module on first use (PEP 562): ``import kynemapy``
#: alone loads neither numba nor the engine, so the command line starts at once (and answers
#: Ctrl-C with one line from its first moment)
_PUBLIC = {
    "ConvergenceError": "kynemapy.engine.api",
    "StepInfo": "kynemapy.engine.api",
    "step": "kynemapy.engine.api",
    "Inputs": "kynemapy.engine.data",
    "State": "kynemapy.engine.data",
    "Workspace": "kynemapy.engine.data",
    "new_inputs": "kynemapy.engine.data",
    "new_state": "kynemapy.engine.data",
    "new_workspace": "kynemapy.engine.data",
    "StepParameters": "kynemapy.engine.params",
    "Model": "kynemapy.model",
    "GROUND": "kynemapy.model.builder",
    "ModelBuilder": "kynemapy.model.builder",
    "ModelError": "kynemapy.model.builder",
    "SphericalJoint": "kynemapy.model.builder",
    "Batch": "kynemapy.run.batch",
    "BatchInfo": "kynemapy.run.batch",
    "Simulation": "kynemapy.run.simulation",
    "simulate": "kynemapy.run.simulation",
    "StepControl": "kynemapy.run.stepcontrol",
    "ControlledRun": "kynemapy.run.stepcontrol",
    "rotation_matrices": "kynemapy.math.rotations",
    "world_pose": "kynemapy.math.rotations",
}

__version__ = "0.1.0"

#: subpackages loaded on first use (h5py, tomllib, scipy)
_LAZY = ("io", "cli", "integrators", "analytic", "validation", "analysis")
#: module names of earlier versions: old name -> new module (a DeprecationWarning names it)
_MOVED = {"model_file": "kynemapy.model.file"}


def __getattr__(name: str):  # PEP 562
    import importlib

    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value  # found directly from now on
        return value
    if name in _LAZY:
        return importlib.import_module(f"kynemapy.{name}")
    if name in _MOVED:
        import warnings

        warnings.warn(
            f"kynemapy.{name} moved to {_MOVED[name]}; the old name will be removed",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(_MOVED[name])
    raise AttributeError(f"module 'kynemapy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, *_LAZY})


__all__ = [
    "GROUND",
    "Batch",
    "BatchInfo",
    "ControlledRun",
    "ConvergenceError",
    "Inputs",
    "Model",
    "ModelBuilder",
    "ModelError",
    "Simulation",
    "SphericalJoint",
    "State",
    "StepControl",
    "StepInfo",
    "StepParameters",
    "Workspace",
    "__version__",
    "new_inputs",
    "new_state",
    "new_workspace",
    "rotation_matrices",
    "simulate",
    "step",
    "world_pose",
]
