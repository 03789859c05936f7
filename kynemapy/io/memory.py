"""The kinds' memories of a run in a result file (:class:`kynemapy.model.registry.kind.Memory`):
what a run remembers beside the engine's ``State`` (contact's ``touching``), kept with each of the
two restart slots so that a continued run goes on bit for bit.

Layout, in the group ``/restart``: ``memory/<name>`` (2, R, width) float64, each slot's rows (R
grows as needed, never shrinks: the other slot's rows stay where they are); ``memory_rows`` (2, M)
int64, each slot's row count of each memory in the order of its attribute ``names`` (-1: not
kept); ``memory_digest`` (2,) int64, each slot's XXH3-64 of its ``memory_rows`` row then its
kept memories' rows (:func:`kynemapy.io.checksums.memory_digest`).  A slot's memory is written
with the slot, before the slot is marked (:meth:`kynemapy.io.ResultWriter.append`); a file
without the group's ``memory_rows`` (written before the memories, or of a model without one)
has none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import h5py
import numpy as np

from kynemapy.io.checksums import memory_digest
from kynemapy.io.layout import decode, set_attr

__all__ = ["SlotMemory", "read_memory"]


class SlotMemory:
    """The writer's side: the memories' datasets of one file's restart group.

    Parameters
    ----------
    widths : dict of str to int
        Name -> floats per row (:func:`kynemapy.io.layout.memory_widths`); empty: the file keeps none.
    """

    def __init__(self, widths: Mapping[str, int]) -> None:
        self.widths = dict(widths)
        self._group: h5py.Group | None = None

    def create(self, gr: h5py.Group) -> None:
        """Make the datasets in the restart group ``gr`` (nothing without memories)."""
        if not self.widths:
            return
        gm = gr.create_group("memory")
        for name, width in self.widths.items():
            gm.create_dataset(
                name, shape=(2, 0, width), maxshape=(2, None, width), chunks=(1, 64, width), dtype=np.float64
            )
        mr = gr.create_dataset("memory_rows", data=np.full((2, len(self.widths)), -1, dtype=np.int64))
        set_attr(mr.attrs, "names", json.dumps(list(self.widths)))
        gr.create_dataset("memory_digest", data=np.full(2, -1, dtype=np.int64))

    def open(self, gr: h5py.Group) -> None:
        """Use the datasets of the restart group ``gr`` (made by :meth:`create`)."""
        self._group = gr if self.widths else None

    def write(self, slot: int, memory: Mapping[str, Any] | None) -> None:
        """Write the memories into restart ``slot`` (no flush): each one's rows (R, width), or
        "not kept" (-1 rows) where ``memory`` lacks it.

        Raises
        ------
        ValueError
            A memory the model has not, or rows of another width.
        """
        gr = self._group
        if gr is None:
            return
        memory = memory or {}
        unknown = sorted(set(memory) - set(self.widths))
        if unknown:
            raise ValueError(f"ResultWriter restart: no memory named {unknown} (the model's: {list(self.widths)})")
        kept = []
        rows = np.full(len(self.widths), -1, dtype=np.int64)  # -1: not kept
        for i, (name, width) in enumerate(self.widths.items()):
            if memory.get(name) is None:
                continue
            arr = np.ascontiguousarray(memory[name], dtype=np.float64)
            if arr.ndim != 2 or arr.shape[1] != width:
                raise ValueError(f"ResultWriter restart: memory {name} must have shape (R, {width}), got {arr.shape}")
            ds = gr["memory"][name]
            if arr.shape[0] > ds.shape[1]:  # grown, never shrunk: the other slot's rows stay as they are
                ds.resize((2, max(arr.shape[0], 2 * ds.shape[1]), width))
            if arr.shape[0]:
                ds[slot, : arr.shape[0]] = arr
            rows[i] = arr.shape[0]
            kept.append(arr)
        gr["memory_rows"][slot] = rows
        gr["memory_digest"][slot] = memory_digest(rows, kept)


def read_memory(gr: h5py.Group, slot: int) -> dict[str, np.ndarray] | None:
    """The memories kept in restart ``slot`` of the restart group ``gr``.

    Returns
    -------
    dict of str to ndarray or None
        ``"memory/<name>"`` -> (R, width) float64 rows, those not kept left out (empty: a file
        without memories); None when they fail their digest (or their datasets do not fit).
    """
    if "memory_rows" not in gr:
        return {}
    names = json.loads(decode(gr["memory_rows"].attrs.get("names", "[]")))
    rows = np.asarray(gr["memory_rows"][slot], dtype=np.int64)
    if rows.shape != (len(names),) or "memory_digest" not in gr:
        return None
    out, kept = {}, []
    for name, n in zip(names, rows.tolist(), strict=True):
        if n < 0:
            continue
        ds = gr.get(f"memory/{name}")
        if ds is None or ds.ndim != 3 or n > ds.shape[1]:
            return None
        out[f"memory/{name}"] = arr = np.asarray(ds[slot, :n], dtype=np.float64)
        kept.append(arr)
    if memory_digest(rows, kept) != int(gr["memory_digest"][slot]):
        return None
    return out
