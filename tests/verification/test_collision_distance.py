"""Narrow phase against an independent distance: scipy SLSQP on the parametrized solids."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from kynemapy.collision.narrow import BOX, CAPSULE, SPHERE, collide

DIMS = {SPHERE: [0.3, 0, 0], CAPSULE: [0.2, 0.6, 0], BOX: [0.4, 0.3, 0.5]}


def rotm(q):
    w, x, y, z = q
    return np.array([
        [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
    ])  # fmt: skip


def point(kind, p, r, d, v):
    """A point of the solid from 4 parameters v: sphere/capsule: axis t, ball u; box: cube s."""
    if kind == BOX:
        return p + r @ (np.asarray(d) * v[:3])
    h = d[1] if kind == CAPSULE else 0.0
    return p + r @ np.array([0, 0, h * v[3]]) + d[0] * v[:3]


def distance(ka, pa, ra, da, kb, pb, rb, db):
    """min |x_A − x_B| over both solids (a convex problem: SLSQP from several starts)."""

    def f(v):
        diff = point(ka, pa, ra, da, v[:4]) - point(kb, pb, rb, db, v[4:])
        return diff @ diff

    cons = []
    for k, off in ((ka, 0), (kb, 4)):
        if k != BOX:
            cons.append({"type": "ineq", "fun": lambda v, o=off: 1.0 - v[o : o + 3] @ v[o : o + 3]})
    bounds = [(-1, 1)] * 8
    best = np.inf
    rng = np.random.default_rng(0)
    for _ in range(4):
        res = minimize(f, rng.uniform(-0.5, 0.5, 8), method="SLSQP", bounds=bounds, constraints=cons,
                       options={"ftol": 1e-16, "maxiter": 500})  # fmt: skip
        best = min(best, res.fun)
    return np.sqrt(max(best, 0.0))


@pytest.mark.slow
@pytest.mark.parametrize("ka", [SPHERE, CAPSULE, BOX])
@pytest.mark.parametrize("kb", [SPHERE, CAPSULE, BOX])
def test_separated_gap_is_the_distance(ka, kb):
    rng = np.random.default_rng(11 + 3 * ka + kb)
    checked = 0
    while checked < 12:
        qa, qb = rng.normal(size=4), rng.normal(size=4)
        qa, qb = qa / np.linalg.norm(qa), qb / np.linalg.norm(qb)
        pa = rng.uniform(-0.3, 0.3, 3)
        pb = pa + rng.normal(size=3) * 0.9
        out = np.zeros((16, 10))
        n = collide(ka, pa, qa, np.array(DIMS[ka], float), kb, pb, qb, np.array(DIMS[kb], float), 10.0, out,
                    np.zeros((2, 16, 3)))  # fmt: skip
        assert n >= 1
        gap = out[:n, 9].min()
        if gap <= 1e-3:
            continue  # overlapping: the distance is zero there
        ref = distance(ka, pa, rotm(qa), DIMS[ka], kb, pb, rotm(qb), DIMS[kb])
        assert gap == pytest.approx(ref, abs=1e-6)
        checked += 1
