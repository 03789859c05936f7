"""Contact as a kind (docs/contact.md): the compliant contact elements against ground planes and
between bodies, the hard ground planes and the hard body law, declared once for the model file,
result files, ParaView, ``kynemapy animate`` and ``kynemapy info`` (docs/engine.md, "Adding a kind").

Its engine code is elsewhere: the builder (:mod:`kynemapy.model.contact`), the compliant element
table (:mod:`kynemapy.engine.elements.contacts`, ``pairs``), the hard laws (``kynemapy.run.hard_*``).
"""

from __future__ import annotations

from kynemapy.model.registry.contact import drawing, rows, shapes, tables
from kynemapy.model.registry.kind import Arrows, Energy, Kind, Memory, ModelTable, PointArray

__all__ = ["KIND"]

#: contact, declared
KIND = Kind(
    name="contact",
    tables=(
        ModelTable(
            "shape",
            tuple(dict.fromkeys((*tables.SHAPE_COMMON, *(k for keys in tables.SHAPE_KEYS.values() for k in keys)))),
            tables.read_shape,
            label=tables.shape_label,
            message_prefix=r"(?:sphere|capsule|box) \(shape \d+\)",
        ),
        ModelTable("ground", tables.GROUND_KEYS, tables.read_ground, message_prefix=r"ground plane \d+"),
        ModelTable(
            "body_contact",
            tables.BODY_CONTACT_KEYS,
            tables.read_body_contact,
            array=False,
            message_prefix="body contact",
        ),
    ),
    model_defaults=rows.model_defaults,
    upgrade=rows.upgrade,
    energy=Energy(
        "contact_energy [J]: the compliant springs' k δ^(e+1) / (e + 1)",
        "strain_energy",
        lambda model: bool(model.n_contacts or model.n_pairs),
    ),
    columns=rows.HARD_CONTACT,
    attributes={"body_contact_forces": rows.body_contact_forces},
    derive="kynemapy.run.contact_rows:plane_contacts",
    recorder="kynemapy.run.hard_rows:HardRowRecorder",
    keyword="contacts",
    point_arrays=(
        PointArray("contact_force", "N", drawing.contact_force),
        PointArray("body_contact_force", "N", drawing.body_contact_force),
        PointArray("body_contact_moment", "N m", drawing.body_contact_moment),
    ),
    drawing=(
        Arrows("the ground planes' forces on the shapes' points", "C3", drawing.plane_arrows),
        Arrows("the hard body law's forces on the nodes", "C1", drawing.body_arrows),
    ),
    info=rows.info,
    memory=Memory(
        "touching",
        8,
        rows.has_hard_bodies,
        "per point touching at the next step's start under the hard body law: kind (0 a point against a "
        "plane, 1 a point between two shapes), key (the plane point's index, or shape_a * shapes + "
        "shape_b), the point in body B's frame (3) and in body A's frame (3) [m] (zeros for a plane point)",
        "kynemapy.run.hard_bodies:TouchingKeeper",
    ),
    shapes=shapes.contact_shapes,
    planes=shapes.contact_planes,
)
