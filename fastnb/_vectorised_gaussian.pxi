# Included by _vectorised.pyx: GaussianNB's moments and scores.

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
    # An F-order X is copied a tile at a time, TILE_ROWS rows of at most
    # TILE_COLUMNS columns, into rows of a thread's own (32 KiB of float64),
    # and added row by row as a C-order X is.
    TILE_ROWS = 64
    TILE_COLUMNS = 64


cdef int _check_moment_tables(
    Py_ssize_t n_samples,
    Py_ssize_t n_features,
    Py_ssize_t chunk_rows,
    const double[:, ::1] weight,
    const double[:, :, ::1] observed,
    const double[:, :, ::1] mean,
    const double[:, :, ::1] ssd,
) except -1:
    """gaussian_moments_dense's chunks must cover X's rows, and their tables
    be (n_chunks, classes) and (n_chunks, classes, n_features), observed
    that or empty: the kernel adds whole rows of X into them."""
    cdef Py_ssize_t n_chunks = mean.shape[0]
    if chunk_rows < 1 or n_chunks < 1 or n_chunks * chunk_rows < n_samples:
        raise ValueError(
            f"{n_chunks} chunks of chunk_rows={chunk_rows} rows must cover the "
            f"{n_samples} rows of X"
        )
    shape = (n_chunks, weight.shape[1], n_features)
    if weight.shape[0] != n_chunks or _shape(mean) != shape:
        raise ValueError(
            f"weight and mean must be ({n_chunks}, n_classes) and ({n_chunks}, "
            f"n_classes, {n_features}); got ({weight.shape[0]}, "
            f"{weight.shape[1]}) and {_shape(mean)}"
        )
    if _shape(ssd) != shape or (observed.shape[0] > 0 and _shape(observed) != shape):
        raise ValueError("ssd, and observed unless it is empty, must have mean's shape")
    return 0


cdef tuple _shape(const double[:, :, ::1] table):
    return (table.shape[0], table.shape[1], table.shape[2])


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

    The chunks' tables are zeroed first, on the threads (the caller's may
    be uninitialised). A task is a chunk of chunk_rows rows, written to
    weight[b] (the weight of each class in the chunk), mean[b] and ssd[b];
    then, in the same parallel region, the chunks are merged, pairwise in
    order, a task an entry (class, feature), so the result does not depend
    on the number of threads. For
    a model with missing="ignore", observed has mean's shape and gets the
    weight of each entry's values that are not NaN (a NaN is left out of
    its entry's moments); otherwise it is empty, and NaN makes the moments
    NaN. Each entry's values are added in row order by the same steps for
    either order of X: the moments of an F-order X are those of its C-order
    copy, bit for bit.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_classes = weight.shape[1]
    cdef Py_ssize_t n_chunks = mean.shape[0]
    cdef bint rows_contiguous = X.strides[1] == sizeof(floating) or n_features <= 1
    cdef bint ignore = observed.shape[0] > 0
    cdef Py_ssize_t row_bytes = n_features * sizeof(floating)
    cdef Py_ssize_t ahead = max(1, STREAM_AHEAD // max(row_bytes, 1))
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t b, e, i, j, c, start, stop, q
    cdef Py_ssize_t t, block, first, width, tile, rows, r
    cdef double w, m
    _check_moment_tables(
        n_samples, n_features, chunk_rows, weight, observed, mean, ssd
    )
    # Each thread's tile of an F-order X.
    cdef Py_ssize_t n_tiles = 0 if rows_contiguous else n_threads
    cdef floating[:, :, ::1] tiles = np.empty(
        (n_tiles, TILE_ROWS, TILE_COLUMNS),
        dtype=np.float64 if floating is double else np.float32,
    )
    # One parallel region: the chunks' moments, then (past the end of the
    # first prange, which every thread reaches before any goes on) their
    # merge, the threads woken once.
    with nogil, parallel(num_threads=n_threads):
        # Static: the chunks have equal rows, so each thread gets its share
        # whichever threads wake first.
        for b in prange(n_chunks, schedule="static"):
            fastnb_zero(&weight[b, 0], n_classes)
            for c in range(n_classes):
                fastnb_zero(&mean[b, c, 0], n_features)
                fastnb_zero(&ssd[b, c, 0], n_features)
                if ignore:
                    fastnb_zero(&observed[b, c, 0], n_features)
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
                # A block of columns at a time, its rows copied a tile at a time
                # into rows of the thread's own; the class weights are counted
                # again for each block, ending with the chunk's.
                t = threadid()
                for block in range((n_features + TILE_COLUMNS - 1) // TILE_COLUMNS):
                    first = block * TILE_COLUMNS
                    width = min(TILE_COLUMNS, n_features - first)
                    for c in range(n_classes):
                        weight[b, c] = 0.0
                    for tile in range((stop - start + TILE_ROWS - 1) // TILE_ROWS):
                        i = start + tile * TILE_ROWS
                        rows = min(TILE_ROWS, stop - i)
                        for r in range(rows):
                            for j in range(width):
                                tiles[t, r, j] = X[i + r, first + j]
                        for r in range(rows):
                            for q in range(label_ptr[i + r] if soft else i + r,
                                           label_ptr[i + r + 1] if soft else i + r + 1):
                                w = label_weight[q]
                                if w > 0.0:
                                    c = label_class[q]
                                    weight[b, c] += w
                                    if ignore:
                                        _welford_row_observed(
                                            &tiles[t, r, 0], width, w,
                                            &observed[b, c, first], &mean[b, c, first],
                                            &ssd[b, c, first],
                                        )
                                    else:
                                        _welford_row(
                                            &tiles[t, r, 0], width, w, w / weight[b, c],
                                            &mean[b, c, first], &ssd[b, c, first],
                                        )
        # A task an entry (class, feature) of the merge: chunks are many,
        # classes and features can be few.
        if n_chunks > 1:
            for e in prange(n_classes * n_features, schedule="static"):
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
        for c in range(n_classes):
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
    # thread in row order, whatever the blocks (fastnb._plans.feature_blocks).
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
    # gaussian_score_dense: theta and inv_var (n_rows x n_padded);
    # gaussian_score_csr: one table ((n_rows + 1) x 4 x n_padded).  With
    # missing, log_var (n_rows x n_padded), else NULL.
    const void* indptr  # CSR: X's row offsets, of X's index type
    Py_ssize_t nnz  # CSR: X's stored values
    Py_ssize_t x_row, x_stride  # dense: X's strides, in values
    Py_ssize_t n_features  # dense: X's columns
    const double* theta
    const double* inv_var
    const double* table
    const double* log_var
    Py_ssize_t n_rows
    Py_ssize_t n_padded
    bint missing


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
    kernel.x_stride = X.strides[1] // sizeof(floating)
    kernel.n_features = X.shape[1]
    kernel.theta = &theta[0, 0]
    kernel.inv_var = &inv_var[0, 0]
    kernel.log_var = &log_var[0, 0] if log_var.shape[0] else NULL
    kernel.n_rows = theta.shape[0]
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
    kernel.n_rows = table.shape[0] - 1
    kernel.n_padded = n_padded
    kernel.missing = log_var.shape[0] > 0
    return score_blocks[floating, index_t](
        _gaussian_csr_rows[floating, index_t], &kernel, data, indices, &X_indptr[0],
        n_samples, intercept, n_padded,
        "has a column outside the table or an offset past the stored values",
        output, out, labels, scratch, n_threads,
    )
