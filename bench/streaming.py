"""Benchmark: cost of streaming every step to HDF5, heavy top, in one process.

Runs the heavy top (h = 2 ms) for ``--steps`` steps (default 65 536) with
``Simulation.run``: no output, output every step (default block, and block 1024), output
every 10th step.  Each output run is paired with a no-output run taken right before it,
so that both see the same machine load; the overhead is the median over the pairs of
(output time / no-output time − 1), the µs/step the median of each case (9 pairs after a
warm-up, compilation excluded).  Also printed: the fixed cost of one output file (a run
of 0 steps: create the file and its model tables, write the initial row, close).
Targets: output every step costs at most 10 % more than no output on a quiet machine, at
most 20 % beside a running test suite.  The load average is printed before and after:
on a shared machine the other processes decide which of the two the numbers are.

Run:  python bench/streaming.py [--steps N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _machine import machine
from heavy_top import build_heavy_top

import kynemapy as kp
from kynemapy.run.loop import auto_block


def timed(
    model: kp.Model, params: kp.StepParameters, n_steps: int, output: Path | None, every: int, block: int | None
) -> float:
    """Wall time of one ``run`` [s] (the Simulation is made before the clock starts).

    The output is a new file each time; it is deleted after the clock stops (removing the
    previous run's file is the file system's cost, not the streaming's).
    """
    sim = kp.Simulation(model, params)
    t = time.perf_counter()
    sim.run(n_steps=n_steps, output=output, every=every, block=block)
    elapsed = time.perf_counter() - t
    if output is not None:
        output.unlink()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=65_536, help="steps per run (default 65536)")
    parser.add_argument("--runs", type=int, default=9, help="pairs of runs per case (default 9)")
    args = parser.parse_args()
    n = args.steps
    print(f"machine: {machine()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    model, _ = build_heavy_top()
    params = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.h5"
        timed(model, params, n, out, 1, None)  # warm-up (compilation or cache load)
        timed(model, params, n, None, 1, None)
        fixed = statistics.median(timed(model, params, 0, Path(tmp) / f"empty{i}.h5", 1, None) for i in range(5))
        cases = {
            f"every step (block {auto_block(kp.Simulation(model, params).workspace.row_layout.width)})": (1, None),
            "every step, block 1024": (1, 1024),
            "every 10th step": (10, None),
        }
        print(f"heavy top, {n} steps per run, {args.runs} pairs (no output, output) per case, medians [µs/step]")
        print(f"  one output file, 0 steps (create, row 0, close): {1e3 * fixed:.1f} ms")
        print(f"  {'case':28s} {'no output':>9s} {'output':>8s}  overhead: median over the pairs [min, max]")
        for name, (every, block) in cases.items():
            base, streamed = [], []
            for _ in range(args.runs):
                base.append(timed(model, params, n, None, 1, None))
                streamed.append(timed(model, params, n, out, every, block))
            extras = [s / b - 1 for s, b in zip(streamed, base, strict=True)]
            extra = statistics.median(extras)
            us_base = 1e6 * statistics.median(base) / n
            us_out = 1e6 * statistics.median(streamed) / n
            spread = f"[{100 * min(extras):+.1f}, {100 * max(extras):+.1f}]"
            print(f"  {name:28s} {us_base:9.2f} {us_out:8.2f}  {100 * extra:+.1f} % {spread}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
