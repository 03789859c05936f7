"""Result files: crash-safe HDF5 output (:class:`ResultWriter`, :func:`read`) and Kynema NetCDF input.

Imported explicitly (``import kynemapy.io``); ``import kynemapy`` does not load h5py.
"""

from kynemapy.io.hdf5 import (
    Result,
    ResultFileError,
    ResultFileWarning,
    ResultWriter,
    energy_and_momentum,
    model_difference,
    read,
    row_invariants,
)
from kynemapy.io.netcdf import read_kynema_netcdf

__all__ = [
    "Result",
    "ResultFileError",
    "ResultFileWarning",
    "ResultWriter",
    "energy_and_momentum",
    "model_difference",
    "read",
    "read_kynema_netcdf",
    "row_invariants",
]
