"""Configuration-dependent body torques for the rigid-body schemes.

A torque function has the signature ``torque(t, R, params, out) -> None``:

* ``t`` : float, time [s];
* ``R`` : (3, 3) float64, body-to-world rotation at which the torque is wanted;
* ``params`` : (k,) float64, the function's own constants (``torque_params`` of ``integrate``);
* ``out`` : (3,) float64, written with the torque about the fixed point (or the centre of mass)
  in **body** coordinates [N m].

User torque functions must be compiled with ``numba.njit`` and allocate nothing.  The built-in
load is a constant world-frame force at a body point (:func:`point_force_torque`); every seed
case is of this kind (gravity on a top is the force ``m g`` at the centre of mass).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import types

from kynemapy._jit import JIT_DISABLED, njit

#: the numba signature of every torque function as the loops call it:
#: ``torque(t: float64, R: float64[:, ::1], params: float64[::1], out: float64[::1]) -> None``
TORQUE_SIGNATURE = types.void(types.float64, types.float64[:, ::1], types.float64[::1], types.float64[::1])


@njit
def point_force_torque(t, R, force_params, out):
    """Body torque ``p × (Rᵀ f)`` [N m] of a constant world force ``f`` at the body point ``p``.

    A numba kernel with the signature of :func:`integrate`'s ``torque``.

    Parameters
    ----------
    t : float
        The time [s]; unused (the force is constant).
    R : (3, 3) ndarray of float64
        The body-to-world rotation matrix.
    force_params : (6,) ndarray of float64
        ``(f_x, f_y, f_z, p_x, p_y, p_z)``: the force ``f`` [N] in world coordinates and the
        point ``p`` [m] in body coordinates, relative to the fixed point (or the centre of
        mass).
    out : (3,) ndarray of float64
        Receives the body-frame torque [N m].
    """
    fx = R[0, 0] * force_params[0] + R[1, 0] * force_params[1] + R[2, 0] * force_params[2]
    fy = R[0, 1] * force_params[0] + R[1, 1] * force_params[1] + R[2, 1] * force_params[2]
    fz = R[0, 2] * force_params[0] + R[1, 2] * force_params[1] + R[2, 2] * force_params[2]
    px, py, pz = force_params[3], force_params[4], force_params[5]
    out[0] = py * fz - pz * fy
    out[1] = pz * fx - px * fz
    out[2] = px * fy - py * fx


@njit(inline=True)
def body_torque(torque_fn, torque_params, force_params, t, R, out, tmp):
    """``out`` = point-force torque + ``torque_fn(t, R, torque_params)`` (body frame [N m]).

    ``tmp`` is a (3,) scratch vector.  ``torque_fn`` None: the point force alone (the loop's
    variant without a user torque compiles no call: numba prunes the branch on the argument's
    type); else a first-class function (:func:`first_class`), called through its address.
    Inlined into the scheme kernels.
    """
    point_force_torque(t, R, force_params, out)
    if torque_fn is not None:
        torque_fn(t, R, torque_params, tmp)
        out[0] += tmp[0]
        out[1] += tmp[1]
        out[2] += tmp[2]


def first_class(torque: Callable[..., None]) -> Any:
    """``torque`` (a ``numba.njit`` function) as a first-class function of :data:`TORQUE_SIGNATURE`.

    The function is compiled for that signature (its own options; from the cache where it has
    ``cache=True``) and returned as numba's wrapper of its compiled code, whose numba type is
    ``FunctionType(TORQUE_SIGNATURE)``: the same for every function, so the loop that calls it
    (:func:`kynemapy.integrators.drive.run_scheme`) is compiled once, not once per function and
    process.  With the JIT disabled (``KYNEMAPY_DISABLE_JIT``) the Python function itself.

    Parameters
    ----------
    torque : callable
        A ``numba.njit`` function ``torque(t, R, params, out)``.

    Returns
    -------
    object
        What :func:`~kynemapy.integrators.drive.run_scheme` takes as ``torque_fn``.

    Raises
    ------
    numba.core.errors.TypingError
        ``torque`` does not compile for the signature.
    ValueError
        ``torque`` returns a value (it must write the torque into ``out`` and return None; a
        function of another return type would be a loop of its own to compile).
    """
    if JIT_DISABLED:
        return getattr(torque, "py_func", torque)
    args = TORQUE_SIGNATURE.args
    torque.compile(args)
    compiled = torque.overloads[args]
    if compiled.signature.return_type != types.none:
        raise ValueError(
            f"torque(t, R, params, out) must write the torque into out and return None, it returns "
            f"{compiled.signature.return_type}"
        )
    return types.CompileResultWAP(compiled)
