"""Semi-supervised EM (fastnb.SemiSupervisedNB) against Naive Bayes on the
labels alone: the experiment of Nigam, McCallum, Thrun and Mitchell (2000)
on 20 Newsgroups, and the cost of one EM iteration on the text bench.

    python bench/bench_semi_supervised.py            # both parts
    python bench/bench_semi_supervised.py --part accuracy --seeds 5
    python bench/bench_semi_supervised.py --part speed

Accuracy: from the "bydate" training set, a few labelled documents a
class (1, 3, 10, 30, 100) and 10,000 unlabelled ones (9,314 beside 100 a
class), drawn at random; headers, footers and quotes removed; counts of
the 10,000 most frequent words, English stop words left out (with every
word, Laplace smoothing over a hundred thousand words swamps a few
labelled documents: Naive Bayes alone is near chance, and EM makes it
worse). Naive Bayes (MultinomialNB, Laplace smoothing) on the labelled
documents alone, scikit-learn's and fastnb's (they must agree), against EM
over both (unlabeled_weight 1, and the paper's lambda weighting at 0.1).
Accuracy on the 7,532 test documents, the mean over seeds, and the error
reduction EM brings (the paper reports up to 30% fewer errors). Needs
../shared/data (or $FASTNB_DATA_DIR); says so and skips the part without
it.

Speed: one EM step of SemiSupervisedNB (an E-step, the predictions of
every sample, and an M-step, a soft-label fit) on the bench's synthetic
corpus of 200,000 documents over 2**18 words and 20 classes, 1% of them
labelled, against one fit plus one predict_proba: interleaved, the median
of the repeats, as a ratio.
"""

import argparse
import importlib.util
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import fetch_20newsgroups
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB as SklearnMultinomialNB

import fastnb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import make_bag_of_words  # noqa: E402

LABELED_PER_CLASS = (1, 3, 10, 30, 100)
N_UNLABELED = 10_000


def data_dir():
    configured = os.environ.get("FASTNB_DATA_DIR", "").strip()
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def newsgroups(data_home):
    """The 20 Newsgroups train and test sets, through scikit-learn's loader on
    a cache built from the shared archive; None without the archive."""
    script = data_dir() / "20newsgroups" / "make_sklearn_cache.py"
    if not script.exists():
        return None
    spec = importlib.util.spec_from_file_location("make_sklearn_cache", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(str(data_home))
    return [
        fetch_20newsgroups(
            subset=subset,
            data_home=data_home,
            download_if_missing=False,
            remove=("headers", "footers", "quotes"),
        )
        for subset in ("train", "test")
    ]


def labeled_split(y, per_class, n_unlabeled, rng):
    """Indices of ``per_class`` labelled documents of each class and of
    ``n_unlabeled`` others (or all the others, if fewer), drawn at random."""
    labeled = np.concatenate(
        [
            rng.choice(np.flatnonzero(y == c), per_class, replace=False)
            for c in np.unique(y)
        ]
    )
    rest = np.setdiff1d(np.arange(len(y)), labeled)
    return labeled, rng.choice(rest, min(n_unlabeled, len(rest)), replace=False)


def accuracy_part(seeds):
    with tempfile.TemporaryDirectory() as data_home:
        loaded = newsgroups(data_home)
        if loaded is None:
            print(f"accuracy: skipped, no 20 Newsgroups under {data_dir()}")
            return
        train, test = loaded
    vectorizer = CountVectorizer(stop_words="english", max_features=10_000)
    X = vectorizer.fit_transform(train.data)
    X_test = vectorizer.transform(test.data)
    y, y_test = train.target, test.target
    print(
        f"20 Newsgroups: {X.shape[0]} training documents (up to {N_UNLABELED} "
        f"of them unlabelled in each run), {X_test.shape[0]} test, {X.shape[1]} "
        f"words; mean of {seeds} seeds"
    )
    print(
        f"{'labelled a class':>16} {'scikit-learn NB':>16} {'fastnb NB':>10} "
        f"{'EM':>6} {'error cut':>10} {'iterations':>10} {'seconds':>8} "
        f"{'EM, lambda 0.1':>15} {'error cut':>10}"
    )
    for per_class in LABELED_PER_CLASS:
        results = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            labeled, unlabeled = labeled_split(y, per_class, N_UNLABELED, rng)
            reference = SklearnMultinomialNB().fit(X[labeled], y[labeled])
            alone = fastnb.MultinomialNB().fit(X[labeled], y[labeled])
            assert np.array_equal(alone.predict(X_test), reference.predict(X_test))
            rows = np.concatenate([labeled, unlabeled])
            y_em = np.concatenate([y[labeled], np.full(len(unlabeled), -1)])
            start = time.perf_counter()
            em = fastnb.SemiSupervisedNB(fastnb.MultinomialNB()).fit(X[rows], y_em)
            seconds = time.perf_counter() - start
            weighted = fastnb.SemiSupervisedNB(unlabeled_weight=0.1)
            weighted.fit(X[rows], y_em)
            results.append(
                (
                    reference.score(X_test, y_test),
                    alone.score(X_test, y_test),
                    em.score(X_test, y_test),
                    em.n_iter_,
                    seconds,
                    weighted.score(X_test, y_test),
                )
            )
        sk, nb, em, n_iter, seconds, weighted = np.mean(results, axis=0)
        print(
            f"{per_class:>16} {sk:>16.3f} {nb:>10.3f} {em:>6.3f} "
            f"{1 - (1 - em) / (1 - nb):>10.0%} {n_iter:>10.1f} {seconds:>8.1f} "
            f"{weighted:>15.3f} {1 - (1 - weighted) / (1 - nb):>10.0%}"
        )


def speed_part(repeats):
    X, y = make_bag_of_words()
    n_classes = len(np.unique(y))
    # A label for one document in a hundred; EM runs a fixed number of
    # steps (tol 0): one step is the difference of 1 and STEPS + 1 steps.
    hidden = np.random.default_rng(0).random(len(y)) >= 0.01
    y_em = np.where(hidden, -1, y)
    steps = 3
    print(
        f"speed: {X.shape[0]} documents x {X.shape[1]} words, {n_classes} classes, "
        f"{X.nnz} stored counts, 1% labelled; one EM step from {steps + 1} "
        f"steps less 1; median of {repeats} interleaved repeats"
    )

    def em(n_steps):
        model = fastnb.SemiSupervisedNB(max_iter=n_steps, tol=0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y_em)

    def fit_and_predict():
        fastnb.MultinomialNB().fit(X, y).predict_proba(X)

    runs = {"short": [], "long": [], "baseline": []}
    for _ in range(repeats):
        for name, function in (
            ("short", lambda: em(1)),
            ("long", lambda: em(steps + 1)),
            ("baseline", fit_and_predict),
        ):
            start = time.perf_counter()
            function()
            runs[name].append(time.perf_counter() - start)
    short, long, baseline = (np.median(times) for times in runs.values())
    step = (long - short) / steps
    print(
        f"one EM step {step:.3f} s, fit + predict_proba {baseline:.3f} s: "
        f"ratio {step / baseline:.2f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("accuracy", "speed", "both"), default="both")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    if options.part in ("accuracy", "both"):
        accuracy_part(options.seeds)
    if options.part in ("speed", "both"):
        speed_part(options.repeats)


if __name__ == "__main__":
    main()
