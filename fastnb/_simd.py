"""The compiled kernels for this CPU, chosen once at import.

The kernels are two compiled modules. ``fastnb._kernels`` holds those whose
speed does not depend on the instruction set (labels, the tables made from
a fit's statistics, the fit of categorical codes, ...), built once.
``fastnb._vectorised`` holds those whose speed does (the checks of X's
values, counting, Gaussian moments and every scoring kernel), built more
than once from the same source: on x86-64 for baseline x86-64
(``fastnb._vectorised``), for AVX2 with FMA (``fastnb._vectorised_avx2``,
Haswell and later) and for AVX-512 (``fastnb._vectorised_avx512``); on
aarch64 for baseline ARMv8-A, whose NEON vectors every aarch64 CPU has
(``fastnb._vectorised``), and for SVE (``fastnb._vectorised_sve``: Graviton
3 and later, Neoverse V1 and later).

``kernels`` is the one namespace the estimators call: the public names of
``fastnb._kernels`` and of the newest variant of ``fastnb._vectorised``
that was built and that this CPU runs (``target`` names it). The
environment variable ``FASTNB_SIMD`` (``baseline``, ``avx2``, ``avx512`` or
``sve``) asks for one variant instead, for measurements and tests; asking
for one the CPU cannot run, or that was not built, raises ImportError.
"""

import importlib
import importlib.util
import os
import types

from fastnb._variants import VARIANTS as _VARIANTS


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
    # (Imported as modules, not names of fastnb: mypy then takes them for
    # modules without stubs, typed Any, as pyproject.toml declares.)
    import fastnb._kernels as _common
    import fastnb._vectorised as _baseline
except ImportError as error:
    _raise_kernels_missing(error)

# Newest first; a CPU runs the variants of its own architecture only.
VARIANTS = tuple(_VARIANTS)


def _load(variant):
    """The vectorised module of a variant, or None if it was not built."""
    if variant == "baseline":
        return _baseline
    try:
        return importlib.import_module(f"fastnb._vectorised_{variant}")
    except ImportError:
        return None


def _public(module):
    """A compiled module's kernels and constants: its names without a
    leading underscore, less the modules it imports."""
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }


def kernel_set(variant):
    """Every kernel, with ``variant``'s vectorised ones: a namespace with the
    ``__name__`` and ``__file__`` of that variant's module, or None if the
    variant was not built.

    Ask the CPU first (``fastnb._kernels.cpu_runs``): a variant's module may
    use its instructions as it loads.
    """
    vectorised = _load(variant)
    if vectorised is None:
        return None
    return types.SimpleNamespace(
        __name__=vectorised.__name__,
        __file__=vectorised.__file__,
        **(_public(_common) | _public(vectorised)),
    )


def _choose():
    wanted = os.environ.get("FASTNB_SIMD", "").strip().lower()
    if wanted in ("", "auto"):
        for variant in VARIANTS:
            if _common.cpu_runs(variant) and (chosen := kernel_set(variant)):
                return variant, chosen
        return "baseline", kernel_set("baseline")
    if wanted == "baseline":
        return "baseline", kernel_set("baseline")
    if wanted not in VARIANTS:
        raise ImportError(
            f"FASTNB_SIMD={wanted!r}: expected one of auto, baseline, "
            f"{', '.join(VARIANTS)}."
        )
    if not _common.cpu_runs(wanted):
        raise ImportError(f"FASTNB_SIMD={wanted!r}: this CPU cannot run it.")
    chosen = kernel_set(wanted)
    if chosen is None:
        raise ImportError(f"FASTNB_SIMD={wanted!r}: this build has no such kernels.")
    return wanted, chosen


target, kernels = _choose()
