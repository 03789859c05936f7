"""An HDF5 file's first bytes: the version 2/3 superblock (signature, status flags, Jenkins lookup3
checksum), read and, for a killed writer's file, patched in memory so that h5py opens it
(:func:`open_patched`) as ``h5clear -s`` would.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any

import h5py

from kynemapy.io.errors import (
    ResultFileError,
)

_SIGNATURE = b"\x89HDF\r\n\x1a\n"


_M32 = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def _lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 ``hashlittle``: the checksum HDF5 puts on its superblock (and metadata)."""
    length = len(data)
    a = b = c = (0xDEADBEEF + length + initval) & _M32
    k = 0
    while length > 12:
        a = (a + int.from_bytes(data[k : k + 4], "little")) & _M32
        b = (b + int.from_bytes(data[k + 4 : k + 8], "little")) & _M32
        c = (c + int.from_bytes(data[k + 8 : k + 12], "little")) & _M32
        a = (a - c) & _M32 ^ _rot(c, 4)
        c = (c + b) & _M32
        b = (b - a) & _M32 ^ _rot(a, 6)
        a = (a + c) & _M32
        c = (c - b) & _M32 ^ _rot(b, 8)
        b = (b + a) & _M32
        a = (a - c) & _M32 ^ _rot(c, 16)
        c = (c + b) & _M32
        b = (b - a) & _M32 ^ _rot(a, 19)
        a = (a + c) & _M32
        c = (c - b) & _M32 ^ _rot(b, 4)
        b = (b + a) & _M32
        length -= 12
        k += 12
    if length == 0:
        return c
    tail = data[k : k + length] + bytes(12 - length)
    a = (a + int.from_bytes(tail[0:4], "little")) & _M32
    b = (b + int.from_bytes(tail[4:8], "little")) & _M32
    c = (c + int.from_bytes(tail[8:12], "little")) & _M32
    c = (c ^ b) - _rot(b, 14) & _M32
    a = (a ^ c) - _rot(c, 11) & _M32
    b = (b ^ a) - _rot(a, 25) & _M32
    c = (c ^ b) - _rot(b, 16) & _M32
    a = (a ^ c) - _rot(c, 4) & _M32
    b = (b ^ a) - _rot(a, 14) & _M32
    c = (c ^ b) - _rot(b, 24) & _M32
    return c


@dataclass
class Superblock:
    """What kynemapy needs of an HDF5 version 2/3 superblock (the format of ``libver="latest"``)."""

    header: bytes  # its 48 bytes
    flags: int  # file consistency flags: bit 0 open for writing, bit 2 open for SWMR writing
    eof: int  # end-of-file address: the size the file must have [bytes]

    def cleared(self) -> bytes:
        """The superblock with its consistency flags cleared and its checksum renewed (what h5clear does)."""
        head = bytearray(self.header[:44])
        head[11] = 0
        return bytes(head) + _lookup3(bytes(head)).to_bytes(4, "little")


def read_superblock(path: str) -> tuple[Superblock | None, int]:
    """The superblock of ``path`` (None for an HDF5 superblock of another version) and the file size.

    Raises :class:`ResultFileError` for a file that does not start like an HDF5 file."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(48)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ResultFileError(f"{path}: not a kynemapy result file (a directory)", path) from None
    if size == 0:
        raise ResultFileError(f"{path}: not a kynemapy result file (the file is empty)", path)
    if header[:8] != _SIGNATURE:
        what = "its first bytes are zeros" if not any(header) else "no HDF5 signature at its start"
        raise ResultFileError(f"{path}: not a kynemapy result file (not an HDF5 file: {what})", path)
    if len(header) < 48 or header[8] not in (2, 3) or header[9] != 8:
        return None, size
    if _lookup3(header[:44]) != int.from_bytes(header[44:48], "little"):
        raise ResultFileError(f"{path}: damaged HDF5 file (its superblock fails its checksum)", path)
    eof = int.from_bytes(header[28:36], "little")
    return Superblock(header, header[11], eof), size


class _Patched(io.RawIOBase):
    """Read-only view of a file with a new superblock and zeros beyond its end, up to ``size`` bytes.

    h5py opens it (``driver="fileobj"``) as an ordinary file: a file cut short, or one still
    marked as open by a killed writer, is read without touching it on disk and without SWMR's
    minutes of retries."""

    def __init__(self, path: str, superblock: bytes, size: int) -> None:
        self._fh = open(path, "rb")  # closed by close()
        self._superblock = superblock
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = max(0, min(len(view), self._size - self._pos))
        self._fh.seek(self._pos)
        got = self._fh.readinto(view[:n]) or 0
        view[got:n] = bytes(n - got)  # beyond the end of what is on disk: zeros
        lo, hi = self._pos, self._pos + n
        if lo < len(self._superblock):
            end = min(hi, len(self._superblock))
            view[: end - lo] = self._superblock[lo:end]
        self._pos += n
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def open_patched(path: str, sb: Superblock, size: int) -> h5py.File:
    return h5py.File(_Patched(path, sb.cleared(), max(size, sb.eof)), "r")


__all__ = [
    "Superblock",
    "open_patched",
    "read_superblock",
]
