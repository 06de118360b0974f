"""Soft labels: fit and partial_fit from each sample's class probabilities
(``class_proba=``), on every estimator.

- Probabilities of 0 and 1 fit exactly as the labels they make, bit for bit,
  with and without sample weights, in every container, on one thread and on
  several.
- Any probabilities fit as the textbook emulation does: each row repeated
  once a class, labelled with the class and weighted by its probability.
- What holds for hard labels holds for soft ones: partial_fit in parts and
  the merge of parts equal one fit, a batch's state combines, the thread
  count changes nothing, a failed fit leaves the model as it was.
- Bad class_proba gets a clear ValueError.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import fastnb
from fastnb._state import batch_state

from _helpers import (
    CASES,
    THREADED_CASES,
    THREADED_ROWS,
    as_container,
    assert_matches_reference,
    assert_same_model,
    assert_same_state,
    case_params,
    has_moments,
    tol,
)

CASE_BY_ID = {case.id: case for case in CASES}


def one_hot(y, classes):
    """The class probabilities of labels y: 1 for its class, 0 for the others."""
    return (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(float)


def eighths(rng, n_samples, n_classes):
    """Random class probabilities in multiples of 1/8 (their weighted sums are
    exact in any order), about a third of them 0, some rows all one class."""
    return rng.multinomial(8, np.full(n_classes, 1 / n_classes), n_samples) / 8


def soft_case(case, n_samples=60, seed=0):
    """X, class probabilities (eighths), classes and weights (eighths) of a case."""
    X, y, _ = case.make(n_samples=n_samples, seed=seed)
    rng = np.random.default_rng(seed + 1)
    classes = np.unique(y)
    proba = eighths(rng, n_samples, len(classes))
    weights = rng.integers(1, 24, n_samples) / 8
    return X, proba, classes, weights


def as_repeated_rows(X, proba, classes, weights):
    """Soft labels as the hard labels of repeated rows: each row once for each
    class of positive probability, weighted by its weight times that."""
    rows, columns = np.nonzero(proba)
    if hasattr(X, "iloc"):
        repeated = X.iloc[rows].reset_index(drop=True)
    else:
        repeated = X[rows]
    return repeated, classes[columns], weights[rows] * proba[rows, columns]


# The statistics of all samples, unweighted (GaussianNB's variance
# smoothing scale), count a repeated row again.
UNWEIGHTED = ("sample_count", "sample_mean", "sample_ssd", "sample_missing_count")


def class_statistics(model):
    state = fastnb.get_state(model).statistics
    return {
        key: value
        for key, value in state.items()
        if key.rsplit("/", 1)[-1] not in UNWEIGHTED
    }


@pytest.mark.parametrize(("case", "dtype", "container"), case_params())
@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
def test_one_hot_probabilities_fit_as_their_labels_bit_for_bit(
    case, dtype, container, weighted
):
    X, y, weights = case.make()
    X = as_container(X, container, dtype)
    classes = np.unique(y)
    weights = weights if weighted else None
    hard = case.estimator().fit(X, y, sample_weight=weights)
    soft = case.estimator().fit(
        X, class_proba=one_hot(y, classes), classes=classes, sample_weight=weights
    )
    assert_same_state(soft, hard)


@pytest.mark.parametrize("case", THREADED_CASES, ids=lambda case: case.id)
def test_one_hot_probabilities_on_several_threads(case):
    X, y, weights = case.make(n_samples=THREADED_ROWS)
    classes = np.unique(y)
    for container in ("csr",) if case.sparse else ():
        X_sparse = as_container(X, container)
        hard = case.estimator().fit(X_sparse, y, sample_weight=weights)
        soft = case.estimator().fit(
            X_sparse,
            class_proba=one_hot(y, classes),
            sample_weight=weights,
            classes=classes,
        )
        assert_same_state(soft, hard)
    hard = case.estimator().fit(X, y, sample_weight=weights)
    soft = case.estimator().fit(
        X, class_proba=one_hot(y, classes), classes=classes, sample_weight=weights
    )
    assert_same_state(soft, hard)


def test_one_class_csr_counts_by_blocks_of_features(monkeypatch):
    # Far fewer classes than threads (one on eight): MultinomialNB counts
    # CSR rows by blocks of features, each stored value once a label of its
    # row.
    monkeypatch.setattr(fastnb._discrete, "effective_n_threads", lambda work=None: 8)
    rng = np.random.default_rng(3)
    X = sp.random(THREADED_ROWS, 50, density=0.1, format="csr", random_state=rng)
    y = np.zeros(X.shape[0], dtype=int)
    hard = fastnb.MultinomialNB().fit(X, y)
    soft = fastnb.MultinomialNB().fit(X, class_proba=np.ones((X.shape[0], 1)))
    assert_same_state(soft, hard)


@pytest.mark.parametrize(("case", "dtype", "container"), case_params())
def test_soft_labels_fit_as_repeated_rows(case, dtype, container):
    X, proba, classes, weights = soft_case(case)
    repeated, labels, repeated_weights = as_repeated_rows(X, proba, classes, weights)
    X = as_container(X, container, dtype)
    repeated = as_container(repeated, container, dtype)
    soft = case.estimator().fit(
        X, class_proba=proba, classes=classes, sample_weight=weights
    )
    emulated = case.estimator().fit(repeated, labels, sample_weight=repeated_weights)
    # Counts of eighths are exact in any order; moments to rounding.
    assert_same_state(class_statistics(soft), class_statistics(emulated), rtol=1e-10)
    assert_same_state(soft.classes_, emulated.classes_)
    # And the NumPy reference, fitted to the repeated rows. (Not where the
    # unweighted statistics of all samples, which count a repeated row
    # again, shape the model: GaussianNB's variance smoothing.)
    oracle = case.reference()
    if oracle is not None and not has_moments(soft):
        oracle.fit(repeated, labels, sample_weight=repeated_weights)
        assert_matches_reference(soft, oracle, X, tol(dtype))


@pytest.mark.parametrize("container", ["dense_c", "csr", "csc"])
def test_multinomial_counts_are_the_weighted_probabilities_times_X(container):
    rng = np.random.default_rng(4)
    X = rng.poisson(2.0, (500, 30)).astype(float)
    proba = rng.dirichlet(np.ones(4), 500)
    proba[rng.random(500) < 0.3] = np.eye(4)[2]
    weights = rng.uniform(0.5, 2.0, 500)
    model = fastnb.MultinomialNB().fit(
        as_container(X, container), class_proba=proba, sample_weight=weights
    )
    responsibility = proba * weights[:, None]
    np.testing.assert_allclose(model.feature_count_, responsibility.T @ X, rtol=1e-12)
    np.testing.assert_allclose(model.class_count_, responsibility.sum(axis=0))
    np.testing.assert_array_equal(model.classes_, np.arange(4))


def test_gaussian_moments_are_the_probability_weighted_moments():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 6)) * [1, 2, 3, 4, 5, 6]
    proba = rng.dirichlet(np.ones(3), 400)
    model = fastnb.GaussianNB(var_smoothing=0.0).fit(X, class_proba=proba)
    weight = proba.sum(axis=0)
    mean = proba.T @ X / weight[:, None]
    var = np.stack([proba[:, k] @ (X - mean[k]) ** 2 / weight[k] for k in range(3)])
    np.testing.assert_allclose(model.theta_, mean, rtol=1e-12)
    np.testing.assert_allclose(model.var_, var, rtol=1e-12)
    # The unweighted moments of all samples (variance smoothing's scale) are
    # those of the rows, once each.
    state = fastnb.get_state(model).statistics
    np.testing.assert_allclose(state["sample_mean"], X.mean(axis=0), rtol=1e-12)


def test_categorical_counts_are_the_probabilities_of_each_category():
    rng = np.random.default_rng(6)
    X = rng.integers(0, 3, (300, 4))
    proba = rng.dirichlet(np.ones(2), 300)
    model = fastnb.CategoricalNB().fit(X, class_proba=proba)
    for j in range(4):
        expected = np.stack([proba[X[:, j] == v].sum(axis=0) for v in range(3)], 1)
        np.testing.assert_allclose(model.category_count_[j], expected, rtol=1e-12)


def test_exact_kernel_densities_keep_a_point_a_class_of_its_row():
    X = np.array([[0.0], [1.0], [2.0]])
    proba = np.array([[0.25, 0.75], [1.0, 0.0], [0.0, 1.0]])
    model = fastnb.KernelDensityNB(algorithm="exact").fit(X, class_proba=proba)
    state = fastnb.get_state(model).statistics
    np.testing.assert_array_equal(state["points"], [[0.0], [1.0], [0.0], [2.0]])
    np.testing.assert_array_equal(
        state["point_weight"], [[0.25, 1.0, 0, 0], [0, 0, 0.75, 1.0]]
    )
    np.testing.assert_array_equal(model.class_count_, [1.25, 1.75])


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_partial_fit_in_parts_equals_one_fit(case):
    X, proba, classes, weights = soft_case(case, n_samples=90)
    whole = case.estimator().fit(
        X, class_proba=proba, classes=classes, sample_weight=weights
    )
    model = case.estimator()
    for part in np.array_split(np.arange(90), 3):
        model.partial_fit(
            X.iloc[part] if hasattr(X, "iloc") else X[part],
            classes=classes,
            class_proba=proba[part],
            sample_weight=weights[part],
        )
    assert_same_model(model, whole, X, rtol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_merged_parts_and_batch_states_equal_one_fit(case):
    X, proba, classes, weights = soft_case(case, n_samples=90)
    whole = case.estimator().fit(
        X, class_proba=proba, classes=classes, sample_weight=weights
    )
    halves = (np.arange(45), np.arange(45, 90))

    def rows(part):
        return X.iloc[part] if hasattr(X, "iloc") else X[part]

    fitted = [
        case.estimator().fit(
            rows(part),
            class_proba=proba[part],
            classes=classes,
            sample_weight=weights[part],
        )
        for part in halves
    ]
    assert_same_model(fastnb.merge(fitted), whole, X, rtol=1e-10)
    states = [
        batch_state(
            case.estimator(),
            rows(part),
            class_proba=proba[part],
            classes=classes,
            sample_weight=weights[part],
        )
        for part in halves
    ]
    combined = fastnb.from_state(fastnb.combine_states(*states))
    assert_same_model(combined, whole, X, rtol=1e-10)


@pytest.mark.parametrize("case", THREADED_CASES, ids=lambda case: case.id)
def test_the_thread_count_changes_nothing(case):
    X, proba, classes, weights = soft_case(case, n_samples=THREADED_ROWS)
    fits = []
    for n_threads in (1, None):
        with threadpool_limits(n_threads):
            fits.append(
                case.estimator().fit(
                    X, class_proba=proba, classes=classes, sample_weight=weights
                )
            )
    assert_same_state(fits[0], fits[1])


def test_classes_name_the_columns_in_any_order():
    rng = np.random.default_rng(7)
    X = rng.poisson(1.0, (50, 5)).astype(float)
    proba = rng.dirichlet(np.ones(3), 50)
    ordered = fastnb.MultinomialNB().fit(X, class_proba=proba, classes=["a", "b", "c"])
    shuffled = fastnb.MultinomialNB().fit(
        X, class_proba=proba[:, [2, 0, 1]], classes=["c", "a", "b"]
    )
    np.testing.assert_array_equal(shuffled.classes_, ["a", "b", "c"])
    assert_same_state(shuffled, ordered)
    # A sparse class_proba is taken as it is, its stored zeros left out.
    sparse = fastnb.MultinomialNB().fit(
        X, class_proba=sp.csr_array(proba), classes=["a", "b", "c"]
    )
    assert_same_state(sparse, ordered)


def test_partial_fit_takes_soft_and_hard_batches():
    rng = np.random.default_rng(8)
    X = rng.poisson(1.0, (60, 5)).astype(float)
    y = rng.integers(0, 3, 60)
    model = fastnb.MultinomialNB().partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    model.partial_fit(X[30:], class_proba=one_hot(y[30:], [0, 1, 2]))
    assert_same_state(
        model.feature_count_, fastnb.MultinomialNB().fit(X, y).feature_count_
    )


P = np.array([[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]])
X3 = np.ones((3, 2))

BAD_SOFT_LABELS = {
    "y and class_proba": (
        {"y": [0, 1, 1], "class_proba": P},
        "Pass either y or class_proba, not both",
    ),
    "rows of another count": (
        {"class_proba": P[:2]},
        r"must be of shape \(n_samples, n_classes\) = \(3, 2\); got \(2, 2\)",
    ),
    "a column a class": (
        {"class_proba": P, "classes": ["a", "b", "c"]},
        r"= \(3, 3\); got \(3, 2\)",
    ),
    "one dimension": ({"class_proba": P[:, 0]}, "class_proba must be of shape"),
    "a row not summing to 1": (
        {"class_proba": P * 0.5},
        "Each row of class_proba must sum to 1; row 0 sums to 0.5",
    ),
    "a negative probability": (
        {"class_proba": [[1.5, -0.5], [1, 0], [0, 1]]},
        "class_proba must hold probabilities, from 0 to 1",
    ),
    "NaN": ({"class_proba": [[np.nan, 1], [1, 0], [0, 1]]}, "NaN or infinity"),
    "words": ({"class_proba": [["a", "b"]] * 3}, "class_proba must be an array"),
    "classes repeated": (
        {"class_proba": P, "classes": ["a", "a"]},
        "classes must be distinct labels, one a column of class_proba",
    ),
    "classes without class_proba": (
        {"y": [0, 1, 1], "classes": [0, 1]},
        "classes is the class of each column of class_proba",
    ),
    "no weight at all": (
        {"class_proba": P, "sample_weight": np.zeros(3)},
        "sample_weight is zero for every sample",
    ),
}


@pytest.mark.parametrize(
    ("arguments", "message"), BAD_SOFT_LABELS.values(), ids=BAD_SOFT_LABELS.keys()
)
def test_bad_soft_labels_are_refused_and_the_model_kept(arguments, message):
    model = fastnb.MultinomialNB().fit(X3, [0, 1, 1])
    before = fastnb.get_state(model)
    with pytest.raises(ValueError, match=message):
        model.fit(X3, **arguments)
    assert_same_state(fastnb.get_state(model), before)


def test_partial_fit_needs_the_models_classes_as_columns():
    model = fastnb.MultinomialNB().partial_fit(X3, [0, 1, 2], classes=[0, 1, 2])
    before = fastnb.get_state(model)
    with pytest.raises(ValueError, match=r"= \(3, 3\); got \(3, 2\)"):
        model.partial_fit(X3, class_proba=P)
    assert_same_state(fastnb.get_state(model), before)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        fastnb.MultinomialNB().partial_fit(X3, class_proba=P)


def test_a_soft_fit_saves_and_loads(tmp_path):
    case = CASE_BY_ID["GaussianNB"]
    X, proba, classes, weights = soft_case(case)
    model = case.estimator().fit(X, class_proba=proba, classes=classes)
    fastnb.save(model, tmp_path / "soft.fnb")
    loaded = fastnb.load(tmp_path / "soft.fnb")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
