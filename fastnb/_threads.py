"""How the kernels' work is spread over threads: the thread count for an
input's size, the chunks of rows and blocks of columns of the tasks, the
classes padded to whole register blocks, and each thread's scratch rows.

A leaf of the package: it imports nothing of fastnb but the kernels.
"""

import contextvars
import math
import os

import numpy as np

from fastnb._simd import kernels as _kernels

# Values a kernel must touch to be worth each extra thread: waking a thread
# costs more than small inputs save, and on a busy machine far more.
WORK_PER_THREAD = 1 << 16

# The most threads the kernels may use in this context, or None for no cap:
# fastnb.dask sets it in each task to the task's share of the CPUs, so that
# the threads that run a worker's tasks do not each start a team as large
# as the machine. A context variable: each thread, and each task, has its own.
THREAD_CAP: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "fastnb_thread_cap", default=None
)


def usable_cpus():
    """The CPUs this process may run on (its affinity, where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def effective_n_threads(work=None):
    """Number of threads the kernels use: OpenMP's limit, capped by usable
    CPUs and by THREAD_CAP.

    OpenMP's limit follows ``OMP_NUM_THREADS`` and ``threadpoolctl``. With
    ``work`` (how many values the kernel touches: nonzeros, or rows x
    columns), inputs of less than 2 * WORK_PER_THREAD values get one thread.
    Any other gets them all, never a team of a size between: GCC's OpenMP
    runtime ends the threads a smaller team leaves idle, and starts them
    again for the next larger one (on 16 cores, 13 threads ended and
    started again on every predict, whose last step had work for 3).
    """
    if work is not None and work < 2 * WORK_PER_THREAD:
        return 1  # without asking the system: small inputs are most calls
    n_threads = min(_kernels.openmp_max_threads(), usable_cpus())
    cap = THREAD_CAP.get()
    if cap is not None:
        n_threads = min(n_threads, cap)
    return max(1, n_threads)


def data_size(X):
    """How many values of X a kernel reads: nonzeros if sparse, else all."""
    return X.nnz if hasattr(X, "nnz") else X.size


def padded_class_count(n_classes, block=None):
    """n_classes rounded up to whole class blocks: for kernels that score
    classes in full register blocks (CLASS_BLOCK, or ``block``)."""
    block = _kernels.CLASS_BLOCK if block is None else block
    return n_classes + -n_classes % block


def pad_classes(table, block=None):
    """table (rows, n_classes) with zero columns up to whole class blocks
    (``padded_class_count``)."""
    n_classes = table.shape[-1]
    n_padded = padded_class_count(n_classes, block)
    # One copy, C-contiguous, whatever the layout of table (often a
    # transposed view).
    padded = np.zeros((*table.shape[:-1], n_padded))
    padded[..., :n_classes] = table
    return padded


def zeroed(shape):
    """np.zeros(shape), zeroed by the kernels' threads where it is large
    enough for more than one: np.zeros is a memset of the main thread
    wherever the allocator hands back used memory (0.4 to 1 ms of a
    20-class fit of 65,536 features)."""
    size = math.prod(shape)
    n_threads = effective_n_threads(size)
    if n_threads == 1:
        return np.zeros(shape)
    array = np.empty(shape)
    _kernels.zero_values(array.reshape(-1), n_threads)
    return array


def thread_scratch(n_threads, n_classes):
    """Per-thread blocks of score rows for the scoring kernels,
    (n_threads, rows, n_classes), rows at most SCORE_ROWS.

    Each row has room past n_classes for the classes padded to whole blocks
    (see pad_classes; of either kernel block), and the threads' blocks are
    a spare row, at least a cache line (8 doubles), apart so that threads
    never write to the same line. A block holds at most 256 KiB (32768
    doubles), or a single row if one row is larger.
    """
    room = padded_class_count(n_classes, _kernels.KDE_CLASS_BLOCK)
    rows = max(1, min(_kernels.SCORE_ROWS, 32768 // room))
    blocks = np.empty((n_threads, rows + 1, room), dtype=np.float64)
    return blocks[:, :rows, :n_classes]
