"""Seed 001: Kynema's heavy top (a constrained rigid body, 9 unknowns + 6 multipliers).

m = 15 kg, J_c = diag(0.234375, 0.46875, 0.234375) kg m² about the centre of mass at (0, 1, 0),
spherical joint at the origin, g = 9.81 along −z, ω₀ = (0, 150, −4.61538) rad/s, v₀ = ω₀ × x₀.
Kynema's docs (``docs/sphinx/testing/heavytop.rst``) plot the relative error of u₃(t = 2)
against h and show second order; its verification test runs h = 2e-4 to t = 2 and accepts 5e-4.
"""

from __future__ import annotations

import time

import numpy as np

from kynemapy.validation.common import CaseResult, Table, check
from kynemapy.validation.reference import quat_to_matrix, rigid_body_reference

MASS = 15.0
INERTIA_CM = np.array([0.234375, 0.46875, 0.234375])
X0 = np.array([0.0, 1.0, 0.0])
OMEGA0 = np.array([0.0, 150.0, -4.61538])
GRAVITY = 9.81
T_END = 2.0
RHO_INF = 0.9  # Kynema's heavy-top settings
STEPS_FULL = (8e-3, 4e-3, 2e-3, 1e-3, 5e-4)
STEPS_QUICK = (4e-3, 2e-3, 1e-3)
#: Brüls–Cardona–Arnold value at t = 2 s asserted by Kynema's verification test (u, quaternion)
KYNEMA_R2_Q = np.array(
    [
        -0.150416985652933,
        -1.724164450779749,
        -0.673023460701136,
        0.122947275600560,
        -0.491079359219981,
        0.350430794926147,
        -0.787986857972906,
    ]
)
SLOPE_BOUNDS = (1.8, 2.2)
R2_BOUND = 5e-4  # Kynema's own acceptance at h = 2e-4

DESCRIPTION = """\
Kynema-FMB's heavy top (seed 001) modelled Kynema's way: a rigid-body node at the centre of
mass (0, 1, 0) (m = 15 kg, J_c = diag(0.234375, 0.46875, 0.234375)), a 6→3 rigid joint to a
position-only pin node held by a prescribed (zero) displacement, gravity 9.81 m/s² along −z,
ω₀ = (0, 150, −4.61538) rad/s, consistent initial accelerations computed by kynemapy.

* Convergence (Kynema's docs plot): the relative error of u₃(t = 2) (vertical displacement of the
  centre of mass) against h, generalized-α with ρ∞ = 0.9, Newton to atol = 1e-9, rtol = 1e-8 (far
  below the discretisation error; tighter stalls on round-off in the index-3 multipliers at small
  h).  Kynema's benchmark is its own run at h = 1e-6; here the reference is independent:
  DOP853 (rtol = atol = 1e-13) on the reduced equations about the pivot (J = J_c + m(|r|²I − r rᵀ)
  = diag(15.234375, 0.46875, 15.234375), torque r × Rᵀ m g).
* Kynema's verification run (R2): h = 2e-4, ρ∞ = 0.9, atol = 1e-7, rtol = 1e-6, 10 000 steps;
  q(t = 2) against the reference, accepted at 5e-4 as Kynema does.  The reference also agrees with
  the Brüls–Cardona–Arnold value Kynema asserts.
"""


def simulation_model():
    """Kynema's heavy top: (model, centre-of-mass node)."""
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -GRAVITY))
    top = b.add_node(position=X0, velocity=np.concatenate([np.cross(OMEGA0, X0), OMEGA0]))
    b.add_mass(top, mass=MASS, inertia=INERTIA_CM)
    pin = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_rigid_joint_6dof_to_3dof(top, pin)
    b.add_prescribed_bc_3dof(pin)
    return b.build(), top


def reference(t) -> tuple[np.ndarray, np.ndarray]:
    """(u (n, 3) centre-of-mass displacement [m], R (n, 3, 3)) by DOP853 about the pivot."""
    J = INERTIA_CM + MASS * np.array([X0[1] ** 2 + X0[2] ** 2, X0[0] ** 2 + X0[2] ** 2, X0[0] ** 2 + X0[1] ** 2])
    at = rigid_body_reference(J, np.eye(3), OMEGA0, float(np.max(t)), (0, 0, -MASS * GRAVITY), X0, 1e-13, 1e-13)
    R, _ = at(t)
    return R @ X0 - X0, R


def run(quick: bool = False) -> CaseResult:
    """Convergence of u₃(2) (quick: three steps), and Kynema's R2 run."""
    import kynemapy as kp
    from kynemapy.validation import engine

    start = time.perf_counter()
    result = CaseResult(
        name="kynema_top",
        title="Kynema heavy top: convergence of u₃(t = 2)",
        seed="seed 001",
        description=DESCRIPTION,
        quick=quick,
    )
    model, node = simulation_model()
    u_ref, R_ref = reference(np.array([T_END]))
    u3_ref = float(u_ref[0, 2])
    steps = STEPS_QUICK if quick else STEPS_FULL
    errors, rows = [], []
    history = None
    for h in steps:
        params = kp.StepParameters(h=h, rho_inf=RHO_INF, max_iter=20, atol=1e-9, rtol=1e-8)
        run_ = engine.rollout(model, node, params, round(T_END / h))
        u3 = float(run_.x[-1, 2] - X0[2])
        err = abs(u3 - u3_ref) / abs(u3_ref)
        errors.append(err)
        rows.append(
            [
                h,
                f"{u3:.12f}",
                err,
                "—" if len(errors) == 1 else f"{errors[-2] / err:.3f}",
                f"{run_.iterations.mean():.2f}",
            ]
        )
        if history is None or h == 1e-3:
            history = (run_.t, run_.x - X0)
    errors_arr = np.array(errors)
    slope = float(np.polyfit(np.log(steps), np.log(errors_arr), 1)[0])
    rows.append(["reference", f"{u3_ref:.12f}", "—", "—", "—"])
    result.tables.append(
        Table(
            "u₃(t = 2) against h (generalized-α, ρ∞ = 0.9)",
            ["h [s]", "u₃(2) [m]", "relative error", "ratio to previous", "Newton it/step"],
            rows,
            note=f"Least-squares slope of log(error) against log(h): {slope:.3f} (second order: 2).",
        )
    )
    result.checks.append(check("order of u₃(2) convergence (log-log slope)", slope, SLOPE_BOUNDS, "in"))
    ratios = errors_arr[:-1] / errors_arr[1:]
    result.checks.append(check("error ratio per halving of h (min)", float(ratios.min()), 3.6, ">="))
    result.checks.append(check("error ratio per halving of h (max)", float(ratios.max()), 4.4, "<="))

    # Kynema's verification run (R2)
    params = kp.StepParameters(h=2e-4, rho_inf=RHO_INF, max_iter=15, atol=1e-7, rtol=1e-6)
    sim = kp.Simulation(model, params)
    sim.advance(10_000)
    q = sim.state.q[node]
    R_sim = quat_to_matrix(q[3:])
    u_sim = q[:3]
    r2_error = float(max(np.abs(u_sim - u_ref[0]).max(), np.abs(R_sim - R_ref[0]).max()))
    bca_R = quat_to_matrix(KYNEMA_R2_Q[3:])
    bca_error = float(max(np.abs(KYNEMA_R2_Q[:3] - u_ref[0]).max(), np.abs(bca_R - R_ref[0]).max()))
    result.checks.append(
        check("R2 (h = 2e-4, 10 000 steps): max |u − u_ref|, |R − R_ref| at t = 2", r2_error, R2_BOUND)
    )
    result.checks.append(check("reference vs Brüls–Cardona–Arnold value at t = 2 (Kynema's)", bca_error, 2e-6))
    result.tables.append(
        Table(
            "Kynema's verification run R2 and the reference",
            ["run", "max deviation at t = 2 (u [m], R)", "bound"],
            [
                ["kynemapy, h = 2e-4, atol 1e-7, rtol 1e-6", r2_error, f"{R2_BOUND:g}"],
                ["BCA value Kynema asserts vs the DOP853 reference", bca_error, "2e-6"],
            ],
        )
    )
    t_ref = np.linspace(0.0, T_END, 801)
    u_hist_ref, _ = reference(t_ref)
    result.figures["convergence"] = (np.array(steps), errors_arr, slope)
    result.figures["history"] = (history[0], history[1], t_ref, u_hist_ref)
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """Convergence plot (Kynema's docs) and the centre-of-mass displacement over [0, 2] s."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    steps, errors, slope = result.figures["convergence"]
    t, u, t_ref, u_ref = result.figures["history"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    ax.loglog(steps, errors, "o-", label=f"kynemapy (slope {slope:.2f})")
    ax.loglog(steps, errors[0] * (steps / steps[0]) ** 2, "k--", lw=0.8, label="second order")
    ax.set(xlabel="h [s]", ylabel="relative error of u₃(t = 2)", title="Heavy top: convergence (Kynema docs)")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(steps, [f"{h:g}" for h in steps])
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    for k, name in enumerate("xyz"):
        ax.plot(t_ref, u_ref[:, k], "k-", lw=0.8, label="reference" if k == 0 else None)
        ax.plot(t[::8], u[::8, k], ".", ms=3, label=f"u_{name}, h = 1e-3")
    ax.set(xlabel="t [s]", ylabel="centre-of-mass displacement [m]", title="u(t)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    name = "kynema_top_convergence.png"
    fig.savefig(f"{directory}/{name}", dpi=90)
    plt.close(fig)
    return [(name, "Relative error of u₃(t = 2) against h (left) and u(t) against the reference (right).")]
