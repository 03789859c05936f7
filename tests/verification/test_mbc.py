"""Fixed-frame modes of rotors by multi-blade coordinates (``kynemapy.analysis.mbc_modes``).

* N point masses m on flap hinges at radius e (hinge axis tangential), at distance l from the
  hinge, on a hub driven at Ω: in the rotating frame each blade flaps at ω_r² = Ω²(e + l)/l
  (centrifugal stiffness m Ω² (e + l) l over the inertia m l²).  Seen from the fixed frame (the
  Coleman transform) the collective mode stays at ω_r, the cyclic modes split to ω_r + Ω
  (forward whirl) and ``|ω_r − Ω|`` (backward); for four blades a differential mode stays at ω_r.
* Three uniform cantilevers on a hub turning at Ω (roots on prescribed BCs): the flapwise
  collective and cyclic frequencies against the rotating-cantilever reference
  (``kynemapy.analytic.beams.rotating_cantilever_frequencies``) ± Ω.
* An anisotropic rotor (one blade heavier) is refused: it needs Floquet analysis.
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.analytic.beams import rotating_cantilever_frequencies
from kynemapy.validation.beam_model import isotropic_section, straight_beam


def turn(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def hinged_rotor(n_blades: int, e: float, length: float, m: float, masses=None) -> tuple[kp.Model, list[list[int]]]:
    """Point masses (inertia 1e-12 m l²) on flap hinges about the tangent at radius e, hub driven."""
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    hub = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_prescribed_bc(hub)
    blades = []
    for k in range(n_blades):
        rot = turn(2.0 * np.pi * k / n_blades)
        mk = m if masses is None else masses[k]
        eps = 1e-12 * mk * length**2
        node = b.add_node(position=rot @ [e + length, 0.0, 0.0])
        b.add_mass(node, mass=mk, inertia=(eps, eps, eps))
        b.add_hinge_joint(hub, node, point=rot @ [e, 0.0, 0.0], axis=rot @ [0.0, 1.0, 0.0])
        blades.append([node])
    return b.build(), blades


@pytest.mark.parametrize("n_blades", [3, 4])
def test_hinged_blades_collective_and_whirl_frequencies(n_blades: int) -> None:
    e, length, m, omega = 0.3, 1.2, 2.0, 3.0
    model, blades = hinged_rotor(n_blades, e, length, m)
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, omega))
    w_r = omega * np.sqrt((e + length) / length)
    rotating = kp.analysis.modes(st)
    np.testing.assert_allclose(rotating.omega, w_r, rtol=1e-9)  # N blades, one frequency
    rm = kp.analysis.mbc_modes(st, blades)
    assert rm.n_blades == n_blades and rm.omega.size == n_blades
    labels = rm.labels()
    expected = [w_r - omega, w_r, w_r + omega] + ([w_r] if n_blades == 4 else [])
    np.testing.assert_allclose(rm.omega, sorted(expected), rtol=1e-9)
    assert labels[0] == "backward" and labels[-1] == "forward", labels
    # the rest: collective (and differential, for four blades: the same frequency, so any
    # combination of the two is a mode)
    assert set(labels[1:-1]) <= {"collective", "differential"}
    np.testing.assert_allclose(rm.damping_ratio, 0.0, atol=1e-9)
    np.testing.assert_allclose(rm.rotating_omega, w_r, rtol=1e-9)
    if n_blades == 4:
        return
    # the collective shape moves only the collective coordinate, a cyclic one only cos/sin
    r = rm.blade_basis.shape[1]
    assert r == 1
    col = rm.shapes[:, labels.index("collective")]
    np.testing.assert_allclose(np.abs(col[1:]), 0.0, atol=1e-9)
    fwd = rm.shapes[:, labels.index("forward")]
    assert abs(fwd[0]) < 1e-9 and abs(abs(fwd[2] / fwd[1]) - 1.0) < 1e-9  # a circular whirl: η_s = ∓i η_c


def cantilever_rotor(
    n_blades: int, length: float, ei: float, mass: float, hub: float, n_elements: int, order: int
) -> tuple[kp.Model, list[list[int]]]:
    """Uniform cantilevers (lag stiffness 2 EI, shear and axial stiff) on a held hub at radius ``hub``."""
    ga = 1e6 * ei / length**2
    m_star, c_star = isotropic_section(ga, ga, 1.0, ei, 2.0 * ei, m=mass, j=(0.0, 0.0, 0.0))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    blades = []
    for k in range(n_blades):
        rot = turn(2.0 * np.pi * k / n_blades)
        beam = straight_beam(
            b, length, m_star, c_star, n_elements=n_elements, order=order, origin=rot @ [hub, 0.0, 0.0],
            direction=rot[:, 0], acceleration=True,
        )  # fmt: skip
        b.add_prescribed_bc(beam.root)
        blades.append(beam.nodes)
    return b.build(), blades


def test_three_cantilevers_flap_collective_and_cyclic_against_the_reference() -> None:
    length, ei, mass, hub, omega = 1.0, 1.0, 1.0, 0.5, 6.0  # ΩL²√(m/EI) = 6
    model, blades = cantilever_rotor(3, length, ei, mass, hub, n_elements=2, order=6)
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, omega))
    rm = kp.analysis.mbc_modes(st, blades, n_modes=12)
    flap = rotating_cantilever_frequencies(length, ei, mass, omega, hub_radius=hub, n_modes=1)[0]
    labels = rm.labels()
    # the first flap mode: collective at ω_f, forward at ω_f + Ω, backward at ω_f − Ω; the
    # blade's own error against the reference is its shear and axial compliance (2.1e-5 at Ω = 6
    # in test_campbell; order 6, 2 elements: discretization below that)
    # (measured −9.3e-6); the first lag mode (EI_lag = 2 EI) at √(ω_l² − Ω²) ± Ω (−1.7e-5)
    lag_ref = rotating_cantilever_frequencies(length, 2.0 * ei, mass, omega, hub_radius=hub, n_modes=1)[0]
    lag = np.sqrt(lag_ref**2 - omega**2)
    for f, tol in ((flap, 5e-5), (lag, 3e-4)):
        for label, target in (("collective", f), ("forward", f + omega), ("backward", f - omega)):
            near = [w for lab, w in zip(labels, rm.omega, strict=True) if lab == label]
            assert min(abs(w / target - 1.0) for w in near) < tol, (label, near, target)
    # the transform is exact: each collective frequency is a rotating-frame one to round-off
    for w in rm.omega[np.array(labels) == "collective"]:
        assert np.min(np.abs(rm.rotating_omega / w - 1.0)) < 1e-8


def test_what_mbc_modes_refuses() -> None:
    e, length, m = 0.3, 1.2, 2.0
    model, blades = hinged_rotor(3, e, length, m, masses=[m, m, 1.01 * m])
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, 3.0))
    with pytest.raises(ValueError, match=r"not isotropic.*Floquet"):
        kp.analysis.mbc_modes(st, blades)
    model, blades = hinged_rotor(3, e, length, m)
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, 3.0))
    with pytest.raises(ValueError, match="at least 3 blades"):
        kp.analysis.mbc_modes(st, blades[:2])
    with pytest.raises(ValueError, match="blade 2 is not blade 1 turned by 120°"):
        kp.analysis.mbc_modes(st, blades[::-1])  # against the sense of rotation
    with pytest.raises(ValueError, match="not in a rotating frame"):
        kp.analysis.mbc_modes(kp.analysis.linearize(st.model), blades)


def three_cantilevers(ei_lag: float = 2.0):
    length, ei, mass, hub = 1.0, 1.0, 1.0, 0.5
    ga = 1e6 * ei / length**2
    m_star, c_star = isotropic_section(ga, ga, 1.0, ei, ei_lag * ei, m=mass, j=(0.0, 0.0, 0.0))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    blades = []
    for k in range(3):
        rot = turn(2.0 * np.pi * k / 3)
        beam = straight_beam(
            b, length, m_star, c_star, n_elements=2, order=6, origin=rot @ [hub, 0.0, 0.0], direction=rot[:, 0],
            acceleration=True,
        )  # fmt: skip
        b.add_prescribed_bc(beam.root)
        blades.append(beam.nodes)
    return b.build(), blades


def test_fixed_frame_campbell_diagram(tmp_path) -> None:
    """``campbell(..., blades=...)``: at each speed the tracked first-flap columns are the
    reference's ω_f(Ω) (collective) and ω_f(Ω) ± Ω (forward, backward whirl), labelled so."""
    model, blades = three_cantilevers()
    speeds = np.array([1.0, 3.0, 6.0])
    c = kp.analysis.campbell(model, speeds, axis=(0.0, 0.0, 1.0), n_modes=6, blades=blades)
    assert c.labels is not None and c.labels.shape == (3, 6)
    for i, speed in enumerate(speeds):
        flap = rotating_cantilever_frequencies(1.0, 1.0, 1.0, speed, hub_radius=0.5, n_modes=1)[0]
        expected = {"collective": flap, "forward": flap + speed, "backward": flap - speed}
        w = 2.0 * np.pi * c.frequency[i]
        for label, target in expected.items():
            near = [w[j] for j in range(6) if c.labels[i, j] == label]
            assert min(abs(x / target - 1.0) for x in near) < 5e-5, (speed, label, near, target)
    # each column keeps its kind (the whirls stay whirls of one sense)
    for j in range(6):
        assert len(set(c.labels[:, j])) == 1, c.labels[:, j]
    assert c.mac[1:].min() > 0.9
    rows = c.write_csv(tmp_path / "fixed.csv").read_text().splitlines()
    assert rows[0].endswith("mode6_kind") and rows[1].split(",")[-6:] == list(c.labels[0])


@pytest.mark.parametrize("omega", [0.0, 4.0])
def test_each_fixed_frame_mode_is_of_one_harmonic(omega: float) -> None:
    """The Coleman transform of an isotropic rotor decouples the harmonics: every mode is
    collective, cyclic or differential alone (its shape zero in the other groups' coordinates),
    also at Ω = 0 where the N modes of each rotating-frame mode share one frequency (a solver's
    vectors for the whole degenerate space mixed harmonics there, and tracked Campbell diagrams
    then jumped between modes); four flap-and-lag cantilevers, three of their modes a blade."""
    model, blades = cantilever_rotor(4, 1.0, 1.0, 1.0, 0.5, n_elements=1, order=4)
    axis = (0.0, 0.0, 1.0)
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, omega))
    rm = kp.analysis.mbc_modes(st, blades, axis=axis, n_modes=12)
    r = rm.blade_basis.shape[1]
    energy = np.abs(rm.shapes.reshape(4, r, -1)) ** 2
    groups = np.stack([energy[0].sum(0), energy[1:3].sum((0, 1)), energy[3].sum(0)])  # collective, cyclic, differential
    share = groups.max(axis=0) / groups.sum(axis=0)
    np.testing.assert_allclose(share, 1.0, rtol=0.0, atol=1e-12)
    # the frequencies: the rotating frame's, and those ± Ω for the cyclic modes
    rot_w = rm.rotating_omega
    for w, h in zip(rm.omega, groups.argmax(axis=0), strict=True):
        candidates = rot_w if h != 1 else np.concatenate([rot_w + omega, np.abs(rot_w - omega)])
        assert np.min(np.abs(candidates / w - 1.0)) < 1e-8
