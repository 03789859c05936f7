"""Looking at results: the drawing geometry (inertia boxes, joint points, magnified motion), the
plots (displacement from the initial position, legends outside), the VTKHDF export read back by
VTK's own reader, and animations (GIF frames read back with PIL; MP4 with ffmpeg or a GIF)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io import read
from kynemapy.post.geometry import magnified, node_positions, scene
from kynemapy.run.sweep import member_rotation_angle

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def offset_mass_matrix(m: float, dims, eta) -> np.ndarray:
    """M* of a uniform box with edge lengths ``dims`` whose centre of mass is ``eta`` from the node."""
    a, b, c = dims
    jc = m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    eta = np.asarray(eta, dtype=float)
    ms = np.zeros((6, 6))
    ms[:3, :3] = m * np.eye(3)
    ms[3:, :3] = m * skew(eta)
    ms[:3, 3:] = ms[3:, :3].T
    ms[3:, 3:] = jc + m * (eta @ eta * np.eye(3) - np.outer(eta, eta))
    return ms


def linkage(tmp_path: Path, n_steps: int = 24) -> Path:
    """A box on a hinge to the ground (offset centre of mass), a second body on a ball joint to it
    and a spring between them; gravity."""
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    arm = b.add_node(position=(0.5, 0, 0), velocity=(0, 0, 0, 0, 0, 1.5))
    b.add_mass(arm, mass_matrix=offset_mass_matrix(3.0, (1.0, 0.2, 0.1), (0.1, 0.0, 0.0)))
    b.add_hinge_joint(kp.GROUND, arm, point=(0, 0, 0), axis=(0, 1, 0))
    bob = b.add_node(position=(1.5, 0, 0))
    b.add_mass(bob, mass=1.0, inertia=(0.02, 0.03, 0.04))
    b.add_ball_joint(arm, bob, point=(1.0, 0, 0))
    tip = b.add_node(position=(2.0, 0, 0.5))
    b.add_mass(tip, mass=0.5, inertia=(0.01, 0.01, 0.01))
    b.add_spring(bob, tip, stiffness=200.0, undeformed_length=0.7)
    with warnings.catch_warnings():  # the arm's ω_z is not the hinge's: Simulation projects it (a known side effect)
        warnings.filterwarnings("ignore", "initial velocities projected onto the velocity constraints", UserWarning)
        sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, rho_inf=0.8))
    out = tmp_path / "linkage.h5"
    sim.run(n_steps=n_steps, output=out)
    return out


# ------------------------------------------------------------------------------------------------
def test_inertia_box_recovers_the_box_and_its_centre_of_mass() -> None:
    b = kp.ModelBuilder()
    n = b.add_node(position=(1, 2, 3), orientation=(np.cos(0.3), 0, 0, np.sin(0.3)))
    b.add_mass(n, mass_matrix=offset_mass_matrix(12.0, (1.0, 2.0, 3.0), (0.2, -0.1, 0.3)))
    sc = scene(b.build())
    (box,) = sc.boxes
    np.testing.assert_allclose(box.centre, [0.2, -0.1, 0.3], atol=1e-14)
    order = np.argmax(np.abs(box.axes), axis=0)  # principal axes are the body axes here
    np.testing.assert_allclose(box.size[np.argsort(order)], [1.0, 2.0, 3.0], rtol=1e-12)
    q = np.zeros((1, 1, 7))
    q[0, 0, 3] = 1.0
    corners = sc.box_corners(q)[0, 0]
    rot = sc.rotations(q)[0, 0]
    np.testing.assert_allclose(corners.mean(axis=0), [1, 2, 3] + rot @ [0.2, -0.1, 0.3], atol=1e-13)


def test_magnified_motion_scales_displacement_and_rotation_angle() -> None:
    q = np.zeros((3, 1, 7))
    q[:, 0, :3] = [[0.1, 0, 0], [0.2, 0.1, 0], [0.3, 0.1, 0.2]]
    angles = np.array([0.0, 0.01, 0.03])
    q[:, 0, 3:] = np.stack([np.cos(angles / 2), np.sin(angles / 2) * 0.6, 0 * angles, np.sin(angles / 2) * 0.8], 1)
    m = magnified(q, 10.0)
    np.testing.assert_allclose(m[:, 0, :3] - m[0, 0, :3], 10 * (q[:, 0, :3] - q[0, 0, :3]), atol=1e-15)
    np.testing.assert_allclose(member_rotation_angle(m[:, 0]), 10 * angles, atol=1e-14)
    assert magnified(q, 1.0) is q


def test_plots_show_displacement_from_the_start_with_legends_outside(tmp_path: Path, monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kynemapy.post.plots import plot_result, relative_rotation_vectors

    r = read(linkage(tmp_path))
    monkeypatch.setattr(plt, "close", lambda fig=None: None)  # keep the figures to look at them
    plt.close("all")
    before = set(plt.get_fignums())
    files = plot_result(r, tmp_path / "plots")
    assert [f.name for f in files] == ["displacement.png", "rotation.png", "energy.png", "iterations.png"]
    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.stat().st_size > 5000
    figs = [plt.figure(n) for n in sorted(set(plt.get_fignums()) - before)]
    disp, rot, energy, its = figs
    ux = disp.axes[0].get_lines()
    assert [line.get_label() for line in ux] == ["node 0", "node 1", "node 2"]  # bodies, in order
    np.testing.assert_array_equal(ux[1].get_ydata(), r.q[:, 1, 0] - r.q[0, 1, 0])
    np.testing.assert_array_equal(
        rot.axes[2].get_lines()[0].get_ydata(), np.degrees(relative_rotation_vectors(r.q[:, 0]))[:, 1]
    )
    e = r.kinetic_energy + r.potential_energy + r.strain_energy  # the total: springs store energy too
    np.testing.assert_array_equal(energy.axes[0].get_lines()[0].get_ydata(), (e - e[0]) / abs(e[0]))
    np.testing.assert_array_equal(its.axes[0].get_lines()[0].get_ydata(), r.iterations[1:])
    for fig in figs:
        fig.canvas.draw()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is not None:  # the legend lies right of the plotting area, not on the data
                assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    plt.close("all")
    # hinge about y: the arm's rotation vector points along y
    rv = relative_rotation_vectors(r.q[:, 0])
    assert np.abs(rv[-1, 1]) > 0.1 and np.abs(rv[-1, [0, 2]]).max() < 1e-9


def test_a_step_controlled_file_plots_its_step_sizes_and_estimates(tmp_path: Path, monkeypatch) -> None:
    """A step-controlled run's rows are no steps: its figure is the control's (the step size of
    the accepted step reaching each row and its estimated error, with the tolerance line), not
    a panel of zero Newton iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kynemapy.post.plots import plot_result

    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    rod = b.add_node(position=(0.5, 0.0, 0.0))
    b.add_mass(rod, mass=1.0, inertia=(2e-4, 1 / 12, 1 / 12))
    b.add_hinge_joint(kp.GROUND, rod, point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-2, rho_inf=0.9))
    path = tmp_path / "rod.h5"
    sim.run(t_end=0.3, output=path, control=kp.StepControl(rtol=1e-5, atol=1e-5, scheme="extrapolated"))
    r = read(path)
    monkeypatch.setattr(plt, "close", lambda fig=None: None)
    plt.close("all")
    before = set(plt.get_fignums())
    files = plot_result(r, tmp_path / "plots")
    assert [f.name for f in files] == ["displacement.png", "rotation.png", "energy.png", "step_control.png"]
    control = plt.figure(sorted(set(plt.get_fignums()) - before)[-1])
    np.testing.assert_array_equal(control.axes[0].get_lines()[0].get_ydata(), r.step_control["step_size"][1:])
    np.testing.assert_array_equal(control.axes[1].get_lines()[0].get_ydata(), r.step_control["estimated_error"][1:])
    assert np.all(r.step_control["step_size"][1:] > 0.0)
    plt.close("all")


def test_vtkhdf_reads_back_in_vtk_with_every_time_step_and_the_positions(tmp_path: Path) -> None:
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy

    from kynemapy.io.vtkhdf import CELL_KINDS, write_vtkhdf

    r = read(linkage(tmp_path))
    path = write_vtkhdf(r, every=5)
    assert path == tmp_path / "linkage.vtkhdf"
    rows = [0, 5, 10, 15, 20, 24]
    reader = vtk.vtkHDFReader()
    reader.SetFileName(str(path))
    reader.UpdateInformation()
    times = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    assert reader.GetNumberOfSteps() == len(rows)
    np.testing.assert_array_equal(times, r.time[rows])
    sc = scene(r.model)
    nn, nj, nb = r.model.n_nodes, len(sc.joints), len(sc.boxes)
    assert (nn, nj, nb) == (3, 2, 3)
    for k, row in enumerate(rows):
        reader.UpdateTimeStep(times[k])
        poly = reader.GetOutputDataObject(0)
        assert poly.GetNumberOfPoints() == nn + 2 * nj + 8 * nb
        assert (poly.GetNumberOfVerts(), poly.GetNumberOfLines(), poly.GetNumberOfPolys()) == (nn, 1 + 3, 6 * nb)
        pts = vtk_to_numpy(poly.GetPoints().GetData())
        assert np.array_equal(pts[:nn], node_positions(r.model, r.q[row : row + 1])[0])
        np.testing.assert_array_equal(pts[nn + 2 * nj :], sc.box_corners(r.q[row : row + 1]).reshape(-1, 3))
        joints = pts[nn : nn + 2 * nj].reshape(nj, 2, 3)
        np.testing.assert_allclose(joints[:, 0], joints[:, 1], atol=1e-6)  # both sides meet at the joint
        np.testing.assert_allclose(joints[0, 0], [0, 0, 0], atol=1e-6)  # the hinge stays at the origin
        disp = vtk_to_numpy(poly.GetPointData().GetArray("displacement"))
        assert np.array_equal(disp[:nn], r.q[row, :, :3] - r.q[0, :, :3])
        vel = vtk_to_numpy(poly.GetPointData().GetArray("velocity"))
        assert np.array_equal(vel[:nn], r.v[row, :, :3])
        kinds = vtk_to_numpy(poly.GetCellData().GetArray("kind"))
        assert sorted(set(kinds.tolist())) == sorted(
            CELL_KINDS[k] for k in ("node", "spring", "joint arm", "body face")
        )
        corners = pts[nn + 2 * nj :].reshape(nb, 8, 3)
        edge = np.linalg.norm(corners[0, 1] - corners[0, 0])
        np.testing.assert_allclose(edge, sc.boxes[0].size[0], rtol=1e-12)  # rigid boxes


def test_animation_gif_has_one_frame_per_drawn_row_and_mp4_falls_back(tmp_path: Path, monkeypatch) -> None:
    from PIL import Image

    from kynemapy.post import animate as anim

    result = linkage(tmp_path, n_steps=30)
    rows = anim.frame_rows(31, max_frames=8)
    assert rows[0] == 0 and rows[-1] == 30 and len(rows) <= 8 and np.all(np.diff(rows) > 0)
    gif = anim.animate(result, tmp_path / "a.gif", max_frames=8, dpi=40, size=(3, 3))
    with Image.open(gif) as im:
        assert im.n_frames == len(rows)
    frames = anim.animate(result, tmp_path / "b.gif", every=10, style="frame", dpi=40, size=(3, 3))
    with Image.open(frames) as im:
        assert im.n_frames == 4  # rows 0, 10, 20, 30
    if anim.ffmpeg_available():
        mp4 = anim.animate(result, tmp_path / "c.mp4", max_frames=5, dpi=40, size=(3, 3))
        assert mp4.suffix == ".mp4" and mp4.stat().st_size > 0
    monkeypatch.setattr(anim, "ffmpeg_available", lambda: False)
    with pytest.warns(UserWarning, match="ffmpeg not found"):
        out = anim.animate(result, tmp_path / "d.mp4", max_frames=3, dpi=40, size=(3, 3))
    assert out == tmp_path / "d.gif" and not (tmp_path / "d.mp4").exists()
    with Image.open(out) as im:
        assert im.n_frames == 3
    with pytest.raises(ValueError, match=r"write a \.gif or an \.mp4"):
        anim.animate(result, tmp_path / "e.avi")


def test_command_line_animate_and_export(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kynemapy", *args], capture_output=True, text=True, cwd=tmp_path)

    out = tmp_path / "platform.h5"
    assert cli("run", str(EXAMPLES / "floating_platform.toml"), "-o", str(out), "--no-progress").returncode == 0
    res = cli("animate", str(out), "-o", "p.mp4", "--max-frames", "4", "--magnify", "500", "--no-progress")
    assert res.returncode == 0, res.stderr
    written = Path(res.stdout.strip())
    from PIL import Image

    with Image.open(tmp_path / written) as im:
        assert im.n_frames == 4
    res = cli("export", str(out), "--every", "50")
    assert res.returncode == 0 and Path(res.stdout.strip()) == tmp_path / "platform.vtkhdf", res.stderr
    import h5py

    with h5py.File(tmp_path / "platform.vtkhdf") as f:
        np.testing.assert_array_equal(f["VTKHDF/Steps/Values"][()], read(out).time[[0, 50, 100, 101]])
    for args, words in [
        (("animate", str(out), "-o", "x.avi"), "write a .gif or an .mp4"),
        (("animate", str(tmp_path / "missing.h5")), "missing.h5"),
        (("export", str(out), "--every", "0"), "every must be an integer >= 1"),
        # a folder where the file goes: the suggestion is a file of the right kind (it said run.h5)
        (("export", str(out), "-o", str(tmp_path)), f"give a file name, e.g. '{tmp_path / 'run.vtkhdf'}'"),
        (("animate", str(out), "-o", str(tmp_path)), f"give a file name, e.g. '{tmp_path / 'run.gif'}'"),
    ]:
        res = cli(*args)
        assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr, res.stderr


def cantilever(load: np.ndarray, order: int = 6, length: float = 2.0):
    """A straight cantilever along x (one element, GLL nodes), its root clamped, ``load`` [N] at the tip."""
    from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points

    m_star = np.diag([1.0, 1.0, 1.0, 0.01, 0.005, 0.005])
    c_star = np.diag([1e7, 5e6, 5e6, 1e4, 2e4, 2e4])
    b = kp.ModelBuilder()
    s = (gll_points(order) + 1.0) / 2.0
    nodes = [b.add_node(position=(length * si, 0.0, 0.0)) for si in s]
    b.add_beam_element(nodes, s, gauss_quadrature(order + 1), [0.0], [m_star], [c_star])
    bc = b.add_fixed_bc(nodes[0])
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1.0, dynamic=False, max_iter=20))
    sim.inputs.f[nodes[-1], :3] = load
    return sim, nodes, bc


def test_beam_tip_deflection_root_loads_and_figures(tmp_path: Path, monkeypatch) -> None:
    """A clamped cantilever under a tip load P in statics: the root load balances it (force −P,
    moment −(x_tip − x_root) × P), the tip deflects by Timoshenko's PL³/3EI + PL/GA to the
    geometric nonlinearity's 1e-3, the deflection seen in the root frame is the displacement
    (the root does not move), and ``plot`` writes the two beam figures; a polyline per beam
    goes to ParaView's file."""
    from kynemapy.engine.api import reactions
    from kynemapy.post.geometry import beam_chains, tip_deflection
    from kynemapy.post.plots import plot_result

    monkeypatch.setenv("MPLBACKEND", "Agg")
    load = np.array([0.0, 0.0, -10.0])
    sim, nodes, bc = cantilever(load)
    path = tmp_path / "cantilever.h5"
    sim.run(n_steps=2, output=path)
    r = read(path)
    assert [list(c) for c in beam_chains(r.model)] == [nodes]
    d = tip_deflection(r.model, r.q, beam_chains(r.model)[0])
    np.testing.assert_allclose(d[-1], r.q[-1, nodes[-1], :3] - r.q[0, nodes[-1], :3], rtol=1e-12, atol=1e-15)
    assert d[-1, 2] == pytest.approx(-10.0 * 2.0**3 / (3 * 2e4) - 10.0 * 2.0 / 5e6, rel=1e-3)
    force, moment = reactions(r.model, r.q, r.lam, bc)
    tip = np.array([2.0, 0.0, 0.0]) + r.q[-1, nodes[-1], :3]
    np.testing.assert_allclose(force[-1], -load, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(moment[-1], -np.cross(tip, load), rtol=1e-9, atol=1e-9)
    fx, mx = sim.reaction(bc)
    np.testing.assert_allclose(force[-1], fx, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(moment[-1], mx, rtol=1e-13, atol=1e-12)
    files = plot_result(r, tmp_path / "plots")
    assert [f.name for f in files][-2:] == ["beam_tips.png", "beam_roots.png"]
    from kynemapy.io.vtkhdf import CELL_KINDS, write_vtkhdf

    out = write_vtkhdf(path)
    import h5py

    with h5py.File(out) as f:
        kinds = f["VTKHDF/CellData/kind"][()]
        assert np.count_nonzero(kinds == CELL_KINDS["beam"]) == len(r.time)  # one polyline per step


def test_the_drawing_geometry_keeps_its_post_import_path() -> None:
    """It moved below the result files (kynemapy.model.geometry); kynemapy.post.geometry keeps every name."""
    import kynemapy.model.geometry as low
    import kynemapy.post.geometry as old

    for name in old.__all__:
        assert getattr(old, name) is getattr(low, name), name
    assert {"BOX_FACES", "beam_chains", "tip_deflection", "scene", "node_positions"} <= set(old.__all__)


# ------------------------------------------------------------------------------------------------
def shapes_run(tmp_path: Path, n_steps: int = 20) -> Path:
    """Three free bodies spinning above a ground plane (no gravity, so nothing touches): a sphere off
    its node, a capsule, and a box turned 0.3 rad about z; their shapes move with the bodies."""
    b = kp.ModelBuilder(gravity=(0, 0, 0))
    ball = b.add_node(position=(0.0, 0.0, 1.0), velocity=(0.2, 0, 0, 0.0, 3.0, 1.0))
    b.add_mass(ball, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(ball, 0.1, center=(0.05, 0.0, 1.0))
    cap = b.add_node(position=(-1.0, 0.0, 1.0), velocity=(0, 0, 0.1, 2.0, 0.0, 0.5))
    b.add_mass(cap, mass=1.0, inertia=(0.01, 0.02, 0.02))
    b.add_capsule(cap, 0.05, (-1.2, 0.0, 1.0), (-0.8, 0.0, 1.0))
    box = b.add_node(position=(1.0, 0.0, 1.0), velocity=(0, 0.1, 0, 1.0, 2.0, 3.0))
    b.add_mass(box, mass=1.0, inertia=(0.02, 0.03, 0.04))
    c, s = np.cos(0.3), np.sin(0.3)
    b.add_box(box, (0.1, 0.2, 0.3), axes=[[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    b.add_ground_plane((0, 0, 1), 0.0, stiffness=1e5)
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, rho_inf=0.9))
    out = tmp_path / "shapes.h5"
    sim.run(n_steps=n_steps, output=out)
    return out


def _turned(q: np.ndarray, x0: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """x0 + u + R(r) s₀ for one row ``q`` (7,) of a node, R from the quaternion by scipy."""
    from scipy.spatial.transform import Rotation

    w, x, y, z = q[3:7]
    return x0[:3] + q[:3] + Rotation.from_quat([x, y, z, w]).apply(offset)


def test_collision_shapes_in_the_scene_move_with_their_bodies(tmp_path: Path) -> None:
    """The scene's shapes (sphere, capsule, box) from a result file: kinds, radii, the box's
    corners in BOX_FACES order (each face a planar rectangle of the box's edges), and their points
    at every row at x + R(r) s₀ (scipy's rotation of the reference offsets)."""
    from kynemapy.model.geometry import BOX_FACES

    r = read(shapes_run(tmp_path))
    sc = scene(r.model)
    assert [(sh.kind, sh.node, len(sh.offsets), sh.radius) for sh in sc.shapes] == [
        ("sphere", 0, 1, 0.1), ("capsule", 1, 2, 0.05), ("box", 2, 8, 0.0),
    ]  # fmt: skip
    np.testing.assert_array_equal(sc.planes, [[0.0, 0.0, 1.0, 0.0]])
    pts = sc.shape_points(r.q)
    x0 = np.asarray(r.model.x0)
    for sh, p in zip(sc.shapes, pts, strict=True):
        for row in (0, 7, r.committed - 1):
            expected = [_turned(r.q[row, sh.node], x0[sh.node], o) for o in sh.offsets]
            np.testing.assert_allclose(p[row], expected, atol=1e-12)
    assert np.linalg.norm(r.q[-1, 2, 4:7]) > 0.1  # the box has turned
    corners = pts[2][-1]
    for face in BOX_FACES:
        c = corners[list(face)]
        e1, e2, e3 = c[1] - c[0], c[3] - c[0], c[2] - c[0]
        assert abs(np.dot(np.cross(e1, e2), e3)) < 1e-12  # planar
        assert abs(np.dot(e1, e2)) < 1e-12  # a rectangle
        np.testing.assert_allclose(c[2], c[1] + e2, atol=1e-12)
        assert sorted(np.round([np.linalg.norm(e1), np.linalg.norm(e2)], 12)) in ([0.2, 0.4], [0.2, 0.6], [0.4, 0.6])
    lo, hi = sc.extent(r.q)
    assert lo[2] <= 1.0 - 0.3 - 1e-9 and hi[2] >= 1.0 + 0.3  # the box's and the sphere's reach count


def test_collision_shapes_in_paraview_and_the_animation(tmp_path: Path) -> None:
    vtk = pytest.importorskip("vtk")
    from PIL import Image
    from vtk.util.numpy_support import vtk_to_numpy

    from kynemapy.io.vtkhdf import CELL_KINDS, write_vtkhdf
    from kynemapy.post import animate as anim

    r = read(shapes_run(tmp_path))
    sc = scene(r.model)
    path = write_vtkhdf(r, every=4)
    reader = vtk.vtkHDFReader()
    reader.SetFileName(str(path))
    reader.UpdateInformation()
    times = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    nn, nb = r.model.n_nodes, len(sc.boxes)
    for k, row in enumerate((0, 4, 8, 12, 16, 20)):
        reader.UpdateTimeStep(times[k])
        poly = reader.GetOutputDataObject(0)
        assert poly.GetNumberOfPoints() == nn + 8 * nb + (1 + 2 + 8) + 4
        pts = vtk_to_numpy(poly.GetPoints().GetData())
        start = nn + 8 * nb
        shapes = np.concatenate([p[row] for p in sc.shape_points(r.q)])
        np.testing.assert_allclose(pts[start : start + 11], shapes, atol=1e-12)
        np.testing.assert_allclose(pts[start + 11 :, 2], 0.0, atol=1e-12)  # the plane's square lies on it
        radius = vtk_to_numpy(poly.GetPointData().GetArray("radius"))
        np.testing.assert_array_equal(radius[start : start + 11], [0.1, 0.05, 0.05] + [0.0] * 8)
        assert not radius[:start].any()
        kinds = vtk_to_numpy(poly.GetCellData().GetArray("kind"))
        assert (kinds == CELL_KINDS["shape"]).sum() == 1 + 1 + 6  # sphere vertex, capsule line, box faces
        assert (kinds == CELL_KINDS["ground"]).sum() == 1
    gif = anim.animate(r, tmp_path / "shapes.gif", max_frames=4, dpi=40, size=(3, 3))
    with Image.open(gif) as im:
        assert im.n_frames == 4


def test_contact_force_arrows_in_the_animation(tmp_path: Path) -> None:
    """A ball resting on a compliant plane (sunk m g / k): its arrow starts at the sphere's lowest
    point and points straight up, as long as asked for the largest force (m g); the animation
    and ``kynemapy animate`` draw them."""
    from PIL import Image

    from kynemapy.post import animate as anim
    from kynemapy.run.contact_rows import contact_rows

    m, r, k, g = 2.0, 0.1, 1e5, 9.81
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -g))
    node = b.add_node(position=(0.3, -0.2, r - m * g / k))
    b.add_mass(node, mass=m, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(node, r)
    b.add_ground_plane((0.0, 0.0, 1.0), 0.0, stiffness=k)
    path = tmp_path / "ball.h5"
    sim = kp.Simulation(b.build(), kp.StepParameters(h=1e-3, rho_inf=0.9))
    sim.run(n_steps=20, output=path, every=5)
    res = read(path)
    points = contact_rows(kp.Simulation(res.model, res.params), res)["points"]
    rows = np.arange(res.committed)
    arrows = anim.contact_arrows(res.model, np.asarray(res.q), points, rows, 0.25)
    assert arrows.shape == (res.committed, 1, 2, 3)
    np.testing.assert_allclose(points.normal_force, m * g, rtol=1e-6)  # at rest on the spring
    x = np.asarray(res.q)[:, node, :3] + np.array([0.3, -0.2, r - m * g / k])
    np.testing.assert_allclose(arrows[:, 0, 0], x - [0.0, 0.0, r], atol=1e-12)
    lengths = np.linalg.norm(arrows[:, 0, 1] - arrows[:, 0, 0], axis=1)
    np.testing.assert_allclose(lengths, 0.25 * points.normal_force[:, 0] / points.normal_force.max(), rtol=1e-12)
    np.testing.assert_allclose((arrows[:, 0, 1] - arrows[:, 0, 0])[:, :2], 0.0, atol=1e-15)  # straight up
    with pytest.raises(ValueError, match="contact points"):
        anim.contact_arrows(res.model, np.asarray(res.q), points._replace(normal_force=np.zeros((3, 2))), rows, 0.25)
    gif = anim.animate(res, tmp_path / "ball.gif", max_frames=3, dpi=40, size=(3, 3), contacts=points)
    with Image.open(gif) as im:
        assert im.n_frames == 3
    cli = [sys.executable, "-m", "kynemapy", "animate", str(path), "-o", "b.gif", "--max-frames", "2", "--no-progress"]
    done = subprocess.run(cli, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with Image.open(tmp_path / "b.gif") as im:
        assert im.n_frames == 2
