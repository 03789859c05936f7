"""Analyses about a state: static equilibrium, linearization and modes.

* :func:`static_equilibrium`: the static equilibrium under the loads, by load stepping on the
  engine's static steps (:class:`Equilibrium`, or :class:`StaticEquilibriumError` naming the
  load fraction reached and the residual).
* :func:`linearize`: the mass, damping and stiffness matrices M, C, K and the constraint
  Jacobian B at a state, in the engine's DOF coordinates (:class:`Linearization`), reduced to
  independent coordinates by the null space of B, and the state-space form
  (:class:`StateSpace`).
* :func:`modes`: natural frequencies [Hz, rad/s], damping ratios and mode shapes
  (:class:`Modes`).

See ``docs/modes.md``.
"""

from __future__ import annotations

from kynemapy.analysis.linearize import Linearization, StateSpace, linearize
from kynemapy.analysis.modes import Modes, modes
from kynemapy.analysis.statics import Equilibrium, StaticEquilibriumError, static_equilibrium

__all__ = [
    "Equilibrium",
    "Linearization",
    "Modes",
    "StateSpace",
    "StaticEquilibriumError",
    "linearize",
    "modes",
    "static_equilibrium",
]
