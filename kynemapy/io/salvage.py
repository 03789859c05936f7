"""Checking the committed rows of a result file against their checksums, and the words for what is
damaged: which datasets and rows, which rows stay intact (``read(path, salvage=True)``).
"""

from __future__ import annotations

import json

import h5py
import numpy as np

from kynemapy.engine.rows import ROW_NAMES
from kynemapy.io.checksums import (
    CRC_ALGORITHM,
    block_check,
    crc32_of,
    unknown_algorithm,
)
from kynemapy.io.errors import (
    ResultFileError,
)
from kynemapy.io.layout import (
    ADDED_LATER,
    decode,
    extra_groups,
)


def count_rows(ranges: list[tuple[int, int]]) -> int:
    """Rows in ``(first, stop)`` ranges."""
    return sum(b - a for a, b in ranges)


def complement(ranges: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The ``(first, stop)`` ranges of rows ``0 .. n - 1`` outside ``ranges`` (any order, may overlap)."""
    out, row = [], 0
    for a, b in sorted(ranges):
        if a > row:
            out.append((row, min(a, n)))
        row = max(row, b)
        if row >= n:
            break
    if row < n:
        out.append((row, n))
    return [(a, b) for a, b in out if b > a]


def ranges_text(ranges: list[tuple[int, int]], most: int = 4) -> str:
    """``rows 0 to 639``, ``rows 0 to 639 and 768 to 3000``, or ``2873 rows in 7 ranges``."""
    if len(ranges) > most:
        return f"{count_rows(ranges)} rows in {len(ranges)} ranges"
    parts = [f"{a} to {b - 1}" if b - a > 1 else f"{a}" for a, b in ranges]
    return "rows " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


def intact_text(path: str, kept: list[tuple[int, int]]) -> str:
    if not kept:
        return "; no row can be read from it"
    return f"; {ranges_text(kept)} are intact: kynemapy.io.read({path!r}, salvage=True) returns them"


def segments(f: h5py.File, committed: int) -> tuple[np.ndarray, int | None]:
    """The checksum records that tile rows ``0 .. committed`` and the row where they stop making sense.

    Returns ``(records, bad_from)``: ``bad_from`` is None when the records tile the committed
    rows exactly, else the first row they do not vouch for (the records table is damaged)."""
    table = f["checksums"][()]
    out, row = [], 0
    for rec in table:
        if row >= committed:
            break
        if int(rec[0]) != row or not row < int(rec[1]) <= committed:
            return np.array(out, dtype=np.int64).reshape(-1, table.shape[1]), row
        out.append(rec)
        row = int(rec[1])
    records = np.array(out, dtype=np.int64).reshape(-1, table.shape[1])
    return records, None if row == committed else row


def verify(
    f: h5py.File, path: str, *, salvage: bool
) -> tuple[list[tuple[int, int]], dict[str, np.ndarray], list[tuple[str, int | None, int | None]], int]:
    """Read the committed rows and check them against their checksums.

    Returns ``(kept, rows, problems, committed)``: ``kept`` are the ``(first, stop)`` ranges of
    the rows whose every dataset passed its checksum (all ``committed`` rows when ``problems``
    is empty), ``rows`` every field's kept rows, in order.  A row is kept or left out whole: a
    damaged block of one dataset leaves out those rows of all of them.  Without ``salvage`` a
    problem raises :class:`ResultFileError`."""
    problems: list[tuple[str, int | None, int | None]] = []
    try:
        committed = int(f["committed"][0])
    except Exception as exc:
        raise ResultFileError(
            f"{path}: damaged: /committed cannot be read ({exc})", path, [("committed", None, None)], 0
        ) from None
    lengths = {}
    for name in ROW_NAMES:
        if name not in f:
            if name in ADDED_LATER:  # a file of an earlier version: computed by read()
                continue
            raise ResultFileError(
                f"{path}: not a complete kynemapy result file: no /{name}", path, [(name, None, None)]
            )
        lengths[name] = f[name].shape[0]
    short = min(lengths.values())
    if not 0 <= committed <= short:
        problems.append(("committed", None, None))
        committed = max(0, min(committed, short))
    checked = "checksums" in f
    if checked and f.swmr_mode:  # a live file: the records' extent as of now, not as first loaded
        f["checksums"].refresh()
    bad_from: int | None = None
    records = np.zeros((0, 2 + len(ROW_NAMES)), dtype=np.int64)
    if checked:
        records, bad_from = segments(f, committed)
        if bad_from is not None:
            problems.append(("checksums", bad_from, committed))
    rows: dict[str, np.ndarray] = {}
    bad: list[tuple[int, int]] = [] if bad_from is None else [(bad_from, committed)]
    # the records' columns by name (a file of an earlier version lacks the fields added since)
    columns = json.loads(f["checksums"].attrs["columns"]) if checked else ["first_row", "stop_row", *ROW_NAMES]
    # the extra columns (a step-controlled run's /step_control, the kinds' groups such as a
    # hard-contact model's /hard_contact) are checked with the rows (rows["step_control/..."], ...)
    groups = extra_groups()
    names = [*ROW_NAMES, *(c for c in columns if c.split("/")[0] in groups and c in f)]
    check = crc32_of
    if checked:
        algorithm = decode(f["checksums"].attrs.get("algorithm", CRC_ALGORITHM))
        check = block_check(str(algorithm))
        if check is None:
            raise unknown_algorithm(f, path, "checksums", str(algorithm))
    for name in names:
        if name not in f:
            continue
        if f[name].shape[0] < committed:
            problems.append((name, None, None))
            bad.append((0, committed))
            rows[name] = np.zeros((committed, *f[name].shape[1:]), dtype=f[name].dtype)
            continue
        k = columns.index(name) - 2
        ds = f[name]
        unreadable: set[int] = set()
        try:
            data = ds[:committed]
        except Exception:  # an unreadable chunk: read block by block to find it
            data = np.zeros((committed, *ds.shape[1:]), dtype=ds.dtype)
            bounds = [(int(r[0]), int(r[1])) for r in records] or [(0, committed)]
            for a, b in bounds:
                try:
                    data[a:b] = ds[a:b]
                except Exception:
                    unreadable.add(a)
                    problems.append((name, a, b))
                    bad.append((a, b))
        for rec in records:
            a, b = int(rec[0]), int(rec[1])
            if a not in unreadable and check(data[a:b]) != int(rec[2 + k]):
                problems.append((name, a, b))
                bad.append((a, b))
        rows[name] = data
    kept = complement(bad, committed)
    if problems and not salvage:
        raise ResultFileError(
            f"{path}: damaged: " + summary(problems, committed) + intact_text(path, kept),
            path,
            problems,
            count_rows(kept),
            complement(kept, committed),
        )
    if bad:
        index = np.concatenate([np.arange(a, b) for a, b in kept]) if kept else np.zeros(0, dtype=np.intp)
        rows = {name: arr[index] for name, arr in rows.items()}
    return kept, rows, problems, committed


def summary(problems: list[tuple[str, int | None, int | None]], committed: int, most: int = 8) -> str:
    """The problems as text, adjacent row ranges of one dataset merged, in order of their first row."""
    merged: list[tuple[str, int | None, int | None]] = []
    for name, a, b in sorted(problems, key=lambda p: (-1 if p[1] is None else p[1], p[0])):
        for i, (other, c, d) in enumerate(merged):
            if other == name and a is not None and d is not None and c is not None and c <= a <= d:
                merged[i] = (name, c, max(d, b or d))
                break
        else:
            merged.append((name, a, b))
    groups: dict[tuple[int | None, int | None], list[str]] = {}
    others: list[tuple[str, int | None, int | None]] = []
    for name, a, b in merged:
        if a is None or b is None or name in ("committed", "checksums"):
            others.append((name, a, b))
        else:
            groups.setdefault((a, b), []).append(name)
    parts = [_problem_text(p, committed) for p in others]
    for (a, b), names in groups.items():
        shown = ", ".join(f"/{n}" for n in names[:most])
        if len(names) > most:
            shown += f" and {len(names) - most} more"
        parts.append(f"rows {a} to {b - 1} of {shown} fail their checksum")  # type: ignore[operator]
    return "; ".join(parts)


def _problem_text(problem: tuple[str, int | None, int | None], committed: int) -> str:
    name, a, b = problem
    if name == "committed":
        return f"/committed ({committed} rows marked committed) is out of range of the datasets"
    if name == "checksums":
        return f"the checksum records of rows {a} to {b - 1} are missing or damaged" if b else "checksums"
    if a is None:
        return f"/{name} is damaged"
    return f"/{name} rows {a} to {b - 1} fail their checksum"  # type: ignore[operator]


__all__ = [
    "complement",
    "count_rows",
    "intact_text",
    "ranges_text",
    "segments",
    "summary",
    "verify",
]
