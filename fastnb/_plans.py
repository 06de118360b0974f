"""How a kernel's work is cut into tasks: chunks of rows, blocks of
features, classes and their parts, pieces of rows. A plan depends on the
data's shape (and, where said, on the number of threads, never so that a
result does), not on the values; it is where the measured costs that
choose between layouts live.
"""

import numpy as np

from fastnb._simd import kernels as _kernels


def dense_block_width(n_features, n_threads):
    """Columns per task for the dense kernels that split the work by columns.

    Every task reads all rows, so a task gets at least 64 columns (narrower
    slices of a row cost a whole memory read each); at most 256, so that its
    slice of the statistics stays in cache; otherwise about two tasks a
    thread. The width does not change any result.
    """
    return int(min(max(-(-n_features // (2 * n_threads)), 64), 256))


def dense_row_chunks(n_samples, chunk_table_size):
    """Rows a chunk for the dense kernels that give each chunk of rows its
    own statistics (chunk_table_size doubles) and merge them in order.

    It depends on the data's shape only, never on the number of threads, so
    neither does the result. The rows are cut in CHUNKS chunks, four tasks
    a thread on 16 (a 50,000-row partial_fit batch too), but a chunk has at
    least CHUNK_ROWS rows, and the chunks' tables stay within about 32 MiB.
    """
    most_chunks = max(1, (32 << 20) // (8 * max(chunk_table_size, 1)))
    chunk_rows = max(CHUNK_ROWS, -(-n_samples // min(CHUNKS, most_chunks)))
    return chunk_rows, max(1, -(-n_samples // chunk_rows))


# dense_row_chunks' chunks: how many, and their least rows. Each chunk's
# statistics are merged into the others', at a cost: with 128 chunks, a
# 100,000 x 50 GaussianNB batch of 10 classes took 20% longer at one thread
# than with chunks of 2**16 rows, with 64 about 7% (and 5% less at two).
CHUNKS = 64


CHUNK_ROWS = 512


# gaussian_moments_csr makes a task of each class's rows and block of
# features. Each task finds its block in each of the class's rows by binary
# search and reads that part of the row again, which costs: measured on
# 100,000 documents of the bench's corpus at one thread, each block past the
# first added 0.2 to 0.3 of the one-block time (and 0.1 to 0.5 to
# discrete_count_csr's: its classes take the rows in parts or pieces
# instead, fastnb._discrete.count_csr). BLOCK_COST is that share, taken high.
BLOCK_COST = 0.5
MAX_FEATURE_BLOCKS = 8
BLOCK_FEATURES = 256


def feature_blocks(n_classes, n_features, n_threads):
    """The edges of gaussian_moments_csr's blocks of features (at most
    MAX_FEATURE_BLOCKS of at least BLOCK_FEATURES features): ``n_blocks + 1``
    offsets from 0 to n_features.

    As many blocks as make the slowest thread's share of the work least,
    the tasks taken in rounds of n_threads and each block costing
    BLOCK_COST more: one, unless the classes are fewer than the threads
    or leave most of a last round idle (2 classes on 16 threads: 8 blocks,
    for about a quarter of the time of 2 tasks). The sums are the same
    whatever the blocks.
    """

    def slowest_share(n_blocks):
        tasks = n_classes * n_blocks
        rounds = -(-tasks // n_threads)
        return rounds * (1 + BLOCK_COST * (n_blocks - 1)) / tasks

    most = min(MAX_FEATURE_BLOCKS, max(1, n_features // BLOCK_FEATURES))
    n_blocks = min(range(1, most + 1), key=slowest_share) if n_classes else 1
    return (np.arange(n_blocks + 1) * n_features // n_blocks).astype(np.intp)


# ---------------------------------------------------------------------------
# The count families' CSR counting (fastnb._discrete.count_csr): a task a
# class, classes cut in parts, or rows cut in pieces.
# ---------------------------------------------------------------------------


def row_entries(indptr, label_ptr):
    """The offsets of discrete_count_csr_blocks' entries, row by row: a CSR
    matrix's stored values (``indptr``), each once a label of its row
    (``label_ptr``; once, for hard labels, whose label_ptr is empty)."""
    if not len(label_ptr):
        return indptr
    entries = np.zeros(len(indptr), dtype=np.intp)
    np.cumsum(np.diff(indptr) * np.diff(label_ptr), out=entries[1:])
    return entries


# What cutting a class in parts costs, in the time of counting one value
# of a whole class (measured at one thread on 20,000 documents of the
# bench's corpus, 65,536 features, 2 classes cut in 9 and in 31 parts): the
# values of a part are also checked (_whole), PART_CHECK_COST a value; each
# part's row of n_features is zeroed, counted into from cold, and added to
# its class's, PART_ROW_COST a feature. class_tasks tries parts of a
# TASKS_PER_THREAD'th of a thread's share, for each of them, with their rows
# held within PART_BYTES.
PART_CHECK_COST = 0.15
PART_ROW_COST = 0.7
# The costs leave out finding the parts, two more passes of threads (the
# parts added) and page faults: two classes of 85% and 15% of the values on
# two threads, cut in parts for 0.78 of the time by the costs, took 1.25
# times as long. Parts must do better than PARTS_MARGIN.
PARTS_MARGIN = 0.75
TASKS_PER_THREAD = (1, 2, 4)
PART_BYTES = 64 << 20


def class_tasks(indptr, by_class, n_features, tables, n_threads, cut=True):
    """discrete_count_csr's tasks for a CSR matrix of these row offsets and
    its label entries grouped by class (by_class, of rows_by_class):
    ``(tasks, part_class, dealt)``: each part's task counts into its row
    of part, of class part_class[row]; dealt: whether the tasks are about
    equal, to be dealt out in turn (else taken by the next thread free).

    A task a class, the largest first; or, if ``cut`` and where it would
    end sooner (parts_layout), the larger classes cut in parts of about
    equal numbers of values, a task each, the largest first (and dealt).
    """
    entries_by_class, class_ptr, entry_row, _ = by_class
    tasks = whole_class_tasks(class_ptr)
    no_parts = np.empty(0, dtype=np.intp)
    class_rows = np.diff(class_ptr)
    # The classes' numbers of entries, at hand, and X's of stored values
    # tell whether parts could pay before the classes' values are counted.
    n_rows, n_entries = len(indptr) - 1, len(entries_by_class)
    n_values = (int(indptr[-1]) - int(indptr[0])) * n_entries / max(n_rows, 1)
    if not (cut and parts_might_pay(class_rows, n_values, n_features, n_threads)):
        return largest_first(tasks, class_rows), no_parts, about_equal(class_rows)
    # (On the threads: a new array of one number an entry, written on the
    # main thread, page-faulted for 1 ms of a 100,000-row binary batch.)
    ends = np.empty(n_entries + 1, dtype=np.intp)
    _kernels.entry_value_ends(indptr, entries_by_class, entry_row, ends, n_threads)
    class_values = np.diff(ends[class_ptr])
    most_parts = PART_BYTES // (8 * tables * max(n_features, 1))
    n_parts = parts_layout(class_values, n_features, most_parts, n_threads)
    split = np.flatnonzero(n_parts)
    if not len(split):
        return largest_first(tasks, class_values), no_parts, about_equal(class_values)
    # Part i (0 .. k - 1) of a class of k parts starts at the first entry
    # whose values end at least i / k of the class's values in: whole
    # numbers, as ends are (searchsorted would convert ends to compare
    # them with fractions, 0.5 ms of a 100,000-row binary batch).
    part_class = np.repeat(split, n_parts[split])
    firsts = np.cumsum(n_parts[split]) - n_parts[split]
    part = np.arange(len(part_class)) - np.repeat(firsts, n_parts[split])
    shares = ends[class_ptr[part_class]] - (
        -(class_values[part_class] * part) // n_parts[part_class]
    )
    starts = np.searchsorted(ends, shares).clip(
        class_ptr[part_class], class_ptr[part_class + 1]
    )
    stops = np.empty_like(starts)
    stops[:-1] = starts[1:]
    stops[firsts + n_parts[split] - 1] = class_ptr[split + 1]
    parts = np.column_stack([starts, stops, part_class, np.arange(len(part_class))])
    tasks = np.concatenate([np.delete(tasks, split, axis=0), parts])
    sizes = ends[tasks[:, 1]] - ends[tasks[:, 0]]
    return largest_first(tasks, sizes), part_class, True


def largest_first(tasks, sizes):
    """The tasks in order of their sizes, the largest first (so that the
    threads that take them in turn end about together), C-contiguous."""
    return np.ascontiguousarray(tasks[np.argsort(-sizes, kind="stable")])


def about_equal(sizes):
    """Whether tasks of these sizes are about equal: none over twice the mean."""
    return len(sizes) > 0 and sizes.max() <= 2 * sizes.mean()


def parts_layout(class_values, n_features, most_parts, n_threads):
    """How many parts to cut each class of these numbers of values in (0:
    none) for the least time on n_threads, by the costs above: none, or
    the classes cut in TASKS_PER_THREAD rounds of the threads' parts in
    all (at most most_parts), each class its share of them (the parts
    left over by rounding down to the largest remainders), those of less
    than two parts not cut, if that takes less than PARTS_MARGIN of the
    time of none. (Each class's share rounded up made a part more than
    the rounds: a round more for one thread, a quarter more time for a
    binary text batch on 16 threads.)"""
    best = (
        PARTS_MARGIN * slowest_thread(class_values, n_threads),
        np.zeros_like(class_values),
    )
    for tasks_per_thread in TASKS_PER_THREAD:
        n_tasks = tasks_per_thread * n_threads
        shares = class_values * (n_tasks / class_values.sum())
        n_parts = np.floor(shares).astype(np.intp)
        left = max(n_tasks - int(n_parts.sum()), 0)
        n_parts[np.argsort(n_parts - shares, kind="stable")[:left]] += 1
        n_parts[n_parts < 2] = 0
        if not n_parts.any() or n_parts.sum() > most_parts:
            continue
        cut = n_parts > 0
        values = class_values[cut] / n_parts[cut]
        part_cost = (1 + PART_CHECK_COST) * values + PART_ROW_COST * n_features
        costs = np.r_[class_values[~cut], np.repeat(part_cost, n_parts[cut])]
        time = slowest_thread(costs, n_threads)
        if time < best[0]:
            best = (time, n_parts)
    return best[1]


def slowest_thread(costs, n_threads):
    """The slowest thread's share of tasks of these costs, dealt out in turn
    to n_threads threads, the largest first (about the share of tasks
    taken, the largest first, by the next thread free)."""
    dealt = np.zeros(-(-len(costs) // n_threads) * n_threads)
    dealt[: len(costs)] = np.sort(costs)[::-1]
    return float(dealt.reshape(-1, n_threads).sum(axis=0).max())


def parts_might_pay(sizes, n_values, n_features, n_threads):
    """Whether parts might end in less than PARTS_MARGIN of the time of
    whole classes of these sizes (n_values stored values in all): at best
    each thread counts an even share of the values, checked, into one
    part's row."""
    total = float(sizes.sum())
    if n_threads == 1 or not total:
        return False
    whole = slowest_thread(sizes, n_threads) / total * n_values
    best = (1 + PART_CHECK_COST) * n_values / n_threads + PART_ROW_COST * n_features
    return best < PARTS_MARGIN * whole


def whole_class_tasks(class_ptr):
    """discrete_count_csr's tasks of whole classes: each one's first entry,
    the end of its entries and the class (its fourth column unused)."""
    n_classes = len(class_ptr) - 1
    tasks = np.empty((n_classes, 4), dtype=np.intp)
    tasks[:, 0], tasks[:, 1] = class_ptr[:-1], class_ptr[1:]
    tasks[:, 2], tasks[:, 3] = np.arange(n_classes), -1
    return tasks


# discrete_count_csr_blocks takes this many times the work of a task a class
# (100,000 documents of the bench's corpus, 2 classes: 3.1 times the time at
# one thread, 4.3 times the CPU time at four; 2.7 to 4.3 for 2, 5 and 20
# classes at one and two threads): count_csr cuts the rows in pieces only
# where the threads are more than this many a class, so that the pieces'
# share of a thread is less than the largest class's (2 classes: 8 threads
# or more; on 4 a task a class is about twice as fast), and the classes'
# parts (class_tasks, far less work) do not sum exactly.
PIECES_COST = 3.5

# discrete_count_csr_blocks lays out this many stored values at a time (24
# bytes each, its scratch: 6 MiB, which stays in cache), cut in PIECES
# pieces of rows, the tasks of its first steps, and adds them up a block of
# features at a time, in at most BLOCKS blocks (more blocks scatter the
# values to more places: 256 took half as long again as 64, 1,024 twice).
PIECES_CHUNK_VALUES = 1 << 18
PIECES = 64
BLOCKS = 64


def csr_pieces(indptr, n_features):
    """The layout and scratch of discrete_count_csr_blocks for a CSR matrix
    of these row offsets: pieces of whole rows holding about equal numbers
    of stored values, PIECES a chunk of about PIECES_CHUNK_VALUES values. They
    depend on the data alone (and the kernel's sums on nothing else)."""
    indptr = np.asarray(indptr, dtype=np.intp)
    n_rows, n_values = len(indptr) - 1, int(indptr[-1])
    n_pieces = PIECES * max(1, -(-n_values // PIECES_CHUNK_VALUES))
    # A piece ends after the first row whose end reaches its share of values.
    shares = np.arange(1, n_pieces) * (n_values / n_pieces)
    ends = np.searchsorted(indptr[1:], shares) + 1
    piece_rows = np.unique(np.r_[0, np.minimum(ends, n_rows), n_rows])
    chunk_pieces = np.r_[np.arange(0, len(piece_rows) - 1, PIECES), len(piece_rows) - 1]
    largest_chunk = np.diff(indptr[piece_rows[chunk_pieces]]).max(initial=0)
    n_blocks = min(BLOCKS, 1 << max(0, n_features - 1).bit_length())
    return (
        piece_rows,
        chunk_pieces,
        np.empty((PIECES, n_blocks), dtype=np.intp),
        np.empty(n_blocks + 1, dtype=np.intp),
        np.empty(largest_chunk),
        np.empty(largest_chunk),
        np.empty(largest_chunk, dtype=np.intp),
    )


# ---------------------------------------------------------------------------
# CategoricalNB's counting of codes (fastnb._categorical.count_codes,
# count_sparse_codes).
# ---------------------------------------------------------------------------

# Counting codes at fit (count_codes). Sizes in codes or doubles; they
# depend on the data's shape only, never on the number of threads.
LEAST_CHUNK_CODES = 1 << 14  # least codes in a chunk of rows
CHUNK_ROOM = 1 << 14  # least room for a chunk's table (128 KiB)
COUNT_BUFFER = 1 << 22  # most room for all chunks' tables (32 MiB)


def one_pass_chunks(n_samples, n_features, n_classes):
    """Rows per chunk, chunks, and each chunk's table room, for one-pass counting.

    The rows are cut in CHUNKS chunks (as dense_row_chunks does: four tasks
    a thread on 16 from 2**20 codes on), of LEAST_CHUNK_CODES codes at least. A
    chunk's table has room for a few categories a feature (CHUNK_ROOM at
    least) and all of them together at most COUNT_BUFFER.
    """
    room = min(max(CHUNK_ROOM, 8 * n_features * n_classes), COUNT_BUFFER)
    most_chunks = min(CHUNKS, COUNT_BUFFER // room)
    chunk_rows = max(-(-LEAST_CHUNK_CODES // n_features), -(-n_samples // most_chunks))
    return chunk_rows, -(-n_samples // chunk_rows), room


def sparse_count_chunks(n_samples, nnz, table_size):
    """Rows per chunk and chunks for counting a CSR X's stored codes.

    A chunk a LEAST_CHUNK_CODES stored codes, as many as COUNT_BUFFER holds
    tables of ``table_size`` for: by the data's shape only, never the
    number of threads.
    """
    n_chunks = max(
        1, min(COUNT_BUFFER // max(table_size, 1), -(-nnz // LEAST_CHUNK_CODES))
    )
    chunk_rows = -(-n_samples // n_chunks)
    return chunk_rows, -(-n_samples // chunk_rows)


def category_table_chunks(n_samples, n_features, table_size):
    """Rows per chunk and chunks for counting codes into tables of every
    category (``table_size`` doubles each; count_codes, where a chunk's
    counts outgrew one_pass_chunks' room): as many as COUNT_BUFFER holds,
    of LEAST_CHUNK_CODES codes at least."""
    least_rows = -(-LEAST_CHUNK_CODES // n_features)
    n_chunks = max(1, min(COUNT_BUFFER // table_size, -(-n_samples // least_rows)))
    chunk_rows = -(-n_samples // n_chunks)
    return chunk_rows, -(-n_samples // chunk_rows)
