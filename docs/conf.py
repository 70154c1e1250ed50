"""Sphinx configuration: the user guide (Markdown, through myst-parser) and the API
reference (autodoc from the docstrings, Google style through napoleon).

Built in CI with warnings as errors (.ci/run):
``python -m sphinx -W --keep-going -b html docs /tmp/rocpy-docs``.
Importing rocpy for autodoc loads no backend; nothing here needs a GPU.
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("ROCPY_BACKEND", "stub")

import rocpy  # noqa: E402

project = "rocpy"
author = "the rocpy authors"
copyright = "the rocpy authors, MIT licence"
release = version = rocpy.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]

# the docstrings write `name` for a Python object (a link where Sphinx knows it)
default_role = "py:obj"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"rocpy {release}"
