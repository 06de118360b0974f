"""Time fastnb against its NumPy reference and scikit-learn.

The cases: the bag-of-words estimators on a synthetic text corpus (20
classes, and the same documents in two classes, the spam/ham shape),
MultinomialNB and BernoulliNB on dense counts, GaussianNB on dense
Gaussian blobs, CategoricalNB on category codes (dense and sparse), and
MixedNB on data of Adult's size and types, against the peer
mixed-naive-bayes when it is installed; and, from the shared data, 20
Newsgroups as scikit-learn's vectorizers make its matrices and a whole
text model from its raw posts (fastnb.text and MultinomialNB). The
implementations of each estimator run interleaved in one process, the order
rotating so that none always runs first; the figures are the ratios of their
median times. A separate, untimed pass measures the peak memory each one
allocates.

With ``--threads 1,2,4``, each fastnb operation is also timed at each
thread count (a scaling table: time, speedup over one thread, ratio to
scikit-learn, GB/s of X read), and its serial share is measured: the time
it spends outside fastnb's parallel kernels at one thread, found by timing
every call of a kernel that takes ``n_threads``. By Amdahl's law that share
caps the speedup on any number of cores. ``--profile`` shows where the
serial time goes. Progress goes to stderr as the run goes.

With ``--spread 16``, nothing is timed: each fastnb operation runs in a
fresh process with 16 OpenMP threads that sleep when they wait, and the
table says how its CPU time spreads over them (how many threads did at
least 1/32 of the work, the busiest thread's share): on a machine of few
cores, the measure of whether every core of a large one would get work
(bench/spread.py).

Usage::

    python bench/bench_naive_bayes.py [--case all|text|binary-text|gaussian|...]
        [--quick] [--repeats N] [--estimators multinomial,complement,bernoulli]
        [--threads 1,2,4,...] [--profile] [--spread T]
"""

import argparse
import contextlib
import cProfile
import dataclasses
import functools
import inspect
import itertools
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
import tracemalloc
from importlib.util import find_spec

import bench_text as text_bench
import numpy as np
import scipy
import sklearn
import sklearn.naive_bayes
from corpus import (
    make_adult_like,
    make_bag_of_words,
    make_categorical,
    make_dense_counts,
    make_gaussian_blobs,
    make_sparse_categorical,
)
from real_data import NEWSGROUPS_ARCHIVE, read_newsgroups, shared_data_dir
from sklearn.feature_extraction.text import (
    CountVectorizer,
    HashingVectorizer,
    TfidfVectorizer,
)
from spread import (
    SPREAD_ENVIRONMENT,
    measure_spread,
    pretend_usable_cpus,
    spread_environment,
)

import fastnb
import fastnb.reference
from fastnb import _simd
from fastnb._threads import effective_n_threads

try:  # the peer of the Adult-size case (pip install mixed-naive-bayes)
    import mixed_naive_bayes
except ImportError:
    mixed_naive_bayes = None
try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:
    threadpool_info = threadpool_limits = None

ESTIMATORS = {
    "multinomial": "MultinomialNB",
    "complement": "ComplementNB",
    "bernoulli": "BernoulliNB",
}
IMPLEMENTATIONS = {
    "fastnb": fastnb,
    "reference": fastnb.reference,
    "sklearn": sklearn.naive_bayes,
}
OPERATIONS = ("fit", "partial_fit", "partial_fit batch", "predict", "predict_proba")
CASES = (
    "text",
    "binary-text",
    "dense-counts",
    "gaussian",
    "categorical",
    "sparse-categorical",
    "adult-size",
    "real-text",
    "text-pipeline",
    "categorical-frames",
)
TEXT_FULL_SHAPE = (200_000, 2**18)
TEXT_QUICK_SHAPE = (20_000, 2**16)
DENSE_COUNTS_FULL_SHAPE = (500_000, 100)
DENSE_COUNTS_QUICK_SHAPE = (100_000, 100)
DENSE_COUNTS_CLASSES = 5
GAUSSIAN_FULL_SHAPE = (1_000_000, 50)
GAUSSIAN_QUICK_SHAPE = (100_000, 50)
GAUSSIAN_CLASSES = 10
CATEGORICAL_FULL_SHAPE = (1_000_000, 20)
CATEGORICAL_QUICK_SHAPE = (100_000, 20)
CATEGORICAL_CLASSES = 5
# CategoricalNB on frames of categorical columns, against the same values as
# str columns: the frame libraries, and the categories of every column.
FRAMES_FULL_SHAPE = (1_000_000, 10)
FRAMES_QUICK_SHAPE = (100_000, 10)
FRAME_LIBRARIES = ("pandas", "polars", "pyarrow")
FRAME_CATEGORIES = 40
SPARSE_CATEGORICAL_FULL_SHAPE = (1_000_000, 200)
SPARSE_CATEGORICAL_QUICK_SHAPE = (100_000, 200)
SPARSE_CATEGORICAL_DENSITY = 0.05
# CategoricalNB on sparse codes: fastnb reads the CSR matrix, fastnb and
# scikit-learn (which refuses sparse X) its dense copy.
SPARSE_RUNS = ("fastnb", "fastnb dense", "sklearn dense")
ADULT_OPERATIONS = ("fit", "predict", "predict_proba")
# Adult-size calls take milliseconds: more repeats steady their medians.
ADULT_LEAST_REPEATS = 31
N_CHUNKS = 10
N_ROWS_AFTER_PARTIAL_FIT = 1000
# Rows of the one partial_fit batch timed apart (a streaming service's batch).
BATCH_ROWS = 100_000
# Probabilities are compared relative to their size; below this both count as 0.
TINY_PROBABILITY = 1e-300
TEXT_PROBA_RTOL = 1e-10
GAUSSIAN_PROBA_RTOL = 1e-9
CATEGORICAL_PROBA_RTOL = 1e-10
# Key of the time taken to read the dense X once, timed beside the operations.
READ_X = ("numpy", "read X")
MIB = 2**20
GB = 1e9
# The real-text case: 20 Newsgroups' posts through scikit-learn's
# vectorizers, their matrices as they come out (CountVectorizer's: int64
# values, indices not sorted), and the first's float64 copy (canonical).
COUNTS = "CountVectorizer()"
REAL_TEXT_VECTORIZERS = {
    COUNTS: CountVectorizer,
    "CountVectorizer(binary=True)": functools.partial(CountVectorizer, binary=True),
    "TfidfVectorizer()": TfidfVectorizer,
    "HashingVectorizer(alternate_sign=False)": functools.partial(
        HashingVectorizer, alternate_sign=False
    ),
}
FLOAT64_COPY = f"{COUNTS}, .astype(float64)"
REAL_TEXT_ESTIMATORS = ("MultinomialNB", "ComplementNB", "BernoulliNB")
REAL_TEXT_OPERATIONS = ("fit", "partial_fit", "predict", "predict_proba")
REAL_TEXT_THREADS = (1, 2)
# BernoulliNB's score of a row holds every absent feature's log(1 - p),
# 2**20 of them for HashingVectorizer's matrix, summed in another order
# than scikit-learn's: probabilities to 2e-10 relative there.
REAL_TEXT_PROBA_RTOL = 1e-9
# Functions --profile lists for each operation.
PROFILE_TOP = 8
# The core counts of the Amdahl caps in the serial-share table.
AMDAHL_CORES = (16, 64)


@dataclasses.dataclass
class Dataset:
    """The benchmark data, with the partial_fit chunks cut in advance."""

    X: "np.ndarray | scipy.sparse.csr_matrix"
    y: np.ndarray
    classes: np.ndarray
    chunks: list
    X_head: "np.ndarray | scipy.sparse.csr_matrix"
    batch: tuple

    @classmethod
    def from_arrays(cls, X, y):
        """Wrap X and y, cut into `N_CHUNKS` row chunks."""
        bounds = np.linspace(0, X.shape[0], N_CHUNKS + 1).astype(int)
        chunks = [(X[a:b], y[a:b]) for a, b in itertools.pairwise(bounds)]
        batch = (X[:BATCH_ROWS], y[:BATCH_ROWS])
        return cls(X, y, np.unique(y), chunks, X[:N_ROWS_AFTER_PARTIAL_FIT], batch)


def run_fit(estimator_class, fitted, data):
    """Fit a new model on the whole data set."""
    estimator_class().fit(data.X, data.y)


def run_partial_fit(estimator_class, fitted, data):
    """Fit a new model chunk by chunk, then predict a few rows.

    The prediction makes implementations that finalise lazily pay for it.
    """
    model = estimator_class()
    for X_chunk, y_chunk in data.chunks:
        model.partial_fit(X_chunk, y_chunk, classes=data.classes)
    model.predict(data.X_head)


def run_partial_fit_batch(estimator_class, fitted, data):
    """Add one batch of BATCH_ROWS rows to a new model."""
    estimator_class().partial_fit(*data.batch, classes=data.classes)


def run_predict(estimator_class, fitted, data):
    """Predict the classes of the whole data set."""
    fitted.predict(data.X)


def run_predict_proba(estimator_class, fitted, data):
    """Predict the class probabilities of the whole data set."""
    fitted.predict_proba(data.X)


RUNNERS = {
    "fit": run_fit,
    "partial_fit": run_partial_fit,
    "partial_fit batch": run_partial_fit_batch,
    "predict": run_predict,
    "predict_proba": run_predict_proba,
}


def supports(estimator_class, operation):
    """Whether the class has the method that `operation` times."""
    return hasattr(estimator_class, operation.split()[0])


def rotated(items, shift):
    """`items` rotated left by `shift` places."""
    shift %= len(items)
    return items[shift:] + items[:shift]


def time_interleaved(groups, repeats):
    """Median seconds per task over repeats, the tasks run interleaved.

    `groups` is a list of non-empty lists of ``(key, function)`` pairs. Each
    repeat runs the groups in order, and the tasks of a group in an order
    rotated by one place per repeat and per group, so that none always runs
    first.
    """
    times = {key: [] for group in groups for key, _ in group}
    for repeat in range(repeats):
        for position, group in enumerate(groups):
            for key, function in rotated(group, repeat + position):
                start = time.perf_counter()
                function()
                times[key].append(time.perf_counter() - start)
    return {key: statistics.median(ts) for key, ts in times.items()}


def operation_groups(classes, fitted, data):
    """The ``(implementation, operation)`` tasks, one group per operation."""
    groups = [
        [
            (
                (name, operation),
                functools.partial(
                    RUNNERS[operation], classes[name], fitted[name], data
                ),
            )
            for name in classes
            if supports(classes[name], operation)
        ]
        for operation in OPERATIONS
    ]
    return [group for group in groups if group]


def traced_peak(function, *args):
    """Peak bytes allocated while `function` runs, as tracemalloc sees them."""
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure_memory(classes, fitted, data):
    """Peak extra bytes of fit, predict and predict_proba per implementation."""
    return {
        (name, operation): traced_peak(
            RUNNERS[operation], classes[name], fitted[name], data
        )
        for operation in ("fit", "predict", "predict_proba")
        for name in classes
    }


def max_relative_difference(actual, expected):
    """Largest elementwise relative difference, ignoring entries tiny in both."""
    scale = np.maximum(np.abs(actual), np.abs(expected))
    significant = scale > TINY_PROBABILITY
    difference = np.abs(actual - expected)[significant] / scale[significant]
    return difference.max(initial=0.0)


def check_agreement(estimator_name, fitted, X, rtol):
    """Exit unless fastnb and the reference predict as scikit-learn does on X.

    The classes must be identical and predict_proba within `rtol` relative.
    """
    expected = fitted["sklearn"].predict(X)
    expected_proba = fitted["sklearn"].predict_proba(X)
    checked = [name for name in ("fastnb", "reference") if name in fitted]
    worst = 0.0
    for name in checked:
        n_differ = np.count_nonzero(fitted[name].predict(X) != expected)
        if n_differ:
            sys.exit(
                f"FAILED: {name}.{estimator_name}.predict differs from scikit-learn "
                f"on {n_differ} of {X.shape[0]} rows"
            )
        difference = max_relative_difference(
            fitted[name].predict_proba(X), expected_proba
        )
        if not difference <= rtol:
            sys.exit(
                f"FAILED: {name}.{estimator_name}.predict_proba differs from "
                f"scikit-learn by {difference:.2e} relative (tolerance {rtol})"
            )
        worst = max(worst, difference)
    missing = "" if "reference" in fitted else "; the reference has none"
    print(
        f"check: {' and '.join(checked)} {estimator_name} predict as scikit-learn "
        f"does (identical classes, predict_proba within {worst:.1e} relative, "
        f"tolerance {rtol}){missing}"
    )


def format_table(header, rows):
    """Right-aligned columns under `header`, the first column left-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def timing_table(medians):
    """Median seconds per implementation and the ratios to fastnb."""
    header = ["operation", "fastnb s", "reference s", "sklearn s"]
    header += ["sklearn/fastnb", "reference/fastnb"]
    rows = []
    for operation in OPERATIONS:
        fast, reference, sk = (
            medians.get((name, operation)) for name in IMPLEMENTATIONS
        )
        rows.append(
            [operation, *(format_seconds(s) for s in (fast, reference, sk))]
            + [format_ratio(s, fast) for s in (sk, reference)]
        )
    return format_table(header, rows)


def format_seconds(seconds):
    """Seconds to 4 decimals, or n/a when the operation was not run."""
    return "n/a" if seconds is None else f"{seconds:.4f}"


def format_ratio(seconds, fastnb_seconds):
    """How many times faster fastnb is, or n/a when the other was not run."""
    return "n/a" if seconds is None else f"{seconds / fastnb_seconds:.1f}x"


def format_mib(n_bytes):
    """Bytes as MiB to 1 decimal, or n/a when not measured."""
    return "n/a" if n_bytes is None else f"{n_bytes / MIB:.1f}"


def data_nbytes(X):
    """Bytes held by X's arrays, dense or CSR."""
    if scipy.sparse.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def memory_table(peaks, data):
    """Peak extra MiB per implementation, with the input and outputs for scale."""
    header = ["peak extra MiB", *IMPLEMENTATIONS]
    rows = [
        [op, *(format_mib(peaks.get((name, op))) for name in IMPLEMENTATIONS)]
        for op in ("fit", "predict", "predict_proba")
    ]
    n_samples, n_classes = data.y.size, data.classes.size
    proba_bytes = n_samples * n_classes * np.dtype(np.float64).itemsize
    return (
        format_table(header, rows)
        + f"\n(for scale: X is {format_mib(data_nbytes(data.X))} MiB; predict "
        f"returns {format_mib(n_samples * data.y.itemsize)} MiB of "
        f"{data.y.dtype} labels; predict_proba a {n_samples:,} x {n_classes} "
        f"float64 array, {format_mib(proba_bytes)} MiB)"
    )


def read_table(medians, X):
    """Fit times against the time to read X once, and fit throughputs."""
    read = medians[READ_X]
    header = ["fit vs reading X", "seconds", "x read X", "GB/s"]
    rows = [
        ["read X: X.sum()", format_seconds(read), "1.0x", f"{X.nbytes / read / GB:.2f}"]
    ]
    for name in IMPLEMENTATIONS:
        seconds = medians.get((name, "fit"))
        rows.append(
            [
                f"{name} fit",
                format_seconds(seconds),
                "n/a" if seconds is None else f"{seconds / read:.1f}x",
                "n/a" if seconds is None else f"{X.nbytes / seconds / GB:.2f}",
            ]
        )
    return (
        format_table(header, rows)
        + f"\n(X.sum() reads X's {X.nbytes / GB:.2f} GB once, NumPy on one "
        "thread; GB/s is X.nbytes / seconds)"
    )


def openmp_threads():
    """Return the number of OpenMP threads and where the figure comes from."""
    if threadpool_info is not None:
        counts = [
            info["num_threads"]
            for info in threadpool_info()
            if info["user_api"] == "openmp"
        ]
        if counts:
            return f"{max(counts)} (OpenMP, threadpoolctl)"
    return f"{os.cpu_count()} (os.cpu_count)"


def print_header(repeats):
    """Print what was run, with which versions."""
    print(
        "fastnb vs its NumPy reference vs scikit-learn, interleaved in one process.\n"
        "The ratios are the figures (how many times faster fastnb is); absolute "
        "seconds depend on the machine and its load."
    )
    print(f"threads:  {openmp_threads()}")
    print(
        f"versions: fastnb {fastnb.__version__}, scikit-learn {sklearn.__version__}, "
        f"numpy {np.__version__}, scipy {scipy.__version__}, "
        f"Python {platform.python_version()}"
    )
    print(
        f"timing:   median of {repeats} repeats; partial_fit is {N_CHUNKS} chunks "
        f"then predict on {N_ROWS_AFTER_PARTIAL_FIT:,} rows; partial_fit batch "
        f"is one batch of the first {BATCH_ROWS:,} rows into a new model"
    )


def bench_estimator(estimator_name, data, args, repeats, rtol, time_read=False):
    """Check, measure and time one estimator's implementations, print tables.

    An implementation without the estimator (the reference may lack one) is
    left out and shows n/a. With `time_read`, the time to read the dense X
    once is timed among the operations and the fit times compared with it.
    With ``--spread``, only the spread of fastnb's operations over threads.
    """
    if args.spread:
        print()
        print(f"{estimator_name}: CPU time over {args.spread} OpenMP threads")
        print(spread_table(fastnb_tasks(estimator_name, data), args.spread))
        return
    progress(f"{estimator_name}: fitting each implementation, checking agreement")
    classes = {
        name: getattr(module, estimator_name)
        for name, module in IMPLEMENTATIONS.items()
        if hasattr(module, estimator_name)
    }
    fitted = {
        name: estimator_class().fit(data.X, data.y)
        for name, estimator_class in classes.items()
    }
    print()
    check_agreement(estimator_name, fitted, data.X, rtol)
    progress(f"{estimator_name}: peak memory")
    peaks = measure_memory(classes, fitted, data)
    groups = operation_groups(classes, fitted, data)
    if time_read:
        groups.insert(0, [(READ_X, data.X.sum)])
    progress(f"{estimator_name}: timing {repeats} repeats of every operation")
    medians = time_interleaved(groups, repeats)
    print(f"{estimator_name}: median seconds, and how many times faster fastnb is")
    print(timing_table(medians))
    if time_read:
        print()
        print(read_table(medians, data.X))
    print()
    print(memory_table(peaks, data))
    bench_threads(estimator_name, data, medians, args, repeats)


def make_dense_case(args, message, make, shapes, n_classes):
    """A dense case's data, made by ``make`` at the shape --quick picks from
    ``shapes`` (quick, full), with progress: ``(X, data, seconds)``, the
    seconds those of making it."""
    n_samples, n_features = shapes[0] if args.quick else shapes[1]
    progress(message)
    start = time.perf_counter()
    X, y = make(n_samples=n_samples, n_features=n_features, n_classes=n_classes)
    return X, Dataset.from_arrays(X, y), time.perf_counter() - start


def dense_summary(X):
    """X's shape, type and size, for a dense case's header."""
    return (
        f"{X.shape[0]:,} samples x {X.shape[1]} features, dense {X.dtype} "
        f"C-contiguous ({X.nbytes / MIB:.1f} MiB)"
    )


def bench_text(args, repeats):
    """The bag-of-words estimators on a synthetic text corpus."""
    n_documents, n_features = TEXT_QUICK_SHAPE if args.quick else TEXT_FULL_SHAPE
    progress("making the text corpus")
    start = time.perf_counter()
    X, y = make_bag_of_words(n_documents=n_documents, n_features=n_features)
    data = Dataset.from_arrays(X, y)
    print()
    print(
        f"corpus:   {n_documents:,} documents x {n_features:,} features, CSR "
        f"{X.dtype}, {X.indices.dtype} indices, nnz {X.nnz:,} "
        f"({X.nnz / n_documents:.1f} per document), {data.classes.size} classes "
        f"(made in {time.perf_counter() - start:.1f} s)"
    )
    for estimator_name in args.estimators or [ESTIMATORS["multinomial"]]:
        bench_estimator(estimator_name, data, args, repeats, TEXT_PROBA_RTOL)


def bench_binary_text(args, repeats):
    """MultinomialNB on the text corpus in two classes (spam/ham's shape)."""
    n_documents, n_features = TEXT_QUICK_SHAPE if args.quick else TEXT_FULL_SHAPE
    progress("making the text corpus, in two classes")
    X, y = make_bag_of_words(n_documents=n_documents, n_features=n_features)
    data = Dataset.from_arrays(X, y % 2)
    print()
    print(
        f"corpus:   {n_documents:,} documents x {n_features:,} features, CSR, "
        f"nnz {X.nnz:,}, the text case's classes taken modulo 2: 2 classes"
    )
    bench_estimator(ESTIMATORS["multinomial"], data, args, repeats, TEXT_PROBA_RTOL)


def bench_dense_counts(args, repeats):
    """MultinomialNB and BernoulliNB on dense counts, zeros and nonzeros mixed."""
    X, data, seconds = make_dense_case(
        args,
        "making the dense counts",
        make_dense_counts,
        (DENSE_COUNTS_QUICK_SHAPE, DENSE_COUNTS_FULL_SHAPE),
        DENSE_COUNTS_CLASSES,
    )
    print()
    print(
        f"counts:   {dense_summary(X)}, {np.mean(X == 0):.0%} zeros, "
        f"{data.classes.size} classes (made in {seconds:.1f} s)"
    )
    # scikit-learn's and the reference's products of dense X run in BLAS,
    # whose idle threads (OpenBLAS's) spin for over 100 ms after a call: on
    # 2 cores they took the cores from the next implementation's call
    # (fastnb's fit 13.5 ms right after scikit-learn's predict, 4.8 ms
    # alone), and BLAS on one thread took scikit-learn no longer here.
    one_blas_thread = (
        threadpool_limits(limits=1, user_api="blas")
        if threadpool_limits is not None
        else contextlib.nullcontext()
    )
    print("BLAS:     one thread for scikit-learn and the reference (see the code)")
    with one_blas_thread:
        for estimator_name in ("MultinomialNB", "BernoulliNB"):
            bench_estimator(estimator_name, data, args, repeats, TEXT_PROBA_RTOL)


def bench_gaussian(args, repeats):
    """GaussianNB on dense Gaussian blobs."""
    X, data, seconds = make_dense_case(
        args,
        "making the Gaussian blobs",
        make_gaussian_blobs,
        (GAUSSIAN_QUICK_SHAPE, GAUSSIAN_FULL_SHAPE),
        GAUSSIAN_CLASSES,
    )
    print()
    print(
        f"blobs:    {dense_summary(X)}, {data.classes.size} classes "
        f"(made in {seconds:.1f} s)"
    )
    bench_estimator(
        "GaussianNB", data, args, repeats, GAUSSIAN_PROBA_RTOL, time_read=True
    )


def bench_categorical(args, repeats):
    """CategoricalNB on dense category codes."""
    X, data, seconds = make_dense_case(
        args,
        "making the category codes",
        make_categorical,
        (CATEGORICAL_QUICK_SHAPE, CATEGORICAL_FULL_SHAPE),
        CATEGORICAL_CLASSES,
    )
    n_categories = X.max(axis=0) + 1
    print()
    print(
        f"codes:    {dense_summary(X)}, "
        f"{n_categories.min()} to {n_categories.max()} categories per feature "
        f"({n_categories.sum()} in all), {data.classes.size} classes "
        f"(made in {seconds:.1f} s)"
    )
    bench_estimator("CategoricalNB", data, args, repeats, CATEGORICAL_PROBA_RTOL)


def bench_sparse_categorical(args, repeats):
    """CategoricalNB on sparse codes: CSR for fastnb, dense for both.

    scikit-learn refuses sparse X; fastnb reads the CSR matrix (code 0 where
    nothing is stored) and the same codes dense, the input a user of
    scikit-learn would have to make.
    """
    n_samples, n_features = (
        SPARSE_CATEGORICAL_QUICK_SHAPE if args.quick else SPARSE_CATEGORICAL_FULL_SHAPE
    )
    progress("making the sparse category codes")
    start = time.perf_counter()
    X, y = make_sparse_categorical(
        n_samples=n_samples,
        n_features=n_features,
        n_classes=CATEGORICAL_CLASSES,
        density=SPARSE_CATEGORICAL_DENSITY,
    )
    sparse_data, dense_data = (
        Dataset.from_arrays(X, y),
        Dataset.from_arrays(X.toarray(), y),
    )
    print()
    print(
        f"codes:    {n_samples:,} samples x {n_features} features, CSR {X.dtype}, "
        f"{X.indices.dtype} indices, nnz {X.nnz:,} "
        f"({X.nnz / (n_samples * n_features):.1%} of the codes, the rest 0); "
        f"dense copy {X.dtype} ({dense_data.X.nbytes / MIB:.1f} MiB); "
        f"{sparse_data.classes.size} classes "
        f"(made in {time.perf_counter() - start:.1f} s)"
    )
    if args.spread:
        bench_estimator("CategoricalNB", sparse_data, args, repeats, None)
        return
    runs = {
        "fastnb": (fastnb.CategoricalNB, sparse_data),
        "fastnb dense": (fastnb.CategoricalNB, dense_data),
        "sklearn dense": (sklearn.naive_bayes.CategoricalNB, dense_data),
    }
    progress("sparse CategoricalNB: fitting each, checking agreement")
    fitted = {name: cls().fit(data.X, data.y) for name, (cls, data) in runs.items()}
    expected = fitted["sklearn dense"].predict_proba(dense_data.X)
    for name in ("fastnb", "fastnb dense"):
        data = runs[name][1]
        if (
            fitted[name].predict(data.X)
            != fitted["sklearn dense"].predict(dense_data.X)
        ).any():
            sys.exit(f"FAILED: {name} CategoricalNB.predict differs from scikit-learn")
        difference = max_relative_difference(
            fitted[name].predict_proba(data.X), expected
        )
        if not difference <= CATEGORICAL_PROBA_RTOL:
            sys.exit(
                f"FAILED: {name} CategoricalNB.predict_proba differs from "
                f"scikit-learn by {difference:.2e} relative"
            )
    print(
        "check: fastnb on CSR and dense predict as scikit-learn does on dense "
        f"(tolerance {CATEGORICAL_PROBA_RTOL})"
    )
    progress("sparse CategoricalNB: peak memory")
    peaks = {
        (name, operation): traced_peak(RUNNERS[operation], cls, fitted[name], data)
        for operation in ("fit", "predict", "predict_proba")
        for name, (cls, data) in runs.items()
    }
    groups = [
        [
            (
                (name, operation),
                functools.partial(RUNNERS[operation], cls, fitted[name], data),
            )
            for name, (cls, data) in runs.items()
        ]
        for operation in OPERATIONS
    ]
    progress(f"sparse CategoricalNB: timing {repeats} repeats of every operation")
    medians = time_interleaved(groups, repeats)
    print(
        "CategoricalNB on sparse codes: median seconds, and how many times faster "
        "fastnb on CSR is"
    )
    print(runs_table(medians, SPARSE_RUNS, OPERATIONS))
    print()
    header = ["peak extra MiB", *SPARSE_RUNS]
    rows = [
        [op, *(format_mib(peaks[name, op]) for name in SPARSE_RUNS)]
        for op in ("fit", "predict", "predict_proba")
    ]
    print(format_table(header, rows))
    print(
        f"(for scale: the CSR X is {format_mib(data_nbytes(X))} MiB, the dense "
        f"copy {format_mib(dense_data.X.nbytes)} MiB)"
    )
    fastnb_medians = {
        ("fastnb", operation): medians["fastnb", operation] for operation in OPERATIONS
    }
    bench_threads("CategoricalNB", sparse_data, fastnb_medians, args, repeats)


def runs_table(medians, runs, operations):
    """Median seconds of each run (the first is fastnb's) per operation, and
    how many times faster than each other run fastnb is."""
    header = ["operation", *(f"{name} s" for name in runs)]
    header += [f"{name}/fastnb" for name in runs[1:]]
    rows = []
    for operation in operations:
        seconds = [medians.get((name, operation)) for name in runs]
        rows.append(
            [operation, *(format_seconds(s) for s in seconds)]
            + [format_ratio(s, seconds[0]) for s in seconds[1:]]
        )
    return format_table(header, rows)


class ScikitLearnMixedNB:
    """What scikit-learn offers for mixed columns: GaussianNB on the numeric
    ones and CategoricalNB on the codes, their joint log-likelihoods added
    (the prior counted once)."""

    def __init__(self, numeric, categorical):
        self.numeric, self.categorical = numeric, categorical

    def fit(self, X, y):
        self.gaussian_ = sklearn.naive_bayes.GaussianNB().fit(X[:, self.numeric], y)
        self.categorical_ = sklearn.naive_bayes.CategoricalNB().fit(
            X[:, self.categorical], y
        )
        self.classes_ = self.gaussian_.classes_
        return self

    def _joint_log_likelihood(self, X):
        return (
            self.gaussian_.predict_joint_log_proba(X[:, self.numeric])
            + self.categorical_.predict_joint_log_proba(X[:, self.categorical])
            - self.categorical_.class_log_prior_
        )

    def predict(self, X):
        return self.classes_[np.argmax(self._joint_log_likelihood(X), axis=1)]

    def predict_proba(self, X):
        return scipy.special.softmax(self._joint_log_likelihood(X), axis=1)


def bench_adult_size(args, repeats):
    """MixedNB on data of Adult's size and types, against the peer
    mixed-naive-bayes (when installed) and scikit-learn's two estimators.

    Fits on the 32,561 training rows, scores the 16,281 test rows: the size
    of most tables, where the work of a call is milliseconds and what goes
    around the kernels counts.
    """
    repeats = max(repeats, ADULT_LEAST_REPEATS)
    X_train, y_train, X_test, _ = make_adult_like()
    numeric, categorical = list(range(6)), list(range(6, 14))
    print()
    print(
        f"adult:    {len(X_train):,} training and {len(X_test):,} test rows, "
        "Adult's shape: 6 normal columns and 8 of codes (2 to 42 categories), "
        "float64, 2 classes"
    )
    models = {
        "fastnb": lambda: fastnb.MixedNB(
            families={"gaussian": numeric, "categorical": categorical}
        ),
        # (a new one each fit: a refit of mixed-naive-bayes 0.0.3 fails)
        "mixed-naive-bayes": mixed_naive_bayes
        and (lambda: mixed_naive_bayes.MixedNB(categorical_features=categorical)),
        "sklearn": lambda: ScikitLearnMixedNB(numeric, categorical),
    }
    models = {name: make for name, make in models.items() if make}
    fitted = {name: make().fit(X_train, y_train) for name, make in models.items()}
    expected = fitted["sklearn"].predict_proba(X_test)
    if (fitted["fastnb"].predict(X_test) != fitted["sklearn"].predict(X_test)).any():
        sys.exit("FAILED: MixedNB.predict differs from scikit-learn's two estimators")
    difference = max_relative_difference(
        fitted["fastnb"].predict_proba(X_test), expected
    )
    if not difference <= GAUSSIAN_PROBA_RTOL:
        sys.exit(
            "FAILED: MixedNB.predict_proba differs from scikit-learn's two "
            f"estimators by {difference:.2e} relative"
        )
    print(
        "check: fastnb's MixedNB predicts as scikit-learn's GaussianNB and "
        f"CategoricalNB together (tolerance {GAUSSIAN_PROBA_RTOL})"
    )
    if mixed_naive_bayes is None:
        print(
            "mixed-naive-bayes: not installed (pip install mixed-naive-bayes), "
            "left out of the table"
        )
    runners = {
        "fit": lambda make, model: make().fit(X_train, y_train),
        "predict": lambda make, model: model.predict(X_test),
        "predict_proba": lambda make, model: model.predict_proba(X_test),
    }
    groups = [
        [
            (
                (name, operation),
                functools.partial(runners[operation], make, fitted[name]),
            )
            for name, make in models.items()
        ]
        for operation in ADULT_OPERATIONS
    ]
    progress(f"Adult-size MixedNB: timing {repeats} repeats of every operation")
    medians = time_interleaved(groups, repeats)
    print(
        f"MixedNB, Adult's size: median seconds of {repeats} repeats, and how many "
        "times faster fastnb is"
    )
    # The runs made: a peer not installed has no column of n/a.
    print(runs_table(medians, tuple(models), ADULT_OPERATIONS))


def frames_of(library, codes, words):
    """``(categorical, strings)``: the columns (codes into words) as a frame
    of ``library`` twice, of categorical columns (pandas' category, polars'
    Categorical, Arrow's dictionary) and of str columns."""
    import pandas as pd

    names = [f"c{j}" for j in range(codes.shape[1])]
    categorical = pd.DataFrame(
        {
            name: pd.Categorical.from_codes(codes[:, j], categories=words)
            for j, name in enumerate(names)
        }
    )
    strings = pd.DataFrame({name: words[codes[:, j]] for j, name in enumerate(names)})
    if library == "polars":
        import polars as pl

        return pl.from_pandas(categorical), pl.from_pandas(strings)
    if library == "pyarrow":
        import pyarrow as pa

        return (
            pa.Table.from_pandas(categorical, preserve_index=False),
            pa.Table.from_pandas(strings, preserve_index=False),
        )
    return categorical, strings


def bench_categorical_frames(args, repeats):
    """CategoricalNB's fit of a frame of categorical columns, read by their
    codes, against the same values as str columns, read a value at a time,
    in each frame library installed (pandas is needed to make them)."""
    print()
    installed = [name for name in FRAME_LIBRARIES if find_spec(name) is not None]
    if "pandas" not in installed:
        print(
            "categorical-frames: skipped: pandas is not installed (pip install pandas)"
        )
        return
    n_samples, n_features = FRAMES_QUICK_SHAPE if args.quick else FRAMES_FULL_SHAPE
    rng = np.random.default_rng(0)
    codes = rng.integers(0, FRAME_CATEGORIES, (n_samples, n_features))
    words = np.array([f"word{i:02d}" for i in range(FRAME_CATEGORIES)], dtype=object)
    y = rng.integers(0, CATEGORICAL_CLASSES, n_samples)
    print(
        f"frames:   {n_samples:,} rows x {n_features} columns of {FRAME_CATEGORIES} "
        f"categories (strings), {CATEGORICAL_CLASSES} classes, in "
        f"{', '.join(installed)}"
    )
    missing = [name for name in FRAME_LIBRARIES if name not in installed]
    if missing:
        print(f"categorical-frames: {', '.join(missing)} not installed, left out")
    frames = {library: frames_of(library, codes, words) for library in installed}
    expected = fastnb.CategoricalNB().fit(words[codes], y)
    for library, pair in frames.items():
        for frame in pair:
            model = fastnb.CategoricalNB().fit(frame, y)
            same = all(
                np.array_equal(a, b)
                for a, b in zip(
                    model.category_count_, expected.category_count_, strict=True
                )
            ) and all(
                a.tolist() == b.tolist()
                for a, b in zip(model.categories_, expected.categories_, strict=True)
            )
            if not same:
                sys.exit(f"FAILED: CategoricalNB on a {library} frame is another model")
    print("check: every frame gives the model of the same values as an object array")
    # A group a kind, its libraries taking turns: a large allocation's cost
    # swings between calls (the kernel's huge pages, when memory must first
    # be compacted), and no library keeps the same turn.
    groups = [
        [
            ((library, kind), functools.partial(fit_categorical, pair[k], y))
            for library, pair in frames.items()
        ]
        for k, kind in enumerate(("categorical", "str"))
    ]
    progress(f"CategoricalNB on frames: timing {repeats} repeats")
    medians = time_interleaved(groups, repeats)
    header = ["library", "categorical s", "str s", "str/categorical"]
    rows = [
        [
            library,
            format_seconds(medians[library, "categorical"]),
            format_seconds(medians[library, "str"]),
            format_ratio(medians[library, "str"], medians[library, "categorical"]),
        ]
        for library in frames
    ]
    print(
        f"CategoricalNB fit of the frame: median seconds of {repeats} repeats, and "
        "how many times faster categorical columns are than str ones"
    )
    print(format_table(header, rows))


def fit_categorical(X, y):
    """A new CategoricalNB fitted on X, y."""
    fastnb.CategoricalNB().fit(X, y)


def real_text_matrices():
    """20 Newsgroups' training and test posts through each of
    REAL_TEXT_VECTORIZERS (fitted on the training posts), and the first's
    matrices as float64: ``({name: (X_train, X_test, seconds)}, y_train,
    y_test)``, seconds those of vectorizing; None without the data."""
    archive = shared_data_dir() / NEWSGROUPS_ARCHIVE
    if not archive.exists():
        return None
    progress(f"reading {archive}")
    (train, y_train), (test, y_test) = read_newsgroups(archive)
    matrices = {}
    for name, make in REAL_TEXT_VECTORIZERS.items():
        progress(f"vectorizing with scikit-learn's {name}")
        start = time.perf_counter()
        vectorizer = make()
        X_train = vectorizer.fit_transform(train)
        X_test = vectorizer.transform(test)
        matrices[name] = (X_train, X_test, time.perf_counter() - start)
    X_train, X_test, _ = matrices[COUNTS]
    matrices[FLOAT64_COPY] = (X_train.astype(np.float64), X_test.astype(np.float64), 0)
    return matrices, y_train, y_test


def matrix_summary(X):
    """A sparse matrix's shape, dtypes and layout, as an estimator gets it."""
    return (
        f"{X.shape[0]:,} x {X.shape[1]:,}, {X.dtype} values, {X.indices.dtype} "
        f"indices, {'sorted' if X.has_sorted_indices else 'not sorted'}, "
        f"nnz {X.nnz:,}"
    )


def bench_real_text(args, repeats):
    """The text estimators on 20 Newsgroups as scikit-learn's vectorizers
    make its matrices, fastnb at one and two threads against scikit-learn:
    what users feed the library, where the synthetic corpus is float64 with
    sorted indices. Skips, naming the file, without the shared data."""
    found = real_text_matrices()
    if found is None:
        print()
        print(
            f"real-text: skipped: no {NEWSGROUPS_ARCHIVE} in {shared_data_dir()} "
            "($FASTNB_DATA_DIR, else shared/data beside the checkout)"
        )
        return
    matrices, y_train, y_test = found
    classes = np.unique(y_train)
    thread_counts = args.threads or REAL_TEXT_THREADS
    print()
    print(
        f"real text: 20 Newsgroups, {len(y_train):,} training and {len(y_test):,} "
        f"test posts, {classes.size} classes, through scikit-learn's vectorizers "
        "(fitted on the training posts; seconds of fit_transform and transform)"
    )
    for name, (X_train, _, seconds) in matrices.items():
        made = f"{seconds:.2f} s" if seconds else "a copy"
        print(f"  {name}: {matrix_summary(X_train)} ({made})")
    ratios = {}
    for name, (X_train, X_test, _) in matrices.items():
        data = Dataset.from_arrays(X_train, y_train)
        for estimator_name in REAL_TEXT_ESTIMATORS:
            fast = getattr(fastnb, estimator_name)
            tasks, fitted = real_text_tasks(fast, data, X_test)
            if args.spread:
                print()
                print(
                    f"{estimator_name} on {name}: CPU time over {args.spread} threads"
                )
                print(spread_table(tasks, args.spread))
                continue
            slow = getattr(sklearn.naive_bayes, estimator_name)
            reference = slow().fit(X_train, y_train)
            check_real_text(fitted, reference, X_test, f"{estimator_name} on {name}")
            others = {
                "fit": lambda slow=slow, data=data: slow().fit(data.X, data.y),
                "partial_fit": functools.partial(run_partial_fit, slow, None, data),
                "predict": functools.partial(reference.predict, X_test),
                "predict_proba": functools.partial(reference.predict_proba, X_test),
            }
            groups = [
                [(("sklearn", op), others[op])]
                + [
                    ((f"fastnb {n}", op), text_bench.with_threads(tasks[op], n))
                    for n in thread_counts
                ]
                for op in REAL_TEXT_OPERATIONS
            ]
            progress(f"{estimator_name} on {name}: timing {repeats} repeats")
            medians = time_interleaved(groups, repeats)
            for op in REAL_TEXT_OPERATIONS:
                for n in thread_counts:
                    ratios[name, estimator_name, op, n] = (
                        medians["sklearn", op] / medians[f"fastnb {n}", op]
                    )
            print()
            print(f"{estimator_name} on {name}: median seconds")
            print(threads_table(medians, thread_counts))
    if args.spread:
        return
    int64_against_float64(matrices, y_train, max(thread_counts), repeats)
    for n in thread_counts:
        print()
        print(
            f"real text: how many times faster than scikit-learn fastnb is, at {n} "
            f"thread(s) (scikit-learn: its own threads)"
        )
        header = ["matrix", "estimator", *REAL_TEXT_OPERATIONS]
        rows = [
            [name, estimator_name]
            + [
                f"{ratios[name, estimator_name, op, n]:.1f}x"
                for op in REAL_TEXT_OPERATIONS
            ]
            for name in matrices
            for estimator_name in REAL_TEXT_ESTIMATORS
        ]
        print(format_table(header, rows))


def real_text_tasks(fast, data, X_test):
    """``(tasks, fitted)``: fastnb's real-text operations of estimator class
    ``fast`` on ``data`` (predictions of X_test), and its model fitted on
    ``data``."""
    tasks = {
        "fit": lambda: fast().fit(data.X, data.y),
        "partial_fit": functools.partial(run_partial_fit, fast, None, data),
    }
    fitted = fast().fit(data.X, data.y)
    tasks["predict"] = functools.partial(fitted.predict, X_test)
    tasks["predict_proba"] = functools.partial(fitted.predict_proba, X_test)
    return tasks, fitted


def int64_against_float64(matrices, y_train, n_threads, repeats):
    """CountVectorizer()'s int64 matrix, as it comes, against its float64
    copy: each estimator's operations on the two timed in turns in one
    group (timed apart, the matrix timed first in the process came out up
    to 19% slower in its predictions, the same matrix's in turns the same
    to 2%). The goal: within 10%."""
    print()
    print(
        f"real text: {COUNTS}'s int64 matrix, as it comes, "
        f"against its float64 copy (sorted indices), in turns, at {n_threads} "
        "thread(s): fastnb's median seconds"
    )
    header = ["estimator", "operation", "int64 s", "float64 s", "int64/float64"]
    rows = []
    data = {
        name: (Dataset.from_arrays(matrices[name][0], y_train), matrices[name][1])
        for name in (COUNTS, FLOAT64_COPY)
    }
    for estimator_name in REAL_TEXT_ESTIMATORS:
        fast = getattr(fastnb, estimator_name)
        both = {
            name: real_text_tasks(fast, dataset, X_test)[0]
            for name, (dataset, X_test) in data.items()
        }
        groups = [
            [
                ((name, op), text_bench.with_threads(both[name][op], n_threads))
                for name in both
            ]
            for op in REAL_TEXT_OPERATIONS
        ]
        progress(f"{estimator_name}: int64 against float64, {repeats} repeats")
        medians = time_interleaved(groups, repeats)
        for op in REAL_TEXT_OPERATIONS:
            int64 = medians[COUNTS, op]
            float64 = medians[FLOAT64_COPY, op]
            rows.append(
                [
                    estimator_name,
                    op,
                    format_seconds(int64),
                    format_seconds(float64),
                    f"{int64 / float64:.2f}",
                ]
            )
    print(format_table(header, rows))


def bench_text_pipeline(args, repeats):
    """A whole text model from raw posts, as bench_text.py times it
    (CountVectorizer and MultinomialNB: vectorize 20 Newsgroups' training
    and test posts, fit, predict), fastnb.text and fastnb against
    scikit-learn, at one and two threads unless --threads says; no peak
    memory here (a forked child's, once OpenMP's threads have started).
    Skips, naming the file, without the shared data."""
    print()
    corpus = text_bench.read_corpus()
    if corpus is None:
        return
    only = [text_bench.PIPELINE]
    if args.spread:
        text_bench.print_spread(corpus, args.spread, only)
        return
    thread_counts = args.threads or text_bench.THREADS
    text_bench.compare(corpus, thread_counts, repeats, only, peaks=False)


def threads_table(medians, thread_counts):
    """Median seconds of scikit-learn and of fastnb at each thread count
    ("fastnb <n>" runs), per operation of the real-text case, and how many
    times faster than scikit-learn fastnb is at each."""
    runs = [f"fastnb {n}" for n in thread_counts]
    header = ["operation", "sklearn s", *(f"{run} s" for run in runs)]
    header += [f"sklearn/{run}" for run in runs]
    rows = []
    for operation in REAL_TEXT_OPERATIONS:
        sk = medians["sklearn", operation]
        seconds = [medians[run, operation] for run in runs]
        rows.append(
            [operation, format_seconds(sk), *(format_seconds(t) for t in seconds)]
            + [format_ratio(sk, t) for t in seconds]
        )
    return format_table(header, rows)


def check_real_text(fitted, reference, X, what):
    """Exit unless fastnb's model predicts as scikit-learn's on X: the same
    classes, probabilities within REAL_TEXT_PROBA_RTOL relative."""
    if (fitted.predict(X) != reference.predict(X)).any():
        sys.exit(f"FAILED: {what}: predict differs from scikit-learn")
    difference = max_relative_difference(
        fitted.predict_proba(X), reference.predict_proba(X)
    )
    if not difference <= REAL_TEXT_PROBA_RTOL:
        sys.exit(
            f"FAILED: {what}: predict_proba differs from scikit-learn by "
            f"{difference:.2e} relative (tolerance {REAL_TEXT_PROBA_RTOL})"
        )


def progress(message):
    """One line of progress on stderr, so that a long run is never silent."""
    print(f"... {message}", file=sys.stderr, flush=True)


def parallel_kernel_names():
    """Names of fastnb's parallel kernels: those that take ``n_threads``."""
    names = []
    for name, function in vars(_simd.kernels).items():
        if name.startswith("_") or not callable(function):
            continue
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            continue
        if "n_threads" in parameters:
            names.append(name)
    return names


@contextlib.contextmanager
def timed_kernels():
    """Time every call of a parallel kernel while the block runs.

    The estimators look their kernels up on the module ``fastnb._simd.kernels``
    at each call, so wrappers set on it see every call. Yields a one-entry
    list holding the seconds spent in them; the kernels are restored after.
    """
    module = _simd.kernels
    spent = [0.0]
    originals = {name: getattr(module, name) for name in parallel_kernel_names()}

    def timed(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        return wrapper

    try:
        for name, function in originals.items():
            setattr(module, name, timed(function))
        yield spent
    finally:
        for name, function in originals.items():
            setattr(module, name, function)


def fastnb_tasks(estimator_name, data):
    """``{operation: function}`` for fastnb's estimator, fitted beforehand."""
    estimator_class = getattr(fastnb, estimator_name)
    fitted = estimator_class().fit(data.X, data.y)
    return {
        operation: functools.partial(RUNNERS[operation], estimator_class, fitted, data)
        for operation in OPERATIONS
        if supports(estimator_class, operation)
    }


def time_scaling(tasks, thread_counts, repeats):
    """Median seconds of each task at each thread count: {(op, threads): s}.

    The thread counts take turns within each repeat, so that a change of
    the machine's load falls on all of them.
    """
    times = {(op, n): [] for op in tasks for n in thread_counts}
    for repeat in range(repeats):
        for operation, function in tasks.items():
            progress(f"{operation}, repeat {repeat + 1} of {repeats}")
            for n_threads in rotated(list(thread_counts), repeat):
                with threadpool_limits(limits=n_threads, user_api="openmp"):
                    start = time.perf_counter()
                    function()
                    times[operation, n_threads].append(time.perf_counter() - start)
    return {key: statistics.median(ts) for key, ts in times.items()}


def used_threads(n_threads):
    """Threads fastnb runs when asked for n_threads (capped at usable CPUs)."""
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        return effective_n_threads()


def scaling_table(scaling, thread_counts, medians, X):
    """Time, speedup, ratio to scikit-learn and GB/s per op and thread count."""
    header = ["operation", "threads", "used", "seconds", "speedup"]
    header += ["sklearn/fastnb", "GB/s of X"]
    rows = []
    for operation in OPERATIONS:
        if (operation, thread_counts[0]) not in scaling:
            continue
        one = scaling[operation, thread_counts[0]]
        sk = medians.get(("sklearn", operation))
        for n_threads in thread_counts:
            seconds = scaling[operation, n_threads]
            rows.append(
                [
                    operation,
                    str(n_threads),
                    str(used_threads(n_threads)),
                    format_seconds(seconds),
                    f"{one / seconds:.2f}x",
                    format_ratio(sk, seconds),
                    f"{data_nbytes(X) / seconds / GB:.2f}",
                ]
            )
    return format_table(header, rows)


def time_serial_share(tasks, repeats):
    """Per op, median (total, in parallel kernels) seconds at one thread."""
    shares = {}
    with threadpool_limits(limits=1, user_api="openmp"):
        for operation, function in tasks.items():
            progress(f"{operation}: time in the kernels at one thread")
            totals, inside = [], []
            for _ in range(repeats):
                with timed_kernels() as spent:
                    start = time.perf_counter()
                    function()
                    totals.append(time.perf_counter() - start)
                inside.append(spent[0])
            shares[operation] = statistics.median(totals), statistics.median(inside)
    return shares


def amdahl_cap(serial_fraction, n_cores):
    """The most n_cores can speed up an op whose serial fraction this is."""
    return 1.0 / (serial_fraction + (1.0 - serial_fraction) / n_cores)


def serial_share_table(shares):
    """Time outside the parallel kernels at one thread, and Amdahl's caps."""
    header = ["operation", "total ms", "in kernels ms", "outside ms", "outside"]
    header += [f"cap on {n} cores" for n in AMDAHL_CORES]
    rows = []
    for operation, (total, inside) in shares.items():
        outside = max(total - inside, 0.0)
        fraction = outside / total
        rows.append(
            [
                operation,
                f"{total * 1e3:.1f}",
                f"{inside * 1e3:.1f}",
                f"{outside * 1e3:.1f}",
                f"{100 * fraction:.1f}%",
                *(f"{amdahl_cap(fraction, n):.1f}x" for n in AMDAHL_CORES),
            ]
        )
    return format_table(header, rows)


def profile_serial_time(tasks):
    """Per op at one thread, the functions that take the most time of their
    own outside the parallel kernels (cProfile), as printable text."""
    parts = []
    with threadpool_limits(limits=1, user_api="openmp"), timed_kernels():
        for operation, function in tasks.items():
            progress(f"{operation}: profile at one thread")
            profiler = cProfile.Profile()
            start = time.perf_counter()
            profiler.runcall(function)
            total = time.perf_counter() - start
            entries = [
                (own, location, calls)
                for location, (calls, _, own, _, _) in pstats.Stats(
                    profiler
                ).stats.items()
                if location[2] != "wrapper"
            ]
            entries.sort(reverse=True)
            lines = [f"{operation} ({total * 1e3:.1f} ms under the profiler):"]
            for own, (filename, line, name), calls in entries[:PROFILE_TOP]:
                where = f"{os.path.basename(filename)}:{line}" if line else filename
                lines.append(
                    f"  {own * 1e3:8.2f} ms {100 * own / total:5.1f}%  {calls:>5} "
                    f"calls  {name} ({where})"
                )
            parts.append("\n".join(lines))
    return "\n".join(parts)


# The goals of the spread over T threads: at least BUSY_GOAL of 16 threads
# doing at least 1/(2T) of the work, and none more than BUSIEST_GOAL of it.
BUSY_GOAL = 14 / 16
BUSIEST_GOAL = 1 / 8


def spread_table(tasks, n_threads):
    """Busy threads and the busiest thread's share of each operation."""
    header = ["operation", "calls", "busy threads", "busiest share"]
    header += ["thread ended", "goal"]
    rows = []
    for operation, function in tasks.items():
        progress(f"{operation}: CPU time of each of {n_threads} threads")
        busy, busiest, ended, calls = measure_spread(function, n_threads)
        met = busy >= BUSY_GOAL * n_threads and busiest <= BUSIEST_GOAL
        rows.append(
            [
                operation,
                str(calls),
                f"{busy:g} of {n_threads}",
                f"{100 * busiest:.1f}%",
                f"{ended} calls",
                "met" if met and not ended else "not met",
            ]
        )
    return format_table(header, rows) + (
        f"\n(medians over the calls; busy: did at least 1/{2 * n_threads} of a "
        f"call's work; goal: at least {BUSY_GOAL * n_threads:.0f} busy, none over "
        f"{100 * BUSIEST_GOAL:.1f}%, no thread ended during a call)"
    )


def bench_threads(estimator_name, data, medians, args, repeats):
    """The scaling and serial-share tables (and profile) of fastnb's estimator."""
    tasks = fastnb_tasks(estimator_name, data)
    if args.threads:
        scaling = time_scaling(tasks, args.threads, repeats)
        print()
        print(f"{estimator_name}: fastnb against the thread count")
        print(scaling_table(scaling, args.threads, medians, data.X))
        print(
            "(used: threads fastnb runs, capped at the usable CPUs; speedup over "
            f"{args.threads[0]} thread(s); GB/s: X's bytes / seconds)"
        )
        print()
        print(
            f"{estimator_name}: serial share, the time outside fastnb's parallel "
            "kernels at one thread"
        )
        print(serial_share_table(time_serial_share(tasks, repeats)))
    if args.profile:
        print()
        print(
            f"{estimator_name}: where the time outside the parallel kernels goes "
            f"(own time, top {PROFILE_TOP}, one thread)"
        )
        print(profile_serial_time(tasks))


def parse_estimators(text):
    """Estimator class names from a comma-separated list of short names."""
    keys = [key.strip() for key in text.split(",") if key.strip()]
    unknown = sorted(set(keys) - set(ESTIMATORS))
    if unknown or not keys:
        raise argparse.ArgumentTypeError(
            f"choose from {','.join(ESTIMATORS)}, got {text!r}"
        )
    return [ESTIMATORS[key] for key in keys]


def parse_thread_counts(text):
    """Thread counts from a comma-separated list, one first if it is there."""
    try:
        counts = [positive_int(part) for part in text.split(",") if part.strip()]
    except (ValueError, argparse.ArgumentTypeError) as exc:
        raise argparse.ArgumentTypeError(
            f"expected thread counts like 1,2,4, got {text!r}"
        ) from exc
    if not counts:
        raise argparse.ArgumentTypeError(f"expected thread counts, got {text!r}")
    return sorted(set(counts))


def positive_int(text):
    """Parse an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--case",
        choices=("all", *CASES),
        default="all",
        help="text: the bag-of-words estimators; binary-text: MultinomialNB on "
        "the same documents in two classes; dense-counts: MultinomialNB and "
        "BernoulliNB on dense Poisson counts; gaussian: GaussianNB on dense blobs; "
        "categorical: CategoricalNB on category codes; sparse-categorical: "
        "CategoricalNB on sparse codes (fastnb on CSR, fastnb and scikit-learn "
        "dense); adult-size: MixedNB on data of Adult's size and types, against "
        "mixed-naive-bayes and scikit-learn (not with --spread: its calls run on "
        "one thread); real-text: MultinomialNB, ComplementNB and BernoulliNB on "
        "20 Newsgroups through scikit-learn's vectorizers (the shared data; "
        "skipped without it); text-pipeline: a whole text model from 20 "
        "Newsgroups' raw posts (vectorize, fit MultinomialNB, predict), fastnb.text "
        "and fastnb against scikit-learn (bench_text.py times each vectorizer "
        "too); categorical-frames: CategoricalNB on pandas, polars and pyarrow "
        "frames of categorical columns against the same as str columns (not with "
        "--spread); all (default): the ten",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"small data (for CI): corpus {TEXT_QUICK_SHAPE[0]:,} x "
        f"{TEXT_QUICK_SHAPE[1]:,}, dense counts {DENSE_COUNTS_QUICK_SHAPE[0]:,} x "
        f"{DENSE_COUNTS_QUICK_SHAPE[1]}, blobs {GAUSSIAN_QUICK_SHAPE[0]:,} x "
        f"{GAUSSIAN_QUICK_SHAPE[1]}, codes {CATEGORICAL_QUICK_SHAPE[0]:,} x "
        f"{CATEGORICAL_QUICK_SHAPE[1]}, sparse codes "
        f"{SPARSE_CATEGORICAL_QUICK_SHAPE[0]:,} x "
        f"{SPARSE_CATEGORICAL_QUICK_SHAPE[1]}",
    )
    parser.add_argument(
        "--repeats",
        type=positive_int,
        help="timed repeats per operation (default 3)",
    )
    parser.add_argument(
        "--estimators",
        type=parse_estimators,
        help=f"text case: comma-separated, from {','.join(ESTIMATORS)} "
        "(default: multinomial, the headline; the others take minutes more)",
    )
    parser.add_argument(
        "--threads",
        type=parse_thread_counts,
        help="comma-separated thread counts, e.g. 1,2,4: time fastnb's operations "
        "at each (a scaling table) and measure each one's serial share",
    )
    parser.add_argument(
        "--spread",
        type=positive_int,
        metavar="T",
        help="time nothing: run each fastnb operation with T OpenMP threads that "
        "sleep when they wait, and show how its CPU time spreads over them "
        "(any machine; T = 16 tells whether 16 cores would all get work)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="show where each operation's time outside the parallel kernels goes",
    )
    args = parser.parse_args(argv)
    if args.estimators and args.case not in ("all", "text"):
        parser.error("--estimators chooses among the text case's estimators")
    if (args.threads or args.profile) and threadpool_limits is None:
        parser.error("--threads and --profile need threadpoolctl (pip install it)")
    return args


def main(argv=None):
    """Run the benchmark."""
    args = parse_args(argv)
    if args.spread:
        if os.environ.get(SPREAD_ENVIRONMENT) != str(args.spread):
            # The OpenMP runtime reads its wait policy once, as it loads.
            child = subprocess.run(
                [sys.executable, *sys.argv], env=spread_environment(args.spread)
            )
            sys.exit(child.returncode)
        pretend_usable_cpus(args.spread)
    repeats = args.repeats or 3
    print_header(repeats)
    if args.case in ("all", "text"):
        bench_text(args, repeats)
    if args.case in ("all", "binary-text"):
        bench_binary_text(args, repeats)
    if args.case in ("all", "dense-counts"):
        bench_dense_counts(args, repeats)
    if args.case in ("all", "gaussian"):
        bench_gaussian(args, repeats)
    if args.case in ("all", "categorical"):
        bench_categorical(args, repeats)
    if args.case in ("all", "sparse-categorical"):
        bench_sparse_categorical(args, repeats)
    if args.case in ("all", "adult-size") and not args.spread:
        # (Its calls are small: one thread each, by design.)
        bench_adult_size(args, repeats)
    if args.case in ("all", "real-text"):
        bench_real_text(args, repeats)
    if args.case in ("all", "text-pipeline"):
        bench_text_pipeline(args, repeats)
    if args.case in ("all", "categorical-frames") and not args.spread:
        bench_categorical_frames(args, repeats)


if __name__ == "__main__":
    main()
