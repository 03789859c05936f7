"""Contact's model-file tables (docs/contact.md): ``[[shape]]``, ``[[ground]]`` and ``[body_contact]``.

Each ``read_*`` takes the reader's checked view of one table (``item``: ``check_keys``,
``require``, ``number``, ``integer``, ``string``, ``vector``, ``matrix``, ``node_ref``,
``build``, ``error``, ``data``) and the :class:`~kynemapy.ModelBuilder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kynemapy.model.contact import COMPLIANT_DEFAULTS

__all__ = [
    "BODY_CONTACT_KEYS",
    "GROUND_KEYS",
    "SHAPE_COMMON",
    "SHAPE_KEYS",
    "contact_law",
    "read_body_contact",
    "read_ground",
    "read_shape",
    "shape_label",
]

#: [[shape]] keys by kind (docs/contact.md), and the keys every kind has
SHAPE_KEYS = {
    "sphere": ("radius", "center"),
    "capsule": ("radius", "point_a", "point_b"),
    "box": ("half_extents", "center", "axes"),
}
SHAPE_COMMON = ("kind", "node", "group", "mask")
#: [[ground]] keys: the plane and its contact law (ModelBuilder.add_ground_plane)
GROUND_KEYS = (
    "normal", "offset", "stiffness", "damping", "friction", "exponent", "damping_model", "slip_velocity",
    "group", "mask", "law", "restitution",
)  # fmt: skip
#: [body_contact] keys: the law of sphere pairs on two bodies (ModelBuilder.set_body_contact)
BODY_CONTACT_KEYS = (
    "stiffness", "damping", "friction", "exponent", "damping_model", "slip_velocity", "law", "restitution",
)  # fmt: skip


def contact_law(item: Any) -> dict[str, Any]:
    """The contact law's keywords of a ``[[ground]]`` or ``[body_contact]`` table: the hard law's
    restitution and friction (the compliant law's keys passed on, for the builder to refuse by
    name), or the compliant law's (stiffness required; a restitution passed on to be refused)."""
    kind = item.string("law", "compliant")
    if kind == "hard":
        law: dict[str, Any] = {
            "law": "hard",
            "restitution": item.number("restitution", 0.0),
            "friction": item.number("friction", 0.0),
        }
        for key in COMPLIANT_DEFAULTS:
            if key in item.data:
                law[key] = item.data[key]
        return law
    if kind == "compliant":  # another law: the builder names the laws
        item.require("stiffness")
    law = {
        "stiffness": item.number("stiffness", unit="N/m^exponent"),
        "damping": item.number("damping", 0.0, "N s/m"),
        "friction": item.number("friction", 0.0),
        "exponent": item.number("exponent", 1.0),
        "damping_model": item.string("damping_model", "linear"),
        "slip_velocity": item.number("slip_velocity", 1e-3, "m/s"),
        "law": kind,
    }
    if "restitution" in item.data:
        law["restitution"] = item.number("restitution")
    return law


def shape_label(i: int, data: Mapping[str, Any]) -> str:
    """``shape #<i + 1> (<kind>)``: a ``[[shape]]`` item's name in messages."""
    kind = data.get("kind")
    return f"shape #{i + 1}" + (f" ({kind})" if isinstance(kind, str) else "")


def read_shape(item: Any, builder: Any) -> None:
    """A collision shape (docs/contact.md): ``kind``, ``node`` and the kind's keys."""
    item.require("kind", "node")
    kind = item.string("kind")
    if kind not in SHAPE_KEYS:
        raise item.error(f"unknown shape kind {kind!r} (kinds: {', '.join(SHAPE_KEYS)})", "kind")
    item.check_keys((*SHAPE_COMMON, *SHAPE_KEYS[kind]), f"a {kind} [[shape]]")
    node = item.node_ref("node")
    bits = {"group": item.integer("group", 1), "mask": item.integer("mask", -1)}
    if kind == "sphere":
        item.require("radius")
        item.build(builder.add_sphere, node, item.number("radius", unit="m"), item.vector("center", 3, "m"), **bits)
    elif kind == "capsule":
        item.require("radius", "point_a", "point_b")
        item.build(
            builder.add_capsule, node, item.number("radius", unit="m"), item.vector("point_a", 3, "m"),
            item.vector("point_b", 3, "m"), **bits,
        )  # fmt: skip
    else:
        item.require("half_extents")
        item.build(
            builder.add_box, node, item.vector("half_extents", 3, "m"), item.vector("center", 3, "m"),
            item.matrix("axes", 3), **bits,
        )  # fmt: skip


def read_ground(item: Any, builder: Any) -> None:
    """A ground plane with its contact law (docs/contact.md)."""
    item.check_keys(GROUND_KEYS)
    law = {**contact_law(item), "group": item.integer("group", 1), "mask": item.integer("mask", -1)}
    item.build(
        builder.add_ground_plane, item.vector("normal", 3, default=[0.0, 0.0, 1.0]),
        item.number("offset", 0.0, "m"), **law,
    )  # fmt: skip


def read_body_contact(item: Any, builder: Any) -> None:
    """The law of sphere pairs on two bodies, ``[body_contact]`` (docs/contact.md)."""
    item.check_keys(BODY_CONTACT_KEYS)
    item.build(builder.set_body_contact, **contact_law(item))
