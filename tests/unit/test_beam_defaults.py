"""A cantilever built with ``add_beam``'s defaults and a clamped root runs (issue 27, item 4).

Two sections and order 10 gave Kynema's trapezoidal rule on the two stations: 2 quadrature
points for 11 nodes, so singular mass and stiffness matrices, and ``Simulation(...)`` failed on
the consistent initial accelerations.  The default now refines the rule until every element
has as many points as nodes; an explicit under-integrated rule says why the matrix is singular.
The refined beam is checked against Timoshenko's closed form: the static tip deflection under a
tip load P is P L³ / (3 EI) + P L / GA (bending and shear; the shear part is 0.75 % here).
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp

M_STAR = np.diag([1.0, 1.0, 1.0, 0.1, 0.05, 0.05])
EI = 1e4  # N m², both bending axes
GA = 1e6  # N, both shear directions
C_STAR = np.diag([1e7, GA, GA, 2e4, EI, EI])
L = 2.0


def _cantilever(**kwargs: object) -> tuple[kp.Model, object]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = b.add_beam([(0, 0, 0), (L, 0, 0)], [0, 1], [M_STAR, M_STAR], [C_STAR, C_STAR], **kwargs)
    b.add_fixed_bc(beam.nodes[0])
    return b.build(), beam


def test_the_default_rule_integrates_every_element_and_the_cantilever_runs() -> None:
    model, beam = _cantilever()
    assert model.beam_qp_weight.shape[1] >= len(beam.nodes)  # 11 nodes: at least 11 points
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3))  # consistent initial accelerations
    assert sim.step().converged
    np.testing.assert_allclose(sim.state.vd, 0.0, atol=1e-9)  # at rest, unloaded: stays at rest


def test_kynemas_rule_is_kept_when_it_integrates() -> None:
    s = np.linspace(0.0, 1.0, 12)
    b = kp.ModelBuilder()
    b.add_beam([(0, 0, 0), (L, 0, 0)], s, [M_STAR] * 12, [C_STAR] * 12)
    assert b.build().beam_qp_weight.shape[1] == 12  # the trapezoidal rule on the 12 stations, unrefined


def test_the_refined_cantilever_has_the_timoshenko_tip_deflection() -> None:
    model, beam = _cantilever()
    load = 10.0  # N, along z at the tip
    sim = kp.Simulation(model, kp.StepParameters(h=1.0, dynamic=False, max_iter=50, atol=1e-12, rtol=1e-10))
    sim.set_load(beam.nodes[-1], force=(0.0, 0.0, load), moment=(0.0, 0.0, 0.0))
    assert sim.step().converged
    expected = load * L**3 / (3.0 * EI) + load * L / GA
    # small deflection (1.3e-3 of L): the geometrically exact beam agrees to its square
    assert sim.state.q[beam.nodes[-1], 2] == pytest.approx(expected, rel=2e-5)


def test_an_explicitly_under_integrated_beam_names_the_cause() -> None:
    model, _ = _cantilever(section_refinement=0)
    with pytest.raises(kp.ConvergenceError, match=r"beam element 0 has 2 quadrature points for 11 nodes"):
        kp.Simulation(model, kp.StepParameters(h=1e-3))
