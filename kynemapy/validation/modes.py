"""Modes case: natural frequencies from ``kynemapy.analysis`` against closed forms.

Pendulum, double pendulum, cantilever (with and without a tip mass), rotating cantilever,
sleeping heavy top, a three-blade rotor in multi-blade coordinates, and the generalized-α
scheme's own numerical damping and period error at a mode's ωh.
"""

from __future__ import annotations

import math
import time

import numpy as np

from kynemapy.validation.common import CaseResult, Table, check

G = 9.81

DESCRIPTION = """\
Every frequency here is an eigenvalue of the engine's own linearization (``kynemapy.analysis``:
``static_equilibrium`` or ``steady_rotation``, ``linearize``, ``modes``, ``mbc_modes``), compared
with a closed form; no time integration enters, so what is measured is the linearization and
the spatial discretization.

* **Pendulum**: a body (m = 2 kg, I_cm = 0.05 kg m²) on a hinge d = 0.7 m above its centre of
  mass: ω² = m g d/(I_cm + m d²).
* **Double pendulum**: two point masses (m = 1.5 kg, inertia 1e-12 m l²) on hinges, links
  l = 0.8 m: ω² = (g/l)(2 ∓ √2), link-angle ratios θ₂/θ₁ = ±√2.
* **Cantilever** (L = 1 m, EI = 1 N m², m = 1 kg/m, 4 elements of order 8): with κGA = EA =
  1e6 EI/L² against Euler–Bernoulli with the first-order shear correction (as the
  beam_frequencies case, here through ``kynemapy.analysis.modes``); with a point mass M = μ m L
  at the tip (μ = 0.5, 1) against the roots of 1 + cos βL cosh βL + μ βL (cos βL sinh βL −
  sin βL cosh βL) = 0 (Euler–Bernoulli): with κGA = EA = 1e7 EI/L² the frequencies sit below by
  the shear compliance (1.6e-7, 1.4e-6, 3.6e-6 for modes 1–3), and ten times more at 1e6 EI/L²:
  the deviation scales as 1/κGA, so it is the shear and not the discretization.  (Stiffer
  still, 1e8 EI/L², the eigensolver's round-off ε ω_max²/ω_1² ≈ 1e-6 takes over.)
* **Rotating cantilever** (root at R = 0.5 L on a hub turning at Ω, κGA = EA = 1e7 EI/L²):
  flapwise frequencies against the Rayleigh–Ritz solution of the rotating Euler–Bernoulli beam
  (``kynemapy.analytic.beams.rotating_cantilever_frequencies``, 64 terms) at ΩL²√(m/EI) = 0, 3,
  6, 12; what is left is the beam's shear and axial compliance (about 3e-6 to 7e-6).
* **Sleeping heavy top** (m = 1.5 kg, centre of mass l = 0.4 m above the pivot, I₁ = 0.03,
  I₃ = 0.05 kg m² about the centre of mass, spin ω₃ = 60 rad/s about the vertical): the small tilt z = θ_x + iθ_y
  obeys I₁′z̈ − iI₃ω₃ż − m g l z = 0 (I₁′ = I₁ + m l² about the pivot), so precession and
  nutation are λ = (I₃ω₃ ∓ √(I₃²ω₃² − 4I₁′m g l))/(2I₁′).  The top spinning about the vertical is
  a steady rotation (gravity along the axis): its rotating-frame modes are ``|λ − ω₃|``, and
  linearized about the same state in the inertial frame, λ itself.
* **Three-blade rotor**: point masses on flap hinges at e = 0.3 m, l = 1.2 m outboard, hub driven
  at Ω = 3 rad/s: each blade flaps at ω_r² = Ω²(e + l)/l in the rotating frame; in multi-blade
  coordinates (fixed frame) the collective mode stays at ω_r, the cyclic ones are ω_r ± Ω.
* **Scheme**: the generalized-α scheme's spectral radius and relative period error for a linear
  oscillator at ωh (``kynemapy.analysis.scheme_error``, from the amplification matrix of the
  scheme's recurrences) against the closed form of the trapezoidal rule (ρ∞ = 1: ρ = 1,
  ω̄h = 2 arctan(ωh/2)) and ρ∞ itself as ωh → ∞; and against the engine: a mass on a spring
  stepped by ``Simulation`` over many periods, its amplitude ratio per step and period.
"""


def _pendulum() -> tuple[float, float]:
    import kynemapy as kp

    m, d, i_cm = 2.0, 0.7, 0.05
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = b.add_node(position=(0.0, 0.0, -d))
    b.add_mass(body, mass=m, inertia=(i_cm, i_cm, i_cm))
    b.add_hinge_joint(kp.GROUND, body, point=(0, 0, 0), axis=(0, 1, 0))
    w = kp.analysis.modes(kp.analysis.static_equilibrium(b.build())).omega[0]
    return float(w), math.sqrt(m * G * d / (i_cm + m * d * d))


def _double_pendulum() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import kynemapy as kp

    m, length = 1.5, 0.8
    eps = 1e-12 * m * length**2
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    one = b.add_node(position=(0.0, 0.0, -length))
    two = b.add_node(position=(0.0, 0.0, -2.0 * length))
    for node in (one, two):
        b.add_mass(node, mass=m, inertia=(eps, eps, eps))
    b.add_hinge_joint(kp.GROUND, one, point=(0, 0, 0), axis=(0, 1, 0))
    b.add_hinge_joint(one, two, point=(0, 0, -length), axis=(0, 1, 0))
    modes = kp.analysis.modes(kp.analysis.static_equilibrium(b.build()))
    ratio = np.array([modes.node_shape(k, two)[4] / modes.node_shape(k, one)[4] for k in range(2)])
    exact = np.sqrt(G / length * np.array([2.0 - math.sqrt(2.0), 2.0 + math.sqrt(2.0)]))
    return modes.omega, exact, ratio


def _cantilever(gamma: float, tip_mass: float = 0.0, hub: float | None = None):
    import kynemapy as kp
    from kynemapy.validation.beam_model import isotropic_section, straight_beam

    ga = gamma
    m_star, c_star = isotropic_section(ga, ga, 1.0, 1.0, 1.0, m=1.0, j=(0.0, 0.0, 0.0))
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    origin = (0.0, 0.0, 0.0) if hub is None else (hub, 0.0, 0.0)
    beam = straight_beam(b, 1.0, m_star, c_star, n_elements=4, order=8, origin=origin, acceleration=True)
    if tip_mass > 0.0:
        eps = 1e-12 * tip_mass
        b.add_mass(beam.tip, mass=tip_mass, inertia=(eps, eps, eps))
    if hub is None:
        b.add_fixed_bc(beam.root)
    else:
        b.add_prescribed_bc(beam.root)
    return b.build()


def _bending(modes, n: int) -> np.ndarray:
    """The first n bending frequencies in z (out-of-plane shapes), ω [rad/s]."""
    comp = modes.linearization.dof_component
    z = np.linalg.norm(modes.shapes[comp == 2], axis=0)
    y = np.linalg.norm(modes.shapes[comp == 1], axis=0)
    return modes.omega[z > y][:n]


def _top() -> tuple[np.ndarray, np.ndarray]:
    import kynemapy as kp

    m, l, i1, i3, w3 = 1.5, 0.4, 0.03, 0.05, 60.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    top = b.add_node(position=(0.0, 0.0, l))
    b.add_mass(top, mass=m, inertia=(i1, i1, i3))
    b.add_spherical_joint(top, point=(0.0, 0.0, 0.0))
    model = b.build()
    st = kp.analysis.steady_rotation(model, (0.0, 0.0, w3))
    i1p = i1 + m * l * l
    disc = math.sqrt((i3 * w3) ** 2 - 4.0 * i1p * m * G * l)
    lam = np.array([(i3 * w3 - disc) / (2.0 * i1p), (i3 * w3 + disc) / (2.0 * i1p)])
    w = kp.analysis.modes(st).omega
    w = w[w > 1e-3 * w3]  # the spin angle's zero mode left out
    inertial = kp.analysis.modes(kp.analysis.linearize(model, state=st.state, inputs=st.inputs)).omega
    inertial = inertial[inertial > 1e-3 * w3]
    return np.concatenate([np.sort(w), np.sort(inertial)]), np.concatenate([np.sort(np.abs(lam - w3)), lam])


def _rotor() -> tuple[list[str], np.ndarray, dict[str, float]]:
    import kynemapy as kp
    from kynemapy.analysis import mbc_modes

    e, length, m, omega = 0.3, 1.2, 2.0, 3.0
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    hub = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_prescribed_bc(hub)
    blades = []
    for k in range(3):
        a = 2.0 * math.pi * k / 3.0
        rot = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
        eps = 1e-12 * m * length**2
        node = b.add_node(position=rot @ [e + length, 0.0, 0.0])
        b.add_mass(node, mass=m, inertia=(eps, eps, eps))
        b.add_hinge_joint(hub, node, point=rot @ [e, 0.0, 0.0], axis=rot @ [0.0, 1.0, 0.0])
        blades.append([node])
    st = kp.analysis.steady_rotation(b.build(), (0.0, 0.0, omega))
    rm = mbc_modes(st, blades)
    w_r = omega * math.sqrt((e + length) / length)
    return rm.labels(), rm.omega, {"backward": w_r - omega, "collective": w_r, "forward": w_r + omega}


def _scheme_run(rho_inf: float, omega_h: float) -> float:
    """Largest deviation of a mass on a linear spring stepped by the engine from x_{n+1} = A x_n
    (x = (q, hv, h²a)) over four periods, relative to the amplitude."""
    import kynemapy as kp
    from kynemapy.analysis import amplification_matrix

    k, m = 400.0, 2.0
    omega = math.sqrt(k / m)
    h = omega_h / omega
    b = kp.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    anchor = b.add_node(position=(0.0, 0.0, 0.0))
    body = b.add_node(position=(1.0, 0.0, 0.0), displacement=(0.01, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    b.add_mass(body, mass=m, inertia=(0.1, 0.1, 0.1))
    b.add_spring(anchor, body, stiffness=k, undeformed_length=1.0)
    b.add_fixed_bc_3dof(anchor)
    params = kp.StepParameters(h=h, rho_inf=rho_inf, geometric_stiffness=True, atol=1e-12, rtol=1e-12)
    sim = kp.Simulation(b.build(), params)
    a_mat = amplification_matrix(omega_h, rho_inf)
    rows = []
    for _ in range(4 * round(2.0 * math.pi / omega_h) + 1):
        s = sim.state
        rows.append([s.q[body, 0], h * s.v[body, 0], h * h * s.a[body, 0]])
        sim.step()
    x = np.array(rows)
    return float(np.abs(x[1:] - x[:-1] @ a_mat.T).max() / 0.01)


def run(quick: bool = False) -> CaseResult:
    """Every closed form above; ``quick`` sweeps fewer rotor speeds."""
    import kynemapy as kp
    from kynemapy.analytic.beams import (
        cantilever_tip_mass_beta_l,
        rotating_cantilever_frequencies,
        timoshenko_frequencies_first_order,
    )

    start = time.perf_counter()
    result = CaseResult(
        name="modes",
        title="Modes: linearization and eigenvalues against closed forms",
        seed="closed forms",
        description=DESCRIPTION,
        quick=quick,
    )
    rows = []
    w, exact = _pendulum()
    rows.append(["pendulum", 1, w, exact, w / exact - 1.0])
    result.checks.append(check("pendulum: ω against √(m g d/I_pivot), relative", abs(w / exact - 1.0), 1e-10))
    w2, exact2, ratio = _double_pendulum()
    for k in range(2):
        rows.append(["double pendulum", k + 1, w2[k], exact2[k], w2[k] / exact2[k] - 1.0])
    result.checks.append(
        check("double pendulum: ω against (g/l)(2 ∓ √2), relative", float(np.abs(w2 / exact2 - 1.0).max()), 1e-8)
    )
    result.checks.append(
        check(
            "double pendulum: θ₂/θ₁ against ±√2, relative",
            float(np.abs(ratio / np.array([math.sqrt(2.0), -math.sqrt(2.0)]) - 1.0).max()),
            1e-8,
        )
    )
    # cantilever, no tip mass: EB with the first-order shear correction (κGA = 1e6 EI/L²)
    m = kp.analysis.modes(_cantilever(1e6), n_modes=12)
    wc = _bending(m, 3)
    ref = timoshenko_frequencies_first_order(1.0, 1.0, 1e6, 1.0, 3)
    for k in range(3):
        rows.append(["cantilever (EB + shear)", k + 1, wc[k], ref[k], wc[k] / ref[k] - 1.0])
    result.checks.append(
        check("cantilever: ω against EB + first-order shear, relative", float(np.abs(wc / ref - 1.0).max()), 1e-8)
    )
    for mu in (1.0,) if quick else (0.5, 1.0):
        ref = cantilever_tip_mass_beta_l(mu, 3) ** 2
        dev = {}
        # the shear scaling between 1e5 and 1e6 EI/L²: at 1e7 the first mode's shear deviation
        # (1.6e-7) is within a few times the eigen-solve's round-off there (5e-8, which changed
        # with the number of BLAS threads), too close to measure a ratio on
        for gamma in (1e5, 1e6, 1e7):
            wt = _bending(kp.analysis.modes(_cantilever(gamma, tip_mass=mu), n_modes=12), 3)
            dev[gamma] = wt / ref - 1.0
        for k in range(3):
            rows.append(
                [
                    f"cantilever, tip mass μ = {mu:g}, κGA = 1e7 EI/L²",
                    k + 1,
                    ref[k] * (1 + dev[1e7][k]),
                    ref[k],
                    dev[1e7][k],
                ]
            )
        result.checks.append(
            check(
                f"cantilever with tip mass μ = {mu:g}, κGA = 1e7 EI/L²: ω against the closed form, relative",
                float(np.abs(dev[1e7]).max()),
                5e-6,
            )
        )
        result.checks.append(
            check(
                f"cantilever with tip mass μ = {mu:g}: the deviation is shear (× 1/κGA from 1e6 to 1e5 EI/L²)",
                float(np.abs(dev[1e5] / dev[1e6] / 10.0 - 1.0).max()),
                0.01,
            )
        )
    # rotating cantilever
    model = _cantilever(1e7, hub=0.5)
    previous = model
    worst = 0.0
    for speed in (0.0, 12.0) if quick else (0.0, 3.0, 6.0, 12.0):
        st = kp.analysis.steady_rotation(previous, (0.0, 0.0, speed))
        previous = st
        wf = _bending(kp.analysis.modes(st, n_modes=8), 3)
        ref = rotating_cantilever_frequencies(1.0, 1.0, 1.0, speed, hub_radius=0.5, n_modes=3)
        for k in range(3):
            rows.append([f"rotating cantilever, ΩL²√(m/EI) = {speed:g}", k + 1, wf[k], ref[k], wf[k] / ref[k] - 1.0])
        worst = max(worst, float(np.abs(wf / ref - 1.0).max()))
    result.checks.append(check("rotating cantilever: flap ω against Rayleigh–Ritz, relative", worst, 1e-5))
    wt, ref = _top()
    for k in range(4):
        frame = "rotating frame" if k < 2 else "inertial frame"
        rows.append([f"sleeping top ({frame})", k % 2 + 1, wt[k], ref[k], wt[k] / ref[k] - 1.0])
    result.checks.append(
        check(
            "sleeping heavy top: precession and nutation (rotating and inertial frame), relative",
            float(np.abs(wt / ref - 1.0).max()) if wt.size == 4 else math.nan,
            1e-8,
        )
    )
    labels, wr, expected = _rotor()
    errs = [abs(w / expected[lab] - 1.0) for lab, w in zip(labels, wr, strict=True) if lab in expected]
    for lab, w in zip(labels, wr, strict=True):
        rows.append(
            [
                f"3-blade rotor, fixed frame: {lab}",
                1,
                w,
                expected.get(lab, math.nan),
                w / expected.get(lab, math.nan) - 1.0,
            ]
        )
    result.checks.append(
        check(
            "3-blade rotor (MBC): collective ω_r, cyclic ω_r ± Ω, relative",
            max(errs) if sorted(labels) == ["backward", "collective", "forward"] else math.nan,
            1e-9,
        )
    )
    # the scheme's own numerical damping and period error
    from kynemapy.analysis import scheme_error

    wh = np.array([0.01, 0.1, 0.5, 1.0, 3.0])
    trap = scheme_error(wh, 1.0, rho_inf=1.0)
    result.checks.append(
        check(
            "scheme, ρ∞ = 1 (trapezoidal): period error against ωh/(2 arctan(ωh/2)) − 1, and |λ| − 1",
            float(
                max(
                    np.abs(trap.period_error - (wh / (2.0 * np.arctan(wh / 2.0)) - 1.0)).max(),
                    np.abs(trap.spectral_radius - 1.0).max(),
                )
            ),
            1e-12,
        )
    )
    scheme_rows = []
    for rho in (1.0, 0.9, 0.6, 0.0):
        e = scheme_error(wh, 1.0, rho_inf=rho)
        for i, x in enumerate(wh):
            scheme_rows.append([rho, x, e.spectral_radius[i], e.damping_ratio[i], e.period_error[i]])
    worst = max(_scheme_run(rho, 0.5) for rho in ((0.6,) if quick else (0.9, 0.6, 0.0)))
    result.checks.append(
        check("scheme: the engine's mass on a spring follows x_{n+1} = A(ωh) x_n (ωh = 0.5), relative", worst, 1e-10)
    )
    result.tables.append(
        Table(
            "The generalized-α scheme at ωh (a linear oscillator; add ζ̄ to a mode's physical damping ratio)",
            ["ρ∞", "ωh", "spectral radius", "numerical damping ratio ζ̄", "period error T̄/T − 1"],
            scheme_rows,
        )
    )
    result.tables.append(
        Table("Natural frequencies", ["system", "mode", "ω [rad/s]", "closed form [rad/s]", "relative error"], rows)
    )
    result.wall_time = time.perf_counter() - start
    return result


def plot(result: CaseResult, directory) -> list[tuple[str, str]]:
    """No figures."""
    return []
