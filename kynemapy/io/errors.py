"""The errors of result files: :class:`ResultFileError` (a file :func:`kynemapy.io.read` cannot return as
it is) and :class:`ResultFileWarning` (what reading a killed writer's file repaired).
"""

from __future__ import annotations


class ResultFileError(OSError):
    """A file that :func:`read` cannot return as it is: not a kynemapy result file, cut short, or damaged.

    Attributes
    ----------
    path : the file.
    problems : ``(dataset, first_row, stop_row)`` of every damaged range found (rows None: the
        dataset as a whole).
    intact_rows : how many rows passed their checksums (every dataset of the row) and can be
        had with ``read(path, salvage=True)`` (0: none; None: not a result file).
    position, orientation : (n, N, 3) world positions [m] and (n, N, 4) world orientations
        (unit quaternions) of the nodes, computed from ``q`` and the model's ``x0``.
    missing_rows : ``(first_row, stop_row)`` ranges of the committed rows that did not (in
        order; empty when the damage is not in the rows).
    """

    def __init__(
        self,
        message: str,
        path: str,
        problems: list[tuple[str, int | None, int | None]] | None = None,
        intact_rows: int | None = None,
        missing_rows: list[tuple[int, int]] | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.problems = problems or []
        self.intact_rows = intact_rows
        self.missing_rows = missing_rows or []


class ResultFileWarning(UserWarning):
    """:func:`read` changed a file (cleared a killed writer's marks) or returned only its intact rows."""


__all__ = [
    "ResultFileError",
    "ResultFileWarning",
]
