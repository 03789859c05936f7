"""kynemapy: Lie-group generalized-α multibody dynamics in numba, reproducing Kynema-FMB.

Nothing compiles at import; kernels compile on first use and are cached on disk.
"""

from kynemapy.builder import GROUND, ModelBuilder, ModelError, SphericalJoint
from kynemapy.model import Model
from kynemapy.params import StepParameters
from kynemapy.simulation import ConvergenceError, Simulation, StepInfo, simulate, step
from kynemapy.state import Inputs, State, Workspace, new_inputs, new_state, new_workspace

__version__ = "0.1.0"


def __getattr__(name: str):  # PEP 562: kp.io and kp.model_file load h5py / tomllib on first use
    if name in ("io", "model_file", "cli", "integrators"):
        import importlib

        return importlib.import_module(f"kynemapy.{name}")
    raise AttributeError(f"module 'kynemapy' has no attribute {name!r}")


__all__ = [
    "GROUND",
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
