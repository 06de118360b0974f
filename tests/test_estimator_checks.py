"""scikit-learn's API conformance checks on every fastnb estimator.

The checks feed plain numeric arrays, and sparse matrices to the estimators
whose tags say they take them (CategoricalNB, MixedNB with families by
position); MixedNB is given families that take them ("remaining" columns).
The checks that fail by design are declared, with the reason, and the tests
at the end show that they fail for it.

The estimators are tagged array_api_support, so the checks also feed arrays
of the array-API libraries scikit-learn knows, with array_api_dispatch on
(SCIPY_ARRAY_API=1 is set by tests/conftest.py): those of the libraries
installed here (array-api-strict, from the test extras; PyTorch, CuPy or
dpnp where they are) are kept, the others left out. A check that still
skips (a device this machine lacks) is named in the summary with its reason.
"""

import functools
import importlib.util
from unittest import SkipTest

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.utils.estimator_checks import (
    check_classifiers_one_label_sample_weights,
    check_fit_non_negative,
    check_positive_only_tag_during_fit,
    check_sample_weight_equivalence_on_dense_data,
    check_sample_weight_equivalence_on_sparse_data,
    parametrize_with_checks,
)

import fastnb

GAUSSIAN_AND_COUNTS = {"gaussian": [0], "multinomial": "remaining"}
ESTIMATORS = [
    fastnb.MultinomialNB(),
    fastnb.ComplementNB(),
    fastnb.BernoulliNB(),
    fastnb.PoissonNB(),
    fastnb.GaussianNB(),
    fastnb.GaussianNB(var_type="tied"),
    fastnb.GaussianNB(var_type="spherical", var_estimator="unbiased"),
    fastnb.CategoricalNB(),
    fastnb.KernelDensityNB(),
    fastnb.KernelDensityNB(algorithm="exact", bandwidth="silverman"),
    fastnb.KernelDensityNB(bandwidth=0.5, adjust=2.0),
    fastnb.MixedNB(families={"gaussian": "remaining"}),
    fastnb.MixedNB(families={"bernoulli": [0], "gaussian": "remaining"}),
    fastnb.MixedNB(families=GAUSSIAN_AND_COUNTS),
    fastnb.MixedNB(
        families={"kde": [0], "gaussian": "remaining"}, kde_params={"bandwidth": 0.5}
    ),
    # missing="ignore": tagged allow_nan, so the checks feed NaN and expect
    # a fit.
    fastnb.MultinomialNB(missing="ignore"),
    fastnb.BernoulliNB(missing="ignore"),
    fastnb.PoissonNB(missing="ignore"),
    fastnb.GaussianNB(missing="ignore"),
    fastnb.CategoricalNB(missing="ignore"),
    fastnb.KernelDensityNB(bandwidth=0.5, missing="ignore"),
    fastnb.MixedNB(
        families={"bernoulli": [0], "gaussian": "remaining"}, missing="ignore"
    ),
    fastnb.SemiSupervisedNB(),
    fastnb.OneVsRestNB(),
    fastnb.OneVsRestNB(fastnb.GaussianNB()),
    fastnb.SemiSupervisedNB(fastnb.GaussianNB(), n_components=2, random_state=0),
]

NON_INTEGER_CODES = (
    "feeds non-integer float features; CategoricalNB takes category codes "
    "and rejects non-integer codes with a ValueError by design"
)
CATEGORICAL_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": NON_INTEGER_CODES,
    "check_sample_weight_equivalence_on_sparse_data": NON_INTEGER_CODES,
    "check_classifiers_one_label_sample_weights": NON_INTEGER_CODES,
}
# Tagged allow_nan, a categorical estimator is fed float codes, which the
# check shifts by their mean: fractional.
CATEGORICAL_IGNORING_FAILURES = {
    **CATEGORICAL_FAILURES,
    "check_positive_only_tag_during_fit": (
        "with allow_nan (missing='ignore') the check keeps float codes and "
        "subtracts their mean, so they are fractional; " + NON_INTEGER_CODES
    ),
}
MIXED_FAILURES = {
    "check_fit_non_negative": (
        "the check's negative values fall in column 0, which is gaussian "
        "and takes any real value; only multinomial columns must be "
        "non-negative (and are refused when negative)."
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "GaussianNB's variance smoothing is var_smoothing times the "
        "largest variance of the unweighted samples (as in scikit-learn), "
        "so zero weights and repeats give another epsilon_; with a single "
        "gaussian column and a class with one distinct sample this shows."
    ),
}
# The same data in a sparse matrix, the same reason.
MIXED_FAILURES["check_sample_weight_equivalence_on_sparse_data"] = MIXED_FAILURES[
    "check_sample_weight_equivalence_on_dense_data"
]


# A bandwidth rule depends on the effective sample size sum(w)**2 / sum(w**2)
# of scipy's gaussian_kde, which repeated rows raise and weights do not.
EFFECTIVE_SIZE = (
    "the bandwidth rules use the effective sample size sum(w)**2 / sum(w**2) "
    "(as scipy.stats.gaussian_kde), so integer weights are not repeated rows; "
    "with a given bandwidth they are"
)
KDE_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": EFFECTIVE_SIZE,
}


# scikit-learn exempts its own semi-supervised estimators from this check by
# name (_choose_check_classifiers_labels): -1 marks an unlabelled sample, so
# string labels come in object arrays, as SelfTrainingClassifier wants them.
SEMI_SUPERVISED_FAILURES = {
    "check_classifiers_classes": (
        "string labels of a str dtype are refused: unlabelled samples are -1, "
        "so string labels must come in an object array (as scikit-learn's "
        "SelfTrainingClassifier requires; the check exempts that one by name)"
    ),
}
RANDOM_SPREAD = (
    "with n_components above 1, each labelled sample is spread over its "
    "class's components at random, a draw a sample: a repeated sample draws "
    "twice, a weighted one once"
)
COMPONENT_FAILURES = {
    **SEMI_SUPERVISED_FAILURES,
    "check_sample_weight_equivalence_on_dense_data": RANDOM_SPREAD,
    "check_sample_weight_equivalence_on_sparse_data": RANDOM_SPREAD,
}


def expected_failed_checks(estimator):
    if isinstance(estimator, fastnb.SemiSupervisedNB):
        if estimator.n_components > 1:
            return COMPONENT_FAILURES
        return SEMI_SUPERVISED_FAILURES
    if isinstance(estimator, fastnb.CategoricalNB):
        if estimator.missing == "ignore":
            return CATEGORICAL_IGNORING_FAILURES
        return CATEGORICAL_FAILURES
    if isinstance(estimator, fastnb.KernelDensityNB):
        return KDE_FAILURES if isinstance(estimator.bandwidth, str) else {}
    if isinstance(estimator, fastnb.MixedNB):
        if estimator.families == GAUSSIAN_AND_COUNTS:
            return MIXED_FAILURES
    return {}


def array_libraries(check):
    """The array-API libraries a check feeds the estimator (its keywords)."""
    names = set()
    for value in getattr(check, "keywords", {}).values():
        names.add(getattr(value, "xp", None))
    names.add(getattr(check, "keywords", {}).get("array_namespace"))
    return {name for name in names if isinstance(name, str)}


def installed(check):
    """Whether every array library of the check is installed."""
    return all(
        importlib.util.find_spec(name.split(".")[0]) is not None
        for name in array_libraries(check)
    )


def checks_of_installed_libraries(estimators):
    """parametrize_with_checks over estimators, less the checks of array
    libraries this machine lacks."""
    mark = parametrize_with_checks(
        estimators, expected_failed_checks=expected_failed_checks
    )
    names, params = mark.args
    kept = [
        param
        for param in params
        if installed((param.values if hasattr(param, "values") else param)[1])
    ]
    return pytest.mark.parametrize(names, kept, **mark.kwargs)


@checks_of_installed_libraries(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    try:
        check(estimator)
    except SkipTest as skip:
        # A check skips by raising unittest's SkipTest (the array-API checks,
        # for a library or device this machine lacks), which pytest reports
        # from its own unittest.py; skipped here, the summary names this
        # test and the check's reason.
        pytest.skip(f"{check_name(check)}: {skip}")


def check_name(check):
    """The name of a check, a function or a functools.partial of one, with
    the arguments the partial fixes (the array-API checks' namespace)."""
    if isinstance(check, functools.partial):
        arguments = ", ".join(f"{k}={shown(v)}" for k, v in check.keywords.items())
        return f"{check_name(check.func)}({arguments})"
    return check.__name__


def shown(value):
    """An argument of a check, briefly: a namespace and device as "torch on
    cuda"."""
    if hasattr(value, "xp") and hasattr(value, "device"):
        return value.xp if value.device is None else f"{value.xp} on {value.device}"
    return repr(value)


# ---------------------------------------------------------------------------
# The expected failures fail for the reason given
# ---------------------------------------------------------------------------


def test_categorical_checks_fail_on_non_integer_codes():
    estimator = fastnb.CategoricalNB()
    with pytest.raises(ValueError, match="non-integer codes"):
        check_sample_weight_equivalence_on_dense_data("CategoricalNB", estimator)
    with pytest.raises(ValueError, match="non-integer codes"):
        check_sample_weight_equivalence_on_sparse_data("CategoricalNB", estimator)
    # This check turns the ValueError into an AssertionError of its own.
    with pytest.raises(
        AssertionError, match="failed when fitted on one label after sample_weight"
    ) as raised:
        check_classifiers_one_label_sample_weights("CategoricalNB", estimator)
    assert "non-integer codes" in str(raised.value.__cause__)
    assert set(expected_failed_checks(estimator)) == {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
        "check_classifiers_one_label_sample_weights",
    }


def test_categorical_positive_only_check_fails_on_non_integer_codes_if_ignoring():
    # Without missing="ignore" the check gives whole codes, and passes.
    check_positive_only_tag_during_fit("CategoricalNB", fastnb.CategoricalNB())
    ignoring = fastnb.CategoricalNB(missing="ignore")
    with pytest.raises(AssertionError) as raised:
        check_positive_only_tag_during_fit("CategoricalNB", ignoring)
    assert "non-integer codes" in str(raised.value)


def test_mixed_non_negative_check_fails_on_a_gaussian_column():
    estimator = fastnb.MixedNB(families=GAUSSIAN_AND_COUNTS)
    with pytest.raises(AssertionError, match="Did not raise"):
        check_fit_non_negative("MixedNB", estimator)
    X = np.abs(np.random.default_rng(0).normal(size=(6, 3)))
    y = [0, 1] * 3
    X[2, 0] = -1.0  # the gaussian column
    estimator.fit(X, y)
    X[2, 1] = -1.0  # a multinomial column
    with pytest.raises(ValueError, match="Negative values"):
        fastnb.MixedNB(families=GAUSSIAN_AND_COUNTS).fit(X, y)


def test_mixed_weight_check_fails_on_the_variance_smoothing_only():
    estimator = fastnb.MixedNB(families=GAUSSIAN_AND_COUNTS)
    with pytest.raises(AssertionError, match="not equivalent"):
        check_sample_weight_equivalence_on_dense_data("MixedNB", estimator)
    with pytest.raises(AssertionError, match="not equivalent"):
        check_sample_weight_equivalence_on_sparse_data("MixedNB", estimator)
    # The check's data: a class has a single distinct value in column 0.
    rng = np.random.RandomState(42)
    X = rng.rand(15, 30)
    y = rng.randint(0, 3, size=15)
    weights = rng.randint(0, 5, size=15)
    X_repeated, y_repeated = X.repeat(weights, axis=0), y.repeat(weights)
    weighted = fastnb.MixedNB(families=GAUSSIAN_AND_COUNTS).fit(X, y, weights)
    repeated = fastnb.MixedNB(families=GAUSSIAN_AND_COUNTS).fit(X_repeated, y_repeated)
    assert min(len(np.unique(X_repeated[y_repeated == c, 0])) for c in range(3)) == 1
    counts = [model.estimators_["multinomial"] for model in (weighted, repeated)]
    assert_allclose(counts[0].feature_count_, counts[1].feature_count_, rtol=1e-12)
    gaussian = [model.estimators_["gaussian"] for model in (weighted, repeated)]
    assert_allclose(gaussian[0].theta_, gaussian[1].theta_, rtol=1e-12)
    assert_allclose(
        gaussian[0].var_ - gaussian[0].epsilon_,
        gaussian[1].var_ - gaussian[1].epsilon_,
        rtol=1e-12,
        atol=1e-15,
    )
    # Only the smoothing differs: 1e-9 times the variance of the rows given.
    assert_allclose(gaussian[0].epsilon_, 1e-9 * X[:, 0].var(), rtol=1e-12)
    assert_allclose(gaussian[1].epsilon_, 1e-9 * X_repeated[:, 0].var(), rtol=1e-12)
    assert abs(gaussian[0].epsilon_ / gaussian[1].epsilon_ - 1) > 0.1


def test_kde_weight_check_fails_on_the_bandwidth_rule_only():
    # With the rule, weights are not repeats (the effective sample size
    # differs); with a given bandwidth they are.
    with pytest.raises(AssertionError, match="`sample_weight` is not equivalent"):
        check_sample_weight_equivalence_on_dense_data(
            "KernelDensityNB", fastnb.KernelDensityNB()
        )
    check_sample_weight_equivalence_on_dense_data(
        "KernelDensityNB", fastnb.KernelDensityNB(bandwidth=0.5)
    )
