"""Modes of a steadily rotating structure and Campbell diagrams (``kynemapy.analysis``).

* The rotating-cantilever reference (``kynemapy.analytic.beams.rotating_cantilever_frequencies``,
  Rayleigh–Ritz) against the published values of Wright et al. (1982) and the Southwell
  coefficient 1.1933.
* A uniform cantilever on a hub turning at Ω about z (root on a prescribed BC), in steady
  rotation (``steady_rotation``) and linearized in the rotating frame: its flapwise frequencies
  against that reference, its in-plane (lead-lag) ones against √(ω_flap² − Ω²) (an axially rigid
  beam), no damping (the gyroscopic system is conservative).  What is left is the beam's shear
  and axial compliance (κGA = EA = 1e6 EI/L²: −2e-6 to −5e-5, the cantilever of test_modes).
* The steady state is one of the engine's dynamics: a simulation started there with the root
  driven at Ω keeps the deformed shape in the rotating frame.
* A free axisymmetric body spinning about its axis: the rotating-frame modes hold the body-frame
  nutation frequency (J₃ − J₁)Ω/J₁.
* ``campbell``: a blade twice as stiff in lag as in flap, whose first flap frequency rises
  through its first lag frequency: MAC tracking keeps each column one mode through the crossing.
* A clamp by a fixed BC is eliminated (the null space selects DOFs), with the SVD's modes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

import kynemapy as kp
from kynemapy.analytic.beams import rotating_cantilever_frequencies
from kynemapy.validation.beam_model import isotropic_section, straight_beam

LENGTH, EI, MASS = 1.0, 1.0, 1.0
GAMMA = 1e6  # κGA = EA = GAMMA · EI/L²
HUB = 0.5  # root radius [m]


def blade(ei_lag: float = EI, hub: float = HUB, order: int = 8, n_elements: int = 4, gamma: float = GAMMA):
    """A uniform cantilever along x from r = hub, flap (bending in z) stiffness EI, lag (in y)
    ``ei_lag``, κGA = EA = gamma EI/L², root on a prescribed BC; no gravity."""
    ga = gamma * EI / LENGTH**2
    m_star, c_star = isotropic_section(ga, ga, 1.0, EI, ei_lag, m=MASS, j=(0.0, 0.0, 0.0))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(
        b, LENGTH, m_star, c_star, n_elements=n_elements, order=order, origin=(hub, 0.0, 0.0), acceleration=True
    )
    bc = b.add_prescribed_bc(beam.root)
    return b.build(), beam, bc


def flap_and_lag(m: kp.analysis.Modes) -> tuple[np.ndarray, np.ndarray]:
    """The modes' circular frequencies split into flap (z displacement dominant) and lag (y)."""
    comp = m.linearization.dof_component
    z = np.linalg.norm(m.shapes[comp == 2], axis=0)
    y = np.linalg.norm(m.shapes[comp == 1], axis=0)
    return m.omega[z > y], m.omega[y >= z]


def test_rotating_cantilever_reference_against_published_values() -> None:
    # Wright, Smith, Thresher, Wang (1982), J. Appl. Mech. 49: first flap frequency ω/√(EI/mL⁴)
    # of a uniform cantilever (no hub) at ΩL²√(m/EI) = 1, 2, 3, 4, 12
    published = {1.0: 3.6816, 2.0: 4.1373, 3.0: 4.7973, 4.0: 5.5850, 12.0: 13.1702}
    for speed, w in published.items():
        assert abs(rotating_cantilever_frequencies(1.0, 1.0, 1.0, speed, n_modes=1)[0] - w) < 1e-4
    # the Southwell coefficient: ω₁² ≈ ω₀² + 1.1933 Ω² for small Ω
    w0, w1 = (rotating_cantilever_frequencies(1.0, 1.0, 1.0, s, n_modes=1)[0] for s in (0.0, 1e-3))
    assert abs((w1**2 - w0**2) / 1e-6 - 1.1933) < 1e-4
    # Ritz convergence: 48 terms against the default 64
    a = rotating_cantilever_frequencies(1.0, 1.0, 1.0, 12.0, hub_radius=0.5)
    b = rotating_cantilever_frequencies(1.0, 1.0, 1.0, 12.0, hub_radius=0.5, n_terms=48)
    np.testing.assert_allclose(a, b, rtol=1e-7)  # measured 5.6e-8 on the third


def test_rotating_cantilever_flap_and_lag_frequencies() -> None:
    model, _, _ = blade()
    previous = model
    rise = []
    for speed in (0.0, 3.0, 6.0, 12.0):  # ΩL²√(m/EI)
        st = kp.analysis.steady_rotation(previous, (0.0, 0.0, speed))
        previous = st
        assert st.residual_norm < 1e-8 and st.constraint_violation < 1e-12
        m = kp.analysis.modes(st, n_modes=6)
        lin = m.linearization
        np.testing.assert_array_equal(lin.frame_rate, [0.0, 0.0, speed])
        assert np.abs(m.damping_ratio).max() < 1e-10  # gyroscopic, undamped: conservative
        flap, lag = flap_and_lag(m)
        ref = rotating_cantilever_frequencies(LENGTH, EI, MASS, speed, hub_radius=HUB, n_modes=3)
        dev = flap[:3] / ref - 1.0
        # measured −2.3e-6, −1.6e-5, −3.9e-5 at rest (the shear of test_modes) to −2.7e-5,
        # −3.2e-5, −6.5e-5 at 12 (shear and axial compliance under tension; with κGA = EA =
        # 1e8 EI/L² all within 1e-6, the round-off of that stiffer beam)
        assert np.all(np.abs(dev) < [5e-5, 1e-4, 2e-4]), (speed, dev)
        lag_ref = np.sqrt(ref**2 - speed**2)
        dev_lag = lag[:3] / lag_ref - 1.0
        # the lag modes stretch the beam (Coriolis): axial compliance adds about (ΩL)² m/EA
        assert np.all(np.abs(dev_lag) < 3e-4), (speed, dev_lag)
        rise.append((flap[0], ref[0]))
    # the centrifugal stiffening ω² − ω₀² against the reference's: measured 1.2e-5, 2.1e-5, 5.6e-5
    # low (the compliance of the stretched beam) at 3, 6 and 12
    (w0, r0), *rest = rise
    gain = [(w**2 - w0**2) / (r**2 - r0**2) - 1.0 for w, r in rest]
    assert np.all(np.abs(gain) < 1.2e-4), gain
    # what is left is the compliance: ten times stiffer in shear and tension, ten times closer
    # (measured ratios 0.0998 flap, 0.1000 lag at Ω = 12)
    st = kp.analysis.steady_rotation(blade(gamma=10.0 * GAMMA)[0], (0.0, 0.0, 12.0))
    flap10, lag10 = flap_and_lag(kp.analysis.modes(st, n_modes=6))
    ref = rotating_cantilever_frequencies(LENGTH, EI, MASS, 12.0, hub_radius=HUB, n_modes=3)
    ratio_flap = (flap10[:3] / ref - 1.0) / dev
    ratio_lag = (lag10[:3] / np.sqrt(ref**2 - 144.0) - 1.0) / dev_lag
    np.testing.assert_allclose(ratio_flap, 0.1, rtol=0.05)
    np.testing.assert_allclose(ratio_lag, 0.1, rtol=0.05)


def test_steady_rotation_stays_steady_in_a_simulation() -> None:
    """A run started at the steady state, the root driven at Ω, for 1 s (0.64 turn; the first
    flap period is 1.1 s): in the rotating frame the tip stays where it was radially and out of
    plane (measured 1e-9 m against a centrifugal stretch of 9.3e-6 m); along the rotation it lags
    by the integrator's phase error, 4.3e-5 m at h = 5 ms, 1.1e-5 m at 2.5 ms: second order in h."""
    model, beam, bc = blade(order=6, n_elements=2)
    omega = 4.0
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, omega))
    x0 = np.asarray(model.x0)[beam.tip, :3]
    tip0 = st.state.q[beam.tip, :3] + x0
    stretch = np.linalg.norm(tip0 - x0)  # the centrifugal stretch
    assert stretch > 1e-6
    lag = []
    for h in (0.005, 0.0025):
        sim = kp.Simulation(model, kp.StepParameters(h=h, rho_inf=0.9, max_iter=10))
        sim.restore_state(st.state)
        ci = sim.inputs.constraint_input
        for i in range(round(1.0 / h)):
            psi = omega * h * (i + 1)
            u = (HUB * math.cos(psi) - HUB, HUB * math.sin(psi), 0.0)
            ci[bc] = (*u, math.cos(psi / 2), 0.0, 0.0, math.sin(psi / 2))
            sim.step()
        c, s = math.cos(psi), math.sin(psi)
        back = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # world → rotating frame
        tip = back @ (sim.state.q[beam.tip, :3] + x0)
        assert abs(tip[0] - tip0[0]) < 1e-3 * stretch and abs(tip[2] - tip0[2]) < 1e-3 * stretch
        lag.append(abs(tip[1] - tip0[1]))
    assert lag[0] < 1e-4 and 3.5 < lag[0] / lag[1] < 4.5


def test_free_axisymmetric_body_nutation_in_the_body_frame() -> None:
    j1, j3, omega = 2.0, 3.0, 5.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(body, mass=1.5, inertia=(j1, j1, j3))
    st = kp.analysis.steady_rotation(b.build(), (0.0, 0.0, omega))
    assert st.residual_norm < 1e-12
    np.testing.assert_allclose(st.state.v[body], [0.0, 0.0, 0.0, 0.0, 0.0, omega])
    m = kp.analysis.modes(st)
    freqs = np.sort(m.omega)
    nutation = (j3 - j1) / j1 * omega
    assert np.min(np.abs(freqs - nutation)) < 1e-10 * omega
    # the rest: Ω (a tilt fixed in space; in-plane translation, a double root: round-off 2e-8
    # relative) and zero (along the axis)
    others = np.abs(np.delete(freqs, np.argmin(np.abs(freqs - nutation))))
    assert np.all((np.abs(others - omega) < 1e-6 * omega) | (others < 1e-6 * omega))


def test_gravity_across_the_axis_has_no_steady_rotation() -> None:
    b = kp.ModelBuilder(gravity=(0.0, -9.81, 0.0))
    body = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(body, mass=1.0, inertia=(1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="across the rotation axis"):
        kp.analysis.steady_rotation(b.build(), (0.0, 0.0, 1.0))


def test_campbell_tracks_flap_through_a_lag_crossing(tmp_path) -> None:
    ei_lag = 2.0  # lag twice as stiff: ω_lag,0 = √2 ω_flap,0; flap overtakes lag near ΩL²√(m/EI) = 2.5
    model, _, _ = blade(ei_lag=ei_lag, order=6, n_elements=3)
    speeds = np.linspace(0.0, 6.0, 7)
    c = kp.analysis.campbell(model, speeds, axis=(0.0, 0.0, 2.0), n_modes=2)
    np.testing.assert_array_equal(c.axis, [0.0, 0.0, 1.0])
    w = 2.0 * np.pi * c.frequency
    flap_ref = np.array([rotating_cantilever_frequencies(LENGTH, EI, MASS, s, HUB, 1)[0] for s in speeds])
    lag_ref = np.array(
        [math.sqrt(rotating_cantilever_frequencies(LENGTH, ei_lag, MASS, s, HUB, 1)[0] ** 2 - s**2) for s in speeds]
    )
    # column 0: the flap mode at every speed, column 1 the lag mode, though they cross
    np.testing.assert_allclose(w[:, 0], flap_ref, rtol=3e-5)
    np.testing.assert_allclose(w[:, 1], lag_ref, rtol=3e-4)
    assert w[0, 0] < w[0, 1] and w[-1, 0] > w[-1, 1]  # a crossing
    for i, m in enumerate(c.modes):
        shapes = m.shapes[:, c.index[i]]
        comp = m.linearization.dof_component
        z = np.linalg.norm(shapes[comp == 2], axis=0)
        y = np.linalg.norm(shapes[comp == 1], axis=0)
        assert z[0] > 100 * y[0] and y[1] > 100 * z[1]
        assert sorted(m.omega[:2]) == sorted(m.omega[c.index[i]])
    assert c.mac[1:].min() > 0.99
    path = c.write_csv(tmp_path / "campbell.csv")
    rows = path.read_text().splitlines()
    assert rows[0].startswith("speed_rpm,speed_rad_s,mode1_hz,mode2_hz,mode1_zeta")
    assert len(rows) == 1 + speeds.size
    np.testing.assert_allclose(float(rows[3].split(",")[1]), speeds[2])
    pytest.importorskip("matplotlib")
    png = c.plot(tmp_path / "campbell.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_fixed_bc_clamp_is_eliminated() -> None:
    ga = GAMMA * EI / LENGTH**2
    m_star, c_star = isotropic_section(ga, ga, 1.0, EI, EI, m=MASS, j=(1e-3, 1e-3, 1e-3))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    beam = straight_beam(b, LENGTH, m_star, c_star, n_elements=2, order=6, acceleration=True)
    b.add_fixed_bc(beam.root)
    lin = kp.analysis.linearize(b.build())
    n = lin.null_space
    assert n.shape == (lin.n_dofs, lin.n_dofs - 6)
    assert set(np.unique(n)) == {0.0, 1.0} and np.all(n.sum(axis=0) == 1.0)
    np.testing.assert_array_equal(lin.B @ n, 0.0)
    # the same frequencies as the SVD's basis
    svd = scipy.linalg.null_space(lin.B.toarray())
    k_r, m_r = (svd.T @ (a @ svd) for a in (lin.K.toarray(), lin.M.toarray()))
    w_svd = np.sqrt(scipy.linalg.eigh(0.5 * (k_r + k_r.T), 0.5 * (m_r + m_r.T), eigvals_only=True)[:6])
    np.testing.assert_allclose(kp.analysis.modes(lin, n_modes=6).omega, w_svd, rtol=2e-8)  # round-off: 3e-9 measured


def test_dense_and_sparse_workspaces_linearize_alike() -> None:
    model, _, _ = blade(order=6, n_elements=2)
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, 3.0))
    dense, sparse = (kp.analysis.linearize(st, solver=s) for s in ("dense", "sparse"))
    for name in ("M", "C", "K", "B"):
        a, b = getattr(dense, name).toarray(), getattr(sparse, name).toarray()
        np.testing.assert_allclose(a, b, rtol=0.0, atol=1e-12 * np.abs(a).max())
    np.testing.assert_allclose(
        kp.analysis.modes(dense, n_modes=4).omega, kp.analysis.modes(sparse, n_modes=4).omega, rtol=1e-10
    )
    with pytest.raises(ValueError, match="solver"):
        kp.analysis.linearize(model, solver="banded")


def iea15_blade(gravity: tuple[float, float, float]) -> kp.Model:
    """One blade of Kynema's IEA 15 MW rotor (bench/kynema.py), root at r = 3.97 m on a fixed BC."""
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).resolve().parents[1] / "data" / "iea15_rotor_data.json").read_text())
    sections = data["material_sections"]
    b = kp.ModelBuilder(gravity=gravity)
    nodes = [b.add_node(position=c[:3], orientation=c[3:], acceleration=(0.0,) * 6) for c in data["node_coords"]]
    e = b.add_beam_element(
        nodes,
        [(xi + 1.0) / 2.0 for xi in data["node_xi"]],
        data["trapz_quadrature"],
        [s["s"] for s in sections],
        [np.asarray(s["m_star"]) for s in sections],
        [np.asarray(s["c_star"]) for s in sections],
    )
    b.translate_beam(e, (3.97, 0.0, 0.0))
    b.add_fixed_bc(nodes[0])
    return b.build()


def test_iea15_blade_sags_under_gravity_alike_by_statics_and_steady_rotation() -> None:
    """The blade's stiffness reaches 1e11 and B's entries are 1: unscaled, the static Newton step
    saw rcond 1e-20 and fell back to least squares, diverging from the first load increment."""
    model = iea15_blade((0.0, 0.0, -9.81))
    eq = kp.analysis.static_equilibrium(model, load_steps=2)
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, 0.0))
    sag = eq.q[:, 2].min()
    assert -5.0 < sag < -0.5  # metres, a 117 m blade under its own weight
    np.testing.assert_allclose(st.state.q[:, :3], eq.q[:, :3], atol=1e-8 * abs(sag))
    m = kp.analysis.modes(eq, n_modes=2)  # about the sagged equilibrium: no warning
    assert 0.4 < m.frequency[0] < 0.8
