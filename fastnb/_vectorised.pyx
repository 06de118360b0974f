"""Compiled loops of fastnb whose speed depends on the instruction set: built
once a variant (baseline, AVX2, AVX-512 or SVE), fastnb._simd choosing the
one the CPU runs.  The others, built once, are in fastnb._kernels.

Here: the checks of X's values, the counting of the count families, the
Gaussian moments, and every scoring kernel (scores, terms, finishing).
Every kernel trusts its inputs: shapes, dtypes, contiguity and value ranges
are checked in Python before the call (a FASTNB_DEBUG=1 build checks every
index anyway, and raises IndexError).  The caller allocates every output.
Values are read in their own precision (float32 or float64); statistics and
scores are accumulated in float64.
"""

from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport INFINITY, log

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
    FASTNB_BLOCK,
    FASTNB_KDE_BLOCK,
    categorical_csr_row,
    categorical_dense_row,
    code_t,
    discrete_csr_row,
    discrete_dense_row,
    fastnb_counted,
    fastnb_debug_build,
    fastnb_exp_less,
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


# ---------------------------------------------------------------------------
# Values.  X's values are checked by the parallel kernels that read them:
# here before counting (a fit must not count a refused value into the
# model), as they are scored otherwise.
# ---------------------------------------------------------------------------

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
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
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
    return first_flagged(first_bad, n)


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


cdef inline Py_ssize_t _first_at_least(
    const index_t[::1] X_indices, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t column
) noexcept nogil:
    """The first place in start .. stop - 1 of a row of sorted indices whose
    index is at least column, or stop if none is (a binary search)."""
    cdef Py_ssize_t middle
    while start < stop:
        middle = start + (stop - start) // 2
        if X_indices[middle] < column:
            start = middle + 1
        else:
            stop = middle
    return start


cdef inline int _check_feature_edges(
    const intp_t[::1] feature_edges, Py_ssize_t n_features
) except -1:
    """feature_edges must cut 0 .. n_features into blocks (gaussian_moments_csr)."""
    cdef Py_ssize_t b
    if feature_edges.shape[0] < 2 or feature_edges[0] != 0:
        raise ValueError("feature_edges must start at 0 and hold a block at least")
    for b in range(feature_edges.shape[0] - 1):
        if feature_edges[b + 1] < feature_edges[b]:
            raise ValueError("feature_edges must not decrease")
    if feature_edges[feature_edges.shape[0] - 1] != n_features:
        raise ValueError("feature_edges must end at the number of features")
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
    # Each class row of `out` is summed by a single thread in row order.
    # Dynamic: a class's cost is not its rows' number.  A class of scattered
    # rows costs about twice as much a row as one of consecutive rows (314
    # against 136 ns), so classes dealt out in turn, or shared out by their
    # rows, left a multilabel fit's threads unequal (1.6 times the time at
    # two threads).  On fewer cores than threads most classes go to the
    # threads that wake first (4 to 7 of 16 busy in a 20-class batch).
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
    # Rows a thread scores at a time (a block of its scratch rows).
    ROW_CHUNK = 64

# Rows of a thread's scratch block, at most (fastnb._base.thread_scratch).
SCORE_ROWS = ROW_CHUNK


# ---------------------------------------------------------------------------
# The scoring driver.  Every scoring kernel is a struct of its tables and
# sizes and a ScoreRows function; score_blocks runs the one loop over blocks
# of rows they share.
# ---------------------------------------------------------------------------

# A kernel's rows first .. stop - 1, into rows + (i - first) * row_stride:
# starts each row from the intercept (_started_row), adds its terms (reading
# `kernel`, the kernel's struct), and returns stop, or the first row with a
# refused value, or -1 - i for a row i that reads outside its tables (the
# checks of a FASTNB_DEBUG=1 build).  X's values, and a CSR X's column
# indices, come typed, which picks the specialisation; a dense kernel has no
# indices.  Each copies its struct to a local, which the compiler may keep
# in registers while rows are written.
ctypedef Py_ssize_t (*ScoreRows)(
    const void* kernel,
    const code_t* x,
    const index_t* x_indices,
    const double* intercept,
    Py_ssize_t first,
    Py_ssize_t stop,
    double* rows,
    Py_ssize_t row_stride,
) noexcept nogil


cdef inline const code_t* _dense_values(const code_t[:, :] X) noexcept:
    """X's first value, from which a dense kernel reads its rows by X's
    strides; NULL for an X without values."""
    return &X[0, 0] if X.shape[0] > 0 and X.shape[1] > 0 else NULL


cdef inline double* _started_row(
    double* rows,
    Py_ssize_t r,
    Py_ssize_t row_stride,
    const double* intercept,
    Py_ssize_t n_padded,
) noexcept nogil:
    """Row r of a block, set to the intercept (each row's, as it is scored:
    a pass over the block first cost 3-8% of a small row's time)."""
    cdef double* row = rows + r * row_stride
    cdef Py_ssize_t k
    for k in range(n_padded):
        row[k] = intercept[k]
    return row


cdef inline Py_ssize_t _stopped_at(int status, Py_ssize_t i) noexcept nogil:
    """What a ScoreRows function returns for row i, whose row helper
    returned status != 0: i if a value was refused, -1 - i if it read
    outside its tables."""
    return i if status > 0 else -1 - i


cdef inline int _score_run(
    ScoreRows score_rows,
    const void* kernel,
    const code_t* x,
    const index_t* x_indices,
    const double* intercept,
    Py_ssize_t first_block,
    Py_ssize_t stop_block,
    Py_ssize_t n_samples,
    double[:, :, :] scratch,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    intp_t[::1] first_bad,
    intp_t[::1] first_outside,
) except -1 nogil:
    """Blocks first_block .. stop_block - 1 of score_blocks, in the calling
    thread's scratch rows, until a row is refused (first_bad) or reads
    outside its tables (first_outside) in this thread."""
    cdef Py_ssize_t t = threadid()
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t row_stride = scratch.strides[1] // sizeof(double)
    cdef Py_ssize_t b, first, stop, end
    for b in range(first_block, stop_block):
        if first_bad[t] < n_samples or first_outside[t] < n_samples:
            return 0
        first = b * rows
        stop = min(first + rows, n_samples)
        end = score_rows(
            kernel, x, x_indices, intercept, first, stop, &scratch[t, 0, 0], row_stride
        )
        if end < 0:
            first_outside[t] = -1 - end
            return 0
        if end < stop:
            first_bad[t] = end
        _finish_rows(scratch, t, first, end, output, out, labels)
    return 0


cdef inline Py_ssize_t _work_before(
    Py_ssize_t b, Py_ssize_t rows, Py_ssize_t n_samples, const index_t* x_indptr
) noexcept nogil:
    """The work of score_blocks' blocks 0 .. b - 1: their rows, and for a
    CSR X (x_indptr not NULL) their stored values too, a row's cost being
    about its stored values' and its own."""
    cdef Py_ssize_t i = min(b * rows, n_samples)
    if x_indptr == NULL:
        return i
    return i + <Py_ssize_t> x_indptr[i] - <Py_ssize_t> x_indptr[0]


cdef Py_ssize_t _run_start(
    double share,
    Py_ssize_t n_blocks,
    Py_ssize_t rows,
    Py_ssize_t n_samples,
    const index_t* x_indptr,
) noexcept nogil:
    """The first of score_blocks' blocks whose blocks before it hold `share`
    of the work (_work_before), found by bisection.  An X whose offsets
    decrease only moves the runs' bounds (its rows are refused as they are
    scored)."""
    cdef Py_ssize_t low = 0, high = n_blocks, middle
    while low < high:
        middle = (low + high) // 2
        if _work_before(middle, rows, n_samples, x_indptr) < share:
            low = middle + 1
        else:
            high = middle
    return low


cdef Py_ssize_t score_blocks(
    ScoreRows score_rows,
    const void* kernel,
    const code_t* x,
    const index_t* x_indices,
    const index_t* x_indptr,
    Py_ssize_t n_samples,
    const double[::1] intercept,
    Py_ssize_t n_padded,
    str index_error,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
) except -2:
    """Score n_samples rows, a block of scratch's rows at a time a thread:
    the rows scored by score_rows (from the intercept, of n_padded classes),
    the block finished by _finish_rows as `output` asks.

    Each thread scores one run of blocks, in a static schedule: runs of
    equal rows, or for a CSR X (x_indptr, its row offsets; NULL for a
    dense X) of equal rows and stored values together, so that rows of
    very different lengths, sorted by length say, still share out evenly.
    On a machine with fewer cores than threads, handing blocks out one at
    a time gave most of them to the threads that woke first (3 to 8 of 16
    threads busy), and a run each spreads the work over all of them (16 of
    16).  On 2 cores with one of them taken by another process, the runs
    cost about 7% against blocks handed out one at a time (bench/README.md).

    Returns the first row with a refused value, or -1; a thread that met one
    scores no more blocks, so rows from it on may be left unscored.  A row
    that reads outside its tables raises IndexError ("row i " index_error).
    """
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef intp_t[::1] first_outside = np.full(n_threads, n_samples, dtype=np.intp)
    cdef intp_t[::1] run_start = np.empty(n_threads + 1, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t n_blocks, total, run, outside
    if intercept.shape[0] < n_padded:
        raise ValueError(
            f"intercept must have a value for each of the {n_padded} padded classes"
        )
    _check_scratch(scratch, n_threads, n_padded)
    n_blocks = (n_samples + rows - 1) // rows
    total = _work_before(n_blocks, rows, n_samples, x_indptr)
    run_start[0] = 0
    for run in range(1, n_threads):
        run_start[run] = max(
            run_start[run - 1],
            _run_start(
                <double> total * run / n_threads, n_blocks, rows, n_samples, x_indptr
            ),
        )
    run_start[n_threads] = n_blocks
    for run in prange(n_threads, nogil=True, schedule="static", num_threads=n_threads):
        _score_run(
            score_rows, kernel, x, x_indices, &intercept[0], run_start[run],
            run_start[run + 1], n_samples, scratch, output, out, labels,
            first_bad, first_outside,
        )
    outside = first_flagged(first_outside, n_samples)
    if outside >= 0:
        raise IndexError(f"row {outside} {index_error}")
    return first_flagged(first_bad, n_samples)


cdef struct DiscreteScoring:
    # discrete_score_csr / _dense: a feature-major table (table_rows x
    # n_padded) and, with allow_nan, the terms of a NaN (or NULL).
    const void* indptr  # CSR: X's row offsets, of X's index type
    Py_ssize_t nnz  # CSR: X's stored values
    Py_ssize_t x_row, x_column  # dense: X's strides, in values
    Py_ssize_t n_features  # dense: X's columns
    const double* table
    Py_ssize_t table_rows
    Py_ssize_t n_padded
    double threshold
    bint binarize
    bint non_negative
    bint allow_nan
    const double* missing


cdef const double* _missing_terms(
    const double[:, ::1] missing, const double[:, ::1] table
) except? NULL:
    """The terms of a NaN, a table of the shape of `table`, or NULL if
    `missing` is empty (missing="error")."""
    if not missing.shape[0]:
        return NULL
    if missing.shape[0] != table.shape[0] or missing.shape[1] != table.shape[1]:
        raise ValueError("missing must have the shape of table")
    return &missing[0, 0]


cdef Py_ssize_t _discrete_csr_rows(
    const void* kernel, const floating* data, const index_t* indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef DiscreteScoring s = (<const DiscreteScoring*> kernel)[0]
    cdef const index_t* indptr = <const index_t*> s.indptr
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = discrete_csr_row(
            data, indices, indptr[i], indptr[i + 1], s.nnz, s.table, s.table_rows,
            s.n_padded, s.threshold, s.binarize, s.non_negative, s.allow_nan,
            s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


cdef Py_ssize_t _discrete_dense_rows(
    const void* kernel, const floating* x, const int32_t* no_indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef DiscreteScoring s = (<const DiscreteScoring*> kernel)[0]
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = discrete_dense_row(
            x + i * s.x_row, s.x_column, s.n_features, s.table, s.table_rows,
            s.n_padded, s.threshold, s.binarize, s.non_negative, s.allow_nan,
            s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


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
    # An X without stored values has only empty rows, which read nothing.
    cdef const floating* data = &X_data[0] if nnz else NULL
    cdef const index_t* indices = &X_indices[0] if nnz else NULL
    cdef DiscreteScoring kernel
    kernel.missing = _missing_terms(missing, table)
    kernel.indptr = &X_indptr[0]
    kernel.nnz = nnz
    kernel.table = &table[0, 0]
    kernel.table_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.threshold = threshold
    kernel.binarize = binarize
    kernel.non_negative = non_negative
    kernel.allow_nan = allow_nan
    return score_blocks[floating, index_t](
        _discrete_csr_rows[floating, index_t], &kernel, data, indices, &X_indptr[0],
        n_samples, intercept, n_padded,
        "has a column outside the table or an offset past the stored values",
        output, out, labels, scratch, n_threads,
    )


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
    cdef DiscreteScoring kernel
    kernel.missing = _missing_terms(missing, table)
    kernel.x_row = X.strides[0] // sizeof(floating)
    kernel.x_column = X.strides[1] // sizeof(floating)
    kernel.n_features = X.shape[1]
    kernel.table = &table[0, 0]
    kernel.table_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.threshold = threshold
    kernel.binarize = binarize
    kernel.non_negative = non_negative
    kernel.allow_nan = allow_nan
    return score_blocks[floating, int32_t](
        _discrete_dense_rows[floating], &kernel, _dense_values(X), NULL, NULL,
        n_samples, intercept, n_padded, "has a column outside the table", output, out,
        labels, scratch, n_threads,
    )


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
    return first_flagged(first_bad, n_samples)


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
    return first_flagged(first_bad, n_samples)


# Categorical: the term of code x of feature j is table[offsets[j] + x, m]
# (its last row for codes past the feature's categories), the table holding
# each row's log-probabilities less those of the feature's code 0, combined.
# As for the linear families, a model with missing="ignore" passes
# missing_term (n_features, n_out), the term of a NaN code (minus code 0's
# term); empty otherwise, and NaN is refused.


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
                if allow_nan and missing_code(X_data[p]):
                    for m in range(n_out):
                        out[p, m] = missing_term[X_indices[p], m]
                    continue
                first_bad[t] = i
                break
            for m in range(n_out):
                out[p, m] = table[row, m]
    return first_flagged(first_bad, n_samples)


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
                if allow_nan and missing_code(X[i, j]):
                    for m in range(n_out):
                        out[i, j, m] = missing_term[j, m]
                    continue
                first_bad[t] = i
                break
            for m in range(n_out):
                out[i, j, m] = table[row, m]
    return first_flagged(first_bad, n_samples)


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
            merge_into(
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
    const intp_t[::1] feature_edges,
    double[:, ::1] nz_weight,
    double[:, ::1] missing,
    double[:, ::1] mean,
    double[:, ::1] ssd,
    int n_threads,
):
    """Welford moments of the stored values only, per class; a task a class
    and block of features.

    The label entries as discrete_count_csr takes them. feature_edges: the
    blocks of features, block b of features feature_edges[b] ..
    feature_edges[b + 1] - 1, from 0 to n_features; with more than one,
    each row's indices must be sorted (a task finds its block's in a row
    by binary search). nz_weight[c, j]
    gets the weight of the stored values; the implicit zeros are merged in
    afterwards. For a model with missing="ignore", missing (as nz_weight)
    gets the weight of the stored NaN, which are left out; otherwise it is
    empty, and NaN makes the moments NaN.
    """
    cdef Py_ssize_t n_classes = class_ptr.shape[0] - 1
    cdef Py_ssize_t n_blocks = feature_edges.shape[0] - 1
    cdef bint ignore = missing.shape[0] > 0
    cdef bint soft = entry_row.shape[0] > 0
    cdef Py_ssize_t task, c, b, q, e, i, p, start, stop
    cdef double w
    _check_feature_edges(feature_edges, mean.shape[1])
    # Dynamic, as discrete_count_csr's.  Each entry is summed by a single
    # thread in row order, whatever the blocks (fastnb._threads.feature_blocks).
    for task in prange(
        n_classes * n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        c = task // n_blocks
        b = task % n_blocks
        for q in range(class_ptr[c], class_ptr[c + 1]):
            if q + ROWS_AHEAD < class_ptr[c + 1]:
                e = entries_by_class[q + ROWS_AHEAD]
                _fetch_row(X_data, X_indices, X_indptr, entry_row[e] if soft else e)
            e = entries_by_class[q]
            i = entry_row[e] if soft else e
            w = label_weight[e]
            start = X_indptr[i]
            stop = X_indptr[i + 1]
            if n_blocks > 1:
                start = _first_at_least(X_indices, start, stop, feature_edges[b])
                stop = _first_at_least(X_indices, start, stop, feature_edges[b + 1])
            if w > 0.0 and ignore:
                for p in range(start, stop):
                    if X_data[p] != X_data[p]:
                        missing[c, X_indices[p]] += w
                    else:
                        _welford_add(
                            X_data[p], w, c, X_indices[p], nz_weight, mean, ssd
                        )
            elif w > 0.0:
                for p in range(start, stop):
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


cdef struct GaussianScoring:
    # gaussian_score_dense: theta and inv_var (table_rows x n_padded);
    # gaussian_score_csr: one table ((table_rows + 1) x 4 x n_padded).  With
    # missing, log_var (table_rows x n_padded), else NULL.
    const void* indptr  # CSR: X's row offsets, of X's index type
    Py_ssize_t nnz  # CSR: X's stored values
    Py_ssize_t x_row, x_column  # dense: X's strides, in values
    Py_ssize_t n_features  # dense: X's columns
    const double* theta
    const double* inv_var
    const double* table
    const double* log_var
    Py_ssize_t table_rows
    Py_ssize_t n_padded
    bint missing


cdef Py_ssize_t _gaussian_dense_rows(
    const void* kernel, const floating* x, const int32_t* no_indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef GaussianScoring s = (<const GaussianScoring*> kernel)[0]
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = gaussian_dense_row(
            x + i * s.x_row, s.x_column, s.n_features, s.theta, s.inv_var,
            s.log_var, s.table_rows, s.n_padded, s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


cdef Py_ssize_t _gaussian_csr_rows(
    const void* kernel, const floating* data, const index_t* indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef GaussianScoring s = (<const GaussianScoring*> kernel)[0]
    cdef const index_t* indptr = <const index_t*> s.indptr
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = gaussian_csr_row(
            data, indices, indptr[i], indptr[i + 1], s.nnz, s.table, s.log_var,
            s.table_rows, s.n_padded, s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


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
    cdef GaussianScoring kernel
    _check_log_var(log_var, theta.shape[0])
    kernel.x_row = X.strides[0] // sizeof(floating)
    kernel.x_column = X.strides[1] // sizeof(floating)
    kernel.n_features = X.shape[1]
    kernel.theta = &theta[0, 0]
    kernel.inv_var = &inv_var[0, 0]
    kernel.log_var = &log_var[0, 0] if log_var.shape[0] else NULL
    kernel.table_rows = theta.shape[0]
    kernel.n_padded = n_padded
    kernel.missing = log_var.shape[0] > 0
    return score_blocks[floating, int32_t](
        _gaussian_dense_rows[floating], &kernel, _dense_values(X), NULL, NULL,
        n_samples, intercept, n_padded, "has a column outside the table", output, out,
        labels, scratch, n_threads,
    )


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
    cdef GaussianScoring kernel
    _check_log_var(log_var, table.shape[0] - 1)
    kernel.indptr = &X_indptr[0]
    kernel.nnz = nnz
    kernel.table = &table[0, 0, 0]
    kernel.log_var = &log_var[0, 0] if log_var.shape[0] else NULL
    kernel.table_rows = table.shape[0] - 1
    kernel.n_padded = n_padded
    kernel.missing = log_var.shape[0] > 0
    return score_blocks[floating, index_t](
        _gaussian_csr_rows[floating, index_t], &kernel, data, indices, &X_indptr[0],
        n_samples, intercept, n_padded,
        "has a column outside the table or an offset past the stored values",
        output, out, labels, scratch, n_threads,
    )


# ---------------------------------------------------------------------------
# Categorical scoring
# ---------------------------------------------------------------------------

cdef struct CategoricalScoring:
    # categorical_score_dense / _csr: a table of a row a (feature, category),
    # feature j's from offsets[j] (n_offsets = n_features + 1).
    const void* indptr  # CSR: X's row offsets, of X's index type
    Py_ssize_t nnz  # CSR: X's stored values
    Py_ssize_t x_row, x_column  # dense: X's strides, in values
    Py_ssize_t n_features
    const intp_t* offsets
    Py_ssize_t n_offsets
    const double* table
    Py_ssize_t table_rows
    Py_ssize_t n_padded
    bint every_feature  # CSR: see categorical_score_csr
    bint missing


cdef Py_ssize_t _categorical_dense_rows(
    const void* kernel, const code_t* x, const int32_t* no_indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef CategoricalScoring s = (<const CategoricalScoring*> kernel)[0]
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = categorical_dense_row(
            x + i * s.x_row, s.x_column, s.n_features, s.offsets, s.n_offsets,
            s.table, s.table_rows, s.n_padded, s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


cdef Py_ssize_t _categorical_csr_rows(
    const void* kernel, const code_t* data, const index_t* indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef CategoricalScoring s = (<const CategoricalScoring*> kernel)[0]
    cdef const index_t* indptr = <const index_t*> s.indptr
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = categorical_csr_row(
            data, indices, indptr[i], indptr[i + 1], s.nnz, s.n_features, s.offsets,
            s.n_offsets, s.table, s.table_rows, s.n_padded, s.every_feature,
            s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


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
    cdef CategoricalScoring kernel
    kernel.x_row = X.strides[0] // sizeof(code_t)
    kernel.x_column = X.strides[1] // sizeof(code_t)
    kernel.n_features = n_features
    kernel.offsets = &offsets[0]
    kernel.n_offsets = offsets.shape[0]
    kernel.table = &table[0, 0]
    kernel.table_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.missing = missing
    return score_blocks[code_t, int32_t](
        _categorical_dense_rows[code_t], &kernel, _dense_values(X), NULL, NULL,
        n_samples, intercept, n_padded, "has a category code outside the table",
        output, out, labels, scratch, n_threads,
    )


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
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
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
    sum_blocks(block_sums, out)
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
    cdef CategoricalScoring kernel
    kernel.indptr = &X_indptr[0]
    kernel.nnz = nnz
    kernel.n_features = offsets.shape[0] - 1
    kernel.offsets = &offsets[0]
    kernel.n_offsets = offsets.shape[0]
    kernel.table = &table[0, 0]
    kernel.table_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.every_feature = every_feature
    kernel.missing = missing
    return score_blocks[code_t, index_t](
        _categorical_csr_rows[code_t, index_t], &kernel, data, indices, &X_indptr[0],
        n_samples, intercept, n_padded,
        "has a category code outside the table or an offset past the stored values",
        output, out, labels, scratch, n_threads,
    )


# ---------------------------------------------------------------------------
# Kernel density scoring
# ---------------------------------------------------------------------------

cdef struct KdeScoring:
    # kde_score_dense: interpolated log-density tables of floats
    # (table_rows x n_columns x n_padded) on each feature's lattice (origin,
    # inv_step, n_points), and the tails beyond them.
    Py_ssize_t x_row, x_column  # X's strides, in values
    Py_ssize_t n_features
    const float* table
    Py_ssize_t n_columns
    const double* origin
    const double* inv_step
    const intp_t* n_points
    const double* tails
    Py_ssize_t table_rows
    Py_ssize_t n_padded
    bint missing


cdef Py_ssize_t _kde_dense_rows(
    const void* kernel, const floating* x, const int32_t* no_indices,
    const double* intercept, Py_ssize_t first, Py_ssize_t stop, double* rows,
    Py_ssize_t row_stride,
) noexcept nogil:
    cdef KdeScoring s = (<const KdeScoring*> kernel)[0]
    cdef Py_ssize_t i
    cdef int status
    cdef double* row
    for i in range(first, stop):
        row = _started_row(rows, i - first, row_stride, intercept, s.n_padded)
        status = kde_dense_row(
            x + i * s.x_row, s.x_column, s.n_features, s.table, s.n_columns,
            s.origin, s.inv_step, s.n_points, s.tails, s.table_rows, s.n_padded,
            s.missing, row,
        )
        if status != 0:
            return _stopped_at(status, i)
    return stop


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
    cdef KdeScoring kernel
    kernel.x_row = X.strides[0] // sizeof(floating)
    kernel.x_column = X.strides[1] // sizeof(floating)
    kernel.n_features = X.shape[1]
    kernel.table = &table[0, 0, 0]
    kernel.n_columns = table.shape[1]
    kernel.origin = &origin[0]
    kernel.inv_step = &inv_step[0]
    kernel.n_points = &n_points[0]
    kernel.tails = &tails[0, 0, 0]
    kernel.table_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.missing = missing
    return score_blocks[floating, int32_t](
        _kde_dense_rows[floating], &kernel, _dense_values(X), NULL, NULL,
        n_samples, intercept, n_padded, "has a column outside the table", output, out,
        labels, scratch, n_threads,
    )
