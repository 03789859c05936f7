"""Regression tests: Kynema-FMB's beam regression cases through the public API.

Inputs and expected numbers are copied from Kynema-FMB's ``tests/regression_tests/regression/
test_rotating_beam.cpp``, at Kynema's tolerance (``expect_kokkos_view_2D_equal``: 1e-6 by
default; the differences are reported tighter where they are).  Kynema starts every node from
zero acceleration, so the nodes are given ``acceleration=0`` explicitly.
"""

from __future__ import annotations

import numpy as np

import kynemapy as kp

#: uniform composite section of the rotating beam (Kynema's ``mass_matrix``, ``stiffness_matrix``)
M_STAR = np.diag([8.538e-2, 8.538e-2, 8.538e-2, 1.4433e-2, 0.40972e-2, 1.0336e-2])
C_STAR = np.zeros((6, 6))
C_STAR[0, 0], C_STAR[1, 1], C_STAR[2, 2] = 1368.17e3, 88.56e3, 38.78e3
C_STAR[3:, 3:] = [
    [16.9600e3, 17.6100e3, -0.3510e3],
    [17.6100e3, 59.1200e3, -0.3700e3],
    [-0.3510e3, -0.3700e3, 141.470e3],
]
#: the six GLL nodes of the 10 m beam (span fractions) and the 7-point Gauss rule
NODE_S = [0.0, 0.11747233803526763, 0.35738424175967748, 0.64261575824032247, 0.88252766196473242, 1.0]
QUADRATURE = [
    (-0.9491079123427585, 0.1294849661688697),
    (-0.7415311855993943, 0.27970539148927664),
    (-0.40584515137739696, 0.3818300505051189),
    (6.123233995736766e-17, 0.4179591836734694),
    (0.4058451513773971, 0.3818300505051189),
    (0.7415311855993945, 0.27970539148927664),
    (0.9491079123427585, 0.1294849661688697),
]


def test_rotating_beam_step_convergence() -> None:
    """``RotatingBeamTest.StepConvergence``: the beam (root at x = 2 m) spins at ω = 0.1 rad/s
    about z, its root node driven by a prescribed BC; ρ∞ = 0.9, h = 0.01 s, 10 steps; q of
    the six nodes (Kynema's tolerance 1e-6; reproduced to round-off)."""
    omega = 0.1
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    nodes = []
    for s in NODE_S:
        x = 2.0 + 10.0 * s  # TranslateBeam(2, 0, 0); SetBeamVelocityAboutPoint(ω e_z, origin)
        nodes.append(
            b.add_node(position=(x, 0.0, 0.0), velocity=(0.0, omega * x, 0.0, 0.0, 0.0, omega), acceleration=(0.0,) * 6)
        )
    b.add_beam_element(nodes, NODE_S, QUADRATURE, [0.0, 1.0], [M_STAR, M_STAR], [C_STAR, C_STAR])
    bc = b.add_prescribed_bc(nodes[0])
    sim = kp.Simulation(b.build(), kp.StepParameters(h=0.01, rho_inf=0.9, max_iter=5))
    root = np.array([2.0, 0.0, 0.0])
    for i in range(10):
        angle = omega * 0.01 * (i + 1)
        c, s = np.cos(angle), np.sin(angle)
        u = np.array([c * root[0] - s * root[1], s * root[0] + c * root[1], root[2]]) - root
        sim.inputs.constraint_input[bc] = (*u, np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
        sim.step()  # raises if the step does not converge within max_iter
    expected = np.array(
        [
            [-0.000099999166669473282, 0.019999666668333329, 0.0, 0.99998750002604219, 0.0, 0.0, 0.0049999791666927116],
            [
                -0.00015873054129883523, 0.031746705307316693, 5.3452180213890101e-13, 0.99998750002475689,
                6.9132808328819882e-12, -1.2067607167192481e-13, 0.0049999794236664759,
            ],
            [
                -0.00027867990247669591, 0.055737498222589707, 2.7206029385761709e-12, 0.99998750002344106,
                1.6236092075463668e-11, -1.0204079036815215e-13, 0.004999979686833151,
            ],
            [
                -0.00042128940140729969, 0.084260177944726039, 2.2262966672810607e-12, 0.99998750002292091,
                2.3329848595908065e-11, 8.6195395416293551e-13, 0.0049999797908453587,
            ],
            [
                -0.0005412402267101781, 0.10825097167135142, -5.7646870281175913e-12, 0.99998750002269443,
                2.5986319594619517e-11, 1.8229927487844355e-12, 0.0049999798361397927,
            ],
            [
                -0.0005999751384186499, 0.11999801130335846, -1.0588553074456064e-11, 0.99998750002267489,
                2.6230990329572291e-11, 1.8800830187025051e-12, 0.0049999798400182259,
            ],
        ]
    )  # fmt: skip
    np.testing.assert_allclose(sim.state.q, expected, rtol=0.0, atol=1e-6)  # Kynema's tolerance
    assert np.max(np.abs(sim.state.q - expected)) < 1e-13  # and the same numbers to round-off
