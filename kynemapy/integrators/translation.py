"""Centre-of-mass motion of a free body under a constant acceleration, in closed form.

The resultant force on the body is constant in these problems (gravity plus a constant world
force), so ``x(t) = x₀ + v₀ t + ½ a t²`` and ``v(t) = v₀ + a t`` are exact; they are evaluated at
every output time directly (nothing accumulates from step to step).  Solfec's half-step update
``x½ = xₙ + ½h vₙ, vₙ₊₁ = vₙ + h a, xₙ₊₁ = x½ + ½h vₙ₊₁`` gives the same values in exact arithmetic.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def ballistic(x0: FloatArray, v0: FloatArray, acceleration: FloatArray, t: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Position (n, 3) [m] and velocity (n, 3) [m/s] at the times ``t`` (n,) [s] after the initial state.

    ``x0`` (3,) [m], ``v0`` (3,) [m/s], ``acceleration`` (3,) [m/s²], constant.
    """
    tt = np.asarray(t, dtype=float)[:, None]
    x = x0 + v0 * tt + (0.5 * acceleration) * (tt * tt)
    v = v0 + acceleration * tt
    return x, v
