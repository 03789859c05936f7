"""Sphinx configuration of kynemapy's documentation (``python -m sphinx -W -b html docs docs/_build/html``).

The pages are Markdown (MyST); the API reference (``api.rst``) is generated from the
numpy-style docstrings by autodoc and napoleon.  Importing kynemapy compiles nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import kynemapy  # noqa: E402

project = "kynemapy"
author = "the kynemapy developers"
copyright = "2026, the kynemapy developers"
release = kynemapy.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: heading anchors for in-page links, $...$ maths, tables
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "colon_fence"]

# autodoc / napoleon: numpy-style docstrings, members in source order, type hints in the text
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# the docstrings give every parameter's type (tests/unit/test_docstrings.py): the hints are added
# only where a documented parameter has none, never as a second, description-less entry
autodoc_typehints_description_target = "documented"
autodoc_typehints_format = "short"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_preserve_defaults = True
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True

html_theme = "alabaster"
html_title = f"kynemapy {release}"
html_static_path: list[str] = []


def _skip_field_aliases(app, what, name, obj, skip, options):  # Sphinx's signature
    """Leave out a NamedTuple's fields ("Alias for field number N"): its Attributes section
    documents them, with type, shape, units and meaning."""
    doc = getattr(obj, "__doc__", None)
    if isinstance(doc, str) and doc.startswith("Alias for field number"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_field_aliases)
