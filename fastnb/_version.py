"""fastnb's version, in one place: the package's ``__version__``, the model
files' header, ``show_config`` and the build (pyproject.toml) read it here."""

__version__ = "0.1.0.dev0"
