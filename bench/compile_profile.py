"""Benchmark: where a first compilation's time goes, compiled function by compiled function.

Runs a script (default ``examples/heavy_top.py``) in a fresh process against a new, empty numba
cache, every unit compiled in that one process (``KYNEMAPY_COMPILE_JOBS=1``), and records numba's
``numba:compile`` events (numba's documented event API) with the process's CPU time at each.
Printed: the process's CPU time, and per compiled function its own CPU time (its typing, lowering
and LLVM work, without the functions it compiled on the way) and its time with them, the largest
first.  A function inlined at numba-IR level (``njit(inline=True)``) has no event of its own: its
cost is in its callers'.

Use it to see which kernels a change makes dearer or cheaper to compile; the totals of two
single runs differ by several seconds on a shared 2-core machine (docs/performance.md), so
compare a function's own figure over a few runs.

Run:  python bench/compile_profile.py [script] [--top N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine

ROOT = Path(__file__).resolve().parents[1]

#: the child process: the script run under a recorder of numba's compile events
CHILD = textwrap.dedent(
    """
    import collections, pathlib, runpy, sys, time
    from numba.core import event

    class Recorder(event.Listener):
        # each compile event with the process's CPU time [s] at it (not the wall clock, which
        # other processes on the machine would stretch)

        def __init__(self):
            self.buffer = []

        def on_start(self, ev):
            self.buffer.append((time.process_time(), ev))

        def on_end(self, ev):
            self.buffer.append((time.process_time(), ev))

    script, top = sys.argv[1], int(sys.argv[2])
    sys.argv = [script]
    sys.path.insert(0, str(pathlib.Path(script).resolve().parent))  # the script's own imports
    recorder = Recorder()
    start = time.process_time()
    with event.install_listener("numba:compile", recorder):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit:
            pass
    cpu = time.process_time() - start
    stack, own, whole, count = [], collections.Counter(), collections.Counter(), collections.Counter()
    for timestamp, ev in recorder.buffer:
        dispatcher = (ev.data or {}).get("dispatcher")
        function = getattr(dispatcher, "py_func", None)
        name = f"{function.__module__}.{function.__qualname__}" if function is not None else str(dispatcher)
        if ev.is_start:
            stack.append([name, timestamp, 0.0])
            continue
        name, began, inner = stack.pop()
        seconds = timestamp - began
        own[name] += seconds - inner
        whole[name] += seconds
        count[name] += 1
        if stack:
            stack[-1][2] += seconds
    print(f"process CPU {cpu:.1f} s; {sum(count.values())} compilations, {sum(own.values()):.1f} s of CPU in all")
    print(f"{'own s':>7} {'with callees s':>15}  compiled function (CPU)")
    for name, seconds in own.most_common(top):
        times = f" (x{count[name]})" if count[name] > 1 else ""
        print(f"{seconds:7.2f} {whole[name]:15.2f}  {name}{times}")
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", nargs="?", default=str(ROOT / "examples" / "heavy_top.py"))
    parser.add_argument("--top", type=int, default=30, help="functions printed (default 30)")
    args = parser.parse_args()
    script = Path(args.script).resolve()
    if not script.is_file():
        parser.error(f"no such script: {args.script}")
    print(f"machine: {machine()}")
    print(f"script: {script} (empty numba cache, one compiling process)")
    with tempfile.TemporaryDirectory(prefix="kynemapy-compile-profile-") as tmp:
        env = dict(
            os.environ,
            NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
            XDG_CACHE_HOME=os.path.join(tmp, "xdg"),
            KYNEMAPY_COMPILE_JOBS="1",
        )
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(script), str(max(1, args.top))],
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
        )
    report = done.stdout[done.stdout.find("process CPU") :] if "process CPU" in done.stdout else ""
    if done.returncode != 0 or not report:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise SystemExit(f"the script failed (exit {done.returncode}):\n{tail}")
    print(report, end="")


if __name__ == "__main__":
    main()
