# Inline helpers that both kernel modules use (fastnb._kernels, built once,
# and fastnb._vectorised, built once an instruction-set variant).

from fastnb._rows cimport code_t, intp_t


cdef inline Py_ssize_t first_flagged(intp_t[::1] first_bad, Py_ssize_t none):
    """The least of the threads' first flagged rows, or -1 if all are `none`.

    Any schedule hands a thread its rows in increasing order, so each
    thread's first flagged row is its least, and the least of those is the
    first of all, whatever the number of threads.
    """
    cdef Py_ssize_t first = none, t
    for t in range(first_bad.shape[0]):
        if first_bad[t] < first:
            first = first_bad[t]
    return -1 if first == none else first


cdef inline bint missing_code(code_t x) noexcept nogil:
    """Whether code x is NaN (a missing value with missing="ignore"); integer
    codes never are."""
    if code_t is float or code_t is double:
        return x != x
    else:
        return False


cdef inline void merge_into(
    double n, double* mean, double* ssd, double m, double batch_mean, double batch_ssd
) noexcept nogil:
    """Merge moments (m, batch_mean, batch_ssd) into (n, mean[0], ssd[0]),
    whose count then is n + m. Counts both 0 keep the mean, add the ssds."""
    cdef double total = n + m
    cdef double share = m / total if total > 0 else 0.0
    cdef double delta = batch_mean - mean[0]
    ssd[0] = ssd[0] + batch_ssd + delta * delta * n * share
    mean[0] = mean[0] + delta * share


cdef enum:
    # Values (or labels) a thread takes at a time.
    VALUE_CHUNK = 1 << 14
    # Features a thread takes at a time when making tables from statistics.
    TABLE_BLOCK = 2048
    # Tasks a batch's labels are cut in (label_chunk), and a task's least
    # labels.
    LABEL_TASKS = 64
    LABEL_CHUNK_LEAST = 1024


cdef inline Py_ssize_t label_chunk(Py_ssize_t n) noexcept nogil:
    """Labels (or rows) a task of the kernels over a batch's n labels takes:
    VALUE_CHUNK, or fewer, down to LABEL_CHUNK_LEAST, so that a batch makes
    LABEL_TASKS tasks (a 100,000-row batch 64, four a thread on 16, where
    chunks of VALUE_CHUNK made 7). It depends on n alone, so sums taken per
    task and then over the tasks in order do not depend on the threads."""
    cdef Py_ssize_t chunk = (n + LABEL_TASKS - 1) // LABEL_TASKS
    return min(VALUE_CHUNK, max(LABEL_CHUNK_LEAST, chunk))


cdef inline Py_ssize_t table_blocks(Py_ssize_t n_features) noexcept nogil:
    return (n_features + TABLE_BLOCK - 1) // TABLE_BLOCK


cdef inline void sum_blocks(
    const double[:, ::1] block_sums, double[::1] out
) noexcept nogil:
    """out[c] = the sum of block_sums[b, c] over the blocks b, in order."""
    cdef Py_ssize_t b, c
    cdef double total
    for c in range(block_sums.shape[1]):
        total = 0.0
        for b in range(block_sums.shape[0]):
            total = total + block_sums[b, c]
        out[c] = total


cdef inline Py_ssize_t dealt_slots(Py_ssize_t n_tasks, int n_threads) noexcept nogil:
    """The slots of n_tasks tasks dealt out in turn to n_threads threads
    (dealt_task): whole rounds of the threads."""
    return (n_tasks + n_threads - 1) // n_threads * n_threads


cdef inline Py_ssize_t dealt_task(
    Py_ssize_t slot, Py_ssize_t n_tasks, int n_threads
) noexcept nogil:
    """The task of a slot of a loop over dealt_slots(n_tasks, n_threads)
    slots, static, a slot at a time (slot s to thread s % n_threads), or -1
    for none: each round of the threads takes its tasks in reverse, so
    that thread 0, the main thread, which also wakes the others and runs
    the Python around the kernels, takes the last task of each round and
    none of a round that is not full. A thread's tasks still come in
    increasing order; the tasks' order is the one a thread count changes
    nothing in (a task a chunk, its own table)."""
    cdef Py_ssize_t place = slot % n_threads
    cdef Py_ssize_t task = slot - place + n_threads - 1 - place
    return task if task < n_tasks else -1
