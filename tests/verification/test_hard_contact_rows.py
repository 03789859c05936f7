"""The hard contact laws' impulses in the result files (docs/contact.md, "Hard contact in result
files"): the group ``/hard_contact`` of a run's file, read back as ``Result.hard_contact``.

The physics is checked against closed forms (a body at rest takes m g h per step from what carries
it; a body in free flight takes nothing); the file layer against an unbroken run (a stopped and
resumed run writes the same columns bit for bit), against its checksums (a damaged block is named),
and against files without the columns (a model without hard contact, a file written without them).
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from test_hard_bodies import stack
from test_hard_contact import BOX_MASS, HARD_TOML, G, ball, box_on_incline

import kynemapy as kp
from kynemapy.cli import main
from kynemapy.io import ResultFileError, ResultFileWarning, ResultWriter, read
from kynemapy.io.layout import REQUIRED
from kynemapy.run.hard_rows import body_impulse_sums

H = 1e-3  # s: the step of every scene here


def test_a_box_resting_on_a_hard_plane_records_m_g_h_per_row(tmp_path: Path) -> None:
    """A box face down on flat hard ground with friction (μ = 0.5), 200 steps, a row every 10: in
    every row after the first the normal impulses, summed over the row's ten steps, sum to 10 m g h
    (1e-9 relative), the four lower
    corners are active and the four upper ones not (their impulses exactly 0), and the friction
    impulses sum to zero (at rest nothing pushes sideways: below 1e-9 m g h); the first row (the
    initial state, nothing stepped) holds zeros, no point active.  The units are in the file."""
    sim, _ = box_on_incline(0.0, 0.5, H)
    path = tmp_path / "box.h5"
    sim.run(n_steps=200, output=path, every=10)
    r = read(path)
    hc = r.hard_contact
    assert hc is not None and set(hc) == {"normal_impulse", "friction_impulse", "active"}
    k = len(r.model.hard_contacts)
    assert k == 8  # the box's eight corners against the one plane
    assert hc["normal_impulse"].shape == (21, k) and hc["friction_impulse"].shape == (21, k, 3)
    assert hc["active"].shape == (21, k) and hc["active"].dtype == bool
    lower = np.asarray(r.model.hard_contacts)[:, 5] < 0.0  # the corners' offsets from the box's centre
    assert np.count_nonzero(lower) == 4
    weight = BOX_MASS * G * H * 10  # the ten steps since the row before
    np.testing.assert_allclose(hc["normal_impulse"][1:].sum(axis=1), weight, rtol=1e-9, atol=0)
    assert np.all(hc["active"][1:, lower]) and not np.any(hc["active"][1:, ~lower])
    assert np.all(hc["normal_impulse"][:, ~lower] == 0.0)
    # the friction at the corners may push against each other (a resting box is statically
    # indeterminate), but nothing pushes the box sideways: their sum vanishes
    assert np.abs(hc["friction_impulse"].sum(axis=1)).max() <= 1e-9 * weight
    assert np.all(hc["friction_impulse"][..., 2] == 0.0)  # in the plane z = 0
    assert np.all(hc["normal_impulse"][0] == 0.0) and not np.any(hc["active"][0])
    assert r.units["hard_contact/normal_impulse"].startswith("N s")
    assert r.units["hard_contact/friction_impulse"].startswith("N s")
    # the contacts closed are those of the row's last step, as the simulation reports them
    np.testing.assert_array_equal(hc["active"][-1], sim.contact_impulses().active)


def test_a_box_sticking_on_an_incline_records_its_weight_in_world_frame(tmp_path: Path) -> None:
    """A box at rest on a 0.3 rad incline with friction (μ = 0.5 > tan 0.3): the plane carries the
    whole weight, so per row the points' impulses Σ (Λ_N n + Λ_T) in the world frame are
    (0, 0, 5 m g h) over the row's five steps (1e-9 relative), the normal ones summing to
    5 m g h cos a and the friction ones to 5 m g h sin a up the slope (the file's friction is
    world-frame: no tangents needed)."""
    angle = 0.3
    sim, axes = box_on_incline(angle, 0.5, H)
    path = tmp_path / "incline.h5"
    sim.run(n_steps=100, output=path, every=5)
    hc = read(path).hard_contact
    assert hc is not None
    weight = BOX_MASS * G * H * 5  # the five steps since the row before
    normal = axes[:, 2]
    total = hc["normal_impulse"][1:].sum(axis=1)[:, None] * normal + hc["friction_impulse"][1:].sum(axis=1)
    np.testing.assert_allclose(total, np.broadcast_to([0.0, 0.0, weight], total.shape), rtol=0, atol=1e-9 * weight)
    np.testing.assert_allclose(hc["normal_impulse"][1:].sum(axis=1), weight * math.cos(angle), rtol=1e-9)
    up_slope = axes[:, 0]  # the box's local x points up the slope
    np.testing.assert_allclose(hc["friction_impulse"][1:].sum(axis=1) @ up_slope, weight * math.sin(angle), rtol=1e-9)
    # the friction impulse lies in the plane
    assert np.abs(hc["friction_impulse"] @ normal).max() <= 1e-12 * weight


def test_a_ball_in_free_flight_records_zeros(tmp_path: Path) -> None:
    """A ball falling from 3 m above a hard plane for 0.3 s (it falls 0.44 m): no impulse, no
    point active, in every row."""
    sim = ball(H, 1.0, 3.0)
    path = tmp_path / "ball.h5"
    sim.run(n_steps=300, output=path, every=20)
    hc = read(path).hard_contact
    assert hc is not None and hc["normal_impulse"].shape == (16, 1)
    assert np.all(hc["normal_impulse"] == 0.0) and np.all(hc["friction_impulse"] == 0.0)
    assert not np.any(hc["active"])


def test_a_stack_records_each_boxs_contact_impulse(tmp_path: Path) -> None:
    """Box B (1 kg) resting on box A (2 kg, shifted by 0.03 m along x) on a hard floor, the hard body
    law on, a row every 6 steps: in every row after the first B's impulse from the body contacts,
    summed over the row's six steps, is +6 m_B g h along z and A's the opposite (1e-9 relative,
    other force components below that), A's moment about its node is (0, 0.03 m · 6 m_B g h, 0)
    (B's load acts at B's centre line, 0.03 m off A's) and B's vanishes; four contacts (B's lower
    corners) at each row's last step; the floor's points carry 6 (m_A + m_B) g h."""
    offset = 0.03
    sim, ma, mb = stack(offset)
    path = tmp_path / "stack.h5"
    sim.run(n_steps=60, output=path, every=6)
    hc = read(path).hard_contact
    assert hc is not None
    assert hc["body_impulse"].shape == (11, 2, 6) and hc["body_contacts"].shape == (11,)
    load = mb * G * H * 6  # the six steps since the row before
    tol = 1e-9 * load
    body = hc["body_impulse"][1:]
    np.testing.assert_allclose(body[:, 1, :3], np.broadcast_to([0.0, 0.0, load], (10, 3)), rtol=0, atol=tol)
    np.testing.assert_allclose(body[:, 0, :3], np.broadcast_to([0.0, 0.0, -load], (10, 3)), rtol=0, atol=tol)
    np.testing.assert_allclose(body[:, 0, 3:], np.broadcast_to([0.0, offset * load, 0.0], (10, 3)), rtol=0, atol=tol)
    np.testing.assert_allclose(body[:, 1, 3:], 0.0, rtol=0, atol=tol)
    assert np.all(hc["body_contacts"][1:] == 4)
    assert hc["body_contacts"][0] == 0 and np.all(hc["body_impulse"][0] == 0.0)
    np.testing.assert_allclose(hc["normal_impulse"][1:].sum(axis=1), 6 * (ma + mb) * G * H, rtol=1e-9, atol=0)


def test_body_impulse_sums_of_one_contact_by_hand() -> None:
    """One contact between node 2 (A) and node 0 (B), normal z, Λ_N = 2, friction 3 along t₁ = x:
    B gets (3, 0, 2) N s at the point (1, 0, 0) m about its node at the origin, moment
    r × F = (0, −2, 0); A at (1, 1, 0) gets the opposite force, with the moment (0, 0, −3) × ...
    written out: r = (0, −1, 0), F = (−3, 0, −2), r × F = (2, 0, −3)."""
    record = {
        "node_a": np.array([2]),
        "node_b": np.array([0]),
        "point": np.array([[1.0, 0.0, 0.0]]),
        "normal": np.array([[0.0, 0.0, 1.0]]),
        "tangents": np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]),
        "normal_impulse": np.array([2.0]),
        "friction_impulse": np.array([[3.0, 0.0]]),
    }
    position = np.array([[0.0, 0.0, 0.0], [5.0, 5.0, 5.0], [1.0, 1.0, 0.0]])
    out = np.full((3, 6), 7.0)
    assert body_impulse_sums(record, position, out) == 1
    np.testing.assert_array_equal(out[0], [3.0, 0.0, 2.0, 0.0, -2.0, 0.0])
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_array_equal(out[2], [-3.0, 0.0, -2.0, 2.0, 0.0, -3.0])


def _bouncing() -> kp.Simulation:
    return ball(H, 0.5, 0.3, mu=0.2, speed=1.0)  # thrown sliding, bounces at 0.247 s


@pytest.mark.parametrize("scene", ["ball", "stack"])
def test_a_stopped_and_resumed_run_writes_the_same_columns(tmp_path: Path, scene: str) -> None:
    """A run recording every 10th step stopped after 3/5 of its steps, and one interrupted by an
    exception in its loads callback (its last state recorded off the cadence), each continued from
    its file (``Simulation.restart``), write in every row, bit for bit, the impulses of an unbroken
    run recording every step summed one step after another over the steps since the row before,
    and its contacts at the row's step (a ball bouncing and sliding, 500 steps; the stack of boxes,
    120 steps)."""

    def make() -> kp.Simulation:
        return _bouncing() if scene == "ball" else stack()[0]

    n = 500 if scene == "ball" else 120
    whole = tmp_path / "whole.h5"
    make().run(n_steps=n, output=whole, every=1, block=8)
    reference = read(whole)
    assert reference.hard_contact is not None
    np.testing.assert_array_equal(reference.step, np.arange(n + 1))
    if scene == "ball":
        assert np.count_nonzero(reference.hard_contact["active"]) > 0  # it bounces, then slides

    stopped = tmp_path / "stopped.h5"
    make().run(n_steps=n * 3 // 5, output=stopped, every=10, block=8)
    kp.Simulation.restart(stopped).run(n_steps=n - n * 3 // 5, output=stopped)

    class Stop(Exception):
        pass

    def interrupt(sim: kp.Simulation, t: float) -> None:
        if sim.step_count == n // 2 + 3:
            raise Stop

    interrupted = tmp_path / "interrupted.h5"
    with pytest.raises(Stop):
        make().run(n_steps=n, output=interrupted, every=10, block=8, loads=interrupt)
    again = kp.Simulation.restart(interrupted)
    again.run(n_steps=n - again.step_count, output=interrupted)

    for path, steps in (
        (stopped, np.union1d(np.arange(0, n + 1, 10), [n * 3 // 5])),  # a run's last step is a row
        (interrupted, np.union1d(np.arange(0, n + 1, 10), [n // 2 + 3])),
    ):
        resumed = read(path)
        np.testing.assert_array_equal(resumed.step, steps)
        assert resumed.hard_contact is not None and set(resumed.hard_contact) == set(reference.hard_contact)
        for name, column in reference.hard_contact.items():
            if name in ("active", "body_contacts"):  # the contacts closed at each row's last step
                expected = column[steps]
            else:  # the impulses of the steps since the row before, added one step after another
                expected = np.zeros((steps.size, *column.shape[1:]), dtype=column.dtype)
                for j in range(1, steps.size):
                    for step in range(steps[j - 1] + 1, steps[j] + 1):
                        expected[j] += column[step]
            np.testing.assert_array_equal(resumed.hard_contact[name], expected, err_msg=f"{path.name}: {name}")


def test_a_damaged_block_of_the_columns_is_named(tmp_path: Path) -> None:
    """Bytes flipped in the second chunk of ``/hard_contact/normal_impulse``: ``read`` names that
    dataset and its rows; ``salvage=True`` leaves those rows out of every column."""
    path = tmp_path / "ball.h5"
    _bouncing().run(n_steps=400, output=path, every=1, block=100)  # chunks of 50 rows
    truth = read(path)
    with h5py.File(path, "r") as f:
        info = f["hard_contact/normal_impulse"].id.get_chunk_info(1)
    with open(path, "r+b") as fh:
        fh.seek(info.byte_offset)
        data = fh.read(8)
        fh.seek(info.byte_offset)
        fh.write(bytes(255 - x for x in data))
    with pytest.raises(ResultFileError, match=r"rows 50 to 99 of /hard_contact/normal_impulse fail their checksum"):
        read(path)
    with pytest.warns(ResultFileWarning, match=r"rows 50 to 99 of 401 left out"):
        part = read(path, salvage=True)
    keep = np.r_[0:50, 100:401]
    assert part.hard_contact is not None
    for name, column in truth.hard_contact.items():
        np.testing.assert_array_equal(part.hard_contact[name], column[keep], err_msg=name)
    np.testing.assert_array_equal(part.step, truth.step[keep])


def test_files_without_the_columns(tmp_path: Path) -> None:
    """A model without hard contact has no ``/hard_contact`` (``hard_contact`` None); a file of a
    hard-contact model written without the columns (as before they existed: ``ResultWriter``'s
    default) reads with None, and is restarted and continued without them."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    node = b.add_node(velocity=(1.0, 0.0, 0.0, 0.0, 0.3, 2.0))
    b.add_mass(node, mass=1.5, inertia=(1.0, 2.0, 3.0))
    free = tmp_path / "free.h5"
    kp.Simulation(b.build(), kp.StepParameters(h=H)).run(n_steps=20, output=free)
    with h5py.File(free, "r") as f:
        assert "hard_contact" not in f
    assert read(free).hard_contact is None

    old = tmp_path / "old.h5"
    sim = ball(H, 0.5, 0.0)  # at rest on the plane
    rows = sim.rollout(10, every=1)
    with ResultWriter(old, sim.model, sim.params, block=8) as writer:
        writer.append({name: rows[name] for name in REQUIRED}, state=sim.state, inputs=sim.inputs)
    r = read(old)
    assert r.hard_contact is None and r.committed == 11  # the initial state and 10 steps
    kp.Simulation.restart(old).run(n_steps=10, output=old)
    r = read(old)
    assert r.hard_contact is None and r.committed == 21 and int(r.step[-1]) == 20


def test_info_shows_the_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``kynemapy info`` names the ``/hard_contact`` columns and summarizes them: a row every 5
    steps, the stack's floor carries 5 (m_A + m_B) g h = 0.14715 N s per row, its bodies 4 contacts
    at a step, 5 m_B g h = 0.04905 N s."""
    path = tmp_path / "stack.h5"
    stack()[0].run(n_steps=10, output=path, every=5)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "per row (/hard_contact): normal_impulse [N s], friction_impulse (3) [N s], active" in out
    assert "largest total normal impulse 0.14715 N s" in out
    assert "up to 4 contacts in a step, largest force impulse on a body 0.04905 N s" in out


#: test_hard_contact's ball on a hard ground, with gravity, its height and a step count to fill in
BALL_TOML = (
    "[model]\ngravity = [0.0, 0.0, -9.81]\n"
    + HARD_TOML.replace("position = [0.0, 0.0, 0.1]", "position = [0.0, 0.0, HEIGHT]")
    + "\n[run]\nn_steps = STEPS\n"
)


def ball_toml(path: Path, height: float, n_steps: int) -> Path:
    """A ball (2 kg, r = 0.1 m) whose centre is ``height`` above a hard ground (e = 0.5, μ = 0.3)."""
    path.write_text(BALL_TOML.replace("HEIGHT", repr(height)).replace("STEPS", str(n_steps)))
    return path


def test_kynemapy_run_on_a_model_file_records_the_columns(tmp_path: Path) -> None:
    """``kynemapy run`` on a model file of a ball (2 kg) resting on a hard ground (g = 9.81 m/s²,
    h = 1 ms, 50 steps, a row every 10): the file has the columns, each row after the first with
    the normal impulse of its ten steps, 10 m g h (1e-9 relative), the point active."""
    model = ball_toml(tmp_path / "ball.toml", 0.1, 50)
    out = tmp_path / "ball.h5"
    assert main(["run", str(model), "-o", str(out), "--every", "10", "--no-progress"]) == 0
    hc = read(out).hard_contact
    assert hc is not None and hc["normal_impulse"].shape == (6, 1)
    np.testing.assert_allclose(hc["normal_impulse"][1:, 0], 10 * 2.0 * 9.81 * H, rtol=1e-9, atol=0)
    assert np.all(hc["active"][1:, 0])


def test_a_killed_run_resumed_writes_the_same_columns(tmp_path: Path) -> None:
    """``kynemapy run`` of a ball dropped 0.3 m onto a hard ground, killed (SIGKILL) after its first
    bounce, then ``--resume``d to 200 steps past its last row: its file holds the same rows and
    ``/hard_contact`` columns, bit for bit, as an unbroken run to the same step."""
    model = ball_toml(tmp_path / "drop.toml", 0.4, 10**7)
    killed = tmp_path / "killed.h5"
    command = [sys.executable, "-m", "kynemapy", "run", str(model), "-o", str(killed), "--every", "10"]
    proc = subprocess.Popen([*command, "--block", "16", "--no-progress"], cwd=tmp_path)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            try:
                if read(killed).committed >= 40:  # step 390 or later: past the bounce at 0.247 s
                    break
            except OSError:
                pass
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it was killed"
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # this child, by its id
        proc.wait(timeout=60)
    with pytest.warns(ResultFileWarning, match="was killed"):
        last = int(read(killed).step[-1])
    end = last + 200
    ball_toml(model, 0.4, end)
    assert main(["run", str(model), "-o", str(killed), "--resume", "--no-progress"]) == 0
    whole = tmp_path / "whole.h5"
    assert main(["run", str(model), "-o", str(whole), "--every", "10", "--no-progress"]) == 0
    resumed, reference = read(killed), read(whole)
    np.testing.assert_array_equal(resumed.step, reference.step)
    assert reference.hard_contact is not None and resumed.hard_contact is not None
    assert np.count_nonzero(reference.hard_contact["normal_impulse"]) > 0  # rows in contact
    for name, column in reference.hard_contact.items():
        np.testing.assert_array_equal(resumed.hard_contact[name], column, err_msg=name)
    np.testing.assert_array_equal(resumed.q, reference.q)


def test_the_hard_planes_forces_are_drawn_and_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The box resting on the hard plane, into a file: :func:`plane_forces` gives each row's mean
    force over its step (impulse / h), summing to the weight m g (1e-9 relative) after the first
    row; the animation's arrows start at the four lower corners, on the plane (|z| <= 1e-9 m),
    and point up (the others have none); ``kynemapy export`` writes ``contact_force`` at the box's
    corner points, (0, 0, m g) in all at the last row (1e-9 relative), read back with h5py."""
    from kynemapy.model.geometry import scene
    from kynemapy.post.animate import contact_arrows
    from kynemapy.run.hard_rows import plane_forces

    sim, _ = box_on_incline(0.0, 0.5, H)
    path = tmp_path / "box.h5"
    sim.run(n_steps=100, output=path, every=50)
    r = read(path)
    forces = plane_forces(r)
    assert forces is not None and forces.normal_force.shape == (3, 8)
    weight = BOX_MASS * G
    np.testing.assert_allclose(forces.normal_force[1:].sum(axis=1), weight, rtol=1e-9, atol=0)
    rows = np.arange(r.committed)
    arrows = contact_arrows(r.model, np.asarray(r.q), forces, rows, 1.0)
    lower = np.asarray(r.model.hard_contacts)[:, 5] < 0.0
    assert arrows.shape == (3, 8, 2, 3)
    assert np.abs(arrows[1:, lower, 0, 2]).max() <= 1e-9  # the lower corners lie on the plane z = 0
    up = arrows[1:, :, 1] - arrows[1:, :, 0]
    assert np.all(up[:, lower, 2] > 0.0) and np.all(up[:, ~lower] == 0.0)
    assert main(["export", str(path)]) == 0
    out = path.with_suffix(".vtkhdf")
    assert capsys.readouterr().out.strip() == str(out)
    sc = scene(r.model)
    first = r.model.n_nodes + 2 * len(sc.joints) + 8 * len(sc.boxes)
    with h5py.File(out, "r") as f:
        n_points = int(f["VTKHDF/NumberOfPoints"][0])
        force = f["VTKHDF/PointData/contact_force"][...].reshape(3, n_points, 3)
        assert "body_contact_force" not in f["VTKHDF/PointData"]  # no hard contact between bodies
    corners = slice(first, first + 8)
    np.testing.assert_allclose(force[-1, corners].sum(axis=0), [0.0, 0.0, weight], rtol=0, atol=1e-9 * weight)
    assert np.all(force[-1, :first] == 0.0) and np.all(force[-1, first + 8 :] == 0.0)


def test_the_body_contacts_forces_are_drawn_and_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The stack of two boxes (B, 1 kg, on A, 2 kg, shifted 0.03 m along x), into a file with a row
    every 6 steps: ``Result.body_contact_forces`` is each row's impulse over the row's 6 h, B's
    (0, 0, m_B g) with no moment and A's (0, 0, −m_B g) with the moment (0, 0.03 m · m_B g, 0)
    (1e-9 relative), zero at the first row; the animation's body arrows start at the nodes, B's
    pointing up and as long as asked (the largest force), A's down; ``kynemapy export`` writes
    ``body_contact_force`` and ``body_contact_moment`` at the two node points (zero at the other
    points), read back with h5py; a GIF of the stack draws."""
    from kynemapy.model.geometry import node_positions
    from kynemapy.post.animate import animate, body_force_arrows

    offset = 0.03
    sim, _, mb = stack(offset)
    path = tmp_path / "stack.h5"
    sim.run(n_steps=60, output=path, every=6)
    r = read(path)
    forces = r.body_contact_forces
    weight = mb * G
    tol = 1e-9 * weight
    assert forces is not None and forces.shape == (11, 2, 6) and np.all(forces[0] == 0.0)
    np.testing.assert_allclose(forces[1:, 1, :3], np.broadcast_to([0.0, 0.0, weight], (10, 3)), rtol=0, atol=tol)
    np.testing.assert_allclose(forces[1:, 1, 3:], 0.0, rtol=0, atol=tol)
    np.testing.assert_allclose(forces[1:, 0, :3], np.broadcast_to([0.0, 0.0, -weight], (10, 3)), rtol=0, atol=tol)
    np.testing.assert_allclose(forces[1:, 0, 3:], np.broadcast_to([0.0, offset * weight, 0.0], (10, 3)), atol=tol)
    rows = np.arange(r.committed)
    pos = node_positions(r.model, np.asarray(r.q))
    arrows = body_force_arrows(pos, forces, rows, 0.5)
    np.testing.assert_array_equal(arrows[:, :, 0], pos)
    up = arrows[1:, :, 1] - arrows[1:, :, 0]
    np.testing.assert_allclose(up[:, 1], np.broadcast_to([0.0, 0.0, 0.5], (10, 3)), rtol=0, atol=1e-9)
    assert np.all(up[:, 0, 2] < 0.0) and np.all(arrows[0, :, 1] == arrows[0, :, 0])
    assert main(["export", str(path)]) == 0
    out = path.with_suffix(".vtkhdf")
    assert capsys.readouterr().out.strip() == str(out)
    with h5py.File(out, "r") as f:
        n_points = int(f["VTKHDF/NumberOfPoints"][0])
        force = f["VTKHDF/PointData/body_contact_force"][...].reshape(11, n_points, 3)
        moment = f["VTKHDF/PointData/body_contact_moment"][...].reshape(11, n_points, 3)
        assert f["VTKHDF/Steps/PointDataOffsets/body_contact_force"].shape == (11,)
    np.testing.assert_allclose(force[-1, :2], [[0.0, 0.0, -weight], [0.0, 0.0, weight]], rtol=0, atol=tol)
    np.testing.assert_allclose(moment[-1, 0], [0.0, offset * weight, 0.0], rtol=0, atol=tol)
    assert np.all(force[:, 2:] == 0.0) and np.all(moment[:, 2:] == 0.0)
    gif = animate(r, tmp_path / "stack.gif", max_frames=3)
    assert gif.stat().st_size > 0


def test_the_drawn_scene_holds_the_hard_laws_shapes_and_planes() -> None:
    """The scene that ``kynemapy animate`` and the ParaView export draw holds the shapes of the
    hard laws with the builder's own points (a box's eight corners, a capsule's two axis ends, a
    sphere's centre; to 1e-12 m), from the hard planes' points or, for hard contact between bodies
    with no plane, from the shape table, and the hard ground plane."""
    from kynemapy.model.geometry import scene

    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # 90° about z
    nodes = [b.add_node(position=(x, 0.0, 0.0)) for x in (0.0, 1.0, 2.0)]
    for n in nodes:
        b.add_mass(n, mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_sphere(nodes[0], 0.1, center=(0.05, 0.0, 0.0))
    b.add_capsule(nodes[1], 0.05, (0.9, 0.1, 0.2), (1.1, -0.1, 0.0))
    b.add_box(nodes[2], (0.1, 0.2, 0.3), center=(2.0, 0.1, 0.0), axes=turn)
    b.set_body_contact(law="hard")
    model = b.build()
    sc = scene(model)
    assert [sh.kind for sh in sc.shapes] == ["sphere", "capsule", "box"]
    for sh, own in zip(sc.shapes, b.shapes, strict=True):
        want = np.asarray(own.points)
        assert sh.offsets.shape == want.shape
        for p in want:  # every point of the builder's, in any order
            assert np.min(np.linalg.norm(sh.offsets - p, axis=1)) <= 1e-12
        assert sh.radius == pytest.approx(float(own.radii[0]), abs=0.0)
    assert sc.planes.shape == (0, 4)

    sim, _, _ = stack()
    sc = scene(sim.model)
    assert [sh.kind for sh in sc.shapes] == ["box", "box"]
    np.testing.assert_array_equal(sc.planes, [[0.0, 0.0, 1.0, 0.0]])
