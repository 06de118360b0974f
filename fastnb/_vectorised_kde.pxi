# Included by _vectorised.pyx: KernelDensityNB's scores.

# ---------------------------------------------------------------------------
# Kernel density scoring
# ---------------------------------------------------------------------------

cdef struct KdeScoring:
    # kde_score_dense: interpolated log-density tables of floats
    # (n_rows x n_points_max x n_padded) on each feature's lattice (origin,
    # inv_step, n_points), and the tails beyond them.
    Py_ssize_t x_row, x_stride  # X's strides, in values
    Py_ssize_t n_features
    const float* table
    Py_ssize_t n_points_max
    const double* origin
    const double* inv_step
    const intp_t* n_points
    const double* tails
    Py_ssize_t n_rows
    Py_ssize_t n_padded
    bint missing


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
    kernel.x_stride = X.strides[1] // sizeof(floating)
    kernel.n_features = X.shape[1]
    kernel.table = &table[0, 0, 0]
    kernel.n_points_max = table.shape[1]
    kernel.origin = &origin[0]
    kernel.inv_step = &inv_step[0]
    kernel.n_points = &n_points[0]
    kernel.tails = &tails[0, 0, 0]
    kernel.n_rows = table.shape[0]
    kernel.n_padded = n_padded
    kernel.missing = missing
    return score_blocks[floating, int32_t](
        _kde_dense_rows[floating], &kernel, _dense_values(X), NULL, NULL,
        n_samples, intercept, n_padded, "has a column outside the table", output, out,
        labels, scratch, n_threads,
    )
