"""Text attributes in HDF5's global heap: read them in a child process first, so that a damaged
heap is named instead of hanging the reader.

h5py stores a ``str`` attribute as a variable-length string, whose bytes live in a *global heap
collection* of the file. Unlike the object headers of a ``libver="latest"`` file, the collections
carry no checksum, and HDF5 does not return from reading one whose objects were overwritten
(zeros written over the second half of a collection hang ``attrs["columns"]`` forever). Files
written by this kynemapy hold fixed-length text only (:func:`kynemapy.io.layout.set_attr`),
stored in the checksummed headers; files of earlier versions (and files other programs added
text to) hold variable-length text: :func:`check_text_attributes` reads it once in a child
Python process with a time limit before this process touches it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import h5py

from kynemapy.io.errors import ResultFileError

#: Seconds the child process may take to open the file and read its variable-length text
#: (it takes about 0.2 s: starting Python and importing h5py).
TIME_LIMIT = 20.0

#: The objects whose attribute types tell a file with variable-length text: the root and the step
#: parameters, written once at creation by every kynemapy writer (an earlier version's file has
#: variable-length text there; the child then reads every object's).  Not the growing datasets
#: (``/checksums``): loading their headers before ``/committed`` is read would show a SWMR
#: reader of a live file an extent older than the committed rows.
TEXT_OBJECTS = ("/", "params")

# The child: open the file (a killed writer's file only opens as a SWMR reader) and read every
# variable-length attribute of every object; exit 3 when the file does not open at all (the
# caller's own open says why, or its patched open reads it), 4 when h5py does not import.
_CHILD = r"""
import sys
try:
    import h5py
except Exception:
    sys.exit(4)

def variable(attrs, name):
    return attrs.get_id(name).dtype.kind == "O"

try:
    f = h5py.File(sys.argv[1], "r")
except Exception:
    try:
        f = h5py.File(sys.argv[1], "r", swmr=True)
    except Exception:
        sys.exit(3)
with f:
    objects = [f]
    f.visit(lambda name: objects.append(f[name]))
    for obj in objects:
        for name in obj.attrs:
            if variable(obj.attrs, name):
                obj.attrs[name]
"""

_checked: set[tuple[str, int, int]] = set()


def has_variable_text(f: h5py.File) -> bool:
    """Whether an object of :data:`TEXT_OBJECTS` in ``f`` holds variable-length attributes.

    Only the attributes' types are read (from the checksummed object headers), never their values.
    """
    for name in TEXT_OBJECTS:
        if name != "/" and name not in f:
            continue
        attrs = f[name].attrs
        if any(attrs.get_id(key).dtype.kind == "O" for key in attrs):
            return True
    return False


def check_text_attributes(f: h5py.File, path: str) -> None:
    """Raise :class:`ResultFileError` when the variable-length text of ``path`` cannot be read.

    Files without such text (every file this kynemapy writes) cost one look at a few attribute
    types; others one child process per file state (path, size, modification time).  Where no
    child can be started (a frozen application, no processes left) or the child finds no h5py,
    the text is read as before, unguarded.

    Parameters
    ----------
    f : h5py.File
        ``path``, open for reading.
    path : str
        The file, named in the error.

    Raises
    ------
    ResultFileError
        The child did not finish within :data:`TIME_LIMIT` seconds, or died (HDF5 crashed on
        the heap).
    """
    if not has_variable_text(f) or getattr(sys, "frozen", False):  # frozen: its executable is no Python
        return
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key in _checked:
        return
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, path],
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)),  # this process's h5py
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=TIME_LIMIT,
        )
    except subprocess.TimeoutExpired:
        raise _damaged(path, f"HDF5 did not return from reading them within {TIME_LIMIT:g} s") from None
    except OSError:  # no child process to be had
        return
    if done.returncode in (3, 4):  # does not open as it is (the caller's open decides), or no h5py there
        return
    if done.returncode != 0:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise _damaged(path, f"HDF5 failed reading them ({last[0]})")
    _checked.add(key)


def _damaged(path: str, what: str) -> ResultFileError:
    return ResultFileError(
        f"{path}: damaged: the text attributes in its global heap (an earlier kynemapy's text, or another "
        f"program's; the heap carries no checksum) cannot be read: {what}",
        path,
        [("(file)", None, None)],
        0,
    )


__all__ = ["TEXT_OBJECTS", "TIME_LIMIT", "check_text_attributes", "has_variable_text"]
