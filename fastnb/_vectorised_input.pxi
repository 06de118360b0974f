# Included by _vectorised.pyx: X's values checked before counting, and the
# reading of a class's CSR rows that counting and moments share.


# ---------------------------------------------------------------------------
# Values.  X's values are checked by the parallel kernels that read them:
# here before counting (a fit must not count a refused value into the
# model), as they are scored otherwise.
# ---------------------------------------------------------------------------

cdef inline bint _values_refused(
    const count_t* x, Py_ssize_t n, bint non_negative, bint allow_nan
) noexcept nogil:
    """Whether any of the n values at x is refused (fastnb_refused), by the
    vectorised test of _rows.h."""
    if count_t is double:
        return fastnb_row_refused_double(x, 1, n, non_negative, allow_nan)
    elif count_t is float:
        return fastnb_row_refused_float(x, 1, n, non_negative, allow_nan)
    elif count_t is int64_t:
        return fastnb_row_refused_int64_t(x, 1, n, non_negative, allow_nan)
    elif count_t is int32_t:
        return fastnb_row_refused_int32_t(x, 1, n, non_negative, allow_nan)
    else:
        return fastnb_row_refused_uint8_t(x, 1, n, non_negative, allow_nan)


def first_refused_value(
    const count_t[::1] values,
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


def zero_values(double[::1] values, int n_threads):
    """values[:] = 0, a chunk of VALUE_CHUNK a task: a new table of
    statistics zeroed by the threads, not by a memset of the main thread
    (fastnb._threads.zeroed)."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
    cdef Py_ssize_t b, start
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * VALUE_CHUNK
        fastnb_zero(&values[start], min(VALUE_CHUNK, n - start))


# ---------------------------------------------------------------------------
# A class's CSR rows, read in turn (the count families' sums and GaussianNB's
# moments).
# ---------------------------------------------------------------------------


cdef enum:
    # The kernels that take a class's CSR rows in turn fetch the values and
    # indices of the row this many ahead: the rows of a class are scattered
    # through X, so each would start with a wait on memory (2 and 4 measured
    # the same, 15% off MultinomialNB's counting).
    ROWS_AHEAD = 2


cdef inline int _fetch_row(
    const count_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    Py_ssize_t i,
) except -1 nogil:
    """Fetch the cache lines of CSR row i's stored values and indices."""
    cdef Py_ssize_t start = X_indptr[i], stop = X_indptr[i + 1]
    if start < stop:
        fastnb_prefetch(&X_data[start], (stop - start) * sizeof(count_t))
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
