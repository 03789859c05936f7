"""Energy and momentum of beams in the output rows (kynemapy.engine.invariants through
kynemapy.io.row_invariants) against closed forms for a straight uniform beam."""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points

RHO_A, EA, GA, GJ, EI = 2.5, 4.0e5, 1.5e5, 300.0, 800.0
M_STAR = np.diag([RHO_A, RHO_A, RHO_A, 0.02, 0.01, 0.01])
C_STAR = np.diag([EA, GA, GA, GJ, EI, EI])
LENGTH, ORDER = 3.0, 4
ORIGIN = np.array([1.0, -0.5, 0.2])


def straight_beam(gravity=(0.0, 0.0, 0.0)) -> kp.Model:
    """One element of order 4 along x from ``ORIGIN``, 5-point Gauss quadrature."""
    b = kp.ModelBuilder(gravity=gravity)
    s = (gll_points(ORDER) + 1.0) / 2.0
    nodes = [b.add_node(position=ORIGIN + np.array([LENGTH * si, 0.0, 0.0])) for si in s]
    b.add_beam_element(nodes, s, gauss_quadrature(ORDER + 1), [0.0], [M_STAR], [C_STAR])
    return b.build()


def states(model: kp.Model, u: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    q = np.zeros((model.n_nodes, 7))
    q[:, 3] = 1.0
    q[:, :3] = u
    return kp.io.row_invariants(model, q, v)


def test_translating_beam() -> None:
    """Rigid translation at V: T = ½ ρA L |V|², p = ρA L V, L = ∫ x × ρA V ds; no strain energy."""
    model = straight_beam()
    velocity = np.array([0.3, -1.2, 0.7])
    v = np.zeros((model.n_nodes, 6))
    v[:, :3] = velocity
    out = states(model, np.zeros((model.n_nodes, 3)), v)
    mass = RHO_A * LENGTH
    centre = ORIGIN + np.array([LENGTH / 2.0, 0.0, 0.0])
    assert out["kinetic_energy"] == pytest.approx(0.5 * mass * velocity @ velocity, rel=1e-13)
    np.testing.assert_allclose(out["linear_momentum"], mass * velocity, rtol=1e-13)
    np.testing.assert_allclose(out["angular_momentum"], np.cross(centre, mass * velocity), rtol=1e-12, atol=1e-12)
    assert out["strain_energy"] == pytest.approx(0.0, abs=1e-20)


def test_spinning_beam_about_its_centre() -> None:
    """Spin ω e_z about the centre, nodes with ẋ = ω × (x − c): T = ½ ω² (ρA L³/12 + ρ J_zz L)
    (J_zz = M*[5, 5] per unit length)."""
    model = straight_beam()
    omega = 2.0
    centre = ORIGIN + np.array([LENGTH / 2.0, 0.0, 0.0])
    x = np.asarray(model.x0)[:, :3]
    v = np.zeros((model.n_nodes, 6))
    v[:, :3] = np.cross((0.0, 0.0, omega), x - centre)
    v[:, 5] = omega
    out = states(model, np.zeros((model.n_nodes, 3)), v)
    expected = 0.5 * omega**2 * (RHO_A * LENGTH**3 / 12.0 + M_STAR[5, 5] * LENGTH)
    assert out["kinetic_energy"] == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(out["linear_momentum"], 0.0, atol=1e-12)


def test_uniform_stretch_and_gravity() -> None:
    """u = e (X − X_root) along the axis: strain energy ½ EA e² L; gravity: −ρA L g·x_centre."""
    g = np.array([0.0, -9.81, 2.0])
    model = straight_beam(gravity=g)
    e = 1e-3
    x = np.asarray(model.x0)[:, :3]
    u = np.zeros((model.n_nodes, 3))
    u[:, 0] = e * (x[:, 0] - ORIGIN[0])
    out = states(model, u, np.zeros((model.n_nodes, 6)))
    assert out["strain_energy"] == pytest.approx(0.5 * EA * e**2 * LENGTH, rel=1e-12)
    centre = ORIGIN + np.array([(1.0 + e) * LENGTH / 2.0, 0.0, 0.0])
    assert out["potential_energy"] == pytest.approx(-RHO_A * LENGTH * g @ centre, rel=1e-12)


def test_rigid_rotation_has_no_strain_energy() -> None:
    """The whole beam turned by 0.7 rad about an oblique axis through its root: no strain."""
    model = straight_beam()
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    angle = 0.7
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rot = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    x = np.asarray(model.x0)[:, :3]
    q = np.zeros((model.n_nodes, 7))
    q[:, :3] = (x - ORIGIN) @ rot.T + ORIGIN - x
    q[:, 3:] = (np.cos(angle / 2), *(np.sin(angle / 2) * axis))
    out = kp.io.row_invariants(model, q, np.zeros((model.n_nodes, 6)))
    assert abs(out["strain_energy"]) < 1e-20 * EA + 1e-12


def test_bent_into_an_arc() -> None:
    """Nodes on a circular arc of curvature κ with the section turned along it: strain energy
    ½ EI κ² L (pure bending, inextensible: the arc keeps the length)."""
    model = straight_beam()
    kappa = 0.05
    s = np.asarray(model.x0)[:, 0] - ORIGIN[0]  # arc length of each node
    theta = kappa * s
    q = np.zeros((model.n_nodes, 7))
    q[:, 0] = np.sin(theta) / kappa - s
    q[:, 1] = (1.0 - np.cos(theta)) / kappa
    q[:, 3] = np.cos(theta / 2)
    q[:, 6] = np.sin(theta / 2)  # rotation about z by θ(s)
    out = kp.io.row_invariants(model, q, np.zeros((model.n_nodes, 6)))
    # order-4 interpolation of the arc: the error is the interpolation's, far below 1e-6 here
    assert out["strain_energy"] == pytest.approx(0.5 * EI * kappa**2 * LENGTH, rel=1e-6)


def test_uniform_distributed_load_on_a_cantilever() -> None:
    """A uniform load q per unit length on a clamped cantilever (statics, consistent node loads):
    root force −qL, root moment −∫ x × q ds, and the tip deflection of Timoshenko theory
    qL⁴/8EI + qL²/2GA to the geometric nonlinearity's 1e-3."""
    from kynemapy.engine.elements.beams.loads import consistent_node_loads

    b = kp.ModelBuilder()
    s = (gll_points(ORDER) + 1.0) / 2.0
    nodes = [b.add_node(position=(LENGTH * si, 0.0, 0.0)) for si in s]
    b.add_beam_element(nodes, s, gauss_quadrature(ORDER + 1), [0.0], [M_STAR], [C_STAR])
    bc = b.add_fixed_bc(nodes[0])
    model = b.build()
    q = np.array([0.0, 0.0, -0.02, 0.0, 0.0, 0.0])  # [N/m]
    ids, loads = consistent_node_loads(model, 0, q)
    assert list(ids) == nodes
    np.testing.assert_allclose(loads.sum(axis=0), q * LENGTH, rtol=1e-13, atol=1e-16)
    sim = kp.Simulation(model, kp.StepParameters(h=1.0, dynamic=False, max_iter=20))
    np.add.at(sim.inputs.f, ids, loads)
    sim.step()
    w = q[2]
    expected = w * LENGTH**4 / (8 * EI) + w * LENGTH**2 / (2 * GA)
    assert sim.state.q[nodes[-1], 2] == pytest.approx(expected, rel=1e-3)
    force, moment = sim.reaction(bc)
    np.testing.assert_allclose(force, -q[:3] * LENGTH, rtol=1e-9, atol=1e-12)
    assert moment[1] == pytest.approx(w * LENGTH**2 / 2, rel=1e-3)  # −(L/2 e_x) × (qL e_z), deflected
    with pytest.raises(ValueError, match=r"shape \(6,\) or \(5, 6\)"):
        consistent_node_loads(model, 0, np.zeros((3, 6)))
    with pytest.raises(IndexError, match="unknown beam element 1"):
        consistent_node_loads(model, 1, q)
