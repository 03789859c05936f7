"""The drawing geometry of a result (node positions, body boxes, springs, joints, beams): it lives
in :mod:`kynemapy.model.geometry`, below the result files that use it (the ParaView export, the
sweep's summaries); these names stay here for the plots, the animation and existing code."""

from kynemapy.model.geometry import (
    BOX_FACES,
    Box,
    Scene,
    beam_chains,
    box_corners,
    magnified,
    node_positions,
    quaternion_matrices,
    relative_rotation_vectors,
    scene,
    tip_deflection,
)

__all__ = [
    "BOX_FACES",
    "Box",
    "Scene",
    "beam_chains",
    "box_corners",
    "magnified",
    "node_positions",
    "quaternion_matrices",
    "relative_rotation_vectors",
    "scene",
    "tip_deflection",
]
