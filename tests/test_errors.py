"""Bad input raises an exception of the right type that names the problem."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import fastnb

ESTIMATORS = ["MultinomialNB", "ComplementNB", "BernoulliNB"]
NON_NEGATIVE = ["MultinomialNB", "ComplementNB"]

X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [0.0, 0.0, 4.0]])
Y = np.array([0, 1, 0, 1])


def with_value(value, container=np.asarray):
    X_bad = X.copy()
    X_bad[2, 1] = value
    return container(X_bad)


def fitted(name):
    return getattr(fastnb, name)().fit(X, Y)


def fit(name, X=X, y=Y, sample_weight=None, **params):
    return getattr(fastnb, name)(**params).fit(X, y, sample_weight=sample_weight)


def partial_fit(name, X=X, **params):
    return getattr(fastnb, name)(**params).partial_fit(X, Y, classes=[0, 1])


def before_fit(method):
    return lambda name: getattr(getattr(fastnb, name)(), method)(X)


# (id, estimators, action(name) that must raise, exception type, message fragment)
CASES = [
    (
        "negative counts",
        NON_NEGATIVE,
        lambda name: fit(name, X=with_value(-1.0)),
        ValueError,
        "Negative values in data",
    ),
    (
        "negative counts, sparse",
        NON_NEGATIVE,
        lambda name: fit(name, X=with_value(-1.0, sp.csr_matrix)),
        ValueError,
        "Negative values in data",
    ),
    (
        "negative counts, partial_fit",
        NON_NEGATIVE,
        lambda name: partial_fit(name, X=with_value(-1.0)),
        ValueError,
        "Negative values in data",
    ),
    (
        "NaN in X",
        ESTIMATORS,
        lambda name: fit(name, X=with_value(np.nan)),
        ValueError,
        "Input X contains NaN",
    ),
    (
        "NaN in sparse X",
        ESTIMATORS,
        lambda name: fit(name, X=with_value(np.nan, sp.csr_matrix)),
        ValueError,
        "Input X contains NaN",
    ),
    (
        "inf in X",
        ESTIMATORS,
        lambda name: fit(name, X=with_value(np.inf)),
        ValueError,
        "Input X contains infinity",
    ),
    (
        "NaN in X at predict",
        ESTIMATORS,
        lambda name: fitted(name).predict(with_value(np.nan)),
        ValueError,
        "Input X contains NaN",
    ),
    (
        "inf in X at predict_proba",
        ESTIMATORS,
        lambda name: fitted(name).predict_proba(with_value(-np.inf)),
        ValueError,
        "Input X contains infinity",
    ),
    (
        "wrong n_features at predict",
        ESTIMATORS,
        lambda name: fitted(name).predict(X[:, :2]),
        ValueError,
        "X has 2 features, but {name} is expecting 3 features",
    ),
    (
        "wrong n_features at predict_log_proba, sparse",
        ESTIMATORS,
        lambda name: fitted(name).predict_log_proba(sp.csr_matrix(np.ones((2, 5)))),
        ValueError,
        "X has 5 features, but {name} is expecting 3 features",
    ),
    (
        "empty X",
        ESTIMATORS,
        lambda name: fit(name, X=X[:0], y=Y[:0]),
        ValueError,
        "0 sample(s)",
    ),
    (
        "1-D X in fit",
        ESTIMATORS,
        lambda name: fit(name, X=X[0], y=Y[:3]),
        ValueError,
        "Expected 2D array, got 1D array",
    ),
    (
        "1-D X at predict",
        ESTIMATORS,
        lambda name: fitted(name).predict(X[0]),
        ValueError,
        "Expected 2D array, got 1D array",
    ),
    (
        "y of another length",
        ESTIMATORS,
        lambda name: fit(name, y=Y[:3]),
        ValueError,
        "inconsistent numbers of samples",
    ),
    (
        "sample_weight too short",
        ESTIMATORS,
        lambda name: fit(name, sample_weight=np.ones(3)),
        ValueError,
        "sample_weight.shape == (3,), expected (4,)",
    ),
    (
        "sample_weight too long",
        ESTIMATORS,
        lambda name: fit(name, sample_weight=np.ones(5)),
        ValueError,
        "sample_weight.shape == (5,), expected (4,)",
    ),
    (
        "negative sample_weight",
        ESTIMATORS,
        lambda name: fit(name, sample_weight=[1.0, -0.5, 1.0, 1.0]),
        ValueError,
        "sample_weight contains negative values",
    ),
    (
        "NaN sample_weight",
        ESTIMATORS,
        lambda name: fit(name, sample_weight=[1.0, np.nan, 1.0, 1.0]),
        ValueError,
        "sample_weight contains NaN",
    ),
    (
        "infinite sample_weight",
        ESTIMATORS,
        lambda name: fit(name, sample_weight=[1.0, np.inf, 1.0, 1.0]),
        ValueError,
        "sample_weight contains NaN or infinity",
    ),
    (
        "all-zero sample_weight",
        ESTIMATORS,
        lambda name: fit(name, sample_weight=np.zeros(4)),
        ValueError,
        "sample_weight is zero for every sample",
    ),
    (
        "alpha array of wrong length",
        ESTIMATORS,
        lambda name: fit(name, alpha=[1.0, 1.0]),
        ValueError,
        "should contain n_features (3) values",
    ),
    (
        "negative alpha",
        ESTIMATORS,
        lambda name: fit(name, alpha=-0.5),
        ValueError,
        "'alpha' parameter of {name} must be a float in the range [0.0, inf)",
    ),
    (
        "negative value in alpha array",
        ESTIMATORS,
        lambda name: fit(name, alpha=[1.0, -0.5, 1.0]),
        ValueError,
        "All values in alpha must be finite and >= 0",
    ),
    (
        "class_prior of wrong length",
        ESTIMATORS,
        lambda name: fit(name, class_prior=[0.2, 0.3, 0.5]),
        ValueError,
        "Number of priors must match number of classes",
    ),
    (
        "class_prior of wrong length, partial_fit",
        ESTIMATORS,
        lambda name: partial_fit(name, class_prior=[1.0]),
        ValueError,
        "Number of priors must match number of classes",
    ),
    (
        "continuous y",
        ESTIMATORS,
        lambda name: fit(name, y=np.array([0.5, 1.25, 2.0, 3.75])),
        ValueError,
        "Unknown label type",
    ),
] + [
    (
        f"{method} before fit",
        ESTIMATORS,
        before_fit(method),
        NotFittedError,
        "This {name} instance is not fitted yet",
    )
    for method in [
        "predict",
        "predict_proba",
        "predict_log_proba",
        "predict_joint_log_proba",
    ]
]


@pytest.mark.parametrize(
    ("name", "action", "error", "fragment"),
    [
        pytest.param(name, action, error, fragment, id=f"{name}-{case}")
        for case, names, action, error, fragment in CASES
        for name in names
    ],
)
def test_bad_input_raises(name, action, error, fragment):
    with pytest.raises(error, match=re.escape(fragment.format(name=name))):
        action(name)


def test_bernoulli_accepts_negative_values():
    # The Bernoulli model thresholds X, so negative values are fine.
    model = fastnb.BernoulliNB(binarize=0.5).fit(-X, Y)
    np.testing.assert_array_equal(model.feature_count_, np.zeros((2, 3)))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_tables_are_missing_before_fit(name):
    # hasattr is how scikit-learn tools tell fitted from unfitted.
    model = getattr(fastnb, name)()
    assert not hasattr(model, "feature_log_prob_")
    assert not hasattr(model, "class_log_prior_")
