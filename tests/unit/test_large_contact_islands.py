"""The solvers of large contact islands on a stack of cubes (docs/contact.md, "Hard contact between
bodies"): the dense nonsmooth Newton finisher (kynemapy.run.contact_newton) and the exact solve
on friction pyramids (kynemapy.run.pyramid_lcp).

A column of upright cubes (0.2 m, 1 kg) on the ground, each on the one below through its four
corners (redundant rows: a singular Delassus matrix), pushed down by one step of gravity
(``u = W Λ + b``, b the contact points' velocities after ``v = −g h``), the top cube moving along
x at s [m/s], μ = 0.5.  Closed forms of the velocity jump: where s > μ g h the top cube keeps
sliding at ``s − μ g h`` and its friction impulses sum to ``μ m g h`` against its sliding; where
s < μ g h it stops, its friction impulses summing to ``m s``; every other cube ends at rest; the
normal impulses under each cube sum to the weight it carries, ``k m g h`` (k the cubes from it
up).
"""

from __future__ import annotations

import numpy as np
import pytest

import kynemapy as kp
from kynemapy.run import body_blocks
from kynemapy.run.body_blocks import contact_islands, least_distance, solve_blocks
from kynemapy.run.body_query import jacobian_rows
from kynemapy.run.contact_newton import newton_contacts
from kynemapy.run.pyramid_lcp import FINE_PYRAMID_EDGES, PYRAMID_EDGES, pyramid_lcp

G = 9.81
H = 1e-3  # s
A = 0.1  # m
MASS = 1.0  # kg
INERTIA = MASS * (2 * A) ** 2 / 6
MU = 0.5
SLIDE = 1.0  # m/s


def _stack(n: int, slide: float = SLIDE, angle: float = 0.0) -> tuple[np.ndarray, ...]:
    """The velocity-jump problem of ``n`` stacked cubes: na, nb, ja, jb, minv, b, mu, v (N, 6);
    the top cube slides at ``slide`` [m/s] in the direction ``angle`` [rad] from x towards y."""
    corners = np.array([[sx * A, sy * A] for sx in (-1, 1) for sy in (-1, 1)])
    na, nb, arm_a, arm_b = [], [], [], []
    for k in range(n):
        for x, y in corners:
            na.append(k - 1)  # −1: the ground under the first cube
            nb.append(k)
            arm_a.append((x, y, A))  # the corner seen from the cube below (its top face)
            arm_b.append((x, y, -A))
    c = len(na)
    frame = np.broadcast_to(np.eye(3)[[2, 0, 1]], (c, 3, 3)).copy()  # n = z, t1 = x, t2 = y
    na_, nb_ = np.array(na, dtype=np.int64), np.array(nb, dtype=np.int64)
    ja = -jacobian_rows(frame, np.array(arm_a))
    ja[na_ < 0] = 0.0
    jb = jacobian_rows(frame, np.array(arm_b))
    minv = np.zeros((n, 6, 6))
    minv[:, :3, :3] = np.eye(3) / MASS
    minv[:, 3:, 3:] = np.eye(3) / INERTIA
    v = np.zeros((n, 6))
    v[:, 2] = -G * H
    v[-1, :2] = slide * np.cos(angle), slide * np.sin(angle)
    pad = np.vstack([v, np.zeros((1, 6))])
    b = np.einsum("csr,cr->cs", ja, pad[na_]) + np.einsum("csr,cr->cs", jb, pad[nb_])
    return na_, nb_, ja, jb, minv, b, np.full(c, MU), v


def _after(na, nb, ja, jb, minv, lam, v) -> np.ndarray:
    """The velocities (N, 6) after the impulses Λ: ``v + M⁻¹ Gᵀ Λ``."""
    out = v.copy()
    for c in range(na.size):
        for node, j in ((na[c], ja[c]), (nb[c], jb[c])):
            if node >= 0:
                out[node] += minv[node] @ (j.T @ lam[c])
    return out


def _check_closed_forms(n: int, na, nb, ja, jb, minv, lam, v, slide: float = SLIDE) -> None:
    weight = MASS * G * H
    after = _after(na, nb, ja, jb, minv, lam, v)
    expected = np.zeros((n, 6))
    expected[-1, 0] = max(slide - MU * G * H, 0.0)
    assert np.abs(after - expected).max() <= 1e-12
    for k in range(n):
        under = nb == k
        assert lam[under, 0].sum() == pytest.approx((n - k) * weight, rel=1e-12)
        assert np.all(lam[under, 0] >= -1e-12 * weight)
    assert np.all(np.hypot(lam[:, 1], lam[:, 2]) <= MU * lam[:, 0] + 1e-12 * weight)
    top = nb == n - 1
    assert lam[top, 1].sum() == pytest.approx(-min(MU * weight, MASS * slide), rel=1e-12)
    assert np.abs(lam[top, 2].sum()) <= 1e-12 * weight


def _swept(na, nb, ja, jb, minv, b, mu, sweeps: int) -> np.ndarray:
    """Λ after ``sweeps`` projected Gauss–Seidel sweeps from zero (the solvers' start in the engine)."""
    c = na.size
    lam = np.zeros((c, 3))
    scratch = (np.zeros((c, 6, 3)), np.zeros((c, 6, 3)), np.zeros((c, 3, 3)), np.zeros(c), np.zeros((c, 3)))
    solve_blocks(na, nb, ja, jb, minv, b, mu, lam, np.zeros((minv.shape[0], 6)), scratch, 1e-14, np.inf, sweeps)
    return lam


def test_newton_on_a_stack_with_a_sliding_top_cube_meets_the_closed_forms() -> None:
    """3 cubes (12 contacts) from 100 sweeps: the dense Newton finisher to the closed forms."""
    n = 3
    na, nb, ja, jb, minv, b, mu, v = _stack(n)
    lam = _swept(na, nb, ja, jb, minv, b, mu, 100)
    c = na.size
    done, residual = newton_contacts(
        na, nb, ja, jb, minv, b, mu, lam, np.empty((3, 3 * c, 3 * c)), np.empty((9, 3 * c)),
        np.empty((2, c, 6, 3)), 1e-12, 50,
    )  # fmt: skip
    assert done > 0
    assert residual <= 1e-12 * np.abs(b).max()
    _check_closed_forms(n, na, nb, ja, jb, minv, lam, v)


@pytest.mark.parametrize("n", [3, 30])
@pytest.mark.parametrize("slide", [0.0, 1e-3])
def test_the_pyramid_solve_stops_a_stack_exactly(n: int, slide: float) -> None:
    """3 cubes (12 contacts) and 30 cubes (120 contacts), the top one at rest or pushed by less
    than friction can stop in one step (1e-3 m/s < μ g h): the solution on the pyramids sticks
    everywhere and meets the closed forms."""
    na, nb, ja, jb, minv, b, mu, v = _stack(n, slide)
    lam = pyramid_lcp(na, nb, ja, jb, np.linalg.cholesky(minv), b, mu, contact_islands(na, nb))
    _check_closed_forms(n, na, nb, ja, jb, minv, lam, v, slide)


def test_friction_near_the_cone_between_two_coarse_edges_sticks_on_the_fine_pyramid() -> None:
    """The top cube of 30 (120 contacts) slides at 0.99 μ g h in a direction halfway between two
    edges of the coarse pyramid (π/16 from x): Coulomb's law stops it in one step with friction
    0.99 μ m g h.  The coarse pyramid allows only ``μ cos(π/16)`` = 0.981 μ there, so its
    solution slips (the top cube still moving); on the fine pyramid (``μ cos(π/64)`` = 0.9988 μ)
    the solution sticks and meets the closed forms: what the hard body law's second pass on an
    island at rest relies on (kynemapy.run.hard_bodies, ``_sticking``)."""
    n, angle = 30, np.pi / 16
    slide = 0.99 * MU * G * H
    na, nb, ja, jb, minv, b, mu, v = _stack(n, slide, angle)
    chol, island = np.linalg.cholesky(minv), contact_islands(na, nb)
    coarse = pyramid_lcp(na, nb, ja, jb, chol, b, mu, island, PYRAMID_EDGES)
    assert np.linalg.norm(_after(na, nb, ja, jb, minv, coarse, v)[-1, :2]) > 1e-3 * slide
    lam = pyramid_lcp(na, nb, ja, jb, chol, b, mu, island, FINE_PYRAMID_EDGES)
    assert np.abs(_after(na, nb, ja, jb, minv, lam, v)).max() <= 1e-12
    weight = MASS * G * H
    for k in range(n):
        assert lam[nb == k, 0].sum() == pytest.approx((n - k) * weight, rel=1e-12)
    assert np.all(np.hypot(lam[:, 1], lam[:, 2]) <= MU * lam[:, 0] + 1e-12 * weight)
    top = lam[nb == n - 1, 1:].sum(axis=0)
    np.testing.assert_allclose(
        top, -MASS * slide * np.array([np.cos(angle), np.sin(angle)]), rtol=0, atol=1e-12 * weight
    )


def test_the_hard_body_law_takes_an_island_at_rest_on_the_fine_pyramid() -> None:
    """The same problem given to the hard body law's exact solve of islands at rest
    (``HardBodies._sticking``, the bodies at rest at the step's start): every contact is taken
    (its island sticks) with the closed-form impulses; the coarse pass alone would leave the island
    to the held-friction rounds, which let a resting pile creep (docs/contact.md)."""
    n, angle = 30, np.pi / 16
    slide = 0.99 * MU * G * H
    na, nb, ja, jb, minv, b, mu, v = _stack(n, slide, angle)
    builder = kp.ModelBuilder(gravity=(0.0, 0.0, -G))
    for k in range(n):
        node = builder.add_node(position=(0.0, 0.0, (2 * k + 1) * A))
        builder.add_mass(node, mass=MASS, inertia=(INERTIA, INERTIA, INERTIA))
        builder.add_box(node, (A, A, A))
    builder.add_ground_plane(law="hard", friction=MU)
    builder.set_body_contact(law="hard", friction=MU)
    bodies = kp.Simulation(builder.build(), kp.StepParameters(h=H)).joint_stops.bodies
    bodies._v_start = np.zeros((n, 6))  # at rest at the step's start
    lam = np.zeros((na.size, 3))
    stuck = bodies._sticking(
        na, nb, ja, jb, minv, np.linalg.cholesky(minv), b, mu, lam, contact_islands(na, nb), 0.0, "velocity jump"
    )  # fmt: skip
    assert np.all(stuck)
    assert np.abs(_after(na, nb, ja, jb, minv, lam, v)).max() <= 1e-12
    top = lam[nb == n - 1, 1:].sum(axis=0)
    weight = MASS * G * H
    np.testing.assert_allclose(
        top, -MASS * slide * np.array([np.cos(angle), np.sin(angle)]), rtol=0, atol=1e-12 * weight
    )


def test_the_pyramid_solve_of_a_sliding_cube_is_not_coulombs() -> None:
    """The top cube sliding at 1 m/s: the convex program's relaxation (a slipping point lifts off
    by μ |u_T|) throws the cubes upwards, which Coulomb's law never does (it keeps them on the
    ground, sliding): the solution does not stick, and the caller solves on."""
    na, nb, ja, jb, minv, b, mu, v = _stack(3, SLIDE)
    lam = pyramid_lcp(na, nb, ja, jb, np.linalg.cholesky(minv), b, mu, contact_islands(na, nb))
    after = _after(na, nb, ja, jb, minv, lam, v)
    assert np.all(after[:, 2] > 0.01)  # m/s, upwards


def test_nothing_pushing_gives_no_impulse() -> None:
    na, nb, ja, jb, minv, b, mu, _ = _stack(4)
    lam = np.ones((na.size, 3))
    c = na.size
    done = newton_contacts(
        na, nb, ja, jb, minv, np.zeros_like(b), mu, lam, np.empty((3, 3 * c, 3 * c)), np.empty((9, 3 * c)),
        np.empty((2, c, 6, 3)), 1e-12, 50,
    )  # fmt: skip
    assert done == (0, 0.0)
    assert np.all(lam == 0.0)


def _compiled_stops_at_start(mp: pytest.MonkeyPatch) -> dict[str, int]:
    """The compiled solver (:mod:`kynemapy.run.nnls`) made to stop at its start (z = 0), claiming
    an end: the fallbacks (scipy's solvers) are reached.  Returns its call count."""
    from kynemapy.run import nnls

    calls = {"compiled": 0}

    def stops(a: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
        calls["compiled"] += 1
        return np.zeros(a.shape[1]), True

    mp.setattr(nnls, "solve", stops)
    return calls


def test_a_least_squares_solve_stopped_short_is_finished() -> None:
    """Lawson and Hanson's method can stop with a basis of nearly dependent columns and no
    candidate left, far from the optimum (the 100-box pile at rest, docs/contact.md); that stop
    is recognised and the program finished.  Here the compiled solver and scipy's are made to
    stop at their start (z = 0) on every call: the 30-cube stack's problem on the pyramids still
    meets the closed forms, and the least-distance program's optimality conditions hold (checked
    here from its definition)."""
    import scipy.optimize

    n = 30
    na, nb, ja, jb, minv, b, mu, v = _stack(n, 1e-3)
    stopped = {"calls": 0}

    def stops_at_start(a: np.ndarray, e: np.ndarray, maxiter: int | None = None) -> tuple[np.ndarray, float]:
        stopped["calls"] += 1
        return np.zeros(a.shape[1]), float(np.linalg.norm(e))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scipy.optimize, "nnls", stops_at_start)
        _compiled_stops_at_start(mp)
        lam = pyramid_lcp(na, nb, ja, jb, np.linalg.cholesky(minv), b, mu, contact_islands(na, nb))
        rng = np.random.default_rng(7)
        a = np.vstack([rng.normal(size=(12, 40)), -rng.uniform(-0.2, 1.0, size=40)])
        z = least_distance(a)
    assert stopped["calls"] >= 2
    _check_closed_forms(n, na, nb, ja, jb, minv, lam, v, 1e-3)
    # min |a z − e| over z >= 0: the gradient aᵀ(a z − e) non-negative, zero where z > 0
    e = np.zeros(a.shape[0])
    e[-1] = 1.0
    grad = a.T @ (a @ z - e)
    assert np.all(z >= 0.0)
    assert grad.min() >= -body_blocks.OPTIMALITY_TOLERANCE
    assert np.abs(grad[z > 0.0]).max() <= body_blocks.OPTIMALITY_TOLERANCE


def test_a_least_squares_solve_that_stops_short_claiming_no_solution_is_finished() -> None:
    """A stop short of the optimum can also look like "no solution" (``r_last >= 0``: the
    program's last row met by a z far from the optimum).  Here scipy's solver is made to return
    such a z (one pyramid edge of a ground point, scaled past it): the column of 3 cubes, which
    has a solution, is still solved and meets the closed forms (the compiled solver stopped at
    its start first)."""
    import scipy.optimize

    n = 3
    na, nb, ja, jb, minv, b, mu, v = _stack(n, 1e-3)

    def stops_past_the_last_row(a: np.ndarray, e: np.ndarray, maxiter: int | None = None) -> tuple[np.ndarray, float]:
        z = np.zeros(a.shape[1])
        j = int(np.argmax(a[-1]))
        z[j] = 2.0 / a[-1, j]
        return z, float(np.linalg.norm(a @ z - e))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scipy.optimize, "nnls", stops_past_the_last_row)
        compiled = _compiled_stops_at_start(mp)
        lam = pyramid_lcp(na, nb, ja, jb, np.linalg.cholesky(minv), b, mu, contact_islands(na, nb))
    assert compiled["compiled"] >= 1
    assert lam is not None
    _check_closed_forms(n, na, nb, ja, jb, minv, lam, v, 1e-3)


def test_a_least_squares_solve_stopped_short_is_first_finished_on_scaled_columns() -> None:
    """Where the compiled solve and scipy's first stop short, scipy's second, on the columns
    scaled to unit length, finishes the program (the slower bounded-variable solve not called):
    the 30-cube stack still meets its closed forms."""
    import scipy.optimize

    n = 30
    na, nb, ja, jb, minv, b, mu, v = _stack(n, 1e-3)
    real = scipy.optimize.nnls
    calls = {"nnls": 0, "bvls": 0}

    def first_stops_at_start(a: np.ndarray, e: np.ndarray, maxiter: int | None = None) -> tuple[np.ndarray, float]:
        calls["nnls"] += 1
        if calls["nnls"] == 1:
            return np.zeros(a.shape[1]), float(np.linalg.norm(e))
        return real(a, e, maxiter=maxiter)

    def no_bvls(*args: object, **kwargs: object) -> None:
        calls["bvls"] += 1
        raise AssertionError("the bounded-variable solve was not needed")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scipy.optimize, "nnls", first_stops_at_start)
        mp.setattr(scipy.optimize, "lsq_linear", no_bvls)
        compiled = _compiled_stops_at_start(mp)
        lam = pyramid_lcp(na, nb, ja, jb, np.linalg.cholesky(minv), b, mu, contact_islands(na, nb))
    assert calls == {"nnls": 2, "bvls": 0}
    assert compiled == {"compiled": 1}
    _check_closed_forms(n, na, nb, ja, jb, minv, lam, v, 1e-3)


def test_a_refinement_step_that_worsens_the_rows_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The least-squares refinement of the normal solve's active multipliers made to overshoot
    (its step times −50, as its clipped step on many nearly dependent rows did: an island of the
    100-box pile on 64-edge pyramids went from rows at −6e-15 m to −1.7e-4 m in two steps): the
    step is refused, and the 3-cube stack's pyramid solve still meets its closed forms."""
    real = np.linalg.lstsq
    calls = []

    def overshoots(*args: object, **kwargs: object) -> tuple:
        out = real(*args, **kwargs)
        calls.append(1)
        return (-50.0 * out[0], *out[1:])

    monkeypatch.setattr(body_blocks.np.linalg, "lstsq", overshoots)
    n = 3
    na, nb, ja, jb, minv, b, mu, v = _stack(n, 1e-3)
    lam = pyramid_lcp(na, nb, ja, jb, np.linalg.cholesky(minv), b, mu, contact_islands(na, nb))
    monkeypatch.undo()
    assert calls  # the refinement was tried
    _check_closed_forms(n, na, nb, ja, jb, minv, lam, v, 1e-3)
