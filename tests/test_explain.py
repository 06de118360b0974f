"""Reading a model: decisions by a cost matrix.

That 0-1 costs give predict is an invariant (test_invariants.py). Here: the
cost rule against NumPy, its ties, and its errors.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

import fastnb

from _helpers import CASES, as_container, case_params


@pytest.mark.parametrize(
    ("case", "dtype", "container"),
    case_params(containers=("dense_c", "csr"), other_dtypes_in=()),
)
def test_cost_picks_the_least_expected_cost(case, dtype, container):
    X, y, w = case.make(seed=4)
    X = as_container(X, container, dtype)
    model = case.estimator().fit(X, y, sample_weight=w)
    rng = np.random.default_rng(0)
    cost = rng.uniform(0.0, 5.0, size=(3, 3))
    expected_cost = model.predict_proba(X).astype(np.float64) @ cost
    ordered = np.sort(expected_cost, axis=1)
    clear = ordered[:, 1] - ordered[:, 0] > 1e-9 * ordered[:, 1]
    assert clear.mean() > 0.9
    predicted = model.predict(X, cost=cost)
    assert predicted.dtype == model.classes_.dtype
    np.testing.assert_array_equal(
        predicted[clear], model.classes_[np.argmin(expected_cost, axis=1)][clear]
    )
    # A cost only for missing one class moves predictions towards it.
    towards_c = np.ones((3, 3)) - np.eye(3)
    towards_c[2, :2] = 50.0
    assert (model.predict(X, cost=towards_c) == "c").sum() > (
        model.predict(X) == "c"
    ).sum()


def test_cost_ties_go_to_the_most_probable_then_the_first():
    X = np.array([[4, 0, 0], [0, 4, 0], [0, 0, 4], [2, 2, 1]])
    model = fastnb.MultinomialNB().fit(X, [0, 1, 2, 2])
    # Every class costs the same: the most probable.
    np.testing.assert_array_equal(
        model.predict(X, cost=np.ones((3, 3))), model.predict(X)
    )
    # Class 1 is never best and 0, 2 tie (equal columns): the most
    # probable of them if it is one, else the first.
    cost = np.array([[0.0, 9, 0], [0, 9, 0], [0, 9, 0]])
    np.testing.assert_array_equal(model.predict(X, cost=cost), [0, 0, 2, 2])


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        (np.zeros((2, 2)), "shape \\(n_classes, n_classes\\) = \\(3, 3\\)"),
        (np.zeros(3), "got shape \\(3,\\)"),
        (np.where(np.eye(3), 0, np.nan), "finite"),
        (np.where(np.eye(3), 0, np.inf), "finite"),
        (np.where(np.eye(3), -1.0, 1.0), "non-negative; C\\[0, 0\\] = -1.0"),
        ([["a", "b", "c"]] * 3, "a matrix of numbers"),
    ],
)
def test_cost_is_checked(cost, message):
    X, y, _ = CASES[0].make()
    model = fastnb.MultinomialNB().fit(X, y)
    with pytest.raises(ValueError, match=message):
        model.predict(X, cost=cost)


def test_cost_is_not_changed_and_passes_through_a_pipeline():
    texts = ["cheap pills now", "meeting at noon", "win cash now", "lunch at noon"]
    labels = ["spam", "ham", "spam", "ham"]
    pipe = make_pipeline(CountVectorizer(), fastnb.MultinomialNB()).fit(texts, labels)
    cost = np.array([[0.0, 100.0], [1.0, 0.0]])  # losing a ham costs 100
    kept = cost.copy()
    message = ["cash now at noon now"]
    assert 0.5 < pipe.predict_proba(message)[0, 1] < 100 / 101
    np.testing.assert_array_equal(pipe.predict(message), ["spam"])
    np.testing.assert_array_equal(pipe.predict(message, cost=cost), ["ham"])
    np.testing.assert_array_equal(cost, kept)


def test_cost_with_dense_blocks_of_sparse_gaussian_rows():
    # Sparse rows whose zeros' terms overflow are scored in dense blocks: the
    # cost matrix is read whole by each.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300_000 // 4, 4))
    X[:, 0] += 1e160
    y = rng.integers(0, 3, size=len(X))
    model = fastnb.GaussianNB().fit(X, y)
    X_test = sp.csr_matrix(np.vstack([np.zeros((300_000, 4)), X[:10]]))
    zero_one = 1.0 - np.eye(3)
    np.testing.assert_array_equal(
        model.predict(X_test, cost=zero_one), model.predict(X_test)
    )


def test_docstring_examples():
    import doctest

    from fastnb import _base

    failed, attempted = doctest.testmod(_base, optionflags=doctest.ELLIPSIS)
    assert attempted and not failed
