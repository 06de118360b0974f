"""CategoricalNB against scikit-learn's, hand computation and real data; sparse
codes against their dense X."""

import copy
import functools
import sys
import tracemalloc
import warnings
from fractions import Fraction
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import naive_bayes as sk_nb
from sklearn.preprocessing import OrdinalEncoder
from threadpoolctl import threadpool_limits

import fastnb
import fastnb._base
import fastnb._categorical
import fastnb._simd
import fastnb._threads

from _helpers import (
    SPARSE,
    as_container,
    assert_same_outputs,
    assert_same_state,
    dense_c,
    dense_f,
    public_attributes,
    read_adult,
    require_data,
    runnable_variants,
    sparse_with_zeros,
    split_uci,
    tol,
    with_index_dtype,
)

N_FEATURES = 5
N_SAMPLES = 90
LABELS = {
    "2 int": np.array([3, 8]),
    "5 str": np.array(["ant", "bee", "cat", "dog", "eel"]),
}
# Absolute tolerance by output, beside the relative one: a log posterior near
# 0 is a difference of joint log-likelihoods, so its error is a few ulps of
# those (|jll| up to ~100 here), not of itself.
OUTPUT_ATOL = {
    "predict_joint_log_proba": 0.0,
    "predict_log_proba": 1e-13,
    "predict_proba": 1e-300,
}


def make_codes(labels, n_samples=N_SAMPLES, seed=0):
    """Codes (feature j has codes 0 .. j + 1), labels and positive weights.

    Classes have unequal sizes (1 : 2 : ... : k) and each favours its own
    code of every feature, so that no two classes score alike (an exact tie
    could be broken either way).
    """
    rng = np.random.default_rng(seed)
    share = np.arange(1, len(labels) + 1)
    sizes = n_samples * share // share.sum()
    sizes[-1] += n_samples - sizes.sum()
    class_index = rng.permutation(np.repeat(np.arange(len(labels)), sizes))
    X = np.empty((n_samples, N_FEATURES), dtype=np.int64)
    for j in range(N_FEATURES):
        n_codes = j + 2
        favourite = (class_index + j) % n_codes
        anything = rng.integers(0, n_codes, size=n_samples)
        X[:, j] = np.where(rng.random(n_samples) < 0.4, favourite, anything)
    sample_weight = rng.uniform(0.2, 3.0, size=n_samples)
    return X, labels[class_index], sample_weight


def assert_same_list(ours, theirs, rtol):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape
        assert_allclose(a, b, rtol=rtol, atol=0)


def assert_agrees(ours, theirs, X, rtol):
    """Attributes and every output of two fitted CategoricalNB agree."""
    assert_array_equal(ours.classes_, theirs.classes_)
    assert_array_equal(ours.n_categories_, theirs.n_categories_)
    assert ours.n_features_in_ == theirs.n_features_in_
    assert_allclose(ours.class_count_, theirs.class_count_, rtol=rtol, atol=0)
    assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=rtol, atol=0)
    assert_same_list(ours.category_count_, theirs.category_count_, rtol)
    assert_same_list(ours.feature_log_prob_, theirs.feature_log_prob_, rtol)
    for method, atol in OUTPUT_ATOL.items():
        got, expected = getattr(ours, method)(X), getattr(theirs, method)(X)
        assert got.dtype == np.float64
        assert_allclose(got, expected, rtol=rtol, atol=atol)
    assert_array_equal(ours.predict(X), theirs.predict(X))


# ---------------------------------------------------------------------------
# Category codes against scikit-learn
# ---------------------------------------------------------------------------


def dense_read_only(X):
    X = X.copy()
    X.setflags(write=False)
    return X


CONFIGS = {
    "default": {},
    "alpha 0.3": {"alpha": 0.3},
    "alpha 2.5": {"alpha": 2.5},
    "alpha 1e-3": {"alpha": 1e-3},
    "alpha 1e-12 floored": {"alpha": 1e-12, "force_alpha": False},
    "no fit_prior": {"fit_prior": False},
    "class_prior": {"class_prior": "given"},
    "min_categories int": {"min_categories": 8},
    "min_categories array": {"min_categories": np.array([1, 7, 2, 9, 6])},
}


def resolve(params, n_classes):
    params = dict(params)
    if params.get("class_prior") == "given":
        prior = np.arange(1.0, n_classes + 1.0)
        params["class_prior"] = prior / prior.sum()
    return params


def check_against_sklearn(dtype, layout, weighted, labels, params, rtol):
    X, y, sample_weight = make_codes(labels)
    X = layout(X.astype(dtype))
    assert X.dtype == dtype
    sample_weight = sample_weight if weighted else None
    params = resolve(params, len(labels))
    before = X.copy()

    floored = params.get("force_alpha") is False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = fastnb.CategoricalNB(**params).fit(X, y, sample_weight=sample_weight)
        theirs = sk_nb.CategoricalNB(**params).fit(X, y, sample_weight=sample_weight)
    # Both warn when they raise a too small alpha to 1e-10, and only then.
    messages = [str(w.message) for w in caught if w.category is UserWarning]
    assert sum("alpha too small" in m for m in messages) == (2 if floored else 0)
    assert_array_equal(X, before)
    assert_agrees(ours, theirs, X, rtol)
    # New rows, in the same container; codes up to min_categories are known.
    X_new, _, _ = make_codes(labels, n_samples=40, seed=1)
    if "min_categories" in params:
        X_new[:3] = np.maximum(np.asarray(params["min_categories"]) - 1, 0)
    assert_agrees(ours, theirs, layout(X_new.astype(dtype)), rtol)
    assert ours.score(X, y) == theirs.score(X, y)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("layout", [dense_c, dense_f, dense_read_only])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_containers_match_sklearn(dtype, layout, weighted):
    check_against_sklearn(
        dtype, layout, weighted, LABELS["5 str"], {"alpha": 0.7}, tol(np.float64)
    )


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_parameters_match_sklearn(weighted, labels, config):
    check_against_sklearn(
        np.int64, dense_c, weighted, LABELS[labels], CONFIGS[config], tol(np.float64)
    )


@pytest.mark.parametrize("config", ["min_categories array", "class_prior"])
def test_parameters_match_sklearn_float32_fortran(config):
    check_against_sklearn(
        np.float32, dense_f, True, LABELS["5 str"], CONFIGS[config], tol(np.float64)
    )


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_large_input_matches_sklearn(weighted):
    # Large enough for the kernels to use several threads.
    labels = LABELS["5 str"]
    X, y, sample_weight = make_codes(labels, n_samples=40_000, seed=8)
    sample_weight = sample_weight if weighted else None
    ours = fastnb.CategoricalNB(alpha=0.4).fit(X, y, sample_weight=sample_weight)
    theirs = sk_nb.CategoricalNB(alpha=0.4).fit(X, y, sample_weight=sample_weight)
    assert_agrees(ours, theirs, X, tol(np.float64))


def test_min_categories_checked():
    X, y, _ = make_codes(LABELS["2 int"])
    for bad, theirs in [
        # scikit-learn checks the shape after np.maximum, which fails first here.
        (np.array([2, 3]), "'min_categories' should have shape|could not be broadcast"),
        (np.array([2.0] * N_FEATURES), "'min_categories' should have integral type"),
    ]:
        with pytest.raises(ValueError, match=theirs):
            sk_nb.CategoricalNB(min_categories=bad).fit(X, y)
        with pytest.raises(ValueError, match="min_categories"):
            fastnb.CategoricalNB(min_categories=bad).fit(X, y)


# ---------------------------------------------------------------------------
# partial_fit
# ---------------------------------------------------------------------------


def growing_batches(labels):
    """Three batches of codes; the later ones bring higher codes (new categories)."""
    X, y, w = make_codes(labels, n_samples=120, seed=3)
    X[40:80, 0] += 2  # feature 0: codes 2 and 3 appear in batch 2 only
    X[80:, 2] += 5  # feature 2: codes 5 .. 8 appear in batch 3 only
    X[80:, 4] = 11  # feature 4: code 11 in batch 3, nothing in 6 .. 10
    return [(X[a:b], y[a:b], w[a:b]) for a, b in [(0, 40), (40, 80), (80, 120)]]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("labels", LABELS)
def test_partial_fit_new_categories_equals_fit(labels, weighted):
    labels = LABELS[labels]
    batches = growing_batches(labels)
    X_all = np.concatenate([b[0] for b in batches])
    y_all = np.concatenate([b[1] for b in batches])
    w_all = np.concatenate([b[2] for b in batches]) if weighted else None

    ours = fastnb.CategoricalNB()
    for X, y, w in batches:
        ours.partial_fit(X, y, classes=labels, sample_weight=w if weighted else None)
    assert_array_equal(ours.n_categories_, X_all.max(axis=0) + 1)
    assert_array_equal(ours.n_categories_, [4, 3, 9, 5, 12])

    theirs = sk_nb.CategoricalNB().fit(X_all, y_all, sample_weight=w_all)
    assert_agrees(ours, theirs, X_all, tol(np.float64))
    refit = fastnb.CategoricalNB().fit(X_all, y_all, sample_weight=w_all)
    assert_agrees(ours, refit, X_all, tol(np.float64))


def test_categories_of_codes_are_shared_and_stay_read_only():
    # A column of codes' categories are one array for each count, shared by
    # every model, which no one can make writeable; a batch that brings no
    # new category leaves the model with the same arrays.
    X, y, _ = growing_batches(LABELS["2 int"])[0]
    first = fastnb.CategoricalNB().fit(X, y)
    second = fastnb.CategoricalNB().partial_fit(X, y, classes=LABELS["2 int"])
    before = first._statistics["categories"]
    shared = zip(before, second._statistics["categories"], strict=True)
    assert all(a is b for a, b in shared)
    for categories in [*before, *first.categories_]:
        with pytest.raises(ValueError, match="WRITEABLE"):
            categories.flags.writeable = True
    first.partial_fit(X, y)
    kept = zip(before, first._statistics["categories"], strict=True)
    assert all(a is b for a, b in kept)
    assert_array_equal(first.category_count_[0], 2 * second.category_count_[0])


def test_per_feature_attributes_are_built_when_first_read():
    # fit leaves the lists of an array a feature to their first reading;
    # built, they are kept, read-only, and a copy builds its own.
    X, y, _ = growing_batches(LABELS["2 int"])[0]
    model = fastnb.CategoricalNB().fit(X, y)
    attributes = model._cache["tables"][0]
    names = ["feature_log_prob_", "category_count_", "categories_"]
    assert all(isinstance(attributes[name], fastnb._base.Deferred) for name in names)
    duplicate = copy.deepcopy(model)
    for name in names:
        value = getattr(model, name)
        assert attributes[name] is value is getattr(model, name)
        assert len(value) == X.shape[1]
        assert not any(array.flags.writeable for array in value)
    pairs = zip(model.category_count_, duplicate.category_count_, strict=True)
    assert not any(np.shares_memory(a, b) for a, b in pairs)


def test_small_batches_of_codes_are_counted_in_the_models_categories():
    # A batch of codes for a model of codes is counted in a table as large
    # as the model's: one that lacks some of its categories but brings no
    # new one keeps the model's; a new code widens the table, as before.
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(300, 12))
    y = rng.integers(0, 3, size=300)
    ours = fastnb.CategoricalNB().partial_fit(X, y, classes=[0, 1, 2])
    theirs = sk_nb.CategoricalNB().partial_fit(X, y, classes=[0, 1, 2])
    categories = ours._statistics["categories"]
    for start in range(0, 300, 4):
        ours.partial_fit(X[start : start + 4], y[start : start + 4])
        theirs.partial_fit(X[start : start + 4], y[start : start + 4])
        kept = zip(categories, ours._statistics["categories"], strict=True)
        assert all(a is b for a, b in kept)
    wider = X[:3].copy()
    wider[:, 4] = 8
    ours.partial_fit(wider, y[:3])
    theirs.partial_fit(wider, y[:3])
    assert [len(c) for c in ours.categories_] == [6] * 4 + [9] + [6] * 7
    for a, b in zip(ours.category_count_, theirs.category_count_, strict=True):
        assert_array_equal(a, b)
    assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-12)


def test_code_sizes_only_of_categories_that_are_all_codes():
    code_sizes, code_range = (
        fastnb._categorical.code_sizes,
        fastnb._categorical.code_range,
    )
    assert_array_equal(
        code_sizes([code_range(3), code_range(0), code_range(5)]), [3, 0, 5]
    )
    assert_array_equal(code_sizes([]), np.zeros(0))
    # Values (an array of objects) are not codes.
    assert code_sizes([code_range(3), np.array([0, 1, 2], dtype=object)]) is None


@pytest.mark.parametrize("n_features", [3, 30, 200])
def test_codes_that_grow_down_the_rows_widen_the_table(n_features):
    # A chunk's table is laid out from its first rows (at least 64) and
    # widened in place, the features after moved, when a later code of a
    # feature is larger than its others.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(500, n_features))
    X[:, 1] = np.arange(500) // 10
    X[:, -1] = np.where(np.arange(500) < 300, 0, 4)
    y = rng.integers(0, 3, 500)
    ours = fastnb.CategoricalNB().fit(X, y)
    theirs = sk_nb.CategoricalNB().fit(X, y)
    assert_agrees(ours, theirs, X, tol(np.float64))


def test_partial_fit_strings_new_categories_equals_fit():
    rng = np.random.default_rng(5)
    X = rng.choice(["red", "green", "blue"], size=(150, 3)).astype(object)
    X[100:, 1] = rng.choice(["violet", "amber"], size=50)  # new in the last batch
    y = rng.choice(["no", "yes"], size=150)
    ours = fastnb.CategoricalNB()
    for a, b in [(0, 50), (50, 100), (100, 150)]:
        ours.partial_fit(X[a:b], y[a:b], classes=["no", "yes"])
    encoder = OrdinalEncoder().fit(X)
    theirs = sk_nb.CategoricalNB().fit(encoder.transform(X), y)
    assert_array_equal(ours.n_categories_, [3, 5, 3])
    for j in range(3):
        assert sorted(ours.categories_[j].tolist()) == encoder.categories_[j].tolist()
    assert_same_by_value(ours, theirs, encoder.categories_, tol(np.float64))
    assert_allclose(
        ours.predict_proba(X),
        theirs.predict_proba(encoder.transform(X)),
        rtol=tol(np.float64),
    )


def union_of(first, second):
    """The united categories and rows, built one value at a time: each
    feature's first categories in order, then the second's new ones."""
    united, first_rows, second_rows, start = [], [], [], 0
    for a, b in zip(first, second, strict=True):
        union = list(a) + [v for v in b if v not in list(a)]
        united.append(union)
        first_rows += [start + union.index(v) for v in a]
        second_rows += [start + union.index(v) for v in b]
        start += len(union)
    return united, first_rows, second_rows


def codes(*lengths, dtype=np.int64):
    return [np.arange(n, dtype=dtype) for n in lengths]


UNITE_CASES = {
    "codes, either longer": (codes(3, 5, 2, 4), codes(3, 2, 6, 0)),
    "the same codes": (codes(2, 7), codes(2, 7)),
    "a feature without categories": (codes(0, 3), codes(2, 3)),
    "floats": (codes(2, 3, dtype=float), codes(4, 1, dtype=float)),
    "not nested": ([np.array([0, 1, 2]), np.array([5])], codes(2, 1)),
    "of two dtypes": (codes(3, 2), [np.arange(4), np.arange(2.0)]),
    "strings": (
        [np.array(["b", "a"], dtype=object), np.array(["x"], dtype=object)],
        [np.array(["a", "c"], dtype=object), np.array(["x", "y"], dtype=object)],
    ),
}


@pytest.mark.parametrize("case", UNITE_CASES)
def test_united_categories_keep_first_s_order_then_second_s_new_ones(case):
    from fastnb._codes import united_categories

    first, second = UNITE_CASES[case]
    united, first_rows, second_rows = united_categories(first, second)
    expected, expected_first, expected_second = union_of(first, second)
    assert [u.tolist() for u in united] == expected
    assert first_rows.dtype == second_rows.dtype == np.intp
    assert first_rows.tolist() == expected_first
    assert second_rows.tolist() == expected_second


def bad_batches():
    X, y, _ = make_codes(LABELS["5 str"], n_samples=30, seed=7)
    X[:, 0] += 4  # new categories in the same batch as the fault
    negative = X.copy()
    negative[5, 3] = -1
    fractional = X.astype(np.float64)
    fractional[7, 1] = 1.5
    unknown_label = y.copy()
    unknown_label[2] = "zebra"
    return {
        "negative code": (negative, y, ValueError, "feature 3 has code -1 in row 5"),
        "non-integer code": (fractional, y, ValueError, "non-integer codes"),
        "wrong n_features": (
            X[:, :-1],
            y,
            ValueError,
            "X has 4 features, but CategoricalNB is expecting 5",
        ),
        "unknown label": (
            X,
            unknown_label,
            ValueError,
            "do not exist in the initial classes",
        ),
    }


@pytest.mark.parametrize("predicted", [False, True], ids=["stale", "predicted"])
@pytest.mark.parametrize("fault", list(bad_batches()))
def test_failed_partial_fit_with_new_categories_leaves_model_unchanged(
    fault, predicted
):
    # The bad batch also brings new categories, which would grow the tables.
    labels = LABELS["5 str"]
    X, y, _ = make_codes(labels, n_samples=60)
    model = fastnb.CategoricalNB().partial_fit(X, y, classes=labels)
    if predicted:
        model.predict_proba(X)
    before = copy.deepcopy(model)
    X_bad, y_bad, error, message = bad_batches()[fault]
    with pytest.raises(error, match=message):
        model.partial_fit(X_bad, y_bad)
    assert_same_state(model, before)
    # The model still learns correctly afterwards.
    X_more, y_more, _ = make_codes(labels, n_samples=30, seed=9)
    model.partial_fit(X_more, y_more)
    theirs = sk_nb.CategoricalNB().fit(
        np.concatenate([X, X_more]), np.concatenate([y, y_more])
    )
    assert_agrees(model, theirs, X, tol(np.float64))


# ---------------------------------------------------------------------------
# Categories not seen in training, and invalid codes
# ---------------------------------------------------------------------------


def hand_joint_log_proba(X_codes, y, sample_weight, x, alpha, n_categories):
    """log P(c) + sum_i log P(x_i | c), counted; an unseen code counts zero."""
    classes = np.unique(y)
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    alpha = np.broadcast_to(alpha, (X_codes.shape[1],))
    class_count = np.array([w[y == c].sum() for c in classes])
    scores = np.log(class_count) - np.log(class_count.sum())
    for i, code in enumerate(x):
        counts = np.array(
            [w[(y == c) & (X_codes[:, i] == code)].sum() for c in classes]
        )
        scores = scores + np.log(
            (counts + alpha[i]) / (class_count + alpha[i] * n_categories[i])
        )
    return scores


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("alpha", [1.0, 0.25, "per feature"])
def test_unseen_code_gets_smoothed_zero_count(alpha, weighted):
    X, y, w = make_codes(LABELS["5 str"])
    w = w if weighted else None
    alpha = np.linspace(0.2, 2.0, N_FEATURES) if alpha == "per feature" else alpha
    model = fastnb.CategoricalNB(alpha=alpha).fit(X, y, sample_weight=w)
    n_categories = X.max(axis=0) + 1
    rows = np.array([[0, 1, 2, 3, 4], [9, 1, 2, 3, 4], [0, 1, 99, 3, 10**4]])
    got = model.predict_joint_log_proba(rows)
    assert np.isfinite(got).all()
    for row, scores in zip(rows, got, strict=True):
        expected = hand_joint_log_proba(X, y, w, row, alpha, n_categories)
        assert_allclose(scores, expected, rtol=tol(np.float64))
    assert_allclose(model.predict_proba(rows).sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_huge_unseen_code_is_cheap(dtype):
    # An unseen code scores like any other: it must not cost memory in
    # proportion to its value (nor fail for a code past any table size).
    X, y, _ = make_codes(LABELS["2 int"])
    model = fastnb.CategoricalNB().fit(X, y)
    n_categories = X.max(axis=0) + 1
    for code in [10**7, 2**40]:
        row = np.array([[0, 1, code, 3, 4]], dtype=dtype)
        tracemalloc.start()
        try:
            got = model.predict_joint_log_proba(row)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        expected = hand_joint_log_proba(X, y, None, row[0], 1.0, n_categories)
        assert_allclose(got[0], expected, rtol=tol(np.float64))
        assert peak < 10**6, f"code {code}: predict allocated {peak} bytes"


def test_unseen_code_with_min_categories():
    X, y, _ = make_codes(LABELS["2 int"])
    minimum = np.array([1, 7, 2, 9, 6])
    model = fastnb.CategoricalNB(alpha=0.5, min_categories=minimum).fit(X, y)
    n_categories = np.maximum(X.max(axis=0) + 1, minimum)
    # Code 8 of feature 3 is known (min_categories); 7 of feature 1 is not.
    row = np.array([0, 7, 1, 8, 5])
    expected = hand_joint_log_proba(X, y, None, row, 0.5, n_categories)
    assert_allclose(model.predict_joint_log_proba([row])[0], expected, rtol=1e-10)


def test_unknown_string_gets_smoothed_zero_count():
    rng = np.random.default_rng(11)
    X = rng.choice(["a", "bb", "ccc", "dddd"], size=(70, 3))
    y = rng.choice(["no", "yes"], size=70)
    model = fastnb.CategoricalNB(alpha=0.7).fit(X, y)
    codes = OrdinalEncoder().fit_transform(X).astype(np.int64)
    x = np.array([["bb", "never seen", "a"]])
    x_codes = np.array([1, 99, 0])  # 99: past every code, never seen
    expected = hand_joint_log_proba(codes, y, None, x_codes, 0.7, [4, 4, 4])
    got = model.predict_joint_log_proba(x)
    assert np.isfinite(got).all()
    assert_allclose(got[0], expected, rtol=tol(np.float64))
    assert model.predict(x)[0] in ("no", "yes")


@pytest.mark.parametrize(
    ("value", "match"), [(-1, "[Nn]egative"), (-7.0, "[Nn]egative"), (1.5, "integer")]
)
@pytest.mark.parametrize("method", ["predict", "predict_proba", "fit"])
def test_negative_or_fractional_codes_raise(method, value, match):
    X, y, _ = make_codes(LABELS["2 int"])
    bad = X.astype(np.float64)
    bad[4, 2] = value
    model = fastnb.CategoricalNB()
    if method == "fit":
        with pytest.raises(ValueError, match=match):
            model.fit(bad, y)
        return
    model.fit(X, y)
    with pytest.raises(ValueError, match=match):
        getattr(model, method)(bad)


# ---------------------------------------------------------------------------
# Threads, and the codes the kernels check as they read X
# ---------------------------------------------------------------------------

# 600,000 codes: work for several threads (fastnb._threads.WORK_PER_THREAD), in 10
# chunks of rows when counted in one pass.
BIG_SAMPLES, BIG_FEATURES = 30_000, 20
BIG_LABELS = LABELS["5 str"]


def make_big_codes(widest=None, seed=0):
    """Codes for many threads, labels of 5 classes and positive weights.

    Feature j has codes up to j + 1, each class favouring its own, and a
    code up to 2 j + 10 in about one row in a thousand, so that chunks of
    rows meet new largest codes late. With ``widest``, the last feature
    takes a code up to it in one row in ten (tables too large to count in
    one pass). Copies of arrays made once (the bad-code tests take them
    some 350 times).
    """
    return tuple(values.copy() for values in _big_codes(widest, seed))


@functools.cache
def _big_codes(widest, seed):
    rng = np.random.default_rng(seed)
    y = BIG_LABELS[rng.integers(0, len(BIG_LABELS), BIG_SAMPLES)]
    class_index = np.searchsorted(BIG_LABELS, y)
    X = np.empty((BIG_SAMPLES, BIG_FEATURES), dtype=np.int64)
    for j in range(BIG_FEATURES):
        favourite = (class_index + j) % (j + 2)
        anything = rng.integers(0, j + 2, BIG_SAMPLES)
        X[:, j] = np.where(rng.random(BIG_SAMPLES) < 0.4, favourite, anything)
        rare = rng.random(BIG_SAMPLES) < 1e-3
        X[rare, j] = rng.integers(0, 2 * j + 11, rare.sum())
    if widest is not None:
        wide = rng.random(BIG_SAMPLES) < 0.1
        X[wide, -1] = rng.integers(0, widest + 1, wide.sum())
        X[rng.integers(BIG_SAMPLES), -1] = widest
    arrays = X, y, rng.uniform(0.2, 3.0, BIG_SAMPLES)
    for values in arrays:
        values.flags.writeable = False
    return arrays


@functools.cache
def big_sparse_codes(container):
    """make_big_codes' codes as a sparse matrix (with some zeros stored), made
    once a container: nothing changes it."""
    return sparse_with_zeros(make_big_codes()[0], container)


class RecordedKernels:
    """The kernels, recording the thread count of each categorical kernel call."""

    def __init__(self, kernels):
        self._kernels = kernels
        self.threads = {}

    def __getattr__(self, name):
        kernel = getattr(self._kernels, name)
        if not name.startswith("categorical_"):
            return kernel

        def call(*args):
            # Every kernel takes its thread count last.
            self.threads.setdefault(name, []).append(args[-1])
            return kernel(*args)

        return call


@pytest.fixture
def kernel_threads(monkeypatch):
    """Let the kernels run more threads than there are CPUs; record their calls.

    fastnb gives a kernel no more threads than usable CPUs: more threads
    than cores are how many-core runs are tested on a small machine.
    """
    if not fastnb._simd.kernels.openmp_enabled():
        pytest.skip("the kernels were built without OpenMP")
    monkeypatch.setattr(
        fastnb._threads.os,
        "sched_getaffinity",
        lambda pid: set(range(64)),
        raising=False,
    )
    recorded = RecordedKernels(fastnb._categorical._kernels)
    monkeypatch.setattr(fastnb._categorical, "_kernels", recorded)
    return recorded


def fit_and_score(X, y, w, n_threads, recorded, **params):
    """A model fitted on X with n_threads threads, and its outputs on X."""
    recorded.threads.clear()
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        model = fastnb.CategoricalNB(**params).fit(X, y, sample_weight=w)
        outputs = {method: getattr(model, method)(X) for method in OUTPUT_ATOL}
        outputs["predict"] = model.predict(X)
    return model, outputs


# How fit counts: in one pass; counted again after a first pass that found
# tables too large for it, into a table per chunk of rows, merged; and into
# one table (too large for one a chunk).
COUNTING = {
    "one pass": (None, {"categorical_check_count_dense", "categorical_merge_counts"}),
    "again, chunks": (
        5_000,
        {
            "categorical_check_count_dense",
            "categorical_count_dense",
            "categorical_merge_counts",
        },
    ),
    "again, one table": (
        900_000,
        {"categorical_check_count_dense", "categorical_count_dense"},
    ),
}


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
@pytest.mark.parametrize("counting", COUNTING)
def test_results_are_the_same_for_any_thread_count(kernel_threads, counting, dtype):
    widest, kernels = COUNTING[counting]
    X, y, w = make_big_codes(widest)
    X = X.astype(dtype)
    results = {}
    for n_threads in (1, 2, 3, 7):
        results[n_threads] = fit_and_score(X, y, w, n_threads, kernel_threads)
        # As many threads as asked for ran each counting and scoring kernel.
        fit_kernels = kernels | {"categorical_log_tables", "categorical_zero_scores"}
        assert set(kernel_threads.threads) == fit_kernels | {"categorical_score_dense"}
        counted = kernel_threads.threads["categorical_check_count_dense"]
        scored = kernel_threads.threads["categorical_score_dense"]
        assert counted == [n_threads] and scored == [n_threads] * 4
    one, one_outputs = results[1]
    for n_threads in (2, 3, 7):
        model, outputs = results[n_threads]
        # Bit for bit: weighted sums are added in the same order.
        assert_same_state(outputs, one_outputs, where="outputs")
        assert_same_state(model, one)
    if widest is None or widest < 10_000:
        theirs = sk_nb.CategoricalNB().fit(X, y, sample_weight=w)
        assert_agrees(one, theirs, X[:2000], tol(np.float64))


@pytest.mark.parametrize("counting", COUNTING)
def test_missing_values_in_every_way_of_counting(kernel_threads, counting):
    widest, kernels = COUNTING[counting]
    X, y, w = make_big_codes(widest)
    X = X.astype(np.float64)
    X[np.random.default_rng(5).random(X.shape) < 0.1] = np.nan
    models = {}
    for n_threads in (1, 3):
        models[n_threads], _ = fit_and_score(
            X, y, w, n_threads, kernel_threads, missing="ignore"
        )
        assert kernels <= set(kernel_threads.threads)
    assert_same_state(models[3], models[1])
    class_index = np.searchsorted(BIG_LABELS, y)
    for j in range(BIG_FEATURES):
        seen = ~np.isnan(X[:, j])
        codes = X[seen, j].astype(np.int64)
        expected = np.zeros((len(BIG_LABELS), codes.max() + 1))
        np.add.at(expected, (class_index[seen], codes), w[seen])
        assert_allclose(models[1].category_count_[j], expected, rtol=1e-12)
    # The same codes sparse (stored NaN, zeros not stored): counted in
    # chunks of rows (CSR) or a column a task (CSC).
    for container in SPARSE:
        sparse = getattr(sp, f"{container}_matrix")(X)
        model = fastnb.CategoricalNB(missing="ignore").fit(sparse, y, sample_weight=w)
        assert_same_list(model.category_count_, models[1].category_count_, 1e-10)


def test_counts_in_one_pass_are_the_counts(kernel_threads):
    # Chunks meet new largest codes late, and lay their tables out again.
    X, y, w = make_big_codes(seed=4)
    model, _ = fit_and_score(X, y, None, 3, kernel_threads)
    assert "categorical_count_dense" not in kernel_threads.threads
    class_index = np.searchsorted(BIG_LABELS, y)
    for j in range(BIG_FEATURES):
        expected = np.zeros((len(BIG_LABELS), X[:, j].max() + 1))
        np.add.at(expected, (class_index, X[:, j]), 1.0)
        assert_array_equal(model.category_count_[j], expected)
    weighted, _ = fit_and_score(X, y, w, 3, kernel_threads)
    for j in range(BIG_FEATURES):
        expected = np.zeros((len(BIG_LABELS), X[:, j].max() + 1))
        np.add.at(expected, (class_index, X[:, j]), w)
        assert_allclose(weighted.category_count_[j], expected, rtol=1e-13)


def test_float32_codes_are_checked_against_max_categories_exactly():
    # 2**24 + 1 is no float32: a code of 2**24 is below it, one of 2**24 + 2
    # is not. (A kernel call: a table for such codes would be large.)
    X = np.zeros((5_000, 1), dtype=np.float32)
    y = np.zeros(5_000, dtype=np.intp)
    for code, first_bad in [(2.0**24, -1), (2.0**24 + 2, 4_500)]:
        X[4_500, 0] = code
        highest = np.empty((1, 1), dtype=np.float32)
        layout = np.empty((1, 2), dtype=np.intp)
        sizes = np.zeros(1, dtype=np.int64)
        bad, all_counted = fastnb._simd.kernels.categorical_check_count_dense(
            X,
            y,
            np.empty(0),
            2**24 + 1,
            1,
            5_000,
            highest,
            layout,
            np.empty((1, 8)),
            np.empty((1, 1)),
            sizes,
            np.empty(2, dtype=np.intp),
            np.empty(1),
            False,
            1,
        )
        assert bad == first_bad
        if bad < 0:
            # Too many categories to count in one pass.
            assert highest[0, 0] == code and layout[0, -1] == -1
            assert not all_counted and sizes[0] == code + 1


# Bad codes: value, dtype X has, and the message, "{i}" and "{j}" standing
# for the row and column of the first.
BAD_CODES = {
    "negative": (
        -1,
        np.int64,
        r"Negative values in data passed to CategoricalNB \(input X\)\. The first: "
        r"feature {j} has code -1 in row {i}; codes must be integers >= 0\.",
    ),
    "negative int32": (-3, np.int32, r"feature {j} has code -3 in row {i};"),
    "negative fraction": (-0.5, np.float64, r"feature {j} has code -0.5 in row {i};"),
    "fractional": (
        2.5,
        np.float64,
        r"CategoricalNB: feature {j} has non-integer codes \(2.5 in row {i}\); "
        r"category codes must be whole numbers",
    ),
    "fractional float32": (7.25, np.float32, r"non-integer codes \(7.25 in row {i}\)"),
    "NaN": (np.nan, np.float64, r"^Input X contains NaN\."),
    "NaN float32": (np.nan, np.float32, r"^Input X contains NaN\."),
    "infinity": (np.inf, np.float64, r"^Input X contains infinity"),
    "minus infinity": (-np.inf, np.float32, r"^Input X contains infinity"),
    "too large": (
        100,
        np.int64,
        r"CategoricalNB: feature {j} has code 100 in row {i}, which needs a table "
        r"of more than max_categories=100 categories",
    ),
    "too large float": (1e6, np.float64, r"feature {j} has code 1000000 in row {i},"),
}
# Where the bad codes go; the first, in row-major order, is reported.
BAD_PLACES = {
    "first row": [(0, 3)],
    "last row": [(BIG_SAMPLES - 1, BIG_FEATURES - 1)],
    "middle": [(BIG_SAMPLES // 2, 7)],
    "several": [(20_000, 2), (15_000, 19), (15_000, 5), (29_000, 0), (15_001, 0)],
}


def with_bad_codes(kind, places):
    """Big codes with the bad code of ``kind`` at ``places``; the first place."""
    value, dtype, _ = BAD_CODES[kind]
    X, y, _ = make_big_codes()
    X = X.astype(dtype)
    for i, j in places:
        X[i, j] = value
    return X, y, min(places)


def bad_code_message(kind, place):
    i, j = place
    return BAD_CODES[kind][2].replace("{i}", str(i)).replace("{j}", str(j))


@pytest.mark.parametrize("n_threads", [1, 7])
@pytest.mark.parametrize("place", BAD_PLACES)
@pytest.mark.parametrize("kind", BAD_CODES)
def test_fit_reports_the_first_bad_code(kernel_threads, kind, place, n_threads):
    X, y, first = with_bad_codes(kind, BAD_PLACES[place])
    # Bad codes of other kinds, further on, are not the first.
    X[first[0] + 1 :: 997, 1] = -7
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        with pytest.raises(ValueError, match=bad_code_message(kind, first)):
            fastnb.CategoricalNB(max_categories=100).fit(X, y)
        model = fastnb.CategoricalNB(max_categories=100)
        model.partial_fit(make_big_codes()[0], y, classes=BIG_LABELS)
        before = copy.deepcopy(model)
        with pytest.raises(ValueError, match=bad_code_message(kind, first)):
            model.partial_fit(X, y)
        assert_same_state(model, before)
    assert kernel_threads.threads["categorical_check_count_dense"][0] == n_threads


@pytest.mark.parametrize("n_threads", [1, 7])
@pytest.mark.parametrize("place", BAD_PLACES)
@pytest.mark.parametrize("kind", [k for k in BAD_CODES if "too large" not in k])
def test_predict_reports_the_first_bad_code(kernel_threads, kind, place, n_threads):
    X, y, first = with_bad_codes(kind, BAD_PLACES[place])
    X[first[0] + 1 :: 997, 1] = -7
    model = fastnb.CategoricalNB().fit(make_big_codes()[0], y)
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        for method in ["predict", *OUTPUT_ATOL]:
            with pytest.raises(ValueError, match=bad_code_message(kind, first)):
                getattr(model, method)(X)
    assert kernel_threads.threads["categorical_score_dense"] == [n_threads] * 4


def test_codes_past_the_categories_score_as_unseen(kernel_threads):
    X, y, _ = make_big_codes()
    model = fastnb.CategoricalNB().fit(X, y)
    past = X.astype(np.float64)
    past[::3, 4] = 1e300
    past[1::3, 4] = 2.0**63
    unseen = X.copy()
    unseen[::3, 4] = unseen[1::3, 4] = model.n_categories_[4]
    with threadpool_limits(limits=7, user_api="openmp"):
        assert_array_equal(
            model.predict_joint_log_proba(past), model.predict_joint_log_proba(unseen)
        )


# Bad codes for the property test: the message of each ("{i}" and "{j}" as
# above), and whether predict refuses it too (a code past the categories
# scores as unseen).
SOME_BAD_CODES = {
    -1.0: ("feature {j} has code -1 in row {i}; codes must be", True),
    -0.25: ("feature {j} has code -0.25 in row {i}; codes must be", True),
    0.5: (r"feature {j} has non-integer codes \(0.5 in row {i}\)", True),
    3.75: (r"feature {j} has non-integer codes \(3.75 in row {i}\)", True),
    np.inf: ("^Input X contains infinity", True),
    1e3: ("feature {j} has code 1000 in row {i}, which needs a table", False),
}


def first_bad_message(bad, predicting):
    """The message about the first of the bad codes {(row, column): value}."""
    places = [p for p, v in bad.items() if SOME_BAD_CODES[v][1] or not predicting]
    if not places:
        return None
    i, j = min(places)
    message = SOME_BAD_CODES[bad[i, j]][0]
    return message.replace("{i}", str(i)).replace("{j}", str(j))


@settings(max_examples=25, deadline=None)
@given(
    bad=st.dictionaries(
        st.tuples(st.integers(0, 19_999), st.integers(0, 11)),
        st.sampled_from(list(SOME_BAD_CODES)),
        min_size=1,
        max_size=6,
    ),
    n_threads=st.sampled_from([1, 2, 3]),
)
def test_the_first_bad_code_is_reported_wherever_it_is(bad, n_threads):
    # 240,000 codes: 4 chunks of rows, up to 3 threads (on as many CPUs).
    rng = np.random.default_rng(len(bad))
    X = rng.integers(0, 50, (20_000, 12)).astype(np.float64)
    y = rng.integers(0, 3, 20_000)
    model = fastnb.CategoricalNB().fit(X, y)
    for (i, j), value in bad.items():
        X[i, j] = value
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        with pytest.raises(ValueError, match=first_bad_message(bad, False)):
            fastnb.CategoricalNB(max_categories=1000).fit(X, y)
        message = first_bad_message(bad, True)
        if message is None:
            model.predict(X)
        else:
            with pytest.raises(ValueError, match=message):
                model.predict(X)


# ---------------------------------------------------------------------------
# Sparse codes: CSR and CSC, code 0 where nothing is stored, as their dense X
# ---------------------------------------------------------------------------


def mostly_zero_codes(labels, n_samples=N_SAMPLES, seed=0):
    """make_codes with about 60% of the codes 0, as one-hot and hashed data."""
    X, y, w = make_codes(labels, n_samples, seed)
    X[np.random.default_rng(seed + 100).random(X.shape) < 0.6] = 0
    return X, y, w


SPARSE_WEIGHTS = {
    "unweighted": lambda w: None,
    "integer weights": lambda w: np.arange(len(w)) % 4,
    "fractional weights": lambda w: w,
}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("container", SPARSE)
@pytest.mark.parametrize("weights", SPARSE_WEIGHTS)
def test_sparse_codes_fit_as_their_dense_codes(weights, container, dtype, index_dtype):
    X, y, w = mostly_zero_codes(LABELS["5 str"])
    X = X.astype(dtype)
    sample_weight = SPARSE_WEIGHTS[weights](w)
    # Some zeros stored, which count as code 0 like the others.
    X_sparse = sparse_with_zeros(X, container, index_dtype)
    assert (X_sparse.data == 0).any()
    params = {"alpha": 0.7, "min_categories": [1, 7, 2, 9, 6]}
    ours = fastnb.CategoricalNB(**params).fit(X_sparse, y, sample_weight=sample_weight)
    dense = fastnb.CategoricalNB(**params).fit(X, y, sample_weight=sample_weight)
    # Whole-number weights add up exactly, whatever the order: the counts,
    # and so the tables, are bit for bit the dense ones. Code 0's count is
    # its class's weight less the other codes' (rounded) otherwise.
    exact = weights != "fractional weights"
    assert_same_state(
        public_attributes(ours), public_attributes(dense), None if exact else 1e-12
    )
    # Scores start from the all-zeros row's and add each stored code's term
    # less code 0's: another order of summation. New rows hold codes never
    # seen (past the categories, and far past any table).
    X_new = mostly_zero_codes(LABELS["5 str"], n_samples=40, seed=1)[0]
    X_new[:4, 2] = [9, 50, 2**20, 2**30]
    for X_eval in (X, X_new.astype(dtype)):
        X_eval_sparse = sparse_with_zeros(X_eval, container, index_dtype, seed=2)
        assert_same_outputs(ours, dense, X_eval_sparse, 1e-12, X_expected=X_eval)
    # (scikit-learn refuses sparse X: its model of the dense X.)
    theirs = sk_nb.CategoricalNB(**params).fit(X, y, sample_weight=sample_weight)
    assert_agrees(ours, theirs, X, tol(np.float64))


@pytest.mark.parametrize("container", SPARSE)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_sparse_partial_fit_in_chunks_equals_dense_fit(container, weighted):
    X, y, w = mostly_zero_codes(LABELS["5 str"], n_samples=120)
    # Later chunks bring larger codes: the table grows as they come.
    X[60:, 2] += 3 * (X[60:, 2] > 0)
    weights = w if weighted else None
    model = fastnb.CategoricalNB()
    for start, stop in [(0, 30), (30, 31), (31, 90), (90, 120)]:
        rows = slice(start, stop)
        model.partial_fit(
            sparse_with_zeros(X[rows], container, seed=start),
            y[rows],
            classes=LABELS["5 str"],
            sample_weight=None if weights is None else weights[rows],
        )
    dense = fastnb.CategoricalNB().fit(X, y, sample_weight=weights)
    assert_same_state(
        public_attributes(model), public_attributes(dense), 1e-12 if weighted else None
    )
    assert_same_outputs(model, dense, sp.csr_matrix(X), 1e-12, X_expected=X)


def test_unsmoothed_impossible_zeros_score_as_dense():
    # With alpha=0 a class that never has code 0 in a feature gives that
    # code log(0) = -inf: sparse rows then add every feature's term, as the
    # dense kernel does (a difference with -inf would be NaN).
    X, y, _ = mostly_zero_codes(LABELS["5 str"], seed=3)
    X[y == "bee", 3] = np.maximum(X[y == "bee", 3], 1)
    X_new = mostly_zero_codes(LABELS["5 str"], n_samples=40, seed=4)[0]
    X_new[:3, 1] = 9  # unseen: -inf for every class
    for container in SPARSE:
        ours = fastnb.CategoricalNB(alpha=0.0).fit(sparse_with_zeros(X, container), y)
        dense = fastnb.CategoricalNB(alpha=0.0).fit(X, y)
        assert_same_state(public_attributes(ours), public_attributes(dense))
        X_sparse = sparse_with_zeros(X_new, container)
        jll = ours.predict_joint_log_proba(X_sparse)
        assert np.isneginf(jll[:, 1]).sum() > np.isneginf(jll[:3, 1]).sum()
        # The same terms in the same order: bit for bit.
        for method in ["predict", *OUTPUT_ATOL]:
            assert_same_state(
                getattr(ours, method)(X_sparse), getattr(dense, method)(X_new), None
            )


@pytest.mark.parametrize("container", SPARSE)
@pytest.mark.parametrize("unsmoothed", [False, True], ids=["alpha 1", "alpha 0"])
def test_sparse_results_are_the_same_for_any_thread_count(
    kernel_threads, container, unsmoothed
):
    # CSR: chunks of rows counted apart, added in chunk order; CSC: a task a
    # column; scores a row at a time. alpha=0 with a class never 0 in a
    # feature scores every feature of every row (see above).
    X, y, w = make_big_codes()
    X[np.random.default_rng(1).random(X.shape) < 0.5] = 0
    alpha = 0.0 if unsmoothed else 1.0
    if unsmoothed:
        X[y == BIG_LABELS[0], 3] = np.maximum(X[y == BIG_LABELS[0], 3], 1)
    X_sparse = sparse_with_zeros(X, container)
    results = {}
    for n_threads in (1, 2, 3, 7):
        kernel_threads.threads.clear()
        with threadpool_limits(limits=n_threads, user_api="openmp"):
            model = fastnb.CategoricalNB(alpha=alpha).fit(X_sparse, y, sample_weight=w)
            outputs = {m: getattr(model, m)(X_sparse) for m in OUTPUT_ATOL}
            outputs["predict"] = model.predict(X_sparse)
            effective_threads = fastnb._threads.effective_n_threads(X_sparse.nnz)
        counting = kernel_threads.threads[f"categorical_count_{container}"]
        # Work for several threads: all of them (no team of a size between).
        assert counting == [effective_threads] and effective_threads == n_threads
        if container == "csr":
            # In chunks of rows, merged, the implicit zeros added on the way.
            assert kernel_threads.threads["categorical_merge_counts"] == [n_threads]
            assert "categorical_add_zeros" not in kernel_threads.threads
        assert kernel_threads.threads["categorical_score_csr"] == [n_threads] * 4
        results[n_threads] = model, outputs
    one, one_outputs = results[1]
    for n_threads in (2, 3, 7):
        model, outputs = results[n_threads]
        assert_same_state(outputs, one_outputs, where="outputs")
        assert_same_state(model, one)
    # Unsmoothed, code 0's count (its class's weight less the other codes')
    # carries its rounding into its log: float64's tolerance.
    dense = fastnb.CategoricalNB(alpha=alpha).fit(X, y, sample_weight=w)
    assert_same_outputs(one, dense, X_sparse, tol(np.float64), X_expected=X)


@pytest.mark.parametrize("n_threads", [1, 7])
@pytest.mark.parametrize("container", SPARSE)
@pytest.mark.parametrize("place", BAD_PLACES)
@pytest.mark.parametrize("kind", BAD_CODES)
def test_sparse_fit_and_predict_report_the_first_bad_code(
    kernel_threads, kind, place, container, n_threads
):
    # The same message as for the dense X, about its first bad code in
    # row-major order (a CSC matrix stores them column by column).
    X, y, first = with_bad_codes(kind, BAD_PLACES[place])
    X[first[0] + 1 :: 997, 1] = -7
    X_sparse = sparse_with_zeros(X, container)
    message = bad_code_message(kind, first)
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        with pytest.raises(ValueError, match=message):
            fastnb.CategoricalNB(max_categories=100).fit(X_sparse, y)
        model = fastnb.CategoricalNB(max_categories=100)
        good = big_sparse_codes(container)
        model.partial_fit(good, y, classes=BIG_LABELS)
        before = copy.deepcopy(model)
        with pytest.raises(ValueError, match=message):
            model.partial_fit(X_sparse, y)
        assert_same_state(model, before)
        if "too large" not in kind:
            for method in ["predict", *OUTPUT_ATOL]:
                with pytest.raises(ValueError, match=message):
                    getattr(model, method)(X_sparse)
    checked = kernel_threads.threads[f"categorical_check_{container}"]
    # One thread, or as many as allowed: no team of a size between.
    enough = X_sparse.nnz >= 2 * fastnb._threads.WORK_PER_THREAD
    assert checked[0] == (n_threads if enough else 1)


def test_sparse_codes_must_be_numbers():
    X, y, _ = mostly_zero_codes(LABELS["2 int"])
    with pytest.raises(ValueError, match="sparse matrix of bool.*X.astype"):
        fastnb.CategoricalNB().fit(sp.csr_matrix(X > 1), y)
    model = fastnb.CategoricalNB().fit(X, y)
    with pytest.raises(ValueError, match="sparse matrix of bool"):
        model.predict(sp.csc_matrix(X > 1))


def test_sparse_input_is_never_made_dense():
    # Hashed codes: 50,000 rows of 5,000 features, 0.1% of them stored. A
    # dense copy would take 2 GB (a tenth of it 200 MB): fit and predict
    # need memory in proportion to the stored values, rows and tables.
    rng = np.random.default_rng(5)
    n_samples, n_features = 50_000, 5_000
    X = sp.random(
        n_samples,
        n_features,
        density=0.001,
        format="csr",
        random_state=rng,
        data_rvs=lambda n: rng.integers(1, 6, n).astype(np.float64),
    )
    y = rng.integers(0, 4, n_samples)
    model = fastnb.CategoricalNB()
    for call in [
        lambda: model.fit(X, y),
        lambda: model.fit(X.tocsc(), y),
        lambda: model.predict_proba(X),
        lambda: model.predict(X.tocsc()),
    ]:
        tracemalloc.start()
        try:
            call()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 32 * 2**20, f"{peak} bytes"


@settings(max_examples=25, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 40), st.integers(1, 6)),
    density=st.floats(0.0, 1.0),
    highest=st.integers(1, 6),
    container=st.sampled_from(SPARSE),
    seed=st.integers(0, 2**32 - 1),
)
def test_sparse_equals_dense_property(shape, density, highest, container, seed):
    # Any shape and density, a row or a column of them, empty or full
    # matrices, rows that store only zeros: the dense model, counts exact.
    rng = np.random.default_rng(seed)
    X = rng.integers(1, highest + 1, shape) * (rng.random(shape) < density)
    y = rng.integers(0, 3, shape[0])
    X_sparse = sparse_with_zeros(X, container, share=rng.random(), seed=seed)
    ours = fastnb.CategoricalNB().fit(X_sparse, y)
    dense = fastnb.CategoricalNB().fit(X, y)
    assert_same_state(public_attributes(ours), public_attributes(dense))
    assert_same_outputs(ours, dense, X_sparse, 1e-12, X_expected=X)


def test_log_tables_match_the_formula():
    # m-estimates with a prior, per feature, and categories min_categories
    # adds: (N_ica + m_i p_ia) / (N_ic + m_i), unseen ones at uniform's share.
    X, y, w = make_codes(LABELS["5 str"], seed=12)
    minimum = np.array([1, 7, 2, 9, 6])
    n_categories = np.maximum(X.max(axis=0) + 1, minimum)
    rng = np.random.default_rng(3)
    prior = [rng.dirichlet(np.ones(n)) for n in n_categories]
    m = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
    model = fastnb.CategoricalNB(
        alpha=fastnb.MEstimate(m, prior), min_categories=minimum
    ).fit(X, y, sample_weight=w)
    class_index = np.searchsorted(LABELS["5 str"], y)
    scores = np.zeros((len(X), 5)) + model.class_log_prior_
    for j in range(N_FEATURES):
        counts = np.zeros((5, n_categories[j]))
        np.add.at(counts, (class_index, X[:, j]), w)
        assert_allclose(model.category_count_[j], counts, rtol=1e-13)
        total = counts.sum(axis=1, keepdims=True) + m[j]
        expected = np.log((counts + m[j] * prior[j]) / total)
        assert_allclose(model.feature_log_prob_[j], expected, rtol=1e-12)
        scores += expected.T[X[:, j]]
    assert_allclose(model.predict_joint_log_proba(X), scores, rtol=1e-12)
    # An unseen code of feature 0 gets uniform's share: m_0 / n_0 over N_c + m_0.
    unseen = X.copy()
    unseen[:, 0] = 50
    counted = model.category_count_[0].sum(axis=1)
    unseen_term = np.log(m[0] / n_categories[0] / (counted + m[0]))
    seen_term = model.feature_log_prob_[0].T[X[:, 0]]
    assert_allclose(
        model.predict_joint_log_proba(unseen),
        scores + unseen_term - seen_term,
        rtol=1e-12,
    )


@pytest.mark.parametrize("variant", runnable_variants(), ids=lambda m: m.__name__)
def test_instruction_set_variants_fit_and_score_alike(variant, monkeypatch):
    X, y, w = make_big_codes(seed=5)
    X = X.astype(np.float32)
    results = []
    for kernels in (fastnb._simd.kernel_set("baseline"), variant):
        monkeypatch.setattr(fastnb._categorical, "_kernels", kernels)
        model = fastnb.CategoricalNB(alpha=0.3).fit(X, y, sample_weight=w)
        results.append((model.category_count_, model.predict_proba(X)))
        with pytest.raises(ValueError, match="non-integer codes"):
            model.predict(X + 0.5)
    (counts, proba), (variant_counts, variant_proba) = results
    assert_same_state(variant_counts, counts, where="counts")
    assert_allclose(variant_proba, proba, rtol=1e-12, atol=1e-300)


# ---------------------------------------------------------------------------
# Raw values: strings, booleans, pandas
# ---------------------------------------------------------------------------


def assert_same_by_value(ours, theirs, categories, rtol):
    """feature_log_prob_ and category_count_ agree category by category.

    ``categories[i]`` lists the values behind the codes of ``theirs``; the
    order of ``ours.categories_`` may differ.
    """
    for i, values in enumerate(categories):
        ours_values = list(ours.categories_[i])
        assert sorted(ours_values) == sorted(values)
        order = [ours_values.index(v) for v in values]
        assert_allclose(
            ours.feature_log_prob_[i][:, order], theirs.feature_log_prob_[i], rtol=rtol
        )
        assert_allclose(
            ours.category_count_[i][:, order], theirs.category_count_[i], rtol=rtol
        )


@pytest.mark.parametrize("kind", ["str", "object", "bool"])
def test_raw_columns_match_sklearn_on_encoded(kind):
    rng = np.random.default_rng(2)
    n = 80
    y = rng.choice(["spam", "ham", "eggs"], size=n)
    if kind == "bool":
        X = rng.random((n, 4)) < [0.2, 0.5, 0.7, 0.9]
        X[:, 0] |= y == "spam"
    else:
        X = rng.choice(["zeta", "alpha", "Mu", "beta", "10"], size=(n, 4))
        X[y == "ham", 1] = "alpha"
        X = X.astype(object) if kind == "object" else X
    encoder = OrdinalEncoder().fit(X)
    ours = fastnb.CategoricalNB(alpha=0.5).fit(X, y)
    theirs = sk_nb.CategoricalNB(alpha=0.5).fit(encoder.transform(X), y)
    assert_same_by_value(ours, theirs, encoder.categories_, tol(np.float64))
    assert_array_equal(ours.n_categories_, [len(c) for c in encoder.categories_])
    assert_array_equal(ours.predict(X), theirs.predict(encoder.transform(X)))
    assert_allclose(
        ours.predict_proba(X),
        theirs.predict_proba(encoder.transform(X)),
        rtol=tol(np.float64),
    )
    assert not hasattr(ours, "feature_names_in_")


def mixed_frame(rng, n):
    colour = rng.choice(["red", "green", "blue", "grey"], size=n)
    return pd.DataFrame(
        {
            "colour": pd.Series(colour, dtype=object),
            "size": pd.Categorical(
                rng.choice(["S", "M", "L"], size=n), categories=["S", "M", "L"]
            ),
            "level": rng.integers(0, 5, size=n),
            "shade": rng.choice(["dark", "light"], size=n),  # pandas' string dtype
            "flag": rng.random(n) < 0.3,
        }
    )


RAW_COLUMNS = ["colour", "size", "shade", "flag"]


def test_dataframe_mixed_columns_match_sklearn():
    rng = np.random.default_rng(4)
    frame = mixed_frame(rng, 120)
    y = np.where(frame["colour"].isin(["red", "grey"]), "warm", "cool")
    y[rng.random(120) < 0.3] = "cool"
    encoder = OrdinalEncoder().fit(frame[RAW_COLUMNS])

    def encoded(df):
        # In the frame's column order; the code column must not be re-encoded.
        codes = encoder.transform(df[RAW_COLUMNS])
        return np.column_stack([codes[:, :2], df["level"].to_numpy(), codes[:, 2:]])

    ours = fastnb.CategoricalNB().fit(frame, y)
    theirs = sk_nb.CategoricalNB().fit(encoded(frame), y)
    assert_array_equal(ours.feature_names_in_, frame.columns)
    categories = [*encoder.categories_[:2], np.arange(5), *encoder.categories_[2:]]
    assert_same_by_value(ours, theirs, categories, tol(np.float64))
    assert_array_equal(ours.categories_[2], np.arange(5))
    test = mixed_frame(np.random.default_rng(5), 50)
    assert_array_equal(ours.predict(test), theirs.predict(encoded(test)))
    assert_allclose(
        ours.predict_proba(test), theirs.predict_proba(encoded(test)), rtol=1e-10
    )


# ---------------------------------------------------------------------------
# alpha per feature
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_alpha_per_feature_hand_formula(weighted):
    labels = LABELS["5 str"]
    X, y, w = make_codes(labels)
    w = w if weighted else np.ones(len(y))
    alpha = np.array([0.1, 1.0, 3.0, 0.0, 0.5])
    model = fastnb.CategoricalNB(alpha=alpha).fit(X, y, sample_weight=w)
    n_categories = X.max(axis=0) + 1
    class_count = np.array([w[y == c].sum() for c in labels])
    for i in range(N_FEATURES):
        counts = np.array(
            [
                [w[(y == c) & (X[:, i] == a)].sum() for a in range(n_categories[i])]
                for c in labels
            ]
        )
        expected = (counts + alpha[i]) / (
            class_count[:, None] + alpha[i] * n_categories[i]
        )
        with np.errstate(divide="ignore"):
            assert_allclose(
                model.feature_log_prob_[i], np.log(expected), rtol=tol(np.float64)
            )


# ---------------------------------------------------------------------------
# Worked example: Play Tennis (Mitchell, Machine Learning, 1997, table 3.2)
# ---------------------------------------------------------------------------

PLAY_TENNIS = [
    # day, outlook, temperature, humidity, wind, play tennis
    ("D1", "Sunny", "Hot", "High", "Weak", "No"),
    ("D2", "Sunny", "Hot", "High", "Strong", "No"),
    ("D3", "Overcast", "Hot", "High", "Weak", "Yes"),
    ("D4", "Rain", "Mild", "High", "Weak", "Yes"),
    ("D5", "Rain", "Cool", "Normal", "Weak", "Yes"),
    ("D6", "Rain", "Cool", "Normal", "Strong", "No"),
    ("D7", "Overcast", "Cool", "Normal", "Strong", "Yes"),
    ("D8", "Sunny", "Mild", "High", "Weak", "No"),
    ("D9", "Sunny", "Cool", "Normal", "Weak", "Yes"),
    ("D10", "Rain", "Mild", "Normal", "Weak", "Yes"),
    ("D11", "Sunny", "Mild", "Normal", "Strong", "Yes"),
    ("D12", "Overcast", "Mild", "High", "Strong", "Yes"),
    ("D13", "Overcast", "Hot", "Normal", "Weak", "Yes"),
    ("D14", "Rain", "Mild", "High", "Strong", "No"),
]

# P(value | class), counted by hand from the table: feature -> value -> (Yes, No).
F = Fraction
PLAY_TENNIS_TABLES = {
    0: {
        "Sunny": (F(2, 9), F(3, 5)),
        "Overcast": (F(4, 9), F(0, 5)),
        "Rain": (F(3, 9), F(2, 5)),
    },
    1: {
        "Hot": (F(2, 9), F(2, 5)),
        "Mild": (F(4, 9), F(2, 5)),
        "Cool": (F(3, 9), F(1, 5)),
    },
    2: {"High": (F(3, 9), F(4, 5)), "Normal": (F(6, 9), F(1, 5))},
    3: {"Weak": (F(6, 9), F(2, 5)), "Strong": (F(3, 9), F(3, 5))},
}


def play_tennis():
    X = np.array([row[1:5] for row in PLAY_TENNIS])
    y = np.array([row[5] for row in PLAY_TENNIS])
    return X, y


def test_play_tennis_tables():
    X, y = play_tennis()
    model = fastnb.CategoricalNB(alpha=0, force_alpha=True).fit(X, y)
    assert_array_equal(model.classes_, ["No", "Yes"])
    assert_array_equal(model.class_count_, [5, 9])
    assert_allclose(np.exp(model.class_log_prior_), [5 / 14, 9 / 14], rtol=1e-12)
    checked = 0
    for i, table in PLAY_TENNIS_TABLES.items():
        assert sorted(model.categories_[i].tolist()) == sorted(table)
        for value, (p_yes, p_no) in table.items():
            a = model.categories_[i].tolist().index(value)
            probability = np.exp(model.feature_log_prob_[i][:, a])
            assert_allclose(probability, [float(p_no), float(p_yes)], rtol=1e-12)
            checked += 2
    assert checked == 20
    # The textbook's headline figures.
    sunny = model.categories_[0].tolist().index("Sunny")
    assert np.exp(model.feature_log_prob_[0][1, sunny]) == pytest.approx(2 / 9)
    assert np.exp(model.feature_log_prob_[0][0, sunny]) == pytest.approx(3 / 5)


def test_play_tennis_new_day():
    X, y = play_tennis()
    model = fastnb.CategoricalNB(alpha=0, force_alpha=True).fit(X, y)
    new_day = np.array([["Sunny", "Cool", "High", "Strong"]])
    joint = np.exp(model.predict_joint_log_proba(new_day)[0])
    # Columns follow classes_: No, Yes. The textbook: .0206 and .0053.
    assert_allclose(joint, [0.0206, 0.0053], rtol=1e-2)
    p_yes = F(2, 9) * F(3, 9) * F(3, 9) * F(3, 9) * F(9, 14)
    p_no = F(3, 5) * F(1, 5) * F(4, 5) * F(3, 5) * F(5, 14)
    assert_allclose(joint, [float(p_no), float(p_yes)], rtol=1e-12)
    assert_array_equal(model.predict(new_day), ["No"])
    assert_allclose(
        model.predict_proba(new_day)[0],
        [float(p_no / (p_no + p_yes)), float(p_yes / (p_no + p_yes))],
        rtol=1e-12,
    )


def test_play_tennis_codes_match_sklearn():
    # Laplace smoothing, through an encoder, against scikit-learn.
    X, y = play_tennis()
    codes = OrdinalEncoder().fit_transform(X)
    theirs = sk_nb.CategoricalNB().fit(codes, y)
    assert_agrees(fastnb.CategoricalNB().fit(codes, y), theirs, codes, 1e-10)
    ours_raw = fastnb.CategoricalNB().fit(X, y)
    assert_allclose(ours_raw.predict_proba(X), theirs.predict_proba(codes), rtol=1e-10)


# ---------------------------------------------------------------------------
# Real data (../shared/data)
# ---------------------------------------------------------------------------

ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]


def adult(require_data):
    def read(name, skiprows):
        frame, y = read_adult(require_data(f"adult/{name}"), skiprows)
        return frame[ADULT_CATEGORICAL].to_numpy(dtype=object), y

    X_train, y_train = read("adult.data", 0)
    X_test, y_test = read("adult.test", 1)  # the test file opens with a comment
    assert len(X_train) == 32561 and len(X_test) == 16281
    assert set(y_train) == set(y_test) == {"<=50K", ">50K"}
    return X_train, X_test, y_train, y_test


DATASETS = {
    "mushroom": lambda require: split_uci(require("mushroom/agaricus-lepiota.data"), 0),
    "car": lambda require: split_uci(require("car/car.data"), 6),
    "nursery": lambda require: split_uci(require("nursery/nursery.data"), 8),
    "votes": lambda require: split_uci(require("votes/house-votes-84.data"), 0),
    "adult": adult,  # canonical split: adult.data / adult.test
}


@pytest.mark.parametrize("name", DATASETS)
def test_real_data_matches_sklearn(name):
    X_train, X_test, y_train, y_test = DATASETS[name](require_data)
    # The encoder is fitted on the training part only (as a pipeline would);
    # test rows with a category never seen in training are dropped for the
    # comparison with scikit-learn, which cannot score them.
    encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    codes_train = encoder.fit_transform(X_train)
    codes_test = encoder.transform(X_test)
    known = (codes_test >= 0).all(axis=1)
    assert known.mean() > 0.99

    theirs = sk_nb.CategoricalNB().fit(codes_train, y_train)
    ours = fastnb.CategoricalNB().fit(codes_train, y_train)
    assert_agrees(ours, theirs, codes_test[known], tol(np.float64))
    assert_array_equal(
        ours.predict(codes_test[known]), theirs.predict(codes_test[known])
    )

    # On the raw strings, no encoder: the same model, also for categories
    # never seen in training (which score as a code past the end).
    raw = fastnb.CategoricalNB().fit(X_train, y_train)
    assert_same_by_value(raw, theirs, encoder.categories_, tol(np.float64))
    assert_array_equal(raw.predict(X_test[known]), theirs.predict(codes_test[known]))
    assert_allclose(
        raw.predict_proba(X_test[known]),
        theirs.predict_proba(codes_test[known]),
        rtol=tol(np.float64),
        atol=1e-300,
    )
    # These test sets hold no unseen category: make some.
    X_test = X_test.copy()
    X_test[::7, 0] = "never seen"
    X_test[::11, -1] = "never seen either"
    codes_test = encoder.transform(X_test)
    past_end = np.where(codes_test >= 0, codes_test, ours.n_categories_)
    assert_array_equal(raw.predict(X_test), ours.predict(past_end))
    assert_allclose(
        raw.predict_joint_log_proba(X_test),
        ours.predict_joint_log_proba(past_end),
        rtol=tol(np.float64),
    )


def test_car_accuracy_from_readme():
    # README: car, OrdinalEncoder fitted on the training part, CategoricalNB
    # defaults, stratified 75/25 split with random_state=42: .8472.
    X_train, X_test, y_train, y_test = split_uci(require_data("car/car.data"), 6)
    encoder = OrdinalEncoder().fit(X_train)
    model = fastnb.CategoricalNB().fit(encoder.transform(X_train), y_train)
    accuracy = model.score(encoder.transform(X_test), y_test)
    assert round(accuracy, 4) == 0.8472
    theirs = sk_nb.CategoricalNB().fit(encoder.transform(X_train), y_train)
    assert round(theirs.score(encoder.transform(X_test), y_test), 4) == 0.8472
    assert fastnb.CategoricalNB().fit(X_train, y_train).score(X_test, y_test) == (
        accuracy
    )


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_dataframe_of_codes_fits_as_its_array(dtype):
    # A frame of codes of one dtype is read as its own array (F order),
    # not column by column: the model of the array, bit for bit.
    rng = np.random.default_rng(9)
    X = rng.integers(0, 6, size=(3000, 7)).astype(dtype)
    y = rng.integers(0, 3, 3000)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(7)])
    weights = rng.random(3000)
    from_frame = fastnb.CategoricalNB().fit(frame, y, sample_weight=weights)
    from_array = fastnb.CategoricalNB().fit(X, y, sample_weight=weights)
    assert_array_equal(from_frame.feature_names_in_, frame.columns)
    for got, expected in zip(
        from_frame.category_count_, from_array.category_count_, strict=True
    ):
        assert_array_equal(got, expected)
    assert_array_equal(
        from_frame.predict_log_proba(frame), from_array.predict_log_proba(X)
    )


def test_dataframe_of_float_codes_with_nan():
    rng = np.random.default_rng(10)
    X = rng.integers(0, 4, size=(500, 3)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 2, 500)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"in columns \['a', 'b', 'c'\]"):
        fastnb.CategoricalNB().fit(frame, y)
    ignoring = fastnb.CategoricalNB(missing="ignore")
    assert_array_equal(
        ignoring.fit(frame, y).predict_proba(frame),
        fastnb.CategoricalNB(missing="ignore").fit(X, y).predict_proba(X),
    )


@pytest.mark.parametrize("missing", [None, np.nan])
def test_missing_raw_values_are_named(missing):
    frame = pd.DataFrame(
        {"sky": ["sun", "rain", "sun"], "wind": ["low", "high", "low"]}
    )
    frame.loc[1, "wind"] = missing
    message = r"Input X contains missing values \(NaN or None\) in columns \['wind'\]"
    with pytest.raises(ValueError, match=message):
        fastnb.CategoricalNB().fit(frame, [0, 1, 0])
    with pytest.raises(ValueError, match=r"in columns \[1\]"):
        fastnb.CategoricalNB().fit(frame.to_numpy(dtype=object), [0, 1, 0])
    model = fastnb.CategoricalNB().fit(frame.fillna("calm"), [0, 1, 0])
    with pytest.raises(ValueError, match=message):
        model.predict(frame)


# ---------------------------------------------------------------------------
# Missing values (missing="ignore")
# ---------------------------------------------------------------------------

MISSING_CONTAINERS = ("dense_c", "dense_f", "csr", "csc", "strings", "frame")


def missing_case(container, seed=0, share=0.25):
    """Data with missing values in every feature, as ``container`` holds them.

    Returns ``(X, columns, y, sample_weight)``: X as given to the model;
    ``columns`` its values per feature as 1-D arrays (float codes with NaN,
    or objects with None and NaN), for fits on a feature's observed rows.
    Row 0 is missing in every feature, and feature 0 is missing in every
    row of the first class ("ant").
    """
    X, y, sample_weight = make_codes(LABELS["5 str"], seed=seed)
    rng = np.random.default_rng(seed + 1)
    absent = rng.random(X.shape) < share
    absent[0] = True
    absent[:, 0] |= y == "ant"
    codes = np.where(absent, np.nan, X.astype(np.float64))
    if container in ("strings", "frame"):
        values = np.array([f"v{code}" for code in X.ravel()], dtype=object)
        values = values.reshape(X.shape)
        # None and NaN both stand for a missing value.
        values[absent] = None
        values[absent & (rng.random(X.shape) < 0.5)] = np.nan
        if container == "strings":
            return values, list(values.T), y, sample_weight
        # A frame: raw values, and a column of float codes with NaN.
        frame = pd.DataFrame({f"f{j}": values[:, j] for j in range(X.shape[1])})
        frame["f1"] = codes[:, 1]
        columns = list(values.T)
        columns[1] = codes[:, 1]
        return frame, columns, y, sample_weight
    if container in SPARSE:
        # NaN stored; zeros are not (an implicit zero is code 0).
        return (
            getattr(sp, f"{container}_matrix")(codes),
            list(codes.T),
            y,
            sample_weight,
        )
    return globals()[container](codes), list(codes.T), y, sample_weight


def is_missing(column):
    """Where a column of missing_case holds a missing value."""
    return np.array([v is None or v != v for v in column], dtype=bool)


def observed_rows_fit(column, y, sample_weight, **params):
    """A missing="error" fit on the rows where the feature is observed."""
    seen = ~is_missing(column)
    values = column[seen]
    values = values.astype(np.int64) if values.dtype.kind == "f" else values
    return fastnb.CategoricalNB(**params).fit(
        values[:, None], y[seen], sample_weight=sample_weight[seen]
    )


def dropping_reference(model, columns):
    """Each row's joint log-likelihood from the fitted attributes: log prior
    plus feature_log_prob_[j][class, code] over its observed features."""
    jll = np.tile(model.class_log_prior_, (len(columns[0]), 1))
    for j, column in enumerate(columns):
        seen = ~is_missing(column)
        if column.dtype == object:
            position = {v: i for i, v in enumerate(model.categories_[j].tolist())}
            codes = np.array([position[v] for v in column[seen]])
        else:
            codes = column[seen].astype(np.int64)
        jll[seen] += model.feature_log_prob_[j][:, codes].T
    return jll


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_values_left_out_of_each_feature(container):
    X, columns, y, weights = missing_case(container)
    model = fastnb.CategoricalNB(missing="ignore").fit(X, y, sample_weight=weights)
    rtol = tol(np.float64)
    for j, column in enumerate(columns):
        alone = observed_rows_fit(column, y, weights)
        assert_array_equal(model.categories_[j], alone.categories_[0])
        # Feature 0 is never seen in class "ant": a column of zeros for it.
        counts = model.category_count_[j]
        assert (counts[0] == 0).all() == (j == 0)
        # Its fit on feature 0's observed rows has no class "ant".
        classes = slice(1, None) if j == 0 else slice(None)
        assert_allclose(counts[classes], alone.category_count_[0], rtol=rtol)
        assert_allclose(
            model.feature_log_prob_[j][classes], alone.feature_log_prob_[0], rtol=rtol
        )
    # A missing value is never a category.
    for categories in model.categories_:
        assert not is_missing(np.asarray(categories, dtype=object)).any()
    assert_allclose(
        model.class_count_,
        np.bincount(np.searchsorted(model.classes_, y), weights=weights),
        rtol=rtol,
    )

    # Scores: the log prior plus the terms of the row's observed features.
    jll = model.predict_joint_log_proba(X)
    assert_allclose(jll, dropping_reference(model, columns), rtol=rtol)
    # Row 0 is missing in every feature: its log prior.
    assert_allclose(jll[0], model.class_log_prior_, rtol=rtol)
    assert jll.dtype == np.float64 and np.isfinite(jll).all()


def test_feature_missing_in_a_class_is_uniform_there():
    X, columns, y, weights = missing_case("dense_c")
    for alpha in (1.0, 0.0):
        model = fastnb.CategoricalNB(alpha=alpha, missing="ignore").fit(X, y)
        # Feature 0 is never seen in class "ant": 1 / n for every category.
        n = model.n_categories_[0]
        assert_allclose(model.feature_log_prob_[0][0], np.full(n, -np.log(n)))
        jll = model.predict_joint_log_proba(X)
        assert not np.isnan(jll).any()
        if alpha == 0.0:
            # Without smoothing other terms may be -inf, never NaN.
            assert np.isfinite(model.feature_log_prob_[0]).any()
        assert_allclose(jll, dropping_reference(model, columns), rtol=tol(np.float64))


def test_feature_never_observed_has_no_categories_and_no_term():
    X, y, _ = make_codes(LABELS["2 int"])
    X = X.astype(np.float64)
    X[:, 2] = np.nan
    model = fastnb.CategoricalNB(missing="ignore").fit(X, y)
    assert model.n_categories_[2] == 0 and len(model.categories_[2]) == 0
    assert model.feature_log_prob_[2].shape == (2, 0)
    without = fastnb.CategoricalNB().fit(np.delete(X, 2, axis=1).astype(int), y)
    # Any code of it at predict is unseen, with a term of 0.
    X_test = X.copy()
    X_test[:, 2] = 1
    expected = without.predict_joint_log_proba(np.delete(X, 2, axis=1).astype(int))
    assert_allclose(model.predict_joint_log_proba(X), expected, rtol=tol(np.float64))
    assert_allclose(
        model.predict_joint_log_proba(X_test), expected, rtol=tol(np.float64)
    )


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_values_against_the_reference(container):
    X, columns, y, weights = missing_case(container)
    ours = fastnb.CategoricalNB(alpha=0.5, missing="ignore")
    ours.fit(X, y, sample_weight=weights)
    oracle = fastnb.reference.CategoricalNB(alpha=0.5, missing="ignore")
    oracle.fit(X, y, sample_weight=weights)
    rtol = tol(np.float64)
    assert_same_list(ours.feature_log_prob_, oracle.feature_log_prob_, rtol)
    assert_same_list(ours.category_count_, oracle.category_count_, rtol)
    assert_allclose(
        ours.predict_joint_log_proba(X), oracle.predict_joint_log_proba(X), rtol=rtol
    )


@pytest.mark.parametrize("container", MISSING_CONTAINERS)
def test_missing_partial_fit_weights_and_merge_equal_one_fit(container):
    X, columns, y, weights = missing_case(container)
    whole = fastnb.CategoricalNB(missing="ignore").fit(X, y)
    rows = np.arange(len(y))
    parts = [rows[:30], rows[30:31], rows[31:]]

    def take(rows):
        return X.iloc[rows] if container == "frame" else X[rows]

    stepwise = fastnb.CategoricalNB(missing="ignore")
    for part in parts:
        stepwise.partial_fit(take(part), y[part], classes=np.unique(y))
    models = [
        fastnb.CategoricalNB(missing="ignore").fit(take(part), y[part])
        for part in parts
    ]
    merged = fastnb.merge(models)
    for other in (stepwise, merged):
        # partial_fit codes raw values in the order the batches bring them.
        assert_same_list(in_sorted_order(other), in_sorted_order(whole), 1e-12)
        assert_allclose(
            other.predict_joint_log_proba(X),
            whole.predict_joint_log_proba(X),
            rtol=tol(np.float64),
        )
    # Whole weights are repeated rows.
    repeats = np.random.default_rng(3).integers(0, 3, size=len(y))
    weighted = fastnb.CategoricalNB(missing="ignore")
    weighted.fit(X, y, sample_weight=repeats)
    repeated = fastnb.CategoricalNB(missing="ignore")
    repeated.fit(take(np.repeat(rows, repeats)), np.repeat(y, repeats))
    assert_same_list(in_sorted_order(weighted), in_sorted_order(repeated), 1e-12)


def in_sorted_order(model):
    """Each feature's counts and log probabilities, categories sorted."""
    tables = []
    for categories, counts, log_probs in zip(
        model.categories_, model.category_count_, model.feature_log_prob_, strict=True
    ):
        order = np.argsort(np.asarray(categories), kind="stable")
        tables += [counts[:, order], log_probs[:, order]]
    return tables


@pytest.mark.parametrize("container", SPARSE)
def test_missing_sparse_equals_dense(container):
    dense, columns, y, weights = missing_case("dense_c")
    X, _, _, _ = missing_case(container)
    ours = fastnb.CategoricalNB(missing="ignore").fit(X, y, sample_weight=weights)
    theirs = fastnb.CategoricalNB(missing="ignore")
    theirs.fit(dense, y, sample_weight=weights)
    assert_same_list(ours.category_count_, theirs.category_count_, 1e-12)
    for X_test in (X, sp.csr_matrix(dense), dense):
        assert_allclose(
            ours.predict_joint_log_proba(X_test),
            theirs.predict_joint_log_proba(dense),
            rtol=tol(np.float64),
        )
    # A stored NaN is missing, an implicit zero code 0, a stored 0 code 0.
    row = sp.csr_matrix(np.array([[np.nan, 0, 0, 0, 0]]))
    row_zero = sp.csr_matrix(
        (np.array([0.0]), np.array([0]), np.array([0, 1])), shape=(1, 5)
    )
    dense_row = np.array([[np.nan, 0, 0, 0, 0]])
    assert_allclose(
        ours.predict_joint_log_proba(row), ours.predict_joint_log_proba(dense_row)
    )
    assert_allclose(
        ours.predict_joint_log_proba(row_zero),
        ours.predict_joint_log_proba(np.zeros((1, 5))),
    )


@pytest.mark.parametrize("container", ["dense_c", "csr", "csc"])
def test_missing_float32_codes_and_int64_indices(container):
    X, _, y, weights = missing_case("dense_c")
    expected = fastnb.CategoricalNB(missing="ignore").fit(X, y, sample_weight=weights)
    X32 = as_container(X.astype(np.float32), container)
    if container in SPARSE:
        X32 = with_index_dtype(X32, np.int64)
    ours = fastnb.CategoricalNB(missing="ignore").fit(X32, y, sample_weight=weights)
    assert_same_list(ours.category_count_, expected.category_count_, 1e-12)
    assert_allclose(
        ours.predict_joint_log_proba(X32),
        expected.predict_joint_log_proba(X),
        rtol=tol(np.float64),
    )


def test_missing_with_min_categories_and_unseen_categories():
    X, columns, y, _ = missing_case("dense_c")
    model = fastnb.CategoricalNB(missing="ignore", min_categories=9).fit(X, y)
    assert (model.n_categories_ == 9).all()
    assert_allclose(
        model.predict_joint_log_proba(X),
        dropping_reference(model, columns),
        rtol=tol(np.float64),
    )
    # A code past every category scores as unseen, beside a missing value.
    X_test = np.array([[12.0, np.nan, 1, 0, 2]])
    unseen = model.class_log_prior_ + sum(
        model.predict_joint_log_proba(np.where(np.arange(5) == j, X_test, np.nan))[0]
        - model.class_log_prior_
        for j in (0, 2, 3, 4)
    )
    assert_allclose(model.predict_joint_log_proba(X_test)[0], unseen, rtol=1e-12)
    strings, _, y, _ = missing_case("strings")
    raw = fastnb.CategoricalNB(missing="ignore").fit(strings, y)
    row = np.array([["never seen", None, "v1", np.nan, "v0"]], dtype=object)
    assert np.isfinite(raw.predict_joint_log_proba(row)).all()


@pytest.mark.parametrize("container", ["dense_c", "csr", "strings"])
def test_missing_contributions_add_up(container):
    X, _, y, _ = missing_case(container)
    model = fastnb.CategoricalNB(missing="ignore").fit(X, y)
    terms, intercept = model.contributions(X)
    total = np.asarray(terms.sum(axis=1)).reshape(len(y), -1) + intercept
    # The scores less a number of each row, the same in every class.
    rest = model.predict_joint_log_proba(X) - total
    assert_allclose(rest - rest[:, :1], 0.0, atol=1e-10)
    pair = model.contributions(X, classes=tuple(model.classes_[:2]))
    jll = model.predict_joint_log_proba(X)
    assert_allclose(
        np.asarray(pair.terms.sum(axis=1)).ravel() + pair.intercept,
        jll[:, 0] - jll[:, 1],
        rtol=1e-10,
        atol=1e-10,
    )
    # A row missing in every feature: the intercept plus its terms is its prior.
    assert_allclose(total[0], model.class_log_prior_, atol=1e-10)


BAD_CODES_WITH_MISSING = {
    "negative": (-1.0, "Negative values"),
    "fractional": (1.5, "non-integer codes"),
    "infinite": (np.inf, "infinity"),
}


@pytest.mark.parametrize("container", ["dense_c", "csr", "csc"])
@pytest.mark.parametrize("bad", BAD_CODES_WITH_MISSING)
def test_missing_ignore_still_refuses_bad_codes(container, bad):
    value, message = BAD_CODES_WITH_MISSING[bad]
    X, columns, y, _ = missing_case("dense_c")
    model = fastnb.CategoricalNB(missing="ignore").fit(X, y)
    before = copy.deepcopy(model)
    codes = np.asarray(X).copy()
    codes[7, 3] = value
    bad_X = (
        codes if container == "dense_c" else getattr(sp, f"{container}_matrix")(codes)
    )
    with pytest.raises(ValueError, match=message):
        fastnb.CategoricalNB(missing="ignore").fit(bad_X, y)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(bad_X, y)
    # A failed fit leaves the model as it was.
    assert_same_state(model, before)
    with pytest.raises(ValueError, match=message):
        model.predict(bad_X)


def test_missing_error_keeps_its_messages():
    X, _, y, _ = missing_case("dense_c")
    with pytest.raises(ValueError, match="Input X contains NaN"):
        fastnb.CategoricalNB().fit(X, y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        fastnb.CategoricalNB().fit(sp.csr_matrix(X), y)
    model = fastnb.CategoricalNB().fit(np.nan_to_num(X).astype(int), y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        model.predict(X)
    strings, _, y, _ = missing_case("strings")
    with pytest.raises(ValueError, match=r"missing values \(NaN or None\) in columns"):
        fastnb.CategoricalNB().fit(strings, y)
    frame = pd.DataFrame({"a": pd.array(["x", None, "y"], dtype="string")})
    with pytest.raises(ValueError, match=r"in columns \['a'\]"):
        fastnb.CategoricalNB().fit(frame, [0, 1, 1])
    # pandas' NA is a missing value to "ignore".
    model = fastnb.CategoricalNB(missing="ignore").fit(frame, [0, 1, 1])
    assert_array_equal(model.categories_[0], ["x", "y"])
    assert_allclose(model.category_count_[0], [[1, 0], [0, 1]])


def test_missing_state_round_trips_and_is_checked(tmp_path):
    X, _, y, weights = missing_case("strings")
    model = fastnb.CategoricalNB(missing="ignore").fit(X, y, sample_weight=weights)
    for copy_ in (
        fastnb.load(save_to(model, tmp_path / "model.fnb")),
        fastnb.from_state(fastnb.get_state(model)),
    ):
        assert copy_.missing == "ignore"
        assert_same_list(copy_.feature_log_prob_, model.feature_log_prob_, 0.0)
        assert_array_equal(
            copy_.predict_joint_log_proba(X), model.predict_joint_log_proba(X)
        )
    state = fastnb.get_state(model)
    # Counts below the class counts are what "ignore" fits; above, never.
    counts = state.statistics["category_count"]
    first = counts[: len(state.statistics["categories"][0])]
    assert (first.sum(axis=0) < state.statistics["class_count"]).all()
    with pytest.raises(ValueError, match="does not add up to class_count"):
        fastnb.from_state(
            dataclass_replace(state, params={**state.params, "missing": "error"})
        )
    too_many = counts.copy()
    too_many[0] += state.statistics["class_count"]
    with pytest.raises(ValueError, match="more than class_count"):
        fastnb.from_state(
            dataclass_replace(
                state, statistics={**state.statistics, "category_count": too_many}
            )
        )


def save_to(model, path):
    fastnb.save(model, path)
    return path


def dataclass_replace(state, **changes):
    import dataclasses

    return dataclasses.replace(state, **changes)


def test_adult_with_question_marks_as_missing():
    # bench/bench_missing.py prints these figures (CategoricalNB): Adult's
    # categorical columns, its own train/test files, '?' as missing.
    X_train, X_test, y_train, y_test = adult(require_data)
    X_train, X_test = X_train.copy(), X_test.copy()
    X_train[X_train == "?"] = None
    X_test[X_test == "?"] = None
    ignore = fastnb.CategoricalNB(missing="ignore").fit(X_train, y_train)
    assert round(ignore.score(X_test, y_test), 4) == 0.7972
    assert all("?" not in c and None not in c.tolist() for c in ignore.categories_)
    # Dropping the rows with a '?': in training, and in testing (such a
    # row cannot be scored), where "ignore" does about as well.
    complete_train = ~pd.isna(X_train).any(axis=1)
    complete_test = ~pd.isna(X_test).any(axis=1)
    dropped = fastnb.CategoricalNB().fit(
        X_train[complete_train], y_train[complete_train]
    )
    X_complete, y_complete = X_test[complete_test], y_test[complete_test]
    assert round(dropped.score(X_complete, y_complete), 4) == 0.7940
    assert round(ignore.score(X_complete, y_complete), 4) == 0.7936
    # Each column's most frequent training value in place of a '?'.
    imputed_train, imputed_test = X_train.copy(), X_test.copy()
    for j in range(X_train.shape[1]):
        mode = pd.Series(X_train[:, j]).mode()[0]
        imputed_train[pd.isna(imputed_train[:, j]), j] = mode
        imputed_test[pd.isna(imputed_test[:, j]), j] = mode
    imputed = fastnb.CategoricalNB().fit(imputed_train, y_train)
    assert round(imputed.score(imputed_test, y_test), 4) == 0.7958
    # missing="error" names the columns holding them.
    with pytest.raises(ValueError, match=r"in columns \[0, 3, 7\]"):
        fastnb.CategoricalNB().fit(X_train, y_train)


# distinct_values: numpy.unique's answer for an object column, by hashing
# (pandas' factorize when pandas is loaded, a dict without it).
OBJECT_COLUMNS = st.one_of(
    st.lists(st.text(alphabet="abc", max_size=3), min_size=1, max_size=40),
    st.lists(st.integers(-3, 3), min_size=1, max_size=40),
    st.lists(
        st.tuples(st.sampled_from("xy"), st.integers(0, 2)), min_size=1, max_size=40
    ),
)


@pytest.mark.parametrize("pandas_loaded", [True, False], ids=["pandas", "no pandas"])
@settings(max_examples=60, deadline=None)
@given(values=OBJECT_COLUMNS)
def test_distinct_values_are_numpy_unique(values, pandas_loaded):
    column = np.empty(len(values), dtype=object)
    column[:] = values
    hidden = {} if pandas_loaded else {"pandas": None}
    with mock.patch.dict(sys.modules, hidden):
        distinct, inverse = fastnb._categorical.distinct_values(column, 0)
    expected, expected_inverse = np.unique(column, return_inverse=True)
    assert distinct.dtype == object and len(distinct) == len(expected)
    assert distinct.tolist() == expected.tolist()
    assert_array_equal(inverse, expected_inverse.reshape(-1))


@pytest.mark.parametrize("pandas_loaded", [True, False], ids=["pandas", "no pandas"])
@pytest.mark.parametrize(
    "values, message",
    [
        (["fig", 1, "fig"], "feature 3 mixes values that cannot be compared"),
        ([["fig"], ["pear"]], r"feature 3 holds values that cannot be categories"),
    ],
    ids=["unordered", "unhashable"],
)
def test_object_values_that_cannot_be_categories(values, message, pandas_loaded):
    X = np.empty((len(values), 4), dtype=object)
    X[:] = "a"
    for i, value in enumerate(values):
        X[i, 3] = value
    hidden = {} if pandas_loaded else {"pandas": None}
    model = fastnb.CategoricalNB()
    with mock.patch.dict(sys.modules, hidden), pytest.raises(ValueError, match=message):
        model.fit(X, [0, 1, 0][: len(values)])
    assert not hasattr(model, "classes_")
