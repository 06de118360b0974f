"""``show_config``: how this copy of fastnb was built and what it runs with."""

from __future__ import annotations

import os
import platform
import sys

import numpy as np
import scipy
import sklearn

from fastnb import _base
from fastnb._simd import kernels as _kernels  # the variant in use


def _simd_target():
    """The instruction-set variant of the kernels in use (see fastnb._simd)."""
    from fastnb import _simd

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
    import fastnb  # here, not above: fastnb/__init__.py imports this module

    package_dir = os.path.dirname(os.path.abspath(fastnb.__file__))
    yes_no = {True: "yes", False: "no"}
    return [
        ("fastnb", f"{fastnb.__version__} ({package_dir})"),
        ("OpenMP", _openmp()),
        ("threads", str(_base.effective_n_threads())),
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
