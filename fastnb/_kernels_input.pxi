# Included by _kernels.pyx: a sparse matrix's structure, and the labels.

# ---------------------------------------------------------------------------
# Sparse structure.  scipy's conversions and every sparse kernel trust a
# matrix's indptr and indices, which a user can set to anything: they are
# checked first, in parallel (fastnb._base.check_sparse_structure).
# ---------------------------------------------------------------------------

cdef enum:
    # Rows a block of sparse_structure_error's tasks: their indices are read
    # in one stream, then again at each row's start, from cache.
    STRUCTURE_ROWS = 256


cdef inline (Py_ssize_t, int) _structure_task(
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_minor,
    int32_t last,
    Py_ssize_t first_row,
    Py_ssize_t end_row,
) noexcept nogil:
    """The first malformed row of rows first_row .. end_row - 1 (or the
    number of rows, if none), and whether one of them has indices that are
    not strictly increasing.

    A block of rows at a time: its offsets checked, then its indices read
    as one run, whatever the rows' lengths, branch-free (the compiler
    vectorises it), counting the places where an index is not above the
    one before; those that are a row's first index, after another row's
    last, are taken off. Only a block with something malformed is read
    again a row at a time, to find its first bad row. (Row by row, the
    loop's start and end cost more than its 10 indices a row of sparse
    codes: 3.1 against 0.6 ms for 200,000 such rows, and 7.8 against 2.6 ms
    for 100,000 rows of 100 32-bit indices, compared as 64-bit numbers.)
    """
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t nnz = indices.shape[0]
    cdef Py_ssize_t k, block, stop_row, i, p, a, b
    cdef Py_ssize_t descents, unsorted = 0
    cdef int ok, outside
    for k in range((end_row - first_row + STRUCTURE_ROWS - 1) // STRUCTURE_ROWS):
        block = first_row + k * STRUCTURE_ROWS
        stop_row = min(block + STRUCTURE_ROWS, end_row)
        ok = (0 <= indptr[block]) & (indptr[stop_row] <= nnz)
        for i in range(block, stop_row):
            ok = ok & (indptr[i] <= indptr[i + 1])
        outside = 0
        descents = 0
        if ok and indptr[block] < indptr[stop_row]:
            a = indptr[block]
            b = indptr[stop_row]
            if index_t is int32_t:
                outside = (indices[a] < 0) | (indices[a] > last)
                for p in range(a + 1, b):
                    outside = outside | (indices[p] < 0) | (indices[p] > last)
                    descents += indices[p] <= indices[p - 1]
            else:
                outside = <size_t>indices[a] >= <size_t>n_minor
                for p in range(a + 1, b):
                    outside = outside | (<size_t>indices[p] >= <size_t>n_minor)
                    descents += indices[p] <= indices[p - 1]
            # The places between two rows: each non-empty row's first index
            # but the block's first.
            for i in range(block, stop_row):
                p = indptr[i]
                if a < p < indptr[i + 1]:
                    descents -= indices[p] <= indices[p - 1]
            unsorted += descents
        if not ok or outside:
            for i in range(block, stop_row):
                a = indptr[i]
                b = indptr[i + 1]
                if not (0 <= a <= b <= nnz):
                    return i, unsorted > 0
                for p in range(a, b):
                    if <size_t>indices[p] >= <size_t>n_minor:
                        return i, unsorted > 0
    return n_major, unsorted > 0


def sparse_structure_error(
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_minor,
    int n_threads,
):
    """The first malformed row of a CSR (column of a CSC) matrix, or -1; and
    whether every row's indices are strictly increasing (canonical format).

    Row i is malformed unless 0 <= indptr[i] <= indptr[i + 1] <= len(indices)
    and each of its indices is in 0 .. n_minor - 1.  Each row's offsets are
    checked before its indices are read.
    """
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    # An equal run of rows a task, one task a thread (_structure_task): the
    # first malformed row of each (see first_flagged), and whether one of
    # its rows has indices that are not strictly increasing. (Handed out a
    # chunk at a time, the threads that woke first took most of the rows:
    # bench/README.md, "scoring in one run a thread".)
    cdef intp_t[::1] first_bad = np.full(n_threads, n_major, dtype=np.intp)
    cdef intp_t[::1] unsorted = np.zeros(n_threads, dtype=np.intp)
    cdef Py_ssize_t task
    # The last index in range, for 32-bit indices: compared in their own
    # width, the compiler vectorises the loop (as 64-bit numbers it left it
    # scalar). 64-bit indices are compared as unsigned (a negative one is
    # huge), one compare each, which the baseline's instructions do not
    # vectorise anyway.
    cdef int32_t last = <int32_t> min(n_minor - 1, INT32_MAX)
    for task in prange(
        n_threads, nogil=True, schedule="static", chunksize=1, num_threads=n_threads
    ):
        first_bad[task], unsorted[task] = _structure_task(
            indices, indptr, n_minor, last, task * n_major // n_threads,
            (task + 1) * n_major // n_threads,
        )
    return first_flagged(first_bad, n_major), not np.any(unsorted)


cdef inline bint _rows_repeat_an_index(
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t first_row,
    Py_ssize_t end_row,
    uint64_t[::1] seen,
) noexcept nogil:
    """Whether one of rows first_row .. end_row - 1 holds an index twice.

    seen: a bit a column, all clear, and clear again on return; a row sets
    the bits of its indices, finding any already set, then clears their
    words (as many as the row's indices, not the whole set)."""
    cdef Py_ssize_t i, p
    cdef uint64_t bit, repeated = 0
    cdef size_t word
    for i in range(first_row, end_row):
        for p in range(indptr[i], indptr[i + 1]):
            word = <size_t> indices[p] >> 6
            bit = (<uint64_t> 1) << (<size_t> indices[p] & 63)
            repeated |= seen[word] & bit
            seen[word] |= bit
        for p in range(indptr[i], indptr[i + 1]):
            seen[<size_t> indices[p] >> 6] = 0
        if repeated:
            return True
    return False


def sparse_repeats_an_index(
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_minor,
    int n_threads,
):
    """Whether a row of a CSR (column of a CSC) matrix holds an index more
    than once: a repeated entry, which scipy's canonical format sums into
    one. For a matrix whose indices are not sorted (sparse_structure_error
    says whether they are), and whose structure it has checked. An equal
    run of rows a task, one a thread, each with a bit a column (n_minor / 8
    bytes a thread: 16 KB for 2**17 columns)."""
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t words = n_minor // 64 + 1
    cdef uint64_t[:, ::1] seen = np.zeros((n_threads, words), dtype=np.uint64)
    cdef uint8_t[::1] repeats = np.zeros(n_threads, dtype=np.uint8)
    cdef Py_ssize_t task
    for task in prange(
        n_threads, nogil=True, schedule="static", chunksize=1, num_threads=n_threads
    ):
        repeats[task] = _rows_repeat_an_index(
            indices, indptr, task * n_major // n_threads,
            (task + 1) * n_major // n_threads, seen[task],
        )
    return bool(np.any(repeats))


# ---------------------------------------------------------------------------
# Labels.  Integer labels are encoded by table lookup, in parallel
# (fastnb._validation.encode_fit_labels, encode_labels); class_order groups
# the encoded rows by class.
#
# The kernels that sum a batch's statistics take its labels as three label
# arrays (fastnb._labels.label_arrays): label_ptr, label_class and
# label_weight.  Row i's labels are the entries label_ptr[i] ..
# label_ptr[i + 1] - 1, entry e of class label_class[e] and weight
# label_weight[e] (the row's sample weight times its probability of the
# class); an empty label_ptr means one entry a row, entry i (hard labels,
# label_weight then the sample weights).  A statistic of class c sums
# weight times value over the entries of class c, in row order, so labels
# of one class a row (probability 1) give the sums of hard labels bit for
# bit.
# ---------------------------------------------------------------------------

def label_range(const int64_t[::1] y, int n_threads):
    """(least, greatest) label of a non-empty y."""
    cdef Py_ssize_t n = y.shape[0]
    cdef Py_ssize_t chunk = label_chunk(n)
    cdef Py_ssize_t n_chunks = (n + chunk - 1) // chunk
    cdef int64_t[::1] least = np.full(n_chunks, y[0], dtype=np.int64)
    cdef int64_t[::1] greatest = np.full(n_chunks, y[0], dtype=np.int64)
    cdef Py_ssize_t b, i
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(b * chunk, min((b + 1) * chunk, n)):
            if y[i] < least[b]:
                least[b] = y[i]
            if y[i] > greatest[b]:
                greatest[b] = y[i]
    return int(np.min(least)), int(np.max(greatest))


def label_presence(
    const int64_t[::1] y,
    int64_t lowest,
    unsigned char[:, ::1] present,
    int n_threads,
):
    """present[t, y_i - lowest] = 1 for the rows i thread t reads.

    present (n_threads, span) is zeroed by the caller; labels must be in
    lowest .. lowest + span - 1. A row of present a thread: none written by
    two.
    """
    cdef Py_ssize_t n = y.shape[0]
    cdef Py_ssize_t chunk = label_chunk(n)
    cdef Py_ssize_t n_chunks = (n + chunk - 1) // chunk
    cdef Py_ssize_t b, i, t
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        t = threadid()
        for i in range(b * chunk, min((b + 1) * chunk, n)):
            present[t, y[i] - lowest] = 1


def class_lookup(const int64_t[::1] classes, Py_ssize_t max_span):
    """The table encode_by_lookup reads for classes, or None.

    ``(lowest, lookup)``, lookup[c - lowest] the index of class c and -1
    for the values between that are not classes, when the classes are
    strictly increasing and span at most max_span values; else None.
    """
    cdef Py_ssize_t n = classes.shape[0]
    cdef Py_ssize_t k
    cdef uint64_t width
    if n == 0:
        return None
    for k in range(1, n):
        if classes[k] <= classes[k - 1]:
            return None
    # Unsigned: the classes' difference always fits.
    width = <uint64_t> classes[n - 1] - <uint64_t> classes[0]
    if width >= <uint64_t> max_span:
        return None
    cdef intp_t[::1] lookup = np.empty(width + 1, dtype=np.intp)
    lookup[:] = -1
    for k in range(n):
        lookup[classes[k] - classes[0]] = k
    return classes[0], np.asarray(lookup)


def encode_by_lookup(
    const int64_t[::1] y,
    int64_t lowest,
    const intp_t[::1] lookup,
    intp_t[::1] out,
    int n_threads,
):
    """out[i] = lookup[y_i - lowest]; returns the first row whose label is
    outside the lookup or maps to -1 (not a class), or -1."""
    cdef Py_ssize_t n = y.shape[0]
    cdef Py_ssize_t span = lookup.shape[0]
    cdef Py_ssize_t chunk = label_chunk(n)
    cdef Py_ssize_t n_chunks = (n + chunk - 1) // chunk
    cdef intp_t[::1] first_bad = np.full(n_threads, n, dtype=np.intp)
    cdef Py_ssize_t b, i, t
    cdef uint64_t offset
    for b in prange(n_chunks, nogil=True, schedule="dynamic", num_threads=n_threads):
        t = threadid()
        if first_bad[t] < n:
            continue
        for i in range(b * chunk, min((b + 1) * chunk, n)):
            # Unsigned: a label below lowest wraps past span, never overflows.
            offset = <uint64_t> y[i] - <uint64_t> lowest
            if offset >= <uint64_t> span or lookup[offset] < 0:
                first_bad[t] = i
                break
            out[i] = lookup[offset]
    return first_flagged(first_bad, n)


def class_weights(
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    double[::1] out,
    bint in_row_order,
    int n_threads,
):
    """out[c] = the weight of the labels of class c.

    A batch's labels (the label arrays: see "Labels" above). Summed per
    chunk of rows (label_chunk), in row order, then over the chunks in order:
    the same for any number of threads. With in_row_order, one chunk, on
    one thread: each class's weights added one after another in row order,
    as the sparse moments kernels add the weights of a class's stored
    values, so that the two sums are equal, bit for bit, where every row
    of the class stores a value.
    """
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t n = label_ptr.shape[0] - 1 if soft else label_class.shape[0]
    cdef Py_ssize_t n_classes = out.shape[0]
    cdef Py_ssize_t chunk = max(n, 1) if in_row_order else label_chunk(n)
    cdef Py_ssize_t n_chunks = (n + chunk - 1) // chunk
    cdef double[:, ::1] chunk_sums = np.zeros((max(n_chunks, 1), n_classes))
    cdef Py_ssize_t b, i, e
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(b * chunk, min((b + 1) * chunk, n)):
            for e in range(label_ptr[i] if soft else i,
                           label_ptr[i + 1] if soft else i + 1):
                chunk_sums[b, label_class[e]] += label_weight[e]
    sum_blocks(chunk_sums, out)


def class_order(
    const intp_t[::1] y,
    intp_t[::1] order,
    intp_t[::1] class_ptr,
    int n_threads,
):
    """Rows grouped by class, each group in row order (a counting sort).

    class_ptr (n_classes + 1) gets each group's start in order; y holds
    class indices 0 .. n_classes - 1. Each thread counts, then places, the
    classes of one contiguous part of the rows; a part's rows of a class go
    after those of the parts before it, so the order is the same for any
    number of threads (numpy.argsort(y, kind="stable")).
    """
    cdef Py_ssize_t n_samples = y.shape[0]
    cdef Py_ssize_t n_classes = class_ptr.shape[0] - 1
    cdef Py_ssize_t n_parts = max(1, min(n_threads, n_samples))
    cdef Py_ssize_t part_rows = (n_samples + n_parts - 1) // n_parts
    # A part's counts, then its next slot per class; rows a cache line (8
    # counts) apart, so that threads write apart, and no longer than the
    # classes, so that the bounds-checked build refuses a class past them.
    cdef intp_t[:, :] slot = np.zeros(
        (n_parts, n_classes + 8), dtype=np.intp
    )[:, :n_classes]
    cdef Py_ssize_t p, i, c
    cdef intp_t start
    for p in prange(n_parts, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(p * part_rows, min((p + 1) * part_rows, n_samples)):
            slot[p, y[i]] += 1
    with nogil:
        class_ptr[0] = 0
        for c in range(n_classes):
            start = class_ptr[c]
            for p in range(n_parts):
                start = start + slot[p, c]
                slot[p, c] = start - slot[p, c]
            class_ptr[c + 1] = start
    for p in prange(n_parts, nogil=True, schedule="static", num_threads=n_threads):
        for i in range(p * part_rows, min((p + 1) * part_rows, n_samples)):
            c = y[i]
            order[slot[p, c]] = i
            slot[p, c] += 1


def entry_value_ends(
    const index_t[::1] indptr,
    const intp_t[::1] entries,
    const intp_t[::1] entry_row,
    intp_t[::1] ends,
    int n_threads,
):
    """ends[k + 1] = the stored values of the rows of entries[0 .. k] of a
    CSR matrix of these row offsets (ends[0] = 0): entry e's row is
    entry_row[e], or e where entry_row is empty (hard labels).

    Each chunk of entries (label_chunk) sums its rows' values, then writes
    its running sums from the chunks' before it. The rows are checked
    before the call (entries grouped by class_order).
    """
    cdef bint soft = entry_row.shape[0] > 0
    cdef Py_ssize_t n = entries.shape[0]
    cdef Py_ssize_t chunk = label_chunk(n)
    cdef Py_ssize_t n_chunks = (n + chunk - 1) // chunk
    cdef intp_t[::1] chunk_start = np.zeros(n_chunks + 1, dtype=np.intp)
    cdef Py_ssize_t b, k, row
    cdef intp_t total
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        total = 0
        for k in range(b * chunk, min((b + 1) * chunk, n)):
            row = entry_row[entries[k]] if soft else entries[k]
            total = total + (indptr[row + 1] - indptr[row])
        chunk_start[b + 1] = total
    ends[0] = 0
    with nogil:
        for b in range(n_chunks):
            chunk_start[b + 1] = chunk_start[b + 1] + chunk_start[b]
    for b in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        total = chunk_start[b]
        for k in range(b * chunk, min((b + 1) * chunk, n)):
            row = entry_row[entries[k]] if soft else entries[k]
            total = total + (indptr[row + 1] - indptr[row])
            ends[k + 1] = total
