"""Output paths checked before any work is done: one clear error instead of HDF5's or the OS's.

Every writer of the package (result files, ParaView files, plots, animations, sweeps) calls
:func:`output_file` or :func:`output_folder` first, so that a folder given where a file is
expected, a missing or read-only folder, or a file given where a folder is expected is
reported at once, by name, before a run or a rendering spends its time.  Folders for
plots, animations and sweeps are created as needed (as ``mkdir -p`` does); the folder of a
result or ParaView file must exist.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["file_path", "output_file", "output_folder"]


def file_path(path: object, what: str) -> str:
    """``os.fspath(path)``, refusing anything but a path (``str`` or ``os.PathLike``) by name."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a file path (str or os.PathLike), got {type(path).__name__} {path!r}")
    return os.fspath(path)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _writable(folder: Path, what: str, path: Path) -> None:
    """Create and remove a file in ``folder``: the one test every file system answers truthfully
    (permissions, read-only mounts, ``/proc``, full quotas at creation)."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".kynemapy-write-test-")
    except OSError as exc:
        raise PermissionError(
            f"cannot write the {what} {str(path)!r}: the folder {str(folder)!r} does not take new files "
            f"({_reason(exc)})"
        ) from None
    os.close(fd)
    os.unlink(name)


def _nearest_existing(folder: Path) -> Path:
    """``folder``, or the nearest folder above it that exists (or the root)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _make_folder(folder: Path, what: str, path: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(
            f"cannot write the {what} {str(path)!r}: {str(folder)!r} or a folder above it is a file"
        ) from None
    except OSError as exc:
        raise PermissionError(
            f"cannot write the {what} {str(path)!r}: cannot create the folder {str(folder)!r} ({_reason(exc)})"
        ) from None


def output_file(
    path: str | os.PathLike[str], what: str = "output file", *, create_folder: bool = False, example: str = "run.h5"
) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is known that a file can be written there.

    Parameters
    ----------
    path : the file to write (it may exist: the caller decides whether to replace it).
    what : words for the file in messages ("output file", "ParaView file", ...).
    create_folder : make its folder when missing (else a missing folder is an error: a typo in
        a path should not leave new folders behind).
    example : a file name suggested when ``path`` is a folder.

    Raises
    ------
    IsADirectoryError : ``path`` is a folder.
    FileNotFoundError : its folder does not exist (without ``create_folder``).
    NotADirectoryError : a component of its folder is a file.
    PermissionError : its folder cannot be created or does not take new files.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"the {what} {str(p)!r} is a folder: give a file name, e.g. {str(p / example)!r}")
    folder = p.parent
    if create_folder:
        _make_folder(folder, what, p)
    elif not folder.is_dir():
        above = _nearest_existing(folder)
        if above.exists() and not above.is_dir():
            raise NotADirectoryError(f"cannot write the {what} {str(p)!r}: {str(above)!r} is a file, not a folder")
        raise FileNotFoundError(f"cannot write the {what} {str(p)!r}: the folder {str(folder)!r} does not exist")
    _writable(folder, what, p)
    return p


#: name endings of files, refused as the name of a folder to be made (:func:`output_folder`)
FILE_SUFFIXES = frozenset(
    (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".gif", ".mp4", ".h5", ".hdf5", ".vtkhdf", ".nc", ".csv", ".txt", ".toml")
)


def output_folder(path: str | os.PathLike[str], what: str = "output folder", *, create: bool = True) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is known to take new files (created if missing).

    With ``create=False`` a missing folder is not made: the nearest folder above it that exists
    must take new folders (the caller creates it later, once its own checks have passed).

    Raises
    ------
    NotADirectoryError : ``path`` (or a folder above it) is a file.
    ValueError : ``path`` does not exist and its name ends like a file's (``plots.png``, ``out.h5``,
        :data:`FILE_SUFFIXES`): a folder of that name is a surprise, not what was meant.
    PermissionError : it cannot be created or does not take new files.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise NotADirectoryError(f"the {what} {str(p)!r} is a file, not a folder: give a folder name")
    if not p.exists() and p.suffix.lower() in FILE_SUFFIXES:
        raise ValueError(
            f"the {what} {str(p)!r} is a folder (the files are written into it), but its name ends like a "
            f"file's ({p.suffix}): give a folder name, e.g. {str(p.with_suffix(''))!r}"
        )
    if create or p.is_dir():
        _make_folder(p, what, p)
        _writable(p, what, p)
        return p
    above = _nearest_existing(p.parent)
    if not above.is_dir():
        raise NotADirectoryError(f"cannot write the {what} {str(p)!r}: {str(above)!r} is a file")
    _writable(above, what, p)
    return p
