"""Robots from URDF (:func:`kynemapy.io.urdf.load_urdf`): small URDF documents of our own whose
mass properties, frames and motion are computed independently here (closed forms, hand-composed
rotations, an RK4 pendulum), and the errors for each kind of bad document."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.io.urdf import URDFError, URDFWarning, load_urdf, rpy_matrix

G = 9.81


def rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def inertial(mass: float, xyz: str = "0 0 0", rpy: str = "0 0 0", i: tuple = (0.1, 0.1, 0.1, 0, 0, 0)) -> str:
    ixx, iyy, izz, ixy, ixz, iyz = i
    return (
        f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial>'
    )


# a pendulum: a rod of mass M hanging from a pivot at height 2 m, centre of mass L below the
# pivot, inertia IC about the centre of mass about the hinge axis (y)
M, L, IC = 2.0, 0.5, 0.1
PENDULUM = f"""<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <joint name="pivot" type="revolute">
    <parent link="world"/>
    <child link="rod"/>
    <origin xyz="0 0 2" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="10" velocity="3"/>
    <dynamics damping="0.2" friction="0.05"/>
  </joint>
  <link name="rod">
    {inertial(M, xyz=f"0 0 {-L}", i=(0.11, IC, 0.02, 0, 0, 0))}
    <collision><origin xyz="0 0 -0.5"/><geometry><cylinder radius="0.02" length="1"/></geometry></collision>
    <collision><geometry><mesh filename="package://pendulum/rod.stl" scale="1 1 2"/></geometry></collision>
  </link>
  <transmission name="t"><type>transmission_interface/SimpleTransmission</type></transmission>
  <gazebo reference="rod"/>
</robot>
"""


def pendulum_rk4(theta0: float, t_end: float, h: float = 1e-4) -> float:
    """θ(t_end) of θ'' = −M g L sin θ / (IC + M L²), θ(0) = θ0, θ'(0) = 0, by RK4."""
    k = M * G * L / (IC + M * L**2)

    def f(y: np.ndarray) -> np.ndarray:
        return np.array([y[1], -k * math.sin(y[0])])

    y = np.array([theta0, 0.0])
    for _ in range(round(t_end / h)):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return float(y[0])


def test_pendulum_angular_acceleration_and_motion() -> None:
    theta0 = 0.3
    robot = load_urdf(PENDULUM, initial_positions={"pivot": theta0})
    assert robot.link_node == {"world": kp.GROUND, "rod": 0}
    assert robot.root == "world" and robot.root_joint is None
    model = robot.builder.build()
    # reference: the zero configuration, centre of mass below the pivot
    np.testing.assert_allclose(model.x0[0, :3], [0.0, 0.0, 2.0 - L])
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.9))
    cid = robot.joint_id["pivot"]
    angle, rate, acc = sim.joint_output(cid)
    assert angle == pytest.approx(theta0, abs=1e-12) and rate == pytest.approx(0.0, abs=1e-12)
    # closed form: θ'' = −g m l sin θ / (I + m l²)
    assert acc == pytest.approx(-G * M * L * math.sin(theta0) / (IC + M * L**2), rel=1e-8)
    # the centre of mass starts displaced to θ0 (rotation about +y takes −z towards −x)
    origin, _ = sim.body_frame(0)
    np.testing.assert_allclose(origin, [-L * math.sin(theta0), 0.0, 2.0 - L * math.cos(theta0)], atol=1e-12)
    sim.advance(500)
    assert sim.joint_output(cid)[0] == pytest.approx(pendulum_rk4(theta0, 0.5), abs=2e-4)


def test_pendulum_parsed_but_not_enforced_items() -> None:
    robot = load_urdf(PENDULUM)
    limit = robot.joint_limits["pivot"]
    assert (limit.lower, limit.upper, limit.effort, limit.velocity) == (-1.5, 1.5, 10.0, 3.0)
    dyn = robot.joint_dynamics["pivot"]
    assert (dyn.damping, dyn.friction) == (0.2, 0.05)
    cyl, mesh = robot.collisions["rod"]
    assert cyl.geometry == "cylinder" and cyl.size == {"radius": 0.02, "length": 1.0}
    np.testing.assert_allclose(cyl.origin, [0, 0, -0.5])
    assert mesh.geometry == "mesh" and mesh.size["filename"] == "package://pendulum/rod.stl"
    np.testing.assert_allclose(mesh.size["scale"], [1, 1, 2])
    assert robot.collisions["world"] == []
    assert set(robot.ignored) == {"transmission", "gazebo"}
    assert robot.joint_type == {"pivot": "revolute"}
    np.testing.assert_allclose(robot.joint_axes["pivot"], [0, 1, 0])
    np.testing.assert_allclose(robot.joint_points["pivot"], [0, 0, 2])
    assert robot.total_mass == M


def test_load_from_file_and_bytes(tmp_path) -> None:
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM, encoding="utf-8")
    for source in (path, str(path), PENDULUM.encode()):
        robot = load_urdf(source)
        assert robot.name == "pendulum" and robot.joint_id == {"pivot": 0}
    with pytest.raises(URDFError, match="cannot read the file"):
        load_urdf(tmp_path / "missing.urdf")


def test_rpy_matrix_against_composed_elementary_rotations() -> None:
    r, p, y = 0.3, -0.7, 1.9
    np.testing.assert_allclose(rpy_matrix((r, p, y)), rz(y) @ ry(p) @ rx(r), atol=1e-15)
    # a fixed-axes check: roll 90° then yaw 90° takes the body's y axis to world z, then stays on z
    np.testing.assert_allclose(rpy_matrix((math.pi / 2, 0, math.pi / 2)) @ [0, 1, 0], [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(rpy_matrix((math.pi / 2, 0, math.pi / 2)) @ [1, 0, 0], [0, 1, 0], atol=1e-15)


# a double pendulum whose joint origins carry rotations: the link frames are composed down the tree
RPY1, XYZ1 = (0.2, -0.4, 0.9), np.array([0.1, -0.2, 1.5])
RPY2, XYZ2 = (-0.5, 0.3, 0.25), np.array([0.0, 0.0, -0.8])
COM1, COM2 = np.array([0.05, 0.0, -0.4]), np.array([0.0, 0.1, -0.3])
DOUBLE = f"""<robot name="double">
  <link name="base"/>
  <joint name="j1" type="continuous">
    <parent link="base"/><child link="upper"/>
    <origin xyz="{" ".join(map(str, XYZ1))}" rpy="{" ".join(map(str, RPY1))}"/>
    <axis xyz="0 1 0"/>
  </joint>
  <link name="upper">{inertial(1.0, xyz=" ".join(map(str, COM1)))}</link>
  <joint name="j2" type="revolute">
    <parent link="upper"/><child link="lower"/>
    <origin xyz="{" ".join(map(str, XYZ2))}" rpy="{" ".join(map(str, RPY2))}"/>
    <axis xyz="1 0 1"/>
    <limit effort="5" velocity="2"/>
    <mimic joint="j1" multiplier="2"/>
  </joint>
  <link name="lower">{inertial(0.5, xyz=" ".join(map(str, COM2)), i=(0.02, 0.03, 0.04, 0, 0, 0))}</link>
</robot>"""


def hand_rpy(rpy: tuple[float, float, float]) -> np.ndarray:
    return rz(rpy[2]) @ ry(rpy[1]) @ rx(rpy[0])


def test_double_pendulum_link_frames_and_joints() -> None:
    base = np.array([1.0, 2.0, 0.0])
    robot = load_urdf(DOUBLE, base_position=base)
    r1 = hand_rpy(RPY1)
    p1 = base + XYZ1
    r2 = r1 @ hand_rpy(RPY2)
    p2 = p1 + r1 @ XYZ2
    for link, (p, r) in {"base": (base, np.eye(3)), "upper": (p1, r1), "lower": (p2, r2)}.items():
        np.testing.assert_allclose(robot.link_frames[link][0], p, atol=1e-14)
        np.testing.assert_allclose(robot.link_frames[link][1], r, atol=1e-14)
    np.testing.assert_allclose(robot.joint_points["j2"], p2, atol=1e-14)
    np.testing.assert_allclose(robot.joint_axes["j1"], r1[:, 1], atol=1e-14)
    np.testing.assert_allclose(robot.joint_axes["j2"], r2 @ np.array([1, 0, 1]) / math.sqrt(2), atol=1e-14)
    model = robot.builder.build()
    # nodes at the centres of mass, oriented as the link frames
    n1, n2 = robot.link_node["upper"], robot.link_node["lower"]
    np.testing.assert_allclose(model.x0[n1, :3], p1 + r1 @ COM1, atol=1e-14)
    np.testing.assert_allclose(model.x0[n2, :3], p2 + r2 @ COM2, atol=1e-14)
    np.testing.assert_allclose(kp.rotation_matrices(model.x0[n2, 3:]), r2, atol=1e-14)
    assert robot.joint_limits["j2"].lower is None and robot.joint_limits["j2"].effort == 5.0
    assert "j1" not in robot.joint_limits
    assert robot.ignored == ["mimic"]  # j2 moves freely: mimic is not applied


def test_double_pendulum_initial_positions() -> None:
    q1, q2 = 0.4, -0.9
    robot = load_urdf(DOUBLE, initial_positions={"j1": q1, "j2": q2})
    r1 = hand_rpy(RPY1) @ ry(q1)  # the joint turns the child about its axis in the joint frame
    a2 = np.array([1.0, 0.0, 1.0]) / math.sqrt(2)
    k = np.array([[0, -a2[2], a2[1]], [a2[2], 0, -a2[0]], [-a2[1], a2[0], 0]])
    r2 = r1 @ hand_rpy(RPY2) @ (np.eye(3) + math.sin(q2) * k + (1 - math.cos(q2)) * k @ k)
    p2 = XYZ1 + r1 @ XYZ2
    sim = kp.Simulation(robot.builder.build(), kp.StepParameters(h=1e-3))
    origin, rotation = sim.body_frame(robot.link_node["lower"])
    np.testing.assert_allclose(origin, p2 + r2 @ COM2, atol=1e-12)
    np.testing.assert_allclose(rotation, r2, atol=1e-12)
    assert sim.joint_output(robot.joint_id["j1"])[0] == pytest.approx(q1, abs=1e-12)
    assert sim.joint_output(robot.joint_id["j2"])[0] == pytest.approx(q2, abs=1e-12)


def test_prismatic_slides_under_gravity_on_an_incline() -> None:
    # the joint frame is pitched by 30°: its axis x points 30° below the horizontal
    pitch = math.radians(30)
    doc = f"""<robot name="incline">
      <link name="ground"/>
      <joint name="slide" type="prismatic">
        <parent link="ground"/><child link="block"/>
        <origin xyz="0 0 1" rpy="0 {pitch} 0"/>
        <axis xyz="1 0 0"/>
        <limit lower="0" upper="2" effort="100" velocity="1"/>
      </joint>
      <link name="block">{inertial(3.0, xyz="0.1 0 0.05")}</link>
    </robot>"""
    robot = load_urdf(doc)
    axis = robot.joint_axes["slide"]
    np.testing.assert_allclose(axis, [math.cos(pitch), 0.0, -math.sin(pitch)], atol=1e-15)
    a = G * math.sin(pitch)  # g · axis
    sim = kp.Simulation(robot.builder.build(), kp.StepParameters(h=1e-3, rho_inf=0.9))
    cid = robot.joint_id["slide"]
    assert sim.joint_output(cid)[2] == pytest.approx(a, rel=1e-9)
    sim.advance(200)
    t = sim.time
    assert sim.joint_output(cid)[0] == pytest.approx(0.5 * a * t**2, rel=1e-6)
    assert sim.joint_output(cid)[1] == pytest.approx(a * t, rel=1e-6)


# a fixed joint between two links with offsets and rotations: merged into one body
MERGE = f"""<robot name="merge">
  <link name="world"/>
  <joint name="hinge" type="revolute">
    <parent link="world"/><child link="arm"/>
    <origin xyz="0 0 1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <link name="arm">{inertial(2.0, xyz="0.3 0 0", rpy="0 0 0.5", i=(0.01, 0.05, 0.05, 0.002, 0, 0))}</link>
  <joint name="mount" type="fixed">
    <parent link="arm"/><child link="tool"/>
    <origin xyz="0.6 0 0.1" rpy="0.3 0.2 -0.4"/>
  </joint>
  <link name="tool">{inertial(0.5, xyz="0 0.05 0", rpy="0.1 0 0", i=(0.003, 0.0025, 0.002, 0, 0.0002, 0))}</link>
  <link name="marker"/>
  <joint name="tcp" type="fixed"><parent link="tool"/><child link="marker"/><origin xyz="0 0 0.2"/></joint>
</robot>"""


def test_fixed_joint_merges_mass_properties() -> None:
    robot = load_urdf(MERGE)
    assert robot.link_node["arm"] == robot.link_node["tool"] == robot.link_node["marker"] == 0
    assert set(robot.joint_id) == {"hinge"} and robot.joint_type["mount"] == "fixed"
    model = robot.builder.build()
    assert model.n_nodes == 1 and model.n_masses == 1
    # independently: each link's centre of mass and inertia in world coordinates
    arm = (
        2.0,
        np.array([0.3, 0.0, 1.0]),
        hand_rpy((0, 0, 0.5)),
        np.array([[0.01, 0.002, 0], [0.002, 0.05, 0], [0, 0, 0.05]]),
    )
    r_tool = hand_rpy((0.3, 0.2, -0.4))
    p_tool = np.array([0.6, 0.0, 1.1])
    tool = (
        0.5,
        p_tool + r_tool @ np.array([0.0, 0.05, 0.0]),
        r_tool @ hand_rpy((0.1, 0, 0)),
        np.array([[0.003, 0, 0.0002], [0, 0.0025, 0], [0.0002, 0, 0.002]]),
    )
    total = arm[0] + tool[0]
    com = (arm[0] * arm[1] + tool[0] * tool[1]) / total
    j_world = np.zeros((3, 3))
    for m, c, r, j in (arm, tool):
        d = c - com
        j_world += r @ j @ r.T + m * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis theorem
    m_star = model.mass_m_star[0]
    np.testing.assert_allclose(m_star[:3, :3], total * np.eye(3))
    np.testing.assert_allclose(m_star[:3, 3:], 0.0, atol=1e-15)  # the node is at the centre of mass
    np.testing.assert_allclose(model.x0[0, :3], com, atol=1e-14)
    r_node = kp.rotation_matrices(model.x0[0, 3:])
    np.testing.assert_allclose(r_node @ m_star[3:, 3:] @ r_node.T, j_world, atol=1e-14)
    assert robot.total_mass == pytest.approx(total)


def test_fixed_joint_as_weld_when_not_merged() -> None:
    robot = load_urdf(MERGE, merge_fixed=False)
    assert robot.link_node["arm"] == 0 and robot.link_node["tool"] == 1
    assert robot.link_node["marker"] == 1  # massless: merged all the same
    assert set(robot.joint_id) == {"hinge", "mount"}
    model = robot.builder.build()
    assert model.n_nodes == 2 and model.n_masses == 2


def test_root_with_mass_is_welded_or_floating() -> None:
    doc = f"""<robot name="box"><link name="box">{inertial(4.0, xyz="0 0 0.1")}
      <collision><geometry><box size="0.1 0.2 0.3"/></geometry></collision>
      <collision><geometry><sphere radius="0.05"/></geometry></collision></link></robot>"""
    fixed = load_urdf(doc)
    assert fixed.root_joint == 0 and fixed.link_node == {"box": 0}
    np.testing.assert_allclose(fixed.collisions["box"][0].size["size"], [0.1, 0.2, 0.3])
    assert fixed.collisions["box"][1].size == {"radius": 0.05}
    free = load_urdf(doc, floating_base=True, gravity=(0.0, -1.0, -2.0))
    assert free.root_joint is None and free.joint_id == {}
    model = free.builder.build()
    assert model.n_constraints == 0
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3))
    np.testing.assert_allclose(sim.state.vd[0, :3], [0.0, -1.0, -2.0], atol=1e-12)


# --------------------------------------------------------------------------------------- errors
def error_of(doc: str, **kwargs) -> URDFError:
    with pytest.raises(URDFError) as info:
        load_urdf(doc, **kwargs)
    assert isinstance(info.value, kp.ModelError)
    return info.value


def line_of(doc: str, text: str) -> int:
    """The 1-based line of ``doc`` that holds ``text`` (found independently of the reader)."""
    return next(i for i, line in enumerate(doc.splitlines(), 1) if text in line)


LINK = '<link name="{}">' + inertial(1.0) + "</link>"


def two_links(joint: str) -> str:
    return "\n".join(["<robot name='r'>", LINK.format("a"), LINK.format("b"), joint, "</robot>"])


@pytest.mark.parametrize(
    ("doc", "marker", "element", "message"),
    [
        (
            two_links('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n<axis xyz="0 0 1"/>'),
            "<robot",  # the parser reports the end of the document
            None,
            "malformed XML",
        ),
        (two_links('<joint name="j" type="weird"><parent link="a"/><child link="b"/></joint>'),
         '"weird"', "<joint name='j'>", "unknown joint type 'weird'"),
        (two_links('<joint name="j"><parent link="a"/><child link="b"/></joint>'),
         '<joint name="j"', "<joint name='j'>", "missing attribute 'type'"),
        (two_links('<joint name="j" type="fixed"><parent link="a"/><child link="c"/></joint>'),
         '<joint name="j"', "<joint name='j'>", "unknown child link 'c'"),
        (two_links('<joint name="j" type="fixed"><parent link="x"/><child link="b"/></joint>'),
         '<joint name="j"', "<joint name='j'>", "unknown parent link 'x'"),
        (two_links('<joint name="j" type="fixed"><parent link="a"/></joint>'),
         '<joint name="j"', "<joint name='j'>", "missing <child"),
        (two_links(""), "<robot", "<robot name='r'>", "several root links"),
        (two_links('<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
                   '<joint name="k" type="fixed"><parent link="b"/><child link="a"/></joint>'),
         '<joint name="k"', "<joint name='k'>", "cycle"),
        (two_links('<joint name="j" type="prismatic"><parent link="a"/><child link="b"/>\n'
                   '<axis xyz="0 0 0"/><limit effort="1" velocity="1"/></joint>'),
         '<axis xyz="0 0 0"', "<joint name='j'> <axis>", "must be non-zero"),
        (two_links('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n'
                   '<limit lower="0" upper="1" velocity="1"/></joint>'),
         "<limit", "<joint name='j'> <limit>", "missing attribute 'effort'"),
        (two_links('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>\n'
                   '<origin xyz="0 zero 0"/></joint>'),
         "zero", "<joint name='j'> <origin>", "must be 3 finite numbers"),
        (two_links('<link name="a"/>'), '<link name="a"/>', "<link name='a'>", "duplicate link name 'a'"),
        ("<robot name='r'>\n<link name='a'>\n<inertial>\n<mass value='1'/>\n</inertial>\n</link>\n</robot>",
         "<inertial>", "<link name='a'> <inertial>", "missing <inertia>"),
        ("<model name='r'>\n</model>", "<model", "<model name='r'>", "must be <robot>"),
    ],
    ids=[
        "malformed", "unknown-type", "missing-type", "unknown-child", "unknown-parent", "missing-child",
        "several-roots", "cycle", "zero-axis", "limit-without-effort", "bad-number", "duplicate-link",
        "missing-inertia", "not-robot",
    ],
)  # fmt: skip
def test_errors_name_the_element_and_line(doc: str, marker: str, element: str | None, message: str) -> None:
    err = error_of(doc)
    assert message in str(err)
    if element is not None:
        assert element in str(err)
        assert err.element is not None and element in err.element
    if marker == "<robot" and element is None:  # malformed: the line where the parser stopped
        assert err.line == len(doc.splitlines())
    else:
        assert err.line == line_of(doc, marker)
    assert f"<string>, line {err.line}:" in str(err)


def test_massless_moving_link_is_named() -> None:
    doc = """<robot name="r">
      <link name="world"/>
      <joint name="j" type="revolute"><parent link="world"/><child link="ghost"/><axis xyz="0 0 1"/>
        <limit effort="1" velocity="1"/></joint>
      <link name="ghost"/>
    </robot>"""
    err = error_of(doc)
    assert "'ghost'" in str(err) and "no mass" in str(err) and "joint 'j'" in str(err)
    assert err.line == line_of(doc, '<link name="ghost"')
    assert "no mass" in str(error_of('<robot name="r"><link name="a"/></robot>', floating_base=True))


def test_singular_inertia_is_named() -> None:
    doc = "<robot name='r'>\n" + '<link name="a">' + inertial(1.0, i=(0.0, 0.0, 0.0, 0, 0, 0)) + "</link>\n</robot>"
    err = error_of(doc)
    assert "'a'" in str(err) and "positive definite" in str(err) and err.line == 2
    assert "mass 0" not in str(err)


def test_cycle_names_its_joints() -> None:
    doc = two_links(
        '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
        '<joint name="k" type="fixed"><parent link="b"/><child link="a"/></joint>'
    )
    err = error_of(doc)
    assert "'j'" in str(err) and "'k'" in str(err)


def test_second_parent_is_named() -> None:
    doc = "\n".join(
        [
            "<robot name='r'>", LINK.format("a"), LINK.format("b"), LINK.format("c"),
            '<joint name="j" type="fixed"><parent link="a"/><child link="c"/></joint>',
            '<joint name="k" type="fixed"><parent link="b"/><child link="c"/></joint>',
            "</robot>",
        ]
    )  # fmt: skip
    err = error_of(doc)
    assert "already has the parent joint 'j'" in str(err) and err.line == 6 and "<joint name='k'>" in str(err)


def test_bad_initial_positions() -> None:
    assert "unknown joint 'nope'" in str(error_of(PENDULUM, initial_positions={"nope": 1.0}))
    doc = two_links('<joint name="j" type="floating"><parent link="a"/><child link="b"/></joint>')
    err = error_of(doc, initial_positions={"j": 1.0})
    assert "floating joint has no single position" in str(err) and err.line == 4


def test_pybullet_data_kuka() -> None:
    pybullet_data = pytest.importorskip("pybullet_data")
    from pathlib import Path

    path = Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"
    text = path.read_text(encoding="utf-8")
    masses = [float(m) for m in re.findall(r'<mass value="([^"]+)"', text)]
    robot = load_urdf(path)
    assert len(robot.link_node) == text.count("<link ")
    assert robot.total_mass == pytest.approx(sum(masses))
    assert len(robot.joint_id) == text.count('type="revolute"') == 7
    sim = kp.Simulation(robot.builder.build(), kp.StepParameters(h=1e-3, rho_inf=0.9))
    sim.advance(20)  # the arm falls under gravity (nothing holds its joints)


def test_repair_inertia() -> None:
    # a zero inertia (pybullet's files have many) and one against the triangle inequality
    doc = """<robot name="r">
      <link name="world"/>
      <joint name="j" type="continuous"><parent link="world"/><child link="a"/><axis xyz="0 0 1"/></joint>
      <link name="a">INERTIAL_A</link>
      <joint name="k" type="continuous"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/></joint>
      <link name="b">INERTIAL_B</link>
    </robot>"""
    doc = doc.replace("INERTIAL_A", inertial(2.0, i=(0, 0, 0, 0, 0, 0)))
    doc = doc.replace("INERTIAL_B", inertial(1.0, i=(0.01, 0.02, 0.05, 0, 0, 0)))
    err = error_of(doc)
    assert "repair_inertia=True" in str(err) and err.line == line_of(doc, '<link name="a"')
    with pytest.warns(URDFWarning) as record:
        robot = load_urdf(doc, repair_inertia=True)
    messages = sorted(str(w.message) for w in record)
    assert len(messages) == 2 and set(robot.repaired_inertia) == {"a", "b"}
    assert "line 4: the body of link(s) 'a'" in messages[0] and "line 6: the body of link(s) 'b'" in messages[1]
    before, after = robot.repaired_inertia["b"]
    np.testing.assert_allclose(before, [0.01, 0.02, 0.05])
    np.testing.assert_allclose(after, [0.02, 0.03, 0.05], rtol=1e-8)  # the two smaller raised equally
    before, after = robot.repaired_inertia["a"]
    np.testing.assert_allclose(before, 0.0, atol=1e-300)
    np.testing.assert_allclose(after, 2e-6, rtol=1e-8)  # 1e-6 kg m² per kg
    model = robot.builder.build()
    assert model.n_masses == 2
    np.testing.assert_allclose(np.linalg.eigvalsh(model.mass_m_star[1][3:, 3:]), [0.02, 0.03, 0.05], rtol=1e-8)
    # a valid inertia is left alone, and no warning is given
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_urdf(PENDULUM, repair_inertia=True).repaired_inertia == {}


def test_planar_spherical_and_floating_joints() -> None:
    doc = f"""<robot name="r">
      <link name="base">{inertial(5.0)}</link>
      <joint name="p" type="planar"><parent link="base"/><child link="puck"/>
        <origin xyz="0 0 1" rpy="{math.pi / 2} 0 0"/><axis xyz="0 0 1"/></joint>
      <link name="puck">{inertial(1.0)}</link>
      <joint name="s" type="spherical"><parent link="base"/><child link="bob"/><origin xyz="0 0 -1"/></joint>
      <link name="bob">{inertial(1.0, xyz="0.5 0 0")}</link>
      <joint name="f" type="floating"><parent link="base"/><child link="free"/><origin xyz="3 0 0"/></joint>
      <link name="free">{inertial(1.0)}</link>
    </robot>"""
    robot = load_urdf(doc, gravity=(0.0, -2.0, -9.81))
    # rolled 90° about x: the plane's normal is world −y, so the puck moves in the x-z plane
    np.testing.assert_allclose(robot.joint_axes["p"], [0.0, -1.0, 0.0], atol=1e-15)
    assert set(robot.joint_id) == {"p", "s"} and robot.root_joint is not None
    model = robot.builder.build()
    assert model.n_nodes == 4 and model.n_constraints == 3
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3))
    vd = sim.state.vd
    np.testing.assert_allclose(vd[robot.link_node["puck"], :3], [0.0, 0.0, -9.81], atol=1e-10)  # y blocked
    np.testing.assert_allclose(vd[robot.link_node["free"], :3], [0.0, -2.0, -9.81], atol=1e-10)  # free fall
    np.testing.assert_allclose(vd[robot.link_node["base"]], 0.0, atol=1e-10)  # welded
    # the bob on its ball joint, its centre of mass 0.5 m from the joint along x, at rest: it
    # turns about the joint with α = m g l / (I + m l²) (I = 0.1 kg m² about its centre of mass)
    # and its centre of mass accelerates by −α l along z; the y component of gravity pulls
    # straight along y (the joint lets the lever swing about z the same way)
    alpha_y = 1.0 * 9.81 * 0.5 / (0.1 + 0.25)
    alpha_z = 1.0 * 2.0 * 0.5 / (0.1 + 0.25)
    np.testing.assert_allclose(vd[robot.link_node["bob"], :3], [0.0, -alpha_z * 0.5, -alpha_y * 0.5], rtol=1e-8)


def test_unknown_collision_geometry_is_kept_and_late_declaration_read() -> None:
    head = "\n\n<?xml version='1.0'?>\n<robot name='r'>\n<link name='a'>" + inertial(1.0)
    head += "<collision><geometry><plane normal='0 0 1'/></geometry></collision></link>\n"
    err = error_of(head + "<joint name='j' type='bad'><parent link='a'/><child link='a'/></joint>\n</robot>")
    assert err.line == 6 and "unknown joint type 'bad'" in str(err)  # the file's lines
    robot = load_urdf(head + "</robot>")
    (plane,) = robot.collisions["a"]
    assert plane.geometry == "plane" and plane.size == {"normal": "0 0 1"}
    assert "geometry <plane>" in robot.ignored


# ------------------------------------------------------------------------- collision shapes
SHAPES_URDF = """<?xml version="1.0"?>
<robot name="shapes">
  <link name="ball">
    <inertial><origin xyz="0.1 0 0"/><mass value="2.0"/>
      <inertia ixx="0.008" ixy="0" ixz="0" iyy="0.008" iyz="0" izz="0.008"/></inertial>
    <collision name="tip"><origin xyz="0.1 0 0"/><geometry><sphere radius="0.1"/></geometry></collision>
    <collision><origin xyz="0 0 0.5" rpy="0 0 0.3"/><geometry><box size="0.2 0.4 0.6"/></geometry></collision>
    <collision><origin xyz="0 0.3 0" rpy="1.5707963267948966 0 0"/>
      <geometry><capsule radius="0.05" length="0.4"/></geometry></collision>
    <collision><geometry><cylinder radius="0.05" length="0.4"/></geometry></collision>
  </link>
</robot>
"""


def test_collision_shapes_become_contact_shapes_on_request() -> None:
    """``collision_shapes=True``: a sphere, a box turned 0.3 rad about z and a capsule along the
    geometry's z turned onto −y become contact shapes at the link's pose (base at (0, 0, 1) m):
    their contact points against a plane are the sphere's centre, the box's corners and the
    capsule's end centres, computed here from the URDF's numbers; the cylinder is left out with a
    warning.  Set on a plane on its sphere, the body rests at the sphere's static penetration
    m g / k."""
    plain = load_urdf(SHAPES_URDF, floating_base=True, base_position=(0.0, 0.0, 1.0))
    assert plain.collision_shapes == {} and len(plain.collisions["ball"]) == 4
    with pytest.warns(URDFWarning, match=r"link 'ball': <cylinder> \(no cylinder contact shape yet\)"):
        robot = load_urdf(SHAPES_URDF, floating_base=True, base_position=(0.0, 0.0, 1.0), collision_shapes=True)
    assert robot.collision_shapes == {"ball": [0, 1, 2]}
    b = robot.builder
    b.add_ground_plane((0, 0, 1), 0.0, stiffness=1e5)
    model = b.build()
    node = robot.link_node["ball"]
    x0 = np.asarray(model.x0)[node, :3]
    points = x0 + np.asarray(model.contact_offset)
    c, s = math.cos(0.3), math.sin(0.3)
    rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
    corners = np.array([0.0, 0.0, 1.5]) + (signs * [0.1, 0.2, 0.3]) @ rz.T
    ends = [[0.0, 0.3 + 0.2, 1.0], [0.0, 0.3 - 0.2, 1.0]]  # z turned by +90° about x is −y
    expected = np.vstack([[[0.1, 0.0, 1.0]], corners, sorted(ends)])
    got = np.vstack([points[:9], sorted(points[9:11].tolist())])
    np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_allclose(model.contact_radius, [0.1] + [0.0] * 8 + [0.05, 0.05])
    # only the sphere against the plane: the body rests on it at δ = m g / k
    with pytest.warns(URDFWarning):
        robot = load_urdf(SHAPES_URDF, floating_base=True, base_position=(0.0, 0.0, 0.1), collision_shapes=True)
    b = robot.builder
    b.add_ground_plane((0, 0, 1), 0.0, stiffness=1e5, damping=400.0)
    model = b.build()
    # the sphere (centre at the centre of mass, 0.1 m up) touches the plane; the box (from 0.2 m
    # up) and the capsule (lowest point 0.05 m up) never do
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-12, rtol=1e-12))
    sim.advance(3000)
    z = float(np.asarray(model.x0)[node, 2] + sim.state.q[node, 2])  # the body's centre of mass
    assert z == pytest.approx(0.1 - 2.0 * 9.81 / 1e5, abs=1e-9)
