# Included by _vectorised.pyx: the scoring driver, and the finishing of scores.

# ---------------------------------------------------------------------------
# Scoring.  Every scoring kernel starts a row's scores from an intercept,
# adds each feature's term from feature-major tables (a row per feature or
# category) in the C row helpers of _rows.h, then finishes the row as
# requested by `output`.  Tables and intercepts have their classes padded
# with zeros to whole blocks of CLASS_BLOCK (fastnb._base.pad_classes), so
# every block runs in registers; the padded scores go to the scratch rows
# (which have room for them) and are never read: a row is finished over the
# real classes, as many as scratch has columns.
#
# A thread scores a block of rows (as many as scratch has rows), then
# finishes them together (_finish_rows): a row's exps, sum and division
# are a chain of steps each waiting on the last, and one row at a time
# the processor waited on them (a third of CategoricalNB's predict_proba);
# a step at a time over a block, the rows' chains overlap.
#
# Scoring kernels check X's values as they read them (finite; for the
# count families that need it, non-negative) and return the first row
# holding a refused value, or -1; fastnb._base.BaseNB._refused_row then
# names the value. A thread stops scoring at its first such row.
#
# Discrete families: intercept[k] + sum_j x_j * table[j, k].  A zero value
# contributes nothing (x log p with x = 0), even where the table holds -inf.
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _exp_room(Py_ssize_t n_classes) noexcept nogil:
    """The classes padded to whole blocks: the scores fastnb_exp_less may
    take (_exp_less), for which every scratch row has room."""
    return (n_classes + FASTNB_BLOCK - 1) // FASTNB_BLOCK * FASTNB_BLOCK


cdef int _check_scratch(
    const double[:, :, :] scratch, int n_threads, Py_ssize_t n_padded
) except -1:
    """Refuse a scratch (thread_scratch) without a block a thread, or whose
    rows are not contiguous, or have no room for n_padded scores, nor for
    the classes padded to whole blocks (_exp_room)."""
    cdef Py_ssize_t room = max(n_padded, _exp_room(scratch.shape[2]))
    if (
        scratch.shape[0] < n_threads
        or scratch.shape[1] < 1
        or scratch.strides[2] != sizeof(double)
        or scratch.strides[1] < room * <Py_ssize_t> sizeof(double)
    ):
        raise ValueError(
            f"scratch must have a block of rows a thread ({n_threads}), each "
            f"row contiguous, with room for {room} scores (fastnb._base.thread_scratch)"
        )
    return 0


cdef inline void _exp_less(
    double[:, :, :] scratch, Py_ssize_t t, Py_ssize_t r, double top
) noexcept nogil:
    """scratch[t, r, k] = exp(scratch[t, r, k] - top) for the row's classes,
    top the largest score. Each row has room for the classes padded to whole
    blocks (_exp_room, checked by _check_scratch), which fastnb_exp_less may
    take too; they are never read."""
    cdef Py_ssize_t n = scratch.shape[2]
    fastnb_exp_less(&scratch[t, r, 0], n, _exp_room(n), top)


cdef inline int _finish_rows(
    double[:, :, :] scratch,
    Py_ssize_t t,
    Py_ssize_t first,
    Py_ssize_t stop,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
) except -1 nogil:
    """Write rows first .. stop - 1, whose scores are the rows 0, 1, ... of
    scratch[t], to out or labels as `output` asks.

    MIN_EXPECTED_COST reads the cost matrix from `out` and overwrites the
    rows' scores (see _least_cost); PROBA and LOG_PROBA overwrite them too.
    """
    cdef Py_ssize_t n_classes = scratch.shape[2]
    cdef Py_ssize_t i, k, r, best
    cdef double top, total, log_total
    for i in range(first, stop):
        r = i - first
        if output == MIN_EXPECTED_COST:
            labels[i] = _least_cost(scratch, t, r, out)
        elif output == ARGMAX:
            # First maximum wins, as numpy.argmax.
            best = 0
            for k in range(1, n_classes):
                if scratch[t, r, k] > scratch[t, r, best]:
                    best = k
            labels[i] = best
        elif output == JOINT_LOG_LIKELIHOOD:
            for k in range(n_classes):
                out[i, k] = scratch[t, r, k]
        else:
            # log-sum-exp shifted by the row maximum so exp() cannot
            # overflow; (score - top) first: exact for the leading classes,
            # however large the scores are, so probabilities sum to one to
            # rounding.
            top = scratch[t, r, 0]
            for k in range(1, n_classes):
                if scratch[t, r, k] > top:
                    top = scratch[t, r, k]
            if output == LOG_PROBA:
                for k in range(n_classes):
                    out[i, k] = scratch[t, r, k] - top
            # One exp a class, kept in the scores.
            _exp_less(scratch, t, r, top)
    if output != PROBA and output != LOG_PROBA:
        return 0
    for i in range(first, stop):
        r = i - first
        total = 0.0
        for k in range(n_classes):
            total = total + scratch[t, r, k]
        if output == PROBA:
            for k in range(n_classes):
                out[i, k] = scratch[t, r, k] / total
        else:
            log_total = log(total)
            for k in range(n_classes):
                out[i, k] = out[i, k] - log_total
    return 0


cdef inline Py_ssize_t _least_cost(
    double[:, :, :] scratch, Py_ssize_t t, Py_ssize_t r, const double[:, ::1] cost
) except -1 nogil:
    """The class j of least expected cost sum_k P(k | x) cost[k, j] for the
    row's joint log-likelihoods scratch[t, r], which it overwrites.

    The posteriors are taken unnormalised, exp(score - top score): the
    normaliser is the same for every j and does not change which is least.
    Classes are compared two at a time by the difference of their costs,
    sum_k p_k (cost[k, j] - cost[k, best]), whose sign is exact for a 0-1
    matrix (two nonzero terms, of opposite signs); where it is 0 the most
    probable class wins (argmax of the scores), else the first.  So the 0-1
    matrix, or any multiple of it, gives argmax exactly.
    """
    cdef Py_ssize_t n_classes = scratch.shape[2]
    cdef Py_ssize_t j, k, best = 0, most_probable = 0
    cdef double top, difference
    for k in range(1, n_classes):
        if scratch[t, r, k] > scratch[t, r, most_probable]:
            most_probable = k
    top = scratch[t, r, most_probable]
    _exp_less(scratch, t, r, top)
    for j in range(1, n_classes):
        difference = 0.0
        for k in range(n_classes):
            difference = difference + scratch[t, r, k] * (cost[k, j] - cost[k, best])
        if difference < 0.0 or (difference == 0.0 and j == most_probable):
            best = j
    return best


# Classes scored together (their accumulators stay in registers); tables
# padded to whole blocks must use this (fastnb._base.pad_classes).
CLASS_BLOCK = FASTNB_BLOCK
# KernelDensityNB's tables of floats, a cache line a row (fastnb._kde).
KDE_CLASS_BLOCK = FASTNB_KDE_BLOCK

cdef enum:
    # Rows a thread scores at a time (a block of its scratch rows).
    ROW_CHUNK = 64

# Rows of a thread's scratch block, at most (fastnb._base.thread_scratch).
SCORE_ROWS = ROW_CHUNK


# ---------------------------------------------------------------------------
# The scoring driver.  Every scoring kernel is a struct of its tables and
# sizes and a ScoreRows function; score_blocks runs the one loop over blocks
# of rows they share.
# ---------------------------------------------------------------------------

# A kernel's rows first .. stop - 1, into rows + (i - first) * row_stride:
# starts each row from the intercept (_started_row), adds its terms (reading
# `kernel`, the kernel's struct), and returns stop, or the first row with a
# refused value, or -1 - i for a row i that reads outside its tables (the
# checks of a FASTNB_DEBUG=1 build).  X's values, and a CSR X's column
# indices, come typed, which picks the specialisation; a dense kernel has no
# indices.  Each copies its struct to a local, which the compiler may keep
# in registers while rows are written.
ctypedef Py_ssize_t (*ScoreRows)(
    const void* kernel,
    const value_t* x,
    const index_t* x_indices,
    const double* intercept,
    Py_ssize_t first,
    Py_ssize_t stop,
    double* rows,
    Py_ssize_t row_stride,
) noexcept nogil


cdef inline const value_t* _dense_values(const value_t[:, :] X) noexcept:
    """X's first value, from which a dense kernel reads its rows by X's
    strides; NULL for an X without values."""
    return &X[0, 0] if X.shape[0] > 0 and X.shape[1] > 0 else NULL


cdef inline double* _started_row(
    double* rows,
    Py_ssize_t r,
    Py_ssize_t row_stride,
    const double* intercept,
    Py_ssize_t n_padded,
) noexcept nogil:
    """Row r of a block, set to the intercept (each row's, as it is scored:
    a pass over the block first cost 3-8% of a small row's time)."""
    cdef double* row = rows + r * row_stride
    cdef Py_ssize_t k
    for k in range(n_padded):
        row[k] = intercept[k]
    return row


cdef inline Py_ssize_t _stopped_at(int status, Py_ssize_t i) noexcept nogil:
    """What a ScoreRows function returns for row i, whose row helper
    returned status != 0: i if a value was refused, -1 - i if it read
    outside its tables."""
    return i if status > 0 else -1 - i


cdef inline int _score_run(
    ScoreRows score_rows,
    const void* kernel,
    const value_t* x,
    const index_t* x_indices,
    const double* intercept,
    Py_ssize_t first_block,
    Py_ssize_t stop_block,
    Py_ssize_t n_samples,
    double[:, :, :] scratch,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    intp_t[::1] first_bad,
    intp_t[::1] first_outside,
) except -1 nogil:
    """Blocks first_block .. stop_block - 1 of score_blocks, in the calling
    thread's scratch rows, until a row is refused (first_bad) or reads
    outside its tables (first_outside) in this thread."""
    cdef Py_ssize_t t = threadid()
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t row_stride = scratch.strides[1] // sizeof(double)
    cdef Py_ssize_t b, first, stop, end
    for b in range(first_block, stop_block):
        if first_bad[t] < n_samples or first_outside[t] < n_samples:
            return 0
        first = b * rows
        stop = min(first + rows, n_samples)
        end = score_rows(
            kernel, x, x_indices, intercept, first, stop, &scratch[t, 0, 0], row_stride
        )
        if end < 0:
            first_outside[t] = -1 - end
            return 0
        if end < stop:
            first_bad[t] = end
        _finish_rows(scratch, t, first, end, output, out, labels)
    return 0


cdef inline Py_ssize_t _work_before(
    Py_ssize_t b, Py_ssize_t rows, Py_ssize_t n_samples, const index_t* x_indptr
) noexcept nogil:
    """The work of score_blocks' blocks 0 .. b - 1: their rows, and for a
    CSR X (x_indptr not NULL) their stored values too, a row's cost being
    about its stored values' and its own."""
    cdef Py_ssize_t i = min(b * rows, n_samples)
    if x_indptr == NULL:
        return i
    return i + <Py_ssize_t> x_indptr[i] - <Py_ssize_t> x_indptr[0]


cdef Py_ssize_t _run_start(
    double share,
    Py_ssize_t n_blocks,
    Py_ssize_t rows,
    Py_ssize_t n_samples,
    const index_t* x_indptr,
) noexcept nogil:
    """The first of score_blocks' blocks whose blocks before it hold `share`
    of the work (_work_before), found by bisection.  An X whose offsets
    decrease only moves the runs' bounds (its rows are refused as they are
    scored)."""
    cdef Py_ssize_t low = 0, high = n_blocks, middle
    while low < high:
        middle = (low + high) // 2
        if _work_before(middle, rows, n_samples, x_indptr) < share:
            low = middle + 1
        else:
            high = middle
    return low


cdef Py_ssize_t score_blocks(
    ScoreRows score_rows,
    const void* kernel,
    const value_t* x,
    const index_t* x_indices,
    const index_t* x_indptr,
    Py_ssize_t n_samples,
    const double[::1] intercept,
    Py_ssize_t n_padded,
    str index_error,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
) except -2:
    """Score n_samples rows, a block of scratch's rows at a time a thread:
    the rows scored by score_rows (from the intercept, of n_padded classes),
    the block finished by _finish_rows as `output` asks.

    Each thread scores one run of blocks, in a static schedule: runs of
    equal rows, or for a CSR X (x_indptr, its row offsets; NULL for a
    dense X) of equal rows and stored values together, so that rows of
    very different lengths, sorted by length say, still share out evenly.
    On a machine with fewer cores than threads, handing blocks out one at
    a time gave most of them to the threads that woke first (3 to 8 of 16
    threads busy), and a run each spreads the work over all of them (16 of
    16).  On 2 cores with one of them taken by another process, the runs
    cost about 7% against blocks handed out one at a time (bench/README.md).

    Returns the first row with a refused value, or -1; a thread that met one
    scores no more blocks, so rows from it on may be left unscored.  A row
    that reads outside its tables raises IndexError ("row i " index_error).
    """
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef intp_t[::1] first_outside = np.full(n_threads, n_samples, dtype=np.intp)
    cdef intp_t[::1] run_start = np.empty(n_threads + 1, dtype=np.intp)
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t n_blocks, total, run, outside
    if intercept.shape[0] < n_padded:
        raise ValueError(
            f"intercept must have a value for each of the {n_padded} padded classes"
        )
    _check_scratch(scratch, n_threads, n_padded)
    n_blocks = (n_samples + rows - 1) // rows
    total = _work_before(n_blocks, rows, n_samples, x_indptr)
    run_start[0] = 0
    for run in range(1, n_threads):
        run_start[run] = max(
            run_start[run - 1],
            _run_start(
                <double> total * run / n_threads, n_blocks, rows, n_samples, x_indptr
            ),
        )
    run_start[n_threads] = n_blocks
    for run in prange(n_threads, nogil=True, schedule="static", num_threads=n_threads):
        _score_run(
            score_rows, kernel, x, x_indices, &intercept[0], run_start[run],
            run_start[run + 1], n_samples, scratch, output, out, labels,
            first_bad, first_outside,
        )
    outside = first_flagged(first_outside, n_samples)
    if outside >= 0:
        raise IndexError(f"row {outside} {index_error}")
    return first_flagged(first_bad, n_samples)


ctypedef fused label_word_t:
    # The words class labels are copied in: each label is a row of them.
    uint8_t
    uint16_t
    uint32_t
    uint64_t


def take_labels(
    const label_word_t[:, ::1] classes,
    const intp_t[::1] labels,
    label_word_t[:, ::1] out,
    int n_threads,
):
    """out[i] = classes[labels[i]]: predict's class of each row, in parallel;
    each class label is a row of words (its bytes, as fastnb._base's
    label_words lays them out).

    labels come from a scoring kernel's argmax, each below len(classes).
    """
    cdef Py_ssize_t width = classes.shape[1]
    cdef Py_ssize_t i, m
    for i in prange(
        labels.shape[0], nogil=True, schedule="static", num_threads=n_threads
    ):
        for m in range(width):
            out[i, m] = classes[labels[i], m]


def finish_scores(
    const double[:, ::1] jll,
    int output,
    double[:, ::1] out,
    intp_t[::1] labels,
    double[:, :, :] scratch,
    int n_threads,
):
    """Finish joint log-likelihood rows as `output` asks; out may be jll
    itself. A block of rows is finished from a copy in its thread's
    scratch block (thread_scratch, as the scoring kernels'), whose rows
    have room for the padded classes that _finish_rows may write."""
    cdef Py_ssize_t n_samples = jll.shape[0]
    cdef Py_ssize_t rows = scratch.shape[1]
    cdef Py_ssize_t b, i, k, t, first, stop
    if scratch.shape[2] != jll.shape[1]:
        raise ValueError("scratch must have a column of jll's classes a score")
    _check_scratch(scratch, n_threads, 0)
    for b in prange(
        (n_samples + rows - 1) // rows,
        nogil=True,
        schedule="dynamic",
        num_threads=n_threads,
    ):
        t = threadid()
        first = b * rows
        stop = min(first + rows, n_samples)
        for i in range(first, stop):
            for k in range(jll.shape[1]):
                scratch[t, i - first, k] = jll[i, k]
        _finish_rows(scratch, t, first, stop, output, out, labels)
