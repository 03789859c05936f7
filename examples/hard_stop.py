"""A door swinging shut onto a hard stop, and a mass bouncing on a slider's travel end.

Hard (unilateral) joint limits (docs/joints.md, "Hard joint limits"): ``limits=(lower, upper)``
with ``limit_restitution=e``.  The joint never passes a stop by more than the correction's
tolerance, and a hit rebounds by Newton's law, rate after = −e × rate before.

1. A pendulum (2 kg, centre 0.8 m from a hinge along x, I_c = 0.05 kg m²) released from the
   horizontal falls onto a stop 30° short of the bottom, e = 0.5.  The closed form of the hit:
   θ̇* = −√(2 m g l sin 60° / I) (energy), rebound +e θ̇*.  With e = 0 it stays on the stop and
   the stop's torque (impulse per step / h) is the static torque m g l sin 30°.
2. A 3 kg mass on a vertical slider dropped from 1 m onto its lower travel end, e = 0.8:
   rebound e √(2 g H) and bounce heights e^(2k) H.

The bounds checked (from the step size h, docs/joints.md): rebound rate within e a_max h of the
closed form (a_max the load's largest acceleration of the joint), bounce heights within
k v_k h + g h²/8, the static torque within |tan θ| h² a_max relative.

Run:  python examples/hard_stop.py
"""

from __future__ import annotations

import itertools
import math
import sys

import kynemapy as kp

G = 9.81
MASS, LENGTH, IC = 2.0, 0.8, 0.05  # kg, m, kg m²
INERTIA = MASS * LENGTH**2 + IC  # kg m² about the hinge
STOP = -math.pi / 3  # rad from the horizontal (30° from the vertical)
H = 1e-3  # s


def pendulum(e: float) -> tuple[kp.Simulation, int]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, LENGTH, 0.0))
    b.add_mass(n, mass=MASS, inertia=(IC, IC, IC))
    j = b.add_hinge_joint(kp.GROUND, n, (0, 0, 0), (1, 0, 0), limits=(STOP, 1.0), limit_restitution=e)
    return kp.Simulation(b.build(), kp.StepParameters(h=H, rho_inf=0.9, atol=1e-12, rtol=1e-12)), j


def slider(e: float, drop: float) -> tuple[kp.Simulation, int]:
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    n = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(n, mass=3.0, inertia=(0.1, 0.1, 0.1))
    j = b.add_slider_joint(kp.GROUND, n, (0, 0, 0), (0, 0, 1), limits=(-drop, 1.0), limit_restitution=e)
    return kp.Simulation(b.build(), kp.StepParameters(h=H, rho_inf=0.9, atol=1e-12, rtol=1e-12)), j


def main() -> int:
    ok = True
    a_max = MASS * G * LENGTH / INERTIA
    rate_star = -math.sqrt(2.0 * MASS * G * LENGTH * math.sin(-STOP) / INERTIA)

    e = 0.5
    sim, j = pendulum(e)
    lowest = 0.0
    while True:  # step to the hit: the first step whose stop impulse is not zero
        sim.step()
        lowest = min(lowest, float(sim.joint_output(j)[0]))
        if sim.stop_impulse(j) != 0.0:
            break
    rebound = float(sim.joint_output(j)[1])
    print(f"pendulum, e = {e}: hit at t = {sim.time:.3f} s")
    print(f"  rebound rate {rebound:.6f} rad/s, closed form -e * {rate_star:.6f} = {-e * rate_star:.6f} rad/s")
    ok &= abs(rebound + e * rate_star) <= e * a_max * H + 1e-6
    rows = sim.rollout(2000, every=10)
    lowest = min(lowest, float(rows["constraint_output"][:, j, 0].min()))
    print(f"  lowest angle {lowest:.15f} rad, stop {STOP:.15f} rad")
    ok &= lowest >= STOP - 1e-12

    sim, j = pendulum(0.0)
    sim.advance(3000)
    torque = sim.stop_impulse(j) / H
    static = MASS * G * LENGTH * math.cos(STOP)
    print(f"pendulum, e = 0, at rest: stop torque {torque:.6f} N m, static m g l sin 30° = {static:.6f} N m")
    ok &= math.isclose(torque, static, rel_tol=abs(math.tan(STOP)) * H * H * a_max)
    ok &= abs(float(sim.joint_output(j)[0]) - STOP) <= 1e-15

    e, drop = 0.8, 1.0
    sim, j = slider(e, drop)
    rows = sim.rollout(4000)
    s = rows["constraint_output"][:, j, 0]
    landed = [k for k in range(1, s.size - 1) if s[k] <= -drop + 1e-12 < s[k + 1]]
    print(f"slider, e = {e}, dropped {drop} m:")
    v0 = math.sqrt(2.0 * G * drop)
    for k, (a, b) in enumerate(itertools.pairwise(landed[:4]), start=1):
        height = float(s[a:b].max()) + drop
        bound = k * e**k * v0 * H + G * H * H / 8.0
        print(f"  bounce {k}: height {height:.6f} m, closed form e^{2 * k} H = {e ** (2 * k) * drop:.6f} m")
        ok &= abs(height - e ** (2 * k) * drop) <= bound
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
