"""Invariants of every fastnb estimator, each stated once.

Every test runs on every case of ``_helpers.CASES`` (each estimator in one or
more configurations, with data it takes), and where the input matters over
the float dtypes and the containers the case takes: dense C and F order,
CSR and CSC (category codes and MixedNB's families by position too; raw
strings and DataFrames are given as they are). Model: scikit-learn's
``test_common.py``.

1. partial_fit in chunks is fit (and fit is the NumPy reference);
2. integer sample weights are repeated rows, and zero weights dropped rows;
3. a failed fit or partial_fit raises and changes nothing; so does a
   failed prediction;
4. probabilities are normalised log-likelihoods, and predict their argmax
   (also as the least expected cost under 0-1 costs);
5. results do not depend on the number of threads;
6. permuting the label names permutes the output columns;
7. pickle and clone;
8. read-only and memory-mapped input;
9. contributions add up to the log-odds, and to the joint log-likelihood less
   a number of each row that is the same in every class;
10. X as text vectorizers make it (integer counts, booleans; sparse rows
    whose indices are not sorted, or repeated) gives the model of its
    canonical float64 copy.
"""

import copy
import functools
import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

import fastnb

from _helpers import (
    CASE_IDS,
    CASES,
    OUTPUTS,
    THREADED_CASES,
    THREADED_ROWS,
    as_container,
    assert_matches_reference,
    assert_same_model,
    assert_same_outputs,
    assert_same_state,
    case_params,
    drop_last_column,
    frozen_input,
    public_attributes,
    scores_tol,
    set_cell,
    shuffled_rows,
    stack_rows,
    take_rows,
    tol,
)

# Few examples each: the tests are parametrised over estimators and inputs.
PROPERTY_SETTINGS = settings(max_examples=2, deadline=None)
CASE_INPUTS = ("case", "dtype", "container")
CASE_BY_ID = {case.id: case for case in CASES}
LABELS = {
    "int": np.array([-3, 8, 11, 20, 31, 42]),
    "str": np.array(["ant", "bee", "cat", "dog", "eel", "fox"]),
}


@st.composite
def problems(draw, case, min_per_class=1, max_samples=30):
    """(X, y, labels): case data with 1 to 6 classes of int or str labels."""
    n_classes = draw(st.integers(1, len(LABELS["int"])))
    labels = LABELS[draw(st.sampled_from(list(LABELS)))][:n_classes]
    low = max(min_per_class * n_classes, case.first_batch + 1, 2)
    n_samples = draw(st.integers(low, max(low, max_samples)))
    X, y, _ = case.make(n_samples, labels, seed=draw(st.integers(0, 2**32 - 1)))
    return X, y, labels


def weights_for(draw, y, values=(0.0, 0.25, 1.0, 2.5)):
    """Weights from ``values``; two rows of each class weigh at least 1.

    (A class of a single sample has a variance of about zero, which makes
    the scores of GaussianNB ill-conditioned: see test_gaussian.)
    """
    weights = np.array(draw(st.lists(st.sampled_from(values), min_size=len(y))))
    weights = weights[: len(y)]
    for label in np.unique(y):
        rows = np.flatnonzero(y == label)[:2]
        weights[rows] = np.maximum(weights[rows], 1.0)
    return weights


# ---------------------------------------------------------------------------
# 1. partial_fit in chunks is fit
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(CASE_INPUTS, case_params(other_dtypes_in=["dense_c"]))
@PROPERTY_SETTINGS
@given(draw=st.data())
def test_partial_fit_in_chunks_equals_fit(case, dtype, container, draw):
    X, y, labels = draw.draw(problems(case, min_per_class=2))
    n_samples = len(y)
    if draw.draw(st.booleans(), label="rows sorted by class"):
        # Early chunks then miss the later classes (the rows a first batch
        # needs stay first).
        first = case.first_batch
        order = np.argsort(np.searchsorted(labels, y[first:]), kind="stable")
        order = np.concatenate([np.arange(first), first + order])
        X, y = take_rows(X, order), y[order]
    weighted = draw.draw(st.booleans(), label="weighted")
    sample_weight = weights_for(draw.draw, y) if weighted else None
    start_with_fit = draw.draw(st.booleans(), label="fit, then partial_fit")
    # fit's classes are those of its batch: then it must hold every label.
    seen_all = max(np.unique(y, return_index=True)[1]) + 1 if start_with_fit else 0
    first = max(case.first_batch, seen_all)
    cuts = draw.draw(st.sets(st.integers(first, n_samples), max_size=4), label="cuts")
    bounds = [0, *sorted(cuts | {first, n_samples})]
    peeks = draw.draw(st.lists(st.booleans(), min_size=len(bounds)), label="peeks")

    def batch(start, stop):
        rows = slice(start, stop)
        weights = None if sample_weight is None else sample_weight[rows]
        return as_container(take_rows(X, rows), container, dtype), y[rows], weights

    model = case.estimator()
    for i, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        X_batch, y_batch, w_batch = batch(start, stop)
        if i == 0 and start_with_fit:
            model.fit(X_batch, y_batch, sample_weight=w_batch)
        else:
            classes = labels if i == 0 else None
            model.partial_fit(X_batch, y_batch, classes=classes, sample_weight=w_batch)
        if peeks[i]:
            # Reading the model between chunks must not freeze its tables.
            model.predict_proba(X_batch)
            public_attributes(model)

    X_all = as_container(X, container, dtype)
    whole = case.estimator().fit(X_all, y, sample_weight=sample_weight)
    assert_same_model(model, whole, X_all, tol(dtype))
    oracle = case.reference()
    if oracle is not None:
        oracle.fit(X_all, y, sample_weight=sample_weight)
        assert_matches_reference(model, oracle, X_all, tol(dtype))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_classes_passed_again_must_match(case):
    X, y, _ = case.make(20, labels=["no", "yes"])
    model = case.estimator().partial_fit(X, y, classes=["no", "yes"])
    # The same classes again, in another order, are accepted.
    model.partial_fit(X, y, classes=["yes", "no"])
    with pytest.raises(ValueError, match="not the same as on last call"):
        model.partial_fit(X, y, classes=["no"])


# ---------------------------------------------------------------------------
# 2. Sample weights
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(CASE_INPUTS, case_params(other_dtypes_in=["dense_c"]))
@PROPERTY_SETTINGS
@given(draw=st.data())
def test_integer_weights_are_repeated_rows(case, dtype, container, draw):
    # Weight k is the row k times; weight 0 is no row (rows of weight 0 are
    # added, made of values their columns hold, so that they bring no new
    # category). Compared: what a user reads (GaussianNB also keeps moments
    # of the rows as given, for its smoothing).
    X, y, labels = draw.draw(problems(case, min_per_class=2))
    rng = np.random.default_rng(draw.draw(st.integers(0, 2**32 - 1)))
    repeats = rng.integers(1, 4, size=len(y))
    n_dropped = draw.draw(st.integers(0, 5), label="rows of weight 0")
    X_weighted = stack_rows(X, shuffled_rows(X, n_dropped, rng))
    y_weighted = np.concatenate([y, rng.choice(labels, size=n_dropped)])
    weights = np.concatenate([repeats, np.zeros(n_dropped, dtype=np.int64)])
    order = rng.permutation(len(y_weighted))
    X_weighted, y_weighted = take_rows(X_weighted, order), y_weighted[order]
    weights = weights[order]

    weighted = case.estimator(**case.repeat_params).fit(
        as_container(X_weighted, container, dtype), y_weighted, sample_weight=weights
    )
    rows = np.repeat(np.arange(len(y)), repeats)
    repeated = case.estimator(**case.repeat_params).fit(
        as_container(take_rows(X, rows), container, dtype), y[rows]
    )
    assert_same_model(
        weighted,
        repeated,
        as_container(X, container, dtype),
        tol(dtype),
        attributes=public_attributes,
    )


# ---------------------------------------------------------------------------
# 3. Failures change nothing
# ---------------------------------------------------------------------------

N_SAMPLES = 40
FIRST_HALF, SECOND_HALF = slice(0, N_SAMPLES // 2), slice(N_SAMPLES // 2, None)
FAILURE_LABELS = np.array(["ant", "bee", "cat"])
# How the model was left before the failing call: never fitted; fitted (its
# tables built); after partial_fit calls (its tables not built yet).
STATES = ["unfitted", "fit", "partial_fit"]
# The calls tried on each: fit on a model that has or has not been fitted,
# partial_fit as a first call and as a later one.
CALLS = [
    ("fit", "unfitted"),
    ("fit", "partial_fit"),
    ("partial_fit", "unfitted"),
    ("partial_fit", "fit"),
    ("partial_fit", "partial_fit"),
]
# The shapes of X and y, the labels' type and the weights are checked first,
# whatever the state: fit, and a first and a later partial_fit.
INPUT_CALLS = [CALLS[0], CALLS[2], CALLS[4]]
# A DataFrame with a column more or less: "feature names should match".
WRONG_N_FEATURES = (
    "X has {n} features, but {name} is expecting 8 features|feature names should match"
)
ONE_D = "Expected 2D array, got 1D array|Expected a 2-dimensional container"


def with_weights(weights):
    return lambda X, y, w: {"sample_weight": weights(w)}


def set_entry(w, value):
    w = w.copy()
    w[3] = value
    return w


# id -> (the calls it fails, arguments of the failing call from X, y and w,
# message pattern).
BAD_CALLS = {
    "y too short": (
        INPUT_CALLS,
        lambda X, y, w: {"y": y[:-1]},
        "inconsistent numbers of samples: \\[40, 39\\]",
    ),
    "continuous y": (
        INPUT_CALLS,
        lambda X, y, w: {"y": np.linspace(0.1, 0.9, len(y))},
        "Unknown label type",
    ),
    "empty X": (
        INPUT_CALLS,
        lambda X, y, w: {"X": take_rows(X, slice(0, 0)), "y": y[:0]},
        "0 sample\\(s\\)",
    ),
    "1-D X": (INPUT_CALLS, lambda X, y, w: {"X": take_rows(X, 0), "y": y[:1]}, ONE_D),
    "sample_weight too short": (
        INPUT_CALLS,
        with_weights(lambda w: w[:-1]),
        "sample_weight.shape == \\(39,\\), expected \\(40,\\)",
    ),
    "sample_weight too long": (
        INPUT_CALLS,
        with_weights(lambda w: np.append(w, 1.0)),
        "sample_weight.shape == \\(41,\\), expected \\(40,\\)",
    ),
    "sample_weight 2-D": (
        INPUT_CALLS,
        with_weights(lambda w: w[:, None]),
        "sample_weight.shape == \\(40, 1\\), expected \\(40,\\)",
    ),
    "negative sample_weight": (
        INPUT_CALLS,
        with_weights(lambda w: set_entry(w, -0.5)),
        "sample_weight contains negative values",
    ),
    "NaN sample_weight": (
        INPUT_CALLS,
        with_weights(lambda w: set_entry(w, np.nan)),
        "sample_weight contains NaN",
    ),
    "infinite sample_weight": (
        INPUT_CALLS,
        with_weights(lambda w: set_entry(w, np.inf)),
        "sample_weight contains NaN or infinity",
    ),
    # partial_fit takes a batch of weight zero.
    "all-zero sample_weight": (
        CALLS[:2],
        with_weights(np.zeros_like),
        "sample_weight is zero for every sample",
    ),
    "unknown label": (
        CALLS[2:],
        lambda X, y, w: {"y": np.where(np.arange(len(y)) == 3, "zebra", y)},
        "The target label\\(s\\) \\['zebra'\\] in y do not exist in the",
    ),
    "wrong n_features": (
        CALLS[3:],
        lambda X, y, w: {"X": drop_last_column(X)},
        WRONG_N_FEATURES.replace("{n}", "7"),
    ),
    "other classes": (
        CALLS[3:],
        lambda X, y, w: {"classes": [*FAILURE_LABELS, "zebra"]},
        "is not the same as on last call to partial_fit",
    ),
    "no classes": (
        CALLS[2:3],
        lambda X, y, w: {"classes": None},
        "classes must be passed on the first call to partial_fit",
    ),
}


@functools.cache
def failure_setup(case_id, dtype=None, container=None):
    """Data, a model in each state, and each model after more batches.

    The models before the failing calls come from the first half of the
    rows, X given as ``container`` holds it (as made when None); the ones
    after, from the second half too.
    """
    case = CASE_BY_ID[case_id]
    X, y, w = case.make(N_SAMPLES, FAILURE_LABELS, seed=7)
    if container is not None:
        X = as_container(X, container, dtype)
    first, second = slice(0, N_SAMPLES // 4), slice(N_SAMPLES // 4, N_SAMPLES // 2)
    models = {"unfitted": case.estimator()}
    models["fit"] = case.estimator().fit(
        take_rows(X, FIRST_HALF), y[FIRST_HALF], sample_weight=w[FIRST_HALF]
    )
    partial = case.estimator()
    partial.partial_fit(take_rows(X, first), y[first], classes=FAILURE_LABELS)
    models["partial_fit"] = partial.partial_fit(
        take_rows(X, second), y[second], sample_weight=w[second]
    )
    after = {
        state: go_on(copy.deepcopy(model), X, y, w) for state, model in models.items()
    }
    return X, y, w, models, after


def go_on(model, X, y, w):
    """The model after partial_fit of the second half, and its scores of it."""
    X_second = take_rows(X, SECOND_HALF)
    model.partial_fit(
        X_second, y[SECOND_HALF], classes=FAILURE_LABELS, sample_weight=w[SECOND_HALF]
    )
    return model, model.predict_joint_log_proba(X_second)


def assert_failures_change_nothing(case, calls, arguments, params, match, setup):
    """Each call raises ValueError matching ``match``; the model is as it was.

    After a failed partial_fit, the model goes on learning from batches as
    one that never saw the call.
    """
    X, y, w, models, after = setup
    for method, state in calls:
        model = copy.deepcopy(models[state])
        model.set_params(**params)
        before = copy.deepcopy(model)
        call = {"X": X, "y": y, "sample_weight": w}
        if method == "partial_fit":
            call["classes"] = FAILURE_LABELS if state == "unfitted" else None
        call.update(arguments)

        with pytest.raises(ValueError, match=case.message(match)):
            getattr(model, method)(**call)

        assert_same_state(model, before, where=f"{method} on a {state} model")
        if state == "unfitted":
            with pytest.raises(NotFittedError, match="is not fitted yet"):
                check_is_fitted(model)
        if method == "partial_fit":
            # A stream of batches goes on as if the bad one had not come.
            model.set_params(**models["unfitted"].get_params())
            model, scores = go_on(model, X, y, w)
            assert_same_state(scores, after[state][1], where="scores after")
            assert_same_state(model, after[state][0], where="model after")


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize(
    ("case", "fault"),
    [
        pytest.param(case, fault, id=f"{case.id}-{fault}")
        for case in CASES
        for fault in BAD_CALLS
    ],
)
def test_failed_fit_or_partial_fit_changes_nothing(case, fault):
    calls, arguments, match = BAD_CALLS[fault]
    setup = failure_setup(case.id)
    X, y, w = setup[:3]
    assert_failures_change_nothing(case, calls, arguments(X, y, w), {}, match, setup)


@pytest.mark.parametrize(
    ("case", "fault"),
    [
        pytest.param(case, fault, id=f"{case.id}-{fault}")
        for case in CASES
        for fault in case.bad_params
    ],
)
def test_failed_fit_with_bad_parameters_changes_nothing(case, fault):
    params, match = case.bad_params[fault]
    setup = failure_setup(case.id)
    assert_failures_change_nothing(case, CALLS, {}, params, match, setup)


@pytest.mark.parametrize(
    "classes",
    [
        [3, 1, 2, 1],
        np.array([3, 1, 2, 1]),
        np.array([7, 5, 7], dtype=np.int8),
        np.array([2**63, 1], dtype=np.uint64),
        np.array([5], dtype=np.int32),
        np.array([1, 4, 9], dtype=np.uint16),  # sorted and distinct: copied
        np.array([2.0, 1.0]),
        np.array(["b", "a"]),
    ],
    ids=repr,
)
def test_first_partial_fit_takes_classes_as_unique_labels_makes_them(classes):
    # Integer arrays skip scikit-learn's unique_labels, to the same values
    # and dtype.
    y = np.repeat(np.asarray(classes)[:1], 4)
    model = fastnb.MultinomialNB().partial_fit(np.ones((4, 3)), y, classes=classes)
    expected = unique_labels(classes)
    assert model.classes_.dtype == expected.dtype
    np.testing.assert_array_equal(model.classes_, expected)
    assert not np.shares_memory(model.classes_, np.asarray(classes))


def test_a_checked_setting_does_not_pass_one_of_other_types():
    # Settings that passed are not checked again, per class; True == 1, but
    # fit_prior=1 is not a boolean, and alpha=-1.0 is another value.
    X, y = np.ones((4, 3)), [0, 1, 0, 1]
    fastnb.MultinomialNB(fit_prior=True, alpha=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'fit_prior' parameter"):
        fastnb.MultinomialNB(fit_prior=1, alpha=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        fastnb.MultinomialNB(fit_prior=True, alpha=-1.0).fit(X, y)
    # The setting that passed on one class is checked on another.
    with pytest.raises(InvalidParameterError, match="'var_smoothing' parameter"):
        fastnb.GaussianNB(var_smoothing=-1.0).fit(X, y)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_parameters_rebound_between_partial_fits_are_checked_again(case):
    # A setting that passed is not checked again while its values are the
    # same (immutable) ones: rebound to other values, they are checked.
    X, y, w = case.make(N_SAMPLES, FAILURE_LABELS, seed=7)
    model = case.estimator().partial_fit(X, y, classes=FAILURE_LABELS)
    model.partial_fit(X, y)
    before = copy.deepcopy(model)
    missing = model.missing
    for bad in ("sometimes", None):
        model.set_params(missing=bad)
        with pytest.raises(InvalidParameterError, match="'missing' parameter"):
            model.partial_fit(X, y)
        model.set_params(missing=missing)
        assert_same_state(model, before, where=f"after missing={bad!r}")
    model.partial_fit(X, y)
    before.partial_fit(X, y)
    assert_same_state(model, before, where="after a good batch")


@pytest.mark.parametrize(
    (*CASE_INPUTS, "fault"),
    [
        pytest.param(*param.values, fault, id=f"{param.id}-{fault}")
        for param in case_params(other_dtypes_in=())
        for fault in param.values[0].bad_cells
    ],
)
def test_failed_fit_with_bad_values_changes_nothing(case, dtype, container, fault):
    column, value, match = case.bad_cells[fault]
    X, y, w = case.make(N_SAMPLES, FAILURE_LABELS, seed=7)
    X_bad = as_container(set_cell(X, 3, column, value), container, dtype)
    setup = failure_setup(case.id, dtype, container)
    # The values are checked in the kernels that read X, those of fit and of
    # partial_fit alike: after partial_fit, a batch adds to the statistics.
    calls = [
        ("fit", "unfitted"),
        ("partial_fit", "unfitted"),
        ("partial_fit", "fit"),
        ("partial_fit", "partial_fit"),
    ]
    if container in ("dense_f", "csc"):  # another kernel, the same steps
        calls = [calls[0], calls[-1]]
    assert_failures_change_nothing(case, calls, {"X": X_bad}, {}, match, setup)


def with_extra_column(X):
    if isinstance(X, pd.DataFrame):
        return X.assign(extra=X.iloc[:, 0])
    return np.hstack([X, X[:, :1]])


def is_missing_or_infinite(value):
    return value is None or (isinstance(value, float) and not np.isfinite(value))


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize(CASE_INPUTS, case_params(other_dtypes_in=()))
def test_failed_prediction_changes_nothing(case, dtype, container):
    # Values a model never takes (NaN, infinity, missing), wrong shapes, and
    # no fit: each output raises, naming the problem.
    X, y, w = case.make(N_SAMPLES, FAILURE_LABELS, seed=7)
    methods = ["predict", *OUTPUTS]
    unfitted = f"This {case.name} instance is not fitted yet"
    for method in methods:
        with pytest.raises(NotFittedError, match=unfitted):
            getattr(case.estimator(), method)(as_container(X, container, dtype))
    model = case.estimator().fit(as_container(X, container, dtype), y, w)
    before = copy.deepcopy(model)
    bad_inputs = [
        (drop_last_column(X), WRONG_N_FEATURES.replace("{n}", "7")),
        (with_extra_column(X), WRONG_N_FEATURES.replace("{n}", "9")),
        (take_rows(X, 0), ONE_D),
    ] + [
        (set_cell(X, 3, column, value), match)
        for column, value, match in case.bad_cells.values()
        if is_missing_or_infinite(value)
    ]
    for X_bad, match in bad_inputs:
        if X_bad.ndim == 2:
            X_bad = as_container(X_bad, container, dtype)
        for method in methods:
            with pytest.raises(ValueError, match=case.message(match)):
                getattr(model, method)(X_bad)
    assert_same_state(model, before)


# ---------------------------------------------------------------------------
# 4. Probabilities
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(CASE_INPUTS, case_params(containers=("dense_c", "csr")))
@PROPERTY_SETTINGS
@given(draw=st.data())
def test_probabilities_are_normalised_log_likelihoods(case, dtype, container, draw):
    # Counts up to ~1e8 make exp(jll) underflow: normalising must be in logs;
    # far-away rows do the same to a Gaussian.
    X, y, labels = draw.draw(problems(case))
    log_scale = draw.draw(st.floats(-3, 6), label="log10 of the scale of X")
    seed = draw.draw(st.integers(0, 2**32 - 1))
    far, _, _ = case.make(20, labels, seed=seed, scale=10.0 ** (log_scale + 2))
    X = case.make(len(y), labels, seed=seed, scale=10.0**log_scale)[0]
    model = case.estimator().fit(as_container(X, container, dtype), y)
    for X_eval in (X, far):
        X_eval = as_container(X_eval, container, dtype)
        jll = model.predict_joint_log_proba(X_eval)
        log_proba = model.predict_log_proba(X_eval)
        proba = model.predict_proba(X_eval)
        assert jll.dtype == log_proba.dtype == proba.dtype
        eps = np.finfo(proba.dtype).eps
        assert np.isfinite(jll).all()
        assert (np.abs(proba.sum(axis=1) - 1.0) <= 64 * eps).all()
        # Normalising subtracts a number as large as the scores, which costs
        # their rounding error: tolerances scale with |jll|.
        scale = np.maximum(1.0, np.abs(jll).max(axis=1))
        assert ((proba >= 0) & (proba <= 1)).all()
        assert (log_proba <= 0).all()
        expected = jll - logsumexp(jll.astype(np.float64), axis=1, keepdims=True)
        assert (np.abs(log_proba - expected) <= 64 * eps * scale[:, None]).all()
        exp_log_proba = np.exp(log_proba)
        error = np.abs(proba - exp_log_proba)
        limit = 8 * eps * (1 + np.abs(log_proba)) * exp_log_proba
        assert (error <= limit + np.finfo(proba.dtype).tiny).all()
        # predict is the most probable class (the first one when tied).
        predicted = model.predict(X_eval)
        # The least expected cost under 0-1 costs (or a multiple) is exactly it.
        zero_one = 1.0 - np.eye(len(model.classes_))
        for cost in (zero_one, 3.0 * zero_one):
            np.testing.assert_array_equal(model.predict(X_eval, cost=cost), predicted)
        if jll.dtype == np.float64:
            np.testing.assert_array_equal(
                predicted, model.classes_[np.argmax(jll, axis=1)]
            )
        else:  # rounded to float32, two scores can tie that did not
            index = np.searchsorted(model.classes_, predicted)
            np.testing.assert_array_equal(
                jll[np.arange(len(jll)), index], jll.max(axis=1)
            )


# ---------------------------------------------------------------------------
# 5. Threads
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    CASE_INPUTS,
    case_params(THREADED_CASES, containers=("dense_c", "csr"), other_dtypes_in=()),
)
def test_results_do_not_depend_on_thread_count(case, dtype, container):
    X, y, w = case.make(THREADED_ROWS, seed=3)
    X = as_container(X, container, dtype)
    results = []
    # One thread, and more threads than cores.
    for n_threads in (1, 8):
        with threadpool_limits(limits=n_threads, user_api="openmp"):
            model = case.estimator().fit(X, y, sample_weight=w)
            outputs = {method: getattr(model, method)(X) for method in OUTPUTS}
            outputs["predict"] = model.predict(X)
        results.append((model, outputs))
    (one, one_outputs), (many, many_outputs) = results
    assert_same_state(many, one)
    assert_same_state(many_outputs, one_outputs, where="outputs")


# ---------------------------------------------------------------------------
# 6. Labels
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    CASE_INPUTS, case_params(containers=("dense_c", "csr"), other_dtypes_in=())
)
@PROPERTY_SETTINGS
@given(draw=st.data())
def test_permuting_labels_permutes_columns(case, dtype, container, draw):
    X, y, labels = draw.draw(problems(case))
    n_classes = len(labels)
    permutation = np.asarray(draw.draw(st.permutations(range(n_classes))))
    # Old class c is called new_labels[c]; sorting the new labels puts it in
    # column permutation[c].
    new_labels = np.sort(LABELS["str"][::-1][:n_classes])[permutation]
    if draw.draw(st.booleans(), label="integer labels"):
        new_labels = 10 * permutation
    y_new = new_labels[np.searchsorted(labels, y)]
    X = as_container(X, container, dtype)
    original = case.estimator().fit(X, y)
    relabelled = case.estimator().fit(X, y_new)
    np.testing.assert_array_equal(relabelled.classes_, np.sort(new_labels))
    jll = original.predict_joint_log_proba(X)
    scale = np.maximum(1.0, np.abs(jll).max(axis=1, keepdims=True))
    rtol = tol(dtype)
    for method in OUTPUTS:
        expected = getattr(original, method)(X)
        actual = getattr(relabelled, method)(X)[:, permutation]
        assert (np.abs(actual - expected) <= rtol * scale).all(), method
    # Predictions are relabelled too, where no two classes tie.
    ordered = np.sort(jll, axis=1)
    clear = np.ones(len(y), dtype=bool)
    if n_classes > 1:
        clear = ordered[:, -1] - ordered[:, -2] > 1e-9 * scale[:, 0]
    np.testing.assert_array_equal(
        relabelled.predict(X)[clear],
        new_labels[np.searchsorted(labels, original.predict(X))][clear],
    )


# ---------------------------------------------------------------------------
# 7. Pickle and clone
# ---------------------------------------------------------------------------


def fitted_model(case, how, X, y, w, labels):
    """A model after fit, or after two partial_fit calls (its tables not built)."""
    model = case.estimator()
    if how == "fit":
        return model.fit(X, y, sample_weight=w)
    half = len(y) // 2
    model.partial_fit(take_rows(X, slice(0, half)), y[:half], classes=labels)
    rest = slice(half, None)
    return model.partial_fit(take_rows(X, rest), y[rest], sample_weight=w[rest])


@pytest.mark.parametrize("how", ["fit", "partial_fit"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_pickle_round_trip(case, how):
    labels = np.array(["ant", "bee", "cat"])
    X, y, w = case.make(40, labels)
    model = fitted_model(case, how, X, y, w, labels)
    restored = pickle.loads(pickle.dumps(model))
    assert_same_state(restored, model)
    assert_same_model(restored, model, X)
    # And they learn alike from there.
    X_more, y_more, w_more = case.make(20, labels, seed=1)
    for estimator in (model, restored):
        estimator.partial_fit(X_more, y_more, sample_weight=w_more)
    assert_same_model(restored, model, X)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_clone_is_unfitted_with_the_same_params(case):
    labels = np.array(["ant", "bee", "cat"])
    X, y, w = case.make(40, labels)
    model = case.estimator().fit(X, y, sample_weight=w)
    copied = clone(model)
    assert type(copied) is type(model)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        check_is_fitted(copied)
    # Nothing fitted to read, as on a new model (hasattr is how scikit-learn
    # tools tell fitted from unfitted).
    assert public_attributes(copied) == public_attributes(case.estimator()) == {}
    params = model.get_params()
    assert_same_state(copied.get_params(), params, where="get_params()")
    for name, value in params.items():
        if isinstance(value, np.ndarray | dict | list) or hasattr(value, "__dict__"):
            assert copied.get_params()[name] is not value, name
    assert_same_model(copied.fit(X, y, sample_weight=w), model, X)


def test_a_subclass_has_its_own_parameters():
    # Each class's constructor parameters are read once and kept: a subclass
    # with a parameter of its own gets its own list, and its base keeps its.
    class Shifted(fastnb.GaussianNB):
        def __init__(self, shift=0.0, var_smoothing=1e-9):
            super().__init__(var_smoothing=var_smoothing)
            self.shift = shift

    assert sorted(fastnb.GaussianNB().get_params()) == [
        "missing",
        "priors",
        "var_estimator",
        "var_smoothing",
        "var_type",
    ]
    model = Shifted(shift=2.0)
    assert model.get_params() == {"shift": 2.0, "var_smoothing": 1e-9}
    assert clone(model).shift == 2.0
    assert "shift" not in fastnb.GaussianNB().get_params()


# ---------------------------------------------------------------------------
# 8. Read-only and memory-mapped input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    (*CASE_INPUTS, "how"),
    [
        pytest.param(*param.values, how, id=f"{param.id}-{how}")
        for param in case_params([case for case in CASES if case.id != "MixedNB-frame"])
        for how in ["read-only", "memmap"]
        # A memory-mapped file is read-only input like any other, in one
        # layout a kind.
        if how == "read-only" or param.values[2] in ("dense_c", "csr", "native")
    ],
)
def test_read_only_and_memory_mapped_input(case, dtype, container, how, tmp_path):
    labels = np.array(["ant", "bee", "cat"])
    X, y, w = case.make(40, labels)
    X = as_container(X, container, dtype)
    frozen = frozen_input(X, how, tmp_path)
    expected = case.estimator().fit(X, y, sample_weight=w)
    assert_same_state(case.estimator().fit(frozen, y, sample_weight=w), expected)
    assert_same_outputs(expected, expected, frozen, X_expected=X)
    batch = {"classes": labels, "sample_weight": w}
    assert_same_state(
        case.estimator().partial_fit(frozen, y, **batch),
        case.estimator().partial_fit(X, y, **batch),
    )


# ---------------------------------------------------------------------------
# 9. Contributions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(CASE_INPUTS, case_params())
def test_contributions_add_up_to_the_joint_log_likelihood(case, dtype, container):
    X, y, w = case.make(seed=5)
    X = as_container(X, container, dtype)
    model = case.estimator().fit(X, y, sample_weight=w)
    jll = model.predict_joint_log_proba(X).astype(np.float64)
    scale = np.maximum(1.0, np.abs(jll).max(axis=1))
    # The terms are float64 whatever X is; the joint log-likelihood of float32
    # X is rounded to float32 (GaussianNB), or in part (PoissonNB's log x!);
    # a binned KernelDensityNB's, summed in single precision, is float32's.
    rtol = scores_tol(model, tol(dtype))

    def assert_adds_up(actual, expected):
        limit = rtol * (scale if actual.ndim == 1 else scale[:, None])
        assert (np.abs(actual - expected) <= limit).all()

    terms, intercept = as_arrays(model.contributions(X), X, model.classes_)
    assert terms.shape == (*X.shape, len(model.classes_))
    assert terms.dtype == intercept.dtype == np.float64
    # Every class: the scores less a number of each row, the same in every
    # class (0 where every term is taken against a 0).
    rest = jll - (terms.sum(axis=1) + intercept)
    assert_adds_up(rest - rest[:, :1], 0.0)
    if name_of(model) in COUNT_TERMS:
        assert_adds_up(terms.sum(axis=1) + intercept, jll)
    a, b = model.classes_[[2, 0]]
    one = as_arrays(model.contributions(X, classes=a), X, model.classes_)
    assert isinstance(one.intercept, float) and one.terms.shape == X.shape
    assert one.intercept == intercept[2]
    one_terms = one.terms.toarray() if sp.issparse(one.terms) else one.terms
    np.testing.assert_array_equal(one_terms, terms[:, :, 2])
    # A pair: the log-odds, exactly.
    pair = as_arrays(model.contributions(X, classes=(a, b)), X, model.classes_)
    assert isinstance(pair.intercept, float) and pair.terms.shape == X.shape
    total = np.asarray(pair.terms.sum(axis=1)).reshape(-1) + pair.intercept
    assert_adds_up(total, jll[:, 2] - jll[:, 0])
    # Sparse X gives sparse terms where a 0's term is 0: no more stored than
    # X stores.
    if container in ("csr", "csc"):
        for part, sparse_for in ((one, COUNT_TERMS), (pair, ZERO_RATIO_TERMS)):
            assert sp.issparse(part.terms) == (name_of(model) in sparse_for)
            if sp.issparse(part.terms):
                assert part.terms.format == "csr" and part.terms.nnz <= X.nnz


def as_arrays(contributions, X, classes):
    """``contributions`` as an array X gives them: those of a DataFrame,
    labelled as X (checked here), as arrays."""
    terms, intercept = contributions
    if not isinstance(X, pd.DataFrame):
        return contributions
    assert terms.index.equals(X.index)
    if isinstance(intercept, float):
        assert terms.columns.equals(X.columns)
        return type(contributions)(terms.to_numpy(), intercept)
    assert terms.columns.tolist() == [(c, f) for c in classes for f in X.columns]
    assert intercept.index.tolist() == classes.tolist()
    by_class = terms.to_numpy().reshape(len(X), len(classes), X.shape[1])
    return type(contributions)(by_class.transpose(0, 2, 1), intercept.to_numpy())


# Families whose terms of a class are taken against a 0, and those where a
# 0's log-likelihood is the same in every class (its ratio is 0).
COUNT_TERMS = ("MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB")
ZERO_RATIO_TERMS = ("MultinomialNB", "ComplementNB")


def name_of(model):
    return type(model).__name__


# ---------------------------------------------------------------------------
# 10. Integer values and sparse layouts
# ---------------------------------------------------------------------------

# The cases given arrays of numbers (not raw strings or DataFrames).
NUMERIC_CASES = [case for case in CASES if case.dtypes[0] is not None]


def as_value_dtype(X, value_dtype):
    """Numeric X in value_dtype: rounded, booleans where X is not 0, bytes
    clipped to 0 .. 255 (the model of the result is what is compared)."""
    if value_dtype == np.bool_:
        return X != 0
    X = np.rint(X)
    if value_dtype == np.uint8:
        X = np.clip(X, 0, 255)
    return X.astype(value_dtype)


@pytest.mark.parametrize(
    (*CASE_INPUTS, "value_dtype"),
    [
        pytest.param(
            *param.values, value_dtype, id=f"{param.id}-{value_dtype.__name__}"
        )
        for param in case_params(
            NUMERIC_CASES, containers=("dense_c", "csr", "csc"), other_dtypes_in=()
        )
        for value_dtype in (np.int64, np.int32, np.uint8, np.bool_)
        # (Booleans are raw categories to CategoricalNB, not codes.)
        if not (param.values[0].name == "CategoricalNB" and value_dtype == np.bool_)
    ],
)
def test_integers_give_the_model_of_their_float64_values(
    case, dtype, container, value_dtype
):
    # Bit for bit: fitted on integers or on the same values as float64, the
    # same model, and the same outputs of either.
    X, y, w = case.make(seed=9)
    values = as_value_dtype(X, value_dtype)
    integers = as_container(values, container, value_dtype)
    floats = as_container(values, container, np.float64)
    model = case.estimator().fit(integers, y, sample_weight=w)
    expected = case.estimator().fit(floats, y, sample_weight=w)
    assert_same_outputs(model, expected, integers, X_expected=floats)
    assert_same_state(model, expected)


def not_canonical(X, repeated, rng):
    """A copy of CSR or CSC X of whole numbers with each row's (column's)
    entries in a random order, and if ``repeated`` each value of 2 or more
    (in magnitude) stored as two entries of the same place, which add up to
    it: the same matrix, not in canonical format."""
    coo = X.tocoo()
    half = np.trunc(coo.data / 2)
    split = (half != 0) & repeated
    data = np.concatenate([np.where(split, half, coo.data), (coo.data - half)[split]])
    rows = np.concatenate([coo.row, coo.row[split]])
    columns = np.concatenate([coo.col, coo.col[split]])
    csc = X.format == "csc"
    major, minor = (columns, rows) if csc else (rows, columns)
    order = rng.permutation(len(data))
    order = order[np.argsort(major[order], kind="stable")]
    counts = np.bincount(major, minlength=X.shape[1 if csc else 0])
    indptr = np.concatenate([[0], np.cumsum(counts)])
    made = type(X)((data[order], minor[order], indptr), shape=X.shape)
    assert split.any() == repeated and (made != X).nnz == 0
    made.has_canonical_format = False
    return made


@pytest.mark.parametrize("repeated", [False, True], ids=["unsorted", "repeated"])
@pytest.mark.parametrize(
    CASE_INPUTS,
    case_params(
        [case for case in NUMERIC_CASES if case.sparse],
        containers=("csr", "csc"),
        other_dtypes_in=(),
    ),
)
def test_rows_not_in_canonical_format_give_the_model_of_the_canonical_matrix(
    case, dtype, container, repeated
):
    # Indices not sorted, and entries repeated (their values summed are the
    # matrix's): the statistics bit for bit those of the canonical matrix
    # (whole values and weights, so that sums of weight times value are
    # exact in any order), the outputs to rounding (a row's terms are added
    # in the order they are stored, as scikit-learn's product adds them).
    X, y, w = case.make(seed=4)
    w = np.ceil(w)
    canonical = as_container(np.rint(X), container, np.float64)
    given = not_canonical(canonical, repeated, np.random.default_rng(1))
    model = case.estimator().fit(given, y, sample_weight=w)
    expected = case.estimator().fit(canonical, y, sample_weight=w)
    assert_same_outputs(model, expected, given, rtol=1e-12, X_expected=canonical)
    assert_same_state(model, expected)
