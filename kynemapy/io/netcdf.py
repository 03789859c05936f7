"""Read Kynema-FMB's NetCDF-4 node-state output (``util::NodeStateWriter``) with h5py.

NetCDF-4 files are HDF5 files: each netCDF variable is an HDF5 dataset and each
dimension a dimension scale.  Kynema's writer defines dimensions ``time``
(unlimited) and ``nodes`` and, for each enabled prefix, float64 variables of shape
(time, nodes):

=======  ============================  ======================================  ==============
prefix   variables                     meaning                                 kynemapy key
=======  ============================  ======================================  ==============
``x``    x_x x_y x_z x_w x_i x_j x_k   global position [m] + orientation       ``x``  (n, N, 7)
``u``    u_x u_y u_z u_w u_i u_j u_k   displacement [m] + rotation quaternion  ``q``  (n, N, 7)
``v``    v_x v_y v_z v_i v_j v_k       velocity [m/s, rad/s]                   ``v``  (n, N, 6)
``a``    a_x a_y a_z a_i a_j a_k       acceleration [m/s², rad/s²]             ``vd`` (n, N, 6)
``f``    f_x f_y f_z f_i f_j f_k       external force [N] / moment [N m]       ``f``  (n, N, 6)
=======  ============================  ======================================  ==============

Quaternions are stored as (w, i, j, k) and returned as kynemapy's (w, x, y, z).
"""

from __future__ import annotations

import os
from typing import Any

import h5py
import numpy as np

__all__ = ["NC_FILL_DOUBLE", "PREFIXES", "read_kynema_netcdf"]

#: netCDF's default fill value for doubles (entries never written read as this).
NC_FILL_DOUBLE = 9.9692099683868690e36

#: prefix → (kynemapy key, component suffixes in kynemapy's column order).
PREFIXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "x": ("x", ("x", "y", "z", "w", "i", "j", "k")),
    "u": ("q", ("x", "y", "z", "w", "i", "j", "k")),
    "v": ("v", ("x", "y", "z", "i", "j", "k")),
    "a": ("vd", ("x", "y", "z", "i", "j", "k")),
    "f": ("f", ("x", "y", "z", "i", "j", "k")),
}


def _is_netcdf_variable(ds: h5py.Dataset) -> bool:
    """False for a dimension that netCDF-4 stored as a bare HDF5 dimension scale (no data)."""
    name = ds.attrs.get("NAME", b"")
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    return "not a netCDF variable" not in str(name)


def _fill_to_nan(arr: np.ndarray, ds: h5py.Dataset) -> np.ndarray:
    fills = [NC_FILL_DOUBLE]
    if "_FillValue" in ds.attrs:
        fills.append(float(np.asarray(ds.attrs["_FillValue"]).ravel()[0]))
    for fill in fills:
        arr[arr == fill] = np.nan
    return arr


def read_kynema_netcdf(path: str | os.PathLike[str], *, fill_as_nan: bool = True) -> dict[str, Any]:
    """Node states of a Kynema NetCDF-4 output file in kynemapy's layout.

    Parameters
    ----------
    path : str | path-like
        The ``.nc`` file (e.g. Kynema's ``cfd_interface.nc``).
    fill_as_nan : bool
        Replace never-written entries (netCDF fill value) by NaN.

    Returns
    -------
    dict with, for each prefix present in the file, ``x`` (n, N, 7), ``q`` (n, N, 7),
    ``v`` (n, N, 6), ``vd`` (n, N, 6), ``f`` (n, N, 6) (float64; see the module table),
    plus ``time`` (n,) [s] if the file has a ``time`` coordinate variable (Kynema's node
    writer does not write one), and ``n_time``, ``n_nodes``.  Arrays share one time length
    n, the longest variable's, as netCDF does for an unlimited dimension; shorter
    variables are padded with the fill value (NaN with ``fill_as_nan``).

    Raises
    ------
    KeyError : a prefix with only some of its variables, or no node-state variable at all.
    ValueError : a variable that is not 2-D (time, nodes) or whose node count disagrees.
    """
    path = os.fspath(path)
    out: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        found: dict[str, list[h5py.Dataset]] = {}
        for prefix, (key, comps) in PREFIXES.items():
            names = [f"{prefix}_{c}" for c in comps]
            present = [n for n in names if n in f and isinstance(f[n], h5py.Dataset)]
            if not present:
                continue
            if len(present) != len(names):
                missing = sorted(set(names) - set(present))
                raise KeyError(f"{path}: prefix {prefix!r} ({key}) lacks variables {missing}")
            found[prefix] = [f[n] for n in names]
        if not found:
            raise KeyError(f"{path}: no Kynema node-state variables (x_*, u_*, v_*, a_*, f_*)")
        n_nodes = None
        n_time = 0
        for prefix, dss in found.items():
            for ds in dss:
                if ds.ndim != 2:
                    raise ValueError(f"{path}: {ds.name} must be (time, nodes), got shape {ds.shape}")
                if n_nodes is None:
                    n_nodes = ds.shape[1]
                elif ds.shape[1] != n_nodes:
                    raise ValueError(f"{path}: {ds.name} has {ds.shape[1]} nodes, expected {n_nodes} ({prefix}_*)")
                n_time = max(n_time, ds.shape[0])
        assert n_nodes is not None
        for prefix, dss in found.items():
            key, comps = PREFIXES[prefix]
            arr = np.full((n_time, n_nodes, len(comps)), NC_FILL_DOUBLE)
            for col, ds in enumerate(dss):
                data = np.asarray(ds[()], dtype=np.float64)
                arr[: data.shape[0], :, col] = data
                if fill_as_nan:
                    _fill_to_nan(arr[:, :, col], ds)
            out[key] = arr
        if "time" in f and isinstance(f["time"], h5py.Dataset) and _is_netcdf_variable(f["time"]):
            t = np.asarray(f["time"][()], dtype=np.float64)
            if t.ndim == 1:
                out["time"] = t
        out["n_time"] = n_time
        out["n_nodes"] = n_nodes
    return out
