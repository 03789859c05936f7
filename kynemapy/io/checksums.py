"""The checksums of a result file: XXH3-64 digests of each appended block's rows (CRC-32 in earlier
files) and of each restart slot, and the algorithm names the file records.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping

import h5py
import numpy as np
import xxhash

import kynemapy
from kynemapy.io.errors import (
    ResultFileError,
)
from kynemapy.io.layout import (
    RESTART_INPUTS,
    RESTART_STATE,
    decode,
)

#: ``/checksums`` attribute ``algorithm`` of the files this version writes
DIGEST_ALGORITHM = (
    "XXH3-64 (xxhash.xxh3_64_intdigest, seed 0) of each dataset's rows first_row .. stop_row - 1, "
    "C order, stored as the int64 with the same bits"
)


#: ... and of earlier files (still read and checked)
CRC_ALGORITHM = "CRC-32 (zlib.crc32) of each dataset's rows first_row .. stop_row - 1, C order"


#: ``/restart/slot_crc`` attribute ``algorithm`` (files without it hold CRC-32s)
SLOT_ALGORITHM = "XXH3-64 (xxhash.xxh3_64) of the slot's arrays' bytes, State's fields then Inputs', as int64"


_TWO64 = 1 << 64


def crc32_of(arr: np.ndarray, start: int = 0) -> int:
    """CRC-32 (zlib) of an array's bytes in C order, continuing ``start``."""
    return zlib.crc32(np.ascontiguousarray(arr).reshape(-1).view(np.uint8), start)


def _signed(digest: int) -> int:
    """An unsigned 64-bit digest as the int64 with the same bits (what an int64 dataset stores)."""
    return digest - _TWO64 if digest >= 1 << 63 else digest


def digest(arr: np.ndarray) -> int:
    """XXH3-64 (seed 0) of an array's bytes in C order, as int64 (:data:`DIGEST_ALGORITHM`)."""
    return _signed(xxhash.xxh3_64_intdigest(np.ascontiguousarray(arr)))


def block_check(algorithm: str) -> Callable[[np.ndarray], int] | None:
    """The function computing a ``/checksums`` record entry for a file's ``algorithm`` attribute
    (:func:`digest` or :func:`crc32_of`), or None for an algorithm this version does not know."""
    if algorithm.startswith("XXH3-64"):
        return digest
    if algorithm.startswith("CRC-32"):
        return crc32_of
    return None


def unknown_algorithm(f: h5py.File, path: str, dataset: str, algorithm: str) -> ResultFileError:
    """The error for checksums (``dataset``) of an algorithm this version does not know."""
    writer = decode(f.attrs.get("kynemapy_version"))
    return ResultFileError(
        f"{path}: its checksums (/{dataset}) are of an algorithm this kynemapy ({kynemapy.__version__}) does "
        f"not know ({algorithm!r}); read it with the version that wrote it ({writer})",
        path,
        [(dataset, None, None)],
        0,
    )


def memory_digest(rows: np.ndarray, arrays: list[np.ndarray]) -> int:
    """Digest of one restart slot's memories (``/restart/memory_digest``): XXH3-64 of its row
    counts ``rows`` (M,) int64 then each kept memory's rows (R, width) float64, as int64."""
    h = xxhash.xxh3_64()
    h.update(np.ascontiguousarray(rows, dtype=np.int64))
    for arr in arrays:
        h.update(np.ascontiguousarray(arr, dtype=np.float64))
    return _signed(h.intdigest())


def slot_digest(arrays: Mapping[str, np.ndarray], algorithm: str = SLOT_ALGORITHM) -> int:
    """Digest of one restart slot: its arrays in the order of State, then Inputs (XXH3-64 of
    their bytes run together as int64, or with ``algorithm`` "CRC-32" an earlier file's)."""
    names = (*RESTART_STATE, *RESTART_INPUTS)
    if algorithm.startswith("CRC-32"):
        crc = 0
        for name in names:
            crc = crc32_of(arrays[name], crc)
        return crc
    h = xxhash.xxh3_64()
    for name in names:
        h.update(np.ascontiguousarray(arrays[name]))
    return _signed(h.intdigest())


__all__ = [
    "CRC_ALGORITHM",
    "DIGEST_ALGORITHM",
    "SLOT_ALGORITHM",
    "block_check",
    "crc32_of",
    "digest",
    "memory_digest",
    "slot_digest",
    "unknown_algorithm",
]
