"""Static equilibrium, linearization and modes (``kynemapy.analysis``) against closed forms.

* A rigid pendulum on a hinge: ω² = m g d / I_pivot, about the hanging equilibrium and about
  the equilibrium under a hinge torque τ (m g d sin θ = τ, then ω² = m g d cos θ / I_pivot).
* A planar double pendulum of two equal point masses (bodies of negligible inertia) on hinges:
  ω² = (g/l)(2 ∓ √2), link-angle ratios θ₂/θ₁ = ±√2.
* A clamped cantilever of Kynema's beam elements (clamped by a fixed BC: the null space of B
  does the clamping): the bending frequencies against Euler–Bernoulli, with structural damping
  μ the damping ratios ζ = μω/2 (D* = μ C* is stiffness-proportional), the state-space static
  gain against the tip compliance, and a static tip load against P L³/(3EI) + P L/(κGA).
* A torque larger than m g d has no equilibrium: the error names the load fraction reached.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.analytic.beams import (
    euler_bernoulli_frequencies,
    timoshenko_frequencies_first_order,
    timoshenko_tip_deflection,
)
from kynemapy.validation.beam_model import isotropic_section, straight_beam

G = 9.81


def pendulum(m: float = 2.0, d: float = 0.7, i_cm: float = 0.05, axis=(0.0, 1.0, 0.0)) -> tuple[kp.Model, int, int]:
    """A body (centre of mass at its node, d below the hinge) on a hinge at the origin."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = b.add_node(position=(0.0, 0.0, -d))
    b.add_mass(body, mass=m, inertia=(i_cm, i_cm, i_cm))
    hinge = b.add_hinge_joint(kp.GROUND, body, point=(0, 0, 0), axis=axis)
    return b.build(), body, hinge


def test_pendulum_frequency_about_the_hanging_equilibrium() -> None:
    m, d, i_cm = 2.0, 0.7, 0.05
    for axis in ((0.0, 1.0, 0.0), (1.0, 1.0, 0.0)):  # a hinge axis off the world axes too
        model, body, _ = pendulum(m, d, i_cm, axis)
        eq = kp.analysis.static_equilibrium(model)
        assert eq.residual_norm < 1e-10 and eq.constraint_violation < 1e-12
        np.testing.assert_allclose(eq.forces[0], [0.0, 0.0, m * G], atol=1e-10)  # the hinge carries the weight
        modes = kp.analysis.modes(eq)
        exact = np.sqrt(m * G * d / (i_cm + m * d * d))
        assert modes.omega.shape == (1,)
        assert abs(modes.omega[0] / exact - 1.0) < 1e-8
        assert abs(modes.frequency[0] * 2 * np.pi / exact - 1.0) < 1e-8
        assert modes.damping_ratio[0] == 0.0
        # the shape: a rotation about the hinge axis and the matching swing of the node
        shape = modes.node_shape(0, body)
        a = np.asarray(axis) / np.linalg.norm(axis)
        np.testing.assert_allclose(np.cross(shape[3:], a), 0.0, atol=1e-12)
        np.testing.assert_allclose(shape[:3], np.cross(shape[3:], [0.0, 0.0, -d]), atol=1e-12)
        # the state-space form has the eigenvalues ±iω
        ss = modes.linearization.state_space()
        s = np.linalg.eigvals(ss.A)
        np.testing.assert_allclose(np.sort(s.imag), [-exact, exact], rtol=1e-8)
        np.testing.assert_allclose(s.real, 0.0, atol=1e-8 * exact)


def test_pendulum_under_a_hinge_torque_from_a_simulation() -> None:
    m, d, i_cm = 2.0, 0.7, 0.05
    model, body, hinge = pendulum(m, d, i_cm)
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.9))
    tau = 0.5 * m * G * d  # θ = 30°
    sim.set_torque(hinge, tau)
    before = sim.save_state()
    eq = kp.analysis.static_equilibrium(sim, load_steps=3)
    np.testing.assert_array_equal(sim.state.f, before.f)  # the simulation is left alone
    w, _, y, _ = eq.q[body, 3:]
    theta = 2.0 * np.arctan2(y, w)
    assert abs(theta - np.arcsin(tau / (m * G * d))) < 1e-10
    np.testing.assert_allclose(eq.positions[body], [-d * np.sin(theta), 0.0, -d * np.cos(theta)], atol=1e-12)
    # modes about the torqued equilibrium: ω² = m g d cos θ / I_pivot
    modes = kp.analysis.modes(eq)
    exact = np.sqrt(m * G * d * np.cos(theta) / (i_cm + m * d * d))
    assert abs(modes.omega[0] / exact - 1.0) < 1e-8
    # the state goes back into a simulation, which then stays at rest
    sim.restore_state(eq.state)
    sim.advance(200)
    assert abs(sim.joint_output(hinge)[0] - theta) < 1e-8


def double_pendulum(m: float, length: float, eps: float) -> tuple[kp.Model, int, int]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    one = b.add_node(position=(0.0, 0.0, -length))
    two = b.add_node(position=(0.0, 0.0, -2.0 * length))
    for node in (one, two):
        b.add_mass(node, mass=m, inertia=(eps, eps, eps))
    b.add_hinge_joint(kp.GROUND, one, point=(0, 0, 0), axis=(0, 1, 0))
    b.add_hinge_joint(one, two, point=(0, 0, -length), axis=(0, 1, 0))
    return b.build(), one, two


def test_double_pendulum_of_point_masses() -> None:
    m, length = 1.5, 0.8
    eps = 1e-12 * m * length**2  # inertia about the centre: a point mass to 1e-12
    model, one, two = double_pendulum(m, length, eps)
    modes = kp.analysis.modes(kp.analysis.static_equilibrium(model))
    exact = np.sqrt(G / length * np.array([2.0 - np.sqrt(2.0), 2.0 + np.sqrt(2.0)]))
    assert modes.omega.shape == (2,)
    np.testing.assert_allclose(modes.omega, exact, rtol=1e-8)
    # link angles (the bodies' rotations about y): θ₂/θ₁ = +√2 (in phase), −√2 (opposed)
    ratio = [modes.node_shape(k, two)[4] / modes.node_shape(k, one)[4] for k in range(2)]
    np.testing.assert_allclose(ratio, [np.sqrt(2.0), -np.sqrt(2.0)], rtol=1e-8)
    # mass-normalized in the full coordinates
    lin = modes.linearization
    np.testing.assert_allclose(modes.shapes.T @ (lin.M @ modes.shapes), np.eye(2), atol=1e-9)


LENGTH, EI, MASS = 1.0, 1.0, 1.0
GAMMA = 1e6  # κGA = EA = GAMMA · EI/L²: shear-stiff


def cantilever(order: int = 8, n_elements: int = 4, rotary: float = 0.0, mu: float = 0.0):
    ga = GAMMA * EI / LENGTH**2
    m_star, c_star = isotropic_section(ga, ga, 1.0, EI, EI, m=MASS, j=(rotary, rotary, rotary))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(
        b, LENGTH, m_star, c_star, n_elements=n_elements, order=order, acceleration=True, mu=[mu] * 6 if mu else None
    )
    b.add_fixed_bc(beam.root)
    return b.build(), beam


def test_cantilever_bending_frequencies() -> None:
    """4 elements of order 8: the discretization error is below 1e-8 (the validation case
    beam_frequencies measures it), so what is left against Euler–Bernoulli is the shear
    deformation, 2e-6 to 4e-5 at κGA = 1e6 EI/L², and against EB with its first-order shear
    correction < 1e-8."""
    model, _ = cantilever()
    modes = kp.analysis.modes(model)
    w = modes.omega[:6]
    # what a backward-stable symmetric eigensolver guarantees for ω_1: a relative error in ω²
    # of about eps · ω_max² / ω_1² (the axial and shear modes reach 2.3e5 rad/s against 3.5:
    # 9e-7); measured 4e-12 with OpenBLAS's threads, 1.5e-8 on one thread
    roundoff = 0.5 * np.finfo(float).eps * (modes.omega.max() / w[0]) ** 2
    np.testing.assert_allclose(w[0::2], w[1::2], rtol=roundoff)  # both bending planes
    w_eb = euler_bernoulli_frequencies(LENGTH, EI, MASS, 3)
    w_t = timoshenko_frequencies_first_order(LENGTH, EI, GAMMA * EI / LENGTH**2, MASS, 3)
    np.testing.assert_allclose(w[0::2], w_eb, rtol=1e-4)
    np.testing.assert_allclose(w[0::2], w_t, rtol=max(1e-8, roundoff))
    # shapes: mass-normalized, stiffness-orthogonal, clamped (B φ = 0) in the full coordinates
    lin, phi = modes.linearization, modes.shapes[:, :6]
    np.testing.assert_allclose(phi.T @ (lin.M @ phi), np.eye(6), atol=1e-10)
    np.testing.assert_allclose(phi.T @ (lin.K @ phi), np.diag(w**2), atol=1e-9 * w[-1] ** 2)
    np.testing.assert_allclose(lin.B @ phi, 0.0, atol=1e-14)
    f1 = 1.8751040687**2 * np.sqrt(EI / (MASS * LENGTH**4)) / (2 * np.pi)  # [Hz]
    np.testing.assert_allclose(modes.frequency[0], f1, rtol=1e-5)


def test_cantilever_damping_ratios_and_state_space_gain() -> None:
    """D* = μ C* makes C = μ K at the unstressed reference (no geometric stiffness), so every
    mode has ζ = μ ω/2 and keeps its natural frequency.  The state-space static gain from a tip
    force to the tip deflection is the tip compliance L³/(3EI) + L/(κGA)."""
    mu = 1e-3
    model, beam = cantilever(rotary=1e-4, mu=mu)
    undamped = kp.analysis.modes(model, n_modes=6, damped=False)
    damped = kp.analysis.modes(model, n_modes=6)
    assert damped.shapes.dtype.kind == "c"
    # the first-order pencil's low eigenvalues carry round-off of ε × its largest ones (axial and
    # shear frequencies ~1e5 rad/s against 3.5 rad/s): measured 1e-8 on ω, 4e-8 on ζ
    np.testing.assert_allclose(damped.omega, undamped.omega, rtol=5e-8)
    np.testing.assert_allclose(damped.damping_ratio, 0.5 * mu * undamped.omega, rtol=5e-7)
    lin = damped.linearization
    ss = lin.state_space(inputs=[(beam.tip, 2)], outputs=[(beam.tip, 2)])
    m_r, _, k_r = lin.reduced()
    r = m_r.shape[0]
    compliance = timoshenko_tip_deflection(LENGTH, EI, GAMMA * EI / LENGTH**2, 1.0)
    # static gain C₁ K_r⁻¹ M_r B₂ (B₂ = M_r⁻¹ Nᵀ S_u), and −C A⁻¹ B (A is ill-conditioned: 1e-6)
    gain = (ss.C[:, :r] @ np.linalg.solve(k_r, m_r @ ss.B[r:]))[0, 0]
    assert abs(gain / compliance - 1.0) < 1e-8
    assert abs(-(ss.C @ np.linalg.solve(ss.A, ss.B))[0, 0] / compliance - 1.0) < 1e-6
    assert ss.A.shape == (2 * r, 2 * r) and ss.B.shape == (2 * r, 1) and ss.D.shape == (1, 1)


def test_cantilever_tip_load() -> None:
    """P L²/EI = 1e-4: the geometric nonlinearity is of relative order (δ/L)² ≈ 1e-9; the
    discretization (order 8) is exact for the linear cubic deflection."""
    model, beam = cantilever()
    p = 1e-4 * EI / LENGTH**2
    loads = np.zeros((model.n_nodes, 6))
    loads[beam.tip, 2] = p
    eq = kp.analysis.static_equilibrium(model, loads=loads, load_steps=2)
    exact = timoshenko_tip_deflection(LENGTH, EI, GAMMA * EI / LENGTH**2, p)
    assert abs(eq.q[beam.tip, 2] / exact - 1.0) < 1e-6
    np.testing.assert_allclose(eq.forces[0], [0.0, 0.0, -p], atol=1e-12)  # the clamp's reaction
    np.testing.assert_allclose(eq.torques[0], [0.0, p * LENGTH, 0.0], rtol=1e-6)


def test_no_equilibrium_names_the_load_fraction_reached() -> None:
    m, d = 2.0, 0.7
    model, _, hinge = pendulum(m, d)
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.9))
    sim.set_torque(hinge, 2.0 * m * G * d)  # beyond the largest gravity moment m g d
    with pytest.raises(kp.analysis.StaticEquilibriumError) as caught:
        kp.analysis.static_equilibrium(sim, load_steps=4, bisections=3)
    error = caught.value
    assert 0.25 <= error.load_fraction <= 0.5  # sin θ = 2 × fraction has no solution past 1/2
    assert error.attempted_fraction > error.load_fraction
    assert f"load fraction {error.load_fraction:.6g} of the full load reached" in str(error)
    assert "residual norm" in str(error) and error.residual_norm > 0.0
    assert isinstance(error, kp.ConvergenceError)


def test_tensioned_spring_and_a_free_rotation() -> None:
    """A body on a linear spring from a fixed point, pulled across the spring by F: at rest the
    spring lies along F with length l = L0 + F/k (tension T = F); its modes are the axial one
    ω² = k/m, two transverse (string) ones ω² = T/(m l), and three rigid rotations of the body
    about its centre (no stiffness: the static Newton steps take least-squares steps there)."""
    length, l0, k, force, m = 1.0, 0.5, 100.0, 30.0, 2.0
    b = kp.ModelBuilder()
    anchor = b.add_node(position=(0, 0, 0))
    body = b.add_node(position=(length, 0, 0))
    b.add_mass(body, mass=m, inertia=(0.1, 0.2, 0.3))
    b.add_spring(anchor, body, stiffness=k, undeformed_length=l0)
    b.add_fixed_bc_3dof(anchor)
    model = b.build()
    loads = np.zeros((model.n_nodes, 6))
    loads[body, 1] = force
    eq = kp.analysis.static_equilibrium(model, loads=loads, load_steps=3)
    l = l0 + force / k
    np.testing.assert_allclose(eq.positions[body], [0.0, l, 0.0], atol=1e-10)
    np.testing.assert_allclose(eq.q[body, 3:], [1.0, 0.0, 0.0, 0.0], atol=1e-12)  # the free rotation stays
    np.testing.assert_allclose(eq.forces[0], [0.0, -force, 0.0], atol=1e-9)  # the BC holds the anchor back
    modes = kp.analysis.modes(eq)
    assert np.abs(modes.omega[:3]).max() < 1e-6
    np.testing.assert_allclose(modes.omega[3:], np.sqrt([force / (m * l), force / (m * l), k / m]), rtol=1e-10)
    axial = modes.node_shape(5, body)
    np.testing.assert_allclose(np.abs(axial[:3]) / np.abs(axial[:3]).max(), [0.0, 1.0, 0.0], atol=1e-10)


def test_the_damping_matrix_of_a_spinning_body_is_its_gyroscopic_matrix() -> None:
    """The engine's γ′-part for a body spinning at ω (centre of mass at its node) is the
    gyroscopic block ω̃J − (Jω)~ on δω; in the coordinates' rates, δω = δθ̇ − ω̃δθ, C gains
    M W = −Jω̃; M's block is J."""
    inertia = np.array([1.0, 2.0, 3.0])
    omega = np.array([0.3, -0.5, 0.7])
    b = kp.ModelBuilder()
    body = b.add_node(position=(0, 0, 0), velocity=(0.0, 0.0, 0.0, *omega))
    b.add_mass(body, mass=1.5, inertia=inertia)
    lin = kp.analysis.linearize(b.build())

    def tilde(a: np.ndarray) -> np.ndarray:
        return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])

    j = np.diag(inertia)
    np.testing.assert_allclose(lin.M.toarray()[3:, 3:], j, atol=1e-15)
    np.testing.assert_allclose(
        lin.C.toarray()[3:, 3:], tilde(omega) @ j - tilde(j @ omega) - j @ tilde(omega), atol=1e-15
    )
    np.testing.assert_allclose(lin.C.toarray()[:3], 0.0, atol=1e-15)
    assert lin.B.shape == (0, 6) and lin.null_space.shape == (6, 6)


def test_modes_about_a_state_out_of_balance_warn() -> None:
    model, _, _ = pendulum()
    with pytest.warns(UserWarning, match="not a static equilibrium"):
        kp.analysis.modes(model)  # the initial state: λ = 0 under gravity


def test_spinning_axisymmetric_bodies_in_the_inertial_frame() -> None:
    """Linearized about a spinning state in the inertial frame (δω = δθ̇ − ω̃δθ taken into C and
    K): a free axisymmetric body spinning at ω about its axis nutates at J₃ω/J₁ (the axis
    coning in space); a sleeping heavy top (centre of mass l above the pivot, J₁ about the
    centre of mass, J₁′ = J₁ + m l²) precesses and nutates at
    λ = (J₃ω ∓ √(J₃²ω² − 4J₁′ m g l))/(2J₁′), from J₁′z̈ − iJ₃ωż − m g l z = 0."""
    j1, j3, w = 2.0, 3.0, 5.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_node(position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0, 0.0, 0.0, w))
    b.add_mass(body, mass=1.5, inertia=(j1, j1, j3))
    free = np.abs(kp.analysis.modes(b.build()).omega)
    assert np.min(np.abs(free - j3 * w / j1)) < 1e-10 * w
    m, l, j1, j3, w = 1.5, 0.4, 0.03, 0.05, 60.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    top = b.add_node(position=(0.0, 0.0, l))
    b.add_mass(top, mass=m, inertia=(j1, j1, j3))
    b.add_spherical_joint(top, point=(0.0, 0.0, 0.0))
    model = b.build()
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, w))  # the spinning state and its λ
    lin = kp.analysis.linearize(model, state=st.state, inputs=st.inputs)  # inertial frame
    assert lin.frame_rate is None
    omega = kp.analysis.modes(lin).omega
    j1p = j1 + m * l * l
    disc = np.sqrt((j3 * w) ** 2 - 4.0 * j1p * m * G * l)
    exact = np.array([j3 * w - disc, j3 * w + disc]) / (2.0 * j1p)
    np.testing.assert_allclose(omega[omega > 1e-3], exact, rtol=1e-10)


def test_four_bar_linkage_mode_against_its_reduced_equation() -> None:
    """A planar four-bar (ground pivots A = (0, 0), D = (1, 0) m; crank 0.6 m, coupler 1 m, rocker
    0.8 m; bars of 1, 2, 1.5 kg with J = mL²/12, hanging under gravity −y): the reduced equation
    in the crank angle θ is M(θ)θ̈ + ½M′θ̇² + V′(θ) = 0, with M(θ) = Σ m|ẋ_cm/θ̇|² + J(φ̇/θ̇)² and
    V(θ) = Σ m g y_cm from the loop closure (circle intersection), written here independently;
    the equilibrium is V′ = 0 and the mode ω² = V″/M there.  The engine's joints hold the
    linkage in its plane without redundant rows (hinges at A and B, a ball at C, a cylindrical
    joint at D: 17 rows, 18 DOFs).  Measured: θ to 4e-15 rad, ω to 9e-12 (the 5-point
    differences of the reference)."""
    import math

    import scipy.optimize

    a_pt, d_pt = np.array([0.0, 0.0]), np.array([1.0, 0.0])
    lengths, masses = (0.6, 1.0, 0.8), (1.0, 2.0, 1.5)

    def joints(theta: float) -> tuple[np.ndarray, np.ndarray]:
        b_pt = a_pt + lengths[0] * np.array([math.cos(theta), math.sin(theta)])
        d = d_pt - b_pt
        dist = np.linalg.norm(d)
        x = (lengths[1] ** 2 - lengths[2] ** 2 + dist**2) / (2.0 * dist)
        h = math.sqrt(lengths[1] ** 2 - x**2)
        e = d / dist
        n = np.array([-e[1], e[0]])
        c1, c2 = b_pt + x * e + h * n, b_pt + x * e - h * n
        return b_pt, (c1 if c1[1] < c2[1] else c2)  # the branch hanging below

    def bars(theta: float) -> tuple[list[np.ndarray], list[float]]:
        b_pt, c_pt = joints(theta)
        ends = ((a_pt, b_pt), (b_pt, c_pt), (d_pt, c_pt))
        return [(p + q) / 2.0 for p, q in ends], [math.atan2(q[1] - p[1], q[0] - p[0]) for p, q in ends]

    def deriv(f, t: float, k: float = 1e-3) -> float:
        return (f(t - 2 * k) - 8 * f(t - k) + 8 * f(t + k) - f(t + 2 * k)) / (12 * k)

    def potential(t: float) -> float:
        return sum(m * G * p[1] for m, p in zip(masses, bars(t)[0], strict=True))

    def reduced_mass(t: float) -> float:
        total = 0.0
        for i, (m, length) in enumerate(zip(masses, lengths, strict=True)):
            vx = deriv(lambda s, i=i: bars(s)[0][i][0], t)
            vy = deriv(lambda s, i=i: bars(s)[0][i][1], t)
            w = deriv(lambda s, i=i: bars(s)[1][i], t)  # the bars stay away from ±π here
            total += m * (vx * vx + vy * vy) + m * length**2 / 12.0 * w * w
        return total

    theta_eq = scipy.optimize.brentq(lambda t: deriv(potential, t), -2.5, -0.8)
    exact = math.sqrt(deriv(lambda t: deriv(potential, t), theta_eq) / reduced_mass(theta_eq))
    # the model, assembled 0.2 rad away from the equilibrium
    centres, _ = bars(theta_eq + 0.2)
    b_pt, c_pt = joints(theta_eq + 0.2)
    b = kp.ModelBuilder(gravity=(0.0, -G, 0.0))
    nodes = []
    for p, m, length in zip(centres, masses, lengths, strict=True):
        node = b.add_node(position=(p[0], p[1], 0.0))
        j = m * length**2 / 12.0
        b.add_mass(node, mass=m, inertia=(j, j, j))
        nodes.append(node)
    z = (0.0, 0.0, 1.0)
    b.add_hinge_joint(kp.GROUND, nodes[0], (*a_pt, 0.0), z)
    b.add_hinge_joint(nodes[0], nodes[1], (*b_pt, 0.0), z)
    b.add_ball_joint(nodes[1], nodes[2], (*c_pt, 0.0))
    b.add_cylindrical_joint(kp.GROUND, nodes[2], (*d_pt, 0.0), z)
    model = b.build()
    eq = kp.analysis.static_equilibrium(model)
    crank = np.asarray(model.x0)[nodes[0], :2] + eq.q[nodes[0], :2] - a_pt
    assert abs(math.atan2(crank[1], crank[0]) - theta_eq) < 1e-10
    modes = kp.analysis.modes(eq)
    assert modes.omega.shape == (1,)
    assert abs(modes.omega[0] / exact - 1.0) < 1e-9
