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


# ---------------------------------------------------------------------------
# The state protocol (notes/protocol.md): statistics, steps, partial_fit
# ---------------------------------------------------------------------------


def gaussian_data(labels, seed=0):
    """Normal features shifted by class, with positive weights."""
    rng = np.random.default_rng(seed)
    y = labels[rng.permutation(np.arange(N_SAMPLES) % len(labels))]
    shift = np.searchsorted(np.unique(labels), y)[:, np.newaxis]
    X = 3.0 + shift + rng.normal(size=(N_SAMPLES, N_FEATURES))
    return X, y, rng.uniform(0.2, 3.0, N_SAMPLES)


def shapes(statistics):
    """Each statistic's shape (a list of shapes for a list of arrays)."""
    return {
        key: [np.shape(v) for v in value]
        if isinstance(value, list)
        else (value if isinstance(value, np.dtype) else np.shape(value))
        for key, value in statistics.items()
    }


def test_statistics_follow_the_protocol():
    # Keys and shapes as notes/protocol.md lists them: K classes, F features.
    K, F = 5, N_FEATURES
    X, y, sample_weight = make_data(LABELS["5 str"])
    counts = {"class_count": (K,), "feature_count": (K, F)}
    for name in ["MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB"]:
        model = getattr(reference, name)().fit(X, y, sample_weight)
        assert shapes(model.statistics_) == counts, name
        assert all(v.dtype == np.float64 for v in model.statistics_.values()), name

    X_float32 = X.astype(np.float32)
    gaussian = reference.GaussianNB().fit(X_float32, y, sample_weight)
    assert shapes(gaussian.statistics_) == {
        "class_count": (K,),
        "mean": (K, F),
        "ssd": (K, F),
        "sample_count": (),
        "sample_mean": (F,),
        "sample_ssd": (F,),
        "dtype": np.dtype(np.float32),
    }
    # The sample moments are unweighted: of every row, each counted once.
    assert gaussian.statistics_["sample_count"] == N_SAMPLES
    assert_allclose(
        gaussian.statistics_["sample_mean"],
        X_float32.astype(np.float64).mean(axis=0),
        rtol=1e-12,
    )

    codes = np.array([[0, 2], [1, 0], [0, 0], [1, 2]])
    words = np.array([["b"], ["a"], ["b"], ["c"]], dtype=object)
    y_small = np.array([0, 1, 1, 0])
    categorical = reference.CategoricalNB().fit(codes, y_small)
    assert shapes(categorical.statistics_) == {
        "class_count": (2,),
        "category_count": (2 + 3, 2),
        "categories": [(2,), (3,)],
    }
    assert [c.tolist() for c in categorical.statistics_["categories"]] == [
        [0, 1],
        [0, 1, 2],
    ]
    assert all(c.dtype == np.int64 for c in categorical.statistics_["categories"])
    # Feature-major, a row per code, a column per class (weights of one).
    assert_array_equal(
        categorical.statistics_["category_count"],
        [
            [1, 1],  # feature 0, code 0: rows 0 (class 0) and 2 (class 1)
            [1, 1],  # feature 0, code 1: rows 3 and 1
            [0, 2],  # feature 1, code 0: rows 1 and 2
            [0, 0],  # feature 1, code 1: none
            [2, 0],  # feature 1, code 2: rows 0 and 3
        ],
    )
    encoded = reference.CategoricalNB().fit(words, y_small).statistics_
    assert encoded["categories"][0].dtype == object
    assert encoded["categories"][0].tolist() == ["a", "b", "c"]

    mixed = reference.MixedNB(families={"categorical": [1], "gaussian": [0]})
    mixed.fit(codes.astype(np.float64), y_small)
    assert list(mixed.statistics_) == [
        "class_count",
        "categorical/columns",
        "categorical/class_count",
        "categorical/category_count",
        "categorical/categories",
        "gaussian/columns",
        "gaussian/class_count",
        "gaussian/mean",
        "gaussian/ssd",
        "gaussian/sample_count",
        "gaussian/sample_mean",
        "gaussian/sample_ssd",
        "gaussian/dtype",
    ]
    assert_array_equal(mixed.statistics_["gaussian/columns"], [0])
    assert mixed.statistics_["gaussian/columns"].dtype == np.intp


def test_categorical_partial_fit_appends_new_values_sorted():
    # Codes of raw values never change: the first batch's values sorted,
    # then each later batch's new values sorted after them.
    first = np.array([["sun"], ["rain"], ["sun"]], dtype=object)
    second = np.array([["fog"], ["wind"], ["rain"], ["fog"]], dtype=object)
    model = reference.CategoricalNB(alpha=1.0)
    model.partial_fit(first, np.array([0, 1, 0]), classes=[0, 1])
    model.partial_fit(second, np.array([1, 1, 0, 0]))
    assert model.categories_[0].tolist() == ["rain", "sun", "fog", "wind"]
    # Weighted counts per class (rows) of rain, sun, fog, wind (columns).
    assert_array_equal(model.category_count_[0], [[1, 2, 1, 0], [1, 0, 1, 1]])
    # Class 1 (3 samples): (count + 1) / (3 + 4); unseen: 1 / 7.
    assert_allclose(np.exp(model.feature_log_prob_[0][1]), [2 / 7, 1 / 7, 2 / 7, 2 / 7])
    jll = model.predict_joint_log_proba(np.array([["snow"]], dtype=object))
    assert_allclose(jll[0], np.log([4 / 7 * 1 / 8, 3 / 7 * 1 / 7]), rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize(
    "params", [{}, {"var_smoothing": 1e-3}, {"priors": [0.2, 0.3, 0.1, 0.25, 0.15]}]
)
def test_gaussian_matches_sklearn(params, container, dtype, weighted):
    # scikit-learn's GaussianNB (no sparse input) on the same values.
    X, y, sample_weight = gaussian_data(LABELS["5 str"])
    X = X.astype(dtype)
    sample_weight = sample_weight if weighted else None
    ours = reference.GaussianNB(**params).fit(
        CONTAINERS[container](X), y, sample_weight
    )
    theirs = sk_nb.GaussianNB(**params).fit(X, y, sample_weight)
    rtol = RTOL[dtype]
    assert_array_equal(ours.classes_, theirs.classes_)
    for name in ["class_count_", "class_prior_", "theta_", "var_", "epsilon_"]:
        value, expected = getattr(ours, name), getattr(theirs, name)
        assert np.asarray(value).dtype == np.asarray(expected).dtype, name
        assert_allclose(value, expected, rtol=rtol, err_msg=name)
    # scikit-learn computes float32 input in float32: its scores are exact
    # to about rtol times their size, and so are the log-probabilities.
    scale = np.abs(theirs.predict_joint_log_proba(X)).max()
    for method, atol in [
        ("predict_joint_log_proba", rtol * scale),
        ("predict_log_proba", rtol * scale),
        ("predict_proba", rtol),
    ]:
        result = getattr(ours, method)(CONTAINERS[container](X))
        expected = getattr(theirs, method)(X)
        assert result.dtype == expected.dtype, method
        assert_allclose(result, expected, rtol=rtol, atol=atol, err_msg=method)
    assert_array_equal(ours.predict(CONTAINERS[container](X)), theirs.predict(X))


@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_partial_fit_matches_sklearn(name, container):
    X, y, sample_weight = make_data(LABELS["5 str"])
    X = CONTAINERS[container](X)
    ours = getattr(reference, name)()
    theirs = getattr(sk_nb, name)()
    for rows in [slice(0, 25), slice(25, 26), slice(26, N_SAMPLES)]:
        for model in (ours, theirs):
            model.partial_fit(
                X[rows],
                y[rows],
                classes=LABELS["5 str"],
                sample_weight=sample_weight[rows],
            )
    assert_agrees(ours, theirs, X, RTOL[np.float64])


FAMILY_ESTIMATORS = {
    "gaussian": "GaussianNB",
    "categorical": "CategoricalNB",
    "multinomial": "MultinomialNB",
    "poisson": "PoissonNB",
}


@pytest.mark.parametrize("family", list(FAMILY_ESTIMATORS))
def test_mixed_with_one_family_is_that_family(family):
    # One family, and MixedNB's prior fitted: the family's own model.
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(N_SAMPLES, 3)).astype(np.float64)
    y = rng.integers(0, 3, N_SAMPLES)
    sample_weight = rng.uniform(0.2, 3.0, N_SAMPLES)
    mixed = reference.MixedNB(families={family: [0, 1, 2]})
    mixed.fit(X, y, sample_weight)
    alone = getattr(reference, FAMILY_ESTIMATORS[family])()
    alone.fit(X, y, sample_weight)
    class_weight = np.bincount(y, weights=sample_weight)
    assert_allclose(mixed.class_log_prior_, np.log(class_weight / class_weight.sum()))
    assert_allclose(
        mixed.predict_joint_log_proba(X), alone.predict_joint_log_proba(X), rtol=1e-12
    )
