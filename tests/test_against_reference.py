"""Every fastnb estimator against its NumPy reference, fastnb.reference.

One invariant, stated once and run on all seven estimators: a fast estimator
and its reference fitted on the same data, in one ``fit`` or in the same
``partial_fit`` chunks, have the same public fitted attributes (the same
names, dtypes and shapes) and give the same outputs, with the dtype they
should have, to rounding: relative 1e-10 from float64 input and 1e-5 from
float32, entry by entry. An entry near zero is compared against the typical
size of its array's values, and every output of a row against the size of
the row's leading joint log-likelihood. Their sufficient statistics
(``fastnb.get_state`` against the reference's ``statistics_``) match too.

Each case names an estimator, its parameters and a kind of data; the data
are dense C or F order, CSR and CSC where the estimator takes sparse input,
float32 or float64 (category codes as floats too, raw values as objects),
with or without sample weights (some of them zero). Disagreements found are
listed in ``known_disagreement`` and marked as strict xfails.
"""

from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

import fastnb
from fastnb import reference

from _helpers import tol

LABELS = np.array(["ant", "bee", "cat"])
OUTPUTS = ["predict_joint_log_proba", "predict_log_proba", "predict_proba"]
N_SAMPLES = 90
N_COUNT_FEATURES = 9
N_GAUSSIAN_FEATURES = 5
# Category codes: the cardinality of each column, and what later rows add.
CARDINALITIES = (2, 3, 5, 4)
LATER_CODES = 2  # rows of the last third may take codes up to 2 higher
MOST_CODES = max(CARDINALITIES) + LATER_CODES
WORDS = np.array(["fog", "hail", "rain", "sleet", "snow", "sun", "wind"])
# partial_fit chunks: a third, one row, the rest.
CUTS = (0, N_SAMPLES // 3, N_SAMPLES // 3 + 1, N_SAMPLES)


def given_prior():
    """A fixed class prior, not the class frequencies."""
    prior = np.linspace(1.0, 2.0, len(LABELS))
    return prior / prior.sum()


def draw_labels(rng):
    """Labels of N_SAMPLES rows, shuffled, classes of 2, 3 and 4 ninths.

    Classes of different sizes: two classes with the same counts in a row's
    categories would tie exactly, and rounding would pick either.
    """
    sizes = np.array([2, 3, 4]) * N_SAMPLES // 9
    return rng.permutation(np.repeat(LABELS, sizes))


def per_feature(n_features, low=0.1, high=2.0):
    """A parameter with a different value for each feature."""
    return np.linspace(low, high, n_features)


# ---------------------------------------------------------------------------
# Data: dense float64 (or object) training X, labels and X to predict.
# ---------------------------------------------------------------------------


def count_data(rng):
    """Non-negative counts, fractional in a third of the columns.

    Feature 0 never occurs in the first class and feature 1 always occurs
    in the second, so that unsmoothed tables hold -inf (log 0) and certain
    features (p = 1), and some samples are impossible in some class.
    """
    X = rng.poisson(1.2, size=(N_SAMPLES, N_COUNT_FEATURES)).astype(np.float64)
    X *= rng.random(X.shape) < 0.6
    X[np.arange(N_SAMPLES), rng.integers(N_COUNT_FEATURES, size=N_SAMPLES)] += 1.0
    X[:, :3] *= rng.uniform(0.3, 1.7, size=(N_SAMPLES, 3))
    y = draw_labels(rng)
    X[y == LABELS[0], 0] = 0.0
    X[y == LABELS[1], 1] = np.maximum(X[y == LABELS[1], 1], 1.0)
    return X, y, X


def gaussian_data(rng):
    """Normal features, shifted and scaled by class, away from zero.

    The last feature is constant within the first class (variance 0 there).
    """
    y = draw_labels(rng)
    k = np.searchsorted(LABELS, y)[:, np.newaxis]
    X = 5.0 + 2.0 * k + (1.0 + k) * rng.normal(size=(N_SAMPLES, N_GAUSSIAN_FEATURES))
    X[k[:, 0] == 0, -1] = 3.0
    X_test = 5.0 + 4.0 * rng.random((30, N_GAUSSIAN_FEATURES))
    return X, y, np.vstack([X, X_test])


def constant_data(rng):
    """Every feature constant: epsilon_ is var_smoothing itself."""
    y = draw_labels(rng)
    X = np.tile(np.array([1.5, -2.0, 4.0]), (N_SAMPLES, 1))
    return X, y, X


def code_data(rng):
    """Category codes; the last third of the rows brings higher codes.

    The rows to predict add codes never seen in training.
    """
    X = np.column_stack([rng.integers(0, n, N_SAMPLES) for n in CARDINALITIES])
    later = np.arange(N_SAMPLES) >= 2 * N_SAMPLES // 3
    X[later] += rng.integers(0, LATER_CODES + 1, size=(later.sum(), len(CARDINALITIES)))
    y = draw_labels(rng)
    unseen = np.array([[MOST_CODES, 0, 1, 0], [0, 1, MOST_CODES + 7, 2]])
    return X.astype(np.float64), y, np.vstack([X, unseen]).astype(np.float64)


def string_data(rng):
    """Raw values: two columns of words and one of booleans, as objects.

    The last third of the rows brings new words, some sorting before the
    earlier ones (so chunks append them out of sorted order); the rows to
    predict add words never seen in training.
    """
    first = WORDS[rng.integers(2, 5, N_SAMPLES)]
    first[2 * N_SAMPLES // 3 :] = WORDS[rng.integers(0, 6, N_SAMPLES // 3)]
    second = WORDS[rng.integers(3, 7, N_SAMPLES)]
    flags = rng.random(N_SAMPLES) < 0.4
    X = np.column_stack([first, second, flags]).astype(object)
    X[:, 2] = flags  # Python booleans, not the strings of the stack
    y = draw_labels(rng)
    unseen = np.array([["mist", "sun", True], ["fog", "drizzle", False]], dtype=object)
    return X, y, np.vstack([X, unseen])


# MixedNB columns: gaussian, categorical codes, multinomial, poisson, bernoulli.
MIXED_FAMILIES = {
    "gaussian": [0, 1, 2],
    "categorical": [3, 4],
    "multinomial": [5, 6, 7],
    "poisson": [8, 9],
    "bernoulli": [10, 11],
}


def mixed_data(rng):
    """The columns of MIXED_FAMILIES, in a float array.

    The rows to predict add two with category codes never seen.
    """
    gaussian, y, _ = gaussian_data(rng)
    codes, _, _ = code_data(rng)
    counts, _, _ = count_data(rng)
    X = np.column_stack([gaussian[:, :3], codes[:, :2], counts[:, 2:9]])
    unseen = X[:2].copy()
    unseen[:, 3:5] = [[MOST_CODES, 0], [1, MOST_CODES + 3]]
    return X, y, np.vstack([X, unseen])


# MixedNB columns of an object array: gaussian numbers, words, counts.
MIXED_OBJECT_FAMILIES = {
    "gaussian": [0, 1],
    "categorical": [2, 3],
    "multinomial": [4, 5],
}


def mixed_object_data(rng):
    """The columns of MIXED_OBJECT_FAMILIES, in an object array.

    The rows to predict add two with words never seen.
    """
    gaussian, y, _ = gaussian_data(rng)
    words, _, _ = string_data(rng)
    counts, _, _ = count_data(rng)
    X = np.column_stack([gaussian[:, :2], words[:, :2], counts[:, 3:5]]).astype(object)
    unseen = X[:2].copy()
    unseen[:, 2:4] = [["mist", "sun"], ["fog", "drizzle"]]
    return X, y, np.vstack([X, unseen])


DATA = {
    "counts": count_data,
    "gaussian": gaussian_data,
    "constant": constant_data,
    "codes": code_data,
    "strings": string_data,
    "mixed": mixed_data,
    "mixed objects": mixed_object_data,
}
FLOAT_DTYPES = [np.float64, np.float32]
# Containers and dtypes of each kind of data.
CONTAINERS = {
    "counts": ["C", "F", "csr", "csc"],
    "gaussian": ["C", "F", "csr", "csc"],
    "constant": ["C", "F", "csr", "csc"],
    "codes": ["C", "F"],
    "strings": ["C", "F"],
    "mixed": ["C", "F"],
    "mixed objects": ["C", "F"],
}
DTYPES = {
    "counts": FLOAT_DTYPES,
    "gaussian": FLOAT_DTYPES,
    "constant": FLOAT_DTYPES,
    "codes": FLOAT_DTYPES,
    "strings": [object],
    "mixed": FLOAT_DTYPES,
    "mixed objects": [object],
}


def as_container(X, container, dtype):
    X = np.asarray(X).astype(dtype)
    if container == "C":
        return np.ascontiguousarray(X)
    if container == "F":
        return np.asfortranarray(X)
    return {"csr": sp.csr_matrix, "csc": sp.csc_matrix}[container](X)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


@dataclass
class Case:
    """An estimator, the kind of data it is fitted on, and its parameters."""

    name: str
    data: str
    label: str
    params: dict = field(default_factory=dict)

    def __str__(self):
        return f"{self.name}-{self.data}-{self.label}"


N_CATEGORICAL_FEATURES = len(CARDINALITIES)

CASES = [
    Case("MultinomialNB", "counts", "default"),
    Case(
        "MultinomialNB",
        "counts",
        "alpha per feature",
        {"alpha": per_feature(N_COUNT_FEATURES)},
    ),
    Case("MultinomialNB", "counts", "unsmoothed", {"alpha": 0.0, "fit_prior": False}),
    Case(
        "MultinomialNB",
        "counts",
        "alpha raised, prior given",
        {"alpha": 1e-12, "force_alpha": False, "class_prior": given_prior()},
    ),
    Case(
        "MultinomialNB",
        "counts",
        "m-estimate",
        {
            "alpha": fastnb.MEstimate(
                m=4.0,
                prior=per_feature(N_COUNT_FEATURES)
                / per_feature(N_COUNT_FEATURES).sum(),
            )
        },
    ),
    Case("ComplementNB", "counts", "default"),
    Case(
        "ComplementNB",
        "counts",
        "alpha per feature, norm",
        {"alpha": per_feature(N_COUNT_FEATURES), "norm": True},
    ),
    Case("ComplementNB", "counts", "prior given", {"class_prior": given_prior()}),
    Case("BernoulliNB", "counts", "default"),
    Case(
        "BernoulliNB",
        "counts",
        "binarize 1, alpha per feature",
        {"binarize": 1.0, "alpha": per_feature(N_COUNT_FEATURES), "fit_prior": False},
    ),
    # Certain features (p = 1) and impossible ones (p = 0).
    Case("BernoulliNB", "counts", "unsmoothed", {"alpha": 0.0}),
    Case("BernoulliNB", "counts", "m-estimate", {"alpha": fastnb.MEstimate(m=2.0)}),
    Case(
        "BernoulliNB",
        "counts",
        "m-estimate per feature, prior given",
        {
            "alpha": fastnb.MEstimate(
                m=per_feature(N_COUNT_FEATURES, 0.5, 3.0),
                prior=per_feature(N_COUNT_FEATURES, 0.1, 0.9),
            ),
            "class_prior": given_prior(),
        },
    ),
    Case("PoissonNB", "counts", "default"),
    Case("PoissonNB", "counts", "unsmoothed", {"alpha": 0.0}),
    Case(
        "PoissonNB",
        "counts",
        "alpha per feature, prior given",
        {"alpha": per_feature(N_COUNT_FEATURES), "class_prior": given_prior()},
    ),
    Case("GaussianNB", "gaussian", "default"),
    Case("GaussianNB", "gaussian", "unbiased", {"var_estimator": "unbiased"}),
    Case("GaussianNB", "gaussian", "tied", {"var_type": "tied"}),
    Case(
        "GaussianNB",
        "gaussian",
        "tied unbiased, priors given",
        {"var_type": "tied", "var_estimator": "unbiased", "priors": given_prior()},
    ),
    Case(
        "GaussianNB",
        "gaussian",
        "spherical unbiased",
        {"var_type": "spherical", "var_estimator": "unbiased", "var_smoothing": 1e-3},
    ),
    Case("GaussianNB", "constant", "default"),
    Case("CategoricalNB", "codes", "default"),
    Case(
        "CategoricalNB",
        "codes",
        "alpha per feature",
        {"alpha": per_feature(N_CATEGORICAL_FEATURES)},
    ),
    Case(
        "CategoricalNB",
        "codes",
        "min_categories",
        {"alpha": 0.5, "min_categories": [3, 9, 2, 10], "fit_prior": False},
    ),
    # Codes never seen make every class impossible.
    Case(
        "CategoricalNB",
        "codes",
        "unsmoothed",
        {"alpha": 0.0, "class_prior": given_prior()},
    ),
    Case("CategoricalNB", "codes", "m-estimate", {"alpha": fastnb.MEstimate(m=3.0)}),
    Case(
        "CategoricalNB",
        "codes",
        "m-estimate per feature, prior given",
        {
            # min_categories fixes the categories from the first chunk on, as
            # a prior per category needs.
            "alpha": fastnb.MEstimate(
                m=per_feature(N_CATEGORICAL_FEATURES, 1.0, 4.0),
                prior=[np.arange(1.0, MOST_CODES + 1) / 28.0] * N_CATEGORICAL_FEATURES,
            ),
            "min_categories": MOST_CODES,
        },
    ),
    Case("CategoricalNB", "strings", "default"),
    # More categories than values: codes standing for no value.
    Case(
        "CategoricalNB",
        "strings",
        "alpha per feature, min_categories",
        {"alpha": [0.5, 2.0, 1.0], "min_categories": 7},
    ),
    Case("CategoricalNB", "strings", "m-estimate", {"alpha": fastnb.MEstimate(m=1.5)}),
    Case("MixedNB", "mixed", "default", {"families": MIXED_FAMILIES}),
    Case(
        "MixedNB",
        "mixed",
        "family parameters",
        {
            "families": MIXED_FAMILIES,
            "fit_prior": False,
            "gaussian_params": {"var_type": "tied", "var_estimator": "unbiased"},
            "categorical_params": {"alpha": 0.5, "min_categories": 8},
            "multinomial_params": {"alpha": 0.3},
            "poisson_params": {"alpha": 2.0},
            "bernoulli_params": {"binarize": 1.0},
        },
    ),
    Case(
        "MixedNB",
        "mixed objects",
        "prior given",
        {"families": MIXED_OBJECT_FAMILIES, "class_prior": given_prior()},
    ),
]

# Data holding raw values, which CategoricalNB encodes.
ENCODED = {"strings", "mixed objects"}


def known_disagreement(case, container, dtype):
    """Why fastnb disagrees with the reference on this input, or None.

    Each is a finding, reported with a reproduction; its strict xfail turns
    into a failure when fastnb is fixed, and the entry goes.
    """
    if (
        case.name == "GaussianNB"
        and container in ("csr", "csc")
        and dtype == np.float64
        and case.params.get("var_type", "diag") == "diag"
    ):
        return (
            "fastnb.GaussianNB scores sparse X as the all-zeros score plus "
            "corrections for the stored values, which cancel where theta^2 / var "
            "is large (a feature nearly constant in a class): its joint "
            "log-likelihood is then off by ~1e-8 relative, also from its own "
            "dense scores"
        )
    return None


def combinations(with_known_disagreements):
    """(case, container, dtype) parameters; known disagreements marked xfail."""
    params = []
    for case in CASES:
        for container in CONTAINERS[case.data]:
            for dtype in DTYPES[case.data]:
                reason = known_disagreement(case, container, dtype)
                marks = []
                if with_known_disagreements and reason:
                    marks = [pytest.mark.xfail(reason=reason, strict=True)]
                identifier = f"{case}-{container}-{np.dtype(dtype)}"
                params.append(
                    pytest.param(case, container, dtype, id=identifier, marks=marks)
                )
    return params


COMBINATIONS = combinations(with_known_disagreements=False)


def test_cases_cover_every_estimator():
    # The invariant holds for all seven, in every container they accept.
    names = {case.name for case in CASES}
    assert names == {
        "MultinomialNB",
        "ComplementNB",
        "BernoulliNB",
        "GaussianNB",
        "CategoricalNB",
        "PoissonNB",
        "MixedNB",
    }
    for name in names:
        sparse = getattr(fastnb, name)().__sklearn_tags__().input_tags.sparse
        containers = {
            c for case in CASES if case.name == name for c in CONTAINERS[case.data]
        }
        assert ({"csr", "csc"} <= containers) == sparse, name


# ---------------------------------------------------------------------------
# Fitting both the same way
# ---------------------------------------------------------------------------


def training(case, container, dtype, weighted, seed=0):
    """X, y, sample weights and X to predict for a case, in the container."""
    rng = np.random.default_rng(seed)
    X, y, X_test = DATA[case.data](rng)
    sample_weight = None
    if weighted:
        sample_weight = rng.uniform(0.2, 3.0, len(y))
        sample_weight[::7] = 0.0
    return (
        as_container(X, container, dtype),
        y,
        sample_weight,
        as_container(X_test, container, dtype),
    )


def fit(estimator, mode, X, y, sample_weight):
    """Fit in one call, or by partial_fit in the chunks of CUTS."""
    if mode == "fit":
        return estimator.fit(X, y, sample_weight=sample_weight)
    for start, stop in zip(CUTS[:-1], CUTS[1:], strict=True):
        estimator.partial_fit(
            X[start:stop],
            y[start:stop],
            classes=LABELS if start == 0 else None,
            sample_weight=None if sample_weight is None else sample_weight[start:stop],
        )
    return estimator


def fit_pair(case, mode, X, y, sample_weight):
    """The fast estimator and its reference, fitted alike."""
    fast = fit(getattr(fastnb, case.name)(**case.params), mode, X, y, sample_weight)
    oracle = fit(
        getattr(reference, case.name)(**case.params), mode, X, y, sample_weight
    )
    return fast, oracle


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------


def public_attributes(model):
    """The public fitted attributes a model has (names ending in '_')."""
    names = [n for n in dir(model) if n.endswith("_") and not n.startswith("_")]
    return sorted(n for n in names if n != "statistics_" and hasattr(model, n))


def assert_close(actual, expected, rtol, atol, where):
    """Assert |actual - expected| <= rtol |expected| + atol entry by entry.

    Infinities must stand where they stand in ``expected``, and NaNs too;
    ``atol`` broadcasts against the arrays.
    """
    close = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        where_bad = np.argwhere(~close)[:5].tolist()
        pairs = [(i, actual[tuple(i)], expected[tuple(i)]) for i in where_bad]
        raise AssertionError(
            f"{where}: {np.count_nonzero(~close)} of {close.size} entries differ "
            f"beyond rtol={rtol}; first (index, actual, expected): {pairs}"
        )


def typical_size(values):
    """The median magnitude of the finite nonzero values (0 if none)."""
    values = np.abs(values[np.isfinite(values) & (values != 0)])
    return float(np.median(values)) if values.size else 0.0


def assert_same(actual, expected, rtol, where):
    """Assert equal values: same structure, types, dtypes, shapes, to rtol.

    Floats are compared entry by entry, relative to their size; an entry
    near zero (a sum that cancels, a count that is zero in one and a
    rounding error in the other) is compared against the typical size of
    the array's values instead.
    """
    if isinstance(expected, dict):
        assert list(actual) == list(expected), where
        for key in expected:
            assert_same(actual[key], expected[key], rtol, f"{where}[{key!r}]")
    elif isinstance(expected, list):
        assert isinstance(actual, list), where
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, rtol, f"{where}[{i}]")
    elif hasattr(expected, "statistics_"):
        assert_same_model(actual, expected, rtol, where)
    elif isinstance(expected, np.dtype):
        assert actual == expected, f"{where}: dtype {actual} != {expected}"
    else:
        actual, expected = np.asarray(actual), np.asarray(expected)
        assert actual.dtype == expected.dtype, (
            f"{where}: dtype {actual.dtype} != {expected.dtype}"
        )
        assert actual.shape == expected.shape, (
            f"{where}: shape {actual.shape} != {expected.shape}"
        )
        if expected.dtype.kind == "f":
            atol = rtol * typical_size(expected)
            assert_close(actual, expected, rtol, atol, where)
        else:
            assert_array_equal(actual, expected, err_msg=where)


def assert_same_model(fast, oracle, rtol, where=""):
    """Every public fitted attribute of both, by name: the same names, equal."""
    names = public_attributes(fast)
    assert names == public_attributes(oracle), where
    assert "classes_" in names and "n_features_in_" in names, where
    for name in names:
        assert_same(getattr(fast, name), getattr(oracle, name), rtol, where + name)


def output_dtype(case, dtype):
    """Outputs are float64, except GaussianNB's from float32 X and model."""
    if case.name == "GaussianNB" and dtype == np.float32:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def assert_same_outputs(fast, oracle, X, rtol, dtype):
    """The same outputs on X, with the dtype given.

    Each row is compared against the size of its leading joint
    log-likelihood (at least 1): rounding in the leading classes' scores
    moves every output of the row by about that much relative. Where a
    class is far behind, its joint log-likelihood is compared relative to
    its own size.
    """
    n_samples, n_classes = X.shape[0], len(oracle.classes_)
    leading = np.abs(oracle.predict_joint_log_proba(X).max(axis=1))
    row_size = np.where(np.isfinite(leading), np.maximum(leading, 1.0), 1.0)
    row_size = row_size[:, np.newaxis].astype(np.float64)
    for method in OUTPUTS:
        result = getattr(fast, method)(X)
        expected = getattr(oracle, method)(X)
        assert isinstance(result, np.ndarray), method
        assert result.dtype == expected.dtype == dtype, method
        assert result.shape == (n_samples, n_classes), method
        assert_close(result, expected, rtol, rtol * row_size, method)
    predicted, expected = fast.predict(X), oracle.predict(X)
    assert predicted.dtype == expected.dtype == oracle.classes_.dtype
    assert_array_equal(predicted, expected)


def tolerance(dtype):
    """Data of objects holds float64 numbers, or none at all."""
    return tol(np.float64 if dtype is object else dtype)


# ---------------------------------------------------------------------------
# The invariant
# ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:alpha too small:UserWarning")
@pytest.mark.parametrize("mode", ["fit", "partial_fit"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    ("case", "container", "dtype"), combinations(with_known_disagreements=True)
)
def test_matches_reference(case, container, dtype, weighted, mode):
    X, y, sample_weight, X_test = training(case, container, dtype, weighted)
    fast, oracle = fit_pair(case, mode, X, y, sample_weight)
    rtol = tolerance(dtype)
    assert_same_model(fast, oracle, rtol)
    assert_same_outputs(fast, oracle, X_test, rtol, output_dtype(case, dtype))


@pytest.mark.filterwarnings("ignore:alpha too small:UserWarning")
@pytest.mark.parametrize(("case", "container", "dtype"), COMBINATIONS)
def test_statistics_match_reference(case, container, dtype):
    rtol = tolerance(dtype)
    # Weighted or not, fitted or partially fitted: four tests in one.
    for weighted in [False, True]:
        X, y, sample_weight, _ = training(case, container, dtype, weighted)
        for mode in ["fit", "partial_fit"]:
            fast, oracle = fit_pair(case, mode, X, y, sample_weight)
            statistics = fastnb.get_state(fast).statistics
            where = f"{mode}, {'weighted' if weighted else 'unweighted'}: "
            assert sorted(statistics) == sorted(oracle.statistics_), where
            for key, expected in oracle.statistics_.items():
                assert_same(statistics[key], expected, rtol, where + key)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    ("case", "container", "dtype"),
    [p for p in COMBINATIONS if p.values[0].data not in ENCODED],
)
def test_reference_chunks_equal_reference_fit(case, container, dtype, weighted):
    # The premise of crossing partial_fit: the reference's combine step of
    # the chunks' statistics gives the statistics of the whole. (Not for raw
    # values, whose codes follow the order in which the chunks bring them.)
    X, y, sample_weight, X_test = training(case, container, dtype, weighted)
    make = getattr(reference, case.name)
    whole = fit(make(**case.params), "fit", X, y, sample_weight)
    chunked = fit(make(**case.params), "partial_fit", X, y, sample_weight)
    rtol = tolerance(dtype)
    assert_same(chunked.statistics_, whole.statistics_, rtol, "statistics_")
    assert_same_model(chunked, whole, rtol)
    assert_same_outputs(chunked, whole, X_test, rtol, output_dtype(case, dtype))


@pytest.mark.parametrize("first", [np.float32, np.float64])
@pytest.mark.parametrize("container", ["C", "csr"])
@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.label == "default" and c.data in ("counts", "gaussian")],
    ids=str,
)
def test_chunks_of_either_dtype_match_reference(case, container, first):
    # Chunks of float32 and float64 in turn: a model keeps the dtype of the
    # data it was first fitted on (GaussianNB's attributes and outputs).
    X, y, sample_weight, X_test = training(case, container, np.float64, True)
    other = np.float64 if first == np.float32 else np.float32
    fast = getattr(fastnb, case.name)(**case.params)
    oracle = getattr(reference, case.name)(**case.params)
    bounds = zip(CUTS[:-1], CUTS[1:], strict=True)
    for (start, stop), dtype in zip(bounds, [first, other, other], strict=True):
        for model in (fast, oracle):
            model.partial_fit(
                X[start:stop].astype(dtype),
                y[start:stop],
                classes=LABELS,
                sample_weight=sample_weight[start:stop],
            )
    assert_same_model(fast, oracle, tol(np.float32))
    assert_same_outputs(
        fast, oracle, X_test.astype(first), tol(np.float32), output_dtype(case, first)
    )
