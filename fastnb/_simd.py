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
import os

from fastnb import _kernels as _baseline

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
