"""ModelBuilder.add_beam and the beam transforms (kynemapy/model/beams.py).

Closed forms for straight and curved (parabolic) axes, Kynema's interface beam unit tests
(``tests/unit_tests/interfaces/components/test_beam.cpp``: root rotations, quadrature, sections
with twist), ``tests/unit_tests/elements/beams/test_beams_input.cpp`` (element counts) and
``tests/regression_tests/regression/test_beams.cpp`` (element set-up tables), the transforms
against hand-computed values, every bad input named, and a TOML beam equal to the Python one.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.engine.elements.beams.sections import element_tables
from kynemapy.model.beams import Beam, beam_layout, quaternion_to_matrix
from kynemapy.model.file import ModelFileError, parse_model_file

I6 = np.eye(6)
#: GLL points of order 4 on [-1, 1]: 0, ±sqrt(3/7), ±1
GLL4 = np.array([-1.0, -math.sqrt(3.0 / 7.0), 0.0, math.sqrt(3.0 / 7.0), 1.0])


def straight(b: kp.ModelBuilder, **kwargs) -> Beam:
    kwargs.setdefault("order", 4)
    kwargs.setdefault("quadrature", "gauss")
    kwargs.setdefault("quadrature_style", "whole")
    kwargs.setdefault("section_refinement", 4)
    return b.add_beam([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]], [0.0, 1.0], [I6, I6], [I6, I6], **kwargs)


def positions(b: kp.ModelBuilder, beam: Beam) -> np.ndarray:
    return b.build().x0[list(beam.nodes), :3]


def orientations(b: kp.ModelBuilder, beam: Beam) -> np.ndarray:
    return b.build().x0[list(beam.nodes), 3:]


# ------------------------------------------------------------------------------ geometry
def test_straight_axis_nodes_at_the_gll_points() -> None:
    b = kp.ModelBuilder()
    beam = straight(b)
    assert beam.nodes == (0, 1, 2, 3, 4) and beam.elements == (0,)
    assert beam.root == 0 and beam.tip == 4
    np.testing.assert_allclose(beam.node_s, (GLL4 + 1.0) / 2.0, rtol=0.0, atol=1e-15)
    x = positions(b, beam)
    np.testing.assert_allclose(x[:, 0], 5.0 * (GLL4 + 1.0), rtol=0.0, atol=1e-14)
    np.testing.assert_array_equal(x[:, 1:], 0.0)
    np.testing.assert_allclose(orientations(b, beam), [[1.0, 0.0, 0.0, 0.0]] * 5, rtol=0.0, atol=1e-15)


@pytest.mark.parametrize("n_elements", [1, 3])
def test_curved_axis_nodes_on_the_parabola_first_axis_along_the_tangent(n_elements: int) -> None:
    """y = a x², points at span fractions s = x/L: the fitted axis is the parabola itself; node
    orientations: first axis along (1, 2 a x), second in the plane of the tangent and e_y."""
    a, length = 0.05, 4.0
    xs = np.linspace(0.0, length, 7)
    points = np.column_stack((xs, a * xs**2, np.zeros_like(xs)))
    b = kp.ModelBuilder()
    beam = b.add_beam(
        points, [0.0, 1.0], [I6, I6], [I6, I6], point_s=xs / length, order=3, n_elements=n_elements,
        quadrature="gauss", quadrature_style="whole", section_refinement=3,
    )  # fmt: skip
    assert len(beam.nodes) == 3 * n_elements + 1 and len(beam.elements) == n_elements
    s = np.array(beam.node_s)
    local = (np.array([-1.0, -1.0 / math.sqrt(5.0), 1.0 / math.sqrt(5.0), 1.0]) + 1.0) / 2.0
    expected_s = np.unique(np.concatenate([(e + local) / n_elements for e in range(n_elements)]))
    np.testing.assert_allclose(s, expected_s, rtol=0.0, atol=1e-14)
    x = positions(b, beam)
    np.testing.assert_allclose(x[:, 0], length * s, rtol=0.0, atol=1e-13)
    np.testing.assert_allclose(x[:, 1], a * (length * s) ** 2, rtol=0.0, atol=1e-13)
    for q, xi in zip(orientations(b, beam), x[:, 0], strict=True):
        r = quaternion_to_matrix(q)
        tangent = np.array([1.0, 2.0 * a * xi, 0.0]) / math.hypot(1.0, 2.0 * a * xi)
        np.testing.assert_allclose(r[:, 0], tangent, rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(r[:, 2], [0.0, 0.0, 1.0], rtol=0.0, atol=1e-12)
        assert abs(np.linalg.norm(q) - 1.0) < 1e-15
    model = b.build()
    # shared end nodes between elements; each element's first node is the previous one's last
    nodes = np.asarray(model.beam_node)
    for e in range(1, n_elements):
        assert nodes[e, 0] == nodes[e - 1, 3]


@pytest.mark.parametrize(("order", "n_points"), [(12, 15), (4, 15), (2, 3)])
def test_curved_axis_fit_paths(order: int, n_points: int) -> None:
    """Kynema's fit: degree min(K, order + 1, 10) − 1, raised to the element's order when lower
    (order 12 from 15 points: a degree-9 fit projected); a cubic axis is reproduced whenever the
    fit's degree reaches 3, and the ends are always interpolated."""
    xs = np.linspace(0.0, 2.0, n_points)
    points = np.column_stack((xs, 0.1 * xs**2, 0.02 * xs**3))
    b = kp.ModelBuilder()
    beam = b.add_beam(points, [0.0, 1.0], [I6, I6], [I6, I6], point_s=xs / 2.0, order=order)
    x = positions(b, beam)
    np.testing.assert_allclose(x[[0, -1]], points[[0, -1]], rtol=0.0, atol=1e-14)
    if min(n_points, order + 1, 10) >= 4:
        s = 2.0 * np.array(beam.node_s)
        np.testing.assert_allclose(x, np.column_stack((s, 0.1 * s**2, 0.02 * s**3)), rtol=0.0, atol=1e-12)


def test_arc_length_span_fractions_by_default() -> None:
    b = kp.ModelBuilder()
    beam = b.add_beam([[0, 0, 0], [1, 0, 0], [3, 0, 0]], [0.0, 1.0], [I6, I6], [I6, I6], order=2)
    np.testing.assert_allclose(positions(b, beam)[:, 0], [0.0, 1.5, 3.0], rtol=0.0, atol=1e-15)


def test_axis_along_y_uses_e_x_for_the_second_axis() -> None:
    """Kynema's TangentTwistToQuaternion: a tangent within 25.8° of e_y takes e_x as the plane axis."""
    b = kp.ModelBuilder()
    beam = b.add_beam([[0, 0, 0], [0, 2, 0]], [0.0, 1.0], [I6, I6], [I6, I6], order=1)
    r = quaternion_to_matrix(orientations(b, beam)[0])
    np.testing.assert_allclose(r, [[0, 1, 0], [1, 0, 0], [0, 0, -1]], rtol=0.0, atol=1e-15)


def test_twist_turns_the_sections_not_the_nodes() -> None:
    """Kynema's ``Section_GLL_ThreeSections_OneRefinement_ConstantTwist_ConstantSection`` (and the
    linear and bilinear twists): the node orientations stay the tangent's, the sectional matrices
    are turned by the twist interpolated at each section."""
    diag = [np.diag([1.0, 2, 3, 4, 5, 6]), np.diag([2.0, 3, 4, 5, 6, 7]), np.diag([4.0, 5, 6, 7, 8, 9])]

    def sections(twist, twist_s):
        layout = beam_layout(
            "t", [[0, 0, 0], [1, 0, 0]], [0.0, 0.5, 1.0], diag, diag, twist=twist, twist_s=twist_s, order=2,
            section_refinement=1,
        )  # fmt: skip
        np.testing.assert_allclose(layout.orientations, [[1.0, 0, 0, 0]] * 3, atol=1e-15)
        el = layout.elements[0]
        np.testing.assert_allclose(el.section_s, [0.0, 0.25, 0.5, 0.75, 1.0], rtol=0.0, atol=1e-15)
        np.testing.assert_array_equal(el.m_star, el.c_star)
        return el.m_star

    def twisted(d, off):
        m = np.diag(d).astype(float)
        m[1, 2] = m[2, 1] = m[4, 5] = m[5, 4] = off
        return m

    constant = sections([math.pi / 4, math.pi / 4], [0.0, 1.0])
    expected = [
        twisted([1, 2.5, 2.5, 4, 5.5, 5.5], -0.5), twisted([1.5, 3, 3, 4.5, 6, 6], -0.5),
        twisted([2, 3.5, 3.5, 5, 6.5, 6.5], -0.5), twisted([3, 4.5, 4.5, 6, 7.5, 7.5], -0.5),
        twisted([4, 5.5, 5.5, 7, 8.5, 8.5], -0.5),
    ]  # fmt: skip
    np.testing.assert_allclose(constant, expected, rtol=0.0, atol=1e-15)
    linear = sections([0.0, math.pi], [0.0, 1.0])
    expected = [
        np.diag([1.0, 2, 3, 4, 5, 6]), twisted([1.5, 3, 3, 4.5, 6, 6], -0.5), np.diag([2.0, 4, 3, 5, 7, 6]),
        twisted([3, 4.5, 4.5, 6, 7.5, 7.5], 0.5), np.diag([4.0, 5, 6, 7, 8, 9]),
    ]  # fmt: skip
    np.testing.assert_allclose(linear, expected, rtol=0.0, atol=1e-14)
    bilinear = sections([0.0, math.pi / 2, 0.0], [0.0, 0.5, 1.0])
    expected[3] = twisted([3, 4.5, 4.5, 6, 7.5, 7.5], -0.5)
    np.testing.assert_allclose(bilinear, expected, rtol=0.0, atol=1e-14)
    # one twist per section when twist_s is left out; a single number is a constant twist
    np.testing.assert_allclose(sections([math.pi / 4] * 3, None), constant, rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(sections(math.pi / 4, None), constant, rtol=0.0, atol=1e-15)


@pytest.mark.parametrize(
    ("section_s", "scales"), [([0.0, 1.0], [1.0, 1.0]), ([0.0, 1.0], [1.0, 2.0]), ([0.0, 0.5, 1.0], [1.0, 2.0, 4.0])]
)
def test_sections_without_refinement_are_the_given_ones(section_s, scales) -> None:
    """Kynema's ``Section_GLL_{Two,Three}Sections_NoRefinement_NoTwist_*``: the given stations and matrices."""
    mats = [k * I6 for k in scales]
    el = beam_layout("s", [[0, 0, 0], [1, 0, 0]], section_s, mats, mats, order=2).elements[0]
    np.testing.assert_array_equal(el.section_s, section_s)
    np.testing.assert_array_equal(el.m_star, mats)
    np.testing.assert_array_equal(el.c_star, mats)


def test_sections_without_twist_interpolated_at_refinement() -> None:
    """Kynema's ``Section_GLL_ThreeSections_OneRefinement_NoTwist_LinearSection``."""
    mats = [k * I6 for k in (1.0, 2.0, 4.0)]
    el = beam_layout("s", [[0, 0, 0], [1, 0, 0]], [0.0, 0.5, 1.0], mats, mats, order=2, section_refinement=1)
    el = el.elements[0]
    np.testing.assert_allclose(el.m_star, [k * I6 for k in (1.0, 1.5, 2.0, 3.0, 4.0)], rtol=0.0, atol=1e-15)


# ------------------------------------------------------------------------------ quadrature
def quadrature(section_s, refinement=0, rule="gll", length=1.0):
    n = len(section_s)
    layout = beam_layout(
        "q", [[0, 0, 0], [length, 0, 0]], section_s, [I6] * n, [I6] * n, order=2, quadrature=rule,
        section_refinement=refinement,
    )  # fmt: skip
    return layout.elements[0].quadrature


R3 = 1.0 / math.sqrt(3.0)
S5 = math.sqrt(0.2)


@pytest.mark.parametrize(
    ("section_s", "refinement", "rule", "expected"),
    [
        ([0.0, 1.0], 0, "gll", [(-1, 1), (1, 1)]),
        ([0.0, 0.5, 1.0], 0, "gll", [(-1, 0.5), (0, 1), (1, 0.5)]),
        ([0.0, 0.5, 0.75, 1.0], 0, "gll", [(-1, 0.5), (0, 0.75), (0.5, 0.5), (1, 0.25)]),
        (list(np.linspace(0, 1, 11)), 0, "gll", [(-1, 0.1)] + [(-1 + 0.2 * k, 0.2) for k in range(1, 10)] + [(1, 0.1)]),
        ([0.0, 1.0], 1, "gll", [(-1, 1 / 3), (0, 4 / 3), (1, 1 / 3)]),
        ([0.0, 1.0], 2, "gll", [(-1, 1 / 6), (-math.sqrt(0.2), 5 / 6), (math.sqrt(0.2), 5 / 6), (1, 1 / 6)]),
        ([0.0, 0.5, 1.0], 1, "gll", [(-1, 1 / 6), (-0.5, 4 / 6), (0, 1 / 3), (0.5, 4 / 6), (1, 1 / 6)]),
        (
            [0.0, 0.5, 0.75, 1.0], 2, "gll",
            [(-1, 1 / 12), (-0.5 - S5 / 2, 5 / 12), (-0.5 + S5 / 2, 5 / 12), (0, 1 / 12 + 1 / 24),
             (0.25 - S5 / 4, 5 / 24), (0.25 + S5 / 4, 5 / 24), (0.5, 1 / 12), (0.75 - S5 / 4, 5 / 24),
             (0.75 + S5 / 4, 5 / 24), (1, 1 / 24)],
        ),
        (
            list(np.linspace(0, 1, 11)), 1, "gll",
            [(-1, 1 / 30), *[(-0.9 + 0.1 * k, (4 / 3 if k % 2 == 0 else 2 / 3) / 10) for k in range(19)], (1, 1 / 30)],
        ),
        ([0.0, 1.0], 0, "gauss", [(0, 2)]),
        ([0.0, 0.5, 1.0], 0, "gauss", [(-0.5, 1), (0.5, 1)]),
        ([0.0, 0.5, 0.75, 1.0], 0, "gauss", [(-0.5, 1), (0.25, 0.5), (0.75, 0.5)]),
        ([0.0, 1.0], 1, "gauss", [(-R3, 1), (R3, 1)]),
        ([0.0, 0.5, 1.0], 1, "gauss", [(c + d * R3 / 2, 0.5) for c in (-0.5, 0.5) for d in (-1, 1)]),
        (
            list(np.linspace(0, 1, 11)), 1, "gauss",
            [(c + d * R3 / 10, 0.1) for c in np.linspace(-0.9, 0.9, 10) for d in (-1, 1)],
        ),
    ],
    ids=[
        "GLL_Two", "GLL_Three", "GLL_Four", "GLL_Eleven", "GLL_Two_OneRefinement", "GLL_Two_TwoRefinements",
        "GLL_Three_OneRefinement", "GLL_Four_TwoRefinement", "GLL_Eleven_OneRefinement",
        "GL_Two", "GL_Three", "GL_Four", "GL_Two_OneRefinement", "GL_Three_OneRefinement", "GL_Eleven_OneRefinement",
    ],
)  # fmt: skip
def test_kynema_interface_quadrature(section_s, refinement, rule, expected) -> None:
    """Kynema's ``BeamComponentTest.Quadrature_*`` (1e-15 there; 2e-15 here for the Newton GLL points)."""
    np.testing.assert_allclose(quadrature(section_s, refinement, rule), expected, rtol=0.0, atol=2e-15)


def test_quadrature_does_not_depend_on_length() -> None:
    """``Quadrature_GLL_FourSections_NoRefinement_Length2``."""
    np.testing.assert_array_equal(quadrature([0, 0.5, 0.75, 1], length=2.0), quadrature([0, 0.5, 0.75, 1]))


# ------------------------------------------------------------------------------ root placement
@pytest.mark.parametrize(
    ("quaternion", "tip", "matrix"),
    [
        ((math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0), (0, 0, -1), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
        ((math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)), (0, 1, 0), [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
        ((math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0), (1, 0, 0), [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),
    ],
    ids=["AboutY_PointsAlongZ", "AboutZ_PointsAlongY", "AboutX_StillAlongX"],
)
def test_kynema_rotated_beam(quaternion, tip, matrix) -> None:
    """Kynema's ``BeamComponentTest.RotatedBeamAbout*``: order 2, axis (0,0,0)-(1,0,0), root
    orientation a quarter turn; every node's position and rotation matrix (1e-15)."""
    b = kp.ModelBuilder()
    beam = b.add_beam(
        [[0, 0, 0], [0.5, 0, 0], [1, 0, 0]], [0, 0.5, 1], [I6] * 3, [I6] * 3, twist=[0, 0, 0], twist_s=[0, 0.5, 1],
        order=2, root_orientation=quaternion,
    )  # fmt: skip
    x0 = b.build().x0
    for k, node in enumerate(beam.nodes):
        np.testing.assert_allclose(x0[node, :3], 0.5 * k * np.asarray(tip, float), rtol=0.0, atol=1e-15)
        np.testing.assert_allclose(quaternion_to_matrix(x0[node, 3:]), matrix, rtol=0.0, atol=1e-15)


# ------------------------------------------------------------------------------ transforms
def test_translate_rotate_and_velocity_about_a_point_by_hand() -> None:
    b = kp.ModelBuilder()
    beam = straight(b)
    x_before = positions(b, beam)
    b.translate_beam(beam, (1.0, 2.0, 3.0))
    np.testing.assert_allclose(positions(b, beam), x_before + np.array([1.0, 2.0, 3.0]), rtol=0.0, atol=1e-15)
    # a quarter turn about z through (1, 2, 3): (1 + d, 2, 3) -> (1, 2 + d, 3)
    q = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))
    b.rotate_beam_about_point(beam, q, (1.0, 2.0, 3.0))
    x = positions(b, beam)
    np.testing.assert_allclose(x, np.column_stack((np.ones(5), 2.0 + x_before[:, 0], 3.0 * np.ones(5))), atol=1e-14)
    np.testing.assert_allclose(orientations(b, beam), [q] * 5, rtol=0.0, atol=1e-15)
    # spin about z through (1, 2, 0) at 0.5 rad/s plus a drift (0.1, 0, 0): v = drift + ω × (X − p)
    b.set_beam_velocity_about_point(beam, (0.1, 0.0, 0.0, 0.0, 0.0, 0.5), (1.0, 2.0, 0.0))
    v = b.build().initial_v[list(beam.nodes)]
    r = x - [1.0, 2.0, 0.0]
    np.testing.assert_allclose(v[:, 0], 0.1 - 0.5 * r[:, 1], rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(v[:, 1], 0.5 * r[:, 0], rtol=0.0, atol=1e-15)
    np.testing.assert_array_equal(v[:, 2:5], 0.0)
    np.testing.assert_array_equal(v[:, 5], 0.5)
    # centripetal acceleration of that spin: ü = ω × (ω × r) = −ω² r⊥
    b.set_beam_acceleration_about_point(beam, (0.0,) * 6, (0.0, 0.0, 0.5), (1.0, 2.0, 0.0))
    vd = b.build().initial_vd[list(beam.nodes)]
    np.testing.assert_allclose(vd[:, :2], -0.25 * r[:, :2], rtol=0.0, atol=1e-15)


def test_transforms_recompute_the_element_tables() -> None:
    """A beam moved after it was built has the tables of one built in place (Kynema makes them
    from the nodes when the system is created)."""
    q = (math.cos(0.3), math.sin(0.3) / math.sqrt(2), math.sin(0.3) / math.sqrt(2), 0.0)
    moved = kp.ModelBuilder()
    beam = straight(moved)
    moved.translate_beam(beam.elements[0], (0.0, 1.0, 0.0))  # Kynema's handle: the element id
    moved.rotate_beam_about_point(beam, q, (0.0, 1.0, 0.0))
    model = moved.build()
    x0 = np.asarray(model.x0)
    layout = beam_layout(
        "m", [[0, 0, 0], [10, 0, 0]], [0, 1], [I6, I6], [I6, I6], order=4, quadrature="gauss",
        quadrature_style="whole", section_refinement=4,
    )  # fmt: skip
    el = layout.elements[0]
    tables = element_tables(x0, el.node_s, el.quadrature, el.section_s, el.m_star, el.c_star)
    np.testing.assert_array_equal(model.beam_qp_x0[0], tables.qp_x0)
    np.testing.assert_array_equal(model.beam_qp_r0[0], tables.qp_r0)
    np.testing.assert_array_equal(model.beam_qp_x0_prime[0], tables.qp_x0_prime)
    unmoved = kp.ModelBuilder()
    straight(unmoved)
    assert not np.allclose(unmoved.build().beam_qp_x0, model.beam_qp_x0)
    # the tip of the rotated beam: (0, 1, 0) + q (10, 0, 0)
    r = quaternion_to_matrix(q)
    np.testing.assert_allclose(x0[beam.tip, :3], [0.0, 1.0, 0.0] + 10.0 * r[:, 0], rtol=0.0, atol=1e-14)


def test_root_placement_equals_the_transforms() -> None:
    q = (math.cos(0.2), 0.0, math.sin(0.2), 0.0)
    a = kp.ModelBuilder()
    straight(a, root_position=(1, 2, 3), root_orientation=q, root_velocity=(0, 0, 0, 0, 0, 1.0))
    b = kp.ModelBuilder()
    beam = straight(b)
    b.translate_beam(beam, (1, 2, 3))
    b.rotate_beam_about_point(beam, q, (1, 2, 3))
    b.set_beam_velocity_about_point(beam, (0, 0, 0, 0, 0, 1.0), (1, 2, 3))
    ma, mb = a.build(), b.build()
    for name in ("x0", "initial_v", "beam_qp_x0", "beam_qp_r0", "beam_qp_m_star"):
        np.testing.assert_array_equal(getattr(ma, name), getattr(mb, name))


# ------------------------------------------------------------------------------ element counts
def test_kynema_beams_input_counts() -> None:
    """Kynema's ``BeamsInputTest``: elements of 3, 2, 4 nodes with 2, 2, 4 quadrature points:
    3 elements, 9 nodes, 8 points, at most 4 nodes and 4 points per element; gravity kept."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    s = [0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 0.33, 0.67, 1.0]
    ids = [b.add_node(position=(float(i), 0.0, 0.0)) for i in range(9)]
    rules = [
        [(-0.5, 0.5), (0.5, 0.5)],
        [(-1 / math.sqrt(3), 1.0), (1 / math.sqrt(3), 1.0)],
        [(-0.861136311594053, 0.347854845137454), (-0.339981043584856, 0.652145154862546),
         (0.339981043584856, 0.652145154862546), (0.861136311594053, 0.347854845137454)],
    ]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # element 1: 2 points for 3 nodes
        for nodes, rule in zip(([0, 1, 2], [3, 4], [5, 6, 7, 8]), rules, strict=True):
            b.add_beam_element([ids[k] for k in nodes], [s[k] for k in nodes], rule, [0, 1], [I6, I6], [I6, I6])
    model = b.build()
    assert model.n_beams == 3
    assert int(np.sum(model.beam_n_nodes)) == 9
    assert int(np.sum(model.beam_n_qps)) == 8
    assert model.beam_node.shape[1] == 4 and model.beam_qp_weight.shape[1] == 4
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])


def test_kynema_beams_element_tables() -> None:
    """Kynema's ``BeamsTest`` (test_beams.cpp): node x0 of a curved five-node element and its
    material-frame sectional matrices at the first point.  Its sections (an indefinite mass, a rank-one
    stiffness) are refused by ``add_beam_element``, so the set-up tables are checked directly."""
    x0 = np.array([
        [0.0, 0.0, 0.0, 0.9778215200524469, -0.01733607539094763, -0.09001900002195001, -0.18831121859148398],
        [0.863365823230057, -0.2558982639254171, 0.11304112106827427, 0.9950113028068008, -0.002883848832932071,
         -0.030192109815745303, -0.09504013471947484],
        [2.5, -0.25, 0.0, 0.9904718430204884, -0.009526411091536478, 0.09620741150793366, 0.09807604012323785],
        [4.1366341767699435, 0.39875540678256005, -0.5416125496397031, 0.9472312341234699, -0.04969214162931507,
         0.18127630174800594, 0.25965858850765167],
        [5.0, 1.0, -1.0, 0.9210746582719719, -0.07193653093139739, 0.20507529985516368, 0.32309554437664584],
    ])  # fmt: skip
    node_s = [0.0, 0.1726731646460114, 0.5, 0.82732683535398865, 1.0]
    c_star = np.outer(np.arange(1.0, 7.0), np.arange(1.0, 7.0))
    m_star = np.array([
        [2.0, 0, 0, 0, 0.6, -0.4], [0, 2, 0, -0.6, 0, 0.2], [0, 0, 2, 0.4, -0.2, 0],
        [0, -0.6, 0.4, 1, 2, 3], [0.6, 0, -0.2, 2, 4, 6], [-0.4, 0.2, 0, 3, 6, 9],
    ])  # fmt: skip
    quad = [
        (-0.9491079123427585, 0.1294849661688697), (-0.7415311855993943, 0.27970539148927664),
        (-0.40584515137739696, 0.3818300505051189), (6.123233995736766e-17, 0.4179591836734694),
        (0.4058451513773971, 0.3818300505051189), (0.7415311855993945, 0.27970539148927664),
        (0.9491079123427585, 0.1294849661688697),
    ]  # fmt: skip
    tables = element_tables(x0, node_s, np.array(quad), [0.0, 1.0], np.array([m_star] * 2), np.array([c_star] * 2))
    np.testing.assert_allclose(tables.qp_m_star[0], m_star, rtol=0.0, atol=1e-6)
    np.testing.assert_allclose(tables.qp_c_star[0], c_star, rtol=0.0, atol=1e-6)
    b = kp.ModelBuilder()
    ids = [b.add_node(position=row[:3], orientation=row[3:]) for row in x0]
    np.testing.assert_allclose(b.build().x0, x0, rtol=0.0, atol=1e-6)
    with pytest.raises(kp.ModelError, match=r"beam element 0: m_star\[0\].*not positive semi-definite"):
        b.add_beam_element(ids, node_s, quad, [0.0, 1.0], [m_star] * 2, [c_star] * 2)


# ------------------------------------------------------------------------------ bad input
GOOD = {"points": [[0, 0, 0], [1, 0, 0]], "section_s": [0.0, 1.0], "m_star": [I6, I6], "c_star": [I6, I6]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"points": [[0, 0, 0]]}, r"beam 'b' points: the reference axis needs at least two points, got 1"),
        ({"points": [[0, 0], [1, 0]]}, r"beam 'b' points: expected shape \(K, 3\)"),
        ({"points": [[0, 0, 0], [np.nan, 0, 0]]}, r"beam 'b' points: values must be finite"),
        ({"points": [[0, 0, 0], [0, 0, 0]]}, r"beam 'b' points: two consecutive reference-axis points coincide"),
        ({"point_s": [0.0, 0.0]}, r"beam 'b' point_s .*must be strictly increasing"),
        ({"point_s": [0.0, 0.5, 1.0]}, r"beam 'b' point_s: expected shape \(2,\)"),
        (
            {"section_s": [0.0, 0.7, 0.5, 1.0], "m_star": [I6] * 4, "c_star": [I6] * 4},
            r"beam 'b' section_s .*strictly increasing",
        ),
        ({"section_s": [0.1, 1.0]}, r"beam 'b' section_s: must start at 0 and end at 1"),
        ({"section_s": [0.0]}, r"beam 'b' section_s: needs at least two stations"),
        ({"m_star": [I6]}, r"beam 'b' m_star: expected shape \(2, 6, 6\)"),
        ({"c_star": [I6, np.full((6, 6), np.inf)]}, r"beam 'b' c_star: values must be finite"),
        ({"c_star": [I6, -I6]}, r"beam 'b': beam element 0: c_star\[1\] .*not positive definite"),
        ({"m_star": [I6, I6 + np.triu(np.ones((6, 6)), 1)]}, r"beam 'b': beam element 0: m_star\[1\] .*not symmetric"),
        ({"twist": [0.0, 0.1, 0.2]}, r"beam 'b' twist: 3 values but 2 section stations"),
        ({"twist": [0.0, 0.1], "twist_s": [0.0, 0.5, 1.0]}, r"beam 'b' twist: 2 values but twist_s has 3 stations"),
        ({"twist": [0.0, 0.1], "twist_s": [1.0, 0.0]}, r"beam 'b' twist_s .*strictly increasing"),
        ({"twist_s": [0.0, 1.0]}, r"beam 'b' twist_s: given without twist"),
        ({"twist": [0.0, np.inf]}, r"beam 'b' twist: values must be finite"),
        ({"order": 0}, r"beam 'b' order: must be an integer >= 1"),
        ({"n_elements": 1.5}, r"beam 'b' n_elements: must be an integer >= 1"),
        ({"section_refinement": -1}, r"beam 'b' section_refinement: must be an integer >= 0"),
        ({"quadrature": "trapezoid"}, r"beam 'b' quadrature: must be one of \('gll', 'gauss'\)"),
        ({"quadrature_style": "piecewise"}, r"beam 'b' quadrature_style: must be one of"),
        ({"mu": [0.1] * 5}, r"beam 'b' mu: expected 6 numbers"),
        ({"root_orientation": (1.0, 1.0, 0.0, 0.0)}, r"beam 'b' root_orientation: quaternion .* unit length"),
        ({"root_velocity": (0.0,) * 3}, r"beam 'b' root_velocity: expected 6 numbers"),
    ],
)  # fmt: skip
def test_bad_input_is_named(change, message) -> None:
    b = kp.ModelBuilder()
    kwargs = {**GOOD, "order": 1, **change}
    with pytest.raises(kp.ModelError, match=message):
        b.add_beam(**kwargs, name="b")
    assert not b._nodes and not b._beams  # nothing half-added


def test_bad_transform_arguments_are_named() -> None:
    b = kp.ModelBuilder()
    beam = straight(b)
    with pytest.raises(kp.ModelError, match=r"translate_beam: unknown beam element id 3"):
        b.translate_beam(3, (0, 0, 0))
    with pytest.raises(kp.ModelError, match=r"translate_beam: beam must be what add_beam returned"):
        b.translate_beam("blade", (0, 0, 0))
    with pytest.raises(kp.ModelError, match=r"rotate_beam_about_point quaternion: quaternion .* unit length"):
        b.rotate_beam_about_point(beam, (1, 1, 0, 0), (0, 0, 0))
    with pytest.raises(kp.ModelError, match=r"set_beam_velocity_about_point velocity: expected 6 numbers"):
        b.set_beam_velocity_about_point(beam, (0, 0, 1), (0, 0, 0))


def test_underintegrating_quadrature_warns() -> None:
    b = kp.ModelBuilder()
    with pytest.warns(UserWarning, match=r"1 quadrature points for 11 nodes"):
        b.add_beam(**GOOD, quadrature="gauss", section_refinement=0)  # one Gauss point between the two sections


def test_the_default_refinement_integrates_without_a_warning() -> None:
    b = kp.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        beam = b.add_beam(**GOOD, quadrature="gauss")  # refined until the element has a point per node
    assert b.build().beam_qp_weight.shape[1] >= len(beam.nodes)


# ------------------------------------------------------------------------------ model files
TOML = """
[model]
gravity = [0, 0, -9.81]

[[node]]
name = "hub"

[[beam]]
name = "blade"
points = [[0, 0, 0], [3, 0.2, 0], [10, 0, 0.5]]
section_s = [0, 0.4, 1]
m_star = [[1, 1, 1, 0.1, 0.1, 0.2], [0.8, 0.8, 0.8, 0.08, 0.08, 0.16], [0.5, 0.5, 0.5, 0.05, 0.05, 0.1]]
c_star = [
  [[1e6, 0, 0, 0, 0, 0], [0, 1e5, 0, 0, 0, 0], [0, 0, 1e5, 0, 0, 0],
   [0, 0, 0, 1e4, 100, 0], [0, 0, 0, 100, 1e4, 0], [0, 0, 0, 0, 0, 2e4]],
  [8e5, 8e4, 8e4, 8e3, 8e3, 1.6e4],
  [5e5, 5e4, 5e4, 5e3, 5e3, 1e4],
]
twist = [0.3, 0.1]
twist_s = [0, 1]
order = 5
n_elements = 2
quadrature = "gauss"
section_refinement = 5
mu = [1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4]
root_position = [1, 0, 0]
root_orientation = [0.9950041652780258, 0, 0, 0.09983341664682815]
root_velocity = [0, 0, 0, 0, 0, 0.5]

[[constraint]]
kind = "fixed_bc"
node = "hub"

[[constraint]]
kind = "rigid_joint"
base = "hub"
target = "blade.root"

[[load]]
node = "blade.tip"
force = [0, 0, 10]

[step]
h = 0.01
"""


def python_blade() -> tuple[kp.ModelBuilder, Beam]:
    b = kp.ModelBuilder(gravity=(0, 0, -9.81))
    hub = b.add_node()
    c0 = np.diag([1e6, 1e5, 1e5, 1e4, 1e4, 2e4])
    c0[3, 4] = c0[4, 3] = 100.0
    beam = b.add_beam(
        [[0, 0, 0], [3, 0.2, 0], [10, 0, 0.5]], [0, 0.4, 1],
        [np.diag([1, 1, 1, 0.1, 0.1, 0.2]), np.diag([0.8, 0.8, 0.8, 0.08, 0.08, 0.16]),
         np.diag([0.5, 0.5, 0.5, 0.05, 0.05, 0.1])],
        [c0, np.diag([8e5, 8e4, 8e4, 8e3, 8e3, 1.6e4]), np.diag([5e5, 5e4, 5e4, 5e3, 5e3, 1e4])],
        twist=[0.3, 0.1], twist_s=[0, 1], order=5, n_elements=2, quadrature="gauss", section_refinement=5,
        mu=[1e-4] * 6, root_position=(1, 0, 0), root_orientation=(0.9950041652780258, 0, 0, 0.09983341664682815),
        root_velocity=(0, 0, 0, 0, 0, 0.5), name="blade",
    )  # fmt: skip
    b.add_fixed_bc(hub)
    b.add_rigid_joint(hub, beam.root)
    return b, beam


def test_toml_beam_equals_the_python_one() -> None:
    mf = parse_model_file(TOML)
    b, beam = python_blade()
    expected = b.build()
    for name in expected._fields:
        a, e = getattr(mf.model, name), getattr(expected, name)
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(a, e, err_msg=name)
        else:
            assert a == e, name
    assert mf.beams["blade"] == beam
    assert mf.nodes["blade.0"] == beam.root and mf.nodes[f"blade.{len(beam.nodes) - 1}"] == beam.tip
    assert mf.loads[0].node == beam.tip
    assert "blade.root" not in mf.nodes  # aliases resolve references, not listed as nodes
    # the file's beam steps (without the root velocity, which the fixed hub contradicts)
    mf = parse_model_file(TOML.replace("root_velocity = [0, 0, 0, 0, 0, 0.5]\n", ""))
    sim = kp.Simulation(mf.model, mf.params)
    assert sim.step().converged


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("section_s = [0, 0.4, 1]", "section_s = [0, 0.4, 0.9]", r"line @: beam #1 'blade': section_s: must start"),
        ("twist = [0.3, 0.1]", "twist = [0.3, 0.1, 0.2]", r"line @: beam #1 'blade': twist: 3 values but twist_s"),
        ("order = 5", "order = 0", r"line @: beam #1 'blade': order: must be an integer >= 1"),
        ("order = 5", "order = 5.0", r"line @: beam #1 'blade': key 'order': expected an integer"),
        ("points = [[0, 0, 0], [3, 0.2, 0], [10, 0, 0.5]]", "points = [[0, 0, 0]]", r"line @: .*at least two points"),
        ('name = "blade"', 'name = "blade"\nwobble = 1', r"unknown key 'wobble'"),
        ('target = "blade.root"', 'target = "blade.middle"', r"names unknown node 'blade.middle'"),
        (
            "m_star = [[1, 1, 1, 0.1, 0.1, 0.2], ",
            "m_star = [[1, 1, 1, 0.1, 0.1], ",
            r"beam #1 'blade': key 'm_star': entry 0 must be 6×6",
        ),
    ],
)  # fmt: skip
def test_toml_beam_errors_name_the_entry(old, new, message) -> None:
    text = TOML.replace(old, new, 1)
    assert text != TOML
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith(new.split("\n")[0]))
    message = message.replace("@", str(line))
    with pytest.raises(ModelFileError, match=message):
        parse_model_file(text, "blade.toml")


def test_the_documented_beam_file_builds() -> None:
    """docs/model-file.md's [[beam]] example parses and steps."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "model-file.md").read_text(encoding="utf-8")
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    mf = parse_model_file(block + "\n[step]\nh = 0.01\n", "model-file.md")
    beam = mf.beams["blade"]
    assert len(beam.nodes) == 6 and mf.model.beam_n_qps[0] == 6
    np.testing.assert_allclose(mf.model.x0[beam.root, :3], [2.0, 0.0, 0.0])
    assert kp.Simulation(mf.model, mf.params).step().converged


def test_beam_overrides() -> None:
    from kynemapy.model.overrides import apply_overrides, dump_toml, read_toml

    data = read_toml(TOML)
    patched = apply_overrides(data, {"beam.blade.order": 3, "beam.blade.mu[2]": 0.0, "beam.#1.n_elements": 1})
    mf = parse_model_file(dump_toml(patched))
    assert len(mf.beams["blade"].nodes) == 4 and mf.model.beam_mu[0, 2] == 0.0
    with pytest.raises(kp.ModelError, match=r"beam.blade.order.*integer"):
        apply_overrides(data, {"beam.blade.order": 2.5})
    with pytest.raises(kp.ModelError, match=r"no beam 'rotor'"):
        apply_overrides(data, {"beam.rotor.order": 2})
