# Included by _kernels.pyx: CategoricalNB's counts of dense and sparse codes, and its
# tables.

# ---------------------------------------------------------------------------
# Categorical tables.  All features share one feature-major table: feature j
# owns rows offsets[j] .. offsets[j + 1] - 1, one per category code, and its
# last row stands for every code never seen in training (codes are clamped
# to it when scoring).
#
# Fitting reads X once.  Rows are taken in chunks (fixed by the data's
# shape), each counted into its own table, laid out for the largest codes
# the chunk has shown so far: a code within them is counted at once, any
# other checked (a whole number below max_categories) and, if good, the
# table widened for it.  The chunks' tables are then added up in chunk
# order, so the counts do not depend on the number of threads.  A chunk
# whose table outgrows its room only checks its codes from there on, and X
# is then counted again into tables laid out for the largest codes of all
# (categorical_count_dense).  The kernels that read X report the first bad
# code, in row-major order, for Python to raise on.
# ---------------------------------------------------------------------------

cdef enum:
    # Codes at the start of a chunk checked together to lay its table out,
    # and at least this many rows: every code found later that is larger
    # than its feature's moves the table (2,000 features laid out from 2
    # rows took 0.6 s to count 2,000 rows of 5 codes).
    CODE_BLOCK = 4096
    LAYOUT_ROWS = 64


cdef inline int _chunk_layout(
    const code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    Py_ssize_t b,
    Py_ssize_t n_classes,
) except -1 nogil:
    """Lay chunk b's table out for codes up to highest[b]; 0 if it has no room.

    Feature j's counts, a row of n_classes per code, run from tables[b,
    layout[b, j]] to tables[b, layout[b, j + 1]].  A layout for smaller
    codes is widened in place: features move up, the last first and each
    from its end (so nothing is overwritten before it is moved), and their
    new rows are zeroed.
    """
    cdef Py_ssize_t n_features = highest.shape[1]
    cdef Py_ssize_t room = tables.shape[1]
    cdef Py_ssize_t j, k, size, old_start, old_end, new_end
    cdef Py_ssize_t total = 0
    cdef bint wider = False
    for j in range(n_features):
        # Checked before multiplying or adding, so nothing overflows.
        if highest[b, j] >= room // n_classes:
            return 0
        size = (<Py_ssize_t> highest[b, j] + 1) * n_classes
        if size > room - total:
            return 0
        total += size
        wider = wider or size != layout[b, j + 1] - layout[b, j]
    if not wider:
        return 1
    old_end, new_end = layout[b, n_features], total
    for j in range(n_features - 1, -1, -1):
        size = (<Py_ssize_t> highest[b, j] + 1) * n_classes
        old_start = layout[b, j]
        # Not libc's memset (nor memmove): it left a new table's rows out of
        # cache, each then a miss in the count (measured on AMD Zen).
        for k in range(old_end - old_start - 1, -1, -1):
            tables[b, new_end - size + k] = tables[b, old_start + k]
        if size > old_end - old_start:
            fastnb_zero(
                &tables[b, new_end - size + old_end - old_start],
                size - (old_end - old_start),
            )
        layout[b, j + 1] = new_end
        old_end, new_end = old_start, new_end - size
    return 1


cdef inline bint _fit_code(code_t x, int64_t limit) noexcept nogil:
    """Whether x is a code a fit takes: a whole number from 0 to limit - 1."""
    if code_t is float or code_t is double:
        # In double: a float32 would round a limit past 2^24.
        return x >= 0 and <double> x < <double> limit and fastnb_whole(x)
    else:
        return x >= 0 and x < limit


cdef enum:
    # What _check_count_rows met.
    ALL_COUNTED = 0
    BAD_CODE = 1
    NO_ROOM = 2


cdef inline int _check_count_rows(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    Py_ssize_t n_classes,
    int64_t limit,
    Py_ssize_t start,
    Py_ssize_t stop,
    code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    Py_ssize_t b,
    bint missing,
    Py_ssize_t* where,
) except -1 nogil:
    """Count rows start .. stop - 1 into chunk b's table, checking each code.

    A code from 0 to highest[b, j] is counted at once; any other is
    checked: a bad one stops the count (BAD_CODE, its flat position in
    where), a larger good one raises highest[b, j] and widens the table,
    unless that has no room (NO_ROOM, the row in where: the rows before it
    are counted).  No sample_weight means unit weights; with missing, a NaN
    is a missing value, not counted.
    """
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(code_t)
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    cdef bint weighted = sample_weight.shape[0] > 0
    cdef Py_ssize_t i = start, j = 0, position
    cdef code_t x
    while i < stop:
        position = categorical_count_rows(
            &X[i, 0], row_stride, stride, stop - i, n_features, j, &y[i],
            &sample_weight[i] if weighted else NULL, &highest[b, 0], &layout[b, 0],
            n_classes, &tables[b, 0], tables.shape[1], missing,
        )
        if position == -1:
            break
        if position < 0:
            with gil:
                raise IndexError(
                    f"row {i - 2 - position} has a class or code outside the table"
                )
        i, j = i + position // n_features, position % n_features
        x = X[i, j]
        if not _fit_code(x, limit):
            where[0] = i * n_features + j
            return BAD_CODE
        highest[b, j] = x
        if not _chunk_layout(highest, layout, tables, b, n_classes):
            where[0] = i
            return NO_ROOM
        tables[b, layout[b, j] + (<Py_ssize_t> x) * n_classes + y[i]] += (
            sample_weight[i] if weighted else 1.0
        )
        j += 1
    return ALL_COUNTED


cdef inline Py_ssize_t _check_count_chunk(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    Py_ssize_t n_classes,
    int64_t limit,
    Py_ssize_t start,
    Py_ssize_t stop,
    code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    Py_ssize_t b,
    double[:, ::1] class_weight,
    bint missing,
) except -2 nogil:
    """Check and count rows start .. stop - 1 as chunk b; the first bad code or -1.

    See categorical_check_count_dense.
    """
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(code_t)
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    cdef bint weighted = sample_weight.shape[0] > 0
    cdef Py_ssize_t i, j, bad, where = start
    cdef int status = NO_ROOM
    for j in range(n_features):
        highest[b, j] = -1
        layout[b, j] = 0
    layout[b, n_features] = 0
    # The first block's codes lay the table out (widened one code at a
    # time, it would be moved once for each feature).
    bad = categorical_check_rows(
        &X[start, 0], row_stride, stride,
        min(max(LAYOUT_ROWS, CODE_BLOCK // n_features), stop - start),
        n_features, limit, missing, &highest[b, 0],
    )
    if bad >= 0:
        return start * n_features + bad
    if _chunk_layout(highest, layout, tables, b, n_classes):
        status = _check_count_rows(
            X, y, sample_weight, n_classes, limit, start, stop, highest, layout,
            tables, b, missing, &where,
        )
    if status == BAD_CODE:
        return where
    if status == NO_ROOM:
        # Only checked, from the row that found no room on.
        layout[b, n_features] = -1
        bad = categorical_check_rows(
            &X[where, 0], row_stride, stride, stop - where, n_features, limit,
            missing, &highest[b, 0],
        )
        if bad >= 0:
            return where * n_features + bad
    # (After the count, which refuses a class outside the table first.)
    for j in range(n_classes):
        class_weight[b, j] = 0.0
    for i in range(start, stop):
        class_weight[b, y[i]] += sample_weight[i] if weighted else 1.0
    return -1


def categorical_check_count_dense(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    int64_t limit,
    Py_ssize_t n_classes,
    Py_ssize_t chunk_rows,
    code_t[:, ::1] highest,
    intp_t[:, ::1] layout,
    double[:, ::1] tables,
    double[:, ::1] class_weight,
    int64_t[::1] sizes,
    intp_t[::1] offsets,
    double[::1] class_count,
    bint missing,
    int n_threads,
):
    """Check the codes of a fit and count each chunk of rows into its own table.

    Returns ``(bad, all_counted)``: the flat position i * n_features + j of
    the first code (in row-major order) that is not a whole number from 0
    to limit - 1 (at most 2^53), or -1; and whether every chunk's counts
    had room in its table.  Then highest[b] holds chunk b's largest code of
    each feature, and tables[b] its counts as layout[b] lays them out (see
    _chunk_layout), unless they had no room: then layout[b, -1] is -1; and
    class_weight[b] (n_chunks, n_classes) the weight of each class's rows
    of the chunk, summed in row order.  Chunk b is the chunk_rows rows from
    b * chunk_rows; no sample_weight means unit weights.  With missing
    (missing="ignore"), a NaN is a missing value: neither refused nor
    counted.

    Unless a code is bad, the chunks' figures are then added up (O(chunks
    x features), on the calling thread, where NumPy's calls each cost as
    much): sizes (each feature's least number of categories, given) rises
    to each feature's largest code + 1; offsets (n_features + 1) gets the
    first row of each feature's categories in a table of them all, and
    the end; class_count each class's weight, over the chunks in order.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_chunks = tables.shape[0]
    cdef Py_ssize_t n_codes = n_samples * X.shape[1]
    # The first bad code each thread met: a thread gets its chunks in
    # increasing order, so it stops after its first, and the least of them
    # is the first of all.
    cdef intp_t[::1] first_bad = np.full(n_threads, n_codes, dtype=np.intp)
    cdef Py_ssize_t b, t, j, c, bad
    cdef bint all_counted = True
    if (
        highest.shape[0] != n_chunks
        or highest.shape[1] != n_features
        or layout.shape[0] != n_chunks
        or layout.shape[1] != n_features + 1
        or class_weight.shape[0] != n_chunks
        or class_weight.shape[1] != n_classes
        or sizes.shape[0] != n_features
        or offsets.shape[0] != n_features + 1
        or class_count.shape[0] != n_classes
    ):
        raise IndexError(
            f"the chunks' or the sums' arrays are out of bounds of {n_chunks} "
            f"chunks, {n_features} features and {n_classes} classes"
        )
    # Static: the chunks have equal rows, so each thread gets its share
    # whichever threads wake first.
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        t = threadid()
        if first_bad[t] == n_codes:
            bad = _check_count_chunk(
                X, y, sample_weight, n_classes, limit, b * chunk_rows,
                min((b + 1) * chunk_rows, n_samples), highest, layout, tables, b,
                class_weight, missing,
            )
            if bad >= 0:
                first_bad[t] = bad
    bad = n_codes
    for t in range(n_threads):
        bad = min(bad, first_bad[t])
    if bad < n_codes:
        return bad, False
    for c in range(n_classes):
        class_count[c] = 0.0
    offsets[0] = 0
    for b in range(n_chunks):
        all_counted = all_counted and layout[b, n_features] >= 0
        for c in range(n_classes):
            class_count[c] += class_weight[b, c]
        for j in range(n_features):
            # (A feature whose codes are all NaN has highest -1.)
            sizes[j] = max(sizes[j], <int64_t> highest[b, j] + 1)
    for j in range(n_features):
        offsets[j + 1] = offsets[j] + sizes[j]
    return -1, all_counted


def categorical_count_dense(
    const code_t[:, :] X,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    Py_ssize_t n_classes,
    const code_t[::1] highest,
    const intp_t[::1] layout,
    Py_ssize_t chunk_rows,
    double[:, ::1] tables,
    Py_ssize_t block_width,
    bint missing,
    int n_threads,
):
    """Count codes from 0 to highest[j] into each chunk's table, laid out by layout.

    tables[b, layout[j] + X[i, j] * n_classes + y[i]] += w[i] over the rows
    i of chunk b (chunk_rows rows from b * chunk_rows); a task is a chunk
    and a block of block_width columns.  No sample_weight means unit
    weights; with missing, a NaN is not counted.  A code outside 0 ..
    highest[j] raises IndexError (a checked X has none).
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0] // sizeof(code_t)
    cdef Py_ssize_t stride = X.strides[1] // sizeof(code_t)
    cdef Py_ssize_t n_blocks = (n_features + block_width - 1) // block_width
    cdef bint weighted = sample_weight.shape[0] > 0
    # A chunk with a code or class outside the table, for each thread.
    cdef intp_t[::1] outside = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t task, b, j, start, stop, position
    # Static: the tasks have about equal codes.
    for task in prange(
        tables.shape[0] * n_blocks,
        nogil=True,
        schedule="static",
        num_threads=n_threads,
    ):
        b = task // n_blocks
        j = (task % n_blocks) * block_width
        start = b * chunk_rows
        stop = min(start + chunk_rows, n_samples)
        position = -1
        if start < stop:
            position = categorical_count_rows(
                &X[start, j], row_stride, stride, stop - start,
                min(block_width, n_features - j), 0, &y[start],
                &sample_weight[start] if weighted else NULL, &highest[j],
                &layout[j], n_classes, &tables[b, 0], tables.shape[1], missing,
            )
        if position != -1:
            outside[threadid()] = b
    if np.max(outside) >= 0:
        raise IndexError(
            f"chunk {np.max(outside)} has a category code or class outside the table"
        )


def categorical_merge_counts(
    const double[:, ::1] tables,
    const intp_t[:, ::1] layout,
    const intp_t[::1] offsets,
    double[:, ::1] out,
    const double[::1] class_count,
    double[:, :] scratch,
    int n_threads,
):
    """Add the chunks' tables up, in chunk order, into out; a task a block of
    out's rows (equal blocks, whatever the features' numbers of categories).

    Chunk b's counts of feature j run from tables[b, layout[b, j]] to
    tables[b, layout[b, j + 1]], a row of classes per code from 0, and go to
    out's rows from offsets[j].

    With class_count (a sparse X's class weights; empty for dense codes),
    each feature's implicit zeros are then added to its code 0, as
    categorical_add_zeros adds them (scratch: a row a thread, a column a
    class), a task a feature: in the same parallel region as the merge,
    after it, so that the threads are woken once.
    """
    cdef Py_ssize_t n_rows = out.shape[0]
    cdef Py_ssize_t n_classes = out.shape[1]
    cdef Py_ssize_t n_features = offsets.shape[0] - 1
    cdef Py_ssize_t n_blocks = min(n_rows, 4 * n_threads)
    cdef bint zeros = class_count.shape[0] > 0
    cdef Py_ssize_t task, r, j, a, b, c, start, low, high, middle, feature
    # The tasks read by out's rows: a chunk's counts that fall outside them
    # (or outside its table) would be left out unseen, so they are refused
    # first, O(chunks x features).
    if offsets.shape[0] < 1 or offsets[0] < 0 or offsets[n_features] > n_rows:
        raise IndexError("offsets run out of bounds of out's rows")
    for j in range(n_features):
        if offsets[j + 1] < offsets[j]:
            raise IndexError(f"offsets decrease at feature {j}: out of bounds")
    if layout.shape[0] != tables.shape[0] or layout.shape[1] != n_features + 1:
        raise IndexError("layout's shape is out of bounds of the tables'")
    for b in range(tables.shape[0]):
        for j in range(n_features):
            if not (
                0 <= layout[b, j] <= layout[b, j + 1] <= tables.shape[1]
                and layout[b, j + 1] - layout[b, j]
                <= (offsets[j + 1] - offsets[j]) * n_classes
            ):
                raise IndexError(
                    f"chunk {b}'s counts of feature {j} run out of bounds of its "
                    "table or of out's rows"
                )
    if zeros and (
        class_count.shape[0] != n_classes
        or scratch.shape[0] < n_threads
        or scratch.shape[1] < n_classes
    ):
        raise ValueError(
            f"class_count must hold the {n_classes} classes and scratch a row of "
            f"them for each of {n_threads} threads"
        )
    with nogil, parallel(num_threads=n_threads):
        for task in prange(n_blocks, schedule="static"):
            # The feature of the block's first row: the first j whose rows
            # end past it.
            low = 0
            high = n_features
            while low < high:
                middle = (low + high) // 2
                if offsets[middle + 1] <= task * n_rows // n_blocks:
                    low = middle + 1
                else:
                    high = middle
            # A chunk at a time, its counts of the block's rows read in one
            # run (the rows' sums still add the chunks in order). Row a of
            # feature j is in chunk b's table if (a + 1) * n_classes values
            # fit in its counts of j: no division (one a row and chunk, as
            # it was, took most of the merge's time).
            for b in range(tables.shape[0]):
                j = low
                for r in range(
                    task * n_rows // n_blocks, (task + 1) * n_rows // n_blocks
                ):
                    while offsets[j + 1] <= r:
                        j = j + 1
                    a = r - offsets[j]
                    start = layout[b, j]
                    if (a + 1) * n_classes <= layout[b, j + 1] - start:
                        for c in range(n_classes):
                            out[r, c] += tables[b, start + a * n_classes + c]
        # (prange's end waits for every thread: the merge is done.)
        if zeros:
            for feature in prange(n_features, schedule="dynamic"):
                _add_implicit_zeros(
                    out, offsets, class_count, feature, &scratch[threadid(), 0]
                )


# ---------------------------------------------------------------------------
# Sparse category codes.  A CSR or CSC matrix of codes, in canonical format
# (each row's, or column's, indices strictly increasing), holds code 0
# wherever it stores nothing.  A fit checks the stored codes as it finds
# each feature's largest (categorical_check_csr / _csc), then counts them
# (categorical_count_csr: a table a chunk of rows, and each class's weight,
# merged in chunk order by categorical_merge_counts; categorical_count_csc:
# a task a column), and adds each feature's implicit zeros to its code 0
# (categorical_add_zeros, or categorical_merge_counts after its merge).
# Scoring starts a row from the all-zeros row's scores
# (categorical_zero_scores) and adds, for each stored code, its term less
# code 0's (categorical_score_csr).
# ---------------------------------------------------------------------------

cdef inline bint _counted_code(code_t x, Py_ssize_t top) noexcept nogil:
    """Whether x is a whole number from 0 to top."""
    if code_t is float or code_t is double:
        return x >= 0 and x <= top and fastnb_whole(x)
    else:
        return x >= 0 and x <= top


def categorical_check_csr(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    int64_t limit,
    code_t[:, ::1] highest,
    bint missing,
    int n_threads,
):
    """The position in X_data of the first stored code of a canonical CSR
    matrix (in row-major order) that is not a whole number from 0 to
    limit - 1 (at most 2^53), or -1.

    highest (a row a thread, zeroed by the caller) gets in highest[t, j]
    the largest code of feature j in task t's rows (an equal run of rows a
    thread): their maximum over the tasks is the feature's largest stored
    code (or 0), unless a code is bad.  With missing, a stored NaN is a
    missing value, not bad.
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t nnz = X_indices.shape[0]
    # The first bad code of each task (see first_flagged).
    cdef intp_t[::1] first_bad = np.full(n_threads, nnz, dtype=np.intp)
    cdef Py_ssize_t task, p, j
    cdef code_t x
    if highest.shape[0] < n_threads:
        raise IndexError(
            f"highest has {highest.shape[0]} rows for {n_threads} tasks: out of bounds"
        )
    # An equal run of rows a task, one task a thread (as
    # sparse_structure_error): their stored codes are one run of X_data,
    # read with no step a row (the rows of sparse codes are short: a row at
    # a time, with the thread's number and flags read again each, took 1.5
    # ns a code against 0.7).
    for task in prange(
        n_threads, nogil=True, schedule="static", chunksize=1, num_threads=n_threads
    ):
        for p in range(
            X_indptr[task * n_samples // n_threads],
            X_indptr[(task + 1) * n_samples // n_threads],
        ):
            x = X_data[p]
            if not _fit_code(x, limit):
                if missing and missing_code(x):
                    continue
                first_bad[task] = p
                break
            j = X_indices[p]
            if x > highest[task, j]:
                highest[task, j] = x
    return first_flagged(first_bad, nnz)


def categorical_check_csc(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    int64_t limit,
    code_t[::1] highest,
    bint missing,
    int n_threads,
):
    """As categorical_check_csr for a canonical CSC matrix, a task a column;
    highest[j] (zeroed by the caller) gets column j's largest stored code.

    A column's first bad code is its first in row-major order (its rows
    increase); the first of all is the least by row, then column.
    """
    cdef Py_ssize_t n_features = X_indptr.shape[0] - 1
    # Each thread's first bad code: its row, column and position.
    cdef intp_t[::1] bad_row = np.full(n_threads, np.iinfo(np.intp).max, dtype=np.intp)
    cdef intp_t[::1] bad_column = np.zeros(n_threads, dtype=np.intp)
    cdef intp_t[::1] bad_position = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t j, p, r, t, best
    cdef code_t x
    for j in prange(
        n_features, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        t = threadid()
        for p in range(X_indptr[j], X_indptr[j + 1]):
            r = X_indices[p]
            if r > bad_row[t] or (r == bad_row[t] and j > bad_column[t]):
                break  # past the thread's first bad code
            x = X_data[p]
            if not _fit_code(x, limit):
                if missing and missing_code(x):
                    continue
                bad_row[t], bad_column[t], bad_position[t] = r, j, p
                break
            if x > highest[j]:
                highest[j] = x
    best = -1
    for t in range(n_threads):
        if bad_position[t] >= 0 and (
            best < 0
            or bad_row[t] < bad_row[best]
            or (bad_row[t] == bad_row[best] and bad_column[t] < bad_column[best])
        ):
            best = t
    return -1 if best < 0 else bad_position[best]


def categorical_count_csr(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    const intp_t[::1] offsets,
    Py_ssize_t n_classes,
    Py_ssize_t chunk_rows,
    double[:, ::1] tables,
    double[:, ::1] class_weight,
    bint missing,
    int n_threads,
):
    """Count the stored codes of a CSR matrix into a table a chunk of rows.

    tables[b, (offsets[j] + x) * n_classes + y[i]] += w[i] for each stored
    code x at (i, j) of chunk b's rows (chunk_rows rows from b *
    chunk_rows), in row order, and class_weight[b, y[i]] += w[i] for each
    of its rows: a task a chunk, which zeroes its rows of both first (the
    caller's may be uninitialised). No sample_weight means unit weights.
    With missing, feature j's last row (offsets[j + 1] - 1) counts its
    stored NaN (missing values), the rows before it its codes. A class
    outside 0 .. n_classes - 1, or a code outside the feature's rows for
    codes, raises IndexError (a checked X and its labels have none).
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef bint weighted = sample_weight.shape[0] > 0
    # A chunk with a class or code outside the table, for each thread.
    cdef intp_t[::1] outside = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t s, b, i, j, p, c, row
    cdef double w
    cdef code_t x
    if class_weight.shape[0] != tables.shape[0] or class_weight.shape[1] != n_classes:
        raise ValueError(
            f"class_weight must have a row of {n_classes} classes a chunk "
            f"({tables.shape[0]}); got {class_weight.shape[0]} x "
            f"{class_weight.shape[1]}"
        )
    # The chunks dealt out in turn (dealt_task): each thread gets its share
    # however late it wakes, and rows that grow denser down X are shared
    # out too.
    for s in prange(
        dealt_slots(tables.shape[0], n_threads),
        nogil=True,
        schedule="static",
        chunksize=1,
        num_threads=n_threads,
    ):
        b = dealt_task(s, tables.shape[0], n_threads)
        if b < 0:
            continue
        fastnb_zero(&tables[b, 0], tables.shape[1])
        fastnb_zero(&class_weight[b, 0], n_classes)
        for i in range(b * chunk_rows, min((b + 1) * chunk_rows, n_samples)):
            c = y[i]
            if c < 0 or c >= n_classes:
                outside[threadid()] = b
                continue
            w = sample_weight[i] if weighted else 1.0
            class_weight[b, c] += w
            for p in range(X_indptr[i], X_indptr[i + 1]):
                j = X_indices[p]
                x = X_data[p]
                if _counted_code(x, offsets[j + 1] - offsets[j] - 1 - missing):
                    row = offsets[j] + <Py_ssize_t> x
                elif missing and missing_code(x):
                    row = offsets[j + 1] - 1
                else:
                    outside[threadid()] = b
                    continue
                tables[b, row * n_classes + c] += w
    if np.max(outside) >= 0:
        raise IndexError(
            f"chunk {np.max(outside)} has a class or category code outside the table"
        )


def categorical_count_csc(
    const code_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const intp_t[::1] y,
    const double[::1] sample_weight,
    const intp_t[::1] offsets,
    double[:, ::1] out,
    bint missing,
    int n_threads,
):
    """out[offsets[j] + x, y[r]] += w[r] for each stored code x at (r, j) of a
    CSC matrix; a task a column, its rows in order.

    No sample_weight means unit weights. With missing, a stored NaN goes to
    the feature's last row, as in categorical_count_csr. A code outside the
    feature's rows for codes raises IndexError (a checked X has none).
    """
    cdef Py_ssize_t n_features = X_indptr.shape[0] - 1
    cdef bint weighted = sample_weight.shape[0] > 0
    # A column with a code outside the table, for each thread.
    cdef intp_t[::1] outside = np.full(n_threads, -1, dtype=np.intp)
    cdef Py_ssize_t j, p, r, row
    cdef code_t x
    for j in prange(
        n_features, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        for p in range(X_indptr[j], X_indptr[j + 1]):
            r = X_indices[p]
            x = X_data[p]
            if _counted_code(x, offsets[j + 1] - offsets[j] - 1 - missing):
                row = offsets[j] + <Py_ssize_t> x
            elif missing and missing_code(x):
                row = offsets[j + 1] - 1
            else:
                outside[threadid()] = j
                continue
            out[row, y[r]] += sample_weight[r] if weighted else 1.0
    if np.max(outside) >= 0:
        raise IndexError(
            f"column {np.max(outside)} has a category code outside the table"
        )


cdef inline int _add_implicit_zeros(
    double[:, ::1] counts,
    const intp_t[::1] offsets,
    const double[::1] class_count,
    Py_ssize_t j,
    double* stored,
) except -1 nogil:
    """Add feature j's implicit zeros to its code 0 (see categorical_add_zeros);
    stored: room for a sum a class."""
    cdef Py_ssize_t n_classes = counts.shape[1]
    cdef Py_ssize_t a, c
    for c in range(n_classes):
        stored[c] = 0.0
    for a in range(offsets[j], offsets[j + 1]):
        for c in range(n_classes):
            stored[c] = stored[c] + counts[a, c]
    for c in range(n_classes):
        if class_count[c] > stored[c]:
            counts[offsets[j], c] += class_count[c] - stored[c]
    return 0


def categorical_add_zeros(
    double[:, ::1] counts,
    const intp_t[::1] offsets,
    const double[::1] class_count,
    double[:, :] scratch,
    int n_threads,
):
    """Add a sparse X's implicit zeros to code 0 of each feature; a task a feature.

    Feature j's counts are the rows offsets[j] .. offsets[j + 1] - 1 of
    counts, those of its stored codes; class c's rows that store nothing
    for it weigh class_count[c] less their sum (taken in row order), which
    goes to row offsets[j] (never less than 0: where every row of the class
    stores a code, rounding may leave a hair either side of 0). scratch has
    a row a thread, with a column a class. (categorical_merge_counts adds
    them after a merge, in its parallel region.)
    """
    cdef Py_ssize_t j
    for j in prange(
        offsets.shape[0] - 1, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        _add_implicit_zeros(counts, offsets, class_count, j, &scratch[threadid(), 0])


def categorical_log_tables(
    const double[:, ::1] counts,
    const intp_t[::1] count_offsets,
    const intp_t[::1] offsets,
    const double[::1] pseudo,
    double[:, ::1] count_table,
    double[:, ::1] log_table,
    double[:, ::1] padded,
    double[:, :] scratch,
    bint missing,
    int n_threads,
):
    """The smoothed log tables from the counts; a task a feature.

    counts holds feature j's categories in its rows count_offsets[j] ..
    count_offsets[j + 1] - 1; the tables give it rows offsets[j] ..
    offsets[j + 1] - 1, one per category (those not counted have count 0)
    and a last for unseen ones.  count_table gets the counts so laid out,
    log_table log((count + pseudo) / total), with pseudo the row's
    pseudo-count and total the sum of count + pseudo over the feature's
    categories (not the unseen row), in order; padded gets log_table in its
    first columns (the rest left as they are).  scratch has a row a
    thread, with a column a class.

    With missing (missing="ignore"), a class whose total is 0 (no value of
    the feature seen in it, and no smoothing) gets the uniform log(1 / n)
    over the feature's n categories in every row (the limit of any
    smoothing), and a feature with no category at all gets 0 (its only row,
    unseen, the same for every class); without missing these give NaN or
    infinities, as log(0 / 0) does.
    """
    cdef Py_ssize_t n_classes = count_table.shape[1]
    cdef Py_ssize_t j, r, c, t, n_counted, first, n_categories
    cdef double v, uniform
    cdef double* total
    for j in prange(
        offsets.shape[0] - 1, nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        t = threadid()
        total = &scratch[t, 0]
        for c in range(n_classes):
            total[c] = 0.0
        n_counted = count_offsets[j + 1] - count_offsets[j]
        first = count_offsets[j] - offsets[j]
        for r in range(offsets[j], offsets[j + 1]):
            for c in range(n_classes):
                v = 0.0
                if r - offsets[j] < n_counted:
                    v = counts[first + r, c]
                count_table[r, c] = v
                v = v + pseudo[r]
                log_table[r, c] = v
                if r < offsets[j + 1] - 1:
                    total[c] += v
        n_categories = offsets[j + 1] - offsets[j] - 1
        uniform = -log(<double> n_categories) if n_categories > 0 else 0.0
        for c in range(n_classes):
            total[c] = log(total[c])
        for r in range(offsets[j], offsets[j + 1]):
            for c in range(n_classes):
                if missing and total[c] == -INFINITY:
                    v = uniform
                else:
                    v = log(log_table[r, c]) - total[c]
                log_table[r, c] = v
                padded[r, c] = v
