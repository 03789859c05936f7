"""Contact in result files: the Model fields of a file written before contact, the hard laws'
per-row columns (the group ``/hard_contact``), the result's ``body_contact_forces`` and the lines of
``kynemapy info``.

The compliant law's forces are functions of each row's state (:mod:`kynemapy.run.contact_rows`
computes them again from ``q`` and ``v``); the hard laws' impulses are not, so they are recorded
with each row (:mod:`kynemapy.run.hard_rows`): the impulses summed over the steps since the row
before (zeros at a new file's first row), the contacts closed at the end of the row's last step.
With K points against hard ground planes (``model.hard_contacts``' rows) and N nodes:

* ``normal_impulse`` (n, K), ``friction_impulse`` (n, K, 3), ``active`` (n, K): the planes'
  points (when K > 0);
* ``body_impulse`` (n, N, 6), ``body_contacts`` (n,): the hard body law's contacts summed per
  body (with ``set_body_contact(law="hard")``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kynemapy.model import freeze, no_contacts, no_hard_contacts, no_hard_excluded, no_hard_shapes
from kynemapy.model.registry.kind import Column, Columns, plural

__all__ = [
    "HARD_CONTACT",
    "body_contact_forces",
    "has_hard_bodies",
    "impulse_spans",
    "info",
    "model_defaults",
    "upgrade",
]


def _points(model: Any) -> int:
    """K, the points against hard ground planes (``model.hard_contacts``' rows)."""
    table = getattr(model, "hard_contacts", None)
    return 0 if table is None else int(np.asarray(table).shape[0])


def has_hard_bodies(model: Any) -> bool:
    """Whether the model has shapes under the hard body law (``model.hard_shapes`` with rows)."""
    table = getattr(model, "hard_shapes", None)
    return table is not None and bool(np.asarray(table).shape[0])


def _per_point(*trailing: int) -> Any:
    return lambda model: (_points(model), *trailing) if _points(model) else None


def _per_body(shape: Any) -> Any:
    return lambda model: shape(model) if has_hard_bodies(model) else None


#: the hard laws' per-row columns, the group ``/hard_contact`` (see the module docstring)
HARD_CONTACT = Columns(
    "hard_contact",
    (
        Column(
            "normal_impulse",
            np.float64,
            "N s (per point against a hard ground plane: the normal impulse summed over the steps since the row "
            "before)",
            _per_point(),
        ),
        Column(
            "friction_impulse",
            np.float64,
            "N s (per point against a hard ground plane: the friction impulse on the body, world frame, summed "
            "over the steps since the row before)",
            _per_point(3),
        ),
        Column(
            "active",
            np.int8,
            "1 (per point against a hard ground plane: 1 when closed at the end of the step)",
            _per_point(),
            read_as=bool,
        ),
        Column(
            "body_impulse",
            np.float64,
            "N s (columns 0-2: force), N m s (columns 3-5: moment about the node) (per node: the impulse of the "
            "hard contacts between bodies on it, world frame, summed over the steps since the row before)",
            _per_body(lambda model: (int(model.n_nodes), 6)),
        ),
        Column(
            "body_contacts",
            np.int64,
            "1 (hard contacts between bodies closed at the end of the step)",
            _per_body(lambda model: ()),
        ),
    ),
)


def model_defaults() -> dict[str, Any]:
    """Contact's Model fields in a model without contact (a result file written before it)."""
    return {
        "n_contacts": 0,
        "n_pairs": 0,
        **no_contacts(),
        "hard_contacts": no_hard_contacts(),
        "hard_shapes": no_hard_shapes(),
        "hard_excluded": no_hard_excluded(),
    }


def upgrade(fields: dict[str, Any]) -> None:
    """A file written before capsule–capsule pairs holds ``pair_offset`` (n_pairs, 3, 3): body 1's
    point again as its second end (row 3)."""
    offset = fields.get("pair_offset")
    if offset is not None and offset.ndim == 3 and offset.shape[1] == 3:
        fields["pair_offset"] = freeze(np.concatenate([offset, offset[:, :1]], axis=1), offset.dtype.type)


def impulse_spans(time: np.ndarray) -> np.ndarray:
    """The time [s] (n,) each row's ``/hard_contact`` impulses are summed over: since the row
    before; inf at the first row (whose impulses are zero), so that impulse / span is each row's
    mean force, 0 at the first.

    Parameters
    ----------
    time : (n,) ndarray of float
        The rows' times [s].

    Returns
    -------
    (n,) ndarray of float
        The spans [s].
    """
    time = np.asarray(time, dtype=np.float64)
    elapsed = np.diff(time, prepend=time[:1])
    return np.where(elapsed > 0.0, elapsed, np.inf)


def body_contact_forces(result: Any) -> np.ndarray | None:
    """(n, N, 6) the hard body law's mean force [N] and moment about the node [N m] (world
    frame) on every node in every row, from the other bodies' contacts: the row's recorded
    ``hard_contact["body_impulse"]`` (summed over the steps since the row before) over the
    time since that row (0 at the first row); as :func:`kynemapy.run.hard_rows.plane_forces`
    for the ground planes.  None when the file holds no body impulses (no hard contact
    between bodies)."""
    columns = (getattr(result, "groups", None) or {}).get("hard_contact")
    if columns is None or "body_impulse" not in columns:
        return None
    span = impulse_spans(result.time)[:, None, None]  # [s]
    return np.asarray(columns["body_impulse"], dtype=np.float64) / span


def info(result: Any) -> list[tuple[str, str]]:
    """Contact's lines of ``kynemapy info`` (label, text): the compliant points and pairs, the hard
    planes' impulses and the hard body law's, as the file holds them."""
    m, lines = result.model, []
    n_points, n_pairs = int(getattr(m, "n_contacts", 0)), int(getattr(m, "n_pairs", 0))
    if n_points or n_pairs:  # per row from q and v: kynemapy.run.contact_rows
        lines.append(
            (
                "contact",
                f"{plural(n_points, 'point')} on ground planes, {plural(n_pairs, 'body pair')}; "
                "per row (kynemapy.run.contact_rows): gap [m], normal_force [N], friction_force (3) [N], "
                "slip_speed [m/s], contact_energy [J] (in the strain energy above)",
            )
        )
    n_hard = _points(m)
    hc = result.groups.get("hard_contact")  # the hard laws' impulses, recorded with the rows
    if n_hard and hc is not None and "normal_impulse" in hc:
        total = hc["normal_impulse"].sum(axis=1)
        lines.append(
            (
                "hard contact",
                f"{plural(n_hard, 'point')} on hard ground planes (law='hard'); per row "
                "(/hard_contact): normal_impulse [N s], friction_impulse (3) [N s], active"
                + (
                    f"; largest total normal impulse {total.max():.6g} N s, a point active in "
                    f"{int(np.count_nonzero(hc['active'].any(axis=1)))} of {result.committed} rows"
                    if result.committed
                    else ""
                ),
            )
        )
    elif n_hard:
        lines.append(
            (
                "hard contact",
                f"{plural(n_hard, 'point')} on hard ground planes (law='hard'); no impulses in "
                "the rows (a file written before /hard_contact)",
            )
        )
    if hc is not None and "body_impulse" in hc:
        count = hc["body_contacts"]
        lines.append(
            (
                "body contact",
                "hard law; per row (/hard_contact): body_impulse (6) [N s, N m s] per node, body_contacts"
                + (
                    f"; up to {plural(int(count.max()), 'contact')} in a step, largest force impulse on a body "
                    f"{float(np.linalg.norm(hc['body_impulse'][:, :, :3], axis=2).max()):.6g} N s"
                    if result.committed
                    else ""
                ),
            )
        )
    return lines
