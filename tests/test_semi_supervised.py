"""fastnb.SemiSupervisedNB: EM over labelled and unlabelled samples (Nigam et
al. 2000).

- Each EM step is the textbook one, checked against scikit-learn's
  estimators fitted to repeated rows (each unlabelled row once a class,
  weighted by its probability times lambda).
- The log-likelihood path is the model's, rises with each M-step (nearly
  unsmoothed, where EM maximises it), and EM stops on tol or max_iter.
- Several components a class; every fastnb family; no unlabelled samples;
  scikit-learn's conventions (-1, object labels, clone, pipelines).
- 20 Newsgroups: test_real_data.py.
"""

import doctest
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn import naive_bayes as sk
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils._param_validation import InvalidParameterError

import fastnb
from fastnb import SemiSupervisedNB, _semi_supervised

from _helpers import CASES, assert_same_state, take_rows


def topic_counts(n_samples=300, n_features=40, n_classes=3, seed=0, shape=0.5):
    """Word counts of documents of a few topics, their labels; the topics'
    word rates are Gamma(shape, 1 / shape): alike for a large shape."""
    rng = np.random.default_rng(seed)
    rates = rng.gamma(shape, 1 / shape, (n_classes, n_features))
    y = rng.integers(0, n_classes, n_samples)
    return rng.poisson(rates[y] * rng.uniform(0.5, 2.0, (n_samples, 1))), y


def hide_labels(y, share=0.8, seed=1):
    """y with ``share`` of its labels replaced by -1 (unlabelled)."""
    y = np.array(y, dtype=object if np.asarray(y).dtype.kind in "OUS" else None)
    rng = np.random.default_rng(seed)
    hidden = rng.random(len(y)) < share
    # Every class keeps a label.
    for label in np.unique(y):
        hidden[np.flatnonzero(y == label)[0]] = False
    y[hidden] = -1
    return y


def em_by_repeated_rows(estimator, X, y, n_steps, unlabeled_weight):
    """EM as the textbook emulates it with any estimator that takes weights:
    fit the labelled rows; then each step fits them together with every
    unlabelled row repeated once a class, weighted by lambda times the
    class's probability under the model before."""
    unlabeled = y == -1
    X_labeled, y_labeled = X[~unlabeled], y[~unlabeled].astype(int)
    X_unlabeled = X[unlabeled]
    model = clone(estimator).fit(X_labeled, y_labeled)
    for _ in range(n_steps):
        proba = model.predict_proba(X_unlabeled)
        rows, columns = np.nonzero(proba)
        model = clone(estimator).fit(
            np.vstack([X_labeled, X_unlabeled[rows]]),
            np.r_[y_labeled, model.classes_[columns]],
            sample_weight=np.r_[
                np.ones(len(y_labeled)), unlabeled_weight * proba[rows, columns]
            ],
        )
    return model


COUNTS = ["feature_count_", "class_count_"]


@pytest.mark.parametrize("n_steps", [0, 1, 3])
@pytest.mark.parametrize("unlabeled_weight", [1.0, 0.3])
@pytest.mark.parametrize(
    ("ours", "theirs", "attributes"),
    [
        (fastnb.MultinomialNB(), sk.MultinomialNB(), COUNTS),
        (fastnb.BernoulliNB(), sk.BernoulliNB(), COUNTS),
        (
            fastnb.CategoricalNB(min_categories=5),
            sk.CategoricalNB(min_categories=5),
            ["class_count_", "category_count_"],
        ),
    ],
    ids=["multinomial", "bernoulli", "categorical"],
)
def test_each_step_is_the_textbook_step(
    ours, theirs, attributes, n_steps, unlabeled_weight
):
    X, y = topic_counts()
    X = np.minimum(X, 4) if isinstance(ours, fastnb.CategoricalNB) else X
    y = hide_labels(y)
    model = SemiSupervisedNB(
        ours,
        unlabeled_weight=unlabeled_weight,
        max_iter=n_steps + 1,
        tol=0,
        min_proba=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    expected = em_by_repeated_rows(theirs, X, y, n_steps, unlabeled_weight)
    assert model.n_iter_ == n_steps + 1
    for name in attributes:
        np.testing.assert_allclose(
            np.asarray(getattr(model.estimator_, name)),
            np.asarray(getattr(expected, name)),
            rtol=1e-9,
        )
    np.testing.assert_allclose(
        model.predict_proba(X), expected.predict_proba(X), rtol=1e-7, atol=1e-12
    )
    np.testing.assert_array_equal(model.predict(X), expected.predict(X))


def test_the_log_likelihood_is_the_models_and_rises():
    # Topics alike: the posteriors stay soft for a few M-steps.
    X, y = topic_counts(n_samples=500, n_features=10, seed=2, shape=20.0)
    y = hide_labels(y, share=0.9)
    # Nearly unsmoothed, EM maximises the likelihood itself: it never falls.
    estimator = fastnb.MultinomialNB(alpha=1e-10, force_alpha=True)
    model = SemiSupervisedNB(estimator, tol=1e-9, min_proba=0).fit(X, y)
    path = model.log_likelihoods_
    assert len(path) == model.n_iter_ and model.n_iter_ >= 4
    assert np.all(np.diff(path) >= -1e-9 * np.abs(path[1:]))
    assert path[-1] > path[0]
    # The last one, by hand from the final model's joint log-likelihoods.
    jll = model.estimator_.predict_joint_log_proba(X)
    labeled = y != -1
    expected = jll[labeled, y[labeled].astype(int)].sum()
    expected += logsumexp(jll[~labeled], axis=1).sum()
    assert model.log_likelihood_ == pytest.approx(expected, rel=1e-12)
    assert model.log_likelihood_ == path[-1]


def test_stops_on_tol_or_warns_at_max_iter():
    X, y = topic_counts(seed=3)
    y = hide_labels(y)
    loose = SemiSupervisedNB(tol=10.0).fit(X, y)
    assert loose.converged_ and loose.n_iter_ == 2
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=2"):
        strict = SemiSupervisedNB(tol=0.0, max_iter=2).fit(X, y)
    assert not strict.converged_ and strict.n_iter_ == 2
    # The first M-step raised the log-likelihood by less than 10 a sample.
    path = SemiSupervisedNB(tol=10.0, min_proba=0).fit(X, y).log_likelihoods_
    assert 0 < path[1] - path[0] < 10.0 * len(y)


def test_without_unlabelled_samples_it_is_the_estimator():
    X, y = topic_counts(seed=4)
    model = SemiSupervisedNB(fastnb.ComplementNB()).fit(X, y)
    expected = fastnb.ComplementNB().fit(X, y)
    assert model.n_iter_ == 1 and model.converged_
    assert_same_state(model.predict_proba(X), expected.predict_proba(X))
    assert_same_state(model.predict(X), expected.predict(X))
    np.testing.assert_array_equal(model.transduction_, y)


def test_unlabelled_weight_zero_is_the_labelled_fit():
    X, y = topic_counts(seed=5)
    y = hide_labels(y)
    model = SemiSupervisedNB(unlabeled_weight=0.0).fit(X, y)
    labeled = y != -1
    expected = fastnb.MultinomialNB().fit(X[labeled], y[labeled].astype(int))
    np.testing.assert_allclose(model.estimator_.feature_count_, expected.feature_count_)
    assert model.n_iter_ == 2 and model.converged_


def test_several_components_a_class():
    # Class 0 is two clusters, class 1 one between them: a Gaussian a class
    # cannot tell them apart, two components a class can. (Both of class
    # 0's components start near its mean, which EM leaves slowly: tol is
    # small.)
    rng = np.random.default_rng(6)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 0.0]])
    which = rng.integers(0, 3, 1200)
    X = centres[which] + rng.normal(scale=0.7, size=(1200, 2))
    y_true = (which == 2).astype(int)
    y = hide_labels(y_true, share=0.9, seed=7)
    one = SemiSupervisedNB(fastnb.GaussianNB()).fit(X, y)
    params = {"n_components": 2, "random_state": 1, "tol": 1e-8, "max_iter": 2000}
    two = SemiSupervisedNB(fastnb.GaussianNB(), **params).fit(X, y)
    assert two.estimator_.classes_.tolist() == [0, 1, 2, 3]
    assert two.log_likelihood_ > one.log_likelihood_
    assert (two.predict(X) == y_true).mean() > 0.95 > (one.predict(X) == y_true).mean()
    proba = two.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(two.predict_log_proba(X)), proba, rtol=1e-9)
    np.testing.assert_array_equal(two.predict(X), two.classes_[proba.argmax(axis=1)])
    # The same spread of the labelled samples, the same model.
    again = SemiSupervisedNB(fastnb.GaussianNB(), **params)
    assert_same_state(again.fit(X, y).estimator_.theta_, two.estimator_.theta_)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_family_runs_em(case):
    X, y, _ = case.make(n_samples=90)
    y = hide_labels(np.asarray(y, dtype=object), share=0.6)
    model = SemiSupervisedNB(case.estimator(), max_iter=3, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    assert set(model.classes_) == set(y[y != -1])
    proba = model.predict_proba(X)
    assert proba.shape == (90, len(model.classes_))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(model.transduction_) <= set(model.classes_)
    assert_same_state(model.transduction_[y != -1], y[y != -1])
    labeled = np.flatnonzero(y != -1)
    assert 0 <= model.score(take_rows(X, labeled), y[labeled]) <= 1


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_sparse_text_and_sample_weight():
    X, y = topic_counts(seed=8)
    y = hide_labels(y)
    weights = np.random.default_rng(9).integers(1, 4, len(y)).astype(float)
    dense = SemiSupervisedNB(max_iter=4, tol=0).fit(X, y, sample_weight=weights)
    sparse = SemiSupervisedNB(max_iter=4, tol=0).fit(
        sp.csr_matrix(X), y, sample_weight=weights
    )
    np.testing.assert_allclose(
        sparse.estimator_.feature_count_, dense.estimator_.feature_count_, rtol=1e-12
    )
    # A weight of 2 counts as the row twice.
    twice = np.repeat(np.arange(len(y)), weights.astype(int))
    repeated = SemiSupervisedNB(max_iter=4, tol=0).fit(X[twice], y[twice])
    np.testing.assert_allclose(
        repeated.estimator_.feature_count_, dense.estimator_.feature_count_, rtol=1e-9
    )


def test_scikit_learn_conventions():
    X, y = topic_counts(seed=10)
    words = np.array(["sport", "science", "politics"], dtype=object)[y]
    y = hide_labels(words)
    model = SemiSupervisedNB(fastnb.MultinomialNB(alpha=0.5), unlabeled_weight=0.5)
    copy = clone(model)
    assert copy.get_params()["unlabeled_weight"] == 0.5
    fitted = make_pipeline(FunctionTransformer(), model).fit(X, y)
    assert set(fitted.predict(X)) <= {"sport", "science", "politics"}
    restored = pickle.loads(pickle.dumps(model))
    assert_same_state(restored.predict_proba(X), model.predict_proba(X))
    assert model.n_features_in_ == X.shape[1]


BAD_FITS = {
    "string labels": (
        {},
        lambda y: y.astype(str),
        ValueError,
        "y has dtype string. If you wish to predict on string targets, use dtype "
        "object, and use -1 as the label for unlabeled samples.",
    ),
    "no label": ({}, lambda y: np.full(len(y), -1), ValueError, "no labelled sample"),
    "y of another length": (
        {},
        lambda y: y[:-1],
        ValueError,
        "inconsistent numbers of samples",
    ),
    "lambda above 1": (
        {"unlabeled_weight": 1.5},
        lambda y: y,
        InvalidParameterError,
        "'unlabeled_weight' parameter of SemiSupervisedNB must be",
    ),
    "no components": (
        {"n_components": 0},
        lambda y: y,
        InvalidParameterError,
        "'n_components' parameter of SemiSupervisedNB must be",
    ),
    "not a fastnb estimator": (
        {"estimator": sk.MultinomialNB()},
        lambda y: y,
        InvalidParameterError,
        "'estimator' parameter of SemiSupervisedNB must be",
    ),
}


@pytest.mark.parametrize(
    ("params", "labels", "error", "message"), BAD_FITS.values(), ids=BAD_FITS.keys()
)
def test_bad_fits_are_refused(params, labels, error, message):
    X, y = topic_counts(seed=11)
    with pytest.raises(error, match=message):
        SemiSupervisedNB(**params).fit(X, labels(hide_labels(y)))


def test_docstring_examples_run():
    failed, attempted = doctest.testmod(_semi_supervised, optionflags=doctest.ELLIPSIS)
    assert attempted and not failed
