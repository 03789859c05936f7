"""The ``pip install`` command of a missing optional extra: it lives in :mod:`kynemapy.run.extras`
(the sweep needs it too); these names stay here for existing code."""

from kynemapy.run.extras import (
    PACKAGE_DIR,
    install_command,
    source_folder,
)

__all__ = [
    "PACKAGE_DIR",
    "install_command",
    "source_folder",
]
