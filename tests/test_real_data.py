"""Real text data: fastnb reproduces scikit-learn prediction for prediction.

The data live in the shared folder beside the repository (see its README);
every test here skips, naming the missing file, when it is absent.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import naive_bayes as sk_nb
from sklearn.feature_extraction.text import (
    CountVectorizer,
    TfidfTransformer,
    TfidfVectorizer,
)
from sklearn.model_selection import train_test_split

import fastnb

from _helpers import fetch_newsgroups, require_data

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

ESTIMATORS = ["MultinomialNB", "ComplementNB", "BernoulliNB"]
VECTORIZERS = {"count": CountVectorizer, "tfidf": TfidfVectorizer}

# Test accuracies with scikit-learn 1.9.1 defaults, from the data README.
SMS_COUNT_ACCURACY = {
    "MultinomialNB": 0.9821,
    "ComplementNB": 0.9778,
    "BernoulliNB": 0.9763,
}
NEWSGROUPS_COUNT_ACCURACY = {"MultinomialNB": 0.7728, "ComplementNB": 0.8267}


def vectorized(vectorizer, docs_train, docs_test):
    """Vectorizer fitted on the training documents only."""
    vectorizer = VECTORIZERS[vectorizer]()
    return vectorizer.fit_transform(docs_train), vectorizer.transform(docs_test)


def assert_same_predictions(name, X_train, y_train, X_test):
    """Fit fastnb and scikit-learn, compare every output; return the predictions."""
    ours = getattr(fastnb, name)().fit(X_train, y_train)
    theirs = getattr(sk_nb, name)().fit(X_train, y_train)
    predicted = ours.predict(X_test)
    assert_array_equal(predicted, theirs.predict(X_test))

    assert_allclose(
        ours.predict_joint_log_proba(X_test),
        theirs.predict_joint_log_proba(X_test),
        rtol=1e-10,
    )
    # Log-probabilities near zero carry the absolute rounding error of the
    # joint log-likelihood they are normalised from (|jll| up to ~1e4 here).
    assert_allclose(
        ours.predict_log_proba(X_test),
        theirs.predict_log_proba(X_test),
        rtol=1e-10,
        atol=1e-9,
    )
    proba, expected = ours.predict_proba(X_test), theirs.predict_proba(X_test)
    representable = expected > 1e-300
    assert_allclose(proba[representable], expected[representable], rtol=1e-10)
    assert (proba[~representable] <= 1e-300).all()
    return predicted


# ---------------------------------------------------------------------------
# SMS spam
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sms():
    path = require_data("sms_spam/SMSSpamCollection")
    labels, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            label, text = line.rstrip("\n").split("\t", 1)
            labels.append(label)
            texts.append(text)
    assert len(texts) == 5574
    assert labels.count("spam") == 747
    return train_test_split(
        texts, np.array(labels), test_size=0.25, random_state=42, stratify=labels
    )


@pytest.mark.parametrize("vectorizer", list(VECTORIZERS))
@pytest.mark.parametrize("name", ESTIMATORS)
def test_sms_spam(name, vectorizer, sms):
    docs_train, docs_test, y_train, y_test = sms
    X_train, X_test = vectorized(vectorizer, docs_train, docs_test)
    predicted = assert_same_predictions(name, X_train, y_train, X_test)
    if vectorizer == "count":
        accuracy = np.mean(predicted == y_test)
        assert round(accuracy, 4) == SMS_COUNT_ACCURACY[name]


# ---------------------------------------------------------------------------
# 20 Newsgroups
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=list(VECTORIZERS))
def newsgroups_vectorized(request, newsgroups, newsgroups_counts):
    """The posts as counts or as tf-idf (TfidfVectorizer is CountVectorizer
    then TfidfTransformer: the counts are not made twice)."""
    train, test = newsgroups
    X_train, X_test = newsgroups_counts
    if request.param == "tfidf":
        weighting = TfidfTransformer().fit(X_train)
        X_train, X_test = weighting.transform(X_train), weighting.transform(X_test)
    return request.param, X_train, train.target, X_test, test.target


@pytest.mark.parametrize("name", ESTIMATORS)
def test_20newsgroups(name, newsgroups_vectorized):
    vectorizer, X_train, y_train, X_test, y_test = newsgroups_vectorized
    predicted = assert_same_predictions(name, X_train, y_train, X_test)
    if vectorizer == "count" and name in NEWSGROUPS_COUNT_ACCURACY:
        accuracy = np.mean(predicted == y_test)
        assert round(accuracy, 4) == NEWSGROUPS_COUNT_ACCURACY[name]


def test_em_on_unlabelled_newsgroups_beats_the_labels_alone(newsgroups_home):
    # Nigam et al.'s experiment, once (bench/bench_semi_supervised.py runs
    # it over seeds and label counts): 10 labelled posts a group and 10,000
    # unlabelled ones, headers, footers and quotes removed.
    train, test = fetch_newsgroups(
        newsgroups_home, remove=("headers", "footers", "quotes")
    )
    vectorizer = CountVectorizer(stop_words="english", max_features=10_000)
    X, X_test = vectorizer.fit_transform(train.data), vectorizer.transform(test.data)
    rng = np.random.default_rng(0)
    labeled = np.concatenate(
        [
            rng.choice(np.flatnonzero(train.target == c), 10, replace=False)
            for c in range(20)
        ]
    )
    rest = np.setdiff1d(np.arange(X.shape[0]), labeled)
    rows = np.concatenate([labeled, rng.choice(rest, 10_000, replace=False)])
    y = np.full(len(rows), -1)
    y[: len(labeled)] = train.target[labeled]
    alone = fastnb.MultinomialNB().fit(X[labeled], train.target[labeled])
    reference = sk_nb.MultinomialNB().fit(X[labeled], train.target[labeled])
    assert_array_equal(alone.predict(X_test), reference.predict(X_test))
    em = fastnb.SemiSupervisedNB(fastnb.MultinomialNB()).fit(X[rows], y)
    assert em.converged_
    accuracy = alone.score(X_test, test.target), em.score(X_test, test.target)
    # About 0.29 and 0.41 (a sixth fewer errors).
    assert accuracy[1] > accuracy[0] + 0.05, accuracy
