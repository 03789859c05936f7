"""Plots of a result file that show the motion: one figure per quantity group.

``kynemapy plot run.h5 -o DIR`` and :func:`plot_result` write

* ``displacement.png``: displacement of each moving node from its initial position [m]
  (x, y, z panels), not the absolute position, so a platform moving centimetres 40 m from
  the origin shows its motion;
* ``rotation.png``: rotation angle of each body from its initial orientation [deg] and the
  rotation vector's world components [deg];
* ``energy.png``: energy error relative to the initial energy, ``(E − E₀) / abs(E₀)`` (E = kinetic +
  gravitational potential), and the energies [J];
* ``iterations.png``: Newton iterations per step and the final Newton error; for a
  step-controlled run (``run(..., control=...)``), whose rows are no steps, ``step_control.png``
  instead: the step size of the accepted step that reaches each row and its estimated error;
* with beams, ``beam_tips.png``: each beam's tip deflection in its root's frame [m] (the root's
  rigid motion taken out, :func:`kynemapy.post.geometry.tip_deflection`), and ``beam_roots.png``:
  the load on each beam's root node from the constraint that holds it (force [N], moment [N m],
  world frame, as :meth:`kynemapy.Simulation.reaction`).

Legends sit outside the data, to the right.  With many nodes the first :data:`MAX_LINES`
moving nodes are drawn (bodies first) and the title says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kynemapy.model.geometry import beam_chains, relative_rotation_vectors, tip_deflection

__all__ = ["MAX_LINES", "node_names", "plot_result", "relative_rotation_vectors"]

#: most node lines in one panel
MAX_LINES = 12


def node_names(result: Any) -> list[str]:
    """Node names from the model file the result names (``model_file`` attribute), else ``node i``.

    Parameters
    ----------
    result : kynemapy.io.Result
        A result read by :func:`kynemapy.io.read` (or anything with ``model`` and ``attrs``).

    Returns
    -------
    list of str
        One name per node, in node order.
    """
    n = result.model.n_nodes
    names = [f"node {i}" for i in range(n)]
    source = result.attrs.get("model_file") if hasattr(result, "attrs") else None
    if isinstance(source, str) and source.endswith(".toml") and os.path.exists(source):
        try:
            from kynemapy.model.file import load_model_file

            mf = load_model_file(source)
            if mf.model.n_nodes == n:
                for name, i in mf.nodes.items():
                    names[i] = name
        except Exception:
            pass
    return names


def _moving_nodes(result: Any) -> list[int]:
    model = result.model
    u = result.q[:, :, :3] - result.q[:1, :, :3]
    reach = np.abs(u).max(axis=(0, 2)) if u.size else np.zeros(model.n_nodes)
    tiny = 1e-9 * float(reach.max()) if reach.size else 0.0  # held nodes move by round-off only
    moving = [i for i in range(model.n_nodes) if model.node_dofs[i] > 0 and reach[i] > tiny]
    bodies = {int(n) for n in model.mass_node}
    return sorted(moving, key=lambda i: (i not in bodies, i))


def _legend(ax: Any, count: int) -> None:
    if count:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small", frameon=False)


def _finish_pair(fig: Any, axes: Any, lower_ylabel: str, save: Any, name: str) -> None:
    """A figure of two panels over time: the lower one's label, the time axis, grid and legend
    on both, saved as ``name``."""
    axes[1].set_ylabel(lower_ylabel)
    axes[1].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(alpha=0.3)
        _legend(ax, 1)
    save(fig, name)


def _title(what: str, shown: int, total: int, name: str) -> str:
    more = f" (first {shown} of {total} nodes)" if shown < total else ""
    return f"{what}{more} — {name}"


def plot_result(
    result: Any,
    out_dir: str | os.PathLike[str],
    *,
    nodes: Sequence[int] | None = None,
    names: Sequence[str] | None = None,
    dpi: int = 110,
) -> list[Path]:
    """Write the displacement, rotation, energy and iteration figures of a result.

    Parameters
    ----------
    result : kynemapy.io.hdf5.Result or str or os.PathLike
        A result (:func:`kynemapy.io.read`) or the path of a result file.
    out_dir : str or os.PathLike
        Folder for the PNG files (created).
    nodes : sequence of int, optional
        Nodes to draw (default: the moving nodes, bodies first, at most :data:`MAX_LINES`).
    names : sequence of str, optional
        A name per node for the legends (default: from the model file, else ``node i``).
    dpi : int
        Resolution of the PNGs.

    Returns
    -------
    list of pathlib.Path
        The files written: displacement.png, rotation.png, energy.png, iterations.png (a
        step-controlled run: step_control.png), and with beams beam_tips.png, beam_roots.png
        (when a constraint holds a root).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if isinstance(result, (str, os.PathLike)):
        from kynemapy.io.hdf5 import read

        result = read(result)
    r = result
    from kynemapy.io.paths import output_folder

    out = output_folder(out_dir, "plot folder")
    label = Path(r.path).name
    names = list(names) if names is not None else node_names(r)
    candidates = list(nodes) if nodes is not None else _moving_nodes(r)
    shown = candidates[:MAX_LINES] if nodes is None else candidates
    colors = {n: f"C{k % 10}" for k, n in enumerate(shown)}
    t = r.time
    written: list[Path] = []

    def save(fig: Any, name: str) -> None:
        path = out / name
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
        plt.close(fig)
        written.append(path)

    # displacement from the initial position
    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    u = r.q[:, :, :3] - r.q[:1, :, :3]
    for k, ax in enumerate(axes):
        for n in shown:
            ax.plot(t, u[:, n, k], color=colors[n], label=names[n])
        ax.set_ylabel(f"u{'xyz'[k]} − u{'xyz'[k]}(0) [m]")
        ax.grid(alpha=0.3)
    axes[0].set_title(_title("Displacement from the initial position", len(shown), len(candidates), label))
    axes[-1].set_xlabel("time [s]")
    _legend(axes[0], len(shown))
    save(fig, "displacement.png")

    # rotation from the initial orientation
    rotating = [n for n in shown if r.model.node_dofs[n] == 6]
    fig, axes = plt.subplots(4, 1, figsize=(9, 8.5), sharex=True)
    for n in rotating:
        rv = np.degrees(relative_rotation_vectors(r.q[:, n]))
        axes[0].plot(t, np.linalg.norm(rv, axis=1), color=colors[n], label=names[n])
        for k in range(3):
            axes[k + 1].plot(t, rv[:, k], color=colors[n])
    axes[0].set_ylabel("angle [deg]")
    for k in range(3):
        axes[k + 1].set_ylabel(f"θ{'xyz'[k]} [deg]")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].set_title(_title("Rotation from the initial orientation", len(rotating), len(rotating), label))
    if not rotating:
        axes[0].text(0.5, 0.5, "no rotating node moves", transform=axes[0].transAxes, ha="center")
    axes[-1].set_xlabel("time [s]")
    _legend(axes[0], len(rotating))
    save(fig, "rotation.png")

    # energy error relative to the initial energy
    energy = r.kinetic_energy + r.potential_energy + r.strain_energy
    e0 = float(energy[0]) if len(energy) else 0.0
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    if e0 != 0.0:
        axes[0].plot(t, (energy - e0) / abs(e0), color="k", label="(E − E₀)/|E₀|")
        axes[0].set_ylabel("relative energy error [-]")
    else:
        axes[0].plot(t, energy - e0, color="k", label="E − E₀ (E₀ = 0)")
        axes[0].set_ylabel("energy error [J]")
    axes[0].set_title(f"Energy error relative to the initial energy — {label}")
    axes[1].plot(t, r.kinetic_energy, label="kinetic")
    axes[1].plot(t, r.potential_energy, label="potential (gravity)")
    if np.any(r.strain_energy != 0.0):
        axes[1].plot(t, r.strain_energy, label="strain (beams, springs)")
    axes[1].plot(t, energy, color="k", label="total")
    _finish_pair(fig, axes, "energy [J]", save, "energy.png")

    sc = getattr(r, "step_control", None)
    if sc is not None:  # a step-controlled run: its rows are no steps (no Newton iterations of their own)
        _step_control_figure(r, sc, label, plt, save)
    else:
        _iterations_figure(r, label, plt, save)
    if getattr(r.model, "n_beams", 0):
        _beam_figures(r, label, names, plt, save)
    return written


def _iterations_figure(r: Any, label: str, plt: Any, save: Any) -> None:
    """``iterations.png``: the Newton iterations of each step and its final Newton error."""
    t = r.time
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    steps = r.step > 0
    axes[0].step(t[steps], r.iterations[steps], where="post", color="C0", label="iterations")
    axes[0].set_ylabel("Newton iterations")
    axes[0].set_title(f"Newton iterations per step — {label}")
    err = np.where(r.error[steps] > 0, r.error[steps], np.nan)
    axes[1].semilogy(t[steps], err, color="C3", label="final error")
    _finish_pair(fig, axes, "final Newton error", save, "iterations.png")


def _step_control_figure(r: Any, sc: dict[str, np.ndarray], label: str, plt: Any, save: Any) -> None:
    """``step_control.png``: the step size of the accepted step that reaches each row [s], and its
    estimated error (the control's norm, <= 1 when accepted; the rejected attempts since the row
    before marked)."""
    t = r.time
    rows = np.arange(t.size) > 0  # the first row is the initial state
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    axes[0].semilogy(t[rows], sc["step_size"][rows], drawstyle="steps-pre", color="C0", label="step size")
    axes[0].set_ylabel("step size [s]")
    axes[0].set_title(f"Step-size control — {label}")
    err = np.where(sc["estimated_error"][rows] > 0, sc["estimated_error"][rows], np.nan)
    axes[1].semilogy(t[rows], err, color="C3", label="estimated error")
    axes[1].axhline(1.0, color="k", lw=0.8, ls="--", label="tolerance")
    rejected = rows & (sc["rejected"] > 0)
    if np.any(rejected):
        axes[1].plot(t[rejected], np.ones(int(rejected.sum())), "x", color="C1", label="attempts rejected before")
    _finish_pair(fig, axes, "estimated error / tolerance", save, "step_control.png")


def root_constraint(model: Any, node: int) -> int | None:
    """The constraint that holds a beam's root ``node``: the first whose target is the node,
    else the first whose base is; None when no constraint touches it."""
    nodes = np.asarray(model.constraint_node)
    for side in (1, 0):
        hits = np.flatnonzero(nodes[:, side] == node) if len(nodes) else []
        if len(hits):
            return int(hits[0])
    return None


def _beam_figures(r: Any, label: str, names: Sequence[str], plt: Any, save: Any) -> None:
    from kynemapy.engine.api import reactions

    t = r.time
    chains = beam_chains(r.model)
    shown = chains[:MAX_LINES]
    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    for k, chain in enumerate(shown):
        d = tip_deflection(r.model, r.q, chain)
        for c, ax in enumerate(axes):
            ax.plot(t, d[:, c], color=f"C{k % 10}", label=f"beam {k} (tip {names[int(chain[-1])]})")
    for c, ax in enumerate(axes):
        ax.set_ylabel(f"tip deflection, root axis {c + 1} [m]")
        ax.grid(alpha=0.3)
    axes[0].set_title(_title("Beam tip deflection in the root frame", len(shown), len(chains), label))
    axes[-1].set_xlabel("time [s]")
    _legend(axes[0], len(shown))
    save(fig, "beam_tips.png")

    held = [(k, chain, root_constraint(r.model, int(chain[0]))) for k, chain in enumerate(shown)]
    held = [(k, chain, c) for k, chain, c in held if c is not None]
    if not held:
        return
    fig, axes = plt.subplots(6, 1, figsize=(9, 11), sharex=True)
    for k, _, c in held:
        force, moment = reactions(r.model, r.q, r.lam, c)
        for i in range(3):
            axes[i].plot(t, force[:, i], color=f"C{k % 10}", label=f"beam {k} (constraint {c})")
            axes[3 + i].plot(t, moment[:, i], color=f"C{k % 10}")
    for i in range(3):
        axes[i].set_ylabel(f"F{'xyz'[i]} [N]")
        axes[3 + i].set_ylabel(f"M{'xyz'[i]} [N m]")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].set_title(_title("Load on each beam's root node (world frame)", len(held), len(chains), label))
    axes[-1].set_xlabel("time [s]")
    _legend(axes[0], len(held))
    save(fig, "beam_roots.png")
