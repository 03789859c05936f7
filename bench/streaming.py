"""Benchmark: cost of streaming every step to HDF5, heavy top, in one process.

Runs the heavy top (h = 2 ms) for 65 536 steps with ``Simulation.run`` three ways —
no output, output every step, output every 10th step — and prints the µs per step
(median of 5 runs after a warm-up) and the streaming overhead.  Target: output every
step costs at most 20 % more than no output.

Run:  python bench/streaming.py
"""

from __future__ import annotations

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

N_STEPS = 65_536
RUNS = 5


def timed(model: kp.Model, params: kp.StepParameters, output: Path | None, every: int, block: int | None) -> float:
    sim = kp.Simulation(model, params)
    t = time.perf_counter()
    sim.run(n_steps=N_STEPS, output=output, every=every, block=block)
    return (time.perf_counter() - t) / N_STEPS * 1e6


def main() -> None:
    print(f"machine: {machine()}")
    model, _ = build_heavy_top()
    params = kp.StepParameters(h=0.002, rho_inf=0.9, max_iter=10)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.h5"
        timed(model, params, out, 1, None)  # warm-up (compilation or cache load)
        cases = {
            "no output": (None, 1, None),
            "every step (default block)": (out, 1, None),
            "every step, block 1024": (out, 1, 1024),
            "every 10th step": (out, 10, None),
        }
        results = {}
        for name, (path, every, block) in cases.items():
            results[name] = statistics.median(timed(model, params, path, every, block) for _ in range(RUNS))
        base = results["no output"]
        print(f"heavy top, {N_STEPS} steps, median of {RUNS} runs")
        for name, us in results.items():
            extra = "" if name == "no output" else f"  (+{100 * (us / base - 1):.1f} % vs no output)"
            print(f"  {name:28s} {us:6.2f} µs/step{extra}")


if __name__ == "__main__":
    main()
