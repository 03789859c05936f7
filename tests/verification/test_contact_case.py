"""The contact validation case (``kynemapy.validation.contact``): every check passes, and its
closed forms are right."""

from __future__ import annotations

import math

from kynemapy.validation import CONTACT_CASES, run_case
from kynemapy.validation import contact as case


def test_every_check_of_the_contact_case_passes() -> None:
    result = run_case("contact", quick=True)
    names = " ".join(c.name for c in result.checks)
    for word in ("bounce", "apex", "sticks", "slides", "thrown ball", "5/7 g sin θ", "below the plane"):
        assert word in names, word
    failed = "\n".join(f"{c.name}: {c.value:.3e} {c.bound_text}" for c in result.failed)
    assert result.passed, failed
    assert CONTACT_CASES == ("contact",)


def test_the_sliding_ball_closed_form() -> None:
    # while sliding: v0 t − μ g t²/2; the rolling speed 5/7 v0 is reached at t* = 2 v0/(7 μ g),
    # where the sliding velocity v0 − μ g t* equals it
    t_star = 2.0 * case.V0 / (7.0 * case.THROW_MU * case.G)
    assert math.isclose(case.V0 - case.THROW_MU * case.G * t_star, 5.0 / 7.0 * case.V0, rel_tol=1e-14)
    t = 0.5 * t_star
    assert math.isclose(case.sliding_ball_travel(t), case.V0 * t - 0.5 * case.THROW_MU * case.G * t * t, rel_tol=1e-14)
    # after t*: the travel grows at 5/7 v0 (a difference quotient of the closed form)
    dt = 1e-3
    slope = (case.sliding_ball_travel(t_star + 2 * dt) - case.sliding_ball_travel(t_star + dt)) / dt
    assert math.isclose(slope, 5.0 / 7.0 * case.V0, rel_tol=1e-9)


def test_apexes_are_found_in_a_made_up_run() -> None:
    import numpy as np

    # a ball at 1 m falling at 1 m/s per step, bouncing at step 3, apex 0.5 at step 5, down again
    run = {
        "t": np.arange(8.0),
        "gap": np.array([1.0, 0.6, 0.2, 0.0, 0.3, 0.5, 0.4, 0.1]),
        "vz": np.array([0.0, -1.0, -2.0, 1.5, 1.0, 0.0, -0.5, -1.0]),
    }
    found = case.apexes(run)
    assert found == [(0.5, 1.5**2 / (2.0 * case.G), 3.0)]  # the apex, z + v²/2g after the impact, the time
