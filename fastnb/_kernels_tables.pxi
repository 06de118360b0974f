# Included by _kernels.pyx: Gaussian moments merged and pooled, and the tables of the
# Gaussian and count families.

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


# ---------------------------------------------------------------------------
# Tables of the count families, from their statistics (fastnb._discrete):
# the public class-major attribute (n_classes, n_features) and the
# feature-major scoring table (n_features, n_padded), whose class padding
# the caller has zeroed, written together.  Threads take blocks of
# TABLE_BLOCK features, an equal run of blocks a thread (static: handed out
# a block at a time, the threads that woke first took most of them, 6 of 16
# threads busy in ComplementNB's fit of 130,107 features).  A sum over the
# features of a class is taken per
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


cdef inline int _zero_padding(
    double[:, ::1] table, Py_ssize_t n_classes, Py_ssize_t start, Py_ssize_t stop
) except -1 nogil:
    """table[start:stop, n_classes:] = 0: the padding columns of a block of
    a count family's scoring table's rows (new_tables leaves them unset, so
    that the threads zero them rather than the main thread)."""
    cdef Py_ssize_t j, c
    for j in range(start, stop):
        for c in range(n_classes, table.shape[1]):
            table[j, c] = 0
    return 0


def multinomial_tables(
    const double[:, ::1] feature_count,
    const double[:] pseudo,
    double[:, ::1] table,
    int n_threads,
):
    """table[j, c] = log(N_cj + a_j) - log(sum_j' (N_cj' + a_j')), its
    padding columns zeroed; a = pseudo. (The class-major attribute is the
    table's transpose, built when read: fastnb._discrete.class_major.)"""
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
                    table[j, c] = value - log_total[c]
        _zero_padding(table, n_classes, start, stop)


def complement_tables(
    const double[:, ::1] feature_count,
    const double[:] alpha,
    bint norm,
    double[::1] feature_all,
    double[:, ::1] table,
    int n_threads,
):
    """Complement NB's weights, table[j, c] the weight of class c and
    feature j, its padding columns zeroed (the class-major attribute is its
    transpose, built when read).

    feature_all[j] = sum_c N_cj; with the complement counts M_cj =
    feature_all[j] + a_j - N_cj, logged = log(M_cj) - log(sum_j' M_cj'),
    and the weights are -logged, or with norm logged / sum_j' logged_cj'.
    Where N_cj is 0 (most entries of text), M_cj is feature_all[j] + a_j
    in every such class, whose log is taken once a feature.
    """
    cdef Py_ssize_t n_classes = feature_count.shape[0]
    cdef Py_ssize_t n_features = feature_count.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef double[::1] class_sums = np.empty(n_classes)
    cdef double[::1] log_whole = np.empty(n_features)
    cdef Py_ssize_t tile_rows = _tile_rows(table.shape[1])
    cdef Py_ssize_t b, c, j, q, start, stop, tile
    cdef double total, value, count
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
    for c in range(n_classes):
        class_sums[c] = log(class_sums[c])
    block_sums[:, :] = 0.0
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        for j in range(start, stop):
            log_whole[j] = log(feature_all[j] + alpha[j])
        # Tiles of features whose table rows stay in cache over the classes.
        for q in range((stop - start + tile_rows - 1) // tile_rows):
            tile = start + q * tile_rows
            for c in range(n_classes):
                for j in range(tile, min(tile + tile_rows, stop)):
                    count = feature_count[c, j]
                    if count == 0.0:
                        value = log_whole[j] - class_sums[c]
                    else:
                        value = log((feature_all[j] + alpha[j]) - count) - class_sums[c]
                    block_sums[b, c] += value
                    table[j, c] = value if norm else -value
        _zero_padding(table, n_classes, start, stop)
    if not norm:
        return
    sum_blocks(block_sums, class_sums)
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        for q in range((stop - start + tile_rows - 1) // tile_rows):
            tile = start + q * tile_rows
            for j in range(tile, min(tile + tile_rows, stop)):
                for c in range(n_classes):
                    table[j, c] = table[j, c] / class_sums[c]


cdef double[:, ::1] _bernoulli_small_terms(
    const double[:] pseudo_on, const double[:] log_seen
):
    """For each class c and whole count k below SMALL_COUNTS, log p =
    log(k + a) - log_seen[c] and log(1 - p), in rows 2c and 2c + 1, where
    pseudo_on is one value a for every feature (a stride-0 view, as
    _small_logs needs) and log_seen has a value a class; else empty. The
    same operations on the same values as bernoulli_tables' own, so bit for
    bit what it would compute."""
    cdef double[::1] small_logs = _small_logs(pseudo_on)
    cdef Py_ssize_t n_classes = log_seen.shape[0]
    cdef double[:, ::1] terms
    cdef Py_ssize_t c, k
    cdef double value
    if small_logs.shape[0] == 0 or n_classes == 0:
        return np.empty((0, SMALL_COUNTS))
    terms = np.empty((2 * n_classes, SMALL_COUNTS))
    for c in range(n_classes):
        for k in range(SMALL_COUNTS):
            value = small_logs[k] - log_seen[c]
            terms[2 * c, k] = value
            terms[2 * c + 1, k] = log(1.0 - exp(value))
    return terms


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
    missing value (the tables' padding columns zeroed). Where p = 1 (no
    smoothing), log(1 - p) = -inf: such a feature is certain (certain[c, j]
    = 1, which the caller has zeroed), left out of the sums and the tables
    (its log(1 - p) taken as 0) and checked apart.

    Where the smoothing is one value for every feature and nothing is
    missing (N_c and total_j the same for every j), a class's log p and
    log(1 - p) for whole counts below SMALL_COUNTS, nearly every count of
    text, come from a table of them (_bernoulli_small_terms): three of
    libm's logs and exps an entry took most of a fit's time.
    """
    cdef Py_ssize_t n_classes = feature_count.shape[0]
    cdef Py_ssize_t n_features = feature_count.shape[1]
    cdef Py_ssize_t n_blocks = table_blocks(n_features)
    cdef double[:, ::1] block_sums = np.zeros((n_blocks, n_classes))
    cdef intp_t[::1] block_certain = np.zeros(n_blocks, dtype=np.intp)
    cdef bint track = missing.shape[0] > 0
    cdef bint uniform = (
        class_count.strides[1] == 0 and pseudo_total.strides[0] == 0 and n_features
    )
    cdef double[::1] log_seen = np.empty(n_classes if uniform else 0)
    cdef double[:, ::1] small
    cdef Py_ssize_t tile_rows = _tile_rows(table.shape[1])
    cdef Py_ssize_t b, c, j, k, q, start, stop, tile
    cdef double count, value, absent
    for c in range(log_seen.shape[0]):
        log_seen[c] = log(class_count[c, 0] + pseudo_total[0])
    small = _bernoulli_small_terms(pseudo_on, log_seen)
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        start = b * TABLE_BLOCK
        stop = min(start + TABLE_BLOCK, n_features)
        # Tiles of features whose table rows stay in cache over the classes.
        for q in range((stop - start + tile_rows - 1) // tile_rows):
            tile = start + q * tile_rows
            for c in range(n_classes):
                for j in range(tile, min(tile + tile_rows, stop)):
                    count = feature_count[c, j]
                    k = <int> count if 0.0 <= count < SMALL_COUNTS else -1
                    if small.shape[0] and k >= 0 and k == count:
                        value = small[2 * c, k]
                        absent = small[2 * c + 1, k]
                    else:
                        value = log(count + pseudo_on[j]) - log(
                            class_count[c, j] + pseudo_total[j]
                        )
                        absent = log(1.0 - exp(value))
                    log_prob[c, j] = value
                    if absent == -INFINITY:
                        certain[c, j] = 1
                        block_certain[b] += 1
                        absent = 0.0
                    block_sums[b, c] += absent
                    table[j, c] = value - absent
                    if track:
                        missing[j, c] = -absent
        _zero_padding(table, n_classes, start, stop)
        if track:
            _zero_padding(missing, n_classes, start, stop)
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
    missing[j, c] = rate[c, j], the term of a missing value (the tables'
    padding columns zeroed).

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
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
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
        _zero_padding(table, n_classes, start, stop)
        if track:
            _zero_padding(missing, n_classes, start, stop)
    sum_blocks(block_sums, rate_sums)
