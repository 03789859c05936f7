"""Distributed loads on beam elements as the node loads they are equivalent to (set-up code).

Kynema's beam residual holds the distributed load per unit length ``F_e`` [N/m, N m/m] at the
quadrature points as ``−∫ φ_i F_e ds = −Σ_k w_k J_k φ_i(ξ_k) F_e(ξ_k)`` for node i.  The load
does not depend on the state (it enters no iteration matrix), so that integral *is* a node
load: :func:`consistent_node_loads` computes it with the element's own quadrature, and adding
the result to ``Simulation.inputs.f`` gives the same equations as a distributed load inside the
element (the sums are taken in another order: equal to round-off).  Loads that follow the beam
(aerodynamic loads in the blade frame) are recomputed from the state before each step.
"""

from __future__ import annotations

import numpy as np

from kynemapy.model import Model


def consistent_node_loads(model: Model, element: int, load: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Node loads equivalent to a distributed load on one beam element.

    Parameters
    ----------
    model : Model
        A built model with beam elements.
    element : int
        The element id (:meth:`kynemapy.ModelBuilder.add_beam_element`).
    load : (6,) ndarray
        A uniform load per unit length, or (Q, 6) one per quadrature point of the
        element (in its quadrature order): force [N/m] and moment [N m/m], inertial frame.

    Returns
    -------
    nodes : (P,) int64 the element's nodes.
    node_loads : (P, 6) force [N] and moment [N m] per node: ``Σ_k w_k J_k φ_i(ξ_k) F_e,k``;
        add them to ``sim.inputs.f[nodes]`` (``np.add.at`` when elements share nodes).
    """
    n_beams = int(getattr(model, "n_beams", 0) or 0)
    if isinstance(element, bool) or not isinstance(element, (int, np.integer)) or not 0 <= int(element) < n_beams:
        raise IndexError(f"consistent_node_loads: unknown beam element {element!r} (the model has {n_beams})")
    e = int(element)
    p = int(model.beam_n_nodes[e])
    q = int(model.beam_n_qps[e])
    arr = np.asarray(load, dtype=np.float64)
    if arr.shape == (6,):
        arr = np.broadcast_to(arr, (q, 6))
    elif arr.shape != (q, 6):
        raise ValueError(
            f"consistent_node_loads: beam element {e}: load must have shape (6,) or ({q}, 6) "
            f"(one per quadrature point), got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"consistent_node_loads: beam element {e}: load has values that are not finite")
    weight = np.asarray(model.beam_qp_weight[e, :q]) * np.asarray(model.beam_qp_jacobian[e, :q])  # (Q,) [m]
    phi = np.asarray(model.beam_shape_interp[e, :p, :q])  # (P, Q)
    return np.array(model.beam_node[e, :p], dtype=np.int64), (phi * weight[None, :]) @ arr
