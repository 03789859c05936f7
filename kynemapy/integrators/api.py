"""``integrate``: one validating entry point to every rigid-body scheme of the subpackage."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kynemapy._jit import JIT_DISABLED

FloatArray = NDArray[np.float64]

SCHEMES: tuple[str, ...] = ("rig_pos", "rig_neg", "rig_imp", "liemid", "splitting", "dmv", "exact")
"""Scheme names accepted by :func:`integrate` (case-insensitive)."""

MOMENTUM_CONSERVING: tuple[str, ...] = ("rig_neg", "rig_imp", "liemid", "splitting", "dmv", "exact")
"""Schemes whose spatial angular momentum changes exactly by the applied torque impulses."""

ORTHONORMALITY_TOLERANCE = 1e-9


class IntegrationError(RuntimeError):
    """A step could not be taken (Newton iteration failed, or the state became non-finite)."""


@dataclass(frozen=True)
class Trajectory:
    """Sampled motion of one rigid body (arrays are read-only).

    Attributes
    ----------
    scheme : str
        The scheme's name (one of :data:`SCHEMES`).
    h : float
        The step size [s].
    t : (n,) ndarray of float64
        Output times [s] (``t0 + k h`` for the saved steps k).
    R : (n, 3, 3) ndarray of float64
        Body-to-world rotation matrices.
    W : (n, 3) ndarray of float64
        Body angular velocities [rad/s], body frame.
    x : (n, 3) ndarray of float64 or None
        Centre-of-mass position [m] of a free body; None for a body about a fixed point.
    v : (n, 3) ndarray of float64 or None
        Centre-of-mass velocity [m/s] of a free body; None for a body about a fixed point.
    inertia : (3,) ndarray of float64
        Principal moments of inertia [kg m²].
    newton_iterations : int
        Newton iterations over the whole run (0 for explicit schemes).
    """

    scheme: str
    h: float
    t: FloatArray
    R: FloatArray
    W: FloatArray
    x: FloatArray | None
    v: FloatArray | None
    inertia: FloatArray
    newton_iterations: int

    @property
    def body_momentum(self) -> FloatArray:
        """Body angular momentum ``Π = J W`` (n, 3) [kg m²/s], body frame."""
        return self.W * self.inertia

    @property
    def spatial_momentum(self) -> FloatArray:
        """Spatial angular momentum ``π = R J W`` (n, 3) [kg m²/s], world frame.

        About the fixed point, or the centre of mass of a free body.
        """
        return np.einsum("nij,nj->ni", self.R, self.body_momentum)

    @property
    def rotational_energy(self) -> FloatArray:
        """Rotational kinetic energy ``½ W·JW`` (n,) [J]."""
        return 0.5 * np.einsum("ni,ni->n", self.W, self.body_momentum)


def _vector3(name: str, value: ArrayLike) -> FloatArray:
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be 3 real numbers, got {value!r}") from exc
    if arr.shape != (3,):
        raise ValueError(f"{name} must have 3 components, got shape {np.shape(value)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr}")
    return arr


def _inertia(value: ArrayLike) -> FloatArray:
    arr = np.asarray(value, dtype=float)
    if arr.shape == (3, 3):
        if np.any(arr - np.diag(np.diag(arr)) != 0.0):
            raise ValueError(
                "inertia must be principal: give the 3 principal moments (body axes = principal axes); "
                "a (3, 3) inertia must be diagonal"
            )
        arr = np.diag(arr).copy()
    arr = _vector3("inertia", arr)
    if np.any(arr <= 0.0):
        raise ValueError(f"inertia must be positive [kg m²], got {arr}")
    return arr


def _rotation(value: ArrayLike) -> FloatArray:
    arr = np.asarray(value, dtype=float)
    if arr.shape == (4,):
        norm = np.linalg.norm(arr)
        if not np.isfinite(norm) or abs(norm - 1.0) > ORTHONORMALITY_TOLERANCE:
            raise ValueError(f"R0 given as a quaternion (w, x, y, z) must have unit norm, got |q| = {norm}")
        w, x, y, z = arr
        arr = np.array(
            [
                [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
            ]
        )
    if arr.shape != (3, 3):
        raise ValueError(f"R0 must be a (3, 3) rotation matrix or a (4,) unit quaternion, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("R0 must be finite")
    deviation = np.abs(arr.T @ arr - np.eye(3)).max()
    if deviation > ORTHONORMALITY_TOLERANCE:
        raise ValueError(f"R0 is not orthonormal: max |R0ᵀR0 − I| = {deviation:.3g} > {ORTHONORMALITY_TOLERANCE:g}")
    if np.linalg.det(arr) < 0.0:
        raise ValueError("R0 is a reflection (det R0 = −1), not a rotation")
    return np.ascontiguousarray(arr)


def _positive(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number, got {value!r}") from exc
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def _is_compiled(fn: Any) -> bool:
    from numba.core.dispatcher import Dispatcher

    return isinstance(fn, Dispatcher)


def _splitting_axes(axes: Sequence[int] | None, inertia: FloatArray) -> NDArray[np.int64]:
    if axes is None:
        order = np.argsort(inertia, kind="stable")  # smallest, middle, largest
        return np.array([order[0], order[1], order[2]], dtype=np.int64)
    arr = np.asarray(axes)
    if arr.shape != (3,) or sorted(int(a) for a in arr) != [0, 1, 2]:
        raise ValueError(f"splitting_axes must be a permutation of (0, 1, 2), got {axes!r}")
    return arr.astype(np.int64)


def integrate(
    scheme: str,
    inertia: ArrayLike,
    R0: ArrayLike,
    W0: ArrayLike,
    h: float,
    t_end: float,
    *,
    force: ArrayLike | None = None,
    force_point: ArrayLike | None = None,
    torque: Callable[..., None] | None = None,
    torque_params: ArrayLike | None = None,
    gravity: ArrayLike | None = None,
    x0: ArrayLike | None = None,
    v0: ArrayLike | None = None,
    mass: float | None = None,
    t0: float = 0.0,
    every: int = 1,
    splitting_axes: Sequence[int] | None = None,
) -> Trajectory:
    """Integrate one rigid body with a rigid-body scheme; steps of exactly ``h`` from ``t0``.

    The body turns about a fixed point, or is free (``x0``, ``v0`` or ``gravity`` given) and turns
    about its centre of mass while the centre of mass moves with the constant acceleration
    ``gravity + force/mass``, which is integrated exactly.

    Parameters
    ----------
    scheme : str
        One of :data:`SCHEMES`: ``"rig_pos"``, ``"rig_neg"``, ``"rig_imp"`` (Solfec),
        ``"liemid"`` (Krysl), ``"splitting"`` (free-rotation splitting with torque kicks),
        ``"dmv"`` (discrete Moser–Veselov), ``"exact"`` (Jacobi/Celledoni exact flow;
        torque-free bodies only).
    inertia : (3,) or (3, 3) array_like of float
        Principal moments of inertia [kg m²] about the fixed point or the centre of mass
        (body axes are principal axes), or a diagonal (3, 3) matrix of them.
    R0 : (3, 3) or (4,) array_like of float
        Initial body-to-world rotation matrix, or unit quaternion (w, x, y, z).
    W0 : (3,) array_like of float
        Initial body angular velocity [rad/s], body frame.
    h : float
        The step size [s], > 0.
    t_end : float
        The final time [s]; ``n = floor((t_end − t0)/h)`` steps are taken (last time
        ``t0 + n h``).
    force : (3,) array_like of float or None, default None
        A constant world-frame force [N] acting at ``force_point``.
    force_point : (3,) array_like of float or None, default None
        Body-frame point [m] of ``force``, relative to the fixed point or the centre of mass
        (None: that origin, i.e. no torque).
    torque : callable or None, default None
        A ``numba.njit`` function ``torque(t, R, params, out) -> None`` writing a body-frame
        torque [N m] into ``out`` (3,) for the rotation ``R`` (3, 3) at time ``t`` [s]; added to the
        torque of ``force``.  Called through its address by the schemes' one compiled loop, so
        that nothing but the function itself compiles for it (cached on disk where it is
        ``numba.njit(cache=True)``; the loop is cached whatever the torque).
    torque_params : (k,) array_like of float or None, default None
        Constants passed to ``torque`` as ``params``.
    gravity : (3,) array_like of float or None, default None
        Gravitational acceleration [m/s²] of a free body (acts at the centre of mass).
    x0 : (3,) array_like of float or None, default None
        Initial centre-of-mass position [m] of a free body (None: 0).
    v0 : (3,) array_like of float or None, default None
        Initial centre-of-mass velocity [m/s] of a free body (None: 0).
    mass : float or None, default None
        The body's mass [kg]; required when ``force`` acts on a free body (its linear
        acceleration).
    t0 : float, default 0.0
        The initial time [s] (matters to time-dependent torques).
    every : int, default 1
        Save every ``every``-th step (the initial state is always saved).
    splitting_axes : sequence of int or None, default None
        ``"splitting"`` only: axis order ``(a, b, c)`` of
        ``R_a(h/2) R_b(h/2) R_c(h) R_b(h/2) R_a(h/2)`` (None: smallest, middle, largest
        inertia).

    Returns
    -------
    Trajectory
        ``t`` (n,) [s], ``R`` (n, 3, 3), ``W`` (n, 3) [rad/s] and, for a free body, ``x``
        [m], ``v`` [m/s] (n, 3).

    Raises
    ------
    ValueError
        Invalid input (unknown scheme, non-positive inertia or h, R0 not a rotation, a
        torque with ``"exact"``, a torque function that fails, writes a non-finite torque or
        returns a value, ...).
    IntegrationError
        A Newton iteration failed (step too large) or the state became non-finite.
    """
    if not isinstance(scheme, str) or scheme.lower() not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; valid schemes: {', '.join(SCHEMES)}")
    scheme = scheme.lower()
    J = _inertia(inertia)
    R_init = _rotation(R0)
    W_init = _vector3("W0", W0)
    h = _positive("h", h)
    t0 = float(t0)
    if not math.isfinite(t0):
        raise ValueError(f"t0 must be finite, got {t0!r}")
    try:
        span = float(t_end) - t0
    except (TypeError, ValueError) as exc:
        raise ValueError(f"t_end must be a real number, got {t_end!r}") from exc
    if not (math.isfinite(span) and span >= 0.0):
        raise ValueError(f"t_end must be finite and >= t0 = {t0}, got {t_end!r}")
    if isinstance(every, bool) or not isinstance(every, int | np.integer) or every < 1:
        raise ValueError(f"every must be a positive integer, got {every!r}")
    n_steps = math.floor(span / h + 1e-9)
    if n_steps > 2_000_000_000:
        raise ValueError(f"(t_end − t0)/h = {n_steps} steps is too many")

    if force_point is not None and force is None:
        raise ValueError("force_point given without force")
    f = np.zeros(3) if force is None else _vector3("force", force)
    p = np.zeros(3) if force_point is None else _vector3("force_point", force_point)
    force_params = np.concatenate([f, p])
    if torque_params is not None and torque is None:
        raise ValueError("torque_params given without torque")
    torque_fn = None  # the loop's variant without a user torque (a first-class function otherwise)
    if torque is not None:
        if not callable(torque) or not (JIT_DISABLED or _is_compiled(torque)):
            raise ValueError("torque must be a numba.njit-compiled function torque(t, R, params, out)")
        try:
            tparams = np.ascontiguousarray(np.array([] if torque_params is None else torque_params, dtype=float))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"torque_params must be real numbers, got {torque_params!r}") from exc
        if tparams.ndim != 1:
            raise ValueError(f"torque_params must be one-dimensional, got shape {tparams.shape}")
        _probe_torque(torque, t0, R_init, tparams)
        from kynemapy.integrators.torques import first_class

        torque_fn = first_class(torque)  # (checks the return type: None)

    free = x0 is not None or v0 is not None or gravity is not None
    if mass is not None:
        mass = _positive("mass", mass)
    if free and force is not None and mass is None:
        raise ValueError("a force on a free body needs its mass (its centre-of-mass acceleration is force/mass)")
    if not free and mass is not None:
        raise ValueError("mass is only used for a free body (give x0, v0 or gravity)")

    if scheme == "exact":
        if torque is not None or (np.any(p != 0.0) and np.any(f != 0.0)):
            raise ValueError("scheme 'exact' is the torque-free flow: it takes no torque and no force off the origin")
    elif splitting_axes is not None and scheme != "splitting":
        raise ValueError("splitting_axes applies to scheme 'splitting' only")

    n_out = n_steps // every + 1
    t = t0 + h * (every * np.arange(n_out, dtype=float))
    newton_iterations = 0
    if scheme == "exact":
        R, W = _exact(J, R_init, W_init, t - t0)
    else:
        iopts = _splitting_axes(splitting_axes, J) if scheme == "splitting" else np.zeros(3, dtype=np.int64)
        R, W, newton_iterations = _run_kernel(
            scheme,
            torque_fn,
            None if torque is None else tparams,
            force_params,
            J,
            iopts,
            t0,
            h,
            n_steps,
            every,
            R_init,
            W_init,
        )

    x = v = None
    if free:
        from kynemapy.integrators.translation import ballistic

        acceleration = np.zeros(3) if gravity is None else _vector3("gravity", gravity)
        if force is not None and mass is not None:
            acceleration = acceleration + f / mass
        x_init = np.zeros(3) if x0 is None else _vector3("x0", x0)
        v_init = np.zeros(3) if v0 is None else _vector3("v0", v0)
        x, v = ballistic(x_init, v_init, acceleration, t - t0)
    for arr in (t, R, W, x, v, J):
        if arr is not None:
            arr.setflags(write=False)
    return Trajectory(scheme, h, t, R, W, x, v, J, newton_iterations)


def _exact(J: FloatArray, R0: FloatArray, W0: FloatArray, tau: FloatArray) -> tuple[FloatArray, FloatArray]:
    from kynemapy.analytic.free_body import free_body_flow

    return free_body_flow(J, R0, W0, tau)


def _probe_torque(torque: Callable[..., None], t0: float, R0: FloatArray, params: FloatArray) -> None:
    """Call the user's torque once, so that a wrong signature is reported plainly, not from inside a loop."""
    out = np.zeros(3)
    try:
        torque(t0, R0.copy(), params, out)
    except Exception as exc:  # numba TypingError, or any error of the user's function
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            "torque(t, R, params, out) failed for t: float, R: (3, 3) float64, params: (k,) float64, "
            f"out: (3,) float64: {type(exc).__name__}: {first}"
        ) from exc
    if not np.all(np.isfinite(out)):
        raise ValueError(f"torque(t0, R0, params, out) wrote a non-finite torque {out}")


def _run_kernel(
    scheme: str,
    torque_fn: Any,
    tparams: FloatArray | None,
    force_params: FloatArray,
    J: FloatArray,
    iopts: NDArray[np.int64],
    t0: float,
    h: float,
    n_steps: int,
    every: int,
    R0: FloatArray,
    W0: FloatArray,
) -> tuple[FloatArray, FloatArray, int]:
    import kynemapy.engine.notice  # noqa: F401  (a first compilation of the schemes says so on stderr)
    from kynemapy.integrators import drive

    n_out = n_steps // every + 1
    R_out = np.empty((n_out, 3, 3))
    W_out = np.empty((n_out, 3))
    R_out[0] = R0
    W_out[0] = W0
    state = np.zeros((4, 3))
    work = np.zeros((7, 3, 3))
    vwork = np.zeros((8, 3))
    counters = np.zeros(2, dtype=np.int64)
    code = drive.run_scheme(
        drive.SCHEMES.index(scheme), torque_fn,
        np.zeros(0) if tparams is None else tparams, force_params, J, iopts, t0, h, n_steps, every, R_out, W_out,
        state, work, vwork, counters,
    )  # fmt: skip
    if code != drive.DONE:
        k = int(counters[0])
        when = f"step {k} (t = {t0 + k * h:.6g} → {t0 + (k + 1) * h:.6g} s)"
        if code == drive.NEWTON_FAILED:
            raise IntegrationError(f"{scheme}: the Newton iteration did not converge in {when}; reduce h = {h:g}")
        raise IntegrationError(
            f"{scheme}: the state became non-finite in {when}: unstable at h = {h:g} (reduce it), "
            "or the torque returned inf/NaN"
        )
    return R_out, W_out, int(counters[1])
