"""Describe the machine a benchmark ran on."""

from __future__ import annotations

import os
import platform

import numba
import numpy as np


def machine() -> str:
    """CPU model, core count, OS, Python, numpy and numba versions, one line."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}"
    )
