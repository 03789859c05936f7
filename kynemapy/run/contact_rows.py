"""Contact results per output row: :func:`contact_rows`, :func:`contact_energy`.

The contact points' state (gap, normal force, friction force, slip speed) is a function of a
row's positions and velocities alone (compliant contact with regularized Coulomb friction,
docs/contact.md), so the rows of a run, in memory (:meth:`kynemapy.Simulation.rollout`) or read
from a result file (:func:`kynemapy.io.read`), give it back exactly: each row's state is put into
a simulation of the model and its contact tables evaluated as :meth:`kynemapy.Simulation.contacts`
evaluates them (the same compiled kernels, the same numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kynemapy.engine.elements.contact_table import PARAM_EXPONENT, PARAM_K
from kynemapy.model import Model

if TYPE_CHECKING:
    from kynemapy.io.reader import Result
    from kynemapy.run.simulation import Simulation

#: the state fields a row carries that are put into the simulation before the evaluation
_ROW_STATE = ("q", "v", "vd", "a", "lam", "constraint_output")


class ContactRows(NamedTuple):
    """The contact points over R output rows, K of them (:meth:`kynemapy.Simulation.contacts`'s
    arrays, one row each; for body pairs P of them, as :meth:`~kynemapy.Simulation.contact_pairs`)."""

    node: np.ndarray  #: (K,) or (P, 2) int: the node (body) of each point
    shape: np.ndarray  #: (K,) or (P, 2) int: the shape id of each point
    gap: np.ndarray  #: (R, K) [m]: distance to the plane (pair: between surfaces), < 0 penetrating
    active: np.ndarray  #: (R, K) bool: whether the point carries a force
    normal_force: np.ndarray  #: (R, K) [N]: the normal force f_n >= 0
    friction_force: np.ndarray  #: (R, K, 3) [N]: the friction force (pairs: on body 2), world frame
    slip_speed: np.ndarray  #: (R, K) [m/s]: tangential speed of the contact point (active points)


def contact_energy(model: Model, points_gap: np.ndarray, pairs_gap: np.ndarray | None = None) -> np.ndarray:
    """Elastic energy stored in the compliant contacts, per row: the integral of the normal law's
    spring ``k δ^e``, ``Σ k δ^(e+1) / (e + 1)`` over the points that penetrate (``δ = −gap > 0``).

    The damper (``c w δ̇``) stores nothing; the force's cut at zero (``f_n = max(0, ...)``) while
    the damper pulls is not counted either (the energy is the spring's, a function of the state).

    Parameters
    ----------
    model : Model
        The model (its ``contact_param`` and ``pair_param``: k [N/m^e], e).
    points_gap : (R, K) array_like of float
        Gaps of the point–plane contacts [m] (:attr:`ContactRows.gap`).
    pairs_gap : (R, P) array_like of float or None, default None
        Gaps of the body pairs [m]; None: no pairs.

    Returns
    -------
    (R,) ndarray of float
        The energy [J] of each row.

    Raises
    ------
    ValueError
        A gap array whose last axis is not the model's count of points or pairs.
    """
    total = None
    for gap, param, what in (
        (points_gap, model.contact_param, "points_gap"),
        (pairs_gap, model.pair_param, "pairs_gap"),
    ):
        if gap is None:
            continue
        g = np.asarray(gap, dtype=np.float64)
        if g.ndim != 2 or g.shape[1] != param.shape[0]:
            raise ValueError(f"contact_energy: {what} must be (R, {param.shape[0]}), got shape {g.shape}")
        k, e = param[:, PARAM_K], param[:, PARAM_EXPONENT]
        delta = np.maximum(-g, 0.0)
        energy = (k * delta ** (e + 1.0) / (e + 1.0)).sum(axis=1)
        total = energy if total is None else total + energy
    if total is None:
        raise ValueError("contact_energy: give points_gap (and pairs_gap)")
    return total


def _field(rows: Mapping[str, np.ndarray] | Result, name: str) -> np.ndarray | None:
    if isinstance(rows, Mapping):
        return rows.get(name)
    return getattr(rows, name, None)


def contact_rows(sim: Simulation, rows: Mapping[str, np.ndarray] | Result) -> dict[str, ContactRows | np.ndarray]:
    """The contact points at each of R output rows: gaps, forces, slip, and the contact energy.

    Each row's state (``q``, ``v``, ``vd``, ``a``, ``lam``, ``constraint_output``, ``time``) is put
    into ``sim`` and its contacts evaluated (:meth:`kynemapy.Simulation.contacts` and
    :meth:`~kynemapy.Simulation.contact_pairs`); ``sim``'s own state is put back afterwards.  The
    result at a row is that of ``contacts()`` called at that converged state, bit for bit.

    Parameters
    ----------
    sim : Simulation
        A simulation of the rows' model.
    rows : mapping of str to ndarray, or Result
        R output rows: :meth:`kynemapy.Simulation.rollout`'s dict or a result file's
        :class:`kynemapy.io.Result` (:func:`kynemapy.io.read`): ``time`` (R,) [s], ``q``
        (R, N, 7), ``v`` (R, N, 6), ... (the fields above that it has).

    Returns
    -------
    dict
        ``points`` and ``pairs`` (:class:`ContactRows`, over the model's K points and P pairs;
        empty arrays without them) and ``contact_energy`` (R,) [J] (:func:`contact_energy`).

    Raises
    ------
    ValueError
        ``rows`` without ``q`` and ``v``, or of the wrong shape for the model.
    """
    model = sim.model
    nn = model.n_nodes
    fields = {name: _field(rows, name) for name in (*_ROW_STATE, "time")}
    if fields["q"] is None or fields["v"] is None:
        raise ValueError("contact_rows: rows must have 'q' (R, N, 7) and 'v' (R, N, 6)")
    q = np.asarray(fields["q"], dtype=np.float64)
    v = np.asarray(fields["v"], dtype=np.float64)
    if q.ndim != 3 or q.shape[1:] != (nn, 7) or v.shape != (q.shape[0], nn, 6):
        raise ValueError(f"contact_rows: expected q (R, {nn}, 7) and v (R, {nn}, 6), got {q.shape} and {v.shape}")
    n_rows = q.shape[0]
    k, p = model.contact_node.shape[0], model.pair_node.shape[0]
    bufs = {
        which: (
            np.zeros((n_rows, count)),
            np.zeros((n_rows, count)),
            np.zeros((n_rows, count, 3)),
            np.zeros((n_rows, count)),
        )
        for which, count in (("points", k), ("pairs", p))
    }
    state = sim.state
    saved = sim.save_state()
    try:
        for r in range(n_rows if (k or p) else 0):
            for name in _ROW_STATE:
                if fields[name] is not None:
                    getattr(state, name)[...] = fields[name][r]
            if fields["time"] is not None:
                state.time[0] = fields["time"][r]
            for which, count, call in (("points", k, sim.contacts), ("pairs", p, sim.contact_pairs)):
                if count:
                    c = call()
                    gap, normal, friction, slip = bufs[which]
                    gap[r], normal[r], friction[r], slip[r] = c.gap, c.normal_force, c.friction_force, c.slip_speed
    finally:
        sim.restore_state(saved)
    out: dict[str, ContactRows | np.ndarray] = {}
    for which, node, shape in (
        ("points", model.contact_node, model.contact_shape),
        ("pairs", model.pair_node, model.pair_shape),
    ):
        gap, normal, friction, slip = bufs[which]
        out[which] = ContactRows(np.array(node), np.array(shape), gap, normal > 0.0, normal, friction, slip)
    out["contact_energy"] = contact_energy(model, bufs["points"][0], bufs["pairs"][0])
    return out


def plane_contacts(result: Result) -> ContactRows | Any | None:
    """The ground planes' forces at the shapes' points over the rows of a result, for drawing: the
    contact kind's derived rows (:mod:`kynemapy.model.registry.contact`, which ``kynemapy animate``
    and ``kynemapy export`` pass as ``contacts``).

    Parameters
    ----------
    result : kynemapy.io.Result
        A result file's contents (:func:`kynemapy.io.read`).

    Returns
    -------
    ContactRows or HardPlaneForces or None
        The compliant law's points from each row's state (:func:`contact_rows`), else the hard
        planes' recorded impulses over the time between the rows
        (:func:`kynemapy.run.hard_rows.plane_forces`); None without either.
    """
    if int(getattr(result.model, "n_contacts", 0)):
        from kynemapy.run.simulation import Simulation

        return contact_rows(Simulation(result.model, result.params), result)["points"]
    from kynemapy.run.hard_rows import plane_forces

    return plane_forces(result)


__all__ = ["ContactRows", "contact_energy", "contact_rows", "plane_contacts"]
