# Included by _kernels.pyx: GaussianNB's moments merged and pooled, and its
# tables.


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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
