"""Benchmark: the broad phase's cost per body at N = 100, 1000, 10000 random boxes.

N boxes (half extents uniform in [0.05, 0.25] m, random orientations) at uniform random
positions in a cube whose side grows as N^(1/3) (a constant density: about the same number of
neighbours per box at every N), margin 0.01 m.  Timed (``time.perf_counter``, median of
``--rounds`` after a warm-up):

* ``aabb``: the world AABBs (:func:`kynemapy.collision.broad.aabbs`);
* ``sap``: the sweep and prune with a fresh ``numpy.argsort`` (:func:`candidate_pairs`);
* ``sap, warm``: the same after the boxes moved a little, sorted by insertion from the
  previous order;
* ``narrow``: the narrow phase over the candidate pairs.

The table gives µs per body and the ratio to N = 100: a linear cost keeps the ratio near 1
(``N log N`` sorting: log(N)/log(100)).  Run: ``python bench/collision.py [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kynemapy.collision.broad import aabbs, candidate_pairs, sweep_axis
from kynemapy.collision.query import narrow_pairs


def scene(n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    side = 1.2 * n ** (1 / 3)
    kind = np.full(n, 2, dtype=np.int64)
    dims = rng.uniform(0.05, 0.25, (n, 3))
    pos = rng.uniform(0, side, (n, 3))
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1)[:, None]
    node = np.arange(n, dtype=np.int64)
    ones = np.ones(n, dtype=np.int64)
    return kind, dims, pos, quat, node, ones, -ones


def median_time(f, rounds: int) -> float:
    f()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def measure(n: int, rng: np.random.Generator, rounds: int) -> tuple:
    """One row of the table: N, pairs and the four times [s]."""
    kind, dims, pos, quat, node, group, mask = scene(n, rng)
    lo, hi = np.zeros((n, 3)), np.zeros((n, 3))
    aabbs(kind, dims, pos, quat, 0.01, lo, hi)
    t_aabb = median_time(lambda: aabbs(kind, dims, pos, quat, 0.01, lo, hi), rounds)
    t_sap = median_time(lambda: candidate_pairs(lo, hi, node, group, mask), rounds)
    order = np.argsort(lo[:, sweep_axis(lo)]).astype(np.int64)
    pos2 = pos + rng.normal(scale=0.005, size=pos.shape)
    lo2, hi2 = np.zeros((n, 3)), np.zeros((n, 3))
    aabbs(kind, dims, pos2, quat, 0.01, lo2, hi2)

    def warm() -> None:
        candidate_pairs(lo2, hi2, node, group, mask, order=order.copy())

    t_warm = median_time(warm, rounds)
    pairs = candidate_pairs(lo, hi, node, group, mask)
    out = np.zeros((8 * len(pairs) + 8, 10))
    owner = np.zeros(out.shape[0], dtype=np.int64)
    poly = np.zeros((2, 16, 3))
    t_narrow = median_time(lambda: narrow_pairs(kind, dims, pos, quat, pairs, 0.01, poly, out, owner), rounds)
    return n, len(pairs), t_aabb, t_sap, t_warm, t_narrow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    rows = [measure(n, rng, args.rounds) for n in (100, 1000, 10000)]
    print(f"{'N':>6} {'pairs':>6} {'aabb µs/body':>13} {'sap µs/body':>12} {'ratio':>6} {'warm µs/body':>13} "
          f"{'ratio':>6} {'narrow µs/body':>15}")  # fmt: skip
    base = rows[0]
    for n, p, ta, ts, tw, tn in rows:
        print(f"{n:>6} {p:>6} {1e6 * ta / n:>13.3f} {1e6 * ts / n:>12.3f} {ts / n / (base[3] / base[0]):>6.2f} "
              f"{1e6 * tw / n:>13.3f} {tw / n / (base[4] / base[0]):>6.2f} {1e6 * tn / n:>15.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
