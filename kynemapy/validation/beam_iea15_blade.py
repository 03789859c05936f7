"""Beam case: Kynema's ``Dynamic_Iea15MwBladeBending``, the IEA 15 MW blade against BeamDyn.

The IEA-15-240-RWT blade (WindIO reference axis, twist and 6×6 sections), one element of order
10 (11 nodes), segmented 2-point Gauss quadrature, clamped at the root, P_z = −200 kN at the tip
from t = 0, generalized-α ρ∞ = 0.4, h = 1 ms, 1 s; the flapwise tip displacement against
BeamDyn's (``data/IEA15blade_11nodes_rho_inf_0pt40_DT_0pt001s_F_-200kN_beamdyn.csv``) at
Kynema's check times.  Data copied from Kynema-FMB (MIT licence, see ``data/README.md``).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from kynemapy.validation.common import CaseResult, Table, check

DATA_DIR = Path(__file__).resolve().parent / "data"
#: BeamDyn's tip flapwise displacement (t, u3), copied unchanged from Kynema-FMB
DATA = DATA_DIR / "IEA15blade_11nodes_rho_inf_0pt40_DT_0pt001s_F_-200kN_beamdyn.csv"
#: the blade's reference axis and twist (WindIO, axis along z), from Kynema's IEA-15-240-RWT.yaml
AXIS = DATA_DIR / "IEA-15-240-RWT_blade_axis.csv"
#: the blade's 6×6 inertia and stiffness matrices (upper triangles), from the same file
SECTIONS = DATA_DIR / "IEA-15-240-RWT_blade_six_x_six.csv"

ORDER = 10  # 11 nodes
SECTION_REFINEMENT = 1  # Kynema's rule argument refinement + 1 = 2: two Gauss points per interval
LOAD_Z = -200.0e3  # [N], global z at the tip node
H = 0.001
RHO_INF = 0.4
T_END = 1.0
T_END_QUICK = 0.25
#: Kynema's acceptance: |−u_z − u_ref| <= max(0.1 |u_ref|, 1e-5) at t = 0.05, 0.10, ..., 1.0
RELATIVE_TOLERANCE = 0.10
MIN_ABS_TOLERANCE = 1e-5
CHECK_EVERY = 0.05
#: the reference values written into Kynema's test (``beamdyn_displacements``), t [s] -> u3 [m]:
#: Kynema's acceptance compares with these.  18 are the CSV's rows at those times; the values
#: at 0.65 and 0.85 are the CSV's rows at 0.652 and 0.852 (two rows off, a slip in the test)
KYNEMA_REFERENCE = {
    0.05: 3.2152402220957e00,
    0.10: 6.2794790513560e00,
    0.15: 8.4217275168128e00,
    0.20: 1.0223433394254e01,
    0.25: 1.1546525479042e01,
    0.30: 1.2886325711343e01,
    0.35: 1.3886527167187e01,
    0.40: 1.4310036443370e01,
    0.45: 1.6185820024709e01,
    0.50: 1.7668197552712e01,
    0.55: 1.6540424020922e01,
    0.60: 1.5851104422733e01,
    0.65: 1.5399339110826e01,
    0.70: 1.6837434957033e01,
    0.75: 2.0198188171276e01,
    0.80: 2.2050623695122e01,
    0.85: 2.4902345492894e01,
    0.90: 2.6366619772749e01,
    0.95: 2.5948921136608e01,
    1.00: 2.5190079591555e01,
}

DESCRIPTION = """\
Kynema-FMB's verification test ``Dynamic_Iea15MwBladeBending``
(``tests/regression_tests/regression/verification/dynamic_IEA15MW_blade_bending.cpp``), built as
its ``BladeInterfaceBuilder`` builds it: the IEA-15-240-RWT blade from its WindIO file (Kynema's
``interfaces_test_files/IEA-15-240-RWT.yaml``): the 60 reference-axis points and the twist at
their span fractions, the 26 stations of 6×6 inertia and stiffness matrices, all given with the
axis along z (``ReferenceAxisOrientation::Z``: points and matrices turned by +90° about y, so the
blade runs along x and the WindIO x (prebend) becomes −z); twist negated (as the test does).
One element of order 10 (11 nodes), Gauss–Legendre quadrature segmented between the section
stations with section refinement 1 (2 points per interval, 50 in all), the root node clamped
by a prescribed-displacement constraint, no gravity, at rest with zero initial accelerations;
a constant force −200 kN along global z on the tip node from the first step; generalized-α
ρ∞ = 0.4, h = 1 ms, 1 s, atol = rtol = 1e-5, 15 Newton iterations.  Kynema's acceptance compares
the flapwise tip displacement −u_z with BeamDyn's at t = 0.05, 0.10, …, 1.0 s only, within
10 % of the reference (at least 1e-5): its constraint-based clamp is not BeamDyn's Dirichlet
condition.  The reference values are written into the test; they are the rows of the CSV
Kynema ships (``t, u3``) at those times, except at 0.65 and 0.85 s, where the test holds the
rows at 0.652 and 0.852 s (a slip; 0.17 % and 0.28 % apart): the acceptance is checked as the
test has it, and again against the CSV's rows at the check times.  The report also gives the
agreement at every step and, as a diagnostic (full run only), the same run started from
accelerations consistent with the load instead of Kynema's zeros.  Quick mode runs the first
0.25 s (Kynema's first 5 check times).  Measured with this set-up, kynemapy's −u_z stays below
BeamDyn's by 0.05–0.25 m over the first 0.25 s (5 % at 0.05 s, the largest share of the
tolerance); a start from consistent accelerations removes only a little of it, so the rest lies
in BeamDyn's model (its clamp, its quadrature), which Kynema's test also does not reproduce.
The conventions matter and Kynema's fit best: the same run with the WindIO twist sign
(not negated) or without twist ends at an RMS difference of 0.80 % or 0.69 % of the amplitude,
against 0.51 % as Kynema builds it.
"""

Q_Z_TO_X = np.array([math.cos(math.pi / 4.0), 0.0, math.sin(math.pi / 4.0), 0.0])
"""Kynema's ``ReferenceAxisOrientation::Z`` turn: Eigen ``AngleAxis(π/2, e_y)`` as (w, x, y, z)."""


def reference() -> np.ndarray:
    """BeamDyn's rows (t [s], u3 [m]) from the CSV (header line skipped)."""
    return np.loadtxt(DATA, skiprows=1)


def _symmetric(upper: np.ndarray) -> np.ndarray:
    """(6, 6) symmetric matrix from its 21 upper-triangle values, row by row (as the test reads them)."""
    out = np.zeros((6, 6))
    out[np.triu_indices(6)] = upper
    return out + np.triu(out, 1).T


def blade_input() -> dict:
    """The arguments of :meth:`kynemapy.ModelBuilder.add_beam` for the blade, in Kynema's frame
    (axis along x): the WindIO data turned by ``ReferenceAxisOrientation::Z`` and twist negated."""
    from kynemapy.model.beams import rotate_section, rotate_vector

    axis = np.loadtxt(AXIS, delimiter=",")
    sec = np.loadtxt(SECTIONS, delimiter=",")
    points = np.array([rotate_vector(Q_Z_TO_X, p) for p in axis[:, 1:4]])
    m_star = np.array([rotate_section(_symmetric(row[1:22]), Q_Z_TO_X) for row in sec])
    c_star = np.array([rotate_section(_symmetric(row[22:43]), Q_Z_TO_X) for row in sec])
    return {
        "points": points,
        "point_s": axis[:, 0],
        "twist": -axis[:, 4],
        "twist_s": axis[:, 0],
        "section_s": sec[:, 0],
        "m_star": m_star,
        "c_star": c_star,
    }


def build(kynema_start: bool = True):
    """(model, blade) of Kynema's test: the blade clamped at its root node, no gravity.

    ``kynema_start``: zero initial accelerations (Kynema sets every node's acceleration, zero
    here); False leaves them out (for a start from consistent accelerations, see :func:`simulate`).
    """
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    blade = b.add_beam(
        **blade_input(),
        order=ORDER,
        n_elements=1,
        quadrature="gauss",
        quadrature_style="segmented",
        section_refinement=SECTION_REFINEMENT,
        root_acceleration=np.zeros(6) if kynema_start else None,
        name="IEA-15 blade",
    )
    b.add_prescribed_bc(blade.root)
    return b.build(), blade


def simulate(t_end: float, kynema_start: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t (n,) [s], tip displacement (n, 3) [m], Newton iterations (n,)) at every step, t = 0 included.

    ``kynema_start``: Kynema's zero initial accelerations; False starts from the accelerations
    consistent with the tip load (a diagnostic: how much of the early difference is the start).
    """
    import kynemapy as kp

    model, blade = build(kynema_start)
    params = kp.StepParameters(h=H, rho_inf=RHO_INF, max_iter=15, atol=1e-5, rtol=1e-5)
    sim = kp.Simulation(model, params, consistent_initial_accelerations=False)
    sim.inputs.f[blade.tip] = (0.0, 0.0, LOAD_Z, 0.0, 0.0, 0.0)
    if not kynema_start:
        sim.compute_consistent_accelerations()
    rows = sim.rollout(round(t_end / H))
    return rows["time"], rows["q"][:, blade.tip, :3].copy(), rows["iterations"].copy()


def _agreement(flap: np.ndarray, flap_ref: np.ndarray, every: int) -> tuple[float, float, float]:
    """(fraction of Kynema's tolerance used at its check times, the largest relative difference
    there, RMS of the difference at every step / max |u_ref|)."""
    k = np.arange(every, flap.size, every)
    dev = np.abs(flap[k] - flap_ref[k])
    tol = np.maximum(RELATIVE_TOLERANCE * np.abs(flap_ref[k]), MIN_ABS_TOLERANCE)
    rms = float(np.sqrt(np.mean((flap - flap_ref) ** 2)))
    return float(np.max(dev / tol)), float(np.max(dev / np.abs(flap_ref[k]))), rms / float(np.abs(flap_ref).max())


def run(quick: bool = False) -> CaseResult:
    """Kynema's 20 checks (quick: the first 5) and the step-by-step agreement."""
    start = time.perf_counter()
    result = CaseResult(
        name="beam_iea15_blade",
        title="Beam dynamics: Kynema's IEA 15 MW blade against BeamDyn",
        seed="Kynema verification / BeamDyn",
        description=DESCRIPTION,
        quick=quick,
    )
    t_end = T_END_QUICK if quick else T_END
    t, u, iterations = simulate(t_end)
    wall_sim = time.perf_counter() - start
    ref = reference()
    n = len(t)
    ref = ref[:n]
    assert np.allclose(ref[:, 0], t, atol=1e-9), "time grids differ"
    flap, flap_ref = -u[:, 2], ref[:, 1]
    every = round(CHECK_EVERY / H)
    rows, worst, worst_csv = [], 0.0, 0.0
    for k in range(every, n, every):  # t = 0.05, 0.10, ... (Kynema's step round(t / h))
        u_test = KYNEMA_REFERENCE[round(k * H, 2)]
        tol = max(RELATIVE_TOLERANCE * abs(u_test), MIN_ABS_TOLERANCE)
        dev = abs(flap[k] - u_test)
        worst = max(worst, dev / tol)
        dev_csv = abs(flap[k] - flap_ref[k])
        worst_csv = max(worst_csv, dev_csv / max(RELATIVE_TOLERANCE * abs(flap_ref[k]), MIN_ABS_TOLERANCE))
        rows.append(
            [f"{t[k]:.2f}", f"{flap[k]:.6f}", f"{u_test:.6f}", f"{flap_ref[k]:.6f}", dev, dev / abs(u_test), tol]
        )
    result.tables.append(
        Table(
            "Tip flapwise displacement −u_z at Kynema's check times",
            [
                "t [s]",
                "kynemapy −u_z [m]",
                "Kynema's test value [m]",
                "BeamDyn CSV at t [m]",
                "|difference| from the test value [m]",
                "relative",
                "Kynema's tolerance [m]",
            ],
            rows,
        )
    )
    amp = float(np.abs(flap_ref).max())
    diff = flap - flap_ref
    rms = float(np.sqrt(np.mean(diff**2)))
    mx = float(np.abs(diff).max())
    result.tables.append(
        Table(
            f"Every step, t ∈ [0, {t_end:g}] s: flapwise tip displacement against BeamDyn",
            ["max |u_ref| [m]", "max |u − u_ref| [m]", "RMS [m]", "RMS / max |u_ref|", "max u_x, u_y [m]"],
            [[amp, mx, rms, rms / amp, f"{np.abs(u[:, 0]).max():.4f}, {np.abs(u[:, 1]).max():.4f}"]],
        )
    )
    result.tables.append(
        Table(
            "Run",
            ["steps", "Newton iterations per step (mean, max)", "wall time incl. build and compile [s]"],
            [[n - 1, f"{iterations[1:].mean():.2f}, {int(iterations[1:].max())}", f"{wall_sim:.1f}"]],
        )
    )
    if not quick:  # diagnostic: the same run started from consistent accelerations
        _, u_c, _ = simulate(t_end, kynema_start=False)
        fractions = [_agreement(flap, flap_ref, every), _agreement(-u_c[:, 2], flap_ref, every)]
        result.tables.append(
            Table(
                "Start-up: Kynema's zero initial accelerations against accelerations consistent with the load",
                ["start", "share of Kynema's tolerance used", "largest relative difference", "RMS / max |u_ref|"],
                [[name, *f] for name, f in zip(("zero (Kynema's, the case)", "consistent"), fractions, strict=True)],
            )
        )
    result.checks += [
        check("Kynema's acceptance: max |−u_z − u_test| / max(0.1|u_test|, 1e-5) at its check times", worst, 1.0),
        check("the same against the CSV's rows at the check times", worst_csv, 1.0),
        check("every step: RMS(−u_z − u_ref) / max |u_ref|", rms / amp, 0.05),
    ]
    t_test = np.array([tk for tk in KYNEMA_REFERENCE if tk <= t_end + 1e-9])
    u_test_all = np.array([KYNEMA_REFERENCE[tk] for tk in t_test])
    result.figures["history"] = (t, flap, flap_ref, t_test, u_test_all)
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """Tip flapwise displacement against BeamDyn's, and the difference."""
    import matplotlib.pyplot as plt

    t, flap, flap_ref, t_test, u_test = result.figures["history"]
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    ax.plot(t, flap_ref, "k-", lw=0.9, label="BeamDyn")
    ax.plot(t[::10], flap[::10], ".", ms=4, label="kynemapy")
    ax.plot(t_test, u_test, "o", mfc="none", ms=7, color="C3", label="Kynema's test values")
    ax.set(ylabel="tip flapwise displacement −u_z [m]", title="IEA 15 MW blade, P_z = −200 kN at the tip")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    bx.plot(t, flap - flap_ref, "C0-", lw=0.8)
    bx.set(xlabel="t [s]", ylabel="kynemapy − BeamDyn [m]")
    bx.grid(alpha=0.3)
    fig.tight_layout()
    name = "beam_iea15_blade.png"
    fig.savefig(f"{directory}/{name}", dpi=90)
    plt.close(fig)
    return [(name, "Flapwise tip displacement of the IEA 15 MW blade against BeamDyn's.")]
