"""A dependency-free text progress bar for long runs (written to stderr)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from kynemapy.engine.notice import OPEN_LINE


class ProgressBar:
    """``[#####.....]  45.0%  t = 0.36 / 0.8 s  step 180/400  12 345 steps/s  ETA 3 s``.

    Redraws at most every ``interval`` seconds (always on :meth:`close`).
    """

    def __init__(
        self, total_steps: int, h: float, stream: TextIO | None = None, interval: float = 0.2, unit: str = "step"
    ) -> None:
        self.total = max(int(total_steps), 1)
        self.unit = unit  # what is counted: "step", or "row" for a step-controlled run (its rows are no steps)
        self.h = float(h)
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.start = time.perf_counter()
        self.last = -1.0
        self.done = 0
        self.t0 = 0.0

    def update(self, steps_done: int, t: float, force: bool = False) -> None:
        """Report ``steps_done`` steps of this run completed, simulated time ``t`` [s]."""
        self.done = steps_done
        now = time.perf_counter()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        frac = min(steps_done / self.total, 1.0)
        width = 30
        filled = round(frac * width)
        elapsed = now - self.start
        rate = steps_done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - steps_done) / rate if rate > 0 else float("inf")
        eta_text = f"ETA {eta:.0f} s" if eta != float("inf") else "ETA ?"
        line = (
            f"\r[{'#' * filled}{'.' * (width - filled)}] {100 * frac:5.1f}%  t = {t:.6g} s  "
            f"{self.unit} {steps_done}/{self.total}  {rate:,.0f} {self.unit}s/s  {eta_text}   "
        )
        self.stream.write(line)
        self.stream.flush()
        if self.stream is sys.stderr:  # a compile notice starts a line of its own (engine.notice)
            OPEN_LINE.open = True

    def close(self, t: float) -> None:
        """Final redraw and newline."""
        self.update(self.done, t, force=True)
        self.stream.write("\n")
        self.stream.flush()
        if self.stream is sys.stderr:
            OPEN_LINE.open = False
