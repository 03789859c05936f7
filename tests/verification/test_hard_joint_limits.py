"""Hard (unilateral) joint limits of hinges and sliders (issue 28 item 1, docs/joints.md, "Hard joint
limits"): the decoupled nonsmooth generalized-α step of Brüls, Acary & Cardona (CMAME 2014), Newton's
impact law with restitution e.

Checked against closed forms and an independent event-driven integration (scipy's DOP853 at 1e-12 of
the pendulum equation written here): a pendulum released from the horizontal into a stop at 30° from
the vertical, a mass on a vertical slider bouncing on its travel end.

Where the scheme's error comes from (it sets the tolerances): a step in which a joint that was
clear of its stops passes one is split at the impact time located from the angle and rate at the
step's two ends (:mod:`kynemapy.run.impact_event`): a smooth sub-step to the impact, Newton's law
with the rate there, and a smooth sub-step of the rest.  The impact is then located to within the
smooth scheme's own error of the swing (second order: ~1e-6 s at h = 1 ms, where the step that
contains it is 1e-3 s long), and the rebound rate is −e times the scheme's rate at the impact,
exactly; the motion after the impact keeps the smooth scheme's second order.  Before (the stop found
at the end of the step, Newton's law with the rate at its start) the rebound was off by up to
``e a_max h`` and the motion after the impact first order.  When the load drives the joint into
its stop (gravity here), the impact never adds energy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kynemapy as kp
from kynemapy.model.errors import ModelError
from kynemapy.run.impact_event import PENETRATION

G = 9.81
MASS, LENGTH, IC = 2.0, 0.8, 0.05  # kg, m (pivot to centre of mass), kg m² (about the centre)
INERTIA = MASS * LENGTH**2 + IC  # kg m², about the pivot
STOP = -math.pi / 3  # rad, from the horizontal: 30° short of the bottom
A_MAX = MASS * G * LENGTH / INERTIA  # rad/s², the largest angular acceleration gravity gives
RATE_AT_STOP = -math.sqrt(2.0 * MASS * G * LENGTH * math.sin(-STOP) / INERTIA)  # rad/s, energy conservation


def _params(h: float) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12)


def pendulum(h: float, e: float) -> tuple[kp.Simulation, int]:
    """A body (m = 2 kg, I_c = 0.05 kg m²) with its centre 0.8 m from a hinge to the ground along x,
    released at rest from the horizontal; θ from the horizontal (up positive), gravity −z, hard
    limits (−π/3, 1) rad with restitution ``e``."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, LENGTH, 0.0))
    b.add_mass(n, mass=MASS, inertia=(IC, IC, IC))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(STOP, 1.0), limit_restitution=e)
    return kp.Simulation(b.build(), _params(h)), j


def energy(theta: float, rate: float) -> float:
    """The pendulum's energy [J] (potential 0 at the horizontal)."""
    return 0.5 * INERTIA * rate * rate + MASS * G * LENGTH * math.sin(theta)


def reference(e: float, t_end: float) -> tuple[list, list[float]]:
    """Event-driven reference: θ̈ = −(m g l / I) cos θ by DOP853 at 1e-12 to each impact θ = stop,
    where θ̇ → −e θ̇ (e = 0: up to the first impact).  Returns the segments' dense solutions and the impact times."""

    def rhs(_: float, y: np.ndarray) -> list[float]:
        return [y[1], -MASS * G * LENGTH * math.cos(y[0]) / INERTIA]

    def hit(_: float, y: np.ndarray) -> float:
        return y[0] - STOP

    hit.terminal = True  # type: ignore[attr-defined]
    hit.direction = -1  # type: ignore[attr-defined]
    t, y, segments, times = 0.0, [0.0, 0.0], [], []
    while t < t_end:
        sol = solve_ivp(rhs, (t, t_end), y, method="DOP853", rtol=1e-12, atol=1e-12, events=hit, dense_output=True)
        segments.append(sol)
        if sol.status != 1:
            break
        t = float(sol.t_events[0][0])
        times.append(t)
        y = [STOP, -e * float(sol.y_events[0][0][1])]
        if e == 0.0:  # at rest on the stop from then on
            break
    return segments, times


def reference_angle(segments: list, t: float) -> float:
    for sol in segments:
        if sol.t[0] <= t <= sol.t[-1]:
            return float(sol.sol(t)[0])
    raise AssertionError(f"no reference at t = {t}")


def _swing(e: float, h: float, n_steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Angles, rates (with t = 0 first) and stop impulses of each step."""
    sim, j = pendulum(h, e)
    theta, rate, impulse = [0.0], [0.0], []
    for _ in range(n_steps):
        assert sim.step().converged
        out = sim.joint_output(j)
        theta.append(float(out[0]))
        rate.append(float(out[1]))
        impulse.append(sim.stop_impulse(j))
    return np.array(theta), np.array(rate), np.array(impulse)


# ----------------------------------------------------------------------- the pendulum
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_pendulum_rebounds_at_minus_e_times_the_impact_rate(e: float) -> None:
    """The first impact (closed form: t* = 0.42934 s, θ̇* = −4.5212 rad/s), h = 1 ms: the step that
    contains t* is split at the located impact, within h/100 of t* (measured 1.0e-6 s: the smooth
    scheme's phase error, second order; before, only the step containing t* was found); there the
    rate is θ̇* to within a_max h / 100 (a_max = m g l / I = 11.8 rad/s²: the smooth scheme's rate
    error, measured 1.1e-5 rad/s; before, Newton's law used the rate at the start of the impact step,
    off by up to a_max h) and after the impact it is exactly −e times the rate before (1e-15
    relative).  At no step is the angle below the stop by more than the correction's tolerance
    (1e-12 rad relative).  The first impact step changes the energy by ``−½ I θ̇*² (1 − e²)`` to
    within ``I |θ̇*| a_max h / 100`` (7e-4 J; the rate's error above, and the smooth scheme's own
    change of the energy over a step, ±8e-5 J at h = 1 ms in the steps without impact), and so
    does every impact for e = 1 (measured 1.1e-4 J; before, each lost up to I |θ̇*| a_max h,
    0.071 J, as Newton's law saw the smaller rate at the start of the step); for e = 0 the steps
    at rest on the stop change it by nothing (1e-12 J)."""
    h = 1e-3
    sim, j = pendulum(h, e)
    events = sim.joint_stops.events
    theta, rate, impulse = [0.0], [0.0], []
    located = None
    for _ in range(2500):
        assert sim.step().converged
        out = sim.joint_output(j)
        theta.append(float(out[0]))
        rate.append(float(out[1]))
        impulse.append(sim.stop_impulse(j))
        if located is None and impulse[-1] > 0.0:
            located = (events.cuts, events.impact_time, events.rate_before[0], events.rate_after[0])
    theta_a, rate_a = np.array(theta), np.array(rate)
    hits = np.flatnonzero(np.array(impulse) > 0.0)  # impulse[k]: step k + 1, from row k to row k + 1
    first = int(hits[0])
    _, times = reference(e, 0.5)
    assert first * h < times[0] <= (first + 1) * h
    assert located is not None
    cuts, t_impact, before, after = located
    assert cuts == 1
    assert abs(t_impact - times[0]) <= h / 100.0
    assert abs(before - RATE_AT_STOP) <= A_MAX * h / 100.0
    assert abs(after + e * before) <= 1e-15 * abs(before)
    assert np.all(theta_a >= STOP - 1e-12 * abs(STOP))
    energies = np.array([energy(a, w) for a, w in zip(theta_a, rate_a, strict=True)])
    changes = np.diff(energies)[hits]
    bound = INERTIA * abs(RATE_AT_STOP) * A_MAX * h / 100.0
    assert abs(changes[0] + 0.5 * INERTIA * RATE_AT_STOP**2 * (1.0 - e * e)) <= bound
    if e == 1.0:  # every impact at ±θ̇*: no loss but the smooth scheme's own change over a step
        assert np.all(np.abs(changes) <= bound), changes
    if e == 0.0:  # no rebound: it stays at the stop, at rest
        assert np.all(changes[1:] <= 1e-12)  # 1e-12 J: the roundoff of E ~ 10 J (resting steps: 0)
        assert np.all(theta_a[first + 1 :] == pytest.approx(STOP, abs=1e-15))
        assert np.all(np.abs(rate_a[first + 1 :]) <= 1e-12)


def test_pendulum_rests_on_its_stop_with_the_static_torque() -> None:
    """e = 0, 3000 steps of 1 ms (2.57 s at rest on the stop): no drift (the angle is the stop to
    1e-15 rad, the rate zero), and the stop's impulse per step Λ / h is the static torque
    m g l cos θ_stop (= m g l sin 30° from the vertical, 7.848 N m) to within the torque's change
    over the smooth step's fall into the stop, ``|tan θ_stop| β h² a`` relative (β = 0.276,
    a = 5.9 rad/s²: 2.8e-6; measured 5.2e-6 at the end of a step, ½h²a of fall: bound taken as
    ``|tan θ_stop| h² a_max``, 2.0e-5) once the smooth scheme's algorithmic acceleration has
    forgotten the impact (it decays like ρ∞ per step: 2.3e-5 relative 70 steps after the impact,
    checked over the last 1000 steps)."""
    h = 1e-3
    sim, j = pendulum(h, 0.0)
    sim.advance(500)  # the impact at 0.429 s
    static = MASS * G * LENGTH * math.cos(STOP)
    for k in range(2500):
        assert sim.step().converged
        theta, rate, _ = sim.joint_output(j)
        assert theta == pytest.approx(STOP, abs=1e-15)
        assert abs(rate) <= 1e-15
        if k >= 1500:  # the algorithmic acceleration's transient from the impact has died out
            torque = sim.stop_impulse(j) / h
            assert torque == pytest.approx(static, rel=abs(math.tan(STOP)) * h * h * A_MAX)


def test_pendulum_convergence_second_order_before_and_first_order_after_the_impact() -> None:
    """e = 0.5 against the event-driven reference.  Before the impact (t = 0.4 s) the angle's error
    falls fourfold when h halves (measured 5.9e-5, 1.5e-5, 3.7e-6, 9.2e-7 rad at h = 4, 2, 1,
    0.5 ms).  After it (t = 1.0 s, after the rebound and a second impact at 0.9956 s) the error is
    within the bound of the scheme without impact location, ``(e |θ̇*| + e a_max t) h`` = 8.2 h
    (the rebound up to h late at a rate off by ``e a_max h``; measured then 4.9e-3, 4.7e-4, 1.6e-3,
    4.4e-4 rad), now far below it (3e-5, 4e-7, 2e-6, 5e-8 rad: the located impacts; see the next
    test for its order)."""
    e = 0.5
    segments, _ = reference(e, 1.0)
    before, after = [], []
    steps = (0.004, 0.002, 0.001, 0.0005)
    for h in steps:
        sim, j = pendulum(h, e)
        sim.advance(round(0.4 / h))
        before.append(abs(sim.joint_output(j)[0] - reference_angle(segments, 0.4)))
        sim.advance(round(1.0 / h) - round(0.4 / h))
        after.append(abs(sim.joint_output(j)[0] - reference_angle(segments, 1.0)))
    for coarse, fine in itertools.pairwise(before):
        assert 3.6 < coarse / fine < 4.4, before
    for h, err in zip(steps, after, strict=True):
        assert err <= (e * abs(RATE_AT_STOP) + e * A_MAX * 1.0) * h, after


def test_pendulum_error_after_the_impact_stays_second_order() -> None:
    """e = 0.5 against the event-driven reference, the largest angle error over the steps before the
    first impact (0.42934 s) and over those between it and the second (0.9956 s), at h = 4, 2, 1,
    0.5 ms: with the impact located, the error after it is no larger than twice the error before it
    (the swing's own error, carried through the impact; measured 7.3e-5, 1.8e-5, 4.6e-6, 1.2e-6
    rad before and 6.7e-5, 1.3e-5, 4.1e-6, 8.3e-7 after), and it falls at least tenfold over two
    halvings of h (second order: sixteenfold; first order, as without the location, fourfold)."""
    e = 0.5
    segments, times = reference(e, 1.0)
    before, after = [], []
    for h in (0.004, 0.002, 0.001, 0.0005):
        sim, j = pendulum(h, e)
        rows = sim.rollout(round(0.99 / h))
        t = rows["time"]
        error = np.abs(rows["constraint_output"][:, j, 0] - [reference_angle(segments, x) for x in t])
        before.append(float(error[t < times[0]].max()))
        after.append(float(error[(t > times[0]) & (t < times[1])].max()))
    for b, a in zip(before, after, strict=True):
        assert a <= 2.0 * b, (before, after)
    assert after[0] > 10.0 * after[2] and after[1] > 10.0 * after[3], after


# ----------------------------------------------------------------------- the slider
DROP = 1.0  # m, the slider's fall to its travel end


def slider(h: float, e: float) -> tuple[kp.Simulation, int]:
    """A 3 kg mass on a vertical slider to the ground, released at rest 1 m above its lower
    travel end (limits (−1, 1) m), gravity −z."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=3.0, inertia=(0.1, 0.1, 0.1))
    j = b.add_slider_joint(kp.GROUND, n, (0, 0, 0), (0, 0, 1), limits=(-DROP, 1.0), limit_restitution=e)
    return kp.Simulation(b.build(), _params(h)), j


def test_slider_bounces_to_e_squared_heights() -> None:
    """e = 0.8, h = 1 ms: each impact step is split at the impact, aimed at the penetration η =
    ``PENETRATION`` (1e-12 m) that the position correction takes back, lifting the mass by η; free
    fall being exact for the scheme under constant gravity, the height the mass would reach,
    ``s + H + ṡ²/2g``, is constant between impacts and after the k-th one it is
    ``e² (previous + η)``, i.e. ``e^(2k) H`` to within ``k η`` (1e-12 m of round-off added).  Before,
    the k-th apex was off by up to ``k v_k h`` (Newton's law with the rate at the start of the
    impact step).  The sampled apex is below it by at most g h²/8.  Never below the travel end."""
    e, h = 0.8, 1e-3
    sim, j = slider(h, e)
    rows = sim.rollout(4000)
    s = rows["constraint_output"][:, j, 0]
    rate = rows["constraint_output"][:, j, 1]
    assert np.all(s >= -DROP - 1e-12)
    reach = s + DROP + rate * rate / (2.0 * G)
    impacts = np.flatnonzero((rate[:-1] < 0.0) & (rate[1:] > 0.0)) + 1  # the rows that end an impact step
    assert len(impacts) >= 3
    assert np.all(np.abs(reach[: impacts[0]] - DROP) <= 1e-12)
    for k, (a, b) in enumerate(itertools.pairwise(impacts[:4]), start=1):
        assert np.all(np.abs(reach[a:b] - e ** (2 * k) * DROP) <= k * PENETRATION + 1e-12), k
        height = float(s[a:b].max()) + DROP
        assert e ** (2 * k) * DROP - G * h * h / 8.0 - k * PENETRATION - 1e-12 <= height
        assert height <= e ** (2 * k) * DROP + k * PENETRATION + 1e-12


def test_slider_rebound_rate_is_exact() -> None:
    """The first rebound, e = 0.5, at h = 2, 1, 0.5, 0.25 ms: the impact is located at
    ``t' = t* + η/v*`` (t* = √(2 H/g), v* = √(2 g H), η = ``PENETRATION`` the penetration aimed at)
    and Newton's law sees ``−(v* + g η/v*)``; the rate at the end of the impact step is then
    ``e (v* + g η/v*) − g (t − t')`` to 1e-12 m/s, whatever h.  Before, it was ``e`` times the rate at
    the start of the impact step, off by up to e g h (first order)."""
    e = 0.5
    v_impact = math.sqrt(2.0 * G * DROP)
    t_star = math.sqrt(2.0 * DROP / G)
    for h in (0.002, 0.001, 0.0005, 0.00025):
        sim, j = slider(h, e)
        rows = sim.rollout(round(0.6 / h))
        rate = rows["constraint_output"][:, j, 1]
        first = int(np.flatnonzero(rate > 0.0)[0])
        events = sim.joint_stops.events
        t_hit = t_star + PENETRATION / v_impact
        v_hit = v_impact + G * PENETRATION / v_impact
        assert abs(events.impact_time - t_hit) <= 1e-12
        assert abs(events.rate_before[0] + v_hit) <= 1e-12
        assert abs(events.rate_after[0] + e * events.rate_before[0]) <= 1e-15 * v_hit
        assert abs(rate[first] - (e * v_hit - G * (rows["time"][first] - t_hit))) <= 1e-12


# ----------------------------------------------------------------------- paths and errors
def test_every_stepping_path_gives_the_same_corrected_states(tmp_path) -> None:
    """step(), advance(), rollout(), run() to a file (and restarted from it), run(adaptive=True)
    and run(loads=...) step the same corrected states, bit for bit; the file's model keeps the
    stops."""
    h, n = 1e-3, 700
    a, j = pendulum(h, 0.5)
    for _ in range(n):
        a.step()
    b, _ = pendulum(h, 0.5)
    b.advance(n)
    c, _ = pendulum(h, 0.5)
    rows = c.rollout(n, every=50)
    d, _ = pendulum(h, 0.5)
    path = tmp_path / "stop.h5"
    d.run(n_steps=400, output=path, every=50)
    e = kp.Simulation.restart(path)
    assert np.array_equal(e.model.joint_stops, d.model.joint_stops)
    e.run(n_steps=300, output=path)
    f, _ = pendulum(h, 0.5)
    f.run(n_steps=n, adaptive=True)  # one step at a time through step_with
    g, _ = pendulum(h, 0.5)
    g.run(n_steps=n, loads=lambda sim, t: None)  # a loads callback before each step
    for sim in (b, c, e, f, g):
        assert np.array_equal(sim.state.q, a.state.q)
        assert np.array_equal(sim.state.v, a.state.v)
    assert rows["q"][-1].tolist() == a.state.q.tolist()
    assert np.all(rows["constraint_output"][:, j, 0] >= STOP)


def test_models_without_hard_limits_are_stepped_as_before() -> None:
    """No stops: no wrapper, an empty table."""
    b = kp.ModelBuilder()
    n = b.add_node(position=(0.0, 1.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1.0, 1.0), limit_stiffness=100.0)
    sim = kp.Simulation(b.build(), _params(1e-3))
    assert sim.joint_stops is None
    assert sim.model.joint_stops.shape == (0, 5)


def test_bad_hard_limits_are_refused() -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(0.0, 1.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    with pytest.raises(ModelError, match="either hard"):
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1, 1), limit_stiffness=1.0, limit_restitution=0)
    with pytest.raises(ModelError, match="either hard"):
        b.add_slider_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1, 1), limit_damping=1.0, limit_restitution=0)
    with pytest.raises(ModelError, match=r"limit_restitution must be in \[0, 1\]"):
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1, 1), limit_restitution=1.5)
    with pytest.raises(ModelError, match="need limits"):
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limit_restitution=0.5)
    with pytest.raises(ModelError, match="limit_restitution in"):
        b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1, 1))


def test_a_start_outside_the_limits_and_the_unsupported_paths_are_refused() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, LENGTH, 0.0))
    b.add_mass(n, mass=MASS, inertia=(IC, IC, IC))
    b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(0.1, 1.0), limit_restitution=0.5)
    with pytest.raises(ModelError, match=r"starts at 0\.0 rad, outside its hard limits"):
        kp.Simulation(b.build(), _params(1e-3))
    sim, _ = pendulum(1e-3, 0.5)
    with pytest.raises(ValueError, match=r"advance_to .* hard joint limits"):
        sim.advance_to(0.1)
    with pytest.raises(ValueError, match=r"run\(control=\.\.\.\) .* hard joint limits"):
        sim.run(t_end=0.1, control=kp.StepControl())
    with pytest.raises(ValueError, match="Batch: member 0's model has hard joint limits"):
        kp.Batch([sim])
    b = kp.ModelBuilder()
    n = b.add_node(position=(0.0, 1.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0))
    with pytest.raises(ValueError, match="constraint 0 has no hard limits"):
        kp.Simulation(b.build(), _params(1e-3)).stop_impulse(0)


HARD_SLIDER_TOML = """
[model]
gravity = [0.0, 0.0, -9.81]

[[node]]
name = "block"
position = [0.0, 0.0, 0.0]

[[mass]]
node = "block"
mass = 3.0
inertia = [0.1, 0.1, 0.1]

[[constraint]]
kind = "slider_joint"
name = "rail"
body_a = "ground"
body_b = "block"
point = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
limits = [-1.0, 1.0]
limit_restitution = 0.8

[step]
h = 0.001
"""


def test_model_file_hard_limit_keys_build_the_builders_model() -> None:
    """``limits`` with ``limit_restitution`` in a model file: the builder's table; bad values name the line."""
    from kynemapy.model.file import ModelFileError, parse_model_file

    mf = parse_model_file(HARD_SLIDER_TOML)
    model = slider(1e-3, 0.8)[0].model
    np.testing.assert_array_equal(mf.model.joint_stops, model.joint_stops)
    np.testing.assert_array_equal(model.joint_stops, [[0.0, float(kp.model.kinds.SLIDER_JOINT), -1.0, 1.0, 0.8]])
    with pytest.raises(ModelFileError, match=r"line 22.*limit_restitution must be in \[0, 1\]"):
        parse_model_file(HARD_SLIDER_TOML.replace("limit_restitution = 0.8", "limit_restitution = 2.0"))
    with pytest.raises(ModelFileError, match=r"either hard .* or compliant"):
        parse_model_file(
            HARD_SLIDER_TOML.replace("limit_restitution = 0.8", "limit_restitution = 0.8\nlimit_stiffness = 1e4")
        )


@pytest.mark.parametrize("e", [1.0, 0.5])
def test_two_free_bodies_hit_an_elbow_stop_internally(e: float) -> None:
    """Two bodies in free space (no gravity, 2 kg and 1 kg, 1 m apart) joined by a hinge along z with
    hard limits (−0.3, 0.3) rad, spinning apart at 2 rad/s about z and tumbling at 0.3 rad/s about
    x: the stops and both corrections act between two moving, turning bodies (the Lie-group update
    and the gradient of a hinge between bodies).  Checked from the body frames, independently of
    the joint output: the relative angle never passes a stop (1e-15 rad); the hinge's points
    coincide (1e-12 m) and its axes stay aligned (1e-12); the total linear momentum is kept to
    1e-12 (the stops' impulses are internal); each hit's step is split at the impact, where the
    relative rate about the hinge axis after it is −e times the one before, to 1e-12 (before the
    impact location, the rates at the start and the end of the hit's step were compared: −e to
    within the turn δ = |ω_a| h of the axis in the step, δ²/2 relative; the end of a split step
    is (1 − θ) h of free motion after the impact, so that comparison no longer holds)."""
    h = 1e-3
    inertia_a, inertia_b = np.diag([0.2, 0.3, 0.4]), np.diag([0.1, 0.15, 0.2])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    a = b.add_node(position=(0, 0, 0), velocity=(0, 0, 0, 0.3, 0, -1.0))
    c = b.add_node(position=(1, 0, 0), velocity=(0, 0, 0, 0.3, 0, 1.0))
    b.add_mass(a, mass=2.0, inertia=np.diag(inertia_a))
    b.add_mass(c, mass=1.0, inertia=np.diag(inertia_b))
    j = b.add_hinge_joint(a, c, (0.5, 0, 0), (0, 0, 1), limits=(-0.3, 0.3), limit_restitution=e)
    sim = kp.Simulation(b.build(), _params(h))

    def momentum() -> np.ndarray:
        return 2.0 * sim.state.v[a, :3] + 1.0 * sim.state.v[c, :3]

    p0 = momentum()
    hits = 0
    for _ in range(1000):
        _, ra = sim.body_frame(a)
        before = (sim.state.v[c, 3:] - sim.state.v[a, 3:]) @ ra[:, 2]
        assert sim.step().converged
        xa, ra = sim.body_frame(a)
        xb, rb = sim.body_frame(c)
        angle = math.atan2(np.cross(ra[:, 0], rb[:, 0]) @ ra[:, 2], ra[:, 0] @ rb[:, 0])
        assert abs(angle) <= 0.3 + 1e-15
        assert np.linalg.norm(xa + ra @ (0.5, 0, 0) - xb - rb @ (-0.5, 0, 0)) <= 1e-12
        assert np.linalg.norm(ra[:, 2] - rb[:, 2]) <= 1e-12
        assert np.abs(momentum() - p0).max() <= 1e-12
        if sim.stop_impulse(j) != 0.0 and before * angle > 0.0:  # a hit (not resting on the stop)
            events = sim.joint_stops.events  # the joint's rates just before and after the impact
            assert events.cuts == 1
            assert abs(events.rate_after[0] / events.rate_before[0] + e) <= 1e-12
            hits += 1
    assert hits >= 2


def test_urdf_limits_are_hard_limits_with_a_restitution() -> None:
    """``load_urdf(..., joint_limits=True, limit_restitution=0)``: the horizontal pendulum of the
    compliant-limit test (2 kg, 0.8 m along x, gravity turning it +θ about y) falls onto its upper
    stop 0.5 rad and rests exactly on it, the stop's torque m g l cos 0.5 within the smooth step's
    fall into the stop (``|tan θ| h² a_max`` relative)."""
    from test_joint_limits import URDF_PENDULUM

    from kynemapy.io.urdf import URDFError, load_urdf

    with pytest.raises(URDFError, match=r"limit_stiffness > 0 .* or limit_restitution"):
        load_urdf(URDF_PENDULUM, joint_limits=True)
    robot = load_urdf(URDF_PENDULUM, joint_limits=True, limit_restitution=0.0)
    j = robot.joint_id["hinge"]
    h = 1e-3
    sim = kp.Simulation(robot.builder.build(), _params(h))
    sim.advance(3000)
    theta, rate, _ = sim.joint_output(j)
    assert theta == pytest.approx(0.5, abs=1e-15)
    assert abs(rate) <= 1e-15
    inertia = 2.0 * 0.8**2 + 0.001
    a_max = 2.0 * G * 0.8 / inertia
    static = 2.0 * G * 0.8 * math.cos(0.5)
    assert -sim.stop_impulse(j) / h == pytest.approx(static, rel=math.tan(0.5) * h * h * a_max)
