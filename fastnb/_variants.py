"""The instruction-set variants of the vectorised kernels: the one list.

setup.py builds a copy of fastnb._vectorised for each variant of the target
architecture (``fastnb._vectorised_<name>``, compiled with its flag), and
fastnb._simd loads the first the CPU runs, in this order (newest first). A
new variant also needs its CPU check: ``fastnb_cpu_runs_<name>`` in
_rows.h, which fastnb._kernels.cpu_runs calls.

Data only, importing nothing: setup.py reads it before fastnb is built.
"""

# Name -> (architecture, the compiler flag of its build), newest first.
VARIANTS = {
    "avx512": ("x86_64", "-march=skylake-avx512"),
    "avx2": ("x86_64", "-march=haswell"),
    "sve": ("aarch64", "-march=armv8.2-a+sve"),
}
