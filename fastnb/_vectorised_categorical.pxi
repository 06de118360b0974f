# Included by _vectorised.pyx: CategoricalNB's scores and terms.

# ---------------------------------------------------------------------------
# Categorical scoring
# ---------------------------------------------------------------------------

cdef struct CategoricalScoring:
    # categorical_score_dense / _csr: a table of a row a (feature, category),
    # feature j's from offsets[j] (n_offsets = n_features + 1).
    const void* indptr  # CSR: X's row offsets, of X's index type
    Py_ssize_t nnz  # CSR: X's stored values
    Py_ssize_t x_row, x_stride  # dense: X's strides, in values
    Py_ssize_t n_features
    const intp_t* offsets
    Py_ssize_t n_offsets
    const double* table
    Py_ssize_t n_rows
    Py_ssize_t n_padded
    bint every_feature  # CSR: see categorical_score_csr
    bint missing


def categorical_score_dense(
    const code_t[:, :] X,
    const intp_t[::1] offsets,
    const double[:, ::1] table,
    const double[::1] intercept,
    bint missing,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
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
    kernel.x_stride = X.strides[1] // sizeof(code_t)
    kernel.n_features = n_features
    kernel.offsets = &offsets[0]
    kernel.n_offsets = offsets.shape[0]
    kernel.table = &table[0, 0]
    kernel.n_rows = table.shape[0]
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
    bint missing,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
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
    kernel.n_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.every_feature = every_feature
    kernel.missing = missing
    return score_blocks[code_t, index_t](
        _categorical_csr_rows[code_t, index_t], &kernel, data, indices, &X_indptr[0],
        n_samples, intercept, n_padded,
        "has a category code outside the table or an offset past the stored values",
        output, out, labels, scratch, n_threads,
    )


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
