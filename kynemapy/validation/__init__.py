"""Validation against the seed benchmark cases: one module per case, one implementation of
each check shared by the report (``kynemapy validate``), the example scripts and the tests.

Each case module exposes ``run(quick: bool) -> CaseResult`` (tables, figure data and a list of
:class:`Check`) and ``plot(result, directory) -> [(png name, caption)]`` (matplotlib, optional).
References are independent of the code under test: closed forms (``kynemapy.analytic``) or
tight scipy integrations (:mod:`kynemapy.validation.reference`).

    simo_wong    seed 000  Simo–Wong heavy top: H(t), symmetry axis, drift, every scheme
    kynema_top   seed 001  Kynema heavy top: convergence of u₃(t = 2), Kynema's R2 run
    abaqus       seed 002  ABAQUS 1.3.6: force-free symmetric body, forced top cases 1 and 2
    vilmart      seed 003  Vilmart's free body: invariants, errors, principal axes
    boxes        seed 004  Gazebo Boxes: benchmark metrics over dt, published engines beside
    double_four_bar IFToMM  double four-bar through its singular positions, reduced reference

The flexible-beam cases (:data:`BEAM_CASES`, run by ``kynemapy validate`` after the seed
cases; their tests are ``tests/verification/test_beam_cases.py``):

    beam_rollup           tip moment 2πEI/L rolls a cantilever into a circle; spectral convergence
    beam_tip_load         small tip load against Timoshenko theory
    beam_frequencies      cantilever bending frequencies against Euler–Bernoulli (modal solve)
    beam_beamdyn_dynamic  Kynema's dynamic composite beam against its BeamDyn CSV
    beam_iea15_blade      Kynema's IEA 15 MW blade under a tip load against its BeamDyn CSV
    beam_energy           free-flying beam: energy and momenta, convergence order in h

The modes cases (:data:`MODE_CASES`; tests ``tests/verification/test_mode_cases.py``):

    modes                 pendulums, cantilevers (tip mass), rotating cantilever, sleeping top,
                          3-blade rotor (multi-blade coordinates), the scheme's period error

The contact cases (:data:`CONTACT_CASES`; tests ``tests/verification/test_contact_case.py``):

    contact               hard contact: bounces (Newton's law, apexes e^(2k) h₀), a box sticking
                          and sliding on inclines (Coulomb), a thrown ball reaching rolling at
                          5/7 v₀, a ball rolling down an incline at 5/7 g sin θ
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kynemapy.validation.common import CaseResult, Check, Table, check

#: the rigid-body validation cases (module names under ``kynemapy.validation``)
CASES: tuple[str, ...] = ("simo_wong", "kynema_top", "abaqus", "vilmart", "boxes", "double_four_bar")
#: the flexible-beam verification cases
BEAM_CASES: tuple[str, ...] = (
    "beam_rollup",
    "beam_tip_load",
    "beam_frequencies",
    "beam_beamdyn_dynamic",
    "beam_iea15_blade",
    "beam_energy",
)
#: the linearization and modes cases
MODE_CASES: tuple[str, ...] = ("modes",)
#: the contact cases
CONTACT_CASES: tuple[str, ...] = ("contact",)
#: every case ``kynemapy validate`` runs by default
ALL_CASES: tuple[str, ...] = CASES + BEAM_CASES + MODE_CASES + CONTACT_CASES


def case_module(name: str) -> ModuleType:
    """The module of a validation case.

    Parameters
    ----------
    name : str
        The case, one of :data:`ALL_CASES`.

    Returns
    -------
    module
        ``kynemapy.validation.<name>``, with its ``run(quick=False)``.

    Raises
    ------
    ValueError
        An unknown case.
    """
    if name not in ALL_CASES:
        raise ValueError(f"unknown validation case {name!r}; cases: {', '.join(ALL_CASES)}")
    return importlib.import_module(f"kynemapy.validation.{name}")


def run_case(name: str, quick: bool = False) -> CaseResult:
    """Run one validation case.

    Parameters
    ----------
    name : str
        The case, one of :data:`ALL_CASES`.
    quick : bool, default False
        Run the case's shorter ``--quick`` subset (the same checks and bounds).

    Returns
    -------
    CaseResult
        Its tables, checks and figures.
    """
    return case_module(name).run(quick=quick)


__all__ = [
    "ALL_CASES",
    "BEAM_CASES",
    "CASES",
    "CONTACT_CASES",
    "MODE_CASES",
    "CaseResult",
    "Check",
    "Table",
    "case_module",
    "check",
    "run_case",
]
