"""Time fastnb.text's vectorizers, and a whole text model, against scikit-learn.

On 20 Newsgroups (the shared data: its "bydate" archive), as a user runs a
text model from raw posts: each vectorizer's fit_transform of the 11,314
training posts and transform of the 7,532 test posts, and the whole
pipeline (vectorize both, fit MultinomialNB, predict), scikit-learn's and
fastnb's interleaved in one process, fastnb at each thread count of
``--threads`` (default 1,2). Each output is checked against scikit-learn's
first (the same matrix, the same predictions). The peak memory of each call
is measured in a child process of its own (the most resident memory it
reached, over its start). With ``--spread T``, nothing is timed: the spread
of fastnb's calls over T threads (bench/spread.py). Without the data, it
says so, naming the file, and stops.

Usage::

    python bench/bench_text.py [--threads 1,2] [--repeats N] [--spread T]
"""

import argparse
import functools
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import sklearn
import sklearn.feature_extraction.text as sk_text
import sklearn.naive_bayes as sk_nb
from real_data import NEWSGROUPS_ARCHIVE, read_newsgroups, shared_data_dir
from sklearn.pipeline import make_pipeline
from spread import (
    SPREAD_ENVIRONMENT,
    measure_spread,
    pretend_usable_cpus,
    spread_environment,
)
from threadpoolctl import ThreadpoolController, threadpool_limits

import fastnb
import fastnb.text

VECTORIZERS = {
    "CountVectorizer()": {},
    "HashingVectorizer()": {},
    "TfidfVectorizer()": {},
}
THREADS = (1, 2)
PIPELINE = "pipeline: fit, predict"


def vectorizer(module, name):
    """A new vectorizer of the name (its parameters in the name) of module's."""
    return getattr(module, name.split("(")[0])(**VECTORIZERS[name])


def pipeline(module, naive_bayes):
    return make_pipeline(module.CountVectorizer(), naive_bayes.MultinomialNB())


def operations(module, naive_bayes, train, y_train, test):
    """``{operation: (setup, run)}`` of one library's vectorizers and
    pipeline: ``run(setup())`` is the call timed (a vectorizer's transform
    after its fit)."""
    found = {}
    for name in VECTORIZERS:
        make = functools.partial(vectorizer, module, name)
        if name != "HashingVectorizer()":
            found[f"{name}.fit_transform"] = (
                make,
                lambda v: v.fit_transform(train),
            )
        found[f"{name}.transform"] = (
            lambda make=make: make().fit(train),
            lambda v: v.transform(test),
        )
    found[PIPELINE] = (
        lambda: pipeline(module, naive_bayes),
        lambda p: p.fit(train, y_train).predict(test),
    )
    return found


def check(train, y_train, test, operations):
    """Exit unless fastnb's outputs are scikit-learn's: each vectorizer's
    matrices whose operations are named, and the pipeline's predictions."""
    for name in VECTORIZERS:
        if not any(operation.startswith(name) for operation in operations):
            continue
        ours, theirs = vectorizer(fastnb.text, name), vectorizer(sk_text, name)
        for a, b in (
            (ours.fit_transform(train), theirs.fit_transform(train)),
            (ours.transform(test), theirs.transform(test)),
        ):
            same = (
                type(a) is type(b)
                and a.dtype == b.dtype
                and all(
                    np.array_equal(getattr(a, part), getattr(b, part))
                    for part in ("indptr", "indices", "data")
                )
            )
            if not same:
                sys.exit(f"FAILED: fastnb.text.{name} differs from scikit-learn's")
    if PIPELINE in operations:
        predicted = pipeline(fastnb.text, fastnb).fit(train, y_train).predict(test)
        expected = pipeline(sk_text, sk_nb).fit(train, y_train).predict(test)
        if (predicted != expected).any():
            sys.exit(
                "FAILED: the fastnb pipeline's predictions differ from scikit-learn's"
            )
    print("check: fastnb's outputs are scikit-learn's, array for array")


@functools.cache
def openmp_controller():
    """One ThreadpoolController for the process (made after fastnb's OpenMP
    runtime is loaded): threadpool_limits finds the loaded libraries again
    on each call, 2.3 ms, a third of a 7 ms predict_proba timed around it;
    the controller's limit takes 14 us."""
    return ThreadpoolController()


def with_threads(function, n_threads):
    """``function`` run with n_threads OpenMP threads."""

    def run():
        with openmp_controller().limit(limits=n_threads, user_api="openmp"):
            function()

    return run


def time_interleaved(runs, repeats):
    """Median seconds of each ``(run, operation)``, the runs of an operation
    taking turns in each repeat (their order rotated)."""
    times = {}
    operations = list(next(iter(runs.values())))
    for repeat in range(repeats):
        for operation in operations:
            names = list(runs)
            shift = repeat % len(names)
            for name in names[shift:] + names[:shift]:
                start = time.perf_counter()
                runs[name][operation]()
                times.setdefault((name, operation), []).append(
                    time.perf_counter() - start
                )
        progress(f"repeat {repeat + 1} of {repeats}")
    return {key: statistics.median(ts) for key, ts in times.items()}


def resident_kib():
    """This process's resident memory now, and at most so far (KiB)."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()[0] if value.split() else "0"
    return int(fields["VmRSS"]), int(fields["VmHWM"])


def _peak_child(setup, run, pipe):
    made = setup()
    now, _ = resident_kib()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the high-water mark starts from now
    run(made)
    pipe.send(resident_kib()[1] - now)


def peak_mib(setup, run):
    """MiB ``run(setup())`` adds to the resident memory at most, in a
    forked child (before this process starts OpenMP's threads, which a
    fork would not take along)."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_peak_child, args=(setup, run, send))
    child.start()
    kib = receive.recv()
    child.join()
    return kib / 1024


def progress(message):
    print(f"... {message}", file=sys.stderr, flush=True)


def read_corpus():
    """20 Newsgroups' training posts, their labels and the test posts from
    the shared data, or None, said with the file's name, without it."""
    archive = shared_data_dir() / NEWSGROUPS_ARCHIVE
    if not archive.exists():
        print(
            f"text pipeline: skipped: no {NEWSGROUPS_ARCHIVE} in {shared_data_dir()} "
            "($FASTNB_DATA_DIR, else shared/data beside the checkout)"
        )
        return None
    progress(f"reading {archive}")
    (train, y_train), (test, _) = read_newsgroups(archive)
    megabytes = sum(len(post.encode("utf-8")) for post in train) / 1e6
    print(
        f"text: 20 Newsgroups, {len(train):,} training posts ({megabytes:.1f} MB of "
        f"UTF-8) and {len(test):,} test posts; fastnb {fastnb.__version__}, "
        f"scikit-learn {sklearn.__version__}"
    )
    return train, y_train, test


def print_spread(corpus, n_threads, names=None):
    """The spread over n_threads of fastnb's operations (names: all of them
    when None), in a process whose OpenMP threads sleep when they wait."""
    ours = operations(fastnb.text, fastnb, *corpus)
    print(f"fastnb.text: CPU time over {n_threads} OpenMP threads")
    for operation in names or ours:
        setup, run = ours[operation]
        progress(operation)
        busy, busiest, ended, calls = measure_spread(
            functools.partial(run, setup()), n_threads
        )
        print(
            f"  {operation}: {busy:g} of {n_threads} threads busy, the "
            f"busiest {100 * busiest:.1f}% ({calls} calls, {ended} with a "
            "thread ended)"
        )


def compare(corpus, thread_counts, repeats, names=None, peaks=True):
    """Check fastnb's operations (names: all of them when None) against
    scikit-learn's, time them interleaved (fastnb at each thread count) and
    print the table, with each call's peak memory if peaks (a forked child
    a call: only in a process that has not started OpenMP's threads)."""
    ours = operations(fastnb.text, fastnb, *corpus)
    theirs = operations(sk_text, sk_nb, *corpus)
    names = list(names or ours)
    peak = {}
    if peaks:
        progress("peak memory, a child process a call")
        for operation in names:
            peak["sklearn", operation] = peak_mib(*theirs[operation])
            with threadpool_limits(limits=thread_counts[-1], user_api="openmp"):
                peak["fastnb", operation] = peak_mib(*ours[operation])
    progress("checking the outputs against scikit-learn's")
    check(*corpus, names)
    runs = {
        "sklearn": {
            op: functools.partial(theirs[op][1], theirs[op][0]()) for op in names
        }
    }
    for n in thread_counts:
        runs[f"fastnb {n}"] = {
            op: with_threads(functools.partial(ours[op][1], ours[op][0]()), n)
            for op in names
        }
    medians = time_interleaved(runs, repeats)
    header = ["operation", "sklearn s"]
    header += [f"fastnb {n} s" for n in thread_counts]
    header += [f"x at {n}" for n in thread_counts]
    if peaks:
        header += ["sklearn MiB", f"fastnb {thread_counts[-1]} MiB"]
    rows = [header]
    for operation in names:
        sk = medians["sklearn", operation]
        fast = [medians[f"fastnb {n}", operation] for n in thread_counts]
        rows.append(
            [operation, f"{sk:.3f}"]
            + [f"{t:.3f}" for t in fast]
            + [f"{sk / t:.1f}x" for t in fast]
            + [f"{peak[lib, operation]:.0f}" for lib in ("sklearn", "fastnb") if peaks]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    print(
        f"median seconds of {repeats} repeats (fastnb at each thread count), "
        "how many times faster fastnb is"
        + (", and the peak memory each call adds" if peaks else "")
    )
    for row in rows:
        print(
            "  ".join(
                [row[0].ljust(widths[0])]
                + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)]
            )
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default=",".join(map(str, THREADS)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--spread", type=int, metavar="T")
    args = parser.parse_args(argv)
    if args.spread and os.environ.get(SPREAD_ENVIRONMENT) != str(args.spread):
        # The OpenMP runtime reads its wait policy once, as it loads.
        child = subprocess.run(
            [sys.executable, *sys.argv], env=spread_environment(args.spread)
        )
        sys.exit(child.returncode)
    corpus = read_corpus()
    if corpus is None:
        return
    if args.spread:
        pretend_usable_cpus(args.spread)
        print_spread(corpus, args.spread)
        return
    thread_counts = [int(n) for n in args.threads.split(",")]
    compare(corpus, thread_counts, args.repeats)


if __name__ == "__main__":
    main()
