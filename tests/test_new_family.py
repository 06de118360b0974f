"""A family written in this file, in the one place a new family takes
(issue 57): CONTRIBUTING.md's recipe, followed for an exponential Naive
Bayes, whose only other edit is the registry's line (here a monkeypatch of
``fastnb._registry.ESTIMATORS``).

ExponentialNB models each feature, within class c, as an exponential
distribution of rate ``rate_[c, j] = (N_c + alpha) / (S_cj + alpha)``, the
posterior mean under a Gamma(alpha, alpha) prior of a class of weight N_c
whose values of feature j sum to S_cj (positive durations: times between
events). Its statistics are the class weights and those sums; two states
add. Everything the package gives a family then works through BaseNB's
hooks: scikit-learn's estimator checks, fit and partial_fit, merge and the
state protocol, model files, and fastnb.dask on a LocalCluster.

The oracle: the rates and the joint log-likelihood
``log P(c) + sum_j (log rate_cj - rate_cj x_j)`` by hand, in NumPy.
"""

from numbers import Real
from typing import NamedTuple

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils._param_validation import Interval
from sklearn.utils.estimator_checks import parametrize_with_checks

import fastnb
from fastnb._base import BaseNB, finish_scores, fitted_statistic, fitted_table
from fastnb._labels import label_arrays
from fastnb._statistics import CLASS_COUNT, Statistic
from fastnb._validation import check_class_prior, check_values, validate_input

from _helpers import assert_same_state

# ---------------------------------------------------------------------------
# The family
# ---------------------------------------------------------------------------

SUMS = Statistic("duration_sum", ("classes", "features"))


class Durations(NamedTuple):
    """The statistics (CLASS_COUNT, SUMS) as the family reads them."""

    class_count: np.ndarray
    duration_sum: np.ndarray


class ExponentialScoring(NamedTuple):
    """What the family scores with."""

    log_prior: np.ndarray
    rate: np.ndarray
    intercept: np.ndarray


class ExponentialNB(BaseNB):
    """Naive Bayes for non-negative durations: an exponential a class and
    feature, its rate smoothed by ``alpha``."""

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "priors": ["array-like", None],
    }
    _prior_params = ("priors",)

    def __init__(self, *, alpha=1.0, priors=None):
        self.alpha = alpha
        self.priors = priors

    @classmethod
    def _uniform_prior(cls, n_classes):
        return {"priors": np.full(n_classes, 1.0 / n_classes)}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    class_count_ = fitted_statistic("class_count", "ndarray (n_classes,): weights.")
    rate_ = fitted_table("rate_", "ndarray (n_classes, n_features): the rates.")

    def _check_batch(self, X, y, reset):
        X, y = validate_input(self, X, y, dtype=np.float64, reset=reset)
        check_values(X, self, non_negative=True)
        return X, y

    def _batch_statistics(self, X, y, sample_weight, n_classes):
        # Each label entry (a row's class and weight) adds its row.
        label_ptr, label_class, label_weight = label_arrays(y, sample_weight)
        rows = (
            np.repeat(np.arange(len(X)), np.diff(label_ptr))
            if len(label_ptr)
            else np.arange(len(X))
        )
        class_count = np.bincount(label_class, label_weight, minlength=n_classes)
        sums = np.zeros((n_classes, X.shape[1]))
        np.add.at(sums, label_class, label_weight[:, None] * X[rows])
        return {"class_count": class_count, "duration_sum": sums}

    def _declared_statistics(self, statistics=None):
        return (CLASS_COUNT, SUMS)

    def _table_params(self, statistics, n_classes):
        return {
            "alpha": self.alpha,
            "priors": check_class_prior(self.priors, n_classes, name="priors"),
        }

    def _tables(self, statistics, params):
        count, sums = Durations(**statistics)
        rate = (count[:, None] + params["alpha"]) / (sums + params["alpha"])
        prior = params["priors"]
        if prior is None:
            prior = (
                count / count.sum()
                if count.sum() > 0
                else np.full_like(count, 1 / len(count))
            )
        with np.errstate(divide="ignore"):
            log_prior = np.log(prior)
        attributes = {"rate_": rate, "class_prior_": prior}
        intercept = log_prior + np.log(rate).sum(axis=1)
        return attributes, ExponentialScoring(log_prior, rate, intercept)

    def _check_X(self, X, scoring):
        X = validate_input(self, X, dtype=np.float64, reset=False)
        check_values(X, self, non_negative=True)
        return X

    def _scorer(self, scoring, sparse):
        # Scored in NumPy, by a function of the kernels' form.
        return exponential_scores, (scoring,)


def exponential_scores(X, scoring, output, out, labels, scratch, n_threads):
    """ExponentialNB's joint log-likelihoods, finished as the kernels finish
    theirs; no row refused (_check_X checked X)."""
    jll = scoring.intercept - X @ scoring.rate.T
    finish_scores(jll, output, out, labels)
    return -1


# ---------------------------------------------------------------------------
# Registered as a new family is: one line of the registry
# ---------------------------------------------------------------------------


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(fastnb._registry.ESTIMATORS, "ExponentialNB", ExponentialNB)


def durations(n_samples=300, n_features=4, seed=0):
    """Exponential durations whose rates differ by class (3 classes)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n_samples)
    rates = np.array(
        [[0.5, 1.0, 2.0, 4.0], [2.0, 1.0, 0.5, 1.0], [1.0, 4.0, 1.0, 0.25]]
    )
    X = rng.exponential(1.0 / rates[y][:, :n_features])
    return X, np.array(["short", "middle", "long"])[y]


def by_hand(X, y, X_test, alpha=1.0):
    """The rates and the joint log-likelihood of X_test, in NumPy."""
    classes = np.unique(y)
    count = np.array([(y == c).sum() for c in classes], dtype=float)
    sums = np.array([X[y == c].sum(axis=0) for c in classes])
    rate = (count[:, None] + alpha) / (sums + alpha)
    jll = np.log(count / count.sum()) + (
        np.log(rate)[None] - rate[None] * X_test[:, None]
    ).sum(axis=2)
    return rate, jll


# ---------------------------------------------------------------------------
# scikit-learn's checks, and the model by hand
# ---------------------------------------------------------------------------


@parametrize_with_checks([ExponentialNB(), ExponentialNB(alpha=0.5)])
def test_scikit_learns_estimator_checks(estimator, check):
    check(estimator)


def test_the_model_is_the_one_by_hand():
    X, y = durations()
    model = ExponentialNB().fit(X, y)
    rate, jll = by_hand(X, y, X[:20])
    assert_allclose(model.rate_, rate, rtol=1e-13)
    assert_allclose(model.predict_joint_log_proba(X[:20]), jll, rtol=1e-12)
    assert_allclose(
        model.predict_proba(X[:20]),
        np.exp(jll - np.logaddexp.reduce(jll, axis=1, keepdims=True)),
        rtol=1e-12,
    )
    assert (model.predict(X) == y).mean() > 0.5


def test_partial_fit_and_merge_give_the_fit(registered):
    X, y = durations()
    whole = ExponentialNB().fit(X, y)
    streamed = ExponentialNB()
    for rows in np.array_split(np.arange(len(X)), 3):
        streamed.partial_fit(X[rows], y[rows], classes=np.unique(y))
    halves = [
        ExponentialNB().fit(X[rows], y[rows]) for rows in (slice(150), slice(150, None))
    ]
    for model in (streamed, fastnb.merge(halves)):
        assert_allclose(model.rate_, whole.rate_, rtol=1e-13)
        assert_allclose(model.predict_proba(X), whole.predict_proba(X), rtol=1e-12)


def test_negative_durations_are_refused_and_the_model_kept():
    X, y = durations()
    model = ExponentialNB().fit(X, y)
    before = model.rate_.copy()
    bad = X.copy()
    bad[5, 2] = -1.0
    with pytest.raises(ValueError, match="Negative values"):
        model.partial_fit(bad, y)
    assert_array_equal(model.rate_, before)


# ---------------------------------------------------------------------------
# What the registry line brings: states, model files, fastnb.dask
# ---------------------------------------------------------------------------


def test_state_and_model_file(registered, tmp_path):
    X, y = durations()
    model = ExponentialNB(alpha=0.5).fit(X, y)
    again = fastnb.from_state(fastnb.get_state(model))
    assert_same_state(again._statistics, model._statistics)
    assert_array_equal(again.classes_, model.classes_)
    assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    fastnb.save(model, tmp_path / "exponential.fnb")
    loaded = fastnb.load(tmp_path / "exponential.fnb")
    assert type(loaded) is ExponentialNB and loaded.alpha == 0.5
    assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_an_unregistered_family_has_no_model_file(tmp_path):
    # Without its registry line, a state naming it is refused.
    model = ExponentialNB().fit(*durations())
    with pytest.raises(ValueError, match="Unknown estimator 'ExponentialNB'"):
        fastnb.from_state(fastnb.get_state(model))


def test_fastnb_dask_on_a_local_cluster(registered):
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    import fastnb.dask

    X, y = durations(n_samples=650)
    # (Workers in this process: they see the family, defined in this file.)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        model = fastnb.dask.dask_class(ExponentialNB)()
        model.fit(da.from_array(X, chunks=(200, -1)), da.from_array(y, chunks=200))
        proba = model.predict_proba(da.from_array(X, chunks=(200, -1))).compute()
    expected = ExponentialNB().fit(X, y)
    assert_allclose(model.rate_, expected.rate_, rtol=1e-13)
    assert_allclose(proba, expected.predict_proba(X), rtol=1e-12)
