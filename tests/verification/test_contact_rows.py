"""Contact results per output row (kynemapy.run.contact_rows): the rows' contact points against
:meth:`Simulation.contacts` called at the same states, closed forms (a ball at rest, a box
sticking on an incline), the contact energy (the resting ball's k δ²/2, an undamped bouncing
ball's total energy) and the rows of a result file."""

from __future__ import annotations

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from scipy.optimize import brentq

import kynemapy as kp
from kynemapy.cli import main
from kynemapy.run.contact_rows import contact_energy, contact_rows

G = 9.81


def _params(h: float, rho_inf: float = 0.9) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=rho_inf, atol=1e-10, rtol=1e-10, geometric_stiffness=True)


def sliding_ball_and_falling_ball() -> kp.Model:
    """A ball sliding on the ground (μ = 0.5) and a second one falling on it off-centre: the
    ground points and the body pair both carry normal and friction forces within 30 ms."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.1 - G / 1e5), velocity=(0.3, 0.0, 0.0, 0.0, 0.0, 0.0))
    b.add_mass(n, mass=1.0, inertia=(0.004,) * 3)
    b.add_sphere(n, 0.1)
    n2 = b.add_node(position=(0.03, 0.0, 0.301), velocity=(0.0, 0.0, -0.2, 0.0, 0.0, 0.0))
    b.add_mass(n2, mass=1.0, inertia=(0.004,) * 3)
    b.add_sphere(n2, 0.1)
    b.add_ground_plane(stiffness=1e5, damping=100.0, friction=0.5, slip_velocity=1e-2)
    b.set_body_contact(stiffness=1e5, damping=50.0, friction=0.5, slip_velocity=0.3)
    return b.build()


def _stack(contacts: list) -> dict[str, np.ndarray]:
    return {
        name: np.array([getattr(c, name) for c in contacts])
        for name in ("gap", "active", "normal_force", "friction_force", "slip_speed")
    }


def test_rows_are_the_contacts_called_at_each_converged_state() -> None:
    """One simulation stepped with contacts() and contact_pairs() after every step, another
    rolled out in compiled calls: the rows' contact points are the same numbers, bit for bit."""
    model = sliding_ball_and_falling_ball()
    assert model.n_contacts == 2 and model.pair_node.shape == (1, 2)
    stepped, rolled = kp.Simulation(model, _params(5e-4)), kp.Simulation(model, _params(5e-4))
    points, pairs = [stepped.contacts()], [stepped.contact_pairs()]
    for _ in range(60):
        stepped.step()
        points.append(stepped.contacts())
        pairs.append(stepped.contact_pairs())
    rows = rolled.rollout(60)
    saved = rolled.save_state()
    got = contact_rows(rolled, rows)
    np.testing.assert_array_equal(rolled.state.q, saved.q)  # the simulation's state is put back
    np.testing.assert_array_equal(rows["q"][-1], stepped.state.q)
    for which, reference in (("points", points), ("pairs", pairs)):
        table = got[which]
        for name, want in _stack(reference).items():
            np.testing.assert_array_equal(getattr(table, name), want, err_msg=f"{which}.{name}")
        np.testing.assert_array_equal(table.node, reference[0].node)
        np.testing.assert_array_equal(table.shape, reference[0].shape)
    # the case exercises what it claims: forces on the ground points and on the pair
    assert got["points"].active[:, 0].sum() > 50 and got["pairs"].active.any()
    assert np.abs(got["points"].friction_force).max() > 1.0
    assert np.abs(got["pairs"].friction_force).max() > 1.0
    assert got["points"].gap.shape == (61, 2) and got["pairs"].friction_force.shape == (61, 1, 3)


@pytest.mark.parametrize("law", ["linear", "hertz"])
def test_resting_ball_rows_carry_m_g_and_store_the_springs_energy(law: str) -> None:
    """A 2 kg ball at rest on k: the last row's normal force is m g and the contact energy the
    spring's ∫ k δ^e dδ = k δ^(e+1) / (e + 1) at δ = (m g / k)^(1/e): k δ²/2 = (m g)²/(2 k) for
    e = 1 (a static equilibrium: to 1e-9 relative)."""
    m, r = 2.0, 0.1
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, r))
    b.add_mass(n, mass=m, inertia=(0.4 * m * r * r,) * 3)
    b.add_sphere(n, r)
    if law == "linear":
        k, e = 1e5, 1.0
        b.add_ground_plane(stiffness=k, damping=math.sqrt(k * m))
    else:
        k, e = 1e7, 1.5
        b.add_ground_plane(stiffness=k, exponent=1.5, damping=1e8, damping_model="hunt_crossley")
    delta = (m * G / k) ** (1.0 / e)
    sim = kp.Simulation(b.build(), _params(1e-3))
    rows = sim.rollout(1000, every=250)
    got = contact_rows(sim, rows)
    assert rows["time"].shape == (5,)
    assert abs(got["points"].normal_force[-1, 0] - m * G) < 1e-9 * m * G
    assert abs(got["points"].gap[-1, 0] + delta) < 1e-9 * delta
    stored = k * delta ** (e + 1.0) / (e + 1.0)
    assert abs(got["contact_energy"][-1] - stored) < 1e-9 * stored
    if law == "linear":
        assert abs(got["contact_energy"][-1] - (m * G) ** 2 / (2.0 * k)) < 1e-9 * stored


def test_box_sticking_on_an_incline_rows_carry_the_friction_m_g_sin_theta() -> None:
    """tan θ = 0.3 < μ = 0.5: the 1 kg box sticks; in its last row the four bottom corners press
    and their friction forces sum to −m g sin θ along the slope (a steady state, 1e-9 N)."""
    theta, mu, m, k = math.atan(0.3), 0.5, 1.0, 1e6
    b = kp.ModelBuilder(gravity=(G * math.sin(theta), 0.0, -G * math.cos(theta)))
    n = b.add_node(position=(0.0, 0.0, 0.05 - m * G * math.cos(theta) / (4 * k)))
    b.add_mass(n, mass=m, inertia=(m * 0.05 / 12, m * 0.05 / 12, m * 0.08 / 12))
    b.add_box(n, (0.1, 0.1, 0.05))
    b.add_ground_plane(stiffness=k, damping=500.0, friction=mu, slip_velocity=1e-3)
    sim = kp.Simulation(b.build(), _params(1e-3))
    rows = sim.rollout(1000, every=500)
    points = contact_rows(sim, rows)["points"]
    assert list(points.active[-1]) == [True, False] * 4
    assert abs(points.normal_force[-1].sum() - m * G * math.cos(theta)) < 1e-9 * G
    np.testing.assert_allclose(
        points.friction_force[-1].sum(axis=0), [-m * G * math.sin(theta), 0.0, 0.0], rtol=0.0, atol=1e-9
    )


def _bouncing_ball_energy_error(h: float, k: float, fall: float) -> tuple[float, float]:
    """Largest change of kinetic + gravity + contact energy over the rows of 0.25 s of a 1 kg
    ball dropped from rest ``fall`` s above the ground (k, no damper), and the same without the
    contact energy."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.1 + G * fall * fall / 2.0))
    b.add_mass(n, mass=1.0, inertia=(0.004,) * 3)
    b.add_sphere(n, 0.1)
    b.add_ground_plane(stiffness=k)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=h, rho_inf=0.9, atol=1e-12, rtol=1e-12))
    rows = sim.rollout(round(0.25 / h))
    mechanical = rows["kinetic_energy"] + rows["potential_energy"]
    total = mechanical + contact_rows(sim, rows)["contact_energy"]
    return float(np.abs(total - total[0]).max()), float(np.abs(mechanical - mechanical[0]).max())


def test_undamped_bouncing_ball_conserves_kinetic_gravity_and_contact_energy_to_second_order() -> None:
    """A 1 kg ball falls 0.1 s onto an undamped spring ground and leaves 10 ms later (k chosen so:
    the contact lasts (π + 2 asin(δ_s / A)) / ω, δ_s = m g / k, A = √(δ_s² + (v₀/ω)²)), so that
    touching down and lifting off fall on grid points at every h below.  Total energy (kinetic,
    gravity, contact spring) over all rows, in contact too: its largest change falls at least as
    h² (measured 5.3e-4, 7.1e-5, 9.8e-6 J at h = 5e-4, 2.5e-4, 1.25e-4 s: ratios 7.5, 7.3, about
    h³); without the contact energy the change is the spring's 0.5 J.  (Contact events inside a
    step add an O(h²) error whose constant depends on where they fall.)"""
    m, fall, contact = 1.0, 0.1, 0.01
    v0 = G * fall

    def duration(k: float) -> float:
        w = math.sqrt(k / m)
        ds = m * G / k
        return (math.pi + 2.0 * math.asin(ds / math.hypot(ds, v0 / w))) / w

    k = brentq(lambda s: duration(s) - contact, 5e4, 2e5, xtol=1e-10)
    errors = []
    for h in (5e-4, 2.5e-4, 1.25e-4):
        total, mechanical = _bouncing_ball_energy_error(h, k, fall)
        assert mechanical > 0.5  # the spring holds half a joule at the deepest point
        errors.append(total)
    assert errors[-1] < 2e-5
    assert errors[0] / errors[1] > 3.5 and errors[1] / errors[2] > 3.5


def test_rows_read_from_a_result_file_give_the_same_contacts(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run into a result file, read back: its rows' contacts are those of the same rows rolled
    out in memory (the file keeps q and v bit for bit); ``kynemapy info`` lists the contact."""
    model = sliding_ball_and_falling_ball()
    path = tmp_path / "contact.h5"
    to_file, in_memory = kp.Simulation(model, _params(5e-4)), kp.Simulation(model, _params(5e-4))
    to_file.run(n_steps=40, output=path, every=4)
    result = kp.io.read(path)
    assert main(["info", str(path)]) == 0
    assert "contact           2 points on ground planes, 1 body pair; per row" in capsys.readouterr().out
    rows = in_memory.rollout(40, every=4)
    from_file, from_memory = contact_rows(to_file, result), contact_rows(in_memory, rows)
    assert result.committed == 11
    for which in ("points", "pairs"):
        for name in ("gap", "normal_force", "friction_force", "slip_speed"):
            np.testing.assert_array_equal(getattr(from_file[which], name), getattr(from_memory[which], name))
    np.testing.assert_array_equal(from_file["contact_energy"], from_memory["contact_energy"])
    assert from_file["points"].active.any()


def test_a_model_without_contact_has_empty_tables_and_no_energy() -> None:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 1.0))
    b.add_mass(n, mass=1.0, inertia=(0.1,) * 3)
    sim = kp.Simulation(b.build(), _params(1e-3))
    rows = sim.rollout(3)
    got = contact_rows(sim, rows)
    assert got["points"].gap.shape == (4, 0) and got["pairs"].friction_force.shape == (4, 0, 3)
    np.testing.assert_array_equal(got["contact_energy"], np.zeros(4))


def test_bad_rows_and_gaps_are_refused_with_what_is_wrong() -> None:
    model = sliding_ball_and_falling_ball()
    sim = kp.Simulation(model, _params(5e-4))
    rows = sim.rollout(2)
    with pytest.raises(ValueError, match=r"rows must have 'q' \(R, N, 7\) and 'v'"):
        contact_rows(sim, {"q": rows["q"]})
    with pytest.raises(ValueError, match=r"expected q \(R, 2, 7\) and v \(R, 2, 6\), got \(3, 2, 7\) and \(3, 1, 6\)"):
        contact_rows(sim, {"q": rows["q"], "v": rows["v"][:, :1]})
    with pytest.raises(ValueError, match=r"points_gap must be \(R, 2\), got shape \(3, 5\)"):
        contact_energy(model, np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"pairs_gap must be \(R, 1\)"):
        contact_energy(model, np.zeros((3, 2)), np.zeros(3))


def test_a_run_with_contact_continued_by_restart_has_the_uninterrupted_runs_contact_rows(tmp_path: Path) -> None:
    """A run stopped after 20 steps and continued from its file (:meth:`Simulation.restart`) has
    the rows, and so the contact rows, of one run of 40 steps, bit for bit."""
    model = sliding_ball_and_falling_ball()
    whole, parts = tmp_path / "whole.h5", tmp_path / "parts.h5"
    kp.Simulation(model, _params(5e-4)).run(n_steps=40, output=whole, every=2, block=4)
    kp.Simulation(model, _params(5e-4)).run(n_steps=20, output=parts, every=2, block=4)
    resumed = kp.Simulation.restart(parts)
    assert resumed.step_count == 20
    resumed.run(n_steps=20, output=parts, every=2, block=4)
    reference, continued = kp.io.read(whole), kp.io.read(parts)
    assert continued.committed == reference.committed == 21
    sim = kp.Simulation(model, _params(5e-4))
    want, got = contact_rows(sim, reference), contact_rows(sim, continued)
    for which in ("points", "pairs"):
        for name in ("gap", "active", "normal_force", "friction_force", "slip_speed"):
            np.testing.assert_array_equal(getattr(got[which], name), getattr(want[which], name), err_msg=name)
    np.testing.assert_array_equal(got["contact_energy"], want["contact_energy"])
    assert want["pairs"].active[-1].any() or want["points"].active[-1].any()


def test_paraview_export_carries_the_contact_forces_at_the_shapes_points(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The box sticking on the incline, into a result file and exported for ParaView (``kynemapy
    export``): at its last
    step the contact forces at the four bottom corners hold the box, −m g = (−g sin θ, 0, g cos θ)
    (1e-9 N), the top corners and the other points carry none; read back with h5py and with
    VTK's reader.  A model without contact exports no contact_force."""
    from kynemapy.io.vtkhdf import write_vtkhdf
    from kynemapy.model.geometry import scene

    theta, mu, m, k = math.atan(0.3), 0.5, 1.0, 1e6
    b = kp.ModelBuilder(gravity=(G * math.sin(theta), 0.0, -G * math.cos(theta)))
    n = b.add_node(position=(0.0, 0.0, 0.05 - m * G * math.cos(theta) / (4 * k)))
    b.add_mass(n, mass=m, inertia=(m * 0.05 / 12, m * 0.05 / 12, m * 0.08 / 12))
    b.add_box(n, (0.1, 0.1, 0.05))
    b.add_ground_plane(stiffness=k, damping=500.0, friction=mu, slip_velocity=1e-3)
    path = tmp_path / "incline.h5"
    kp.Simulation(b.build(), _params(1e-3)).run(n_steps=1000, output=path, every=500)
    result = kp.io.read(path)
    assert main(["export", str(path)]) == 0  # computes the contacts of a model with contact
    out = path.with_suffix(".vtkhdf")
    assert capsys.readouterr().out.strip() == str(out)
    with pytest.raises(ValueError, match=r"contacts must hold the result's 3 rows of its 8 contact points"):
        two_rows = contact_rows(kp.Simulation(result.model, result.params), {"q": result.q[:2], "v": result.v[:2]})
        write_vtkhdf(result, tmp_path / "bad.vtkhdf", contacts=two_rows["points"])
    sc = scene(result.model)
    first = result.model.n_nodes + 2 * len(sc.joints) + 8 * len(sc.boxes)
    assert [sh.kind for sh in sc.shapes] == ["box"]
    with h5py.File(out, "r") as f:
        n_points = int(f["VTKHDF/NumberOfPoints"][0])
        force = f["VTKHDF/PointData/contact_force"][...].reshape(3, n_points, 3)
        points = f["VTKHDF/Points"][...].reshape(3, n_points, 3)
        assert f["VTKHDF/Steps/PointDataOffsets/contact_force"].shape == (3,)
    last = force[-1]
    corners = slice(first, first + 8)
    np.testing.assert_allclose(last[corners].sum(axis=0), [-G * math.sin(theta), 0.0, G * math.cos(theta)], atol=1e-9)
    pressing = np.abs(last).sum(axis=1) > 0.0
    assert pressing.sum() == 4 and pressing[corners].sum() == 4
    assert np.all(points[-1, pressing, 2] < 0.0)  # the pressing points are the corners below the plane
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy

    reader = vtk.vtkHDFReader()
    reader.SetFileName(str(out))
    reader.UpdateInformation()
    times = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    reader.UpdateTimeStep(times[-1])
    poly = reader.GetOutputDataObject(0)
    np.testing.assert_array_equal(vtk_to_numpy(poly.GetPointData().GetArray("contact_force")), last)

    plain = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    plain.add_mass(plain.add_node(position=(0.0, 0.0, 1.0)), mass=1.0, inertia=(0.1,) * 3)
    kp.Simulation(plain.build(), _params(1e-3)).run(n_steps=3, output=tmp_path / "plain.h5")
    assert main(["info", str(tmp_path / "plain.h5")]) == 0
    assert "contact" not in capsys.readouterr().out
    assert main(["export", str(tmp_path / "plain.h5")]) == 0
    with h5py.File(tmp_path / "plain.vtkhdf", "r") as f:
        assert "contact_force" not in f["VTKHDF/PointData"]
        assert "contact_force" not in f["VTKHDF/Steps/PointDataOffsets"]
