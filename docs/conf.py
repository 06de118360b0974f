"""Sphinx configuration of fastnb's documentation site.

Built by ``make -C docs html`` (warnings are errors) from the installed
fastnb: the API pages are generated from its docstrings (autosummary and
numpydoc), the gallery runs the scripts of ``docs/examples/`` and keeps
the figures they draw (sphinx-gallery), and the guide's Markdown pages are
read by MyST. Nothing is fetched while building or reading the site:
MathJax is served from the site itself (sphinx-mathjax-offline).
"""

import os
import re

import fastnb

project = "fastnb"
author = "the fastnb developers"
copyright = "2026, the fastnb developers"
release = fastnb.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx-mathjax-offline",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples", "**/*.ipynb"]
templates_path = ["_templates"]

# -- MyST: $...$ and $$...$$ math; ``{include}`` of README parts. --
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# -- API pages: one per public name, from the docstrings. --
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# -- Doctests (``make -C docs doctest``): the docstrings' examples and the
# pages' ``>>>`` blocks, each document's on their own imports, with Sphinx's
# default flags (ELLIPSIS among them). --
trim_doctest_flags = True

# -- The gallery: each script runs, its printed output and figures kept. --
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "abort_on_example_error": True,
    "show_memory": False,
    "subsection_order": ["examples/textbook", "examples/larger_data"],
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    # The API pages list the examples that use each name.
    "doc_module": ("fastnb",),
    "backreferences_dir": "api/generated/backreferences",
}
os.environ.setdefault("MPLBACKEND", "Agg")

# -- HTML: the PyData theme, with nothing loaded from another site. --
html_theme = "pydata_sphinx_theme"
html_title = f"fastnb {release}"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_prev_next": True,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}


# scikit-learn's docstrings, which fastnb's estimators inherit (score,
# get_params), point into scikit-learn's site (:ref:`accuracy_score`); here
# those roles become their plain text.
SKLEARN_ROLE = re.compile(r":(?:ref|term):`(?:([^`<]*?)\s*<[^`>]*>|([^`]*))`")


def plain_sklearn_roles(app, what, name, obj, options, lines):
    """Turn the :ref: and :term: roles of an inherited scikit-learn
    docstring into their text, for autodoc."""
    if getattr(obj, "__module__", "").startswith("sklearn."):
        lines[:] = [
            SKLEARN_ROLE.sub(lambda m: m.group(1) or m.group(2), line) for line in lines
        ]


def setup(app):
    app.connect("autodoc-process-docstring", plain_sklearn_roles)
