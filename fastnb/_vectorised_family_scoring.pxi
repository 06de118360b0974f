# Included by _vectorised.pyx: the scores of GaussianNB, CategoricalNB and
# KernelDensityNB.

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
