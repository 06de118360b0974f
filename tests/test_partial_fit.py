"""Incremental fitting, and invariants of fit and predict (property tests)."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import fastnb
from fastnb import reference

from _helpers import make_counts

ESTIMATORS = ["MultinomialNB", "ComplementNB", "BernoulliNB"]
OUTPUTS = ["predict_joint_log_proba", "predict_log_proba", "predict_proba"]
# Results summed in another order agree to rounding: relative 1e-10, and
# absolute 1e-12 for log-probabilities and probabilities near zero.
RTOL, ATOL = 1e-10, 1e-12
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None)


def fitted_attributes(name):
    names = ["class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_"]
    return names + ["feature_all_"] if name == "ComplementNB" else names


def assert_same_model(model, expected, X):
    """Assert equal classes, fitted attributes and outputs on X, to rounding."""
    name = type(model).__name__
    assert_array_equal(model.classes_, expected.classes_)
    for attribute in fitted_attributes(name):
        assert_allclose(
            getattr(model, attribute),
            getattr(expected, attribute),
            rtol=RTOL,
            atol=ATOL,
            err_msg=attribute,
        )
    for method in OUTPUTS:
        assert_allclose(
            getattr(model, method)(X),
            getattr(expected, method)(X),
            rtol=RTOL,
            atol=ATOL,
            err_msg=method,
        )


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------

VALUES = st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 0.25, 1.5, 7.0])


@st.composite
def datasets(draw, max_value_scale=1.0):
    """X (non-negative), y with every one of n_classes labels, and the labels."""
    n_classes = draw(st.integers(1, 4))
    n_samples = draw(st.integers(n_classes, 24))
    n_features = draw(st.integers(1, 6))
    X = draw(arrays(np.float64, (n_samples, n_features), elements=VALUES))
    X = X * max_value_scale
    # Every class occurs: a permutation of a covering sequence.
    y = draw(st.permutations(np.arange(n_samples) % n_classes))
    return X, np.asarray(y), np.arange(n_classes)


def as_container(X, sparse):
    return sp.csr_matrix(X) if sparse else X


# ---------------------------------------------------------------------------
# partial_fit in chunks is fit
# ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(ESTIMATORS),
    data=datasets(),
    sparse=st.booleans(),
    weighted=st.booleans(),
    draw=st.data(),
)
def test_partial_fit_in_chunks_equals_fit(name, data, sparse, weighted, draw):
    X, y, classes = data
    n_samples = len(y)
    sample_weight = (
        draw.draw(arrays(np.float64, n_samples, elements=st.floats(0.5, 4.0)))
        if weighted
        else None
    )
    cuts = sorted(
        draw.draw(st.sets(st.integers(1, n_samples - 1))) if n_samples > 1 else []
    )
    bounds = [0, *cuts, n_samples]
    # Reading the tables between chunks must not freeze them.
    peeks = draw.draw(
        st.lists(st.booleans(), min_size=len(bounds), max_size=len(bounds))
    )

    model = getattr(fastnb, name)(alpha=0.5)
    for start, stop, peek in zip(bounds[:-1], bounds[1:], peeks, strict=False):
        model.partial_fit(
            as_container(X[start:stop], sparse),
            y[start:stop],
            classes=classes if start == 0 else None,
            sample_weight=None if sample_weight is None else sample_weight[start:stop],
        )
        if peek:
            model.feature_log_prob_, model.predict_proba(X[:1])  # noqa: B018

    whole = getattr(fastnb, name)(alpha=0.5).fit(
        as_container(X, sparse), y, sample_weight
    )
    oracle = getattr(reference, name)(alpha=0.5).fit(X, y, sample_weight)
    assert_same_model(model, whole, X)
    assert_same_model(model, oracle, X)
    assert_array_equal(model.predict(X), whole.predict(X))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_partial_fit_after_fit_adds_to_it(name):
    X, y, sample_weight = make_counts(["a", "b", "c"])
    model = getattr(fastnb, name)().fit(X[:50], y[:50], sample_weight[:50])
    model.feature_log_prob_  # noqa: B018 (built, then invalidated below)
    model.partial_fit(X[50:], y[50:], sample_weight=sample_weight[50:])
    oracle = getattr(reference, name)().fit(X, y, sample_weight)
    assert_same_model(model, oracle, X)


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


# ---------------------------------------------------------------------------
# Invariants of fit and predict
# ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(ESTIMATORS),
    data=datasets(),
    sparse=st.booleans(),
    draw=st.data(),
)
def test_integer_weight_equals_repeated_rows(name, data, sparse, draw):
    X, y, _ = data
    weights = draw.draw(arrays(np.int64, len(y), elements=st.integers(0, 3)))
    # Keep every class in the repeated data: its first row weighs at least 1.
    for c in np.unique(y):
        first = np.flatnonzero(y == c)[0]
        weights[first] = max(weights[first], 1)
    weighted = getattr(fastnb, name)().fit(as_container(X, sparse), y, weights)
    repeated = getattr(fastnb, name)().fit(
        as_container(np.repeat(X, weights, axis=0), sparse), np.repeat(y, weights)
    )
    assert_same_model(weighted, repeated, X)
    assert_array_equal(weighted.predict(X), repeated.predict(X))


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(ESTIMATORS),
    data=datasets(max_value_scale=300.0),
    sparse=st.booleans(),
)
def test_probabilities_are_normalised(name, data, sparse):
    # Counts up to 2100 make exp(jll) underflow: normalising must be in logs.
    X, y, _ = data
    X = as_container(X, sparse)
    model = getattr(fastnb, name)().fit(X, y)
    jll = model.predict_joint_log_proba(X)
    log_proba = model.predict_log_proba(X)
    proba = model.predict_proba(X)
    assert np.isfinite(jll).all()
    # Normalising subtracts a number as large as the scores, which costs
    # their rounding error (scikit-learn's logsumexp too): tolerances scale
    # with |jll|.
    scale = np.maximum(1.0, np.abs(jll).max(axis=1))
    assert (np.abs(proba.sum(axis=1) - 1.0) <= 1e-14 * scale).all()
    assert ((proba >= 0) & (proba <= 1)).all()
    assert (log_proba <= 0).all()
    expected = jll - logsumexp(jll, axis=1, keepdims=True)
    assert (np.abs(log_proba - expected) <= 1e-14 * scale[:, None]).all()
    assert_allclose(proba, np.exp(log_proba), rtol=1e-12, atol=1e-300)
    # predict is the most probable class (the first one when tied).
    assert_array_equal(model.predict(X), model.classes_[np.argmax(jll, axis=1)])


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(ESTIMATORS),
    data=datasets(),
    sparse=st.booleans(),
    as_strings=st.booleans(),
    draw=st.data(),
)
def test_permuting_labels_permutes_columns(name, data, sparse, as_strings, draw):
    X, y, classes = data
    permutation = np.asarray(draw.draw(st.permutations(range(len(classes)))))
    # Old class c is called new_labels[c]; sorting the new labels puts it in
    # column permutation[c].
    if as_strings:
        new_labels = np.array(["q", "m", "x", "c"])[: len(classes)]
        new_labels = np.sort(new_labels)[permutation]
    else:
        new_labels = 10 * permutation
    X = as_container(X, sparse)
    original = getattr(fastnb, name)().fit(X, y)
    relabelled = getattr(fastnb, name)().fit(X, new_labels[y])
    assert_array_equal(relabelled.classes_, np.sort(new_labels))
    for method in OUTPUTS:
        assert_allclose(
            getattr(relabelled, method)(X)[:, permutation],
            getattr(original, method)(X),
            rtol=RTOL,
            atol=ATOL,
            err_msg=method,
        )
    # Predictions are relabelled too, where no two classes tie.
    jll = np.sort(original.predict_joint_log_proba(X), axis=1)
    clear = (
        np.ones(X.shape[0], dtype=bool)
        if len(classes) == 1
        else (jll[:, -1] - jll[:, -2] > 1e-9)
    )
    assert_array_equal(
        relabelled.predict(X)[clear], new_labels[original.predict(X)][clear]
    )


# ---------------------------------------------------------------------------
# A failing partial_fit leaves the model exactly as it was
# ---------------------------------------------------------------------------


def assert_deep_equal(before, after, path="vars"):
    """Values equal all the way down (arrays by dtype, shape and content)."""
    assert type(before) is type(after), path
    if isinstance(before, dict):
        assert before.keys() == after.keys(), path
        for key in before:
            assert_deep_equal(before[key], after[key], f"{path}[{key!r}]")
    elif isinstance(before, np.ndarray):
        assert before.dtype == after.dtype, path
        assert np.array_equal(before, after, equal_nan=before.dtype.kind == "f"), path
    elif isinstance(before, list | tuple):
        assert len(before) == len(after), path
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            assert_deep_equal(b, a, f"{path}[{i}]")
    else:
        assert before == after or (before != before and after != after), path


X_GOOD = np.array(
    [
        [1.0, 0.0, 2.0],
        [0.0, 3.0, 1.0],
        [2.0, 1.0, 0.0],
        [0.0, 0.0, 4.0],
        [1.0, 1.0, 1.0],
    ]
)
Y_GOOD = np.array(["no", "yes", "no", "yes", "no"])
CLASSES = np.array(["no", "yes"])


def with_value(value):
    X = X_GOOD.copy()
    X[1, 2] = value
    return X


NON_NEGATIVE = ["MultinomialNB", "ComplementNB"]
FIRST, LATER, BOTH = ["first"], ["later"], ["first", "later"]
# (id, partial_fit arguments, calls it is tried on, estimators)
BAD_BATCHES = [
    ("unknown label", {"y": np.array(["no", "yes", "maybe", "no", "no"])}, BOTH),
    ("continuous y", {"y": np.linspace(0.1, 0.9, 5)}, BOTH),
    ("y too short", {"y": Y_GOOD[:4]}, BOTH),
    ("wrong n_features", {"X": X_GOOD[:, :2]}, LATER),
    ("negative X", {"X": with_value(-1.0)}, BOTH, NON_NEGATIVE),
    ("negative sparse X", {"X": sp.csr_matrix(with_value(-1.0))}, BOTH, NON_NEGATIVE),
    ("NaN in X", {"X": with_value(np.nan)}, BOTH),
    ("NaN in sparse X", {"X": sp.csr_matrix(with_value(np.nan))}, BOTH),
    ("inf in X", {"X": with_value(np.inf)}, BOTH),
    ("sample_weight 2-D", {"sample_weight": np.ones((5, 1))}, BOTH),
    ("sample_weight too short", {"sample_weight": np.ones(4)}, BOTH),
    ("negative sample_weight", {"sample_weight": [1.0, 1.0, -1.0, 1.0, 1.0]}, BOTH),
    ("NaN sample_weight", {"sample_weight": [1.0, np.nan, 1.0, 1.0, 1.0]}, BOTH),
    ("other classes", {"classes": np.array(["no", "yes", "maybe"])}, LATER),
    ("no classes", {"classes": None}, FIRST),
]
# Parameters set before the failing call (set_params, then partial_fit).
BAD_PARAMS = [
    ("alpha of wrong length", {"alpha": np.ones(2)}),
    ("negative alpha array", {"alpha": np.array([1.0, -1.0, 1.0])}),
    ("class_prior of wrong length", {"class_prior": [0.2, 0.3, 0.5]}),
]

ERROR_CASES = [
    pytest.param(name, call, arguments, {}, id=f"{name}-{call}-{case}")
    for case, arguments, calls, *names in BAD_BATCHES
    for name in (names[0] if names else ESTIMATORS)
    for call in calls
] + [
    pytest.param(name, call, {}, params, id=f"{name}-{call}-{case}")
    for case, params in BAD_PARAMS
    for name in ESTIMATORS
    for call in BOTH
]


@pytest.mark.parametrize(("name", "call", "arguments", "params"), ERROR_CASES)
def test_failing_partial_fit_leaves_model_unchanged(name, call, arguments, params):
    first_call = call == "first"
    model = getattr(fastnb, name)()
    twin = getattr(fastnb, name)()  # sees the same calls, except the failing one
    if not first_call:
        for estimator in (model, twin):
            estimator.partial_fit(X_GOOD, Y_GOOD, classes=CLASSES)
        model.feature_log_prob_  # noqa: B018 (tables built before the failure)
    model.set_params(**params)
    before = copy.deepcopy(vars(model))
    batch = {"X": X_GOOD, "y": Y_GOOD, "classes": CLASSES, **arguments}
    if not first_call and "classes" not in arguments:
        batch["classes"] = None

    with pytest.raises(ValueError):
        model.partial_fit(**batch)

    assert_deep_equal(before, vars(model))
    if first_call:
        with pytest.raises(NotFittedError):
            check_is_fitted(model)
    # The model carries on as if the failing call never happened.
    model.set_params(**twin.get_params())
    for estimator in (model, twin):
        estimator.partial_fit(X_GOOD[::-1], Y_GOOD[::-1], classes=CLASSES)
    assert_same_model(model, twin, X_GOOD)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_failing_fit_leaves_fitted_model_unchanged(name):
    X, y, sample_weight = make_counts(["a", "b"])
    model = getattr(fastnb, name)().fit(X, y, sample_weight)
    before = copy.deepcopy(vars(model))
    X_bad = X.copy()
    X_bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.fit(X_bad, y)
    with pytest.raises(ValueError, match="negative"):
        model.fit(X[:, :4], y, sample_weight=-sample_weight)
    assert_deep_equal(before, vars(model))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_classes_passed_again_must_match(name):
    model = getattr(fastnb, name)().partial_fit(X_GOOD, Y_GOOD, classes=CLASSES)
    # The same classes again, in another order, are accepted.
    model.partial_fit(X_GOOD, Y_GOOD, classes=CLASSES[::-1])
    with pytest.raises(ValueError, match="not the same as on the first call"):
        model.partial_fit(X_GOOD, Y_GOOD, classes=["no"])


@pytest.mark.parametrize("name", ESTIMATORS)
def test_first_partial_fit_needs_classes(name):
    model = getattr(fastnb, name)()
    with pytest.raises(ValueError, match="classes must be passed"):
        model.partial_fit(X_GOOD, Y_GOOD)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
