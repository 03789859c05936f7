"""A pendulum read from URDF: a rod on a revolute joint with a ball welded to its tip, checked
against the exact period of the physical pendulum.

The URDF (below) has a massless ``world`` link (the ground), a revolute joint ``pivot`` about y
at height 1.5 m, a 1 m, 1 kg rod ``rod`` (centre of mass 0.5 m below the pivot) and a 0.5 kg
ball of radius 5 cm on a fixed joint at the rod's tip.  :func:`kynemapy.io.urdf.load_urdf`
merges the ball into the rod's body (one node, combined inertia) and starts the joint at 60°
(``initial_positions``).  The exact period of a physical pendulum released at rest from θ₀ is
``T = 4 √(I_p / (m g d)) K(sin(θ₀/2))``: ``I_p`` its inertia about the pivot (here
``M L²/3 + m_b L² + 2/5 m_b r²`` by hand), ``m d`` the first moment of its mass about the
pivot (``M L/2 + m_b L``), ``K`` the complete elliptic integral of the first kind.  The joint's
``<limit>`` (±1 rad) is printed: it is parsed but not enforced, so the pendulum swings past it.

Run:  python examples/urdf_pendulum.py [--quick]   (--quick: 2.2 s, a period, instead of 6 s)
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import ellipk

import kynemapy as kp
from kynemapy.io.urdf import load_urdf

G = 9.81
L, M, R_ROD = 1.0, 1.0, 0.02  # rod: m, kg, m
M_BALL, R_BALL = 0.5, 0.05  # ball: kg, m
THETA0 = np.radians(60.0)
I_ROD = M * L**2 / 12  # about the rod's centre of mass, transverse [kg m²]
I_BALL = 2 / 5 * M_BALL * R_BALL**2

URDF = f"""<?xml version="1.0"?>
<robot name="urdf_pendulum">
  <link name="world"/>
  <joint name="pivot" type="revolute">
    <parent link="world"/>
    <child link="rod"/>
    <origin xyz="0 0 1.5" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="20" velocity="5"/>
  </joint>
  <link name="rod">
    <inertial>
      <origin xyz="0 0 {-L / 2}"/>
      <mass value="{M}"/>
      <inertia ixx="{I_ROD}" ixy="0" ixz="0" iyy="{I_ROD}" iyz="0" izz="{M * R_ROD**2 / 2}"/>
    </inertial>
    <collision>
      <origin xyz="0 0 {-L / 2}"/>
      <geometry><cylinder radius="{R_ROD}" length="{L}"/></geometry>
    </collision>
  </link>
  <joint name="tip" type="fixed">
    <parent link="rod"/>
    <child link="ball"/>
    <origin xyz="0 0 {-L}"/>
  </joint>
  <link name="ball">
    <inertial>
      <mass value="{M_BALL}"/>
      <inertia ixx="{I_BALL}" ixy="0" ixz="0" iyy="{I_BALL}" iyz="0" izz="{I_BALL}"/>
    </inertial>
    <collision><geometry><sphere radius="{R_BALL}"/></geometry></collision>
  </link>
</robot>
"""


def exact_period() -> float:
    """Period of the rod and ball released at rest from θ₀ [s]."""
    i_pivot = M * L**2 / 3 + M_BALL * L**2 + I_BALL
    first_moment = M * L / 2 + M_BALL * L
    return 4.0 * np.sqrt(i_pivot / (first_moment * G)) * ellipk(np.sin(THETA0 / 2) ** 2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2.2 s (a period) instead of 6 s")
    args = ap.parse_args()
    t_end = 2.2 if args.quick else 6.0

    robot = load_urdf(URDF, gravity=(0.0, 0.0, -G), initial_positions={"pivot": THETA0})
    print(f"links -> nodes: {robot.link_node}; joints -> constraints: {robot.joint_id}")
    print(f"total mass {robot.total_mass} kg; collision shapes: {[c.geometry for c in robot.collisions['rod']]}, ...")
    limit = robot.joint_limits["pivot"]
    print(f"pivot limit [{limit.lower}, {limit.upper}] rad (parsed, not enforced)")

    sim = kp.Simulation(robot.builder.build(), kp.StepParameters(h=1e-3, rho_inf=0.9, atol=1e-8, rtol=1e-8))
    pivot = robot.joint_id["pivot"]
    times, rates, angles = [0.0], [0.0], [THETA0]
    while sim.time < t_end - 1e-9:
        sim.step()
        angle, rate, _ = sim.joint_output(pivot)
        times.append(sim.time)
        rates.append(rate)
        angles.append(angle)
    t, w = np.array(times), np.array(rates)
    k = np.flatnonzero(np.sign(w[1:-1]) * np.sign(w[2:]) < 0) + 1  # rate changes sign: turning points
    turns = t[k] - w[k] * (t[k + 1] - t[k]) / (w[k + 1] - w[k])
    period = 2.0 * float(np.mean(np.diff(turns)))
    exact = exact_period()
    error = abs(period - exact) / exact
    print(f"period: {period:.6f} s measured ({len(turns)} turning points), {exact:.6f} s exact; error {error:.1e}")
    amplitude = float(np.max(np.abs(angles)))
    print(f"largest angle {amplitude:.4f} rad (the limit is 1 rad: not enforced)")
    ok = len(turns) >= 2 and error < 1e-4 and abs(amplitude - THETA0) < 1e-3
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
