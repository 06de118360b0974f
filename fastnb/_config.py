"""fastnb's settings and its build.

- ``set_config``, ``get_config`` and ``config_context``: the settings of
  this process, or of a ``with`` block in the current thread. One so far:
  ``max_table_bytes``, the largest table a fit may allocate, which
  ``check_table_bytes`` enforces before each allocation that could pass it.
- ``show_config``: how this copy of fastnb was built and what it runs with.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import platform
import sys
from collections.abc import Iterator
from numbers import Integral
from typing import Any

import numpy as np
import scipy
import sklearn

from fastnb import _simd
from fastnb._simd import kernels as _kernels  # the variant in use
from fastnb._threads import effective_n_threads
from fastnb._version import __version__

# The settings of set_config (the process's), and those of the config_context
# blocks around the current code (a context variable: each thread its own).
_SETTINGS: dict[str, Any] = {"max_table_bytes": None}
_CONTEXT_SETTINGS: contextvars.ContextVar[dict[str, Any] | None] = (
    contextvars.ContextVar("fastnb_settings", default=None)
)


def _checked_settings(settings):
    """``settings`` (name -> value), refused with TypeError or ValueError
    unless each names a setting and holds a valid value for it."""
    for name, value in settings.items():
        if name not in _SETTINGS:
            raise TypeError(
                f"{name!r} is not a fastnb setting; the settings are "
                f"{sorted(_SETTINGS)}."
            )
        whole = isinstance(value, Integral) and not isinstance(value, bool)
        if value is not None and not (whole and value >= 1):
            raise ValueError(
                f"{name} must be a positive number of bytes or None; got {value!r}."
            )
    return settings


def set_config(*, max_table_bytes: int | None = None) -> None:
    """Change fastnb's settings for this process.

    Parameters
    ----------
    max_table_bytes : int or None, default=None
        The most bytes one table of a model may take: a fit, partial_fit or
        merge that would allocate a larger one raises MemoryError before it
        allocates, with the table's size in the message. The tables that
        grow with the data are guarded: a table of classes x features
        (every estimator's statistics), CategoricalNB's table of categories
        x classes, KernelDensityNB's grids of classes x features x grid
        points. None: the machine's physical memory (a table larger than it
        could not be filled). On Dask workers, the client's setting when
        the fit began.

    See Also
    --------
    config_context : The same, for a ``with`` block in the current thread.

    Examples
    --------
    >>> import fastnb
    >>> fastnb.set_config(max_table_bytes=2**30)  # 1 GiB a table
    >>> fastnb.get_config()["max_table_bytes"]
    1073741824
    >>> fastnb.set_config(max_table_bytes=None)  # back to the default
    """
    _SETTINGS.update(_checked_settings({"max_table_bytes": max_table_bytes}))


def get_config() -> dict[str, Any]:
    """fastnb's settings in the current thread: ``{name: value}``, a copy
    (see :func:`set_config`)."""
    return {**_SETTINGS, **(_CONTEXT_SETTINGS.get() or {})}


@contextlib.contextmanager
def config_context(**settings: Any) -> Iterator[None]:
    """fastnb's settings changed within a ``with`` block, in the current
    thread only (see :func:`set_config` for the settings).

    Examples
    --------
    >>> import numpy as np
    >>> import fastnb
    >>> X, y = np.ones((3, 1000)), np.arange(3)
    >>> with fastnb.config_context(max_table_bytes=10_000):
    ...     fastnb.MultinomialNB().fit(X, y)
    Traceback (most recent call last):
    ...
    MemoryError: MultinomialNB: a table of 3 classes by 1000 features would ...
    """
    token = _CONTEXT_SETTINGS.set(
        {**(_CONTEXT_SETTINGS.get() or {}), **_checked_settings(settings)}
    )
    try:
        yield
    finally:
        _CONTEXT_SETTINGS.reset(token)


@functools.cache
def physical_memory():
    """The machine's physical memory in bytes, or None where it is unknown
    (asked once: every fit's bound check reads it)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None


def size_in_words(n_bytes):
    """``n_bytes`` in the largest binary unit under which it is at least 1."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n_bytes < 1024 or unit == "TiB":
            break
        n_bytes /= 1024
    return f"{n_bytes:.0f} bytes" if unit == "bytes" else f"{n_bytes:.1f} {unit}"


def check_table_bytes(owner, what, n_values, itemsize=8):
    """Raise MemoryError, naming ``owner`` (the estimator's class name),
    ``what`` and its size, if a table of ``n_values`` items of ``itemsize``
    bytes would pass max_table_bytes (or the machine's physical memory when
    it is None). ``n_values`` may be a float: a product of sizes taken in
    float64 cannot overflow."""
    n_bytes = float(n_values) * itemsize
    limit = get_config()["max_table_bytes"]
    setting = f"max_table_bytes={limit}"
    if limit is None:
        limit = physical_memory()
        setting = "this machine's physical memory"
        if limit is None:  # pragma: no cover - not POSIX
            return
    if n_bytes > limit:
        raise MemoryError(
            f"{owner}: {what} would take {size_in_words(n_bytes)}, "
            f"more than {setting} ({size_in_words(limit)}). Nothing was "
            "allocated; raise the bound with fastnb.set_config(max_table_bytes=...) "
            "if the machine holds it."
        )


def _simd_target():
    """The instruction-set variant of the kernels in use (see fastnb._simd)."""
    forced = os.environ.get("FASTNB_SIMD", "").strip().lower() not in ("", "auto")
    return (
        f"{_simd.target} ({'forced by FASTNB_SIMD' if forced else 'chosen at import'})"
    )


def _openmp():
    """Whether the kernels use OpenMP, and the runtime library they call."""
    if not _kernels.openmp_enabled():
        return "no"
    return f"yes ({_kernels.openmp_runtime() or 'runtime not found'})"


def _abi():
    """The C API the kernels were built for, from their file's suffix."""
    if _kernels.__file__.endswith(".abi3.so"):
        return "abi3 (CPython's stable ABI: 3.11 and later)"
    return f"CPython {sys.version_info[0]}.{sys.version_info[1]} only"


def _config_items():
    """``(name, value)`` pairs, in the order ``show_config`` prints them."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    yes_no = {True: "yes", False: "no"}
    return [
        ("fastnb", f"{__version__} ({package_dir})"),
        ("OpenMP", _openmp()),
        ("threads", str(effective_n_threads())),
        ("debug build", yes_no[_kernels.debug_build()]),
        ("SIMD target", _simd_target()),
        ("ABI", _abi()),
        (
            "Python",
            f"{platform.python_version()} "
            f"({platform.python_implementation()}, {sys.executable})",
        ),
        ("platform", platform.platform()),
        ("NumPy", np.__version__),
        ("SciPy", scipy.__version__),
        ("scikit-learn", sklearn.__version__),
    ]


def show_config() -> None:
    """Print how fastnb was built and what it will run with.

    One line each: fastnb's version and the folder it is imported from;
    whether the kernels were compiled with OpenMP, and the file of the OpenMP
    runtime they call; how many threads they will use (OpenMP's limit, which
    follows ``OMP_NUM_THREADS`` and threadpoolctl, capped by the CPUs this
    process may use); whether this is a bounds-checked debug build
    (``FASTNB_DEBUG=1``); the SIMD instruction set the kernels run with; the
    C API they were built for (abi3: one build for CPython 3.11 and later);
    the Python version, interpreter and platform; and the versions of
    NumPy, SciPy and scikit-learn. Paste it into bug reports.

    Returns
    -------
    None
        The report goes to standard output.

    Examples
    --------
    >>> import fastnb
    >>> fastnb.show_config()  # doctest: +ELLIPSIS
    fastnb:        ...
    OpenMP:        ...
    threads:       ...
    debug build:   ...
    SIMD target:   ...
    ABI:           ...
    Python:        ...
    platform:      ...
    NumPy:         ...
    SciPy:         ...
    scikit-learn:  ...
    """
    items = _config_items()
    width = max(len(name) for name, _ in items) + 3
    for name, value in items:
        print(f"{name + ':':<{width}}{value}")
