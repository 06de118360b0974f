# Included by _vectorised.pyx: the count families' sums and scores.

# ---------------------------------------------------------------------------
# Counting: per-class sums of (weighted, optionally binarized) feature values.
# (sample_weight may be a view of one value, stride 0: unit weights.)
# Each entry of `out` is written by one thread only, summing rows in their
# original order, so the result does not depend on the number of threads;
# or, where discrete_count_csr cuts a class in parts, summed from the parts
# only if every sum is exact (add_parts), and so the same.
# A NaN reaches them only from a model with missing="ignore" (check_values
# refuses it otherwise), which passes allow_nan: it is a missing value,
# counted as nothing in out and, if `missing` has rows (else it is empty),
# its weight added to missing[class, feature] in the same order.  Without
# allow_nan the loops have no test for NaN.
# ---------------------------------------------------------------------------


cdef inline bint _whole(const count_t* x, Py_ssize_t n) noexcept nogil:
    """Whether each of the n values at x is a whole number, not negative,
    or NaN (fastnb_row_whole)."""
    if count_t is double:
        return fastnb_row_whole_double(x, n)
    elif count_t is float:
        return fastnb_row_whole_float(x, n)
    elif count_t is int64_t:
        return fastnb_row_whole_int64_t(x, n)
    elif count_t is int32_t:
        return fastnb_row_whole_int32_t(x, n)
    else:
        return fastnb_row_whole_uint8_t(x, n)


cdef inline bint _count_entries(
    const count_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] entries_by_class,
    const intp_t[::1] entry_row,
    const double[:] label_weight,
    Py_ssize_t first,
    Py_ssize_t stop,
    double threshold,
    bint binarize,
    bint allow_nan,
    double[:, ::1] sums,
    double[:, ::1] missed,
    Py_ssize_t row,
    bint whole,
) except? -1 nogil:
    """Add the rows of entries entries_by_class[first:stop], in order, to
    sums[row] (and their missing values' weights to missed[row], unless
    missed is empty). If whole, stops at the end of the first row that
    holds a value other than a whole number, not negative, as counted
    (_whole; binarized values are 0 or 1), and returns whether there was
    one."""
    cdef bint track = missed.shape[0] > 0
    cdef bint soft = entry_row.shape[0] > 0
    cdef Py_ssize_t q, e, i, p
    cdef double w
    for q in range(first, stop):
        if q + ROWS_AHEAD < stop:
            e = entries_by_class[q + ROWS_AHEAD]
            _fetch_row(X_data, X_indices, X_indptr, entry_row[e] if soft else e)
        e = entries_by_class[q]
        i = entry_row[e] if soft else e
        w = label_weight[e]
        if not allow_nan:
            for p in range(X_indptr[i], X_indptr[i + 1]):
                sums[row, X_indices[p]] += fastnb_product(
                    w, fastnb_counted(X_data[p], threshold, binarize)
                )
        else:
            for p in range(X_indptr[i], X_indptr[i + 1]):
                if X_data[p] != X_data[p]:
                    if track:
                        missed[row, X_indices[p]] += w
                    continue
                sums[row, X_indices[p]] += fastnb_product(
                    w, fastnb_counted(X_data[p], threshold, binarize)
                )
        if (
            whole
            and not binarize
            and X_indptr[i] < X_indptr[i + 1]
            and not _whole(&X_data[X_indptr[i]], X_indptr[i + 1] - X_indptr[i])
        ):
            return True
    return False


cdef inline bint _count_task(
    const count_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] entries_by_class,
    const intp_t[::1] entry_row,
    const double[:] label_weight,
    const intp_t[:, ::1] tasks,
    Py_ssize_t t,
    double threshold,
    bint binarize,
    double[:, ::1] out,
    double[:, ::1] missing,
    bint allow_nan,
    double[:, ::1] part,
    double[:, ::1] part_missing,
) except? -1 nogil:
    """Count discrete_count_csr's task t into its class's row of out, or
    into its row of part (and of part_missing), zeroed first; returns
    whether a part met a value other than a whole number, not negative."""
    cdef Py_ssize_t s = tasks[t, 3]
    if s < 0:
        return _count_entries(
            X_data, X_indices, X_indptr, entries_by_class, entry_row,
            label_weight, tasks[t, 0], tasks[t, 1], threshold, binarize,
            allow_nan, out, missing, tasks[t, 2], False,
        )
    if part.shape[1] > 0:
        fastnb_zero(&part[s, 0], part.shape[1])
        if part_missing.shape[0] > 0:
            fastnb_zero(&part_missing[s, 0], part_missing.shape[1])
    return _count_entries(
        X_data, X_indices, X_indptr, entries_by_class, entry_row,
        label_weight, tasks[t, 0], tasks[t, 1], threshold, binarize,
        allow_nan, part, part_missing, s, True,
    )


def discrete_count_csr(
    const count_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] entries_by_class,
    const intp_t[::1] entry_row,
    const double[:] label_weight,
    const intp_t[:, ::1] tasks,
    Py_ssize_t n_dealt,
    double threshold,
    bint binarize,
    double[:, ::1] out,
    double[:, ::1] missing,
    bint allow_nan,
    double[:, ::1] part,
    double[:, ::1] part_missing,
    int n_threads,
):
    """Add each CSR row's weighted values to its classes' rows of out, or
    to rows of part: a task a class, or a part of one. Returns whether the
    parts counted whole numbers only, none negative (as add_parts needs);
    if not, a part that met another value stopped at the end of its row.

    entries_by_class: the label entries grouped by class (class_order),
    each group in row order; entry e is of row entry_row[e] (or row e if
    entry_row is empty: hard labels) and weighs label_weight[e]. A task
    (a row of tasks) is its first entry, the end of its entries, their
    class, and -1 to count them into the class's row of out (the class's
    values then summed in row order, whatever the number of threads), or
    the row of part (and of part_missing, for missing values) they are
    counted into, zeroed first.

    The tasks are taken by the next thread free, but for the last n_dealt,
    about equal, dealt out in turn (dealt_task: the main thread takes the
    smallest of each round, and none of a round that is not full). (A
    class's cost is not its rows' number: a class of scattered rows costs
    about twice as much a row as one of consecutive rows, 314 against 136
    ns, so the classes of a multilabel fit, one of them of every row, dealt
    out in turn left its threads unequal: 1.6 times the time at two
    threads.)
    """
    cdef Py_ssize_t n_taken = tasks.shape[0] - n_dealt
    cdef uint8_t[::1] other = np.zeros(max(tasks.shape[0], 1), dtype=np.uint8)
    cdef Py_ssize_t t, s
    for t in prange(n_taken, nogil=True, schedule="dynamic", num_threads=n_threads):
        other[t] = _count_task(
            X_data, X_indices, X_indptr, entries_by_class, entry_row,
            label_weight, tasks, t, threshold, binarize, out, missing,
            allow_nan, part, part_missing,
        )
    for s in prange(
        dealt_slots(n_dealt, n_threads),
        nogil=True,
        schedule="static",
        chunksize=1,
        num_threads=n_threads,
    ):
        t = dealt_task(s, n_dealt, n_threads)
        if t < 0:
            continue
        other[n_taken + t] = _count_task(
            X_data, X_indices, X_indptr, entries_by_class, entry_row,
            label_weight, tasks, n_taken + t, threshold, binarize, out,
            missing, allow_nan, part, part_missing,
        )
    for t in range(tasks.shape[0]):
        if other[t]:
            return False
    return True


cdef inline int _add_up(
    const double[:, ::1] table,
    double[:, ::1] part,
    const intp_t[::1] part_class,
    Py_ssize_t start,
    Py_ssize_t stop,
) except -1 nogil:
    """For each class c of part_class (its rows of part one after another,
    the first s), part[s, start:stop] set to table[c, start:stop] plus all
    of c's rows of part, in order; returns whether every sum was exact:
    the table's values whole numbers, none negative (and the parts' too,
    as discrete_count_csr checks), and every total below 2**53, so that
    every partial sum, in any order, is below it too."""
    cdef Py_ssize_t first = 0, s, c, j
    cdef int exact = 1
    while first < part_class.shape[0]:
        c = part_class[first]
        exact = exact & _whole(&table[c, start], stop - start)
        for j in range(start, stop):
            part[first, j] = table[c, j] + part[first, j]
        s = first + 1
        while s < part_class.shape[0] and part_class[s] == c:
            for j in range(start, stop):
                part[first, j] = part[first, j] + part[s, j]
            s = s + 1
        for j in range(start, stop):
            exact = exact & (part[first, j] < 9007199254740992.0)
        first = s
    return exact


cdef inline int _copy_totals(
    double[:, ::1] table,
    const double[:, ::1] part,
    const intp_t[::1] part_class,
    Py_ssize_t start,
    Py_ssize_t stop,
) except -1 nogil:
    """table[c, start:stop] = _add_up's totals, for each class c of part_class."""
    cdef Py_ssize_t s, j
    for s in range(part_class.shape[0]):
        if s == 0 or part_class[s - 1] != part_class[s]:
            for j in range(start, stop):
                table[part_class[s], j] = part[s, j]
    return 0


def add_parts(
    double[:, ::1] out,
    double[:, ::1] missing,
    double[:, ::1] part,
    double[:, ::1] part_missing,
    const intp_t[::1] part_class,
    int n_threads,
):
    """Add each class's rows of part to its row of out (part_class: the
    class of each, a class's rows one after another; and of part_missing
    to missing, unless it is empty), where every sum is exact: the parts
    hold whole numbers, none negative (discrete_count_csr checks), and so
    must those rows of out and missing, each total below 2**53, so that
    every partial sum, in any order, is below it too. The totals are then
    those of discrete_count_csr's whole classes, summed in row order.
    Returns whether it added them; if not, out and missing are as they
    were. (The parts are overwritten.) A task a block of TABLE_BLOCK
    features.
    """
    cdef Py_ssize_t n_features = out.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef bint track = missing.shape[0] > 0
    cdef uint8_t[::1] exact = np.ones(max(n_blocks, 1), dtype=np.uint8)
    cdef Py_ssize_t b, start, stop
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        exact[b] = _add_up(out, part, part_class, start, stop)
        if track:
            exact[b] = exact[b] & _add_up(
                missing, part_missing, part_class, start, stop
            )
    for b in range(n_blocks):
        if not exact[b]:
            return False
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        _copy_totals(out, part, part_class, start, stop)
        if track:
            _copy_totals(missing, part_missing, part_class, start, stop)
    return True


def discrete_count_csr_blocks(
    const count_t[::1] X_data,
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
                    out[place] += fastnb_product(entry_weight[k], entry_value[k])
                elif track:
                    missing[-1 - place] += entry_weight[k]


def discrete_count_csc(
    const count_t[::1] X_data,
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
                out[label_class[e], j] += fastnb_product(
                    label_weight[e], fastnb_counted(X_data[p], threshold, binarize)
                )


cdef int _check_count_tables(
    Py_ssize_t n_samples,
    Py_ssize_t n_features,
    Py_ssize_t chunk_rows,
    Py_ssize_t block_width,
    const double[:, ::1] out,
    const double[:, ::1] missing,
    const double[:, :, ::1] chunk_counts,
) except -1:
    """discrete_count_dense's chunks must cover X's rows, and its tables be
    (n_classes, n_features), missing that or empty, chunk_counts (n_chunks
    - 1, n_classes or twice that with missing, n_features): count_dense_row
    adds a whole block of a row through a pointer, unchecked."""
    cdef Py_ssize_t n_chunks = chunk_counts.shape[0] + 1
    cdef Py_ssize_t n_classes = out.shape[0]
    cdef Py_ssize_t tables = 2 if missing.shape[0] > 0 else 1
    if chunk_rows < 1 or block_width < 1 or n_chunks * chunk_rows < n_samples:
        raise ValueError(
            f"{n_chunks} chunks of chunk_rows={chunk_rows} rows must cover the "
            f"{n_samples} rows of X, in blocks of block_width={block_width} >= 1 "
            "columns"
        )
    if out.shape[1] != n_features:
        raise ValueError(
            f"out must have a column for each of X's {n_features} features; "
            f"got {out.shape[1]}"
        )
    if missing.shape[0] > 0 and (
        missing.shape[0] != n_classes or missing.shape[1] != n_features
    ):
        raise ValueError("missing, unless it is empty, must have out's shape")
    if n_chunks > 1 and (
        chunk_counts.shape[1] != tables * n_classes
        or chunk_counts.shape[2] != n_features
    ):
        raise ValueError(
            f"chunk_counts must be ({n_chunks - 1}, {tables * n_classes}, "
            f"{n_features}); got ({chunk_counts.shape[0]}, "
            f"{chunk_counts.shape[1]}, {chunk_counts.shape[2]})"
        )
    return 0


def discrete_count_dense(
    const count_t[:, :] X,
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
    out, each other one, b, into chunk_counts[b - 1], a task a chunk and a
    block of block_width columns, which zeroes its part of the chunk's
    table first (the caller's may be uninitialised); then those are added
    to out in order, a task a block of columns. When missing values are
    counted, chunk_counts holds two tables a chunk: the counts, then the
    missing weights, [b - 1, n_classes + c, j].
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_classes = out.shape[0]
    cdef Py_ssize_t n_chunks = chunk_counts.shape[0] + 1
    cdef Py_ssize_t n_blocks = (n_features + block_width - 1) // block_width
    cdef bint track = missing.shape[0] > 0
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t x_stride = X.strides[1] // sizeof(count_t)
    cdef Py_ssize_t task, b, i, j, c, e, r, j_start, j_stop
    cdef double* sums
    cdef double* missed
    _check_count_tables(n_samples, n_features, chunk_rows, block_width, out,
                        missing, chunk_counts)
    # Static: the tasks are of equal size, so each thread gets its share
    # whichever threads wake first.
    for task in prange(
        n_chunks * n_blocks, nogil=True, schedule="static", num_threads=n_threads
    ):
        b = task // n_blocks
        j_start = (task % n_blocks) * block_width
        j_stop = min(j_start + block_width, n_features)
        if b > 0:
            for r in range(chunk_counts.shape[1]):
                fastnb_zero(&chunk_counts[b - 1, r, j_start], j_stop - j_start)
        if j_start == j_stop:
            continue
        for i in range(b * chunk_rows, min((b + 1) * chunk_rows, n_samples)):
            for e in range(label_ptr[i] if soft else i,
                           label_ptr[i + 1] if soft else i + 1):
                c = label_class[e]
                # (count_dense_row: the products rounded on their own, in
                # every variant and element type.)
                if b == 0:
                    sums = &out[c, j_start]
                    missed = &missing[c, j_start] if track else NULL
                else:
                    sums = &chunk_counts[b - 1, c, j_start]
                    missed = (
                        &chunk_counts[b - 1, n_classes + c, j_start] if track else NULL
                    )
                count_dense_row(
                    &X[i, j_start], x_stride, j_stop - j_start, label_weight[e],
                    threshold, binarize, allow_nan, sums, missed,
                )
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
# Scoring of the count families: intercept[k] + sum_j x_j table[j, k] (x_j
# binarized for BernoulliNB), by the scoring driver.
# ---------------------------------------------------------------------------

cdef struct DiscreteScoring:
    # discrete_score_csr / _dense: a feature-major table (n_rows x
    # n_padded) and, with allow_nan, the terms of a NaN (or NULL).
    const void* indptr  # CSR: X's row offsets, of X's index type
    Py_ssize_t nnz  # CSR: X's stored values
    Py_ssize_t x_row, x_stride  # dense: X's strides, in values
    Py_ssize_t n_features  # dense: X's columns
    const double* table
    Py_ssize_t n_rows  # the table's
    Py_ssize_t n_padded
    double threshold
    bint binarize
    bint non_negative
    bint missing  # NaN allowed (allow_nan)
    const double* missing_terms
    bint table_finite  # dense: no infinity or NaN in table (zeros added)


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


cdef enum:
    # A block of dense rows skips its zeros where its first row has at most
    # one nonzero in FEW_NONZEROS for each block of FASTNB_BLOCK classes
    # (_skips_zeros).
    FEW_NONZEROS = 16


cdef bint _few_nonzeros(
    const count_t* x, Py_ssize_t stride, Py_ssize_t n, Py_ssize_t n_padded
) noexcept nogil:
    """Whether the n values x[0], x[stride], ... hold at most one nonzero in
    FEW_NONZEROS for each block of FASTNB_BLOCK of the n_padded classes:
    each block of classes takes a pass over the row, which the zeros
    skipped save."""
    cdef Py_ssize_t j, nonzeros = 0
    if stride == 1:  # (a loop the compiler vectorises)
        for j in range(n):
            nonzeros += x[j] != 0
    else:
        for j in range(n):
            nonzeros += x[j * stride] != 0
    return nonzeros * FEW_NONZEROS <= n * max(1, n_padded // FASTNB_BLOCK)


cdef inline bint _skips_zeros(
    const DiscreteScoring* s, const count_t* x, Py_ssize_t first, Py_ssize_t stop
) noexcept nogil:
    """Whether a block of dense rows, first .. stop - 1, skips its zeros (the
    skip_zeros of its discrete_dense_row calls): where the table may hold
    infinity, or where the block's first row has few nonzeros. A branch on
    each value then skips much of the work and is seldom mispredicted."""
    return not s.table_finite or (
        first < stop
        and _few_nonzeros(x + first * s.x_row, s.x_stride, s.n_features, s.n_padded)
    )


def discrete_score_csr(
    const count_t[::1] X_data,
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
    cdef const count_t* data = &X_data[0] if nnz else NULL
    cdef const index_t* indices = &X_indices[0] if nnz else NULL
    cdef DiscreteScoring kernel
    kernel.missing_terms = _missing_terms(missing, table)
    kernel.indptr = &X_indptr[0]
    kernel.nnz = nnz
    kernel.table = &table[0, 0]
    kernel.n_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.threshold = threshold
    kernel.binarize = binarize
    kernel.non_negative = non_negative
    kernel.missing = allow_nan
    return score_blocks[count_t, index_t](
        _discrete_csr_rows[count_t, index_t], &kernel, data, indices, &X_indptr[0],
        n_samples, intercept, n_padded,
        "has a column outside the table or an offset past the stored values",
        output, out, labels, scratch, n_threads,
    )


def discrete_score_dense(
    const count_t[:, :] X,
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
    bint table_finite=False,
):
    """Score dense rows against a feature-major table; a scratch block a thread.

    missing and the value returned as discrete_score_csr's. table_finite:
    whether every value of table is finite, so that a zero may be added as
    any value, times the table, without a branch (FASTNB_DISCRETE_DENSE_ROW;
    by default zeros are skipped, which any table allows); a wrong True
    makes a zero times infinity NaN in the scores, never reads out of
    bounds.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_padded = table.shape[1]
    cdef DiscreteScoring kernel
    kernel.missing_terms = _missing_terms(missing, table)
    kernel.x_row = X.strides[0] // sizeof(count_t)
    kernel.x_stride = X.strides[1] // sizeof(count_t)
    kernel.n_features = X.shape[1]
    kernel.table = &table[0, 0]
    kernel.n_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.threshold = threshold
    kernel.binarize = binarize
    kernel.non_negative = non_negative
    kernel.missing = allow_nan
    kernel.table_finite = table_finite
    return score_blocks[count_t, int32_t](
        _discrete_dense_rows[count_t], &kernel, _dense_values(X), NULL, NULL,
        n_samples, intercept, n_padded, "has a column outside the table", output, out,
        labels, scratch, n_threads,
    )
