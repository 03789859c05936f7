"""Results for ParaView: a VTKHDF file (VTK's HDF5 format) with one time step per row.

:func:`write_vtkhdf` (and ``kynemapy export run.h5``) writes ``run.vtkhdf`` beside the result
file: a transient ``PolyData`` (VTKHDF 2.2) that ParaView and VTK's ``vtkHDFReader`` open
directly, with the time of every row.  Each time step holds the same points and cells
(:mod:`kynemapy.model.geometry`):

============================= =====================================================
points                        what
============================= =====================================================
0 .. N−1                      the nodes, at X + u [m]
N .. N+2J−1                   the two-body joints' points, as carried by side a and b
then 8 per body               the corners of each body's principal-inertia box
then k per collision shape    its points (docs/contact.md): a sphere's centre, a capsule's
                              two end centres, a box's eight corners
then 4 per ground plane       the corners of a square on the plane under the scene
============================= =====================================================

Cells: a vertex per node; a line per spring, per constraint between two nodes, and from each
joint side's node to its joint point; a polyline per beam through its nodes, root to tip (the
element connectivity of the result file's ``/model/beam_node``); six quadrilaterals per body box;
a vertex per sphere (ParaView's Glyph filter with ``radius`` as its scale draws it), a line
per capsule, six quadrilaterals per box shape and a quadrilateral per ground plane.

Point data: ``displacement`` (3) [m] (from the initial position: the node's, or the point's
own), ``velocity`` (3) [m/s] and ``angular_velocity`` (3) [rad/s] (the node's; box corners,
joint points and shape points carry their node's), ``node`` (int, −1 for a ground joint side
or a plane's corner), ``radius`` [m] (a shape point's radius, 0 elsewhere), and given the rows'
contacts (``contacts``; ``kynemapy export`` gives them for a model with point–plane contact)
``contact_force`` (3) [N]: at each collision shape's point, the force the ground planes apply
there (normal plus friction, :func:`kynemapy.run.contact_rows.contact_rows` at the row's state;
for hard ground planes the mean force since the row before, its recorded impulse over the time
between the rows, :func:`kynemapy.run.hard_rows.plane_forces`; zero apart and elsewhere;
ParaView's Glyph filter with it as orientation and scale draws the active contacts' arrows),
and for a model with hard contact between bodies ``body_contact_force`` (3) [N] and
``body_contact_moment`` (3) [N m]: at each node, the mean force and moment (about the node) the
other bodies' contacts apply since the row before (the recorded ``/hard_contact/body_impulse``
over the time between the rows, :attr:`kynemapy.io.Result.body_contact_forces`; zero elsewhere).
Cell data: ``kind`` (0 node, 1 spring, 2 link between two constrained nodes, 3 joint arm,
4 body face, 5 beam, 6 collision shape, 7 ground plane), ``item`` (node, spring, constraint,
mass, beam, shape or plane index).
The result file's time series stay in the result file; this file holds what ParaView draws.

Every step is stored in full (points, cells, data), so each step reads on its own; the
file grows by about (N + 2J + 8B + shape points) × 88 bytes per row (``every`` thins the rows).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import h5py
import numpy as np

__all__ = ["CELL_KINDS", "write_vtkhdf"]

#: codes of the ``kind`` cell array
CELL_KINDS = {
    "node": 0, "spring": 1, "link": 2, "joint arm": 3, "body face": 4, "beam": 5, "shape": 6, "ground": 7,
}  # fmt: skip
_VTK_VERSION = (2, 2)


def _topology(sc: Any, n_nodes: int) -> dict[str, Any]:
    """Vertices, lines and polygons (point ids into one step's points) with their cell data."""
    from kynemapy.model.geometry import BOX_FACES

    nj = len(sc.joints)
    joint_base = n_nodes
    box_base = n_nodes + 2 * nj
    vertices = [[i] for i in range(n_nodes)]
    vkind = [CELL_KINDS["node"]] * n_nodes
    vitem = list(range(n_nodes))
    lines, lkind, litem = [], [], []
    for s, (a, b) in enumerate(sc.springs):
        lines.append([int(a), int(b)])
        lkind.append(CELL_KINDS["spring"])
        litem.append(s)
    nodes = np.asarray(sc.model.constraint_node)
    joints = set(sc.joints.tolist())
    for c in range(sc.model.n_constraints):
        a, b = int(nodes[c, 0]), int(nodes[c, 1])
        if c not in joints and a >= 0 and b >= 0:
            lines.append([a, b])
            lkind.append(CELL_KINDS["link"])
            litem.append(c)
    for j, c in enumerate(sc.joints):
        for side in range(2):
            node = int(nodes[c, side])
            if node >= 0:
                lines.append([node, joint_base + 2 * j + side])
                lkind.append(CELL_KINDS["joint arm"])
                litem.append(int(c))
    for k, chain in enumerate(sc.beams):  # a polyline through the beam's nodes, root to tip
        lines.append([int(n) for n in chain])
        lkind.append(CELL_KINDS["beam"])
        litem.append(k)
    polygons, pkind, pitem = [], [], []
    for b, box in enumerate(sc.boxes):
        for face in BOX_FACES:
            polygons.append([box_base + 8 * b + k for k in face])
            pkind.append(CELL_KINDS["body face"])
            pitem.append(box.mass)
    base = box_base + 8 * len(sc.boxes)
    for sh in sc.shapes:
        k = len(sh.offsets)
        if sh.kind == "box":
            for face in BOX_FACES:
                polygons.append([base + i for i in face])
                pkind.append(CELL_KINDS["shape"])
                pitem.append(sh.shape)
        elif k == 1:
            vertices.append([base])
            vkind.append(CELL_KINDS["shape"])
            vitem.append(sh.shape)
        else:
            lines.append([base + i for i in range(k)])
            lkind.append(CELL_KINDS["shape"])
            litem.append(sh.shape)
        base += k
    for j in range(len(sc.planes)):
        polygons.append([base + 4 * j + i for i in range(4)])
        pkind.append(CELL_KINDS["ground"])
        pitem.append(j)
    return {
        "Vertices": vertices,
        "Lines": lines,
        "Polygons": polygons,
        "Strips": [],
        "kind": np.array(vkind + lkind + pkind, dtype=np.int64),
        "item": np.array(vitem + litem + pitem, dtype=np.int64),
    }


def _shape_points(sc: Any, q: np.ndarray) -> np.ndarray:
    """(n, P, 3) the collision shapes' points [m], shape after shape."""
    parts = sc.shape_points(q)
    return np.concatenate(parts, axis=1) if parts else np.zeros((q.shape[0], 0, 3))


def _plane_squares(sc: Any, q: np.ndarray) -> np.ndarray:
    """(1, 4 P, 3) a square on each ground plane [m], centred under the scene's extent over the
    rows ``q`` and as wide as it."""
    if not len(sc.planes):
        return np.zeros((1, 0, 3))
    lo, hi = sc.extent(q)
    half = 0.5 * max(float(np.max(hi - lo)), 1e-3) * 1.05
    return sc.plane_squares(0.5 * (lo + hi), half).reshape(1, -1, 3)


def _kind_arrays(
    result: Any, rows: np.ndarray, sc: Any, n_points: int, shape_start: int, derived: dict[str, Any]
) -> dict[str, np.ndarray]:
    """Every kind's point arrays (:class:`kynemapy.model.registry.kind.PointArray`), (R, n_points, k)
    each, those a kind gives for this result, in the kinds' order."""
    from kynemapy.model.registry import kinds
    from kynemapy.model.registry.kind import ExportContext

    out = {}
    for kind in kinds():
        context = ExportContext(result, rows, sc, n_points, shape_start, derived.get(kind.derived_keyword))
        for array in kind.point_arrays:
            values = array.values(context)
            if values is not None:
                out[array.name] = values
    return out


def write_vtkhdf(
    result: Any,
    path: str | os.PathLike[str] | None = None,
    *,
    every: int = 1,
    **derived: Any,
) -> Path:
    """Write a result as a transient VTKHDF PolyData file for ParaView (see the module docstring).

    Parameters
    ----------
    result : kynemapy.io.hdf5.Result or str or os.PathLike
        A result (:func:`kynemapy.io.read`) or the path of a result file.
    path : str or os.PathLike, optional
        File to write (default: the result file with the suffix ``.vtkhdf``).  An existing
        file is replaced.
    every : int
        Write every ``every``-th row (and always the last).
    **derived : Any
        Each kind's derived rows (:attr:`kynemapy.model.registry.kind.Kind.derive`) by its keyword
        (``kynemapy export`` passes them for a model that has them), for its point arrays.
        Contact's: ``contacts`` (ContactRows or HardPlaneForces or None, default None;
        :class:`kynemapy.run.contact_rows.ContactRows`, :class:`kynemapy.run.hard_rows.HardPlaneForces`),
        the point–plane contacts of all the result's rows (``contact_rows(sim, result)["points"]``,
        :func:`kynemapy.run.contact_rows.contact_rows`, or for hard ground planes
        :func:`kynemapy.run.hard_rows.plane_forces`): the file gets the point array
        ``contact_force`` (3) [N].  None: no contact forces.

    Returns
    -------
    pathlib.Path
        The file written.  Its time steps are the rows' times [s].
    """
    from kynemapy.io.hdf5 import read
    from kynemapy.io.paths import output_file
    from kynemapy.model.geometry import node_positions, scene
    from kynemapy.model.registry import derived_data

    given = derived_data(derived, "write_vtkhdf")
    if isinstance(result, (str, os.PathLike)):
        result = read(result)
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"write_vtkhdf: every must be an integer >= 1, got {every!r}")
    if result.committed == 0:
        raise ValueError(f"{result.path}: no rows to write")
    out = output_file(
        Path(path) if path is not None else Path(result.path).with_suffix(".vtkhdf"),
        "ParaView file",
        example="run.vtkhdf",
    )
    rows = list(range(0, result.committed, int(every)))
    if rows[-1] != result.committed - 1:
        rows.append(result.committed - 1)
    rows_a = np.array(rows)
    model = result.model
    sc = scene(model)
    q = np.asarray(result.q)[rows_a]
    v = np.asarray(result.v)[rows_a]
    nn, nj, nb = model.n_nodes, len(sc.joints), len(sc.boxes)
    n_steps = len(rows)

    # points per step: nodes, joint points (a, b), box corners
    nodes_x = node_positions(model, q)  # (n, N, 3)
    joints_x = sc.joint_points(q).reshape(n_steps, 2 * nj, 3)
    corners = sc.box_corners(q).reshape(n_steps, 8 * nb, 3)
    shapes_x = _shape_points(sc, q)
    planes_x = np.broadcast_to(_plane_squares(sc, q), (n_steps, 4 * len(sc.planes), 3))
    points = np.concatenate([nodes_x, joints_x, corners, shapes_x, planes_x], axis=1)
    n_points = points.shape[1]
    q0 = np.asarray(result.q)[:1]
    first = np.concatenate(
        [
            node_positions(model, q0), sc.joint_points(q0).reshape(1, -1, 3), sc.box_corners(q0).reshape(1, -1, 3),
            _shape_points(sc, q0), planes_x[:1],
        ],
        axis=1,
    )  # fmt: skip
    displacement = points - first
    displacement[:, :nn] = q[:, :, :3] - np.asarray(result.q)[:1, :, :3]  # the nodes' own u − u0
    owner = np.concatenate(
        [
            np.arange(nn),
            np.array([int(model.constraint_node[c, s]) for c in sc.joints for s in range(2)], dtype=np.int64),
            np.repeat(np.array([b.node for b in sc.boxes], dtype=np.int64), 8),
            np.array([sh.node for sh in sc.shapes for _ in sh.offsets], dtype=np.int64),
            np.full(4 * len(sc.planes), -1, dtype=np.int64),
        ]
    ).astype(np.int64)
    radius = np.zeros(n_points)
    start = nn + 2 * nj + 8 * nb
    for sh in sc.shapes:
        radius[start : start + len(sh.offsets)] = sh.radius
        start += len(sh.offsets)
    safe = np.where(owner >= 0, owner, 0)
    held = (owner >= 0)[None, :, None]
    velocity = np.where(held, v[:, safe, 0:3], 0.0)
    angular = np.where(held, v[:, safe, 3:6], 0.0)

    kind_arrays = _kind_arrays(result, rows_a, sc, n_points, nn + 2 * nj + 8 * nb, given)

    topo = _topology(sc, nn)
    cell_counts = [len(topo[name]) for name in ("Vertices", "Lines", "Polygons", "Strips")]
    n_cells = sum(cell_counts)

    tmp = out.with_name(out.name + ".tmp")
    with h5py.File(tmp, "w") as f:
        g = f.create_group("VTKHDF")
        g.attrs["Version"] = np.array(_VTK_VERSION, dtype=np.int64)
        g.attrs.create("Type", np.bytes_("PolyData"), dtype=h5py.string_dtype("ascii", len("PolyData")))
        g.create_dataset("NumberOfPoints", data=np.full(n_steps, n_points, dtype=np.int64))
        g.create_dataset("Points", data=points.reshape(-1, 3))
        conn_counts = []
        for name in ("Vertices", "Lines", "Polygons", "Strips"):
            cells = topo[name]
            offsets = np.concatenate([[0], np.cumsum([len(c) for c in cells], dtype=np.int64)]).astype(np.int64)
            connectivity = np.array([i for c in cells for i in c], dtype=np.int64)
            conn_counts.append(len(connectivity))
            tg = g.create_group(name)
            tg.create_dataset("NumberOfCells", data=np.full(n_steps, len(cells), dtype=np.int64))
            tg.create_dataset("NumberOfConnectivityIds", data=np.full(n_steps, len(connectivity), dtype=np.int64))
            tg.create_dataset("Offsets", data=np.tile(offsets, n_steps))
            tg.create_dataset("Connectivity", data=np.tile(connectivity, n_steps))
        pd = g.create_group("PointData")
        pd.create_dataset("displacement", data=displacement.reshape(-1, 3))
        pd.create_dataset("velocity", data=velocity.reshape(-1, 3))
        pd.create_dataset("angular_velocity", data=angular.reshape(-1, 3))
        pd.create_dataset("node", data=np.tile(owner, n_steps))
        pd.create_dataset("radius", data=np.tile(radius, n_steps))
        for name, values in kind_arrays.items():
            pd.create_dataset(name, data=values.reshape(n_steps * n_points, *values.shape[2:]))
        cd = g.create_group("CellData")
        cd.create_dataset("kind", data=np.tile(topo["kind"], n_steps))
        cd.create_dataset("item", data=np.tile(topo["item"], n_steps))
        st = g.create_group("Steps")
        st.attrs["NSteps"] = np.int64(n_steps)
        k = np.arange(n_steps, dtype=np.int64)
        st.create_dataset("Values", data=np.asarray(result.time)[rows_a].astype(np.float64))
        st.create_dataset("PartOffsets", data=k)
        st.create_dataset("NumberOfParts", data=np.ones(n_steps, dtype=np.int64))
        st.create_dataset("PointOffsets", data=k * n_points)
        st.create_dataset("CellOffsets", data=k[:, None] * np.array(cell_counts, dtype=np.int64)[None, :])
        st.create_dataset("ConnectivityIdOffsets", data=k[:, None] * np.array(conn_counts, dtype=np.int64)[None, :])
        pdo = st.create_group("PointDataOffsets")
        point_arrays = ["displacement", "velocity", "angular_velocity", "node", "radius"]
        point_arrays += list(kind_arrays)
        for name in point_arrays:
            pdo.create_dataset(name, data=k * n_points)
        cdo = st.create_group("CellDataOffsets")
        for name in ("kind", "item"):
            cdo.create_dataset(name, data=k * n_cells)
    os.replace(tmp, out)
    return out
