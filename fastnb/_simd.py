"""The compiled kernels for this CPU, chosen once at import.

On x86-64 the kernels are built three times from the same source: for
baseline x86-64 (``fastnb._kernels``), for AVX2 with FMA
(``fastnb._kernels_avx2``, Haswell and later) and for AVX-512
(``fastnb._kernels_avx512``); on aarch64 twice: for baseline ARMv8-A, whose
NEON vectors every aarch64 CPU has (``fastnb._kernels``), and for SVE
(``fastnb._kernels_sve``: Graviton 3 and later, Neoverse V1 and later).
``kernels`` is the newest variant that was built and that this CPU runs.
The environment variable ``FASTNB_SIMD`` (``baseline``, ``avx2``,
``avx512`` or ``sve``) asks for one variant instead, for measurements and
tests; asking for one the CPU cannot run, or that was not built, raises
ImportError.
"""

import importlib
import importlib.util
import os


def _raise_kernels_missing(error):
    """Raise a clearer ImportError when fastnb's folder holds no compiled kernels.

    The usual cause is Python started in a checkout of fastnb's source: the
    folder ``fastnb/`` there comes first on ``sys.path`` and hides the
    installed package, and Python's own message blames a circular import.
    When the kernels are there but failed to load, ``error`` is raised as is.
    """
    if importlib.util.find_spec("fastnb._kernels") is not None:
        raise error
    folder = os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(os.path.join(folder, "_kernels.pyx")):
        raise ImportError(
            "fastnb's compiled kernels (fastnb._kernels) are missing: fastnb is "
            f"being imported from its source folder, {folder}, which holds no "
            "build of them. To use the installed fastnb, run Python from "
            "another folder; to use this source, build it in place first "
            f"(pip install -e . in {os.path.dirname(folder)})."
        ) from None
    raise ImportError(
        f"fastnb's compiled kernels (fastnb._kernels) are missing from {folder}: "
        "the installation is incomplete; reinstall fastnb."
    ) from error


try:
    # (Imported as a module, not a name of fastnb: mypy then takes it for a
    # module without stubs, typed Any, as pyproject.toml declares.)
    import fastnb._kernels as _baseline
except ImportError as error:
    _raise_kernels_missing(error)

# Newest first; a CPU runs the variants of its own architecture only.
VARIANTS = ("avx512", "avx2", "sve")


def _load(variant):
    """The kernels module of a variant, or None if it was not built."""
    try:
        return importlib.import_module(f"fastnb._kernels_{variant}")
    except ImportError:
        return None


def _choose():
    wanted = os.environ.get("FASTNB_SIMD", "").strip().lower()
    if wanted in ("", "auto"):
        for variant in VARIANTS:
            if _baseline.cpu_runs(variant) and (module := _load(variant)):
                return variant, module
        return "baseline", _baseline
    if wanted == "baseline":
        return "baseline", _baseline
    if wanted not in VARIANTS:
        raise ImportError(
            f"FASTNB_SIMD={wanted!r}: expected one of auto, baseline, "
            f"{', '.join(VARIANTS)}."
        )
    if not _baseline.cpu_runs(wanted):
        raise ImportError(f"FASTNB_SIMD={wanted!r}: this CPU cannot run it.")
    module = _load(wanted)
    if module is None:
        raise ImportError(f"FASTNB_SIMD={wanted!r}: this build has no such kernels.")
    return wanted, module


target, kernels = _choose()
