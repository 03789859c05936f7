"""Animations of a result file: ``kynemapy animate run.h5 -o run.gif`` and :func:`animate`.

Bodies are drawn as their principal-inertia boxes (``style="box"``) or as their principal
axes (``style="frame"``, x red, y green, z blue), springs as thin lines, constraints between
two nodes as dashed lines, two-body joints as points with arms to their bodies, nodes held by
a boundary condition as black triangles, other nodes as dots, beams (when they exist) as their
deformed axis, collision shapes (docs/contact.md) as wire spheres (three great circles turning
with the body), capsules (their end spheres and axis) and boxes, in place of their body's box,
and ground planes as grey squares across the view (:mod:`kynemapy.post.geometry`).  Given
the contacts of the rows (``contacts``, :func:`kynemapy.run.contact_rows`; ``kynemapy animate``
computes them for a model with point–plane contact), each ground plane's force on a shape's
point is a red arrow from the point's surface towards the body (:func:`contact_arrows`); under
the hard body law, the force of the other bodies' contacts on each node, recorded in the result
file, is an orange arrow from the node (:func:`body_force_arrows`).  The view
is fixed for the whole animation: chosen elevation and azimuth [deg], the axes' limits covering
every frame with equal scales.
Every frame carries its time stamp.  ``magnify`` enlarges the motion from the first frame
(translations and rotation angles) for small motions, and the stamp says so.

An ``.mp4`` is written with ffmpeg when it is installed; without ffmpeg the animation is
written as a GIF (Pillow) next to it, with a notice.  A ``.gif`` never needs ffmpeg.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from kynemapy.model.registry.contact.drawing import body_force_arrows, contact_arrows

__all__ = ["animate", "body_force_arrows", "contact_arrows", "ffmpeg_available", "frame_rows"]


def ffmpeg_available() -> bool:
    """Whether matplotlib finds an ffmpeg executable (needed for ``.mp4`` output).

    Returns
    -------
    bool
        True when ffmpeg is available.
    """
    from matplotlib import animation

    return bool(animation.writers.is_available("ffmpeg"))


def frame_rows(n_rows: int, max_frames: int | None = 200, every: int | None = None) -> np.ndarray:
    """Row indices drawn as frames: every ``every``-th row, or evenly thinned to at most
    ``max_frames``; the last row is always a frame.

    Parameters
    ----------
    n_rows : int
        Rows of the result.
    max_frames : int, optional
        Most frames (ignored when ``every`` is given).
    every : int, optional
        Row stride.

    Returns
    -------
    numpy.ndarray
        (F,) increasing row indices.
    """
    if n_rows < 1:
        raise ValueError("animate: the result has no rows")
    if every is None:
        every = max(1, math.ceil(n_rows / max(int(max_frames or n_rows), 1)))
        rows = list(range(0, n_rows, every))
        if rows[-1] != n_rows - 1:
            if len(rows) < int(max_frames or n_rows):
                rows.append(n_rows - 1)
            else:
                rows[-1] = n_rows - 1
    else:
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"animate: every must be an integer >= 1, got {every!r}")
        rows = list(range(0, n_rows, int(every)))
        if rows[-1] != n_rows - 1:
            rows.append(n_rows - 1)
    return np.array(rows, dtype=np.int64)


def _kind_arrows(
    result: Any, q: np.ndarray, rows: np.ndarray, positions: np.ndarray, length: float, derived: dict[str, Any]
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Every kind's arrows (:class:`kynemapy.model.registry.kind.Arrows`) in the frames: (colour,
    arrows (F, K, 2, 3) [m], the arrows not of zero length in every frame)."""
    from kynemapy.model.registry import kinds
    from kynemapy.model.registry.kind import DrawContext

    out = []
    for kind in kinds():
        context = DrawContext(result, result.model, q, rows, positions, length, derived.get(kind.derived_keyword))
        for drawing in kind.drawing:
            arrows = drawing.arrows(context)
            if arrows is not None:
                drawn = np.flatnonzero(np.any(arrows[:, :, 1] != arrows[:, :, 0], axis=(0, 2)))
                out.append((drawing.colour, arrows, drawn))
    return out


def animate(
    result: Any,
    output: str | os.PathLike[str],
    *,
    style: str = "box",
    view: tuple[float, float] = (25.0, -60.0),
    fps: int = 20,
    max_frames: int | None = 200,
    every: int | None = None,
    magnify: float = 1.0,
    size: tuple[float, float] = (6.4, 5.4),
    dpi: int = 80,
    progress: bool = False,
    **derived: Any,
) -> Path:
    """Write an animation of a result as an MP4 (ffmpeg) or a GIF.

    Parameters
    ----------
    result : kynemapy.io.hdf5.Result or str or os.PathLike
        A result (:func:`kynemapy.io.read`) or the path of a result file.
    output : str or os.PathLike
        ``.gif`` or ``.mp4`` file (an ``.mp4`` becomes a ``.gif`` when ffmpeg is missing).
    style : {"box", "frame"}
        Bodies as principal-inertia boxes or as principal axes.
    view : tuple of float
        Elevation and azimuth of the fixed camera [deg].
    fps : int
        Frames per second.
    max_frames : int, optional
        Most frames (rows are thinned evenly; the last row is always drawn).
    every : int, optional
        Draw every ``every``-th row instead (overrides ``max_frames``).
    magnify : float
        Magnification of the motion from the first row (1: true size).
    size : tuple of float
        Figure size [inch].
    dpi : int
        Resolution [dots per inch].
    progress : bool
        Report the frames written on stderr.
    **derived : Any
        Each kind's derived rows (:attr:`kynemapy.model.registry.kind.Kind.derive`) by its keyword,
        for its arrows (:class:`kynemapy.model.registry.kind.Arrows`, the largest a quarter of the
        view long).  Contact's: ``contacts`` (ContactRows or HardPlaneForces, optional;
        :class:`kynemapy.run.contact_rows.ContactRows`, :class:`kynemapy.run.hard_rows.HardPlaneForces`),
        the point–plane contacts of all the result's rows (``contact_rows(sim, result)["points"]``,
        or for hard ground planes ``kynemapy.run.hard_rows.plane_forces(result)``): their forces
        are drawn as red arrows (:func:`contact_arrows`); None: no such arrows.  (The hard body law's
        forces between bodies, which the result file holds, are drawn as orange arrows from the
        nodes, :func:`body_force_arrows`.)

    Returns
    -------
    pathlib.Path
        The file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import animation
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    from kynemapy.model.geometry import BOX_FACES, magnified, node_positions, quaternion_matrices, scene
    from kynemapy.model.registry import derived_data

    given = derived_data(derived, "animate")

    if style not in ("box", "frame"):
        raise ValueError(f"animate: style must be 'box' or 'frame', got {style!r}")
    if not (isinstance(fps, (int, np.integer)) and fps >= 1):
        raise ValueError(f"animate: fps must be an integer >= 1, got {fps!r}")
    if not (math.isfinite(magnify) and magnify > 0):
        raise ValueError(f"animate: magnify must be a number > 0, got {magnify!r}")
    from kynemapy.io.paths import output_file

    out = Path(output)
    if out.is_dir():  # said as such, before its (missing) suffix
        output_file(out, "animation", example="run.gif")
    suffix = out.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"animate: {out}: write a .gif or an .mp4")
    if suffix == ".mp4" and not ffmpeg_available():
        gif = out.with_suffix(".gif")
        warnings.warn(f"ffmpeg not found: writing {gif} instead of {out}", stacklevel=2)
        out, suffix = gif, ".gif"
    output_file(out, "animation", create_folder=True, example="run.gif")  # before the frames are drawn
    if isinstance(result, (str, os.PathLike)):
        from kynemapy.io.hdf5 import read

        result = read(result)
    rows = frame_rows(result.committed, max_frames, every)
    model = result.model
    sc = scene(model)
    q = np.asarray(result.q)[rows]
    if magnify != 1.0:  # the motion from the result's first row (rows[0] is row 0)
        q = magnified(q, float(magnify))
    times = np.asarray(result.time)[rows]
    pos = node_positions(model, q)
    corners = sc.box_corners(q)
    joints = sc.joint_points(q)
    beams = sc.beam_axes(q)
    rot = sc.rotations(q) if sc.boxes else None
    shape_pts = sc.shape_points(q)
    turns = quaternion_matrices(q[:, :, 3:7]) if sc.shapes else None  # the shapes' rotation R(r)

    lo, hi = sc.extent(q)
    centre = 0.5 * (lo + hi)
    half = 0.5 * max(float(np.max(hi - lo)), 1e-3) * 1.05
    kind_arrows = _kind_arrows(result, q, rows, pos, 0.5 * half, given)

    fig = plt.figure(figsize=size, dpi=dpi)
    ax = fig.add_subplot(projection="3d")
    ax.view_init(elev=view[0], azim=view[1])
    for k, setter in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)):
        setter(centre[k] - half, centre[k] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(Path(result.path).name)
    stamp = ax.text2D(0.02, 0.96, "", transform=ax.transAxes, family="monospace")

    body_nodes = {b.node for b in sc.boxes}
    held = set(sc.anchors.tolist())
    free = [i for i in range(model.n_nodes) if i not in body_nodes and i not in held]
    (dots,) = ax.plot([], [], [], "o", color="0.3", markersize=3, linestyle="none")
    (anchors,) = ax.plot([], [], [], "^", color="k", markersize=6, linestyle="none")
    springs = [ax.plot([], [], [], "-", color="C1", linewidth=1.0)[0] for _ in range(len(sc.springs))]
    links = [ax.plot([], [], [], "--", color="0.4", linewidth=1.0)[0] for _ in range(len(sc.links))]
    arms = [ax.plot([], [], [], "-", color="0.4", linewidth=1.5)[0] for _ in range(2 * len(sc.joints))]
    (joint_dots,) = ax.plot([], [], [], "o", color="C3", markersize=5, linestyle="none")
    beam_lines = [ax.plot([], [], [], "-", color="C2", linewidth=2.0)[0] for _ in beams]
    boxes, axes_lines = [], []
    if style == "box":
        for _ in sc.boxes:
            poly = Poly3DCollection([], facecolor="C0", edgecolor="k", linewidth=0.5, alpha=0.35)
            ax.add_collection3d(poly)
            boxes.append(poly)
    else:
        for _ in sc.boxes:
            axes_lines.append([ax.plot([], [], [], "-", color=c, linewidth=2.0)[0] for c in ("r", "g", "b")])
    for square in sc.plane_squares(centre, half):  # a square of the view's size on each ground plane
        ax.add_collection3d(Poly3DCollection([square], facecolor="0.6", edgecolor="0.4", linewidth=0.5, alpha=0.25))
    arrow_lines = [  # each kind's arrows, those not of zero length in every frame
        (arrows, [(e, ax.plot([], [], [], "-", color=colour, linewidth=2.0)[0]) for e in drawn])
        for colour, arrows, drawn in kind_arrows
    ]
    ring = np.linspace(0.0, 2.0 * math.pi, 25)
    shaped = {sh.node for sh in sc.shapes}
    shape_lines: list[list[Any]] = []
    shape_boxes: list[Any] = []
    for sh in sc.shapes:
        if sh.kind == "box":
            poly = Poly3DCollection([], facecolor="C4", edgecolor="k", linewidth=0.5, alpha=0.3)
            ax.add_collection3d(poly)
            shape_boxes.append(poly)
            shape_lines.append([])
            continue
        shape_boxes.append(None)
        circles = 3 * len(sh.offsets) if sh.radius > 0.0 else 0
        segment = 1 if len(sh.offsets) > 1 else 0
        shape_lines.append([ax.plot([], [], [], "-", color="C4", linewidth=1.2)[0] for _ in range(circles + segment)])

    def set_line(line: Any, pts: np.ndarray) -> None:
        line.set_data_3d(pts[:, 0], pts[:, 1], pts[:, 2])

    def draw(f: int) -> None:
        p = pos[f]
        set_line(dots, p[free] if free else np.zeros((0, 3)))
        set_line(anchors, p[sorted(held)] if held else np.zeros((0, 3)))
        for line, (a, b) in zip(springs, sc.springs, strict=True):
            set_line(line, p[[a, b]])
        for line, (a, b) in zip(links, sc.links, strict=True):
            set_line(line, p[[a, b]])
        jp = joints[f]
        for j, c in enumerate(sc.joints):
            for side in range(2):
                node = int(model.constraint_node[c, side])
                start = p[node] if node >= 0 else jp[j, side]
                set_line(arms[2 * j + side], np.stack([start, jp[j, side]]))
        set_line(joint_dots, jp[:, 0] if len(sc.joints) else np.zeros((0, 3)))
        for line, axis in zip(beam_lines, beams, strict=True):
            set_line(line, axis[f])
        for b, box in enumerate(sc.boxes):
            if style == "box":
                c = corners[f, b]
                # a body with collision shapes is drawn as its shapes
                boxes[b].set_verts([] if box.node in shaped else [c[list(face)] for face in BOX_FACES])
            else:
                assert rot is not None
                origin = p[box.node] + rot[f, box.node] @ box.centre
                for k in range(3):
                    tip = origin + rot[f, box.node] @ box.axes[:, k] * (0.5 * box.size[k])
                    set_line(axes_lines[b][k], np.stack([origin, tip]))
        for k, sh in enumerate(sc.shapes):
            pts = shape_pts[k][f]
            if sh.kind == "box":
                shape_boxes[k].set_verts([pts[list(face)] for face in BOX_FACES])
                continue
            assert turns is not None
            frame = turns[f, sh.node]
            lines = shape_lines[k]
            if sh.radius > 0.0:
                for i, centre_pt in enumerate(pts):
                    for j, (a, b) in enumerate(((0, 1), (1, 2), (2, 0))):
                        circle = centre_pt + sh.radius * (
                            np.cos(ring)[:, None] * frame[:, a] + np.sin(ring)[:, None] * frame[:, b]
                        )
                        set_line(lines[3 * i + j], circle)
            if len(pts) > 1:
                set_line(lines[-1], pts)
        for arrows, lines in arrow_lines:
            for e, line in lines:
                set_line(line, arrows[f, e])
        text = f"t = {times[f]:.4f} s"
        if magnify != 1.0:
            text += f"   motion ×{magnify:g}"
        stamp.set_text(text)

    if suffix == ".gif":
        writer: Any = animation.PillowWriter(fps=int(fps))
    else:
        writer = animation.FFMpegWriter(fps=int(fps))
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with writer.saving(fig, str(out), dpi):
            for f in range(len(rows)):
                draw(f)
                writer.grab_frame()
                if progress and (f % 10 == 9 or f == len(rows) - 1):
                    sys.stderr.write(f"\rframe {f + 1}/{len(rows)}")
                    sys.stderr.flush()
    finally:
        plt.close(fig)
        if progress:
            sys.stderr.write("\n")
    return out
