"""Worked textbook examples, with the figures computed by hand as fractions."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.feature_extraction.text import CountVectorizer

import fastnb

# Exact fractions survive log and exp to about this relative error.
RTOL = 1e-12


# ---------------------------------------------------------------------------
# (a) Multivariate Bernoulli spam filter over the words {a, b, c}
# ---------------------------------------------------------------------------

SPAM_HAM_X = np.array(
    [
        [0, 1, 0],  # e1 spam
        [0, 1, 1],  # e2 spam
        [1, 0, 0],  # e3 spam
        [1, 1, 0],  # e4 spam
        [1, 1, 0],  # e5 ham
        [1, 0, 1],  # e6 ham
        [1, 0, 0],  # e7 ham
        [0, 0, 0],  # e8 ham
    ]
)
SPAM_HAM_Y = np.array(["spam"] * 4 + ["ham"] * 4)
# classes_ are sorted: row 0 is ham (-), row 1 is spam (+).
HAM, SPAM = 0, 1


def spam_filter(alpha):
    model = fastnb.BernoulliNB(alpha=alpha, force_alpha=True, class_prior=[0.5, 0.5])
    return model.fit(SPAM_HAM_X, SPAM_HAM_Y)


def test_bernoulli_spam_filter_without_smoothing():
    model = spam_filter(alpha=0.0)
    assert_array_equal(model.classes_, ["ham", "spam"])
    # p_w+ = (spam e-mails containing w) / 4, p_w- likewise over ham.
    p_spam = [2 / 4, 3 / 4, 1 / 4]
    p_ham = [3 / 4, 1 / 4, 1 / 4]
    assert_allclose(np.exp(model.feature_log_prob_), [p_ham, p_spam], rtol=RTOL)

    # x* = (1, 1, 0): a and b present, c absent.
    # P(x* | +) = 2/4 * 3/4 * (1 - 1/4) = 9/32,  P(x* | -) = 3/4 * 1/4 * 3/4 = 9/64
    # and with P(+) = P(-) = 1/2 the joint probabilities are 9/64 and 9/128.
    x_star = np.array([[1, 1, 0]])
    joint = np.exp(model.predict_joint_log_proba(x_star))[0]
    assert_allclose(joint[[SPAM, HAM]], [9 / 64, 9 / 128], rtol=RTOL)
    likelihood = np.exp(model.predict_joint_log_proba(x_star) - model.class_log_prior_)
    assert_allclose(likelihood[0, [SPAM, HAM]], [9 / 32, 9 / 64], rtol=RTOL)
    # Posterior: (9/64) / (9/64 + 9/128) = 2/3.
    posterior = model.predict_proba(x_star)[0]
    assert_allclose(posterior[[SPAM, HAM]], [2 / 3, 1 / 3], rtol=RTOL)
    assert model.predict(x_star)[0] == "spam"


def test_bernoulli_spam_filter_with_add_one_smoothing():
    model = spam_filter(alpha=1.0)
    # p_w = (count + 1) / (4 + 2): each word is present or absent.
    p_spam = [3 / 6, 4 / 6, 2 / 6]
    p_ham = [4 / 6, 2 / 6, 2 / 6]
    assert_allclose(np.exp(model.feature_log_prob_), [p_ham, p_spam], rtol=RTOL)
    # x* = (1, 1, 0): spam 3/6 * 4/6 * 4/6 = 48/216, ham 4/6 * 2/6 * 4/6 = 32/216.
    likelihood = np.exp(
        model.predict_joint_log_proba([[1, 1, 0]]) - model.class_log_prior_
    )
    assert_allclose(likelihood[0, [SPAM, HAM]], [48 / 216, 32 / 216], rtol=RTOL)
    assert_allclose(model.predict_proba([[1, 1, 0]])[0, SPAM], 48 / 80, rtol=RTOL)


# ---------------------------------------------------------------------------
# (b) Multinomial counts over the words {a, b, c}
# ---------------------------------------------------------------------------

COUNTS_X = np.array(
    [
        [0, 3, 0],  # spam
        [0, 3, 3],  # spam
        [3, 0, 0],  # spam
        [2, 3, 0],  # spam
        [4, 3, 0],  # ham
        [4, 0, 3],  # ham
        [3, 0, 0],  # ham
        [0, 0, 0],  # ham
    ]
)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_multinomial_counts_without_smoothing(sparse):
    X = sp.csr_matrix(COUNTS_X) if sparse else COUNTS_X
    model = fastnb.MultinomialNB(alpha=0.0, force_alpha=True).fit(X, SPAM_HAM_Y)
    # Word totals: spam (5, 9, 3) of 17, ham (11, 3, 3) of 17.
    theta_spam = [5 / 17, 9 / 17, 3 / 17]
    theta_ham = [11 / 17, 3 / 17, 3 / 17]
    assert_allclose(np.exp(model.feature_log_prob_), [theta_ham, theta_spam], rtol=RTOL)
    assert_allclose(np.exp(model.class_log_prior_), [1 / 2, 1 / 2], rtol=RTOL)
    # x = (1, 1, 0): joint 1/2 * 5/17 * 9/17 = 45/578 for spam and
    # 1/2 * 11/17 * 3/17 = 33/578 for ham, so P(spam | x) = 45/78.
    x = np.array([[1, 1, 0]])
    joint = np.exp(model.predict_joint_log_proba(x))[0]
    assert_allclose(joint[[SPAM, HAM]], [45 / 578, 33 / 578], rtol=RTOL)
    assert_allclose(model.predict_proba(x)[0, SPAM], 45 / 78, rtol=RTOL)


def test_multinomial_counts_with_add_one_smoothing():
    model = fastnb.MultinomialNB(alpha=1.0).fit(COUNTS_X, SPAM_HAM_Y)
    # (total + 1) / (17 + 3)
    theta_spam = [6 / 20, 10 / 20, 4 / 20]
    theta_ham = [12 / 20, 4 / 20, 4 / 20]
    assert_allclose(np.exp(model.feature_log_prob_), [theta_ham, theta_spam], rtol=RTOL)


# ---------------------------------------------------------------------------
# (c) Movie reviews with Laplace smoothing
# ---------------------------------------------------------------------------

REVIEWS = [
    ("I loved the movie", "+"),
    ("I hated the movie", "-"),
    ("a great movie. good movie", "+"),
    ("poor acting", "-"),
    ("great acting. a good movie", "+"),
]


def test_movie_reviews():
    docs, labels = zip(*REVIEWS, strict=True)
    # Keep one-letter words such as "I" and "a".
    vectorizer = CountVectorizer(token_pattern=r"(?u)\b\w+\b", lowercase=True)
    X = vectorizer.fit_transform(docs)
    assert len(vectorizer.vocabulary_) == 10
    assert sorted(vectorizer.vocabulary_) == sorted(
        ["i", "loved", "the", "movie", "hated", "a", "great", "good", "poor", "acting"]
    )
    model = fastnb.MultinomialNB(alpha=1.0).fit(X, labels)
    assert_array_equal(model.classes_, ["+", "-"])

    # Positive reviews hold 14 words, negative ones 6; with 10 words of
    # vocabulary, P(w | +) = (n_w+ + 1) / 24 and P(w | -) = (n_w- + 1) / 16.
    test_doc = vectorizer.transform(["I hated the poor acting"])
    positive_counts = {"i": 1, "hated": 0, "the": 1, "poor": 0, "acting": 1}
    negative_counts = {"i": 1, "hated": 1, "the": 1, "poor": 1, "acting": 1}
    theta = np.exp(model.feature_log_prob_)
    for word, count in positive_counts.items():
        assert_allclose(theta[0, vectorizer.vocabulary_[word]], (count + 1) / 24)
    for word, count in negative_counts.items():
        assert_allclose(theta[1, vectorizer.vocabulary_[word]], (count + 1) / 16)

    # P(+) * likelihood = 3/5 * (2 * 1 * 2 * 1 * 2) / 24^5 = 6.03e-7
    # P(-) * likelihood = 2/5 * 2^5 / 16^5                  = 1.22e-5
    joint = np.exp(model.predict_joint_log_proba(test_doc))[0]
    assert_allclose(joint, [3 / 5 * 8 / 24**5, 2 / 5 * 2**5 / 16**5], rtol=RTOL)
    assert_allclose(joint, [6.03e-7, 1.22e-5], rtol=5e-3)
    assert model.predict(test_doc)[0] == "-"
