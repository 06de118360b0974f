"""fastnb.OneVsRestNB: a binary model a label of a multilabel indicator,
fitted in one pass over X.

- Its predictions and probabilities are OneVsRestClassifier's, over
  scikit-learn's estimators and over fastnb's own, to rounding; each
  label's model is the estimator fitted to that label (the positive class's
  statistics bit for bit, the negative one's, a difference, to rounding;
  GaussianNB's bit for bit).
- One pass: the counting kernel runs once, not once a label.
- scikit-learn's multilabel conventions: indicator in and out (sparse in,
  sparse out), constant labels, metrics, clone and pickle; bad targets.
"""

import doctest
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import naive_bayes as sk
from sklearn.base import clone
from sklearn.metrics import f1_score
from sklearn.multiclass import OneVsRestClassifier

import fastnb
from fastnb import OneVsRestNB, _multilabel

from _helpers import as_container, assert_same_state


def multilabel_counts(n_samples=400, n_features=30, n_labels=6, seed=0):
    """Word counts whose rates depend on the labels a sample has, and the
    labels (each sample has each with probability 0.3)."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n_samples, n_labels)) < 0.3).astype(int)
    effects = rng.gamma(1.0, 1.0, (n_labels, n_features))
    X = rng.poisson(0.3 + Y @ effects / 2)
    return X, Y


FAMILIES = [
    (fastnb.MultinomialNB(), sk.MultinomialNB()),
    (fastnb.ComplementNB(norm=True), sk.ComplementNB(norm=True)),
    (fastnb.BernoulliNB(binarize=1.0), sk.BernoulliNB(binarize=1.0)),
    (fastnb.GaussianNB(), sk.GaussianNB()),
    (fastnb.PoissonNB(), None),
]


@pytest.mark.parametrize(
    ("ours", "theirs"), FAMILIES, ids=lambda e: type(e).__name__ if e else ""
)
@pytest.mark.parametrize("container", ["dense_c", "csr", "csc"])
@pytest.mark.parametrize("sparse_y", [False, True], ids=["dense Y", "sparse Y"])
def test_equals_one_vs_rest(ours, theirs, container, sparse_y):
    X, Y = multilabel_counts()
    X_in = as_container(X.astype(float), container)
    Y_in = sp.csr_matrix(Y) if sparse_y else Y
    model = OneVsRestNB(ours).fit(X_in, Y_in)
    for estimator in (theirs, ours):
        refuses = container == "csc" or isinstance(estimator, sk.GaussianNB)
        if estimator is None or (
            estimator is theirs and container != "dense_c" and refuses
        ):
            continue
        expected = OneVsRestClassifier(estimator).fit(X_in, Y_in)
        np.testing.assert_allclose(
            model.predict_proba(X_in),
            expected.predict_proba(X_in),
            rtol=1e-9,
            atol=1e-12,
        )
        predicted = model.predict(X_in)
        assert sp.issparse(predicted) == sparse_y
        assert_same_state(
            sp.csr_matrix(predicted).toarray(),
            sp.csr_matrix(expected.predict(X_in)).toarray().astype(predicted.dtype),
        )
    np.testing.assert_array_equal(model.classes_, np.arange(Y.shape[1]))
    assert model.n_classes_ == Y.shape[1] and model.n_features_in_ == X.shape[1]


@pytest.mark.parametrize(
    "estimator", [e for e, _ in FAMILIES], ids=lambda e: type(e).__name__
)
def test_each_label_is_the_estimator_fitted_to_it(estimator):
    X, Y = multilabel_counts(seed=1)
    X = X.astype(float) + np.random.default_rng(2).random(X.shape)  # not integers
    weights = np.random.default_rng(3).uniform(0.5, 2.0, len(X))
    model = OneVsRestNB(estimator).fit(X, Y, sample_weight=weights)
    for label, binary in enumerate(model.estimators_):
        alone = clone(estimator).fit(X, Y[:, label], sample_weight=weights)
        state, expected = fastnb.get_state(binary), fastnb.get_state(alone)
        for key, value in expected.statistics.items():
            actual = state.statistics[key]
            if isinstance(estimator, fastnb.GaussianNB) or np.ndim(value) == 0:
                assert_same_state(actual, value)
                continue
            # The class with the label is summed as alone, bit for bit; the
            # class without it is the total less that: to rounding.
            assert_same_state(actual[1], value[1])
            np.testing.assert_allclose(actual[0], value[0], rtol=1e-12)
            assert (actual[0] >= 0).all()


def test_one_pass_over_x(monkeypatch):
    X, Y = multilabel_counts(n_labels=8)
    X = sp.csr_matrix(X.astype(float))
    calls = []
    for name in ("discrete_count_csr", "discrete_count_csr_blocks"):
        kernel = getattr(fastnb._discrete._kernels, name)
        monkeypatch.setattr(
            fastnb._discrete._kernels,
            name,
            lambda *args, kernel=kernel: calls.append(1) or kernel(*args),
        )
    OneVsRestNB().fit(X, Y)
    assert len(calls) == 1
    calls.clear()
    OneVsRestClassifier(fastnb.MultinomialNB()).fit(X, Y)
    assert len(calls) == 8


def test_constant_labels_as_one_vs_rest():
    X, Y = multilabel_counts(seed=4)
    Y[:, 2], Y[:, 4] = 0, 1
    with pytest.warns(UserWarning, match="present in all training") as record:
        model = OneVsRestNB().fit(X, Y)
    assert [str(w.message) for w in record] == [
        "Label not 2 is present in all training examples.",
        "Label 4 is present in all training examples.",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = OneVsRestClassifier(sk.MultinomialNB()).fit(X, Y)
    np.testing.assert_allclose(
        model.predict_proba(X), expected.predict_proba(X), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_array_equal(model.predict(X), expected.predict(X))
    assert (model.predict(X)[:, 4] == 1).all() and (model.predict(X)[:, 2] == 0).all()


def test_scikit_learn_multilabel_conventions():
    X, Y = multilabel_counts(seed=5)
    model = OneVsRestNB(fastnb.BernoulliNB())
    fitted = clone(model).fit(X, Y)
    score = f1_score(Y, fitted.predict(X), average="micro")
    assert 0.5 < score <= 1.0
    # Subset accuracy, as ClassifierMixin.score gives OneVsRestClassifier.
    expected = OneVsRestClassifier(sk.BernoulliNB()).fit(X, Y)
    assert fitted.score(X, Y) == pytest.approx(expected.score(X, Y))
    restored = pickle.loads(pickle.dumps(fitted))
    assert_same_state(restored.predict_proba(X), fitted.predict_proba(X))


BAD_TARGETS = {
    "one class": (
        lambda Y: np.zeros(len(Y), dtype=int),
        ValueError,
        "needs samples of at least 2 classes",
    ),
    "continuous": (lambda Y: Y[:, 0] + 0.5, ValueError, "Unknown label type"),
    "counts, not 0 and 1": (
        lambda Y: Y + Y[:, ::-1],
        ValueError,
        "type 'multiclass-multioutput'",
    ),
    "rows of another count": (lambda Y: Y[:-1], ValueError, "inconsistent numbers"),
    "no target": (lambda Y: None, ValueError, "requires y to be passed"),
}


@pytest.mark.parametrize(
    ("target", "error", "message"), BAD_TARGETS.values(), ids=BAD_TARGETS.keys()
)
def test_bad_targets_are_refused_and_the_model_kept(target, error, message):
    X, Y = multilabel_counts(seed=6)
    model = OneVsRestNB().fit(X, Y)
    before = model.estimators_
    with pytest.raises(error, match=message):
        model.fit(X, target(Y))
    assert model.estimators_ is before


def test_other_families_are_refused():
    X, Y = multilabel_counts(seed=7)
    with pytest.raises(TypeError, match="got CategoricalNB: use sklearn.multiclass"):
        OneVsRestNB(fastnb.CategoricalNB()).fit(X, Y)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize(
    ("ours", "theirs"), FAMILIES[:4], ids=lambda e: type(e).__name__
)
def test_one_label_a_sample_as_one_vs_rest(ours, theirs, n_classes):
    X, Y = multilabel_counts(n_labels=n_classes, seed=8)
    words = np.array(["ant", "bee", "cat", "dog", "eel"])[:n_classes]
    y = words[np.argmax(Y + np.random.default_rng(9).random(Y.shape), axis=1)]
    model = OneVsRestNB(ours).fit(X, y)
    expected = OneVsRestClassifier(theirs).fit(X, y)
    np.testing.assert_array_equal(model.classes_, expected.classes_)
    assert not model.multilabel_
    np.testing.assert_allclose(
        model.predict_proba(X), expected.predict_proba(X), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_array_equal(model.predict(X), expected.predict(X))
    assert len(model.estimators_) == len(expected.estimators_)


@pytest.mark.parametrize(
    ("ours", "theirs"), FAMILIES[:4], ids=lambda e: type(e).__name__
)
@pytest.mark.parametrize("target", ["indicator", "classes"])
def test_partial_fit_as_one_vs_rest_and_as_one_fit(ours, theirs, target):
    X, Y = multilabel_counts(seed=10)
    y = Y if target == "indicator" else np.argmax(Y + 0.1 * np.arange(6), axis=1)
    classes = np.arange(Y.shape[1]) if target == "indicator" else np.unique(y)
    parts = np.array_split(np.arange(len(y)), 3)
    weights = np.random.default_rng(11).integers(1, 4, len(y)).astype(float)
    model = OneVsRestNB(ours)
    for part in parts:
        model.partial_fit(
            X[part], y[part], classes=classes, sample_weight=weights[part]
        )
    # In parts, as one fit.
    whole = OneVsRestNB(ours).fit(X, y, sample_weight=weights)
    for part_model, fitted in zip(model.estimators_, whole.estimators_, strict=True):
        state, expected = fastnb.get_state(part_model), fastnb.get_state(fitted)
        for key, value in expected.statistics.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_allclose(state.statistics[key], value, rtol=1e-12)
            else:
                assert_same_state(state.statistics[key], value)
    # Unweighted, as OneVsRestClassifier's partial_fit (which takes no
    # weights, nor an indicator) and fit.
    unweighted = OneVsRestNB(ours)
    for part in parts:
        unweighted.partial_fit(X[part], y[part], classes=classes)
    expected = OneVsRestClassifier(theirs)
    if target == "indicator":
        expected.fit(X, y)
    else:
        for part in parts:
            expected.partial_fit(X[part], y[part], classes=classes)
    # (GaussianNB's moments merged batch by batch in another order: 1e-7.)
    np.testing.assert_allclose(
        unweighted.predict_proba(X), expected.predict_proba(X), rtol=1e-7, atol=1e-12
    )
    np.testing.assert_array_equal(unweighted.predict(X), expected.predict(X))


def test_partial_fit_refuses_what_the_first_call_did_not_set():
    X, Y = multilabel_counts(seed=12)
    model = OneVsRestNB().partial_fit(X[:100], Y[:100])
    before = [fastnb.get_state(e) for e in model.estimators_]
    with pytest.raises(ValueError, match="not the same as on last call"):
        model.partial_fit(X[100:], Y[100:], classes=[0, 1])
    with pytest.raises(ValueError, match="X has 29 features, but"):
        model.partial_fit(X[100:, 1:], Y[100:])
    with pytest.raises(ValueError, match="the same kind of target"):
        model.partial_fit(X[100:], Y[100:, 0], classes=np.arange(6))
    for estimator, state in zip(model.estimators_, before, strict=True):
        assert_same_state(fastnb.get_state(estimator), state)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        OneVsRestNB().partial_fit(X, np.argmax(Y, axis=1))


def test_predictions_score_all_labels_in_one_pass(monkeypatch):
    X, Y = multilabel_counts(n_labels=8, seed=13)
    model = OneVsRestNB().fit(X.astype(float), Y)
    calls = []
    kernel = fastnb._discrete._kernels.discrete_score_dense
    monkeypatch.setattr(
        fastnb._discrete._kernels,
        "discrete_score_dense",
        lambda *args, **kwargs: calls.append(1) or kernel(*args, **kwargs),
    )
    model.predict_proba(X.astype(float))
    assert len(calls) == 1
    calls.clear()
    OneVsRestClassifier(fastnb.MultinomialNB()).fit(X, Y).predict_proba(X)
    assert len(calls) == 8


@pytest.mark.parametrize(
    "estimator",
    [
        fastnb.GaussianNB(var_type="tied"),
        fastnb.GaussianNB(var_type="spherical", var_estimator="unbiased"),
        fastnb.MultinomialNB(class_prior=[0.3, 0.7]),
        fastnb.PoissonNB(fit_prior=False),
    ],
    ids=["tied", "spherical", "class_prior", "no fit_prior"],
)
def test_models_scored_alone_or_together_as_one_vs_rest(estimator):
    # Tied variances pool both classes and given priors are a label's own:
    # each label's model scores alone; the others score together.
    X, Y = multilabel_counts(seed=14)
    model = OneVsRestNB(estimator).fit(X, Y)
    expected = OneVsRestClassifier(clone(estimator)).fit(X, Y)
    np.testing.assert_allclose(
        model.predict_proba(X), expected.predict_proba(X), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_array_equal(model.predict(X), expected.predict(X))


def test_docstring_examples_run():
    failed, attempted = doctest.testmod(_multilabel, optionflags=doctest.ELLIPSIS)
    assert attempted and not failed
