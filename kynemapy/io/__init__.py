"""Result files: crash-safe HDF5 output (:class:`ResultWriter`, :func:`read`) and Kynema NetCDF input.

The modules by role: ``hdf5`` (the file layout, documented; its names again), ``layout``,
``writer``, ``reader``, ``salvage`` (checking rows, naming the damaged ones), ``checksums``,
``superblock`` (an HDF5 file's first bytes), ``errors``, ``lock`` (one writer per file),
``paths``, ``netcdf`` (Kynema's files), ``vtkhdf`` (ParaView), ``urdf`` (robots from URDF:
:func:`load_urdf`).  The energies of states are
:mod:`kynemapy.engine.energies`' (re-exported here).

Imported explicitly (``import kynemapy.io``); ``import kynemapy`` does not load h5py.
"""

from kynemapy.engine.energies import energy_and_momentum, row_invariants
from kynemapy.io.errors import ResultFileError, ResultFileWarning
from kynemapy.io.layout import model_difference
from kynemapy.io.netcdf import read_kynema_netcdf
from kynemapy.io.reader import Result, read
from kynemapy.io.urdf import URDFError, URDFRobot, URDFWarning, load_urdf
from kynemapy.io.writer import ResultWriter

__all__ = [
    "Result",
    "ResultFileError",
    "ResultFileWarning",
    "ResultWriter",
    "URDFError",
    "URDFRobot",
    "URDFWarning",
    "energy_and_momentum",
    "load_urdf",
    "model_difference",
    "read",
    "read_kynema_netcdf",
    "row_invariants",
]
