"""int64 and bool constants for the arguments of compiled calls inside compiled code.

numba types a literal constant passed to a compiled call inside compiled code (``f(out, 0)``,
``g(x, True)``, or a variable just set to ``0`` before a loop that calls ``f(out, k)``) as a
literal type of that value, and compiles the callee once for each value it meets: the
hard-contact kernels had been compiled two to four times each (docs/engine.md, "One signature
per kernel").  These module-level numpy scalars are typed int64 and bool, as the values a Python
caller passes are, so every call site shares one compilation.
"""

from __future__ import annotations

import numpy as np

ZERO, ONE, TWO = np.int64(0), np.int64(1), np.int64(2)
TRUE, FALSE = np.bool_(True), np.bool_(False)
