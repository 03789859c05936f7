"""kynemapy: Lie-group generalized-α multibody dynamics in numba, reproducing Kynema-FMB.

Public entry points (the README documents them): model building (:class:`ModelBuilder`,
:class:`Model`), stepping (:class:`Simulation`, :class:`StepParameters`, the functional core
:func:`step` with :func:`new_state`, :func:`new_inputs`, :func:`new_workspace`), and the
subpackages ``kp.io`` (result files), ``kp.integrators`` (rigid-body schemes),
``kp.analytic`` and ``kp.validation``.  The packages follow the data flow: ``model`` (building,
model files) → ``engine`` (the step's phases, elements, constraints) → ``linalg`` (Newton
solves) → ``run`` (Simulation, run loop, writer) → ``io``.

Nothing compiles at import; kernels compile on first use and are cached on disk.
"""

from kynemapy.engine.api import ConvergenceError, StepInfo, step
from kynemapy.engine.data import Inputs, State, Workspace, new_inputs, new_state, new_workspace
from kynemapy.engine.params import StepParameters
from kynemapy.model import Model
from kynemapy.model.builder import GROUND, ModelBuilder, ModelError, SphericalJoint
from kynemapy.run.batch import Batch, BatchInfo
from kynemapy.run.simulation import Simulation, simulate

__version__ = "0.1.0"

#: subpackages loaded on first use (h5py, tomllib, scipy)
_LAZY = ("io", "cli", "integrators", "analytic", "validation")
#: module names of earlier versions: old name -> new module (a DeprecationWarning names it)
_MOVED = {"model_file": "kynemapy.model.file"}


def __getattr__(name: str):  # PEP 562
    import importlib

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


__all__ = [
    "GROUND",
    "Batch",
    "BatchInfo",
    "ConvergenceError",
    "Inputs",
    "Model",
    "ModelBuilder",
    "ModelError",
    "Simulation",
    "SphericalJoint",
    "State",
    "StepInfo",
    "StepParameters",
    "Workspace",
    "__version__",
    "new_inputs",
    "new_state",
    "new_workspace",
    "simulate",
    "step",
]
