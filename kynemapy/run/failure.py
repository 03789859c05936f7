"""Why a step failed, in words a user can act on: the text of a failed step's
:class:`~kynemapy.engine.api.ConvergenceError` (:meth:`Simulation.step`, :meth:`Simulation.run`).

A Newton iteration that does not converge gets its errors' growth and what usually helps
(numerical damping ρ∞ < 1, a smaller h, rotary inertia where a body or a beam has almost none);
a singular iteration matrix gets the nodes without mass that the constraints leave free
(:func:`kynemapy.engine.checks.free_massless_nodes`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kynemapy.engine.api import status_text
from kynemapy.engine.checks import free_massless_nodes
from kynemapy.engine.step import NOT_CONVERGED, NOT_FINITE, SINGULAR
from kynemapy.model import Model

#: a radius of gyration of the rotary inertia below this fraction of the length it belongs to
#: (a beam element's span, the model's extent for a rigid body) is "almost no rotary inertia"
SMALL_GYRATION = 1e-3


def failure_text(sim: Any, status: int, errors: tuple[float, ...]) -> str:
    """The cause of a failed step of ``sim`` (a :class:`kynemapy.Simulation`, its state that of the
    last converged step) with Newton ``errors`` (one per iteration, weighted RMS) and ``status``
    (a :mod:`kynemapy.engine.step` code): the status in words, the errors, and for a divergence
    its growth and what usually helps, for a singular matrix the nodes at fault."""
    text = status_text(status)
    if errors:
        text += f"; Newton errors {', '.join(f'{e:.3g}' for e in errors)}"
    if status in (NOT_CONVERGED, NOT_FINITE):
        text += divergence_hint(sim.model, sim.params.h, sim.params.rho_inf, errors)
    elif status == SINGULAR:
        text += singular_cause(sim)
    return text


def error_growth(errors: tuple[float, ...]) -> str:
    """How the Newton errors of one step grew: ``"the Newton error grew from 3.1 to 2e+13
    (×6.5e+12) in 10 iterations"``, or how far from converging it stayed; '' without errors."""
    finite = [e for e in errors if math.isfinite(e)]
    if not finite:
        return "the Newton error was not finite from the first iteration" if errors else ""
    first, peak, last = finite[0], max(finite), errors[-1]
    n = len(errors)
    if not math.isfinite(last):
        return f"the Newton error grew from {first:.3g} to {last} in {n} iterations"
    if peak > first:
        ratio = f"×{peak / first:.3g}" if first > 0.0 else "from zero"
        return f"the Newton error grew from {first:.3g} to {peak:.3g} ({ratio}) in {n} iterations" + (
            f" and ended at {last:.3g}" if last != peak else ""
        )
    return f"the Newton error fell only from {first:.3g} to {last:.3g} in {n} iterations"


def divergence_hint(model: Model, h: float, rho_inf: float, errors: tuple[float, ...]) -> str:
    """``"; <growth>. What usually helps: ..."``: numerical damping, a smaller h and rotary inertia
    (naming a body or beam element with almost none) for a Newton iteration that does not converge
    at step size ``h`` [s] with spectral radius ``rho_inf``."""
    growth = error_growth(errors)
    damping = (
        "numerical damping (rho_inf < 1, e.g. 0.9; this run has rho_inf = 1, none)"
        if rho_inf >= 1.0
        else f"more numerical damping (a smaller rho_inf; this run has {rho_inf:g})"
    )
    inertia = "rotary inertia where a body or a beam has almost none"
    thin = _least_rotary_inertia(model)
    if thin:
        inertia += f" ({thin})"
    return (
        (f"; {growth}" if growth else "")
        + f". What usually helps: {damping}; a smaller time step (h = {h:g} s now; run(adaptive=True) "
        f"halves it where needed); {inertia}"
    )


def _least_rotary_inertia(model: Model) -> str:
    """The beam element or mass whose rotary inertia is smallest for its length, when it is almost
    none (radius of gyration below :data:`SMALL_GYRATION` of that length), else ''."""
    worst: tuple[float, str] = (SMALL_GYRATION, "")
    if int(model.n_beams):
        m_star = np.asarray(model.beam_qp_m_star)  # (elements, points, 6, 6) per unit length
        x0 = np.asarray(model.x0)
        nodes = np.asarray(model.beam_node)
        for e in range(int(model.n_beams)):
            ends = nodes[e][nodes[e] >= 0]
            span = float(np.linalg.norm(x0[ends[-1], :3] - x0[ends[0], :3]))
            for p in range(int(np.asarray(model.beam_n_qps).reshape(-1)[e])):
                mass = float(m_star[e, p, 0, 0])
                if mass <= 0.0 or span <= 0.0:
                    continue
                radius = math.sqrt(max(float(np.linalg.eigvalsh(m_star[e, p, 3:, 3:])[0]), 0.0) / mass)
                if radius / span < worst[0]:
                    worst = (
                        radius / span,
                        f"beam element {e}: radius of gyration {radius:.3g} m of its sections' rotary "
                        f"inertia, {radius / span:.2g} of its span",
                    )
    positions = np.asarray(model.x0)[:, :3]
    extent = float(np.ptp(positions, axis=0).max()) if positions.shape[0] else 0.0
    if extent > 0.0:
        for k, m_star in enumerate(np.asarray(model.mass_m_star)):
            radius = math.sqrt(max(float(np.linalg.eigvalsh(m_star[3:, 3:])[0]), 0.0) / float(m_star[0, 0]))
            if radius / extent < worst[0]:
                worst = (
                    radius / extent,
                    f"mass {k} on node {int(np.asarray(model.mass_node)[k])}: radius of gyration {radius:.3g} m, "
                    f"{radius / extent:.2g} of the model's extent",
                )
    return worst[1]


def singular_cause(sim: Any) -> str:
    """``"; node 3 has no mass ..."`` when nodes without mass are free to move (the iteration
    matrix is then singular), else '' (redundant or conflicting constraints are named when the
    simulation is made, :func:`kynemapy.engine.checks.check_constraints`)."""
    free = free_massless_nodes(sim.workspace, sim.data)
    if not free:
        return ""
    parts = []
    for node, what in free[:4]:
        parts.append(f"node {node} has no mass (no mass element or beam on it) and its constraints leave it {what}")
    more = f" (and {len(free) - 4} more nodes)" if len(free) > 4 else ""
    return (
        "; "
        + "; ".join(parts)
        + more
        + ": nothing gives that motion inertia; add a mass to the node, or constrain that motion "
        "(e.g. a rigid joint to a body with mass)"
    )
