"""Newton iterations (issue 12): the round-off-floored convergence criterion, time on the step grid,
consistent initial velocities, rejected steps and the minimum step of adaptive runs.

References are independent of the engine: the heavy top against DOP853 on its reduced equations
about the pivot (:func:`kynemapy.validation.kynema_top.reference`), closed forms elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.validation.kynema_top import reference, simulation_model

# ------------------------------------------------------------------ convergence criterion
TOP_T = 0.2  # s: past every stall of Kynema's criterion below (t = 0.0039 ... 0.168 s)
TOP_STEPS = (1e-2, 1e-3, 1e-4, 5e-5, 1e-5, 2e-6, 1e-6)


@pytest.fixture(scope="module")
def top_reference():
    model, node = simulation_model()
    u_ref, _ = reference(np.array([TOP_T]))
    return model, node, u_ref[0]


def _top_error(model, node, u_ref, h, **options):
    sim = kp.Simulation(model, kp.StepParameters(h=h, rho_inf=0.9, max_iter=20, **options))
    iterations = sim.advance(round(TOP_T / h))
    return float(np.abs(sim.state.q[node, :3] - u_ref).max()), iterations


@pytest.mark.parametrize("atol, rtol", [(1e-7, 1e-6), (1e-10, 1e-10)])
def test_roundoff_criterion_converges_at_every_step_size(top_reference, atol, rtol):
    """Kynema's verification tolerances (atol 1e-7, rtol 1e-6) and 1e-10 converge at every h from
    1e-2 to 1e-6 with ``convergence="roundoff"`` (Kynema's criterion stalls at errors 1.3–8 for every
    h <= 5e-5 at 1e-7/1e-6 and for every h <= 1e-3 at 1e-10), and the error against the reduced
    reference is the scheme's: second order, err/h² the same at every h."""
    model, node, u_ref = top_reference
    ratio = []
    for h in TOP_STEPS:
        err, iterations = _top_error(model, node, u_ref, h, atol=atol, rtol=rtol, convergence="roundoff")
        assert iterations.shape == (round(TOP_T / h),)
        ratio.append(err / h**2)
    ratio = np.array(ratio[1:])  # h = 1e-2 is outside the asymptotic range
    assert np.all(np.abs(ratio / ratio[0] - 1.0) < 0.05), ratio


@pytest.mark.parametrize("geometric_stiffness, solver", [(False, "sparse"), (True, "dense"), (True, "sparse")])
def test_roundoff_criterion_either_tangent_either_solver(top_reference, geometric_stiffness, solver):
    model, node, u_ref = top_reference
    for h in (5e-5, 2e-6):
        err, _ = _top_error(
            model, node, u_ref, h, atol=1e-7, rtol=1e-6, convergence="roundoff",
            geometric_stiffness=geometric_stiffness, solver=solver,
        )  # fmt: skip
        assert err < 400.0 * h**2


def test_kynema_criterion_stays_the_default_and_stalls_on_roundoff(top_reference):
    """The default is Kynema's criterion (the regression numbers, iteration counts included, are
    unchanged: tests/test_regression.py); at h = 2e-6 it stalls on the multipliers' round-off."""
    assert kp.StepParameters(h=1e-3).convergence == "kynema"
    model, _, _ = top_reference
    sim = kp.Simulation(model, kp.StepParameters(h=2e-6, rho_inf=0.9, max_iter=20, atol=1e-7, rtol=1e-6))
    with pytest.raises(kp.ConvergenceError) as excinfo:
        sim.advance(round(TOP_T / 2e-6))
    errors = excinfo.value.errors
    assert len(errors) == 20 and min(errors[1:]) > 1.0


def test_convergence_option_is_checked():
    with pytest.raises(ValueError, match="convergence"):
        kp.StepParameters(h=1e-3, convergence="scaled")
