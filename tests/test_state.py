"""The state protocol: get_state, from_state, combine_states, declared hooks."""

import copy

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastnb
from fastnb import ModelState, combine_states, from_state, get_state
from fastnb._base import BaseNB
from fastnb._state import same_value

from _helpers import CASE_IDS, CASES, N_FEATURES, take_rows

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

N_SAMPLES = 90
CASE = {case.id: case for case in CASES}


def data(case_id, seed=0):
    """A new estimator of the case, its X and y (labels "a", "b", "c")."""
    case = CASE[case_id]
    X, y, _ = case.make(n_samples=N_SAMPLES, seed=seed)
    return case.estimator(), X, y


def assert_same_statistics(got, expected, rtol=0.0):
    assert got.keys() == expected.keys()
    for key in expected:
        if isinstance(expected[key], list):
            assert len(got[key]) == len(expected[key]), key
            for a, b in zip(got[key], expected[key], strict=True):
                assert_array_equal(a, b, err_msg=key)
        elif isinstance(expected[key], np.dtype):
            assert got[key] == expected[key], key
        elif rtol:
            assert_allclose(got[key], expected[key], rtol=rtol, atol=1e-12, err_msg=key)
        else:
            assert_array_equal(got[key], expected[key], err_msg=key)


@pytest.mark.parametrize("case", CASE_IDS)
def test_from_state_rebuilds_the_model(case):
    estimator, X, y = data(case)
    model = estimator.fit(X, y)
    state = get_state(model)
    assert state.estimator == type(model).__name__
    assert state.n_features_in == model.n_features_in_
    rebuilt = from_state(state)
    assert type(rebuilt) is type(model)
    assert same_value(rebuilt.get_params(), model.get_params())
    assert_array_equal(rebuilt.classes_, model.classes_)
    assert_same_statistics(get_state(rebuilt).statistics, state.statistics)
    for method in ("predict_joint_log_proba", "predict_proba", "predict"):
        assert_array_equal(getattr(rebuilt, method)(X), getattr(model, method)(X))


@pytest.mark.parametrize("case", CASE_IDS)
def test_state_is_a_copy(case):
    estimator, X, y = data(case)
    model = estimator.fit(X, y)
    expected = model.predict_proba(X)
    state = get_state(model)
    state.statistics["class_count"][:] = 1e6
    assert_array_equal(model.predict_proba(X), expected)
    rebuilt = from_state(get_state(model))
    get_state(model).classes[:] = model.classes_[0]
    assert_array_equal(rebuilt.predict_proba(X), expected)


@pytest.mark.parametrize("case", CASE_IDS)
def test_rebuilt_model_goes_on_with_partial_fit(case):
    estimator, X, y = data(case)
    half = np.arange(N_SAMPLES) < N_SAMPLES // 2
    classes = np.unique(y)
    model = copy.deepcopy(estimator).partial_fit(take_rows(X, half), y[half], classes)
    rebuilt = from_state(get_state(model))
    model.partial_fit(take_rows(X, ~half), y[~half])
    rebuilt.partial_fit(take_rows(X, ~half), y[~half])
    assert_same_statistics(get_state(rebuilt).statistics, get_state(model).statistics)
    assert_array_equal(rebuilt.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("case", CASE_IDS)
def test_combined_states_equal_one_fit(case):
    estimator, X, y = data(case)
    first = np.arange(N_SAMPLES) < 50  # holds every category (first_batch)
    whole = copy.deepcopy(estimator).fit(X, y)
    a = copy.deepcopy(estimator).fit(take_rows(X, first), y[first])
    b = copy.deepcopy(estimator).fit(take_rows(X, ~first), y[~first])
    a_state, b_state = get_state(a), get_state(b)
    a_before, b_before = copy.deepcopy(a_state), copy.deepcopy(b_state)
    combined = from_state(combine_states(a_state, b_state))
    assert_same_statistics(a_state.statistics, a_before.statistics)
    assert_same_statistics(b_state.statistics, b_before.statistics)
    assert_array_equal(combined.classes_, whole.classes_)
    if case in ("CategoricalNB-strings", "MixedNB-frame"):
        # The categories come in the order the two fits met them (one fit
        # sorts them all), so the tables' rows may differ in order.
        assert_allclose(
            combined.predict_proba(X), whole.predict_proba(X), rtol=1e-12, atol=1e-15
        )
        return
    assert_same_statistics(
        get_state(combined).statistics, get_state(whole).statistics, rtol=1e-12
    )
    assert_allclose(
        combined.predict_joint_log_proba(X),
        whole.predict_joint_log_proba(X),
        rtol=1e-12,
    )


@pytest.mark.parametrize("case", CASE_IDS)
def test_combined_states_unite_the_classes(case):
    estimator, X, y = data(case)
    first = y != "c"  # the first model never sees class "c", the second not "a"
    second = y != "a"
    a = copy.deepcopy(estimator).fit(take_rows(X, first), y[first])
    b = copy.deepcopy(estimator).fit(take_rows(X, second), y[second])
    combined = from_state(combine_states(get_state(a), get_state(b)))
    both = np.concatenate([np.flatnonzero(first), np.flatnonzero(second)])
    whole = copy.deepcopy(estimator).fit(take_rows(X, both), y[both])
    assert_array_equal(combined.classes_, ["a", "b", "c"])
    assert_allclose(
        combined.predict_proba(X), whole.predict_proba(X), rtol=1e-12, atol=1e-15
    )


def test_combined_categories_keep_the_first_order_then_the_new():
    X = np.array([["sun"], ["rain"], ["sun"], ["fog"], ["hail"], ["rain"]])
    y = np.array([0, 1, 0, 1, 0, 1])
    a = fastnb.CategoricalNB().fit(X[:3], y[:3])
    b = fastnb.CategoricalNB().fit(X[3:], y[3:])
    state = combine_states(get_state(a), get_state(b))
    assert state.statistics["categories"][0].tolist() == ["rain", "sun", "fog", "hail"]
    # rows: rain, sun, fog, hail; columns: classes 0, 1
    assert_array_equal(
        state.statistics["category_count"], [[0, 2], [2, 0], [0, 1], [1, 0]]
    )


def fitted_state(case="MultinomialNB"):
    """The state of the case's estimator fitted on 3 classes, N_FEATURES columns."""
    estimator, X, y = data(case)
    return get_state(estimator.fit(X, y))


def edited(state, **changes):
    statistics = changes.pop("statistics", None)
    fields = {**vars(state), **changes}
    if statistics is not None:
        fields["statistics"] = {**state.statistics, **statistics}
    return ModelState(**fields)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"estimator": "os.system"}, "Unknown estimator"),
        ({"params": {"alpha": 1.0, "beta": 2}}, "not MultinomialNB's parameters"),
        ({"params": {"alpha": -1.0}}, "alpha"),
        ({"classes": np.array(["b", "a", "c"])}, "unique and sorted"),
        ({"classes": np.array(["a", "a", "c"])}, "unique and sorted"),
        ({"classes": np.array([], dtype=str)}, "non-empty"),
        ({"n_features_in": 0}, "at least 1"),
        ({"n_features_in": N_FEATURES - 1}, "shape"),
        ({"n_features_in": 2.5}, "integer"),
        ({"feature_names_in": np.array(["x"])}, "feature_names_in"),
        ({"statistics": {"feature_count": np.zeros((3, N_FEATURES - 1))}}, "shape"),
        ({"statistics": {"feature_count": -np.ones((3, N_FEATURES))}}, "negative"),
        ({"statistics": {"class_count": np.array([1.0, np.nan, 2.0])}}, "NaN"),
        ({"statistics": {"class_count": np.array([1, 2, 3])}}, "float64"),
        ({"statistics": {"class_count": [1.0, 2.0, 3.0]}}, "float64"),
    ],
)
def test_from_state_refuses_a_bad_state(change, message):
    with pytest.raises(ValueError, match=message):
        from_state(edited(fitted_state(), **change))


def test_from_state_refuses_a_missing_statistic():
    state = fitted_state()
    statistics = dict(state.statistics)
    del statistics["feature_count"]
    with pytest.raises(ValueError, match="'feature_count' is lacking"):
        from_state(ModelState(**{**vars(state), "statistics": statistics}))


@pytest.mark.parametrize("case", CASE_IDS)
def test_from_state_refuses_a_statistic_the_model_does_not_keep(case):
    # Every estimator names the statistics it keeps; one more is refused
    # (GaussianNB and CategoricalNB used to take it and keep it).
    state = fitted_state(case)
    with pytest.raises(ValueError, match="'extra' is not one of them"):
        from_state(edited(state, statistics={"extra": np.zeros(3)}))
    if case.startswith("MixedNB"):
        family = next(k.split("/")[0] for k in state.statistics if "/" in k)
        with pytest.raises(ValueError, match=f"'{family}/extra' is not one"):
            from_state(edited(state, statistics={f"{family}/extra": np.zeros(3)}))


@pytest.mark.parametrize(
    ("case", "statistics", "message"),
    [
        ("GaussianNB", {"dtype": np.dtype(np.int64)}, "float32 or float64"),
        ("GaussianNB", {"ssd": -np.ones((3, N_FEATURES))}, "negative"),
        ("CategoricalNB-codes", {"categories": [np.arange(5)] * 2}, "list of 8"),
        ("CategoricalNB-codes", {"category_count": np.zeros((5, 3))}, "shape"),
        ("MixedNB-frame", {"poisson/columns": np.array([3])}, "exactly once"),
        ("MixedNB-frame", {"poisson/columns": np.array([5])}, "positions below 5"),
        ("MixedNB-frame", {"mystery/columns": np.array([0])}, "'mystery/col"),
        (
            "MixedNB-frame",
            {"poisson/class_count": np.array([1.0, 2.0, 3.0])},
            "differs from 'class_count'",
        ),
    ],
)
def test_from_state_refuses_inconsistent_statistics(case, statistics, message):
    with pytest.raises(ValueError, match=message):
        from_state(edited(fitted_state(case), statistics=statistics))


def with_value(key, index, value):
    """A change of the statistic ``key``: ``value`` at ``index``."""

    def change(statistics):
        array = statistics[key].copy()
        array[index] = value
        return {key: array}

    return change


def with_categories(feature, how):
    """A change of feature's categories to ``how(categories)``."""

    def change(statistics):
        categories = list(statistics["categories"])
        categories[feature] = how(categories[feature].copy())
        return {"categories": categories}

    return change


@pytest.mark.parametrize(
    ("case", "change", "message"),
    [
        (
            "MultinomialNB",
            with_value("class_count", 0, 0.0),
            "'feature_count' has non-zero values for a class of zero class_count",
        ),
        (
            "BernoulliNB",
            with_value("feature_count", (1, 2), 1e6),
            "'feature_count' counts more than class_count",
        ),
        (
            "GaussianNB",
            with_value("class_count", 2, 0.0),
            "'mean' has non-zero values for a class of zero class_count",
        ),
        ("GaussianNB", with_value("mean", (0, 3), 1e200), "'mean' holds means no"),
        (
            "GaussianNB",
            with_value("sample_mean", 1, -1e160),
            "'sample_mean' holds means no",
        ),
        (
            "CategoricalNB-codes",
            with_categories(2, lambda codes: codes[::-1]),
            "'categories' of feature 2 must be the codes 0 to",
        ),
        (
            "CategoricalNB-codes",
            with_categories(0, lambda codes: codes - 1),
            "'categories' of feature 0 must be the codes 0 to",
        ),
        (
            "CategoricalNB-codes",
            with_categories(1, lambda codes: 2 * codes),
            "'categories' of feature 1 must be the codes 0 to",
        ),
        (
            "CategoricalNB-strings",
            with_categories(1, lambda values: np.full_like(values, values[0])),
            "'categories' of feature 1 holds a value twice",
        ),
        (
            "CategoricalNB-codes",
            with_value("category_count", (4, 1), 100.0),
            "'category_count' of feature 1 does not add up to class_count",
        ),
        (
            "MixedNB-frame",
            with_value("poisson/feature_count", (0, 0), -1.0),
            "negative",
        ),
    ],
)
def test_from_state_refuses_statistics_no_fit_makes(case, change, message):
    """Statistics that disagree with each other, as no fit leaves them."""
    state = fitted_state(case)
    with pytest.raises(ValueError, match=message):
        from_state(edited(state, statistics=change(state.statistics)))


def test_from_state_takes_only_a_model_state():
    with pytest.raises(TypeError, match="ModelState"):
        from_state({"estimator": "MultinomialNB"})


def test_get_state_takes_only_a_fitted_fastnb_estimator():
    from sklearn.exceptions import NotFittedError
    from sklearn.naive_bayes import MultinomialNB

    with pytest.raises(TypeError, match="fastnb estimator"):
        get_state(MultinomialNB())
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        get_state(fastnb.MultinomialNB())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"estimator": "PoissonNB"}, "Cannot combine a MultinomialNB with a PoissonNB"),
        ({"params": {"alpha": 2.0}}, "different parameters"),
        ({"n_features_in": 5}, f"{N_FEATURES} and 5 features"),
        ({"feature_names_in": np.array(list("abcdefgh"))}, "feature names"),
    ],
)
def test_combine_states_refuses_models_that_differ(change, message):
    state = fitted_state()
    params = {**state.params, **change.pop("params", {})}
    with pytest.raises(ValueError, match=message):
        combine_states(state, edited(state, params=params, **change))


@pytest.mark.parametrize("missing", ["error", "ignore"])
@pytest.mark.parametrize("case", CASE_IDS)
def test_declared_statistics_are_the_fitted_ones(case, missing):
    # The declarations, from which the checks, the empty state, the class
    # axes and the sums come, name every statistic a fit keeps, in its order,
    # with its number of axes and its classes on the axis declared.
    estimator, X, y = data(case)
    model = estimator.set_params(missing=missing).fit(X, y)
    statistics = model._statistics
    declared = model._declared_statistics(statistics)
    assert [statistic.name for statistic in declared] == list(statistics)
    n_classes = len(model.classes_)
    for statistic in declared:
        value = statistics[statistic.name]
        if statistic.kind == "array":
            assert value.ndim == len(statistic.shape), statistic.name
        if statistic.class_axis is not None:
            assert value.shape[statistic.class_axis] == n_classes, statistic.name
    combined = model._combine_statistics(statistics, statistics)
    assert list(combined) == list(statistics)
    for statistic in declared:
        if statistic.combine == "sum":
            assert_array_equal(combined[statistic.name], 2 * statistics[statistic.name])


def test_a_family_must_declare_every_hook():
    class Incomplete(BaseNB):
        def _check_batch(self, X, y, reset):
            return X, y

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


def test_docstring_examples():
    import doctest

    from fastnb import _state

    failures, tried = doctest.testmod(_state, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


# -- merge ----------------------------------------------------------------------


def thirds(estimator, X, y):
    """The estimator fitted on each third of the rows (every third row)."""
    return [
        copy.deepcopy(estimator).fit(take_rows(X, part), y[part])
        for part in (np.arange(len(y)) % 3 == k for k in range(3))
    ]


@pytest.mark.parametrize("case", CASE_IDS)
def test_merge_equals_one_fit(case):
    estimator, X, y = data(case)
    whole = copy.deepcopy(estimator).fit(X, y)
    models = thirds(estimator, X, y)
    before = [get_state(model) for model in models]
    merged = fastnb.merge(models)
    assert type(merged) is type(whole)
    assert same_value(merged.get_params(), whole.get_params())
    assert_array_equal(merged.classes_, whole.classes_)
    # Raw categories too come sorted, as one fit sorts them.
    assert_same_statistics(
        get_state(merged).statistics, get_state(whole).statistics, rtol=1e-12
    )
    for method in ("predict_joint_log_proba", "predict_proba"):
        assert_allclose(
            getattr(merged, method)(X), getattr(whole, method)(X), rtol=1e-12
        )
    assert_array_equal(merged.predict(X), whole.predict(X))
    for model, state in zip(models, before, strict=True):
        assert_same_statistics(get_state(model).statistics, state.statistics)
        assert_array_equal(model.classes_, state.classes)


@pytest.mark.parametrize(
    "name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB"]
)
def test_merged_counts_are_exact(name):
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(300, 6)).astype(np.float64)
    y = rng.integers(0, 4, size=300)
    weights = rng.integers(1, 4, size=300).astype(np.float64)
    estimator = getattr(fastnb, name)()
    models = [
        copy.deepcopy(estimator).fit(X[k::4], y[k::4], sample_weight=weights[k::4])
        for k in range(4)
    ]
    whole = copy.deepcopy(estimator).fit(X, y, sample_weight=weights)
    assert_same_statistics(
        get_state(fastnb.merge(models)).statistics, get_state(whole).statistics
    )


@pytest.mark.parametrize("case", CASE_IDS)
def test_merge_unites_classes_each_model_saw_one_of(case):
    estimator, X, y = data(case)
    order = np.argsort(y, kind="stable")
    X, y = take_rows(X, order), y[order]
    models = [
        copy.deepcopy(estimator).fit(take_rows(X, y == label), y[y == label])
        for label in ("c", "a", "b")
    ]
    merged = fastnb.merge(models)
    whole = copy.deepcopy(estimator).fit(X, y)
    assert_array_equal(merged.classes_, ["a", "b", "c"])
    assert_allclose(
        merged.predict_proba(X), whole.predict_proba(X), rtol=1e-12, atol=1e-15
    )


def test_merge_sorts_categories_that_partial_fit_appended():
    X = np.array([["sun"], ["rain"], ["sun"], ["fog"], ["hail"], ["rain"]])
    y = np.array([0, 1, 0, 1, 0, 1])
    model = fastnb.CategoricalNB().partial_fit(X[:3], y[:3], classes=[0, 1])
    model.partial_fit(X[3:], y[3:])
    assert model.categories_[0].tolist() == ["rain", "sun", "fog", "hail"]
    merged = fastnb.merge([model])
    assert merged.categories_[0].tolist() == ["fog", "hail", "rain", "sun"]
    # rows: fog, hail, rain, sun; columns: classes 0, 1
    assert_array_equal(merged.category_count_[0], [[0, 1, 0, 2], [1, 0, 2, 0]])
    assert_array_equal(merged.predict_proba(X), model.predict_proba(X))
    assert model.categories_[0].tolist() == ["rain", "sun", "fog", "hail"]


def test_merge_refuses_categories_that_cannot_be_ordered():
    words = fastnb.CategoricalNB().fit(np.array([["sun"], ["rain"]]), [0, 1])
    codes = fastnb.CategoricalNB().fit(np.array([[0], [1], [2]]), [0, 1, 1])
    with pytest.raises(ValueError, match="feature 0 mixes values"):
        fastnb.merge([words, codes])


def test_merge_refuses_models_that_differ():
    from sklearn.exceptions import NotFittedError
    from sklearn.naive_bayes import MultinomialNB

    X, y = np.array([[1.0, 2.0], [3.0, 0.0]]), [0, 1]
    model = fastnb.MultinomialNB().fit(X, y)
    cases = [
        ([], ValueError, "at least one fitted model"),
        ([model, fastnb.PoissonNB().fit(X, y)], ValueError, "with a PoissonNB"),
        ([model, fastnb.MultinomialNB(alpha=2.0).fit(X, y)], ValueError, "parameters"),
        ([model, fastnb.MultinomialNB().fit(X[:, :1], y)], ValueError, "features"),
        ([model, fastnb.MultinomialNB()], NotFittedError, "not fitted"),
        ([model, MultinomialNB().fit(X, y)], TypeError, "fastnb estimator"),
    ]
    named = [
        fastnb.MultinomialNB().fit(pd.DataFrame(X, columns=list(c)), y)
        for c in ("ab", "ba")
    ]
    cases.append((named, ValueError, "feature names"))
    for models, error, message in cases:
        with pytest.raises(error, match=message):
            fastnb.merge(models)
