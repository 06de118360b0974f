"""fastnb.GaussianNB against scikit-learn, NumPy formulas and a worked example.

scikit-learn's GaussianNB refuses sparse input, so fastnb on CSR/CSC is
compared with scikit-learn on the same values made dense. Where fastnb
deliberately differs (variance options, epsilon_ over several partial_fit
calls, weight checks), the expectations are computed here with NumPy or by
hand.
"""

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn import naive_bayes as sk_nb
from sklearn.model_selection import train_test_split

from fastnb import GaussianNB
from fastnb._gaussian import sparse_gaussian_table
from fastnb._simd import kernels
from fastnb._threads import pad_classes, thread_scratch
from fastnb._validation import sparse_arrays

from _helpers import (
    ADULT_NUMERIC,
    OUTPUTS,
    assert_same_model,
    dense_c,
    dense_f,
    read_adult,
    require_data,
    with_index_dtype,
)

ATTRIBUTES = ["theta_", "var_", "class_count_", "class_prior_", "epsilon_"]
VAR_TYPES = ["diag", "tied", "spherical"]
VAR_ESTIMATORS = ["mle", "unbiased"]
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None)


# ---------------------------------------------------------------------------
# Tolerances
# ---------------------------------------------------------------------------

# Against scikit-learn, by the dtype the models were fitted and scored on:
# (relative tolerance, absolute tolerance as a fraction of the largest
# expected magnitude). float32 results are rounded to float32 by both, and
# scikit-learn also computes in float32.
SKLEARN_TOL = {
    np.dtype(np.float64): (1e-9, 1e-12),
    np.dtype(np.float32): (1e-4, 1e-5),
}


def assert_close(actual, desired, dtype, err_msg=""):
    """Assert agreement to the tolerance of ``dtype``; absolute part by scale."""
    rtol, atol_scale = SKLEARN_TOL[np.dtype(dtype)]
    desired = np.asarray(desired)
    finite = desired[np.isfinite(desired)]
    scale = np.abs(finite).max() if finite.size else 0.0
    assert_allclose(
        actual, desired, rtol=rtol, atol=atol_scale * scale, err_msg=err_msg
    )


# ---------------------------------------------------------------------------
# Data and input containers
# ---------------------------------------------------------------------------


def make_data(labels, n_samples=150, n_features=6, seed=0):
    """Continuous X with about a third of the entries zero, y, positive weights.

    Every label occurs at least twice, and the class means differ, so the
    classes are told apart by the model without any two scoring alike.
    """
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    y_index = rng.permutation(np.arange(n_samples) % len(labels))
    centres = rng.normal(scale=2.0, size=(len(labels), n_features))
    scales = rng.uniform(0.5, 2.0, size=(len(labels), n_features))
    X = centres[y_index] + scales[y_index] * rng.normal(size=(n_samples, n_features))
    X *= rng.random((n_samples, n_features)) < 0.7
    sample_weight = rng.uniform(0.1, 3.0, size=n_samples)
    return X, labels[y_index], sample_weight


def dense_strided(X):
    """A view with a column stride: neither C nor F contiguous."""
    wide = np.zeros((X.shape[0], 2 * X.shape[1]), dtype=X.dtype)
    wide[:, ::2] = X
    X = wide[:, ::2]
    assert not (X.flags.c_contiguous or X.flags.f_contiguous)
    return X


def csr_int32(X):
    return with_index_dtype(sp.csr_matrix(X), np.int32)


def csr_int64(X):
    return with_index_dtype(sp.csr_matrix(X), np.int64)


def csc_int32(X):
    return with_index_dtype(sp.csc_matrix(X), np.int32)


def csc_int64(X):
    return with_index_dtype(sp.csc_matrix(X), np.int64)


# Read-only input is test_invariants' (the same model as from writable input).
CONTAINERS = {
    "dense C": dense_c,
    "dense F": dense_f,
    "dense strided": dense_strided,
    "CSR int32": csr_int32,
    "CSR int64": csr_int64,
    "CSC int32": csc_int32,
    "CSC int64": csc_int64,
}
FEW_CONTAINERS = {
    name: CONTAINERS[name] for name in ["dense C", "CSR int32", "CSC int32"]
}


def to_dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def class_stats(X, y, classes, sample_weight=None):
    """Per class: weighted count, mean and sum of squared deviations (ssd)."""
    X = to_dense(X).astype(np.float64)
    if sample_weight is None:
        sample_weight = np.ones(len(y))
    counts, means, ssds = [], [], []
    for label in classes:
        Xc, wc = X[y == label], sample_weight[y == label]
        mean = np.average(Xc, axis=0, weights=wc)
        counts.append(wc.sum())
        means.append(mean)
        ssds.append((wc[:, None] * (Xc - mean) ** 2).sum(axis=0))
    return np.array(counts), np.array(means), np.array(ssds)


def expected_variance(X, y, classes, var_type, var_estimator, sample_weight=None):
    """Variances before smoothing, from the formulas in the docstring of GaussianNB."""
    count, _, ssd = class_stats(X, y, classes, sample_weight)
    n_classes, n_features = ssd.shape
    unbiased = var_estimator == "unbiased"
    if var_type == "diag":
        return ssd / (count[:, None] - unbiased)
    if var_type == "tied":
        pooled = ssd.sum(axis=0) / (count.sum() - unbiased * n_classes)
        return np.tile(pooled, (n_classes, 1))
    per_class = ssd.sum(axis=1) / (n_features * (count - unbiased))
    return np.tile(per_class[:, None], (1, n_features))


def gaussian_jll(model, X):
    """Joint log-likelihood by the textbook formula, from the fitted attributes."""
    X = to_dense(X).astype(np.float64)
    theta = model.theta_.astype(np.float64)
    var = model.var_.astype(np.float64)
    prior = model.class_prior_.astype(np.float64)
    squares = ((X[:, None, :] - theta[None]) ** 2 / var[None]).sum(axis=2)
    return np.log(prior) - 0.5 * np.log(2 * np.pi * var).sum(axis=1) - 0.5 * squares


# ---------------------------------------------------------------------------
# 1. Against scikit-learn
# ---------------------------------------------------------------------------

CASES = {
    "2 int classes": (np.array([-3, 8]), {}),
    "5 str classes": (np.array(["ant", "bee", "cat", "dog", "eel"]), {}),
    "priors": (np.array([0, 1, 2]), {"priors": [0.2, 0.5, 0.3]}),
    "var_smoothing=0": (np.array(["no", "yes"]), {"var_smoothing": 0.0}),
    "var_smoothing=1e-3": (np.array([1, 2, 3, 4]), {"var_smoothing": 1e-3}),
    "var_smoothing=0.5": (np.array(["a", "b", "c"]), {"var_smoothing": 0.5}),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_sklearn(case, weighted, container, dtype):
    labels, params = CASES[case]
    X, y, sample_weight = make_data(labels, seed=len(case))
    X_test, _, _ = make_data(labels, n_samples=60, seed=len(case) + 100)
    X, X_test = X.astype(dtype), X_test.astype(dtype)
    sample_weight = sample_weight if weighted else None
    to_container = CONTAINERS[container]

    ours = GaussianNB(**params).fit(to_container(X), y, sample_weight=sample_weight)
    theirs = sk_nb.GaussianNB(**params).fit(X, y, sample_weight=sample_weight)

    assert_array_equal(ours.classes_, theirs.classes_)
    assert ours.classes_.dtype == theirs.classes_.dtype
    assert ours.n_features_in_ == theirs.n_features_in_ == X.shape[1]
    for name in ATTRIBUTES:
        actual, desired = getattr(ours, name), getattr(theirs, name)
        assert np.asarray(actual).dtype == np.asarray(desired).dtype, name
        assert_close(actual, desired, dtype, err_msg=name)
    # Training rows and new rows in one call.
    X_eval = np.vstack([X, X_test])
    predicted = ours.predict(to_container(X_eval))
    expected = theirs.predict(X_eval)
    assert predicted.dtype == expected.dtype
    assert_array_equal(predicted, expected)
    for name in OUTPUTS:
        actual = getattr(ours, name)(to_container(X_eval))
        desired = getattr(theirs, name)(X_eval)
        assert actual.dtype == desired.dtype, name
        assert_close(actual, desired, dtype, err_msg=name)
    assert ours.score(to_container(X_test), theirs.predict(X_test)) == 1.0


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_long_dense_input_matches_sklearn(order, weighted):
    # Enough rows for the dense moments to be computed in several row chunks.
    X, y, sample_weight = make_data(["a", "b", "c"], n_samples=150_000, n_features=3)
    X = np.asarray(X + 50.0, order=order)
    sample_weight = sample_weight if weighted else None
    ours = GaussianNB().fit(X, y, sample_weight=sample_weight)
    theirs = sk_nb.GaussianNB().fit(X, y, sample_weight=sample_weight)
    for name in ATTRIBUTES:
        assert_close(getattr(ours, name), getattr(theirs, name), np.float64, name)
    X_test = X[::50]
    assert_array_equal(ours.predict(X_test), theirs.predict(X_test))
    assert_close(
        ours.predict_log_proba(X_test), theirs.predict_log_proba(X_test), np.float64
    )


@pytest.mark.parametrize(
    "fit_dtype, score_dtype",
    [(np.float32, np.float64), (np.float64, np.float32)],
)
def test_output_dtype_with_mixed_dtypes_matches_sklearn(fit_dtype, score_dtype):
    X, y, _ = make_data([0, 1, 2], seed=3)
    ours = GaussianNB().fit(X.astype(fit_dtype), y)
    theirs = sk_nb.GaussianNB().fit(X.astype(fit_dtype), y)
    for name in ATTRIBUTES:
        assert (
            np.asarray(getattr(ours, name)).dtype
            == np.asarray(getattr(theirs, name)).dtype
        ), name
    for name in OUTPUTS:
        actual = getattr(ours, name)(X.astype(score_dtype))
        desired = getattr(theirs, name)(X.astype(score_dtype))
        assert actual.dtype == desired.dtype, name
        assert_close(actual, desired, np.float32, err_msg=name)


def test_feature_names_match_sklearn():
    pd = pytest.importorskip("pandas")
    X, y, _ = make_data(["a", "b"], n_features=3, seed=4)
    frame = pd.DataFrame(X, columns=["height", "weight", "age"])
    ours = GaussianNB().fit(frame, y)
    theirs = sk_nb.GaussianNB().fit(frame, y)
    assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    assert_array_equal(ours.predict(frame), theirs.predict(frame))
    with pytest.raises(ValueError, match="feature names"):
        ours.predict(frame[["weight", "height", "age"]])
    assert not hasattr(GaussianNB().fit(X, y), "feature_names_in_")


# ---------------------------------------------------------------------------
# 2. Variance options against NumPy formulas
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
def test_unbiased_diag_variance_is_numpy_ddof_1(container):
    X, y, _ = make_data(["x", "y", "z"], seed=5)
    model = GaussianNB(var_estimator="unbiased").fit(FEW_CONTAINERS[container](X), y)
    expected = np.array([np.var(X[y == label], axis=0, ddof=1) for label in "xyz"])
    epsilon = 1e-9 * np.var(X, axis=0).max()
    assert_allclose(model.epsilon_, epsilon, rtol=1e-12)
    assert_allclose(model.var_, expected + epsilon, rtol=1e-12)
    # And not the maximum-likelihood variance.
    mle = GaussianNB().fit(FEW_CONTAINERS[container](X), y)
    assert np.all(model.var_ > mle.var_)


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
@pytest.mark.parametrize("var_estimator", VAR_ESTIMATORS)
def test_tied_variance_is_pooled_over_classes(container, var_estimator):
    labels = np.array([0, 1, 2, 3])
    X, y, _ = make_data(labels, seed=6)
    model = GaussianNB(var_type="tied", var_estimator=var_estimator)
    model.fit(FEW_CONTAINERS[container](X), y)
    ssd = sum(((X[y == c] - X[y == c].mean(axis=0)) ** 2).sum(axis=0) for c in labels)
    dof = len(y) - (len(labels) if var_estimator == "unbiased" else 0)
    epsilon = 1e-9 * np.var(X, axis=0).max()
    assert_allclose(model.var_, np.tile(ssd / dof + epsilon, (4, 1)), rtol=1e-12)
    assert_array_equal(model.var_, np.tile(model.var_[0], (4, 1)))


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
@pytest.mark.parametrize("var_estimator", VAR_ESTIMATORS)
def test_spherical_variance_is_pooled_over_features(container, var_estimator):
    labels = np.array(["p", "q", "r"])
    X, y, _ = make_data(labels, n_features=5, seed=7)
    model = GaussianNB(var_type="spherical", var_estimator=var_estimator)
    model.fit(FEW_CONTAINERS[container](X), y)
    epsilon = 1e-9 * np.var(X, axis=0).max()
    for k, label in enumerate(labels):
        Xc = X[y == label]
        ssd = ((Xc - Xc.mean(axis=0)) ** 2).sum()
        n_c = len(Xc) - (var_estimator == "unbiased")
        assert_allclose(
            model.var_[k], np.full(5, ssd / (5 * n_c) + epsilon), rtol=1e-12
        )


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
@pytest.mark.parametrize("var_estimator", VAR_ESTIMATORS)
@pytest.mark.parametrize("var_type", VAR_TYPES)
def test_variance_options_and_scores_match_formulas(
    var_type, var_estimator, container, weighted
):
    labels = np.array([10, 20, 30])
    X, y, sample_weight = make_data(labels, seed=8)
    sample_weight = sample_weight if weighted else None
    to_container = FEW_CONTAINERS[container]
    model = GaussianNB(
        var_type=var_type, var_estimator=var_estimator, var_smoothing=1e-3
    )
    model.fit(to_container(X), y, sample_weight=sample_weight)

    count, mean, _ = class_stats(X, y, labels, sample_weight)
    epsilon = 1e-3 * np.var(X, axis=0).max()  # unweighted, whatever the weights
    variance = expected_variance(X, y, labels, var_type, var_estimator, sample_weight)
    assert_allclose(model.class_count_, count, rtol=1e-12)
    assert_allclose(model.class_prior_, count / count.sum(), rtol=1e-12)
    assert_allclose(model.theta_, mean, rtol=1e-12, atol=1e-14)
    assert_allclose(model.epsilon_, epsilon, rtol=1e-12)
    assert_allclose(model.var_, variance + epsilon, rtol=1e-12)

    X_test, _, _ = make_data(labels, n_samples=40, seed=9)
    jll = gaussian_jll(model, X_test)
    assert_allclose(
        model.predict_joint_log_proba(to_container(X_test)), jll, rtol=1e-11
    )
    log_proba = jll - logsumexp(jll, axis=1, keepdims=True)
    assert_allclose(
        model.predict_log_proba(to_container(X_test)), log_proba, rtol=1e-9, atol=1e-11
    )
    assert_allclose(
        model.predict_proba(to_container(X_test)),
        np.exp(log_proba),
        rtol=1e-9,
        atol=1e-14,
    )
    assert_array_equal(model.predict(to_container(X_test)), labels[jll.argmax(axis=1)])


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
@pytest.mark.parametrize("var_estimator", VAR_ESTIMATORS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tied_linear_decision_function(var_estimator, container, dtype):
    labels = np.array(["a", "b", "c", "d", "e"])
    X, y, _ = make_data(labels, seed=10)
    X = X.astype(dtype)
    X_test, _, _ = make_data(labels, n_samples=80, seed=11)
    X_test = X_test.astype(dtype)
    to_container = FEW_CONTAINERS[container]
    priors = np.array([0.1, 0.3, 0.15, 0.25, 0.2])
    model = GaussianNB(var_type="tied", var_estimator=var_estimator, priors=priors)
    model.fit(to_container(X), y)

    assert model.coef_.shape == (5, X.shape[1]) and model.coef_.dtype == dtype
    assert model.intercept_.shape == (5,) and model.intercept_.dtype == dtype
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    theta, var = model.theta_.astype(float), model.var_.astype(float)
    assert_allclose(model.coef_, theta / var, rtol=rtol)
    intercept = np.log(priors) - 0.5 * (theta**2 / var).sum(axis=1)
    assert_allclose(model.intercept_, intercept, rtol=rtol)

    linear = X_test.astype(float) @ model.coef_.T.astype(float) + model.intercept_
    difference = model.predict_joint_log_proba(to_container(X_test)) - linear
    # The same for every class in each row (the term -0.5 sum x^2/var + const).
    spread = np.ptp(difference, axis=1)
    tolerance = (1e-10 if dtype == np.float64 else 1e-3) * (1 + np.abs(linear).max())
    assert spread.max() < tolerance
    # ... and not the same from row to row (the test would be void otherwise).
    assert np.ptp(difference[:, 0]) > 1.0
    assert_array_equal(
        labels[linear.argmax(axis=1)], model.predict(to_container(X_test))
    )


@pytest.mark.parametrize("var_type", ["diag", "spherical"])
def test_coef_and_intercept_only_for_tied(var_type):
    X, y, _ = make_data([0, 1], seed=12)
    model = GaussianNB(var_type=var_type).fit(X, y)
    for name in ("coef_", "intercept_"):
        with pytest.raises(AttributeError, match="tied"):
            getattr(model, name)
        assert not hasattr(model, name)
    assert hasattr(GaussianNB(var_type="tied").fit(X, y), "coef_")


# ---------------------------------------------------------------------------
# 3. partial_fit and weights: what differs from scikit-learn
# ---------------------------------------------------------------------------


def test_partial_fit_epsilon_uses_all_batches_unlike_sklearn():
    X, y, _ = make_data([0, 1], seed=14)
    X[:75] *= 10.0  # the first batch has much larger variance than the second
    ours, theirs = GaussianNB(), sk_nb.GaussianNB()
    for batch in (slice(0, 75), slice(75, None)):
        ours.partial_fit(X[batch], y[batch], classes=[0, 1])
        theirs.partial_fit(X[batch], y[batch], classes=[0, 1])
    assert_allclose(ours.epsilon_, 1e-9 * np.var(X, axis=0).max(), rtol=1e-12)
    assert_allclose(theirs.epsilon_, 1e-9 * np.var(X[75:], axis=0).max(), rtol=1e-12)
    assert not np.isclose(ours.epsilon_, theirs.epsilon_)


@st.composite
def weighted_problems(draw, max_weight=3):
    """Small X on a grid of eighths, labels, integer weights and a container."""
    n_samples = draw(st.integers(2, 14))
    n_features = draw(st.integers(1, 3))
    n_classes = draw(st.integers(1, 3))
    values = st.integers(-400, 400).map(lambda v: v / 8)
    X = draw(arrays(np.float64, (n_samples, n_features), elements=values))
    y = draw(arrays(np.int64, n_samples, elements=st.integers(0, n_classes - 1)))
    weights = draw(arrays(np.int64, n_samples, elements=st.integers(0, max_weight)))
    container = draw(st.sampled_from(list(FEW_CONTAINERS)))
    return X, y, weights, container


@PROPERTY_SETTINGS
@given(
    problem=weighted_problems(),
    var_type=st.sampled_from(VAR_TYPES),
    var_estimator=st.sampled_from(VAR_ESTIMATORS),
)
def test_weights_are_repeated_rows_but_for_the_smoothing(
    problem, var_type, var_estimator
):
    X, y, weights, container = problem
    # Every class keeps some weight, so both models know the same classes.
    assume(all(weights[y == c].sum() > 0 for c in np.unique(y)))
    to_container = FEW_CONTAINERS[container]
    params = {"var_type": var_type, "var_estimator": var_estimator}
    weighted = GaussianNB(**params).fit(to_container(X), y, sample_weight=weights)
    X_repeated, y_repeated = np.repeat(X, weights, axis=0), np.repeat(y, weights)
    repeated = GaussianNB(**params).fit(to_container(X_repeated), y_repeated)

    assert_array_equal(weighted.classes_, repeated.classes_)
    assert_allclose(weighted.class_count_, repeated.class_count_, rtol=1e-12)
    assert_allclose(weighted.class_prior_, repeated.class_prior_, rtol=1e-12)
    assert_allclose(weighted.theta_, repeated.theta_, rtol=1e-10, atol=1e-10)
    # The smoothing scale is the unweighted variance of the rows given, so it
    # differs; what is added to it must not.
    assert_allclose(
        weighted.var_ - weighted.epsilon_,
        repeated.var_ - repeated.epsilon_,
        rtol=1e-9,
        atol=1e-9,
    )
    scale = np.var(X, axis=0).max()
    assert_allclose(weighted.epsilon_, 1e-9 * (scale if scale > 0 else 1.0), rtol=1e-12)


OFFSET = 1e8


@pytest.mark.parametrize("how", ["fit", "partial_fit"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("container", ["dense C", "dense F", "CSR int32", "CSC int32"])
# Sparse X: the implicit zeros' weight is the class's less its stored
# values', 0 here only if both are summed in the same order (20,000 rows:
# more than one task of class weights, whatever their size).
@pytest.mark.parametrize("n_samples", [3000, 20_000])
def test_huge_offset_gives_accurate_variances(container, weighted, how, n_samples):
    rng = np.random.default_rng(17)
    y = rng.integers(0, 3, size=n_samples)
    X = OFFSET + rng.normal(scale=[1.0, 0.1, 5.0], size=(n_samples, 3))
    # Exact: the values are within a factor 2 of the offset (Sterbenz).
    centred = X - OFFSET
    w = rng.uniform(0.1, 3.0, size=n_samples) if weighted else np.ones(n_samples)
    expected = np.array(
        [
            np.average(
                (
                    centred[y == c]
                    - np.average(centred[y == c], axis=0, weights=w[y == c])
                )
                ** 2,
                axis=0,
                weights=w[y == c],
            )
            for c in range(3)
        ]
    )
    to_container = CONTAINERS[container]
    model = GaussianNB(var_smoothing=0.0)
    sample_weight = w if weighted else None
    if how == "fit":
        model.fit(to_container(X), y, sample_weight=sample_weight)
    else:
        for chunk in np.array_split(np.arange(n_samples), 7):
            model.partial_fit(
                to_container(X[chunk]),
                y[chunk],
                classes=[0, 1, 2],
                sample_weight=None if sample_weight is None else w[chunk],
            )
    assert_allclose(model.var_, expected, rtol=1e-6)


@pytest.mark.parametrize("sparse_format", ["csr", "csc"])
def test_huge_offset_with_soft_labels_sparse_as_dense(sparse_format):
    # Soft labels weigh each row's classes by fractions: the class weights
    # and the stored values' must still be summed alike.
    rng = np.random.default_rng(1)
    X = OFFSET + rng.normal(scale=[1.0, 0.1, 5.0], size=(20_000, 3))
    proba = rng.dirichlet(np.ones(3), 20_000)
    dense = GaussianNB(var_smoothing=0.0).fit(X, class_proba=proba)
    sparse = GaussianNB(var_smoothing=0.0).fit(
        sp.csr_matrix(X).asformat(sparse_format), class_proba=proba
    )
    assert_allclose(sparse.var_, dense.var_, rtol=1e-6)
    assert_allclose(sparse.theta_, dense.theta_, rtol=1e-12)


# ---------------------------------------------------------------------------
# 4. A worked example: who eats at KFC and who at McDonald's
# ---------------------------------------------------------------------------

KFC = [(180, 75), (165, 61), (178, 63), (174, 69), (166, 60), (173, 68), (178, 71)]
MCD = [(167, 62), (167, 59), (165, 60)]


def test_worked_example_heights_and_weights():
    X = np.array(KFC + MCD, dtype=np.float64)
    y = np.array(["KFC"] * 7 + ["McD"] * 3)
    model = GaussianNB(var_estimator="unbiased", var_smoothing=0.0).fit(X, y)

    # By hand: KFC heights sum to 1214 and weights to 467; McD's to 499 and 181.
    means = {
        "KFC": (Fraction(1214, 7), Fraction(467, 7)),
        "McD": (Fraction(499, 3), Fraction(181, 3)),
    }
    # Sums of squared deviations over n - 1; for McD heights the deviations
    # are 2/3, 2/3, -4/3 and weights 5/3, -4/3, -1/3.
    variances = {
        "KFC": (Fraction(247, 7), Fraction(649, 21)),
        "McD": (Fraction(24, 9) / 2, Fraction(42, 9) / 2),
    }
    for label, rows in (("KFC", KFC), ("McD", MCD)):
        for j in range(2):
            mean = Fraction(sum(row[j] for row in rows), len(rows))
            ssd = sum((row[j] - mean) ** 2 for row in rows)
            assert mean == means[label][j]
            assert ssd / (len(rows) - 1) == variances[label][j]
    assert_array_equal(model.classes_, ["KFC", "McD"])
    assert model.epsilon_ == 0.0
    assert_array_equal(model.class_count_, [7.0, 3.0])
    assert_allclose(model.class_prior_, [0.7, 0.3], rtol=1e-15)
    assert_allclose(
        model.theta_, [[float(m) for m in means[c]] for c in ("KFC", "McD")], rtol=1e-14
    )
    assert_allclose(
        model.var_,
        [[float(v) for v in variances[c]] for c in ("KFC", "McD")],
        rtol=1e-13,
    )

    x = (177, 72)
    assert_array_equal(model.predict([x]), ["KFC"])

    def log_joint(label, prior):
        return math.log(prior) - 0.5 * sum(
            math.log(2 * math.pi * variances[label][j])
            + float((x[j] - means[label][j]) ** 2 / variances[label][j])
            for j in range(2)
        )

    kfc, mcd = log_joint("KFC", 0.7), log_joint("McD", 0.3)
    log_posterior_mcd = mcd - np.logaddexp(kfc, mcd)  # about -69.118
    assert_allclose(model.predict_joint_log_proba([x])[0], [kfc, mcd], rtol=1e-12)

    p = model.predict_proba([x])[0, 1]
    assert 1e-32 < p < 1e-28
    assert_allclose(p, math.exp(log_posterior_mcd), rtol=1e-9)
    log_p = model.predict_log_proba([x])[0]
    assert np.all(np.isfinite(log_p))
    assert_allclose(log_p[1], np.log(p), rtol=1e-9)
    assert_allclose(log_p[1], log_posterior_mcd, rtol=1e-9)


# ---------------------------------------------------------------------------
# 5. Bad and awkward input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
@pytest.mark.parametrize("var_estimator", VAR_ESTIMATORS)
def test_class_with_a_single_sample(var_estimator, container):
    X, y, _ = make_data(["big", "small"], n_samples=40, seed=20)
    X = np.vstack([X, [1.5, 0.0, -2.0, 3.0, 0.0, 0.25]])
    y = np.append(y, "lone")
    to_container = FEW_CONTAINERS[container]
    model = GaussianNB(var_estimator=var_estimator).fit(to_container(X), y)
    lone = list(model.classes_).index("lone")
    assert model.epsilon_ > 0
    assert_array_equal(model.var_[lone], np.full(6, model.epsilon_))
    assert_array_equal(model.theta_[lone], X[-1])
    proba = model.predict_proba(to_container(X))
    assert np.all(np.isfinite(proba))
    assert model.predict(to_container(X[-1:]))[0] == "lone"


@pytest.mark.parametrize("container", ["CSR int32", "CSC int32"])
def test_sparse_scores_of_a_class_of_one_sample_match_sklearn(container):
    # Class 0 is one row: its variances are epsilon_ (about 6e-9), and the
    # zeros of a sparse row score sum(theta**2 / var) / 2, about 3e9, less
    # that of the stored columns: taken in double precision, that difference
    # kept about 8 of the 16 digits.
    X = np.array([[3.0, 0.0, -2.0, 5.0], [0.0, 1.0, 4.0, -1.0], [1.0, 2.0, 0.0, 2.0]])
    y = np.array([0, 1, 1])
    to_container = FEW_CONTAINERS[container]
    ours = GaussianNB().fit(to_container(X), y)
    theirs = sk_nb.GaussianNB().fit(X, y)
    assert_allclose(ours.var_, theirs.var_, rtol=1e-12)
    assert_allclose(
        ours.predict_joint_log_proba(to_container(X)),
        theirs.predict_joint_log_proba(X),
        rtol=1e-10,
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("container", ["CSR int32", "CSR int64"])
def test_sparse_scores_equal_dense_where_zeros_weigh_1e10(container, dtype):
    # Means of 1e4 over a variance of epsilon_ (about 0.03, from the spread
    # of 0 and 1e4) for the class of one sample, row 0: a zero adds up to 5e9
    # to that class's sum of squares, the all-zeros row about 6e10, and the
    # stored columns' part is taken back. Rows near row 0 (its values moved
    # by about 1e-6 of themselves) score about 30 for the class, what is left
    # of terms of 6e10: to 1e-12, those cancel to 1e-21 of themselves. Two
    # more rows store nothing and everything.
    rng = np.random.default_rng(22)
    X = rng.normal(1e4, 1e3, size=(60, 40))
    X[rng.random(X.shape) < 0.6] = 0.0
    X = np.vstack([X, np.zeros(40), rng.normal(1e4, 1e3, size=40)])
    y = np.r_[0, rng.integers(1, 4, size=61)]
    model = GaussianNB().fit(X, y)
    theirs = sk_nb.GaussianNB().fit(X, y)
    assert (model.theta_[0] ** 2 / model.var_[0]).sum() > 5e10
    X = np.vstack([X, X[0] * rng.normal(1.0, 1e-6, size=(20, 40))])
    # Scored on float64 or float32 X; the output is float64 (the model's).
    X = X.astype(dtype)
    sparse = model.predict_joint_log_proba(CONTAINERS[container](X))
    dense = model.predict_joint_log_proba(X)
    assert sparse.dtype == dense.dtype == np.float64
    assert np.all(np.abs(dense[-20:, 0] - dense[0, 0]) < 1.0)
    assert_allclose(sparse, dense, rtol=1e-12)
    assert_allclose(
        model.predict_proba(CONTAINERS[container](X)),
        model.predict_proba(X),
        rtol=1e-12,
        atol=1e-300,
    )
    if dtype == np.float64:
        assert_allclose(sparse, theirs.predict_joint_log_proba(X), rtol=1e-10)


@PROPERTY_SETTINGS
@given(
    terms=arrays(
        np.float64,
        st.tuples(st.integers(1, 30), st.integers(1, 3)),
        elements=st.floats(0.0, 1e300) | st.sampled_from([0.0, 1.0, 2.0**-1074]),
    ),
    draw=st.data(),
)
def test_sparse_table_splits_the_terms_so_that_sums_are_exact(terms, draw):
    # What sparse scoring relies on: hi + lo is the term, and the sum of all
    # hi less those of any columns, one at a time, is the sum of the others.
    # (theta 1 and 1 / var the terms: the terms are theta^2 / var exactly.)
    table = sparse_gaussian_table(np.ones_like(terms), terms)
    assert_array_equal(table[:-1, 0], 1.0)
    assert_array_equal(table[:-1, 1], terms)
    hi, lo = table[:-1, 2], table[:-1, 3]
    assert_array_equal(hi + lo, terms)
    stored = draw.draw(arrays(bool, len(terms)), label="stored")
    for k in range(terms.shape[1]):
        assert Fraction(table[-1, 2, k]) == sum(map(Fraction, hi[:, k]))
        rest = 0.0
        for part in hi[stored, k]:
            rest -= part
        rest = table[-1, 2, k] + rest
        assert Fraction(rest) == sum(map(Fraction, hi[~stored, k]))
        assert np.all(np.abs(lo[:, k]) <= 2.0**-52 * terms[:, k].sum() + 2.0**-1022)


def test_sparse_scoring_takes_the_terms_of_zeros_exactly():
    # Class 0: a zero in feature 0 adds 2**53 (theta 2**20, 1 / var 2**13),
    # in the seven others 1. Row 0 stores feature 0 at theta: its score is
    # -7 / 2, though the all-zeros row's 2**53 + 7 is no double. Row 1 also
    # stores feature 5 at theta + 2 (-(6 + 4) / 2). Class 1 is all ones.
    theta, inv_var = np.ones((8, 2)), np.ones((8, 2))
    theta[0, 0], inv_var[0, 0] = 2.0**20, 2.0**13
    theta, inv_var = pad_classes(theta), pad_classes(inv_var)
    X = sp.csr_matrix(([2.0**20, 2.0**20, 3.0], [0, 0, 5], [0, 1, 3]), shape=(2, 8))

    def score(kernel, X_arrays, *tables):
        out = np.empty((2, 2))
        kernel(
            *X_arrays,
            *tables,
            pad_classes(np.zeros(2)),
            kernels.Output.JOINT_LOG_LIKELIHOOD,
            out,
            np.empty(0, dtype=np.intp),
            thread_scratch(1, 2),
            1,
        )
        return out

    table = sparse_gaussian_table(theta, inv_var)
    no_log_var = theta[:0]
    sparse = score(kernels.gaussian_score_csr, sparse_arrays(X), table, no_log_var)
    dense = score(
        kernels.gaussian_score_dense, [X.toarray()], theta, inv_var, no_log_var
    )
    assert_array_equal(dense[:, 0], [-3.5, -5.0])
    assert_array_equal(sparse, dense)


@pytest.mark.parametrize("container", ["CSR int32", "CSC int32"])
def test_sparse_scores_where_the_terms_of_zeros_overflow(container):
    # A feature constant at 1e160: its variance is epsilon_, and theta**2 /
    # var overflows float64. The stored values equal theta, so every score is
    # finite, but a zero would add infinity: sparse rows are scored densely.
    X, y, _ = make_data([0, 1, 2], seed=23)
    X[:, 3] = 1e160
    model = GaussianNB().fit(X, y)
    sparse = CONTAINERS[container](X)
    for name in OUTPUTS:
        expected = getattr(model, name)(X)
        assert np.isfinite(expected).all()
        assert_array_equal(getattr(model, name)(sparse), expected, err_msg=name)
    assert_array_equal(model.predict(sparse), model.predict(X))
    # A row with a zero there is impossible for every class.
    X[:4, 3] = 0.0
    assert_array_equal(
        model.predict_joint_log_proba(CONTAINERS[container](X))[:4], -np.inf
    )


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
@pytest.mark.parametrize("var_type", VAR_TYPES)
def test_zero_variance_feature_gives_finite_results_without_warnings(
    var_type, container
):
    X, y, _ = make_data([0, 1, 2], seed=21)
    X[:, 2] = 0.0  # constant everywhere
    X[y == 1, 4] = 3.5  # constant within a class only
    to_container = FEW_CONTAINERS[container]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = GaussianNB(var_type=var_type).fit(to_container(X), y)
        outputs = [getattr(model, name)(to_container(X)) for name in OUTPUTS]
        model.predict(to_container(X))
    assert np.all(model.var_ > 0)
    for output in outputs:
        assert np.all(np.isfinite(output))
    if var_type == "diag":
        assert_array_equal(model.var_[:, 2], model.epsilon_)
        assert model.var_[1, 4] == model.epsilon_


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
def test_every_feature_constant_sets_epsilon_to_var_smoothing(container):
    X = np.tile([2.0, 0.0, -1.0], (6, 1))
    y = np.array([0, 0, 0, 1, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = GaussianNB(var_smoothing=1e-5).fit(FEW_CONTAINERS[container](X), y)
        proba = model.predict_proba(FEW_CONTAINERS[container](X))
    assert model.epsilon_ == 1e-5
    assert_array_equal(model.var_, np.full((2, 3), 1e-5))
    assert_allclose(proba, 0.5, rtol=1e-12)


@pytest.mark.parametrize("container", list(FEW_CONTAINERS))
def test_zero_var_smoothing_with_zero_variance_raises_when_finalised(container):
    X, y, _ = make_data([0, 1], seed=22)
    X[y == 0, 1] = 4.0
    to_container = FEW_CONTAINERS[container]
    with pytest.raises(ValueError, match="var_smoothing"):
        GaussianNB(var_smoothing=0.0).fit(to_container(X), y)
    model = GaussianNB(var_smoothing=0.0)
    model.partial_fit(to_container(X[:50]), y[:50], classes=[0, 1])
    model.partial_fit(to_container(X[50:]), y[50:])  # no error yet
    for method in ["predict", *OUTPUTS]:
        with pytest.raises(ValueError, match="var_smoothing"):
            getattr(model, method)(to_container(X))
    # Without the constant feature, var_smoothing=0 is fine.
    X[y == 0, 1] += np.arange((y == 0).sum())
    GaussianNB(var_smoothing=0.0).fit(to_container(X), y).predict(to_container(X))


def test_float16_input_is_converted_to_float64():
    X, y, _ = make_data(["a", "b"], seed=23)
    X16 = X.astype(np.float16)
    model = GaussianNB().fit(X16, y)
    expected = GaussianNB().fit(X16.astype(np.float64), y)
    for name in ATTRIBUTES:
        assert np.asarray(getattr(model, name)).dtype == np.float64, name
    # The same computation: the same model, bit for bit.
    assert_same_model(model, expected, X16.astype(np.float64))
    assert model.predict_proba(X16).dtype == np.float64
    assert_array_equal(model.predict(X16), expected.predict(X16.astype(np.float64)))


def test_object_array_of_strings_is_refused():
    X = np.array(
        [["tall", "heavy"], ["short", "light"], ["tall", "light"]], dtype=object
    )
    y = [0, 1, 1]
    with pytest.raises(ValueError, match="could not convert string to float: 'tall'"):
        GaussianNB().fit(X, y)
    model = GaussianNB().fit(np.array([[1.0, 2.0], [2.0, 1.0], [0.0, 1.0]]), y)
    with pytest.raises(ValueError, match="could not convert string to float: 'tall'"):
        model.predict(X)


PRIOR_ERRORS = {
    "too few": ([0.5, 0.5], "Number of priors must match number of classes."),
    "too many": ([0.25] * 4, "Number of priors must match number of classes."),
    "sum below 1": ([0.3, 0.3, 0.3], "The sum of the priors should be 1."),
    "sum above 1": ([0.5, 0.5, 0.5], "The sum of the priors should be 1."),
    "negative": ([0.5, 0.6, -0.1], "Priors must be non-negative."),
}


@pytest.mark.parametrize("case", list(PRIOR_ERRORS))
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_bad_priors_raise_sklearns_messages(method, case):
    priors, message = PRIOR_ERRORS[case]
    X, y, _ = make_data(["a", "b", "c"], seed=25)
    kwargs = {"classes": ["a", "b", "c"]} if method == "partial_fit" else {}
    exact = f"^{re.escape(message)}$"
    with pytest.raises(ValueError, match=exact):
        getattr(sk_nb.GaussianNB(priors=priors), method)(X, y, **kwargs)
    model = GaussianNB(priors=priors)
    with pytest.raises(ValueError, match=exact):
        getattr(model, method)(X, y, **kwargs)
    assert not hasattr(model, "classes_")


# ---------------------------------------------------------------------------
# 6. Real data
# ---------------------------------------------------------------------------

SPAMBASE_ACCURACY = 0.8306  # from the data README, scikit-learn 1.9.1 defaults


def test_spambase_matches_sklearn_and_readme_accuracy():
    data = np.loadtxt(require_data("spambase/spambase.data"), delimiter=",")
    assert data.shape == (4601, 58)
    X, y = data[:, :-1], data[:, -1].astype(int)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=42, stratify=y
    )
    ours = GaussianNB().fit(X_train, y_train)
    theirs = sk_nb.GaussianNB().fit(X_train, y_train)
    predicted = ours.predict(X_test)
    assert_array_equal(predicted, theirs.predict(X_test))
    assert round(float(np.mean(predicted == y_test)), 4) == SPAMBASE_ACCURACY
    assert round(ours.score(sp.csr_matrix(X_test), y_test), 4) == SPAMBASE_ACCURACY
    assert_close(
        ours.predict_log_proba(X_test), theirs.predict_log_proba(X_test), np.float64
    )


def adult_numeric(relative_path, skiprows):
    """The numeric columns and the labels of an Adult file."""
    frame, labels = read_adult(require_data(relative_path), skiprows)
    return frame[ADULT_NUMERIC].to_numpy(dtype=np.float64), labels


def test_adult_numeric_columns_match_sklearn():
    X_train, y_train = adult_numeric("adult/adult.data", 0)
    X_test, y_test = adult_numeric("adult/adult.test", 1)  # opens with a comment
    assert X_train.shape == (32561, 6) and X_test.shape == (16281, 6)
    assert set(y_train) == set(y_test) == {"<=50K", ">50K"}
    ours = GaussianNB().fit(X_train, y_train)
    theirs = sk_nb.GaussianNB().fit(X_train, y_train)
    assert_array_equal(ours.predict(X_test), theirs.predict(X_test))
    assert_array_equal(ours.predict(sp.csc_matrix(X_test)), theirs.predict(X_test))
    assert ours.score(X_test, y_test) == theirs.score(X_test, y_test)
    assert_close(ours.predict_proba(X_test), theirs.predict_proba(X_test), np.float64)


# ---------------------------------------------------------------------------
# missing="ignore": NaN is a missing value, marginalised out
# ---------------------------------------------------------------------------


def missing_data(seed=0, n_samples=400, n_features=6, n_classes=4, share=0.15):
    """Continuous data with NaN at random (share of the values), a feature
    that class 2 never has and a row of NaN."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_samples)
    X = rng.normal(size=(n_samples, n_features)) * rng.uniform(0.5, 4, n_features)
    X += rng.normal(size=(n_classes, n_features))[y] * 3
    X[rng.random(X.shape) < share] = np.nan
    X[y == 2, 1] = np.nan
    X[5] = np.nan
    return X, y


def with_missing(X, container, dtype=np.float64):
    """X (NaN where values are missing) in a container; sparse containers
    store the NaN explicitly, and zeros elsewhere too (the smaller values)."""
    X = X.astype(dtype)
    if container == "dense_c":
        return dense_c(X)
    if container == "dense_f":
        return dense_f(X)
    sparse = np.where(np.abs(X) < 1, 0, X)
    rows, columns = np.nonzero(sparse != 0)  # NaN included
    values = sparse[rows, columns]
    matrix = sp.csr_matrix((values, (rows, columns)), shape=X.shape, dtype=dtype)
    return matrix if container == "csr" else matrix.tocsc()


def as_values(X):
    """The values a (possibly sparse) X holds, NaN included, as a dense array."""
    return X.toarray() if sp.issparse(X) else np.asarray(X)


MISSING_CONTAINERS = ["dense_c", "dense_f", "csr", "csc"]


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_missing_fit_equals_fits_of_each_features_observed_rows(container, dtype):
    X, y = missing_data()
    X = with_missing(X, container, dtype)
    values = as_values(X)
    model = GaussianNB(missing="ignore").fit(X, y)
    missing_count = model._statistics["missing_count"]
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for j in range(values.shape[1]):
        observed = ~np.isnan(values[:, j])
        alone = GaussianNB().partial_fit(
            values[observed, j : j + 1], y[observed], classes=np.arange(4)
        )
        assert_allclose(model.theta_[:, j], alone.theta_[:, 0], rtol=rtol, atol=1e-12)
        assert_allclose(
            model.var_[:, j] - model.epsilon_,
            alone.var_[:, 0] - alone.epsilon_,
            rtol=rtol,
            atol=1e-6 * rtol,
        )
        assert_array_equal(model.class_count_ - missing_count[:, j], alone.class_count_)
    assert_array_equal(model.class_count_, np.bincount(y))
    # The smoothing scale: the largest variance of a feature's observed values.
    largest = np.nanvar(values.astype(np.float64), axis=0).max()
    assert_allclose(model.epsilon_, 1e-9 * largest, rtol=rtol)
    assert model.theta_.dtype == model.var_.dtype == dtype


def textbook_joint_log_likelihood(model, X):
    """log P(c) plus each observed feature's normal log density, row by row,
    from the fitted public attributes (a missing feature left out)."""
    X = as_values(X).astype(np.float64)
    theta = model.theta_.astype(np.float64)
    var = model.var_.astype(np.float64)
    jll = np.empty((len(X), len(theta)))
    for i, row in enumerate(X):
        observed = ~np.isnan(row)
        x = row[observed]
        for c in range(len(theta)):
            mu, v = theta[c, observed], var[c, observed]
            jll[i, c] = np.log(model.class_prior_[c]) - 0.5 * np.sum(
                np.log(2 * np.pi * v) + (x - mu) ** 2 / v
            )
    return jll


@pytest.mark.parametrize("container", ["dense_c", "csr"])
@pytest.mark.parametrize("var_type", VAR_TYPES)
def test_missing_scores_leave_out_the_missing_features(container, var_type):
    X, y = missing_data(seed=1)
    model = GaussianNB(missing="ignore", var_type=var_type).fit(
        with_missing(X, container), y
    )
    X_test, _ = missing_data(seed=2, n_samples=60)
    X_test[7, 1] = 3.0  # class 2 has no value of feature 1: variance epsilon_
    X_test = with_missing(X_test, container)
    jll = model.predict_joint_log_proba(X_test)
    expected = textbook_joint_log_likelihood(model, X_test)
    assert_allclose(jll, expected, rtol=1e-10)
    # A row of NaN scores its log prior.
    assert_allclose(jll[5], np.log(model.class_prior_), rtol=1e-12)
    assert_allclose(
        model.predict_log_proba(X_test),
        expected - logsumexp(expected, 1)[:, None],
        rtol=1e-9,
        atol=1e-9,
    )
    assert_array_equal(model.predict(X_test), model.classes_[expected.argmax(1)])


@pytest.mark.parametrize("container", ["dense_c", "csr", "csc"])
@pytest.mark.parametrize("var_type", VAR_TYPES)
@pytest.mark.parametrize("var_estimator", VAR_ESTIMATORS)
def test_missing_matches_the_reference(container, var_type, var_estimator):
    from fastnb import reference

    X, y = missing_data(seed=3)
    X = with_missing(X, container)
    weights = np.random.default_rng(4).random(len(y)) * 3
    params = {"missing": "ignore", "var_type": var_type, "var_estimator": var_estimator}
    ours = GaussianNB(**params).fit(X, y, sample_weight=weights)
    oracle = reference.GaussianNB(**params).fit(X, y, sample_weight=weights)
    for name in ATTRIBUTES:
        assert_allclose(getattr(ours, name), getattr(oracle, name), rtol=1e-10)
    for key in ("missing_count", "sample_missing_count"):
        assert_allclose(ours._statistics[key], oracle.statistics_[key], rtol=1e-12)
    X_test = with_missing(missing_data(seed=5, n_samples=50)[0], container)
    assert_allclose(
        ours.predict_joint_log_proba(X_test),
        oracle.predict_joint_log_proba(X_test),
        rtol=1e-10,
    )


def assert_same_missing_model(model, expected, X, rtol=1e-10, samples=True):
    """The same model: attributes, missing counts, scores; with samples
    False, the unweighted sample moments (so epsilon_) may differ."""
    for name in ATTRIBUTES:
        if samples or name not in ("var_", "epsilon_"):
            assert_allclose(getattr(model, name), getattr(expected, name), rtol=rtol)
    assert_allclose(
        model.var_ - model.epsilon_, expected.var_ - expected.epsilon_, rtol=rtol
    )
    keys = ["missing_count"]
    if samples:
        keys += ["sample_missing_count", "sample_count", "sample_mean", "sample_ssd"]
        assert_allclose(
            model.predict_joint_log_proba(X),
            expected.predict_joint_log_proba(X),
            rtol=rtol,
        )
    for key in keys:
        assert_allclose(model._statistics[key], expected._statistics[key], rtol=rtol)


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_partial_fit_weights_merge_and_sparse_agree_with_fit(container):
    import fastnb

    X, y = missing_data(seed=6)
    X = with_missing(X, container)
    model = GaussianNB(missing="ignore").fit(X, y)
    values = as_values(X)
    # In parts.
    parts = GaussianNB(missing="ignore")
    for rows in np.array_split(np.arange(len(y)), 3):
        parts.partial_fit(X[rows], y[rows], classes=np.arange(4))
    assert_same_missing_model(parts, model, values)
    # An integer weight is the row repeated.
    weights = np.random.default_rng(7).integers(0, 4, len(y))
    repeated = np.repeat(np.arange(len(y)), weights)
    weighted = GaussianNB(missing="ignore").fit(X, y, sample_weight=weights)
    # (The smoothing scale is over the samples, unweighted.)
    assert_same_missing_model(
        weighted,
        GaussianNB(missing="ignore").fit(values[repeated], y[repeated]),
        values,
        samples=False,
    )
    # Two models merged are one fit of both data sets.
    half = len(y) // 2
    first = GaussianNB(missing="ignore").fit(X[:half], y[:half])
    second = GaussianNB(missing="ignore").fit(X[half:], y[half:])
    assert_same_missing_model(fastnb.merge([first, second]), model, values)
    # Sparse (explicit NaN) and dense are one model.
    assert_same_missing_model(GaussianNB(missing="ignore").fit(values, y), model, X)


def test_missing_without_missing_values_is_the_model_of_error():
    X, y = missing_data(seed=8, share=0.0)
    X[y == 2, 1] = 0.5
    X[5] = 1.0
    ours = GaussianNB(missing="ignore").fit(X, y)
    plain = GaussianNB().fit(X, y)
    assert_array_equal(ours._statistics["missing_count"], 0)
    for name in ATTRIBUTES:
        assert_allclose(getattr(ours, name), getattr(plain, name), rtol=1e-14)
    assert_allclose(
        ours.predict_joint_log_proba(X), plain.predict_joint_log_proba(X), rtol=1e-13
    )
    assert set(plain._statistics) == set(ours._statistics) - {
        "missing_count",
        "sample_missing_count",
    }


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_float32_stays_float32(container):
    X, y = missing_data(seed=9)
    X = with_missing(X, container, np.float32)
    model = GaussianNB(missing="ignore").fit(X, y)
    for name in ATTRIBUTES:
        assert np.asarray(getattr(model, name)).dtype == np.float32
    test = X if container != "csc" else X.tocsr()
    for method in OUTPUTS:
        if method != "predict":
            assert getattr(model, method)(test).dtype == np.float32


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_class_without_values_of_a_feature(container):
    # Class 2 has no value of feature 1, and feature 4 has none at all: their
    # means are 0 and their variances epsilon_ (var smoothing alone), as for
    # a class without samples; the tables stay finite.
    X, y = missing_data(seed=10)
    X[:, 4] = np.nan
    X = as_values(with_missing(X, container))
    model = GaussianNB(missing="ignore").fit(with_missing(X, container), y)
    assert model.theta_[2, 1] == 0 and model.var_[2, 1] == model.epsilon_
    assert_array_equal(model.theta_[:, 4], 0)
    assert_array_equal(model.var_[:, 4], model.epsilon_)
    assert_array_equal(model._statistics["missing_count"][:, 4], model.class_count_)
    assert model._statistics["sample_missing_count"][4] == len(y)
    # The smoothing scale is the other features'.
    assert_allclose(model.epsilon_, 1e-9 * np.nanvar(X[:, [0, 1, 2, 3, 5]], 0).max())
    assert np.isfinite(model.var_).all() and np.isfinite(model.theta_).all()
    tables = model._final_tables()[1]
    for table in (tables.theta, tables.inv_var, tables.log_var, tables.intercept):
        assert np.isfinite(table).all()
    # Scoring leaves feature 4 out, where it is missing.
    X_test = X[:20]
    assert_allclose(
        model.predict_joint_log_proba(X_test),
        textbook_joint_log_likelihood(model, X_test),
        rtol=1e-10,
    )
    # Every feature missing: epsilon_ is var_smoothing itself.
    empty = GaussianNB(missing="ignore").fit(np.full((4, 2), np.nan), [0, 1, 1, 0])
    assert empty.epsilon_ == 1e-9
    assert_array_equal(empty.theta_, 0)
    assert_allclose(empty.predict_log_proba([[np.nan, np.nan]]), np.log([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="zero variance within a class"):
        GaussianNB(missing="ignore", var_smoothing=0).fit(X, y).predict(X)


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_error_refuses_nan_and_ignore_refuses_infinity(container):
    X, y = missing_data(seed=11)
    X = with_missing(X, container)
    values = as_values(X)
    row, column = np.argwhere(np.isnan(values if container != "csc" else values))[0]
    if container == "csc":
        # The fit's check reads a CSC matrix column by column.
        column, row = np.argwhere(np.isnan(values.T))[0]
    message = (
        f"Input X contains NaN. The first is nan in row {row}, column {column}; "
        "GaussianNB does not accept missing values encoded as NaN natively. Pass "
        "missing='ignore'"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        GaussianNB().fit(X, y)
    fitted = GaussianNB().fit(np.nan_to_num(values), y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        fitted.predict(X)
    # Infinity is still refused, in fit and in scoring, and a failed fit
    # leaves the model as it was.
    model = GaussianNB(missing="ignore").fit(X, y)
    before = model.predict_joint_log_proba(values)
    infinite = values.copy()
    infinite[3, 2] = np.inf
    infinite = with_missing(infinite, container)
    for call in (
        lambda: model.fit(infinite, y),
        lambda: model.partial_fit(infinite, y),
        lambda: model.predict(infinite if container != "csc" else infinite.tocsr()),
    ):
        with pytest.raises(ValueError, match="Input X contains infinity"):
            call()
    assert_array_equal(model.predict_joint_log_proba(values), before)


@pytest.mark.parametrize("container", ["dense_c", "csr"])
@pytest.mark.parametrize("var_type", VAR_TYPES)
def test_missing_contributions_add_up_to_the_joint_log_likelihood(container, var_type):
    X, y = missing_data(seed=12)
    model = GaussianNB(missing="ignore", var_type=var_type).fit(X, y)
    X_test = with_missing(missing_data(seed=13, n_samples=40)[0], container)
    terms, intercept = model.contributions(X_test)
    # The scores less a number of each row, the same in every class; a
    # missing value's term is 0 in every class.
    jll = model.predict_joint_log_proba(X_test)
    rest = jll - terms.sum(axis=1) - intercept
    assert_allclose(rest - rest[:, :1], 0.0, atol=1e-10 * np.abs(jll).max())
    dense = X_test.toarray() if sp.issparse(X_test) else X_test
    assert np.isnan(dense).any()
    assert_allclose(terms[np.isnan(dense)], 0.0, atol=1e-12)
    pair = model.contributions(X_test, classes=(0, 1))
    total = pair.terms.sum(axis=1) + pair.intercept
    jll = model.predict_joint_log_proba(X_test)
    assert_allclose(np.ravel(total), jll[:, 0] - jll[:, 1], rtol=1e-10, atol=1e-10)


def test_missing_statistics_round_trip_and_are_checked(tmp_path):
    import pickle
    from dataclasses import replace

    import fastnb

    X, y = missing_data(seed=14)
    model = GaussianNB(missing="ignore").fit(X, y)
    path = tmp_path / "model.fastnb"
    fastnb.save(model, path)
    for copy in (fastnb.load(path), pickle.loads(pickle.dumps(model))):
        assert_same_missing_model(copy, model, X, rtol=0)
    state = fastnb.get_state(model)

    missing = state.statistics["missing_count"]
    for value, message in (
        (-np.ones_like(missing), "negative"),
        (missing + 1000, "counts more than class_count"),
        (
            np.where(np.arange(missing.size) == 3, np.nan, missing.ravel()).reshape(
                missing.shape
            ),
            "NaN",
        ),
    ):
        with pytest.raises(ValueError, match=message):
            fastnb.from_state(
                replace(state, statistics={**state.statistics, "missing_count": value})
            )
    without = {k: v for k, v in state.statistics.items() if k != "missing_count"}
    with pytest.raises(ValueError, match="'missing_count' is lacking"):
        fastnb.from_state(replace(state, statistics=without))
    with pytest.raises(ValueError, match=r"GaussianNB\(\) keeps.*'missing_count' is"):
        fastnb.from_state(replace(state, params={**state.params, "missing": "error"}))
    too_many = state.statistics["sample_missing_count"] + len(y) + 1
    with pytest.raises(ValueError, match="counts more than sample_count"):
        fastnb.from_state(
            replace(
                state, statistics={**state.statistics, "sample_missing_count": too_many}
            )
        )
