"""Capsule–capsule and capsule–box contact between bodies (docs/contact.md): the exact tangent of
the segment–segment pair against central differences (both parameters inside, one end on a
segment from either side, end on end) and closed-form rest loads (a capsule crossed over a fixed
capsule, two parallel capsules, a capsule on a box on its two end spheres)."""

from __future__ import annotations

import numpy as np
import pytest
from newton_differences import matrix_and_differences

import kynemapy as kp
from kynemapy.engine.elements.pairs import segment_points

G = 9.81


def _params(h: float) -> kp.StepParameters:
    return kp.StepParameters(h=h, rho_inf=0.9, atol=1e-10, rtol=1e-10, geometric_stiffness=True)


def _unit(v: tuple[float, float, float]) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / np.linalg.norm(a)


# ------------------------------------------------------------------------- exact tangent
#: capsule A along x through (0, 0, 0), r = 0.05, ends ±0.2 m; capsule B (r = 0.04) 2 mm into it:
#: its ends (a, b) for each case, and which parameters are inside (bit 0: t on B, bit 1: s on A)
R_A, R_B, DEPTH = 0.05, 0.04, 0.002
_D = R_A + R_B - DEPTH
_U = _unit((0.3, 0.2, 1.0))  # B's axis leaving A's middle (end on segment)
_V = _unit((1.0, 0.3, 0.5))  # B's axis leaving A's end b (end on end)
CASES = {
    # B crossing above A, its axis tilted: s, t both inside
    "crossing": (((0.03, -0.15, _D - 0.004), (0.05, 0.2, _D + 0.004)), 3),
    # B's end a on A's middle, B leaving upward: s inside, t = 0
    "end on segment": (((0.05, 0.0, _D), tuple(np.array([0.05, 0.0, _D]) + 0.3 * _U)), 2),
    # end on end: A's end b (s = 1) against B's end a (t = 0)
    "end on end": ((tuple(np.array([0.2, 0.0, 0.0]) + _D * _V), tuple(np.array([0.2, 0.0, 0.0]) + (_D + 0.3) * _V)), 0),
}


def crossing_capsules(case: str, b_first: bool) -> tuple[kp.Model, kp.Model]:
    """Capsules A and B (:data:`CASES`) on two tumbling bodies whose nodes are off the capsules'
    middles, sliding and spinning (μ = 0.5, v_s = 0.3 m/s); ``b_first``: B is shape 0 (body 1 of
    the pair), which turns "s inside" into "t inside"; and the same bodies without contact."""
    (pa, pb), _ = CASES[case]

    def build(contact: bool) -> kp.Model:
        b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
        specs = [
            ("A", (0.01, 0.02, -0.01), (0.3, -0.2, 0.1, 1.0, -2.0, 0.5), 1.2, R_A, (-0.2, 0.0, 0.0), (0.2, 0.0, 0.0)),
            ("B", (0.04, -0.01, 0.1), (-0.4, 0.3, -0.2, -1.5, 0.7, 2.0), 0.8, R_B, pa, pb),
        ]
        if b_first:
            specs.reverse()
        for _, position, velocity, mass, radius, a, e in specs:
            n = b.add_node(position=position, velocity=velocity)
            b.add_mass(n, mass=mass, inertia=(0.01, 0.02, 0.015))
            b.add_capsule(n, radius, a, e)
        if contact:
            b.set_body_contact(stiffness=3e4, damping=50.0, friction=0.5, slip_velocity=0.3)
        return b.build()

    return build(True), build(False)


@pytest.mark.parametrize(
    ("case", "b_first"),
    [("crossing", False), ("end on segment", False), ("end on segment", True), ("end on end", False)],
)
def test_iteration_matrix_with_capsule_capsule_pairs_is_the_derivative_of_the_residual(
    case: str, b_first: bool
) -> None:
    """Two capsules on tumbling bodies, 2 mm deep, crossing (s and t inside), one's end on the
    other's middle (s inside, t held; with B first, t inside, s held) and end on end (both held):
    the contact's share of the matrix against central differences; what remains is the
    differences' own ε² error, which falls by 4 when ε halves."""
    from kynemapy.model.geometry import contact_shapes

    model, bare = crossing_capsules(case, b_first)
    assert model.n_pairs == 1
    assert model.pair_shape.tolist() == [[0, 1]]
    assert [s.kind for s in contact_shapes(model)] == ["capsule", "capsule"]
    errors = []
    for eps in (2.5e-7, 1.25e-7):
        a1, fd1, state = matrix_and_differences(model, _params(0.001), steps=2, projected=False, eps=eps)
        a0, fd0, _ = matrix_and_differences(bare, _params(0.001), state, projected=False, eps=eps)
        part, part_fd = a1 - a0, fd1 - fd0
        errors.append(np.abs(part - part_fd).max() / np.abs(part_fd).max())
    sim = kp.Simulation(model, _params(0.001))
    sim.state.assign(state)
    pairs = sim.contact_pairs()
    assert pairs.active[0] and -3e-3 < pairs.gap[0] < -1e-3
    # the case still holds at the state the matrix was taken at
    q = sim.state.q
    x1 = np.ascontiguousarray(model.x0[0, :3] + q[0, :3])
    x2 = np.ascontiguousarray(model.x0[1, :3] + q[1, :3])
    quats = np.ascontiguousarray(q[:, 3:7])
    free = segment_points(quats[0], quats[1], x1, x2, np.ascontiguousarray(model.pair_offset[0]))[12]
    expected = CASES[case][1]
    if b_first:  # the parameters swap roles
        expected = ((expected & 1) << 1) | (expected >> 1)
    assert free == expected
    assert np.abs(part_fd).max() > 1e3
    assert errors[1] < 1e-6
    assert 3.0 < errors[0] / errors[1] < 5.0  # ε²: the tangent itself is exact
