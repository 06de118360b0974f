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

The cases are ``_helpers.Case`` objects, ``REFERENCE_CASES``: a grid of
parameters for every estimator (unsmoothed tables, m-estimates, alpha per
feature, given priors, GaussianNB's variance options), each on a kind of
data made here for what it exercises: -inf tables and certain features from
unsmoothed counts, a feature constant within a class or everywhere, later
chunks bringing new categories, codes and words never seen at predict.
They are given in ``_helpers``' containers (dense C or F order, CSR and CSC
where the estimator takes sparse input), float32 or float64 (category codes
as floats too, raw values as objects), with or without sample weights (some
of them zero). Disagreements found are listed in ``known_disagreement`` and
marked as strict xfails.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastnb

from _helpers import (
    DENSE,
    ESTIMATOR_NAMES,
    OUTPUTS,
    SPARSE,
    Case,
    as_container,
    case_params,
    public_attributes,
    random_counts,
    scores_tol,
    tol,
)

LABELS = np.array(["ant", "bee", "cat"])
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


def draw_classes(rng):
    """A class index of N_SAMPLES rows, shuffled, classes of 2, 3 and 4 ninths.

    Classes of different sizes: two classes with the same counts in a row's
    categories would tie exactly, and rounding would pick either.
    """
    sizes = np.array([2, 3, 4]) * N_SAMPLES // 9
    return rng.permutation(np.repeat(np.arange(len(LABELS)), sizes))


def per_feature(n_features, low=0.1, high=2.0):
    """A parameter with a different value for each feature."""
    return np.linspace(low, high, n_features)


# ---------------------------------------------------------------------------
# Data: dense float64 (or object) training X of the rows of a class index, as
# every Case's data maker takes them, and the rows to predict besides X's.
# ---------------------------------------------------------------------------


def count_data(rng, index, n_classes, scale=1.0):
    """Non-negative counts, fractional in a third of the columns.

    Feature 0 never occurs in the first class and feature 1 always occurs
    in the second, so that unsmoothed tables hold -inf (log 0) and certain
    features (p = 1), and some samples are impossible in some class.
    """
    X = random_counts(rng, np.full((len(index), N_COUNT_FEATURES), 1.2))
    X[index == 0, 0] = 0.0
    X[index == 1, 1] = np.maximum(X[index == 1, 1], 1.0)
    return X * scale


def gaussian_data(rng, index, n_classes, scale=1.0):
    """Normal features, shifted and scaled by class, away from zero.

    The last feature is constant within the first class (variance 0 there).
    """
    k = index[:, np.newaxis]
    noise = rng.normal(size=(len(index), N_GAUSSIAN_FEATURES))
    X = 5.0 + 2.0 * k + (1.0 + k) * noise
    X[index == 0, -1] = 3.0
    return X * scale


def constant_data(rng, index, n_classes, scale=1.0):
    """Every feature constant: epsilon_ is var_smoothing itself."""
    return np.tile(np.array([1.5, -2.0, 4.0]), (len(index), 1)) * scale


def code_data(rng, index, n_classes, scale=1.0):
    """Category codes, as floats; the last third of the rows brings higher codes."""
    n_samples = len(index)
    X = np.column_stack([rng.integers(0, n, n_samples) for n in CARDINALITIES])
    later = np.arange(n_samples) >= 2 * n_samples // 3
    X[later] += rng.integers(0, LATER_CODES + 1, size=(later.sum(), len(CARDINALITIES)))
    return X.astype(np.float64)


def string_data(rng, index, n_classes, scale=1.0):
    """Raw values: two columns of words and one of booleans, as objects.

    The last third of the rows brings new words, some sorting before the
    earlier ones (so chunks append them out of sorted order).
    """
    n_samples = len(index)
    later = 2 * n_samples // 3
    first = WORDS[rng.integers(2, 5, n_samples)]
    first[later:] = WORDS[rng.integers(0, 6, n_samples - later)]
    second = WORDS[rng.integers(3, 7, n_samples)]
    flags = rng.random(n_samples) < 0.4
    X = np.column_stack([first, second, flags]).astype(object)
    X[:, 2] = flags  # Python booleans, not the strings of the stack
    return X


# MixedNB columns: gaussian, categorical codes, multinomial, poisson, bernoulli.
MIXED_FAMILIES = {
    "gaussian": [0, 1, 2],
    "categorical": [3, 4],
    "multinomial": [5, 6, 7],
    "poisson": [8, 9],
    "bernoulli": [10, 11],
}


def mixed_data(rng, index, n_classes, scale=1.0):
    """The columns of MIXED_FAMILIES, in a float array."""
    gaussian = gaussian_data(rng, index, n_classes, scale)
    codes = code_data(rng, index, n_classes)
    counts = count_data(rng, index, n_classes, scale)
    return np.column_stack([gaussian[:, :3], codes[:, :2], counts[:, 2:9]])


# MixedNB columns of an object array: gaussian numbers, words, counts.
MIXED_OBJECT_FAMILIES = {
    "gaussian": [0, 1],
    "categorical": [2, 3],
    "multinomial": [4, 5],
}


def mixed_object_data(rng, index, n_classes, scale=1.0):
    """The columns of MIXED_OBJECT_FAMILIES, in an object array."""
    gaussian = gaussian_data(rng, index, n_classes, scale)
    words = string_data(rng, index, n_classes)
    counts = count_data(rng, index, n_classes, scale)
    X = np.column_stack([gaussian[:, :2], words[:, :2], counts[:, 3:5]])
    return X.astype(object)


def rows_to_predict(data, rng, X):
    """X made by ``data``, then rows to predict that its training rows lack.

    Normal rows between the classes; codes and words never seen in training,
    which make every class impossible in unsmoothed tables.
    """
    if data is gaussian_data:
        new = 5.0 + 4.0 * rng.random((30, N_GAUSSIAN_FEATURES))
    elif data is code_data:
        new = np.array([[MOST_CODES, 0, 1, 0], [0, 1, MOST_CODES + 7, 2]], float)
    elif data is string_data:
        new = np.array([["mist", "sun", True], ["fog", "drizzle", False]], object)
    elif data is mixed_data:
        new = X[:2].copy()
        new[:, 3:5] = [[MOST_CODES, 0], [1, MOST_CODES + 3]]
    elif data is mixed_object_data:
        new = X[:2].copy()
        new[:, 2:4] = [["mist", "sun"], ["fog", "drizzle"]]
    else:
        return X
    return np.vstack([X, new])


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

# The kinds of data: the maker of X and what X may be given as.
KINDS = {
    "counts": {"data": count_data},
    "gaussian": {"data": gaussian_data},
    "continuous": {"data": gaussian_data, "containers": DENSE},
    "constant dense": {"data": constant_data, "containers": DENSE},
    "constant": {"data": constant_data},
    "codes": {"data": code_data},
    "strings": {"data": string_data, "dtypes": (object,), "containers": DENSE},
    "mixed": {"data": mixed_data, "containers": DENSE},
    "mixed objects": {
        "data": mixed_object_data,
        "dtypes": (object,),
        "containers": DENSE,
    },
}


def variant(name, kind, label, params=None):
    """The Case of estimator ``name`` with ``params`` (``label``) on a kind of data."""
    return Case(f"{name}-{kind}-{label}", name, params or {}, **KINDS[kind])


N_CATEGORICAL_FEATURES = len(CARDINALITIES)

REFERENCE_CASES = [
    variant("MultinomialNB", "counts", "default"),
    variant(
        "MultinomialNB",
        "counts",
        "alpha per feature",
        {"alpha": per_feature(N_COUNT_FEATURES)},
    ),
    variant(
        "MultinomialNB", "counts", "unsmoothed", {"alpha": 0.0, "fit_prior": False}
    ),
    variant(
        "MultinomialNB",
        "counts",
        "alpha raised, prior given",
        {"alpha": 1e-12, "force_alpha": False, "class_prior": given_prior()},
    ),
    variant(
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
    variant("ComplementNB", "counts", "default"),
    variant(
        "ComplementNB",
        "counts",
        "alpha per feature, norm",
        {"alpha": per_feature(N_COUNT_FEATURES), "norm": True},
    ),
    variant("ComplementNB", "counts", "prior given", {"class_prior": given_prior()}),
    variant("BernoulliNB", "counts", "default"),
    variant(
        "BernoulliNB",
        "counts",
        "binarize 1, alpha per feature",
        {"binarize": 1.0, "alpha": per_feature(N_COUNT_FEATURES), "fit_prior": False},
    ),
    # Certain features (p = 1) and impossible ones (p = 0).
    variant("BernoulliNB", "counts", "unsmoothed", {"alpha": 0.0}),
    variant("BernoulliNB", "counts", "m-estimate", {"alpha": fastnb.MEstimate(m=2.0)}),
    variant(
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
    variant("PoissonNB", "counts", "default"),
    variant("PoissonNB", "counts", "unsmoothed", {"alpha": 0.0}),
    variant(
        "PoissonNB",
        "counts",
        "alpha per feature, prior given",
        {"alpha": per_feature(N_COUNT_FEATURES), "class_prior": given_prior()},
    ),
    variant("GaussianNB", "gaussian", "default"),
    variant("GaussianNB", "gaussian", "unbiased", {"var_estimator": "unbiased"}),
    variant("GaussianNB", "gaussian", "tied", {"var_type": "tied"}),
    variant(
        "GaussianNB",
        "gaussian",
        "tied unbiased, priors given",
        {"var_type": "tied", "var_estimator": "unbiased", "priors": given_prior()},
    ),
    variant(
        "GaussianNB",
        "gaussian",
        "spherical unbiased",
        {"var_type": "spherical", "var_estimator": "unbiased", "var_smoothing": 1e-3},
    ),
    variant("GaussianNB", "constant", "default"),
    variant("CategoricalNB", "codes", "default"),
    variant(
        "CategoricalNB",
        "codes",
        "alpha per feature",
        {"alpha": per_feature(N_CATEGORICAL_FEATURES)},
    ),
    variant(
        "CategoricalNB",
        "codes",
        "min_categories",
        {"alpha": 0.5, "min_categories": [3, 9, 2, 10], "fit_prior": False},
    ),
    # Codes never seen make every class impossible.
    variant(
        "CategoricalNB",
        "codes",
        "unsmoothed",
        {"alpha": 0.0, "class_prior": given_prior()},
    ),
    variant("CategoricalNB", "codes", "m-estimate", {"alpha": fastnb.MEstimate(m=3.0)}),
    variant(
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
    variant("CategoricalNB", "strings", "default"),
    # More categories than values: codes standing for no value.
    variant(
        "CategoricalNB",
        "strings",
        "alpha per feature, min_categories",
        {"alpha": [0.5, 2.0, 1.0], "min_categories": 7},
    ),
    variant(
        "CategoricalNB", "strings", "m-estimate", {"alpha": fastnb.MEstimate(m=1.5)}
    ),
    variant("KernelDensityNB", "continuous", "default"),
    variant(
        "KernelDensityNB",
        "continuous",
        "silverman, adjust, coarse grid, prior given",
        {
            "bandwidth": "silverman",
            "adjust": 0.6,
            "n_grid": 40,
            "priors": given_prior(),
        },
    ),
    variant(
        "KernelDensityNB",
        "continuous",
        "bandwidth per feature",
        {"bandwidth": per_feature(N_GAUSSIAN_FEATURES, 0.2, 1.5)},
    ),
    variant(
        "KernelDensityNB",
        "continuous",
        "exact",
        {"algorithm": "exact", "bandwidth": "silverman"},
    ),
    # Every feature constant: the bandwidth falls back to 1.
    variant("KernelDensityNB", "constant dense", "default"),
    variant("MixedNB", "mixed", "default", {"families": MIXED_FAMILIES}),
    variant(
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
    variant(
        "MixedNB",
        "mixed",
        "kde family",
        {
            "families": {**MIXED_FAMILIES, "gaussian": [0], "kde": [1, 2]},
            "kde_params": {"bandwidth": "silverman", "n_grid": 200},
        },
    ),
    variant(
        "MixedNB",
        "mixed objects",
        "prior given",
        {"families": MIXED_OBJECT_FAMILIES, "class_prior": given_prior()},
    ),
]


def known_disagreement(case, dtype, container):
    """Why fastnb disagrees with the reference on this input, or None.

    Each is a finding, reported with a reproduction; its strict xfail turns
    into a failure when fastnb is fixed, and the entry goes. None at present.
    """
    return None


def combinations(with_known_disagreements):
    """(case, dtype, container) parameters; known disagreements marked xfail.

    Every dtype of a case in every container it takes.
    """
    params = case_params(REFERENCE_CASES, other_dtypes_in=DENSE + SPARSE)
    if not with_known_disagreements:
        return params
    marked = []
    for param in params:
        reason = known_disagreement(*param.values)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        marked.append(pytest.param(*param.values, id=param.id, marks=marks))
    return marked


COMBINATIONS = combinations(with_known_disagreements=False)


def test_cases_cover_every_estimator():
    # The invariant holds for all seven, in every container they accept.
    names = {case.name for case in REFERENCE_CASES}
    assert names == set(ESTIMATOR_NAMES)
    for name in names:
        sparse = getattr(fastnb, name)().__sklearn_tags__().input_tags.sparse
        containers = {
            c for case in REFERENCE_CASES if case.name == name for c in case.containers
        }
        assert (set(SPARSE) <= containers) == sparse, name


# ---------------------------------------------------------------------------
# Fitting both the same way
# ---------------------------------------------------------------------------


def training(case, dtype, container, weighted, seed=0):
    """X, y, sample weights and X to predict for a case, in the container."""
    rng = np.random.default_rng(seed)
    index = draw_classes(rng)
    X = case.data(rng, index, len(LABELS))
    X_test = rows_to_predict(case.data, rng, X)
    sample_weight = None
    if weighted:
        sample_weight = rng.uniform(0.2, 3.0, len(index))
        sample_weight[::7] = 0.0
    return (
        as_container(X, container, dtype),
        LABELS[index],
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
    fast = fit(case.estimator(), mode, X, y, sample_weight)
    oracle = fit(case.reference(), mode, X, y, sample_weight)
    return fast, oracle


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------


def attribute_names(model):
    """The public fitted attributes a model has, by name, but statistics_."""
    return sorted(set(public_attributes(model)) - {"statistics_"})


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
    names = attribute_names(fast)
    assert names == attribute_names(oracle), where
    assert "classes_" in names and "n_features_in_" in names, where
    for name in names:
        assert_same(getattr(fast, name), getattr(oracle, name), rtol, where + name)


def output_dtype(case, dtype):
    """Outputs are float64, except GaussianNB's and KernelDensityNB's from
    float32 X and model."""
    if case.name in ("GaussianNB", "KernelDensityNB") and dtype == np.float32:
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


# ---------------------------------------------------------------------------
# The invariant
# ---------------------------------------------------------------------------

CASE_INPUTS = ("case", "dtype", "container")


# The tests marked "emulated", those that run fastnb's kernels, also run on the
# aarch64 wheel under qemu-user (.ci/run); the test of the reference alone
# does not.
@pytest.mark.emulated
@pytest.mark.filterwarnings("ignore:alpha too small:UserWarning")
@pytest.mark.parametrize("mode", ["fit", "partial_fit"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(CASE_INPUTS, combinations(with_known_disagreements=True))
def test_matches_reference(case, dtype, container, weighted, mode):
    X, y, sample_weight, X_test = training(case, dtype, container, weighted)
    fast, oracle = fit_pair(case, mode, X, y, sample_weight)
    rtol = tol(dtype)
    assert_same_model(fast, oracle, rtol)
    assert_same_outputs(
        fast, oracle, X_test, scores_tol(fast, rtol), output_dtype(case, dtype)
    )


@pytest.mark.emulated
@pytest.mark.filterwarnings("ignore:alpha too small:UserWarning")
@pytest.mark.parametrize(CASE_INPUTS, COMBINATIONS)
def test_statistics_match_reference(case, dtype, container):
    rtol = tol(dtype)
    # Weighted or not, fitted or partially fitted: four tests in one.
    for weighted in [False, True]:
        X, y, sample_weight, _ = training(case, dtype, container, weighted)
        for mode in ["fit", "partial_fit"]:
            fast, oracle = fit_pair(case, mode, X, y, sample_weight)
            statistics = fastnb.get_state(fast).statistics
            where = f"{mode}, {'weighted' if weighted else 'unweighted'}: "
            assert sorted(statistics) == sorted(oracle.statistics_), where
            for key, expected in oracle.statistics_.items():
                assert_same(statistics[key], expected, rtol, where + key)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    CASE_INPUTS,
    [p for p in COMBINATIONS if p.values[1] is not object],
)
def test_reference_chunks_equal_reference_fit(case, dtype, container, weighted):
    # The premise of crossing partial_fit: the reference's combine step of
    # the chunks' statistics gives the statistics of the whole. (Not for raw
    # values, whose codes follow the order in which the chunks bring them.)
    X, y, sample_weight, X_test = training(case, dtype, container, weighted)
    whole = fit(case.reference(), "fit", X, y, sample_weight)
    chunked = fit(case.reference(), "partial_fit", X, y, sample_weight)
    rtol = tol(dtype)
    assert_same(chunked.statistics_, whole.statistics_, rtol, "statistics_")
    assert_same_model(chunked, whole, rtol)
    assert_same_outputs(chunked, whole, X_test, rtol, output_dtype(case, dtype))


@pytest.mark.emulated
@pytest.mark.parametrize("first", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("case", "container"),
    [
        pytest.param(case, container, id=f"{case.id}-{container}")
        for case in REFERENCE_CASES
        if not case.params and case.data in (count_data, gaussian_data)
        for container in ["dense_c", "csr"]
        if container in case.containers
    ],
)
def test_chunks_of_either_dtype_match_reference(case, container, first):
    # Chunks of float32 and float64 in turn: a model keeps the dtype of the
    # data it was first fitted on (GaussianNB's attributes and outputs).
    X, y, sample_weight, X_test = training(case, np.float64, container, True)
    other = np.float64 if first == np.float32 else np.float32
    fast, oracle = case.estimator(), case.reference()
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
