"""kynemapy.integrators: input validation, user torques, output options, and the point kernels
against naive numpy/scipy twins (and as plain Python)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.linalg import expm

import kynemapy as kp
from kynemapy.analytic.free_body import _legendre_pi
from kynemapy.integrators.dmv import solve_dmv_cayley
from kynemapy.integrators.rig_schemes import solve_exp_momentum
from kynemapy.integrators.splitting import rotate_about_body_axis
from kynemapy.integrators.torques import point_force_torque
from kynemapy.math import so3

ki = kp.integrators
TOP = {"inertia": (5.0, 5.0, 1.0), "W0": (0.0, 0.0, 50.0)}
TOP_LOAD = {"force": (0.0, 0.0, -20.0), "force_point": (0.0, 0.0, 1.0)}


def hat(w) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def top_R0() -> np.ndarray:
    return expm(hat((0.05, 0.0, 0.0)))


# ----------------------------------------------------------------------------------------------
# validation: clear ValueErrors, never a numba traceback or a silent NaN
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"scheme": "rk4"},
            "unknown scheme 'rk4'; valid schemes: rig_pos, rig_neg, rig_imp, liemid, splitting, dmv, exact",
        ),
        ({"inertia": (1.0, 0.0, 2.0)}, "inertia must be positive"),
        ({"inertia": (1.0, -1.0, 2.0)}, "inertia must be positive"),
        ({"inertia": [[1, 0.1, 0], [0.1, 1, 0], [0, 0, 1]]}, "a \\(3, 3\\) inertia must be diagonal"),
        ({"inertia": (1.0, 2.0)}, "inertia must have 3 components"),
        ({"R0": np.diag([1.0, 1.0, 1.01])}, "R0 is not orthonormal"),
        ({"R0": np.diag([1.0, 1.0, -1.0])}, "R0 is a reflection"),
        ({"R0": (1.0, 0.1, 0.0, 0.0)}, "unit norm"),
        ({"R0": np.eye(2)}, "R0 must be a \\(3, 3\\) rotation matrix"),
        ({"W0": (0.0, np.nan, 1.0)}, "W0 must be finite"),
        ({"h": 0.0}, "h must be positive"),
        ({"h": -0.01}, "h must be positive"),
        ({"h": float("nan")}, "h must be positive"),
        ({"t_end": -1.0}, "t_end must be finite and >= t0"),
        ({"every": 0}, "every must be a positive integer"),
        ({"force_point": (0, 0, 1)}, "force_point given without force"),
        ({"torque_params": [1.0]}, "torque_params given without torque"),
        ({"torque": lambda t, R, p, out: None}, "numba.njit-compiled"),
        ({"scheme": "exact", **TOP_LOAD}, "scheme 'exact' is the torque-free flow"),
        ({"gravity": (0, 0, -9.8), **TOP_LOAD}, "needs its mass"),
        ({"mass": 2.0}, "mass is only used for a free body"),
        ({"gravity": (0, 0, -9.8), **TOP_LOAD, "mass": -1.0}, "mass must be positive"),
        ({"scheme": "dmv", "splitting_axes": (0, 1, 2)}, "splitting_axes applies to scheme 'splitting' only"),
        ({"scheme": "splitting", "splitting_axes": (0, 1, 1)}, "permutation of \\(0, 1, 2\\)"),
    ],
)
def test_bad_input_raises_a_clear_value_error(kwargs, message) -> None:
    args = {"scheme": "rig_imp", "inertia": (1.0, 2.0, 3.0), "R0": np.eye(3), "W0": (0.1, 0.2, 0.3), "h": 0.01}
    args |= {"t_end": 0.1}
    args |= kwargs
    with pytest.raises(ValueError, match=message):
        ki.integrate(**args)


@numba.njit
def wrong_signature_torque(t, R, out):  # three arguments instead of four
    out[0] = 0.0


@numba.njit
def nan_torque(t, R, params, out):
    out[0] = np.nan
    out[1] = 0.0
    out[2] = 0.0


@numba.njit
def returning_torque(t, R, params, out):  # writes its torque, and returns a value too
    out[0] = 0.0
    out[1] = 0.0
    out[2] = params[0]
    return params[0]


@numba.njit
def late_nan_torque(t, R, params, out):
    out[0] = np.nan if t > params[0] else 0.0
    out[1] = 0.0
    out[2] = 0.0


def test_a_bad_user_torque_is_reported_before_the_loop() -> None:
    with pytest.raises(ValueError, match="torque\\(t, R, params, out\\) failed"):
        ki.integrate("splitting", (1, 2, 3), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.1, torque=wrong_signature_torque)
    with pytest.raises(ValueError, match="non-finite torque"):
        ki.integrate("splitting", (1, 2, 3), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.1, torque=nan_torque)
    # a value returned would make a loop of its own to compile (the loop calls one signature)
    with pytest.raises(ValueError, match="must write the torque into out and return None, it returns float64"):
        ki.integrate(
            "splitting", (1, 2, 3), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.1, torque=returning_torque, torque_params=[1.0]
        )


def test_non_finite_state_and_failed_newton_raise_integration_errors() -> None:
    with pytest.raises(
        ki.IntegrationError, match=r"splitting: the state became non-finite in step 4 \(t = 0.04 → 0.05 s\)"
    ):
        ki.integrate(
            "splitting", (1, 2, 3), np.eye(3), (0.1, 0.2, 0.3), 0.01, 0.1, torque=late_nan_torque, torque_params=[0.045]
        )
    with pytest.raises(ki.IntegrationError, match="rig_imp: the Newton iteration did not converge in step 0"):
        ki.integrate("rig_imp", **TOP, R0=top_R0(), h=2.0, t_end=10.0, **TOP_LOAD)
    with pytest.raises(ki.IntegrationError, match="dmv: the Newton iteration did not converge"):
        ki.integrate("dmv", **TOP, R0=top_R0(), h=0.1, t_end=1.0, **TOP_LOAD)
    with pytest.raises(ki.IntegrationError, match="rig_pos: the state became non-finite"):
        ki.integrate("rig_pos", **TOP, R0=top_R0(), h=0.1, t_end=10.0, **TOP_LOAD)


# ----------------------------------------------------------------------------------------------
# outputs and options
# ----------------------------------------------------------------------------------------------


def test_trajectory_shapes_times_read_only_and_derived_quantities() -> None:
    tr = ki.integrate("liemid", (1.0, 2.0, 3.0), np.eye(3), (0.1, 0.2, 0.3), 0.003, 1.1, t0=1.0)
    n = 34  # floor((1.1 − 1.0)/0.003) = 33 steps
    assert tr.t.shape == (n,) and tr.R.shape == (n, 3, 3) and tr.W.shape == (n, 3)
    assert tr.x is None and tr.v is None and tr.scheme == "liemid" and tr.h == 0.003
    np.testing.assert_allclose(tr.t, 1.0 + 0.003 * np.arange(n), rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="read-only"):
        tr.W[0, 0] = 1.0
    np.testing.assert_array_equal(tr.body_momentum, tr.W * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(tr.spatial_momentum, np.einsum("nij,nj->ni", tr.R, tr.body_momentum))
    np.testing.assert_allclose(tr.rotational_energy, 0.5 * np.sum(tr.W**2 * [1.0, 2.0, 3.0], axis=1))
    assert tr.newton_iterations >= 2 * 33


@pytest.mark.parametrize("scheme", ki.SCHEMES)
def test_every_saves_exactly_the_rows_of_the_full_run(scheme: str) -> None:
    full = ki.integrate(scheme, (1.0, 2.0, 3.0), np.eye(3), (0.3, -0.2, 0.5), 0.01, 1.0)
    thin = ki.integrate(scheme, (1.0, 2.0, 3.0), np.eye(3), (0.3, -0.2, 0.5), 0.01, 1.0, every=7)
    assert thin.t.shape == (101 // 7 + 1,)
    np.testing.assert_array_equal(thin.t, full.t[::7])
    np.testing.assert_array_equal(thin.R, full.R[::7])
    np.testing.assert_array_equal(thin.W, full.W[::7])


def test_quaternion_R0_equals_the_matrix_and_upper_case_names_are_accepted() -> None:
    angle = 0.7
    q = (np.cos(angle / 2), 0.0, np.sin(angle / 2), 0.0)
    a = ki.integrate("RIG_NEG", (1.0, 2.0, 3.0), q, (0.3, -0.2, 0.5), 0.01, 0.2)
    b = ki.integrate("rig_neg", np.diag([1.0, 2.0, 3.0]), expm(hat((0.0, angle, 0.0))), (0.3, -0.2, 0.5), 0.01, 0.2)
    np.testing.assert_allclose(a.R, b.R, atol=1e-15)
    np.testing.assert_allclose(a.W, b.W, atol=1e-14)


def test_free_body_translation_with_gravity_and_a_force() -> None:
    """Centre of mass: constant acceleration g + f/m, exact; the force's arm turns the body."""
    g, f, m = np.array([0.0, 0.0, -9.81]), np.array([1.0, 2.0, 0.0]), 2.0
    x0, v0 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 3.0])
    tr = ki.integrate(
        "splitting",
        (1, 2, 3),
        np.eye(3),
        (0, 0, 0),
        0.01,
        1.0,
        gravity=g,
        force=f,
        force_point=(0.0, 0.0, 0.1),
        mass=m,
        x0=x0,
        v0=v0,
    )
    a = g + f / m
    t = tr.t[:, None]
    np.testing.assert_allclose(tr.x, x0 + v0 * t + 0.5 * a * t * t, rtol=0, atol=1e-14)
    np.testing.assert_allclose(tr.v, v0 + a * t, rtol=0, atol=1e-14)
    assert np.abs(tr.W[-1]).max() > 0.01  # the arm (0, 0, 0.1) × f gives a torque
    # a force through the centre of mass is torque-free, so 'exact' accepts it
    ex = ki.integrate("exact", (1, 2, 3), np.eye(3), (0.1, 0.2, 0.3), 0.01, 1.0, force=f, mass=m, v0=(0, 0, 0))
    np.testing.assert_allclose(ex.v[-1], f / m * ex.t[-1], atol=1e-15)


# ----------------------------------------------------------------------------------------------
# user torque functions
# ----------------------------------------------------------------------------------------------


@numba.njit
def top_gravity_torque(t, R, params, out):
    """Body torque of the world force (0, 0, −params[0]) at body point e3: e3 × (Rᵀ f)."""
    fx = R[2, 0] * -params[0]
    fy = R[2, 1] * -params[0]
    out[0] = -fy
    out[1] = fx
    out[2] = 0.0


@numba.njit
def ramp_torque(t, R, params, out):
    """Body torque (0, 0, params[0] t): spins a body about its z axis, W3 = W3(0) + a t²/(2 I3)."""
    out[0] = 0.0
    out[1] = 0.0
    out[2] = params[0] * t


@pytest.mark.parametrize("scheme", ["rig_imp", "splitting", pytest.param("liemid", marks=pytest.mark.slow)])
def test_user_torque_reproduces_the_point_force(scheme: str) -> None:
    a = ki.integrate(scheme, **TOP, R0=top_R0(), h=0.009, t_end=2.0, **TOP_LOAD)
    b = ki.integrate(scheme, **TOP, R0=top_R0(), h=0.009, t_end=2.0, torque=top_gravity_torque, torque_params=[20.0])
    np.testing.assert_allclose(b.R, a.R, rtol=0, atol=1e-13)
    np.testing.assert_allclose(b.W, a.W, rtol=0, atol=1e-11)


@pytest.mark.parametrize("scheme", ["rig_neg", "dmv"])
def test_user_torque_sees_the_time(scheme: str) -> None:
    """Midpoint (RIG) and trapezoidal (kick) quadratures are exact for a torque linear in t."""
    inertia, rate, t0 = (1.0, 2.0, 4.0), 3.0, 0.5
    tr = ki.integrate(
        scheme, inertia, np.eye(3), (0, 0, 1.0), 0.01, 1.5, t0=t0, torque=ramp_torque, torque_params=[rate]
    )
    expected = 1.0 + rate * (tr.t**2 - t0**2) / (2 * inertia[2])
    np.testing.assert_allclose(tr.W[:, 2], expected, rtol=1e-13)
    np.testing.assert_allclose(tr.W[:, :2], 0.0, atol=0)


def test_a_user_torque_compiles_nothing_but_itself_in_a_new_process() -> None:
    """The schemes' loop takes the torque as a first-class function typed by its signature, so a
    process with a torque function of its own (here defined in the child, new in every process)
    compiles that function and loads the loop from the cache: numba's compile events name the
    user's function alone, in two processes one after the other (before, the loop compiled in
    every process, about 1.5 s, and its cache grew by an entry each time)."""
    code = (
        "import numba, numpy as np\n"
        "import numba.core.event as ev\n"
        "import kynemapy as kp\n"
        "names = []\n"
        "class Listen(ev.Listener):\n"
        "    def on_start(self, event):\n"
        "        names.append(event.data['dispatcher'].py_func.__qualname__)\n"
        "    def on_end(self, event):\n"
        "        pass\n"
        "@numba.njit\n"
        "def pull(t, R, params, out):\n"
        "    out[0] = params[0] * R[2, 1]\n"
        "    out[1] = -params[0] * R[2, 0]\n"
        "    out[2] = 0.0\n"
        "kp.integrators.integrate('rig_pos', (5.0, 5.0, 1.0), np.eye(3), (0.0, 0.0, 1.0), 0.01, 0.02)\n"
        "ev.register('numba:compile', Listen())\n"
        "tr = kp.integrators.integrate('splitting', (5.0, 5.0, 1.0), np.eye(3), (0.1, 0.2, 50.0), 0.001, 0.1,\n"
        "                              torque=pull, torque_params=[20.0])\n"
        "assert np.all(np.isfinite(tr.W))\n"
        "print(sorted(set(names)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], check=True, cwd=root, capture_output=True, text=True)
        assert out.stdout.strip() == "['pull']", (out.stdout, out.stderr)


# ----------------------------------------------------------------------------------------------
# point kernels against naive twins
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "w", [(0.0, 0.0, 0.0), (1e-9, -2e-9, 3e-9), (3e-4, 1e-4, -2e-4), (0.3, -1.2, 0.5), (2.0, 2.5, -1.0)]
)
def test_exp_so3_and_right_jacobian(w) -> None:
    w = np.array(w)
    out = np.empty((3, 3))
    so3.exp_so3(w[0], w[1], w[2], out)
    np.testing.assert_allclose(out, expm(hat(w)), rtol=0, atol=5e-15)  # scipy's Padé expm itself errs by ~4e-15
    np.testing.assert_allclose(out.T @ out, np.eye(3), rtol=0, atol=1e-15)
    jr = np.empty((3, 3))
    so3.right_jacobian_so3(w[0], w[1], w[2], jr)
    # exp(hat(w + ε e_j)) ≈ exp(hat(w)) exp(hat(ε Jr e_j)): central differences of exp(hat(w))ᵀ exp(hat(w + ε e_j))
    eps = 1e-6
    fd = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = eps
        D = expm(hat(w)).T @ (expm(hat(w + e)) - expm(hat(w - e))) / (2 * eps)
        fd[:, j] = (D[2, 1], D[0, 2], D[1, 0])
    np.testing.assert_allclose(jr, fd, atol=1e-8)


def test_small_kernels_against_numpy() -> None:
    rng = np.random.default_rng(5)
    A = rng.normal(size=(3, 3))
    B = rng.normal(size=(3, 3))
    v = rng.normal(size=3)
    u = rng.normal(size=3)
    out3 = np.empty(3)
    out33 = np.empty((3, 3))
    so3.matmul3(A, B, out33)
    np.testing.assert_allclose(out33, A @ B, rtol=1e-15, atol=1e-15)
    so3.matvec3(A, v, out3)
    np.testing.assert_allclose(out3, A @ v, atol=1e-15)
    so3.matTvec3(A, v, out3)
    np.testing.assert_allclose(out3, A.T @ v, atol=1e-15)
    so3.cross(u, v, out3)
    np.testing.assert_allclose(out3, np.cross(u, v), atol=1e-15)
    assert so3.solve3(A, v, out3)
    np.testing.assert_allclose(out3, np.linalg.solve(A, v), rtol=1e-12)
    assert not so3.solve3(np.ones((3, 3)), v, out3)
    C = A.copy()
    so3.matmul3_into_first(C, B, out33)
    np.testing.assert_allclose(C, A @ B, atol=1e-15)
    so3.cayley_so3(v, out33)
    np.testing.assert_allclose(out33, (np.eye(3) + hat(v)) @ np.linalg.inv(np.eye(3) - hat(v)), atol=1e-14)
    for axis in range(3):
        R = expm(hat(u))
        x = v.copy()
        e = np.zeros(3)
        e[axis] = 0.8
        rotate_about_body_axis(axis, 0.8, R, x)
        np.testing.assert_allclose(R, expm(hat(u)) @ expm(hat(e)), atol=1e-15)
        np.testing.assert_allclose(x, expm(hat(e)).T @ v, atol=1e-15)
    f, p = np.array([1.0, -2.0, 3.0]), np.array([0.2, 0.1, -0.4])
    Rr = expm(hat(u))
    point_force_torque(0.0, Rr, np.concatenate([f, p]), out3)
    np.testing.assert_allclose(out3, Rr.T @ np.cross(Rr @ p, f), atol=1e-14)


def test_implicit_solvers_satisfy_their_equations() -> None:
    inertia = np.array([0.376, 0.627, 1.0])
    A = np.array([0.3, 0.6, -0.8])
    W = A / inertia
    E = np.empty((3, 3))
    its = solve_exp_momentum(0.05, inertia, A, W, E, np.empty((2, 3, 3)), np.empty((3, 3)))
    assert 0 < its < 10
    np.testing.assert_allclose(E, expm(hat(0.05 * W)), atol=1e-15)
    np.testing.assert_allclose(E @ (inertia * W), A, atol=1e-15)
    # DMV: the Cayley vector solves the matrix equation (h Π)^ = F J_d − J_d Fᵀ, J_d = ½ tr(J) I − J
    h = 0.1
    f = 0.5 * h * A / inertia
    its = solve_dmv_cayley(h, inertia, A, f, np.empty((3, 3)), np.empty((2, 3)))
    assert 0 < its < 10
    F = (np.eye(3) + hat(f)) @ np.linalg.inv(np.eye(3) - hat(f))
    Jd = 0.5 * inertia.sum() * np.eye(3) - np.diag(inertia)
    np.testing.assert_allclose(F @ Jd - Jd @ F.T, hat(h * A), atol=1e-15)


@pytest.mark.parametrize("m", [0.0, 0.3, 0.97])
def test_elliptic_integral_of_the_third_kind_against_quadrature(m: float) -> None:
    nu = -0.7
    phi = np.array([-4.0, -1.2, 0.0, 0.4, 1.5707963, 2.5, 7.9])
    ours = _legendre_pi(nu, phi, m)
    for p, value in zip(phi, ours, strict=True):
        expected = quad(
            lambda th: 1.0 / ((1 - nu * np.sin(th) ** 2) * np.sqrt(1 - m * np.sin(th) ** 2)),
            0,
            p,
            epsabs=0.0,
            epsrel=1e-13,
            limit=200,
        )[0]
        assert value == pytest.approx(expected, rel=1e-13, abs=1e-14)


# ----------------------------------------------------------------------------------------------
# lazy compilation; plain-Python kernels
# ----------------------------------------------------------------------------------------------


def test_importing_compiles_nothing() -> None:
    code = (
        "import kynemapy as kp\n"
        "from kynemapy.integrators import drive\n"
        "assert kp.integrators.integrate is not None\n"
        "assert drive.run_scheme.signatures == []\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


def test_kernels_run_as_plain_python_and_agree_with_the_compiled_ones(tmp_path) -> None:
    code = (
        "import sys, numpy as np\n"
        "import kynemapy as kp\n"
        "from scipy.linalg import expm\n"
        "R0 = expm(np.array([[0, 0, 0], [0, 0, -0.05], [0, 0.05, 0.0]]))\n"
        "out = {}\n"
        "for s in kp.integrators.SCHEMES[:-1]:\n"
        "    tr = kp.integrators.integrate(s, (5.0, 5.0, 1.0), R0, (0, 0, 50.0), 0.009, 0.09,"
        " force=(0, 0, -20.0), force_point=(0, 0, 1.0))\n"
        "    out[s + '_R'], out[s + '_W'] = tr.R, tr.W\n"
        "np.savez(sys.argv[1], **out)\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, KYNEMAPY_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "py.npz")], check=True, cwd=root, env=env)
    plain = np.load(tmp_path / "py.npz")
    for s in ki.SCHEMES[:-1]:
        tr = ki.integrate(s, **TOP, R0=top_R0(), h=0.009, t_end=0.09, **TOP_LOAD)
        np.testing.assert_allclose(plain[s + "_R"], tr.R, rtol=0, atol=1e-14)
        np.testing.assert_allclose(plain[s + "_W"], tr.W, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# one step of every scheme against a numpy twin transcribed from the formulas of the seed notes
# (Solfec NEW1/2/3, Krysl LIEMID, splitting, DMV in its matrix form solved by scipy.optimize.root)
# ----------------------------------------------------------------------------------------------


def _axial(M: np.ndarray) -> np.ndarray:
    return np.array([M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]]) / 2.0


def twin_step(scheme: str, J: np.ndarray, R: np.ndarray, W: np.ndarray, h: float, f, p) -> tuple:
    from scipy.optimize import root

    def torque(Rm):
        return Rm.T @ np.cross(Rm @ p, f)

    def solve(fun, x0):
        sol = root(fun, x0, method="hybr", options={"xtol": 1e-15})
        assert sol.success
        return sol.x

    E = lambda w: expm(hat(w))  # noqa: E731
    if scheme.startswith("rig"):
        D = E(0.5 * h * W)
        Rh = R @ D
        T = torque(Rh)
        Wh = (D.T @ (J * W) + 0.5 * h * T) / J
        Ws = W + h * (T - np.cross(Wh, J * Wh)) / J
        A = D.T @ (J * W) + h * T
        if scheme == "rig_pos":
            return Rh @ E(0.5 * h * Ws), Ws
        if scheme == "rig_neg":
            D1 = E(0.5 * h * Ws)
            return Rh @ D1, D1.T @ A / J
        W1 = solve(lambda w: E(0.5 * h * w) @ (J * w) - A, Ws)
        return Rh @ E(0.5 * h * W1), W1
    P = J * W + 0.5 * h * torque(R)
    if scheme == "liemid":
        for _ in range(2):
            theta = solve(lambda th, P=P: J * th - 0.5 * h * E(-0.5 * th) @ P, 0.5 * h * P / J)
            R = R @ E(theta)
            P = E(theta).T @ P
    elif scheme == "splitting":
        a, b, c = np.argsort(J, kind="stable")
        for axis, tau in ((a, h / 2), (b, h / 2), (c, h), (b, h / 2), (a, h / 2)):
            e = np.zeros(3)
            e[axis] = tau * P[axis] / J[axis]
            R = R @ E(e)
            P = E(e).T @ P
    elif scheme == "dmv":
        Jd = 0.5 * J.sum() * np.eye(3) - np.diag(J)
        s = solve(lambda s: _axial(E(s) @ Jd - Jd @ E(s).T) - h * P, h * P / J)
        R = R @ E(s)
        P = E(s).T @ P
    P = P + 0.5 * h * torque(R)
    return R, P / J


@pytest.mark.parametrize("scheme", ki.SCHEMES[:-1])
def test_one_step_equals_the_numpy_twin_of_the_seed_formulas(scheme: str) -> None:
    J = np.array([2.0, 3.0, 4.5])
    R0 = expm(hat((0.3, -0.2, 0.4)))
    W0 = np.array([1.0, -2.0, 3.0])
    f, p = np.array([1.0, -2.0, -30.0]), np.array([0.1, 0.2, 0.5])
    h = 0.05
    tr = ki.integrate(scheme, J, R0, W0, h, h, force=f, force_point=p)
    R1, W1 = twin_step(scheme, J, R0, W0, h, f, p)
    np.testing.assert_allclose(tr.R[1], R1, rtol=0, atol=1e-14)
    np.testing.assert_allclose(tr.W[1], W1, rtol=0, atol=1e-13)
