"""Two-body joints at system level (ball, hinge, slider, cylindrical, universal, planar, weld, distance).

* exact Newton: with ``geometric_stiffness=True`` the Newton error contracts quadratically
  (``e_{k+1}/e_k²`` bounded and tiny) on the heavy top, a double pendulum of ball joints and a
  four-bar linkage; Kynema's tangent converges only linearly on the same steps;
* reactions: a pendulum's joint force is the analytic centripetal-plus-gravity force; a body
  welded to the ground carries exactly its weight;
* consistent initial accelerations satisfy the acceleration-level constraints (Φ̈ = 0 by finite
  differences along the trajectory) and match a pendulum's closed form;
* inputs and outputs: hinge torque and slider force against constant-acceleration closed forms,
  unwrapped angles, swapped ground sides;
* free motion along each joint's freedoms, builder validation, the redundant four-bar diagnostic.

Newton iterations per step measured here (atol = rtol = 1e-10, see the test and docs/joints.md):
heavy top (h = 0.01) 4 exact vs 5–6 Kynema; double pendulum (h = 0.02) 4 vs 5–8;
four-bar (h = 0.04, crank torque 5 N m) 4 vs 5–9.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.engine.constraints import dispatch
from kynemapy.model import kinds

G = 9.81
A4, B4, C4, D4 = np.array([0, 0, 0.0]), np.array([0, 1, 0.0]), np.array([2, 1.5, 0.0]), np.array([2, 0, 0.0])


# ------------------------------------------------------------------------------------------ models
def heavy_top(kynema: bool) -> kp.Model:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    top = b.add_node(position=(0, 1, 0), velocity=(4.61538, 0, 0, 0, 150, -4.61538))
    b.add_mass(top, mass=15.0, inertia=(0.234375, 0.46875, 0.234375))
    if kynema:
        b.add_spherical_joint(top, point=(0, 0, 0))
    else:
        b.add_ball_joint(kp.GROUND, top, point=(0, 0, 0))
    return b.build()


def double_pendulum() -> kp.Model:
    """Two rods (1 m, 1 kg) on ball joints, swinging out of plane."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n1 = b.add_node(position=(0.5, 0, 0), velocity=(0, 1.0, 0, 0, 0, 2.0))
    n2 = b.add_node(position=(1.5, 0, 0), velocity=(0, 3.0, 0.5, 0, -0.5, 2.0))
    for n in (n1, n2):
        b.add_mass(n, mass=1.0, inertia=(0.002, 1 / 12 + 0.001, 1 / 12 + 0.001))
    b.add_ball_joint(kp.GROUND, n1, (0, 0, 0))
    b.add_ball_joint(n1, n2, (1.0, 0, 0))
    return b.build()


def four_bar(variant: str = "cylindrical") -> kp.Model:
    """Crank A–B, coupler B–C, rocker C–D in the xy-plane, hinges about z at the ground pivots A and D.

    ``hinges``: hinges at B and C too (3 redundant rows in 3-D); ``cylindrical``: ball at B and a
    cylindrical joint along z at C; ``universal``: ball at B, universal at C (axis_a = z in the coupler).
    """
    b = kp.ModelBuilder(gravity=(0, -G, 0))
    links = []
    for p, q in ((A4, B4), (B4, C4), (C4, D4)):
        n = b.add_node(position=(p + q) / 2)
        length = np.linalg.norm(q - p)
        b.add_mass(n, mass=1.0, inertia=(0.01 + length * length / 12,) * 3)
        links.append(n)
    crank, coupler, rocker = links
    z = (0, 0, 1)
    b.add_hinge_joint(kp.GROUND, crank, A4, z)
    if variant == "hinges":
        b.add_hinge_joint(crank, coupler, B4, z)
        b.add_hinge_joint(coupler, rocker, C4, z)
    elif variant == "universal":
        b.add_ball_joint(crank, coupler, B4)
        b.add_universal_joint(coupler, rocker, C4, z, (C4 - D4) / np.linalg.norm(C4 - D4))
    else:
        b.add_ball_joint(crank, coupler, B4)
        b.add_cylindrical_joint(coupler, rocker, C4, z)
    b.add_hinge_joint(rocker, kp.GROUND, D4, z)
    return b.build()


# ------------------------------------------------------------------------------ Newton convergence
def newton_history(model: kp.Model, h: float, n: int, exact: bool, torque: float = 0.0):
    p = kp.StepParameters(h=h, rho_inf=0.9, geometric_stiffness=exact, atol=1e-10, rtol=1e-10, max_iter=12)
    sim = kp.Simulation(model, p, initial_velocities="keep")  # as measured in docs/joints.md
    if torque:
        sim.set_torque(0, torque)
    iterations, ratios = [], []
    for _ in range(n):
        info = sim.step()
        e = info.errors
        iterations.append(info.iterations)
        # e[0] measures λ from 0 (always huge); from e[1] on, pairs above the round-off floor (~1e-2)
        ratios += [e[k + 1] / e[k] ** 2 for k in range(1, len(e) - 1) if e[k + 1] > 1.0]
    return np.array(iterations), max(ratios, default=0.0)


@pytest.mark.parametrize(
    ("name", "h", "n", "torque"),
    [("heavy_top_kynema_joint", 0.01, 20, 0.0), ("heavy_top_ball_joint", 0.01, 20, 0.0),
     ("double_pendulum", 0.02, 20, 0.0), ("four_bar", 0.04, 30, 5.0)],
)  # fmt: skip
def test_exact_tangent_converges_quadratically(name: str, h: float, n: int, torque: float) -> None:
    model = {
        "heavy_top_kynema_joint": lambda: heavy_top(True),
        "heavy_top_ball_joint": lambda: heavy_top(False),
        "double_pendulum": double_pendulum,
        "four_bar": four_bar,
    }[name]()
    it_exact, ratio_exact = newton_history(model, h, n, True, torque)
    it_kynema, ratio_kynema = newton_history(model, h, n, False, torque)
    # quadratic: e_{k+1} <= C e_k² with a small C (weighted errors, atol = 1e-10); measured <= 2e-12
    assert 0.0 < ratio_exact < 1e-10, (name, ratio_exact)
    # Kynema's tangent (no K^Φ) contracts linearly: the same ratio grows to >= 7e-7 on these steps
    assert ratio_kynema > 1e4 * ratio_exact, (name, ratio_kynema, ratio_exact)
    assert it_exact.max() <= 4
    assert it_exact.sum() < it_kynema.sum()


# -------------------------------------------------------------------------------------- reactions
M, L, IY = 2.0, 0.8, 0.05


def pendulum(kind: str, swap: bool = False, omega0: float = 0.0):
    """A body (mass centre at its node, (L, 0, 0)) hung from the origin, released horizontally."""
    b = kp.ModelBuilder(gravity=(0, 0, -G))
    n = b.add_node(position=(L, 0, 0), velocity=(0, 0, -L * omega0, 0, omega0, 0))
    b.add_mass(n, mass=M, inertia=(0.03, IY, 0.04))
    a_, b_ = (n, kp.GROUND) if swap else (kp.GROUND, n)
    if kind == "ball":
        j = b.add_ball_joint(a_, b_, (0, 0, 0))
    elif kind == "hinge":
        j = b.add_hinge_joint(a_, b_, (0, 0, 0), (0, 1, 0))
    else:
        pa, pb = ((L, 0, 0), (0, 0, 0)) if swap else ((0, 0, 0), (L, 0, 0))
        j = b.add_distance_constraint(a_, b_, pa, pb)
    return b.build(), n, j


@pytest.mark.parametrize("swap", [False, True], ids=["ground_a", "ground_b"])
@pytest.mark.parametrize("kind", ["ball", "hinge", "distance"])
def test_pendulum_joint_force_is_centripetal_plus_gravity(kind: str, swap: bool) -> None:
    """Planar swing φ(t) below the horizontal: with J = mL² + I (I = 0 for the rod: the body turns
    freely on it), φ̇² = 2mgL sin φ / J, φ̈ = mgL cos φ / J; the joint force on the body is
    m a − m g.  The torque about the joint point vanishes (ball, rod; hinge: principal axes)."""
    model, n, j = pendulum(kind, swap)
    h = 1e-3
    sim = kp.Simulation(model, kp.StepParameters(h=h, rho_inf=1.0, atol=1e-10, rtol=1e-8, geometric_stiffness=True))
    inertia = 0.0 if kind == "distance" else IY
    J = M * L * L + inertia
    worst = worst_eom = 0.0
    for _ in range(600):
        sim.step()
        x = sim.state.x[n, :3]
        phi = np.arctan2(-x[2], x[0])
        rate2 = 2 * M * G * L * np.sin(phi) / J
        accel = M * G * L * np.cos(phi) / J
        a = L * accel * np.array([-np.sin(phi), 0, -np.cos(phi)]) - L * rate2 * np.array([np.cos(phi), 0, -np.sin(phi)])
        force, torque = sim.reaction(j)
        worst = max(worst, np.abs(force - (M * a + [0, 0, M * G])).max() / (M * G))
        worst_eom = max(worst_eom, np.abs(force - M * (sim.state.vd[n, :3] + [0, 0, G])).max() / (M * G))
        assert np.abs(torque).max() < 1e-9 * M * G * L
    assert phi > 1.8  # swung through the bottom
    assert worst < 1e-4  # time discretisation error (measured 1.8e-5 ball/hinge, 2.1e-5 rod at h = 1e-3)
    assert worst_eom < 1e-12  # the reaction is exactly the body's unbalanced force


@pytest.mark.parametrize("swap", [False, True], ids=["ground_a", "ground_b"])
def test_welded_body_carries_exactly_its_weight(swap: bool) -> None:
    mass, c, p = 3.0, np.array([0.4, -0.2, 1.0]), np.array([0.1, 0.3, 0.5])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=c, orientation=(np.cos(0.3), np.sin(0.3), 0, 0))
    b.add_mass(n, mass=mass, inertia=(0.1, 0.2, 0.3))
    weld = b.add_weld_joint(n, kp.GROUND, p) if swap else b.add_weld_joint(kp.GROUND, n, p)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, rho_inf=0.5, geometric_stiffness=True))
    weight = np.array([0.0, 0.0, -mass * G])
    for _ in range(2):
        force, torque = sim.reaction(weld)
        np.testing.assert_allclose(force, -weight, rtol=0, atol=1e-12 * mass * G)
        np.testing.assert_allclose(torque, -np.cross(c - p, weight), rtol=0, atol=1e-12 * mass * G)
        for _ in range(10):
            sim.step()
    np.testing.assert_allclose(sim.state.q[n], [0, 0, 0, 1, 0, 0, 0], atol=1e-12)


# ------------------------------------------------------------------ consistent initial accelerations
@pytest.mark.parametrize("kind", ["ball", "hinge", "distance"])
def test_initial_acceleration_of_a_swinging_pendulum_is_the_closed_form(kind: str) -> None:
    """Horizontal pendulum swinging up at ω₀ (about −y): ü = (−L ω₀², 0, −L φ̈₀), ω̇ = φ̈₀ ŷ, φ̈₀ = mgL/J."""
    omega0 = 1.7
    model, n, j = pendulum(kind, omega0=-omega0)
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3))
    J = M * L * L + (0.0 if kind == "distance" else IY)
    accel = M * G * L / J
    np.testing.assert_allclose(sim.state.vd[n, :3], [-L * omega0**2, 0, -L * accel], rtol=1e-12, atol=1e-12)
    if kind != "distance":
        np.testing.assert_allclose(sim.state.vd[n, 3:], [0, accel, 0], rtol=1e-12, atol=1e-12)
    force, _ = sim.reaction(j)
    np.testing.assert_allclose(force, M * (sim.state.vd[n, :3] + [0, 0, G]), rtol=1e-12, atol=1e-12)


def every_joint_chain() -> kp.Model:
    """A chain ground–1–2–…–8 using every two-body joint once (not redundant), spinning and moving."""
    rng = np.random.default_rng(5)
    b = kp.ModelBuilder(gravity=(0.3, -1.0, -G))
    nodes = []
    for i in range(8):
        v = np.concatenate([rng.normal(size=3), rng.normal(size=3)])
        n = b.add_node(position=(i + 0.5, 0.1 * i, 0.0), velocity=v)
        b.add_mass(n, mass=1.0 + 0.1 * i, inertia=(0.1, 0.2, 0.15))
        nodes.append(n)
    n0, n1, n2, n3, n4, n5, n6, n7 = nodes
    b.add_ball_joint(kp.GROUND, n0, (0, 0, 0))
    b.add_hinge_joint(n0, n1, (1.0, 0.05, 0), (0.2, 0.3, 1.0), torque=0.7)
    b.add_slider_joint(n1, n2, (2.0, 0.15, 0), (1.0, 0.2, 0.1), force=-1.3)
    b.add_cylindrical_joint(n2, n3, (3.0, 0.25, 0), (0.3, 1.0, 0.2))
    b.add_universal_joint(n3, n4, (4.0, 0.35, 0), (0, 0, 1), (1, 0, 0))
    b.add_planar_joint(n4, n5, (5.0, 0.45, 0), (0.1, 0.2, 1.0))
    b.add_distance_constraint(n5, n6, (5.5, 0.5, 0.2), (6.2, 0.6, -0.1))
    b.add_weld_joint(n6, n7, (7.0, 0.65, 0))
    return b.build()


def constraint_values(model: kp.Model, q: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    phi, bb, bt, k = np.zeros(6), np.zeros((6, 6)), np.zeros((6, 6)), np.zeros((2, 2, 6, 6))
    ground = np.array([0.0, 0, 0, 1, 0, 0, 0])
    out = []
    for c in range(model.n_constraints):
        base, target = model.constraint_node[c]
        dispatch.evaluate(
            int(model.constraint_kind[c]), model.constraint_X0[c], model.constraint_axes[c],
            model.constraint_geometry[c], float(model.constraint_param[c]), inputs[c],
            ground if base < 0 else q[base], q[target], np.zeros(6), False, phi, bb, bt, k,
            np.zeros((8, 3)), np.zeros((6, 4)), np.zeros((8, 3, 3)),
        )  # fmt: skip
        out.extend(phi[: model.constraint_n_rows[c]])
    return np.array(out)


def test_initial_accelerations_satisfy_every_joints_acceleration_constraint() -> None:
    """Φ̈ = 0 at t = 0 along q(t) = q ⊕ (t v + t²/2 v̇), v̇ the computed initial accelerations
    (the velocities are random, so Φ̇ ≠ 0: only the acceleration level is imposed)."""
    model = every_joint_chain()
    # the random velocities kept as given (not projected onto B v = 0)
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3), initial_velocities="keep")
    q, v, vd = sim.state.q, sim.state.v, sim.state.vd
    assert np.abs(vd).max() > 1.0  # not a trivial solution

    def moved(t: float) -> np.ndarray:
        out = q.copy()
        out[:, :3] += t * v[:, :3] + 0.5 * t * t * vd[:, :3]
        for i in range(model.n_nodes):
            phi = t * v[i, 3:] + 0.5 * t * t * vd[i, 3:]
            angle = np.linalg.norm(phi)
            dq = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * phi / angle]) if angle else [1, 0, 0, 0]
            w1, x1, y1, z1 = dq
            w2, x2, y2, z2 = q[i, 3:]
            out[i, 3:] = [
                w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
            ]
        return out

    h = 1e-4
    ci = sim.inputs.constraint_input
    second = (constraint_values(model, moved(h), ci) - 2 * constraint_values(model, q, ci)
              + constraint_values(model, moved(-h), ci)) / (h * h)  # fmt: skip
    first = (constraint_values(model, moved(h), ci) - constraint_values(model, moved(-h), ci)) / (2 * h)
    assert np.abs(first).max() > 0.1  # random velocities violate the velocity constraints
    assert np.abs(second).max() < 1e-5 * max(1.0, np.abs(vd).max())


# ---------------------------------------------------------------------------- inputs and outputs
def test_hinge_torque_spins_the_body_up_and_the_angle_is_unwrapped() -> None:
    """θ̈ = τ/I about the hinge axis; the output angle keeps counting past ±π (several turns)."""
    inertia, tau, h = 0.4, 2.0, 0.01
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    results = []
    for swap in (False, True):
        b = kp.ModelBuilder()
        n = b.add_node(position=(0.3, 0.2, 0.1))
        b.add_mass(n, mass=4.0, inertia=(inertia,) * 3)
        if swap:  # same motion: the ground is body_b, the torque on body_a is −τ, the angle is −θ
            hinge = b.add_hinge_joint(n, kp.GROUND, (0.3, 0.2, 0.1), axis, torque=-tau)
        else:
            hinge = b.add_hinge_joint(kp.GROUND, n, (0.3, 0.2, 0.1), axis, torque=tau)
        sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.8, atol=1e-10, rtol=1e-10))
        sign = -1.0 if swap else 1.0
        alpha = tau / inertia
        np.testing.assert_allclose(sim.joint_output(hinge), [0, 0, sign * alpha], atol=1e-12)
        for i in range(1, 301):
            sim.step()
            t = i * h
            np.testing.assert_allclose(
                sim.joint_output(hinge), sign * np.array([0.5 * alpha * t * t, alpha * t, alpha]), rtol=1e-9, atol=1e-9
            )
        assert 0.5 * alpha * (300 * h) ** 2 > 6 * np.pi  # three turns
        np.testing.assert_allclose(sim.state.v[n, 3:], alpha * 300 * h * axis, atol=1e-9)
        np.testing.assert_allclose(sim.state.q[n, :3], 0.0, atol=1e-12)
        force, torque = sim.reaction(hinge)
        np.testing.assert_allclose(force, 0.0, atol=1e-9)
        np.testing.assert_allclose(torque, 0.0, atol=1e-9)  # the input torque is not a reaction
        results.append(sim.state.q[n].copy())
    np.testing.assert_allclose(results[0], results[1], atol=1e-12)


def test_set_torque_and_set_force_change_the_inputs() -> None:
    b = kp.ModelBuilder()
    n1 = b.add_node(position=(0, 0, 0))
    n2 = b.add_node(position=(1, 0, 0))
    for n in (n1, n2):
        b.add_mass(n, mass=2.0, inertia=(1.0, 1.0, 1.0))
    hinge = b.add_hinge_joint(kp.GROUND, n1, (0, 0, 0), (0, 0, 1))
    slider = b.add_slider_joint(n1, n2, (1, 0, 0), (1, 0, 0))
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, atol=1e-10, rtol=1e-10))
    sim.set_torque(hinge, 3.0)
    sim.set_force(slider, 4.0)
    np.testing.assert_array_equal(sim.inputs.constraint_input[[hinge, slider], 0], [3.0, 4.0])
    with pytest.raises(ValueError, match="slider_joint, which has no torque input"):
        sim.set_torque(slider, 1.0)
    with pytest.raises(ValueError, match="hinge_joint, which has no force input"):
        sim.set_force(hinge, 1.0)
    with pytest.raises(ValueError, match="finite"):
        sim.set_force(slider, float("nan"))
    sim.step()
    assert sim.joint_output(slider)[2] > 0.0 and sim.joint_output(hinge)[2] > 0.0


@pytest.mark.parametrize("swap", [False, True], ids=["ground_a", "ground_b"])
def test_slider_force_accelerates_the_body_along_the_axis(swap: bool) -> None:
    mass, force, h = 4.0, 6.0, 0.01
    axis = np.array([2.0, -1.0, 2.0]) / 3.0
    b = kp.ModelBuilder(gravity=(0, 0, -G))
    n = b.add_node(position=(1.0, 1.0, 1.0), velocity=(0, 0, 0, 0.0, 0.0, 0.0))
    b.add_mass(n, mass=mass, inertia=(0.1, 0.2, 0.3))
    if swap:
        slider = b.add_slider_joint(n, kp.GROUND, (0.5, 0.5, 0.5), axis, force=-force)
    else:
        slider = b.add_slider_joint(kp.GROUND, n, (0.5, 0.5, 0.5), axis, force=force)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.6, atol=1e-10, rtol=1e-10))
    sign = -1.0 if swap else 1.0
    accel = (force - mass * G * axis[2]) / mass  # along the axis
    for i in range(1, 101):
        sim.step()
        t = i * h
        np.testing.assert_allclose(
            sim.joint_output(slider), sign * np.array([0.5 * accel * t * t, accel * t, accel]), rtol=1e-9, atol=1e-9
        )
    np.testing.assert_allclose(sim.state.q[n, :3], 0.5 * accel * 1.0**2 * axis, atol=1e-9)
    np.testing.assert_allclose(sim.state.q[n, 3:], [1, 0, 0, 0], atol=1e-12)
    force_r, torque_r = sim.reaction(slider)
    weight = np.array([0, 0, -mass * G])
    # the slider carries the weight's part across the axis (the input force is not a reaction)
    np.testing.assert_allclose(force_r, -(weight - (weight @ axis) * axis), atol=1e-9)
    np.testing.assert_allclose(force_r @ axis, 0.0, atol=1e-9)
    # no rotation: about the joint point (the mass centre is 0.5 (1, 1, 1) from it) the reaction torque
    # and the weight's moment give the moment of m a, a = accel · axis
    lever = np.array([0.5, 0.5, 0.5])
    np.testing.assert_allclose(torque_r, np.cross(lever, mass * accel * axis - weight), atol=1e-9)


@pytest.mark.parametrize("kind", ["ball", "hinge", "slider", "cylindrical", "planar", "universal"])
def test_free_motion_along_the_joint_freedoms_is_uniform(kind: str) -> None:
    """No gravity, a body with spherical inertia and its mass centre at the joint point (or on the
    axis) moving only along the joint's freedoms keeps its velocity; the joint stays closed."""
    rng = np.random.default_rng(11)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    perp = np.cross(axis, [1.0, 0.0, 0.0])
    perp /= np.linalg.norm(perp)
    c = np.array([0.2, -0.4, 0.7])
    speed, spin = 0.8, 1.3
    velocity = {
        "ball": np.concatenate([np.zeros(3), rng.normal(size=3)]),
        "hinge": np.concatenate([np.zeros(3), spin * axis]),
        "slider": np.concatenate([speed * axis, np.zeros(3)]),
        "cylindrical": np.concatenate([speed * axis, spin * axis]),
        "planar": np.concatenate([speed * perp, spin * axis]),
        "universal": np.concatenate([np.zeros(3), spin * axis]),
    }[kind]
    b = kp.ModelBuilder()
    n = b.add_node(position=c, velocity=velocity)
    b.add_mass(n, mass=2.0, inertia=(0.3, 0.3, 0.3))
    add = {
        "ball": lambda: b.add_ball_joint(kp.GROUND, n, c),
        "hinge": lambda: b.add_hinge_joint(kp.GROUND, n, c, axis),
        "slider": lambda: b.add_slider_joint(kp.GROUND, n, c, axis),
        "cylindrical": lambda: b.add_cylindrical_joint(kp.GROUND, n, c, axis),
        "planar": lambda: b.add_planar_joint(kp.GROUND, n, c, axis),
        "universal": lambda: b.add_universal_joint(kp.GROUND, n, c, axis, perp),
    }[kind]
    j = add()
    model = b.build()
    sim = kp.Simulation(model, kp.StepParameters(h=0.01, rho_inf=0.9, atol=1e-10, rtol=1e-10, geometric_stiffness=True))
    for _ in range(200):
        sim.step()
    np.testing.assert_allclose(sim.state.v[n], velocity, atol=1e-9)
    np.testing.assert_allclose(sim.state.q[n, :3], 2.0 * velocity[:3], atol=1e-9)
    phi = constraint_values(model, sim.state.q, sim.inputs.constraint_input)
    np.testing.assert_allclose(phi, 0.0, atol=1e-10)
    for value in sim.reaction(j):
        np.testing.assert_allclose(value, 0.0, atol=1e-8)


def test_outputs_of_joints_without_outputs_are_zero_and_reaction_of_kynema_kinds() -> None:
    b = kp.ModelBuilder(gravity=(0, 0, -G))
    n = b.add_node(position=(0, 0, 1.0))
    b.add_mass(n, mass=1.5, inertia=(0.1, 0.1, 0.1))
    bc = b.add_fixed_bc(n)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01))
    sim.step()
    np.testing.assert_array_equal(sim.joint_output(bc), 0.0)
    force, torque = sim.reaction(bc)  # Kynema kinds: load on the target node, torque about it
    np.testing.assert_allclose(force, [0, 0, 1.5 * G], atol=1e-10)
    np.testing.assert_allclose(torque, 0.0, atol=1e-10)
    with pytest.raises(IndexError):
        sim.reaction(5)


# ------------------------------------------------------------------------ diagnostics and validation
def test_four_hinge_four_bar_is_named_redundant_with_the_remedy() -> None:
    model = four_bar("hinges")
    with pytest.raises(kp.ModelError) as info:
        kp.Simulation(model, kp.StepParameters(h=0.01))
    message = str(info.value)
    assert "3 of the 20 constraint equations repeat others" in message
    for c in range(4):
        assert f"constraint {c} (hinge_joint" in message
    assert "constraint 0 (hinge_joint, ground → node 0)" in message
    assert "ball joint" in message and "cylindrical joint" in message and "universal joint" in message
    for variant in ("cylindrical", "universal"):  # the remedies: same planar motion, no redundancy
        sim = kp.Simulation(four_bar(variant), kp.StepParameters(h=0.01, atol=1e-9, rtol=1e-7))
        sim.set_torque(0, 5.0)
        for _ in range(50):
            sim.step()
        assert sim.joint_output(0)[0] > 0.05
        np.testing.assert_allclose(sim.state.q[:, 2], 0.0, atol=1e-9)  # stays in its plane


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda b: b.add_ball_joint(0, 7, (0, 0, 0)), r"constraint 0 \(ball_joint\): body_b = 7 is an unknown body"),
        (lambda b: b.add_ball_joint(-2, 0, (0, 0, 0)), "body_a = -2 is an unknown body"),
        (lambda b: b.add_ball_joint(1.0, 0, (0, 0, 0)), "body_a must be a node id or kp.GROUND"),
        (lambda b: b.add_hinge_joint(1, 1, (0, 0, 0), (0, 0, 1)), "joins body 1 to itself"),
        (lambda b: b.add_weld_joint(kp.GROUND, kp.GROUND, (0, 0, 0)), "joins the ground to itself"),
        (lambda b: b.add_hinge_joint(0, 1, (0, 0, 0), (0, 0, 0)), r"hinge_joint\) axis must be a non-zero vector"),
        (lambda b: b.add_slider_joint(0, 1, (0, 0, 0), (0, 0, 0)), r"slider_joint\) axis must be a non-zero"),
        (lambda b: b.add_planar_joint(0, 1, (0, 0, 0), (0, 0, 0)), "normal must be a non-zero vector"),
        (lambda b: b.add_hinge_joint(0, 1, (0, 0), (0, 0, 1)), "point: expected 3 numbers"),
        (lambda b: b.add_ball_joint(0, 1, (0, np.nan, 0)), "point: values must be finite"),
        (lambda b: b.add_hinge_joint(0, 1, (0, 0, 0), (0, 0, 1), torque=np.inf), "torque must be finite"),
        (lambda b: b.add_slider_joint(0, 1, (0, 0, 0), (0, 0, 1), force="x"), "force must be a number"),
        (
            lambda b: b.add_universal_joint(0, 1, (0, 0, 0), (0, 0, 1), (0, 0, -2)),
            r"add_universal_joint: constraint 0 \(universal_joint\): axis_a \[0.0, 0.0, 1.0\] and axis_b "
            r"\[0.0, 0.0, -2.0\] are parallel",
        ),
        (
            lambda b: b.add_point_on_line_joint(0, 1, (0, 0, 0), (0, 0, 0)),
            r"add_point_on_line_joint: constraint 0 \(point_on_line_joint\) axis must be a non-zero vector",
        ),
        (
            lambda b: b.add_point_on_plane_joint(kp.GROUND, 1, (0, 0, 0), (0, 0, 0)),
            r"add_point_on_plane_joint: constraint 0 \(point_on_plane_joint\) normal must be a non-zero vector",
        ),
        (
            lambda b: b.add_generic_joint(0, 1, (0, 0, 0), locked=(0, 0, 0, 0, 0, 0)),
            r"add_generic_joint: constraint 0 \(generic_joint\): locked = \(0, 0, 0, 0, 0, 0\) locks nothing, "
            r"so the joint would have no constraint rows",
        ),
        (
            lambda b: b.add_generic_joint(0, 1, (0, 0, 0), locked=(1, 1, 1)),
            r"add_generic_joint: constraint 0 \(generic_joint\): locked must be 6 booleans",
        ),
        (lambda b: b.add_generic_joint(0, 1, (0, 0, 0), locked=(1, 1, 1, 2, 0, 0)), "locked must be 6 booleans"),
        (
            lambda b: b.add_generic_joint(kp.GROUND, kp.GROUND, (0, 0, 0), locked=(1,) * 6),
            r"add_generic_joint: constraint 0 \(generic_joint\): joins the ground to itself",
        ),
        (
            lambda b: b.add_generic_joint(0, 1, (0, 0, 0), locked=(1,) * 6, frame=np.diag([1.0, 1.0, -1.0])),
            r"add_generic_joint: constraint 0 \(generic_joint\) frame: must be a rotation matrix .* det = -1",
        ),
        (
            lambda b: b.add_generic_joint(0, 1, (0, 0, 0), locked=(1,) * 6, frame=np.eye(3)[:2]),
            r"generic_joint\) frame: expected a 3×3 rotation matrix of finite numbers, got shape \(2, 3\)",
        ),
        (lambda b: b.add_universal_joint(0, 1, (0, 0, 0), (0, 0, 1), (0, 0, 0)), "axis_b must be a non-zero"),
        (lambda b: b.add_distance_constraint(0, 1, (1, 1, 1), (1, 1, 1)), "point_a and point_b coincide"),
        (lambda b: b.add_distance_constraint(0, 1, (0, 0, 0), (1, 1, 1), length=-1.0), "length must be > 0 m"),
    ],
)
def test_builder_rejects_bad_joints_with_clear_messages(call, match: str) -> None:
    b = kp.ModelBuilder()
    for x in (0.0, 1.0):
        b.add_mass(b.add_node(position=(x, 0, 0)), mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(kp.ModelError, match=match):
        call(b)
    assert b.build().n_constraints == 0  # nothing half-added


def test_geometry_table_and_ground_swap() -> None:
    b = kp.ModelBuilder()
    n0 = b.add_node(position=(1.0, 2.0, 3.0))
    b.add_mass(n0, mass=1.0, inertia=(1, 1, 1))
    c0 = b.add_hinge_joint(kp.GROUND, n0, (1.0, 0.0, 0.0), (0, 0, 2))
    c1 = b.add_hinge_joint(n0, kp.GROUND, (1.0, 0.0, 0.0), (0, 0, 2))
    c2 = b.add_distance_constraint(n0, kp.GROUND, (1.0, 2.0, 4.0), (0.0, 0.0, 0.0), length=2.0)
    m = b.build()
    assert kp.GROUND == -1
    assert m.constraint_kind.tolist() == [kinds.HINGE_JOINT, kinds.HINGE_JOINT, kinds.DISTANCE_CONSTRAINT]
    np.testing.assert_array_equal(m.constraint_node, [[-1, 0], [-1, 0], [-1, 0]])
    np.testing.assert_array_equal(m.constraint_X0[c0], [1.0, 2.0, 3.0])
    g0, g1, g2 = (m.constraint_geometry[c] for c in (c0, c1, c2))
    np.testing.assert_array_equal(g0[0, 0], [1.0, 0.0, 0.0])  # ground side: the world point
    np.testing.assert_array_equal(g0[1, 0], [0.0, -2.0, -3.0])  # body side: offset from the node
    np.testing.assert_allclose(g0[0, 1], [0, 0, 1])
    np.testing.assert_allclose(g1[0, 1], [0, 0, -1])  # swapped: the axis is reversed
    for g in (g0, g1):
        np.testing.assert_allclose(g[0, 1:] @ g[0, 1:].T, np.eye(3), atol=1e-15)
        assert np.linalg.det(g[0, 1:]) > 0.0
    np.testing.assert_array_equal(g2[0, 0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g2[1, 0], [0.0, 0.0, 1.0])
    assert m.constraint_param.tolist() == [0.0, 0.0, 2.0]
    assert m.n_dofs == 6 + 5 + 5 + 1


# ------------------------------------------------------------------------------------ model files
JOINTS_TOML = """
[model]
gravity = [0, 0, -9.81]

[[node]]
name = "arm"
position = [0.5, 0, 0]

[[node]]
name = "tip"
position = [1.5, 0, 0]

[[mass]]
node = "arm"
mass = 1.0
inertia = [0.01, 0.1, 0.1]

[[mass]]
node = "tip"
mass = 0.5
inertia = [0.01, 0.05, 0.05]

[[constraint]]
kind = "hinge_joint"
name = "shoulder"
body_a = "ground"
body_b = "arm"
point = [0, 0, 0]
axis = [0, 1, 0]
torque = 2.0

[[constraint]]
kind = "slider_joint"
body_a = "arm"
body_b = "tip"
point = [1, 0, 0]
axis = [1, 0, 0]
force = -0.5

[step]
h = 0.01
"""


def test_model_file_reads_two_body_joints() -> None:
    from kynemapy.model.file import ModelFileError, parse_model_file

    mf = parse_model_file(JOINTS_TOML, "joints.toml")
    b = kp.ModelBuilder(gravity=(0, 0, -G))
    arm = b.add_node(position=(0.5, 0, 0))
    tip = b.add_node(position=(1.5, 0, 0))
    b.add_mass(arm, mass=1.0, inertia=(0.01, 0.1, 0.1))
    b.add_mass(tip, mass=0.5, inertia=(0.01, 0.05, 0.05))
    b.add_hinge_joint(kp.GROUND, arm, (0, 0, 0), (0, 1, 0), torque=2.0)
    b.add_slider_joint(arm, tip, (1, 0, 0), (1, 0, 0), force=-0.5)
    expected = b.build()
    for name, value in expected._asdict().items():
        np.testing.assert_array_equal(getattr(mf.model, name), value, err_msg=name)
    assert mf.constraints == {"shoulder": 0}
    others = [
        ('kind = "ball_joint"\nbody_a = "arm"\nbody_b = "tip"\npoint = [1, 0, 0]', kinds.BALL_JOINT),
        ('kind = "cylindrical_joint"\nbody_a = "arm"\nbody_b = "tip"\npoint = [1, 0, 0]\naxis = [1, 0, 0]',
         kinds.CYLINDRICAL_JOINT),
        ('kind = "universal_joint"\nbody_a = "arm"\nbody_b = "tip"\npoint = [1, 0, 0]\naxis_a = [0, 1, 0]\n'
         'axis_b = [0, 0, 1]', kinds.UNIVERSAL_JOINT),
        ('kind = "planar_joint"\nbody_a = "tip"\nbody_b = "ground"\npoint = [1, 0, 0]\nnormal = [0, 0, 1]',
         kinds.PLANAR_JOINT),
        ('kind = "weld_joint"\nbody_a = "arm"\nbody_b = "tip"\npoint = [1, 0, 0]', kinds.WELD_JOINT),
        ('kind = "distance_constraint"\nbody_a = "arm"\nbody_b = "tip"\npoint_a = [1, 0, 0]\npoint_b = [1.5, 0, 0]\n'
         'length = 0.6', kinds.DISTANCE_CONSTRAINT),
    ]  # fmt: skip
    for text, kind in others:
        mf = parse_model_file(JOINTS_TOML + "\n[[constraint]]\n" + text + "\n", "joints.toml")
        assert mf.model.constraint_kind[-1] == kind
    assert mf.model.constraint_param[-1] == 0.6
    message = r"joints.toml, line 37: constraint #2 \(slider_joint\): axis must be a non-zero"
    with pytest.raises(ModelFileError, match=message):
        parse_model_file(JOINTS_TOML.replace("axis = [1, 0, 0]", "axis = [0, 0, 0]"), "joints.toml")
    with pytest.raises(ModelFileError, match="names unknown node 'wrist'"):
        parse_model_file(JOINTS_TOML.replace('body_b = "tip"', 'body_b = "wrist"'), "joints.toml")


# every_joint_chain's bodies start with velocities its joints do not allow: Simulation projects them (and says so)
@pytest.mark.filterwarnings("ignore:initial velocities projected onto the velocity constraints:UserWarning")
def test_every_joint_chain_steps_the_same_with_the_dense_and_the_sparse_solver() -> None:
    """75 unknowns: the sparse LU's pattern holds every K^Φ block between two bodies (exact tangent)."""
    model = every_joint_chain()
    finals = []
    for solver in ("dense", "sparse"):
        p = kp.StepParameters(h=0.005, rho_inf=0.8, atol=1e-9, rtol=1e-7, geometric_stiffness=True, solver=solver)
        sim = kp.Simulation(model, p)
        iterations = [sim.step().iterations for _ in range(40)]
        phi = constraint_values(model, sim.state.q, sim.inputs.constraint_input)
        assert np.abs(phi).max() < 1e-8
        assert max(iterations) <= 5
        finals.append(sim.state.q.copy())
    np.testing.assert_allclose(finals[0], finals[1], rtol=0, atol=1e-9)
