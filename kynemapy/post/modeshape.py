"""Mode shapes as views: an animation (:func:`animate_mode`, ``kynemapy animate MODEL.toml
--mode K``) and a ParaView file (:func:`write_mode_vtkhdf`, ``kynemapy export MODEL.toml --mode
K``) of one mode of :func:`kynemapy.analysis.modes`.

:func:`mode_frames` turns a mode into a sequence of configurations over one cycle, which the
result-file writers draw as they draw a run (:func:`kynemapy.post.animate.animate`,
:func:`kynemapy.io.vtkhdf.write_vtkhdf`): at the phases θ_k = 2π k/F (k = 0 … F − 1),

    u_k = u₀ + a Im(φ_u e^{iθ_k}),   r_k = exp(a Im(φ_θ e^{iθ_k})) ⊗ r₀,

the state linearized about (u₀, r₀) plus the mode φ scaled by a; for a real shape φ (undamped
modes) that is ``q₀ + a φ sin θ_k``, for a complex one (damped, gyroscopic) the travelling wave
Re φ sin θ + Im φ cos θ.  The time of frame k is θ_k/ω [s] (one period), or θ_k/2π (fractions
of a cycle) for a mode of zero frequency.  The rotations are the engine's left (world-frame)
increments, as the linearization's DOFs.  The modes of a rotating-frame linearization
(:func:`kynemapy.analysis.steady_rotation`) are drawn in the rotating frame, at the instant it
coincides with the world frame.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ModeFrames", "animate_mode", "mode_frames", "write_mode_vtkhdf"]


@dataclass(frozen=True)
class ModeFrames:
    """One mode over one cycle, as the rows of a result (from :func:`mode_frames`).

    Attributes
    ----------
    model : Model
        The model.
    q : (F, N, 7) ndarray of float
        Per frame and node, the displacement [m] and rotation quaternion (w, x, y, z).
    v : (F, N, 6) ndarray of float
        The velocities a ω Re(φ e^{iθ}) [m/s, rad/s] (zero for a mode of zero frequency).
    time : (F,) ndarray of float
        θ_k/ω [s] (θ_k/2π for a zero frequency).
    phase : (F,) ndarray of float
        The phases θ_k [rad].
    mode : int
        The mode's index in the :class:`~kynemapy.analysis.Modes` (0: the lowest).
    omega : float
        Its natural frequency [rad/s].
    scale : float
        The factor a applied to the mode shape as stored in ``Modes.shapes``.
    path : str
        A name for titles (the model file, or ``"mode K"``).
    """

    model: Any
    q: np.ndarray
    v: np.ndarray
    time: np.ndarray
    phase: np.ndarray
    mode: int
    omega: float
    scale: float
    path: str

    @property
    def committed(self) -> int:
        """The number of frames F (the rows, as a result file's)."""
        return int(self.q.shape[0])


def _check_mode(modes: Any, mode: Any) -> int:
    n = int(modes.omega.size)
    if isinstance(mode, bool) or not isinstance(mode, (int, np.integer)):
        raise ValueError(f"mode must be an integer index 0 … {n - 1}, got {mode!r}")
    if not 0 <= int(mode) < n:
        raise ValueError(f"mode {int(mode)} does not exist: there are {n} modes (indices 0 … {n - 1})")
    return int(mode)


def mode_frames(
    modes: Any,
    mode: int,
    amplitude: float | None = None,
    frames: int = 24,
    name: str | None = None,
) -> ModeFrames:
    """One mode over one cycle as a sequence of configurations (module docstring).

    Parameters
    ----------
    modes : kynemapy.analysis.Modes
        The modes (:func:`kynemapy.analysis.modes`).
    mode : int
        The mode's index (0: the lowest frequency).
    amplitude : float or None [m], default None
        The largest node displacement of the drawn mode (a scales φ to it); for a mode that
        moves no node, the largest rotation times the model's size.  None: a tenth of the
        model's size (the largest distance between node positions, at least 1e-3 m).
    frames : int, default 24
        The number of phases F over one cycle.
    name : str or None, default None
        A title (default ``"mode K"``, K = mode + 1).

    Returns
    -------
    ModeFrames
        The configurations, velocities and phases.

    Raises
    ------
    ValueError
        A mode index out of range, frames < 1, an amplitude that is not > 0, or a mode that
        moves nothing.
    """
    from kynemapy.analysis.statics import left_rotate

    k = _check_mode(modes, mode)
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1:
        raise ValueError(f"frames must be an integer >= 1, got {frames!r}")
    lin = modes.linearization
    model = lin.model
    x = np.asarray(model.x0)[:, :3] + lin.state.q[:, :3]
    size = max(float(np.max(np.ptp(x, axis=0))) if x.shape[0] > 1 else 0.0, 1e-3)
    if amplitude is None:
        amplitude = 0.1 * size
    if not (np.isfinite(amplitude) and amplitude > 0.0):
        raise ValueError(f"amplitude must be a number > 0 m, got {amplitude!r}")
    n_nodes = int(model.n_nodes)
    phi = np.zeros((n_nodes, 6), dtype=complex)
    phi[lin.dof_node, lin.dof_component] = modes.shapes[:, k]
    largest_u = float(np.abs(phi[:, :3]).max(initial=0.0))
    largest_r = float(np.abs(phi[:, 3:]).max(initial=0.0))
    if largest_u > 0.0:
        scale = float(amplitude) / largest_u
    elif largest_r > 0.0:
        scale = float(amplitude) / (largest_r * size)
    else:
        raise ValueError(f"mode {k} moves no node (a zero shape)")
    omega = float(modes.omega[k])
    phase = 2.0 * np.pi * np.arange(int(frames)) / int(frames)
    wave = np.exp(1j * phase)  # (F,)
    disp = scale * np.imag(phi[None] * wave[:, None, None])  # (F, N, 6)
    rate = scale * abs(omega) * np.real(phi[None] * wave[:, None, None])
    q0 = lin.state.q
    q = np.repeat(q0[None].copy(), phase.size, axis=0)
    q[:, :, :3] += disp[:, :, :3]
    rotating = np.flatnonzero(np.asarray(model.node_dofs) == 6)
    for f in range(phase.size):
        if rotating.size:
            q[f, rotating, 3:] = left_rotate(disp[f, rotating, 3:], q0[rotating, 3:])
    time = phase / abs(omega) if omega != 0.0 else phase / (2.0 * np.pi)
    v = rate if omega != 0.0 else np.zeros_like(rate)
    return ModeFrames(model, q, v, time, phase, k, omega, scale, name or f"mode {k + 1}")


def animate_mode(
    modes: Any,
    mode: int,
    output: str | os.PathLike[str],
    amplitude: float | None = None,
    frames: int = 24,
    **kwargs: Any,
) -> Path:
    """Write an animation (GIF, or MP4 with ffmpeg) of one mode over one cycle.

    Parameters
    ----------
    modes : kynemapy.analysis.Modes
        The modes.
    mode : int
        The mode's index (0: the lowest frequency).
    output : str or os.PathLike
        The ``.gif`` or ``.mp4`` file.
    amplitude : float or None [m], default None
        As :func:`mode_frames`.
    frames : int, default 24
        Phases per cycle.
    **kwargs : Any
        Passed to :func:`kynemapy.post.animate.animate` (``style``, ``view``, ``fps``, ``size``,
        ``dpi``); every frame is drawn.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    from kynemapy.post.animate import animate

    view = mode_frames(modes, mode, amplitude, frames)
    return animate(view, output, max_frames=None, every=1, **kwargs)


def write_mode_vtkhdf(
    modes: Any,
    mode: int,
    path: str | os.PathLike[str],
    amplitude: float | None = None,
    frames: int = 24,
) -> Path:
    """Write one mode over one cycle as a transient VTKHDF file for ParaView.

    The points, cells and data of :func:`kynemapy.io.vtkhdf.write_vtkhdf`, one time step per
    phase θ_k (time θ_k/ω [s]); ``displacement`` is measured from frame 0, which is the state
    linearized about for a real shape: then it is the drawn mode, a φ_u sin θ_k [m].

    Parameters
    ----------
    modes : kynemapy.analysis.Modes
        The modes.
    mode : int
        The mode's index (0: the lowest frequency).
    path : str or os.PathLike
        The ``.vtkhdf`` file (replaced if it exists).
    amplitude : float or None [m], default None
        As :func:`mode_frames`.
    frames : int, default 24
        Phases per cycle.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    from kynemapy.io.vtkhdf import write_vtkhdf

    return write_vtkhdf(mode_frames(modes, mode, amplitude, frames), path)
