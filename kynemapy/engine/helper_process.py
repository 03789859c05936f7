"""The second process of a first compilation (:func:`kynemapy.engine.units.compile_units`)."""

from __future__ import annotations

from kynemapy.engine.data import new_inputs, new_state, new_workspace
from kynemapy.engine.notice import ANNOUNCE
from kynemapy.engine.units import address
from kynemapy.model.builder import ModelBuilder


def compile_here(indices: list[int]) -> None:
    """Compile the units ``indices`` into the cache in this process, for the types of every
    model (those of a small rigid model's Data): the second process of
    :func:`kynemapy.engine.units.compile_units`."""
    b = ModelBuilder()
    node = b.add_node(position=(0.0, 0.0, 0.0))
    b.add_mass(node, mass=1.0, inertia=(1.0, 1.0, 1.0))
    model = b.build()
    workspace = new_workspace(model, 10, "auto", True)
    workspace.units_filled = True  # this Data's own units are not wanted here
    d = workspace.data(new_state(model), new_inputs(model))
    ANNOUNCE.on = False
    for index in indices:
        address(index, d)


__all__ = ["compile_here"]
