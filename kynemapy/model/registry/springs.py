"""Springs as a kind: the linear springs between two node positions (:meth:`kynemapy.ModelBuilder.add_spring`),
declared for the model file (``[[spring]]``) and the energies.  Their engine code is the element
table :mod:`kynemapy.engine.elements.springs`; they are drawn with the model's own items
(:mod:`kynemapy.model.geometry`: ``Scene.springs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kynemapy.model.registry.kind import Energy, Kind, ModelTable

__all__ = ["KIND", "SPRING_KEYS", "read_spring", "spring_label"]

#: [[spring]] keys, all required
SPRING_KEYS = ("nodes", "stiffness", "undeformed_length")


def spring_label(i: int, data: Mapping[str, Any]) -> str:
    """``spring #<i + 1> (nodes 'a', 'b')``: a ``[[spring]]`` item's name in messages."""
    nodes = data.get("nodes")
    label = f"spring #{i + 1}"
    if isinstance(nodes, list) and all(isinstance(n, str) for n in nodes):
        label += f" (nodes {', '.join(repr(n) for n in nodes)})"
    return label


def read_spring(item: Any, builder: Any) -> None:
    """``nodes = ["a", "b"]``, ``stiffness`` [N/m] >= 0, ``undeformed_length`` [m] >= 0."""
    item.check_keys(SPRING_KEYS)
    item.require(*SPRING_KEYS)
    nodes = item.data["nodes"]
    if not (isinstance(nodes, list) and len(nodes) == 2 and all(isinstance(n, str) for n in nodes)):
        raise item.wrong_type("nodes", "an array of 2 node names")
    a, b = (item.node_ref("nodes", n) for n in nodes)
    item.build(
        builder.add_spring,
        a,
        b,
        stiffness=item.number("stiffness", unit="N/m"),
        undeformed_length=item.number("undeformed_length", unit="m"),
    )


#: springs, declared
KIND = Kind(
    name="springs",
    tables=(ModelTable("spring", SPRING_KEYS, read_spring, label=spring_label, after="mass"),),
    energy=Energy("½ k (l − l₀)² [J] per spring", "strain_energy", lambda model: bool(model.n_springs)),
)
