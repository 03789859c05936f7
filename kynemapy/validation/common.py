"""Result types shared by the validation cases and the report: :class:`Check`, :class:`Table`,
:class:`CaseResult`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

Cell = str | float | int | None


@dataclass(frozen=True)
class Check:
    """One acceptance test: ``value`` compared with ``bound`` by ``relation``.

    Attributes
    ----------
    name : str
        What is checked (the report's row label).
    value : float
        The measured value (units as the name says).
    bound : float or tuple of float
        The bound, or ``(lo, hi)`` for ``relation="in"``.
    passed : bool
        Whether ``value`` meets the bound (a NaN value never passes).
    relation : {"<=", ">=", "<", ">", "in"}
        ``"<="`` (the usual: an error at most a bound), ``">="``, ``"<"``, ``">"``, or
        ``"in"`` with ``bound = (lo, hi)``.
    """

    name: str
    value: float
    bound: float | tuple[float, float]
    passed: bool
    relation: str = "<="

    @property
    def bound_text(self) -> str:
        """The relation and bound as the report prints them (``"≤ 1e-06"``, ``"∈ [0.9, 1.1]"``)."""
        if self.relation == "in":
            lo, hi = self.bound  # type: ignore[misc]
            return f"∈ [{fmt(lo)}, {fmt(hi)}]"
        sym = {"<=": "≤", ">=": "≥", "<": "<", ">": ">"}[self.relation]
        return f"{sym} {fmt(self.bound)}"  # type: ignore[arg-type]


def check(name: str, value: float, bound: float | tuple[float, float], relation: str = "<=") -> Check:
    """A :class:`Check` with ``passed`` computed from ``value``, ``bound`` and ``relation``.

    Parameters
    ----------
    name : str
        What is checked (the report's row label).
    value : float
        The measured value; NaN never passes.
    bound : float or tuple of float
        The bound, or ``(lo, hi)`` for ``relation="in"``.
    relation : {"<=", ">=", "<", ">", "in"}, default "<="
        How ``value`` must compare with ``bound``.

    Returns
    -------
    Check
        The check, with ``passed`` set.
    """
    v = float(value)
    if relation == "in":
        lo, hi = bound  # type: ignore[misc]
        ok = lo <= v <= hi
    else:
        b = float(bound)  # type: ignore[arg-type]
        ok = {"<=": v <= b, ">=": v >= b, "<": v < b, ">": v > b}[relation]
    return Check(name, v, bound, bool(ok and not math.isnan(v)), relation)


@dataclass(frozen=True)
class Table:
    """A table of the report.

    Attributes
    ----------
    title : str
        The table's heading.
    columns : list of str
        The column headings.
    rows : list of list of (str, float, int or None)
        The cells, row by row (numbers are formatted by :func:`fmt`; None prints as "—").
    note : str
        A line printed under the table (empty: none).
    """

    title: str
    columns: list[str]
    rows: list[list[Cell]]
    note: str = ""


@dataclass
class CaseResult:
    """Everything one validation case produces.

    Attributes
    ----------
    name : str
        The case's module name (``"simo_wong"``, ...).
    title : str
        The report's heading of the case.
    seed : str
        The seed document the case reproduces.
    description : str
        Markdown paragraphs: problem, modelling, references, what is measured.
    tables : list of Table
        The tables the report prints.
    checks : list of Check
        The acceptance tests the report prints.
    figures : dict of str to Any
        Data for the case's ``plot``.
    wall_time : float
        Wall-clock time the case took [s].
    quick : bool
        Whether the ``--quick`` subset was run.
    """

    name: str
    title: str
    seed: str
    description: str
    tables: list[Table] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    wall_time: float = 0.0
    quick: bool = False

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]


def fmt(value: Cell) -> str:
    """Cell text: strings as given, integers plainly, floats with 3 significant digits."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    v = float(value)
    if math.isnan(v):
        return "nan"
    if v == 0.0:
        return "0"
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.4g}"
    return f"{v:.2e}"


def text_table(table: Table) -> str:
    """Plain-text rendering (the example scripts print it)."""
    cells = [[fmt(c) for c in row] for row in table.rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(table.columns)]
    lines = [table.title, "  ".join(h.ljust(w) for h, w in zip(table.columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    if table.note:
        lines.append(table.note)
    return "\n".join(lines)


def text_checks(checks: list[Check]) -> str:
    """Plain-text list of checks with PASS/FAIL."""
    lines = []
    for c in checks:
        lines.append(f"  [{'PASS' if c.passed else 'FAIL'}] {c.name}: {fmt(c.value)} {c.bound_text}")
    return "\n".join(lines)


def text_result(result: CaseResult) -> str:
    """Tables and checks of a case as plain text."""
    parts = [f"== {result.title} ({result.seed}){' [quick]' if result.quick else ''}"]
    parts += [text_table(t) + "\n" for t in result.tables]
    n_fail = len(result.failed)
    parts.append(f"checks: {len(result.checks) - n_fail}/{len(result.checks)} passed ({result.wall_time:.1f} s)")
    parts.append(text_checks(result.checks))
    return "\n".join(parts)


#: the stepped rigid-body schemes of :mod:`kynemapy.integrators` (without the exact flow)
STEPPED_SCHEMES = ("rig_pos", "rig_neg", "rig_imp", "liemid", "splitting", "dmv")
#: those that conserve the spatial angular momentum exactly (all but RIG_POS)
CONSERVING_STEPPED = ("rig_neg", "rig_imp", "liemid", "splitting", "dmv")
#: key of the constrained generalized-α engine in the case tables
GEN_ALPHA = "gen-α"
#: display names of the schemes
LABELS = {
    "rig_pos": "RIG_POS",
    "rig_neg": "RIG_NEG",
    "rig_imp": "RIG_IMP",
    "liemid": "LIEMID",
    "splitting": "splitting",
    "dmv": "DMV",
    "exact": "exact flow",
    GEN_ALPHA: "generalized-α",
}
