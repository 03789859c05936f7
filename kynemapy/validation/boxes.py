"""Seed 004: the Gazebo "Boxes" benchmark of free-floating rigid bodies (scpeters/benchmark).

Box 0.1 × 0.4 × 0.9 m, 10 kg, c₀ = 0, q₀ = identity, 10 s.  Simple: g = 0, ċ₀ = (−0.9, 0.4, 0.1),
ω₀ = (0.5, 0, 0); complex: g = (0, 0, −9.8), ċ₀ = (−2, 2, 8), ω₀ = (0.1, 5, 0.1) (body frame).
Metrics (``boxes.cc``), each the maximum over every step: |c − (c₀ + ċ₀t + ½gt²)|, |ċ − (ċ₀ + gt)|,
|L − L₀|/|L₀| (world frame, about the centre of mass), |E − E₀|/E₀, and in the simple scenario the
rotation-angle error against ω₀t about x; wall time and its ratio to simulated time.
"""

from __future__ import annotations

import io
import time

import numpy as np

from kynemapy.validation.common import CONSERVING_STEPPED, GEN_ALPHA, LABELS, STEPPED_SCHEMES, CaseResult, Table, check
from kynemapy.validation.reference import rodrigues, rotation_angle

MASS = 10.0
SIZE = np.array([0.1, 0.4, 0.9])
INERTIA = (
    MASS / 12.0 * np.array([SIZE[1] ** 2 + SIZE[2] ** 2, SIZE[0] ** 2 + SIZE[2] ** 2, SIZE[0] ** 2 + SIZE[1] ** 2])
)
T_END = 10.0
SCENARIOS = {
    "simple": {"gravity": np.zeros(3), "v0": np.array([-0.9, 0.4, 0.1]), "w0": np.array([0.5, 0.0, 0.0])},
    "complex": {
        "gravity": np.array([0.0, 0.0, -9.8]),
        "v0": np.array([-2.0, 2.0, 8.0]),
        "w0": np.array([0.1, 5.0, 0.1]),
    },
}
STEPS_FULL = tuple(round(k * 1e-4, 4) for k in range(1, 11))  # the benchmark's sweep: 1e-4 … 1e-3
STEPS_QUICK = (5e-4, 1e-3)
SCHEMES = (*STEPPED_SCHEMES, "exact")
CONSERVING = (*CONSERVING_STEPPED, "exact")
ENGINES = ("ode", "bullet", "simbody", "dart")
ENGINE_LABELS = {"ode": "ODE", "bullet": "Bullet", "simbody": "Simbody", "dart": "DART"}
#: issue 5 bounds at dt = 1e-3
BOUND_X = BOUND_V = 1e-8
BOUND_E = 1e-6
BOUND_L = 1e-10  # momentum-conserving schemes
BOUND_L_GA = 1e-4  # generalized-α
BOUND_ANGLE = 1e-6  # rad, simple scenario

#: Published results, github:scpeters/benchmark test_results/BENCHMARK_boxes_dt.csv (commit 55c3b05,
#: 2015; Gazebo with each engine, one box): engine, complex, dt [s], linPositionErr_maxAbs [m],
#: linVelocityErr_maxAbs [m/s], angMomentumErr_maxAbs (relative), energyError_maxAbs (relative),
#: angPositionErr_mag_maxAbs [rad] (simple only; Euler-angle difference), timeRatio (wall/sim).
PUBLISHED_CSV = (
    "ode,0,0.0001,1.32316e-11,0,0,0,1.04167e-09,0.547431\n"
    "ode,0,0.0002,7.30504e-12,0,0,0,4.16667e-09,0.26908\n"
    "ode,0,0.0003,8.3795e-12,0,0,0,9.3752e-09,0.178629\n"
    "ode,0,0.0004,3.11725e-12,0,0,0,1.66667e-08,0.133112\n"
    "ode,0,0.0005,2.08747e-12,0,0,0,2.60417e-08,0.105706\n"
    "ode,0,0.0006,2.14433e-12,0,0,0,3.75007e-08,0.0881998\n"
    "ode,0,0.0007,1.20669e-12,0,0,0,5.10427e-08,0.075911\n"
    "ode,0,0.0008,1.22564e-12,0,0,0,6.66667e-08,0.0671882\n"
    "ode,0,0.0009,2.02443e-12,0,0,0,8.43817e-08,0.0606971\n"
    "ode,0,0.001,1.65532e-12,0,0,0,1.04167e-07,0.0527363\n"
    "bullet,0,0.0001,1.32316e-11,0,1.69995e-12,6.85531e-14,3.40528e-12,0.632833\n"
    "bullet,0,0.0002,7.30504e-12,0,3.06696e-13,1.22543e-14,4.75842e-13,0.318018\n"
    "bullet,0,0.0003,8.3795e-12,0,4.45692e-13,1.79375e-14,9.78329e-13,0.211636\n"
    "bullet,0,0.0004,3.11725e-12,0,1.53829e-13,6.21595e-15,4.54969e-13,0.160978\n"
    "bullet,0,0.0005,2.08747e-12,0,6.44159e-14,2.48638e-15,1.39e-13,0.128495\n"
    "bullet,0,0.0006,2.14433e-12,0,2.26211e-13,9.23513e-15,4.72289e-13,0.106459\n"
    "bullet,0,0.0007,1.20669e-12,0,9.5319e-14,3.90717e-15,3.05089e-13,0.0909412\n"
    "bullet,0,0.0008,1.22564e-12,0,2.2209e-13,9.05753e-15,4.40092e-13,0.0811364\n"
    "bullet,0,0.0009,2.02443e-12,0,4.86209e-14,1.95359e-15,1.30118e-13,0.0714108\n"
    "bullet,0,0.001,1.65532e-12,0,4.82089e-14,1.95359e-15,1.47438e-13,0.0649\n"
    "simbody,0,0.0001,1.9222e-11,0,0,0,2.60406e-10,1.30094\n"
    "simbody,0,0.0002,9.42497e-12,0,0,0,1.04164e-09,0.639731\n"
    "simbody,0,0.0003,2.22295e-12,0,0,0,2.34379e-09,0.432002\n"
    "simbody,0,0.0004,5.03785e-12,0,0,0,4.16666e-09,0.319661\n"
    "simbody,0,0.0005,4.19227e-12,0,0,0,6.51042e-09,0.255674\n"
    "simbody,0,0.0006,2.25155e-12,0,0,0,9.37519e-09,0.210934\n"
    "simbody,0,0.0007,6.48e-12,0,0,0,1.27607e-08,0.179741\n"
    "simbody,0,0.0008,2.18158e-12,0,0,0,1.66667e-08,0.157789\n"
    "simbody,0,0.0009,2.39858e-12,0,0,0,2.10954e-08,0.140812\n"
    "simbody,0,0.001,2.29255e-12,0,0,0,2.60417e-08,0.129009\n"
    "dart,0,0.0001,1.32316e-11,5.89176e-11,9.15335e-16,3.46317e-14,2.30683e-06,0.679941\n"
    "dart,0,0.0002,7.30504e-12,5.00958e-11,9.66523e-16,2.80606e-14,1.23436e-06,0.336819\n"
    "dart,0,0.0003,8.3795e-12,5.00958e-11,9.22259e-16,2.7883e-14,6.28318,0.229303\n"
    "dart,0,0.0004,3.11725e-12,3.51838e-11,1.24363e-15,1.74047e-14,6.28317,0.174873\n"
    "dart,0,0.0005,2.08747e-12,2.89906e-11,1.44338e-15,1.34975e-14,2.53844e-07,0.13796\n"
    "dart,0,0.0006,2.14433e-12,5.00957e-11,3.97005e-16,2.7883e-14,6.28313,0.114857\n"
    "dart,0,0.0007,1.20669e-12,2.35704e-11,8.48088e-16,1.01231e-14,6.28308,0.0985625\n"
    "dart,0,0.0008,1.22564e-12,3.51838e-11,5.63011e-16,1.74047e-14,6.28301,0.0857209\n"
    "dart,0,0.0009,2.02443e-12,5.00957e-11,1.083e-15,2.7883e-14,9.94899e-07,0.0761697\n"
    "dart,0,0.001,1.65532e-12,8.5898e-12,9.94695e-16,2.48638e-15,3.07866e-06,0.068806\n"
    "ode,1,0.0001,0.0049,1.14738e-10,0.0012715,0.00124711,0,0.551533\n"
    "ode,1,0.0002,0.0098,8.66436e-11,0.0025506,0.00249402,0,0.274585\n"
    "ode,1,0.0003,0.0147003,2.10605e-11,0.00383779,0.0037408,0,0.186404\n"
    "ode,1,0.0004,0.0196,3.04254e-11,0.00513209,0.00498724,0,0.140862\n"
    "ode,1,0.0005,0.0245,2.52385e-11,0.00643471,0.00623355,0,0.111823\n"
    "ode,1,0.0006,0.0294006,1.13545e-11,0.00774617,0.00747979,0,0.0922529\n"
    "ode,1,0.0007,0.0343007,2.54516e-11,0.00906516,0.00872571,0,0.077345\n"
    "ode,1,0.0008,0.0392,1.49356e-11,0.0103914,0.00997124,0,0.0699168\n"
    "ode,1,0.0009,0.0441035,5.40012e-13,0.0117316,0.0112175,0,0.0632641\n"
    "ode,1,0.001,0.049,1.11697e-11,0.0130708,0.012462,0,0.0555251\n"
    "bullet,1,0.0001,0.0049,1.14738e-10,0.00125827,0.0013586,0,0.6501\n"
    "bullet,1,0.0002,0.0098,8.66436e-11,0.00251355,0.002717,0,0.317487\n"
    "bullet,1,0.0003,0.0147003,2.10605e-11,0.00376595,0.00407529,0,0.212555\n"
    "bullet,1,0.0004,0.0196,3.04254e-11,0.00501523,0.00543321,0,0.157893\n"
    "bullet,1,0.0005,0.0245,2.52385e-11,0.00626166,0.00679101,0,0.129417\n"
    "bullet,1,0.0006,0.0294006,1.13545e-11,0.00750533,0.00814879,0,0.109562\n"
    "bullet,1,0.0007,0.0343007,2.54516e-11,0.00874595,0.00950623,0,0.0934014\n"
    "bullet,1,0.0008,0.0392,1.49356e-11,0.00998344,0.0108632,0,0.0810737\n"
    "bullet,1,0.0009,0.0441035,5.40012e-13,0.0112192,0.0122213,0,0.0723185\n"
    "bullet,1,0.001,0.049,1.11697e-11,0.0124501,0.0135771,0,0.0643839\n"
    "simbody,1,0.0001,0.00245,1.3894e-10,0.000634808,0.00062358,0,1.27193\n"
    "simbody,1,0.0002,0.0049,8.96136e-11,0.0012715,0.00124711,0,0.633862\n"
    "simbody,1,0.0003,0.00735015,6.35509e-11,0.00191027,0.00187063,0,0.423791\n"
    "simbody,1,0.0004,0.0098,4.42526e-11,0.0025506,0.00249402,0,0.318291\n"
    "simbody,1,0.0005,0.01225,6.71179e-11,0.00319304,0.0031174,0,0.259362\n"
    "simbody,1,0.0006,0.0147003,5.31912e-11,0.00383779,0.0037408,0,0.215045\n"
    "simbody,1,0.0007,0.0171503,3.43618e-11,0.0044842,0.00436409,0,0.183072\n"
    "simbody,1,0.0008,0.0196,2.60627e-11,0.00513209,0.00498724,0,0.162721\n"
    "simbody,1,0.0009,0.0220518,2.29363e-11,0.00578466,0.00561083,0,0.140081\n"
    "simbody,1,0.001,0.0245,1.74083e-11,0.00643471,0.00623355,0,0.126777\n"
    "dart,1,0.0001,0.0049,1.7136e-10,2.22942,0.0269129,0,0.682155\n"
    "dart,1,0.0002,0.0098,8.6672e-11,2.23176,0.0277115,0,0.351083\n"
    "dart,1,0.0003,0.0147003,2.10889e-11,2.28609,0.0468922,0,0.231257\n"
    "dart,1,0.0004,0.0196,3.04254e-11,2.23344,0.0289518,0,0.175597\n"
    "dart,1,0.0005,0.0245,2.52385e-11,2.36521,0.0488044,0,0.140193\n"
    "dart,1,0.0006,0.0294006,1.13545e-11,2.29052,0.0536236,0,0.116986\n"
    "dart,1,0.0007,0.0343007,2.54659e-11,2.29858,0.0349178,0,0.0974441\n"
    "dart,1,0.0008,0.0392,1.49498e-11,2.28674,0.0304573,0,0.0873051\n"
    "dart,1,0.0009,0.0441035,5.96935e-13,2.48328,0.0837389,0,0.0766047\n"
    "dart,1,0.001,0.049,1.1184e-11,2.1861,0.0376206,0,0.0682283\n"
)

DESCRIPTION = """\
The Gazebo "Boxes" benchmark (seed 004; github:scpeters/benchmark ``boxes.cc``,
``boxes_description.ipynb``): one free box 0.1 × 0.4 × 0.9 m, 10 kg, I = diag(0.80833, 0.68333,
0.14167) kg m² (y is the unstable axis), 10 s, dt swept from 1e-4 to 1e-3 s.  Simple scenario:
g = 0, ċ₀ = (−0.9, 0.4, 0.1) m/s, ω₀ = (0.5, 0, 0) rad/s (stable spin about x); complex: g = (0, 0,
−9.8) m/s², ċ₀ = (−2, 2, 8) m/s, ω₀ = (0.1, 5, 0.1) rad/s (tumbling near the unstable axis).

* Metrics as ``boxes.cc`` computes them, maxima over every step: centre-of-mass position and
  velocity error against the parabola, relative angular-momentum error |L − L₀|/|L₀| (world frame,
  about the centre of mass), relative energy error |E − E₀|/E₀, and (simple) the rotation-angle
  error against ω₀t about x (here the geodesic angle; the benchmark differences Euler angles).
  Wall time: the whole run with every step stored (``integrate`` call, or the engine's compiled
  rollout), on this machine; the published times are Gazebo's on the benchmark's 2015 machine.
* kynemapy: every rigid-body scheme (the centre of mass moves under constant gravity, integrated
  exactly) and the constrained engine's generalized-α on one free node (ρ∞ = 1, Newton to 1e-10).
* Published: ODE, Bullet, Simbody and DART from the benchmark's CSV (first-order schemes; DART's
  angular momentum fails in the complex scenario).
"""


def published() -> dict:
    """{(engine, scenario, dt): (pos, vel, L, E, angle, sim/wall)} from :data:`PUBLISHED_CSV`."""
    out = {}
    for line in io.StringIO(PUBLISHED_CSV):
        engine, cplx, dt, pos, vel, mom, energy, angle, ratio = line.strip().split(",")
        scenario = "complex" if cplx == "1" else "simple"
        out[engine, scenario, round(float(dt), 4)] = (
            float(pos),
            float(vel),
            float(mom),
            float(energy),
            float(angle) if scenario == "simple" else float("nan"),
            1.0 / float(ratio),
        )
    return out


def metrics(t, R, W, x, v, scenario: str) -> tuple[float, float, float, float, float]:
    """(position, velocity, relative L, relative E, rotation-angle) errors, maxima over all steps."""
    s = SCENARIOS[scenario]
    g, v0, w0 = s["gravity"], s["v0"], s["w0"]
    tt = t[:, None]
    pos = float(np.linalg.norm(x - (v0 * tt + 0.5 * g * tt * tt), axis=1).max())
    vel = float(np.linalg.norm(v - (v0 + g * tt), axis=1).max())
    L = np.einsum("nij,nj->ni", R, W * INERTIA)
    L0 = INERTIA * w0
    mom = float(np.linalg.norm(L - L0, axis=1).max() / np.linalg.norm(L0))
    E = 0.5 * MASS * np.sum(v * v, axis=1) + 0.5 * np.einsum("ni,ni->n", W, W * INERTIA) - MASS * x @ g
    E0 = 0.5 * MASS * float(v0 @ v0) + 0.5 * float(w0 @ (INERTIA * w0))
    energy = float(np.abs(E / E0 - 1.0).max())
    angle = float(rotation_angle(R, rodrigues(np.outer(t, w0))).max()) if scenario == "simple" else float("nan")
    return pos, vel, mom, energy, angle


def _run_one(scheme: str, scenario: str, dt: float):
    import kynemapy as kp
    from kynemapy.validation import engine

    s = SCENARIOS[scenario]
    if scheme == GEN_ALPHA:
        model, node = engine.free_body_model(MASS, INERTIA, np.eye(3), s["w0"], s["v0"], s["gravity"])
        run = engine.rollout(model, node, engine.step_parameters(dt), round(T_END / dt))
        return run.t, run.R, run.W, run.x, run.v, run.wall_time
    start = time.perf_counter()
    tr = kp.integrators.integrate(scheme, INERTIA, np.eye(3), s["w0"], dt, T_END, gravity=s["gravity"], v0=s["v0"])
    wall = time.perf_counter() - start
    return tr.t, tr.R, tr.W, tr.x, tr.v, wall


def run(quick: bool = False) -> CaseResult:
    """Both scenarios, every scheme, dt from 1e-4 to 1e-3 (quick: 5e-4 and 1e-3)."""
    start = time.perf_counter()
    result = CaseResult(
        name="boxes",
        title="Gazebo Boxes: free-floating rigid bodies",
        seed="seed 004",
        description=DESCRIPTION,
        quick=quick,
    )
    steps = STEPS_QUICK if quick else STEPS_FULL
    pub = published()
    ours: dict = {}
    for scenario in SCENARIOS:
        for scheme in (*SCHEMES, GEN_ALPHA):
            for dt in steps:
                t, R, W, x, v, wall = _run_one(scheme, scenario, dt)
                ours[scheme, scenario, dt] = (*metrics(t, R, W, x, v, scenario), T_END / wall)
    # checks at dt = 1e-3
    for scenario in SCENARIOS:
        for scheme in (*SCHEMES, GEN_ALPHA):
            pos, vel, mom, energy, angle, _ = ours[scheme, scenario, 1e-3]
            label = f"{scenario} {LABELS[scheme]} dt=1e-3"
            result.checks.append(check(f"{label}: position error [m]", pos, BOUND_X))
            result.checks.append(check(f"{label}: velocity error [m/s]", vel, BOUND_V))
            result.checks.append(check(f"{label}: relative energy error", energy, BOUND_E))
            if scheme in CONSERVING:
                result.checks.append(check(f"{label}: relative angular-momentum error", mom, BOUND_L))
            elif scheme == GEN_ALPHA:
                result.checks.append(check(f"{label}: relative angular-momentum error", mom, BOUND_L_GA))
            if scenario == "simple":
                result.checks.append(check(f"{label}: rotation-angle error [rad]", angle, BOUND_ANGLE))
    # tables
    for scenario in SCENARIOS:
        rows = []
        for scheme in (*SCHEMES, GEN_ALPHA):
            pos, vel, mom, energy, angle, ratio = ours[scheme, scenario, 1e-3]
            row = [f"kynemapy {LABELS[scheme]}", pos, vel, mom, energy]
            row += [angle] if scenario == "simple" else []
            rows.append([*row, f"{ratio:.3g}"])
        for eng in ENGINES:
            pos, vel, mom, energy, angle, ratio = pub[eng, scenario, 1e-3]
            row = [f"{ENGINE_LABELS[eng]} (published)", pos, vel, mom, energy]
            row += [angle] if scenario == "simple" else []
            rows.append([*row, f"{ratio:.3g}"])
        columns = ["engine / scheme", "position error [m]", "velocity error [m/s]", "|ΔL|/|L₀|", "|ΔE|/E₀"]
        columns += ["rotation-angle error [rad]"] if scenario == "simple" else []
        columns.append("sim time / wall time")
        bounds = (
            f"position, velocity ≤ {BOUND_X:g}; energy ≤ {BOUND_E:g}; angular momentum ≤ {BOUND_L:g} "
            f"(momentum-conserving schemes), ≤ {BOUND_L_GA:g} (generalized-α)"
        )
        bounds += f"; rotation angle ≤ {BOUND_ANGLE:g} rad" if scenario == "simple" else ""
        result.tables.append(
            Table(
                f"{scenario.capitalize()} scenario, dt = 1e-3, 10 s",
                columns,
                rows,
                note=f"Bounds for kynemapy: {bounds}.  Published wall times are Gazebo's (2015 machine, one "
                "box, logging every step); kynemapy's are this machine's, every step stored.",
            )
        )
    sweep_metrics = (
        ("complex", 3, "relative energy error"),
        ("complex", 2, "relative angular-momentum error"),
        ("complex", 0, "position error [m]"),
        ("simple", 4, "rotation-angle error [rad]"),
    )
    for scenario, k, what in sweep_metrics:
        rows = []
        for dt in steps:
            row = [dt]
            row += [ours[s, scenario, dt][k] for s in (*SCHEMES, GEN_ALPHA)]
            row += [pub[e, scenario, dt][k] for e in ENGINES]
            rows.append(row)
        result.tables.append(
            Table(
                f"{scenario.capitalize()} scenario: {what} against dt",
                ["dt [s]"] + [LABELS[s] for s in (*SCHEMES, GEN_ALPHA)] + [ENGINE_LABELS[e] for e in ENGINES],
                rows,
            )
        )
    result.figures["sweep"] = {"steps": steps, "ours": ours, "published": pub}
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """Each metric against dt, kynemapy's schemes (solid) and the published engines (dashed)."""
    import matplotlib.pyplot as plt

    data = result.figures["sweep"]
    steps = np.array(data["steps"])
    ours, pub = data["ours"], data["published"]
    pub_steps = np.array(sorted({k[2] for k in pub}))
    written = []
    for scenario in SCENARIOS:
        panels = [(0, "position error [m]"), (1, "velocity error [m/s]"), (2, "|ΔL|/|L₀|"), (3, "|ΔE|/E₀")]
        if scenario == "simple":
            panels.append((4, "rotation-angle error [rad]"))
        panels.append((5, "sim time / wall time"))
        fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))
        for ax, (k, ylabel) in zip(axes.flat, panels, strict=False):
            for i, scheme in enumerate((*SCHEMES, GEN_ALPHA)):
                y = np.array([ours[scheme, scenario, dt][k] for dt in steps])
                ax.loglog(steps, np.maximum(y, 1e-17), "o-", ms=3, lw=1.0, color=f"C{i}", label=LABELS[scheme])
            for eng, color in zip(ENGINES, ("black", "gray", "goldenrod", "darkcyan"), strict=True):
                y = np.array([pub[eng, scenario, dt][k] for dt in pub_steps])
                ax.loglog(
                    pub_steps,
                    np.maximum(y, 1e-17),
                    "s--",
                    ms=3,
                    lw=1.0,
                    color=color,
                    label=f"{ENGINE_LABELS[eng]} (pub.)",
                )
            ax.set(xlabel="dt [s]", ylabel=ylabel)
            ax.grid(alpha=0.3, which="both")
        for ax in axes.flat[len(panels) :]:
            ax.axis("off")
        axes.flat[0].legend(fontsize="x-small", ncol=2)
        fig.suptitle(f"Gazebo Boxes, {scenario} scenario: metrics against dt (values below 1e-17 drawn at 1e-17)")
        fig.tight_layout()
        name = f"boxes_{scenario}.png"
        fig.savefig(f"{directory}/{name}", dpi=80)
        plt.close(fig)
        written.append((name, f"{scenario.capitalize()} scenario: every metric against dt, kynemapy and published."))
    return written
