"""Compiled loops of fastnb whose speed does not depend on the instruction
set, built once (fastnb._vectorised holds those that do, built once a
variant: see fastnb._simd).

Here: the build's facts (OpenMP, the CPU's instruction sets), sparse
structure checks, labels, the tables made from a fit's statistics, the
merging of Gaussian moments, the fit of categorical codes, and the binning
of KernelDensityNB.  Every kernel trusts its inputs: shapes, dtypes,
contiguity and value ranges are checked in Python before the call, a sparse
matrix's structure by sparse_structure_error (a FASTNB_DEBUG=1 build checks
every index anyway, and raises IndexError).  The caller allocates every
output.  Values are read in their own precision (float32 or float64);
statistics are accumulated in float64.
"""

from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.stdint cimport int64_t, uint64_t
from libc.math cimport INFINITY, exp, frexp, ldexp, log, rint

import numpy as np

from fastnb._kernel_helpers cimport (
    TABLE_BLOCK,
    VALUE_CHUNK,
    first_flagged,
    merge_into,
    missing_code,
    sum_blocks,
    table_blocks,
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


# ---------------------------------------------------------------------------
# Sparse structure.  scipy's conversions and every sparse kernel trust a
# matrix's indptr and indices, which a user can set to anything: they are
# checked first, in parallel (fastnb._base.check_sparse_structure).
# ---------------------------------------------------------------------------

def sparse_structure_error(
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_minor,
    int n_threads,
):
    """The first malformed row of a CSR (column of a CSC) matrix, or -1; and
    whether every row's indices are strictly increasing (canonical format).

    Row i is malformed unless 0 <= indptr[i] <= indptr[i + 1] <= len(indices)
    and each of its indices is in 0 .. n_minor - 1.  Each row's offsets are
    checked before its indices are read.
    """
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t nnz = indices.shape[0]
    # The first malformed row each thread met (see first_flagged); a thread
    # stops looking after its first.  Static, an equal run of rows a thread:
    # handed out a chunk at a time, the threads that woke first took most
    # of them (bench/README.md, "scoring in one run a thread").
    cdef intp_t[::1] first_bad = np.full(n_threads, n_major, dtype=np.intp)
    # Whether a thread met a row whose indices are not strictly increasing.
    cdef intp_t[::1] unsorted = np.zeros(n_threads, dtype=np.intp)
    cdef Py_ssize_t i, p, t, start, stop
    cdef bint outside, descending
    for i in prange(n_major, nogil=True, schedule="static", num_threads=n_threads):
        t = threadid()
        if first_bad[t] < n_major:
            continue
        start = indptr[i]
        stop = indptr[i + 1]
        if not (0 <= start <= stop <= nnz):
            first_bad[t] = i
            continue
        if start == stop:
            continue
        # Branch-free over the row, so that the compiler vectorises it (a
        # negative index is a huge unsigned one): a third of the time of a
        # loop that stopped at the first index outside.
        outside = <size_t>indices[start] >= <size_t>n_minor
        descending = False
        for p in range(start + 1, stop):
            outside = outside | (<size_t>indices[p] >= <size_t>n_minor)
            descending = descending | (indices[p] <= indices[p - 1])
        if outside:
            first_bad[t] = i
        elif descending:
            unsorted[t] = 1
    return first_flagged(first_bad, n_major), not np.any(unsorted)


# ---------------------------------------------------------------------------
# Labels.  Integer labels are encoded by table lookup, in parallel
# (fastnb._validation.encode_fit_labels, encode_labels); class_order groups
# the encoded rows by class.
#
# The kernels that sum a batch's statistics take its labels as three label
# arrays (fastnb._labels.label_arrays): label_ptr, label_class and
# label_weight.  Row i's labels are the entries label_ptr[i] ..
# label_ptr[i + 1] - 1, entry e of class label_class[e] and weight
# label_weight[e] (the row's sample weight times its probability of the
# class); an empty label_ptr means one entry a row, entry i (hard labels,
# label_weight then the sample weights).  A statistic of class c sums
# weight times value over the entries of class c, in row order, so labels
# of one class a row (probability 1) give the sums of hard labels bit for
# bit.
# ---------------------------------------------------------------------------

def label_range(const int64_t[::1] y, int n_threads):
    """(least, greatest) label of a non-empty y."""
    cdef Py_ssize_t n = y.shape[0]
    cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
    cdef int64_t[::1] least = np.full(n_chunks, y[0], dtype=np.int64)
    cdef int64_t[::1] greatest = np.full(n_chunks, y[0], dtype=np.int64)
    cdef Py_ssize_t b, i
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(b * VALUE_CHUNK, min((b + 1) * VALUE_CHUNK, n)):
            if y[i] < least[b]:
                least[b] = y[i]
            if y[i] > greatest[b]:
                greatest[b] = y[i]
    return int(np.min(least)), int(np.max(greatest))


def label_presence(
    const int64_t[::1] y,
    int64_t lowest,
    unsigned char[:, ::1] present,
    int n_threads,
):
    """present[t, y_i - lowest] = 1 for the rows i thread t reads.

    present (n_threads, span) is zeroed by the caller; labels must be in
    lowest .. lowest + span - 1. A row of present a thread: none written by
    two.
    """
    cdef Py_ssize_t n = y.shape[0]
    cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
    cdef Py_ssize_t b, i, t
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        t = threadid()
        for i in range(b * VALUE_CHUNK, min((b + 1) * VALUE_CHUNK, n)):
            present[t, y[i] - lowest] = 1


def class_lookup(const int64_t[::1] classes, Py_ssize_t max_span):
    """The table encode_by_lookup reads for classes, or None.

    ``(lowest, lookup)``, lookup[c - lowest] the index of class c and -1
    for the values between that are not classes, when the classes are
    strictly increasing and span at most max_span values; else None.
    """
    cdef Py_ssize_t n = classes.shape[0]
    cdef Py_ssize_t k
    cdef uint64_t width
    if n == 0:
        return None
    for k in range(1, n):
        if classes[k] <= classes[k - 1]:
            return None
    # Unsigned: the classes' difference always fits.
    width = <uint64_t> classes[n - 1] - <uint64_t> classes[0]
    if width >= <uint64_t> max_span:
        return None
    cdef intp_t[::1] lookup = np.empty(width + 1, dtype=np.intp)
    lookup[:] = -1
    for k in range(n):
        lookup[classes[k] - classes[0]] = k
    return classes[0], np.asarray(lookup)


def encode_by_lookup(
    const int64_t[::1] y,
    int64_t lowest,
    const intp_t[::1] lookup,
    intp_t[::1] out,
    int n_threads,
):
    """out[i] = lookup[y_i - lowest]; returns the first row whose label is
    outside the lookup or maps to -1 (not a class), or -1."""
    cdef Py_ssize_t n = y.shape[0]
    cdef Py_ssize_t span = lookup.shape[0]
    cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
    cdef intp_t[::1] first_bad = np.full(n_threads, n, dtype=np.intp)
    cdef Py_ssize_t b, i, t
    cdef uint64_t offset
    for b in prange(n_chunks, nogil=True, schedule="dynamic", num_threads=n_threads):
        t = threadid()
        if first_bad[t] < n:
            continue
        for i in range(b * VALUE_CHUNK, min((b + 1) * VALUE_CHUNK, n)):
            # Unsigned: a label below lowest wraps past span, never overflows.
            offset = <uint64_t> y[i] - <uint64_t> lowest
            if offset >= <uint64_t> span or lookup[offset] < 0:
                first_bad[t] = i
                break
            out[i] = lookup[offset]
    return first_flagged(first_bad, n)


def class_weights(
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    double[::1] out,
    int n_threads,
):
    """out[c] = the weight of the labels of class c.

    A batch's labels (the label arrays: see "Labels" above). Summed per
    chunk of VALUE_CHUNK rows, in row order, then over the chunks in order:
    the same for any number of threads.
    """
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t n = label_ptr.shape[0] - 1 if soft else label_class.shape[0]
    cdef Py_ssize_t n_classes = out.shape[0]
    cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
    cdef double[:, ::1] chunk_sums = np.zeros((max(n_chunks, 1), n_classes))
    cdef Py_ssize_t b, i, e
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(b * VALUE_CHUNK, min((b + 1) * VALUE_CHUNK, n)):
            for e in range(label_ptr[i] if soft else i,
                           label_ptr[i + 1] if soft else i + 1):
                chunk_sums[b, label_class[e]] += label_weight[e]
    sum_blocks(chunk_sums, out)


def class_order(
    const intp_t[::1] y,
    intp_t[::1] order,
    intp_t[::1] class_ptr,
    int n_threads,
):
    """Rows grouped by class, each group in row order (a counting sort).

    class_ptr (n_classes + 1) gets each group's start in order; y holds
    class indices 0 .. n_classes - 1. Each thread counts, then places, the
    classes of one contiguous part of the rows; a part's rows of a class go
    after those of the parts before it, so the order is the same for any
    number of threads (numpy.argsort(y, kind="stable")).
    """
    cdef Py_ssize_t n_samples = y.shape[0]
    cdef Py_ssize_t n_classes = class_ptr.shape[0] - 1
    cdef Py_ssize_t n_parts = max(1, min(n_threads, n_samples))
    cdef Py_ssize_t part_rows = (n_samples + n_parts - 1) // n_parts
    # A part's counts, then its next slot per class; rows a cache line (8
    # counts) apart, so that threads write apart, and no longer than the
    # classes, so that the bounds-checked build refuses a class past them.
    cdef intp_t[:, :] slot = np.zeros(
        (n_parts, n_classes + 8), dtype=np.intp
    )[:, :n_classes]
    cdef Py_ssize_t p, i, c
    cdef intp_t start
    for p in prange(n_parts, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(p * part_rows, min((p + 1) * part_rows, n_samples)):
            slot[p, y[i]] += 1
    with nogil:
        class_ptr[0] = 0
        for c in range(n_classes):
            start = class_ptr[c]
            for p in range(n_parts):
                start = start + slot[p, c]
                slot[p, c] = start - slot[p, c]
            class_ptr[c + 1] = start
    for p in prange(n_parts, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(p * part_rows, min((p + 1) * part_rows, n_samples)):
            c = y[i]
            order[slot[p, c]] = i
            slot[p, c] += 1


# ---------------------------------------------------------------------------
# Gaussian moments merged, pooled, and made into tables
# ---------------------------------------------------------------------------

# Moments are merged by the pairwise formula of Chan, Golub and LeVeque: with
# counts n, m, means a, b and ssds s, t, the union has count n + m, mean
# a + (b - a) m / (n + m) and ssd s + t + (b - a)^2 n m / (n + m).  Each
# entry is merged on its own; threads take blocks of features.

cdef Py_ssize_t _count_step(
    const double[:, :] count, Py_ssize_t n_rows, Py_ssize_t n_features, str name
) except -1:
    """The step from one feature's weight to the next in ``count``, the
    weights of a set of moments of shape (n_rows, n_features): 1 for a
    weight an entry, 0 for a column (n_rows, 1) of a weight a row.
    ValueError for any other shape."""
    if count.shape[0] == n_rows and count.shape[1] in (1, n_features):
        return 1 if count.shape[1] == n_features else 0
    raise ValueError(
        f"{name} must be ({n_rows}, {n_features}) or ({n_rows}, 1); got "
        f"({count.shape[0]}, {count.shape[1]})"
    )


cdef inline bint _has_shape(
    const double[:, :] array, Py_ssize_t n_rows, Py_ssize_t n_columns
) noexcept:
    return array.shape[0] == n_rows and array.shape[1] == n_columns


def merge_moments(
    const double[:, :] count,
    const double[:, :] mean,
    const double[:, :] ssd,
    const double[:, :] batch_count,
    const double[:, :] batch_mean,
    const double[:, :] batch_ssd,
    double[:, ::1] merged_mean,
    double[:, ::1] merged_ssd,
    int n_threads,
):
    """Merged means and ssds of two sets of moments, entry by entry.

    The means and ssds are (n_rows, n_features); each count is a weight an
    entry, of that shape, or a column (n_rows, 1), a weight a row.  An
    entry whose counts are both 0 keeps the first's moments plus the
    second's ssd.
    """
    cdef Py_ssize_t n_rows = mean.shape[0]
    cdef Py_ssize_t n_features = mean.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef Py_ssize_t step = _count_step(count, n_rows, n_features, "count")
    cdef Py_ssize_t batch_step = _count_step(
        batch_count, n_rows, n_features, "batch_count"
    )
    cdef Py_ssize_t b, c, j
    if not (
        _has_shape(ssd, n_rows, n_features)
        and _has_shape(batch_mean, n_rows, n_features)
        and _has_shape(batch_ssd, n_rows, n_features)
        and _has_shape(merged_mean, n_rows, n_features)
        and _has_shape(merged_ssd, n_rows, n_features)
    ):
        raise ValueError("the means and ssds must all have the shape of mean")
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_rows):
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                merged_mean[c, j] = mean[c, j]
                merged_ssd[c, j] = ssd[c, j]
                merge_into(
                    count[c, j * step], &merged_mean[c, j], &merged_ssd[c, j],
                    batch_count[c, j * batch_step], batch_mean[c, j],
                    batch_ssd[c, j],
                )


def merge_zero_moments(
    const double[:, :] count,
    const double[:, ::1] stored_count,
    double[:, ::1] mean,
    double[:, ::1] ssd,
    int n_threads,
):
    """Moments of the stored values of a sparse X merged, in place, with
    those of its implicit zeros: count[c, j] - stored_count[c, j] zeros
    (none if negative by rounding), of mean 0 and ssd 0. count is the
    weight of entry (c, j)'s values, or, where no values are missing, a
    column (n_classes, 1) of the class weights."""
    cdef Py_ssize_t n_classes = mean.shape[0]
    cdef Py_ssize_t n_features = mean.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef Py_ssize_t step = _count_step(count, n_classes, n_features, "count")
    cdef Py_ssize_t b, c, j
    cdef double zeros, merged_mean, merged_ssd
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                zeros = count[c, j * step] - stored_count[c, j]
                if not zeros > 0:
                    zeros = 0.0
                merged_mean = 0.0
                merged_ssd = 0.0
                merge_into(
                    zeros, &merged_mean, &merged_ssd,
                    stored_count[c, j], mean[c, j], ssd[c, j],
                )
                mean[c, j] = merged_mean
                ssd[c, j] = merged_ssd


def pooled_moments(
    const double[:, :] count,
    const double[:, ::1] mean,
    const double[:, ::1] ssd,
    double[::1] pooled_mean,
    double[::1] pooled_ssd,
    int n_threads,
):
    """Mean and ssd of each feature over all classes together, from each
    entry's (count, mean, ssd): the mean sum_c n_cj a_cj / n_j, the ssd
    sum_c s_cj + sum_c n_cj (a_cj - mean)^2, n_j = sum_c n_cj (mean and
    ssd 0 where n_j = 0); classes are summed in order.  count is each
    entry's weight, or, where no values are missing, a column (n_classes,
    1) of the class weights."""
    cdef Py_ssize_t n_classes = mean.shape[0]
    cdef Py_ssize_t n_features = mean.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef Py_ssize_t step = _count_step(count, n_classes, n_features, "count")
    cdef Py_ssize_t b, c, j
    cdef double n_samples, total, spread, delta
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
            n_samples = 0.0
            for c in range(n_classes):
                n_samples = n_samples + count[c, j * step]
            if not n_samples > 0:
                pooled_mean[j] = 0.0
                pooled_ssd[j] = 0.0
                continue
            total = 0.0
            for c in range(n_classes):
                total = total + count[c, j * step] * mean[c, j]
            total = total / n_samples
            pooled_mean[j] = total
            spread = 0.0
            for c in range(n_classes):
                delta = mean[c, j] - total
                spread = spread + count[c, j * step] * delta * delta
            pooled_ssd[j] = _sum_classes(ssd, j) + spread


def gaussian_tables(
    const double[:, ::1] theta,
    const double[:, :] ssd,
    const double[:, :] dof,
    double epsilon,
    double[:, ::1] variance,
    double[:, ::1] theta_table,
    double[:, ::1] inv_var_table,
    double[:, ::1] log_var_table,
    double[::1] log_var_sums,
    int n_threads,
):
    """GaussianNB's variances and scoring tables; threads over features.

    variance[c, j] = ssd[c, j] / dof[c, j] (0 where dof <= 0) + epsilon,
    ssd and dof being (n_classes, n_features) views (pooled ones broadcast,
    with stride 0); theta_table[j, c] = theta[c, j] and inv_var_table[j, c]
    = 1 / variance[c, j] (class padding zeroed by the caller);
    log_var_sums[c] = sum_j log(2 pi variance[c, j]), by blocks of
    features as the count families' sums, and, unless log_var_table is
    empty (it is for a model with missing="error"), log_var_table[j, c] =
    log(2 pi variance[c, j]). Returns how many variances are not positive
    (then the tables are not to be used).
    """
    cdef Py_ssize_t n_classes = theta.shape[0]
    cdef Py_ssize_t n_features = theta.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef intp_t[::1] block_bad = np.zeros(n_blocks, dtype=np.intp)
    cdef double two_pi = 2.0 * np.pi
    cdef bint write_log_var = log_var_table.shape[0] > 0
    cdef Py_ssize_t b, c, j
    cdef double total, value, log_value
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            total = 0.0
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                value = ssd[c, j] / dof[c, j] if dof[c, j] > 0 else 0.0
                value = value + epsilon
                if not value > 0:
                    block_bad[b] += 1
                variance[c, j] = value
                theta_table[j, c] = theta[c, j]
                inv_var_table[j, c] = 1.0 / value
                log_value = log(two_pi * value)
                if write_log_var:
                    log_var_table[j, c] = log_value
                total = total + log_value
            block_sums[b, c] = total
    sum_blocks(block_sums, log_var_sums)
    return np.sum(block_bad)


def gaussian_sparse_table(
    const double[:, ::1] theta,
    const double[:, ::1] inv_var,
    double[:, :, ::1] table,
    int n_threads,
):
    """The table of gaussian_score_csr from feature-major theta and 1 / var
    (n_features, n_classes); threads over features. Returns False, leaving
    the table unfinished, where a term overflows.

    table (n_features + 1, 4, n_classes), zeroed by the caller, gets for
    feature j theta[j], inv_var[j] and the term T = theta^2 inv_var split
    as hi + lo, hi being T rounded to a multiple of q_c = 2^(e_c - 52),
    where 2^e_c is the power of two above the class's sum of T (q_c at
    least 2^-1021): all the hi of a class, and so any of their partial
    sums, are then multiples of q_c below 2^53 q_c, exact doubles, and each
    lo is at most q_c / 2. Its last row holds the sums of the hi (exact)
    and of the lo in the places of hi and lo.
    """
    cdef Py_ssize_t n_features = theta.shape[0]
    cdef Py_ssize_t n_classes = theta.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef double[:, ::1] block_lo = np.zeros((n_blocks, n_classes))
    cdef double[::1] sums = np.empty(n_classes)
    cdef int[::1] shift = np.empty(n_classes, dtype=np.intc)
    cdef Py_ssize_t b, c, j
    cdef int exponent
    cdef double term, hi, total, total_lo
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            total = 0.0
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                total = total + theta[j, c] * theta[j, c] * inv_var[j, c]
            block_sums[b, c] = total
    sum_blocks(block_sums, sums)
    for c in range(n_classes):
        if not sums[c] - sums[c] == 0.0:
            return False
        frexp(sums[c], &exponent)
        shift[c] = max(exponent, -969) - 52
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            total = 0.0
            total_lo = 0.0
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                term = theta[j, c] * theta[j, c] * inv_var[j, c]
                hi = ldexp(rint(ldexp(term, -shift[c])), shift[c])
                table[j, 0, c] = theta[j, c]
                table[j, 1, c] = inv_var[j, c]
                table[j, 2, c] = hi
                table[j, 3, c] = term - hi
                total = total + hi
                total_lo = total_lo + (term - hi)
            block_sums[b, c] = total
            block_lo[b, c] = total_lo
    sum_blocks(block_sums, table[n_features, 2])
    sum_blocks(block_lo, table[n_features, 3])
    return True


# ---------------------------------------------------------------------------
# Tables of the count families, from their statistics (fastnb._discrete):
# the public class-major attribute (n_classes, n_features) and the
# feature-major scoring table (n_features, n_padded), whose class padding
# the caller has zeroed, written together.  Threads take blocks of
# TABLE_BLOCK features.  A sum over the features of a class is taken per
# block in feature order, then over the blocks in order, so no table
# depends on the number of threads; a sum over the classes of a feature
# runs in class order, as NumPy's sum(axis=0).  Per-feature smoothing
# arguments are (n_features,) views (stride 0 for one value).
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _tile_rows(Py_ssize_t n_padded) noexcept nogil:
    """Rows of a feature-major table (n_padded doubles each) that fill 16
    KiB, a part of the L1 cache, and at least 8: a table written a class at
    a time writes a column, each row's line again for each class, and
    would fetch those lines anew from farther caches if there were more."""
    return max(8, 2048 // max(n_padded, 1))

cdef inline double _sum_classes(
    const double[:, :] counts, Py_ssize_t j
) noexcept nogil:
    """The sum of column j over the classes, in class order."""
    cdef Py_ssize_t c
    cdef double total = 0.0
    for c in range(counts.shape[0]):
        total = total + counts[c, j]
    return total


cdef enum:
    # Counts that are whole numbers below this take their log from a table
    # (_small_logs): in text nearly every (class, word) count is one (99.7%
    # of the bench's corpus), and libm's log was half of the tables' time.
    SMALL_COUNTS = 256


cdef double[::1] _small_logs(const double[:] pseudo):
    """log(k + a) for k = 0 .. SMALL_COUNTS - 1, when pseudo is one value a
    for every feature (a stride-0 view), by the log of every other entry,
    so bit for bit what log(N + a) gives for N = k; else empty."""
    cdef double[::1] logs
    cdef Py_ssize_t k
    if pseudo.shape[0] == 0 or pseudo.strides[0] != 0:
        return np.empty(0)
    logs = np.empty(SMALL_COUNTS)
    for k in range(SMALL_COUNTS):
        logs[k] = log(k + pseudo[0])
    return logs


cdef inline double _log_count(
    double count, double pseudo, const double* small_logs
) noexcept nogil:
    """log(count + pseudo); from small_logs (_small_logs, or NULL) where
    count is a whole number below SMALL_COUNTS."""
    cdef int k
    if small_logs != NULL and 0.0 <= count < SMALL_COUNTS:
        k = <int> count
        if k == count:
            return small_logs[k]
    return log(count + pseudo)


def multinomial_tables(
    const double[:, ::1] feature_count,
    const double[:] pseudo,
    double[:, ::1] log_prob,
    double[:, ::1] table,
    int n_threads,
):
    """log_prob[c, j] = log(N_cj + a_j) - log(sum_j' (N_cj' + a_j')), and
    table[j, c] = log_prob[c, j]; a = pseudo."""
    cdef Py_ssize_t n_classes = feature_count.shape[0]
    cdef Py_ssize_t n_features = feature_count.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef double[::1] log_total = np.empty(n_classes)
    cdef double[::1] small_logs = _small_logs(pseudo)
    cdef const double* small = &small_logs[0] if small_logs.shape[0] else NULL
    cdef Py_ssize_t tile_rows = _tile_rows(table.shape[1])
    cdef Py_ssize_t b, c, j, q, start, stop, tile
    cdef double total, value
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        for c in range(n_classes):
            total = 0.0
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                total = total + (feature_count[c, j] + pseudo[j])
            block_sums[b, c] = total
    sum_blocks(block_sums, log_total)
    for c in range(n_classes):
        log_total[c] = log(log_total[c])
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        # Tiles of features whose table rows stay in cache over the classes.
        for q in range((stop - start + tile_rows - 1) // tile_rows):
            tile = start + q * tile_rows
            for c in range(n_classes):
                for j in range(tile, min(tile + tile_rows, stop)):
                    value = _log_count(feature_count[c, j], pseudo[j], small)
                    value = value - log_total[c]
                    log_prob[c, j] = value
                    table[j, c] = value


def complement_tables(
    const double[:, ::1] feature_count,
    const double[:] alpha,
    bint norm,
    double[::1] feature_all,
    double[:, ::1] weights,
    double[:, ::1] table,
    int n_threads,
):
    """Complement NB's weights (and table[j, c] = weights[c, j]).

    feature_all[j] = sum_c N_cj; with the complement counts M_cj =
    feature_all[j] + a_j - N_cj, logged = log(M_cj / sum_j' M_cj'), and
    the weights are -logged, or with norm logged / sum_j' logged_cj'.
    """
    cdef Py_ssize_t n_classes = feature_count.shape[0]
    cdef Py_ssize_t n_features = feature_count.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef double[::1] class_sums = np.empty(n_classes)
    cdef Py_ssize_t b, c, j, start, stop
    cdef double total, value
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        for j in range(start, stop):
            feature_all[j] = _sum_classes(feature_count, j)
        for c in range(n_classes):
            total = 0.0
            for j in range(start, stop):
                total = total + ((feature_all[j] + alpha[j]) - feature_count[c, j])
            block_sums[b, c] = total
    sum_blocks(block_sums, class_sums)
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        for c in range(n_classes):
            total = 0.0
            for j in range(start, stop):
                value = log(
                    ((feature_all[j] + alpha[j]) - feature_count[c, j]) / class_sums[c]
                )
                total = total + value
                if not norm:
                    value = -value
                weights[c, j] = value
                table[j, c] = value
            block_sums[b, c] = total
    if not norm:
        return
    sum_blocks(block_sums, class_sums)
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                value = weights[c, j] / class_sums[c]
                weights[c, j] = value
                table[j, c] = value


def bernoulli_tables(
    const double[:, ::1] feature_count,
    const double[:, :] class_count,
    const double[:] pseudo_on,
    const double[:] pseudo_total,
    double[:, ::1] log_prob,
    double[:, ::1] table,
    double[:, ::1] missing,
    double[::1] absent_sums,
    unsigned char[:, ::1] certain,
    int n_threads,
):
    """Bernoulli NB's tables; returns how many (class, feature) are certain.

    class_count[c, j] is the weight of class c's samples in which feature
    j was seen: N_c (a stride-0 view), or less where values were missing.
    log_prob[c, j] = log p = log(N_cj + on_j) - log(class_count[c, j] +
    total_j); log(1 - p) is the score of an absent feature, summed over j
    into absent_sums[c], and table[j, c] = log p - log(1 - p); if missing
    has rows (missing="ignore"), missing[j, c] = -log(1 - p), the term of a
    missing value. Where p = 1 (no smoothing), log(1 - p) = -inf: such a
    feature is certain (certain[c, j] = 1, which the caller has zeroed),
    left out of the sums and the tables (its log(1 - p) taken as 0) and
    checked apart.
    """
    cdef Py_ssize_t n_classes = feature_count.shape[0]
    cdef Py_ssize_t n_features = feature_count.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef intp_t[::1] block_certain = np.zeros(n_blocks, dtype=np.intp)
    cdef bint track = missing.shape[0] > 0
    cdef Py_ssize_t b, c, j
    cdef double total, value, absent
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            total = 0.0
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                value = log(feature_count[c, j] + pseudo_on[j]) - log(
                    class_count[c, j] + pseudo_total[j]
                )
                log_prob[c, j] = value
                absent = log(1.0 - exp(value))
                if absent == -INFINITY:
                    certain[c, j] = 1
                    block_certain[b] += 1
                    absent = 0.0
                total = total + absent
                table[j, c] = value - absent
                if track:
                    missing[j, c] = -absent
            block_sums[b, c] = total
    sum_blocks(block_sums, absent_sums)
    return np.sum(block_certain)


def poisson_tables(
    const double[:, ::1] feature_count,
    const double[:, :] class_count,
    const double[:] alpha,
    double[::1] overall,
    double[:, ::1] rate,
    double[:, ::1] table,
    double[:, ::1] missing,
    double[::1] rate_sums,
    int n_threads,
):
    """Poisson NB's smoothed rates, table[j, c] = log rate[c, j], and
    rate_sums[c] = sum_j rate[c, j]; if missing has rows (missing="ignore"),
    missing[j, c] = rate[c, j], the term of a missing value.

    class_count[c, j] is the weight of class c's samples in which feature j
    was seen: N_c (a stride-0 view), or less where values were missing.
    overall[j] gets feature j's rate over all samples, (sum_c N_cj) /
    (sum_c class_count[c, j]) (0 when that is 0); rate[c, j] = (N_cj + a_j
    overall[j]) / (class_count[c, j] + a_j), or overall[j] where that
    weight is 0, and at least the smallest positive double.
    """
    cdef Py_ssize_t n_classes = feature_count.shape[0]
    cdef Py_ssize_t n_features = feature_count.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef bint track = missing.shape[0] > 0
    cdef double tiny = np.finfo(np.float64).tiny
    cdef Py_ssize_t b, c, j, start, stop
    cdef double total, value, weight, n_seen
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        for j in range(start, stop):
            total = _sum_classes(feature_count, j)
            n_seen = _sum_classes(class_count, j)
            overall[j] = total / n_seen if n_seen > 0 else 0.0
        for c in range(n_classes):
            total = 0.0
            for j in range(start, stop):
                weight = class_count[c, j] + alpha[j]
                if weight > 0:
                    value = (feature_count[c, j] + alpha[j] * overall[j]) / weight
                else:
                    value = overall[j]
                if value < tiny:
                    value = tiny
                rate[c, j] = value
                table[j, c] = log(value)
                if track:
                    missing[j, c] = value
                total = total + value
            block_sums[b, c] = total
    sum_blocks(block_sums, rate_sums)


# ---------------------------------------------------------------------------
# Categorical tables.  All features share one feature-major table: feature j
# owns rows offsets[j] .. offsets[j + 1] - 1, one per category code, and its
# last row stands for every code never seen in training (codes are clamped
# to it when scoring).
#
# Fitting reads X once.  Rows are taken in chunks (fixed by the data's
# shape), each counted into its own table, laid out for the largest codes
# the chunk has shown so far: a code within them is counted at once, any
# other checked (a whole number below max_categories) and, if good, the
# table widened for it.  The chunks' tables are then added up in chunk
# order, so the counts do not depend on the number of threads.  A chunk
# whose table outgrows its room only checks its codes from there on, and X
# is then counted again into tables laid out for the largest codes of all
# (categorical_count_dense).  The kernels that read X report the first bad
# code, in row-major order, for Python to raise on.
# ---------------------------------------------------------------------------

cdef enum:
    # Codes at the start of a chunk checked together to lay its table out,
    # and at least this many rows: every code found later that is larger
    # than its feature's moves the table (2,000 features laid out from 2
    # rows took 0.6 s to count 2,000 rows of 5 codes).
    CODE_BLOCK = 4096
    LAYOUT_ROWS = 64


cdef inline int _chunk_layout(
    const code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    Py_ssize_t b,
    Py_ssize_t n_classes,
) except -1 nogil:
    """Lay chunk b's table out for codes up to highest[b]; 0 if it has no room.

    Feature j's counts, a row of n_classes per code, run from tables[b,
    layout[b, j]] to tables[b, layout[b, j + 1]].  A layout for smaller
    codes is widened in place: features move up, the last first and each
    from its end (so nothing is overwritten before it is moved), and their
    new rows are zeroed.
    """
    cdef Py_ssize_t n_features = highest.shape[1]
    cdef Py_ssize_t room = tables.shape[1]
    cdef Py_ssize_t j, k, size, old_start, old_end, new_end
    cdef Py_ssize_t total = 0
    cdef bint wider = False
    for j in range(n_features):
        # Checked before multiplying or adding, so nothing overflows.
        if highest[b, j] >= room // n_classes:
            return 0
        size = (<Py_ssize_t> highest[b, j] + 1) * n_classes
        if size > room - total:
            return 0
        total += size
        wider = wider or size != layout[b, j + 1] - layout[b, j]
    if not wider:
        return 1
    old_end, new_end = layout[b, n_features], total
    for j in range(n_features - 1, -1, -1):
        size = (<Py_ssize_t> highest[b, j] + 1) * n_classes
        old_start = layout[b, j]
        # Not libc's memset (nor memmove): it left a new table's rows out of
        # cache, each then a miss in the count (measured on AMD Zen).
        for k in range(old_end - old_start - 1, -1, -1):
            tables[b, new_end - size + k] = tables[b, old_start + k]
        if size > old_end - old_start:
            fastnb_zero(
                &tables[b, new_end - size + old_end - old_start],
                size - (old_end - old_start),
            )
        layout[b, j + 1] = new_end
        old_end, new_end = old_start, new_end - size
    return 1


cdef inline bint _fit_code(code_t x, int64_t limit) noexcept nogil:
    """Whether x is a code a fit takes: a whole number from 0 to limit - 1."""
    if code_t is float or code_t is double:
        # In double: a float32 would round a limit past 2^24.
        return x >= 0 and <double> x < <double> limit and fastnb_whole(x)
    else:
        return x >= 0 and x < limit


cdef enum:
    # What _check_count_rows met.
    ALL_COUNTED = 0
    BAD_CODE = 1
    NO_ROOM = 2


cdef inline int _check_count_rows(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    Py_ssize_t n_classes,
    int64_t limit,
    Py_ssize_t start,
    Py_ssize_t stop,
    code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    Py_ssize_t b,
    bint missing,
    Py_ssize_t* where,
) except -1 nogil:
    """Count rows start .. stop - 1 into chunk b's table, checking each code.

    A code from 0 to highest[b, j] is counted at once; any other is
    checked: a bad one stops the count (BAD_CODE, its flat position in
    where), a larger good one raises highest[b, j] and widens the table,
    unless that has no room (NO_ROOM, the row in where: the rows before it
    are counted).  No sample_weight means unit weights; with missing, a NaN
    is a missing value, not counted.
    """
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(code_t)
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    cdef bint weighted = sample_weight.shape[0] > 0
    cdef Py_ssize_t i = start, j = 0, position
    cdef code_t x
    while i < stop:
        position = categorical_count_rows(
            &X[i, 0], row_stride, stride, stop - i, n_features, j, &y[i],
            &sample_weight[i] if weighted else NULL, &highest[b, 0], &layout[b, 0],
            n_classes, &tables[b, 0], tables.shape[1], missing,
        )
        if position == -1:
            break
        if position < 0:
            with gil:
                raise IndexError(
                    f"row {i - 2 - position} has a class or code outside the table"
                )
        i, j = i + position // n_features, position % n_features
        x = X[i, j]
        if not _fit_code(x, limit):
            where[0] = i * n_features + j
            return BAD_CODE
        highest[b, j] = x
        if not _chunk_layout(highest, layout, tables, b, n_classes):
            where[0] = i
            return NO_ROOM
        tables[b, layout[b, j] + (<Py_ssize_t> x) * n_classes + y[i]] += (
            sample_weight[i] if weighted else 1.0
        )
        j += 1
    return ALL_COUNTED


cdef inline Py_ssize_t _check_count_chunk(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    Py_ssize_t n_classes,
    int64_t limit,
    Py_ssize_t start,
    Py_ssize_t stop,
    code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    Py_ssize_t b,
    bint missing,
) except -2 nogil:
    """Check and count rows start .. stop - 1 as chunk b; the first bad code or -1.

    See categorical_check_count_dense.
    """
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(code_t)
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    cdef Py_ssize_t j, bad, where = start
    cdef int status = NO_ROOM
    for j in range(n_features):
        highest[b, j] = -1
        layout[b, j] = 0
    layout[b, n_features] = 0
    # The first block's codes lay the table out (widened one code at a
    # time, it would be moved once for each feature).
    bad = categorical_check_rows(
        &X[start, 0], row_stride, stride,
        min(max(LAYOUT_ROWS, CODE_BLOCK // n_features), stop - start),
        n_features, limit, missing, &highest[b, 0],
    )
    if bad >= 0:
        return start * n_features + bad
    if _chunk_layout(highest, layout, tables, b, n_classes):
        status = _check_count_rows(
            X, y, sample_weight, n_classes, limit, start, stop, highest, layout,
            tables, b, missing, &where,
        )
    if status == BAD_CODE:
        return where
    if status == NO_ROOM:
        # Only checked, from the row that found no room on.
        layout[b, n_features] = -1
        bad = categorical_check_rows(
            &X[where, 0], row_stride, stride, stop - where, n_features, limit,
            missing, &highest[b, 0],
        )
        if bad >= 0:
            return where * n_features + bad
    return -1


def categorical_check_count_dense(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    int64_t limit,
    Py_ssize_t n_classes,
    Py_ssize_t chunk_rows,
    code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    bint missing,
    int n_threads,
):
    """Check the codes of a fit and count each chunk of rows into its own table.

    Returns the flat position i * n_features + j of the first code (in
    row-major order) that is not a whole number from 0 to limit - 1 (at
    most 2^53), or -1.  Then highest[b] holds chunk b's largest code of
    each feature, and tables[b] its counts as layout[b] lays them out (see
    _chunk_layout), unless they had no room: then layout[b, -1] is -1.
    Chunk b is the chunk_rows rows from b * chunk_rows; no sample_weight
    means unit weights.  With missing (missing="ignore"), a NaN is a missing
    value: neither refused nor counted.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_codes = n_samples * X.shape[1]
    # The first bad code each thread met: a thread gets its chunks in
    # increasing order, so it stops after its first, and the least of them
    # is the first of all.
    cdef intp_t[::1] first_bad = np.full(n_threads, n_codes, dtype=np.intp)
    cdef Py_ssize_t b, t, bad
    # Static: the chunks have equal rows, so each thread gets its share
    # whichever threads wake first.
    for b in prange(
        tables.shape[0], nogil=True, schedule="static", num_threads=n_threads
    ):
        t = threadid()
        if first_bad[t] == n_codes:
            bad = _check_count_chunk(
                X, y, sample_weight, n_classes, limit, b * chunk_rows,
                min((b + 1) * chunk_rows, n_samples), highest, layout, tables, b,
                missing,
            )
            if bad >= 0:
                first_bad[t] = bad
    bad = np.min(first_bad)
    return -1 if bad == n_codes else bad


def categorical_count_dense(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    Py_ssize_t n_classes,
    const code_t[::1] highest,
    const intp_t[::1] layout,
    Py_ssize_t chunk_rows,
    double[:, ::1] tables,
    Py_ssize_t block_width,
    bint missing,
    int n_threads,
):
    """Count codes from 0 to highest[j] into each chunk's table, laid out by layout.

    tables[b, layout[j] + X[i, j] * n_classes + y[i]] += w[i] over the rows
    i of chunk b (chunk_rows rows from b * chunk_rows); a task is a chunk
    and a block of block_width columns.  No sample_weight means unit
    weights; with missing, a NaN is not counted.  A code outside 0 ..
    highest[j] raises IndexError (a checked X has none).
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(code_t)
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    cdef Py_ssize_t n_blocks = (n_features + block_width - 1) // block_width
    cdef bint weighted = sample_weight.shape[0] > 0
    # A chunk with a code or class outside the table, for each thread.
    cdef intp_t[::1] outside = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t task, b, j, start, stop, position
    # Static: the tasks have about equal codes.
    for task in prange(
        tables.shape[0] * n_blocks,
        nogil=True,
        schedule="static",
        num_threads=n_threads,
    ):
        b = task // n_blocks
        j = (task % n_blocks) * block_width
        start = b * chunk_rows
        stop = min(start + chunk_rows, n_samples)
        position = -1
        if start < stop:
            position = categorical_count_rows(
                &X[start, j], row_stride, stride, stop - start,
                min(block_width, n_features - j), 0, &y[start],
                &sample_weight[start] if weighted else NULL, &highest[j],
                &layout[j], n_classes, &tables[b, 0], tables.shape[1], missing,
            )
        if position != -1:
            outside[threadid()] = b
    if np.max(outside) >= 0:
        raise IndexError(
            f"chunk {np.max(outside)} has a category code or class outside the table"
        )


def categorical_merge_counts(
    const double[:, ::1] tables,
    const intp_t[:, ::1] layout,
    const intp_t[::1] offsets,
    double[:, ::1] out,
    int n_threads,
):
    """Add the chunks' tables up, in chunk order, into out; a task a block of
    out's rows (equal blocks, whatever the features' numbers of categories).

    Chunk b's counts of feature j run from tables[b, layout[b, j]] to
    tables[b, layout[b, j + 1]], a row of classes per code from 0, and go to
    out's rows from offsets[j].
    """
    cdef Py_ssize_t n_rows = out.shape[0]
    cdef Py_ssize_t n_classes = out.shape[1]
    cdef Py_ssize_t n_features = offsets.shape[0] - 1
    cdef Py_ssize_t n_blocks = min(n_rows, 4 * n_threads)
    cdef Py_ssize_t task, r, j, a, b, c, start, low, high, middle
    # The tasks read by out's rows: a chunk's counts that fall outside them
    # (or outside its table) would be left out unseen, so they are refused
    # first, O(chunks x features).
    if offsets.shape[0] < 1 or offsets[0] < 0 or offsets[n_features] > n_rows:
        raise IndexError("offsets run out of bounds of out's rows")
    for j in range(n_features):
        if offsets[j + 1] < offsets[j]:
            raise IndexError(f"offsets decrease at feature {j}: out of bounds")
    if layout.shape[0] != tables.shape[0] or layout.shape[1] != n_features + 1:
        raise IndexError("layout's shape is out of bounds of the tables'")
    for b in range(tables.shape[0]):
        for j in range(n_features):
            if not (
                0 <= layout[b, j] <= layout[b, j + 1] <= tables.shape[1]
                and layout[b, j + 1] - layout[b, j]
                <= (offsets[j + 1] - offsets[j]) * n_classes
            ):
                raise IndexError(
                    f"chunk {b}'s counts of feature {j} run out of bounds of its "
                    "table or of out's rows"
                )
    for task in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        # The feature of the block's first row: the first j whose rows end
        # past it.
        low = 0
        high = n_features
        while low < high:
            middle = (low + high) // 2
            if offsets[middle + 1] <= task * n_rows // n_blocks:
                low = middle + 1
            else:
                high = middle
        j = low
        for r in range(task * n_rows // n_blocks, (task + 1) * n_rows // n_blocks):
            while offsets[j + 1] <= r:
                j = j + 1
            a = r - offsets[j]
            for b in range(tables.shape[0]):
                start = layout[b, j]
                if a < (layout[b, j + 1] - start) // n_classes:
                    for c in range(n_classes):
                        out[r, c] += tables[b, start + a * n_classes + c]


# ---------------------------------------------------------------------------
# Sparse category codes.  A CSR or CSC matrix of codes, in canonical format
# (each row's, or column's, indices strictly increasing), holds code 0
# wherever it stores nothing.  A fit checks the stored codes as it finds
# each feature's largest (categorical_check_csr / _csc), then counts them
# (categorical_count_csr: a table a chunk of rows, merged in chunk order by
# categorical_merge_counts; categorical_count_csc: a task a column), and
# adds each feature's implicit zeros to its code 0 (categorical_add_zeros).
# Scoring starts a row from the all-zeros row's scores
# (categorical_zero_scores) and adds, for each stored code, its term less
# code 0's (categorical_score_csr).
# ---------------------------------------------------------------------------

cdef inline bint _counted_code(code_t x, Py_ssize_t top) noexcept nogil:
    """Whether x is a whole number from 0 to top."""
    if code_t is float or code_t is double:
        return x >= 0 and x <= top and fastnb_whole(x)
    else:
        return x >= 0 and x <= top


def categorical_check_csr(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    int64_t limit,
    code_t[:, ::1] highest,
    bint missing,
    int n_threads,
):
    """The position in X_data of the first stored code of a canonical CSR
    matrix (in row-major order) that is not a whole number from 0 to
    limit - 1 (at most 2^53), or -1.

    highest (a row a thread, zeroed by the caller) gets in highest[t, j]
    the largest code of feature j in the rows thread t read: their maximum
    over the threads is the feature's largest stored code (or 0), unless a
    code is bad.  With missing, a stored NaN is a missing value, not bad.
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t nnz = X_indices.shape[0]
    # The first bad code each thread met (see first_flagged).
    cdef intp_t[::1] first_bad = np.full(n_threads, nnz, dtype=np.intp)
    cdef Py_ssize_t i, j, p, t
    cdef code_t x
    # Static, an equal run of rows a thread (as sparse_structure_error).
    for i in prange(n_samples, nogil=True, schedule="static", num_threads=n_threads):
        t = threadid()
        if first_bad[t] < nnz:
            continue
        for p in range(X_indptr[i], X_indptr[i + 1]):
            x = X_data[p]
            if not _fit_code(x, limit):
                if missing and missing_code(x):
                    continue
                first_bad[t] = p
                break
            j = X_indices[p]
            if x > highest[t, j]:
                highest[t, j] = x
    return first_flagged(first_bad, nnz)


def categorical_check_csc(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    int64_t limit,
    code_t[::1] highest,
    bint missing,
    int n_threads,
):
    """As categorical_check_csr for a canonical CSC matrix, a task a column;
    highest[j] (zeroed by the caller) gets column j's largest stored code.

    A column's first bad code is its first in row-major order (its rows
    increase); the first of all is the least by row, then column.
    """
    cdef Py_ssize_t n_features = X_indptr.shape[0] - 1
    # Each thread's first bad code: its row, column and position.
    cdef intp_t[::1] bad_row = np.full(n_threads, np.iinfo(np.intp).max, dtype=np.intp)
    cdef intp_t[::1] bad_column = np.zeros(n_threads, dtype=np.intp)
    cdef intp_t[::1] bad_position = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t j, p, r, t, best
    cdef code_t x
    for j in prange(
        n_features, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        t = threadid()
        for p in range(X_indptr[j], X_indptr[j + 1]):
            r = X_indices[p]
            if r > bad_row[t] or (r == bad_row[t] and j > bad_column[t]):
                break  # past the thread's first bad code
            x = X_data[p]
            if not _fit_code(x, limit):
                if missing and missing_code(x):
                    continue
                bad_row[t], bad_column[t], bad_position[t] = r, j, p
                break
            if x > highest[j]:
                highest[j] = x
    best = -1
    for t in range(n_threads):
        if bad_position[t] >= 0 and (
            best < 0
            or bad_row[t] < bad_row[best]
            or (bad_row[t] == bad_row[best] and bad_column[t] < bad_column[best])
        ):
            best = t
    return -1 if best < 0 else bad_position[best]


def categorical_count_csr(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    const intp_t[::1] offsets,
    Py_ssize_t n_classes,
    Py_ssize_t chunk_rows,
    double[:, ::1] tables,
    bint missing,
    int n_threads,
):
    """Count the stored codes of a CSR matrix into a table a chunk of rows.

    tables[b, (offsets[j] + x) * n_classes + y[i]] += w[i] for each stored
    code x at (i, j) of chunk b's rows (chunk_rows rows from b *
    chunk_rows), in row order; a task a chunk. No sample_weight means unit
    weights. With missing, feature j's last row (offsets[j + 1] - 1) counts
    its stored NaN (missing values), the rows before it its codes. A code
    outside the feature's rows for codes raises IndexError (a checked X has
    none).
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef bint weighted = sample_weight.shape[0] > 0
    # A chunk with a code outside the table, for each thread.
    cdef intp_t[::1] outside = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t b, i, j, p, c, row
    cdef double w
    cdef code_t x
    for b in prange(
        tables.shape[0], nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        for i in range(b * chunk_rows, min((b + 1) * chunk_rows, n_samples)):
            c = y[i]
            w = sample_weight[i] if weighted else 1.0
            for p in range(X_indptr[i], X_indptr[i + 1]):
                j = X_indices[p]
                x = X_data[p]
                if _counted_code(x, offsets[j + 1] - offsets[j] - 1 - missing):
                    row = offsets[j] + <Py_ssize_t> x
                elif missing and missing_code(x):
                    row = offsets[j + 1] - 1
                else:
                    outside[threadid()] = b
                    continue
                tables[b, row * n_classes + c] += w
    if np.max(outside) >= 0:
        raise IndexError(
            f"chunk {np.max(outside)} has a category code outside the table"
        )


def categorical_count_csc(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    const intp_t[::1] offsets,
    double[:, ::1] out,
    bint missing,
    int n_threads,
):
    """out[offsets[j] + x, y[r]] += w[r] for each stored code x at (r, j) of a
    CSC matrix; a task a column, its rows in order.

    No sample_weight means unit weights. With missing, a stored NaN goes to
    the feature's last row, as in categorical_count_csr. A code outside the
    feature's rows for codes raises IndexError (a checked X has none).
    """
    cdef Py_ssize_t n_features = X_indptr.shape[0] - 1
    cdef bint weighted = sample_weight.shape[0] > 0
    # A column with a code outside the table, for each thread.
    cdef intp_t[::1] outside = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t j, p, r, row
    cdef code_t x
    for j in prange(
        n_features, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        for p in range(X_indptr[j], X_indptr[j + 1]):
            r = X_indices[p]
            x = X_data[p]
            if _counted_code(x, offsets[j + 1] - offsets[j] - 1 - missing):
                row = offsets[j] + <Py_ssize_t> x
            elif missing and missing_code(x):
                row = offsets[j + 1] - 1
            else:
                outside[threadid()] = j
                continue
            out[row, y[r]] += sample_weight[r] if weighted else 1.0
    if np.max(outside) >= 0:
        raise IndexError(
            f"column {np.max(outside)} has a category code outside the table"
        )


def categorical_add_zeros(
    double[:, ::1] counts,
    const intp_t[::1] offsets,
    const double[::1] class_count,
    double[:, :] scratch,
    int n_threads,
):
    """Add a sparse X's implicit zeros to code 0 of each feature; a task a feature.

    Feature j's counts are the rows offsets[j] .. offsets[j + 1] - 1 of
    counts, those of its stored codes; class c's rows that store nothing
    for it weigh class_count[c] less their sum (taken in row order), which
    goes to row offsets[j] (never less than 0: where every row of the class
    stores a code, rounding may leave a hair either side of 0). scratch has
    a row a thread, with a column a class.
    """
    cdef Py_ssize_t n_classes = counts.shape[1]
    cdef Py_ssize_t j, a, c, t
    cdef double* stored
    for j in prange(
        offsets.shape[0] - 1, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        t = threadid()
        stored = &scratch[t, 0]
        for c in range(n_classes):
            stored[c] = 0.0
        for a in range(offsets[j], offsets[j + 1]):
            for c in range(n_classes):
                stored[c] = stored[c] + counts[a, c]
        for c in range(n_classes):
            if class_count[c] > stored[c]:
                counts[offsets[j], c] += class_count[c] - stored[c]


def categorical_log_tables(
    const double[:, ::1] counts,
    const intp_t[::1] count_offsets,
    const intp_t[::1] offsets,
    const double[::1] pseudo,
    double[:, ::1] count_table,
    double[:, ::1] log_table,
    double[:, ::1] padded,
    double[:, :] scratch,
    bint missing,
    int n_threads,
):
    """The smoothed log tables from the counts; a task a feature.

    counts holds feature j's categories in its rows count_offsets[j] ..
    count_offsets[j + 1] - 1; the tables give it rows offsets[j] ..
    offsets[j + 1] - 1, one per category (those not counted have count 0)
    and a last for unseen ones.  count_table gets the counts so laid out,
    log_table log((count + pseudo) / total), with pseudo the row's
    pseudo-count and total the sum of count + pseudo over the feature's
    categories (not the unseen row), in order; padded gets log_table in its
    first columns (the rest left as they are).  scratch has a row a
    thread, with a column a class.

    With missing (missing="ignore"), a class whose total is 0 (no value of
    the feature seen in it, and no smoothing) gets the uniform log(1 / n)
    over the feature's n categories in every row (the limit of any
    smoothing), and a feature with no category at all gets 0 (its only row,
    unseen, the same for every class); without missing these give NaN or
    infinities, as log(0 / 0) does.
    """
    cdef Py_ssize_t n_classes = count_table.shape[1]
    cdef Py_ssize_t j, r, c, t, n_counted, first, n_categories
    cdef double v, uniform
    cdef double* total
    for j in prange(
        offsets.shape[0] - 1, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        t = threadid()
        total = &scratch[t, 0]
        for c in range(n_classes):
            total[c] = 0.0
        n_counted = count_offsets[j + 1] - count_offsets[j]
        first = count_offsets[j] - offsets[j]
        for r in range(offsets[j], offsets[j + 1]):
            for c in range(n_classes):
                v = 0.0
                if r - offsets[j] < n_counted:
                    v = counts[first + r, c]
                count_table[r, c] = v
                v = v + pseudo[r]
                log_table[r, c] = v
                if r < offsets[j + 1] - 1:
                    total[c] += v
        n_categories = offsets[j + 1] - offsets[j] - 1
        uniform = -log(<double> n_categories) if n_categories > 0 else 0.0
        for c in range(n_classes):
            total[c] = log(total[c])
        for r in range(offsets[j], offsets[j + 1]):
            for c in range(n_classes):
                if missing and total[c] == -INFINITY:
                    v = uniform
                else:
                    v = log(log_table[r, c]) - total[c]
                log_table[r, c] = v
                padded[r, c] = v


# ---------------------------------------------------------------------------
# Kernel density (fastnb._kde): linear binning of the values onto a grid per
# feature, the log densities of the tails of the binned mixture, and
# scoring by linear interpolation of the log densities (kde_dense_row in
# _rows.h).
# ---------------------------------------------------------------------------

def kde_bin_dense(
    const floating[:, :] X,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    const double[::1] inv_step,
    const double[::1] origin,
    Py_ssize_t n_grid,
    Py_ssize_t block_width,
    bint skip_nan,
    double[:, ::1] grid,
    int n_threads,
):
    """Linear binning of dense X into grid (n_classes, n_features * n_grid).

    Feature j's value x sits at grid position u = x inv_step[j] - origin[j],
    which the caller made lie in 0 .. n_grid - 1; the sample's weight goes
    to the points floor(u) and floor(u) + 1 of its class (of each of its
    labels: the label arrays), split as 1 - t and t (t = u - floor(u)).
    Labels of weight 0 are skipped, and with
    skip_nan (missing="ignore") NaN values; X holds no NaN otherwise. A
    task is a block of block_width features, which reads the rows in
    order, so no result depends on the number of threads.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_blocks = (n_features + block_width - 1) // block_width
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t b, i, j, g, k, e, stop
    cdef double u, t, w
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        stop = min((b + 1) * block_width, n_features)
        for i in range(n_samples):
            for e in range(label_ptr[i] if soft else i,
                           label_ptr[i + 1] if soft else i + 1):
                w = label_weight[e]
                if w == 0.0:
                    continue
                k = label_class[e]
                if not skip_nan:
                    for j in range(b * block_width, stop):
                        u = <double> X[i, j] * inv_step[j] - origin[j]
                        g = <Py_ssize_t> u
                        t = u - <double> g
                        grid[k, j * n_grid + g] += (1.0 - t) * w
                        if t > 0.0:
                            grid[k, j * n_grid + g + 1] += t * w
                    continue
                # The same loop leaving NaN out (kept apart: no test per value
                # where X has no NaN).
                for j in range(b * block_width, stop):
                    u = <double> X[i, j] * inv_step[j] - origin[j]
                    if u != u:
                        continue
                    g = <Py_ssize_t> u
                    t = u - <double> g
                    grid[k, j * n_grid + g] += (1.0 - t) * w
                    if t > 0.0:
                        grid[k, j * n_grid + g + 1] += t * w


def kde_tail_log_density(
    const double[:, ::1] counts,
    const intp_t[:, ::1] left,
    const intp_t[:, ::1] right,
    const double[::1] scale,
    const intp_t[::1] reach,
    const double[::1] log_norm,
    const intp_t[::1] points,
    double[:, ::1] out,
    int n_threads,
):
    """The log density of a binned Gaussian mixture at some grid points,
    summed directly in log space (where an FFT's rounding would swamp it).

    counts (n_classes, n_points): each class's masses on the grid; left and
    right: the nearest point holding mass at or below (-1 if none) and at
    or above (n_points if none) each point. At the point g of class k
    (points holds k * n_points + g), with d the distance to the nearest
    mass and s = scale[k] (grid step / bandwidth), out[k, g] is log_norm[k]
    + log sum_i counts[k, i] exp(-(s (g - i))^2 / 2), over the masses within
    d + reach[k] points of g (farther ones add less than exp(-(s
    reach)^2 / 2) of the nearest's term), each term taken relative to the
    nearest's, so that nothing underflows.
    """
    cdef Py_ssize_t n_points = counts.shape[1]
    cdef Py_ssize_t p, k, g, i, lo, hi, near
    cdef double s, top, total, d
    for p in prange(
        points.shape[0], nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        k = points[p] // n_points
        g = points[p] - k * n_points
        near = n_points
        if left[k, g] >= 0:
            near = g - left[k, g]
        if right[k, g] < n_points and right[k, g] - g < near:
            near = right[k, g] - g
        s = scale[k]
        top = -0.5 * (s * near) * (s * near)
        lo = max(0, g - near - reach[k])
        hi = min(n_points - 1, g + near + reach[k])
        total = 0.0
        for i in range(lo, hi + 1):
            if counts[k, i] > 0.0:
                d = s * (g - i)
                total = total + counts[k, i] * exp(-0.5 * d * d - top)
        out[k, g] = top + log(total) + log_norm[k]
