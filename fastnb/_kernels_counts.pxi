# Included by _kernels.pyx: the count families' tables.

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
