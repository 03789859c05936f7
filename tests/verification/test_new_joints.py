"""The universal joint at any angle, point-on-line, point-on-plane and generic joints at system level.

References are independent of kynemapy: scipy ``solve_ivp`` (rtol 1e-11) of reduced models
in minimal coordinates (a Lagrangian in the universal joint's two angles; Newton–Euler in
the sliding point's free coordinates and the body's rotation for the point on a line or a
plane), and the two-body joints the generic joint must reproduce.  The generalized-α
step is second order: each simulation is compared at two step sizes and must converge to
the reference at that order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kynemapy as kp
from kynemapy.model import kinds
from kynemapy.model.builder import joint_frame
from kynemapy.model.file import parse_model_file

TIGHT = {"atol": 1e-10, "rtol": 1e-10, "geometric_stiffness": True}
G = 9.81


def skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula, written here (not kynemapy's)."""
    n = np.asarray(axis, float) / np.linalg.norm(axis)
    k = skew(n)
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k


def quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def simulate(build, h: float, t_end: float, record) -> list[np.ndarray]:
    """Run the model ``build()`` to ``t_end``; ``record(sim)`` after every step."""
    sim = kp.Simulation(build(), kp.StepParameters(h=h, rho_inf=0.9, **TIGHT))
    out = []
    for _ in range(round(t_end / h)):
        sim.step()
        out.append(record(sim))
    return out


# ------------------------------------------------------------------------------------ universal
ALPHA = math.radians(104.0)  # Exudyn's 3-D slider-crank: the universal joint's axes meet at 104°
A1 = np.array([1.0, 0.0, 0.0])  # ground's axis
B1 = np.array([math.cos(ALPHA), math.sin(ALPHA), 0.0])  # body's axis at the reference configuration
C0 = np.array([0.3, 0.2, -1.0])  # centre of mass (the node) [m]; joint at the origin
MASS, INERTIA = 2.0, np.array([0.05, 0.08, 0.11])
RATES0 = np.array([1.0, -2.0])  # (φ̇, ψ̇) [rad/s]


def universal_model() -> kp.Model:
    w0 = RATES0[0] * A1 + RATES0[1] * B1
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = b.add_node(position=C0, velocity=(*np.cross(w0, C0), *w0))
    b.add_mass(body, mass=MASS, inertia=INERTIA)
    b.add_universal_joint(kp.GROUND, body, point=(0, 0, 0), axis_a=A1, axis_b=B1)
    return b.build()


def universal_reference(times: np.ndarray) -> np.ndarray:
    """Body rotation R(φ, ψ) = Rot(a₁, φ) Rot(b₁⁰, ψ) (the spider turns about a₁, the body about the
    spider's other arm); Lagrange's equations with Ω = G(ψ) q̇ (body frame = world at t = 0)."""
    i_o = np.diag(INERTIA) + MASS * (C0 @ C0 * np.eye(3) - np.outer(C0, C0))
    g = np.array([0.0, 0.0, -G])

    def rhs(_t, y):
        phi, psi, dphi, dpsi = y
        g1 = rotation(B1, -psi) @ A1
        gm = np.column_stack([g1, B1])
        gm_psi = np.column_stack([-np.cross(B1, g1), np.zeros(3)])
        m = gm.T @ i_o @ gm
        m_psi = gm_psi.T @ i_o @ gm + gm.T @ i_o @ gm_psi
        qd = np.array([dphi, dpsi])
        r = rotation(A1, phi) @ rotation(B1, psi)
        rc = r @ C0
        b1 = rotation(A1, phi) @ B1
        dv = np.array([-MASS * g @ np.cross(A1, rc), -MASS * g @ np.cross(b1, rc)])
        f = -(m_psi * dpsi) @ qd + np.array([0.0, 0.5 * qd @ m_psi @ qd]) - dv
        return [dphi, dpsi, *np.linalg.solve(m, f)]

    sol = solve_ivp(rhs, (0.0, times[-1]), [0.0, 0.0, *RATES0], t_eval=times, rtol=1e-11, atol=1e-12)
    return np.array([rotation(A1, p) @ rotation(B1, s) @ C0 for p, s in sol.y[:2].T])


def test_universal_joint_at_104_degrees_keeps_its_angle_and_matches_the_reduced_model() -> None:
    t_end = 1.0
    errors = []
    for h in (2e-3, 1e-3):

        def record(sim):
            _, rot = sim.body_frame(0)
            return np.concatenate([sim.body_frame(0)[0], [A1 @ (rot @ B1)]])

        rows = np.array(simulate(universal_model, h, t_end, record))
        # the spider keeps the angle between the axes: a₁·b₁ = cos 104° at every step (Newton tolerance)
        np.testing.assert_allclose(rows[:, 3], math.cos(ALPHA), rtol=0, atol=1e-10)
        times = h * np.arange(1, len(rows) + 1)
        ref = universal_reference(times)
        errors.append(np.abs(rows[:, :3] - ref).max())
    assert np.abs(ref - C0).max() > 0.3  # it really moves
    assert errors[1] < 2e-4  # |x − x_ref| over 1 s, h = 1e-3
    assert errors[0] / errors[1] > 3.5  # second order: the error is the time discretisation's


def test_universal_joint_with_perpendicular_axes_is_unchanged() -> None:
    """At 90° the angle row is a₁·b₁ − cos 90° = a₁·b₁ (param 0), the joint of earlier versions."""
    b = kp.ModelBuilder()
    n = b.add_node()
    b.add_universal_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), (0, 0, 5))
    b.add_universal_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), B1)
    model = b.build()
    assert model.constraint_param[0] == 0.0
    assert model.constraint_param[1] == pytest.approx(math.cos(ALPHA), abs=1e-15)


# ------------------------------------------------------------------- point on a line or plane
def sliding_point_reference(free: np.ndarray, p0, c0, v_c0, w0, inertia, times):
    """A body (mass MASS, ``inertia`` about its centre, body frame = world at t = 0) whose point p
    slides freely in the directions ``free`` (3, k) through p0; Newton–Euler in (s, R):
    unknowns s̈ (k), ω̇ (3) and the joint force f (3 − k) along the constrained directions."""
    k = free.shape[1]
    normal = np.linalg.svd(free.T)[2][k:].T  # (3, 3 − k), orthogonal to the free directions
    rho0 = np.asarray(c0, float) - np.asarray(p0, float)
    g = np.array([0.0, 0.0, -G])
    v_p0 = np.asarray(v_c0, float) - np.cross(w0, rho0)
    s_dot0 = free.T @ v_p0

    def rhs(_t, y):
        sd = y[k : 2 * k]
        q = y[2 * k : 2 * k + 4]
        w = y[2 * k + 4 :]
        r = quat_matrix(q)
        rho = r @ rho0
        i_w = r @ np.diag(inertia) @ r.T
        a = np.zeros((6, 6))
        a[:3, :k] = MASS * free
        a[:3, k : k + 3] = -MASS * skew(rho)
        a[:3, k + 3 :] = -normal
        a[3:, k : k + 3] = i_w
        a[3:, k + 3 :] = skew(rho) @ normal
        rhs_v = np.concatenate([MASS * g - MASS * np.cross(w, np.cross(w, rho)), -np.cross(w, i_w @ w)])
        x = np.linalg.solve(a, rhs_v)
        qd = 0.5 * np.array(
            [
                -w @ q[1:],
                q[0] * w[0] + w[1] * q[3] - w[2] * q[2],
                q[0] * w[1] + w[2] * q[1] - w[0] * q[3],
                q[0] * w[2] + w[0] * q[2] - w[1] * q[1],
            ]
        )  # (0, ω) ⊗ q
        return [*sd, *x[:k], *qd, *x[k : k + 3]]

    y0 = [*np.zeros(k), *s_dot0, 1.0, 0.0, 0.0, 0.0, *w0]
    sol = solve_ivp(rhs, (0.0, times[-1]), y0, t_eval=times, rtol=1e-11, atol=1e-12)
    out = []
    for y in sol.y.T:
        out.append(np.asarray(p0) + free @ y[:k] + quat_matrix(y[2 * k : 2 * k + 4]) @ rho0)
    return np.array(out)


SLIDE_CASES = {
    # a pendulum whose pivot slides on a horizontal rail (x) and turns freely (Exudyn's spherical-joint
    # test constrains two directions: a point on a line)
    "point_on_line": dict(
        free=np.array([[1.0], [0.0], [0.0]]),
        p0=(0.0, 0.0, 0.0),
        c0=(0.1, 0.05, -0.8),
        v_c0=(0.6, -0.3, 0.1),
        w0=(0.4, 1.5, -0.7),
        add=lambda b, n: b.add_point_on_line_joint(kp.GROUND, n, point=(0, 0, 0), axis=(2.0, 0, 0)),
    ),
    # a rod whose tip slides on a horizontal floor (z = 0), tilted and spinning
    "point_on_plane": dict(
        free=np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]),
        p0=(0.0, 0.0, 0.0),
        c0=(0.3, -0.1, 0.7),
        v_c0=(0.2, 0.4, 0.3),
        w0=(1.0, -0.5, 2.0),
        add=lambda b, n: b.add_point_on_plane_joint(kp.GROUND, n, point=(0, 0, 0), normal=(0, 0, 3.0)),
    ),
}
INERTIA_SLIDE = np.array([0.06, 0.05, 0.02])


@pytest.mark.parametrize("name", SLIDE_CASES)
def test_sliding_point_joints_match_newton_euler_references(name: str) -> None:
    case = SLIDE_CASES[name]
    free = case["free"]
    rho0 = np.asarray(case["c0"]) - np.asarray(case["p0"])
    # consistent initial velocity: the joint point's velocity has no constrained component
    v_p = np.asarray(case["v_c0"]) - np.cross(case["w0"], rho0)
    v_c0 = free @ (free.T @ v_p) + np.cross(case["w0"], rho0)

    def build():
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        n = b.add_node(position=case["c0"], velocity=(*v_c0, *case["w0"]))
        b.add_mass(n, mass=MASS, inertia=INERTIA_SLIDE)
        case["add"](b, n)
        return b.build()

    t_end = 0.6
    errors = []
    for h in (2e-3, 1e-3):

        def record(sim):
            p = sim.body_point(0, case["p0"], frame="reference")[0]
            return np.concatenate([sim.body_frame(0)[0], p])

        rows = np.array(simulate(build, h, t_end, record))
        # the joint point never leaves its line or plane
        normal = np.linalg.svd(free.T)[2][free.shape[1] :].T
        np.testing.assert_allclose(rows[:, 3:] @ normal, 0.0, atol=1e-10)
        times = h * np.arange(1, len(rows) + 1)
        ref = sliding_point_reference(free, case["p0"], case["c0"], v_c0, np.asarray(case["w0"]), INERTIA_SLIDE, times)
        errors.append(np.abs(rows[:, :3] - ref).max())
    assert np.abs(ref - np.asarray(case["c0"])).max() > 0.1
    # measured: line 1.2e-5, 3.1e-6; plane (spinning at 2 rad/s) 1.0e-3, 2.5e-4: ratio 4.0, the
    # generalized-α step's second-order error, so the motion is the reference's
    assert errors[1] < 5e-4
    assert errors[0] / errors[1] > 3.5


def test_point_on_plane_reaction_is_the_normal_force() -> None:
    """The floor pushes only along its normal: reaction = m (c̈ − g), horizontal part zero (the
    centre's horizontal acceleration is zero), torque about the contact point zero."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.3, 0.0, 0.6))
    b.add_mass(n, mass=MASS, inertia=INERTIA_SLIDE)
    c = b.add_point_on_plane_joint(kp.GROUND, n, point=(0, 0, 0), normal=(0, 0, 1))
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3, **TIGHT))
    for _ in range(200):
        sim.step()
        force, torque = sim.reaction(c)
        expected = MASS * (sim.state.vd[n, :3] - np.array([0.0, 0.0, -G]))
        np.testing.assert_allclose(force, expected, rtol=0, atol=1e-9 * MASS * G)
        np.testing.assert_allclose(force[:2], 0.0, atol=1e-9)
        np.testing.assert_allclose(torque, 0.0, atol=1e-9)
    assert sim.body_frame(n)[0][2] < 0.55  # it fell


def test_point_on_line_with_the_line_in_the_body_and_the_point_in_the_ground() -> None:
    """body_b = ground: the ground's point stays on the body's line (a mirrored row list), e.g. a
    rod sliding through a fixed ring and turning about it; its reaction is the load on the body."""
    axis = np.array([0.0, 0.3, -1.0])
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.2, 0.4), velocity=(0.3, 0.0, 0.0, 0.0, 1.0, 0.5))
    b.add_mass(n, mass=MASS, inertia=INERTIA_SLIDE)
    p = np.array([0.0, 0.0, 0.0])
    c = b.add_point_on_line_joint(n, kp.GROUND, point=p, axis=axis)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3, **TIGHT))
    for _ in range(300):
        sim.step()
        # the reaction is the load on body_a (body_b is the ground): the body's only load besides gravity
        force, _ = sim.reaction(c)
        np.testing.assert_allclose(force, MASS * (sim.state.vd[n, :3] - [0.0, 0.0, -G]), rtol=0, atol=1e-9)
        _, rot = sim.body_frame(n)
        line_dir = rot @ (axis / np.linalg.norm(axis))
        on_line = sim.body_point(n, p, frame="reference")[0]  # the body's point that was at p
        offset = p - on_line
        np.testing.assert_allclose(offset - (offset @ line_dir) * line_dir, 0.0, atol=1e-10)
    assert np.abs(sim.state.q[n, 3:] - [1, 0, 0, 0]).max() > 0.05


# ------------------------------------------------------------------------------ generic joint
def two_links(joint: str, generic: bool, ground_b: bool = False) -> kp.Model:
    """A link hinged to the ground and a second link attached to it by ``joint``, both turning
    about the hinge at 1 rad/s at t = 0 (velocities consistent with every joint)."""
    axis1 = np.array([0.1, 0.0, 1.0])
    w = axis1 / np.linalg.norm(axis1)
    c1, c2 = np.array([0.5, 0.0, 0.0]), np.array([1.2, 0.1, 0.0])
    b = kp.ModelBuilder(gravity=(0.0, -G, 0.0))
    l1 = b.add_node(position=c1, velocity=(*np.cross(w, c1), *w))
    b.add_mass(l1, mass=1.0, inertia=(0.01, 0.1, 0.1))
    l2 = b.add_node(position=c2, velocity=(*np.cross(w, c2), *w))
    b.add_mass(l2, mass=0.7, inertia=(0.02, 0.05, 0.06))
    if generic:
        bodies = (l1, kp.GROUND) if ground_b else (kp.GROUND, l1)
        b.add_generic_joint(*bodies, (0, 0, 0), locked=(1, 1, 1, 0, 1, 1), frame=joint_frame(axis1).T)
    elif ground_b:
        b.add_hinge_joint(l1, kp.GROUND, (0, 0, 0), axis1)
    else:
        b.add_hinge_joint(kp.GROUND, l1, (0, 0, 0), axis1)
    p2 = (1.0, 0.05, 0.0)
    axis2 = np.array([1.0, 0.2, 0.3])
    if joint == "weld":
        if generic:
            b.add_generic_joint(l1, l2, p2, locked=(1,) * 6)
        else:
            b.add_weld_joint(l1, l2, p2)
    elif joint == "slider":
        if generic:
            b.add_generic_joint(l1, l2, p2, locked=(0, 1, 1, 1, 1, 1), frame=joint_frame(axis2).T)
        else:
            b.add_slider_joint(l1, l2, p2, axis2)
    elif generic:
        b.add_generic_joint(l1, l2, p2, locked=(1, 1, 1, 0, 1, 1), frame=joint_frame(axis2).T)
    else:
        b.add_hinge_joint(l1, l2, p2, axis2)
    return b.build()


@pytest.mark.parametrize("exact", [False, True], ids=["kynema_tangent", "exact_tangent"])
@pytest.mark.parametrize("joint", ["hinge", "slider", "weld"])
def test_generic_joint_reproduces_hinge_slider_weld(joint: str, exact: bool) -> None:
    """Same rows in the same order: the same trajectory to round-off."""
    params = kp.StepParameters(h=0.005, rho_inf=0.5, atol=1e-9, rtol=1e-9, geometric_stiffness=exact)
    sims = [kp.Simulation(two_links(joint, generic), params) for generic in (False, True)]
    for _ in range(200):
        for sim in sims:
            sim.step()
    np.testing.assert_allclose(sims[1].state.q, sims[0].state.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(sims[1].state.v, sims[0].state.v, rtol=0, atol=1e-12)
    assert np.abs(sims[0].state.q[:, :3]).max() > 0.05


def test_generic_joint_to_the_ground_as_body_b_is_the_same_hinge() -> None:
    """With body_b = ground the rows are mirrored (the body's axis f ⊥ the ground's other two, instead
    of the ground's f ⊥ the body's other two): the same joint manifold, so the same motion to Newton
    tolerance (from consistent initial velocities: otherwise Φ̇ ≠ 0 and the equivalent rows give
    different consistent accelerations)."""
    params = kp.StepParameters(h=0.005, rho_inf=0.5, atol=1e-11, rtol=1e-11, geometric_stiffness=True)
    sims = [kp.Simulation(two_links("hinge", True, ground_b=g), params) for g in (False, True)]
    sims.append(kp.Simulation(two_links("hinge", False, ground_b=True), params))
    for _ in range(200):
        for sim in sims:
            sim.step()
    for other in sims[1:]:
        np.testing.assert_allclose(other.state.q, sims[0].state.q, rtol=0, atol=1e-12)


def test_generic_joint_rows_and_toml() -> None:
    text = """
[[node]]
name = "a"
position = [1, 0, 0]
[[mass]]
node = "a"
mass = 1.0
inertia = [1, 1, 1]
[[constraint]]
kind = "generic_joint"
name = "g"
body_a = "ground"
body_b = "a"
point = [0, 0, 0]
locked = [true, true, true, false, false, true]
frame = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
[[constraint]]
kind = "point_on_line_joint"
body_a = "a"
body_b = "ground"
point = [2, 0, 0]
axis = [0, 1, 0]
[[constraint]]
kind = "point_on_plane_joint"
body_a = "ground"
body_b = "a"
point = [1, 0, 0]
normal = [1, 0, 0]
[[constraint]]
kind = "universal_joint"
body_a = "ground"
body_b = "a"
point = [1, 0, 0]
axis_a = [1, 0, 0]
axis_b = [0.5, 1, 0]
[step]
h = 0.01
"""
    model = parse_model_file(text, "joints.toml").model
    np.testing.assert_array_equal(
        model.constraint_kind,
        [kinds.GENERIC_JOINT, kinds.POINT_ON_LINE_JOINT, kinds.POINT_ON_PLANE_JOINT, kinds.UNIVERSAL_JOINT],
    )
    # ball rows (3) + one rotation locked (about the frame's z = world y): a_x·b_y = 1 row
    np.testing.assert_array_equal(model.constraint_n_rows, [4, 2, 1, 4])
    assert model.constraint_param[3] == pytest.approx(0.5 / math.hypot(0.5, 1.0), abs=1e-15)
    bad = text.replace("locked = [true, true, true, false, false, true]", "locked = [1, 1, 1, 0, 0, 1]")
    with pytest.raises(kp.ModelError, match=r"joints.toml, line \d+: .*key 'locked': expected an array of 6 booleans"):
        parse_model_file(bad, "joints.toml")
    none = text.replace(
        "locked = [true, true, true, false, false, true]", "locked = [false, false, false, false, false, false]"
    )
    with pytest.raises(kp.ModelError, match="locks nothing, so the joint would have no constraint rows"):
        parse_model_file(none, "joints.toml")


# ------------------------------------------------------------------ a 3-D slider-crank at 104°
def slider_crank_104(h: float, tau: float = 0.2) -> tuple[kp.Simulation, dict]:
    """Crank hinged to the ground about x, rod on the crank pin by a ball joint, slider on a line
    along x; rod and slider joined by a universal joint whose axes meet at 104° (no spider body).
    Driven from rest by a crank torque τ, no gravity."""
    pin, q = np.array([0.0, 0.1, 0.0]), np.array([0.3, 0.0, 0.12])  # crank radius 0.1 m
    b = kp.ModelBuilder()
    parts = {
        "crank": (b.add_node(position=(0.0, 0.05, 0.0)), 0.5, (2e-4, 5e-4, 5e-4)),
        "rod": (b.add_node(position=0.5 * (pin + q)), 0.8, (1e-3, 8e-3, 8e-3)),
        "slider": (b.add_node(position=q), 1.2, (1e-3, 1e-3, 1e-3)),
    }
    for node, m, inertia in parts.values():
        b.add_mass(node, mass=m, inertia=inertia)
    crank, rod, slider = (parts[k][0] for k in ("crank", "rod", "slider"))
    hinge = b.add_hinge_joint(kp.GROUND, crank, (0, 0, 0), (1, 0, 0), torque=tau)
    b.add_ball_joint(crank, rod, pin)
    axis_a = np.array([0.0, 0.0, 1.0])
    axis_b = rotation(np.array([0.0, 1.0, 0.0]), ALPHA) @ axis_a  # 104° from axis_a
    b.add_universal_joint(slider, rod, q, axis_a, axis_b)
    b.add_slider_joint(kp.GROUND, slider, q, (1, 0, 0))
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=1.0, **TIGHT))
    return sim, dict(parts=parts, hinge=hinge, pin=pin, q=q, axis_a=axis_a, axis_b=axis_b)


def kinetic_energy(sim: kp.Simulation, parts: dict) -> float:
    total = 0.0
    for node, m, inertia in parts.values():
        _, rot = sim.body_frame(node)
        v = sim.state.v[node]
        total += 0.5 * m * v[:3] @ v[:3] + 0.5 * v[3:] @ (rot @ np.diag(inertia) @ rot.T) @ v[3:]
    return total


def test_slider_crank_with_a_104_degree_universal_joint_needs_no_spider_body() -> None:
    """Exudyn's 3-D slider-crank case: the joint angle stays 104°, the joints hold, and the energy
    balance closes: kinetic energy = τ θ (the crank torque's work; no gravity, ρ∞ = 1), to the
    step's second-order error."""
    tau, t_end = 0.2, 0.6
    gaps = []
    for h in (4e-3, 2e-3):
        sim, m = slider_crank_104(h, tau)
        crank, rod, slider = (m["parts"][k][0] for k in ("crank", "rod", "slider"))
        for _ in range(round(t_end / h)):
            sim.step()
            a1 = sim.body_frame(slider)[1] @ m["axis_a"]
            b1 = sim.body_frame(rod)[1] @ m["axis_b"]
            assert abs(a1 @ b1 - math.cos(ALPHA)) < 1e-10
            p_crank = sim.body_point(crank, m["pin"], frame="reference")[0]
            p_rod = sim.body_point(rod, m["pin"], frame="reference")[0]
            assert np.abs(p_crank - p_rod).max() < 1e-10
            q_s = sim.body_point(slider, m["q"], frame="reference")[0]
            assert np.abs(q_s[1:] - m["q"][1:]).max() < 1e-10  # the slider stays on its line
        theta = sim.joint_output(m["hinge"])[0]
        gaps.append(abs(kinetic_energy(sim, m["parts"]) - tau * theta))
    assert theta > 1.0  # the crank turned (rad)
    assert gaps[1] < 1e-3 * tau * theta
    assert gaps[0] / gaps[1] > 3.0
