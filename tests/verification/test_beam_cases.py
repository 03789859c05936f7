"""The flexible-beam validation cases (``kynemapy.validation.BEAM_CASES``): every check of every
case passes, each check list covers what the case is about, and the closed forms of
``kynemapy.analytic.beams`` hold against independent evaluations (numerical integration, root
equations).  The cases' own checks are the ones ``kynemapy validate`` reports.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kynemapy.analytic import beams as ab
from kynemapy.cli import main
from kynemapy.validation import ALL_CASES, BEAM_CASES, run_case

#: what each case's checks must mention (a case cannot silently lose a check)
EXPECTED = {
    "beam_rollup": ("tip position", "tip rotation", "spectral", "half circle", "Kynema's assertion"),
    "beam_tip_load": ("along z", "along y", "rotation", "P²"),
    "beam_frequencies": ("βL roots", "mode 1", "mode 2", "mode 3", "shear", "order 12"),
    "beam_beamdyn_dynamic": ("Kynema's acceptance", "u_z", "u_x", "u_y"),
    "beam_iea15_blade": ("Kynema's acceptance", "CSV's rows", "RMS"),
    "beam_energy": ("energy", "angular-momentum", "linear momentum"),
}


@pytest.mark.parametrize("name", BEAM_CASES)
def test_every_check_of_the_beam_case_passes(name: str) -> None:
    result = run_case(name, quick=False)
    assert result.checks, name
    names = " ".join(c.name for c in result.checks)
    for word in EXPECTED[name]:
        assert word in names, f"{name}: no check mentions {word!r}"
    failed = "\n".join(f"{c.name}: {c.value:.3e} {c.bound_text}" for c in result.failed)
    assert result.passed, f"{name}: failed checks\n{failed}"


@pytest.mark.parametrize("name", ["beam_rollup", "beam_energy"])
def test_quick_beam_cases_pass(name: str) -> None:
    result = run_case(name, quick=True)
    assert result.quick and result.passed, [c.name for c in result.failed]


def test_beam_cases_are_run_by_validate(tmp_path) -> None:
    assert set(BEAM_CASES) <= set(ALL_CASES)
    out = tmp_path / "report"
    assert main(["validate", "--quick", "--case", "beam_tip_load", "--out", str(out), "--no-figures"]) == 0
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "Timoshenko" in text and "FAIL" not in text


def test_cantilever_roots_satisfy_the_frequency_equation() -> None:
    roots = ab.cantilever_beta_l(6)
    assert np.all(np.abs(1.0 + np.cos(roots) * np.cosh(roots)) <= 1e-9 * np.cosh(roots))
    # one root per interval ((2n − 1)π/2 asymptotically), none skipped
    np.testing.assert_allclose(roots[2:], (2 * np.arange(3, 7) - 1) * math.pi / 2, atol=1e-3)
    np.testing.assert_allclose(roots[:3], [1.87510407, 4.69409113, 7.85475744], atol=5e-9)
    # ω₁ for steel-like numbers: (βL)² √(EI/(mL⁴))
    assert ab.euler_bernoulli_frequencies(2.0, 8.0, 2.0)[0] == pytest.approx(roots[0] ** 2 * math.sqrt(8.0 / 32.0))


def test_rollup_closed_form_against_integrated_tangent() -> None:
    """x(L) = ∫₀ᴸ R_y(κs) e_x ds by Gauss–Legendre quadrature, for several moments."""
    xi, w = np.polynomial.legendre.leggauss(60)
    for moment in (-2.0 * math.pi * 3.0 / 5.0, -1.3, 0.7, math.pi * 3.0 / 5.0):
        u, R = ab.tip_moment_rollup(5.0, 3.0, moment)
        kappa = moment / 3.0
        s = 2.5 * (xi + 1.0)
        tip = 2.5 * np.array([np.sum(w * np.cos(kappa * s)), 0.0, np.sum(w * -np.sin(kappa * s))])
        np.testing.assert_allclose(u, tip - np.array([5.0, 0.0, 0.0]), atol=1e-12)
        theta = kappa * 5.0
        np.testing.assert_allclose(R @ np.array([1.0, 0.0, 0.0]), [math.cos(theta), 0.0, -math.sin(theta)], atol=1e-14)
    u, R = ab.tip_moment_rollup(10.0, 86.9e3, -2.0 * math.pi * 86.9e3 / 10.0)
    np.testing.assert_allclose(u, [-10.0, 0.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(R, np.eye(3), atol=1e-14)


def test_timoshenko_deflection_from_the_differential_equations() -> None:
    """EI θ′ = P(L − s), w′ = θ + P/κGA integrated by quadrature gives δ = PL³/3EI + PL/κGA."""
    L, ei, kga, P = 2.0, 5.0, 40.0, 0.3
    xi, w = np.polynomial.legendre.leggauss(8)
    s = 0.5 * L * (xi + 1.0)
    theta = P * (L * s - 0.5 * s**2) / ei
    delta = 0.5 * L * np.sum(w * (theta + P / kga))
    assert ab.timoshenko_tip_deflection(L, ei, kga, P) == pytest.approx(delta, rel=1e-14)
    assert ab.timoshenko_tip_rotation(L, ei, P) == pytest.approx(P * L**2 / (2 * ei), rel=1e-15)


def test_mode_shape_derivatives_and_shear_factor() -> None:
    """φ″, φ‴ against finite differences of φ; φ satisfies the clamped/free conditions; r_n
    scales as 1/L² and approaches β_n² for high modes (end layers aside)."""
    L = 1.5
    for bl in ab.cantilever_beta_l(3):
        b = bl / L
        sigma = (math.cosh(bl) + math.cos(bl)) / (math.sinh(bl) + math.sin(bl))

        def phi(s, b=b, sigma=sigma):
            return np.cosh(b * s) - np.cos(b * s) - sigma * (np.sinh(b * s) - np.sin(b * s))

        s = np.linspace(0.1, 1.4, 7)
        d = 1e-3
        fd2 = (phi(s + d) - 2 * phi(s) + phi(s - d)) / d**2
        fd3 = (phi(s + 2 * d) - 2 * phi(s + d) + 2 * phi(s - d) - phi(s - 2 * d)) / (2 * d**3)
        d2, d3 = ab.mode_shape_derivatives(float(bl), L, s)
        scale2, scale3 = b**2 * np.abs(phi(s)).max(), b**3 * np.abs(phi(s)).max()
        assert np.abs(d2 - fd2).max() < 1e-5 * scale2 and np.abs(d3 - fd3).max() < 1e-4 * scale3
        e2, e3 = ab.mode_shape_derivatives(float(bl), L, np.array([L]))
        assert abs(e2[0]) < 1e-9 * b**2 * 10 and abs(e3[0]) < 1e-9 * b**3 * 10  # free end: no moment, no shear
    r = ab.shear_frequency_factor(1.0, 6)
    bl = ab.cantilever_beta_l(6)
    excess = r / bl**2 - 1.0
    assert np.all(np.diff(excess[1:]) < 0.0) and excess[-1] < 0.15
    np.testing.assert_allclose(ab.shear_frequency_factor(2.0, 3), r[:3] / 4.0, rtol=1e-12)


def test_beam_invariants_strain_energy_of_the_rollup() -> None:
    """The numpy invariants of ``beam_energy`` on the static full circle: U = ½ M² L/EI."""
    from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points
    from kynemapy.validation import beam_rollup

    order = 14
    _, q_all, _, s, x0 = beam_rollup._solve(order, beam_rollup.MOMENT)
    v = np.zeros((1, len(s), 6))
    _, strain, lin, ang = beam_invariants(
        q_all[None], v, x0, (tuple(range(order + 1)),), beam_rollup.LENGTH, beam_rollup.M_STAR,
        beam_rollup.C_STAR, gauss_quadrature(order + 1), gll_points(order),
    )  # fmt: skip
    exact = 0.5 * beam_rollup.MOMENT**2 * beam_rollup.LENGTH / beam_rollup.EI
    assert strain[0] == pytest.approx(exact, rel=1e-8)
    assert np.all(lin == 0.0) and np.all(ang == 0.0)


# ------------------------------------------------------------------ numpy twin of the beam invariants
def lagrange_tables(nodes: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lagrange basis on ``nodes`` (P,) at points ``x`` (Q,): values and derivatives, (P, Q)."""
    P = len(nodes)
    phi = np.ones((P, len(x)))
    dphi = np.zeros((P, len(x)))
    for j in range(P):
        for m in range(P):
            if m == j:
                continue
            phi[j] *= (x - nodes[m]) / (nodes[j] - nodes[m])
        for i in range(P):
            if i == j:
                continue
            term = np.full(len(x), 1.0 / (nodes[j] - nodes[i]))
            for m in range(P):
                if m not in (i, j):
                    term *= (x - nodes[m]) / (nodes[j] - nodes[m])
            dphi[j] += term
    return phi, dphi


def quat_matrices(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) (w, x, y, z)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty((*q.shape[:-1], 3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def beam_invariants(
    q: np.ndarray,
    v: np.ndarray,
    x0: np.ndarray,
    element_nodes: tuple[tuple[int, ...], ...],
    element_length: float,
    m_star: np.ndarray,
    c_star: np.ndarray,
    quadrature: np.ndarray,
    node_xi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Energies and momenta of a straight beam along x with identity reference orientation.

    Parameters
    ----------
    q : (R, N, 7) node displacements (u [m], rotation quaternion) of R output rows.
    v : (R, N, 6) node velocities (u̇ [m/s], ω [rad/s]).
    x0 : (N, 3) node reference positions [m].
    element_nodes : per element, its node indices (into the N nodes), root to tip.
    element_length : length of each element [m].
    m_star, c_star : (6, 6) section matrices (no mass offset, diagonal translational block).
    quadrature : (Q, 2) rows (ξ, weight) of the element's rule; node_xi : (P,) node ξ.

    Returns
    -------
    kinetic (R,) [J], strain (R,) [J], linear momentum (R, 3) [kg m/s], angular momentum about
    the origin (R, 3) [kg m²/s].
    """
    n_rows = q.shape[0]
    kin = np.zeros(n_rows)
    strain = np.zeros(n_rows)
    lin = np.zeros((n_rows, 3))
    ang = np.zeros((n_rows, 3))
    phi, dphi = lagrange_tables(node_xi, quadrature[:, 0])
    jac = 0.5 * element_length
    w = quadrature[:, 1] * jac  # (Q,) arc-length weights [m]
    m = m_star[0, 0]
    J = m_star[3:, 3:]
    tangent = np.array([1.0, 0.0, 0.0])
    for idx in element_nodes:
        idx = list(idx)
        u_n, r_n, v_n, w_n = q[:, idx, :3], q[:, idx, 3:], v[:, idx, :3], v[:, idx, 3:]
        u = np.einsum("rjc,jk->rkc", u_n, phi)
        up = np.einsum("rjc,jk->rkc", u_n, dphi) / jac
        r = np.einsum("rjc,jk->rkc", r_n, phi)
        r /= np.linalg.norm(r, axis=-1, keepdims=True)
        rp = np.einsum("rjc,jk->rkc", r_n, dphi) / jac
        ud = np.einsum("rjc,jk->rkc", v_n, phi)
        om = np.einsum("rjc,jk->rkc", w_n, phi)
        X = np.einsum("jc,jk->kc", x0[idx], phi)
        R = quat_matrices(r)  # (R, Q, 3, 3)
        eps = tangent + up - R @ tangent
        rw, rx, ry, rz = r[..., 0], r[..., 1], r[..., 2], r[..., 3]
        pw, px, py, pz = rp[..., 0], rp[..., 1], rp[..., 2], rp[..., 3]
        kap = 2.0 * np.stack(
            [-rx * pw + rw * px - rz * py + ry * pz, -ry * pw + rz * px + rw * py - rx * pz,
             -rz * pw - ry * px + rx * py + rw * pz],
            axis=-1,
        )  # fmt: skip
        # material-frame strain e* = diag(R, R)ᵀ e; energy ½ e*ᵀ C* e*
        e_mat = np.concatenate([np.einsum("rkji,rkj->rki", R, eps), np.einsum("rkji,rkj->rki", R, kap)], axis=-1)
        strain += 0.5 * np.einsum("rki,ij,rkj,k->r", e_mat, c_star, e_mat, w)
        om_mat = np.einsum("rkji,rkj->rki", R, om)
        kin += 0.5 * np.einsum("rki,rki,k->r", ud, ud, w) * m + 0.5 * np.einsum("rki,ij,rkj,k->r", om_mat, J, om_mat, w)
        lin += m * np.einsum("rkc,k->rc", ud, w)
        spin = np.einsum("rkij,jl,rkl->rki", R, J, om_mat)
        ang += np.einsum("rkc,k->rc", np.cross(X + u, m * ud) + spin, w)
    return kin, strain, lin, ang


def test_engine_beam_invariants_equal_the_numpy_twin() -> None:
    """The engine's output rows (kinetic and strain energy, momenta of beam_energy's free beam,
    spinning, drifting and bending) against the numpy evaluation above, to round-off."""
    from kynemapy.engine.elements.beams.quadrature import gauss_quadrature, gll_points
    from kynemapy.validation import beam_energy as be
    from kynemapy.validation.beam_model import isotropic_section

    r = be.simulate(1e-3, t_end=0.02)
    m_star, c_star = isotropic_section(be.EA, be.GA, be.GJ, be.EI, be.EI, m=be.MASS, j=be.J_STAR)
    beam = r["beam"]
    x0 = np.column_stack([beam.s, np.zeros_like(beam.s), np.zeros_like(beam.s)])
    kin, strain, lin, ang = beam_invariants(
        r["q"], r["v"], x0, beam.element_nodes, be.LENGTH / be.N_ELEMENTS, m_star, c_star,
        gauss_quadrature(be.ORDER + 1), gll_points(be.ORDER),
    )  # fmt: skip
    assert strain.max() > 1e-3 * kin.max()  # the beam bends: the strain energy is tested
    np.testing.assert_allclose(r["kinetic"], kin, rtol=1e-12)
    np.testing.assert_allclose(r["strain"], strain, rtol=1e-9, atol=1e-14 * kin.max())
    np.testing.assert_allclose(r["linear"], lin, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r["angular"], ang, rtol=1e-12, atol=1e-14)


def test_iea15_blade_is_built_as_kynemas_blade_interface() -> None:
    """The blade of ``Dynamic_Iea15MwBladeBending``: the WindIO data turned from axis-along-z to
    axis-along-x (``ReferenceAxisOrientation::Z``), one order-10 element with 2 Gauss points per
    section interval, the root node clamped."""
    from kynemapy.validation import beam_iea15_blade as case

    inp = case.blade_input()
    sec = np.loadtxt(case.SECTIONS, delimiter=",", comments="#")
    axis = np.loadtxt(case.AXIS, delimiter=",", comments="#")
    assert sec.shape == (26, 43) and axis.shape == (60, 5)
    # WindIO (x, y, z) -> (z, y, -x): the blade along x, its prebend (WindIO x < 0) towards +z
    np.testing.assert_allclose(inp["points"][-1], [axis[-1, 3], 0.0, -axis[-1, 1]], atol=1e-12)
    np.testing.assert_array_equal(inp["twist"], -axis[:, 4])
    c_root = inp["c_star"][0]
    # WindIO stiff_matrix upper triangle: k11 = K[2, 2] (axial along z) becomes C*[0, 0];
    # K[0, 0], K[1, 1] (shear along x, y) become C*[2, 2], C*[1, 1]
    assert c_root[0, 0] == pytest.approx(sec[0, 22 + 11], rel=1e-14)
    assert c_root[2, 2] == pytest.approx(sec[0, 22 + 0], rel=1e-14)
    assert c_root[1, 1] == pytest.approx(sec[0, 22 + 6], rel=1e-14)
    model, blade = case.build()
    assert len(blade.nodes) == 11 and len(blade.elements) == 1
    assert model.n_nodes == 11 and model.n_constraints == 1
    assert model.beam_n_qps[0] == 2 * 25  # 25 section intervals, 2 Gauss points each
    np.testing.assert_allclose(model.x0[blade.tip, :3], inp["points"][-1], atol=1e-9)  # the fit interpolates the ends
    # Kynema's test compares at t = 0.05, ..., 1.0 with values it writes out: the CSV's rows at
    # those times, but at 0.65 and 0.85 s the rows at 0.652 and 0.852 s
    ref = case.reference()
    row = {0.65: 652, 0.85: 852}
    for t, value in case.KYNEMA_REFERENCE.items():
        assert ref[row.get(t, round(t / case.H)), 1] == value, t


def test_iea15_blade_quick_mode_checks_kynemas_first_times() -> None:
    result = run_case("beam_iea15_blade", quick=True)
    assert result.quick and result.passed, [c.name for c in result.failed]
    assert len(result.tables[0].rows) == 5  # t = 0.05 ... 0.25
