"""Multilabel Naive Bayes in one pass (fastnb.OneVsRestNB) against
scikit-learn's OneVsRestClassifier over fastnb's own estimator and over
scikit-learn's, on the bench's text corpus with 20 labels.

    python bench/bench_multilabel.py [--documents N] [--repeats R]

The corpus (corpus.make_bag_of_words: 200,000 documents over 2**18 words,
20 topics) with a label a topic: each document has its own topic's label
and, with probability 0.1 each, any other (3 labels a document on
average). fit and predict_proba of each (fastnb.OneVsRestNB builds its
scoring tables on the first prediction), interleaved, the median of the
repeats, both together, and each one's ratio to fastnb.OneVsRestNB's; the
predictions of the three are checked to agree.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.multiclass import OneVsRestClassifier
from sklearn.naive_bayes import MultinomialNB as SklearnMultinomialNB

import fastnb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import make_bag_of_words  # noqa: E402

N_LABELS = 20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    X, topic = make_bag_of_words(n_documents=options.documents, n_classes=N_LABELS)
    rng = np.random.default_rng(0)
    Y = (rng.random((X.shape[0], N_LABELS)) < 0.1).astype(np.int8)
    Y[np.arange(X.shape[0]), topic] = 1
    print(
        f"{X.shape[0]} documents x {X.shape[1]} words, {X.nnz} stored counts, "
        f"{N_LABELS} labels ({Y.sum() / X.shape[0]:.2f} a document); median of "
        f"{options.repeats} interleaved repeats"
    )
    models = {
        "fastnb.OneVsRestNB": lambda: fastnb.OneVsRestNB(fastnb.MultinomialNB()),
        "OneVsRestClassifier(fastnb)": lambda: OneVsRestClassifier(
            fastnb.MultinomialNB()
        ),
        "OneVsRestClassifier(scikit-learn)": lambda: OneVsRestClassifier(
            SklearnMultinomialNB()
        ),
    }
    times = {name: {"fit": [], "predict_proba": []} for name in models}
    fitted = {}
    for _ in range(options.repeats):
        for name, make in models.items():
            start = time.perf_counter()
            model = make().fit(X, Y)
            times[name]["fit"].append(time.perf_counter() - start)
            start = time.perf_counter()
            model.predict_proba(X)
            times[name]["predict_proba"].append(time.perf_counter() - start)
            fitted[name] = model
    sample = X[:2000]
    reference = fitted["OneVsRestClassifier(scikit-learn)"].predict_proba(sample)
    for model in fitted.values():
        np.testing.assert_allclose(
            model.predict_proba(sample), reference, rtol=1e-7, atol=1e-12
        )
    ours = {
        method: np.median(times["fastnb.OneVsRestNB"][method])
        for method in ("fit", "predict_proba")
    }
    both = ours["fit"] + ours["predict_proba"]
    print(
        f"{'':<34} {'fit s':>7} {'ratio':>6} {'predict_proba s':>16} {'ratio':>6} "
        f"{'both s':>7} {'ratio':>6}"
    )
    for name, runs in times.items():
        fit, proba = np.median(runs["fit"]), np.median(runs["predict_proba"])
        print(
            f"{name:<34} {fit:>7.3f} {fit / ours['fit']:>6.1f} {proba:>16.3f} "
            f"{proba / ours['predict_proba']:>6.1f} {fit + proba:>7.3f} "
            f"{(fit + proba) / both:>6.1f}"
        )


if __name__ == "__main__":
    main()
