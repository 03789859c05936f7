"""Campbell diagrams: rotating-frame modes over rotor speed, tracked by their shapes (or, for a
rotor of identical blades, its fixed-frame modes in multi-blade coordinates: ``blades=``).

:func:`campbell` finds the steady rotation at each speed (:func:`steady_rotation`, each speed
starting from the previous one's state), linearizes it in the rotating frame and takes its
modes; a mode is followed from one speed to the next by the modal assurance criterion (MAC) of
the shapes, ``|φ_aᴴφ_b|² / (φ_aᴴφ_a · φ_bᴴφ_b)``, the pairing that maximizes the sum of the MACs
(``scipy.optimize.linear_sum_assignment``) among the ``n_modes`` modes followed and the lowest
``n_modes + extra`` modes at the new speed.  Modes that cross in frequency keep their identity
(and the columns of :attr:`Campbell.frequency` their mode) as long as their shapes differ.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.optimize

from kynemapy.analysis.linearize import linearize
from kynemapy.analysis.mbc import RotorModes, mbc_modes
from kynemapy.analysis.modes import Modes, modes
from kynemapy.analysis.rotating import SteadyRotation, steady_rotation

#: rad/s per rpm
RPM = 2.0 * np.pi / 60.0


def mac(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The modal assurance criterion of every pair of columns of ``a`` and ``b``.

    Parameters
    ----------
    a : (n, k) ndarray of float or complex
        Mode shapes (columns).
    b : (n, l) ndarray of float or complex
        Mode shapes (columns).

    Returns
    -------
    (k, l) ndarray of float
        ``|a_iᴴ b_j|² / ((a_iᴴ a_i)(b_jᴴ b_j))``, between 0 (orthogonal) and 1 (parallel).
    """
    a, b = np.asarray(a), np.asarray(b)
    cross = np.abs(a.conj().T @ b) ** 2
    na = np.real(np.sum(a.conj() * a, axis=0))
    nb = np.real(np.sum(b.conj() * b, axis=0))
    return cross / np.maximum(np.outer(na, nb), 1e-300)


@dataclass(frozen=True)
class Campbell:
    """Rotating-frame modes over speed, tracked (from :func:`campbell`).

    Attributes
    ----------
    speeds : (s,) ndarray of float
        The rotor speeds ``|Ω|`` [rad/s].
    axis : (3,) ndarray of float
        The unit rotation axis (world frame).
    frequency : (s, k) ndarray of float
        ``frequency[i, j]``: mode j's natural frequency [Hz] at speed i (column j is one mode,
        followed by its shape; at the first speed the modes are in increasing frequency).
    damping_ratio : (s, k) ndarray of float
        The damping ratios [-] in the same arrangement.
    mac : (s, k) ndarray of float
        The MAC of mode j's shape at speed i with its shape at speed i − 1 (1 at the first
        speed): a low value (below about 0.8) says the tracking was uncertain there.
    index : (s, k) ndarray of int64
        The index of mode j in ``modes[i]`` (sorted by frequency).
    modes : tuple of Modes or RotorModes
        The modes at each speed (the lowest ``n_modes + extra``): rotating-frame
        :class:`Modes`, or fixed-frame :class:`RotorModes` (``blades`` given).
    states : tuple of SteadyRotation
        The steady rotation at each speed.
    labels : (s, k) ndarray of str or None, default None
        In the fixed frame (multi-blade coordinates), each tracked mode's kind at each speed
        (``collective``, ``forward``, ``backward``, ...: :meth:`RotorModes.labels`); None in the
        rotating frame.
    """

    speeds: np.ndarray
    axis: np.ndarray
    frequency: np.ndarray
    damping_ratio: np.ndarray
    mac: np.ndarray
    index: np.ndarray
    modes: tuple[Modes | RotorModes, ...]
    states: tuple[SteadyRotation, ...]
    labels: np.ndarray | None = None

    @property
    def rpm(self) -> np.ndarray:
        """(s,) the speeds in rpm."""
        return self.speeds / RPM

    def write_csv(self, path: str | Path) -> Path:
        """Write the table: one row per speed, the speed in rpm and rad/s, then each tracked
        mode's frequency [Hz], damping ratio and MAC with the previous speed.

        Parameters
        ----------
        path : str or Path
            The CSV file.

        Returns
        -------
        Path
            The file written.
        """
        path = Path(path)
        k = self.frequency.shape[1]
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(
                ["speed_rpm", "speed_rad_s"]
                + [f"mode{j + 1}_hz" for j in range(k)]
                + [f"mode{j + 1}_zeta" for j in range(k)]
                + [f"mode{j + 1}_mac" for j in range(k)]
                + ([f"mode{j + 1}_kind" for j in range(k)] if self.labels is not None else [])
            )
            for i, speed in enumerate(self.speeds):
                w.writerow(
                    [f"{speed / RPM:.9g}", f"{speed:.9g}"]
                    + [f"{x:.9g}" for x in self.frequency[i]]
                    + [f"{x:.6g}" for x in self.damping_ratio[i]]
                    + [f"{x:.6f}" for x in self.mac[i]]
                    + (list(self.labels[i]) if self.labels is not None else [])
                )
        return path

    def plot(self, path: str | Path, harmonics: tuple[int, ...] = (1, 3, 6), rpm: bool = True) -> Path:
        """Draw the diagram (frequency against speed, one line per tracked mode, and the lines of
        the rotor harmonics nP = n Ω/2π) into a PNG (needs matplotlib).

        Parameters
        ----------
        path : str or Path
            The PNG file.
        harmonics : tuple of int, default (1, 3, 6)
            The multiples n of the rotor speed drawn as nP lines.
        rpm : bool, default True
            The speed axis in rpm (else rad/s).

        Returns
        -------
        Path
            The file written.
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        x = self.rpm if rpm else self.speeds
        fig, ax = plt.subplots(figsize=(7.0, 5.0))
        for j in range(self.frequency.shape[1]):
            ax.plot(x, self.frequency[:, j], "o-", ms=3, lw=1.2, label=f"mode {j + 1}")
        top = float(np.nanmax(self.frequency)) * 1.05 if self.frequency.size else 1.0
        for n in harmonics:
            ax.plot(x, n * self.speeds / (2.0 * np.pi), "k--", lw=0.8)
            if self.speeds.size and self.speeds[-1] > 0.0:
                y = n * self.speeds[-1] / (2.0 * np.pi)
                if y <= top:
                    ax.annotate(f"{n}P", (x[-1], y), textcoords="offset points", xytext=(3, 0), fontsize=8)
        ax.set_ylim(0.0, top)
        ax.set_xlabel("rotor speed [rpm]" if rpm else "rotor speed [rad/s]")
        ax.set_ylabel("frequency [Hz]")
        ax.set_title(
            "Campbell diagram (rotating frame)"
            if self.labels is None
            else "Campbell diagram (fixed frame, multi-blade coordinates)"
        )
        ax.grid(True, alpha=0.3)
        if self.frequency.shape[1] <= 12:
            ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


def campbell(
    system: Any,
    speeds: Any,
    axis: Any = (0.0, 0.0, 1.0),
    center: Any = (0.0, 0.0, 0.0),
    n_modes: int = 10,
    extra: int | None = None,
    blades: Any = None,
) -> Campbell:
    """Rotating-frame modes of a structure turning about an axis, over speeds, tracked by MAC.

    At each speed: :func:`steady_rotation` (from the previous speed's state), :func:`linearize`
    in the rotating frame (centrifugal stiffening and softening, Coriolis/gyroscopic terms),
    :func:`modes`; then the modes are matched to those of the previous speed by MAC (module
    docstring).  The structure's constraints must let it turn (roots on prescribed BCs, see
    :func:`steady_rotation`); gravity must be zero or along the axis.

    Parameters
    ----------
    system : Model, Simulation or Equilibrium
        The model and its starting state, as :func:`steady_rotation` takes.
    speeds : (s,) array_like of float [rad/s]
        The rotor speeds ``|Ω|``, in the order they are swept (start low: each speed starts from
        the previous one's state).
    axis : (3,) array_like of float, default (0, 0, 1)
        The rotation axis (world frame; normalized); Ω = speed × axis.
    center : (3,) array_like of float [m], default (0, 0, 0)
        A point on the axis.
    n_modes : int, default 10
        The modes followed: the lowest ``n_modes`` at the first speed.
    extra : int or None, default None
        Further modes at each speed that a followed mode may be matched to (modes rising past
        the highest followed one); None: max(4, n_modes // 2).
    blades : sequence of sequences of int or None, default None
        The node ids of each of N >= 3 identical blades, in the sense of rotation
        (:func:`mbc_modes`): the diagram in the fixed frame, by multi-blade coordinates, each
        mode labelled collective, forward or backward whirl, ...  None: the rotating frame.  At
        Ω = 0 the forward and backward whirls coincide, so a sweep from rest matches them to the
        next speed's with MAC ≈ 0.5 (reported as uncertain; the frequencies are the same).

    Returns
    -------
    Campbell
        Speeds, tracked frequencies [Hz], damping ratios, MACs, and the modes and states.

    Raises
    ------
    ValueError
        No speeds, a zero axis, gravity across the axis, fewer modes than ``n_modes``.
    kynemapy.ConvergenceError
        No steady rotation found at a speed.
    """
    w = np.asarray(speeds, dtype=float).ravel()
    if w.size == 0:
        raise ValueError("campbell: no speeds")
    a = np.asarray(axis, dtype=float).reshape(3)
    if not np.linalg.norm(a) > 0.0:
        raise ValueError("campbell: the axis is zero")
    a = a / np.linalg.norm(a)
    n_modes = int(n_modes)
    pool = n_modes + (max(4, n_modes // 2) if extra is None else int(extra))
    start = system
    all_modes: list[Modes] = []
    states: list[SteadyRotation] = []
    freq = np.zeros((w.size, n_modes))
    zeta = np.zeros((w.size, n_modes))
    macs = np.ones((w.size, n_modes))
    index = np.zeros((w.size, n_modes), dtype=np.int64)
    previous: np.ndarray | None = None
    all_labels: list[list[str]] = []
    for i, speed in enumerate(w):
        st = steady_rotation(start, speed * a, center)
        start = st
        if blades is None:
            m: Modes | RotorModes = modes(linearize(st), n_modes=pool)
        else:
            m = mbc_modes(st, blades, axis=a, center=center, n_modes=pool)
            all_labels.append(m.labels())
        if m.omega.size < n_modes:
            raise ValueError(f"campbell: {m.omega.size} modes at {speed:g} rad/s, fewer than n_modes = {n_modes}")
        if previous is None:
            pick = np.arange(n_modes)
        else:
            score = mac(previous, m.shapes)
            rows, cols = scipy.optimize.linear_sum_assignment(-score)
            pick = np.empty(n_modes, dtype=np.int64)
            pick[rows] = cols
            macs[i] = score[np.arange(n_modes), pick]
        index[i] = pick
        freq[i] = m.frequency[pick]
        zeta[i] = m.damping_ratio[pick]
        previous = m.shapes[:, pick]
        all_modes.append(m)
        states.append(st)
    labels = None
    if blades is not None:
        labels = np.array([[all_labels[i][j] for j in index[i]] for i in range(w.size)], dtype=object)
    return Campbell(w, a, freq, zeta, macs, index, tuple(all_modes), tuple(states), labels)
