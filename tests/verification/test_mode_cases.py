"""The modes validation case (``kynemapy.validation.modes``) and its closed forms."""

from __future__ import annotations

import numpy as np

from kynemapy.analytic.beams import cantilever_beta_l, cantilever_tip_mass_beta_l
from kynemapy.validation import MODE_CASES, run_case


def test_every_check_of_the_modes_case_passes() -> None:
    result = run_case("modes", quick=False)
    names = " ".join(c.name for c in result.checks)
    words = ("pendulum", "double pendulum", "tip mass μ = 1", "rotating cantilever", "inertial frame", "MBC", "scheme")
    for word in words:
        assert word in names, word
    failed = "\n".join(f"{c.name}: {c.value:.3e} {c.bound_text}" for c in result.failed)
    assert result.passed, failed
    assert MODE_CASES == ("modes",)


def test_tip_mass_frequency_equation() -> None:
    # no tip mass: the cantilever's roots
    np.testing.assert_allclose(cantilever_tip_mass_beta_l(0.0, 4), cantilever_beta_l(4), rtol=1e-14)
    # Blevins, Formulas for natural frequency and mode shape, table 8-8: μ = 1: λ₁ = 1.24792
    assert abs(cantilever_tip_mass_beta_l(1.0, 1)[0] - 1.24792) < 5e-6
    # a heavy tip mass: a spring 3EI/L³ carrying M plus about 0.2357 of the beam (Rayleigh):
    # (βL)⁴ = ω² mL⁴/EI → 3/(μ + 0.2357) to the Rayleigh estimate's error (3e-7 relative at μ = 100)
    mu = 100.0
    assert abs(cantilever_tip_mass_beta_l(mu, 1)[0] ** 4 / (3.0 / (mu + 0.2357)) - 1.0) < 1e-6
