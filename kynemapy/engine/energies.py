"""Energy and momentum of states from Python: :func:`row_invariants`, :func:`energy_and_momentum`.

The compiled kernels are :mod:`kynemapy.engine.invariants`' (what the run's writer fills the
output rows with); these call them for states given as arrays, e.g. the rows of a result file.
"""

from __future__ import annotations

import numpy as np

from kynemapy.engine.invariants import system_invariants
from kynemapy.engine.lookup import entry
from kynemapy.model import Model
from kynemapy.model.registry import kinds


def energy_and_momentum(
    model: Model, q: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kinetic and potential energy, linear and angular momentum of the masses and beams, per row.

    The compiled kernel of the output rows (:mod:`kynemapy.engine.invariants`), one state at a
    time.  For each mass element on node i: ``M = diag(R,R) M* diag(R,R)ᵀ`` with
    ``R = R(q_rot ⊗ r0)``, ``m = M[0,0]`` and the centre-of-mass offset
    ``η = (M[5,1], −M[5,0], M[4,0]) / m``.  Then, summed over masses:

    * kinetic energy ``T = ½ vᵀ M v`` [J];
    * potential energy ``V = −m g·(X + u + η)`` [J] (zero at the world origin);
    * linear momentum ``p = (M v)[0:3] = m (u̇ + ω × η)`` [kg m/s];
    * angular momentum about the world origin ``L = (X + u) × (M v)[0:3] + (M v)[3:6]``
      [kg m²/s], world frame.

    Beams add the same integrands per unit length over their quadrature points.  Springs
    (massless) and constraints carry neither energy nor momentum here; the elastic energy of
    beams, springs and compliant contacts is the output rows' ``strain_energy``
    (:func:`row_invariants`).

    Parameters
    ----------
    model : Model
        The model (masses, beams, reference positions ``x0``, ``gravity``).
    q : (..., N, 7) ndarray [m]
        Displacements (u [m], rotation quaternion).
    v : (..., N, 6) ndarray [m/s]
        Velocities (u̇ [m/s], ω [rad/s]), inertial frame.

    Returns
    -------
    ke : (...,) [J]; pe : (...,) [J]; p : (..., 3) [kg m/s]; L : (..., 3) [kg m²/s].
    """
    out = row_invariants(model, q, v)
    return out["kinetic_energy"], out["potential_energy"], out["linear_momentum"], out["angular_momentum"]


def row_invariants(model: Model, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """The derived fields of output rows (:data:`kynemapy.engine.rows.DERIVED`) at states q, v.

    Computed as the run's writer computes them
    (:func:`kynemapy.engine.invariants.fill_invariants`).

    Parameters
    ----------
    model : Model
        The model the states belong to.
    q : (..., N, 7) array_like of float
        Node displacements ``(u [m], rotation quaternion (w, x, y, z))``, any leading shape.
    v : (..., N, 6) array_like of float
        Node velocities ``(u̇ [m/s], ω [rad/s])``, inertial frame, the same leading shape.

    Returns
    -------
    dict of str to ndarray
        ``kinetic_energy``, ``potential_energy``, ``strain_energy`` (...,) [J],
        ``linear_momentum`` (..., 3) [kg m/s], ``angular_momentum`` (..., 3) [kg m²/s].

    Raises
    ------
    ValueError
        ``q`` or ``v`` of the wrong shape for ``model``.
    """
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    nn = model.n_nodes
    if q.shape[-2:] != (nn, 7) or v.shape[-2:] != (nn, 6) or q.shape[:-2] != v.shape[:-2]:
        raise ValueError(
            f"energy_and_momentum: expected q (..., {nn}, 7) and v (..., {nn}, 6), got {q.shape}, {v.shape}"
        )
    lead = q.shape[:-2]
    qq = np.ascontiguousarray(q.reshape(-1, nn, 7))
    vv = np.ascontiguousarray(v.reshape(-1, nn, 6))
    n = qq.shape[0]
    out = np.zeros((n, 9))  # ke, pe, p (3), L (3), strain
    # the kinds whose energy the row kernel computes from a workspace's tables (springs, contact)
    kind_terms = any(kind.energy.present(model) for kind in kinds() if kind.energy is not None)
    if n and (model.n_beams or kind_terms):
        # the writer's kernel on rows of a workspace's layout (beams, springs and contacts need its tables)
        from kynemapy.engine.api import fill_rows, initial_state  # the engine on first use only
        from kynemapy.engine.data import new_workspace

        workspace = new_workspace(model, 1)
        layout = workspace.row_layout
        data = workspace.data(*initial_state(model))
        rows = np.zeros((min(n, 4096), layout.width))
        oq, ov = layout.offsets["q"], layout.offsets["v"]
        for start in range(0, n, rows.shape[0]):
            stop = min(n, start + rows.shape[0])
            block = rows[: stop - start]
            block[:, oq : oq + 7 * nn] = qq[start:stop].reshape(stop - start, -1)
            block[:, ov : ov + 6 * nn] = vv[start:stop].reshape(stop - start, -1)
            fill_rows(data, block)
            for k, name in enumerate(("kinetic_energy", "potential_energy")):
                out[start:stop, k] = block[:, layout.offsets[name]]
            out[start:stop, 2:5] = block[:, layout.offsets["linear_momentum"] + np.arange(3)]
            out[start:stop, 5:8] = block[:, layout.offsets["angular_momentum"] + np.arange(3)]
            out[start:stop, 8] = block[:, layout.offsets["strain_energy"]]
    elif n and model.mass_node.shape[0]:
        # writable copies: the kernel is compiled (and cached) for plain arrays
        args = (
            np.array(model.mass_node, dtype=np.int64),
            np.array(model.mass_m_star, dtype=np.float64),
            np.array(model.x0, dtype=np.float64),
            np.array(model.gravity, dtype=np.float64),
        )
        s4, s33 = np.zeros((1, 4)), np.zeros((1, 3, 3))
        kernel = entry(system_invariants, (*args, qq[0], vv[0], s4, s33, out[0, :8]))
        for r in range(n):
            kernel(*args, qq[r], vv[r], s4, s33, out[r, :8])
    return {
        "kinetic_energy": out[:, 0].reshape(lead),
        "potential_energy": out[:, 1].reshape(lead),
        "strain_energy": out[:, 8].reshape(lead),
        "linear_momentum": out[:, 2:5].reshape((*lead, 3)),
        "angular_momentum": out[:, 5:8].reshape((*lead, 3)),
    }


__all__ = ["energy_and_momentum", "row_invariants"]
