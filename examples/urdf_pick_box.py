"""A robot arm read from URDF picks up a box: servos, sphere fingertips and friction.

The arm (URDF below) turns about the vertical on a ``yaw`` hinge; at its end a carriage moves
up and down on a ``lift`` slider, and two fingers close on ``left`` and ``right`` sliders.
Each fingertip carries two collision spheres (``<collision>`` spheres, read with
``load_urdf(..., collision_shapes=True)``).  A 0.4 kg box rests on a compliant ground plane
under the gripper.  Every joint has a PD servo (``set_servo``); the script moves their targets
as a controller would, between calls of ``advance``:

1. lower the open gripper around the box;
2. close the fingers: their targets lie ``SQUEEZE`` past the box's faces, so each finger
   presses the box with its servo's force (sphere–box contact, friction μ = ``MU``), and the
   two servos hold the box centred between them;
3. lift by ``LIFT`` m, turn the arm by ``TURN`` rad, lower the box and open the fingers.

Checks, against what the controller asked for and statics: while the box hangs in the
fingers, each finger's normal forces add up to its servo's force ``kp (x − target)`` from its
joint position (to 1 %), their friction carries the box's weight (to 1 %, read from
``Simulation.contact_pairs``), and the box follows the carriage
(its height rose by the lift, to the regularized friction's creep: below 2 mm); at the end the
box rests on the ground at the place the turn took it to (the arm's radius times the turned
angle, to 2 mm) and carries its weight on the ground again.

Run:  python examples/urdf_pick_box.py
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np

import kynemapy as kp
from kynemapy.io.urdf import load_urdf

G = 9.81
REACH = 0.5  # the carriage's distance from the yaw axis [m]
BOX = (0.05, 0.04, 0.04)  # the box's half extents [m]
M_BOX = 0.4  # [kg]
R_TIP = 0.01  # fingertip sphere radius [m]
KP_FINGER = 2000.0  # the fingers' servo gain [N/m]
SQUEEZE = 0.0075  # how far past the box's faces the fingers' targets lie [m]: the grip ≈ KP_FINGER × SQUEEZE
GRIP = 20.0  # the fingers' servo force limit [N] (not reached)
MU = 0.8  # friction between fingertips and box
LIFT = 0.15  # [m]
TURN = 0.5  # [rad]


def inertia(m: float, a: float, b: float, c: float) -> str:
    """A box's ``<inertia>`` (mass m [kg], edges a, b, c [m])."""
    return (
        f'<inertia ixx="{m * (b * b + c * c) / 12}" ixy="0" ixz="0" iyy="{m * (a * a + c * c) / 12}" iyz="0" '
        f'izz="{m * (a * a + b * b) / 12}"/>'
    )


def finger(side: str, y: float) -> str:
    spheres = "".join(
        f'<collision><origin xyz="{x} 0 -0.06"/><geometry><sphere radius="{R_TIP}"/></geometry></collision>'
        for x in (-0.03, 0.03)
    )
    return f"""
  <joint name="{side}" type="prismatic">
    <parent link="carriage"/><child link="{side}_finger"/>
    <origin xyz="0 {y} -0.2"/><axis xyz="0 1 0"/>
    <limit lower="-0.05" upper="0.05" effort="{GRIP}" velocity="0.5"/>
  </joint>
  <link name="{side}_finger">
    <inertial><origin xyz="0 0 -0.03"/><mass value="0.1"/>{inertia(0.1, 0.08, 0.01, 0.06)}</inertial>
    {spheres}
  </link>"""


URDF = f"""<?xml version="1.0"?>
<robot name="pick_arm">
  <link name="world"/>
  <joint name="yaw" type="revolute">
    <parent link="world"/><child link="arm"/>
    <origin xyz="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="100" velocity="2"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="{REACH / 2} 0 0.3"/><mass value="4"/>{inertia(4.0, REACH, 0.05, 0.05)}</inertial>
  </link>
  <joint name="lift" type="prismatic">
    <parent link="arm"/><child link="carriage"/>
    <origin xyz="{REACH} 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-0.1" upper="0.3" effort="100" velocity="0.5"/>
  </joint>
  <link name="carriage">
    <inertial><mass value="1"/>{inertia(1.0, 0.1, 0.2, 0.05)}</inertial>
  </link>{finger("left", 0.0)}{finger("right", 0.0)}
</robot>
"""


def build(law: str = "compliant") -> tuple[kp.Model, dict[str, int], dict[str, int]]:
    """The arm from URDF, the box and the ground; the joints' constraint ids and the nodes of the
    fingers and the box.  ``law="hard"``: the ground and the fingertips touch by the hard laws
    (no penetration, exact Coulomb friction; tests/verification/test_hard_joined_bodies.py): the
    whole schedule runs (the box held in the fingers through the lift and the turn), and the
    set-down's velocity jumps (the box pressed onto the hard ground by the gripping fingers, from
    5.16 s) solved by the pyramid LCP and an enumeration of contact modes, or within 1e-6 by their
    least violating impulse (docs/contact.md, "Bodies with joints"); ``main`` uses the compliant
    law."""
    # fingertip spheres at z = 0.04 (the box's middle) with the lift at 0; fingers open by 6 cm
    robot = load_urdf(URDF, collision_shapes=True, initial_positions={"lift": 0.1, "left": 0.06, "right": -0.06})
    b = robot.builder
    box = b.add_node(position=(REACH, 0.0, BOX[2]))
    a, w, h = (2 * e for e in BOX)
    b.add_mass(box, mass=M_BOX, inertia=(M_BOX * (w * w + h * h) / 12, M_BOX * (a * a + h * h) / 12,
                                          M_BOX * (a * a + w * w) / 12))  # fmt: skip
    b.add_box(box, BOX)
    if law == "hard":
        b.add_ground_plane(law="hard", friction=0.6)
        b.set_body_contact(law="hard", friction=MU)
    else:
        b.add_ground_plane(stiffness=2e4, damping=60.0, friction=0.6, slip_velocity=5e-3)
        b.set_body_contact(stiffness=2e4, damping=20.0, friction=MU, slip_velocity=5e-3)
    joints = {name: robot.joint_id[name] for name in ("yaw", "lift", "left", "right")}
    b.set_servo(joints["yaw"], kp=400.0, kd=80.0, position=0.0)
    # the lift's servo carries the carriage and fingers (1.2 kg) by feed-forward
    b.set_servo(joints["lift"], kp=4000.0, kd=300.0, position=0.1, feedforward=1.2 * G)
    for side, open_at in (("left", 0.06), ("right", -0.06)):
        b.set_servo(joints[side], kp=KP_FINGER, kd=40.0, position=open_at, limit=GRIP)
    nodes = {"left": robot.link_node["left_finger"], "right": robot.link_node["right_finger"], "box": box}
    return b.build(), joints, nodes


def ramp(
    sim: kp.Simulation,
    joints: dict[str, int],
    target: dict[str, float],
    carried: dict[str, float],
    seconds: float,
    goal: dict[str, float],
    advance: Callable[[], None] | None = None,
) -> None:
    """Move the servo targets (``target``, updated) to ``goal`` along smooth ramps (zero rate at
    both ends) over ``seconds`` [s], a target every 10 ms, as a controller would; ``carried``: the
    servos' feed-forward [N] by joint name.  ``advance``: the 10 ms between two targets (default
    ``sim.advance(10)``)."""
    start = dict(target)
    n = max(1, round(seconds / 0.01))
    for i in range(1, n + 1):
        s = i / n
        blend, rate = s * s * (3.0 - 2.0 * s), 6.0 * s * (1.0 - s) / seconds
        for name, end in goal.items():
            target[name] = start[name] + (end - start[name]) * blend
            sim.set_servo_target(
                joints[name], target[name], rate=(end - start[name]) * rate, feedforward=carried.get(name, 0.0)
            )
        if advance is None:
            sim.advance(10)
        else:
            advance()


def main() -> int:
    model, joints, nodes = build()
    box = nodes["box"]
    sim = kp.Simulation(model, kp.StepParameters(h=1e-3, rho_inf=0.8))
    target = {"yaw": 0.0, "lift": 0.1, "left": 0.06, "right": -0.06}
    carried = {"lift": 1.2 * G}  # the lift servo's feed-forward [N]
    ok = True

    def move(seconds: float, **goal: float) -> None:
        ramp(sim, joints, target, carried, seconds, goal)

    def hold(seconds: float) -> None:
        sim.advance(round(seconds / sim.params.h))

    z0 = float(sim.state.q[box, 2])
    move(0.8, lift=0.0)  # 1. lower around the box
    closed = BOX[1] + R_TIP - SQUEEZE  # the fingertip spheres' centres' targets [m]
    move(0.3, left=closed, right=-closed)  # 2. close: the targets past the box's faces
    hold(0.3)
    carried["lift"] = (1.2 + M_BOX) * G
    move(1.0, lift=LIFT)  # 3. lift
    hold(0.3)
    pairs = sim.contact_pairs()
    held = pairs.active & (pairs.node[:, 1] == box)
    friction_z = pairs.friction_force[held][:, 2]
    rise = float(sim.state.q[box, 2]) - z0
    print(f"box held by {held.sum()} fingertip contacts:")
    ok &= held.sum() == 4
    for side, sign in (("left", 1.0), ("right", -1.0)):
        x = float(sim.joint_output(joints[side])[0])
        servo = KP_FINGER * sign * (x - sign * closed)
        tips = held & (pairs.node[:, 0] == nodes[side])
        pressed = float(pairs.normal_force[tips].sum())
        print(f"  {side:5s} finger: normal forces {pressed:.4f} N, its servo's force {servo:.4f} N")
        ok &= math.isclose(pressed, servo, rel_tol=0.01)
    print(f"  friction carries {friction_z.sum():.4f} N upward (box weight {M_BOX * G:.4f} N)")
    print(f"  box rose {rise:.5f} m (lift {LIFT} m)")
    ok &= math.isclose(friction_z.sum(), M_BOX * G, rel_tol=0.01)
    ok &= abs(rise - LIFT) < 2e-3

    move(1.5, yaw=TURN)  # turn, lower, open, raise
    move(1.0, lift=0.0)
    move(0.3, left=0.06, right=-0.06)
    carried["lift"] = 1.2 * G
    move(0.5, lift=0.1)
    hold(0.5)
    x = sim.state.q[box, :3] + model.x0[box, :3]
    place = REACH * np.array([math.cos(TURN), math.sin(TURN)])
    ground = sim.contacts()
    on_box = ground.active & (ground.node == box)
    print(f"box set down at ({x[0]:.4f}, {x[1]:.4f}, {x[2]:.4f}) m; the turn's place ({place[0]:.4f}, {place[1]:.4f})")
    print(f"  the ground carries {ground.normal_force[on_box].sum():.4f} N (weight {M_BOX * G:.4f} N)")
    ok &= float(np.linalg.norm(x[:2] - place)) < 2e-3 and abs(x[2] - BOX[2]) < 1e-3
    ok &= math.isclose(ground.normal_force[on_box].sum(), M_BOX * G, rel_tol=1e-3)
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
