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
* :func:`steady_rotation`: the relative equilibrium of a structure turning at a constant Ω
  (:class:`SteadyRotation`); linearized and its modes taken in the frame turning with it.
* :func:`campbell`: those modes over rotor speed, tracked by :func:`mac` (:class:`Campbell`:
  CSV table, PNG plot with nP lines).
* :func:`scheme_error` (and :meth:`Modes.scheme_error`): the generalized-α scheme's own
  numerical damping and period error at a mode's ωh, apart from the physics.
* :func:`mbc_modes`: fixed-frame modes of an isotropic rotor of three or more blades by
  multi-blade coordinates (the Coleman transform; :class:`RotorModes`).

See ``docs/modes.md``.
"""

from __future__ import annotations

from kynemapy.analysis.campbell import Campbell, campbell, mac
from kynemapy.analysis.linearize import Linearization, StateSpace, linearize
from kynemapy.analysis.mbc import RotorModes, coleman_matrices, mbc_modes
from kynemapy.analysis.modes import Modes, modes
from kynemapy.analysis.rotating import SteadyRotation, steady_rotation
from kynemapy.analysis.scheme import SchemeError, amplification_matrix, scheme_error
from kynemapy.analysis.statics import Equilibrium, StaticEquilibriumError, static_equilibrium

__all__ = [
    "Campbell",
    "Equilibrium",
    "Linearization",
    "Modes",
    "RotorModes",
    "SchemeError",
    "StateSpace",
    "StaticEquilibriumError",
    "SteadyRotation",
    "amplification_matrix",
    "campbell",
    "coleman_matrices",
    "linearize",
    "mac",
    "mbc_modes",
    "modes",
    "scheme_error",
    "static_equilibrium",
    "steady_rotation",
]
