"""Compiled loops of fastnb.

Every kernel trusts its inputs: shapes, dtypes, contiguity and value ranges
are checked in Python before the call, a sparse matrix's structure by
sparse_structure_error (a FASTNB_DEBUG=1 build checks every index anyway,
and raises IndexError).  The caller allocates every output.
Values are read in their own precision (float32 or float64); statistics and
scores are accumulated in float64.
"""

from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport INFINITY, exp, frexp, ldexp, log, rint

import numpy as np

from fastnb._rows cimport (
    FASTNB_BLOCK,
    FASTNB_KDE_BLOCK,
    categorical_dense_row,
    code_t,
    discrete_csr_row,
    discrete_dense_row,
    fastnb_counted,
    fastnb_cpu_runs_avx2,
    fastnb_cpu_runs_avx512,
    fastnb_cpu_runs_sve,
    fastnb_debug_build,
    fastnb_exp_less,
    fastnb_omp_max_threads,
    fastnb_openmp_enabled,
    fastnb_openmp_runtime,
    fastnb_prefetch,
    fastnb_refused,
    fastnb_row_refused_double,
    fastnb_row_refused_float,
    fastnb_whole,
    gaussian_csr_row,
    gaussian_dense_row,
    index_t,
    intp_t,
    kde_dense_row,
)


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


cdef Py_ssize_t _first_flagged(intp_t[::1] first_bad, Py_ssize_t none):
    """The least of the threads' first flagged rows, or -1 if all are `none`.

    Any schedule hands a thread its rows in increasing order, so each
    thread's first flagged row is its least, and the least of those is the
    first of all, whatever the number of threads.
    """
    cdef Py_ssize_t first = none, t
    for t in range(first_bad.shape[0]):
        if first_bad[t] < first:
            first = first_bad[t]
    return -1 if first == none else first


# ---------------------------------------------------------------------------
# Sparse structure.  scipy's conversions and every sparse kernel trust a
# matrix's indptr and indices, which a user can set to anything: they are
# checked first, in parallel (fastnb._base.check_sparse_structure).
# ---------------------------------------------------------------------------

cdef enum:
    # Rows (CSR) or columns (CSC) a thread checks at a time.
    STRUCTURE_CHUNK = 1024


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
    # The first malformed row each thread met (see _first_flagged); a thread
    # stops looking after its first. Dynamic: a thread slowed on a shared
    # machine does not hold the others up.
    cdef intp_t[::1] first_bad = np.full(n_threads, n_major, dtype=np.intp)
    # Whether a thread met a row whose indices are not strictly increasing.
    cdef intp_t[::1] unsorted = np.zeros(n_threads, dtype=np.intp)
    cdef Py_ssize_t i, p, t, start, stop
    cdef bint outside, descending
    for i in prange(
        n_major,
        nogil=True,
        schedule="dynamic",
        chunksize=STRUCTURE_CHUNK,
        num_threads=n_threads,
    ):
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
    return _first_flagged(first_bad, n_major), not np.any(unsorted)


# ---------------------------------------------------------------------------
# Values.  X's values are checked by the parallel kernels that read them:
# here before counting (a fit must not count a refused value into the
# model), as they are scored otherwise.
# ---------------------------------------------------------------------------

cdef enum:
    # Values a thread checks at a time.
    VALUE_CHUNK = 1 << 14


cdef inline bint _values_refused(
    const floating* x, Py_ssize_t n, bint non_negative, bint allow_nan
) noexcept nogil:
    """Whether any of the n values at x is refused (fastnb_refused), by the
    vectorised test of _rows.h."""
    if floating is double:
        return fastnb_row_refused_double(x, 1, n, non_negative, allow_nan)
    else:
        return fastnb_row_refused_float(x, 1, n, non_negative, allow_nan)


def first_refused_value(
    const floating[::1] values,
    bint non_negative,
    bint allow_nan,
    int n_threads,
):
    """Index of the first value refused by fastnb_refused (infinite, NaN
    unless allow_nan, negative when non_negative), or -1."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
    cdef intp_t[::1] first_bad = np.full(n_threads, n, dtype=np.intp)
    cdef Py_ssize_t b, p, t, start, stop
    for b in prange(n_chunks, nogil=True, schedule="dynamic", num_threads=n_threads):
        t = threadid()
        start = b * VALUE_CHUNK
        stop = min(start + VALUE_CHUNK, n)
        if first_bad[t] < n or not _values_refused(
            &values[start], stop - start, non_negative, allow_nan
        ):
            continue
        # The chunk holds one (a vectorised test of the whole chunk, as most
        # hold none): find the first.
        for p in range(start, stop):
            if fastnb_refused(values[p], non_negative, allow_nan):
                first_bad[t] = p
                break
    return _first_flagged(first_bad, n)


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
    return _first_flagged(first_bad, n)


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
    _sum_blocks(chunk_sums, out)


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
# Counting: per-class sums of (weighted, optionally binarized) feature values.
# (sample_weight may be a view of one value, stride 0: unit weights.)
# Each entry of `out` is written by one thread only, summing rows in their
# original order, so the result does not depend on the number of threads.
# A NaN reaches them only from a model with missing="ignore" (check_values
# refuses it otherwise), which passes allow_nan: it is a missing value,
# counted as nothing in out and, if `missing` has rows (else it is empty),
# its weight added to missing[class, feature] in the same order.  Without
# allow_nan the loops have no test for NaN.
# ---------------------------------------------------------------------------

cdef enum:
    # The kernels that take a class's CSR rows in turn fetch the values and
    # indices of the row this many ahead: the rows of a class are scattered
    # through X, so each would start with a wait on memory (2 and 4 measured
    # the same, 15% off MultinomialNB's counting).
    ROWS_AHEAD = 2


cdef inline int _fetch_row(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    Py_ssize_t i,
) except -1 nogil:
    """Fetch the cache lines of CSR row i's stored values and indices."""
    cdef Py_ssize_t start = X_indptr[i], stop = X_indptr[i + 1]
    if start < stop:
        fastnb_prefetch(&X_data[start], (stop - start) * sizeof(floating))
        fastnb_prefetch(&X_indices[start], (stop - start) * sizeof(index_t))
    return 0


def discrete_count_csr(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] entries_by_class,
    const intp_t[::1] class_ptr,
    const intp_t[::1] entry_row,
    const double[:] label_weight,
    double threshold,
    bint binarize,
    double[:, ::1] out,
    double[:, ::1] missing,
    bint allow_nan,
    int n_threads,
):
    """Add each CSR row's weighted values to its classes' rows of out; a task a class.

    entries_by_class: the label entries grouped by class (class_order),
    each group in row order; entry e is of row entry_row[e] (or row e if
    entry_row is empty: hard labels) and weighs label_weight[e].
    """
    cdef Py_ssize_t n_classes = class_ptr.shape[0] - 1
    cdef bint track = missing.shape[0] > 0
    cdef bint soft = entry_row.shape[0] > 0
    cdef Py_ssize_t c, q, e, i, p
    cdef double w
    # Dynamic schedule: classes differ in size; each class row of `out` is
    # still summed by a single thread in row order.
    for c in prange(n_classes, nogil=True, schedule="dynamic", num_threads=n_threads):
        for q in range(class_ptr[c], class_ptr[c + 1]):
            if q + ROWS_AHEAD < class_ptr[c + 1]:
                e = entries_by_class[q + ROWS_AHEAD]
                _fetch_row(X_data, X_indices, X_indptr, entry_row[e] if soft else e)
            e = entries_by_class[q]
            i = entry_row[e] if soft else e
            w = label_weight[e]
            if not allow_nan:
                for p in range(X_indptr[i], X_indptr[i + 1]):
                    out[c, X_indices[p]] += w * fastnb_counted(
                        X_data[p], threshold, binarize
                    )
                continue
            for p in range(X_indptr[i], X_indptr[i + 1]):
                if X_data[p] != X_data[p]:
                    if track:
                        missing[c, X_indices[p]] += w
                    continue
                out[c, X_indices[p]] += w * fastnb_counted(
                    X_data[p], threshold, binarize
                )


def discrete_count_csr_blocks(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    double threshold,
    bint binarize,
    Py_ssize_t n_features,
    double[::1] out,
    double[::1] missing,
    bint allow_nan,
    const intp_t[::1] piece_rows,
    const intp_t[::1] chunk_pieces,
    intp_t[:, ::1] piece_slots,
    intp_t[::1] block_start,
    double[::1] entry_value,
    double[::1] entry_weight,
    intp_t[::1] entry_key,
    int n_threads,
):
    """discrete_count_csr's sums, a task a piece of rows, then a block of features.

    The rows are cut in pieces (piece_rows: each piece's first row, and the
    end), the pieces in chunks (chunk_pieces) of at most entry_value's
    length of stored values times their row's labels. A chunk at a time:
    each piece counts its values (once a label of their row) of each block
    of features (piece_slots, a row a piece; feature j
    is in block j % n_blocks, a power of two, so that the most frequent
    features, often the first, fall in different blocks), then lays them
    out by block, a block's values piece after piece, so in row order
    (block_start: where each block's begin): each value as counted in
    entry_value, a label's weight in entry_weight, and its place in out
    as its key (-1 - the place, for a missing value, whose weight is
    counted into missing), once for each label of its row, in their order;
    then each block adds to out each weight times its value,
    the product taken as discrete_count_csr takes it (so that a compiler
    that fuses the multiply and the add fuses both alike). out and missing
    are (n_classes, n_features) tables
    flattened (missing empty if not kept), a value of class c and feature j
    at c * n_features + j. So out[c, j] adds its values in row order, as
    discrete_count_csr does, bit for bit, whatever the number of threads;
    and the work is cut from the rows, however few the classes.
    """
    cdef Py_ssize_t n_blocks = piece_slots.shape[1]
    cdef intp_t block_mask = n_blocks - 1
    cdef Py_ssize_t n_chunks = chunk_pieces.shape[0] - 1
    cdef bint track = missing.shape[0] > 0
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t chunk, first, n_pieces, p, i, q, k, b, e, e_start, e_stop
    cdef intp_t place, slot, start
    cdef double x, counted
    for chunk in range(n_chunks):
        first = chunk_pieces[chunk]
        n_pieces = chunk_pieces[chunk + 1] - first
        for p in prange(n_pieces, nogil=True, schedule="static", num_threads=n_threads):
            for b in range(n_blocks):
                piece_slots[p, b] = 0
            for i in range(piece_rows[first + p], piece_rows[first + p + 1]):
                e = label_ptr[i + 1] - label_ptr[i] if soft else 1
                for q in range(X_indptr[i], X_indptr[i + 1]):
                    piece_slots[p, X_indices[q] & block_mask] += e
        with nogil:
            start = 0
            for b in range(n_blocks):
                block_start[b] = start
                for p in range(n_pieces):
                    slot = piece_slots[p, b]
                    piece_slots[p, b] = start
                    start = start + slot
            block_start[n_blocks] = start
        for p in prange(n_pieces, nogil=True, schedule="static", num_threads=n_threads):
            for i in range(piece_rows[first + p], piece_rows[first + p + 1]):
                e_start = label_ptr[i] if soft else i
                e_stop = label_ptr[i + 1] if soft else i + 1
                for q in range(X_indptr[i], X_indptr[i + 1]):
                    b = X_indices[q] & block_mask
                    x = X_data[q]
                    counted = fastnb_counted(x, threshold, binarize)
                    for e in range(e_start, e_stop):
                        slot = piece_slots[p, b]
                        piece_slots[p, b] = slot + 1
                        place = label_class[e] * n_features + X_indices[q]
                        entry_weight[slot] = label_weight[e]
                        if allow_nan and x != x:
                            entry_key[slot] = -1 - place
                        else:
                            entry_value[slot] = counted
                            entry_key[slot] = place
        # Dynamic: the blocks hold unequal numbers of values.
        for b in prange(
            n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads
        ):
            for k in range(block_start[b], block_start[b + 1]):
                place = entry_key[k]
                if place >= 0:
                    out[place] += entry_weight[k] * entry_value[k]
                elif track:
                    missing[-1 - place] += entry_weight[k]


def discrete_count_csc(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    double threshold,
    bint binarize,
    double[:, ::1] out,
    double[:, ::1] missing,
    bint allow_nan,
    int n_threads,
):
    """Add each CSC column's weighted values to out[class, column] of its
    row's labels; a task a column."""
    cdef Py_ssize_t n_features = X_indptr.shape[0] - 1
    cdef bint track = missing.shape[0] > 0
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t j, p, r, e
    for j in prange(n_features, nogil=True, schedule="static", num_threads=n_threads):
        for p in range(X_indptr[j], X_indptr[j + 1]):
            r = X_indices[p]
            for e in range(label_ptr[r] if soft else r,
                           label_ptr[r + 1] if soft else r + 1):
                if allow_nan and X_data[p] != X_data[p]:
                    if track:
                        missing[label_class[e], j] += label_weight[e]
                    continue
                out[label_class[e], j] += label_weight[e] * fastnb_counted(
                    X_data[p], threshold, binarize
                )


def discrete_count_dense(
    const floating[:, :] X,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    double threshold,
    bint binarize,
    double[:, ::1] out,
    double[:, ::1] missing,
    bint allow_nan,
    double[:, :, ::1] chunk_counts,
    Py_ssize_t chunk_rows,
    Py_ssize_t block_width,
    int n_threads,
):
    """Add each dense row's weighted values to its classes' rows of out (C or F order).

    The rows are cut in chunks of chunk_rows: the first is counted into
    out, each other one, b, into chunk_counts[b - 1] (zeroed by the
    caller), a task a chunk and a block of block_width columns; then those
    are added to out in order, a task a block of columns.  When missing
    values are counted, chunk_counts holds two tables a chunk: the counts,
    then the missing weights, [b - 1, n_classes + c, j].
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_classes = out.shape[0]
    cdef Py_ssize_t n_chunks = chunk_counts.shape[0] + 1
    cdef Py_ssize_t n_blocks = (n_features + block_width - 1) // block_width
    cdef bint track = missing.shape[0] > 0
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t task, b, i, j, c, e, j_start, j_stop
    cdef double v, w
    # Static: the tasks are of equal size, so each thread gets its share
    # whichever threads wake first.
    for task in prange(
        n_chunks * n_blocks, nogil=True, schedule="static", num_threads=n_threads
    ):
        b = task // n_blocks
        j_start = (task % n_blocks) * block_width
        j_stop = min(j_start + block_width, n_features)
        for i in range(b * chunk_rows, min((b + 1) * chunk_rows, n_samples)):
            for e in range(label_ptr[i] if soft else i,
                           label_ptr[i + 1] if soft else i + 1):
                c = label_class[e]
                w = label_weight[e]
                if not allow_nan:
                    for j in range(j_start, j_stop):
                        v = w * fastnb_counted(X[i, j], threshold, binarize)
                        if b == 0:
                            out[c, j] += v
                        else:
                            chunk_counts[b - 1, c, j] += v
                    continue
                for j in range(j_start, j_stop):
                    if X[i, j] != X[i, j]:
                        if not track:
                            continue
                        if b == 0:
                            missing[c, j] += w
                        else:
                            chunk_counts[b - 1, n_classes + c, j] += w
                        continue
                    v = w * fastnb_counted(X[i, j], threshold, binarize)
                    if b == 0:
                        out[c, j] += v
                    else:
                        chunk_counts[b - 1, c, j] += v
    if n_chunks == 1:
        return
    for task in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        j_start = task * block_width
        j_stop = min(j_start + block_width, n_features)
        for c in range(n_classes):
            for b in range(n_chunks - 1):
                for j in range(j_start, j_stop):
                    out[c, j] += chunk_counts[b, c, j]
                    if track:
                        missing[c, j] += chunk_counts[b, n_classes + c, j]


# ---------------------------------------------------------------------------
# Scoring.  Every scoring kernel starts a row's scores from an intercept,
# adds each feature's term from feature-major tables (a row per feature or
# category) in the C row helpers of _rows.h, then finishes the row as
# requested by `output`.  Tables and intercepts have their classes padded
# with zeros to whole blocks of CLASS_BLOCK (fastnb._base.pad_classes), so
# every block runs in registers; the padded scores go to the scratch rows
# (which have room for them) and are never read: a row is finished over the
# real classes, as many as scratch has columns.
#
# A thread scores a block of rows (as many as scratch has rows), then
# finishes them together (_finish_rows): a row's exps, sum and division
# are a chain of steps each waiting on the last, and one row at a time
# the processor waited on them (a third of CategoricalNB's predict_proba);
# a step at a time over a block, the rows' chains overlap.
#
# Scoring kernels check X's values as they read them (finite; for the
# count families that need it, non-negative) and return the first row
# holding a refused value, or -1; fastnb._base.raise_refused_value then
# names the value. A thread stops scoring at its first such row.
#
# Discrete families: intercept[k] + sum_j x_j * table[j, k].  A zero value
# contributes nothing (x log p with x = 0), even where the table holds -inf.
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _exp_room(Py_ssize_t n_classes) noexcept nogil:
    """The classes padded to whole blocks: the scores fastnb_exp_less may
    take (_exp_less), for which every scratch row has room."""
    return (n_classes + FASTNB_BLOCK - 1) // FASTNB_BLOCK * FASTNB_BLOCK


cdef int _check_scratch(
    const double[:, :, :] scratch, int n_threads, Py_ssize_t n_padded
) except -1:
    """Refuse a scratch (thread_scratch) without a block a thread, or whose
    rows are not contiguous, or have no room for n_padded scores, nor for
    the classes padded to whole blocks (_exp_room)."""
    cdef Py_ssize_t room = max(n_padded, _exp_room(scratch.shape[2]))
    if (
        scratch.shape[0] < n_threads
        or scratch.shape[1] < 1
        or scratch.strides[2] != sizeof(double)
        or scratch.strides[1] < room * <Py_ssize_t> sizeof(double)
    ):
        raise ValueError(
            f"scratch must have a block of rows a thread ({n_threads}), each "
            f"row contiguous, with room for {room} scores (fastnb._base.thread_scratch)"
        )
    return 0


cdef inline void _exp_less(
    double[:, :, :] scratch, Py_ssize_t t, Py_ssize_t r, double top
) noexcept nogil:
    """scratch[t, r, k] = exp(scratch[t, r, k] - top) for the row's classes,
    top the largest score. Each row has room for the classes padded to whole
    blocks (_exp_room, checked by _check_scratch), which fastnb_exp_less may
    take too; they are never read."""
    cdef Py_ssize_t n = scratch.shape[2]
    fastnb_exp_less(&scratch[t, r, 0], n, _exp_room(n), top)


cdef inline int _finish_rows(
    double[:, :, :] scratch,
    Py_ssize_t t,
    Py_ssize_t first,
    Py_ssize_t stop,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
) except -1 nogil:
    """Write rows first .. stop - 1, whose scores are the rows 0, 1, ... of
    scratch[t], to out or labels as `output` asks.

    MIN_EXPECTED_COST reads the cost matrix from `out` and overwrites the
    rows' scores (see _least_cost); PROBA and LOG_PROBA overwrite them too.
    """
    cdef Py_ssize_t n_classes = scratch.shape[2]
    cdef Py_ssize_t i, k, r, best
    cdef double top, total, log_total
    for i in range(first, stop):
        r = i - first
        if output == MIN_EXPECTED_COST:
            labels[i] = _least_cost(scratch, t, r, out)
        elif output == ARGMAX:
            # First maximum wins, as numpy.argmax.
            best = 0
            for k in range(1, n_classes):
                if scratch[t, r, k] > scratch[t, r, best]:
                    best = k
            labels[i] = best
        elif output == JOINT_LOG_LIKELIHOOD:
            for k in range(n_classes):
                out[i, k] = scratch[t, r, k]
        else:
            # log-sum-exp shifted by the row maximum so exp() cannot
            # overflow; (score - top) first: exact for the leading classes,
            # however large the scores are, so probabilities sum to one to
            # rounding.
            top = scratch[t, r, 0]
            for k in range(1, n_classes):
                if scratch[t, r, k] > top:
                    top = scratch[t, r, k]
            if output == LOG_PROBA:
                for k in range(n_classes):
                    out[i, k] = scratch[t, r, k] - top
            # One exp a class, kept in the scores.
            _exp_less(scratch, t, r, top)
    if output != PROBA and output != LOG_PROBA:
        return 0
    for i in range(first, stop):
        r = i - first
        total = 0.0
        for k in range(n_classes):
            total = total + scratch[t, r, k]
        if output == PROBA:
            for k in range(n_classes):
                out[i, k] = scratch[t, r, k] / total
        else:
            log_total = log(total)
            for k in range(n_classes):
                out[i, k] = out[i, k] - log_total
    return 0


cdef inline Py_ssize_t _least_cost(
    double[:, :, :] scratch, Py_ssize_t t, Py_ssize_t r, const double[:, ::1] cost
) except -1 nogil:
    """The class j of least expected cost sum_k P(k | x) cost[k, j] for the
    row's joint log-likelihoods scratch[t, r], which it overwrites.

    The posteriors are taken unnormalised, exp(score - top score): the
    normaliser is the same for every j and does not change which is least.
    Classes are compared two at a time by the difference of their costs,
    sum_k p_k (cost[k, j] - cost[k, best]), whose sign is exact for a 0-1
    matrix (two nonzero terms, of opposite signs); where it is 0 the most
    probable class wins (argmax of the scores), else the first.  So the 0-1
    matrix, or any multiple of it, gives argmax exactly.
    """
    cdef Py_ssize_t n_classes = scratch.shape[2]
    cdef Py_ssize_t j, k, best = 0, most_probable = 0
    cdef double top, difference
    for k in range(1, n_classes):
        if scratch[t, r, k] > scratch[t, r, most_probable]:
            most_probable = k
    top = scratch[t, r, most_probable]
    _exp_less(scratch, t, r, top)
    for j in range(1, n_classes):
        difference = 0.0
        for k in range(n_classes):
            difference = difference + scratch[t, r, k] * (cost[k, j] - cost[k, best])
        if difference < 0.0 or (difference == 0.0 and j == most_probable):
            best = j
    return best


# Classes scored together (their accumulators stay in registers); tables
# padded to whole blocks must use this (fastnb._base.pad_classes).
CLASS_BLOCK = FASTNB_BLOCK
# KernelDensityNB's tables of floats, a cache line a row (fastnb._kde).
KDE_CLASS_BLOCK = FASTNB_KDE_BLOCK

cdef enum:
    # Rows handed to a thread at a time when scoring: dynamic scheduling keeps
    # both cores busy on a shared machine where one of them may be slowed.
    ROW_CHUNK = 64

# Rows of a thread's scratch block, at most (fastnb._base.thread_scratch).
SCORE_ROWS = ROW_CHUNK


def discrete_score_csr(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const double[:, ::1] table,
    const double[::1] intercept,
    double threshold,
    bint binarize,
    bint non_negative,
    bint allow_nan,
    const double[:, ::1] missing,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """Score CSR rows against a feature-major table; a scratch block a thread.

    missing is empty, or (with allow_nan) the table of a NaN's terms (see
    FASTNB_DISCRETE_CSR_ROW). Returns the first row with a refused value, or
    -1.
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t nnz = X_indices.shape[0]
    cdef Py_ssize_t n_padded = table.shape[1]
    cdef const double* missing_rows = NULL
    # An X without stored values has only empty rows, which read nothing.
    cdef const floating* data = &X_data[0] if nnz else NULL
    cdef const index_t* indices = &X_indices[0] if nnz else NULL
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    if missing.shape[0]:
        if missing.shape[0] != table.shape[0] or missing.shape[1] != n_padded:
            raise ValueError("missing must have the shape of table")
        missing_rows = &missing[0, 0]
    _check_scratch(scratch, n_threads, n_padded)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = discrete_csr_row(
                data, indices, X_indptr[i], X_indptr[i + 1], nnz, &table[0, 0],
                table.shape[0], n_padded, threshold, binarize, non_negative, allow_nan,
                missing_rows, row,
            )
            if status < 0:
                with gil:
                    raise IndexError(
                        f"row {i} has a column outside the table or an offset past "
                        "the stored values"
                    )
            if status > 0:
                first_bad[t] = i
                stop = i
                break
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)


def discrete_score_dense(
    const floating[:, :] X,
    const double[:, ::1] table,
    const double[::1] intercept,
    double threshold,
    bint binarize,
    bint non_negative,
    bint allow_nan,
    const double[:, ::1] missing,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """Score dense rows against a feature-major table; a scratch block a thread.

    missing is empty, or (with allow_nan) the table of a NaN's terms (see
    FASTNB_DISCRETE_CSR_ROW). Returns the first row with a refused value, or
    -1.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_padded = table.shape[1]
    cdef const double* missing_rows = NULL
    cdef Py_ssize_t stride = X.strides[1] // sizeof(floating)
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    if missing.shape[0]:
        if missing.shape[0] != table.shape[0] or missing.shape[1] != n_padded:
            raise ValueError("missing must have the shape of table")
        missing_rows = &missing[0, 0]
    _check_scratch(scratch, n_threads, n_padded)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = discrete_dense_row(
                &X[i, 0], stride, X.shape[1], &table[0, 0], table.shape[0], n_padded,
                threshold, binarize, non_negative, allow_nan, missing_rows, row,
            )
            if status < 0:
                with gil:
                    raise IndexError(f"row {i} has a column outside the table")
            if status > 0:
                first_bad[t] = i
                stop = i
                break
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)


# ---------------------------------------------------------------------------
# Terms of the joint log-likelihood, one per stored value (fastnb._explain).
# Each is the value's term less the term of a 0 in its place, combined over
# the classes by the columns of a weight matrix that Python folds into the
# tables (a class: one column of the identity; a pair: +1 and -1; every
# class: the identity), so a term of 0 is never stored.  As the scoring
# kernels, they check X's values as they read them and return the first
# row holding a refused one, or -1.
#
# Linear families (count families, Gaussian): v coef[j, m] + v^2
# square_coef[j, m], v the value as counted (binarized or as it is), the
# square only for the Gaussian (`quadratic`; square_coef may be empty
# otherwise).  A value counted as 0 has term 0, even where coef holds -inf
# (x log p is 0 for x = 0).  A model with missing="ignore" passes
# missing_term (n_features, n_out), the term of a NaN (a missing value: its
# feature's term is left out of the score, so it is minus the term of a 0);
# missing_term is empty otherwise, and NaN is refused.
# ---------------------------------------------------------------------------

cdef inline double _linear_term(
    double x,
    double coef,
    double square_coef,
    double threshold,
    bint binarize,
    bint quadratic,
) noexcept nogil:
    """The term of value x for coefficients coef and square_coef (see above)."""
    cdef double v = fastnb_counted(x, threshold, binarize)
    if v == 0.0:
        return 0.0
    if quadratic:
        return v * coef + v * v * square_coef
    return v * coef


def linear_terms_csr(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const double[:, ::1] coef,
    const double[:, ::1] square_coef,
    const double[:, ::1] missing_term,
    double threshold,
    bint binarize,
    bint quadratic,
    bint non_negative,
    double[:, ::1] out,
    int n_threads,
):
    """out[p, m]: the term of stored value p of CSR X in column m; a task a row.

    Returns the first row with a refused value, or -1.
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t n_out = out.shape[1]
    cdef bint allow_nan = missing_term.shape[0] > 0
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t i, p, m, t
    cdef double x
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=ROW_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        for p in range(X_indptr[i], X_indptr[i + 1]):
            x = X_data[p]
            if fastnb_refused(x, non_negative, allow_nan):
                first_bad[t] = i
                break
            if x != x:
                for m in range(n_out):
                    out[p, m] = missing_term[X_indices[p], m]
                continue
            for m in range(n_out):
                out[p, m] = _linear_term(
                    x, coef[X_indices[p], m],
                    square_coef[X_indices[p], m] if quadratic else 0.0,
                    threshold, binarize, quadratic,
                )
    return _first_flagged(first_bad, n_samples)


def linear_terms_dense(
    const floating[:, :] X,
    const double[:, ::1] coef,
    const double[:, ::1] square_coef,
    const double[:, ::1] missing_term,
    double threshold,
    bint binarize,
    bint quadratic,
    bint non_negative,
    double[:, :, ::1] out,
    int n_threads,
):
    """out[i, j, m]: the term of X[i, j] in column m; a task a row.

    Returns the first row with a refused value, or -1.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_out = out.shape[2]
    cdef bint allow_nan = missing_term.shape[0] > 0
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t i, j, m, t
    cdef double x
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=ROW_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        for j in range(n_features):
            x = X[i, j]
            if fastnb_refused(x, non_negative, allow_nan):
                first_bad[t] = i
                break
            if x != x:
                for m in range(n_out):
                    out[i, j, m] = missing_term[j, m]
                continue
            for m in range(n_out):
                out[i, j, m] = _linear_term(
                    x, coef[j, m], square_coef[j, m] if quadratic else 0.0,
                    threshold, binarize, quadratic,
                )
    return _first_flagged(first_bad, n_samples)


# Categorical: the term of code x of feature j is table[offsets[j] + x, m]
# (its last row for codes past the feature's categories), the table holding
# each row's log-probabilities less those of the feature's code 0, combined.
# As for the linear families, a model with missing="ignore" passes
# missing_term (n_features, n_out), the term of a NaN code (minus code 0's
# term); empty otherwise, and NaN is refused.

cdef inline bint _missing_code(code_t x) noexcept nogil:
    """Whether code x is NaN (a missing value with missing="ignore"); integer
    codes never are."""
    if code_t is float or code_t is double:
        return x != x
    else:
        return False


cdef inline Py_ssize_t _code_row(
    code_t x, const intp_t[::1] offsets, Py_ssize_t j
) except -2 nogil:
    """The table row of code x of feature j, or -1 if x is not a whole
    number >= 0 (NaN and infinities are not); -2 passes on a bounds error
    (FASTNB_DEBUG build)."""
    cdef Py_ssize_t unseen = offsets[j + 1] - offsets[j] - 1
    if code_t is float or code_t is double:
        if not (x >= 0 and x < INFINITY and fastnb_whole(x)):
            return -1
        if x > unseen:
            return offsets[j] + unseen
    else:
        if x < 0:
            return -1
        if x > unseen:
            return offsets[j] + unseen
    return offsets[j] + <Py_ssize_t> x


def categorical_terms_csr(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] offsets,
    const double[:, ::1] table,
    const double[:, ::1] missing_term,
    double[:, ::1] out,
    int n_threads,
):
    """out[p, m]: the term of stored code p of CSR X in column m; a task a row.

    Returns the first row with a code that is not a whole number >= 0, or -1.
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t n_out = out.shape[1]
    cdef bint allow_nan = missing_term.shape[0] > 0
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t i, p, m, t, row
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=ROW_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        for p in range(X_indptr[i], X_indptr[i + 1]):
            row = _code_row(X_data[p], offsets, X_indices[p])
            if row < 0:
                if allow_nan and _missing_code(X_data[p]):
                    for m in range(n_out):
                        out[p, m] = missing_term[X_indices[p], m]
                    continue
                first_bad[t] = i
                break
            for m in range(n_out):
                out[p, m] = table[row, m]
    return _first_flagged(first_bad, n_samples)


def categorical_terms_dense(
    const code_t[:, :] X,
    const intp_t[::1] offsets,
    const double[:, ::1] table,
    const double[:, ::1] missing_term,
    double[:, :, ::1] out,
    int n_threads,
):
    """out[i, j, m]: the term of code X[i, j] in column m; a task a row.

    Returns the first row with a code that is not a whole number >= 0, or -1.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_out = out.shape[2]
    cdef bint allow_nan = missing_term.shape[0] > 0
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t i, j, m, t, row
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=ROW_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        for j in range(n_features):
            row = _code_row(X[i, j], offsets, j)
            if row < 0:
                if allow_nan and _missing_code(X[i, j]):
                    for m in range(n_out):
                        out[i, j, m] = missing_term[j, m]
                    continue
                first_bad[t] = i
                break
            for m in range(n_out):
                out[i, j, m] = table[row, m]
    return _first_flagged(first_bad, n_samples)


ctypedef fused label_word_t:
    # The words class labels are copied in: each label is a row of them.
    uint8_t
    uint16_t
    uint32_t
    uint64_t


def take_labels(
    const label_word_t[:, ::1] classes,
    const intp_t[::1] labels,
    label_word_t[:, ::1] out,
    int n_threads,
):
    """out[i] = classes[labels[i]]: predict's class of each row, in parallel;
    each class label is a row of words (its bytes, as fastnb._base's
    label_words lays them out).

    labels come from a scoring kernel's argmax, each below len(classes).
    """
    cdef Py_ssize_t width = classes.shape[1]
    cdef Py_ssize_t i, m
    for i in prange(
        labels.shape[0], nogil=True, schedule="static", num_threads=n_threads
    ):
        for m in range(width):
            out[i, m] = classes[labels[i], m]


def finish_scores(
    const double[:, ::1] jll,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """Finish joint log-likelihood rows as `output` asks; out may be jll
    itself. A block of rows is finished from a copy in its thread's
    scratch block (thread_scratch, as the scoring kernels'), whose rows
    have room for the padded classes that _finish_rows may write."""
    cdef Py_ssize_t n_samples = jll.shape[0]
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    if scratch.shape[2] != jll.shape[1]:
        raise ValueError("scratch must have a column of jll's classes a score")
    _check_scratch(scratch, n_threads, 0)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            for k in range(jll.shape[1]):
                scratch[t, i - first, k] = jll[i, k]
        _finish_rows(scratch, t, first, stop, output, out, labels)


# ---------------------------------------------------------------------------
# Gaussian moments: per class weighted count, mean and sum of squared
# deviations (ssd) by the weighted form of Welford's update,
#     W += w;  d = x - mean;  mean += (w / W) d;  ssd += w d (x - mean),
# which never subtracts large sums of squares.  As in counting, each entry
# is updated by one thread in row order.
# ---------------------------------------------------------------------------

cdef inline void _welford_row(
    const floating* x,
    Py_ssize_t n,
    double w,
    double step,
    double* mean,
    double* ssd,
) noexcept nogil:
    """Add the contiguous values x[0:n] with weight w to mean[0:n] and ssd[0:n].

    No indexing that could fail: the caller takes the row pointers from its
    memoryviews (bounds-checked in a debug build).
    """
    cdef Py_ssize_t j
    cdef double d
    for j in range(n):
        d = x[j] - mean[j]
        mean[j] = mean[j] + step * d
        ssd[j] = ssd[j] + w * d * (x[j] - mean[j])


cdef inline void _welford_row_observed(
    const floating* x,
    Py_ssize_t n,
    double w,
    double* observed,
    double* mean,
    double* ssd,
) noexcept nogil:
    """_welford_row for a model with missing="ignore": a NaN is left out, any
    other value adds w to observed[j], its entry's weight, and is added with
    step w / observed[j].

    Without branches, so that compilers vectorise it: a NaN is taken as the
    mean with weight 0, which changes nothing.
    """
    cdef Py_ssize_t j
    cdef double d, value, weight
    cdef bint present
    for j in range(n):
        present = x[j] == x[j]
        value = x[j] if present else mean[j]
        weight = w if present else 0.0
        observed[j] = observed[j] + weight
        d = value - mean[j]
        mean[j] = mean[j] + (weight / (observed[j] if present else 1.0)) * d
        ssd[j] = ssd[j] + weight * d * (value - mean[j])


cdef enum:
    # gaussian_moments_dense fetches the row about this many bytes ahead of
    # the one it adds, on a C-order X: the hardware's own prefetching did not
    # keep up with one thread's stream (15% off GaussianNB's fit of the
    # bench's float64 blobs at one thread, on an AMD EPYC; 4 and 8 KB measured
    # the same).
    STREAM_AHEAD = 4096


def gaussian_moments_dense(
    const floating[:, :] X,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    Py_ssize_t chunk_rows,
    double[:, ::1] weight,
    double[:, :, ::1] observed,
    double[:, :, ::1] mean,
    double[:, :, ::1] ssd,
    int n_threads,
):
    """Welford moments per class of each chunk of rows (C or F order X),
    merged in order into weight[0], mean[0] and ssd[0].

    A task is a chunk of chunk_rows rows, written to weight[b] (the weight
    of each class in the chunk), mean[b] and ssd[b]; then the chunks are
    merged, pairwise in order, a task an entry (class, feature), so the
    result does not depend on the number of threads. For a model with
    missing="ignore", observed has mean's shape and gets the weight of each
    entry's values that are not NaN (a NaN is left out of its entry's
    moments); otherwise it is empty, and NaN makes the moments NaN.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_chunks = mean.shape[0]
    cdef bint rows_contiguous = X.strides[1] == sizeof(floating) or n_features <= 1
    cdef bint ignore = observed.shape[0] > 0
    cdef Py_ssize_t row_bytes = n_features * sizeof(floating)
    cdef Py_ssize_t ahead = max(1, STREAM_AHEAD // max(row_bytes, 1))
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t b, e, i, j, c, start, stop, q
    cdef double w, m, d, x
    # Static: the chunks have equal rows, so each thread gets its share
    # whichever threads wake first.
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * chunk_rows
        stop = min(start + chunk_rows, n_samples)
        if rows_contiguous:
            for i in range(start, stop):
                if i + ahead < stop:
                    fastnb_prefetch(&X[i + ahead, 0], row_bytes)
                for q in range(label_ptr[i] if soft else i,
                               label_ptr[i + 1] if soft else i + 1):
                    w = label_weight[q]
                    if w > 0.0:
                        c = label_class[q]
                        weight[b, c] += w
                        if ignore:
                            _welford_row_observed(
                                &X[i, 0], n_features, w, &observed[b, c, 0],
                                &mean[b, c, 0], &ssd[b, c, 0],
                            )
                        else:
                            _welford_row(
                                &X[i, 0], n_features, w, w / weight[b, c],
                                &mean[b, c, 0], &ssd[b, c, 0],
                            )
        else:
            # A column at a time; the class weights are counted again for
            # each, ending with the chunk's.
            for j in range(n_features):
                for c in range(weight.shape[1]):
                    weight[b, c] = 0.0
                for i in range(start, stop):
                    for q in range(label_ptr[i] if soft else i,
                                   label_ptr[i + 1] if soft else i + 1):
                        w = label_weight[q]
                        if w > 0.0:
                            c = label_class[q]
                            weight[b, c] += w
                            x = X[i, j]
                            if not ignore:
                                d = x - mean[b, c, j]
                                mean[b, c, j] += (w / weight[b, c]) * d
                                ssd[b, c, j] += w * d * (x - mean[b, c, j])
                            elif x == x:
                                observed[b, c, j] += w
                                d = x - mean[b, c, j]
                                mean[b, c, j] += (w / observed[b, c, j]) * d
                                ssd[b, c, j] += w * d * (x - mean[b, c, j])
    if n_chunks == 1:
        return
    # A task an entry (class, feature): chunks are many, classes and features
    # can be few.
    for e in prange(
        weight.shape[1] * n_features, nogil=True, schedule="static",
        num_threads=n_threads,
    ):
        c = e // n_features
        j = e % n_features
        w = observed[0, c, j] if ignore else weight[0, c]
        for i in range(1, n_chunks):
            m = observed[i, c, j] if ignore else weight[i, c]
            _merge_into(
                w, &mean[0, c, j], &ssd[0, c, j],
                m, mean[i, c, j], ssd[i, c, j],
            )
            w = w + m
        if ignore:
            observed[0, c, j] = w
    for i in range(1, n_chunks):
        for c in range(weight.shape[1]):
            weight[0, c] += weight[i, c]


cdef inline int _welford_add(
    double x,
    double w,
    Py_ssize_t c,
    Py_ssize_t j,
    double[:, ::1] weight,
    double[:, ::1] mean,
    double[:, ::1] ssd,
) except -1 nogil:
    """Add value x with weight w > 0 to the moments of entry (c, j)."""
    cdef double d
    weight[c, j] += w
    d = x - mean[c, j]
    mean[c, j] += (w / weight[c, j]) * d
    ssd[c, j] += w * d * (x - mean[c, j])
    return 0


def gaussian_moments_csr(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] entries_by_class,
    const intp_t[::1] class_ptr,
    const intp_t[::1] entry_row,
    const double[:] label_weight,
    double[:, ::1] nz_weight,
    double[:, ::1] missing,
    double[:, ::1] mean,
    double[:, ::1] ssd,
    int n_threads,
):
    """Welford moments of the stored values only, per class; a task a class.

    The label entries as discrete_count_csr takes them. nz_weight[c, j]
    gets the weight of the stored values; the implicit zeros are merged in
    afterwards. For a model with missing="ignore", missing (as nz_weight)
    gets the weight of the stored NaN, which are left out; otherwise it is
    empty, and NaN makes the moments NaN.
    """
    cdef Py_ssize_t n_classes = class_ptr.shape[0] - 1
    cdef bint ignore = missing.shape[0] > 0
    cdef bint soft = entry_row.shape[0] > 0
    cdef Py_ssize_t c, q, e, i, p
    cdef double w
    for c in prange(n_classes, nogil=True, schedule="dynamic", num_threads=n_threads):
        for q in range(class_ptr[c], class_ptr[c + 1]):
            if q + ROWS_AHEAD < class_ptr[c + 1]:
                e = entries_by_class[q + ROWS_AHEAD]
                _fetch_row(X_data, X_indices, X_indptr, entry_row[e] if soft else e)
            e = entries_by_class[q]
            i = entry_row[e] if soft else e
            w = label_weight[e]
            if w > 0.0 and ignore:
                for p in range(X_indptr[i], X_indptr[i + 1]):
                    if X_data[p] != X_data[p]:
                        missing[c, X_indices[p]] += w
                    else:
                        _welford_add(
                            X_data[p], w, c, X_indices[p], nz_weight, mean, ssd
                        )
            elif w > 0.0:
                for p in range(X_indptr[i], X_indptr[i + 1]):
                    _welford_add(X_data[p], w, c, X_indices[p], nz_weight, mean, ssd)


def gaussian_moments_csc(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    double[:, ::1] nz_weight,
    double[:, ::1] missing,
    double[:, ::1] mean,
    double[:, ::1] ssd,
    int n_threads,
):
    """Welford moments of the stored values only, per class; a task a column.

    As gaussian_moments_csr, the labels as the label arrays.
    """
    cdef Py_ssize_t n_features = X_indptr.shape[0] - 1
    cdef bint ignore = missing.shape[0] > 0
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t j, p, r, e
    cdef double w
    for j in prange(n_features, nogil=True, schedule="dynamic", num_threads=n_threads):
        for p in range(X_indptr[j], X_indptr[j + 1]):
            r = X_indices[p]
            for e in range(label_ptr[r] if soft else r,
                           label_ptr[r + 1] if soft else r + 1):
                w = label_weight[e]
                if w > 0.0 and ignore and X_data[p] != X_data[p]:
                    missing[label_class[e], j] += w
                elif w > 0.0:
                    _welford_add(
                        X_data[p], w, label_class[e], j, nz_weight, mean, ssd
                    )


# Moments are merged by the pairwise formula of Chan, Golub and LeVeque: with
# counts n, m, means a, b and ssds s, t, the union has count n + m, mean
# a + (b - a) m / (n + m) and ssd s + t + (b - a)^2 n m / (n + m).  Each
# entry is merged on its own; threads take blocks of features.

cdef inline void _merge_into(
    double n, double* mean, double* ssd, double m, double batch_mean, double batch_ssd
) noexcept nogil:
    """Merge moments (m, batch_mean, batch_ssd) into (n, mean[0], ssd[0]),
    whose count then is n + m. Counts both 0 keep the mean, add the ssds."""
    cdef double total = n + m
    cdef double share = m / total if total > 0 else 0.0
    cdef double delta = batch_mean - mean[0]
    ssd[0] = ssd[0] + batch_ssd + delta * delta * n * share
    mean[0] = mean[0] + delta * share


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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
                _merge_into(
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
                _merge_into(
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
    _sum_blocks(block_sums, log_var_sums)
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
    _sum_blocks(block_sums, sums)
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
    _sum_blocks(block_sums, table[n_features, 2])
    _sum_blocks(block_lo, table[n_features, 3])
    return True


# ---------------------------------------------------------------------------
# Gaussian scoring: intercept[k] - 0.5 sum_j (x_j - theta[j, k])^2 * inv_var[j, k]
# with feature-major theta and inverse variances (the padding has inverse
# variance 0).  Sparse rows take the sum over their zeros as the all-zeros
# row's less the stored columns', exactly (see _rows.h).  A model with
# missing="ignore" passes log_var (as theta), log(2 pi var): a NaN's feature
# is left out, its log_var added back to the intercept, which holds
# -0.5 sum_j log(2 pi var); log_var is empty otherwise, and NaN refused.
# ---------------------------------------------------------------------------

cdef int _check_log_var(const double[:, ::1] log_var, Py_ssize_t n_rows) except -1:
    """In a FASTNB_DEBUG build, IndexError unless a log_var table that is
    not empty has the n_rows rows of the other tables."""
    if fastnb_debug_build() and 0 < log_var.shape[0] < n_rows:
        raise IndexError(f"log_var has {log_var.shape[0]} rows of {n_rows}")
    return 0


def gaussian_score_dense(
    const floating[:, :] X,
    const double[:, ::1] theta,
    const double[:, ::1] inv_var,
    const double[:, ::1] log_var,
    const double[::1] intercept,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """Gaussian scores of dense rows; class-padded tables, a scratch block a thread.

    Returns the first row with a value that is not finite, or -1.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_padded = theta.shape[1]
    cdef Py_ssize_t stride = X.strides[1] // sizeof(floating)
    cdef bint missing = log_var.shape[0] > 0
    cdef const double* log_var_rows = &log_var[0, 0] if missing else NULL
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    _check_log_var(log_var, theta.shape[0])
    _check_scratch(scratch, n_threads, n_padded)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = gaussian_dense_row(
                &X[i, 0], stride, X.shape[1], &theta[0, 0], &inv_var[0, 0],
                log_var_rows, theta.shape[0], n_padded, missing, row,
            )
            if status < 0:
                with gil:
                    raise IndexError(f"row {i} has a column outside the table")
            if status > 0:
                first_bad[t] = i
                stop = i
                break
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)


def gaussian_score_csr(
    const floating[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const double[:, :, ::1] table,
    const double[:, ::1] log_var,
    const double[::1] intercept,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """As gaussian_score_dense for CSR rows, from one table (see _rows.h).

    table (n_features + 1, 4, n_padded): fastnb._gaussian.sparse_gaussian_table;
    log_var as for gaussian_score_dense (n_features rows, or none).
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t nnz = X_indices.shape[0]
    cdef Py_ssize_t n_padded = table.shape[2]
    # An X without stored values has only empty rows, which read nothing.
    cdef const floating* data = &X_data[0] if nnz else NULL
    cdef const index_t* indices = &X_indices[0] if nnz else NULL
    cdef bint missing = log_var.shape[0] > 0
    cdef const double* log_var_rows = &log_var[0, 0] if missing else NULL
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    _check_log_var(log_var, table.shape[0] - 1)
    _check_scratch(scratch, n_threads, n_padded)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = gaussian_csr_row(
                data, indices, X_indptr[i], X_indptr[i + 1], nnz, &table[0, 0, 0],
                log_var_rows, table.shape[0] - 1, n_padded, missing, row,
            )
            if status < 0:
                with gil:
                    raise IndexError(
                        f"row {i} has a column outside the table or an offset past "
                        "the stored values"
                    )
            if status > 0:
                first_bad[t] = i
                stop = i
                break
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)


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

cdef enum:
    TABLE_BLOCK = 2048


cdef inline Py_ssize_t _table_blocks(Py_ssize_t n_features) noexcept nogil:
    return (n_features + TABLE_BLOCK - 1) // TABLE_BLOCK


cdef inline Py_ssize_t _tile_rows(Py_ssize_t n_padded) noexcept nogil:
    """Rows of a feature-major table (n_padded doubles each) that fill 16
    KiB, a part of the L1 cache, and at least 8: a table written a class at
    a time writes a column, each row's line again for each class, and
    would fetch those lines anew from farther caches if there were more."""
    return max(8, 2048 // max(n_padded, 1))


cdef inline void _sum_blocks(
    const double[:, ::1] block_sums, double[::1] out
) noexcept nogil:
    """out[c] = the sum of block_sums[b, c] over the blocks b, in order."""
    cdef Py_ssize_t b, c
    cdef double total
    for c in range(block_sums.shape[1]):
        total = 0.0
        for b in range(block_sums.shape[0]):
            total = total + block_sums[b, c]
        out[c] = total


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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef double[::1] log_total = np.empty(n_classes)
    cdef double[::1] small_logs = _small_logs(pseudo)
    cdef const double* small = &small_logs[0] if small_logs.shape[0] else NULL
    cdef Py_ssize_t tile_rows = _tile_rows(table.shape[1])
    cdef Py_ssize_t b, c, j, q, start, stop, tile
    cdef double total, value
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for c in range(n_classes):
            total = 0.0
            for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
                total = total + (feature_count[c, j] + pseudo[j])
            block_sums[b, c] = total
    _sum_blocks(block_sums, log_total)
    for c in range(n_classes):
        log_total[c] = log(log_total[c])
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
    _sum_blocks(block_sums, class_sums)
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
    _sum_blocks(block_sums, class_sums)
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
    _sum_blocks(block_sums, absent_sums)
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
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
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
    _sum_blocks(block_sums, rate_sums)


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

from libc.stdint cimport int64_t

from fastnb._rows cimport (
    categorical_check_rows,
    categorical_count_rows,
    categorical_csr_row,
    fastnb_whole,
    fastnb_zero,
)

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
    # The first bad code each thread met (see _first_flagged).
    cdef intp_t[::1] first_bad = np.full(n_threads, nnz, dtype=np.intp)
    cdef Py_ssize_t i, j, p, t
    cdef code_t x
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=STRUCTURE_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < nnz:
            continue
        for p in range(X_indptr[i], X_indptr[i + 1]):
            x = X_data[p]
            if not _fit_code(x, limit):
                if missing and _missing_code(x):
                    continue
                first_bad[t] = p
                break
            j = X_indices[p]
            if x > highest[t, j]:
                highest[t, j] = x
    return _first_flagged(first_bad, nnz)


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
                if missing and _missing_code(x):
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
                elif missing and _missing_code(x):
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
            elif missing and _missing_code(x):
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


def categorical_score_dense(
    const code_t[:, :] X,
    const intp_t[::1] offsets,
    const double[:, ::1] table,
    const double[::1] intercept,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    bint missing,
    int n_threads,
):
    """Score rows of category codes; class-padded table and intercept.

    Codes past a feature's categories score as its unseen row; scratch has
    a block of rows a thread, with room for the padded classes.  With
    missing, a NaN is a missing value, whose feature adds no term.  Returns
    the first row with a code that is not a whole number >= 0 (NaN and
    infinities are not), or -1; rows from it on may be left unscored.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_padded = table.shape[1]
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    # The first bad row each thread met (see categorical_check_count_dense).
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    _check_scratch(scratch, n_threads, n_padded)
    # Static: the blocks have equal rows.
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="static",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = categorical_dense_row(
                &X[i, 0], stride, n_features, &offsets[0], offsets.shape[0],
                &table[0, 0], table.shape[0], n_padded, missing, row,
            )
            if status > 0:
                first_bad[t] = i
                stop = i
                break
            if status != 0:
                with gil:
                    raise IndexError(f"row {i} has a category code outside the table")
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)


def categorical_zero_scores(
    const double[:, ::1] table,
    const intp_t[::1] offsets,
    const double[::1] intercept,
    double[::1] out,
    int n_threads,
):
    """out[k] = intercept[k] + sum_j table[offsets[j], k]: the scores of a row
    of codes 0 (class-padded table and intercept); whether every term of
    code 0 is finite.

    The sum is taken in blocks of TABLE_BLOCK features in order, then over
    the blocks in order, whatever the number of threads.
    """
    cdef Py_ssize_t n_features = offsets.shape[0] - 1
    cdef Py_ssize_t n_padded = table.shape[1]
    cdef Py_ssize_t n_blocks = _table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_padded))
    cdef intp_t[::1] block_bad = np.zeros(n_blocks, dtype=np.intp)
    cdef Py_ssize_t b, j, k
    cdef double v
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        for j in range(b * TABLE_BLOCK, min((b + 1) * TABLE_BLOCK, n_features)):
            for k in range(n_padded):
                v = table[offsets[j], k]
                if not v - v == 0.0:
                    block_bad[b] = 1
                block_sums[b, k] = block_sums[b, k] + v
    _sum_blocks(block_sums, out)
    for k in range(n_padded):
        out[k] = intercept[k] + out[k]
    return not np.any(block_bad)


def categorical_score_csr(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] offsets,
    const double[:, ::1] table,
    const double[::1] intercept,
    bint every_feature,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    bint missing,
    int n_threads,
):
    """Score canonical CSR rows of category codes (0 where nothing is stored).

    With every_feature False, intercept holds the all-zeros row's scores
    (categorical_zero_scores) and each stored code adds its term less code
    0's; with every_feature True (some term of code 0 is not finite), the
    class intercept, and every feature's term is added. Otherwise as
    categorical_score_dense: returns the first row with a stored code that
    is not a whole number >= 0, or -1.  With missing, a stored NaN is a
    missing value: its feature has no term (with every_feature False, its
    code-0 term is taken away from the all-zeros row's scores).
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t nnz = X_indices.shape[0]
    cdef Py_ssize_t n_padded = table.shape[1]
    # An X without stored values has only empty rows, which read nothing.
    cdef const code_t* data = &X_data[0] if nnz else NULL
    cdef const index_t* indices = &X_indices[0] if nnz else NULL
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    _check_scratch(scratch, n_threads, n_padded)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = categorical_csr_row(
                data, indices, X_indptr[i], X_indptr[i + 1], nnz, offsets.shape[0] - 1,
                &offsets[0], offsets.shape[0], &table[0, 0], table.shape[0], n_padded,
                every_feature, missing, row,
            )
            if status > 0:
                first_bad[t] = i
                stop = i
                break
            if status != 0:
                with gil:
                    raise IndexError(
                        f"row {i} has a category code outside the table or an offset "
                        "past the stored values"
                    )
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)


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


def kde_score_dense(
    const floating[:, :] X,
    const float[:, :, ::1] table,
    const double[::1] origin,
    const double[::1] inv_step,
    const intp_t[::1] n_points,
    const double[:, :, ::1] tails,
    const double[::1] intercept,
    bint missing,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """Kernel density scores of dense rows: interpolated log-density tables
    of floats (see kde_dense_row), classes padded to KDE_CLASS_BLOCK, a
    scratch block a thread. With missing (missing="ignore"), a NaN's feature
    is left out of its row's score.

    Returns the first row with a refused value (not finite; with missing,
    infinite), or -1.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_padded = table.shape[2]
    cdef Py_ssize_t stride = X.strides[1] // sizeof(floating)
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    cdef int status
    cdef double* row
    _check_scratch(scratch, n_threads, n_padded)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            row = &scratch[t, i - first, 0]
            for k in range(n_padded):
                row[k] = intercept[k]
            status = kde_dense_row(
                &X[i, 0], stride, X.shape[1], &table[0, 0, 0], table.shape[1],
                &origin[0], &inv_step[0], &n_points[0], &tails[0, 0, 0],
                table.shape[0], n_padded, missing, row,
            )
            if status < 0:
                with gil:
                    raise IndexError(f"row {i} has a column outside the table")
            if status > 0:
                first_bad[t] = i
                stop = i
                break
        _finish_rows(scratch, t, first, stop, output, out, labels)
    return _first_flagged(first_bad, n_samples)
