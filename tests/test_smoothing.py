"""The m-estimate (MEstimate): Lidstone equivalences, hand formulas, validation."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import naive_bayes as sk_nb
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils._param_validation import InvalidParameterError

import fastnb
from fastnb import MEstimate

from _helpers import make_counts, tol

LABELS = np.array(["ant", "bee", "cat"])
N_FEATURES = 12
OUTPUTS = ["predict_joint_log_proba", "predict_log_proba", "predict_proba"]


def assert_agrees(ours, theirs, X, rtol):
    assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=rtol)
    assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=rtol)
    for method in OUTPUTS:
        assert_allclose(
            getattr(ours, method)(X), getattr(theirs, method)(X), rtol=rtol, atol=1e-300
        )
    assert_array_equal(ours.predict(X), theirs.predict(X))


def make_codes(n_samples=90, n_features=4, seed=0):
    """Category codes (feature j has codes 0 .. j + 2), labels, weights.

    Classes have unequal sizes and each favours its own code of every
    feature, so that no two classes score alike.
    """
    rng = np.random.default_rng(seed)
    sizes = [n_samples // 6, n_samples // 3, n_samples - n_samples // 2]
    class_index = rng.permutation(np.repeat(np.arange(3), sizes))
    X = np.empty((n_samples, n_features), dtype=np.int64)
    for j in range(n_features):
        n_codes = j + 3
        favourite = (class_index + j) % n_codes
        anything = rng.integers(0, n_codes, size=n_samples)
        X[:, j] = np.where(rng.random(n_samples) < 0.4, favourite, anything)
    return X, LABELS[class_index], rng.uniform(0.2, 3.0, size=n_samples)


# ---------------------------------------------------------------------------
# Lidstone (alpha) is the m-estimate with m = alpha V and a uniform prior
# ---------------------------------------------------------------------------


def bernoulli_by_hand(X, y, w, pseudo_on, pseudo_total):
    """feature_log_prob_ and joint log-likelihood of BernoulliNB, counted here.

    p_ci = (N_ci + pseudo_on_i) / (N_c + pseudo_total_i).
    """
    w = np.ones(len(y)) if w is None else w
    on = (X > 0).astype(np.float64)
    N = np.array([w[y == c] @ on[y == c] for c in LABELS])
    N_c = np.array([w[y == c].sum() for c in LABELS])
    p = (N + pseudo_on) / (N_c[:, None] + pseudo_total)
    joint = np.log(N_c / N_c.sum()) + on @ np.log(p).T + (1 - on) @ np.log(1 - p).T
    return np.log(p), joint


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.5])
def test_bernoulli_lidstone_is_m_estimate(alpha, weighted):
    X, y, w = make_counts(LABELS, n_features=N_FEATURES)
    X[:, 3] = 0.0  # a feature never on
    w = w if weighted else None
    theirs = sk_nb.BernoulliNB(alpha=alpha).fit(X, y, sample_weight=w)
    models = [
        fastnb.BernoulliNB(alpha=alpha),
        fastnb.BernoulliNB(alpha=MEstimate(m=2 * alpha, prior=[0.5] * N_FEATURES)),
        fastnb.BernoulliNB(alpha=MEstimate(m=2 * alpha)),
    ]
    for model in models:
        model.fit(X, y, sample_weight=w)
        assert_agrees(model, theirs, X, tol(np.float64))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_bernoulli_lidstone_per_feature_is_m_estimate(weighted):
    # scikit-learn's BernoulliNB cannot take alpha per feature: count by hand.
    X, y, w = make_counts(LABELS, n_features=N_FEATURES)
    X[:, 3] = 0.0
    w = w if weighted else None
    alpha = np.linspace(0.1, 3.0, N_FEATURES)
    log_p, joint = bernoulli_by_hand(X, y, w, alpha, 2 * alpha)
    for smoothing in [
        alpha,
        MEstimate(m=2 * alpha, prior=[0.5] * N_FEATURES),
        MEstimate(m=2 * alpha),
    ]:
        model = fastnb.BernoulliNB(alpha=smoothing).fit(X, y, sample_weight=w)
        assert_allclose(model.feature_log_prob_, log_p, rtol=tol(np.float64))
        assert_allclose(model.predict_joint_log_proba(X), joint, rtol=tol(np.float64))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.5])
def test_multinomial_lidstone_is_m_estimate(alpha, weighted):
    X, y, w = make_counts(LABELS, n_features=N_FEATURES)
    w = w if weighted else None
    theirs = sk_nb.MultinomialNB(alpha=alpha).fit(X, y, sample_weight=w)
    uniform = np.full(N_FEATURES, 1 / N_FEATURES)
    for estimate in [
        MEstimate(m=alpha * N_FEATURES),
        MEstimate(m=alpha * N_FEATURES, prior=uniform),
    ]:
        ours = fastnb.MultinomialNB(alpha=estimate).fit(X, y, sample_weight=w)
        assert_agrees(ours, theirs, X, tol(np.float64))


def assert_same_categorical(ours, theirs, X, rtol):
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_, strict=True):
        assert_allclose(a, b, rtol=rtol)
    for method in OUTPUTS:
        assert_allclose(
            getattr(ours, method)(X), getattr(theirs, method)(X), rtol=rtol, atol=1e-300
        )
    assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.5])
def test_categorical_lidstone_is_m_estimate(alpha, weighted):
    X, y, w = make_codes()
    w = w if weighted else None
    n_categories = X.max(axis=0) + 1
    assert_array_equal(n_categories, [3, 4, 5, 6])
    theirs = sk_nb.CategoricalNB(alpha=alpha).fit(X, y, sample_weight=w)
    lidstone = fastnb.CategoricalNB(alpha=alpha).fit(X, y, sample_weight=w)
    m_estimate = fastnb.CategoricalNB(alpha=MEstimate(m=alpha * n_categories))
    m_estimate.fit(X, y, sample_weight=w)
    assert_same_categorical(lidstone, theirs, X, tol(np.float64))
    assert_same_categorical(m_estimate, theirs, X, tol(np.float64))
    # Categories never seen in training: alpha / (N_c + alpha n_i) either way.
    unseen = np.array([[7, 0, 1, 2], [0, 9, 9, 9]])
    assert_same_categorical(m_estimate, lidstone, unseen, tol(np.float64))


# ---------------------------------------------------------------------------
# A non-uniform prior: (N + m p) / (N_c + m), counted here
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("m", [3.0, "per feature"])
def test_bernoulli_non_uniform_prior(m):
    X, y, w = make_counts(LABELS, n_features=N_FEATURES)
    m = np.linspace(0.5, 6.0, N_FEATURES) if m == "per feature" else m
    prior = np.linspace(0.05, 0.95, N_FEATURES)
    model = fastnb.BernoulliNB(alpha=MEstimate(m=m, prior=prior))
    model.fit(X, y, sample_weight=w)
    log_p, joint = bernoulli_by_hand(X, y, w, m * prior, m)
    assert_allclose(model.feature_log_prob_, log_p, rtol=tol(np.float64))
    assert_allclose(model.predict_joint_log_proba(X), joint, rtol=tol(np.float64))


def test_multinomial_non_uniform_prior():
    X, y, w = make_counts(LABELS, n_features=N_FEATURES)
    prior = np.arange(1.0, N_FEATURES + 1.0)
    prior /= prior.sum()
    m = 7.5
    model = fastnb.MultinomialNB(alpha=MEstimate(m=m, prior=prior))
    model.fit(X, y, sample_weight=w)
    N = np.array([w[y == c] @ X[y == c] for c in LABELS])
    p = (N + m * prior) / (N.sum(axis=1, keepdims=True) + m)
    assert_allclose(model.feature_log_prob_, np.log(p), rtol=tol(np.float64))
    N_c = np.array([w[y == c].sum() for c in LABELS])
    expected = np.log(N_c / N_c.sum()) + X @ np.log(p).T
    assert_allclose(model.predict_joint_log_proba(X), expected, rtol=tol(np.float64))


@pytest.mark.parametrize("m", [4.0, "per feature"])
def test_categorical_non_uniform_prior(m):
    X, y, w = make_codes()
    n_categories = [3, 4, 5, 6]
    m = np.array([0.5, 2.0, 5.0, 11.0]) if m == "per feature" else m
    m_i = np.broadcast_to(m, (4,))
    prior = []
    for n in n_categories:
        p = np.arange(1.0, n + 1.0) ** 2
        prior.append(p / p.sum())
    model = fastnb.CategoricalNB(alpha=MEstimate(m=m, prior=prior))
    model.fit(X, y, sample_weight=w)
    N_c = np.array([w[y == c].sum() for c in LABELS])
    tables = []
    for i, n in enumerate(n_categories):
        N = np.array(
            [[w[(y == c) & (X[:, i] == a)].sum() for a in range(n)] for c in LABELS]
        )
        table = (N + m_i[i] * prior[i]) / (N_c[:, None] + m_i[i])
        assert_allclose(model.feature_log_prob_[i], np.log(table), rtol=tol(np.float64))
        tables.append(table)
    # A category never seen in training is smoothed as if the prior were
    # uniform: m_i / n_i / (N_c + m_i).
    row = np.array([2, 3, 99, 0])
    expected = np.log(N_c / N_c.sum())
    for i, code in enumerate(row):
        if code < n_categories[i]:
            expected = expected + np.log(tables[i][:, code])
        else:
            expected = expected + np.log(m_i[i] / n_categories[i] / (N_c + m_i[i]))
    got = model.predict_joint_log_proba(row[None, :])[0]
    assert_allclose(got, expected, rtol=tol(np.float64))


# ---------------------------------------------------------------------------
# Invalid m-estimates, and the models that refuse one
# ---------------------------------------------------------------------------

# Each invalid m-estimate for n features, and its message with n = N_FEATURES.
INVALID = {
    "negative m": (
        lambda n: MEstimate(m=-1.0),
        r"MEstimate m must be finite and >= 0, got -1\.0",
    ),
    "nan m": (
        lambda n: MEstimate(m=np.nan),
        "MEstimate m must be finite and >= 0, got nan",
    ),
    "negative m per feature": (
        lambda n: MEstimate(m=np.r_[-1.0, np.ones(n - 1)]),
        "All values of MEstimate m must be finite and >= 0",
    ),
    "m wrong length": (
        lambda n: MEstimate(m=np.ones(n + 1)),
        r"one value per feature \(12\); got shape \(13,\)",
    ),
    "prior wrong shape": (
        lambda n: MEstimate(m=1.0, prior=np.full(n - 1, 0.5)),
        r"prior \(per feature\) must have shape \(12,\); got \(11,\)",
    ),
    "prior 2-d": (
        lambda n: MEstimate(m=1.0, prior=np.full((1, n), 0.5)),
        r"prior \(per feature\) must have shape \(12,\); got \(1, 12\)",
    ),
    "prior negative": (
        lambda n: MEstimate(m=1.0, prior=np.r_[-0.1, np.full(n - 1, 0.5)]),
        r"prior \(per feature\) must hold probabilities in \[0, 1\]",
    ),
    "prior above 1": (
        lambda n: MEstimate(m=1.0, prior=np.r_[1.5, np.full(n - 1, 0.5)]),
        r"prior \(per feature\) must hold probabilities in \[0, 1\]",
    ),
    "prior nan": (
        lambda n: MEstimate(m=1.0, prior=np.r_[np.nan, np.full(n - 1, 0.5)]),
        r"prior \(per feature\) must hold probabilities in \[0, 1\]",
    ),
}


@pytest.mark.parametrize("invalid", INVALID)
@pytest.mark.parametrize("name", ["BernoulliNB", "MultinomialNB"])
def test_invalid_m_estimate_raises(name, invalid):
    X, y, _ = make_counts(LABELS, n_features=N_FEATURES)
    make, message = INVALID[invalid]
    model = getattr(fastnb, name)(alpha=make(N_FEATURES))
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    assert not hasattr(model, "classes_")


# Each invalid m-estimate of the 4 features of make_codes, and its message.
CATEGORICAL_INVALID = {
    "negative m": (
        MEstimate(m=-2.0),
        r"MEstimate m must be finite and >= 0, got -2\.0",
    ),
    "negative m per feature": (
        MEstimate(m=[1.0, -1.0, 1.0, 1.0]),
        "All values of MEstimate m must be finite and >= 0",
    ),
    "m wrong length": (
        MEstimate(m=[1.0, 1.0]),
        r"one value per feature \(4\); got shape \(2,\)",
    ),
    "prior not a list per feature": (
        MEstimate(m=1.0, prior=[0.25] * 4),
        r"prior \(feature 0\) must have shape \(3,\); got \(\)",
    ),
    "prior too few features": (
        MEstimate(m=1.0, prior=[[1 / 3] * 3, [0.25] * 4]),
        r"prior must be a list with one array per feature \(4\); got 2",
    ),
    "prior wrong length": (
        MEstimate(m=1.0, prior=[[1 / 3] * 3, [0.25] * 4, [0.2] * 5, [0.2] * 5]),
        r"prior \(feature 3\) must have shape \(6,\); got \(5,\)",
    ),
    "prior negative": (
        MEstimate(
            m=1.0, prior=[[1 / 3] * 3, [0.5, 0.5, 0.5, -0.5], [0.2] * 5, [1 / 6] * 6]
        ),
        r"prior \(feature 1\) must hold probabilities in \[0, 1\]",
    ),
    "prior above 1": (
        MEstimate(
            m=1.0, prior=[[1 / 3] * 3, [0.25] * 4, [2.0, 0, 0, 0, 0], [1 / 6] * 6]
        ),
        r"prior \(feature 2\) must hold probabilities in \[0, 1\]",
    ),
}


@pytest.mark.parametrize("invalid", CATEGORICAL_INVALID)
def test_invalid_m_estimate_raises_categorical(invalid):
    X, y, _ = make_codes()
    alpha, message = CATEGORICAL_INVALID[invalid]
    model = fastnb.CategoricalNB(alpha=alpha)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    assert not hasattr(model, "classes_")


@pytest.mark.parametrize("name", ["ComplementNB", "PoissonNB"])
def test_models_without_m_estimate_reject_it(name):
    X, y, _ = make_counts(LABELS)
    assert issubclass(InvalidParameterError, ValueError)
    for estimate in [MEstimate(m=1.0), MEstimate(m=2.0, prior=np.full(12, 0.5))]:
        with pytest.raises(InvalidParameterError, match="alpha"):
            getattr(fastnb, name)(alpha=estimate).fit(X, y)
        with pytest.raises(InvalidParameterError, match="alpha"):
            getattr(fastnb, name)(alpha=estimate).partial_fit(X, y, classes=LABELS)


# ---------------------------------------------------------------------------
# clone, pickle, grid search
# ---------------------------------------------------------------------------


def test_m_estimate_survives_clone_and_pickle():
    X, y, w = make_counts(LABELS, n_features=N_FEATURES)
    estimate = MEstimate(m=3.0, prior=np.linspace(0.1, 0.9, N_FEATURES))
    model = fastnb.BernoulliNB(alpha=estimate).fit(X, y, sample_weight=w)
    expected = model.predict_proba(X)
    assert "MEstimate(m=3.0" in repr(model)

    cloned = clone(model)
    assert not hasattr(cloned, "classes_")
    assert isinstance(cloned.alpha, MEstimate)
    assert cloned.alpha == estimate
    assert cloned.get_params()["alpha"] == estimate
    assert_array_equal(cloned.fit(X, y, sample_weight=w).predict_proba(X), expected)

    restored = pickle.loads(pickle.dumps(model))
    assert restored.alpha == estimate
    assert_array_equal(restored.predict_proba(X), expected)
    restored.partial_fit(X[:10], y[:10])
    model.partial_fit(X[:10], y[:10])
    assert_array_equal(restored.predict_proba(X), model.predict_proba(X))

    codes, labels, _ = make_codes()
    categorical = fastnb.CategoricalNB(
        alpha=MEstimate(
            m=[1.0, 2.0, 3.0, 4.0], prior=[np.full(n, 1 / n) for n in (3, 4, 5, 6)]
        )
    ).fit(codes, labels)
    again = pickle.loads(pickle.dumps(categorical))
    assert again.alpha == categorical.alpha
    assert_array_equal(again.predict_proba(codes), categorical.predict_proba(codes))
    assert clone(categorical).alpha == categorical.alpha


@pytest.mark.parametrize("name", ["BernoulliNB", "MultinomialNB"])
def test_grid_search_over_m(name):
    X, y, _ = make_counts(LABELS, n_samples=150, n_features=N_FEATURES)
    X = np.round(X)
    ms = [0.05, 0.5, 2.0, 8.0, 40.0]
    # The equivalent Lidstone alpha of each m, for scikit-learn.
    per_value = 2 if name == "BernoulliNB" else N_FEATURES
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = GridSearchCV(
        getattr(fastnb, name)(), {"alpha": [MEstimate(m=m) for m in ms]}, cv=cv
    ).fit(X, y)
    theirs = GridSearchCV(
        getattr(sk_nb, name)(), {"alpha": [m / per_value for m in ms]}, cv=cv
    ).fit(X, y)
    assert_allclose(
        ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"]
    )
    assert ours.best_index_ == theirs.best_index_
    assert ours.best_params_["alpha"] == MEstimate(m=ms[theirs.best_index_])
    assert_array_equal(ours.predict(X), theirs.predict(X))


def test_equal_m_estimates_hash_alike():
    # __eq__ compares values, so __hash__ must too: a set keeps one of them.
    same = [
        MEstimate(2.0, prior=np.array([0.25, 0.75])),
        MEstimate(2.0, prior=[0.25, 0.75]),
    ]
    assert same[0] == same[1] and hash(same[0]) == hash(same[1])
    assert len(set(same)) == 1
    per_feature = MEstimate(np.array([1.0, 2.0]), prior=[np.array([0.5, 0.5])])
    assert hash(per_feature) == hash(MEstimate([1.0, 2.0], prior=[[0.5, 0.5]]))
    assert len({MEstimate(1.0), MEstimate(2.0), MEstimate(1.0, prior=[1.0])}) == 3
