"""Contact case: hard (nonsmooth) contact against a ground plane, against closed forms.

A ball bouncing with restitution e (Newton's law at every impact, the apex heights e^(2k) h₀), a
box sticking on an incline and sliding down a steeper one (Coulomb), a ball thrown sliding that
friction brings to rolling at 5/7 v₀, a ball rolling down an incline at 5/7 g sin θ
(docs/contact.md, "Hard contact").
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from kynemapy.validation.common import CaseResult, Table, check

G = 9.81  # m/s²
RADIUS = 0.1  # m
MASS = 1.0  # kg
BALL_INERTIA = 0.4 * MASS * RADIUS**2  # kg m², a solid sphere
DROP = 1.0  # m, the ball's lowest point above the plane at t = 0
RESTITUTION = 0.5
BOUNCES = 3  # apexes compared
STEPS_FULL = (1e-3, 5e-4, 2.5e-4, 1.25e-4)
STEPS_QUICK = (1e-3, 2.5e-4)
STICK_ANGLE, STICK_MU = 0.3, 0.5  # rad; tan 0.3 = 0.309 < μ
SLIDE_ANGLE, SLIDE_MU = 0.6, 0.3  # rad; tan 0.6 = 0.684 > μ
V0 = 2.0  # m/s, the thrown ball
THROW_MU = 0.3
ROLL_ANGLE, ROLL_MU = math.radians(30.0), 0.5  # μ > 2/7 tan θ: rolls without slip
H_FRICTION = 1e-3  # s, the friction scenes' step
T_FRICTION = 1.0  # s

DESCRIPTION = f"""\
Hard contact (`add_ground_plane(law="hard", restitution=e, friction=μ)`): after each smooth
generalized-α step (ρ∞ = 0.9, atol = rtol = 1e-12) the shapes' points are projected back onto the
plane and the velocity jumps by Newton's restitution law and Coulomb's cone (the decoupled
nonsmooth scheme of Brüls, Acary & Cardona).  g = {G} m/s².  Ball: r = {RADIUS} m, {MASS} kg,
solid (J = 2/5 m r²); box: 0.4 × 0.3 × 0.2 m, 3 kg.  References, all closed forms:

* bounce: dropped from {DROP} m with e = {RESTITUTION}: the k-th impact is at
  t_k = √(2 h₀/g) (1 + 2 Σ_{{j<k}} e^j) and the k-th apex is e^(2k) h₀.  The step in which the ball
  reaches the plane is split at the impact, located from the gap and its rate at the step's two
  ends (exact in free flight, where the gap is a quadratic in time and the smooth scheme exact) and
  aimed at a penetration η = 1e-12 m that the correction takes back: each impact is late by
  η/v_k, Newton's law sees the velocity there, and the height the ball would reach after the k-th
  impact, z + v_z²/2g, is e^(2k) h₀ to within k η whatever h (checked, with the sampled apex g h²/8
  below it at most).  Before the impact location (Newton's law with the velocity at the start of
  the impact step) the apex was off by up to 2 g h / v relative per impact: first order in h;
* incline, tan a < μ (a = {STICK_ANGLE} rad, μ = {STICK_MU}): the box sticks, no creep;
* incline, tan a > μ (a = {SLIDE_ANGLE} rad, μ = {SLIDE_MU}): it slides with g (sin a − μ cos a);
* ball thrown at v₀ = {V0} m/s without spin, μ = {THROW_MU}: it slides until t* = 2 v₀/(7 μ g),
  then rolls at 5/7 v₀ (ω r = v);
* ball released on a {math.degrees(ROLL_ANGLE):.0f}° incline, μ = {ROLL_MU} (> 2/7 tan θ): it rolls
  without slip at 5/7 g sin θ.

No point goes below the plane by more than 1e-12 m in any run.  The compliant law is compared
with these cases, and with MuJoCo, in `bench/contact.py`.
"""


def _params(h: float):
    import kynemapy as kp

    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def bounce(h: float, t_end: float) -> dict[str, np.ndarray]:
    """The ball dropped on the hard plane at step ``h`` [s] until ``t_end`` [s]: times [s], gaps
    [m] and vertical velocities [m/s] after every step (the first entry: t = 0), and the located
    impact times [s] (``impacts``)."""
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    node = b.add_node(position=(0.0, 0.0, RADIUS + DROP))
    b.add_mass(node, mass=MASS, inertia=(BALL_INERTIA,) * 3)
    b.add_sphere(node, RADIUS)
    b.add_ground_plane(law="hard", restitution=RESTITUTION)
    sim = kp.Simulation(b.build(), _params(h))
    events = sim.joint_stops.events
    n = round(t_end / h)
    t, gap, vz = np.zeros(n + 1), np.full(n + 1, DROP), np.zeros(n + 1)
    impacts = []
    for i in range(1, n + 1):
        sim.step()
        if events.cuts:
            impacts.append(events.impact_time)
        t[i] = sim.time
        gap[i] = DROP + float(sim.state.q[node, 2])
        vz[i] = float(sim.state.v[node, 2])
    return {"t": t, "gap": gap, "vz": vz, "impacts": np.array(impacts)}


def apexes(run: dict[str, np.ndarray]) -> list[tuple[float, float, float]]:
    """(apex on the step grid [m], the height ``z + v_z²/2g`` the ball would reach from the end of
    the impact step [m], the impact step's end time [s]) of each bounce of ``run`` (a bounce: the
    vertical velocity turns from down to up in a step)."""
    gap, vz, t = run["gap"], run["vz"], run["t"]
    out = []
    i = 1
    while i < gap.shape[0]:
        if vz[i - 1] < 0.0 and vz[i] > 0.0:  # a bounce in step i
            j = i + 1
            while j < gap.shape[0] and vz[j] > 0.0:
                j += 1
            if j >= gap.shape[0]:
                break  # the apex is after the end
            reach = float(gap[i] + vz[i] * vz[i] / (2.0 * G))
            out.append((float(gap[i : j + 1].max()), reach, float(t[i])))
            i = j
        i += 1
    return out


def box_on_incline(angle: float, mu: float, h: float = H_FRICTION):
    """A 3 kg box (0.4 × 0.3 × 0.2 m) resting face down on a hard plane tilted by ``angle`` [rad]
    with Coulomb's ``mu``, stepped at ``h`` [s]: ``(simulation, unit vector down the slope)``."""
    import kynemapy as kp

    half = (0.2, 0.15, 0.1)
    c, s = math.cos(angle), math.sin(angle)
    axes = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])  # along the slope, across, normal
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    centre = half[2] * axes[:, 2]
    node = b.add_node(position=tuple(centre))
    b.add_mass(node, mass=3.0, inertia=(0.05, 0.05, 0.05))
    b.add_box(node, half, center=tuple(centre), axes=axes)
    b.add_ground_plane(normal=tuple(axes[:, 2]), law="hard", friction=mu)
    return kp.Simulation(b.build(), _params(h)), -np.array([c, 0.0, s])


def _ball_on_plane(theta: float, mu: float, v0: float):
    """A ball resting on a hard plane under gravity turned by θ about y (the plane an incline)."""
    import kynemapy as kp

    b = kp.ModelBuilder(gravity=(G * math.sin(theta), 0.0, -G * math.cos(theta)))
    node = b.add_node(position=(0.0, 0.0, RADIUS), velocity=(v0, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(node, mass=MASS, inertia=(BALL_INERTIA,) * 3)
    b.add_sphere(node, RADIUS)
    b.add_ground_plane(law="hard", friction=mu)
    return kp.Simulation(b.build(), _params(H_FRICTION))


def sliding_ball_travel(t: float) -> float:
    """Travel [m] at ``t`` [s] of the ball thrown at V0 without spin (closed form)."""
    t_star = 2.0 * V0 / (7.0 * THROW_MU * G)
    if t <= t_star:
        return V0 * t - 0.5 * THROW_MU * G * t * t
    return V0 * t_star - 0.5 * THROW_MU * G * t_star**2 + 5.0 / 7.0 * V0 * (t - t_star)


def run(quick: bool = False) -> CaseResult:
    """The bounce over the step sizes, the inclines, the thrown and the rolling ball."""
    from kynemapy.run.impact_event import PENETRATION  # the penetration a located impact aims at [m]

    start = time.perf_counter()
    result = CaseResult(
        name="contact",
        title="Hard contact: bounces, Coulomb friction and rolling against closed forms",
        seed="closed forms",
        description=DESCRIPTION,
        quick=quick,
    )
    steps = STEPS_QUICK if quick else STEPS_FULL
    v_star = math.sqrt(2.0 * G * DROP)
    flight = [math.sqrt(2.0 * DROP / G)]  # impact times of the closed form
    for k in range(1, BOUNCES + 1):
        flight.append(flight[-1] + 2.0 * RESTITUTION**k * v_star / G)
    t_end = flight[BOUNCES] - RESTITUTION**BOUNCES * v_star / G + 0.05  # a little after the last apex compared
    rows, runs = [], {}
    deepest = 0.0
    reach_excess = -math.inf  # [m], the apexes' excess over their bound k η
    sampled_excess = -math.inf  # [m], the sampled apexes' excess over their sampling bound g h²/8
    timing = 0.0  # [s], the located impacts' largest distance from the closed form's
    found_all = True
    for h in steps:
        r = bounce(h, t_end)
        runs[h] = r
        deepest = min(deepest, float(r["gap"].min()))
        found = apexes(r)
        found_all = found_all and len(found) >= BOUNCES and r["impacts"].size >= BOUNCES
        for k, (apex, reach, _) in enumerate(found[:BOUNCES], start=1):
            exact = RESTITUTION ** (2 * k) * DROP
            reach_excess = max(reach_excess, abs(reach - exact) - k * PENETRATION - 1e-12)
            sampled_excess = max(sampled_excess, exact - apex - G * h * h / 8.0 - k * PENETRATION - 1e-12)
            sampled_excess = max(sampled_excess, apex - exact - k * PENETRATION - 1e-12)
            located = float(r["impacts"][k - 1]) if r["impacts"].size >= k else math.nan
            timing = max(timing, abs(located - flight[k - 1]))
            rows.append([h, k, located, flight[k - 1], reach, exact, reach / exact - 1.0])
    result.tables.append(
        Table(
            f"Bounce, e = {RESTITUTION}: apexes against e^(2k) h₀",
            [
                "h [s]",
                "bounce k",
                "located impact [s]",
                "exact impact [s]",
                "apex z + v²/2g [m]",
                "e^(2k) h₀ [m]",
                "rel. error",
            ],
            rows,
            note="Each impact step is split at the located impact: the apexes are e^(2k) h₀ to within k η "
            "(η = 1e-12 m, the penetration the located sub-step aims at), whatever h.",
        )
    )
    result.figures["bounce"] = {h: (r["t"], r["gap"]) for h, r in runs.items()}
    result.figures["bounce_exact"] = (flight, v_star)
    result.checks += [
        check(f"bounce: {BOUNCES} apexes found at every h", 0.0 if found_all else 1.0, 0.0),
        check("bounce: deepest point below the plane [m]", -deepest, 1e-12),
        check(
            "bounce: every apex z + v_z²/2g after the k-th impact is e^(2k) h₀ to within k η "
            "(excess over that bound [m])",
            reach_excess,
            0.0,
        ),
        check(
            "bounce: every apex on the step grid within its sampling g h²/8 below that (excess [m])",
            sampled_excess,
            0.0,
        ),
        check("bounce: impacts located at the closed form's times [s] (late by η/v_k each)", timing, 1e-9),
    ]

    friction_rows = []
    sim, down = box_on_incline(STICK_ANGLE, STICK_MU)
    sim.advance(round(T_FRICTION / H_FRICTION))
    moved = float(np.linalg.norm(sim.state.q[0, :3]))
    friction_rows.append([f"box, a = {STICK_ANGLE} rad, μ = {STICK_MU}", "travel [m]", moved, 0.0, moved])
    sim, down = box_on_incline(SLIDE_ANGLE, SLIDE_MU)
    sim.advance(round(T_FRICTION / H_FRICTION))
    a = G * (math.sin(SLIDE_ANGLE) - SLIDE_MU * math.cos(SLIDE_ANGLE))
    v_box = float(sim.state.v[0, :3] @ down)
    x_box = float(sim.state.q[0, :3] @ down)
    slide_v = abs(v_box / (a * T_FRICTION) - 1.0)
    slide_x = abs(x_box / (0.5 * a * T_FRICTION**2) - 1.0)
    friction_rows.append(
        [f"box, a = {SLIDE_ANGLE} rad, μ = {SLIDE_MU}", "velocity [m/s]", v_box, a * T_FRICTION, slide_v]
    )
    friction_rows.append(["", "travel [m]", x_box, 0.5 * a * T_FRICTION**2, slide_x])
    sim = _ball_on_plane(0.0, THROW_MU, V0)
    sim.advance(round(T_FRICTION / H_FRICTION))
    v_ball = float(sim.state.v[0, 0])
    spin = float(sim.state.v[0, 4]) * RADIUS  # ω_y r: rolling along +x turns about +y
    x_ball = float(sim.state.q[0, 0])
    roll_v = abs(v_ball / (5.0 / 7.0 * V0) - 1.0)
    roll_spin = abs(spin / v_ball - 1.0)
    travel_exact = sliding_ball_travel(T_FRICTION)
    travel_err = abs(x_ball - travel_exact)
    friction_rows.append([f"ball thrown at {V0} m/s, μ = {THROW_MU}", "velocity [m/s]", v_ball, 5.0 / 7.0 * V0, roll_v])
    friction_rows.append(["", "ω r [m/s]", spin, 5.0 / 7.0 * V0, abs(spin / (5.0 / 7.0 * V0) - 1.0)])
    friction_rows.append(["", "travel [m]", x_ball, travel_exact, travel_err / travel_exact])
    sim = _ball_on_plane(ROLL_ANGLE, ROLL_MU, 0.0)
    sim.advance(round(T_FRICTION / H_FRICTION))
    a_roll = 5.0 / 7.0 * G * math.sin(ROLL_ANGLE)
    v_roll = float(sim.state.v[0, 0])
    rolling = abs(v_roll / (a_roll * T_FRICTION) - 1.0)
    friction_rows.append(
        [
            f"ball on {math.degrees(ROLL_ANGLE):.0f}°, μ = {ROLL_MU}",
            "velocity [m/s]",
            v_roll,
            a_roll * T_FRICTION,
            rolling,
        ]
    )
    result.tables.append(
        Table(
            f"Coulomb friction and rolling at t = {T_FRICTION} s (h = {H_FRICTION} s)",
            ["scene", "quantity", "kynemapy", "closed form", "rel. error (travel of the sticking box: m)"],
            friction_rows,
        )
    )
    slip = (1.0 - 5.0 / 7.0) * V0  # the velocity the ball loses while it slides [m/s]
    result.checks += [
        check("box sticks (tan a < μ): travel in 1 s [m]", moved, 1e-9),
        check("box slides (tan a > μ): velocity against g (sin a − μ cos a) t, relative", slide_v, 1e-6),
        check("box slides: travel against g (sin a − μ cos a) t²/2, relative", slide_x, 1e-6),
        check("thrown ball: velocity 5/7 v₀ once rolling, relative", roll_v, 1e-6),
        check("thrown ball: rolls without slip (ω r = v), relative", roll_spin, 1e-6),
        check("thrown ball: travel error [m], within the step that holds t* (slip × h)", travel_err, slip * H_FRICTION),
        check("ball on the incline rolls at 5/7 g sin θ, relative", rolling, 1e-9),
    ]
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory: Path | str) -> list[tuple[str, str]]:
    """The bounce: height of the ball's lowest point against time, every h, and the closed form."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flight, v_star = result.figures["bounce_exact"]
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    t_fine = np.linspace(0.0, max(float(r[0][-1]) for r in result.figures["bounce"].values()), 4000)
    exact = np.empty_like(t_fine)
    for i, t in enumerate(t_fine):
        if t <= flight[0]:
            exact[i] = DROP - 0.5 * G * t * t
            continue
        k = int(np.searchsorted(flight, t)) - 1
        k = min(k, len(flight) - 2)
        v_up = RESTITUTION ** (k + 1) * v_star
        s = t - flight[k]
        exact[i] = max(v_up * s - 0.5 * G * s * s, 0.0)
    ax.plot(t_fine, exact, "k-", linewidth=2.5, alpha=0.35, label="closed form")
    for h, (t, gap) in sorted(result.figures["bounce"].items(), reverse=True):
        ax.plot(t, gap, "-", linewidth=1.0, label=f"h = {h:g} s")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("lowest point above the plane [m]")
    ax.set_title(f"Ball bouncing on a hard plane, e = {RESTITUTION}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = "contact_bounce.png"
    fig.savefig(Path(directory) / name, dpi=110)
    plt.close(fig)
    return [(name, "The ball's lowest point against time at every h, and the closed form (grey).")]
