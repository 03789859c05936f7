"""Compliant joint limits of hinges and sliders (issue 28 item 2, docs/joints.md, "Compliant joint
limits"): a one-sided spring-damper ``τ_lim = −k_l (x − stop) − c_l ẋ`` beyond a stop, clipped so
that it never pulls, inside Newton with its exact tangent.

Checked against closed forms: a free rotor hitting a stop (linear spring contact: rebound at the
same rate, penetration ``ω₀ √(I/k_l)``, contact time ``π √(I/k_l)``; with damping the rebound rate
of the clipped spring-damper), a pendulum and a slider resting on a stop under gravity (static
penetration = load / k_l), and the iteration matrix against central differences of the residual.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from newton_differences import matrix_and_differences

import kynemapy as kp
from kynemapy.model.errors import ModelError

G = 9.81
INERTIA = 2.0  # kg m², the rotor's about its hinge axis
UPPER = 0.5  # rad, the rotor's upper stop
OMEGA0 = 2.0  # rad/s, the rotor's initial rate


def _params(h: float, exact: bool = True) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12, geometric_stiffness=exact)


# ------------------------------------------------------------------------- a rotor hitting a stop
def rotor(h: float, k_l: float, c_l: float) -> tuple[kp.Simulation, int]:
    """A rotor (I = 2 kg m² about x) on a hinge to the ground with limits (−1, 0.5) rad, no
    gravity, starting at θ = 0 with rate ω₀ = 2 rad/s toward the upper stop."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    n = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0, OMEGA0, 0.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(INERTIA, 1.0, 1.0))
    j = b.add_hinge_joint(
        kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1.0, UPPER), limit_stiffness=k_l, limit_damping=c_l
    )
    return kp.Simulation(b.build(), _params(h)), j


def _hit(h: float, k_l: float, c_l: float, t_end: float) -> tuple[float, float, float, int]:
    """θ(t_end), θ̇(t_end), the largest θ over the steps, the most Newton iterations of a step."""
    sim, j = rotor(h, k_l, c_l)
    largest, most = 0.0, 0
    for _ in range(round(t_end / h)):
        info = sim.step()
        assert info.converged
        most = max(most, info.iterations)
        largest = max(largest, float(sim.joint_output(j)[0]))
    theta, rate, _ = sim.joint_output(j)
    return float(theta), float(rate), largest, most


def test_undamped_stop_returns_the_rotor_at_its_rate_second_order_in_h() -> None:
    """k_l = 2000 N m/rad, c_l = 0: the contact is half a period of the linear spring, π √(I/k_l)
    = 0.0993 s, at its deepest ``ω₀ √(I/k_l)`` = 0.0632 rad past the stop; the rotor leaves at −ω₀
    (the energy is kept) and θ(0.5 s) = 0.5 − ω₀ (0.5 − t_exit).  Measured at h = 2, 1, 0.5,
    0.25 ms: rate errors 8.6e-4, 2.3e-4, 5.3e-5, 1.5e-5 rad/s, angle errors 6.2e-5, 1.8e-5,
    3.8e-6, 1.2e-6 rad (ratios 3.2-4.7: second order through the stop; the law is continuous
    in θ, its slope is not); 2 Newton iterations a step.  The largest sampled angle matches the
    closed form to 2e-7 rad at 0.25 ms (1.9e-7 measured)."""
    k_l = 2000.0
    t_exit = UPPER / OMEGA0 + math.pi * math.sqrt(INERTIA / k_l)
    depth = OMEGA0 * math.sqrt(INERTIA / k_l)
    rate_errors, angle_errors = [], []
    for h in (0.002, 0.001, 0.0005, 0.00025):
        theta, rate, largest, most = _hit(h, k_l, 0.0, 0.5)
        rate_errors.append(abs(rate + OMEGA0))
        angle_errors.append(abs(theta - (UPPER - OMEGA0 * (0.5 - t_exit))))
        assert most == 2
    assert rate_errors[-1] < 2e-5 * OMEGA0
    assert abs(largest - UPPER - depth) < 5e-7
    for errors in (rate_errors, angle_errors):
        for coarse, fine in itertools.pairwise(errors):
            assert coarse / fine > 3.0, errors


def restitution(k_l: float, c_l: float, inertia: float) -> tuple[float, float]:
    """The rebound ratio e = −δ̇_out/δ̇_in of the stop's law I δ̈ = −k δ − sat(c δ̇) (δ the
    penetration, ``sat`` clipping the damper to ``±k δ``), from the closed forms of its two
    linear phases; and the linear spring-damper's exp(−ζπ/√(1 − ζ²)) for comparison.

    Phase 1 (c δ̇ > k δ, from δ = 0, δ̇ = v₀): I δ̈ = −2k δ, δ = v₀/ω₂ sin ω₂t, ω₂ = √(2k/I),
    until tan ω₂t₁ = c ω₂/k.  Phase 2: the damped oscillator I δ̈ + c δ̇ + k δ = 0 from (δ₁, v₁),
    ``δ̇ = e^{−σt} (v₁ cos ω_d t − (ω_n² δ₁ + σ v₁)/ω_d sin ω_d t)``, until k δ + c δ̇ = 0 (the
    force would pull: from there it is 0 and the rate stays); that root by bisection."""
    from scipy.optimize import brentq

    w2 = math.sqrt(2.0 * k_l / inertia)
    phi = math.atan(c_l * w2 / k_l)
    d1, v1 = math.sin(phi) / w2, math.cos(phi)  # per unit v₀
    wn = math.sqrt(k_l / inertia)
    zeta = c_l / (2.0 * math.sqrt(k_l * inertia))
    sigma, wd = zeta * wn, wn * math.sqrt(1.0 - zeta * zeta)

    def delta(t: float) -> float:
        return math.exp(-sigma * t) * (d1 * math.cos(wd * t) + (v1 + sigma * d1) / wd * math.sin(wd * t))

    def rate(t: float) -> float:
        return math.exp(-sigma * t) * (v1 * math.cos(wd * t) - (wn * wn * d1 + sigma * v1) / wd * math.sin(wd * t))

    def force(t: float) -> float:
        return k_l * delta(t) + c_l * rate(t)

    grid = np.linspace(0.0, 2.0 * math.pi / wd, 4001)
    first = next(i for i in range(1, grid.size) if force(grid[i]) <= 0.0)
    t_out = brentq(force, grid[first - 1], grid[first], xtol=1e-15)
    assert delta(t_out) > 0.0  # it leaves the stop's law still inside the stop
    return -rate(t_out), math.exp(-zeta * math.pi / math.sqrt(1.0 - zeta * zeta))


def test_damped_stop_gives_the_closed_form_restitution() -> None:
    """k_l = 2000 N m/rad, ζ = 0.2 (c_l = 25.3 N m s/rad): the rebound ratio is the stop law's
    e = 0.6138 (closed form, :func:`restitution`), not the linear spring-damper's exp(−ζπ/√(1 − ζ²))
    = 0.5266: the damper is clipped to the spring's force (at the entry, so that the force is
    continuous, and on the way out, so that it never pulls).  Measured errors of e at h = 1,
    0.5, 0.25 ms: 1.9e-4, 3.2e-5, 8.1e-6 (ratios 6.1, 3.9); 2 Newton iterations a step."""
    k_l, zeta = 2000.0, 0.2
    c_l = 2.0 * zeta * math.sqrt(k_l * INERTIA)
    e, e_linear = restitution(k_l, c_l, INERTIA)
    assert abs(e - e_linear) > 0.02
    errors = []
    for h in (0.001, 0.0005, 0.00025):
        _, rate, _, most = _hit(h, k_l, c_l, 0.45)
        errors.append(abs(-rate / OMEGA0 - e))
        assert most == 2
    assert errors[-1] < 1e-3 * e
    for coarse, fine in itertools.pairwise(errors):
        assert coarse / fine > 3.0, errors


# ------------------------------------------------------------------------- resting on a stop
def _settle(sim: kp.Simulation, t_end: float, h: float) -> None:
    for _ in range(round(t_end / h)):
        assert sim.step().converged


def test_pendulum_rests_on_its_stop_with_the_static_penetration() -> None:
    """A 2 kg point mass 0.8 m from a hinge about y, its reference 0.6 rad from the vertical
    (gravity −z), limits (−0.2, 0.5) rad, k_l = 500 N m/rad: it falls onto the lower stop and
    settles where ``k_l (−0.2 − θ) = m g l sin(0.6 + θ)`` (solved here by Newton to 1e-15)."""
    m, l, th0, k_l, lower = 2.0, 0.8, 0.6, 500.0, -0.2
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(-l * math.sin(th0), 0.0, -l * math.cos(th0)))
    b.add_mass(n, mass=m, inertia=(1e-3, 1e-3, 1e-3))
    j = b.add_hinge_joint(
        kp.GROUND, n, (0, 0, 0), (0, 1, 0), damping=5.0, limits=(lower, 0.5), limit_stiffness=k_l, limit_damping=40.0
    )
    h = 0.005
    sim = kp.Simulation(b.build(), _params(h))
    _settle(sim, 4.0, h)
    theta, rate, _ = sim.joint_output(j)
    x = lower
    for _ in range(50):
        x -= (k_l * (lower - x) - m * G * l * math.sin(th0 + x)) / (-k_l - m * G * l * math.cos(th0 + x))
    assert abs(rate) < 1e-9
    assert theta == pytest.approx(x, abs=1e-9)
    assert lower - theta == pytest.approx(m * G * l * math.sin(th0 + theta) / k_l, rel=1e-7)
    # the stop pushes θ up by m g l sin θ
    assert sim.joint_effort(j) == pytest.approx(m * G * l * math.sin(th0 + theta), rel=1e-7)


@pytest.mark.parametrize("swapped", [False, True])
def test_slider_rests_on_its_stop_with_the_static_penetration(swapped: bool) -> None:
    """A 2 kg block on a slider at 35° from the horizontal, limits (−0.1, 0.3) m, k_l = 1e4 N/m:
    it slides onto its stop and settles ``m g sin α / k_l`` = 1.13 mm past it.  Given with
    body_b the ground (``swapped``) the joint coordinate is the ground's motion relative to the
    block, x = −s: the block rests on the upper stop, 0.3 + 1.13 mm."""
    m, alpha, k_l = 2.0, math.radians(35.0), 1e4
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.1, 0.2, 0.3))
    b.add_mass(n, mass=m, inertia=(0.1, 0.1, 0.1))
    axis = (math.cos(alpha), 0.0, math.sin(alpha))
    a, c = (n, kp.GROUND) if swapped else (kp.GROUND, n)
    j = b.add_slider_joint(a, c, (0.1, 0.2, 0.3), axis, limits=(-0.1, 0.3), limit_stiffness=k_l, limit_damping=250.0)
    h = 0.005
    sim = kp.Simulation(b.build(), _params(h))
    _settle(sim, 3.0, h)
    x, rate, _ = sim.joint_output(j)
    depth = m * G * math.sin(alpha) / k_l
    assert abs(rate) < 1e-9
    if swapped:
        assert x == pytest.approx(0.3 + depth, abs=1e-12)
    else:
        assert x == pytest.approx(-0.1 - depth, abs=1e-12)
    s = -(0.3 + depth) if swapped else -0.1 - depth  # the block's travel along the axis
    np.testing.assert_allclose(sim.state.q[n, :3], s * np.array(axis), atol=1e-12)


def test_no_force_inside_the_range_and_no_pull_when_leaving() -> None:
    """Inside the limits the joint is free (the effort is zero); past the upper stop the effort
    is between −2 k_l δ and 0 (it never pulls), and equals −k_l δ − c_l θ̇ where that lies within."""
    k_l, c_l, h = 2000.0, 2.0 * 0.4 * math.sqrt(2000.0 * INERTIA), 0.0005
    sim, j = rotor(h, k_l, c_l)
    efforts = []
    for _ in range(round(0.45 / h)):
        assert sim.step().converged
        theta, rate, _ = sim.joint_output(j)
        tau = sim.joint_effort(j)
        efforts.append(tau)
        delta = theta - UPPER
        if delta <= 0.0:
            assert tau == 0.0
            continue
        assert -2.0 * k_l * delta * (1 + 1e-12) <= tau <= 0.0
        if abs(c_l * rate) <= k_l * delta:
            assert tau == pytest.approx(-k_l * delta - c_l * rate, rel=1e-12)
    assert max(efforts) == 0.0 and min(efforts) < -50.0


def test_linearization_has_the_limits_stiffness_and_damping_on_a_stop() -> None:
    """analysis.linearize reduced to the one free coordinate: a 2 kg block resting on its slider's
    lower stop (vertical, k_l = 1e4 N/m, c_l = 250 N s/m) has m ẍ + c_l ẋ + k_l x = 0; the rotor
    between its stops has no stiffness and no damping."""
    from kynemapy.analysis import linearize

    m, k_l, c_l = 2.0, 1e4, 250.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=m, inertia=(0.1, 0.1, 0.1))
    b.add_slider_joint(kp.GROUND, n, (0, 0, 0), (0, 0, 1), limits=(-0.1, 0.3), limit_stiffness=k_l, limit_damping=c_l)
    h = 0.005
    sim = kp.Simulation(b.build(), _params(h))
    _settle(sim, 3.0, h)
    m_r, c_r, k_r = linearize(sim).reduced()
    assert m_r.shape == (1, 1)
    scale = m / m_r[0, 0]  # the null-space basis may be scaled
    assert c_r[0, 0] * scale == pytest.approx(c_l, rel=1e-10)
    assert k_r[0, 0] * scale == pytest.approx(k_l, rel=1e-10)
    sim, _ = rotor(0.001, 2000.0, 25.0)
    _, c_r, k_r = linearize(sim).reduced()
    assert c_r[0, 0] == 0.0 and abs(k_r[0, 0]) < 1e-12


# ------------------------------------------------------------------------- the exact tangent
def three_joints(limits: list[tuple[float, float]] | None, damping: tuple[float, float, float]) -> kp.Model:
    """Three bodies: hinge ground–1, hinge 1–2, slider 2–3 (skew axes), gravity; with ``limits``
    each joint has those limits, k_l = 300 N m/rad (hinges) and 2000 N/m (slider), and c_l
    ``damping``."""
    b = kp.ModelBuilder(gravity=(0, 0, -G))
    n1 = b.add_node(position=(0.5, 0, 0), velocity=(0, 0, 0.3, 0.2, -0.4, 0.5))
    n2 = b.add_node(position=(1.5, 0, 0.0), velocity=(0.1, 0, 0.2, 0.3, 0.5, -0.2))
    n3 = b.add_node(position=(2.0, 0.3, 0.1), velocity=(0.2, 0.1, -0.1, 0.3, -0.2, 0.4))
    for n in (n1, n2, n3):
        b.add_mass(n, mass=1.3, inertia=(0.1, 0.12, 0.15))

    def kw(i: int, k_l: float) -> dict:
        return {} if limits is None else {"limits": limits[i], "limit_stiffness": k_l, "limit_damping": damping[i]}

    b.add_hinge_joint(kp.GROUND, n1, (0, 0, 0), (0.2, 1.0, 0.1), **kw(0, 300.0))
    b.add_hinge_joint(n1, n2, (1.0, 0, 0), (0.1, 0.3, 1.0), **kw(1, 300.0))
    b.add_slider_joint(n2, n3, (1.8, 0.1, 0.05), (1.0, 0.4, -0.2), **kw(2, 2000.0))
    return b.build()


def _branch(k_l: float, c_l: float, delta: float, rate: float) -> str:
    """Which branch of the stop's law ``−k_l δ − sat(c_l ẋ)`` (damper clipped to ``±k_l |δ|``) applies."""
    cap = k_l * abs(delta)
    if abs(c_l * rate) <= cap:
        return "spring-damper"
    return "2 k_l" if c_l * rate * delta > 0.0 else "zero"


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("clipped", [False, True])
def test_iteration_matrix_inside_the_limits_is_the_derivative_of_the_residual(exact: bool, clipped: bool) -> None:
    """At a moving state (7 steps in, 𝒯 ≠ I) each joint is put past a stop: hinge 1 0.05 rad
    past its upper one, hinge 2 0.05 rad below its lower one (``clipped``: past its upper one,
    leaving it), the slider 0.01 m past its upper one.  The limits' share of the matrix (with
    minus without limits, same state) against central differences, in both tangent modes, on
    the spring-damper branch of every joint, and (``clipped``) on the clipped branches: −2 k_l δ
    (hinge 1, slider) and zero (hinge 2)."""
    damping = (100.0, 1000.0, 300.0) if clipped else (1.5, 1.5, 1.5)
    free = three_joints(None, damping)
    with pytest.warns(UserWarning, match="projected"):
        sim = kp.Simulation(free, _params(0.01, exact))
    sim.advance(7)
    x = [float(sim.joint_output(c)[0]) for c in range(3)]
    rates = [float(sim.joint_output(c)[1]) for c in range(3)]
    second = (x[1] - 1.0, x[1] - 0.05) if clipped else (x[1] + 0.05, x[1] + 1.0)
    limits = [(x[0] - 1.0, x[0] - 0.05), second, (x[2] - 1.0, x[2] - 0.01)]
    deltas = [0.05, 0.05 if clipped else -0.05, 0.01]
    branches = [_branch(k, c, d, r) for k, c, d, r in zip((300.0, 300.0, 2000.0), damping, deltas, rates, strict=True)]
    assert branches == (["2 k_l", "zero", "2 k_l"] if clipped else ["spring-damper"] * 3)
    state = sim.state.copy()
    a1, fd1, _ = matrix_and_differences(three_joints(limits, damping), _params(0.01, exact), state)
    a0, fd0, _ = matrix_and_differences(free, _params(0.01, exact), state)
    part, part_fd = a1 - a0, fd1 - fd0
    assert np.abs(part_fd).max() > 100.0  # the limits' share is large
    assert np.abs(part - part_fd).max() < 2e-7 * np.abs(part_fd).max()
    if exact:
        assert np.abs(a1 - fd1).max() < 1e-8 * np.abs(fd1).max()


# ------------------------------------------------------------------------- input
def test_builder_refuses_bad_limits() -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(0, 0, 0))
    b.add_mass(n, mass=1.0, inertia=(1, 1, 1))
    for kwargs, match in (
        ({"limits": (0.5, -0.5), "limit_stiffness": 10.0}, r"hinge.*lower < upper \[rad\]"),
        ({"limits": (0.0, 0.0), "limit_stiffness": 10.0}, r"lower < upper"),
        ({"limits": (-1.0, 1.0)}, r"limits need limit_stiffness > 0 \[N m/rad\]"),
        ({"limits": (-1.0, 1.0), "limit_stiffness": 0.0}, r"limit_stiffness must be > 0"),
        ({"limits": (-1.0, 1.0), "limit_stiffness": 5.0, "limit_damping": -1.0}, r"limit_damping must be >= 0"),
        ({"limits": (-1.0, math.inf), "limit_stiffness": 5.0}, r"upper limit must be finite"),
        ({"limits": (1.0,), "limit_stiffness": 5.0}, r"limits must be a pair"),
        ({"limit_stiffness": 5.0}, r"need limits=\(lower, upper\)"),
    ):
        with pytest.raises(ModelError, match=match):
            b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), **kwargs)
    with pytest.raises(ModelError, match=r"slider.*limit_stiffness must be > 0 \[N/m\]"):
        b.add_slider_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(-1, 1), limit_stiffness=-3.0)


SLIDER_TOML = """
[model]
gravity = [0.0, 0.0, -9.81]

[[node]]
name = "block"
position = [0.0, 0.0, 0.0]

[[mass]]
node = "block"
mass = 2.0
inertia = [0.1, 0.1, 0.1]

[[constraint]]
kind = "slider_joint"
name = "rail"
body_a = "ground"
body_b = "block"
point = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
limits = [-0.1, 0.3]
limit_stiffness = 1e4
limit_damping = 250.0

[step]
h = 0.005
"""


def test_model_file_limit_keys_build_the_builders_model() -> None:
    from kynemapy.model.file import ModelFileError, parse_model_file

    mf = parse_model_file(SLIDER_TOML)
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=2.0, inertia=(0.1, 0.1, 0.1))
    j = b.add_slider_joint(
        kp.GROUND, n, (0, 0, 0), (0, 0, 1), limits=(-0.1, 0.3), limit_stiffness=1e4, limit_damping=250.0
    )
    model = b.build()
    np.testing.assert_array_equal(mf.model.constraint_axes[mf.constraints["rail"]], model.constraint_axes[j])
    np.testing.assert_array_equal(model.constraint_axes[j, 2], (-0.1, 0.3, 1e4))
    with pytest.raises(ModelFileError, match=r"line 21.*lower < upper"):
        parse_model_file(SLIDER_TOML.replace("limits = [-0.1, 0.3]", "limits = [0.3, -0.1]"))
    with pytest.raises(ModelFileError, match=r"limits.*array of 2"):
        parse_model_file(SLIDER_TOML.replace("limits = [-0.1, 0.3]", "limits = 0.3"))


URDF_PENDULUM = """<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <joint name="hinge" type="revolute">
    <parent link="world"/><child link="bob"/>
    <axis xyz="0 1 0"/>
    <limit lower="-0.2" upper="0.5" effort="10" velocity="5"/>
  </joint>
  <link name="bob">
    <inertial><origin xyz="0.8 0 0"/><mass value="2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  </link>
</robot>
"""


def test_urdf_limits_are_compliant_limits_on_request() -> None:
    """``joint_limits=True`` applies ``<limit lower upper>`` with the given stiffness; the
    horizontal pendulum (mass 0.8 m out along x, gravity turning it +θ about y) falls onto the
    upper stop 0.5 rad and rests ``m g l cos θ / k_l`` past it.  Without it the joint is free."""
    from kynemapy.io.urdf import URDFError, load_urdf

    with pytest.raises(URDFError, match="limit_stiffness"):
        load_urdf(URDF_PENDULUM, joint_limits=True)
    free = load_urdf(URDF_PENDULUM).builder.build()
    assert np.all(free.constraint_axes == 0.0)
    k_l = 800.0
    robot = load_urdf(URDF_PENDULUM, joint_limits=True, limit_stiffness=k_l, limit_damping=40.0)
    j = robot.joint_id["hinge"]
    h = 0.005
    sim = kp.Simulation(robot.builder.build(), _params(h))
    _settle(sim, 4.0, h)
    theta, rate, _ = sim.joint_output(j)
    assert abs(rate) < 1e-9
    assert theta - 0.5 == pytest.approx(2.0 * G * 0.8 * math.cos(theta) / k_l, rel=1e-7)
