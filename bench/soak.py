"""A day of streaming, compressed: partial_fit over many small batches.

Streams batches into one model and watches, every tenth of the run, the
process's resident memory (RSS, /proc/self/statm), the memory Python
allocates (tracemalloc) and the time per batch; at the end it checks the
model against the statistics of all the rows, computed apart from fastnb:

- ``text``: documents of random words, hashed by scikit-learn's
  HashingVectorizer (2**18 features) batch by batch, into MultinomialNB.
  The counts must equal, exactly, the sum over the batches of each class's
  rows (scipy's sparse products).
- ``gaussian``: dense normal rows into GaussianNB. The class counts must be
  exact, the means and variances those of a two-pass NumPy computation over
  all the rows (made again from their seeds) to 1e-9.

It passes when memory is flat after warm-up (RSS within 16 MiB and traced
memory within 1 MiB of the first window after it) and the time per batch
does not grow (the last window's median within 1.5 times the first's).
The summary line says so, with the figures::

    python bench/soak.py                      # both, 20,000 batches each
    python bench/soak.py --kind text --batches 2000

Exit status 1 if a check fails.
"""

import argparse
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

import fastnb

N_CLASSES = 4
TEXT_ROWS = 50  # documents a batch
GAUSSIAN_ROWS = 100
GAUSSIAN_FEATURES = 20
WINDOWS = 10
# Memory may grow this much after warm-up (the first window), no more.
RSS_SLACK_MIB = 16
TRACED_SLACK_MIB = 1
TIME_GROWTH = 1.5
MIB = 2**20
VOCABULARY = np.array([f"w{i}" for i in range(5000)])


def rss_mib():
    """Resident memory of this process, MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def text_batch(b, vectorizer):
    """Batch b's documents, hashed, and labels: each class favours its own
    quarter of the vocabulary."""
    rng = np.random.default_rng([1, b])
    y = rng.integers(0, N_CLASSES, TEXT_ROWS)
    lengths = rng.integers(5, 40, TEXT_ROWS)
    documents = []
    for label, length in zip(y, lengths, strict=True):
        own = rng.integers(0, 1250, length) + 1250 * label
        shared = rng.integers(0, 5000, length)
        words = np.where(rng.random(length) < 0.6, own, shared)
        documents.append(" ".join(VOCABULARY[words]))
    return vectorizer.transform(documents), y


def gaussian_batch(b):
    """Batch b's rows and labels: classes apart by their means."""
    rng = np.random.default_rng([2, b])
    y = rng.integers(0, N_CLASSES, GAUSSIAN_ROWS)
    X = rng.normal(size=(GAUSSIAN_ROWS, GAUSSIAN_FEATURES)) + y[:, None]
    return X, y


def one_hot(y):
    return sp.csr_matrix(
        (np.ones(len(y)), (y, np.arange(len(y)))), shape=(N_CLASSES, len(y))
    )


def stream(kind, n_batches, progress=True):
    """Stream n_batches into a new model; return the figures and checks."""
    vectorizer = HashingVectorizer(n_features=2**18, alternate_sign=False, norm=None)
    if kind == "text":
        model = fastnb.MultinomialNB()
        expected_counts = sp.csr_matrix((N_CLASSES, 2**18))
    else:
        model = fastnb.GaussianNB()
    classes = np.arange(N_CLASSES)
    window = max(1, n_batches // WINDOWS)
    samples = []  # (batch, RSS MiB, traced MiB, median ms of the window)
    times = []  # this window's (kept no longer: the watch must not grow)
    tracemalloc.start()
    try:
        for b in range(n_batches):
            if kind == "text":
                X, y = text_batch(b, vectorizer)
                expected_counts = expected_counts + one_hot(y) @ X
            else:
                X, y = gaussian_batch(b)
            start = time.perf_counter()
            model.partial_fit(X, y, classes=classes)
            times.append(time.perf_counter() - start)
            if (b + 1) % window == 0:
                traced = tracemalloc.get_traced_memory()[0] / MIB
                median_ms = 1e3 * statistics.median(times)
                times.clear()
                samples.append((b + 1, rss_mib(), traced, median_ms))
                if progress:
                    print(
                        f"... {kind}: {b + 1:,} batches, RSS {samples[-1][1]:.1f} "
                        f"MiB, traced {traced:.2f} MiB, {median_ms:.3f} ms a batch",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        tracemalloc.stop()
    if kind == "text":
        same = np.array_equal(model.feature_count_, expected_counts.toarray())
    else:
        same = gaussian_matches(model, n_batches)
    return samples, same, model


def gaussian_matches(model, n_batches):
    """Whether the model's moments are those of all the rows, two passes."""
    count = np.zeros(N_CLASSES)
    total = np.zeros((N_CLASSES, GAUSSIAN_FEATURES))
    for b in range(n_batches):
        X, y = gaussian_batch(b)
        count += np.bincount(y, minlength=N_CLASSES)
        np.add.at(total, y, X)
    mean = total / count[:, None]
    squares = np.zeros_like(total)
    for b in range(n_batches):
        X, y = gaussian_batch(b)
        np.add.at(squares, y, (X - mean[y]) ** 2)
    variance = squares / count[:, None] + model.epsilon_
    return (
        np.array_equal(model.class_count_, count)
        and np.allclose(model.theta_, mean, rtol=1e-9, atol=1e-12)
        and np.allclose(model.var_, variance, rtol=1e-9)
    )


def verdict(samples, same):
    """``(passed, summary)`` of a run's samples: after warm-up (the first
    window), memory within its slack and the time per batch within
    TIME_GROWTH of the first window's."""
    _, rss_start, traced_start, ms_start = samples[0]
    _, rss_end, traced_end, ms_end = samples[-1]
    rss_peak = max(s[1] for s in samples)
    traced_peak = max(s[2] for s in samples)
    flat = (
        rss_peak - rss_start <= RSS_SLACK_MIB
        and traced_peak - traced_start <= TRACED_SLACK_MIB
    )
    steady = ms_end <= TIME_GROWTH * ms_start
    summary = (
        f"RSS {rss_start:.1f} -> {rss_end:.1f} MiB (peak {rss_peak:.1f}), traced "
        f"{traced_start:.2f} -> {traced_end:.2f} MiB (peak {traced_peak:.2f}), "
        f"{ms_start:.3f} -> {ms_end:.3f} ms a batch; memory "
        f"{'flat' if flat else 'GROWS'}, time {'steady' if steady else 'GROWS'}, "
        f"model {'equals' if same else 'DIFFERS FROM'} one fit of all rows"
    )
    return flat and steady and same, summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("text", "gaussian", "both"), default="both")
    parser.add_argument("--batches", type=int, default=20_000)
    args = parser.parse_args(argv)
    if args.batches < WINDOWS:
        parser.error(f"--batches must be at least {WINDOWS}")
    kinds = ("text", "gaussian") if args.kind == "both" else (args.kind,)
    failed = False
    for kind in kinds:
        samples, same, _ = stream(kind, args.batches)
        passed, summary = verdict(samples, same)
        rows = TEXT_ROWS if kind == "text" else GAUSSIAN_ROWS
        print(
            f"soak: {kind}, {args.batches:,} batches of {rows} rows: {summary}: "
            f"{'passed' if passed else 'FAILED'}"
        )
        failed |= not passed
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
