"""The flexible-beam validation cases (``kynemapy.validation.BEAM_CASES``): every check of every
case passes, each check list covers what the case is about, and the closed forms of
``kynemapy.analytic.beams`` hold against independent evaluations (numerical integration, root
equations).  The cases' own checks are the ones ``kynemapy validate`` reports.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kynemapy.analytic import beams as ab
from kynemapy.cli import main
from kynemapy.validation import ALL_CASES, BEAM_CASES, run_case

#: what each case's checks must mention (a case cannot silently lose a check)
EXPECTED = {
    "beam_rollup": ("tip position", "tip rotation", "spectral", "half circle", "Kynema's assertion"),
    "beam_tip_load": ("along z", "along y", "rotation", "P²"),
    "beam_frequencies": ("βL roots", "mode 1", "mode 2", "mode 3", "shear", "order 12"),
    "beam_beamdyn_dynamic": ("Kynema's acceptance", "u_z", "u_x", "u_y"),
    "beam_energy": ("energy", "angular-momentum", "linear momentum"),
}


@pytest.mark.parametrize("name", BEAM_CASES)
def test_every_check_of_the_beam_case_passes(name: str) -> None:
    result = run_case(name, quick=False)
    assert result.checks, name
    names = " ".join(c.name for c in result.checks)
    for word in EXPECTED[name]:
        assert word in names, f"{name}: no check mentions {word!r}"
    failed = "\n".join(f"{c.name}: {c.value:.3e} {c.bound_text}" for c in result.failed)
    assert result.passed, f"{name}: failed checks\n{failed}"


@pytest.mark.parametrize("name", ["beam_rollup", "beam_energy"])
def test_quick_beam_cases_pass(name: str) -> None:
    result = run_case(name, quick=True)
    assert result.quick and result.passed, [c.name for c in result.failed]


def test_beam_cases_are_run_by_validate(tmp_path) -> None:
    assert set(BEAM_CASES) <= set(ALL_CASES)
    out = tmp_path / "report"
    assert main(["validate", "--quick", "--case", "beam_tip_load", "--out", str(out), "--no-figures"]) == 0
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "Timoshenko" in text and "FAIL" not in text


def test_cantilever_roots_satisfy_the_frequency_equation() -> None:
    roots = ab.cantilever_beta_l(6)
    assert np.all(np.abs(1.0 + np.cos(roots) * np.cosh(roots)) <= 1e-9 * np.cosh(roots))
    # one root per interval ((2n − 1)π/2 asymptotically), none skipped
    np.testing.assert_allclose(roots[2:], (2 * np.arange(3, 7) - 1) * math.pi / 2, atol=1e-3)
    np.testing.assert_allclose(roots[:3], [1.87510407, 4.69409113, 7.85475744], atol=5e-9)
    # ω₁ for steel-like numbers: (βL)² √(EI/(mL⁴))
    assert ab.euler_bernoulli_frequencies(2.0, 8.0, 2.0)[0] == pytest.approx(roots[0] ** 2 * math.sqrt(8.0 / 32.0))


def test_rollup_closed_form_against_integrated_tangent() -> None:
    """x(L) = ∫₀ᴸ R_y(κs) e_x ds by Gauss–Legendre quadrature, for several moments."""
    xi, w = np.polynomial.legendre.leggauss(60)
    for moment in (-2.0 * math.pi * 3.0 / 5.0, -1.3, 0.7, math.pi * 3.0 / 5.0):
        u, R = ab.tip_moment_rollup(5.0, 3.0, moment)
        kappa = moment / 3.0
        s = 2.5 * (xi + 1.0)
        tip = 2.5 * np.array([np.sum(w * np.cos(kappa * s)), 0.0, np.sum(w * -np.sin(kappa * s))])
        np.testing.assert_allclose(u, tip - np.array([5.0, 0.0, 0.0]), atol=1e-12)
        theta = kappa * 5.0
        np.testing.assert_allclose(R @ np.array([1.0, 0.0, 0.0]), [math.cos(theta), 0.0, -math.sin(theta)], atol=1e-14)
    u, R = ab.tip_moment_rollup(10.0, 86.9e3, -2.0 * math.pi * 86.9e3 / 10.0)
    np.testing.assert_allclose(u, [-10.0, 0.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(R, np.eye(3), atol=1e-14)


def test_timoshenko_deflection_from_the_differential_equations() -> None:
    """EI θ′ = P(L − s), w′ = θ + P/κGA integrated by quadrature gives δ = PL³/3EI + PL/κGA."""
    L, ei, kga, P = 2.0, 5.0, 40.0, 0.3
    xi, w = np.polynomial.legendre.leggauss(8)
    s = 0.5 * L * (xi + 1.0)
    theta = P * (L * s - 0.5 * s**2) / ei
    delta = 0.5 * L * np.sum(w * (theta + P / kga))
    assert ab.timoshenko_tip_deflection(L, ei, kga, P) == pytest.approx(delta, rel=1e-14)
    assert ab.timoshenko_tip_rotation(L, ei, P) == pytest.approx(P * L**2 / (2 * ei), rel=1e-15)


def test_mode_shape_derivatives_and_shear_factor() -> None:
    """φ″, φ‴ against finite differences of φ; φ satisfies the clamped/free conditions; r_n
    scales as 1/L² and approaches β_n² for high modes (end layers aside)."""
    L = 1.5
    for bl in ab.cantilever_beta_l(3):
        b = bl / L
        sigma = (math.cosh(bl) + math.cos(bl)) / (math.sinh(bl) + math.sin(bl))

        def phi(s, b=b, sigma=sigma):
            return np.cosh(b * s) - np.cos(b * s) - sigma * (np.sinh(b * s) - np.sin(b * s))

        s = np.linspace(0.1, 1.4, 7)
        d = 1e-3
        fd2 = (phi(s + d) - 2 * phi(s) + phi(s - d)) / d**2
        fd3 = (phi(s + 2 * d) - 2 * phi(s + d) + 2 * phi(s - d) - phi(s - 2 * d)) / (2 * d**3)
        d2, d3 = ab.mode_shape_derivatives(float(bl), L, s)
        scale2, scale3 = b**2 * np.abs(phi(s)).max(), b**3 * np.abs(phi(s)).max()
        assert np.abs(d2 - fd2).max() < 1e-5 * scale2 and np.abs(d3 - fd3).max() < 1e-4 * scale3
        e2, e3 = ab.mode_shape_derivatives(float(bl), L, np.array([L]))
        assert abs(e2[0]) < 1e-9 * b**2 * 10 and abs(e3[0]) < 1e-9 * b**3 * 10  # free end: no moment, no shear
    r = ab.shear_frequency_factor(1.0, 6)
    bl = ab.cantilever_beta_l(6)
    excess = r / bl**2 - 1.0
    assert np.all(np.diff(excess[1:]) < 0.0) and excess[-1] < 0.15
    np.testing.assert_allclose(ab.shear_frequency_factor(2.0, 3), r[:3] / 4.0, rtol=1e-12)


def test_beam_invariants_strain_energy_of_the_rollup() -> None:
    """The numpy invariants of ``beam_energy`` on the static full circle: U = ½ M² L/EI."""
    from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points
    from kynemapy.validation import beam_rollup
    from kynemapy.validation.beam_energy import beam_invariants

    order = 14
    _, q_all, _, s, x0 = beam_rollup._solve(order, beam_rollup.MOMENT)
    v = np.zeros((1, len(s), 6))
    _, strain, lin, ang = beam_invariants(
        q_all[None], v, x0, (tuple(range(order + 1)),), beam_rollup.LENGTH, beam_rollup.M_STAR,
        beam_rollup.C_STAR, gauss_quadrature(order + 1), gll_points(order),
    )  # fmt: skip
    exact = 0.5 * beam_rollup.MOMENT**2 * beam_rollup.LENGTH / beam_rollup.EI
    assert strain[0] == pytest.approx(exact, rel=1e-8)
    assert np.all(lin == 0.0) and np.all(ang == 0.0)
