"""The groups ``/model`` and ``/params`` of a result file, as :class:`kynemapy.io.ResultWriter`
writes them (read back by :mod:`kynemapy.io.reader`): every :class:`kynemapy.Model` field, an
array as a dataset with its CRC-32 (attribute ``crc32``) or a count as an attribute, and every
:class:`kynemapy.StepParameters` field with the derived coefficients.
"""

from __future__ import annotations

import dataclasses

import h5py
import numpy as np

from kynemapy.engine.params import StepParameters
from kynemapy.io.checksums import crc32_of
from kynemapy.io.layout import set_attr
from kynemapy.model import HARD_DEFAULTS, Model

__all__ = ["write_model_group"]


def write_model_group(f: h5py.File, model: Model, params: StepParameters) -> None:
    """Write ``model`` into the new group ``/model`` and ``params`` into ``/params`` of ``f``.

    Parameters
    ----------
    f : h5py.File
        The result file, open for writing (before SWMR mode).
    model : Model
        The model.
    params : StepParameters
        The step parameters (``/params/derived``: alpha_m, alpha_f, gamma, beta).
    """
    gm = f.create_group("model")
    for name in Model._fields:
        value = getattr(model, name)
        if value is None and name in HARD_DEFAULTS:  # a Model made by hand: none
            value = HARD_DEFAULTS[name]()
        if isinstance(value, np.ndarray):
            ds = gm.create_dataset(name, data=np.ascontiguousarray(value))
            ds.attrs["crc32"] = crc32_of(value)
        else:
            gm.attrs[name] = int(value)
    gp = f.create_group("params")
    for fld in dataclasses.fields(StepParameters):
        set_attr(gp.attrs, fld.name, getattr(params, fld.name))
    gd = gp.create_group("derived")
    for name in ("alpha_m", "alpha_f", "gamma", "beta"):
        gd.attrs[name] = float(getattr(params, name))
