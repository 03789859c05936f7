"""The hard contact laws' columns of the output rows (the group ``/hard_contact`` of a result file).

The compliant law's forces are functions of each row's state (:mod:`kynemapy.run.contact_rows`
computes them again from ``q`` and ``v``); the hard laws' impulses are not: they are the velocity
jumps' of each step, known only right after it.  Each row holds the impulses **summed over the
steps since the row before** (:meth:`kynemapy.run.joint_stops.JointStops.keep_sums`), so no
impact between two rows is lost, and the contacts closed at the end of its last step.  A model with hard contact
steps one compiled call per step (:meth:`kynemapy.Simulation.advance_rows` with ``on_row``), so
the run driver (:mod:`kynemapy.run.loop`) records these columns beside each row it records, into
the background writer's buffers (:class:`kynemapy.run.writer.BackgroundWriter`), and the file keeps
them with the rows (checksummed, continued by a resumed run; names, shapes and units:
:data:`kynemapy.io.layout.HARD_CONTACT_FIELDS`):

* points against hard ground planes (K of them, ``model.hard_contacts``' rows, the order of
  :meth:`kynemapy.Simulation.contact_impulses`): ``normal_impulse`` (K,) [N s],
  ``friction_impulse`` (K, 3) [N s] on the body in the world frame (the two components along the
  plane's tangents t₁, t₂ times those tangents), ``active`` (K,) (1: closed at the end of the step);
* the hard body law's contacts (:meth:`kynemapy.Simulation.body_impulses`, C of them, a number that
  changes from step to step) summed per body: ``body_impulse`` (N, 6), the force [N s] and the
  moment about the body's node [N m s] in the world frame, and ``body_contacts``, C.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np


def body_impulse_sums(record: Mapping[str, np.ndarray], position: np.ndarray, out: np.ndarray) -> int:
    """Sum the impulses of the hard body law's contacts of one step per body.

    Contact c pushes body B (``node_b``) with ``Λ_N n + Λ_T1 t₁ + Λ_T2 t₂`` at its ``point`` and
    body A (``node_a``) with the opposite; each body's moment is taken about its node.

    Parameters
    ----------
    record : Mapping[str, ndarray]
        The step's contacts as :meth:`kynemapy.Simulation.body_impulses` gives them: ``node_a``,
        ``node_b`` (C,) int, ``point`` (C, 3) [m], ``normal`` (C, 3), ``tangents`` (C, 2, 3),
        ``normal_impulse`` (C,) [N s], ``friction_impulse`` (C, 2) [N s].
    position : (N, 3) ndarray of float
        The nodes' world positions [m] (``X + u``) at the end of the step.
    out : (N, 6) ndarray of float
        Out: per node, the force [N s] (columns 0-2) and the moment about the node [N m s]
        (columns 3-5) of the contacts on it, world frame (overwritten).

    Returns
    -------
    int
        The number of contacts C.
    """
    out[...] = 0.0
    normal = np.asarray(record["normal_impulse"])
    count = int(normal.shape[0])
    if count == 0:
        return 0
    force = normal[:, None] * record["normal"] + np.einsum("cj,cjs->cs", record["friction_impulse"], record["tangents"])
    point = np.asarray(record["point"])
    for nodes, sign in ((np.asarray(record["node_b"]), 1.0), (np.asarray(record["node_a"]), -1.0)):
        on = sign * force
        np.add.at(out[:, :3], nodes, on)
        np.add.at(out[:, 3:], nodes, np.cross(point - position[nodes], on))
    return count


class HardRowRecorder:
    """Writes the hard-contact columns of a row: the impulses summed over the steps since the row
    before (:meth:`kynemapy.run.joint_stops.JointStops.keep_sums`, started here), and the
    contacts closed at the end of the last step.

    Parameters
    ----------
    sim : Simulation
        The simulation (with hard contact: its :attr:`~kynemapy.Simulation.joint_stops`).

    Notes
    -----
    Called as ``recorder(columns, row)`` with ``columns`` a dict of the ``/hard_contact``
    columns' arrays (a block's, ``(rows, ...)`` each; the keys the file has), right after the
    row is recorded; the sums then restart from zero.  A run's first row holds the steps taken
    since the recorder was made (none for a new file's initial row: zeros).
    """

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        stops = sim.joint_stops
        self._contacts = None if stops is None else stops.contacts
        self._stops = stops
        if stops is not None:
            stops.keep_sums()

    def __call__(self, columns: Mapping[str, np.ndarray], row: int) -> None:
        sums = self._stops.take_sums()
        if "normal_impulse" in columns:
            con = self._contacts
            assert con is not None
            columns["normal_impulse"][row] = sums["normal_impulse"]
            columns["friction_impulse"][row] = sums["friction_impulse"]
            columns["active"][row] = con.active
        if "body_impulse" in columns:
            columns["body_impulse"][row] = sums["body_impulse"]
            columns["body_contacts"][row] = np.asarray(self._stops.bodies.last["normal_impulse"]).shape[0]


class HardPlaneForces(NamedTuple):
    """The points against hard ground planes over R result rows (K points): their geometry and the
    mean force since the row before (the recorded impulse over the time between the rows), for drawing
    (:func:`kynemapy.post.animate.contact_arrows`, :func:`kynemapy.io.vtkhdf.write_vtkhdf`)."""

    node: np.ndarray  #: (K,) int: the node of each point
    shape: np.ndarray  #: (K,) int: its shape id
    offset: np.ndarray  #: (K, 3) [m]: the sphere's centre from the node, body frame at the reference
    radius: np.ndarray  #: (K,) [m]: the sphere's radius (0 for a box corner)
    normal: np.ndarray  #: (K, 3): the unit normal of the point's plane
    normal_force: np.ndarray  #: (R, K) [N]: normal impulse over the time since the row before (0 at row 0)
    friction_force: np.ndarray  #: (R, K, 3) [N]: the same of the friction, on the body, world frame


def plane_forces(result: Any) -> HardPlaneForces | None:
    """The hard planes' points of a result, with the mean force over the time since each row's
    predecessor.

    Parameters
    ----------
    result : kynemapy.io.Result
        A result whose model has points against hard ground planes (``model.hard_contacts``).

    Returns
    -------
    HardPlaneForces or None
        None when the model has no such points or the file holds no ``/hard_contact`` impulses
        (written before they existed).  A row's force is its impulse (summed over the steps since
        the row before) over the time since that row (:func:`kynemapy.io.layout.impulse_spans`):
        the contact force where it rests, the mean force over the interval at an impact; 0 at the
        first row.
    """
    table = np.asarray(getattr(result.model, "hard_contacts", np.zeros((0, 13))), dtype=np.float64)
    columns = result.hard_contact
    if table.shape[0] == 0 or columns is None or "normal_impulse" not in columns:
        return None
    from kynemapy.io.layout import impulse_spans  # (here: the io package imports h5py)

    span = impulse_spans(result.time)[:, None]  # [s] since the row before (inf at the first)
    return HardPlaneForces(
        node=table[:, 0].astype(np.int64),
        shape=table[:, 1].astype(np.int64),
        offset=table[:, 3:6].copy(),
        radius=table[:, 6].copy(),
        normal=table[:, 7:10].copy(),
        normal_force=np.asarray(columns["normal_impulse"], dtype=np.float64) / span,
        friction_force=np.asarray(columns["friction_impulse"], dtype=np.float64) / span[:, :, None],
    )


__all__ = ["HardPlaneForces", "HardRowRecorder", "body_impulse_sums", "plane_forces"]
