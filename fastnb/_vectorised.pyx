"""Compiled loops of fastnb whose speed depends on the instruction set: built
once a variant (baseline, AVX2, AVX-512 or SVE), fastnb._simd choosing the
one the CPU runs.  The others, built once, are in fastnb._kernels.

A family's kernels are in a file of its own, the shared ones in files by
stage, all included at the end of this one: _vectorised_input.pxi (X's
values checked before counting, a class's CSR rows read in turn),
_vectorised_scoring.pxi (the scoring driver and the finishing of scores),
_vectorised_terms.pxi (each stored value's term of the linear families, for
explanations); _vectorised_counts.pxi (the count families' sums and
scores), _vectorised_gaussian.pxi (GaussianNB's moments and scores),
_vectorised_categorical.pxi (CategoricalNB's scores and terms) and
_vectorised_kde.pxi (KernelDensityNB's scores); and _vectorised_rows.pxi,
rendered by setup.py from _vectorised_rows.pxi.tp, the scoring kernels' rows
functions. Every kernel trusts its
inputs: shapes, dtypes, contiguity and value ranges are checked in Python
before the call (a FASTNB_DEBUG=1 build checks every index anyway, and
raises IndexError). The caller allocates every output. Values are read in
their own type (float32 or float64; the count families' also int32, int64
and uint8, as text vectorizers make counts and booleans), never a converted
copy; statistics and scores are accumulated in float64.
"""

from cython cimport floating
from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport INFINITY, log

import numpy as np

from fastnb._kernel_helpers cimport (
    TABLE_BLOCK,
    VALUE_CHUNK,
    dealt_slots,
    dealt_task,
    first_flagged,
    merge_into,
    missing_code,
    sum_blocks,
    table_blocks,
)
from fastnb._rows cimport (
    FASTNB_BLOCK,
    FASTNB_KDE_BLOCK,
    code_t,
    count_dense_row,
    count_t,
    fastnb_counted,
    fastnb_debug_build,
    fastnb_exp_less,
    fastnb_prefetch,
    fastnb_product,
    fastnb_refused,
    fastnb_row_refused_double,
    fastnb_row_refused_float,
    fastnb_row_refused_int32_t,
    fastnb_row_refused_int64_t,
    fastnb_row_refused_uint8_t,
    fastnb_row_whole_double,
    fastnb_row_whole_float,
    fastnb_row_whole_int32_t,
    fastnb_row_whole_int64_t,
    fastnb_row_whole_uint8_t,
    fastnb_whole,
    fastnb_zero,
    index_t,
    intp_t,
    value_t,
)


def debug_build():
    """Whether these kernels were built with bounds checks (FASTNB_DEBUG=1)."""
    return bool(fastnb_debug_build())


cpdef enum Output:
    # What the scoring kernels write for each row (their `output` argument).
    JOINT_LOG_LIKELIHOOD = 0
    LOG_PROBA = 1
    PROBA = 2
    ARGMAX = 3
    # The class of least expected cost: `out` is then the cost matrix C
    # (n_classes, n_classes), read, never written, and labels[i] receives
    # the class (see _least_cost).
    MIN_EXPECTED_COST = 4


include "_vectorised_input.pxi"
include "_vectorised_scoring.pxi"
include "_vectorised_terms.pxi"
include "_vectorised_counts.pxi"
include "_vectorised_gaussian.pxi"
include "_vectorised_categorical.pxi"
include "_vectorised_kde.pxi"
include "_vectorised_rows.pxi"
