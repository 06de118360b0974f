"""Time fastnb.dask on a LocalCluster against dask-ml and in-memory fastnb.

A ``distributed.LocalCluster`` of worker processes (by default one per core,
one thread each, each worker's memory bounded by ``--worker-memory``) fits:

- ``fastnb.dask.GaussianNB`` on dense Gaussian data, 10 GB by default, and on
  a smaller data set where ``dask_ml.naive_bayes.GaussianNB``, on the same
  cluster, and ``fastnb.GaussianNB``, in memory in this process, fit the same
  data;
- ``fastnb.dask.MultinomialNB`` on sparse word counts (CSR chunks), 10 GB of
  stored values and indices by default, and on a smaller data set where
  ``fastnb.MultinomialNB`` fits the same data in memory.

Every data set is generated on the workers block by block, labels included:
no data goes from this process to the cluster. A fit on the cluster pays for
that generation, so a pass that only generates X and y and reduces them to
scalars is timed beside the fits; subtracted from fastnb.dask's fit time, it
leaves the fit's own cost. The smaller data set is also fitted from a copy
persisted in the workers' memory beforehand, which times the fits without
any generation. The in-memory data is the same data, generated in this
process by Dask's threads, and before timing the script checks that the fits
on the cluster equal the in-memory fit.

The smaller data set's runs on generated data, then its runs on the
persisted copy and in memory, then the larger data set's runs are timed one
after the other; within each of the three, the implementations run
interleaved, their order rotating between repeats. The figures are medians,
throughputs (GB of X read per second, 1 GB = 10^9 bytes) and ratios. For
every run on the cluster the peak resident memory of the largest worker is
read from Linux's high-water mark (VmHWM, reset before the run); other
systems show n/a. Progress goes to stderr.

Usage::

    python bench/bench_dask.py [--case all|gaussian|text] [--quick]
        [--repeats N] [--workers N] [--threads-per-worker N]
        [--worker-memory SIZE] [--chunk-mb MB]
        [--gaussian-rows N] [--gaussian-compare-rows N]
        [--text-documents N] [--text-compare-documents N]
"""

import argparse
import dataclasses
import functools
import os
import platform
import statistics
import sys
import time

import dask
import dask.array as da
import dask_ml
import dask_ml.naive_bayes
import distributed
import numpy as np
import scipy
import scipy.sparse
from bench_naive_bayes import format_table, positive_int, progress, rotated
from dask.utils import format_bytes, parse_bytes

import fastnb
import fastnb.dask
from fastnb import _simd
from fastnb._threads import effective_n_threads

CASES = ("gaussian", "text")
SEED = 0
GAUSSIAN_FEATURES = 50
# GaussianNB's class is the signs of the first LABEL_BITS features read as
# bits: 2**3 = 8 classes, about equally frequent.
LABEL_BITS = 3
TEXT_FEATURES = 2**18
TEXT_CLASSES = 20
# Words drawn per document; repeated words merge, leaving about 99 distinct.
DRAWS_PER_DOCUMENT = 100
# Word ranks are TEXT_FEATURES * u**RANK_SKEW for uniform u: low ranks are
# the frequent words.
RANK_SKEW = 3
# A stored count is 1 to 3, plus this for the words of the document's class.
CLASS_WORD_BONUS = 2
# A stored word is a float64 count and an int32 index.
BYTES_PER_STORED_WORD = 12
GB = 1e9
MB = 1e6
MIB = 2**20
# The goals: fastnb.dask at least this many times faster than dask-ml
# on the same data, and the cluster's throughput at least this share of one
# process fitting in memory.
DASK_ML_GOAL = 10.0
IN_MEMORY_GOAL = 0.5
# The fitted tables on the cluster and in memory must agree to this, relative
# to the table's largest entry.
CHECK_RTOL = 1e-10

# What the tables call the timed runs: on data generated on the workers as
# the run goes, on a copy persisted in the workers' memory beforehand, and in
# this process's memory.
GENERATE = "generate X, y only"
FASTNB_DASK = "fastnb.dask fit"
FIT_ONLY = "fastnb.dask fit - generation"
DASK_ML = "dask-ml fit"
FASTNB_DASK_PERSISTED = "fastnb.dask fit, persisted"
DASK_ML_PERSISTED = "dask-ml fit, persisted"
IN_MEMORY = "fastnb fit in memory"
# The rows of a table, each with the run its ratio is over: fastnb.dask's fit
# of the same input (in memory: of the persisted copy).
RATIO_BASE = {
    GENERATE: FASTNB_DASK,
    FASTNB_DASK: FASTNB_DASK,
    FIT_ONLY: FASTNB_DASK,
    DASK_ML: FASTNB_DASK,
    FASTNB_DASK_PERSISTED: FASTNB_DASK_PERSISTED,
    DASK_ML_PERSISTED: FASTNB_DASK_PERSISTED,
    IN_MEMORY: FASTNB_DASK_PERSISTED,
}


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much data a run generates."""

    gaussian_rows: int
    gaussian_compare_rows: int
    text_documents: int
    text_compare_documents: int
    chunk_mb: float


FULL_SIZES = Sizes(
    gaussian_rows=25_000_000,
    gaussian_compare_rows=4_000_000,
    text_documents=8_500_000,
    text_compare_documents=1_000_000,
    chunk_mb=100,
)
QUICK_SIZES = Sizes(
    gaussian_rows=500_000,
    gaussian_compare_rows=125_000,
    text_documents=100_000,
    text_compare_documents=25_000,
    chunk_mb=10,
)
SIZE_HELP = {
    "gaussian_rows": "rows of the larger dense data set, of 50 float64 features",
    "gaussian_compare_rows": "rows of the dense data set that dask-ml and "
    "in-memory fastnb fit too",
    "text_documents": "documents of the larger CSR data set",
    "text_compare_documents": "documents of the CSR data set that in-memory "
    "fastnb fits too",
    "chunk_mb": "MB (10^6 bytes) of X per chunk, about",
}


def sign_classes(block):
    """Labels of a block of rows: its first LABEL_BITS features' signs as bits."""
    return (block[:, :LABEL_BITS] > 0) @ (1 << np.arange(LABEL_BITS))


def word_counts(labels, seed, block_id=None):
    """Word counts of a block of documents of the given classes, a CSR matrix.

    Each document draws DRAWS_PER_DOCUMENT word ranks, skewed towards low
    ranks as word frequencies are; repeated words merge. A word's count is
    drawn from 1 to 3, and CLASS_WORD_BONUS is added when the word belongs to
    the document's class (word modulo TEXT_CLASSES equals the class), so the
    classes can be learned. The block's generator is seeded by `seed` and the
    block's position: every block differs, and equal seeds give equal data.
    """
    rng = np.random.default_rng((seed, block_id[0]))
    n_documents = labels.size
    # Sorted uniforms: the cumulative sums of exponential gaps over their
    # total. A monotone map of them gives each document its ranks sorted.
    sums = np.cumsum(
        rng.standard_exponential((n_documents, DRAWS_PER_DOCUMENT + 1)), axis=1
    )
    uniforms = sums[:, :-1] / sums[:, -1:]
    ranks = (TEXT_FEATURES * uniforms**RANK_SKEW).astype(np.int32)
    # A rounded total can make a uniform 1.0, one past the last rank.
    np.minimum(ranks, TEXT_FEATURES - 1, out=ranks)
    first = np.ones(ranks.shape, dtype=bool)
    np.not_equal(ranks[:, 1:], ranks[:, :-1], out=first[:, 1:])
    indices = ranks[first]
    indptr = np.zeros(n_documents + 1, dtype=np.int32)
    np.cumsum(first.sum(axis=1), out=indptr[1:])
    counts = rng.integers(1, 4, indices.size, dtype=np.int8).astype(np.float64)
    document_class = np.repeat(labels, np.diff(indptr))
    counts[indices % TEXT_CLASSES == document_class] += CLASS_WORD_BONUS
    X = scipy.sparse.csr_matrix(
        (counts, indices, indptr), shape=(n_documents, TEXT_FEATURES)
    )
    X.has_canonical_format = True  # sorted and merged above
    return X


def copy_block(block):
    """A copy of a block, NumPy or SciPy."""
    return block.copy()


def stored_bytes(block):
    """Bytes of a CSR block's stored values and indices, as a 1-element array."""
    return np.array([block.data.nbytes + block.indices.nbytes])


def read_status(field):
    """Bytes of one memory field of /proc/self/status, such as VmRSS (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no {field} in /proc/self/status")


def reset_peak_rss():
    """Set this process's peak resident memory, VmHWM, to its current (Linux)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


@dataclasses.dataclass
class Dataset:
    """A labelled data set generated on the workers, as Dask arrays.

    `X_reduced` is a Dask scalar computed from every block of X, and `nbytes`
    the bytes a fit reads: X's when dense, its stored values and indices when
    sparse.
    """

    estimator: str
    label: str
    X: da.Array
    y: da.Array
    X_reduced: da.Array
    nbytes: int


def gaussian_data(n_samples, chunk_mb):
    """Dense standard normal X, labelled by its signs, made on the workers."""
    chunk_rows = max(1, int(chunk_mb * MB) // (GAUSSIAN_FEATURES * 8))
    X = da.random.default_rng(SEED).standard_normal(
        (n_samples, GAUSSIAN_FEATURES), chunks=(chunk_rows, GAUSSIAN_FEATURES)
    )
    y = X.map_blocks(sign_classes, drop_axis=1, dtype=np.int64)
    label = f"{n_samples:,} x {GAUSSIAN_FEATURES}"
    return Dataset("GaussianNB", label, X, y, X.sum(), X.nbytes)


def text_data(n_documents, chunk_mb):
    """Random labels and CSR word counts drawn for them, made on the workers.

    The stored bytes are counted by one untimed pass on the cluster.
    """
    chunk_documents = max(
        1, int(chunk_mb * MB) // (DRAWS_PER_DOCUMENT * BYTES_PER_STORED_WORD)
    )
    y = da.random.default_rng(SEED).integers(
        0, TEXT_CLASSES, n_documents, chunks=chunk_documents
    )
    X = y.map_blocks(
        word_counts,
        SEED,
        new_axis=1,
        chunks=(y.chunks[0], (TEXT_FEATURES,)),
        dtype=np.float64,
        meta=scipy.sparse.csr_matrix((0, 0)),
    )
    X_reduced = X.map_blocks(
        stored_bytes,
        drop_axis=1,
        chunks=((1,) * X.numblocks[0],),
        dtype=np.int64,
        meta=np.empty(0, dtype=np.int64),
    ).sum()
    label = f"{n_documents:,} documents"
    progress(f"MultinomialNB, {label}: counting the stored words")
    nbytes = int(X_reduced.compute())
    return Dataset("MultinomialNB", label, X, y, X_reduced, nbytes)


def describe(data):
    """One line on a data set: size, classes, chunks."""
    n_rows, n_chunks, chunk = data.X.shape[0], data.X.numblocks[0], data.X.chunks[0][0]
    if data.estimator == "GaussianNB":
        what = (
            f": dense float64, {data.nbytes / GB:.2f} GB, {2**LABEL_BITS} classes "
            f"(the signs of the first {LABEL_BITS} features)"
        )
    else:
        n_stored = data.nbytes // BYTES_PER_STORED_WORD
        what = (
            f" x {TEXT_FEATURES:,} words: CSR float64 counts and int32 indices, "
            f"{n_stored:,} stored ({n_stored / n_rows:.1f} a document), "
            f"{data.nbytes / GB:.2f} GB of values and indices, {TEXT_CLASSES} "
            f"classes; a block's statistics are a {TEXT_CLASSES} x "
            f"{TEXT_FEATURES:,} float64 table "
            f"({TEXT_CLASSES * TEXT_FEATURES * 8 / MB:.0f} MB)"
        )
    return (
        f"{data.estimator}, {data.label}{what}; {n_chunks} chunks of {chunk:,} "
        f"rows ({data.nbytes / n_rows * chunk / MB:.0f} MB)"
    )


def in_memory(data):
    """X and y in this process, made by Dask's threads (not the cluster)."""
    progress(f"{data.estimator}, {data.label}: generating it in this process")
    return dask.compute(data.X, data.y, scheduler="threads")


def generate(data):
    """Generate X and y on the workers and reduce each to a scalar."""
    dask.compute(data.X_reduced, data.y.sum())


def fit_fastnb_dask(data):
    """Fit fastnb.dask's estimator on the workers."""
    return getattr(fastnb.dask, data.estimator)().fit(data.X, data.y)


def fit_dask_ml(data):
    """Fit dask-ml's GaussianNB and compute its fitted attributes.

    Its fit leaves Dask arrays as attributes; computing them does the work.
    """
    model = dask_ml.naive_bayes.GaussianNB().fit(data.X, data.y)
    return dask.compute(
        model.theta_, model.sigma_, model.class_count_, model.class_prior_
    )


# What each implementation timed on the cluster runs, given a Dataset.
CLUSTER_RUNNERS = {
    GENERATE: generate,
    FASTNB_DASK: fit_fastnb_dask,
    DASK_ML: fit_dask_ml,
    FASTNB_DASK_PERSISTED: fit_fastnb_dask,
    DASK_ML_PERSISTED: fit_dask_ml,
}


def table_difference(actual, expected):
    """Largest difference of two tables relative to the largest entry of
    `expected`, or infinity when their shapes differ."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return np.inf
    return np.abs(actual - expected).max() / np.abs(expected).max()


def check_tables(what, differences):
    """Exit unless every difference is within CHECK_RTOL; return the largest."""
    for name, difference in differences.items():
        if not difference <= CHECK_RTOL:
            sys.exit(
                f"FAILED: {what}: {name} differs by {difference:.2e} relative to "
                f"its largest entry (tolerance {CHECK_RTOL})"
            )
    return max(differences.values())


def check_gaussian(data, X_memory, y_memory):
    """Exit unless fastnb.dask's and dask-ml's fits equal the in-memory fit."""
    progress(f"GaussianNB, {data.label}: checking the fits against fastnb in memory")
    expected = fastnb.GaussianNB().fit(X_memory, y_memory)
    model = fit_fastnb_dask(data)
    theta, sigma, class_count, _ = fit_dask_ml(data)
    for name, counts in (("fastnb.dask", model.class_count_), ("dask-ml", class_count)):
        if not np.array_equal(counts, expected.class_count_):
            sys.exit(f"FAILED: {name} GaussianNB's class counts differ in memory")
    fastnb_dask = check_tables(
        "fastnb.dask GaussianNB against fastnb in memory",
        {
            "theta_": table_difference(model.theta_, expected.theta_),
            "var_": table_difference(model.var_, expected.var_),
        },
    )
    # dask-ml's sigma_ is the variance without fastnb's added epsilon_.
    dask_ml_ = check_tables(
        "dask-ml GaussianNB against fastnb in memory",
        {
            "theta_": table_difference(theta, expected.theta_),
            "sigma_": table_difference(sigma, expected.var_ - expected.epsilon_),
        },
    )
    print(
        f"check: on {data.label}, fastnb.dask's GaussianNB equals fastnb's in "
        f"memory (class_count_ identical, theta_ and var_ within {fastnb_dask:.1e} "
        f"of their largest entry), and so do dask-ml's class_count_, theta_ and "
        f"sigma_ (within {dask_ml_:.1e}; tolerance {CHECK_RTOL})"
    )


def check_multinomial(data, X_memory, y_memory):
    """Exit unless fastnb.dask's fit equals the in-memory fit."""
    progress(f"MultinomialNB, {data.label}: checking the fit against fastnb in memory")
    expected = fastnb.MultinomialNB().fit(X_memory, y_memory)
    model = fit_fastnb_dask(data)
    for name in ("class_count_", "feature_count_"):
        if not np.array_equal(getattr(model, name), getattr(expected, name)):
            sys.exit(f"FAILED: fastnb.dask MultinomialNB's {name} differs in memory")
    difference = check_tables(
        "fastnb.dask MultinomialNB against fastnb in memory",
        {
            "feature_log_prob_": table_difference(
                model.feature_log_prob_, expected.feature_log_prob_
            )
        },
    )
    print(
        f"check: on {data.label}, fastnb.dask's MultinomialNB equals fastnb's in "
        "memory (class_count_ and feature_count_ identical, feature_log_prob_ "
        f"within {difference:.1e} of its largest entry; tolerance {CHECK_RTOL})"
    )


class WorkerPeaks:
    """The largest worker's peak resident memory over a run, where Linux tells it.

    Each worker's high-water mark (VmHWM) is reset before the run and read
    after it, so that short peaks count too. `supported` is False where the
    reset fails.
    """

    def __init__(self, client):
        self.client = client
        try:
            client.run(reset_peak_rss)
            self.supported = True
        except OSError:
            self.supported = False

    def current(self):
        """The largest worker's resident bytes now."""
        return max(self.client.run(read_status, "VmRSS").values())

    def reset(self):
        """Start every worker's peak again from its current memory."""
        self.client.run(reset_peak_rss)

    def read(self):
        """The largest worker's peak resident bytes since the reset."""
        return max(self.client.run(read_status, "VmHWM").values())


class Timings:
    """Timed runs: seconds of every repeat and the largest worker peak over
    the repeats, by ``(data label, implementation)``."""

    def __init__(self, estimator, repeats, peaks):
        self.estimator = estimator
        self.repeats = repeats
        self.peaks = peaks
        self.seconds = {}
        self.peak_bytes = {}

    def run(self, tasks):
        """Time `tasks`, a list of ``(data label, implementation, function,
        on_cluster)``, interleaved.

        Each repeat runs the tasks in an order rotated by one place, so that
        none always runs first. The workers' peak memory is measured for the
        tasks on the cluster.
        """
        for label, implementation, _, _ in tasks:
            self.seconds[label, implementation] = []
        for repeat in range(self.repeats):
            for label, implementation, function, on_cluster in rotated(tasks, repeat):
                key = label, implementation
                progress(
                    f"{self.estimator}, {label}: repeat {repeat + 1} of "
                    f"{self.repeats}, {implementation}"
                )
                measure_peak = on_cluster and self.peaks.supported
                if measure_peak:
                    self.peaks.reset()
                start = time.perf_counter()
                function()
                self.seconds[key].append(time.perf_counter() - start)
                if measure_peak:
                    peak = self.peaks.read()
                    self.peak_bytes[key] = max(self.peak_bytes.get(key, 0), peak)

    def medians(self, label):
        """``{implementation: median seconds}`` of the runs on the data set
        `label`, with the fit's time minus the generation pass's."""
        medians = {
            implementation: statistics.median(runs)
            for (run_label, implementation), runs in self.seconds.items()
            if run_label == label
        }
        fits, passes = self.seconds[label, FASTNB_DASK], self.seconds[label, GENERATE]
        medians[FIT_ONLY] = statistics.median(
            fit - generation for fit, generation in zip(fits, passes, strict=True)
        )
        return medians


def cluster_tasks(data, implementations):
    """Timed tasks on the cluster: `implementations` (names of the keys of
    CLUSTER_RUNNERS) run on `data`."""
    return [
        (
            data.label,
            implementation,
            functools.partial(CLUSTER_RUNNERS[implementation], data),
            True,
        )
        for implementation in implementations
    ]


def persisted(data):
    """A copy of `data` computed once and held in the workers' memory.

    The copy's blocks have keys of their own, so that the runs on `data`
    still generate it.
    """
    progress(f"{data.estimator}, {data.label}: persisting a copy on the workers")
    X, y = dask.persist(
        data.X.map_blocks(copy_block, dtype=data.X.dtype),
        data.y.map_blocks(copy_block, dtype=data.y.dtype),
    )
    distributed.wait([X, y])
    return dataclasses.replace(data, X=X, y=y)


def format_throughput(nbytes, seconds):
    """GB/s to 2 decimals, or n/a for a time that is not positive."""
    return f"{nbytes / seconds / GB:.2f}" if seconds > 0 else "n/a"


def results_table(timings, data):
    """Median seconds, GB/s, ratio to fastnb.dask's fit and worker peak of the
    runs on `data`."""
    medians = timings.medians(data.label)
    header = ["implementation", "seconds", "GB/s", "/ fastnb.dask fit"]
    header += ["peak worker MiB"]
    rows = []
    for implementation, base in RATIO_BASE.items():
        if implementation not in medians:
            continue
        median = medians[implementation]
        peak = timings.peak_bytes.get((data.label, implementation))
        rows.append(
            [
                implementation,
                f"{median:.3f}",
                format_throughput(data.nbytes, median),
                f"{median / medians[base]:.2f}x",
                "n/a" if peak is None else f"{peak / MIB:,.0f}",
            ]
        )
    return format_table(header, rows)


def goal_lines(timings, full, compare):
    """The issue's goals, against the figures measured."""
    compared = timings.medians(compare.label)
    lines = []
    if DASK_ML in compared:
        lines.append(
            f"dask-ml's fit takes {compared[DASK_ML] / compared[FASTNB_DASK]:.1f}x "
            f"fastnb.dask's on {compare.label} generated on the workers, "
            f"{compared[DASK_ML_PERSISTED] / compared[FASTNB_DASK_PERSISTED]:.1f}x "
            f"on it persisted (goal: at least {DASK_ML_GOAL:.0f}x)"
        )
    in_memory_rate = compare.nbytes / compared[IN_MEMORY]

    def share(data, implementation):
        seconds = timings.medians(data.label)[implementation]
        return f"{data.nbytes / seconds / in_memory_rate:.2f}" if seconds > 0 else "n/a"

    lines.append(
        f"fastnb.dask's GB/s over in-memory fastnb's (goal: at least "
        f"{IN_MEMORY_GOAL}): {share(compare, FASTNB_DASK_PERSISTED)} on "
        f"{compare.label} persisted; generated on the workers, "
        f"{share(compare, FASTNB_DASK)} on {compare.label} and "
        f"{share(full, FASTNB_DASK)} on {full.label}, with the generation "
        f"subtracted {share(compare, FIT_ONLY)} and {share(full, FIT_ONLY)}"
    )
    return "\n".join(lines)


def print_results(timings, full, compare):
    """An estimator's tables, one per data set, and its goals."""
    for data in (full, compare):
        print()
        print(f"{data.estimator}, {data.label}: median of {timings.repeats} repeats")
        print(results_table(timings, data))
    print(
        f"('{FIT_ONLY}' is the median over the repeats of the fit's time minus "
        "the generation pass's; '/ fastnb.dask fit' is over fastnb.dask's fit of "
        "the same input, generated or persisted; in memory, over the persisted)"
    )
    print()
    print(goal_lines(timings, full, compare))


def fit_in_memory(estimator_class, X, y):
    """Fit a new model of fastnb in this process."""
    estimator_class().fit(X, y)


def bench_estimator(full, compare, check, repeats, peaks):
    """Check and time an estimator, and print its tables.

    On `full`, fastnb.dask's fit is timed against the generation pass; on
    `compare` too, and also, for GaussianNB, dask-ml's fit; then fastnb.dask's
    fit (and dask-ml's) on a persisted copy of `compare`, against fastnb's fit
    of the same data in this process's memory. `check` compares the fits on
    `compare` with the in-memory fit first.
    """
    print()
    print(describe(full))
    print(describe(compare))
    X_memory, y_memory = in_memory(compare)
    check(compare, X_memory, y_memory)
    generated, held = [GENERATE, FASTNB_DASK], [FASTNB_DASK_PERSISTED]
    if compare.estimator == "GaussianNB":  # dask-ml's only naive Bayes
        generated.append(DASK_ML)
        held.append(DASK_ML_PERSISTED)
    fit_here = functools.partial(
        fit_in_memory, getattr(fastnb, compare.estimator), X_memory, y_memory
    )
    timings = Timings(compare.estimator, repeats, peaks)
    timings.run(cluster_tasks(compare, generated))
    timings.run(
        cluster_tasks(persisted(compare), held)
        + [(compare.label, IN_MEMORY, fit_here, False)]
    )
    timings.run(cluster_tasks(full, [GENERATE, FASTNB_DASK]))
    print_results(timings, full, compare)


def bench_gaussian(sizes, repeats, peaks):
    """GaussianNB on dense data against dask-ml and fastnb in memory."""
    full = gaussian_data(sizes.gaussian_rows, sizes.chunk_mb)
    compare = gaussian_data(sizes.gaussian_compare_rows, sizes.chunk_mb)
    bench_estimator(full, compare, check_gaussian, repeats, peaks)


def bench_text(sizes, repeats, peaks):
    """MultinomialNB on CSR word counts against fastnb in memory."""
    full = text_data(sizes.text_documents, sizes.chunk_mb)
    compare = text_data(sizes.text_compare_documents, sizes.chunk_mb)
    bench_estimator(full, compare, check_multinomial, repeats, peaks)


def usable_cores():
    """The number of CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def print_header(args, client, peaks):
    """Print what runs where, with which versions."""
    worker_threads = sorted(set(client.run(effective_n_threads).values()))
    print(
        "fastnb.dask on a distributed.LocalCluster, against dask-ml on the same "
        "cluster and fastnb in memory in this process.\n"
        "GB/s is the bytes a fit reads (dense: X; CSR: its stored values and "
        "indices) over the seconds, 1 GB = 10^9 bytes."
    )
    print(f"machine:  {usable_cores()} usable cores, {platform.platform()}")
    print(
        f"cluster:  {args.workers} worker processes x {args.threads_per_worker} "
        f"thread(s), memory_limit {format_bytes(args.worker_memory)} each; "
        f"OpenMP threads of a fastnb call: "
        f"{', '.join(map(str, worker_threads))} in a worker, "
        f"{effective_n_threads()} in this process; {_simd.target} kernels"
    )
    print(
        f"versions: fastnb {fastnb.__version__}, dask {dask.__version__}, "
        f"distributed {distributed.__version__}, dask-ml {dask_ml.__version__}, "
        f"numpy {np.__version__}, scipy {scipy.__version__}, "
        f"Python {platform.python_version()}"
    )
    if peaks.supported:
        memory = (
            "peak worker MiB is the largest worker's peak resident memory in a "
            "run (Linux VmHWM, reset before each run), the largest over the "
            f"repeats; a worker just started holds {peaks.current() / MIB:,.0f} MiB"
        )
    else:
        memory = "peak worker MiB: n/a (needs Linux's /proc/self/clear_refs)"
    print(f"memory:   {memory}")


def parse_args(argv=None):
    """Command-line options, with the sizes resolved into ``args.sizes``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--case",
        choices=("all", *CASES),
        default="all",
        help="gaussian: GaussianNB on dense data; text: MultinomialNB on CSR word "
        "counts; all (default): both",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small data, a smoke test of under a minute",
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="timed runs of each (default 3)"
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=usable_cores(),
        help="worker processes (default: one per usable core, %(default)s here)",
    )
    parser.add_argument(
        "--threads-per-worker",
        type=positive_int,
        default=1,
        help="threads of each worker (default 1)",
    )
    parser.add_argument(
        "--worker-memory",
        type=parse_bytes,
        default="4GiB",
        help="memory_limit of each worker, such as 4GiB (the default) or 2GB",
    )
    for field in dataclasses.fields(Sizes):
        full, quick = getattr(FULL_SIZES, field.name), getattr(QUICK_SIZES, field.name)
        parser.add_argument(
            f"--{field.name.replace('_', '-')}",
            type=float if field.type is float else positive_int,
            help=f"{SIZE_HELP[field.name]} (default {full:,}, --quick {quick:,})",
        )
    args = parser.parse_args(argv)
    given = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(Sizes)
        if getattr(args, field.name) is not None
    }
    args.sizes = dataclasses.replace(QUICK_SIZES if args.quick else FULL_SIZES, **given)
    return args


def main(argv=None):
    """Run the benchmark."""
    args = parse_args(argv)
    progress(
        f"starting a LocalCluster of {args.workers} workers x "
        f"{args.threads_per_worker} thread(s)"
    )
    with (
        distributed.LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads_per_worker,
            processes=True,
            memory_limit=args.worker_memory,
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        peaks = WorkerPeaks(client)
        print_header(args, client, peaks)
        if args.case in ("all", "gaussian"):
            bench_gaussian(args.sizes, args.repeats, peaks)
        if args.case in ("all", "text"):
            bench_text(args.sizes, args.repeats, peaks)


if __name__ == "__main__":
    main()
