"""Compiled loops of fastnb whose speed does not depend on the instruction
set, built once (fastnb._vectorised holds those that do, built once a
variant: see fastnb._simd).

Here: the build's facts (OpenMP, the CPU's instruction sets); the kernels
are in files included at the end of this one, the shared ones by stage
and a family's in its own: _kernels_input.pxi (a sparse matrix's
structure, the labels), _kernels_counts.pxi (the count families' tables),
_kernels_gaussian.pxi (GaussianNB's moments merged and pooled, its
tables), _kernels_categorical.pxi (CategoricalNB's fit of codes and its
tables), _kernels_kde.pxi (KernelDensityNB's binning) and
_kernels_text.pxi (fastnb.text's analyzers). Every kernel trusts its inputs: shapes,
dtypes, contiguity and value ranges are checked in Python before the call, a
sparse matrix's structure by sparse_structure_error (a FASTNB_DEBUG=1 build
checks every index anyway, and raises IndexError). The caller allocates
every output. Values are read in their own precision (float32 or float64);
statistics are accumulated in float64.
"""

from cpython.bytes cimport PyBytes_AsStringAndSize
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from cython cimport floating
from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t, uint64_t
from libc.math cimport INFINITY, exp, frexp, ldexp, log, rint
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from fastnb._kernel_helpers cimport (
    TABLE_BLOCK,
    VALUE_CHUNK,
    dealt_slots,
    dealt_task,
    first_flagged,
    label_chunk,
    merge_into,
    missing_code,
    sum_blocks,
    table_blocks,
)
from fastnb._text cimport (
    FASTNB_CODE_POINTS,
    FASTNB_COUNT,
    FASTNB_HASH,
    FASTNB_LOOKUP,
    fastnb_analyze,
    fastnb_analyzer,
    fastnb_key_bits,
    fastnb_merge_terms,
    fastnb_release_freed,
    fastnb_sort_entries,
    fastnb_sort_terms,
    fastnb_sum_entries,
    fastnb_term_hash,
    fastnb_text_state,
    fastnb_text_state_free,
    fastnb_text_state_free_scratch,
    fastnb_vocab,
    fastnb_vocab_add,
    fastnb_vocab_free,
)
from fastnb._rows cimport (
    categorical_check_rows,
    categorical_count_rows,
    code_t,
    fastnb_cpu_runs_avx2,
    fastnb_cpu_runs_avx512,
    fastnb_cpu_runs_sve,
    fastnb_debug_build,
    fastnb_omp_max_threads,
    fastnb_openmp_enabled,
    fastnb_openmp_runtime,
    fastnb_whole,
    fastnb_zero,
    index_t,
    intp_t,
)


def openmp_enabled():
    """Whether the kernels were compiled with OpenMP."""
    return bool(fastnb_openmp_enabled())


def openmp_runtime():
    """The file of the OpenMP runtime the kernels call ("" without OpenMP)."""
    return fastnb_openmp_runtime().decode("utf-8", "replace")


def cpu_runs(variant):
    """Whether this CPU runs the kernels compiled for variant ("avx2",
    "avx512" on x86-64, "sve" on aarch64)."""
    if variant == "avx512":
        return bool(fastnb_cpu_runs_avx512())
    if variant == "avx2":
        return bool(fastnb_cpu_runs_avx2())
    if variant == "sve":
        return bool(fastnb_cpu_runs_sve())
    raise ValueError(f"unknown instruction-set variant {variant!r}")


def debug_build():
    """Whether the kernels were built with bounds checks (FASTNB_DEBUG=1)."""
    return bool(fastnb_debug_build())


def openmp_max_threads():
    """OpenMP's current thread limit (OMP_NUM_THREADS, threadpoolctl); 1 without it."""
    return fastnb_omp_max_threads()


include "_kernels_input.pxi"
include "_kernels_counts.pxi"
include "_kernels_gaussian.pxi"
include "_kernels_categorical.pxi"
include "_kernels_kde.pxi"
include "_kernels_text.pxi"
