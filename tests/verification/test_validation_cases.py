"""The validation cases (``kynemapy.validation``): every check of every case passes, the closed
forms agree with tight scipy integrations, and ``kynemapy validate`` writes its report and sets
its exit status.  The cases' checks are the ones the report prints (one implementation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kynemapy.analytic import LagrangeTop, free_body_momentum, symmetric_free_body
from kynemapy.cli import main
from kynemapy.validation import CASES, CaseResult, check, run_case
from kynemapy.validation.reference import rigid_body_reference, rodrigues

#: every case, and what its checks must cover (a case cannot silently lose a scheme or a bound)
EXPECTED = {
    "simo_wong": ("RIG_POS", "RIG_NEG", "RIG_IMP", "LIEMID", "splitting", "DMV", "generalized-α", "drifts"),
    "kynema_top": ("order", "R2"),
    "abaqus": ("force-free", "case 1", "case 2", "turning-angle", "precession period", "generalized-α"),
    "vilmart": ("RIG_POS", "LIEMID", "DMV", "exact flow vs DOP853", "Jacobi", "generalized-α", "|Q y − y0|"),
    "boxes": ("simple", "complex", "generalized-α", "rotation-angle", "angular-momentum"),
    "double_four_bar": ("h = 0.01", "h = 0.005", "h = 0.001", "h = 0.0001", "order", "exact tangent", "Exudyn"),
}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "boxes" else n for n in CASES], ids=list(CASES)
)
def test_every_check_of_the_case_passes(name: str) -> None:
    result = run_case(name, quick=False)
    assert result.checks, name
    names = " ".join(c.name for c in result.checks)
    for word in EXPECTED[name]:
        assert word in names, f"{name}: no check mentions {word!r}"
    failed = "\n".join(f"{c.name}: {c.value:.3e} {c.bound_text}" for c in result.failed)
    assert result.passed, f"{name}: failed checks\n{failed}"


@pytest.mark.parametrize(("case", "wx", "published"), [(1, 0.5, (17.88, 24.32)), (2, 0.0, (20.0, 21.76))])
def test_lagrange_top_closed_form_against_dop853(case: int, wx: float, published: tuple[float, float]) -> None:
    """θ(t) (Jacobi sn), φ(t) and the figure axis of the ABAQUS tops against DOP853 at 1e-13."""
    R0 = rodrigues(np.array([math.radians(20.0), 0.0, 0.0]))
    W0 = np.array([wx, 0.0, 50.0])
    top = LagrangeTop.from_initial_state(5.0, 1.0, 20.0, R0, R0 @ W0)
    t = np.linspace(0.0, 3.0, 601)
    R_ref, _ = rigid_body_reference((5.0, 5.0, 1.0), R0, W0, 3.0, (0, 0, -20.0), (0, 0, 1.0), 1e-13, 1e-13)(t)
    n_ref = R_ref[:, :, 2]
    assert np.abs(top.theta(t) - np.arccos(n_ref[:, 2])).max() <= 1e-10
    assert np.abs(top.figure_axis(t) - n_ref).max() <= 1e-10
    # the turning angles ABAQUS prints (two decimals), and u stays between them
    lo, hi = (math.degrees(a) for a in top.turning_angles)
    assert abs(lo - published[0]) <= 0.01 and abs(hi - published[1]) <= 0.01
    assert top.u1 - 1e-15 <= n_ref[:, 2].min() and n_ref[:, 2].max() <= top.u2 + 1e-12
    # a fast top: the mean precession period is near the fast-top approximation 2π I3 ω3/(M g l)
    assert top.precession_period == pytest.approx(top.fast_top_precession_period, rel=0.05)


@pytest.mark.parametrize(
    ("w_body", "w_vertical"),
    [((-0.5, 0.0, 50.0), 0.0), ((0.0, 0.0, 50.0), 3.0)],
    ids=["u-increasing", "at-the-lower-turning-point"],
)
def test_lagrange_top_phase_of_every_start(w_body, w_vertical) -> None:
    """Starts with u̇ > 0, and at the lower turning value (fast precession: the top rises), against DOP853."""
    R0 = rodrigues(np.array([math.radians(20.0), 0.0, 0.0]))
    omega0 = R0 @ np.array(w_body) + np.array([0.0, 0.0, w_vertical])
    top = LagrangeTop.from_initial_state(5.0, 1.0, 20.0, R0, omega0)
    t = np.linspace(0.0, 3.0, 601)
    reference = rigid_body_reference((5.0, 5.0, 1.0), R0, R0.T @ omega0, 3.0, (0, 0, -20.0), (0, 0, 1.0), 1e-13, 1e-13)
    R_ref, _ = reference(t)
    assert np.abs(top.theta(t) - np.arccos(R_ref[:, 2, 2])).max() <= 1e-10
    assert np.abs(top.figure_axis(t) - R_ref[:, :, 2]).max() <= 1e-10
    if w_vertical:  # θ(0) = 20° is the largest inclination: u0 is the lower root
        assert top.u1 == pytest.approx(math.cos(math.radians(20.0)), abs=1e-14) and top.u2 > top.u1 + 0.04


def test_symmetric_free_body_closed_form_against_dop853() -> None:
    J = np.array([1.0, 1.0, 2.0])
    R0 = rodrigues(np.array([0.3, -0.2, 0.5]))
    W0 = np.array([0.25, 0.1, 6.268])
    t = np.linspace(0.0, 2.0, 201)
    R, W = symmetric_free_body(J, R0, W0, t)
    R_ref, W_ref = rigid_body_reference(J, R0, W0, 2.0, rtol=1e-13, atol=1e-14)(t)
    assert np.abs(R - R_ref).max() <= 1e-11
    assert np.abs(W - W_ref).max() <= 1e-11


@pytest.mark.parametrize(
    ("inertia", "y0"),
    [
        ((0.376, 0.627, 1.0), (0.0, 0.6, -0.8)),  # Vilmart: circulation about axis 3
        ((1.0, 2.0, 3.0), (0.9, 0.4, 0.3)),  # about axis 1
        ((1.0, 2.0, 3.0), (-0.5, -0.7, 0.2)),  # about axis 1, negative y1
        ((1.0, 2.0, 3.0), (0.3, -0.4, -1.5)),  # about axis 3, negative y3
    ],
)
def test_jacobi_free_body_momentum_against_dop853(inertia, y0) -> None:
    inertia, y0 = np.array(inertia), np.array(y0)
    t = np.linspace(0.0, 40.0, 2001)
    _, W_ref = rigid_body_reference(inertia, np.eye(3), y0 / inertia, 40.0, rtol=1e-13, atol=1e-14)(t)
    assert np.abs(free_body_momentum(inertia, y0, t) - W_ref * inertia).max() <= 1e-10


def test_check_relations() -> None:
    assert check("a", 1.0, 1.0).passed and not check("a", 1.0 + 1e-15, 1.0).passed
    assert not check("a", math.nan, 1.0).passed
    assert check("a", 2.0, (1.8, 2.2), "in").passed and not check("a", 2.3, (1.8, 2.2), "in").passed
    assert check("a", -1.0, 0.0, "<").passed and not check("a", 0.0, 0.0, ">").passed
    assert check("a", 1.0, (1.8, 2.2), "in").bound_text == "∈ [1.8, 2.2]"


def test_validate_command_writes_the_report(tmp_path) -> None:
    out = tmp_path / "report"
    assert main(["validate", "--quick", "--case", "vilmart", "--out", str(out)]) == 0
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "Vilmart" in text and "**0 of" not in text and "FAIL" not in text
    assert "max \\|y − y_Jacobi\\|" in text  # table cells with | are escaped
    assert (out / "vilmart_invariants.png").stat().st_size > 10_000


def test_validate_command_writes_a_new_folder_in_the_working_directory_by_default(tmp_path, monkeypatch) -> None:
    # the committed report (docs/validation) is written only when --out names it
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--quick", "--case", "vilmart", "--no-figures"]) == 0
    text = (tmp_path / "kynemapy-validation" / "README.md").read_text(encoding="utf-8")
    assert '<a href="#vilmart">' in text and '<a id="vilmart"></a>' in text  # links both GitHub and Sphinx resolve
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kynemapy-validation"]


def test_validate_command_exit_status_on_failure_and_bad_usage(tmp_path, monkeypatch, capsys) -> None:
    from kynemapy.validation import vilmart

    def failing(quick: bool = False) -> CaseResult:
        r = CaseResult("vilmart", "Vilmart", "seed 003", "test double", quick=quick)
        r.checks.append(check("an error", 2.0, 1.0))
        return r

    monkeypatch.setattr(vilmart, "run", failing)
    assert main(["validate", "--case", "vilmart", "--no-figures", "--out", str(tmp_path)]) == 1
    assert "**FAIL**" in (tmp_path / "README.md").read_text(encoding="utf-8")

    def crashing(quick: bool = False) -> CaseResult:
        raise RuntimeError("boom")

    monkeypatch.setattr(vilmart, "run", crashing)
    assert main(["validate", "--case", "vilmart", "--no-figures", "--out", str(tmp_path)]) == 1
    assert "boom" in (tmp_path / "README.md").read_text(encoding="utf-8")
    assert main(["validate", "--case", "no_such_case", "--out", str(tmp_path)]) == 2
    assert "unknown validation case" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--no-such-option"])
    assert exc.value.code == 2
