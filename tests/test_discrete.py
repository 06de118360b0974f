"""fastnb's count-based estimators against scikit-learn's and the NumPy reference."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import naive_bayes as sk_nb
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

import fastnb
from fastnb import reference

from _helpers import OUTPUTS, dense_c, dense_f, make_counts, tol, with_index_dtype

ESTIMATORS = ["MultinomialNB", "ComplementNB", "BernoulliNB"]
N_FEATURES = 12
ALPHA_PER_FEATURE = np.linspace(0.05, 3.0, N_FEATURES)
LABELS = {
    "single": np.array(["only"]),
    "2 int": np.array([-1, 4]),
    "5 str": np.array(["ant", "bee", "cat", "dog", "eel"]),
    # More classes than the scoring kernels handle in one block.
    "11 int": np.arange(11) * 3,
}


# ---------------------------------------------------------------------------
# Input containers
# ---------------------------------------------------------------------------


def read_only(*arrays):
    for array in arrays:
        array.setflags(write=False)


def csr_matrix(X, index_dtype):
    return with_index_dtype(sp.csr_matrix(X), index_dtype)


def csc_matrix(X, index_dtype):
    return with_index_dtype(sp.csc_matrix(X), index_dtype)


def csr_array(X, index_dtype):
    return with_index_dtype(sp.csr_array(X), index_dtype)


def csr_read_only(X, index_dtype):
    X = with_index_dtype(sp.csr_matrix(X), index_dtype)
    read_only(X.data, X.indices, X.indptr)
    return X


# Read-only dense input and read-only CSR with int32 indices are
# test_invariants' (the same model as from writable input).
CONTAINERS = [
    pytest.param(make, index_dtype, id=f"{make.__name__}{suffix}")
    for make, index_dtypes in [
        (dense_c, [None]),
        (dense_f, [None]),
        (csr_matrix, [np.int32, np.int64]),
        (csc_matrix, [np.int32, np.int64]),
        (csr_array, [np.int32, np.int64]),
        (csr_read_only, [np.int64]),
    ]
    for index_dtype in index_dtypes
    for suffix in [f"-{np.dtype(index_dtype).name}" if index_dtype else ""]
]


def snapshot(X):
    """Copies of everything an input container holds, with dtypes and flags."""
    if sp.issparse(X):
        return [(a.copy(), a.flags.writeable) for a in (X.data, X.indices, X.indptr)]
    return [(X.copy(), X.flags.writeable)]


def assert_unchanged(X, before):
    after = snapshot(X)
    for (old, old_writeable), (new, new_writeable) in zip(before, after, strict=True):
        assert new.dtype == old.dtype
        assert_array_equal(new, old)
        assert new_writeable == old_writeable


# ---------------------------------------------------------------------------
# Comparison helpers
# ---------------------------------------------------------------------------


def fitted_attributes(model):
    names = ["class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_"]
    if "Complement" in type(model).__name__:
        names.append("feature_all_")
    return names


def assert_agrees(ours, expected, X, rtol, predictions=True):
    """Assert ours matches ``expected`` (scikit-learn or reference) on X.

    Every float result of fastnb must be float64, whatever the input dtype.
    """
    assert_array_equal(ours.classes_, expected.classes_)
    assert ours.classes_.dtype == expected.classes_.dtype
    for name in fitted_attributes(ours):
        value = getattr(ours, name)
        assert isinstance(value, np.ndarray), name
        assert value.dtype == np.float64, name
        assert value.shape == getattr(expected, name).shape, name
        assert_allclose(value, getattr(expected, name), rtol=rtol, err_msg=name)
    for method in OUTPUTS:
        result = getattr(ours, method)(X)
        assert isinstance(result, np.ndarray), method
        assert result.dtype == np.float64, method
        assert result.shape == (X.shape[0], len(ours.classes_)), method
        # Probabilities near zero: relative tolerance alone is too strict.
        atol = rtol * 1e-2 if method == "predict_proba" else 0.0
        assert_allclose(
            result, getattr(expected, method)(X), rtol=rtol, atol=atol, err_msg=method
        )
    if predictions:
        assert_array_equal(ours.predict(X), expected.predict(X))


def fit_three(name, params, X, y, sample_weight=None):
    """fastnb, scikit-learn and reference models fitted on the same input."""
    ours = getattr(fastnb, name)(**params).fit(X, y, sample_weight=sample_weight)
    theirs = getattr(sk_nb, name)(**params).fit(X, y, sample_weight=sample_weight)
    oracle = getattr(reference, name)(**params).fit(X, y, sample_weight=sample_weight)
    return ours, theirs, oracle


# ---------------------------------------------------------------------------
# Estimator x dtype x container x index dtype x weights
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(("make_container", "index_dtype"), CONTAINERS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_matches_sklearn_and_reference(
    name, dtype, make_container, index_dtype, weighted
):
    X_dense, y, sample_weight = make_counts(LABELS["5 str"])
    X = X_dense.astype(dtype)
    X = make_container(X) if index_dtype is None else make_container(X, index_dtype)
    assert X.dtype == dtype
    sample_weight = sample_weight if weighted else None
    before = snapshot(X)

    # fastnb alone first: a change to the input must be its doing.
    ours = getattr(fastnb, name)().fit(X, y, sample_weight=sample_weight)
    for method in [*OUTPUTS, "predict"]:
        getattr(ours, method)(X)
    assert_unchanged(X, before)

    theirs = getattr(sk_nb, name)().fit(X, y, sample_weight=sample_weight)
    oracle = getattr(reference, name)().fit(X, y, sample_weight=sample_weight)
    assert_agrees(ours, theirs, X, tol(dtype))
    assert_agrees(ours, oracle, X, tol(dtype))
    assert ours.score(X, y) == theirs.score(X, y)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_mixed_sparse_index_dtypes(name, index_dtype):
    # indices and indptr of different integer types.
    X_dense, y, sample_weight = make_counts(LABELS["5 str"])
    X = sp.csr_matrix(X_dense)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(np.int64 if index_dtype == np.int32 else np.int32)
    ours, theirs, _ = fit_three(name, {}, X, y, sample_weight)
    assert_agrees(ours, theirs, X, tol(np.float64))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_non_contiguous_dense_views(name):
    X_dense, y, sample_weight = make_counts(LABELS["5 str"], n_features=2 * N_FEATURES)
    # Every other column, rows reversed: neither C nor F contiguous.
    X = X_dense[::-1, ::2]
    y = y[::-1]
    assert not X.flags.c_contiguous and not X.flags.f_contiguous
    ours, theirs, _ = fit_three(name, {}, X, y, sample_weight)
    assert_agrees(ours, theirs, X, tol(np.float64))


@pytest.mark.parametrize(
    ("input_dtype", "sparse"),
    # scipy.sparse has no float16.
    [(t, s) for t in [np.int32, np.int64, bool] for s in [False, True]]
    + [(np.float16, False)],
    ids=lambda value: value if isinstance(value, str) else None,
)
@pytest.mark.parametrize("name", ESTIMATORS)
def test_other_dtypes_are_read_as_float64(name, input_dtype, sparse):
    X_float, y, sample_weight = make_counts(LABELS["2 int"])
    X_float = np.round(X_float) if input_dtype is not bool else X_float > 1.0
    X_float = X_float.astype(np.float64)
    X = X_float.astype(input_dtype)
    assert_array_equal(X.astype(np.float64), X_float)
    if sparse:
        X, X_float = sp.csr_matrix(X), sp.csr_matrix(X_float)
    ours = getattr(fastnb, name)().fit(X, y, sample_weight)
    theirs = getattr(sk_nb, name)().fit(X_float, y, sample_weight)
    assert_agrees(ours, theirs, X, tol(np.float64))


# ---------------------------------------------------------------------------
# Parameters and labels
# ---------------------------------------------------------------------------


def given_prior(n_classes):
    prior = np.arange(1.0, n_classes + 1.0)
    return prior / prior.sum()


# (estimator, parameters). "given" class_prior is replaced by given_prior().
CONFIGS = [
    ("MultinomialNB", {"alpha": 0.3}),
    ("MultinomialNB", {"alpha": ALPHA_PER_FEATURE}),
    ("MultinomialNB", {"alpha": 1e-12, "force_alpha": False}),
    ("MultinomialNB", {"alpha": ALPHA_PER_FEATURE * 1e-12, "force_alpha": False}),
    ("MultinomialNB", {"fit_prior": False}),
    ("MultinomialNB", {"class_prior": "given"}),
    ("MultinomialNB", {"class_prior": "given", "fit_prior": False, "alpha": 2.0}),
    ("ComplementNB", {"alpha": ALPHA_PER_FEATURE}),
    ("ComplementNB", {"norm": True}),
    ("ComplementNB", {"norm": True, "alpha": ALPHA_PER_FEATURE}),
    ("ComplementNB", {"alpha": 1e-12, "force_alpha": False}),
    ("ComplementNB", {"fit_prior": False}),
    ("ComplementNB", {"class_prior": "given"}),
    ("BernoulliNB", {"binarize": None}),
    ("BernoulliNB", {"binarize": 0.5}),
    ("BernoulliNB", {"binarize": 1.5, "alpha": 0.2, "fit_prior": False}),
    ("BernoulliNB", {"alpha": 1e-12, "force_alpha": False}),
    ("BernoulliNB", {"class_prior": "given"}),
]


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
@pytest.mark.parametrize("labels", list(LABELS), ids=list(LABELS))
@pytest.mark.parametrize(
    ("name", "params"), CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]
)
def test_parameters_match_sklearn_and_reference(name, params, labels, container):
    X, y, sample_weight = make_counts(LABELS[labels])
    if "binarize" in params and params["binarize"] is None:
        # The model reads X as it is: give it 0/1 values.
        X = (X > 1.0).astype(np.float64)
    X = container(X)
    if params.get("class_prior") == "given":
        params = {**params, "class_prior": given_prior(len(LABELS[labels]))}
    ours_estimator = getattr(fastnb, name)(**params)
    if params.get("force_alpha") is False:
        # Like scikit-learn, fastnb raises the tiny alpha and says so.
        with pytest.warns(UserWarning, match="alpha too small"):
            ours = ours_estimator.fit(X, y, sample_weight)
        with pytest.warns(UserWarning, match="alpha too small"):
            theirs = getattr(sk_nb, name)(**params).fit(X, y, sample_weight)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ours = ours_estimator.fit(X, y, sample_weight)
        theirs = getattr(sk_nb, name)(**params).fit(X, y, sample_weight)
    oracle = getattr(reference, name)(**params).fit(X, y, sample_weight)
    assert_agrees(ours, theirs, X, tol(np.float64))
    assert_agrees(ours, oracle, X, tol(np.float64))


def bernoulli_by_hand(X, y, sample_weight, alpha, threshold):
    """Bernoulli NB with per-feature alpha: p_cj = (N_cj + a_j) / (N_c + 2 a_j)."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X)
    on = (X > threshold).astype(np.float64)
    classes = np.unique(y)
    weighted = (y[:, None] == classes[None, :]) * sample_weight[:, None]
    class_count = weighted.sum(axis=0)
    feature_count = weighted.T @ on
    p = (feature_count + alpha) / (class_count[:, None] + 2 * alpha)
    log_prior = np.log(class_count / class_count.sum())
    jll = log_prior + on @ np.log(p).T + (1 - on) @ np.log(1 - p).T
    return np.log(p), jll


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
def test_bernoulli_per_feature_alpha(container):
    # Deliberately unlike scikit-learn, which adds the alpha vector to the
    # class counts: each feature's denominator is N_c + 2 alpha_j.
    X, y, sample_weight = make_counts(LABELS["5 str"])
    X = container(X)
    ours = fastnb.BernoulliNB(alpha=ALPHA_PER_FEATURE, binarize=1.0)
    ours.fit(X, y, sample_weight)
    log_p, jll = bernoulli_by_hand(X, y, sample_weight, ALPHA_PER_FEATURE, 1.0)
    assert_allclose(ours.feature_log_prob_, log_p, rtol=tol(np.float64))
    assert_allclose(ours.predict_joint_log_proba(X), jll, rtol=tol(np.float64))
    assert_array_equal(ours.predict(X), ours.classes_[np.argmax(jll, axis=1)])
    oracle = reference.BernoulliNB(alpha=ALPHA_PER_FEATURE, binarize=1.0)
    assert_agrees(ours, oracle.fit(X, y, sample_weight), X, tol(np.float64))


def unsmoothed_data():
    """Counts where each class lacks some feature the other class has."""
    X = np.array(
        [
            [2.0, 0.0, 1.0, 0.0],
            [1.0, 0.0, 3.0, 0.0],
            [0.0, 1.0, 1.0, 0.0],
            [0.0, 2.0, 0.0, 1.0],
            [0.0, 1.0, 2.0, 3.0],
        ]
    )
    y = np.array([0, 0, 1, 1, 1])
    return X, y


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
def test_multinomial_zero_counts_without_smoothing(container):
    # With alpha=0 a feature never seen in a class has log-probability -inf,
    # and a zero value of that feature must add nothing (0 * log 0 = 0),
    # where scikit-learn's dense path computes 0 * -inf = NaN.
    X, y = unsmoothed_data()
    model = fastnb.MultinomialNB(alpha=0.0, force_alpha=True)
    with np.errstate(divide="ignore"):
        model.fit(container(X), y)
    # Class 0 totals (3, 0, 4, 0) of 7; class 1 totals (0, 4, 3, 4) of 11.
    theta = np.array([[3 / 7, 0, 4 / 7, 0], [0, 4 / 11, 3 / 11, 4 / 11]])
    with np.errstate(divide="ignore"):
        log_theta = np.log(theta)
    assert_array_equal(model.feature_log_prob_ == -np.inf, theta == 0)
    assert_allclose(model.feature_log_prob_, log_theta, rtol=1e-12)

    expected = np.log([2 / 5, 3 / 5]) + np.array(
        [[np.sum(x[x > 0] * log_theta[c, x > 0]) for c in range(2)] for x in X]
    )
    jll = model.predict_joint_log_proba(container(X))
    assert not np.isnan(jll).any()
    assert_allclose(jll, expected, rtol=1e-12)
    # Each training row has a feature the other class never saw.
    assert_array_equal(model.predict_proba(container(X)), np.eye(2)[y])
    assert_array_equal(model.predict(container(X)), y)


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
def test_complement_zero_counts_without_smoothing(container):
    # A feature seen only in class c has a zero complement count for c, so
    # a weight of +inf; a row without that feature must not get NaN.
    X, y = unsmoothed_data()
    model = fastnb.ComplementNB(alpha=0.0, force_alpha=True)
    with np.errstate(divide="ignore"):
        model.fit(container(X), y)
    # Complement of class 0 is class 1's totals, and the other way round.
    complement = np.array([[0, 4 / 11, 3 / 11, 4 / 11], [3 / 7, 0, 4 / 7, 0]])
    with np.errstate(divide="ignore"):
        weights = -np.log(complement)
    assert_allclose(model.feature_log_prob_, weights, rtol=1e-12)
    expected = np.array(
        [[np.sum(x[x > 0] * weights[c, x > 0]) for c in range(2)] for x in X]
    )
    jll = model.predict_joint_log_proba(container(X))
    assert not np.isnan(jll).any()
    assert_allclose(jll, expected, rtol=1e-12)
    assert_array_equal(model.predict(container(X)), y)


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
def test_bernoulli_certain_features_without_smoothing(container):
    # With alpha=0, p = 1 for a feature present in every sample of a class
    # and p = 0 for one absent from all of them. The likelihood of a row is
    # prod_j p_j^x_j (1 - p_j)^(1 - x_j), with 0^0 = 1: a row agreeing with
    # the certain features has a finite log-likelihood, one contradicting
    # them has -inf, and none is NaN.
    X = np.array(
        [
            [1.0, 0.0, 1.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 1.0],
            [1.0, 1.0, 0.0],
        ]
    )
    y = np.array([0, 0, 1, 1])
    model = fastnb.BernoulliNB(alpha=0.0, force_alpha=True)
    with np.errstate(divide="ignore"):
        model.fit(container(X), y)
    p = np.array([[1.0, 0.0, 0.5], [0.5, 1.0, 0.5]])
    assert_allclose(np.exp(model.feature_log_prob_), p, rtol=1e-12)

    def log_likelihood(x, p_class):
        factors = np.where(x > 0, p_class, 1 - p_class)
        with np.errstate(divide="ignore"):
            return np.sum(np.log(factors))

    X_test = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    expected = np.log(0.5) + np.array(
        [[log_likelihood(x, p[c]) for c in range(2)] for x in X_test]
    )
    # Row 0: class 0 finite (1 * 1 * 1/2), class 1 -inf (feature 1 absent).
    assert np.isfinite(expected[0, 0]) and expected[0, 1] == -np.inf
    jll = model.predict_joint_log_proba(container(X_test))
    assert not np.isnan(jll).any(), jll
    assert_allclose(jll, expected, rtol=1e-12)
    assert_array_equal(model.predict(container(X_test)), [0, 1, 1])


@pytest.mark.parametrize("name", ESTIMATORS)
def test_prior_is_uniform_until_some_sample_has_weight(name):
    X, y, sample_weight = make_counts(["a", "b", "c"])
    model = getattr(fastnb, name)(fit_prior=True)
    model.partial_fit(
        X[:30], y[:30], classes=["a", "b", "c"], sample_weight=np.zeros(30)
    )
    assert_array_equal(model.class_count_, np.zeros(3))
    assert_allclose(model.class_log_prior_, np.log([1 / 3, 1 / 3, 1 / 3]), rtol=1e-14)
    proba = model.predict_proba(X)
    assert not np.isnan(proba).any()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)

    model.partial_fit(X[30:], y[30:], sample_weight=sample_weight[30:])
    counts = np.array([sample_weight[30:][y[30:] == c].sum() for c in "abc"])
    assert_allclose(model.class_log_prior_, np.log(counts / counts.sum()), rtol=1e-12)


def test_bernoulli_accepts_negative_values():
    # The Bernoulli model thresholds X, so negative values are fine.
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [0.0, 0.0, 4.0]])
    model = fastnb.BernoulliNB(binarize=0.5).fit(-X, [0, 1, 0, 1])
    assert_array_equal(model.feature_count_, np.zeros((2, 3)))


# ---------------------------------------------------------------------------
# Composition with scikit-learn tools
# ---------------------------------------------------------------------------


def random_corpus(n_docs=120, seed=0):
    """Short documents from three topics with overlapping word distributions."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i:02d}" for i in range(40)])
    topics = ["sport", "music", "law"]
    # Each topic favours its own 15 words but can emit any.
    weights = np.full((3, 40), 0.3)
    for t in range(3):
        weights[t, 12 * t : 12 * t + 15] = 2.0
    weights /= weights.sum(axis=1, keepdims=True)
    y = np.array(topics)[np.arange(n_docs) % 3]
    docs = [
        " ".join(rng.choice(vocabulary, size=rng.integers(3, 12), p=weights[t]))
        for t in np.arange(n_docs) % 3
    ]
    return docs, y


@pytest.mark.parametrize("vectorizer", [CountVectorizer, TfidfVectorizer])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_text_pipeline(name, vectorizer):
    docs, y = random_corpus()
    ours = Pipeline([("vec", vectorizer()), ("nb", getattr(fastnb, name)())])
    theirs = Pipeline([("vec", vectorizer()), ("nb", getattr(sk_nb, name)())])
    ours.fit(docs[:90], y[:90])
    theirs.fit(docs[:90], y[:90])
    assert_array_equal(ours.predict(docs[90:]), theirs.predict(docs[90:]))
    assert_allclose(
        ours.predict_proba(docs[90:]), theirs.predict_proba(docs[90:]), rtol=1e-10
    )
    assert ours.score(docs[90:], y[90:]) == theirs.score(docs[90:], y[90:])


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
def test_grid_search_over_alpha(name):
    docs, y = random_corpus()
    grid = {"nb__alpha": [0.01, 0.1, 0.5, 1.0, 3.0, 10.0]}
    searches = []
    for module in (fastnb, sk_nb):
        pipeline = Pipeline(
            [("vec", CountVectorizer()), ("nb", getattr(module, name)())]
        )
        searches.append(GridSearchCV(pipeline, grid, cv=4).fit(docs, y))
    ours, theirs = searches
    assert ours.best_params_ == theirs.best_params_
    for key in ["mean_test_score", "std_test_score", "rank_test_score"] + [
        f"split{i}_test_score" for i in range(4)
    ]:
        assert_array_equal(ours.cv_results_[key], theirs.cv_results_[key], err_msg=key)
    # The grid is not flat: alpha matters on this corpus.
    assert len(set(theirs.cv_results_["mean_test_score"])) > 1
    assert_array_equal(ours.predict(docs), theirs.predict(docs))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_feature_names_from_dataframe(name):
    pd = pytest.importorskip("pandas")
    X, y, _ = make_counts(LABELS["2 int"])
    columns = [f"word_{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    ours = getattr(fastnb, name)().fit(frame, y)
    theirs = getattr(sk_nb, name)().fit(frame, y)
    assert_array_equal(ours.feature_names_in_, columns)
    assert ours.feature_names_in_.dtype == theirs.feature_names_in_.dtype
    assert ours.n_features_in_ == X.shape[1]
    assert_array_equal(ours.predict(frame), theirs.predict(frame))
    assert_allclose(ours.predict_proba(frame), theirs.predict_proba(frame), rtol=1e-10)
    with pytest.raises(ValueError, match="feature names"):
        ours.predict(frame[columns[::-1]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        ours.predict(X)
