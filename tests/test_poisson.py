"""PoissonNB against scipy.stats.poisson and the rate formula computed here."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from scipy.stats import poisson

import fastnb

from _helpers import dense_c, dense_f, make_counts, tol

LABELS = np.array(["ant", "bee", "cat"])
N_FEATURES = 9
ALPHA_PER_FEATURE = np.linspace(0.1, 4.0, N_FEATURES)
TINY = np.finfo(np.float64).tiny


def make_poisson(n_samples=150, seed=0, labels=LABELS):
    """Integer Poisson counts with class-dependent rates, labels and weights."""
    rng = np.random.default_rng(seed)
    class_index = rng.permutation(np.arange(n_samples) % len(labels))
    rates = rng.gamma(2.0, 1.5, size=(len(labels), N_FEATURES)) + 0.2
    X = rng.poisson(rates[class_index]).astype(np.float64)
    sample_weight = rng.uniform(0.2, 3.0, size=n_samples)
    return X, labels[class_index], sample_weight


def hand_rates(X, y, sample_weight, alpha, classes):
    """(S_ci + alpha_i r_i) / (N_c + alpha_i), r_i the overall weighted mean."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    overall = (w @ X) / w.sum()
    sums = np.array([w[y == c] @ X[y == c] for c in classes])
    weights = np.array([w[y == c].sum() for c in classes])
    return (sums + alpha * overall) / (weights[:, None] + alpha), weights


def scipy_joint_log_proba(X, rates, log_prior):
    """log P(c) + sum_i poisson.logpmf(x_i, rate_ci), with scipy."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    return log_prior + np.stack(
        [poisson.logpmf(X, rate).sum(axis=1) for rate in rates], axis=1
    )


def csr(X):
    return sp.csr_matrix(X)


def csc(X):
    return sp.csc_matrix(X)


def csr_array_read_only(X):
    X = sp.csr_array(X)
    for array in (X.data, X.indices, X.indptr):
        array.setflags(write=False)
    return X


CONFIGS = {
    "default": {},
    "alpha 0.3": {"alpha": 0.3},
    "alpha 0": {"alpha": 0.0},
    "alpha per feature": {"alpha": ALPHA_PER_FEATURE},
    "no fit_prior": {"fit_prior": False},
    "class_prior": {"class_prior": np.array([0.5, 0.2, 0.3])},
}


def check_against_scipy(dtype, container, weighted, params, rtol):
    X_dense, y, sample_weight = make_poisson()
    sample_weight = sample_weight if weighted else None
    X = container(X_dense.astype(dtype))
    assert X.dtype == dtype

    model = fastnb.PoissonNB(**params).fit(X, y, sample_weight=sample_weight)
    alpha = params.get("alpha", 1.0)
    rates, class_weight = hand_rates(X_dense, y, sample_weight, alpha, LABELS)
    assert (rates > 0).all()
    assert_allclose(model.rate_, rates, rtol=rtol)
    assert_allclose(model.class_count_, class_weight, rtol=rtol)
    if "class_prior" in params:
        log_prior = np.log(params["class_prior"])
    elif params.get("fit_prior", True):
        log_prior = np.log(class_weight / class_weight.sum())
    else:
        log_prior = np.full(len(LABELS), -np.log(len(LABELS)))
    assert_allclose(model.class_log_prior_, log_prior, rtol=rtol)

    X_new, _, _ = make_poisson(n_samples=40, seed=1)
    for rows in (X_dense, X_new):
        rows_in = container(rows.astype(dtype))
        expected = scipy_joint_log_proba(rows, rates, log_prior)
        joint = model.predict_joint_log_proba(rows_in)
        assert joint.dtype == np.float64
        assert_allclose(joint, expected, rtol=rtol)
        # Posteriors are differences of joint log-likelihoods: their error
        # scales with those, not with themselves.
        atol = rtol * np.abs(expected).max()
        log_posterior = expected - logsumexp(expected, axis=1, keepdims=True)
        assert_allclose(
            model.predict_log_proba(rows_in), log_posterior, rtol=rtol, atol=atol
        )
        proba = model.predict_proba(rows_in)
        assert_allclose(proba, np.exp(log_posterior), rtol=rtol, atol=atol)
        assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        assert_array_equal(model.predict(rows_in), LABELS[expected.argmax(axis=1)])


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
# Read-only dense input is test_invariants' (the same model as writable input).
@pytest.mark.parametrize("container", [dense_c, dense_f, csr, csc, csr_array_read_only])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_containers_match_scipy_poisson(dtype, container, weighted):
    check_against_scipy(dtype, container, weighted, {"alpha": 0.3}, tol(dtype))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("container", [dense_c, csr])
def test_parameters_match_scipy_poisson(container, weighted, config):
    check_against_scipy(
        np.float64, container, weighted, CONFIGS[config], tol(np.float64)
    )


@pytest.mark.parametrize("container", [dense_c, csr])
def test_large_input_matches_scipy_poisson(container):
    # Large enough for the kernels to use several threads.
    X, y, w = make_poisson(n_samples=30_000, seed=4)
    model = fastnb.PoissonNB(alpha=0.3).fit(container(X), y, sample_weight=w)
    rates, class_weight = hand_rates(X, y, w, 0.3, LABELS)
    assert_allclose(model.rate_, rates, rtol=tol(np.float64))
    log_prior = np.log(class_weight / class_weight.sum())
    expected = scipy_joint_log_proba(X, rates, log_prior)
    joint = model.predict_joint_log_proba(container(X))
    assert_allclose(joint, expected, rtol=tol(np.float64))
    assert_array_equal(model.predict(container(X)), LABELS[expected.argmax(axis=1)])


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_alpha_zero_gives_class_means(weighted):
    X, y, w = make_poisson()
    w = w if weighted else np.ones(len(y))
    model = fastnb.PoissonNB(alpha=0.0).fit(X, y, sample_weight=w)
    means = [np.average(X[y == c], axis=0, weights=w[y == c]) for c in LABELS]
    assert_allclose(model.rate_, means, rtol=1e-12)


def test_fractional_counts_posterior():
    # log x! does not depend on the class: the posterior is the softmax of
    # sum_i (x_i log rate_ci - rate_ci) + log P(c), whatever x is.
    X, y, w = make_counts(LABELS)
    model = fastnb.PoissonNB(alpha=0.5).fit(X, y, sample_weight=w)
    rates, class_weight = hand_rates(X, y, w, 0.5, LABELS)
    scores = X @ np.log(rates).T - rates.sum(axis=1) + np.log(class_weight)
    scores -= np.log(class_weight.sum())
    expected = np.exp(scores - logsumexp(scores, axis=1, keepdims=True))
    assert_allclose(model.predict_proba(X), expected, rtol=tol(np.float64))


@pytest.mark.parametrize("alpha", [0.0, 1.0])
@pytest.mark.parametrize("container", [dense_c, csr])
def test_count_never_seen_in_class_is_finite(container, alpha):
    X, y, _ = make_poisson()
    X[y == "ant", 2] = 0  # feature 2 never occurs in class "ant"
    X[:, 5] = 0  # feature 5 never occurs at all
    model = fastnb.PoissonNB(alpha=alpha).fit(container(X), y)
    assert np.isfinite(np.log(model.rate_)).all()
    if alpha == 0:
        assert model.rate_[0, 2] == TINY
    assert (model.rate_[:, 5] == TINY).all()

    rows = X[:6].copy()
    rows[:, 2] = 3
    joint = model.predict_joint_log_proba(container(rows))
    assert np.isfinite(joint).all()
    if alpha == 0:
        assert (joint[:, 0] < -2000).all()  # 3 log(tiny) is about -2125
        assert (model.predict(container(rows)) != "ant").all()
    proba = model.predict_proba(container(rows))
    assert np.isfinite(proba).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)

    # A count of a feature no class has seen weighs the same in every class:
    # the posterior is the one without that feature.
    with_unseen = rows.copy()
    with_unseen[:, 5] = 2
    proba_unseen = model.predict_proba(container(with_unseen))
    assert np.isfinite(proba_unseen).all()
    rates, class_weight = hand_rates(X, y, None, alpha, LABELS)
    rates = np.maximum(rates, TINY)
    keep = np.arange(N_FEATURES) != 5
    log_prior = np.log(class_weight / class_weight.sum())
    expected = scipy_joint_log_proba(rows[:, keep], rates[:, keep], log_prior)
    expected = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    assert_allclose(proba_unseen, expected, rtol=1e-9, atol=1e-300)


# partial_fit in chunks is fit, weights are repeated rows, and NaN, infinity
# and negative counts are refused: test_invariants, on every estimator.


@pytest.mark.parametrize("container", [dense_c, csr])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_partial_fit_rates_are_the_formula_on_all_batches(weighted, container):
    X, y, w = make_poisson()
    w = w if weighted else None
    chunked = fastnb.PoissonNB(alpha=0.7)
    for a, b in [(0, 37), (37, 38), (38, 100), (100, 150)]:
        chunk_w = None if w is None else w[a:b]
        chunked.partial_fit(
            container(X[a:b]), y[a:b], classes=LABELS, sample_weight=chunk_w
        )
    rates = hand_rates(X, y, w, 0.7, LABELS)[0]
    assert_allclose(chunked.rate_, rates, rtol=tol(np.float64))


def test_integer_weights_give_the_rates_of_repeated_rows():
    X, y, _ = make_poisson()
    counts = np.random.default_rng(3).integers(0, 4, size=len(y))
    weighted = fastnb.PoissonNB().fit(X, y, sample_weight=counts)
    rates = hand_rates(
        np.repeat(X, counts, axis=0), np.repeat(y, counts), None, 1.0, LABELS
    )
    assert_allclose(weighted.rate_, rates[0], rtol=tol(np.float64))


@pytest.mark.parametrize("value", [-1.0, -0.5])
@pytest.mark.parametrize("container", [dense_c, csr])
def test_negative_counts_raise_in_predict(container, value):
    # A negative count has no Poisson probability: fit refuses it, and so
    # must predict (instead of scores of -inf, or finite nonsense for -0.5).
    X, y, _ = make_poisson()
    model = fastnb.PoissonNB().fit(X, y)
    X[3, 4] = value
    with pytest.raises(ValueError, match="[Nn]egative"):
        model.predict_proba(container(X))
