"""The NumPy reference estimators against scikit-learn's."""

import doctest
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import poisson
from sklearn import naive_bayes as sk_nb

from fastnb import reference

N_SAMPLES = 60
N_FEATURES = 7
ALPHA_PER_FEATURE = np.linspace(0.1, 2.0, N_FEATURES)

CONTAINERS = {"dense": np.asarray, "csr": sp.csr_matrix}
OTHER_SPARSE = {
    "csr_array": sp.csr_array,
    "csc_matrix": sp.csc_matrix,
    "coo_array": sp.coo_array,
}
RTOL = {np.float64: 1e-10, np.float32: 1e-5}

# (estimator name, constructor parameters). "class_prior": "given" is replaced
# by a prior matching the number of classes of the test.
CONFIGS = [
    ("MultinomialNB", {}),
    ("MultinomialNB", {"alpha": ALPHA_PER_FEATURE}),
    ("MultinomialNB", {"alpha": 1e-12, "force_alpha": False, "fit_prior": False}),
    ("MultinomialNB", {"alpha": 0.3, "class_prior": "given"}),
    ("ComplementNB", {}),
    ("ComplementNB", {"alpha": ALPHA_PER_FEATURE, "norm": True}),
    ("ComplementNB", {"alpha": 0.0, "force_alpha": False, "class_prior": "given"}),
    ("BernoulliNB", {}),
    ("BernoulliNB", {"binarize": None, "fit_prior": False}),
    ("BernoulliNB", {"binarize": 2.0, "alpha": 0.5, "class_prior": "given"}),
]

LABELS = {
    "2 int": np.array([3, 7]),
    "5 str": np.array(["ant", "bee", "cat", "dog", "eel"]),
}


def make_data(labels, seed=0):
    """Return random non-negative counts with no all-zero row, and labels.

    Every class is present, and each row has at least one nonzero so that
    no row scores exactly equal for two classes.
    """
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.5, size=(N_SAMPLES, N_FEATURES)).astype(np.float64)
    X *= rng.random((N_SAMPLES, N_FEATURES)) < 0.5
    X[np.arange(N_SAMPLES), rng.integers(N_FEATURES, size=N_SAMPLES)] += 1.0
    # Fractional values in half the columns, as in tf-idf input; the other
    # half keep integers, which land exactly on the binarize thresholds.
    X[:, : N_FEATURES // 2] *= rng.uniform(0.5, 1.5, size=N_FEATURES // 2)
    y = labels[rng.permutation(np.arange(N_SAMPLES) % len(labels))]
    sample_weight = rng.uniform(0.0, 3.0, size=N_SAMPLES)
    return X, y, sample_weight


def fit_both(name, params, X, y, sample_weight=None):
    """Fit the reference estimator and scikit-learn's on the same data."""
    ours = getattr(reference, name)(**params).fit(X, y, sample_weight=sample_weight)
    with warnings.catch_warnings():
        # scikit-learn warns when it raises a tiny alpha; so it should.
        warnings.filterwarnings("ignore", message="alpha too small")
        theirs = getattr(sk_nb, name)(**params).fit(X, y, sample_weight=sample_weight)
    return ours, theirs


def assert_agrees(ours, theirs, X, rtol):
    """Assert equal fitted attributes and predictions on ``X``."""
    assert_array_equal(ours.classes_, theirs.classes_)
    attributes = [
        "class_count_",
        "feature_count_",
        "feature_log_prob_",
        "class_log_prior_",
    ]
    if isinstance(theirs, sk_nb.ComplementNB):
        attributes.append("feature_all_")
    for attribute in attributes:
        value = getattr(ours, attribute)
        assert value.dtype == np.float64, attribute
        assert value.shape == getattr(theirs, attribute).shape, attribute
        assert_allclose(value, getattr(theirs, attribute), rtol=rtol, err_msg=attribute)

    for method in ["predict_joint_log_proba", "predict_log_proba", "predict_proba"]:
        result = getattr(ours, method)(X)
        assert isinstance(result, np.ndarray), method
        assert result.dtype == np.float64, method
        assert not np.isnan(result).any(), method
        assert_allclose(result, getattr(theirs, method)(X), rtol=rtol, err_msg=method)
    assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("labels", list(LABELS.values()), ids=list(LABELS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize(
    ("name", "params"), CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]
)
def test_matches_sklearn(name, params, container, dtype, labels, weighted):
    X, y, sample_weight = make_data(labels)
    if name == "BernoulliNB" and params.get("binarize", 0.0) is None:
        X = (X > 1.0).astype(np.float64)
    X = CONTAINERS[container](X.astype(dtype))
    if params.get("class_prior") == "given":
        prior = np.linspace(1.0, 2.0, len(labels))
        params = {**params, "class_prior": prior / prior.sum()}
    ours, theirs = fit_both(name, params, X, y, sample_weight if weighted else None)
    assert_agrees(ours, theirs, X, RTOL[dtype])


@pytest.mark.parametrize("container", list(OTHER_SPARSE))
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_other_sparse_formats_match_sklearn(name, container):
    X, y, sample_weight = make_data(LABELS["5 str"])
    X = OTHER_SPARSE[container](X)
    ours, theirs = fit_both(name, {}, X, y, sample_weight)
    assert_agrees(ours, theirs, X, RTOL[np.float64])


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_single_class_matches_sklearn(name):
    # ComplementNB adds the class prior to its scores only in this case.
    X, _, sample_weight = make_data(LABELS["2 int"])
    y = np.full(N_SAMPLES, "only")
    ours, theirs = fit_both(name, {}, X, y, sample_weight)
    assert_agrees(ours, theirs, X, RTOL[np.float64])


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_zero_weight_class_matches_sklearn(name):
    # A class whose samples all weigh zero gets a log prior of -inf.
    X, y, sample_weight = make_data(LABELS["5 str"])
    sample_weight[y == "cat"] = 0.0
    with warnings.catch_warnings():
        # log(0) is expected here and must not warn.
        warnings.simplefilter("error")
        ours = getattr(reference, name)().fit(X, y, sample_weight)
    theirs = getattr(sk_nb, name)().fit(X, y, sample_weight)
    if name != "ComplementNB":
        assert ours.class_log_prior_[2] == -np.inf
    assert_agrees(ours, theirs, X, RTOL[np.float64])


@pytest.mark.parametrize("container", ["dense", "csr"])
def test_bernoulli_per_feature_alpha_matches_sklearn_per_column(container):
    # scikit-learn's BernoulliNB cannot take a per-feature alpha (it adds the
    # alpha array to the class counts), but each feature's estimate depends
    # on that feature alone. So a one-column scikit-learn model with scalar
    # alpha[j] gives column j of the reference model, and the joint
    # log-likelihood is the prior plus each column's term.
    X, y, sample_weight = make_data(LABELS["5 str"])
    X = CONTAINERS[container](X)
    ours = reference.BernoulliNB(alpha=ALPHA_PER_FEATURE, binarize=1.0)
    ours.fit(X, y, sample_weight)

    expected_jll = 0.0
    for j, alpha in enumerate(ALPHA_PER_FEATURE):
        column = sp.csc_matrix(X)[:, [j]]
        theirs = sk_nb.BernoulliNB(alpha=alpha, binarize=1.0)
        theirs.fit(column, y, sample_weight)
        assert_allclose(
            ours.feature_log_prob_[:, j], theirs.feature_log_prob_[:, 0], rtol=1e-10
        )
        column_jll = theirs.predict_joint_log_proba(column)
        expected_jll = expected_jll + column_jll - theirs.class_log_prior_
    expected_jll += theirs.class_log_prior_
    assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=1e-10)
    assert_allclose(ours.predict_joint_log_proba(X), expected_jll, rtol=1e-10)


def test_bernoulli_sparse_input_is_not_modified():
    X, y, _ = make_data(LABELS["2 int"])
    X_sparse = sp.csr_matrix(X)
    data_before = X_sparse.data.copy()
    model = reference.BernoulliNB(binarize=1.0).fit(X_sparse, y)
    model.predict(X_sparse)
    assert_array_equal(X_sparse.data, data_before)


def test_docstring_examples():
    failed, attempted = doctest.testmod(reference, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failed == 0


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    "params", [{}, {"alpha": 0.3}, {"fit_prior": False}, {"min_categories": 9}]
)
def test_categorical_matches_sklearn(params, weighted):
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(0, k, 120) for k in (2, 4, 7)])
    y = rng.integers(0, 3, 120)
    weights = rng.uniform(0.2, 2.0, 120) if weighted else None
    ours = reference.CategoricalNB(**params).fit(X, y, sample_weight=weights)
    theirs = sk_nb.CategoricalNB(**params).fit(X, y, sample_weight=weights)
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_array_equal(ours.n_categories_, theirs.n_categories_)
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-10
    )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_categorical_unseen_code_gets_the_zero_count_probability():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    model = reference.CategoricalNB(alpha=0.5).fit(X, np.array([0, 0, 1, 1]))
    jll = model.predict_joint_log_proba(np.array([[5, 0]]))
    # Class 0: feature 0 unseen, 0.5 / (2 + 0.5 * 2); feature 1 = 0 once of 2.
    expected = np.log(0.5) + np.log(0.5 / 3) + np.log(1.5 / 3)
    assert jll[0, 0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_poisson_matches_scipy(alpha):
    rng = np.random.default_rng(8)
    X = rng.poisson([1.0, 3.0, 0.5], size=(90, 3)).astype(np.float64)
    y = rng.integers(0, 3, 90)
    model = reference.PoissonNB(alpha=alpha).fit(X, y)
    overall = X.mean(axis=0)
    for k in range(3):
        in_class = y == k
        rate = (X[in_class].sum(axis=0) + alpha * overall) / (in_class.sum() + alpha)
        np.testing.assert_allclose(model.rate_[k], rate, rtol=1e-12)
        expected = np.log(in_class.mean()) + poisson.logpmf(X, rate).sum(axis=1)
        np.testing.assert_allclose(
            model.predict_joint_log_proba(X)[:, k], expected, rtol=1e-12
        )
