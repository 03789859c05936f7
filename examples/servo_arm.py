"""A two-link arm held by two PD servos against gravity: joint torques against the static torques.

Two uniform links (1 m, 2 kg and 0.8 m, 1.2 kg) in the xz-plane hang from a shoulder hinge
at the origin and an elbow hinge between them, both about +y (angle 0: the arm horizontal
along +x, positive angles turn it down).  Each hinge has a servo (kynemapy's joint drives,
docs/joints.md) with a target pose; without gravity compensation a PD servo rests where its
torque kp (θ_ref − θ) balances gravity: short of the target by the static torque / kp.  At
rest the joint torques (``Simulation.joint_effort``) equal the static torques of the pose
reached, written here by hand::

    τ₂ = −g m₂ c₂ cos(θ₁ + θ₂)
    τ₁ = −g (m₁ c₁ cos θ₁ + m₂ (l₁ cos θ₁ + c₂ cos(θ₁ + θ₂)))

(``c`` the distance of a link's centre of mass from its joint).  Then the servos get the
static torques at the target as feed-forward (``set_servo_target``): the arm reaches the
target exactly.  The checks: torques equal the static torques to 1e-6 relative, the first
pose's error equals static torque / kp, the second pose is the target to 1e-8 rad.

Run:  python examples/servo_arm.py
"""

from __future__ import annotations

import math
import sys

import kynemapy as kp

G = 9.81
L1, M1 = 1.0, 2.0  # upper link: m, kg
L2, M2 = 0.8, 1.2  # fore link: m, kg
KP = (400.0, 150.0)  # servo position gains [N m/rad]
KD = (60.0, 20.0)  # servo rate gains [N m s/rad]
TARGET = (0.6, -0.9)  # shoulder, elbow (relative) [rad]


def build() -> tuple[kp.Model, int, int]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    upper = b.add_node(position=(L1 / 2, 0.0, 0.0))
    fore = b.add_node(position=(L1 + L2 / 2, 0.0, 0.0))
    for node, m, length in ((upper, M1, L1), (fore, M2, L2)):
        b.add_mass(node, mass=m, inertia=(1e-3, m * length**2 / 12, m * length**2 / 12))
    shoulder = b.add_hinge_joint(kp.GROUND, upper, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    elbow = b.add_hinge_joint(upper, fore, (L1, 0.0, 0.0), (0.0, 1.0, 0.0))
    for joint, kp_gain, kd, target in zip((shoulder, elbow), KP, KD, TARGET, strict=True):
        b.set_servo(joint, kp=kp_gain, kd=kd, position=target)
    return b.build(), shoulder, elbow


def static_torques(t1: float, t2: float) -> tuple[float, float]:
    """The joint torques [N m] that hold the arm at shoulder angle t1, elbow angle t2 (relative)."""
    tau2 = -G * M2 * (L2 / 2) * math.cos(t1 + t2)
    tau1 = -G * (M1 * (L1 / 2) * math.cos(t1) + M2 * (L1 * math.cos(t1) + (L2 / 2) * math.cos(t1 + t2)))
    return tau1, tau2


def settle(sim: kp.Simulation, joints: tuple[int, int], seconds: float) -> tuple[list[float], list[float]]:
    sim.advance(round(seconds / sim.params.h))
    angles = [float(sim.joint_output(j)[0]) for j in joints]
    rates = [float(sim.joint_output(j)[1]) for j in joints]
    assert max(abs(r) for r in rates) < 1e-7, rates
    return angles, [sim.joint_effort(j) for j in joints]


def main() -> int:
    model, shoulder, elbow = build()
    joints = (shoulder, elbow)
    params = kp.StepParameters(h=0.005, rho_inf=0.8, geometric_stiffness=True, atol=1e-10, rtol=1e-10)
    sim = kp.Simulation(model, params)
    ok = True

    angles, efforts = settle(sim, joints, 8.0)
    static = static_torques(*angles)
    print("PD servos, no gravity compensation (at rest after 8 s):")
    print("  joint     target [rad]  angle [rad]  torque [N m]  static [N m]  (target-angle)*kp [N m]")
    rows = zip(("shoulder", "elbow"), TARGET, angles, efforts, static, KP, strict=True)
    for name, target, angle, effort, tau, gain in rows:
        print(
            f"  {name:8s}  {target:12.6f}  {angle:11.6f}  {effort:12.6f}  {tau:12.6f}  {(target - angle) * gain:12.6f}"
        )
        ok &= math.isclose(effort, tau, rel_tol=1e-6) and math.isclose((target - angle) * gain, tau, rel_tol=1e-6)

    for joint, target, tau in zip(joints, TARGET, static_torques(*TARGET), strict=True):
        sim.set_servo_target(joint, target, feedforward=tau)
    angles, efforts = settle(sim, joints, 8.0)
    static = static_torques(*angles)
    print("with the static torques at the target as feed-forward:")
    for name, target, angle, effort, tau in zip(("shoulder", "elbow"), TARGET, angles, efforts, static, strict=True):
        print(f"  {name:8s}  target {target:.6f}  angle {angle:.9f}  torque {effort:.6f}  static {tau:.6f}")
        ok &= abs(angle - target) < 1e-8 and math.isclose(effort, tau, rel_tol=1e-6)
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
