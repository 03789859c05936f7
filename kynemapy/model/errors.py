"""The error of a model that cannot be built (:class:`ModelError`), shared by the builder, the
beam layout and the model files."""

from __future__ import annotations


class ModelError(ValueError):
    """A model description that cannot be built; the message names the item and value."""


__all__ = ["ModelError"]
