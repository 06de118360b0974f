"""Arrays of array-API libraries as input (array-api-strict stands for them).

Whatever scikit-learn's ``array_api_dispatch`` says, such arrays are taken
in NumPy and give the model, and the outputs, that the same data in NumPy
gives. With dispatch on, the outputs come back in X's namespace and on its
device, and a model refuses X of another namespace than its fit's; with it
off, they are NumPy arrays. scikit-learn's own array-API checks run on every
estimator in test_estimator_checks.py (they need SCIPY_ARRAY_API=1, which
tests/conftest.py sets).
"""

import pickle

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_array_equal

import fastnb

from _helpers import CASES, OUTPUTS, assert_same_state

xp = pytest.importorskip("array_api_strict")

# The cases whose X is a float array (not raw strings or a DataFrame).
ARRAY_CASES = [
    pytest.param(case, id=case.id) for case in CASES if np.float64 in case.dtypes
]
CPU = xp.Device("CPU_DEVICE")
OTHER_DEVICE = xp.Device("device1")


def numeric_data(case, dtype=np.float64):
    """X of the case in ``dtype``, integer labels (a namespace holds no
    strings), positive weights."""
    X, y, weights = case.make(labels=(3, 5, 7))
    return np.ascontiguousarray(X, dtype=dtype), y, weights


def strict(*arrays, device=CPU):
    return [xp.asarray(array, device=device) for array in arrays]


def fitted_vars(model):
    """What a model holds, less the record of its fit's namespace."""
    return {k: v for k, v in vars(model).items() if k != "_fit_namespace"}


def back_to_numpy(array):
    """An output as NumPy, asserting it is an array-api-strict array."""
    assert isinstance(array, type(xp.asarray(0))), type(array)
    return np.from_dlpack(array)


@pytest.mark.parametrize("dispatch", [False, True], ids=["dispatch-off", "dispatch-on"])
@pytest.mark.parametrize("case", ARRAY_CASES)
def test_fit_and_outputs_match_numpy(case, dispatch):
    X, y, weights = numeric_data(case)
    expected = case.estimator().fit(X, y, sample_weight=weights)
    X_xp, y_xp, weights_xp = strict(X, y, weights)
    with sklearn.config_context(array_api_dispatch=dispatch):
        model = case.estimator().fit(X_xp, y_xp, sample_weight=weights_xp)
        outputs = {name: getattr(model, name)(X_xp) for name in (*OUTPUTS, "predict")}
        score = model.score(X_xp, y_xp, sample_weight=weights_xp)
    # The same statistics and tables, in NumPy (the fitted attributes stay
    # NumPy arrays), and outputs bit for bit.
    assert_same_state(model, expected, attributes=fitted_vars)
    for name, output in outputs.items():
        if dispatch:
            assert output.device == CPU, name
            output = back_to_numpy(output)
        else:
            assert type(output) is np.ndarray, name
        assert_array_equal(output, getattr(expected, name)(X), strict=True)
    assert isinstance(score, float)
    assert score == expected.score(X, y, sample_weight=weights)


@pytest.mark.parametrize("case", ARRAY_CASES)
def test_partial_fit_of_arrays_matches_numpy(case):
    X, y, weights = numeric_data(case)
    halves = slice(0, 30), slice(30, None)
    expected = case.estimator()
    model = case.estimator()
    for rows in halves:
        expected.partial_fit(X[rows], y[rows], [3, 5, 7], sample_weight=weights[rows])
        X_xp, y_xp, weights_xp, classes_xp = strict(
            X[rows], y[rows], weights[rows], np.array([3, 5, 7])
        )
        with sklearn.config_context(array_api_dispatch=True):
            model.partial_fit(X_xp, y_xp, classes_xp, sample_weight=weights_xp)
    assert_same_state(model, expected, attributes=fitted_vars)


def test_outputs_follow_the_device_of_x():
    X, y, _ = numeric_data(CASES[0])
    expected = fastnb.MultinomialNB().fit(X, y)
    X_xp, y_xp = strict(X, y, device=OTHER_DEVICE)
    with sklearn.config_context(array_api_dispatch=True):
        model = fastnb.MultinomialNB().fit(X_xp, y_xp)
        proba = model.predict_proba(X_xp)
        labels = model.predict(X_xp)
    assert proba.device == OTHER_DEVICE and labels.device == OTHER_DEVICE
    assert_array_equal(
        np.from_dlpack(xp.asarray(proba, device=CPU)), expected.predict_proba(X)
    )
    labels = np.from_dlpack(xp.asarray(labels, device=CPU))
    assert_array_equal(labels, expected.predict(X))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_dtype_kept_as_numpy_keeps_it(dtype):
    X, y, _ = numeric_data(CASES[5], dtype)  # GaussianNB
    expected = fastnb.GaussianNB().fit(X, y).predict_proba(X)
    X_xp, y_xp = strict(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        proba = fastnb.GaussianNB().fit(X_xp, y_xp).predict_proba(X_xp)
    assert proba.dtype == getattr(xp, expected.dtype.name)
    assert_array_equal(back_to_numpy(proba), expected, strict=True)


def test_a_model_refuses_x_of_another_namespace_with_dispatch_on():
    X, y, _ = numeric_data(CASES[0])
    X_xp, y_xp = strict(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        model = fastnb.MultinomialNB().fit(X_xp, y_xp)
        for method in ("predict", "predict_proba", "predict_log_proba"):
            match = rf"MultinomialNB\.{method}\(\) must use the same namespace"
            with pytest.raises(ValueError, match=match):
                getattr(model, method)(X)
        with pytest.raises(ValueError, match=r"partial_fit\(\) must use the same"):
            model.partial_fit(X, y)
        numpy_model = fastnb.MultinomialNB().fit(X, y)
        with pytest.raises(ValueError, match="fitted on NumPy or array-like input"):
            numpy_model.predict(X_xp)
    # Without dispatch the namespace is not checked: every output is NumPy.
    assert_array_equal(model.predict(X), numpy_model.predict(X_xp))


def test_string_labels_stay_numpy():
    # A namespace has no dtype for strings: the labels come back as NumPy.
    X, y, _ = numeric_data(CASES[5])
    words = np.array(["ham", "spam", "eggs"])[np.searchsorted([3, 5, 7], y)]
    expected = fastnb.GaussianNB().fit(X, words).predict(X)
    (X_xp,) = strict(X)
    with sklearn.config_context(array_api_dispatch=True):
        predicted = fastnb.GaussianNB().fit(X_xp, words).predict(X_xp)
    assert type(predicted) is np.ndarray
    assert_array_equal(predicted, expected, strict=True)


def test_the_fit_namespace_survives_pickle_and_a_numpy_refit_forgets_it():
    X, y, _ = numeric_data(CASES[0])
    X_xp, y_xp = strict(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        model = fastnb.MultinomialNB().fit(X_xp, y_xp)
        restored = pickle.loads(pickle.dumps(model))
        assert isinstance(restored.predict(X_xp), type(X_xp))
        with pytest.raises(ValueError, match="same namespace"):
            restored.predict(X)
        restored.fit(X, y)
        assert type(restored.predict(X)) is np.ndarray


@pytest.mark.parametrize("dispatch", [False, True], ids=["dispatch-off", "dispatch-on"])
def test_contributions_read_arrays_of_other_libraries(dispatch):
    # The terms are NumPy's, whatever X's library: the same as of NumPy X.
    case = next(case for case in CASES if case.id == "GaussianNB")
    X, y, weights = numeric_data(case)
    model = case.estimator().fit(X, y, sample_weight=weights)
    (X_xp,) = strict(X[:5])
    with sklearn.config_context(array_api_dispatch=dispatch):
        terms, intercept = model.contributions(X_xp, classes=(3, 5))
    expected = model.contributions(X[:5], classes=(3, 5))
    assert_array_equal(terms, expected.terms, strict=True)
    assert intercept == expected.intercept
