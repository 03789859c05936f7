"""Benchmark: an ensemble of heavy tops, ``kp.Batch`` against a Python loop over Simulations.

M heavy tops (Kynema's model, each with its own constant load), N steps each (default
1000 × 1000).  Three ways, interleaved over ``--rounds`` rounds after a warm-up (the
first-call time, compilation or cache load, is reported apart), medians printed:

* loop: ``for sim in sims: sim.advance(N)`` (one compiled call per member, one thread);
* batch, 1 thread: ``kp.Batch(sims).advance(N, threads=1)`` (one compiled call in all);
* batch: ``kp.Batch(sims).advance(N)`` (one thread per core, each one compiled call over
  its share of the members, without the GIL).

Prints members per second and the ratios.  Expected scaling: the members are independent and
each member's data (a few kB) stays in its core's cache, so the batch's speed grows with the
number of cores until memory bandwidth (copying the members' arenas in and out, about
10 kB per member per call) or the core count limits it: close to linear up to 64 cores for
this model, since a member's 1000 steps (about 3 ms) dwarf its copy.

Run:  python bench/batch.py [--members M] [--steps N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp

PARAMS = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10, atol=1e-5, rtol=1e-3)


def members(model: kp.Model, top: int, m: int) -> list[kp.Simulation]:
    sims = []
    for k in range(m):
        sim = kp.Simulation(model, PARAMS)
        sim.set_load(top, force=(1e-3 * k, 0.0, 0.0), moment=(0.0, 0.0, 0.0))
        sims.append(sim)
    return sims


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    model, top = build_heavy_top()
    print(machine())
    print(f"{args.members} heavy tops × {args.steps} steps (h = 2 ms), {args.rounds} interleaved rounds, medians")

    start = time.perf_counter()
    warm = members(model, top, 4)
    warm[0].advance(2)
    kp.Batch(warm).advance(2, threads=2)
    print(f"first calls (compilation or cache load): {time.perf_counter() - start:.2f} s")

    start = time.perf_counter()
    sims = members(model, top, args.members)
    print(f"building {args.members} simulations: {time.perf_counter() - start:.2f} s")
    times: dict[str, list[float]] = {"loop": [], "batch, 1 thread": [], "batch": []}
    for _ in range(args.rounds):
        t = time.perf_counter()
        for sim in sims:
            sim.advance(args.steps)
        times["loop"].append(time.perf_counter() - t)
        t = time.perf_counter()
        info = kp.Batch(sims).advance(args.steps, threads=1)
        times["batch, 1 thread"].append(time.perf_counter() - t)
        assert (info.status == 0).all()
        t = time.perf_counter()
        info = kp.Batch(sims).advance(args.steps)
        times["batch"].append(time.perf_counter() - t)
        assert (info.status == 0).all()
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        rate = args.members / v
        per_step = v / (args.members * args.steps) * 1e6
        print(f"  {k:16s} {v:7.3f} s   {rate:8.1f} members/s   {per_step:6.3f} µs per member-step")
    print(f"batch / loop: {med['loop'] / med['batch']:.2f}× members per second")
    print(f"batch, 1 thread / loop: {med['loop'] / med['batch, 1 thread']:.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
