"""The IEA 15 MW blade (Kynema's model, ``tests/data/iea15_rotor_data.json``) at rest, clamped at
its root: the engine's frequencies against an independent linear beam model of the same data
(``kynemapy.validation.beam_fe``: 200 two-node Timoshenko elements, numpy/scipy only) and
against the IEA 15 MW reference turbine report's blade frequencies.

The report (Gaertner et al. 2020, NREL/TP-5000-75698, table 2-1, as quoted by the Ashes IEA
15 MW blade eigenfrequency benchmark, simis.io) gives 0.555 Hz first flapwise and 0.642 Hz
first edgewise.  Kynema's blade data give 0.5065 and 0.6935 Hz with the engine and 0.5066 and
0.6932 Hz with the independent model: the 9 % gaps (flap lower, edge higher) are in the data,
not in the solver, which the independent model reproduces to 2e-4 and 4e-4 — Kynema's section
properties are not those the report's frequencies were computed from (which blade revision or
structural model differs was not determined)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import kynemapy as kp
from kynemapy.analytic.beams import timoshenko_frequencies_first_order
from kynemapy.validation.beam_fe import clamped_beam_frequencies

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "iea15_rotor_data.json").read_text())
#: Gaertner et al. (2020) table 2-1: first flapwise and first edgewise blade frequencies [Hz]
REPORT_FLAP, REPORT_EDGE = 0.555, 0.642


def sections() -> tuple[list[float], list[np.ndarray], list[np.ndarray]]:
    s = DATA["material_sections"]
    return [x["s"] for x in s], [np.asarray(x["m_star"]) for x in s], [np.asarray(x["c_star"]) for x in s]


def test_the_independent_beam_model_against_a_closed_form() -> None:
    """A uniform straight cantilever (L = 2 m, EI = 3 N m², m = 1.5 kg/m, κGA = EA = 1e5 EI/L²,
    a quarter turn of twist in its nodes' orientations, which an isotropic section ignores):
    second order in the element length (1.2e-5, 3.1e-6 on the first mode at 100, 200 elements)
    against Euler–Bernoulli with the first-order shear correction (whose own error is
    (½ r EI/κGA)² ≈ 5e-10)."""
    length, ei, m = 2.0, 3.0, 1.5
    ga = 1e5 * ei / length**2
    xi = np.array([-1.0, 0.0, 1.0])
    angle = 0.25 * np.pi * (xi + 1.0) / 2.0
    coords = np.column_stack(
        [length * (xi + 1.0) / 2.0, 0 * xi, 0 * xi, np.cos(angle / 2), np.sin(angle / 2), 0 * xi, 0 * xi]
    )
    c = np.diag([ga, ga, ga, 2.0 * ei, ei, ei])
    mm = np.diag([m, m, m, 0.0, 0.0, 0.0])
    f = clamped_beam_frequencies(xi, coords, [0.0, 1.0], [mm, mm], [c, c], n_elements=200, n_modes=6)
    ref = timoshenko_frequencies_first_order(length, ei, ga, m, 3) / (2.0 * np.pi)
    np.testing.assert_allclose(f[0::2], ref, rtol=2e-4)
    np.testing.assert_allclose(f[1::2], ref, rtol=2e-4)  # both planes
    assert abs(f[0] / ref[0] - 1.0) < 1e-5


def iea15_blade() -> kp.Model:
    s, m_star, c_star = sections()
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    nodes = [b.add_node(position=c[:3], orientation=c[3:]) for c in DATA["node_coords"]]
    b.add_beam_element(nodes, [(x + 1.0) / 2.0 for x in DATA["node_xi"]], DATA["trapz_quadrature"], s, m_star, c_star)
    b.add_fixed_bc(nodes[0])
    return b.build()


def test_iea15_blade_frequencies_against_the_independent_model_and_the_report() -> None:
    m = kp.analysis.modes(iea15_blade(), n_modes=6)
    comp = m.linearization.dof_component
    flap = np.linalg.norm(m.shapes[comp == 2], axis=0)  # out of the rotor plane (z)
    edge = np.linalg.norm(m.shapes[comp == 1], axis=0)  # in the plane (y)
    assert flap[0] > 5 * edge[0] and edge[1] > 5 * flap[1]  # mode 1 flapwise, mode 2 edgewise
    s, m_star, c_star = sections()
    ref = clamped_beam_frequencies(DATA["node_xi"], DATA["node_coords"], s, m_star, c_star, n_modes=6)
    dev = m.frequency / ref - 1.0
    # measured 1.8e-4, 3.6e-4 (flap 1, edge 1), 1.2e-3, 1.7e-3, 2.1e-3 (flap 2, edge 2, flap 3),
    # 2.4e-4 (torsion): the engine's one element of order 10 integrating the sections with
    # the data's 51-point trapezoidal rule, against the reference's 200 elements with the
    # sections sampled at their midpoints (and its rotation-vector interpolation of the twist);
    # the reference itself is converged to 3e-5 (200 against 400 elements)
    assert np.all(np.abs(dev[:2]) < 5e-4), dev
    assert np.all(np.abs(dev) < 3e-3), dev
    # the report: 9 % apart, in the data (module docstring); the bound says how far
    assert abs(m.frequency[0] / REPORT_FLAP - 1.0) < 0.10 and abs(ref[0] / REPORT_FLAP - 1.0) < 0.10
    assert abs(m.frequency[1] / REPORT_EDGE - 1.0) < 0.10 and abs(ref[1] / REPORT_EDGE - 1.0) < 0.10


def test_iea15_rotor_in_multi_blade_coordinates() -> None:
    """Kynema's three-blade rotor (blades at 0°, 120°, 240° about z, roots on prescribed BCs at
    r = 3.97 m, no gravity) turning at 0.7906 rad/s (7.55 rpm): seen from the ground, each
    rotating-frame blade frequency f splits into a collective mode at f and whirls at f ± 1P
    (1P = Ω/2π = 0.1258 Hz), the blades being uncoupled through the driven hub."""
    import math

    s, m_star, c_star = sections()
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    blades = []
    for k in range(3):
        nodes = [b.add_node(position=c[:3], orientation=c[3:]) for c in DATA["node_coords"]]
        e = b.add_beam_element(
            nodes, [(x + 1.0) / 2.0 for x in DATA["node_xi"]], DATA["trapz_quadrature"], s, m_star, c_star
        )
        b.translate_beam(e, (3.97, 0.0, 0.0))
        half = math.pi * k / 3.0  # a turn of 2πk/3 about z
        b.rotate_beam_about_point(e, (math.cos(half), 0.0, 0.0, math.sin(half)), (0.0, 0.0, 0.0))
        b.add_prescribed_bc(nodes[0])
        blades.append(nodes)
    omega = 0.7906
    st = kp.analysis.steady_rotation(b.build(), (0.0, 0.0, omega))
    rm = kp.analysis.mbc_modes(st, blades, n_modes=12)
    one_p = omega / (2.0 * np.pi)
    # the rotating-frame frequencies, three blades each: flap 1, edge 1, flap 2, edge 2
    triples = rm.rotating_omega[:12].reshape(4, 3) / (2.0 * np.pi)
    # (measured 6e-9 apart, 3e-9 below: the round-off of the first-order eigenproblem of a blade
    # whose stiffness reaches 1e11)
    assert np.abs(triples / triples[:, :1] - 1.0).max() < 5e-8
    rotating = triples[:, 0]
    assert 0.52 < rotating[0] < 0.54 and 0.69 < rotating[1] < 0.71  # stiffened from 0.5065, 0.6935 Hz at rest
    shift = {"collective": 0.0, "forward": one_p, "backward": -one_p}
    for lab, f in zip(rm.labels(), rm.frequency, strict=True):
        target = rotating + shift[lab]
        assert np.min(np.abs(f / target - 1.0)) < 3e-8, (lab, f, target)
    assert rm.labels().count("collective") == 4
